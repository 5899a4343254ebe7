"""
TeDS: diachronic and synchronic timestamps for temporal link prediction
=======================================================================

Fit :class:`skpaper.kg.TeDSLinkPredictor` and two baselines on a synthetic temporal
knowledge graph whose answers drift from era to era. On a random split every
time-aware model beats static ComplEx. When all facts of some timestamps are held out,
TeDS's diachronic quaternion, a function of the timestamp's position, still says
something about those times; TNTComplEx's free timestamp embeddings only do through
the temporal smoothness penalty that pulls them towards their neighbours.
"""

import os

TINY = os.environ.get("SKPAPER_EXAMPLE_SIZE") == "tiny"  # seconds-long run, for the tests

# %%
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
import torch

from skpaper.datasets import make_synthetic_tkg, train_test_split_tkg
from skpaper.kg import ComplExLinkPredictor, TeDSLinkPredictor, TNTComplExLinkPredictor

torch.set_num_threads(1)
X = make_synthetic_tkg(n_entities=100, n_relations=8, n_timestamps=30,
                       n_facts=1000 if TINY else 5000,
                       n_clusters=8, era_length=10, random_state=0)
params = dict(rank=16, max_epochs=1 if TINY else 15, device="cpu", random_state=0, n_timestamps=30)
models = {"ComplEx": ComplExLinkPredictor, "TNTComplEx": TNTComplExLinkPredictor,
          "TeDS": TeDSLinkPredictor}

# %%
# Random split: test MRR of each model.
train, test = train_test_split_tkg(X, random_state=0)
random_mrr = {name: cls(**params).fit(train).evaluate(test)["mrr"]
              for name, cls in models.items()}
print({name: round(v, 3) for name, v in random_mrr.items()})

# %%
# Held-out timestamps, with the default smoothness penalty and without it.
train, test = train_test_split_tkg(X, by="timestamp", random_state=0)
held_out = {}
for time_reg in (1e-2, 0.0):
    for name in ("TNTComplEx", "TeDS"):
        model = models[name](**params, time_reg=time_reg).fit(train)
        held_out[(name, time_reg)] = model.evaluate(test)["mrr"]
print({key: round(v, 3) for key, v in held_out.items()})

# %%
fig, axes = plt.subplots(1, 2, figsize=(9, 3.4))
axes[0].bar(list(random_mrr), list(random_mrr.values()), color=["#bdbdbd", "#6baed6",
                                                                "#08519c"])
axes[0].set_ylabel("time-aware filtered MRR")
axes[0].set_title("random split")
width = 0.38
for i, name in enumerate(("TNTComplEx", "TeDS")):
    values = [held_out[(name, 1e-2)], held_out[(name, 0.0)]]
    axes[1].bar(np.arange(2) + (i - 0.5) * width, values, width, label=name,
                color=["#6baed6", "#08519c"][i])
axes[1].set_xticks([0, 1], ["smoothness 1e-2", "no smoothness"])
axes[1].set_title("timestamps held out")
axes[1].legend(loc="lower left")
fig.tight_layout()
fig.savefig("plot_teds.png", dpi=110)
print("saved plot_teds.png")
