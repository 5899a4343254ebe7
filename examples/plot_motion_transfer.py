"""
==============================================================
Motion transfer through anytime interpolants
==============================================================

Keypoint motion-transfer models re-pose the object of a source image like a
driving frame. Wang and Li (ICML 2025) split a large displacement into small
ones: interpolated keypoints ``kp(t) = (1 - t) kp_S + t kp_D`` give
interpolated images ``I_t``, a selector picks one, and a second transfer goes
from it to the driving frame.

This example trains a small :class:`skpaper.vision.KeypointMotionTransfer` on
articulated sprite videos for a few seconds, shows the candidates ``I_t`` of
one large-displacement pair with the selected one, and scores both paths with
an external landmark detector against the ground-truth keypoints. The model
is far too small and briefly trained to reproduce the paper's numbers; it
shows the pipeline.
"""

import os

TINY = os.environ.get("SKPAPER_EXAMPLE_SIZE") == "tiny"  # seconds-long run, for the tests

# %%
# Sprite videos with ground-truth keypoints; held-out pairs binned by displacement.
import matplotlib.pyplot as plt
import numpy as np

from skpaper.datasets import make_sprite_pairs, make_sprite_videos
from skpaper.vision import (
    KeypointMotionTransfer,
    average_keypoint_distance,
    train_landmark_detector,
)

size = 32
train = make_sprite_videos(n_videos=4 if TINY else 32, n_frames=10, size=size, random_state=0)
test = make_sprite_videos(n_videos=8, n_frames=10, size=size, random_state=1)
pairs = make_sprite_pairs(test, n_pairs=80, random_state=0)
print(f"{pairs.large.sum()} large- and {(~pairs.large).sum()} small-displacement pairs")

# %%
# Train the model (same backbone for both paths; the anytime path adds the interpolants).
model = KeypointMotionTransfer(n_keypoints=5, width=8, batch_size=8, lr=2e-3,
                               max_epochs=1 if TINY else 15,
                               feature_extractor=None, random_state=0, device="cpu")
model.fit(train.videos)
print("last epoch:", {k: round(v, 3) for k, v in model.history_[-1].items()})

# %%
# An external landmark detector, trained on other sprite identities, scores both paths.
extra = make_sprite_videos(n_videos=10 if TINY else 150, n_frames=3, size=size, random_state=2)
detector = train_landmark_detector(extra.videos.reshape(-1, size, size, 3),
                                   extra.keypoints.reshape(-1, 5, 2),
                                   extra.visibility.reshape(-1, 5),
                                   n_steps=5 if TINY else 150, lr=5e-3,
                                   random_state=0)
source = test.videos[pairs.video, pairs.source]
driving = test.videos[pairs.video, pairs.driving]
kp_true = test.keypoints[pairs.video, pairs.driving]
visible = test.visibility[pairs.video, pairs.driving]
result = model.anytime_transfer(source, driving)
for name, frames in (("direct", result.direct), ("anytime", result.output)):
    kp = detector.predict(frames)[0]
    for label, mask in (("large", pairs.large), ("small", ~pairs.large)):
        akd = average_keypoint_distance(kp[mask], kp_true[mask], visible[mask])
        print(f"{name:>8s} {label:>5s}: AKD {akd:.2f} px")
print("selected t on large pairs:", dict(zip(*np.unique(result.t[pairs.large],
                                                        return_counts=True))))

# %%
# Source, driving frame, the interpolants I_t (selected one framed) and both outputs.
rows = np.flatnonzero(pairs.large)[:3]
titles = ["source", "driving", *[f"I(t={t:g})" for t in result.interpolation], "anytime",
          "direct"]
fig, axes = plt.subplots(len(rows), len(titles), figsize=(1.5 * len(titles), 1.6 * len(rows)),
                         squeeze=False)
for r, i in enumerate(rows):
    images = [source[i], driving[i], *result.candidates[i], result.output[i], result.direct[i]]
    for c, image in enumerate(images):
        ax = axes[r, c]
        ax.imshow(np.clip(image, 0, 1), interpolation="nearest")
        ax.set_xticks([])
        ax.set_yticks([])
        if c == 2 + int(np.argmin(result.scores[i])):
            for spine in ax.spines.values():
                spine.set_edgecolor("red")
                spine.set_linewidth(2)
        if r == 0:
            ax.set_title(titles[c], fontsize=8)
fig.tight_layout()
fig.savefig("plot_motion_transfer.png", dpi=110)
