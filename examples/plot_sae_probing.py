"""
==========================================================
Sparse-autoencoder probes against logistic regression
==========================================================

Kantamneni, Engels et al. (ICML 2025) asked whether probes on the latents of a sparse
autoencoder (SAE) beat plain probes on the activations when data are scarce, labels
noisy, classes imbalanced or the test distribution shifted. Here the "activations" are
synthetic: sparse sums of unit atoms in superposition, with atom 0 the concept to detect.
A TopK SAE is trained on an unlabeled pool where the concept is rare, then two probes
are compared as the number of labeled samples grows: the paper's L2 logistic regression
on the activations, and SAE probes that keep the ``k = 1`` or ``16`` latents whose class
means differ most (L1 logistic regression, ``C`` chosen by validation AUC, latents
reselected in every fold).

With clean labels the single-latent probe wins only with a handful of samples and then
plateaus at the fidelity of its latent, while logistic regression keeps improving. With
30 % of the training labels flipped the window where the SAE probe wins widens, but it
closes again with enough data. Each point is one draw, so the curves are noisy.
"""

import os

TINY = os.environ.get("SKPAPER_EXAMPLE_SIZE") == "tiny"  # seconds-long run, for the tests

# %%
# Train the dictionary on an unlabeled pool.
import warnings

import matplotlib.pyplot as plt
from sklearn.exceptions import ConvergenceWarning
from sklearn.frozen import FrozenEstimator
from sklearn.metrics import roc_auc_score

from skpaper.datasets import make_superposition_activations
from skpaper.representation import (
    SAEProbeClassifier,
    SparseAutoencoder,
    flip_labels,
    paper_baselines,
    scarcity_split,
)

warnings.filterwarnings("ignore", category=ConvergenceWarning)
pool = make_superposition_activations(n_samples=1000 if TINY else 12000, concept_rate=0.05,
                                      random_state=0)
sae = SparseAutoencoder(arch="topk", n_latents=64 if TINY else 512, k=8,
                        max_epochs=1 if TINY else 6, lr=3e-3, random_state=0).fit(pool.X)
print(f"SAE fraction of variance unexplained: {-sae.score(pool.X):.3f}")

# %%
# Test AUC against the number of labeled samples, with clean and noisy labels.
task = make_superposition_activations(n_samples=1200 if TINY else 4000, concept_rate=0.5,
                                      atoms=pool.atoms,
                                      random_state=1)
ns = [8] if TINY else [4, 16, 64, 256, 1024]
curves = {}
for frac in (0.0, 0.3):
    for name in ("logistic regression", "SAE probe (k=1)", "SAE probe (k=16)"):
        curves[frac, name] = []
    for n in ns:
        train, test = scarcity_split(task.y, n, n_test=1000, random_state=n)
        y_train = flip_labels(task.y[train], frac, random_state=n)
        probes = {
            "logistic regression": paper_baselines(random_state=0, include=["logreg"])["logreg"],
            "SAE probe (k=1)": SAEProbeClassifier(FrozenEstimator(sae), k=1, random_state=0),
            "SAE probe (k=16)": SAEProbeClassifier(FrozenEstimator(sae), k=16, random_state=0),
        }
        for name, probe in probes.items():
            probe.fit(task.X[train], y_train)
            auc = roc_auc_score(task.y[test], probe.decision_function(task.X[test]))
            curves[frac, name].append(auc)

fig, axes = plt.subplots(1, 2, figsize=(10, 4), sharey=True)
for ax, frac in zip(axes, (0.0, 0.3)):
    for name, style in (("logistic regression", "k-"), ("SAE probe (k=1)", "C1o-"),
                        ("SAE probe (k=16)", "C2s-")):
        ax.plot(ns, curves[frac, name], style, label=name)
    ax.set_xscale("log", base=2)
    ax.set_xlabel("labeled training samples")
    ax.set_title(f"{int(frac * 100)} % of training labels flipped")
axes[0].set_ylabel("test AUC (clean labels)")
axes[0].legend()
fig.tight_layout()
fig.savefig("plot_sae_probing.png", dpi=110)
