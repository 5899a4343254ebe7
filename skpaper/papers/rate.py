"""RATE (Reber et al., ICML 2025): rewrites of rewrites remove rewrite bias.

The claims run in the offline synthetic world of
:func:`skpaper.datasets.make_synthetic_reviews`: sentiment is the attribute, typos
are an off-target attribute correlated with it, the reward is known (or a small
bag-of-words ridge model fitted to it), and :class:`skpaper.reward.LexiconRewriter`
plays the imperfect rewriter that also fixes typos and deletes "the". The
paper's own experiments use IMDB, ELI5, HH-RLHF and HelpSteer with LLM rewriters
and 8B reward models, which cannot run offline; this world reproduces the
mechanism the paper's semi-synthetic experiments test, not their numbers.

Two reward models were not designed around RATE's cancellation: a saturating
reward (``s tanh(A / s)``) and one with an interaction (sentiment counts more
in longer reviews, while the rewriter changes the length). Under them RATE's
per-unit differences are not the true per-unit effects, so recovering the
effect is not guaranteed by construction; they lie outside the paper's
assumption (off-target changes entering the reward additively), so the
confounding claim reports them beside its asserted world. The asserted world
and the coverage claim use the known additive reward plus an idiosyncratic
per-text score (a learned model's error): within the assumption, yet the unit
differences are not the true effects.
"""

import zlib
from functools import partial

import numpy as np

from ._comparison import EffectOfInterest, coverage_comparison, run_comparison
from ._plotting import new_figure, save_figure
from ._registry import ClaimResult, register_claim, register_paper, shared_cache
from ._stats import claim_seeds

SLUG = "rate"

register_paper(SLUG, "RATE: Causal Explainability of Reward Models with Imperfect "
               "Counterfactuals", module="skpaper.reward")

_CONFOUNDING_SETTINGS = {
    # (confounding levels of the figure, reviews per sample, looks in seeds, seeds per level)
    "smoke": ((0.0, 0.8), 300, (2,), 1),
    # Quick looks from a power figure on a calibration setting (500 reviews, confounding
    # 0.6, seed 12345, key 998; not the evaluation runs): the additive noisy world's
    # relative error had mean 0.014, SD 0.0095, so seeds_needed gives 17 (80% power)
    # and 23 (90%) at the 2% margin; the evaluation's 1000 reviews halve the variance.
    "quick": ((0.0, 0.4, 0.8), 1000, (6, 12, 24), 2),
    "full": (tuple(np.round(np.linspace(0.0, 1.0, 11), 2)), 4000, (5, 10, 20), 5),
}
#: (looks in trials, reviews per trial)
#: Quick looks from a power figure on a calibration setting (300 reviews, confounding 0.6,
#: 600 trials of seed 12345, key 999; not the evaluation runs): coverage 0.948, SD 0.22,
#: so the nearer margin (0.92) needs 380 trials for 80% power and 526 for 90%.
_COVERAGE_SETTINGS = {"smoke": ((20,), 200), "quick": ((200, 400, 800), 200),
                      "full": ((500, 1000, 2000), 1000)}
_CONTROL_SETTINGS = {"smoke": (300, 1), "quick": (1000, 3), "full": (4000, 10)}
_CONFOUNDING = 0.8
#: Scale s of the saturating reward s * tanh(A / s) (ours): the sentiment effect
#: of a review (about 4.35 on average) then depends on its typos and length.
_SATURATION = 3.0
#: Interaction (ours): sentiment words weigh 1 + _INTERACTION * (length - 40) / 40.
_INTERACTION = 0.5
_REFERENCE_LENGTH = 40.0
#: SD of the per-text noise of the coverage claim's reward model (ours).
_NOISE_SD = 1.0
_RELATIVE_TOLERANCE = 0.02
_BIAS_EOI = EffectOfInterest(
    _RELATIVE_TOLERANCE, "ours",
    "an error of 2% of the true effect: the largest that would still let RATE rank "
    "attributes by their effect as the paper uses it; equivalence margin")
_NOMINAL = 0.95
_UNDER_MARGIN = 0.92
_OVER_MARGIN = 0.98
_COVERAGE_EOI = EffectOfInterest(
    _NOMINAL, "paper",
    "the nominal 95% of the paper's normal confidence interval (Section 3); reproduced when "
    "coverage is shown above 0.92 and below 0.98 (three points either side, ours)")


def _interaction_reward(texts, prompts=None):
    from ..datasets import synthetic_review_reward
    from ..datasets._reward import _review_counts

    counts = _review_counts(texts)
    weight = _INTERACTION * (counts[:, 3] - _REFERENCE_LENGTH) / _REFERENCE_LENGTH
    return synthetic_review_reward(texts) + weight * (counts[:, 0] - counts[:, 1])


def _noisy_reward(texts, prompts=None):
    """The known reward plus a fixed pseudo-random score per text (an idiosyncratic error
    of a learned reward model): per-unit rewrite differences are no longer the true
    effects, while the population effect stays 6."""
    from ..datasets import synthetic_review_reward

    noise = [np.random.default_rng(zlib.crc32(t.encode())).normal(0.0, _NOISE_SD)
             for t in texts]
    return synthetic_review_reward(texts) + np.asarray(noise)


def _reward(world, texts):
    from ..datasets import synthetic_review_reward
    from ..reward import make_review_reward_model

    if world == "known":
        return synthetic_review_reward
    if world == "ridge":
        return make_review_reward_model().fit(texts, synthetic_review_reward(texts)).predict
    if world == "noisy":
        return _noisy_reward
    if world == "saturating":
        return partial(synthetic_review_reward, saturation=_SATURATION)
    return _interaction_reward


def _truth(reward, texts, w, counterfactuals):
    """Sample ATE, ATT and ATU of a perfect lexicon swap under ``reward``."""
    sign = np.where(w == 1, 1.0, -1.0)
    effect = sign * (reward(texts) - reward(counterfactuals))
    return {"ate": effect.mean(), "att": effect[w == 1].mean(), "atu": effect[w == 0].mean()}


def _estimates(rate):
    return {"ate": rate.ate_, "att": rate.att_, "atu": rate.atu_, "naive": rate.naive_,
            "single_rewrite_att": rate.single_rewrite_att_}


@shared_cache(maxsize=256)
def _sample(n, confounding, seed, worlds, trim_fraction=0.0):
    from ..datasets import make_synthetic_reviews
    from ..reward import RATE, LexiconRewriter

    texts, w, counterfactuals = make_synthetic_reviews(
        n, confounding=confounding, random_state=seed)
    out = {}
    for world in worlds:
        reward = _reward(world, texts)
        rate = RATE(rewriter=LexiconRewriter(trim_fraction=trim_fraction),
                    reward_model=reward, random_state=seed).fit(texts, w)
        out[world] = {"truth": _truth(reward, texts, w, counterfactuals),
                      "estimate": _estimates(rate)}
    return out


_WORLDS = ("known", "ridge", "noisy", "saturating", "interaction")
#: Worlds outside the paper's assumption (off-target changes not additive in the reward).
_OUT_OF_ASSUMPTION = ("saturating", "interaction")
_TITLES = {"known": "known additive reward", "ridge": "ridge reward model",
           "noisy": f"additive reward + per-text noise (sd {_NOISE_SD:g})",
           "saturating": f"saturating reward (s={_SATURATION:g})",
           "interaction": f"interaction reward (rho={_INTERACTION:g})"}


@register_claim(
    SLUG, "confounding-bias",
    "With sentiment confounded with typos (confounding 0.8) and a reward additive in the "
    "off-target changes but with an idiosyncratic per-text error (the paper's assumption, "
    "with a learned model's noise), RATE's ATE recovers the true effect of sentiment within "
    "2%, while the single-rewrite estimate does not.",
    paper_statement=(
        "Sections 3-4: rewrites change off-target attributes; the rewrite of a rewrite "
        "cancels those changes, so RATE is unbiased when they are the same in x' and x'' and "
        "enter the reward additively, while the single-rewrite estimate keeps them; the "
        "semi-synthetic experiments show naive estimates tracking the confounding and RATE "
        "staying flat."
    ),
    check=(
        "under the additive reward + a fixed N(0, 1) score per text, confounding 0.8, on "
        "seeds added in looks (6, 12, 24 at quick scale): the one-sided upper t bound of the "
        "mean |RATE ATE - true ATE| / |true ATE| is below 0.02 (contradicted when its lower "
        "bound is above 0.02); the saturating and interaction rewards (outside the paper's "
        "additivity assumption) are the same check, reported, not asserted"
    ),
    control="second rewrite removed: |single-rewrite ATT - true ATT| / |true ATT|, same check",
    effect_of_interest=_BIAS_EOI,
)
def _claim_confounding_bias(scale, seed, out_dir):

    levels, n, looks, per_level = _CONFOUNDING_SETTINGS[scale]

    def relative(world, estimate, truth):
        def arm(s):
            r = _sample(n, _CONFOUNDING, s, _WORLDS)[world]
            return abs(r["estimate"][estimate] - r["truth"][truth]) / abs(r["truth"][truth])
        return arm

    comparisons = {}
    for world in ("noisy",) + _OUT_OF_ASSUMPTION:
        comparisons[world] = run_comparison(
            {"RATE ATE": relative(world, "ate", "ate"),
             "single-rewrite ATT": relative(world, "single_rewrite_att", "att")},
            method="RATE ATE", baseline=None, control_method="single-rewrite ATT",
            seed=seed, looks=looks, key=(int(_CONFOUNDING * 100),),
            effect_of_interest=_BIAS_EOI, alternative="less", margin=_RELATIVE_TOLERANCE,
            metric="|estimate - truth| / |truth|")

    # The figure: the sweep over confounding on the first seeds of the check.
    figure_seeds = claim_seeds(seed, per_level, int(_CONFOUNDING * 100))
    rows = {world: [] for world in _WORLDS}
    for level in levels:
        samples = [_sample(n, float(level), s, _WORLDS) for s in figure_seeds]
        for world in _WORLDS:
            mean = {k: float(np.mean([s[world]["estimate"][k] for s in samples]))
                    for k in samples[0][world]["estimate"]}
            truth = float(np.mean([s[world]["truth"]["ate"] for s in samples]))
            rows[world].append({"confounding": float(level), "true_ate": truth, **mean})
    exact = {world: max(abs(_sample(n, _CONFOUNDING, s, _WORLDS)[world]["estimate"]["ate"]
                            - _sample(n, _CONFOUNDING, s, _WORLDS)[world]["truth"]["ate"])
                        for s in figure_seeds) for world in ("known", "ridge")}

    fig, axes = new_figure(1, 5, figsize=(20, 3.6))
    for ax, world in zip(axes, _WORLDS):
        x = [r["confounding"] for r in rows[world]]
        ax.plot(x, [r["true_ate"] for r in rows[world]], color="k", lw=5, alpha=0.3,
                label="true ATE")
        for key, style, label in (("ate", "o-", "RATE ATE"), ("att", "s--", "RATE ATT"),
                                  ("naive", "^-", "naive"),
                                  ("single_rewrite_att", "v-", "single-rewrite ATT")):
            ax.plot(x, [r[key] for r in rows[world]], style, label=label)
        ax.set_xlabel("confounding of sentiment with typos")
        ax.set_title(_TITLES[world], fontsize=9)
    axes[0].set_ylabel("effect of sentiment on reward")
    axes[0].legend(fontsize=7)
    artifact = save_figure(fig, out_dir, "rate_vs_confounding")
    out_of_assumption = {}
    for world in _OUT_OF_ASSUMPTION:
        c = comparisons[world]
        out_of_assumption[world] = {"check_verdict": c.verdict,
                                    "control_verdict": c.control_verdict, **c.observed()}
    return comparisons["noisy"].claim_result(
        observed={"sweep": rows, "additive_rate_ate_abs_error_max": exact,
                  "out_of_assumption_reported": out_of_assumption, "n_reviews": n},
        artifacts=[artifact],
        notes=(f"{n} reviews per seed; synthetic world, not the paper's IMDB/LLM setting. "
               "Under the known additive reward and the ridge model (additive in tokens) "
               "the rewrite errors cancel exactly, so RATE's error there is 0 by "
               "construction (shown, not asserted: additive_rate_ate_abs_error_max); the "
               "asserted world adds a fixed pseudo-random score per text, so RATE's unit "
               "differences are not the true effects and its error is a finite-sample one. "
               "Outside the paper's assumption (reported, not asserted: "
               "out_of_assumption_reported), under the saturating and the interaction "
               "rewards the typo fixes and deleted words change the effect of sentiment "
               "itself, so RATE recovers the effect on the rewritten reviews, not exactly "
               "the effect on the originals (the interaction world's error exceeds 2%). The "
               f"sweep averages {per_level} seed(s) per confounding level."),
    )


def _coverage_trial(seed, n, confounding, population_effect, alpha, reward):
    from ..datasets import make_synthetic_reviews
    from ..reward import RATE, LexiconRewriter

    texts, w, _ = make_synthetic_reviews(n, confounding=confounding, random_state=seed)
    rate = RATE(rewriter=LexiconRewriter(), reward_model=reward, alpha=alpha).fit(texts, w)
    return {key: bool(rate.ci_[key][0] <= population_effect <= rate.ci_[key][1])
            for key in ("ate", "att", "atu", "naive", "single_rewrite_att")}


@shared_cache(maxsize=4096)
def _covered(seed, n):
    from ..datasets._reward import N_SENTIMENT_WORDS

    # A perfect swap moves the known reward by twice the number of sentiment words,
    # drawn uniformly; the per-text noise has mean 0 whatever the sentiment.
    effect = 2 * np.mean(np.arange(N_SENTIMENT_WORDS[0], N_SENTIMENT_WORDS[1] + 1))
    return _coverage_trial(seed, n, _CONFOUNDING, effect, 0.05, _noisy_reward)


@register_claim(
    SLUG, "ci-coverage",
    "The paired 95% confidence interval of RATE's ATE covers the population effect at the "
    "nominal rate (between 92% and 98%) over independent samples (confounding 0.8), under a "
    "reward model whose per-unit rewrite differences are not the true effects.",
    paper_statement=(
        "RATE is a paired mean of per-unit rewrite differences, with a normal confidence "
        "interval (Section 3; the official code's standard errors)."
    ),
    check="on trials added in looks (200, 400 at quick scale), 200 reviews each, reward = "
          "known reward + a fixed N(0, 1) score per text: the one-sided lower t bound of the "
          "ATE coverage is above 0.92 and the upper bound below 0.98 (contradicted when the "
          "upper bound is below 0.95 or the lower bound above 0.95)",
    control="second rewrite removed: the single-rewrite ATT interval, same under-coverage "
            "check",
    effect_of_interest=_COVERAGE_EOI,
)
def _claim_ci_coverage(scale, seed, out_dir):
    looks, n = _COVERAGE_SETTINGS[scale]
    arms = {key: (lambda k: lambda s: float(_covered(s, n)[k]))(key)
            for key in ("ate", "single_rewrite_att", "att", "atu", "naive")}
    under, over, verdict = coverage_comparison(
        arms, method="ate", control_method="single_rewrite_att", seed=seed, looks=looks,
        effect_of_interest=_COVERAGE_EOI, under=_UNDER_MARGIN, over=_OVER_MARGIN,
        metric="coverage of the population ATE")
    coverage = {key: float(np.mean(v)) for key, v in under.values.items()}

    fig, ax = new_figure(figsize=(5.5, 3.4))
    names = list(coverage)
    ax.bar(names, [coverage[k] for k in names],
           color=["tab:blue", "tab:gray", "tab:blue", "tab:blue", "tab:gray"])
    ax.axhline(_NOMINAL, color="k", ls="--", lw=1, label="nominal 95%")
    ax.axhspan(_UNDER_MARGIN, _OVER_MARGIN, color="tab:green", alpha=0.2,
               label="accepted coverage")
    ax.set_ylabel(f"coverage over {len(under.seeds)} samples")
    ax.set_ylim(0, 1.02)
    ax.tick_params(axis="x", labelrotation=20)
    ax.legend(fontsize=8, loc="center right")
    artifact = save_figure(fig, out_dir, "rate_ci_coverage")
    result = under.claim_result(
        observed={"coverage": coverage, "over_coverage_check": over.to_dict(),
                  "n_reviews": n, "population_effect": 6.0, "noise_sd": _NOISE_SD},
        expected={"reproduced": f"lower bound > {_UNDER_MARGIN} and upper bound < "
                                f"{_OVER_MARGIN}",
                  "contradicted": f"upper bound < {_NOMINAL} or lower bound > {_NOMINAL}"},
        artifacts=[artifact],
        notes="Coverage of the population effect 6; the naive, ATT, ATU and single-rewrite "
              "intervals are shown for contrast. The reward's per-text noise makes each "
              "unit's rewrite difference the true effect plus the noise of two texts, so the "
              "interval's standard error is tested, not only the central limit theorem.")
    result.verdict, result.passed = verdict, verdict == "pass"
    return result


@register_claim(
    SLUG, "non-idempotent-control",
    "When the rewriter's off-target change is not idempotent (it trims 10% of the filler "
    "words on every pass), RATE's ATT and ATU become biased in opposite directions while its "
    "ATE nearly cancels: a demonstration of the assumption, built into the simulated world.",
    paper_statement=(
        "Key assumption (Section 3): the off-target changes of a rewrite are the same in x' "
        "and x''; RATE's unbiasedness rests on it."
    ),
    check="reported: mean bias of RATE's ATE, ATT and ATU over seeds, known reward, "
          "confounding 0.8, idempotent and trimming rewriters. The trimming bias of about "
          "0.06 follows from how the world is built, so it is not a reproduction.",
    reported=True,
)
def _claim_non_idempotent_control(scale, seed, out_dir):
    n, n_seeds = _CONTROL_SETTINGS[scale]
    seeds = claim_seeds(seed, n_seeds, 1)
    bias = {}
    for label, trim in (("idempotent", 0.0), ("non_idempotent", 0.1)):
        samples = [_sample(n, _CONFOUNDING, s, ("known",), trim_fraction=trim)["known"]
                   for s in seeds]
        bias[label] = {k: float(np.mean([s["estimate"][k] - s["truth"][k] for s in samples]))
                       for k in ("ate", "att", "atu")}

    fig, ax = new_figure(figsize=(5, 3.4))
    width = 0.38
    x = np.arange(3)
    for offset, label in ((-width / 2, "idempotent"), (width / 2, "non_idempotent")):
        ax.bar(x + offset, [bias[label][k] for k in ("ate", "att", "atu")], width,
               label=label.replace("_", "-") + " rewriter")
    ax.axhline(0, color="k", lw=0.8)
    ax.set_xticks(x, ["ATE", "ATT", "ATU"])
    ax.set_ylabel("RATE estimate - truth")
    ax.legend(fontsize=8)
    artifact = save_figure(fig, out_dir, "rate_negative_control")
    return ClaimResult(
        observed={f"{label}_{k}_bias": v for label in bias for k, v in bias[label].items()}
        | {"seeds": seeds},
        expected={"non_idempotent": "ATT below 0 and ATU above 0, ATE near 0 (reported)"},
        passed=None,
        artifacts=[artifact],
        notes=(f"{n} reviews, confounding {_CONFOUNDING}, mean of {n_seeds} seed(s), "
               "known reward. The second pass trims about 10% of the ~35 remaining filler "
               "words, 0.02 reward each, so ATT drops and ATU rises by about 0.07; the two "
               "groups are balanced, so the ATE nearly cancels. The biases are small next to "
               "the standard errors at this n (about 0.07)."),
    )
