"""Claims of Zhang & Zhang, "Tight and Fast Bounds for Multi-Label Learning" (ICML 2025).

The paper is theoretical (no experiments, no code). The asserted claims test
properties of the bounds themselves, as computed by our calculator
:func:`skpaper.multilabel.generalization_bounds` on models fitted to
synthetic linear multi-label data (a known distribution, so the risk can be
estimated on held-out draws):

- ``bound-validity-held-out``: the smooth bound B3 stays above the held-out
  surrogate risk (control: the bound without its complexity term);
- ``label-count-dependence``: the smooth bound's growth in the number of
  labels c is at most logarithmic, where the Lipschitz bound B1 grows
  polynomially on the same fits (its growth is the control);
- ``non-vacuous-regime``: at a sample size fixed on a calibration setting, the
  smooth local bound B4 is below the risk of the best constant predictor
  (control: B1 at the same n).

The bound forms are reconstructed (the theorem statements and constants could
not be obtained), so these claims test our reading of the paper's bounds. The
formula-shape checks and the observed test-train gap (which no bound says
must grow with c for one fitted model) are reported. The set-up (d = 50,
unit-norm inputs, ``alpha = 1e-3``, per-label constraint) is the one of the
specification.
"""

import numpy as np

from ._comparison import ArmRun, EffectOfInterest, run_comparison
from ._plotting import new_figure, save_figure
from ._registry import ClaimResult, register_claim, register_paper, shared_cache
from ._stats import claim_seeds, paired_difference

SLUG = "multilabel-smooth-bounds"

register_paper(SLUG, "Tight and Fast Bounds for Multi-Label Learning",
               module="skpaper.multilabel")

_N_FEATURES = 50
_ALPHA = 1e-3

_SHAPE_OBJECTIVES = ("ranking", "hamming")

_NOISE_SWEEP = {
    # (n_train, n_test, n_labels, noise levels, seeds)
    "smoke": (200, 1000, 8, (0.2, 0.0), 1),
    "quick": (500, 5000, 16, (0.2, 0.1, 0.05, 0.02, 0.0), 1),
    "full": (500, 20000, 16, (0.2, 0.1, 0.05, 0.02, 0.0), 3),
}


_GAP_SWEEP = {
    # (n_train, n_test, label counts, seeds)
    "smoke": (200, 1000, (4, 16), 2),
    "quick": (500, 3000, (4, 16, 64), 2),
    "full": (500, 20000, (4, 16, 64, 256), 10),
}
#: Largest growth of the mean test-train gap from the smallest to the largest c
#: still called flat (ours; the gaps are about 0.03-0.06 at n = 500).
_GAP_MARGIN = 0.02

_SAMPLE_SIZES = {"smoke": (200, 800), "quick": (250, 1000, 4000, 16000),
                 "full": (250, 1000, 4000, 16000, 64000)}


def _fit_point(config):
    """Fit one model and evaluate its bounds; ``config`` is a plain dict (picklable)."""
    return dict(_fit_point_cached(tuple(sorted(config.items()))))


@shared_cache(maxsize=512)
def _fit_point_cached(items):
    config = dict(items)
    from ..datasets import make_linear_multilabel
    from ..multilabel import SmoothMultiLabelClassifier, generalization_bounds, metrics

    n_train, n_test = config["n_train"], config["n_test"]
    X, Y = make_linear_multilabel(
        n_train + n_test, _N_FEATURES, config["n_labels"], noise=config["noise"],
        random_state=config["seed"],
    )
    X_train, Y_train, X_test, Y_test = X[:n_train], Y[:n_train], X[n_train:], Y[n_train:]
    # positive_rate=0.5 puts every threshold at 0, so the class f(x) = W^T x of
    # the paper (no intercept) contains the target and R = max ||x|| = 1.
    clf = SmoothMultiLabelClassifier(
        loss=config.get("loss", "logistic"), alpha=_ALPHA, objective=config["objective"],
        fit_intercept=False,
        random_state=config["seed"],
    ).fit(X_train, Y_train)
    table = generalization_bounds(clf, X_train, Y_train, X_test=X_test, Y_test=Y_test,
                                  norm_bound=config.get("norm_bound"))
    theorem = generalization_bounds(clf, X_train, Y_train, constants="theorem",
                                    norm_bound=config.get("norm_bound"))
    S_train, S_test = clf.decision_function(X_train), clf.decision_function(X_test)
    P_train, P_test = clf.predict(X_train), clf.predict(X_test)
    zero_one = {
        "hamming": lambda T, P, S: metrics.hamming_loss(T, P),
        "subset": lambda T, P, S: 1.0 - metrics.subset_accuracy(T, P),
        "ranking": lambda T, P, S: metrics.ranking_loss(T, S),
    }[config["objective"]]
    rows = {str(b): i for i, b in enumerate(table["bound"])}
    return tuple({
        **config,
        "trivial_risk": float(table["trivial_risk"][0]),
        **{f"{b}_theorem_value": float(theorem["value"][i]) for b, i in rows.items()},
        "Lambda": float(table["Lambda"][0]),
        "empirical_risk": float(table["empirical_risk"][0]),
        "surrogate_gap": float(table["observed_gap"][0]),
        "metric_gap": float(zero_one(Y_test, P_test, S_test)
                            - zero_one(Y_train, P_train, S_train)),
        **{f"{b}_value": float(table["value"][i]) for b, i in rows.items()},
        **{f"{b}_excess": float(table["excess"][i]) for b, i in rows.items()},
        **{f"{b}_rate": float(table["complexity_term"][i]) for b, i in rows.items()},
    }.items())


def _mean_over_seeds(points, key_fields):
    groups = {}
    for p in points:
        groups.setdefault(tuple(p[f] for f in key_fields), []).append(p)
    merged = []
    for key, group in groups.items():
        avg = {f: v for f, v in zip(key_fields, key)}
        for name, value in group[0].items():
            if name not in avg and isinstance(value, float):
                avg[name] = float(np.mean([g[name] for g in group]))
        merged.append(avg)
    return merged


def _series(points, objective, sort_key, field):
    chosen = sorted((p for p in points if p["objective"] == objective), key=lambda p: p[sort_key])
    return [round(p[field], 4) for p in chosen]


@register_claim(
    SLUG, "calculator-label-count-shapes",
    "Calculator check: as the number of labels c grows from 4 to 256 (n = 500), our "
    "Lipschitz bound B1 grows like sqrt(c) or faster while the smooth bound B3 grows only "
    "through its logarithms (ranking and Hamming surrogates).",
    paper_statement=(
        "Abstract: for smooth base losses the bounds have no dependence on c up to "
        "logarithms, where Lipschitz vector-contraction bounds grow with c; the theorem "
        "statements and constants could not be obtained, so the bound forms are ours."
    ),
    check=(
        "reported, not asserted: the shapes follow from the calculator's own formulas "
        "(B1 carries c, B3 carries c only inside log(nc)); shown with 'rate' constants "
        "(logs dropped) and with the log factors kept ('theorem' constants)"
    ),
    reported=True,
)
def _claim_label_count(scale, seed, out_dir):
    from ..utils import parallel_map

    n_train, n_test, label_counts, _ = _GAP_SWEEP[scale]
    # the first seed of the gap claim: its ranking fits are shared (cached)
    first = claim_seeds(seed, 1)[0]
    configs = [
        {"objective": obj, "n_labels": c, "noise": 0.0, "n_train": n_train, "n_test": n_test,
         "seed": first, "loss": "logistic"}
        for obj in _SHAPE_OBJECTIVES for c in label_counts
    ]
    points = _mean_over_seeds(parallel_map(_fit_point, configs), ("objective", "n_labels"))

    observed = {}
    for obj in _SHAPE_OBJECTIVES:
        b1 = _series(points, obj, "n_labels", "B1_excess")
        b3 = _series(points, obj, "n_labels", "B3_rate")
        gap = _series(points, obj, "n_labels", "surrogate_gap")
        observed[obj] = {
            "B1_excess": b1,
            "B2_excess": _series(points, obj, "n_labels", "B2_excess"),
            "B1_decomposed_excess": _series(points, obj, "n_labels", "B1_decomposed_excess"),
            "B3_rate_term": b3,
            "B3_theorem_value": _series(points, obj, "n_labels", "B3_theorem_value"),
            "trivial_risk": _series(points, obj, "n_labels", "trivial_risk"),
            "B4_excess": _series(points, obj, "n_labels", "B4_excess"),
            "surrogate_gap": gap,
            "zero_one_gap": _series(points, obj, "n_labels", "metric_gap"),
            "Lambda": _series(points, obj, "n_labels", "Lambda"),
            "empirical_risk": _series(points, obj, "n_labels", "empirical_risk"),
            "B1_ratio": round(b1[-1] / b1[0], 3),
            "B3_rate_change": round(b3[-1] / b3[0] - 1.0, 3),
            "gap_max_over_min": round(max(gap) / max(min(gap), 1e-12), 3),
        }
        observed[obj]["B3_theorem_ratio"] = round(
            observed[obj]["B3_theorem_value"][-1] / observed[obj]["B3_theorem_value"][0], 3)
    headline = {f"{obj}_{key}": observed[obj][key] for obj in _SHAPE_OBJECTIVES
                for key in ("B1_ratio", "B3_rate_change", "B3_theorem_ratio")}
    observed = {**headline, "c": list(label_counts), **observed}

    fig, axes = new_figure(1, len(_SHAPE_OBJECTIVES), figsize=(9, 3.6), sharey=True)
    for ax, obj in zip(axes, _SHAPE_OBJECTIVES):
        o = observed[obj]
        for key, label, style in (
            ("B1_excess", "B1 Lipschitz (l2 contraction)", "o-"),
            ("B2_excess", "B2 Lipschitz (l_inf contraction)", "s-"),
            ("B3_rate_term", "B3 smooth: rate term", "^-"),
            ("B4_excess", "B4 local: excess", "v-"),
            ("surrogate_gap", "observed test - train gap", "k*--"),
        ):
            ax.plot(label_counts, o[key], style, label=label)
        if obj == "hamming":
            ax.plot(label_counts, o["B1_decomposed_excess"], "x:",
                    label="B1 decomposed over labels")
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel("number of labels c")
        ax.set_title(f"{obj} loss" + (" (decomposes: nuance)" if obj == "hamming" else ""))
    axes[0].set_ylabel("bound term / gap (rate constants)")
    axes[-1].legend(fontsize=7, loc="upper left")
    artifact = save_figure(fig, out_dir, "bounds_vs_label_count")

    notes = (
        "Bounds use constants='rate' (absolute constants 1, logs dropped) with Lambda read "
        "from each fitted model, so the rate term moves with Lambda and the empirical risk; "
        "B1 for the subset and ranking losses under the per-label constraint grows like c, "
        "faster than sqrt(c). The Hamming panel is the nuance of the specification: "
        "decomposing over labels already gives a c-free Lipschitz bound, so it is not part "
        "of the pass criterion. The theorem statements of the paper could not be obtained; "
        "the bound forms are reconstructed (see generalization_bounds). The subset "
        "surrogate is left out here for run time (its fit at c = 256 takes minutes)."
    )
    if scale == "smoke":
        notes += " Smoke runs c in {4, 16} at n = 200 only; the criteria need c up to 256."
    return ClaimResult(
        observed=observed,
        expected={"B1_ratio": "about sqrt(c) or c growth (formula)",
                  "B3": "growth through log(n c) only (formula)"},
        passed=None,
        artifacts=[artifact],
        notes=notes,
    )


@register_claim(
    SLUG, "optimistic-rate-under-low-noise",
    "Calculator check: as the label noise goes to zero, our smooth (B3) and local (B4) "
    "bounds shrink with the empirical risk while the Lipschitz bound (B1) does not, for a "
    "fixed hypothesis class (ranking and Hamming losses).",
    paper_statement=(
        "Abstract: local Rademacher versions give faster rates in n; smooth losses give "
        "optimistic rates whose leading term scales with sqrt(empirical risk)."
    ),
    check=(
        "reported, not asserted: the sqrt(R_hat) factor is in the calculator's own B3 and "
        "B4 formulas; the observed gaps are shown next to them"
    ),
    reported=True,
)
def _claim_low_noise(scale, seed, out_dir):
    from ..utils import parallel_map

    n_train, n_test, n_labels, noises, n_seeds = _NOISE_SWEEP[scale]
    objectives = ("ranking", "hamming")
    base = [
        {"objective": obj, "n_labels": n_labels, "noise": float(noise), "n_train": n_train,
         "n_test": n_test, "seed": seed + s}
        for obj in objectives for noise in noises for s in range(n_seeds)
    ]
    free = parallel_map(_fit_point, base)
    # A class fixed in advance: the smallest ball holding every fitted model of
    # the sweep, so that only the empirical risk changes along the sweep.
    radius = {obj: max(p["Lambda"] for p in free if p["objective"] == obj) for obj in objectives}
    fixed = parallel_map(_fit_point, [{**cfg, "norm_bound": radius[cfg["objective"]]}
                                      for cfg in base])
    free = _mean_over_seeds(free, ("objective", "noise"))
    fixed = _mean_over_seeds(fixed, ("objective", "noise"))

    def ratio(points, obj, field):
        series = _series(points, obj, "noise", field)  # increasing noise
        return round(series[0] / series[-1], 3)

    observed, checks = {}, {}
    for obj in objectives:
        o = {
            "class_radius": round(radius[obj], 4),
            "empirical_risk": _series(fixed, obj, "noise", "empirical_risk"),
            "B1_value": _series(fixed, obj, "noise", "B1_value"),
            "B3_value": _series(fixed, obj, "noise", "B3_value"),
            "B4_value": _series(fixed, obj, "noise", "B4_value"),
            "surrogate_gap": _series(fixed, obj, "noise", "surrogate_gap"),
            "B1_ratio_clean_over_noisy": ratio(fixed, obj, "B1_value"),
            "B3_ratio_clean_over_noisy": ratio(fixed, obj, "B3_value"),
            "B4_ratio_clean_over_noisy": ratio(fixed, obj, "B4_value"),
            "per_model_Lambda": _series(free, obj, "noise", "Lambda"),
            "per_model_B1_ratio": ratio(free, obj, "B1_value"),
            "per_model_B3_ratio": ratio(free, obj, "B3_value"),
            "per_model_B4_ratio": ratio(free, obj, "B4_value"),
        }
        observed[obj] = o
        checks[obj] = bool(o["B3_ratio_clean_over_noisy"] <= 0.9
                           and o["B4_ratio_clean_over_noisy"] <= 0.9
                           and o["B1_ratio_clean_over_noisy"] >= 0.9)  # shapes, not asserted
    headline = {f"{obj}_{bound}_ratio": observed[obj][f"{bound}_ratio_clean_over_noisy"]
                for obj in objectives for bound in ("B3", "B1")}
    observed = {**headline, "noise": sorted(noises), **observed,
                "shapes_as_documented": checks}

    fig, axes = new_figure(1, 2, figsize=(9, 3.6))
    for ax, obj in zip(axes, objectives):
        o = observed[obj]
        x = observed["noise"]
        for key, label, style in (("B1_value", "B1 Lipschitz", "o-"),
                                  ("B3_value", "B3 smooth", "^-"),
                                  ("B4_value", "B4 local", "v-"),
                                  ("empirical_risk", "empirical risk", "k*--")):
            ax.plot(x, o[key], style, label=label)
        ax.set_yscale("log")
        ax.set_xlabel("label noise (flip probability)")
        ax.set_title(f"{obj} loss, fixed class radius {o['class_radius']:.1f}")
    axes[0].set_ylabel("bound on the surrogate risk (rate constants)")
    axes[-1].legend(fontsize=7)
    artifact = save_figure(fig, out_dir, "bounds_vs_label_noise")

    notes = (
        "Bounds are evaluated for one class per objective (the smallest ball holding every "
        "fitted model of the sweep) so that only the empirical risk moves; the per_model_* "
        "entries read Lambda from each model instead, where Lambda grows as the noise falls "
        "and partly offsets the shrinkage. At n = 500 the 1/n terms (gamma Lambda^2 R^2 / n "
        "and M ln(1/delta) / n, with M = l(-B) large) dominate B3 and B4 once the empirical "
        "risk is small, so the shrinkage is moderate rather than proportional. The subset "
        "loss is left out: with noisy labels its minimiser collapses to W = 0."
    )
    if scale == "smoke":
        notes += " Smoke uses n = 200, c = 8 and two noise levels."
    return ClaimResult(
        observed=observed,
        expected={"B3_ratio": "<= 0.9 (formula)", "B4_ratio": "<= 0.9 (formula)",
                  "B1_ratio": ">= 0.9 (formula)", "objectives": list(objectives)},
        passed=None,
        artifacts=[artifact],
        notes=notes,
    )


@register_claim(
    SLUG, "gap-flat-in-label-count",
    "With the smooth logistic base loss and with the hinge loss, the observed test-train "
    "gap of the ranking surrogate as the number of labels c grows (n = 500): shown, not "
    "asserted.",
    paper_statement=(
        "Abstract: for smooth base losses the generalization bounds have no dependence on "
        "the number of labels c up to logarithms, where Lipschitz bounds grow with c. The "
        "bounds are worst cases over a class: no bound says the observed gap of one fitted "
        "model must grow with c, so this gap cannot test the paper."
    ),
    check=(
        "reported: paired over seeds (the data of seed k shared by both losses), "
        "gap(c_max) - gap(c_min) with one-sided 95% upper t bounds, for the logistic and "
        "the hinge base loss; gap = test minus training ranking surrogate risk"
    ),
    reported=True,
)
def _claim_gap(scale, seed, out_dir):
    from ..utils import parallel_map

    n_train, n_test, label_counts, n_seeds = _GAP_SWEEP[scale]
    seeds = claim_seeds(seed, n_seeds)
    losses = ("logistic", "hinge")
    configs = [{"objective": "ranking", "n_labels": c, "noise": 0.0, "n_train": n_train,
                "n_test": n_test, "seed": s, "loss": loss}
               for loss in losses for c in label_counts for s in seeds]
    points = parallel_map(_fit_point, configs)

    def per_seed(loss, c, field="surrogate_gap"):
        return [next(p[field] for p in points if p["loss"] == loss and p["n_labels"] == c
                     and p["seed"] == s) for s in seeds]

    growth = {loss: paired_difference(per_seed(loss, label_counts[-1]),
                                      per_seed(loss, label_counts[0]),
                                      alternative="less", margin=_GAP_MARGIN)
              for loss in losses}
    gaps = {loss: [float(np.mean(per_seed(loss, c))) for c in label_counts] for loss in losses}
    risks = {loss: [float(np.mean(per_seed(loss, c, "empirical_risk"))) for c in label_counts]
             for loss in losses}
    lambdas = {loss: [float(np.mean(per_seed(loss, c, "Lambda"))) for c in label_counts]
               for loss in losses}
    b1 = {loss: [float(np.mean(per_seed(loss, c, "B1_excess"))) for c in label_counts]
          for loss in losses}

    fig, axes = new_figure(1, 2, figsize=(9, 3.6))
    for loss, style in zip(losses, ("o-", "s--")):
        axes[0].plot(label_counts, gaps[loss], style, label=f"{loss} (observed gap)")
        for s in seeds:
            axes[0].plot(label_counts, [per_seed(loss, c)[seeds.index(s)] for c in label_counts],
                         style[0], alpha=0.3, color=axes[0].lines[-1].get_color())
        axes[1].plot(label_counts, b1[loss], style, label=f"{loss}: B1 excess (rate)")
    for ax in axes:
        ax.set_xscale("log", base=2)
        ax.set_xlabel("number of labels c")
        ax.legend(fontsize=7)
    axes[0].set_ylabel("test - training ranking surrogate risk")
    axes[1].set_yscale("log")
    axes[1].set_ylabel("Lipschitz bound's excess term")
    fig.suptitle(f"ranking surrogate, n = {n_train}, d = {_N_FEATURES}, {n_seeds} seeds")
    artifact = save_figure(fig, out_dir, "gap_vs_label_count")

    arm = {"parameters": None, "train_steps": None, "train_examples": n_train}
    return ClaimResult(
        observed={"c": list(label_counts), "mean_gap": gaps, "empirical_risk": risks,
                  "Lambda": lambdas, "B1_excess_rate": b1, "seeds": seeds,
                  "logistic_growth": growth["logistic"].to_dict(),
                  "hinge_growth": growth["hinge"].to_dict()},
        expected={"gap_growth": "reported; no bound predicts the gap of one fitted model"},
        passed=None,
        arms={f"{loss} ({c} labels)": {**arm, "parameters": _N_FEATURES * c}
              for loss in losses for c in label_counts},
        artifacts=[artifact],
        notes=(
            "Each seed draws one data set per c; both base losses are fitted to the same "
            "data with the same alpha and solver. A Lipschitz bound growing with c says the "
            "worst case over the class may grow, not that the observed gap of one fitted "
            "model must; the hinge gap does not grow either, so the gap cannot tell the "
            "smooth loss from the Lipschitz one (label-count-dependence tests the bounds "
            "instead). The subset surrogate is left out for run time."
            + (" Smoke: c in {4, 16} at n = 200 only." if scale == "smoke" else "")
        ),
    )


@register_claim(
    SLUG, "informative-sample-size",
    "The sample size at which the smooth bound B3 on the ranking surrogate falls below the "
    "risk of the best constant predictor (stops being vacuous), with 'rate' and 'theorem' "
    "constants.",
    paper_statement=(
        "The paper's bounds are asymptotic in n with unspecified absolute constants; it "
        "reports no sample size at which they are informative."
    ),
    check=(
        "reported, not asserted: B3 (rate and theorem constants) of models fitted at "
        "growing n (c = 16, label noise 0.1) against the training risk of the best constant "
        "predictor, as marked by the calculator's 'vacuous' column"
    ),
    reported=True,
)
def _claim_sample_size(scale, seed, out_dir):
    from ..utils import parallel_map

    sizes = _SAMPLE_SIZES[scale]
    first = claim_seeds(seed, 1)[0]
    configs = [{"objective": "ranking", "n_labels": 16, "noise": 0.1, "n_train": n,
                "n_test": 2000, "seed": first, "loss": "logistic"} for n in sizes]
    points = parallel_map(_fit_point, configs)
    rate = [p["B3_value"] for p in points]
    theorem = [p["B3_theorem_value"] for p in points]
    trivial = [p["trivial_risk"] for p in points]
    test_risk = [p["empirical_risk"] + p["surrogate_gap"] for p in points]
    informative = [n for n, b, t in zip(sizes, rate, trivial) if b < t]

    fig, ax = new_figure(figsize=(6, 4))
    ax.plot(sizes, rate, "^-", label="B3, rate constants")
    ax.plot(sizes, theorem, "v-", label="B3, theorem constants (logs kept)")
    ax.plot(sizes, trivial, "k--", label="best constant predictor (vacuous above)")
    ax.plot(sizes, test_risk, "k*:", label="observed test risk")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("training sample size n")
    ax.set_ylabel("ranking surrogate risk (logistic)")
    ax.set_title("c = 16, d = 50, label noise 0.1")
    ax.legend(fontsize=7)
    artifact = save_figure(fig, out_dir, "bound_vs_sample_size")
    return ClaimResult(
        observed={"n": list(sizes), "B3_rate_value": rate, "B3_theorem_value": theorem,
                  "trivial_risk": trivial, "test_risk": test_risk,
                  "Lambda": [p["Lambda"] for p in points],
                  "empirical_risk": [p["empirical_risk"] for p in points],
                  "smallest_informative_n_rate": informative[0] if informative else None,
                  "informative_with_theorem_constants": [
                      n for n, b, t in zip(sizes, theorem, trivial) if b < t]},
        expected={"B3": "below trivial_risk from some n on (reported)"},
        passed=None,
        artifacts=[artifact],
        notes=("Lambda is read from each fitted model (alpha fixed), and the empirical risk "
               "moves with n, so the bound does not fall exactly like 1/sqrt(n). The theorem "
               "constants (K = 1e5 and the log factors) are reconstructed, not the paper's."),
    )


# ---------------------------------------------------------------- asserted: the bounds

_VALIDITY = {
    # (n_train, n_test, n_labels, label noise, looks in seeds)
    "smoke": (300, 2000, 8, 0.1, (2,)),
    "quick": (1000, 20000, 16, 0.1, (4, 8, 32)),
    "full": (1000, 50000, 16, 0.1, (8, 16, 32)),
}
# Looks from a calibration setting no claim uses (n = 800, c = 12, six seeds of seed 12345,
# key 991): the slack's SD was 0.020, so telling a mean slack of 0 from the 0.01 effect of
# interest takes 27 seeds (80% power; 37 for 90%); the last look was 8 before this figure
# and is 32 now (the run stops at the first look that decides).
_DELTA = 0.05
_VALIDITY_EOI = EffectOfInterest(
    0.01, "ours",
    "a slack of one point of the logistic ranking surrogate risk (the trivial risk is "
    "ln 2 = 0.693): a bound this close to the risk still holds; smaller would be a tie")


def _ranking_point(s, n_train, n_test, c, noise):
    """The fit (cached) of the logistic ranking surrogate on seed ``s``'s data."""
    return _fit_point({"objective": "ranking", "n_labels": c, "noise": noise,
                       "n_train": n_train, "n_test": n_test, "seed": s, "loss": "logistic"})


def _validity_point(scale, s):
    return _ranking_point(s, *_VALIDITY[scale][:4])


@register_claim(
    SLUG, "bound-validity-held-out",
    "On held-out draws from the data distribution, the smooth bound B3 of a fitted model "
    "stays above its test surrogate risk (ranking surrogate, logistic loss, c = 16, "
    "n = 1000, label noise 0.1).",
    paper_statement=(
        "Main theorems: with probability 1 - delta over the sample, the risk of every "
        "hypothesis of the class is below the empirical risk plus the complexity term (for "
        "smooth losses an optimistic term in sqrt(empirical risk) and 1/n); constants could "
        "not be obtained, so ours are 1 ('rate' constants)."
    ),
    check=(
        "per seed (a fresh training sample and 20,000 held-out draws, looks 4, 8, 32 at quick "
        "scale): slack = B3 - held-out surrogate risk; the one-sided lower t bound of the "
        "mean slack is > 0 (contradicted when its upper bound is below 0.01); the fraction "
        "of seeds with slack >= 0 is reported against 1 - delta = 0.95"
    ),
    control="the complexity term removed (the empirical risk as the 'bound'): the same "
            "slack must be decisively below the effect of interest",
    effect_of_interest=_VALIDITY_EOI,
)
def _claim_validity(scale, seed, out_dir):
    n_train, n_test, c, noise, looks = _VALIDITY[scale]

    def test_risk(p):
        return p["empirical_risk"] + p["surrogate_gap"]

    arms = {
        "B3 slack": lambda s: ArmRun(
            _validity_point(scale, s)["B3_value"] - test_risk(_validity_point(scale, s)),
            parameters=_N_FEATURES * c, train_examples=n_train),
        "B3 slack, theorem constants": lambda s: (
            _validity_point(scale, s)["B3_theorem_value"] - test_risk(_validity_point(scale, s))),
        "empirical risk slack": lambda s: (
            _validity_point(scale, s)["empirical_risk"] - test_risk(_validity_point(scale, s))),
    }
    cmp = run_comparison(arms, method="B3 slack", baseline=None,
                         control_method="empirical risk slack", seed=seed, looks=looks,
                         key=(c, int(noise * 100)), effect_of_interest=_VALIDITY_EOI,
                         metric="bound - held-out surrogate risk")
    points = [_validity_point(scale, s) for s in cmp.seeds]
    slack = np.asarray(cmp.values["B3 slack"])

    fig, ax = new_figure(figsize=(5.5, 3.6))
    x = np.arange(len(points))
    ax.plot(x, [p["B3_value"] for p in points], "^-", label="B3 (rate constants)")
    ax.plot(x, [test_risk(p) for p in points], "k*--", label="held-out surrogate risk")
    ax.plot(x, [p["empirical_risk"] for p in points], "o:", label="empirical risk")
    ax.plot(x, [p["trivial_risk"] for p in points], "k-", lw=0.6, label="trivial risk")
    ax.set_xlabel("seed (fresh sample)")
    ax.set_ylabel("ranking surrogate risk (logistic)")
    ax.set_title(f"c = {c}, n = {n_train}, {n_test} held-out draws")
    ax.legend(fontsize=7)
    artifact = save_figure(fig, out_dir, "bound_validity")
    return cmp.claim_result(
        observed={"fraction_valid": float(np.mean(slack >= 0)), "one_minus_delta": 1 - _DELTA,
                  "B3": [p["B3_value"] for p in points],
                  "held_out_risk": [test_risk(p) for p in points],
                  "empirical_risk": [p["empirical_risk"] for p in points]},
        artifacts=[artifact],
        notes="B3 uses constants='rate' (absolute constants 1, logs dropped) with Lambda "
              "read from the fitted model; the held-out risk is the surrogate risk on fresh "
              "draws of the same distribution (its Monte Carlo error is small at 20,000 "
              "draws). With theorem constants the bound is orders of magnitude larger and "
              "holds trivially (reported as an arm).")


_DEPENDENCE = {
    # (n_train, n_test, (c_min, c_max), looks in seeds)
    "smoke": (200, 1000, (4, 16), (2,)),
    "quick": (500, 3000, (4, 64), (3, 6)),
    "full": (500, 20000, (4, 256), (5, 10, 20)),
}
# Looks checked on a calibration setting no claim uses (n = 400, c from 6 to 48, six seeds
# of seed 12345, key 991): the exponent was 0.114 with SD 4e-5 over seeds (the bound's
# value barely moves with the noiseless draw), so two seeds decide; 3 and 6 are kept.
_EXPONENT_MARGIN = 0.25
_DEPENDENCE_EOI = EffectOfInterest(
    _EXPONENT_MARGIN, "ours",
    "an exponent of c of 0.25, half of the sqrt(c) growth of a vector-contraction "
    "Lipschitz bound: a bound growing like log(nc) has exponent about 0.1 over this "
    "range; equivalence margin")


def _exponent(p_min, p_max, field, c_pair):
    return float(np.log(p_max[field] / p_min[field]) / np.log(c_pair[1] / c_pair[0]))


@register_claim(
    SLUG, "label-count-dependence",
    "On models fitted with c = 4 and c = 64 labels (n = 500), the smooth bound B3 grows in "
    "c at most logarithmically (exponent of c below 0.25), where the Lipschitz bound B1 on "
    "the same fits grows polynomially.",
    paper_statement=(
        "Abstract: for smooth base losses the bounds have no dependence on the number of "
        "labels c up to logarithms, where Lipschitz vector-contraction bounds grow with c."
    ),
    check=(
        "per seed (the data of seed k shared by both bounds; looks 3, 6 at quick scale): "
        "exponent b = log(B3(c_max) / B3(c_min)) / log(c_max / c_min) of the bound's value "
        "with theorem constants (log factors kept), Lambda and empirical risk of each fitted "
        "model; the upper t bound of the mean exponent is below 0.25 (contradicted when the "
        "lower bound is above 0.25)"
    ),
    control="the Lipschitz bound B1 on the same fits: its exponent must be decisively "
            "above 0.25",
    effect_of_interest=_DEPENDENCE_EOI,
)
def _claim_dependence(scale, seed, out_dir):
    n_train, n_test, c_pair, looks = _DEPENDENCE[scale]

    def exponent(field):
        def arm(s):
            low, high = (_ranking_point(s, n_train, n_test, c, 0.0) for c in c_pair)
            return _exponent(low, high, field, c_pair)
        return arm

    arms = {"B3 exponent": exponent("B3_theorem_value"),
            "B1 exponent": exponent("B1_theorem_value"),
            "B3 exponent, rate constants": exponent("B3_value"),
            "B4 exponent, theorem constants": exponent("B4_theorem_value")}
    cmp = run_comparison(arms, method="B3 exponent", baseline=None,
                         control_method="B1 exponent", seed=seed, looks=looks,
                         effect_of_interest=_DEPENDENCE_EOI, alternative="less",
                         margin=_EXPONENT_MARGIN, metric="exponent of c")
    means = {name: float(np.mean(v)) for name, v in cmp.values.items()}
    fig, ax = new_figure(figsize=(5.5, 3.6))
    ax.bar(range(len(means)), list(means.values()),
           yerr=[float(np.std(v)) for v in cmp.values.values()])
    ax.axhline(_EXPONENT_MARGIN, color="tab:red", ls=":", label="margin 0.25")
    ax.axhline(0.5, color="k", lw=0.6, ls="--", label="sqrt(c)")
    ax.set_xticks(range(len(means)), list(means), rotation=15, fontsize=7)
    ax.set_ylabel(f"exponent of c ({c_pair[0]} -> {c_pair[1]})")
    ax.legend(fontsize=7)
    artifact = save_figure(fig, out_dir, "bound_exponent_in_c")
    return cmp.claim_result(
        observed={"c": list(c_pair), "n_train": n_train},
        artifacts=[artifact],
        notes="The exponents are of the bounds' values on each fitted model (Lambda read "
              "from the model, empirical risk included), so they are not pure formula "
              "shapes: a model whose norm or training risk grows with c moves both bounds. "
              "The fits are those of the reported gap and shape claims (shared).")


_NON_VACUOUS = {
    # (n_train, n_test, n_labels, label noise, looks in seeds)
    "smoke": (1000, 1000, 16, 0.1, (2,)),
    "quick": (4000, 2000, 16, 0.1, (3, 6)),
    "full": (4000, 2000, 16, 0.1, (5, 10, 20)),
}
#: The sample size was fixed on a calibration setting that no claim uses: c = 8, label
#: noise 0.1, seed 12345, n in {1000, 2000, 4000, 8000}; B4 (rate constants) first fell
#: below the trivial risk at n = 4000 there. Looks checked on another calibration setting
#: (n = 4000, c = 12, six seeds of seed 12345, key 991): trivial - B4 was 0.076 with SD 0.003,
#: so 3 seeds tell 0 from the 0.01 effect of interest at 80% power; 3 and 6 are kept.
_NON_VACUOUS_EOI = EffectOfInterest(
    0.01, "ours",
    "one point of the logistic ranking surrogate risk below the trivial risk ln 2: a bound "
    "that says something; the sample size n = 4000 comes from the calibration setting "
    "c = 8, seed 12345")


@register_claim(
    SLUG, "non-vacuous-regime",
    "At n = 4000 (c = 16, label noise 0.1, ranking surrogate), the smooth local bound B4 "
    "is below the risk of the best constant predictor, where the Lipschitz bound B1 is "
    "vacuous.",
    paper_statement=(
        "Abstract: local Rademacher versions of the smooth bounds give faster rates in n; "
        "the paper gives no sample size at which they are informative (its constants are "
        "unspecified; ours are 1, 'rate' constants)."
    ),
    check=(
        "per seed at n = 4000 (looks 3, 6 at quick scale): trivial risk - B4; the lower t "
        "bound of the mean is > 0 (contradicted when its upper bound is below 0.01)"
    ),
    control="the Lipschitz bound B1 at the same n on the same fits: trivial risk - B1 "
            "must be decisively below the effect of interest",
    effect_of_interest=_NON_VACUOUS_EOI,
)
def _claim_non_vacuous(scale, seed, out_dir):
    n_train, n_test, c, noise, looks = _NON_VACUOUS[scale]

    def point(s):
        return _ranking_point(s, n_train, n_test, c, noise)

    arms = {name: (lambda field: lambda s: point(s)["trivial_risk"] - point(s)[field])(field)
            for name, field in (("trivial - B4", "B4_value"), ("trivial - B1", "B1_value"),
                                ("trivial - B3", "B3_value"))}
    cmp = run_comparison(arms, method="trivial - B4", baseline=None,
                         control_method="trivial - B1", seed=seed, looks=looks,
                         key=(n_train, c), effect_of_interest=_NON_VACUOUS_EOI,
                         metric="trivial risk - bound")
    points = [point(s) for s in cmp.seeds]
    fig, ax = new_figure(figsize=(5.5, 3.6))
    for field, style in (("B4_value", "v-"), ("B3_value", "^-")):
        ax.plot(range(len(points)), [p[field] for p in points], style, label=field[:2])
    ax.plot(range(len(points)), [p["trivial_risk"] for p in points], "k--",
            label="trivial risk")
    ax.plot(range(len(points)), [p["empirical_risk"] + p["surrogate_gap"] for p in points],
            "k*:", label="held-out risk")
    ax.set_xlabel("seed")
    ax.set_ylabel("ranking surrogate risk (logistic)")
    ax.set_title(f"n = {n_train}, c = {c}, label noise {noise:g} (B1 about "
                 f"{np.mean([p['B1_value'] for p in points]):.1f}, off the axis)")
    ax.legend(fontsize=7)
    artifact = save_figure(fig, out_dir, "non_vacuous_regime")
    return cmp.claim_result(
        observed={"n_train": n_train, "B4": [p["B4_value"] for p in points],
                  "B1": [p["B1_value"] for p in points],
                  "trivial_risk": [p["trivial_risk"] for p in points]},
        artifacts=[artifact],
        notes="Rate constants (absolute constants 1, logs dropped; the theorem constants "
              "are reconstructed and far larger, see informative-sample-size); a realistic "
              "data set cannot be loaded offline, so the problem is the synthetic linear "
              "one of the other claims.")
