"""SAE probes, the paper's folds and search, the quiver of arrows and the baselines."""

import numpy as np
import pytest
from sklearn.dummy import DummyClassifier
from sklearn.frozen import FrozenEstimator
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import roc_auc_score
from sklearn.model_selection import GridSearchCV, cross_val_score
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import FunctionTransformer

from skpaper.datasets import make_superposition_activations
from skpaper.representation import (
    LatentSelector,
    PaperCV,
    ProbeSearchCV,
    QuiverOfArrows,
    SAEProbeClassifier,
    SparseAutoencoder,
    paper_baselines,
)
from skpaper.representation._probing import latent_normalizer
from skpaper.representation._probing_baselines import _knn_grid, _pca_grid
from skpaper.representation._probing_cv import fold_score
from skpaper.utils._sklearn import InvalidParameterError


def _identity_sae(X):
    return FrozenEstimator(FunctionTransformer().fit(X))


def test_latent_selector_scores_normalised_mean_differences():
    Z = np.array([[0.0, 2.0, 1.0], [0.0, 4.0, 0.0], [1.0, 2.0, 3.0], [3.0, 0.0, 0.0]])
    y = np.array([0, 0, 1, 1])
    sel = LatentSelector(k=2).fit(Z, y)
    norm = np.array([2.0, 8 / 3, 2.0])  # mean non-zero |z| per column
    scaled = Z / norm
    expected = np.abs(scaled[y == 1].mean(axis=0) - scaled[y == 0].mean(axis=0))
    np.testing.assert_allclose(sel.scores_, expected)
    np.testing.assert_allclose(latent_normalizer(Z), norm)
    assert sel.selected_.tolist() == list(np.argsort(-expected, kind="stable")[:2])
    assert sel.transform(Z).shape == (4, 2)
    raw = LatentSelector(k=3, latent_norm="none").fit(Z, y)
    np.testing.assert_allclose(raw.scores_, np.abs(Z[y == 1].mean(0) - Z[y == 0].mean(0)))


def test_sae_probe_selects_latents_inside_folds_planted_leak():
    # Pure noise: many latents, few samples, labels independent of X. Selecting latents on
    # all the data before validating (the leak) makes noise look predictive; selecting
    # inside each fold keeps the validation AUC near chance.
    rng = np.random.default_rng(0)
    X = rng.standard_normal((48, 2000))
    y = np.repeat([0, 1], 24)
    probe = SAEProbeClassifier(_identity_sae(X), k=8, penalty="l2", Cs=5).fit(X, y)
    leaky_cols = LatentSelector(k=8).fit(X, y).selected_
    leaky = GridSearchCV(LogisticRegression(), {"C": list(np.logspace(5, -5, 5))},
                         cv=PaperCV(), scoring="roc_auc").fit(X[:, leaky_cols], y)
    assert leaky.best_score_ > 0.85
    assert probe.best_score_ < 0.7


def test_sae_probe_finds_the_concept_latent():
    pool = make_superposition_activations(n_samples=3000, random_state=0)
    sae = SparseAutoencoder(n_latents=128, k=4, max_epochs=6, lr=3e-3, random_state=0,
                            device="cpu").fit(pool.X)
    task = make_superposition_activations(n_samples=300, concept_rate=0.5, atoms=pool.atoms,
                                          random_state=1)
    probe = SAEProbeClassifier(FrozenEstimator(sae), k=1, random_state=0).fit(task.X, task.y)
    best = probe.selected_latents_[0]
    assert abs(sae.components_[best] @ pool.atoms[0]) > 0.7
    assert probe.sae_ is not None and probe.latent_scores_.shape == (128,)
    test = make_superposition_activations(n_samples=400, concept_rate=0.5, atoms=pool.atoms,
                                          random_state=2)
    assert roc_auc_score(test.y, probe.decision_function(test.X)) > 0.75
    np.testing.assert_array_equal(probe.predict(test.X),
                                  probe.classes_[(probe.decision_function(test.X) > 0) * 1])


def test_sae_probe_default_sae_is_fitted_and_seeded():
    data = make_superposition_activations(n_samples=120, concept_rate=0.5, random_state=3)
    probe = SAEProbeClassifier(k=4, Cs=3, random_state=0)
    probe.set_params(sae=SparseAutoencoder(n_latents=32, k=4, max_epochs=2, random_state=0,
                                           inference_dtype="float64"))
    a = probe.fit(data.X, data.y).predict_proba(data.X)
    clone = SAEProbeClassifier(**probe.get_params(deep=False))
    b = clone.fit(data.X, data.y).predict_proba(data.X)
    np.testing.assert_allclose(a, b)
    assert probe.C_ in np.logspace(5, -5, 3)


def test_paper_cv_follows_the_size_rule():
    cv = PaperCV()
    y10 = np.tile([0, 1], 5)
    folds = list(cv.split(np.zeros((10, 1)), y10))
    assert len(folds) == 25 and all(len(va) == 2 for _, va in folds)  # 5 * 5 mixed pairs
    y60 = np.tile([0, 1], 30)
    folds = list(cv.split(np.zeros((60, 1)), y60))
    assert len(folds) == 6 and sorted(len(va) for _, va in folds) == [10] * 6
    for n, val in ((200, 40), (1000, 100)):
        y = np.tile([0, 1], n // 2)
        (train, va), = cv.split(np.zeros((n, 1)), y)
        assert len(va) == val and len(train) == n - val
        assert len(np.intersect1d(train, va)) == 0
    assert cv.get_n_splits(y=y60) == 6
    with pytest.raises(ValueError, match="y is required"):
        cv.get_n_splits()


def test_probe_search_scores_single_class_folds_neutral_and_small_n():
    X = np.arange(8, dtype=float).reshape(-1, 1)
    y = np.array([0, 0, 0, 0, 1, 1, 1, 1])
    assert fold_score(LogisticRegression(), X, y, np.array([0, 1]), np.array([4, 5]), None,
                      True) == 0.5
    tiny = ProbeSearchCV(LogisticRegression(), {"C": [0.1, 1.0]}).fit(X[2:5], y[2:5])
    assert tiny.best_params_ == {}
    assert tiny.best_score_ == roc_auc_score(y[2:5], tiny.decision_function(X[2:5]))
    assert np.isnan(tiny.cv_results_["mean_test_score"]).all()


def test_probe_search_matches_grid_search_on_the_same_folds():
    data = make_superposition_activations(n_samples=90, concept_rate=0.5, random_state=4)
    grid = {"C": list(np.logspace(3, -3, 5))}
    ours = ProbeSearchCV(LogisticRegression(max_iter=1000), grid).fit(data.X, data.y)
    folds = list(PaperCV().split(data.X, data.y))
    ref = GridSearchCV(LogisticRegression(max_iter=1000), grid, cv=folds,
                       scoring="roc_auc").fit(data.X, data.y)
    assert ours.best_params_ == ref.best_params_
    assert ours.best_score_ == pytest.approx(ref.best_score_)
    np.testing.assert_allclose(ours.cv_results_["mean_test_score"],
                               ref.cv_results_["mean_test_score"])


def test_probe_search_grid_may_depend_on_data_size():
    assert _pca_grid(500, 64, 400) == {"pca__n_components": [1, 2, 4, 6, 10, 16, 25, 40, 64]}
    # int() truncates 2^log2(6), as in the paper's code: 5 or 6 depending on how the
    # platform's power function rounds the last grid point.
    small = _pca_grid(8, 64, 6)["pca__n_components"]
    assert small[:4] == [1, 2, 3, 4] and small[-1] in (5, 6) and len(small) == 5
    assert max(_knn_grid(1000, 64, 900)["kneighborsclassifier__n_neighbors"]) == 99
    seen = []

    def grid(n, d, min_train):
        seen.append((n, d, min_train))
        return {"C": [1.0]}

    data = make_superposition_activations(n_samples=60, concept_rate=0.5, random_state=5)
    ProbeSearchCV(LogisticRegression(), grid).fit(data.X, data.y)
    assert seen == [(60, 64, 50)]


def test_quiver_chooses_the_best_validation_score():
    data = make_superposition_activations(n_samples=150, concept_rate=0.5, random_state=6)
    quiver = QuiverOfArrows([("lr", LogisticRegression(max_iter=1000)),
                             ("dummy", DummyClassifier(strategy="prior"))]).fit(data.X, data.y)
    assert quiver.chosen_ == "lr"
    assert quiver.val_scores_["dummy"] == pytest.approx(0.5)
    folds = list(PaperCV().split(data.X, data.y))
    expected = cross_val_score(LogisticRegression(max_iter=1000), data.X, data.y, cv=folds,
                               scoring="roc_auc").mean()
    assert quiver.val_scores_["lr"] == pytest.approx(expected)
    np.testing.assert_array_equal(quiver.predict(data.X),
                                  quiver.estimators_["lr"].predict(data.X))


def test_quiver_reads_best_score_of_searches():
    data = make_superposition_activations(n_samples=80, concept_rate=0.5, random_state=7)
    search = ProbeSearchCV(LogisticRegression(), {"C": [1e-3, 1.0]})
    quiver = QuiverOfArrows({"search": search, "also": LogisticRegression()}).fit(data.X,
                                                                                 data.y)
    assert quiver.val_scores_["search"] == quiver.estimators_["search"].best_score_


def test_paper_baselines_fit_and_rank(global_random_seed):
    data = make_superposition_activations(n_samples=300, concept_rate=0.5,
                                          random_state=global_random_seed)
    baselines = paper_baselines(random_state=0, include=["logreg", "pca", "knn"])
    train, test = np.arange(100), np.arange(100, 300)
    for name, est in baselines.items():
        est.fit(data.X[train], data.y[train])
        auc = roc_auc_score(data.y[test], est.decision_function(data.X[test]))
        assert auc > 0.75, name
    assert set(paper_baselines()) == {"logreg", "pca", "knn", "xgboost", "mlp"}
    assert paper_baselines(random_state=0)["mlp"].n_iter == 10


def test_probing_bad_input():
    X = np.random.default_rng(0).standard_normal((30, 4))
    y3 = np.arange(30) % 3
    with pytest.raises(ValueError, match="Only binary classification is supported"):
        SAEProbeClassifier(_identity_sae(X)).fit(X, y3)
    with pytest.raises(ValueError, match="Only binary classification is supported"):
        QuiverOfArrows({"lr": LogisticRegression()}).fit(X, y3)
    with pytest.raises(ValueError, match="Only binary classification is supported"):
        ProbeSearchCV(LogisticRegression(), {"C": [1.0]}).fit(X, y3)
    y = np.arange(30) % 2
    with pytest.raises(ValueError, match="Cs must hold positive finite values"):
        SAEProbeClassifier(_identity_sae(X), Cs=[1.0, -1.0]).fit(X, y)
    with pytest.raises(InvalidParameterError, match="penalty"):
        SAEProbeClassifier(_identity_sae(X), penalty="l0").fit(X, y)
    with pytest.raises(TypeError, match="list of \\(name, estimator\\) pairs"):
        QuiverOfArrows([LogisticRegression()]).fit(X, y)
    with pytest.raises(ValueError, match="at least one estimator"):
        QuiverOfArrows({}).fit(X, y)
    with pytest.raises(TypeError, match="param_grid must be or return a dict"):
        ProbeSearchCV(LogisticRegression(), lambda n, d, m: [1.0]).fit(X, y)
    with pytest.raises(ValueError, match="include must name baselines"):
        paper_baselines(include=["svm"])
    with pytest.raises(ValueError, match="both classes"):
        LatentSelector().fit(X, np.zeros(30)) and ProbeSearchCV(
            LogisticRegression(), {"C": [1.0]}).fit(X, np.zeros(30))


def test_sae_probe_works_in_a_pipeline_grid_search():
    data = make_superposition_activations(n_samples=150, concept_rate=0.5, random_state=8)
    sae = SparseAutoencoder(n_latents=32, k=4, max_epochs=2, random_state=0, device="cpu")
    pipe = Pipeline([("probe", SAEProbeClassifier(sae, Cs=2, random_state=0))])
    search = GridSearchCV(pipe, {"probe__k": [2, 8]}, cv=3, scoring="roc_auc").fit(data.X,
                                                                                  data.y)
    assert search.best_params_["probe__k"] in (2, 8)


# --- sample_weight: an integer weight equals the row repeated ------------------------------

def _weighted_task(seed=0, n=120):
    task = make_superposition_activations(n_samples=n, concept_rate=0.5, random_state=seed)
    w = np.random.default_rng(seed).integers(0, 4, size=n)
    return task.X, task.y, w, np.repeat(task.X, w, axis=0), np.repeat(task.y, w)


def test_latent_selector_sample_weight_equals_repeated_rows():
    rng = np.random.default_rng(0)
    Z = np.abs(rng.normal(size=(60, 12))) * (rng.random((60, 12)) < 0.4)
    y = rng.integers(0, 2, size=60)
    w = rng.integers(0, 4, size=60)
    weighted = LatentSelector(k=4).fit(Z, y, sample_weight=w)
    repeated = LatentSelector(k=4).fit(np.repeat(Z, w, axis=0), np.repeat(y, w))
    np.testing.assert_allclose(weighted.scores_, repeated.scores_, rtol=1e-12)
    np.testing.assert_array_equal(weighted.selected_, repeated.selected_)
    assert not np.allclose(weighted.scores_, LatentSelector(k=4).fit(Z, y).scores_)


@pytest.mark.parametrize("make", [
    pytest.param(lambda X: ProbeSearchCV(LogisticRegression(max_iter=5000), {"C": [0.5]}),
                 id="search"),
    pytest.param(lambda X: SAEProbeClassifier(_identity_sae(X), k=6, Cs=[0.5], penalty="l2"),
                 id="sae-probe-l2"),
    pytest.param(lambda X: QuiverOfArrows({"logreg": ProbeSearchCV(
        LogisticRegression(max_iter=5000), {"C": [0.5]})}), id="quiver"),
])
def test_probe_sample_weight_equals_repeated_rows(make):
    # One configuration, so the weighted folds choose nothing: the refit must be the
    # refit on the repeated rows.
    X, y, w, X_rep, y_rep = _weighted_task()
    weighted = make(X).fit(X, y, sample_weight=w)
    repeated = make(X).fit(X_rep, y_rep)
    unweighted = make(X).fit(X, y)
    X_test = make_superposition_activations(n_samples=200, random_state=5).X
    a, b = weighted.decision_function(X_test), repeated.decision_function(X_test)
    np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5)
    assert np.abs(a - unweighted.decision_function(X_test)).max() > 1e-3


def test_sae_probe_l1_sample_weight_equals_repeated_rows():
    X, y, w, X_rep, y_rep = _weighted_task(seed=1)
    kw = dict(k=6, Cs=[1.0], penalty="l1", random_state=0)
    weighted = SAEProbeClassifier(_identity_sae(X), **kw).fit(X, y, sample_weight=w)
    repeated = SAEProbeClassifier(_identity_sae(X), **kw).fit(X_rep, y_rep)
    np.testing.assert_array_equal(weighted.selected_latents_, repeated.selected_latents_)
    np.testing.assert_allclose(weighted.probe_[-1].coef_, repeated.probe_[-1].coef_,
                               rtol=1e-3, atol=1e-4)


def test_search_weights_the_validation_scores():
    X, y, w, _, _ = _weighted_task(seed=2)
    est = LogisticRegression(max_iter=5000)
    splits = list(PaperCV().split(X, y))
    tr, va = splits[0]
    model = LogisticRegression(max_iter=5000).fit(X[tr], y[tr], sample_weight=w[tr])
    expected = roc_auc_score(y[va], model.decision_function(X[va]), sample_weight=w[va])
    got = fold_score(est, X, y, tr, va, None, True, sample_weight=w.astype(float))
    assert got == pytest.approx(expected)


def test_probe_sample_weight_bad_input():
    from sklearn.neighbors import KNeighborsClassifier

    X, y, _, _, _ = _weighted_task()
    with pytest.raises(TypeError, match="sample_weight"):
        ProbeSearchCV(KNeighborsClassifier(), {"n_neighbors": [3]}).fit(
            X, y, sample_weight=np.ones(len(y)))
    with pytest.raises(TypeError, match="sample_weight"):
        QuiverOfArrows({"knn": KNeighborsClassifier()}).fit(X, y, sample_weight=np.ones(len(y)))
    with pytest.raises(ValueError, match="negative|sample_weight"):
        LatentSelector().fit(X, y, sample_weight=-np.ones(len(y)))
    with pytest.raises(ValueError):
        SAEProbeClassifier(_identity_sae(X)).fit(X, y, sample_weight=np.ones(3))


@pytest.mark.parametrize("penalty", ["l1", "l2"])
def test_sae_probe_with_frozen_sae_passes_sklearn_weight_equivalence(penalty):
    # scikit-learn's own check (weights 0-4 against removed / repeated rows, with its
    # group folds). An SAE trained inside fit is learnt unweighted, so there the check
    # cannot hold; a frozen dictionary leaves only the weighted selection and probe.
    from sklearn.utils.estimator_checks import (
        check_sample_weight_equivalence_on_dense_data,
    )

    sae = FrozenEstimator(FunctionTransformer().fit(np.zeros((2, 30))))
    check_sample_weight_equivalence_on_dense_data(
        "SAEProbeClassifier", SAEProbeClassifier(sae, k=4, Cs=2, penalty=penalty,
                                                 random_state=0))
