"""Focus Instruction Tuning (Lamb et al., ICML 2025) for tabular data, and its shared parts.

FIT trains one model on inputs paired with a *focus instruction*, which names
the feature to base the answer on (the core feature ``C``, or the spurious
feature ``S``) and the feature to ignore. The target of each example is its
*focus label*: the task label ``y`` for the four instruction types that keep
the task, and the spurious label ``y_S`` (the label that ``S``'s value is tied
to) for the two types that focus on ``S``. At inference the instruction steers
the model.

This module holds what every FIT estimator shares (the six focus types, focus
labels, the draw of a focus type per example, the "decoupling" permutation,
the majority mapping from a spurious value to its label, the per-type report)
and :class:`FocusInstructionTuner`, the meta-estimator for tabular data, in
which a focus instruction is a one-hot code appended to the features.
"""

from numbers import Integral

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, MetaEstimatorMixin, clone
from sklearn.ensemble import HistGradientBoostingClassifier
from sklearn.utils import check_random_state
from sklearn.utils.metaestimators import available_if
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import _check_sample_weight, check_is_fitted, has_fit_parameter

from ..utils._docstring import Substitution
from ..utils._sklearn import HasMethods, Interval, StrOptions, _fit_context, validate_data

__all__ = ["FOCUS_TYPES", "FocusInstructionTuner", "focus_labels"]

#: The six focus-instruction types of FIT, in the paper's order: the empty
#: instruction, focus(C), ignore(S), focus(C) and ignore(S), focus(S), focus(S)
#: and ignore(C).
FOCUS_TYPES = ("empty", "focus_C", "ignore_S", "focus_C_ignore_S", "focus_S", "focus_S_ignore_C")

#: Types whose focus label is the spurious label ``y_S``; the others keep ``y``.
SPURIOUS_TARGET_TYPES = frozenset({"focus_S", "focus_S_ignore_C"})

#: The feature each type tells the model to leave out (``None``: the empty
#: instruction names no feature). Focusing on one feature leaves out the other.
EXCLUDED_FEATURE = {
    "empty": None,
    "focus_C": "S",
    "ignore_S": "S",
    "focus_C_ignore_S": "S",
    "focus_S": "C",
    "focus_S_ignore_C": "C",
}

#: Docstring pieces shared by the FIT estimators (filled by ``Substitution``).
_SHARED_DOCS = {
    "focus": """
        focus : str or None, default=None
            The focus instruction, one of ``focus_types_`` (the types trained);
            None uses ``default_focus``.""",
    "X_focus": """
        X : array-like of shape (n_samples, n_features) or list of str
            Inputs: a table for :class:`FocusInstructionTuner`, texts for
            :class:`FocusInstructionLM`.""",
    "X_table": """
        X : array-like of shape (n_samples, n_features)
            Input table, with the columns seen in ``fit``.""",
    "X_text": """
        X : list of str
            Task inputs.""",
}


# ------------------------------------------------------------------------ shared helpers
def check_focus(focus, allowed, name="focus"):
    """Return ``focus`` if it is one of ``allowed``, else raise naming both."""
    if not isinstance(focus, str) or focus not in allowed:
        raise ValueError(
            f"{name} must be one of {tuple(allowed)}, got {focus!r}."
            + ("" if focus not in FOCUS_TYPES else " The model was not trained with it; "
               "add it to focus_types.")
        )
    return focus


def focus_labels(y, y_spurious, focus):
    """Return the focus labels of FIT: ``y`` or the spurious label, by instruction type.

    The focus label of [1]_ (the target of its FIT objective, Eq. 3) is the
    task label ``y`` under the empty instruction, focus(C), ignore(S) and
    focus(C) with ignore(S), and the spurious label ``y_S`` under focus(S)
    and focus(S) with ignore(C).

    Parameters
    ----------
    y : array-like of shape (n_samples,)
        Task labels.
    y_spurious : array-like of shape (n_samples,)
        Spurious labels ``y_S`` (the label each sample's spurious value is tied to).
    focus : str or array-like of str of shape (n_samples,)
        One type of :data:`FOCUS_TYPES` for every sample, or one per sample.

    Returns
    -------
    y_focus : ndarray of shape (n_samples,)
        The target of each sample under its instruction type.

    References
    ----------
    .. [1] T. A. Lamb, A. Davies, A. Paren, P. H. S. Torr and F. Pinto, "Focus
       On This, Not That! Steering LLMs with Adaptive Feature Specification",
       ICML 2025.

    Examples
    --------
    >>> from skpaper.language import focus_labels
    >>> focus_labels([0, 1, 2], [2, 2, 2], "focus_S").tolist()
    [2, 2, 2]
    >>> focus_labels([0, 1, 2], [2, 2, 2], ["empty", "focus_S_ignore_C", "ignore_S"]).tolist()
    [0, 2, 2]
    """
    y = np.asarray(y)
    y_spurious = np.asarray(y_spurious)
    if y.ndim != 1 or y_spurious.shape != y.shape:
        raise ValueError(
            f"y and y_spurious must be 1-D of the same length, got shapes {y.shape} and "
            f"{y_spurious.shape}."
        )
    if isinstance(focus, str):
        check_focus(focus, FOCUS_TYPES)
        return (y_spurious if focus in SPURIOUS_TARGET_TYPES else y).copy()
    focus = np.asarray(focus, dtype=object)
    if focus.shape != y.shape:
        raise ValueError(
            f"focus must be a str or hold one type per sample ({y.shape[0]}), got shape "
            f"{focus.shape}."
        )
    unknown = sorted({str(f) for f in focus} - set(FOCUS_TYPES))
    if unknown:
        raise ValueError(f"focus holds unknown types {unknown}; expected {FOCUS_TYPES}.")
    spurious = np.isin(focus, list(SPURIOUS_TARGET_TYPES))
    return np.where(spurious, y_spurious, y)


def resolve_focus_types(focus_types, type_probs, default_focus):
    """Validated tuple of trained types and their sampling probabilities."""
    if isinstance(focus_types, str):
        if focus_types != "all":
            raise ValueError(f"focus_types must be 'all' or a list of types, got {focus_types!r}.")
        types = FOCUS_TYPES
    else:
        types = tuple(focus_types)
        if not types:
            raise ValueError("focus_types must name at least one type, got an empty list.")
        unknown = [t for t in types if t not in FOCUS_TYPES]
        if unknown:
            raise ValueError(f"focus_types holds unknown types {unknown}; expected a subset of "
                             f"{FOCUS_TYPES}.")
        if len(set(types)) != len(types):
            raise ValueError(f"focus_types must not repeat a type, got {list(types)}.")
        # A fixed order makes the instruction codes independent of the order given.
        types = tuple(t for t in FOCUS_TYPES if t in types)
    if default_focus not in types:
        raise ValueError(f"default_focus={default_focus!r} must be one of the trained "
                         f"focus_types {types}.")
    if type_probs is None:
        probs = np.full(len(types), 1.0 / len(types))
    else:
        if isinstance(type_probs, dict):
            extra = sorted(set(type_probs) - set(types))
            if extra:
                raise ValueError(f"type_probs names types {extra} that are not in "
                                 f"focus_types {types}.")
            probs = np.array([float(type_probs.get(t, 0.0)) for t in types])
        else:
            probs = np.asarray(type_probs, dtype=float).ravel()
            if probs.shape != (len(types),):
                raise ValueError(f"type_probs must hold one probability per focus type "
                                 f"({len(types)}), got {probs.shape[0]}.")
        if not np.all(np.isfinite(probs)) or np.any(probs < 0) or probs.sum() <= 0:
            raise ValueError(f"type_probs must be non-negative with a positive sum, got "
                             f"{probs.tolist()}.")
        probs = probs / probs.sum()
    return types, probs


def draw_focus_plan(n_samples, types, probs, n_copies, decouple, rng):
    """Draw one focus type per training copy and, when decoupling, its spurious source.

    Returns
    -------
    rows : ndarray of int
        Index of the original sample of each training copy.
    type_index : ndarray of int
        Index into ``types`` of each copy's focus instruction.
    source : ndarray of int
        Index of the sample whose spurious value the copy carries: ``rows``
        itself, or, with ``decouple``, a random permutation of the copies that
        share an instruction type excluding a feature (the adaptation of
        :class:`FocusInstructionTuner`'s ``decouple_excluded``).
    """
    rows = np.tile(np.arange(n_samples), n_copies)
    type_index = rng.choice(len(types), size=rows.size, p=probs)
    source = rows.copy()
    if decouple:
        for t, name in enumerate(types):
            if EXCLUDED_FEATURE[name] is None:
                continue
            members = np.flatnonzero(type_index == t)
            source[members] = rows[rng.permutation(members)]
    return rows, type_index, source


def majority_mapping(keys, y, weights=None):
    """For every distinct spurious value, the label it co-occurs with most (ties: first class).

    Parameters
    ----------
    keys : list of hashable
        The spurious value of each training sample.
    y : ndarray of shape (n_samples,)
    weights : ndarray of shape (n_samples,) or None, default=None
        Weight of each sample in the counts (None: 1 each).

    Returns
    -------
    mapping : dict
        Spurious value -> label.
    """
    classes, codes = np.unique(y, return_inverse=True)
    weights = np.ones(len(codes)) if weights is None else np.asarray(weights, dtype=float)
    values = {}
    for key, code, weight in zip(keys, codes, weights):
        values.setdefault(key, np.zeros(len(classes)))[code] += weight
    return {key: classes[int(np.argmax(counts))] for key, counts in values.items()}


def map_spurious(mapping, keys, name="X"):
    """Spurious labels of ``keys`` through a fitted mapping, or raise on unseen values."""
    missing = [i for i, key in enumerate(keys) if key not in mapping]
    if missing:
        raise ValueError(
            f"{name} holds spurious values never seen in fit (first at row {missing[0]}, "
            f"{len(missing)} in all), whose spurious label is unknown; pass y_spurious."
        )
    return np.array([mapping[key] for key in keys])


def check_report_targets(y, y_spurious, n_samples, classes):
    """Validate the labels given to ``focus_accuracy_report``."""
    y = np.asarray(y)
    if y.ndim != 1 or y.shape[0] != n_samples:
        raise ValueError(f"y must hold one label per sample ({n_samples}), got shape {y.shape}.")
    if y_spurious is not None:
        y_spurious = np.asarray(y_spurious)
        if y_spurious.shape != y.shape:
            raise ValueError(f"y_spurious must hold one label per sample ({n_samples}), got "
                             f"shape {y_spurious.shape}.")
        unknown = sorted({str(v) for v in y_spurious} - {str(c) for c in classes})
        if unknown:
            raise ValueError(f"y_spurious holds labels {unknown} outside classes_ "
                             f"{list(classes)}.")
    return y, y_spurious


class FocusMixin:
    """Scoring shared by FIT estimators: accuracy under one instruction, and per type.

    Subclasses provide ``_check_inference_input(X)`` (validated input),
    ``_spurious_targets(X)`` (spurious labels of validated input) and
    ``predict(X, focus=None)``, and set ``classes_`` and ``focus_types_``.
    """

    def _call_spurious_label(self, X_s):
        """Spurious labels from a ``spurious_label`` callable, checked for shape."""
        y_s = np.asarray(self.spurious_label(X_s))
        if y_s.shape != (len(X_s),):
            raise ValueError(f"spurious_label must return one label per sample ({len(X_s)}), "
                             f"got shape {y_s.shape}.")
        return y_s

    def _set_classes(self, y, y_s):
        """``classes_``: the task labels and the spurious labels together."""
        try:
            self.classes_ = np.unique(np.concatenate([y, y_s]))
        except TypeError as exc:
            raise TypeError(f"spurious_label must return labels comparable with y's "
                            f"({y.dtype}), got {y_s.dtype}.") from exc

    @Substitution(**_SHARED_DOCS)
    def score(self, X, y, sample_weight=None, focus=None):
        """Return the accuracy of :meth:`predict` under ``focus`` against ``y``.

        Pass the task labels for the types that keep the task and the
        spurious labels for the focus(S) types (or use
        :meth:`focus_accuracy_report`, which picks the right ones).

        Parameters
        ----------
        {X_focus}
        y : array-like of shape (n_samples,)
            True focus labels under ``focus``.
        sample_weight : array-like of shape (n_samples,) or None, default=None
            Sample weights; None weighs the samples equally.
        {focus}

        Returns
        -------
        score : float
            The share of (weighted) predictions equal to ``y``.
        """
        from sklearn.metrics import accuracy_score

        return float(accuracy_score(y, self.predict(X, focus=focus), sample_weight=sample_weight))

    @Substitution(**_SHARED_DOCS)
    def focus_accuracy_report(self, X, y, y_spurious=None):
        """Return the focus accuracy of every trained instruction type (not only their mean).

        Parameters
        ----------
        {X_focus}
        y : array-like of shape (n_samples,)
            Task labels.
        y_spurious : array-like of shape (n_samples,) or None, default=None
            Spurious labels; None derives them with ``spurious_label`` (the
            training-time mapping, which raises on spurious values never seen
            in fit: pass them here for such data).

        Returns
        -------
        report : dict
            ``{focus_type: accuracy}``: the share of predictions under that
            instruction equal to its focus label.
        """
        check_is_fitted(self)
        X = self._check_inference_input(X)
        y, y_spurious = check_report_targets(y, y_spurious, len(X), self.classes_)
        if y_spurious is None:
            y_spurious = self._spurious_targets(X)
        return {
            t: float(np.mean(self.predict(X, focus=t) == focus_labels(y, y_spurious, t)))
            for t in self.focus_types_
        }


# --------------------------------------------------------------------- tabular estimator
def _resolve_columns(columns, n_features, feature_names, name):
    """Integer indices of ``columns`` (ints, a boolean mask, or names of ``feature_names``)."""
    if columns is None:
        return None
    if isinstance(columns, (Integral, str)):
        columns = [columns]
    arr = np.asarray(columns)
    if arr.dtype == bool:
        if arr.shape != (n_features,):
            raise ValueError(f"{name} as a boolean mask must have n_features={n_features} "
                             f"entries, got {arr.shape}.")
        return np.flatnonzero(arr)
    arr = arr.ravel()
    if arr.dtype.kind in "US" or arr.dtype == object:
        if feature_names is None:
            raise ValueError(f"{name} holds column names {arr.tolist()}, but X has no feature "
                             "names (pass a DataFrame or integer indices).")
        index = {str(f): i for i, f in enumerate(feature_names)}
        unknown = [str(c) for c in arr if str(c) not in index]
        if unknown:
            raise ValueError(f"{name} names unknown columns {unknown}; X has "
                             f"{list(feature_names)}.")
        arr = np.array([index[str(c)] for c in arr])
    if arr.dtype.kind not in "iu":
        raise TypeError(f"{name} must hold ints, str names or a boolean mask, got "
                        f"{arr.dtype} values {arr.tolist()}.")
    if arr.size and (arr.min() < -n_features or arr.max() >= n_features):
        raise ValueError(f"{name} must index the {n_features} columns of X, got {arr.tolist()}.")
    arr = arr % n_features
    if len(set(arr.tolist())) != arr.size:
        raise ValueError(f"{name} must not repeat a column, got {arr.tolist()}.")
    return arr



def _row_keys(X_s):
    """Hashable key of each row of the spurious columns (exact float values)."""
    X_s = np.ascontiguousarray(X_s, dtype=np.float64)
    return [row.tobytes() for row in X_s]


def _has_proba(self):
    est = self.estimator_ if hasattr(self, "estimator_") else self._base()
    return hasattr(est, "predict_proba")


def _numeric(X):
    """Dates and durations as float64 counts of their unit, as scikit-learn's models read them.

    ``validate_data`` keeps ``datetime64`` and ``timedelta64`` arrays as they are; the
    augmented table mixes ``X`` with float columns, which numpy cannot do with them.
    """
    return X.astype(np.float64) if X.dtype.kind in "mM" else X


class FocusInstructionTuner(FocusMixin, ClassifierMixin, MetaEstimatorMixin, BaseEstimator):
    """Focus Instruction Tuning (FIT) of any classifier on tabular data.

    FIT [1]_ trains one model to answer *according to a focus instruction*:
    focus on the core feature ``C``, ignore the spurious feature ``S``, or
    focus on ``S`` instead. Each training example is paired with one of six
    instruction types, drawn at random, and labelled with its *focus label*:
    the task label ``y``, or under focus(S) the spurious label ``y_S`` that
    the value of ``S`` is tied to. At inference, :meth:`predict` takes the
    instruction: ``focus="focus_C_ignore_S"`` asks for the task answer
    without the shortcut, ``focus="focus_S"`` for the shortcut's answer.

    Here the features are split into core columns and spurious columns, the
    instruction is a one-hot code of its type appended to them, and
    ``base_estimator`` learns the focus labels from the augmented table.

    Parameters
    ----------
    base_estimator : classifier or None, default=None
        Learner of the focus labels; cloned. It must model interactions
        between the instruction code and the features (trees, MLPs). None
        uses :class:`~sklearn.ensemble.HistGradientBoostingClassifier`.
    core_columns : int, str, array-like or None, default=None
        Columns of the core feature ``C`` (indices, names of a DataFrame's
        columns, or a boolean mask). None takes every column that is not
        spurious. Columns in neither set are not used.
    spurious_columns : int, str, array-like or None, default=None
        Columns of the spurious feature ``S``; required (fit raises while
        None).
    spurious_label : "majority" or callable, default="majority"
        How the spurious label ``y_S`` of a sample is found: ``"majority"``
        ties every distinct value of the spurious columns to the label it
        co-occurs with most in the training data (the training-time mapping);
        a callable maps ``X[:, spurious_columns]`` to labels.
    focus_types : "all" or list of str, default="all"
        The instruction types trained, among :data:`FOCUS_TYPES`: ``"empty"``
        (no instruction), ``"focus_C"``, ``"ignore_S"``,
        ``"focus_C_ignore_S"``, ``"focus_S"``, ``"focus_S_ignore_C"``.
    type_probs : array-like, dict or None, default=None
        Sampling probabilities of the types (one per type of ``focus_types``,
        in :data:`FOCUS_TYPES` order, or a dict type -> weight); None draws
        them uniformly, which keeps the mix balanced.
    decouple_excluded : bool, default=False
        Within the examples drawn for a type that excludes ``S`` (focus(C),
        ignore(S), both), shuffle the spurious columns, so that the focus
        label cannot depend on ``S``; within those drawn for a type that
        excludes ``C`` (the focus(S) types), shuffle the spurious columns as
        well and label each example by the spurious label of its new ``S``, so
        that the label cannot depend on ``C``. An adaptation, not part of the
        paper (see Notes).
    default_focus : str, default="focus_C_ignore_S"
        The instruction used when :meth:`predict`, :meth:`predict_proba` or
        :meth:`score` get ``focus=None`` (so pipelines and grid searches score
        that behaviour); it must be among ``focus_types``.
    n_copies : int, default=1
        Focus-labelled copies of every training example, each with its own
        draw of the type.
    random_state : int, RandomState instance or None, default=None
        Seeds the type draws, the shuffles of ``decouple_excluded`` and, when
        the base estimator has a ``random_state`` left at None, the base
        estimator.

    Attributes
    ----------
    estimator_ : classifier
        The fitted clone of ``base_estimator``; its input is the core columns,
        the spurious columns and the instruction code, its target the index of
        the focus label in ``classes_``.
    classes_ : ndarray of shape (n_classes,)
        Labels of ``y`` and of the spurious labels.
    focus_types_ : tuple of str
        The trained types, in :data:`FOCUS_TYPES` order (the order of the
        instruction code).
    type_probs_ : ndarray of shape (n_types,)
        Their sampling probabilities.
    core_columns_ : ndarray of int
    spurious_columns_ : ndarray of int
    spurious_mapping_ : dict or None
        With ``spurious_label="majority"``: spurious value (the row's bytes)
        -> label.
    n_features_in_ : int
    feature_names_in_ : ndarray of shape (n_features_in_,)
        Only when ``X`` has string column names.

    See Also
    --------
    FocusInstructionLM : FIT of a tiny language model with natural-language
        focus instructions.
    focus_labels : The focus label of each instruction type.

    Notes
    -----
    FIT minimises the cross-entropy of the focus label under sampled focus
    instructions (Eq. 3 and Algorithm 1 of [1]_):
    :math:`\\min_\\theta \\mathbb{E}_{(x, y, y_S)} \\mathbb{E}_{I_{focus}}
    [-\\log p_\\theta(y_{focus} \\mid I, I_{focus}, x)]`, with
    :math:`y_{focus} = y_S` under focus(S) and focus(S)-ignore(C) and
    :math:`y_{focus} = y` otherwise. Any classifier trained on the augmented
    table does the same minimisation when it fits probabilities (log-loss).

    In the paper the instructions are natural language and the model an
    instruction-tuned LLM, which knows what "ignore the genre" means. A
    one-hot code has no meaning: plain FIT then learns to switch to ``y_S``
    on demand (steerability), but under focus(C) its label is still
    correlated with ``S`` in the training data, so it keeps using the
    shortcut and gains no robustness on a flipped correlation.
    ``decouple_excluded=True`` (an adaptation, not in [1]_) makes the
    focus label statistically independent of the excluded feature under each
    instruction, which yields the paper's invariance of focus(C) accuracy
    across spurious-correlation shifts. A spurious value never seen in
    training has no known spurious label, so focus(S) on it falls to chance:
    the limitation [1]_ reports for unseen genres.

    Reconstructed (the paper has no tabular variant): the one-hot
    instruction code, the ``"majority"`` construction of the training-time
    mapping from a spurious value to its label, the choice of which feature
    each type excludes (used only by ``decouple_excluded``: focusing on one
    feature excludes the other), and one type draw per example and copy
    (the paper draws a focus instruction per example in its Algorithm 1).

    References
    ----------
    .. [1] T. A. Lamb, A. Davies, A. Paren, P. H. S. Torr and F. Pinto, "Focus
       On This, Not That! Steering LLMs with Adaptive Feature Specification",
       ICML 2025.

    Examples
    --------
    >>> from skpaper.datasets import make_spurious_task
    >>> from skpaper.language import FocusInstructionTuner
    >>> X, y, y_s = make_spurious_task(1200, rho=0.9, random_state=0)
    >>> fit = FocusInstructionTuner(spurious_columns=list(range(4, 10)),
    ...                             decouple_excluded=True, random_state=0).fit(X, y)
    >>> X_new, y_new, y_s_new = make_spurious_task(600, split="flipped", random_state=1)
    >>> fit.score(X_new, y_new) > 0.9
    True
    >>> fit.score(X_new, y_s_new, focus="focus_S") > 0.95
    True
    """

    _parameter_constraints = {
        "base_estimator": [HasMethods(["fit", "predict"]), None],
        "core_columns": ["array-like", Integral, str, None],
        "spurious_columns": ["array-like", Integral, str, None],
        "spurious_label": [StrOptions({"majority"}), callable],
        "focus_types": [StrOptions({"all"}), "array-like"],
        "type_probs": ["array-like", dict, None],
        "decouple_excluded": ["boolean"],
        "default_focus": [StrOptions(set(FOCUS_TYPES))],
        "n_copies": [Interval(Integral, 1, 1024, closed="both")],
        "random_state": ["random_state"],
    }

    def __init__(self, base_estimator=None, *, core_columns=None, spurious_columns=None,
                 spurious_label="majority", focus_types="all", type_probs=None,
                 decouple_excluded=False, default_focus="focus_C_ignore_S", n_copies=1,
                 random_state=None):
        self.base_estimator = base_estimator
        self.core_columns = core_columns
        self.spurious_columns = spurious_columns
        self.spurious_label = spurious_label
        self.focus_types = focus_types
        self.type_probs = type_probs
        self.decouple_excluded = decouple_excluded
        self.default_focus = default_focus
        self.n_copies = n_copies
        self.random_state = random_state

    def _base(self):
        if self.base_estimator is None:
            return HistGradientBoostingClassifier()
        return self.base_estimator

    def _check_inference_input(self, X):
        return _numeric(validate_data(self, X, reset=False))

    def _spurious_targets(self, X):
        """Spurious labels of the rows of validated ``X``."""
        X_s = X[:, self.spurious_columns_]
        if self.spurious_label == "majority":
            return map_spurious(self.spurious_mapping_, _row_keys(X_s), "X")
        return self._call_spurious_label(X_s)

    @_fit_context(
        # base_estimator is validated when it is fitted
        prefer_skip_nested_validation=False
    )
    def fit(self, X, y, sample_weight=None):
        """Fit ``base_estimator`` on focus-labelled copies of ``(X, y)``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training table: the core and the spurious columns.
        y : array-like of shape (n_samples,)
            Task labels.
        sample_weight : array-like of shape (n_samples,) or None, default=None
            Weight of each training example. Every focus-labelled copy of an
            example carries its weight into ``base_estimator.fit`` (which must
            then take ``sample_weight``, as the default
            :class:`~sklearn.ensemble.HistGradientBoostingClassifier` does), and
            the ``"majority"`` spurious mapping counts weighted co-occurrences.
            An integer weight ``w`` is then the example repeated ``w`` times, up
            to the focus types drawn (one draw per row here, ``w`` draws for
            ``w`` repeated rows).

        Returns
        -------
        self : FocusInstructionTuner
            The fitted estimator.
        """
        X, y = validate_data(self, X, y)
        if sample_weight is not None:
            sample_weight = _check_sample_weight(sample_weight, X, ensure_non_negative=True)
        X = _numeric(X)
        check_classification_targets(y)
        if np.unique(y).size < 2:
            raise ValueError(f"y must hold at least two classes to tune on, got only one "
                             f"class ({np.unique(y)[0]!r}).")
        n_features = X.shape[1]
        names = getattr(self, "feature_names_in_", None)
        spurious = _resolve_columns(self.spurious_columns, n_features, names, "spurious_columns")
        if spurious is None or spurious.size == 0:
            raise ValueError(
                f"spurious_columns must name at least one column of X, got "
                f"{self.spurious_columns!r}."
            )
        core = _resolve_columns(self.core_columns, n_features, names, "core_columns")
        if core is None:
            core = np.setdiff1d(np.arange(n_features), spurious)
        overlap = np.intersect1d(core, spurious)
        if overlap.size:
            raise ValueError(
                f"core_columns and spurious_columns must not overlap, got columns "
                f"{overlap.tolist()} in both."
            )
        types, probs = resolve_focus_types(self.focus_types, self.type_probs, self.default_focus)
        rng = check_random_state(self.random_state)

        X_s = X[:, spurious]
        if self.spurious_label == "majority":
            keys = _row_keys(X_s)
            self.spurious_mapping_ = majority_mapping(keys, y, sample_weight)
            y_s = np.array([self.spurious_mapping_[k] for k in keys])
        else:
            self.spurious_mapping_ = None
            y_s = self._call_spurious_label(X_s)
        self._set_classes(y, y_s)

        rows, type_index, source = draw_focus_plan(
            X.shape[0], types, probs, int(self.n_copies), bool(self.decouple_excluded), rng
        )
        to_spurious = np.isin(np.asarray(types)[type_index], list(SPURIOUS_TARGET_TYPES))
        y_focus = np.where(to_spurious, y_s[source], y[rows])
        codes = np.searchsorted(self.classes_, y_focus)

        self.focus_types_ = types
        self.type_probs_ = probs
        self.core_columns_ = core
        self.spurious_columns_ = spurious
        Z = np.hstack([X[rows][:, core], X_s[source], np.eye(len(types))[type_index]])
        base = clone(self._base())
        if "random_state" in base.get_params() and base.get_params()["random_state"] is None:
            base.set_params(random_state=int(rng.randint(np.iinfo(np.int32).max)))
        if sample_weight is None:
            self.estimator_ = base.fit(Z, codes)
        elif not has_fit_parameter(base, "sample_weight"):
            raise TypeError(f"sample_weight was given but base_estimator "
                            f"{type(base).__name__} does not take sample_weight in fit.")
        else:
            self.estimator_ = base.fit(Z, codes, sample_weight=sample_weight[rows])
        return self

    def _augment(self, X, focus):
        """Core columns, spurious columns and the code of ``focus`` (validated)."""
        focus = self.default_focus if focus is None else focus
        check_focus(focus, self.focus_types_)
        code = np.zeros((X.shape[0], len(self.focus_types_)))
        code[:, self.focus_types_.index(focus)] = 1.0
        return np.hstack([X[:, self.core_columns_], X[:, self.spurious_columns_], code])

    @Substitution(**_SHARED_DOCS)
    def predict(self, X, focus=None):
        """Predict the focus label under the instruction ``focus``.

        Parameters
        ----------
        {X_table}
        {focus}

        Returns
        -------
        y_pred : ndarray of shape (n_samples,)
            The predicted focus labels, among ``classes_``.
        """
        check_is_fitted(self)
        X = _numeric(validate_data(self, X, reset=False))
        return self.classes_[self.estimator_.predict(self._augment(X, focus))]

    @available_if(_has_proba)
    @Substitution(**_SHARED_DOCS)
    def predict_proba(self, X, focus=None):
        """Predict the probabilities of the focus labels under ``focus``.

        Parameters
        ----------
        {X_table}
        {focus}

        Returns
        -------
        proba : ndarray of shape (n_samples, n_classes)
            Probabilities, columns in ``classes_`` order (zero for the labels
            that no drawn focus label took).
        """
        check_is_fitted(self)
        X = _numeric(validate_data(self, X, reset=False))
        proba = self.estimator_.predict_proba(self._augment(X, focus))
        # Labels absent from every drawn focus label get probability zero.
        full = np.zeros((X.shape[0], len(self.classes_)))
        full[:, np.asarray(self.estimator_.classes_, dtype=int)] = proba
        return full

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = False
        return tags
