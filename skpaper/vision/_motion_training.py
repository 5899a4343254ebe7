"""Training objective of :class:`KeypointMotionTransfer` and its anytime machinery.

Direct transfer follows FOMM/TPSMM (perceptual pyramid and equivariance
losses on frame pairs of one video). The anytime-interpolation terms, the
selector rules and their weights are reconstructed from the abstract of
Wang and Li (ICML 2025); see the estimator's Notes.
"""

import math

import torch

from ..nn._base import LRScheduler
from ._motion_modules import perceptual_pyramid_loss
from ._warp import RandomDeformation, interpolate_keypoints

__all__ = ["DEFAULT_LOSS_WEIGHTS", "AnytimeTrainingMixin"]

#: Loss weights; ``perceptual``, ``equivariance`` follow TPSMM's defaults (10 each),
#: the interpolation terms are reconstructed (the paper's weights are not public).
DEFAULT_LOSS_WEIGHTS = {
    "perceptual": 10.0,
    "equivariance": 10.0,
    "chain": 10.0,
    "symmetry": 5.0,
    "keypoint": 10.0,
    "feature": 1.0,
    "selector": 1.0,
}

_FEATURE_STEPS = 150
_SELECTOR_WARMUP = 0.25
#: Fractions of ``max_epochs`` after which the learning rate drops tenfold.
_DECAY_FRACTIONS = (0.7, 0.9)


def _decay_milestones(max_epochs):
    """Epochs (counted from 0) from which each tenfold learning-rate drop applies.

    Epoch ``e`` runs at ``lr * 0.1**k`` with ``k`` the number of fractions ``m`` with
    ``e >= m * max_epochs``; for an integer ``e`` that is ``e >= ceil(m * max_epochs)``
    (the product taken in floating point, as the comparison does), the milestone
    rule of :class:`~torch.optim.lr_scheduler.MultiStepLR` stepped once per epoch.
    """
    return [math.ceil(m * max_epochs) for m in _DECAY_FRACTIONS]


class AnytimeTrainingMixin:
    """Training loop, losses, candidate generation and selection (needs the estimator's state)."""

    def _fit_features(self, videos):
        if self.feature_extractor is None:
            return None
        features = self._make_module(self._build_features)
        if self.feature_extractor == "autoencoder":
            frames = videos.reshape(-1, *videos.shape[2:])
            optimizer = torch.optim.Adam(features.parameters(), lr=1e-3)
            batch = min(32, frames.shape[0])
            for _ in range(_FEATURE_STEPS):
                idx = torch.randint(frames.shape[0], (batch,), generator=self._generator)
                x = frames[idx.to(frames.device)]
                loss = (features.decode(features(x), x.shape[-2:]) - x).abs().mean()
                self._optimizer_step(optimizer, loss)
        return features.requires_grad_(False).eval()

    def _extra_callbacks(self):
        # Step decay: the learning rate drops tenfold at 70% and at 90% of the epochs.
        return [LRScheduler("MultiStepLR", milestones=_decay_milestones(self.max_epochs),
                            gamma=0.1)]

    def _train_batches(self, tensors, shuffle=True):
        """Batches of ``(source, driving)`` frames: random frame pairs of one video each."""
        (videos,) = tensors
        n_videos, n_frames = videos.shape[:2]
        order = torch.randperm(n_videos * self.num_repeats, generator=self._generator)
        order = order % n_videos
        batch = min(int(self.batch_size), order.numel())
        dev = videos.device
        for start in range(0, order.numel(), batch):
            idx = order[start : start + batch]
            src = torch.randint(n_frames, (idx.numel(),), generator=self._generator)
            # A different driving frame: shift by 1..n_frames-1 (mod n_frames).
            drv = (src + 1 + torch.randint(n_frames - 1, (idx.numel(),),
                                           generator=self._generator)) % n_frames
            yield videos[idx.to(dev), src.to(dev)], videos[idx.to(dev), drv.to(dev)]

    def _get_loss(self, batch):
        source, driving = batch
        terms = self._step_losses(source, driving)
        loss = sum(self._weights[k] * v for k, v in terms.items() if k != "mean_t")
        # Every step counts alike in the epoch means.
        return {"loss": loss, "weight": 1.0, **terms}

    def _train_step(self, batch, optimizer):
        step = super()._train_step(batch, optimizer)
        self.n_steps_ += 1
        return step

    def _equivariance(self, frames, keypoints):
        deformation = RandomDeformation(frames.shape[0], self._generator, dtype=frames.dtype,
                                        device=frames.device)
        warped_kp = self.module_.keypoints(deformation.warp(frames))
        return (keypoints - deformation(warped_kp)).abs().mean()

    def _candidates(self, source, kp_source, kp_driving, times):
        """Interpolants ``I_t`` for every ``t`` in ``times``: ``(B, n_t, C, H, W)`` and kp."""
        b, n_t = source.shape[0], len(times)
        t = torch.as_tensor(times, dtype=source.dtype, device=source.device).repeat(b)
        src = source.repeat_interleave(n_t, dim=0)
        kp_s = kp_source.repeat_interleave(n_t, dim=0)
        kp_t = interpolate_keypoints(kp_s, kp_driving.repeat_interleave(n_t, dim=0), t)
        images = self.module_.generate(src, kp_s, kp_t)["prediction"]
        return images, kp_t

    def _score(self, images, kp_t, kp_driving, driving, n_t, rule):
        """Selector scores ``(B, n_t)`` (lower is better) of the candidates ``images``.

        Returns the scores, the keypoints re-detected on the candidates and,
        when the rule computed them, the second-stage outputs ``I_t -> D``.
        """
        module = self.module_
        kp_images = module.keypoints(images)
        chain = None
        if rule == "learned":
            scores = module.selector(images, driving.repeat_interleave(n_t, dim=0))
        elif rule == "consistency":
            scores = (kp_images - kp_t).norm(dim=-1).mean(dim=-1)
        else:
            kp_d = kp_driving.repeat_interleave(n_t, dim=0)
            chain = module.generate(images, kp_images, kp_d)["prediction"]
            scores = (module.keypoints(chain) - kp_d).norm(dim=-1).mean(dim=-1)
        return scores.reshape(-1, n_t), kp_images, chain

    def _step_losses(self, source, driving):
        module, feats = self.module_, self.features_
        b = source.shape[0]
        # Both directions run as one batch (A -> B is S -> D, then D -> S): same losses,
        # half the calls, which is what costs on a CPU.
        if self.bidirectional:
            a_img, b_img = torch.cat([source, driving]), torch.cat([driving, source])
        else:
            a_img, b_img = source, driving
        kp_a = module.keypoints(a_img)
        kp_b = torch.cat([kp_a[b:], kp_a[:b]]) if self.bidirectional else module.keypoints(
            driving)
        terms = {
            "perceptual": perceptual_pyramid_loss(module.generate(a_img, kp_a, kp_b)[
                "prediction"], b_img, feats),
            "equivariance": self._equivariance(b_img, kp_b),
        }
        if self._anytime:
            terms.update(self._interpolation_losses(a_img, b_img, kp_a, kp_b, b))
        return terms

    def _interpolation_losses(self, a_img, b_img, kp_a, kp_b, b):
        """Interpolation terms; input rows ``:b`` are ``S -> D``, rows ``b:`` ``D -> S``."""
        module, feats = self.module_, self.features_
        source, driving, kp_s, kp_d = a_img[:b], b_img[:b], kp_a[:b], kp_b[:b]
        times = self.interpolation_
        n_t = len(times)
        learned = self.selector == "learned"
        rule = self.selector
        if learned and self.n_steps_ < _SELECTOR_WARMUP * self._total_steps():
            rule = "downstream"
        terms = {}
        with torch.no_grad():
            images, kp_t = self._candidates(source, kp_s.detach(), kp_d.detach(), times)
            scores, kp_images, chain = self._score(images, kp_t, kp_d.detach(), driving, n_t,
                                                   rule)
            if learned:
                if chain is None:
                    chain = module.generate(images, kp_images,
                                            kp_d.detach().repeat_interleave(n_t, dim=0)
                                            )["prediction"]
                errors = (chain - driving.repeat_interleave(n_t, dim=0)).abs()
                errors = errors.mean(dim=(1, 2, 3))
        if learned:
            predicted = module.selector(images, driving.repeat_interleave(n_t, dim=0))
            terms["selector"] = ((predicted - torch.log(errors + 1e-4)) ** 2).mean()
        all_t = torch.as_tensor(times, dtype=source.dtype, device=source.device)
        if self.constraint == "selected":
            chosen = [all_t[scores.argmin(dim=1)]]
        else:
            chosen = [all_t[j].expand(b) for j in range(n_t)]
        chain = kp_term = sym = feat = 0.0
        for t in chosen:
            # D -> S at 1 - t shows the same pose kp(t) as S -> D at t.
            t_rows = torch.cat([t, 1 - t]) if self.bidirectional else t
            kp_t = interpolate_keypoints(kp_a, kp_b, t_rows)
            inter = module.generate(a_img, kp_a, kp_t)["prediction"]
            kp_inter = module.keypoints(inter)
            out = module.generate(inter, kp_inter, kp_b)["prediction"]
            chain = chain + perceptual_pyramid_loss(out, b_img, feats)
            kp_term = kp_term + (kp_inter - kp_t.detach()).abs().mean()
            if feats is not None:
                pooled = [f.mean(dim=(2, 3)) for f in feats(inter)]
                ref = [f.mean(dim=(2, 3)) for f in feats(a_img)]
                feat = feat + sum((p - r).abs().mean() for p, r in zip(pooled, ref))
            if self.bidirectional:
                sym = sym + perceptual_pyramid_loss(inter[:b], inter[b:], feats)
        n_chosen = len(chosen)
        terms["chain"] = chain / n_chosen
        terms["keypoint"] = kp_term / n_chosen
        if self.bidirectional:
            terms["symmetry"] = sym / n_chosen
        if feats is not None:
            terms["feature"] = feat / n_chosen
        terms["mean_t"] = chosen[0].mean() if self.constraint == "selected" else all_t.mean()
        return terms

    def _total_steps(self):
        per_epoch = -(-self._n_videos_seen * self.num_repeats // max(1, int(self.batch_size)))
        return max(1, per_epoch * int(self.max_epochs))

    def _fit_loop(self, tensors):
        self._n_videos_seen = int(tensors[0].shape[0])
        return super()._fit_loop(tensors)
