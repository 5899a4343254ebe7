"""Networks of the keypoint motion-transfer model (a small FOMM/TPSMM-style stack).

The pieces follow the first-order motion model (FOMM) and the thin-plate
spline motion model (TPSMM): an unsupervised keypoint detector with
soft-argmax heatmaps, a dense-motion network that blends candidate sparse
motions into one backward flow and predicts occlusion maps, and an
occlusion-aware encoder-decoder generator that warps source features at
every resolution. Widths and depths are small so that the model trains on a
CPU; nothing here is copied from either code base.
"""

import torch
from torch import nn
from torch.nn import functional as F

from ._warp import (
    gaussian_heatmaps,
    keypoint_translations,
    make_coordinate_grid,
    soft_argmax,
    tps_fit,
    tps_transform,
    warp_images,
)

__all__ = [
    "DenseMotionNetwork",
    "FeatureNetwork",
    "KeypointDetector",
    "MotionTransferNetwork",
    "OcclusionAwareGenerator",
    "SelectorNetwork",
    "UNet",
    "perceptual_pyramid_loss",
    "tps_groups",
]


def _block(c_in, c_out, stride=1):
    groups = 4 if c_out % 4 == 0 else 1
    return nn.Sequential(nn.Conv2d(c_in, c_out, 3, stride=stride, padding=1),
                         nn.GroupNorm(groups, c_out), nn.SiLU())


def _resize(x, size):
    if tuple(x.shape[-2:]) == tuple(size):
        return x
    return F.interpolate(x, size=size, mode="bilinear", align_corners=False, antialias=True)


def _resize_coordinates(coords, size):
    """Resize a ``(B, H, W, 2)`` backward-warp field to ``size``.

    The displacement from the identity grid is resized (bilinear), not the
    coordinates themselves, so that the identity stays exact at the borders.
    """
    if tuple(coords.shape[1:3]) == tuple(size):
        return coords
    kw = dict(dtype=coords.dtype, device=coords.device)
    shift = coords - make_coordinate_grid(*coords.shape[1:3], **kw)
    shift = F.interpolate(shift.permute(0, 3, 1, 2), size=size, mode="bilinear",
                          align_corners=False)
    return shift.permute(0, 2, 3, 1) + make_coordinate_grid(*size, **kw)


class UNet(nn.Module):
    """Hourglass with skip connections: ``depth`` stride-2 downsamplings and back."""

    def __init__(self, c_in, c_out, width, depth=2):
        super().__init__()
        widths = [width * min(2**i, 4) for i in range(depth + 1)]
        self.stem = _block(c_in, widths[0])
        self.down = nn.ModuleList(_block(widths[i], widths[i + 1], stride=2)
                                  for i in range(depth))
        self.up = nn.ModuleList(_block(widths[i + 1] + widths[i], widths[i])
                                for i in reversed(range(depth)))
        self.head = nn.Conv2d(widths[0], c_out, 1)

    def forward(self, x):
        skips = [self.stem(x)]
        for layer in self.down:
            skips.append(layer(skips[-1]))
        out = skips.pop()
        for layer in self.up:
            skip = skips.pop()
            out = F.interpolate(out, size=skip.shape[-2:], mode="nearest")
            out = layer(torch.cat([out, skip], dim=1))
        return self.head(out)


def _working_size(height, width):
    """Resolution of the detector and dense-motion network (half size from 24 pixels)."""
    if min(height, width) >= 24:
        return (height + 1) // 2, (width + 1) // 2
    return height, width


class KeypointDetector(nn.Module):
    """Unsupervised keypoint detector: hourglass heatmaps and soft-argmax (FOMM, Sec. 3.2).

    Returns ``K`` keypoints ``(x, y)`` in ``[-1, 1]``.
    """

    def __init__(self, n_channels, n_keypoints, width, depth=2, temperature=0.1):
        super().__init__()
        self.temperature = temperature
        self.net = UNet(n_channels, n_keypoints, width, depth)

    def forward(self, images):
        x = _resize(images, _working_size(*images.shape[-2:]))
        keypoints, _ = soft_argmax(self.net(x), self.temperature)
        return keypoints


def tps_groups(n_keypoints, group_size=5):
    """Split keypoint indices into TPS groups of ``group_size`` (the last takes the rest).

    TPSMM fits one thin-plate spline per group of five keypoints.
    """
    n_groups = max(1, n_keypoints // group_size)
    groups = [list(range(g * group_size, (g + 1) * group_size)) for g in range(n_groups)]
    groups[-1] = list(range(groups[-1][0], n_keypoints)) if n_groups > 1 else list(
        range(n_keypoints))
    return groups


class DenseMotionNetwork(nn.Module):
    """Blend candidate sparse motions into one backward flow, plus occlusion maps.

    Candidates are the identity (background) and either one translation per
    keypoint (``"gaussian"``: FOMM's zeroth-order local motions) or one
    thin-plate spline per group of keypoints (``"tps"``: TPSMM). The network
    sees the Gaussian heatmap differences ``G(kp_D) - G(kp_S)`` and the source
    deformed by every candidate, and predicts softmax weights ``M_m(z)`` giving
    the flow ``T(z) = sum_m M_m(z) T_m(z)`` and ``n_occlusion`` occlusion logits.
    """

    def __init__(self, n_channels, n_keypoints, backbone, width, depth=2, n_occlusion=3,
                 variance=0.01):
        super().__init__()
        self.backbone = backbone
        self.variance = variance
        self.groups = tps_groups(n_keypoints) if backbone == "tps" else None
        self.n_motions = 1 + (len(self.groups) if backbone == "tps" else n_keypoints)
        self.n_occlusion = n_occlusion
        c_in = (n_keypoints + 1) + self.n_motions * n_channels
        self.net = UNet(c_in, self.n_motions + n_occlusion, width, depth)

    def sparse_motions(self, kp_source, kp_driving, grid):
        """Candidate backward motions, shape ``(B, M, H, W, 2)`` (identity first)."""
        b = kp_source.shape[0]
        identity = grid[None, None].expand(b, 1, *grid.shape)
        if self.backbone == "gaussian":
            moves = keypoint_translations(kp_source, kp_driving, grid)
        else:
            flat = grid.reshape(1, -1, 2).expand(b, -1, 2)
            moves = []
            for idx in self.groups:
                params = tps_fit(kp_driving[:, idx], kp_source[:, idx])
                moves.append(tps_transform(params, flat).reshape(b, *grid.shape))
            moves = torch.stack(moves, dim=1)
        return torch.cat([identity, moves], dim=1)

    def forward(self, source, kp_source, kp_driving):
        b, c = source.shape[:2]
        h, w = _working_size(*source.shape[-2:])
        small = _resize(source, (h, w))
        grid = make_coordinate_grid(h, w, dtype=source.dtype, device=source.device)
        motions = self.sparse_motions(kp_source, kp_driving, grid)
        m = motions.shape[1]
        deformed = warp_images(small.repeat_interleave(m, dim=0),
                               motions.reshape(b * m, h, w, 2)).reshape(b, m * c, h, w)
        heat = (gaussian_heatmaps(kp_driving, h, w, self.variance)
                - gaussian_heatmaps(kp_source, h, w, self.variance))
        heat = torch.cat([torch.zeros_like(heat[:, :1]), heat], dim=1)
        out = self.net(torch.cat([heat, deformed], dim=1))
        mask = F.softmax(out[:, :m], dim=1)
        flow = (mask[..., None] * motions).sum(dim=1)
        return {"flow": flow, "mask": mask, "occlusion_logits": out[:, m:]}


class OcclusionAwareGenerator(nn.Module):
    """Encoder-decoder that warps source features at every scale (TPSMM-style).

    Features at full, half and quarter resolution are warped with the
    backward flow and multiplied by the occlusion map of their scale; the
    decoder fuses them and also sees the warped source image at full
    resolution. Its output blends the warped source image with a generated
    image by a predicted weight (initialised near one), so that training
    starts from plain warping; FOMM and TPSMM decode the image outright,
    which needs far longer training.
    """

    def __init__(self, n_channels, width, n_down=2):
        super().__init__()
        widths = [width * min(2**i, 4) for i in range(n_down + 1)]
        self.stem = _block(n_channels, widths[0])
        self.down = nn.ModuleList(_block(widths[i], widths[i + 1], stride=2)
                                  for i in range(n_down))
        self.bottleneck = nn.Sequential(_block(widths[-1], widths[-1]),
                                        _block(widths[-1], widths[-1]))
        self.up = nn.ModuleList(_block(widths[i + 1] + widths[i], widths[i])
                                for i in reversed(range(n_down)))
        self.out = nn.Conv2d(widths[0] + n_channels, n_channels + 1, 3, padding=1)
        # Start by passing the warped source through (blend weight sigmoid(3) = 0.95).
        with torch.no_grad():
            self.out.bias[-1].fill_(3.0)
        self.n_scales = n_down + 1

    def forward(self, source, flow, occlusion_logits):
        feats = [self.stem(source)]
        for layer in self.down:
            feats.append(layer(feats[-1]))
        occlusions = []
        warped = []
        for s, feat in enumerate(feats):
            size = feat.shape[-2:]
            occ = torch.sigmoid(_resize(occlusion_logits[:, s : s + 1], size))
            warped.append(warp_images(feat, _resize_coordinates(flow, size)) * occ)
            occlusions.append(occ)
        out = self.bottleneck(warped[-1]) + warped[-1]
        for layer, skip in zip(self.up, reversed(warped[:-1])):
            out = F.interpolate(out, size=skip.shape[-2:], mode="nearest")
            out = layer(torch.cat([out, skip], dim=1))
        deformed = warp_images(source, _resize_coordinates(flow, source.shape[-2:]))
        out = self.out(torch.cat([out, deformed], dim=1))
        blend = torch.sigmoid(out[:, -1:])
        prediction = blend * deformed + (1 - blend) * torch.sigmoid(out[:, :-1])
        return {"prediction": prediction, "deformed": deformed, "occlusion": occlusions,
                "blend": blend}


class MotionTransferNetwork(nn.Module):
    """Keypoint detector, dense-motion network, generator and optional selector."""

    def __init__(self, n_channels, n_keypoints, backbone="tps", width=16, temperature=0.1,
                 learned_selector=False):
        super().__init__()
        self.detector = KeypointDetector(n_channels, n_keypoints, width, temperature=temperature)
        self.dense_motion = DenseMotionNetwork(n_channels, n_keypoints, backbone, width)
        self.generator = OcclusionAwareGenerator(n_channels, width)
        self.selector = SelectorNetwork(n_channels, width) if learned_selector else None

    def keypoints(self, images):
        return self.detector(images)

    def generate(self, source, kp_source, kp_driving):
        """Animate ``source`` from pose ``kp_source`` to pose ``kp_driving``."""
        motion = self.dense_motion(source, kp_source, kp_driving)
        out = self.generator(source, motion["flow"], motion["occlusion_logits"])
        out["mask"] = motion["mask"]
        return out


class SelectorNetwork(nn.Module):
    """Scores a candidate interpolant against the driving frame (lower is better).

    Reads ``concat(I_t, D)`` and regresses the log of the L1 error that the
    second, small-displacement transfer ``I_t -> D`` makes.
    """

    def __init__(self, n_channels, width):
        super().__init__()
        self.features = nn.Sequential(_block(2 * n_channels, width, stride=2),
                                      _block(width, 2 * width, stride=2),
                                      _block(2 * width, 2 * width, stride=2))
        self.head = nn.Linear(2 * width, 1)

    def forward(self, candidate, driving):
        feats = self.features(torch.cat([candidate, driving], dim=1)).mean(dim=(2, 3))
        return self.head(feats)[:, 0]


class FeatureNetwork(nn.Module):
    """Small convolutional encoder used frozen as the perceptual feature extractor.

    It is pre-trained in-process as an autoencoder on the training frames
    (``decode`` is used only then); it stands in for the pretrained VGG of
    FOMM/TPSMM and for the pretrained ViT of the anytime-interpolation paper,
    neither of which is available offline.
    """

    def __init__(self, n_channels, width):
        super().__init__()
        self.layers = nn.ModuleList([_block(n_channels, width),
                                     _block(width, 2 * width, stride=2),
                                     _block(2 * width, 4 * width, stride=2)])
        self.decoder = nn.Sequential(
            nn.Upsample(scale_factor=2, mode="nearest"), _block(4 * width, 2 * width),
            nn.Upsample(scale_factor=2, mode="nearest"), _block(2 * width, width),
            nn.Conv2d(width, n_channels, 3, padding=1))

    def forward(self, x):
        feats = []
        for layer in self.layers:
            x = layer(x)
            feats.append(x)
        return feats

    def decode(self, feats, size):
        return torch.sigmoid(_resize(self.decoder(feats[-1]), size))


def perceptual_pyramid_loss(prediction, target, features=None, scales=(1.0, 0.5, 0.25)):
    """Mean L1 over an image pyramid of pixels and (if given) frozen features.

    FOMM/TPSMM sum VGG-19 feature distances over the scales 1, 1/2, 1/4 and
    1/8; here the pixel term is always included and ``features`` (a
    :class:`FeatureNetwork`) replaces VGG.
    """
    total = 0.0
    h, w = prediction.shape[-2:]
    for scale in scales:
        size = (max(1, int(round(h * scale))), max(1, int(round(w * scale))))
        p, t = _resize(prediction, size), _resize(target, size)
        total = total + (p - t).abs().mean()
        if features is not None:
            for fp, ft in zip(features(p), features(t)):
                total = total + (fp - ft).abs().mean()
    return total / len(scales)
