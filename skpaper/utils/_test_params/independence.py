"""Small settings and expected check failures for `skpaper.independence`."""

from ...independence import DiscretizedCITest

INIT_PARAMS = {}

EXTRA_INSTANCES = {
    "DiscretizedCITest": [
        {"method": "binarize"},
        {"method": "fisherz"},
        {"method": "gmm", "weighting": "optimal", "discrete_columns": "none"},
        {"method": "gmm", "fallback": "raise", "max_abs_corr": 0.999},
    ],
    "PC": [
        {"ci_test": DiscretizedCITest(method="binarize"), "max_cond_size": 1, "n_jobs": 2},
    ],
}

EXPECTED_FAILED_CHECKS = {}
