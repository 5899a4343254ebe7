"""Tests of the LAuReL estimators, network builders and the paper's claims."""

import pickle

import numpy as np
import pytest
import torch
from sklearn.base import clone
from sklearn.datasets import make_classification, make_regression
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from skpaper.nn import (
    LaurelConvNetClassifier,
    LaurelMLPClassifier,
    LaurelMLPRegressor,
    LaurelResidual,
    laurel_param_count,
    make_laurel_convnet,
    make_laurel_mlp,
)
from skpaper.papers import get_claims, run_claim

TINY = dict(n_blocks=2, width=8, rank=2, max_epochs=4, lr=1e-2, device="cpu")


@pytest.fixture(scope="module")
def clf_data():
    return make_classification(n_samples=120, n_features=6, n_informative=4, n_classes=3,
                               random_state=0)


@pytest.fixture(scope="module")
def image_data():
    rng = np.random.default_rng(0)
    X = rng.random((60, 16))
    y = (X[:, :8].sum(axis=1) > X[:, 8:].sum(axis=1)).astype(int)
    return X, y


def _copy_shared_weights(source, target):
    """Load the weights that ``target`` shares with ``source`` (all but LAuReL's)."""
    state = {k: v for k, v in source.state_dict().items() if k in target.state_dict()}
    missing, unexpected = target.load_state_dict(state, strict=False)
    assert not missing and not unexpected


@pytest.mark.parametrize("variant", ["rw", "lr", "pa", "rw+lr", "rw+lr+pa"])
def test_laurel_networks_equal_plain_residual_networks_at_init(variant):
    torch.manual_seed(0)
    mlp = make_laurel_mlp(5, 3, width=8, n_blocks=3, variant=variant, rank=2)
    plain = make_laurel_mlp(5, 3, width=8, n_blocks=3, variant="standard")
    _copy_shared_weights(mlp, plain)
    x = torch.randn(7, 5)
    torch.testing.assert_close(mlp(x), plain(x), rtol=0, atol=1e-6)

    conv = make_laurel_convnet((1, 4, 4), 3, width=4, n_blocks=3, variant=variant, rank=2)
    plain_conv = make_laurel_convnet((1, 4, 4), 3, width=4, n_blocks=3, variant="standard")
    _copy_shared_weights(conv, plain_conv)
    x = torch.randn(7, 16)
    torch.testing.assert_close(conv(x), plain_conv(x), rtol=0, atol=1e-6)


@pytest.mark.parametrize("variant", ["standard", "rw", "lr", "pa", "rw+lr", "rw+lr+pa"])
def test_mlp_classifier_fits_and_reports_laurel_attributes(clf_data, variant):
    X, y = clf_data
    clf = LaurelMLPClassifier(variant=variant, random_state=0, **TINY).fit(X, y)
    proba = clf.predict_proba(X)
    assert proba.shape == (120, 3)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    assert set(clf.predict(X)) <= set(clf.classes_)
    assert clf.n_added_params_ == 2 * laurel_param_count(8, variant, rank=2, k_prev=3)
    assert len(clf.laurel_weights_) == 2
    for w in clf.laurel_weights_:
        assert set(w) == {"alpha", "beta", "gamma"}
        if "rw" in variant:
            # 2 softmax keeps alpha + beta = 2 throughout training
            assert w["alpha"] + w["beta"] == pytest.approx(2.0)
            assert w["alpha"] != 1.0
        else:
            assert (w["alpha"], w["beta"]) == (1.0, 1.0)
        assert (w["gamma"] is None) == ("pa" not in variant)


def test_estimators_pickle_round_trip_predict_identically(clf_data, image_data):
    X, y = clf_data
    Xi, yi = image_data
    fitted = [
        (LaurelMLPClassifier(variant="rw+lr+pa", random_state=0, **TINY).fit(X, y), X),
        (LaurelMLPRegressor(random_state=0, **TINY).fit(X, X[:, 0] * 3 + 1), X),
        (LaurelConvNetClassifier(random_state=0, **TINY).fit(Xi, yi), Xi),
    ]
    for est, data in fitted:
        restored = pickle.loads(pickle.dumps(est))
        method = "predict_proba" if hasattr(est, "predict_proba") else "predict"
        np.testing.assert_array_equal(getattr(restored, method)(data),
                                      getattr(est, method)(data))
        assert restored.laurel_weights_ == est.laurel_weights_
        assert restored.n_added_params_ == est.n_added_params_


def test_same_seed_same_model_different_seed_different_model(clf_data):
    X, y = clf_data
    a = LaurelMLPClassifier(random_state=1, **TINY).fit(X, y)
    b = clone(a).fit(X, y)
    np.testing.assert_array_equal(a.predict_proba(X), b.predict_proba(X))
    c = LaurelMLPClassifier(random_state=2, **TINY).fit(X, y)
    assert not np.allclose(a.predict_proba(X), c.predict_proba(X))


def test_grid_search_over_variant_in_a_pipeline(clf_data):
    X, y = clf_data
    pipe = make_pipeline(StandardScaler(), LaurelMLPClassifier(random_state=0, **TINY))
    grid = {"laurelmlpclassifier__variant": ["standard", "rw+lr", "rw+lr+pa"]}
    search = GridSearchCV(pipe, grid, cv=2).fit(X, y)
    assert search.best_params_["laurelmlpclassifier__variant"] in grid[
        "laurelmlpclassifier__variant"]
    assert len(search.cv_results_["mean_test_score"]) == 3
    assert search.best_score_ > 0.4


def test_classifier_learns_digits_subset():
    from skpaper.datasets import load_digits_split

    d = load_digits_split(random_state=0)
    clf = LaurelMLPClassifier(n_blocks=2, width=32, rank=4, max_epochs=8, random_state=0,
                              device="cpu").fit(d.X_train, d.y_train)
    assert clf.score(d.X_test, d.y_test) > 0.9
    first, last = clf.history_[0]["train_loss"], clf.history_[-1]["train_loss"]
    assert last < 0.3 * first


def test_regressor_standardises_targets_and_supports_multi_output():
    X, Y = make_regression(n_samples=150, n_features=4, n_targets=2, noise=0.1, random_state=0)
    Y = 100.0 * Y + 1000.0  # far from unit scale
    reg = LaurelMLPRegressor(n_blocks=2, width=16, rank=4, max_epochs=40, lr=1e-2,
                             random_state=0, device="cpu").fit(X, Y)
    pred = reg.predict(X)
    assert pred.shape == (150, 2)
    assert reg.score(X, Y) > 0.9
    single = clone(reg).fit(X, Y[:, 0])
    assert single.predict(X).shape == (150,)
    # a constant target has zero spread: it is centred, not divided by zero
    constant = clone(reg).set_params(max_epochs=10).fit(X, np.full(150, 3.0))
    np.testing.assert_allclose(constant.predict(X), 3.0, atol=0.5)


def test_convnet_infers_and_validates_image_shape(image_data):
    X, y = image_data
    square = LaurelConvNetClassifier(random_state=0, **TINY).fit(X, y)
    assert square.image_shape_ == (1, 4, 4)
    strip = LaurelConvNetClassifier(random_state=0, **TINY).fit(X[:, :10], y)
    assert strip.image_shape_ == (1, 1, 10)
    assert strip.predict(X[:, :10]).shape == (60,)
    two_d = LaurelConvNetClassifier(image_shape=(2, 8), random_state=0, **TINY).fit(X, y)
    assert two_d.image_shape_ == (1, 2, 8)
    chans = LaurelConvNetClassifier(image_shape=[4, 2, 2], random_state=0, **TINY).fit(X, y)
    assert chans.image_shape_ == (4, 2, 2)
    residuals = [m for m in chans.module_.modules() if isinstance(m, LaurelResidual)]
    assert all(r.feature_dim == 1 for r in residuals)
    assert chans.n_added_params_ == 2 * laurel_param_count(8, "rw+lr", rank=2)
    for bad in [(3, 5), (1, 2, 2, 4), (4.0, 4.0), (0, 16), (True, 16)]:
        with pytest.raises(ValueError, match=r"image_shape must be .* n_features=16"):
            LaurelConvNetClassifier(image_shape=bad, **TINY).fit(X, y)


@pytest.mark.parametrize("Estimator", [LaurelMLPClassifier, LaurelMLPRegressor,
                                       LaurelConvNetClassifier])
@pytest.mark.parametrize("param, value", [
    ("variant", "dense"), ("rank", 0), ("k_prev", 0), ("n_blocks", 0), ("width", 1.5),
    ("weight_norm", "tanh"), ("lr_init", "ones"), ("pa_map", "mlp"), ("weight_decay", -1.0),
])
def test_estimators_reject_bad_parameters_naming_them(Estimator, param, value, clf_data):
    X, y = clf_data
    with pytest.raises(ValueError, match=f"'{param}' parameter of {Estimator.__name__}"):
        Estimator(**{**TINY, param: value}).fit(X, y)


def test_estimators_reject_bad_input_at_predict(clf_data):
    X, y = clf_data
    clf = LaurelMLPClassifier(random_state=0, **TINY).fit(X, y)
    with pytest.raises(ValueError, match="X has 5 features"):
        clf.predict(X[:, :5])
    with pytest.raises(ValueError, match="Unknown label type"):
        LaurelMLPClassifier(**TINY).fit(X, np.linspace(0, 1, len(X)))


def test_parameter_overhead_claim_is_exact_at_smoke_scale(tmp_path):
    (claim,) = [c for c in get_claims("laurel") if c.claim_id == "parameter-overhead"]
    result = run_claim(claim, scale="smoke", seed=0, out_dir=tmp_path)
    assert result.error is None, result.error
    obs = result.observed
    assert obs["counts_match_formulas"] is True and result.status == "reported"
    assert (obs["per_block_rw"], obs["per_block_lr"], obs["per_block_pa"]) == (2, 1024, 1027)
    assert obs["resnet50_params"] == 25_557_032
    assert obs["resnet50_plus_one_block_pct"] == pytest.approx(4.37, abs=0.005)
    assert obs["resnet50_ratio_plus_one_over_rw_lr"] > 2.0


def test_quality_claims_pair_seeds_and_run_a_placebo(tmp_path):
    import json

    from skpaper.papers import STATUSES
    from skpaper.papers import laurel as laurel_claims

    (claim,) = [c for c in get_claims("laurel") if c.claim_id == "digits-gain"]
    assert claim.effect_of_interest.value < 0 and claim.control
    result = run_claim(claim, scale="smoke", seed=0, out_dir=tmp_path)
    assert result.error is None, result.error
    assert result.status in STATUSES and result.status != "error"
    obs = result.observed
    n = obs["n_seeds"]
    per_seed = obs["per_seed"]
    assert set(per_seed) == {"standard", "rw+lr", "placebo"}
    assert all(len(v) == n for v in per_seed.values())
    # the check is the paired bound of CE(rw+lr) - CE(standard), the control the placebo's
    np.testing.assert_allclose(obs["check"]["values"],
                               np.subtract(per_seed["rw+lr"], per_seed["standard"]))
    control = result.control.observed["check"]
    np.testing.assert_allclose(control["values"],
                               np.subtract(per_seed["placebo"], per_seed["standard"]))
    assert result.arms["placebo"]["parameters"] == result.arms["standard"]["parameters"]
    assert result.arms["rw+lr"]["parameters"] > result.arms["standard"]["parameters"]
    payload = json.loads((tmp_path / "laurel" / "digits-gain.json").read_text())
    assert {"n_seeds", "sd", "seeds_needed"} <= set(payload["power"])
    # the batched fits are those of the estimator (same recipe, same seed)
    from skpaper.datasets import load_digits_split

    d = load_digits_split(test_size=0.5, random_state=0)
    cfg = laurel_claims._QUALITY["smoke"]
    s = obs["seeds"][0]
    est = LaurelMLPClassifier(n_blocks=cfg["n_blocks"], width=cfg["width"], rank=cfg["rank"],
                              variant="rw+lr", max_epochs=cfg["epochs"], batch_size=64,
                              lr=cfg["lr"], random_state=s, device="cpu").fit(
        d.X_train[: cfg["n_train"]], d.y_train[: cfg["n_train"]])
    from sklearn.metrics import log_loss

    ce = log_loss(d.y_test, est.predict_proba(d.X_test), labels=est.classes_)
    assert per_seed["rw+lr"][0] == pytest.approx(ce, abs=1e-3)


@pytest.mark.gpu
def test_laurel_estimators_train_on_gpu_and_pickle_to_cpu(clf_data, image_data):
    X, y = clf_data
    Xi, yi = image_data
    gpu = {**TINY, "device": "cuda"}
    for est, data, target in [(LaurelMLPClassifier(variant="rw+lr+pa", random_state=0, **gpu),
                               X, y),
                              (LaurelConvNetClassifier(random_state=0, **gpu), Xi, yi)]:
        est.fit(data, target)
        assert est.device_ == "cuda" and next(est.module_.parameters()).is_cuda
        restored = pickle.loads(pickle.dumps(est))
        np.testing.assert_allclose(restored.predict_proba(data), est.predict_proba(data),
                                   atol=1e-6)
