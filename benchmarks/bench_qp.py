"""QP GNN inference against OSQP on random LCQPs, and GNN warm starts for OSQP.

Run: ``python benchmarks/bench_qp.py [--quick] [--json out.json]``. Reports, per case,
the wall time of batched GNN inference vs sequential OSQP solves (eps 1e-6), the
objective gap |f(x_hat) - f*| / max(|f*|, 1) after clipping the GNN solution to the
bounds, its largest constraint violation, and OSQP iterations cold vs warm-started.
"""

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
from skpaper.graph._qp import _solve_osqp


def make_cases(quick):
    torch.set_num_threads(1)
    n_test = 200 if quick else 1000
    n_train, epochs = (100, 200) if quick else (400, 600)
    X = make_random_lcqp(3 * (n_train + n_test), 5, 20, 30, random_state=0)
    feasible, objective, solutions = solve_qps(X)
    ok = np.flatnonzero(feasible)
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
                                                     for q, x in zip(canon, clipped)]))}

    def osqp():
        iters = [_solve_osqp(q, 1e-6)["iterations"] for q in canon]
        return {"median_iterations": float(np.median(iters))}

    warm = QPGNNWarmStart(model)

    def warm_started():
        report = warm.solve(X_test)
        return {"median_iterations_cold": float(np.median(report["iterations_cold"])),
                "median_iterations_warm": float(np.median(report["iterations_warm"])),
                "total_time_cold_s": float(report["time_cold_s"].sum()),
                "total_time_warm_s": float(report["time_warm_s"].sum())}

    return [
        Case(f"{len(test)} LCQPs 5x20: GNN vs OSQP", gnn, osqp, "osqp", items=len(test)),
        Case("warm-started OSQP (cold inside)", warm_started, items=len(test)),
    ]


if __name__ == "__main__":
    main_cli(make_cases, __doc__.splitlines()[0])
