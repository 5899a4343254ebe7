"""Seeds per second: K seeds trained as one batched model against K fits in turn.

For the small networks the claims train over seeds, :func:`skpaper.nn.train_seeds`
with ``strategy="vmap"`` (ours: stacked parameters, one ``vmap``-ed forward and
backward per step) is timed against the same call with ``strategy="loop"`` (the
peer: the same seeds, data orders, dropout masks and optimizer, one seed after
another), at K = 1, 4, 8 and 16 seeds. ``items`` is K, so the throughput columns
are seeds per second at the stated budget; ``speedup`` is loop / vmap. Both sides
report the mean final training loss over the seeds (they agree up to rounding).
One more case times K=8 ``LaurelMLPClassifier`` fits, what the LAuReL claims run
today, against the batched trainer on the same network. Torch runs on one thread.

Models (the sizes of the claims' ``quick`` scale; the step budget is cut to a
few epochs, the per-step cost is what is compared):

- LAuReL digits MLP: ``make_laurel_mlp(64, 10, 64, 8, "rw+lr", rank=8)``
  (146,778 parameters), 898 rows, batch 64, AdamW, decay on matrices only.
- LAuReL spirals MLP: ``make_laurel_mlp(2, 2, 32, 4, "rw+lr", rank=8)``,
  1,500 rows, batch 64.
- LAuReL digits CNN: ``make_laurel_convnet((1, 8, 8), 10, 16, 4, "rw+lr", rank=4)``,
  batch 64.
- SSA-TTA source MLP: ``make_norm_mlp(64, (128, 128), 10)`` (LayerNorm), batch 200,
  Adam with weight decay 1e-4.
- A two-layer GCN of graph-of-net's outer graph size (600 nodes, hidden 32,
  dense normalised adjacency), full batch, Adam; a stand-in for the outer GCN,
  not the graph-of-graphs models themselves.
- A two-layer deep linear network of deep-linear-transfer's size (d = 100,
  150 rows), full-batch gradient descent (the claim's own solver is numpy).

Not measured here yet: the wall time of ``skpaper reproduce all --scale quick``
with ``--jobs 1`` and ``--jobs 2`` on the same machine in one run (the second
half of the benchmark the reproduction issue asks for); it belongs in a second
section of this script once ``--jobs`` exists.

Run: ``python benchmarks/bench_reproduce.py [--quick] [--repeat N] [--json out.json]``.
"""

import numpy as np
import torch
from _harness import Case, main_cli
from torch import nn

from skpaper.adaptation import make_norm_mlp
from skpaper.datasets import load_digits_split
from skpaper.nn import LaurelMLPClassifier, make_laurel_convnet, make_laurel_mlp, train_seeds

SEED_COUNTS = (1, 4, 8, 16)


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


def _models(quick):
    digits = load_digits_split(test_size=0.5, random_state=0)
    Xs, ys = _spirals(1500)
    A, Xg, yg = _gcn_graph()
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
            X=digits.X_train, y=digits.y_train, loss=ce, epochs=2 if quick else 6,
            batch_size=200, optimizer="adam", weight_decay=1e-4, lr=1e-3),
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
        _, losses = train_seeds(model["factory"], model["X"], model["y"], model["loss"], seeds,
                                strategy=strategy, return_losses=True, **kwargs)
        return {"mean_final_loss": float(losses[:, -1].mean())}

    return run


def _estimator_fits(X, y, seeds, epochs):
    def run():
        losses = []
        for seed in seeds:
            est = LaurelMLPClassifier(n_blocks=8, width=64, rank=8, variant="rw+lr",
                                      max_epochs=epochs, batch_size=64, lr=3e-3,
                                      random_state=seed, device="cpu").fit(X, y)
            losses.append(est.history_[-1]["train_loss"])
        return {"mean_final_loss": float(np.mean(losses))}

    return run


def make_cases(quick):
    torch.set_num_threads(1)
    cases = []
    models = _models(quick)
    for name, model in models.items():
        steps = model["epochs"] * (1 if model["batch_size"] is None
                                   else -(-len(model["y"]) // model["batch_size"]))
        for k in SEED_COUNTS:
            seeds = list(range(k))
            cases.append(Case(f"{name} K={k}", ours=_trainer(model, seeds, "vmap"),
                              peer=_trainer(model, seeds, "loop"), peer_name="sequential",
                              items=k, params={"seeds": k, "steps_per_seed": steps}))
    digits = models["laurel digits MLP"]
    seeds = list(range(8))
    cases.append(Case("laurel digits MLP K=8 vs estimator", ours=_trainer(digits, seeds, "vmap"),
                      peer=_estimator_fits(digits["X"], digits["y"], seeds, digits["epochs"]),
                      peer_name="8 estimator fits", items=8, params={"seeds": 8}))
    return cases


def _seeds_per_second(results):
    lines = [f"{'case':44s} {'batched seeds/s':>16s} {'peer seeds/s':>13s} {'speedup':>8s}"]
    for r in results:
        lines.append(f"{r['case'][:44]:44s} {r['ours_items_per_s']:16.3g} "
                     f"{r['peer_items_per_s']:13.3g} {r['speedup_vs_peer']:7.2f}x")
    return "\n".join(lines)


if __name__ == "__main__":
    print("\n" + _seeds_per_second(main_cli(make_cases, description=__doc__.splitlines()[0])))
