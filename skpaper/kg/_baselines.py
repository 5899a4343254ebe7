"""Baseline link predictors in the same tkbc-style trainer: ComplEx, TNTComplEx, TeAST."""

from ..utils._docstring import Substitution, torch_parameter_docs
from ._base import _BaseTemporalLinkPredictor
from ._models import ComplExModule, TeASTModule, TNTComplExModule

__all__ = ["ComplExLinkPredictor", "TeASTLinkPredictor", "TNTComplExLinkPredictor"]

#: Docstring pieces of the temporal link predictors.
_KG_DOCS = {
    **torch_parameter_docs(max_epochs=50, batch_size=1000, lr=0.1),
    "kg_parameters": """
        rank : int, default=64
            Number of complex (or quaternion) coordinates per embedding.
        max_epochs : int, default=50
            Passes over the (reciprocal-augmented) training facts.
        batch_size : int, default=1000
            Facts per mini-batch (tkbc's default).
        lr : float, default=0.1
            Learning rate.
        optimizer : {"adagrad", "adam"}, default="adagrad"
            Adagrad is the tkbc/TeAST choice.
        emb_reg : float, default=1e-3
            Weight of the N3 penalty ``Σ |x|³`` on the moduli of the subject, relation and
            object factors (divided by the batch size).
        time_reg : float, default=1e-2
            Weight of the temporal smoothness penalty Σ_t ‖τ_{t+1} − τ_t‖³ / (T − 1) on
            the timestamp tables (ignored by models without one).
        reciprocal : bool, default=True
            Train with reciprocal relations r⁻¹ = r + n_relations and answer head
            queries (?, r, o, t) as (o, r⁻¹, ?, t). When False, relations are shared
            and head queries use the adjoint ⟨e_s ⊗ r_t, e_o⟩ = ⟨e_s, e_o ⊗ r̄_t⟩.
        init_scale : float, default=1e-2
            Standard deviation of the Gaussian initialisation of the tables.
        n_negatives : int or None, default=2048
            Training scores every entity for each fact (tkbc's 1-vs-all
            cross-entropy) while there are at most ``n_negatives`` entities, or
            when None. On larger graphs it scores the batch's answers and
            ``n_negatives`` entities drawn uniformly (with replacement, reweighted
            so that the softmax normaliser is unbiased), so that an epoch costs
            O(n_facts x (batch_size + n_negatives) x rank) at most, rather than
            O(n_facts x n_entities x rank). Evaluation always ranks every entity.
        n_entities, n_relations, n_timestamps : int or None, default=None
            Declared id spaces (at most 10**7 each): ids must lie in ``0..n - 1`` and
            each id gets a row. None maps the distinct ids of the fit data to rows
            (like :class:`~sklearn.preprocessing.LabelEncoder`), so later queries with
            ids unseen in training raise a ValueError; declare the sizes when they may
            hold such ids (cross-validation folds, held-out timestamps).
        device : str, default="auto"
            ``"auto"`` uses CUDA when available.
        random_state : int, RandomState instance or None, default=None
            Seeds the initialisation and the batch order.
        {verbose}
        callbacks : list of Callback or None, default=None
            E.g. :class:`~skpaper.nn.EarlyStopping` on ``train_loss``.
        {inference_dtype}""",
    "kg_attributes": """
        module_ : torch.nn.Module
            The trained scoring module.
        known_facts_ : ndarray of shape (n_unique_facts, 4)
            The training facts, used as the ranking filter.
        entities_, relations_, timestamps_ : ndarray of int64
            Sorted ids behind the table rows (``arange(n)`` for a declared size).
        n_entities_, n_relations_, n_timestamps_ : int
            Table sizes actually used (relations before adding reciprocals).
        n_features_in_ : int
            Always 4.
        history_ : list of dict
            Per-epoch ``train_loss`` (the cross-entropy part).
        n_iter_ : int
            Number of epochs run.
        device_ : str
            The device actually used.""",
}
_KG_DOCS["kg_parameters"] = Substitution(**_KG_DOCS).fill(_KG_DOCS["kg_parameters"])


@Substitution(**_KG_DOCS)
class ComplExLinkPredictor(_BaseTemporalLinkPredictor):
    """Static ComplEx link predictor (time ignored), the time-agnostic baseline.

    φ(s, r, o, t) = Re⟨e_s, w_r, ē_o⟩ in ℂ^rank, trained like the temporal models
    so that comparisons isolate the use of time.

    Parameters
    ----------
    {kg_parameters}

    Attributes
    ----------
    {kg_attributes}

    See Also
    --------
    TNTComplExLinkPredictor : Adds free timestamp embeddings.
    TeASTLinkPredictor : Relations on an Archimedean spiral timeline.
    TeDSLinkPredictor : Quaternion embeddings with two views of time.

    Notes
    -----
    An epoch of training costs O(n_facts x min(n_entities, batch_size +
    n_negatives) x rank): linear in the facts once the graph has more than
    ``n_negatives`` entities (see ``n_negatives``). Filtered evaluation
    (:meth:`evaluate`, :meth:`score`) ranks every entity for every test fact,
    O(n_test x n_entities x rank), and :meth:`predict` scores every entity too.

    References
    ----------
    .. [1] Trouillon, Welbl, Riedel, Gaussier & Bouchard, "Complex Embeddings for Simple
       Link Prediction", ICML 2016.
    .. [2] Lacroix, Usunier & Obozinski, "Canonical Tensor Decomposition for Knowledge
       Base Completion", ICML 2018 (N3 and reciprocal training).

    Examples
    --------
    >>> from skpaper.datasets import make_synthetic_tkg
    >>> from skpaper.kg import ComplExLinkPredictor
    >>> X = make_synthetic_tkg(n_entities=30, n_facts=600, random_state=0)
    >>> model = ComplExLinkPredictor(rank=8, max_epochs=3, device="cpu", random_state=0)
    >>> model.fit(X).predict(X[:5]).shape
    (5,)
    """

    _module_class = ComplExModule


@Substitution(**_KG_DOCS)
class TNTComplExLinkPredictor(_BaseTemporalLinkPredictor):
    """TNTComplEx temporal link predictor.

    φ(s, r, o, t) = Re⟨e_s, w_r ⊙ τ_t + w_r^{nt}, ē_o⟩: a temporal and a
    non-temporal relation embedding, with free timestamp embeddings τ_t smoothed
    over time.

    Parameters
    ----------
    {kg_parameters}

    Attributes
    ----------
    {kg_attributes}

    See Also
    --------
    ComplExLinkPredictor : The static baseline (time ignored).
    TeDSLinkPredictor : Quaternion embeddings with two views of time.

    Notes
    -----
    The N3 factors are ``|e_s|``, ``|w_r ⊙ τ_t|``, ``|w_r^{nt}|`` and ``|e_o|`` as in the
    tkbc code, without its 2^{1/3} weighting of the entity factors.

    References
    ----------
    .. [1] Lacroix, Obozinski & Usunier, "Tensor Decompositions for Temporal Knowledge
       Base Completion", ICLR 2020.

    Examples
    --------
    >>> from skpaper.datasets import make_synthetic_tkg
    >>> from skpaper.kg import TNTComplExLinkPredictor
    >>> X = make_synthetic_tkg(n_entities=30, n_facts=600, random_state=0)
    >>> model = TNTComplExLinkPredictor(rank=8, max_epochs=3, device="cpu", random_state=0)
    >>> 0 < model.fit(X).score(X[:50]) <= 1
    True
    """

    _module_class = TNTComplExModule


@Substitution(**_KG_DOCS)
class TeASTLinkPredictor(_BaseTemporalLinkPredictor):
    """TeAST temporal link predictor (relations on an Archimedean spiral timeline).

    φ(s, r, o, t) = Re⟨e_s, π w_r ⊙ τ_t + (1 + i)(sin|p_t| + i sin|p'_t|), ē_o⟩
    with timestamp embeddings τ_t and phases (p_t, p'_t).

    Parameters
    ----------
    {kg_parameters}

    Attributes
    ----------
    {kg_attributes}

    See Also
    --------
    TNTComplExLinkPredictor : Free timestamp embeddings smoothed over time.
    TeDSLinkPredictor : Quaternion embeddings with two views of time.

    Notes
    -----
    The scoring function follows the authors' public code. Their spiral
    regulariser on the two timestamp tables was not available; both tables get
    the same cubic smoothness penalty as TNTComplEx instead.

    References
    ----------
    .. [1] Li, Su, Zhang, Jiang & Gao, "TeAST: Temporal Knowledge Graph Embedding via
       Archimedean Spiral Timeline", ACL 2023.

    Examples
    --------
    >>> from skpaper.datasets import make_synthetic_tkg
    >>> from skpaper.kg import TeASTLinkPredictor
    >>> X = make_synthetic_tkg(n_entities=30, n_facts=600, random_state=0)
    >>> model = TeASTLinkPredictor(rank=8, max_epochs=3, device="cpu", random_state=0)
    >>> model.fit(X).score_samples(X[:3]).shape
    (3,)
    """

    _module_class = TeASTModule
