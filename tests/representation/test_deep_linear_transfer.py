"""TransferRegressor: the three ways of learning a target from a pretrained network."""

import json
import pickle

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.frozen import FrozenEstimator
from sklearn.linear_model import LinearRegression
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import FunctionTransformer

from skpaper.datasets import make_relu_teacher_tasks, make_teacher_tasks
from skpaper.papers import get_claims, run_claim
from skpaper.papers._registry import STATUSES
from skpaper.representation import (
    DeepLinearRegressor,
    TransferRegressor,
    TwoLayerReLURegressor,
    linear_transfer_risk,
)


def _task(n, theta=np.pi / 4, sigma=0.2, d=30, seed=0):
    return make_teacher_tasks(d=d, theta=theta, sigma=sigma, n=n, random_state=seed)


def _source(task, **params):
    return DeepLinearRegressor(random_state=0, **params).fit_population(task.beta_source)


def test_linear_transfer_fits_one_coefficient_on_the_source_direction():
    task = _task(20)
    source = _source(task)
    model = TransferRegressor(FrozenEstimator(source), mode="linear").fit(task.X, task.y)
    z = task.X @ task.beta_source
    b = z @ task.y / (z @ z)
    assert model.feature_rank_ == 1
    assert np.allclose(model.estimator_.coef_, b * task.beta_source, atol=1e-4)
    assert np.allclose(model.predict(task.X), task.X @ model.estimator_.coef_)
    ridge = TransferRegressor(source, mode="linear", ridge=0.5).fit(task.X, task.y)
    b_ridge = z @ task.y / (z @ z + 20 * 0.5)
    assert np.allclose(ridge.estimator_.coef_, b_ridge * task.beta_source, atol=1e-4)


def test_untruncated_features_leak_into_linear_transfer_above_gamma_one():
    # The pitfall of a large initialisation: residual directions turn the readout into OLS.
    task = _task(45)
    source = _source(task, init_scale=1e-3)
    full = TransferRegressor(source, mode="linear", feature_rank=None).fit(task.X, task.y)
    auto = TransferRegressor(source, mode="linear").fit(task.X, task.y)
    ols = np.linalg.lstsq(task.X, task.y, rcond=None)[0]
    assert np.allclose(full.estimator_.coef_, ols, atol=1e-6)
    assert auto.feature_rank_ == 1
    assert auto.estimator_.risk(task.beta_target) > 0.45  # the floor sin^2(45 deg) = 0.5


def test_linear_transfer_risk_matches_eq_10_on_average():
    theta, sigma, n = np.pi / 3, 0.3, 10
    risks = []
    for seed in range(200):
        task = _task(n, theta, sigma, d=20, seed=seed)
        source = DeepLinearRegressor(random_state=seed).fit_population(task.beta_source)
        model = TransferRegressor(source).fit(task.X, task.y)
        risks.append(model.estimator_.risk(task.beta_target))
    risks = np.asarray(risks)
    expected = linear_transfer_risk(n / 20, theta, sigma, d=20)
    assert abs(risks.mean() - expected) < 4 * risks.std() / np.sqrt(risks.size)


def test_scratch_training_is_the_minimum_norm_interpolator():
    task = _task(12)
    model = TransferRegressor(DeepLinearRegressor(random_state=0), mode="scratch")
    model.fit(task.X, task.y)
    assert np.allclose(model.estimator_.coef_, np.linalg.pinv(task.X) @ task.y, atol=1e-4)
    assert model.n_iter_ == model.estimator_.n_iter_ > 0


@pytest.mark.parametrize("sigma", [0.0, 1.0])
def test_finetuning_keeps_the_pretrained_vector_in_the_null_space(sigma):
    task = _task(10, theta=np.pi / 3, sigma=sigma)
    source = _source(task).set_params(lr=0.002, max_iter=200000, tol=1e-10)
    model = TransferRegressor(source, mode="finetune").fit(task.X, task.y)
    d = task.X.shape[1]
    pinv = np.linalg.pinv(task.X)
    beta_sc = pinv @ task.y
    null = (np.eye(d) - pinv @ task.X) @ task.beta_source
    # Balancedness fixes the scale c of the null-space part: c^4 - a c^2 - b = 0.
    a, b = null @ null, beta_sc @ beta_sc
    c = np.sqrt((a + np.sqrt(a * a + 4 * b)) / 2)
    assert np.linalg.norm(model.estimator_.coef_ - (beta_sc + c * null)) < 0.01
    # The source itself is never modified.
    assert source.risk(task.beta_source) < 1e-8


def test_finetuning_above_gamma_one_forgets_the_initialisation():
    task = _task(60)
    model = TransferRegressor(_source(task), mode="finetune").fit(task.X, task.y)
    ols = np.linalg.lstsq(task.X, task.y, rcond=None)[0]
    assert np.allclose(model.estimator_.coef_, ols, atol=1e-4)


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
def test_transfer_works_from_a_relu_source():
    task = make_relu_teacher_tasks(d=6, n_teacher=4, ablation=0.25, sigma=0.1, n=30,
                                   n_source=0, n_test=500, random_state=0)
    source = TwoLayerReLURegressor(n_hidden=20, init_scale=0.1, lr=0.5, max_iter=800,
                                   random_state=0)
    source.fit_population(task.source_weights, task.source_coef)
    source.set_params(lr=0.05)
    top = TransferRegressor(source, mode="linear", feature_rank=5).fit(task.X, task.y)
    assert top.feature_rank_ == 5
    assert np.count_nonzero(top.estimator_.output_weights_) == 5
    for mode in ("linear", "finetune"):
        model = TransferRegressor(source, mode=mode, ridge=1e-5).fit(task.X, task.y)
        error = np.mean((model.predict(task.X_test) - task.y_test) ** 2)
        assert error < 0.5 * np.mean(task.y_test ** 2)
    with pytest.raises(ValueError, match="n_hidden=20"):
        TransferRegressor(source, mode="linear", feature_rank=21).fit(task.X, task.y)


def test_frozen_source_survives_clone_grid_search_pipeline_and_pickle():
    task = _task(25)
    frozen = FrozenEstimator(_source(task))
    model = TransferRegressor(frozen, mode="linear")
    assert clone(model).source is frozen
    search = GridSearchCV(model, {"ridge": [0.0, 0.1, 1.0], "mode": ["linear", "finetune"]},
                          cv=3).fit(task.X, task.y)
    assert search.best_params_["mode"] in ("linear", "finetune")
    pipe = make_pipeline(FunctionTransformer(), clone(model)).fit(task.X, task.y)
    restored = pickle.loads(pickle.dumps(pipe))
    assert np.array_equal(restored.predict(task.X), pipe.predict(task.X))


def test_transfer_regressor_rejects_bad_input():
    task = _task(10)
    with pytest.raises(ValueError, match="fitted .*source"):
        TransferRegressor(DeepLinearRegressor(), mode="linear").fit(task.X, task.y)
    with pytest.raises(ValueError, match="X has 5 features, but the source"):
        TransferRegressor(_source(task), mode="finetune").fit(task.X[:, :5], task.y)
    with pytest.raises(TypeError, match="source must be a DeepLinearRegressor"):
        TransferRegressor(LinearRegression().fit(task.X, task.y)).fit(task.X, task.y)
    with pytest.raises(ValueError, match="mode"):
        TransferRegressor(_source(task), mode="lora").fit(task.X, task.y)
    with pytest.raises(ValueError, match="feature_rank"):
        TransferRegressor(_source(task), feature_rank=0).fit(task.X, task.y)
    with pytest.raises(ValueError, match="feature_rank must be at most"):
        TransferRegressor(_source(task), feature_rank=31).fit(task.X, task.y)


def test_smoke_claims_report_the_fine_tuning_identity_above_gamma_one(tmp_path):
    claims = {c.claim_id: c for c in get_claims("deep-linear-transfer")}
    assert set(claims) == {"risk-closed-forms", "phase-diagram-signs", "relu-qualitative"}
    result = run_claim(claims["phase-diagram-signs"], scale="smoke", seed=0, out_dir=tmp_path)
    assert result.error is None and result.status in STATUSES
    assert result.observed["max_abs_finetune_transferability_gamma_above_1"] < 1e-3
    assert result.observed["linear_decisive_points"] >= 2
    assert (tmp_path / "deep-linear-transfer" / "phase_diagram_signs.png").exists()


@pytest.mark.parametrize("claim_id", ["risk-closed-forms", "relu-qualitative"])
def test_smoke_claims_decide_against_a_swapped_source(claim_id, tmp_path):
    claim = {c.claim_id: c for c in get_claims("deep-linear-transfer")}[claim_id]
    assert claim.effect_of_interest is not None
    result = run_claim(claim, scale="smoke", seed=0, out_dir=tmp_path)
    assert result.error is None and result.status in STATUSES
    payload = json.loads((tmp_path / "deep-linear-transfer" / f"{claim_id}.json").read_text())
    assert payload["effect_of_interest"]["source"] in ("paper", "ours")
    assert payload["power"]["n_seeds"] >= 2
    # The control transfers from an independent source: its figures vary, it is a control.
    assert payload["control"]["zero_spread"] is False
