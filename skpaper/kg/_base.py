"""Shared fit/predict/evaluate machinery of the temporal link predictors.

Training follows the tkbc convention shared by TNTComplEx, TeAST and (by their
lineage) TeDS: reciprocal relations, 1-vs-all cross-entropy over every entity,
an N3 penalty on the moduli of the factors and a temporal smoothness penalty on
the timestamp tables, optimised with Adagrad.
"""

import math
from numbers import Integral, Real

import numpy as np
import torch
from sklearn.utils.validation import check_is_fitted
from torch import nn

from ..nn._base import BaseTorchEstimator
from ..utils._memory import check_allocation
from ..utils._sklearn import Interval, StrOptions, _fit_context, validate_data
from ._metrics import FactIndex, filtered_ranks, ranking_metrics

_COLUMNS = ("subject", "relation", "object", "time")


#: Most rows one embedding table may have (declared sizes and distinct fit ids).
_MAX_TABLE_ROWS = 10**7


def _fit_vocabulary(name, given, ids):
    """Sorted ids of one kind: ``0..given-1`` when declared, else the distinct fit ids.

    Tables are sized by the vocabulary, never by the largest id, so sparse ids (say
    ``2**31``) cost one row each.
    """
    high = int(ids.max())
    if given is None:
        return np.unique(ids)
    if given <= high:
        raise ValueError(f"{name}={given} is too small: the fit data hold ids up to {high}.")
    return np.arange(given, dtype=np.int64)


def _encode(vocabulary, ids):
    """Row of each id in ``vocabulary`` and a mask of the ids it holds."""
    if vocabulary[-1] == vocabulary.size - 1:  # 0..n-1: ids are their own rows
        return ids, ids < vocabulary.size
    codes = np.minimum(np.searchsorted(vocabulary, ids), vocabulary.size - 1)
    return codes, vocabulary[codes] == ids


class _BaseTemporalLinkPredictor(BaseTorchEstimator):
    """Base class of the temporal knowledge-graph link predictors.

    X is an integer array of shape (n_facts, 4) with columns (subject,
    relation, object, time). Timestamp ids are taken in chronological order.
    Ids are mapped to table rows through the vocabularies fitted on X
    (``entities_``, ``relations_``, ``timestamps_``), so any non-negative ids
    work and tables are sized by the number of distinct ids.
    Subclasses set ``_module_class`` to a :class:`~skpaper.kg._models.TKGModule`
    subclass (and :meth:`_module_options` to its further arguments).
    """

    _parameter_constraints = {
        **BaseTorchEstimator._parameter_constraints,
        "rank": [Interval(Integral, 1, 4096, closed="both")],
        "optimizer": [StrOptions({"adagrad", "adam"})],
        "emb_reg": [Interval(Real, 0, None, closed="left")],
        "time_reg": [Interval(Real, 0, None, closed="left")],
        "reciprocal": ["boolean"],
        "init_scale": [Interval(Real, 0, None, closed="neither")],
        "n_negatives": [Interval(Integral, 1, _MAX_TABLE_ROWS, closed="both"), None],
        "n_entities": [Interval(Integral, 1, _MAX_TABLE_ROWS, closed="both"), None],
        "n_relations": [Interval(Integral, 1, _MAX_TABLE_ROWS, closed="both"), None],
        "n_timestamps": [Interval(Integral, 1, _MAX_TABLE_ROWS, closed="both"), None],
    }

    def __init__(self, *, rank=64, max_epochs=50, batch_size=1000, lr=0.1, optimizer="adagrad",
                 emb_reg=1e-3, time_reg=1e-2, reciprocal=True, init_scale=1e-2,
                 n_negatives=2048, n_entities=None, n_relations=None, n_timestamps=None,
                 device="auto", random_state=None, verbose=0, callbacks=None,
                 inference_dtype="float32"):
        super().__init__(max_epochs=max_epochs, batch_size=batch_size, lr=lr, device=device,
                         random_state=random_state, verbose=verbose, callbacks=callbacks,
                         inference_dtype=inference_dtype)
        self.rank = rank
        self.optimizer = optimizer
        self.emb_reg = emb_reg
        self.time_reg = time_reg
        self.reciprocal = reciprocal
        self.init_scale = init_scale
        self.n_negatives = n_negatives
        self.n_entities = n_entities
        self.n_relations = n_relations
        self.n_timestamps = n_timestamps

    # ------------------------------------------------------------ validation
    def _validate_quadruples(self, X, reset, name="X", drop_unknown=False):
        """Checked int64 quadruples; with ``reset=False``, mapped to table rows.

        Unknown ids (outside the fitted vocabularies) raise a ValueError, or, with
        ``drop_unknown``, drop their rows.
        """
        X = validate_data(self, X, reset=reset, dtype=None, ensure_min_samples=1)
        if X.shape[1] != 4:
            raise ValueError(f"{name} must have 4 columns (subject, relation, object, time), got "
                             f"{X.shape[1]}.")
        if not np.issubdtype(X.dtype, np.integer):
            if (not np.issubdtype(X.dtype, np.floating) or not np.all(X == np.round(X))
                    or np.abs(X).max() >= 2.0**63):
                raise TypeError(f"{name} must hold integer ids, got dtype {X.dtype}.")
        X = X.astype(np.int64)
        for col, column in enumerate(_COLUMNS):
            low = X[:, col].min()
            if low < 0:
                raise ValueError(f"{name} holds a negative {column} id ({low}) in column {col}; "
                                 "ids must be non-negative.")
        if reset:
            return X
        vocabularies = (self.entities_, self.relations_, self.entities_, self.timestamps_)
        codes = np.empty_like(X)
        keep = np.ones(X.shape[0], dtype=bool)
        for col, (column, vocabulary) in enumerate(zip(_COLUMNS, vocabularies)):
            codes[:, col], known = _encode(vocabulary, X[:, col])
            if drop_unknown:
                keep &= known
            elif not known.all():
                size = "n_entities" if col in (0, 2) else f"n_{column}s"
                raise ValueError(
                    f"{name} holds {column} id {X[~known, col][0]} in column {col}, which the "
                    f"fit data lack ({vocabulary.size} {column} ids seen); declare the id "
                    f"space with {size} to score ids unseen in training.")
        return codes[keep]

    # ----------------------------------------------------------------- hooks
    def _build_optimizer(self, module):
        if self.optimizer == "adam":
            return torch.optim.Adam(module.parameters(), lr=self.lr)
        return torch.optim.Adagrad(module.parameters(), lr=self.lr)

    #: The :class:`~skpaper.kg._models.TKGModule` subclass the estimator trains.
    _module_class = None

    @property
    def _n_relation_rows(self):
        return 2 * self.n_relations_ if self.reciprocal else self.n_relations_

    def _module_options(self):
        """Keyword arguments of ``_module_class`` beyond the table sizes, rank and scale."""
        return {}

    def _build_module(self):
        return self._module_class(self.n_entities_, self._n_relation_rows, self.n_timestamps_,
                                  self.rank, self.init_scale, **self._module_options())

    def _entity_cross_entropy(self, q, target):
        """Cross-entropy of the answers ``target`` among the entities, for queries ``q``.

        Every entity is scored while there are at most ``n_negatives`` (tkbc's 1-vs-all),
        or while the batch has so many distinct answers that scoring them and the draws
        would cost as much. Past that, the batch's answers and ``n_negatives`` entities
        drawn uniformly with replacement are scored; a drawn entity stands for
        ``n_entities / n_negatives`` entities (draws that are answers are dropped), so
        the softmax normaliser is an unbiased estimate of the full one, and a step
        costs O(batch x (batch + n_negatives)) instead of O(batch x n_entities).
        """
        entity = self.module_.entity
        n_entities = entity.shape[0]
        if self.n_negatives is None or n_entities <= self.n_negatives:
            return nn.functional.cross_entropy(q @ entity.t(), target)
        n_draws = int(self.n_negatives)
        answers, answer_of = torch.unique(target, return_inverse=True)
        if answers.numel() + n_draws >= n_entities:  # scoring all entities is no dearer
            return nn.functional.cross_entropy(q @ entity.t(), target)
        draws = torch.randint(n_entities, (n_draws,), generator=self._generator)
        draws = draws.to(entity.device)
        negatives = q @ entity[draws].t() + math.log(n_entities / n_draws)
        negatives = negatives.masked_fill(torch.isin(draws, answers)[None, :], -math.inf)
        logits = torch.cat([q @ entity[answers].t(), negatives], dim=1)
        return nn.functional.cross_entropy(logits, answer_of)

    def _get_loss(self, batch):
        """1-vs-all cross-entropy (recorded as ``train_loss``) plus the N3 and time penalties."""
        (facts,) = batch
        module = self.module_
        s, r, o, t = facts.unbind(1)
        q, rel_factors = module.query(s, r, t)
        loss_fit = self._entity_cross_entropy(q, o)
        if not self.reciprocal:
            q_head, _ = module.query(o, r, t, inverse=True)
            loss_fit = 0.5 * (loss_fit + self._entity_cross_entropy(q_head, s))
        # N3 on the modulus of every complex/quaternion coordinate.
        factors = [module.entity_sq_moduli(s), *rel_factors, module.entity_sq_moduli(o)]
        loss_reg = self.emb_reg * sum(f.pow(1.5).sum() for f in factors) / facts.shape[0]
        loss = loss_fit + loss_reg + self.time_reg * module.temporal_smoothness()
        return {"loss": loss, "train_loss": loss_fit}

    # ---------------------------------------------------------------- fitting
    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None):
        """Fit embeddings on known facts.

        Parameters
        ----------
        X : array-like of shape (n_facts, 4)
            Integer quadruples (subject, relation, object, time).
        y : None
            Ignored.

        Returns
        -------
        self : object
            The fitted estimator.
        """
        X = self._validate_quadruples(X, reset=True)
        self.entities_ = _fit_vocabulary("n_entities", self.n_entities, X[:, [0, 2]])
        self.relations_ = _fit_vocabulary("n_relations", self.n_relations, X[:, 1])
        self.timestamps_ = _fit_vocabulary("n_timestamps", self.n_timestamps, X[:, 3])
        for name, vocabulary in (("entity", self.entities_), ("relation", self.relations_),
                                 ("timestamp", self.timestamps_)):
            if vocabulary.size > _MAX_TABLE_ROWS:
                raise ValueError(f"X holds {vocabulary.size} distinct {name} ids; at most "
                                 f"{_MAX_TABLE_ROWS} are supported.")
        self.n_entities_ = self.entities_.size
        self.n_relations_ = self.relations_.size
        self.n_timestamps_ = self.timestamps_.size
        self._check_training_memory()
        self.known_facts_ = np.unique(X, axis=0)
        self._init_torch_state()
        facts = self._validate_quadruples(self.known_facts_, reset=False)
        if self.reciprocal:
            inverse = facts[:, [2, 1, 0, 3]].copy()
            inverse[:, 1] += self.n_relations_
            facts = np.concatenate([facts, inverse])
        tensors = (torch.as_tensor(facts, dtype=torch.long, device=self.device_),)
        return self._fit_loop(tensors)

    def _check_training_memory(self):
        """Estimate the tables and the per-batch scores before allocating them."""
        width = self._module_class.n_components * int(self.rank)
        rows = self.n_entities_ + 2 * self._n_relation_rows + 2 * self.n_timestamps_
        # Parameters, gradients and optimizer state (Adam keeps two moments), float32.
        tables = rows * width * 4 * (4 if self.optimizer == "adam" else 3)
        check_allocation(
            tables, type(self).__name__,
            f"the embedding tables (n_entities={self.n_entities_}, "
            f"n_relations={self.n_relations_}, n_timestamps={self.n_timestamps_}, "
            f"rank={self.rank})",
            "lower rank, or leave n_entities, n_relations and n_timestamps at None to size "
            "the tables by the ids in X")
        scored = self.n_entities_
        if self.n_negatives is not None and scored > self.n_negatives:
            scored = min(scored, int(self.batch_size) + int(self.n_negatives))
        check_allocation(
            int(self.batch_size) * scored * 4 * 3, type(self).__name__,
            f"the training scores of batch_size={self.batch_size} facts over {scored} "
            f"entities (n_entities={self.n_entities_}, n_negatives={self.n_negatives})",
            "lower batch_size or n_negatives")

    def _check_score_memory(self, n_queries, name, factor=1):
        # Each query scores every entity: (n_queries, n_entities) floats, ``factor`` copies.
        check_allocation(
            n_queries * self.n_entities_ * 8 * factor, type(self).__name__,
            f"the scores of {name}={n_queries} queries over n_entities={self.n_entities_} "
            "entities",
            f"lower {name} or n_entities")

    # ------------------------------------------------------------ prediction
    def _score_batches(self, X, inverse, batch_size=None):
        """Yield (slice, scores over all entities) for tail (or head) queries of X."""
        module = self.module_
        step = int(batch_size or max(int(self.batch_size), 1024))
        self._check_score_memory(step, "batch_size")
        with torch.no_grad():
            for start in range(0, X.shape[0], step):
                chunk = X[start:start + step]
                if inverse and self.reciprocal:
                    chunk = chunk[:, [2, 1, 0, 3]].copy()
                    chunk[:, 1] += self.n_relations_
                    use_adjoint = False
                else:
                    use_adjoint = inverse
                x = torch.as_tensor(chunk, dtype=torch.long, device=self.device_)
                scores = module(x, inverse=use_adjoint)
                yield slice(start, start + chunk.shape[0]), scores.double().cpu().numpy()

    def predict(self, X):
        """Most plausible object of each query (subject, relation, ?, time).

        Parameters
        ----------
        X : array-like of shape (n_queries, 4)
            Integer quadruples; the object column is ignored.

        Returns
        -------
        objects : ndarray of shape (n_queries,)
            Entity id with the highest score φ(s, r, ·, t) (unfiltered).
        """
        check_is_fitted(self)
        X = self._validate_quadruples(X, reset=False)
        out = np.empty(X.shape[0], dtype=np.int64)
        for rows, scores in self._score_batches(X, inverse=False):
            out[rows] = scores.argmax(axis=1)
        return self.entities_[out]

    def score_samples(self, X):
        """Plausibility φ(s, r, o, t) of each quadruple (higher is more plausible).

        Parameters
        ----------
        X : array-like of shape (n_facts, 4)
            Quadruples ``(subject, relation, object, timestamp)`` of ids.

        Returns
        -------
        scores : ndarray of shape (n_facts,)
            The score of each quadruple.
        """
        check_is_fitted(self)
        X = self._validate_quadruples(X, reset=False)
        module = self.module_
        out = np.empty(X.shape[0], dtype=np.float64)
        step = max(int(self.batch_size), 1024)
        with torch.no_grad():
            for start in range(0, X.shape[0], step):
                x = torch.as_tensor(X[start:start + step], dtype=torch.long, device=self.device_)
                q, _ = module.query(x[:, 0], x[:, 1], x[:, 3])
                out[start:start + x.shape[0]] = (q * module.entity[x[:, 2]]).sum(-1).double().cpu()
        return out

    def evaluate(self, X, filter_facts=None, tie_breaking="pessimistic", batch_size=None):
        """Time-aware filtered MRR and Hits@1/3/10 over tail and head queries.

        Each fact (s, r, o, t) gives a tail query (s, r, ?, t) answered by o and a
        head query (?, r, o, t) answered by s. Candidates that form another known
        fact at the same timestamp are filtered out; known facts are
        ``known_facts_`` ∪ ``X`` ∪ ``filter_facts``.

        Filtered ranking scores every entity for every query: the cost is
        O(n_facts x n_entities x rank) time for the two directions, plus an index
        of the known facts built in O(n_known log n_known), and
        O(batch_size x n_entities) memory for the scores of one batch.

        Parameters
        ----------
        X : array-like of shape (n_facts, 4)
            Test quadruples.
        filter_facts : array-like of shape (n, 4), default=None
            Further known facts to filter (e.g. the validation split). Facts with ids
            outside the fitted vocabularies are ignored: they match no query here.
        tie_breaking : {"pessimistic", "optimistic", "realistic"}, default="pessimistic"
            See :func:`~skpaper.kg.filtered_ranks`; pessimistic is tkbc's convention.
        batch_size : int, default=None
            Queries scored at once (default ``max(batch_size, 1024)``).

        Returns
        -------
        metrics : dict
            ``mrr``, ``hits@1``, ``hits@3``, ``hits@10`` over both directions, and
            ``mrr_tail``, ``mrr_head``.
        """
        check_is_fitted(self)
        X = self._validate_quadruples(X, reset=False)
        known = [self._validate_quadruples(self.known_facts_, reset=False), X]
        if filter_facts is not None:
            # A fact with an id outside the vocabularies is no candidate of any query.
            known.append(self._validate_quadruples(filter_facts, reset=False,
                                                   name="filter_facts", drop_unknown=True))
        known = np.concatenate(known)
        bases = (self.n_relations_, self.n_timestamps_)
        ranks = {}
        for direction, inverse in (("tail", False), ("head", True)):
            cols = [2, 1, 0, 3] if inverse else [0, 1, 2, 3]
            queries, index = X[:, cols], FactIndex(known[:, cols], bases)
            out = np.empty(X.shape[0], dtype=np.float64)
            for rows, scores in self._score_batches(X, inverse=inverse, batch_size=batch_size):
                mask = index.mask(queries[rows], self.n_entities_)
                out[rows] = filtered_ranks(scores, queries[rows, 2], mask, tie_breaking)
            ranks[direction] = out
        metrics = ranking_metrics(np.concatenate([ranks["tail"], ranks["head"]]))
        metrics["mrr_tail"] = float(np.mean(1.0 / ranks["tail"]))
        metrics["mrr_head"] = float(np.mean(1.0 / ranks["head"]))
        return metrics

    def score(self, X, y=None):
        """Time-aware filtered MRR of X (both directions), filtering ``known_facts_`` ∪ X.

        Parameters
        ----------
        X : array-like of shape (n_facts, 4)
            Test quadruples.
        y : None
            Ignored.

        Returns
        -------
        mrr : float
            The mean reciprocal rank, in (0, 1].
        """
        return self.evaluate(X)["mrr"]

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        # Rows are integer (s, r, o, t) ids, not features: random float matrices are no input.
        tags.input_tags.two_d_array = False
        return tags
