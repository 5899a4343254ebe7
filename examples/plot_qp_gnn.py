"""
GNNs that represent quadratic programs
======================================

Train :class:`skpaper.graph.QPGNNRegressor` on random linearly constrained QPs at two
embedding sizes and compare their training relative error of the optimal value
(Chen et al., ICML 2025): the wider network fits them to a lower error. Labels come from
:func:`skpaper.graph.solve_qps`; only instances it reports as "optimal" are kept (an
iteration-limit stop is never taken for infeasibility).
"""

import os

TINY = os.environ.get("SKPAPER_EXAMPLE_SIZE") == "tiny"  # seconds-long run, for the tests

# %%
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
import torch

from skpaper.datasets import make_random_lcqp
from skpaper.graph import QPGNNRegressor, solve_qps

torch.set_num_threads(1)
X = make_random_lcqp(40 if TINY else 200, 5, 20, 30, random_state=0)
_, objective, _, status = solve_qps(X, return_status=True)
solved = status == "optimal"
X_ok = [x for x, ok in zip(X, solved) if ok][:100]
y_ok = objective[solved][:100]

# %%
fig, ax = plt.subplots(figsize=(5, 3.5))
for hidden in (8, 64):
    reg = QPGNNRegressor(hidden_dim=hidden, max_epochs=5 if TINY else 200,
                         batch_size=len(X_ok), lr=3e-3,
                         random_state=0, device="cpu").fit(X_ok, y_ok)
    curve = np.sqrt([r["train_loss"] for r in reg.history_])
    ax.semilogy(curve, label=f"hidden {hidden}: final {reg.relative_error(X_ok, y_ok):.3f}")
ax.set_xlabel("epoch (full batch)")
ax.set_ylabel("training relative error of the optimal value")
ax.legend()
fig.tight_layout()
fig.savefig("plot_qp_gnn.png", dpi=110)
print("saved plot_qp_gnn.png")
