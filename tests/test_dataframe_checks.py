"""scikit-learn's dataframe, set_output and feature-name checks over every estimator.

``parametrize_with_checks`` does not run them (scikit-learn runs them separately), so
they are run here: column-name consistency for every estimator that takes a 2D
array, and the set_output / get_feature_names_out checks for every transformer.
A "X does not have valid feature names" warning counts as a failure: it means an
estimator dropped the names a user fitted with.
"""

import warnings

import pytest
from sklearn.utils import estimator_checks, get_tags

from skpaper.utils import all_estimators
from skpaper.utils._test_params import make_instances

_ALL = ("check_dataframe_column_names_consistency",)
_TRANSFORMERS = ("check_set_output_transform", "check_set_output_transform_pandas",
                 "check_global_output_transform_pandas",
                 "check_transformer_get_feature_names_out",
                 "check_transformer_get_feature_names_out_pandas",
                 "check_get_feature_names_out_error")


def _cases():
    for name, cls in all_estimators():
        for index, instance in enumerate(make_instances(cls)):
            if not get_tags(instance).input_tags.two_d_array:
                continue
            checks = _ALL + (_TRANSFORMERS if hasattr(instance, "transform") else ())
            for check in checks:
                yield pytest.param(name, instance, check, id=f"{name}-{index}-{check}")


@pytest.mark.parametrize("name, estimator, check", list(_cases()))
def test_dataframe_and_feature_name_checks(name, estimator, check):
    pytest.importorskip("pandas")
    with warnings.catch_warnings():
        warnings.filterwarnings("error", message=".*does not have valid feature names.*")
        warnings.filterwarnings("error", message=".*fitted without feature names.*")
        getattr(estimator_checks, check)(name, estimator)
