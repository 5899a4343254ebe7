"""DistiLLM-2 against the distillation losses a user would reach for instead.

The natural peer is TRL's ``GKDTrainer`` (generalised JSD on a mix of student and
dataset samples). TRL needs transformers, accelerate and datasets and trains
Hugging Face models only, so it is not installed here; its loss is
``loss="gjsd"`` of :class:`~skpaper.language.ContrastiveDistiller` (same formula,
``beta=0.5``), and forward-KL KD (``loss="fkl"``) is the classic peer.

Cases:

- the skew KL kernel (log-space mixture with ``logsumexp``) against the naive
  probability-space mixture ``log(a softmax(p) + (1 - a) softmax(q))``: time,
  agreement on ordinary logits, and whether each stays finite on extreme
  (float32, +-80) logits;
- distillation of a 2-layer teacher into a 1-layer student on a Markov
  language at equal steps: DistiLLM-2 against GKD's JSD and against forward
  KL. Besides the time, each side reports the judge proxy (the teacher's
  per-token NLL of student samples, lower is better).

Run: ``python benchmarks/bench_language.py [--quick] [--repeat N] [--json out.json]``.
"""

import math

import torch
from _harness import Case, main_cli
from sklearn.frozen import FrozenEstimator

from skpaper.datasets import make_markov_text
from skpaper.language import (
    CharTokenizer,
    ContrastiveDistiller,
    LanguageModel,
    sample_responses,
    sequence_log_probs,
    skew_kl,
)


def _naive_skew_kl(p_logits, q_logits, alpha):
    p, q = p_logits.softmax(-1), q_logits.softmax(-1)
    mix = alpha * p + (1 - alpha) * q
    return (p * (p.log() - mix.log())).sum(-1).mean()


def _kernel_case(quick):
    gen = torch.Generator().manual_seed(0)
    shape = (16, 64, 256) if quick else (64, 128, 1024)
    p, q = torch.randn(*shape, generator=gen), torch.randn(*shape, generator=gen)
    extreme_p, extreme_q = p * 80, -q * 80

    def ours():
        value = skew_kl(p, q, alpha=0.1, reduction="token_mean")
        return {"value": float(value), "finite_on_extreme_logits":
                bool(torch.isfinite(skew_kl(extreme_p, extreme_q, 0.1, reduction="token_mean")))}

    def peer():
        value = _naive_skew_kl(p, q, 0.1)
        return {"value": float(value), "finite_on_extreme_logits":
                bool(torch.isfinite(_naive_skew_kl(extreme_p, extreme_q, 0.1)))}

    return Case(f"skew KL {'x'.join(map(str, shape))}", ours=ours, peer=peer,
                peer_name="naive mixture", items=shape[0] * shape[1],
                params={"shape": shape})


def _distillation_cases(quick):
    n_symbols, length, prompt_len = (12, 16, 4) if quick else (24, 24, 6)
    texts, source = make_markov_text(1024 + 256 + 128, n_symbols=n_symbols, length=length,
                                     random_state=0, return_model=True)
    train, pool, held = texts[:1024], texts[1024:1280], texts[1280:]
    tok = CharTokenizer(alphabet=source["alphabet"])
    common = dict(tokenizer=tok, max_len=length + 2, batch_size=64, lr=3e-3, device="cpu",
                  random_state=0)
    teacher = LanguageModel(n_layers=2, d_model=48, n_heads=4,
                            max_epochs=8 if quick else 19, **common).fit(train)
    student = LanguageModel(n_layers=1, d_model=32, n_heads=2, max_epochs=2, **common).fit(train)
    prompts = [t[:prompt_len] for t in pool]
    eval_ids = [[tok.bos_id] + tok.encode(t[:prompt_len]) for t in held]
    n_new = length - prompt_len + 1

    def judge(distiller):
        responses = sample_responses(distiller.module_, eval_ids, max_new_tokens=n_new,
                                     eos_id=tok.eos_id, generator=torch.Generator().manual_seed(0))
        sums, counts = sequence_log_probs(teacher.module_,
                                          [p + r for p, r in zip(eval_ids, responses)],
                                          [len(p) for p in eval_ids])
        return float(-sums.sum() / counts.sum())

    def run(loss):
        def fit():
            distiller = ContrastiveDistiller(
                teacher=FrozenEstimator(teacher), student=FrozenEstimator(student), loss=loss,
                n_rounds=3, max_epochs=2 if quick else 6, batch_size=64, lr=2e-3,
                max_new_tokens=n_new, device="cpu", random_state=0).fit(prompts)
            steps = distiller.n_iter_ * math.ceil(len(prompts) / 64)
            return {"teacher_nll": judge(distiller), "steps": steps}
        return fit

    params = {"n_symbols": n_symbols, "prompts": len(prompts)}
    return [Case("distillation: DistiLLM-2 vs GKD", ours=run("distillm2"), peer=run("gjsd"),
                 peer_name="GKD JSD (TRL)", params=params),
            Case("distillation: DistiLLM-2 vs KD", ours=run("distillm2"), peer=run("fkl"),
                 peer_name="forward KL", params=params)]


def make_cases(quick):
    torch.set_num_threads(1)
    return [_kernel_case(quick), *_distillation_cases(quick)]


if __name__ == "__main__":
    results = main_cli(make_cases, description=__doc__.splitlines()[0])
    for row in results:
        ours, peer = row.get("ours_figures") or {}, row.get("peer_figures") or {}
        if "teacher_nll" in ours:
            print(f"{row['case']}: teacher NLL ours {ours['teacher_nll']:.3f} vs "
                  f"{row['peer']} {peer['teacher_nll']:.3f} "
                  f"(ratio {peer['teacher_nll'] / ours['teacher_nll']:.3f})")
