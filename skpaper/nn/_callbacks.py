"""Training callbacks of the torch estimators.

A callback is an object whose event methods the training loop of
:class:`~skpaper.nn.BaseTorchEstimator` calls (see :class:`Callback` for the
order). Every event takes the estimator first and its other arguments by
keyword; each event method also accepts ``**kwargs``, so that events can pass
further information in later versions without breaking callbacks. Callbacks
written before events took ``**kwargs`` keep working: the loop passes a method
without ``**kwargs`` only the keyword arguments it names.
"""

import copy
import inspect
from numbers import Integral, Real

import numpy as np
import torch

__all__ = [
    "Callback",
    "Checkpoint",
    "EarlyStopping",
    "GradNormClipping",
    "HalveOnPlateau",
    "LRScheduler",
    "ValidationSplit",
]

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

    The estimator comes first; the other arguments are passed by keyword. Every
    event method takes ``**kwargs`` for further information: the batch events
    (``on_batch_begin``, ``on_grad_computed``, ``on_batch_end``) receive the
    current ``epoch`` (from 1), and ``on_train_begin`` / ``on_train_end``
    receive ``partial`` (True during ``partial_fit``). A callback written without
    ``**kwargs`` keeps working: its method is passed only the arguments its
    signature names.

    Examples
    --------
    >>> from skpaper.nn import Callback, MLPRegressor
    >>> class CountEpochs(Callback):
    ...     def on_train_begin(self, estimator, **kwargs):
    ...         self.n_epochs = 0
    ...     def on_epoch_end(self, estimator, record, **kwargs):
    ...         self.n_epochs += 1
    >>> X, y = [[0.0], [1.0], [2.0], [3.0]], [0.0, 1.0, 2.0, 3.0]
    >>> reg = MLPRegressor(hidden_layer_sizes=(4,), max_epochs=3,
    ...                    callbacks=[CountEpochs()], random_state=0).fit(X, y)
    >>> reg.callbacks_[0].n_epochs
    3
    """

    def on_train_begin(self, estimator, **kwargs):
        """Run once before the first epoch, after the module and optimizer exist.

        Parameters
        ----------
        estimator : BaseTorchEstimator
            The estimator being trained.
        **kwargs : dict
            Further keyword arguments of the event (see :class:`Callback`).
        """

    def on_epoch_begin(self, estimator, epoch, **kwargs):
        """Run before each epoch.

        Parameters
        ----------
        estimator : BaseTorchEstimator
            The estimator being trained.
        epoch : int
            The epoch about to run, counting from 1.
        **kwargs : dict
            Further keyword arguments of the event (see :class:`Callback`).
        """

    def on_batch_begin(self, estimator, batch, **kwargs):
        """Run before each optimisation step.

        Parameters
        ----------
        estimator : BaseTorchEstimator
            The estimator being trained.
        batch : object
            The batch of that step, as the estimator's training loop yields it.
        **kwargs : dict
            Further keyword arguments of the event (see :class:`Callback`).
        """

    def on_grad_computed(self, estimator, named_parameters, **kwargs):
        """Run after ``backward`` and before the optimizer step.

        A callback may change the gradients in place (clip them, for example).

        Parameters
        ----------
        estimator : BaseTorchEstimator
            The estimator being trained.
        named_parameters : list of (str, torch.nn.Parameter)
            ``(name, parameter)`` of the trained module.
        **kwargs : dict
            Further keyword arguments of the event (see :class:`Callback`).
        """

    def on_batch_end(self, estimator, step, **kwargs):
        """Run after each optimizer step.

        Parameters
        ----------
        estimator : BaseTorchEstimator
            The estimator being trained.
        step : dict
            The batch's scalar metrics (``train_loss`` and what hooks add).
        **kwargs : dict
            Further keyword arguments of the event (see :class:`Callback`).
        """

    def on_epoch_end(self, estimator, record, **kwargs):
        """Run after each epoch.

        Parameters
        ----------
        estimator : BaseTorchEstimator
            The estimator being trained.
        record : dict
            That epoch's history record (``epoch``, ``train_loss``, ...).
        **kwargs : dict
            Further keyword arguments of the event (see :class:`Callback`).

        Returns
        -------
        stop : bool or None
            ``True`` stops training after this epoch.
        """

    def on_train_end(self, estimator, **kwargs):
        """Run once after the last epoch.

        Parameters
        ----------
        estimator : BaseTorchEstimator
            The estimator being trained.
        **kwargs : dict
            Further keyword arguments of the event (see :class:`Callback`).
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

    def on_train_begin(self, estimator, **kwargs):
        """Reset the best value and the count of epochs without improvement.

        Parameters
        ----------
        estimator : BaseTorchEstimator
            The estimator being trained.
        **kwargs : dict
            Further keyword arguments of the event (see :class:`Callback`).
        """
        self._best = np.inf
        self._wait = 0
        self._checkpoint = Checkpoint(self.monitor) if self.restore_best else None
        if self._checkpoint is not None:
            self._checkpoint.on_train_begin(estimator)

    def on_epoch_end(self, estimator, record, **kwargs):
        """Count the epochs without improvement of ``monitor``.

        Parameters
        ----------
        estimator : BaseTorchEstimator
            The estimator being trained.
        record : dict
            That epoch's history record.
        **kwargs : dict
            Further keyword arguments of the event (see :class:`Callback`).

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

    def on_train_end(self, estimator, **kwargs):
        """Load the best weights when ``restore_best`` is set.

        Parameters
        ----------
        estimator : BaseTorchEstimator
            The estimator being trained.
        **kwargs : dict
            Further keyword arguments of the event (see :class:`Callback`).
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

    def on_train_begin(self, estimator, **kwargs):
        """Forget the best weights of an earlier fit.

        Parameters
        ----------
        estimator : BaseTorchEstimator
            The estimator being trained.
        **kwargs : dict
            Further keyword arguments of the event (see :class:`Callback`).
        """
        self.best_value_ = np.inf
        self.best_epoch_ = 0
        self._best_state = None

    def on_epoch_end(self, estimator, record, **kwargs):
        """Copy the weights when ``monitor`` reaches a new best value.

        Parameters
        ----------
        estimator : BaseTorchEstimator
            The estimator being trained.
        record : dict
            That epoch's history record.
        **kwargs : dict
            Further keyword arguments of the event (see :class:`Callback`).

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

    def on_train_end(self, estimator, **kwargs):
        """Load the best weights when ``load_best`` is set, then drop the copy.

        Parameters
        ----------
        estimator : BaseTorchEstimator
            The estimator being trained.
        **kwargs : dict
            Further keyword arguments of the event (see :class:`Callback`).
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

    def on_train_begin(self, estimator, **kwargs):
        """Build the scheduler on the estimator's optimizer.

        Parameters
        ----------
        estimator : BaseTorchEstimator
            The estimator being trained.
        **kwargs : dict
            Further keyword arguments of the event (see :class:`Callback`).
        """
        self.scheduler_ = _resolve_policy(self.policy)(estimator.optimizer_, **self.kwargs)

    def on_batch_end(self, estimator, step, **kwargs):
        """Step the scheduler when ``step_every="batch"``.

        Parameters
        ----------
        estimator : BaseTorchEstimator
            The estimator being trained.
        step : dict
            The batch's scalar metrics.
        **kwargs : dict
            Further keyword arguments of the event (see :class:`Callback`).
        """
        if self.step_every == "batch" and not self._plateau():
            self.scheduler_.step()

    def on_epoch_end(self, estimator, record, **kwargs):
        """Step the scheduler when ``step_every="epoch"``.

        Parameters
        ----------
        estimator : BaseTorchEstimator
            The estimator being trained.
        record : dict
            That epoch's history record.
        **kwargs : dict
            Further keyword arguments of the event (see :class:`Callback`).

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

    def on_train_end(self, estimator, **kwargs):
        """Drop the scheduler.

        Parameters
        ----------
        estimator : BaseTorchEstimator
            The estimator being trained.
        **kwargs : dict
            Further keyword arguments of the event (see :class:`Callback`).
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

    def on_grad_computed(self, estimator, named_parameters, **kwargs):
        """Clip the gradients in place.

        Parameters
        ----------
        estimator : BaseTorchEstimator
            The estimator being trained.
        named_parameters : list of (str, torch.nn.Parameter)
            ``(name, parameter)`` of the trained module.
        **kwargs : dict
            Further keyword arguments of the event (see :class:`Callback`).
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

    def on_train_begin(self, estimator, **kwargs):
        """Build the plateau scheduler and the checkpoint.

        Parameters
        ----------
        estimator : BaseTorchEstimator
            The estimator being trained.
        **kwargs : dict
            Further keyword arguments of the event (see :class:`Callback`).
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

    def on_epoch_end(self, estimator, record, **kwargs):
        """Step the scheduler; after a reduction, go back to the best weights.

        Parameters
        ----------
        estimator : BaseTorchEstimator
            The estimator being trained.
        record : dict
            That epoch's history record.
        **kwargs : dict
            Further keyword arguments of the event (see :class:`Callback`).

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

    def on_train_end(self, estimator, **kwargs):
        """Load the best weights and drop the scheduler and checkpoint.

        Parameters
        ----------
        estimator : BaseTorchEstimator
            The estimator being trained.
        **kwargs : dict
            Further keyword arguments of the event (see :class:`Callback`).
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
        from ._base import _derive_seed  # the base imports this module

        order = np.random.default_rng(_derive_seed(estimator._init_seed, 3)).permutation(n_rows)
        return np.sort(order[n_valid:]), np.sort(order[:n_valid])
