"""The claims framework: statuses, controls, statistics and the process state of a claim."""

import json
import os
import random
import subprocess
import sys

import numpy as np
import pytest
from scipy import stats

from skpaper.papers import (
    STATUSES,
    Claim,
    ClaimResult,
    ControlResult,
    EffectOfInterest,
    get_claims,
    run_claim,
)
from skpaper.papers._environment import claim_environment, global_seed
from skpaper.papers._stats import (
    binomial_band,
    claim_seeds,
    mean_interval,
    paired_difference,
    proportion_interval,
    seed_summary,
)

_EOI = EffectOfInterest(0.1, "ours", "a test effect")


def _claim(func, **kwargs):
    if kwargs.get("control") is not None:
        kwargs.setdefault("effect_of_interest", _EOI)
    return Claim("fake", func.__name__, "a fake claim", func, **kwargs)


def _result(passed, control_passed=None, verdict=None, control_verdict=None):
    control = None if control_passed is None else ControlResult(
        {"x": 0.0}, control_passed, verdict=control_verdict)
    return ClaimResult(observed={"x": 1.0}, expected={"x": "> 0"}, passed=passed,
                       verdict=verdict, control=control)


@pytest.mark.parametrize("passed, verdict, control_passed, control_verdict, status", [
    (True, "pass", False, "fail", "reproduced"),
    (True, "pass", True, "pass", "uninformative"),
    (True, "pass", False, "undecided", "uninformative"),
    (True, None, False, None, "uninformative"),  # a control with no bound is not decisive
    (False, "contradicted", False, "fail", "contradicted"),
    (False, "undecided", False, "fail", "inconclusive"),
    (False, None, False, None, "inconclusive"),  # a failed check alone decides nothing
    (None, "contradicted", True, "pass", "contradicted"),
])
def test_status_from_check_and_control(tmp_path, passed, verdict, control_passed,
                                       control_verdict, status):
    def claim_func(scale, seed, out_dir):
        return _result(passed, control_passed, verdict, control_verdict)

    result = run_claim(_claim(claim_func, control="mechanism off"), "smoke", 0, tmp_path)
    assert result.status == status, result.notes
    assert result.passed is (status == "reproduced")
    payload = json.loads((tmp_path / "fake" / "claim_func.json").read_text())
    assert payload["status"] == status
    assert payload["check_passed"] is (passed if passed is not None else verdict == "pass")
    assert payload["control"] == {"name": "mechanism off", "observed": {"x": 0.0},
                                  "passed": control_passed, "verdict": control_verdict,
                                  "zero_spread": None}
    assert payload["effect_of_interest"] == {"value": 0.1, "source": "ours",
                                             "reason": "a test effect"}
    assert set(payload["power"]) >= {"n_seeds", "sd", "seeds_needed"}


def test_inconsistent_or_unknown_verdicts_are_errors(tmp_path):
    def mismatch(scale, seed, out_dir):
        return _result(True, False, "contradicted", "fail")

    def unknown(scale, seed, out_dir):
        return _result(None, False, "maybe", "fail")

    def bad_control(scale, seed, out_dir):
        return _result(True, False, "pass", "perhaps")

    for func, message in ((mismatch, "with verdict"), (unknown, "not one of"),
                          (bad_control, "control verdict")):
        result = run_claim(_claim(func, control="off"), "smoke", 0, tmp_path)
        assert result.status == "error" and message in result.error


def test_zero_spread_control_is_no_control(tmp_path):
    def claim_func(scale, seed, out_dir):
        result = _result(True, False, "pass", "fail")
        result.control.zero_spread = True
        return result

    result = run_claim(_claim(claim_func, control="identical arms"), "smoke", 0, tmp_path)
    assert result.status == "uninformative" and "zero spread" in result.notes


def test_asserting_claim_without_effect_of_interest_is_an_error(tmp_path):
    def claim_func(scale, seed, out_dir):
        return _result(True, False, "pass", "fail")

    claim = Claim("fake", "no_eoi", "d", claim_func, control="off")
    result = run_claim(claim, "smoke", 0, tmp_path)
    assert result.status == "error" and "declares no effect_of_interest" in result.error


def test_claim_without_control_is_reported_not_asserted(tmp_path):
    def claim_func(scale, seed, out_dir):
        return _result(True)

    result = run_claim(_claim(claim_func), "smoke", 0, tmp_path)
    assert result.status == "reported" and result.passed is False
    assert "no negative control" in result.notes


def test_reported_claim_must_not_assert(tmp_path):
    def figure(scale, seed, out_dir):
        return ClaimResult(observed={"x": 1.0}, expected={"x": "shown"})

    def asserts(scale, seed, out_dir):
        return _result(True)

    assert run_claim(_claim(figure, reported=True), "smoke", 0, tmp_path).status == "reported"
    result = run_claim(_claim(asserts, reported=True), "smoke", 0, tmp_path)
    assert result.status == "error" and "must return passed=None" in result.error


def test_declared_control_must_be_returned(tmp_path):
    def no_control(scale, seed, out_dir):
        return _result(True)

    def not_bool(scale, seed, out_dir):
        return ClaimResult(observed={}, expected={}, passed=np.True_)

    result = run_claim(_claim(no_control, control="off"), "smoke", 0, tmp_path)
    assert result.status == "error" and "returned no ControlResult" in result.error
    result = run_claim(_claim(not_bool, control="off"), "smoke", 0, tmp_path)
    assert result.status == "error" and "passed as a bool" in result.error


def test_register_claim_rejects_reported_with_control():
    from skpaper.papers import register_claim

    with pytest.raises(ValueError, match="a reported claim asserts nothing"):
        register_claim("fake", "x", "d", control="off", reported=True)


def test_run_claim_validates_seed_and_threads(tmp_path):
    claim = _claim(lambda scale, seed, out_dir: _result(True))
    for seed in (-1, 2**32, 1.5, True):
        with pytest.raises(ValueError, match="seed must be an integer"):
            run_claim(claim, "smoke", seed, tmp_path)
    with pytest.raises(ValueError, match="threads must be a positive integer"):
        run_claim(claim, "smoke", 0, tmp_path, threads=0)


def test_statuses_are_the_documented_six():
    assert STATUSES == ("reproduced", "contradicted", "inconclusive", "uninformative",
                        "reported", "error")


# ---------------------------------------------------------------- statistics

def test_paired_difference_matches_scipy_t_bound():
    rng = np.random.default_rng(0)
    a = rng.normal(0.5, 0.1, size=8)
    b = a - rng.normal(0.03, 0.02, size=8)
    res = paired_difference(a, b, confidence=0.9)
    d = a - b
    expected = d.mean() - stats.t.ppf(0.9, len(d) - 1) * d.std(ddof=1) / np.sqrt(len(d))
    assert res.bound == pytest.approx(expected, rel=1e-12)
    assert res.passed == (expected > 0)
    upper = paired_difference(a, b, alternative="less", margin=0.1, confidence=0.9)
    assert upper.bound == pytest.approx(
        d.mean() + stats.t.ppf(0.9, len(d) - 1) * d.std(ddof=1) / np.sqrt(len(d)), rel=1e-12)
    assert upper.passed == (upper.bound < 0.1)
    assert res.to_dict()["lower_bound"] == res.bound and "upper_bound" in upper.to_dict()


def test_mean_interval_edge_cases():
    assert not mean_interval([0.3]).passed  # one seed is no evidence
    same = mean_interval([0.2, 0.2, 0.2])
    assert same.bound == 0.2 and same.passed
    assert not mean_interval([0.2, 0.2], margin=0.2).passed
    with pytest.raises(ValueError, match="alternative must be one of"):
        mean_interval([1.0, 2.0], alternative="two-sided")
    with pytest.raises(ValueError, match="values must be finite"):
        mean_interval([1.0, np.nan])
    with pytest.raises(ValueError, match="same length"):
        paired_difference([1.0, 2.0], [1.0])


def test_proportion_interval_is_clopper_pearson():
    from statsmodels.stats.proportion import proportion_confint

    assert proportion_interval(7, 120, 0.95) == pytest.approx(
        proportion_confint(7, 120, alpha=0.05, method="beta"))
    low, high = proportion_interval(7, 120)
    assert low == pytest.approx(stats.beta.ppf(0.025, 7, 114))
    assert high == pytest.approx(stats.beta.ppf(0.975, 8, 113))
    with pytest.raises(ValueError, match="count must be in"):
        proportion_interval(5, 3)
    low, high = binomial_band(200, 0.05, 0.99)
    assert (low, high) == tuple(x / 200 for x in stats.binom.interval(0.99, 200, 0.05))


def test_claim_seeds_and_summary():
    assert claim_seeds(3, 4) == claim_seeds(3, 4)
    assert claim_seeds(3, 4) != claim_seeds(4, 4) != claim_seeds(3, 4, 1)
    assert all(0 <= s < 2**31 - 1 for s in claim_seeds(0, 50))
    with pytest.raises(ValueError, match="n must be a positive integer"):
        claim_seeds(0, 0)
    summary = seed_summary([1.0, 3.0])
    assert summary["mean"] == 2.0 and summary["std"] == pytest.approx(np.sqrt(2))


# ---------------------------------------------------------------- process state

def test_claim_environment_sets_and_restores_process_state(tmp_path):
    torch = pytest.importorskip("torch")
    before_threads = torch.get_num_threads()
    before_np = np.random.get_state()[1].copy()
    before_torch = torch.random.get_rng_state().clone()
    before_py = random.getstate()
    cwd = os.getcwd()
    with claim_environment("p/c", 7, threads=1) as env:
        assert torch.get_num_threads() == 1 and env["torch_threads"] == 1
        assert env["blas_threads"] == [1] and env["openmp_threads"] == [1]
        # the CPU kernels that ran, which decide the last digits of every figure
        assert env["machine"] and isinstance(env["blas_kernels"], list)
        assert env["torch_cpu_capability"] == torch.backends.cpu.get_cpu_capability()
        assert torch.get_default_dtype() == torch.float32
        # the global generators are seeded from (claim, seed) alone
        draw = np.random.random_sample()
        np.random.seed(global_seed("p/c", 7))
        assert np.random.random_sample() == draw
        torch.set_num_threads(2)
        torch.set_default_dtype(torch.float64)
        os.chdir(tmp_path)
    assert torch.get_num_threads() == before_threads
    assert torch.get_default_dtype() == torch.float32
    assert np.array_equal(np.random.get_state()[1], before_np)
    assert torch.equal(torch.random.get_rng_state(), before_torch)
    assert random.getstate() == before_py and os.getcwd() == cwd


def test_claim_environment_restores_after_an_exception():
    torch = pytest.importorskip("torch")
    before = torch.get_num_threads()
    with pytest.raises(RuntimeError), claim_environment("p/c", 0, threads=1):
        torch.set_num_threads(3)
        raise RuntimeError("claim failed")
    assert torch.get_num_threads() == before


def test_importing_the_papers_changes_no_process_state():
    code = ("import torch; t = torch.get_num_threads(); import skpaper.papers as p; "
            "p.get_claims(); assert torch.get_num_threads() == t, (t, torch.get_num_threads()); "
            "assert torch.get_default_dtype() == torch.float32")
    subprocess.run([sys.executable, "-c", code], check=True, capture_output=True)


# Claims from papers that train torch models, whose figures moved with the thread count
# when the runner did not own it. No timing figures among them.
_ORDER_CLAIMS = ("laurel/parameter-overhead", "rate/confounding-bias",
                 "framework-selfcheck/mlp-matches-sklearn-digits")


def _figures(out_dir, key):
    paper, claim_id = key.split("/")
    payload = json.loads((out_dir / paper / f"{claim_id}.json").read_text())
    return {k: payload[k] for k in ("observed", "control", "status", "check_passed")}


def test_same_seed_same_figures_in_any_order_and_in_a_worker(tmp_path):
    claims = {c.key: c for c in get_claims()}
    keys = [k for k in _ORDER_CLAIMS if k in claims]
    assert len(keys) >= 2
    forward, backward = tmp_path / "forward", tmp_path / "backward"
    for key in keys:
        run_claim(claims[key], "smoke", 0, forward)
    for key in reversed(keys):
        run_claim(claims[key], "smoke", 0, backward)
    alone = tmp_path / "alone"
    paper = keys[-1].split("/")[0]
    subprocess.run([sys.executable, "-m", "skpaper", "reproduce", paper, "--scale", "smoke",
                    "--out", str(alone)], check=True, capture_output=True,
                   env={**os.environ, "OMP_NUM_THREADS": "2"})
    for key in keys:
        assert _figures(forward, key) == _figures(backward, key), key
    assert _figures(alone, keys[-1]) == _figures(forward, keys[-1])
    # papers in two worker processes: the same figures as one after another
    parallel = tmp_path / "parallel"
    papers = sorted({k.split("/")[0] for k in keys})
    subprocess.run([sys.executable, "-m", "skpaper", "reproduce", *papers, "--scale", "smoke",
                    "--out", str(parallel), "--jobs", "2"], check=True, capture_output=True)
    for key in keys:
        assert _figures(parallel, key) == _figures(forward, key), key


def test_a_failed_precheck_makes_the_claim_uninformative(tmp_path):
    from skpaper.papers import ClaimResult, ControlResult, EffectOfInterest, run_claim
    from skpaper.papers._registry import Claim

    def make(**fields):
        def func(scale, seed, out_dir):
            return ClaimResult(observed={}, expected={}, passed=False, verdict="undecided",
                               control=ControlResult(observed={}, passed=False,
                                                     verdict="undecided"), **fields)
        return Claim(paper="framework-selfcheck", claim_id="precheck-probe", description="d",
                     func=func, control="c",
                     effect_of_interest=EffectOfInterest(0.1, "ours", "probe"))

    result = run_claim(make(precheck_failed="features at chance"), "smoke", 0, tmp_path)
    assert result.status == "uninformative"
    assert "[pre-check failed: features at chance]" in result.notes
    assert run_claim(make(), "smoke", 0, tmp_path).status == "inconclusive"
    assert run_claim(make(precheck_failed="  "), "smoke", 0, tmp_path).status == "error"


def test_a_failing_worker_raises_its_own_error_not_the_pool_cleanup(tmp_path):
    # A claim key the worker cannot find fails inside the worker; the parent must
    # re-raise that error after shutting the pool down, not fail while cleaning up.
    from types import SimpleNamespace

    from skpaper.cli import _run_parallel

    args = SimpleNamespace(jobs=2, scale="smoke", seed=0, threads=1)
    with pytest.raises(KeyError, match="no-such-paper/no-such-claim"):
        _run_parallel({"no-such-paper": ["no-such-paper/no-such-claim"]}, args, tmp_path,
                      lambda rows: None)


def test_jobs_start_the_costliest_paper_first_and_hints_are_validated():
    from skpaper.cli import _schedule
    from skpaper.papers import get_papers, register_paper

    papers = {p.slug: p for p in get_papers()}
    hinted = max((p for p in papers.values() if p.quick_cost_s is not None),
                 key=lambda p: p.quick_cost_s)
    plain = next(p for p in papers.values() if p.quick_cost_s is None)
    groups = {plain.slug: [f"{plain.slug}/{i}" for i in range(9)],
              hinted.slug: [f"{hinted.slug}/only"]}
    # nine unhinted claims count 270 s, below the costliest hint
    assert hinted.quick_cost_s > 270
    assert _schedule(groups) == [groups[hinted.slug], groups[plain.slug]]
    for bad, error in ((0, ValueError), (float("nan"), ValueError), (-1.0, ValueError),
                       ("60", TypeError), (True, TypeError)):
        with pytest.raises(error, match="quick_cost_s"):
            register_paper(plain.slug, plain.title, plain.module, quick_cost_s=bad)
    assert get_papers()[list(papers).index(plain.slug)] == plain
