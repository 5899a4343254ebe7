"""Common-check settings for the sketch family."""

INIT_PARAMS = {
    "RobustCardinalitySketch": {"k": 8, "random_state": 0},
}

EXTRA_INSTANCES = {
    "RobustCardinalitySketch": [{"mode": "standard"}, {"mode": "basic", "epsilon": 1.0}],
}

EXPECTED_FAILED_CHECKS = {}
