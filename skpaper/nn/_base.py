"""Thin base class for torch models wrapped as scikit-learn estimators.

Each paper overrides :meth:`BaseTorchEstimator._build_module` and, when its
training is not plain mini-batch gradient descent, the batch-level hooks
(:meth:`~BaseTorchEstimator._train_batches`, :meth:`~BaseTorchEstimator._get_loss`,
:meth:`~BaseTorchEstimator._process_gradients`, :meth:`~BaseTorchEstimator._train_step`)
in the manner of skorch's ``train_step`` / ``get_loss``. The base owns the one
optimisation loop (``zero_grad``, ``backward``, ``step``), seeding, devices, the
epoch loop, history, callbacks and their events, an optional validation split,
inference in float64 and device-independent pickling.
"""

import contextlib
import copy
import functools
import inspect
import threading
from numbers import Integral, Real

import numpy as np
import torch
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin
from sklearn.preprocessing import LabelEncoder
from sklearn.utils import check_random_state
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted
from torch.overrides import TorchFunctionMode
from tqdm.auto import tqdm

from ..utils._docstring import Substitution, torch_parameter_docs
from ..utils._sklearn import Interval, StrOptions, _fit_context, validate_data

__all__ = [
    "BaseTorchEstimator",
    "BaseTorchState",
    "Callback",
    "Checkpoint",
    "EarlyStopping",
    "GradNormClipping",
    "HalveOnPlateau",
    "LRScheduler",
    "TorchClassifierMixin",
    "TorchRegressorMixin",
    "ValidationSplit",
    "local_torch_rng",
    "optimizer_step",
    "resolve_device",
]

_DTYPES = {"float32": torch.float32, "float64": torch.float64}

#: The dtype torch estimators build their modules and train in, whatever the default dtype.
_TRAIN_DTYPE = torch.float32

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


# Factories whose floating result follows torch's default dtype. ``_ALWAYS_FLOAT`` give a
# floating tensor whatever their arguments (the dtype is passed before the call, so random
# draws are made in the estimator's dtype); ``_MAYBE_FLOAT`` give one only for some
# arguments (``arange(0.5)``, ``full(..., 1.0)``, ``tensor([1.0])``), and are called again
# with the dtype when they did; ``_FROM_DATA`` keep the dtype of arrays and tensors.
_ALWAYS_FLOAT = frozenset({
    torch.empty, torch.empty_strided, torch.empty_permuted, torch.zeros, torch.ones,
    torch.rand, torch.randn, torch.eye, torch.linspace, torch.logspace, torch.scalar_tensor,
    torch.bartlett_window, torch.blackman_window, torch.hamming_window, torch.hann_window,
    torch.kaiser_window,
})
_MAYBE_FLOAT = frozenset({torch.arange, torch.full, torch.range})
_FROM_DATA = frozenset({torch.tensor, torch.as_tensor, torch.asarray})

_DTYPE_STATE = threading.local()


class _DefaultDtypeMode(TorchFunctionMode):
    """Make torch's factories create floating tensors in ``dtype`` in this thread.

    A torch function mode is thread-local and scoped: the process's default dtype
    (``torch.set_default_dtype``) is neither read by other code through it nor changed.
    Used by :func:`_own_dtype` while a torch estimator's public method runs.
    """

    def __init__(self, dtype):
        super().__init__()
        self.dtype = dtype

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = dict(kwargs or {})
        if kwargs.get("dtype") is not None or "out" in kwargs:
            return func(*args, **kwargs)
        own = {**kwargs, "dtype": self.dtype}
        if func in _ALWAYS_FLOAT or (func is torch.normal and not any(
                isinstance(a, torch.Tensor) for a in (*args, *kwargs.values()))):
            return func(*args, **own)
        if func in _MAYBE_FLOAT or (func in _FROM_DATA and args and not isinstance(
                args[0], (torch.Tensor, np.ndarray, np.generic))):
            result = func(*args, **kwargs)
            if isinstance(result, torch.Tensor) and result.dtype == torch.get_default_dtype():
                return func(*args, **own)
            return result
        return func(*args, **kwargs)


@contextlib.contextmanager
def _own_dtype(dtype=torch.float32):
    """Create torch's floating tensors in ``dtype`` within a block, whatever the default.

    Modules built and tensors made inside the block (``nn.Linear``, ``torch.zeros``,
    ``torch.randn``, ``torch.tensor([0.5])``, ...) take ``dtype`` when no dtype is
    given, instead of the process's default dtype (which
    ``torch.set_default_dtype(torch.float64)`` changes); arrays and tensors keep
    their own dtype. Nothing global is set: the block pushes a thread-local torch
    function mode, and only when the default differs from ``dtype`` (so it costs
    nothing under the float32 default). Every public method of a skpaper torch
    estimator runs inside it.
    """
    current = getattr(_DTYPE_STATE, "dtype", None)
    if current == dtype or (current is None and torch.get_default_dtype() == dtype):
        yield
        return
    _DTYPE_STATE.dtype = dtype
    try:
        with _DefaultDtypeMode(dtype):
            yield
    finally:
        _DTYPE_STATE.dtype = current


def _with_local_rng(method, is_fit):
    """Wrap a public method of a torch estimator in :func:`local_torch_rng` and its dtype.

    New floating tensors and modules are made in ``_TRAIN_DTYPE`` whatever torch's
    default dtype (see :func:`_own_dtype`).

    ``fit``-like methods are seeded by :meth:`BaseTorchEstimator._init_torch_state`
    (from ``random_state``); the other methods from the fitted seed, so that repeated
    calls on a fitted estimator are reproducible too.
    """

    @functools.wraps(method)
    def wrapper(self, *args, **kwargs):
        with _own_dtype(_TRAIN_DTYPE):
            if _in_local_rng():
                return method(self, *args, **kwargs)
            seed = getattr(self, "_init_seed", None)
            seed = None if is_fit or seed is None else _derive_seed(seed, 2)
            with local_torch_rng(seed):
                return method(self, *args, **kwargs)

    wrapper._skpaper_local_rng = True
    return wrapper


def _wrap_public_methods(cls):
    """Run every public method defined in ``cls`` itself inside :func:`local_torch_rng`.

    Applied to each subclass of :class:`BaseTorchState` and, as a class
    decorator, to the mixins whose methods torch estimators inherit.
    """
    for name, value in list(vars(cls).items()):
        if (name.startswith("_") or not inspect.isfunction(value)
                or getattr(value, "_skpaper_local_rng", False)):
            continue
        setattr(cls, name, _with_local_rng(value, is_fit=name.startswith("fit")
                                           or name == "partial_fit"))
    return cls


def resolve_device(device):
    """Turn ``"auto"`` into ``"cuda"`` when a GPU is visible, else ``"cpu"``.

    Parameters
    ----------
    device : str
        ``"auto"``, or a torch device name such as ``"cpu"`` or ``"cuda:0"``.

    Returns
    -------
    device : str
        The device name to use.

    Raises
    ------
    ValueError
        If ``device`` asks for CUDA on a machine without it.

    Examples
    --------
    >>> from skpaper.nn import resolve_device
    >>> resolve_device("cpu")
    'cpu'
    >>> resolve_device("auto") in ("cpu", "cuda")
    True
    """
    if device == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    if str(device).startswith("cuda") and not torch.cuda.is_available():
        raise ValueError(f"device={device!r} was requested but CUDA is not available.")
    return str(device)


class Callback:
    """Base class of training callbacks (every hook optional).

    The estimator calls the hooks of its fitted copies in ``callbacks_`` (the
    objects passed as ``callbacks`` are deep-copied at the start of each fit and
    never changed), in this order::

        on_train_begin
            on_epoch_begin
                on_batch_begin, on_grad_computed, on_batch_end   (per batch)
            on_epoch_end
        on_train_end

    ``on_epoch_end`` may return ``True`` to stop training after that epoch.
    Estimators whose training is not mini-batch gradient descent (a closed-form
    fit, a full-batch solver) fire only the train and epoch events.

    Examples
    --------
    >>> from skpaper.nn import Callback, MLPRegressor
    >>> class CountEpochs(Callback):
    ...     def on_train_begin(self, estimator):
    ...         self.n_epochs = 0
    ...     def on_epoch_end(self, estimator, record):
    ...         self.n_epochs += 1
    >>> X, y = [[0.0], [1.0], [2.0], [3.0]], [0.0, 1.0, 2.0, 3.0]
    >>> reg = MLPRegressor(hidden_layer_sizes=(4,), max_epochs=3,
    ...                    callbacks=[CountEpochs()], random_state=0).fit(X, y)
    >>> reg.callbacks_[0].n_epochs
    3
    """

    def on_train_begin(self, estimator):
        """Run once before the first epoch, after the module and optimizer exist.

        Parameters
        ----------
        estimator : BaseTorchEstimator
            The estimator being trained.
        """

    def on_epoch_begin(self, estimator, epoch):
        """Run before each epoch.

        Parameters
        ----------
        estimator : BaseTorchEstimator
            The estimator being trained.
        epoch : int
            The epoch about to run, counting from 1.
        """

    def on_batch_begin(self, estimator, batch):
        """Run before each optimisation step.

        Parameters
        ----------
        estimator : BaseTorchEstimator
            The estimator being trained.
        batch : object
            The batch of that step, as the estimator's training loop yields it.
        """

    def on_grad_computed(self, estimator, named_parameters):
        """Run after ``backward`` and before the optimizer step.

        A callback may change the gradients in place (clip them, for example).

        Parameters
        ----------
        estimator : BaseTorchEstimator
            The estimator being trained.
        named_parameters : list of (str, torch.nn.Parameter)
            ``(name, parameter)`` of the trained module.
        """

    def on_batch_end(self, estimator, step):
        """Run after each optimizer step.

        Parameters
        ----------
        estimator : BaseTorchEstimator
            The estimator being trained.
        step : dict
            The batch's scalar metrics (``train_loss`` and what hooks add).
        """

    def on_epoch_end(self, estimator, record):
        """Run after each epoch.

        Parameters
        ----------
        estimator : BaseTorchEstimator
            The estimator being trained.
        record : dict
            That epoch's history record (``epoch``, ``train_loss``, ...).

        Returns
        -------
        stop : bool or None
            ``True`` stops training after this epoch.
        """

    def on_train_end(self, estimator):
        """Run once after the last epoch.

        Parameters
        ----------
        estimator : BaseTorchEstimator
            The estimator being trained.
        """


def _check_monitor(record, monitor, owner):
    if monitor not in record:
        raise ValueError(
            f"{owner} monitors {monitor!r}, which the history record does not hold "
            f"(it has {sorted(record)}); add a ValidationSplit callback for 'valid_loss'.")
    return float(record[monitor])


class EarlyStopping(Callback):
    """Stop when ``monitor`` has not improved by ``tol`` for ``patience`` epochs.

    Parameters
    ----------
    monitor : str, default="train_loss"
        Key of the history record to watch (lower is better); ``"valid_loss"``
        needs a :class:`ValidationSplit` callback.
    patience : int, default=10
        Number of epochs without improvement before training stops.
    tol : float, default=1e-4
        Smallest decrease of ``monitor`` that counts as an improvement.
    restore_best : bool, default=False
        Load the weights of the best epoch when training ends.

    Examples
    --------
    >>> from skpaper.nn import EarlyStopping, MLPClassifier, ValidationSplit
    >>> clf = MLPClassifier(callbacks=[ValidationSplit(0.2),
    ...                                EarlyStopping("valid_loss", patience=3)])
    """

    def __init__(self, monitor="train_loss", patience=10, tol=1e-4, restore_best=False):
        self.monitor = monitor
        self.patience = patience
        self.tol = tol
        self.restore_best = restore_best

    def on_train_begin(self, estimator):
        """Reset the best value and the count of epochs without improvement.

        Parameters
        ----------
        estimator : BaseTorchEstimator
            The estimator being trained.
        """
        self._best = np.inf
        self._wait = 0
        self._checkpoint = Checkpoint(self.monitor) if self.restore_best else None
        if self._checkpoint is not None:
            self._checkpoint.on_train_begin(estimator)

    def on_epoch_end(self, estimator, record):
        """Count the epochs without improvement of ``monitor``.

        Parameters
        ----------
        estimator : BaseTorchEstimator
            The estimator being trained.
        record : dict
            That epoch's history record.

        Returns
        -------
        stop : bool
            ``True`` once ``patience`` epochs have passed without improvement.
        """
        value = _check_monitor(record, self.monitor, "EarlyStopping")
        if self._checkpoint is not None:
            self._checkpoint.on_epoch_end(estimator, record)
        if value < self._best - self.tol:
            self._best = value
            self._wait = 0
        else:
            self._wait += 1
        return self._wait >= self.patience

    def on_train_end(self, estimator):
        """Load the best weights when ``restore_best`` is set.

        Parameters
        ----------
        estimator : BaseTorchEstimator
            The estimator being trained.
        """
        if self._checkpoint is not None:
            self._checkpoint.on_train_end(estimator)
            self._checkpoint = None


class Checkpoint(Callback):
    """Keep the weights of the best epoch in memory and load them when training ends.

    The copy lives on the fitted callback only while training runs; it is
    dropped after it is loaded, so a fitted estimator does not pickle it.

    Parameters
    ----------
    monitor : str, default="train_loss"
        Key of the history record to watch (lower is better).
    load_best : bool, default=True
        Load the best weights at the end of training.

    Attributes
    ----------
    best_epoch_ : int
        Epoch (from 1) of the best ``monitor`` value.
    best_value_ : float
        That value.

    Examples
    --------
    >>> from skpaper.nn import Checkpoint, MLPRegressor
    >>> X, y = [[0.0], [1.0], [2.0], [3.0]], [0.0, 1.0, 2.0, 3.0]
    >>> reg = MLPRegressor(hidden_layer_sizes=(4,), max_epochs=5,
    ...                    callbacks=[Checkpoint()], random_state=0).fit(X, y)
    >>> 1 <= reg.callbacks_[0].best_epoch_ <= 5
    True
    """

    def __init__(self, monitor="train_loss", load_best=True):
        self.monitor = monitor
        self.load_best = load_best

    def on_train_begin(self, estimator):
        """Forget the best weights of an earlier fit.

        Parameters
        ----------
        estimator : BaseTorchEstimator
            The estimator being trained.
        """
        self.best_value_ = np.inf
        self.best_epoch_ = 0
        self._best_state = None

    def on_epoch_end(self, estimator, record):
        """Copy the weights when ``monitor`` reaches a new best value.

        Parameters
        ----------
        estimator : BaseTorchEstimator
            The estimator being trained.
        record : dict
            That epoch's history record.

        Returns
        -------
        stop : bool
            Always ``False``: a checkpoint never stops training.
        """
        value = _check_monitor(record, self.monitor, "Checkpoint")
        if value < self.best_value_:
            self.best_value_ = value
            self.best_epoch_ = int(record["epoch"])
            self._best_state = copy.deepcopy(estimator.module_.state_dict())
        return False

    def restore(self, estimator):
        """Load the best weights seen so far into ``estimator.module_``.

        Parameters
        ----------
        estimator : BaseTorchEstimator
            The estimator being trained; nothing is loaded before the first
            epoch has ended.
        """
        if self._best_state is not None:
            estimator.module_.load_state_dict(self._best_state)

    def on_train_end(self, estimator):
        """Load the best weights when ``load_best`` is set, then drop the copy.

        Parameters
        ----------
        estimator : BaseTorchEstimator
            The estimator being trained.
        """
        if self.load_best:
            self.restore(estimator)
        self._best_state = None


def _resolve_policy(policy):
    if isinstance(policy, str):
        cls = getattr(torch.optim.lr_scheduler, policy, None)
        if not (inspect.isclass(cls) and issubclass(cls, torch.optim.lr_scheduler.LRScheduler)
                or policy == "ReduceLROnPlateau"):
            raise ValueError(f"policy={policy!r} is not a scheduler of torch.optim.lr_scheduler.")
        return cls
    if callable(policy):
        return policy
    raise TypeError(f"policy must be a scheduler name or a callable, got {type(policy).__name__}.")


class LRScheduler(Callback):
    """Drive a :mod:`torch.optim.lr_scheduler` scheduler from the training loop.

    Parameters
    ----------
    policy : str or callable, default="ReduceLROnPlateau"
        Name of a scheduler class in :mod:`torch.optim.lr_scheduler`, or a
        callable ``policy(optimizer, **kwargs)`` returning a scheduler (a
        module-level function or :func:`functools.partial` keeps the estimator
        picklable).
    step_every : {"epoch", "batch"}, default="epoch"
        When to call the scheduler's ``step``.
    monitor : str, default="train_loss"
        History key passed to ``step`` by :class:`~torch.optim.lr_scheduler.ReduceLROnPlateau`.
    **kwargs
        Passed to the policy.

    Attributes
    ----------
    scheduler_ : torch.optim.lr_scheduler.LRScheduler
        The live scheduler (dropped when training ends).

    Examples
    --------
    >>> from skpaper.nn import LRScheduler, MLPRegressor
    >>> reg = MLPRegressor(callbacks=[LRScheduler("StepLR", step_size=10, gamma=0.5)])
    """

    def __init__(self, policy="ReduceLROnPlateau", step_every="epoch", monitor="train_loss",
                 **kwargs):
        if step_every not in ("epoch", "batch"):
            raise ValueError(f"step_every must be 'epoch' or 'batch', got {step_every!r}.")
        self.policy = policy
        self.step_every = step_every
        self.monitor = monitor
        self.kwargs = kwargs

    def _plateau(self):
        return isinstance(self.scheduler_, torch.optim.lr_scheduler.ReduceLROnPlateau)

    def on_train_begin(self, estimator):
        """Build the scheduler on the estimator's optimizer.

        Parameters
        ----------
        estimator : BaseTorchEstimator
            The estimator being trained.
        """
        self.scheduler_ = _resolve_policy(self.policy)(estimator.optimizer_, **self.kwargs)

    def on_batch_end(self, estimator, step):
        """Step the scheduler when ``step_every="batch"``.

        Parameters
        ----------
        estimator : BaseTorchEstimator
            The estimator being trained.
        step : dict
            The batch's scalar metrics.
        """
        if self.step_every == "batch" and not self._plateau():
            self.scheduler_.step()

    def on_epoch_end(self, estimator, record):
        """Step the scheduler when ``step_every="epoch"``.

        Parameters
        ----------
        estimator : BaseTorchEstimator
            The estimator being trained.
        record : dict
            That epoch's history record.

        Returns
        -------
        stop : bool
            Always ``False``.
        """
        if self.step_every == "epoch":
            if self._plateau():
                self.scheduler_.step(_check_monitor(record, self.monitor, "LRScheduler"))
            else:
                self.scheduler_.step()
        return False

    def on_train_end(self, estimator):
        """Drop the scheduler.

        Parameters
        ----------
        estimator : BaseTorchEstimator
            The estimator being trained.
        """
        self.scheduler_ = None


class GradNormClipping(Callback):
    """Clip the gradient norm of the trained module before each optimizer step.

    Parameters
    ----------
    max_norm : float
        Largest total gradient norm (see :func:`torch.nn.utils.clip_grad_norm_`).
    norm_type : float, default=2.0
        Order of the norm.

    Examples
    --------
    >>> from skpaper.nn import GradNormClipping, MLPClassifier
    >>> clf = MLPClassifier(callbacks=[GradNormClipping(max_norm=1.0)])
    """

    def __init__(self, max_norm, norm_type=2.0):
        self.max_norm = max_norm
        self.norm_type = norm_type

    def on_grad_computed(self, estimator, named_parameters):
        """Clip the gradients in place.

        Parameters
        ----------
        estimator : BaseTorchEstimator
            The estimator being trained.
        named_parameters : list of (str, torch.nn.Parameter)
            ``(name, parameter)`` of the trained module.
        """
        torch.nn.utils.clip_grad_norm_([p for _, p in named_parameters], self.max_norm,
                                       norm_type=self.norm_type)


class HalveOnPlateau(Callback):
    """Halve the learning rate and go back to the best weights when ``monitor`` plateaus.

    A :class:`~torch.optim.lr_scheduler.ReduceLROnPlateau` (no threshold) plus a
    :class:`Checkpoint`: after ``patience`` epochs without a decrease of
    ``monitor``, the learning rates are multiplied by ``factor`` and the module
    goes back to its best weights; at the end of training the best weights are
    loaded too.

    Parameters
    ----------
    monitor : str, default="train_loss"
        History key to watch (lower is better).
    patience : int, default=50
        Epochs without improvement before each reduction.
    factor : float, default=0.5
        Multiplier of the learning rates at each reduction.

    Examples
    --------
    >>> from skpaper.nn import HalveOnPlateau, MLPRegressor
    >>> reg = MLPRegressor(callbacks=[HalveOnPlateau(patience=20)])
    """

    def __init__(self, monitor="train_loss", patience=50, factor=0.5):
        self.monitor = monitor
        self.patience = patience
        self.factor = factor

    def on_train_begin(self, estimator):
        """Build the plateau scheduler and the checkpoint.

        Parameters
        ----------
        estimator : BaseTorchEstimator
            The estimator being trained.
        """
        if not (isinstance(self.patience, Integral) and self.patience >= 1):
            raise ValueError(f"HalveOnPlateau patience must be an integer >= 1, got "
                             f"{self.patience!r}.")
        # ReduceLROnPlateau reduces once more than `patience` bad epochs have passed.
        self._scheduler = torch.optim.lr_scheduler.ReduceLROnPlateau(
            estimator.optimizer_, mode="min", factor=self.factor,
            patience=int(self.patience) - 1, threshold=0.0, eps=0.0)
        self._checkpoint = Checkpoint(self.monitor)
        self._checkpoint.on_train_begin(estimator)

    def on_epoch_end(self, estimator, record):
        """Step the scheduler; after a reduction, go back to the best weights.

        Parameters
        ----------
        estimator : BaseTorchEstimator
            The estimator being trained.
        record : dict
            That epoch's history record.

        Returns
        -------
        stop : bool
            Always ``False``.
        """
        value = _check_monitor(record, self.monitor, "HalveOnPlateau")
        self._checkpoint.on_epoch_end(estimator, record)
        before = [group["lr"] for group in estimator.optimizer_.param_groups]
        self._scheduler.step(value)
        after = [group["lr"] for group in estimator.optimizer_.param_groups]
        if after != before:
            self._checkpoint.restore(estimator)
        return False

    def on_train_end(self, estimator):
        """Load the best weights and drop the scheduler and checkpoint.

        Parameters
        ----------
        estimator : BaseTorchEstimator
            The estimator being trained.
        """
        self._checkpoint.on_train_end(estimator)
        self._scheduler = self._checkpoint = None


class ValidationSplit(Callback):
    """Hold out a fraction of the training rows and record ``valid_loss`` each epoch.

    The split is drawn from the estimator's ``random_state`` (a stream of its
    own, so the training batches of the remaining rows are shuffled as usual).
    Combine it with :class:`EarlyStopping` or :class:`Checkpoint` on
    ``"valid_loss"``. The validation loss is the estimator's training loss
    on the held-out rows, in eval mode; random draws it makes (augmentations,
    noise) come from a stream of their own, the same at every epoch, so they
    neither vary between epochs nor change the training batches. Only
    estimators whose training data are row-aligned arrays support it; the
    others raise a ``ValueError``.

    Parameters
    ----------
    fraction : float, default=0.1
        Share of the rows held out, in (0, 1).

    Examples
    --------
    >>> from skpaper.nn import Checkpoint, MLPClassifier, ValidationSplit
    >>> clf = MLPClassifier(callbacks=[ValidationSplit(0.2), Checkpoint("valid_loss")])
    """

    def __init__(self, fraction=0.1):
        self.fraction = fraction

    def split(self, estimator, n_rows):
        """Return the training and validation rows.

        Parameters
        ----------
        estimator : BaseTorchEstimator
            The estimator being trained; its ``random_state`` seeds the split.
        n_rows : int
            Number of training rows.

        Returns
        -------
        train_rows : ndarray of int
            Sorted indices of the rows kept for training.
        valid_rows : ndarray of int
            Sorted indices of the held-out rows.

        Raises
        ------
        ValueError
            If ``fraction`` is not in (0, 1), or leaves no rows on one side.
        """
        if not (isinstance(self.fraction, Real) and 0 < self.fraction < 1):
            raise ValueError(f"ValidationSplit fraction must be in (0, 1), got {self.fraction!r}.")
        n_valid = int(round(float(self.fraction) * n_rows))
        if n_valid < 1 or n_valid >= n_rows:
            raise ValueError(
                f"ValidationSplit(fraction={self.fraction}) leaves no training or no "
                f"validation rows out of {n_rows}.")
        order = np.random.default_rng(_derive_seed(estimator._init_seed, 3)).permutation(n_rows)
        return np.sort(order[n_valid:]), np.sort(order[:n_valid])


def _step_metrics(step):
    """Scalar metrics of a training step as floats (``train_loss`` defaults to ``loss``)."""
    metrics = {"train_loss": step.get("train_loss", step["loss"])}
    metrics.update((k, v) for k, v in step.items()
                   if k not in ("loss", "weight", "train_loss") and not k.startswith("_"))
    return {k: float(v.detach()) if isinstance(v, torch.Tensor) else float(v)
            for k, v in metrics.items()}


class BaseTorchState(BaseEstimator):
    """Torch state shared by every skpaper torch estimator, without a training loop.

    The base of estimators that hold torch modules but do not train them by
    gradient descent over epochs (a test-time adapter around a fitted source
    model, for instance), and of :class:`BaseTorchEstimator`. It owns devices,
    seeding, module construction, batched inference and device-independent
    pickling. Weights are initialised inside :func:`torch.random.fork_rng`, and
    every public method of a subclass (``fit``, ``predict``, ...) runs inside
    :func:`local_torch_rng`, so dropout masks are seeded from ``random_state`` and
    the global RNG state is left untouched.

    Subclasses define the parameters ``device`` and ``random_state`` (and
    ``inference_dtype``, ``batch_size`` where they use them) in their own
    ``__init__``.

    Examples
    --------
    >>> from skpaper.nn import BaseTorchState
    >>> from skpaper.adaptation import TestTimeAdapter
    >>> issubclass(TestTimeAdapter, BaseTorchState)
    True
    """

    def __init_subclass__(cls, **kwargs):
        # Every public method runs on a forked torch RNG, so that dropout and other
        # generator-less torch randomness is seeded from ``random_state`` and never
        # changes the global state.
        _wrap_public_methods(cls)
        super().__init_subclass__(**kwargs)

    #: Names of fitted attributes holding ``nn.Module`` objects; they are
    #: pickled as CPU state dicts and rebuilt by :meth:`_rebuild_module`.
    _torch_modules = ("module_",)

    def _build_module(self):
        """Return a fresh ``nn.Module`` built from hyper-parameters and fitted shapes.

        It must depend only on parameters and fitted attributes set before
        training (``n_features_in_``, ``classes_``...), so that unpickling can
        rebuild it.
        """
        raise NotImplementedError(f"{type(self).__name__} must implement _build_module.")

    def _rebuild_module(self, name):
        """Rebuild the module stored under attribute ``name`` (for unpickling)."""
        if name != "module_":
            raise ValueError(f"{type(self).__name__} does not know how to rebuild {name!r}.")
        return self._build_module()

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

    def _finalize_modules(self):
        """Cast trained modules to ``inference_dtype`` and put them in eval mode."""
        dtype = _DTYPES[getattr(self, "inference_dtype", "float32")]
        for name in self._torch_modules:
            module = getattr(self, name, None)
            if module is not None:
                setattr(self, name, module.to(dtype=dtype).eval())

    @torch.no_grad()
    def _predict_module(self, X, module=None, batch_size=None):
        """Run ``module`` (default ``module_``) on ``X`` in batches; return a numpy array."""
        module = self.module_ if module is None else module
        dtype = next(module.parameters()).dtype
        batch_size = int(batch_size or max(getattr(self, "batch_size", 1024), 1024))
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
            with _own_dtype(_TRAIN_DTYPE):
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


@Substitution(**torch_parameter_docs())
class BaseTorchEstimator(BaseTorchState):
    """Base class for skpaper's torch estimators.

    Adds the training loop to :class:`BaseTorchState`. Subclasses list every
    parameter in their own ``__init__`` (scikit-learn reads parameters from the
    signature) and implement :meth:`_build_module`, and either
    :meth:`_compute_loss` or the batch-level hooks (:meth:`_get_loss`,
    :meth:`_train_batches`, :meth:`_process_gradients`, :meth:`_train_step`).
    Training uses a local :class:`torch.Generator` derived from ``random_state``.

    Parameters
    ----------
    {torch_parameters}

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
    callbacks_ : list of Callback
        The fitted copies of ``callbacks``, then the estimator's own.

    Examples
    --------
    >>> from skpaper.nn import BaseTorchEstimator, MLPRegressor
    >>> reg = MLPRegressor(hidden_layer_sizes=(4,), max_epochs=2, random_state=0)
    >>> isinstance(reg, BaseTorchEstimator)
    True
    >>> reg.fit([[0.0], [1.0], [2.0]], [0.0, 1.0, 2.0]).n_iter_
    2
    """

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

    def _compute_loss(self, output, target):
        """Loss of one batch from the module's output; or override :meth:`_get_loss`."""
        raise NotImplementedError(f"{type(self).__name__} must implement _compute_loss.")

    def _build_optimizer(self, module):
        return torch.optim.Adam(module.parameters(), lr=self.lr)

    def _iter_batches(self, n_samples, shuffle=True):
        batch_size = min(int(self.batch_size), n_samples)
        if shuffle:
            order = torch.randperm(n_samples, generator=self._generator)
        else:
            order = torch.arange(n_samples)
        for start in range(0, n_samples, batch_size):
            yield order[start : start + batch_size]

    def _train_batches(self, tensors, shuffle=True):
        """Yield the training batches of one epoch.

        The default takes the rows of the tensors in ``tensors`` (all indexed by
        their first dimension), shuffled with the estimator's generator unless
        ``shuffle=False`` (the validation pass), and yields tuples of row slices.
        Override for data that are not row-aligned tensors (lists of graphs, one
        full graph).
        """
        n_rows = tensors[0].shape[0]
        for idx in self._iter_batches(n_rows, shuffle=shuffle):
            idx = idx.to(tensors[0].device)
            yield tuple(t[idx] for t in tensors)

    def _get_loss(self, batch):
        """Loss of one batch, in training mode.

        Returns the loss tensor to minimise, or a dict with that tensor under
        ``"loss"`` and optionally ``"weight"`` (how much the batch counts in the
        epoch means; default its number of rows), ``"train_loss"`` (the value
        recorded in the history when it is not the minimised loss) and further
        scalar metrics, averaged over the epoch under their own names. The default
        is ``_compute_loss(module_(inputs), target)`` on ``batch = (inputs, target)``.
        """
        inputs, target = batch
        return self._compute_loss(self.module_(inputs), target)

    def _process_gradients(self):
        """Adjust gradients after ``backward`` and before the optimizer step (default: nothing)."""

    def _train_step(self, batch, optimizer):
        """One optimisation step on ``batch``; returns the step's scalar metrics.

        ``zero_grad``, :meth:`_get_loss`, ``backward``, :meth:`_process_gradients`,
        the ``on_grad_computed`` event, then ``optimizer.step()``. Subclasses that
        must act after the step (re-normalise a decoder, reset dead codes) call
        ``super()._train_step`` and then do so.
        """
        optimizer.zero_grad()
        step = self._loss_dict(self._get_loss(batch), batch)
        step["loss"].backward()
        self._process_gradients()
        self._notify("on_grad_computed", named_parameters=list(self.module_.named_parameters()))
        optimizer.step()
        return step

    @staticmethod
    def _loss_dict(result, batch):
        step = dict(result) if isinstance(result, dict) else {"loss": result}
        if "weight" not in step:
            first = batch[0] if isinstance(batch, (tuple, list)) else batch
            step["weight"] = len(first)
        return step

    def _train_epoch(self, tensors, optimizer):
        """One pass over :meth:`_train_batches`; returns the epoch's history record.

        The record holds ``train_loss`` and every further metric of the steps,
        each averaged with the steps' weights, plus what :meth:`_end_epoch` adds.
        """
        self.module_.train()
        sums, total_weight = {}, 0.0
        for batch in self._train_batches(tensors):
            self._notify("on_batch_begin", batch=batch)
            step = self._train_step(batch, optimizer)
            metrics = _step_metrics(step)
            weight = float(step["weight"])
            for key, value in metrics.items():
                sums[key] = sums.get(key, 0.0) + value * weight
            total_weight += weight
            self._notify("on_batch_end", step=metrics)
        record = {key: value / max(total_weight, 1e-300) for key, value in sums.items()}
        record.update(self._end_epoch(tensors, optimizer) or {})
        return record

    def _end_epoch(self, tensors, optimizer):
        """Work at the end of an epoch's steps (e.g. resampling); returns extra record keys."""
        return {}

    def _fit_tensors(self, X, target, target_dtype):
        """Seed, then train on the row-aligned arrays ``X`` (float32) and ``target``.

        The training step of :class:`TorchClassifierMixin` and
        :class:`TorchRegressorMixin` after they have encoded the target;
        subclasses validate before and add fitted attributes after ``super()``.
        """
        self._init_torch_state()
        self._fit_loop((self._to_tensor(X), self._to_tensor(target, target_dtype)))
        return self

    def _extra_callbacks(self):
        """Callbacks the estimator adds after the user's (e.g. its own stopping rule)."""
        return []

    def _notify(self, event, **kwargs):
        for callback in getattr(self, "callbacks_", ()):
            hook = getattr(callback, event, None)
            if hook is not None:
                hook(self, **kwargs)

    def _split_tensors(self, tensors, rows):
        """The training data restricted to ``rows`` (for :class:`ValidationSplit`).

        The default indexes every tensor of ``tensors`` by its first dimension;
        estimators with other training data raise.
        """
        if not all(isinstance(t, torch.Tensor) for t in tensors):
            raise ValueError(f"{type(self).__name__} does not support ValidationSplit: its "
                             "training data are not row-aligned tensors.")
        index = torch.as_tensor(rows, device=tensors[0].device)
        return tuple(t[index] for t in tensors)

    @torch.no_grad()
    def _validation_loss(self, tensors):
        """Mean :meth:`_get_loss` over the held-out rows, in eval mode, without gradients.

        A :meth:`_get_loss` that draws random numbers (augmentations, noise, masks)
        draws them here from a validation generator and a forked global RNG, both
        reseeded from ``random_state`` at every call: each epoch's ``valid_loss``
        sees the same draws, so the values differ only through the weights, and
        the training generator's stream is not consumed by validation. A
        :meth:`_get_loss` that updates estimator state (running statistics, usage
        counts) must skip that when ``module_.training`` is False.
        """
        was_training, train_generator = self.module_.training, self._generator
        devices = [torch.cuda.current_device()] if torch.cuda.is_available() else []
        self.module_.eval()
        self._generator = torch.Generator().manual_seed(_derive_seed(self._init_seed, 4))
        total, weight = 0.0, 0.0
        try:
            with torch.random.fork_rng(devices=devices):
                torch.manual_seed(_derive_seed(self._init_seed, 5))
                for batch in self._train_batches(tensors, shuffle=False):
                    step = self._loss_dict(self._get_loss(batch), batch)
                    value = step.get("train_loss", step["loss"])
                    total += float(value) * float(step["weight"])
                    weight += float(step["weight"])
        finally:
            self._generator = train_generator
            self.module_.train(was_training)
        return total / max(weight, 1e-300)

    def _fit_loop(self, tensors):
        """Build module and optimizer, then run epochs with callbacks and history.

        The user's callbacks are deep-copied into ``callbacks_`` (followed by
        :meth:`_extra_callbacks`), so ``callbacks`` is never changed by a fit.
        """
        self.module_ = self._make_module()
        self.optimizer_ = self._build_optimizer(self.module_)
        self.history_ = []
        self.callbacks_ = [copy.deepcopy(cb) for cb in (self.callbacks or [])]
        self.callbacks_ += list(self._extra_callbacks())
        valid = None
        splitters = [cb for cb in self.callbacks_ if isinstance(cb, ValidationSplit)]
        if len(splitters) > 1:
            raise ValueError("callbacks holds more than one ValidationSplit.")
        if splitters:
            n_rows = len(tensors[0])
            train_rows, valid_rows = splitters[0].split(self, n_rows)
            valid = self._split_tensors(tensors, valid_rows)
            tensors = self._split_tensors(tensors, train_rows)
        self._notify("on_train_begin")
        epochs = self._progress(range(self._n_epochs()))
        for epoch in epochs:
            self._notify("on_epoch_begin", epoch=epoch + 1)
            record = {"epoch": epoch + 1, **self._train_epoch(tensors, self.optimizer_)}
            if valid is not None:
                record["valid_loss"] = self._validation_loss(valid)
            self.history_.append(record)
            if not epochs.disable:
                epochs.set_postfix({k: record[k] for k in ("train_loss", "valid_loss")
                                    if k in record}, refresh=False)
            stop = False
            for cb in self.callbacks_:
                hook = getattr(cb, "on_epoch_end", None)
                if hook is not None:
                    stop = bool(hook(self, record)) or stop
            if stop:
                break
        epochs.close()
        self._notify("on_train_end")
        self.n_iter_ = len(self.history_)
        self._finalize_modules()
        return self

    def _n_epochs(self):
        """Number of epochs of one fit (``max_epochs``; a multi-round fit may run more)."""
        return int(self.max_epochs)

    def _progress(self, iterable):
        """A tqdm bar over ``iterable`` when ``verbose > 0``, else a disabled one.

        The bar is shown whenever the user asks for it, not only on a terminal
        (tqdm's own default hides it when stderr is not a TTY, which would
        silence ``verbose`` in logs and some notebooks), and its final state,
        with the last losses, stays on screen.
        """
        return tqdm(iterable, disable=not getattr(self, "verbose", 0),
                    desc=type(self).__name__, leave=True)

    def _optimizer_step(self, optimizer, loss):
        """``zero_grad``, ``backward`` and ``step`` for an auxiliary optimisation.

        For training stages outside the main loop (pretraining a feature
        network, a second module): see :func:`optimizer_step`.
        """
        optimizer_step(optimizer, loss)


def optimizer_step(optimizer, loss):
    """One gradient step of ``optimizer`` on ``loss``: ``zero_grad``, ``backward``, ``step``.

    The one place outside :meth:`BaseTorchEstimator._train_step` where skpaper's
    training code computes gradients; used by auxiliary training stages and by
    training functions that have no estimator. It fires no callback events.

    Parameters
    ----------
    optimizer : torch.optim.Optimizer
        The optimizer to step.
    loss : torch.Tensor
        Scalar loss of the parameters ``optimizer`` updates.
    """
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()


def _softmax_rows(logits):
    """Row-wise softmax of a numpy array of logits, in the array's precision."""
    logits = logits - logits.max(axis=1, keepdims=True)
    proba = np.exp(logits)
    return proba / proba.sum(axis=1, keepdims=True)


@_wrap_public_methods
class TorchClassifierMixin(ClassifierMixin):
    """``fit``, ``predict_proba`` and ``predict`` of torch classifiers on tabular rows.

    Mix in before a :class:`BaseTorchEstimator` subclass whose module maps
    ``n_features_in_`` inputs to ``_n_outputs`` logits. ``fit`` validates ``X``,
    encodes the labels into ``classes_`` and calls
    ``_fit_tensors(X, codes, torch.long)``; training minimises the
    cross-entropy of the logits; predictions take the softmax of the module's
    outputs.
    """

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y):
        """Fit the classifier.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training rows.
        y : array-like of shape (n_samples,)
            Class labels.

        Returns
        -------
        self : object
            The fitted classifier.
        """
        X, y = validate_data(self, X, y, dtype=np.float64)
        check_classification_targets(y)
        encoder = LabelEncoder().fit(y)
        self.classes_ = encoder.classes_
        self._n_outputs = len(self.classes_)
        return self._fit_tensors(X, encoder.transform(y), torch.long)

    def _compute_loss(self, output, target):
        return torch.nn.functional.cross_entropy(output, target)

    def predict_proba(self, X):
        """Return the class probabilities.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Rows to classify.

        Returns
        -------
        proba : ndarray of shape (n_samples, n_classes)
            Softmax of the module's outputs, columns in the order of ``classes_``.
        """
        check_is_fitted(self)
        X = validate_data(self, X, reset=False, dtype=np.float64)
        return _softmax_rows(self._predict_module(X))

    def predict(self, X):
        """Return the predicted class labels.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Rows to classify.

        Returns
        -------
        y : ndarray of shape (n_samples,)
            The most probable class of each row.
        """
        check_is_fitted(self)
        return self.classes_[np.argmax(self.predict_proba(X), axis=1)]


@_wrap_public_methods
class TorchRegressorMixin(RegressorMixin):
    """``fit`` and ``predict`` of torch regressors on tabular rows, single or multi-output.

    Mix in before a :class:`BaseTorchEstimator` subclass whose module maps
    ``n_features_in_`` inputs to ``_n_outputs`` values. ``fit`` validates
    ``(X, y)``, reshapes ``y`` to columns (standardised per column when the class
    sets ``_scale_targets = True``; predictions are mapped back) and calls
    ``_fit_tensors(X, target, torch.float32)``; training minimises the squared
    error.
    """

    #: Standardise each target column in ``fit`` and undo it in ``predict``.
    _scale_targets = False

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y):
        """Fit the regressor.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training rows.
        y : array-like of shape (n_samples,) or (n_samples, n_targets)
            Numeric targets.

        Returns
        -------
        self : object
            The fitted regressor.
        """
        X, y = validate_data(self, X, y, dtype=np.float64, multi_output=True, y_numeric=True)
        if np.asarray(y).dtype.kind not in "biuf":
            raise ValueError(f"y must be numeric (a regression target), got dtype {y.dtype}.")
        self._y_ndim = y.ndim
        target = y.reshape(len(y), -1)
        if self._scale_targets:
            self._y_mean = target.mean(axis=0)
            scale = target.std(axis=0)
            self._y_scale = np.where(scale > 0, scale, 1.0)
            target = (target - self._y_mean) / self._y_scale
        self._n_outputs = target.shape[1]
        return self._fit_tensors(X, target, torch.float32)

    def _compute_loss(self, output, target):
        return torch.nn.functional.mse_loss(output, target)

    def predict(self, X):
        """Return the predicted targets.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Rows to predict.

        Returns
        -------
        y : ndarray of shape (n_samples,) or (n_samples, n_targets)
            Predictions, shaped like the training targets.
        """
        check_is_fitted(self)
        X = validate_data(self, X, reset=False, dtype=np.float64)
        out = self._predict_module(X)
        if self._scale_targets:
            out = out * self._y_scale + self._y_mean
        return out.ravel() if self._y_ndim == 1 else out

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.multi_output = True
        return tags


def clone_module(module):
    """Deep copy of a module (for teachers, EMA copies and frozen references)."""
    return copy.deepcopy(module)
