"""VQTokenizer1D: quantizer, fitting, codes, round trips, contract and bad input."""

import pickle

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.base import clone
from sklearn.datasets import load_digits
from sklearn.exceptions import NotFittedError
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import OneHotEncoder

from skpaper.vision import VQTokenizer1D
from skpaper.vision._tokenizer_modules import flat_to_images, images_to_flat
from skpaper.vision._vq import VectorQuantizer

SMALL = dict(n_tokens=4, token_dim=8, codebook_size=64, encoder="mlp", width=128, depth=2,
             max_epochs=40, batch_size=64, lr=5e-3, warmup_steps=60, dead_code_reset_every=50,
             device="cpu")


@pytest.fixture(scope="module")
def digits():
    return load_digits().data[:600] / 16.0


@pytest.fixture(scope="module")
def tokenizer(digits):
    return VQTokenizer1D(**SMALL, random_state=0).fit(digits)


# ------------------------------------------------------------------------------- quantizer
@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10_000), cosine=st.booleans())
def test_vq_lookup_is_nearest_code(seed, cosine):
    gen = torch.Generator().manual_seed(seed)
    vq = VectorQuantizer(16, 3, cosine=cosine)
    with torch.no_grad():
        vq.embedding.copy_(torch.randn(16, 3, generator=gen))
    z = torch.randn(5, 4, 3, generator=gen, dtype=torch.float32)
    idx = vq.lookup(z)
    if cosine:
        zz, codes = torch.nn.functional.normalize(z, dim=-1), vq.codes()
    else:
        zz, codes = z, vq.embedding
    dist = ((zz[..., None, :] - codes) ** 2).sum(-1)
    chosen = dist.gather(-1, idx[..., None])[..., 0]
    assert torch.all(chosen <= dist.min(-1).values + 1e-5)


def test_vq_straight_through_gradient_reaches_tokens(tokenizer):
    z = torch.as_tensor(tokenizer.encode_continuous(np.zeros((3, 64))), dtype=torch.float32)
    z = (z + 0.1 * torch.randn(z.shape, generator=torch.Generator().manual_seed(0)))
    z.requires_grad_(True)
    z_q, codes = tokenizer.quantize_tensor(z)
    assert torch.allclose(z_q, tokenizer.embed_codes(codes), atol=1e-6)  # forward value is q
    tokenizer.decode_tensor(z_q).pow(2).sum().backward()
    assert z.grad is not None and torch.isfinite(z.grad).all() and z.grad.abs().sum() > 0


def test_vq_reset_and_init_use_given_vectors():
    vq = VectorQuantizer(8, 2, cosine=False)
    gen = torch.Generator().manual_seed(0)
    vectors = torch.tensor([[5.0, 5.0]])
    vq.init_from(vectors, gen)
    assert torch.allclose(vq.embedding, vectors.expand(8, 2), atol=0.1)
    dead = torch.zeros(8, dtype=torch.bool)
    dead[[1, 3]] = True
    before = vq.embedding.detach().clone()
    assert vq.reset_codes(dead, torch.tensor([[-3.0, 1.0]]), gen) == 2
    assert torch.allclose(vq.embedding[dead], torch.tensor([[-3.0, 1.0]]).expand(2, 2), atol=0.1)
    assert torch.equal(vq.embedding[~dead], before[~dead])


# ----------------------------------------------------------------------------- tokenizer
def test_tokenizer_codes_shape_dtype_and_range(tokenizer, digits):
    codes = tokenizer.transform(digits[:10])
    assert codes.shape == (10, 4) and codes.dtype == np.int64
    assert codes.min() >= 0 and codes.max() < 64
    assert tokenizer.encode_continuous(digits[:10]).shape == (10, 4, 8)
    assert tokenizer.inverse_transform(codes).shape == (10, 64)
    assert tokenizer.get_feature_names_out().tolist() == [f"vqtokenizer1d{i}" for i in range(4)]


def test_tokenizer_reconstructs_better_than_mean_image(tokenizer, digits):
    assert -tokenizer.score(digits) < 0.8 * digits.var(axis=0).sum() / digits.shape[1]
    assert tokenizer.history_[-1]["reconstruction_mse"] < tokenizer.history_[0][
        "reconstruction_mse"]


def test_tokenizer_round_trip_codes_are_stable(tokenizer, digits):
    codes = tokenizer.transform(digits)
    again = tokenizer.transform(tokenizer.inverse_transform(codes))
    # chance agreement is 1/64; decoded images are (nearly) fixed points of the round trip
    assert np.mean(codes == again) > 0.85
    third = tokenizer.transform(tokenizer.inverse_transform(again))
    assert np.mean(third == again) > 0.95


def test_tokenizer_warmup_and_reset_prevent_collapse(digits):
    kept = VQTokenizer1D(**SMALL, random_state=0).fit(digits)
    params = {**SMALL, "warmup_steps": 0, "dead_code_reset_every": None}
    collapsed = VQTokenizer1D(**params, random_state=0).fit(digits)
    assert kept.codebook_usage_ > 0.95
    assert collapsed.codebook_usage_ < kept.codebook_usage_ - 0.1
    np.testing.assert_array_equal(kept.code_counts_.sum(), 4 * len(digits))


def test_tokenizer_resets_dead_codes_of_an_oversized_codebook(digits):
    params = {**SMALL, "codebook_size": 512, "max_epochs": 10, "warmup_steps": 10,
              "dead_code_reset_every": 20}
    tok = VQTokenizer1D(**params, random_state=0).fit(digits[:100])
    assert sum(r["codes_reset"] for r in tok.history_) > 0


def test_tokenizer_is_deterministic_with_seed(digits, tokenizer):
    again = VQTokenizer1D(**SMALL, random_state=0).fit(digits)
    np.testing.assert_array_equal(again.transform(digits), tokenizer.transform(digits))
    other = VQTokenizer1D(**SMALL, random_state=1).fit(digits)
    assert not np.array_equal(other.encode_continuous(digits[:5]),
                              tokenizer.encode_continuous(digits[:5]))


def test_tokenizer_pickle_round_trip(tokenizer, digits):
    loaded = pickle.loads(pickle.dumps(tokenizer))
    np.testing.assert_array_equal(loaded.transform(digits[:50]), tokenizer.transform(digits[:50]))
    np.testing.assert_allclose(loaded.inverse_transform(loaded.transform(digits[:5])),
                               tokenizer.inverse_transform(tokenizer.transform(digits[:5])))


def test_tokenizer_vit_encoder_with_padding_and_colour():
    rng = np.random.default_rng(0)
    X = rng.uniform(size=(40, 5 * 7 * 3))
    tok = VQTokenizer1D(n_tokens=3, token_dim=4, codebook_size=8, image_size=(5, 7), n_channels=3,
                        patch_size=2, encoder="vit", width=16, depth=1, n_heads=2,
                        warmup_steps=2, dead_code_reset_every=2, max_epochs=3, batch_size=16,
                        random_state=0, device="cpu").fit(X)
    assert tok.image_shape_ == (5, 7, 3)
    assert tok.module_.pad == (1, 1)
    assert tok.inverse_transform(tok.transform(X[:2])).shape == (2, 105)


def test_tokenizer_infers_square_or_strip_images():
    X = np.random.default_rng(0).uniform(size=(12, 10))
    params = dict(n_tokens=2, token_dim=2, codebook_size=4, encoder="mlp", width=8, depth=1,
                  max_epochs=1, warmup_steps=0, device="cpu", random_state=0)
    assert VQTokenizer1D(**params).fit(X).image_shape_ == (1, 10, 1)
    assert VQTokenizer1D(**params).fit(np.ones((5, 16))).image_shape_ == (4, 4, 1)


def test_image_layout_round_trip():
    flat = torch.arange(2 * 3 * 4 * 2, dtype=torch.float32).reshape(2, 24)
    images = flat_to_images(flat, (3, 4, 2))
    assert images.shape == (2, 2, 3, 4)
    assert images[0, 1, 0, 0] == flat[0, 1]  # channel is the fastest axis of a row
    assert torch.equal(images_to_flat(images), flat)


def test_tokenizer_in_pipeline_and_grid_search(digits):
    y = load_digits().target[:600]
    params = {**SMALL, "max_epochs": 12, "warmup_steps": 20, "dead_code_reset_every": 20}
    pipe = make_pipeline(VQTokenizer1D(**params, random_state=0),
                         OneHotEncoder(handle_unknown="ignore"), LogisticRegression(max_iter=500))
    assert pipe.fit(digits, y).score(digits, y) > 0.3
    search = GridSearchCV(VQTokenizer1D(**params, random_state=0), {"n_tokens": [1, 4]}, cv=2)
    search.fit(digits)
    assert search.best_params_ == {"n_tokens": 4}


def test_tokenizer_clone_is_unfitted(tokenizer):
    with pytest.raises(NotFittedError):
        clone(tokenizer).transform(np.zeros((1, 64)))


# ------------------------------------------------------------------------------- bad input
@pytest.mark.parametrize(
    "params, X, match",
    [
        ({"image_size": 5}, np.ones((4, 64)), "image_size=5"),
        ({"n_channels": 3}, np.ones((4, 64)), "not a multiple of n_channels=3"),
        ({"encoder": "vit", "width": 10, "n_heads": 4}, np.ones((4, 64)), "n_heads must divide"),
        ({"encoder": "cnn"}, np.ones((4, 64)), "encoder"),
        ({"codebook_size": 0}, np.ones((4, 64)), "codebook_size"),
    ],
)
def test_tokenizer_fit_rejects_bad_input(params, X, match):
    base = dict(n_tokens=2, token_dim=2, codebook_size=4, max_epochs=1, device="cpu")
    with pytest.raises(ValueError, match=match):
        VQTokenizer1D(**{**base, **params}).fit(X)


def test_tokenizer_methods_reject_bad_input(tokenizer):
    with pytest.raises(ValueError, match="expecting 64 features"):
        tokenizer.transform(np.ones((2, 10)))
    with pytest.raises(ValueError, match="outside"):
        tokenizer.inverse_transform(np.array([[0, 1, 2, 64]]))
    with pytest.raises(ValueError, match="n_tokens=4"):
        tokenizer.inverse_transform(np.zeros((1, 3), dtype=int))
    with pytest.raises(ValueError, match="expected"):
        tokenizer.inverse_transform(np.zeros((1, 4, 3)))
    with pytest.raises(ValueError, match="NaN"):
        tokenizer.inverse_transform(np.full((1, 4, 8), np.nan))
    with pytest.raises(ValueError, match="code ids"):
        tokenizer.inverse_transform(np.zeros((1, 4)))
    with pytest.raises(NotFittedError):
        VQTokenizer1D().encode_continuous(np.ones((1, 64)))
