"""QP formats, solver statuses, the minimum-norm stage and feasible generation."""

import re
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from skpaper.datasets import make_random_lcqp
from skpaper.graph import (
    QPGNNFeasibilityClassifier,
    QPGNNRegressor,
    QPGraphEncoder,
    check_qp,
    qp_objective,
    qp_violation,
    solve_qps,
)

SMALL = dict(hidden_dim=8, max_epochs=3, device="cpu", random_state=0)


def _tiny(**overrides):
    qp = {"Q": np.eye(2), "c": [-1.0, -1.0], "A": [[1.0, 1.0]], "b": [1.0], "sense": ["<="],
          "lb": [0.0, 0.0], "ub": [np.inf, np.inf]}
    qp.update(overrides)
    return qp


def _to_osqp_form(qp, sparse=False):
    """The same instance as an OSQP-form dict (P, q, A, l, u, lb, ub)."""
    c = check_qp(qp)
    wrap = sp.csc_matrix if sparse else np.asarray
    return {"P": wrap(c["Q"]), "q": c["c"], "A": wrap(c["A"]), "l": c["row_lower"],
            "u": c["row_upper"], "lb": c["lb"], "ub": c["ub"], "r": c["r"]}


# ----------------------------------------------------------------- statuses


def test_iteration_limit_is_max_iter_not_infeasible():
    X = make_random_lcqp(12, 5, 20, 30, random_state=3)
    _, _, _, full = solve_qps(X, return_status=True)
    feasible, objective, solutions, status = solve_qps(X, max_iter=5, return_status=True)
    stopped = status == "max_iter"
    assert stopped.any()
    # Nothing stopped by the limit is called infeasible, and its label is masked.
    assert np.all(np.ma.getmaskarray(feasible)[stopped])
    assert np.all(np.isnan(objective[stopped]))
    assert all(solutions[i] is None for i in np.flatnonzero(stopped))
    assert set(status[~stopped]) <= {"optimal", "infeasible"}
    np.testing.assert_array_equal(status[~stopped], full[~stopped])
    assert feasible.tolist().count(None) == int(stopped.sum())
    # Boolean indexing with the masked array keeps only certified feasible instances.
    assert np.all(np.isfinite(objective[feasible]))


@pytest.mark.parametrize("solver", ["osqp", "clarabel"])
def test_certified_statuses(solver):
    infeasible = _tiny(sense=[">="], b=[5.0], ub=[1.0, 1.0])
    # min -x1 + x2 with x1 + x2 <= 1 and free x: unbounded below.
    unbounded = _tiny(Q=np.zeros((2, 2)), c=[-1.0, 1.0], lb=[-np.inf, -np.inf])
    feasible, objective, solutions, status = solve_qps([_tiny(), infeasible, unbounded],
                                                       solver=solver, return_status=True)
    assert status.tolist() == ["optimal", "infeasible", "unbounded"]
    assert feasible.tolist() == [True, False, None]
    assert np.isnan(objective[1:]).all() and solutions[1] is None and solutions[2] is None


def _feasible_instance():
    # min 1/2 |x|^2 - x1 - x2  s.t.  x1 + x2 <= 1, 0 <= x <= 1: optimum (1/2, 1/2).
    return _tiny(ub=[1.0, 1.0])


class _Patched:
    """OSQP's result with its status and certificates replaced (a backend gone wrong)."""

    def __init__(self, monkeypatch, status, prim_cert=None, dual_cert=None):
        import osqp

        original = osqp.OSQP.solve

        def solve(solver, raise_error=None):
            res = original(solver, raise_error=False)
            res.info.status_val = getattr(osqp.SolverStatus, status)
            res.info.status = status.lower()
            if prim_cert is not None:
                res.prim_inf_cert = np.asarray(prim_cert, dtype=float)
            if dual_cert is not None:
                res.dual_inf_cert = np.asarray(dual_cert, dtype=float)
            return res

        monkeypatch.setattr(osqp.OSQP, "solve", solve)


@pytest.mark.parametrize("status, prim, dual, reason", [
    # A vector with [A; I]^T y != 0 (rows: x1 + x2, x1, x2).
    ("OSQP_PRIMAL_INFEASIBLE", [1.0, 0.0, 0.0], None, r"\|\|\[A; I\]\^T y\|\|_inf = 1"),
    # [A; I]^T y = 0 but the support value is 1 * u_row + 0 * lb1 + 0 * lb2 = 1 >= 0.
    ("OSQP_PRIMAL_INFEASIBLE", [1.0, -1.0, -1.0], None, "support value .* is not below"),
    ("OSQP_PRIMAL_INFEASIBLE", [np.nan, 0.0, 0.0], None, "not a finite vector"),
    # Directions: Q d != 0 (Q = I), and one that leaves the box.
    ("OSQP_DUAL_INFEASIBLE", None, [1.0, 1.0], r"\|\|Q d\|\|_inf = 1"),
])
def test_a_bogus_certificate_gives_uncertain(monkeypatch, status, prim, dual, reason):
    _Patched(monkeypatch, status, prim, dual)
    feasible, objective, solutions, statuses, messages = solve_qps(
        [_feasible_instance()], return_status=True, return_messages=True)
    assert statuses.tolist() == ["uncertain"]
    assert feasible.tolist() == [None] and np.isnan(objective[0]) and solutions[0] is None
    claim = "infeasible" if "PRIMAL" in status else "unbounded"
    assert messages[0].startswith(f"{status.lower()}; {claim} certificate rejected: ")
    assert re.search(reason, messages[0]), messages[0]


def test_a_bogus_unboundedness_direction_on_a_singular_q(monkeypatch):
    # Q = 0: d = (1, 1) has Q d = 0 and c'd = -2 < 0 but leaves x1 + x2 <= 1 (by 2) and
    # the box; d = (-1, -1) stays inside the row but has c'd = 2 > 0.
    lp = _tiny(Q=np.zeros((2, 2)), ub=[1.0, 1.0])
    for d, reason in (([1.0, 1.0], "leaves the constraints by 2"),
                      ([-1.0, -1.0], r"c'd = 2 is not below")):
        monkeypatch.undo()
        _Patched(monkeypatch, "OSQP_DUAL_INFEASIBLE", dual_cert=d)
        _, _, _, status, message = solve_qps([lp], return_status=True, return_messages=True)
        assert status.tolist() == ["uncertain"] and re.search(reason, message[0]), message[0]


def test_a_valid_certificate_is_kept_and_checked_on_the_data(monkeypatch):
    # The true certificate of x1 + x2 >= 5 with x <= 1: rows (x1 + x2, x1, x2), y = (-1, 1, 1),
    # support -5 + 1 + 1 = -3. Scaling it (the check normalizes) keeps it valid.
    infeasible = _tiny(sense=[">="], b=[5.0], ub=[1.0, 1.0])
    _Patched(monkeypatch, "OSQP_PRIMAL_INFEASIBLE", prim_cert=[-1e3, 1e3, 1e3])
    _, _, _, status, message = solve_qps([infeasible], return_status=True,
                                         return_messages=True)
    assert status.tolist() == ["infeasible"] and message.tolist() == ["osqp_primal_infeasible"]
    # The same vector on a problem it does not certify (b = 1.5: support -1.5 + 2 > 0).
    _, _, _, status = solve_qps([dict(infeasible, b=[1.5])], return_status=True)
    assert status.tolist() == ["uncertain"]


def test_a_bogus_clarabel_certificate_gives_uncertain(monkeypatch):
    import types

    import clarabel

    class Lying:
        def __init__(self, P, q, A, b, cones, settings):
            self.n, self.m = P.shape[0], A.shape[0]

        def solve(self):
            return types.SimpleNamespace(status=clarabel.SolverStatus.PrimalInfeasible,
                                         x=np.zeros(self.n), z=np.ones(self.m), iterations=7)

    monkeypatch.setattr(clarabel, "DefaultSolver", Lying)
    _, _, _, status, message = solve_qps([_feasible_instance()], solver="clarabel",
                                         return_status=True, return_messages=True)
    assert status.tolist() == ["uncertain"]
    assert "PrimalInfeasible; infeasible certificate rejected" in message[0]


@pytest.mark.parametrize("solver", ["osqp", "clarabel"])
def test_every_status_comes_with_the_solvers_message(solver):
    infeasible = _tiny(sense=[">="], b=[5.0], ub=[1.0, 1.0])
    unbounded = _tiny(Q=np.zeros((2, 2)), c=[-1.0, 1.0], lb=[-np.inf, -np.inf])
    _, _, _, status, message = solve_qps([_tiny(), infeasible, unbounded], solver=solver,
                                         return_status=True, return_messages=True)
    expected = {"osqp": ["solved", "primal infeasible", "dual infeasible"],
                "clarabel": ["Solved", "PrimalInfeasible", "DualInfeasible"]}[solver]
    assert status.tolist() == ["optimal", "infeasible", "unbounded"]
    assert message.tolist() == expected
    _, _, _, status, message = solve_qps(
        make_random_lcqp(2, 5, 20, 30, random_state=3), solver=solver, max_iter=2,
        return_status=True, return_messages=True)
    assert set(status) == {"max_iter"} and all(message)


def test_error_status_carries_the_solvers_message():
    nonconvex = _tiny(Q=-np.eye(2), ub=[1.0, 1.0])
    _, _, _, status, message = solve_qps([nonconvex], return_status=True, return_messages=True)
    assert status.tolist() == ["error"]
    assert message.tolist() == ["OSQP setup failed: OSQP_NONCVX_ERROR"]


@pytest.mark.parametrize("solver", ["osqp", "clarabel"])
def test_bounds_just_below_1e20_are_infinite(solver):
    # Public QP collections write a missing bound as -9.999999999999998e19.
    big = 9.999999999999998e19
    free = {"Q": np.diag([1.0, 0.0]), "c": [1.0, -1.0], "A": [[1.0, 1.0]], "b": [1.0],
            "sense": ["<="], "lb": [-np.inf, -np.inf], "ub": [np.inf, np.inf]}
    stored = dict(free, lb=[-big, -big], ub=[big, big])
    canon = check_qp(stored)
    assert np.isneginf(canon["lb"]).all() and np.isposinf(canon["ub"]).all()
    assert np.isneginf(check_qp(dict(free, b=[-big], sense=[">="]))["row_lower"]).all()
    a = solve_qps([free], solver=solver, return_status=True)
    b = solve_qps([stored], solver=solver, return_status=True)
    assert a[3].tolist() == b[3].tolist() == ["optimal"]
    # min 1/2 x1^2 + x1 - x2 with x2 = 1 - x1 at the optimum: 1/2 x1^2 + 2 x1 - 1, x1 = -2.
    assert b[1][0] == pytest.approx(a[1][0], abs=1e-6)
    # Just below the threshold a bound stays finite.
    assert check_qp(dict(free, lb=[-9.9e18, -np.inf]))["lb"][0] == -9.9e18


def test_osqp_and_clarabel_agree_on_random_instances():
    X = make_random_lcqp(20, 3, 8, 10, random_state=0)
    f1, o1, _, s1 = solve_qps(X, return_status=True)
    f2, o2, _, s2 = solve_qps(X, solver="clarabel", return_status=True)
    assert s1.tolist() == s2.tolist()
    assert "infeasible" in s1.tolist()  # genuine certificates pass the check
    ok = s1 == "optimal"
    np.testing.assert_allclose(o1[ok], o2[ok], rtol=1e-4, atol=1e-4)


def test_classifier_drops_unlabelled_instances_with_a_warning():
    X = make_random_lcqp(30, 5, 20, 30, random_state=3)
    feasible, _, _, status = solve_qps(X, max_iter=100, return_status=True)
    n_masked = int(np.ma.getmaskarray(feasible).sum())
    assert 0 < n_masked < len(X) - 4
    with pytest.warns(UserWarning, match=f"{n_masked} of {len(X)} instances have no certified"):
        clf = QPGNNFeasibilityClassifier(**SMALL).fit(X, feasible)
    assert clf.predict(X).shape == (len(X),)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        QPGNNFeasibilityClassifier(**SMALL).fit(X, np.asarray(status == "optimal"))


def test_regressors_refuse_unsolved_labels():
    X = make_random_lcqp(12, 5, 20, 30, random_state=3)
    _, objective, solutions, status = solve_qps(X, max_iter=5, return_status=True)
    assert (status == "max_iter").any()
    with pytest.raises(ValueError, match="reports as 'optimal' only"):
        QPGNNRegressor(**SMALL).fit(X, objective)
    with pytest.raises(ValueError, match="reports as 'optimal' only"):
        QPGNNRegressor(target="solution", **SMALL).fit(X, solutions)


def test_mixed_integer_with_an_unsolved_assignment_is_not_infeasible():
    X = make_random_lcqp(4, 3, 6, 10, mixed_integer=True, p_integer=0.3, bound_scale=1.0,
                         rhs="feasible", random_state=0)
    _, _, _, status = solve_qps(X, return_status=True)
    assert status.tolist() == ["optimal"] * 4
    _, _, _, limited = solve_qps(X, max_iter=1, return_status=True)
    assert "infeasible" not in limited.tolist()


# ------------------------------------------------------------------ formats


def test_osqp_form_with_ranged_rows_and_constant_term():
    # min 1/2 |x|^2 - x1 - x2 + 2   s.t.  -1 <= x1 + x2 <= 1/2.
    qp = {"P": np.eye(2), "q": [-1.0, -1.0], "A": [[1.0, 1.0]], "l": [-1.0], "u": [0.5],
          "r": 2.0}
    _, objective, solutions = solve_qps([qp])
    np.testing.assert_allclose(solutions[0], [0.25, 0.25], atol=1e-6)
    assert objective[0] == pytest.approx(0.0625 - 0.5 + 2.0, abs=1e-6)
    canon = check_qp(qp)
    assert qp_objective(canon, solutions[0]) == pytest.approx(objective[0])
    # OSQP stores P by its upper triangle: both give the same instance.
    full = np.array([[2.0, 0.5], [0.5, 1.0]])
    upper = np.triu(full)
    a = solve_qps([dict(qp, P=full)])[1]
    b = solve_qps([dict(qp, P=upper)])[1]
    c = solve_qps([dict(qp, P=sp.csc_matrix(upper))])[1]
    np.testing.assert_allclose([a[0], b[0]], [c[0], c[0]], atol=1e-7)
    with pytest.raises(ValueError, match="symmetric or upper triangular"):
        check_qp(dict(qp, P=np.tril(full)))


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 10_000), p_eq=st.sampled_from([0.0, 0.3, 1.0]),
       sparse=st.booleans())
def test_standard_and_osqp_forms_agree(seed, p_eq, sparse):
    qp = make_random_lcqp(1, 3, 6, 8, p_equality=p_eq, random_state=seed)[0]
    osqp_form = _to_osqp_form(qp, sparse=sparse)
    s1 = solve_qps([qp], return_status=True)
    s2 = solve_qps([osqp_form], return_status=True)
    assert s1[3].tolist() == s2[3].tolist()
    if s1[3][0] == "optimal":
        assert s1[1][0] == pytest.approx(s2[1][0], abs=1e-6)
    g1 = QPGraphEncoder().encode(qp)
    g2 = QPGraphEncoder().encode(osqp_form)
    np.testing.assert_allclose(np.sort(g1.con_features, axis=0),
                               np.sort(g2.con_features, axis=0))
    np.testing.assert_allclose(g1.var_features, g2.var_features)
    np.testing.assert_allclose(np.sort(g1.a_weights), np.sort(g2.a_weights))


@settings(max_examples=20, deadline=None)
@given(big=st.floats(1e19, 1e300), side=st.sampled_from(["l", "u", "lb", "ub"]))
def test_huge_bounds_mean_infinite(big, side):
    base = {"P": np.eye(2), "q": [-1.0, -1.0], "A": [[1.0, 1.0]], "l": [-np.inf],
            "u": [1.0], "lb": [0.0, 0.0], "ub": [np.inf, np.inf]}
    sign = -1.0 if side in ("l", "lb") else 1.0
    value = np.array(base[side], dtype=float)
    value[0] = sign * np.inf
    value_big = value.copy()
    value_big[0] = sign * big
    c_inf = check_qp(dict(base, **{side: value}))
    c_big = check_qp(dict(base, **{side: value_big}))
    key = {"l": "row_lower", "u": "row_upper"}.get(side, side)
    np.testing.assert_array_equal(c_inf[key], c_big[key])
    assert solve_qps([dict(base, **{side: value_big})])[1][0] == pytest.approx(
        solve_qps([dict(base, **{side: value})])[1][0], abs=1e-7)


def test_infinite_b_in_standard_form():
    free = solve_qps([_tiny(b=[np.inf])])  # "<=" with +inf: no constraint
    assert free[1][0] == pytest.approx(-1.0, abs=1e-6)
    assert solve_qps([_tiny(b=[1e20])])[1][0] == pytest.approx(-1.0, abs=1e-6)
    with pytest.raises(ValueError, match="row 0 .*can never hold"):
        check_qp(_tiny(b=[-np.inf]))
    with pytest.raises(ValueError, match="row 0 .*can never hold"):
        check_qp(_tiny(sense=["="], b=[np.inf]))
    with pytest.raises(ValueError, match="l must be <= u"):
        check_qp({"P": np.eye(2), "q": [0, 0], "A": [[1.0, 1.0]], "l": [2.0], "u": [1.0]})
    with pytest.raises(ValueError, match="both 'Q'"):
        check_qp(dict(_tiny(), P=np.eye(2)))
    with pytest.raises(ValueError, match="r must be a finite scalar"):
        check_qp(_tiny(r=np.nan))


def test_sparse_matrices_stay_sparse():
    n = 400
    rng = np.random.default_rng(0)
    Q = sp.diags(rng.uniform(1, 2, size=n), format="csr")
    A = sp.random(30, n, density=0.01, random_state=0, format="csr")
    qp = {"P": Q, "q": rng.normal(size=n), "A": A, "l": -np.ones(30), "u": np.ones(30),
          "lb": -np.ones(n), "ub": np.ones(n)}
    canon = check_qp(qp)
    assert sp.issparse(canon["Q"]) and sp.issparse(canon["A"])
    dense = dict(qp, P=Q.toarray(), A=A.toarray())
    g_sparse, g_dense = QPGraphEncoder().encode(qp), QPGraphEncoder().encode(dense)
    np.testing.assert_array_equal(g_sparse.a_edges, g_dense.a_edges)
    np.testing.assert_allclose(g_sparse.a_weights, g_dense.a_weights)
    np.testing.assert_array_equal(g_sparse.q_edges, g_dense.q_edges)
    o_sparse, o_dense = solve_qps([qp])[1], solve_qps([dense])[1]
    assert o_sparse[0] == pytest.approx(o_dense[0], abs=1e-6)


# --------------------------------------------------------- min-norm stage


def _singular(seed, rank, m=5, n=20, nnz=30):
    X = make_random_lcqp(8, m, n, nnz, random_state=seed)
    rng = np.random.default_rng(seed)
    for x in X:
        L = rng.normal(size=(n, rank)) / np.sqrt(n)
        x["Q"] = L @ L.T
    return X


@pytest.mark.parametrize("rank", [0, 4])
def test_min_norm_stage_is_optimal_no_less_feasible_and_shorter(rank):
    X = _singular(1, rank)
    _, first_obj, first, status = solve_qps(X, min_norm=False, return_status=True)
    _, obj, second, _ = solve_qps(X, return_status=True)
    assert (status == "optimal").sum() >= 2
    for inst, x1, x2, f1, f2, s in zip(X, first, second, first_obj, obj, status):
        if s != "optimal":
            continue
        qp = check_qp(inst)
        assert qp_violation(qp, x2) <= max(qp_violation(qp, x1), 1e-10)
        assert f2 <= f1 + 1e-4 * max(1.0, abs(f1))
        assert np.linalg.norm(x2) <= np.linalg.norm(x1) + 1e-6


def test_min_norm_stage_finds_the_midpoint_of_an_optimal_segment():
    # An LP (Q = 0) whose optimal face is the segment x1 + x2 = 1 in the box: the
    # minimum-norm optimum is its midpoint, to solver accuracy.
    _, objective, solutions = solve_qps([_tiny(Q=np.zeros((2, 2)), sense=["="], ub=[1.0, 1.0])])
    assert objective[0] == pytest.approx(-1.0, abs=1e-6)
    np.testing.assert_allclose(solutions[0], [0.5, 0.5], atol=1e-5)
    # A face through a corner: min -x1 s.t. x1 <= 1, 0 <= x <= 1 has optima (1, t).
    lp = {"P": np.zeros((2, 2)), "q": [-1.0, 0.0], "A": np.zeros((0, 2)), "l": [], "u": [],
          "lb": [0.0, 0.0], "ub": [1.0, 1.0]}
    np.testing.assert_allclose(solve_qps([lp])[2][0], [1.0, 0.0], atol=1e-5)


# -------------------------------------------------------------- generator


def test_feasible_mode_generates_feasible_instances_at_any_size():
    X = make_random_lcqp(6, 50, 100, 200, rhs="feasible", random_state=0)
    assert solve_qps(X, solver="clarabel", return_status=True)[3].tolist() == ["optimal"] * 6
    normal = make_random_lcqp(6, 50, 100, 200, random_state=0)
    assert "infeasible" in solve_qps(normal, solver="clarabel", return_status=True)[3].tolist()
    # The paper's generator is unchanged by the new option.
    a = make_random_lcqp(2, 3, 6, 8, random_state=5)
    b = make_random_lcqp(2, 3, 6, 8, rhs="normal", random_state=5)
    np.testing.assert_array_equal(a[1]["b"], b[1]["b"])
    with pytest.raises(ValueError, match="'rhs' parameter"):
        make_random_lcqp(2, rhs="nope")


# ------------------------------------------------------- extreme inputs


@pytest.fixture(scope="module")
def fitted():
    X = make_random_lcqp(30, 3, 8, 10, random_state=0)
    _, objective, solutions, status = solve_qps(X, return_status=True)
    ok = np.flatnonzero(status == "optimal")
    X_ok = [X[i] for i in ok]
    return (X_ok, QPGNNRegressor(**SMALL).fit(X_ok, objective[ok]),
            QPGNNRegressor(target="solution", **SMALL).fit(X_ok, [solutions[i] for i in ok]))


@settings(max_examples=12, deadline=None)
@given(exponent=st.integers(0, 308))
def test_predictions_are_never_silently_nan(fitted, exponent):
    X_ok, obj, sol = fitted
    scaled = [dict(x, Q=x["Q"] * 10.0 ** exponent) for x in X_ok[:3]]
    for model in (obj, sol):
        try:
            pred = model.predict(scaled)
        except ValueError as exc:
            assert "rescale" in str(exc)
            continue
        values = np.concatenate([np.atleast_1d(p) for p in pred]) if isinstance(pred, list) \
            else pred
        assert np.all(np.isfinite(values))


def test_extreme_coefficients_get_a_clear_error(fitted):
    X_ok, obj, _ = fitted
    huge = dict(X_ok[0], Q=X_ok[0]["Q"] * 1e308)
    with pytest.raises(ValueError, match=r"X\[0\]: Q has entries up to 1e\+308.*rescale"):
        obj.predict([huge])
    with pytest.raises(ValueError, match="Q has entries up to"):
        QPGNNRegressor(**SMALL).fit([huge, X_ok[1]], [0.0, 1.0])
