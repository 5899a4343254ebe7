"""The TeDS claims compare models at equal parameter count; their smoke runs are in test_papers."""

import numpy as np
import pytest

from skpaper.papers import teds


@pytest.mark.parametrize("scale", ["smoke", "quick", "full"])
def test_arms_are_matched_on_parameter_count(scale):
    _, _, reference = teds._arm_config("TNTComplEx", scale)
    for arm in ("ComplEx", "TeAST", "TeDS", "TeDS synchronic only"):
        _, overrides, n_params = teds._arm_config(arm, scale)
        # one rank step is ~10% of the parameters at smoke size, ~4% from quick on
        tolerance = 0.12 if scale == "smoke" else 0.05
        assert abs(n_params - reference) / reference < tolerance, (arm, n_params, reference)
    # at equal rank TeDS holds about twice the reals per embedding
    _, overrides, n_equal_rank = teds._arm_config("TeDS equal rank", scale)
    assert overrides["rank"] == teds._SCALES[scale]["model"]["rank"]
    assert n_equal_rank > 1.5 * reference


def test_parameter_count_matches_a_fitted_model():
    from skpaper.datasets import make_synthetic_tkg

    cfg = teds._SCALES["smoke"]
    X = make_synthetic_tkg(**cfg["data"], random_state=0)
    name, overrides, n_params = teds._arm_config("TeDS", "smoke")
    est = teds._estimator(name, "smoke", 0, **{**overrides, "max_epochs": 1}).fit(X)
    assert sum(p.numel() for p in est.module_.parameters()) == n_params


def test_shuffled_time_changes_only_timestamps():
    test = np.array([[0, 1, 2, 3], [4, 0, 1, 5], [2, 2, 0, 0]] * 20)
    shuffled = teds._shuffle_time(test, 16, seed=0)
    assert np.array_equal(shuffled[:, :3], test[:, :3])
    assert shuffled[:, 3].max() < 16 and not np.array_equal(shuffled[:, 3], test[:, 3])
