"""
============================================================
A microscopy foundation model in three steps, on CPU
============================================================

Kenyon-Dean et al. (ICML 2025) build a cell-microscopy foundation model in three steps:
curate a self-consistent training set, pretrain a masked-autoencoder ViT on it, and search
the encoder's blocks with linear probes for the best representation, which is then used
after batch correction with typical variation normalisation (TVN) fitted on controls.

Here every step runs on synthetic five-channel "cell painting" plates with known
perturbation effects and plate effects: the top row shows one image per channel, the
bottom row the per-block probe curve of a tiny MAE and the replicate consistency of its
features before and after TVN. At this size (a 4-block MAE trained for ten epochs on a few
hundred images) the curve is flat and noisy and TVN need not help; the paper's effects
come from billion-parameter models and whole-genome screens.
"""

import os

TINY = os.environ.get("SKPAPER_EXAMPLE_SIZE") == "tiny"  # seconds-long run, for the tests

# %%
# Synthetic plates: perturbations, controls and plate effects.
import matplotlib.pyplot as plt
import numpy as np
from sklearn.frozen import FrozenEstimator

from skpaper.datasets import make_synthetic_cell_plates
from skpaper.representation import (
    BlockSearchProbe,
    MicroscopyMAE,
    PerturbationConsistencyFilter,
    TypicalVariationNormalizer,
    replicate_consistency_ks,
)

plates = make_synthetic_cell_plates(n_perturbations=30, n_sites=2, random_state=0)
print(f"{len(plates.X)} images of shape {plates.image_shape}, {plates.plate.max() + 1} plates")

# %%
# Pretrain a tiny MAE (75% of the patches masked, Fourier-augmented loss).
mae = MicroscopyMAE(image_shape=plates.image_shape, patch_size=4, embed_dim=32, depth=4,
                    n_heads=2, decoder_dim=32, decoder_heads=2, layer_scale=None,
                    max_epochs=1 if TINY else 10, lr=2e-3, batch_size=64, random_state=0,
                    inference_dtype="float32").fit(plates.X)
print("reconstruction loss per epoch:",
      [round(float(h["reconstruction_loss"]), 3) for h in mae.history_])

# %%
# Block search on a proxy task: the pathway of perturbations with a phenotype.
rows = ~plates.is_control & plates.has_phenotype[np.maximum(plates.perturbation, 0)]
labels = plates.pathway[plates.perturbation[rows]]
search = BlockSearchProbe(FrozenEstimator(mae), cv=3).fit(plates.X[rows], labels)
print("block scores:", np.round(search.block_scores_, 3), "best block:", search.best_block_)

# %%
# Batch correction of the trimmed encoder's features, fitted on the controls only.
features = search.transform(plates.X)
tvn = TypicalVariationNormalizer(n_components=16)
corrected = tvn.fit_transform(features, batches=plates.plate, is_control=plates.is_control)
wells = ~plates.is_control
ks_raw = replicate_consistency_ks(features[wells], plates.perturbation[wells],
                                  batches=plates.plate[wells])
ks_tvn = replicate_consistency_ks(corrected[wells], plates.perturbation[wells],
                                  batches=plates.plate[wells])
print(f"replicate consistency (KS): raw {ks_raw:.3f}, TVN {ks_tvn:.3f}")

# %%
# Curation: which perturbations have consistent replicates after TVN?
filt = PerturbationConsistencyFilter(n_permutations=20 if TINY else 500, alpha=0.05,
                                     random_state=0)
filt.fit(corrected[wells], plates.perturbation[wells])
truth = plates.has_phenotype[filt.perturbations_]
print(f"kept {filt.consistent_.sum()} perturbations; "
      f"{truth[filt.consistent_].mean() if filt.consistent_.any() else 0:.0%} have a phenotype")

# %%
# Figure.
fig = plt.figure(figsize=(10, 5.2))
grid = fig.add_gridspec(2, 10)
for c, name in enumerate(plates.channels):
    ax = fig.add_subplot(grid[0, 2 * c : 2 * c + 2])
    ax.imshow(plates.images[0, c], cmap="magma")
    ax.set_title(name, fontsize=9)
    ax.axis("off")
ax = fig.add_subplot(grid[1, :5])
ax.plot(np.arange(1, mae.depth + 1), search.block_scores_, "o-")
ax.axhline(1 / np.unique(labels).size, color="gray", ls=":", label="chance")
ax.axvline(search.best_block_, color="tab:green", ls="--", label="chosen block")
ax.set_xlabel("encoder block")
ax.set_ylabel("probe balanced accuracy")
ax.legend(fontsize=8)
ax = fig.add_subplot(grid[1, 5:])
ax.bar(["raw", "TVN"], [ks_raw, ks_tvn], color=["gray", "tab:green"])
ax.set_ylabel("replicate consistency (KS)")
fig.tight_layout()
fig.savefig("plot_microscopy_mae.png", dpi=110)
