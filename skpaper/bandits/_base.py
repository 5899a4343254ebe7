"""Shared machinery of the bandit policies: input checks, state, online and batch APIs.

A policy is played either online (:meth:`select` then :meth:`update`, one
round at a time) or in one call over a recorded oblivious adversary
(:meth:`fit`). Both paths run the same numba functions on the same state, and
the uniforms that drive the action draws come from one
:class:`~numpy.random.RandomState` in the same order, so they produce the same
trajectory for the same ``random_state``.
"""

import numbers

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.utils import check_random_state
from sklearn.utils.validation import check_array, check_consistent_length, check_is_fitted

from ..utils._docstring import Substitution
from ..utils._memory import check_allocation
from ..utils._sklearn import Interval, _fit_context, validate_data
from . import _kern as kern
from ._source import LossSource

_STATE_KEYS = ("L", "W", "Z", "base", "Lsnap", "est_w", "cur_w", "ids", "mask", "istate",
               "fstate", "pending")


def _check_unit_interval(array, name):
    if array.size and (array.min() < 0.0 or array.max() > 1.0):
        raise ValueError(
            f"{name} must lie in [0, 1], got values in [{array.min():.4g}, {array.max():.4g}]."
        )


def _check_index(value, name, upper):
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (numbers.Integral,)):
        raise TypeError(f"{name} must be an int, got {type(value).__name__} ({value!r}).")
    if not 0 <= value < upper:
        raise ValueError(f"{name} must be in [0, {upper}), got {value}.")
    return int(value)


#: Largest number of actions (the bound of ``n_actions`` and of 1-D label actions).
_MAX_ACTIONS = 2**20

#: Parameter constraints shared by every policy.
_POLICY_CONSTRAINTS = {
    "n_actions": [Interval(numbers.Integral, 2, _MAX_ACTIONS, closed="both"), None],
    "horizon": [Interval(numbers.Integral, 1, None, closed="left"), None],
    "eta": [Interval(numbers.Real, 0, None, closed="neither"), None],
    "random_state": ["random_state"],
}
_GAMMA_CONSTRAINT = [Interval(numbers.Real, 0, None, closed="left"), None]

#: Docstring parts shared by the policies, filled in by :data:`fill_doc`.
_SHARED_DOCS = {
    "online_parameters": """
    n_actions : int, default=None
        Number of actions K. ``None`` takes it from the losses given to
        :meth:`fit`; it must be set to play online.
    horizon : int, default=None
        Horizon T used to tune the defaults. ``None`` uses the number of
        rounds given to :meth:`fit`; it must be set to play online.""",
    "random_state": """
    random_state : int, RandomState instance or None, default=None
        Drives the action draws (one uniform per round).""",
    "protocol_attributes": """
    actions_ : ndarray of shape (n_rounds,)
        Actions played by :meth:`fit`.
    cumulative_loss_ : float
        ``sum_t l_t(c_t, a_t)``.
    regret_ : float
        ``sum_t l_t(c_t, a_t) - l_t(c_t, pi*(c_t))`` against the best fixed
        policy ``pi*(c) = argmin_a sum_t l_t(c, a)``.
    regret_curve_ : ndarray of shape (n_rounds,)
        Cumulative regret after each round (against the same ``pi*``).
    best_policy_ : ndarray of shape (n_contexts,)
        The comparator ``pi*``.
    n_contexts_ : int
        Number of contexts C.
    n_actions_ : int
        Number of actions K.
    n_rounds_ : int
        Number of rounds played by :meth:`fit`.
    n_features_in_ : int
        Number of columns of ``X`` at fit time.""",
}


#: Decorator filling the ``{name}`` placeholders of :data:`_SHARED_DOCS` into a docstring.
fill_doc = Substitution(**_SHARED_DOCS)


class _BasePolicy(BaseEstimator):
    """Base class of the bandit policies (not public).

    Subclasses set ``_scope`` (a ``SCOPE_*`` code of :mod:`._layout`) and
    implement :meth:`_hyperparameters`.
    """

    _scope = kern.SCOPE_CROSS

    # ------------------------------------------------------------------ hooks
    def _estimation_code(self):
        return kern.EST_PREV_EPOCH

    def _hyperparameters(self, horizon, n_contexts, n_actions):
        """Return ``(eta, gamma, epoch_length, auto_eta, auto_gamma)``."""
        raise NotImplementedError

    def _resolve_distribution(self, environment_nu, n_contexts):
        return None

    # ------------------------------------------------------------- batch API
    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None, environment=None):
        """Play the protocol over a recorded oblivious adversary.

        Parameters
        ----------
        X : array-like of shape (n_rounds, n_features) or None
            Contexts. With 3-D losses or an environment: one column of
            integer context ids. With 1-D or 2-D ``y``: each distinct row is
            one context. ``None`` takes the environment's contexts.
        y : array-like, default=None
            Losses: ``(n_rounds, n_contexts, n_actions)`` in ``[0, 1]``;
            context-free losses ``(n_rounds, n_actions)``; or, 1-D, the
            correct action of each round (loss ``1[a != y_t]``).
        environment : FirstPriceAuction or SleepingBandits, default=None
            A generated environment supplying the losses column by column.

        Returns
        -------
        self : object
            Fitted policy.
        """
        contexts, source, env_nu, _ = self._prepare(X, y, environment, reset=True)
        n_rounds = source.n_rounds
        nu = self._resolve_distribution(env_nu, source.n_contexts)
        tuning_horizon = self.horizon if self.horizon is not None else n_rounds
        self._start(source.n_contexts, source.n_actions, source.mask, nu, tuning_horizon)
        self._rng = check_random_state(self.random_state)
        uniforms = self._rng.random_sample(n_rounds)

        best = source.best_policy()
        actions = np.empty(n_rounds, dtype=np.int64)
        curve = np.empty(n_rounds)
        total = kern.run_policy(self._scope, self._estimation_code(), *self._state_args(),
                                contexts, uniforms, source.kind, *source.arrays(), best,
                                actions, curve)
        self.actions_ = actions
        self.regret_curve_ = curve
        self.regret_ = float(curve[-1])
        self.cumulative_loss_ = float(total)
        self.best_policy_ = best
        self.n_rounds_ = n_rounds
        counts = np.bincount(contexts, minlength=source.n_contexts).astype(np.float64)
        self._fallback = self._frequency_greedy(counts)
        return self

    def predict(self, X):
        """Greedy action of the final policy for each context.

        Parameters
        ----------
        X : array-like of shape (n_rounds, n_features)
            Contexts, encoded as at fit time.

        Returns
        -------
        actions : ndarray of shape (n_rounds,)
            ``argmin_a L_hat(c, a)`` among the actions available in ``c``.
        """
        check_is_fitted(self)
        X = validate_data(self, X, reset=False)
        return self._greedy(self._policy_ids(X))

    def score(self, X, y=None, environment=None):
        """Return minus the average per-round regret of the greedy final policy.

        The comparator is the best fixed policy on the rounds given here, so a
        perfect policy scores 0 and every other policy scores below 0.

        Parameters
        ----------
        X : array-like of shape (n_rounds, n_features) or None
            Contexts (``None`` takes them from ``environment``).
        y : array-like, default=None
            Losses, in one of the layouts accepted by :meth:`fit`.
        environment : environment, default=None
            A generated environment, instead of ``y``.

        Returns
        -------
        score : float
            ``-(1/T) sum_t [l_t(c_t, pi(c_t)) - l_t(c_t, pi*(c_t))]``.
        """
        check_is_fitted(self)
        contexts, source, _, X = self._prepare(X, y, environment, reset=False)
        actions = self._greedy(self._policy_ids(X))
        best = source.best_policy()[contexts]
        gap = source.entries(contexts, actions) - source.entries(contexts, best)
        return -float(gap.mean())

    # ------------------------------------------------------------ online API
    def select(self, context):
        """Draw the action to play in ``context`` from the current policy.

        Parameters
        ----------
        context : int
            Context id in ``[0, n_contexts)``.

        Returns
        -------
        action : int
            Action drawn, in ``[0, n_actions)``.
        """
        n_actions = self._online_checks()
        limit = getattr(self, "n_contexts_", np.iinfo(np.int64).max)
        context = _check_index(context, "context", limit)
        u = self._online_rng().random_sample()
        if getattr(self, "_state", None) is None:
            # Before the first update every policy is uniform.
            return min(int(u * n_actions), n_actions - 1)
        row = context if self._scope != kern.SCOPE_POOLED else 0
        return int(kern.select_action(self._state["W"], self._state["mask"], row, context, u))

    def update(self, context, action, losses):
        """Feed back the losses of the played action for every context.

        Parameters
        ----------
        context : int
            Context of the round.
        action : int
            Action played (drawn by :meth:`select`).
        losses : array-like of shape (n_contexts,)
            ``l_t(c, action)`` for every context ``c``, in ``[0, 1]``. The
            number of contexts is fixed by the first update.

        Returns
        -------
        self : object
            The policy, updated.
        """
        n_actions = self._online_checks()
        losses = check_array(losses, ensure_2d=False, dtype=np.float64, input_name="losses")
        if losses.ndim != 1:
            raise ValueError(
                f"losses must be a 1-D array with one loss per context, got shape {losses.shape}."
            )
        _check_unit_interval(losses, "losses")
        if getattr(self, "_state", None) is None:
            if self.horizon is None:
                raise ValueError(
                    "horizon must be set to play online; got horizon=None."
                )
            n_contexts = losses.shape[0]
            mask = np.ones((n_contexts, n_actions), dtype=bool)
            self._start(n_contexts, n_actions, mask,
                        self._resolve_distribution(None, n_contexts), self.horizon)
        elif losses.shape[0] != self.n_contexts_:
            raise ValueError(
                f"losses must have one entry per context ({self.n_contexts_}), "
                f"got {losses.shape[0]}."
            )
        context = _check_index(context, "context", self.n_contexts_)
        action = _check_index(action, "action", self.n_actions_)
        kern.observe(self._scope, self._estimation_code(), *self._state_args(), context, action,
                     np.ascontiguousarray(losses))
        return self

    # --------------------------------------------------------------- helpers
    def _online_checks(self):
        if not getattr(self, "_online_validated", False):
            self._validate_params()
            self._online_validated = True
        n_actions = getattr(self, "n_actions_", self.n_actions)
        if n_actions is None:
            raise ValueError("n_actions must be set to play online; got n_actions=None.")
        return n_actions

    def _online_rng(self):
        if getattr(self, "_rng", None) is None:
            self._rng = check_random_state(self.random_state)
        return self._rng

    def _state_args(self):
        return tuple(self._state[key] for key in _STATE_KEYS)

    def _start(self, n_contexts, n_actions, mask, nu, horizon):
        scope, est = self._scope, self._estimation_code()
        eta, gamma, epoch_length, auto_eta, auto_gamma = self._hyperparameters(
            horizon, n_contexts, n_actions
        )
        n_rows = 1 if scope == kern.SCOPE_POOLED else n_contexts
        self._check_tables(n_contexts, n_actions)
        L = np.zeros((n_rows, n_actions))
        W, Z, base = np.empty((n_rows, n_actions)), np.empty(n_rows), np.empty(n_rows)
        mask = np.ascontiguousarray(mask, dtype=bool)
        kern.refresh_all(L, W, Z, base, mask, scope, eta)
        istate = np.zeros(kern.N_ISTATE, dtype=np.int64)
        fstate = np.zeros(kern.N_FSTATE)
        istate[kern.I_EPOCH_LEN] = epoch_length
        fstate[kern.F_ETA], fstate[kern.F_GAMMA] = eta, gamma
        fstate[kern.F_AUTO_ETA], fstate[kern.F_AUTO_GAMMA] = float(auto_eta), float(auto_gamma)
        est_w = np.zeros(n_contexts)
        ids = np.zeros((2, n_contexts), dtype=np.int64)
        if scope == kern.SCOPE_CROSS and est == kern.EST_KNOWN:
            support = np.flatnonzero(nu > 0)
            est_w[:] = nu
            ids[0, : support.size] = support
            istate[kern.I_N_EST] = support.size
            fstate[kern.F_EST_TOTAL] = float(nu.sum())
        self._state = {
            "L": L, "W": W, "Z": Z, "base": base, "Lsnap": np.zeros((n_rows, n_actions)),
            "est_w": est_w, "cur_w": np.zeros(n_contexts), "ids": ids, "mask": mask,
            "istate": istate, "fstate": fstate, "pending": np.zeros(n_contexts),
        }
        self.n_contexts_ = n_contexts
        self.n_actions_ = n_actions
        self.eta_ = float(eta)
        self.gamma_ = float(gamma)
        self.loss_estimates_ = L
        self._fallback = 0

    def _prepare(self, X, y, environment, reset):
        """Validate the inputs; return (context ids, loss source, nu, validated X)."""
        if environment is not None:
            if y is not None:
                raise ValueError("Pass the losses either as y or as an environment, not both.")
            if not hasattr(environment, "_loss_source"):
                raise TypeError(
                    "environment must be a skpaper.bandits environment, got "
                    f"{type(environment).__name__}."
                )
            if not hasattr(environment, "contexts_"):
                raise ValueError(
                    f"environment {type(environment).__name__} has not been generated yet: "
                    "call environment.generate(horizon) first."
                )
            if X is None:
                X = environment.contexts_.reshape(-1, 1)
            X = validate_data(self, X, reset=reset)
            if reset:
                self._row_contexts = None
            contexts = self._context_ids(X, environment.n_contexts_)
            if contexts.shape[0] > environment.horizon_:
                raise ValueError(
                    f"X has {contexts.shape[0]} rounds but the environment was generated "
                    f"for {environment.horizon_}."
                )
            source = environment._loss_source(contexts.shape[0])
            return contexts, source, environment.context_distribution_, X

        if y is None:
            raise ValueError(
                f"{type(self).__name__} requires y to be passed, but the target y is None: "
                "pass the losses as y or an environment."
            )
        X = validate_data(self, X, reset=reset)
        y = check_array(y, ensure_2d=False, allow_nd=True, dtype=np.float64, input_name="y")
        check_consistent_length(X, y)
        if y.ndim == 3:
            _check_unit_interval(y, "y (the losses)")
            if reset:
                self._row_contexts = None
            contexts = self._context_ids(X, y.shape[1])
            source = LossSource.dense_losses(y)
        elif y.ndim in (1, 2):
            contexts, n_contexts = self._row_ids(X, reset)
            if y.ndim == 2:
                _check_unit_interval(y, "y (the losses)")
                self._check_tables(n_contexts, y.shape[1])
                source = LossSource.pooled(y, n_contexts)
            else:
                labels, n_actions = self._labels(y), self._n_label_actions(y, reset)
                self._check_tables(n_contexts, n_actions)
                source = LossSource.labels_for(labels, n_contexts, n_actions)
        else:
            raise ValueError(
                "y must be losses of shape (n_rounds, n_contexts, n_actions), context-free "
                f"losses of shape (n_rounds, n_actions) or labels; got shape {y.shape}."
            )
        self._check_n_actions(source.n_actions)
        return contexts, source, None, X

    def _check_tables(self, n_contexts, n_actions):
        # L, W, Lsnap and the cumulative losses in float64 plus the boolean mask, per
        # context and action.
        check_allocation(
            n_contexts * n_actions * (4 * 8 + 1), type(self).__name__,
            f"the loss and weight tables ({n_contexts} contexts x n_actions={n_actions})",
            "lower n_actions or the number of distinct contexts (rows of X)")

    def _check_n_actions(self, n_actions):
        expected = getattr(self, "n_actions_", None) if self.n_actions is None else self.n_actions
        if expected is not None and n_actions != expected:
            raise ValueError(
                f"The losses have {n_actions} actions, but {type(self).__name__} is "
                f"expecting n_actions={expected}."
            )

    def _labels(self, y):
        if not np.all(y == np.round(y)) or y.min() < 0:
            raise ValueError(
                "1-D y must hold the correct action of each round (integers >= 0), "
                f"got values in [{y.min():.4g}, {y.max():.4g}]."
            )
        return y.astype(np.int64)

    def _n_label_actions(self, y, reset):
        top = int(y.max()) + 1
        if self.n_actions is not None:
            n_actions = self.n_actions
        elif not reset:
            n_actions = self.n_actions_
        else:
            if top > _MAX_ACTIONS:
                # A label is an action index: the policy keeps a weight for every action
                # up to the largest label, so one huge label would size every table.
                raise ValueError(
                    f"1-D y holds the action {top - 1}, past the largest action index "
                    f"{_MAX_ACTIONS - 1} (n_actions is at most 2**20); labels are action "
                    "indices in [0, n_actions): encode them (e.g. with LabelEncoder) first.")
            n_actions = max(2, top)
        if top > n_actions:
            raise ValueError(
                f"1-D y holds actions up to {top - 1}, but n_actions={n_actions}."
            )
        return n_actions

    def _context_ids(self, X, n_contexts):
        if X.shape[1] != 1 or not np.all(X == np.round(X)) or X.min() < 0 \
                or X.max() >= n_contexts:
            raise ValueError(
                "When the losses index contexts, X must be one column of integer context "
                f"ids in [0, {n_contexts}); got shape {X.shape} with values in "
                f"[{X.min():.4g}, {X.max():.4g}]."
            )
        return np.ascontiguousarray(X[:, 0], dtype=np.int64)

    def _row_ids(self, X, reset):
        rows, ids = np.unique(np.asarray(X, dtype=np.float64), axis=0, return_inverse=True)
        if reset:
            self._row_contexts = rows
        return np.ascontiguousarray(ids.reshape(-1), dtype=np.int64), rows.shape[0]

    def _policy_ids(self, X):
        """Context ids of the fitted policy; -1 for a row never seen at fit time."""
        rows = getattr(self, "_row_contexts", None)
        if rows is None:
            return self._context_ids(X, self.n_contexts_)
        lookup = {tuple(row): i for i, row in enumerate(rows)}
        return np.array([lookup.get(tuple(row), -1)
                         for row in np.asarray(X, dtype=np.float64)], dtype=np.int64)

    def _row_of(self, contexts):
        if self._scope == kern.SCOPE_POOLED:
            return np.zeros_like(contexts)
        return contexts

    def _final_estimates(self):
        """Estimates of the final policy (the learner just finished if a new one has no data)."""
        state = self._state
        fresh = state["istate"][kern.I_EPOCH] > 0 and state["istate"][kern.I_POS] == 0
        if self._estimation_code() == kern.EST_DOUBLING and fresh:
            return state["Lsnap"]
        return state["L"]

    def _greedy(self, contexts):
        L = self._final_estimates()
        mask = self._state["mask"]
        known = contexts >= 0
        safe = np.where(known, contexts, 0)
        scores = np.where(mask[safe], L[self._row_of(safe)], np.inf)
        return np.where(known, np.argmin(scores, axis=1), self._fallback).astype(np.int64)

    def _frequency_greedy(self, counts):
        """Action for unseen contexts: greedy on the frequency-weighted loss estimates."""
        L = self._final_estimates()
        if self._scope == kern.SCOPE_POOLED:
            return int(np.argmin(L[0]))
        return int(np.argmin(counts @ L))

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.required = True
        tags.target_tags.single_output = False
        return tags
