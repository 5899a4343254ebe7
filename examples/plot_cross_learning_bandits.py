"""
==========================================================
Cross-learning bandits: bidding in a first-price auction
==========================================================

A bidder with a private value ``v`` (the context) picks a bid ``b`` (the action)
in a repeated first-price auction. Whether a bid wins does not depend on the
value, so every auction reveals the utility of the played bid for *every* value:
cross-learning. The values are i.i.d. from a distribution the bidder does not
know, and the highest competing bid is set by an oblivious adversary.

:class:`~skpaper.bandits.CrossLearningExp3` is the algorithm of Schneider &
Zimmert (NeurIPS 2023), which Huang & Huang (ICML 2025) show has regret
``O~(sqrt(K T log(1/delta)))`` with probability ``1 - delta``, whatever the number
of values. We compare it with EXP3-IX run separately for each value, whose
regret grows with the number of values, and look at the spread of the regret
over many draws of the values.
"""

import os

TINY = os.environ.get("SKPAPER_EXAMPLE_SIZE") == "tiny"  # seconds-long run, for the tests

# %%
# Regret against the number of values.
import matplotlib.pyplot as plt
import numpy as np

from skpaper.bandits import CrossLearningExp3, Exp3, Exp3IX, FirstPriceAuction, simulate

horizon = 200 if TINY else 10_000
policies = {
    "cross-learning EXP3": CrossLearningExp3(),
    "per-value EXP3-IX": Exp3IX(),
    "per-value EXP3": Exp3(),
}
counts = [5, 20] if TINY else [5, 20, 80, 320]
mean_regret = {name: [] for name in policies}
for n_values in counts:
    env = FirstPriceAuction(n_values=n_values, n_bids=10, random_state=0)
    result = simulate(policies, env, horizon=horizon, n_seeds=3, random_state=n_values)
    for name, regret in zip(result.names, result.regret):
        mean_regret[name].append(regret.mean())

fig, axes = plt.subplots(1, 2, figsize=(11, 4))
for name, values in mean_regret.items():
    axes[0].plot(counts, values, "o-", label=name)
axes[0].set_xscale("log")
axes[0].set_xlabel("number of values |C|")
axes[0].set_ylabel(f"regret after T={horizon} auctions")
axes[0].legend()

# %%
# The distribution of the regret over 100 draws of the values, for one
# adversary: the 99th percentile of cross-learning stays far below the
# sqrt(K T log(1/delta)) rate with delta = 0.01.
env = FirstPriceAuction(n_values=20, n_bids=10, random_state=1)
result = simulate(policies, env, horizon=200 if TINY else 3000,
                  n_seeds=3 if TINY else 100, random_state=0)
axes[1].boxplot(list(result.regret), whis=(1, 99))
axes[1].set_xticks(range(1, len(result.names) + 1), result.names)
axes[1].axhline(np.sqrt(10 * 3000 * np.log(100)), color="k", ls="--", lw=0.8,
                label="sqrt(K T log(1/delta))")
axes[1].set_ylabel("regret at T=3000")
axes[1].set_title("100 value draws; whiskers at the 1st and 99th percentiles", fontsize=9)
axes[1].legend()
fig.tight_layout()
fig.savefig("plot_cross_learning_bandits.png", dpi=110)
