"""A small, reusable vision transformer for multi-channel images.

:class:`VisionTransformer` embeds ``(batch, channels, height, width)`` images
into patch tokens (one token per patch and, in the channel-agnostic mode, one
per patch and channel), adds fixed 2-D sine-cosine positions and a class
token, and runs pre-norm transformer blocks with LayerScale. Every residual
connection is a :class:`~skpaper.nn.LaurelResidual`, so ``residual="standard"``
is the plain ``x + f(x)`` and the LAuReL variants (``"rw"``, ``"lr"``,
``"rw+lr"``, ...) drop in without another code path. The encoder exposes the
output of every block (:meth:`VisionTransformer.block_features`) and can be
trimmed to its first blocks (:meth:`VisionTransformer.trim`), which is what
intermediate-block search needs.

The helpers :func:`patchify`, :func:`unpatchify`, :func:`random_masking` and
:func:`sincos_pos_embed_2d` are the pieces a masked autoencoder needs.
"""

import copy
from numbers import Real

import torch
from torch import nn

from ..nn._transformer import (
    BLOCK_TYPES,  # noqa: F401 (the MAE estimator reads it here)
    SelfAttention,
    TransformerBlock,
    _check_positive_int,
)
from ._docs import _SHARED_DOCS, Substitution

__all__ = [
    "MultiHeadSelfAttention",
    "ViTBlock",
    "VisionTransformer",
    "patchify",
    "random_masking",
    "sincos_pos_embed_2d",
    "unpatchify",
]


def _check_grid(images, patch_size):
    if images.ndim != 4:
        raise ValueError(
            "images must be 4-D (batch, channels, height, width), got shape "
            f"{tuple(images.shape)}."
        )
    height, width = images.shape[-2:]
    if height % patch_size or width % patch_size:
        raise ValueError(
            f"image height and width must be multiples of patch_size={patch_size}, "
            f"got {height}x{width}."
        )
    return height // patch_size, width // patch_size


def patchify(images, patch_size, *, channel_agnostic=False):
    """Cut images into flattened, non-overlapping square patches.

    Parameters
    ----------
    images : torch.Tensor of shape (batch, channels, height, width)
        Height and width must be multiples of ``patch_size``.
    patch_size : int
        Side of the square patches.
    channel_agnostic : bool, default=False
        If False, one token per patch holds all channels, ordered
        ``(channel, row, column)``. If True, each channel of each patch is its
        own token (channel-major: all patches of channel 0, then channel 1...).

    Returns
    -------
    tokens : torch.Tensor
        ``(batch, n_patches, channels * patch_size**2)``, or
        ``(batch, channels * n_patches, patch_size**2)`` when channel-agnostic.
        Patches are in row-major order over the ``(height, width)`` grid.

    Examples
    --------
    >>> import torch
    >>> from skpaper.representation import patchify, unpatchify
    >>> x = torch.randn(2, 3, 8, 12)
    >>> patchify(x, 4).shape
    torch.Size([2, 6, 48])
    >>> torch.equal(unpatchify(patchify(x, 4), 4, 3, (2, 3)), x)
    True
    """
    patch_size = _check_positive_int("patch_size", patch_size)
    gh, gw = _check_grid(images, patch_size)
    batch, channels = images.shape[:2]
    x = images.reshape(batch, channels, gh, patch_size, gw, patch_size)
    if channel_agnostic:
        x = x.permute(0, 1, 2, 4, 3, 5)  # B C gh gw p p
        return x.reshape(batch, channels * gh * gw, patch_size * patch_size)
    x = x.permute(0, 2, 4, 1, 3, 5)  # B gh gw C p p
    return x.reshape(batch, gh * gw, channels * patch_size * patch_size)


def unpatchify(tokens, patch_size, n_channels, grid, *, channel_agnostic=False):
    """Inverse of :func:`patchify`.

    Parameters
    ----------
    tokens : torch.Tensor
        Output of :func:`patchify` (or a reconstruction of the same shape).
    patch_size : int
        Side of the square patches.
    n_channels : int
        Number of image channels.
    grid : tuple of int
        ``(rows, columns)`` of patches.
    channel_agnostic : bool, default=False
        Whether ``tokens`` hold one channel of one patch each (channel-major), as
        :func:`patchify` gives with ``channel_agnostic=True``.

    Returns
    -------
    images : torch.Tensor of shape (batch, n_channels, rows * patch_size, columns * patch_size)
        The images, patches put back in place.

    Examples
    --------
    >>> import torch
    >>> from skpaper.representation import patchify, unpatchify
    >>> x = torch.randn(1, 2, 4, 4)
    >>> tokens = patchify(x, 2, channel_agnostic=True)
    >>> tokens.shape
    torch.Size([1, 8, 4])
    >>> torch.equal(unpatchify(tokens, 2, 2, (2, 2), channel_agnostic=True), x)
    True
    """
    patch_size = _check_positive_int("patch_size", patch_size)
    n_channels = _check_positive_int("n_channels", n_channels)
    gh, gw = (int(g) for g in grid)
    batch = tokens.shape[0]
    expected = ((n_channels * gh * gw, patch_size**2) if channel_agnostic
                else (gh * gw, n_channels * patch_size**2))
    if tuple(tokens.shape[1:]) != expected:
        raise ValueError(
            f"tokens must have shape (batch, {expected[0]}, {expected[1]}) for "
            f"patch_size={patch_size}, n_channels={n_channels}, grid={tuple(grid)}, "
            f"got {tuple(tokens.shape)}."
        )
    if channel_agnostic:
        x = tokens.reshape(batch, n_channels, gh, gw, patch_size, patch_size)
        x = x.permute(0, 1, 2, 4, 3, 5)
    else:
        x = tokens.reshape(batch, gh, gw, n_channels, patch_size, patch_size)
        x = x.permute(0, 3, 1, 4, 2, 5)
    return x.reshape(batch, n_channels, gh * patch_size, gw * patch_size)


def sincos_pos_embed_2d(dim, grid_h, grid_w, *, temperature=10000.0):
    """Fixed 2-D sine-cosine position embeddings, one row per patch.

    A quarter of the ``dim`` columns each hold ``sin`` and ``cos`` of the row
    and of the column index at geometric frequencies, as in MAE.

    Parameters
    ----------
    dim : int
        Embedding width, a multiple of 4.
    grid_h, grid_w : int
        Patch grid.
    temperature : float, default=10000.0
        Base of the geometric frequencies ``1 / temperature**(i / (dim / 4))``.

    Returns
    -------
    embed : torch.Tensor of shape (grid_h * grid_w, dim)
        Row ``r * grid_w + c`` embeds the patch in row ``r`` and column ``c``
        (float32).

    Examples
    --------
    >>> from skpaper.representation import sincos_pos_embed_2d
    >>> embed = sincos_pos_embed_2d(8, 2, 3)
    >>> tuple(embed.shape), embed[0].tolist()
    ((6, 8), [0.0, 0.0, 1.0, 1.0, 0.0, 0.0, 1.0, 1.0])
    """
    dim = _check_positive_int("dim", dim)
    if dim % 4:
        raise ValueError(f"dim must be a multiple of 4 for 2-D sine-cosine positions, got {dim}.")
    quarter = dim // 4
    freqs = 1.0 / temperature ** (torch.arange(quarter, dtype=torch.float64) / quarter)
    rows, cols = torch.meshgrid(torch.arange(grid_h, dtype=torch.float64),
                                torch.arange(grid_w, dtype=torch.float64), indexing="ij")
    angle_r = rows.reshape(-1, 1) * freqs
    angle_c = cols.reshape(-1, 1) * freqs
    embed = torch.cat([angle_r.sin(), angle_r.cos(), angle_c.sin(), angle_c.cos()], dim=1)
    return embed.to(torch.float32)


def random_masking(n_batch, n_tokens, mask_ratio, *, generator=None, device=None):
    """Draw an MAE mask that hides exactly ``round(mask_ratio * n_tokens)`` tokens per image.

    Parameters
    ----------
    n_batch, n_tokens : int
        Number of images and of tokens per image.
    mask_ratio : float in (0, 1)
        At least one token is always masked (so the loss is defined).
    generator : torch.Generator or None, default=None
        Source of the per-image permutations (CPU generator).
    device : torch.device or str or None, default=None
        Device of the returned tensors.

    Returns
    -------
    keep : torch.LongTensor of shape (n_batch, n_keep)
        Indices of the visible tokens, in increasing order.
    mask : torch.Tensor of shape (n_batch, n_tokens)
        1.0 for masked tokens, 0.0 for visible ones.
    restore : torch.LongTensor of shape (n_batch, n_tokens)
        ``restore[b, i]`` is the position of token ``i`` in the concatenation
        ``[visible tokens, masked tokens]``, to unshuffle decoder inputs.

    Examples
    --------
    >>> import torch
    >>> from skpaper.representation import random_masking
    >>> generator = torch.Generator().manual_seed(0)
    >>> keep, mask, restore = random_masking(2, 8, 0.75, generator=generator)
    >>> tuple(keep.shape), mask.sum(dim=1).tolist()
    ((2, 2), [6.0, 6.0])
    """
    if not isinstance(mask_ratio, Real) or not 0.0 < float(mask_ratio) < 1.0:
        raise ValueError(f"mask_ratio must be a float in (0, 1), got {mask_ratio!r}.")
    n_mask = min(max(int(round(float(mask_ratio) * n_tokens)), 1), n_tokens)
    n_keep = n_tokens - n_mask
    noise = torch.rand(n_batch, n_tokens, generator=generator)
    order = torch.argsort(noise, dim=1)
    keep = torch.sort(order[:, :n_keep], dim=1).values
    masked = torch.sort(order[:, n_keep:], dim=1).values
    shuffled = torch.cat([keep, masked], dim=1)
    restore = torch.argsort(shuffled, dim=1)
    mask = torch.ones(n_batch, n_tokens)
    mask.scatter_(1, keep, 0.0)
    return keep.to(device), mask.to(device), restore.to(device)


class MultiHeadSelfAttention(SelfAttention):
    """Multi-head self-attention with optional per-head LayerNorm on queries and keys.

    :class:`skpaper.nn.SelfAttention` with the defaults of the microscopy ViTs.

    Parameters
    ----------
    dim : int
        Token width.
    n_heads : int
        Number of heads; must divide ``dim``.
    qk_norm : bool, default=True
        Normalise queries and keys per head (stabilises large ViTs; used by the
        microscopy MAEs).
    qkv_bias : bool, default=False
        Whether the query-key-value projection has a bias.

    Examples
    --------
    >>> import torch
    >>> from skpaper.representation import MultiHeadSelfAttention
    >>> attn = MultiHeadSelfAttention(16, 4)
    >>> attn(torch.randn(2, 5, 16)).shape
    torch.Size([2, 5, 16])
    """

    def __init__(self, dim, n_heads, *, qk_norm=True, qkv_bias=False):
        super().__init__(dim, n_heads, qk_norm=qk_norm, qkv_bias=qkv_bias)


@Substitution(**_SHARED_DOCS)
class ViTBlock(TransformerBlock):
    """One pre-norm transformer block whose residual connections are LAuReL residuals.

    :class:`skpaper.nn.TransformerBlock` with the defaults of the microscopy
    ViTs (no query-key-value bias, LayerNorm on queries and keys, LayerScale).

    Parameters
    ----------
    dim : int
        Token width.
    n_heads : int
        Number of attention heads; must divide ``dim``.
    {vit_block}
    {vit_layers}

    Examples
    --------
    >>> import torch
    >>> from skpaper.representation import ViTBlock
    >>> block = ViTBlock(16, 4, residual="rw+lr", laurel_rank=2)
    >>> block(torch.randn(2, 5, 16)).shape
    torch.Size([2, 5, 16])
    """

    def __init__(self, dim, n_heads, *, mlp_ratio=4.0, layer_scale=1e-4, qk_norm=True,
                 block_type="sequential", residual="standard", laurel_rank=8):
        super().__init__(dim, n_heads, mlp_ratio=mlp_ratio, qkv_bias=False, qk_norm=qk_norm,
                         layer_scale=layer_scale, block_type=block_type, residual=residual,
                         laurel_rank=laurel_rank)


@Substitution(**_SHARED_DOCS)
class VisionTransformer(nn.Module):
    """ViT encoder for multi-channel images, with per-block outputs and trimming.

    Parameters
    ----------
    {vit_encoder}

    Attributes
    ----------
    patch_embed : torch.nn.Conv2d
        ``patch_size`` x ``patch_size`` convolution with stride ``patch_size``.
    cls_token : torch.nn.Parameter of shape (1, 1, D)
    pos_embed : torch.Tensor of shape (rows * columns, D)
        Fixed sine-cosine positions (a buffer).
    blocks : torch.nn.ModuleList of ViTBlock
    norm : torch.nn.LayerNorm
        Final normalisation, applied to whichever block is read out.

    Notes
    -----
    The representation of block ``b`` is ``mean_i LN(x_b)_i`` over the patch
    tokens ``i`` (the class token is left out), where ``x_b`` is the residual
    stream after block ``b`` and ``LN`` the encoder's final LayerNorm. It is
    exactly what the encoder trimmed to its first ``b`` blocks returns, so the
    block chosen by a search over blocks can be deployed by trimming.

    Examples
    --------
    >>> import torch
    >>> from skpaper.representation import VisionTransformer
    >>> vit = VisionTransformer(5, 4, (4, 4), embed_dim=32, depth=3, n_heads=4)
    >>> feats = vit.block_features(torch.randn(2, 5, 16, 16))
    >>> len(feats), tuple(feats[0].shape)
    (3, (2, 32))
    >>> torch.allclose(vit.trim(2).block_features(torch.zeros(1, 5, 16, 16))[-1],
    ...                vit.block_features(torch.zeros(1, 5, 16, 16))[1])
    True
    """

    def __init__(self, in_chans, patch_size, grid, *, embed_dim=64, depth=6, n_heads=4,
                 mlp_ratio=4.0, channel_agnostic=False, layer_scale=1e-4, qk_norm=True,
                 block_type="sequential", residual="standard", laurel_rank=8):
        super().__init__()
        self.in_chans = _check_positive_int("in_chans", in_chans)
        self.patch_size = _check_positive_int("patch_size", patch_size)
        self.grid = tuple(_check_positive_int("grid", int(g)) for g in grid)
        self.embed_dim = _check_positive_int("embed_dim", embed_dim)
        self.channel_agnostic = bool(channel_agnostic)
        _check_positive_int("depth", depth)
        self.patch_embed = nn.Conv2d(1 if channel_agnostic else in_chans, embed_dim,
                                     kernel_size=patch_size, stride=patch_size)
        self.cls_token = nn.Parameter(torch.zeros(1, 1, embed_dim))
        self.register_buffer("pos_embed", sincos_pos_embed_2d(embed_dim, *self.grid),
                             persistent=False)
        self.blocks = nn.ModuleList(
            ViTBlock(embed_dim, n_heads, mlp_ratio=mlp_ratio, layer_scale=layer_scale,
                     qk_norm=qk_norm, block_type=block_type, residual=residual,
                     laurel_rank=laurel_rank)
            for _ in range(depth)
        )
        self.norm = nn.LayerNorm(embed_dim)
        self.reset_parameters()

    @property
    def depth(self):
        """Number of blocks."""
        return len(self.blocks)

    def reset_parameters(self):
        """MAE initialisation: Xavier-uniform linear maps and patch projection, small CLS."""
        for module in self.modules():
            if isinstance(module, nn.Linear):
                nn.init.xavier_uniform_(module.weight)
                if module.bias is not None:
                    nn.init.zeros_(module.bias)
        weight = self.patch_embed.weight
        nn.init.xavier_uniform_(weight.view(weight.shape[0], -1))
        nn.init.zeros_(self.patch_embed.bias)
        nn.init.normal_(self.cls_token, std=0.02)

    def embed(self, images):
        """Embed images as patch tokens with positions, without the class token.

        Parameters
        ----------
        images : torch.Tensor of shape (batch, channels, height, width)
            Images whose patch grid is ``grid``.

        Returns
        -------
        tokens : torch.Tensor of shape (batch, tokens, D)
            Projected patches plus their sine-cosine positions.
        """
        grid = _check_grid(images, self.patch_size)
        if grid != self.grid:
            raise ValueError(
                f"images give a {grid[0]}x{grid[1]} patch grid, but this encoder was built "
                f"for {self.grid[0]}x{self.grid[1]}."
            )
        batch, channels = images.shape[:2]
        if self.channel_agnostic:
            if channels > self.in_chans:
                raise ValueError(f"images have {channels} channels, more than in_chans="
                                 f"{self.in_chans}.")
            x = self.patch_embed(images.reshape(batch * channels, 1, *images.shape[-2:]))
            x = x.flatten(2).transpose(1, 2).reshape(batch, -1, self.embed_dim)
            return x + self.pos_embed.repeat(channels, 1)
        if channels != self.in_chans:
            raise ValueError(f"images have {channels} channels, but in_chans={self.in_chans}.")
        x = self.patch_embed(images).flatten(2).transpose(1, 2)
        return x + self.pos_embed

    def run_blocks(self, tokens, n_blocks=None, *, return_all=False):
        """Prepend the class token and run the first ``n_blocks`` blocks (all by default).

        Parameters
        ----------
        tokens : torch.Tensor of shape (batch, tokens, D)
            Patch tokens, as :meth:`embed` returns them (or a subset of them).
        n_blocks : int or None, default=None
            Number of blocks to run; None runs all of them.
        return_all : bool, default=False
            Return the stream after every block instead of the last one only.

        Returns
        -------
        stream : torch.Tensor of shape (batch, 1 + tokens, D) or list of torch.Tensor
            The residual stream after the last block run (class token first), or
            the list of streams after each block when ``return_all``; the final
            norm is not applied.
        """
        n_blocks = self.depth if n_blocks is None else int(n_blocks)
        x = torch.cat([self.cls_token.expand(tokens.shape[0], -1, -1), tokens], dim=1)
        history, outputs = [], []
        for block in self.blocks[:n_blocks]:
            x = block(x, history)
            outputs.append(x)
        return outputs if return_all else x

    def forward(self, images, n_blocks=None):
        """Encode images into normalised tokens after ``n_blocks`` blocks.

        Parameters
        ----------
        images : torch.Tensor of shape (batch, channels, height, width)
            Images whose patch grid is ``grid``.
        n_blocks : int or None, default=None
            Number of blocks to run; None runs all of them.

        Returns
        -------
        tokens : torch.Tensor of shape (batch, 1 + tokens, D)
            The final LayerNorm of the residual stream, class token first.
        """
        return self.norm(self.run_blocks(self.embed(images), n_blocks))

    def pool(self, stream):
        """Pool a residual stream into one feature vector per image.

        Parameters
        ----------
        stream : torch.Tensor of shape (batch, 1 + tokens, D)
            Residual stream after a block, class token first.

        Returns
        -------
        features : torch.Tensor of shape (batch, D)
            Mean over the patch tokens of ``LN(stream)`` (class token excluded).
        """
        return self.norm(stream[:, 1:]).mean(dim=1)

    def block_features(self, images):
        """Compute the pooled features of every block in one forward pass.

        Parameters
        ----------
        images : torch.Tensor of shape (batch, channels, height, width)
            Images whose patch grid is ``grid``.

        Returns
        -------
        features : list of torch.Tensor of shape (batch, D)
            One entry per block, in order (see :meth:`pool`).
        """
        return [self.pool(s) for s in self.run_blocks(self.embed(images), return_all=True)]

    def trim(self, n_blocks):
        """Copy the encoder, keeping its first ``n_blocks`` blocks.

        Parameters
        ----------
        n_blocks : int
            Number of blocks kept, 1 to ``depth``.

        Returns
        -------
        trimmed : VisionTransformer
            A deep copy whose output is the output of block ``n_blocks`` of this
            encoder.
        """
        n_blocks = _check_positive_int("n_blocks", n_blocks)
        if n_blocks > self.depth:
            raise ValueError(f"n_blocks must be at most depth={self.depth}, got {n_blocks}.")
        trimmed = copy.deepcopy(self)
        trimmed.blocks = trimmed.blocks[:n_blocks]
        return trimmed

