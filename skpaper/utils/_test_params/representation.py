"""Common-check settings for :mod:`skpaper.representation`."""

from sklearn.linear_model import LogisticRegression

from skpaper.representation import (
    DeepLinearRegressor,
    SparseAutoencoder,
    TwoLayerReLURegressor,
)

_TINY_SAE = dict(n_latents=16, k=4, max_epochs=3, batch_size=64, random_state=0,
                 inference_dtype="float64")

INIT_PARAMS = {
    "DeepLinearRegressor": {"init_scale": 1e-3, "max_iter": 2000, "tol": 1e-6,
                            "random_state": 0},
    "TwoLayerReLURegressor": {"n_hidden": 16, "max_iter": 300, "random_state": 0},
    # Scratch training needs no pretrained source, so it runs on data of any width; the
    # transfer modes (which need a source of matching width) are tested in
    # tests/representation.
    "TransferRegressor": {
        "source": DeepLinearRegressor(init_scale=1e-3, max_iter=2000, tol=1e-6,
                                      random_state=0),
        "mode": "scratch",
    },
    "SparseAutoencoder": dict(_TINY_SAE),
    "SAEProbeClassifier": {"sae": SparseAutoencoder(**_TINY_SAE), "k": 4, "Cs": 2, "cv": 3,
                           "random_state": 0},
    "ProbeSearchCV": {"estimator": LogisticRegression(), "param_grid": {"C": [0.1, 1.0]},
                      "cv": 3},
    "QuiverOfArrows": {"estimators": {"lr": LogisticRegression(),
                                      "lr_weak": LogisticRegression(C=0.01)}},
    "LatentSelector": {"k": 2},
}

EXTRA_INSTANCES = {
    "DeepLinearRegressor": [{"n_layers": 3, "init_scale": 0.1}],
    "TransferRegressor": [
        {"source": TwoLayerReLURegressor(n_hidden=16, max_iter=300, random_state=0)},
    ],
    "SparseAutoencoder": [{"arch": "relu"}, {"arch": "jumprelu"}],
}

EXPECTED_FAILED_CHECKS = {
    "SAEProbeClassifier": {
        "check_sample_weight_equivalence_on_dense_data": (
            "the sparse autoencoder trained inside fit is learnt without the weights (they "
            "weight the probe); with a frozen SAE the check passes, tested in "
            "tests/representation/test_probing.py"),
    },
}

# -- microscopy MAE framework (Kenyon-Dean et al., ICML 2025) ---------------------------------
from skpaper.representation import MicroscopyMAE as _MicroscopyMAE  # noqa: E402

_TINY_MAE = dict(patch_size=2, embed_dim=8, depth=2, n_heads=2, decoder_dim=8,
                 decoder_heads=2, max_epochs=2, batch_size=32, random_state=0, device="cpu")

INIT_PARAMS.update({
    "MicroscopyMAE": dict(_TINY_MAE),
    "BlockSearchProbe": {"encoder": _MicroscopyMAE(**_TINY_MAE), "cv": 2},
    "TypicalVariationNormalizer": {},
    "PerturbationConsistencyFilter": {"n_permutations": 50, "random_state": 0},
})

EXTRA_INSTANCES.update({
    "MicroscopyMAE": [{"channel_agnostic": True, "residual": "rw+lr", "block_type": "parallel",
                       "laurel_rank": 2}],
    "TypicalVariationNormalizer": [{"whiten": False}, {"coral": True}],
})
