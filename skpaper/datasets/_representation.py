"""Data generators for `skpaper.representation` (numpy only; no torch import)."""

from numbers import Integral, Real

import numpy as np
from sklearn.utils import Bunch, check_random_state

from ..utils._sklearn import Interval, StrOptions, validate_params

__all__ = [
    "make_relu_teacher_tasks",
    "make_superposition_activations",
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
    B : array-like of shape (n_b, d)

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
