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
overfits (0.57-0.61 at 300). The constraint ablation trains its arms longer at a smaller
rate (600 epochs at 0.003), chosen on calibration worlds for the spread of equivalent
fits (see ``_CONSTRAINT_POWER``); its first design ended undecided, and the one that
runs is sized from it to end decided (``_CONSTRAINT_DESIGN``). Every claim draws the
test-accuracy curves of its first seed.

**Seeds one at a time.** The arms are not trained with :func:`~skpaper.nn.train_seeds`:
both encoders pass messages as sparse CSR products (:class:`~skpaper.graph.MessageOperator`),
which have no ``vmap`` batching rule (``vmap`` would loop over the seeds), and N2GON's
constraint net is rebuilt from a kNN search and label pairs drawn by the estimator itself
every 10 epochs.
"""

import numpy as np

from ..nn import Callback, LRScheduler
from ._comparison import ArmRun, EffectOfInterest, decide_claim, run_comparison
from ._plotting import new_figure, save_figure
from ._registry import register_claim, register_paper, shared_cache

SLUG = "graph-of-net"

register_paper(SLUG, "N2GON: Neural Networks for Graph-of-Net with Position Awareness",
               module="skpaper.graph", quick_cost_s=1100)

#: Training of constraint-helps, chosen on calibration worlds no claim draws (seed stream
#: key 99, the claim's 600 outer nodes and width 32; _constraint_calibration). At the dual
#: claim's budget (300 epochs, learning rate 0.01, cosine decay) single fits of one world
#: landed anywhere from 0.52 to 0.85 test accuracy, so the paired SDs were 0.070 (true -
#: permuted) and 0.067 (placebo) on 10 calibration seeds: two equivalent arms differed as
#: much as the effect tested, and 80 seeds left the claim undecided. At learning rate 0.003
#: for 600 epochs every arm plateaus (0.89-0.92 from about epoch 400 in a 900-epoch
#: calibration curve) and on 16 calibration seeds (claim_seeds(1, 10, 99) and
#: claim_seeds(2, 6, 99)) true - permuted is +0.0004, SD 0.022, and the placebo +0.0077,
#: SD 0.017 (arm means 0.857 / 0.857 / 0.864). At 300 epochs the smaller rate under-trains
#: (0.73 at 400 nodes).
_CONSTRAINT_POWER = dict(check_sd=0.022, check_sd_upper=0.029, control_sd=0.017,
                         control_sd_upper=0.023, check_seeds=19, control_seeds=13)
_CONSTRAINT_TRAINING = dict(constraint_epochs=600, constraint_lr=3e-3)
#: The first design of constraint-helps, planned from those calibration SDs (90% upper
#: limits 0.029 and 0.023: seeds_needed 19 and 13 at the last look's level 0.025), ran
#: looks 8, 16, 32 on the worlds claim_seeds(seed, 32) and ended undecided at seed 0:
#: +0.0097 [-0.0029, +0.0223], n=32, placebo failing (+0.0065, upper 0.0088). It was sized
#: for power, not for a verdict (seeds_to_decide at the calibration limit asks for 35 at
#: level 0.025), and its paired SD was 0.035 against the calibration's 0.022.
_CONSTRAINT_FIRST_DESIGN = dict(looks=(8, 16, 32), key=(), mean=0.0097, lower=-0.0029,
                                upper=0.0223, n=32, sd=0.0349, control_sd=0.0241,
                                control_upper=0.0088)
#: The design that runs: one look on fresh worlds (seed stream key 2, which no other design
#: or calibration draws), sized from the first design's SDs, whose worlds it shares none of.
#: seeds_to_decide(sd_upper_limit(0.0349, 32) = 0.0419, 0.02, alpha=0.05) is 50: with 50
#: seeds the interval is narrower than the 0.02 between the margin and the effect of
#: interest, so the look ends reproduced or contradicted wherever the mean lies, unless the
#: SD exceeds that limit. The placebo only guards a pass and needs to fail: seeds_needed at
#: its limit (sd_upper_limit(0.0241, 32) = 0.0289) is 15, so it runs on the first 15 seeds.
#: Over both designs each false verdict has probability at most 0.05 + 0.05.
_CONSTRAINT_DESIGN = dict(constraint_looks=(50,), constraint_key=(2,),
                          constraint_control_seeds=15, constraint_beside_seeds=8)
#: Quick budget of the dual claim, chosen on the calibration setting (module docstring).
_QUICK_EPOCHS = 300
#: Full scale widens the networks to 64 and keeps the quick design of constraint-helps
#: (not calibrated at that width).
_SETTINGS = {"smoke": dict(n_nodes=60, epochs=10, hidden=8, looks=(2,), constraint_looks=(3,),
                           constraint_key=(2,), constraint_control_seeds=2,
                           constraint_beside_seeds=2),
             "quick": dict(n_nodes=600, epochs=_QUICK_EPOCHS, hidden=32, looks=(4, 8, 16),
                           **_CONSTRAINT_DESIGN, **_CONSTRAINT_TRAINING),
             "full": dict(n_nodes=600, epochs=300, hidden=64, looks=(8, 16, 32),
                          **_CONSTRAINT_DESIGN, **_CONSTRAINT_TRAINING)}
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


def _constraint_model(label_pairs=True, shuffle_positions=None):
    """N2GON's classifier, optionally without label pairs in the constraint net or with
    its positions permuted across nodes before the constraint loss (position information
    removed from the spring system, everything else kept). ``shuffle_positions`` is the
    key of the permutation (drawn once per fit from the initialisation seed and the key),
    or None for the true positions."""
    from ..graph import GraphOfNetsClassifier

    class _Variant(GraphOfNetsClassifier):
        def _label_pairs(self):
            if label_pairs:
                return super()._label_pairs()
            empty = np.empty((2, 0), dtype=np.int64)
            return empty, empty

        def _constraint_loss(self, positions, v, epoch):
            if shuffle_positions is not None:
                if not hasattr(self, "_position_perm"):
                    rng = np.random.default_rng([self._init_seed, shuffle_positions])
                    self._position_perm = rng.permutation(positions.shape[0])
                positions = positions[self._position_perm]
            return super()._constraint_loss(positions, v, epoch)

        def _finalize_modules(self):
            self.__dict__.pop("_position_perm", None)
            super()._finalize_modules()

    return _Variant


#: The label-free spring arms of constraint-helps (cosine learning-rate decay, see
#: _CONSTRAINT_POWER): true positions, positions permuted (the check's comparator), and
#: positions permuted by a second, independent permutation (the control's method).
_TRUE, _PERMUTED, _PERMUTED_AGAIN = ("spring, true positions", "spring, positions permuted",
                                     "spring, positions permuted again")

#: arm -> (model, inner graphs shuffled, constructor overrides, cosine learning-rate decay)
_ARMS = {
    "outer-only GCN": ("outer", False, {}, False),
    "inner-only GIN": ("inner", False, {}, False),
    "N2GON": ("dual", False, {}, False),
    "N2GON, inner graphs shuffled": ("dual", True, {}, False),
    _TRUE: ("label-free", False, {}, True),
    _PERMUTED: ("shuffled-positions", False, {}, True),
    _PERMUTED_AGAIN: ("shuffled-positions-2", False, {}, True),
    "dual encoder, no constraint": ("dual", False, {"constraint": "none"}, True),
    "N2GON with label pairs": ("dual", False, {}, True),
}


@shared_cache(maxsize=256)
def _fit(scale, seed, arm):
    """Test accuracy (half of the outer nodes, the same split for every arm), parameters,
    training nodes and the test-accuracy curve of one arm on one seed."""
    from ..graph import InnerGINClassifier, OuterGCNClassifier

    cfg = _SETTINGS[scale]
    model_name, permute, overrides, cosine = _ARMS[arm]
    epochs = _epochs(cfg, arm)
    if cosine and "constraint_lr" in cfg:
        overrides = dict(overrides, lr=cfg["constraint_lr"])
    gon, y = _split_signal_gon(seed, cfg["n_nodes"], permute_inner=permute)
    perm = np.random.default_rng(seed).permutation(gon.n_nodes)
    train, test = perm[: gon.n_nodes // 2], perm[gon.n_nodes // 2:]
    ids = np.arange(gon.n_nodes).reshape(-1, 1)
    callbacks = [_TestCurve(test, y[test], _CURVE_EVERY)]
    if cosine:
        callbacks.append(LRScheduler("CosineAnnealingLR", T_max=epochs))
    common = dict(gon=gon, hidden_dim=cfg["hidden"], max_epochs=epochs, device="cpu",
                  random_state=seed, callbacks=callbacks, **overrides)
    cls = {"outer": OuterGCNClassifier, "inner": InnerGINClassifier,
           "dual": _constraint_model(), "label-free": _constraint_model(label_pairs=False),
           "shuffled-positions": _constraint_model(label_pairs=False, shuffle_positions=1),
           "shuffled-positions-2": _constraint_model(label_pairs=False,
                                                     shuffle_positions=2)}[model_name]
    model = cls(**common).fit(ids[train], y[train])
    n_params = sum(p.numel() for p in model.module_.parameters())
    curve = next(cb.curve for cb in model.callbacks_ if isinstance(cb, _TestCurve))
    positions = (model.positions() if model_name not in ("outer", "inner") and not permute
                 else None)
    return (float(model.score(ids[test], y[test])), n_params, len(train), tuple(curve),
            positions, y)


def _epochs(cfg, arm):
    """Full-batch epochs of an arm: the constraint ablation's arms (cosine decay) have
    their own budget."""
    return cfg.get("constraint_epochs", cfg["epochs"]) if _ARMS[arm][3] else cfg["epochs"]


def _arm(scale, arm):
    cfg = _SETTINGS[scale]

    def run(seed):
        acc, n_params, n_train, _, _, _ = _fit(scale, seed, arm)
        return ArmRun(acc, parameters=n_params, train_steps=_epochs(cfg, arm),
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


def _constraint_calibration(streams=((1, 10), (2, 6)), n_nodes=600, epochs=600, lr=3e-3,
                            hidden=32):
    """Paired differences of the constraint-helps arms on calibration worlds.

    Seed stream key 99, from the base seeds and counts in ``streams`` (the claim draws its
    worlds from its own run seed); used once to choose the claim's training rate, epochs
    and looks (see _CONSTRAINT_POWER). Returns, per seed, the three arms' accuracies, true
    positions - permuted, permuted again - permuted, and the seconds per fit.
    """
    import time

    from ._stats import claim_seeds

    key = ("calibration", n_nodes, epochs, lr, hidden)
    _SETTINGS[key] = dict(n_nodes=n_nodes, epochs=epochs, hidden=hidden, looks=(2,),
                          constraint_epochs=epochs, constraint_lr=lr)
    try:
        start, out = time.perf_counter(), {"accuracy": [], "check": [], "control": []}
        seeds = [s for base, n in streams for s in claim_seeds(base, n, 99)]
        for s in seeds:
            acc = {arm: _fit(key, s, arm)[0] for arm in (_TRUE, _PERMUTED, _PERMUTED_AGAIN)}
            out["accuracy"].append(acc)
            out["check"].append(acc[_TRUE] - acc[_PERMUTED])
            out["control"].append(acc[_PERMUTED_AGAIN] - acc[_PERMUTED])
        out["seconds_per_fit"] = (time.perf_counter() - start) / (3 * len(seeds))
        return out
    finally:
        del _SETTINGS[key]


def _pull_purity(scale, seed):
    """Same-class share of the outer-edge pairs the spring pulls together, with the true
    positions and with the permuted positions of one seed, and the chance share."""
    cfg = _SETTINGS[scale]
    gon, y = _split_signal_gon(seed, cfg["n_nodes"])
    src, dst = gon.outer_edges
    perm = np.random.default_rng(seed).permutation(gon.n_nodes)
    shares = np.bincount(y) / len(y)
    return {"true_positions": float(np.mean(y[src] == y[dst])),
            "permuted_positions": float(np.mean(y[perm[src]] == y[perm[dst]])),
            "chance": float(np.sum(shares ** 2))}


def _plot(cmp, scale, arms, out_dir, name, positions_of="N2GON", seeds_of=None):
    """Per-seed accuracies of the arms (on ``seeds_of[arm]`` where given, else the
    comparison's seeds), and the test-accuracy curves of the first seed."""
    fig, axes = new_figure(1, 3, figsize=(14, 3.8))
    seeds_of = seeds_of or {}
    values = {arm: [_fit(scale, s, arm)[0] for s in seeds_of.get(arm, cmp.seeds)]
              for arm in arms}
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
    _, _, _, _, pos, y = _fit(scale, first, positions_of)
    if pos.shape[1] > 2:
        centred = pos - pos.mean(axis=0)
        pos = centred @ np.linalg.svd(centred, full_matrices=False)[2][:2].T
    axes[2].scatter(pos[:, 0], pos[:, 1], c=y, cmap="tab10", s=6)
    axes[2].set_title(f"learned positions of {positions_of} (first 2 PCs), by class",
                      fontsize=8)
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
                "The spring system helps through the positions it arranges: the dual "
                "encoder trained with a label-free constraint net on each node's own "
                "positions beats the same training with the positions permuted across nodes "
                "before the spring loss.",
                paper_statement="The ablation study shows that the position-aware constraint "
                                "system contributes to N2GON's accuracy; nodes are "
                                "\"adaptively arranged based on their positions\" (abstract; "
                                "values not retrieved)." + _RECONSTRUCTED,
                check="paired seeds (same initialisation; every arm 600 full-batch epochs at "
                      "learning rate 0.003 with a cosine decay), one look of 50 fresh worlds "
                      "sized to end decided (a first design, looks 8/16/32, ended undecided): "
                      "the lower bound of mean(accuracy with the label-free spring loss on "
                      "the true positions - the same loss on the positions permuted across "
                      "nodes) > 0; contradicted when the upper bound is below 0.02. The "
                      "constraint net holds outer edges and kNN pairs only, so the check "
                      "measures position awareness apart from label supervision; the label "
                      "pairs and the no-constraint encoder are reported beside on the first "
                      "8 seeds",
                control="placebo: the same loss on a second, independent permutation of the "
                        "positions against the first (no position information in either arm), "
                        "on the first 15 seeds; it fails when its upper bound is below 0.02",
                effect_of_interest=_EOI)
def _claim_constraint(scale, seed, out_dir):
    import dataclasses

    from ._stats import decide

    cfg = _SETTINGS[scale]
    looks = cfg["constraint_looks"]
    cmp = run_comparison({a: _arm(scale, a) for a in (_TRUE, _PERMUTED)}, method=_TRUE,
                         baseline=_PERMUTED, seed=seed, looks=looks,
                         key=cfg["constraint_key"], effect_of_interest=_EOI,
                         metric="test accuracy")
    # The placebo runs on a prefix of the check's seeds, sized for it alone (see
    # _CONSTRAINT_DESIGN): it is decided on that prefix at one look.
    control_seeds = cmp.seeds[: cfg["constraint_control_seeds"]]
    placebo = [_fit(scale, s, _PERMUTED_AGAIN)[0] for s in control_seeds]
    permuted = cmp.values[_PERMUTED][: len(control_seeds)]
    control = decide(np.subtract(placebo, permuted), effect_of_interest=_EOI.value,
                     alpha=cmp.alpha)
    arms = dict(cmp.arms)
    arms[_PERMUTED_AGAIN] = dict(_arm(scale, _PERMUTED_AGAIN)(control_seeds[0]).cost(),
                                 seeds=len(control_seeds))
    cmp = dataclasses.replace(cmp, control_method=_PERMUTED_AGAIN, control_baseline=_PERMUTED,
                              control_decision=control, arms=arms,
                              values={**cmp.values, _PERMUTED_AGAIN: placebo})
    first = cmp.seeds[: cfg["constraint_beside_seeds"]]
    beside = ("dual encoder, no constraint", "N2GON with label pairs")
    for arm in beside:
        cmp.arms[arm] = dict(_arm(scale, arm)(first[0]).cost(), seeds=len(first))

    def aside(method, baseline):
        return decide_claim([_fit(scale, s, method)[0] for s in first],
                            [_fit(scale, s, baseline)[0] for s in first],
                            effect_of_interest=_EOI).decision.to_dict()

    shown = (beside[0], _TRUE, _PERMUTED, _PERMUTED_AGAIN)
    artifact = _plot(cmp, scale, shown, out_dir, "constraint_ablation", positions_of=_TRUE,
                     seeds_of={beside[0]: first, _PERMUTED_AGAIN: control_seeds})
    return cmp.claim_result(
        observed={"bed_can_express": _pull_purity(scale, cmp.seeds[0]),
                  "beside_seeds": len(first), "control_seeds": len(control_seeds),
                  "seed_stream_key": list(cfg["constraint_key"]),
                  "first_design": dict(_CONSTRAINT_FIRST_DESIGN,
                                       note="recorded from the first design's run at "
                                            "quick scale, seed 0; not rerun"),
                  "true_positions_minus_no_constraint": aside(_TRUE, beside[0]),
                  "label_pairs_added_minus_label_free": aside(beside[1], _TRUE),
                  "test_curve_first_seed": {a: list(_fit(scale, cmp.seeds[0], a)[3])
                                            for a in shown},
                  "epochs": _epochs(cfg, _TRUE),
                  "learning_rate": cfg.get("constraint_lr")},
        artifacts=[artifact],
        notes="The permuted arm keeps everything but the positions' assignment to nodes: the "
              "same constraint net, loss weight and shrinkage of the positions, applied to "
              "p[perm] (fixed per fit). bed_can_express gives the same-class share of the "
              "pairs the spring pulls together, on the first seed, against chance: with the "
              "true positions the pulls carry class information (the outer graph is "
              "homophilous, the kNN pairs follow the embeddings), with permuted positions "
              "they are random pairs. The reconstructed N2GON constraint net also holds "
              "same-label pairs of training nodes (extra supervision); those are left out of "
              "the check and reported as label_pairs_added_minus_label_free, with the old "
              "comparison against no constraint as true_positions_minus_no_constraint, both "
              "on the first 8 seeds only. The training rate and epochs come from "
              "calibration worlds no claim draws (seed key 99; see _CONSTRAINT_POWER): at "
              "the dual claim's rate (0.01, 300 epochs) two equivalent arms differed by a "
              "paired SD of 0.067 there, at 0.003 for 600 epochs by 0.017. Two designs: the "
              "first (looks 8, 16, 32 on the run seed's own stream, planned from the "
              "calibration SDs) ended undecided at seed 0, +0.0097 [-0.0029, +0.0223], "
              "n=32, with the placebo failing (upper 0.0088); its paired SD was 0.035, not "
              "the calibration's 0.022 (first_design, recorded, not rerun). This run is the "
              "second: one look of 50 worlds of seed stream key 2, which the first design "
              "never drew, sized by seeds_to_decide from the 90% upper limit of the first "
              "design's SD (0.042), so that its interval is narrower than the gap between "
              "0 and the effect of interest; the placebo on its first 15 seeds "
              "(seeds_needed at the limit of its SD in the first design, 0.029). Over both "
              "designs each false verdict has probability at most 0.05 + 0.05.")
