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

EXPECTED_FAILED_CHECKS = {
    "NormMLPClassifier": {
        "check_sample_weight_equivalence_on_dense_data": (
            "sample_weight is inherited from skpaper.nn.MLPClassifier: trained in float32, "
            "weights and repeated rows agree to about 1e-7 absolute, not rtol=1e-7; with "
            "norm='batch' the BatchNorm statistics of a batch are unweighted, so the "
            "weights equal repeated rows in the loss only"
        ),
    },
}
