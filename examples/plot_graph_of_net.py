"""
Graph-of-Nets node classification with position awareness
==========================================================

Fit :class:`skpaper.graph.GraphOfNetsClassifier` on a synthetic graph of nets (an SBM
outer graph whose nodes carry structural inner graphs) and plot the learned positions
of the spring constraint system, coloured by class.
"""

import os

TINY = os.environ.get("SKPAPER_EXAMPLE_SIZE") == "tiny"  # seconds-long run, for the tests

# %%
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
import torch

from skpaper.datasets import make_synthetic_gon
from skpaper.graph import GraphOfNets, GraphOfNetsClassifier

torch.set_num_threads(1)
outer, inner, y = make_synthetic_gon(n_nodes=400, random_state=0)
gon = GraphOfNets(outer, inner)
ids = np.arange(gon.n_nodes).reshape(-1, 1)
train, test = ids[:200], ids[200:]

# %%
clf = GraphOfNetsClassifier(gon=gon, hidden_dim=32, position_dim=2, max_epochs=2 if TINY else 150,
                            random_state=0, device="cpu").fit(train, y[:200])
print(f"test accuracy: {clf.score(test, y[200:]):.3f}")
pos = clf.positions()
fig, ax = plt.subplots(figsize=(4.5, 4))
ax.scatter(pos[:, 0], pos[:, 1], c=y, cmap="tab10", s=8)
ax.set_title("learned positions, coloured by class")
fig.tight_layout()
fig.savefig("plot_graph_of_net.png", dpi=110)
print("saved plot_graph_of_net.png")
