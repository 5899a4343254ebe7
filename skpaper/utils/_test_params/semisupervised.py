"""Common-check settings for `skpaper.semisupervised`.

scikit-learn's checks never pass unlabeled rows (NaN targets), and the
unlabeled population is empty without them, so the checks run the estimators
on the combined population, where a fully labeled sample is a valid input.
"""

INIT_PARAMS = {
    "ACPShiftEstimator": {"population": "combined", "n_folds": 2, "random_state": 0},
    "WeightedPPIEstimator": {"population": "combined"},
}

EXTRA_INSTANCES = {
    "ACPShiftEstimator": [{"target": "ols"}],
    "LabeledOnlyEstimator": [{"target": "ols"}],
    "WeightedPPIEstimator": [{"target": "ols", "lam": 1.0}],
}

EXPECTED_FAILED_CHECKS = {}
