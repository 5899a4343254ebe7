"""RATE: the causal effect of response attributes on a reward model.

:class:`RATE` estimates how much an attribute of a response (sentiment, length,
helpfulness) moves a reward model's score, from imperfect counterfactual
rewrites corrected by rewriting twice. :class:`LexiconRewriter` and
:func:`make_review_reward_model` complete the offline synthetic world of
:func:`skpaper.datasets.make_synthetic_reviews`. Nothing here imports torch:
rewriters and reward models are plain callables.
"""

from ._rate import RATE
from ._rewriters import LexiconRewriter, make_review_reward_model

__all__ = ["RATE", "LexiconRewriter", "make_review_reward_model"]
