"""Small settings for the common checks of the bandit policies."""

INIT_PARAMS = {
    "CrossLearningExp3": {"random_state": 0},
    "Exp3IX": {"random_state": 0},
    "Exp3": {"random_state": 0},
}

EXTRA_INSTANCES = {
    "CrossLearningExp3": [{"estimation": "lagged"}, {"estimation": "paired"}],
    "Exp3IX": [{"per_context": False}],
}

EXPECTED_FAILED_CHECKS = {}
