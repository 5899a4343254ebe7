"""Graph-of-Nets: plain-torch message passing vs torch.sparse, and model cost/accuracy.

Run: ``python benchmarks/bench_graph.py [--quick] [--json out.json]``.

1. The aggregation kernel behind every encoder (``scatter_sum`` with ``index_add_``)
   against the same sum as a ``torch.sparse.mm`` product, on the synthetic GON's
   block-diagonal inner graphs; and the product the encoders use,
   :class:`~skpaper.graph.MessageOperator` (CSR with a stored transpose), forward and
   backward, against ``torch.sparse.mm`` on the COO matrix of ``sparse_adjacency``.
2. Training the dual encoder (with and without the spring constraint) against the
   single-view baselines: seconds per fit and test accuracy, same data and seed.
"""

import numpy as np
import torch
from _harness import Case, main_cli

from skpaper.datasets import make_synthetic_gon
from skpaper.graph import (
    GraphOfNets,
    GraphOfNetsClassifier,
    InnerGINClassifier,
    MessageOperator,
    OuterGCNClassifier,
    scatter_sum,
    sparse_adjacency,
)


def make_cases(quick):
    torch.set_num_threads(1)
    n_nodes = 300 if quick else 2000
    outer, inner, y = make_synthetic_gon(n_nodes=n_nodes, random_state=0)
    gon = GraphOfNets(outer, inner)
    x = torch.randn(gon.inner_x.shape[0], 64)
    src, dst = (torch.as_tensor(e) for e in gon.inner_edges)
    adj = torch.sparse_coo_tensor(torch.stack([dst, src]), torch.ones(src.shape[0]),
                                  (x.shape[0], x.shape[0])).coalesce().to_sparse_csr()
    assert torch.allclose(scatter_sum(x[src], dst, x.shape[0]), adj @ x, atol=1e-4)

    weights = torch.ones(src.shape[0])
    operator = MessageOperator(dst, src, weights, x.shape[0], x.shape[0])
    coo = sparse_adjacency(dst, src, weights, x.shape[0], x.shape[0])
    states = torch.randn(x.shape[0], 32, requires_grad=True)
    assert torch.allclose(operator @ states, torch.sparse.mm(coo, states), atol=1e-4)

    def forward_backward(product):
        def run():
            product().sum().backward()
        return run

    ids = np.arange(n_nodes).reshape(-1, 1)
    train, test = ids[: n_nodes // 2], ids[n_nodes // 2:]
    common = dict(gon=gon, hidden_dim=32, max_epochs=100 if quick else 200, random_state=0,
                  device="cpu")

    def fit_and_score(make):
        def run():
            model = make().fit(train, y[train[:, 0]])
            return {"test_accuracy": float(model.score(test, y[test[:, 0]]))}
        return run

    return [
        Case(f"inner aggregation, {x.shape[0]} nodes x 64", lambda: scatter_sum(x[src], dst,
                                                                                x.shape[0]),
             lambda: adj @ x, "torch.sparse.mm", items=int(src.shape[0])),
        Case(f"message product forward + backward, {x.shape[0]} nodes x 32",
             forward_backward(lambda: operator @ states),
             forward_backward(lambda: torch.sparse.mm(coo, states)), "torch.sparse.mm (COO)",
             items=int(src.shape[0])),
        Case("dual + constraint vs outer-only GCN",
             fit_and_score(lambda: GraphOfNetsClassifier(**common)),
             fit_and_score(lambda: OuterGCNClassifier(**common)), "outer-only GCN"),
        Case("dual (no constraint) vs inner-only GIN",
             fit_and_score(lambda: GraphOfNetsClassifier(constraint="none", **common)),
             fit_and_score(lambda: InnerGINClassifier(**common)), "inner-only GIN"),
    ]


if __name__ == "__main__":
    main_cli(make_cases, __doc__.splitlines()[0])
