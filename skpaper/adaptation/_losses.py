"""Unsupervised test-time objectives: TENT's entropy, EATA's filtered entropy, ROID's loss.

Each objective is a function ``loss(logits, x, state, forward, augment)`` that
returns a scalar tensor (or ``None`` when no sample of the batch is used) and
updates its running ``state`` (a dict of tensors, emptied on reset) in place.
``forward`` re-runs the model and ``augment`` perturbs a batch (ROID's
consistency term needs both). They all feed one adaptation loop in
:class:`TestTimeAdapter`.
"""

import math

import torch
import torch.nn.functional as F

from ..utils._docstring import Substitution

__all__ = [
    "eata_loss",
    "entropy_loss",
    "prior_correction",
    "roid_loss",
    "soft_likelihood_ratio",
    "softmax_entropy",
    "symmetric_cross_entropy",
]

#: EATA's entropy margin as a fraction of ``log(n_classes)`` (Niu et al., 2022).
EATA_ENTROPY_MARGIN = 0.4
#: EATA's redundancy margin on the cosine similarity to the running mean prediction
#: (0.4 is the paper's CIFAR-10 value; 0.05 is its ImageNet value).
EATA_DIVERSITY_MARGIN = 0.4
#: ROID's momentum of the running class prior and temperature of its sample weights.
ROID_MOMENTUM_PROBS = 0.9
ROID_TEMPERATURE = 1.0 / 3.0

#: Docstring pieces of the objectives, which share one signature.
_LOSS_DOCS = {
    "loss_parameters": """
        logits : torch.Tensor of shape (n_samples, n_classes)
            The model's outputs on the batch.
        x : torch.Tensor of shape (n_samples, n_features)
            The batch itself.
        state : dict
            Running statistics of the objective, updated in place (emptied on
            reset).
        forward : callable
            ``forward(x)`` re-runs the model on a batch.
        augment : callable
            ``augment(x)`` returns a perturbed copy of a batch.""",
    "loss_returns": """
        loss : torch.Tensor or None
            The scalar loss, or ``None`` when no sample of the batch is used.""",
}
#: The sections of every objective's docstring, up to its own example lines.
_LOSS_DOCS["loss_sections"] = Substitution(**_LOSS_DOCS).fill("""
    Parameters
    ----------
    {loss_parameters}

    Returns
    -------
    {loss_returns}

    Examples
    --------
    >>> import torch
    >>> logits = torch.tensor([[3.0, 0.0, 0.0], [0.0, 2.0, 0.0], [0.2, 0.1, 0.0],
    ...                        [0.0, 0.0, 1.5]])""")


def softmax_entropy(logits):
    """Return the Shannon entropy ``-sum_c p_c log p_c`` of the softmax of each row.

    Parameters
    ----------
    logits : torch.Tensor of shape (n_samples, n_classes)
        Unnormalised class scores.

    Returns
    -------
    entropy : torch.Tensor of shape (n_samples,)
        The entropy of each row, in nats.

    Examples
    --------
    >>> import torch
    >>> from skpaper.adaptation import softmax_entropy
    >>> softmax_entropy(torch.tensor([[2.0, 0.0], [0.0, 0.0]]))
    tensor([0.3653, 0.6931])
    """
    return -(logits.softmax(1) * logits.log_softmax(1)).sum(1)


def soft_likelihood_ratio(logits, clip=0.99, eps=1e-5):
    """Return ROID's soft likelihood ratio ``-sum_c p_c log(p_c / (1 - p_c))`` per row.

    Probabilities are clipped at ``clip`` so that a confident prediction has
    a bounded loss (ROID, Marsden et al. 2024, Eq. 3).

    Parameters
    ----------
    logits : torch.Tensor of shape (n_samples, n_classes)
        Unnormalised class scores.
    clip : float, default=0.99
        Upper clip of the probabilities.
    eps : float, default=1e-5
        Added inside the logarithm.

    Returns
    -------
    ratio : torch.Tensor of shape (n_samples,)
        The loss of each row (lower for confident rows).

    Examples
    --------
    >>> import torch
    >>> from skpaper.adaptation import soft_likelihood_ratio
    >>> soft_likelihood_ratio(torch.tensor([[2.0, 0.0], [0.0, 0.0]]))
    tensor([-1.5232e+00, -1.0014e-05])
    """
    probs = logits.softmax(1).clamp(0.0, clip)
    return -(probs * torch.log(probs / (1.0 - probs) + eps)).sum(1)


def symmetric_cross_entropy(logits, logits_ref, alpha=0.5):
    """Return the symmetric cross-entropy between two predictions of the same samples.

    Parameters
    ----------
    logits : torch.Tensor of shape (n_samples, n_classes)
        The first prediction (unnormalised).
    logits_ref : torch.Tensor of shape (n_samples, n_classes)
        The second prediction (unnormalised).
    alpha : float, default=0.5
        Weight of the cross-entropy of ``logits_ref`` under ``logits``; the
        other direction gets ``1 - alpha``.

    Returns
    -------
    loss : torch.Tensor of shape (n_samples,)
        The loss of each row.

    Examples
    --------
    >>> import torch
    >>> from skpaper.adaptation import symmetric_cross_entropy
    >>> logits = torch.tensor([[2.0, 0.0], [0.0, 0.0]])
    >>> symmetric_cross_entropy(logits, logits.flip(1))
    tensor([1.8885, 0.6931])
    """
    return (-(1.0 - alpha) * (logits_ref.softmax(1) * logits.log_softmax(1)).sum(1)
            - alpha * (logits.softmax(1) * logits_ref.log_softmax(1)).sum(1))


def prior_correction(proba):
    """Apply ROID's prior correction to a batch of predicted probabilities.

    The batch's mean prediction, smoothed towards uniform, multiplies every
    row, which sharpens the classes the batch favours (useful under label
    shift); rows are renormalised.

    Parameters
    ----------
    proba : torch.Tensor of shape (n_samples, n_classes)
        Predicted probabilities of the batch.

    Returns
    -------
    corrected : torch.Tensor of shape (n_samples, n_classes)
        The corrected probabilities; each row sums to 1.

    Examples
    --------
    >>> import torch
    >>> from skpaper.adaptation import prior_correction
    >>> prior_correction(torch.tensor([[0.8808, 0.1192], [0.5, 0.5]]))
    tensor([[0.9100, 0.0900],
            [0.5778, 0.4222]])
    """
    n, k = proba.shape
    prior = proba.mean(0)
    smooth = max(1.0 / n, 1.0 / k) / prior.max()
    prior = (prior + smooth) / (1.0 + smooth * k)
    out = proba * prior
    return out / out.sum(1, keepdim=True)


@Substitution(**_LOSS_DOCS)
def entropy_loss(logits, x, state, forward, augment):
    """Return TENT's loss: the mean softmax entropy of the batch (Wang et al., 2021).

    {loss_sections}
    >>> from skpaper.adaptation import entropy_loss
    >>> round(float(entropy_loss(logits, None, {}, None, None)), 4)
    0.7398
    """
    return softmax_entropy(logits).mean()


def _update_probs(state, key, probs, momentum):
    if probs.shape[0] == 0:
        return
    mean = probs.mean(0).detach()
    state[key] = mean if key not in state else momentum * state[key] + (1.0 - momentum) * mean


@Substitution(**_LOSS_DOCS)
def eata_loss(logits, x, state, forward, augment):
    """Return EATA's reliable and non-redundant entropy loss (Niu et al., 2022).

    Samples whose entropy exceeds ``0.4 log C`` are dropped, then those whose
    prediction is too similar (cosine above the margin) to the running mean
    prediction; the rest are weighted by ``exp(E0 - H)``. The Fisher
    regulariser of EATA is left out: the anchor of :class:`TestTimeAdapter`
    (``kappa``) plays the role of pulling towards the source.

    {loss_sections}
    >>> from skpaper.adaptation import eata_loss
    >>> state = {}
    >>> round(float(eata_loss(logits, None, state, None, None)), 4), sorted(state)
    (0.3943, ['model_probs'])
    """
    n_classes = logits.shape[1]
    margin = EATA_ENTROPY_MARGIN * math.log(n_classes)
    entropy = softmax_entropy(logits)
    keep = entropy < margin
    probs = logits.softmax(1)
    if "model_probs" in state:
        cosine = F.cosine_similarity(state["model_probs"][None], probs, dim=1)
        keep &= cosine.abs() < EATA_DIVERSITY_MARGIN
    _update_probs(state, "model_probs", probs[keep], 0.9)
    if not bool(keep.any()):
        return None
    kept = entropy[keep]
    return (kept * torch.exp(margin - kept.detach())).mean()


@Substitution(**_LOSS_DOCS)
def roid_loss(logits, x, state, forward, augment):
    """Return ROID's weighted soft likelihood ratio plus augmentation consistency.

    Each sample is weighted by ``exp(w_div * w_cert / T)``, the product of a
    diversity weight (one minus the cosine similarity to the running class
    prior) and a certainty weight (negative entropy), both min-max scaled over
    the batch; samples below the mean diversity weight get weight zero. The
    loss is the weighted soft likelihood ratio plus the weighted symmetric
    cross-entropy between the predictions on an augmented copy and on the
    batch itself, both summed and divided by the batch size (Marsden et al.,
    2024).

    {loss_sections}
    >>> from skpaper.adaptation import roid_loss
    >>> state = {}
    >>> loss = roid_loss(logits, logits, state, lambda z: z, lambda z: z)
    >>> round(float(loss), 4), sorted(state)
    (-7.2212, ['class_probs'])
    """
    n, n_classes = logits.shape
    probs = logits.softmax(1)
    with torch.no_grad():
        prior = state.get("class_probs")
        if prior is None:
            prior = torch.full((n_classes,), 1.0 / n_classes, dtype=probs.dtype,
                               device=probs.device)
        w_div = 1.0 - F.cosine_similarity(prior[None], probs, dim=1)
        w_div = (w_div - w_div.min()) / (w_div.max() - w_div.min()).clamp_min(1e-12)
        mask = w_div < w_div.mean()
        w_cert = -softmax_entropy(logits)
        w_cert = (w_cert - w_cert.min()) / (w_cert.max() - w_cert.min()).clamp_min(1e-12)
        weights = torch.exp(w_div * w_cert / ROID_TEMPERATURE)
        weights[mask] = 0.0
        state["class_probs"] = (ROID_MOMENTUM_PROBS * prior
                                + (1.0 - ROID_MOMENTUM_PROBS) * probs.mean(0))
    keep = ~mask
    if not bool(keep.any()):
        return None
    loss = (soft_likelihood_ratio(logits[keep]) * weights[keep]).sum() / n
    logits_aug = forward(augment(x[keep]))
    loss = loss + (symmetric_cross_entropy(logits_aug, logits[keep])
                   * weights[keep]).sum() / n
    return loss


LOSSES = {"entropy": entropy_loss, "eata": eata_loss, "roid": roid_loss}
