"""Test-time token optimisation and its objectives."""

import pickle

import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st
from sklearn.base import clone
from sklearn.datasets import load_digits
from sklearn.exceptions import NotFittedError
from sklearn.frozen import FrozenEstimator

from skpaper.datasets import make_inpainting_mask
from skpaper.nn import MLPClassifier
from skpaper.vision import (
    ClassifierGuidance,
    EmbeddingGuidance,
    MaskedReconstruction,
    TokenTestTimeOptimizer,
    VQTokenizer1D,
    WeightedSum,
    token_noise_schedule,
)


@pytest.fixture(scope="module")
def digits():
    X, y = load_digits(return_X_y=True)
    return X[:600] / 16.0, y[:600]


@pytest.fixture(scope="module")
def tokenizer(digits):
    return VQTokenizer1D(n_tokens=4, token_dim=8, codebook_size=64, encoder="mlp", width=128,
                         max_epochs=40, batch_size=64, lr=5e-3, warmup_steps=60,
                         dead_code_reset_every=50, random_state=0, device="cpu").fit(digits[0])


@pytest.fixture(scope="module")
def inpainting(digits):
    X = digits[0][:20]
    known = make_inpainting_mask((8, 8), "bottom")
    return X, known, MaskedReconstruction(X, known)


# ------------------------------------------------------------------------------ optimiser
def test_tto_keeps_decoder_frozen(tokenizer, inpainting):
    X, known, objective = inpainting
    before = {k: v.clone() for k, v in tokenizer.module_.state_dict().items()}
    flags = [p.requires_grad for p in tokenizer.module_.parameters()]
    seen = []

    def spy(info):
        seen.append(all(p.grad is None for p in tokenizer.module_.parameters()))

    TokenTestTimeOptimizer(tokenizer, objective, n_iter=15, random_state=0).generate(
        seed_images=X * known, callback=spy)
    after = tokenizer.module_.state_dict()
    assert all(torch.equal(before[k], after[k]) for k in before)
    assert all(seen) and len(seen) == 15
    assert [p.requires_grad for p in tokenizer.module_.parameters()] == flags
    assert not tokenizer.module_.training


def test_tto_lowers_the_inpainting_loss(tokenizer, inpainting):
    X, known, objective = inpainting
    tto = TokenTestTimeOptimizer(tokenizer, objective, n_iter=60, random_state=0)
    out = tto.generate(seed_images=X * known)
    encoded = tokenizer.inverse_transform(tokenizer.transform(X * known))
    assert tto.loss_curve_[-1] < 0.5 * tto.loss_curve_[0]
    assert np.mean((out - X)[:, known] ** 2) < np.mean((encoded - X)[:, known] ** 2)
    assert out.min() >= 0.0 and out.max() <= 1.0
    assert tto.n_iter_ == 60 and tto.final_loss_.shape == (20,)


def test_tto_output_is_the_decode_of_its_codes(tokenizer, inpainting):
    X, known, objective = inpainting
    tto = TokenTestTimeOptimizer(tokenizer, objective, n_iter=10, clip=None, random_state=0)
    out = tto.generate(seed_images=X * known)
    np.testing.assert_allclose(out, tokenizer.inverse_transform(tto.codes_), atol=1e-6)
    np.testing.assert_array_equal(
        tto.codes_, tokenizer.module_.quantizer.lookup(torch.as_tensor(
            tto.tokens_, dtype=torch.float32)).numpy())


def test_tto_continuous_arm_skips_quantization(tokenizer, inpainting):
    X, known, objective = inpainting
    tto = TokenTestTimeOptimizer(tokenizer, objective, n_iter=10, through_vq=False, clip=None,
                                 random_state=0)
    out = tto.generate(seed_images=X * known)
    assert tto.codes_ is None
    np.testing.assert_allclose(out, tokenizer.inverse_transform(tto.tokens_.astype(np.float32)),
                               atol=1e-5)


def test_tto_is_deterministic_with_seed(tokenizer, inpainting):
    X, known, objective = inpainting
    params = dict(n_iter=12, token_noise=0.5, random_state=3)
    a = TokenTestTimeOptimizer(tokenizer, objective, **params).generate(seed_images=X)
    b = TokenTestTimeOptimizer(tokenizer, objective, **params).generate(seed_images=X)
    c = TokenTestTimeOptimizer(tokenizer, objective, **{**params, "random_state": 4}).generate(
        seed_images=X)
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c)


def test_tto_sums_losses_so_images_do_not_interact(tokenizer, inpainting):
    X, known, _ = inpainting
    one = TokenTestTimeOptimizer(tokenizer, MaskedReconstruction(X[:1], known), n_iter=20,
                                 random_state=0).generate(seed_images=X[:1] * known)
    many = TokenTestTimeOptimizer(tokenizer, MaskedReconstruction(X[:5], known), n_iter=20,
                                  random_state=0).generate(seed_images=X[:5] * known)
    np.testing.assert_allclose(one[0], many[0], atol=1e-4)


def test_tto_seed_tokens_as_codes_or_vectors(tokenizer, inpainting):
    X, known, objective = inpainting
    codes = tokenizer.transform(X)
    vectors = tokenizer.embed_codes(torch.as_tensor(codes)).detach().double().numpy()
    a = TokenTestTimeOptimizer(tokenizer, objective, n_iter=5, random_state=0).generate(
        seed_tokens=codes)
    b = TokenTestTimeOptimizer(tokenizer, objective, n_iter=5, random_state=0).generate(
        seed_tokens=vectors)
    np.testing.assert_allclose(a, b, atol=1e-5)


def test_tto_seed_regulariser_holds_tokens(tokenizer, inpainting):
    X, known, objective = inpainting
    start = tokenizer.encode_continuous(X * known)
    free = TokenTestTimeOptimizer(tokenizer, objective, n_iter=30, random_state=0)
    held = TokenTestTimeOptimizer(tokenizer, objective, n_iter=30, reg="seed", reg_weight=1e4,
                                  random_state=0)
    free.generate(seed_images=X * known)
    held.generate(seed_images=X * known)
    assert np.abs(held.tokens_ - start).mean() < 0.5 * np.abs(free.tokens_ - start).mean()


def test_tto_ema_averages_tokens(tokenizer, inpainting):
    X, known, objective = inpainting
    seen = []
    tto = TokenTestTimeOptimizer(tokenizer, objective, n_iter=10, ema_decay=0.9, random_state=0)
    tto.generate(seed_images=X * known, callback=lambda info: seen.append(info["tokens"]))
    np.testing.assert_allclose(tto.tokens_, seen[-1].double().numpy(), atol=1e-6)
    plain = TokenTestTimeOptimizer(tokenizer, objective, n_iter=10, random_state=0)
    plain.generate(seed_images=X * known)
    assert not np.allclose(tto.tokens_, plain.tokens_)


def test_tto_callback_can_stop(tokenizer, inpainting):
    X, known, objective = inpainting
    tto = TokenTestTimeOptimizer(tokenizer, objective, n_iter=50, random_state=0)
    tto.generate(seed_images=X, callback=lambda info: info["step"] == 4)
    assert tto.n_iter_ == 5


def test_tto_works_through_frozen_estimator_and_clone(tokenizer, inpainting):
    X, known, objective = inpainting
    tto = TokenTestTimeOptimizer(FrozenEstimator(tokenizer), objective, n_iter=5, random_state=0)
    a = clone(tto).generate(seed_images=X)
    b = pickle.loads(pickle.dumps(tto)).generate(seed_images=X)
    np.testing.assert_allclose(a, b, atol=1e-6)
    with pytest.raises(NotFittedError):
        clone(TokenTestTimeOptimizer(tokenizer, objective, n_iter=5)).generate(seed_images=X)


@given(n_iter=st.integers(2, 500), frac=st.floats(0, 1))
def test_token_noise_schedule_decays_to_zero_at_two_thirds(n_iter, frac):
    i = int(frac * (n_iter - 1))
    s = token_noise_schedule(i, n_iter)
    assert token_noise_schedule(0, n_iter) == 1.0
    assert 0.0 <= s <= 1.0
    if i >= 2 * (n_iter - 1) / 3:
        assert s == pytest.approx(0.0, abs=1e-12)
    if i + 1 < n_iter:
        assert token_noise_schedule(i + 1, n_iter) <= s + 1e-12


@pytest.mark.parametrize(
    "params, kwargs, error, match",
    [
        ({}, {}, ValueError, "exactly one"),
        ({}, {"seed_images": "both"}, ValueError, "exactly one"),
        ({"reg_weight": 1.0}, {"seed_images": "x"}, ValueError, "needs reg"),
        ({"clip": (1.0, 0.0)}, {"seed_images": "x"}, ValueError, "clip"),
        ({"n_iter": 0}, {"seed_images": "x"}, ValueError, "n_iter"),
        ({"reg": "l1"}, {"seed_images": "x"}, ValueError, "reg"),
        ({}, {"seed_images": np.ones((2, 10))}, ValueError, "64 features"),
        ({}, {"seed_tokens": np.zeros((2, 3), dtype=int)}, ValueError, "n_tokens=4"),
    ],
)
def test_tto_rejects_bad_input(tokenizer, inpainting, params, kwargs, error, match):
    X, known, objective = inpainting
    marker = kwargs.get("seed_images")
    if isinstance(marker, str) and marker == "x":
        kwargs = {"seed_images": X}
    elif isinstance(marker, str):
        kwargs = {"seed_images": X, "seed_tokens": tokenizer.transform(X)}
    tto = TokenTestTimeOptimizer(tokenizer, objective, **{"n_iter": 2, **params})
    with pytest.raises(error, match=match):
        tto.generate(**kwargs)


def test_tto_rejects_objectives_with_wrong_output(tokenizer, inpainting):
    X = inpainting[0]
    tto = TokenTestTimeOptimizer(tokenizer, lambda images: images.sum(), n_iter=2)
    with pytest.raises(ValueError, match="one loss per image"):
        tto.generate(seed_images=X)
    with pytest.raises(ValueError, match="tokenizer"):
        TokenTestTimeOptimizer(object(), lambda images: images, n_iter=2).generate(
            seed_images=X)


# ------------------------------------------------------------------------------ objectives
def test_masked_reconstruction_matches_numpy():
    rng = np.random.default_rng(0)
    target, images = rng.uniform(size=(3, 12)), rng.uniform(size=(3, 12))
    mask = rng.uniform(size=(3, 12)) < 0.5
    mask[:, 0] = True
    img = torch.as_tensor(images).reshape(3, 2, 2, 3).permute(0, 3, 1, 2)
    got = MaskedReconstruction(target, mask)(img).numpy()
    want = ((images - target) ** 2 * mask).sum(1) / mask.sum(1)
    np.testing.assert_allclose(got, want)
    full = MaskedReconstruction(target)(img).numpy()
    np.testing.assert_allclose(full, ((images - target) ** 2).mean(1))


def test_masked_reconstruction_rejects_bad_input():
    img = torch.zeros(2, 1, 2, 2)
    with pytest.raises(ValueError, match="target has shape"):
        MaskedReconstruction(np.zeros((3, 4)))(img)
    with pytest.raises(ValueError, match="mask has 3 entries"):
        MaskedReconstruction(np.zeros((2, 4)), np.ones(3, bool))(img)
    with pytest.raises(ValueError, match="at least one known pixel"):
        MaskedReconstruction(np.zeros((2, 4)), np.zeros(4, bool))(img)


def test_classifier_guidance_uses_estimator_classes(digits):
    X, y = digits
    clf = MLPClassifier(hidden_layer_sizes=(16,), max_epochs=30, lr=1e-2, random_state=0,
                        device="cpu").fit(X, y + 10)
    images = torch.as_tensor(X[:4]).reshape(4, 8, 8, 1).permute(0, 3, 1, 2).float()
    losses = ClassifierGuidance(clf, target=y[:4] + 10)(images)
    proba = clf.predict_proba(X[:4])[np.arange(4), y[:4]]
    np.testing.assert_allclose(losses.detach().numpy(), -np.log(proba), rtol=1e-4)
    with pytest.raises(ValueError, match="among the model's classes"):
        ClassifierGuidance(clf, target=3)(images)
    with pytest.raises(TypeError, match="model must be"):
        ClassifierGuidance(42, target=0)(images)
    with pytest.raises(ValueError, match="input must be"):
        ClassifierGuidance(clf, target=10, input="pixels")(images)


def test_embedding_guidance_formula_with_negative_prompt():
    encoder = torch.nn.Linear(4, 3)
    images = torch.rand(5, 1, 2, 2, generator=torch.Generator().manual_seed(0))
    pos, neg = np.array([1.0, 0.0, 0.0]), np.array([0.0, 2.0, 0.0])
    feats = torch.nn.functional.normalize(encoder(images.reshape(5, 4)), dim=-1).detach()
    obj = EmbeddingGuidance(encoder, pos, n_augmentations=0, negative=neg, cfg=3.0)
    want = -feats[:, 0] + 2.0 * feats[:, 1]  # -sim(pos) - (1 - cfg) sim(neg)
    np.testing.assert_allclose(obj(images).detach().numpy(), want.numpy(), rtol=1e-5, atol=1e-6)


def test_embedding_guidance_augments_reproducibly():
    encoder = torch.nn.Linear(64, 3)
    images = torch.rand(3, 1, 8, 8, generator=torch.Generator().manual_seed(0))
    obj = EmbeddingGuidance(encoder, [1.0, 0.0, 0.0], n_augmentations=4)
    a = obj(images, generator=torch.Generator().manual_seed(1))
    b = obj(images, generator=torch.Generator().manual_seed(1))
    plain = EmbeddingGuidance(encoder, [1.0, 0.0, 0.0], n_augmentations=0)(images)
    torch.testing.assert_close(a, b)
    assert not torch.allclose(a, plain)
    with pytest.raises(ValueError, match="crop_fraction"):
        EmbeddingGuidance(encoder, [1.0, 0, 0], crop_fraction=0.0)(images)
    with pytest.raises(ValueError, match="embeddings must have shape"):
        EmbeddingGuidance(encoder, [1.0, 0.0], n_augmentations=0)(images)


def test_weighted_sum_combines_objectives():
    images = torch.zeros(2, 1, 2, 2)
    a = MaskedReconstruction(np.ones((2, 4)))
    b = MaskedReconstruction(np.full((2, 4), 2.0))
    np.testing.assert_allclose(WeightedSum([a, b], [2.0, 0.5])(images).numpy(), [4.0, 4.0])
    np.testing.assert_allclose(WeightedSum([a, lambda x: x.flatten(1).sum(1)])(images).numpy(),
                               [1.0, 1.0])
    with pytest.raises(ValueError, match="weights has 1 entries"):
        WeightedSum([a, b], [1.0])(images)
    with pytest.raises(ValueError, match="at least one"):
        WeightedSum([])(images)
