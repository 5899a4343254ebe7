"""The ``skpaper`` command: list papers and reproduce their claims.

Examples
--------
``skpaper list``
``skpaper reproduce all --scale quick --seed 0 --out results``
``skpaper reproduce laurel --scale smoke --strict``
"""

import argparse
import sys
import time
from pathlib import Path

from . import __version__


def _build_parser():
    parser = argparse.ArgumentParser(
        prog="skpaper", description="Reproduce the claims of the papers implemented in skpaper."
    )
    parser.add_argument("--version", action="version", version=f"skpaper {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)

    sub.add_parser("list", help="list the papers, self-checks and their claims")

    rep = sub.add_parser("reproduce", help="run the claims of one paper, or of all")
    rep.add_argument("paper", help="a paper slug from `skpaper list`, or 'all'")
    rep.add_argument("--scale", choices=("smoke", "quick", "full"), default="quick",
                     help="smoke: seconds; quick: about a minute per paper (default); "
                          "full: paper-sized")
    rep.add_argument("--seed", type=int, default=0, help="seed of every random draw")
    rep.add_argument("--out", default="results", help="output folder (default: results)")
    rep.add_argument("--strict", action="store_true",
                     help="exit non-zero when a claim is not reproduced")
    return parser


def _cmd_list(out):
    from .papers import get_claims, get_papers

    claims = get_claims()
    for kind, heading in (("paper", "Papers"), ("selfcheck", "Framework self-checks")):
        out.write(f"{heading}:\n")
        for paper in get_papers(kind):
            out.write(f"  {paper.slug}  ({paper.module})  {paper.title}\n")
            for claim in (c for c in claims if c.paper == paper.slug):
                out.write(f"      - {claim.claim_id}: {claim.description}\n")
    return 0


def _format_observed(observed, limit=4):
    items = []
    for key, value in list(observed.items())[:limit]:
        if isinstance(value, float):
            items.append(f"{key}={value:.4g}")
        elif isinstance(value, (int, str, bool)):
            items.append(f"{key}={value}")
    return ", ".join(items)


def write_report(rows, out_dir, scale, seed):
    """Write ``report.md``: one table row per claim. Returns its path."""
    lines = [
        "# skpaper reproduction report",
        "",
        f"scale: `{scale}`, seed: `{seed}`, skpaper {__version__}",
        "",
        "| paper | claim | status | runtime (s) | observed | plots |",
        "|---|---|---|---|---|---|",
    ]
    for claim, result in rows:
        status = "error" if result.error else ("reproduced" if result.passed
                                               else "not reproduced")
        plots = " ".join(f"[{a}]({claim.paper}/{a})" for a in result.artifacts)
        lines.append(f"| {claim.paper} | {claim.claim_id} | {status} | "
                     f"{result.runtime_s:.1f} | {_format_observed(result.observed)} | {plots} |")
    notes = [(c, r) for c, r in rows if r.notes or r.error]
    if notes:
        lines += ["", "## Notes", ""]
        for claim, result in notes:
            text = result.notes
            if result.error:
                text = (text + "\n\n" if text else "") + "```\n" + result.error.strip() + "\n```"
            lines.append(f"- **{claim.key}**: {text}")
    path = Path(out_dir) / "report.md"
    path.write_text("\n".join(lines) + "\n")
    return path


def _cmd_reproduce(args, out):
    import matplotlib

    matplotlib.use("Agg")
    from tqdm.auto import tqdm

    from .papers import get_claims, run_claim

    try:
        claims = get_claims(args.paper)
    except ValueError as exc:
        out.write(f"error: {exc}\n")
        return 2
    out_dir = Path(args.out)
    out_dir.mkdir(parents=True, exist_ok=True)
    rows = []
    start = time.perf_counter()
    for claim in tqdm(claims, desc="claims", disable=None, unit="claim"):
        result = run_claim(claim, scale=args.scale, seed=args.seed, out_dir=out_dir)
        rows.append((claim, result))
        status = "ERROR" if result.error else ("ok" if result.passed else "NOT REPRODUCED")
        out.write(f"[{status}] {claim.key} ({result.runtime_s:.1f}s)\n")
        if result.error:
            out.write(result.error)
    report = write_report(rows, out_dir, args.scale, args.seed)
    n_err = sum(bool(r.error) for _, r in rows)
    n_fail = sum((not r.passed) and not r.error for _, r in rows)
    out.write(f"{len(rows)} claims, {len(rows) - n_err - n_fail} reproduced, {n_fail} not "
              f"reproduced, {n_err} errors in {time.perf_counter() - start:.1f}s; "
              f"report: {report}\n")
    if n_err or (args.strict and n_fail):
        return 1
    return 0


def main(argv=None, out=None):
    """Entry point of the ``skpaper`` console script; returns the exit code."""
    out = sys.stdout if out is None else out
    args = _build_parser().parse_args(argv)
    if args.command == "list":
        return _cmd_list(out)
    return _cmd_reproduce(args, out)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
