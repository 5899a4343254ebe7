"""DCT-GMM: a sample-efficient conditional independence test under discretization.

Claims of Sun et al. (ICML 2025) checked with :class:`skpaper.independence.DiscretizedCITest`
and :class:`skpaper.independence.PC`. The paper's exact experimental grids were
not retrievable; the settings below (latent chain ``Z1 -> Z2 -> Z3`` with
coefficient 0.6, ``K = 4`` levels at random thresholds in ``(-1.2, 1.2)``, a
direct edge of 0.25 for power, ER DAGs with 8 nodes and mean degree 2) are a
reconstruction following the paper's description.
"""

from functools import lru_cache

import numpy as np
from scipy.stats import binom

from ._plotting import new_figure, save_figure
from ._registry import ClaimResult, register_claim, register_paper

SLUG = "gmm-ci-test"

register_paper(SLUG, "A Sample Efficient Conditional Independence Test in the Presence of "
               "Discretization (Sun et al., ICML 2025)", module="skpaper.independence")

ALPHA = 0.05
_METHODS = {
    "GMM one-step": {"method": "gmm"},
    "GMM two-step": {"method": "gmm", "weighting": "optimal"},
    "DCT (binarized)": {"method": "binarize"},
    "Fisher-z on codes": {"method": "fisherz"},
}
_POWER_METHODS = ("GMM one-step", "DCT (binarized)")

_SETTINGS = {
    # (replications, sample sizes for size, sample sizes for power, graphs, PC sample size)
    "smoke": (20, (200, 500), (200, 500), 3, 300),
    "quick": (200, (200, 500, 1000), (200, 500), 20, 500),
    "full": (1000, (100, 200, 500, 1000, 2000), (100, 200, 500, 1000), 100, 500),
}


def _seeds(seed, *key, size):
    return np.random.SeedSequence([seed, *key]).generate_state(size).tolist()


def _pvalue(X, params, cond):
    from ..independence import DiscretizedCITest

    return DiscretizedCITest(**params).fit(X).pvalue(0, 2, cond)


@lru_cache(maxsize=8)
def _rejections(scale, seed, n, direct_effect, methods):
    """Rejection counts at level ALPHA of ``Z1 indep Z3 | Z2`` over seeded replications."""
    from ..datasets import make_discretized_chain

    reps = _SETTINGS[scale][0]
    counts = dict.fromkeys(methods, 0)
    for s in _seeds(seed, n, int(direct_effect * 1000), size=reps):
        X = make_discretized_chain(n, n_levels=4, coef=0.6, direct_effect=direct_effect,
                                   random_state=s)
        for name in methods:
            counts[name] += _pvalue(X, _METHODS[name], [1]) < ALPHA
    return counts, reps


def _binomial_band(reps, level=0.99):
    lo, hi = binom.interval(level, reps, ALPHA)
    return lo / reps, hi / reps


@register_claim(SLUG, "type-one-error",
                "The GMM test holds its level: at alpha=0.05 its type-I error is inside the "
                "binomial 99% band around 0.05 at n in {200, 500, 1000} (K=4 levels), while "
                "Fisher-z on the codes rejects far more often.")
def _claim_type_one_error(scale, seed, out_dir):
    reps, sizes, _, _, _ = _SETTINGS[scale]
    methods = tuple(_METHODS)
    rates = {name: [] for name in methods}
    for n in sizes:
        counts, _ = _rejections(scale, seed, n, 0.0, methods)
        for name in methods:
            rates[name].append(counts[name] / reps)
    lo, hi = _binomial_band(reps)
    gmm_ok = all(lo <= r <= hi for r in rates["GMM one-step"])
    fisher_high = all(r > hi for r in rates["Fisher-z on codes"])

    fig, ax = new_figure(figsize=(5, 3.5))
    ax.axhspan(lo, hi, color="0.85", label="binomial 99% band")
    ax.axhline(ALPHA, color="k", lw=0.8)
    for name, marker in zip(methods, "osD^"):
        ax.plot(sizes, rates[name], marker=marker, label=name)
    ax.set_xlabel("sample size n")
    ax.set_ylabel("type-I error at alpha = 0.05")
    ax.set_title(f"Z1 indep Z3 | Z2 on a discretized chain ({reps} reps)")
    ax.legend(fontsize=7)
    artifact = save_figure(fig, out_dir, "type_one_error_vs_n")
    return ClaimResult(
        observed={"n": list(sizes), **{name: rates[name] for name in methods},
                  "band_99": [lo, hi]},
        expected={"GMM one-step": f"inside [{lo:.3f}, {hi:.3f}] at every n",
                  "Fisher-z on codes": f"above {hi:.3f} at every n",
                  "paper_reimplementation_n200_500_1000": {"GMM one-step": [0.045, 0.05, 0.035],
                                                           "Fisher-z": [0.205, 0.395, 0.555]}},
        passed=bool(gmm_ok and fisher_high),
        artifacts=[artifact],
        notes="Two-step GMM and DCT are shown for reference: two-step weighting is "
              "anti-conservative at small n, as the specification warns. Settings are "
              "reconstructed (the paper's grids were not retrievable).",
    )


@register_claim(SLUG, "power-vs-dct",
                "On a weak conditional dependence (direct edge 0.25), the GMM test is more "
                "powerful than the binarized DCT test at n=200 and n=500.")
def _claim_power(scale, seed, out_dir):
    reps, _, sizes, _, _ = _SETTINGS[scale]
    power = {name: [] for name in _POWER_METHODS}
    for n in sizes:
        counts, _ = _rejections(scale, seed, n, 0.25, _POWER_METHODS)
        for name in _POWER_METHODS:
            power[name].append(counts[name] / reps)
    gmm, dct = power["GMM one-step"], power["DCT (binarized)"]
    check = [n in sizes for n in (200, 500)]
    passed = all(check) and all(g > d for n, g, d in zip(sizes, gmm, dct) if n in (200, 500))

    fig, ax = new_figure(figsize=(5, 3.5))
    for name, marker in zip(_POWER_METHODS, "oD"):
        ax.plot(sizes, power[name], marker=marker, label=name)
    ax.set_xlabel("sample size n")
    ax.set_ylabel("power at alpha = 0.05")
    ax.set_ylim(0, 1.02)
    ax.set_title(f"direct edge 0.25 on a discretized chain ({reps} reps)")
    ax.legend(fontsize=8)
    artifact = save_figure(fig, out_dir, "power_vs_n")
    return ClaimResult(
        observed={"n": list(sizes), **power},
        expected={"GMM one-step > DCT (binarized)": "at n=200 and n=500",
                  "paper_reimplementation_n200_500": {"GMM one-step": [0.68, 0.955],
                                                      "DCT (binarized)": [0.53, 0.89]}},
        passed=bool(passed),
        artifacts=[artifact],
        notes="Both tests run on the same simulated data sets (paired comparison).",
    )


@register_claim(SLUG, "pc-skeleton-f1",
                "PC with the GMM test recovers the skeleton of random discretized Gaussian DAGs "
                "(8 nodes, mean degree 2) with a higher mean F1 than PC with DCT or with "
                "Fisher-z on the codes.")
def _claim_pc(scale, seed, out_dir):
    from ..datasets import make_discretized_gaussian_dag
    from ..independence import PC, DiscretizedCITest, dag_to_cpdag, shd, skeleton_f1

    _, _, _, n_graphs, n = _SETTINGS[scale]
    names = ("GMM one-step", "DCT (binarized)", "Fisher-z on codes")
    f1 = {name: [] for name in names}
    dist = {name: [] for name in names}
    for s in _seeds(seed, 7, size=n_graphs):
        X, dag = make_discretized_gaussian_dag(8, n, 2.0 / 7.0, 4, random_state=s)
        truth = dag_to_cpdag(dag)
        for name in names:
            pc = PC(ci_test=DiscretizedCITest(**_METHODS[name]), alpha=ALPHA).fit(X)
            f1[name].append(skeleton_f1(dag, pc.skeleton_))
            dist[name].append(shd(truth, pc.cpdag_))
    mean_f1 = {name: float(np.mean(v)) for name, v in f1.items()}
    mean_shd = {name: float(np.mean(v)) for name, v in dist.items()}
    passed = all(mean_f1["GMM one-step"] > mean_f1[other] for other in names[1:])

    fig, ax = new_figure(figsize=(5, 3.5))
    ax.boxplot([f1[name] for name in names], tick_labels=[name.split(" (")[0] for name in names])
    ax.set_ylabel("skeleton F1")
    ax.set_title(f"PC on {n_graphs} random DAGs (p=8, n={n}, K=4)")
    artifact = save_figure(fig, out_dir, "pc_skeleton_f1")
    return ClaimResult(
        observed={"mean_skeleton_f1": mean_f1, "mean_shd": mean_shd, "n_graphs": n_graphs,
                  "n_samples": n},
        expected={"mean_skeleton_f1": "GMM one-step > DCT (binarized) and > Fisher-z on codes"},
        passed=bool(passed),
        artifacts=[artifact],
        notes="SHD is computed between CPDAGs (the truth via dag_to_cpdag). Graph size and "
              "sample size are reconstructed settings.",
    )
