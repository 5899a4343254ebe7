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


def test_claims_declare_their_status_and_effect_of_interest():
    from skpaper.papers import get_claims

    claims = {c.claim_id: c for c in get_claims("teds")}
    assert claims["diachronic-unseen-timestamps"].reported
    for name in ("time-aware-beats-static", "teds-beats-best-prior"):
        assert claims[name].control and claims[name].effect_of_interest.value == 0.01


def test_smoke_comparators(tmp_path):
    """time-aware-beats-static takes the seedwise weakest model; teds-beats-best-prior bounds
    TeDS against each prior model on the same seeds (no seedwise maximum)."""
    import json

    from skpaper.papers import STATUSES, get_claims, run_claim

    claims = {c.claim_id: c for c in get_claims("teds")}
    result = run_claim(claims["time-aware-beats-static"], "smoke", 0, tmp_path)
    assert result.error is None, result.error
    assert result.status in STATUSES and result.status != "error"
    payload = json.loads((tmp_path / "teds" / "time-aware-beats-static.json").read_text())
    assert payload["effect_of_interest"]["value"] == 0.01
    assert {"n_seeds", "sd", "seeds_needed"} <= set(payload["power"])
    seeds = result.observed["seeds"]
    expected = [min(teds._fit("smoke", s, "fact", m)[0] for m in ("TNTComplEx", "TeAST", "TeDS"))
                for s in seeds]
    np.testing.assert_allclose(result.observed["per_seed"]["weakest time-aware model"], expected)

    result = run_claim(claims["teds-beats-best-prior"], "smoke", 0, tmp_path)
    assert result.error is None, result.error
    assert result.status in STATUSES and result.status != "error"
    by_setting = result.observed["by_setting"]
    assert set(by_setting) == {f"vs {m}" for m in teds._PRIOR}
    for prior in teds._PRIOR:
        setting = by_setting[f"vs {prior}"]
        for arm in ("TeDS", prior, "TeDS synchronic only"):
            np.testing.assert_allclose(setting["per_seed"][arm],
                                       [teds._fit("smoke", s, "fact", arm)[0]
                                        for s in setting["seeds"]])
        gains = np.subtract(setting["per_seed"]["TeDS"], setting["per_seed"][prior])
        np.testing.assert_allclose(setting["check"]["mean"], gains.mean())
