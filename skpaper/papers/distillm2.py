"""DistiLLM-2 (Ko et al., ICML 2025): contrastive distillation of language models.

The paper distils 7-9B chat models into 1-2B students and judges them with
GPT-4o. At CPU scale the same comparison runs on a procedural language: a
sparse order-2 Markov source. A 2-layer transformer teacher is trained on it
inside the claim, a 1-layer student gets a short supervised warm-up, and
every method then trains the student for the same number of steps on the
same prompts. The judge is a proxy: the teacher's per-token negative
log-likelihood of the student's samples (lower is better; the floor is the
teacher's NLL of its own samples).
"""

import functools

import numpy as np

from ._plotting import new_figure, save_figure
from ._registry import ClaimResult, register_claim, register_paper

SLUG = "distillm2"

register_paper(SLUG, "DistiLLM-2: A Contrastive Approach Boosts the Distillation of LLMs",
               module="skpaper.language")

#: Judge-proxy margin (nats) by which DistiLLM-2 must beat forward KL and SeqKD.
_MARGIN = 0.5

_METHODS = ("seqkd", "fkl", "skl_both", "distillm2")

_SCALES = {
    # n_worlds Markov sources (each with its own teacher and student) x n_seeds distillation
    # seeds; teacher/student = (layers, width, training epochs at batch 64). "full" is the
    # reference prototype: 24 symbols, 600 teacher steps, 60 student steps, 300 distillation
    # steps at batch 128 with student samples regenerated every 100 steps.
    "smoke": dict(n_worlds=1, n_seeds=1, n_symbols=8, length=12, prompt_len=4, n_train=256,
                  n_prompts=64, n_eval=32, teacher=(1, 32, 6), student=(1, 16, 1),
                  rounds=2, epochs=1, batch=32, lr=3e-3, curve_every=1, methods=_METHODS),
    "quick": dict(n_worlds=1, n_seeds=3, n_symbols=24, length=24, prompt_len=6, n_train=1024,
                  n_prompts=384, n_eval=128, teacher=(2, 48, 19), student=(1, 32, 4),
                  rounds=3, epochs=9, batch=64, lr=2e-3, curve_every=3, methods=_METHODS),
    "full": dict(n_worlds=3, n_seeds=1, n_symbols=24, length=24, prompt_len=6, n_train=1536,
                 n_prompts=1280, n_eval=512, teacher=(2, 64, 25), student=(1, 32, 3),
                 rounds=3, epochs=10, batch=128, lr=2e-3, curve_every=2,
                 methods=_METHODS + ("gjsd",)),
}


class _Curve:
    """Callback: the judge proxy on a few evaluation prompts after every epoch."""

    def __init__(self, judge, every):
        self.judge = judge
        self.every = every
        self.values = []

    def on_train_begin(self, estimator):
        self.values = []

    def on_epoch_end(self, estimator, record):
        if record["epoch"] % self.every == 0:
            self.values.append(self.judge(estimator))

    def on_train_end(self, estimator):
        pass


def _encode(tok, prompts):
    return [[tok.bos_id] + tok.encode(p) for p in prompts]


def _mean_token_log_prob(module, prompts, responses):
    from skpaper.language import sequence_log_probs

    seqs = [p + r for p, r in zip(prompts, responses)]
    sums, counts = sequence_log_probs(module, seqs, [len(p) for p in prompts])
    return float(sums.sum() / max(counts.sum(), 1))


def _token_divergences(teacher_module, student_module, prompts, responses):
    """Token-mean forward and reverse KL between teacher and student on given responses."""
    import torch

    from skpaper.language import forward_kl, lm_logits, pad_sequences, reverse_kl

    device = next(student_module.parameters()).device
    ids, mask = pad_sequences([p + r for p, r in zip(prompts, responses)], 0, device,
                              [len(p) for p in prompts])
    with torch.no_grad():
        p_logits = lm_logits(teacher_module, ids)[:, :-1].float()
        q_logits = lm_logits(student_module, ids)[:, :-1].float()
        fkl = forward_kl(p_logits, q_logits, mask, reduction="token_mean")
        rkl = reverse_kl(p_logits, q_logits, mask, reduction="token_mean")
    return float(fkl), float(rkl)


@functools.lru_cache(maxsize=8)
def _experiment(scale, seed):
    """Train teacher and student, run every method; shared by the three claims."""
    import torch
    from sklearn.frozen import FrozenEstimator

    from skpaper.datasets import make_markov_text
    from skpaper.language import (
        CharTokenizer,
        ContrastiveDistiller,
        LanguageModel,
        sample_responses,
    )

    cfg = _SCALES[scale]
    # smoke and quick stay on the CPU so that their figures are the same on every machine.
    device = "auto" if scale == "full" else "cpu"
    n_new = cfg["length"] - cfg["prompt_len"] + 1  # the response and its <eos>
    runs = []
    for world in range(cfg["n_worlds"]):
        world_seed = seed * 1000 + world
        n_total = cfg["n_train"] + cfg["n_prompts"] + cfg["n_eval"]
        texts, source = make_markov_text(
            n_total, n_symbols=cfg["n_symbols"], order=2, length=cfg["length"],
            concentration=0.15, random_state=world_seed, return_model=True)
        train = texts[:cfg["n_train"]]
        prompts = [t[:cfg["prompt_len"]] for t in texts[cfg["n_train"]:-cfg["n_eval"]]]
        eval_prompts = [t[:cfg["prompt_len"]] for t in texts[-cfg["n_eval"]:]]
        tok = CharTokenizer(alphabet=source["alphabet"])
        layers, width, epochs = cfg["teacher"]
        teacher = LanguageModel(tokenizer=tok, n_layers=layers, d_model=width, n_heads=4,
                                max_len=cfg["length"] + 2, max_epochs=epochs, batch_size=64,
                                lr=3e-3, device=device, random_state=world_seed).fit(train)
        layers, width, epochs = cfg["student"]
        student = LanguageModel(tokenizer=tok, n_layers=layers, d_model=width, n_heads=2,
                                max_len=cfg["length"] + 2, max_epochs=epochs, batch_size=64,
                                lr=3e-3, device=device, random_state=world_seed + 1).fit(train)

        eval_ids = _encode(tok, eval_prompts)
        train_ids = _encode(tok, prompts)

        def sample(module, prompt_ids, temperature=1.0, top_p=1.0):
            # The same random numbers for every model: the methods are compared on paired draws.
            return sample_responses(module, prompt_ids, max_new_tokens=n_new,
                                    temperature=temperature, top_p=top_p, eos_id=tok.eos_id,
                                    generator=torch.Generator().manual_seed(world_seed),
                                    max_len=cfg["length"] + 2)

        teacher_eval = sample(teacher.module_, eval_ids)
        floor = -_mean_token_log_prob(teacher.module_, eval_ids, teacher_eval)
        # The student's own earlier samples: what the first round of DistiLLM-2 rejects.
        student_samples = sample(student.module_, train_ids, 0.8, 0.95)

        def judge(module, ids):
            responses = sample(module, ids)
            return -_mean_token_log_prob(teacher.module_, ids, responses), responses

        def describe(module, name, curve=()):
            nll, responses = judge(module, eval_ids)
            fkl, _ = _token_divergences(teacher.module_, module, eval_ids, teacher_eval)
            _, rkl = _token_divergences(teacher.module_, module, eval_ids, responses)
            return {"method": name, "teacher_nll": nll, "fwd_kl": fkl, "rev_kl": rkl,
                    "logq_teacher": _mean_token_log_prob(module, eval_ids, teacher_eval),
                    "logq_own_initial": _mean_token_log_prob(module, train_ids, student_samples),
                    "curve": list(curve)}

        curve_ids = eval_ids[:32]
        init = describe(student.module_, "student init")
        start = judge(student.module_, curve_ids)[0]
        for rep in range(cfg["n_seeds"]):
            rows = [init]
            for method in cfg["methods"]:
                curve = _Curve(lambda est: judge(est.module_, curve_ids)[0], cfg["curve_every"])
                distiller = ContrastiveDistiller(
                    teacher=FrozenEstimator(teacher), student=FrozenEstimator(student),
                    loss=method, n_rounds=cfg["rounds"], max_epochs=cfg["epochs"],
                    batch_size=cfg["batch"], lr=cfg["lr"], max_new_tokens=n_new,
                    device=device, random_state=world_seed * 10 + rep, callbacks=[curve],
                ).fit(prompts)
                rows.append(describe(distiller.module_, method, [start] + curve.values))
            runs.append({"world": world, "seed": rep, "floor": floor,
                         "entropy_rate": source["entropy_rate"], "rows": rows})
    return runs


def _by_method(runs, key):
    table = {}
    for run in runs:
        for row in run["rows"]:
            table.setdefault(row["method"], []).append(row[key])
    return {m: float(np.mean(v)) for m, v in table.items()}, table


@register_claim(SLUG, "beats-fkl-and-seqkd",
                "Judged by the teacher's NLL of student generations, DistiLLM-2 beats forward-KL "
                "KD and SeqKD by at least 0.5 nats at equal steps (3 seeds).")
def _claim_beats_baselines(scale, seed, out_dir):
    runs = _experiment(scale, seed)
    means, table = _by_method(runs, "teacher_nll")
    margins = {b: [f - d for f, d in zip(table[b], table["distillm2"])]
               for b in ("fkl", "seqkd")}
    worst = {b: float(min(v)) for b, v in margins.items()}
    passed = all(v >= _MARGIN for v in worst.values())

    fig, ax = new_figure(figsize=(6, 4))
    colors = {"seqkd": "tab:gray", "fkl": "tab:blue", "skl_both": "tab:orange",
              "distillm2": "tab:red", "gjsd": "tab:green"}
    for run in runs:
        for row in run["rows"][1:]:
            epochs = np.arange(len(row["curve"])) * _SCALES[scale]["curve_every"]
            ax.plot(epochs, row["curve"], color=colors[row["method"]], alpha=0.8,
                    label=row["method"] if run is runs[0] else None)
    ax.axhline(runs[0]["floor"], color="k", ls="--", lw=1, label="teacher on its own samples")
    ax.set_xlabel("epoch")
    ax.set_ylabel("teacher NLL of student samples (nats/token)")
    ax.set_title("DistiLLM-2 vs baselines on a Markov language")
    ax.legend(fontsize=8)
    artifact = save_figure(fig, out_dir, "learning_curves")
    return ClaimResult(
        observed={"teacher_nll_mean": means, "teacher_nll_per_run": table,
                  "margin_min_over_seeds": worst,
                  "teacher_floor": float(np.mean([r["floor"] for r in runs])),
                  "n_runs": len(runs)},
        expected={"margin_over_fkl_and_seqkd_min": _MARGIN,
                  "spec_prototype": {"distillm2": 2.76, "fkl": 3.43, "seqkd": 4.24}},
        passed=bool(passed), artifacts=[artifact],
        notes=("Judge proxy instead of GPT-4o win rates; teacher and student are trained in the "
               "claim. Every method runs the same steps from the same student; margins are per "
               "seed (the minimum is reported). 'quick' trains a smaller teacher for half the "
               "prototype's steps and distils for 162 instead of 300 steps, so the gaps between "
               "methods are smaller there; 'full' is the full prototype (3 Markov worlds)."),
    )


@register_claim(SLUG, "contrastive-signature",
                "DistiLLM-2 lowers the student's likelihood of its own earlier samples the most "
                "of all methods, while raising the likelihood of teacher samples.")
def _claim_signature(scale, seed, out_dir):
    runs = _experiment(scale, seed)
    own, table = _by_method(runs, "logq_own_initial")
    teacher_ll, _ = _by_method(runs, "logq_teacher")
    lowest = min((m for m in own if m != "student init"), key=own.get)
    wins = [min((r for r in run["rows"][1:]), key=lambda r: r["logq_own_initial"])["method"]
            == "distillm2" for run in runs]
    rises = teacher_ll["distillm2"] > teacher_ll["student init"]
    passed = all(wins) and rises

    fig, ax = new_figure(figsize=(6, 4))
    methods = [m for m in own]
    ax.scatter([teacher_ll[m] for m in methods], [own[m] for m in methods])
    for m in methods:
        ax.annotate(m, (teacher_ll[m], own[m]), fontsize=8)
    ax.set_xlabel("log q(teacher samples) per token")
    ax.set_ylabel("log q(student's initial samples) per token")
    ax.set_title("Contrastive signature")
    artifact = save_figure(fig, out_dir, "signature")
    return ClaimResult(
        observed={"logq_own_initial": own, "logq_own_initial_per_run": table,
                  "logq_teacher": teacher_ll, "lowest": lowest,
                  "distillm2_lowest_in_each_run": wins},
        expected={"lowest": "distillm2", "logq_teacher_rises": True},
        passed=bool(passed), artifacts=[artifact],
        notes="Per-token log-likelihood, under the distilled student, of the samples the initial "
              "student drew (temperature 0.8, top-p 0.95) on the training prompts.",
    )


@register_claim(SLUG, "same-loss-both-types",
                "DistiLLM-2 versus the same skew KL on both data types: reported, not asserted "
                "(the paper's ablation; a preliminary prototype measured a lead of about 0.1 nats).")
def _claim_same_loss(scale, seed, out_dir):
    runs = _experiment(scale, seed)
    nll, table = _by_method(runs, "teacher_nll")
    fkl, _ = _by_method(runs, "fwd_kl")
    rkl, _ = _by_method(runs, "rev_kl")
    lead = [a - b for a, b in zip(table["skl_both"], table["distillm2"])]

    fig, ax = new_figure(figsize=(6, 4))
    methods = list(nll)
    x = np.arange(len(methods))
    ax.bar(x - 0.2, [fkl[m] for m in methods], 0.4, label="forward KL (teacher samples)")
    ax.bar(x + 0.2, [rkl[m] for m in methods], 0.4, label="reverse KL (student samples)")
    ax.set_xticks(x, methods, rotation=20, fontsize=8)
    ax.set_ylabel("token KL (nats)")
    ax.legend(fontsize=8)
    artifact = save_figure(fig, out_dir, "divergences")
    return ClaimResult(
        observed={"teacher_nll": nll, "fwd_kl": fkl, "rev_kl": rkl,
                  "distillm2_lead_over_skl_both": [float(v) for v in lead]},
        expected={"reported_only": True, "spec_prototype_lead": 0.1},
        passed=True, artifacts=[artifact],
        notes="Reported, not asserted: a preliminary prototype found the lead small (about 0.1).",
    )
