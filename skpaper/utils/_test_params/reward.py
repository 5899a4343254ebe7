"""Small settings for the common checks of `skpaper.reward`.

RATE takes a rewriter and a reward model as callables; the common checks feed it
numeric rows, so the callables below treat each row as a "response": the
rewrite writes the target attribute into the first entry and the reward sums
the numeric entries.
"""

import numbers

import numpy as np


def column_rewriter(texts, target_w):
    """Set the first entry of every row to ``target_w``."""
    rows = np.array(texts, dtype=object)
    rows[:, 0] = target_w
    return rows


def row_sum_reward(texts, prompts=None):
    """Sum the numeric entries of every row."""
    return np.array(
        [sum(float(v) for v in np.ravel(row) if isinstance(v, numbers.Real)) for row in texts]
    )


INIT_PARAMS = {"RATE": {"rewriter": column_rewriter, "reward_model": row_sum_reward}}

EXTRA_INSTANCES = {"RATE": [{"paired": False, "cache": False}]}

EXPECTED_FAILED_CHECKS = {
    "RATE": {
        "check_fit1d": (
            "X is a sequence of responses, so a 1-D X (one text per entry) is the "
            "natural input and is accepted rather than rejected"
        ),
    }
}
