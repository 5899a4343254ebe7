"""The generalization-bound calculator: formulas, label-count scaling, validity, bad input."""

import numpy as np
import pytest
from sklearn.exceptions import NotFittedError
from sklearn.linear_model import RidgeClassifier

from skpaper.datasets import make_linear_multilabel
from skpaper.multilabel import SmoothMultiLabelClassifier, generalization_bounds
from skpaper.multilabel._bounds import BOUND_NAMES


@pytest.fixture(scope="module")
def fitted():
    X, Y = make_linear_multilabel(n_samples=400, n_features=10, n_labels=6, noise=0.05,
                                  random_state=1)
    clf = SmoothMultiLabelClassifier(alpha=1e-2, fit_intercept=False, random_state=0)
    return clf.fit(X[:200], Y[:200]), X[:200], Y[:200], X[200:], Y[200:]


def _row(table, name):
    return list(table["bound"]).index(name)


def _model_with_weights(W, loss="logistic", objective="hamming"):
    clf = SmoothMultiLabelClassifier(loss=loss, objective=objective, fit_intercept=False)
    clf.coef_ = np.asarray(W, dtype=float)
    clf.intercept_ = np.zeros(len(W))
    return clf


def test_table_has_one_row_per_bound_and_equal_length_columns(fitted):
    clf, X, Y, X_test, Y_test = fitted
    table = generalization_bounds(clf, X, Y, X_test=X_test, Y_test=Y_test)
    assert list(table["bound"]) == list(BOUND_NAMES)
    assert {len(col) for col in table.values()} == {len(BOUND_NAMES)}
    np.testing.assert_allclose(table["value"], table["empirical_risk"] + table["excess"])
    np.testing.assert_allclose(table["excess"],
                               table["complexity_term"] + table["confidence_term"])
    assert np.isfinite(table["observed_gap"]).all()
    pd = pytest.importorskip("pandas")
    assert pd.DataFrame(table).shape == (len(BOUND_NAMES), len(table))


def test_rate_constants_reproduce_the_documented_formulas(fitted):
    clf, X, Y, _, _ = fitted
    table = generalization_bounds(clf, X, Y, delta=0.1)
    n, c = Y.shape
    Lambda = np.linalg.norm(clf.coef_, axis=1).max()
    R = np.linalg.norm(X, axis=1).max()
    M = np.logaddexp(0, Lambda * R)
    risk = np.mean(np.logaddexp(0, -np.where(Y == 1, 1, -1) * clf.decision_function(X)))
    conf = M * np.sqrt(np.log(10) / n)
    radius = Lambda * R / np.sqrt(n)
    expected = {
        "B1": np.sqrt(c) * radius + conf,
        "B1_decomposed": radius + conf,
        "B2": np.sqrt(c) * radius + conf,
        "B3": np.sqrt(risk) * (0.5 * radius + np.sqrt(M * np.log(10) / n))
        + 0.25 * radius**2 + M * np.log(10) / n,
    }
    assert table["empirical_risk"][0] == pytest.approx(risk)
    for name, excess in expected.items():
        assert table["excess"][_row(table, name)] == pytest.approx(excess), name


@pytest.mark.parametrize("objective", ["hamming", "subset", "ranking"])
def test_duplicating_labels_grows_lipschitz_bound_but_not_smooth_rate(objective, rng):
    X = rng.normal(size=(150, 5))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    W = rng.normal(scale=2.0, size=(3, 5))
    Y = (X @ W.T + rng.normal(scale=0.5, size=(150, 3)) > 0).astype(int)
    tables = []
    for k in (1, 8):
        model = _model_with_weights(np.tile(W, (k, 1)), objective=objective)
        tables.append(generalization_bounds(model, X, np.tile(Y, (1, k))))
    small, large = tables
    b1, b3 = _row(small, "B1"), _row(small, "B3")
    # the label set is the same, repeated: the risk, Lambda and R do not move
    assert large["empirical_risk"][b3] == pytest.approx(small["empirical_risk"][b3])
    growth = large["complexity_term"][b1] / small["complexity_term"][b1]
    assert growth == pytest.approx(np.sqrt(8) if objective == "hamming" else 8.0)
    assert large["complexity_term"][b3] == pytest.approx(small["complexity_term"][b3])
    assert large["value"][_row(small, "B4")] == pytest.approx(small["value"][_row(small, "B4")])


def test_theorem_constants_are_larger_and_bound_the_test_risk(fitted):
    clf, X, Y, X_test, Y_test = fitted
    rate = generalization_bounds(clf, X, Y)
    theorem = generalization_bounds(clf, X, Y, constants="theorem", X_test=X_test,
                                    Y_test=Y_test)
    finite = np.isfinite(theorem["value"])
    assert finite.sum() == len(BOUND_NAMES)
    assert np.all(theorem["value"] >= rate["value"])
    assert np.all(theorem["value"] >= theorem["test_risk"])
    assert theorem["Lambda"][0] >= rate["Lambda"][0]


def test_smooth_bounds_are_infinite_for_the_hinge_loss(fitted):
    clf, X, Y, _, _ = fitted
    table = generalization_bounds(clf, X, Y, loss="hinge")
    for name in ("B3", "B4", "B5_smooth"):
        assert table["value"][_row(table, name)] == np.inf
    assert np.isfinite(table["value"][_row(table, "B1")])


def test_smaller_delta_and_larger_class_give_larger_bounds(fitted):
    clf, X, Y, _, _ = fitted
    base = generalization_bounds(clf, X, Y, delta=0.1)
    strict = generalization_bounds(clf, X, Y, delta=0.01)
    assert np.all(np.nan_to_num(strict["value"] - base["value"]) >= 0)
    wide = generalization_bounds(clf, X, Y, norm_bound=2 * base["Lambda"][0])
    assert np.all(np.nan_to_num(wide["value"] - base["value"]) >= 0)
    assert wide["Lambda"][0] == pytest.approx(2 * base["Lambda"][0])


def test_macro_auc_rows_skip_and_count_labels_without_both_classes(fitted):
    clf, X, Y, _, _ = fitted
    Y = Y.copy()
    Y[:, 2] = 0
    table = generalization_bounds(clf, X, Y)
    n_pos = Y.sum(axis=0)
    m = np.minimum(n_pos, len(Y) - n_pos)
    assert table["n_auc_skipped"][0] == 1
    assert table["tau"][0] == pytest.approx(m[m > 0].min() / len(Y))
    assert np.isfinite(table["value"][_row(table, "B5_smooth")])


def test_other_linear_models_need_an_explicit_loss(fitted):
    _, X, Y, _, _ = fitted
    ridge = RidgeClassifier(alpha=1.0).fit(X, Y)
    with pytest.raises(ValueError, match="loss must be one of"):
        generalization_bounds(ridge, X, Y)
    table = generalization_bounds(ridge, X, Y, loss="squared")
    assert table["rho"][0] == pytest.approx(2 * (1 + table["Lambda"][0] * table["R"][0]))


def test_bad_input_raises(fitted):
    clf, X, Y, X_test, Y_test = fitted
    with pytest.raises(NotFittedError):
        generalization_bounds(SmoothMultiLabelClassifier(), X, Y)
    with pytest.raises(ValueError, match="only 0 and 1"):
        generalization_bounds(clf, X, Y * 3)
    with pytest.raises(ValueError, match="at least 2 label columns"):
        generalization_bounds(clf, X, Y[:, :1])
    with pytest.raises(ValueError, match="labels"):
        generalization_bounds(clf, X, Y[:, :4])
    with pytest.raises(ValueError, match="same number of samples"):
        generalization_bounds(clf, X[:-1], Y)
    with pytest.raises(ValueError, match="given together"):
        generalization_bounds(clf, X, Y, X_test=X_test)
    with pytest.raises(ValueError, match="norm_bound must contain"):
        generalization_bounds(clf, X, Y, norm_bound=1e-3)
    with pytest.raises(ValueError, match="'delta' parameter"):
        generalization_bounds(clf, X, Y, delta=1.5)
    with pytest.raises(ValueError, match="'constants' parameter"):
        generalization_bounds(clf, X, Y, constants="exact")
    with pytest.raises(ValueError, match="2-D coef_"):
        generalization_bounds(_model_with_weights(np.ones(3)), X, Y)


def test_a_fitted_pipeline_is_read_through_its_transformers(fitted):
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    _, X, Y, X_test, Y_test = fitted
    pipe = make_pipeline(StandardScaler(), SmoothMultiLabelClassifier(
        alpha=1e-2, random_state=0)).fit(X, Y)
    scaler, clf = pipe[0], pipe[-1]
    through = generalization_bounds(pipe, X, Y, X_test=X_test, Y_test=Y_test)
    direct = generalization_bounds(clf, scaler.transform(X), Y, X_test=scaler.transform(X_test),
                                   Y_test=Y_test)
    for key in ("value", "observed_gap", "R", "Lambda", "trivial_risk"):
        np.testing.assert_allclose(through[key], direct[key])
    with pytest.raises(NotFittedError):
        generalization_bounds(make_pipeline(StandardScaler(), SmoothMultiLabelClassifier()), X, Y)


@pytest.mark.parametrize("objective", ["hamming", "subset", "ranking"])
def test_vacuous_marks_bounds_at_or_above_the_best_constant_predictor(objective, fitted):
    from skpaper.multilabel._losses import get_base_loss

    _, X, Y, _, _ = fitted
    clf = SmoothMultiLabelClassifier(alpha=1e-2, objective=objective, random_state=0).fit(X, Y)
    table = generalization_bounds(clf, X, Y)
    at_zero = float(get_base_loss("logistic").value(np.zeros(1))[0])  # log 2
    trivial = table["trivial_risk"]
    assert np.all(trivial <= at_zero + 1e-12)
    assert np.all(table["vacuous"] == (table["value"] >= trivial))
    # n = 200: the Lipschitz bound B1 is above log 2 here
    assert table["vacuous"][_row(table, "B1")]


def test_the_smooth_bound_becomes_informative_as_n_grows(fitted):
    clf, X, Y, _, _ = fitted
    rows = []
    for copies in (1, 400):
        table = generalization_bounds(clf, np.tile(X, (copies, 1)), np.tile(Y, (copies, 1)))
        rows.append(table["vacuous"][_row(table, "B3")])
    assert rows == [True, False]


def test_best_constant_predictor_learns_label_frequencies():
    from skpaper.multilabel._bounds import _constant_risk
    from skpaper.multilabel._losses import get_base_loss

    rng = np.random.default_rng(0)
    rates = np.array([0.1, 0.5, 0.9])
    T = (rng.random((4000, 3)) < rates).astype(np.uint8)
    base = get_base_loss("logistic")
    p = T.mean(axis=0)
    entropy = -(p * np.log(p) + (1 - p) * np.log(1 - p))
    # Hamming: the constant logit log(p / (1 - p)) per label gives the mean binary entropy
    assert _constant_risk(T, base, "hamming") == pytest.approx(entropy.mean(), rel=1e-4)
    assert _constant_risk(T, base, "ranking") < np.log(2)
