"""Common-check settings for :mod:`skpaper.graph`."""

import numpy as np


def _small_gon():
    from skpaper.datasets import make_synthetic_gon
    from skpaper.graph import GraphOfNets

    outer, inner, _ = make_synthetic_gon(n_nodes=30, random_state=0)
    return GraphOfNets(outer, inner)


_GON = _small_gon()

INIT_PARAMS = {
    "GraphOfNetsClassifier": {"gon": _GON, "hidden_dim": 8, "max_epochs": 3, "device": "cpu",
                              "random_state": 0},
    "InnerGINClassifier": {"gon": _GON, "hidden_dim": 8, "max_epochs": 3, "device": "cpu",
                           "random_state": 0},
    "OuterGCNClassifier": {"gon": _GON, "hidden_dim": 8, "max_epochs": 3, "device": "cpu",
                           "random_state": 0},
    "QPGNNFeasibilityClassifier": {"hidden_dim": 8, "max_epochs": 3, "device": "cpu",
                                   "random_state": 0},
    "QPGNNRegressor": {"hidden_dim": 8, "max_epochs": 3, "device": "cpu", "random_state": 0},
}
EXPECTED_FAILED_CHECKS = {}


def _qp_feasibility():
    from skpaper.datasets import make_random_lcqp
    from skpaper.graph import solve_qps

    X = make_random_lcqp(16, 3, 6, 8, random_state=0)
    feasible, _, _, status = solve_qps(X, return_status=True)
    assert np.isin(status, ("optimal", "infeasible")).all()
    return X, np.asarray(feasible)


def _qp_objective():
    from skpaper.datasets import make_random_lcqp
    from skpaper.graph import solve_qps

    X = make_random_lcqp(24, 3, 6, 8, random_state=0)
    _, objective, _, status = solve_qps(X, return_status=True)
    solved = status == "optimal"
    return [x for x, ok in zip(X, solved) if ok], objective[solved]


def _gon_ids():
    from skpaper.datasets import make_synthetic_gon

    _, _, y = make_synthetic_gon(n_nodes=30, random_state=0)
    return np.arange(30).reshape(-1, 1), y


FIT_DATA = {
    "GraphOfNetsClassifier": _gon_ids,
    "InnerGINClassifier": _gon_ids,
    "OuterGCNClassifier": _gon_ids,
    "QPGNNFeasibilityClassifier": _qp_feasibility,
    "QPGNNRegressor": _qp_objective,
}
