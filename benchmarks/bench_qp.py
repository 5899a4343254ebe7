"""QP GNN inference against OSQP, GNN warm starts for OSQP, and the minimum-norm stage.

Run: ``python benchmarks/bench_qp.py [--quick] [--repeat N] [--json out.json]``.

Cases:

1. Solution GNN vs OSQP (eps 1e-6) on random 5 x 20 LCQPs: wall time of batched GNN
   inference against sequential solves, the objective gap |f(x_hat) - f*| / max(|f*|, 1)
   after clipping the GNN solution to the bounds, and its largest constraint violation.
2. Inference cost against problem size (n variables, n/4 rows): batched GNN inference per
   instance against one OSQP solve per instance (the weights do not change the cost, so the
   timing model is trained for one epoch). This used to be a paper claim; the paper makes
   no such claim.
3. Warm starts: OSQP iterations cold, warm-started from the GNN's solution (primal only,
   and primal plus the active-set dual estimate), and from the exact solution (the best a
   warm start can do), all with the termination check at every iteration; and cold vs
   GNN warm with OSQP's default check interval of 25.
4. The minimum-norm second stage on singular Q (rank n/4): solve time with the stage
   against the first stage alone, and the constraint violation of both.
5. The cost of ``solve_qps`` itself: OSQP through ``solve_qps`` (validation, conversion,
   certificate checks, the minimum-norm stage or its uniqueness test) against calling
   OSQP directly with the same settings on matrices already in OSQP form, for small and
   mid-sized QPs and for LPs with a unique vertex optimum (singular Q). The goal is a
   time ratio ``1 / speedup`` within 1.2. ``python benchmarks/bench_qp.py --overhead``
   runs these cases only.
"""

import sys

import numpy as np
import torch
from _harness import Case, main_cli

from skpaper.datasets import make_random_lcqp
from skpaper.graph import (
    QPGNNRegressor,
    QPGNNWarmStart,
    check_qp,
    qp_objective,
    qp_violation,
    solve_qps,
)
from skpaper.graph._qp import _osqp_data, _solve_osqp


def _solved(X):
    _, objective, solutions, status = solve_qps(X, return_status=True)
    ok = np.flatnonzero(status == "optimal")
    return ok, objective, solutions


def _gnn_cases(quick):
    n_test = 100 if quick else 1000
    n_train, epochs = (100, 200) if quick else (400, 600)
    X = make_random_lcqp(3 * (n_train + n_test), 5, 20, 30, random_state=0)
    ok, objective, solutions = _solved(X)
    train, test = ok[:n_train], ok[n_train:n_train + n_test]
    X_test = [X[i] for i in test]
    canon = [check_qp(x) for x in X_test]
    model = QPGNNRegressor(target="solution", hidden_dim=64, max_epochs=epochs,
                           batch_size=len(train), lr=3e-3, random_state=0, device="cpu")
    model.fit([X[i] for i in train], [solutions[i] for i in train])

    def gnn():
        pred = model.predict(X_test)
        clipped = [np.clip(p, q["lb"], q["ub"]) for p, q in zip(pred, canon)]
        gaps = [abs(qp_objective(q, x) - objective[i]) / max(abs(objective[i]), 1.0)
                for q, x, i in zip(canon, clipped, test)]
        return {"median_objective_gap": float(np.median(gaps)),
                "median_violation": float(np.median([qp_violation(q, x)
                                                     for q, x in zip(canon, clipped)])),
                "test_relative_error": model.relative_error(X_test,
                                                            [solutions[i] for i in test])}

    def osqp():
        iters = [_solve_osqp(q, 1e-6)["iterations"] for q in canon]
        return {"median_iterations": float(np.median(iters))}

    exact = [solutions[i] for i in test]

    def warm_started():
        fine = QPGNNWarmStart(model).solve(X_test)
        primal = QPGNNWarmStart(model, dual="zero").solve(X_test)
        best = QPGNNWarmStart(model).solve(X_test, initvals=exact)
        coarse = QPGNNWarmStart(model, check_termination=25).solve(X_test)
        saving = 1.0 - fine["iterations_warm"] / np.maximum(fine["iterations_cold"], 1)
        return {"median_iterations_cold": float(np.median(fine["iterations_cold"])),
                "median_iterations_warm_primal_only": float(np.median(
                    primal["iterations_warm"])),
                "median_iterations_warm_primal_dual": float(np.median(fine["iterations_warm"])),
                "median_iterations_warm_exact": float(np.median(best["iterations_warm"])),
                "mean_iteration_saving_primal_dual": float(np.mean(saving)),
                "share_of_instances_helped": float(np.mean(saving > 0)),
                "median_iterations_cold_check25": float(np.median(coarse["iterations_cold"])),
                "median_iterations_warm_check25": float(np.median(coarse["iterations_warm"])),
                "total_time_cold_s": float(fine["time_cold_s"].sum()),
                "total_time_warm_s": float(fine["time_warm_s"].sum())}

    return [
        Case(f"{len(test)} LCQPs 5x20: GNN vs OSQP", gnn, osqp, "osqp", items=len(test)),
        Case("warm-started OSQP (cold inside)", warm_started, items=len(test)),
    ]


def _size_cases(quick):
    sizes = [20, 50, 100] if quick else [20, 50, 100, 200, 400]
    n_inst = 50 if quick else 500
    cases = []
    for n in sizes:
        X = make_random_lcqp(n_inst, max(n // 4, 1), n, 3 * n // 2, random_state=n)
        canon = [check_qp(x) for x in X]
        model = QPGNNRegressor(hidden_dim=64, max_epochs=1, batch_size=n_inst, random_state=0,
                               device="cpu").fit(X, np.zeros(n_inst))
        cases.append(Case(f"inference per instance, n={n}", lambda m=model, X=X: m.predict(X),
                          lambda c=canon: [_solve_osqp(q, 1e-6) for q in c], "osqp (eps 1e-6)",
                          items=n_inst, params={"n": n, "m": max(n // 4, 1)}))
    return cases


def _min_norm_case(quick):
    n, m = (50, 10) if quick else (100, 25)
    X = make_random_lcqp(10 if quick else 40, m, n, 2 * n, rhs="feasible", random_state=1)
    rng = np.random.default_rng(1)
    for x in X:
        L = rng.normal(size=(n, n // 4)) / np.sqrt(n)
        x["Q"] = L @ L.T

    def figures(min_norm):
        _, _, solutions, status = solve_qps(X, min_norm=min_norm, return_status=True)
        viol = [qp_violation(check_qp(x), s) for x, s in zip(X, solutions) if s is not None]
        return {"solved": int(np.sum(status == "optimal")), "max_violation": float(max(viol)),
                "mean_norm": float(np.mean([np.linalg.norm(s) for s in solutions
                                            if s is not None]))}

    return Case(f"min-norm stage, singular Q, {m}x{n}", lambda: figures(True),
                lambda: figures(False), "first stage only", items=len(X))


def _direct_osqp(data, tol=1e-6):
    """OSQP called directly: what a user with the matrices in OSQP form would write."""
    import osqp

    statuses = []
    for P, q, A, lower, upper in data:
        solver = osqp.OSQP()
        solver.setup(P, q, A, lower, upper, eps_abs=tol, eps_rel=tol, polishing=True,
                     verbose=False, max_iter=200_000)
        statuses.append(solver.solve(raise_error=False).info.status)
    return {"solved": sum(s == "solved" for s in statuses)}


def _overhead_cases(quick):
    k = 2 if quick else 1
    lps = make_random_lcqp(100 // k, 10, 30, 60, rhs="feasible", bound_scale=1.0,
                           random_state=2)
    for x in lps:
        x["Q"] = np.zeros_like(x["Q"])  # an LP: singular Q, almost surely a unique vertex
    problems = {"LCQP 5x20": make_random_lcqp(400 // k, 5, 20, 30, random_state=0),
                "LCQP 50x100": make_random_lcqp(60 // k, 50, 100, 200, rhs="feasible",
                                                random_state=1),
                "LP 10x30 (Q = 0)": lps}
    cases = []
    for label, X in problems.items():
        data = [_osqp_data(check_qp(x)) for x in X]

        def ours(X=X):
            status = solve_qps(X, return_status=True)[3]
            return {"solved": int(np.sum(status == "optimal")),
                    "uncertain": int(np.sum(status == "uncertain"))}

        cases.append(Case(f"solve_qps overhead, {label}", ours,
                          lambda d=data: _direct_osqp(d), "osqp direct", items=len(X)))
    return cases


def make_cases(quick):
    torch.set_num_threads(1)
    return (_overhead_cases(quick) + _gnn_cases(quick) + _size_cases(quick)
            + [_min_norm_case(quick)])


if __name__ == "__main__":
    overhead_only = "--overhead" in sys.argv
    if overhead_only:
        sys.argv.remove("--overhead")
    main_cli(_overhead_cases if overhead_only else make_cases, __doc__.splitlines()[0])
