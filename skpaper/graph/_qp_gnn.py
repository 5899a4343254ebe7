"""GNNs that represent (mixed-integer) linearly constrained QPs (Chen et al., ICML 2025)."""

import time
import warnings
from numbers import Integral, Real

import numpy as np
import torch
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin
from sklearn.metrics import r2_score
from sklearn.preprocessing import LabelEncoder
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted
from torch import nn

from ..nn._base import BaseTorchEstimator
from ..utils._docstring import Substitution, torch_parameter_docs
from ..utils._sklearn import HasMethods, Interval, StrOptions, _fit_context
from ._message_passing import MessageOperator, scatter_mean, scatter_sum, two_layer_mlp
from ._qp import _as_instance_list, _osqp_data, _solve_osqp, check_qp, qp_objective
from ._qp_encoding import N_CONSTRAINT_FEATURES, QPGraphEncoder

__all__ = ["QPGNN", "QPGNNFeasibilityClassifier", "QPGNNRegressor", "QPGNNWarmStart"]


class QPGNN(nn.Module):
    """The paper's message-passing network on the QP graph.

    Each layer is a constraint half-step, h^C_i <- g_C([h^C_i, sum_j A_ij f_V(h^V_j)]),
    followed by a variable half-step, h^V_j <- g_V([h^V_j, sum_i A_ij f_C(h^C_i),
    sum_j' Q_jj' f_Q(h^V_j')]) that uses the new constraint states. With
    ``mi_messages=True`` a message is f([A_ij, h]) instead of A_ij f(h) (the
    mixed-integer variant).

    Parameters
    ----------
    n_var_features : int
        Number of features of a variable node.
    n_con_features : int
        Number of features of a constraint node.
    hidden_dim : int
        Width of every embedding.
    n_layers : int
        Number of message-passing layers.
    readout : {"graph", "node"}
        ``"graph"``: r([mean_j h^V_j, mean_i h^C_i]) per instance; ``"node"``:
        r([h^V_j, mean h^V, mean h^C]) per variable.
    n_outputs : int, default=1
        Outputs of the readout per instance (``"graph"``) or per variable.
    mi_messages : bool, default=False
        Mixed-integer message form f([A_ij, h]) instead of A_ij f(h).

    Examples
    --------
    >>> from skpaper.graph import QPGNN
    >>> net = QPGNN(n_var_features=4, n_con_features=3, hidden_dim=8, n_layers=2,
    ...             readout="graph")
    >>> len(net.g_var)
    2
    """

    def __init__(self, n_var_features, n_con_features, hidden_dim, n_layers, readout,
                 n_outputs=1, mi_messages=False):
        super().__init__()
        h = hidden_dim
        self.readout = readout
        self.mi_messages = mi_messages
        self.embed_var = nn.Sequential(nn.Linear(n_var_features, h), nn.ReLU())
        self.embed_con = nn.Sequential(nn.Linear(n_con_features, h), nn.ReLU())
        msg_in = h + 1 if mi_messages else h
        self.f_var = nn.ModuleList(two_layer_mlp(msg_in, h, h) for _ in range(n_layers))
        self.f_con = nn.ModuleList(two_layer_mlp(msg_in, h, h) for _ in range(n_layers))
        self.f_q = nn.ModuleList(two_layer_mlp(msg_in, h, h) for _ in range(n_layers))
        self.g_con = nn.ModuleList(two_layer_mlp(2 * h, h, h) for _ in range(n_layers))
        self.g_var = nn.ModuleList(two_layer_mlp(3 * h, h, h) for _ in range(n_layers))
        read_in = 2 * h if readout == "graph" else 3 * h
        self.head = two_layer_mlp(read_in, h, n_outputs)

    def _aggregate(self, f, states, receivers, senders, weights, n_receivers, matrix):
        if self.mi_messages:
            messages = f(torch.cat([weights.unsqueeze(-1), states[senders]], dim=-1))
            return scatter_sum(messages, receivers, n_receivers)
        # sum_s w_rs f(h_s) as one sparse product (faster than gather + index_add_).
        return matrix @ f(states)

    def forward(self, batch):
        """Run the message passing and the readout on a batch of QP graphs.

        Parameters
        ----------
        batch : dict
            A batch of :meth:`QPGraphEncoder.collate`: node features ``var_x`` and
            ``con_x``, edges and weights of ``A`` and ``Q``, node-to-graph indices
            and ``n_graphs``. The sparse adjacency matrices are cached in it.

        Returns
        -------
        out : torch.Tensor
            ``(n_graphs, n_outputs)`` for the graph readout, ``(n_variables,)``
            for the node readout.
        """
        hv = self.embed_var(batch["var_x"])
        hc = self.embed_con(batch["con_x"])
        con_idx, var_idx = batch["a_edges"]
        q_recv, q_send = batch["q_edges"]
        n_var, n_con = hv.shape[0], hc.shape[0]
        a_w, q_w = batch["a_w"], batch["q_w"]
        if not self.mi_messages and "a_matrix" not in batch:
            batch["a_matrix"] = MessageOperator(con_idx, var_idx, a_w, n_con, n_var)
            batch["a_matrix_t"] = MessageOperator(var_idx, con_idx, a_w, n_var, n_con)
            batch["q_matrix"] = MessageOperator(q_recv, q_send, q_w, n_var, n_var)
        for f_v, f_c, f_q, g_c, g_v in zip(self.f_var, self.f_con, self.f_q, self.g_con,
                                           self.g_var):
            to_con = self._aggregate(f_v, hv, con_idx, var_idx, a_w, n_con,
                                     batch.get("a_matrix"))
            hc = torch.relu(g_c(torch.cat([hc, to_con], dim=-1)))
            from_con = self._aggregate(f_c, hc, var_idx, con_idx, a_w, n_var,
                                       batch.get("a_matrix_t"))
            from_q = self._aggregate(f_q, hv, q_recv, q_send, q_w, n_var,
                                     batch.get("q_matrix"))
            hv = torch.relu(g_v(torch.cat([hv, from_con, from_q], dim=-1)))
        n_graphs = batch["n_graphs"]
        mean_v = scatter_mean(hv, batch["var_graph"], n_graphs)
        mean_c = scatter_mean(hc, batch["con_graph"], n_graphs)
        if self.readout == "graph":
            return self.head(torch.cat([mean_v, mean_c], dim=-1))
        g = batch["var_graph"]
        return self.head(torch.cat([hv, mean_v[g], mean_c[g]], dim=-1)).squeeze(-1)


class _BaseQPGNN(BaseTorchEstimator):
    """Shared fit/predict machinery: X is a list of QP dicts."""

    _parameter_constraints = {
        **BaseTorchEstimator._parameter_constraints,
        "hidden_dim": [Interval(Integral, 1, 4096, closed="both")],
        "n_layers": [Interval(Integral, 1, 256, closed="both")],
        "mi_messages": ["boolean"],
        "random_features": [Interval(Integral, 0, 4096, closed="both")],
        "bound_scale": [Interval(Real, 0, None, closed="neither")],
    }
    _readout = "graph"

    def __init__(self, *, hidden_dim=64, n_layers=2, mi_messages=False, random_features=0,
                 bound_scale=10.0, max_epochs=300, batch_size=32, lr=1e-3, device="auto",
                 random_state=None, verbose=0, callbacks=None, inference_dtype="float32"):
        super().__init__(max_epochs=max_epochs, batch_size=batch_size, lr=lr, device=device,
                         random_state=random_state, verbose=verbose, callbacks=callbacks,
                         inference_dtype=inference_dtype)
        self.hidden_dim = hidden_dim
        self.n_layers = n_layers
        self.mi_messages = mi_messages
        self.random_features = random_features
        self.bound_scale = bound_scale

    def _encoder(self):
        return QPGraphEncoder(bound_scale=self.bound_scale,
                              random_features=self.random_features,
                              feature_seed=getattr(self, "_feature_seed", 0))

    def _encode(self, X):
        return self._encoder().encode_all(X)

    def _build_module(self):
        return QPGNN(self._encoder().n_variable_features, N_CONSTRAINT_FEATURES,
                     self.hidden_dim, self.n_layers, self._readout, self._n_outputs,
                     self.mi_messages)

    def _batch(self, graphs, dtype=torch.float32):
        return QPGraphEncoder.collate(graphs, device=self.device_, dtype=dtype)

    def _train_batches(self, tensors, shuffle=True):
        """Yield ``(collated graphs, targets)`` batches of QP instances.

        When one batch holds every instance (``batch_size >= n``), training
        collates the graphs once per fit and draws no shuffling order.
        """
        graphs, target = tensors
        if shuffle and int(self.batch_size) >= len(graphs):
            if self._full_batch is None:
                self._full_batch = self._batch(graphs)
            yield self._full_batch, self._select(target, np.arange(len(graphs)))
            return
        for idx in self._iter_batches(len(graphs), shuffle=shuffle):
            idx = np.asarray(idx)
            yield self._batch([graphs[i] for i in idx]), self._select(target, idx)

    def _get_loss(self, batch):
        graph, target = batch
        loss = self._compute_loss(self.module_(graph), target, graph)
        return {"loss": loss, "weight": graph["n_graphs"]}

    def _split_tensors(self, tensors, rows):
        graphs, target = tensors
        if isinstance(target, list):
            return [graphs[i] for i in rows], [target[i] for i in rows]
        return [graphs[i] for i in rows], target[torch.as_tensor(rows, device=target.device)]

    def _start_fit(self, X):
        rng = self._init_torch_state()
        self._feature_seed = int(rng.randint(2**31 - 1))
        graphs = self._encode(X)
        self.n_features_in_ = self._encoder().n_variable_features
        self._full_batch = None
        return graphs

    def _finalize_modules(self):
        self._full_batch = None
        super()._finalize_modules()

    @torch.no_grad()
    def _forward_all(self, X):
        check_is_fitted(self)
        graphs = self._encode(X)
        dtype = next(self.module_.parameters()).dtype
        outputs = []
        step = max(int(self.batch_size), 256)
        for start in range(0, len(graphs), step):
            outputs.append(self.module_(self._batch(graphs[start:start + step], dtype)).cpu())
        out = torch.cat(outputs).double().numpy()
        if not np.all(np.isfinite(out)):
            bad = self._non_finite_instances(graphs, out)
            raise ValueError(
                f"the network's output overflowed (inf or NaN) for X{bad[:5]}"
                f"{' and others' if len(bad) > 5 else ''}: their coefficients are too large "
                f"for {dtype} message passing; rescale those instances (e.g. divide Q, c and "
                "r by a common factor) or use inference_dtype='float64'.")
        return graphs, out

    def _non_finite_instances(self, graphs, out):
        if self._readout == "graph":
            return np.flatnonzero(~np.all(np.isfinite(out), axis=1)).tolist()
        splits = np.cumsum([g.n_variables for g in graphs])[:-1]
        return [i for i, part in enumerate(np.split(out, splits)) if not np.all(np.isfinite(part))]

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.two_d_array = False
        tags.input_tags.dict = True
        return tags


#: Docstring pieces of the QP-GNN estimators.
_QP_GNN_DOCS = {
    **torch_parameter_docs(max_epochs=300, batch_size=32),
    "qp_gnn_parameters": """
        hidden_dim : int, default=64
            Width of every embedding (the paper's "embedding size").
        n_layers : int, default=2
            Number of message-passing layers (constraint then variable half-step each).
        mi_messages : bool, default=False
            Mixed-integer message form f([A_ij, h]) instead of A_ij f(h).
        random_features : int, default=0
            Extra random variable features (deterministic per instance); they let the
            network separate WL-equivalent mixed-integer instances.
        bound_scale : float, default=10.0
            Input scaling of bounds and right-hand sides.""",
    "batch_size": """
        batch_size : int, default=32
            Number of QP instances per mini-batch.""",
    "lr": """
        lr : float, default=1e-3
            Adam learning rate (the paper uses 5e-4 with batch 500 on a GPU).""",
    "qp_gnn_attributes": """
        module_ : QPGNN
            The trained network.
        history_ : list of dict
            One record per epoch (``epoch``, ``train_loss``, ...).
        n_iter_ : int
            Number of epochs run.
        n_features_in_ : int
            Number of variable-node features.""",
    "qp_X_y": """
        X : list of dict
            QP instances.
        y : array-like of shape (n_samples,) or list of ndarray
            Optimal values (``target="objective"``) or optimal solutions.""",
    "qp_gnn_references": """
        References
        ----------
        .. [1] Chen, Chen, Liu, Wang & Yin, "Expressive Power of Graph Neural Networks for
           (Mixed-Integer) Quadratic Programs", ICML 2025.""",
}
_QP_GNN_DOCS["torch_parameters"] = "\n".join(
    Substitution(**_QP_GNN_DOCS).pieces[name]
    for name in ("max_epochs", "batch_size", "lr", "device", "random_state",
                 "verbose", "callbacks", "inference_dtype"))


def _drop_unlabelled(items, y):
    """Drop the instances whose feasibility label is masked (not certified), with a warning."""
    if not (np.ma.isMaskedArray(y) and np.ma.is_masked(y)):
        return items, (y.filled(False) if np.ma.isMaskedArray(y) else y)
    mask = np.ma.getmaskarray(y)
    if len(mask) != len(items):
        raise ValueError(f"y must be 1-D with one label per instance ({len(items)}), got "
                         f"{len(mask)} labels.")
    dropped = np.flatnonzero(mask)
    warnings.warn(f"{len(dropped)} of {len(items)} instances have no certified feasibility label "
                  f"(masked in y, e.g. solver status 'max_iter'), such as "
                  f"X{dropped[:5].tolist()}; they are left out of training.", UserWarning,
                  stacklevel=3)
    keep = np.flatnonzero(~mask)
    return [items[i] for i in keep], np.asarray(y.data)[keep]


@Substitution(**_QP_GNN_DOCS)
class QPGNNFeasibilityClassifier(ClassifierMixin, _BaseQPGNN):
    """Predict whether a (mixed-integer) linearly constrained QP is feasible.

    A graph-level readout of :class:`QPGNN` trained with binary cross-entropy.
    For continuous LCQPs, Chen et al. prove that such GNNs approximate the
    feasibility map arbitrarily well; for mixed-integer programs they cannot
    separate WL-equivalent instances (see
    :func:`~skpaper.datasets.make_wl_indistinguishable_milp_pair`).

    Parameters
    ----------
    {qp_gnn_parameters}
    {torch_parameters}

    Attributes
    ----------
    classes_ : ndarray of shape (2,)
        The two labels seen during ``fit``.
    {qp_gnn_attributes}

    {qp_gnn_references}

    Examples
    --------
    >>> from skpaper.datasets import make_random_lcqp
    >>> from skpaper.graph import QPGNNFeasibilityClassifier, solve_qps
    >>> X = make_random_lcqp(40, 3, 8, 10, random_state=0)
    >>> y = solve_qps(X)[0]
    >>> clf = QPGNNFeasibilityClassifier(hidden_dim=16, max_epochs=5, random_state=0)
    >>> clf.fit(X, y).predict_proba(X).shape
    (40, 2)
    """

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y):
        """Fit on QP instances and their feasibility labels.

        Parameters
        ----------
        X : list of dict
            QP instances.
        y : array-like of shape (n_samples,)
            Two classes (e.g. booleans from :func:`solve_qps`). Masked entries (the
            instances :func:`solve_qps` could not certify either way) are dropped with a
            warning, never taken as infeasible.

        Returns
        -------
        self : object
            The fitted classifier.
        """
        items = _as_instance_list(X)
        items, y = _drop_unlabelled(items, y)
        y = np.asarray(y)
        if y.ndim != 1 or len(y) != len(items):
            raise ValueError(f"y must be 1-D with one label per instance ({len(items)}), got "
                             f"shape {y.shape}.")
        check_classification_targets(y)
        encoder = LabelEncoder().fit(y)
        if len(encoder.classes_) != 2:
            raise ValueError(f"QPGNNFeasibilityClassifier needs exactly 2 classes in y, got "
                             f"{len(encoder.classes_)}.")
        self.classes_ = encoder.classes_
        self._n_outputs = 1
        graphs = self._start_fit(items)
        target = torch.as_tensor(encoder.transform(y), dtype=torch.float32, device=self.device_)
        return self._fit_loop((graphs, target))

    @staticmethod
    def _select(target, idx):
        return target[torch.as_tensor(idx, device=target.device)]

    def _compute_loss(self, output, target, batch=None):
        return nn.functional.binary_cross_entropy_with_logits(output.squeeze(-1), target)

    def decision_function(self, X):
        """Return the logit of the second class (``classes_[1]``) per instance.

        Parameters
        ----------
        X : list of dict
            QP instances.

        Returns
        -------
        logits : ndarray of shape (n_samples,)
            Positive where ``classes_[1]`` is predicted.
        """
        return self._forward_all(X)[1][:, 0]

    def predict_proba(self, X):
        """Return the probabilities of ``classes_`` per instance.

        Parameters
        ----------
        X : list of dict
            QP instances.

        Returns
        -------
        proba : ndarray of shape (n_samples, 2)
            Sigmoid of the logits, columns in the order of ``classes_``.
        """
        p = 1.0 / (1.0 + np.exp(-self.decision_function(X)))
        return np.column_stack([1.0 - p, p])

    def predict(self, X):
        """Return the predicted feasibility label per instance.

        Parameters
        ----------
        X : list of dict
            QP instances.

        Returns
        -------
        y : ndarray of shape (n_samples,)
            One of ``classes_`` per instance.
        """
        positive = self.decision_function(X) > 0
        return self.classes_[positive.astype(int)]


@Substitution(**_QP_GNN_DOCS)
class QPGNNRegressor(RegressorMixin, _BaseQPGNN):
    """Predict a QP's optimal value or its minimum-norm optimal solution.

    ``target="objective"`` uses the graph readout and the paper's loss
    mean((y_hat - y)^2 / max(y^2, 1)); ``target="solution"`` uses the node readout and
    sum_j (x_hat_j - x_j)^2 / max(||x||^2, 1) per instance. Train on feasible
    instances only.

    Parameters
    ----------
    target : {"objective", "solution"}, default="objective"
        Predict the optimal value (graph readout) or the optimal solution (node
        readout).
    {qp_gnn_parameters}
    {torch_parameters}

    Attributes
    ----------
    {qp_gnn_attributes}

    Notes
    -----
    ``score`` is R^2 for ``target="objective"`` and 1 minus the mean relative l2 error
    ||x_hat - x|| / max(||x||, 1) for ``target="solution"``. :meth:`relative_error`
    gives the paper's training metric (square root of the loss).

    {qp_gnn_references}

    Examples
    --------
    >>> from skpaper.datasets import make_random_lcqp
    >>> from skpaper.graph import QPGNNRegressor, solve_qps
    >>> X = make_random_lcqp(60, 3, 8, 10, random_state=0)
    >>> feasible, objective, solutions = solve_qps(X)
    >>> X_ok = [x for x, f in zip(X, feasible) if f]
    >>> reg = QPGNNRegressor(hidden_dim=16, max_epochs=5, random_state=0)
    >>> reg.fit(X_ok, objective[feasible]).predict(X_ok).shape == (int(feasible.sum()),)
    True
    """

    _parameter_constraints = {
        **_BaseQPGNN._parameter_constraints,
        "target": [StrOptions({"objective", "solution"})],
    }

    def __init__(self, *, target="objective", hidden_dim=64, n_layers=2, mi_messages=False,
                 random_features=0, bound_scale=10.0, max_epochs=300, batch_size=32, lr=1e-3,
                 device="auto", random_state=None, verbose=0, callbacks=None,
                 inference_dtype="float32"):
        super().__init__(hidden_dim=hidden_dim, n_layers=n_layers, mi_messages=mi_messages,
                         random_features=random_features, bound_scale=bound_scale,
                         max_epochs=max_epochs, batch_size=batch_size, lr=lr, device=device,
                         random_state=random_state, verbose=verbose, callbacks=callbacks,
                         inference_dtype=inference_dtype)
        self.target = target

    @property
    def _readout(self):
        return "graph" if self.target == "objective" else "node"

    def _check_targets(self, items, y):
        if self.target == "objective":
            y = np.asarray(y, dtype=np.float64)
            if y.ndim != 1 or len(y) != len(items):
                raise ValueError(f"y must hold one optimal value per instance ({len(items)}), "
                                 f"got shape {y.shape}.")
            if not np.all(np.isfinite(y)):
                bad = np.flatnonzero(~np.isfinite(y))[:5].tolist()
                raise ValueError(f"y must be finite, got NaN/inf at {bad}: train on the "
                                 "instances solve_qps reports as 'optimal' only.")
            return y
        if len(y) != len(items):
            raise ValueError(f"y must hold one solution per instance ({len(items)}), got "
                             f"{len(y)}.")
        out = []
        for i, (inst, x) in enumerate(zip(items, y)):
            if x is None:
                raise ValueError(f"y[{i}] is None: train on the instances solve_qps reports "
                                 "as 'optimal' only.")
            x = np.asarray(x, dtype=np.float64).reshape(-1)
            n = np.asarray(inst["c"]).reshape(-1).shape[0] if isinstance(inst, dict) else -1
            if x.shape[0] != n or not np.all(np.isfinite(x)):
                raise ValueError(f"y[{i}] must be a finite solution of length {n}, got shape "
                                 f"{x.shape}.")
            out.append(x)
        return out

    @_fit_context(prefer_skip_nested_validation=True)
    @Substitution(**_QP_GNN_DOCS)
    def fit(self, X, y):
        """Fit on feasible QP instances and their optimal values or solutions.

        Parameters
        ----------
        {qp_X_y}

        Returns
        -------
        self : object
            The fitted regressor.
        """
        items = _as_instance_list(X)
        y = self._check_targets(items, y)
        self._n_outputs = 1
        graphs = self._start_fit(items)
        if self.target == "objective":
            target = torch.as_tensor(y, dtype=torch.float32, device=self.device_)
        else:
            target = [torch.as_tensor(x, dtype=torch.float32, device=self.device_) for x in y]
        return self._fit_loop((graphs, target))

    def _select(self, target, idx):
        if self.target == "objective":
            return target[torch.as_tensor(idx, device=target.device)]
        return torch.cat([target[i] for i in idx])

    def _compute_loss(self, output, target, batch=None):
        if self.target == "objective":
            output = output.squeeze(-1)
            return torch.mean((output - target) ** 2 / torch.clamp(target ** 2, min=1.0))
        graph = batch["var_graph"]
        n = batch["n_graphs"]
        err = scatter_sum(((output - target) ** 2).unsqueeze(-1), graph, n).squeeze(-1)
        norm = scatter_sum((target ** 2).unsqueeze(-1), graph, n).squeeze(-1)
        return torch.mean(err / torch.clamp(norm, min=1.0))

    def predict(self, X):
        """Return the predicted optimal values or solutions.

        Parameters
        ----------
        X : list of dict
            QP instances.

        Returns
        -------
        y : ndarray of shape (n_samples,) or list of ndarray
            Optimal values (``target="objective"``), or one solution per instance.
        """
        graphs, out = self._forward_all(X)
        if self.target == "objective":
            return out[:, 0]
        splits = np.cumsum([g.n_variables for g in graphs])[:-1]
        return np.split(out, splits)

    @Substitution(**_QP_GNN_DOCS)
    def relative_error(self, X, y):
        """Return the paper's relative error: sqrt of the mean normalised squared error.

        Parameters
        ----------
        {qp_X_y}

        Returns
        -------
        error : float
            The square root of the training loss on ``(X, y)``.
        """
        items = _as_instance_list(X)
        y = self._check_targets(items, y)
        pred = self.predict(items)
        if self.target == "objective":
            return float(np.sqrt(np.mean((pred - y) ** 2 / np.maximum(y ** 2, 1.0))))
        return float(np.sqrt(np.mean([np.sum((p - t) ** 2) / max(np.sum(t ** 2), 1.0)
                                      for p, t in zip(pred, y)])))

    @Substitution(**_QP_GNN_DOCS)
    def score(self, X, y, sample_weight=None):
        """Return R^2 (objective) or 1 - mean relative l2 error of the solutions.

        Parameters
        ----------
        {qp_X_y}
        sample_weight : array-like of shape (n_samples,) or None, default=None
            Weights of the instances.

        Returns
        -------
        score : float
            Higher is better; 1.0 is a perfect prediction.
        """
        items = _as_instance_list(X)
        y = self._check_targets(items, y)
        pred = self.predict(items)
        if self.target == "objective":
            return float(r2_score(y, pred, sample_weight=sample_weight))
        errors = np.array([np.linalg.norm(p - t) / max(np.linalg.norm(t), 1.0)
                           for p, t in zip(pred, y)])
        return float(1.0 - np.average(errors, weights=sample_weight))


def _dual_estimate(qp, x, rel_tol=1e-2):
    """OSQP dual vector for the rows ``[A; I]`` consistent with a primal guess ``x``.

    Rows within ``rel_tol`` (relative to ``max(1, |bound|)``) of a finite bound are taken
    as active; the duals of the active rows solve the stationarity condition
    ``Q x + c + [A; I]^T y = 0`` in least squares with the sign of each active side
    (``y >= 0`` at an upper bound, ``y <= 0`` at a lower bound, free for equalities);
    inactive rows get 0.
    """
    from scipy.optimize import lsq_linear

    P, q, A, lower, upper = _osqp_data(qp)
    ax = A @ x
    near = rel_tol * np.maximum(1.0, np.abs(np.where(np.isfinite(upper), upper, lower)))
    at_upper = np.isfinite(upper) & (ax >= upper - near)
    near_l = rel_tol * np.maximum(1.0, np.abs(np.where(np.isfinite(lower), lower, upper)))
    at_lower = np.isfinite(lower) & (ax <= lower + near_l) & ~at_upper
    equality = lower == upper
    active = np.flatnonzero(at_upper | at_lower | equality)
    y = np.zeros(A.shape[0])
    if active.size == 0:
        return y
    grad = qp["Q"] @ x + q
    lo = np.where(equality[active] | at_lower[active], -np.inf, 0.0)
    hi = np.where(equality[active] | at_upper[active], np.inf, 0.0)
    rows = A[active].T
    if rows.shape[0] * rows.shape[1] <= 250_000:
        # Small systems: dense bounded-variable least squares is exact and much faster.
        fit = lsq_linear(rows.toarray(), -grad, bounds=(lo, hi), method="bvls")
    else:
        fit = lsq_linear(rows.tocsr(), -grad, bounds=(lo, hi), lsmr_tol="auto")
    y[active] = fit.x
    return y


class QPGNNWarmStart(BaseEstimator):
    """Warm-start OSQP with a fitted solution regressor's predictions.

    The predicted solution is projected onto the variable bounds and passed as OSQP's
    primal starting point; with ``dual="active-set"`` a dual starting point is derived
    from it (see Notes). Cold and warm solves use the same settings, so their iteration
    counts compare directly.

    Parameters
    ----------
    regressor : QPGNNRegressor or None, default=None
        Fitted with ``target="solution"``; None only when :meth:`solve` gets
        ``initvals``.
    solver : {"osqp"}, default="osqp"
        Only OSQP exposes warm starts and iteration counts here.
    tol : float, default=1e-6
        OSQP's absolute and relative tolerances.
    dual : {"active-set", "zero"}, default="active-set"
        Dual warm start: from the active set of the predicted solution, or zero (a
        primal-only warm start).
    check_termination : int, default=1
        OSQP checks its stopping criteria every this many iterations. OSQP's own default
        (25) rounds every iteration count up to a multiple of 25, which hides any saving
        below 25 iterations.
    max_iter : int or None, default=None
        OSQP iteration limit (None: 200000).

    Notes
    -----
    OSQP is an ADMM method: a primal guess alone barely helps, because the dual
    variables start at zero and must be rebuilt. The active-set dual start takes the
    constraints the guess (nearly) satisfies with equality as active and solves the
    stationarity condition for their multipliers, with the right signs, in least
    squares. Savings depend on the accuracy of the guess; ``benchmarks/bench_qp.py``
    reports them on random LCQPs, next to the saving an exact warm start (the cold
    solution and its duals) would give. Measured there (100 random 5 x 20 LCQPs, a
    hidden-64 solution GNN with test relative error 0.30): median OSQP iterations 79.5
    cold, 80 warm from the primal guess alone, 77.5 warm with the active-set dual, 1 from
    the exact solution; a 2% mean saving, and more wall time than it saves (the dual
    estimate costs about as much as a cold solve of these small instances). Perturbing
    exact solutions by 1% already leaves only about 8% of the iterations saved: warm
    starts pay off only for near-exact guesses.

    Examples
    --------
    >>> from skpaper.datasets import make_random_lcqp
    >>> from skpaper.graph import QPGNNRegressor, QPGNNWarmStart, solve_qps
    >>> X = make_random_lcqp(30, 3, 8, 10, random_state=1)
    >>> feasible, _, sol = solve_qps(X)
    >>> X_ok = [x for x, f in zip(X, feasible) if f]
    >>> reg = QPGNNRegressor(target="solution", hidden_dim=16, max_epochs=5,
    ...                      random_state=0).fit(X_ok, [s for s in sol if s is not None])
    >>> report = QPGNNWarmStart(reg).solve(X_ok)
    >>> sorted(report)[:3]
    ['iterations_cold', 'iterations_warm', 'objective_cold']
    """

    _parameter_constraints = {
        "regressor": [HasMethods(["predict"]), None],
        "solver": [StrOptions({"osqp"})],
        "tol": [Interval(Real, 0, None, closed="neither")],
        "dual": [StrOptions({"active-set", "zero"})],
        "check_termination": [Interval(Integral, 1, None, closed="left")],
        "max_iter": [Interval(Integral, 1, None, closed="left"), None],
    }

    def __init__(self, regressor=None, *, solver="osqp", tol=1e-6, dual="active-set",
                 check_termination=1, max_iter=None):
        self.regressor = regressor
        self.solver = solver
        self.tol = tol
        self.dual = dual
        self.check_termination = check_termination
        self.max_iter = max_iter

    def solve(self, X, initvals=None):
        """Solve each instance cold and warm-started; return per-instance statistics.

        Parameters
        ----------
        X : list of dict
            QP instances.
        initvals : list of ndarray or None, default=None
            Primal guesses to use instead of the regressor's predictions (for example
            the exact solutions, to measure the best case).

        Returns
        -------
        report : dict
            Arrays ``iterations_cold``, ``iterations_warm``, ``time_cold_s``,
            ``time_warm_s``, ``objective_cold``, ``objective_warm``, ``status_cold``,
            ``status_warm``, and the warm ``solutions`` (list; None where unsolved).
        """
        self._validate_params()
        items = _as_instance_list(X)
        if initvals is None:
            if self.regressor is None:
                raise ValueError("regressor is None: pass a fitted QPGNNRegressor, or give "
                                 "initvals.")
            check_is_fitted(self.regressor)
            if getattr(self.regressor, "target", None) != "solution":
                raise ValueError("regressor must be a QPGNNRegressor fitted with "
                                 f"target='solution', got target="
                                 f"{getattr(self.regressor, 'target', None)!r}.")
            guesses = self.regressor.predict(items)
        else:
            guesses = list(initvals)
            if len(guesses) != len(items):
                raise ValueError(f"initvals must hold one guess per instance ({len(items)}), "
                                 f"got {len(guesses)}.")
        keys = ("iterations_cold", "iterations_warm", "time_cold_s", "time_warm_s",
                "objective_cold", "objective_warm", "status_cold", "status_warm")
        report = {k: [] for k in keys}
        report["solutions"] = []
        settings = dict(max_iter=self.max_iter, check_termination=self.check_termination)
        for i, (inst, guess) in enumerate(zip(items, guesses)):
            qp = check_qp(inst, name=f"X[{i}]")
            guess = np.asarray(guess, dtype=np.float64).reshape(-1)
            if guess.shape != qp["c"].shape or not np.all(np.isfinite(guess)):
                raise ValueError(f"the guess for X[{i}] must be a finite vector of length "
                                 f"{qp['c'].shape[0]}, got shape {guess.shape}.")
            guess = np.clip(guess, qp["lb"], qp["ub"])
            start = time.perf_counter()
            y0 = _dual_estimate(qp, guess) if self.dual == "active-set" else None
            prep = time.perf_counter() - start
            for mode, x0 in (("cold", None), ("warm", guess)):
                res = _solve_osqp(qp, self.tol, initvals=x0,
                                  dual_initvals=y0 if mode == "warm" else None, **settings)
                report[f"iterations_{mode}"].append(res["iterations"])
                report[f"time_{mode}_s"].append(res["time_s"] + (prep if mode == "warm" else 0))
                report[f"status_{mode}"].append(res["status"])
                report[f"objective_{mode}"].append(qp_objective(qp, res["x"])
                                                   if res["status"] == "optimal" else np.nan)
            report["solutions"].append(res["x"])
        return {k: (v if k == "solutions" else np.asarray(v)) for k, v in report.items()}
