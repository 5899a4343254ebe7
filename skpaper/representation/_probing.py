"""SAE probes and the quiver of arrows (Kantamneni, Engels et al., ICML 2025).

An SAE probe encodes activations with a sparse autoencoder, keeps the ``k`` latents
whose class means differ most, and fits a logistic regression on them; the quiver of
arrows picks, among several probes, the one with the best validation AUC.
"""

from numbers import Integral

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, MetaEstimatorMixin, clone
from sklearn.feature_selection import SelectorMixin
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import Pipeline
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted

from ..utils import derive_seed
from ..utils._sklearn import HasMethods, Interval, StrOptions, _fit_context, validate_data
from ._docs import _SHARED_DOCS, Substitution
from ._probing_cv import (
    BestEstimatorMixin,
    ProbeSearchCV,
    check_binary_target,
    check_probe_weights,
    cv_mean_score,
    fit_weighted,
    validation_splits,
)
from ._sae import SparseAutoencoder

__all__ = ["LatentSelector", "QuiverOfArrows", "SAEProbeClassifier"]


def latent_normalizer(Z, sample_weight=None):
    """Per-latent mean of ``|z|`` over the inputs where the latent is non-zero (1 if never).

    With ``sample_weight``, the weighted mean over those inputs.
    """
    Z = np.abs(Z)
    w = np.ones(Z.shape[0]) if sample_weight is None else np.asarray(sample_weight, float)
    counts = w @ (Z != 0)
    with np.errstate(invalid="ignore", divide="ignore"):
        norm = (w @ Z) / counts
    return np.where(counts > 0, norm, 1.0)


@Substitution(**_SHARED_DOCS)
class LatentSelector(SelectorMixin, BaseEstimator):
    """Keep the ``k`` latents whose normalised class means differ most.

    The selection step of the SAE probes of [1]_: with each latent divided by its mean
    non-zero magnitude, the score of latent ``j`` is ``|mean(z_j | y=1) - mean(z_j | y=0)|``.
    With more than two classes (not in the paper) the score is the largest one-vs-rest
    gap.

    Parameters
    ----------
    k : int, default=16
        Number of latents kept (all of them if there are fewer).
    selection : {"mean_diff"}, default="mean_diff"
        Scoring rule (the paper's).
    latent_norm : {"mean_abs_nonzero", "none"}, default="mean_abs_nonzero"
        Rescaling of each latent before scoring: by its mean non-zero ``|z|`` (the
        paper's released code) or none. It changes the ranking only; the selected
        columns are passed on unscaled.

    Attributes
    ----------
    scores_ : ndarray of shape (n_features,)
        Score of each latent.
    selected_ : ndarray of int
        Indices of the kept latents, best first.
    classes_ : ndarray of shape (n_classes,)
    n_features_in_ : int
    feature_names_in_ : ndarray of str
        Defined only when ``X`` has string column names.

    {probing_references}

    Examples
    --------
    >>> import numpy as np
    >>> from skpaper.representation import LatentSelector
    >>> Z = np.array([[0., 1., 2.], [0., 1., 0.], [3., 0., 2.], [3., 1., 0.]])
    >>> LatentSelector(k=1).fit(Z, [0, 0, 1, 1]).selected_.tolist()
    [0]
    """

    _parameter_constraints = {
        "k": [Interval(Integral, 1, None, closed="left")],
        "selection": [StrOptions({"mean_diff"})],
        "latent_norm": [StrOptions({"mean_abs_nonzero", "none"})],
    }

    def __init__(self, k=16, *, selection="mean_diff", latent_norm="mean_abs_nonzero"):
        self.k = k
        self.selection = selection
        self.latent_norm = latent_norm

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y, sample_weight=None):
        """Score the latents on ``(X, y)`` and keep the best ``k``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_latents)
            Latent activations.
        y : array-like of shape (n_samples,)
            Binary labels.
        sample_weight : array-like of shape (n_samples,) or None, default=None
            Weights of the class means and of the normaliser (an integer weight
            equals repeated rows).

        Returns
        -------
        self : object
            The fitted selector.
        """
        X, y = validate_data(self, X, y, dtype=np.float64)
        w = check_probe_weights(sample_weight, X)
        w = np.ones(X.shape[0]) if w is None else w
        check_classification_targets(y)
        self.classes_ = np.unique(y)
        scaled = (X / latent_normalizer(X, w) if self.latent_norm == "mean_abs_nonzero"
                  else X)
        # Binary: the paper's |mean_1 - mean_0|; more classes: the largest one-vs-rest gap.
        targets = self.classes_[1:] if self.classes_.size == 2 else self.classes_
        scores = np.zeros(X.shape[1])
        for cls in targets:
            member = y == cls
            if member.all() or w[member].sum() == 0 or w[~member].sum() == 0:
                continue
            gap = np.abs(np.average(scaled[member], axis=0, weights=w[member])
                         - np.average(scaled[~member], axis=0, weights=w[~member]))
            scores = np.maximum(scores, gap)
        self.scores_ = scores
        k = min(int(self.k), X.shape[1])
        self.selected_ = np.argsort(-self.scores_, kind="stable")[:k]
        return self

    def _get_support_mask(self):
        check_is_fitted(self)
        mask = np.zeros(self.n_features_in_, dtype=bool)
        mask[self.selected_] = True
        return mask

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.required = True
        tags.input_tags.sparse = False
        return tags


@Substitution(**_SHARED_DOCS)
class SAEProbeClassifier(ClassifierMixin, MetaEstimatorMixin, BaseEstimator):
    """Sparse probe on the top-``k`` latents of a sparse autoencoder.

    The SAE probe of [1]_: encode with the SAE, keep the ``k`` latents whose
    normalised class means differ most (:class:`LatentSelector`), and fit a logistic
    regression on them with ``C`` chosen by validation AUC. Latent selection is
    refitted inside every validation fold, so the validation AUC does not see the
    held-out labels.

    Parameters
    ----------
    sae : transformer or None, default=None
        The dictionary. It is cloned and fitted on ``X`` (without labels) unless it is
        wrapped in :class:`sklearn.frozen.FrozenEstimator`, the way to use an SAE
        pretrained on a larger unlabeled pool (as the paper's Gemma Scope SAEs are).
        ``None`` means :class:`SparseAutoencoder` with default settings, seeded from
        ``random_state``.
    k : int, default=16
        Number of latents kept. The paper uses ``{1, 2, 4, ..., 512}`` in the standard
        setting and ``{16, 128}`` in the hard regimes.
    selection : {"mean_diff"}, default="mean_diff"
        Scoring rule of the latents (see :class:`LatentSelector`).
    latent_norm : {"mean_abs_nonzero", "none"}, default="mean_abs_nonzero"
        Rescaling of each latent before scoring (see :class:`LatentSelector`).
    penalty : {"l1", "l2"}, default="l1"
        Penalty of the logistic regression (the paper's SAE probes use L1).
    Cs : int or array-like, default=10
        An int ``n`` tries ``n`` values log-spaced from ``1e5`` to ``1e-5``; an array
        gives the values.
    cv : "auto", int or cross-validation splitter, default="auto"
        ``"auto"`` is :class:`PaperCV`.
    random_state : int, RandomState instance or None, default=None
        Seeds the logistic-regression solver and the default SAE.

    Attributes
    ----------
    sae_ : transformer
        The fitted (or frozen) dictionary.
    selector_ : LatentSelector
        Selection refitted on all the training data.
    probe_ : Pipeline
        ``LatentSelector`` then ``LogisticRegression`` with ``C_``, on the latents.
    selected_latents_ : ndarray of int
        Kept latents, best first.
    latent_scores_ : ndarray of shape (n_latents,)
        Selection score of every latent.
    C_ : float
        Chosen inverse regularisation strength.
    best_score_ : float
        Validation AUC of ``C_`` (training AUC when there are fewer than 4 samples).
    classes_ : ndarray of shape (2,)
    n_features_in_ : int
    feature_names_in_ : ndarray of str
        Defined only when ``X`` has string column names.

    See Also
    --------
    SparseAutoencoder : The dictionary.
    QuiverOfArrows : Choose between SAE probes and baselines by validation AUC.

    Notes
    -----
    With ``z = SAE(x)`` and ``nu_j`` the mean non-zero ``|z_j|`` on the training data,
    the score of latent ``j`` is ``|E[z_j / nu_j | y=1] - E[z_j / nu_j | y=0]|`` and the
    probe is ``sigma(w^T z_S + b)`` on the top-``k`` set ``S``. The paper's released code
    selects the latents once on the whole training set before validating ``C``; this
    implementation refits the selection in each fold, which removes that optimistic
    bias from ``best_score_`` (and so from the quiver's choice). L1 probes use the
    ``liblinear`` solver (the paper's code: ``saga``; the optimum is the same up to
    liblinear's penalised intercept, which does not change the AUC ranking much).

    {probing_references}

    Examples
    --------
    >>> from sklearn.frozen import FrozenEstimator
    >>> from skpaper.datasets import make_superposition_activations
    >>> from skpaper.representation import SAEProbeClassifier, SparseAutoencoder
    >>> pool = make_superposition_activations(n_samples=3000, random_state=0)
    >>> sae = SparseAutoencoder(n_latents=128, k=4, max_epochs=5, random_state=0).fit(pool.X)
    >>> task = make_superposition_activations(n_samples=200, concept_rate=0.5,
    ...                                       atoms=pool.atoms, random_state=1)
    >>> probe = SAEProbeClassifier(FrozenEstimator(sae), k=4).fit(task.X, task.y)
    >>> probe.selected_latents_.shape, bool(probe.best_score_ > 0.6)
    ((4,), True)
    """

    _parameter_constraints = {
        "sae": [HasMethods(["fit", "transform"]), None],
        "k": [Interval(Integral, 1, None, closed="left")],
        "selection": [StrOptions({"mean_diff"})],
        "latent_norm": [StrOptions({"mean_abs_nonzero", "none"})],
        "penalty": [StrOptions({"l1", "l2"})],
        "Cs": [Interval(Integral, 1, None, closed="left"), "array-like"],
        "cv": [StrOptions({"auto"}), "cv_object"],
        "random_state": ["random_state"],
    }

    def __init__(self, sae=None, *, k=16, selection="mean_diff",
                 latent_norm="mean_abs_nonzero", penalty="l1", Cs=10, cv="auto",
                 random_state=None):
        self.sae = sae
        self.k = k
        self.selection = selection
        self.latent_norm = latent_norm
        self.penalty = penalty
        self.Cs = Cs
        self.cv = cv
        self.random_state = random_state

    def _c_grid(self):
        if isinstance(self.Cs, Integral):
            return np.logspace(5, -5, int(self.Cs))
        Cs = np.asarray(self.Cs, dtype=np.float64).ravel()
        if Cs.size == 0 or not np.all(np.isfinite(Cs)) or np.any(Cs <= 0):
            raise ValueError(f"Cs must hold positive finite values, got {self.Cs!r}.")
        return Cs

    def _make_probe(self):
        if self.penalty == "l1":
            lr = LogisticRegression(l1_ratio=1.0, solver="liblinear", max_iter=1000,
                                    random_state=self.random_state)
        else:
            lr = LogisticRegression(l1_ratio=0.0, max_iter=1000,
                                    random_state=self.random_state)
        selector = LatentSelector(self.k, selection=self.selection,
                                  latent_norm=self.latent_norm)
        return Pipeline([("select", selector), ("probe", lr)])

    @_fit_context(prefer_skip_nested_validation=False)
    def fit(self, X, y, sample_weight=None):
        """Fit (or take) the SAE, select latents and fit the probe.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Activations.
        y : array-like of shape (n_samples,)
            Binary labels.
        sample_weight : array-like of shape (n_samples,) or None, default=None
            Weights of the latent selection, of the logistic regression and of the
            validation AUC of ``C`` (see :meth:`ProbeSearchCV.fit`). Not passed to
            the SAE: the dictionary is learnt without labels (or frozen), so the
            weights have no meaning there; with a frozen SAE and one ``C``, an
            integer weight equals repeated rows.

        Returns
        -------
        self : object
            The fitted probe.
        """
        X, y = validate_data(self, X, y, dtype=np.float64)
        sample_weight = check_probe_weights(sample_weight, X)
        self.classes_ = check_binary_target(y)
        Cs = self._c_grid()
        if self.sae is None:
            sae = SparseAutoencoder(random_state=derive_seed(self.random_state))
        else:
            sae = self.sae
        self.sae_ = clone(sae).fit(X, None)
        Z = np.asarray(self.sae_.transform(X), dtype=np.float64)
        search = ProbeSearchCV(self._make_probe(), {"probe__C": list(Cs)},
                               cv=self.cv).fit(Z, y, sample_weight=sample_weight)
        self.probe_ = search.best_estimator_
        self.selector_ = self.probe_.named_steps["select"]
        self.selected_latents_ = self.selector_.selected_
        self.latent_scores_ = self.selector_.scores_
        self.C_ = float(self.probe_.named_steps["probe"].C)
        self.best_score_ = float(search.best_score_)
        return self

    def _latents(self, X):
        check_is_fitted(self)
        X = validate_data(self, X, reset=False, dtype=np.float64)
        return np.asarray(self.sae_.transform(X), dtype=np.float64)

    def predict(self, X):
        """Predicted class labels.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Activations.

        Returns
        -------
        y : ndarray of shape (n_samples,)
            Predicted class of each sample.
        """
        Z = self._latents(X)
        return self.probe_.predict(Z)

    def predict_proba(self, X):
        """Class probabilities.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Activations.

        Returns
        -------
        proba : ndarray of shape (n_samples, 2)
            Probability of each class, in the order of ``classes_``.
        """
        Z = self._latents(X)
        return self.probe_.predict_proba(Z)

    def decision_function(self, X):
        """Logit of the positive class.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Activations.

        Returns
        -------
        scores : ndarray of shape (n_samples,)
            Logit of ``classes_[1]``.
        """
        Z = self._latents(X)
        return self.probe_.decision_function(Z)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = False
        tags.input_tags.sparse = False
        return tags


@Substitution(**_SHARED_DOCS)
class QuiverOfArrows(BestEstimatorMixin, ClassifierMixin, MetaEstimatorMixin, BaseEstimator):
    """Fit several probes and keep the one with the best validation score.

    The "quiver of arrows" of [1]_: a practitioner with several probing methods picks
    the one whose validation AUC is highest and reports its test AUC. Comparing a
    quiver with SAE probes to one without them asks whether SAEs add anything to the
    toolbox.

    Parameters
    ----------
    estimators : dict or list of (str, estimator) or None, default=None
        The candidate probes. The validation score of a candidate is its
        ``best_score_`` after fitting (as exposed by :class:`ProbeSearchCV` and
        :class:`SAEProbeClassifier`) when ``scoring="roc_auc"``, otherwise its mean
        score over the folds of ``cv``. ``None`` means :func:`paper_baselines`.
    scoring : str or callable, default="roc_auc"
        Validation score (a scikit-learn scorer name or callable); with
        ``"roc_auc"`` a candidate's own ``best_score_`` is used when it has one.
    cv : "auto", int or cross-validation splitter, default="auto"
        Folds used for candidates without ``best_score_`` (``"auto"``: :class:`PaperCV`).

    Attributes
    ----------
    estimators_ : dict
        Every candidate, fitted on all the data.
    val_scores_ : dict
        Validation score of each candidate.
    chosen_ : str
        Name of the candidate with the best validation score (the first on ties).
    best_estimator_ : estimator
        ``estimators_[chosen_]``, used by ``predict``.
    classes_ : ndarray of shape (2,)
    n_features_in_ : int
    feature_names_in_ : ndarray of str
        Defined only when ``X`` has string column names.

    Notes
    -----
    Under label noise and covariate shift the paper does not trust validation scores
    (noisy or off-distribution) and compares methods head to head instead; use the
    fitted ``estimators_`` for that.

    {probing_references}

    Examples
    --------
    >>> from sklearn.datasets import make_classification
    >>> from sklearn.linear_model import LogisticRegression
    >>> from sklearn.neighbors import KNeighborsClassifier
    >>> from skpaper.representation import QuiverOfArrows
    >>> X, y = make_classification(n_samples=80, random_state=0)
    >>> quiver = QuiverOfArrows({"logreg": LogisticRegression(),
    ...                          "knn": KNeighborsClassifier()}).fit(X, y)
    >>> quiver.chosen_ in ("logreg", "knn"), sorted(quiver.val_scores_)
    (True, ['knn', 'logreg'])
    """

    _parameter_constraints = {
        "estimators": [dict, list, None],
        "scoring": [str, callable],
        "cv": [StrOptions({"auto"}), "cv_object"],
    }

    def __init__(self, estimators=None, *, scoring="roc_auc", cv="auto"):
        self.estimators = estimators
        self.scoring = scoring
        self.cv = cv

    def _candidates(self):
        if self.estimators is None:
            from ._probing_baselines import paper_baselines

            return paper_baselines()
        items = (self.estimators.items() if isinstance(self.estimators, dict)
                 else self.estimators)
        candidates = {}
        for item in items:
            if not (isinstance(item, tuple) and len(item) == 2 and isinstance(item[0], str)):
                raise TypeError(
                    "estimators must be a dict or a list of (name, estimator) pairs, got "
                    f"an item {item!r}."
                )
            name, est = item
            if not hasattr(est, "fit"):
                raise TypeError(f"estimator {name!r} has no fit method: {est!r}.")
            candidates[name] = est
        if not candidates:
            raise ValueError("estimators must hold at least one estimator, got none.")
        return candidates

    @_fit_context(prefer_skip_nested_validation=False)
    def fit(self, X, y, sample_weight=None):
        """Fit every candidate and choose by validation score.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training data.
        y : array-like of shape (n_samples,)
            Binary labels.
        sample_weight : array-like of shape (n_samples,) or None, default=None
            Passed to every candidate's ``fit`` (each must take it: the default
            quiver's nearest-neighbour baseline does not, so leave it out) and to
            the validation scores computed here.

        Returns
        -------
        self : object
            The fitted quiver.
        """
        X, y = validate_data(self, X, y)
        sample_weight = check_probe_weights(sample_weight, X)
        self.classes_ = check_binary_target(y)
        candidates = self._candidates()
        splits = None
        self.estimators_, self.val_scores_ = {}, {}
        for name, est in candidates.items():
            fitted = fit_weighted(clone(est), X, y, sample_weight)
            score = getattr(fitted, "best_score_", None) if self.scoring == "roc_auc" else None
            if score is None:
                if splits is None:
                    splits = validation_splits(self.cv, X, y)
                score = (cv_mean_score(est, X, y, splits, self.scoring, sample_weight)
                         if splits else float("nan"))
            self.estimators_[name] = fitted
            self.val_scores_[name] = float(score)
        names = list(self.estimators_)
        scores = np.array([self.val_scores_[n] for n in names])
        scores = np.where(np.isfinite(scores), scores, -np.inf)
        self.chosen_ = names[int(np.argmax(scores))]
        self.best_estimator_ = self.estimators_[self.chosen_]
        return self
