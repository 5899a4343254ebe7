"""Common-check settings for :mod:`skpaper.nn`."""

INIT_PARAMS = {
    "MLPClassifier": {"hidden_layer_sizes": (16,), "max_epochs": 60, "lr": 1e-2,
                      "random_state": 0, "device": "cpu"},
    "MLPRegressor": {"hidden_layer_sizes": (16,), "max_epochs": 60, "lr": 1e-2,
                     "random_state": 0, "device": "cpu"},
}

EXPECTED_FAILED_CHECKS = {}
