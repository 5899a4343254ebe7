"""Registry of every public skpaper estimator.

Estimators are discovered from the ``__all__`` of each family package listed in
:data:`FAMILIES`: a class counts when it subclasses
:class:`sklearn.base.BaseEstimator` and has a ``fit`` method. Small parameters for
the common checks live beside the registry, in :mod:`skpaper.utils._test_params`.
"""

import importlib
import inspect

from sklearn.base import (
    BaseEstimator,
    ClassifierMixin,
    ClusterMixin,
    RegressorMixin,
    TransformerMixin,
)

#: Family packages, in the order of ``DESIGN.md``.
FAMILIES = (
    "sketch",
    "independence",
    "semisupervised",
    "bandits",
    "multilabel",
    "reward",
    "nn",
    "representation",
    "adaptation",
    "graph",
    "kg",
    "shape",
    "vision",
    "language",
)

#: Families that import torch at module import.
TORCH_FAMILIES = frozenset(
    {"nn", "representation", "adaptation", "graph", "kg", "shape", "vision", "language"}
)

_TYPE_MIXINS = {
    "classifier": ClassifierMixin,
    "regressor": RegressorMixin,
    "transformer": TransformerMixin,
    "cluster": ClusterMixin,
}


def _torch_available():
    return importlib.util.find_spec("torch") is not None


def _family_module(family):
    name = f"skpaper.{family}"
    if importlib.util.find_spec(name) is None:
        return None
    if family in TORCH_FAMILIES and not _torch_available():
        return None
    return importlib.import_module(name)


def is_public_estimator_class(obj):
    """Return True when ``obj`` is a concrete, public, fittable estimator class."""
    return (
        inspect.isclass(obj)
        and issubclass(obj, BaseEstimator)
        and not obj.__name__.startswith("_")
        and not inspect.isabstract(obj)
        and callable(getattr(obj, "fit", None))
    )


def all_estimators(type_filter=None):
    """List every public skpaper estimator.

    Parameters
    ----------
    type_filter : {"classifier", "regressor", "transformer", "cluster"} or list \
            of those, default=None
        Keep only estimators of these kinds. ``None`` keeps all.

    Returns
    -------
    estimators : list of (str, type)
        ``(name, class)`` pairs sorted by name. Families that need torch are
        left out when torch is not installed.

    Examples
    --------
    >>> from skpaper.utils import all_estimators
    >>> names = [name for name, _ in all_estimators()]
    >>> names == sorted(names)
    True
    """
    if type_filter is None:
        wanted = None
    else:
        kinds = [type_filter] if isinstance(type_filter, str) else list(type_filter)
        unknown = sorted(set(kinds) - set(_TYPE_MIXINS))
        if unknown:
            raise ValueError(
                f"type_filter must be None or a subset of {sorted(_TYPE_MIXINS)}, "
                f"got {unknown}."
            )
        wanted = tuple(_TYPE_MIXINS[k] for k in kinds)

    found = {}
    for family in FAMILIES:
        module = _family_module(family)
        if module is None:
            continue
        for name in getattr(module, "__all__", ()):
            obj = getattr(module, name)
            if is_public_estimator_class(obj) and (wanted is None or issubclass(obj, wanted)):
                found[obj.__name__] = obj
    return sorted(found.items())
