"""The parameter glossary of the user guide stays in step with the estimators."""

import collections
import inspect
import re
from pathlib import Path

from skpaper.utils._registry import all_estimators

GLOSSARY = Path(__file__).resolve().parents[1] / "docs" / "user_guide" / "glossary.rst"


def _parameter_users():
    users = collections.defaultdict(set)
    for name, cls in all_estimators():
        for param in inspect.signature(cls.__init__).parameters:
            if param != "self":
                users[param].add(name)
    return users


def _names_in_use_cells(text):
    # The second cell of each list-table row: "   * - Idea" then "     - ``a``, ``b``".
    cells = re.findall(r"^   \* - .*\n((?:     - .*\n)(?:       .*\n)*)", text, flags=re.M)
    return [set(re.findall(r"``(\w+)``", cell)) for cell in cells]


def test_shared_parameter_names_are_in_the_glossary():
    text = GLOSSARY.read_text()
    listed = set(re.findall(r"``(\w+)``", text))
    users = _parameter_users()
    shared = {p for p, names in users.items() if len(names) >= 3}
    missing = sorted(shared - listed)
    assert not missing, f"add these parameter names to {GLOSSARY.name}: {missing}"


def test_glossary_rows_name_real_parameters():
    users = _parameter_users()
    rows = _names_in_use_cells(GLOSSARY.read_text())
    assert len(rows) >= 15
    stale = sorted({name for row in rows[1:] for name in row} - set(users))
    # The header row of each table is not a parameter list.
    stale = [name for name in stale if name not in {"Names", "in", "use"}]
    assert not stale, f"the glossary lists names no estimator has: {stale}"
