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


def test_datasets_load_lazily():
    modules = _loaded_after("import skpaper.sketch")
    loaded = {m for m in modules if m.startswith("skpaper.datasets.")}
    assert loaded <= {"skpaper.datasets._sketch"}, loaded
    modules = _loaded_after("from skpaper.datasets import make_discretized_chain")
    assert {m for m in modules if m.startswith("skpaper.datasets.")} == {
        "skpaper.datasets._independence"}


def test_datasets_table_matches_the_modules():
    import importlib

    import skpaper.datasets as datasets

    for module, names in datasets._NAMES.items():
        mod = importlib.import_module(f"skpaper.datasets.{module}")
        assert sorted(mod.__all__) == sorted(names), module
        for name in names:
            assert getattr(datasets, name) is getattr(mod, name)
    star = {}
    exec("from skpaper.datasets import *", star)
    assert set(datasets.__all__) <= set(star)
    with pytest.raises(AttributeError, match="has no attribute 'make_nothing'"):
        datasets.make_nothing  # noqa: B018
