"""Stage 2: the 24-way octahedral flip classifier with flip voting and conformal sets."""

import math
from numbers import Integral, Real

import numpy as np
import torch
from sklearn.base import ClassifierMixin
from sklearn.utils import check_random_state
from sklearn.utils.validation import check_is_fitted

from ..utils._docstring import Substitution
from ..utils._sklearn import Interval, _fit_context
from ._base import (
    _SHARED_DOCS,
    _BaseCloudNet,
    _rotate_tensor,
    apply_rotation,
)
from ._rotations import nearest_group_element, octahedral_group, random_small_rotations

__all__ = ["OctahedralFlipper", "flip_confusion_distances", "octahedral_cayley_table"]

N_FLIPS = 24


def octahedral_cayley_table():
    """Return the multiplication table of :func:`octahedral_group` and its inverses.

    Returns
    -------
    table : ndarray of shape (24, 24), dtype=int
        ``table[a, b]`` is the index of G[a] G[b].
    inverse : ndarray of shape (24,), dtype=int
        ``inverse[a]`` indexes G[a]^T.

    Examples
    --------
    >>> from skpaper.shape import octahedral_cayley_table
    >>> table, inverse = octahedral_cayley_table()
    >>> table.shape, bool((table[range(24), inverse] == table[0, 0]).all())
    ((24, 24), True)
    """
    G = octahedral_group()
    products = np.einsum("aij,bjk->abik", G, G).reshape(-1, 3, 3)
    table = nearest_group_element(products, G).reshape(N_FLIPS, N_FLIPS)
    inverse = nearest_group_element(np.swapaxes(G, 1, 2), G)
    return table, inverse


def flip_confusion_distances(X, max_points=256):
    """Chamfer distance between each canonical cloud and its 24 cube rotations.

    ``d[i, h]`` is the symmetric Chamfer distance (mean squared nearest-point
    distance, both ways) between cloud ``i`` and the same cloud rotated by
    ``G[h]`` (:func:`octahedral_group`); it is near 0 when ``G[h]`` is a
    symmetry of the shape. Two flips ``a`` and ``b`` of one shape give clouds
    at distance ``d[i, index(G[a]^T G[b])]`` (Chamfer distance is unchanged by
    rotating both clouds), which is how :class:`OctahedralFlipper` builds its
    per-shape confusion matrices.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_points, 3 or 6)
        Canonically oriented clouds (normals, if any, are ignored).
    max_points : int, default=256
        Evenly spaced points per cloud used for the distance (the cost is
        quadratic in it).

    Returns
    -------
    distances : ndarray of shape (n_samples, 24)
        ``distances[:, 0]`` (the identity) is 0.

    Examples
    --------
    >>> import numpy as np
    >>> from skpaper.shape import flip_confusion_distances
    >>> cube_corners = np.array(np.meshgrid([-1, 1], [-1, 1], [-1, 1])).reshape(3, -1).T
    >>> float(flip_confusion_distances(cube_corners[None].astype(float)).max())
    0.0
    """
    from ._base import check_point_clouds

    X = check_point_clouds(X)
    if isinstance(max_points, bool) or not isinstance(max_points, Integral) or max_points < 1:
        raise ValueError(f"max_points must be a positive integer, got {max_points!r}.")
    P = X.shape[1]
    if P > max_points:
        X = X[:, np.unique(np.linspace(0, P - 1, max_points).round().astype(int))]
    pts = X[..., :3]
    G = octahedral_group()
    out = np.empty((len(pts), N_FLIPS))
    for i, cloud in enumerate(pts):
        rotated = cloud @ np.swapaxes(G, 1, 2)  # (24, P, 3): cloud G[h]^T
        norms = (cloud**2).sum(-1)  # rotations keep the norms
        sq = norms[None, :, None] + norms[None, None, :] - 2.0 * rotated @ cloud.T
        sq = np.maximum(sq, 0.0)  # (24, P, P) squared distances
        out[i] = 0.5 * (sq.min(axis=2).mean(axis=1) + sq.min(axis=1).mean(axis=1))
    return out


def _check_flip_labels(y, n):
    y = np.asarray(y)
    if y.shape != (n,):
        raise ValueError(f"y must hold one flip index per cloud, shape ({n},), got {y.shape}.")
    if not np.issubdtype(y.dtype, np.integer):
        if not (np.issubdtype(y.dtype, np.floating) and np.all(np.mod(y, 1) == 0)):
            raise ValueError(f"y must hold integer flip indices in 0..23, got dtype {y.dtype}.")
    y = y.astype(np.int64)
    if y.size and (y.min() < 0 or y.max() >= N_FLIPS):
        raise ValueError(f"y must hold flip indices in 0..23, got values in "
                         f"[{y.min()}, {y.max()}].")
    return y


@Substitution(**_SHARED_DOCS)
class OctahedralFlipper(ClassifierMixin, _BaseCloudNet):
    """Classify which of the 24 cube rotations a near-canonical shape has undergone.

    Trained on canonical shapes perturbed by a random rotation of at most
    ``noise_deg`` degrees (mimicking the residual error of stage 1) and then
    flipped by a uniform random g in O (the cloud becomes X N^T g^T); the label
    is the index of g in :func:`octahedral_group`, the loss cross-entropy.
    Applied after :class:`QuotientOrienter`, whose output is right up to an
    element of O, it resolves that element.

    Parameters
    ----------
    {cloud_parameters}
    noise_deg : float, default=10.0
        Largest angle of the training perturbation.
    n_votes : int, default=1
        Flip voting: the cloud is flipped by K distinct random f_k in O, each
        predicted flip h_k is mapped back to f_k^T h_k, and the majority wins
        (ties go to the larger averaged probability). :meth:`predict_proba`
        averages the mapped-back probabilities. 1 disables it; 24 or more uses
        every flip once, which makes the predictions exactly equivariant:
        flipping the input by h turns the prediction g into h g.
    forward_correction : bool, default=False
        Train through each shape's flip confusion matrix (the official
        trainer's ``confusion_matrices`` option): the predicted distribution p
        is smeared as ``p C^T`` before the negative log-likelihood, where
        ``C[a, b]`` is proportional to ``exp(-d_ab / confusion_temperature)``
        and ``d_ab`` the Chamfer distance between the shape flipped by ``a``
        and by ``b`` (:func:`flip_confusion_distances`). Flips that a
        symmetry of the shape makes indistinguishable then share the loss
        instead of contradicting each other.
    confusion_temperature : float, default=0.01
        Scale of the Chamfer distances in ``C`` (clouds are scaled to radius
        about 1, so 0.01 separates distinct flips and merges symmetric ones).
        Ignored unless ``forward_correction``.
    {network_parameters}
    {torch_parameters}

    Attributes
    ----------
    classes_ : ndarray of shape (24,)
        Flip indices 0..23 into :func:`octahedral_group`.
    module_ : torch.nn.Module
    n_features_in_ : int
    conformal_quantile_ : float
        Set by :meth:`calibrate_conformal`.
    conformal_alpha_ : float
        Set by :meth:`calibrate_conformal`.
    confusion_distances_ : ndarray of shape (n_train, 24) or None
        Chamfer distances of the training shapes to their cube rotations
        (with ``forward_correction``), else None.
    history_ : list of dict
    n_iter_ : int

    See Also
    --------
    QuotientOrienter : Stage 1.
    TwoStageOrienter : Both stages together.

    Notes
    -----
    A flip g is read as "the input is X_canonical g^T", so the shape is
    restored by X g and a stage-1 estimate R_hat is completed as R_hat g. On a
    shape with symmetry group G_S every g s (s in G_S) gives the same input,
    so accuracy is only meaningful modulo G_S. Conformal sets (split conformal
    with the adaptive cumulative score of the official code): the score of a
    calibration pair is the total probability of the classes ranked at or
    above the true one; q_hat is its ceil((n + 1)(1 - alpha)) / n empirical
    quantile (the official code takes the plain 1 - alpha quantile, without
    the finite-sample correction), and a set holds the top classes until their
    cumulative probability reaches q_hat, which covers the true flip with
    probability at least 1 - alpha on exchangeable data.

    References
    ----------
    .. [1] Scarvelis, Benhaim & Zhang, "Symmetry-Robust 3D Orientation
       Estimation", ICML 2025 (arXiv:2410.02101).

    Examples
    --------
    >>> from skpaper.datasets import make_synthetic_shapes
    >>> from skpaper.shape import OctahedralFlipper
    >>> X, _ = make_synthetic_shapes(4, 64, random_state=0)
    >>> clf = OctahedralFlipper(n_points=64, max_epochs=2, random_state=0).fit(X)
    >>> clf.predict_proba(X[:2]).shape
    (2, 24)
    """

    _parameter_constraints = {
        **_BaseCloudNet._parameter_constraints,
        "noise_deg": [Interval(Real, 0, 180, closed="both")],
        "forward_correction": ["boolean"],
        "confusion_temperature": [Interval(Real, 0, None, closed="neither")],
    }
    _n_outputs = N_FLIPS

    def __init__(self, *, backbone="pointnet", n_points=1024, use_normals=True, noise_deg=10.0,
                 n_votes=1, forward_correction=False, confusion_temperature=0.01,
                 embed_dim=128, k_neighbors=20, dropout=0.0, max_epochs=100,
                 batch_size=32, lr=1e-3, device="auto", random_state=None, verbose=0,
                 callbacks=None, inference_dtype="float32"):
        super().__init__(backbone=backbone, n_points=n_points, use_normals=use_normals,
                         n_votes=n_votes, embed_dim=embed_dim, k_neighbors=k_neighbors,
                         dropout=dropout, max_epochs=max_epochs, batch_size=batch_size, lr=lr,
                         device=device, random_state=random_state, verbose=verbose,
                         callbacks=callbacks, inference_dtype=inference_dtype)
        self.noise_deg = noise_deg
        self.forward_correction = forward_correction
        self.confusion_temperature = confusion_temperature

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None):
        """Fit on canonical clouds (self-supervised flips) or on flipped clouds and labels.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_points, 3 or 6)
            Canonically oriented clouds when ``y`` is None; otherwise clouds
            already flipped (X_canonical G[y]^T).
        y : array-like of shape (n_samples,) or None, default=None
            Flip indices in 0..23. When None, every batch draws fresh noise
            rotations and flips.

        Returns
        -------
        self : OctahedralFlipper
            The fitted classifier.
        """
        X = self._validate_clouds(X, reset=True)
        if y is not None:
            y = _check_flip_labels(y, len(X))
        self.classes_ = np.arange(N_FLIPS)
        self._start_fit()
        self.confusion_distances_ = None
        if self.forward_correction:
            # Distances of the canonical shapes (a labelled cloud is X_c G[y]^T).
            canonical = X if y is None else apply_rotation(X, np.swapaxes(
                octahedral_group()[y], 1, 2))
            self.confusion_distances_ = flip_confusion_distances(canonical)
        return self._fit_clouds(X, None if y is None else torch.as_tensor(y, device=self.device_))

    def _loss(self, logits, labels, rows):
        if not self.forward_correction:
            return torch.nn.functional.cross_entropy(logits, labels)
        table, inverse = octahedral_cayley_table()
        # Row y of each shape's confusion matrix: C[y, b] ~ exp(-d(G[y]^T G[b]) / T).
        rel = torch.as_tensor(table[inverse], device=logits.device)[labels]  # (B, 24)
        dist = torch.as_tensor(self.confusion_distances_, dtype=logits.dtype,
                               device=logits.device)[rows.to(logits.device)]
        log_c = torch.log_softmax(-torch.gather(dist, 1, rel) / self.confusion_temperature,
                                  dim=1)
        # -log sum_b C[y, b] p_b, in log space.
        log_p = torch.log_softmax(logits, dim=1)
        return -torch.logsumexp(log_c + log_p, dim=1).mean()

    def _augment(self, Xb, rng):
        """A random perturbation of at most ``noise_deg``, then a uniform random flip g."""
        noise = torch.as_tensor(random_small_rotations(len(Xb), self.noise_deg, rng),
                                dtype=Xb.dtype, device=Xb.device)
        labels = torch.as_tensor(rng.randint(N_FLIPS, size=len(Xb)), device=Xb.device)
        G = torch.as_tensor(octahedral_group(), dtype=Xb.dtype, device=Xb.device)
        return _rotate_tensor(Xb, G[labels] @ noise), labels

    def _get_loss(self, batch):
        Xb, labels, rows = batch
        return self._loss(self.module_(Xb), labels, rows)

    def _vote_flips(self):
        if int(self.n_votes) == 1:
            return np.zeros(1, dtype=int)
        return self._vote_rng().permutation(N_FLIPS)[: int(self.n_votes)]

    def _mapped_back_probabilities(self, X):
        """(K, n, 24) probabilities of each original flip g, one slice per vote f_k."""
        check_is_fitted(self)
        X = self._eval_points(self._validate_clouds(X, reset=False))
        G = octahedral_group()
        table, _ = octahedral_cayley_table()
        out = []
        for f in self._vote_flips():
            logits = self._forward_numpy(apply_rotation(X, G[f]) if f else X)
            logits -= logits.max(axis=1, keepdims=True)
            p = np.exp(logits)
            p /= p.sum(axis=1, keepdims=True)
            # The flipped input is X_c (f g)^T: the probability of g is that of f g.
            out.append(p[:, table[f]])
        return np.stack(out)

    @Substitution(**_SHARED_DOCS)
    def predict_proba(self, X):
        """Predict the probabilities of the 24 flips, averaged over the voting flips.

        Parameters
        ----------
        {X_clouds}

        Returns
        -------
        proba : ndarray of shape (n_samples, 24)
            Probability of each flip index of :func:`octahedral_group`.
        """
        return self._mapped_back_probabilities(X).mean(axis=0)

    @Substitution(**_SHARED_DOCS)
    def predict(self, X):
        """Predict the flip index in 0..23 (majority of the mapped-back votes).

        Parameters
        ----------
        {X_clouds}

        Returns
        -------
        flips : ndarray of shape (n_samples,)
            Index into :func:`octahedral_group` of the flip of each cloud.
        """
        probs = self._mapped_back_probabilities(X)
        votes = probs.argmax(axis=2)  # (K, n)
        counts = np.zeros(probs.shape[1:])
        np.add.at(counts, (np.arange(probs.shape[1])[None].repeat(len(votes), 0), votes), 1.0)
        return self.classes_[np.argmax(counts + 0.5 * probs.mean(axis=0), axis=1)]

    @Substitution(**_SHARED_DOCS)
    def predict_top_k(self, X, k=4):
        """Predict the ``k`` most probable flips, most probable first.

        The official benchmark's top-4 evaluation keeps the best of the four
        completed orientations; see :func:`top_k_axis_errors`.

        Parameters
        ----------
        {X_clouds}
        k : int, default=4
            Number of flips kept, in 1..24.

        Returns
        -------
        flips : ndarray of shape (n_samples, k)
            Flip indices by decreasing probability.
        """
        if isinstance(k, bool) or not isinstance(k, Integral) or not 1 <= k <= N_FLIPS:
            raise ValueError(f"k must be an integer in [1, {N_FLIPS}], got {k!r}.")
        proba = self.predict_proba(X)
        return self.classes_[np.argsort(-proba, axis=1, kind="stable")[:, : int(k)]]

    def calibrate_conformal(self, X, y=None, *, alpha=0.1, noise_deg=0.0, random_state=None):
        """Split-conformal calibration of :meth:`predict_set` on held-out shapes.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_points, 3 or 6)
            Canonical calibration clouds when ``y`` is None (they are then
            flipped at random, after an optional ``noise_deg`` perturbation),
            else clouds already flipped by ``G[y]``.
        y : array-like of shape (n_samples,) or None, default=None
            True flip indices.
        alpha : float, default=0.1
            Miscoverage level: sets cover the true flip with probability at
            least 1 - alpha.
        noise_deg : float, default=0.0
            Perturbation of self-generated calibration clouds.
        random_state : int, RandomState instance or None, default=None
            Seeds the self-generated flips and perturbations.

        Returns
        -------
        self : OctahedralFlipper
            The classifier, with ``conformal_quantile_`` and ``conformal_alpha_`` set.
        """
        check_is_fitted(self)
        if not isinstance(alpha, Real) or isinstance(alpha, bool) or not 0 < alpha < 1:
            raise ValueError(f"alpha must be a float in (0, 1), got {alpha!r}.")
        if not isinstance(noise_deg, Real) or not 0 <= noise_deg <= 180:
            raise ValueError(f"noise_deg must be in [0, 180], got {noise_deg!r}.")
        X = self._validate_clouds(X, reset=False)
        if y is None:
            rng = check_random_state(random_state)
            y = rng.randint(N_FLIPS, size=len(X))
            R = octahedral_group()[y] @ random_small_rotations(len(X), noise_deg, rng)
            X = apply_rotation(X, R)
        y = _check_flip_labels(y, len(X))
        scores = self.conformal_scores(X, y)
        k = math.ceil((len(scores) + 1) * (1 - alpha))
        # q_hat is the k-th smallest score; with too few calibration shapes (k > n) the
        # guarantee needs the full set.
        self.conformal_quantile_ = (float(np.sort(scores)[k - 1]) if k <= len(scores)
                                    else np.inf)
        self.conformal_alpha_ = float(alpha)
        return self

    @Substitution(**_SHARED_DOCS)
    def conformal_scores(self, X, y):
        """Return the cumulative probability of the classes ranked at or above the true flip.

        Parameters
        ----------
        {X_clouds}
        y : array-like of shape (n_samples,)
            True flip indices in 0..23.

        Returns
        -------
        scores : ndarray of shape (n_samples,)
            The adaptive conformity score of each cloud, in (0, 1].
        """
        proba = self.predict_proba(X)
        y = _check_flip_labels(y, len(proba))
        order = np.argsort(-proba, axis=1, kind="stable")
        cum = np.cumsum(np.take_along_axis(proba, order, axis=1), axis=1)
        rank = np.argmax(order == y[:, None], axis=1)
        return cum[np.arange(len(y)), rank]

    @Substitution(**_SHARED_DOCS)
    def predict_set(self, X):
        """Predict the conformal sets of flips, as a boolean mask.

        Parameters
        ----------
        {X_clouds}

        Returns
        -------
        sets : ndarray of shape (n_samples, 24), dtype=bool
            ``sets[i, g]`` is True when flip g is in the set of cloud i.
        """
        check_is_fitted(self, "conformal_quantile_", msg=(
            "This OctahedralFlipper has no conformal calibration; call calibrate_conformal "
            "first."))
        proba = self.predict_proba(X)
        order = np.argsort(-proba, axis=1, kind="stable")
        cum = np.cumsum(np.take_along_axis(proba, order, axis=1), axis=1)
        # Keep classes until the cumulative probability first reaches q_hat.
        keep_sorted = (cum - np.take_along_axis(proba, order, axis=1)) < self.conformal_quantile_
        keep_sorted[:, 0] = True
        sets = np.zeros_like(proba, dtype=bool)
        np.put_along_axis(sets, order, keep_sorted, axis=1)
        return sets

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = True
        return tags
