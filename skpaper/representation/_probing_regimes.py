"""The four hard probing regimes of Kantamneni, Engels et al. (ICML 2025) as index helpers.

Data scarcity, class imbalance, label noise and covariate shift: each helper returns
train/test indices (or noisy labels) drawn from one seed, with the paper's grids in
:func:`regime_grid`.
"""

from numbers import Integral, Real

import numpy as np
from sklearn.utils import check_random_state
from sklearn.utils.multiclass import type_of_target

from ..utils._sklearn import Interval, StrOptions, validate_params
from ._docs import _SHARED_DOCS, Substitution

__all__ = [
    "covariate_shift_split",
    "flip_labels",
    "imbalance_split",
    "regime_grid",
    "scarcity_split",
]


def _binary_labels(y, name="y"):
    y = np.asarray(y)
    if y.ndim != 1:
        raise ValueError(f"{name} must be a 1-D array of binary labels, got shape {y.shape}.")
    kind = type_of_target(y, input_name=name)
    classes = np.unique(y)
    if kind not in ("binary",) or classes.size != 2:
        raise ValueError(
            f"{name} must hold exactly two classes (the larger is positive), got "
            f"{classes.size} class(es) of target type {kind!r}."
        )
    return y == classes[1]


def _draw(rng, pool, size, what):
    if size > pool.size:
        raise ValueError(
            f"not enough {what}: {size} requested but only {pool.size} available."
        )
    return rng.choice(pool, size=size, replace=False)


def _ratio_split(positive, n_train, n_test, pos_ratio, rng):
    pos, neg = np.flatnonzero(positive), np.flatnonzero(~positive)
    n_pos = int(np.ceil(pos_ratio * n_train))
    train_pos = _draw(rng, pos, n_pos, "positive samples for training")
    train_neg = _draw(rng, neg, n_train - n_pos, "negative samples for training")
    rest_pos, rest_neg = np.setdiff1d(pos, train_pos), np.setdiff1d(neg, train_neg)
    if n_test is None:
        # The largest test set with the same class ratio that the remaining data allow.
        if pos_ratio <= 0:
            n_test = rest_neg.size
        elif pos_ratio >= 1:
            n_test = rest_pos.size
        else:
            n_test = int(min(rest_pos.size / pos_ratio, rest_neg.size / (1 - pos_ratio)))
            while n_test > 0 and (int(np.ceil(pos_ratio * n_test)) > rest_pos.size
                                  or n_test - int(np.ceil(pos_ratio * n_test))
                                  > rest_neg.size):
                n_test -= 1
    n_test_pos = int(np.ceil(pos_ratio * n_test))
    test_pos = _draw(rng, rest_pos, n_test_pos, "positive samples for testing")
    test_neg = _draw(rng, rest_neg, n_test - n_test_pos, "negative samples for testing")
    train = rng.permutation(np.concatenate([train_pos, train_neg]))
    test = rng.permutation(np.concatenate([test_pos, test_neg]))
    return train, test


@validate_params(
    {
        "y": ["array-like"],
        "n_train": [Interval(Integral, 1, None, closed="left")],
        "n_test": [Interval(Integral, 0, None, closed="left"), None],
        "pos_ratio": [Interval(Real, 0, 1, closed="both")],
        "random_state": ["random_state"],
    },
    prefer_skip_nested_validation=True,
)
@Substitution(**_SHARED_DOCS)
def scarcity_split(y, n_train, *, n_test=None, pos_ratio=0.5, random_state=None):
    """Train/test indices with ``n_train`` training samples in a fixed class ratio.

    The data-scarcity regime of [1]_: ``ceil(pos_ratio * n_train)`` positives and the
    rest negatives for training, and a disjoint test set with the same ratio.

    Parameters
    ----------
    y : array-like of shape (n_samples,)
        Binary labels; the larger label is the positive class.
    n_train : int
        Number of training samples.
    n_test : int or None, default=None
        Number of test samples; ``None`` takes the largest test set with the same
        class ratio that the remaining samples allow.
    pos_ratio : float, default=0.5
        Fraction of positives in both sets.
    {regime_random_state}

    Returns
    -------
    train : ndarray of int
        Training indices, in random order.
    test : ndarray of int
        Test indices, disjoint from ``train``, in random order.

    Raises
    ------
    ValueError
        If a class has too few samples for the request.

    {probing_references}

    Examples
    --------
    >>> import numpy as np
    >>> from skpaper.representation import scarcity_split
    >>> y = np.repeat([0, 1], 50)
    >>> train, test = scarcity_split(y, 8, n_test=20, random_state=0)
    >>> int(y[train].sum()), int(y[test].sum()), len(np.intersect1d(train, test))
    (4, 10, 0)
    """
    positive = _binary_labels(y)
    return _ratio_split(positive, n_train, n_test, pos_ratio, check_random_state(random_state))


@validate_params(
    {
        "y": ["array-like"],
        "pos_ratio": [Interval(Real, 0, 1, closed="both")],
        "n_train": [Interval(Integral, 1, None, closed="left")],
        "n_test": [Interval(Integral, 0, None, closed="left"), None],
        "random_state": ["random_state"],
    },
    prefer_skip_nested_validation=True,
)
@Substitution(**_SHARED_DOCS)
def imbalance_split(y, pos_ratio, *, n_train=1024, n_test=None, random_state=None):
    """Train/test indices whose positive fraction is ``pos_ratio`` in both sets.

    The class-imbalance regime of [1]_ (ratios 0.05 to 0.95, see :func:`regime_grid`):
    the test set has the same imbalance as the training set.

    Parameters
    ----------
    y : array-like of shape (n_samples,)
        Binary labels; the larger label is the positive class.
    pos_ratio : float
        Fraction of positives, in ``[0, 1]``.
    n_train : int, default=1024
        Number of training samples.
    n_test : int or None, default=None
        Number of test samples; ``None`` takes the largest test set with the same
        ratio.
    {regime_random_state}

    Returns
    -------
    train : ndarray of int
        Training indices, ``ceil(pos_ratio * n_train)`` of them positive, in random
        order.
    test : ndarray of int
        Test indices with the same ratio, disjoint from ``train``, in random order.

    {probing_references}

    Examples
    --------
    >>> import numpy as np
    >>> from skpaper.representation import imbalance_split
    >>> y = np.repeat([0, 1], 100)
    >>> train, test = imbalance_split(y, 0.1, n_train=50, n_test=40, random_state=0)
    >>> int(y[train].sum()), int(y[test].sum())
    (5, 4)
    """
    positive = _binary_labels(y)
    return _ratio_split(positive, n_train, n_test, pos_ratio, check_random_state(random_state))


@validate_params(
    {
        "y": ["array-like"],
        "frac": [Interval(Real, 0, 0.5, closed="both")],
        "random_state": ["random_state"],
    },
    prefer_skip_nested_validation=True,
)
@Substitution(**_SHARED_DOCS)
def flip_labels(y, frac, *, random_state=None):
    """Flip exactly ``int(frac * n)`` binary labels, chosen uniformly at random.

    The label-noise regime of [1]_ (fractions 0 to 0.5): only training labels are
    corrupted; evaluate on clean test labels.

    Parameters
    ----------
    y : array-like of shape (n_samples,)
        Binary labels.
    frac : float
        Fraction of labels to flip, in ``[0, 0.5]``.
    {regime_random_state}

    Returns
    -------
    y_noisy : ndarray of shape (n_samples,)
        A copy of ``y`` with the chosen labels swapped to the other class.

    {probing_references}

    Examples
    --------
    >>> import numpy as np
    >>> from skpaper.representation import flip_labels
    >>> y = np.zeros(10, dtype=int)
    >>> int(flip_labels(y, 0.3, random_state=0).sum())
    3
    """
    y = np.asarray(y)
    if y.ndim != 1:
        raise ValueError(f"y must be a 1-D array of binary labels, got shape {y.shape}.")
    classes = np.unique(y)
    if classes.size > 2:
        raise ValueError(
            f"y must hold at most two classes, got {classes.size} ({classes[:5]!r}...)."
        )
    if classes.size == 1:
        # A single observed class: flipping needs the other label, taken as 1 - c for 0/1.
        if classes[0] not in (0, 1):
            raise ValueError(
                f"y holds the single class {classes[0]!r}; flipping needs two classes "
                "or 0/1 labels."
            )
        classes = np.array([0, 1], dtype=y.dtype)
    rng = check_random_state(random_state)
    n_flip = int(len(y) * frac)
    idx = rng.choice(len(y), size=n_flip, replace=False)
    out = y.copy()
    out[idx] = np.where(y[idx] == classes[0], classes[1], classes[0])
    return out


@validate_params(
    {
        "y": ["array-like"],
        "domain": ["array-like"],
        "n_train": [Interval(Integral, 1, None, closed="left")],
        "n_test": [Interval(Integral, 1, None, closed="left")],
        "random_state": ["random_state"],
    },
    prefer_skip_nested_validation=True,
)
@Substitution(**_SHARED_DOCS)
def covariate_shift_split(y, domain, *, n_train=1024, n_test=300, random_state=None):
    """Balanced training indices from one domain, balanced test indices from another.

    The covariate-shift regime of [1]_: probes are trained on up to 1024 in-distribution
    samples and tested on 300 samples of a shifted distribution (the paper's GLUE-X,
    translated, name-swapped and cartoon-swapped sets).

    Parameters
    ----------
    y : array-like of shape (n_samples,)
        Binary labels.
    domain : array-like of shape (n_samples,)
        ``0`` (or ``False``) marks in-distribution samples, anything else shifted ones.
    n_train : int, default=1024
        Number of in-distribution training samples.
    n_test : int, default=300
        Number of shifted-domain test samples.
    {regime_random_state}

    Returns
    -------
    train : ndarray of int
        In-distribution indices, half positive (ceil).
    test : ndarray of int
        Shifted-domain indices, half positive (ceil).

    {probing_references}

    Examples
    --------
    >>> import numpy as np
    >>> from skpaper.representation import covariate_shift_split
    >>> y = np.tile([0, 1], 50)
    >>> domain = np.repeat([0, 1], 50)
    >>> train, test = covariate_shift_split(y, domain, n_train=10, n_test=10, random_state=0)
    >>> bool(np.all(domain[train] == 0) and np.all(domain[test] == 1))
    True
    """
    positive = _binary_labels(y)
    domain = np.asarray(domain)
    if domain.shape != positive.shape:
        raise ValueError(
            f"domain must have the shape of y, {positive.shape}, got {domain.shape}."
        )
    shifted = domain.astype(bool)
    rng = check_random_state(random_state)
    in_idx, out_idx = np.flatnonzero(~shifted), np.flatnonzero(shifted)
    n_pos = int(np.ceil(n_train / 2))
    train = np.concatenate([
        _draw(rng, in_idx[positive[in_idx]], n_pos, "in-distribution positives"),
        _draw(rng, in_idx[~positive[in_idx]], n_train - n_pos, "in-distribution negatives"),
    ])
    n_pos = int(np.ceil(n_test / 2))
    test = np.concatenate([
        _draw(rng, out_idx[positive[out_idx]], n_pos, "shifted-domain positives"),
        _draw(rng, out_idx[~positive[out_idx]], n_test - n_pos, "shifted-domain negatives"),
    ])
    return rng.permutation(train), rng.permutation(test)


@validate_params(
    {"regime": [StrOptions({"scarcity", "imbalance", "noise"})]},
    prefer_skip_nested_validation=True,
)
@Substitution(**_SHARED_DOCS)
def regime_grid(regime):
    """The parameter grid of one regime, as in the paper's released code.

    Parameters
    ----------
    regime : {"scarcity", "imbalance", "noise"}
        ``"scarcity"``: training sizes ``round(2^t)`` for 20 values of ``t`` evenly
        spaced in ``[1, 10]`` (2 to 1024, duplicates dropped); ``"imbalance"``: 19
        positive ratios evenly spaced in ``[0.05, 0.95]``; ``"noise"``: 11 flipped
        fractions evenly spaced in ``[0, 0.5]``.

    Returns
    -------
    grid : ndarray
        Integer training sizes for ``"scarcity"``, float ratios or fractions
        otherwise, in increasing order.

    {probing_references}

    Examples
    --------
    >>> from skpaper.representation import regime_grid
    >>> regime_grid("scarcity")[[0, -1]].tolist(), len(regime_grid("noise"))
    ([2, 1024], 11)
    """
    if regime == "scarcity":
        return np.unique(np.round(np.logspace(1, 10, num=20, base=2)).astype(int))
    if regime == "imbalance":
        return np.linspace(0.05, 0.95, num=19)
    return np.linspace(0.0, 0.5, num=11)

