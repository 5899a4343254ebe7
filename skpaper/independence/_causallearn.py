"""Adapter that plugs an skpaper CI test into causal-learn (optional dependency)."""

import hashlib
import json

from sklearn.base import clone


def register_with_causallearn(estimator, name):
    """Register a ``CIT_Base`` subclass running ``clone(estimator)`` under ``name``.

    Raises
    ------
    ImportError
        If causal-learn is not installed.
    """
    try:
        from causallearn.utils.cit import CIT_Base, register_ci_test
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ImportError(
            "to_causallearn needs the optional dependency causal-learn "
            "(pip install causal-learn)."
        ) from exc

    template = clone(estimator)
    params = {k: repr(v) for k, v in template.get_params().items()}
    params_hash = hashlib.md5(json.dumps(params, sort_keys=True).encode()).hexdigest()

    class SkpaperCIT(CIT_Base):
        def __init__(self, data, **kwargs):
            super().__init__(data, **kwargs)
            self.check_cache_method_consistent(name, params_hash)
            self.assert_input_data_is_valid()
            self.ci_test = clone(template).fit(data)

        def __call__(self, X, Y, condition_set=None):
            xs, ys, cond, key = self.get_formatted_XYZ_and_cachekey(X, Y, condition_set)
            if key not in self.pvalue_cache:
                self.pvalue_cache[key] = self.ci_test.pvalue(xs[0], ys[0], cond)
            return self.pvalue_cache[key]

    SkpaperCIT.__name__ = SkpaperCIT.__qualname__ = f"SkpaperCIT_{name}"
    register_ci_test(name, SkpaperCIT)
    return name
