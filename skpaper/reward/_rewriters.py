"""An imperfect rewriter and a small reward model for the synthetic reviews."""

import numbers

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.feature_extraction.text import CountVectorizer
from sklearn.linear_model import Ridge
from sklearn.pipeline import Pipeline
from sklearn.utils import check_random_state

from ..datasets._reward import NEGATIVE_WORDS, POSITIVE_WORDS, TYPO_MARKER, _as_text_list
from ..utils._sklearn import Interval, validate_params

_TO_POSITIVE = dict(zip(NEGATIVE_WORDS, POSITIVE_WORDS))
_TO_NEGATIVE = dict(zip(POSITIVE_WORDS, NEGATIVE_WORDS))
_SENTIMENT = frozenset(POSITIVE_WORDS) | frozenset(NEGATIVE_WORDS)


class LexiconRewriter(BaseEstimator):
    """Imperfect sentiment rewriter of the synthetic reviews.

    Plays the part of the LLM rewriter of RATE on the reviews of
    :func:`skpaper.datasets.make_synthetic_reviews`: it sets the sentiment by
    swapping every lexicon word into its opposite (the on-target change) and,
    like an LLM asked to "change nothing else", also makes off-target changes:
    it fixes every typo and deletes every word in ``drop_words``. Those changes
    are idempotent, so a rewrite of a rewrite makes none of them again, which is
    the assumption under which RATE is unbiased. With ``trim_fraction > 0`` it
    also deletes that fraction of the remaining filler words at random on every
    call, a non-idempotent change that breaks the assumption (the negative
    control).

    Call it as ``rewriter(texts, target_w)``; it has no ``fit``.

    Parameters
    ----------
    fix_typos : bool, default=True
        Remove the typo marker from every token.
    drop_words : tuple of str or None, default=("the",)
        Words deleted from every rewrite (after typos are fixed).
    trim_fraction : float in [0, 1), default=0.0
        Fraction of the non-sentiment tokens deleted at random on each call.

    See Also
    --------
    RATE : The estimator that uses a rewriter.
    skpaper.datasets.make_synthetic_reviews : The reviews this rewriter edits.

    Examples
    --------
    >>> from skpaper.reward import LexiconRewriter
    >>> rewriter = LexiconRewriter()
    >>> rewriter(["the plot~ was good", "a bad film"], target_w=[0, 1])
    ['plot was bad', 'a good film']
    """

    _parameter_constraints: dict = {
        "fix_typos": ["boolean"],
        "drop_words": [tuple, None],
        "trim_fraction": [Interval(numbers.Real, 0, 1, closed="left")],
    }

    def __init__(self, *, fix_typos=True, drop_words=("the",), trim_fraction=0.0):
        self.fix_typos = fix_typos
        self.drop_words = drop_words
        self.trim_fraction = trim_fraction

    def __call__(self, texts, target_w, random_state=None):
        """Rewrite ``texts`` so that their sentiment is ``target_w``.

        Parameters
        ----------
        texts : sequence of str of length n_texts
            Reviews, tokens separated by white space.
        target_w : {0, 1} or array-like of shape (n_texts,)
            Target sentiment, one value for all texts or one per text.
        random_state : int, RandomState instance or None, default=None
            Seed of the random trimming (used only when ``trim_fraction > 0``).

        Returns
        -------
        rewrites : list of str of length n_texts
        """
        self._validate_params()
        items = _as_text_list(texts)
        targets = np.asarray(target_w)
        if targets.ndim == 0:
            targets = np.full(len(items), targets)
        if targets.shape != (len(items),):
            raise ValueError(
                f"target_w must be a scalar or have shape ({len(items)},), "
                f"got shape {targets.shape}."
            )
        if not np.isin(targets, (0, 1)).all():
            raise ValueError(
                f"target_w must contain only 0 and 1, got {np.unique(targets).tolist()}."
            )
        rng = check_random_state(random_state)
        drop = frozenset(self.drop_words or ())
        rewrites = []
        for text, target in zip(items, targets):
            swap = _TO_POSITIVE if target == 1 else _TO_NEGATIVE
            tokens = [swap.get(token, token) for token in text.split()]
            if self.fix_typos:
                tokens = [token.removesuffix(TYPO_MARKER) for token in tokens]
            tokens = [token for token in tokens if token not in drop]
            if self.trim_fraction > 0:
                filler = [i for i, token in enumerate(tokens) if token not in _SENTIMENT]
                n_trim = int(round(self.trim_fraction * len(filler)))
                if n_trim:
                    removed = set(rng.choice(filler, size=n_trim, replace=False).tolist())
                    tokens = [token for i, token in enumerate(tokens) if i not in removed]
            rewrites.append(" ".join(tokens))
        return rewrites


@validate_params(
    {"alpha": [Interval(numbers.Real, 0, None, closed="left")]},
    prefer_skip_nested_validation=True,
)
def make_review_reward_model(alpha=1.0):
    """Build a small bag-of-words ridge reward model (unfitted).

    Fitted to :func:`skpaper.datasets.synthetic_review_reward` on a set of
    reviews, it stands in for a learned reward model; pass its ``predict`` to
    :class:`RATE` as ``reward_model``.

    Parameters
    ----------
    alpha : float, default=1.0
        Ridge penalty.

    Returns
    -------
    model : Pipeline
        ``CountVectorizer`` over white-space tokens (typo markers kept) followed
        by ``Ridge``.

    Examples
    --------
    >>> from skpaper.datasets import make_synthetic_reviews, synthetic_review_reward
    >>> from skpaper.reward import make_review_reward_model
    >>> texts, w, _ = make_synthetic_reviews(300, random_state=0)
    >>> model = make_review_reward_model().fit(texts, synthetic_review_reward(texts))
    >>> model.predict(texts[:2]).shape
    (2,)
    """
    return Pipeline(
        [
            ("counts", CountVectorizer(token_pattern=r"\S+", lowercase=False)),
            ("ridge", Ridge(alpha=alpha)),
        ]
    )
