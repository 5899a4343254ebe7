#!/usr/bin/env bash
# Set up skpaper in ./.venv and run the tests or the paper reproductions.
#   ./run.sh test        install, then run the test suite (what CI runs)
#   ./run.sh reproduce   install, then `skpaper reproduce all --scale quick --out results`
# Needs only Python 3.10+ with pip and venv, and a C compiler for the Cython extension.
set -euo pipefail
cd "$(dirname "$0")"

PYTHON=${PYTHON:-python3}
VENV=${VENV:-.venv}
export NUMBA_CACHE_DIR=${NUMBA_CACHE_DIR:-$PWD/.numba_cache}

install() {
    [ -x "$VENV/bin/python" ] || "$PYTHON" -m venv "$VENV"
    # The base image's pip 23.2 cannot build the Cython extension in editable mode.
    "$VENV/bin/python" -m pip install -q -U pip "setuptools>=77"
    # Pinned first: a looser torch requirement pulls a multi-GB CUDA build.
    "$VENV/bin/python" -m pip install -q "torch==2.13.0"
    "$VENV/bin/python" -m pip install -q -e ".[torch,test,distributed]"
}

case "${1:-}" in
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
        exec "$VENV/bin/skpaper" reproduce all --scale quick --out results "$@"
        ;;
    *)
        echo "usage: ./run.sh test|reproduce [extra arguments]" >&2
        exit 2
        ;;
esac
