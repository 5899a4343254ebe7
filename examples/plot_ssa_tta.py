"""
===============================================================
Steady-state test-time adaptation on a corrupted digits stream
===============================================================

A small LayerNorm MLP is trained on clean digits, then meets a stream of seven corruptions
at severity 5, twice over, without labels. TENT adapts the LayerNorm scale and shift by
minimising the entropy of its own predictions; with a large learning rate the gradient
noise of this unsupervised objective drives the weights away and the online accuracy
collapses. Steady-state adaptation (SSA, Jae-Hong Lee, ICML 2025) treats the weights as
Gaussian and filters each step: the step is scaled by ``alpha_k = sqrt(S / (eta^2
sigma_k^2))``, which shrinks when the estimated gradient noise ``sigma_k^2`` rises, and the
weights are pulled towards the source by ``kappa``.

Left: online accuracy against the learning rate. Middle: running accuracy along the stream
at the largest rate. Right: SSA's step multiplier and the noise estimate along the stream.
"""

import os

TINY = os.environ.get("SKPAPER_EXAMPLE_SIZE") == "tiny"  # seconds-long run, for the tests

# %%
# Train the source model on clean digits and build the test stream.
import matplotlib.pyplot as plt
import numpy as np
from sklearn.frozen import FrozenEstimator

from skpaper.adaptation import NormMLPClassifier, TestTimeAdapter
from skpaper.datasets import load_digits_split, make_corruption_stream

data = load_digits_split(test_size=0.4, random_state=0)
source = NormMLPClassifier(hidden_layer_sizes=(128, 128), max_epochs=2 if TINY else 100, lr=3e-3,
                           batch_size=64, inference_dtype="float32", random_state=0)
source.fit(data.X_train, data.y_train)
stream = make_corruption_stream(data.X_test, data.y_test, severity=5, rounds=1 if TINY else 2,
                                random_state=0)
print(f"clean test accuracy {source.score(data.X_test, data.y_test):.3f}, "
      f"stream of {len(stream.X)} images")


def online(**params):
    tta = TestTimeAdapter(FrozenEstimator(source), batch_size=32, random_state=0, **params)
    tta.fit(data.X_train[:8])
    hits = tta.predict(stream.X, adapt=True) == stream.y
    return hits, tta


# %%
# Calibrate SSA's noise floor once at the smallest rate, then sweep the learning rate.
lrs = [0.003, 0.1] if TINY else [0.003, 0.01, 0.03, 0.1]
_, calibration = online(lr=lrs[0], steady_scale=0.05)
noise_floor = calibration.filter_.noise_floor
methods = {
    "TENT": dict(ssa=False, kappa=0.0),
    "TENT + averaging (kappa=0.01)": dict(ssa=False, kappa=0.01),
    "TENT + SSA": dict(ssa=True, kappa=0.01, sigma_lambda2=noise_floor),
}
accuracy = {name: [] for name in methods}
curves, last = {}, None
for lr in lrs:
    for name, params in methods.items():
        hits, tta = online(lr=lr, **params)
        accuracy[name].append(hits.mean())
        if lr == lrs[-1]:
            curves[name] = hits
            if name == "TENT + SSA":
                last = tta
no_adapt = online(loss="none")[0].mean()
for name, acc in accuracy.items():
    print(f"{name:32s}", "  ".join(f"{a:.3f}" for a in acc))
print(f"{'no adaptation':32s} {no_adapt:.3f}")

# %%
# Plot the sweep, the running accuracy and SSA's step against the noise estimate.
fig, axes = plt.subplots(1, 3, figsize=(14, 3.8))
for name, acc in accuracy.items():
    axes[0].plot(lrs, acc, "o-", label=name)
axes[0].axhline(no_adapt, color="gray", ls="--", label="no adaptation")
axes[0].set_xscale("log")
axes[0].set_xlabel("learning rate")
axes[0].set_ylabel("online accuracy")
axes[0].legend(fontsize=7)
width = 200
for name, hits in curves.items():
    axes[1].plot(np.convolve(hits, np.ones(width) / width, mode="valid"), label=name, lw=1)
boundaries = np.flatnonzero(stream.domain[1:] != stream.domain[:-1]) + 1
for b in boundaries:
    axes[1].axvline(b, color="lightgray", lw=0.5)
axes[1].set_xlabel("test image (stream order)")
axes[1].set_ylabel(f"running accuracy, lr = {lrs[-1]}")
axes[1].legend(fontsize=7)
steps = np.asarray(last.step_history_)
axes[2].semilogy(steps, label=r"step multiplier $\alpha_k$")
axes[2].semilogy(np.asarray(last.sigma2_history_) / np.nanmax(last.sigma2_history_),
                 label=r"noise $\sigma_k^2$ (scaled)")
axes[2].set_xlabel("adaptation step")
axes[2].legend(fontsize=7)
fig.tight_layout()
fig.savefig("plot_ssa_tta.png", dpi=110)
