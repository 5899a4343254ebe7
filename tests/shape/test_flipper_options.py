"""The official code's flipper options: confusion-matrix forward correction and top-k."""

import pickle

import numpy as np
import pytest
import torch
from sklearn.base import BaseEstimator

from skpaper.datasets import make_synthetic_shapes
from skpaper.shape import (
    OctahedralFlipper,
    PCAOrienter,
    TwoStageOrienter,
    apply_rotation,
    axis_angle_to_matrix,
    axis_errors,
    flip_confusion_distances,
    octahedral_cayley_table,
    octahedral_group,
    random_rotations,
    top_k_axis_errors,
)

TINY = dict(n_points=32, embed_dim=16, max_epochs=2, batch_size=8, device="cpu",
            random_state=0)


def _c4_cloud(seed=0):
    """A cloud exactly invariant under quarter turns about the up (y) axis."""
    base = np.random.RandomState(seed).normal(size=(12, 3)) * [1.0, 0.5, 0.3]
    turns = [axis_angle_to_matrix(np.array([0.0, 1.0, 0.0]), np.pi / 2 * k) for k in range(4)]
    return np.concatenate([base @ R.T for R in turns])[None]


def test_confusion_distances_vanish_exactly_on_the_symmetries():
    X = _c4_cloud()
    d = flip_confusion_distances(X)
    G = octahedral_group()
    up = np.array([0.0, 1.0, 0.0])
    # the cube rotations that fix the up axis are the four quarter turns about it
    about_up = np.flatnonzero(np.all(np.isclose(G @ up, up), axis=1))
    assert len(about_up) == 4 and 0 in about_up
    np.testing.assert_allclose(d[0, about_up], 0.0, atol=1e-12)
    others = np.setdiff1d(np.arange(24), about_up)
    assert d[0, others].min() > 1e-3


def test_confusion_distances_give_the_distance_between_two_flips():
    X, _ = make_synthetic_shapes(1, 40, families=["chair"], random_state=0)
    d = flip_confusion_distances(X)[0]
    table, inverse = octahedral_cayley_table()
    G = octahedral_group()
    a, b = 5, 17
    pair = flip_confusion_distances(np.concatenate([apply_rotation(X, G[a])]))
    # d(X G_a^T, X G_b^T) = d(X, X (G_a^T G_b)^T)
    Xa, Xb = apply_rotation(X, G[a])[0, :, :3], apply_rotation(X, G[b])[0, :, :3]
    sq = ((Xa[:, None] - Xb[None]) ** 2).sum(-1)
    direct = 0.5 * (sq.min(1).mean() + sq.min(0).mean())
    assert direct == pytest.approx(d[table[inverse[a], b]])
    assert pair.shape == (1, 24)
    with pytest.raises(ValueError, match="max_points"):
        flip_confusion_distances(X, max_points=0)


def test_forward_correction_shares_the_loss_between_indistinguishable_flips():
    clf = OctahedralFlipper(forward_correction=True, confusion_temperature=0.01)
    table, inverse = octahedral_cayley_table()
    a, b, c = 0, 7, 11
    # flips a and b are indistinguishable for this shape, c is far from both
    d = np.full(24, 1.0)
    d[0] = d[table[inverse[a], b]] = 0.0
    clf.confusion_distances_ = d[None]
    labels, idx = torch.tensor([a]), torch.tensor([0])
    on_b = torch.full((1, 24), -30.0)
    on_b[0, b] = 30.0
    on_c = torch.full((1, 24), -30.0)
    on_c[0, c] = 30.0
    # all mass on the equivalent flip b costs log 2 (C[a, a] = C[a, b] = 1/2), not a miss
    assert float(clf._loss(on_b, labels, idx)) == pytest.approx(np.log(2), abs=1e-3)
    assert float(clf._loss(on_c, labels, idx)) > 10
    plain = OctahedralFlipper()
    assert float(plain._loss(on_b, labels, idx)) == pytest.approx(float(
        torch.nn.functional.cross_entropy(on_b, labels)))


def test_forward_corrected_flipper_fits_pickles_and_canonicalises_labelled_clouds():
    X, _ = make_synthetic_shapes(3, 48, random_state=0)
    clf = OctahedralFlipper(**TINY, forward_correction=True).fit(X)
    assert clf.confusion_distances_.shape == (len(X), 24)
    np.testing.assert_allclose(clf.confusion_distances_, flip_confusion_distances(X))
    assert np.isfinite(clf.history_[-1]["train_loss"])
    again = pickle.loads(pickle.dumps(clf))
    np.testing.assert_allclose(again.predict_proba(X[:2]), clf.predict_proba(X[:2]))
    y = np.random.RandomState(0).randint(24, size=len(X))
    labelled = OctahedralFlipper(**TINY, forward_correction=True).fit(
        apply_rotation(X, octahedral_group()[y]), y)
    np.testing.assert_allclose(labelled.confusion_distances_, clf.confusion_distances_,
                               atol=1e-9)
    assert OctahedralFlipper(**TINY).fit(X).confusion_distances_ is None
    with pytest.raises(ValueError, match="confusion_temperature"):
        OctahedralFlipper(**TINY, confusion_temperature=0.0).fit(X)


def test_top_k_flips_are_ranked_by_probability():
    X, _ = make_synthetic_shapes(3, 48, random_state=1)
    clf = OctahedralFlipper(**TINY).fit(X)
    top = clf.predict_top_k(X, k=4)
    proba = clf.predict_proba(X)
    assert top.shape == (len(X), 4)
    np.testing.assert_array_equal(top[:, 0], proba.argmax(axis=1))
    ranked = np.take_along_axis(proba, top, axis=1)
    assert np.all(np.diff(ranked, axis=1) <= 0)
    assert clf.predict_top_k(X, k=24).shape == (len(X), 24)
    for bad in (0, 25, 2.5, True):
        with pytest.raises(ValueError, match="k must be"):
            clf.predict_top_k(X, k=bad)


def test_top_k_axis_errors_take_the_best_candidate():
    R_true = random_rotations(5, 0)
    cands = np.stack([R_true @ octahedral_group()[g] for g in (3, 9, 0)], axis=1)
    np.testing.assert_allclose(top_k_axis_errors(cands, R_true), 0.0, atol=1e-4)
    first = axis_errors(cands[:, 0], R_true)
    assert np.all(top_k_axis_errors(cands[:, :2], R_true) <= first + 1e-9)
    with pytest.raises(ValueError, match="R_candidates"):
        top_k_axis_errors(cands[:, 0], R_true)
    with pytest.raises(ValueError, match="as many shapes"):
        top_k_axis_errors(cands, R_true[:4])


class _FlipperWithoutTopK(BaseEstimator):
    def fit(self, X, y=None):
        return self

    def predict(self, X):
        return np.zeros(len(X), dtype=int)


def test_two_stage_top_k_completes_stage_one_with_each_flip():
    X, _ = make_synthetic_shapes(3, 48, random_state=2)
    pipe = TwoStageOrienter(PCAOrienter(), OctahedralFlipper(**TINY)).fit(X)
    Xr = apply_rotation(X, random_rotations(len(X), 3))
    cands = pipe.predict_top_k(Xr, k=3)
    assert cands.shape == (len(X), 3, 3, 3)
    np.testing.assert_allclose(cands[:, 0], pipe.predict(Xr))
    with pytest.raises(TypeError, match="predict_top_k"):
        TwoStageOrienter(PCAOrienter(), _FlipperWithoutTopK()).fit(X).predict_top_k(Xr)
