"""Graph-of-Nets: an outer graph whose nodes are themselves graphs.

The container :class:`GraphOfNets` holds the outer adjacency and one inner graph per
outer node, and precomputes the block-diagonal batch that the encoders consume.
"""

import numpy as np
import scipy.sparse as sp

__all__ = ["GraphOfNets"]


def _as_square_sparse(adj, name):
    if sp.issparse(adj):
        adj = sp.csr_matrix(adj, dtype=np.float64)
    else:
        arr = np.asarray(adj, dtype=np.float64)
        if arr.ndim != 2:
            raise ValueError(f"{name} must be a 2-D adjacency matrix, got {arr.ndim} dims.")
        adj = sp.csr_matrix(arr)
    if adj.shape[0] != adj.shape[1]:
        raise ValueError(f"{name} must be square, got shape {adj.shape}.")
    if adj.nnz and not np.all(np.isfinite(adj.data)):
        raise ValueError(f"{name} must have finite entries.")
    return adj


class GraphOfNets:
    """An outer graph of N nodes, each carrying an inner graph (a "graph of nets").

    Parameters
    ----------
    outer_adj : array-like or sparse matrix of shape (N, N)
        Outer adjacency; it is symmetrised (A + A^T > 0) and self-loops are dropped.
    inner_graphs : list of (adjacency, features or None)
        One inner graph per outer node: an (n_i, n_i) adjacency and optional (n_i, d)
        node features (the same d for all). Without features every inner node gets a
        one-hot of its degree (capped at ``max_degree``), a structural,
        label-independent signal.
    node_features : array-like of shape (N, d_outer) or None, default=None
        Optional features of the outer nodes.
    max_degree : int, default=16
        Cap of the degree one-hot used when inner features are missing.

    Attributes
    ----------
    n_nodes : int
    outer_edges : ndarray of shape (2, n_edges)
        Both directions of every undirected outer edge.
    inner_x : ndarray of shape (total_inner_nodes, d)
    inner_edges : ndarray of shape (2, n_inner_edges)
        Block-diagonal edge list over all inner graphs.
    inner_graph_index : ndarray of shape (total_inner_nodes,)
        Outer node that each inner node belongs to.

    Examples
    --------
    >>> import numpy as np
    >>> from skpaper.graph import GraphOfNets
    >>> triangle = np.ones((3, 3)) - np.eye(3)
    >>> gon = GraphOfNets(np.array([[0, 1], [1, 0]]), [(triangle, None), (triangle, None)])
    >>> gon.n_nodes, gon.inner_x.shape[0]
    (2, 6)
    """

    def __init__(self, outer_adj, inner_graphs, node_features=None, max_degree=16):
        outer = _as_square_sparse(outer_adj, "outer_adj")
        n = outer.shape[0]
        if n == 0:
            raise ValueError("outer_adj must have at least one node.")
        try:
            inner_graphs = list(inner_graphs)
        except TypeError:
            raise TypeError("inner_graphs must be a list of (adjacency, features) pairs, got "
                            f"{type(inner_graphs).__name__}.") from None
        if len(inner_graphs) != n:
            raise ValueError(f"inner_graphs must have one graph per outer node ({n}), got "
                             f"{len(inner_graphs)}.")
        if int(max_degree) < 1:
            raise ValueError(f"max_degree must be a positive int, got {max_degree!r}.")
        sym = ((outer + outer.T) > 0).astype(np.float64).tolil()
        sym.setdiag(0)
        sym = sym.tocsr()
        sym.eliminate_zeros()
        self.outer_adj = sym
        self.n_nodes = n
        coo = sym.tocoo()
        self.outer_edges = np.vstack([coo.row, coo.col]).astype(np.int64)

        feats, edges, index, dims = [], [], [], set()
        offset = 0
        for i, item in enumerate(inner_graphs):
            if not (isinstance(item, (tuple, list)) and len(item) == 2):
                raise ValueError(f"inner_graphs[{i}] must be an (adjacency, features) pair.")
            adj = _as_square_sparse(item[0], f"inner_graphs[{i}] adjacency")
            k = adj.shape[0]
            if k == 0:
                raise ValueError(f"inner_graphs[{i}] has no nodes.")
            adj = ((adj + adj.T) > 0).astype(np.float64)
            if item[1] is None:
                degree = np.minimum(np.asarray(adj.sum(axis=1)).ravel().astype(int),
                                    int(max_degree))
                x = np.eye(int(max_degree) + 1)[degree]
                dims.add(("degree", x.shape[1]))
            else:
                x = np.asarray(item[1], dtype=np.float64)
                if x.ndim != 2 or x.shape[0] != k:
                    raise ValueError(f"inner_graphs[{i}] features must have shape ({k}, d), "
                                     f"got {x.shape}.")
                if not np.all(np.isfinite(x)):
                    raise ValueError(f"inner_graphs[{i}] features must be finite.")
                dims.add(("given", x.shape[1]))
            coo = sp.coo_matrix(adj)
            edges.append(np.vstack([coo.row, coo.col]) + offset)
            feats.append(x)
            index.append(np.full(k, i))
            offset += k
        if len(dims) != 1:
            raise ValueError("all inner graphs must have features of the same kind and width "
                             f"(or none), got {sorted(dims)}.")
        self.inner_x = np.vstack(feats).astype(np.float32)
        self.inner_edges = np.hstack(edges).astype(np.int64)
        self.inner_graph_index = np.concatenate(index).astype(np.int64)
        self.inner_sizes = np.bincount(self.inner_graph_index, minlength=n)

        if node_features is not None:
            node_features = np.asarray(node_features, dtype=np.float32)
            if node_features.ndim != 2 or node_features.shape[0] != n:
                raise ValueError(f"node_features must have shape ({n}, d), got "
                                 f"{node_features.shape}.")
        self.node_features = node_features

    @classmethod
    def from_networkx(cls, outer, inner_graphs, feature_key=None, **kwargs):
        """Build from a networkx outer graph and a list of networkx inner graphs.

        Outer nodes are taken in ``list(outer.nodes)`` order, matched to ``inner_graphs``
        by position.

        Parameters
        ----------
        outer : networkx.Graph
            The outer graph.
        inner_graphs : list of networkx.Graph
            One inner graph per outer node.
        feature_key : str or None, default=None
            Node attribute holding the inner node features; ``None`` passes no
            features.
        **kwargs
            Passed to the :class:`GraphOfNets` constructor.

        Returns
        -------
        gon : GraphOfNets
            The graph of nets.
        """
        import networkx as nx

        outer_adj = nx.to_scipy_sparse_array(outer, nodelist=list(outer.nodes), format="csr")
        pairs = []
        for g in inner_graphs:
            nodes = list(g.nodes)
            adj = nx.to_scipy_sparse_array(g, nodelist=nodes, format="csr")
            x = None if feature_key is None else np.array([g.nodes[v][feature_key]
                                                           for v in nodes], dtype=float)
            pairs.append((adj, x))
        return cls(outer_adj, pairs, **kwargs)

    def __repr__(self):
        n_outer_edges = self.outer_edges.shape[1] // 2
        return (f"GraphOfNets(n_nodes={self.n_nodes}, n_outer_edges={n_outer_edges}, "
                f"n_inner_nodes={self.inner_x.shape[0]})")
