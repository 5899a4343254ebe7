"""numpydoc validation of every public skpaper docstring.

The objects checked are every estimator of :func:`skpaper.utils.all_estimators`
and, for each family package (plus :mod:`skpaper.datasets`, :mod:`skpaper.papers`
and :mod:`skpaper.utils`), every public function and class named in its
``__all__`` (and in the ``__all__`` of a public submodule it exports). Each class
is checked with its public methods and properties defined in skpaper; what is
inherited from scikit-learn or torch is theirs to document.

Run ``python tests/test_docstrings.py skpaper.bandits.Exp3.fit`` to print the
errors of one object.
"""

import importlib
import inspect
import sys
import types

import pytest

from skpaper.utils._registry import FAMILIES, _family_module, all_estimators

numpydoc_validation = pytest.importorskip("numpydoc.validate")

#: Packages whose ``__all__`` is enumerated besides the estimator families.
EXTRA_PACKAGES = ("datasets", "papers", "utils")

#: Error codes ignored everywhere, with the reason.
IGNORED_EVERYWHERE = {
    # The summary starts on the line of the opening quotes, the project's style.
    "GL01": "summary on the line after the opening quotes",
    # A blank line before the closing quotes is harmless and PEP 257 allows it.
    "GL02": "closing quotes right after the last line",
    # An extended summary is useful, not always needed (short helpers and methods).
    "ES01": "extended summary",
    # See Also sections are added where a related object exists, not everywhere.
    "SA01": "See Also section",
    # ``name : type`` lines in Returns name the returned object, as scikit-learn does.
    "RT02": "Returns lines with only a type",
}

#: Error codes checked on classes and functions, ignored on methods and properties.
IGNORED_ON_METHODS = {
    # The class docstring carries the example of how to use its methods.
    "EX01": "Examples section",
}


def _public_submodule_objects(package_name, module):
    for name in getattr(module, "__all__", ()):
        obj = getattr(module, name)
        if isinstance(obj, types.ModuleType):
            yield from _public_submodule_objects(f"{package_name}.{name}", obj)
        elif inspect.isclass(obj) or inspect.isfunction(obj):
            yield f"{package_name}.{name}", obj


def _defined_in_skpaper(cls, name):
    for klass in cls.__mro__:
        if name in vars(klass):
            return klass.__module__.startswith("skpaper.")
    return False


def _public_members(cls):
    for name in sorted(dir(cls)):
        if name.startswith("_") or not _defined_in_skpaper(cls, name):
            continue
        member = inspect.getattr_static(cls, name)
        if isinstance(member, (staticmethod, classmethod)):
            member = member.__func__
        if isinstance(member, property) or inspect.isfunction(member):
            yield name


def _public_objects():
    """Yield ``(qualified name, kind)`` of every checked object, once each."""
    packages = {}
    for family in FAMILIES:
        module = _family_module(family)
        if module is not None:
            packages[f"skpaper.{family}"] = module
    for extra in EXTRA_PACKAGES:
        packages[f"skpaper.{extra}"] = importlib.import_module(f"skpaper.{extra}")

    candidates = {}
    for name, cls in all_estimators():
        candidates.setdefault(id(cls), (cls, []))[1].append(
            f"skpaper.{cls.__module__.split('.')[1]}.{name}")
    for package_name, module in packages.items():
        for name, obj in _public_submodule_objects(package_name, module):
            if obj.__module__.startswith("skpaper."):
                candidates.setdefault(id(obj), (obj, []))[1].append(name)

    found = {}
    for obj, names in candidates.values():
        # A re-exported object is checked once, under the package that defines it.
        home = [n for n in names if obj.__module__.startswith(n.rsplit(".", 1)[0] + ".")]
        found[id(obj)] = (min(home or names), obj)

    for name, obj in sorted(found.values(), key=lambda item: item[0]):
        if inspect.isclass(obj):
            yield name, "class"
            for member in _public_members(obj):
                yield f"{name}.{member}", "method"
        else:
            yield name, "function"


OBJECTS = list(_public_objects())


def _resolve(qualified_name):
    parts = qualified_name.split(".")
    for split in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:split]))
        except ImportError:
            continue
        for attribute in parts[split:]:
            obj = inspect.getattr_static(obj, attribute)
        return obj
    raise ImportError(qualified_name)


def _errors(qualified_name, kind):
    """Return the numpydoc result and its errors that count for ``kind`` objects."""
    result = numpydoc_validation.validate(qualified_name)
    ignored = set(IGNORED_EVERYWHERE)
    if kind == "method":
        ignored |= set(IGNORED_ON_METHODS)
        # A property has no parameters to document and returns through its summary.
        if isinstance(_resolve(qualified_name), property):
            ignored |= {"PR01", "PR02", "RT01"}
    return result, [(code, message) for code, message in result["errors"]
                    if code not in ignored]


def _report(qualified_name, result, errors):
    lines = [f"{qualified_name} ({result['file']}:{result['file_line']})"]
    lines += [f"  {code}: {message}" for code, message in errors]
    return "\n".join(lines)


@pytest.mark.parametrize("qualified_name, kind", OBJECTS,
                         ids=[name for name, _ in OBJECTS])
def test_docstring(qualified_name, kind):
    result, errors = _errors(qualified_name, kind)
    assert not errors, _report(qualified_name, result, errors)


def test_objects_cover_estimators_and_functions():
    """The enumeration reaches estimators, their methods and plain functions."""
    kinds = dict(OBJECTS)
    assert kinds["skpaper.bandits.Exp3"] == "class"
    assert kinds["skpaper.bandits.Exp3.fit"] == "method"
    assert kinds["skpaper.datasets.make_first_price_auction"] == "function"
    assert kinds["skpaper.multilabel.metrics.hamming_loss"] == "function"
    assert len(kinds) == len(OBJECTS)


if __name__ == "__main__":
    kinds = dict(OBJECTS)
    for target in sys.argv[1:]:
        result, errors = _errors(target, kinds.get(target, "function"))
        print(_report(target, result, errors) if errors else f"{target}: no errors")
