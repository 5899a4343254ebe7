"""RATE: rewrite-based attribute treatment estimators for reward models."""

import inspect
import numbers
import warnings

import numpy as np
from scipy.stats import norm
from sklearn.base import BaseEstimator
from sklearn.utils import ClassifierTags
from sklearn.utils.validation import check_array, check_consistent_length

from ..utils import normal_ci, spawn_seeds
from ..utils._sklearn import Interval, _fit_context, validate_data
from ._inference import paired_effect, unpaired_effect

#: Keys of ``se_`` and ``ci_``.
ESTIMANDS = (
    "ate",
    "att",
    "atu",
    "naive",
    "single_rewrite_ate",
    "single_rewrite_att",
    "single_rewrite_atu",
)


def _accepts_random_state(func):
    try:
        return "random_state" in inspect.signature(func).parameters
    except (TypeError, ValueError):
        return False


def _input_ndim(X):
    ndim = getattr(X, "ndim", None)
    if ndim is not None:
        return ndim
    try:
        return np.asarray(X, dtype=object).ndim
    except (TypeError, ValueError):
        return 1


def _cache_key(item):
    if isinstance(item, np.ndarray):
        return ("ndarray", item.dtype.str, item.shape, item.tobytes())
    try:
        hash(item)
    except TypeError:
        return None
    return item


def _python_scalar(value):
    return value.item() if isinstance(value, np.generic) else value


def _as_batch(items, two_d):
    """What a user callable receives: a 2-D array for rows, a list otherwise."""
    if two_d:
        return np.asarray(items)
    if isinstance(items, np.ndarray):
        return items.tolist()
    return [_python_scalar(item) for item in items]


def _assemble(items, two_d):
    if two_d:
        rows = np.asarray(items)
        if rows.ndim != 2 or rows.shape[0] != len(items):
            raise ValueError(
                "rewriter must return one row per input row when X is 2-D; the rewrites "
                f"stack into shape {rows.shape} for {len(items)} rows."
            )
        return rows
    if all(isinstance(item, str) for item in items):
        return np.asarray(items, dtype=str)
    out = np.empty(len(items), dtype=object)
    for i, item in enumerate(items):
        out[i] = item
    return out


class RATE(BaseEstimator):
    """Rewrite-based Attribute Treatment Estimators of a reward model.

    Measures the causal effect of a binary attribute ``W`` of a response (its
    sentiment, length, helpfulness) on the score a reward model gives it. Each
    response ``x`` is rewritten to the opposite attribute, ``x' = Re(x, 1 - W)``,
    and the rewrite is rewritten back, ``x'' = Re(x', W)``. Comparing ``x''``
    with ``x'``, rather than ``x`` with ``x'``, cancels the off-target changes a
    rewriter makes (fixing typos, normalising style) because both texts carry
    them. The effect estimates come with paired standard errors and normal
    confidence intervals, beside the naive and single-rewrite comparators.

    Parameters
    ----------
    rewriter : callable, default=None
        ``rewriter(texts, target_w) -> texts``: rewrites a batch of responses so
        that their attribute becomes ``target_w`` (one label, in the label space
        of ``w``, for the whole batch) and changes nothing else, as well as it
        can. It returns one rewrite per input. If it accepts a ``random_state``
        keyword, it receives a seed derived from ``random_state`` (one seed for
        the rewrites, another for the rewrites of rewrites). An LLM client, a
        :class:`LexiconRewriter` or any function. Required by :meth:`fit`.
    reward_model : callable, default=None
        ``reward_model(texts) -> scores`` or, when ``prompts`` are passed to
        :meth:`fit`, ``reward_model(texts, prompts=prompts) -> scores``: one real
        score per response (a fitted pipeline's ``predict`` works). Required by
        :meth:`fit`.
    attribute_classifier : callable, default=None
        ``attribute_classifier(texts) -> labels`` in the label space of ``w``.
        When given, :meth:`fit` checks that rewrites reach their target
        attribute (``flip_rate_``, ``flip_back_rate_``) and labels the texts
        itself when ``y`` is None. Failed rewrites are reported, never dropped:
        dropping them would select units on the rewriter's success.
    alpha : float in (0, 1), default=0.05
        Confidence intervals have level ``1 - alpha``.
    paired : bool, default=True
        Standard errors of the RATE ATT, ATU and ATE from the per-unit
        differences (paired). ``False`` uses the unpaired (Welch) standard
        errors of the official code, which ignore the pairing; they are
        conservative only when a unit's two rewards are positively correlated.
    cache : bool, default=True
        Rewrite each distinct (response, target, seed) once within a fit, so a
        duplicated response, or a rewrite that coincides with another response,
        costs one rewriter call and gets one (possibly stochastic) rewrite.
        Responses must be hashable (strings) or array rows to be cached.
    random_state : int, RandomState instance or None, default=None
        Seeds passed to a stochastic ``rewriter``.
    idempotence_check : int, default=100
        Number of units (drawn at random, all when fewer) whose rewrite of a
        rewrite :meth:`fit` rewrites once more, ``x''' = Re(x'', 1 - W)``, to test
        the assumption RATE rests on: a rewriter that changes only the
        attribute gives ``x'''`` the reward of ``x'`` (same attribute, same
        off-target changes). A mean drift ``R(x''') - R(x')`` that differs
        from 0 (z test at level 0.01, or any nonzero drift when it does not
        vary) raises a ``UserWarning`` with the measured drift. Costs one
        rewriter call and one reward per checked unit; 0 turns the check off.

    Attributes
    ----------
    ate_ : float
        RATE average treatment effect, ``(n1 * att_ + n0 * atu_) / n``.
    att_ : float
        RATE average treatment effect on the treated (``W = classes_[1]``).
    atu_ : float
        RATE average treatment effect on the untreated (``W = classes_[0]``).
    se_ : dict of str to float
        Standard errors keyed by ``"ate"``, ``"att"``, ``"atu"``, ``"naive"``,
        ``"single_rewrite_ate"``, ``"single_rewrite_att"`` and
        ``"single_rewrite_atu"``.
    ci_ : dict of str to tuple of float
        ``(low, high)`` normal confidence intervals with the keys of ``se_``.
    naive_ : float
        Difference in mean reward between the two attribute groups.
    single_rewrite_ate_ : float
        ``mean(s_i * (R(x_i) - R(x'_i)))`` with ``s_i = +1`` for treated units
        and ``-1`` otherwise: the estimator that RATE corrects.
    single_rewrite_att_ : float
        ``mean over W = 1 of R(x) - R(x')``.
    single_rewrite_atu_ : float
        ``mean over W = 0 of R(x') - R(x)``.
    unit_effects_ : ndarray of shape (n_samples,)
        Per-unit RATE differences ``s_i * (R(x''_i) - R(x'_i))``; ``ate_`` is
        their mean.
    rewards_ : ndarray of shape (n_samples, 3)
        Rewards of the responses, their rewrites and the rewrites of rewrites.
    classes_ : ndarray of shape (2,)
        The two values of ``w``; ``classes_[1]`` is the treated value.
    n_treated_ : int
        Number of units with ``w == classes_[1]``.
    n_untreated_ : int
        Number of units with ``w == classes_[0]``.
    rewrites_ : ndarray of shape (n_samples,) or (n_samples, n_features)
        The rewrites ``x'`` (set by :meth:`fit` only).
    rewrites2_ : ndarray of shape (n_samples,) or (n_samples, n_features)
        The rewrites of rewrites ``x''`` (set by :meth:`fit` only).
    n_rewriter_calls_ : int
        Number of responses sent to ``rewriter`` (at most ``2 * n_samples``
        plus the units of the idempotence check; fewer when the cache finds
        repeats). Set by :meth:`fit` only.
    drift_ : float
        Mean of ``R(x''') - R(x')`` over the units of the idempotence check
        (see ``idempotence_check``); 0 for a rewriter that changes only the
        attribute. Set by :meth:`fit` when the check runs.
    drift_se_ : float
        Its standard error.
    drift_bias_ : float
        ``mean(s_i (R(x'''_i) - R(x'_i))) / 2`` over the checked units: the bias
        of ``ate_`` if every rewriter call adds the same off-target change
        (``x''`` then carries one change more than ``x'``, ``x'''`` two).
    drift_units_ : ndarray of int
        The units of the idempotence check.
    flip_rate_ : float
        Fraction of rewrites that ``attribute_classifier`` labels with their
        target attribute ``1 - W``. Set by :meth:`fit` when a classifier is given.
    flip_back_rate_ : float
        Fraction of rewrites of rewrites labelled with the original ``W``. Set
        by :meth:`fit` when a classifier is given.
    n_features_in_ : int
        Number of features of a 2-D ``X`` seen during :meth:`fit` (not set for
        a 1-D sequence of texts).
    feature_names_in_ : ndarray of shape (n_features_in_,)
        Names of features seen during :meth:`fit`, when ``X`` has string column
        names.

    See Also
    --------
    LexiconRewriter : An imperfect rewriter for the synthetic reviews.
    skpaper.datasets.make_synthetic_reviews : A world with a known effect.

    Notes
    -----
    Following Algorithm 1 of [1]_, with ``Re`` the rewriter, ``R`` the reward
    model, ``n1`` treated and ``n0`` untreated units:

    .. math::

        \\widehat{ATT} = \\frac{1}{n_1} \\sum_{i: w_i = 1}
            [R(Re(Re(x_i, 0), 1)) - R(Re(x_i, 0))]

        \\widehat{ATU} = \\frac{1}{n_0} \\sum_{i: w_i = 0}
            [R(Re(x_i, 1)) - R(Re(Re(x_i, 1), 0))]

        \\widehat{ATE} = \\frac{n_1}{n} \\widehat{ATT} + \\frac{n_0}{n} \\widehat{ATU}

    Each is a mean of per-unit differences ``d_i``, so its standard error is
    ``sd(d) / sqrt(n)`` and its interval ``estimate -/+ z_{1 - alpha/2} se``.
    The estimators are unbiased when the off-target error of a rewrite enters
    the reward additively and is the same for a rewrite and a rewrite of a
    rewrite ("rewrite-error cancellation", the key assumption of [1]); an
    off-target change that keeps accumulating (a rewriter that shortens on
    every pass) biases ATT and ATU in opposite directions while roughly
    cancelling in a balanced ATE. :meth:`fit` tests this on a sample of units
    (``idempotence_check``) and warns with the measured drift when the
    rewriter changes more than the attribute on a second call. When ``W``
    interacts with an off-target attribute, RATE estimates the effect on the
    distribution of rewrites.

    The official code reports unpaired standard errors for ATT and ATU
    (``paired=False`` reproduces them); the paired ones are the standard errors
    of these means of paired differences and are the default.

    References
    ----------
    .. [1] D. Reber, S. Richardson, T. Nief, C. Garbacea and V. Veitch, "RATE:
       Causal Explainability of Reward Models with Imperfect Counterfactuals",
       ICML 2025. arXiv:2410.11348.

    Examples
    --------
    >>> from skpaper.datasets import make_synthetic_reviews, synthetic_review_reward
    >>> from skpaper.reward import RATE, LexiconRewriter
    >>> texts, w, _ = make_synthetic_reviews(400, confounding=0.8, random_state=0)
    >>> rate = RATE(rewriter=LexiconRewriter(), reward_model=synthetic_review_reward)
    >>> rate = rate.fit(texts, w)
    >>> round(rate.ate_, 1), round(rate.naive_, 1)
    (6.0, 5.2)
    """

    _parameter_constraints: dict = {
        "rewriter": [callable, None],
        "reward_model": [callable, None],
        "attribute_classifier": [callable, None],
        "alpha": [Interval(numbers.Real, 0, 1, closed="neither")],
        "paired": ["boolean"],
        "cache": ["boolean"],
        "random_state": ["random_state"],
        "idempotence_check": [Interval(numbers.Integral, 0, 2**20, closed="both")],
    }

    def __init__(
        self,
        *,
        rewriter=None,
        reward_model=None,
        attribute_classifier=None,
        alpha=0.05,
        paired=True,
        cache=True,
        random_state=None,
        idempotence_check=100,
    ):
        self.rewriter = rewriter
        self.reward_model = reward_model
        self.attribute_classifier = attribute_classifier
        self.alpha = alpha
        self.paired = paired
        self.cache = cache
        self.random_state = random_state
        self.idempotence_check = idempotence_check

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None, prompts=None):
        """Rewrite, rewrite back, score, and estimate the attribute's effect.

        Parameters
        ----------
        X : array-like of shape (n_samples,) or (n_samples, n_features)
            The responses: a sequence of texts, or one row per response.
        y : array-like of shape (n_samples,), default=None
            The binary attribute ``w`` of each response (two distinct values;
            the larger one is the treatment). When None, the texts are labelled
            by ``attribute_classifier``.
        prompts : array-like of shape (n_samples,), default=None
            Prompt of each response, passed to ``reward_model`` as ``prompts=``.

        Returns
        -------
        self : object
            Fitted estimator.
        """
        self._clear_fitted()
        check_params = dict(dtype=None, ensure_2d=_input_ndim(X) == 2, ensure_min_samples=2)
        if y is None:
            X = validate_data(self, X, **check_params)
        else:
            X, y = validate_data(self, X, y, **check_params)
        for name in ("rewriter", "reward_model"):
            if getattr(self, name) is None:
                raise ValueError(
                    f"{name} must be a callable to fit RATE on texts, got None; use "
                    "fit_scores when the rewards are already computed."
                )
        n_samples = X.shape[0]
        if y is None:
            if self.attribute_classifier is None:
                raise ValueError(
                    "RATE requires y to be passed, but the target y is None and no "
                    "attribute_classifier was given to label the texts."
                )
            y = self._classify(X, "texts")
        w = self._check_attribute(y, n_samples, "y")
        if prompts is not None:
            if isinstance(prompts, str) or not hasattr(prompts, "__len__"):
                raise TypeError(
                    "prompts must be a sequence with one prompt per response, got "
                    f"{type(prompts).__name__}."
                )
            if len(prompts) != n_samples:
                raise ValueError(
                    f"prompts must have one entry per response: got {len(prompts)} "
                    f"prompts for {n_samples} responses."
                )
            prompts = [_python_scalar(p) for p in prompts]

        classes = self.classes_
        opposite = np.where(w == classes[1], classes[0], classes[1])
        seeds = spawn_seeds(self.random_state, 2)
        cache = {}
        self.n_rewriter_calls_ = 0
        rewrites = self._rewrite(X, opposite, seeds[0], cache)
        rewrites2 = self._rewrite(rewrites, w, seeds[1], cache)

        rewards = np.column_stack(
            [
                self._score(X, prompts, "responses"),
                self._score(rewrites, prompts, "rewrites"),
                self._score(rewrites2, prompts, "rewrites of rewrites"),
            ]
        )
        if self.attribute_classifier is not None:
            self.flip_rate_ = float(np.mean(self._classify(rewrites, "rewrites") == opposite))
            self.flip_back_rate_ = float(
                np.mean(self._classify(rewrites2, "rewrites of rewrites") == w)
            )
        self.rewrites_ = rewrites
        self.rewrites2_ = rewrites2
        self._estimate(rewards, w == classes[1])
        if self.idempotence_check:
            self._check_idempotence(rewrites2, opposite, prompts, seeds, cache, rewards[:, 1],
                                    w == classes[1])
        return self

    def _check_idempotence(self, rewrites2, opposite, prompts, seeds, cache, r_rewrite,
                           treated):
        """Rewrite a sample of the rewrites of rewrites once more and compare rewards."""
        if self.idempotence_check == 1:
            raise ValueError("idempotence_check must be 0 (off) or at least 2 units (the "
                             "drift needs a standard error), got 1.")
        n = rewrites2.shape[0]
        # Seeds of their own, so the estimates do not change with the check.
        rng = np.random.default_rng(seeds)
        units = np.sort(rng.choice(n, size=min(self.idempotence_check, n), replace=False))
        third = self._rewrite(rewrites2[units], opposite[units],
                              int(rng.integers(2**31 - 1)), cache)
        scores = self._score(third, None if prompts is None else [prompts[i] for i in units],
                             "rewrites of the idempotence check")
        drift = scores - r_rewrite[units]
        self.drift_, self.drift_se_ = paired_effect(drift)
        self.drift_bias_ = float(np.mean(np.where(treated[units], 1.0, -1.0) * drift) / 2.0)
        self.drift_units_ = units
        scale = max(float(np.abs(r_rewrite).max(initial=0.0)), 1.0)
        if self.drift_se_ > 0:
            shifted = abs(self.drift_) > norm.ppf(0.995) * self.drift_se_
        else:
            shifted = abs(self.drift_) > 1e-12 * scale
        if shifted:
            warnings.warn(
                f"RATE: the rewriter is not idempotent: rewriting the rewrites of rewrites "
                f"once more (to the attribute of the rewrites) changes their reward by "
                f"{self.drift_:+.3g} on average (se {self.drift_se_:.2g}, {len(units)} units), "
                "where a rewriter that changes only the attribute leaves it unchanged. "
                "Rewrite-error cancellation fails and ate_, att_ and atu_ are biased (by "
                f"about {self.drift_bias_:+.3g} on ate_ if every call adds the same change; "
                f"ate_ = {self.ate_:.3g}). See drift_; idempotence_check=0 skips this check.",
                UserWarning, stacklevel=4)

    @_fit_context(prefer_skip_nested_validation=True)
    def fit_scores(self, r_orig, r_rewrite, r_rewrite2, w):
        """Estimate the effects from rewards that are already computed.

        Parameters
        ----------
        r_orig : array-like of shape (n_samples,)
            Rewards ``R(x)`` of the responses.
        r_rewrite : array-like of shape (n_samples,)
            Rewards ``R(x')`` of their rewrites to the opposite attribute.
        r_rewrite2 : array-like of shape (n_samples,)
            Rewards ``R(x'')`` of the rewrites of rewrites (back to ``w``).
        w : array-like of shape (n_samples,)
            The binary attribute of each response.

        Returns
        -------
        self : object
            Fitted estimator.
        """
        self._clear_fitted()
        columns = []
        for name, values in (("r_orig", r_orig), ("r_rewrite", r_rewrite),
                             ("r_rewrite2", r_rewrite2)):
            values = check_array(values, ensure_2d=False, dtype=np.float64, input_name=name)
            if values.ndim != 1:
                raise ValueError(
                    f"{name} must be 1-D with one reward per response, got shape "
                    f"{values.shape}."
                )
            columns.append(values)
        check_consistent_length(*columns, w)
        n_samples = columns[0].shape[0]
        w = self._check_attribute(w, n_samples, "w")
        self._estimate(np.column_stack(columns), w == self.classes_[1])
        return self

    def _clear_fitted(self):
        for name in [k for k in vars(self) if k.endswith("_") and not k.startswith("_")]:
            delattr(self, name)

    def _check_attribute(self, w, n_samples, name):
        w = check_array(w, ensure_2d=False, dtype=None, input_name=name)
        if w.ndim != 1 or w.shape[0] != n_samples:
            raise ValueError(
                f"{name} must have shape ({n_samples},), one attribute value per "
                f"response, got shape {w.shape}."
            )
        try:
            classes = np.unique(w)
        except TypeError as exc:
            raise TypeError(
                f"{name} must hold two comparable values (the binary attribute W); "
                f"sorting them failed: {exc}"
            ) from exc
        if classes.size != 2:
            noun = "class" if classes.size == 1 else "classes"
            raise ValueError(
                f"{name} must take exactly two values (the binary attribute W), got "
                f"{classes.size} {noun}: {classes.tolist()[:10]}."
            )
        counts = [int(np.sum(w == c)) for c in classes]
        if min(counts) < 2:
            raise ValueError(
                f"{name} must have at least 2 responses of each attribute value to "
                f"estimate a standard error, got counts {dict(zip(classes.tolist(), counts))}."
            )
        self.classes_ = classes
        return w

    def _classify(self, texts, what):
        labels = np.asarray(self.attribute_classifier(_as_batch(texts, texts.ndim == 2)))
        if labels.shape != (texts.shape[0],):
            raise ValueError(
                f"attribute_classifier must return one label per text: got shape "
                f"{labels.shape} for {texts.shape[0]} {what}."
            )
        return labels

    def _rewrite(self, texts, targets, seed, cache):
        """One pass of the rewriter: texts[i] -> Re(texts[i], targets[i])."""
        two_d = texts.ndim == 2
        pass_seed = seed if _accepts_random_state(self.rewriter) else None
        kwargs = {} if pass_seed is None else {"random_state": pass_seed}
        items = list(texts) if two_d else texts.tolist()
        out = [None] * len(items)
        for label in self.classes_:
            batch_index, batch_keys, waiting = [], [], {}
            for i in np.flatnonzero(targets == label).tolist():
                key = _cache_key(items[i]) if self.cache else None
                if key is not None:
                    key = (_python_scalar(label), pass_seed, key)
                    if key in cache:
                        out[i] = cache[key]
                        continue
                    if key in waiting:
                        waiting[key].append(i)
                        continue
                    waiting[key] = []
                batch_index.append(i)
                batch_keys.append(key)
            if not batch_index:
                continue
            batch = _as_batch([items[i] for i in batch_index], two_d)
            result = self.rewriter(batch, _python_scalar(label), **kwargs)
            try:
                n_returned = len(result)
            except TypeError as exc:
                raise TypeError(
                    "rewriter must return a sequence of rewritten texts, got "
                    f"{type(result).__name__}."
                ) from exc
            if n_returned != len(batch_index):
                raise ValueError(
                    f"rewriter returned {n_returned} texts for a batch of "
                    f"{len(batch_index)}; it must return exactly one rewrite per text."
                )
            self.n_rewriter_calls_ += len(batch_index)
            for i, key, rewrite in zip(batch_index, batch_keys, result):
                out[i] = rewrite
                if key is not None:
                    cache[key] = rewrite
                    for j in waiting[key]:
                        out[j] = rewrite
        return _assemble(out, two_d)

    def _score(self, texts, prompts, what):
        batch = _as_batch(texts, texts.ndim == 2)
        if prompts is None:
            scores = self.reward_model(batch)
        else:
            scores = self.reward_model(batch, prompts=prompts)
        try:
            scores = np.asarray(scores, dtype=np.float64)
        except (TypeError, ValueError) as exc:
            raise TypeError(
                f"reward_model must return real scores, got {type(scores).__name__} "
                f"that does not convert to floats for the {what}."
            ) from exc
        n_samples = texts.shape[0]
        if scores.ndim == 2 and scores.shape[1] == 1:
            scores = scores[:, 0]
        if scores.shape != (n_samples,):
            raise ValueError(
                f"reward_model must return one score per text: got shape {scores.shape} "
                f"for {n_samples} {what}."
            )
        n_bad = int(np.sum(~np.isfinite(scores)))
        if n_bad:
            raise ValueError(
                f"reward_model returned {n_bad} non-finite scores (NaN or inf) for the "
                f"{n_samples} {what}; scores must be finite."
            )
        return scores

    def _estimate(self, rewards, treated):
        r_orig, r_rewrite, r_rewrite2 = rewards.T
        sign = np.where(treated, 1.0, -1.0)
        untreated = ~treated
        # RATE contrasts the rewrite of the rewrite with the rewrite, so the
        # off-target changes both carry cancel (Algorithm 1 of the paper).
        unit_effects = sign * (r_rewrite2 - r_rewrite)
        single = sign * (r_orig - r_rewrite)

        estimates, se = {}, {}
        if self.paired:
            estimates["ate"], se["ate"] = paired_effect(unit_effects)
            estimates["att"], se["att"] = paired_effect(unit_effects[treated])
            estimates["atu"], se["atu"] = paired_effect(unit_effects[untreated])
        else:
            do_treat = np.where(treated, r_rewrite2, r_rewrite)
            do_control = np.where(treated, r_rewrite, r_rewrite2)
            estimates["ate"], se["ate"] = unpaired_effect(do_treat, do_control)
            estimates["att"], se["att"] = unpaired_effect(
                r_rewrite2[treated], r_rewrite[treated]
            )
            estimates["atu"], se["atu"] = unpaired_effect(
                r_rewrite[untreated], r_rewrite2[untreated]
            )
        estimates["naive"], se["naive"] = unpaired_effect(r_orig[treated], r_orig[untreated])
        estimates["single_rewrite_ate"], se["single_rewrite_ate"] = paired_effect(single)
        estimates["single_rewrite_att"], se["single_rewrite_att"] = paired_effect(
            single[treated]
        )
        estimates["single_rewrite_atu"], se["single_rewrite_atu"] = paired_effect(
            single[untreated]
        )

        self.ate_ = estimates["ate"]
        self.att_ = estimates["att"]
        self.atu_ = estimates["atu"]
        self.naive_ = estimates["naive"]
        self.single_rewrite_ate_ = estimates["single_rewrite_ate"]
        self.single_rewrite_att_ = estimates["single_rewrite_att"]
        self.single_rewrite_atu_ = estimates["single_rewrite_atu"]
        self.se_ = {key: se[key] for key in ESTIMANDS}
        self.ci_ = {key: tuple(normal_ci(estimates[key], se[key], self.alpha).tolist())
                    for key in ESTIMANDS}
        self.unit_effects_ = unit_effects
        self.rewards_ = rewards
        self.n_treated_ = int(treated.sum())
        self.n_untreated_ = int(untreated.sum())

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.required = True
        # y is the binary attribute W: two class labels, not a regression target.
        tags.classifier_tags = ClassifierTags(multi_class=False)
        tags.input_tags.string = True
        return tags
