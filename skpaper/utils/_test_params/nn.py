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

EXPECTED_FAILED_CHECKS = {}
