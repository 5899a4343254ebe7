"""The README's paper table is the one the registry and the committed results give."""

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _readme_tool():
    spec = importlib.util.spec_from_file_location("_readme", ROOT / "docs" / "_readme.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_readme_paper_table_matches_the_registry_and_results():
    tool = _readme_tool()
    block = tool.current_block()
    assert block is not None, "README.md lost its papers-table markers"
    assert block == tool.paper_table(), (
        "README.md's paper table is stale: run `python docs/_readme.py`")


def test_every_registered_paper_has_a_row():
    from skpaper.papers import get_papers

    block = _readme_tool().current_block()
    for paper in get_papers(kind="paper"):
        assert f"| `{paper.slug}` |" in block
