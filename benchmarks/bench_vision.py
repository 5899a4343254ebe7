"""The 1D tokenizer's vector quantizer and training against ``vector-quantize-pytorch``.

Three comparisons in the same process on the same data:

1. Code lookup (inference) and one training forward/backward of the quantizer
   at TiTok-L-32's sizes (32 tokens of dimension 12, 4,096 codes, cosine
   lookup) on a batch of 256 images' tokens: skpaper's ``VectorQuantizer``
   against ``vector_quantize_pytorch.VectorQuantize`` (``use_cosine_sim``).
   Both hold the same codebook; the share of identical code assignments is
   reported as a check.
2. Training a small tokenizer on the 8x8 digits with the same MLP encoder and
   decoder and the same number of Adam steps: skpaper's quantizer (warm-up,
   codebook initialised from encoder outputs, dead-code reset) against the
   peer's EMA codebook with k-means initialisation and EMA dead-code
   replacement. Figures: held-out reconstruction MSE and codebook usage.
3. Inpainting the bottom half of digits by test-time optimisation of the
   tokens (the paper's method) against optimising the pixels directly, the
   prior-free reference: hidden-region MSE and judge accuracy.

``speedup`` is ``peer / ours`` (> 1: ours is faster). The peer is optional
(``pip install vector-quantize-pytorch``); without it cases 1-2 run ours alone.

Run: ``python benchmarks/bench_vision.py [--quick] [--repeat N] [--json out.json]``.
"""

import importlib.util
import math

import numpy as np
import torch
from _harness import Case, main_cli
from sklearn.linear_model import LogisticRegression
from torch.nn import functional as F

from skpaper.datasets import load_digits_split, make_inpainting_mask
from skpaper.vision import MaskedReconstruction, TokenTestTimeOptimizer, VQTokenizer1D
from skpaper.vision._tokenizer_modules import Tokenizer1DNetwork, flat_to_images, images_to_flat
from skpaper.vision._vq import VectorQuantizer

HAVE_PEER = importlib.util.find_spec("vector_quantize_pytorch") is not None


def _peer_vq(dim, codebook_size, **kwargs):
    from vector_quantize_pytorch import VectorQuantize

    return VectorQuantize(dim=dim, codebook_size=codebook_size, use_cosine_sim=True, **kwargs)


def _quantizer_cases(quick):
    n_images, n_tokens, dim, size = (64 if quick else 256), 32, 12, 4096
    gen = torch.Generator().manual_seed(0)
    z = torch.randn(n_images, n_tokens, dim, generator=gen)
    ours = VectorQuantizer(size, dim, cosine=True)
    with torch.no_grad():
        ours.embedding.copy_(torch.randn(size, dim, generator=gen))
    peer = None
    if HAVE_PEER:
        peer = _peer_vq(dim, size, decay=0.99)
        with torch.no_grad():
            peer._codebook.embed.copy_(F.normalize(ours.embedding, dim=-1)[None])
        peer.eval()

    def lookup_ours():
        with torch.no_grad():
            idx = ours.lookup(z)
        return {"codes": int(idx.numel())}

    def lookup_peer():
        with torch.no_grad():
            _, idx, _ = peer(z)
        agree = float((idx == ours.lookup(z)).float().mean())
        return {"codes": int(idx.numel()), "same_codes_as_ours": agree}

    z_train = z.clone().requires_grad_(True)

    def step_ours():
        z_q, _, loss = ours(z_train)
        (z_q.pow(2).sum() + loss).backward()
        z_train.grad = None
        ours.embedding.grad = None

    peer_train = _peer_vq(dim, size, decay=0.99) if HAVE_PEER else None

    def step_peer():
        peer_train.train()
        z_q, _, loss = peer_train(z_train)
        (z_q.pow(2).sum() + loss.sum()).backward()
        z_train.grad = None

    items = n_images * n_tokens
    return [
        Case(f"VQ lookup {n_images}x{n_tokens} tokens, K={size}", lookup_ours,
             lookup_peer if HAVE_PEER else None, "vq-pytorch", items=items),
        Case(f"VQ train fwd+bwd {n_images}x{n_tokens}, K={size}", step_ours,
             step_peer if HAVE_PEER else None, "vq-pytorch", items=items),
    ]


def _train_with_peer(X_train, X_test, n_tokens, steps, seed):
    """The MLP tokenizer with the peer's EMA quantizer in place of ours."""
    shape = (8, 8, 1)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        net = Tokenizer1DNetwork(shape, n_tokens, 8, 128, "mlp", 2, 128, 2, 4, True, 0.25)
        vq = _peer_vq(8, 128, decay=0.9, kmeans_init=True, threshold_ema_dead_code=1,
                      commitment_weight=0.25)
    opt = torch.optim.Adam(list(net.encoder.parameters()) + list(net.decoder.parameters()),
                           lr=2e-3)
    X = flat_to_images(torch.as_tensor(X_train, dtype=torch.float32), shape)
    gen = torch.Generator().manual_seed(seed)
    for _ in range(steps):
        batch = X[torch.randint(len(X), (128,), generator=gen)]
        z_q, _, loss = vq(net.encode(batch))
        total = F.mse_loss(net.decode(z_q), batch) + loss.sum()
        opt.zero_grad()
        total.backward()
        opt.step()
    vq.eval()
    with torch.no_grad():
        Xt = flat_to_images(torch.as_tensor(X_test, dtype=torch.float32), shape)
        z_q, idx, _ = vq(net.encode(Xt))
        mse = float(F.mse_loss(net.decode(z_q), Xt))
        _, idx_train, _ = vq(net.encode(X))
    return {"test_mse": mse, "codebook_usage": len(torch.unique(idx_train)) / 128}


def _training_cases(quick):
    d = load_digits_split(test_size=397 / 1797, random_state=0)
    steps = 300 if quick else 1000
    n_tokens = 4
    epochs = math.ceil(steps / math.ceil(len(d.X_train) / 128))

    def ours():
        tok = VQTokenizer1D(n_tokens=n_tokens, token_dim=8, codebook_size=128, encoder="mlp",
                            width=128, warmup_steps=steps // 5, dead_code_reset_every=200,
                            max_epochs=epochs, batch_size=128, lr=2e-3, random_state=0,
                            device="cpu").fit(d.X_train)
        return {"test_mse": -tok.score(d.X_test), "codebook_usage": tok.codebook_usage_,
                "steps": tok.n_steps_}

    def peer():
        return _train_with_peer(d.X_train, d.X_test, n_tokens, epochs * 11, seed=0)

    return [Case(f"train MLP tokenizer, {steps} steps", ours, peer if HAVE_PEER else None,
                 "vq-pytorch EMA")]


def _inpainting_cases(quick):
    d = load_digits_split(test_size=397 / 1797, random_state=0)
    tok = VQTokenizer1D(n_tokens=4, token_dim=8, codebook_size=128, encoder="mlp", width=128,
                        warmup_steps=200, dead_code_reset_every=200, max_epochs=91,
                        batch_size=128, lr=2e-3, random_state=0, device="cpu").fit(d.X_train)
    judge = LogisticRegression(max_iter=2000).fit(d.X_train, d.y_train)
    n, n_iter = (100, 100) if quick else (397, 300)
    X, y = d.X_test[:n], d.y_test[:n]
    known = make_inpainting_mask((8, 8), "bottom")
    objective = MaskedReconstruction(X, known)

    def figures(out):
        return {"hidden_mse": float(np.mean((out - X)[:, ~known] ** 2)),
                "judge_acc": float(judge.score(out, y))}

    def ours():
        tto = TokenTestTimeOptimizer(tok, objective, n_iter=n_iter, lr=0.1, random_state=0)
        return figures(tto.generate(seed_images=X * known))

    def pixels():
        x = flat_to_images(torch.as_tensor(X * known, dtype=torch.float32), (8, 8, 1))
        x = x.clone().requires_grad_(True)
        opt = torch.optim.Adam([x], lr=0.05)
        for _ in range(n_iter):
            loss = objective(x.clamp(0, 1)).sum()
            opt.zero_grad()
            loss.backward()
            opt.step()
        return figures(images_to_flat(x.detach().clamp(0, 1)).double().numpy())

    return [Case(f"inpaint {n} digits, {n_iter} steps", ours, pixels, "pixel optim.",
                 items=n)]


def make_cases(quick):
    torch.set_num_threads(1)
    return _quantizer_cases(quick) + _training_cases(quick) + _inpainting_cases(quick)


if __name__ == "__main__":
    main_cli(make_cases, description=__doc__.splitlines()[0])
