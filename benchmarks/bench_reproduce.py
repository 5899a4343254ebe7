"""Seeds per second: K seeds trained as one batched model against K fits in turn.

For the small networks the claims train over seeds, :func:`skpaper.nn.train_seeds`
with each batched strategy (ours) is timed against the same call with
``strategy="loop"`` (the peer: the same seeds, data orders, dropout masks and
optimizer, one seed after another), at K = 1, 4, 8 and 16 seeds:

- ``grouped``: the seeds' weights stacked on a leading axis and their rows folded
  into the batch axis; Linear, LayerNorm, GroupNorm, Conv and LAuReL's residual as
  batched products (``torch.bmm``), one fused optimizer over the stacked tensors;
- ``vmap``: stacked parameters under :func:`torch.func.vmap`.

``items`` is K, so the throughput columns are seeds per second at the stated
budget; ``speedup`` is loop / batched wall time. Each side also reports the process
CPU seconds of its last call (``cpu_s``), whose ratio is steadier than the wall-time
ratio on a loaded machine, and the mean final training loss over the seeds (the
strategies agree up to rounding). One more case times K=8 ``LaurelMLPClassifier``
fits, what the LAuReL claims ran before they trained batched, against the batched
trainer on the same network; and, without ``--quick``, one times K=8 grouped against
sequential at the budget laurel ``digits-gain`` trains on (30 epochs at lr 1e-3, 450
steps per seed), where the batched side's one-time costs are spread as in the claim.
Torch runs on one thread; the load average is written beside the results.

Models (the sizes of the claims' ``quick`` scale; the step budget is cut to a
few epochs, the per-step cost is what is compared):

- LAuReL digits MLP: ``make_laurel_mlp(64, 10, 64, 8, "rw+lr", rank=8)``
  (146,778 parameters), 898 rows, batch 64, AdamW, decay on matrices only.
- LAuReL spirals MLP: ``make_laurel_mlp(2, 2, 32, 4, "rw+lr", rank=8)``,
  750 rows, batch 64.
- LAuReL digits CNN: ``make_laurel_convnet((1, 8, 8), 10, 16, 4, "rw+lr", rank=4)``,
  batch 64.
- SSA-TTA source MLP: ``make_norm_mlp(64, (128, 128), 10)`` (LayerNorm), batch 64,
  Adam with weight decay 1e-4.
- Shape-orientation flipper backbone: ``PointNetLite(3, 24)`` on 128-point clouds,
  batch 16, Adam.
- A two-layer GCN of graph-of-net's outer graph size (600 nodes, hidden 32,
  dense normalised adjacency), full batch, Adam; a stand-in for the outer GCN,
  not the graph-of-graphs models themselves (``grouped`` cannot fold a shared
  adjacency product and falls back; ``vmap`` batches it).
- A two-layer deep linear network of deep-linear-transfer's size (d = 100,
  150 rows), full-batch gradient descent (the claim's own solver is numpy).

``--reproduce-papers a,b`` (off by default) also times ``skpaper reproduce a b
--scale quick --jobs 1`` against ``--jobs 2`` in the same run, one after the other,
and writes both wall times, exit codes and the load average (``uptime``) before and
after each into the JSON under ``"reproduce"``; ``--reproduce-papers all`` times the
whole suite. ``--reproduce-jobs 2,1`` sets which worker counts run and in which order
(default ``1,2``), and ``--reproduce-keep DIR`` keeps each run's output folder as
``DIR/jobs<N>`` (the report and figures, to compare the runs or to publish one);
without it the folders are temporary.

Run: ``python benchmarks/bench_reproduce.py [--quick] [--repeat N] [--json out.json]
[--strategies grouped,vmap] [--seed-counts 1,4,8,16] [--models laurel,ssa]
[--reproduce-papers all] [--reproduce-scale quick] [--reproduce-jobs 2,1]
[--reproduce-keep DIR]``.
"""

import argparse
import contextlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

import numpy as np
import torch
from _harness import Case, main_cli
from torch import nn

from skpaper.adaptation import make_norm_mlp
from skpaper.datasets import load_digits_split
from skpaper.nn import LaurelMLPClassifier, make_laurel_convnet, make_laurel_mlp, train_seeds
from skpaper.shape._backbones import PointNetLite

SEED_COUNTS = (1, 4, 8, 16)
STRATEGIES = ("grouped", "vmap")
#: Short names of the models for ``--models``.
MODEL_KEYS = {"laurel": "laurel digits MLP", "spirals": "laurel spirals MLP",
              "cnn": "laurel digits CNN", "ssa": "ssa-tta source MLP",
              "pointnet": "PointNet-lite flipper", "gcn": "GCN 600 nodes h=32",
              "deeplinear": "deep linear d=100"}


def _matrices_only(decay):
    return lambda name, p: decay if p.ndim >= 2 else 0.0


def _spirals(n, seed=0):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, n)
    radius = np.sqrt(rng.uniform(0.02, 1.0, n))
    angle = 5.0 * np.pi * radius + np.pi * y
    X = 2.0 * np.c_[radius * np.cos(angle), radius * np.sin(angle)]
    return (X + 0.04 * rng.normal(size=X.shape)).astype(np.float32), y


class _DenseGCN(nn.Module):
    """Two graph convolutions ``A relu(A X W1) W2`` on a dense normalised adjacency."""

    def __init__(self, n_features, hidden, n_classes):
        super().__init__()
        self.first, self.second = nn.Linear(n_features, hidden), nn.Linear(hidden, n_classes)

    def forward(self, adjacency, features):
        return adjacency @ self.second(torch.relu(adjacency @ self.first(features)))


def _gcn_graph(n_nodes=600, n_features=16, degree=6, seed=0):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 4, n_nodes)
    A = np.zeros((n_nodes, n_nodes), dtype=np.float32)
    for i in range(n_nodes):
        same = rng.choice(np.flatnonzero(y == y[i]), degree)
        A[i, same] = A[same, i] = 1.0
    A += np.eye(n_nodes, dtype=np.float32)
    d = 1.0 / np.sqrt(A.sum(axis=1))
    X = rng.normal(size=(n_nodes, n_features)).astype(np.float32) + y[:, None] * 0.3
    return (d[:, None] * A * d[None, :]).astype(np.float32), X, y


def _masked_ce(n_train):
    return lambda logits, y: nn.functional.cross_entropy(logits[:n_train], y[:n_train])


def _clouds(n, n_points=128, n_classes=24, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, n_points, 3)).astype(np.float32)
    y = rng.integers(0, n_classes, n)
    X[:, :, 0] *= 1.0 + 0.05 * y[:, None]
    return X, y


def _models(quick):
    digits = load_digits_split(test_size=0.5, random_state=0)
    Xs, ys = _spirals(1500)
    A, Xg, yg = _gcn_graph()
    Xc, yc = _clouds(240)
    rng = np.random.default_rng(1)
    Xd = rng.normal(size=(150, 100)).astype(np.float32)
    yd = (Xd @ rng.normal(size=100) / 10 + 0.2 * rng.normal(size=150)).astype(np.float32)
    ce, mse = nn.functional.cross_entropy, nn.functional.mse_loss
    adamw = dict(optimizer="adamw", weight_decay=_matrices_only(1e-4), lr=3e-3)
    return {
        "laurel digits MLP": dict(
            factory=lambda: make_laurel_mlp(64, 10, 64, 8, "rw+lr", rank=8),
            X=digits.X_train, y=digits.y_train, loss=ce, epochs=1 if quick else 2,
            batch_size=64, **adamw),
        "laurel spirals MLP": dict(
            factory=lambda: make_laurel_mlp(2, 2, 32, 4, "rw+lr", rank=8),
            X=Xs[:750], y=ys[:750], loss=ce, epochs=1 if quick else 3, batch_size=64,
            **adamw),
        "laurel digits CNN": dict(
            factory=lambda: make_laurel_convnet((1, 8, 8), 10, 16, 4, "rw+lr", rank=4),
            X=digits.X_train, y=digits.y_train, loss=ce, epochs=1, batch_size=64, **adamw),
        "ssa-tta source MLP": dict(
            factory=lambda: make_norm_mlp(64, (128, 128), 10),
            X=digits.X_train, y=digits.y_train, loss=ce, epochs=1 if quick else 3,
            batch_size=64, optimizer="adam", weight_decay=1e-4, lr=3e-3),
        "PointNet-lite flipper": dict(
            factory=lambda: PointNetLite(3, 24), X=Xc, y=yc, loss=ce,
            epochs=1 if quick else 2, batch_size=16, optimizer="adam", weight_decay=0.0,
            lr=1e-3),
        "GCN 600 nodes h=32": dict(
            factory=lambda: _DenseGCN(Xg.shape[1], 32, 4), X=(A, Xg), y=yg,
            loss=_masked_ce(300), epochs=20 if quick else 50, batch_size=None,
            optimizer="adam", weight_decay=5e-4, lr=1e-2),
        "deep linear d=100": dict(
            factory=lambda: nn.Sequential(nn.Linear(100, 100, bias=False),
                                          nn.Linear(100, 1, bias=False)),
            X=Xd, y=yd[:, None], loss=mse, epochs=50 if quick else 200, batch_size=None,
            optimizer="sgd", weight_decay=0.0, lr=0.05),
    }


def _trainer(model, seeds, strategy):
    kwargs = {k: v for k, v in model.items() if k not in ("factory", "X", "y", "loss")}

    def run():
        start = time.process_time()
        _, losses = train_seeds(model["factory"], model["X"], model["y"], model["loss"], seeds,
                                strategy=strategy, return_losses=True, **kwargs)
        return {"mean_final_loss": float(losses[:, -1].mean()),
                "cpu_s": time.process_time() - start}

    return run


def _estimator_fits(X, y, seeds, epochs):
    def run():
        start = time.process_time()
        losses = []
        for seed in seeds:
            est = LaurelMLPClassifier(n_blocks=8, width=64, rank=8, variant="rw+lr",
                                      max_epochs=epochs, batch_size=64, lr=3e-3,
                                      random_state=seed, device="cpu").fit(X, y)
            losses.append(est.history_[-1]["train_loss"])
        return {"mean_final_loss": float(np.mean(losses)), "cpu_s": time.process_time() - start}

    return run


#: (model, strategy) pairs the trainer refused, with its reason.
SKIPPED = []


def _refusal(model, strategy):
    """Why ``train_seeds`` refuses ``strategy`` for ``model`` (a 2-seed, 1-epoch try), or None."""
    kwargs = {k: v for k, v in model.items() if k not in ("factory", "X", "y", "loss")}
    kwargs["epochs"] = 1
    try:
        train_seeds(model["factory"], model["X"], model["y"], model["loss"], [0, 1],
                    strategy=strategy, **kwargs)
    except ValueError as exc:
        return str(exc)
    return None


def make_cases(quick, strategies=STRATEGIES, seed_counts=SEED_COUNTS, models=None):
    torch.set_num_threads(1)
    cases = []
    built = _models(quick)
    chosen = [MODEL_KEYS[m] for m in models] if models else list(built)
    for name in chosen:
        model = built[name]
        steps = model["epochs"] * (1 if model["batch_size"] is None
                                   else -(-len(model["y"]) // model["batch_size"]))
        usable = []
        for strategy in strategies:
            reason = _refusal(model, strategy)
            if reason:
                print(f"{name}: strategy {strategy!r} skipped: {reason}", flush=True)
                SKIPPED.append({"model": name, "strategy": strategy, "reason": reason})
            else:
                usable.append(strategy)
        for k in seed_counts:
            seeds = list(range(k))
            for strategy in usable:
                cases.append(Case(f"{name} K={k} {strategy}",
                                  ours=_trainer(model, seeds, strategy),
                                  peer=_trainer(model, seeds, "loop"), peer_name="sequential",
                                  items=k, params={"seeds": k, "steps_per_seed": steps,
                                                   "strategy": strategy, "model": name}))
    if "laurel digits MLP" in chosen and 8 in seed_counts:
        digits = built["laurel digits MLP"]
        seeds = list(range(8))
        cases.append(Case("laurel digits MLP K=8 auto vs estimator",
                          ours=_trainer(digits, seeds, "auto"),
                          peer=_estimator_fits(digits["X"], digits["y"], seeds,
                                               digits["epochs"]),
                          peer_name="8 estimator fits", items=8,
                          params={"seeds": 8, "strategy": "auto"}))
        if not quick:
            # The budget laurel digits-gain trains its arms on (30 epochs at lr 1e-3, the
            # same network and rows): the one-time costs of the batched side (stacking,
            # the first step's check) are spread over the claim's 450 steps, not 30.
            claim = dict(digits, epochs=30, lr=1e-3)
            steps = 30 * -(-len(digits["y"]) // digits["batch_size"])
            cases.append(Case("laurel digits MLP K=8 grouped, claim budget",
                              ours=_trainer(claim, seeds, "grouped"),
                              peer=_trainer(claim, seeds, "loop"), peer_name="sequential",
                              items=8, params={"seeds": 8, "steps_per_seed": steps,
                                               "strategy": "grouped",
                                               "model": "laurel digits MLP"}))
    return cases


def _cpu_ratio(row):
    ours, peer = row.get("ours_figures") or {}, row.get("peer_figures") or {}
    if ours.get("cpu_s") and peer.get("cpu_s"):
        return peer["cpu_s"] / ours["cpu_s"]
    return float("nan")


def _seeds_per_second(results):
    lines = [f"{'case':48s} {'batched seeds/s':>16s} {'peer seeds/s':>13s} {'speedup':>8s} "
             f"{'cpu ratio':>9s}"]
    for r in results:
        lines.append(f"{r['case'][:48]:48s} {r['ours_items_per_s']:16.3g} "
                     f"{r['peer_items_per_s']:13.3g} {r['speedup_vs_peer']:7.2f}x "
                     f"{_cpu_ratio(r):8.2f}x")
    return "\n".join(lines)


def _uptime():
    """``uptime``'s line (the load averages), or the load averages alone without it."""
    if shutil.which("uptime"):
        done = subprocess.run(["uptime"], capture_output=True, text=True, check=False)
        if done.returncode == 0:
            return done.stdout.strip()
    return "load average: " + ", ".join(f"{v:.2f}" for v in os.getloadavg())


def time_reproduce(papers, scale="quick", jobs=(1, 2), keep=None):
    """Wall time of ``skpaper reproduce <papers> --scale <scale> --jobs N`` for each N.

    The runs go one after the other, in the order of ``jobs``, into temporary output
    folders (or ``keep/jobs<N>`` when ``keep`` is a folder), each with
    ``OMP_NUM_THREADS=1`` as the runner's workers use; the load average is read
    before and after each.
    """
    env = dict(os.environ, OMP_NUM_THREADS="1")
    runs = []
    for n in jobs:
        with _output_folder(keep, n) as out:
            cmd = [sys.executable, "-m", "skpaper", "reproduce", *papers, "--scale", scale,
                   "--jobs", str(n), "--out", out]
            before, start = _uptime(), time.perf_counter()
            done = subprocess.run(cmd, env=env, capture_output=True, text=True, check=False)
            wall = time.perf_counter() - start
            runs.append({"jobs": n, "wall_s": wall, "returncode": done.returncode,
                         "uptime_before": before, "uptime_after": _uptime(),
                         "command": " ".join(cmd[1:-2]),
                         "stderr_tail": done.stderr[-2000:]})
        print(f"reproduce {' '.join(papers)} --scale {scale} --jobs {n}: {wall:.1f} s "
              f"(exit {done.returncode}; before: {before}; after: {runs[-1]['uptime_after']})",
              flush=True)
    wall = {run["jobs"]: run["wall_s"] for run in runs}
    return {"papers": list(papers), "scale": scale, "runs": runs,
            "jobs1_over_jobs2": wall[1] / wall[2] if {1, 2} <= set(wall) else None}


@contextlib.contextmanager
def _output_folder(keep, jobs):
    """A temporary folder, or ``keep/jobs<N>`` (created, and left in place) when kept."""
    if keep is None:
        with tempfile.TemporaryDirectory() as out:
            yield out
        return
    out = os.path.join(keep, f"jobs{jobs}")
    if os.path.exists(out):
        raise FileExistsError(f"--reproduce-keep: {out} exists; choose an empty folder.")
    os.makedirs(out)
    yield out


def _csv(text):
    return [item for item in text.split(",") if item]


def main(argv=None):
    parser = argparse.ArgumentParser(add_help=False)
    parser.add_argument("--strategies", type=_csv, default=list(STRATEGIES))
    parser.add_argument("--seed-counts", type=lambda t: [int(v) for v in _csv(t)],
                        default=list(SEED_COUNTS))
    parser.add_argument("--models", type=_csv, default=None,
                        help=f"a subset of {sorted(MODEL_KEYS)}")
    parser.add_argument("--reproduce-papers", type=_csv, default=None,
                        help="also time skpaper reproduce of these papers (or all) with "
                             "--jobs 1 and --jobs 2")
    parser.add_argument("--reproduce-scale", default="quick")
    parser.add_argument("--reproduce-jobs", type=lambda t: [int(v) for v in _csv(t)],
                        default=[1, 2])
    parser.add_argument("--reproduce-keep", default=None)
    parser.add_argument("--json", default=None)
    own, rest = parser.parse_known_args(argv)
    bad = set(own.strategies) - {"grouped", "vmap", "auto"}
    if bad or (own.models and set(own.models) - set(MODEL_KEYS)):
        parser.error(f"unknown strategies or models: {sorted(bad)} {own.models}")
    if not own.reproduce_jobs or min(own.reproduce_jobs) < 1:
        parser.error(f"--reproduce-jobs must list positive worker counts, got "
                     f"{own.reproduce_jobs}")
    load_before = _uptime()
    results = main_cli(lambda quick: make_cases(quick, own.strategies, own.seed_counts,
                                                own.models),
                       description=__doc__.splitlines()[0],
                       argv=rest + (["--json", own.json] if own.json else []))
    print("\n" + _seeds_per_second(results))
    extra = {"uptime_before": load_before, "uptime_after": _uptime()}
    print(f"load: before {extra['uptime_before']}; after {extra['uptime_after']}")
    if own.reproduce_papers:
        extra["reproduce"] = time_reproduce(own.reproduce_papers, own.reproduce_scale,
                                            own.reproduce_jobs, own.reproduce_keep)
    if own.json:
        with open(own.json) as fh:
            report = json.load(fh)
        for row in report["results"]:
            row["cpu_ratio_vs_peer"] = _cpu_ratio(row)
        report["meta"].update(extra, skipped=SKIPPED)
        with open(own.json, "w") as fh:
            json.dump(report, fh, indent=2, default=str)
    return results


if __name__ == "__main__":
    main()
