"""Data generators for `skpaper.reward` (numpy only; no torch import).

A synthetic world of token-list movie "reviews" in which the causal effect of
sentiment on a known reward is exact, while an off-target attribute (typos)
is correlated with sentiment. It demonstrates why a naive difference in means
and a single rewrite are biased and why RATE's rewrite of a rewrite is not.
"""

import numbers

import numpy as np
from sklearn.utils import check_random_state

from ..utils._sklearn import Interval, validate_params

__all__ = [
    "make_synthetic_reviews",
    "synthetic_review_reward",
    "synthetic_review_sentiment",
]

#: Sentiment lexicon; ``POSITIVE_WORDS[i]`` and ``NEGATIVE_WORDS[i]`` swap into each other.
POSITIVE_WORDS = ("good", "great", "superb", "lovely", "brilliant")
NEGATIVE_WORDS = ("bad", "awful", "poor", "dull", "boring")

#: Words that carry no sentiment; "the" is the word the synthetic rewriter deletes.
FILLER_WORDS = (
    "the", "a", "movie", "film", "plot", "actor", "story", "was", "is", "and",
    "of", "to", "in", "it", "this", "with", "scene", "ending", "cast", "script",
    "music", "really", "very", "quite",
)
_THE_PROBABILITY = 0.15

#: Smallest and largest number of sentiment words in a review. Under the known
#: reward a perfect swap moves a review's reward by twice that number, so the
#: population effect of sentiment is ``2 * 3 = 6``.
N_SENTIMENT_WORDS = (2, 4)

#: Suffix that marks a misspelt token.
TYPO_MARKER = "~"

_POSITIVE = frozenset(POSITIVE_WORDS)
_NEGATIVE = frozenset(NEGATIVE_WORDS)


def _as_text_list(texts, name="texts"):
    if isinstance(texts, str):
        raise TypeError(f"{name} must be a sequence of strings, got a single string.")
    try:
        items = list(texts)
    except TypeError as exc:
        raise TypeError(
            f"{name} must be a sequence of strings, got {type(texts).__name__}."
        ) from exc
    for item in items:
        if not isinstance(item, str):
            raise TypeError(
                f"{name} must contain strings, got an element of type {type(item).__name__}."
            )
    return items


def _review_counts(texts):
    """Return (#positive, #negative, #typos, #tokens) per text, as int arrays."""
    items = _as_text_list(texts)
    counts = np.zeros((len(items), 4), dtype=np.int64)
    for i, text in enumerate(items):
        tokens = text.split()
        counts[i, 0] = sum(map(_POSITIVE.__contains__, tokens))
        counts[i, 1] = sum(map(_NEGATIVE.__contains__, tokens))
        counts[i, 2] = sum(token.endswith(TYPO_MARKER) for token in tokens)
        counts[i, 3] = len(tokens)
    return counts


@validate_params(
    {
        "texts": ["array-like"],
        "prompts": ["array-like", None],
        "typo_penalty": [Interval(numbers.Real, None, None, closed="neither")],
        "length_coef": [Interval(numbers.Real, None, None, closed="neither")],
        "saturation": [Interval(numbers.Real, 0, None, closed="neither"), None],
    },
    prefer_skip_nested_validation=True,
)
def synthetic_review_reward(texts, prompts=None, *, typo_penalty=6.0, length_coef=0.02,
                            saturation=None):
    """Known reward of the synthetic reviews: additive, or saturating.

    ``A(x) = (#positive - #negative) - typo_penalty * typo_rate + length_coef * length``,
    where ``typo_rate`` is the fraction of tokens marked as misspelt and
    ``length`` the number of tokens. The reward is ``A(x)``, or, with a
    ``saturation`` scale ``s``, ``s * tanh(A(x) / s)``: a reward that
    saturates, so the effect of sentiment depends on the typos and the length
    (the off-target attributes no longer enter additively).

    Parameters
    ----------
    texts : array-like of str of shape (n_samples,)
        Reviews, tokens separated by white space.
    prompts : array-like of shape (n_samples,), default=None
        Ignored; present so that the function has the signature of a reward model.
    typo_penalty : float, default=6.0
        Reward lost per unit of typo rate.
    length_coef : float, default=0.02
        Reward gained per token.
    saturation : float, default=None
        Scale ``s`` of the saturating reward; ``None`` keeps it additive.

    Returns
    -------
    rewards : ndarray of shape (n_samples,)
        Reward of each review.

    Examples
    --------
    >>> from skpaper.datasets import synthetic_review_reward
    >>> synthetic_review_reward(["a good film", "a bad film~"]).round(2)
    array([ 1.06, -2.94])
    """
    counts = _review_counts(texts)
    length = np.maximum(counts[:, 3], 1)
    additive = (
        (counts[:, 0] - counts[:, 1]).astype(float)
        - typo_penalty * counts[:, 2] / length
        + length_coef * counts[:, 3]
    )
    if saturation is None:
        return additive
    return saturation * np.tanh(additive / saturation)


@validate_params({"texts": ["array-like"]}, prefer_skip_nested_validation=True)
def synthetic_review_sentiment(texts):
    """Lexicon classifier of the sentiment attribute W of synthetic reviews.

    Parameters
    ----------
    texts : array-like of str of shape (n_samples,)
        Reviews, tokens separated by white space.

    Returns
    -------
    w : ndarray of int of shape (n_samples,)
        1 when a review has more positive than negative lexicon words, else 0.

    Examples
    --------
    >>> from skpaper.datasets import synthetic_review_sentiment
    >>> synthetic_review_sentiment(["a good film", "a bad film"])
    array([1, 0])
    """
    counts = _review_counts(texts)
    return (counts[:, 0] > counts[:, 1]).astype(np.int64)


@validate_params(
    {
        "n_samples": [Interval(numbers.Integral, 1, None, closed="left")],
        "confounding": [Interval(numbers.Real, -1, 1, closed="both")],
        "typo_fraction": [Interval(numbers.Real, 0, 1, closed="both")],
        "random_state": ["random_state"],
    },
    prefer_skip_nested_validation=True,
)
def make_synthetic_reviews(n_samples=1000, *, confounding=0.0, typo_fraction=0.2,
                           random_state=None):
    """Generate synthetic reviews whose sentiment is confounded with typos.

    Each review has 30 to 50 filler tokens (about 15% of them "the") and 2 to 4
    sentiment words from a five-word lexicon, all positive when ``W = 1`` and
    all negative when ``W = 0`` (``P(W = 1) = 1/2``). A review is misspelt with
    probability ``P(typo | W) = 0.5 + confounding * (W - 1/2)``; a misspelt
    review has each filler token marked with a typo with probability
    ``typo_fraction``. The ground-truth counterfactual of a review is the perfect
    lexicon swap with everything else unchanged.

    Parameters
    ----------
    n_samples : int, default=1000
        Number of reviews.
    confounding : float in [-1, 1], default=0.0
        Correlation between sentiment and typos; positive values put more typos
        in positive reviews.
    typo_fraction : float in [0, 1], default=0.2
        Fraction of filler tokens misspelt in a misspelt review.
    random_state : int, RandomState instance or None, default=None
        Seed of every draw.

    Returns
    -------
    texts : ndarray of str of shape (n_samples,)
        The reviews, tokens separated by single spaces.
    w : ndarray of int of shape (n_samples,)
        The sentiment attribute (1 positive, 0 negative).
    counterfactuals : ndarray of str of shape (n_samples,)
        Each review with its sentiment words swapped and nothing else changed.

    See Also
    --------
    synthetic_review_reward : The known reward of these reviews.
    skpaper.reward.LexiconRewriter : An imperfect rewriter of these reviews.

    Notes
    -----
    This world is skpaper's own offline stand-in for the synthetic experiment
    of Reber et al. (ICML 2025), in which typos are injected into a subset of
    IMDB reviews correlated with the attribute and an LLM rewrites them; it is
    not a data set of the paper. Under :func:`synthetic_review_reward` a
    perfect swap moves a review's reward by twice its number of sentiment
    words, so the population effect of sentiment is 6 whatever the
    confounding, while the typo penalty biases a naive comparison by about
    ``-1.1 * confounding``.

    Examples
    --------
    >>> from skpaper.datasets import make_synthetic_reviews
    >>> texts, w, counterfactuals = make_synthetic_reviews(4, random_state=0)
    >>> texts.shape, w.shape, counterfactuals.shape
    ((4,), (4,), (4,))
    """
    rng = check_random_state(random_state)
    n = int(n_samples)
    w = (rng.uniform(size=n) < 0.5).astype(np.int64)
    n_sentiment = rng.randint(N_SENTIMENT_WORDS[0], N_SENTIMENT_WORDS[1] + 1, size=n)
    n_filler = rng.randint(30, 51, size=n)
    p_typo = 0.5 + confounding * (w - 0.5)
    misspelt = rng.uniform(size=n) < p_typo

    vocabulary = np.asarray(FILLER_WORDS, dtype=object)
    probabilities = np.full(len(FILLER_WORDS), (1 - _THE_PROBABILITY) / (len(FILLER_WORDS) - 1))
    probabilities[FILLER_WORDS.index("the")] = _THE_PROBABILITY
    positive = np.asarray(POSITIVE_WORDS, dtype=object)
    negative = np.asarray(NEGATIVE_WORDS, dtype=object)

    texts = np.empty(n, dtype=object)
    counterfactuals = np.empty(n, dtype=object)
    for i in range(n):
        filler = rng.choice(vocabulary, size=n_filler[i], p=probabilities)
        if misspelt[i]:
            marked = rng.uniform(size=n_filler[i]) < typo_fraction
            filler[marked] = filler[marked] + TYPO_MARKER
        lexicon_index = rng.randint(len(POSITIVE_WORDS), size=n_sentiment[i])
        own, other = (positive, negative) if w[i] else (negative, positive)
        length = n_filler[i] + n_sentiment[i]
        slots = np.sort(rng.choice(length, size=n_sentiment[i], replace=False))
        is_sentiment = np.zeros(length, dtype=bool)
        is_sentiment[slots] = True
        tokens = np.empty(length, dtype=object)
        tokens[~is_sentiment] = filler
        tokens[is_sentiment] = own[lexicon_index]
        texts[i] = " ".join(tokens)
        tokens[is_sentiment] = other[lexicon_index]
        counterfactuals[i] = " ".join(tokens)
    return texts.astype(str), w, counterfactuals.astype(str)
