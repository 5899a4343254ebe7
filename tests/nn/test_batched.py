"""train_seeds / predict_seeds: per-seed results equal K separate fits.

The reference of every equivalence test is a plain torch loop written here, one
seed at a time: the module built under the seed's weight seed, batches in the
order of ``torch.randperm`` on the seed's order generator, dropout from the global
generator seeded with the seed's dropout stream, torch's default optimizer
implementation. Tolerance: 1e-4 (absolute) on every parameter after all steps;
the observed gaps are about 1e-7 (float rounding of the batched kernels and of the
fused optimizer).
"""

import numpy as np
import pytest
import torch
from torch import nn

from skpaper.nn import LaurelMLPClassifier, make_laurel_mlp, predict_seeds, train_seeds

ATOL = 1e-4
SEEDS = [0, 7, 123]


def _streams(seed):
    rng = np.random.RandomState(seed)
    init, order = int(rng.randint(2**31 - 1)), int(rng.randint(2**31 - 1))
    dropout = int(np.random.SeedSequence([init, 1]).generate_state(1)[0])
    return init, order, dropout


def _reference_fit(factory, X, y, loss_fn, seed, *, epochs, batch_size, lr, optimizer="adam",
                   optimizer_kwargs=None, weight_decay=0.0, max_grad_norm=None):
    init, order, dropout = _streams(seed)
    with torch.random.fork_rng():
        torch.manual_seed(init)
        module = factory()
    named = list(module.named_parameters())
    decays = {n: (weight_decay(n, p) if callable(weight_decay) else weight_decay)
              for n, p in named}
    groups = [{"params": [p for n, p in named if decays[n] == d], "weight_decay": d}
              for d in sorted(set(decays.values()))]
    cls = {"adam": torch.optim.Adam, "adamw": torch.optim.AdamW, "sgd": torch.optim.SGD,
           "adagrad": torch.optim.Adagrad}
    opt = cls[optimizer](groups, lr=lr, **(optimizer_kwargs or {}))
    X = torch.as_tensor(X, dtype=torch.float32)
    y = torch.as_tensor(y, dtype=torch.long if np.asarray(y).dtype.kind in "iu"
                        else torch.float32)
    generator = torch.Generator().manual_seed(order)
    n = len(X)
    with torch.random.fork_rng():
        torch.manual_seed(dropout)
        module.train()
        for _ in range(epochs):
            perm = (torch.arange(n) if batch_size is None
                    else torch.randperm(n, generator=generator))
            size = n if batch_size is None else batch_size
            for start in range(0, n, size):
                idx = perm[start:start + size]
                opt.zero_grad()
                loss_fn(module(X[idx]), y[idx]).backward()
                if max_grad_norm is not None:
                    nn.utils.clip_grad_norm_(module.parameters(), max_grad_norm)
                opt.step()
    return module


def _max_gap(a, b):
    sa, sb = a.state_dict(), b.state_dict()
    assert sa.keys() == sb.keys()
    return max(float((sa[k].double() - sb[k].double()).abs().max()) for k in sa)


def _assert_matches(modules, factory, X, y, loss_fn, seeds, **kwargs):
    for module, seed in zip(modules, seeds):
        ref = _reference_fit(factory, X, y, loss_fn, seed, **kwargs)
        assert _max_gap(module, ref) < ATOL


@pytest.fixture(scope="module")
def tabular():
    rng = np.random.RandomState(0)
    X = rng.normal(size=(90, 8)).astype(np.float32)
    y = (X[:, 0] + X[:, 1] ** 2 > 0.8).astype(np.int64) + (X[:, 2] > 0.5)
    return X, y


@pytest.fixture(scope="module")
def images():
    rng = np.random.RandomState(1)
    X = rng.normal(size=(40, 1, 6, 6)).astype(np.float32)
    y = (X[:, 0, :3].mean(axis=(1, 2)) > 0).astype(np.int64)
    return X, y


def _mlp(dropout=0.0):
    def factory():
        return nn.Sequential(nn.Linear(8, 16), nn.Tanh(), nn.Dropout(dropout),
                             nn.Linear(16, 16), nn.ReLU(), nn.Linear(16, 3))
    return factory


def _convnet():
    return nn.Sequential(nn.Conv2d(1, 4, 3, padding=1), nn.ReLU(), nn.Conv2d(4, 4, 3),
                         nn.ReLU(), nn.AdaptiveAvgPool2d(2), nn.Flatten(), nn.Linear(16, 2))


class _FunctionalDropout(nn.Module):
    """Dropout through ``torch.nn.functional.dropout`` called twice in ``forward``."""

    rates = (0.3, 0.1)

    def __init__(self):
        super().__init__()
        self.a, self.b = nn.Linear(8, 12), nn.Linear(12, 3)

    def forward(self, x):
        h = nn.functional.dropout(torch.relu(self.a(x)), self.rates[0], self.training)
        return self.b(nn.functional.dropout(h, self.rates[1], self.training))


class _NoDropout(_FunctionalDropout):
    rates = (0.0, 0.0)


CE = nn.functional.cross_entropy
BATCHED = pytest.mark.parametrize("strategy", ["grouped", "vmap"])


@pytest.mark.parametrize("strategy", ["grouped", "vmap", "loop"])
def test_mlp_matches_separate_fits(tabular, strategy):
    X, y = tabular
    kwargs = dict(epochs=3, batch_size=32, lr=1e-2)
    nets = train_seeds(_mlp(), X, y, CE, SEEDS, strategy=strategy, **kwargs)
    _assert_matches(nets, _mlp(), X, y, CE, SEEDS, **kwargs)


@pytest.mark.parametrize("factory, without", [(_mlp(0.4), _mlp()),
                                               (_FunctionalDropout, _NoDropout)],
                         ids=["module", "functional"])
@BATCHED
def test_dropout_matches_separate_fits(tabular, factory, without, strategy):
    X, y = tabular
    kwargs = dict(epochs=3, batch_size=32, lr=1e-2)
    nets = train_seeds(factory, X, y, CE, SEEDS, strategy=strategy, **kwargs)
    _assert_matches(nets, factory, X, y, CE, SEEDS, **kwargs)
    # The masks matter: the same fits without dropout end elsewhere.
    assert _max_gap(nets[0], _reference_fit(without, X, y, CE, SEEDS[0], **kwargs)) > 1e-3


def test_dropout_stream_depends_on_own_seed_only(tabular):
    X, y = tabular
    kwargs = dict(epochs=2, batch_size=20, lr=1e-2)
    alone = train_seeds(_mlp(0.5), X, y, CE, [7], **kwargs)[0]
    together = train_seeds(_mlp(0.5), X, y, CE, [3, 7, 11, 12], strategy="vmap", **kwargs)[1]
    assert _max_gap(alone, together) < 1e-5


@BATCHED
def test_adamw_decay_groups_and_per_seed_clipping(tabular, strategy):
    X, y = tabular
    kwargs = dict(epochs=3, batch_size=30, lr=5e-3, optimizer="adamw",
                  weight_decay=lambda name, p: 0.1 if p.ndim >= 2 else 0.0, max_grad_norm=0.05)
    nets = train_seeds(_mlp(0.2), X, y, CE, SEEDS, strategy=strategy, **kwargs)
    _assert_matches(nets, _mlp(0.2), X, y, CE, SEEDS, **kwargs)
    # Clipping binds at this norm: without it the seeds end elsewhere.
    unclipped = _reference_fit(_mlp(0.2), X, y, CE, SEEDS[0], **{**kwargs, "max_grad_norm": None})
    assert _max_gap(nets[0], unclipped) > 1e-3


@BATCHED
def test_convnet_sgd_momentum_matches(images, strategy):
    X, y = images
    kwargs = dict(epochs=3, batch_size=16, lr=0.05, optimizer="sgd",
                  optimizer_kwargs={"momentum": 0.9, "nesterov": True}, weight_decay=1e-3)
    nets = train_seeds(_convnet, X, y, CE, SEEDS, strategy=strategy, **kwargs)
    _assert_matches(nets, _convnet, X, y, CE, SEEDS, **kwargs)


@BATCHED
@pytest.mark.parametrize("batch_size", [25, None])
def test_per_seed_data(tabular, batch_size, strategy):
    X, y = tabular
    rows = [np.random.RandomState(s).choice(len(X), 60, replace=False) for s in SEEDS]
    Xs, ys = np.stack([X[r] for r in rows]), np.stack([y[r] for r in rows])
    kwargs = dict(epochs=3, batch_size=batch_size, lr=0.05, optimizer="adagrad")
    nets = train_seeds(_mlp(0.2), Xs, ys, CE, SEEDS, per_seed=True, strategy=strategy,
                       **kwargs)
    for net, seed, Xk, yk in zip(nets, SEEDS, Xs, ys):
        assert _max_gap(net, _reference_fit(_mlp(0.2), Xk, yk, CE, seed, **kwargs)) < ATOL
    looped = train_seeds(_mlp(0.2), Xs, ys, CE, SEEDS, per_seed=True, strategy="loop", **kwargs)
    assert max(_max_gap(a, b) for a, b in zip(nets, looped)) < ATOL


@BATCHED
def test_full_batch_deep_linear(tabular, strategy):
    X, _ = tabular
    target = (X @ np.linspace(-1, 1, 8)[:, None]).astype(np.float32)

    def deep_linear():
        return nn.Sequential(nn.Linear(8, 8, bias=False), nn.Linear(8, 8, bias=False),
                             nn.Linear(8, 1, bias=False))

    kwargs = dict(epochs=25, batch_size=None, lr=0.05, optimizer="sgd")
    nets, losses = train_seeds(deep_linear, X, target, nn.functional.mse_loss, SEEDS,
                               return_losses=True, strategy=strategy, **kwargs)
    _assert_matches(nets, deep_linear, X, target, nn.functional.mse_loss, SEEDS, **kwargs)
    assert losses.shape == (3, 25)
    assert np.all(losses[:, -1] < losses[:, 0])


@BATCHED
def test_same_fits_as_laurel_estimator(strategy):
    from skpaper.datasets import load_digits_split

    d = load_digits_split(test_size=0.5, random_state=0)
    X, y = d.X_train[:200], d.y_train[:200]
    nets = train_seeds(lambda: make_laurel_mlp(64, 10, 16, 2, "rw+lr", rank=4), X, y, CE,
                       [5, 6], epochs=2, batch_size=64, lr=3e-3, optimizer="adamw",
                       weight_decay=lambda name, p: 1e-4 if p.ndim >= 2 else 0.0,
                       strategy=strategy)
    for net, seed in zip(nets, [5, 6]):
        est = LaurelMLPClassifier(n_blocks=2, width=16, rank=4, max_epochs=2, batch_size=64,
                                  lr=3e-3, random_state=seed, device="cpu").fit(X, y)
        assert _max_gap(net, est.module_) < ATOL


class _Running(nn.Module):
    def __init__(self):
        super().__init__()
        # No bias before the norm: its gradient is zero up to rounding, which Adam's
        # normalisation would blow up into implementation-dependent steps.
        self.a, self.bn, self.b = nn.Linear(8, 6, bias=False), nn.BatchNorm1d(6), nn.Linear(6, 3)

    def forward(self, x):
        return self.b(torch.relu(self.bn(self.a(x))))


class _Branching(nn.Module):
    def __init__(self):
        super().__init__()
        self.a, self.b = nn.Linear(8, 3), nn.Linear(8, 3)

    def forward(self, x):
        return self.a(x) if float(x.sum()) > 0 else self.b(x)


def _channel_dropout():
    return nn.Sequential(nn.Conv2d(1, 3, 3), nn.Dropout2d(0.3), nn.Flatten(), nn.Linear(48, 2))


@pytest.mark.parametrize("factory, data, match", [
    (_Running, "tabular", "running statistics"),
    (_Branching, "tabular", "cannot batch"),
    (_channel_dropout, "images", "dropout2d"),
])
def test_fallback_to_loop(factory, data, match, request):
    X, y = request.getfixturevalue(data)
    kwargs = dict(epochs=2, batch_size=16, lr=1e-2)
    nets = train_seeds(factory, X, y, CE, SEEDS[:2], **kwargs)
    _assert_matches(nets, factory, X, y, CE, SEEDS[:2], **kwargs)
    with pytest.raises(ValueError, match=match):
        train_seeds(factory, X, y, CE, SEEDS[:2], strategy="vmap", **kwargs)


class _RowMixing(nn.Module):
    """Centres each batch on its mean row: mixes rows, so the seeds' rows must not meet."""

    def __init__(self):
        super().__init__()
        self.a = nn.Linear(8, 3)

    def forward(self, x):
        return self.a(x - x.mean(dim=0))


class _Noisy(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Linear(8, 3)

    def forward(self, x):
        return self.a(x + 0.1 * torch.randn_like(x)) if self.training else self.a(x)


@pytest.mark.parametrize("factory, match", [
    (_RowMixing, "differs from the per-seed forwards"),
    (_Branching, "data-dependent control flow"),
    (_Noisy, "random numbers"),
    (_Running, "running statistics"),
])
def test_grouped_refuses_what_it_cannot_fold(tabular, factory, match):
    X, y = tabular
    kwargs = dict(epochs=2, batch_size=16, lr=1e-2)
    with pytest.raises(ValueError, match=match):
        train_seeds(factory, X, y, CE, SEEDS[:2], strategy="grouped", **kwargs)
    if factory is not _Noisy:
        # "auto" then trains them by vmap or one by one, as separate fits would.
        nets = train_seeds(factory, X, y, CE, SEEDS[:2], **kwargs)
        _assert_matches(nets, factory, X, y, CE, SEEDS[:2], **kwargs)


class _Tokens(nn.Module):
    """Embedding, LayerNorm over tokens, a channel-first LAuReL conv block, Conv1d."""

    def __init__(self):
        super().__init__()
        from skpaper.nn import with_laurel

        self.embed = nn.Embedding(11, 6)
        self.norm = nn.LayerNorm(6)
        self.block = with_laurel(nn.Sequential(nn.GroupNorm(2, 6), nn.Conv1d(6, 6, 3, padding=1)),
                                 6, "rw+lr+pa", rank=2, feature_dim=1)
        self.out = nn.Linear(6, 3)

    def forward(self, tokens):
        h = self.norm(self.embed(tokens)).transpose(1, 2)  # (batch, channels, length)
        return self.out(torch.relu(self.block(h, [h])).mean(dim=2))


def test_grouped_layers_match_separate_fits():
    rng = np.random.RandomState(3)
    tokens = rng.randint(0, 11, size=(48, 5))
    y = (tokens[:, 0] > 5).astype(np.int64) + (tokens[:, 1] > 7)
    kwargs = dict(epochs=3, batch_size=16, lr=1e-2, optimizer="adamw", weight_decay=1e-2)
    grouped = train_seeds(_Tokens, tokens, y, CE, SEEDS, strategy="grouped", **kwargs)
    looped = train_seeds(_Tokens, tokens, y, CE, SEEDS, strategy="loop", **kwargs)
    assert max(_max_gap(a, b) for a, b in zip(grouped, looped)) < ATOL
    with pytest.raises(IndexError, match="index out of range"):
        train_seeds(_Tokens, tokens + 6, y, CE, SEEDS, strategy="grouped", **kwargs)


def test_grouped_embedding_keeps_seeds_tables_apart():
    from skpaper.nn._batched import _grouped_model

    tables = [nn.Embedding(4, 2), nn.Embedding(4, 2)]
    grouped, _ = _grouped_model(tables)
    index = torch.tensor([[1], [3], [0], [2]])  # rows 0-1: seed 0, rows 2-3: seed 1
    with torch.no_grad():
        expected = torch.cat([tables[0](index[:2]), tables[1](index[2:])])
        assert torch.equal(grouped(index), expected)
        # Seed 0's index 4 is out of its table; it must not read seed 1's row 0.
        with pytest.raises(IndexError):
            grouped(torch.tensor([[4], [0], [0], [0]]))


def test_grouped_cross_entropy_ignore_index(tabular):
    X, y = tabular
    y = y.copy()
    y[::4] = -100
    kwargs = dict(epochs=2, batch_size=16, lr=1e-2)
    nets = train_seeds(_mlp(), X, y, CE, SEEDS, strategy="grouped", **kwargs)
    for net, seed in zip(nets, SEEDS):
        assert _max_gap(net, _reference_fit(_mlp(), X, y, CE, seed, **kwargs)) < ATOL


@BATCHED
def test_several_inputs_and_no_target(tabular, strategy):
    X, _ = tabular

    class Pair(nn.Module):
        def __init__(self):
            super().__init__()
            self.a, self.b = nn.Linear(8, 4), nn.Linear(8, 4)

        def forward(self, u, v):
            return self.a(u) - self.b(v)

    def loss(out):
        return out.pow(2).mean()

    args = dict(epochs=2, batch_size=25, lr=1e-2)
    batched = train_seeds(Pair, (X, X[::-1].copy()), None, loss, SEEDS, strategy=strategy, **args)
    looped = train_seeds(Pair, (X, X[::-1].copy()), None, loss, SEEDS, strategy="loop", **args)
    for a, b in zip(batched, looped):
        assert _max_gap(a, b) < ATOL


def test_predict_seeds_and_global_state(tabular):
    X, y = tabular
    rng_state, threads = torch.random.get_rng_state(), torch.get_num_threads()
    nets, losses = train_seeds(_mlp(0.3), X, y, CE, SEEDS, epochs=4, batch_size=30, lr=1e-2,
                               return_losses=True, strategy="vmap")
    assert torch.equal(torch.random.get_rng_state(), rng_state)
    assert torch.get_num_threads() == threads and torch.get_default_dtype() == torch.float32
    assert losses.shape == (3, 4) and np.isfinite(losses).all()
    out = predict_seeds(nets, X, batch_size=37)
    assert out.shape == (3, len(X), 3)
    with torch.no_grad():
        for k, net in enumerate(nets):
            assert not net.training
            np.testing.assert_allclose(out[k], net(torch.as_tensor(X)).numpy(), atol=1e-5)
    np.testing.assert_allclose(predict_seeds(nets, X, strategy="loop"), out, atol=1e-5)


def _ok(**overrides):
    rng = np.random.RandomState(0)
    args = dict(module_factory=lambda: nn.Linear(3, 2), X=rng.normal(size=(10, 3)),
                y=rng.randint(0, 2, 10), loss_fn=CE, seeds=[0, 1])
    args.update(overrides)
    return args


@pytest.mark.parametrize("overrides, kwargs, error, match", [
    ({"module_factory": 3}, {}, TypeError, "module_factory must be callable"),
    ({"module_factory": lambda: 3}, {}, TypeError, "module_factory must return"),
    ({"loss_fn": None}, {}, TypeError, "loss_fn must be callable"),
    ({"seeds": []}, {}, ValueError, "seeds must hold at least one"),
    ({"seeds": 3}, {}, TypeError, "seeds must be a sequence"),
    ({"seeds": [0, 1.5]}, {}, TypeError, "seeds must hold ints"),
    ({"seeds": [-1]}, {}, ValueError, r"seeds must lie in"),
    ({}, {"epochs": 0}, ValueError, "epochs must be"),
    ({}, {"batch_size": 0}, ValueError, "batch_size must be"),
    ({}, {"lr": -1.0}, ValueError, "lr must be"),
    ({}, {"optimizer": "lbfgs"}, ValueError, "optimizer must be one of"),
    ({}, {"optimizer_kwargs": {"lr": 1.0}}, ValueError, "optimizer_kwargs must not set"),
    ({}, {"optimizer_kwargs": [1]}, TypeError, "optimizer_kwargs must be a dict"),
    ({}, {"weight_decay": -0.1}, ValueError, "weight_decay must be"),
    ({}, {"weight_decay": lambda n, p: -1.0}, ValueError, "weight_decay gave"),
    ({}, {"max_grad_norm": 0.0}, ValueError, "max_grad_norm must be"),
    ({}, {"strategy": "threads"}, ValueError, "strategy must be one of"),
    ({"y": np.zeros(9, dtype=int)}, {}, ValueError, "same number of rows"),
    ({"X": np.zeros((0, 3)), "y": np.zeros(0, dtype=int)}, {}, ValueError, "at least one row"),
    ({"X": np.full((10, 3), np.nan)}, {}, ValueError, "X holds NaN"),
    ({"X": np.array([["a"] * 3] * 10)}, {}, TypeError, "X must hold numbers"),
    ({"loss_fn": lambda out, t: out}, {}, ValueError, "loss_fn must return a scalar"),
    ({"module_factory": nn.ReLU}, {}, ValueError, "without trainable parameters"),
    ({}, {"per_seed": True}, ValueError, r"per_seed=True, X must have shape \(n_seeds"),
    ({}, {"per_seed": "yes"}, TypeError, "per_seed must be a bool"),
])
def test_bad_input(overrides, kwargs, error, match):
    with pytest.raises(error, match=match):
        train_seeds(**_ok(**overrides), **kwargs)


def test_architecture_must_not_change_with_seed():
    sizes = iter([2, 3])
    with pytest.raises(ValueError, match="same architecture"):
        train_seeds(**_ok(module_factory=lambda: nn.Linear(3, next(sizes))))


def test_predict_seeds_bad_input():
    net = nn.Linear(3, 2)
    with pytest.raises(TypeError, match="modules must be a sequence"):
        predict_seeds(net, np.zeros((2, 3)))
    with pytest.raises(TypeError, match="non-empty sequence"):
        predict_seeds([], np.zeros((2, 3)))
    with pytest.raises(ValueError, match="batch_size must be"):
        predict_seeds([net], np.zeros((2, 3)), batch_size=0)
    with pytest.raises(ValueError, match="one architecture"):
        predict_seeds([net, nn.Linear(3, 4)], np.zeros((2, 3)), strategy="vmap")
