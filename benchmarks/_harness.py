"""Side-by-side benchmark harness: ours against a peer, same process, same data.

Usage from a ``bench_<family>.py`` script::

    from _harness import Case, main_cli, run_cases

    cases = [Case("hash 1M uint64", ours=lambda: ..., peer=lambda: ..., peer_name="mmh3",
                  items=1_000_000)]
    main_cli(cases, description="...")

Each case is timed ``repeat`` times for both sides, alternating ours and the peer;
the report gives median seconds, throughput when ``items`` is set, and the
ratio ``peer_median / ours_median`` (> 1 means ours is faster). Cases may also
return a dict of quality figures (errors, accuracies) from ``ours``/``peer``;
the last call's figures are reported beside the timings. ``--json PATH``
writes everything as JSON.
"""

import argparse
import json
import platform
import statistics
import sys
import time
from dataclasses import dataclass, field


@dataclass
class Case:
    """One comparison: two zero-argument callables on the same prepared data."""

    name: str
    ours: object
    peer: object = None
    peer_name: str = "peer"
    items: int | None = None
    params: dict = field(default_factory=dict)


def _timed(func):
    start = time.perf_counter()
    extra = func()
    return time.perf_counter() - start, extra if isinstance(extra, dict) else None


def run_cases(cases, repeat=5):
    """Run every case; return a list of result dicts.

    Ours and the peer alternate, one call each per repeat (after one warm-up call of
    each: JIT, caches, lazy imports), so a busy machine slows both sides alike.
    """
    results = []
    for case in cases:
        sides = {"ours": case.ours}
        if case.peer is not None:
            sides["peer"] = case.peer
        times = {side: [] for side in sides}
        figures = {}
        for func in sides.values():
            func()
        for _ in range(repeat):
            for side, func in sides.items():
                elapsed, figures[side] = _timed(func)
                times[side].append(elapsed)
        row = {"case": case.name, "params": case.params}
        for side in sides:
            row[f"{side}_median_s"] = statistics.median(times[side])
            row[f"{side}_times_s"] = times[side]
            row[f"{side}_figures"] = figures[side]
            if case.items:
                row[f"{side}_items_per_s"] = case.items / row[f"{side}_median_s"]
        if case.peer is not None:
            row["peer"] = case.peer_name
            row["speedup_vs_peer"] = row["peer_median_s"] / row["ours_median_s"]
        results.append(row)
    return results


def format_table(results):
    """Plain-text table of the medians and ratios."""
    lines = [f"{'case':40s} {'ours (s)':>10s} {'peer':>14s} {'peer (s)':>10s} {'speedup':>8s}"]
    for r in results:
        peer = r.get("peer", "-")
        peer_s = f"{r['peer_median_s']:.4g}" if "peer_median_s" in r else "-"
        speed = f"{r['speedup_vs_peer']:.2f}x" if "speedup_vs_peer" in r else "-"
        lines.append(f"{r['case'][:40]:40s} {r['ours_median_s']:10.4g} {peer[:14]:>14s} "
                     f"{peer_s:>10s} {speed:>8s}")
        for side in ("ours", "peer"):
            figures = r.get(f"{side}_figures")
            if figures:
                shown = ", ".join(f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}"
                                  for k, v in figures.items())
                lines.append(f"    {side}: {shown}")
    return "\n".join(lines)


def main_cli(cases_factory, description, argv=None):
    """Parse ``--repeat``/``--quick``/``--json``, run the cases, print and save.

    ``cases_factory(quick: bool) -> list[Case]`` builds the cases (and their data).
    """
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--repeat", type=int, default=5, help="timed runs per side")
    parser.add_argument("--quick", action="store_true", help="smaller data, for a fast look")
    parser.add_argument("--json", metavar="PATH", help="write the results as JSON")
    args = parser.parse_args(argv)
    results = run_cases(cases_factory(args.quick), repeat=args.repeat)
    print(format_table(results))
    if args.json:
        meta = {"python": sys.version.split()[0], "machine": platform.machine(),
                "repeat": args.repeat, "quick": args.quick}
        with open(args.json, "w") as fh:
            json.dump({"meta": meta, "results": results}, fh, indent=2, default=str)
    return results
