"""Project-wide conventions checked on the source text."""

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "skpaper"

#: Where gradients may be computed: the base training loop, and test-time
#: optimisation (which adapts on the test stream, outside any training loop).
# the batched seed trainer is a second training loop by design (K seeds as one model)
BACKWARD_ALLOWED = {"skpaper/nn/_base.py", "skpaper/nn/_batched.py",
                    "skpaper/vision/_tokenizer_tto.py"}
BACKWARD_ALLOWED_DIRS = ("skpaper/adaptation/",)


def _sources(root):
    return sorted(p for p in root.rglob("*.py") if "__pycache__" not in p.parts)


def _relative(path):
    return path.relative_to(ROOT).as_posix()


def test_every_warning_names_a_stacklevel():
    missing = []
    for path in _sources(PACKAGE):
        for node in ast.walk(ast.parse(path.read_text())):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                    and node.func.attr == "warn"
                    and isinstance(node.func.value, ast.Name) and node.func.value.id == "warnings"
                    and not any(k.arg == "stacklevel" for k in node.keywords)):
                missing.append(f"{_relative(path)}:{node.lineno}")
    assert not missing, f"warnings.warn without stacklevel: {missing}"


def test_gradients_are_computed_only_by_the_base_loop():
    found = []
    for path in _sources(PACKAGE):
        rel = _relative(path)
        if rel in BACKWARD_ALLOWED or rel.startswith(BACKWARD_ALLOWED_DIRS):
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                    and node.func.attr == "backward"):
                found.append(f"{rel}:{node.lineno}")
    assert not found, f"backward() outside the base training loop: {found}"


def test_private_sklearn_api_is_imported_in_one_place():
    pattern = re.compile(r"^\s*(from|import)\s+sklearn(\.\w+)*\._\w+", re.M)
    allowed = {"skpaper/utils/_sklearn.py"}
    offenders = [
        _relative(path) for path in _sources(PACKAGE) + _sources(ROOT / "tests")
        if _relative(path) not in allowed and pattern.search(path.read_text())
    ]
    assert not offenders, f"import private scikit-learn API through utils/_sklearn: {offenders}"
