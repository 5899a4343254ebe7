"""
=======================================================
When does a pretrained deep linear network transfer?
=======================================================

A two-layer linear network pretrained from a small initialisation on a source task
``y = beta_s^T x`` keeps one feature, ``beta_s^T x``. A target task at angle ``theta`` from
the source, with ``n = gamma * d`` noisy samples, can then be learned three ways: from
scratch (gradient descent converges to the minimum-norm interpolator), by linear transfer
(refit the last layer on the pretrained feature) or by fine-tuning every layer. The
transferability ``T = R_scratch - R_transfer`` follows closed forms (Tahir, Ganguli and
Rotskoff, ICML 2025): linear transfer wins with few samples and a small angle, loses with
many samples, and wins again in a thin band at the double-descent peak ``gamma = 1``;
fine-tuning wins exactly when ``theta < 60`` degrees.

The top row draws the two phase diagrams in the proportional limit; the bottom row
compares simulated risks of trained networks (``d = 60``) with the finite-``d`` formulas.
"""

import os

TINY = os.environ.get("SKPAPER_EXAMPLE_SIZE") == "tiny"  # seconds-long run, for the tests

# %%
# The theoretical phase diagrams.
import matplotlib.pyplot as plt
import numpy as np
from sklearn.frozen import FrozenEstimator

from skpaper.datasets import make_teacher_tasks
from skpaper.representation import (
    DeepLinearRegressor,
    TransferRegressor,
    finetune_risk,
    linear_transfer_risk,
    negative_transfer_region,
    phase_diagram,
    scratch_risk,
)

sigma = 0.2
gammas = np.linspace(0.02, 2.0, 20 if TINY else 200)
thetas = np.linspace(0.0, np.pi / 2, 20 if TINY else 200)
fig, axes = plt.subplots(2, 2, figsize=(10, 8))
for ax, mode in zip(axes[0], ("linear", "finetune")):
    T = np.clip(phase_diagram(gammas, thetas, sigma=sigma, mode=mode), -1, 1)
    im = ax.pcolormesh(np.rad2deg(thetas), gammas, T, cmap="RdBu", vmin=-1, vmax=1)
    ax.set_xlabel("theta (degrees)")
    ax.set_ylabel("gamma = n / d")
    ax.set_title(f"T_{'lt' if mode == 'linear' else 'ft'} (sigma = {sigma}; blue: transfer helps)")
    fig.colorbar(im, ax=ax)
bands = [negative_transfer_region(t, sigma) for t in thetas]
axes[0, 0].plot(np.rad2deg(thetas), [b.gamma_minus for b in bands], "k", lw=0.8)
axes[0, 0].plot(np.rad2deg(thetas), [b.gamma_plus for b in bands], "k", lw=0.8)
axes[0, 0].plot(np.rad2deg(thetas), np.minimum([b.gamma_over for b in bands], 2.0), "k", lw=0.8)
axes[0, 1].axvline(60, color="k", lw=0.8)

# %%
# Simulated networks against the finite-d formulas, at two angles.
d, reps = (20, 1) if TINY else (60, 4)
sim_gammas = [0.5, 2.0] if TINY else [0.25, 0.5, 1.5, 2.0]
grid = np.linspace(0.05, 2.2, 300)
grid = grid[np.abs(grid * d - d) > 1.5]
for ax, theta in zip(axes[1], (np.pi / 8, np.pi / 3)):
    risks = {"scratch": [], "linear": [], "finetune": []}
    for gamma in sim_gammas:
        per_rep = {mode: [] for mode in risks}
        for rep in range(reps):
            task = make_teacher_tasks(d, theta, sigma, int(gamma * d), random_state=rep)
            net = DeepLinearRegressor(random_state=rep)
            source = FrozenEstimator(DeepLinearRegressor(random_state=rep)
                                     .fit_population(task.beta_source))
            for mode in risks:
                model = TransferRegressor(net if mode == "scratch" else source, mode=mode)
                model.fit(task.X, task.y)
                per_rep[mode].append(model.estimator_.risk(task.beta_target))
        for mode in risks:
            risks[mode].append(np.mean(per_rep[mode]))
    curves = {"scratch": scratch_risk(grid, sigma, d=d),
              "linear": linear_transfer_risk(grid, theta, sigma, d=d),
              "finetune": finetune_risk(grid, theta, sigma, d=d)}
    styles = (("tab:gray", "-"), ("tab:blue", "-"), ("tab:green", "--"))
    for (mode, curve), (color, style) in zip(curves.items(), styles):
        ax.plot(grid, curve, style, color=color, label=f"{mode} (theory)")
        ax.plot(sim_gammas, risks[mode], "o", color=color)
    ax.set_ylim(0, 1.5)
    ax.set_xlabel("gamma = n / d")
    ax.set_ylabel("risk ||beta_hat - beta_t||^2")
    ax.set_title(f"theta = {np.rad2deg(theta):.1f} deg, d = {d} (dots: trained networks)")
    ax.legend(fontsize=8)
fig.tight_layout()
fig.savefig("plot_deep_linear_transfer.png", dpi=110)
