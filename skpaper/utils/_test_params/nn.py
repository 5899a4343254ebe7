"""Common-check settings for :mod:`skpaper.nn`."""

INIT_PARAMS = {
    "MLPClassifier": {"hidden_layer_sizes": (16,), "max_epochs": 60, "lr": 1e-2,
                      "random_state": 0, "device": "cpu"},
    "MLPRegressor": {"hidden_layer_sizes": (16,), "max_epochs": 60, "lr": 1e-2,
                     "random_state": 0, "device": "cpu"},
    "LaurelMLPClassifier": {"n_blocks": 1, "width": 16, "rank": 4, "max_epochs": 15,
                            "lr": 1e-2, "random_state": 0, "device": "cpu"},
    "LaurelMLPRegressor": {"n_blocks": 1, "width": 16, "rank": 4, "max_epochs": 15,
                           "lr": 1e-2, "random_state": 0, "device": "cpu"},
    "LaurelConvNetClassifier": {"n_blocks": 2, "width": 4, "rank": 2, "max_epochs": 10,
                                "lr": 1e-2, "random_state": 0, "device": "cpu"},
}

_FLOAT32_WEIGHTS = (
    "trained in float32: weights of 2 and repeated rows give the same full-batch loss and "
    "gradients, but summed in another order, so the predictions agree to about 1e-7 "
    "absolute, not to the check's rtol=1e-7; tests/nn/test_mlp.py checks the equivalence "
    "at a float32 tolerance"
)

EXPECTED_FAILED_CHECKS = {
    "MLPClassifier": {"check_sample_weight_equivalence_on_dense_data": _FLOAT32_WEIGHTS},
}
