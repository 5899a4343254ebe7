"""scikit-learn's common checks over every registered skpaper estimator."""

import importlib
import inspect
import pickle
import pkgutil
from functools import partial

import numpy as np
import pytest
from sklearn.base import clone, is_classifier
from sklearn.exceptions import NotFittedError
from sklearn.utils import get_tags
from sklearn.utils.estimator_checks import check_param_validation, parametrize_with_checks

import skpaper
from skpaper.utils import all_estimators
from skpaper.utils._registry import TORCH_FAMILIES, is_public_estimator_class
from skpaper.utils._test_params import (
    EXPECTED_FAILED_CHECKS,
    FIT_DATA,
    expected_failed_checks,
    make_instances,
)

ESTIMATORS = all_estimators()
INSTANCES = [inst for _, cls in ESTIMATORS for inst in make_instances(cls)]
STRUCTURED = [inst for inst in INSTANCES if not get_tags(inst).input_tags.two_d_array]


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
        needs_torch = len(parts) > 1 and parts[1] in TORCH_FAMILIES
        if parts[-1] == "__main__" or parts[1] in ("papers",) or (
                needs_torch and importlib.util.find_spec("torch") is None):
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


# --------------------------------------------------------------------------------------------
# Estimators whose input is not a 2-D array (graphs, QP instances, token sequences) are skipped
# by scikit-learn's checks; these checks cover the same contract on the family's own data.


def test_structured_input_estimators_provide_fit_data():
    missing = sorted({type(e).__name__ for e in STRUCTURED} - set(FIT_DATA))
    assert not missing, f"add FIT_DATA entries in skpaper/utils/_test_params for {missing}"


def _outputs(est, X):
    out = {"predict": est.predict(X)}
    for method in ("predict_proba", "decision_function", "transform"):
        if hasattr(est, method):
            out[method] = getattr(est, method)(X)
    return out


def _assert_same(left, right):
    left, right = np.asarray(left), np.asarray(right)
    if left.dtype.kind in "fc" or right.dtype.kind in "fc":
        np.testing.assert_allclose(left.astype(float), right.astype(float), atol=1e-6)
    else:  # labels: strings, booleans, integers
        np.testing.assert_array_equal(left, right)


def _assert_outputs_equal(a, b):
    assert a.keys() == b.keys()
    for key in a:
        left, right = a[key], b[key]
        if isinstance(left, list):
            assert len(left) == len(right)
            for u, v in zip(left, right):
                _assert_same(u, v)
        else:
            _assert_same(left, right)


@pytest.mark.parametrize("estimator", STRUCTURED, ids=_id)
def test_structured_input_contract(estimator):
    X, y = FIT_DATA[type(estimator).__name__]()
    n = len(X)
    est = clone(estimator)
    with pytest.raises(NotFittedError):
        est.predict(X)
    assert est.fit(X, y) is est
    first = _outputs(est, X)
    assert len(first["predict"]) == n
    if "predict_proba" in first:
        proba = np.asarray(first["predict_proba"])
        np.testing.assert_allclose(proba.sum(axis=1), 1.0, atol=1e-6)
        assert proba.shape == (n, len(est.classes_))
    if is_classifier(est):
        assert set(np.unique(first["predict"])) <= set(est.classes_)
    if y is not None:
        assert np.isfinite(est.score(X, y))

    # Same parameters, same random_state: same model (a refit discards the first fit).
    _assert_outputs_equal(first, _outputs(est.fit(X, y), X))
    _assert_outputs_equal(first, _outputs(clone(estimator).fit(X, y), X))

    # Pickling round trip, and get_params/set_params/clone consistency.
    _assert_outputs_equal(first, _outputs(pickle.loads(pickle.dumps(est)), X))
    params = estimator.get_params()
    assert clone(estimator).get_params().keys() == params.keys()
    assert type(estimator)().set_params(**params).get_params().keys() == params.keys()


# --------------------------------------------------------------------------------------------
# Dropout draws from torch's global generator unless the estimator forks it: with dropout on,
# two fits with the same random_state must agree and torch's global RNG must not move.

def _with_dropout(estimator, rate=0.3):
    keys = [k for k in estimator.get_params(deep=True) if k.split("__")[-1] == "dropout"]
    return estimator.set_params(**{k: rate for k in keys}) if keys else None


# One instance per class (its first, small configuration) with every dropout set to 0.3.
DROPOUT = [est for est in (_with_dropout(clone(next(make_instances(cls))))
                           for _, cls in ESTIMATORS)
           if est is not None]


def _fit_data(estimator):
    name = type(estimator).__name__
    if name in FIT_DATA:
        return FIT_DATA[name]()
    rng = np.random.RandomState(0)
    return rng.normal(size=(24, 4)), rng.randint(0, 2, 24)


def test_dropout_estimators_are_covered():
    names = {type(est).__name__ for est in DROPOUT}
    assert {"LanguageModel", "ContrastiveDistiller", "FocusInstructionLM", "OctahedralFlipper",
            "QuotientOrienter"} <= names


@pytest.mark.parametrize("estimator", DROPOUT, ids=_id)
def test_dropout_is_seeded_and_leaves_global_rng(estimator):
    torch = pytest.importorskip("torch")
    X, y = _fit_data(estimator)
    before = torch.random.get_rng_state().clone()
    first = _outputs(clone(estimator).fit(X, y), X)
    second = _outputs(clone(estimator).fit(X, y), X)
    assert torch.equal(torch.random.get_rng_state(), before)
    _assert_outputs_equal(first, second)
