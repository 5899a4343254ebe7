"""Networks of the 1D tokenizer: a TiTok-style ViT and an MLP variant.

The ViT follows TiTok's layout [1]_ as bundled with the code of Lao Beyer et
al. [2]_: the encoder reads image patches, a class token and ``n_tokens``
learnable latent tokens through pre-LN transformer blocks and projects the
latent outputs to ``token_dim``; the decoder embeds the (quantized) tokens,
appends one mask token per patch, runs transformer blocks and reads pixels out
of the mask-token outputs (TiTok's non-legacy head: a linear map to the pixels
of each patch followed by a 3x3 convolution). Sizes are ours (TiTok-L uses
width 1024 and 24 layers); images whose sides are not multiples of the patch
size are zero-padded and the decoder output is cropped.

References
----------
.. [1] Q. Yu et al., "An Image is Worth 32 Tokens for Reconstruction and
   Generation", NeurIPS 2024.
.. [2] L. Lao Beyer, T. Li, X. Chen, S. Karaman and K. He, "Highly Compressed
   Tokenizer Can Generate Without Training", ICML 2025.
"""

import math

import torch
from torch import nn
from torch.nn import functional as F

from ..nn._transformer import SelfAttention, TransformerBlock
from ._vq import VectorQuantizer

__all__ = ["Tokenizer1DNetwork", "flat_to_images", "images_to_flat"]


def flat_to_images(flat, image_shape):
    """Rows of ``(H, W, C)``-ordered pixels, shape ``(n, H*W*C)``, to ``(n, C, H, W)``."""
    height, width, channels = image_shape
    return flat.reshape(flat.shape[0], height, width, channels).permute(0, 3, 1, 2)


def images_to_flat(images):
    """Inverse of :func:`flat_to_images`."""
    return images.permute(0, 2, 3, 1).reshape(images.shape[0], -1)


def _init_weights(network):
    """TiTok's initialisation: truncated normal (std 0.02) weights, zero biases, unit LayerNorms.

    It covers the linear and convolution layers; the query-key-value
    projections of attention keep the Xavier initialisation of
    :class:`torch.nn.MultiheadAttention`, the attention of TiTok's blocks.
    """
    keep = {id(m.qkv) for m in network.modules() if isinstance(m, SelfAttention)}

    def init(module):
        if id(module) in keep:
            return
        if isinstance(module, (nn.Linear, nn.Conv2d)):
            nn.init.trunc_normal_(module.weight, std=0.02)
            if module.bias is not None:
                nn.init.zeros_(module.bias)
        elif isinstance(module, nn.LayerNorm):
            nn.init.ones_(module.weight)
            nn.init.zeros_(module.bias)

    network.apply(init)


def _block(width, n_heads):
    """Pre-LN transformer block (attention then a GELU MLP of ratio 4), as in TiTok."""
    return TransformerBlock(width, n_heads, attn_init="mha")


#: Parameter names of the blocks before they were TransformerBlocks (torch's
#: MultiheadAttention and named LayerNorms), mapped to the current names.
_OLD_BLOCK_KEYS = {
    "ln_1.": "sublayers.0.block.0.",
    "attn.in_proj_weight": "sublayers.0.block.1.qkv.weight",
    "attn.in_proj_bias": "sublayers.0.block.1.qkv.bias",
    "attn.out_proj.": "sublayers.0.block.1.proj.",
    "ln_2.": "sublayers.1.block.0.",
    "mlp.0.": "sublayers.1.block.1.0.",
    "mlp.2.": "sublayers.1.block.1.2.",
}


class _BlocksMixin:
    """Loads state dicts saved with the former block parameter names."""

    def _load_from_state_dict(self, state_dict, prefix, *args, **kwargs):
        head = prefix + "blocks."
        for key in [k for k in state_dict if k.startswith(head)]:
            index, _, rest = key[len(head):].partition(".")
            for old, new in _OLD_BLOCK_KEYS.items():
                if rest.startswith(old):
                    state_dict[f"{head}{index}.{new}{rest[len(old):]}"] = state_dict.pop(key)
                    break
        super()._load_from_state_dict(state_dict, prefix, *args, **kwargs)


class _ViTEncoder(_BlocksMixin, nn.Module):
    def __init__(self, channels, grid, patch, width, depth, n_heads, n_tokens, token_dim):
        super().__init__()
        n_patches = grid[0] * grid[1]
        scale = width**-0.5
        self.patch_embed = nn.Conv2d(channels, width, kernel_size=patch, stride=patch)
        self.class_embedding = nn.Parameter(scale * torch.randn(1, width))
        self.positional_embedding = nn.Parameter(scale * torch.randn(n_patches + 1, width))
        self.latent_tokens = nn.Parameter(scale * torch.randn(n_tokens, width))
        self.latent_token_positional_embedding = nn.Parameter(scale * torch.randn(n_tokens, width))
        self.ln_pre = nn.LayerNorm(width)
        self.blocks = nn.ModuleList(_block(width, n_heads) for _ in range(depth))
        self.ln_post = nn.LayerNorm(width)
        self.proj = nn.Linear(width, token_dim)
        self.n_tokens = n_tokens

    def forward(self, images):
        n = images.shape[0]
        x = self.patch_embed(images).flatten(2).transpose(1, 2)
        x = torch.cat([self.class_embedding.expand(n, -1, -1), x], dim=1)
        x = x + self.positional_embedding
        latents = (self.latent_tokens + self.latent_token_positional_embedding).expand(n, -1, -1)
        x = self.ln_pre(torch.cat([x, latents], dim=1))
        for block in self.blocks:
            x = block(x)
        return self.proj(self.ln_post(x[:, -self.n_tokens :]))


class _ViTDecoder(_BlocksMixin, nn.Module):
    def __init__(self, channels, grid, patch, width, depth, n_heads, n_tokens, token_dim):
        super().__init__()
        n_patches = grid[0] * grid[1]
        scale = width**-0.5
        self.grid, self.patch, self.channels = grid, patch, channels
        self.decoder_embed = nn.Linear(token_dim, width)
        self.class_embedding = nn.Parameter(scale * torch.randn(1, width))
        self.mask_token = nn.Parameter(scale * torch.randn(1, 1, width))
        self.positional_embedding = nn.Parameter(scale * torch.randn(n_patches + 1, width))
        self.latent_token_positional_embedding = nn.Parameter(scale * torch.randn(n_tokens, width))
        self.ln_pre = nn.LayerNorm(width)
        self.blocks = nn.ModuleList(_block(width, n_heads) for _ in range(depth))
        self.ln_post = nn.LayerNorm(width)
        self.to_pixels = nn.Linear(width, patch * patch * channels)
        self.conv_out = nn.Conv2d(channels, channels, kernel_size=3, padding=1)

    def forward(self, tokens):
        n = tokens.shape[0]
        n_patches = self.grid[0] * self.grid[1]
        latents = self.decoder_embed(tokens) + self.latent_token_positional_embedding
        queries = torch.cat(
            [self.class_embedding.expand(n, -1, -1), self.mask_token.expand(n, n_patches, -1)],
            dim=1,
        )
        x = self.ln_pre(torch.cat([queries + self.positional_embedding, latents], dim=1))
        for block in self.blocks:
            x = block(x)
        x = self.to_pixels(self.ln_post(x[:, 1 : 1 + n_patches]))
        gh, gw, p, c = self.grid[0], self.grid[1], self.patch, self.channels
        x = x.reshape(n, gh, gw, p, p, c).permute(0, 5, 1, 3, 2, 4).reshape(n, c, gh * p, gw * p)
        return self.conv_out(x)


def _mlp(sizes):
    layers = []
    for i in range(len(sizes) - 1):
        layers.append(nn.Linear(sizes[i], sizes[i + 1]))
        if i < len(sizes) - 2:
            layers.append(nn.GELU())
    return nn.Sequential(*layers)


class _MLPEncoder(nn.Module):
    def __init__(self, n_inputs, width, depth, n_tokens, token_dim):
        super().__init__()
        self.net = _mlp([n_inputs] + [width] * depth + [n_tokens * token_dim])
        self.n_tokens, self.token_dim = n_tokens, token_dim

    def forward(self, images):
        return self.net(images.flatten(1)).reshape(-1, self.n_tokens, self.token_dim)


class _MLPDecoder(nn.Module):
    def __init__(self, image_chw, width, depth, n_tokens, token_dim):
        super().__init__()
        self.image_chw = tuple(image_chw)
        self.net = _mlp([n_tokens * token_dim] + [width] * depth + [math.prod(image_chw)])

    def forward(self, tokens):
        return self.net(tokens.flatten(1)).reshape(-1, *self.image_chw)


class Tokenizer1DNetwork(nn.Module):
    """Encoder, vector quantizer and decoder of the 1D tokenizer.

    Parameters
    ----------
    image_shape : tuple of int
        ``(H, W, C)``.
    n_tokens, token_dim, codebook_size : int
        Latent sequence length ``T``, token dimension ``d`` and codebook size ``K``.
    architecture : {"vit", "mlp"}
    patch_size, width, depth, n_heads : int
        ViT patch size and the width/depth/heads of both networks (the MLP
        uses ``width`` and ``depth`` only).
    cosine : bool
    beta : float
        Commitment weight.
    """

    def __init__(self, image_shape, n_tokens, token_dim, codebook_size, architecture,
                 patch_size, width, depth, n_heads, cosine, beta):
        super().__init__()
        height, width_px, channels = image_shape
        self.image_shape = tuple(image_shape)
        if architecture == "vit":
            p = int(patch_size)
            grid = (math.ceil(height / p), math.ceil(width_px / p))
            self.pad = (grid[1] * p - width_px, grid[0] * p - height)
            args = (channels, grid, p, width, depth, n_heads, n_tokens, token_dim)
            self.encoder, self.decoder = _ViTEncoder(*args), _ViTDecoder(*args)
            _init_weights(self)
        else:
            # PyTorch's default (fan-in scaled) initialisation: TiTok's std-0.02 weights,
            # meant for transformers with LayerNorm, leave a plain MLP stuck at the mean image.
            self.pad = (0, 0)
            n_in = height * width_px * channels
            self.encoder = _MLPEncoder(n_in, width, depth, n_tokens, token_dim)
            self.decoder = _MLPDecoder((channels, height, width_px), width, depth, n_tokens,
                                       token_dim)
        self.quantizer = VectorQuantizer(codebook_size, token_dim, cosine=cosine, beta=beta)

    def encode(self, images):
        """Pre-quantization tokens ``z = E(x)``, shape ``(n, T, d)``."""
        if any(self.pad):
            images = F.pad(images, (0, self.pad[0], 0, self.pad[1]))
        return self.encoder(images)

    def decode(self, tokens):
        """Images ``D(z_q)``, shape ``(n, C, H, W)``."""
        out = self.decoder(tokens)
        return out[..., : self.image_shape[0], : self.image_shape[1]]

    def forward(self, images):
        """Reconstruct through the quantizer; returns ``(images, indices, vq_loss)``."""
        z_q, indices, loss = self.quantizer(self.encode(images))
        return self.decode(z_q), indices, loss
