"""Masked-autoencoder pretraining of a ViT on multi-channel microscopy images.

:class:`MaskedAutoencoderViT` is the torch module (encoder, light decoder,
masked-patch MSE mixed with a Fourier-magnitude loss);
:class:`MicroscopyMAE` wraps it as a scikit-learn transformer whose
``transform`` returns the mean-pooled features of any encoder block.
"""

import copy
import functools
import math
from numbers import Integral, Real

import numpy as np
import torch
from sklearn.base import ClassNamePrefixFeaturesOutMixin, TransformerMixin
from sklearn.utils.validation import check_is_fitted
from torch import nn

from ..nn._base import BaseTorchEstimator, LRScheduler
from ..nn._laurel import LAUREL_VARIANTS
from ..utils._memory import check_allocation
from ..utils._sklearn import Interval, StrOptions, _fit_context, validate_data
from ._docs import _SHARED_DOCS, Substitution, torch_parameter_docs
from ._vit import (
    BLOCK_TYPES,
    VisionTransformer,
    ViTBlock,
    patchify,
    random_masking,
    sincos_pos_embed_2d,
)

__all__ = ["MaskedAutoencoderViT", "MicroscopyMAE", "fourier_loss", "mae_loss"]


def _masked_mean(per_token, mask):
    if mask is None:
        return per_token.mean()
    return (per_token * mask).sum() / mask.sum().clamp_min(1.0)


#: Forms of the Fourier loss: over the token grid (the official code) or per patch.
FOURIER_FORMS = ("grid", "patch")


def _token_grid(x, grid, n_modalities):
    """``(batch, tokens, width)`` tokens as ``(batch, n_modalities * width, gh, gw)`` images."""
    batch, n_tokens, width = x.shape
    gh, gw = grid
    if n_modalities * gh * gw != n_tokens:
        raise ValueError(f"grid={tuple(grid)} with n_modalities={n_modalities} holds "
                         f"{n_modalities * gh * gw} tokens, but the input has {n_tokens}.")
    x = x.reshape(batch, n_modalities, gh, gw, width).permute(0, 1, 4, 2, 3)
    return x.reshape(batch, n_modalities * width, gh, gw)


def fourier_loss(pred, target, patch_size, mask=None, *, form="grid", grid=None,
                 n_modalities=1):
    """L1 distance between 2-D Fourier magnitudes of the reconstruction and the target.

    Parameters
    ----------
    pred, target : torch.Tensor of shape (batch, tokens, width)
        Flattened patches as produced by :func:`patchify` (``width`` is
        ``k * patch_size**2`` with ``k`` channels per token).
    patch_size : int
        Side of the square patches.
    mask : torch.Tensor of shape (batch, tokens) or None, default=None
        1 for the masked tokens, whose errors count; None counts every token.
    form : {"grid", "patch"}, default="grid"
        ``"grid"`` (the official form): the tokens are laid out on their
        ``(gh, gw)`` grid as a ``(batch, width, gh, gw)`` tensor and the FFT
        runs over the token grid, one image per entry of the token vector.
        ``"patch"``: each token is reshaped to its ``(k, patch_size,
        patch_size)`` pixels and transformed on its own.
    grid : tuple of 2 int or None, default=None
        ``(gh, gw)`` token grid (per modality) for ``form="grid"``; None means
        a square grid of ``tokens / n_modalities`` tokens.
    n_modalities : int, default=1
        Number of channel-wise token sets (the channels of a channel-agnostic
        MAE, whose tokens are channel-major), each laid out on its own grid.

    Returns
    -------
    loss : torch.Tensor (scalar)
        ``"patch"``: :math:`\\operatorname{mean}_{i \\in M} \\operatorname{mean}_{c,u,v}
        \\big|\\,|\\mathcal{F}(\\hat x_i)_{c,u,v}| - |\\mathcal{F}(x_i)_{c,u,v}|\\,\\big|`
        with :math:`\\mathcal F` the 2-D FFT of each channel of patch ``i``.
        ``"grid"``: the mean over batch, token entries and grid frequencies of
        the same distance, with :math:`\\mathcal F` the 2-D FFT over the token
        grid.

    Notes
    -----
    The official implementation views the ``(B, L, D)`` reconstruction as a
    ``(B, D, sqrt(L), sqrt(L))`` tensor and takes ``fft2`` over the last two
    axes; ``form="grid"`` does this with the tokens placed on their grid
    (non-square grids and channel-agnostic token sets are allowed). A
    frequency mixes every token, so the mask cannot select terms after the
    FFT: with a mask, the visible tokens of ``pred`` are replaced by their
    targets before the transform, so that only the masked tokens' errors
    count (our reading; the official masked reduction is not a per-token
    one). ``form="patch"`` is a per-token quantity that the mask selects
    exactly like the pixel loss (our variant, kept as an option).

    Examples
    --------
    >>> import torch
    >>> from skpaper.representation import fourier_loss
    >>> x = torch.randn(2, 4, 3 * 16)
    >>> float(fourier_loss(x, x, 4)), float(fourier_loss(x, x, 4, form="patch"))
    (0.0, 0.0)
    """
    batch, n_tokens, width = pred.shape
    if pred.shape != target.shape:
        raise ValueError(f"pred and target must have the same shape, got {tuple(pred.shape)} "
                         f"and {tuple(target.shape)}.")
    if form not in FOURIER_FORMS:
        raise ValueError(f"form must be one of {FOURIER_FORMS}, got {form!r}.")
    if width % (patch_size * patch_size):
        raise ValueError(f"token width {width} is not a multiple of patch_size**2="
                         f"{patch_size * patch_size}.")
    if form == "patch":
        shape = (batch, n_tokens, width // (patch_size * patch_size), patch_size, patch_size)
        mag_pred = torch.fft.fft2(pred.reshape(shape)).abs()
        mag_true = torch.fft.fft2(target.reshape(shape)).abs()
        per_token = (mag_pred - mag_true).abs().mean(dim=(2, 3, 4))
        return _masked_mean(per_token, mask)
    if isinstance(n_modalities, bool) or int(n_modalities) != n_modalities or n_modalities < 1:
        raise ValueError(f"n_modalities must be a positive int, got {n_modalities!r}.")
    n_modalities = int(n_modalities)
    if grid is None:
        side = math.isqrt(n_tokens // n_modalities)
        grid = (side, side)
    if mask is not None:
        pred = torch.where(mask.unsqueeze(-1) > 0, pred, target)
    mag_pred = torch.fft.fft2(_token_grid(pred, grid, n_modalities)).abs()
    mag_true = torch.fft.fft2(_token_grid(target, grid, n_modalities)).abs()
    return (mag_pred - mag_true).abs().mean()


def mae_loss(pred, target, mask, patch_size, fourier_weight=0.01, *, fourier_form="grid",
             grid=None, n_modalities=1):
    """Masked-patch MSE mixed with the Fourier loss as ``(1 - w) MSE + w Fourier``.

    Parameters
    ----------
    pred, target : torch.Tensor of shape (batch, tokens, patch_width)
        Predicted and true flattened patches (see :func:`patchify`).
    mask : torch.Tensor of shape (batch, tokens)
        1 for masked tokens: both terms count only their errors.
    patch_size : int
        Side of the square patches.
    fourier_weight : float in [0, 1), default=0.01
        Weight ``w`` of the Fourier term.
    fourier_form : {"grid", "patch"}, default="grid"
        ``form`` of :func:`fourier_loss`.
    grid : tuple of 2 int or None, default=None
        ``(gh, gw)`` token grid of :func:`fourier_loss`.
    n_modalities : int, default=1
        See :func:`fourier_loss`.

    Returns
    -------
    total, mse, fourier : torch.Tensor
        The mixed loss and its two parts (``fourier`` is 0 when the weight is 0).

    Examples
    --------
    >>> import torch
    >>> from skpaper.representation import mae_loss
    >>> target = torch.zeros(1, 4, 16)
    >>> mask = torch.tensor([[1.0, 1.0, 0.0, 0.0]])
    >>> total, mse, fourier = mae_loss(target + 1.0, target, mask, 4, fourier_weight=0.0)
    >>> float(total), float(mse), float(fourier)
    (1.0, 1.0, 0.0)
    """
    mse = _masked_mean(((pred - target) ** 2).mean(dim=-1), mask)
    if fourier_weight <= 0:
        return mse, mse, torch.zeros((), dtype=mse.dtype, device=mse.device)
    four = fourier_loss(pred, target, patch_size, mask, form=fourier_form, grid=grid,
                        n_modalities=n_modalities)
    return (1.0 - fourier_weight) * mse + fourier_weight * four, mse, four


def self_standardize(images, eps=1e-6):
    """Standardise each channel of each image to zero mean and unit variance."""
    mean = images.mean(dim=(-2, -1), keepdim=True)
    var = images.var(dim=(-2, -1), keepdim=True, unbiased=False)
    return (images - mean) / torch.sqrt(var + eps)


@Substitution(**_SHARED_DOCS)
class MaskedAutoencoderViT(nn.Module):
    """Masked autoencoder with a :class:`VisionTransformer` encoder.

    Parameters
    ----------
    {vit_encoder}
    {mae_decoder}
    standardize : bool, default=True
        Standardise every channel of every image before encoding; the
        reconstruction target is the standardised image.

    Attributes
    ----------
    encoder : VisionTransformer
    decoder_embed, decoder_blocks, decoder_norm, decoder_pred : torch.nn.Module
    mask_token : torch.nn.Parameter of shape (1, 1, decoder_dim)
    channel_embed : torch.nn.Parameter of shape (in_chans, decoder_dim) or None
        Tells the decoder which channel a token belongs to (channel-agnostic mode).

    Notes
    -----
    The encoder sees only the visible tokens (plus the class token); the
    decoder receives them, projected to ``decoder_dim``, with a learned mask
    token in each masked position, adds fixed positions, and predicts the
    pixels of every token. In the channel-agnostic mode the official model uses
    one cross-attention decoder per channel; here one shared decoder with a
    learned channel embedding plays that role (reconstructed, simpler).

    Examples
    --------
    >>> import torch
    >>> from skpaper.representation import MaskedAutoencoderViT, mae_loss
    >>> mae = MaskedAutoencoderViT(3, 4, (2, 2), embed_dim=16, depth=2, n_heads=2)
    >>> pred, target, mask = mae(torch.randn(5, 3, 8, 8), 0.75)
    >>> pred.shape, int(mask.sum(1)[0])
    (torch.Size([5, 4, 48]), 3)
    """

    def __init__(self, in_chans, patch_size, grid, *, embed_dim=64, depth=6, n_heads=4,
                 mlp_ratio=4.0, channel_agnostic=False, layer_scale=1e-4, qk_norm=True,
                 block_type="sequential", residual="standard", laurel_rank=8, decoder_dim=32,
                 decoder_depth=1, decoder_heads=4, standardize=True):
        super().__init__()
        self.encoder = VisionTransformer(
            in_chans, patch_size, grid, embed_dim=embed_dim, depth=depth, n_heads=n_heads,
            mlp_ratio=mlp_ratio, channel_agnostic=channel_agnostic, layer_scale=layer_scale,
            qk_norm=qk_norm, block_type=block_type, residual=residual, laurel_rank=laurel_rank,
        )
        self.standardize = bool(standardize)
        self.patch_size = int(patch_size)
        self.channel_agnostic = bool(channel_agnostic)
        self.decoder_embed = nn.Linear(embed_dim, decoder_dim)
        self.mask_token = nn.Parameter(torch.zeros(1, 1, decoder_dim))
        self.register_buffer("decoder_pos", sincos_pos_embed_2d(decoder_dim, *self.encoder.grid),
                             persistent=False)
        self.channel_embed = (nn.Parameter(torch.zeros(in_chans, decoder_dim))
                              if channel_agnostic else None)
        self.decoder_blocks = nn.ModuleList(
            ViTBlock(decoder_dim, decoder_heads, mlp_ratio=mlp_ratio, layer_scale=None,
                     qk_norm=qk_norm) for _ in range(decoder_depth)
        )
        self.decoder_norm = nn.LayerNorm(decoder_dim)
        out = patch_size**2 * (1 if channel_agnostic else in_chans)
        self.decoder_pred = nn.Linear(decoder_dim, out)
        for module in (self.decoder_embed, self.decoder_pred, *self.decoder_blocks.modules()):
            if isinstance(module, nn.Linear):
                nn.init.xavier_uniform_(module.weight)
                if module.bias is not None:
                    nn.init.zeros_(module.bias)
        nn.init.normal_(self.mask_token, std=0.02)
        if self.channel_embed is not None:
            nn.init.normal_(self.channel_embed, std=0.02)

    def prepare(self, images):
        """Standardise the images if ``standardize``, else return them unchanged.

        Parameters
        ----------
        images : torch.Tensor of shape (batch, channels, height, width)
            Raw images.

        Returns
        -------
        images : torch.Tensor of shape (batch, channels, height, width)
            The encoder input and reconstruction target.
        """
        return self_standardize(images) if self.standardize else images

    def decode(self, latent, restore, n_channels):
        """Predict the pixels of every token from the encoded visible tokens.

        Parameters
        ----------
        latent : torch.Tensor of shape (batch, 1 + n_visible, embed_dim)
            Normalised encoder output, class token first.
        restore : torch.LongTensor of shape (batch, tokens)
            Unshuffling indices of :func:`random_masking`.
        n_channels : int
            Number of image channels (sets the channel embeddings of the
            channel-agnostic mode).

        Returns
        -------
        pred : torch.Tensor of shape (batch, tokens, patch_width)
            Predicted flattened patches, in token order.
        """
        x = self.decoder_embed(latent)
        batch, n_tokens = restore.shape
        n_visible = x.shape[1] - 1
        fill = self.mask_token.expand(batch, n_tokens - n_visible, -1)
        seq = torch.cat([x[:, 1:], fill], dim=1)
        seq = torch.gather(seq, 1, restore.unsqueeze(-1).expand(-1, -1, seq.shape[-1]))
        pos = self.decoder_pos
        if self.channel_agnostic:
            n_patches = pos.shape[0]
            pos = pos.repeat(n_channels, 1) + self.channel_embed[:n_channels].repeat_interleave(
                n_patches, dim=0)
        x = torch.cat([x[:, :1], seq + pos], dim=1)
        for block in self.decoder_blocks:
            x = block(x)
        return self.decoder_pred(self.decoder_norm(x))[:, 1:]

    def forward(self, images, mask_ratio, generator=None):
        """Encode a random ``1 - mask_ratio`` share of the tokens and reconstruct all.

        Parameters
        ----------
        images : torch.Tensor of shape (batch, in_chans, height, width)
            Images whose patch grid is ``grid``.
        mask_ratio : float in (0, 1)
            Share of tokens hidden from the encoder.
        generator : torch.Generator or None, default=None
            Source of the masks (CPU generator).

        Returns
        -------
        pred, target : torch.Tensor of shape (batch, tokens, patch_width)
            Predicted and true (standardised) flattened patches.
        mask : torch.Tensor of shape (batch, tokens)
            1 for the masked tokens.
        """
        images = self.prepare(images)
        target = patchify(images, self.patch_size, channel_agnostic=self.channel_agnostic)
        tokens = self.encoder.embed(images)
        keep, mask, restore = random_masking(tokens.shape[0], tokens.shape[1], mask_ratio,
                                             generator=generator, device=tokens.device)
        visible = torch.gather(tokens, 1, keep.unsqueeze(-1).expand(-1, -1, tokens.shape[-1]))
        latent = self.encoder.norm(self.encoder.run_blocks(visible))
        pred = self.decode(latent, restore, images.shape[1])
        return pred, target, mask.to(pred.dtype)


def _one_cycle(step, total, warmup):
    """Multiplier of the peak learning rate at optimizer step ``step`` (from 0).

    Linear warm-up over ``warmup`` steps to the peak, then cosine decay to zero at
    step ``total`` (one cycle).
    """
    if step < warmup:
        return (step + 1) / warmup
    progress = (step - warmup) / max(total - warmup, 1)
    return 0.5 * (1.0 + math.cos(math.pi * min(progress, 1.0)))


def _one_cycle_scheduler(optimizer, total, warmup):
    """The one-cycle schedule of :func:`_one_cycle` as a per-step scheduler (picklable policy)."""
    return torch.optim.lr_scheduler.LambdaLR(
        optimizer, functools.partial(_one_cycle, total=total, warmup=warmup))


def _image_layout(n_features, image_shape, patch_size):
    """Return ``(C, H, W)`` of the rows and the zero-padded ``(C, H', W')`` the ViT sees."""
    if image_shape is None:
        side = math.isqrt(n_features - 1) + 1 if n_features > 1 else 1
        channels, height, width = 1, side, side
    else:
        channels, height, width = (int(s) for s in image_shape)
        if channels * height * width != n_features:
            raise ValueError(
                f"X has {n_features} features, but image_shape={tuple(image_shape)} needs "
                f"{channels * height * width} (channels * height * width)."
            )
    if patch_size > max(height, width):
        raise ValueError(
            f"patch_size={patch_size} is larger than the {height}x{width} images (X has "
            f"{n_features} feature(s)); the patches would be mostly padding: use "
            f"patch_size <= {max(height, width)}.")
    pad = lambda size: -(-size // patch_size) * patch_size  # noqa: E731
    return (channels, height, width), (channels, pad(height), pad(width))


@Substitution(**_SHARED_DOCS, **torch_parameter_docs(max_epochs=50))
class MicroscopyMAE(ClassNamePrefixFeaturesOutMixin, TransformerMixin, BaseTorchEstimator):
    """Masked-autoencoder ViT pretrained on images; features from any block.

    ``fit`` pretrains a :class:`MaskedAutoencoderViT` on the images in ``X``
    (one flattened ``(channels, height, width)`` image per row, as in
    ``images.reshape(len(images), -1)``) with a Fourier-augmented MAE loss.
    ``transform`` returns the mean-pooled features of the chosen encoder block;
    :meth:`transform_all_blocks` returns every block in one forward pass, and
    :meth:`trim` returns the encoder cut at a block.

    Parameters
    ----------
    image_shape : tuple of 3 int or None, default=None
        ``(channels, height, width)`` of the rows of ``X``. None reads each row
        as a single-channel square image (zero-padded to the next square).
        Height and width are zero-padded up to multiples of ``patch_size``.
    patch_size : int, default=4
        Side of the square, non-overlapping patches that become tokens.
    {vit_embed_dim}
    {vit_depth}
    {vit_n_heads}
    {vit_block}
    {mae_decoder}
    mask_ratio : float, default=0.75
        Share of tokens hidden from the encoder (exactly ``round(ratio * tokens)``).
    fourier_weight : float, default=0.01
        ``w`` in the loss ``(1 - w) MSE + w Fourier``.
    fourier_form : {"grid", "patch"}, default="grid"
        How the Fourier loss transforms the reconstruction (see
        :func:`fourier_loss`): ``"grid"``, the official form, takes the 2-D FFT
        over the token grid; ``"patch"`` transforms each patch on its own.
    {vit_channel_agnostic}
    {vit_layers}
    weight_decay : float, default=0.05
        AdamW weight decay on the weight matrices.
    warmup_fraction : float, default=0.1
        Share of the steps spent in linear warm-up before the cosine decay.
    standardize : bool, default=True
        Standardise each channel of each image before encoding.
    {max_epochs}
    {batch_size}
    lr : float, default=1e-3
        Peak learning rate of the one-cycle schedule of the AdamW optimizer.
    {device}
    random_state : int, RandomState instance or None, default=None
        Seeds the weights, the batch order and the masks.
    {verbose}
    {callbacks}
    inference_dtype : {"float32", "float64"}, default="float64"
        Precision of the encoder after training (float64 makes features
        independent of batch composition).

    Attributes
    ----------
    module_ : MaskedAutoencoderViT
    image_shape_ : tuple of int
        ``(channels, height, width)`` of the rows of ``X``.
    padded_shape_ : tuple of int
        The zero-padded shape the encoder sees.
    n_tokens_ : int
        Tokens per image.
    history_ : list of dict
        ``train_loss``, ``reconstruction_loss``, ``fourier_loss`` and ``lr`` per epoch.
    n_iter_ : int
    device_ : str
    n_features_in_ : int
    feature_names_in_ : ndarray of str
        Defined only when ``X`` has string column names.

    See Also
    --------
    BlockSearchProbe : Pick the encoder block by linear probing.
    TypicalVariationNormalizer : Batch correction of the features.

    Notes
    -----
    With ``M`` the masked tokens, :math:`\\hat x_i` the decoder's prediction of
    the standardised pixels :math:`x_i` of token ``i`` and ``w`` the Fourier
    weight, the loss of Kenyon-Dean et al. [1]_ is

    .. math::

        L = (1 - w)\\,\\frac{1}{|M|}\\sum_{i \\in M} \\|\\hat x_i - x_i\\|^2 / P
            + w\\,\\frac{1}{|M|}\\sum_{i \\in M}
            \\big\\| |\\mathcal F \\hat x_i| - |\\mathcal F x_i| \\big\\|_1 / P,

    with ``P`` the pixels of a token and :math:`\\mathcal F` the 2-D FFT
    (``w = 0.01`` in the paper); this is ``fourier_form="patch"``. The default
    ``fourier_form="grid"`` follows the official code: the FFT runs over the
    ``(gh, gw)`` token grid of each token entry, with the visible tokens of
    the prediction replaced by their targets. The features of block ``b`` are the mean over
    patch tokens of the final LayerNorm applied to the residual stream after
    block ``b``, which is what the encoder trimmed at ``b`` outputs.

    Deviations from the paper, for CPU-sized models: AdamW (betas 0.9/0.95)
    instead of Lion, and no stochastic depth. Images are standardised per channel as in the
    released models (which first divide 8-bit pixels by 255, a no-op after
    standardisation).

    References
    ----------
    .. [1] K. Kenyon-Dean, Z. J. Wang, J. Urbanik et al. "ViTally Consistent:
       Scaling Biological Representation Learning for Cell Microscopy".
       ICML 2025 (PMLR 267), arXiv:2411.02572.

    Examples
    --------
    >>> import numpy as np
    >>> from skpaper.representation import MicroscopyMAE
    >>> X = np.random.default_rng(0).normal(size=(32, 2 * 8 * 8))
    >>> mae = MicroscopyMAE(image_shape=(2, 8, 8), embed_dim=16, depth=3, n_heads=2,
    ...                     max_epochs=2, random_state=0).fit(X)
    >>> mae.transform(X).shape, mae.transform(X, block=1).shape
    ((32, 16), (32, 16))
    >>> mae.transform_all_blocks(X).shape
    (3, 32, 16)
    """

    _parameter_constraints = {
        **BaseTorchEstimator._parameter_constraints,
        "image_shape": [tuple, list, None],
        "patch_size": [Interval(Integral, 1, 4096, closed="both")],
        "embed_dim": [Interval(Integral, 4, 4096, closed="both")],
        "depth": [Interval(Integral, 1, 256, closed="both")],
        "n_heads": [Interval(Integral, 1, 4096, closed="both")],
        "mlp_ratio": [Interval(Real, 0, None, closed="neither")],
        "decoder_dim": [Interval(Integral, 4, 4096, closed="both")],
        "decoder_depth": [Interval(Integral, 1, 256, closed="both")],
        "decoder_heads": [Interval(Integral, 1, 4096, closed="both")],
        "mask_ratio": [Interval(Real, 0, 1, closed="neither")],
        "fourier_weight": [Interval(Real, 0, 1, closed="left")],
        "fourier_form": [StrOptions(set(FOURIER_FORMS))],
        "channel_agnostic": ["boolean"],
        "layer_scale": [Interval(Real, 0, None, closed="neither"), None],
        "qk_norm": ["boolean"],
        "block_type": [StrOptions(set(BLOCK_TYPES))],
        "residual": [StrOptions(set(LAUREL_VARIANTS))],
        "laurel_rank": [Interval(Integral, 1, 4096, closed="both")],
        "weight_decay": [Interval(Real, 0, None, closed="left")],
        "warmup_fraction": [Interval(Real, 0, 1, closed="left")],
        "standardize": ["boolean"],
    }

    def __init__(self, *, image_shape=None, patch_size=4, embed_dim=64, depth=6, n_heads=4,
                 mlp_ratio=4.0, decoder_dim=32, decoder_depth=1, decoder_heads=4,
                 mask_ratio=0.75, fourier_weight=0.01, fourier_form="grid",
                 channel_agnostic=False,
                 layer_scale=1e-4, qk_norm=True, block_type="sequential",
                 residual="standard", laurel_rank=8, weight_decay=0.05, warmup_fraction=0.1,
                 standardize=True, max_epochs=50, batch_size=128, lr=1e-3, device="auto",
                 random_state=None, verbose=0, callbacks=None, inference_dtype="float64"):
        super().__init__(max_epochs=max_epochs, batch_size=batch_size, lr=lr, device=device,
                         random_state=random_state, verbose=verbose, callbacks=callbacks,
                         inference_dtype=inference_dtype)
        self.image_shape = image_shape
        self.patch_size = patch_size
        self.embed_dim = embed_dim
        self.depth = depth
        self.n_heads = n_heads
        self.mlp_ratio = mlp_ratio
        self.decoder_dim = decoder_dim
        self.decoder_depth = decoder_depth
        self.decoder_heads = decoder_heads
        self.mask_ratio = mask_ratio
        self.fourier_weight = fourier_weight
        self.fourier_form = fourier_form
        self.channel_agnostic = channel_agnostic
        self.layer_scale = layer_scale
        self.qk_norm = qk_norm
        self.block_type = block_type
        self.residual = residual
        self.laurel_rank = laurel_rank
        self.weight_decay = weight_decay
        self.warmup_fraction = warmup_fraction
        self.standardize = standardize

    # ------------------------------------------------------------------ checks
    def _check_widths(self):
        for name, width, heads in (("embed_dim", self.embed_dim, self.n_heads),
                                   ("decoder_dim", self.decoder_dim, self.decoder_heads)):
            if width % 4:
                raise ValueError(f"{name} must be a multiple of 4 (2-D sine-cosine positions), "
                                 f"got {width}.")
            if width % heads:
                heads_name = "n_heads" if name == "embed_dim" else "decoder_heads"
                raise ValueError(f"{heads_name}={heads} must divide {name}={width}.")
        if self.image_shape is not None:
            shape = tuple(self.image_shape)
            if len(shape) != 3 or not all(isinstance(s, Integral) and s >= 1 for s in shape):
                raise ValueError("image_shape must be None or (channels, height, width) with "
                                 f"positive ints, got {self.image_shape!r}.")

    def _images(self, X, dtype=None):
        """Rows of ``X`` (numpy) as a zero-padded ``(n, C, H', W')`` tensor on the device."""
        channels, height, width = self.image_shape_
        _, ph, pw = self.padded_shape_
        if dtype is None:
            dtype = next(self.module_.parameters()).dtype
        n = X.shape[0]
        flat = np.zeros((n, channels * height * width), dtype=np.float64)
        flat[:, : X.shape[1]] = X
        images = flat.reshape(n, channels, height, width)
        if (ph, pw) != (height, width):
            images = np.pad(images, ((0, 0), (0, 0), (0, ph - height), (0, pw - width)))
        return self._to_tensor(images, dtype=dtype)

    # ------------------------------------------------------------------ hooks
    def _build_module(self):
        channels, ph, pw = self.padded_shape_
        p = int(self.patch_size)
        return MaskedAutoencoderViT(
            channels, p, (ph // p, pw // p), embed_dim=self.embed_dim, depth=self.depth,
            n_heads=self.n_heads, mlp_ratio=self.mlp_ratio,
            channel_agnostic=self.channel_agnostic, layer_scale=self.layer_scale,
            qk_norm=self.qk_norm, block_type=self.block_type, residual=self.residual,
            laurel_rank=self.laurel_rank, decoder_dim=self.decoder_dim,
            decoder_depth=self.decoder_depth, decoder_heads=self.decoder_heads,
            standardize=self.standardize,
        )

    def _build_optimizer(self, module):
        decay = [p for p in module.parameters() if p.ndim >= 2]
        no_decay = [p for p in module.parameters() if p.ndim < 2]
        return torch.optim.AdamW(
            [{"params": decay, "weight_decay": self.weight_decay},
             {"params": no_decay, "weight_decay": 0.0}],
            lr=self.lr, betas=(0.9, 0.95),
        )

    def _extra_callbacks(self):
        total = max(int(self.max_epochs) * self._steps_per_epoch, 1)
        warmup = int(round(self.warmup_fraction * total))
        return [LRScheduler(_one_cycle_scheduler, step_every="batch", total=total,
                            warmup=warmup)]

    def _loss(self, pred, target, mask):
        channels = self.padded_shape_[0]
        return mae_loss(pred, target, mask, self.patch_size, self.fourier_weight,
                        fourier_form=self.fourier_form, grid=self.module_.encoder.grid,
                        n_modalities=channels if self.channel_agnostic else 1)

    def _get_loss(self, batch):
        (images,) = batch
        pred, target, mask = self.module_(images, self.mask_ratio, self._generator)
        loss, mse, four = self._loss(pred, target, mask)
        return {"loss": loss, "reconstruction_loss": mse, "fourier_loss": four}

    def _end_epoch(self, tensors, optimizer):
        # The learning rate the one-cycle schedule has reached after the epoch's last step.
        return {"lr": float(optimizer.param_groups[0]["lr"])}

    # -------------------------------------------------------------------- api
    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None):
        """Pretrain the masked autoencoder on the images in ``X``.

        Parameters
        ----------
        X : array-like of shape (n_samples, channels * height * width)
            Flattened images.
        y : None
            Ignored.

        Returns
        -------
        self : object
            The fitted estimator.
        """
        X = validate_data(self, X, dtype=np.float64)
        self._check_widths()
        self.image_shape_, self.padded_shape_ = _image_layout(
            X.shape[1], self.image_shape, int(self.patch_size))
        channels, ph, pw = self.padded_shape_
        p = int(self.patch_size)
        self.n_tokens_ = (ph // p) * (pw // p) * (channels if self.channel_agnostic else 1)
        # The padded float32 images (after a float64 copy) and the token embeddings of a batch.
        check_allocation(
            X.shape[0] * channels * ph * pw * 12
            + min(int(self.batch_size), X.shape[0]) * self.n_tokens_ * int(self.embed_dim) * 4,
            type(self).__name__,
            f"the padded {channels}x{ph}x{pw} images of {X.shape[0]} rows and their "
            f"{self.n_tokens_} tokens (patch_size={p}, embed_dim={self.embed_dim}, "
            f"batch_size={self.batch_size})",
            "use a patch_size that divides the image sides, fewer rows, or a smaller "
            "batch_size")
        self._init_torch_state()
        self._steps_per_epoch = -(-X.shape[0] // min(int(self.batch_size), X.shape[0]))
        images = self._images(X, torch.float32)
        self._fit_loop((images,))
        self._n_features_out = int(self.embed_dim)
        return self

    def _check_block(self, block):
        depth = self.module_.encoder.depth
        if block is None:
            return depth
        if isinstance(block, bool) or not isinstance(block, Integral) or not 1 <= block <= depth:
            raise ValueError(f"block must be None or an int in [1, {depth}], got {block!r}.")
        return int(block)

    @torch.no_grad()
    def _encode(self, X, n_blocks=None, all_blocks=False):
        encoder = self.module_.encoder
        batch_size = max(int(self.batch_size), 256)
        outputs = []
        for start in range(0, X.shape[0], batch_size):
            images = self.module_.prepare(self._images(X[start : start + batch_size]))
            streams = encoder.run_blocks(encoder.embed(images), n_blocks,
                                         return_all=all_blocks)
            if all_blocks:
                outputs.append(torch.stack([encoder.pool(s) for s in streams]).cpu())
            else:
                outputs.append(encoder.pool(streams).cpu())
        out = torch.cat(outputs, dim=-2).numpy().astype(np.float64, copy=False)
        if not np.all(np.isfinite(out)):
            raise ValueError(f"MicroscopyMAE gives non-finite features (largest |input| "
                             f"{np.abs(X).max():.3g}); rescale the images.")
        return out

    def transform(self, X, block=None):
        """Return the mean-pooled features of encoder block ``block``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Flattened images, laid out as in ``fit``.
        block : int or None, default=None
            Block number, 1 to ``depth``; None means the last block.

        Returns
        -------
        features : ndarray of shape (n_samples, embed_dim)
            Mean over the patch tokens of the final LayerNorm of the residual
            stream after ``block``.
        """
        check_is_fitted(self)
        X = validate_data(self, X, reset=False, dtype=np.float64)
        return self._encode(X, self._check_block(block))

    def transform_all_blocks(self, X):
        """Return the mean-pooled features of every block, from one forward pass.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Flattened images, laid out as in ``fit``.

        Returns
        -------
        features : ndarray of shape (depth, n_samples, embed_dim)
            ``features[b - 1]`` equals ``transform(X, block=b)``.
        """
        check_is_fitted(self)
        X = validate_data(self, X, reset=False, dtype=np.float64)
        return self._encode(X, all_blocks=True)

    @torch.no_grad()
    def score(self, X, y=None):
        """Negative MAE loss on ``X`` with masks drawn from a generator seeded by ``random_state``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Flattened images, laid out as in ``fit``.
        y : None
            Ignored.

        Returns
        -------
        score : float
            ``-L`` (higher is better), comparable across models of the same data.
        """
        check_is_fitted(self)
        X = validate_data(self, X, reset=False, dtype=np.float64)
        seed = self.random_state if isinstance(self.random_state, Integral) else 0
        generator = torch.Generator().manual_seed(int(seed))
        total, count = 0.0, 0
        for start in range(0, X.shape[0], max(int(self.batch_size), 256)):
            images = self._images(X[start : start + max(int(self.batch_size), 256)])
            pred, target, mask = self.module_(images, self.mask_ratio, generator)
            loss, _, _ = self._loss(pred, target, mask)
            total += float(loss) * images.shape[0]
            count += images.shape[0]
        return -total / count

    def trim(self, n_blocks):
        """Copy of this fitted estimator whose encoder keeps its first ``n_blocks`` blocks.

        Parameters
        ----------
        n_blocks : int
            1 to ``depth``.

        Returns
        -------
        trimmed : MicroscopyMAE
            Fitted, with ``depth=n_blocks``; its ``transform(X)`` equals this
            estimator's ``transform(X, block=n_blocks)``.
        """
        check_is_fitted(self)
        n_blocks = self._check_block(n_blocks)
        trimmed = type(self).__new__(type(self))
        trimmed.__dict__.update(self.__dict__)
        trimmed.depth = n_blocks
        encoder = self.module_.encoder
        blocks = encoder.blocks
        encoder.blocks = blocks[:n_blocks]
        try:
            trimmed.module_ = copy.deepcopy(self.module_)
        finally:
            encoder.blocks = blocks
        trimmed.history_ = list(self.history_)
        return trimmed

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.transformer_tags.preserves_dtype = ["float64"]
        return tags
