"""Claims of "Symmetry-Robust 3D Orientation Estimation" (Scarvelis, Benhaim & Zhang, ICML 2025).

The paper trains on all of ShapeNet with DGCNN backbones; here the same
procedures run on procedural shapes whose symmetry groups are known
(:func:`skpaper.datasets.make_synthetic_shapes`) with a PointNet-lite backbone
at the ``smoke`` and ``quick`` scales (CPU) and a small DGCNN at ``full``.
Every claim trains its models on several paired seeds (each seed draws its own
training shapes, test shapes and weights, the same for every arm) and
asserts the paper's direction with one-sided t bounds over the seeds. The
learned arms share one budget: the same training shapes, epochs, batch size,
backbone and inference votes.
"""

import numpy as np

from ._comparison import ArmRun, EffectOfInterest, run_comparison
from ._plotting import new_figure, save_figure
from ._registry import ClaimResult, register_claim, register_paper, shared_cache
from ._stats import claim_seeds, paired_difference, proportion_interval

SLUG = "shape-orientation"

register_paper(SLUG, "Symmetry-Robust 3D Orientation Estimation", module="skpaper.shape",
               quick_cost_s=450)

# Per scale: shapes per family (train), points per cloud, epochs, backbone,
# test shapes per family, conformal calibration/test shapes per family, sequential seeds.
# Quick trains 400 epochs and looks at 3 and 6 seeds, both from the calibration setting
# _CALIBRATION below (calibrate_budget: other seeds, other shapes), never from a claim's
# own runs; see _BUDGET_NOTE.
_SCALES = {
    "smoke": dict(n_train=6, n_points=48, epochs=3, backbone="pointnet", batch_size=16,
                  n_test=4, n_conformal=10, n_votes=3, looks=(2,)),
    "quick": dict(n_train=30, n_points=128, epochs=400, backbone="pointnet", batch_size=16,
                  n_test=15, n_conformal=30, n_votes=20, looks=(3, 6)),
    "full": dict(n_train=100, n_points=512, epochs=200, backbone="dgcnn", batch_size=32,
                 n_test=50, n_conformal=200, n_votes=50, looks=(5, 10)),
}
_THRESHOLD_DEG = 10.0
# Ours, not the paper's: a column norm below 0.5 is "collapsed" (a rotation's columns
# have norm 1), the up column keeping at least 0.5 separates the collapse of Prop. 3.1
# from an untrained network whose outputs are all small.
_COLLAPSE_NORM = 0.5
_UP_NORM_MIN = 0.5
_ALPHA = 0.1
# Ours: an informative conformal set holds at most half of the 24 flips on shapes
# whose flip is identifiable (no rotational symmetry).
_INFORMATIVE_SET_MAX = 12.0
_SYMMETRIC_UP = ("table", "bench")
_IDENTIFIABLE = ("chair", "mug")
_COLLAPSE_EOI = EffectOfInterest(
    0.1, "ours", "each of the three figures clears its threshold by 0.1 (side/front norm at "
    "most 0.4, up norm at least 0.6, 60% of shapes within 10 degrees): a collapse, and a fix, "
    "plainly visible")
_UP_EOI = EffectOfInterest(
    0.05, "ours", "five points of up-axis accuracy at 10 degrees over the better baseline: the "
    "smallest lead that would rank the pipeline first in a benchmark table")
_SET_EOI = EffectOfInterest(
    _INFORMATIVE_SET_MAX, "ours", "an informative set holds at most half of the 24 flips on "
    "identifiable shapes; a lower bound above 12 contradicts")


def _seeds(scale, seed):
    """The seeds of the first look: what the reported claim and the figures read."""
    return claim_seeds(seed, _SCALES[scale]["looks"][0])


def _cost(scale, s, *names):
    models = _trained(scale, s)
    return dict(parameters=sum(_n_parameters(models[n]) for n in names),
                train_steps=models["cfg"]["epochs"], train_examples=models["n_train_shapes"],
                extra={"unit_of_train_steps": "epochs", "backbone": models["cfg"]["backbone"],
                       "inference_votes": models["cfg"]["n_votes"]})


def _with_octahedral(group):
    """All products s g (s in G_S, g in O): the ambiguity left to a stage-1 orienter."""
    from ..shape import octahedral_group

    return np.einsum("sij,gjk->sgik", group, octahedral_group()).reshape(-1, 3, 3)


def _rotated_test_set(n_per_family, n_points, seed, noise=0.0):
    from ..datasets import make_synthetic_shapes
    from ..shape import apply_rotation, random_rotations

    X, family, groups = make_synthetic_shapes(n_per_family, n_points, noise=noise,
                                              return_groups=True, random_state=seed + 1)
    R = random_rotations(len(X), random_state=seed + 2)
    return {"X": apply_rotation(X, R), "R": R, "family": family, "groups": groups,
            "canonical": X}


def _n_parameters(estimator):
    return int(sum(p.numel() for p in estimator.module_.parameters()))


def _fit_networks(cfg, seed, callbacks=None):
    """The four networks of a seed: naive L2, naive L2 modulo O, quotient orienter, flipper."""
    from ..datasets import make_synthetic_shapes
    from ..shape import OctahedralFlipper, QuotientOrienter

    X, _ = make_synthetic_shapes(cfg["n_train"], cfg["n_points"], noise=cfg.get("noise", 0.0),
                                 random_state=seed)
    common = dict(backbone=cfg["backbone"], n_points=cfg["n_points"], max_epochs=cfg["epochs"],
                  batch_size=cfg["batch_size"], lr=1e-3, random_state=seed,
                  callbacks=callbacks)
    # Both regressors get the same voting at inference (the paper's benchmark uses 50 votes).
    nets = {name: QuotientOrienter(loss=loss, n_votes=cfg["n_votes"], **common).fit(X)
            for name, loss in (("naive", "l2"), ("naive_mod_o", "raw_quotient"),
                               ("quotient", "quotient"))}
    nets["flipper"] = OctahedralFlipper(noise_deg=10.0, **common).fit(X)
    return X, nets


def _assemble(cfg, seed, X, nets):
    """Pipelines and the rotated test set around trained networks."""
    from sklearn.frozen import FrozenEstimator

    from ..shape import PCAOrienter, TwoStageOrienter

    # Frozen stages: the pipelines reuse the trained models instead of refitting clones.
    flipper = FrozenEstimator(nets["flipper"])
    models = dict(nets)
    models["two_stage"] = TwoStageOrienter(FrozenEstimator(nets["quotient"]), flipper).fit(X)
    models["naive_flipper"] = TwoStageOrienter(FrozenEstimator(nets["naive"]), flipper).fit(X)
    models["pca"] = TwoStageOrienter(PCAOrienter(), flipper).fit(X)
    models.update(test=_rotated_test_set(cfg["n_test"], cfg["n_points"], seed,
                                         cfg.get("noise", 0.0)),
                  cfg=cfg, n_train_shapes=len(X), train_X=X)
    return models


@shared_cache(maxsize=8)
def _trained(scale, seed):
    """Train the naive regressors, the quotient orienter and the flipper once per (scale, seed).

    Every claim of the paper reads these, so a run trains them only once.
    """
    cfg = _SCALES[scale]
    X, nets = _fit_networks(cfg, seed)
    return _assemble(cfg, seed, X, nets)


#: The calibration setting of the quick budget and looks: other seeds (key 43, 1), other
#: shapes (24 per family, 96 points, jitter 0.01), 10 votes and smaller test sets than any
#: claim's.
_CALIBRATION = dict(_SCALES["quick"], n_train=24, n_points=96, noise=0.01, n_votes=10,
                    n_test=10, n_conformal=20)
_CALIBRATION_EPOCHS = (200, 300, 400)
_BUDGET_NOTE = (
    "calibrate_budget (seed stream key (43, 1), 24 shapes per family, 96 points, jitter 0.01, "
    "10 votes, 10 test shapes per family, 2 seeds) read, at 200/300/400 epochs, a flipper "
    "top-1 of 0.37/0.43/0.47 and a two-stage lead of 0.22/0.13/0.24: its plateau rule (the "
    "smallest budget with both within 0.05 of the 400-epoch value) picks 400, the quick "
    "budget (an earlier 300 had been set before the calibration ran); the collapse margin "
    "(0.24/0.15/0.18) and its control (-0.46/-0.50/-0.47) keep their signs at every budget.")


def _snapshots_callback(epochs):
    import copy

    from ..nn import Callback

    class Snapshots(Callback):
        """Copies of the module's weights at the listed epochs (constant learning rate, so a
        snapshot at epoch E is the network a fit of E epochs returns)."""

        def on_train_begin(self, estimator, **kwargs):
            self.states = {}

        def on_epoch_end(self, estimator, record, **kwargs):
            if record["epoch"] in epochs:
                self.states[record["epoch"]] = copy.deepcopy(estimator.module_.state_dict())

    return Snapshots()


def calibrate_budget(seed=0, n_seeds=2, epochs=_CALIBRATION_EPOCHS):
    """Figures of the three asserting claims per training budget, on the calibration setting.

    Not a claim: it chose the quick scale's epochs and looks. Each of ``n_seeds`` seeds
    (stream key 43, 1) trains the four networks for ``max(epochs)`` epochs, keeps their
    weights at every budget in ``epochs`` and computes, per budget, the l2-collapse margin
    (and its control), the two-stage lead, the conformal set size on identifiable shapes
    and the flipper's top-1.

    Parameters
    ----------
    seed : int, default=0
    n_seeds : int, default=2
    epochs : tuple of int, default=(200, 300, 400)

    Returns
    -------
    figures : dict
        ``{epochs: {figure: [value per seed]}}``.

    Examples
    --------
    >>> from skpaper.papers.shape_orientation import calibrate_budget
    >>> figures = calibrate_budget(n_seeds=1, epochs=(1, 2))  # doctest: +SKIP
    >>> sorted(figures)  # doctest: +SKIP
    [1, 2]
    """
    import copy

    cfg = dict(_CALIBRATION, epochs=max(epochs))
    out = {e: {} for e in epochs}
    for s in claim_seeds(seed, n_seeds, 43, 1):
        X, nets = _fit_networks(cfg, s, callbacks=[_snapshots_callback(set(epochs))])
        for e in epochs:
            at_e = {}
            for name, net in nets.items():
                at_e[name] = copy.deepcopy(net)
                at_e[name].module_.load_state_dict(net.callbacks_[0].states[e])
            models = _assemble(dict(cfg, epochs=e), s, X, at_e)
            conf = _conformal_figures(copy.deepcopy(at_e["flipper"]), cfg, s)
            acc = {n: float(np.mean(_up_errors(models, n) < _THRESHOLD_DEG))
                   for n in ("two_stage", "naive", "pca")}
            figs = {"collapse_margin": _collapse_margin(models),
                    "collapse_control_margin": _collapse_margin(models, "naive_mod_o"),
                    "two_stage_lead": acc["two_stage"] - max(acc["naive"], acc["pca"]),
                    "set_size_identifiable": conf["size_identifiable"],
                    "flipper_top1": conf["top1"],
                    "naive_train_loss": float(np.mean(
                        [r["train_loss"] for r in nets["naive"].history_[e - 10:e]]))}
            for k, v in figs.items():
                out[e].setdefault(k, []).append(float(v))
    return out


def _per_family(values, family):
    return {f: float(np.mean(values[family == f])) for f in sorted(set(family))}


def _collapse_figures(models, net="naive"):
    """Raw-output column norms of regressor ``net`` per family, the quotient orienter's error
    modulo O."""
    from ..shape import angle_modulo_group

    test = models["test"]
    fam = test["family"]
    raw = models[net].predict_raw(test["X"])
    # Column norms of the raw output (R^T M has the same column norms as M).
    norms = np.linalg.norm(raw, axis=1)
    quotient_err = angle_modulo_group(models["quotient"].predict(test["X"]), test["R"],
                                      [_with_octahedral(g) for g in test["groups"]])
    out = {"norms": norms, "family": fam, "quotient_err": quotient_err}
    for name, fams in (("symmetric", _SYMMETRIC_UP), ("identifiable", _IDENTIFIABLE)):
        mask = np.isin(fam, fams)
        out[f"{name}_side_front"] = float(norms[mask][:, [0, 2]].mean())
        out[f"{name}_up"] = float(norms[mask][:, 1].mean())
    out["quotient_below"] = float(np.mean(quotient_err < _THRESHOLD_DEG))
    return out


def _collapse_margin(models, net="naive"):
    """The l2-collapse figure: the least margin of regressor ``net`` on the C2/C4 families."""
    f = _collapse_figures(models, net)
    return min(_COLLAPSE_NORM - f["symmetric_side_front"], f["symmetric_up"] - _UP_NORM_MIN,
               f["quotient_below"] - 0.5)


@register_claim(
    SLUG, "l2-collapse",
    "Naive L2 regression of R collapses on shapes with a rotational symmetry about up (the "
    "side and front columns of its raw output shrink, Prop. 3.1), while the quotient "
    "orienter's error modulo the octahedral group is below 10 degrees on most shapes.",
    paper_statement="Prop. 3.1: for a shape with symmetry group G_S the L2-optimal regressor "
                    "outputs the mean of {R g : g in G_S}, which is not a rotation (a 180-degree "
                    "symmetry about up sends the side and front columns to 0); regressing "
                    "modulo the octahedral group O avoids this (Sec. 3-4).",
    check="per seed, the least of three margins: 0.5 - the naive model's mean side/front "
          "column norm on the C2/C4 families (table, bench), its up column norm - 0.5 "
          "(thresholds ours), and the quotient orienter's fraction of shapes within 10 "
          "degrees modulo O - 0.5; over sequential paired seeds its lower 95% bound > 0",
    control="averaging over the symmetry removed: the same margins for the same raw L2 "
            "regressor trained with its target taken modulo O (min over g in O of "
            "||M - R g||^2; same network, data and epochs), which has no mean over G_S to "
            "output for the C2/C4 families (G_S in O); under-training alone would shrink its "
            "columns too",
    effect_of_interest=_COLLAPSE_EOI)
def _claim_l2_collapse(scale, seed, out_dir):
    def margins(net):
        def run(s):
            return ArmRun(_collapse_margin(_trained(scale, s), net),
                          **_cost(scale, s, net, "quotient"))
        return run

    cmp = run_comparison({"naive_l2": margins("naive"), "l2_modulo_o": margins("naive_mod_o")},
                         method="naive_l2", baseline=None, control_method="l2_modulo_o",
                         seed=seed,
                         looks=_SCALES[scale]["looks"], effect_of_interest=_COLLAPSE_EOI,
                         metric="least margin of the collapse figures")
    seeds = cmp.seeds
    figs = [_collapse_figures(_trained(scale, s)) for s in seeds]
    control_figs = [_collapse_figures(_trained(scale, s), "naive_mod_o") for s in seeds]
    first = figs[0]
    fam, norms = first["family"], first["norms"]
    column_norms = {f: np.mean(norms[fam == f], axis=0).round(3).tolist()
                    for f in sorted(set(fam))}
    models = _trained(scale, seeds[0])
    observed = {
        **{f"naive_{k}_per_seed": [f[k] for f in figs]
           for k in ("symmetric_side_front", "symmetric_up", "identifiable_side_front",
                     "identifiable_up")},
        **{f"naive_mod_o_{k}_per_seed": [f[k] for f in control_figs]
           for k in ("symmetric_side_front", "symmetric_up")},
        "quotient_fraction_below_10deg_per_seed": [f["quotient_below"] for f in figs],
        "naive_column_norms_side_up_front_first_seed": column_norms,
        "quotient_fraction_below_10deg_per_family_first_seed": _per_family(
            first["quotient_err"] < _THRESHOLD_DEG, fam),
        "quotient_error_mod_O_median_deg_per_seed": [float(np.median(f["quotient_err"]))
                                                     for f in figs],
        "n_test_shapes_per_seed": len(fam),
    }

    fig, axes = new_figure(1, 2, figsize=(9, 3.2))
    fams = sorted(set(fam))
    width = 0.27
    for k, (name, color) in enumerate(zip(("side", "up", "front"), ("C0", "C1", "C2"))):
        axes[0].bar(np.arange(len(fams)) + (k - 1) * width,
                    [column_norms[f][k] for f in fams], width, label=name, color=color)
    axes[0].axhline(1.0, color="gray", lw=0.8)
    axes[0].axhline(_COLLAPSE_NORM, color="gray", lw=0.8, ls="--")
    axes[0].set_xticks(np.arange(len(fams)), fams, rotation=30)
    axes[0].set_ylabel("column norm of raw output")
    axes[0].set_title("naive L2 regression (first seed)")
    axes[0].legend(fontsize=8)
    axes[1].hist(np.clip(np.concatenate([f["quotient_err"] for f in figs]), 0, 90), bins=30,
                 color="C3")
    axes[1].axvline(_THRESHOLD_DEG, color="k", lw=0.8)
    axes[1].set_xlabel("error modulo O (and G_S), degrees")
    axes[1].set_title(f"quotient orienter ({len(seeds)} seeds)")
    artifact = save_figure(fig, out_dir, "l2_collapse")
    cfg = models["cfg"]
    return cmp.claim_result(
        observed=observed,
        artifacts=[artifact],
        notes=(f"{models['n_train_shapes']} training shapes per seed ({scale}), "
               f"{cfg['epochs']} epochs of fresh random rotations, {cfg['backbone']} backbone, "
               f"{cfg['n_votes']} votes at inference; the raw-output norms are taken without "
               "voting; the error modulo O also quotients the continuous symmetries of lamps "
               "and rockets (G_S O). The control regressor (the same raw L2 regression with "
               "its target taken modulo O) has no symmetric mean to output on tables and "
               "benches: if its columns shrink there too, the shrinkage is under-training, not "
               "Prop. 3.1, and the claim is uninformative. The naive net's columns on the "
               "identifiable families are reported (a finite net also shrinks its outputs "
               "where it is unsure). " + _BUDGET_NOTE + " Synthetic shapes stand in for "
               "ShapeNet."),
    )


def _up_errors(models, name, top_k=None):
    from ..shape import axis_errors, top_k_axis_errors

    test = models["test"]
    est = models[name]
    if top_k is not None:
        return top_k_axis_errors(est.predict_top_k(test["X"], top_k), test["R"], "up",
                                 test["groups"])
    return axis_errors(est.predict(test["X"]), test["R"], "up", test["groups"])


@register_claim(
    SLUG, "two-stage-up-accuracy",
    "The two-stage pipeline (quotient orienter + flipper) has a higher up-axis accuracy at 10 "
    "degrees than naive L2 regression and than a PCA frame followed by the same flipper.",
    paper_statement="The two-stage pipeline reaches state-of-the-art up-axis accuracy "
                    "(angle < 10 degrees) on ShapeNet, above regression and other baselines "
                    "(Sec. 5; the official benchmark our_pipeline_up_accuracy_benchmark_shapenet"
                    ".py).",
    check="per seed, min over naive L2 and PCA + the same flipper of up-accuracy(two-stage) "
          "- up-accuracy(baseline) (errors modulo each shape's symmetry group); over "
          "sequential paired seeds its lower 95% bound > 0",
    control="quotient loss off: the same check with stage 1 the naive L2 regressor (same "
            "flipper, same budget)",
    effect_of_interest=_UP_EOI)
def _claim_two_stage(scale, seed, out_dir):
    names = ("two_stage", "naive", "pca", "naive_flipper")

    def accuracy(models, name):
        return float(np.mean(_up_errors(models, name) < _THRESHOLD_DEG))

    def lead(name):
        def run(s):
            models = _trained(scale, s)
            return ArmRun(min(accuracy(models, name) - accuracy(models, b)
                              for b in ("naive", "pca")),
                          **_cost(scale, s, "quotient" if name == "two_stage" else "naive",
                                  "flipper"))
        return run

    cmp = run_comparison({"two_stage": lead("two_stage"), "naive_flipper": lead("naive_flipper")},
                         method="two_stage", baseline=None, control_method="naive_flipper",
                         seed=seed, looks=_SCALES[scale]["looks"], effect_of_interest=_UP_EOI,
                         metric="up-axis accuracy lead over the better baseline")
    seeds = cmp.seeds
    acc = {n: [accuracy(_trained(scale, s), n) for s in seeds] for n in names}
    top4 = [float(np.mean(_up_errors(_trained(scale, s), "two_stage", top_k=4)
                          < _THRESHOLD_DEG)) for s in seeds]
    models = _trained(scale, seeds[0])
    fam = models["test"]["family"]
    per_family = {n: _per_family(_up_errors(models, n) < _THRESHOLD_DEG, fam) for n in names}
    labels = {"two_stage": "two-stage", "naive": "naive L2", "pca": "PCA + flipper",
              "naive_flipper": "naive L2 + flipper"}
    observed = {"gain_vs_naive_l2": paired_difference(acc["two_stage"], acc["naive"]).to_dict(),
                "gain_vs_pca_flipper": paired_difference(acc["two_stage"],
                                                         acc["pca"]).to_dict(),
                **{f"up_accuracy_{n}_per_seed": acc[n] for n in names},
                "up_accuracy_two_stage_top4_per_seed": top4,
                "up_accuracy_per_family_first_seed": per_family}

    fig, ax = new_figure(figsize=(7.5, 3.2))
    fams = sorted(per_family["two_stage"])
    width = 0.2
    for k, n in enumerate(names):
        ax.bar(np.arange(len(fams)) + (k - 1.5) * width, [per_family[n][f] for f in fams],
               width, label=f"{labels[n]} ({np.mean(acc[n]):.2f})")
    ax.set_xticks(np.arange(len(fams)), fams)
    ax.set_ylabel("up-axis accuracy (< 10 deg, modulo G_S)")
    ax.set_ylim(0, 1.3)
    ax.legend(fontsize=7, ncol=2, loc="upper center")
    artifact = save_figure(fig, out_dir, "two_stage_up_accuracy")
    return cmp.claim_result(
        observed=observed,
        artifacts=[artifact],
        notes=("Up-axis errors are taken modulo each shape's symmetry group (a rocket's up "
               "axis is defined only up to rotations about its front axis). All learned models "
               f"share the training budget and {models['cfg']['n_votes']} inference votes; the "
               "PCA baseline and the control reuse the trained flipper. The naive L2 arm has no "
               "flipper (it regresses the full rotation). The top-4 figures are the official "
               "benchmark's top-4 evaluation (best of the four completed orientations), "
               "reported, not judged. " + _BUDGET_NOTE),
    )


def _conformal_figures(flipper, cfg, seed):
    """Coverage and set sizes of split-conformal sets on fresh exchangeable shapes."""
    from ..datasets import make_synthetic_shapes
    from ..shape import apply_rotation, octahedral_group, random_small_rotations

    X, fam = make_synthetic_shapes(2 * cfg["n_conformal"], cfg["n_points"],
                                   noise=cfg.get("noise", 0.0), random_state=seed + 3)
    rng = np.random.RandomState(seed + 4)
    y = rng.randint(24, size=len(X))
    X = apply_rotation(X, octahedral_group()[y] @ random_small_rotations(len(X), 10.0, rng))
    perm = rng.permutation(len(X))
    cal, tst = perm[: len(X) // 2], perm[len(X) // 2:]
    flipper.calibrate_conformal(X[cal], y[cal], alpha=_ALPHA)
    sets = flipper.predict_set(X[tst])
    covered = sets[np.arange(len(tst)), y[tst]]
    sizes = sets.sum(axis=1).astype(float)
    ident = np.isin(fam[tst], _IDENTIFIABLE)
    return {"covered": int(covered.sum()), "n": len(tst),
            "size_identifiable": float(sizes[ident].mean()), "size_all": float(sizes.mean()),
            "q_hat": float(flipper.conformal_quantile_),
            "top1": float(np.mean(flipper.predict(X[tst]) == y[tst])),
            "coverage_per_family": _per_family(covered, fam[tst]),
            "set_size_per_family": _per_family(sizes, fam[tst])}


@shared_cache(maxsize=8)
def _uninformed_flipper(scale, seed):
    """A flipper whose training flips are hidden by a uniform random rotation (no signal)."""
    from ..shape import OctahedralFlipper

    cfg = _SCALES[scale]
    X = _trained(scale, seed)["train_X"]
    # Nothing can be learned from these labels, so a fifth of the budget suffices.
    return OctahedralFlipper(noise_deg=180.0, backbone=cfg["backbone"], n_points=cfg["n_points"],
                             max_epochs=max(1, cfg["epochs"] // 5),
                             batch_size=cfg["batch_size"], lr=1e-3, random_state=seed).fit(X)


def _coverage(figs):
    covered = sum(f["covered"] for f in figs)
    n = sum(f["n"] for f in figs)
    low, high = proportion_interval(covered, n)
    return {"coverage": covered / n, "clopper_pearson_95": [low, high], "n": n,
            "reaches_1_minus_alpha": bool(high >= 1 - _ALPHA)}


@shared_cache(maxsize=16)
def _conformal(scale, s, informed):
    flipper = _trained(scale, s)["flipper"] if informed else _uninformed_flipper(scale, s)
    return _conformal_figures(flipper, _SCALES[scale], s)


@register_claim(
    SLUG, "conformal-coverage",
    "Split-conformal prediction sets of the flipper cover the true flip with probability at "
    "least 90% (alpha = 0.1) on exchangeable held-out shapes, and stay informative (far "
    "fewer than 24 flips) on shapes whose flip is identifiable.",
    paper_statement="The flipper's split-conformal prediction sets (cumulative sorted "
                    "probability up to the true flip, quantile at 0.9) cover the true flip with "
                    "probability >= 1 - alpha and return few candidate orientations "
                    "(Sec. 4; calibrate_conformal_flipper in the official inference_helpers.py).",
    check="per seed, the mean set size on identifiable families (chair, mug); over "
          "sequential paired seeds its upper 95% bound < 12 of 24 flips (threshold ours). "
          "The coverage (pooled Clopper-Pearson interval reaching 0.9) is reported: split "
          "conformal guarantees it for any model, so it cannot tell flippers apart",
    control="flip signal removed: the same set size for a flipper trained on flips hidden by a "
            "uniformly random rotation (noise_deg=180)",
    effect_of_interest=_SET_EOI)
def _claim_conformal(scale, seed, out_dir):
    cfg = _SCALES[scale]

    def size(informed):
        def run(s):
            models = _trained(scale, s)
            return ArmRun(_conformal(scale, s, informed)["size_identifiable"],
                          parameters=_n_parameters(models["flipper"]),
                          train_steps=cfg["epochs"] if informed else max(1, cfg["epochs"] // 5),
                          train_examples=models["n_train_shapes"],
                          extra={"unit_of_train_steps": "epochs"})
        return run

    cmp = run_comparison({"flipper": size(True), "control_flipper": size(False)},
                         method="flipper", baseline=None, control_method="control_flipper",
                         seed=seed, looks=cfg["looks"], effect_of_interest=_SET_EOI,
                         alternative="less", margin=_INFORMATIVE_SET_MAX,
                         metric="mean conformal set size on identifiable shapes (of 24)")
    seeds = cmp.seeds
    figs = [_conformal(scale, s, True) for s in seeds]
    ctrl_figs = [_conformal(scale, s, False) for s in seeds]
    coverage, ctrl_coverage = _coverage(figs), _coverage(ctrl_figs)
    observed = {"coverage": coverage, "control_coverage": ctrl_coverage,
                "mean_set_size_all_per_seed": [f["size_all"] for f in figs],
                "q_hat_per_seed": [f["q_hat"] for f in figs],
                "top1_flip_accuracy_per_seed": [f["top1"] for f in figs],
                "coverage_per_family_first_seed": figs[0]["coverage_per_family"],
                "set_size_per_family_first_seed": figs[0]["set_size_per_family"]}

    fig, axes = new_figure(1, 2, figsize=(8, 3))
    fams = sorted(figs[0]["coverage_per_family"])
    axes[0].bar(fams, [figs[0]["coverage_per_family"][f] for f in fams], color="C0")
    axes[0].axhline(1 - _ALPHA, color="k", lw=0.8)
    axes[0].set_ylim(0, 1.05)
    axes[0].set_ylabel("coverage (first seed)")
    axes[0].tick_params(axis="x", rotation=30)
    x = np.arange(len(fams))
    axes[1].bar(x - 0.2, [figs[0]["set_size_per_family"][f] for f in fams], 0.4, color="C1",
                label="flipper")
    axes[1].bar(x + 0.2, [ctrl_figs[0]["set_size_per_family"][f] for f in fams], 0.4,
                color="C7", label="control (no flip signal)")
    axes[1].axhline(_INFORMATIVE_SET_MAX, color="k", lw=0.8, ls="--")
    axes[1].set_xticks(x, fams, rotation=30)
    axes[1].set_ylabel("mean set size (of 24)")
    axes[1].legend(fontsize=7)
    artifact = save_figure(fig, out_dir, "conformal_coverage")
    return cmp.claim_result(
        observed=observed,
        artifacts=[artifact],
        notes=(f"{cfg['n_conformal']} calibration and {cfg['n_conformal']} test shapes per "
               "family and seed, drawn the same way (canonical, perturbed by <= 10 degrees, "
               "flipped uniformly), so they are exchangeable; coverage alone holds for any "
               "model, hence the set-size condition. Symmetric shapes get larger sets because "
               "their equivalent flips share probability. The control flipper gets a fifth of "
               "the epochs: its labels carry no information to learn. " + _BUDGET_NOTE),
    )


@shared_cache(maxsize=8)
def _forward_corrected(scale, seed):
    from sklearn.frozen import FrozenEstimator

    from ..shape import OctahedralFlipper, TwoStageOrienter

    cfg = _SCALES[scale]
    models = _trained(scale, seed)
    flipper = OctahedralFlipper(noise_deg=10.0, forward_correction=True, backbone=cfg["backbone"],
                                n_points=cfg["n_points"], max_epochs=cfg["epochs"],
                                batch_size=cfg["batch_size"], lr=1e-3, random_state=seed
                                ).fit(models["train_X"])
    return TwoStageOrienter(FrozenEstimator(models["quotient"]), FrozenEstimator(flipper)).fit(
        models["train_X"])


@register_claim(
    SLUG, "flipper-options",
    "The official code's flipper options, measured: the confusion-matrix forward correction "
    "and the top-4 evaluation, against the plain cross-entropy flipper with argmax.",
    paper_statement="The official trainer offers a forward correction of the flipper's "
                    "cross-entropy through per-shape flip confusion matrices "
                    "(FlipperTrainerModel, confusion_matrices=True) and the benchmark a top-4 "
                    "evaluation; the paper's tables use the plain flipper.",
    check="nothing asserted: up-axis accuracy (< 10 degrees, modulo G_S) of the two-stage "
          "pipeline with the plain and the forward-corrected flipper, argmax and top-4, over "
          "paired seeds",
    reported=True)
def _claim_flipper_options(scale, seed, out_dir):
    seeds = _seeds(scale, seed)
    arms = {"plain_top1": [], "plain_top4": [], "forward_top1": [], "forward_top4": []}
    for s in seeds:
        models = dict(_trained(scale, s))
        models["forward"] = _forward_corrected(scale, s)
        for name, key in (("plain", "two_stage"), ("forward", "forward")):
            arms[f"{name}_top1"].append(float(np.mean(_up_errors(models, key)
                                                      < _THRESHOLD_DEG)))
            arms[f"{name}_top4"].append(float(np.mean(_up_errors(models, key, top_k=4)
                                                      < _THRESHOLD_DEG)))
    forward_gain = paired_difference(arms["forward_top1"], arms["plain_top1"])
    fig, ax = new_figure(figsize=(5, 3))
    names = list(arms)
    ax.bar(names, [np.mean(arms[n]) for n in names], yerr=[np.std(arms[n]) for n in names],
           color=["C0", "C9", "C3", "C1"])
    ax.set_ylabel("up-axis accuracy (< 10 deg)")
    ax.set_ylim(0, 1.05)
    ax.tick_params(axis="x", rotation=20)
    artifact = save_figure(fig, out_dir, "flipper_options")
    return ClaimResult(
        observed={"n_seeds": len(seeds), **{f"up_accuracy_{n}_per_seed": v
                                            for n, v in arms.items()},
                  "forward_minus_plain_top1": forward_gain.to_dict()},
        expected={"reported": "accuracies of the four variants; no direction asserted"},
        passed=None, artifacts=[artifact],
        notes=("Both flippers share stage 1, the training shapes, epochs and batch size. The "
               "confusion matrices are exp(-Chamfer/0.01), row-normalised, computed from each "
               "training shape's distances to its 24 cube rotations; the official files hold "
               "precomputed matrices whose distance and scale are not published."),
    )
