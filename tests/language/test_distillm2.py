"""Tests for DistiLLM-2: the divergences, ContrastiveDistiller and the data generators."""

import math
import pickle
from types import SimpleNamespace

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.base import clone
from sklearn.frozen import FrozenEstimator
from torch import nn

from skpaper.datasets import load_dataset_descriptions, make_markov_text, markov_text_log_prob
from skpaper.language import (
    CharTokenizer,
    ContrastiveDistiller,
    LanguageModel,
    TinyCausalLM,
    forward_kl,
    generalized_jsd,
    reverse_kl,
    skew_kl,
    skew_reverse_kl,
)
from skpaper.nn import Callback, EarlyStopping, GradNormClipping, ValidationSplit

TINY = dict(n_layers=1, n_heads=2, max_len=24, batch_size=16, device="cpu", random_state=0)


@pytest.fixture(scope="module")
def world():
    texts = make_markov_text(96, n_symbols=6, length=12, random_state=0)
    tok = CharTokenizer(alphabet="abcdef")
    teacher = LanguageModel(tokenizer=tok, d_model=32, max_epochs=15, **TINY).fit(texts)
    student = LanguageModel(tokenizer=tok, d_model=8, max_epochs=1, **TINY).fit(texts)
    return SimpleNamespace(texts=texts, prompts=[t[:4] for t in texts], tok=tok,
                           teacher=teacher, student=student)


def _distiller(world, **params):
    settings_ = dict(teacher=FrozenEstimator(world.teacher),
                     student=FrozenEstimator(world.student),
                     n_rounds=2, max_epochs=2, batch_size=32, lr=3e-3, max_new_tokens=9,
                     device="cpu", random_state=0)
    return ContrastiveDistiller(**{**settings_, **params})


# ---------------------------------------------------------------------------- divergences
def _logits(seed, shape=(3, 5, 7)):
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed)) * 2


def test_skew_kl_is_kl_at_alpha_zero_and_zero_when_equal():
    p, q = _logits(0), _logits(1)
    manual = (p.softmax(-1) * (p.log_softmax(-1) - q.log_softmax(-1))).sum(-1).mean()
    assert torch.isclose(skew_kl(p, q, alpha=0.0), manual, atol=1e-6)
    assert torch.isclose(forward_kl(p, q), manual, atol=1e-6)
    assert float(skew_kl(p, p, alpha=0.1)) == pytest.approx(0.0, abs=1e-6)
    assert float(skew_reverse_kl(p, p, alpha=0.1)) == pytest.approx(0.0, abs=1e-6)
    assert float(skew_kl(p, q, alpha=1.0)) == pytest.approx(0.0, abs=1e-6)


def test_skew_reverse_kl_is_reverse_kl_at_alpha_zero():
    p, q = _logits(2), _logits(3)
    manual = (q.softmax(-1) * (q.log_softmax(-1) - p.log_softmax(-1))).sum(-1).mean()
    assert torch.isclose(skew_reverse_kl(p, q, alpha=0.0), manual, atol=1e-6)
    assert torch.isclose(reverse_kl(p, q), manual, atol=1e-6)


def test_skew_kl_matches_the_probability_space_mixture():
    p, q = _logits(4), _logits(5)
    mix = 0.3 * p.softmax(-1) + 0.7 * q.softmax(-1)
    manual = (p.softmax(-1) * (p.log_softmax(-1) - mix.log())).sum(-1).mean()
    assert torch.isclose(skew_kl(p, q, alpha=0.3), manual, atol=1e-5)


def test_skew_reverse_kl_stops_the_gradient_through_the_mixture():
    p, q = _logits(6), _logits(7)
    q1 = q.clone().requires_grad_(True)
    skew_reverse_kl(p, q1, alpha=0.4).backward()
    # Reference: the same loss with the mixture built from a constant copy of q.
    q2 = q.clone().requires_grad_(True)
    log_mix = (0.6 * p.softmax(-1) + 0.4 * q.softmax(-1)).log()
    logq = q2.log_softmax(-1)
    (logq.exp() * (logq - log_mix)).sum(-1).mean().backward()
    torch.testing.assert_close(q1.grad, q2.grad, atol=1e-6, rtol=1e-5)
    # Letting the gradient through the mixture gives a different one.
    q3 = q.clone().requires_grad_(True)
    logq3 = q3.log_softmax(-1)
    log_mix3 = (0.6 * p.softmax(-1) + 0.4 * logq3.exp()).log()
    (logq3.exp() * (logq3 - log_mix3)).sum(-1).mean().backward()
    assert not torch.allclose(q1.grad, q3.grad, atol=1e-4)


def test_teacher_logits_get_no_gradient_from_skew_kl():
    p = _logits(8).requires_grad_(True)
    q = _logits(9).requires_grad_(True)
    (skew_kl(p.detach(), q) + skew_reverse_kl(p.detach(), q)).backward()
    assert p.grad is None and q.grad is not None


def test_masks_are_respected_and_sequences_averaged_first():
    p, q = _logits(10), _logits(11)
    mask = torch.tensor([[1, 1, 0, 0, 0], [1, 1, 1, 1, 1], [0, 0, 0, 0, 0]], dtype=torch.bool)
    p2, q2 = p.clone(), q.clone()
    p2[~mask] = 1e4  # garbage at masked positions must not matter
    q2[~mask] = -1e4
    for func in (skew_kl, skew_reverse_kl, forward_kl, reverse_kl, generalized_jsd):
        assert torch.isclose(func(p, q, mask=mask), func(p2, q2, mask=mask), atol=1e-6)
    per_token = skew_kl(p, q, mask=mask, reduction="none")
    assert (per_token[~mask] == 0).all()
    seq_means = [per_token[0, :2].mean(), per_token[1].mean()]  # row 2 has no token
    assert torch.isclose(skew_kl(p, q, mask=mask), sum(seq_means) / 2, atol=1e-6)
    assert torch.isclose(skew_kl(p, q, mask=mask, reduction="token_mean"),
                         per_token.sum() / 7, atol=1e-6)


def test_per_sequence_alpha_equals_separate_calls():
    p, q = _logits(12), _logits(13)
    alpha = torch.tensor([0.0, 0.1, 0.5])
    per_token = skew_kl(p, q, alpha=alpha, reduction="none")
    for i, a in enumerate(alpha.tolist()):
        expected = skew_kl(p[i:i + 1], q[i:i + 1], alpha=a, reduction="none")
        torch.testing.assert_close(per_token[i:i + 1], expected)


@given(seed=st.integers(0, 10_000), alpha=st.floats(0.0, 1.0), beta=st.floats(0.01, 0.99))
@settings(max_examples=40, deadline=None)
def test_divergence_bounds(seed, alpha, beta):
    p, q = _logits(seed, (4, 9)), _logits(seed + 1, (4, 9))
    kl = float(forward_kl(p, q, reduction="token_mean"))
    skl = float(skew_kl(p, q, alpha=alpha, reduction="token_mean"))
    # KL is jointly convex: KL(p || a p + (1 - a) q) <= (1 - a) KL(p || q).
    assert -1e-6 <= skl <= (1 - alpha) * kl + 1e-5
    assert float(skew_reverse_kl(p, q, alpha=alpha)) >= -1e-6
    # The generalised JSD is bounded by the entropy of (beta, 1 - beta).
    bound = -(beta * math.log(beta) + (1 - beta) * math.log(1 - beta))
    assert -1e-6 <= float(generalized_jsd(p, q, beta=beta)) <= bound + 1e-5


def test_generalized_jsd_endpoints():
    p, q = _logits(14), _logits(15)
    assert torch.isclose(generalized_jsd(p, q, beta=0.0), forward_kl(p, q))
    assert torch.isclose(generalized_jsd(p, q, beta=1.0), reverse_kl(p, q))


def test_divergences_reject_bad_input():
    p = _logits(0)
    with pytest.raises(ValueError, match="same shape"):
        skew_kl(p, _logits(1, (3, 5, 8)))
    with pytest.raises(TypeError, match="p_logits must be a torch.Tensor"):
        skew_kl(np.zeros((2, 3)), p)
    with pytest.raises(ValueError, match="alpha must be in"):
        skew_kl(p, p, alpha=1.5)
    with pytest.raises(ValueError, match="alpha must lie in"):
        skew_reverse_kl(p, p, alpha=torch.tensor([0.1, 2.0, 0.1]))
    with pytest.raises(ValueError, match="mask must have the shape"):
        forward_kl(p, p, mask=torch.ones(3, 4, dtype=torch.bool))
    with pytest.raises(ValueError, match="reduction must be one of"):
        reverse_kl(p, p, reduction="max")
    with pytest.raises(TypeError, match="beta must be a float"):
        generalized_jsd(p, p, beta="half")


# ------------------------------------------------------------------------------ distiller
def test_distiller_trains_the_student_and_logs_the_contrast(world):
    dist = _distiller(world).fit(world.prompts)
    assert dist.n_iter_ == 4 and [r["round"] for r in dist.history_] == [1, 1, 2, 2]
    assert len(dist.teacher_responses_) == len(world.prompts)
    for record in dist.history_:
        assert np.isfinite([record["train_loss"], record["logq_chosen"],
                            record["logq_rejected"]]).all()
        assert record["alpha_chosen"] == pytest.approx(0.1) and record["beta"] == 1.0
    # The student moves towards the teacher on teacher samples.
    teacher_samples = world.teacher.generate(world.prompts[:32], random_state=0)
    before = world.student.score(world.prompts[:32], teacher_samples)
    assert dist.score(world.prompts[:32], teacher_samples) > before


def test_distiller_does_not_modify_teacher_or_student(world):
    snapshot = {k: v.clone() for k, v in world.student.module_.state_dict().items()}
    teacher_snapshot = {k: v.clone() for k, v in world.teacher.module_.state_dict().items()}
    _distiller(world, n_rounds=1, max_epochs=1).fit(world.prompts)
    for k, v in world.student.module_.state_dict().items():
        assert torch.equal(v, snapshot[k])
    for k, v in world.teacher.module_.state_dict().items():
        assert torch.equal(v, teacher_snapshot[k])
    assert not world.teacher.module_.training


def test_distiller_is_deterministic_picklable_and_clonable(world):
    dist = _distiller(world, n_rounds=1, max_epochs=1).fit(world.prompts)
    again = clone(dist).fit(world.prompts)  # FrozenEstimator keeps the fitted models
    np.testing.assert_allclose(dist.predict_proba(world.prompts[:5]),
                               again.predict_proba(world.prompts[:5]), atol=1e-6)
    loaded = pickle.loads(pickle.dumps(dist))
    np.testing.assert_allclose(loaded.predict_proba(world.prompts[:5]),
                               dist.predict_proba(world.prompts[:5]))
    assert loaded.generate(world.prompts[:3], random_state=2) == dist.generate(
        world.prompts[:3], random_state=2)


@pytest.mark.parametrize("loss", ["skl_both", "srkl_both", "fkl", "seqkd", "gjsd"])
def test_distiller_baselines_run(world, loss):
    dist = _distiller(world, loss=loss, n_rounds=1, max_epochs=1).fit(world.prompts)
    record = dist.history_[-1]
    assert np.isfinite(record["train_loss"])
    assert np.isnan(record["logq_rejected"]) == (loss in ("fkl", "seqkd"))


@pytest.mark.parametrize("loss", ["distillm2", "skl_both", "srkl_both"])
def test_distiller_losses_follow_their_formulas(loss):
    from skpaper.language import ContrastiveDistiller

    gen = torch.Generator().manual_seed(0)
    p, q = torch.randn(6, 5, 9, generator=gen), torch.randn(6, 5, 9, generator=gen)
    mask = torch.ones(6, 5, dtype=torch.bool)
    ids = torch.randint(9, (6, 6), generator=gen)
    k, beta = 4, 0.7
    got, _ = ContrastiveDistiller(loss=loss, alpha=0.2)._loss(p, q, ids, mask, k, beta, None)
    # Rows :k are teacher responses, k: student responses; weights 2 - beta and beta.
    first = {"distillm2": skew_kl, "skl_both": skew_kl, "srkl_both": skew_reverse_kl}[loss]
    second = {"distillm2": skew_reverse_kl, "skl_both": skew_kl,
              "srkl_both": skew_reverse_kl}[loss]
    want = ((2 - beta) * first(p[:k], q[:k], 0.2, mask[:k])
            + beta * second(p[k:], q[k:], 0.2, mask[k:]))
    assert torch.isclose(got, want, atol=1e-6)


def test_distiller_beta_schedule_and_adaptive_alpha(world):
    dist = _distiller(world, beta_schedule="linear", adaptive_alpha=True).fit(world.prompts)
    assert dist._beta_at(0, 100) == 1.0
    assert dist._beta_at(50, 100) == pytest.approx(1.5)
    assert dist._beta_at(90, 100) == pytest.approx(1.5)
    betas = [r["beta"] for r in dist.history_]
    assert betas == sorted(betas) and betas[-1] > 1.0
    for record in dist.history_:
        for key in ("alpha_chosen", "alpha_rejected"):
            assert 0.01 - 1e-9 <= record[key] <= 0.1 + 1e-9
    gap = torch.tensor([-0.2, 0.001, 0.5, 10.0])
    alpha = dist._adaptive(gap, reference=0.5).tolist()
    # Negative gap: the base alpha; a tiny (easy) gap: the floor; a large gap: near the base.
    assert alpha[0] == pytest.approx(0.1) and alpha[1] == pytest.approx(0.01)
    assert alpha[2] == pytest.approx(0.1) and alpha[3] == pytest.approx(0.1)


class _LogitsOutput(nn.Module):
    """A causal LM whose forward returns an object with ``.logits`` (Hugging Face style)."""

    def __init__(self, lm):
        super().__init__()
        self.lm = lm

    def forward(self, input_ids):
        return SimpleNamespace(logits=self.lm(input_ids))


def test_distiller_accepts_torch_modules_and_logits_outputs(world):
    student = _LogitsOutput(TinyCausalLM(world.tok.vocab_size, n_layers=1, d_model=8,
                                         n_heads=2, max_len=24))
    before = {k: v.clone() for k, v in student.state_dict().items()}
    dist = _distiller(world, teacher=world.teacher.module_, student=student,
                      tokenizer=world.tok, n_rounds=1, max_epochs=1).fit(world.prompts)
    assert isinstance(dist.module_, _LogitsOutput)
    assert all(torch.equal(v, before[k]) for k, v in student.state_dict().items())
    loaded = pickle.loads(pickle.dumps(dist))
    assert loaded.score(world.prompts[:4]) == pytest.approx(dist.score(world.prompts[:4]))


def test_distiller_fits_unfitted_language_models(world):
    dist = ContrastiveDistiller(
        teacher=LanguageModel(tokenizer=world.tok, d_model=16, max_epochs=2, **TINY),
        student=LanguageModel(tokenizer=world.tok, d_model=8, max_epochs=1, **TINY),
        n_rounds=1, max_new_tokens=4, device="cpu", random_state=0,
    ).fit(world.prompts[:16])
    assert dist.teacher_.n_iter_ == 2 and dist.student_.n_iter_ == 1


def test_distiller_rejects_bad_input(world):
    with pytest.raises(ValueError, match="teacher must be a LanguageModel"):
        ContrastiveDistiller(student=world.student, device="cpu").fit(world.prompts)
    unfitted = LanguageModel(tokenizer=world.tok, **TINY)
    with pytest.raises(ValueError, match="fit it before freezing"):
        _distiller(world, student=FrozenEstimator(unfitted)).fit(world.prompts)
    wide = TinyCausalLM(world.tok.vocab_size + 3, n_layers=1, d_model=8, n_heads=2, max_len=24)
    with pytest.raises(ValueError, match="share one vocabulary"):
        _distiller(world, student=wide).fit(world.prompts)
    with pytest.raises(ValueError, match="tokenizer must be given"):
        _distiller(world, teacher=world.teacher.module_, student=wide).fit(world.prompts)
    other = LanguageModel(tokenizer="char", d_model=8, max_epochs=1, **TINY).fit(["xyz"])
    with pytest.raises(ValueError, match="different vocabularies"):
        _distiller(world, student=FrozenEstimator(other)).fit(world.prompts)
    with pytest.raises(ValueError, match="max_len=24"):
        _distiller(world, max_new_tokens=30).fit(world.prompts)
    with pytest.raises(TypeError, match="X must be a list of str"):
        _distiller(world).fit("prompt")
    with pytest.raises(ValueError, match="loss"):
        _distiller(world, loss="dpo").fit(world.prompts)


class _Events(Callback):
    """Counts the training events it receives."""

    def __init__(self):
        self.counts = {}

    def _count(self, name):
        self.counts[name] = self.counts.get(name, 0) + 1

    def on_train_begin(self, estimator):
        self._count("train_begin")

    def on_batch_begin(self, estimator, batch):
        self._count("batch_begin")

    def on_grad_computed(self, estimator, named_parameters):
        self._count("grad_computed")

    def on_epoch_end(self, estimator, record):
        self._count("epoch_end")
        return False


def test_distiller_callbacks_are_fitted_copies_that_see_every_step(world):
    events = _Events()
    dist = _distiller(world, callbacks=[events], batch_size=48).fit(world.prompts)
    assert events.counts == {}  # the callback passed in is never changed
    fitted = dist.callbacks_[0]
    steps = dist.n_iter_ * 2  # 96 prompts in batches of 48
    assert fitted.counts == {"train_begin": 1, "batch_begin": steps, "grad_computed": steps,
                             "epoch_end": dist.n_iter_}
    assert isinstance(dist.callbacks_[-1], GradNormClipping)
    assert dist.callbacks_[-1].max_norm == dist.grad_clip
    assert dist.callbacks == [events]
    no_clip = _distiller(world, n_rounds=1, max_epochs=1, grad_clip=None).fit(world.prompts)
    assert no_clip.callbacks_ == []


def test_distiller_early_stopping_ends_the_remaining_rounds(world):
    # The first epoch improves on nothing seen yet; the second does not improve by 1e9.
    dist = _distiller(world, n_rounds=3, max_epochs=1,
                      callbacks=[EarlyStopping(patience=1, tol=1e9)]).fit(world.prompts)
    assert dist.n_iter_ == 2 and [r["round"] for r in dist.history_] == [1, 2]


def test_distiller_verbose_shows_a_progress_bar(world, capsys):
    _distiller(world, n_rounds=1, max_epochs=1).fit(world.prompts)
    assert "ContrastiveDistiller" not in capsys.readouterr().err
    _distiller(world, n_rounds=1, max_epochs=1, verbose=1).fit(world.prompts)
    assert "ContrastiveDistiller" in capsys.readouterr().err


def test_distiller_rejects_validation_split_and_keeps_no_fit_state(world):
    with pytest.raises(ValueError, match="does not support ValidationSplit"):
        _distiller(world, callbacks=[ValidationSplit(0.2)]).fit(world.prompts)
    dist = _distiller(world, n_rounds=1, max_epochs=1).fit(world.prompts)
    assert not {"_teacher_module", "_prompts", "_rejected", "_refs"} & set(vars(dist))


# ------------------------------------------------------------------------------ datasets
def test_make_markov_text_is_seeded_and_matches_its_entropy():
    texts, model = make_markov_text(1500, n_symbols=6, length=20, random_state=3,
                                    return_model=True)
    assert texts == make_markov_text(1500, n_symbols=6, length=20, random_state=3)
    assert all(len(t) == 20 and set(t) <= set("abcdef") for t in texts)
    assert model["transitions"].shape == (36, 6)
    np.testing.assert_allclose(model["transitions"].sum(1), 1.0)
    # Mean log-probability of the samples is minus the entropy rate of the contexts met:
    # 27,000 transitions make the standard error far below the 0.05 margin.
    assert markov_text_log_prob(texts, model).mean() == pytest.approx(
        -model["entropy_rate"], abs=0.05)


def test_markov_generators_reject_bad_input():
    with pytest.raises(ValueError, match="n_symbols must be <= 62"):
        make_markov_text(5, n_symbols=70)
    with pytest.raises(ValueError, match="concentration must be > 0"):
        make_markov_text(5, concentration=0.0)
    with pytest.raises(TypeError, match="n_samples must be an int"):
        make_markov_text(2.5)
    with pytest.raises(ValueError, match="length must be an int >= 2"):
        make_markov_text(5, length=1)
    with pytest.raises(ValueError, match="distinct characters"):
        make_markov_text(5, n_symbols=3, alphabet="aab")
    _, model = make_markov_text(5, n_symbols=3, random_state=0, return_model=True)
    with pytest.raises(ValueError, match="not in the source's alphabet"):
        markov_text_log_prob(["abz"], model)
    with pytest.raises(TypeError, match="model must be the dict"):
        markov_text_log_prob(["ab"], {})


def test_load_dataset_descriptions_is_real_english():
    texts = load_dataset_descriptions()
    assert len(texts) > 100 and all(20 <= len(t) <= 200 for t in texts)
    assert sum(" the " in t for t in texts) > 50
    paragraphs = load_dataset_descriptions(unit="paragraph", max_chars=1000)
    assert len(paragraphs) < len(texts)
    with pytest.raises(ValueError, match="unit must be"):
        load_dataset_descriptions(unit="word")


# -------------------------------------------------------------------------------- claims
def test_smoke_experiment_records_every_method_and_curve():
    from skpaper.papers._stats import claim_seeds
    from skpaper.papers.distillm2 import _SCALES, _world

    cfg = _SCALES["smoke"]
    runs = [_world("smoke", s) for s in claim_seeds(0, cfg["looks"][0])]
    # Every paired seed is its own world: source, teacher and student.
    assert len({r["world"] for r in runs}) == len(runs) == cfg["looks"][0]
    assert runs[0]["floor"] != runs[1]["floor"]
    rows = runs[0]["rows"]
    assert [r["method"] for r in rows] == ["student init", *cfg["methods"]]
    n_points = 1 + cfg["rounds"] * cfg["epochs"] // cfg["curve_every"]
    for row in rows[1:]:
        assert len(row["curve"]) == n_points
        assert row["curve"][0] == rows[1]["curve"][0]  # every method starts from one student
    for row in rows:
        values = [row[k] for k in ("teacher_nll", "fwd_kl", "rev_kl", "logq_teacher",
                                   "logq_own_initial")]
        assert np.isfinite(values).all() and row["fwd_kl"] >= 0 and row["rev_kl"] >= 0
    assert 0 < runs[0]["floor"] < np.log(cfg["n_symbols"] + 4)
