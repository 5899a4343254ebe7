"""RATE's check of its own assumption: a rewriter that changes only the attribute."""

import warnings

import numpy as np
import pytest

from skpaper.datasets import make_synthetic_reviews, synthetic_review_reward
from skpaper.reward import RATE, LexiconRewriter

_FILLER = ["the cast was there", "it ran long", "we saw it twice", "the score was loud",
           "my friend came along", "it opened in may"]


def _reviews(n, seed):
    """Multi-sentence reviews: one sentiment sentence and 2-5 filler sentences."""
    rng = np.random.default_rng(seed)
    w = rng.integers(2, size=n)
    texts = []
    for label in w:
        k = rng.integers(2, 6)
        filler = [_FILLER[i] for i in rng.choice(len(_FILLER), size=k, replace=False)]
        texts.append(". ".join(["a good film" if label else "a bad film", *filler]))
    return np.array(texts), w


def _reward(texts):
    # Sentiment (+-1) and, like many learned rewards, length (0.3 per sentence).
    return np.array([t.count("good") - t.count("bad") + 0.3 * (t.count(". ") + 1)
                     for t in texts])


def _swap(text, target):
    return text.replace("bad", "good") if target == 1 else text.replace("good", "bad")


def _dropping(texts, target_w):
    """Sets the sentiment and drops the last sentence: on every call."""
    out = []
    for text in texts:
        sentences = _swap(text, target_w).split(". ")
        out.append(". ".join(sentences[:-1] if len(sentences) > 1 else sentences))
    return out


def _idempotent(texts, target_w):
    """Sets the sentiment and drops the filler sentence "it ran long" (once for all)."""
    return [". ".join(s for s in _swap(t, target_w).split(". ") if s != "it ran long")
            for t in texts]


def test_an_accumulating_rewriter_warns_with_the_measured_drift():
    texts, w = _reviews(400, seed=0)
    with pytest.warns(UserWarning, match=r"rewriter is not idempotent: .* changes their "
                                         r"reward by -0\.[56]\d* on average"):
        rate = RATE(rewriter=_dropping, reward_model=_reward, random_state=0).fit(texts, w)
    # The third rewrite has lost two sentences more than x' (0.3 each), unless it ran out.
    assert -0.6 <= rate.drift_ < -0.45
    assert rate.n_rewriter_calls_ <= 2 * len(texts) + 100  # the cache finds repeats
    assert len(rate.drift_units_) == 100
    # The true effect is 2 (bad -> good). x'' has lost one sentence more than x', which
    # biases the ATT down and the ATU up by about half the drift.
    assert rate.att_ - 2.0 == pytest.approx(rate.drift_ / 2, abs=0.08)
    assert rate.atu_ - 2.0 == pytest.approx(-rate.drift_ / 2, abs=0.08)
    assert rate.drift_bias_ == pytest.approx(rate.ate_ - 2.0, abs=0.05)


def test_an_idempotent_rewriter_does_not_warn():
    texts, w = _reviews(400, seed=1)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        rate = RATE(rewriter=_idempotent, reward_model=_reward).fit(texts, w)
        lexicon = RATE(rewriter=LexiconRewriter(), reward_model=synthetic_review_reward,
                       random_state=0).fit(*make_synthetic_reviews(300, random_state=0)[:2])
    assert rate.drift_ == 0.0 and rate.drift_se_ == 0.0
    assert rate.ate_ == pytest.approx(2.0)
    assert lexicon.drift_ == 0.0


def test_the_check_does_not_change_the_estimates_and_can_be_turned_off():
    texts, w = _reviews(200, seed=2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        checked = RATE(rewriter=_dropping, reward_model=_reward, random_state=3,
                       idempotence_check=20).fit(texts, w)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        off = RATE(rewriter=_dropping, reward_model=_reward, random_state=3,
                   idempotence_check=0).fit(texts, w)
    assert checked.ate_ == off.ate_ and checked.ci_ == off.ci_
    assert off.n_rewriter_calls_ < checked.n_rewriter_calls_ <= off.n_rewriter_calls_ + 20
    assert not hasattr(off, "drift_")
    with pytest.raises(ValueError, match="idempotence_check must be 0"):
        RATE(rewriter=_dropping, reward_model=_reward, idempotence_check=1).fit(texts, w)
    with pytest.raises(ValueError, match="idempotence_check"):
        RATE(rewriter=_dropping, reward_model=_reward, idempotence_check=-1).fit(texts, w)
