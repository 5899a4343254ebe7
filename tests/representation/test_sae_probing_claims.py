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
