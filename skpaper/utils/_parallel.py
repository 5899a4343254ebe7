"""The one pattern for ``n_jobs`` loops in skpaper.

Every embarrassingly parallel loop (bootstrap or permutation replicates, seeds,
per-label fits) goes through :func:`parallel_map`, which uses
:class:`sklearn.utils.parallel.Parallel`. Wrapping a call in
``joblib.parallel_config(backend="dask")`` therefore spreads it over a Dask
cluster without any skpaper code depending on dask.
"""

from sklearn.utils.parallel import Parallel, delayed


def parallel_map(func, iterable, *, n_jobs=None, prefer=None, **kwargs):
    """Apply ``func`` to each item of ``iterable`` with sklearn's ``Parallel``.

    Parameters
    ----------
    func : callable
        Called as ``func(item, **kwargs)``; must be picklable for process backends.
    iterable : iterable
        Items to apply ``func`` to.
    n_jobs : int, default=None
        Number of jobs; ``None`` means 1 unless inside a ``joblib.parallel_config``.
    prefer : {"processes", "threads"} or None, default=None
        Soft hint passed to joblib.
    **kwargs
        Extra keyword arguments for every call.

    Returns
    -------
    results : list
        In the order of ``iterable``.

    Examples
    --------
    >>> from skpaper.utils import parallel_map
    >>> parallel_map(abs, [-1, 2, -3], n_jobs=1)
    [1, 2, 3]
    """
    return Parallel(n_jobs=n_jobs, prefer=prefer)(delayed(func)(x, **kwargs) for x in iterable)
