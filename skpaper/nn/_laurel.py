"""LAuReL: learned augmented residual connections as reusable torch modules.

:class:`LaurelResidual` replaces the ``x + f(x)`` of any residual block;
:func:`with_laurel` wraps an existing block, and :class:`LaurelSequential`
threads the history of earlier activations that the "previous activations"
variants need. The module depends on torch alone, so any network (MLP, CNN,
ViT, language model) can take a ``residual=`` option built on it.
"""

import math
from numbers import Integral

import torch
from torch import nn

from ..utils._docstring import Substitution

__all__ = [
    "LAUREL_VARIANTS",
    "LaurelBlock",
    "LaurelResidual",
    "LaurelSequential",
    "laurel_param_count",
    "with_laurel",
]

#: Residual variants, from the plain connection to the full combination.
LAUREL_VARIANTS = ("standard", "rw", "lr", "pa", "rw+lr", "rw+lr+pa")
_WEIGHT_NORMS = ("softmax", "sigmoid", "none")
_LR_INITS = ("xavier", "orthogonal")
_PA_MAPS = ("lowrank", "identity")


def _check_int(name, value, low):
    if isinstance(value, bool) or not isinstance(value, Integral):
        raise TypeError(f"{name} must be an int, got {type(value).__name__} ({value!r}).")
    if value < low:
        raise ValueError(f"{name} must be an int >= {low}, got {value!r}.")
    return int(value)


def _check_choice(name, value, choices):
    if value not in choices:
        raise ValueError(f"{name} must be one of {choices}, got {value!r}.")
    return value


def _parts(variant):
    parts = set(variant.split("+"))
    return "rw" in parts, "lr" in parts, "pa" in parts


def laurel_param_count(dim, variant="rw+lr", rank=16, k_prev=3, pa_map="lowrank"):
    """Number of parameters one :class:`LaurelResidual` adds to a block.

    Parameters
    ----------
    dim : int
        Width ``D`` of the residual stream.
    variant : {"standard", "rw", "lr", "pa", "rw+lr", "rw+lr+pa"}, default="rw+lr"
    rank : int, default=16
        Rank ``r`` of the low-rank map.
    k_prev : int, default=3
        Number ``k`` of activations mixed by the "pa" variants.
    pa_map : {"lowrank", "identity"}, default="lowrank"
        Map ``h`` applied to the mixed activations.

    Returns
    -------
    n_params : int
        ``2`` (RW), ``2 r D`` (LR), ``2 r D + k`` (PA with a low-rank ``h``,
        ``k`` with the identity), summed over the parts of ``variant``.

    Examples
    --------
    >>> from skpaper.nn import laurel_param_count
    >>> laurel_param_count(64, "rw+lr", rank=8)
    1026
    """
    dim = _check_int("dim", dim, 1)
    rank = _check_int("rank", rank, 1)
    k_prev = _check_int("k_prev", k_prev, 1)
    _check_choice("variant", variant, LAUREL_VARIANTS)
    _check_choice("pa_map", pa_map, _PA_MAPS)
    rw, lr, pa = _parts(variant)
    lowrank = lr or (pa and pa_map == "lowrank")
    return 2 * rw + 2 * rank * dim * lowrank + k_prev * pa


#: Docstring pieces of the LAuReL options, shared by the builders and estimators.
_LAUREL_DOCS = {
    "variant": """
        variant : {"standard", "rw", "lr", "pa", "rw+lr", "rw+lr+pa"}, default="rw+lr"
            LAuReL variant of every skip connection (see :class:`LaurelResidual`);
            ``"standard"`` is the plain residual network.""",
    "k_prev": """
        k_prev : int, default=3
            Number of activations mixed by the PA variants.""",
    "weight_norm": """
        weight_norm : {"softmax", "sigmoid", "none"}, default="softmax"
            Normalisation of the residual weights ``(alpha, beta)``.""",
    "lr_init": """
        lr_init : {"xavier", "orthogonal"}, default="xavier"
            Initialisation of the down-projection ``A``.""",
    "pa_map": """
        pa_map : {"lowrank", "identity"}, default="lowrank"
            Map applied to the previous activations by the PA variants.""",
}


class LaurelResidual(nn.Module):
    """Learned augmented residual connection (LAuReL) for one block.

    Computes :math:`x_{i+1} = \\alpha f(x_i) + \\beta g(x_i, x_{i-1}, \\dots)`
    from the block input ``x`` (:math:`x_i`) and the block output ``fx``
    (:math:`f(x_i)`). Every variant starts as the plain residual
    :math:`x_i + f(x_i)`, to the last bit: the low-rank up-projection ``B`` is
    zero and the residual weights are normalised so that
    :math:`\\alpha = \\beta = 1` at initialisation.

    Parameters
    ----------
    dim : int
        Width ``D`` of the residual stream (the size of ``feature_dim``).
    variant : {"standard", "rw", "lr", "pa", "rw+lr", "rw+lr+pa"}, default="rw+lr"
        Which parts to learn: residual weights (RW), a low-rank map (LR),
        previous activations (PA). ``"standard"`` is ``x + fx`` with no
        parameter.
    rank : int, default=16
        Rank ``r`` of :math:`B A` with :math:`A \\in R^{r \\times D}`,
        :math:`B \\in R^{D \\times r}`.
    k_prev : int, default=3
        Number ``k`` of activations :math:`x_i, \\dots, x_{i-k+1}` mixed by PA.
    weight_norm : {"softmax", "sigmoid", "none"}, default="softmax"
        How the two RW logits become :math:`(\\alpha, \\beta)`:
        ``2 softmax`` (so :math:`\\alpha + \\beta = 2`), ``2 sigmoid`` each, or
        used as they are (initialised at 1).
    lr_init : {"xavier", "orthogonal"}, default="xavier"
        Initialisation of the down-projection ``A``: Xavier-uniform, or the
        sparse near-orthogonal pattern :math:`A_{j, d} = 1/\\sqrt{rD}` when
        :math:`d \\bmod r = j`, else 0.
    pa_map : {"lowrank", "identity"}, default="lowrank"
        Map :math:`h` of the PA terms: the low-rank :math:`B A` (shared with
        LR; the ``k`` weights :math:`\\gamma` start at 1) or the identity (the
        :math:`\\gamma` start at 0).
    feature_dim : int, default=-1
        Axis of the inputs that holds the ``D`` features (``1`` for
        ``(batch, channels, height, width)`` feature maps).

    Attributes
    ----------
    rw_logits : torch.nn.Parameter of shape (2,) or None
        Unnormalised :math:`(\\alpha, \\beta)`.
    down : torch.nn.Parameter of shape (rank, dim) or None
        :math:`A`.
    up : torch.nn.Parameter of shape (dim, rank) or None
        :math:`B`, zero at initialisation.
    gamma : torch.nn.Parameter of shape (k_prev,) or None
        :math:`\\gamma_{i,0}, \\dots, \\gamma_{i,k-1}`, the weight of
        :math:`x_{i-j}`.

    See Also
    --------
    with_laurel : Wrap an existing block.
    LaurelSequential : A stack of wrapped blocks that keeps the PA history.

    Notes
    -----
    With :math:`A, B, \\alpha, \\beta, \\gamma` as above, the variants of [1]_ are

    - RW: :math:`x_{i+1} = \\alpha f(x_i) + \\beta x_i` (2 parameters);
    - LR: :math:`x_{i+1} = f(x_i) + x_i + B A x_i` (:math:`2rD`);
    - PA: :math:`x_{i+1} = f(x_i) + x_i + \\sum_{j<k} \\gamma_{i,j} h(x_{i-j})`
      (:math:`2rD + k` with :math:`h = BA`, :math:`k` with the identity);
    - RW+LR: :math:`\\alpha f(x_i) + \\beta (x_i + B A x_i)`;
    - RW+LR+PA: :math:`\\alpha f(x_i) + \\beta (x_i + \\sum_{j<k}
      \\gamma_{i,j} B A x_{i-j})` (:math:`2 + 2rD + k`).

    Since :math:`h` is linear, the PA sum is computed as
    :math:`h(\\sum_j \\gamma_{i,j} x_{i-j})`: one low-rank product per block,
    whatever ``k``. Terms whose activation is not in ``history`` (the first
    blocks of a network) are left out.

    The paper's equation for RW+LR+PA does not say whether the identity term
    :math:`x_i` stays inside the :math:`\\beta` bracket; it is kept here
    (reconstructed), as is sharing :math:`BA` between the LR and PA terms,
    which gives the overheads 2, :math:`2rD` and :math:`2rD + k` per block.
    The initial :math:`\\gamma` (1 with a low-rank :math:`h`, whose
    :math:`B = 0` already cancels the term; 0 with the identity) is our choice.
    Plain softmax over :math:`(\\alpha, \\beta)` would start at 0.5 each and
    halve both branches; the factor 2 makes the start exactly the standard
    residual.

    References
    ----------
    .. [1] G. Menghani, R. Kumar, S. Kumar. "LAuReL: Learned Augmented Residual
       Layer". ICML 2025 (PMLR 267), arXiv:2411.07501.

    Examples
    --------
    >>> import torch
    >>> from skpaper.nn import LaurelResidual
    >>> res = LaurelResidual(8, variant="rw+lr", rank=2)
    >>> x, fx = torch.randn(4, 8), torch.randn(4, 8)
    >>> torch.equal(res(x, fx), x + fx)
    True
    >>> sum(p.numel() for p in res.parameters())
    34
    """

    def __init__(self, dim, variant="rw+lr", rank=16, k_prev=3, weight_norm="softmax",
                 lr_init="xavier", pa_map="lowrank", feature_dim=-1):
        super().__init__()
        self.dim = _check_int("dim", dim, 1)
        self.variant = _check_choice("variant", variant, LAUREL_VARIANTS)
        self.rank = _check_int("rank", rank, 1)
        self.k_prev = _check_int("k_prev", k_prev, 1)
        self.weight_norm = _check_choice("weight_norm", weight_norm, _WEIGHT_NORMS)
        self.lr_init = _check_choice("lr_init", lr_init, _LR_INITS)
        self.pa_map = _check_choice("pa_map", pa_map, _PA_MAPS)
        if isinstance(feature_dim, bool) or not isinstance(feature_dim, Integral):
            raise TypeError(f"feature_dim must be an int, got {feature_dim!r}.")
        self.feature_dim = int(feature_dim)
        self.use_rw, self.use_lr, self.use_pa = _parts(variant)
        self._lowrank = self.use_lr or (self.use_pa and pa_map == "lowrank")

        self.rw_logits = self.down = self.up = self.gamma = None
        if self.use_rw:
            start = torch.ones(2) if weight_norm == "none" else torch.zeros(2)
            self.rw_logits = nn.Parameter(start)
        if self._lowrank:
            self.down = nn.Parameter(torch.empty(self.rank, self.dim))
            self.up = nn.Parameter(torch.zeros(self.dim, self.rank))
        if self.use_pa:
            fill = 1.0 if pa_map == "lowrank" else 0.0
            self.gamma = nn.Parameter(torch.full((self.k_prev,), fill))
        self.reset_parameters()

    def reset_parameters(self):
        """Re-initialise so that the module is again the standard residual."""
        with torch.no_grad():
            if self.rw_logits is not None:
                self.rw_logits.fill_(1.0 if self.weight_norm == "none" else 0.0)
            if self.down is not None:
                if self.lr_init == "xavier":
                    nn.init.xavier_uniform_(self.down)
                else:
                    rows = torch.arange(self.rank).unsqueeze(1)
                    cols = torch.arange(self.dim).unsqueeze(0)
                    pattern = (cols % self.rank == rows).to(self.down.dtype)
                    self.down.copy_(pattern / (self.rank * self.dim) ** 0.5)
                self.up.zero_()
            if self.gamma is not None:
                self.gamma.fill_(1.0 if self.pa_map == "lowrank" else 0.0)

    def residual_weights(self):
        """Return the residual weights ``(alpha, beta)``.

        Returns
        -------
        alpha, beta : torch.Tensor or float
            0-d tensors for the RW variants (normalised by ``weight_norm``),
            else ``1.0`` each.
        """
        if self.rw_logits is None:
            return 1.0, 1.0
        if self.weight_norm == "softmax":
            weights = 2.0 * torch.softmax(self.rw_logits, dim=0)
        elif self.weight_norm == "sigmoid":
            weights = 2.0 * torch.sigmoid(self.rw_logits)
        else:
            weights = self.rw_logits
        return weights[0], weights[1]

    @torch.no_grad()
    def learned_weights(self):
        """Return the current learned weights as plain numbers.

        Returns
        -------
        weights : dict
            ``{"alpha": float, "beta": float, "gamma": list of float or None}``;
            ``gamma`` is ``None`` without the PA variants.
        """
        alpha, beta = self.residual_weights()
        gamma = None if self.gamma is None else [float(g) for g in self.gamma]
        return {"alpha": float(alpha), "beta": float(beta), "gamma": gamma}

    def _add_lowrank(self, base, z):
        """``base + B A z``, with ``A`` and ``B`` acting on ``feature_dim``."""
        axis = self.feature_dim % z.ndim
        if axis == z.ndim - 1:
            # addmm fuses the up-projection and the addition in one kernel
            flat = torch.matmul(z.reshape(-1, self.dim), self.down.t())
            return torch.addmm(base.reshape(-1, self.dim), flat, self.up.t()).view(base.shape)
        # (lead, D, trail) views of channel-first tensors avoid any transpose
        lead = math.prod(z.shape[:axis])
        shape3 = (lead, self.dim, z.numel() // (lead * self.dim))
        low = torch.matmul(self.down, z.reshape(shape3))
        out = torch.baddbmm(base.reshape(shape3), self.up.expand(lead, -1, -1), low)
        return out.view(base.shape)

    def _check_shapes(self, x, fx, history):
        if x.shape != fx.shape:
            raise ValueError(
                f"x and fx must have the same shape, got {tuple(x.shape)} and {tuple(fx.shape)}."
            )
        if x.ndim < 1 or x.shape[self.feature_dim] != self.dim:
            raise ValueError(
                f"x has {x.shape[self.feature_dim] if x.ndim else 0} features on axis "
                f"{self.feature_dim}, but LaurelResidual is expecting dim={self.dim}."
            )
        for prev in history or ():
            if prev.shape != x.shape:
                raise ValueError(
                    f"history activations must have the shape of x {tuple(x.shape)}, "
                    f"got {tuple(prev.shape)}."
                )

    def forward(self, x, fx, history=None):
        """Combine block input and output into the next activation.

        Parameters
        ----------
        x : torch.Tensor
            Block input :math:`x_i` (the projected shortcut for a block that
            changes shape), any shape with ``dim`` features on ``feature_dim``:
            ``(batch, dim)``, ``(batch, tokens, dim)``, ...
        fx : torch.Tensor of the shape of ``x``
            Block output :math:`f(x_i)`.
        history : sequence of torch.Tensor or None, default=None
            Earlier activations :math:`x_0, \\dots, x_{i-1}`, oldest first; only
            the last ``k_prev - 1`` are read, and only by the PA variants. It is
            not modified.

        Returns
        -------
        out : torch.Tensor of the shape of ``x``
            :math:`x_{i+1}`.
        """
        self._check_shapes(x, fx, history)
        if self.variant == "standard":
            return x + fx
        if self.use_pa:
            previous = list(history or ())[::-1][: self.k_prev - 1]
            mixed = self.gamma[0] * x
            for j, prev in enumerate(previous, start=1):
                mixed = torch.addcmul(mixed, self.gamma[j], prev)
            if self.pa_map == "lowrank":
                g = self._add_lowrank(x, mixed)
            else:
                g = x + mixed
                if self.use_lr:
                    g = self._add_lowrank(g, x)
        elif self.use_lr:
            g = self._add_lowrank(x, x)
        else:
            g = x
        if self.rw_logits is None:
            return fx + g
        alpha, beta = self.residual_weights()
        return torch.addcmul(alpha * fx, beta, g)

    def extra_repr(self):
        """Return the options shown in the module's ``repr``.

        Returns
        -------
        text : str
            ``dim``, ``variant``, ``rank`` and the other options.
        """
        return (f"dim={self.dim}, variant={self.variant!r}, rank={self.rank}, "
                f"k_prev={self.k_prev}, weight_norm={self.weight_norm!r}, "
                f"lr_init={self.lr_init!r}, pa_map={self.pa_map!r}")


class LaurelBlock(nn.Module):
    """A block ``f`` whose residual connection is a :class:`LaurelResidual`.

    Build it with :func:`with_laurel`. ``forward(x, history=None)`` returns
    ``residual(s, f(x), history)`` with ``s = shortcut(x)`` (``x`` when there
    is no shortcut), then appends ``s`` to ``history`` (a list owned by the
    caller) and trims it to the ``k_prev - 1`` most recent activations. A
    block with a shortcut changes the shape of the stream, so it clears
    ``history`` first.

    Parameters
    ----------
    block : torch.nn.Module
        The residual branch ``f``; ``f(x)`` must have the shape of ``s``.
    residual : LaurelResidual
        The connection combining ``s`` and ``f(x)``.
    shortcut : torch.nn.Module or None, default=None
        Projection of ``x`` for blocks that downsample or change width; the
        LAuReL map then acts on the projected shortcut.

    Examples
    --------
    >>> import torch
    >>> from torch import nn
    >>> from skpaper.nn import LaurelBlock, LaurelResidual
    >>> blk = LaurelBlock(nn.Linear(4, 4), LaurelResidual(4, "rw", rank=2))
    >>> blk(torch.zeros(2, 4)).shape
    torch.Size([2, 4])
    """

    def __init__(self, block, residual, shortcut=None):
        super().__init__()
        if not isinstance(block, nn.Module):
            raise TypeError(f"block must be a torch.nn.Module, got {type(block).__name__}.")
        if not isinstance(residual, LaurelResidual):
            raise TypeError(
                f"residual must be a LaurelResidual, got {type(residual).__name__}."
            )
        if shortcut is not None and not isinstance(shortcut, nn.Module):
            raise TypeError(
                f"shortcut must be a torch.nn.Module or None, got {type(shortcut).__name__}."
            )
        self.block = block
        self.residual = residual
        self.shortcut = shortcut

    def forward(self, x, history=None):
        """Apply the block and its LAuReL connection.

        Parameters
        ----------
        x : torch.Tensor
            Block input.
        history : list of torch.Tensor or None, default=None
            Earlier activations, oldest first, owned by the caller; the skip
            input ``s`` is appended and the list trimmed to ``k_prev - 1``.

        Returns
        -------
        out : torch.Tensor
            The next activation, of the shape of ``s``.
        """
        fx = self.block(x)
        s = x if self.shortcut is None else self.shortcut(x)
        if history is not None and self.shortcut is not None:
            history.clear()
        out = self.residual(s, fx, history)
        if history is not None:
            history.append(s)
            excess = len(history) - (self.residual.k_prev - 1)
            if excess > 0:
                del history[:excess]
        return out


@Substitution(**_LAUREL_DOCS)
def with_laurel(block, dim, variant="rw+lr", *, rank=16, k_prev=3, weight_norm="softmax",
                lr_init="xavier", pa_map="lowrank", feature_dim=-1, shortcut=None):
    """Wrap a residual branch ``block`` into a LAuReL block.

    Parameters
    ----------
    block : torch.nn.Module
        The branch ``f`` of ``x_{i+1} = f(x_i) + x_i``, without its skip.
    dim : int
        Width of the residual stream.
    {variant}
    rank : int, default=16
        Rank ``r`` of the low-rank map.
    {k_prev}
    {weight_norm}
    {lr_init}
    {pa_map}
    feature_dim : int, default=-1
        Axis of the inputs that holds the ``dim`` features.
    shortcut : torch.nn.Module or None, default=None
        Projection of the skip path for a block that changes shape.

    Returns
    -------
    wrapped : LaurelBlock
        ``block`` with a :class:`LaurelResidual` skip connection.

    Examples
    --------
    >>> import torch
    >>> from torch import nn
    >>> from skpaper.nn import with_laurel
    >>> branch = nn.Sequential(nn.LayerNorm(16), nn.Linear(16, 16), nn.GELU())
    >>> blk = with_laurel(branch, 16, "rw+lr", rank=4)
    >>> x = torch.randn(2, 5, 16)  # (batch, tokens, dim)
    >>> torch.equal(blk(x), x + branch(x))
    True
    """
    residual = LaurelResidual(dim, variant, rank=rank, k_prev=k_prev, weight_norm=weight_norm,
                              lr_init=lr_init, pa_map=pa_map, feature_dim=feature_dim)
    return LaurelBlock(block, residual, shortcut=shortcut)


class LaurelSequential(nn.Module):
    """A stack of modules that passes the PA history between LAuReL blocks.

    Each :class:`LaurelBlock` receives the list of earlier activations; any
    other module is applied as it is and clears the history (its output is no
    longer comparable with earlier activations).

    Parameters
    ----------
    *modules : torch.nn.Module
        The layers, applied in order.

    Examples
    --------
    >>> import torch
    >>> from torch import nn
    >>> from skpaper.nn import LaurelSequential, with_laurel
    >>> stack = LaurelSequential(*[with_laurel(nn.Linear(8, 8), 8, "rw+lr+pa", rank=2)
    ...                            for _ in range(4)])
    >>> stack(torch.randn(3, 8)).shape
    torch.Size([3, 8])
    """

    def __init__(self, *modules):
        super().__init__()
        for i, module in enumerate(modules):
            if not isinstance(module, nn.Module):
                raise TypeError(
                    f"LaurelSequential takes torch.nn.Module objects, got "
                    f"{type(module).__name__} at position {i}."
                )
        self.layers = nn.ModuleList(modules)

    def __len__(self):
        return len(self.layers)

    def __iter__(self):
        return iter(self.layers)

    def __getitem__(self, index):
        return self.layers[index]

    def forward(self, x):
        """Apply the layers in order, passing the PA history between blocks.

        Parameters
        ----------
        x : torch.Tensor
            Input of the first layer.

        Returns
        -------
        out : torch.Tensor
            Output of the last layer.
        """
        history = []
        for layer in self.layers:
            if isinstance(layer, LaurelBlock):
                x = layer(x, history)
            else:
                x = layer(x)
                history = []
        return x
