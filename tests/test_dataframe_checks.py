"""scikit-learn's dataframe, set_output and feature-name checks over every estimator.

``parametrize_with_checks`` does not run them (scikit-learn runs them separately), so
they are run here: column-name consistency for every estimator that takes a 2D
array, and the set_output / get_feature_names_out checks for every transformer.
A "X does not have valid feature names" (or "fitted without feature names")
warning counts as a failure: it means an estimator dropped the names a user
fitted with, or validated an already-validated array. The two pandas set_output
checks deliberately fit on a DataFrame and transform an array (and the reverse),
once for the default and once for the pandas output, so exactly two warnings of
each kind are expected there, as scikit-learn's own transformers give
(``StandardScaler`` is run through the same harness as a control); one more means
a method warned where it should not.
"""

import warnings

import pytest
from sklearn.preprocessing import StandardScaler
from sklearn.utils import estimator_checks, get_tags

from skpaper.utils import all_estimators
from skpaper.utils._test_params import make_instances

_ALL = ("check_dataframe_column_names_consistency",)
_TRANSFORMERS = ("check_set_output_transform", "check_set_output_transform_pandas",
                 "check_global_output_transform_pandas",
                 "check_transformer_get_feature_names_out",
                 "check_transformer_get_feature_names_out_pandas",
                 "check_get_feature_names_out_error")
_NAME_WARNINGS = ("does not have valid feature names", "fitted without feature names")
#: Name warnings a check raises by design (its mixed DataFrame / array cases).
_EXPECTED = {"check_set_output_transform_pandas": 2, "check_global_output_transform_pandas": 2}


def _cases():
    for name, cls in all_estimators():
        for index, instance in enumerate(make_instances(cls)):
            if not get_tags(instance).input_tags.two_d_array:
                continue
            checks = _ALL + (_TRANSFORMERS if hasattr(instance, "transform") else ())
            for check in checks:
                yield pytest.param(name, instance, check, id=f"{name}-{index}-{check}")


def _run_check(name, estimator, check):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        getattr(estimator_checks, check)(name, estimator)
    counts = [sum(text in str(w.message) for w in caught) for text in _NAME_WARNINGS]
    expected = [_EXPECTED.get(check, 0)] * len(_NAME_WARNINGS)
    assert counts == expected, (
        f"{name} raised {counts} feature-name warnings {_NAME_WARNINGS} in {check}, "
        f"expected {expected}: "
        + "; ".join(str(w.message) for w in caught
                    if any(text in str(w.message) for text in _NAME_WARNINGS)))


@pytest.mark.parametrize("name, estimator, check", list(_cases()))
def test_dataframe_and_feature_name_checks(name, estimator, check):
    pytest.importorskip("pandas")
    _run_check(name, estimator, check)


@pytest.mark.parametrize("check", _TRANSFORMERS)
def test_harness_passes_a_scikit_learn_transformer(check):
    pytest.importorskip("pandas")
    _run_check("StandardScaler", StandardScaler(), check)
