"""Node classification on a graph of nets: dual encoders plus a spring constraint system.

Algorithm 1 of Wang et al. (ICML 2025, "N2GON"): encode every inner graph with F1, update
the embeddings over the outer graph with F2, build a constraint net C and positions Pi,
and train on NLL plus the constraint loss, full batch. The paper's equations 2-7 were
not available; the concrete choices below (a GIN for F1, a GCN for F2, a kNN + outer
edge + same-label constraint net, a spring/stress loss) are reconstructed and switchable.
"""

from numbers import Integral, Real

import numpy as np
import torch
from sklearn.base import ClassifierMixin
from sklearn.preprocessing import LabelEncoder
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted
from torch import nn

from ..nn._base import BaseTorchEstimator
from ..utils._docstring import Substitution, torch_parameter_docs
from ..utils._sklearn import Interval, StrOptions, _fit_context
from ._gon import GraphOfNets
from ._message_passing import MessageOperator, scatter_mean, scatter_sum, two_layer_mlp

__all__ = ["GraphOfNetsClassifier", "InnerGINClassifier", "OuterGCNClassifier"]


class _GIN(nn.Module):
    """F1: GIN layers h <- MLP((1 + eps) h + sum of neighbours), pooled per inner graph."""

    def __init__(self, n_in, hidden, n_layers, pool):
        super().__init__()
        self.layers = nn.ModuleList(two_layer_mlp(n_in if i == 0 else hidden, hidden, hidden)
                                    for i in range(n_layers))
        self.eps = nn.Parameter(torch.zeros(n_layers))
        self.pool = pool

    def forward(self, x, adjacency, graph_index, n_graphs):
        for k, mlp in enumerate(self.layers):
            x = torch.relu(mlp((1 + self.eps[k]) * x + adjacency @ x))
        pool = scatter_sum if self.pool == "sum" else scatter_mean
        return pool(x, graph_index, n_graphs)


class _GCN(nn.Module):
    """F2: GCN layers v <- ReLU(D^-1/2 (A + I) D^-1/2 v W) on the outer graph."""

    def __init__(self, n_in, hidden, n_layers):
        super().__init__()
        self.layers = nn.ModuleList(nn.Linear(n_in if i == 0 else hidden, hidden)
                                    for i in range(n_layers))

    def forward(self, v, adjacency):
        for layer in self.layers:
            v = torch.relu(adjacency @ layer(v))
        return v


class _GONNet(nn.Module):
    def __init__(self, view, inner_in, outer_in, hidden, inner_layers, outer_layers,
                 n_classes, position_dim, position_proj, pool):
        super().__init__()
        self.view = view
        if view in ("dual", "inner"):
            self.inner = _GIN(inner_in, hidden, inner_layers, pool)
            outer_width = hidden + outer_in
        else:
            outer_width = inner_in + outer_in
        if view in ("dual", "outer"):
            self.outer = _GCN(outer_width, hidden, outer_layers)
            self.project = (nn.Linear(hidden, position_dim) if position_proj == "linear"
                            else nn.Identity())
            p = position_dim if position_proj == "linear" else hidden
            self.classify = nn.Linear(hidden + p, n_classes)
        else:
            self.classify = two_layer_mlp(outer_width, hidden, n_classes)

    def forward(self, g):
        n = g["n_nodes"]
        if self.view == "outer":
            h = scatter_mean(g["inner_x"], g["inner_index"], n)
        else:
            h = self.inner(g["inner_x"], g["inner_adj"], g["inner_index"], n)
        if g["node_x"] is not None:
            h = torch.cat([h, g["node_x"]], dim=-1)
        if self.view == "inner":
            return self.classify(h), None, h
        v = self.outer(h, g["outer_adj"])
        positions = self.project(v)
        return self.classify(torch.cat([v, positions], dim=-1)), positions, v


def _gcn_edges(gon):
    """Edges of A + I with the symmetric normalisation weights."""
    n = gon.n_nodes
    loops = np.arange(n)
    src = np.concatenate([gon.outer_edges[0], loops])
    dst = np.concatenate([gon.outer_edges[1], loops])
    degree = np.bincount(dst, minlength=n).astype(np.float64)
    weights = 1.0 / np.sqrt(degree[src] * degree[dst])
    return np.vstack([src, dst]), weights


class _BaseGONClassifier(ClassifierMixin, BaseTorchEstimator):
    """Transductive node classification on a fixed :class:`GraphOfNets`.

    X is an (n, 1) integer array of outer-node ids; the graph is a constructor parameter,
    so cross-validation splits ids and only the training ids' labels are ever seen.
    """

    _view = "dual"
    _parameter_constraints = {
        **{k: v for k, v in BaseTorchEstimator._parameter_constraints.items()
           if k != "batch_size"},
        "gon": [GraphOfNets, None],
        "inner_layers": [Interval(Integral, 1, 256, closed="both")],
        "outer_layers": [Interval(Integral, 1, 256, closed="both")],
        "hidden_dim": [Interval(Integral, 1, 4096, closed="both")],
        "pool": [StrOptions({"sum", "mean"})],
        "weight_decay": [Interval(Real, 0, None, closed="left")],
    }

    def __init__(self, gon, *, inner_layers, outer_layers, hidden_dim, pool, lr, weight_decay,
                 max_epochs, device, random_state, verbose, callbacks, inference_dtype):
        super().__init__(max_epochs=max_epochs, lr=lr, device=device,
                         random_state=random_state, verbose=verbose, callbacks=callbacks,
                         inference_dtype=inference_dtype)
        del self.batch_size  # full-batch training: no mini-batches
        self.gon = gon
        self.inner_layers = inner_layers
        self.outer_layers = outer_layers
        self.hidden_dim = hidden_dim
        self.pool = pool
        self.weight_decay = weight_decay

    def _check_ids(self, X, reset):
        if self.gon is None:
            raise ValueError(f"{type(self).__name__} needs gon=GraphOfNets(...) to fit: X only "
                             "holds outer-node ids.")
        X = np.asarray(X)
        if X.ndim == 1:
            X = X[:, None]
        if X.ndim != 2 or X.shape[1] != 1:
            raise ValueError(f"X must be an (n_samples, 1) array of outer-node ids, got shape "
                             f"{X.shape}.")
        if X.shape[0] == 0:
            raise ValueError("X must contain at least one node id.")
        if X.dtype.kind not in "iu":
            if X.dtype.kind != "f" or not np.all(np.isfinite(X)) or np.any(X != np.round(X)):
                raise ValueError(f"X must hold integer node ids, got dtype {X.dtype}.")
        ids = X[:, 0].astype(np.int64)
        if ids.min() < 0 or ids.max() >= self.gon.n_nodes:
            raise ValueError(f"node ids must be in [0, {self.gon.n_nodes}), got range "
                             f"[{ids.min()}, {ids.max()}].")
        if reset:
            self.n_features_in_ = 1
        return ids

    def _graph_tensors(self, dtype=torch.float32):
        gon = self.gon
        edges, weights = _gcn_edges(gon)
        t = lambda a, dt=dtype: torch.as_tensor(a, dtype=dt, device=self.device_)  # noqa: E731
        n_inner = gon.inner_x.shape[0]
        inner_src, inner_dst = t(gon.inner_edges, torch.long)
        outer_src, outer_dst = t(edges, torch.long)
        return {
            "n_nodes": gon.n_nodes,
            "inner_x": t(gon.inner_x),
            "inner_adj": MessageOperator(inner_dst, inner_src, t(np.ones(len(inner_src))),
                                         n_inner, n_inner),
            "inner_index": t(gon.inner_graph_index, torch.long),
            "node_x": None if gon.node_features is None else t(gon.node_features),
            "outer_adj": MessageOperator(outer_dst, outer_src, t(weights), gon.n_nodes,
                                         gon.n_nodes),
        }

    def _position_proj(self):
        return "linear"

    def _build_module(self):
        gon = self.gon
        outer_in = 0 if gon.node_features is None else gon.node_features.shape[1]
        return _GONNet(self._view, gon.inner_x.shape[1], outer_in, self.hidden_dim,
                       self.inner_layers, self.outer_layers, len(self.classes_),
                       getattr(self, "position_dim", 8), self._position_proj(), self.pool)

    def _build_optimizer(self, module):
        return torch.optim.Adam(module.parameters(), lr=self.lr, weight_decay=self.weight_decay)

    def _constraint_loss(self, positions, v, epoch):
        return v.new_zeros(())

    def _train_batches(self, tensors, shuffle=True):
        """One full-graph batch per epoch: ``(train_ids, target, graph)``."""
        yield tensors

    def _get_loss(self, batch):
        train_ids, target, graph = batch
        logits, positions, v = self.module_(graph)
        nll = nn.functional.cross_entropy(logits[train_ids], target)
        con = self._constraint_loss(positions, v, len(self.history_))
        return {"loss": nll + con, "weight": 1.0, "nll": nll, "constraint_loss": con}

    def _split_tensors(self, tensors, rows):
        raise ValueError(f"{type(self).__name__} does not support ValidationSplit: it trains "
                         "on the whole graph at once; hold out node ids from X instead.")

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y):
        """Fit on the labelled outer nodes ``X`` (ids), encoding the whole graph.

        Parameters
        ----------
        X : array-like of shape (n_samples, 1)
            Outer-node ids of the labelled nodes.
        y : array-like of shape (n_samples,)
            Their class labels.

        Returns
        -------
        self : object
            The fitted classifier.
        """
        ids = self._check_ids(X, reset=True)
        y = np.asarray(y)
        if y.ndim != 1 or len(y) != len(ids):
            raise ValueError(f"y must be 1-D with one label per id ({len(ids)}), got shape "
                             f"{y.shape}.")
        check_classification_targets(y)
        encoder = LabelEncoder().fit(y)
        self.classes_ = encoder.classes_
        self._init_torch_state()
        self._pair_rng = np.random.default_rng(self._init_seed)
        self._train_ids = ids
        self._train_codes = encoder.transform(y)
        graph = self._graph_tensors()
        target = torch.as_tensor(self._train_codes, dtype=torch.long, device=self.device_)
        self._fit_loop((torch.as_tensor(ids, device=self.device_), target, graph))
        del self._pair_rng
        return self

    @torch.no_grad()
    def _node_outputs(self):
        dtype = next(self.module_.parameters()).dtype
        logits, positions, v = self.module_(self._graph_tensors(dtype))
        return logits.double().cpu().numpy(), None if positions is None else \
            positions.double().cpu().numpy()

    def predict_proba(self, X):
        """Return the class probabilities of outer nodes.

        Parameters
        ----------
        X : array-like of shape (n_samples, 1)
            Outer-node ids.

        Returns
        -------
        proba : ndarray of shape (n_samples, n_classes)
            Softmax of the node logits, columns in the order of ``classes_``.
        """
        check_is_fitted(self)
        ids = self._check_ids(X, reset=False)
        logits = self._node_outputs()[0][ids]
        logits -= logits.max(axis=1, keepdims=True)
        proba = np.exp(logits)
        return proba / proba.sum(axis=1, keepdims=True)

    def predict(self, X):
        """Return the predicted class of outer nodes.

        Parameters
        ----------
        X : array-like of shape (n_samples, 1)
            Outer-node ids.

        Returns
        -------
        y : ndarray of shape (n_samples,)
            The most probable class of each node.
        """
        proba = self.predict_proba(X)
        return self.classes_[np.argmax(proba, axis=1)]

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.two_d_array = False
        tags.input_tags.categorical = True
        return tags


#: Docstring pieces of the graph-of-nets classifiers.
_GON_DOCS = {
    **torch_parameter_docs(max_epochs=200),
    "gon_encoders": """
        gon : GraphOfNets or None, default=None
            The graph of nets; required to fit.
        inner_layers : int, default=2
            GIN layers of the inner encoder F1.
        outer_layers : int, default=2
            GCN layers of the outer encoder F2.
        hidden_dim : int, default=64
            Width of the node embeddings.
        pool : {"sum", "mean"}, default="sum"
            Readout of each inner graph.""",
    "gon_training": """
        lr : float, default=1e-2
            Adam learning rate.
        weight_decay : float, default=5e-4
            Adam weight decay.
        max_epochs : int, default=200
            Full-batch epochs.
        {device}
        {random_state}
        {verbose}
        {callbacks}
        {inference_dtype}""",
    "gon_attributes": """
        classes_ : ndarray of shape (n_classes,)
            Class labels seen during ``fit``.
        module_ : torch.nn.Module
            The trained network.""",
    "gon_reference": """
        References
        ----------
        .. [1] Wang, Zhao, Wang, Shan, Li, Li, Huang, Wang, Pan & Wang, "N2GON: Neural Networks
           for Graph-of-Net with Position Awareness", ICML 2025.""",
}
_GON_DOCS["gon_training"] = Substitution(**_GON_DOCS).fill(_GON_DOCS["gon_training"])


@Substitution(**_GON_DOCS)
class GraphOfNetsClassifier(_BaseGONClassifier):
    """Position-aware node classifier for a graph of nets (N2GON, reconstructed).

    F1 (a GIN) embeds every inner graph; F2 (a GCN) updates the embeddings over the outer
    graph; positions Pi = P(v) come from a spring system over a constraint net and are
    concatenated to v before the linear classifier. The loss is NLL on the training ids
    plus ``constraint_weight`` times

        L_con = mean_{(i,j) in C+} ||p_i - p_j||^2
                + mean_{(i,j) in C-} max(0, 1 - ||p_i - p_j||)^2,

    with C+ = outer edges, cosine-kNN pairs of v (rebuilt every ``knn_every`` epochs) and
    same-label pairs of training nodes, and C- = different-label training pairs. Only the
    labels passed to :meth:`fit` enter C+ and C-.

    Parameters
    ----------
    {gon_encoders}
    constraint : {"spring", "none"}, default="spring"
        ``"none"`` drops L_con (the plain dual encoder).
    constraint_weight : float, default=0.1
        The weight lambda in front of L_con.
    knn : int, default=10
        Neighbours per node in the kNN part of C+ (0 disables it).
    knn_every : int, default=10
        Epochs between kNN rebuilds (an O(N^2) step).
    position_dim : int, default=8
        Dimension p of the positions.
    position_proj : {"linear", "identity"}, default="linear"
        P: a learned linear map, or the identity (positions are v itself; Algorithm 1
        lists only F1 and F2 as trained, which this option matches).
    {gon_training}

    Attributes
    ----------
    {gon_attributes}
    history_ : list of dict
        Per epoch: ``train_loss``, ``nll`` and ``constraint_loss``.
    n_iter_ : int
        Number of epochs run.
    n_features_in_ : int
        Always 1 (the id column).

    Notes
    -----
    Equations 2-7 of the paper could not be retrieved: the encoders, the constraint net
    and the spring loss are reconstructed from Algorithm 1 and the abstract.

    {gon_reference}

    Examples
    --------
    >>> import numpy as np
    >>> from skpaper.datasets import make_synthetic_gon
    >>> from skpaper.graph import GraphOfNets, GraphOfNetsClassifier
    >>> outer, inner, y = make_synthetic_gon(n_nodes=60, random_state=0)
    >>> gon = GraphOfNets(outer, inner)
    >>> ids = np.arange(60).reshape(-1, 1)
    >>> clf = GraphOfNetsClassifier(gon=gon, hidden_dim=16, max_epochs=5, random_state=0)
    >>> clf.fit(ids[:40], y[:40]).predict(ids[40:]).shape
    (20,)
    """

    _parameter_constraints = {
        **_BaseGONClassifier._parameter_constraints,
        "constraint": [StrOptions({"spring", "none"})],
        "constraint_weight": [Interval(Real, 0, None, closed="left")],
        "knn": [Interval(Integral, 0, 4096, closed="both")],
        "knn_every": [Interval(Integral, 1, None, closed="left")],
        "position_dim": [Interval(Integral, 1, 4096, closed="both")],
        "position_proj": [StrOptions({"linear", "identity"})],
    }

    def __init__(self, gon=None, *, inner_layers=2, outer_layers=2, hidden_dim=64, pool="sum",
                 constraint="spring", constraint_weight=0.1, knn=10, knn_every=10,
                 position_dim=8, position_proj="linear", lr=1e-2, weight_decay=5e-4,
                 max_epochs=200, device="auto", random_state=None, verbose=0, callbacks=None,
                 inference_dtype="float32"):
        super().__init__(gon, inner_layers=inner_layers, outer_layers=outer_layers,
                         hidden_dim=hidden_dim, pool=pool, lr=lr, weight_decay=weight_decay,
                         max_epochs=max_epochs, device=device, random_state=random_state,
                         verbose=verbose, callbacks=callbacks, inference_dtype=inference_dtype)
        self.constraint = constraint
        self.constraint_weight = constraint_weight
        self.knn = knn
        self.knn_every = knn_every
        self.position_dim = position_dim
        self.position_proj = position_proj

    def _position_proj(self):
        return self.position_proj

    def _label_pairs(self):
        """C+ same-label and C- different-label pairs among the training ids only."""
        ids, codes = self._train_ids, self._train_codes
        n_pairs = min(5 * self.gon.n_nodes, len(ids) * (len(ids) - 1))
        a = self._pair_rng.integers(len(ids), size=n_pairs)
        b = self._pair_rng.integers(len(ids), size=n_pairs)
        keep = a != b
        a, b = a[keep], b[keep]
        same = codes[a] == codes[b]
        return (np.vstack([ids[a[same]], ids[b[same]]]),
                np.vstack([ids[a[~same]], ids[b[~same]]]))

    def _knn_pairs(self, v):
        with torch.no_grad():
            z = nn.functional.normalize(v.detach(), dim=-1)
            sim = z @ z.T
            sim.fill_diagonal_(-np.inf)
            k = min(self.knn, v.shape[0] - 1)
            nbrs = sim.topk(k, dim=-1).indices
        rows = torch.arange(v.shape[0], device=v.device).repeat_interleave(k)
        return torch.stack([rows, nbrs.reshape(-1)])

    def _constraint_loss(self, positions, v, epoch):
        if self.constraint == "none":
            return positions.new_zeros(())
        if epoch % self.knn_every == 0 or not hasattr(self, "_cached_pairs"):
            positive, negative = self._label_pairs()
            parts = [torch.as_tensor(self.gon.outer_edges, device=v.device),
                     torch.as_tensor(positive, device=v.device)]
            if self.knn:
                parts.append(self._knn_pairs(v))
            self._cached_pairs = (torch.cat(parts, dim=1),
                                  torch.as_tensor(negative, device=v.device))
        positive, negative = self._cached_pairs
        pull = (positions[positive[0]] - positions[positive[1]]).pow(2).sum(-1).mean()
        loss = pull
        if negative.shape[1]:
            dist = (positions[negative[0]] - positions[negative[1]]).pow(2).sum(-1).add(
                1e-12).sqrt()
            loss = loss + torch.relu(1.0 - dist).pow(2).mean()
        return self.constraint_weight * loss

    def _finalize_modules(self):
        self.__dict__.pop("_cached_pairs", None)
        super()._finalize_modules()

    def positions(self):
        """Return the learned positions Pi of every outer node.

        Returns
        -------
        positions : ndarray of shape (n_nodes, position_dim) or (n_nodes, hidden_dim)
            ``P(v)`` per outer node; ``v`` itself with ``position_proj="identity"``.
        """
        check_is_fitted(self)
        return self._node_outputs()[1]


#: Docstring of the single-view baselines; the summary and example lines are per class.
_BASELINE_DOC = """
    {summary}

    Parameters
    ----------
    {gon_encoders}
    {gon_training}

    Attributes
    ----------
    {gon_attributes}
    history_ : list of dict
        One record per epoch (``epoch``, ``train_loss``, ...).
    n_iter_ : int
        Number of epochs run.
    n_features_in_ : int
        Always 1 (the id column).

    {gon_reference}

    Examples
    --------
    >>> import numpy as np
    >>> from skpaper.datasets import make_synthetic_gon
    {example_import}
    >>> outer, inner, y = make_synthetic_gon(n_nodes=60, random_state=0)
    >>> ids = np.arange(60).reshape(-1, 1)
    {example_fit}
    >>> clf.fit(ids, y).predict_proba(ids[:3]).shape
    (3, 4)
    """


def _baseline_doc(name, summary):
    """Fill :data:`_BASELINE_DOC` for the baseline ``name``."""
    examples = {
        "example_import": f">>> from skpaper.graph import GraphOfNets, {name}",
        "example_fit": f">>> clf = {name}(gon=GraphOfNets(outer, inner), max_epochs=5, "
                       "random_state=0)",
    }
    return Substitution(**_GON_DOCS, **examples, summary=summary).fill(_BASELINE_DOC).lstrip()


class OuterGCNClassifier(_BaseGONClassifier):
    __doc__ = _baseline_doc(
        "OuterGCNClassifier",
        "Outer-only baseline: a GCN over the outer graph on mean inner node features.")

    _view = "outer"

    def __init__(self, gon=None, *, inner_layers=2, outer_layers=2, hidden_dim=64, pool="sum",
                 lr=1e-2, weight_decay=5e-4, max_epochs=200, device="auto", random_state=None,
                 verbose=0, callbacks=None, inference_dtype="float32"):
        super().__init__(gon, inner_layers=inner_layers, outer_layers=outer_layers,
                         hidden_dim=hidden_dim, pool=pool, lr=lr, weight_decay=weight_decay,
                         max_epochs=max_epochs, device=device, random_state=random_state,
                         verbose=verbose, callbacks=callbacks, inference_dtype=inference_dtype)


class InnerGINClassifier(OuterGCNClassifier):
    __doc__ = _baseline_doc(
        "InnerGINClassifier",
        "Inner-only baseline: a GIN graph classifier of each node's inner graph.")

    _view = "inner"
