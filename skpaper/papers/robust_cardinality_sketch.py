"""Claims of Cohen, Singhal & Stemmer (ICML 2025): robust cardinality sketches."""

import numpy as np

from ._plotting import new_figure, save_figure
from ._registry import ClaimResult, register_claim, register_paper

SLUG = "robust-cardinality-sketch"
register_paper(
    SLUG,
    "Breaking the Quadratic Barrier: Robust Cardinality Sketches for Adaptive Queries",
    module="skpaper.sketch",
)

_MODES = ("standard", "basic", "tracking")
_TOLERANCE = 0.25

# Attack settings per scale. Smoke shrinks n and k; epsilon grows as 1/k so that
# the robust answers keep the relative noise of the k=256, epsilon=0.2 setting.
_ATTACK = {
    "smoke": {"n": 2000, "k": 64, "epsilon": 0.8, "n_queries": 512,
              "grid": [64, 512]},
    "quick": {"n": 10_000, "k": 256, "epsilon": 0.2, "n_queries": 2048,
              "grid": [128, 256, 512, 1024, 2048, 4096]},
    "full": {"n": 10_000, "k": 256, "epsilon": 0.2, "n_queries": 8192,
             "grid": [128, 256, 512, 1024, 2048, 4096, 8192, 16384]},
}
_BUDGET = 40


def _attack(mode, cfg, n_queries, seed):
    from ..sketch import RobustCardinalitySketch
    from ..sketch.attacks import correlation_attack, secret_lowest_keys

    keys = np.arange(cfg["n"])
    est = RobustCardinalitySketch(
        k=cfg["k"], mode=mode, epsilon=cfg["epsilon"], budget=_BUDGET, random_state=seed
    ).fit()
    res = correlation_attack(
        est, keys, n_queries=n_queries,
        true_lowest=secret_lowest_keys(est, keys, 2 * cfg["k"]), random_state=seed + 1,
    )
    res["n_deactivated"] = est.n_deactivated_
    return res


def _within(res):
    return abs(res.ratio_in - 1) <= _TOLERANCE and abs(res.ratio_out - 1) <= _TOLERANCE


@register_claim(
    SLUG,
    "attack-breaks-standard-not-tracking",
    "Under the single-batch correlation attack the standard bottom-k estimator "
    "overestimates the selected set A_in by at least 3x, while the tracking robust "
    "estimator stays within 25% on both A_in and A_out.",
)
def _claim_attack(scale, seed, out_dir):
    cfg = _ATTACK[scale]
    results = {mode: _attack(mode, cfg, cfg["n_queries"], seed) for mode in _MODES}
    fig, ax = new_figure(1, 2, figsize=(9, 3.6))
    x = np.arange(len(_MODES))
    ax[0].bar(x - 0.2, [results[m].ratio_in for m in _MODES], 0.4, label="A_in")
    ax[0].bar(x + 0.2, [results[m].ratio_out for m in _MODES], 0.4, label="A_out")
    ax[0].axhline(1.0, color="k", lw=0.8)
    ax[0].set_yscale("log")
    ax[0].set_xticks(x, _MODES)
    ax[0].set_ylabel("estimate / true size")
    ax[0].legend()
    chance = 2 * cfg["k"] / cfg["n"]
    ax[1].bar(x, [results[m].recovery for m in _MODES], 0.5)
    ax[1].axhline(chance, color="k", ls="--", lw=0.8, label="chance")
    ax[1].set_xticks(x, _MODES)
    ax[1].set_ylabel("recovery of the 2k lowest-hash keys")
    ax[1].legend()
    fig.suptitle(f"n={cfg['n']}, k={cfg['k']}, {cfg['n_queries']} attack queries")
    artifact = save_figure(fig, out_dir, "attack_ratios")

    std, trk = results["standard"], results["tracking"]
    observed = {
        f"{m}_{field}": float(results[m][field])
        for m in _MODES for field in ("recovery", "ratio_in", "ratio_out")
    }
    observed.update({
        "tracking_deactivated_fraction": results["tracking"].n_deactivated / cfg["n"],
        "participation_per_key": float(std.participation),
        "chance_recovery": chance,
        **{k: v for k, v in cfg.items() if k != "grid"},
    })
    passed = bool(std.ratio_in >= 3.0 and _within(trk))
    return ClaimResult(
        observed=observed,
        expected={"standard_ratio_in_min": 3.0, "tracking_ratio_within": _TOLERANCE},
        passed=passed,
        artifacts=[artifact],
        notes=(
            "Robust mechanism constants are reconstructed (threshold grid, AboveThreshold "
            f"with monotone-query noise, budget={_BUDGET}). By the end of the attack the "
            "tracking estimator has deactivated the fraction of the ground set reported in "
            "tracking_deactivated_fraction and counts those keys exactly, which is what keeps "
            "it accurate here. Smoke uses a small k, where the robust modes are noisy."
        ),
    )


@register_claim(
    SLUG,
    "standard-error-without-attack",
    "Without an attack the standard estimator (k-1)/tau_k has relative standard error "
    "within 15% of 1/sqrt(k-2) over 200 trials.",
)
def _claim_rse(scale, seed, out_dir):
    from ..sketch import BottomKSketch, RobustCardinalitySketch

    k = 64 if scale == "smoke" else 256
    n = 5_000 if scale == "smoke" else 20_000
    n_trials = 200 if scale != "full" else 2000
    rng = np.random.default_rng(seed)
    ratios = np.empty(n_trials)
    for t in range(n_trials):
        keys = rng.integers(0, 2**63, size=n, dtype=np.int64)
        seed64 = int(rng.integers(0, 2**63))
        ratios[t] = BottomKSketch(k=k, seed=seed64).update(keys).estimate() / n
    rse = float(np.sqrt(np.mean((ratios - 1.0) ** 2)))
    theory = 1.0 / np.sqrt(k - 2)

    # Mean relative error of the three query modes on non-adaptive random queries.
    n_q = 100 if scale == "smoke" else 300
    epsilon = 0.2 * 256 / k
    queries = [rng.choice(10 * n, size=n // 2, replace=False) for _ in range(n_q)]
    mre = {}
    for mode in _MODES:
        est = RobustCardinalitySketch(k=k, mode=mode, epsilon=epsilon, budget=_BUDGET,
                                      random_state=seed).fit()
        mre[mode] = float(1.0 - est.score(queries, np.full(n_q, n // 2)))

    fig, ax = new_figure(figsize=(5, 3.6))
    ax.hist(ratios, bins=30, density=True, alpha=0.7, label="standard, (k-1)/tau_k")
    grid = np.linspace(ratios.min(), ratios.max(), 200)
    ax.plot(grid, np.exp(-0.5 * ((grid - 1) / theory) ** 2) / (theory * np.sqrt(2 * np.pi)),
            label="N(1, 1/(k-2))")
    ax.set_xlabel("estimate / true cardinality")
    ax.set_title(f"k={k}, n={n}, {n_trials} trials: RSE {rse:.4f} vs {theory:.4f}")
    ax.legend()
    artifact = save_figure(fig, out_dir, "standard_error")
    relative_gap = abs(rse / theory - 1.0)
    return ClaimResult(
        observed={"rse": rse, "theory": float(theory), "relative_gap": relative_gap,
                  "mean_bias": float(ratios.mean() - 1.0), "k": k, "n": n,
                  "n_trials": n_trials,
                  **{f"mean_relative_error_{m}": v for m, v in mre.items()}},
        expected={"relative_gap_max": 0.15},
        passed=bool(relative_gap <= 0.15),
        artifacts=[artifact],
        notes="Mean relative errors of the three modes on random non-adaptive queries are "
              "reported for context; the robust modes pay for robustness with noise.",
    )


@register_claim(
    SLUG,
    "error-vs-adaptive-queries",
    "As the number of attack queries grows, the standard estimator breaks first, the "
    "basic robust estimator later, and the tracking estimator survives the longest "
    "(at least 4x the queries the standard one survives).",
)
def _claim_curve(scale, seed, out_dir):
    cfg = _ATTACK[scale]
    grid = cfg["grid"]
    curves = {m: [_attack(m, cfg, r, seed + 17 * i) for i, r in enumerate(grid)]
              for m in _MODES}

    def survived(results, key=_within):
        last = 0
        for r, res in zip(grid, results):
            if not key(res):
                break
            last = r
        return last

    def in_only(res):
        return abs(res.ratio_in - 1) <= _TOLERANCE

    fig, ax = new_figure(1, 3, figsize=(13, 3.8))
    for m in _MODES:
        ax[0].plot(grid, [abs(np.log(r.ratio_in)) for r in curves[m]], "o-", label=m)
        ax[1].plot(grid, [abs(np.log(r.ratio_out)) for r in curves[m]], "o-", label=m)
        ax[2].plot(grid, [r.recovery for r in curves[m]], "o-", label=m)
    for a, title in zip(ax, ("|log(est/true)| on A_in", "|log(est/true)| on A_out",
                             "recovery of 2k lowest keys")):
        a.set_xscale("log", base=2)
        a.set_xlabel("attack queries")
        a.set_title(title)
    ax[0].axhline(np.log(1 + _TOLERANCE), color="k", ls="--", lw=0.8)
    ax[1].axhline(np.log(1 + _TOLERANCE), color="k", ls="--", lw=0.8)
    ax[2].axhline(2 * cfg["k"] / cfg["n"], color="k", ls="--", lw=0.8, label="chance")
    ax[0].legend()
    artifact = save_figure(fig, out_dir, "error_vs_queries")

    surv = {m: survived(curves[m]) for m in _MODES}
    surv_in = {m: survived(curves[m], in_only) for m in _MODES}
    observed = {"grid": grid,
                **{f"survived_{m}": surv[m] for m in _MODES},
                **{f"survived_A_in_only_{m}": surv_in[m] for m in _MODES},
                **{f"ratio_in_{m}": [round(r.ratio_in, 3) for r in curves[m]] for m in _MODES},
                **{f"ratio_out_{m}": [round(r.ratio_out, 3) for r in curves[m]]
                   for m in _MODES},
                "deactivated_tracking": [int(r.n_deactivated) for r in curves["tracking"]]}
    passed = bool(surv["tracking"] >= 4 * max(surv["standard"], 1)
                  and surv["tracking"] >= surv["basic"] >= surv["standard"])
    return ClaimResult(
        observed=observed,
        expected={"survival_ratio_tracking_vs_standard_min": 4,
                  "order": "tracking >= basic >= standard",
                  "survival": f"largest grid size with A_in and A_out within {_TOLERANCE:.0%}"},
        passed=passed,
        artifacts=[artifact],
        notes=(
            "Each grid point is an independent attack on a freshly fitted estimator. "
            "Tracking deactivates the keys charged most, which are the lowest-hash keys: the "
            "remaining active keys then have hashes biased upwards and large queries (A_out) "
            "are underestimated until most of the ground set is deactivated and counted "
            "exactly (the selection bias the design notes warn about); survival counts both "
            "sets, survived_A_in_only_* counts the attacked set alone."
        ),
    )
