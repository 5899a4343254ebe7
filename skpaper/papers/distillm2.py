"""DistiLLM-2 (Ko et al., ICML 2025): contrastive distillation of language models.

The paper distils 7-9B chat models into 1-2B students and judges them with
GPT-4o. At CPU scale the same comparison runs on a procedural language: a
sparse order-2 Markov source. A 2-layer transformer teacher is trained on it
inside the claim, a 1-layer student gets a short supervised warm-up, and
every method then trains the student for the same number of steps on the
same prompts. The judge is a proxy: the teacher's per-token negative
log-likelihood of the student's samples (lower is better; the floor is the
teacher's NLL of its own samples).

Every comparison is paired: each seed draws its own Markov source, teacher and
initial student, and every method distils that one student. The negative
control of the asserting claims is DistiLLM-2 with its contrastive term off
(``beta=0``: the skew KL on teacher responses alone, the student responses
still sampled but unused), the same optimiser steps from the same student.
"""

import numpy as np

from ._comparison import ArmRun, EffectOfInterest, run_comparison
from ._plotting import new_figure, save_figure
from ._registry import ClaimResult, register_claim, register_paper, shared_cache
from ._stats import claim_seeds, paired_difference

SLUG = "distillm2"

register_paper(SLUG, "DistiLLM-2: A Contrastive Approach Boosts the Distillation of LLMs",
               module="skpaper.language")

#: Judge-proxy lead (nats/token) of DistiLLM-2 over forward KL and SeqKD measured by the
#: full-scale prototype of the specification (not a figure of the paper); recorded only.
_SPEC_PROTOTYPE_MARGIN = 0.5
_NLL_EOI = EffectOfInterest(
    0.1, "ours", "a tenth of a nat per token in the judge proxy, a fifth of the lead the "
    "specification's full-scale prototype measured: the smallest lead we would call a win")
_SIGNATURE_EOI = EffectOfInterest(
    -0.05, "ours", "a twentieth of a nat per token (under 2% of the about 3 nats of the "
    "student's own samples): the smallest push-down of the student's own responses by the "
    "contrastive term that shows in the per-token log-likelihood")

#: Every method distils the same student for the same steps. "distillm2_no_contrast" is
#: the negative control: DistiLLM-2's loss with beta=0, i.e. without its student-response
#: (skew reverse KL) term. GKD's mixture weight follows the official trainer (0.9).
_METHODS = ("seqkd", "fkl", "skl_both", "srkl_both", "gjsd", "distillm2",
            "distillm2_no_contrast")
_METHOD_PARAMS = {"distillm2_no_contrast": dict(loss="distillm2", beta=0.0),
                  "gjsd": dict(jsd_beta=0.9)}
_CONTROL = "distillm2_no_contrast"
#: Methods that also read the student's own responses (two sequences per prompt and step).
_TWO_RESPONSES = ("skl_both", "srkl_both", "gjsd", "distillm2", "distillm2_no_contrast")
#: DistiLLM (the authors' first version), as its official trainer runs it: the skew reverse
#: KL on both response types.
_DISTILLM_V1 = "srkl_both"

#: Looks of every quick claim, from the power figures of the calibration setting
#: (``_calibration()``: seed stream key 99, 16 symbols, length 20, 160 prompts; four
#: worlds). There, beats-fkl-and-seqkd's lead was 0.089 (SD 0.033): 3 seeds for one look,
#: its control 3; the other two checks sat near 0 (strongest baselines +0.003, signature
#: -0.007), which no affordable number of seeds tells from 0, but 2-3 seeds tell from
#: their effects of interest (a contradiction), and their controls needed 3 and 2.
#: Looks 4, 8: the first past every one-look figure, the second in reserve.
_QUICK_LOOKS = (4, 8)

_SCALES = {
    # Not a scale: the calibration setting of the looks (its own seed stream, key 99, and a
    # smaller language: 16 symbols, length 20).
    "calibration": dict(looks=(), n_symbols=16, length=20, prompt_len=5, n_train=768,
                        n_prompts=160, n_eval=96, teacher=(2, 48, 19), student=(1, 32, 4),
                        rounds=3, epochs=6, batch=48, lr=2e-3, curve_every=3,
                        methods=_METHODS),
    # Sequential paired seeds (looks), each its own Markov source, teacher and initial
    # student; teacher/student = (layers, width, training epochs at batch 64).
    # "full" is the reference prototype: 24 symbols, 600 teacher steps, 60 student steps, 300
    # distillation steps at batch 128 with student samples regenerated every 100 steps.
    "smoke": dict(looks=(2,), n_symbols=8, length=12, prompt_len=4, n_train=192,
                  n_prompts=64, n_eval=32, teacher=(1, 32, 4), student=(1, 16, 1),
                  rounds=2, epochs=1, batch=32, lr=3e-3, curve_every=1, methods=_METHODS),
    # One world per seed costs a teacher each: fewer prompts per world than a single world
    # could afford (192 prompts, 72 distillation steps).
    "quick": dict(looks=_QUICK_LOOKS, n_symbols=24, length=24, prompt_len=6, n_train=1024,
                  n_prompts=192, n_eval=128, teacher=(2, 48, 19), student=(1, 32, 4),
                  rounds=3, epochs=6, batch=48, lr=2e-3, curve_every=3, methods=_METHODS),
    "full": dict(looks=(5, 10), n_symbols=24, length=24, prompt_len=6, n_train=1536,
                 n_prompts=1280, n_eval=512, teacher=(2, 64, 25), student=(1, 32, 3),
                 rounds=3, epochs=10, batch=128, lr=2e-3, curve_every=2, methods=_METHODS),
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


@shared_cache(maxsize=32)
def _world(scale, world_seed):
    """One paired seed: its Markov source, teacher and student, and every method's student."""
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
    n_parameters = sum(p.numel() for p in student.module_.parameters())

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
    init["logq_rejected_last_epoch"] = float("nan")
    start = judge(student.module_, curve_ids)[0]
    rows = [init]
    for method in cfg["methods"]:
        curve = _Curve(lambda est: judge(est.module_, curve_ids)[0], cfg["curve_every"])
        params = {"loss": method, **_METHOD_PARAMS.get(method, {})}
        distiller = ContrastiveDistiller(
            teacher=FrozenEstimator(teacher), student=FrozenEstimator(student),
            n_rounds=cfg["rounds"], max_epochs=cfg["epochs"],
            batch_size=cfg["batch"], lr=cfg["lr"], max_new_tokens=n_new,
            device=device, random_state=world_seed + 2, callbacks=[curve],
            **params,
        ).fit(prompts)
        row = describe(distiller.module_, method, [start] + distiller.callbacks_[0].values)
        # log q of the student responses of the last epoch, under the student being trained
        # (what the contrastive term acts on; NaN for the methods that sample none).
        row["logq_rejected_last_epoch"] = float(distiller.history_[-1]["logq_rejected"])
        rows.append(row)
    steps = cfg["rounds"] * cfg["epochs"] * -(-len(prompts) // cfg["batch"])
    return {"world": int(world_seed), "floor": floor, "entropy_rate": source["entropy_rate"],
            "rows": rows, "parameters": int(n_parameters), "train_steps": int(steps),
            "n_prompts": len(prompts)}


def _by_method(runs, key):
    table = {}
    for run in runs:
        for row in run["rows"]:
            table.setdefault(row["method"], []).append(row[key])
    return {m: float(np.mean(v)) for m, v in table.items()}, table


def _arms(runs, methods):
    """Budget of every arm: student parameters, optimiser steps, prompts and sequences."""
    run = runs[0]
    return {m: {"parameters": run["parameters"], "train_steps": run["train_steps"],
                "train_examples": run["n_prompts"],
                "sequences_per_prompt": 2 if m in _TWO_RESPONSES else 1}
            for m in methods}


def _nll(run, method):
    return next(row["teacher_nll"] for row in run["rows"] if row["method"] == method)


def _logq_own(run, method):
    return next(row["logq_own_initial"] for row in run["rows"] if row["method"] == method)


def _nll_comparison(scale, seed, baselines):
    """min over ``baselines`` of (baseline NLL - method NLL) per seed, DistiLLM-2 and control."""
    cfg = _SCALES[scale]

    def arm(method):
        def run(s):
            world = _world(scale, s)
            return ArmRun(min(_nll(world, b) - _nll(world, method) for b in baselines),
                          parameters=world["parameters"], train_steps=world["train_steps"],
                          train_examples=world["n_prompts"])
        return run

    # One seed stream for every claim of the paper (key 0), so the worlds are shared.
    cmp = run_comparison({"distillm2": arm("distillm2"), _CONTROL: arm(_CONTROL)},
                         method="distillm2", baseline=None, control_method=_CONTROL,
                         seed=seed, looks=cfg["looks"], effect_of_interest=_NLL_EOI,
                         metric=f"min over {', '.join(baselines)} of (baseline - method) "
                                "teacher NLL, nats/token")
    runs = [_world(scale, s) for s in cmp.seeds]
    means, table = _by_method(runs, "teacher_nll")
    direct = paired_difference(table[_CONTROL], table["distillm2"], alternative="greater")
    observed = {"teacher_nll_mean": means, "teacher_nll_per_seed": table,
                "gain_nats_per_baseline": {
                    b: paired_difference(table[b], table["distillm2"]).to_dict()
                    for b in baselines},
                "ablation_no_contrast_minus_distillm2": direct.to_dict(),
                "teacher_floor": float(np.mean([r["floor"] for r in runs]))}
    return cmp, runs, observed


_NOTES = ("Judge proxy (the teacher's NLL of student samples) instead of GPT-4o win rates; "
          "teacher and student are trained in the claim. Every seed draws its own Markov "
          "source, teacher and initial student, so the bounds cover the world as well as the "
          "optimiser. Every method runs the same optimiser steps from the same initial student "
          "on the same prompts (the methods that also use the student's responses see two "
          "sequences per prompt, as in the paper). GKD's mixture weight is the official "
          "trainer's 0.9; DistiLLM (v1) is the skew reverse KL on both response types "
          "(srkl_both), as its official trainer runs it; skl_both (the forward skew KL on both) "
          "is the paper's same-loss ablation. Looks from the power figures of a calibration "
          "setting (seed key 99, 16 symbols, length 20, 160 prompts; see _calibration).")


@register_claim(SLUG, "beats-fkl-and-seqkd",
                "Judged by the teacher's NLL of student generations, DistiLLM-2 beats forward-KL "
                "KD and SeqKD at equal steps.",
                paper_statement="DistiLLM-2 outperforms KD (forward KL) and SeqKD on every "
                                "instruction-following benchmark (LLM-as-judge win rates, "
                                "main tables; figures not retrieved).",
                check="per seed (its own source, teacher and student), min over forward KL and "
                      "SeqKD of (baseline NLL - DistiLLM-2 NLL); over sequential seeds its lower "
                      "95% bound > 0",
                control="contrastive term off: DistiLLM-2's loss with beta=0 (skew KL on "
                        "teacher responses only) in DistiLLM-2's place",
                effect_of_interest=_NLL_EOI)
def _claim_beats_baselines(scale, seed, out_dir):
    cmp, runs, observed = _nll_comparison(scale, seed, ("fkl", "seqkd"))
    fig, ax = new_figure(figsize=(6, 4))
    colors = {"seqkd": "tab:gray", "fkl": "tab:blue", "skl_both": "tab:orange",
              "srkl_both": "tab:brown",
              "distillm2": "tab:red", "gjsd": "tab:green", _CONTROL: "tab:purple"}
    for run in runs:
        for row in run["rows"][1:]:
            epochs = np.arange(len(row["curve"])) * _SCALES[scale]["curve_every"]
            ax.plot(epochs, row["curve"], color=colors[row["method"]], alpha=0.7,
                    label=row["method"] if run is runs[0] else None)
    ax.axhline(runs[0]["floor"], color="k", ls="--", lw=1, label="teacher on its own samples")
    ax.set_xlabel("epoch")
    ax.set_ylabel("teacher NLL of student samples (nats/token)")
    ax.set_title("DistiLLM-2 vs baselines on Markov languages")
    ax.legend(fontsize=7)
    artifact = save_figure(fig, out_dir, "learning_curves")
    observed["spec_prototype"] = {"margin": _SPEC_PROTOTYPE_MARGIN,
                                  "teacher_nll": {"distillm2": 2.76, "fkl": 3.43, "seqkd": 4.24}}
    return cmp.claim_result(observed=observed, artifacts=[artifact], notes=_NOTES)


@register_claim(SLUG, "beats-strongest-baselines",
                "DistiLLM-2 also beats the strongest baselines that use the student's own "
                "responses: DistiLLM (skew reverse KL on both data types) and GKD's "
                "generalised JSD.",
                paper_statement="DistiLLM-2 outperforms DistiLLM (skew KL) and GKD (generalised "
                                "JSD on on-policy samples); its ablation replaces the "
                                "contrastive loss by one loss on both data types and loses "
                                "(tables not retrieved).",
                check="per seed, min over srkl_both (DistiLLM) and gjsd (GKD) of (baseline NLL - "
                      "DistiLLM-2 NLL); "
                      "over sequential seeds its lower 95% bound > 0",
                control="contrastive term off: DistiLLM-2's loss with beta=0 (skew KL on "
                        "teacher responses only) in DistiLLM-2's place",
                effect_of_interest=_NLL_EOI)
def _claim_strongest(scale, seed, out_dir):
    cmp, runs, observed = _nll_comparison(scale, seed, (_DISTILLM_V1, "gjsd"))
    _, table = _by_method(runs, "teacher_nll")
    observed["gain_nats_over_skl_both"] = paired_difference(table["skl_both"],
                                                            table["distillm2"]).to_dict()
    fig, ax = new_figure(figsize=(5.5, 3.8))
    _, table = _by_method(runs, "teacher_nll")
    methods = [m for m in table if m != "student init"]
    ax.boxplot([table[m] for m in methods])
    ax.set_xticks(range(1, len(methods) + 1), methods, rotation=20, fontsize=8)
    ax.set_ylabel("teacher NLL of student samples (nats/token)")
    ax.set_title("per-seed judge proxy")
    artifact = save_figure(fig, out_dir, "nll_by_method")
    return cmp.claim_result(
        observed=observed, artifacts=[artifact],
        notes=_NOTES + " The prototype of the specification measured a lead of only about 0.1 "
                       "nats over skl_both.")


@register_claim(SLUG, "contrastive-signature",
                "DistiLLM-2's contrastive term pushes down the student's likelihood of its own "
                "earlier samples: below the same loss without that term.",
                paper_statement="The contrastive loss raises the likelihood of teacher "
                                "responses and pushes down that of student responses (the "
                                "paper's analysis of the loss dynamics).",
                check="per seed, log q_DistiLLM-2 - log q_(beta=0) of the initial student's "
                      "samples (per token); over sequential seeds its upper 95% bound < 0",
                control="the student's responses used without the contrast: the same skew KL "
                        "on both response types (skl_both) in DistiLLM-2's place",
                effect_of_interest=_SIGNATURE_EOI)
def _claim_signature(scale, seed, out_dir):
    cfg = _SCALES[scale]

    def arm(method):
        def run(s):
            world = _world(scale, s)
            return ArmRun(_logq_own(world, method), parameters=world["parameters"],
                          train_steps=world["train_steps"], train_examples=world["n_prompts"])
        return run

    cmp = run_comparison({m: arm(m) for m in ("distillm2", "skl_both", _CONTROL)},
                         method="distillm2", baseline=_CONTROL, control_method="skl_both",
                         seed=seed, looks=cfg["looks"], effect_of_interest=_SIGNATURE_EOI,
                         alternative="less",
                         metric="log q of the initial student's samples, nats/token")
    runs = [_world(scale, s) for s in cmp.seeds]
    own, table = _by_method(runs, "logq_own_initial")
    teacher_ll, teacher_table = _by_method(runs, "logq_teacher")
    rise = paired_difference(teacher_table["distillm2"], teacher_table["student init"],
                             alternative="greater")
    fig, ax = new_figure(figsize=(6, 4))
    for m in own:
        ax.scatter(teacher_ll[m], own[m])
        ax.annotate(m, (teacher_ll[m], own[m]), fontsize=8)
    ax.set_xlabel("log q(teacher samples) per token")
    ax.set_ylabel("log q(student's initial samples) per token")
    ax.set_title("Contrastive signature")
    artifact = save_figure(fig, out_dir, "signature")
    return cmp.claim_result(
        observed={"logq_own_initial": own, "logq_own_initial_per_seed": table,
                  "logq_teacher": teacher_ll, "teacher_logq_rise": rise.to_dict(),
                  "logq_rejected_last_epoch": _by_method(runs, "logq_rejected_last_epoch")[0],
                  "rejected_push_down_distillm2_minus_no_contrast": paired_difference(
                      _by_method(runs, "logq_rejected_last_epoch")[1]["distillm2"],
                      _by_method(runs, "logq_rejected_last_epoch")[1][_CONTROL],
                      alternative="less").to_dict()},
        artifacts=[artifact],
        notes="Per-token log-likelihood, under the distilled student, of the samples the initial "
              "student drew (temperature 0.8, top-p 0.95) on the training prompts. The paper "
              "states the push-down of the contrastive term, not that DistiLLM-2 ends lowest "
              "of all methods (SeqKD, which never sees the student's samples, may end lower). "
              "Whether the test bed can express the push-down at all is shown beside it: "
              "rejected_push_down_distillm2_minus_no_contrast compares, under the student "
              "being trained, the log q of the student responses of the last epoch (those the "
              "contrastive term acts on) with the beta=0 run's (not the same responses: each "
              "run samples its own student).",
    )


@register_claim(SLUG, "same-loss-both-types",
                "DistiLLM-2 versus the same skew KL on both data types, with the divergences "
                "of every method: reported, not asserted.",
                paper_statement="Ablation: applying one loss to both teacher and student "
                                "responses is worse than the contrastive pairing (table not "
                                "retrieved).",
                check="nothing asserted: the per-seed lead of DistiLLM-2 over skl_both and its "
                      "paired bound are reported (asserted in beats-strongest-baselines)",
                reported=True)
def _claim_same_loss(scale, seed, out_dir):
    cfg = _SCALES[scale]
    runs = [_world(scale, s) for s in claim_seeds(seed, cfg["looks"][0])]
    nll, table = _by_method(runs, "teacher_nll")
    fkl, _ = _by_method(runs, "fwd_kl")
    rkl, _ = _by_method(runs, "rev_kl")
    lead = paired_difference(table["skl_both"], table["distillm2"], alternative="greater")

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
                  "distillm2_lead_over_skl_both": lead.to_dict()},
        expected={"reported_only": True, "spec_prototype_lead": 0.1},
        passed=None, arms=_arms(runs, ("distillm2", "skl_both")), artifacts=[artifact],
        notes="Reported, not asserted: the prototype of the specification found the lead small "
              "(about 0.1 nats).",
    )


def _calibration(seed=0, n_worlds=4):
    """Power figures of the three asserting claims on the calibration setting.

    ``_SCALES["calibration"]`` is a smaller language (16 symbols, length 20, 160 prompts)
    than any scale, and its worlds come from seed stream key 99, which no claim uses.
    Returns, per claim, the per-world figures of the check and of its control and the seeds
    a one-look t test needs: for the check, to tell its calibration mean from the margin;
    for the control, to tell its calibration mean from the effect of interest.
    """
    from ._stats import seeds_needed

    worlds = [_world("calibration", s) for s in claim_seeds(seed, n_worlds, 99)]

    def lead(world, method, baselines):
        return min(_nll(world, b) - _nll(world, method) for b in baselines)

    figures = {
        "beats-fkl-and-seqkd": ([lead(w, "distillm2", ("fkl", "seqkd")) for w in worlds],
                                [lead(w, _CONTROL, ("fkl", "seqkd")) for w in worlds],
                                _NLL_EOI.value),
        "beats-strongest-baselines": (
            [lead(w, "distillm2", (_DISTILLM_V1, "gjsd")) for w in worlds],
            [lead(w, _CONTROL, (_DISTILLM_V1, "gjsd")) for w in worlds], _NLL_EOI.value),
        "contrastive-signature": (
            [_logq_own(w, "distillm2") - _logq_own(w, _CONTROL) for w in worlds],
            [_logq_own(w, "skl_both") - _logq_own(w, _CONTROL) for w in worlds],
            _SIGNATURE_EOI.value),
    }
    out = {}
    for name, (method, control, eoi) in figures.items():
        method, control = np.asarray(method), np.asarray(control)
        out[name] = {"method": method.round(4).tolist(), "control": control.round(4).tolist(),
                     "seeds_needed_check": seeds_needed(method.std(ddof=1), method.mean()),
                     "seeds_needed_control": seeds_needed(control.std(ddof=1),
                                                          eoi - control.mean())}
    return out
