"""scikit-learn's common checks over every registered skpaper estimator."""

import importlib
import inspect
import pkgutil
from functools import partial

import pytest
from sklearn.utils.estimator_checks import check_param_validation, parametrize_with_checks

import skpaper
from skpaper.utils import all_estimators
from skpaper.utils._registry import TORCH_FAMILIES, is_public_estimator_class
from skpaper.utils._test_params import (
    EXPECTED_FAILED_CHECKS,
    expected_failed_checks,
    make_instances,
)

ESTIMATORS = all_estimators()
INSTANCES = [inst for _, cls in ESTIMATORS for inst in make_instances(cls)]


def _id(obj):
    return type(obj).__name__ if not isinstance(obj, partial) else obj.func.__name__


@parametrize_with_checks(INSTANCES, expected_failed_checks=expected_failed_checks)
def test_sklearn_compatible_estimator(estimator, check):
    check(estimator)


@pytest.mark.parametrize("estimator", INSTANCES, ids=_id)
def test_param_validation(estimator):
    check_param_validation(type(estimator).__name__, estimator)


def _walk_public_estimator_classes():
    found = {}
    for info in pkgutil.walk_packages(skpaper.__path__, prefix="skpaper."):
        parts = info.name.split(".")
        if parts[1] in ("papers",) or (len(parts) > 1 and parts[1] in TORCH_FAMILIES
                                       and importlib.util.find_spec("torch") is None):
            continue
        module = importlib.import_module(info.name)
        for _, obj in inspect.getmembers(module, is_public_estimator_class):
            if obj.__module__.startswith("skpaper."):
                found[obj.__name__] = obj
    return found


def test_every_public_estimator_is_registered():
    registered = {name for name, _ in ESTIMATORS}
    missing = sorted(set(_walk_public_estimator_classes()) - registered)
    assert not missing, (
        f"public estimator classes missing from skpaper.utils.all_estimators(): {missing}; "
        "export them in their family package's __all__"
    )


def test_expected_failures_have_reasons_and_targets():
    registered = {name for name, _ in ESTIMATORS}
    for name, checks in EXPECTED_FAILED_CHECKS.items():
        assert name in registered, f"expected-failure entry for unknown estimator {name}"
        for check, reason in checks.items():
            assert check.startswith("check_"), f"{name}: {check!r} is not a check name"
            assert isinstance(reason, str) and len(reason.strip()) >= 10, (
                f"{name}.{check} needs a written reason"
            )


def test_registry_is_sorted_and_filterable():
    names = [name for name, _ in ESTIMATORS]
    assert names == sorted(names) and len(names) == len(set(names))
    assert ("MLPClassifier", skpaper.nn.MLPClassifier) in all_estimators("classifier")
    assert all(name != "MLPClassifier" for name, _ in all_estimators("regressor"))
    with pytest.raises(ValueError, match="type_filter"):
        all_estimators("nonsense")
