"""DistiLLM-2 (Ko et al., ICML 2025): contrastive distillation of a causal language model.

For each prompt the teacher and the student each sample one response. The
student is trained with the skew KL on the teacher's response (raising its
likelihood) and the skew reverse KL on its own response (lowering the mass it
puts where the teacher puts little); student responses are sampled again at
every round so that the "rejected" slot follows the student.
"""

import copy
import math
from numbers import Integral, Real

import numpy as np
import torch
import torch.nn.functional as F
from sklearn.base import clone
from sklearn.exceptions import NotFittedError
from sklearn.frozen import FrozenEstimator
from sklearn.utils.validation import check_is_fitted
from torch import nn

from ..nn._base import BaseTorchEstimator, GradNormClipping
from ..utils._docstring import Substitution, torch_parameter_docs
from ..utils._sklearn import HasMethods, Interval, StrOptions, _fit_context
from ._distill_losses import forward_kl, generalized_jsd, skew_kl, skew_reverse_kl
from ._lm_model import lm_logits, pad_sequences, trim_to_targets
from ._sampling import sample_responses
from ._tiny_lm import _CausalLMMixin
from ._tokenizers import resolve_tokenizer, tokenizer_vocab_size

__all__ = ["ContrastiveDistiller"]

#: Losses: DistiLLM-2 and the baselines it is compared with.
DISTILL_LOSSES = ("distillm2", "skl_both", "srkl_both", "fkl", "seqkd", "gjsd")
#: Losses that read student-generated responses.
_ON_POLICY = ("distillm2", "skl_both", "srkl_both", "gjsd")
#: Largest number of cached teacher logits (rows x positions x vocabulary) kept per data type.
_CACHE_LIMIT = 25_000_000
#: Attributes that live only while ``fit`` runs.
_FIT_STATE = ("_teacher_module", "_prompts", "_rejected", "_refs", "_n_steps", "_total_steps")


def _target_log_probs(shifted_logits, ids):
    """``log q(ids[:, t + 1])`` from logits already shifted to ``(batch, length - 1, vocab)``."""
    logq = torch.log_softmax(shifted_logits.float(), dim=-1)
    return logq.gather(-1, ids[:, 1:].unsqueeze(-1)).squeeze(-1)


def _unwrap(model):
    return model.estimator if isinstance(model, FrozenEstimator) else model


def _is_fitted(estimator):
    try:
        check_is_fitted(estimator)
    except NotFittedError:
        return False
    return True


@Substitution(**torch_parameter_docs())
class ContrastiveDistiller(_CausalLMMixin, BaseTorchEstimator):
    """Distil a teacher causal LM into a student with DistiLLM-2's contrastive loss.

    ``fit(prompts)`` samples one teacher response per prompt, then for
    ``n_rounds`` rounds samples one student response per prompt and trains the
    student for ``max_epochs`` passes over the (prompt, teacher response,
    student response) triples. The fitted estimator is the distilled student:
    :meth:`generate`, :meth:`score` and :meth:`predict_proba` use it.

    Parameters
    ----------
    teacher : LanguageModel, FrozenEstimator or torch.nn.Module, default=None
        The teacher. A fitted :class:`LanguageModel` (wrap it in
        :class:`sklearn.frozen.FrozenEstimator` so that ``clone`` keeps it
        fitted) is used as it is; an unfitted one is first fitted on ``X``; a
        torch module (a :class:`TinyCausalLM`, or a Hugging Face causal LM
        whose output has ``.logits``) needs ``tokenizer``.
    student : LanguageModel, FrozenEstimator or torch.nn.Module, default=None
        The initial student, handled like ``teacher``; it is copied, never
        modified. It must share the teacher's vocabulary.
    tokenizer : object or None, default=None
        Tokenizer shared by both models; by default the teacher's (or
        student's) ``tokenizer_``.
    loss : {"distillm2", "skl_both", "srkl_both", "fkl", "seqkd", "gjsd"}, \
            default="distillm2"
        ``"distillm2"``: skew KL on teacher responses + skew reverse KL on
        student responses. Baselines: ``"skl_both"`` (the same skew KL on both
        kinds of response), ``"srkl_both"`` (the skew reverse KL on both: the
        loss of DistiLLM, the authors' first version, with the same weights
        ``2 - beta`` and ``beta``; ``adaptive_alpha`` does not apply to it),
        ``"fkl"`` (forward KL on teacher responses, token
        KD), ``"seqkd"`` (cross-entropy on teacher responses) and ``"gjsd"``
        (GKD's generalised JSD on both, with ``jsd_beta``).
    alpha : float, default=0.1
        Skew coefficient :math:`\\alpha_1 = \\alpha_2` of both skew divergences.
    beta : float, default=1.0
        Weight :math:`\\beta` of the student-response term; the
        teacher-response term gets :math:`2 - \\beta`.
    beta_schedule : {"linear"} or None, default=None
        ``"linear"`` raises :math:`\\beta` by 0.5 over the first half of the
        training steps (the authors' ``gradual_beta`` curriculum), capped at 2.
    adaptive_alpha : bool, default=False
        Per-sequence :math:`\\alpha` from the teacher-student likelihood gap
        (the authors' ``update_alpha``); see Notes.
    jsd_beta : float, default=0.5
        Teacher share of the mixture in ``loss="gjsd"``.
    n_rounds : int, default=3
        Number of times the student responses are sampled again.
    gen_temperature : float, default=0.8
        Sampling temperature of both models' training responses (and the
        default of :meth:`generate`).
    top_p : float, default=0.95
        Nucleus mass of the training responses (and of :meth:`generate`).
    max_new_tokens : int, default=32
        Length limit of every sampled response.
    grad_clip : float or None, default=1.0
        Gradient-norm clipping (None: none).
    max_epochs : int, default=1
        Passes over the triples in each round (``n_rounds * max_epochs``
        epochs in all, ``n_rounds * max_epochs * ceil(n / batch_size)``
        optimiser steps).
    batch_size : int, default=32
        Prompts per step (each brings a teacher and a student response).
    lr : float, default=5e-4
        Adam learning rate.
    {device}
    random_state : int, RandomState instance or None, default=None
        Seeds the sampling of responses and the batch order.
    verbose : int, default=0
        Show a progress bar over the epochs of all rounds when > 0.
    callbacks : list of Callback or None, default=None
        Training callbacks (:class:`skpaper.nn.Callback`); fitted copies are
        kept in ``callbacks_``. ``ValidationSplit`` is not supported: the
        student responses are sampled again at every round.
    {inference_dtype}

    Attributes
    ----------
    module_ : torch.nn.Module
        The distilled student.
    tokenizer_ : tokenizer
    teacher_ : LanguageModel or torch.nn.Module
        The teacher used (fitted on ``X`` when ``teacher`` was unfitted).
    student_ : LanguageModel or torch.nn.Module
        The initial student (before distillation).
    teacher_responses_ : list of list of int
        The teacher response sampled for each prompt.
    vocab_size_ : int
    classes_ : ndarray of shape (vocab_size,)
        Token ids (the columns of :meth:`predict_proba`).
    history_ : list of dict
        Per epoch: ``round``, ``train_loss``, ``beta``, mean ``alpha_chosen``
        and ``alpha_rejected``, and ``logq_chosen`` / ``logq_rejected``, the
        student's mean per-token log-likelihood of teacher and student
        responses during the epoch (the contrastive signature: the first rises,
        the second falls).
    n_iter_ : int
        Epochs run.
    callbacks_ : list of Callback
        The fitted copies of ``callbacks``, then the gradient clipping of ``grad_clip``.

    See Also
    --------
    LanguageModel : The tiny causal LM used as teacher and student.
    skew_kl : The divergence on teacher responses.
    skew_reverse_kl : The divergence on student responses.

    Notes
    -----
    With teacher :math:`p`, student :math:`q_\\theta`, a teacher response
    :math:`y_t` and a student response :math:`y_s` to prompt :math:`x`, the
    loss of [1]_ is

    .. math::

        L = (2 - \\beta)\\, \\overline{SKL}_{\\alpha_1}(p \\| q_\\theta; y_t)
            + \\beta\\, \\overline{SRKL}_{\\alpha_2}(p \\| q_\\theta; y_s),

    with :math:`SKL_\\alpha = KL(p \\| \\alpha p + (1-\\alpha) q_\\theta)` and
    :math:`SRKL_\\alpha = KL(q_\\theta \\| (1-\\alpha) p + \\alpha\\,
    \\mathrm{sg}(q_\\theta))`, each averaged over the response tokens of a
    sequence, then over the batch (prompt and padding tokens are masked).
    The weights :math:`2-\\beta, \\beta`, the stop-gradient and the
    ``gradual_beta`` schedule :math:`\\beta_t = \\beta + 0.5 \\min(1, 2t/T)`
    follow the authors' released trainer, whose defaults are
    :math:`\\alpha_1 = \\alpha_2 = 0.1`, :math:`\\beta = 1`, both options off.
    The formulas were checked against that trainer; the paper's equation
    numbers are not quoted.

    Adaptive :math:`\\alpha` (reconstructed): per sequence,
    :math:`g = e^{\\overline{\\log p}(y)} - e^{\\overline{\\log q}(y)}`
    (the reverse difference for :math:`y_s`) and
    :math:`\\alpha = \\mathrm{clip}(1 - (1 - \\alpha_0) g_{ref} / g, 0.01,
    \\alpha_0)`, where :math:`g_{ref}` is the mean gap of the initial student
    over all prompts. The released trainer takes :math:`g_{ref}` from its
    first logging window, and its option is off; :math:`\\alpha` is used as
    a constant weight (no gradient).

    Deviations from the paper's pipeline, for small models: the student is
    trained in full (no LoRA) with constant-rate Adam, and one teacher
    response per prompt is sampled once per fit, as the authors do offline
    with vLLM. Student responses are sampled again at each round.

    References
    ----------
    .. [1] J. Ko, T. Chen, S. Kim, T. Ding, L. Liang, I. Zharkov, S.-Y. Yun.
       "DistiLLM-2: A Contrastive Approach Boosts the Distillation of LLMs".
       ICML 2025, arXiv:2503.07067.

    Examples
    --------
    >>> from skpaper.datasets import make_markov_text
    >>> from skpaper.language import ContrastiveDistiller, LanguageModel
    >>> texts = make_markov_text(64, n_symbols=6, length=10, random_state=0)
    >>> teacher = LanguageModel(n_layers=1, d_model=16, n_heads=2, max_epochs=5,
    ...                         random_state=0, device="cpu")
    >>> student = LanguageModel(n_layers=1, d_model=8, n_heads=2, max_epochs=1,
    ...                         random_state=0, device="cpu")
    >>> distiller = ContrastiveDistiller(teacher=teacher, student=student, n_rounds=2,
    ...                                  max_new_tokens=6, random_state=0, device="cpu")
    >>> prompts = [t[:4] for t in texts]
    >>> distiller.fit(prompts).n_iter_
    2
    >>> len(distiller.generate(prompts[:3], random_state=0))
    3
    """

    _parameter_constraints = {
        **BaseTorchEstimator._parameter_constraints,
        "teacher": [HasMethods(["fit"]), nn.Module, None],
        "student": [HasMethods(["fit"]), nn.Module, None],
        "tokenizer": [HasMethods(["encode", "decode"]), None],
        "loss": [StrOptions(set(DISTILL_LOSSES))],
        "alpha": [Interval(Real, 0, 1, closed="left")],
        "beta": [Interval(Real, 0, 2, closed="both")],
        "beta_schedule": [StrOptions({"linear"}), None],
        "adaptive_alpha": ["boolean"],
        "jsd_beta": [Interval(Real, 0, 1, closed="both")],
        "n_rounds": [Interval(Integral, 1, None, closed="left")],
        "gen_temperature": [Interval(Real, 0, None, closed="left")],
        "top_p": [Interval(Real, 0, 1, closed="right")],
        "max_new_tokens": [Interval(Integral, 1, 2**16, closed="both")],
        "grad_clip": [Interval(Real, 0, None, closed="neither"), None],
    }

    def __init__(self, *, teacher=None, student=None, tokenizer=None, loss="distillm2",
                 alpha=0.1, beta=1.0, beta_schedule=None, adaptive_alpha=False, jsd_beta=0.5,
                 n_rounds=3, gen_temperature=0.8, top_p=0.95, max_new_tokens=32, grad_clip=1.0,
                 max_epochs=1, batch_size=32, lr=5e-4, device="auto", random_state=None,
                 verbose=0, callbacks=None, inference_dtype="float32"):
        super().__init__(max_epochs=max_epochs, batch_size=batch_size, lr=lr, device=device,
                         random_state=random_state, verbose=verbose, callbacks=callbacks,
                         inference_dtype=inference_dtype)
        self.teacher = teacher
        self.student = student
        self.tokenizer = tokenizer
        self.loss = loss
        self.alpha = alpha
        self.beta = beta
        self.beta_schedule = beta_schedule
        self.adaptive_alpha = adaptive_alpha
        self.jsd_beta = jsd_beta
        self.n_rounds = n_rounds
        self.gen_temperature = gen_temperature
        self.top_p = top_p
        self.max_new_tokens = max_new_tokens
        self.grad_clip = grad_clip

    # ------------------------------------------------------------------ models
    def _resolve_model(self, model, name, X):
        """Return ``(fitted estimator or module, its module, its tokenizer or None)``."""
        if model is None:
            raise ValueError(
                f"{name} must be a LanguageModel (fitted or not), a FrozenEstimator of a fitted "
                f"one, or a torch module returning logits; got None."
            )
        if isinstance(model, nn.Module):
            return model, model, None
        inner = _unwrap(model)
        if not _is_fitted(inner):
            if isinstance(model, FrozenEstimator):
                raise ValueError(f"{name} is a FrozenEstimator of an unfitted estimator; "
                                 "fit it before freezing.")
            inner = clone(model).fit(X)
        for attr in ("module_", "tokenizer_"):
            if not hasattr(inner, attr):
                raise TypeError(
                    f"{name} must expose {attr} after fitting (a LanguageModel), got "
                    f"{type(inner).__name__}."
                )
        return inner, inner.module_, inner.tokenizer_

    def _student_template(self):
        student = self.student_
        return student if isinstance(student, nn.Module) else student.module_

    def _build_module(self):
        module = copy.deepcopy(self._student_template())
        if next(module.parameters()).dtype == torch.float64:
            module = module.float()
        return module

    def _on_device(self, module):
        have, want = next(module.parameters()).device, torch.device(self.device_)
        if have.type == want.type and (want.index is None or have.index == want.index):
            return module
        return copy.deepcopy(module).to(self.device_)

    def _generation_defaults(self):
        return self.max_new_tokens, self.gen_temperature, self.top_p

    def _append_eos(self):
        return bool(getattr(self.student_, "append_eos", True))

    def _resolve_tokenizer(self, X, teacher_tok, student_tok):
        if self.tokenizer is not None:
            return resolve_tokenizer(self.tokenizer, X)
        if teacher_tok is not None and student_tok is not None:
            vocab_t, vocab_s = (getattr(t, "get_vocab", lambda: None)()
                                for t in (teacher_tok, student_tok))
            if vocab_t != vocab_s:
                raise ValueError(
                    "teacher and student were fitted with different vocabularies; fit both on the "
                    "same texts, pass a fitted tokenizer to both, or set tokenizer=."
                )
        tok = teacher_tok if teacher_tok is not None else student_tok
        if tok is None:
            raise ValueError("tokenizer must be given when teacher and student are torch modules.")
        return tok

    # -------------------------------------------------------------------- fit
    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None):
        """Distil the teacher into the student on the prompts ``X``.

        Parameters
        ----------
        X : list of str
            Prompts.
        y : None
            Ignored; responses are sampled from the models.

        Returns
        -------
        self : ContrastiveDistiller
            The fitted estimator, whose ``module_`` is the distilled student.
        """
        X, _ = self._check_inputs(X, fitting=True)
        self._init_torch_state()
        self.teacher_, teacher_module, teacher_tok = self._resolve_model(
            self.teacher, "teacher", X)
        self.student_, _, student_tok = self._resolve_model(self.student, "student", X)
        self.tokenizer_ = self._resolve_tokenizer(X, teacher_tok, student_tok)
        self.vocab_size_ = tokenizer_vocab_size(self.tokenizer_)
        self.classes_ = np.arange(self.vocab_size_)
        # A copy of the student to check sizes against; the training loop makes its own.
        self.module_ = self._make_module()
        teacher_module = self._on_device(teacher_module)
        teacher_was_training = teacher_module.training
        teacher_module.eval()
        try:
            self._teacher_module = teacher_module
            self._prompts = self._encode_prompts(X)
            self._check_sizes(self._prompts)
            n = len(self._prompts)
            steps_per_epoch = math.ceil(n / min(int(self.batch_size), n))
            self._total_steps = self._n_epochs() * steps_per_epoch
            self._n_steps = 0
            self._refs = (None, None)
            self._rejected = None
            self.teacher_responses_ = self._sample(teacher_module, self._prompts)
            chosen = self._pairs(self._prompts, self.teacher_responses_)
            # Teacher responses are fixed, so the teacher's logits on them are computed once.
            self._fit_loop((*chosen, self._teacher_cache(chosen[0])))
        finally:
            teacher_module.train(teacher_was_training)
            for name in _FIT_STATE:
                self.__dict__.pop(name, None)
        return self

    def _check_sizes(self, prompts):
        limits = [m.max_len for m in (self._teacher_module, self.module_)
                  if isinstance(getattr(m, "max_len", None), int)]
        longest = max(len(p) for p in prompts) + int(self.max_new_tokens)
        if limits and longest > min(limits):
            raise ValueError(
                f"the longest prompt plus max_new_tokens={self.max_new_tokens} makes {longest} "
                f"tokens, but the models cover at most max_len={min(limits)}."
            )
        probe = torch.as_tensor([prompts[0]], device=self.device_)
        with torch.no_grad():
            v_t = lm_logits(self._teacher_module, probe).shape[-1]
            v_s = lm_logits(self.module_, probe).shape[-1]
        if v_t != v_s:
            raise ValueError(
                f"teacher and student must share one vocabulary, got logits of size {v_t} "
                f"(teacher) and {v_s} (student); resize the student's head first."
            )

    def _sample(self, module, prompts):
        seed = int(torch.randint(2**31 - 1, (1,), generator=self._generator))
        return sample_responses(
            module, prompts, max_new_tokens=self.max_new_tokens,
            temperature=self.gen_temperature, top_p=self.top_p, eos_id=self._special("eos"),
            generator=torch.Generator().manual_seed(seed), max_len=self._max_len(),
        )

    def _pairs(self, prompts, responses):
        pad = self._special("pad", 0)
        seqs = [p + r for p, r in zip(prompts, responses)]
        return pad_sequences(seqs, pad, self.device_, [len(p) for p in prompts])

    @staticmethod
    def _likelihood_gap(p_logits, q_logits, ids, mask, teacher_minus_student):
        """Per sequence, exp(mean log p(y)) - exp(mean log q(y)) (or its negative)."""
        with torch.no_grad():
            counts = mask.sum(1).clamp(min=1)
            mean_p = (_target_log_probs(p_logits, ids) * mask).sum(1) / counts
            mean_q = (_target_log_probs(q_logits.detach(), ids) * mask).sum(1) / counts
            gap = mean_p.exp() - mean_q.exp()
        return gap if teacher_minus_student else -gap

    def _adaptive(self, gap, reference):
        base = float(self.alpha)
        if reference is None or base == 0.0:
            return base
        ratio = (1.0 - base) * reference / torch.where(gap > 0, gap, torch.ones_like(gap))
        alpha = torch.clamp(1.0 - ratio, min=0.01, max=base)
        return torch.where(gap > 0, alpha, torch.full_like(alpha, base))

    @torch.no_grad()
    def _all_logits(self, module, ids):
        """Shifted logits of ``module`` on every row of ``ids`` (batched, no gradient)."""
        chunks = [lm_logits(module, ids[lo:lo + 256])[:, :-1].float()
                  for lo in range(0, ids.shape[0], 256)]
        return torch.cat(chunks)

    def _teacher_cache(self, ids):
        """Teacher logits of all rows when they fit in memory, else None (computed per batch)."""
        width = ids.shape[1] - 1
        if ids.shape[0] * width * self.vocab_size_ > _CACHE_LIMIT:
            return None
        return self._all_logits(self._teacher_module, ids)

    # ----------------------------------------------------------- training loop
    def _n_epochs(self):
        """Epochs of one fit: ``max_epochs`` passes in each of the ``n_rounds`` rounds."""
        return int(self.n_rounds) * int(self.max_epochs)

    def _extra_callbacks(self):
        return [] if self.grad_clip is None else [GradNormClipping(self.grad_clip)]

    def _split_tensors(self, tensors, rows):
        raise ValueError(f"{type(self).__name__} does not support ValidationSplit: its "
                         "training responses are sampled again at every round.")

    def _start_round(self, rnd, chosen):
        """Sample the student responses of round ``rnd`` (and the adaptive-alpha references)."""
        self._rejected = None
        if self.loss in _ON_POLICY:
            rejected = self._pairs(self._prompts, self._sample(self.module_, self._prompts))
            self._rejected = (*rejected, self._teacher_cache(rejected[0]))
        if self.adaptive_alpha and rnd == 0:
            self._refs = tuple(
                None if part is None else float(self._likelihood_gap(
                    self._all_logits(self._teacher_module, part[0]),
                    self._all_logits(self.module_, part[0]), part[0], part[1],
                    direction).mean())
                for part, direction in ((chosen, True),
                                        (self._rejected, self.loss != "distillm2"))
            )

    def _train_epoch(self, tensors, optimizer):
        rnd, pass_in_round = divmod(len(self.history_), int(self.max_epochs))
        if pass_in_round == 0:
            self._start_round(rnd, tensors)
        return {"round": rnd + 1, **super()._train_epoch(tensors, optimizer)}

    def _beta_at(self, step, total_steps):
        beta = float(self.beta)
        if self.beta_schedule == "linear":
            beta += 0.5 * min(1.0, 2.0 * step / max(total_steps, 1))
        return min(beta, 2.0)

    def _batch_part(self, part, idx):
        """Ids, mask and teacher logits of rows ``idx``, trimmed to their longest sequence."""
        ids, mask, cache = part
        ids, mask = trim_to_targets(ids[idx], mask[idx])
        if cache is not None:
            p_logits = cache[idx, :mask.shape[1]]
        else:
            with torch.no_grad():
                p_logits = lm_logits(self._teacher_module, ids)[:, :-1].float()
        return ids, mask, p_logits

    def _train_batches(self, tensors, shuffle=True):
        """Batches of prompts: their teacher responses, then (on-policy) their student ones.

        Each batch is ``(ids, mask, teacher_logits, k)``: rows ``:k`` hold the
        teacher responses, rows ``k:`` the student responses of the same prompts.
        """
        pad = self._special("pad", 0)
        for idx in self._iter_batches(tensors[0].shape[0], shuffle=shuffle):
            idx = idx.to(tensors[0].device)
            parts = [self._batch_part(tensors, idx)]
            if self._rejected is not None:
                parts.append(self._batch_part(self._rejected, idx))
            width = max(ids.shape[1] for ids, _, _ in parts)
            ids = torch.cat([F.pad(i, (0, width - i.shape[1]), value=pad) for i, _, _ in parts])
            mask = torch.cat([F.pad(m, (0, width - 1 - m.shape[1]), value=False)
                              for _, m, _ in parts])
            p_logits = torch.cat([F.pad(p, (0, 0, 0, width - 1 - p.shape[1]))
                                  for _, _, p in parts])
            yield ids, mask, p_logits, len(idx)

    def _get_loss(self, batch):
        """The batch's loss and metrics; every step weighs the same in the epoch means."""
        ids, mask, p_logits, k = batch
        beta = self._beta_at(self._n_steps, self._total_steps)
        q_logits = lm_logits(self.module_, ids)[:, :-1]
        loss, alphas = self._loss(p_logits, q_logits, ids, mask, k, beta, self._refs)
        with torch.no_grad():
            logq = _target_log_probs(q_logits.detach(), ids)
            per_seq = (logq * mask).sum(1) / mask.sum(1).clamp(min=1)
            logq_chosen = float(per_seq[:k].mean())
            logq_rejected = (float(per_seq[k:].mean()) if self._rejected is not None
                             else float("nan"))
        return {"loss": loss, "weight": 1.0, "alpha_chosen": alphas[0],
                "alpha_rejected": alphas[1], "logq_chosen": logq_chosen,
                "logq_rejected": logq_rejected, "beta": beta}

    def _train_step(self, batch, optimizer):
        step = super()._train_step(batch, optimizer)
        self._n_steps += 1
        return step

    def _loss(self, p_logits, q_logits, ids, mask, k, beta, refs):
        """Loss of one batch; rows ``:k`` are teacher responses, ``k:`` student ones."""
        p_t, q_t, m_t = p_logits[:k], q_logits[:k], mask[:k]
        p_s, q_s, m_s = p_logits[k:], q_logits[k:], mask[k:]
        alpha_t = alpha_s = float(self.alpha)
        if self.adaptive_alpha and self.loss in ("distillm2", "skl_both"):
            alpha_t = self._adaptive(self._likelihood_gap(p_t, q_t, ids[:k], m_t, True), refs[0])
            if k < ids.shape[0]:
                gap_s = self._likelihood_gap(p_s, q_s, ids[k:], m_s, self.loss == "skl_both")
                alpha_s = self._adaptive(gap_s, refs[1])
        if self.loss == "distillm2":
            loss = ((2.0 - beta) * skew_kl(p_t, q_t, alpha_t, m_t)
                    + beta * skew_reverse_kl(p_s, q_s, alpha_s, m_s))
        elif self.loss == "skl_both":
            loss = ((2.0 - beta) * skew_kl(p_t, q_t, alpha_t, m_t)
                    + beta * skew_kl(p_s, q_s, alpha_s, m_s))
        elif self.loss == "srkl_both":
            loss = ((2.0 - beta) * skew_reverse_kl(p_t, q_t, alpha_t, m_t)
                    + beta * skew_reverse_kl(p_s, q_s, alpha_s, m_s))
        elif self.loss == "fkl":
            loss = forward_kl(p_t, q_t, m_t)
        elif self.loss == "seqkd":
            logq = _target_log_probs(q_t, ids[:k])
            loss = -((logq * m_t).sum(1) / m_t.sum(1).clamp(min=1)).mean()
        else:
            loss = (generalized_jsd(p_t, q_t, self.jsd_beta, m_t)
                    + generalized_jsd(p_s, q_s, self.jsd_beta, m_s))

        def _mean(a):
            return float(a.mean()) if isinstance(a, torch.Tensor) else float(a)

        return loss, (_mean(alpha_t), _mean(alpha_s))

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.two_d_array = False
        tags.input_tags.string = True
        tags.target_tags.required = False
        return tags
