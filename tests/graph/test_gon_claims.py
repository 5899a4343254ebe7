"""Smoke runs of the graph-of-net claims: statuses, effects of interest, power, arms."""

import json

import numpy as np
import pytest

from skpaper.papers import STATUSES, get_claims, run_claim


@pytest.fixture(scope="module")
def claims():
    return {c.claim_id: c for c in get_claims("graph-of-net")}


def test_every_claim_asserts_with_an_effect_of_interest(claims):
    assert set(claims) == {"dual-beats-single-views", "constraint-helps"}
    for claim in claims.values():
        assert claim.control and not claim.reported
        assert claim.effect_of_interest.value > 0


@pytest.mark.parametrize("claim_id", ["dual-beats-single-views", "constraint-helps"])
def test_smoke_run_records_eoi_power_and_curves(claims, claim_id, tmp_path):
    result = run_claim(claims[claim_id], "smoke", 0, tmp_path)
    assert result.error is None, result.error
    assert result.status in STATUSES and result.status != "error"
    payload = json.loads((tmp_path / "graph-of-net" / f"{claim_id}.json").read_text())
    assert payload["effect_of_interest"]["source"] == "ours"
    assert {"n_seeds", "sd", "seeds_needed"} <= set(payload["power"])
    curves = result.observed["test_curve_first_seed"]
    assert all(len(c) == 1 and c[0][0] == 10 for c in curves.values())
    for arm, values in result.observed["per_seed"].items():
        assert len(values) == payload["arms"][arm]["seeds"]


def test_better_single_view_is_the_seedwise_maximum(claims, tmp_path):
    from skpaper.papers import graph_of_net as gon

    result = run_claim(claims["dual-beats-single-views"], "smoke", 0, tmp_path)
    seeds = result.observed["seeds"]
    outer = [gon._fit("smoke", s, "outer-only GCN")[0] for s in seeds]
    inner = [gon._fit("smoke", s, "inner-only GIN")[0] for s in seeds]
    np.testing.assert_allclose(result.observed["per_seed"]["better single view"],
                               np.maximum(outer, inner))


def test_label_free_constraint_has_no_label_pairs():
    from skpaper.papers import graph_of_net as gon

    model = gon._constraint_model(label_pairs=False)()
    positive, negative = model._label_pairs()
    assert positive.shape == (2, 0) and negative.shape == (2, 0)


def test_permuted_arms_use_independent_fixed_permutations():
    import torch

    from skpaper.papers import graph_of_net as gon

    seen = {}
    for key in (1, 2):
        cls = gon._constraint_model(label_pairs=False, shuffle_positions=key)

        class _Probe(cls):
            def _constraint_loss(self, positions, v, epoch):
                out = super()._constraint_loss(positions, v, epoch)
                seen.setdefault(key, []).append(self._position_perm.copy())
                return out

        graph, y = gon._split_signal_gon(0, 60)
        ids = np.arange(60).reshape(-1, 1)
        _Probe(gon=graph, hidden_dim=8, max_epochs=3, random_state=0,
               device="cpu").fit(ids[:30], y[:30])
        assert all(np.array_equal(p, seen[key][0]) for p in seen[key])  # fixed per fit
        assert sorted(seen[key][0]) == list(range(60))
    assert not np.array_equal(seen[1][0], seen[2][0])
    assert torch.get_default_dtype() == torch.float32


def test_true_pulls_carry_class_information_permuted_do_not():
    from skpaper.papers import graph_of_net as gon

    purity = gon._pull_purity("quick", 7)
    assert purity["true_positions"] > purity["chance"] + 0.15
    assert abs(purity["permuted_positions"] - purity["chance"]) < 0.05


def test_constraint_arms_train_on_their_own_budget():
    from skpaper.papers import graph_of_net as gon

    key = ("test-budget",)
    gon._SETTINGS[key] = dict(n_nodes=60, epochs=10, hidden=8, looks=(2,),
                              constraint_epochs=20, constraint_lr=3e-3)
    try:
        assert [e for e, _ in gon._fit(key, 0, gon._TRUE)[3]] == [10, 20]
        assert [e for e, _ in gon._fit(key, 0, "N2GON")[3]] == [10]
        assert gon._arm(key, gon._PERMUTED)(0).train_steps == 20
    finally:
        del gon._SETTINGS[key]
    quick = gon._SETTINGS["quick"]
    assert gon._epochs(quick, gon._PERMUTED_AGAIN) == 600
    assert gon._epochs(quick, "outer-only GCN") == quick["epochs"] == 300
    assert quick["constraint_lr"] == 3e-3


def test_constraint_design_is_sized_from_the_first_design_and_draws_fresh_worlds(
        claims, tmp_path):
    from skpaper.papers import graph_of_net as gon
    from skpaper.papers._stats import claim_seeds, sd_upper_limit, seeds_needed, seeds_to_decide

    first, quick = gon._CONSTRAINT_FIRST_DESIGN, gon._SETTINGS["quick"]
    n = first["n"]
    assert quick["constraint_looks"] == (
        seeds_to_decide(sd_upper_limit(first["sd"], n), 0.02, alpha=0.05),)
    assert quick["constraint_control_seeds"] == seeds_needed(
        sd_upper_limit(first["control_sd"], n), 0.02, alpha=0.05)
    fresh = set(claim_seeds(0, quick["constraint_looks"][-1], *quick["constraint_key"]))
    assert not fresh & set(claim_seeds(0, n, *first["key"]))
    assert not fresh & {s for base, k in ((1, 10), (2, 6)) for s in claim_seeds(base, k, 99)}

    result = run_claim(claims["constraint-helps"], "smoke", 0, tmp_path)
    smoke = gon._SETTINGS["smoke"]
    seeds = result.observed["seeds"]
    assert seeds == claim_seeds(0, smoke["constraint_looks"][-1], *smoke["constraint_key"])
    placebo = result.observed["per_seed"][gon._PERMUTED_AGAIN]
    assert placebo == [gon._fit("smoke", s, gon._PERMUTED_AGAIN)[0]
                       for s in seeds[: smoke["constraint_control_seeds"]]]
    permuted = result.observed["per_seed"][gon._PERMUTED][: len(placebo)]
    control = result.control.observed["check"]
    assert control["n"] == len(placebo)
    np.testing.assert_allclose(control["mean"], np.mean(np.subtract(placebo, permuted)))
