"""SmoothMultiLabelClassifier: optimisation, target handling, sklearn integration, bad input."""

import pickle
import warnings

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from scipy import sparse
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import make_scorer
from sklearn.model_selection import GridSearchCV, cross_val_score
from sklearn.multiclass import OneVsRestClassifier
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from skpaper.datasets import make_linear_multilabel
from skpaper.multilabel import SmoothMultiLabelClassifier, metrics
from skpaper.multilabel._losses import get_base_loss
from skpaper.multilabel._objectives import surrogate_losses


@pytest.fixture
def data():
    X, Y = make_linear_multilabel(n_samples=240, n_features=8, n_labels=5, noise=0.05,
                                  random_state=3)
    return X[:160], Y[:160], X[160:], Y[160:]


def test_hamming_per_label_matches_one_vs_rest_logistic_regression(data):
    X, Y, _, _ = data
    alpha = 1e-2
    ours = SmoothMultiLabelClassifier(alpha=alpha, tol=1e-10, max_iter=2000,
                                      random_state=0).fit(X, Y)
    ovr = OneVsRestClassifier(LogisticRegression(C=1 / (alpha * len(X)), tol=1e-10,
                                                 max_iter=2000)).fit(X, Y)
    np.testing.assert_allclose(ours.coef_, np.vstack([e.coef_ for e in ovr.estimators_]),
                               atol=1e-4)
    np.testing.assert_allclose(ours.intercept_,
                               np.concatenate([e.intercept_ for e in ovr.estimators_]),
                               atol=1e-4)


@pytest.mark.parametrize("objective", ["subset", "ranking"])
def test_each_objective_is_minimised_by_its_own_fit(objective, data):
    X, Y, _, _ = data
    base = get_base_loss("logistic")

    def regularised(clf):
        F = clf.decision_function(X)
        penalty = 0.5 * clf.alpha * np.mean(np.sum(clf.coef_**2, axis=1))
        return surrogate_losses(F, Y, base, objective).mean() + penalty

    own = SmoothMultiLabelClassifier(objective=objective, alpha=1e-2, random_state=0).fit(X, Y)
    other = SmoothMultiLabelClassifier(objective="hamming", alpha=1e-2,
                                       random_state=0).fit(X, Y)
    assert own.objective_value_ == pytest.approx(regularised(own))
    assert regularised(own) < regularised(other)


def test_gradient_descent_and_lbfgs_reach_the_same_solution(data):
    X, Y, _, _ = data
    kwargs = dict(loss="squared_hinge", alpha=0.05, tol=1e-7, random_state=0)
    lbfgs = SmoothMultiLabelClassifier(max_iter=500, **kwargs).fit(X, Y)
    gd = SmoothMultiLabelClassifier(solver="gd", max_iter=5000, **kwargs).fit(X, Y)
    np.testing.assert_allclose(gd.coef_, lbfgs.coef_, atol=1e-4)
    assert gd.objective_value_ == pytest.approx(lbfgs.objective_value_, rel=1e-6)


def test_frobenius_penalty_shares_one_budget_across_labels():
    X, Y = make_linear_multilabel(n_samples=200, n_features=6, n_labels=12, random_state=0)
    per_label = SmoothMultiLabelClassifier(alpha=1e-2, random_state=0).fit(X, Y)
    frobenius = SmoothMultiLabelClassifier(alpha=1e-2, constraint="frobenius",
                                           random_state=0).fit(X, Y)
    # the Frobenius penalty is c times the per-label one: smaller weights
    assert np.linalg.norm(frobenius.coef_) < 0.5 * np.linalg.norm(per_label.coef_)


@pytest.mark.parametrize("loss", ["logistic", "squared_hinge", "squared", "huberized_hinge",
                                  "hinge"])
@pytest.mark.parametrize("objective", ["hamming", "subset", "ranking"])
def test_every_loss_and_objective_learns(loss, objective, data):
    X, Y, X_test, Y_test = data
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        clf = SmoothMultiLabelClassifier(loss=loss, objective=objective, alpha=1e-2,
                                         random_state=0).fit(X, Y)
    scores = clf.decision_function(X_test)
    assert scores.shape == Y_test.shape
    # a random ranking has loss 0.5; the learnt one must be far better
    assert metrics.ranking_loss(Y_test, scores) < 0.25
    if objective != "ranking":
        assert metrics.hamming_loss(Y_test, clf.predict(X_test)) < 0.3


def test_sparse_inputs_and_targets_give_the_same_model(data):
    X, Y, X_test, _ = data
    dense = SmoothMultiLabelClassifier(random_state=0).fit(X, Y)
    sparse_fit = SmoothMultiLabelClassifier(random_state=0).fit(sparse.csr_matrix(X),
                                                                 sparse.csr_matrix(Y))
    np.testing.assert_allclose(sparse_fit.coef_, dense.coef_, atol=1e-8)
    np.testing.assert_array_equal(sparse_fit.predict(sparse.csr_matrix(X_test)),
                                  dense.predict(X_test))


def test_predict_proba_is_the_sigmoid_of_the_scores_and_logistic_only(data):
    X, Y, X_test, _ = data
    clf = SmoothMultiLabelClassifier(random_state=0).fit(X, Y)
    proba = clf.predict_proba(X_test)
    np.testing.assert_allclose(proba, 1 / (1 + np.exp(-clf.decision_function(X_test))))
    np.testing.assert_array_equal(clf.predict(X_test), (proba > 0.5).astype(int))
    hinge = SmoothMultiLabelClassifier(loss="hinge").fit(X, Y)
    assert not hasattr(hinge, "predict_proba")


@pytest.mark.parametrize("objective", ["hamming", "subset", "ranking"])
def test_one_dimensional_targets_are_handled_as_classes(objective, rng):
    X = rng.normal(size=(150, 3))
    y3 = np.array(["a", "b", "c"])[np.argmax(X, axis=1)]
    clf = SmoothMultiLabelClassifier(objective=objective, random_state=0).fit(X, y3)
    assert list(clf.classes_) == ["a", "b", "c"]
    assert clf.score(X, y3) > 0.9
    y2 = np.where(X[:, 0] > 0, 5, 7)
    clf = SmoothMultiLabelClassifier(objective=objective, random_state=0).fit(X, y2)
    assert clf.decision_function(X).shape == (150,)
    assert clf.score(X, y2) > 0.9
    proba = clf.predict_proba(X)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    np.testing.assert_array_equal(clf.classes_[proba.argmax(axis=1)], clf.predict(X))


def test_pipeline_grid_search_and_cross_validation_with_multilabel_scorers(data):
    X, Y, _, _ = data
    pipe = make_pipeline(StandardScaler(), SmoothMultiLabelClassifier(random_state=0))
    search = GridSearchCV(pipe, {"smoothmultilabelclassifier__alpha": [1e-3, 1e-1],
                                 "smoothmultilabelclassifier__objective": ["hamming", "subset"]},
                          scoring="f1_micro", cv=3).fit(X, Y)
    assert search.best_score_ > 0.7
    hamming = make_scorer(metrics.hamming_loss, greater_is_better=False)
    scores = cross_val_score(SmoothMultiLabelClassifier(random_state=0), X, Y, cv=3,
                             scoring=hamming)
    assert scores.shape == (3,) and np.all(-scores < 0.3)


def test_pickle_round_trip_keeps_predictions(data):
    X, Y, X_test, _ = data
    clf = SmoothMultiLabelClassifier(objective="ranking", random_state=0).fit(X, Y)
    clone = pickle.loads(pickle.dumps(clf))
    np.testing.assert_array_equal(clone.decision_function(X_test),
                                  clf.decision_function(X_test))


def test_fit_rejects_bad_targets(data):
    X, Y, _, _ = data
    clf = SmoothMultiLabelClassifier()
    with pytest.raises(ValueError, match="only 0 and 1"):
        clf.fit(X, Y * 2)
    with pytest.raises(ValueError, match="only 0 and 1"):
        clf.fit(X, Y - 1)  # a {-1, 0} matrix is not an indicator
    with pytest.raises(ValueError, match="at least 2 label columns"):
        clf.fit(X, Y[:, :1])
    with pytest.raises(ValueError, match="only 1 class"):
        clf.fit(X, np.ones(len(X)))
    with pytest.raises(ValueError, match="Unknown label type"):
        clf.fit(X, np.linspace(0, 1, len(X)))
    with pytest.raises(ValueError, match="inconsistent numbers of samples"):
        clf.fit(X, Y[:-1])


def test_invalid_parameters_name_the_parameter(data):
    X, Y, _, _ = data
    for params, name in (({"loss": "exponential"}, "loss"), ({"alpha": -1.0}, "alpha"),
                         ({"constraint": "l1"}, "constraint"), ({"solver": "sgd"}, "solver"),
                         ({"objective": "f1"}, "objective"), ({"max_iter": 0}, "max_iter")):
        with pytest.raises(ValueError, match=f"'{name}' parameter"):
            SmoothMultiLabelClassifier(**params).fit(X, Y)


def test_predict_checks_fitted_state_and_feature_count(data):
    X, Y, _, _ = data
    from sklearn.exceptions import NotFittedError

    with pytest.raises(NotFittedError):
        SmoothMultiLabelClassifier().predict(X)
    clf = SmoothMultiLabelClassifier().fit(X, Y)
    with pytest.raises(ValueError, match="features"):
        clf.predict(X[:, :3])


def test_too_few_iterations_warn():
    X, Y = make_linear_multilabel(n_samples=100, n_features=5, n_labels=3, random_state=0)
    with pytest.warns(ConvergenceWarning, match="max_iter=2"):
        SmoothMultiLabelClassifier(max_iter=2, tol=0.0).fit(X, Y)


@st.composite
def _scores_and_labels(draw):
    n, c = draw(st.integers(1, 15)), draw(st.integers(1, 5))
    values = st.sampled_from([-1.0, -0.5, 0.0, 0.3, 2.0])
    scores = draw(arrays(np.float64, (n, c), elements=values))
    T = draw(arrays(np.uint8, (n, c), elements=st.integers(0, 1)))
    return scores, T


@given(_scores_and_labels())
def test_ranking_threshold_minimises_the_training_hamming_loss(data):
    from skpaper.multilabel._classifier import _hamming_threshold

    scores, T = data
    t = _hamming_threshold(scores, T)
    errors = lambda thr: int(np.sum((scores > thr) != T.astype(bool)))  # noqa: E731
    candidates = np.concatenate([[scores.min() - 1.0], np.unique(scores)])
    assert errors(t) == min(errors(thr) for thr in candidates)


def test_ranking_objective_predicts_with_a_threshold_learnt_on_training_scores():
    # Imbalanced labels: the ranking loss leaves the level of the scores free.
    X, Y = make_linear_multilabel(n_samples=900, n_features=8, n_labels=6,
                                  positive_rate=0.15, noise=0.05, random_state=0)
    clf = SmoothMultiLabelClassifier(objective="ranking", random_state=0).fit(X[:300], Y[:300])
    scores = np.asarray(X @ clf.coef_.T) + clf.intercept_
    np.testing.assert_array_equal(clf.predict(X), (scores > clf.threshold_).astype(int))
    np.testing.assert_allclose(clf.decision_function(X), scores - clf.threshold_)
    assert metrics.ranking_loss(Y, clf.decision_function(X)) == metrics.ranking_loss(Y, scores)
    learnt = metrics.hamming_loss(Y[:300], clf.predict(X[:300]))
    assert learnt <= metrics.hamming_loss(Y[:300], (scores[:300] > 0).astype(int))
    for objective in ("hamming", "subset"):
        other = SmoothMultiLabelClassifier(objective=objective, max_iter=50, random_state=0)
        assert other.fit(X[:100], Y[:100]).threshold_ == 0.0


@pytest.mark.parametrize("objective", ["hamming", "subset", "ranking"])
def test_sample_weight_equals_repeated_rows(objective):
    from skpaper.datasets import make_linear_multilabel
    from skpaper.multilabel import SmoothMultiLabelClassifier

    X, Y = make_linear_multilabel(n_samples=60, n_labels=4, random_state=1)
    weights = np.random.default_rng(0).integers(0, 4, size=len(X))
    repeated = np.repeat(np.arange(len(X)), weights)
    kwargs = dict(objective=objective, random_state=0, max_iter=2000, tol=1e-10)
    weighted = SmoothMultiLabelClassifier(**kwargs).fit(X, Y, sample_weight=weights)
    plain = SmoothMultiLabelClassifier(**kwargs).fit(X[repeated], Y[repeated])
    np.testing.assert_allclose(weighted.coef_, plain.coef_, atol=2e-3)
    assert weighted.threshold_ == pytest.approx(plain.threshold_, abs=1e-3)
    unweighted = SmoothMultiLabelClassifier(**kwargs).fit(X, Y)
    assert not np.allclose(weighted.coef_, unweighted.coef_, atol=2e-3)


def test_sample_weight_is_validated():
    from skpaper.multilabel import SmoothMultiLabelClassifier

    X = np.random.default_rng(0).normal(size=(10, 3))
    Y = np.tile([[1, 0], [0, 1]], (5, 1))
    with pytest.raises(ValueError, match="[Nn]egative"):
        SmoothMultiLabelClassifier().fit(X, Y, sample_weight=-np.ones(10))
    with pytest.raises(ValueError, match="non-zero"):
        SmoothMultiLabelClassifier().fit(X, Y, sample_weight=np.zeros(10))
