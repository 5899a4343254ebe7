"""Common-check settings for :mod:`skpaper.graph`."""

import numpy as np

INIT_PARAMS = {
    "QPGNNFeasibilityClassifier": {"hidden_dim": 8, "max_epochs": 3, "device": "cpu",
                                   "random_state": 0},
    "QPGNNRegressor": {"hidden_dim": 8, "max_epochs": 3, "device": "cpu", "random_state": 0},
}
EXPECTED_FAILED_CHECKS = {}


def _qp_feasibility():
    from skpaper.datasets import make_random_lcqp
    from skpaper.graph import solve_qps

    X = make_random_lcqp(16, 3, 6, 8, random_state=0)
    return X, solve_qps(X)[0]


def _qp_objective():
    from skpaper.datasets import make_random_lcqp
    from skpaper.graph import solve_qps

    X = make_random_lcqp(24, 3, 6, 8, random_state=0)
    feasible, objective, solutions = solve_qps(X)
    return [x for x, f in zip(X, feasible) if f], objective[feasible]


FIT_DATA = {
    "QPGNNFeasibilityClassifier": _qp_feasibility,
    "QPGNNRegressor": _qp_objective,
}
