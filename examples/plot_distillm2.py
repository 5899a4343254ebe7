"""
DistiLLM-2: contrastive distillation of a tiny language model
=============================================================

A 2-layer transformer teacher is trained on a procedural language (a sparse
order-2 Markov source), then distilled into a 1-layer student in three ways at
the same number of steps: sequence-level KD (fine-tuning on teacher samples),
token-level forward-KL KD, and DistiLLM-2, which pairs the skew KL on teacher
samples with the skew reverse KL on the student's own samples. The judge is
the teacher's per-token negative log-likelihood of the student's samples.
"""

import os

TINY = os.environ.get("SKPAPER_EXAMPLE_SIZE") == "tiny"  # seconds-long run, for the tests

# %%
# Data, teacher and student
# -------------------------
import matplotlib.pyplot as plt
import torch
from sklearn.frozen import FrozenEstimator

from skpaper.datasets import make_markov_text
from skpaper.language import (
    CharTokenizer,
    ContrastiveDistiller,
    LanguageModel,
    sample_responses,
    sequence_log_probs,
)

torch.set_num_threads(1)
texts, source = make_markov_text(1300 if TINY else 1400, n_symbols=16, length=16, random_state=0,
                                 return_model=True)
train, pool, held = texts[:1024], texts[1024:1280], texts[1280:]
tokenizer = CharTokenizer(alphabet=source["alphabet"])
common = dict(tokenizer=tokenizer, max_len=18, batch_size=64, lr=3e-3, device="cpu",
              random_state=0)
teacher = LanguageModel(n_layers=2, d_model=48, n_heads=4, max_epochs=1 if TINY else 20,
                        **common).fit(train)
student = LanguageModel(n_layers=1, d_model=24, n_heads=2, max_epochs=2, **common).fit(train)
print(f"teacher test score {teacher.score(held):.3f}, student {student.score(held):.3f} "
      f"(minus the source entropy: {-source['entropy_rate']:.3f})")

# %%
# The judge: the teacher's NLL of the student's samples
# -----------------------------------------------------
prompts = [t[:4] for t in pool]
eval_ids = [[tokenizer.bos_id] + tokenizer.encode(t[:4]) for t in held]


def teacher_nll(module):
    responses = sample_responses(module, eval_ids, max_new_tokens=13, eos_id=tokenizer.eos_id,
                                 generator=torch.Generator().manual_seed(0))
    sums, counts = sequence_log_probs(teacher.module_,
                                      [p + r for p, r in zip(eval_ids, responses)],
                                      [len(p) for p in eval_ids])
    return float(-sums.sum() / counts.sum())


class Judge:
    """Callback recording the judge after every epoch."""

    def on_train_begin(self, estimator):
        self.curve = [teacher_nll(student.module_)]

    def on_epoch_end(self, estimator, record):
        self.curve.append(teacher_nll(estimator.module_))

    def on_train_end(self, estimator):
        pass


# %%
# Distil with each loss at equal steps
# ------------------------------------
curves, signature = {}, {}
for loss in ("seqkd", "fkl", "distillm2"):
    judge = Judge()
    distiller = ContrastiveDistiller(
        teacher=FrozenEstimator(teacher), student=FrozenEstimator(student), loss=loss,
        n_rounds=1 if TINY else 3, max_epochs=1 if TINY else 8, batch_size=64, lr=2e-3,
        max_new_tokens=13, device="cpu",
        random_state=0, callbacks=[judge]).fit(prompts)
    # The distiller trains with a fitted copy of each callback, kept in callbacks_.
    curves[loss] = distiller.callbacks_[0].curve
    signature[loss] = [r["logq_rejected"] for r in distiller.history_]
    print(f"{loss:10s} teacher NLL of student samples: {curves[loss][-1]:.3f}")

# %%
# Learning curves and the contrastive signature
# ---------------------------------------------
fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(10, 4))
for loss, curve in curves.items():
    ax1.plot(curve, label=loss)
ax1.set_xlabel("epoch")
ax1.set_ylabel("teacher NLL of student samples")
ax1.legend()
ax2.plot(signature["distillm2"], marker="o")
ax2.set_xlabel("epoch (student samples drawn again every 8)")
ax2.set_ylabel("log q(student samples) per token")
ax2.set_title("DistiLLM-2 pushes down its own samples")
fig.tight_layout()
fig.savefig("plot_distillm2.png", dpi=100)
