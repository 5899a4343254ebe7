"""Online play against a bookkeeping model of the epochs and the estimation set."""

import numpy as np
from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule

from skpaper.bandits import CrossLearningExp3
from skpaper.bandits import _kernels as kern

N_CONTEXTS, N_ACTIONS, EPOCH = 4, 3, 5


class CrossLearningBookkeeping(RuleBasedStateMachine):
    """Rounds, epochs and the previous-epoch estimation set follow the protocol."""

    def __init__(self):
        super().__init__()
        self.policy = CrossLearningExp3(n_actions=N_ACTIONS, horizon=100, epoch_length=EPOCH,
                                        random_state=0)
        self.rounds = 0
        self.current, self.previous = [], []

    @rule(context=st.integers(0, N_CONTEXTS - 1),
          losses=st.lists(st.floats(0, 1), min_size=N_CONTEXTS, max_size=N_CONTEXTS))
    def play(self, context, losses):
        action = self.policy.select(context)
        assert 0 <= action < N_ACTIONS
        before = self.policy.loss_estimates_.copy() if self.rounds else None
        self.policy.update(context, action, losses)
        self.rounds += 1
        self.current.append(context)
        if before is not None:
            changed = np.flatnonzero((self.policy.loss_estimates_ != before).any(axis=0))
            # Only the played action's column moves, and only after the first epoch.
            assert set(changed) <= {action}
            if not self.previous:
                assert changed.size == 0
        if len(self.current) == EPOCH:
            self.previous, self.current = self.current, []

    @invariant()
    def counters_match(self):
        if not self.rounds:
            return
        state = self.policy._state
        istate = state["istate"]
        assert istate[kern.I_T] == self.rounds
        assert istate[kern.I_EPOCH] == self.rounds // EPOCH
        assert istate[kern.I_POS] == self.rounds % EPOCH
        expected = np.bincount(self.previous, minlength=N_CONTEXTS)
        np.testing.assert_array_equal(state["est_w"], expected)
        probabilities = state["W"] / state["Z"][:, None]
        np.testing.assert_allclose(probabilities.sum(axis=1), 1.0)


CrossLearningBookkeeping.TestCase.settings = settings(max_examples=20, stateful_step_count=30,
                                                      deadline=None)
test_cross_learning_bookkeeping = CrossLearningBookkeeping.TestCase
