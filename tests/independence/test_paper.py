import numpy as np
import pytest

from skpaper.papers import get_claims, run_claim
from skpaper.papers._registry import STATUSES


@pytest.fixture(scope="module")
def smoke_results(tmp_path_factory):
    out = tmp_path_factory.mktemp("gmm-ci-test")
    return {c.claim_id: run_claim(c, scale="smoke", seed=0, out_dir=out)
            for c in get_claims("gmm-ci-test")}


def test_gmm_ci_test_claims_declare_effects_and_decide_with_controls(smoke_results):
    assert set(smoke_results) == {"type-one-error", "power-vs-dct", "pc-skeleton-f1", "pc-shd"}
    for claim in get_claims("gmm-ci-test"):
        assert claim.effect_of_interest is not None and claim.control
    for result in smoke_results.values():
        assert result.error is None and result.artifacts
        assert result.status in STATUSES and result.status not in ("error", "reported")
        assert result.control.verdict in ("fail", "pass", "undecided")
        assert result.power["n_seeds"] >= 2


def test_size_claim_bounds_the_rate_from_above_at_every_n(smoke_results):
    size = smoke_results["type-one-error"].observed
    rates = size["rejection_rates"]
    for name in ("GMM one-step", "Fisher-z on codes"):
        assert len(rates[name]) == len(size["n"]) and all(0 <= r <= 1 for r in rates[name])
    for setting in size["by_setting"].values():
        check = setting["check"]
        assert check["alternative"] == "less" and check["margin"] == 0.075
        assert check["lower_bound"] <= check["mean"] <= check["upper_bound"]
    # Even at smoke scale the naive test's inflation is visible.
    assert sum(rates["Fisher-z on codes"]) > sum(rates["GMM one-step"])


def test_power_claim_pairs_replications_and_its_control_uses_null_data(smoke_results):
    power = smoke_results["power-vs-dct"].observed
    assert all(0 <= r <= 1 for r in power["power"]["GMM one-step"] +
               power["power"]["DCT (binarized)"])
    for setting in power["by_setting"].values():
        per_seed = setting["per_seed"]
        diff = np.subtract(per_seed["GMM one-step"], per_seed["DCT (binarized)"])
        assert setting["check"]["mean"] == pytest.approx(diff.mean())
        assert setting["control"]["difference"] == "GMM one-step, null - DCT (binarized), null"


def test_pc_claims_share_graphs_and_the_control_is_not_zero_by_construction(smoke_results):
    f1, shd = smoke_results["pc-skeleton-f1"], smoke_results["pc-shd"]
    assert f1.observed["seeds"] == shd.observed["seeds"]
    assert all(0 <= v <= 1 for v in f1.observed["per_seed"]["GMM one-step"])
    assert not f1.control.zero_spread
    assert f1.observed["check"]["alternative"] == "greater"
    assert shd.observed["check"]["alternative"] == "less"


def test_permuted_codes_keep_the_categories_and_lose_the_order():
    from skpaper.papers.gmm_ci_test import _permute_codes

    X = np.tile(np.arange(4), (3, 1)).T.repeat(5, axis=0)
    out = _permute_codes(X, np.random.default_rng(0))
    for j in range(X.shape[1]):
        assert sorted(np.unique(out[:, j])) == [0, 1, 2, 3]
        # one relabelling per column: equal codes stay equal
        assert all(len(np.unique(out[X[:, j] == v, j])) == 1 for v in range(4))
    assert not np.array_equal(out, X)
