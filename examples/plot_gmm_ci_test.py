"""
=================================================================
Testing conditional independence of variables seen in categories
=================================================================

Three latent Gaussian variables form a chain ``Z1 -> Z2 -> Z3``, so
``Z1`` and ``Z3`` are independent given ``Z2``. We only see each variable cut
into 4 ordered categories. Conditioning on the category of ``Z2`` does not
remove the dependence that flows through ``Z2``'s value inside its category,
so a partial-correlation (Fisher-z) test on the codes rejects the true null
more and more often as ``n`` grows. The DCT-GMM test estimates the latent
correlations from all contingency cells and tests the nodewise-regression
coefficient, which keeps the error rate at the nominal 5%; binarizing the
codes first (DCT) keeps the level too but loses power on a weak extra edge
``Z1 -> Z3``.

The second panel shows the power against that edge; the third runs PC with
each test on random discretized DAGs.
"""

import os

TINY = os.environ.get("SKPAPER_EXAMPLE_SIZE") == "tiny"  # seconds-long run, for the tests

# %%
# Rejection rates on the chain, with and without the extra edge.
import matplotlib.pyplot as plt
import numpy as np

from skpaper.datasets import make_discretized_chain, make_discretized_gaussian_dag
from skpaper.independence import PC, DiscretizedCITest, skeleton_f1

tests = {
    "DCT-GMM": {"method": "gmm"},
    "DCT (binarized)": {"method": "binarize"},
    "Fisher-z on codes": {"method": "fisherz"},
}
sizes = [200] if TINY else [200, 500, 1000]
n_reps = 2 if TINY else 60


def rejection_rate(params, n, direct_effect):
    rejected = 0
    for rep in range(n_reps):
        X = make_discretized_chain(n, n_levels=4, direct_effect=direct_effect,
                                   random_state=10_000 * n + rep)
        rejected += DiscretizedCITest(**params).fit(X).pvalue(0, 2, cond=[1]) < 0.05
    return rejected / n_reps


size = {name: [rejection_rate(p, n, 0.0) for n in sizes] for name, p in tests.items()}
power = {name: [rejection_rate(p, n, 0.25) for n in sizes] for name, p in tests.items()
         if name != "Fisher-z on codes"}
for name in tests:
    print(f"{name:18s} type-I error {size[name]}  power {power.get(name, '-')}")

# %%
# PC on random DAGs over 8 discretized latent variables.
f1 = {name: [] for name in tests}
for seed in range(1 if TINY else 8):
    X, dag = make_discretized_gaussian_dag(8, 500, 2 / 7, 4, random_state=seed)
    for name, params in tests.items():
        f1[name].append(skeleton_f1(dag, PC(ci_test=DiscretizedCITest(**params)).fit(X)
                                    .skeleton_))
print({name: round(float(np.mean(v)), 3) for name, v in f1.items()})

# %%
# Plot the three comparisons.
fig, axes = plt.subplots(1, 3, figsize=(12, 3.6))
for name, marker in zip(tests, "oDs"):
    axes[0].plot(sizes, size[name], marker=marker, label=name)
    if name in power:
        axes[1].plot(sizes, power[name], marker=marker, label=name)
axes[0].axhline(0.05, color="k", lw=0.8)
axes[0].set_title("type-I error, Z1 indep Z3 | Z2")
axes[0].set_ylabel("rejection rate at alpha = 0.05")
axes[1].set_title("power, extra edge Z1 -> Z3 of 0.25")
axes[1].set_ylim(0, 1.02)
for ax in axes[:2]:
    ax.set_xlabel("sample size n")
axes[0].legend(fontsize=8)
axes[2].boxplot(list(f1.values()), tick_labels=["GMM", "DCT", "Fisher-z"])
axes[2].set_title("PC skeleton F1 (p = 8, n = 500)")
fig.tight_layout()
fig.savefig("plot_gmm_ci_test.png", dpi=110)
