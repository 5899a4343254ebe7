"""LAuReL's training-step overhead against the plain residual network it replaces.

For three networks (a residual MLP on tabular rows, the same MLP on a token
stream as in a transformer, and a small residual CNN), each LAuReL variant and
the naive "+1 block" scaling are timed per training step (forward, backward,
AdamW step) against the plain residual network ("standard", the peer), in the
same process on the same batch. Beside the medians, each side reports its
parameter count and the bytes of activations saved for the backward pass
(device-independent memory figure), plus the CUDA peak when on a GPU. The
``speedup`` column is ``standard / variant``: below 1 is LAuReL's overhead.
The paper reports +1-2% latency for RW+LR on its 4B language model.

Run: ``python benchmarks/bench_nn.py [--quick] [--repeat N] [--json out.json]``.
"""

import torch
from _harness import Case, main_cli

from skpaper.nn import make_laurel_convnet, make_laurel_mlp

VARIANTS = ("rw", "lr", "rw+lr", "rw+lr+pa", "+1 block")


def _saved_activation_bytes(module, inputs):
    """Bytes of the tensors autograd saves for backward, excluding the parameters."""
    params = {p.data_ptr() for p in module.parameters()}
    seen, total = set(), 0

    def pack(t):
        nonlocal total
        ptr = t.untyped_storage().data_ptr()
        if ptr not in params and ptr not in seen:
            seen.add(ptr)
            total += t.untyped_storage().nbytes()
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        module(inputs).float().pow(2).mean().backward()
    module.zero_grad(set_to_none=True)
    return total


def _make_step(module, inputs, steps):
    optimizer = torch.optim.AdamW(module.parameters(), lr=1e-3)
    device = inputs.device
    figures = {"params": sum(p.numel() for p in module.parameters()),
               "saved_activation_MB": _saved_activation_bytes(module, inputs) / 2**20}

    def run():
        if device.type == "cuda":
            torch.cuda.reset_peak_memory_stats(device)
        for _ in range(steps):
            optimizer.zero_grad(set_to_none=True)
            module(inputs).float().pow(2).mean().backward()
            optimizer.step()
        if device.type == "cuda":
            torch.cuda.synchronize(device)
            figures["cuda_peak_MB"] = torch.cuda.max_memory_allocated(device) / 2**20
        return dict(figures)

    return run


def make_cases(quick):
    torch.set_num_threads(1)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    gen = torch.Generator().manual_seed(0)
    wide = 256 if quick else 512

    def mlp(width, blocks, rank):
        return lambda variant, extra: make_laurel_mlp(32, 10, width, blocks + extra, variant,
                                                      rank=rank)

    def cnn(side, channels, rank):
        return lambda variant, extra: make_laurel_convnet((3, side, side), 10, channels,
                                                          4 + extra, variant, rank=rank)

    networks = {
        "MLP D=64 x8 r=8, batch 256": (mlp(64, 8, 8), torch.randn(256, 32, generator=gen)),
        f"MLP D={wide} x4 r=16, batch 256": (mlp(wide, 4, 16),
                                             torch.randn(256, 32, generator=gen)),
        "tokens 16x32 D=128 x4 r=16": (mlp(128, 4, 16),
                                       torch.randn(16, 32, 32, generator=gen)),
        "CNN 3x16x16 C=16 x4 r=4": (cnn(16, 16, 4), torch.randn(32, 768, generator=gen)),
    }
    if not quick:
        networks["CNN 3x32x32 C=32 x4 r=8, batch 16"] = (cnn(32, 32, 8),
                                                        torch.randn(16, 3072, generator=gen))
    steps = 5 if quick else 10
    cases = []
    for net_name, (build, batch) in networks.items():
        batch = batch.to(device)
        for variant in VARIANTS:
            torch.manual_seed(0)
            extra = int(variant == "+1 block")
            ours = build("standard" if extra else variant, extra).to(device)
            peer = build("standard", 0).to(device)
            cases.append(Case(
                f"{net_name}: {variant}", ours=_make_step(ours, batch, steps),
                peer=_make_step(peer, batch, steps), peer_name="standard",
                params={"variant": variant, "steps_per_call": steps, "device": str(device)},
            ))
    return cases


if __name__ == "__main__":
    main_cli(make_cases, description=__doc__.splitlines()[0])
