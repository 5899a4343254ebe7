"""The motion-transfer claims at smoke scale: structure, fairness and internal consistency."""

import numpy as np
import pytest
import torch

from skpaper.papers import motion_transfer as paper
from skpaper.papers._registry import STATUSES, get_claims, run_claim
from skpaper.papers._stats import claim_seeds


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    out = tmp_path_factory.mktemp("motion")
    return {c.claim_id: run_claim(c, "smoke", 0, out) for c in get_claims(paper.SLUG)}, out


def test_motion_claims_are_registered_with_controls():
    claims = {c.claim_id: c for c in get_claims(paper.SLUG)}
    assert set(claims) == {"large-displacement-gain", "small-displacement-no-harm"}
    for claim in claims.values():
        assert claim.control and not claim.reported
        assert "reconstructed" in claim.paper_statement
        assert claim.effect_of_interest.source == "ours"


def _smoke_seeds():
    return tuple(claim_seeds(0, paper._CONFIG["smoke"]["looks"][-1]))


@pytest.mark.parametrize("claim, bin_name", [("large-displacement-gain", "large"),
                                             ("small-displacement-no-harm", "small")])
def test_motion_claims_report_every_arm_per_bin(results, claim, bin_name):
    res = results[0][claim]
    assert res.error is None and res.status in STATUSES and res.status != "error"
    obs = res.observed
    assert obs["method"] == "reconstructed from the abstract"
    n_seeds = obs["n_seeds"]
    assert n_seeds == paper._CONFIG["smoke"]["looks"][-1] == res.power["n_seeds"]
    counts = obs[f"n_pairs_{bin_name}_per_seed"]
    assert len(counts) == n_seeds and min(counts) > 0
    assert sum(obs[f"{bin_name}_selected_t"].values()) == sum(counts)
    for name in ("direct", "direct_best_of_3", "anytime", "anytime_model_direct",
                 "anytime_endpoints", "no_transfer", "real_driving"):
        assert np.isfinite(obs[f"{bin_name}_akd_{name}"])
        assert 0 <= obs[f"{bin_name}_mkr_{name}"] <= 1
    assert obs[f"{bin_name}_l1_real_driving"] == 0.0
    for picks in obs["best_of_3_picks_per_seed"]:
        assert len(picks) == 3 and sum(picks) > counts[0]  # picks count every pair
    for artifact in res.artifacts:
        assert (results[1] / paper.SLUG / artifact).exists()


def test_large_gain_is_paired_against_the_same_models_direct_path(results):
    obs = results[0]["large-displacement-gain"].observed
    res = results[0]["large-displacement-gain"]
    for baseline in ("direct", "anytime_model_direct", "direct_best_of_3", "anytime_endpoints"):
        change = obs[f"large_akd_change_vs_{baseline}"]
        assert change["alternative"] == "less" and change["n"] == obs["n_seeds"]
        # the mean of the per-seed differences is the difference of the per-seed means
        assert change["mean"] == pytest.approx(change["method_mean"] - change["baseline_mean"])
        assert change["method_mean"] == pytest.approx(obs["large_akd_anytime"], abs=1e-3)
    # the decision: anytime minus the endpoint-only pipeline, per seed, on each bin
    judged = obs["large_akd_change_vs_anytime_endpoints"]["values"]
    assert obs["per_seed"]["large"] == pytest.approx(judged)
    assert obs["per_seed"]["small"] == pytest.approx(
        obs["small_akd_change_vs_anytime_endpoints"]["values"])
    # reported: both pipelines against the same model's direct path
    versus_direct = obs["large_akd_change_vs_anytime_model_direct"]["values"]
    endpoints = obs["large_akd_endpoints_change_vs_anytime_model_direct"]["values"]
    assert np.subtract(versus_direct, endpoints) == pytest.approx(judged)
    assert res.passed == (res.status == "reproduced")
    assert res.control.observed["check"]["n"] == obs["n_seeds"]


def test_small_no_harm_is_a_difference_with_a_source_to_itself_control(results):
    obs = results[0]["small-displacement-no-harm"].observed
    assert obs["check"]["alternative"] == "less"
    assert obs["check"]["margin"] == paper._SMALL_TOLERANCE
    assert obs["check"]["effect_of_interest"] == paper._SMALL_TOLERANCE
    assert obs["per_seed"]["anytime"] == pytest.approx(
        obs["small_akd_change_vs_anytime_model_direct"]["values"])
    assert len(obs["per_seed"]["anytime_to_source"]) == obs["n_seeds"]


def test_endpoint_control_keeps_the_pipeline_and_the_model():
    models, _ = paper._trained("smoke", 0, _smoke_seeds())
    model = next(iter(models.values()))["anytime"]
    ev = next(iter(paper._evaluation("smoke", 0, _smoke_seeds()).values()))
    times = model.interpolation_.copy()
    out = paper._endpoint_transfer(model, ev["source"], ev["driving"])
    assert np.array_equal(model.interpolation_, times)  # the fitted model is untouched
    assert out.shape == ev["source"].shape
    # the t = 1 candidate is the direct output; t = 0 regenerates the source
    ends = model.interpolate(ev["source"], ev["driving"], t=[0.0, 1.0])
    direct = model.transform(ev["source"], ev["driving"], path="direct")
    assert np.allclose(ends[:, 1], direct, atol=1e-5)
    # the control output is one of the two candidates chained to the driving frame
    assert not np.allclose(out, ev["outputs"]["anytime"])


def test_best_of_three_never_loses_to_its_members_on_its_own_score():
    models, _ = paper._trained("smoke", 0, _smoke_seeds())
    claim_seed = next(iter(models))
    ev = paper._evaluation("smoke", 0, _smoke_seeds())[claim_seed]
    driving = ev["driving"]
    best = paper._own_keypoint_error
    scores = np.stack([best(models[claim_seed][f"direct{k}"],
                            models[claim_seed][f"direct{k}"].transform(
                                ev["source"], driving, path="direct"), driving)
                       for k in range(3)], axis=1)
    picked = scores.argmin(axis=1)
    assert np.bincount(picked, minlength=3).tolist() == ev["best_of_3_pick"]


def test_calibration_setting_is_not_a_claim_setting():
    # looks and tolerance come from a configuration and seed key that no claim runs
    assert paper._CALIBRATION_SEED != 0 and paper._CALIBRATION_KEY
    calibration = paper._CONFIG["calibration"]
    quick = paper._CONFIG["quick"]
    assert (calibration["videos"], calibration["epochs"]) != (quick["videos"], quick["epochs"])


def test_motion_arms_share_pairs_and_steps():
    models, seconds = paper._trained("smoke", 0, _smoke_seeds())
    assert len(models) == paper._CONFIG["smoke"]["looks"][-1]
    for arms in models.values():
        n_direct = paper._CONFIG["smoke"]["n_direct"]
        assert set(arms) == {"anytime", *(f"direct{k}" for k in range(n_direct))}
        steps = {m.n_steps_ for m in arms.values()}
        assert len(steps) == 1
        # every model trains on both directions: the same pairs per step
        assert all(m.bidirectional for m in arms.values())
        assert arms["anytime"].interpolation is not None
        assert all(arms[f"direct{k}"].interpolation is None for k in range(n_direct))
        # the direct models differ only in their initial weights
        seeds = {arms[f"direct{k}"].random_state for k in range(n_direct)}
        assert len(seeds) == n_direct and arms["anytime"].random_state in seeds
    assert all(s > 0 for per in seconds.values() for s in per.values())


def test_recorded_upper_limit_is_the_one_sided_chi_square_limit():
    from skpaper.papers._stats import sd_upper_limit

    large = paper._CALIBRATION_FIGURES["large:anytime-anytime_endpoints"]
    assert sd_upper_limit(large["sd"], large["n"]) == pytest.approx(large["ucl90"], abs=1e-4)


def test_quick_looks_follow_from_the_calibration_figures():
    from skpaper.papers._stats import seeds_needed, spending_schedule

    looks = paper._CONFIG["quick"]["looks"]
    level = spending_schedule(looks)[-1]
    large = paper._CALIBRATION_FIGURES["large:anytime-anytime_endpoints"]
    assert large["n"] >= 8
    needed = seeds_needed(large["ucl90"], abs(paper._LARGE_EOI.value), alpha=level)
    assert needed <= looks[-1]
    # the last look is not padded beyond what the calibration asks for
    assert seeds_needed(large["ucl90"], abs(paper._LARGE_EOI.value), alpha=0.05) == looks[-1]
    small = paper._CALIBRATION_FIGURES["small:anytime-anytime_model_direct"]
    assert seeds_needed(small["ucl90"], paper._SMALL_TOLERANCE, alpha=level) <= looks[-1]
    # both controls sit far from their thresholds on the calibration setting
    control = paper._CALIBRATION_FIGURES["small:anytime-anytime_endpoints"]
    assert control["mean"] - 3 * control["sd"] > paper._LARGE_EOI.value
    to_source = paper._CALIBRATION_FIGURES["small:anytime_to_source-anytime_model_direct"]
    assert to_source["mean"] - 3 * to_source["sd"] > paper._SMALL_TOLERANCE


def test_quick_evaluates_as_many_held_out_pairs_as_the_calibration_measured():
    quick, calibration = paper._CONFIG["quick"], paper._CONFIG["calibration"]
    assert (quick["test_videos"], quick["pairs"]) == (96, 1600)
    assert (calibration["test_videos"], calibration["pairs"]) == (96, 1600)
    # about half the pairs are large ones at the smoke size too
    pairs = paper._data("smoke", 0)[2]
    assert 0 < pairs.large.sum() < len(pairs.large) <= paper._CONFIG["smoke"]["pairs"]


def test_only_the_first_seed_keeps_images(results):
    evs = paper._evaluation("smoke", 0, _smoke_seeds())
    first, *rest = evs.values()
    assert all(key in first for key in paper._IMAGES)
    for ev in rest:
        assert not any(key in ev for key in paper._IMAGES)
        assert {"metrics", "pairs", "t", "floor"} <= set(ev)


def test_models_are_the_same_trained_in_two_workers_or_in_turn(monkeypatch):
    # Under `skpaper reproduce --jobs 2` on two cores a worker's share is one core, and the
    # models train in turn in the claim's own process; the figures must not change.
    from skpaper.papers._environment import CORES_VARIABLE, available_cores

    monkeypatch.setitem(paper._CONFIG, "smoke", dict(paper._CONFIG["smoke"], n_jobs=2))
    seeds = _smoke_seeds()[:1]
    trained = {}
    for cores in ("2", "1"):
        monkeypatch.setenv(CORES_VARIABLE, cores)
        assert available_cores() == int(cores)
        paper._trained.cache_clear()
        trained[cores] = paper._trained("smoke", 0, seeds)[0][seeds[0]]
    paper._trained.cache_clear()
    assert set(trained["1"]) == set(trained["2"])
    for name, model in trained["1"].items():
        other = trained["2"][name].module_.state_dict()
        for key, value in model.module_.state_dict().items():
            assert torch.equal(value, other[key]), (name, key)


def test_available_cores_reads_the_worker_share_and_ignores_garbage(monkeypatch):
    from skpaper.papers._environment import CORES_VARIABLE, available_cores

    monkeypatch.setenv(CORES_VARIABLE, "0")
    assert available_cores() == 1
    monkeypatch.setenv(CORES_VARIABLE, "3")
    assert available_cores() == 3
    monkeypatch.setenv(CORES_VARIABLE, "many")
    assert available_cores() >= 1
    monkeypatch.delenv(CORES_VARIABLE)
    assert available_cores() >= 1
