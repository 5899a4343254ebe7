"""Thin base class for torch models wrapped as scikit-learn estimators.

Each paper overrides :meth:`BaseTorchEstimator._build_module` and, when its
training is not plain mini-batch gradient descent, :meth:`_train_epoch` or the
whole :meth:`_fit_loop`. The base takes care of seeding, devices, the epoch
loop, history, callbacks, inference in float64 and device-independent pickling.
"""

import contextlib
import copy
import functools
import inspect
import threading
from numbers import Integral, Real

import numpy as np
import torch
from sklearn.base import BaseEstimator
from sklearn.utils import check_random_state
from tqdm.auto import tqdm

from ..utils._sklearn import Interval, StrOptions

__all__ = [
    "BaseTorchEstimator",
    "Callback",
    "EarlyStopping",
    "HalveOnPlateau",
    "local_torch_rng",
    "resolve_device",
]

_DTYPES = {"float32": torch.float32, "float64": torch.float64}

# Depth of nested local-RNG blocks in this thread (fit may call predict, a meta-estimator
# may fit a torch estimator): only the outermost block forks and restores.
_LOCAL_RNG = threading.local()


def _in_local_rng():
    return getattr(_LOCAL_RNG, "depth", 0) > 0


def _derive_seed(seed, stream):
    """A seed for ``stream`` (an int) independent of the other streams of ``seed``."""
    return int(np.random.SeedSequence([int(seed), int(stream)]).generate_state(1)[0])


@contextlib.contextmanager
def local_torch_rng(seed=None):
    """Run a block on a private copy of torch's global RNGs (CPU and every CUDA device).

    Dropout layers and other torch ops without a ``generator`` argument draw from the
    global generators; inside this block they draw from a fork, seeded with ``seed``
    when given, and the global states are restored on exit. Nested blocks share the
    outermost fork.
    """
    if _in_local_rng():
        if seed is not None:
            torch.manual_seed(seed)
        yield
        return
    devices = list(range(torch.cuda.device_count())) if torch.cuda.is_available() else []
    with torch.random.fork_rng(devices=devices):
        _LOCAL_RNG.depth = 1
        try:
            if seed is not None:
                torch.manual_seed(seed)
            yield
        finally:
            _LOCAL_RNG.depth = 0


def _with_local_rng(method, is_fit):
    """Wrap a public method of a torch estimator in :func:`local_torch_rng`.

    ``fit``-like methods are seeded by :meth:`BaseTorchEstimator._init_torch_state`
    (from ``random_state``); the other methods from the fitted seed, so that repeated
    calls on a fitted estimator are reproducible too.
    """

    @functools.wraps(method)
    def wrapper(self, *args, **kwargs):
        if _in_local_rng():
            return method(self, *args, **kwargs)
        seed = getattr(self, "_init_seed", None)
        seed = None if is_fit or seed is None else _derive_seed(seed, 2)
        with local_torch_rng(seed):
            return method(self, *args, **kwargs)

    wrapper._skpaper_local_rng = True
    return wrapper


def resolve_device(device):
    """Turn ``"auto"`` into ``"cuda"`` when a GPU is visible, else ``"cpu"``.

    Raises
    ------
    ValueError
        If ``device`` asks for CUDA on a machine without it.
    """
    if device == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    if str(device).startswith("cuda") and not torch.cuda.is_available():
        raise ValueError(f"device={device!r} was requested but CUDA is not available.")
    return str(device)


class Callback:
    """Base class of training callbacks (all hooks optional).

    ``on_epoch_end`` may return ``True`` to stop training after that epoch.
    """

    def on_train_begin(self, estimator):
        """Called once before the first epoch."""

    def on_epoch_end(self, estimator, record):
        """Called after each epoch with that epoch's history record."""

    def on_train_end(self, estimator):
        """Called once after the last epoch."""


class EarlyStopping(Callback):
    """Stop when ``monitor`` has not improved by ``tol`` for ``patience`` epochs.

    Parameters
    ----------
    monitor : str, default="train_loss"
        Key of the history record to watch (lower is better).
    patience : int, default=10
    tol : float, default=1e-4
    """

    def __init__(self, monitor="train_loss", patience=10, tol=1e-4):
        self.monitor = monitor
        self.patience = patience
        self.tol = tol

    def on_train_begin(self, estimator):
        self._best = np.inf
        self._wait = 0

    def on_epoch_end(self, estimator, record):
        value = record[self.monitor]
        if value < self._best - self.tol:
            self._best = value
            self._wait = 0
        else:
            self._wait += 1
        return self._wait >= self.patience


class HalveOnPlateau(Callback):
    """Halve the learning rate and restore the best weights when ``monitor`` plateaus.

    After ``patience`` epochs without an improvement of ``monitor`` (lower is better),
    the optimizer's learning rates are multiplied by ``factor`` and the module goes back
    to its best weights; at the end of training the best weights are restored too.

    Parameters
    ----------
    monitor : str, default="train_loss"
    patience : int, default=50
    factor : float, default=0.5
    """

    def __init__(self, monitor="train_loss", patience=50, factor=0.5):
        self.monitor = monitor
        self.patience = patience
        self.factor = factor

    def on_train_begin(self, estimator):
        self._best = np.inf
        self._best_state = None
        self._wait = 0

    def on_epoch_end(self, estimator, record):
        value = record[self.monitor]
        if value < self._best:
            self._best = value
            self._best_state = copy.deepcopy(estimator.module_.state_dict())
            self._wait = 0
            return False
        self._wait += 1
        if self._wait >= self.patience:
            for group in estimator.optimizer_.param_groups:
                group["lr"] *= self.factor
            estimator.module_.load_state_dict(self._best_state)
            self._wait = 0
        return False

    def on_train_end(self, estimator):
        if self._best_state is not None:
            estimator.module_.load_state_dict(self._best_state)


class BaseTorchEstimator(BaseEstimator):
    """Base class for skpaper's torch estimators.

    Subclasses list every parameter in their own ``__init__`` (scikit-learn
    reads parameters from the signature) and implement
    :meth:`_build_module`. Training uses a local :class:`torch.Generator`
    derived from ``random_state``; weights are initialised inside
    :func:`torch.random.fork_rng`, and every public method of a subclass (``fit``,
    ``predict``, ...) runs inside :func:`local_torch_rng`, so dropout masks are seeded
    from ``random_state`` and the global RNG state is left untouched.

    Parameters
    ----------
    max_epochs : int, default=100
        Number of passes over the training data.
    batch_size : int, default=128
        Mini-batch size (clipped to the number of samples).
    lr : float, default=1e-3
        Learning rate of the Adam optimizer.
    device : str, default="auto"
        ``"auto"`` uses CUDA when available, else the CPU.
    random_state : int, RandomState instance or None, default=None
        Seeds weight initialisation and batch shuffling.
    verbose : int, default=0
        Show a tqdm progress bar over epochs when > 0 (off when not a TTY).
    callbacks : list of Callback or None, default=None
        Objects with ``on_train_begin``, ``on_epoch_end`` and ``on_train_end``.
    inference_dtype : {"float32", "float64"}, default="float32"
        Precision of the module after training. ``"float64"`` makes predictions
        independent of batch composition (float32 matmuls are not).

    Attributes
    ----------
    module_ : torch.nn.Module
        The trained network (on ``device_``).
    device_ : str
        The device actually used.
    history_ : list of dict
        One record per epoch (``epoch``, ``train_loss``, and what hooks add).
    n_iter_ : int
        Number of epochs run.
    """

    def __init_subclass__(cls, **kwargs):
        # Every public method runs on a forked torch RNG, so that dropout and other
        # generator-less torch randomness is seeded from ``random_state`` and never
        # changes the global state.
        for name, value in list(vars(cls).items()):
            if (name.startswith("_") or not inspect.isfunction(value)
                    or getattr(value, "_skpaper_local_rng", False)):
                continue
            setattr(cls, name, _with_local_rng(value, is_fit=name.startswith("fit")
                                               or name == "partial_fit"))
        super().__init_subclass__(**kwargs)

    _parameter_constraints = {
        "max_epochs": [Interval(Integral, 1, None, closed="left")],
        "batch_size": [Interval(Integral, 1, None, closed="left")],
        "lr": [Interval(Real, 0, None, closed="neither")],
        "device": [str],
        "random_state": ["random_state"],
        "verbose": ["verbose"],
        "callbacks": [list, None],
        "inference_dtype": [StrOptions(set(_DTYPES))],
    }

    #: Names of fitted attributes holding ``nn.Module`` objects; they are
    #: pickled as CPU state dicts and rebuilt by :meth:`_rebuild_module`.
    _torch_modules = ("module_",)

    def __init__(
        self,
        *,
        max_epochs=100,
        batch_size=128,
        lr=1e-3,
        device="auto",
        random_state=None,
        verbose=0,
        callbacks=None,
        inference_dtype="float32",
    ):
        self.max_epochs = max_epochs
        self.batch_size = batch_size
        self.lr = lr
        self.device = device
        self.random_state = random_state
        self.verbose = verbose
        self.callbacks = callbacks
        self.inference_dtype = inference_dtype

    # ------------------------------------------------------------------ hooks
    def _build_module(self):
        """Return a fresh ``nn.Module`` built from hyper-parameters and fitted shapes.

        It must depend only on parameters and fitted attributes set before
        training (``n_features_in_``, ``classes_``...), so that unpickling can
        rebuild it.
        """
        raise NotImplementedError(f"{type(self).__name__} must implement _build_module.")

    def _compute_loss(self, output, target):
        """Loss of one batch; override or implement ``_train_epoch`` instead."""
        raise NotImplementedError(f"{type(self).__name__} must implement _compute_loss.")

    def _build_optimizer(self, module):
        return torch.optim.Adam(module.parameters(), lr=self.lr)

    def _rebuild_module(self, name):
        """Rebuild the module stored under attribute ``name`` (for unpickling)."""
        if name != "module_":
            raise ValueError(f"{type(self).__name__} does not know how to rebuild {name!r}.")
        return self._build_module()

    # ------------------------------------------------------------- machinery
    def _init_torch_state(self):
        """Resolve the device and derive the local seeds; call at the start of fit."""
        self.device_ = resolve_device(self.device)
        rng = check_random_state(self.random_state)
        self._init_seed = int(rng.randint(2**31 - 1))
        self._generator = torch.Generator().manual_seed(int(rng.randint(2**31 - 1)))
        if _in_local_rng():
            # Generator-less draws (dropout masks) during this fit come from the fork
            # opened around the public method, seeded from random_state.
            torch.manual_seed(_derive_seed(self._init_seed, 1))
        return rng

    def _make_module(self, factory=None):
        """Build a module with seeded weights, without touching the global RNG."""
        factory = self._build_module if factory is None else factory
        devices = [torch.cuda.current_device()] if torch.cuda.is_available() else []
        with torch.random.fork_rng(devices=devices):
            torch.manual_seed(self._init_seed)
            module = factory()
        return module.to(self.device_)

    def _to_tensor(self, array, dtype=torch.float32):
        # torch cannot wrap read-only buffers (sklearn passes memmaps): copy those.
        array = np.asarray(array)
        if not array.flags.writeable:
            array = array.copy()
        if (dtype in (torch.float32, torch.float16, torch.bfloat16) and array.dtype.kind == "f"
                and array.itemsize > dtype.itemsize and array.size):
            top = float(np.abs(array).max())
            if top > torch.finfo(dtype).max:
                raise ValueError(
                    f"{type(self).__name__} got values up to {top:.3g}, beyond the range of "
                    f"its {str(dtype).replace('torch.', '')} network; rescale the input.")
        return torch.as_tensor(array, dtype=dtype, device=self.device_)

    def _iter_batches(self, n_samples, shuffle=True):
        batch_size = min(int(self.batch_size), n_samples)
        if shuffle:
            order = torch.randperm(n_samples, generator=self._generator)
        else:
            order = torch.arange(n_samples)
        for start in range(0, n_samples, batch_size):
            yield order[start : start + batch_size]

    def _train_epoch(self, tensors, optimizer):
        """One pass of mini-batch gradient descent; returns the epoch record.

        ``tensors`` is a tuple ``(inputs, target)`` of tensors on ``device_``.
        """
        inputs, target = tensors
        self.module_.train()
        total, count = 0.0, 0
        for idx in self._iter_batches(inputs.shape[0]):
            idx = idx.to(inputs.device)
            optimizer.zero_grad()
            loss = self._compute_loss(self.module_(inputs[idx]), target[idx])
            loss.backward()
            optimizer.step()
            total += float(loss.detach()) * len(idx)
            count += len(idx)
        return {"train_loss": total / count}

    def _fit_loop(self, tensors):
        """Build module and optimizer, then run epochs with callbacks and history."""
        self.module_ = self._make_module()
        self.optimizer_ = self._build_optimizer(self.module_)
        self.history_ = []
        callbacks = list(self.callbacks or [])
        for cb in callbacks:
            cb.on_train_begin(self)
        epochs = tqdm(range(int(self.max_epochs)), disable=None if self.verbose else True,
                      desc=type(self).__name__, leave=False)
        for epoch in epochs:
            record = {"epoch": epoch + 1, **self._train_epoch(tensors, self.optimizer_)}
            self.history_.append(record)
            stop = False
            for cb in callbacks:
                stop = bool(cb.on_epoch_end(self, record)) or stop
            if stop:
                break
        for cb in callbacks:
            cb.on_train_end(self)
        self.n_iter_ = len(self.history_)
        self._finalize_modules()
        return self

    def _finalize_modules(self):
        """Cast trained modules to ``inference_dtype`` and put them in eval mode."""
        dtype = _DTYPES[self.inference_dtype]
        for name in self._torch_modules:
            module = getattr(self, name, None)
            if module is not None:
                setattr(self, name, module.to(dtype=dtype).eval())

    @torch.no_grad()
    def _predict_module(self, X, module=None, batch_size=None):
        """Run ``module`` (default ``module_``) on ``X`` in batches; return a numpy array."""
        module = self.module_ if module is None else module
        dtype = next(module.parameters()).dtype
        batch_size = int(batch_size or max(self.batch_size, 1024))
        outputs = []
        for start in range(0, X.shape[0], batch_size):
            xb = self._to_tensor(X[start : start + batch_size], dtype=dtype)
            outputs.append(module(xb).cpu())
        out = torch.cat(outputs).numpy()
        if out.dtype.kind == "f" and not np.all(np.isfinite(out)):
            raise ValueError(
                f"{type(self).__name__} gives non-finite network outputs (largest |input| "
                f"{float(np.abs(X).max()):.3g}); rescale the input, or the network diverged "
                "in training.")
        return out

    # -------------------------------------------------------------- pickling
    def __getstate__(self):
        state = super().__getstate__()
        state = dict(state)
        state.pop("optimizer_", None)  # optimizer state is tied to live parameters
        state.pop("_generator", None)
        for name in self._torch_modules:
            module = state.get(name)
            if isinstance(module, torch.nn.Module):
                state[name] = {
                    "__skpaper_state_dict__": {
                        k: v.detach().cpu().clone() for k, v in module.state_dict().items()
                    },
                    "dtype": str(next(module.parameters()).dtype).replace("torch.", ""),
                }
        return state

    def __setstate__(self, state):
        packed = {
            name: state.pop(name)
            for name in self._torch_modules
            if isinstance(state.get(name), dict) and "__skpaper_state_dict__" in state[name]
        }
        super().__setstate__(state)
        if packed and "device_" in state:
            # A model trained on a GPU still loads on a CPU-only machine.
            if str(self.device_).startswith("cuda") and not torch.cuda.is_available():
                self.device_ = "cpu"
        for name, payload in packed.items():
            module = self._rebuild_module(name)
            module = module.to(dtype=_DTYPES[payload["dtype"]])
            module.load_state_dict(payload["__skpaper_state_dict__"])
            setattr(self, name, module.to(self.device_).eval())

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        device = str(self.device)
        tags.non_deterministic = device.startswith("cuda") or (
            device == "auto" and torch.cuda.is_available()
        )
        return tags


def clone_module(module):
    """Deep copy of a module (for teachers, EMA copies and frozen references)."""
    return copy.deepcopy(module)
