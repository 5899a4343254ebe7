"""
================================================================
RATE: the effect of sentiment on a reward model, rewritten twice
================================================================

A reward model scores movie reviews. We want the causal effect of a review's
sentiment on its reward. In these synthetic reviews, positive reviews also
carry more typos, and the reward penalises typos, so comparing mean rewards
(the naive estimate) mixes the two. Rewriting each review to the opposite
sentiment and comparing it with the original (a single rewrite) does not help
either: the rewriter also fixes the typos and deletes "the", and those
off-target changes enter the comparison. RATE compares the rewrite with a
rewrite of the rewrite, which carry the same off-target changes, so they cancel.

This example sweeps the confounding between sentiment and typos and plots the
estimates against the true effect, for the known reward and for a small ridge
reward model fitted to it.
"""

import os

TINY = os.environ.get("SKPAPER_EXAMPLE_SIZE") == "tiny"  # seconds-long run, for the tests

# %%
# Set up the world: reviews, an imperfect rewriter and two reward models.
import matplotlib.pyplot as plt
import numpy as np

from skpaper.datasets import make_synthetic_reviews, synthetic_review_reward
from skpaper.reward import RATE, LexiconRewriter, make_review_reward_model

texts, w, counterfactuals = make_synthetic_reviews(5, confounding=0.8, random_state=0)
rewriter = LexiconRewriter()
rewrite = rewriter(texts[:1], 1 - w[0])
print("review:             ", texts[0][:70])
print("rewrite:            ", rewrite[0][:70])
print("rewrite of rewrite: ", rewriter(rewrite, w[0])[0][:70])


def true_ate(reward, texts, w, counterfactuals):
    """Effect of a perfect sentiment swap that changes nothing else."""
    sign = np.where(w == 1, 1.0, -1.0)
    return np.mean(sign * (reward(texts) - reward(counterfactuals)))


# %%
# Sweep the confounding.
levels = np.linspace(0.0, 1.0, 2 if TINY else 6)
results = {"known reward": [], "ridge reward model": []}
for level in levels:
    texts, w, counterfactuals = make_synthetic_reviews(100 if TINY else 1000, confounding=level,
                                                       random_state=0)
    ridge = make_review_reward_model().fit(texts, synthetic_review_reward(texts))
    for name, reward in (("known reward", synthetic_review_reward),
                         ("ridge reward model", ridge.predict)):
        rate = RATE(rewriter=rewriter, reward_model=reward).fit(texts, w)
        results[name].append({
            "truth": true_ate(reward, texts, w, counterfactuals),
            "rate": rate.ate_, "ci": rate.ci_["ate"], "naive": rate.naive_,
            "single": rate.single_rewrite_ate_,
        })

last = results["known reward"][-1]
print(f"confounding 1.0: truth {last['truth']:.2f}, RATE {last['rate']:.2f}, "
      f"naive {last['naive']:.2f}, single rewrite {last['single']:.2f}")

# %%
# Plot the estimates against the truth.
fig, axes = plt.subplots(1, 2, figsize=(9, 3.6), sharey=True)
for ax, (name, rows) in zip(axes, results.items()):
    ax.plot(levels, [r["truth"] for r in rows], color="k", lw=5, alpha=0.3,
            label="true ATE")
    low, high = np.array([r["ci"] for r in rows]).T
    ax.fill_between(levels, low, high, alpha=0.2, label="RATE 95% CI")
    ax.plot(levels, [r["rate"] for r in rows], "o-", label="RATE ATE")
    ax.plot(levels, [r["naive"] for r in rows], "^-", label="naive")
    ax.plot(levels, [r["single"] for r in rows], "v-", label="single-rewrite ATE")
    ax.set_title(name)
    ax.set_xlabel("confounding of sentiment with typos")
axes[0].set_ylabel("effect of sentiment on reward")
axes[0].legend(fontsize=8)
fig.tight_layout()
fig.savefig("plot_rate.png", dpi=110)
