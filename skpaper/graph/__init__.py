"""Graph neural networks: GNNs for quadratic programs (and, later, Graph-of-Net)."""

from ..datasets._graph import make_random_lcqp, make_wl_indistinguishable_milp_pair
from ._message_passing import scatter_mean, scatter_sum, two_layer_mlp
from ._qp import check_qp, qp_objective, qp_violation, solve_qps
from ._qp_encoding import QPGraph, QPGraphEncoder
from ._qp_gnn import QPGNN, QPGNNFeasibilityClassifier, QPGNNRegressor, QPGNNWarmStart

__all__ = [
    "QPGNN",
    "QPGNNFeasibilityClassifier",
    "QPGNNRegressor",
    "QPGNNWarmStart",
    "QPGraph",
    "QPGraphEncoder",
    "check_qp",
    "make_random_lcqp",
    "make_wl_indistinguishable_milp_pair",
    "qp_objective",
    "qp_violation",
    "scatter_mean",
    "scatter_sum",
    "solve_qps",
    "two_layer_mlp",
]
