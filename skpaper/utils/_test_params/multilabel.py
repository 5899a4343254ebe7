"""Small settings and expected check failures for `skpaper.multilabel`."""

INIT_PARAMS = {
    # A moderate penalty keeps the scores away from the saturation of the
    # sigmoid, where predict_proba ties that decision_function breaks.
    "SmoothMultiLabelClassifier": {"alpha": 1e-2, "random_state": 0},
}

EXTRA_INSTANCES = {
    "SmoothMultiLabelClassifier": [
        {"objective": "subset", "loss": "squared_hinge", "constraint": "frobenius"},
        {"objective": "ranking", "loss": "huberized_hinge", "solver": "gd", "max_iter": 200},
    ],
}

EXPECTED_FAILED_CHECKS = {
    "SmoothMultiLabelClassifier": {
        "check_supervised_y_2d": (
            "a 2-D target with one column is rejected on purpose: a multi-label "
            "indicator needs at least two label columns, and a 1-D y is the way to "
            "pass a single label"
        ),
        "check_sample_weight_equivalence_on_dense_data": (
            "the check passes the target as fit(y=...), and the multi-label target is "
            "named Y; tests/multilabel/test_classifier.py checks weights against "
            "repeated rows for every objective instead"
        ),
        "check_sample_weight_equivalence_on_sparse_data": (
            "the check passes the target as fit(y=...), and the multi-label target is "
            "named Y; tests/multilabel/test_classifier.py checks weights against "
            "repeated rows for every objective instead"
        ),
    },
}
