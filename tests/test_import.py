"""Importing skpaper and the non-deep families stays light."""

import subprocess
import sys

import pytest

NON_DEEP = ["sketch", "independence", "semisupervised", "bandits", "multilabel", "reward"]


def _loaded_after(statement):
    code = f"import sys; {statement}; print(' '.join(sorted(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout
    return set(out.split())


def test_import_skpaper_loads_neither_torch_nor_numba():
    modules = _loaded_after("import skpaper")
    assert "torch" not in modules and "numba" not in modules


@pytest.mark.parametrize("family", NON_DEEP)
def test_non_deep_family_does_not_import_torch(family):
    assert "torch" not in _loaded_after(f"import skpaper.{family}")


def test_datasets_and_utils_do_not_import_torch():
    modules = _loaded_after("import skpaper.datasets, skpaper.utils, skpaper.papers")
    assert "torch" not in modules
