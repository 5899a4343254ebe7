"""Microscopy MAE framework (Kenyon-Dean et al. 2025) against the references at hand.

- TVN (:class:`TypicalVariationNormalizer`) against the same recipe assembled from
  scikit-learn pieces (``PCA(whiten=True)`` on the pooled controls, then a
  ``StandardScaler`` fitted on each plate's controls), the spherize-then-standardise recipe
  of pycytominer: time and replicate consistency (KS) of both outputs. pycytominer itself
  is not a dependency; its ``spherize`` is ZCA/PCA whitening of the controls.
- Intermediate-block search with cached features (one forward pass for all blocks) against
  the naive search that re-encodes the data once per block: time, same scores.
- Our ViT encoder blocks against :class:`torch.nn.TransformerEncoder` of the same width,
  depth, heads and pre-norm layout: forward throughput on the same tokens.

Run: ``python benchmarks/bench_microscopy.py [--quick] [--json out.json]``.
"""

import numpy as np
import torch
from _harness import Case, main_cli
from sklearn.decomposition import PCA
from sklearn.frozen import FrozenEstimator
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import cross_val_score
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from skpaper.datasets import make_plate_embeddings, make_synthetic_cell_plates
from skpaper.representation import (
    BlockSearchProbe,
    MicroscopyMAE,
    TypicalVariationNormalizer,
    VisionTransformer,
    replicate_consistency_ks,
)


def _tvn_cases(quick):
    d = make_plate_embeddings(n_perturbations=100 if quick else 400, n_features=64,
                              n_controls=40 if quick else 100, random_state=0)
    wells = ~d.is_control

    def ks(Z):
        return replicate_consistency_ks(Z[wells], d.perturbation[wells], batches=d.plate[wells],
                                        random_state=0)

    def ours():
        Z = TypicalVariationNormalizer().fit_transform(d.X, batches=d.plate,
                                                       is_control=d.is_control)
        return {"ks": ks(Z)}

    def peer():
        pca = PCA(whiten=True).fit(d.X[d.is_control])
        Z = pca.transform(d.X)
        out = np.empty_like(Z)
        for b in np.unique(d.plate):
            rows = d.plate == b
            scaler = StandardScaler().fit(Z[rows & d.is_control])
            out[rows] = scaler.transform(Z[rows])
        return {"ks": ks(out)}

    return [Case(f"TVN fit+transform ({len(d.X)} wells)", ours=ours, peer=peer,
                 peer_name="sklearn PCA+scaler", items=len(d.X))]


def _block_search_cases(quick):
    d = make_synthetic_cell_plates(n_perturbations=20 if quick else 40, n_sites=2,
                                   random_state=0)
    rows = ~d.is_control & d.has_phenotype[np.maximum(d.perturbation, 0)]
    X, y = d.X[rows], d.pathway[d.perturbation[rows]]
    mae = MicroscopyMAE(image_shape=d.image_shape, embed_dim=32, depth=6, n_heads=2,
                        decoder_dim=16, decoder_heads=2, max_epochs=2, layer_scale=None,
                        random_state=0, device="cpu", inference_dtype="float32").fit(d.X)

    def ours():
        search = BlockSearchProbe(FrozenEstimator(mae), cv=3).fit(X, y)
        return {"best_block": search.best_block_, "best_score": search.best_score_}

    def peer():
        probe = make_pipeline(StandardScaler(), LogisticRegression(max_iter=1000))
        scores = [cross_val_score(probe, mae.transform(X, block=b), y, cv=3,
                                  scoring="balanced_accuracy").mean()
                  for b in range(1, mae.depth + 1)]
        return {"best_block": int(np.argmax(scores)) + 1, "best_score": float(max(scores))}

    return [Case(f"block search, 6 blocks ({len(X)} images)", ours=ours, peer=peer,
                 peer_name="re-encode/block", items=len(X))]


def _vit_cases(quick):
    torch.set_num_threads(1)
    dim, depth, heads = 64, 6, 4
    batch = 64 if quick else 256
    vit = VisionTransformer(5, 4, (8, 8), embed_dim=dim, depth=depth, n_heads=heads,
                            layer_scale=None, qk_norm=False).eval()
    layer = torch.nn.TransformerEncoderLayer(dim, heads, 4 * dim, dropout=0.0,
                                             activation="gelu", batch_first=True,
                                             norm_first=True)
    ref = torch.nn.TransformerEncoder(layer, depth, enable_nested_tensor=False).eval()
    tokens = torch.randn(batch, 65, dim, generator=torch.Generator().manual_seed(0))

    @torch.no_grad()
    def ours():
        x = tokens
        for block in vit.blocks:
            x = block(x)
        return None

    @torch.no_grad()
    def peer():
        ref(tokens)

    return [Case(f"ViT blocks forward ({batch}x65 tokens, D={dim})", ours=ours, peer=peer,
                 peer_name="nn.Transformer", items=batch)]


def cases(quick):
    return _tvn_cases(quick) + _block_search_cases(quick) + _vit_cases(quick)


if __name__ == "__main__":
    main_cli(cases, description=__doc__.splitlines()[0])
