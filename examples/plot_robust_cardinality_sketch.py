"""
Robust cardinality sketches under an adaptive attack
====================================================

A bottom-k sketch estimates how many distinct keys a set holds from the ``k``
smallest hashes of its keys. The standard estimate :math:`(k-1)/\\tau_k` is
accurate for any *fixed* set, but an analyst who picks queries after seeing
earlier answers can find the keys with the smallest hashes and make it fail
(Ahmadian & Cohen, ICML 2024). Cohen, Singhal & Stemmer (ICML 2025) answer
through differentially private threshold searches and track how exposed each
key is. This example runs the correlation attack against the three modes of
:class:`skpaper.sketch.RobustCardinalitySketch`.
"""

import os

TINY = os.environ.get("SKPAPER_EXAMPLE_SIZE") == "tiny"  # seconds-long run, for the tests

# %%
# The sketch itself: mergeable, exact below ``k``, about ``1/sqrt(k)`` error above.
import matplotlib.pyplot as plt
import numpy as np

from skpaper.sketch import BottomKSketch, RobustCardinalitySketch
from skpaper.sketch.attacks import correlation_attack, secret_lowest_keys

left = BottomKSketch(k=256, seed=1).update(np.arange(0, 600_000))
right = BottomKSketch(k=256, seed=1).update(np.arange(400_000, 1_000_000))
print(f"union estimate {(left | right).estimate():,.0f} (true 1,000,000)")

# %%
# Without an attack all three modes are accurate; the robust ones pay with noise.
rng = np.random.default_rng(0)
queries = [rng.choice(10**7, size=20_000, replace=False) for _ in range(5 if TINY else 100)]
for mode in ("standard", "basic", "tracking"):
    est = RobustCardinalitySketch(k=256, mode=mode, random_state=0).fit()
    print(f"{mode:>9}: mean relative error {1 - est.score(queries, [20_000] * len(queries)):.3f}")

# %%
# The attack: random half-subsets of 10,000 keys, per-key correlation scores, then
# the 2k top-scoring keys (A_in) and the rest (A_out) as two final queries.
keys = np.arange(10_000)
grid = [256] if TINY else [256, 1024, 4096]
curves = {}
for mode in ("standard", "basic", "tracking"):
    curves[mode] = []
    for r in grid:
        est = RobustCardinalitySketch(k=256, mode=mode, random_state=r).fit()
        res = correlation_attack(est, keys, n_queries=r, random_state=r + 1,
                                 true_lowest=secret_lowest_keys(est, keys, 512))
        curves[mode].append(res)
        print(f"{mode:>9}, {r:5d} queries: recovery {res.recovery:.2f}, "
              f"A_in x{res.ratio_in:.2f}, A_out x{res.ratio_out:.2f}")

# %%
fig, axes = plt.subplots(1, 3, figsize=(12, 3.6))
for mode, results in curves.items():
    axes[0].plot(grid, [r.ratio_in for r in results], "o-", label=mode)
    axes[1].plot(grid, [r.ratio_out for r in results], "o-", label=mode)
    axes[2].plot(grid, [r.recovery for r in results], "o-", label=mode)
for ax, title in zip(axes, ("estimate / true, A_in", "estimate / true, A_out",
                            "recovery of the 2k lowest-hash keys")):
    ax.set_xscale("log", base=2)
    ax.set_xlabel("attack queries")
    ax.set_title(title)
axes[0].set_yscale("log")
axes[1].set_yscale("log")
axes[2].axhline(512 / 10_000, color="k", ls="--", lw=0.8, label="chance")
axes[0].legend()
fig.tight_layout()
fig.savefig("plot_robust_cardinality_sketch.png", dpi=110)
