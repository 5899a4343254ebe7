"""The README's paper table is the one the registry and the committed results give, and its
task snippets run as pasted."""

import importlib.util
import warnings
from pathlib import Path

import pytest

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


def _task_snippets():
    import re

    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("## Which estimator for which task", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"<summary>(.*?)</summary>\s*```python\n(.*?)```", section, re.S)


def test_every_task_row_has_a_snippet():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("## Which estimator for which task", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in section.splitlines()
            if line.startswith("| ") and not line.startswith("| task")]
    assert len(rows) == len(_task_snippets()) >= 19


@pytest.mark.parametrize("title, code", [pytest.param(t, c, id=f"snippet{i}")
                                          for i, (t, c) in enumerate(_task_snippets())])
def test_task_snippet_runs_as_pasted(title, code, capsys):
    # A fresh namespace per snippet: a name it uses without defining fails here.
    namespace = {"__name__": "__readme__"}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        exec(compile(code, f"README: {title}", "exec"), namespace)
    assert capsys.readouterr().out.strip(), "every snippet prints its result"


_NUMBER_WORDS = {19: "nineteen", 20: "twenty", 21: "twenty-one", 22: "twenty-two"}


def test_the_stated_paper_count_is_the_registry_count():
    from skpaper.papers import get_papers

    n = len(get_papers(kind="paper"))
    stated = _NUMBER_WORDS.get(n, str(n))
    for path in ("README.md", "pyproject.toml", "docs/index.rst", "skpaper/__init__.py",
                 "docs/user_guide/glossary.rst"):
        text = (ROOT / path).read_text(encoding="utf-8").lower()
        others = [w for k, w in _NUMBER_WORDS.items() if k != n and f"{w} icml" in text]
        assert f"{stated} " in text and not others, (
            f"{path} should state {stated} papers (the registry holds {n})")
