"""Data generators for `skpaper.representation` (numpy only; no torch import)."""

from numbers import Integral, Real

import numpy as np
from sklearn.utils import Bunch, check_random_state

from ..utils._sklearn import Interval, StrOptions, validate_params

__all__ = [
    "make_plate_embeddings",
    "make_relu_teacher_tasks",
    "make_superposition_activations",
    "make_synthetic_cell_plates",
    "make_teacher_tasks",
    "relu_teacher_kernel",
]


@validate_params(
    {
        "d": [Interval(Integral, 2, None, closed="left")],
        "theta": [Interval(Real, 0, np.pi, closed="both")],
        "sigma": [Interval(Real, 0, None, closed="left")],
        "n": [Interval(Integral, 0, None, closed="left")],
        "n_source": [Interval(Integral, 0, None, closed="left"), None],
        "sigma_source": [Interval(Real, 0, None, closed="left"), None],
        "random_state": ["random_state"],
    },
    prefer_skip_nested_validation=True,
)
def make_teacher_tasks(d=100, theta=np.pi / 4, sigma=0.0, n=50, *, n_source=None,
                       sigma_source=None, random_state=None):
    """Source and target linear-teacher regression tasks at a given angle.

    The setting of Tahir et al. [1]_: ``x ~ N(0, I_d)``, ``y = beta^T x + eps`` with
    ``eps ~ N(0, sigma^2)``, and unit teachers ``beta_s`` and
    ``beta_t = cos(theta) beta_s + sin(theta) beta_perp``.

    Parameters
    ----------
    d : int, default=100
        Input dimension.
    theta : float, default=pi/4
        Angle between the source and target teachers, in radians (``0`` to ``pi``).
    sigma : float, default=0.0
        Target label-noise standard deviation.
    n : int, default=50
        Number of target samples (``gamma = n / d``).
    n_source : int or None, default=None
        If given, also draw this many source samples (finite-source pretraining);
        ``None`` means the source is known through ``beta_source`` only (infinite data).
    sigma_source : float or None, default=None
        Source label noise; ``None`` uses ``sigma``.
    random_state : int, RandomState instance or None, default=None
        Seed of the random draws; an int makes the output reproducible.

    Returns
    -------
    task : Bunch
        ``X`` (n, d), ``y`` (n,), ``beta_source`` and ``beta_target`` (d,), ``theta``,
        ``sigma``; with ``n_source``, also ``X_source`` and ``y_source``.

    References
    ----------
    .. [1] J. Tahir, S. Ganguli and G. M. Rotskoff, "Features are fate: a theory of
       transfer learning in high-dimensional regression", ICML 2025.

    Examples
    --------
    >>> import numpy as np
    >>> from skpaper.datasets import make_teacher_tasks
    >>> task = make_teacher_tasks(d=20, theta=np.pi / 3, sigma=0.1, n=10, random_state=0)
    >>> task.X.shape, round(float(task.beta_source @ task.beta_target), 6)
    ((10, 20), 0.5)
    """
    rng = check_random_state(random_state)
    beta_s = rng.standard_normal(d)
    beta_s /= np.linalg.norm(beta_s)
    perp = rng.standard_normal(d)
    perp -= (perp @ beta_s) * beta_s
    perp /= np.linalg.norm(perp)
    beta_t = np.cos(theta) * beta_s + np.sin(theta) * perp
    X = rng.standard_normal((n, d))
    y = X @ beta_t + sigma * rng.standard_normal(n)
    task = Bunch(X=X, y=y, beta_source=beta_s, beta_target=beta_t, theta=float(theta),
                 sigma=float(sigma))
    if n_source is not None:
        s_src = sigma if sigma_source is None else sigma_source
        X_source = rng.standard_normal((n_source, d))
        task.X_source = X_source
        task.y_source = X_source @ beta_s + s_src * rng.standard_normal(n_source)
    return task


@validate_params(
    {"A": ["array-like"], "B": ["array-like"]}, prefer_skip_nested_validation=True
)
def relu_teacher_kernel(A, B):
    """``E[relu(a^T x) relu(b^T x)]`` for ``x ~ N(0, I)`` between rows of ``A`` and ``B``.

    The first-order arc-cosine kernel of Cho and Saul (2009), used in Appendix E of [1]_
    to measure how much of a ReLU teacher lies outside a feature space.

    Parameters
    ----------
    A : array-like of shape (n_a, d)
        First set of vectors, one per row.
    B : array-like of shape (n_b, d)
        Second set of vectors, one per row.

    Returns
    -------
    K : ndarray of shape (n_a, n_b)
        ``||a|| ||b|| (sqrt(1 - u^2) + u (pi - arccos u)) / (2 pi)`` with ``u`` the cosine
        of the angle between ``a`` and ``b``.

    References
    ----------
    .. [1] J. Tahir, S. Ganguli and G. M. Rotskoff, "Features are fate: a theory of
       transfer learning in high-dimensional regression", ICML 2025.

    Examples
    --------
    >>> import numpy as np
    >>> from skpaper.datasets import relu_teacher_kernel
    >>> float(relu_teacher_kernel(np.eye(2), np.eye(2))[0, 0])
    0.5
    """
    A = np.atleast_2d(np.asarray(A, dtype=np.float64))
    B = np.atleast_2d(np.asarray(B, dtype=np.float64))
    if A.shape[1] != B.shape[1]:
        raise ValueError(f"A and B must have as many columns, got {A.shape} and {B.shape}.")
    na = np.linalg.norm(A, axis=1)
    nb = np.linalg.norm(B, axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        u = (A @ B.T) / np.outer(na, nb)
    u = np.clip(np.nan_to_num(u), -1.0, 1.0)
    return np.outer(na, nb) * (np.sqrt(1.0 - u**2) + u * (np.pi - np.arccos(u))) / (2 * np.pi)


@validate_params(
    {
        "d": [Interval(Integral, 1, None, closed="left")],
        "n_teacher": [Interval(Integral, 1, None, closed="left")],
        "ablation": [Interval(Real, 0, 1, closed="both")],
        "sigma": [Interval(Real, 0, None, closed="left")],
        "n": [Interval(Integral, 0, None, closed="left")],
        "n_source": [Interval(Integral, 0, None, closed="left")],
        "n_test": [Interval(Integral, 0, None, closed="left")],
        "random_state": ["random_state"],
    },
    prefer_skip_nested_validation=True,
)
def make_relu_teacher_tasks(d=20, n_teacher=20, ablation=0.5, sigma=0.0, n=100, *,
                            n_source=1000, n_test=2000, random_state=None):
    """Source and target two-layer ReLU teachers; the source drops a fraction of neurons.

    The nonlinear setting of Section 4 of [1]_: the target is
    ``f_t(x) = (1/m*) sum_i c_i relu(w_i^T x)`` with unit ``w_i``, and the source teacher
    keeps only the first ``(1 - ablation) m*`` of its neurons, so ``ablation`` plays the
    role of the angle. Here ``c_i ~ N(0, 1)`` and the target is rescaled to
    ``E[f_t(x)^2] = 1`` so that risks compare with those of unit linear teachers (the
    scales are reconstructed, not taken from the paper).

    Parameters
    ----------
    d : int, default=20
        Input dimension.
    n_teacher : int, default=20
        Number of target-teacher neurons ``m*``.
    ablation : float, default=0.5
        Fraction ``mu`` of teacher neurons removed from the source, in ``[0, 1]``.
    sigma : float, default=0.0
        Label-noise standard deviation of both tasks.
    n : int, default=100
        Number of target training samples.
    n_source : int, default=1000
        Number of source samples (for pretraining).
    n_test : int, default=2000
        Number of target test samples; ``y_test`` is noise free.
    random_state : int, RandomState instance or None, default=None
        Seed of the random draws; an int makes the output reproducible.

    Returns
    -------
    task : Bunch
        ``X, y`` (target training data), ``X_source, y_source``, ``X_test, y_test``,
        ``teacher_weights`` (m*, d), ``teacher_coef`` (m*,), ``source_mask`` (m*,) bool,
        ``source_weights`` and ``source_coef`` (the source teacher as
        ``(1/k) sum_j a_j relu(v_j^T x)`` over its ``k`` neurons, the convention of
        :meth:`~skpaper.representation.TwoLayerReLURegressor.fit_population`),
        and ``out_of_span``: the fraction of ``E[f_t^2]`` outside the span of the source
        neurons' activations, ``||P_perp f_t||^2 / ||f_t||^2`` (the linear-transfer floor
        of eq. 18 if the pretrained features were exactly the source neurons).

    References
    ----------
    .. [1] J. Tahir, S. Ganguli and G. M. Rotskoff, "Features are fate: a theory of
       transfer learning in high-dimensional regression", ICML 2025.

    Examples
    --------
    >>> from skpaper.datasets import make_relu_teacher_tasks
    >>> task = make_relu_teacher_tasks(d=10, n_teacher=10, ablation=0.0, n=20,
    ...                                n_source=50, n_test=50, random_state=0)
    >>> task.X.shape, round(task.out_of_span, 6)
    ((20, 10), 0.0)
    """
    rng = check_random_state(random_state)
    W = rng.standard_normal((n_teacher, d))
    W /= np.linalg.norm(W, axis=1, keepdims=True)
    c = rng.standard_normal(n_teacher)
    K = relu_teacher_kernel(W, W)
    c *= n_teacher / np.sqrt(c @ K @ c)  # E[f_t^2] = c^T K c / m*^2 = 1
    n_keep = int(round((1.0 - ablation) * n_teacher))
    mask = np.zeros(n_teacher, dtype=bool)
    mask[:n_keep] = True

    def teacher(X, keep):
        return np.maximum(X @ W[keep].T, 0.0) @ c[keep] / n_teacher

    X = rng.standard_normal((n, d))
    X_source = rng.standard_normal((n_source, d))
    X_test = rng.standard_normal((n_test, d))
    y = teacher(X, slice(None)) + sigma * rng.standard_normal(n)
    y_source = teacher(X_source, mask) + sigma * rng.standard_normal(n_source)
    y_test = teacher(X_test, slice(None))

    if n_keep == 0:
        out_of_span = 1.0
    else:
        # ||P f_t||^2 = v^T K_ss^+ v with v_j = <relu(w_j . x), f_t>, j in the source.
        v = K[mask] @ c / n_teacher
        proj = float(v @ np.linalg.lstsq(K[np.ix_(mask, mask)], v, rcond=None)[0])
        out_of_span = float(np.clip(1.0 - proj, 0.0, 1.0))
    return Bunch(X=X, y=y, X_source=X_source, y_source=y_source, X_test=X_test,
                 y_test=y_test, teacher_weights=W, teacher_coef=c, source_mask=mask,
                 source_weights=W[mask], source_coef=c[mask] * n_keep / n_teacher,
                 out_of_span=out_of_span)


@validate_params(
    {
        "n_samples": [Interval(Integral, 1, None, closed="left")],
        "n_features": [Interval(Integral, 1, None, closed="left")],
        "n_atoms": [Interval(Integral, 2, None, closed="left")],
        "n_active": [Interval(Integral, 1, None, closed="left")],
        "concept_rate": [Interval(Real, 0, 1, closed="both")],
        "noise": [Interval(Real, 0, None, closed="left")],
        "magnitude": [tuple],
        "context": [StrOptions({"all", "in", "out"})],
        "atoms": ["array-like", None],
        "random_state": ["random_state"],
    },
    prefer_skip_nested_validation=True,
)
def make_superposition_activations(n_samples=1000, n_features=64, n_atoms=256, n_active=4,
                                   *, concept_rate=0.05, noise=0.05, magnitude=(0.5, 1.5),
                                   context="all", atoms=None, random_state=None):
    """Synthetic "activations": sparse sums of unit atoms in superposition, one a concept.

    A stand-in for the language-model activations probed in [1]_, with known
    ground-truth features: a dictionary of ``n_atoms`` random unit vectors in
    ``n_features`` dimensions (more atoms than dimensions, so they interfere). Each
    sample is ``x = sum_{i in S} c_i a_i + noise * eps`` over a set ``S`` of ``n_active``
    atoms with magnitudes ``c_i ~ U(magnitude)``. Atom 0 is the *concept*: it is in
    ``S`` with probability ``concept_rate`` and the binary label is ``y = 1[0 in S]``.
    The other atoms of ``S`` are the context, drawn uniformly without replacement.

    Parameters
    ----------
    n_samples : int, default=1000
        Number of activation vectors.
    n_features : int, default=64
        Dimension ``d`` of the activations.
    n_atoms : int, default=256
        Number of ground-truth features (atom 0 is the concept).
    n_active : int, default=4
        Active atoms per sample, concept included (``L0`` of the ground truth).
    concept_rate : float, default=0.05
        Probability that the concept is active (``0.5`` gives balanced labels; a small
        value mimics an unlabeled pretraining pool where the concept is rare).
    noise : float, default=0.05
        Standard deviation of isotropic Gaussian noise.
    magnitude : tuple of two floats, default=(0.5, 1.5)
        Range of the uniform atom magnitudes.
    context : {"all", "in", "out"}, default="all"
        Which atoms may appear as context: ``"all"`` (atoms 1 to ``n_atoms - 1``), ``"in"``
        (the first half) or ``"out"`` (the second half). Training on ``"in"`` and testing
        on ``"out"`` is a covariate shift: ``p(x)`` moves, ``p(y | concept)`` does not.
    atoms : array-like of shape (n_atoms, n_features) or None, default=None
        Reuse a dictionary from an earlier call (the same "model"); ``None`` draws one.
    random_state : int, RandomState instance or None, default=None
        Seed of the random draws; an int makes the output reproducible.

    Returns
    -------
    data : Bunch
        ``X`` (n_samples, n_features), ``y`` (n_samples,) int labels, ``codes``
        (n_samples, n_atoms) ground-truth magnitudes, ``atoms`` (n_atoms, n_features)
        and ``concept`` (the index of the concept atom, 0).

    References
    ----------
    .. [1] S. Kantamneni, J. Engels, S. Rajamanoharan, M. Tegmark and N. Nanda, "Are
       Sparse Autoencoders Useful? A Case Study in Sparse Probing", ICML 2025.

    Examples
    --------
    >>> from skpaper.datasets import make_superposition_activations
    >>> pool = make_superposition_activations(n_samples=500, random_state=0)
    >>> task = make_superposition_activations(n_samples=100, concept_rate=0.5,
    ...                                       atoms=pool.atoms, random_state=1)
    >>> task.X.shape, int((task.codes != 0).sum(axis=1).max())
    ((100, 64), 4)
    """
    rng = check_random_state(random_state)
    lo, hi = (float(v) for v in magnitude) if len(magnitude) == 2 else (np.nan, np.nan)
    if not (np.isfinite(lo) and np.isfinite(hi) and 0 <= lo <= hi):
        raise ValueError(
            f"magnitude must be a pair (low, high) with 0 <= low <= high, got {magnitude!r}."
        )
    if atoms is None:
        atoms = rng.standard_normal((n_atoms, n_features))
        atoms /= np.linalg.norm(atoms, axis=1, keepdims=True)
    else:
        atoms = np.asarray(atoms, dtype=np.float64)
        if atoms.ndim != 2 or atoms.shape != (n_atoms, n_features):
            raise ValueError(
                f"atoms must have shape (n_atoms, n_features) = ({n_atoms}, {n_features}), "
                f"got {atoms.shape}."
            )
    half = 1 + (n_atoms - 1) // 2
    pool = {"all": np.arange(1, n_atoms), "in": np.arange(1, half),
            "out": np.arange(half, n_atoms)}[context]
    if n_active > pool.size:
        raise ValueError(
            f"n_active must be at most the {pool.size} context atoms of context={context!r}, "
            f"got n_active={n_active}."
        )
    y = (rng.random_sample(n_samples) < concept_rate).astype(int)
    codes = np.zeros((n_samples, n_atoms))
    mags = rng.uniform(lo, hi, size=(n_samples, n_active))
    for i in range(n_samples):
        n_context = n_active - y[i]
        chosen = rng.choice(pool, size=n_context, replace=False)
        codes[i, chosen] = mags[i, :n_context]
        if y[i]:
            codes[i, 0] = mags[i, -1]
    X = codes @ atoms + noise * rng.standard_normal((n_samples, n_features))
    return Bunch(X=X, y=y, codes=codes, atoms=atoms, concept=0)


# -- synthetic cell-painting plates (Kenyon-Dean et al., ICML 2025) ------------------------

#: Channels of the synthetic cell-painting images, in order.
CELL_PAINTING_CHANNELS = ("DNA", "ER", "RNA", "actin", "mito")
_N_MORPHOLOGY = 8


def _plate_layout(rng, n_perturbations, n_pathways, phenotype_fraction, n_plates, n_replicates,
                  n_controls, dim, effect_size):
    """Perturbation effects in a latent space, and which plate holds which replicate."""
    n_active = int(round(phenotype_fraction * n_perturbations))
    active = np.zeros(n_perturbations, dtype=bool)
    active[rng.permutation(n_perturbations)[:n_active]] = True
    pathway = np.full(n_perturbations, -1)
    pathway[active] = np.arange(n_active) % n_pathways
    directions = rng.standard_normal((n_pathways, dim))
    directions /= np.linalg.norm(directions, axis=1, keepdims=True)
    own = rng.standard_normal((n_perturbations, dim))
    own /= np.linalg.norm(own, axis=1, keepdims=True)
    effects = np.zeros((n_perturbations, dim))
    strength = effect_size * rng.uniform(0.6, 1.4, n_perturbations)
    mixed = directions[np.maximum(pathway, 0)] + 0.6 * own
    mixed /= np.linalg.norm(mixed, axis=1, keepdims=True)
    effects[active] = (strength[:, None] * mixed)[active]
    # each perturbation sits once on n_replicates distinct plates; controls fill every plate
    pert, plate = [], []
    for p in range(n_perturbations):
        for b in rng.choice(n_plates, size=n_replicates, replace=False):
            pert.append(p)
            plate.append(b)
    pert = np.r_[np.array(pert, dtype=int), np.full(n_plates * n_controls, -1)]
    plate = np.r_[np.array(plate, dtype=int), np.repeat(np.arange(n_plates), n_controls)]
    return effects, active, pathway, pert, plate


def _layout_params():
    return {
        "n_perturbations": [Interval(Integral, 1, None, closed="left")],
        "n_pathways": [Interval(Integral, 1, None, closed="left")],
        "phenotype_fraction": [Interval(Real, 0, 1, closed="both")],
        "n_plates": [Interval(Integral, 1, None, closed="left")],
        "n_replicates": [Interval(Integral, 1, None, closed="left")],
        "n_controls": [Interval(Integral, 0, None, closed="left")],
        "effect_size": [Interval(Real, 0, None, closed="left")],
        "batch_effect": [Interval(Real, 0, None, closed="left")],
        "random_state": ["random_state"],
    }


def _check_replicates(n_replicates, n_plates):
    if n_replicates > n_plates:
        raise ValueError(f"n_replicates={n_replicates} must be at most n_plates={n_plates}: "
                         "each replicate of a perturbation sits on a different plate.")


@validate_params(
    {**_layout_params(), "n_features": [Interval(Integral, 2, None, closed="left")],
     "noise": [Interval(Real, 0, None, closed="left")]},
    prefer_skip_nested_validation=True,
)
def make_plate_embeddings(n_perturbations=40, n_features=32, *, n_pathways=5,
                          phenotype_fraction=0.6, n_plates=6, n_replicates=3, n_controls=40,
                          effect_size=3.0, batch_effect=1.0, noise=1.0, random_state=None):
    """Well embeddings of a screen with perturbation effects and plate (batch) effects.

    A feature-level test bed for batch correction: each well is
    ``x = R_b S_b (mu_p + e) + c_b`` where ``mu_p`` is the perturbation's
    effect (zero for controls and for perturbations without a phenotype), ``e``
    is well noise with a few strong shared directions (the typical variation
    that every well shows, controls included) on top of isotropic noise, and
    plate ``b`` applies a per-feature scaling ``S_b``, a small rotation ``R_b``
    and an offset ``c_b``.
    Perturbations with a phenotype belong to ``n_pathways`` pathways whose
    members share an effect direction (so related perturbations are similar).

    Parameters
    ----------
    n_perturbations : int, default=40
        Number of perturbations screened.
    n_features : int, default=32
        Dimension of the well embeddings.
    n_pathways : int, default=5
        Number of pathways; perturbations of one pathway share an effect direction.
    phenotype_fraction : float, default=0.6
        Share of perturbations with a non-zero effect.
    n_plates : int, default=6
        Number of plates (batches).
    n_replicates : int, default=3
        Wells per perturbation, each on a different plate.
    n_controls : int, default=40
        Negative-control wells per plate.
    effect_size : float, default=3.0
        Typical norm of ``mu_p`` in units of the well noise (whose norm is
        about ``sqrt(n_features)`` units plus the shared directions).
    batch_effect : float, default=1.0
        Scale of the plate offsets, log-scales and rotation angles.
    noise : float, default=1.0
        Standard deviation of the well-level noise.
    random_state : int, RandomState instance or None, default=None
        Seed of the random draws; an int makes the output reproducible.

    Returns
    -------
    data : Bunch
        ``X`` (n_wells, n_features); ``perturbation`` (n_wells,) int, -1 for
        controls; ``plate`` (n_wells,); ``is_control`` (n_wells,) bool;
        ``pathway`` (n_perturbations,) pathway of each perturbation, -1
        without phenotype; ``has_phenotype`` (n_perturbations,) bool;
        ``effects`` (n_perturbations, n_features).

    References
    ----------
    .. [1] K. Kenyon-Dean et al. "ViTally Consistent: Scaling Biological
       Representation Learning for Cell Microscopy". ICML 2025.

    Examples
    --------
    >>> from skpaper.datasets import make_plate_embeddings
    >>> data = make_plate_embeddings(random_state=0)
    >>> data.X.shape, int(data.is_control.sum())
    ((360, 32), 240)
    """
    _check_replicates(n_replicates, n_plates)
    rng = check_random_state(random_state)
    effects, active, pathway, pert, plate = _plate_layout(
        rng, n_perturbations, n_pathways, phenotype_fraction, n_plates, n_replicates,
        n_controls, n_features, effect_size * noise)
    mu = np.where((pert >= 0)[:, None], effects[np.maximum(pert, 0)], 0.0)
    # typical variation: a few strong nuisance directions (cell cycle, density...) that
    # every well shares, on top of isotropic noise
    n_nuisance = max(n_features // 8, 1)
    nuisance = np.linalg.qr(rng.standard_normal((n_features, n_nuisance)))[0]
    latent = (mu + noise * rng.standard_normal(mu.shape)
              + 3.0 * noise * rng.standard_normal((mu.shape[0], n_nuisance)) @ nuisance.T)
    X = np.empty_like(latent)
    for b in range(n_plates):
        q, _ = np.linalg.qr(np.eye(n_features) + 0.1 * batch_effect
                            * rng.standard_normal((n_features, n_features)))
        q *= np.sign(np.diag(q))
        scale = np.exp(0.3 * batch_effect * rng.standard_normal(n_features))
        offset = 2.0 * batch_effect * noise * rng.standard_normal(n_features)
        rows = plate == b
        X[rows] = (latent[rows] * scale) @ q.T + offset
    return Bunch(X=X, perturbation=pert, plate=plate, is_control=pert < 0, pathway=pathway,
                 has_phenotype=active, effects=effects)


def _smooth_disc(q, sharpness):
    # soft indicator of q < 1 (q: squared normalised ellipse radius)
    return 1.0 / (1.0 + np.exp(np.clip((q - 1.0) * sharpness, -30.0, 30.0)))


def _render_cells(rng, z, size, n_cells):
    """Draw ``n_cells`` cells per image from morphology codes ``z`` of shape (n, 8).

    The phenotype lies partly in channel intensities (``z[:, 3:8]`` are channel gains),
    which per-image channel standardisation erases.
    """
    n = z.shape[0]
    grid = (np.arange(size) + 0.5) / size
    yy, xx = np.meshgrid(grid, grid, indexing="ij")
    images = np.zeros((n, len(CELL_PAINTING_CHANNELS), size, size))
    for _ in range(n_cells):
        # cell-to-cell variability on top of the well's morphology code
        zc = z + 0.25 * rng.standard_normal(z.shape)
        cy, cx = rng.uniform(0.2, 0.8, (2, n, 1, 1))
        angle = rng.uniform(0, np.pi, (n, 1, 1))
        phase = rng.uniform(0, 2 * np.pi, (2, n, 1, 1))
        r_nuc = 0.11 * np.exp(0.18 * zc[:, 0])[:, None, None]
        r_cell = 0.23 * np.exp(0.15 * zc[:, 1])[:, None, None]
        elong = np.exp(0.25 * zc[:, 2])[:, None, None]
        dy, dx = yy - cy, xx - cx
        u = dx * np.cos(angle) + dy * np.sin(angle)
        v = -dx * np.sin(angle) + dy * np.cos(angle)
        q_nuc = ((u * np.sqrt(elong)) ** 2 + (v / np.sqrt(elong)) ** 2) / r_nuc**2
        q_cell = ((u / elong) ** 2 + (v * elong) ** 2) / r_cell**2
        nucleus = _smooth_disc(q_nuc, 6.0)
        cell = _smooth_disc(q_cell, 5.0)
        cyto = cell * (1.0 - nucleus)
        gain = np.exp(0.25 * zc[:, 3:8])[:, :, None, None]
        freq = 2 * np.pi * (6.0 + 2.0 * np.tanh(zc[:, 4]))[:, None, None] / 1.0
        nucleoli = 0.5 + 0.5 * np.cos(freq * 1.3 * u + phase[0]) * np.cos(freq * 1.3 * v)
        mito = 0.5 + 0.5 * np.sin(freq * u + phase[0]) * np.sin(freq * v + phase[1])
        ring = 4.0 * cell * (1.0 - cell)
        images[:, 0] += gain[:, 4] * nucleus
        images[:, 1] += gain[:, 0] * cyto * np.exp(-0.5 * q_cell)
        images[:, 2] += gain[:, 3] * (0.4 * cyto + nucleus * nucleoli)
        images[:, 3] += gain[:, 2] * (0.3 * cell + ring)
        images[:, 4] += gain[:, 1] * cyto * mito
    return images


def _render_morphology(rng, z, size, n_cells):
    """Draw ``n_cells`` cells per image whose phenotype is shape, texture and arrangement.

    The eight coordinates of ``z``: nucleus size, cell size, elongation, offset of the
    nucleus from the cell's centre, mitochondrial texture frequency, radial placement of
    the mitochondria (around the nucleus or at the periphery), actin ring width and ER
    texture orientation relative to the cell's axis. Channel intensities are per-cell
    nuisance drawn independently of ``z``, so per-image channel standardisation keeps
    the whole phenotype.
    """
    n = z.shape[0]
    grid = (np.arange(size) + 0.5) / size
    yy, xx = np.meshgrid(grid, grid, indexing="ij")
    images = np.zeros((n, len(CELL_PAINTING_CHANNELS), size, size))
    for _ in range(n_cells):
        zc = z + 0.25 * rng.standard_normal(z.shape)
        cy, cx = rng.uniform(0.25, 0.75, (2, n, 1, 1))
        angle = rng.uniform(0, np.pi, (n, 1, 1))
        phase = rng.uniform(0, 2 * np.pi, (3, n, 1, 1))
        r_nuc = 0.10 * np.exp(0.30 * np.tanh(zc[:, 0] / 2))[:, None, None]
        r_cell = 0.24 * np.exp(0.25 * np.tanh(zc[:, 1] / 2))[:, None, None]
        elong = np.exp(0.45 * np.tanh(zc[:, 2] / 2))[:, None, None]
        shift = 0.5 * r_cell * np.tanh(zc[:, 3] / 2)[:, None, None]
        dy, dx = yy - cy, xx - cx
        u = dx * np.cos(angle) + dy * np.sin(angle)
        v = -dx * np.sin(angle) + dy * np.cos(angle)
        un = u - shift  # the nucleus sits off centre along the cell's long axis
        q_nuc = (un**2 + v**2) / r_nuc**2
        q_cell = ((u / elong) ** 2 + (v * elong) ** 2) / r_cell**2
        nucleus = _smooth_disc(q_nuc, 6.0)
        cell = _smooth_disc(q_cell, 5.0)
        cyto = cell * (1.0 - nucleus)
        gain = np.exp(0.25 * rng.standard_normal((n, 5)))[:, :, None, None]
        freq = 2 * np.pi * (5.0 + 3.0 * np.tanh(zc[:, 4] / 2))[:, None, None]
        mito_tex = 0.5 + 0.5 * np.sin(freq * u + phase[0]) * np.sin(freq * v + phase[1])
        # radial placement: weight towards the nucleus (z5 > 0) or the membrane (z5 < 0)
        radial = np.sqrt(np.clip(q_cell, 0.0, None))
        place = np.tanh(zc[:, 5] / 2)[:, None, None]
        mito_w = np.clip(1.0 + 1.5 * place * (0.6 - radial), 0.0, None)
        width = 0.12 * np.exp(0.5 * np.tanh(zc[:, 6] / 2))[:, None, None]
        ring = np.exp(-0.5 * ((radial - 0.9) / width) ** 2) * cell
        tilt = np.pi / 4 * np.tanh(zc[:, 7] / 2)[:, None, None]
        er_freq = 2 * np.pi * 4.0
        er = 0.5 + 0.5 * np.cos(er_freq * (u * np.cos(tilt) + v * np.sin(tilt)) + phase[2])
        images[:, 0] += gain[:, 0] * nucleus
        images[:, 1] += gain[:, 1] * cyto * er
        images[:, 2] += gain[:, 2] * (0.4 * cyto + 0.8 * nucleus)
        images[:, 3] += gain[:, 3] * (0.2 * cell + ring)
        images[:, 4] += gain[:, 4] * cyto * mito_tex * mito_w
    return images


@validate_params(
    {**_layout_params(), "image_size": [Interval(Integral, 8, None, closed="left")],
     "n_cells": [Interval(Integral, 1, None, closed="left")],
     "n_sites": [Interval(Integral, 1, None, closed="left")],
     "noise": [Interval(Real, 0, None, closed="left")],
     "phenotype": [StrOptions({"intensity", "morphology"})]},
    prefer_skip_nested_validation=True,
)
def make_synthetic_cell_plates(n_perturbations=40, *, n_pathways=5, phenotype_fraction=0.6,
                               n_plates=4, n_replicates=4, n_controls=16, n_sites=2,
                               image_size=24, n_cells=3, effect_size=2.0, batch_effect=1.0,
                               noise=0.05, phenotype="intensity", random_state=None):
    """Five-channel synthetic "cell painting" images of a screen with plate effects.

    Every image (a site of a well) shows ``n_cells`` cells drawn from the
    well's 8-dimensional morphology code ``z``: nucleus size, cell size,
    elongation and five channel-specific intensities and textures (DNA
    stain, ER, RNA with nucleoli, actin ring, mitochondrial texture whose
    frequency moves with ``z``). A perturbation shifts ``z`` by its effect
    (zero for controls and for the ``1 - phenotype_fraction`` perturbations
    without phenotype); members of one pathway shift it in similar
    directions. Each cell adds its own variability. Each plate then applies
    what a real plate does: a shift of the morphology of every well (growth
    conditions), channel gains and offsets, cross-talk between channels, an
    illumination gradient, a blur of its own, and pixel noise.

    Parameters
    ----------
    n_perturbations : int, default=40
        Number of perturbations screened.
    n_pathways : int, default=5
        Number of pathways; perturbations of one pathway share an effect direction.
    phenotype_fraction : float, default=0.6
        Share of perturbations with a non-zero effect.
    n_plates : int, default=4
        Number of plates (batches).
    n_replicates : int, default=4
        Wells per perturbation, on distinct plates.
    n_controls : int, default=16
        Negative-control wells per plate.
    n_sites : int, default=2
        Images per well.
    image_size : int, default=24
        Height and width in pixels.
    n_cells : int, default=3
        Cells per image.
    effect_size : float, default=2.0
        Typical norm of a perturbation's shift of ``z`` (cells vary with
        standard deviation 0.25 per coordinate).
    batch_effect : float, default=1.0
        Scale of every plate effect (0 removes them).
    noise : float, default=0.05
        Pixel noise relative to the typical intensity.
    phenotype : {"intensity", "morphology"}, default="intensity"
        What the morphology code ``z`` draws. ``"intensity"``: nucleus size,
        cell size, elongation and five channel gains and textures, so that
        most of a phenotype is in per-image channel intensities, which
        per-image channel standardisation erases. ``"morphology"``: nucleus
        size, cell size, elongation, nucleus offset from the cell's centre,
        mitochondrial texture frequency, radial placement of the
        mitochondria, actin ring width and ER texture orientation; channel
        intensities vary from cell to cell independently of ``z``, so the
        phenotype survives standardisation.
    random_state : int, RandomState instance or None, default=None
        Seed of the random draws; an int makes the output reproducible.

    Returns
    -------
    data : Bunch
        ``images`` (n_images, 5, image_size, image_size) float32; ``X`` the
        same flattened to (n_images, 5 * image_size**2); ``image_shape``;
        ``perturbation`` (n_images,) int, -1 for controls; ``well``
        (n_images,); ``plate`` (n_images,); ``is_control`` (n_images,) bool;
        ``pathway`` and ``has_phenotype`` (n_perturbations,); ``morphology``
        (n_images, 8) the well codes before plate effects; ``channels``.

    Notes
    -----
    No real microscopy ships with any installable package, so the claims of
    Kenyon-Dean et al. [1]_ are checked on these plates, whose ground truth
    (which perturbations have a phenotype, which are related, what is a plate
    effect) is known. Per-image channel standardisation, as done before the
    MAE, removes the gains and offsets but not the morphology shift, the blur
    or the illumination gradient.

    References
    ----------
    .. [1] K. Kenyon-Dean et al. "ViTally Consistent: Scaling Biological
       Representation Learning for Cell Microscopy". ICML 2025.

    Examples
    --------
    >>> from skpaper.datasets import make_synthetic_cell_plates
    >>> plates = make_synthetic_cell_plates(n_perturbations=10, random_state=0)
    >>> plates.images.shape, plates.X.shape[1] == 5 * 24 * 24
    ((208, 5, 24, 24), True)
    """
    _check_replicates(n_replicates, n_plates)
    rng = check_random_state(random_state)
    effects, active, pathway, pert, plate = _plate_layout(
        rng, n_perturbations, n_pathways, phenotype_fraction, n_plates, n_replicates,
        n_controls, _N_MORPHOLOGY, effect_size)
    n_wells = pert.size
    n_channels = len(CELL_PAINTING_CHANNELS)
    well = np.repeat(np.arange(n_wells), n_sites)
    pert_img, plate_img = pert[well], plate[well]
    plate_shift = 0.5 * batch_effect * rng.standard_normal((n_plates, _N_MORPHOLOGY))
    z = np.where((pert_img >= 0)[:, None], effects[np.maximum(pert_img, 0)], 0.0)
    z = z + plate_shift[plate_img]
    render = _render_morphology if phenotype == "morphology" else _render_cells
    images = render(rng, z, image_size, n_cells)

    grid = (np.arange(image_size) + 0.5) / image_size - 0.5
    yy, xx = np.meshgrid(grid, grid, indexing="ij")
    freq = np.fft.fftfreq(image_size)
    f2 = freq[:, None] ** 2 + freq[None, :] ** 2
    for b in range(n_plates):
        rows = plate_img == b
        mix = np.eye(n_channels) + 0.15 * batch_effect * np.abs(
            rng.standard_normal((n_channels, n_channels)))
        np.fill_diagonal(mix, 1.0)
        gain = np.exp(0.3 * batch_effect * rng.standard_normal(n_channels))
        offset = 0.1 * batch_effect * rng.uniform(0, 1, n_channels)
        tilt = 0.6 * batch_effect * rng.uniform(-1, 1, (n_channels, 2))
        field = 1.0 + tilt[:, :1, None] * yy + tilt[:, 1:, None] * xx
        sigma = 0.4 + 0.5 * batch_effect * rng.uniform(0, 1)
        blur = np.exp(-2.0 * np.pi**2 * sigma**2 * f2)
        block = np.einsum("dc,nchw->ndhw", mix, images[rows])
        block = np.fft.ifft2(np.fft.fft2(block) * blur).real
        images[rows] = (gain[:, None, None] * field * block + offset[:, None, None])
    images += noise * rng.standard_normal(images.shape)
    images = images.astype(np.float32)
    return Bunch(images=images, X=images.reshape(len(images), -1),
                 image_shape=(n_channels, image_size, image_size), perturbation=pert_img,
                 well=well, plate=plate_img, is_control=pert_img < 0, pathway=pathway,
                 has_phenotype=active, morphology=z - plate_shift[plate_img],
                 channels=CELL_PAINTING_CHANNELS)
