"""Token-level divergences between a teacher and a student language model.

Every function takes the teacher's logits ``p_logits`` and the student's
``q_logits`` of shape ``(..., vocab)``, an optional ``mask`` over the leading
dimensions, and returns a reduced loss. Mixtures of distributions are formed
in log space with ``logsumexp``, so no probability is ever exponentiated and
re-logged.
"""

import math
from numbers import Real

import torch

from ..utils._docstring import Substitution

__all__ = ["forward_kl", "generalized_jsd", "reverse_kl", "skew_kl", "skew_reverse_kl"]

_REDUCTIONS = ("sequence_mean", "token_mean", "sum", "none")


def _check_logits(p_logits, q_logits):
    for name, value in (("p_logits", p_logits), ("q_logits", q_logits)):
        if not isinstance(value, torch.Tensor):
            raise TypeError(f"{name} must be a torch.Tensor, got {type(value).__name__}.")
        if value.ndim < 1 or not value.is_floating_point():
            raise ValueError(f"{name} must be a floating tensor of shape (..., vocab), "
                             f"got dtype {value.dtype} and shape {tuple(value.shape)}.")
    if p_logits.shape != q_logits.shape:
        raise ValueError(
            f"p_logits and q_logits must have the same shape, got {tuple(p_logits.shape)} and "
            f"{tuple(q_logits.shape)} (teacher and student must share one vocabulary)."
        )


def _check_weight(name, value, shape):
    """Validate a mixing weight in [0, 1]: a float or a tensor broadcastable to ``shape``."""
    if isinstance(value, torch.Tensor):
        if value.numel() and (bool((value < 0).any()) or bool((value > 1).any())):
            raise ValueError(f"{name} must lie in [0, 1], got values outside it.")
        # A per-sequence weight of shape (batch,) broadcasts over tokens and vocabulary.
        while value.ndim and value.ndim < len(shape):
            value = value.unsqueeze(-1)
        return value.detach()
    if isinstance(value, bool) or not isinstance(value, Real):
        raise TypeError(f"{name} must be a float or a tensor, got {type(value).__name__}.")
    if not 0.0 <= float(value) <= 1.0:
        raise ValueError(f"{name} must be in [0, 1], got {value!r}.")
    return float(value)


def _log_weight(weight, like):
    if isinstance(weight, torch.Tensor):
        return torch.log(weight.to(like.dtype))
    return math.log(weight) if weight > 0 else -math.inf


def _log_mixture(w, logp, logq):
    """``log(w p + (1 - w) q)`` from log-probabilities, stable for w in [0, 1]."""
    if not isinstance(w, torch.Tensor):
        if w == 1.0:
            return logp
        if w == 0.0:
            return logq
    one_minus = 1.0 - w
    return torch.logsumexp(torch.stack(torch.broadcast_tensors(
        _log_weight(w, logp) + logp, _log_weight(one_minus, logq) + logq)), dim=0)


def _kl(log_a, log_b):
    """KL(a || b) over the last axis from log-probabilities."""
    return (log_a.exp() * (log_a - log_b)).sum(-1)


def _reduce(per_token, mask, reduction):
    if reduction not in _REDUCTIONS:
        raise ValueError(f"reduction must be one of {_REDUCTIONS}, got {reduction!r}.")
    if mask is None:
        mask = torch.ones_like(per_token, dtype=torch.bool)
    else:
        if not isinstance(mask, torch.Tensor):
            mask = torch.as_tensor(mask)
        if mask.shape != per_token.shape:
            raise ValueError(
                f"mask must have the shape of the logits without their last axis, "
                f"{tuple(per_token.shape)}, got {tuple(mask.shape)}."
            )
        mask = mask.to(per_token.device).bool()
    weights = mask.to(per_token.dtype)
    # Masked positions may hold anything (padding logits): zero them, never multiply inf by 0.
    per_token = torch.where(mask, per_token, torch.zeros_like(per_token))
    if reduction == "none":
        return per_token
    if reduction == "sum":
        return per_token.sum()
    if reduction == "token_mean":
        return per_token.sum() / weights.sum().clamp(min=1.0)
    if per_token.ndim < 2:
        return per_token.sum() / weights.sum().clamp(min=1.0)
    # Average over tokens within each sequence, then over the sequences that have tokens.
    dims = tuple(range(1, per_token.ndim))
    counts = weights.sum(dims)
    per_seq = per_token.sum(dims) / counts.clamp(min=1.0)
    present = counts > 0
    return per_seq[present].mean() if bool(present.any()) else per_seq.sum() * 0.0


#: Docstring pieces of the divergences (filled by ``Substitution``).
_DOCS = {
    "logits": """
        p_logits : torch.Tensor of shape (..., vocab)
            Teacher logits :math:`p` (no gradient is needed through them).
        q_logits : torch.Tensor of shape (..., vocab)
            Student logits :math:`q_\\theta`.""",
    "mask_reduction": """
        mask : torch.Tensor of shape (...) or None, default=None
            Positions to include (padding and prompt tokens are False).
        reduction : {"sequence_mean", "token_mean", "sum", "none"}, default="sequence_mean"
            ``"sequence_mean"`` averages over the tokens of each sequence (axis
            1 onwards), then over sequences: DistiLLM-2's convention.
            ``"none"`` returns the per-position divergence (zero where masked).""",
    "returns": """
        Returns
        -------
        loss : torch.Tensor
            A scalar, or the per-position tensor for ``reduction="none"``.""",
}


@Substitution(**_DOCS)
def skew_kl(p_logits, q_logits, alpha=0.1, mask=None, reduction="sequence_mean"):
    r"""Skew Kullback-Leibler divergence :math:`KL(p \,\|\, \alpha p + (1 - \alpha) q_\theta)`.

    DistiLLM-2 applies it to teacher-generated responses: it raises the
    student's likelihood where the teacher puts mass, and the teacher share
    :math:`\alpha` in the mixture keeps the gradient bounded where
    :math:`q_\theta` is near zero.

    Parameters
    ----------
    {logits}
    alpha : float or torch.Tensor of shape (batch,), default=0.1
        Teacher share :math:`\alpha` of the mixture, in [0, 1].
    {mask_reduction}

    {returns}

    Notes
    -----
    With :math:`\alpha = 0` this is the forward KL; with :math:`\alpha = 1` it
    is 0. ``alpha`` may be a tensor of shape ``(batch,)`` (one weight per
    sequence, as in DistiLLM-2's adaptive :math:`\alpha`); it is treated as a
    constant.

    References
    ----------
    .. [1] J. Ko, T. Chen, S. Kim, T. Ding, L. Liang, I. Zharkov, S.-Y. Yun.
       "DistiLLM-2: A Contrastive Approach Boosts the Distillation of LLMs".
       ICML 2025, arXiv:2503.07067.

    Examples
    --------
    >>> import torch
    >>> from skpaper.language import skew_kl
    >>> p, q = torch.randn(2, 5, 7), torch.randn(2, 5, 7)
    >>> float(skew_kl(p, p)) < 1e-6
    True
    >>> bool(skew_kl(p, q, alpha=0.1) < skew_kl(p, q, alpha=0.0))
    True
    """
    _check_logits(p_logits, q_logits)
    alpha = _check_weight("alpha", alpha, q_logits.shape)
    logp = torch.log_softmax(p_logits.float(), dim=-1)
    logq = torch.log_softmax(q_logits.float(), dim=-1)
    per_token = _kl(logp, _log_mixture(alpha, logp, logq))
    return _reduce(per_token, mask, reduction)


@Substitution(**_DOCS)
def skew_reverse_kl(p_logits, q_logits, alpha=0.1, mask=None, reduction="sequence_mean"):
    r"""Skew reverse KL :math:`KL(q_\theta \| (1 - \alpha) p + \alpha\, \mathrm{sg}(q_\theta))`.

    DistiLLM-2 applies it to student-generated responses: it removes the
    student's mass where the teacher puts little, which lowers the likelihood
    of the student's own poor samples. The student inside the mixture is
    detached (stop-gradient ``sg``), as in the authors' trainer.

    Parameters
    ----------
    {logits}
    alpha : float or torch.Tensor of shape (batch,), default=0.1
        Student (stop-gradient) share :math:`\alpha` of the mixture.
    {mask_reduction}

    {returns}

    Notes
    -----
    With :math:`\alpha = 0` this is the reverse KL :math:`KL(q_\theta\|p)`.
    The gradient reaches :math:`q_\theta` only through the outer
    :math:`q_\theta (\log q_\theta - \dots)` term.

    References
    ----------
    .. [1] J. Ko et al. "DistiLLM-2: A Contrastive Approach Boosts the
       Distillation of LLMs". ICML 2025, arXiv:2503.07067.

    Examples
    --------
    >>> import torch
    >>> from skpaper.language import reverse_kl, skew_reverse_kl
    >>> p, q = torch.randn(2, 5, 7), torch.randn(2, 5, 7)
    >>> bool(torch.isclose(skew_reverse_kl(p, q, alpha=0.0), reverse_kl(p, q)))
    True
    """
    _check_logits(p_logits, q_logits)
    alpha = _check_weight("alpha", alpha, q_logits.shape)
    logp = torch.log_softmax(p_logits.float(), dim=-1)
    logq = torch.log_softmax(q_logits.float(), dim=-1)
    mix = _log_mixture(1.0 - alpha, logp, logq.detach())
    per_token = _kl(logq, mix)
    return _reduce(per_token, mask, reduction)


@Substitution(**_DOCS)
def forward_kl(p_logits, q_logits, mask=None, reduction="sequence_mean"):
    r"""Forward KL :math:`KL(p \,\|\, q_\theta)` (classic token-level KD).

    Parameters
    ----------
    {logits}
    {mask_reduction}

    {returns}

    Examples
    --------
    >>> import torch
    >>> from skpaper.language import forward_kl, skew_kl
    >>> p, q = torch.randn(3, 7), torch.randn(3, 7)
    >>> bool(torch.isclose(forward_kl(p, q), skew_kl(p, q, alpha=0.0)))
    True
    """
    _check_logits(p_logits, q_logits)
    logp = torch.log_softmax(p_logits.float(), dim=-1)
    logq = torch.log_softmax(q_logits.float(), dim=-1)
    return _reduce(_kl(logp, logq), mask, reduction)


@Substitution(**_DOCS)
def reverse_kl(p_logits, q_logits, mask=None, reduction="sequence_mean"):
    r"""Reverse KL :math:`KL(q_\theta \,\|\, p)` (mode-seeking).

    Parameters
    ----------
    {logits}
    {mask_reduction}

    {returns}

    Examples
    --------
    >>> import torch
    >>> from skpaper.language import reverse_kl
    >>> p = torch.randn(4, 6)
    >>> float(reverse_kl(p, p)) < 1e-6
    True
    """
    _check_logits(p_logits, q_logits)
    logp = torch.log_softmax(p_logits.float(), dim=-1)
    logq = torch.log_softmax(q_logits.float(), dim=-1)
    return _reduce(_kl(logq, logp), mask, reduction)


@Substitution(**_DOCS)
def generalized_jsd(p_logits, q_logits, beta=0.5, mask=None, reduction="sequence_mean"):
    r"""Generalised Jensen-Shannon divergence of GKD (Agarwal et al., 2024).

    With :math:`m = \beta p + (1 - \beta) q_\theta`,
    :math:`JSD_\beta = \beta KL(p\|m) + (1 - \beta) KL(q_\theta\|m)`;
    ``beta=0`` and ``beta=1`` are taken as the forward and reverse KL, the
    convention of TRL's ``GKDTrainer``.

    Parameters
    ----------
    {logits}
    beta : float or torch.Tensor, default=0.5
        Teacher share :math:`\beta` of the mixture, in [0, 1].
    {mask_reduction}

    {returns}

    Examples
    --------
    >>> import torch
    >>> from skpaper.language import forward_kl, generalized_jsd
    >>> p, q = torch.randn(3, 7), torch.randn(3, 7)
    >>> bool(torch.isclose(generalized_jsd(p, q, beta=0.0), forward_kl(p, q)))
    True
    >>> float(generalized_jsd(p, q, beta=0.5)) <= 0.6932
    True
    """
    _check_logits(p_logits, q_logits)
    beta = _check_weight("beta", beta, q_logits.shape)
    if isinstance(beta, float) and beta == 0.0:
        return forward_kl(p_logits, q_logits, mask, reduction)
    if isinstance(beta, float) and beta == 1.0:
        return reverse_kl(p_logits, q_logits, mask, reduction)
    logp = torch.log_softmax(p_logits.float(), dim=-1)
    logq = torch.log_softmax(q_logits.float(), dim=-1)
    mix = _log_mixture(beta, logp, logq)
    per_token = beta * _kl(logp, mix) + (1.0 - beta) * _kl(logq, mix)
    return _reduce(per_token, mask, reduction)

