import pickle

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy.stats import binomtest, norm
from sklearn.base import clone
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import FunctionTransformer

from skpaper.datasets import (
    make_synthetic_reviews,
    synthetic_review_reward,
    synthetic_review_sentiment,
)
from skpaper.reward import RATE, LexiconRewriter, make_review_reward_model


def _truth(reward, texts, w, counterfactuals):
    sign = np.where(w == 1, 1.0, -1.0)
    effect = sign * (reward(texts) - reward(counterfactuals))
    return effect.mean(), effect[w == 1].mean(), effect[w == 0].mean()


def _rate(**params):
    return RATE(rewriter=LexiconRewriter(), reward_model=synthetic_review_reward, **params)


class CountingRewriter:
    """A rewriter that records every batch it is given."""

    def __init__(self, base=None):
        self.base = base or LexiconRewriter()
        self.batches = []

    def __call__(self, texts, target_w):
        self.batches.append((list(texts), target_w))
        return self.base(texts, target_w)


def test_rate_fit_scores_matches_hand_computed():
    r_orig = [5.0, 4.0, 1.0, 0.0, 2.0]
    r_rewrite = [1.0, 0.5, 4.0, 3.0, 4.5]
    r_rewrite2 = [4.0, 3.5, 0.0, 1.0, 1.5]
    w = [1, 1, 0, 0, 0]
    rate = RATE().fit_scores(r_orig, r_rewrite, r_rewrite2, w)
    # ATT over w=1 of R(x'') - R(x'): 3.0 and 3.0; ATU over w=0 of R(x') - R(x''): 4, 2, 3.
    assert rate.att_ == pytest.approx(3.0)
    assert rate.atu_ == pytest.approx(3.0)
    assert rate.ate_ == pytest.approx(3.0)
    assert rate.naive_ == pytest.approx(4.5 - 1.0)
    assert rate.single_rewrite_att_ == pytest.approx(np.mean([4.0, 3.5]))
    assert rate.single_rewrite_atu_ == pytest.approx(np.mean([3.0, 3.0, 2.5]))
    np.testing.assert_allclose(rate.unit_effects_, [3.0, 3.0, 4.0, 2.0, 3.0])
    assert rate.se_["atu"] == pytest.approx(1.0 / np.sqrt(3))
    assert rate.se_["att"] == pytest.approx(0.0)
    assert rate.se_["ate"] == pytest.approx(np.std([3, 3, 4, 2, 3], ddof=1) / np.sqrt(5))
    naive_se = np.sqrt(np.var([5, 4], ddof=1) / 2 + np.var([1, 0, 2], ddof=1) / 3)
    assert rate.se_["naive"] == pytest.approx(naive_se)
    z = norm.ppf(0.975)
    low, high = rate.ci_["ate"]
    assert low == pytest.approx(3.0 - z * rate.se_["ate"])
    assert high == pytest.approx(3.0 + z * rate.se_["ate"])
    assert (rate.n_treated_, rate.n_untreated_) == (2, 3)
    np.testing.assert_array_equal(rate.classes_, [0, 1])


def test_rate_unpaired_se_follows_welch():
    rng = np.random.default_rng(0)
    r0, r1, r2 = rng.normal(size=(3, 40))
    w = np.repeat([0, 1], 20)
    paired = RATE().fit_scores(r0, r1, r2, w)
    unpaired = RATE(paired=False).fit_scores(r0, r1, r2, w)
    for key in ("ate", "att", "atu"):
        assert getattr(unpaired, f"{key}_") == pytest.approx(getattr(paired, f"{key}_"))
    t = w == 1
    expected_att = np.sqrt(np.var(r2[t], ddof=1) / 20 + np.var(r1[t], ddof=1) / 20)
    assert unpaired.se_["att"] == pytest.approx(expected_att)
    do_treat, do_control = np.where(t, r2, r1), np.where(t, r1, r2)
    expected_ate = np.sqrt(np.var(do_treat, ddof=1) / 40 + np.var(do_control, ddof=1) / 40)
    assert unpaired.se_["ate"] == pytest.approx(expected_ate)
    assert paired.se_["att"] == pytest.approx(np.std(r2[t] - r1[t], ddof=1) / np.sqrt(20))


@given(
    st.lists(st.tuples(st.floats(-1e3, 1e3), st.floats(-1e3, 1e3), st.floats(-1e3, 1e3),
                       st.booleans()), min_size=4, max_size=40),
    st.booleans(),
)
def test_rate_ate_is_weighted_att_and_atu(rows, paired):
    r0, r1, r2, w = (np.asarray(c) for c in zip(*rows))
    if min(w.sum(), (~w).sum()) < 2:
        w[:2], w[2:4] = True, False
    rate = RATE(paired=paired).fit_scores(r0, r1, r2, w)
    n1, n0 = w.sum(), (~w).sum()
    assert rate.ate_ == pytest.approx((n1 * rate.att_ + n0 * rate.atu_) / (n1 + n0), abs=1e-6)
    assert rate.ate_ == pytest.approx(rate.unit_effects_.mean(), abs=1e-6)
    for key, (low, high) in rate.ci_.items():
        assert low <= high, key


def test_rate_fit_matches_fit_scores_on_its_rewards():
    texts, w, _ = make_synthetic_reviews(200, confounding=0.5, random_state=0)
    fitted = _rate().fit(texts, w)
    offline = RATE().fit_scores(*fitted.rewards_.T, w)
    for key in ("ate_", "att_", "atu_", "naive_", "single_rewrite_att_"):
        assert getattr(offline, key) == pytest.approx(getattr(fitted, key))
    assert offline.se_ == pytest.approx(fitted.se_)
    assert not hasattr(offline, "rewrites_")
    np.testing.assert_allclose(fitted.rewards_[:, 0], synthetic_review_reward(texts))
    assert fitted.rewrites_.shape == fitted.rewrites2_.shape == texts.shape


@pytest.mark.parametrize("reward_kind", ["known", "ridge"])
def test_rate_recovers_truth_where_naive_and_single_rewrite_fail(reward_kind):
    texts, w, counterfactuals = make_synthetic_reviews(1000, confounding=0.8, random_state=0)
    reward = synthetic_review_reward
    if reward_kind == "ridge":
        reward = make_review_reward_model().fit(texts, synthetic_review_reward(texts)).predict
    rate = RATE(rewriter=LexiconRewriter(), reward_model=reward).fit(texts, w)
    true_ate, true_att, true_atu = _truth(reward, texts, w, counterfactuals)
    assert abs(rate.ate_ - true_ate) < 0.05
    assert abs(rate.att_ - true_att) < 0.05
    assert abs(rate.atu_ - true_atu) < 0.05
    # Typos sit mostly in positive reviews and the rewriter fixes them: both
    # comparators absorb the typo penalty (about 0.8 * 1.1 reward units).
    assert rate.naive_ - true_ate < -0.5
    assert rate.single_rewrite_att_ - true_att < -0.3


def test_rate_without_confounding_naive_is_unbiased_but_single_rewrite_is_not():
    texts, w, counterfactuals = make_synthetic_reviews(2000, confounding=0.0, random_state=1)
    rate = _rate().fit(texts, w)
    true_ate, true_att, _ = _truth(synthetic_review_reward, texts, w, counterfactuals)
    assert abs(rate.naive_ - true_ate) < 4 * rate.se_["naive"]
    assert rate.single_rewrite_att_ - true_att < -0.3
    assert rate.ate_ == pytest.approx(true_ate)


def test_rate_non_idempotent_rewriter_biases_att_and_atu_not_ate():
    texts, w, counterfactuals = make_synthetic_reviews(1000, confounding=0.8, random_state=2)
    rate = RATE(rewriter=LexiconRewriter(trim_fraction=0.1),
                reward_model=synthetic_review_reward, random_state=0).fit(texts, w)
    true_ate, true_att, true_atu = _truth(synthetic_review_reward, texts, w, counterfactuals)
    assert rate.att_ - true_att < -0.03
    assert rate.atu_ - true_atu > 0.03
    assert abs(rate.ate_ - true_ate) < 0.02


def test_rate_paired_ci_covers_population_effect():
    # Under the known reward the population effect is 2 * E[#sentiment words] = 6.
    covered = 0
    n_trials = 60
    for seed in range(n_trials):
        texts, w, _ = make_synthetic_reviews(200, confounding=0.8, random_state=seed)
        low, high = _rate().fit(texts, w).ci_["ate"]
        covered += low <= 6.0 <= high
    assert binomtest(covered, n_trials, 0.95, alternative="less").pvalue > 1e-3


def test_rate_flip_rate_reports_failed_rewrites():
    texts, w, _ = make_synthetic_reviews(100, random_state=0)

    def half_failing(batch, target_w):
        out = LexiconRewriter()(batch, target_w)
        return [new if i % 2 == 0 else old for i, (new, old) in enumerate(zip(out, batch))]

    rate = RATE(rewriter=half_failing, reward_model=synthetic_review_reward,
                attribute_classifier=synthetic_review_sentiment, cache=False).fit(texts, w)
    assert 0.4 <= rate.flip_rate_ <= 0.6
    perfect = _rate(attribute_classifier=synthetic_review_sentiment).fit(texts, w)
    assert perfect.flip_rate_ == 1.0 and perfect.flip_back_rate_ == 1.0
    assert not hasattr(_rate().fit(texts, w), "flip_rate_")


def test_rate_labels_texts_with_classifier_when_y_is_none():
    texts, w, _ = make_synthetic_reviews(100, random_state=3)
    with_y = _rate().fit(texts, w)
    without_y = _rate(attribute_classifier=synthetic_review_sentiment).fit(texts)
    assert without_y.ate_ == pytest.approx(with_y.ate_)
    with pytest.raises(ValueError, match="requires y to be passed"):
        _rate().fit(texts)


def test_rate_cache_rewrites_each_distinct_text_once():
    texts, w, _ = make_synthetic_reviews(20, random_state=4)
    texts, w = np.concatenate([texts, texts]), np.concatenate([w, w])
    counting = CountingRewriter()
    # Without the idempotence check's third rewrites: two passes only.
    rate = RATE(rewriter=counting, reward_model=synthetic_review_reward,
                idempotence_check=0).fit(texts, w)
    sent = [(text, target) for batch, target in counting.batches for text in batch]
    assert rate.n_rewriter_calls_ == len(sent) <= 40
    assert len(sent) == len(set(sent))
    uncached = RATE(rewriter=CountingRewriter(), reward_model=synthetic_review_reward,
                    cache=False, idempotence_check=0).fit(texts, w)
    assert uncached.n_rewriter_calls_ == 2 * len(texts)
    assert uncached.ate_ == pytest.approx(rate.ate_)
    # Batches carry one target label each.
    assert all(target in (0, 1) for _, target in counting.batches)


def test_rate_seeds_a_stochastic_rewriter():
    texts, w, _ = make_synthetic_reviews(60, random_state=5)
    texts, w = np.concatenate([texts, texts[:10]]), np.concatenate([w, w[:10]])
    trimming = LexiconRewriter(trim_fraction=0.2)
    a = RATE(rewriter=trimming, reward_model=synthetic_review_reward, random_state=0)
    b = clone(a)
    a.fit(texts, w)
    b.fit(texts, w)
    np.testing.assert_array_equal(a.rewrites2_, b.rewrites2_)
    c = clone(a).set_params(random_state=1).fit(texts, w)
    assert not np.array_equal(a.rewrites2_, c.rewrites2_)
    # A repeated text is rewritten once per seed, so its copies share one rewrite.
    np.testing.assert_array_equal(a.rewrites_[60:], a.rewrites_[:10])


def test_rate_passes_prompts_to_the_reward_model():
    texts, w, _ = make_synthetic_reviews(30, random_state=6)
    prompts = [f"prompt {i}" for i in range(30)]
    seen = []

    def reward(batch, prompts=None):
        seen.append(list(prompts))
        return synthetic_review_reward(batch) + np.array([len(p) for p in prompts])

    rate = RATE(rewriter=LexiconRewriter(), reward_model=reward).fit(texts, w, prompts=prompts)
    # Responses, rewrites, rewrites of rewrites, then the units of the idempotence check.
    assert seen == [prompts] * 3 + [[prompts[i] for i in rate.drift_units_]]
    plain = _rate().fit(texts, w)
    assert rate.ate_ == pytest.approx(plain.ate_)
    with pytest.raises(ValueError, match="one entry per response"):
        RATE(rewriter=LexiconRewriter(), reward_model=reward).fit(texts, w, prompts=prompts[:5])
    with pytest.raises(TypeError, match="prompts must be a sequence"):
        RATE(rewriter=LexiconRewriter(), reward_model=reward).fit(texts, w, prompts="p")


def test_rate_accepts_string_labels_and_passes_them_to_the_rewriter():
    texts, w, _ = make_synthetic_reviews(50, random_state=7)
    labels = np.where(w == 1, "positive", "negative")
    targets = []

    def rewriter(batch, target_w):
        targets.append(target_w)
        return LexiconRewriter()(batch, int(target_w == "positive"))

    rate = RATE(rewriter=rewriter, reward_model=synthetic_review_reward).fit(texts, labels)
    np.testing.assert_array_equal(rate.classes_, ["negative", "positive"])
    assert set(targets) == {"negative", "positive"}
    assert rate.ate_ == pytest.approx(_rate().fit(texts, w).ate_)


def test_rate_on_numeric_rows_sets_n_features_in():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(30, 3))
    w = (X[:, 0] > 0).astype(int)

    def rewriter(rows, target_w):
        rows = np.array(rows)
        rows[:, 0] = np.abs(rows[:, 0]) * (1 if target_w == 1 else -1)
        return rows

    rate = RATE(rewriter=rewriter, reward_model=lambda rows: 2 * rows[:, 0] + rows[:, 1])
    rate.fit(X, w)
    assert rate.n_features_in_ == 3
    assert rate.rewrites_.shape == (30, 3)
    np.testing.assert_allclose(rate.unit_effects_, 4 * np.abs(X[:, 0]))


def test_rate_clone_pickle_pipeline_and_grid_search():
    texts, w, _ = make_synthetic_reviews(120, random_state=8)
    model = make_review_reward_model().fit(texts, synthetic_review_reward(texts))
    rate = RATE(rewriter=LexiconRewriter(), reward_model=model.predict).fit(texts, w)
    restored = pickle.loads(pickle.dumps(rate))
    assert restored.ate_ == rate.ate_
    refit = clone(rate).fit(texts, w)
    assert refit.ate_ == pytest.approx(rate.ate_)
    pipe = make_pipeline(FunctionTransformer(lambda x: x), clone(rate)).fit(texts, w)
    assert pipe[-1].ate_ == pytest.approx(rate.ate_)

    def tight_ci(estimator, X, y):
        return -estimator.se_["ate"]

    search = GridSearchCV(clone(rate), {"rewriter__trim_fraction": [0.0, 0.1]},
                          scoring=tight_ci, cv=2).fit(texts, w)
    assert search.best_params_["rewriter__trim_fraction"] in (0.0, 0.1)


@pytest.mark.parametrize(
    "y, match",
    [
        (np.arange(10) % 3, "exactly two values"),
        (np.zeros(10), "1 class"),
        (np.r_[1, np.zeros(9)], "at least 2 responses"),
        (np.r_[np.nan, np.zeros(4), np.ones(5)], "NaN"),
    ],
)
def test_rate_fit_rejects_non_binary_w(y, match):
    texts, _, _ = make_synthetic_reviews(10, random_state=0)
    with pytest.raises(ValueError, match=match):
        _rate().fit(texts, y)
    with pytest.raises(ValueError, match=match):
        RATE().fit_scores(np.zeros(10), np.zeros(10), np.zeros(10), y)


def test_rate_fit_rejects_bad_callables_and_outputs():
    texts, w, _ = make_synthetic_reviews(20, random_state=0)
    with pytest.raises(ValueError, match="rewriter must be a callable"):
        RATE(reward_model=synthetic_review_reward).fit(texts, w)
    with pytest.raises(ValueError, match="reward_model must be a callable"):
        RATE(rewriter=LexiconRewriter()).fit(texts, w)
    with pytest.raises(ValueError, match="returned 9 texts for a batch of 10"):
        RATE(rewriter=lambda t, target: LexiconRewriter()(t, target)[:-1],
             reward_model=synthetic_review_reward).fit(texts, np.repeat([0, 1], 10))
    with pytest.raises(TypeError, match="sequence of rewritten texts"):
        RATE(rewriter=lambda t, target: None, reward_model=synthetic_review_reward).fit(texts, w)

    def nan_reward(batch):
        scores = synthetic_review_reward(batch)
        scores[0] = np.nan
        return scores

    with pytest.raises(ValueError, match="non-finite scores"):
        RATE(rewriter=LexiconRewriter(), reward_model=nan_reward).fit(texts, w)
    with pytest.raises(ValueError, match="one score per text"):
        RATE(rewriter=LexiconRewriter(),
             reward_model=lambda batch: np.zeros(len(batch) + 1)).fit(texts, w)
    with pytest.raises(TypeError, match="real scores"):
        RATE(rewriter=LexiconRewriter(),
             reward_model=lambda batch: ["high"] * len(batch)).fit(texts, w)
    with pytest.raises(ValueError, match="one label per text"):
        _rate(attribute_classifier=lambda batch: [0, 1]).fit(texts, w)
    with pytest.raises(ValueError, match="'alpha' parameter"):
        _rate(alpha=1.5).fit(texts, w)
    with pytest.raises(ValueError, match="'rewriter' parameter"):
        RATE(rewriter="gpt", reward_model=synthetic_review_reward).fit(texts, w)


def test_rate_fit_scores_rejects_bad_scores():
    good = np.arange(6.0)
    w = np.array([0, 0, 0, 1, 1, 1])
    with pytest.raises(ValueError, match="r_rewrite contains NaN"):
        RATE().fit_scores(good, np.r_[np.nan, good[1:]], good, w)
    with pytest.raises(ValueError, match="r_orig contains infinity"):
        RATE().fit_scores(np.r_[np.inf, good[1:]], good, good, w)
    with pytest.raises(ValueError, match="inconsistent numbers of samples"):
        RATE().fit_scores(good, good[:5], good, w)
    with pytest.raises(ValueError, match="must be 1-D"):
        RATE().fit_scores(good.reshape(3, 2), good.reshape(3, 2), good.reshape(3, 2), w[:3])
