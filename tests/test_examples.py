"""Every gallery example runs end to end at tiny size and writes its figure.

``SKPAPER_EXAMPLE_SIZE=tiny`` makes each ``examples/plot_*.py`` shrink its data and
training budget to seconds. All examples run one after the other in a single child
process (so torch, numba and matplotlib are imported once), each in a fresh namespace
and in a temporary working directory; the child writes one JSON record per example,
and one test per example reads its record.

Run this file as a script to time the examples:
``python tests/test_examples.py [plot_laurel.py ...]``.
"""

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

EXAMPLES_DIR = Path(__file__).resolve().parent.parent / "examples"
EXAMPLES = sorted(p.name for p in EXAMPLES_DIR.glob("plot_*.py"))

#: Wall-clock limit of the child process running every example.
TIMEOUT_S = 600


def _run_examples(names, workdir, record_path):
    """Child-process body: run each example, append one JSON line per example."""
    import runpy
    import traceback

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    for name in names:
        start, cpu_start = time.perf_counter(), time.process_time()
        folder = Path(workdir) / name[:-3]
        folder.mkdir(parents=True, exist_ok=True)
        os.chdir(folder)
        error = None
        try:
            runpy.run_path(str(EXAMPLES_DIR / name), run_name="__main__")
        except BaseException:  # noqa: BLE001 - reported by the parent's test
            error = traceback.format_exc()
        finally:
            plt.close("all")
        record = {"name": name, "error": error, "seconds": time.perf_counter() - start,
                  "cpu_seconds": time.process_time() - cpu_start,
                  "files": sorted(p.name for p in folder.iterdir())}
        with open(record_path, "a") as fh:
            fh.write(json.dumps(record) + "\n")


def _child_env():
    env = dict(os.environ)
    env.update(SKPAPER_EXAMPLE_SIZE="tiny", MPLBACKEND="Agg", OMP_NUM_THREADS="1",
               MKL_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1")
    env.setdefault("NUMBA_CACHE_DIR", str(EXAMPLES_DIR.parent / ".numba_cache"))
    return env


def run_all(names, workdir):
    """Run ``names`` in one child process; return ``({name: record}, child output)``."""
    record_path = Path(workdir) / "records.jsonl"
    code = ("import sys; sys.path.insert(0, %r); import test_examples as t; "
            "t._run_examples(%r, %r, %r)" % (str(Path(__file__).parent), list(names),
                                            str(workdir), str(record_path)))
    try:
        proc = subprocess.run([sys.executable, "-c", code], env=_child_env(),
                              capture_output=True, text=True, timeout=TIMEOUT_S)
        output = proc.stdout[-4000:] + proc.stderr[-4000:]
    except subprocess.TimeoutExpired as exc:
        output = f"timed out after {TIMEOUT_S}s\n{exc.stdout or ''}{exc.stderr or ''}"
    records = {}
    if record_path.exists():
        for line in record_path.read_text().splitlines():
            record = json.loads(line)
            records[record["name"]] = record
    return records, output


@pytest.fixture(scope="module")
def example_runs(tmp_path_factory):
    return run_all(EXAMPLES, tmp_path_factory.mktemp("examples"))


def test_every_example_is_collected():
    assert len(EXAMPLES) >= 19, EXAMPLES


@pytest.mark.parametrize("name", EXAMPLES)
def test_example_runs_at_tiny_size(name, example_runs):
    records, output = example_runs
    assert name in records, f"{name} did not finish; child process output:\n{output}"
    record = records[name]
    assert record["error"] is None, record["error"]
    # Every example saves its figure as plot_<name>.png in the working directory.
    assert f"{name[:-3]}.png" in record["files"], record["files"]


SIZE_SWITCH = 'TINY = os.environ.get("SKPAPER_EXAMPLE_SIZE") == "tiny"'


@pytest.mark.parametrize("name", EXAMPLES)
def test_example_reads_the_size_switch(name):
    source = (EXAMPLES_DIR / name).read_text()
    assert SIZE_SWITCH in source, (
        f"{name} must define `{SIZE_SWITCH}` after its docstring and shrink its data and "
        "training budget when TINY is true, so that the test suite runs it in seconds")


if __name__ == "__main__":
    import tempfile

    chosen = sys.argv[1:] or EXAMPLES
    with tempfile.TemporaryDirectory() as tmp:
        start = time.perf_counter()
        found, out = run_all(chosen, tmp)
        for n in chosen:
            rec = found.get(n)
            if rec is None:
                print(f"{n:40s} did not finish")
            else:
                state = "ok" if rec["error"] is None else "ERROR"
                print(f"{n:40s} {rec['seconds']:6.1f}s wall "
                      f"{rec['cpu_seconds']:6.1f}s cpu {state}")
                if rec["error"]:
                    print(rec["error"][-1500:])
        print(f"total {time.perf_counter() - start:.1f}s")
        if len(found) < len(chosen):
            print(out)
