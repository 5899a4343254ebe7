"""Smoke-scale claims of robust-cardinality-sketch: structure of the sequential verdicts."""

import numpy as np
import pytest

from skpaper.papers import get_claims, run_claim
from skpaper.papers._registry import STATUSES

SLUG = "robust-cardinality-sketch"


@pytest.fixture(scope="module")
def smoke_results(tmp_path_factory):
    pytest.importorskip("matplotlib")
    out = tmp_path_factory.mktemp("claims")
    return {c.claim_id: (run_claim(c, scale="smoke", seed=0, out_dir=out), out)
            for c in get_claims(SLUG)}


def test_claims_run_and_write_their_figures(smoke_results):
    for result, out in smoke_results.values():
        assert result.error is None
        assert result.status in STATUSES
        for artifact in result.artifacts:
            assert (out / SLUG / artifact).exists()


def test_asserting_claims_are_sequential_band_equivalences_per_setting(smoke_results):
    for claim in get_claims(SLUG):
        if claim.reported or claim.claim_id == "basic-outlasts-standard":
            continue
        assert claim.effect_of_interest.value == 0.25
        result = smoke_results[claim.claim_id][0]
        for label, setting in result.observed["by_setting"].items():
            check = setting["check"]
            assert check["alternative"] == "less" and check["margin"] == 0.25
            assert check["looks"] == [2]
            assert setting["control_verdict"] in ("fail", "pass", "undecided")
            assert len(setting["per_seed"]["tracking"]) == 2
            assert len(setting["per_seed"]["basic"]) == 2
            assert label in result.observed["settings"]
        assert result.control.verdict in ("fail", "pass", "undecided")


def test_attack_claim_checks_the_standard_estimator_on_the_same_seeds(smoke_results):
    attack = smoke_results["attack-breaks-standard-not-tracking"][0].observed
    (label, fig), = attack["settings"].items()
    assert attack["standard_broken_check"][label]["margin"] == 3.0
    assert fig["n_queries"] == 8 * fig["k"]
    # The standard estimator is broken at smoke scale too (8k queries).
    assert fig["standard_ratio_in"]["min"] >= 3
    assert fig["standard_recovery"]["min"] > 4 * fig["chance_recovery"]
    assert max(fig["tracking_deactivated"]) <= 4 * fig["k"]
    assert len(attack["by_setting"][label]["seeds"]) == 2


def test_curve_and_pareto_claims_report_their_held_out_figures(smoke_results):
    curve = smoke_results["error-vs-adaptive-queries"][0].observed["settings"]
    for fig in curve.values():
        assert fig["decided_at_attack_queries"] == 4 * fig["k"]
        assert fig["survived_standard"] in [0, *fig["grid"]]
    pareto = smoke_results["pareto-participation"][0].observed["settings"]
    for fig in pareto.values():
        # r << t: no key sits in more than t/8 queries.
        assert max(fig["max_participation_r"]) <= fig["n_queries"] // 8
        assert max(fig["median_participation"]) < fig["r_cap"]
    rse = smoke_results["standard-error-without-attack"][0]
    assert rse.status == "reported"
    assert rse.observed["relative_gap"] <= 0.15


def test_pareto_calibration_is_its_own_setting_and_reports_power():
    from skpaper.papers import robust_cardinality_sketch as sketch

    cal = sketch._PARETO_CALIBRATION
    claim_settings = [s for settings in (*sketch._PARETO.values(), *sketch._SETTINGS.values())
                      for s in settings]
    for s in claim_settings:
        assert s["k"] != cal["k"] and s["n"] != cal["n"]
    for scale, settings in sketch._PARETO.items():
        assert set(sketch._PARETO_LOOKS[scale]) == {s["label"] for s in settings}
        for looks in sketch._PARETO_LOOKS[scale].values():
            assert list(looks) == sorted(set(looks))
    tiny = {"label": "tiny", "n": 1500, "k": 24, "n_queries": 160, "query_size": 60}
    out = sketch._calibration_pareto(seed=0, n_seeds=3, setting=tiny)
    assert out["setting"]["epsilon"] == pytest.approx(51.2 / 24)
    for role, mode in (("check", "tracking"), ("control", "basic")):
        fig = out[role]
        assert fig["mode"] == mode and len(fig["deviation"]) == 3
        assert all(d >= 0 for d in fig["deviation"])
        assert fig["sd"] >= 0
        assert fig["seeds_needed"] is None or fig["seeds_needed"] >= 2
    # Deterministic: the same seed gives the same figures.
    again = sketch._calibration_pareto(seed=0, n_seeds=3, setting=tiny)
    assert again["check"]["deviation"] == out["check"]["deviation"]


def test_pareto_design_is_sized_from_the_first_design():
    from skpaper.papers import robust_cardinality_sketch as sketch
    from skpaper.papers._stats import claim_seeds, sd_upper_limit, seeds_needed

    first = sketch._PARETO_FIRST_DESIGN
    for label, looks in sketch._PARETO_LOOKS["quick"].items():
        fig = first[label]
        assert looks == (seeds_needed(sd_upper_limit(fig["sd"], fig["n"]),
                                      sketch._TOLERANCE - fig["mean"], alpha=0.05),)
    assert sketch._PARETO_KEY != first["key"]
    calibration = set(claim_seeds(0, 10, 97))
    for i, setting in enumerate(sketch._PARETO["quick"]):
        n = sketch._PARETO_LOOKS["quick"][setting["label"]][-1]
        fresh = set(claim_seeds(0, n, sketch._PARETO_KEY, i))
        assert not fresh & set(claim_seeds(0, first[setting["label"]]["n"], first["key"], i))
        assert not fresh & calibration


def test_only_the_redesigned_claims_record_a_first_design(smoke_results):
    for claim_id, (result, *_) in smoke_results.items():
        assert ("first_design" in result.observed) == (claim_id == "pareto-participation")
        assert ("former_configuration" in result.observed) == (
            claim_id == "basic-outlasts-standard")


def test_basic_claim_is_a_paired_superiority_over_standard_with_a_noiseless_control(
        smoke_results):
    from skpaper.papers import robust_cardinality_sketch as sketch

    claim = next(c for c in get_claims(SLUG) if c.claim_id == "basic-outlasts-standard")
    assert claim.effect_of_interest.value == -0.05
    result = smoke_results["basic-outlasts-standard"][0]
    for label, setting in result.observed["by_setting"].items():
        check = setting["check"]
        assert check["alternative"] == "less" and check["margin"] == 0.0
        assert check["looks"] == [2]
        assert setting["difference"] == "basic - standard"
        assert setting["control"]["difference"] == "noiseless - standard"
        # Paired: the check and the control share the standard arm's figures.
        per_seed = setting["per_seed"]
        assert set(per_seed) == {"basic", "standard", "noiseless"}
        fig = result.observed["settings"][label]
        assert fig["n_queries"] == sketch._BASIC_FACTOR * fig["k"]
        assert fig["standard_deviation"]["values"] == pytest.approx(per_seed["standard"])
        assert fig["noiseless_epsilon"] == sketch._NOISELESS_EPSILON
        # The basic arm answers with its own default noise, the standard arm needs none.
        assert fig["basic_epsilon"] == pytest.approx(max(1.85 / np.sqrt(fig["k"]),
                                                         20 / fig["k"]))


def test_basic_calibration_and_designs_share_no_setting_or_seed():
    from skpaper.papers import robust_cardinality_sketch as sketch
    from skpaper.papers._stats import claim_seeds, sd_upper_limit, seeds_needed

    cal = sketch._BASIC_CALIBRATION
    for settings in sketch._SETTINGS.values():
        for s in settings:
            assert s["k"] != cal["k"] and s["n"] != cal["n"]
    tiny = {"label": "tiny", "n": 1200, "k": 24}
    out = sketch._calibration_basic(seed=0, n_seeds=3, setting=tiny)
    assert out["n_queries"] == 48
    assert set(out["deviation"]) == {"standard", "basic", "noiseless"}
    assert out["check"]["arm"] == "basic" and out["control"]["arm"] == "noiseless"
    again = sketch._calibration_basic(seed=0, n_seeds=3, setting=tiny)
    assert again["deviation"] == out["deviation"]
    # The design that runs is sized from the calibration power figure (SD at its 90% upper
    # limit), on seeds no former design or calibration drew.
    from skpaper.papers._stats import seeds_to_decide

    cal_fig = sketch._BASIC_CALIBRATION_FIGURES
    sd = sd_upper_limit(cal_fig["sd"], cal_fig["n"])
    looks = sketch._BASIC_LOOKS["quick"]
    for label in looks:
        assert looks[label] == (seeds_needed(sd, -cal_fig["mean"], alpha=0.025),
                                seeds_to_decide(sd, -sketch._BASIC_EOI.value, alpha=0.025))
    former = sketch._BASIC_FORMER
    former_keys = {former[d]["key"] for d in ("first_design", "second_design", "third_design")}
    assert sketch._BASIC_KEY not in former_keys | {96}
    calibration = set(claim_seeds(0, 12, 96))
    for i, setting in enumerate(sketch._SETTINGS["quick"]):
        fresh = set(claim_seeds(0, looks[setting["label"]][-1], sketch._BASIC_KEY, i))
        assert not fresh & calibration
        for key in former_keys:  # seed streams are prefixes: 149 covers every former look
            assert not fresh & set(claim_seeds(0, 149, key, i))


def test_basic_noise_calibration_picks_the_most_noise_within_the_error_budget():
    from skpaper.papers import robust_cardinality_sketch as sketch
    from skpaper.sketch._robust import _BASIC_NOISE

    tiny = {"k": 48, "n_queries": 300, "min_size": 2, "max_size": 20}
    out = sketch._calibration_basic_noise(seed=0, setting=tiny, n_boot=100)
    ratios = [row["rse_ratio"] for row in out["rows"]]
    assert len(ratios) == len(sketch._NOISE_GRID)
    # More noise (smaller c) costs accuracy; the choice is the last c within the budget.
    assert ratios[-1] > ratios[0] >= 0.9
    within = [row["c"] for row in out["rows"] if row["upper"] <= sketch._RSE_BUDGET]
    assert out["choice"] == (min(within) if within else None)
    # The library default is the choice on the calibration setting (seed 0), which no
    # claim uses.
    assert sketch._calibration_basic_noise(seed=0)["choice"] == _BASIC_NOISE
    k = sketch._NOISE_CALIBRATION["k"]
    assert all(k != s["k"] for settings in sketch._SETTINGS.values() for s in settings)


def test_basic_noise_tradeoff_reports_error_and_deviation_per_noise():
    from skpaper.papers import robust_cardinality_sketch as sketch

    tiny = {"label": "tiny", "n": 900, "k": 24}
    out = sketch._basic_noise_tradeoff(seed=0, n_seeds=3, setting=tiny, grid=(3.70, 1.23),
                                       factors=(1, 2))
    assert set(out["by_size"]) == {24, 48}
    assert set(out["rse_ratio"]) == {"basic c=3.7", "basic c=1.23"}
    assert out["rse_ratio"]["basic c=1.23"] > out["rse_ratio"]["basic c=3.7"]
    for row in out["by_size"].values():
        assert set(row) == {"standard", "basic c=3.7", "basic c=1.23"}
        assert all(v["upper"] >= v["mean"] >= 0 for v in row.values())
    assert sketch._TRADEOFF_SETTING["k"] not in {
        s["k"] for settings in sketch._SETTINGS.values() for s in settings}
