"""Tests of the torch base estimator through the reference MLPs."""

import copy
import pickle

import numpy as np
import pytest
import torch
from sklearn.base import clone
from sklearn.datasets import make_classification, make_regression
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from skpaper.nn import Callback, EarlyStopping, MLPClassifier, MLPRegressor, resolve_device

SMALL = dict(hidden_layer_sizes=(16,), max_epochs=30, lr=1e-2, device="cpu")


@pytest.fixture(scope="module")
def clf_data():
    return make_classification(n_samples=200, n_features=6, n_informative=4, n_classes=3,
                               random_state=0)


def test_mlp_classifier_pickle_round_trip_predicts_identically(clf_data):
    X, y = clf_data
    clf = MLPClassifier(random_state=0, **SMALL).fit(X, y)
    restored = pickle.loads(pickle.dumps(clf))
    np.testing.assert_array_equal(restored.predict_proba(X), clf.predict_proba(X))
    assert restored.history_ == clf.history_
    assert restored.n_iter_ == clf.n_iter_


def test_pickle_stores_cpu_state_dict_not_live_module(clf_data):
    X, y = clf_data
    clf = MLPClassifier(random_state=0, **SMALL).fit(X, y)
    state = clf.__getstate__()
    assert set(state["module_"]) == {"__skpaper_state_dict__", "dtype"}
    assert all(t.device.type == "cpu" for t in state["module_"]["__skpaper_state_dict__"].values())
    assert "optimizer_" not in state


def test_gpu_trained_pickle_loads_on_cpu_only_machine(clf_data, monkeypatch):
    X, y = clf_data
    clf = MLPClassifier(random_state=0, **SMALL).fit(X, y)
    expected = clf.predict(X)
    clf.device_ = "cuda"  # as if trained on a GPU; the state dict is already on CPU
    payload = pickle.dumps(clf)
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    restored = pickle.loads(payload)
    assert restored.device_ == "cpu"
    np.testing.assert_array_equal(restored.predict(X), expected)


def test_same_random_state_same_model_and_global_rng_untouched(clf_data):
    X, y = clf_data
    torch.manual_seed(123)
    before = torch.random.get_rng_state().clone()
    a = MLPClassifier(random_state=3, **SMALL).fit(X, y)
    b = clone(a).fit(X, y)
    assert torch.equal(torch.random.get_rng_state(), before)
    np.testing.assert_array_equal(a.predict_proba(X), b.predict_proba(X))
    c = MLPClassifier(random_state=4, **SMALL).fit(X, y)
    assert not np.allclose(a.predict_proba(X), c.predict_proba(X))


def test_history_callbacks_and_early_stopping(clf_data):
    X, y = clf_data

    class Recorder(Callback):
        def __init__(self):
            self.events = []

        def on_train_begin(self, estimator):
            self.events.append("begin")

        def on_epoch_end(self, estimator, record):
            self.events.append(record["epoch"])
            return record["epoch"] == 5

        def on_train_end(self, estimator):
            self.events.append("end")

    rec = Recorder()
    clf = MLPClassifier(random_state=0, callbacks=[rec], **SMALL).fit(X, y)
    # The fit works on a copy: the user's callback and parameter are left as given.
    assert rec.events == []
    assert clf.callbacks == [rec]
    fitted = clf.callbacks_[0]
    assert fitted is not rec and fitted.events == ["begin", 1, 2, 3, 4, 5, "end"]
    assert isinstance(clf.callbacks_[-1], EarlyStopping)  # the estimator's own rule, last
    assert clf.n_iter_ == len(clf.history_) == 5
    assert [r["epoch"] for r in clf.history_] == [1, 2, 3, 4, 5]
    assert all(np.isfinite(r["train_loss"]) for r in clf.history_)

    stopper = EarlyStopping(patience=1, tol=1e9)
    clf = MLPClassifier(random_state=0, callbacks=[stopper], **SMALL).fit(X, y)
    assert clf.n_iter_ == 2  # epoch 1 sets the baseline, epoch 2 fails to beat it


def test_training_loss_decreases(clf_data):
    X, y = clf_data
    clf = MLPClassifier(random_state=0, **{**SMALL, "max_epochs": 40}).fit(X, y)
    losses = [r["train_loss"] for r in clf.history_]
    assert losses[-1] < 0.7 * losses[0]


def test_inference_dtype_controls_module_precision(clf_data):
    X, y = clf_data
    c64 = MLPClassifier(random_state=0, **SMALL).fit(X, y)
    c32 = MLPClassifier(random_state=0, inference_dtype="float32", **SMALL).fit(X, y)
    assert next(c64.module_.parameters()).dtype == torch.float64
    assert next(c32.module_.parameters()).dtype == torch.float32
    np.testing.assert_allclose(c64.predict_proba(X), c32.predict_proba(X), atol=1e-5)


def test_mlp_regressor_multi_output_and_pipeline():
    X, y = make_regression(n_samples=150, n_features=5, n_targets=2, noise=0.1, random_state=0)
    y = y / y.std(axis=0)
    pipe = make_pipeline(StandardScaler(), MLPRegressor(random_state=0, **{**SMALL,
                                                                           "max_epochs": 80}))
    pipe.fit(X, y)
    assert pipe.predict(X).shape == (150, 2)
    assert pipe.score(X, y) > 0.8


def test_grid_search_with_two_jobs(clf_data):
    X, y = clf_data
    search = GridSearchCV(
        MLPClassifier(random_state=0, **SMALL),
        {"hidden_layer_sizes": [(8,), (16,)], "lr": [1e-2]},
        cv=2,
        n_jobs=2,
    ).fit(X, y)
    assert search.best_params_["hidden_layer_sizes"] in [(8,), (16,)]
    assert search.best_score_ > 0.5


def test_bad_parameters_raise_naming_the_parameter(clf_data):
    X, y = clf_data
    with pytest.raises(ValueError, match="hidden_layer_sizes"):
        MLPClassifier(hidden_layer_sizes=(0,)).fit(X, y)
    with pytest.raises(ValueError, match="'lr' parameter"):
        MLPClassifier(lr=-1.0).fit(X, y)
    with pytest.raises(ValueError, match="'inference_dtype' parameter"):
        MLPClassifier(inference_dtype="float16").fit(X, y)


def test_resolve_device():
    assert resolve_device("cpu") == "cpu"
    assert resolve_device(torch.device("cpu")) == "cpu"
    assert resolve_device("auto") in ("cpu", "cuda", "mps")
    if not torch.cuda.is_available():
        with pytest.raises(ValueError, match="CUDA is not available"):
            resolve_device("cuda")


@pytest.mark.gpu
def test_mlp_trains_on_gpu_and_pickles_to_cpu(clf_data):
    X, y = clf_data
    clf = MLPClassifier(random_state=0, **{**SMALL, "device": "cuda"}).fit(X, y)
    assert clf.device_ == "cuda"
    assert next(clf.module_.parameters()).is_cuda
    restored = pickle.loads(pickle.dumps(clf))
    np.testing.assert_allclose(restored.predict_proba(X), clf.predict_proba(X), atol=1e-6)


def test_nn_does_not_import_the_language_family():
    # skpaper.language builds on skpaper.nn; the reverse import would be a cycle.
    import subprocess
    import sys

    code = ("import sys, skpaper.nn; "
            "print(any(m.startswith('skpaper.language') for m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.strip()
    assert out == "False"
    import skpaper.nn

    assert "LanguageModel" not in skpaper.nn.__all__
    with pytest.raises(AttributeError):
        skpaper.nn.LanguageModel


def test_halve_on_plateau_restores_best_weights_and_halves_lr(clf_data):
    from skpaper.nn import HalveOnPlateau

    X, y = clf_data

    class Snapshots(Callback):
        def on_train_begin(self, estimator):
            self.states = []

        def on_epoch_end(self, estimator, record):
            self.states.append(copy.deepcopy(estimator.module_.state_dict()))

    cb = HalveOnPlateau(patience=2)
    clf = MLPClassifier(random_state=0, callbacks=[cb, Snapshots()],
                        **{**SMALL, "lr": 5.0, "max_epochs": 12}).fit(X, y)
    # A huge learning rate makes the loss jump around: it was halved at least once.
    assert clf.optimizer_.param_groups[0]["lr"] < 5.0
    losses = [r["train_loss"] for r in clf.history_]
    # The returned module holds the best epoch's weights, not the last epoch's.
    state = clf.callbacks_[1].states[int(np.argmin(losses))]
    assert int(np.argmin(losses)) != len(losses) - 1
    for key, value in clf.module_.state_dict().items():
        np.testing.assert_allclose(value.numpy(), state[key].double().numpy(), rtol=1e-6)
    # No weight copy is left on the user's callback or on the fitted one.
    assert not hasattr(cb, "_checkpoint")
    assert clf.callbacks_[0]._checkpoint is None


def test_halve_on_plateau_matches_the_hand_written_rule(clf_data):
    """ReduceLROnPlateau + Checkpoint give the learning rates of the original rule."""
    from skpaper.nn import HalveOnPlateau

    X, y = clf_data

    class LRs(Callback):
        def on_train_begin(self, estimator):
            self.lrs = []

        def on_epoch_end(self, estimator, record):
            self.lrs.append(estimator.optimizer_.param_groups[0]["lr"])

    clf = MLPClassifier(random_state=0, callbacks=[HalveOnPlateau(patience=2), LRs()],
                        **{**SMALL, "lr": 5.0, "max_epochs": 12}).fit(X, y)
    losses = [r["train_loss"] for r in clf.history_]
    best, wait, lr, expected = np.inf, 0, 5.0, []
    for value in losses:
        if value < best:
            best, wait = value, 0
        else:
            wait += 1
            if wait >= 2:
                lr, wait = lr * 0.5, 0
        expected.append(lr)
    assert clf.callbacks_[1].lrs == expected
    with pytest.raises(ValueError, match="patience"):
        MLPClassifier(callbacks=[HalveOnPlateau(patience=0)], **SMALL).fit(X, y)


def test_fitted_estimator_pickles_no_callback_weights(clf_data):
    from skpaper.nn import Checkpoint, HalveOnPlateau

    X, y = clf_data
    plain = MLPClassifier(random_state=0, **SMALL).fit(X, y)
    with_cbs = MLPClassifier(random_state=0, callbacks=[HalveOnPlateau(patience=2),
                                                        Checkpoint()], **SMALL).fit(X, y)
    n_params = sum(p.numel() for p in plain.module_.parameters())
    # Weight copies would add at least 4 bytes per parameter.
    assert len(pickle.dumps(with_cbs)) < len(pickle.dumps(plain)) + 2 * n_params


def test_validation_split_records_valid_loss_and_stops_early(clf_data):
    from skpaper.nn import ValidationSplit

    X, y = clf_data
    clf = MLPClassifier(random_state=0, callbacks=[
        ValidationSplit(0.25), EarlyStopping("valid_loss", patience=2, restore_best=True)],
        **{**SMALL, "max_epochs": 200, "n_iter_no_change": 1000}).fit(X, y)
    valid = [r["valid_loss"] for r in clf.history_]
    assert all(np.isfinite(valid))
    assert clf.n_iter_ < 200  # stopped on the validation loss, not the epoch budget
    # The held-out rows come from random_state: a second fit repeats the first.
    again = clone(clf).fit(X, y)
    assert [r["valid_loss"] for r in again.history_] == valid
    # Without a ValidationSplit, monitoring valid_loss is a clear error.
    with pytest.raises(ValueError, match="valid_loss"):
        MLPClassifier(callbacks=[EarlyStopping("valid_loss")], **SMALL).fit(X, y)
    with pytest.raises(ValueError, match="fraction"):
        MLPClassifier(callbacks=[ValidationSplit(1.5)], **SMALL).fit(X, y)


def test_grad_norm_clipping_and_lr_scheduler(clf_data):
    from skpaper.nn import GradNormClipping, LRScheduler

    X, y = clf_data

    class GradNorms(Callback):
        def on_train_begin(self, estimator):
            self.norms = []

        def on_grad_computed(self, estimator, named_parameters):
            grads = [p.grad.norm() for _, p in named_parameters if p.grad is not None]
            self.norms.append(float(torch.linalg.vector_norm(torch.stack(grads))))

    clf = MLPClassifier(random_state=0, callbacks=[GradNormClipping(1e-3), GradNorms()],
                        **SMALL).fit(X, y)
    assert max(clf.callbacks_[1].norms) <= 1e-3 * (1 + 1e-4)
    sched = MLPClassifier(random_state=0, callbacks=[LRScheduler("StepLR", step_size=2,
                                                                 gamma=0.1)],
                          **{**SMALL, "max_epochs": 4, "n_iter_no_change": 100}).fit(X, y)
    assert sched.optimizer_.param_groups[0]["lr"] == pytest.approx(SMALL.get("lr", 1e-3) * 0.01)
    assert sched.callbacks_[0].scheduler_ is None
    with pytest.raises(ValueError, match="policy"):
        MLPClassifier(callbacks=[LRScheduler("NoSuchSchedule")], **SMALL).fit(X, y)


class _DropoutRegressor(MLPRegressor):
    """An MLP with dropout before its output, to exercise generator-less randomness."""

    def _build_module(self):
        return torch.nn.Sequential(torch.nn.Dropout(0.5), super()._build_module())


def test_dropout_draws_from_a_fork_seeded_by_random_state():
    X, y = make_regression(n_samples=64, n_features=4, random_state=0)
    torch.manual_seed(7)
    before = torch.random.get_rng_state().clone()
    a = _DropoutRegressor(random_state=0, **SMALL).fit(X, y)
    b = _DropoutRegressor(random_state=0, **SMALL).fit(X, y)
    c = _DropoutRegressor(random_state=1, **SMALL).fit(X, y)
    assert torch.equal(torch.random.get_rng_state(), before)
    np.testing.assert_array_equal(a.predict(X), b.predict(X))
    assert not np.allclose(a.predict(X), c.predict(X))
    # A fit that fails after seeding restores the global state too.
    with pytest.raises(ValueError):
        _DropoutRegressor(random_state=0, **SMALL).fit(X, np.full(len(X), np.nan))
    assert torch.equal(torch.random.get_rng_state(), before)


def test_inputs_beyond_float32_are_rejected_before_training():
    X, y = make_regression(n_samples=32, n_features=3, random_state=0)
    est = MLPRegressor(random_state=0, inference_dtype="float32", **SMALL)
    with pytest.raises(ValueError, match="beyond the range of its float32 network"):
        est.fit(X * 1e300, y)
    est.fit(X, y)
    with pytest.raises(ValueError, match="beyond the range of its float32 network"):
        est.predict(X * 1e300)
    # A float64 network answers such inputs with finite values.
    wide = MLPRegressor(random_state=0, inference_dtype="float64", **SMALL).fit(X, y)
    assert np.all(np.isfinite(wide.predict(X * 1e300)))


def _small(name):
    import skpaper.nn

    laurel = dict(n_blocks=1, width=8, rank=2, device="cpu", max_epochs=3)
    mlp = {**SMALL, "max_epochs": 3}
    params = {"MLPClassifier": mlp, "MLPRegressor": mlp, "LaurelMLPClassifier": laurel,
              "LaurelMLPRegressor": laurel, "LaurelConvNetClassifier": {**laurel, "width": 4}}
    return getattr(skpaper.nn, name)(random_state=0, **params[name])


@pytest.mark.parametrize("name", ["MLPClassifier", "MLPRegressor", "LaurelMLPClassifier",
                                  "LaurelMLPRegressor", "LaurelConvNetClassifier"])
@pytest.mark.parametrize("verbose", [0, 1])
def test_verbose_shows_progress_even_off_a_terminal(clf_data, capsys, name, verbose):
    # Under pytest stderr is not a TTY: the bar must still show when asked for.
    X, y = clf_data
    X = X[:, :4]  # a 2 x 2 image for the convnet
    _small(name).set_params(verbose=verbose).fit(X, y)
    captured = capsys.readouterr()
    assert captured.out == ""
    if verbose:
        assert name in captured.err and "3/3" in captured.err and "train_loss" in captured.err
    else:
        assert captured.err == ""


def test_validation_split_with_restore_best_returns_the_best_validation_epoch(clf_data):
    from skpaper.nn import ValidationSplit

    X, y = clf_data

    class Snapshots(Callback):
        def on_train_begin(self, estimator):
            self.states = []

        def on_epoch_end(self, estimator, record):
            self.states.append(copy.deepcopy(estimator.module_.state_dict()))

    clf = MLPClassifier(random_state=0, callbacks=[
        ValidationSplit(0.3), EarlyStopping("valid_loss", patience=3, restore_best=True),
        Snapshots()], **{**SMALL, "lr": 0.3, "max_epochs": 40, "n_iter_no_change": 1000}
    ).fit(X, y)
    valid = [r["valid_loss"] for r in clf.history_]
    best = int(np.argmin(valid))
    assert best != len(valid) - 1  # a large learning rate: the last epoch is not the best
    state = clf.callbacks_[2].states[best]
    for key, value in clf.module_.state_dict().items():
        np.testing.assert_allclose(value.numpy(), state[key].double().numpy(), rtol=1e-6)
    # The weight copy is dropped once loaded.
    assert clf.callbacks_[1]._checkpoint is None


class _NoisyRegressor(MLPRegressor):
    """An MLP whose loss draws input noise from the estimator's generator and torch's RNG."""

    def _get_loss(self, batch):
        inputs, target = batch
        noise = torch.randn(inputs.shape, generator=self._generator) + torch.randn(inputs.shape)
        return self._compute_loss(self.module_(inputs + 0.1 * noise), target)


def test_validation_loss_draws_from_its_own_reseeded_streams():
    X, y = make_regression(n_samples=64, n_features=4, random_state=0)
    est = _NoisyRegressor(random_state=0, inference_dtype="float32", **SMALL).fit(X, y)
    valid = (est._to_tensor(X[:20]), est._to_tensor(y[:20, None]))
    generator_state = est._generator.get_state()
    global_state = torch.random.get_rng_state()
    first, second = est._validation_loss(valid), est._validation_loss(valid)
    assert first == second  # the same draws at every epoch: values differ only by weights
    assert torch.equal(est._generator.get_state(), generator_state)
    assert torch.equal(torch.random.get_rng_state(), global_state)


def test_fitted_estimator_with_every_callback_pickles_and_refits_identically(clf_data):
    from skpaper.nn import (
        Checkpoint,
        GradNormClipping,
        HalveOnPlateau,
        LRScheduler,
        ValidationSplit,
    )

    X, y = clf_data
    callbacks = [ValidationSplit(0.2), EarlyStopping("valid_loss", patience=3, restore_best=True),
                 LRScheduler("StepLR", step_size=5, gamma=0.5), GradNormClipping(5.0),
                 HalveOnPlateau("valid_loss", patience=4), Checkpoint("valid_loss")]
    given = copy.deepcopy(callbacks)
    clf = MLPClassifier(random_state=0, callbacks=callbacks, **SMALL).fit(X, y)
    # The parameter is left exactly as given: no fitted state lands on the user's objects.
    assert [vars(cb) for cb in clf.callbacks] == [vars(cb) for cb in given]
    restored = pickle.loads(pickle.dumps(clf))
    np.testing.assert_array_equal(restored.predict_proba(X), clf.predict_proba(X))
    assert [type(cb) for cb in restored.callbacks_] == [type(cb) for cb in clf.callbacks_]
    assert restored.callbacks_[-2].best_epoch_ == clf.callbacks_[-2].best_epoch_
    again = clone(restored).fit(X, y)
    assert again.history_ == clf.history_
    np.testing.assert_array_equal(again.predict_proba(X), clf.predict_proba(X))


def test_shared_mixins_give_every_public_method_a_local_rng():
    from skpaper.nn import LaurelConvNetClassifier, LaurelMLPClassifier, LaurelMLPRegressor
    from skpaper.nn._base import BaseTorchEstimator, TorchClassifierMixin, TorchRegressorMixin

    for cls, mixin in [(MLPClassifier, TorchClassifierMixin),
                       (LaurelMLPClassifier, TorchClassifierMixin),
                       (LaurelConvNetClassifier, TorchClassifierMixin),
                       (MLPRegressor, TorchRegressorMixin),
                       (LaurelMLPRegressor, TorchRegressorMixin)]:
        assert issubclass(cls, mixin) and issubclass(cls, BaseTorchEstimator)
        for name in ("fit", "predict") + (("predict_proba",) if mixin is TorchClassifierMixin
                                          else ()):
            assert getattr(getattr(cls, name), "_skpaper_local_rng", False), (cls, name)


@pytest.mark.gpu
def test_validation_split_on_gpu_is_reproducible(clf_data):
    from skpaper.nn import ValidationSplit

    X, y = clf_data
    clf = MLPClassifier(random_state=0, callbacks=[ValidationSplit(0.25)],
                        **{**SMALL, "device": "cuda"}).fit(X, y)
    valid = [r["valid_loss"] for r in clf.history_]
    assert all(np.isfinite(valid))
    np.testing.assert_allclose([r["valid_loss"] for r in clone(clf).fit(X, y).history_],
                               valid, rtol=1e-5)


def test_estimators_on_the_base_take_a_torch_device_and_keep_their_parameters(clf_data):
    from skpaper.adaptation import NormMLPClassifier
    from skpaper.nn import LaurelMLPClassifier

    X, y = clf_data
    laurel = LaurelMLPClassifier(n_blocks=1, width=8, rank=2, max_epochs=2, random_state=0,
                                 device=torch.device("cpu"))
    assert clone(laurel).fit(X, y).device_ == "cpu"
    with pytest.raises(ValueError, match="device="):
        clone(laurel).set_params(device="tpu").fit(X, y)
    # Estimators that do not expose the MLPs' new parameters do not get them.
    assert "optimizer" not in laurel.get_params()
    norm = NormMLPClassifier(hidden_layer_sizes=(8,), max_epochs=2, random_state=0,
                             device="cpu")
    assert not {"optimizer", "optimizer_kwargs", "warm_start"} & set(norm.get_params())
    assert not {"optimizer", "warm_start"} & set(NormMLPClassifier._parameter_constraints)
    assert type(norm.fit(X, y).optimizer_) is torch.optim.Adam


def test_convnet_takes_an_optimizer_with_its_decay_groups():
    from skpaper.datasets import load_digits_split
    from skpaper.nn import LaurelConvNetClassifier

    d = load_digits_split()
    X, y = d.X_train[:120], d.y_train[:120]
    small = dict(n_blocks=2, width=4, rank=2, max_epochs=1, random_state=0, device="cpu")
    default = LaurelConvNetClassifier(**small).fit(X, y)
    assert type(default.optimizer_) is torch.optim.AdamW
    sgd = LaurelConvNetClassifier(**small, optimizer="sgd",
                                  optimizer_kwargs={"momentum": 0.5}).fit(X, y)
    assert type(sgd.optimizer_) is torch.optim.SGD
    assert [g["weight_decay"] for g in sgd.optimizer_.param_groups] == [1e-4, 0.0]
    assert all(g["momentum"] == 0.5 for g in sgd.optimizer_.param_groups)
    with pytest.raises(ValueError, match="'weight_decay' parameter"):
        LaurelConvNetClassifier(**small, optimizer_kwargs={"weight_decay": 0.1}).fit(X, y)
