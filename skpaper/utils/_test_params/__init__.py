"""Small settings and expected check failures for the common estimator checks.

Each family owns one module here (``_test_params/<family>.py``) defining:

``INIT_PARAMS``
    ``{"ClassName": {param: value}}``: keyword arguments that make the estimator
    small and fast enough for the common checks (few epochs, tiny widths).
``EXTRA_INSTANCES``
    ``{"ClassName": [{param: value}, ...]}``: further configurations to check.
``EXPECTED_FAILED_CHECKS``
    ``{"ClassName": {"check_name": "reason"}}``: every entry needs a reason that
    says why the check cannot pass for this estimator.
``FIT_DATA``
    ``{"ClassName": make_data}`` with ``make_data() -> (X, y)`` (``y`` may be
    None): a small dataset in the estimator's own input format. Required for
    estimators whose input is not a 2-D array (lists of graphs, QP instances,
    token sequences), which scikit-learn's checks skip; ``tests/test_common.py``
    then runs skpaper's structured-input checks on it (clone, pickling,
    idempotent and seeded fits, not-fitted errors, output shapes).

This package merges them; :mod:`tests.test_common` reads the merged tables.
"""

import importlib

from .._registry import FAMILIES

INIT_PARAMS = {}
EXTRA_INSTANCES = {}
EXPECTED_FAILED_CHECKS = {}
FIT_DATA = {}

for _family in FAMILIES:
    try:
        _module = importlib.import_module(f"{__name__}.{_family}")
    except ModuleNotFoundError as exc:
        if exc.name != f"{__name__}.{_family}":
            raise
        continue
    INIT_PARAMS.update(getattr(_module, "INIT_PARAMS", {}))
    EXTRA_INSTANCES.update(getattr(_module, "EXTRA_INSTANCES", {}))
    EXPECTED_FAILED_CHECKS.update(getattr(_module, "EXPECTED_FAILED_CHECKS", {}))
    FIT_DATA.update(getattr(_module, "FIT_DATA", {}))


def make_instances(cls):
    """Yield the small instances of ``cls`` that the common checks run on."""
    name = cls.__name__
    yield cls(**INIT_PARAMS.get(name, {}))
    for params in EXTRA_INSTANCES.get(name, []):
        yield cls(**{**INIT_PARAMS.get(name, {}), **params})


def expected_failed_checks(estimator):
    """Return ``{check_name: reason}`` for ``estimator`` (used by parametrize_with_checks)."""
    return dict(EXPECTED_FAILED_CHECKS.get(type(estimator).__name__, {}))
