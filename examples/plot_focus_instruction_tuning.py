"""
Focus Instruction Tuning: one model, steered by "focus on C, ignore S"
======================================================================

A label is spuriously tied to a "genre" (90% of the training rows carry the
label their genre points to). Focus Instruction Tuning (FIT) trains one model
on examples paired with a focus instruction: under "focus on the core" or
"ignore the genre" the target is the task label, under "focus on the genre" it
is the genre's label. At test time the genre's tie is kept (iid), removed
(low), pointed at another label (flipped), or the genres are new (unseen).

Two variants: a tabular one, where the instruction is a one-hot code appended
to the features of a gradient-boosting classifier, and a text one, where a tiny
transformer reads paraphrased instructions such as "focus on the meaning and
ignore the genre" next to an NLI-like premise/hypothesis pair.
"""

import os

TINY = os.environ.get("SKPAPER_EXAMPLE_SIZE") == "tiny"  # seconds-long run, for the tests

# %%
# Data: six genres tied to three labels
# -------------------------------------
import matplotlib.pyplot as plt
import numpy as np
import torch
from sklearn.ensemble import HistGradientBoostingClassifier

from skpaper.datasets import make_spurious_task
from skpaper.language import (
    FOCUS_TYPES,
    FocusInstructionLM,
    FocusInstructionTuner,
    LanguageModel,
    WordTokenizer,
)

torch.set_num_threads(1)
SPLITS = ("iid", "low", "flipped", "unseen")


def splits(n, kind):
    # Unseen genres are drawn uncorrelated with the label, so chance is exactly 1/3.
    return {s: make_spurious_task(n, rho=1 / 3 if s == "unseen" else 0.9, split=s, kind=kind,
                                  random_state=10 + i) for i, s in enumerate(SPLITS)}


X, y, y_s = make_spurious_task(600 if TINY else 6000, rho=0.9, random_state=0)
tests = splits(150 if TINY else 1500, "tabular")
print("training rows whose label is their genre's:", np.mean(y == y_s).round(3))

# %%
# Tabular FIT, with and without decoupling
# ----------------------------------------
# ``decouple_excluded`` shuffles the genre columns among the examples whose
# instruction excludes a feature, so that under "ignore the genre" the label
# cannot depend on the genre (an adaptation: an LLM brings that meaning from
# language).
vanilla = HistGradientBoostingClassifier(random_state=0).fit(X, y)
reports = {}
for name, decouple in (("FIT", False), ("FIT + decoupling", True)):
    fit = FocusInstructionTuner(spurious_columns=list(range(4, 10)),
                                decouple_excluded=decouple, random_state=0).fit(X, y)
    reports[name] = {s: fit.focus_accuracy_report(*tests[s]) for s in SPLITS}
for s in SPLITS:
    print(f"{s:8s} vanilla {vanilla.score(*tests[s][:2]):.3f}  "
          + "  ".join(f"{name}: focus(C) ignore(S) {r[s]['focus_C_ignore_S']:.3f}, "
                      f"focus(S) {r[s]['focus_S']:.3f}" for name, r in reports.items()))

# %%
# Text FIT on a tiny transformer
# ------------------------------
texts, labels, _ = make_spurious_task(300 if TINY else 3000, rho=0.9, kind="nli", random_state=0)
print(texts[0], "->", labels[0])
lm = LanguageModel(tokenizer=WordTokenizer(), n_layers=2, d_model=64, n_heads=4, max_len=40,
                   max_epochs=1 if TINY else 15, batch_size=64, lr=3e-3, device="cpu",
                   random_state=0)
text_fit = FocusInstructionLM(lm, decouple_excluded=True, random_state=0).fit(texts, labels)
print("prompt:", text_fit.make_prompts(texts[:1], "focus_C_ignore_S")[0])
text_tests = splits(50 if TINY else 300, "nli")
reports["text FIT + decoupling"] = {s: text_fit.focus_accuracy_report(*text_tests[s])
                                    for s in SPLITS}

# %%
# Focus accuracy of every instruction type on every split
# -------------------------------------------------------
fig, axes = plt.subplots(1, 3, figsize=(15, 4), sharey=True)
x = np.arange(len(FOCUS_TYPES))
for ax, (name, report) in zip(axes, reports.items()):
    for i, s in enumerate(SPLITS):
        ax.bar(x + (i - 1.5) * 0.2, [report[s][t] for t in FOCUS_TYPES], 0.2, label=s)
    ax.axhline(1 / 3, ls="--", color="grey", lw=1)
    ax.set_xticks(x, [t.replace("_", " ") for t in FOCUS_TYPES], rotation=30, ha="right")
    ax.set_title(name)
axes[0].set_ylabel("focus accuracy")
axes[0].legend(ncol=4, loc="upper center", fontsize=8)
axes[0].set_ylim(0, 1.2)
fig.tight_layout()
fig.savefig("plot_focus_instruction_tuning.png", dpi=100)
