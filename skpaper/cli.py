"""The ``skpaper`` command: list papers and reproduce their claims.

Examples
--------
``skpaper list``
``skpaper list --results results``
``skpaper reproduce all --scale quick --seed 0 --out results``
``skpaper reproduce laurel --scale smoke --strict``

A claim ends in one of five statuses (see :mod:`skpaper.papers._registry`):
reproduced, not reproduced, uninformative (its negative control passed too),
reported (asserts nothing) and error. ``--strict`` exits with 1 when any claim
is not reproduced, uninformative or an error; an error always does.
"""

import argparse
import json
import sys
import time
from pathlib import Path

from . import __version__

_MAX_SEED = 2**32 - 1


def _seed(text):
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be an integer, got {text!r}") from None
    if not 0 <= value <= _MAX_SEED:
        raise argparse.ArgumentTypeError(f"must be in [0, {_MAX_SEED}], got {value}")
    return value


def _threads(text):
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be an integer, got {text!r}") from None
    if not 1 <= value <= 1024:
        raise argparse.ArgumentTypeError(f"must be in [1, 1024], got {value}")
    return value


def _build_parser():
    parser = argparse.ArgumentParser(
        prog="skpaper", description="Reproduce the claims of the papers implemented in skpaper."
    )
    parser.add_argument("--version", action="version", version=f"skpaper {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)

    lst = sub.add_parser("list", help="list the papers, self-checks and their claims")
    lst.add_argument("--results", default=None,
                     help="a folder written by `skpaper reproduce`: show each claim's status "
                          "from it, and the five counts")

    rep = sub.add_parser("reproduce", help="run the claims of one paper, or of all")
    rep.add_argument("paper", help="a paper slug from `skpaper list`, or 'all'")
    rep.add_argument("--scale", choices=("smoke", "quick", "full"), default="quick",
                     help="smoke: seconds; quick: about a minute per paper (default); "
                          "full: paper-sized")
    rep.add_argument("--seed", type=_seed, default=0,
                     help=f"seed of every random draw, in [0, {_MAX_SEED}] (default: 0)")
    rep.add_argument("--out", default="results", help="output folder (default: results)")
    rep.add_argument("--threads", type=_threads, default=None,
                     help="torch and BLAS threads during each claim (default: 1)")
    rep.add_argument("--strict", action="store_true",
                     help="exit non-zero when a claim is not reproduced, uninformative or "
                          "an error")
    return parser


def _count_statuses(statuses):
    from .papers import STATUSES

    counts = dict.fromkeys(STATUSES, 0)
    for status in statuses:
        counts[status] += 1
    return counts


def _format_counts(counts):
    return ", ".join(f"{n} {status}" for status, n in counts.items())


def _read_statuses(results_dir):
    """Statuses of the claim JSON files under ``results_dir``: {claim key: status}."""
    statuses = {}
    for path in sorted(Path(results_dir).glob("*/*.json")):
        try:
            payload = json.loads(path.read_text())
            statuses[f"{payload['paper']}/{payload['claim']}"] = payload["status"]
        except (OSError, ValueError, KeyError, TypeError):
            continue
    return statuses


def _claim_kind(claim):
    if claim.reported:
        return "reported"
    if claim.control is None:
        return "no control: reported"
    return f"control: {claim.control}"


def _cmd_list(args, out, err):
    from .papers import get_claims, get_papers

    statuses = {}
    if args.results is not None:
        if not Path(args.results).is_dir():
            err.write(f"error: --results {args.results!r} is not a folder\n")
            return 2
        statuses = _read_statuses(args.results)
    claims = get_claims()
    for kind, heading in (("paper", "Papers"), ("selfcheck", "Framework self-checks")):
        out.write(f"{heading}:\n")
        for paper in get_papers(kind):
            out.write(f"  {paper.slug}  ({paper.module})  {paper.title}\n")
            for claim in (c for c in claims if c.paper == paper.slug):
                status = f" [{statuses.get(claim.key, 'not run')}]" if args.results else ""
                out.write(f"      - {claim.claim_id}{status} ({_claim_kind(claim)}): "
                          f"{claim.description}\n")
    n_asserted = sum(not c.reported and c.control is not None for c in claims)
    out.write(f"{len(claims)} claims: {n_asserted} asserted with a negative control, "
              f"{len(claims) - n_asserted} reported\n")
    if args.results is not None:
        known = [statuses[c.key] for c in claims if c.key in statuses]
        out.write(f"in {args.results}: {_format_counts(_count_statuses(known))}, "
                  f"{len(claims) - len(known)} not run\n")
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
    """Write ``report.md``: the five status counts and one table row per claim. Returns its path."""
    counts = _count_statuses(r.status for _, r in rows)
    lines = [
        "# skpaper reproduction report",
        "",
        f"scale: `{scale}`, seed: `{seed}`, skpaper {__version__}",
        "",
        f"{len(rows)} claims: {_format_counts(counts)}.",
        "",
        "| status | claims |",
        "|---|---|",
        *(f"| {status} | {n} |" for status, n in counts.items()),
        "",
        "| paper | claim | status | control | runtime (s) | observed | plots |",
        "|---|---|---|---|---|---|---|",
    ]
    for claim, result in rows:
        plots = " ".join(f"[{a}]({claim.paper}/{a})" for a in result.artifacts)
        if result.control is None:
            control = "none"
        else:
            control = (f"{result.control.name}: "
                       f"{'passes' if result.control.passed else 'fails'}")
        lines.append(f"| {claim.paper} | {claim.claim_id} | {result.status} | {control} | "
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


def _writable_folder(path):
    """None when ``path`` is (or can be made) a writable folder, else the reason why not."""
    path = Path(path)
    try:
        path.mkdir(parents=True, exist_ok=True)
        probe = path / ".skpaper-write-test"
        probe.write_text("")
        probe.unlink()
    except OSError as exc:
        return exc.strerror or type(exc).__name__
    return None


def _cmd_reproduce(args, out, err):
    from .papers import get_claims, run_claim

    try:
        claims = get_claims(args.paper)
    except ValueError as exc:
        err.write(f"error: {exc}\n")
        return 2
    reason = _writable_folder(args.out)
    if reason is not None:
        err.write(f"error: --out {args.out!r} is not a writable folder ({reason})\n")
        return 2

    import matplotlib

    matplotlib.use("Agg")
    from tqdm.auto import tqdm

    out_dir = Path(args.out)
    rows = []
    start = time.perf_counter()
    for claim in tqdm(claims, desc="claims", disable=None, unit="claim"):
        result = run_claim(claim, scale=args.scale, seed=args.seed, out_dir=out_dir,
                           threads=args.threads)
        rows.append((claim, result))
        out.write(f"[{result.status.upper()}] {claim.key} ({result.runtime_s:.1f}s)\n")
        if result.error:
            out.write(result.error.rstrip() + "\n")
    report = write_report(rows, out_dir, args.scale, args.seed)
    counts = _count_statuses(r.status for _, r in rows)
    out.write(f"{len(rows)} claims: {_format_counts(counts)} in "
              f"{time.perf_counter() - start:.1f}s; report: {report}\n")
    failing = counts["not reproduced"] + counts["uninformative"]
    if counts["error"] or (args.strict and failing):
        return 1
    return 0


def main(argv=None, out=None, err=None):
    """Entry point of the ``skpaper`` console script; returns the exit code."""
    out = sys.stdout if out is None else out
    err = sys.stderr if err is None else err
    args = _build_parser().parse_args(argv)
    if args.command == "list":
        return _cmd_list(args, out, err)
    return _cmd_reproduce(args, out, err)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
