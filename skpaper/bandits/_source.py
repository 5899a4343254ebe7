"""Loss sources: what a policy plays against, in the layout the numba kernels read.

A source is an oblivious adversary over ``n_rounds`` rounds, ``n_contexts``
contexts and ``n_actions`` actions. It never materialises the (T, C, K) loss
tensor unless it was given one: the kernels ask for one column
``l_t(., a)`` at a time.
"""

from dataclasses import dataclass, field

import numpy as np

from . import _kern as kern


def _empty(shape, dtype=np.float64):
    # Unused arrays of a source keep fixed dtypes and ranks, so the kernels compile once.
    return field(default_factory=lambda: np.zeros(shape, dtype=dtype))


@dataclass
class LossSource:
    """Arrays of one oblivious adversary, sliced to the rounds that are played."""

    kind: int
    n_rounds: int
    n_contexts: int
    n_actions: int
    mask: np.ndarray
    dense: np.ndarray = _empty((1, 1, 1))
    values: np.ndarray = _empty(1)
    bids: np.ndarray = _empty(1)
    thresholds: np.ndarray = _empty(1)
    arm_losses: np.ndarray = _empty((1, 1))
    labels: np.ndarray = _empty(1, np.int64)

    @classmethod
    def dense_losses(cls, losses):
        losses = np.require(losses, dtype=np.float64, requirements=["C", "W"])
        n_rounds, n_contexts, n_actions = losses.shape
        return cls(kern.SRC_DENSE, n_rounds, n_contexts, n_actions,
                   np.ones((n_contexts, n_actions), dtype=bool), dense=losses)

    @classmethod
    def labels_for(cls, labels, n_contexts, n_actions):
        labels = np.require(labels, dtype=np.int64, requirements=["C", "W"])
        return cls(kern.SRC_LABELS, labels.shape[0], n_contexts, n_actions,
                   np.ones((n_contexts, n_actions), dtype=bool), labels=labels)

    @classmethod
    def pooled(cls, losses, n_contexts):
        losses = np.require(losses, dtype=np.float64, requirements=["C", "W"])
        n_rounds, n_actions = losses.shape
        return cls(kern.SRC_POOLED, n_rounds, n_contexts, n_actions,
                   np.ones((n_contexts, n_actions), dtype=bool), arm_losses=losses)

    def arrays(self):
        """The positional arguments the kernels take after ``kind``."""
        return (self.dense, self.values, self.bids, self.thresholds, self.arm_losses,
                self.labels, self.mask)

    def cumulative_losses(self):
        """``S[c, a] = sum_t l_t(c, a)`` over the rounds of the source."""
        shape = (self.n_contexts, self.n_actions)
        if self.kind == kern.SRC_DENSE:
            return self.dense.sum(axis=0)
        if self.kind == kern.SRC_AUCTION:
            wins = (self.bids[None, :] >= self.thresholds[:, None]).sum(axis=0)
            margin = self.values[:, None] - self.bids[None, :]
            return 0.5 * (self.n_rounds - margin * wins[None, :])
        if self.kind == kern.SRC_SLEEPING:
            per_arm = self.arm_losses.sum(axis=0)
            return np.where(self.mask, per_arm[None, :], float(self.n_rounds))
        if self.kind == kern.SRC_LABELS:
            hits = np.bincount(self.labels, minlength=self.n_actions)[: self.n_actions]
            return np.broadcast_to(self.n_rounds - hits, shape).astype(np.float64)
        return np.broadcast_to(self.arm_losses.sum(axis=0), shape).copy()

    def best_policy(self):
        """The best fixed policy in hindsight: ``argmin_a S[c, a]`` per context."""
        S = np.where(self.mask, self.cumulative_losses(), np.inf)
        return np.argmin(S, axis=1).astype(np.int64)

    def column(self, t, action):
        out = np.empty(self.n_contexts)
        kern.loss_column(self.kind, t, action, *self.arrays(), out)
        return out

    def entries(self, contexts, actions):
        """``l_t(contexts[t], actions[t])`` for every round."""
        contexts = np.ascontiguousarray(contexts, dtype=np.int64)
        actions = np.ascontiguousarray(actions, dtype=np.int64)
        return kern.loss_entries(self.kind, contexts, actions, *self.arrays())
