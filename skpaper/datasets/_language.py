"""Data generators for `skpaper.language` (numpy only; no torch import).

DistiLLM-2 generators: :func:`make_markov_text` (procedural corpora from a
sparse order-``k`` Markov source, with its exact log-likelihood available
through :func:`markov_text_log_prob`) and :func:`load_dataset_descriptions`
(a small real English corpus read from the dataset descriptions that ship
inside scikit-learn).

Focus Instruction Tuning generator: :func:`make_spurious_task` (a label tied
to a spurious "genre" whose correlation moves between splits; tabular, NLI-like
and sentiment text variants).
"""

import importlib.util
import os
import re
from numbers import Integral, Real

import numpy as np
from sklearn.utils import check_random_state

__all__ = [
    "load_dataset_descriptions",
    "make_markov_text",
    "make_spurious_task",
    "markov_text_log_prob",
]

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
        The sampled texts.
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


# ------------------------------------------------------------------ Focus Instruction Tuning
#: Premise and hypothesis quantifiers of the NLI-like task, and the relation each
#: (premise, hypothesis) pair holds for a shared subject and predicate ("all dogs bark ;
#: some dogs bark" is an entailment): monotonicity reasoning over four quantifiers.
_NLI_LABELS = ("entailment", "neutral", "contradiction")
_QUANTIFIER_RELATION = {
    ("all", "all"): 0, ("all", "most"): 0, ("all", "some"): 0, ("all", "no"): 2,
    ("most", "all"): 1, ("most", "most"): 0, ("most", "some"): 0, ("most", "no"): 2,
    ("some", "all"): 1, ("some", "most"): 1, ("some", "some"): 0, ("some", "no"): 2,
    ("no", "all"): 2, ("no", "most"): 2, ("no", "some"): 2, ("no", "no"): 0,
}
_NLI_SUBJECTS = ("dogs", "cats", "birds", "kids", "cooks", "pilots")
_NLI_PREDICATES = ("bark", "sing", "swim", "read", "cook", "fly")
_SENTIMENT_LABELS = ("negative", "neutral", "positive")
_SENTIMENT_WORDS = (
    ("awful", "dull", "boring", "terrible"),
    ("average", "plain", "ordinary", "routine"),
    ("great", "moving", "superb", "charming"),
)
_SENTIMENT_NOUNS = ("film", "plot", "cast", "score", "script", "ending")
_SENTIMENT_INTENSIFIERS = ("quite", "rather", "truly", "simply")
#: Spurious values of the text tasks: MNLI's genres first (matched, then mismatched), then
#: further made-up ones; seen values come from the first list, unseen from the second.
_SEEN_GENRES = ("fiction", "government", "slate", "telephone", "travel", "letters", "news",
                "blogs")
_UNSEEN_GENRES = ("oup", "verbatim", "facetoface", "nineeleven", "wiki", "forum", "poetry",
                  "reviews")
#: Register words of ``genre_register=True``: one per spurious label, shared by every genre
#: tied to that label, seen or unseen.
_GENRE_REGISTERS = ("formal", "casual", "spoken")
_SPURIOUS_SPLITS = ("iid", "low", "flipped", "unseen", "unseen_flipped")
_SPURIOUS_KINDS = ("tabular", "nli", "sentiment")


def make_spurious_task(n_samples=600, *, rho=0.9, n_genres=6, split="iid", kind="tabular",
                       n_classes=3, n_core=4, class_sep=2.0, noise=None, genre_register=False,
                       random_state=None):
    """Sample a task whose label is tied to a spurious "genre" feature (an SMNLI analogue).

    The data-generating process of the spurious MNLI (SMNLI) benchmark of
    Focus Instruction Tuning [1]_: a genre ``S`` is drawn uniformly, its
    spurious label is ``y_S = S mod K``; with probability ``rho`` the label is
    ``Y = y_S`` and otherwise uniform over the other ``K - 1`` labels; the
    core feature ``C`` (what the label really depends on) is then drawn given
    ``Y``. The spurious label of a genre never changes between splits; the
    splits move its correlation with ``Y``:

    - ``"iid"``: ``P(Y = y_S) = rho``, as in training;
    - ``"low"``: ``P(Y = y_S) = 1 / K``, no correlation;
    - ``"flipped"``: ``P(Y = (y_S + 1) mod K) = rho``, the correlation points
      to another label;
    - ``"unseen"``: ``n_genres`` genres never met in the other splits, with
      ``P(Y = y_S) = rho`` (pass ``rho=1/K`` to make them uncorrelated);
    - ``"unseen_flipped"``: the unseen genres with the flipped correlation.

    Three kinds of core feature ``C``:

    - ``"tabular"``: ``X`` holds ``n_core`` Gaussian columns with class means
      ``class_sep * e_Y`` and standard deviation ``noise`` (default 0.6),
      then the one-hot encoding of the genre over the ``n_genres`` seen
      genres (an unseen genre is all zeros, as a one-hot encoder fitted on
      the training genres encodes an unknown category);
    - ``"nli"``: texts ``"<genre> : <q1> <subject> <predicate> ; <q2>
      <subject> <predicate>"``, where the quantifier pair ``(q1, q2)`` over
      {all, most, some, no} decides entailment, neutral or contradiction
      ("all dogs bark ; some dogs bark" is an entailment, "some ... ; all
      ..." is neutral, "... ; no ..." a contradiction); with probability
      ``noise`` (default 0.1) the pair is drawn irrespective of ``Y``, so
      that ``C`` is informative but not perfect, as the Gaussian core is;
    - ``"sentiment"``: texts ``"<keyword> : the <noun> is <intensifier>
      <adjective>"`` whose adjective carries the sentiment (negative, neutral,
      positive), with the same ``noise``; an analogue of the paper's
      SpuriousSentiment (SS) task, the keyword playing the genre's part.

    Parameters
    ----------
    n_samples : int, default=600
        Number of samples.
    rho : float in [0, 1], default=0.9
        Strength of the spurious correlation (``rho_spurious`` in [1]_).
    n_genres : int, default=6
        Number of seen genres (and of unseen ones); at most 8 for the text kinds.
    split : {"iid", "low", "flipped", "unseen"}, default="iid"
        Which split to draw (see above).
    kind : {"tabular", "nli", "sentiment"}, default="tabular"
        Tabular features or texts (see above).
    n_classes : int, default=3
        Number of labels ``K`` (the text kinds have exactly 3).
    n_core : int, default=4
        Core columns of the tabular kind (at least ``n_classes``).
    class_sep : float, default=2.0
        Distance of the tabular class means from the origin.
    noise : float or None, default=None
        Tabular: standard deviation of the core columns (default 0.6). Text:
        probability that the core words ignore the label (default 0.1).
    genre_register : bool, default=False
        Give every genre one of ``K`` register words, the same for all genres
        tied to one spurious label, seen or unseen: the texts start with
        ``"<genre> <register> :"`` and the tabular kind gets ``K`` more columns,
        the one-hot register (also set for unseen genres). A model can then
        read the spurious label of a genre it never met off its register.
    random_state : int, RandomState instance or None, default=None
        Seeds the samples only: the class means, the genre-to-label mapping
        and the vocabularies are the same for every seed, so that splits drawn
        with different seeds describe one task.

    Returns
    -------
    X : ndarray of shape (n_samples, n_core + n_genres) or list of str
        Features (tabular) or texts.
    y : ndarray of shape (n_samples,)
        Labels: ints in ``[0, K)`` (tabular) or label words (text).
    y_spurious : ndarray of shape (n_samples,)
        The spurious label ``y_S`` of each sample's genre, coded like ``y``.

    References
    ----------
    .. [1] T. A. Lamb, A. Davies, A. Paren, P. H. S. Torr and F. Pinto, "Focus
       On This, Not That! Steering LLMs with Adaptive Feature Specification",
       ICML 2025.

    Examples
    --------
    >>> from skpaper.datasets import make_spurious_task
    >>> X, y, y_s = make_spurious_task(1000, rho=0.9, random_state=0)
    >>> X.shape, round(float((y == y_s).mean()), 1)
    ((1000, 10), 0.9)
    >>> X, y, y_s = make_spurious_task(1000, split="flipped", random_state=0)
    >>> round(float((y == (y_s + 1) % 3).mean()), 1)
    0.9
    >>> texts, y, y_s = make_spurious_task(2, kind="nli", random_state=0)
    >>> texts[0].split(" : ")[0] in {"fiction", "government", "slate", "telephone",
    ...                               "travel", "letters"}
    True
    """
    n_samples = _check_int("n_samples", n_samples, 1)
    n_genres = _check_int("n_genres", n_genres, 1)
    n_classes = _check_int("n_classes", n_classes, 2)
    if isinstance(rho, bool) or not isinstance(rho, Real) or not 0.0 <= rho <= 1.0:
        raise ValueError(f"rho must be a float in [0, 1], got {rho!r}.")
    if split not in _SPURIOUS_SPLITS:
        raise ValueError(f"split must be one of {_SPURIOUS_SPLITS}, got {split!r}.")
    if kind not in _SPURIOUS_KINDS:
        raise ValueError(f"kind must be one of {_SPURIOUS_KINDS}, got {kind!r}.")
    if kind == "tabular":
        n_core = _check_int("n_core", n_core, n_classes)
        if isinstance(class_sep, bool) or not isinstance(class_sep, Real) or class_sep < 0:
            raise ValueError(f"class_sep must be a float >= 0, got {class_sep!r}.")
        noise = 0.6 if noise is None else noise
        if isinstance(noise, bool) or not isinstance(noise, Real) or noise < 0:
            raise ValueError(f"noise must be a float >= 0 for kind='tabular', got {noise!r}.")
    else:
        if n_classes != 3:
            raise ValueError(f"kind={kind!r} has 3 labels, so n_classes must be 3, "
                             f"got {n_classes}.")
        if n_genres > len(_SEEN_GENRES):
            raise ValueError(f"n_genres must be <= {len(_SEEN_GENRES)} for kind={kind!r}, "
                             f"got {n_genres}.")
        noise = 0.1 if noise is None else noise
        if isinstance(noise, bool) or not isinstance(noise, Real) or not 0 <= noise <= 1:
            raise ValueError(f"noise must be a probability in [0, 1] for kind={kind!r}, "
                             f"got {noise!r}.")
    if not isinstance(genre_register, (bool, np.bool_)):
        raise TypeError(f"genre_register must be a bool, got {genre_register!r}.")
    rng = check_random_state(random_state)
    k = n_classes

    genre = rng.randint(n_genres, size=n_samples)
    # Unseen genres get their own ids; their spurious label follows the same rule.
    unseen = split in ("unseen", "unseen_flipped")
    genre_id = genre + (n_genres if unseen else 0)
    y_s = genre_id % k
    tied = (y_s + (1 if split in ("flipped", "unseen_flipped") else 0)) % k
    strength = 1.0 / k if split == "low" else float(rho)
    other = (tied + 1 + rng.randint(k - 1, size=n_samples)) % k
    y = np.where(rng.random_sample(n_samples) < strength, tied, other)

    if kind == "tabular":
        means = float(class_sep) * np.eye(k, n_core)
        core = means[y] + float(noise) * rng.standard_normal((n_samples, n_core))
        spurious = np.zeros((n_samples, n_genres))
        if not unseen:
            spurious[np.arange(n_samples), genre] = 1.0
        if genre_register:
            spurious = np.hstack([spurious, np.eye(k)[y_s]])
        return np.hstack([core, spurious]), y, y_s

    names = _UNSEEN_GENRES if unseen else _SEEN_GENRES
    if genre_register:
        names = [f"{name} {_GENRE_REGISTERS[(i + (n_genres if unseen else 0)) % k]}"
                 for i, name in enumerate(names)]
    ambiguous = rng.random_sample(n_samples) < float(noise)
    if kind == "nli":
        pairs = list(_QUANTIFIER_RELATION)
        by_label = [[p for p in pairs if _QUANTIFIER_RELATION[p] == c] for c in range(3)]
        subj = rng.randint(len(_NLI_SUBJECTS), size=n_samples)
        pred = rng.randint(len(_NLI_PREDICATES), size=n_samples)
        uniform = rng.randint(len(pairs), size=n_samples)
        within = rng.random_sample(n_samples)
        texts = []
        for i in range(n_samples):
            options = pairs if ambiguous[i] else by_label[y[i]]
            pick = uniform[i] if ambiguous[i] else int(within[i] * len(options))
            q1, q2 = options[pick]
            s, p = _NLI_SUBJECTS[subj[i]], _NLI_PREDICATES[pred[i]]
            texts.append(f"{names[genre[i]]} : {q1} {s} {p} ; {q2} {s} {p}")
        labels = np.array(_NLI_LABELS)
    else:
        polarity = np.where(ambiguous, rng.randint(3, size=n_samples), y)
        word = rng.randint(len(_SENTIMENT_WORDS[0]), size=n_samples)
        noun = rng.randint(len(_SENTIMENT_NOUNS), size=n_samples)
        adverb = rng.randint(len(_SENTIMENT_INTENSIFIERS), size=n_samples)
        texts = [
            f"{names[genre[i]]} : the {_SENTIMENT_NOUNS[noun[i]]} is "
            f"{_SENTIMENT_INTENSIFIERS[adverb[i]]} {_SENTIMENT_WORDS[polarity[i]][word[i]]}"
            for i in range(n_samples)
        ]
        labels = np.array(_SENTIMENT_LABELS)
    return texts, labels[y], labels[y_s]
