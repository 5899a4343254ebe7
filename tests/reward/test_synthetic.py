import subprocess
import sys

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from skpaper.datasets import (
    make_synthetic_reviews,
    synthetic_review_reward,
    synthetic_review_sentiment,
)
from skpaper.datasets._reward import FILLER_WORDS, NEGATIVE_WORDS, POSITIVE_WORDS
from skpaper.reward import LexiconRewriter, make_review_reward_model

_WORDS = st.sampled_from(FILLER_WORDS + POSITIVE_WORDS + NEGATIVE_WORDS)
_TOKENS = st.one_of(_WORDS, st.sampled_from(FILLER_WORDS).map(lambda t: t + "~"))
_REVIEWS = st.lists(_TOKENS, min_size=1, max_size=30).map(" ".join)


def test_make_synthetic_reviews_is_seeded_and_shaped():
    a = make_synthetic_reviews(50, confounding=0.3, random_state=0)
    b = make_synthetic_reviews(50, confounding=0.3, random_state=0)
    c = make_synthetic_reviews(50, confounding=0.3, random_state=1)
    for x, y in zip(a, b):
        np.testing.assert_array_equal(x, y)
    assert not np.array_equal(a[0], c[0])
    texts, w, counterfactuals = a
    assert texts.shape == w.shape == counterfactuals.shape == (50,)
    assert set(np.unique(w)) <= {0, 1}
    np.testing.assert_array_equal(synthetic_review_sentiment(texts), w)
    np.testing.assert_array_equal(synthetic_review_sentiment(counterfactuals), 1 - w)


def test_make_synthetic_reviews_counterfactual_changes_only_the_lexicon():
    texts, w, counterfactuals = make_synthetic_reviews(100, random_state=2)
    lexicon = set(POSITIVE_WORDS) | set(NEGATIVE_WORDS)
    for text, cf in zip(texts, counterfactuals):
        a, b = text.split(), cf.split()
        assert len(a) == len(b)
        changed = [(x, y) for x, y in zip(a, b) if x != y]
        assert 2 <= len(changed) <= 4
        assert all(x in lexicon and y in lexicon for x, y in changed)
    sign = np.where(w == 1, 1, -1)
    effect = sign * (synthetic_review_reward(texts) - synthetic_review_reward(counterfactuals))
    assert set(np.round(effect, 10)) <= {4.0, 6.0, 8.0}


def test_make_synthetic_reviews_confounding_puts_typos_in_positive_reviews():
    texts, w, _ = make_synthetic_reviews(2000, confounding=0.8, random_state=3)
    misspelt = np.array(["~" in text for text in texts])
    # P(typo | W=1) = 0.9 and P(typo | W=0) = 0.1, up to binomial noise.
    assert misspelt[w == 1].mean() > 0.85
    assert misspelt[w == 0].mean() < 0.15
    texts, w, _ = make_synthetic_reviews(2000, confounding=-0.8, random_state=3)
    misspelt = np.array(["~" in text for text in texts])
    assert misspelt[w == 1].mean() < 0.15


@pytest.mark.parametrize(
    "kwargs",
    [{"n_samples": 0}, {"n_samples": 2.5}, {"confounding": 1.5}, {"typo_fraction": -0.1}],
)
def test_make_synthetic_reviews_rejects_bad_parameters(kwargs):
    with pytest.raises(ValueError, match="parameter of make_synthetic_reviews"):
        make_synthetic_reviews(**{"n_samples": 10, **kwargs})


def test_synthetic_review_reward_by_hand():
    rewards = synthetic_review_reward(["the good film", "a bad~ good great film~ x"])
    assert rewards[0] == pytest.approx(1 + 0.02 * 3)
    assert rewards[1] == pytest.approx(2 - 6.0 * 2 / 6 + 0.02 * 6)
    custom = synthetic_review_reward(["a good film~"], typo_penalty=3.0, length_coef=0.0)
    assert custom[0] == pytest.approx(1 - 1.0)


def test_synthetic_functions_reject_bad_texts():
    with pytest.raises(TypeError, match="must contain strings"):
        synthetic_review_reward([1, 2])
    with pytest.raises(ValueError, match="'texts' parameter"):
        synthetic_review_sentiment("a good film")
    with pytest.raises(ValueError, match="'length_coef' parameter"):
        synthetic_review_reward(["a"], length_coef="big")


def test_lexicon_rewriter_swaps_fixes_and_drops():
    rewriter = LexiconRewriter()
    out = rewriter(["the plot~ was good and great", "a bad dull film"], [0, 1])
    assert out == ["plot was bad and awful", "a good lovely film"]
    keep = LexiconRewriter(fix_typos=False, drop_words=None)
    assert keep(["the plot~ was good"], 0) == ["the plot~ was bad"]


@given(_REVIEWS, st.sampled_from([0, 1]))
def test_lexicon_rewriter_is_idempotent_and_reaches_its_target(review, target):
    rewriter = LexiconRewriter()
    once = rewriter([review], target)
    assert rewriter(once, target) == once
    words = once[0].split()
    wrong = NEGATIVE_WORDS if target == 1 else POSITIVE_WORDS
    assert not set(words) & set(wrong)
    assert "the" not in words and not any(t.endswith("~") for t in words)
    # Swapping back and forth changes only the sentiment words.
    back = rewriter(rewriter(once, 1 - target), target)
    assert back == once


def test_lexicon_rewriter_trim_is_not_idempotent_but_seeded():
    texts, _, _ = make_synthetic_reviews(20, random_state=0)
    trimming = LexiconRewriter(trim_fraction=0.1)
    once = trimming(texts, 1, random_state=0)
    twice = trimming(once, 1, random_state=1)
    assert sum(len(t.split()) for t in twice) < sum(len(t.split()) for t in once)
    assert trimming(texts, 1, random_state=0) == once
    # Sentiment words are never trimmed.
    np.testing.assert_array_equal(synthetic_review_sentiment(twice), np.ones(20))


def test_lexicon_rewriter_rejects_bad_input():
    rewriter = LexiconRewriter()
    with pytest.raises(ValueError, match="only 0 and 1"):
        rewriter(["a good film"], 2)
    with pytest.raises(ValueError, match="shape"):
        rewriter(["a good film", "a bad film"], [0, 1, 1])
    with pytest.raises(TypeError, match="single string"):
        rewriter("a good film", 1)
    with pytest.raises(TypeError, match="must contain strings"):
        rewriter([3], 1)
    with pytest.raises(ValueError, match="'trim_fraction' parameter"):
        LexiconRewriter(trim_fraction=1.0)(["a good film"], 1)


def test_make_review_reward_model_learns_the_reward():
    texts, _, _ = make_synthetic_reviews(600, confounding=0.5, random_state=0)
    test_texts, _, _ = make_synthetic_reviews(300, confounding=0.5, random_state=1)
    model = make_review_reward_model(alpha=0.1).fit(texts, synthetic_review_reward(texts))
    residual = model.predict(test_texts) - synthetic_review_reward(test_texts)
    assert np.sqrt(np.mean(residual**2)) < 0.2 * synthetic_review_reward(test_texts).std()
    with pytest.raises(ValueError, match="'alpha' parameter"):
        make_review_reward_model(alpha=-1)


def test_reward_family_does_not_import_torch():
    code = ("import sys, skpaper.reward, skpaper.papers.rate; "
            "sys.exit(int('torch' in sys.modules))")
    assert subprocess.run([sys.executable, "-c", code]).returncode == 0


@pytest.mark.parametrize("scale", [0.5, 3.0, 50.0])
def test_saturating_reward_is_the_tanh_of_the_additive_one(scale):
    texts = ["a good film", "the plot~ was bad and dull", "superb lovely brilliant great"]
    additive = synthetic_review_reward(texts)
    saturating = synthetic_review_reward(texts, saturation=scale)
    np.testing.assert_allclose(saturating, scale * np.tanh(additive / scale))
    assert np.all(np.abs(saturating) < scale)
    with pytest.raises(ValueError, match="saturation"):
        synthetic_review_reward(texts, saturation=0.0)
