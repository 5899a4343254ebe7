"""Common-check settings for :mod:`skpaper.representation`."""

from skpaper.representation import DeepLinearRegressor, TwoLayerReLURegressor

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
}

EXTRA_INSTANCES = {
    "DeepLinearRegressor": [{"n_layers": 3, "init_scale": 0.1}],
    "TransferRegressor": [
        {"source": TwoLayerReLURegressor(n_hidden=16, max_iter=300, random_state=0)},
    ],
}

EXPECTED_FAILED_CHECKS = {}
