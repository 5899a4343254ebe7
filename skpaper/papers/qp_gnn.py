"""Claims of "Expressive Power of GNNs for (Mixed-Integer) Quadratic Programs" (ICML 2025)."""

import time

import numpy as np

from ._plotting import new_figure, save_figure
from ._registry import ClaimResult, register_claim, register_paper

SLUG = "qp-gnn"

register_paper(SLUG, "Expressive Power of Graph Neural Networks for (Mixed-Integer) Quadratic "
               "Programs", module="skpaper.graph")

# (instances, constraints, variables, nnz, epochs) per scale
_CAPACITY = {"smoke": (20, 3, 8, 10, 15), "quick": (100, 5, 20, 30, 300),
             "full": (100, 10, 50, 100, 2000)}
_THRESHOLD = 0.05



def _labelled(n_samples, m, n, nnz, seed):
    from ..graph import make_random_lcqp, solve_qps

    X = make_random_lcqp(n_samples * 3, m, n, nnz, random_state=seed)
    feasible, objective, solutions = solve_qps(X)
    ok = np.flatnonzero(feasible)[:n_samples]
    return {"X_all": X[:n_samples], "feasible": feasible[:n_samples],
            "X_ok": [X[i] for i in ok], "objective": objective[ok],
            "solutions": [solutions[i] for i in ok]}


@register_claim(SLUG, "capacity",
                "With equal training steps, a wide GNN (hidden 64) fits the optimal value "
                "and the optimal solution of 100 random LCQPs to training relative error "
                "below 0.05 while a narrow one (hidden 8) stays above, and fits feasibility "
                "at least as well.")
def _claim_capacity(scale, seed, out_dir):
    from ..graph import QPGNNFeasibilityClassifier, QPGNNRegressor
    from ..nn import HalveOnPlateau

    n_samples, m, n, nnz, epochs = _CAPACITY[scale]
    data = _labelled(n_samples, m, n, nnz, seed)
    observed, curves = {}, {}
    for h in (8, 64):
        # The official schedule: halve the learning rate and restore the best weights
        # after a 50-epoch plateau (fresh callback per model).
        common = dict(max_epochs=epochs, batch_size=n_samples, lr=3e-3, random_state=seed,
                      device="cpu")
        obj = QPGNNRegressor(hidden_dim=h, callbacks=[HalveOnPlateau(patience=50)],
                             **common).fit(data["X_ok"], data["objective"])
        sol = QPGNNRegressor(target="solution", hidden_dim=h,
                             callbacks=[HalveOnPlateau(patience=50)], **common).fit(
            data["X_ok"], data["solutions"])
        clf = QPGNNFeasibilityClassifier(hidden_dim=h, callbacks=[HalveOnPlateau(patience=50)],
                                         **common).fit(data["X_all"], data["feasible"])
        observed[f"objective_rel_error_h{h}"] = obj.relative_error(data["X_ok"],
                                                                   data["objective"])
        observed[f"solution_rel_error_h{h}"] = sol.relative_error(data["X_ok"],
                                                                  data["solutions"])
        observed[f"feasibility_accuracy_h{h}"] = clf.score(data["X_all"], data["feasible"])
        curves[h] = [np.sqrt([r["train_loss"] for r in est.history_]) for est in (obj, sol)]
    observed["n_feasible_instances"] = len(data["X_ok"])
    observed["feasible_fraction"] = float(np.mean(data["feasible"]))

    passed = (observed["objective_rel_error_h64"] < _THRESHOLD < observed["objective_rel_error_h8"]
              and observed["solution_rel_error_h64"] < _THRESHOLD
              < observed["solution_rel_error_h8"]
              and observed["feasibility_accuracy_h64"] >= observed["feasibility_accuracy_h8"])

    fig, axes = new_figure(1, 2, figsize=(8, 3))
    for ax, k, title in ((axes[0], 0, "optimal value"), (axes[1], 1, "optimal solution")):
        for h, style in ((8, "--"), (64, "-")):
            ax.semilogy(curves[h][k], style, label=f"hidden {h}")
        ax.axhline(_THRESHOLD, color="gray", lw=0.8)
        ax.set_title(title)
        ax.set_xlabel("epoch (full batch)")
        ax.set_ylabel("training relative error")
        ax.legend()
    artifact = save_figure(fig, out_dir, "capacity")
    return ClaimResult(
        observed=observed,
        expected={"objective_and_solution_rel_error_h64_below": _THRESHOLD,
                  "objective_and_solution_rel_error_h8_above": _THRESHOLD,
                  "feasibility_accuracy_h64_at_least_h8": True},
        passed=bool(passed), artifacts=[artifact],
        notes=("Training error only (the paper's claim is about representation); "
               f"{n_samples} instances of {m}x{n}, {epochs} full-batch Adam steps with the "
               "official halve-and-restore-best schedule on 50-epoch plateaus. The fit is "
               "sensitive to the trajectory at this budget: the same setting without the "
               "schedule has ended anywhere from 0.03 to 0.25 for the objective at hidden 64."),
    )


@register_claim(SLUG, "mixed-integer-limit",
                "The 6-cycle and two-triangles binary programs (feasible vs infeasible) get "
                "identical outputs from any trained GNN; random node features separate them.")
def _claim_mixed_integer_limit(scale, seed, out_dir):
    from ..datasets import make_wl_indistinguishable_milp_pair
    from ..graph import QPGNNFeasibilityClassifier, solve_qps

    X, y = make_wl_indistinguishable_milp_pair()
    truth = solve_qps(X)[0]
    epochs = {"smoke": 50, "quick": 300, "full": 1000}[scale]
    gaps = []
    for s in range(seed, seed + (2 if scale == "smoke" else 5)):
        plain = QPGNNFeasibilityClassifier(hidden_dim=32, mi_messages=True, max_epochs=epochs,
                                           lr=1e-2, random_state=s, device="cpu",
                                           inference_dtype="float64").fit(X, y)
        p = plain.predict_proba(X)[:, 1]
        gaps.append(float(abs(p[0] - p[1])))
    randomized = QPGNNFeasibilityClassifier(hidden_dim=32, mi_messages=True, random_features=4,
                                            max_epochs=epochs, lr=1e-2, random_state=seed,
                                            device="cpu").fit(X, y)
    p_rand = randomized.predict_proba(X)[:, 1]
    observed = {"solver_feasible": truth.tolist(),
                "max_probability_gap_plain": max(gaps),
                "probability_gap_random_features": float(abs(p_rand[0] - p_rand[1])),
                "random_features_accuracy": float(randomized.score(X, y))}
    passed = (truth.tolist() == [True, False] and max(gaps) <= 1e-6
              and observed["random_features_accuracy"] == 1.0)

    fig, ax = new_figure(figsize=(4, 3))
    ax.bar(["6-cycle\n(plain)", "triangles\n(plain)", "6-cycle\n(random feat.)",
            "triangles\n(random feat.)"], [p[0], p[1], p_rand[0], p_rand[1]],
           color=["tab:blue", "tab:orange"] * 2)
    ax.set_ylabel("P(feasible)")
    ax.set_ylim(0, 1)
    artifact = save_figure(fig, out_dir, "mixed_integer_limit")
    return ClaimResult(
        observed=observed,
        expected={"max_probability_gap_plain": "<= 1e-6", "random_features_accuracy": 1.0},
        passed=bool(passed), artifacts=[artifact],
        notes="Both models are trained on the pair itself with labels [feasible, infeasible].",
    )


@register_claim(SLUG, "inference-vs-solver",
                "Batched GNN inference costs less per instance than an OSQP solve at every "
                "problem size tried, and GNN solutions used as warm starts save OSQP "
                "iterations.")
def _claim_inference_vs_solver(scale, seed, out_dir):
    from ..graph import QPGNNRegressor, QPGNNWarmStart, make_random_lcqp, solve_qps
    from ..graph._qp import _solve_osqp, check_qp

    sizes = {"smoke": [10, 20], "quick": [20, 50, 100], "full": [20, 50, 100, 200, 400]}[scale]
    n_inst = {"smoke": 20, "quick": 100, "full": 1000}[scale]
    gnn_ms, osqp_ms = [], []
    for n in sizes:
        m = max(n // 4, 1)
        X = make_random_lcqp(n_inst, m, n, 3 * n // 2, random_state=seed)
        model = QPGNNRegressor(hidden_dim=64, max_epochs=1, batch_size=n_inst, random_state=seed,
                               device="cpu").fit(X, np.zeros(n_inst))
        start = time.perf_counter()
        model.predict(X)
        gnn_ms.append(1e3 * (time.perf_counter() - start) / n_inst)
        start = time.perf_counter()
        for inst in X:
            _solve_osqp(check_qp(inst), 1e-6)
        osqp_ms.append(1e3 * (time.perf_counter() - start) / n_inst)
    ratios = [o / g for o, g in zip(osqp_ms, gnn_ms)]

    # Warm starts from a solution model trained on other instances of the same family.
    n_train, epochs = {"smoke": (20, 20), "quick": (100, 300), "full": (1000, 1000)}[scale]
    data = make_random_lcqp(3 * (n_train + 50), 5, 20, 30, random_state=seed + 1)
    feasible, _, solutions = solve_qps(data)
    ok = np.flatnonzero(feasible)
    train, test = ok[:n_train], ok[n_train:n_train + 50]
    reg = QPGNNRegressor(target="solution", hidden_dim=64, max_epochs=epochs,
                         batch_size=len(train), lr=3e-3, random_state=seed, device="cpu")
    reg.fit([data[i] for i in train], [solutions[i] for i in train])
    report = QPGNNWarmStart(reg).solve([data[i] for i in test])
    cold, warm = report["iterations_cold"], report["iterations_warm"]
    observed = {"sizes": sizes, "gnn_ms_per_instance": gnn_ms, "osqp_ms_per_instance": osqp_ms,
                "osqp_over_gnn_time": ratios,
                "median_iterations_cold": float(np.median(cold)),
                "median_iterations_warm": float(np.median(warm)),
                "mean_iteration_saving": float(np.mean(1 - warm / np.maximum(cold, 1)))}
    passed = min(ratios) > 1 and np.median(warm) < np.median(cold)

    fig, axes = new_figure(1, 2, figsize=(8, 3))
    axes[0].loglog(sizes, gnn_ms, "o-", label="GNN (batched)")
    axes[0].loglog(sizes, osqp_ms, "s-", label="OSQP (eps 1e-6)")
    axes[0].set_xlabel("variables n")
    axes[0].set_ylabel("ms per instance")
    axes[0].legend()
    axes[1].hist([cold, warm], bins=15, label=["cold", "warm (GNN)"])
    axes[1].set_xlabel("OSQP iterations")
    axes[1].legend()
    artifact = save_figure(fig, out_dir, "inference_vs_solver")
    return ClaimResult(
        observed=observed,
        expected={"osqp_over_gnn_time": "> 1 at every size",
                  "median_iterations_warm": "< median_iterations_cold"},
        passed=bool(passed), artifacts=[artifact],
        notes="Timings are CPU wall times on this machine; inference time does not depend on "
              "the weights, so the timing model is trained for one epoch only.",
    )
