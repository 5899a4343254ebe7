"""
==========================================================
LAuReL: learned augmented residual connections
==========================================================

LAuReL (Menghani, Kumar and Kumar, ICML 2025) replaces the skip connection
``x + f(x)`` of a residual block with ``alpha f(x) + beta (x + B A x)``, plus
optionally a learned mix of earlier activations. ``alpha`` and ``beta`` are two
learned scalars, and ``B A`` is a rank-``r`` map whose ``B`` starts at zero.
Every variant therefore starts as the plain residual network.

This example wraps a block with :func:`skpaper.nn.with_laurel` and checks that
equivalence. It then trains residual MLPs on the bundled digits and compares
test cross-entropy against the parameters each variant adds. One extra plain
block, the naive way to add capacity, is trained as a reference. Finally it
shows the residual weights that RW+LR learned in each block.
"""

import os

TINY = os.environ.get("SKPAPER_EXAMPLE_SIZE") == "tiny"  # seconds-long run, for the tests

# %%
# A LAuReL block is the plain residual block at initialisation.
import matplotlib.pyplot as plt
import numpy as np
import torch
from sklearn.metrics import log_loss
from torch import nn

from skpaper.datasets import load_digits_split
from skpaper.nn import LaurelMLPClassifier, with_laurel

torch.manual_seed(0)
branch = nn.Sequential(nn.LayerNorm(32), nn.Linear(32, 64), nn.GELU(), nn.Linear(64, 32))
block = with_laurel(branch, 32, "rw+lr", rank=4)
x = torch.randn(8, 10, 32)  # (batch, tokens, dim)
print("equal to x + f(x) at init:", torch.equal(block(x), x + branch(x)))
print("parameters added:", sum(p.numel() for p in block.residual.parameters()),
      "(= 2 + 2 r D =", 2 + 2 * 4 * 32, ")")

# %%
# Same training budget for every variant: 8 blocks of width 64, 10 epochs, two seeds.
d = load_digits_split(test_size=0.5, random_state=0)
variants = {"standard": {}, "rw": {}, "rw+lr": {}, "rw+lr+pa": {},
            "+1 block": {"variant": "standard", "n_blocks": 9}}
results, sizes = {}, {}
for name, override in variants.items():
    ces = []
    for seed in ((0,) if TINY else (0, 1)):
        params = dict(n_blocks=8, width=64, rank=8, variant=name, max_epochs=1 if TINY else 10,
                      random_state=seed, device="cpu")
        clf = LaurelMLPClassifier(**{**params, **override}).fit(d.X_train, d.y_train)
        ces.append(log_loss(d.y_test, clf.predict_proba(d.X_test), labels=clf.classes_))
        if name == "rw+lr" and seed == 0:
            learned = clf.laurel_weights_
    sizes[name] = sum(p.numel() for p in clf.module_.parameters())
    added = sizes[name] - sizes["standard"]
    results[name] = (added, np.mean(ces), np.std(ces))
    print(f"{name:>9s}: +{added:6d} parameters, test CE {np.mean(ces):.3f} +- {np.std(ces):.3f}")

# %%
# Test loss against parameters added, and the residual weights RW+LR learned.
fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(10, 3.8))
for name, (added, mean, std) in results.items():
    color = "tab:gray" if name in ("standard", "+1 block") else "tab:blue"
    ax1.errorbar(max(added, 1), mean, yerr=std, fmt="o", color=color, capsize=3)
    ax1.annotate(name, (max(added, 1), mean), xytext=(5, 5), textcoords="offset points")
ax1.set_xscale("log")
ax1.set_xlabel("parameters added (standard plotted at 1)")
ax1.set_ylabel("test cross-entropy (2 seeds)")
ax1.set_title("digits, residual MLP, 10 epochs")
blocks = np.arange(1, len(learned) + 1)
ax2.plot(blocks, [w["alpha"] for w in learned], "o-", label="alpha (on f(x))")
ax2.plot(blocks, [w["beta"] for w in learned], "s-", label="beta (on x + BAx)")
ax2.axhline(1.0, color="k", lw=0.6)
ax2.set_xlabel("block")
ax2.set_ylabel("learned weight (starts at 1)")
ax2.set_title("RW+LR residual weights, 2 softmax(theta)")
ax2.legend()
fig.tight_layout()
fig.savefig("plot_laurel.png", dpi=110)
