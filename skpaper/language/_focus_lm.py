"""Focus Instruction Tuning of a tiny language model with natural-language focus instructions.

The text variant of :class:`~skpaper.language.FocusInstructionTuner`: every
training text is wrapped in a prompt holding a focus instruction (one of
several paraphrases of its type, naming the core and the spurious feature),
and a :class:`~skpaper.language.LanguageModel` is fine-tuned to answer with
the focus label. Classification scores each label as the continuation of the
prompt, as instruction-tuned LLMs are evaluated in the paper.
"""

import re
from numbers import Integral

import numpy as np
from scipy.special import softmax
from sklearn.base import BaseEstimator, ClassifierMixin, MetaEstimatorMixin, clone
from sklearn.utils import check_random_state
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted

from ..utils._docstring import Substitution
from ..utils._sklearn import HasMethods, Interval, StrOptions, _fit_context
from ._focus import (
    _SHARED_DOCS,
    FOCUS_TYPES,
    SPURIOUS_TARGET_TYPES,
    FocusMixin,
    check_focus,
    draw_focus_plan,
    majority_mapping,
    map_spurious,
    resolve_focus_types,
)
from ._tiny_lm import LanguageModel
from ._tokenizers import _TOKENIZER_DOCS, SPECIAL_TOKENS, CharTokenizer, check_texts

__all__ = ["DEFAULT_FOCUS_TEMPLATES", "FocusInstructionLM", "WordTokenizer"]

#: Paraphrases of each focus-instruction type; ``{C}`` and ``{S}`` are replaced
#: by the names of the core and the spurious feature. The empty instruction
#: adds nothing to the prompt.
DEFAULT_FOCUS_TEMPLATES = {
    "empty": ("",),
    "focus_C": ("focus on the {C} .", "pay attention to the {C} .",
                "base the answer on the {C} ."),
    "ignore_S": ("ignore the {S} .", "do not use the {S} .", "disregard the {S} ."),
    "focus_C_ignore_S": ("focus on the {C} and ignore the {S} .",
                         "use the {C} , not the {S} .",
                         "pay attention to the {C} and disregard the {S} ."),
    "focus_S": ("focus on the {S} .", "pay attention to the {S} .",
                "base the answer on the {S} ."),
    "focus_S_ignore_C": ("focus on the {S} and ignore the {C} .",
                         "use the {S} , not the {C} .",
                         "pay attention to the {S} and disregard the {C} ."),
}


class WordTokenizer(CharTokenizer):
    """Whitespace word tokenizer: one id per distinct word of the corpus.

    A :class:`CharTokenizer` whose symbols are words.

    Ids 0-3 are ``<pad>``, ``<bos>``, ``<eos>``, ``<unk>``; the corpus words
    follow in sorted order. A word not seen in ``fit`` maps to ``<unk>``, so
    a spurious value never met in training is one unknown token, as an unseen
    genre is to the model.

    Attributes
    ----------
    vocab_ : list of str
        Tokens by id.

    Examples
    --------
    >>> from skpaper.language import WordTokenizer
    >>> tok = WordTokenizer().fit(["all dogs bark", "no dogs sing"])
    >>> tok.encode("all cats bark"), tok.vocab_size
    ([4, 3, 5], 9)
    >>> tok.decode([1, 4, 6, 5, 2])
    'all dogs bark'
    """

    def __init__(self):
        super().__init__(alphabet=None)

    @Substitution(**_TOKENIZER_DOCS)
    def fit(self, texts):
        """Collect the whitespace-separated words of ``texts``.

        Parameters
        ----------
        {texts}

        Returns
        -------
        self : WordTokenizer
            The fitted tokenizer.
        """
        words = {w for text in check_texts(texts, "texts") for w in text.split()}
        self._set_chars(sorted(words - set(SPECIAL_TOKENS)))
        return self

    def encode(self, text):
        """Return the ids of the words of ``text`` (no special tokens added).

        Parameters
        ----------
        text : str
            The text to encode, split on whitespace.

        Returns
        -------
        ids : list of int
            One id per word; unseen words map to ``unk_id``.
        """
        self._check_fitted()
        if not isinstance(text, str):
            raise TypeError(f"text must be a str, got {type(text).__name__}.")
        return [self._index.get(w, self.unk_id) for w in text.split()]

    @Substitution(**_TOKENIZER_DOCS)
    def decode(self, ids):
        """Return the words of ``ids`` joined by spaces, dropping specials other than ``<unk>``.

        Parameters
        ----------
        {ids}

        Returns
        -------
        text : str
            The decoded words, separated by single spaces.
        """
        self._check_fitted()
        n = len(self.vocab_)
        return " ".join(self.vocab_[i] for i in (int(t) for t in ids) if 3 <= i < n)


def _default_lm():
    return LanguageModel(tokenizer=WordTokenizer(), n_layers=2, d_model=64, n_heads=4,
                         max_len=64, max_epochs=10, batch_size=64, lr=3e-3)


class FocusInstructionLM(FocusMixin, ClassifierMixin, MetaEstimatorMixin, BaseEstimator):
    """Focus Instruction Tuning (FIT) of a tiny causal language model on text classification.

    Each training text ``x`` becomes the prompt ``prompt_format`` filled with
    ``x`` and a focus instruction: a paraphrase, drawn at random, of one of
    the six FIT types [1]_, naming the core feature (``core_feature``) and
    the spurious one (``spurious_feature``), e.g. "focus on the meaning and
    ignore the genre". The language model ``lm`` is fine-tuned to answer
    with the focus label: the task label, or under the focus(S) types the
    spurious label of the text's spurious value. :meth:`predict` scores every
    label as the continuation of the prompt built with the requested
    instruction.

    Parameters
    ----------
    lm : LanguageModel or None, default=None
        The model to fine-tune (cloned); it is trained from scratch on the
        prompts. Any estimator with ``fit(prompts, responses)``,
        ``score_samples(prompts, responses)`` (mean log-probability per
        response token) and a fitted ``tokenizer_`` works. None uses a
        2-layer, 64-wide :class:`LanguageModel` with a
        :class:`WordTokenizer`, ``max_len=64``, 10 epochs, batch 64, learning
        rate 3e-3.
    core_feature : str, default="meaning"
        Name of the core feature in the instructions (``{C}``).
    spurious_feature : str, default="genre"
        Name of the spurious feature in the instructions (``{S}``).
    spurious_label : "majority" or callable, default="majority"
        ``"majority"`` ties every spurious value (found by
        ``spurious_pattern``) to the label it co-occurs with most in the
        training data; a callable maps a list of texts to their spurious
        labels.
    spurious_pattern : str, default=r"^(\\S+) :"
        Regular expression whose first group is the spurious value of a text
        (the genre word of :func:`~skpaper.datasets.make_spurious_task`'s
        texts). Used by ``spurious_label="majority"`` and by
        ``decouple_excluded``.
    focus_types : "all" or list of str, default="all"
        The instruction types trained, among :data:`FOCUS_TYPES`.
    type_probs : array-like, dict or None, default=None
        Sampling probabilities of the types; None is uniform.
    templates : dict or None, default=None
        Type -> list of instruction paraphrases with ``{C}``/``{S}``
        placeholders; None uses :data:`DEFAULT_FOCUS_TEMPLATES` (three per
        type). Training draws one at random per example; prediction cycles
        through them over the rows.
    prompt_format : str, default="{input} . {focus} answer :"
        Layout of a prompt, with ``{input}`` and ``{focus}``; runs of
        whitespace are collapsed. The default puts the instruction after the
        input (see Notes).
    decouple_excluded : bool, default=False
        Within the examples drawn for a type that excludes a feature, swap the
        spurious values between texts (a random permutation), keeping the task
        label under the types that exclude ``S`` and taking the new value's
        spurious label under the focus(S) types, so that no focus label
        depends on the feature its instruction excludes. An adaptation, not
        part of the paper.
    default_focus : str, default="focus_C_ignore_S"
        The instruction used when ``focus=None``.
    n_copies : int, default=1
        Prompts per training text, each with its own draw of the type.
    random_state : int, RandomState instance or None, default=None
        Seeds the draws of types and paraphrases, the swaps, and ``lm`` when
        its own ``random_state`` is None.

    Attributes
    ----------
    lm_ : LanguageModel
        The fine-tuned model.
    classes_ : ndarray of shape (n_classes,)
        Labels of ``y`` and of the spurious labels; their ``str`` forms are
        the responses the model learns.
    focus_types_ : tuple of str
    type_probs_ : ndarray of shape (n_types,)
    templates_ : dict
        Type -> tuple of instructions with the feature names filled in.
    spurious_mapping_ : dict or None
        With ``spurious_label="majority"``: spurious value -> label.

    See Also
    --------
    FocusInstructionTuner : FIT of any classifier on tabular data.
    LanguageModel : The tiny causal LM fine-tuned here.

    Notes
    -----
    The objective is the paper's Eq. (3): the cross-entropy of the focus label
    given the task input and a sampled focus instruction, which for a causal
    LM is the negative log-likelihood of the label's tokens (and ``<eos>``)
    given the prompt. Predictions take the label whose tokens are most likely
    after the prompt (summed log-probabilities); :meth:`predict_proba` is
    their softmax over ``classes_``.

    Deviations from [1]_, all forced by training a tiny model from scratch
    on CPU instead of fine-tuning an instruction-tuned LLM (reconstructed):
    the instruction follows the input in the default ``prompt_format`` (the
    paper puts it first), because the tiny model then sees the input at fixed
    positions and learns far faster; the paraphrases are short and
    word-level; an empty task instruction is used. Without a pre-trained
    notion of "ignore", the instruction types only get their meaning from the
    training data, which is what ``decouple_excluded`` supplies (as for
    :class:`FocusInstructionTuner`).

    References
    ----------
    .. [1] T. A. Lamb, A. Davies, A. Paren, P. H. S. Torr and F. Pinto, "Focus
       On This, Not That! Steering LLMs with Adaptive Feature Specification",
       ICML 2025.

    Examples
    --------
    >>> from skpaper.datasets import make_spurious_task
    >>> from skpaper.language import FocusInstructionLM, LanguageModel, WordTokenizer
    >>> texts, y, y_s = make_spurious_task(1000, kind="sentiment", random_state=0)
    >>> lm = LanguageModel(tokenizer=WordTokenizer(), n_layers=2, d_model=64, n_heads=2,
    ...                    max_len=40, max_epochs=8, device="cpu")
    >>> fit = FocusInstructionLM(lm, focus_types=["empty", "focus_S"],
    ...                          random_state=0, default_focus="empty").fit(texts, y)
    >>> fit.predict(["slate : the plot is quite dull"], focus="focus_S")  # slate's label
    array(['positive'], dtype='<U8')
    """

    _parameter_constraints = {
        "lm": [HasMethods(["fit", "score_samples"]), None],
        "core_feature": [str],
        "spurious_feature": [str],
        "spurious_label": [StrOptions({"majority"}), callable],
        "spurious_pattern": [str],
        "focus_types": [StrOptions({"all"}), "array-like"],
        "type_probs": ["array-like", dict, None],
        "templates": [dict, None],
        "prompt_format": [str],
        "decouple_excluded": ["boolean"],
        "default_focus": [StrOptions(set(FOCUS_TYPES))],
        "n_copies": [Interval(Integral, 1, 1024, closed="both")],
        "random_state": ["random_state"],
    }

    def __init__(self, lm=None, *, core_feature="meaning", spurious_feature="genre",
                 spurious_label="majority", spurious_pattern=r"^(\S+) :", focus_types="all",
                 type_probs=None, templates=None, prompt_format="{input} . {focus} answer :",
                 decouple_excluded=False, default_focus="focus_C_ignore_S", n_copies=1,
                 random_state=None):
        self.lm = lm
        self.core_feature = core_feature
        self.spurious_feature = spurious_feature
        self.spurious_label = spurious_label
        self.spurious_pattern = spurious_pattern
        self.focus_types = focus_types
        self.type_probs = type_probs
        self.templates = templates
        self.prompt_format = prompt_format
        self.decouple_excluded = decouple_excluded
        self.default_focus = default_focus
        self.n_copies = n_copies
        self.random_state = random_state

    # ------------------------------------------------------------------ helpers
    def _check_inference_input(self, X):
        X = check_texts(X, "X")
        if not X:
            raise ValueError("X must hold at least one text, got an empty list.")
        return X

    def _resolve_templates(self, types):
        source = DEFAULT_FOCUS_TEMPLATES if self.templates is None else self.templates
        unknown = sorted(set(source) - set(FOCUS_TYPES))
        if unknown:
            raise ValueError(f"templates has unknown types {unknown}; expected keys among "
                             f"{FOCUS_TYPES}.")
        resolved = {}
        for t in types:
            options = source.get(t)
            if isinstance(options, str):
                options = [options]
            if not options or not all(isinstance(o, str) for o in options):
                raise ValueError(f"templates[{t!r}] must be a non-empty list of str, got "
                                 f"{options!r}.")
            try:
                resolved[t] = tuple(" ".join(o.format(C=self.core_feature,
                                                      S=self.spurious_feature).split())
                                    for o in options)
            except (KeyError, IndexError) as exc:
                raise ValueError(f"templates[{t!r}] may only use the placeholders {{C}} and "
                                 f"{{S}}, got {options!r}.") from exc
        return resolved

    def _prompt(self, text, instruction):
        return " ".join(self.prompt_format.format(input=text, focus=instruction).split())

    def _spurious_spans(self, X):
        """Spurious value and its (start, end) span in every text, by ``spurious_pattern``."""
        try:
            pattern = re.compile(self.spurious_pattern)
        except re.error as exc:
            raise ValueError(f"spurious_pattern must be a regular expression, got "
                             f"{self.spurious_pattern!r} ({exc}).") from exc
        if pattern.groups < 1:
            raise ValueError(f"spurious_pattern must hold a capturing group, got "
                             f"{self.spurious_pattern!r}.")
        values, spans = [], []
        for i, text in enumerate(X):
            match = pattern.search(text)
            if match is None or match.group(1) is None:
                raise ValueError(f"spurious_pattern {self.spurious_pattern!r} does not match "
                                 f"X[{i}] ({text[:60]!r}).")
            values.append(match.group(1))
            spans.append(match.span(1))
        return values, spans

    def _spurious_targets(self, X):
        if self.spurious_label == "majority":
            values, _ = self._spurious_spans(X)
            return map_spurious(self.spurious_mapping_, values, "X")
        return self._call_spurious_label(list(X))

    # ---------------------------------------------------------------------- fit
    @_fit_context(
        # lm is validated when it is fitted
        prefer_skip_nested_validation=False
    )
    def fit(self, X, y):
        """Fine-tune ``lm`` on focus-instruction prompts built from ``(X, y)``.

        Parameters
        ----------
        X : list of str
            Task inputs.
        y : array-like of shape (n_samples,)
            Task labels.

        Returns
        -------
        self : FocusInstructionLM
            The fitted estimator.
        """
        X = self._check_inference_input(X)
        y = np.asarray(y)
        if y.ndim != 1 or y.shape[0] != len(X):
            raise ValueError(f"y must hold one label per text of X ({len(X)}), got shape "
                             f"{y.shape}.")
        check_classification_targets(y)
        if "{input}" not in self.prompt_format or "{focus}" not in self.prompt_format:
            raise ValueError(f"prompt_format must contain {{input}} and {{focus}}, got "
                             f"{self.prompt_format!r}.")
        types, probs = resolve_focus_types(self.focus_types, self.type_probs, self.default_focus)
        templates = self._resolve_templates(types)
        rng = check_random_state(self.random_state)

        needs_spans = self.spurious_label == "majority" or self.decouple_excluded
        values, spans = self._spurious_spans(X) if needs_spans else (None, None)
        if self.spurious_label == "majority":
            self.spurious_mapping_ = majority_mapping(values, y)
            y_s = np.array([self.spurious_mapping_[v] for v in values])
        else:
            self.spurious_mapping_ = None
            y_s = self._call_spurious_label(list(X))
        self._set_classes(y, y_s)
        answers = [str(c) for c in self.classes_]
        if len(set(answers)) != len(answers) or not all(a.strip() for a in answers):
            raise ValueError(f"the labels must have distinct, non-blank str forms, got "
                             f"{answers}.")

        rows, type_index, source = draw_focus_plan(
            len(X), types, probs, int(self.n_copies), bool(self.decouple_excluded), rng
        )
        draws = rng.random_sample(rows.size)
        prompts, responses = [], []
        for k in range(rows.size):
            i, j, name = rows[k], source[k], types[type_index[k]]
            text = X[i]
            if j != i:
                start, end = spans[i]
                text = text[:start] + values[j] + text[end:]
            options = templates[name]
            prompts.append(self._prompt(text, options[int(draws[k] * len(options))]))
            label = y_s[j] if name in SPURIOUS_TARGET_TYPES else y[i]
            responses.append(str(label))

        lm = clone(_default_lm() if self.lm is None else self.lm)
        if "random_state" in lm.get_params() and lm.get_params()["random_state"] is None:
            lm.set_params(random_state=int(rng.randint(np.iinfo(np.int32).max)))
        self.lm_ = lm.fit(prompts, responses)
        self.focus_types_ = types
        self.type_probs_ = probs
        self.templates_ = templates
        return self

    # ---------------------------------------------------------------- inference
    @Substitution(**_SHARED_DOCS)
    def make_prompts(self, X, focus=None):
        """Build the prompts the model answers under the instruction ``focus``.

        Row ``i`` uses paraphrase ``i mod n_paraphrases`` of the type, so
        predictions are deterministic and cover every paraphrase.

        Parameters
        ----------
        {X_text}
        {focus}

        Returns
        -------
        prompts : list of str
            One prompt per text: ``prompt_format`` filled with the text and
            the instruction.
        """
        check_is_fitted(self)
        X = self._check_inference_input(X)
        focus = self.default_focus if focus is None else focus
        check_focus(focus, self.focus_types_)
        options = self.templates_[focus]
        return [self._prompt(x, options[i % len(options)]) for i, x in enumerate(X)]

    def _label_log_likelihoods(self, prompts):
        """Summed log-probability of each label's tokens after each prompt, (n, n_classes)."""
        eos = 1 if getattr(self.lm_, "append_eos", True) else 0
        columns = []
        for label in self.classes_:
            answer = str(label)
            n_tokens = len(self.lm_.tokenizer_.encode(answer)) + eos
            mean = self.lm_.score_samples(prompts, [answer] * len(prompts))
            columns.append(mean * n_tokens)
        return np.column_stack(columns)

    @Substitution(**_SHARED_DOCS)
    def predict_proba(self, X, focus=None):
        """Predict the probabilities of the labels under the instruction ``focus``.

        Parameters
        ----------
        {X_text}
        {focus}

        Returns
        -------
        proba : ndarray of shape (n_samples, n_classes)
            Softmax over ``classes_`` of the labels' log-likelihoods.
        """
        return softmax(self._label_log_likelihoods(self.make_prompts(X, focus)), axis=1)

    @Substitution(**_SHARED_DOCS)
    def predict(self, X, focus=None):
        """Predict the most likely label under the instruction ``focus``.

        Parameters
        ----------
        {X_text}
        {focus}

        Returns
        -------
        y_pred : ndarray of shape (n_samples,)
            The label, among ``classes_``, whose tokens are the most likely
            continuation of each prompt.
        """
        scores = self._label_log_likelihoods(self.make_prompts(X, focus))
        return self.classes_[np.argmax(scores, axis=1)]

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.two_d_array = False
        tags.input_tags.string = True
        return tags

