"""The sae-probing claims' choice rule: tied validation scores split the choice evenly."""

import pytest

from skpaper.papers import sae_probing as paper


def test_tied_best_candidates_share_the_choice():
    row = {"logreg": (1.0, 0.90), "knn": (0.8, 0.70), "sae_k16": (1.0, 0.96)}
    auc, share = paper._choose(row, ["logreg", "knn", "sae_k16"])
    # the first-listed baseline no longer wins the tie: the two tied candidates count alike
    assert auc == pytest.approx(0.93)
    assert share == {"logreg": 0.5, "knn": 0.0, "sae_k16": 0.5}


def test_a_strict_best_candidate_takes_the_whole_choice():
    row = {"logreg": (0.91, 0.80), "sae_k16": (0.95, 0.85), "sae_k128": (float("nan"), 0.99)}
    auc, share = paper._choose(row, ["logreg", "sae_k16", "sae_k128"])
    assert auc == 0.85 and share["sae_k16"] == 1.0 and share["sae_k128"] == 0.0


def test_claims_are_equivalences_with_a_declared_margin():
    from skpaper.papers._registry import get_claims

    for claim in get_claims(paper.SLUG):
        assert claim.effect_of_interest is paper._NO_GAIN_EOI
        assert claim.effect_of_interest.source == "ours"


def test_quick_size_calibration_shares_the_sizes_but_no_cell_with_quick():
    cal, quick = paper._CONFIG["calibration_quick_size"], paper._CONFIG["quick"]
    for key in ("pool", "n_latents", "k", "epochs", "batch", "labeled", "n_test", "baselines"):
        assert cal[key] == quick[key], key
    assert not set(paper._cells(cal)) & set(paper._cells(quick))
    # its own seed stream, apart from the other calibration setting's
    keys = paper._CALIBRATION_KEYS
    assert keys["calibration_quick_size"] != keys["calibration"]
    with pytest.raises(ValueError, match="setting"):
        paper._calibration(setting="quick")


def test_each_claim_has_its_own_quick_looks():
    quick = paper._CONFIG["quick"]
    assert quick["looks"] == paper._QUICK_LOOKS
    assert quick["quiver_looks"] == paper._QUICK_QUIVER_LOOKS
    for looks in (quick["looks"], quick["quiver_looks"]):
        assert list(looks) == sorted(set(looks)) and looks[0] >= 2


def test_quiver_second_design_is_sized_from_the_first_on_fresh_seeds():
    from skpaper.papers._stats import claim_seeds, sd_upper_limit, seeds_needed

    quick, first = paper._CONFIG["quick"], paper._QUIVER_FIRST_DESIGN
    (n,) = quick["quiver_looks"]
    eoi = paper._NO_GAIN_EOI.value
    assert n == seeds_needed(sd_upper_limit(first["sd"], first["n"]), eoi - first["mean"])
    fresh = set(claim_seeds(0, n, *quick["quiver_key"]))
    assert not fresh & set(claim_seeds(0, first["n"], *first["key"]))
    for key in paper._CALIBRATION_KEYS.values():
        assert not fresh & set(claim_seeds(0, 12, key))


def test_quiver_repeats_match_the_full_repeat_and_not_the_worker_count(monkeypatch):
    from skpaper.papers._environment import CORES_VARIABLE

    seeds = (11, 12)
    full = {s: paper._quiver_units(paper._repeat("smoke", 0, s)) for s in seeds}
    drop = ("quiver_with_oracle", paper._ORACLE)
    for cores in ("1", "2"):
        monkeypatch.setenv(CORES_VARIABLE, cores)
        paper._quiver_repeats.cache_clear()
        got = paper._quiver_repeats("smoke", seeds)
        for s in seeds:
            assert got[s] == [{k: v for k, v in u.items() if k not in drop} for u in full[s]]
