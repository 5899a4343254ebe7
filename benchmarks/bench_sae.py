"""Sparse autoencoders and SAE probing (Kantamneni, Engels et al. 2025) against sklearn peers.

sae-lens and dictionary-learning (the paper's SAE tooling) need the Hugging Face hub and
a transformer stack, so the peers are the scikit-learn estimators a user would reach for:

- Dictionary: our TopK SAE (torch, ``k`` active latents) against
  :class:`sklearn.decomposition.MiniBatchDictionaryLearning` with OMP codes of the same
  ``k`` non-zeros and the same dictionary size: fit time, FVU on held-out data, and how
  well the dictionary recovers the ground-truth atoms (mean best cosine).
- Probe search: :class:`~skpaper.representation.ProbeSearchCV` with the paper's folds
  against :class:`sklearn.model_selection.GridSearchCV` on the same folds and ``C`` grid:
  time and the chosen ``C`` / validation AUC (which must agree).
- Fold AUC: the rank-based AUC of the probe searches against
  :func:`sklearn.metrics.roc_auc_score` on one validation fold: time and the AUC (equal).
- SAE probe: :class:`~skpaper.representation.SAEProbeClassifier` (k=16, L1) against the
  paper's L2 logistic-regression baseline on raw activations: time and test AUC.

Run: ``python benchmarks/bench_sae.py [--quick] [--json out.json]``.
"""

import warnings

import numpy as np
from _harness import Case, main_cli
from sklearn.decomposition import MiniBatchDictionaryLearning
from sklearn.exceptions import ConvergenceWarning
from sklearn.frozen import FrozenEstimator
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import roc_auc_score
from sklearn.model_selection import GridSearchCV

from skpaper.datasets import make_superposition_activations
from skpaper.representation import (
    PaperCV,
    ProbeSearchCV,
    SAEProbeClassifier,
    SparseAutoencoder,
    paper_baselines,
    scarcity_split,
)
from skpaper.utils._metrics import binary_roc_auc


def _fvu(X, X_hat):
    return float(np.sum((X - X_hat) ** 2) / np.sum((X - X.mean(axis=0)) ** 2))


def _atom_recovery(components, atoms):
    D = components / np.linalg.norm(components, axis=1, keepdims=True).clip(1e-12)
    return float(np.mean(np.max(np.abs(atoms @ D.T), axis=1)))


def make_cases(quick):
    import torch

    torch.set_num_threads(1)
    warnings.filterwarnings("ignore", category=ConvergenceWarning)
    n_pool = 4000 if quick else 20000
    n_latents, k = (256, 4) if quick else (512, 8)
    pool = make_superposition_activations(n_pool, random_state=0)
    held = make_superposition_activations(2000, atoms=pool.atoms, random_state=1)
    epochs = 5 if quick else 8

    def ours_sae():
        sae = SparseAutoencoder(n_latents=n_latents, k=k, max_epochs=epochs, lr=3e-3,
                                random_state=0, device="cpu").fit(pool.X)
        return {"heldout_fvu": -sae.score(held.X),
                "atom_recovery": _atom_recovery(sae.components_, pool.atoms)}

    def peer_dictionary_learning():
        dl = MiniBatchDictionaryLearning(n_components=n_latents, batch_size=256,
                                         max_iter=epochs, transform_algorithm="omp",
                                         transform_n_nonzero_coefs=k, random_state=0)
        dl.fit(pool.X)
        codes = dl.transform(held.X)
        return {"heldout_fvu": _fvu(held.X, codes @ dl.components_),
                "atom_recovery": _atom_recovery(dl.components_, pool.atoms)}

    task = make_superposition_activations(3000, concept_rate=0.5, atoms=pool.atoms,
                                          random_state=2)
    n_train = 96 if quick else 512
    train, test = scarcity_split(task.y, n_train, n_test=1000, random_state=0)
    Xtr, ytr, Xte, yte = task.X[train], task.y[train], task.X[test], task.y[test]
    grid = {"C": list(np.logspace(5, -5, 10))}

    def ours_search():
        s = ProbeSearchCV(LogisticRegression(max_iter=1000), grid).fit(Xtr, ytr)
        return {"C": s.best_params_["C"], "val_auc": s.best_score_}

    def peer_grid_search():
        folds = list(PaperCV().split(Xtr, ytr))
        s = GridSearchCV(LogisticRegression(max_iter=1000), grid, cv=folds,
                         scoring="roc_auc").fit(Xtr, ytr)
        return {"C": s.best_params_["C"], "val_auc": s.best_score_}

    sae = SparseAutoencoder(n_latents=n_latents, k=k, max_epochs=epochs, lr=3e-3,
                            random_state=0, device="cpu").fit(pool.X)

    def ours_sae_probe():
        probe = SAEProbeClassifier(FrozenEstimator(sae), k=16, random_state=0).fit(Xtr, ytr)
        return {"test_auc": float(roc_auc_score(yte, probe.decision_function(Xte)))}

    def peer_logreg():
        lr = paper_baselines(random_state=0, include=["logreg"])["logreg"].fit(Xtr, ytr)
        return {"test_auc": float(roc_auc_score(yte, lr.decision_function(Xte)))}

    # The fold AUC of the probe searches: 200 validation scores, called once per fold and
    # candidate (about 1,400 times per repeat of the sae-probing claims).
    rng = np.random.default_rng(3)
    y_val, s_val = rng.integers(0, 2, 200), np.round(rng.normal(size=200), 2)
    n_auc = 200

    def ours_auc():
        return {"auc": [binary_roc_auc(y_val, s_val) for _ in range(n_auc)][-1]}

    def peer_auc():
        return {"auc": [float(roc_auc_score(y_val, s_val)) for _ in range(n_auc)][-1]}

    params = {"n_pool": n_pool, "n_latents": n_latents, "k": k, "n_train": n_train}
    return [
        Case("fold ROC AUC (200 scores, ties)", ours_auc, peer_auc,
             peer_name="roc_auc_score", items=n_auc, params={"n_val": 200}),
        Case(f"TopK SAE fit ({n_pool}x64, m={n_latents})", ours_sae, peer_dictionary_learning,
             peer_name="sklearn MBDL+OMP", items=n_pool * epochs, params=params),
        Case(f"C search, paper folds (n={n_train})", ours_search, peer_grid_search,
             peer_name="GridSearchCV", params=params),
        Case(f"SAE probe k=16 vs LR (n={n_train})", ours_sae_probe, peer_logreg,
             peer_name="paper LR", params=params),
    ]


if __name__ == "__main__":
    main_cli(make_cases, __doc__.splitlines()[0])
