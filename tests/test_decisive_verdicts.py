"""Decisive verdicts: the sequential rule's error rates, comparisons, shared fits, faults."""

import errno
import json
import time

import numpy as np
import pytest
from scipy import stats

from skpaper.cli import main
from skpaper.papers import (
    ArmRun,
    ClaimResult,
    EffectOfInterest,
    _registry,
    decide_claim,
    run_comparison,
)
from skpaper.papers._stats import decide, seeds_needed, spending_schedule

_EOI = EffectOfInterest(0.5, "ours", "half a standard deviation")
_LOOKS = (4, 8, 16, 32)


# ---------------------------------------------------------------- the sequential rule

def _sequential_verdicts(effect, n_sequences, seed):
    """Verdicts of ``run_comparison`` over simulated sequences with a true paired effect."""
    rng = np.random.default_rng(seed)
    verdicts = []
    for _ in range(n_sequences):
        draws = rng.normal(effect, 1.0, size=_LOOKS[-1])
        index = {}

        def method(s, draws=draws, index=index):
            return float(draws[index.setdefault(s, len(index))])

        comparison = run_comparison({"method": method, "baseline": lambda s: 0.0},
                                    method="method", baseline="baseline", seed=0,
                                    looks=_LOOKS, effect_of_interest=_EOI)
        verdicts.append(comparison.verdict)
    return np.array(verdicts)


def test_null_effect_is_called_a_pass_at_most_alpha_over_1000_sequences():
    verdicts = _sequential_verdicts(0.0, 1000, seed=1)
    rate = np.mean(verdicts == "pass")
    # Bonferroni spending makes it at most 0.05; it is well below that in practice.
    assert rate <= 0.05, rate
    # most null sequences are decided the other way (the effect of interest is excluded)
    assert np.mean(verdicts == "contradicted") > 0.5


def test_effect_of_interest_is_contradicted_at_most_alpha_over_1000_sequences():
    verdicts = _sequential_verdicts(_EOI.value, 1000, seed=2)
    rate = np.mean(verdicts == "contradicted")
    assert rate <= 0.05, rate
    assert np.mean(verdicts == "pass") > 0.5


def test_a_rule_without_spending_would_break_the_error_rate():
    """The same looks with the full 5% at every look: the null passes too often.

    This shows the simulation can fail: the guarantee comes from the spending.
    """
    rng = np.random.default_rng(3)
    false_passes = 0
    for _ in range(1000):
        draws = rng.normal(0.0, 1.0, size=_LOOKS[-1])
        false_passes += any(decide(draws[:n], effect_of_interest=0.5).verdict == "pass"
                            for n in _LOOKS)
    assert false_passes / 1000 > 0.05


def test_decide_matches_the_t_bound_at_one_look():
    rng = np.random.default_rng(0)
    d = rng.normal(0.2, 0.3, size=10)
    decision = decide(d, effect_of_interest=0.1, alpha=0.05)
    half = stats.t.ppf(0.95, 9) * d.std(ddof=1) / np.sqrt(10)
    assert decision.lower == pytest.approx(d.mean() - half)
    assert decision.upper == pytest.approx(d.mean() + half)
    assert decision.passed == (d.mean() - half > 0)


def test_decide_directions_equivalence_and_both_sides():
    assert decide([-0.3, -0.31, -0.29], effect_of_interest=-0.1, alternative="less").passed
    # equivalence: no gain beyond 0.05
    assert decide([0.0, 0.01, -0.01, 0.0], alternative="less", margin=0.05,
                  effect_of_interest=0.05).verdict == "pass"
    assert decide([0.2, 0.21, 0.19], alternative="less", margin=0.05,
                  effect_of_interest=0.05).verdict == "contradicted"
    # real but smaller than the effect of interest: contradicted, and said so
    both = decide([0.05, 0.051, 0.049, 0.05], effect_of_interest=0.5)
    assert both.verdict == "contradicted" and both.also_excludes_effect
    with pytest.raises(ValueError, match="paper's side of margin"):
        decide([0.1, 0.2], effect_of_interest=-0.1)
    with pytest.raises(ValueError, match="exceed the last look"):
        decide(np.zeros(5), effect_of_interest=0.1, looks=(2, 4))
    with pytest.raises(ValueError, match="looks must be increasing"):
        decide([0.1, 0.2], effect_of_interest=0.1, looks=(4, 2))


def test_spending_and_seeds_needed():
    levels = spending_schedule((4, 8, 16), alpha=0.05)
    assert sum(levels) == pytest.approx(0.05) and levels == (0.0125, 0.0125, 0.025)
    # seeds_needed reaches 80% power: check by simulation at the returned n
    n = seeds_needed(1.0, 0.5)
    rng = np.random.default_rng(0)
    hits = np.mean([decide(rng.normal(0.5, 1.0, n), effect_of_interest=0.5).passed
                    for _ in range(400)])
    assert 0.72 <= hits <= 0.9
    assert seeds_needed(float("nan"), 0.5) is None and seeds_needed(1.0, 0.0) is None


def _exact_sample(mean, sd, n):
    z = np.linspace(-1.0, 1.0, n)
    return mean + sd * (z - z.mean()) / z.std(ddof=1)


def test_seeds_to_decide_forces_a_verdict_between_the_ends():
    from skpaper.papers._stats import seeds_to_decide

    sd, eoi = 0.03, 0.02
    n = seeds_to_decide(sd, eoi, alpha=0.025)
    assert n > seeds_needed(sd, eoi, alpha=0.025)
    # a true effect half-way between the margin and the effect of interest, the SD as planned
    for mean in (0.0, eoi / 2, eoi):
        got = decide(_exact_sample(mean, sd, n), effect_of_interest=eoi, looks=(n,),
                     alpha=0.025)
        assert got.verdict != "undecided", mean
    short = decide(_exact_sample(eoi / 2, sd, n - 1), effect_of_interest=eoi,
                   looks=(n - 1,), alpha=0.025)
    assert short.verdict == "undecided"
    assert seeds_to_decide(float("nan"), 0.1) is None and seeds_to_decide(1.0, 0.0) is None
    assert seeds_to_decide(0.0, 0.1) == 2


def test_sd_upper_limit_covers_the_true_sd_at_its_level():
    from skpaper.papers._stats import sd_upper_limit

    rng = np.random.default_rng(1)
    covered = np.mean([sd_upper_limit(np.std(rng.normal(0.0, 2.0, 8), ddof=1), 8) >= 2.0
                       for _ in range(2000)])
    assert 0.88 <= covered <= 0.92
    assert sd_upper_limit(1.0, 16) > sd_upper_limit(1.0, 64) > 1.0
    assert sd_upper_limit(1.0, 8, confidence=0.5) == pytest.approx(1.0, abs=0.07)
    for bad, name in ((dict(sd=1.0, n=1), "n"), (dict(sd=1.0, n=True), "n"),
                      (dict(sd=-1.0, n=5), "sd"), (dict(sd=1.0, n=5, confidence=1.0),
                                                   "confidence")):
        with pytest.raises(ValueError, match=f"^{name} must"):
            sd_upper_limit(**bad)


# ---------------------------------------------------------------- comparisons

def _noisy(shift, scale=0.05):
    # each arm draws its own noise (identical noise would give zero-spread differences)
    salt = int(shift * 1000) + int(scale * 1e6)
    return lambda s: shift + np.random.default_rng([s, salt]).normal(0.0, scale)


def test_run_comparison_stops_when_decided_and_records_arms():
    calls = []

    def method(s):
        calls.append(s)
        return ArmRun(1.0 + np.random.default_rng(s).normal(0, 0.01), parameters=10,
                      train_steps=5, train_examples=100)

    comparison = run_comparison({"method": method, "baseline": _noisy(0.0, 0.01),
                                 "off": _noisy(0.0, 0.01)},
                                method="method", baseline="baseline", control_method="off",
                                seed=0, looks=(4, 8, 16), effect_of_interest=_EOI)
    assert comparison.verdict == "pass" and comparison.control_verdict == "fail"
    assert len(calls) == 4  # decided at the first look
    assert comparison.arms["method"] == {"parameters": 10, "train_steps": 5,
                                         "train_examples": 100, "seeds": 4}
    result = comparison.claim_result(notes="n")
    assert isinstance(result, ClaimResult) and result.verdict == "pass"
    assert result.power["n_seeds"] == 4 and result.control.verdict == "fail"


def test_run_comparison_adds_seeds_until_the_control_decides():
    comparison = run_comparison({"method": _noisy(1.0), "baseline": _noisy(0.0),
                                 "off": _noisy(0.2, 0.5)},
                                method="method", baseline="baseline", control_method="off",
                                seed=0, looks=(4, 8, 16, 32), effect_of_interest=_EOI)
    assert comparison.verdict == "pass"
    assert len(comparison.seeds) > 4  # the control needed more seeds than the check


def test_a_check_contradicted_early_keeps_its_verdict_while_the_control_decides():
    # no effect: the check is contradicted at the first look, where the noisier control
    # is not decided yet; the seeds go on until the control fails decisively
    comparison = run_comparison({"method": _noisy(0.0, 0.005), "baseline": _noisy(0.001, 0.005),
                                 "off": _noisy(0.002, 0.6)},
                                method="method", baseline="baseline", control_method="off",
                                seed=0, looks=(4, 8, 16, 32, 64), effect_of_interest=_EOI)
    assert comparison.verdict == "contradicted" and comparison.decision.look == 4
    # the control did not decide at the first look (the first crossing fixes its look)
    assert comparison.control_verdict == "fail" and comparison.control_decision.look > 4
    assert len(comparison.seeds) == comparison.control_decision.look
    assert all(len(v) == len(comparison.seeds) for v in comparison.values.values())
    # the report's cell says that the bounds are the deciding look's, not all seeds'
    from skpaper.cli import _format_interval

    cell = _format_interval(comparison.claim_result(observed={}))
    assert cell.endswith(f"n={len(comparison.seeds)}, decided at 4")
    decided_last = run_comparison({"method": _noisy(0.0, 0.005), "baseline": _noisy(0.001, 0.005)},
                                  method="method", baseline="baseline", seed=0,
                                  looks=(4, 8), effect_of_interest=_EOI)
    assert _format_interval(decided_last.claim_result(observed={})).endswith("n=4")


def test_run_comparison_batched_arms_see_the_same_seeds():
    seen = {}

    def arm(name, shift):
        def run(seeds):
            seen.setdefault(name, []).extend(seeds)
            return [shift + np.random.default_rng(s).normal(0, 0.01) for s in seeds]
        return run

    run_comparison({"a": arm("a", 1.0), "b": arm("b", 0.0)}, method="a", baseline="b",
                   seed=3, looks=(2, 4), effect_of_interest=_EOI, batched=True)
    assert seen["a"] == seen["b"] and len(seen["a"]) >= 2


def test_run_comparison_rejects_bad_arms():
    with pytest.raises(ValueError, match="not among the arms"):
        run_comparison({"a": _noisy(0)}, method="a", baseline="zz", seed=0, looks=(2,),
                       effect_of_interest=_EOI)
    with pytest.raises(TypeError, match="EffectOfInterest"):
        run_comparison({"a": _noisy(0)}, method="a", baseline=None, seed=0, looks=(2,),
                       effect_of_interest=0.5)
    with pytest.raises(ValueError, match="non-finite"):
        run_comparison({"a": lambda s: float("nan")}, method="a", baseline=None, seed=0,
                       looks=(2,), effect_of_interest=_EOI)
    with pytest.raises(ValueError, match="source must be one of"):
        EffectOfInterest(0.1, "guess", "x")
    with pytest.raises(ValueError, match="reason"):
        EffectOfInterest(0.1, "ours", " ")


def test_decide_claim_flags_a_zero_spread_control():
    comparison = decide_claim([1.0, 1.2, 1.1], [0.0, 0.1, 0.0], effect_of_interest=_EOI,
                              control_method=[0.0, 0.1, 0.0])
    control = comparison.control_result()
    assert control.zero_spread and comparison.verdict == "pass"


# ---------------------------------------------------------------- shared fits

def test_shared_fits_are_charged_to_every_claim_that_uses_them(tmp_path, monkeypatch):
    @_registry.shared_cache(maxsize=4)
    def fit(n):
        time.sleep(0.3)
        return n

    def first(scale, seed, out_dir):
        fit(1)
        return ClaimResult(observed={"x": 1}, expected={"x": 1})

    def second(scale, seed, out_dir):
        fit(1)
        return ClaimResult(observed={"x": 1}, expected={"x": 1})

    claims = [_registry.Claim("share", f.__name__, "d", f, reported=True)
              for f in (first, second)]
    rows = [(c, _registry.run_claim(c, "smoke", 0, tmp_path)) for c in claims]
    walls = [r.runtime_s for _, r in rows]
    assert walls[0] > 0.3 and walls[1] < walls[0]
    _registry.apportion_runtimes(rows, tmp_path)
    charged = [r.runtime_s for _, r in rows]
    # the first claim computed the fit: charged half of it; the second is charged the other half
    assert charged[0] == pytest.approx(walls[0] - 0.15, abs=0.05)
    assert charged[1] == pytest.approx(walls[1] + 0.15, abs=0.05)
    for name in ("first", "second"):
        payload = json.loads((tmp_path / "share" / f"{name}.json").read_text())
        assert payload["runtime"]["shared_fits_s"] == pytest.approx(0.15, abs=0.05)


# ---------------------------------------------------------------- faults

@pytest.fixture
def fake_paper(monkeypatch):
    monkeypatch.setattr(_registry, "_PAPERS", {})
    monkeypatch.setattr(_registry, "_CLAIMS", {})
    monkeypatch.setattr(_registry, "_load_all", lambda: None)
    monkeypatch.setattr(_registry, "_INTERRUPTED", [])
    _registry.register_paper("fake", "Fake", "skpaper.fake")

    def register(claim_id, func):
        _registry.register_claim("fake", claim_id, claim_id, control="off",
                                 effect_of_interest=_EOI)(func)

    return register


def _reproduced(scale, seed, out_dir):
    return decide_claim([1.0, 1.1, 0.9], [0.0, 0.1, 0.0], effect_of_interest=_EOI,
                        control_method=[0.0, 0.05, 0.02]).claim_result()


def test_interrupt_exits_130_and_keeps_the_old_result(tmp_path, capsys, fake_paper):
    fake_paper("a", _reproduced)
    assert main(["reproduce", "fake", "--scale", "smoke", "--out", str(tmp_path)]) == 0
    before = (tmp_path / "fake" / "a.json").read_text()

    def interrupted(scale, seed, out_dir):
        raise KeyboardInterrupt

    def converted(scale, seed, out_dir):
        # an interrupt that a library (an import, say) turned into another exception
        _registry.note_interrupt()
        raise ImportError("partially initialized module 'torch'")

    for func in (interrupted, converted):
        _registry._CLAIMS.clear()
        fake_paper("a", func)
        capsys.readouterr()
        assert main(["reproduce", "fake", "--scale", "smoke", "--out", str(tmp_path)]) == 130
        assert "interrupted" in capsys.readouterr().err
        assert (tmp_path / "fake" / "a.json").read_text() == before
        assert not list((tmp_path / "fake").glob(".*.tmp"))


def test_full_disk_gives_one_line_and_exit_2(tmp_path, capsys, fake_paper, monkeypatch):
    fake_paper("a", _reproduced)

    def full(path, data):
        raise OSError(errno.ENOSPC, "No space left on device", str(path))

    monkeypatch.setattr(_registry, "write_atomic", full)
    assert main(["reproduce", "fake", "--scale", "smoke", "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "No space left" in err and "Traceback" not in err


def test_a_file_where_the_paper_folder_should_be(tmp_path, capsys, fake_paper):
    fake_paper("a", _reproduced)
    (tmp_path / "fake").write_text("not a folder")
    assert main(["reproduce", "fake", "--scale", "smoke", "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: cannot write the results") and err.count("\n") == 1


def test_atomic_write_leaves_the_old_file_on_failure(tmp_path, monkeypatch):
    import os

    path = tmp_path / "r.json"
    _registry.write_json_atomic(path, {"a": 1})

    def broken_replace(src, dst):
        raise OSError(errno.EIO, "I/O error")

    monkeypatch.setattr(os, "replace", broken_replace)
    with pytest.raises(OSError):
        _registry.write_json_atomic(path, {"a": 2})
    assert json.loads(path.read_text()) == {"a": 1}
    assert [p.name for p in tmp_path.iterdir()] == ["r.json"]


def test_out_is_checked_before_the_papers_are_imported(tmp_path, capsys, monkeypatch):
    from skpaper import cli

    def must_not_run(targets):
        raise AssertionError("the paper modules were imported before --out was checked")

    monkeypatch.setattr(cli, "_select_claims", must_not_run)
    a_file = tmp_path / "f"
    a_file.write_text("")
    for out in ("", "   ", str(a_file)):
        assert main(["reproduce", "all", "--out", out]) == 2
        assert capsys.readouterr().err.startswith("error: --out ")


def test_list_results_reports_an_unknown_status(tmp_path, capsys):
    folder = tmp_path / "framework-selfcheck"
    folder.mkdir()
    (folder / "mlp-matches-sklearn-digits.json").write_text(json.dumps(
        {"paper": "framework-selfcheck", "claim": "mlp-matches-sklearn-digits",
         "status": "not reproduced"}))
    assert main(["list", "--results", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "unknown status 'not reproduced'" in out and "1 unknown" in out


def test_single_claim_and_progress(tmp_path, capsys, fake_paper):
    fake_paper("a", _reproduced)

    def sequential(scale, seed, out_dir):
        return run_comparison({"m": _noisy(1.0), "b": _noisy(0.0), "off": _noisy(0.0, 0.04)},
                              method="m", baseline="b", control_method="off", seed=seed,
                              looks=(4, 8), effect_of_interest=_EOI).claim_result()

    fake_paper("b", sequential)
    assert main(["reproduce", "fake/b", "--scale", "smoke", "--out", str(tmp_path)]) == 0
    captured = capsys.readouterr()
    assert "[REPRODUCED] fake/b" in captured.out and "fake/a" not in captured.out
    assert "fake/b: 4/8 seeds: check pass" in captured.err
    assert main(["reproduce", "fake/zz", "--out", str(tmp_path)]) == 2
    assert "has no claim 'zz'" in capsys.readouterr().err
    report = (tmp_path / "report.md").read_text()
    assert "total wall time" in report and "not meaningful" in report
    assert "| fake | b | reproduced (smoke) | 0.5 (ours) |" in report


def test_coverage_comparison_spends_the_planned_schedule_and_runs_each_trial_once():
    from skpaper.papers._comparison import coverage_comparison

    calls = []

    def covered(s):
        calls.append(s)
        return float(np.random.default_rng(s).random() < 0.95)

    def control(s):
        return float(np.random.default_rng(s + 1).random() < 0.7)

    looks = (20, 40, 80)
    eoi = EffectOfInterest(0.95, "ours", "test")
    under, high, verdict = coverage_comparison(
        {"method": covered, "control": control}, method="method", control_method="control",
        seed=3, looks=looks, effect_of_interest=eoi, under=0.85, over=0.99, metric="coverage")
    levels = spending_schedule(looks)
    # The first look spends only its share of the level, not all of it.
    assert high.levels[0] == pytest.approx(levels[0])
    assert under.decision.levels[0] == pytest.approx(levels[0])
    assert len(calls) == len(set(calls)) == high.n
    assert (verdict == "pass") == (under.verdict == high.verdict == "pass")
