"""Memory estimates checked before allocations whose size comes from parameters or data."""

import os
import re

__all__ = ["check_allocation", "memory_limit"]

#: Largest single allocation (bytes) an estimator makes without being told otherwise.
_DEFAULT_LIMIT = 4 * 2**30

_UNITS = {"": 1, "K": 2**10, "M": 2**20, "G": 2**30, "T": 2**40}


def memory_limit():
    """Return the largest allocation, in bytes, that :func:`check_allocation` lets through.

    4 GiB unless the environment variable ``SKPAPER_MEMORY_LIMIT`` says otherwise
    (bytes, or a number with a ``K``, ``M``, ``G`` or ``T`` suffix, powers of 1024).

    Returns
    -------
    limit : int
        The limit in bytes.

    Raises
    ------
    ValueError
        If ``SKPAPER_MEMORY_LIMIT`` cannot be read.
    """
    text = os.environ.get("SKPAPER_MEMORY_LIMIT", "").strip()
    if not text:
        return _DEFAULT_LIMIT
    match = re.fullmatch(r"(\d+(?:\.\d+)?)\s*([KMGT]?)i?B?", text, flags=re.IGNORECASE)
    if match is None:
        raise ValueError(f"SKPAPER_MEMORY_LIMIT must be a number of bytes such as 8G or "
                         f"17179869184, got {text!r}.")
    return int(float(match.group(1)) * _UNITS[match.group(2).upper()])


def _format_bytes(n_bytes):
    for unit, size in (("TiB", 2**40), ("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if n_bytes >= size:
            return f"{n_bytes / size:.4g} {unit}"
    return f"{int(n_bytes)} B"


def check_allocation(n_bytes, owner, what, advice):
    """Raise a ValueError when an allocation of ``n_bytes`` would pass :func:`memory_limit`.

    Parameters
    ----------
    n_bytes : int or float
        Estimated size of the allocation.
    owner : str
        Who allocates (an estimator's class name).
    what : str
        What is allocated and from which parameters and data sizes, e.g.
        ``"the entity table (n_entities=10000000 x rank=64 x 2 floats)"``.
    advice : str
        What to change, naming the parameters.

    Raises
    ------
    ValueError
        If the estimate passes the limit; the message names ``what``, the
        estimate, the limit and ``advice``.

    Examples
    --------
    >>> from skpaper.utils._memory import check_allocation
    >>> check_allocation(1024, "Model", "a small table", "nothing to change")
    >>> check_allocation(2**50, "Model", "a huge table (size=2**47)", "lower size")
    Traceback (most recent call last):
    ...
    ValueError: Model: a huge table (size=2**47) would need 1024 TiB, more than ...
    """
    limit = memory_limit()
    if n_bytes > limit:
        raise ValueError(
            f"{owner}: {what} would need {_format_bytes(n_bytes)}, more than the "
            f"{_format_bytes(limit)} limit on an estimated allocation; {advice} (or raise the "
            "limit with the environment variable SKPAPER_MEMORY_LIMIT, e.g. 16G).")
