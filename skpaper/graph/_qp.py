"""Linearly constrained quadratic programs: instance format, validation and solving.

An instance is a dict

    min_x  1/2 x^T Q x + c^T x   s.t.  A x (sense) b,   lb <= x <= ub,   x_j integer for j in I

with keys ``Q`` (n, n), ``c`` (n,), ``A`` (m, n), ``b`` (m,), ``sense`` (m,), ``lb``, ``ub``
(n,; infinite entries allowed) and an optional boolean ``integer`` mask (n,). ``Q`` and ``A``
may be dense arrays or scipy sparse matrices; ``sense`` holds ``"<="``, ``"="``, ``">="`` or
the codes -1, 0, 1.
"""

import itertools
import time
import warnings

import numpy as np
import scipy.sparse as sp

__all__ = ["check_qp", "qp_objective", "qp_violation", "solve_qps"]

_SENSE_CODES = {"<=": -1, "=": 0, "==": 0, ">=": 1, -1: -1, 0: 0, 1: 1}
_REQUIRED = ("Q", "c", "A", "b", "sense", "lb", "ub")
_MAX_ENUMERATION = 4096


def _dense(matrix):
    return np.asarray(matrix.toarray() if sp.issparse(matrix) else matrix, dtype=np.float64)


def check_qp(instance, *, name="X"):
    """Validate one QP instance and return it in canonical dense form.

    Parameters
    ----------
    instance : dict
        Keys ``Q, c, A, b, sense, lb, ub`` and optionally ``integer``.
    name : str, default="X"
        How the instance is named in error messages.

    Returns
    -------
    qp : dict
        Float64 dense ``Q, c, A, b, lb, ub``; ``sense`` as int8 codes in {-1, 0, 1};
        ``integer`` as a bool mask.

    Raises
    ------
    TypeError
        If ``instance`` is not a dict.
    ValueError
        On a missing key, a shape mismatch, a non-symmetric or non-finite ``Q``,
        an unknown sense, ``lb > ub`` or NaN entries.
    """
    if not isinstance(instance, dict):
        raise TypeError(f"{name} must be a dict describing a QP, got {type(instance).__name__}.")
    missing = [k for k in _REQUIRED if k not in instance]
    if missing:
        raise ValueError(f"{name} is missing the QP keys {missing}; expected {list(_REQUIRED)}.")
    c = np.asarray(instance["c"], dtype=np.float64).reshape(-1)
    n = c.shape[0]
    if n == 0:
        raise ValueError(f"{name}: a QP needs at least one variable, got c of length 0.")
    Q = _dense(instance["Q"])
    A = _dense(instance["A"])
    if A.size == 0:
        A = A.reshape(0, n)
    b = np.asarray(instance["b"], dtype=np.float64).reshape(-1)
    lb = np.asarray(instance["lb"], dtype=np.float64).reshape(-1)
    ub = np.asarray(instance["ub"], dtype=np.float64).reshape(-1)
    if Q.shape != (n, n):
        raise ValueError(f"{name}: Q must have shape ({n}, {n}) to match c, got {Q.shape}.")
    if A.ndim != 2 or A.shape[1] != n:
        raise ValueError(f"{name}: A must have shape (m, {n}), got {A.shape}.")
    m = A.shape[0]
    if b.shape != (m,):
        raise ValueError(f"{name}: b must have shape ({m},) to match A, got {b.shape}.")
    if lb.shape != (n,) or ub.shape != (n,):
        raise ValueError(f"{name}: lb and ub must have shape ({n},), got {lb.shape} and "
                         f"{ub.shape}.")
    raw_sense = np.asarray(instance["sense"], dtype=object).reshape(-1)
    if raw_sense.shape != (m,):
        raise ValueError(f"{name}: sense must have one entry per row of A ({m}), got "
                         f"{raw_sense.shape[0]}.")
    try:
        sense = np.array([_SENSE_CODES[s if isinstance(s, str) else int(s)] for s in raw_sense],
                         dtype=np.int8)
    except (KeyError, ValueError, TypeError):
        bad = [s for s in raw_sense if (s if isinstance(s, str) else s) not in _SENSE_CODES]
        raise ValueError(f"{name}: sense entries must be '<=', '=', '>=' or -1, 0, 1; got "
                         f"{bad[:3]}.") from None
    for key, arr in (("Q", Q), ("c", c), ("A", A), ("b", b)):
        if not np.all(np.isfinite(arr)):
            raise ValueError(f"{name}: {key} must be finite.")
    if np.isnan(lb).any() or np.isnan(ub).any():
        raise ValueError(f"{name}: lb and ub must not contain NaN (use -inf/inf).")
    if np.any(lb > ub):
        raise ValueError(f"{name}: lb must be <= ub elementwise.")
    if not np.allclose(Q, Q.T, atol=1e-10 * max(1.0, np.abs(Q).max())):
        raise ValueError(f"{name}: Q must be symmetric.")
    integer = instance.get("integer")
    integer = np.zeros(n, dtype=bool) if integer is None else np.asarray(integer, dtype=bool)
    if integer.shape != (n,):
        raise ValueError(f"{name}: integer must be a boolean mask of shape ({n},), got "
                         f"{integer.shape}.")
    return {"Q": Q, "c": c, "A": A, "b": b, "sense": sense, "lb": lb, "ub": ub,
            "integer": integer}


def qp_objective(qp, x):
    """Objective value 1/2 x^T Q x + c^T x of ``x`` for a canonical instance."""
    x = np.asarray(x, dtype=np.float64)
    return float(0.5 * x @ qp["Q"] @ x + qp["c"] @ x)


def qp_violation(qp, x):
    """Largest violation of the linear constraints and bounds at ``x`` (0 when feasible)."""
    x = np.asarray(x, dtype=np.float64)
    r = qp["A"] @ x - qp["b"]
    sense = qp["sense"]
    row = np.where(sense < 0, np.maximum(r, 0), np.where(sense > 0, np.maximum(-r, 0), np.abs(r)))
    box = np.maximum(np.maximum(qp["lb"] - x, x - qp["ub"]), 0)
    return float(max(row.max(initial=0.0), box.max(initial=0.0)))


def _osqp_data(qp):
    """OSQP form l <= [A; I] x <= u of a canonical instance."""
    m, n = qp["A"].shape
    lower = np.where(qp["sense"] < 0, -np.inf, qp["b"])
    upper = np.where(qp["sense"] > 0, np.inf, qp["b"])
    A = sp.vstack([sp.csc_matrix(qp["A"]), sp.identity(n, format="csc")], format="csc")
    return (sp.triu(sp.csc_matrix(qp["Q"]), format="csc"), qp["c"], A,
            np.concatenate([lower, qp["lb"]]), np.concatenate([upper, qp["ub"]]))


def _solve_osqp(qp, tol, initvals=None, max_iter=200_000):
    import osqp

    P, q, A, lower, upper = _osqp_data(qp)
    solver = osqp.OSQP()
    solver.setup(P, q, A, lower, upper, eps_abs=tol, eps_rel=tol, max_iter=max_iter,
                 polishing=True, verbose=False)
    if initvals is not None:
        solver.warm_start(x=np.asarray(initvals, dtype=np.float64))
    start = time.perf_counter()
    res = solver.solve(raise_error=False)
    elapsed = time.perf_counter() - start
    status = res.info.status_val
    solved = status in (osqp.SolverStatus.OSQP_SOLVED, osqp.SolverStatus.OSQP_SOLVED_INACCURATE)
    infeasible = status in (osqp.SolverStatus.OSQP_PRIMAL_INFEASIBLE,
                            osqp.SolverStatus.OSQP_PRIMAL_INFEASIBLE_INACCURATE)
    return {"solved": solved, "infeasible": infeasible, "x": np.array(res.x, dtype=np.float64),
            "iterations": int(res.info.iter), "time_s": elapsed, "status": res.info.status}


def _solve_qpsolvers(qp, solver, tol):
    from qpsolvers import Problem, solve_problem

    le = qp["sense"] < 0
    ge = qp["sense"] > 0
    eq = qp["sense"] == 0
    G = np.vstack([qp["A"][le], -qp["A"][ge]])
    h = np.concatenate([qp["b"][le], -qp["b"][ge]])
    csc = sp.csc_matrix
    problem = Problem(P=csc(qp["Q"]), q=qp["c"], G=csc(G) if len(G) else None,
                      h=h if len(h) else None, A=csc(qp["A"][eq]) if eq.any() else None,
                      b=qp["b"][eq] if eq.any() else None, lb=qp["lb"], ub=qp["ub"])
    kwargs = {"tol_gap_abs": tol, "tol_feas": tol} if solver == "clarabel" else {}
    start = time.perf_counter()
    with warnings.catch_warnings():
        # Infeasibility is reported through the return value, not as a warning.
        warnings.filterwarnings("ignore", message=".*terminated with status")
        sol = solve_problem(problem, solver=solver, **kwargs)
    elapsed = time.perf_counter() - start
    found = bool(sol.found) and sol.x is not None
    return {"solved": found, "infeasible": not found,
            "x": np.asarray(sol.x, dtype=np.float64) if found else None,
            "iterations": -1, "time_s": elapsed, "status": "solved" if found else "not found"}


def _solve_continuous(qp, solver, tol):
    if solver == "osqp":
        return _solve_osqp(qp, tol)
    return _solve_qpsolvers(qp, solver, tol)


def _is_positive_definite(Q):
    return np.linalg.eigvalsh(Q).min() > 1e-9 * max(1.0, np.abs(Q).max())


def _min_norm_stage(qp, x_opt, solver, tol):
    """Second stage for singular Q: the minimum-norm point of the optimal face.

    For a convex QP every optimum x satisfies Q x = Q x* and c^T x = c^T x*, so the optimal
    set is the feasible set cut by these linear equalities; minimise ||x||^2 on it.
    """
    n = qp["c"].shape[0]
    extra = np.vstack([qp["Q"], qp["c"][None, :]])
    stage = {
        "Q": np.eye(n), "c": np.zeros(n),
        "A": np.vstack([qp["A"], extra]),
        "b": np.concatenate([qp["b"], extra @ x_opt]),
        "sense": np.concatenate([qp["sense"], np.zeros(n + 1, dtype=np.int8)]),
        "lb": qp["lb"], "ub": qp["ub"], "integer": qp["integer"],
    }
    res = _solve_continuous(stage, solver, tol)
    return res["x"] if res["solved"] else x_opt


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


def _solve_one(qp, solver, tol, min_norm):
    if not qp["integer"].any():
        res = _solve_continuous(qp, solver, tol)
        if not res["solved"]:
            return False, np.nan, None
        x = res["x"]
        if min_norm and not _is_positive_definite(qp["Q"]):
            x = _min_norm_stage(qp, x, solver, tol)
        return True, qp_objective(qp, x), x
    # Brute force: fix each integer assignment and solve the continuous rest.
    idx, ranges = _integer_ranges(qp)
    best = (False, np.inf, None)
    for values in itertools.product(*ranges):
        fixed = dict(qp)
        fixed["lb"] = qp["lb"].copy()
        fixed["ub"] = qp["ub"].copy()
        fixed["lb"][idx] = fixed["ub"][idx] = values
        fixed["integer"] = np.zeros_like(qp["integer"])
        feasible, obj, x = _solve_one(fixed, solver, tol, min_norm=False)
        if feasible and obj < best[1] - 1e-9:
            best = (True, obj, x)
    return best if best[0] else (False, np.nan, None)


def solve_qps(X, solver="osqp", tol=1e-6, min_norm=True):
    """Solve a list of QP instances: feasibility, optimal value and optimal solution.

    Parameters
    ----------
    X : list of dict
        QP instances (see :func:`check_qp`).
    solver : str, default="osqp"
        ``"osqp"`` is called directly (it reports iterations); any other name is passed
        to :func:`qpsolvers.solve_problem` (``"clarabel"``, ``"highs"``, ``"proxqp"``...).
    tol : float, default=1e-6
        Solver tolerance. OSQP's own default (1e-3) is too loose for labels.
    min_norm : bool, default=True
        When ``Q`` is singular, return the minimum-l2-norm optimal solution (the target
        the paper proves GNNs can represent) through a second solve.

    Returns
    -------
    feasible : ndarray of bool, shape (n_samples,)
    objective : ndarray of float, shape (n_samples,)
        NaN for infeasible instances.
    solutions : list of ndarray or None
        ``None`` for infeasible instances.

    Notes
    -----
    Mixed-integer instances (an ``integer`` mask) are solved by brute force over the
    integer assignments (at most 4096), one continuous QP per assignment.

    Examples
    --------
    >>> import numpy as np
    >>> from skpaper.graph import solve_qps
    >>> qp = {"Q": np.eye(2), "c": [-1.0, -1.0], "A": [[1.0, 1.0]], "b": [1.0],
    ...       "sense": ["<="], "lb": [0, 0], "ub": [np.inf, np.inf]}
    >>> feasible, objective, solutions = solve_qps([qp])
    >>> bool(feasible[0]), round(float(objective[0]), 4), np.round(solutions[0], 3).tolist()
    (True, -0.75, [0.5, 0.5])
    """
    if not isinstance(solver, str):
        raise TypeError(f"solver must be a solver name (str), got {type(solver).__name__}.")
    if not (isinstance(tol, (int, float)) and tol > 0):
        raise ValueError(f"tol must be a positive float, got {tol!r}.")
    if solver != "osqp":
        import qpsolvers

        if solver not in qpsolvers.available_solvers:
            raise ValueError(f"solver must be 'osqp' or one of {qpsolvers.available_solvers}, "
                             f"got {solver!r}.")
    feasible, objective, solutions = [], [], []
    for i, instance in enumerate(_as_instance_list(X)):
        ok, obj, x = _solve_one(check_qp(instance, name=f"X[{i}]"), solver, tol, min_norm)
        feasible.append(ok)
        objective.append(obj)
        solutions.append(x)
    return np.array(feasible, dtype=bool), np.array(objective, dtype=np.float64), solutions


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
