"""One configurable transformer block, shared by skpaper's transformer networks.

:class:`TransformerBlock` is multi-head self-attention followed by an MLP (or
both reading the same input, ``block_type="parallel"``), each joined to the
residual stream through a :class:`~skpaper.nn.LaurelResidual`, so
``residual="standard"`` is the plain ``x + f(x)`` and the LAuReL variants drop in
without another code path. Its options cover what the networks built on it
differ in: a causal mask (language models), pre- or post-normalisation, the MLP
width and activation, dropout, biases, LayerNorm on queries and keys, LayerScale
and the initialisation of the attention projections.
"""

from numbers import Integral, Real

import torch
from torch import nn
from torch.nn import functional as F

from ._laurel import LAUREL_VARIANTS, with_laurel

__all__ = ["BLOCK_TYPES", "LayerScale", "SelfAttention", "TransformerBlock"]

#: Layouts of a block: attention then MLP, or both on the same normalised input.
BLOCK_TYPES = ("sequential", "parallel")
_ACTIVATIONS = {"gelu": nn.GELU, "relu": nn.ReLU}
_ATTN_INITS = ("linear", "mha")


def _check_positive_int(name, value):
    if isinstance(value, bool) or not isinstance(value, Integral):
        raise TypeError(f"{name} must be an int, got {type(value).__name__} ({value!r}).")
    if value < 1:
        raise ValueError(f"{name} must be an int >= 1, got {value!r}.")
    return int(value)


def _check_dropout(dropout):
    if isinstance(dropout, bool) or not isinstance(dropout, Real) or not 0 <= dropout < 1:
        raise ValueError(f"dropout must be a float in [0, 1), got {dropout!r}.")
    return float(dropout)


class LayerScale(nn.Module):
    """Per-channel learned scale ``gamma * x`` (Touvron et al., CaiT).

    Parameters
    ----------
    dim : int
        Number of channels (the last axis).
    init_value : float
        Initial value of every entry of ``gamma``.
    """

    def __init__(self, dim, init_value):
        super().__init__()
        self.gamma = nn.Parameter(torch.full((dim,), float(init_value)))

    def forward(self, x):
        return x * self.gamma


class SelfAttention(nn.Module):
    """Multi-head self-attention with one fused query-key-value projection.

    Parameters
    ----------
    dim : int
        Width of the tokens.
    n_heads : int
        Number of heads; must divide ``dim``.
    causal : bool, default=False
        Let each token attend only to itself and earlier tokens.
    dropout : float, default=0.0
        Dropout on the attention probabilities (in training mode only).
    qkv_bias : bool, default=True
        Bias of the query-key-value projection.
    bias : bool, default=True
        Bias of the output projection.
    qk_norm : bool, default=False
        LayerNorm of the queries and of the keys, per head.
    init : {"linear", "mha"}, default="linear"
        ``"linear"``: both projections keep :class:`torch.nn.Linear`'s
        initialisation (query-key-value first). ``"mha"``: the initialisation of
        :class:`torch.nn.MultiheadAttention`, in its order of random draws: the
        output projection as a linear layer, then a Xavier-uniform
        query-key-value projection, all biases zero.

    Attributes
    ----------
    qkv : torch.nn.Linear
        Maps ``dim`` to ``3 dim``: queries, keys and values, each split in heads.
    q_norm, k_norm : torch.nn.LayerNorm or torch.nn.Identity
    proj : torch.nn.Linear
        Output projection.

    Examples
    --------
    >>> import torch
    >>> from skpaper.nn import SelfAttention
    >>> attn = SelfAttention(16, 4, causal=True)
    >>> attn(torch.randn(2, 5, 16)).shape
    torch.Size([2, 5, 16])
    """

    def __init__(self, dim, n_heads, *, causal=False, dropout=0.0, qkv_bias=True, bias=True,
                 qk_norm=False, init="linear"):
        super().__init__()
        dim = _check_positive_int("dim", dim)
        n_heads = _check_positive_int("n_heads", n_heads)
        if dim % n_heads:
            raise ValueError(f"n_heads={n_heads} must divide the embedding width dim={dim}.")
        if init not in _ATTN_INITS:
            raise ValueError(f"init must be one of {_ATTN_INITS}, got {init!r}.")
        self.n_heads = n_heads
        self.head_dim = dim // n_heads
        self.causal = bool(causal)
        self.dropout = _check_dropout(dropout)
        if init == "linear":
            self.qkv = nn.Linear(dim, 3 * dim, bias=qkv_bias)
        else:
            self.qkv = torch.nn.utils.skip_init(nn.Linear, dim, 3 * dim, bias=qkv_bias)
        self.q_norm = nn.LayerNorm(self.head_dim) if qk_norm else nn.Identity()
        self.k_norm = nn.LayerNorm(self.head_dim) if qk_norm else nn.Identity()
        self.proj = nn.Linear(dim, dim, bias=bias)
        if init == "mha":
            nn.init.xavier_uniform_(self.qkv.weight)
            with torch.no_grad():
                for layer in (self.qkv, self.proj):
                    if layer.bias is not None:
                        layer.bias.zero_()

    def forward(self, x):
        """Attend over the tokens of ``x``.

        Parameters
        ----------
        x : torch.Tensor of shape (batch, tokens, dim)
            The token embeddings.

        Returns
        -------
        out : torch.Tensor of shape (batch, tokens, dim)
            The attention output after the output projection.
        """
        batch, n_tokens, dim = x.shape
        qkv = self.qkv(x).reshape(batch, n_tokens, 3, self.n_heads, self.head_dim)
        q, k, v = qkv.permute(2, 0, 3, 1, 4).unbind(0)
        q, k = self.q_norm(q), self.k_norm(k)
        out = F.scaled_dot_product_attention(
            q, k, v, dropout_p=self.dropout if self.training else 0.0, is_causal=self.causal)
        return self.proj(out.transpose(1, 2).reshape(batch, n_tokens, dim))


def _mlp(dim, hidden, activation, bias):
    return nn.Sequential(nn.Linear(dim, hidden, bias=bias), _ACTIVATIONS[activation](),
                         nn.Linear(hidden, dim, bias=bias))


def _scale(dim, layer_scale):
    return nn.Identity() if layer_scale is None else LayerScale(dim, layer_scale)


class _ParallelBranch(nn.Module):
    """``drop(LS(attn(LN x) + mlp(LN x)))``: attention and MLP read the same normalised input."""

    def __init__(self, norm, attn, mlp, scale, drop):
        super().__init__()
        self.norm = norm
        self.attn = attn
        self.mlp = mlp
        self.scale = scale
        self.drop = drop

    def forward(self, x):
        y = self.norm(x)
        return self.drop(self.scale(self.attn(y) + self.mlp(y)))


class TransformerBlock(nn.Module):
    """A transformer block whose residual connections are LAuReL residuals.

    Parameters
    ----------
    dim : int
        Width ``D`` of the residual stream.
    n_heads : int
        Attention heads; must divide ``dim``.
    mlp_ratio : float, default=4.0
        Hidden width of the MLP as a multiple of ``dim`` (rounded, at least 1).
    d_ff : int or None, default=None
        Hidden width of the MLP; overrides ``mlp_ratio`` when given.
    activation : {"gelu", "relu"}, default="gelu"
        Activation of the MLP.
    causal : bool, default=False
        Causal self-attention (each token sees itself and earlier tokens only).
    dropout : float, default=0.0
        Dropout on the attention probabilities and on the output of each
        residual branch, in training mode.
    norm_first : bool, default=True
        Pre-normalisation, ``x + f(LN x)``; False gives the post-normalised
        ``LN(x + f(x))`` of the original transformer.
    qkv_bias : bool, default=True
        Bias of the query-key-value projection.
    bias : bool, default=True
        Biases of the attention output projection and of the MLP.
    qk_norm : bool, default=False
        LayerNorm of queries and keys, per head.
    layer_scale : float or None, default=None
        Initial LayerScale value of each branch; None disables LayerScale.
    block_type : {"sequential", "parallel"}, default="sequential"
        ``"sequential"``: attention, then the MLP, two residual connections.
        ``"parallel"``: one residual connection around ``attn(LN x) + mlp(LN x)``.
    residual : {"standard", "rw", "lr", "pa", "rw+lr", "rw+lr+pa"}, default="standard"
        Variant of every residual connection (see :class:`~skpaper.nn.LaurelResidual`).
    laurel_rank : int, default=8
        Rank of the LAuReL low-rank map (unused by ``"standard"`` and ``"rw"``),
        capped at ``dim``.
    attn_init : {"linear", "mha"}, default="linear"
        Initialisation of the attention projections (see :class:`SelfAttention`).

    Attributes
    ----------
    sublayers : torch.nn.ModuleList of LaurelBlock
        The residual branches in order; branch ``j`` is ``sublayers[j].block``, a
        ``Sequential(norm, attention or MLP, scale, dropout)`` for the sequential
        layout.
    post_norms : torch.nn.ModuleList of torch.nn.LayerNorm or None
        The norm after each residual connection when ``norm_first=False``.

    Notes
    -----
    Modules are created (and so draw their initial weights) in the order:
    every branch, then the residual connections, then the post-norms; weights
    are initialised as PyTorch does by default, so a network re-initialises
    them as it needs.

    Examples
    --------
    >>> import torch
    >>> from skpaper.nn import TransformerBlock
    >>> block = TransformerBlock(16, 4, causal=True, residual="rw+lr", laurel_rank=2)
    >>> block(torch.randn(2, 5, 16)).shape
    torch.Size([2, 5, 16])
    """

    def __init__(self, dim, n_heads, *, mlp_ratio=4.0, d_ff=None, activation="gelu",
                 causal=False, dropout=0.0, norm_first=True, qkv_bias=True, bias=True,
                 qk_norm=False, layer_scale=None, block_type="sequential", residual="standard",
                 laurel_rank=8, attn_init="linear"):
        super().__init__()
        if block_type not in BLOCK_TYPES:
            raise ValueError(f"block_type must be one of {BLOCK_TYPES}, got {block_type!r}.")
        if residual not in LAUREL_VARIANTS:
            raise ValueError(f"residual must be one of {LAUREL_VARIANTS}, got {residual!r}.")
        if activation not in _ACTIVATIONS:
            raise ValueError(
                f"activation must be one of {tuple(_ACTIVATIONS)}, got {activation!r}.")
        rank = min(_check_positive_int("laurel_rank", laurel_rank), dim)
        if d_ff is None:
            if isinstance(mlp_ratio, bool) or not isinstance(mlp_ratio, Real) or mlp_ratio <= 0:
                raise ValueError(f"mlp_ratio must be a positive float, got {mlp_ratio!r}.")
            hidden = max(int(round(dim * mlp_ratio)), 1)
        else:
            hidden = _check_positive_int("d_ff", d_ff)
        dropout = _check_dropout(dropout)

        def norm():
            return nn.LayerNorm(dim) if norm_first else nn.Identity()

        def attention():
            return SelfAttention(dim, n_heads, causal=causal, dropout=dropout, qkv_bias=qkv_bias,
                                 bias=bias, qk_norm=qk_norm, init=attn_init)

        if block_type == "parallel":
            branches = [_ParallelBranch(norm(), attention(), _mlp(dim, hidden, activation, bias),
                                        _scale(dim, layer_scale), nn.Dropout(dropout))]
        else:
            branches = [
                nn.Sequential(norm(), attention(), _scale(dim, layer_scale), nn.Dropout(dropout)),
                nn.Sequential(norm(), _mlp(dim, hidden, activation, bias),
                              _scale(dim, layer_scale), nn.Dropout(dropout)),
            ]
        self.sublayers = nn.ModuleList(with_laurel(b, dim, residual, rank=rank)
                                       for b in branches)
        self.post_norms = (None if norm_first
                           else nn.ModuleList(nn.LayerNorm(dim) for _ in branches))

    def forward(self, x, history=None):
        """Apply the block to a batch of token sequences.

        Parameters
        ----------
        x : torch.Tensor of shape (batch, tokens, dim)
            The token embeddings.
        history : list of torch.Tensor or None, default=None
            The earlier activations that the "pa" residual variants read; pass
            one list through a whole stack.

        Returns
        -------
        out : torch.Tensor of shape (batch, tokens, dim)
            The block's output.
        """
        for j, sublayer in enumerate(self.sublayers):
            x = sublayer(x, history)
            if self.post_norms is not None:
                x = self.post_norms[j](x)
        return x
