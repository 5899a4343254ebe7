"""Every registered claim runs at smoke scale; the CLI lists and reproduces."""

import json
import subprocess
import sys

import pytest

from skpaper.cli import main
from skpaper.papers import (
    SCALES,
    STATUSES,
    ClaimResult,
    ControlResult,
    get_claims,
    get_papers,
    run_claim,
)

CLAIMS = get_claims()


@pytest.mark.parametrize("claim", CLAIMS, ids=lambda c: c.key)
def test_claim_runs_at_smoke_scale(claim, tmp_path):
    result = run_claim(claim, scale="smoke", seed=0, out_dir=tmp_path)
    assert result.error is None, result.error
    assert result.status in STATUSES and result.status != "error"
    assert isinstance(result.passed, bool)
    assert {"n_seeds", "sd", "seeds_needed"} <= set(payload_power(tmp_path, claim))
    assert result.observed and result.expected
    payload = json.loads((tmp_path / claim.paper / f"{claim.claim_id}.json").read_text())
    assert payload["claim"] == claim.claim_id and payload["scale"] == "smoke"
    assert payload["status"] == result.status
    # where the numbers come from, and what is asserted
    assert payload["paper_statement"].strip() and payload["check"].strip(), claim.key
    assert {"skpaper", "numpy", "scipy", "scikit-learn", "torch",
            "torch_threads"} <= set(payload["environment"])
    if claim.reported:
        assert payload["control"] is None and payload["check_passed"] is None
    else:
        # an asserting claim names its negative control and reports it
        assert claim.control, f"{claim.key} asserts without a negative control"
        assert payload["control"]["name"] == claim.control
        assert isinstance(payload["control"]["passed"], bool) and payload["control"]["observed"]
        eoi = payload["effect_of_interest"]
        assert eoi["source"] in ("paper", "ours") and eoi["reason"].strip(), claim.key
    for artifact in result.artifacts:
        assert (tmp_path / claim.paper / artifact).stat().st_size > 0


def payload_power(out_dir, claim):
    payload = json.loads((out_dir / claim.paper / f"{claim.claim_id}.json").read_text())
    return payload["power"]


@pytest.mark.parametrize("claim", [c for c in CLAIMS if not c.reported and c.control],
                         ids=lambda c: c.key)
def test_every_asserting_claim_declares_its_effect_of_interest(claim):
    eoi = claim.effect_of_interest
    assert eoi is not None, f"{claim.key} declares no effect of interest"
    assert eoi.source in ("paper", "ours") and len(eoi.reason.strip()) > 10


def test_papers_have_claims_and_slugs_match_modules():
    papers = get_papers()
    assert any(p.kind == "selfcheck" for p in papers)
    for paper in papers:
        assert any(c.paper == paper.slug for c in CLAIMS), f"{paper.slug} has no claim"
        if paper.kind == "paper":
            module = sys.modules[f"skpaper.papers.{paper.slug.replace('-', '_')}"]
            assert module.SLUG == paper.slug


def test_get_claims_rejects_unknown_paper():
    with pytest.raises(ValueError, match="paper must be 'all' or one of"):
        get_claims("no-such-paper")


def test_run_claim_records_errors_and_rejects_bad_scale(tmp_path):
    from skpaper.papers import Claim

    def broken(scale, seed, out_dir):
        raise RuntimeError("boom")

    def wrong_type(scale, seed, out_dir):
        return {"passed": True}

    result = run_claim(Claim("x", "broken", "fails", broken), "smoke", 0, tmp_path)
    assert not result.passed and "RuntimeError: boom" in result.error
    result = run_claim(Claim("x", "wrong", "bad type", wrong_type), "smoke", 0, tmp_path)
    assert "must return a ClaimResult" in result.error
    with pytest.raises(ValueError, match="scale must be one of"):
        run_claim(Claim("x", "ok", "", broken), "huge", 0, tmp_path)
    assert SCALES == ("smoke", "quick", "full")


def test_claim_result_to_dict_is_json_ready():
    import numpy as np

    result = ClaimResult(observed={"a": np.float64(0.5), "b": np.arange(2), "c": float("nan")},
                         expected={"a": 1}, passed=True)
    json.dumps(result.to_dict())
    assert result.to_dict()["observed"] == {"a": 0.5, "b": [0, 1], "c": "nan"}


def test_cli_list_and_reproduce_selfcheck(tmp_path, capsys):
    assert main(["list"]) == 0
    listing = capsys.readouterr().out
    assert "Framework self-checks:" in listing and "framework-selfcheck" in listing
    code = main(["reproduce", "framework-selfcheck", "--scale", "smoke", "--out",
                 str(tmp_path), "--strict"])
    out = capsys.readouterr().out
    assert code == 0, out
    report = (tmp_path / "report.md").read_text()
    assert "| framework-selfcheck | mlp-matches-sklearn-digits |" in report
    assert (tmp_path / "framework-selfcheck" / "mlp_vs_sklearn_digits.png").exists()


def test_cli_exit_codes(tmp_path, capsys, monkeypatch):
    from skpaper.papers import EffectOfInterest, _registry, decide_claim

    assert main(["reproduce", "no-such-paper", "--out", str(tmp_path)]) == 2
    assert "paper must be 'all' or one of" in capsys.readouterr().err
    eoi = EffectOfInterest(0.5, "ours", "half a unit")

    def contradicted(scale, seed, out_dir):
        return decide_claim([0.0, 0.01, -0.01, 0.0], [0.0] * 4, effect_of_interest=eoi,
                            control_method=[0.0, 0.02, -0.01, 0.01]).claim_result()

    def inconclusive(scale, seed, out_dir):
        return ClaimResult(observed={"x": 1.0}, expected={"x": 2.0}, passed=False,
                           control=ControlResult({"x": 0.5}, False))

    def uninformative(scale, seed, out_dir):
        return decide_claim([1.0, 1.1, 0.9], [0.0, 0.1, 0.0], effect_of_interest=eoi,
                            control_method=[1.0, 1.05, 0.95]).claim_result()

    def reproduced(scale, seed, out_dir):
        return decide_claim([1.0, 1.1, 0.9], [0.0, 0.1, 0.0], effect_of_interest=eoi,
                            control_method=[0.0, 0.05, 0.02]).claim_result()

    def figure(scale, seed, out_dir):
        return ClaimResult(observed={"x": 3.0}, expected={"x": "shown"})

    def erroring(scale, seed, out_dir):
        raise ValueError("broken claim")

    monkeypatch.setattr(_registry, "_PAPERS", {})
    monkeypatch.setattr(_registry, "_CLAIMS", {})
    monkeypatch.setattr(_registry, "_load_all", lambda: None)
    _registry.register_paper("fake", "Fake", "skpaper.fake")

    def register(claim_id, func, **kwargs):
        _registry.register_claim("fake", claim_id, claim_id, **kwargs)(func)

    register("ok", reproduced, control="off", effect_of_interest=eoi)
    register("fig", figure, reported=True)
    args = ["reproduce", "fake", "--scale", "smoke", "--out", str(tmp_path)]
    assert main(args + ["--strict"]) == 0
    register("same", uninformative, control="off", effect_of_interest=eoi)
    assert main(args) == 0
    assert main(args + ["--strict"]) == 1
    summary = capsys.readouterr().out
    assert ("3 paper claims: 1 reproduced, 0 contradicted, 0 inconclusive, 1 uninformative, "
            "1 reported, 0 error" in summary)
    for claim_id, func in (("against", contradicted), ("undecided", inconclusive)):
        register(claim_id, func, control="off", effect_of_interest=eoi)
        assert main(args) == 0
        assert main(args + ["--strict"]) == 1
    register("err", erroring, control="off", effect_of_interest=eoi)
    assert main(args) == 1
    report = (tmp_path / "report.md").read_text()
    assert "broken claim" in report
    for status in ("reproduced", "contradicted", "inconclusive", "uninformative", "reported",
                   "error"):
        assert f"| {status} | 1 |" in report
    assert main(["list", "--results", str(tmp_path)]) == 0
    listing = capsys.readouterr().out
    assert "same [uninformative] (control: off)" in listing
    assert ("1 reproduced, 1 contradicted, 1 inconclusive, 1 uninformative, 1 reported, "
            "1 error" in listing)


@pytest.mark.parametrize("argv, message", [
    (["reproduce", "all", "--seed", "-1"], "--seed: must be in"),
    (["reproduce", "all", "--seed", str(10**23)], "--seed: must be in"),
    (["reproduce", "all", "--seed", "x"], "--seed: must be an integer"),
    (["reproduce", "all", "--threads", "0"], "--threads: must be in"),
])
def test_cli_rejects_bad_arguments_up_front(argv, message, capsys):
    with pytest.raises(SystemExit) as excinfo:
        main(argv)
    assert excinfo.value.code == 2
    captured = capsys.readouterr()
    assert message in captured.err and not captured.out


def test_cli_rejects_unwritable_out(tmp_path, capsys):
    a_file = tmp_path / "a_file"
    a_file.write_text("")
    for out in (str(a_file), str(a_file / "sub"), "/proc/skpaper-x"):
        assert main(["reproduce", "framework-selfcheck", "--scale", "smoke", "--out", out]) == 2
        captured = capsys.readouterr()
        assert captured.err.startswith("error: --out ") and captured.err.count("\n") == 1
        assert "Traceback" not in captured.err + captured.out
    assert main(["list", "--results", str(a_file)]) == 2


def test_python_dash_m_entry_point():
    proc = subprocess.run([sys.executable, "-m", "skpaper", "--version"], capture_output=True,
                          text=True, check=True)
    assert proc.stdout.startswith("skpaper ")
