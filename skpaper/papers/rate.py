"""RATE (Reber et al., ICML 2025): rewrites of rewrites remove rewrite bias.

The claims run in the offline synthetic world of
:func:`skpaper.datasets.make_synthetic_reviews`: sentiment is the attribute, typos
are an off-target attribute correlated with it, the reward is known (or a small
bag-of-words ridge model fitted to it), and :class:`skpaper.reward.LexiconRewriter`
plays the imperfect rewriter that also fixes typos and deletes "the". The
paper's own experiments use IMDB, ELI5, HH-RLHF and HelpSteer with LLM rewriters
and 8B reward models, which cannot run offline; this world reproduces the
mechanism the paper's semi-synthetic experiments test, not their numbers.
"""

from functools import partial

import numpy as np

from ..utils import parallel_map, spawn_seeds
from ._plotting import new_figure, save_figure
from ._registry import ClaimResult, ControlResult, register_claim, register_paper
from ._stats import binomial_band, mean_interval

SLUG = "rate"

register_paper(SLUG, "RATE: Causal Explainability of Reward Models with Imperfect "
               "Counterfactuals", module="skpaper.reward")

_CONFOUNDING_SETTINGS = {
    # (confounding levels, reviews per sample, seeds)
    "smoke": ((0.0, 0.8), 300, 2),
    "quick": ((0.0, 0.2, 0.4, 0.6, 0.8), 1000, 3),
    "full": (tuple(np.round(np.linspace(0.0, 1.0, 11), 2)), 4000, 10),
}
_COVERAGE_SETTINGS = {"smoke": (40, 200), "quick": (100, 1000), "full": (1000, 1000)}
_CONTROL_SETTINGS = {"smoke": (300, 1), "quick": (1000, 3), "full": (4000, 10)}
_CONTROL_CONFOUNDING = 0.8
#: Scale s of the saturating reward s * tanh(A / s) (ours): the sentiment effect
#: of a review (about 4.35 on average) then depends on its typos and length.
_SATURATION = 3.0
#: Relative error of an ATE estimate called "recovered" (ours).
_RELATIVE_TOLERANCE = 0.02


def _truth(reward, texts, w, counterfactuals):
    """Sample ATE, ATT and ATU of a perfect lexicon swap under ``reward``."""
    sign = np.where(w == 1, 1.0, -1.0)
    effect = sign * (reward(texts) - reward(counterfactuals))
    return {"ate": effect.mean(), "att": effect[w == 1].mean(), "atu": effect[w == 0].mean()}


def _rewards(texts):
    """The known reward and a ridge reward model fitted to it on ``texts``."""
    from ..datasets import synthetic_review_reward
    from ..reward import make_review_reward_model

    ridge = make_review_reward_model().fit(texts, synthetic_review_reward(texts))
    return {"known": synthetic_review_reward, "ridge": ridge.predict,
            "saturating": partial(synthetic_review_reward, saturation=_SATURATION)}


def _estimates(rate):
    return {"ate": rate.ate_, "att": rate.att_, "atu": rate.atu_, "naive": rate.naive_,
            "single_rewrite_att": rate.single_rewrite_att_}


def _one_sample(n, confounding, seed, trim_fraction=0.0):
    from ..datasets import make_synthetic_reviews
    from ..reward import RATE, LexiconRewriter

    texts, w, counterfactuals = make_synthetic_reviews(
        n, confounding=confounding, random_state=seed)
    out = {}
    for name, reward in _rewards(texts).items():
        rate = RATE(rewriter=LexiconRewriter(trim_fraction=trim_fraction),
                    reward_model=reward, random_state=seed).fit(texts, w)
        out[name] = {"truth": _truth(reward, texts, w, counterfactuals),
                     "estimate": _estimates(rate)}
    return out


def _within(errors, scale):
    """Two one-sided t bounds: |mean error| < _RELATIVE_TOLERANCE * scale."""
    margin = _RELATIVE_TOLERANCE * abs(float(scale))
    upper = mean_interval(errors, alternative="less", margin=margin)
    lower = mean_interval(errors, alternative="greater", margin=-margin)
    return {"mean_error": upper.mean, "margin": margin, "upper_bound": upper.bound,
            "lower_bound": lower.bound, "n": upper.n,
            "passed": bool(upper.passed and lower.passed)}


@register_claim(
    SLUG, "confounding-bias",
    "With sentiment confounded with typos (confounding 0.8) and a saturating, non-additive "
    "reward, RATE's ATE recovers the true effect of sentiment within 2%, while the "
    "single-rewrite estimate does not.",
    paper_statement=(
        "Sections 3-4: rewrites change off-target attributes; the rewrite of a rewrite "
        "cancels those changes, so RATE is unbiased when they are the same in x' and x'' and "
        "enter the reward additively, while the single-rewrite estimate keeps them; the "
        "semi-synthetic experiments show naive estimates tracking the confounding and RATE "
        "staying flat."
    ),
    check=(
        "reward 3 tanh(A/3) (A the additive reward), confounding 0.8, per seed: error of "
        "RATE's ATE against the perfect-swap ATE within +-2% of the true ATE (ours) by two "
        "one-sided 95% t bounds over the seeds"
    ),
    control="second rewrite removed: the single-rewrite ATT against the true ATT, same check",
)
def _claim_confounding_bias(scale, seed, out_dir):
    levels, n, n_seeds = _CONFOUNDING_SETTINGS[scale]
    seeds = spawn_seeds(seed, n_seeds)
    rows = {"known": [], "ridge": [], "saturating": []}
    confounded = []
    for level in levels:
        samples = [_one_sample(n, level, s) for s in seeds]
        if level == 0.8:
            confounded = samples
        for name in rows:
            truth = {k: np.mean([s[name]["truth"][k] for s in samples]) for k in
                     ("ate", "att", "atu")}
            est = {k: np.mean([s[name]["estimate"][k] for s in samples]) for k in
                   samples[0][name]["estimate"]}
            bias = {
                "rate_ate": max(abs(s[name]["estimate"]["ate"] - s[name]["truth"]["ate"])
                                for s in samples),
                "naive": np.mean([s[name]["estimate"]["naive"] - s[name]["truth"]["ate"]
                                  for s in samples]),
                "single_rewrite_att": np.mean(
                    [s[name]["estimate"]["single_rewrite_att"] - s[name]["truth"]["att"]
                     for s in samples]),
            }
            rows[name].append({"confounding": float(level), "truth": truth,
                               "estimate": est, "bias": bias})

    at = {name: next(r for r in rows[name] if r["confounding"] == 0.8) for name in rows}
    observed = {}
    for name, row in at.items():
        observed[f"{name}_true_ate"] = row["truth"]["ate"]
        observed[f"{name}_rate_ate"] = row["estimate"]["ate"]
        observed[f"{name}_rate_ate_abs_error_max"] = row["bias"]["rate_ate"]
        observed[f"{name}_naive_bias"] = row["bias"]["naive"]
        observed[f"{name}_single_rewrite_att_bias"] = row["bias"]["single_rewrite_att"]
    observed["table_known_reward"] = [
        [r["confounding"], r["truth"]["ate"], r["estimate"]["naive"],
         r["estimate"]["single_rewrite_att"], r["estimate"]["ate"], r["estimate"]["att"]]
        for r in rows["known"]]
    saturating = [s["saturating"] for s in confounded]
    true_ate = float(np.mean([s["truth"]["ate"] for s in saturating]))
    ours = _within([s["estimate"]["ate"] - s["truth"]["ate"] for s in saturating], true_ate)
    control = _within([s["estimate"]["single_rewrite_att"] - s["truth"]["att"]
                       for s in saturating], true_ate)
    observed["saturating_rate_ate"] = ours
    observed["saturating_rate_att_error"] = float(np.mean(
        [s["estimate"]["att"] - s["truth"]["att"] for s in saturating]))
    observed["saturating_naive_error"] = float(np.mean(
        [s["estimate"]["naive"] - s["truth"]["ate"] for s in saturating]))

    fig, axes = new_figure(1, 3, figsize=(13, 3.6))
    for ax, name in zip(axes, ("known", "ridge", "saturating")):
        x = [r["confounding"] for r in rows[name]]
        ax.plot(x, [r["truth"]["ate"] for r in rows[name]], color="k", lw=5, alpha=0.3,
                label="true ATE")
        ax.plot(x, [r["estimate"]["ate"] for r in rows[name]], "o-", label="RATE ATE")
        ax.plot(x, [r["estimate"]["att"] for r in rows[name]], "s--", label="RATE ATT")
        ax.plot(x, [r["estimate"]["naive"] for r in rows[name]], "^-", label="naive")
        ax.plot(x, [r["estimate"]["single_rewrite_att"] for r in rows[name]], "v-",
                label="single-rewrite ATT")
        ax.set_xlabel("confounding of sentiment with typos")
        ax.set_title({"known": "known additive reward", "ridge": "ridge reward model",
                      "saturating": f"saturating reward (s={_SATURATION:g})"}[name])
    axes[0].set_ylabel("effect of sentiment on reward")
    axes[0].legend(fontsize=8)
    artifact = save_figure(fig, out_dir, "rate_vs_confounding")
    return ClaimResult(
        observed=observed,
        expected={"saturating_rate_ate_error_within": f"+-{_RELATIVE_TOLERANCE:g} * true ATE",
                  "confounding": 0.8},
        passed=bool(ours["passed"]),
        control=ControlResult(observed={"saturating_single_rewrite_att": control},
                              passed=bool(control["passed"])),
        artifacts=[artifact],
        notes=(f"{n} reviews, {n_seeds} seed(s); synthetic world, not the paper's IMDB/LLM "
               "setting. Under the known additive reward and the ridge model (additive in "
               "tokens) the rewrite errors cancel exactly, so RATE's error there is 0 by "
               "construction (shown, not asserted: *_rate_ate_abs_error_max). Under the "
               "saturating reward the typo fixes and deleted words move each review along "
               "the tanh curve, so what RATE recovers is the effect of sentiment on the "
               "rewritten (typo-free) reviews: close to, but not exactly, the effect on the "
               "originals (see saturating_rate_ate and saturating_rate_att_error). The table "
               "rows are (confounding, true ATE, naive, single-rewrite ATT, RATE ATE, RATE "
               "ATT) for the known reward."),
    )


def _coverage_trial(seed, n, confounding, population_effect, alpha):
    from ..datasets import make_synthetic_reviews, synthetic_review_reward
    from ..reward import RATE, LexiconRewriter

    texts, w, _ = make_synthetic_reviews(n, confounding=confounding, random_state=seed)
    rate = RATE(rewriter=LexiconRewriter(), reward_model=synthetic_review_reward,
                alpha=alpha).fit(texts, w)
    return {key: bool(rate.ci_[key][0] <= population_effect <= rate.ci_[key][1])
            for key in ("ate", "att", "atu", "naive", "single_rewrite_att")}


@register_claim(
    SLUG, "ci-coverage",
    "The paired 95% confidence interval of RATE's ATE covers the population effect at the "
    "nominal rate over 100 independent samples (confounding 0.8).",
    paper_statement=(
        "RATE is a paired mean of per-unit rewrite differences, with a normal confidence "
        "interval (Section 3; the official code's standard errors)."
    ),
    check="coverage of the population ATE over 100 samples inside the two-sided 99% band "
          "of Binomial(100, 0.95), as a rate; known additive reward",
    control="second rewrite removed: the single-rewrite ATT interval, same band check",
)
def _claim_ci_coverage(scale, seed, out_dir):
    from ..datasets._reward import N_SENTIMENT_WORDS

    n_trials, n = _COVERAGE_SETTINGS[scale]
    # Under the known reward a perfect swap moves a review's reward by twice its
    # number of sentiment words, drawn uniformly, for either sentiment.
    population_effect = 2 * np.mean(np.arange(N_SENTIMENT_WORDS[0], N_SENTIMENT_WORDS[1] + 1))
    trials = parallel_map(_coverage_trial, spawn_seeds(seed, n_trials), n_jobs=1, n=n,
                          confounding=0.8, population_effect=population_effect, alpha=0.05)
    coverage = {key: float(np.mean([t[key] for t in trials])) for key in trials[0]}
    low, high = binomial_band(n_trials, 0.95, confidence=0.99)

    fig, ax = new_figure(figsize=(5.5, 3.4))
    names = list(coverage)
    ax.bar(names, [coverage[k] for k in names],
           color=["tab:blue"] * 3 + ["tab:gray"] * 2)
    ax.axhline(0.95, color="k", ls="--", lw=1, label="nominal 95%")
    ax.axhspan(low, high, color="tab:green", alpha=0.2, label="99% binomial band")
    ax.set_ylabel(f"coverage over {n_trials} samples")
    ax.set_ylim(0, 1.02)
    ax.tick_params(axis="x", labelrotation=20)
    ax.legend(fontsize=8, loc="center right")
    artifact = save_figure(fig, out_dir, "rate_ci_coverage")
    return ClaimResult(
        observed={f"coverage_{k}": v for k, v in coverage.items()}
        | {"n_trials": n_trials, "n_reviews": n, "population_effect": population_effect},
        expected={"coverage_ate_band": [low, high], "nominal": 0.95},
        passed=bool(low <= coverage["ate"] <= high),
        control=ControlResult(
            observed={"coverage_single_rewrite_att": coverage["single_rewrite_att"]},
            passed=bool(low <= coverage["single_rewrite_att"] <= high)),
        artifacts=[artifact],
        notes=("Coverage of the population effect (6 under the known reward); the naive and "
               "single-rewrite intervals are shown for contrast. With the known reward RATE's "
               "per-unit differences equal the true per-unit effects, so the coverage tests "
               "the paired normal interval itself."),
    )


@register_claim(
    SLUG, "non-idempotent-control",
    "When the rewriter's off-target change is not idempotent (it trims 10% of the filler "
    "words on every pass), RATE's ATT and ATU become biased in opposite directions while its "
    "ATE still cancels: the assumption is needed.",
    paper_statement=(
        "Key assumption (Section 3): the off-target changes of a rewrite are the same in x' "
        "and x''; RATE's unbiasedness rests on it."
    ),
    check="mean over seeds, known reward, confounding 0.8, trimming rewriter: ATT bias <= "
          "-0.03, ATU bias >= 0.03 and |ATE bias| <= 0.02 (thresholds ours)",
    control="idempotent rewriter (the assumption holds): the same check must fail",
)
def _claim_non_idempotent_control(scale, seed, out_dir):
    n, n_seeds = _CONTROL_SETTINGS[scale]
    seeds = spawn_seeds(seed, n_seeds)
    bias = {}
    for label, trim in (("idempotent", 0.0), ("non_idempotent", 0.1)):
        samples = [_one_sample(n, _CONTROL_CONFOUNDING, s, trim_fraction=trim)["known"]
                   for s in seeds]
        bias[label] = {k: float(np.mean([s["estimate"][k] - s["truth"][k] for s in samples]))
                       for k in ("ate", "att", "atu")}
    def check(b):
        return bool(b["att"] <= -0.03 and b["atu"] >= 0.03 and abs(b["ate"]) <= 0.02)

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
        observed={f"{label}_{k}_bias": v for label in bias for k, v in bias[label].items()},
        expected={"non_idempotent_att_bias_max": -0.03, "non_idempotent_atu_bias_min": 0.03,
                  "non_idempotent_ate_abs_bias_max": 0.02},
        passed=check(bias["non_idempotent"]),
        control=ControlResult(observed={f"idempotent_{k}_bias": v
                                        for k, v in bias["idempotent"].items()},
                              passed=check(bias["idempotent"])),
        artifacts=[artifact],
        notes=(f"{n} reviews, confounding {_CONTROL_CONFOUNDING}, mean of {n_seeds} seed(s), "
               "known reward. The second pass trims about 10% of the ~35 remaining filler "
               "words, 0.02 reward each, so ATT drops and ATU rises by about 0.07; the two "
               "groups are balanced, so the ATE nearly cancels. The biases are small next to "
               "the standard errors at this n (about 0.07)."),
    )
