"""The ``skpaper`` command: list papers and reproduce their claims.

Examples
--------
``skpaper list``
``skpaper list --results results``
``skpaper reproduce all --scale quick --seed 0 --out results --jobs 2``
``skpaper reproduce laurel --scale smoke --strict``
``skpaper reproduce gmm-ci-test/power-vs-dct``

A claim ends in one of six statuses (see :mod:`skpaper.papers._registry`):
reproduced, contradicted, inconclusive (neither decided at the claim's
budget), uninformative (its negative control did not fail decisively),
reported (asserts nothing) and error. ``--strict`` exits with 1 when any
claim is contradicted, inconclusive, uninformative or an error; an error
always does. An interrupt (Ctrl-C) exits with 130 and records nothing for
the claim it interrupted; a results folder that cannot be written exits
with 2 and one line on stderr.
"""

import argparse
import json
import os
import signal
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


def _jobs(text):
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be an integer, got {text!r}") from None
    if not 1 <= value <= 256:
        raise argparse.ArgumentTypeError(f"must be in [1, 256], got {value}")
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
                          "from it, and the six counts")

    rep = sub.add_parser("reproduce", help="run the claims of one paper, or of all")
    rep.add_argument("paper", nargs="+",
                     help="paper slugs from `skpaper list`, 'all', or single claims as "
                          "<paper>/<claim>")
    rep.add_argument("--scale", choices=("smoke", "quick", "full"), default="quick",
                     help="smoke: seconds, figures not meaningful; quick: the reports' scale "
                          "(default; docs/results gives each paper's measured time); "
                          "full: paper-sized")
    rep.add_argument("--seed", type=_seed, default=0,
                     help=f"seed of every random draw, in [0, {_MAX_SEED}] (default: 0)")
    rep.add_argument("--out", default="results", help="output folder (default: results)")
    rep.add_argument("--threads", type=_threads, default=None,
                     help="torch and BLAS threads during each claim (default: 1)")
    rep.add_argument("--jobs", type=_jobs, default=1,
                     help="papers run in this many worker processes (default: 1); the "
                          "figures do not depend on it")
    rep.add_argument("--strict", action="store_true",
                     help="exit non-zero when a claim is contradicted, inconclusive, "
                          "uninformative or an error")
    return parser


def _count_statuses(statuses):
    """Counts per status; statuses this version does not know are counted under ``unknown``."""
    from .papers import STATUSES

    counts = dict.fromkeys(STATUSES, 0)
    for status in statuses:
        if status in counts:
            counts[status] += 1
        else:
            counts["unknown"] = counts.get("unknown", 0) + 1
    return counts


def _format_counts(counts):
    return ", ".join(f"{n} {status}" for status, n in counts.items())


def _read_statuses(results_dir):
    """Statuses of the claim JSON files under ``results_dir``: {claim key: status}."""
    statuses = {}
    for path in sorted(Path(results_dir).glob("*/*.json")):
        try:
            payload = json.loads(path.read_text())
            statuses[f"{payload['paper']}/{payload['claim']}"] = str(payload["status"])
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
    from .papers import STATUSES, get_claims, get_papers

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
                status = ""
                if args.results:
                    status = statuses.get(claim.key, "not run")
                    status = f" [{status}]" if status in STATUSES or status == "not run" \
                        else f" [unknown status {status!r}: written by another version?]"
                out.write(f"      - {claim.claim_id}{status} ({_claim_kind(claim)}): "
                          f"{claim.description}\n")
    kinds = {p.slug: p.kind for p in get_papers()}
    paper_claims = [c for c in claims if kinds.get(c.paper) == "paper"]
    n_asserted = sum(not c.reported and c.control is not None for c in paper_claims)
    out.write(f"{len(paper_claims)} paper claims: {n_asserted} asserted with a negative "
              f"control and an effect of interest, {len(paper_claims) - n_asserted} reported; "
              f"{len(claims) - len(paper_claims)} self-check claim(s)\n")
    if args.results is not None:
        for kind, label in (("paper", "paper claims"), ("selfcheck", "self-check claims")):
            mine = [c for c in claims if kinds.get(c.paper) == kind]
            known = [statuses[c.key] for c in mine if c.key in statuses]
            out.write(f"in {args.results}, {len(mine)} {label}: "
                      f"{_format_counts(_count_statuses(known))}, "
                      f"{len(mine) - len(known)} not run\n")
    return 0


def _format_observed(observed, limit=4):
    items = []
    for key, value in list(observed.items())[:limit]:
        if isinstance(value, float):
            items.append(f"{key}={value:.4g}")
        elif isinstance(value, (int, str, bool)):
            items.append(f"{key}={value}")
    return ", ".join(items)


def _format_interval(result):
    """``mean [lower, upper], n=N`` of the check; ``, decided at L`` when an earlier look
    fixed the verdict (the bounds are that look's, the mean is over all N seeds, which
    ran on for the control)."""
    check = result.observed.get("check") if isinstance(result.observed, dict) else None
    if not isinstance(check, dict) or "lower_bound" not in check:
        return ""
    text = (f"{check.get('mean', float('nan')):.4g} [{check['lower_bound']:.4g}, "
            f"{check['upper_bound']:.4g}], n={check.get('n')}")
    look, n = check.get("decided_at"), check.get("n")
    if (isinstance(look, int) and isinstance(n, int) and look < n
            and check.get("verdict") != "undecided"):
        text += f", decided at {look}"
    return text


def _format_control(result):
    if result.control is None:
        return "none"
    verdict = result.control.verdict or ("passes" if result.control.passed else
                                         "fails, no bound")
    return f"{result.control.name}: {verdict}"


def _count_line(rows, kinds):
    parts = []
    for kind, label in (("paper", "paper claim"), ("selfcheck", "self-check claim")):
        mine = [r.status for c, r in rows if kinds.get(c.paper, "paper") == kind]
        if mine:
            plural = "" if len(mine) == 1 else "s"
            parts.append(f"{len(mine)} {label}{plural}: "
                         f"{_format_counts(_count_statuses(mine))}")
    return "; ".join(parts)


def write_report(rows, out_dir, scale, seed, *, wall_s=None, load=None, jobs=1):
    """Write ``report.md``: the six status counts, the run's cost, one row per claim.

    Parameters
    ----------
    rows : list of (Claim, ClaimResult)
    out_dir : str or path
    scale : str
    seed : int
    wall_s : float or None, default=None
        Total wall time of the run.
    load : tuple of float or None, default=None
        One-minute load average at the start and at the end of the run.
    jobs : int, default=1

    Returns
    -------
    path : pathlib.Path
    """
    from .papers import get_papers
    from .papers._registry import write_atomic

    kinds = {p.slug: p.kind for p in get_papers()}
    papers = [(c, r) for c, r in rows if kinds.get(c.paper, "paper") == "paper"]
    counts = _count_statuses(r.status for _, r in papers)
    lines = [
        "# skpaper reproduction report",
        "",
        f"scale: `{scale}`, seed: `{seed}`, jobs: `{jobs}`, skpaper {__version__}",
        "",
    ]
    if wall_s is not None:
        cost = f"total wall time {wall_s:.0f} s"
        if load is not None:
            cost += (f"; one-minute load average {load[0]:.2f} at the start, {load[1]:.2f} at "
                     f"the end, on {os.cpu_count()} CPUs")
        lines += [cost + ".", ""]
    if scale == "smoke":
        lines += ["**Smoke scale: the figures and statuses are not meaningful** (a few seeds, "
                  "tiny budgets: it checks that every claim runs).", ""]
    lines += [
        f"{_count_line(rows, kinds)}.",
        "",
        "| status (paper claims) | claims |",
        "|---|---|",
        *(f"| {status} | {n} |" for status, n in counts.items()),
        "",
        "| paper | claim | status | effect of interest | check: mean [bounds], seeds | "
        "control | runtime (s) | observed | plots |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for claim, result in rows:
        plots = " ".join(f"[{a}]({claim.paper}/{a})" for a in result.artifacts)
        eoi = claim.effect_of_interest
        eoi_text = f"{eoi.value:g} ({eoi.source})" if eoi is not None else ""
        status = f"{result.status} (smoke)" if scale == "smoke" else result.status
        lines.append(f"| {claim.paper} | {claim.claim_id} | {status} | {eoi_text} | "
                     f"{_format_interval(result)} | {_format_control(result)} | "
                     f"{result.runtime_s:.1f} | {_format_observed(result.observed)} | "
                     f"{plots} |")
    lines += ["", "## What each claim checks", ""]
    for claim, result in rows:
        eoi = claim.effect_of_interest
        lines.append(f"- **{claim.key}** ({result.status}). Paper: {claim.paper_statement} "
                     f"Checked: {claim.check}"
                     + (f" Effect of interest: {eoi.value:g} ({eoi.source}: {eoi.reason})."
                        if eoi is not None else "")
                     + (f" Control: {claim.control}." if claim.control else ""))
    notes = [(c, r) for c, r in rows if r.notes or r.error]
    if notes:
        lines += ["", "## Notes", ""]
        for claim, result in notes:
            text = result.notes
            if result.error:
                text = (text + "\n\n" if text else "") + "```\n" + result.error.strip() + "\n```"
            lines.append(f"- **{claim.key}**: {text}")
    path = Path(out_dir) / "report.md"
    write_atomic(path, ("\n".join(lines) + "\n").encode())
    return path


def _writable_folder(path):
    """None when ``path`` is (or can be made) a writable folder, else the reason why not."""
    if not str(path).strip():
        return "an empty path"
    path = Path(path)
    try:
        path.mkdir(parents=True, exist_ok=True)
        probe = path / ".skpaper-write-test"
        probe.write_text("")
        probe.unlink()
    except OSError as exc:
        return exc.strerror or type(exc).__name__
    return None


def _select_claims(targets):
    """The claims named by ``targets`` (``all``, slugs, or ``<slug>/<claim>``), in order."""
    if isinstance(targets, str):
        targets = [targets]
    selected = {}
    for target in targets:
        for claim in _select_one(target):
            selected.setdefault(claim.key, claim)
    return list(selected.values())


def _select_one(target):
    from .papers import get_claims

    if "/" in target:
        slug, claim_id = target.split("/", 1)
        claims = [c for c in get_claims(slug) if c.claim_id == claim_id]
        if not claims:
            known = ", ".join(c.claim_id for c in get_claims(slug))
            raise ValueError(f"paper {slug!r} has no claim {claim_id!r}; its claims: {known}")
        return claims
    return get_claims(target)


def _run_paper(keys, scale, seed, out_dir, threads, progress=None):
    """Run the claims ``keys`` (of one paper) in order; apportion their shared fits."""
    from .papers import get_claims, run_claim
    from .papers._comparison import progress_hook
    from .papers._registry import apportion_runtimes

    by_key = {c.key: c for c in get_claims()}
    rows = []
    for key in keys:
        claim = by_key[key]
        if progress is not None:
            with progress_hook(lambda message, key=key: progress(f"  {key}: {message}")):
                result = run_claim(claim, scale=scale, seed=seed, out_dir=out_dir,
                                   threads=threads)
        else:
            result = run_claim(claim, scale=scale, seed=seed, out_dir=out_dir, threads=threads)
        rows.append((key, result))
    apportion_runtimes([(by_key[k], r) for k, r in rows], out_dir)
    return rows


def _worker_init(cores):
    # The parent handles Ctrl-C; workers stop when the pool is shut down.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    from .papers._environment import CORES_VARIABLE

    os.environ[CORES_VARIABLE] = str(cores)
    import matplotlib

    matplotlib.use("Agg")


def _on_sigint(signum, frame):
    from .papers._registry import note_interrupt

    note_interrupt()
    raise KeyboardInterrupt


def _cmd_reproduce(args, out, err):
    # The folder is checked before any paper module is imported (that takes seconds).
    reason = _writable_folder(args.out)
    if reason is not None:
        err.write(f"error: --out {args.out!r} is not a writable folder ({reason})\n")
        return 2
    try:
        claims = _select_claims(args.paper)
    except ValueError as exc:
        err.write(f"error: {exc}\n")
        return 2

    try:
        import matplotlib
    except ImportError:
        err.write("error: skpaper reproduce draws figures and needs matplotlib: "
                  "pip install 'skpaper[plots]'\n")
        return 2
    matplotlib.use("Agg")
    from tqdm.auto import tqdm

    out_dir = Path(args.out)
    groups = {}
    for claim in claims:
        groups.setdefault(claim.paper, []).append(claim.key)
    by_key = {c.key: c for c in claims}
    results = {}
    load_start = os.getloadavg()[0] if hasattr(os, "getloadavg") else None
    start = time.perf_counter()
    bar = tqdm(total=len(claims), desc="claims", disable=None, unit="claim", file=err)

    def finished(rows):
        for key, result in rows:
            results[key] = result
            bar.update(1)
            bar.write(f"[{result.status.upper()}] {key} ({result.runtime_s:.1f}s)", file=out)
            if result.error:
                bar.write(result.error.rstrip(), file=out)

    def progress(message):
        bar.write(message, file=err)

    previous = signal.getsignal(signal.SIGINT)
    in_main = _is_main_thread()
    if in_main:
        signal.signal(signal.SIGINT, _on_sigint)
    try:
        if args.jobs == 1 or len(groups) == 1:
            for keys in groups.values():
                finished(_run_paper(keys, args.scale, args.seed, out_dir, args.threads,
                                    progress))
        else:
            _run_parallel(groups, args, out_dir, finished)
    except KeyboardInterrupt:
        bar.close()
        err.write("interrupted: nothing was recorded for the claim that was running\n")
        return 130
    except OSError as exc:
        bar.close()
        where = f" ({exc.filename})" if getattr(exc, "filename", None) else ""
        err.write(f"error: cannot write the results under --out {args.out!r}: "
                  f"{exc.strerror or exc}{where}\n")
        return 2
    finally:
        if in_main:
            signal.signal(signal.SIGINT, previous)
    bar.close()
    rows = [(by_key[c.key], results[c.key]) for c in claims]
    wall = time.perf_counter() - start
    load_end = os.getloadavg()[0] if hasattr(os, "getloadavg") else None
    load = (load_start, load_end) if load_start is not None else None
    try:
        report = write_report(rows, out_dir, args.scale, args.seed, wall_s=wall, load=load,
                              jobs=args.jobs)
    except OSError as exc:
        err.write(f"error: cannot write the report under --out {args.out!r}: "
                  f"{exc.strerror or exc}\n")
        return 2
    from .papers import FAILING_STATUSES, get_papers

    kinds = {p.slug: p.kind for p in get_papers()}
    out.write(f"{_count_line(rows, kinds)} in {wall:.1f}s; report: {report}\n")
    statuses = [r.status for _, r in rows]
    if "error" in statuses or (args.strict and any(s in FAILING_STATUSES for s in statuses)):
        return 1
    return 0


def _is_main_thread():
    import threading

    return threading.current_thread() is threading.main_thread()


def _schedule(groups):
    """The papers' claim keys, costliest paper first, so that no long paper starts near the
    end of a ``--jobs`` run (``Paper.quick_cost_s``, else 30 s per claim)."""
    from .papers import get_papers

    hints = {p.slug: p.quick_cost_s for p in get_papers(kind=None)}

    def cost(item):
        slug, keys = item
        hint = hints.get(slug)
        return hint if hint is not None else 30.0 * len(keys)

    return [keys for _, keys in sorted(groups.items(), key=cost, reverse=True)]


def _run_parallel(groups, args, out_dir, finished):
    """Run each paper's claims in a worker process (``--jobs``), costliest paper first."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor, as_completed

    context = multiprocessing.get_context("spawn")
    order = _schedule(groups)
    from .papers._environment import available_cores

    # Each worker's share of the cores, for claims that start processes of their own.
    cores = max(1, available_cores() // args.jobs)
    pool = ProcessPoolExecutor(max_workers=args.jobs, mp_context=context,
                               initializer=_worker_init, initargs=(cores,))
    try:
        futures = [pool.submit(_run_paper, keys, args.scale, args.seed, out_dir, args.threads)
                   for keys in order]
        for future in as_completed(futures):
            finished(future.result())
    except BaseException:
        pool.shutdown(wait=False, cancel_futures=True)
        # A worker that died has already cleared the pool's process table (None).
        for process in list((getattr(pool, "_processes", None) or {}).values()):
            process.terminate()
        raise
    pool.shutdown()


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
