"""Data generators for `skpaper.language` (numpy only; no torch import).

DistiLLM-2 generators: :func:`make_markov_text` (procedural corpora from a
sparse order-``k`` Markov source, with its exact log-likelihood available
through :func:`markov_text_log_prob`) and :func:`load_dataset_descriptions`
(a small real English corpus read from the dataset descriptions that ship
inside scikit-learn).
"""

import importlib.util
import os
import re
from numbers import Integral, Real

import numpy as np
from sklearn.utils import check_random_state

__all__ = ["load_dataset_descriptions", "make_markov_text", "markov_text_log_prob"]

_DEFAULT_ALPHABET = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"


def _check_int(name, value, low):
    if isinstance(value, bool) or not isinstance(value, Integral):
        raise TypeError(f"{name} must be an int, got {type(value).__name__} ({value!r}).")
    if value < low:
        raise ValueError(f"{name} must be an int >= {low}, got {value!r}.")
    return int(value)


def make_markov_text(n_samples=512, *, n_symbols=24, order=2, length=24, concentration=0.15,
                     alphabet=None, random_state=None, return_model=False):
    """Sample texts from a random sparse Markov source of order ``order``.

    The source draws the first ``order`` symbols uniformly, then each next
    symbol from a transition row indexed by the previous ``order`` symbols.
    Every row is drawn once from a symmetric Dirichlet(``concentration``): a
    small concentration makes a peaked, low-entropy language that a tiny
    transformer can learn, with a known entropy rate.

    Parameters
    ----------
    n_samples : int, default=512
        Number of texts.
    n_symbols : int, default=24
        Alphabet size ``V``.
    order : int, default=2
        Markov order ``k``: the next symbol depends on the previous ``k``.
    length : int, default=24
        Characters per text (at least ``order``).
    concentration : float, default=0.15
        Dirichlet concentration of each transition row (> 0).
    alphabet : str or None, default=None
        ``n_symbols`` distinct characters; the default uses
        ``a-z``, ``A-Z`` and ``0-9`` (so at most 62 symbols).
    random_state : int, RandomState instance or None, default=None
        Seeds the transition table and the samples. Use
        ``return_model=True`` and :func:`markov_text_log_prob` to score other
        texts under the same source.
    return_model : bool, default=False
        Also return the source.

    Returns
    -------
    texts : list of str of length n_samples
    model : dict, only when ``return_model=True``
        ``{"alphabet": str, "order": int, "transitions": ndarray of shape
        (V**k, V), "entropy_rate": float}``; ``entropy_rate`` is the mean
        per-symbol entropy (nats) of the transitions met in ``texts``.

    Examples
    --------
    >>> from skpaper.datasets import make_markov_text
    >>> texts = make_markov_text(3, n_symbols=5, length=8, random_state=0)
    >>> len(texts), len(texts[0])
    (3, 8)
    >>> set("".join(texts)) <= set("abcde")
    True
    """
    n_samples = _check_int("n_samples", n_samples, 1)
    n_symbols = _check_int("n_symbols", n_symbols, 2)
    order = _check_int("order", order, 1)
    length = _check_int("length", length, order)
    if isinstance(concentration, bool) or not isinstance(concentration, Real):
        raise TypeError(f"concentration must be a float, got {type(concentration).__name__}.")
    if not concentration > 0:
        raise ValueError(f"concentration must be > 0, got {concentration!r}.")
    if alphabet is None:
        if n_symbols > len(_DEFAULT_ALPHABET):
            raise ValueError(
                f"n_symbols must be <= {len(_DEFAULT_ALPHABET)} with the default alphabet, "
                f"got {n_symbols}; pass alphabet= with more characters."
            )
        alphabet = _DEFAULT_ALPHABET[:n_symbols]
    if not isinstance(alphabet, str):
        raise TypeError(f"alphabet must be a str or None, got {type(alphabet).__name__}.")
    if len(alphabet) != n_symbols or len(set(alphabet)) != n_symbols:
        raise ValueError(
            f"alphabet must hold n_symbols={n_symbols} distinct characters, got {alphabet!r}."
        )
    if n_symbols**order > 2_000_000:
        raise ValueError(
            f"n_symbols**order must be <= 2e6 (the transition table), got {n_symbols**order}."
        )
    rng = check_random_state(random_state)
    transitions = rng.dirichlet(np.full(n_symbols, float(concentration)), size=n_symbols**order)
    # Dirichlet rows with a tiny concentration can underflow to exact zeros; keep
    # every continuation possible so that log-likelihoods stay finite.
    transitions = np.maximum(transitions, 1e-12)
    transitions /= transitions.sum(axis=1, keepdims=True)
    cumulative = np.cumsum(transitions, axis=1)

    seqs = np.empty((n_samples, length), dtype=np.int64)
    seqs[:, :order] = rng.randint(n_symbols, size=(n_samples, order))
    weights = n_symbols ** np.arange(order - 1, -1, -1)
    uniforms = rng.random_sample((n_samples, length))
    for t in range(order, length):
        context = seqs[:, t - order:t] @ weights
        rows = cumulative[context]
        seqs[:, t] = np.minimum((rows < uniforms[:, t:t + 1]).sum(axis=1), n_symbols - 1)
    symbols = np.array(list(alphabet))
    texts = ["".join(row) for row in symbols[seqs]]
    if not return_model:
        return texts
    if length > order:
        contexts = np.stack([seqs[:, t - order:t] @ weights for t in range(order, length)])
        row_entropy = -(transitions * np.log(transitions)).sum(axis=1)
        entropy_rate = float(row_entropy[contexts].mean())
    else:
        entropy_rate = float("nan")
    model = {"alphabet": alphabet, "order": order, "transitions": transitions,
             "entropy_rate": entropy_rate}
    return texts, model


def markov_text_log_prob(texts, model, *, start=None):
    """Per-text mean log-probability (nats per symbol) under a Markov source.

    Parameters
    ----------
    texts : list of str
        Texts over ``model["alphabet"]``.
    model : dict
        The source returned by :func:`make_markov_text` with
        ``return_model=True``.
    start : int or None, default=None
        Score symbols from this position on (at least ``order``, its
        default): the first ``order`` symbols have no context.

    Returns
    -------
    log_prob : ndarray of shape (n_texts,)
        Mean of :math:`\\log P(x_t \\mid x_{t-k}, \\dots, x_{t-1})` over the
        scored positions; ``nan`` for texts too short to score.

    Examples
    --------
    >>> from skpaper.datasets import make_markov_text, markov_text_log_prob
    >>> texts, model = make_markov_text(4, n_symbols=4, random_state=0, return_model=True)
    >>> markov_text_log_prob(texts, model).shape
    (4,)
    """
    if not isinstance(model, dict) or not {"alphabet", "order", "transitions"} <= set(model):
        raise TypeError("model must be the dict returned by make_markov_text(return_model=True).")
    if isinstance(texts, str) or not hasattr(texts, "__len__"):
        raise TypeError(f"texts must be a list of str, got {type(texts).__name__}.")
    alphabet, order = model["alphabet"], int(model["order"])
    start = order if start is None else _check_int("start", start, order)
    index = {c: i for i, c in enumerate(alphabet)}
    transitions = np.asarray(model["transitions"])
    n_symbols = len(alphabet)
    out = np.full(len(texts), np.nan)
    for i, text in enumerate(texts):
        if not isinstance(text, str):
            raise TypeError(f"texts[{i}] must be a str, got {type(text).__name__}.")
        try:
            ids = [index[c] for c in text]
        except KeyError as exc:
            raise ValueError(
                f"texts[{i}] holds the character {exc.args[0]!r}, which is not in the "
                f"source's alphabet {alphabet!r}."
            ) from None
        if len(ids) <= start:
            continue
        total = 0.0
        for t in range(start, len(ids)):
            context = 0
            for s in ids[t - order:t]:
                context = context * n_symbols + s
            total += np.log(transitions[context, ids[t]])
        out[i] = total / (len(ids) - start)
    return out


def load_dataset_descriptions(*, unit="sentence", min_chars=20, max_chars=200):
    """Real English text: the dataset descriptions bundled with scikit-learn.

    scikit-learn ships the reStructuredText description of each of its data
    sets (``sklearn/datasets/descr/*.rst``, about 60 kB of prose). Markup
    lines (directives, tables, headings) are dropped and the rest is split
    into sentences or paragraphs. Nothing is downloaded.

    Parameters
    ----------
    unit : {"sentence", "paragraph"}, default="sentence"
        How the prose is split.
    min_chars, max_chars : int, default=20, 200
        Keep pieces of at least ``min_chars`` characters and cut longer ones
        to ``max_chars``.

    Returns
    -------
    texts : list of str
        In file-name order, so the result is the same on every machine with
        the same scikit-learn release.

    Examples
    --------
    >>> from skpaper.datasets import load_dataset_descriptions
    >>> texts = load_dataset_descriptions()
    >>> len(texts) > 100 and all(20 <= len(t) <= 200 for t in texts)
    True
    """
    if unit not in ("sentence", "paragraph"):
        raise ValueError(f"unit must be 'sentence' or 'paragraph', got {unit!r}.")
    min_chars = _check_int("min_chars", min_chars, 1)
    max_chars = _check_int("max_chars", max_chars, min_chars)
    root = importlib.util.find_spec("sklearn").submodule_search_locations[0]
    folder = os.path.join(root, "datasets", "descr")
    paragraphs = []
    for name in sorted(os.listdir(folder)):
        if not name.endswith(".rst"):
            continue
        with open(os.path.join(folder, name), encoding="utf-8") as handle:
            block = []
            for line in handle.read().splitlines():
                stripped = line.strip()
                markup = (
                    stripped.startswith(("..", ":", "=", "-", "*", "|", "+", "#"))
                    or set(stripped) <= set("=-~^*#+ ")
                )
                if not stripped or markup:
                    if block:
                        paragraphs.append(" ".join(block))
                    block = []
                else:
                    block.append(stripped)
            if block:
                paragraphs.append(" ".join(block))
    pieces = paragraphs
    if unit == "sentence":
        pieces = [s for p in paragraphs for s in re.split(r"(?<=[.!?])\s+", p)]
    texts = []
    for piece in pieces:
        piece = re.sub(r"\s+", " ", piece.replace("`", "").replace("*", "")).strip()
        if len(piece) >= min_chars:
            texts.append(piece[:max_chars])
    return texts
