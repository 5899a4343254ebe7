"""Docstring pieces shared by the representation estimators and helpers.

Each piece fills a ``{name}`` placeholder through
:class:`~skpaper.utils._docstring.Substitution`.
"""

import textwrap

from ..utils._docstring import Substitution, torch_parameter_docs

__all__ = ["Substitution", "_SHARED_DOCS", "torch_parameter_docs"]

_SHARED_DOCS = {
    # The sparse-probing paper behind _probing.py and _probing_regimes.py.
    "probing_references": """
        References
        ----------
        .. [1] S. Kantamneni, J. Engels, S. Rajamanoharan, M. Tegmark and N. Nanda, "Are
           Sparse Autoencoders Useful? A Case Study in Sparse Probing", ICML 2025.
    """,
    "regime_random_state": """
        random_state : int, RandomState instance or None, default=None
            Seed of the random draws; pass an int for reproducible results.
    """,
    # The encoder settings of VisionTransformer, MaskedAutoencoderViT and MicroscopyMAE.
    "vit_image_layout": """
        in_chans : int
            Number of image channels (the maximum number in the channel-agnostic mode).
        patch_size : int
            Side of the square, non-overlapping patches that become tokens.
        grid : tuple of int
            ``(rows, columns)`` of patches of the images it will see.
    """,
    "vit_embed_dim": """
        embed_dim : int, default=64
            Encoder width ``D``; a multiple of 4 (2-D sine-cosine positions) and of
            ``n_heads``.
    """,
    "vit_depth": """
        depth : int, default=6
            Number of encoder blocks.
    """,
    "vit_n_heads": """
        n_heads : int, default=4
            Number of attention heads of every encoder block.
    """,
    "vit_block": """
        mlp_ratio : float, default=4.0
            Width of the hidden layer of each block's MLP, as a multiple of the block width.
    """,
    "vit_channel_agnostic": """
        channel_agnostic : bool, default=False
            Embed each channel of each patch separately with one shared projection
            (a token per patch and channel, the same position embedding for every
            channel), so that the encoder accepts any number of channels up to
            ``in_chans`` and is equivariant to their order (CA-MAE).
    """,
    "vit_layers": """
        layer_scale : float or None, default=1e-4
            Initial LayerScale value; None disables LayerScale.
        qk_norm : bool, default=True
            Normalise queries and keys per head with a LayerNorm (stabilises large ViTs;
            used by the microscopy MAEs).
        block_type : {"sequential", "parallel"}, default="sequential"
            ``"sequential"``: ``x + LS(attn(LN x))`` then ``+ LS(mlp(LN .))`` (two
            residual connections). ``"parallel"``: one residual connection around
            ``LS(attn(LN x) + mlp(LN x))``, the layout of the microscopy MAEs'
            parallel-scaling blocks.
        residual : {"standard", "rw", "lr", "pa", "rw+lr", "rw+lr+pa"}, default="standard"
            Variant of every residual connection (see :class:`~skpaper.nn.LaurelResidual`);
            ``"standard"`` is the plain ``x + f(x)``.
        laurel_rank : int, default=8
            Rank of the LAuReL low-rank map (unused by ``"standard"`` and ``"rw"``).
    """,
    "mae_decoder": """
        decoder_dim : int, default=32
            Width of the decoder (a multiple of 4 and of ``decoder_heads``).
        decoder_depth : int, default=1
            Number of decoder blocks.
        decoder_heads : int, default=4
            Number of attention heads of every decoder block.
    """,
    # The inputs of the replicate-consistency metrics of _microscopy_metrics.py.
    "replicate_parameters": """
        X : array-like of shape (n_samples, n_features)
            One embedding per well (or image).
        perturbations : array-like of shape (n_samples,)
            Perturbation of each row; rows with the same label are replicates.
        batches : array-like of shape (n_samples,) or None, default=None
            If given, only pairs from different batches count (both replicate and
            random pairs), so that a shared batch cannot make replicates look alike;
            recommended when batches exist.
        max_random_pairs : int, default=100000
            Random pairs (different perturbations) are subsampled to this many.
        random_state : int, RandomState instance or None, default=None
            Seed of the subsampling of the random pairs.
    """,
}


def _join(*names):
    """One piece made of the named pieces, in order."""
    return "\n".join(textwrap.dedent(_SHARED_DOCS[name]).strip("\n") for name in names)


#: Every parameter of :class:`VisionTransformer`, in its signature order.
_SHARED_DOCS["vit_encoder"] = _join(
    "vit_image_layout", "vit_embed_dim", "vit_depth", "vit_n_heads", "vit_block",
    "vit_channel_agnostic", "vit_layers",
)
