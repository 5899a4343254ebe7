"""RATE against what a user would reach for instead: scipy's t-tests.

No package implements RATE, so the peers are a difference in means with
``scipy.stats.ttest_ind`` (the naive estimate) and a single counterfactual
rewrite with ``scipy.stats.ttest_rel`` (the single-rewrite ATT), on the
synthetic reviews with sentiment confounded with typos (confounding 0.8) and
the known reward. Besides the time, each side reports its estimate, its bias
against the synthetic truth, whether its 95% interval covers the truth, and its
cost in rewriter and reward calls (RATE: 2n and 3n).

Run: ``python benchmarks/bench_reward.py [--quick] [--json out.json]``.
"""

import numpy as np
from _harness import Case, main_cli
from scipy.stats import ttest_ind, ttest_rel

from skpaper.datasets import make_synthetic_reviews, synthetic_review_reward
from skpaper.reward import RATE, LexiconRewriter

CONFOUNDING = 0.8
#: Under the known reward the population effect of sentiment is 2 * E[#sentiment words].
POPULATION_EFFECT = 6.0


def _sample(n, seed):
    texts, w, counterfactuals = make_synthetic_reviews(n, confounding=CONFOUNDING,
                                                       random_state=seed)
    sign = np.where(w == 1, 1.0, -1.0)
    effect = sign * (synthetic_review_reward(texts) - synthetic_review_reward(counterfactuals))
    return texts, w, effect


def _figures(estimate, truth, low, high, rewriter_calls, reward_calls):
    return {"estimate": float(estimate), "abs_bias": float(abs(estimate - truth)),
            "ci_covers_truth": bool(low <= truth <= high),
            "rewriter_calls": int(rewriter_calls), "reward_calls": int(reward_calls)}


def make_cases(quick):
    n = 1000 if quick else 4000
    n_coverage = 20 if quick else 100
    texts, w, effect = _sample(n, 0)
    true_ate, true_att = effect.mean(), effect[w == 1].mean()
    treated = w == 1

    def rate_ate():
        rate = RATE(rewriter=LexiconRewriter(), reward_model=synthetic_review_reward)
        rate.fit(texts, w)
        return _figures(rate.ate_, true_ate, *rate.ci_["ate"], rate.n_rewriter_calls_, 3 * n)

    def naive_ttest_ind():
        rewards = synthetic_review_reward(texts)
        test = ttest_ind(rewards[treated], rewards[~treated], equal_var=False)
        estimate = rewards[treated].mean() - rewards[~treated].mean()
        return _figures(estimate, true_ate, *test.confidence_interval(0.95), 0, n)

    def rate_att():
        rate = RATE(rewriter=LexiconRewriter(), reward_model=synthetic_review_reward)
        rate.fit(texts, w)
        return _figures(rate.att_, true_att, *rate.ci_["att"], rate.n_rewriter_calls_, 3 * n)

    def single_rewrite_ttest_rel():
        originals = texts[treated]
        rewrites = LexiconRewriter()(originals, 0)
        r_orig = synthetic_review_reward(originals)
        r_rewrite = synthetic_review_reward(rewrites)
        test = ttest_rel(r_orig, r_rewrite)
        return _figures(np.mean(r_orig - r_rewrite), true_att, *test.confidence_interval(0.95),
                        len(originals), 2 * len(originals))

    def by_hand():
        rewriter = LexiconRewriter()
        rewrites = np.empty(n, dtype=object)
        rewrites2 = np.empty(n, dtype=object)
        for label in (0, 1):
            rewrites[w == label] = rewriter(texts[w == label], 1 - label)
            rewrites2[w == label] = rewriter(list(rewrites[w == label]), label)
        r0, r1, r2 = (synthetic_review_reward(list(t)) for t in (texts, rewrites, rewrites2))
        d = np.where(treated, 1.0, -1.0) * (r2 - r1)
        return {"estimate": float(d.mean()), "naive": float(r0[treated].mean()
                                                            - r0[~treated].mean())}

    samples = [_sample(n, seed) for seed in range(1, n_coverage + 1)]

    def rate_coverage():
        covered = 0
        for texts_s, w_s, _ in samples:
            low, high = RATE(rewriter=LexiconRewriter(),
                             reward_model=synthetic_review_reward).fit(texts_s, w_s).ci_["ate"]
            covered += low <= POPULATION_EFFECT <= high
        return {"coverage": covered / len(samples), "samples": len(samples)}

    def naive_coverage():
        covered = 0
        for texts_s, w_s, _ in samples:
            rewards = synthetic_review_reward(texts_s)
            low, high = ttest_ind(rewards[w_s == 1], rewards[w_s == 0],
                                  equal_var=False).confidence_interval(0.95)
            covered += low <= POPULATION_EFFECT <= high
        return {"coverage": covered / len(samples), "samples": len(samples)}

    params = {"n": n, "confounding": CONFOUNDING}
    return [
        Case("overhead: RATE.fit vs the same calls by hand", rate_ate, by_hand,
             "hand-written loop", items=n, params=params),
        Case("ATE: RATE vs naive ttest_ind", rate_ate, naive_ttest_ind, "scipy ttest_ind",
             items=n, params=params),
        Case("ATT: RATE vs single rewrite ttest_rel", rate_att, single_rewrite_ttest_rel,
             "scipy ttest_rel", items=n, params=params),
        Case(f"95% CI coverage, {n_coverage} samples", rate_coverage, naive_coverage,
             "scipy ttest_ind", items=n * n_coverage, params=params),
    ]


def _summary(results):
    print("\n|bias| against the synthetic truth, coverage, and time ratios (peer / RATE):")
    for row in results:
        ours, peer = row.get("ours_figures") or {}, row.get("peer_figures") or {}
        if "naive" in peer:
            print(f"  {row['case']}: time ratio hand/RATE {row['speedup_vs_peer']:.3g}")
        elif "abs_bias" in ours:
            print(f"  {row['case']}: RATE {ours['abs_bias']:.3g}, "
                  f"{row['peer']} {peer['abs_bias']:.3g}; time ratio peer/RATE "
                  f"{row['speedup_vs_peer']:.3g}")
        elif "coverage" in ours:
            print(f"  {row['case']}: RATE {ours['coverage']:.2f}, {row['peer']} "
                  f"{peer['coverage']:.2f}")


if __name__ == "__main__":
    _summary(main_cli(make_cases, __doc__.splitlines()[0]))
