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
learning rate on the same split, on paired seeds.
"""

import numpy as np

from ._plotting import new_figure, save_figure
from ._registry import ClaimResult, ControlResult, register_claim, register_paper
from ._stats import claim_seeds, paired_difference

SLUG = "graph-of-net"

register_paper(SLUG, "N2GON: Neural Networks for Graph-of-Net with Position Awareness",
               module="skpaper.graph")

# (outer nodes, seeds, epochs, hidden)
_SETTINGS = {"smoke": (60, 3, 10, 8), "quick": (600, 5, 100, 32), "full": (600, 10, 300, 64)}
#: Probability that an outer node's own feature shows its true class (else a random one).
_FEATURE_SIGNAL = 0.35
_RECONSTRUCTED = (" The paper's datasets, equations 2-7 and figures were not retrievable; "
                  "the method and the synthetic data are reconstructions.")


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


def _fit_score(model_name, gon, y, seed, epochs, hidden, init_seed=None):
    """Test accuracy (half of the outer nodes, same split for every arm) and parameters."""
    from ..graph import GraphOfNetsClassifier, InnerGINClassifier, OuterGCNClassifier

    perm = np.random.default_rng(seed).permutation(gon.n_nodes)
    train, test = perm[: gon.n_nodes // 2], perm[gon.n_nodes // 2:]
    ids = np.arange(gon.n_nodes).reshape(-1, 1)
    common = dict(gon=gon, hidden_dim=hidden, max_epochs=epochs, device="cpu",
                  random_state=seed if init_seed is None else init_seed)
    model = {"outer-only GCN": lambda: OuterGCNClassifier(**common),
             "inner-only GIN": lambda: InnerGINClassifier(**common),
             "dual encoder": lambda: GraphOfNetsClassifier(constraint="none", **common),
             "dual + constraint": lambda: GraphOfNetsClassifier(**common)}[model_name]()
    model.fit(ids[train], y[train])
    n_params = sum(p.numel() for p in model.module_.parameters())
    return float(model.score(ids[test], y[test])), n_params, len(train), model


def _run(scale, seed):
    n_nodes, n_seeds, epochs, hidden = _SETTINGS[scale]
    arms = ("outer-only GCN", "inner-only GIN", "dual + constraint", "dual encoder")
    acc = {name: [] for name in (*arms, "dual + constraint, inner graphs shuffled",
                                 "dual encoder, second initialisation")}
    params, last = {}, None
    for s in claim_seeds(seed, n_seeds):
        gon, y = _split_signal_gon(s, n_nodes)
        for name in arms:
            score, params[name], n_train, model = _fit_score(name, gon, y, s, epochs, hidden)
            acc[name].append(score)
            if name == "dual + constraint":
                last = (model, y)
        shuffled, _ = _split_signal_gon(s, n_nodes, permute_inner=True)
        acc["dual + constraint, inner graphs shuffled"].append(
            _fit_score("dual + constraint", shuffled, y, s, epochs, hidden)[0])
        acc["dual encoder, second initialisation"].append(
            _fit_score("dual encoder", gon, y, s, epochs, hidden, init_seed=s + 1)[0])
    arms_record = {name: {"parameters": params[name], "train_epochs": epochs,
                          "train_examples": n_train, "hidden_dim": hidden} for name in arms}
    return acc, arms_record, last


_CACHE = {}


def _cached_run(scale, seed):
    key = (scale, seed)
    if key not in _CACHE:
        _CACHE.clear()
        _CACHE[key] = _run(scale, seed)
    return _CACHE[key]


def _plot(acc, last, out_dir, name):
    fig, axes = new_figure(1, 2, figsize=(10, 3.6))
    names = list(acc)
    axes[0].bar(range(len(names)), [np.mean(acc[n]) for n in names], color="tab:blue")
    for i, arm in enumerate(names):
        axes[0].plot([i] * len(acc[arm]), acc[arm], "o", color="k", ms=3)
    axes[0].set_xticks(range(len(names)), [n.replace(", ", ",\n") for n in names],
                       rotation=25, fontsize=6)
    axes[0].set_ylabel("test accuracy")
    axes[0].set_ylim(0, 1)
    model, y = last
    pos = model.positions()
    if pos.shape[1] > 2:
        centred = pos - pos.mean(axis=0)
        pos = centred @ np.linalg.svd(centred, full_matrices=False)[2][:2].T
    axes[1].scatter(pos[:, 0], pos[:, 1], c=y, cmap="tab10", s=6)
    axes[1].set_title("learned positions (first 2 PCs), coloured by class", fontsize=8)
    return save_figure(fig, out_dir, name)


@register_claim(SLUG, "dual-beats-single-views",
                "On a graph of nets whose signal is split between the outer graph and the "
                "inner graphs, N2GON (dual encoder + constraint) beats both the outer-only GCN "
                "and the inner-only GIN.",
                paper_statement="N2GON, which encodes each node-graph (F1) and the graph of "
                                "nets (F2) jointly, outperforms established graph "
                                "representation learning methods on node classification over "
                                "graphs of nets (Table 1; values not retrieved)."
                                + _RECONSTRUCTED,
                check="lower 95% bounds of the paired accuracy gains of N2GON over the "
                      "outer-only GCN and over the inner-only GIN (paired seeds) are both > 0",
                control="N2GON with the inner graphs shuffled across outer nodes (inner "
                        "information removed)")
def _claim_dual(scale, seed, out_dir):
    acc, arms, last = _cached_run(scale, seed)
    ours = acc["dual + constraint"]
    vs_outer = paired_difference(ours, acc["outer-only GCN"])
    vs_inner = paired_difference(ours, acc["inner-only GIN"])
    shuffled = acc["dual + constraint, inner graphs shuffled"]
    ctrl_outer = paired_difference(shuffled, acc["outer-only GCN"])
    ctrl_inner = paired_difference(shuffled, acc["inner-only GIN"])
    artifact = _plot(acc, last, out_dir, "dual_vs_single_views")
    return ClaimResult(
        observed={"gain_vs_outer": vs_outer.to_dict(), "gain_vs_inner": vs_inner.to_dict(),
                  "accuracy_per_seed": acc,
                  "ours_margin_10_points_met": bool(min(vs_outer.mean, vs_inner.mean) >= 0.10)},
        expected={"gain_vs_outer_lower_bound": "> 0", "gain_vs_inner_lower_bound": "> 0"},
        passed=vs_outer.passed and vs_inner.passed,
        control=ControlResult(observed={"gain_vs_outer": ctrl_outer.to_dict(),
                                        "gain_vs_inner": ctrl_inner.to_dict()},
                              passed=ctrl_outer.passed and ctrl_inner.passed),
        arms={k: arms[k] for k in ("outer-only GCN", "inner-only GIN", "dual + constraint")},
        artifacts=[artifact],
        notes="ours_margin_10_points_met reports a 10-point margin that came from a planning "
              "prototype, not from the paper; it does not enter the verdict. The baselines "
              "have fewer parameters by construction (one view each); their width, epochs "
              "and data are the same.")


@register_claim(SLUG, "constraint-helps",
                "The constraint loss (spring system over the constraint net) improves the dual "
                "encoder's accuracy.",
                paper_statement="The ablation study shows that the position-aware constraint "
                                "system contributes to N2GON's accuracy (values not "
                                "retrieved)." + _RECONSTRUCTED,
                check="lower 95% bound of the paired accuracy gain of the dual encoder with "
                      "the constraint loss over the same encoder without it (paired seeds, "
                      "same initialisation) > 0",
                control="A/A: a second unconstrained dual encoder, another initialisation, "
                        "in place of the constrained one")
def _claim_constraint(scale, seed, out_dir):
    acc, arms, last = _cached_run(scale, seed)
    gain = paired_difference(acc["dual + constraint"], acc["dual encoder"])
    placebo = paired_difference(acc["dual encoder, second initialisation"],
                                acc["dual encoder"])
    artifact = _plot({k: acc[k] for k in ("dual encoder", "dual + constraint",
                                          "dual encoder, second initialisation")},
                     last, out_dir, "constraint_ablation")
    return ClaimResult(
        observed={"gain": gain.to_dict(), "accuracy_per_seed": {
            k: acc[k] for k in ("dual encoder", "dual + constraint")}},
        expected={"gain_lower_bound": "> 0"},
        passed=gain.passed,
        control=ControlResult(observed={"gain": placebo.to_dict()}, passed=placebo.passed),
        arms={k: arms[k] for k in ("dual encoder", "dual + constraint")},
        artifacts=[artifact],
        notes="The former check asserted that the constraint costs at most one point, the "
              "opposite direction of the paper's ablation; it is replaced by this one.")
