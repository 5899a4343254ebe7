"""Graph encoding of (mixed-integer) linearly constrained QPs for message passing.

Constraint nodes carry (b_i, is_equality) after ``>=`` rows are negated into ``<=`` rows
(a ranged row ``l <= a x <= u`` becomes the two rows ``a x <= u`` and ``-a x <= -l``; a row
with no finite side is dropped); variable nodes carry (c_j, l_j, u_j, finite(l_j),
finite(u_j), integer_j) with bounds clipped and scaled; constraint-variable edges carry A_ij
and variable-variable edges carry Q_jj' (diagonal included), as in Chen et al. (ICML 2025),
Section 3.
"""

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
import torch

from .._ext._hashing import murmurhash3_x64_64
from ._qp import _as_instance_list, _constraint_rows, check_qp

__all__ = ["QPGraph", "QPGraphEncoder"]

N_VARIABLE_FEATURES = 6
N_CONSTRAINT_FEATURES = 2
#: Largest coefficient magnitude accepted for encoding. Messages multiply coefficients by
#: hidden states and sum them, so anything near float32's 3.4e38 overflows to inf/NaN.
_FLOAT32_LIMIT = 1e15


def _nonzeros(matrix):
    """Row indices, column indices and values of the nonzero entries (dense or sparse)."""
    if sp.issparse(matrix):
        coo = sp.coo_matrix(matrix)
        keep = coo.data != 0
        order = np.lexsort((coo.col[keep], coo.row[keep]))
        return coo.row[keep][order], coo.col[keep][order], coo.data[keep][order]
    rows, cols = np.nonzero(matrix)
    return rows, cols, matrix[rows, cols]


@dataclass
class QPGraph:
    """Arrays of one encoded instance (numpy, float32/int64).

    Parameters
    ----------
    var_features : ndarray of shape (n, n_variable_features)
        Variable-node features: ``c``, scaled bounds, their finite flags, the
        integer flag, then any random features.
    con_features : ndarray of shape (m, 2)
        Constraint-node features: scaled right-hand side and equality flag.
    a_edges : ndarray of shape (2, nnz_A)
        Constraint index and variable index of each nonzero of ``A``.
    a_weights : ndarray of shape (nnz_A,)
        The nonzeros of ``A``.
    q_edges : ndarray of shape (2, nnz_Q)
        Receiving and sending variable of each nonzero of ``Q``.
    q_weights : ndarray of shape (nnz_Q,)
        The nonzeros of ``Q``.

    Examples
    --------
    >>> from skpaper.datasets import make_random_lcqp
    >>> from skpaper.graph import QPGraphEncoder
    >>> graph = QPGraphEncoder().encode(make_random_lcqp(1, 5, 20, 30, random_state=0)[0])
    >>> graph.n_variables, graph.n_constraints
    (20, 5)
    """

    var_features: np.ndarray  # (n, 6)
    con_features: np.ndarray  # (m, 2)
    a_edges: np.ndarray  # (2, nnz_A): constraint index, variable index
    a_weights: np.ndarray  # (nnz_A,)
    q_edges: np.ndarray  # (2, nnz_Q): receiving variable, sending variable
    q_weights: np.ndarray  # (nnz_Q,)

    @property
    def n_variables(self):
        """Number of variable nodes."""
        return self.var_features.shape[0]

    @property
    def n_constraints(self):
        """Number of constraint nodes."""
        return self.con_features.shape[0]


class QPGraphEncoder:
    """Turn QP dicts into the paper's graph, and batches of graphs into tensors.

    Parameters
    ----------
    bound_scale : float, default=10.0
        Bounds and right-hand sides are divided by this (without input scaling the fit
        stalls: the bounds dominate the features).
    bound_clip : float, default=50.0
        Infinite (or huge) bounds are clipped to +-``bound_clip`` before scaling; the
        finite flags keep the information.
    random_features : int, default=0
        Number of extra variable features drawn from a generator seeded by a hash of the
        instance and ``feature_seed``: deterministic per instance, but they break the
        symmetries that make WL-equivalent mixed-integer instances indistinguishable.
    feature_seed : int, default=0
        Seed mixed into the hash that draws the random features.

    Examples
    --------
    >>> from skpaper.datasets import make_random_lcqp
    >>> from skpaper.graph import QPGraphEncoder
    >>> graph = QPGraphEncoder().encode(make_random_lcqp(1, 5, 20, 30, random_state=0)[0])
    >>> graph.var_features.shape, graph.con_features.shape, graph.a_edges.shape
    ((20, 6), (5, 2), (2, 30))
    """

    def __init__(self, bound_scale=10.0, bound_clip=50.0, random_features=0, feature_seed=0):
        if not bound_scale > 0:
            raise ValueError(f"bound_scale must be positive, got {bound_scale!r}.")
        if not bound_clip > 0:
            raise ValueError(f"bound_clip must be positive, got {bound_clip!r}.")
        if int(random_features) != random_features or random_features < 0:
            raise ValueError(f"random_features must be a non-negative int, got "
                             f"{random_features!r}.")
        self.bound_scale = float(bound_scale)
        self.bound_clip = float(bound_clip)
        self.random_features = int(random_features)
        self.feature_seed = int(feature_seed)

    @property
    def n_variable_features(self):
        """Number of features of a variable node (six, plus the random features)."""
        return N_VARIABLE_FEATURES + self.random_features

    def encode(self, instance, name="X"):
        """Encode one QP dict (validated with :func:`check_qp`) as a :class:`QPGraph`.

        Parameters
        ----------
        instance : dict
            A QP instance, in either format of :func:`check_qp`.
        name : str, default="X"
            How the instance is named in error messages.

        Returns
        -------
        graph : QPGraph
            The arrays of the instance's graph.

        Raises
        ------
        ValueError
            If the instance is invalid, or a coefficient does not fit in float32
            (the network's precision): rescale such an instance first.
        """
        qp = check_qp(instance, name=name)
        rows, b, is_eq = _constraint_rows(qp)
        clip = self.bound_clip
        lb, ub = qp["lb"], qp["ub"]
        var = np.column_stack([
            qp["c"],
            np.clip(lb, -clip, clip) / self.bound_scale,
            np.clip(ub, -clip, clip) / self.bound_scale,
            np.isfinite(lb), np.isfinite(ub), qp["integer"],
        ])
        if self.random_features:
            var = np.column_stack([var, self._random_features(qp)])
        con = np.column_stack([b / self.bound_scale, is_eq]) if len(b) else np.zeros((0, 2))
        a_rows, a_cols, a_vals = _nonzeros(rows)
        q_rows, q_cols, q_vals = _nonzeros(qp["Q"])
        for key, values in (("c", var[:, 0]), ("b (scaled)", con[:, 0]), ("A", a_vals),
                            ("Q", q_vals)):
            if values.size and np.abs(values).max() > _FLOAT32_LIMIT:
                raise ValueError(
                    f"{name}: {key} has entries up to {np.abs(values).max():.3g}, beyond what "
                    f"the network computes with (|v| <= {_FLOAT32_LIMIT:.0e}); rescale the "
                    "instance (e.g. divide Q, c and r by a common factor).")
        return QPGraph(
            var_features=var.astype(np.float32), con_features=con.astype(np.float32),
            a_edges=np.vstack([a_rows, a_cols]).astype(np.int64),
            a_weights=a_vals.astype(np.float32),
            q_edges=np.vstack([q_rows, q_cols]).astype(np.int64),
            q_weights=q_vals.astype(np.float32),
        )

    def _random_features(self, qp):
        def raw(value):
            if sp.issparse(value):
                value = sp.csr_matrix(value)
                return value.indptr.tobytes() + value.indices.tobytes() + value.data.tobytes()
            return np.ascontiguousarray(value).tobytes()

        digest = b"".join(raw(qp[k]) for k in ("Q", "c", "A", "row_lower", "row_upper", "lb",
                                                  "ub", "integer"))
        seed = murmurhash3_x64_64(digest, self.feature_seed % 2**32)
        rng = np.random.default_rng(seed)
        return rng.uniform(size=(qp["c"].shape[0], self.random_features))

    def encode_all(self, X):
        """Encode a list of QP dicts.

        Parameters
        ----------
        X : list of dict
            QP instances.

        Returns
        -------
        graphs : list of QPGraph
            One graph per instance.
        """
        return [self.encode(inst, name=f"X[{i}]") for i, inst in enumerate(_as_instance_list(X))]

    @staticmethod
    def collate(graphs, device="cpu", dtype=torch.float32):
        """Stack graphs into one disjoint union: a dict of tensors with graph indices.

        Parameters
        ----------
        graphs : list of QPGraph
            The graphs of the batch.
        device : str or torch.device, default="cpu"
            Device of the tensors.
        dtype : torch.dtype, default=torch.float32
            Floating dtype of the features and edge weights.

        Returns
        -------
        batch : dict
            ``var_x``, ``con_x``, ``a_edges``, ``a_w``, ``q_edges``, ``q_w`` (node
            indices offset per graph), ``var_graph`` and ``con_graph`` (graph of
            each node) and ``n_graphs``.
        """
        var_off = np.cumsum([0] + [g.n_variables for g in graphs])
        con_off = np.cumsum([0] + [g.n_constraints for g in graphs])

        def cat(arrays, axis=0):
            return torch.as_tensor(np.concatenate(arrays, axis=axis), device=device)

        a_edges = [g.a_edges + np.array([[con_off[k]], [var_off[k]]])
                   for k, g in enumerate(graphs)]
        q_edges = [g.q_edges + var_off[k] for k, g in enumerate(graphs)]
        return {
            "var_x": cat([g.var_features for g in graphs]).to(dtype),
            "con_x": cat([g.con_features for g in graphs]).to(dtype),
            "a_edges": cat(a_edges, axis=1), "a_w": cat([g.a_weights for g in graphs]).to(dtype),
            "q_edges": cat(q_edges, axis=1), "q_w": cat([g.q_weights for g in graphs]).to(dtype),
            "var_graph": cat([np.full(g.n_variables, k) for k, g in enumerate(graphs)]),
            "con_graph": cat([np.full(g.n_constraints, k, dtype=np.int64)
                              for k, g in enumerate(graphs)]),
            "n_graphs": len(graphs),
            "var_offsets": var_off,
        }
