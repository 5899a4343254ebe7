#!/usr/bin/env bash
# Set up skpaper in ./.venv and run the tests or the paper reproductions.
#   ./run.sh lint        install, then `ruff check .` (CI runs it before the tests)
#   ./run.sh test        install, then run the test suite (what CI runs)
#   ./run.sh reproduce   install, then `skpaper reproduce all --scale quick --out results`
#                        on every core (JOBS=N to choose; the figures do not depend on it)
#   ./run.sh docs        install with the docs extra, then build the HTML into docs/_build/html
#   ./run.sh docs-results  install, then refresh docs/results (all claims at --scale quick)
# Needs only Python 3.10+ with pip and venv, and a C compiler for the Cython extension.
set -euo pipefail
cd "$(dirname "$0")"

PYTHON=${PYTHON:-python3}
VENV=${VENV:-.venv}
export NUMBA_CACHE_DIR=${NUMBA_CACHE_DIR:-$PWD/.numba_cache}

install() {
    local extras=${1:-torch,qp,plots,test,distributed}
    [ -x "$VENV/bin/python" ] || "$PYTHON" -m venv "$VENV"
    # The base image's pip 23.2 cannot build the Cython extension in editable mode.
    "$VENV/bin/python" -m pip install -q -U pip "setuptools>=77"
    # Pinned first: a looser torch requirement pulls a multi-GB CUDA build.
    "$VENV/bin/python" -m pip install -q "torch==2.13.0"
    "$VENV/bin/python" -m pip install -q -e ".[$extras]"
}

case "${1:-}" in
    lint)
        install
        shift
        exec "$VENV/bin/ruff" check . "$@"
        ;;
    test)
        install
        shift
        set +e
        HYPOTHESIS_PROFILE=${HYPOTHESIS_PROFILE:-ci} OMP_NUM_THREADS=${OMP_NUM_THREADS:-1} \
            "$VENV/bin/python" -m pytest -m "not gpu" --durations=25 "$@"
        rc=$?
        set -e
        if [ "$rc" -eq 5 ]; then
            echo "pytest collected no tests: the test selection is broken" >&2
        fi
        exit "$rc"
        ;;
    reproduce)
        install
        shift
        exec "$VENV/bin/skpaper" reproduce all --scale quick --out results \
            --jobs "${JOBS:-$(nproc 2>/dev/null || echo 1)}" "$@"
        ;;
    docs)
        install torch,qp,plots,test,distributed,docs
        shift
        # -W --keep-going: every warning is listed, and any warning fails the build.
        MPLBACKEND=Agg OMP_NUM_THREADS=${OMP_NUM_THREADS:-1} \
            exec "$VENV/bin/python" -m sphinx -b html -W --keep-going -q docs docs/_build/html "$@"
        ;;
    docs-results)
        install
        shift
        rm -rf docs/results.new
        set +e
        "$VENV/bin/skpaper" reproduce all --scale quick --out docs/results.new \
            --jobs "${JOBS:-$(nproc 2>/dev/null || echo 1)}" "$@"
        rc=$?
        set -e
        # Keep the previous results unless the run wrote its report.
        if [ -f docs/results.new/report.md ]; then
            rm -rf docs/results
            mv docs/results.new docs/results
            # The figures are committed: palette PNGs, at most 3 MB together.
            "$VENV/bin/python" docs/_shrink_figures.py docs/results --budget-mb 3
        fi
        exit "$rc"
        ;;
    *)
        echo "usage: ./run.sh lint|test|reproduce|docs|docs-results [extra arguments]" >&2
        exit 2
        ;;
esac
