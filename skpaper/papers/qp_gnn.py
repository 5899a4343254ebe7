"""Claims of "Expressive Power of GNNs for (Mixed-Integer) Quadratic Programs" (ICML 2025).

The timing and warm-start comparison with OSQP is not a claim of the paper; it lives in
``benchmarks/bench_qp.py``.
"""

import numpy as np

from ._plotting import new_figure, save_figure
from ._registry import ClaimResult, ControlResult, register_claim, register_paper
from ._stats import claim_seeds, paired_difference, seed_summary

SLUG = "qp-gnn"

register_paper(SLUG, "Expressive Power of Graph Neural Networks for (Mixed-Integer) Quadratic "
               "Programs", module="skpaper.graph")

# (instances, constraints, variables, nnz, epochs, seeds) per scale
_CAPACITY = {"smoke": (16, 3, 8, 10, 5, 2), "quick": (100, 5, 20, 30, 120, 3),
             "full": (100, 10, 50, 100, 2000, 5)}
_NARROW, _WIDE = 8, 64


def _labelled(n_samples, m, n, nnz, seed):
    """``n_samples`` solved instances (status "optimal") of the paper's generator."""
    from ..graph import make_random_lcqp, solve_qps

    X = make_random_lcqp(n_samples * 3, m, n, nnz, random_state=seed)
    _, objective, solutions, status = solve_qps(X, return_status=True)
    ok = np.flatnonzero(status == "optimal")[:n_samples]
    return {"X": [X[i] for i in ok], "objective": objective[ok],
            "solutions": [solutions[i] for i in ok],
            "n_unsolved": int(np.isin(status, ("max_iter", "error")).sum())}


def _fit_error(data, target, hidden, epochs, seed):
    """Training relative error (the paper's metric) and the training curve of one model."""
    from ..graph import QPGNNRegressor
    from ..nn import HalveOnPlateau

    y = data["objective"] if target == "objective" else data["solutions"]
    # The official schedule: halve the learning rate and restore the best weights after a
    # 50-epoch plateau (a fresh callback per model).
    model = QPGNNRegressor(target=target, hidden_dim=hidden, max_epochs=epochs,
                           batch_size=len(data["X"]), lr=3e-3, random_state=seed, device="cpu",
                           callbacks=[HalveOnPlateau(patience=50)]).fit(data["X"], y)
    n_params = sum(p.numel() for p in model.module_.parameters())
    return (model.relative_error(data["X"], y), np.sqrt([r["train_loss"] for r in model.history_]),
            n_params)


@register_claim(
    SLUG, "capacity",
    "With equal data and training steps, a wider GNN (hidden 64) fits the optimal value and "
    "the optimal solution of random LCQPs to a lower training relative error than a narrow "
    "one (hidden 8).",
    paper_statement="Training relative errors of Phi_obj and Phi_sol on 100 random LCQPs fall "
                    "faster and lower with larger embedding sizes (Chen et al., 2025, "
                    "experiments section, figures of training error per embedding size).",
    check="Over paired seeds (same instances and initialisation seed per arm), the lower 95% "
          "paired-t bound of (error hidden 8 - error hidden 64) is > 0 for both the "
          "objective and the solution.",
    control="equal widths: a second hidden-8 model (another initialisation seed) in place of "
            "the hidden-64 one must not pass the same check")
def _claim_capacity(scale, seed, out_dir):
    n_samples, m, n, nnz, epochs, n_seeds = _CAPACITY[scale]
    errors = {(t, arm): [] for t in ("objective", "solution")
              for arm in ("narrow", "wide", "narrow_again")}
    curves, params, n_unsolved = {}, {}, 0
    for s in claim_seeds(seed, n_seeds):
        data = _labelled(n_samples, m, n, nnz, s)
        n_unsolved += data["n_unsolved"]
        for target in ("objective", "solution"):
            for arm, hidden, init in (("narrow", _NARROW, s), ("wide", _WIDE, s),
                                      ("narrow_again", _NARROW, s + 1)):
                err, curve, n_par = _fit_error(data, target, hidden, epochs, init)
                errors[target, arm].append(err)
                curves.setdefault((target, arm), curve)
                params[target, arm] = n_par
    gain = {t: paired_difference(errors[t, "narrow"], errors[t, "wide"]) for t in
            ("objective", "solution")}
    control = {t: paired_difference(errors[t, "narrow"], errors[t, "narrow_again"]) for t in
               ("objective", "solution")}

    fig, axes = new_figure(1, 2, figsize=(8, 3))
    for ax, target in zip(axes, ("objective", "solution")):
        for arm, style, label in (("narrow", "--", f"hidden {_NARROW}"),
                                  ("wide", "-", f"hidden {_WIDE}")):
            ax.semilogy(curves[target, arm], style, label=label)
        ax.set_title(f"optimal {'value' if target == 'objective' else 'solution'} (seed 1)")
        ax.set_xlabel("epoch (full batch)")
        ax.set_ylabel("training relative error")
        ax.legend()
    artifact = save_figure(fig, out_dir, "capacity")
    summary = {f"{t}_rel_error_{arm}": seed_summary(v) for (t, arm), v in errors.items()}
    return ClaimResult(
        observed={**summary,
                  "objective_gain_narrow_minus_wide": gain["objective"].to_dict(),
                  "solution_gain_narrow_minus_wide": gain["solution"].to_dict(),
                  "n_unsolved_instances_dropped": n_unsolved},
        expected={"gain_lower_bounds": "> 0 for objective and solution"},
        passed=bool(gain["objective"].passed and gain["solution"].passed),
        control=ControlResult(
            observed={"objective_gain_narrow_minus_narrow": control["objective"].to_dict(),
                      "solution_gain_narrow_minus_narrow": control["solution"].to_dict()},
            passed=bool(control["objective"].passed and control["solution"].passed)),
        arms={f"{t}_{arm}": {"parameters": params[t, arm], "train_steps": epochs,
                             "train_examples": n_samples}
              for t in ("objective", "solution") for arm in ("narrow", "wide", "narrow_again")},
        artifacts=[artifact],
        notes=(f"Training error only (the paper's claim is about representation); {n_samples} "
               f"instances of {m}x{n} per seed, {epochs} full-batch Adam steps with the "
               "official halve-and-restore-best schedule on 50-epoch plateaus, the same for "
               "every arm. The wide arm has more parameters by design: capacity is the "
               "variable. Feasibility is left out: both widths fit it perfectly at this size "
               "(100% training accuracy), so it cannot show a capacity effect."),
    )


def _distinguishable_pair():
    """The WL pair with one coefficient of the triangles doubled (x0 + 2 x1 = 1).

    The triangles stay infeasible over binaries, but the graphs are no longer
    WL-equivalent, so a GNN can tell them apart.
    """
    from ..datasets import make_wl_indistinguishable_milp_pair

    (cycle, triangles), y = make_wl_indistinguishable_milp_pair()
    triangles = dict(triangles, A=triangles["A"].copy())
    triangles["A"][0, 1] = 2.0
    return [cycle, triangles], y


def _plain_gaps(X, y, seeds, epochs):
    from ..graph import QPGNNFeasibilityClassifier

    gaps, last = [], None
    for s in seeds:
        model = QPGNNFeasibilityClassifier(hidden_dim=32, mi_messages=True, max_epochs=epochs,
                                           lr=1e-2, random_state=s, device="cpu",
                                           inference_dtype="float64").fit(X, y)
        last = model.predict_proba(X)[:, 1]
        gaps.append(float(abs(last[0] - last[1])))
    return gaps, last


@register_claim(
    SLUG, "mixed-integer-limit",
    "The 6-cycle and two-triangles binary programs (feasible vs infeasible) get identical "
    "outputs from any trained GNN; random node features separate them.",
    paper_statement="For MI-LCQPs, WL-indistinguishable instances can differ in feasibility, "
                    "so message-passing GNNs are not universal there; breaking the symmetry "
                    "(e.g. random features) restores separability (Chen et al., 2025, Section "
                    "on MI-LCQPs and its counterexample).",
    check="Trained on the pair with labels [feasible, infeasible], every plain GNN (seeds "
          "paired with the control) gives probabilities within 1e-6 of each other, the "
          "solver confirms [True, False], and a GNN with 4 random features classifies both.",
    control="a WL-distinguishable pair (one coefficient of the triangles doubled, still "
            "infeasible): the same identical-output check must fail")
def _claim_mixed_integer_limit(scale, seed, out_dir):
    from ..datasets import make_wl_indistinguishable_milp_pair
    from ..graph import QPGNNFeasibilityClassifier, solve_qps

    X, y = make_wl_indistinguishable_milp_pair()
    X_ctrl, y_ctrl = _distinguishable_pair()
    truth = solve_qps(X)[0]
    truth_ctrl = solve_qps(X_ctrl)[0]
    epochs = {"smoke": 20, "quick": 100, "full": 1000}[scale]
    seeds = claim_seeds(seed, 2 if scale == "smoke" else 3)
    gaps, p = _plain_gaps(X, y, seeds, epochs)
    gaps_ctrl, p_ctrl = _plain_gaps(X_ctrl, y_ctrl, seeds, epochs)
    randomized = QPGNNFeasibilityClassifier(hidden_dim=32, mi_messages=True, random_features=4,
                                            max_epochs=3 * epochs, lr=1e-2, random_state=seed,
                                            device="cpu").fit(X, y)
    p_rand = randomized.predict_proba(X)[:, 1]
    accuracy = float(randomized.score(X, y))
    passed = truth.tolist() == [True, False] and max(gaps) <= 1e-6 and accuracy == 1.0
    control_passed = (truth_ctrl.tolist() == [True, False] and max(gaps_ctrl) <= 1e-6
                      and accuracy == 1.0)

    fig, ax = new_figure(figsize=(5, 3))
    ax.bar(["6-cycle\n(plain)", "triangles\n(plain)", "6-cycle\n(random f.)",
            "triangles\n(random f.)", "6-cycle\n(control)", "triangles'\n(control)"],
           [p[0], p[1], p_rand[0], p_rand[1], p_ctrl[0], p_ctrl[1]],
           color=["tab:blue", "tab:orange"] * 3)
    ax.set_ylabel("P(feasible)")
    ax.set_ylim(0, 1)
    artifact = save_figure(fig, out_dir, "mixed_integer_limit")
    return ClaimResult(
        observed={"solver_feasible": truth.tolist(), "probability_gaps_plain": gaps,
                  "probability_gap_random_features": float(abs(p_rand[0] - p_rand[1])),
                  "random_features_accuracy": accuracy},
        expected={"max_probability_gap_plain": "<= 1e-6", "random_features_accuracy": 1.0},
        passed=bool(passed),
        control=ControlResult(observed={"solver_feasible": truth_ctrl.tolist(),
                                        "probability_gaps_plain": gaps_ctrl},
                              passed=bool(control_passed)),
        arms={"plain": {"train_steps": epochs, "train_examples": 2, "seeds": len(seeds)},
              "control": {"train_steps": epochs, "train_examples": 2, "seeds": len(seeds)},
              "random_features": {"train_steps": 3 * epochs, "train_examples": 2}},
        artifacts=[artifact],
        notes="All models are trained on the pair itself with labels [feasible, infeasible]; "
              "the control pair is trained the same way with the same seeds.",
    )
