"""Assertions on the smoke runs of the SSA paper's claims."""

import pytest

from skpaper.papers import STATUSES, get_claims, run_claim


@pytest.fixture(scope="module")
def claims():
    return {c.claim_id: c for c in get_claims("ssa-tta")}


def test_ssa_claims_are_registered(claims):
    assert set(claims) == {"ssa-on-beats-off", "ssa-beats-tent", "label-shift",
                           "lr-robustness", "step-vs-noise"}
    assert claims["lr-robustness"].reported and claims["step-vs-noise"].reported
    for name in ("ssa-on-beats-off", "ssa-beats-tent", "label-shift"):
        assert claims[name].control and claims[name].effect_of_interest.value == 0.005


def test_step_vs_noise_smoke_tracks_injected_noise(claims, tmp_path):
    result = run_claim(claims["step-vs-noise"], scale="smoke", seed=0, out_dir=tmp_path)
    assert result.error is None, result.error
    # alpha = sqrt(S / (eta^2 sigma^2)) and sigma grows with the injected std: slope -1
    assert result.observed["ramp_loglog_slope"] == pytest.approx(-1.0, abs=0.1)
    assert result.observed["ramp_spearman"] <= -0.99
    assert all(r <= -0.99 for r in result.observed["stream_spearman_step_vs_sigma2"])
    # with the filter off the step stays at 1
    assert result.observed["filter_off"]["ramp_loglog_slope"] == pytest.approx(0.0, abs=1e-12)
    assert result.status == "reported"


def test_ssa_beats_tent_smoke_pairs_every_arm(claims, tmp_path):
    result = run_claim(claims["ssa-beats-tent"], scale="smoke", seed=0, out_dir=tmp_path)
    assert result.error is None, result.error
    per_seed = result.observed["per_seed"]
    n = result.observed["n_seeds"]
    assert n >= 2
    for arm in ("SSA", "SSA off", "SSA's schedule, constant step", "SSA's steps, shuffled",
                "SSA's held-out mean step, constant", "SSA's mean step from the first batch",
                "no adaptation"):
        assert len(per_seed[arm]) == n
        assert all(0.0 <= a <= 1.0 for a in per_seed[arm])
    # the constant steps run at SSA's held-out mean step, below the base rate
    steps = result.observed["ssa_mean_step_calibration"]
    assert all(0.0 < s < result.observed["learning_rate"] for s in steps)
    assert result.status in STATUSES and result.status != "error"
    assert {"n_seeds", "sd", "seeds_needed"} <= set(result.power)
    assert set(result.arms) == set(per_seed)


def test_same_schedule_run_switches_rate_after_the_window():
    from skpaper.papers import ssa_tta

    cfg = ssa_tta._SCALES["smoke"]
    source, _, ev = ssa_tta._streams("smoke", 0, ssa_tta._HARSH, "iid")
    params = {"loss": "entropy", "lr": 0.01, "ssa": False, "kappa": ssa_tta._KAPPA}
    # switching to the same rate is the plain run
    same, _ = ssa_tta._run_split(params, source, ev, cfg, 0, cfg["window"], 0.01)
    plain = ssa_tta._run(params, source, ev, cfg, 0)[0]
    assert same == pytest.approx(plain)


def test_step_schedule_run_scales_the_rate_batch_by_batch():
    import numpy as np

    from skpaper.papers import ssa_tta

    cfg = ssa_tta._SCALES["smoke"]
    source, _, ev = ssa_tta._streams("smoke", 0, ssa_tta._HARSH, "iid")
    params = {"loss": "entropy", "lr": 0.02, "ssa": False, "kappa": ssa_tta._KAPPA}
    n_batches = -(-len(ev.y) // cfg["batch"])
    # a constant multiplier is the plain run at the scaled rate
    quarter, _ = ssa_tta._run_schedule(params, source, ev, cfg, 0, np.full(n_batches, 0.25))
    plain = ssa_tta._run({**params, "lr": 0.005}, source, ev, cfg, 0)[0]
    assert quarter == pytest.approx(plain)
    # and a multiplier of 1 for the first batches, then 0.25, is the split run
    sched = np.r_[np.ones(cfg["window"]), np.full(n_batches - cfg["window"], 0.25)]
    split, _ = ssa_tta._run_split(params, source, ev, cfg, 0, cfg["window"], 0.005)
    assert ssa_tta._run_schedule(params, source, ev, cfg, 0, sched)[0] == pytest.approx(split)


def test_lr_robustness_smoke_reports_every_method(claims, tmp_path):
    result = run_claim(claims["lr-robustness"], scale="smoke", seed=0, out_dir=tmp_path)
    assert result.error is None, result.error
    observed = result.observed
    for key in ("accuracy_tent", "accuracy_tent_ssa", "accuracy_no_adaptation",
                "accuracy_tent_averaging"):
        assert len(observed[key]) == len(observed["learning_rates"])
        assert all(0.0 <= a <= 1.0 for a in observed[key])
    # the unadapted source does not depend on the learning rate
    assert len(set(observed["accuracy_no_adaptation"])) == 1
    assert result.status == "reported"


def test_ssa_on_beats_off_smoke_decides_every_rate(claims, tmp_path):
    from skpaper.papers import ssa_tta

    result = run_claim(claims["ssa-on-beats-off"], scale="smoke", seed=0, out_dir=tmp_path)
    assert result.error is None, result.error
    assert result.status in STATUSES and result.status != "error"
    lrs = ssa_tta._SCALES["smoke"]["lrs"]
    labels = {f"lr={lr:g}" for lr in lrs}
    by_setting = result.observed["by_setting"]
    assert set(by_setting) == labels == set(result.observed["asides_by_learning_rate"])
    verdicts = []
    for label in labels:
        setting = by_setting[label]
        assert setting["difference"] == "SSA - SSA off"
        assert setting["control"]["difference"] == "SSA's steps, shuffled - SSA off"
        n = setting["n_seeds"]
        for arm in ("SSA", "SSA off", "SSA's steps, shuffled"):
            assert len(setting["per_seed"][arm]) == n >= 2
            assert all(0.0 <= a <= 1.0 for a in setting["per_seed"][arm])
        check = setting["check"]
        assert check["verdict"] in {"pass", "contradicted", "undecided"}
        assert check["lower_bound"] <= check["mean"] <= check["upper_bound"]
        verdicts.append(check["verdict"])
    # all of the rates: contradicted if any is, reproduced only if every one passes
    expected = ("contradicted" if "contradicted" in verdicts else
                "pass" if set(verdicts) == {"pass"} else "undecided")
    assert result.verdict == expected
    assert result.control.verdict in {"pass", "fail", "undecided"}
    assert {"n_seeds", "sd", "seeds_needed", "by_setting"} <= set(result.power)
    assert result.artifacts == ["ssa_on_vs_off.png"]
    assert any(tmp_path.rglob("ssa_on_vs_off.png"))
    for label in result.observed["where_ssa_does_not_help"]:
        assert label.split(",")[0] in labels
