"""TestTimeAdapter: one adaptation loop for TENT, EATA, ROID, CMF and SSA."""

import copy
import pickle

import numpy as np
import pytest
import torch
from sklearn.datasets import load_digits
from sklearn.frozen import FrozenEstimator
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import FunctionTransformer

from skpaper.adaptation import (
    NormMLPClassifier,
    TestTimeAdapter,
    adapted_parameters,
    make_norm_mlp,
)
from skpaper.datasets import make_corruption_stream
from skpaper.nn import MLPClassifier
from skpaper.utils._sklearn import InvalidParameterError


@pytest.fixture(scope="module")
def data():
    X, y = load_digits(return_X_y=True)
    X = X / 16.0
    stream = make_corruption_stream(X[300:500], y[300:500], ["noise", "contrast"],
                                    random_state=0)
    return X[:300], y[:300], stream


def _source(X, y, norm="layer"):
    return NormMLPClassifier(hidden_layer_sizes=(16,), norm=norm, max_epochs=40, lr=1e-2,
                             device="cpu", random_state=0, inference_dtype="float32").fit(X, y)


@pytest.fixture(scope="module")
def sources(data):
    X, y, _ = data
    return {"layer": _source(X, y), "batch": _source(X, y, "batch")}


def _adapter(source, X, **params):
    params = {"batch_size": 16, "window": 4, "device": "cpu", "random_state": 0, **params}
    return TestTimeAdapter(FrozenEstimator(source), **params).fit(X[:5])


def _tent_reference(module, X, lr, momentum, batch_size):
    """TENT as in its paper: entropy, torch's SGD with Nesterov momentum, norm affines only."""
    module = copy.deepcopy(module)
    params = adapted_parameters(module)
    module.requires_grad_(False)
    for p in params:
        p.requires_grad_(True)
    optimizer = torch.optim.SGD(params, lr=lr, momentum=momentum, nesterov=True)
    out = []
    for start in range(0, len(X), batch_size):
        logits = module(torch.as_tensor(X[start:start + batch_size], dtype=torch.float32))
        loss = -(logits.softmax(1) * logits.log_softmax(1)).sum(1).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        out.append(logits.detach().softmax(1))
    return module, torch.cat(out).double().numpy()


def test_adapter_without_ssa_or_anchor_is_exactly_tent(data, sources):
    _, _, stream = data
    source = sources["layer"]
    tta = _adapter(source, stream.X, ssa=False, kappa=0.0, lr=0.05, momentum=0.9)
    proba = tta.predict_proba(stream.X, adapt=True)
    reference, ref_proba = _tent_reference(source.module_, stream.X, 0.05, 0.9, 16)
    np.testing.assert_array_equal(proba, ref_proba)
    for (name, a), b in zip(tta.module_.state_dict().items(), reference.state_dict().values()):
        assert torch.equal(a, b), name
    assert tta.n_steps_ == len(tta.step_history_) == int(np.ceil(len(stream.X) / 16))
    assert all(step == 1.0 for step in tta.step_history_)


def test_adapter_leaves_the_source_estimator_untouched(data, sources):
    _, _, stream = data
    source = sources["layer"]
    before = {k: v.clone() for k, v in source.module_.state_dict().items()}
    tta = _adapter(source, stream.X, lr=0.05)
    tta.partial_fit(stream.X)
    for key, value in source.module_.state_dict().items():
        assert torch.equal(value, before[key])
    assert not torch.equal(tta.module_[1].weight, source.module_[1].weight)


@pytest.mark.parametrize("norm", ["layer", "batch"])
def test_adapter_changes_only_normalisation_parameters(data, sources, norm):
    _, _, stream = data
    tta = _adapter(sources[norm], stream.X, lr=0.05, loss="roid", anchor="cmf")
    before = {k: v.clone() for k, v in tta.module_.state_dict().items()}
    tta.partial_fit(stream.X)
    changed = {k for k, v in tta.module_.state_dict().items() if not torch.equal(v, before[k])}
    assert changed == {"1.weight", "1.bias"}


def test_adapter_params_all_changes_every_layer(data, sources):
    _, _, stream = data
    tta = _adapter(sources["layer"], stream.X, lr=0.05, params="all")
    before = {k: v.clone() for k, v in tta.module_.state_dict().items()}
    tta.partial_fit(stream.X)
    assert all(not torch.equal(v, before[k]) for k, v in tta.module_.state_dict().items())


@pytest.mark.parametrize("norm, loss", [("layer", "entropy"), ("batch", "roid"),
                                        ("batch", "eata")])
def test_reset_restores_the_source_bit_for_bit(data, sources, norm, loss):
    _, _, stream = data
    tta = _adapter(sources[norm], stream.X, lr=0.05, loss=loss, anchor="cmf")
    fresh = tta.predict_proba(stream.X, adapt=True)
    source_state = sources[norm].module_.state_dict()
    assert tta.reset() is tta
    for key, value in tta.module_.state_dict().items():
        assert torch.equal(value, source_state[key]), key
    # after a reset the same stream gives the same online predictions again
    np.testing.assert_array_equal(tta.predict_proba(stream.X, adapt=True), fresh)
    assert tta.n_steps_ == 2 * len(tta.step_history_) // 2


def test_no_adaptation_matches_plain_inference(data, sources):
    _, _, stream = data
    for norm in ("layer", "batch"):
        tta = _adapter(sources[norm], stream.X, loss="none", norm_stats="source")
        np.testing.assert_allclose(tta.predict_proba(stream.X, adapt=True),
                                   sources[norm].predict_proba(stream.X), atol=1e-6)


def test_batch_statistics_adapt_batchnorm_without_touching_running_stats(data, sources):
    _, _, stream = data
    source = sources["batch"]
    tta = _adapter(source, stream.X, loss="none", norm_stats="batch")
    online = tta.predict_proba(stream.X, adapt=True)
    assert not np.allclose(online, source.predict_proba(stream.X), atol=1e-3)
    for key, value in tta.module_.state_dict().items():
        assert torch.equal(value, source.module_.state_dict()[key]), key


def test_ssa_records_the_step_and_noise_histories(data, sources):
    _, _, stream = data
    tta = _adapter(sources["layer"], stream.X, lr=0.05, steady_scale=0.09, window=4)
    tta.partial_fit(stream.X)
    steps, sigma2 = np.array(tta.step_history_), np.array(tta.sigma2_history_)
    assert len(steps) == len(sigma2) == len(tta.loss_history_) == tta.n_steps_
    assert np.all(np.isnan(sigma2[:4])) and np.all(np.isfinite(sigma2[4:]))
    np.testing.assert_allclose(steps[4], 0.3, rtol=1e-9)
    assert tta.filter_.steady and np.all(steps[4:] <= tta.max_step)
    # the step follows the steady-state formula alpha = sqrt(S / (eta^2 sigma^2))
    expected = np.sqrt(tta.filter_.noise_floor / (0.05**2 * sigma2[4:]))
    np.testing.assert_allclose(steps[4:], np.minimum(expected, 4.0), rtol=1e-9)


def test_ssa_keeps_tent_stable_at_a_large_learning_rate(data, sources):
    X, y, _ = data
    stream = make_corruption_stream(X[:200], y[:200], ["noise", "contrast", "dropout"],
                                    rounds=2, random_state=1)
    calibration = _adapter(sources["layer"], stream.X, lr=0.01)
    calibration.partial_fit(stream.X)
    floor = calibration.filter_.noise_floor
    tent = _adapter(sources["layer"], stream.X, lr=0.3, ssa=False, kappa=0.0)
    ssa = _adapter(sources["layer"], stream.X, lr=0.3, sigma_lambda2=floor)
    acc_tent = tent.score(stream.X, stream.y, adapt=True)
    acc_ssa = ssa.score(stream.X, stream.y, adapt=True)
    assert acc_ssa > acc_tent + 0.05


def test_reset_every_restarts_from_the_source(data, sources):
    _, _, stream = data
    X = stream.X[:128]
    periodic = _adapter(sources["layer"], X, lr=0.05, ssa=False, reset_every=4)
    online = periodic.predict_proba(X, adapt=True)
    fresh = _adapter(sources["layer"], X, lr=0.05, ssa=False)
    np.testing.assert_array_equal(online[64:], fresh.predict_proba(X[64:], adapt=True))


def test_adapter_pickles_mid_stream(data, sources):
    _, _, stream = data
    tta = _adapter(sources["batch"], stream.X, lr=0.05, loss="roid", anchor="cmf")
    tta.partial_fit(stream.X[:160])
    clone = pickle.loads(pickle.dumps(tta))
    np.testing.assert_array_equal(clone.predict_proba(stream.X),
                                  tta.predict_proba(stream.X))
    np.testing.assert_array_equal(clone.predict_proba(stream.X[160:], adapt=True),
                                  tta.predict_proba(stream.X[160:], adapt=True))
    assert clone.step_history_ == tta.step_history_


def test_adapter_wraps_a_raw_module(data):
    X, y, stream = data
    torch.manual_seed(0)
    module = make_norm_mlp(64, (8,), 10)
    tta = TestTimeAdapter(module, batch_size=32, device="cpu").fit(X[:4])
    np.testing.assert_array_equal(tta.classes_, np.arange(10))
    assert tta.predict(stream.X, adapt=True).shape == (len(stream.X),)
    restored = pickle.loads(pickle.dumps(tta))
    np.testing.assert_allclose(restored.predict_proba(X), tta.predict_proba(X))


def test_adapter_takes_a_torch_device_and_refuses_a_bad_one(data):
    X, y, stream = data
    module = make_norm_mlp(64, (8,), 10)
    tta = TestTimeAdapter(module, batch_size=32, device=torch.device("cpu")).fit(X[:4])
    assert tta.device_ == "cpu"
    with pytest.raises(ValueError, match="device"):
        TestTimeAdapter(module, batch_size=32, device="tpu").fit(X[:4])
    with pytest.raises(InvalidParameterError, match="device"):
        TestTimeAdapter(module, batch_size=32, device=3).fit(X[:4])


def test_adapter_fits_its_source_in_pipeline_and_grid_search(data):
    X, y, stream = data
    pipe = make_pipeline(FunctionTransformer(np.sqrt),
                         TestTimeAdapter(NormMLPClassifier(hidden_layer_sizes=(8,),
                                                           max_epochs=20, lr=1e-2,
                                                           random_state=0),
                                         batch_size=32, device="cpu", random_state=0))
    pipe.fit(X, y)
    assert pipe.predict(stream.X, adapt=True).shape == (len(stream.X),)
    search = GridSearchCV(TestTimeAdapter(random_state=0, batch_size=64, device="cpu"),
                          {"lr": [1e-3, 1e-2]}, cv=2).fit(X[:120], y[:120])
    assert search.best_params_["lr"] in (1e-3, 1e-2)
    assert search.best_estimator_.estimator_.n_iter_ >= 1


@pytest.mark.gpu
def test_adapter_runs_on_cuda_like_on_cpu(data, sources):
    _, _, stream = data
    cpu = _adapter(sources["layer"], stream.X, lr=0.05)
    gpu = _adapter(sources["layer"], stream.X, lr=0.05, device="cuda")
    assert gpu.device_.startswith("cuda")
    np.testing.assert_allclose(gpu.predict_proba(stream.X, adapt=True),
                               cpu.predict_proba(stream.X, adapt=True), atol=1e-3)
    assert pickle.loads(pickle.dumps(gpu)).predict(stream.X).shape == (len(stream.X),)


def test_adapter_rejects_bad_sources_and_inputs(data, sources):
    X, y, stream = data
    with pytest.raises(TypeError, match="exposing a torch `module_`"):
        TestTimeAdapter(LogisticRegression(max_iter=500), device="cpu").fit(X[:60], y[:60])
    with pytest.raises(ValueError, match="selects no parameter"):
        TestTimeAdapter(MLPClassifier(hidden_layer_sizes=(4,), max_epochs=2), device="cpu"
                        ).fit(X, y)
    with pytest.raises(ValueError, match="requires y to be passed"):
        TestTimeAdapter(NormMLPClassifier(), device="cpu").fit(X)
    with pytest.raises(ValueError, match="expecting 64 features"):
        TestTimeAdapter(FrozenEstimator(sources["layer"]), device="cpu").fit(X[:, :10])
    tta = _adapter(sources["layer"], X)
    with pytest.raises(ValueError, match="X has 10 features"):
        tta.predict(X[:, :10], adapt=True)
    with pytest.raises(ValueError, match="X has 10 features"):
        tta.partial_fit(X[:, :10])
    with pytest.raises(InvalidParameterError, match="'loss' parameter"):
        TestTimeAdapter(loss="tent").fit(X, y)
    with pytest.raises(InvalidParameterError, match="'kappa' parameter"):
        TestTimeAdapter(kappa=2.0).fit(X, y)
    with pytest.raises(ValueError, match="params must be 'norm' or 'all'"):
        adapted_parameters(make_norm_mlp(4, (4,), 2), "bias")


def test_partial_fit_before_fit_sets_up_the_source(data):
    X, y, _ = data
    tta = TestTimeAdapter(NormMLPClassifier(hidden_layer_sizes=(8,), max_epochs=5,
                                            random_state=0), batch_size=100, device="cpu")
    tta.partial_fit(X, y)
    assert tta.n_steps_ == 3 and tta.n_features_in_ == 64


def test_norm_mlp_classifier_learns_digits_with_both_norms(data, sources):
    X, y, _ = data
    for norm in ("layer", "batch"):
        assert sources[norm].score(X, y) > 0.9
    with pytest.raises(ValueError, match="n_samples=1"):
        NormMLPClassifier(norm="batch").fit(X[:1], y[:1])
    with pytest.raises(ValueError, match="norm must be one of"):
        make_norm_mlp(4, (4,), 2, norm="group")


def test_adapter_is_torch_state_without_a_training_loop_and_source_honours_verbose(data,
                                                                                  capsys):
    from skpaper.nn import BaseTorchEstimator, BaseTorchState

    X, y, _ = data
    # The adapter holds a torch module but does not train by epochs: no loop, no
    # epoch parameters; its source is trained by the base loop of its own class.
    assert issubclass(TestTimeAdapter, BaseTorchState)
    assert not issubclass(TestTimeAdapter, BaseTorchEstimator)
    assert "max_epochs" not in TestTimeAdapter().get_params()
    assert isinstance(NormMLPClassifier(), MLPClassifier)
    source = NormMLPClassifier(hidden_layer_sizes=(8,), max_epochs=3, device="cpu",
                               random_state=0, verbose=1)
    TestTimeAdapter(source, batch_size=100, device="cpu", random_state=0).fit(X, y)
    err = capsys.readouterr().err
    assert "NormMLPClassifier" in err and "3/3" in err
    TestTimeAdapter(source.set_params(verbose=0), batch_size=100, device="cpu",
                    random_state=0).fit(X, y)
    assert capsys.readouterr().err == ""
