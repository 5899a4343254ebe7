"""Linearly constrained quadratic programs: instance formats, validation and solving.

Two instance formats are accepted, both as dicts.

*Standard form* (the QP-GNN paper's)::

    min_x  1/2 x^T Q x + c^T x + r   s.t.  A x (sense) b,   lb <= x <= ub,   x_j in Z for j in I

with keys ``Q`` (n, n), ``c`` (n,), ``A`` (m, n), ``b`` (m,), ``sense`` (m,; ``"<="``,
``"="``, ``">="`` or the codes -1, 0, 1), ``lb``, ``ub`` (n,) and the optional ``r``
(constant term) and ``integer`` (bool mask, n).

*OSQP form*::

    min_x  1/2 x^T P x + q^T x + r   s.t.  l <= A x <= u,   lb <= x <= ub

with keys ``P``, ``q``, ``A``, ``l``, ``u`` and the optional ``r``, ``lb``, ``ub``,
``integer``. Rows are ranged (``l_i = u_i`` is an equality). ``P`` may be given whole or,
as OSQP stores it, as its upper triangle.

In both, ``+-inf`` and any bound of magnitude at least 1e19 mean "no bound" (public QP
collections store missing bounds as values such as ``-9.999999999999998e19``), ``Q``/``P``
and ``A`` may be dense arrays or scipy sparse matrices (sparse ones stay sparse).
"""

import functools
import itertools
import time
import warnings

import numpy as np
import scipy.sparse as sp

from ..utils._docstring import Substitution

__all__ = ["check_qp", "qp_objective", "qp_violation", "solve_qps"]

_SENSE_CODES = {"<=": -1, "=": 0, "==": 0, ">=": 1, -1: -1, 0: 0, 1: 1}
_STANDARD_KEYS = ("Q", "c", "A", "b", "sense", "lb", "ub")
_OSQP_KEYS = ("P", "q", "A", "l", "u")
_MAX_ENUMERATION = 4096
#: Bounds at least this large in magnitude are infinite. Files in the OSQP and CUTEst
#: conventions write missing bounds as 1e20 or as the float just below (9.999999999999998e19),
#: so the threshold sits a decade lower.
INFINITY = 1e19
#: Solver outcomes reported by :func:`solve_qps` with ``return_status=True``.
STATUSES = ("optimal", "infeasible", "unbounded", "uncertain", "max_iter", "error")
#: Relative tolerance of the infeasibility and unboundedness certificate checks.
_CERT_TOL = 1e-4
_OSQP_DEFAULT_MAX_ITER = 200_000
#: Dense eigen-decompositions are used for the positive-definiteness test up to this size.
_DENSE_EIG_LIMIT = 3000


def _matrix(value, name, key):
    """Float64 dense array or CSC sparse matrix (sparse input stays sparse)."""
    if sp.issparse(value):
        out = sp.csc_matrix(value, dtype=np.float64)
        out.sum_duplicates()
        return out
    try:
        return np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"{name}: {key} must be a numeric matrix, got "
                         f"{type(value).__name__}.") from None


def _vector(value, name, key):
    try:
        return np.asarray(value, dtype=np.float64).reshape(-1)
    except (TypeError, ValueError):
        raise ValueError(f"{name}: {key} must be a numeric vector.") from None


def _values(matrix):
    return matrix.data if sp.issparse(matrix) else matrix


def _abs_max(matrix):
    vals = _values(matrix)
    return float(np.abs(vals).max()) if vals.size else 0.0


def _infinite_bounds(v):
    """Map NaN-free bounds with |v| >= INFINITY (1e19) to +-inf."""
    v = v.copy()
    v[v >= INFINITY] = np.inf
    v[v <= -INFINITY] = -np.inf
    return v


def _symmetric(Q, name, key, allow_upper):
    diff = abs(Q - Q.T) if sp.issparse(Q) else np.abs(Q - Q.T)
    scale = max(1.0, _abs_max(Q))
    if _abs_max(diff) <= 1e-10 * scale:
        return Q
    lower = sp.tril(Q, -1) if sp.issparse(Q) else np.tril(Q, -1)
    if allow_upper and _abs_max(lower) == 0.0:
        # OSQP stores P by its upper triangle: mirror it.
        upper = sp.triu(Q, 1) if sp.issparse(Q) else np.triu(Q, 1)
        Q = Q + upper.T
        return sp.csc_matrix(Q) if sp.issparse(Q) else Q
    raise ValueError(f"{name}: {key} must be symmetric" +
                     (" or upper triangular (OSQP's storage)." if allow_upper else "."))


def _sense_codes(raw_sense, m, name):
    """The row senses as int8 codes -1 (<=), 0 (=), 1 (>=)."""
    raw = np.asarray(raw_sense)
    if raw.ndim > 1:
        raw = raw.reshape(-1)
    if raw.shape != (m,):
        raise ValueError(f"{name}: sense must have one entry per row of A ({m}), got "
                         f"{raw.reshape(-1).shape[0]}.")
    if raw.dtype.kind in "iu" and np.all((raw >= -1) & (raw <= 1)):
        return raw.astype(np.int8)  # the common case, without a Python loop
    raw = raw.astype(object)
    try:
        return np.array([_SENSE_CODES[s if isinstance(s, str) else int(s)] for s in raw],
                        dtype=np.int8)
    except (KeyError, ValueError, TypeError):
        bad = [s for s in raw if s not in _SENSE_CODES]
        raise ValueError(f"{name}: sense entries must be '<=', '=', '>=' or -1, 0, 1; got "
                         f"{bad[:3]}.") from None


def _row_bounds_from_sense(b, raw_sense, m, name):
    sense = _sense_codes(raw_sense, m, name)
    if np.isnan(b).any():
        raise ValueError(f"{name}: b must not contain NaN.")
    b = _infinite_bounds(b)
    impossible = np.flatnonzero(((sense <= 0) & (b == -np.inf)) | ((sense >= 0) & (b == np.inf)))
    if impossible.size:
        i = int(impossible[0])
        raise ValueError(f"{name}: row {i} ('{['<=', '=', '>='][sense[i] + 1]}' with b={b[i]}) "
                         "can never hold; an infinite b only makes sense as a missing bound "
                         "('<=' with +inf, '>=' with -inf).")
    lower = np.where(sense < 0, -np.inf, b)
    upper = np.where(sense > 0, np.inf, b)
    return lower, upper


def _bound_pair(lower, upper, size, name, lo_key, hi_key, context):
    """Validated lower/upper vectors (|v| >= 1e19 as infinite) that can hold."""
    lower, upper = _vector(lower, name, lo_key), _vector(upper, name, hi_key)
    if lower.shape != (size,) or upper.shape != (size,):
        raise ValueError(f"{name}: {lo_key} and {hi_key} must have shape ({size},) {context}, "
                         f"got {lower.shape} and {upper.shape}.")
    if np.isnan(lower).any() or np.isnan(upper).any():
        raise ValueError(f"{name}: {lo_key} and {hi_key} must not contain NaN (use -inf/inf).")
    lower, upper = _infinite_bounds(lower), _infinite_bounds(upper)
    if np.any(lower > upper):
        i = int(np.flatnonzero(lower > upper)[0])
        raise ValueError(f"{name}: {lo_key} must be <= {hi_key} elementwise (entry {i}: "
                         f"{lo_key}={lower[i]}, {hi_key}={upper[i]}).")
    bad = np.flatnonzero((lower == np.inf) | (upper == -np.inf))
    if bad.size:
        raise ValueError(f"{name}: entry {int(bad[0])} has {lo_key} = +inf or {hi_key} = -inf "
                         "and can never hold.")
    return lower, upper


def check_qp(instance, *, name="X"):
    """Validate one QP instance (either format) and return it in canonical form.

    Parameters
    ----------
    instance : dict
        Standard form (``Q, c, A, b, sense, lb, ub``; optional ``r``, ``integer``) or
        OSQP form (``P, q, A, l, u``; optional ``r``, ``lb``, ``ub``, ``integer``).
    name : str, default="X"
        How the instance is named in error messages.

    Returns
    -------
    qp : dict
        ``Q`` (symmetric, dense float64 array or CSC matrix, as given), ``c``, ``r``
        (float), ``A`` (dense or CSC), ``row_lower``, ``row_upper`` (``l <= A x <= u``,
        infinite where a side is absent), ``lb``, ``ub`` (bounds of magnitude >= 1e19
        mapped to +-inf, as in the OSQP convention; 9.999999999999998e19, which some public
        QP collections write for a missing bound, is infinite) and ``integer`` (bool mask).

    Raises
    ------
    TypeError
        If ``instance`` is not a dict.
    ValueError
        On a missing key, a shape mismatch, a non-symmetric or non-finite matrix, an
        unknown sense, a row or bound that can never hold, lower above upper, or NaN.

    Examples
    --------
    >>> import numpy as np
    >>> from skpaper.graph import check_qp
    >>> qp = check_qp({"Q": np.eye(2), "c": [1.0, -1.0], "A": [[1.0, 1.0]], "b": [1.0],
    ...                "sense": ["<="], "lb": [0.0, 0.0], "ub": [np.inf, np.inf]})
    >>> qp["row_lower"], qp["row_upper"]
    (array([-inf]), array([1.]))
    """
    if not isinstance(instance, dict):
        raise TypeError(f"{name} must be a dict describing a QP, got {type(instance).__name__}.")
    osqp_form = "P" in instance
    if osqp_form and "Q" in instance:
        raise ValueError(f"{name} has both 'Q' (standard form) and 'P' (OSQP form); give one.")
    required = _OSQP_KEYS if osqp_form else _STANDARD_KEYS
    missing = [k for k in required if k not in instance]
    if missing:
        raise ValueError(f"{name} is missing the QP keys {missing}; expected {list(required)} "
                         f"(standard form {list(_STANDARD_KEYS)} or OSQP form "
                         f"{list(_OSQP_KEYS)}).")
    q_key, c_key = ("P", "q") if osqp_form else ("Q", "c")
    c = _vector(instance[c_key], name, c_key)
    n = c.shape[0]
    if n == 0:
        raise ValueError(f"{name}: a QP needs at least one variable, got {c_key} of length 0.")
    Q = _matrix(instance[q_key], name, q_key)
    A = _matrix(instance["A"], name, "A")
    if A.size == 0 and not sp.issparse(A):
        A = A.reshape(0, n)
    if Q.shape != (n, n):
        raise ValueError(f"{name}: {q_key} must have shape ({n}, {n}) to match {c_key}, got "
                         f"{Q.shape}.")
    if A.ndim != 2 or A.shape[1] != n:
        raise ValueError(f"{name}: A must have shape (m, {n}), got {A.shape}.")
    m = A.shape[0]
    for key, arr in ((q_key, _values(Q)), (c_key, c), ("A", _values(A))):
        if not np.all(np.isfinite(arr)):
            raise ValueError(f"{name}: {key} must be finite.")
    Q = _symmetric(Q, name, q_key, allow_upper=osqp_form)
    if osqp_form:
        row_lower, row_upper = _bound_pair(instance["l"], instance["u"], m, name, "l", "u",
                                           "to match A")
    else:
        b = _vector(instance["b"], name, "b")
        if b.shape != (m,):
            raise ValueError(f"{name}: b must have shape ({m},) to match A, got {b.shape}.")
        row_lower, row_upper = _row_bounds_from_sense(b, instance["sense"], m, name)
    lb, ub = _bound_pair(instance.get("lb", np.full(n, -np.inf)),
                         instance.get("ub", np.full(n, np.inf)), n, name, "lb", "ub",
                         "to match c" if not osqp_form else "to match q")
    r = instance.get("r", 0.0)
    try:
        r = float(np.asarray(r, dtype=np.float64).reshape(()))
    except (TypeError, ValueError):
        raise ValueError(f"{name}: r must be a finite scalar, got {r!r}.") from None
    if not np.isfinite(r):
        raise ValueError(f"{name}: r must be a finite scalar, got {r!r}.")
    integer = instance.get("integer")
    integer = np.zeros(n, dtype=bool) if integer is None else np.asarray(integer, dtype=bool)
    if integer.shape != (n,):
        raise ValueError(f"{name}: integer must be a boolean mask of shape ({n},), got "
                         f"{integer.shape}.")
    return {"Q": Q, "c": c, "r": r, "A": A, "row_lower": row_lower, "row_upper": row_upper,
            "lb": lb, "ub": ub, "integer": integer}


#: Docstring pieces of the functions evaluating a point of a canonical instance.
_POINT_DOCS = {
    "qp_point": """
        qp : dict
            A canonical instance (from :func:`check_qp`).
        x : array-like of shape (n_variables,)
            The point.""",
    "qp_example": """
        >>> import numpy as np
        >>> qp = check_qp({"Q": np.eye(2), "c": [1.0, -1.0], "A": [[1.0, 1.0]], "b": [1.0],
        ...                "sense": ["<="], "lb": [0.0, 0.0], "ub": [np.inf, np.inf]})""",
}


@Substitution(**_POINT_DOCS)
def qp_objective(qp, x):
    """Return the objective value 1/2 x^T Q x + c^T x + r of ``x``.

    Parameters
    ----------
    {qp_point}

    Returns
    -------
    value : float
        The objective at ``x``.

    Examples
    --------
    >>> from skpaper.graph import check_qp, qp_objective
    {qp_example}
    >>> qp_objective(qp, [0.0, 1.0])
    -0.5
    """
    x = np.asarray(x, dtype=np.float64)
    return float(0.5 * x @ (qp["Q"] @ x) + qp["c"] @ x + qp.get("r", 0.0))


@Substitution(**_POINT_DOCS)
def qp_violation(qp, x):
    """Return the largest violation of the linear constraints and bounds at ``x``.

    Parameters
    ----------
    {qp_point}

    Returns
    -------
    violation : float
        The largest amount by which a row or a bound is broken; 0 when ``x`` is
        feasible.

    Examples
    --------
    >>> from skpaper.graph import check_qp, qp_violation
    {qp_example}
    >>> qp_violation(qp, [1.0, 1.5])
    1.5
    """
    x = np.asarray(x, dtype=np.float64)
    ax = qp["A"] @ x
    row = np.maximum(np.maximum(qp["row_lower"] - ax, ax - qp["row_upper"]), 0.0)
    box = np.maximum(np.maximum(qp["lb"] - x, x - qp["ub"]), 0.0)
    return float(max(row.max(initial=0.0), box.max(initial=0.0)))


def _csc_parts(M):
    """``(data, indices, indptr)`` of ``M`` in CSC order (dense or CSC input, no copy if CSC)."""
    if sp.issparse(M):
        return M.data, M.indices, M.indptr
    cols, rows = np.nonzero(M.T)  # column-major order, rows sorted within a column
    indptr = np.zeros(M.shape[1] + 1, dtype=np.int64)
    np.cumsum(np.bincount(cols, minlength=M.shape[1]), out=indptr[1:])
    return M[rows, cols], rows, indptr


def _upper_csc(Q):
    """Upper triangle of ``Q`` as a CSC matrix (OSQP's and Clarabel's storage of P)."""
    if not sp.issparse(Q):
        data, indices, indptr = _csc_parts(np.triu(Q))
        return sp.csc_matrix((data, indices, indptr), shape=Q.shape)
    return sp.triu(Q, format="csc")


def _stacked_rows(qp):
    """``[A; I]`` as a CSC matrix, the rows of the constraints and then of the bounds.

    Built from the CSC arrays directly (one identity entry appended to each column):
    scipy's ``vstack`` costs more than a small OSQP solve.
    """
    cached = qp.get("_stacked")
    if cached is not None:
        return cached
    A = qp["A"]
    m, n = A.shape
    data, indices, indptr = _csc_parts(A)
    new_ptr = np.asarray(indptr, dtype=np.int64) + np.arange(n + 1)
    pos = new_ptr[1:] - 1
    keep = np.ones(len(data) + n, dtype=bool)
    keep[pos] = False
    out_data = np.empty(len(data) + n)
    out_idx = np.empty(len(data) + n, dtype=np.int32)
    out_data[keep], out_idx[keep] = data, indices
    out_data[pos], out_idx[pos] = 1.0, m + np.arange(n)
    return sp.csc_matrix((out_data, out_idx, new_ptr.astype(np.int32)), shape=(m + n, n))


def _osqp_data(qp):
    """OSQP form l <= [A; I] x <= u of a canonical instance (sparse throughout)."""
    return (_upper_csc(qp["Q"]), qp["c"], _stacked_rows(qp),
            np.concatenate([qp["row_lower"], qp["lb"]]),
            np.concatenate([qp["row_upper"], qp["ub"]]))


def _map_status(value, solved, infeasible, unbounded, stopped):
    """One of STATUSES from a solver's own status value."""
    for name, values in (("optimal", solved), ("infeasible", infeasible),
                         ("unbounded", unbounded), ("max_iter", stopped)):
        if value in values:
            return name
    return "error"


def _osqp_status(status_val):
    import osqp

    s = osqp.SolverStatus
    # Inaccurate answers come only from the iteration (or time) limit: no certificate at
    # the requested tolerance, so they count as "max_iter".
    return _map_status(status_val, (s.OSQP_SOLVED,), (s.OSQP_PRIMAL_INFEASIBLE,),
                       (s.OSQP_DUAL_INFEASIBLE,),
                       (s.OSQP_MAX_ITER_REACHED, s.OSQP_TIME_LIMIT_REACHED,
                        s.OSQP_SOLVED_INACCURATE, s.OSQP_PRIMAL_INFEASIBLE_INACCURATE,
                        s.OSQP_DUAL_INFEASIBLE_INACCURATE))


@functools.cache
def _osqp_algebra():
    """OSQP's default linear-algebra backend, looked up once.

    ``osqp.OSQP()`` without it probes the optional backends by failed imports on every
    construction, which costs as much as a small solve.
    """
    from osqp.interface import default_algebra

    return default_algebra()


def _failure(start, exc):
    return {"status": "error", "x": None, "y": None, "iterations": -1,
            "time_s": time.perf_counter() - start, "message": f"{type(exc).__name__}: {exc}"}


def _solve_osqp(qp, tol, initvals=None, max_iter=None, dual_initvals=None,
                check_termination=None, polishing=True):
    """One OSQP solve; returns a dict with ``status``, ``x``, ``y``, iteration count, the
    solver's message and, for an infeasibility or unboundedness claim, its certificate."""
    import osqp

    P, q, A, lower, upper = _osqp_data(qp)
    settings = dict(eps_abs=tol, eps_rel=tol, polishing=polishing, verbose=False,
                    max_iter=_OSQP_DEFAULT_MAX_ITER if max_iter is None else int(max_iter))
    if check_termination is not None:
        settings["check_termination"] = int(check_termination)
    start = time.perf_counter()
    try:
        solver = osqp.OSQP(algebra=_osqp_algebra())
        solver.setup(P, q, A, lower, upper, **settings)
        if initvals is not None or dual_initvals is not None:
            solver.warm_start(x=None if initvals is None else np.asarray(initvals, np.float64),
                              y=None if dual_initvals is None
                              else np.asarray(dual_initvals, np.float64))
        res = solver.solve(raise_error=False)
    except Exception as exc:  # noqa: BLE001 - any backend failure is reported as "error"
        out = _failure(start, exc)
        code = exc.args[0] if isinstance(exc, osqp.OSQPException) and exc.args else None
        if isinstance(code, int) and code in {e.value for e in osqp.SolverError}:
            # OSQP raises its error code alone (4: "the problem is non-convex").
            out["message"] = f"OSQP setup failed: {osqp.SolverError(code).name}"
        return out
    elapsed = time.perf_counter() - start
    status = _osqp_status(res.info.status_val)
    out = {"status": status, "x": None, "y": None, "iterations": int(res.info.iter),
           "time_s": elapsed, "message": str(res.info.status)}
    if status == "optimal":
        out["x"] = np.array(res.x, dtype=np.float64)
        out["y"] = np.array(res.y, dtype=np.float64)
    elif status == "infeasible":
        out["certificate"] = np.array(res.prim_inf_cert, dtype=np.float64)
    elif status == "unbounded":
        out["certificate"] = np.array(res.dual_inf_cert, dtype=np.float64)
    return out


def _row_sides(lower, upper):
    """Masks of the equality rows and of the rows with a finite upper / lower side."""
    eq = lower == upper
    return eq, ~eq & np.isfinite(upper), ~eq & np.isfinite(lower)


def _rows_from_cones(z, eq, up, lo):
    """Multipliers of the rows ``[A; I]`` (OSQP's signs: > 0 at an upper side, < 0 at a
    lower one) from Clarabel's, stacked as ``[eq, up, -lo]``."""
    y = np.zeros(eq.shape[0])
    n_eq, n_up = int(eq.sum()), int(up.sum())
    y[eq] += z[:n_eq]
    y[up] += z[n_eq:n_eq + n_up]
    y[lo] -= z[n_eq + n_up:]
    return y


def _clarabel_status(status):
    import clarabel

    s = clarabel.SolverStatus
    return _map_status(status, (s.Solved,), (s.PrimalInfeasible,), (s.DualInfeasible,),
                       (s.MaxIterations, s.MaxTime, s.AlmostSolved, s.AlmostPrimalInfeasible,
                        s.AlmostDualInfeasible))


def _solve_clarabel(qp, tol, max_iter=None):
    """Clarabel on ``[A_eq; -A_le] x + s = b``, zero and non-negative cones (finite rows)."""
    import clarabel

    A = sp.csr_matrix(_stacked_rows(qp))
    lower = np.concatenate([qp["row_lower"], qp["lb"]])
    upper = np.concatenate([qp["row_upper"], qp["ub"]])
    eq, up, lo = _row_sides(lower, upper)
    blocks = [A[eq], A[up], -A[lo]]
    rhs = [upper[eq], upper[up], -lower[lo]]
    cones = []
    if eq.any():
        cones.append(clarabel.ZeroConeT(int(eq.sum())))
    if up.any() or lo.any():
        cones.append(clarabel.NonnegativeConeT(int(up.sum() + lo.sum())))
    settings = clarabel.DefaultSettings()
    settings.verbose = False
    settings.tol_gap_abs = settings.tol_gap_rel = settings.tol_feas = tol
    if max_iter is not None:
        settings.max_iter = int(max_iter)
    start = time.perf_counter()
    try:
        solver = clarabel.DefaultSolver(_upper_csc(qp["Q"]), qp["c"],
                                        sp.vstack(blocks, format="csc"), np.concatenate(rhs),
                                        cones, settings)
        res = solver.solve()
    except BaseException as exc:  # pyo3 panics derive from BaseException
        if isinstance(exc, (KeyboardInterrupt, SystemExit)):
            raise
        return _failure(start, exc)
    status = _clarabel_status(res.status)
    out = {"status": status, "x": None, "y": None, "iterations": int(res.iterations),
           "time_s": time.perf_counter() - start, "message": str(res.status)}
    if status == "optimal":
        out["x"] = np.array(res.x, dtype=np.float64)
        out["y"] = _rows_from_cones(np.asarray(res.z, dtype=np.float64), eq, up, lo)
    elif status == "infeasible":
        out["certificate"] = _rows_from_cones(np.asarray(res.z, dtype=np.float64), eq, up, lo)
    elif status == "unbounded":
        out["certificate"] = np.array(res.x, dtype=np.float64)
    return out


def _solve_qpsolvers(qp, solver, tol, max_iter=None):
    """Any other qpsolvers backend: "optimal" or "error" (no infeasibility certificate)."""
    from qpsolvers import Problem, solve_problem

    A = sp.csr_matrix(qp["A"])
    lower, upper = qp["row_lower"], qp["row_upper"]
    eq, up, lo = _row_sides(lower, upper)
    G = sp.vstack([A[up], -A[lo]], format="csc")
    h = np.concatenate([upper[up], -lower[lo]])
    problem = Problem(P=sp.csc_matrix(qp["Q"]), q=qp["c"], G=G if G.shape[0] else None,
                      h=h if len(h) else None, A=sp.csc_matrix(A[eq]) if eq.any() else None,
                      b=upper[eq] if eq.any() else None, lb=qp["lb"], ub=qp["ub"])
    kwargs = {} if max_iter is None else {"max_iter": int(max_iter)}
    start = time.perf_counter()
    try:
        with warnings.catch_warnings():
            # The outcome is reported through the status, not as a warning.
            warnings.filterwarnings("ignore", message=".*terminated with status")
            sol = solve_problem(problem, solver=solver, **kwargs)
    except Exception as exc:  # noqa: BLE001 - any backend failure is reported as "error"
        return _failure(start, exc)
    found = bool(sol.found) and sol.x is not None
    return {"status": "optimal" if found else "error",
            "x": np.asarray(sol.x, dtype=np.float64) if found else None, "y": None,
            "iterations": -1, "time_s": time.perf_counter() - start,
            "message": (f"{solver}: solved" if found else
                        f"{solver}: not found (no certificate from this backend)")}


def _bounds_of_rows(qp):
    return (np.concatenate([qp["row_lower"], qp["lb"]]),
            np.concatenate([qp["row_upper"], qp["ub"]]))


def _infeasibility_gap(qp, y):
    """Why ``y`` is no Farkas certificate of ``l <= [A; I] x <= u`` (None when it is one).

    A certificate has ``[A; I]^T y = 0`` and a negative support value
    ``u^T max(y, 0) + l^T min(y, 0)``. After scaling ``y`` to unit max-norm (and dropping
    the weight on absent sides, as OSQP does), the residual must be within ``_CERT_TOL``
    of the largest entry of ``A``, and the support value negative by more than
    ``_CERT_TOL`` times the sum of the magnitudes of its terms (so that it is not the
    rounding left when large bounds cancel).
    """
    lower, upper = _bounds_of_rows(qp)
    y = np.asarray(y, dtype=np.float64).reshape(-1)
    if y.shape != lower.shape or not np.all(np.isfinite(y)):
        return f"the certificate is not a finite vector of length {lower.shape[0]}"
    y = np.where(np.isinf(upper), np.minimum(y, 0.0), y)
    y = np.where(np.isinf(lower), np.maximum(y, 0.0), y)
    norm = np.abs(y).max(initial=0.0)
    if norm == 0.0:
        return "the certificate puts no weight on a bounded side"
    y = y / norm
    m = qp["A"].shape[0]
    residual = float(np.abs(qp["A"].T @ y[:m] + y[m:]).max())
    limit = _CERT_TOL * max(1.0, _abs_max(qp["A"]))
    if residual > limit:
        return f"||[A; I]^T y||_inf = {residual:.3g} at ||y||_inf = 1 (tolerance {limit:.3g})"
    pos, neg = y > 0, y < 0
    terms = np.concatenate([upper[pos] * y[pos], lower[neg] * y[neg]])
    support = float(terms.sum())
    margin = _CERT_TOL * max(1.0, float(np.abs(terms).sum()))
    if support >= -margin:
        return f"support value u'max(y,0) + l'min(y,0) = {support:.3g} is not below -{margin:.3g}"
    return None


def _unboundedness_gap(qp, d):
    """Why ``d`` is no certificate of an unbounded objective (None when it is one).

    A certificate is a direction with ``Q d = 0``, ``c^T d < 0`` and ``[A; I] d`` in the
    recession cone of the bounds (zero on ranged rows, <= 0 under a finite upper side,
    >= 0 over a finite lower one); each checked at unit max-norm with tolerances scaled by
    the largest entries of ``Q``, ``c`` and ``A``.
    """
    n = qp["c"].shape[0]
    d = np.asarray(d, dtype=np.float64).reshape(-1)
    if d.shape != (n,) or not np.all(np.isfinite(d)):
        return f"the certificate is not a finite vector of length {n}"
    norm = np.abs(d).max(initial=0.0)
    if norm == 0.0:
        return "the certificate is the zero direction"
    d = d / norm
    curvature = float(np.abs(qp["Q"] @ d).max())
    limit = _CERT_TOL * max(1.0, _abs_max(qp["Q"]))
    if curvature > limit:
        return f"||Q d||_inf = {curvature:.3g} at ||d||_inf = 1 (tolerance {limit:.3g})"
    slope = float(qp["c"] @ d)
    margin = _CERT_TOL * float(np.abs(qp["c"]).max())
    if slope >= -margin:
        return f"c'd = {slope:.3g} is not below -{margin:.3g}"
    lower, upper = _bounds_of_rows(qp)
    kd = np.concatenate([qp["A"] @ d, d])
    leave = max(float(np.max(kd[np.isfinite(upper)], initial=0.0)),
                float(np.max(-kd[np.isfinite(lower)], initial=0.0)))
    limit = _CERT_TOL * max(1.0, _abs_max(qp["A"]))
    if leave > limit:
        return f"the direction leaves the constraints by {leave:.3g} (tolerance {limit:.3g})"
    return None


def _checked(qp, res):
    """``res`` with an infeasibility or unboundedness claim relabelled ``"uncertain"``
    (and the reason added to the message) when its certificate does not hold."""
    status = res["status"]
    if status not in ("infeasible", "unbounded"):
        return res
    cert = res.get("certificate")
    if cert is None:
        reason = "the backend returned no certificate"
    else:
        reason = (_infeasibility_gap if status == "infeasible" else _unboundedness_gap)(qp, cert)
    if reason is None:
        return res
    return dict(res, status="uncertain",
                message=f"{res['message']}; {status} certificate rejected: {reason}")


def _solve_continuous(qp, solver, tol, max_iter=None, initvals=None, dual_initvals=None):
    if solver == "osqp":
        res = _solve_osqp(qp, tol, max_iter=max_iter, initvals=initvals,
                          dual_initvals=dual_initvals)
    elif solver == "clarabel":
        res = _solve_clarabel(qp, tol, max_iter=max_iter)
    else:
        res = _solve_qpsolvers(qp, solver, tol, max_iter=max_iter)
    return _checked(qp, res)


def _is_positive_definite(Q):
    """Whether ``Q`` is positive definite (so the optimum, if any, is unique)."""
    n = Q.shape[0]
    diag = Q.diagonal()
    scale = max(1.0, _abs_max(Q))
    if np.any(diag <= 1e-12 * scale):
        return False  # a zero diagonal entry of a PSD matrix means a zero row
    if sp.issparse(Q) and n > _DENSE_EIG_LIMIT:
        from scipy.sparse.linalg import ArpackNoConvergence, eigsh

        try:
            smallest = eigsh(Q, k=1, which="SA", return_eigenvectors=False, tol=1e-8)[0]
        except ArpackNoConvergence:
            return False
        return bool(smallest > 1e-9 * scale)
    dense = Q.toarray() if sp.issparse(Q) else Q
    # Cholesky of Q - delta I succeeds exactly when the smallest eigenvalue exceeds delta.
    try:
        np.linalg.cholesky(dense - 1e-9 * scale * np.eye(n))
    except np.linalg.LinAlgError:
        return False
    return True


#: The uniqueness test of a singular-Q optimum is dense; larger instances skip it.
_UNIQUE_TEST_LIMIT = 500


def _has_unique_optimum(qp, x, y, tol):
    """Whether the optimum ``x`` (with multipliers ``y`` of ``[A; I]``) is the only one.

    Every optimum ``x + d`` has ``Q d = 0`` and, by complementary slackness with any
    optimal dual, keeps active the rows whose multiplier is nonzero; so when
    ``[Q; rows with a clearly nonzero multiplier]`` has full column rank, ``d = 0`` and the
    minimum-norm stage has nothing to do. Multipliers within ``sqrt(tol)`` (relative) of
    zero are left out, which only makes the test more conservative.
    """
    n = qp["c"].shape[0]
    if y is None or n > _UNIQUE_TEST_LIMIT:
        return False
    strict = np.abs(y) > np.sqrt(tol) * max(1.0, np.abs(y).max(initial=0.0))
    rows = _stacked_rows(qp)[np.flatnonzero(strict)]
    Q = qp["Q"].toarray() if sp.issparse(qp["Q"]) else qp["Q"]
    M = np.vstack([Q, rows.toarray()])
    s = np.linalg.svd(M, compute_uv=False)
    return bool(s.size >= n and s[n - 1] > 1e-6 * s[0])


def _min_norm_stage(qp, x_opt, y_opt, solver, tol, max_iter):
    """Second stage for singular Q: the minimum-norm point of the optimal face.

    Exact Tikhonov regularization: for a convex QP, argmin f(x) + eps/2 ||x||^2 over
    the feasible set is the minimum-norm optimum for every small enough eps > 0
    (Mangasarian and Meyer, 1979; Friedlander and Tseng, 2007). One regularized
    (positive definite) solve per try, warm-started from the first stage; eps shrinks
    until the objective is within tolerance of the first stage. The result is kept only
    when it is no less feasible than the first-stage point, so this stage never worsens
    a label's feasibility.
    """
    f_opt = qp_objective(qp, x_opt)
    viol_opt = qp_violation(qp, x_opt)
    n = qp["c"].shape[0]
    f_tol = 10 * tol * max(1.0, abs(f_opt))
    eps = 1e-3 * tol ** 0.5 * max(1.0, _abs_max(qp["Q"]))
    eye = sp.identity(n, format="csc") if sp.issparse(qp["Q"]) else np.eye(n)
    for _ in range(3):
        stage = dict(qp, Q=qp["Q"] + eps * eye)
        res = _solve_continuous(stage, solver, tol, max_iter=max_iter, initvals=x_opt,
                                dual_initvals=y_opt)
        if res["status"] == "optimal":
            x = res["x"]
            if (qp_objective(qp, x) <= f_opt + f_tol
                    and qp_violation(qp, x) <= max(viol_opt, 1e-10)):
                return x
        eps *= 1e-2
    return x_opt


def _integer_ranges(qp):
    idx = np.flatnonzero(qp["integer"])
    lo, hi = np.ceil(qp["lb"][idx]), np.floor(qp["ub"][idx])
    if not (np.all(np.isfinite(lo)) and np.all(np.isfinite(hi))):
        raise ValueError("brute force over integer variables needs finite bounds on them.")
    sizes = np.maximum(hi - lo + 1, 0)
    if np.prod(sizes, dtype=float) > _MAX_ENUMERATION:
        raise ValueError(f"mixed-integer instance has {int(np.prod(sizes, dtype=float))} integer "
                         f"assignments; brute force handles at most {_MAX_ENUMERATION}.")
    return idx, [np.arange(a, b + 1) for a, b in zip(lo, hi)]


def _solve_one(qp, solver, tol, min_norm, max_iter):
    """``(status, objective, x, message)`` of one canonical instance."""
    qp = dict(qp, _stacked=_stacked_rows(qp))
    if not qp["integer"].any():
        res = _solve_continuous(qp, solver, tol, max_iter)
        if res["status"] != "optimal":
            return res["status"], np.nan, None, res["message"]
        x = res["x"]
        if (min_norm and not _is_positive_definite(qp["Q"])
                and not _has_unique_optimum(qp, x, res["y"], tol)):
            x = _min_norm_stage(qp, x, res["y"], solver, tol, max_iter)
        return "optimal", qp_objective(qp, x), x, res["message"]
    # Brute force: fix each integer assignment and solve the continuous rest. The
    # instance is infeasible only if every assignment is certified infeasible.
    idx, ranges = _integer_ranges(qp)
    best = ("infeasible", np.inf, None)
    uncertified = None
    counts = {}
    for values in itertools.product(*ranges):
        fixed = dict(qp)
        fixed["lb"] = qp["lb"].copy()
        fixed["ub"] = qp["ub"].copy()
        fixed["lb"][idx] = fixed["ub"][idx] = values
        fixed["integer"] = np.zeros_like(qp["integer"])
        status, obj, x, message = _solve_one(fixed, solver, tol, False, max_iter)
        counts[status] = counts.get(status, 0) + 1
        if status == "unbounded":
            return "unbounded", np.nan, None, f"integer assignment {values}: {message}"
        if status in ("max_iter", "error", "uncertain"):
            uncertified = uncertified or (status, f"integer assignment {values}: {message}")
        elif status == "optimal" and obj < best[1] - 1e-9:
            best = ("optimal", obj, x)
    summary = (f"brute force over {sum(counts.values())} integer assignments ("
               + ", ".join(f"{k}: {v}" for k, v in sorted(counts.items())) + ")")
    if uncertified is not None:
        # Some assignment was not solved: neither the optimum nor infeasibility is certified.
        return uncertified[0], np.nan, None, f"{summary}; {uncertified[1]}"
    if best[0] == "optimal":
        return (*best, summary)
    return "infeasible", np.nan, None, summary


def solve_qps(X, solver="osqp", tol=1e-6, min_norm=True, max_iter=None, return_status=False,
              return_messages=False):
    """Solve a list of QP instances: feasibility, optimal value and optimal solution.

    Parameters
    ----------
    X : list of dict
        QP instances in standard or OSQP form (see :func:`check_qp`).
    solver : str, default="osqp"
        ``"osqp"`` and ``"clarabel"`` are called directly (they certify infeasibility
        and unboundedness); any other name is passed to :func:`qpsolvers.solve_problem`,
        whose failures are reported as ``"error"`` (no certificate).
    tol : float, default=1e-6
        Solver tolerance. OSQP's own default (1e-3) is too loose for labels.
    min_norm : bool, default=True
        When ``Q`` is singular, return the minimum-l2-norm optimal solution (the target
        the paper proves GNNs can represent) through a second, regularized solve that is
        kept only when it is no less feasible than the first. The second solve is
        skipped when the first one's active rows already pin the optimum down
        (``[Q; rows with a nonzero multiplier]`` of full column rank).
    max_iter : int or None, default=None
        Iteration limit of the solver; ``None`` uses 200000 for OSQP and the solver's
        default otherwise. An instance stopped by it gets status ``"max_iter"``.
    return_status : bool, default=False
        Also return the per-instance solver status.
    return_messages : bool, default=False
        Also return, last, the solver's own message for every instance (with the reason
        when a certificate was rejected, or the exception text of an ``"error"``).

    Returns
    -------
    feasible : numpy.ma.MaskedArray of bool, shape (n_samples,)
        True where an optimal solution was found, False only where infeasibility is
        certified, and masked where neither is known (``"unbounded"``, ``"uncertain"``,
        ``"max_iter"``, ``"error"``). Masked entries hold False as data, so boolean indexing with
        ``feasible`` keeps only the solved instances; ``feasible.tolist()`` shows them
        as None.
    objective : ndarray of float, shape (n_samples,)
        NaN where no optimum was found.
    solutions : list of ndarray or None
        ``None`` where no optimum was found.
    status : ndarray of str, shape (n_samples,)
        Only with ``return_status=True``: ``"optimal"``, ``"infeasible"`` (certified),
        ``"unbounded"`` (dual infeasibility certified: no finite optimum),
        ``"uncertain"`` (the backend claimed infeasibility or unboundedness but its
        certificate does not hold on the instance), ``"max_iter"`` (stopped by the
        iteration or time limit, or only an inaccurate answer) or ``"error"``.
    messages : ndarray of str, shape (n_samples,)
        Only with ``return_messages=True``: the backend's own status message.

    Notes
    -----
    A backend's infeasibility or unboundedness claim is labelled only after its
    certificate is checked on the unscaled instance (scaled to unit max-norm, tolerances
    1e-4 relative to the largest entries of the data):

    - infeasible: a Farkas vector ``y`` of the rows ``[A; I]`` with
      ``||[A; I]^T y||_inf`` small and a support value ``u^T max(y, 0) + l^T min(y, 0)``
      clearly negative;
    - unbounded: a direction ``d`` with ``Q d`` small, ``c^T d`` clearly negative and
      ``[A; I] d`` inside the recession cone of the bounds.

    A claim whose certificate fails gets ``"uncertain"`` (masked), the reason in its
    message.

    Mixed-integer instances (an ``integer`` mask) are solved by brute force over the
    integer assignments (at most 4096), one continuous QP per assignment; such an
    instance is infeasible only when every assignment is certified infeasible.

    Examples
    --------
    >>> import numpy as np
    >>> from skpaper.graph import solve_qps
    >>> qp = {"Q": np.eye(2), "c": [-1.0, -1.0], "A": [[1.0, 1.0]], "b": [1.0],
    ...       "sense": ["<="], "lb": [0, 0], "ub": [np.inf, np.inf]}
    >>> feasible, objective, solutions, status = solve_qps([qp], return_status=True)
    >>> bool(feasible[0]), round(float(objective[0]), 4), status.tolist()
    (True, -0.75, ['optimal'])
    >>> ranged = {"P": np.eye(2), "q": [-1.0, -1.0], "A": [[1.0, 1.0]], "l": [-1.0],
    ...           "u": [1.0], "r": 2.0}
    >>> round(float(solve_qps([ranged])[1][0]), 4)
    1.25
    """
    if not isinstance(solver, str):
        raise TypeError(f"solver must be a solver name (str), got {type(solver).__name__}.")
    if isinstance(tol, bool) or not (isinstance(tol, (int, float, np.floating)) and tol > 0):
        raise ValueError(f"tol must be a positive float, got {tol!r}.")
    if max_iter is not None and (isinstance(max_iter, bool)
                                 or not isinstance(max_iter, (int, np.integer)) or max_iter < 1):
        raise ValueError(f"max_iter must be a positive int or None, got {max_iter!r}.")
    if solver not in ("osqp", "clarabel"):
        import qpsolvers

        if solver not in qpsolvers.available_solvers:
            raise ValueError(f"solver must be 'osqp', 'clarabel' or one of "
                             f"{qpsolvers.available_solvers}, got {solver!r}.")
    statuses, objective, solutions, messages = [], [], [], []
    for i, instance in enumerate(_as_instance_list(X)):
        status, obj, x, message = _solve_one(check_qp(instance, name=f"X[{i}]"), solver, tol,
                                             min_norm, max_iter)
        statuses.append(status)
        objective.append(obj)
        solutions.append(x)
        messages.append(message)
    status = np.array(statuses, dtype="<U10")
    feasible = np.ma.MaskedArray(status == "optimal",
                                 mask=~np.isin(status, ("optimal", "infeasible")))
    out = (feasible, np.array(objective, dtype=np.float64), solutions)
    if return_status:
        out += (status,)
    if return_messages:
        out += (np.array(messages, dtype=str),)
    return out


def _as_instance_list(X):
    if isinstance(X, dict):
        raise TypeError("X must be a list of QP dicts; wrap a single instance as [qp].")
    try:
        items = list(X)
    except TypeError:
        raise TypeError(f"X must be a list of QP dicts, got {type(X).__name__}.") from None
    if not items:
        raise ValueError("X must contain at least one QP instance, got an empty list.")
    return items


def _constraint_rows(qp):
    """Rows as ``a x <= b`` or ``a x = b`` (ranged rows split in two, free rows dropped).

    Returns ``(A_rows, b, is_equality)`` with ``A_rows`` dense or sparse as ``qp["A"]``.
    """
    lower, upper = qp["row_lower"], qp["row_upper"]
    eq, up, lo = _row_sides(lower, upper)
    A = qp["A"]
    if sp.issparse(A):
        A = sp.csr_matrix(A)
        rows = sp.vstack([A[eq], A[up], -A[lo]], format="csr")
    else:
        rows = np.vstack([A[eq], A[up], -A[lo]])
    b = np.concatenate([upper[eq], upper[up], -lower[lo]])
    is_eq = np.concatenate([np.ones(eq.sum(), bool), np.zeros(up.sum() + lo.sum(), bool)])
    return rows, b, is_eq
