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


def softmax_entropy(logits):
    """Shannon entropy ``-sum_c p_c log p_c`` of the softmax of each row."""
    return -(logits.softmax(1) * logits.log_softmax(1)).sum(1)


def soft_likelihood_ratio(logits, clip=0.99, eps=1e-5):
    """ROID's soft likelihood ratio ``-sum_c p_c log(p_c / (1 - p_c))`` per row.

    Probabilities are clipped at ``clip`` so that a confident prediction has
    a bounded loss (ROID, Marsden et al. 2024, Eq. 3).
    """
    probs = logits.softmax(1).clamp(0.0, clip)
    return -(probs * torch.log(probs / (1.0 - probs) + eps)).sum(1)


def symmetric_cross_entropy(logits, logits_ref, alpha=0.5):
    """Symmetric cross-entropy between two predictions of the same samples, per row."""
    return (-(1.0 - alpha) * (logits_ref.softmax(1) * logits.log_softmax(1)).sum(1)
            - alpha * (logits.softmax(1) * logits_ref.log_softmax(1)).sum(1))


def prior_correction(proba):
    """ROID's prior correction of a batch of predicted probabilities.

    The batch's mean prediction, smoothed towards uniform, multiplies every
    row, which sharpens the classes the batch favours (useful under label
    shift); rows are renormalised.
    """
    n, k = proba.shape
    prior = proba.mean(0)
    smooth = max(1.0 / n, 1.0 / k) / prior.max()
    prior = (prior + smooth) / (1.0 + smooth * k)
    out = proba * prior
    return out / out.sum(1, keepdim=True)


def entropy_loss(logits, x, state, forward, augment):
    """TENT: the mean softmax entropy of the batch (Wang et al., 2021)."""
    return softmax_entropy(logits).mean()


def _update_probs(state, key, probs, momentum):
    if probs.shape[0] == 0:
        return
    mean = probs.mean(0).detach()
    state[key] = mean if key not in state else momentum * state[key] + (1.0 - momentum) * mean


def eata_loss(logits, x, state, forward, augment):
    """EATA's reliable and non-redundant entropy minimisation (Niu et al., 2022).

    Samples whose entropy exceeds ``0.4 log C`` are dropped, then those whose
    prediction is too similar (cosine above the margin) to the running mean
    prediction; the rest are weighted by ``exp(E0 - H)``. The Fisher
    regulariser of EATA is left out: the anchor of :class:`TestTimeAdapter`
    (``kappa``) plays the role of pulling towards the source.
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


def roid_loss(logits, x, state, forward, augment):
    """ROID's weighted soft likelihood ratio plus augmentation consistency (Marsden et al., 2024).

    Each sample is weighted by ``exp(w_div * w_cert / T)``, the product of a
    diversity weight (one minus the cosine similarity to the running class
    prior) and a certainty weight (negative entropy), both min-max scaled over
    the batch; samples below the mean diversity weight get weight zero. The
    loss is the weighted soft likelihood ratio plus the weighted symmetric
    cross-entropy between the predictions on an augmented copy and on the
    batch itself, both summed and divided by the batch size.
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
