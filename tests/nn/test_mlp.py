"""Tests of the fit options of the reference MLPs: sample weights, partial_fit, warm_start,
devices and optimizers."""

import pickle

import numpy as np
import pytest
import torch
from sklearn.base import clone

from skpaper.nn import MLPClassifier, MLPRegressor, resolve_device, resolve_optimizer
from skpaper.utils._sklearn import InvalidParameterError

# One batch holds every row (batch_size >= n), no stopping rule: training is deterministic
# given the data's loss, so weighted and repeated data must end at the same weights.
FULL_BATCH = dict(hidden_layer_sizes=(8,), max_epochs=40, batch_size=1000, lr=1e-2,
                  n_iter_no_change=1000, device="cpu", random_state=0)
#: Float32 training, summed in a different order: agreement to a few float32 ulps of the
#: weights (measured: at most ~1.2e-7 absolute on these data).
PARAM_ATOL = 1e-5


@pytest.fixture(scope="module")
def data():
    rng = np.random.RandomState(0)
    X = rng.normal(size=(40, 3))
    y = (X[:, 0] + 0.5 * rng.normal(size=40) > 0).astype(int)
    w = rng.randint(1, 4, size=40)
    return X, y, w


def _params(est):
    return [p.detach().double().numpy() for p in est.module_.parameters()]


def _assert_same_params(a, b, atol=PARAM_ATOL):
    for p, q in zip(_params(a), _params(b), strict=True):
        np.testing.assert_allclose(p, q, rtol=0, atol=atol)


def _differ(a, b, atol=1e-3):
    return any(np.max(np.abs(p - q)) > atol for p, q in zip(_params(a), _params(b)))


@pytest.mark.parametrize("Est", [MLPClassifier, MLPRegressor])
@pytest.mark.parametrize("weights", ["twos", "random"])
def test_integer_weights_equal_repeated_rows_full_batch(data, Est, weights):
    X, y, w = data
    if weights == "twos":  # weight 2 on every other row, against those rows duplicated
        w = np.where(np.arange(len(y)) % 2 == 0, 2, 1)
    target = y if Est is MLPClassifier else X @ [1.0, -1.0, 0.5]
    weighted = Est(**FULL_BATCH).fit(X, target, sample_weight=w)
    repeated = Est(**FULL_BATCH).fit(np.repeat(X, w, axis=0), np.repeat(target, w))
    _assert_same_params(weighted, repeated)
    # ... and the weights matter: unweighted training ends elsewhere.
    assert _differ(weighted, Est(**FULL_BATCH).fit(X, target))
    np.testing.assert_allclose(weighted.history_[-1]["train_loss"],
                               repeated.history_[-1]["train_loss"], rtol=1e-5)


def test_zero_weight_is_removal_and_constant_weight_is_none(data):
    X, y, w = data
    params = {**FULL_BATCH, "batch_size": 8}  # mini-batches: batch composition matters
    w0 = w.copy()
    w0[::3] = 0
    keep = w0 > 0
    a = MLPClassifier(**params).fit(X, y, sample_weight=w0)
    b = MLPClassifier(**params).fit(X[keep], y[keep], sample_weight=w0[keep])
    _assert_same_params(a, b, atol=0)
    c = MLPClassifier(**params).fit(X, y, sample_weight=np.full(len(y), 2.5))
    d = MLPClassifier(**params).fit(X, y)
    _assert_same_params(c, d, atol=0)


def test_minibatch_weighted_loss_is_unbiased_for_the_repeated_rows_loss(data):
    # The weighted batch loss sum(w l) / n_batch, weights of mean one, averages over
    # random batches to the loss of the data with repeated rows.
    X, y, w = data
    clf = MLPClassifier(**{**FULL_BATCH, "max_epochs": 1}).fit(X, y)
    clf.module_ = clf.module_.float().train()
    Xt = torch.as_tensor(X, dtype=torch.float32)
    yt = torch.as_tensor(y)
    wt = torch.as_tensor(w / w.mean(), dtype=torch.float32)
    with torch.no_grad():
        full = torch.nn.functional.cross_entropy(clf.module_(torch.repeat_interleave(
            Xt, torch.as_tensor(w), dim=0)), torch.repeat_interleave(yt, torch.as_tensor(w)))
        gen = torch.Generator().manual_seed(0)
        batches = [torch.randperm(40, generator=gen)[:8] for _ in range(4000)]
        mean = np.mean([float(clf._weighted_loss(clf.module_(Xt[i]), yt[i], wt[i]))
                        for i in batches])
    assert abs(mean - float(full)) < 0.01 * float(full)


def test_sample_weight_is_validated(data):
    X, y, w = data
    clf = MLPClassifier(**{**FULL_BATCH, "max_epochs": 2})
    with pytest.raises(ValueError, match="(?i)sample.weight"):
        clf.fit(X, y, sample_weight=-np.ones(len(y)))
    with pytest.raises(ValueError, match="(?i)sample.weight"):
        clf.fit(X, y, sample_weight=np.zeros(len(y)))
    with pytest.raises(ValueError):
        clf.fit(X, y, sample_weight=np.ones(len(y) + 1))


@pytest.mark.parametrize("Est", [MLPClassifier, MLPRegressor])
def test_k_partial_fits_equal_fit_with_k_epochs(data, Est):
    X, y, _ = data
    target = y if Est is MLPClassifier else X @ [1.0, -1.0, 0.5]
    params = {**FULL_BATCH, "batch_size": 8}
    inc = Est(**params)
    extra = {"classes": [0, 1]} if Est is MLPClassifier else {}
    for _ in range(4):
        inc.partial_fit(X, target, **extra)
    ref = Est(**{**params, "max_epochs": 4}).fit(X, target)
    assert inc.n_iter_ == 4 and [r["epoch"] for r in inc.history_] == [1, 2, 3, 4]
    _assert_same_params(inc, ref, atol=0)
    np.testing.assert_array_equal(inc.predict(X), ref.predict(X))


def test_partial_fit_classes_rules(data):
    X, y, _ = data
    with pytest.raises(ValueError, match="classes must be passed"):
        MLPClassifier(**FULL_BATCH).partial_fit(X, y)
    clf = MLPClassifier(**FULL_BATCH).partial_fit(X[y == 0], y[y == 0], classes=[0, 1, 2])
    np.testing.assert_array_equal(clf.classes_, [0, 1, 2])
    assert clf.predict_proba(X).shape == (40, 3)
    clf.partial_fit(X, y)  # classes may be omitted later
    with pytest.raises(ValueError, match="not the same"):
        clf.partial_fit(X, y, classes=[0, 1])
    with pytest.raises(ValueError, match="not in classes_"):
        clf.partial_fit(X, y + 5)
    with pytest.raises(ValueError, match="features"):
        clf.partial_fit(X[:, :2], y)


def test_partial_fit_after_pickling_continues(data):
    X, y, _ = data
    clf = MLPClassifier(**FULL_BATCH).partial_fit(X, y, classes=[0, 1])
    restored = pickle.loads(pickle.dumps(clf))
    assert not hasattr(restored, "optimizer_")
    restored.partial_fit(X, y)
    assert restored.n_iter_ == 2
    assert _differ(restored, clf, atol=1e-6)


def test_warm_start_continues_from_the_current_weights(data):
    X, y, _ = data
    params = {**FULL_BATCH, "max_epochs": 5}
    warm = MLPClassifier(**params, warm_start=True).fit(X, y)
    first = [p.copy() for p in _params(warm)]
    warm.fit(X, y)
    assert warm.n_iter_ == 10 and len(warm.history_) == 10
    assert warm.history_[-1]["epoch"] == 10
    # Continuing from the weights: not the same as a fresh fit, and the loss keeps falling.
    fresh = MLPClassifier(**params).fit(X, y)
    assert _differ(warm, fresh)
    assert warm.history_[-1]["train_loss"] < warm.history_[4]["train_loss"]
    # The first fit of a warm-start estimator is an ordinary fit.
    cold = MLPClassifier(**params, warm_start=False).fit(X, y)
    np.testing.assert_allclose(first[0], _params(cold)[0])
    assert MLPClassifier(**params).fit(X, y).fit(X, y).n_iter_ == 5  # no warm start
    with pytest.raises(ValueError, match="hidden_layer_sizes"):
        warm.set_params(hidden_layer_sizes=(4,)).fit(X, y)


def test_device_accepts_torch_device_and_survives_clone(data):
    X, y, _ = data
    clf = MLPClassifier(**{**FULL_BATCH, "max_epochs": 2, "device": torch.device("cpu")})
    copy = clone(clf)
    assert copy.get_params()["device"] == torch.device("cpu")
    assert isinstance(copy.get_params()["device"], torch.device)
    copy.fit(X, y)
    assert copy.device_ == "cpu"
    assert pickle.loads(pickle.dumps(copy)).predict(X).shape == (40,)


@pytest.mark.parametrize("device", ["tpu", "gpu0", "cuda:7", "cpux", "meta"])
def test_unknown_device_is_rejected_at_fit_start(data, device):
    X, y, _ = data
    if device == "cuda:7":
        if torch.cuda.device_count() > 7:
            pytest.skip("this machine has eight GPUs")
    with pytest.raises(ValueError, match="device="):
        MLPClassifier(**{**FULL_BATCH, "device": device}).fit(X, y)


def test_device_type_is_validated(data):
    X, y, _ = data
    with pytest.raises(InvalidParameterError, match="'device' parameter"):
        MLPClassifier(device=0).fit(X, y)
    with pytest.raises(TypeError, match="device must be"):
        resolve_device(0)


def test_auto_device_prefers_cuda_then_mps(monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    monkeypatch.setattr(torch.backends.mps, "is_available", lambda: False)
    assert resolve_device("auto") == "cpu"
    monkeypatch.setattr(torch.backends.mps, "is_available", lambda: True)
    assert resolve_device("auto") == "mps"
    assert resolve_device("mps") == "mps"
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    assert resolve_device("auto") == "cuda"
    monkeypatch.setattr(torch.backends.mps, "is_available", lambda: False)
    with pytest.raises(ValueError, match="MPS is not available"):
        resolve_device("mps")


def test_cuda_index_beyond_visible_gpus_is_rejected(monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 2)
    assert resolve_device("cuda:1") == "cuda:1"
    assert resolve_device(torch.device("cuda", 0)) == "cuda:0"
    with pytest.raises(ValueError, match="2 CUDA device"):
        resolve_device("cuda:7")


@pytest.mark.parametrize("optimizer", ["sgd", "SGD", torch.optim.SGD])
def test_optimizer_by_name_or_class_with_kwargs(data, optimizer):
    X, y, _ = data
    clf = MLPClassifier(**{**FULL_BATCH, "max_epochs": 3}, optimizer=optimizer,
                        optimizer_kwargs={"momentum": 0.9, "nesterov": True})
    clf.fit(X, y)
    assert type(clf.optimizer_) is torch.optim.SGD
    group = clf.optimizer_.param_groups[0]
    assert group["momentum"] == 0.9 and group["nesterov"]
    assert group["lr"] == 1e-2 and group["weight_decay"] == 1e-4  # lr and alpha
    assert clone(clf).get_params()["optimizer"] is optimizer


def test_default_optimizer_is_adam_and_other_optimizers_train_differently(data):
    X, y, _ = data
    adam = MLPClassifier(**FULL_BATCH).fit(X, y)
    assert type(adam.optimizer_) is torch.optim.Adam
    rms = MLPClassifier(**FULL_BATCH, optimizer="RMSprop").fit(X, y)
    assert type(rms.optimizer_) is torch.optim.RMSprop
    assert _differ(adam, rms)


def test_optimizer_errors_name_the_parameter(data):
    X, y, _ = data
    base = {**FULL_BATCH, "max_epochs": 1}
    with pytest.raises(ValueError, match="optimizer='nope'"):
        MLPClassifier(**base, optimizer="nope").fit(X, y)
    with pytest.raises(InvalidParameterError, match="'optimizer' parameter"):
        MLPClassifier(**base, optimizer=3).fit(X, y)
    with pytest.raises(TypeError, match="optimizer must be"):
        MLPClassifier(**base, optimizer=dict).fit(X, y)
    with pytest.raises(ValueError, match="closure"):
        MLPClassifier(**base, optimizer="lbfgs").fit(X, y)
    with pytest.raises(ValueError, match="'lr' parameter"):
        MLPClassifier(**base, optimizer_kwargs={"lr": 0.1}).fit(X, y)
    with pytest.raises(ValueError, match="'alpha' parameter"):
        MLPClassifier(**base, optimizer_kwargs={"weight_decay": 0.1}).fit(X, y)
    with pytest.raises(TypeError, match="optimizer_kwargs"):
        MLPClassifier(**base, optimizer="sgd", optimizer_kwargs={"betas": (0.9, 0.9)}).fit(X, y)
    with pytest.raises(InvalidParameterError, match="'optimizer_kwargs' parameter"):
        MLPClassifier(**base, optimizer_kwargs=[("momentum", 0.9)]).fit(X, y)


def test_optimizer_without_weight_decay_needs_alpha_zero(data):
    class PlainSGD(torch.optim.Optimizer):
        def __init__(self, params, lr):
            super().__init__(params, {"lr": lr})

        @torch.no_grad()
        def step(self, closure=None):
            for group in self.param_groups:
                for p in group["params"]:
                    if p.grad is not None:
                        p.add_(p.grad, alpha=-group["lr"])

    X, y, _ = data
    base = {**FULL_BATCH, "max_epochs": 2}
    with pytest.raises(ValueError, match="alpha=0"):
        MLPClassifier(**base, optimizer=PlainSGD).fit(X, y)
    clf = MLPClassifier(**base, optimizer=PlainSGD, alpha=0.0).fit(X, y)
    assert isinstance(clf.optimizer_, PlainSGD)
    assert resolve_optimizer(PlainSGD) is PlainSGD
