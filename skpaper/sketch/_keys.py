"""Turning user keys into the 64-bit integers that the bottom-k kernels hash.

Integer keys are used as they are; a negative key is read as its 64-bit two's
complement, so ``-1`` and ``2**64 - 1`` are the same key. Byte and string keys
(``str`` as UTF-8) are first mapped to 64 bits with the text-key hash of
``src_ext/_skhash.h`` (:data:`TEXT_HASH_VERSION` 2; version 1 was MurmurHash3
x64_128 keyed by the low half of the mixed seed), keyed by the full mixed seed,
and then take the same final ``splitmix64(key ^ mixed)`` hash as integers. The
user's seed is mixed first (``mixed = splitmix64(seed)``): with a raw XOR,
small seeds only permute the low bits and a contiguous key range would hash to
the same set under every small seed.
"""

import numbers
import warnings

import numpy as np

from .._ext._hashing import hash_uint64, splitmix64, text_keys, text_keys_array

#: Version of the hash of byte and string keys: 1 was MurmurHash3 x64_128 (format
#: version 2 of serialized sketches), 2 is the text-key hash (format version 3).
TEXT_HASH_VERSION = 2
_TEXT_TYPES = (bytes, bytearray, memoryview, str)

_MASK64 = 0xFFFFFFFFFFFFFFFF
_INT64_MIN = -(2**63)
# Largest magnitude up to which float64 holds every integer.
_FLOAT_EXACT = 2.0**53


def check_seed(seed, name="seed"):
    """Validate a 64-bit hash seed and return it as a Python int."""
    if isinstance(seed, (bool, np.bool_)) or not isinstance(seed, numbers.Integral):
        raise TypeError(
            f"{name} must be an int in [0, 2**64) or None, got {type(seed).__name__} {seed!r}."
        )
    seed = int(seed)
    if not 0 <= seed <= _MASK64:
        raise ValueError(f"{name} must be an int in [0, 2**64) or None, got {seed}.")
    return seed


def mix_seed(seed):
    """The 64-bit value XOR-ed into every key before hashing: ``splitmix64(seed)``."""
    return int(splitmix64(seed))


def _integral_floats(arr, name):
    if np.isnan(arr).any():
        raise ValueError(f"{name} must not contain NaN, got an array with NaN values.")
    if not np.isfinite(arr).all():
        raise ValueError(f"{name} must not contain infinite values.")
    bad = arr != np.floor(arr)
    if bad.any():
        raise ValueError(
            f"{name} must be integers; float keys are accepted only when integral, "
            f"got non-integer value {float(arr[bad][0])!r}."
        )
    if (arr < _INT64_MIN).any() or (arr >= 2.0**64).any():
        raise ValueError(f"{name} must fit in 64 bits, got values out of range.")
    if (np.abs(arr) > _FLOAT_EXACT).any():
        warnings.warn(
            f"{name} holds float keys above 2**53 in magnitude, where a float no longer "
            "holds every integer: neighbouring integers round to the same float and count "
            "as one key. Pass integer keys (an integer array) to count them apart.",
            UserWarning, stacklevel=4,
        )
    out = np.empty(arr.shape, dtype=np.uint64)
    neg = arr < 0
    out[neg] = arr[neg].astype(np.int64).view(np.uint64)
    out[~neg] = arr[~neg].astype(np.uint64)
    return out


def _python_ints(items, name):
    out = np.empty(len(items), dtype=np.uint64)
    for i, item in enumerate(items):
        value = int(item)
        if not _INT64_MIN <= value <= _MASK64:
            raise ValueError(f"{name} must fit in 64 bits, got {value}.")
        out[i] = value & _MASK64
    return out


def mixed_type_error(items, name):
    """The TypeError for a list of text keys that holds something else."""
    bad = next(v for v in items if not isinstance(v, _TEXT_TYPES))
    return TypeError(
        f"{name} must all be integers or all be bytes/str, got a mix including "
        f"{type(bad).__name__}."
    )


def _text_keys(items, seed, name):
    try:
        return text_keys(items, seed)
    except TypeError:
        raise mixed_type_error(items, name) from None


def text_list(keys):
    """``keys`` as a list if it is a non-empty list or tuple of text keys, else None.

    Only the first item is checked: the text kernels reject any other item.
    """
    if type(keys) is list:
        items = keys
    elif type(keys) is tuple:
        items = list(keys)
    else:
        return None
    if items and isinstance(items[0], _TEXT_TYPES):
        return items
    return None


def as_key_array(keys, mixed, name="keys"):
    """Map ``keys`` to a 1-D ``uint64`` array ready for ``splitmix64(key ^ mixed)``.

    Parameters
    ----------
    keys : array-like of int, iterable of bytes or str
        Integer arrays (any integer dtype, or floats that are all integral) take
        the fast path without any Python loop.
    mixed : int
        The mixed sketch seed (:func:`mix_seed`); it also keys the text-key
        hash of byte/str keys.
    name : str, default="keys"
        Parameter name used in error messages.

    Returns
    -------
    keys : ndarray of uint64 of shape (n_keys,)
    """
    if isinstance(keys, (str, bytes, bytearray, memoryview)):
        raise TypeError(
            f"{name} must be an array or an iterable of keys, got a single "
            f"{type(keys).__name__}; wrap it in a list."
        )
    if isinstance(keys, np.ndarray) or hasattr(keys, "__array__"):
        arr = np.asarray(keys)
    else:
        try:
            # A list is read in place: no copy of a long list of words.
            items = keys if type(keys) is list else list(keys)
        except TypeError:
            raise TypeError(
                f"{name} must be an array or an iterable of keys, got {type(keys).__name__}."
            ) from None
        if not items:
            return np.empty(0, dtype=np.uint64)
        if isinstance(items[0], _TEXT_TYPES):
            return _text_keys(items, mixed, name)
        if all(isinstance(v, numbers.Integral) and not isinstance(v, (bool, np.bool_))
               for v in items):
            # Exact conversion: numpy would turn a mix of small and >= 2**63 ints into floats.
            for dtype in (np.int64, np.uint64):
                try:
                    arr = np.asarray(items, dtype=dtype)
                    break
                except OverflowError:
                    continue
            else:
                return _python_ints(items, name)
        elif all(isinstance(v, numbers.Real) for v in items):
            arr = np.asarray(items, dtype=np.float64)
        else:
            arr = np.asarray(items, dtype=object)
    if arr.ndim != 1:
        arr = arr.reshape(-1) if arr.ndim == 0 else arr
        if arr.ndim != 1:
            raise ValueError(f"{name} must be 1-D, got an array of shape {arr.shape}.")
    kind = arr.dtype.kind
    if kind in "iub":
        if kind == "u":
            return np.ascontiguousarray(arr, dtype=np.uint64)
        return np.ascontiguousarray(arr.astype(np.int64, copy=False).view(np.uint64))
    if kind == "f":
        return _integral_floats(arr.astype(np.float64, copy=False), name)
    if kind in "US":
        return text_keys_array(arr, mixed)
    if kind == "T":
        # numpy 2 StringDType, read through numpy's string API (numpy 2 only).
        from .._ext._strings import string_dtype_keys

        try:
            return string_dtype_keys(np.ascontiguousarray(arr), mixed)
        except ValueError as exc:
            raise ValueError(f"{name} {exc.args[0].removeprefix('keys ')}") from None
    if kind == "O":
        items = arr.tolist()
        if items and isinstance(items[0], _TEXT_TYPES):
            return _text_keys(items, mixed, name)
        if all(isinstance(v, numbers.Integral) and not isinstance(v, bool) for v in items):
            return _python_ints(items, name)
        if all(isinstance(v, numbers.Real) for v in items):
            return _integral_floats(np.asarray(items, dtype=np.float64), name)
        raise TypeError(
            f"{name} must all be integers or all be bytes/str, got a mix of "
            f"{sorted({type(v).__name__ for v in items})}."
        )
    raise TypeError(
        f"{name} must be integers or bytes/str, got an array of dtype {arr.dtype}."
    )


def key_hashes(keys, seed, name="keys"):
    """The sketch hash of every key under ``seed``, as uint64."""
    mixed = mix_seed(seed)
    return hash_uint64(as_key_array(keys, mixed, name), mixed)
