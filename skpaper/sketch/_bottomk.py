"""The mergeable bottom-k (KMV) cardinality sketch."""

import numbers
import struct
import zlib
from typing import NamedTuple

import numpy as np

from .._ext._bottomk import (
    SketchState,
    bottomk_merge,
    bottomk_update,
    bottomk_update_text,
    bottomk_update_text_array,
)
from ._keys import (
    TEXT_HASH_VERSION,
    as_key_array,
    check_seed,
    mix_seed,
    mixed_type_error,
    text_list,
)

__all__ = ["DEFAULT_SEED", "BottomKSketch", "SetEstimate", "merge_sketches"]

#: Hash seed of ``BottomKSketch(seed=None)``: fixed, so default sketches merge.
DEFAULT_SEED = 0x5EED

_MAGIC = b"SKBK"
# Version 2 appended a CRC-32 of everything before it (version 1 had none);
# version 3 has the layout of version 2 and marks text-key hash version 2 (byte
# and str keys hashed by the text-key hash instead of MurmurHash3).
_VERSION = 3
_HEADER = struct.Struct("<4sB3sIIQ")  # magic, version, reserved (zero), k, size, seed
_CRC = struct.Struct("<I")
#: Largest sketch size (128 MiB of hashes).
K_MAX = 2**24
_TWO64 = 2.0**64


def check_k(k, name="k"):
    """Validate a sketch size in ``[2, K_MAX]`` and return it as an int."""
    if isinstance(k, (bool, np.bool_)) or not isinstance(k, numbers.Integral):
        raise TypeError(f"{name} must be an int >= 2, got {type(k).__name__} {k!r}.")
    if not 2 <= int(k) <= K_MAX:
        raise ValueError(f"{name} must be an int in [2, 2**24], got {k}.")
    return int(k)


class SetEstimate(NamedTuple):
    """An estimate from bottom-k sketches and its standard error."""

    #: The estimated value.
    estimate: float
    #: Its standard error (0 when the value is exact).
    std_error: float


def _check_num_std(num_std):
    if isinstance(num_std, (bool, np.bool_)) or not isinstance(num_std, numbers.Real) \
            or not 0 < num_std <= 10:
        raise ValueError(f"num_std must be a float in (0, 10], got {num_std!r}.")
    return float(num_std)


def hash_to_unit(hashes):
    """Map 64-bit hashes to uniform values in (0, 1): ``(h + 1/2) / 2**64``."""
    return (np.asarray(hashes, dtype=np.uint64).astype(np.float64) + 0.5) / _TWO64


class BottomKSketch(SketchState):
    """Mergeable bottom-k (KMV) sketch of a set of keys.

    Every key ``x`` gets a seeded 64-bit hash ``h(x)``, read as a uniform
    number in (0, 1); the sketch keeps the ``k`` smallest distinct hashes. It is
    composable: the sketch of a union is the bottom-k of the union of the
    sketches, so sketches built on separate partitions merge exactly.

    Parameters
    ----------
    k : int, default=256
        Number of hashes kept, in ``[2, 2**24]``. The relative standard error of
        :meth:`estimate` is about ``1 / sqrt(k - 2)``.
    seed : int or None, default=None
        Hash seed in ``[0, 2**64)``. ``None`` is the fixed default seed
        :data:`DEFAULT_SEED` (``0x5EED``), so two sketches built with the
        defaults merge. Only sketches with equal ``k`` and ``seed`` merge. Pick
        your own (random, secret) seed when someone who sees the sketch or its
        estimates may choose the keys: a known seed lets them find keys with
        low hashes (see :class:`RobustCardinalitySketch`, which keeps its
        hash secret).

    Attributes
    ----------
    k : int
        The sketch size.
    seed : int
        The (resolved) hash seed.

    See Also
    --------
    RobustCardinalitySketch : Estimators on this sketch that stay accurate under
        adaptive queries.
    merge_sketches : Tree-reduce many sketches into one.

    Notes
    -----
    Integer keys hash as ``splitmix64(key ^ splitmix64(seed))``; a negative
    integer key is read as its 64-bit two's complement, so ``-1`` and
    ``2**64 - 1`` are the same key. Byte and ``str`` keys (UTF-8) are first
    compressed to 64 bits by the text-key hash (one folded 64x64-bit
    multiplication per 16 bytes, keyed by ``splitmix64(seed)``; text-key hash
    version 2, serialization format 3). Version 1 (format 2) used MurmurHash3
    x64_128 there, which gives other hashes for the same byte and str keys, so
    format-2 sketches are rejected rather than merged with new ones. A ``str``
    hashes as its UTF-8 bytes whatever its container, so sketches of the same
    words merge whether they came as ``str``, ``bytes``, numpy ``U``/``S`` or
    ``StringDType`` arrays. With :math:`\\tau_k` the k-th smallest hash in (0, 1), the
    estimate of the number of distinct keys :math:`n` is the unbiased
    :math:`(k - 1) / \\tau_k` (section 2 of [1]_); below ``k`` distinct keys
    the sketch holds every key and the count is exact. The memory is ``O(k)``:
    one array of ``k`` 64-bit hashes, plus, during an :meth:`update`, a
    buffer of ``b = max(1024, k / 4)`` candidates and, for ``k <= 65,536``
    and updates of many keys, a hash set of fewer than ``3 (k + b)`` hashes
    that drops repeated keys before any insertion work.

    Thread safety: one sketch may be updated, merged, read and serialized from
    several threads at once. Every method that changes the kept hashes or must
    see them whole (:meth:`update`, :meth:`update_one`, :meth:`merge`,
    :meth:`estimate`, :meth:`to_bytes`, :meth:`copy`, ``==``, ``len``) holds
    the sketch's lock while it does (the kernels write the hashes without the
    GIL); a merge takes the locks of both sketches in a fixed order, so two
    threads merging ``a`` into ``b`` and ``b`` into ``a`` do not deadlock. The
    result is the sketch of the union of everything added, as if the calls had
    run one after the other, so it does not depend on the threads' timing.
    Updates of one sketch do not run in parallel (they take turns); for
    parallel ingestion give each thread its own sketch and merge them. Not
    thread-safe: a list or array of keys changed by another thread while it is
    being sketched (a list that changes size raises ``RuntimeError``). The
    lock is a flag read and set with the GIL held: uncontended it costs no
    system call (``benchmarks/bench_sketch.py`` measures it), and it relies on
    the GIL, so free-threaded Python builds are not covered.

    References
    ----------
    .. [1] E. Cohen, M. Singhal and U. Stemmer, "Breaking the Quadratic
       Barrier: Robust Cardinality Sketches for Adaptive Queries", ICML 2025,
       arXiv:2502.05723.

    Examples
    --------
    >>> import numpy as np
    >>> from skpaper.sketch import BottomKSketch
    >>> a = BottomKSketch(k=256, seed=7).update(np.arange(0, 60_000))
    >>> b = BottomKSketch(k=256, seed=7).update(np.arange(40_000, 100_000))
    >>> round(a.merge(b).estimate() / 100_000, 1)
    1.0
    >>> BottomKSketch(k=256, seed=7).update(["a", "b", "a"]).estimate()
    2.0
    """

    # _k, _mixed, _hashes and _size live in SketchState, with the lock.
    __slots__ = ("_seed",)

    def __init__(self, k=256, seed=None):
        self._k = check_k(k)
        if seed is None:
            seed = DEFAULT_SEED
        self._seed = check_seed(seed)
        self._mixed = mix_seed(self._seed)
        self._hashes = np.zeros(self._k, dtype=np.uint64)
        self._size = 0

    @property
    def k(self):
        """Capacity: the number of smallest hashes kept."""
        return self._k

    @property
    def seed(self):
        """Seed of the hash function; sketches merge only with equal seeds."""
        return self._seed

    @property
    def hashes(self):
        """Sorted array of the kept hashes (a copy)."""
        self._acquire()
        try:
            return self._hashes[: self._size].copy()
        finally:
            self._release()

    @property
    def is_exact(self):
        """True while fewer than ``k`` distinct keys were seen (the count is exact)."""
        return len(self) < self._k

    def get_params(self, deep=True):
        """Return the parameters that rebuild an empty sketch that merges with this one.

        Parameters
        ----------
        deep : bool, default=True
            Ignored: a sketch has no nested parameters.

        Returns
        -------
        params : dict
            ``{"k": k, "seed": seed}``.
        """
        return {"k": self._k, "seed": self._seed}

    def update(self, keys):
        """Add keys to the sketch.

        Parameters
        ----------
        keys : array-like of int, or iterable of bytes or str
            A numpy integer array takes the fast path (no Python loop). Float
            arrays are accepted only when every value is integral. Two
            aliasings to know: negative integers alias their two's complement
            (``-1`` is ``2**64 - 1``), and a float above ``2**53`` in
            magnitude stands for every integer that rounds to it (``2.0**53 + 1``
            is ``2.0**53``), so float keys there warn (``UserWarning``): pass
            integers.
            Lists of ``str``/``bytes``, numpy ``U``/``S`` arrays and numpy 2
            ``StringDType`` arrays hash in Cython from the strings' buffers;
            ``str`` keys hash as their UTF-8 bytes (``"a"`` equals ``b"a"``).
            A list (or tuple) of ``str``/``bytes`` is hashed and folded in one
            pass, in chunks that run without the GIL. For word-like keys the
            fastest containers are ``StringDType`` and ``S`` arrays; a ``U``
            array stores four bytes per character, padded to its longest item,
            and runs at 0.8-1.07x the list (``benchmarks/bench_sketch.py``).

        Returns
        -------
        self : BottomKSketch
            The sketch, updated in place.

        Raises
        ------
        TypeError
            If the keys mix text and other types, or are of an unsupported type.
        ValueError
            If a float key is not integral, or a ``str`` key has no UTF-8 form
            (a lone surrogate: ``UnicodeEncodeError``). The sketch is then left
            unchanged.
        """
        items = text_list(keys)
        if items is not None:
            self._update_text(items)
            return self
        if isinstance(keys, np.ndarray) and keys.ndim == 1 and keys.dtype.kind in "UST" \
                and keys.size:
            self._update_text_array(keys)
            return self
        arr = as_key_array(keys, self._mixed)
        if not arr.size:
            return self
        self._acquire()
        try:
            self._reserve()
            self._size = bottomk_update(self._hashes, self._size, arr, np.uint64(self._mixed))
        finally:
            self._release()
        return self

    def _update_text(self, items):
        self._acquire()
        try:
            self._reserve()
            # The kernel works in place; on an error the copy is dropped.
            work = self._hashes if self._size == 0 else self._hashes.copy()
            try:
                size = bottomk_update_text(work, self._size, items, np.uint64(self._mixed))
            except TypeError:
                raise mixed_type_error(items, "keys") from None
            self._hashes, self._size = work, size
        finally:
            self._release()

    def _update_text_array(self, arr):
        # numpy U/S/StringDType keys: hashed and folded in one pass without the GIL.
        kind = arr.dtype.kind
        if kind == "U" and not arr.dtype.isnative:
            arr = arr.astype(arr.dtype.newbyteorder("="))
        arr = np.ascontiguousarray(arr)
        if kind == "T":
            from .._ext._strings import bottomk_update_string_dtype as kernel
        else:
            kernel = bottomk_update_text_array
        self._acquire()
        try:
            self._reserve()
            work = self._hashes if self._size == 0 else self._hashes.copy()
            size = kernel(work, self._size, arr, np.uint64(self._mixed))
            self._hashes, self._size = work, size
        finally:
            self._release()

    def _locked(self, other=None):
        # Both locks in a fixed order (by id), so two threads merging a into b
        # and b into a cannot deadlock; returns the sketches to release.
        pair = [self] if other is None or other is self else sorted((self, other), key=id)
        pair[0]._acquire()
        if len(pair) > 1:
            try:
                pair[1]._acquire()
            except BaseException:
                pair[0]._release()
                raise
        return pair

    @staticmethod
    def _unlock(pair):
        for s in reversed(pair):
            s._release()

    def _check_compatible(self, other):
        if not isinstance(other, BottomKSketch):
            raise TypeError(f"other must be a BottomKSketch, got {type(other).__name__}.")
        if other._k != self._k:
            raise ValueError(
                f"Cannot merge sketches of different sizes: k={self._k} and k={other._k}."
            )
        if other._seed != self._seed:
            raise ValueError(
                f"Cannot merge sketches with different seeds: {self._seed} and {other._seed}."
            )

    def merge(self, other):
        """Merge ``other`` into this sketch, in place (sketch of the union).

        Parameters
        ----------
        other : BottomKSketch
            A sketch with the same ``k`` and ``seed``.

        Returns
        -------
        self : BottomKSketch
            The sketch, now of the union.

        Raises
        ------
        ValueError
            If ``k`` or ``seed`` differ.
        """
        self._check_compatible(other)
        if other is self:
            return self
        pair = self._locked(other)
        try:
            self._reserve()
            self._size = bottomk_merge(self._hashes, self._size, other._hashes, other._size)
        finally:
            self._unlock(pair)
        return self

    def __or__(self, other):
        return self.copy().merge(other)

    def estimate(self):
        """Estimated number of distinct keys: ``(k - 1) / tau_k``, exact below ``k``.

        Returns
        -------
        estimate : float
            The estimated number of distinct keys seen.
        """
        self._acquire()
        try:
            size, kth = self._size, self._hashes[self._k - 1] if self._size == self._k else 0
        finally:
            self._release()
        if size < self._k:
            return float(size)
        return (self._k - 1) / float(hash_to_unit(kth))

    def _state(self):
        # A copy of the kept hashes, read under the lock.
        self._acquire()
        try:
            hashes = self._hashes[: self._size].copy()
        finally:
            self._release()
        return hashes

    def _bound(self, num_std, upper):
        num_std = _check_num_std(num_std)
        hashes = self._state()
        if hashes.size < self._k:
            return float(hashes.size)
        from scipy.stats import gamma, norm

        # n * tau_k is Gamma(k, 1) for n >> k, whatever n (a pivot); for n near
        # k the true Beta(k, n - k + 1) is narrower, so the bounds are conservative.
        tail = float(norm.sf(num_std))
        tau = float(hash_to_unit(hashes[-1]))
        if upper:
            return float(gamma.isf(tail, self._k)) / tau
        return max(float(hashes.size), float(gamma.ppf(tail, self._k)) / tau)

    def lower_bound(self, num_std=2):
        """Lower confidence bound on the number of distinct keys.

        Parameters
        ----------
        num_std : float, default=2
            Width in standard deviations of a normal, in ``(0, 10]``: the bound
            holds with the probability that a normal stays above ``-num_std``
            standard deviations (97.7% for 2; 1, 2 and 3 are the usual
            choices, as for DataSketches' theta sketches).

        Returns
        -------
        bound : float
            At least the number of kept hashes; exact below ``k`` keys.

        Notes
        -----
        With :math:`\\tau_k` the k-th smallest hash in (0, 1) and :math:`n`
        distinct keys, :math:`n \\tau_k` is close to a Gamma(k, 1) variable
        whatever :math:`n`, so :math:`G_{p} / \\tau_k` and
        :math:`G_{1-p} / \\tau_k` (the Gamma quantiles, ``p`` the normal tail
        of ``num_std``) bound :math:`n` with probability ``1 - p`` each.

        Examples
        --------
        >>> import numpy as np
        >>> from skpaper.sketch import BottomKSketch
        >>> s = BottomKSketch(k=1024, seed=3).update(np.arange(100_000))
        >>> s.lower_bound(2) < 100_000 < s.upper_bound(2)
        True
        """
        return self._bound(num_std, upper=False)

    def upper_bound(self, num_std=2):
        """Upper confidence bound on the number of distinct keys.

        Parameters
        ----------
        num_std : float, default=2
            As in :meth:`lower_bound`.

        Returns
        -------
        bound : float
            Exact below ``k`` keys.

        Examples
        --------
        >>> import numpy as np
        >>> from skpaper.sketch import BottomKSketch
        >>> s = BottomKSketch(k=1024, seed=3).update(np.arange(100_000))
        >>> s.estimate() < s.upper_bound(1) < s.upper_bound(3)
        True
        """
        return self._bound(num_std, upper=True)

    def _union_sample(self, other):
        # The k smallest hashes of the union, and whether each is in self and in
        # other. A hash among the k smallest of the union that belongs to a set
        # is among the k smallest of that set, so both sketches decide it.
        self._check_compatible(other)
        mine, theirs = self._state(), other._state()
        union = np.union1d(mine, theirs)[: self._k]
        in_mine = np.isin(union, mine, assume_unique=True)
        in_theirs = np.isin(union, theirs, assume_unique=True)
        return union, in_mine, in_theirs

    def _set_estimate(self, union, count):
        # count of the union's kept hashes that fall in the set asked for.
        if union.size < self._k:
            return SetEstimate(float(count), 0.0)
        k = self._k
        scale = (k - 1) / float(hash_to_unit(union[-1]))
        frac = count / k
        estimate = frac * scale
        # The sampled fraction (binomial) and the union estimate (RSE 1/sqrt(k - 2)).
        rel2 = (1 - frac) / (k * frac) + 1 / (k - 2) if count else 0.0
        return SetEstimate(float(estimate), float(estimate * np.sqrt(rel2)))

    def jaccard(self, other):
        """Estimated Jaccard similarity ``|A & B| / |A | B|`` of this set and ``other``'s.

        Parameters
        ----------
        other : BottomKSketch
            The other set's sketch (same ``k`` and ``seed``).

        Returns
        -------
        result : SetEstimate
            ``(estimate, std_error)``: the share of the union's ``k`` smallest
            hashes that lie in both sketches, and its binomial standard error
            :math:`\\sqrt{J (1 - J) / k}`; exact (error 0) while the union has
            fewer than ``k`` keys.

        Examples
        --------
        >>> import numpy as np
        >>> from skpaper.sketch import BottomKSketch
        >>> a = BottomKSketch(k=1024, seed=1).update(np.arange(0, 30_000))
        >>> b = BottomKSketch(k=1024, seed=1).update(np.arange(10_000, 40_000))
        >>> j = a.jaccard(b)  # true value 0.5
        >>> abs(j.estimate - 0.5) < 3 * j.std_error
        True
        """
        union, in_mine, in_theirs = self._union_sample(other)
        if not union.size:
            return SetEstimate(0.0, 0.0)
        both = int(np.count_nonzero(in_mine & in_theirs))
        j = both / union.size
        if union.size < self._k:
            return SetEstimate(j, 0.0)
        return SetEstimate(j, float(np.sqrt(j * (1 - j) / self._k)))

    def estimate_intersection(self, other):
        """Estimated number of distinct keys in both this sketch's set and ``other``'s.

        Parameters
        ----------
        other : BottomKSketch
            Sketch of the set to intersect with (same ``k`` and ``seed``).

        Returns
        -------
        result : SetEstimate
            ``(estimate, std_error)``. With :math:`\\tau` the k-th smallest hash of
            the union and :math:`K` the number of the union's ``k`` smallest
            hashes in both sketches, the estimate is the unbiased
            :math:`(K / k) (k - 1) / \\tau` (Beyer et al., SIGMOD 2007); the
            error combines the binomial error of :math:`K` and the union's
            :math:`1/\\sqrt{k - 2}`. Exact while the union has fewer than ``k``
            keys; an error of 0 with :math:`K = 0` only says no common key was
            sampled.

        Examples
        --------
        >>> from skpaper.sketch import BottomKSketch
        >>> odd = BottomKSketch(k=2048).update(range(1, 200_000, 2))
        >>> small = BottomKSketch(k=2048).update(range(150_000))
        >>> est, err = odd.estimate_intersection(small)  # 75,000 odd keys below 150,000
        >>> abs(est / 75_000 - 1) < 0.1, err > 0
        (True, True)
        """
        union, in_mine, in_theirs = self._union_sample(other)
        return self._set_estimate(union, int(np.count_nonzero(in_mine & in_theirs)))

    def estimate_difference(self, other):
        """Estimated number of distinct keys in this sketch's set and not in ``other``'s.

        Parameters
        ----------
        other : BottomKSketch
            Sketch of the set whose keys are taken away (same ``k`` and ``seed``).

        Returns
        -------
        result : SetEstimate
            ``(estimate, std_error)``, as :meth:`estimate_intersection` with
            :math:`K` the union's smallest hashes in this sketch only.

        Examples
        --------
        >>> from skpaper.sketch import BottomKSketch
        >>> words = BottomKSketch(k=16).update(["a", "b", "c", "d"])
        >>> words.estimate_difference(BottomKSketch(k=16).update(["b", "d", "e"]))
        SetEstimate(estimate=2.0, std_error=0.0)
        """
        union, in_mine, in_theirs = self._union_sample(other)
        return self._set_estimate(union, int(np.count_nonzero(in_mine & ~in_theirs)))

    def copy(self):
        """Return an independent copy.

        Returns
        -------
        sketch : BottomKSketch
            A sketch equal to this one, sharing no state with it.
        """
        new = BottomKSketch.__new__(BottomKSketch)
        new._k, new._seed, new._mixed = self._k, self._seed, self._mixed
        self._acquire()
        try:
            new._hashes, new._size = self._hashes.copy(), self._size
        finally:
            self._release()
        return new

    def __len__(self):
        self._acquire()
        self._release()
        return self._size

    def __eq__(self, other):
        if not isinstance(other, BottomKSketch):
            return NotImplemented
        pair = self._locked(other)
        try:
            return (
                self._k == other._k
                and self._seed == other._seed
                and self._size == other._size
                and bool(np.array_equal(self._hashes[: self._size],
                                        other._hashes[: other._size]))
            )
        finally:
            self._unlock(pair)

    __hash__ = None

    def __repr__(self):
        return f"BottomKSketch(k={self._k}, seed={self._seed})"

    def to_bytes(self):
        """Serialize to a compact little-endian byte string.

        Format version 3: a 24-byte header (magic ``SKBK``, version, three zero
        bytes, ``k``, size, seed), the sorted hashes (8 bytes each), and a
        CRC-32 of everything before it. Version 3 has the layout of version 2
        and marks the text-key hash of byte and str keys (version 2 sketches
        hashed them with MurmurHash3).

        Returns
        -------
        data : bytes
            The serialized sketch, ``28 + 8 * len(sketch)`` bytes long.
        """
        self._acquire()
        try:
            header = _HEADER.pack(_MAGIC, _VERSION, bytes(3), self._k, self._size, self._seed)
            body = header + self._hashes[: self._size].astype("<u8").tobytes()
        finally:
            self._release()
        return body + _CRC.pack(zlib.crc32(body))

    @classmethod
    def from_bytes(cls, data):
        """Rebuild a sketch from :meth:`to_bytes` output, validating untrusted input.

        Every header field is checked against the payload length before any
        allocation, and the checksum must match, so a truncated, extended or
        corrupted input (any single flipped bit) is rejected.

        The CRC-32 detects accidents, not tampering: it is not a signature and
        has no key, so anyone can write a well-formed payload (any ``k``,
        seed and sorted hashes, with a matching checksum) that claims any
        estimate. Accept sketches from untrusted parties only over a channel
        that authenticates them (a signature or an HMAC over these bytes).

        Parameters
        ----------
        data : bytes, bytearray or memoryview
            Output of :meth:`to_bytes`.

        Returns
        -------
        sketch : BottomKSketch

        Raises
        ------
        ValueError
            If ``data`` is not a valid version-3 serialized sketch. Version 1
            (no checksum) and version 2 (byte and str keys hashed with
            MurmurHash3, so its hashes would not merge with this version's)
            are rejected: rebuild the sketch from its keys with this version.
        """
        if not isinstance(data, (bytes, bytearray, memoryview)):
            raise TypeError(f"data must be bytes, got {type(data).__name__}.")
        data = bytes(data)
        minimum = _HEADER.size + _CRC.size
        if len(data) < 5:
            raise ValueError(
                f"data is too short for a BottomKSketch: {len(data)} bytes, "
                f"expected at least {minimum}."
            )
        if data[:4] != _MAGIC:
            raise ValueError(f"data is not a serialized BottomKSketch (magic {data[:4]!r}).")
        if data[4] == 1:
            raise ValueError(
                "data is a version-1 BottomKSketch, which carries no checksum and is no "
                "longer read; rebuild the sketch from its keys with this version "
                f"(version {_VERSION})."
            )
        if data[4] == 2:
            raise ValueError(
                "data is a version-2 BottomKSketch, whose byte and str keys were hashed "
                "with MurmurHash3 (text-key hash version 1); this version hashes them "
                f"with text-key hash version {TEXT_HASH_VERSION}, so the two would not "
                "merge. Rebuild the sketch from its keys with this version "
                f"(version {_VERSION})."
            )
        if data[4] != _VERSION:
            raise ValueError(
                f"data has BottomKSketch format version {data[4]}, expected {_VERSION}."
            )
        if len(data) < minimum:
            raise ValueError(
                f"data is too short for a BottomKSketch: {len(data)} bytes, "
                f"expected at least {minimum}."
            )
        _, _, reserved, k, size, seed = _HEADER.unpack_from(data)
        if reserved != bytes(3):
            raise ValueError("data has non-zero reserved header bytes.")
        if not 2 <= k <= K_MAX:
            raise ValueError(f"data has k={k}, expected an int in [2, 2**24].")
        if size > k:
            raise ValueError(f"data has size={size} hashes, more than k={k}.")
        expected = minimum + 8 * size
        if len(data) != expected:
            raise ValueError(
                f"data has {len(data)} bytes, expected {expected} for {size} hashes."
            )
        (crc,) = _CRC.unpack_from(data, expected - _CRC.size)
        if zlib.crc32(memoryview(data)[: expected - _CRC.size]) != crc:
            raise ValueError("data fails its checksum: it is corrupted or was altered.")
        hashes = np.frombuffer(data, dtype="<u8", count=size, offset=_HEADER.size)
        if size > 1 and not (hashes[1:] > hashes[:-1]).all():
            raise ValueError("data holds hashes that are not sorted and distinct.")
        # Allocate the payload only: a header cannot make us reserve k hashes.
        sketch = cls.__new__(cls)
        sketch._k, sketch._seed, sketch._size = k, check_seed(seed), size
        sketch._mixed = mix_seed(sketch._seed)
        sketch._hashes = hashes.astype(np.uint64)
        return sketch

    def __reduce__(self):
        return (BottomKSketch.from_bytes, (self.to_bytes(),))


def merge_sketches(sketches):
    """Merge many sketches into a new one, folding each input into the result in place.

    Parameters
    ----------
    sketches : iterable of BottomKSketch
        Non-empty; all with the same ``k`` and ``seed``. Read one at a time,
        so a generator of sketches is never held in memory at once.

    Returns
    -------
    sketch : BottomKSketch
        The sketch of the union; the inputs are left unchanged.

    Notes
    -----
    The memory is that of the result plus the ``k``-hash scratch array of
    one merge, freed after it: merging 64 sketches at ``k = 2**20`` peaks at
    8 MiB of arrays (the result) plus that 8 MiB scratch, where copying every
    input first took 512 MiB (``benchmarks/bench_sketch.py``).

    Examples
    --------
    >>> import numpy as np
    >>> from skpaper.sketch import BottomKSketch, merge_sketches
    >>> parts = [BottomKSketch(k=64, seed=1).update(np.arange(i, i + 10)) for i in (0, 5)]
    >>> merge_sketches(parts).estimate()
    15.0
    """
    result = None
    for s in sketches:
        if not isinstance(s, BottomKSketch):
            raise TypeError(f"sketches must hold BottomKSketch objects, got {type(s).__name__}.")
        if result is None:
            result = s.copy()
        else:
            result.merge(s)
    if result is None:
        raise ValueError("sketches must be a non-empty iterable of BottomKSketch.")
    return result
