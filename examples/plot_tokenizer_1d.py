"""
A 1D tokenizer that generates without training a generator
==========================================================

Train :class:`skpaper.vision.VQTokenizer1D` to compress 8x8 digits into four
discrete tokens, then use it as a generator with no further training (Lao
Beyer et al., ICML 2025): inpaint the hidden bottom half by test-time
optimisation of the tokens (:class:`skpaper.vision.TokenTestTimeOptimizer`
with :class:`skpaper.vision.MaskedReconstruction`), and transfer a "lighting"
attribute between images by copying the one token position that carries it
(:func:`skpaper.vision.find_attribute_positions`, :func:`skpaper.vision.swap_tokens`).
"""

import os

TINY = os.environ.get("SKPAPER_EXAMPLE_SIZE") == "tiny"  # seconds-long run, for the tests

# %%
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
import torch

from skpaper.datasets import load_digits_split, make_attribute_digits, make_inpainting_mask
from skpaper.vision import (
    MaskedReconstruction,
    TokenTestTimeOptimizer,
    VQTokenizer1D,
    find_attribute_positions,
    swap_tokens,
)

torch.set_num_threads(1)
params = dict(n_tokens=4, token_dim=8, codebook_size=128, encoder="mlp", width=128,
              warmup_steps=200, dead_code_reset_every=200, max_epochs=1 if TINY else 90, lr=2e-3,
              random_state=0, device="cpu")

# %%
# Inpainting: encode the masked digit, then optimise its tokens through the
# quantizer so that the decoded image matches the known top half.
d = load_digits_split(test_size=0.2, random_state=0)
tok = VQTokenizer1D(**params).fit(d.X_train)
X = d.X_test[:10]
known = make_inpainting_mask((8, 8), "bottom")
encoded = tok.inverse_transform(tok.transform(X * known))
tto = TokenTestTimeOptimizer(tok, MaskedReconstruction(X, known), n_iter=5 if TINY else 300,
                             random_state=0)
inpainted = tto.generate(seed_images=X * known)
print(f"codebook usage {tok.codebook_usage_:.2f}; hidden-half MSE: encode "
      f"{np.mean((encoded - X)[:, ~known] ** 2):.3f}, "
      f"TTO {np.mean((inpainted - X)[:, ~known] ** 2):.3f}")

# %%
# Token copy: on digits where half the images are dimmed, find the position
# whose code best predicts "dim" and copy it from a dim digit into a bright one.
a = make_attribute_digits("dim", random_state=0)
tok_dim = VQTokenizer1D(**params).fit(a.data[:1400])
positions, scores = find_attribute_positions(tok_dim.transform(a.data[:1400]), a.attribute[:1400])
test = np.arange(1400, 1797)
dim, bright = test[a.attribute[test] == 1][:10], test[a.attribute[test] == 0][:10]
codes = tok_dim.transform(a.data)
edited = tok_dim.inverse_transform(swap_tokens(codes[dim], codes[bright], positions[:1]))
print(f"attribute position {positions[0]} (scores {np.round(scores, 2)})")

# %%
rows = [("original", X), ("masked", X * known), ("encode", encoded), ("TTO", inpainted),
        ("bright", a.data[bright]), ("dim source", a.data[dim]),
        (f"copy token {positions[0]}", edited)]
fig, axes = plt.subplots(len(rows), 10, figsize=(7, 5.2))
for r, (label, images) in enumerate(rows):
    for c in range(10):
        axes[r, c].imshow(images[c].reshape(8, 8), cmap="gray_r", vmin=0, vmax=1)
        axes[r, c].set_xticks([])
        axes[r, c].set_yticks([])
    axes[r, 0].set_ylabel(label, rotation=0, ha="right", va="center", fontsize=8)
fig.suptitle("Inpainting by token optimisation (top) and token-copy editing (bottom)")
fig.tight_layout()
fig.savefig("plot_tokenizer_1d.png", dpi=110)
print("saved plot_tokenizer_1d.png")
