"""Tests of the callbacks module: its re-exports, the event arguments and older callbacks."""

import numpy as np
import pytest

from skpaper.nn import Callback, MLPClassifier, MLPRegressor

SMALL = dict(hidden_layer_sizes=(8,), max_epochs=3, batch_size=10, lr=1e-2, device="cpu",
             random_state=0)
EVENTS = ("on_train_begin", "on_epoch_begin", "on_batch_begin", "on_grad_computed",
          "on_batch_end", "on_epoch_end", "on_train_end")


@pytest.fixture(scope="module")
def data():
    rng = np.random.RandomState(0)
    X = rng.normal(size=(30, 3))
    return X, (X[:, 0] > 0).astype(int)


def test_callbacks_are_one_set_of_classes_under_every_import_path():
    import skpaper.nn as nn
    from skpaper.nn import _base, _callbacks

    for name in _callbacks.__all__:
        assert getattr(nn, name) is getattr(_callbacks, name) is getattr(_base, name)
        assert getattr(_callbacks, name).__module__ == "skpaper.nn._callbacks"


def test_every_event_method_takes_kwargs():
    import inspect

    from skpaper.nn import _callbacks

    for name in _callbacks.__all__:
        cls = getattr(_callbacks, name)
        for event in EVENTS:
            method = vars(cls).get(event)
            if method is None:
                continue
            kinds = [p.kind for p in inspect.signature(method).parameters.values()]
            assert inspect.Parameter.VAR_KEYWORD in kinds, f"{name}.{event}"


class _Recorder(Callback):
    """Records every event with the keyword arguments it received."""

    def __init__(self):
        self.calls = []

    def _record(self, event, kwargs):
        self.calls.append((event, dict(kwargs)))

    def on_train_begin(self, estimator, **kwargs):
        self._record("on_train_begin", kwargs)

    def on_epoch_begin(self, estimator, epoch, **kwargs):
        self._record("on_epoch_begin", {"epoch": epoch, **kwargs})

    def on_batch_begin(self, estimator, batch, **kwargs):
        self._record("on_batch_begin", kwargs)

    def on_grad_computed(self, estimator, named_parameters, **kwargs):
        self._record("on_grad_computed", kwargs)

    def on_batch_end(self, estimator, step, **kwargs):
        self._record("on_batch_end", kwargs)

    def on_epoch_end(self, estimator, record, **kwargs):
        self._record("on_epoch_end", {"epoch": record["epoch"], **kwargs})

    def on_train_end(self, estimator, **kwargs):
        self._record("on_train_end", kwargs)


def test_events_pass_the_documented_keyword_arguments(data):
    X, y = data
    clf = MLPClassifier(callbacks=[_Recorder()], **SMALL).fit(X, y)
    calls = clf.callbacks_[0].calls
    assert calls[0] == ("on_train_begin", {"partial": False})
    assert calls[-1] == ("on_train_end", {"partial": False})
    # 30 rows in batches of 10: three batches per epoch, each with the current epoch.
    batch_events = [(e, kw["epoch"]) for e, kw in calls
                    if e in ("on_batch_begin", "on_grad_computed", "on_batch_end")]
    assert batch_events == [(e, epoch) for epoch in (1, 2, 3) for _ in range(3)
                            for e in ("on_batch_begin", "on_grad_computed", "on_batch_end")]
    assert [kw for e, kw in calls if e == "on_epoch_end"] == [{"epoch": k} for k in (1, 2, 3)]
    clf.partial_fit(X, y)
    calls = clf.callbacks_[0].calls
    assert ("on_train_begin", {"partial": True}) in calls
    assert calls[-1] == ("on_train_end", {"partial": True})


class _OldStyle(Callback):
    """A callback written before events took ``**kwargs``, with its own argument names."""

    def on_train_begin(self, estimator):
        self.epochs, self.batches, self.losses = 0, 0, []

    def on_batch_end(self, estimator, step):
        self.batches += 1

    def on_epoch_end(self, est, logs):  # the record went by position: any name works
        self.epochs += 1
        self.losses.append(logs["train_loss"])
        return self.epochs >= 2

    def on_train_end(self, estimator):
        self.done = True


class _NoBase:
    """A duck-typed callback that does not derive from Callback."""

    def __init__(self):
        self.n = 0

    def on_grad_computed(self, estimator, named_parameters):
        self.n += len(named_parameters)


def test_callbacks_without_kwargs_still_work(data):
    X, y = data
    reg = MLPRegressor(callbacks=[_OldStyle(), _NoBase()], **{**SMALL, "max_epochs": 5})
    reg.fit(X, y.astype(float))
    old, duck = reg.callbacks_[:2]
    assert old.epochs == 2 and reg.n_iter_ == 2  # its stop signal still counts
    assert old.batches == 6 and old.done
    assert old.losses == [r["train_loss"] for r in reg.history_]
    assert duck.n == 6 * 4  # four parameter tensors per step, six steps


def test_callback_that_requires_an_unknown_argument_fails_loudly(data):
    class NeedsMore(Callback):
        def on_epoch_begin(self, estimator, epoch, missing):
            pass

    X, y = data
    with pytest.raises(TypeError, match="missing"):
        MLPClassifier(callbacks=[NeedsMore()], **SMALL).fit(X, y)
