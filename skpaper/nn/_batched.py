"""Train several seeds of one small torch module as one batched model.

A claim that compares arms over paired seeds trains the same tiny network many
times. :func:`train_seeds` trains the K seeds as one model, so K small matrix
products become one batched product and one optimizer step serves all seeds:

- ``"grouped"``: every layer holds the K seeds' tensors stacked on a leading
  axis, and the K seeds' rows are folded into the batch axis (seed-major). Linear,
  LayerNorm, GroupNorm, Conv1d/2d/3d, Embedding and
  :class:`~skpaper.nn.LaurelResidual` compute all seeds at once with batched
  products (:func:`torch.bmm`, one grouped convolution); any other layer with
  tensors of its own runs its own forward under :func:`torch.func.vmap`; layers
  without tensors (activations, pooling, ``Flatten``, dropout) run unchanged on
  the folded batch. Before training, the grouped forward is compared with K
  per-seed forwards on perturbed weights; a module that mixes rows, reads tensor
  values into Python or draws random numbers in ``forward`` is refused.
- ``"vmap"``: the seeds' parameters stacked
  (:func:`torch.func.stack_module_state`) and one forward and backward over all of
  them with :func:`torch.func.vmap` and :func:`torch.func.functional_call`.

Each seed keeps what a separate fit would have: its own initialisation, data
order, dropout masks, optimizer state and gradient-norm clipping.

Each seed's random streams follow :class:`~skpaper.nn.BaseTorchEstimator`: from
``check_random_state(seed)`` the first draw seeds the weights, the second the
batch order, and the dropout masks come from a stream derived from the first.
"""

import contextlib
import copy
import math
from numbers import Integral, Real

import numpy as np
import torch
import torch.nn.functional as F
from sklearn.utils import check_random_state
from torch import nn
from torch.overrides import TorchFunctionMode

from ._base import _derive_seed, resolve_device
from ._laurel import LaurelResidual

__all__ = ["predict_seeds", "train_seeds"]

_OPTIMIZERS = {"adagrad": torch.optim.Adagrad, "adam": torch.optim.Adam,
               "adamw": torch.optim.AdamW, "sgd": torch.optim.SGD}
_STRATEGIES = ("auto", "grouped", "vmap", "loop")
_PREDICT_STRATEGIES = ("auto", "vmap", "loop")
#: Random dropout variants whose masks are not elementwise; modules using them train
#: one seed at a time.
_OTHER_DROPOUTS = frozenset({F.alpha_dropout, F.feature_alpha_dropout, F.dropout1d,
                             F.dropout2d, F.dropout3d})


class _NotBatchable(Exception):
    """The module or loss cannot run under ``vmap``; the message says why."""


# ---------------------------------------------------------------------------
# Validation


def _check_seeds(seeds):
    if isinstance(seeds, (str, bytes)) or not hasattr(seeds, "__len__"):
        raise TypeError(f"seeds must be a sequence of ints, got {type(seeds).__name__}.")
    seeds = list(seeds)
    if not seeds:
        raise ValueError("seeds must hold at least one seed, got an empty sequence.")
    for s in seeds:
        if isinstance(s, bool) or not isinstance(s, Integral):
            raise TypeError(f"seeds must hold ints, got {s!r} ({type(s).__name__}).")
        if not 0 <= int(s) < 2**32:
            raise ValueError(f"seeds must lie in [0, 2**32), got {s}.")
    return [int(s) for s in seeds]


def _check_int(value, name, low, allow_none=False):
    if value is None and allow_none:
        return None
    if isinstance(value, bool) or not isinstance(value, Integral) or value < low:
        kind = f"an int >= {low}" + (" or None" if allow_none else "")
        raise ValueError(f"{name} must be {kind}, got {value!r}.")
    return int(value)


def _check_positive(value, name, allow_none=False):
    if value is None and allow_none:
        return None
    if isinstance(value, bool) or not isinstance(value, Real) or not value > 0 \
            or not np.isfinite(value):
        kind = "a positive finite number" + (" or None" if allow_none else "")
        raise ValueError(f"{name} must be {kind}, got {value!r}.")
    return float(value)


def _check_options(optimizer, optimizer_kwargs, weight_decay, strategy):
    if optimizer not in _OPTIMIZERS:
        raise ValueError(f"optimizer must be one of {sorted(_OPTIMIZERS)}, got {optimizer!r}.")
    if optimizer_kwargs is None:
        optimizer_kwargs = {}
    if not isinstance(optimizer_kwargs, dict):
        raise TypeError("optimizer_kwargs must be a dict or None, got "
                        f"{type(optimizer_kwargs).__name__}.")
    reserved = {"params", "lr", "weight_decay"} & set(optimizer_kwargs)
    if reserved:
        raise ValueError(f"optimizer_kwargs must not set {sorted(reserved)}: pass lr and "
                         "weight_decay as parameters of their own.")
    if not callable(weight_decay):
        if isinstance(weight_decay, bool) or not isinstance(weight_decay, Real) \
                or not weight_decay >= 0 or not np.isfinite(weight_decay):
            raise ValueError("weight_decay must be a non-negative number or a callable "
                             f"(name, parameter) -> float, got {weight_decay!r}.")
    if strategy not in _STRATEGIES:
        raise ValueError(f"strategy must be one of {list(_STRATEGIES)}, got {strategy!r}.")
    return dict(optimizer_kwargs)


def _as_tensor(array, name, float_dtype, device):
    if isinstance(array, torch.Tensor):
        tensor = array.detach()
    else:
        array = np.asarray(array)
        if array.dtype.kind not in "biuf":
            raise TypeError(f"{name} must hold numbers, got an array of dtype {array.dtype}.")
        if not array.flags.writeable:
            array = array.copy()
        tensor = torch.as_tensor(array)
    if tensor.ndim == 0:
        raise ValueError(f"{name} must have one row per sample, got a scalar.")
    if tensor.is_floating_point():
        if not bool(torch.isfinite(tensor).all()):
            raise ValueError(f"{name} holds NaN or infinite values.")
        tensor = tensor.to(float_dtype)
    elif tensor.dtype != torch.bool:
        tensor = tensor.to(torch.long)
    return tensor.to(device)


def _prepare_data(X, y, float_dtype, device, n_seeds=None):
    """Tensors of the inputs and target and the number of rows (per seed when ``n_seeds``)."""
    inputs = tuple(X) if isinstance(X, (tuple, list)) else (X,)
    if not inputs:
        raise ValueError("X must be an array or a non-empty tuple of arrays.")
    names = ["X"] if len(inputs) == 1 else [f"X[{i}]" for i in range(len(inputs))]
    tensors = [_as_tensor(a, n, float_dtype, device) for a, n in zip(inputs, names)]
    target = None if y is None else _as_tensor(y, "y", float_dtype, device)
    named = list(zip(names, tensors)) + ([] if target is None else [("y", target)])
    axis = 0
    if n_seeds is not None:
        axis = 1
        for name, t in named:
            if t.ndim < 2 or len(t) != n_seeds:
                raise ValueError(f"With per_seed=True, {name} must have shape (n_seeds, "
                                 f"n_samples, ...) with n_seeds={n_seeds}, got "
                                 f"{tuple(t.shape)}.")
    rows = {name: t.shape[axis] for name, t in named}
    if len(set(rows.values())) != 1:
        raise ValueError(f"X and y must have the same number of rows, got {rows}.")
    n_rows = next(iter(rows.values()))
    if n_rows == 0:
        raise ValueError("X must hold at least one row, got 0.")
    return tuple(tensors), target, n_rows


# ---------------------------------------------------------------------------
# Seeds, modules and optimizers


def _seed_streams(seed):
    """(weights seed, batch-order seed, dropout seed) of ``seed``, as the torch estimators."""
    rng = check_random_state(seed)
    init_seed = int(rng.randint(2**31 - 1))
    order_seed = int(rng.randint(2**31 - 1))
    return init_seed, order_seed, _derive_seed(init_seed, 1)


def _fork_devices(device):
    return [torch.device(device).index or 0] if torch.device(device).type == "cuda" else []


def _build_modules(module_factory, streams, device):
    modules = []
    for init_seed, _, _ in streams:
        with torch.random.fork_rng(devices=_fork_devices(device)):
            torch.manual_seed(init_seed)
            module = module_factory()
        if not isinstance(module, nn.Module):
            raise TypeError("module_factory must return a torch.nn.Module, got "
                            f"{type(module).__name__}.")
        modules.append(module.to(device).train())
    if not any(p.requires_grad for p in modules[0].parameters()):
        raise ValueError("module_factory builds a module without trainable parameters.")
    layout = _layout(modules[0])
    for module in modules[1:]:
        if _layout(module) != layout:
            raise ValueError("module_factory must build the same architecture for every seed "
                             "(parameter names, shapes or dtypes differ between seeds).")
    return modules


def _layout(module):
    return [(name, tuple(t.shape), t.dtype) for name, t in
            (*module.named_parameters(), *module.named_buffers())]


def _float_dtype(module):
    for p in module.parameters():
        if p.is_floating_point():
            return p.dtype
    return torch.get_default_dtype()


def _decay_groups(named_params, reference, weight_decay):
    """Parameter groups by weight decay; ``reference`` holds one seed's parameters by name."""
    groups = {}
    for name, param in named_params:
        decay = weight_decay(name, reference[name]) if callable(weight_decay) else weight_decay
        decay = float(decay)
        if not decay >= 0:
            raise ValueError(f"weight_decay gave {decay!r} for parameter {name!r}; it must "
                             "be non-negative.")
        groups.setdefault(decay, []).append(param)
    return [{"params": params, "weight_decay": decay} for decay, params in groups.items()]


def _make_optimizer(optimizer, groups, lr, optimizer_kwargs):
    kwargs = dict(optimizer_kwargs)
    on_cpu = groups[0]["params"][0].device.type == "cpu"
    if "fused" not in kwargs and "foreach" not in kwargs and (on_cpu or optimizer != "adagrad"):
        # One kernel per tensor: 3-4x faster than torch's CPU default for these sizes.
        kwargs["fused"] = True
    return _OPTIMIZERS[optimizer](groups, lr=lr, **kwargs)


def _batch_slices(n_rows, batch_size):
    size = n_rows if batch_size is None else min(batch_size, n_rows)
    return [slice(start, start + size) for start in range(0, n_rows, size)]


def _epoch_order(generator, n_rows, batch_size):
    if batch_size is None:
        return torch.arange(n_rows)
    return torch.randperm(n_rows, generator=generator)


def _call_loss(loss_fn, output, target):
    loss = loss_fn(output) if target is None else loss_fn(output, target)
    if not isinstance(loss, torch.Tensor) or loss.numel() != 1:
        raise ValueError("loss_fn must return a scalar tensor, got "
                         f"{getattr(loss, 'shape', type(loss).__name__)}.")
    return loss.reshape(())


# ---------------------------------------------------------------------------
# Dropout outside vmap: masks drawn per seed, applied inside the batched forward


class _DropoutMode(TorchFunctionMode):
    """Intercept ``F.dropout``: record its calls, or apply masks given from outside.

    With ``masks=None`` the mode records ``(shape, dtype, p)`` of each random call and
    returns the input unchanged (a shape pass); with a list of masks it multiplies
    the i-th random call's input by the i-th mask. ``F.dropout`` draws no random
    numbers when ``p`` is 0 or 1 or outside training; those calls pass through as torch
    computes them. Other random dropout variants raise :class:`_NotBatchable`.
    """

    def __init__(self, masks=None, strict=False):
        super().__init__()
        self.masks = masks
        self.strict = strict
        self.calls = []

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if self.strict and getattr(func, "__name__", None) in _TO_PYTHON:
            raise _NotBatchable(f"the forward reads tensor values into Python "
                                f"({func.__name__}: data-dependent control flow)")
        if func in _OTHER_DROPOUTS:
            raise _NotBatchable(f"{func.__name__} is not batched over seeds")
        if func is not F.dropout:
            return func(*args, **kwargs)
        params = dict(zip(("input", "p", "training", "inplace"), args), **kwargs)
        x, p = params["input"], float(params.get("p", 0.5))
        if not params.get("training", True) or p in (0.0, 1.0) or x.numel() == 0:
            return func(*args, **kwargs)
        index = len(self.calls)
        self.calls.append((tuple(x.shape), x.dtype, p))
        if self.masks is None:
            return x
        if index >= len(self.masks) or tuple(self.masks[index].shape) != tuple(x.shape):
            raise _NotBatchable("the dropout calls differ from one batch to the next")
        return x.mul_(self.masks[index]) if params.get("inplace") else x * self.masks[index]


def _draw_masks(calls, generators, device):
    """One stacked mask per dropout call, each seed's drawn from its own generator.

    The masks are those of torch's CPU dropout kernel (Bernoulli(1 - p) noise divided
    by 1 - p), drawn in the order of the calls.
    """
    masks = []
    for shape, dtype, p in calls:
        noise = torch.empty((len(generators), *shape), dtype=dtype, device=device)
        for k, generator in enumerate(generators):
            noise[k].bernoulli_(1.0 - p, generator=generator)
        masks.append(noise.div_(1.0 - p))
    return masks


# ---------------------------------------------------------------------------
# The two strategies


def _vmap_obstacle(module):
    """Why ``module`` cannot be trained under ``vmap``, or None."""
    for name, sub in module.named_modules():
        if isinstance(sub, nn.modules.batchnorm._NormBase) and sub.track_running_stats:
            return (f"{type(sub).__name__} {name!r} updates running statistics in training "
                    "(build it with track_running_stats=False to batch the seeds)")
    return None


def _clip_stacked(grads, max_norm):
    """Clip each seed's gradient (dim 0 of every tensor) to global L2 norm ``max_norm``."""
    per_param = torch.stack([g.flatten(1).norm(dim=1) for g in grads])
    total = per_param.norm(dim=0)
    coef = (max_norm / (total + 1e-6)).clamp(max=1.0)
    for g in grads:
        g.mul_(coef.view(-1, *([1] * (g.ndim - 1))))


def _train_vmap(modules, inputs, target, n_rows, loss_fn, streams, cfg):
    device, full_batch, per_seed = cfg["device"], cfg["batch_size"] is None, cfg["per_seed"]
    # Data shared by all seeds in a full batch are not copied per seed (in_dims None).
    data_dim = None if full_batch and not per_seed else 0
    seed_rows = torch.arange(len(modules), device=device)[:, None]
    params, buffers = torch.func.stack_module_state(modules)
    trainable = {name for name, p in modules[0].named_parameters() if p.requires_grad}
    # Frozen parameters travel with the buffers: stacked per seed, never optimised.
    state = {**{n: t.detach() for n, t in params.items() if n not in trainable}, **buffers}
    params = {name: t for name, t in params.items() if name in trainable}
    optimizer = _make_optimizer(cfg["optimizer"], _decay_groups(
        params.items(), dict(modules[0].named_parameters()), cfg["weight_decay"]),
        cfg["lr"], cfg["optimizer_kwargs"])
    base = copy.deepcopy(modules[0])
    order_gens = [torch.Generator().manual_seed(s) for _, s, _ in streams]
    drop_gens = [torch.Generator(device=device).manual_seed(s) for _, _, s in streams]
    calls_by_shape = {}

    def one_seed(p, b, batch, tgt, masks):
        with _DropoutMode(masks) if masks else contextlib.nullcontext():
            output = torch.func.functional_call(base, (p, b), batch)
            return _call_loss(loss_fn, output, tgt)

    def discover(batch, tgt):
        # The dropout calls of one seed's forward on a batch of this shape.
        if data_dim == 0:
            batch = tuple(t[0] for t in batch)
            tgt = None if tgt is None else tgt[0]
        with torch.no_grad(), _DropoutMode() as mode:
            output = torch.func.functional_call(
                base, ({n: t[0] for n, t in params.items()}, {n: t[0] for n, t in
                                                               state.items()}), batch)
            _call_loss(loss_fn, output, tgt)
        return mode.calls

    batched = torch.func.vmap(one_seed, in_dims=(0, 0, data_dim,
                                                 None if target is None else data_dim, 0),
                              randomness="error")
    slices = _batch_slices(n_rows, cfg["batch_size"])
    losses = np.zeros((len(modules), cfg["epochs"]))
    for epoch in range(cfg["epochs"]):
        if not full_batch:
            orders = torch.stack([_epoch_order(g, n_rows, cfg["batch_size"])
                                  for g in order_gens]).to(device)
        total = torch.zeros(len(modules), dtype=torch.float64, device=device)
        for sl in slices:
            if full_batch:
                batch, tgt, rows = inputs, target, n_rows
            else:
                index = orders[:, sl]
                rows = index.shape[1]
                if per_seed:
                    index = (seed_rows, index)
                batch = tuple(t[index] for t in inputs)
                tgt = None if target is None else target[index]
            key = tuple(tuple(t.shape) for t in batch)
            if key not in calls_by_shape:
                calls_by_shape[key] = discover(batch, tgt)
            masks = _draw_masks(calls_by_shape[key], drop_gens, device)
            optimizer.zero_grad()
            seed_losses = batched(params, state, batch, tgt, masks)
            seed_losses.sum().backward()
            if cfg["max_grad_norm"] is not None:
                _clip_stacked([p.grad for p in params.values() if p.grad is not None],
                              cfg["max_grad_norm"])
            optimizer.step()
            total += seed_losses.detach().to(torch.float64) * rows
        losses[:, epoch] = (total / n_rows).cpu().numpy()
    with torch.no_grad():
        for k, module in enumerate(modules):
            for name, t in (*module.named_parameters(), *module.named_buffers()):
                t.copy_(params[name][k] if name in params else state[name][k])
    return losses


def _train_loop(modules, inputs, target, n_rows, loss_fn, streams, cfg):
    slices = _batch_slices(n_rows, cfg["batch_size"])
    losses = np.zeros((len(modules), cfg["epochs"]))
    for k, (module, (_, order_seed, drop_seed)) in enumerate(zip(modules, streams)):
        data = [t[k] if cfg["per_seed"] else t for t in inputs]
        labels = target[k] if cfg["per_seed"] and target is not None else target
        named = [(n, p) for n, p in module.named_parameters() if p.requires_grad]
        optimizer = _make_optimizer(cfg["optimizer"], _decay_groups(
            named, dict(named), cfg["weight_decay"]), cfg["lr"], cfg["optimizer_kwargs"])
        generator = torch.Generator().manual_seed(order_seed)
        with torch.random.fork_rng(devices=_fork_devices(cfg["device"])):
            torch.manual_seed(drop_seed)
            for epoch in range(cfg["epochs"]):
                order = _epoch_order(generator, n_rows, cfg["batch_size"]).to(cfg["device"])
                total = 0.0
                for sl in slices:
                    index = order[sl]
                    optimizer.zero_grad()
                    loss = _call_loss(loss_fn, module(*(t[index] for t in data)),
                                      None if labels is None else labels[index])
                    loss.backward()
                    if cfg["max_grad_norm"] is not None:
                        torch.nn.utils.clip_grad_norm_([p for _, p in named],
                                                       cfg["max_grad_norm"])
                    optimizer.step()
                    total += float(loss.detach()) * len(index)
                losses[k, epoch] = total / n_rows
    return losses


# ---------------------------------------------------------------------------
# Grouped layers: the K seeds' weights stacked on a leading axis, the K seeds' rows
# folded into the batch axis (seed-major: rows k*n ... (k+1)*n - 1 are seed k's)

#: Names of tensor methods whose result steers Python: data-dependent control flow,
#: which would see all seeds' rows at once in the folded batch.
_TO_PYTHON = frozenset({"__bool__", "__float__", "__int__", "__index__", "__complex__",
                        "item", "tolist", "numpy", "__array__", "is_nonzero", "equal",
                        "allclose"})


def _seed_major(x, n_seeds):
    """``(K * n, ...)`` -> ``(K, n, ...)``."""
    if x.ndim == 0 or x.shape[0] % n_seeds:
        raise _NotBatchable(f"a layer input of shape {tuple(x.shape)} does not hold "
                            f"{n_seeds} seeds' rows")
    return x.reshape(n_seeds, x.shape[0] // n_seeds, *x.shape[1:])


def _grouped_linear(module, n_seeds):
    # The stacked weight is held as (K, in, out) (see _TRANSPOSED): both the product
    # and its weight gradient are then contiguous, with no copy per step.
    def forward(x):
        rows = x.reshape(n_seeds, -1, x.shape[-1])
        out = (torch.bmm(rows, module.weight) if module.bias is None
               else torch.baddbmm(module.bias.unsqueeze(1), rows, module.weight))
        return out.reshape(*x.shape[:-1], out.shape[-1])
    return forward


def _grouped_layer_norm(module, n_seeds):
    def forward(x):
        shape = tuple(module.normalized_shape)
        y = F.layer_norm(x, shape, None, None, module.eps)
        if module.weight is None:
            return y if module.bias is None else (
                y.reshape(n_seeds, -1, *shape) + module.bias.unsqueeze(1)).reshape(x.shape)
        rows, weight = y.reshape(n_seeds, -1, *shape), module.weight.unsqueeze(1)
        out = rows * weight if module.bias is None else torch.addcmul(
            module.bias.unsqueeze(1), rows, weight)
        return out.reshape(x.shape)
    return forward


def _grouped_group_norm(module, n_seeds):
    def forward(x):
        y = F.group_norm(x, module.num_groups, None, None, module.eps)
        if module.weight is None:
            return y
        shape = (n_seeds, 1, module.num_channels) + (1,) * (x.ndim - 2)
        rows = y.reshape(n_seeds, -1, *x.shape[1:])
        out = torch.addcmul(module.bias.reshape(shape), rows, module.weight.reshape(shape))
        return out.reshape(x.shape)
    return forward


def _grouped_conv(module, n_seeds):
    conv = {1: F.conv1d, 2: F.conv2d, 3: F.conv3d}[module.weight.ndim - 2]  # before stacking

    def forward(x):
        # (K n, C, ...) -> (n, K C, ...): the K seeds become K groups of one convolution.
        per_seed = _seed_major(x, n_seeds)
        n = per_seed.shape[1]
        stacked = per_seed.transpose(0, 1).reshape(n, n_seeds * x.shape[1], *x.shape[2:])
        weight = module.weight.reshape(-1, *module.weight.shape[2:])
        bias = None if module.bias is None else module.bias.reshape(-1)
        out = conv(stacked, weight, bias, module.stride, module.padding, module.dilation,
                   module.groups * n_seeds)
        out = out.reshape(n, n_seeds, -1, *out.shape[2:]).transpose(0, 1)
        return out.reshape(n_seeds * n, *out.shape[2:])
    return forward


def _grouped_embedding(module, n_seeds):
    def forward(index):
        rows = index.reshape(n_seeds, -1)
        n = module.num_embeddings
        # Seed k's table is rows k*n ... (k+1)*n - 1 of the flattened tables; an index
        # outside [0, n) would read another seed's table, so it is sent out of range.
        bad = (rows < 0) | (rows >= n)
        offset = torch.arange(n_seeds, device=index.device).unsqueeze(1) * n
        flat = torch.where(bad, n_seeds * n, rows + offset)
        out = F.embedding(flat, module.weight.reshape(n_seeds * n, -1))
        return out.reshape(*index.shape, out.shape[-1])
    return forward


def _grouped_laurel_residual(module, n_seeds):
    """The forward of :class:`~skpaper.nn.LaurelResidual`, every seed's weights at once."""
    def per_seed(t):
        # (K, 1) per-seed scalars against the (K, rest) flattened seed blocks.
        return t.reshape(n_seeds, 1)

    def add_lowrank(base, z):
        down, up = module.down, module.up
        axis = module.feature_dim % z.ndim
        if axis == z.ndim - 1:
            low = torch.bmm(z.reshape(n_seeds, -1, module.dim), down.transpose(1, 2))
            out = torch.baddbmm(base.reshape(n_seeds, -1, module.dim), low, up.transpose(1, 2))
            return out.reshape(base.shape)
        lead = math.prod(z.shape[:axis]) // n_seeds
        shape = (n_seeds, lead, module.dim, z.numel() // (n_seeds * lead * module.dim))
        # Channel-first maps as (K, lead, D, trail): A and B act on the D axis.
        low = torch.matmul(down.unsqueeze(1), z.reshape(shape))
        return (base.reshape(shape) + torch.matmul(up.unsqueeze(1), low)).reshape(base.shape)

    def forward(x, fx, history=None):
        if module.use_pa:
            previous = list(history or ())[::-1][: module.k_prev - 1]
            flat = x.reshape(n_seeds, -1)
            mixed = module.gamma[:, 0:1] * flat
            for j, prev in enumerate(previous, start=1):
                mixed = torch.addcmul(mixed, module.gamma[:, j:j + 1], prev.reshape(n_seeds, -1))
            mixed = mixed.reshape(x.shape)
            if module.pa_map == "lowrank":
                g = add_lowrank(x, mixed)
            else:
                g = x + mixed
                if module.use_lr:
                    g = add_lowrank(g, x)
        elif module.use_lr:
            g = add_lowrank(x, x)
        else:
            g = x
        if module.rw_logits is None:
            return fx + g
        logits = module.rw_logits
        if module.weight_norm == "softmax":
            weights = 2.0 * torch.softmax(logits, dim=1)
        elif module.weight_norm == "sigmoid":
            weights = 2.0 * torch.sigmoid(logits)
        else:
            weights = logits
        out = torch.addcmul(per_seed(weights[:, 0]) * fx.reshape(n_seeds, -1),
                            per_seed(weights[:, 1]), g.reshape(n_seeds, -1))
        return out.reshape(x.shape)
    return forward


#: Parameters a grouped layer holds as the stack of their transposes.
_TRANSPOSED = {_grouped_linear: ("weight",)}


def _converter(module):
    """The grouped forward builder of ``module``'s exact type, or None."""
    kind = type(module)
    if kind is nn.Linear:
        return _grouped_linear
    if kind is LaurelResidual:
        return _grouped_laurel_residual
    if kind is nn.LayerNorm:
        return _grouped_layer_norm
    if kind is nn.GroupNorm and (not module.affine or module.bias is not None):
        return _grouped_group_norm
    if kind in (nn.Conv1d, nn.Conv2d, nn.Conv3d) and module.padding_mode == "zeros":
        return _grouped_conv
    if kind is nn.Embedding and module.padding_idx is None and module.max_norm is None \
            and not module.scale_grad_by_freq and not module.sparse:
        return _grouped_embedding
    return None


def _map_tensors(func, obj):
    if isinstance(obj, torch.Tensor):
        return func(obj)
    if isinstance(obj, (list, tuple)):
        return type(obj)(_map_tensors(func, o) for o in obj)
    if isinstance(obj, dict):
        return {k: _map_tensors(func, v) for k, v in obj.items()}
    return obj


def _in_dims(obj):
    """``vmap`` in_dims of ``obj``: 0 for its tensors (seed axis first), None elsewhere."""
    if isinstance(obj, torch.Tensor):
        return 0
    if isinstance(obj, (list, tuple)):
        return type(obj)(_in_dims(o) for o in obj)
    if isinstance(obj, dict):
        return {k: _in_dims(v) for k, v in obj.items()}
    return None


def _vmap_leaf(shell, n_seeds):
    """Forward of a module of another type: its own computation, ``vmap``-ed over seeds."""
    base = copy.deepcopy(shell)

    def one_seed(state, args, kwargs):
        return torch.func.functional_call(base, state, args, kwargs)

    def forward(*args, **kwargs):
        state = {**dict(shell.named_parameters()), **dict(shell.named_buffers())}
        args, kwargs = _map_tensors(lambda t: _seed_major(t, n_seeds), (args, kwargs))
        out = torch.func.vmap(one_seed, in_dims=(0, _in_dims(args), _in_dims(kwargs)),
                              randomness="error")(
            state, args, kwargs)
        return _map_tensors(lambda t: t.reshape(-1, *t.shape[2:]), out)
    return forward


def _grouped_model(modules):
    """One module computing all K seeds' networks on a folded batch.

    A copy of the first seed's module whose layers hold the K seeds' tensors
    stacked on a leading axis under their own names, so ``named_parameters`` of
    the result reads as one seed's with shapes ``(K, ...)`` (the transposes, for the
    names in the returned set). Layers of the types
    of :func:`_converter` get a batched forward (batched products, one grouped
    convolution); any other module with tensors of its own runs its own forward
    under ``vmap``; modules without tensors of their own are kept as they are.
    """
    n_seeds = len(modules)
    first = modules[0]
    if len(list(first.named_parameters(remove_duplicate=False))) != \
            len(list(first.named_parameters())):
        raise _NotBatchable("the module shares parameters between layers")
    shell = copy.deepcopy(first)

    tensors = [{**dict(m.named_parameters()), **dict(m.named_buffers())} for m in modules]

    def stack(name):
        return torch.stack([named[name] for named in tensors]).detach()

    def visit(prefix, sub):
        own = [*sub.named_parameters(recurse=False), *sub.named_buffers(recurse=False)]
        if not own:
            for name, child in sub.named_children():
                visit(f"{prefix}{name}.", child)
            return
        converter = _converter(sub)
        build = _vmap_leaf(sub, n_seeds) if converter is None else converter(sub, n_seeds)
        for name, tensor in [*sub.named_parameters(), *sub.named_buffers()]:
            owner_path, _, attr = name.rpartition(".")
            owner = sub.get_submodule(owner_path)
            stacked = stack(prefix + name)
            if name in _TRANSPOSED.get(converter, ()):
                stacked = stacked.transpose(1, 2).contiguous()
                transposed.add(prefix + name)
            if isinstance(tensor, nn.Parameter):
                setattr(owner, attr, nn.Parameter(stacked, requires_grad=tensor.requires_grad))
            else:
                setattr(owner, attr, stacked)
        sub.forward = build

    transposed = set()
    visit("", shell)
    return shell, transposed


def _seed_tensor(stacked, name, k, transposed):
    """Seed ``k``'s tensor ``name`` in its own layout."""
    return stacked[k].t() if name in transposed else stacked[k]


def _fold(t):
    """``(K, n, ...)`` -> ``(K * n, ...)``."""
    return t.reshape(-1, *t.shape[2:])


def _check_grouped(shell, transposed, base, batch, calls, device):
    """Compare the grouped forward with K per-seed forwards on one batch.

    ``batch`` holds the seeds' rows as ``(K, n, ...)`` tensors. The comparison
    runs on perturbed weights (so that layers starting at zero, as LAuReL's
    up-projection, take part) and on dropout masks from a generator of its own, so
    no seed's streams are touched. Raises :class:`_NotBatchable` when the outputs
    differ, when the forward turns tensors into Python values (data-dependent
    control flow), or when it draws random numbers other than dropout masks.
    """
    n_seeds, n = batch[0].shape[:2]
    gen = torch.Generator(device=device).manual_seed(0)
    state = {}
    for name, t in [*shell.named_parameters(), *shell.named_buffers()]:
        if t.is_floating_point():
            noise = torch.randn(t.shape, generator=gen, dtype=t.dtype, device=device)
            t = t.detach() + 0.1 * noise * (1.0 + t.detach().abs())
        state[name] = t
    masks = _draw_masks(calls, [torch.Generator(device=device).manual_seed(1 + k)
                                for k in range(n_seeds)], device)
    devices = _fork_devices(device)
    with torch.no_grad(), torch.random.fork_rng(devices=devices):
        def rng_states():
            return [torch.random.get_rng_state()] + [torch.cuda.get_rng_state(d)
                                                     for d in devices]

        before = rng_states()
        with _DropoutMode([_fold(m) for m in masks], strict=True):
            out = torch.func.functional_call(shell, state, tuple(_fold(t) for t in batch))
        if not all(torch.equal(a, b) for a, b in zip(before, rng_states())):
            raise _NotBatchable("the forward draws random numbers other than dropout")
        refs = []
        for k in range(n_seeds):
            with _DropoutMode([m[k] for m in masks]) if masks else contextlib.nullcontext():
                refs.append(torch.func.functional_call(
                    base, {name: _seed_tensor(t, name, k, transposed)
                           for name, t in state.items()},
                    tuple(t[k] for t in batch)))
    if not isinstance(out, torch.Tensor) or not all(isinstance(r, torch.Tensor) for r in refs):
        raise _NotBatchable("the module's output is not one tensor")
    ref = torch.stack(refs)
    if ref.ndim < 2 or ref.shape[1] != n or out.shape != (n_seeds * n, *ref.shape[2:]):
        raise _NotBatchable("the module's output does not have one row per input row")
    scale = float(ref.abs().max()) if ref.numel() else 0.0
    if not torch.allclose(out.reshape(ref.shape), ref, rtol=1e-3, atol=1e-4 * (1.0 + scale)):
        raise _NotBatchable("the grouped forward differs from the per-seed forwards (a "
                            "layer mixes rows or reads the batch axis)")


def _seed_losses(loss_fn, output, tgt):
    """Every seed's loss, ``loss_fn(output[k], tgt[k])``, as a (K,) tensor."""
    n_seeds = output.shape[0]
    if tgt is not None and output.ndim == 3 and loss_fn in (F.cross_entropy, F.mse_loss) \
            and (loss_fn is F.mse_loss) == (tgt.shape == output.shape):
        # The two common losses at their defaults: one call over all seeds' rows, then
        # each seed's mean over its own rows (the same figure up to float rounding).
        rows = loss_fn(output.reshape(-1, output.shape[-1]),
                       tgt.reshape(-1, *tgt.shape[2:]), reduction="none")
        if loss_fn is F.mse_loss:
            return rows.reshape(n_seeds, -1).mean(dim=1)
        # cross_entropy's mean leaves out the rows whose class is ignore_index (-100).
        kept = (tgt != -100).reshape(n_seeds, -1).sum(dim=1)
        return rows.reshape(n_seeds, -1).sum(dim=1) / kept
    return torch.stack([_call_loss(loss_fn, output[k], None if tgt is None else tgt[k])
                        for k in range(n_seeds)])


def _train_grouped(modules, inputs, target, n_rows, loss_fn, streams, cfg):
    device, full_batch, per_seed = cfg["device"], cfg["batch_size"] is None, cfg["per_seed"]
    n_seeds = len(modules)
    shell, transposed = _grouped_model(modules)
    base = copy.deepcopy(modules[0])
    params = {name: p for name, p in shell.named_parameters() if p.requires_grad}
    optimizer = _make_optimizer(cfg["optimizer"], _decay_groups(
        params.items(), dict(modules[0].named_parameters()), cfg["weight_decay"]),
        cfg["lr"], cfg["optimizer_kwargs"])
    order_gens = [torch.Generator().manual_seed(s) for _, s, _ in streams]
    drop_gens = [torch.Generator(device=device).manual_seed(s) for _, _, s in streams]
    seed_rows = torch.arange(n_seeds, device=device)[:, None]
    calls_by_shape = {}

    def discover(batch, tgt):
        # The dropout calls of one seed's forward on a batch of this shape.
        with torch.no_grad(), _DropoutMode() as mode:
            output = base(*(t[0] for t in batch))
            _call_loss(loss_fn, output, None if tgt is None else tgt[0])
        return mode.calls

    def seed_batch(index):
        # The rows of every seed as (K, n, ...) tensors.
        if full_batch:
            return (tuple(t if per_seed else t.expand(n_seeds, *t.shape) for t in inputs),
                    None if target is None
                    else target if per_seed else target.expand(n_seeds, *target.shape))
        if per_seed:
            index = (seed_rows, index)
        return tuple(t[index] for t in inputs), None if target is None else target[index]

    checked = False
    slices = _batch_slices(n_rows, cfg["batch_size"])
    losses = np.zeros((n_seeds, cfg["epochs"]))
    full = seed_batch(None) if full_batch else None
    folded_full = None if full is None else tuple(_fold(t) for t in full[0])
    for epoch in range(cfg["epochs"]):
        if not full_batch:
            orders = torch.stack([_epoch_order(g, n_rows, cfg["batch_size"])
                                  for g in order_gens]).to(device)
        total = torch.zeros(n_seeds, dtype=torch.float64, device=device)
        for sl in slices:
            if full_batch:
                (batch, tgt), folded, rows = full, folded_full, n_rows
            else:
                batch, tgt = seed_batch(orders[:, sl])
                folded, rows = tuple(_fold(t) for t in batch), batch[0].shape[1]
            key = tuple(tuple(t.shape) for t in batch)
            if key not in calls_by_shape:
                calls_by_shape[key] = discover(batch, tgt)
            if not checked:
                _check_grouped(shell, transposed, base, batch, calls_by_shape[key], device)
                checked = True
            masks = [_fold(m) for m in _draw_masks(calls_by_shape[key], drop_gens, device)]
            optimizer.zero_grad()
            with _DropoutMode(masks) if masks else contextlib.nullcontext():
                output = shell(*folded)
            output = output.reshape(n_seeds, rows, *output.shape[1:])
            seed_losses = _seed_losses(loss_fn, output, tgt)
            seed_losses.sum().backward()
            if cfg["max_grad_norm"] is not None:
                _clip_stacked([p.grad for p in params.values() if p.grad is not None],
                              cfg["max_grad_norm"])
            optimizer.step()
            total += seed_losses.detach().to(torch.float64) * rows
        losses[:, epoch] = (total / n_rows).cpu().numpy()
    stacked = {**dict(shell.named_parameters()), **dict(shell.named_buffers())}
    with torch.no_grad():
        for k, module in enumerate(modules):
            for name, t in (*module.named_parameters(), *module.named_buffers()):
                t.copy_(_seed_tensor(stacked[name], name, k, transposed))
    return losses


# ---------------------------------------------------------------------------
# Public API


def train_seeds(module_factory, X, y, loss_fn, seeds, *, epochs=10, batch_size=64, lr=1e-3,
                optimizer="adam", optimizer_kwargs=None, weight_decay=0.0, max_grad_norm=None,
                per_seed=False, strategy="auto", device="cpu", return_losses=False):
    """Train one module per seed, all seeds at once, as K separate fits would.

    For every seed the network is built by ``module_factory()`` under that seed,
    then trained by mini-batch gradient descent on its own shuffling of the rows,
    with its own dropout masks, its own optimizer state and its own gradient-norm
    clipping. With ``strategy="grouped"`` the K seeds' weights are stacked in
    grouped layers and one batched forward and backward serves all seeds per step;
    with ``strategy="vmap"`` the same is done by :func:`torch.func.vmap`; with
    ``strategy="loop"`` the seeds are trained one after another. All give the same
    networks up to float rounding. For the small networks of the paper claims, on
    one CPU thread of a loaded two-core machine, ``"grouped"`` ran 1.2 to 3 times
    the seeds per second of K fits in turn at K=8 (``"vmap"`` 0.8 to 2.6 times),
    and up to 4.5 times at K=16: the less arithmetic per step, the larger the gain
    (``benchmarks/bench_reproduce.py``).

    Parameters
    ----------
    module_factory : callable
        Called with no argument, returns a fresh ``torch.nn.Module``; its random
        initialisation is seeded per seed. It must build the same architecture
        every time.
    X : array-like or tensor of shape (n_samples, ...), or tuple of them
        Training inputs; a tuple is passed as ``module(*X_batch)``. Floating arrays
        are cast to the module's parameter dtype, integer arrays to int64. With
        ``per_seed=True``, of shape (n_seeds, n_samples, ...).
    y : array-like or tensor of shape (n_samples, ...) or None
        Targets, batched with the rows of ``X``; None when ``loss_fn`` takes the
        output only. With ``per_seed=True``, of shape (n_seeds, n_samples, ...).
    loss_fn : callable
        ``loss_fn(output, y_batch) -> scalar tensor`` (``loss_fn(output)`` when
        ``y`` is None), for example ``torch.nn.functional.cross_entropy``. It sees
        one seed's batch; under ``vmap`` it must avoid ``.item()`` and
        data-dependent Python branches.
    seeds : sequence of int
        One training run per seed, each in ``[0, 2**32)``. A seed gives the same
        weights and batch order as ``random_state=seed`` in the torch estimators.
    epochs : int, default=10
        Passes over the rows.
    batch_size : int or None, default=64
        Rows per step (the last step of an epoch takes the remainder). None: one
        full-batch step per epoch, rows in their given order.
    lr : float, default=1e-3
        Learning rate.
    optimizer : {"adam", "adamw", "sgd", "adagrad"}, default="adam"
        The per-seed optimizer (:class:`torch.optim.Adam`, ``AdamW``, ``SGD`` or
        ``Adagrad``).
        These act elementwise, so one optimizer over the stacked parameters is K
        separate optimizers.
    optimizer_kwargs : dict or None, default=None
        Further arguments of the optimizer (``betas``, ``momentum``, ``nesterov``...),
        not ``lr`` or ``weight_decay``. Unless it sets ``fused`` or ``foreach``, the
        fused implementation is used (``fused=True``), by both strategies; it agrees
        with torch's default implementation up to float rounding.
    weight_decay : float or callable, default=0.0
        The optimizer's weight decay, or ``weight_decay(name, parameter) -> float``
        per parameter (``parameter`` is one seed's tensor), e.g.
        ``lambda name, p: 1e-4 if p.ndim >= 2 else 0.0`` to spare biases and norms.
    max_grad_norm : float or None, default=None
        Clip each seed's gradient to this global L2 norm before the step, as
        :func:`torch.nn.utils.clip_grad_norm_` on that seed's parameters would.
    per_seed : bool, default=False
        Whether every seed has data of its own (its own split or bootstrap sample):
        ``X[k]`` and ``y[k]`` are seed ``k``'s rows, the same number for every seed.
    strategy : {"auto", "grouped", "vmap", "loop"}, default="auto"
        ``"grouped"`` folds the seeds into grouped layers (see the module notes) and
        raises when the module cannot be folded: a layer that mixes rows of the
        batch or multiplies by an input shared by all rows (a graph's adjacency),
        data-dependent control flow, random draws in ``forward`` other than
        dropout, an output without one row per input row (a ``forward`` that
        returns the loss). ``"vmap"`` batches the seeds under ``vmap`` and raises
        when the module or loss cannot run there; ``"loop"`` trains them in turn.
        ``"auto"`` tries ``"grouped"``, then ``"vmap"``, then loops, when there is
        more than one seed, and otherwise loops: modules with batch-norm running
        statistics, random operations other than elementwise dropout
        (``Dropout2d``, noise drawn in ``forward``) and data-dependent control
        flow loop.
    device : str, default="cpu"
        Torch device, or ``"auto"`` for CUDA when available.
    return_losses : bool, default=False
        Also return the per-seed mean training loss of every epoch.

    Returns
    -------
    modules : list of torch.nn.Module
        The trained networks, one per seed in the order of ``seeds``, in eval mode.
    losses : ndarray of shape (n_seeds, epochs)
        Mean training loss per epoch (the row-weighted mean over its steps); only
        when ``return_losses=True``.

    See Also
    --------
    predict_seeds : Outputs of the trained networks, batched over seeds.

    Notes
    -----
    Dropout (``torch.nn.Dropout`` and ``torch.nn.functional.dropout``) is applied
    with masks drawn outside the batched computation, each seed's from a generator
    seeded by that seed alone, in the order of the dropout calls; so a seed's
    networks do not depend on which other seeds it is trained with. On the CPU
    these masks equal, bit for bit, those torch's dropout draws in a separate fit
    whose global generator is seeded with the seed's dropout stream (what the torch
    estimators do), and the strategies agree; on CUDA torch's fused dropout kernel
    draws other masks, so there the strategies agree in distribution only.

    With ``"grouped"`` the loss is computed per seed on that seed's rows of the
    output (``torch.nn.functional.cross_entropy`` and ``mse_loss`` at their
    defaults in one call over all rows, then each seed's mean), so any loss works.
    A loss that needs more than the module's output (a penalty on the weights,
    several heads) is computed inside the module: let its ``forward`` return the
    loss, pass ``y=None`` and ``loss_fn=lambda loss: loss``; ``"grouped"`` cannot
    split such a scalar by seed, so ``"auto"`` then batches with ``vmap``. Early stopping,
    learning-rate schedules and validation splits are not supported; every seed
    runs ``epochs`` full epochs.

    Nothing global is changed: initialisation and dropout run on forked torch
    generators, batch orders on private ones, and neither the thread count nor
    the default dtype is touched.

    Examples
    --------
    >>> import torch
    >>> from torch import nn
    >>> from skpaper.datasets import load_digits_split
    >>> from skpaper.nn import predict_seeds, train_seeds
    >>> d = load_digits_split()
    >>> nets = train_seeds(lambda: nn.Sequential(nn.Linear(64, 32), nn.ReLU(),
    ...                                          nn.Linear(32, 10)),
    ...                    d.X_train, d.y_train, nn.functional.cross_entropy,
    ...                    seeds=[0, 1, 2], epochs=5, lr=3e-3)
    >>> len(nets)
    3
    >>> logits = predict_seeds(nets, d.X_test)
    >>> logits.shape == (3, len(d.X_test), 10)
    True
    >>> accuracy = (logits.argmax(axis=2) == d.y_test).mean(axis=1)
    >>> bool((accuracy > 0.8).all())
    True
    """
    if not callable(module_factory):
        raise TypeError("module_factory must be callable, got "
                        f"{type(module_factory).__name__}.")
    if not callable(loss_fn):
        raise TypeError(f"loss_fn must be callable, got {type(loss_fn).__name__}.")
    seeds = _check_seeds(seeds)
    if not isinstance(per_seed, (bool, np.bool_)):
        raise TypeError(f"per_seed must be a bool, got {type(per_seed).__name__}.")
    cfg = {
        "epochs": _check_int(epochs, "epochs", 1),
        "batch_size": _check_int(batch_size, "batch_size", 1, allow_none=True),
        "lr": _check_positive(lr, "lr"),
        "max_grad_norm": _check_positive(max_grad_norm, "max_grad_norm", allow_none=True),
        "optimizer": optimizer,
        "optimizer_kwargs": _check_options(optimizer, optimizer_kwargs, weight_decay,
                                           strategy),
        "weight_decay": weight_decay,
        "device": resolve_device(device),
        "per_seed": bool(per_seed),
    }
    streams = [_seed_streams(s) for s in seeds]
    modules = _build_modules(module_factory, streams, cfg["device"])
    inputs, target, n_rows = _prepare_data(X, y, _float_dtype(modules[0]), cfg["device"],
                                           len(seeds) if per_seed else None)

    obstacle = _vmap_obstacle(modules[0])
    if strategy in ("grouped", "vmap") and obstacle:
        raise ValueError(f"strategy={strategy!r} cannot batch this module: {obstacle}.")
    if strategy == "auto":
        # One seed gains nothing from batching but its overhead: it is trained plainly.
        chain = ["grouped", "vmap", "loop"] if len(seeds) > 1 and not obstacle else ["loop"]
    else:
        chain = [strategy]
    trainers = {"grouped": _train_grouped, "vmap": _train_vmap, "loop": _train_loop}
    for i, name in enumerate(chain):
        if i:
            # Start again from freshly built modules and fresh generators.
            modules = _build_modules(module_factory, streams, cfg["device"])
        if name == "loop":
            losses = _train_loop(modules, inputs, target, n_rows, loss_fn, streams, cfg)
            break
        try:
            losses = trainers[name](modules, inputs, target, n_rows, loss_fn, streams, cfg)
            break
        except (_NotBatchable, RuntimeError) as exc:
            if strategy != "auto":
                raise ValueError(f"strategy={name!r} cannot batch this module or loss: "
                                 f"{exc}") from exc
    modules = [m.eval() for m in modules]
    return (modules, losses) if return_losses else modules


def predict_seeds(modules, X, *, batch_size=1024, strategy="auto"):
    """Run several networks of one architecture on the same rows; stack the outputs.

    Parameters
    ----------
    modules : sequence of torch.nn.Module
        Networks of the same architecture (as :func:`train_seeds` returns). They
        are run in eval mode and left in it.
    X : array-like or tensor of shape (n_samples, ...), or tuple of them
        Inputs; floating arrays are cast to the modules' parameter dtype and moved
        to their device.
    batch_size : int, default=1024
        Rows per forward pass.
    strategy : {"auto", "vmap", "loop"}, default="auto"
        Batch the networks with :func:`torch.func.vmap`, run them in turn, or batch
        when possible.

    Returns
    -------
    outputs : ndarray of shape (n_modules, n_samples, ...)
        ``outputs[k]`` is ``modules[k](X)``.

    Examples
    --------
    >>> import numpy as np
    >>> from torch import nn
    >>> from skpaper.nn import predict_seeds, train_seeds
    >>> X = np.random.RandomState(0).normal(size=(40, 3))
    >>> nets = train_seeds(lambda: nn.Linear(3, 1), X, X[:, :1], nn.functional.mse_loss,
    ...                    seeds=[0, 1], epochs=2)
    >>> predict_seeds(nets, X).shape
    (2, 40, 1)
    """
    if isinstance(modules, nn.Module) or not hasattr(modules, "__len__"):
        raise TypeError("modules must be a sequence of torch.nn.Module, got "
                        f"{type(modules).__name__}.")
    modules = list(modules)
    if not modules or not all(isinstance(m, nn.Module) for m in modules):
        raise TypeError("modules must be a non-empty sequence of torch.nn.Module.")
    batch_size = _check_int(batch_size, "batch_size", 1)
    if strategy not in _PREDICT_STRATEGIES:
        raise ValueError(f"strategy must be one of {list(_PREDICT_STRATEGIES)}, got "
                         f"{strategy!r}.")
    first = next(iter(modules[0].parameters()), None)
    device = first.device if first is not None else torch.device("cpu")
    inputs, _, n_rows = _prepare_data(X, None, _float_dtype(modules[0]), device)
    same = all(_layout(m) == _layout(modules[0]) for m in modules[1:])
    if strategy == "vmap" and not same:
        raise ValueError("strategy='vmap' needs modules of one architecture.")
    for m in modules:
        m.eval()
    outputs = None
    with torch.no_grad():
        if strategy != "loop" and same:
            try:
                params, buffers = torch.func.stack_module_state(modules)
                base = copy.deepcopy(modules[0])
                run = torch.func.vmap(
                    lambda p, b, batch: torch.func.functional_call(base, (p, b), batch),
                    in_dims=(0, 0, None), randomness="error")
                outputs = torch.cat([run(params, buffers, tuple(t[sl] for t in inputs))
                                     for sl in _batch_slices(n_rows, batch_size)], dim=1)
            except RuntimeError as exc:
                if strategy == "vmap":
                    raise ValueError(f"strategy='vmap' cannot batch these modules: {exc}"
                                     ) from exc
        if outputs is None:
            outputs = torch.stack([torch.cat([m(*(t[sl] for t in inputs))
                                              for sl in _batch_slices(n_rows, batch_size)])
                                   for m in modules])
    return outputs.cpu().numpy()
