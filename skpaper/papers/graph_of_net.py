"""Claims of "N2GON: Neural Networks for Graph-of-Net with Position Awareness" (ICML 2025).

The paper's datasets, equations 2-7 and numbers were not retrievable; the method
is reconstructed (see :class:`~skpaper.graph.GraphOfNetsClassifier`) and every
claim runs on :func:`~skpaper.datasets.make_synthetic_gon`.

**Split-signal setup.** The claims use a graph of nets in which each view carries
information the other cannot see: inner nodes carry a constant feature, so the
inner graphs' information is purely structural and invisible to a model of the
outer graph alone (the mean of constant features is constant), while each outer
node carries a noisy one-hot of its class that only neighbourhood smoothing over
the outer graph can denoise. An earlier setup gave inner nodes degree one-hots,
whose mean leaks each inner graph's degree histogram to the outer-only baseline;
it is no longer used. All arms train full-batch for the same epochs, width and
learning rate on the same split, on paired sequential seeds
(:func:`~skpaper.papers.run_comparison`).

**Budget.** Quick scale trains 300 epochs, the claims' full setting. It was
chosen on a calibration setting that shares no seed or size with the claims
(``_calibration_curves``: seed stream key 99, 400 outer nodes, 2 seeds, test
accuracy every 10 epochs): N2GON reaches 0.59/0.66 at 100 epochs, 0.78/0.79 at
250 and 0.79/0.81 at 300-400 (flat), the inner-only GIN is flat from 150 epochs
(0.71-0.74), and the outer-only GCN peaks near 100 epochs (0.62) and slowly
overfits (0.57-0.61 at 300). Every claim draws the test-accuracy curves of its
first seed.

**Seeds one at a time.** The arms are not trained with :func:`~skpaper.nn.train_seeds`:
both encoders pass messages with ``torch.sparse.mm``, which has no ``vmap`` batching rule
(``vmap`` loops over the seeds and warns), and N2GON's constraint net is rebuilt from a
kNN search and label pairs drawn by the estimator itself every 10 epochs.
"""

import numpy as np

from ..nn import Callback
from ._comparison import ArmRun, EffectOfInterest, decide_claim, run_comparison
from ._plotting import new_figure, save_figure
from ._registry import register_claim, register_paper, shared_cache

SLUG = "graph-of-net"

register_paper(SLUG, "N2GON: Neural Networks for Graph-of-Net with Position Awareness",
               module="skpaper.graph")

#: Quick budget, chosen on the calibration setting (see the module docstring).
#: Power of constraint-helps, measured on the same calibration setting (seed key 99, 400
#: nodes, 300 epochs, 6 seeds): label-free constraint - none +0.008, paired SD 0.058 with a
#: cosine learning-rate decay to zero (the training NLL of constant-rate full-batch Adam
#: swings by 0.1-0.2 over the last 50 epochs), so a single look at the 0.02 effect of
#: interest needs 55 seeds (seeds_needed); the committed quick run's paired SD is 0.17
#: (some runs of every arm stop near 0.5 accuracy), i.e. about 300 seeds. Neither fits the
#: quick budget: the claim's looks stay 4, 8, 16 and it is expected to stay undecided.
_QUICK_EPOCHS = 300
_SETTINGS = {"smoke": dict(n_nodes=60, epochs=10, hidden=8, looks=(2,)),
             "quick": dict(n_nodes=600, epochs=_QUICK_EPOCHS, hidden=32, looks=(4, 8, 16)),
             "full": dict(n_nodes=600, epochs=300, hidden=64, looks=(8, 16, 32))}
#: Probability that an outer node's own feature shows its true class (else a random one).
_FEATURE_SIGNAL = 0.35
#: Epochs between two points of the test-accuracy curve drawn for the first seed.
_CURVE_EVERY = 10
_RECONSTRUCTED = (" The paper's datasets, equations 2-7 and figures were not retrievable; "
                  "the method and the synthetic data are reconstructions.")
_EOI = EffectOfInterest(
    0.02, "ours",
    "two points of test accuracy: the smallest gain that would make a user prefer the more "
    "complex model (the paper's Table 1 values were not retrievable)")


def _split_signal_gon(seed, n_nodes, permute_inner=False):
    """The split-signal graph of nets, its labels, and (optionally) shuffled inner graphs."""
    from ..datasets import make_synthetic_gon
    from ..graph import GraphOfNets

    outer, inner, y = make_synthetic_gon(n_nodes=n_nodes, random_state=seed)
    rng = np.random.default_rng(seed)
    n_classes = int(y.max()) + 1
    shown = np.where(rng.random(n_nodes) < _FEATURE_SIGNAL, y, rng.integers(0, n_classes,
                                                                           n_nodes))
    node_features = np.eye(n_classes, dtype=np.float32)[shown]
    if permute_inner:
        inner = [inner[i] for i in rng.permutation(n_nodes)]
    inner = [(adj, np.ones((adj.shape[0], 1), dtype=np.float32)) for adj, _ in inner]
    return GraphOfNets(outer, inner, node_features=node_features), y


class _TestCurve(Callback):
    """Test accuracy every ``every`` epochs (one forward pass of the whole graph)."""

    def __init__(self, test_ids, test_y, every):
        self.test_ids, self.test_y, self.every = test_ids, test_y, every

    def on_train_begin(self, estimator):
        self.curve = []

    def on_epoch_end(self, estimator, record):
        epoch = len(estimator.history_) + 1
        if epoch % self.every == 0:
            logits = estimator._node_outputs()[0][self.test_ids]
            acc = float(np.mean(estimator.classes_[logits.argmax(1)] == self.test_y))
            self.curve.append((epoch, acc))


def _constraint_model(label_pairs=True, shuffle_positions=False):
    """N2GON's classifier, optionally without label pairs in the constraint net or with
    its positions permuted across nodes before the constraint loss (position information
    removed from the spring system, everything else kept)."""
    from ..graph import GraphOfNetsClassifier

    class _Variant(GraphOfNetsClassifier):
        def _label_pairs(self):
            if label_pairs:
                return super()._label_pairs()
            empty = np.empty((2, 0), dtype=np.int64)
            return empty, empty

        def _constraint_loss(self, positions, v, epoch):
            if shuffle_positions:
                perm = np.random.default_rng(self._init_seed).permutation(positions.shape[0])
                positions = positions[perm]
            return super()._constraint_loss(positions, v, epoch)

    return _Variant


#: arm -> (model, inner graphs shuffled, constructor overrides)
_ARMS = {
    "outer-only GCN": ("outer", False, {}),
    "inner-only GIN": ("inner", False, {}),
    "N2GON": ("dual", False, {}),
    "N2GON, inner graphs shuffled": ("dual", True, {}),
    "dual encoder": ("dual", False, {"constraint": "none"}),
    "N2GON, label-free constraint": ("label-free", False, {}),
    "N2GON, label-free constraint, positions shuffled": ("shuffled-positions", False, {}),
}


@shared_cache(maxsize=256)
def _fit(scale, seed, arm):
    """Test accuracy (half of the outer nodes, the same split for every arm), parameters,
    training nodes and the test-accuracy curve of one arm on one seed."""
    from ..graph import InnerGINClassifier, OuterGCNClassifier

    cfg = _SETTINGS[scale]
    model_name, permute, overrides = _ARMS[arm]
    gon, y = _split_signal_gon(seed, cfg["n_nodes"], permute_inner=permute)
    perm = np.random.default_rng(seed).permutation(gon.n_nodes)
    train, test = perm[: gon.n_nodes // 2], perm[gon.n_nodes // 2:]
    ids = np.arange(gon.n_nodes).reshape(-1, 1)
    common = dict(gon=gon, hidden_dim=cfg["hidden"], max_epochs=cfg["epochs"], device="cpu",
                  random_state=seed, callbacks=[_TestCurve(test, y[test], _CURVE_EVERY)],
                  **overrides)
    cls = {"outer": OuterGCNClassifier, "inner": InnerGINClassifier,
           "dual": _constraint_model(), "label-free": _constraint_model(label_pairs=False),
           "shuffled-positions": _constraint_model(label_pairs=False,
                                                   shuffle_positions=True)}[model_name]
    model = cls(**common).fit(ids[train], y[train])
    n_params = sum(p.numel() for p in model.module_.parameters())
    curve = next(cb.curve for cb in model.callbacks_ if isinstance(cb, _TestCurve))
    positions = model.positions() if model_name == "dual" and not permute else None
    return (float(model.score(ids[test], y[test])), n_params, len(train), tuple(curve),
            positions, y)


def _arm(scale, arm):
    cfg = _SETTINGS[scale]

    def run(seed):
        acc, n_params, n_train, _, _, _ = _fit(scale, seed, arm)
        return ArmRun(acc, parameters=n_params, train_steps=cfg["epochs"],
                      train_examples=n_train,
                      extra={"train_steps_unit": "full-batch epochs",
                             "hidden_dim": cfg["hidden"]})
    return run


def _best_single_view(scale):
    """Per seed, the better of the two single-view baselines (the harder comparator)."""
    outer, inner = _arm(scale, "outer-only GCN"), _arm(scale, "inner-only GIN")

    def run(seed):
        a, b = outer(seed), inner(seed)
        best = a if a.value >= b.value else b
        return ArmRun(best.value, parameters=None, train_steps=best.train_steps,
                      train_examples=best.train_examples,
                      extra={"note": "max of outer-only GCN and inner-only GIN per seed"})
    return run


def _calibration_curves(n_seeds=2, n_nodes=400, epochs=400, hidden=32):
    """Test-accuracy curves on the calibration setting (seed stream key 99, 400 nodes).

    Used once to choose the quick budget; it shares no seed or size with the claims.
    """
    from ._stats import claim_seeds

    key = ("calibration", n_nodes, epochs, hidden)
    _SETTINGS[key] = dict(n_nodes=n_nodes, epochs=epochs, hidden=hidden, looks=(2,))
    try:
        return {arm: [_fit(key, s, arm)[3] for s in claim_seeds(0, n_seeds, 99)]
                for arm in ("outer-only GCN", "inner-only GIN", "N2GON")}
    finally:
        del _SETTINGS[key]


def _plot(cmp, scale, arms, out_dir, name):
    """Per-seed accuracies of the arms, and the test-accuracy curves of the first seed."""
    fig, axes = new_figure(1, 3, figsize=(14, 3.8))
    values = {arm: [_fit(scale, s, arm)[0] for s in cmp.seeds] for arm in arms}
    axes[0].bar(range(len(arms)), [np.mean(values[a]) for a in arms], color="tab:blue")
    for i, arm in enumerate(arms):
        axes[0].plot([i] * len(values[arm]), values[arm], "o", color="k", ms=3)
    axes[0].set_xticks(range(len(arms)), [a.replace(", ", ",\n") for a in arms],
                       rotation=25, fontsize=6)
    axes[0].set_ylabel("test accuracy")
    axes[0].set_ylim(0, 1)
    first = cmp.seeds[0]
    for arm in arms:
        curve = np.asarray(_fit(scale, first, arm)[3])
        if len(curve):
            axes[1].plot(curve[:, 0], curve[:, 1], label=arm, lw=1)
    axes[1].set_xlabel("epoch (full batch)")
    axes[1].set_ylabel("test accuracy, first seed")
    axes[1].legend(fontsize=6)
    _, _, _, _, pos, y = _fit(scale, first, "N2GON")
    if pos.shape[1] > 2:
        centred = pos - pos.mean(axis=0)
        pos = centred @ np.linalg.svd(centred, full_matrices=False)[2][:2].T
    axes[2].scatter(pos[:, 0], pos[:, 1], c=y, cmap="tab10", s=6)
    axes[2].set_title("N2GON's learned positions (first 2 PCs), by class", fontsize=8)
    return save_figure(fig, out_dir, name)


def _aside(scale, cmp, method, baseline):
    """A paired bound of two arms on the comparison's seeds (reported beside the check)."""
    return decide_claim([_fit(scale, s, method)[0] for s in cmp.seeds],
                        [_fit(scale, s, baseline)[0] for s in cmp.seeds],
                        effect_of_interest=_EOI).decision.to_dict()


@register_claim(SLUG, "dual-beats-single-views",
                "On a graph of nets whose signal is split between the outer graph and the "
                "inner graphs, N2GON (dual encoder + constraint) beats both the outer-only GCN "
                "and the inner-only GIN.",
                paper_statement="N2GON, which encodes each node-graph (F1) and the graph of "
                                "nets (F2) jointly, outperforms established graph "
                                "representation learning methods on node classification over "
                                "graphs of nets (Table 1; values not retrieved)."
                                + _RECONSTRUCTED,
                check="sequential paired seeds (looks 4, 8, 16 at quick): the lower bound of "
                      "mean(N2GON - the better of the outer-only GCN and the inner-only GIN "
                      "on that seed) > 0, so both gains are bounded at once; contradicted "
                      "when the upper bound is below 0.02",
                control="N2GON with the inner graphs shuffled across outer nodes (inner "
                        "information removed), against the same better single view",
                effect_of_interest=_EOI)
def _claim_dual(scale, seed, out_dir):
    cfg = _SETTINGS[scale]
    arms = {"N2GON": _arm(scale, "N2GON"), "better single view": _best_single_view(scale),
            "N2GON, inner graphs shuffled": _arm(scale, "N2GON, inner graphs shuffled")}
    cmp = run_comparison(arms, method="N2GON", baseline="better single view",
                         control_method="N2GON, inner graphs shuffled", seed=seed,
                         looks=cfg["looks"], effect_of_interest=_EOI, metric="test accuracy")
    for arm in ("outer-only GCN", "inner-only GIN"):
        cmp.arms[arm] = dict(_arm(scale, arm)(cmp.seeds[0]).cost(), seeds=len(cmp.seeds))
    shown = ("outer-only GCN", "inner-only GIN", "N2GON", "N2GON, inner graphs shuffled")
    artifact = _plot(cmp, scale, shown, out_dir, "dual_vs_single_views")
    return cmp.claim_result(
        observed={"gain_vs_outer": _aside(scale, cmp, "N2GON", "outer-only GCN"),
                  "gain_vs_inner": _aside(scale, cmp, "N2GON", "inner-only GIN"),
                  "test_curve_first_seed": {a: list(_fit(scale, cmp.seeds[0], a)[3])
                                            for a in shown},
                  "epochs": cfg["epochs"]},
        artifacts=[artifact],
        notes="The comparator is, seed by seed, the better of the two single-view "
              "baselines, so a pass bounds both gains. The baselines have fewer parameters "
              "by construction (one view each); their width, epochs and data are the same. "
              "The earlier 10-point margin came from a planning prototype and is gone.")


@register_claim(SLUG, "constraint-helps",
                "The position-aware constraint system (a spring system over the constraint "
                "net) improves the dual encoder's accuracy, beyond the label supervision the "
                "constraint net also carries.",
                paper_statement="The ablation study shows that the position-aware constraint "
                                "system contributes to N2GON's accuracy (values not "
                                "retrieved)." + _RECONSTRUCTED,
                check="sequential paired seeds (same initialisation): the lower bound of "
                      "mean(accuracy of the dual encoder with the constraint loss over a "
                      "label-free constraint net (outer edges and kNN pairs only) - the same "
                      "encoder without the loss) > 0; contradicted when the upper bound is "
                      "below 0.02. The full constraint (same-label training pairs added) is "
                      "reported beside",
                control="the same label-free constraint with the positions permuted across "
                        "nodes before the spring loss (position information removed)",
                effect_of_interest=_EOI)
def _claim_constraint(scale, seed, out_dir):
    cfg = _SETTINGS[scale]
    names = ("N2GON, label-free constraint", "dual encoder",
             "N2GON, label-free constraint, positions shuffled")
    cmp = run_comparison({a: _arm(scale, a) for a in names}, method=names[0],
                         baseline="dual encoder", control_method=names[2], seed=seed,
                         looks=cfg["looks"], effect_of_interest=_EOI, metric="test accuracy")
    cmp.arms["N2GON"] = dict(_arm(scale, "N2GON")(cmp.seeds[0]).cost(), seeds=len(cmp.seeds))
    shown = ("dual encoder", "N2GON, label-free constraint", "N2GON",
             "N2GON, label-free constraint, positions shuffled")
    artifact = _plot(cmp, scale, shown, out_dir, "constraint_ablation")
    return cmp.claim_result(
        observed={"full_constraint_minus_none": _aside(scale, cmp, "N2GON", "dual encoder"),
                  "label_pairs_added_minus_label_free": _aside(
                      scale, cmp, "N2GON", "N2GON, label-free constraint"),
                  "test_curve_first_seed": {a: list(_fit(scale, cmp.seeds[0], a)[3])
                                            for a in shown},
                  "epochs": cfg["epochs"]},
        artifacts=[artifact],
        notes="The reconstructed constraint net of N2GON also holds same-label pairs of "
              "training nodes, i.e. extra supervision; the check therefore drops them, so "
              "that what it measures is the spring system over the graph's own structure "
              "(outer edges, kNN pairs of the embeddings). The full constraint, label pairs "
              "included, is reported as full_constraint_minus_none.")
