"""The one place where skpaper imports private scikit-learn API.

Everything here is re-exported under the same name, so a future scikit-learn
release that moves one of them needs a fix in this file only.
"""

from sklearn.base import _fit_context
from sklearn.utils._param_validation import (
    HasMethods,
    Hidden,
    Interval,
    InvalidParameterError,
    Options,
    RealNotInt,
    StrOptions,
    validate_params,
)
from sklearn.utils.validation import _check_sample_weight, validate_data

__all__ = [
    "Hidden",
    "HasMethods",
    "Interval",
    "InvalidParameterError",
    "Options",
    "RealNotInt",
    "StrOptions",
    "_check_sample_weight",
    "_fit_context",
    "validate_data",
    "validate_params",
]
