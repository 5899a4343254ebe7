"""Common-check settings for :mod:`skpaper.adaptation`."""

from skpaper.adaptation import NormMLPClassifier


def _small_source(**params):
    return NormMLPClassifier(hidden_layer_sizes=(16,), max_epochs=40, lr=2e-2, device="cpu",
                             random_state=0, **params)


INIT_PARAMS = {
    "NormMLPClassifier": {"hidden_layer_sizes": (16,), "max_epochs": 40, "lr": 2e-2,
                          "device": "cpu", "random_state": 0},
    "TestTimeAdapter": {"estimator": _small_source(), "batch_size": 16, "window": 4,
                        "device": "cpu", "random_state": 0},
}

EXTRA_INSTANCES = {
    "NormMLPClassifier": [{"norm": "batch"}],
    "TestTimeAdapter": [
        {"estimator": _small_source(norm="batch"), "loss": "roid", "anchor": "cmf"},
        # estimator=None (the default source) is exercised in tests/adaptation.
        {"loss": "eata", "ssa": False, "kappa": 0.0},
    ],
}

EXPECTED_FAILED_CHECKS = {}
