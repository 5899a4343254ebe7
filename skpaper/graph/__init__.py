"""Graph neural networks: GNNs for quadratic programs and Graph-of-Net node classification."""

from ..datasets._graph import (
    make_random_lcqp,
    make_synthetic_gon,
    make_wl_indistinguishable_milp_pair,
)
from ._gon import GraphOfNets
from ._gon_models import GraphOfNetsClassifier, InnerGINClassifier, OuterGCNClassifier
from ._message_passing import (
    MessageOperator,
    scatter_mean,
    scatter_sum,
    sparse_adjacency,
    two_layer_mlp,
)
from ._qp import check_qp, qp_objective, qp_violation, solve_qps
from ._qp_encoding import QPGraph, QPGraphEncoder
from ._qp_gnn import QPGNN, QPGNNFeasibilityClassifier, QPGNNRegressor, QPGNNWarmStart

__all__ = [
    "GraphOfNets",
    "GraphOfNetsClassifier",
    "InnerGINClassifier",
    "MessageOperator",
    "OuterGCNClassifier",
    "QPGNN",
    "QPGNNFeasibilityClassifier",
    "QPGNNRegressor",
    "QPGNNWarmStart",
    "QPGraph",
    "QPGraphEncoder",
    "check_qp",
    "make_random_lcqp",
    "make_synthetic_gon",
    "make_wl_indistinguishable_milp_pair",
    "qp_objective",
    "qp_violation",
    "scatter_mean",
    "scatter_sum",
    "solve_qps",
    "sparse_adjacency",
    "two_layer_mlp",
]
