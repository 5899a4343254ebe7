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
from sklearn.utils import check_random_state
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted
from torch.overrides import TorchFunctionMode
from tqdm.auto import tqdm

from ..utils._docstring import Substitution, torch_parameter_docs
from ..utils._sklearn import (
    Interval,
    StrOptions,
    _check_sample_weight,
    _fit_context,
    validate_data,
)
from ._callbacks import (
    Callback,
    Checkpoint,
    EarlyStopping,
    GradNormClipping,
    HalveOnPlateau,
    LRScheduler,
    ValidationSplit,
)

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
    "resolve_optimizer",
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


_OLD_DEVICE_DOC = ('device : str, default="auto"\n'
                   '    ``"auto"`` uses CUDA when available, else the CPU.')
_DEVICE_DOC = ('device : str or torch.device, default="auto"\n'
               '    A device name (``"cpu"``, ``"cuda"``, ``"cuda:1"``, ``"mps"``) or a\n'
               '    :class:`torch.device`; ``"auto"`` uses CUDA when available, else MPS\n'
               '    where :func:`torch.backends.mps.is_available`, else the CPU. A device\n'
               '    the machine lacks is refused when ``fit`` starts.')


def _torch_docs(**defaults):
    """:func:`torch_parameter_docs` with the ``device`` piece this module's checks describe."""
    pieces = torch_parameter_docs(**defaults)
    return {name: piece.replace(_OLD_DEVICE_DOC, _DEVICE_DOC) for name, piece in pieces.items()}


def _mps_available():
    mps = getattr(torch.backends, "mps", None)
    return bool(mps is not None and mps.is_available())


def resolve_device(device):
    """Check a device and turn ``"auto"`` into the best one available.

    Parameters
    ----------
    device : str or torch.device
        ``"auto"`` (CUDA when a GPU is visible, else Apple's MPS when
        :func:`torch.backends.mps.is_available`, else the CPU), a torch device
        name such as ``"cpu"``, ``"cuda"``, ``"cuda:1"`` or ``"mps"``, or a
        :class:`torch.device`.

    Returns
    -------
    device : str
        The name of the device to use.

    Raises
    ------
    TypeError
        If ``device`` is neither a string nor a :class:`torch.device`.
    ValueError
        If ``device`` is not a torch device name, names a device type skpaper
        does not train on, or asks for a device this machine does not have
        (CUDA without a GPU, a CUDA index beyond the visible GPUs, MPS where
        it is not available).

    Examples
    --------
    >>> import torch
    >>> from skpaper.nn import resolve_device
    >>> resolve_device("cpu")
    'cpu'
    >>> resolve_device(torch.device("cpu"))
    'cpu'
    >>> resolve_device("auto") in ("cpu", "cuda", "mps")
    True
    """
    if isinstance(device, torch.device):
        name = str(device)
    elif isinstance(device, str):
        name = device
    else:
        raise TypeError(
            f"device must be a str or a torch.device, got {type(device).__name__} {device!r}.")
    if name == "auto":
        if torch.cuda.is_available():
            return "cuda"
        return "mps" if _mps_available() else "cpu"
    usage = "use 'auto', 'cpu', 'cuda', 'cuda:<index>' or 'mps'"
    try:
        parsed = torch.device(name)
    except (RuntimeError, ValueError, TypeError):
        raise ValueError(f"device={device!r} is not a torch device name; {usage}.") from None
    if parsed.type == "cpu":
        return str(parsed)
    if parsed.type == "cuda":
        if not torch.cuda.is_available():
            raise ValueError(f"device={device!r} was requested but CUDA is not available.")
        count = torch.cuda.device_count()
        if parsed.index is not None and parsed.index >= count:
            raise ValueError(f"device={device!r} was requested but this machine has {count} "
                             f"CUDA device(s) (indices 0 to {count - 1}).")
        return str(parsed)
    if parsed.type == "mps":
        if not _mps_available():
            raise ValueError(f"device={device!r} was requested but MPS is not available.")
        return str(parsed)
    raise ValueError(f"device={device!r} is a {parsed.type!r} device, on which skpaper's torch "
                     f"estimators do not run; {usage}.")


#: ``torch.optim`` optimizers by lower-case class name (``"adam"``, ``"sgd"``, ...).
def _optimizer_classes():
    return {name.lower(): obj for name, obj in vars(torch.optim).items()
            if inspect.isclass(obj) and issubclass(obj, torch.optim.Optimizer)
            and obj is not torch.optim.Optimizer}


def resolve_optimizer(optimizer, default="adam"):
    """Return the optimizer class an ``optimizer`` parameter names.

    Parameters
    ----------
    optimizer : str, torch.optim.Optimizer subclass or None
        The name of an optimizer of :mod:`torch.optim`, in any case
        (``"adam"``, ``"AdamW"``, ``"sgd"``, ...), an optimizer class, or
        ``None`` for ``default``.
    default : str or torch.optim.Optimizer subclass, default="adam"
        The optimizer used when ``optimizer`` is None.

    Returns
    -------
    cls : type
        A subclass of :class:`torch.optim.Optimizer`.

    Raises
    ------
    TypeError
        If ``optimizer`` is neither a string, an optimizer class nor None.
    ValueError
        If the name is not an optimizer of :mod:`torch.optim`, or the class is
        :class:`torch.optim.LBFGS`, whose ``step`` needs a closure the training
        loop does not pass.

    Examples
    --------
    >>> import torch
    >>> from skpaper.nn import resolve_optimizer
    >>> resolve_optimizer("sgd") is torch.optim.SGD
    True
    >>> resolve_optimizer(None, default="adamw") is torch.optim.AdamW
    True
    """
    optimizer = default if optimizer is None else optimizer
    if isinstance(optimizer, str):
        classes = _optimizer_classes()
        cls = classes.get(optimizer.lower())
        if cls is None:
            raise ValueError(
                f"optimizer={optimizer!r} is not an optimizer of torch.optim; use one of "
                f"{sorted(classes)} or a torch.optim.Optimizer subclass.")
    elif inspect.isclass(optimizer) and issubclass(optimizer, torch.optim.Optimizer):
        cls = optimizer
    else:
        raise TypeError(
            "optimizer must be the name of a torch.optim optimizer or a "
            f"torch.optim.Optimizer subclass, got {optimizer!r}.")
    if issubclass(cls, torch.optim.LBFGS):
        raise ValueError(f"optimizer={cls.__name__} needs a closure in step(), which the "
                         "training loop does not pass; choose a first-order optimizer.")
    return cls


def _accepts(cls, name):
    parameters = inspect.signature(cls.__init__).parameters.values()
    return any(p.kind is p.VAR_KEYWORD or p.name == name for p in parameters)


@functools.lru_cache(maxsize=1024)
def _event_signature(func):
    """``(takes **kwargs, names it takes by keyword)`` of a callback event method."""
    try:
        parameters = inspect.signature(func).parameters.values()
    except (TypeError, ValueError):
        return True, frozenset()
    var_keyword = any(p.kind is p.VAR_KEYWORD for p in parameters)
    names = frozenset(p.name for p in parameters
                      if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY))
    return var_keyword, names


def _call_event(callback, event, estimator, *args, **kwargs):
    """Call ``callback.<event>(estimator, *args, **kwargs)`` if it exists.

    A method without ``**kwargs`` (a callback written before events took them)
    is passed only the keyword arguments its signature names.
    """
    hook = getattr(callback, event, None)
    if hook is None:
        return None
    func = getattr(hook, "__func__", hook)
    try:
        var_keyword, names = _event_signature(func)
    except TypeError:  # an unhashable callable
        var_keyword, names = True, frozenset()
    if not var_keyword:
        kwargs = {k: v for k, v in kwargs.items() if k in names}
    return hook(estimator, *args, **kwargs)


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
            if ((str(self.device_).startswith("cuda") and not torch.cuda.is_available())
                    or (str(self.device_).startswith("mps") and not _mps_available())):
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


@Substitution(**_torch_docs())
class BaseTorchEstimator(BaseTorchState):
    """Base class for skpaper's torch estimators.

    Adds the training loop to :class:`BaseTorchState`. Subclasses list every
    parameter in their own ``__init__`` (scikit-learn reads parameters from the
    signature) and implement :meth:`_build_module`, and either
    :meth:`_compute_loss` or the batch-level hooks (:meth:`_get_loss`,
    :meth:`_train_batches`, :meth:`_process_gradients`, :meth:`_train_step`).
    Training uses a local :class:`torch.Generator` derived from ``random_state``.

    The base also provides what subclasses may expose as parameters:

    - an ``optimizer`` (a :mod:`torch.optim` name or class) and
      ``optimizer_kwargs``, read by :meth:`_make_optimizer` when the subclass
      defines them (the default optimizer otherwise);
    - sample weights: ``_fit_tensors(..., sample_weight=w)`` weights each row's
      loss (through :meth:`_compute_sample_losses`), normalised so that integer
      weights equal repeated rows in expectation of the loss;
    - resumed training: ``_fit_tensors(..., resume="warm")`` keeps the weights
      (a warm start) and ``resume="partial"`` keeps weights and optimizer and
      runs one epoch (``partial_fit``).

    Estimators that do not expose these parameters train as before.

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
        "device": [str, torch.device],
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
        return self._make_optimizer(module.parameters(), "adam")

    def _make_optimizer(self, params, default="adam", **owned):
        """Build the optimizer from the ``optimizer`` and ``optimizer_kwargs`` parameters.

        Estimators that do not define those parameters get ``default``. The
        learning rate is ``lr``; ``owned`` maps further optimizer arguments that
        the estimator sets through a parameter of its own to ``(parameter name,
        value)``, e.g. ``weight_decay=("alpha", 1e-4)``; ``optimizer_kwargs`` may
        not set those nor ``lr``. An owned argument the optimizer does not take
        is dropped when its value is 0 and refused otherwise.
        """
        cls = resolve_optimizer(getattr(self, "optimizer", None), default)
        extra = getattr(self, "optimizer_kwargs", None)
        if extra is None:
            extra = {}
        elif not isinstance(extra, dict):
            raise TypeError(f"optimizer_kwargs must be a dict or None, got "
                            f"{type(extra).__name__}.")
        reserved = {"params": None, "lr": "lr", **{k: v[0] for k, v in owned.items()}}
        for key in extra:
            if not isinstance(key, str):
                raise TypeError(f"optimizer_kwargs keys must be strings, got {key!r}.")
            if key in reserved:
                where = ("the parameters come from the module" if reserved[key] is None
                         else f"set it with the {reserved[key]!r} parameter")
                raise ValueError(f"optimizer_kwargs may not set {key!r}: {where}.")
        kwargs = {"lr": float(self.lr)}
        for key, (param, value) in owned.items():
            if _accepts(cls, key):
                kwargs[key] = value
            elif value:
                raise ValueError(f"optimizer={cls.__name__} takes no {key!r}, so "
                                 f"{param}={value!r} cannot be applied; set {param}=0 or "
                                 "choose another optimizer.")
        kwargs.update(extra)
        try:
            return cls(params, **kwargs)
        except (TypeError, ValueError) as exc:
            raise type(exc)(f"optimizer={cls.__name__} refused the arguments "
                            f"{sorted(kwargs)} (optimizer_kwargs={extra!r}): {exc}") from exc

    def _compute_sample_losses(self, output, target):
        """Per-row losses of one batch, shape ``(n_rows,)``, for weighted training."""
        raise NotImplementedError(f"{type(self).__name__} does not support sample_weight.")

    def _weighted_loss(self, output, target, weight):
        """``sum_i w_i l_i / n_rows`` with weights of mean one over the training rows.

        Averaged over random batches it is the weighted mean loss of the whole
        training set, ``sum_i w_i l_i / sum_i w_i``: the mean loss of the data set
        in which row ``i`` is repeated ``w_i`` times. With one batch it is that
        exactly.
        """
        losses = self._compute_sample_losses(output, target)
        return (losses * weight).sum() / weight.shape[0]

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
        inputs, target, *weight = batch
        if weight:
            return self._weighted_loss(self.module_(inputs), target, weight[0])
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

    def _fit_tensors(self, X, target, target_dtype, sample_weight=None, *, resume=None):
        """Seed, then train on the row-aligned arrays ``X`` (float32) and ``target``.

        The training step of :class:`TorchClassifierMixin` and
        :class:`TorchRegressorMixin` after they have encoded the target;
        subclasses validate before and add fitted attributes after ``super()``.

        ``sample_weight`` (validated, non-negative) weights the rows' losses:
        rows of weight 0 are dropped (so a zero weight is the same as removing
        the row, batches included), the others are rescaled to mean one, and
        constant weights train exactly as no weights. ``resume`` is None (a
        fresh fit), ``"warm"`` (keep ``module_``, new optimizer and seeds) or
        ``"partial"`` (keep ``module_``, ``optimizer_``, the batch generator
        and ``callbacks_``; run one epoch); both start afresh when nothing
        has been fitted yet.
        """
        if resume not in (None, "warm", "partial"):
            raise ValueError(f"resume must be None, 'warm' or 'partial', got {resume!r}.")
        resuming = resume is not None and getattr(self, "module_", None) is not None
        if resume == "partial" and resuming:
            self._resume_torch_state()
        else:
            self._init_torch_state()
        weight = None
        if sample_weight is not None:
            weight = np.asarray(sample_weight, dtype=np.float64)
            keep = weight > 0
            if not keep.any():
                raise ValueError("sample_weight has no positive entry: there is nothing to "
                                 "train on.")
            if not keep.all():
                X, target, weight = X[keep], target[keep], weight[keep]
            weight = None if np.all(weight == weight[0]) else weight / weight.mean()
        tensors = (self._to_tensor(X), self._to_tensor(target, target_dtype))
        if weight is not None:
            tensors += (self._to_tensor(weight),)
        self._fit_loop(tensors, resume=resume)
        return self

    def _resume_torch_state(self):
        """Keep the seeds of the first fit; make a batch generator if none is left."""
        self.device_ = resolve_device(self.device)
        n_done = len(getattr(self, "history_", []))
        if getattr(self, "_generator", None) is None:  # dropped by pickling
            self._generator = torch.Generator().manual_seed(
                _derive_seed(self._init_seed, 6 + n_done))
        if _in_local_rng():
            torch.manual_seed(_derive_seed(self._init_seed, 1_000_000 + n_done))

    def _extra_callbacks(self):
        """Callbacks the estimator adds after the user's (e.g. its own stopping rule)."""
        return []

    def _notify(self, event, *args, **kwargs):
        """Fire ``event`` on every fitted callback; return their results.

        The batch events also receive the current ``epoch`` (from 1); a callback
        method without ``**kwargs`` gets only the keyword arguments it names.
        """
        if event in ("on_batch_begin", "on_grad_computed", "on_batch_end"):
            kwargs.setdefault("epoch", getattr(self, "_current_epoch", None))
        return [_call_event(callback, event, self, *args, **kwargs)
                for callback in getattr(self, "callbacks_", ())]

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

    def _fit_loop(self, tensors, *, resume=None):
        """Build module and optimizer, then run epochs with callbacks and history.

        The user's callbacks are deep-copied into ``callbacks_`` (followed by
        :meth:`_extra_callbacks`), so ``callbacks`` is never changed by a fit.
        ``resume="warm"`` trains the current ``module_`` again with a new
        optimizer and ``max_epochs`` more epochs; ``resume="partial"`` keeps the
        optimizer and the fitted callbacks too and runs one epoch. Both append
        to ``history_``. Either starts afresh when no ``module_`` is fitted.
        """
        partial = resume == "partial"
        fresh = resume is None or getattr(self, "module_", None) is None
        if fresh:
            self.module_ = self._make_module()
            self.history_ = []
        else:
            self.module_ = self.module_.to(device=self.device_, dtype=_TRAIN_DTYPE)
        optimizer = getattr(self, "optimizer_", None) if partial and not fresh else None
        if optimizer is None or getattr(self, "_optimizer_device", None) != self.device_:
            self.optimizer_ = self._build_optimizer(self.module_)
            self._optimizer_device = self.device_
        if fresh or not (partial and hasattr(self, "callbacks_")):
            self.callbacks_ = [copy.deepcopy(cb) for cb in (self.callbacks or [])]
            self.callbacks_ += list(self._extra_callbacks())
        done = len(self.history_)
        valid = None
        splitters = [cb for cb in self.callbacks_ if isinstance(cb, ValidationSplit)]
        if len(splitters) > 1:
            raise ValueError("callbacks holds more than one ValidationSplit.")
        if splitters:
            n_rows = len(tensors[0])
            train_rows, valid_rows = splitters[0].split(self, n_rows)
            valid = self._split_tensors(tensors, valid_rows)
            tensors = self._split_tensors(tensors, train_rows)
        self._notify("on_train_begin", partial=partial)
        epochs = self._progress(range(done, done + (1 if partial else self._n_epochs())))
        for epoch in epochs:
            self._current_epoch = epoch + 1
            self._notify("on_epoch_begin", epoch=epoch + 1)
            record = {"epoch": epoch + 1, **self._train_epoch(tensors, self.optimizer_)}
            if valid is not None:
                record["valid_loss"] = self._validation_loss(valid)
            self.history_.append(record)
            if not epochs.disable:
                epochs.set_postfix({k: record[k] for k in ("train_loss", "valid_loss")
                                    if k in record}, refresh=False)
            # ``record`` goes by position, as it always has (callbacks name it freely).
            if any(bool(stop) for stop in self._notify("on_epoch_end", record)):
                break
        epochs.close()
        self._current_epoch = None
        self._notify("on_train_end", partial=partial)
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
        return self._fit_classifier(X, y)

    def _fit_classifier(self, X, y, sample_weight=None, *, resume=None, classes=None):
        """Validate, encode the labels and train; ``resume`` as in ``_fit_tensors``.

        A resumed fit (``resume`` set and a module fitted) keeps ``classes_`` and
        the number of features; ``partial_fit``'s first call takes ``classes``.
        """
        resuming = resume is not None and getattr(self, "module_", None) is not None
        X, y = validate_data(self, X, y, dtype=np.float64, reset=not resuming)
        check_classification_targets(y)
        if classes is not None:
            classes = np.unique(np.asarray(classes).ravel())
        if not resuming:
            if resume == "partial" and classes is None:
                raise ValueError("classes must be passed on the first call to partial_fit.")
            self.classes_ = np.unique(y) if classes is None else classes
        elif classes is not None and not np.array_equal(classes, self.classes_):
            raise ValueError(f"classes={classes!r} is not the same as on the first call to "
                             f"partial_fit, classes_={self.classes_!r}.")
        unseen = np.setdiff1d(np.unique(y), self.classes_)
        if unseen.size:
            raise ValueError(f"y has labels {unseen[:5]!r} that are not in classes_ "
                             f"{self.classes_!r} (set on the first fit or by classes).")
        if sample_weight is not None:
            sample_weight = _check_sample_weight(sample_weight, X, ensure_non_negative=True)
        self._n_outputs = len(self.classes_)
        codes = np.searchsorted(self.classes_, y)
        extra = {} if sample_weight is None else {"sample_weight": sample_weight}
        if resume is not None:
            extra["resume"] = resume
        return self._fit_tensors(X, codes, torch.long, **extra)

    def _compute_loss(self, output, target):
        return torch.nn.functional.cross_entropy(output, target)

    def _compute_sample_losses(self, output, target):
        return torch.nn.functional.cross_entropy(output, target, reduction="none")

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
        return self._fit_regressor(X, y)

    def _fit_regressor(self, X, y, sample_weight=None, *, resume=None):
        """Validate, shape (and scale) the target and train; ``resume`` as in ``_fit_tensors``.

        A resumed fit keeps the number of features, of targets and the target
        scaling of the first fit.
        """
        resuming = resume is not None and getattr(self, "module_", None) is not None
        X, y = validate_data(self, X, y, dtype=np.float64, multi_output=True, y_numeric=True,
                             reset=not resuming)
        if np.asarray(y).dtype.kind not in "biuf":
            raise ValueError(f"y must be numeric (a regression target), got dtype {y.dtype}.")
        if sample_weight is not None:
            sample_weight = _check_sample_weight(sample_weight, X, ensure_non_negative=True)
        target = y.reshape(len(y), -1)
        if resuming:
            if target.shape[1] != self._n_outputs:
                raise ValueError(f"y has {target.shape[1]} target column(s), but the fitted "
                                 f"model predicts {self._n_outputs}.")
        else:
            self._y_ndim = y.ndim
            self._n_outputs = target.shape[1]
            if self._scale_targets:
                self._y_mean = np.average(target, axis=0, weights=sample_weight)
                scale = np.sqrt(np.average((target - self._y_mean) ** 2, axis=0,
                                           weights=sample_weight))
                self._y_scale = np.where(scale > 0, scale, 1.0)
        if self._scale_targets:
            target = (target - self._y_mean) / self._y_scale
        extra = {} if sample_weight is None else {"sample_weight": sample_weight}
        if resume is not None:
            extra["resume"] = resume
        return self._fit_tensors(X, target, torch.float32, **extra)

    def _compute_loss(self, output, target):
        return torch.nn.functional.mse_loss(output, target)

    def _compute_sample_losses(self, output, target):
        losses = torch.nn.functional.mse_loss(output, target, reduction="none")
        return losses.reshape(losses.shape[0], -1).mean(dim=1)

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
