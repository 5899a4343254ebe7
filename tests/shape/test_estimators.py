"""QuotientOrienter, OctahedralFlipper, PCAOrienter and TwoStageOrienter."""

import pickle

import numpy as np
import pytest
from scipy import stats
from sklearn.base import clone
from sklearn.exceptions import NotFittedError
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import Pipeline

from skpaper.datasets import make_synthetic_shapes
from skpaper.shape import (
    OctahedralFlipper,
    PCAOrienter,
    QuotientOrienter,
    TwoStageOrienter,
    angle_modulo_group,
    apply_rotation,
    axis_angle_to_matrix,
    octahedral_cayley_table,
    octahedral_group,
    octahedral_medoid,
    random_rotations,
)

TINY = dict(n_points=32, embed_dim=16, max_epochs=2, batch_size=8, device="cpu",
            random_state=0)


@pytest.fixture(scope="module")
def shapes():
    X, family = make_synthetic_shapes(4, 48, random_state=0)
    return X, family


def _is_rotation(R):
    return (np.allclose(R @ np.swapaxes(R, -1, -2), np.eye(3), atol=1e-5)
            and np.allclose(np.linalg.det(R), 1.0, atol=1e-5))


@pytest.mark.parametrize("params", [
    {}, {"loss": "l2"}, {"loss": "raw_quotient"}, {"loss": "octahedral_abs_cos"},
    {"backbone": "dgcnn", "k_neighbors": 5},
    {"use_normals": False}, {"n_votes": 1},
])
def test_quotient_orienter_outputs_rotations_and_consistent_transform(shapes, params):
    X, _ = shapes
    if params.get("use_normals") is False:
        X = X[..., :3]
    est = QuotientOrienter(**{**TINY, "n_votes": 3, **params}).fit(X)
    R = est.predict(X)
    assert R.shape == (len(X), 3, 3) and _is_rotation(R)
    np.testing.assert_allclose(est.transform(X), apply_rotation(X, np.swapaxes(R, 1, 2)))
    assert est.predict_raw(X).shape == (len(X), 3, 3)
    assert len(est.history_) == 2 and np.isfinite(est.history_[-1]["train_loss"])
    assert 0.0 <= est.score(apply_rotation(X, R), R) <= 1.0


def test_raw_quotient_loss_is_the_raw_l2_loss_to_the_nearest_octahedral_target():
    import torch

    est = QuotientOrienter(loss="raw_quotient")
    R = torch.as_tensor(random_rotations(5, random_state=1))
    M = torch.as_tensor(np.random.RandomState(2).normal(size=(5, 3, 3)))
    G = torch.as_tensor(octahedral_group())
    # min over the 24 targets R g of the raw ||M - R g||^2, so any R g gives the same loss
    expected = ((M[:, None] - R[:, None] @ G[None]) ** 2).sum((-1, -2)).min(1).values.mean()
    assert float(est._compute_loss(M, R)) == pytest.approx(float(expected))
    assert float(est._compute_loss(M, R @ G[7])) == pytest.approx(float(expected))
    # it is the naive l2 loss when the nearest target is R itself
    assert float(est._compute_loss(R, R)) == pytest.approx(0.0)
    assert float(QuotientOrienter(loss="l2")._compute_loss(M, R @ G[7])) != pytest.approx(
        float(expected))


def test_quotient_orienter_supervised_fit_and_seeded_votes(shapes):
    X, _ = shapes
    R = random_rotations(len(X), 0)
    a = QuotientOrienter(**TINY, n_votes=4).fit(apply_rotation(X, R), R)
    b = QuotientOrienter(**TINY, n_votes=4).fit(apply_rotation(X, R), R)
    np.testing.assert_allclose(a.predict(X), b.predict(X))
    np.testing.assert_allclose(pickle.loads(pickle.dumps(a)).predict(X), a.predict(X),
                               atol=1e-6)


def test_quotient_orienter_fits_rotations_modulo_o():
    # Supervised fit on fixed rotations of benches: the training error modulo O falls far
    # below that of random guesses (median about 45 degrees), and the loss drops.
    X, _ = make_synthetic_shapes(32, 64, families=["bench"], random_state=0)
    R = random_rotations(len(X), 2)
    Xr = apply_rotation(X, R)
    est = QuotientOrienter(n_points=64, embed_dim=64, max_epochs=40, batch_size=8, lr=2e-3,
                           n_votes=1, device="cpu", random_state=0).fit(Xr, R)
    err = angle_modulo_group(est.predict(Xr), R)
    chance = angle_modulo_group(random_rotations(len(X), 3), R)
    assert np.median(err) < 15.0 < 30.0 < np.median(chance)
    assert stats.mannwhitneyu(err, chance, alternative="less").pvalue < 1e-6
    assert est.history_[-1]["train_loss"] < 0.2 * est.history_[0]["train_loss"]


def test_octahedral_medoid_picks_the_consensus_modulo_o():
    O = octahedral_group()
    base = random_rotations(1, 0)[0]
    cluster = [base @ axis_angle_to_matrix(axis, np.deg2rad(3.0)) @ O[g]
               for axis, g in (([0, 0, 1.0], 3), ([0, 1.0, 0], 10), ([1.0, 0, 0], 0),
                               ([1.0, 1.0, 0], 21))]
    outliers = list(random_rotations(2, 5))
    candidates = np.stack(outliers[:1] + cluster + outliers[1:])
    best = octahedral_medoid(candidates)
    assert best in (1, 2, 3, 4)
    # Distances modulo O ignore which cube rotation each candidate carries.
    assert octahedral_medoid(candidates @ O[[5, 0, 7, 9, 11, 2]]) == best


def test_flipper_probabilities_votes_and_classes(shapes):
    X, _ = shapes
    clf = OctahedralFlipper(**TINY, n_votes=5).fit(X)
    proba = clf.predict_proba(X)
    assert proba.shape == (len(X), 24)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0, atol=1e-6)
    assert set(clf.predict(X)) <= set(range(24)) and list(clf.classes_) == list(range(24))
    y = np.arange(len(X)) % 24
    sup = OctahedralFlipper(**TINY).fit(apply_rotation(X, octahedral_group()[y]), y)
    assert sup.predict(X).shape == (len(X),)


def test_flipper_full_voting_is_exactly_flip_equivariant(shapes):
    X, _ = shapes
    clf = OctahedralFlipper(**{**TINY, "inference_dtype": "float64"}, n_votes=24).fit(X)
    O = octahedral_group()
    table, _ = octahedral_cayley_table()
    base_proba = clf.predict_proba(X)
    base = clf.predict(X)
    for h in (4, 17):
        flipped = apply_rotation(X, O[h])
        np.testing.assert_allclose(clf.predict_proba(flipped)[:, table[h]], base_proba,
                                   atol=1e-9)
        np.testing.assert_array_equal(clf.predict(flipped), table[h, base])


def test_flipper_learns_flips_of_identifiable_shapes():
    X, _ = make_synthetic_shapes(16, 64, families=["chair"], random_state=0)
    clf = OctahedralFlipper(n_points=64, embed_dim=64, max_epochs=150, batch_size=8, lr=2e-3,
                            device="cpu", random_state=0).fit(X)
    X_test, _ = make_synthetic_shapes(24, 64, families=["chair"], random_state=1)
    y = np.random.RandomState(0).randint(24, size=len(X_test))
    correct = np.sum(clf.predict(apply_rotation(X_test, octahedral_group()[y])) == y)
    # Chance is 1/24 per shape: 8 or more of 24 correct has probability < 1e-5 under chance.
    assert correct >= 8
    assert stats.binom.sf(correct - 1, len(y), 1 / 24) < 1e-5


def test_flipper_conformal_sets_follow_the_quantile(shapes):
    X, _ = shapes
    clf = OctahedralFlipper(**TINY).fit(X)
    with pytest.raises(NotFittedError, match="calibrate_conformal"):
        clf.predict_set(X)
    y = np.random.RandomState(1).randint(24, size=len(X))
    Xf = apply_rotation(X, octahedral_group()[y])
    scores = clf.conformal_scores(Xf, y)
    assert np.all((scores > 0) & (scores <= 1 + 1e-9))
    clf.calibrate_conformal(Xf, y, alpha=0.2)
    n = len(scores)
    k = int(np.ceil((n + 1) * 0.8))
    assert clf.conformal_quantile_ == pytest.approx(np.sort(scores)[k - 1])
    sets = clf.predict_set(Xf)
    assert sets.dtype == bool and sets.shape == (n, 24) and sets.any(axis=1).all()
    # Sets grow until the cumulative probability reaches q_hat: every pair whose score is at
    # most q_hat is covered, and a label is in the set iff the mass ranked above it is below.
    covered = sets[np.arange(n), y]
    assert covered[scores <= clf.conformal_quantile_].all()
    above = scores - clf.predict_proba(Xf)[np.arange(n), y]
    np.testing.assert_array_equal(covered, above < clf.conformal_quantile_)
    clf.calibrate_conformal(X, alpha=0.01, random_state=0)  # too few points: all flips
    assert np.isinf(clf.conformal_quantile_) and clf.predict_set(X).all()


def test_conformal_sets_reach_nominal_coverage():
    # Exchangeable calibration and test draws from one model: coverage >= 1 - alpha up to a
    # 3-sigma binomial margin (a broken quantile or set rule falls far below).
    X, _ = make_synthetic_shapes(60, 32, families=["chair", "table"], random_state=2)
    clf = OctahedralFlipper(n_points=32, embed_dim=16, max_epochs=3, batch_size=16,
                            device="cpu", random_state=0).fit(X[::10])
    rng = np.random.RandomState(0)
    y = rng.randint(24, size=len(X))
    Xf = apply_rotation(X, octahedral_group()[y])
    clf.calibrate_conformal(Xf[:60], y[:60], alpha=0.1)
    covered = clf.predict_set(Xf[60:])[np.arange(60), y[60:]]
    assert covered.mean() >= 0.9 - 3 * np.sqrt(0.09 / 60)


def test_pca_orienter_is_exactly_equivariant_modulo_o():
    X, _ = make_synthetic_shapes(5, 200, families=["bench", "chair"], random_state=0)
    est = PCAOrienter().fit(X)
    Q = random_rotations(len(X), 1)
    R0 = est.predict(X)
    assert _is_rotation(R0)
    np.testing.assert_allclose(angle_modulo_group(est.predict(apply_rotation(X, Q)), Q @ R0),
                               0.0, atol=1e-5)
    # Benches have distinct principal axes along their orientation axes.
    assert est.score(X[:5], np.eye(3)[None].repeat(5, 0)) == 1.0


def test_two_stage_pipeline_is_equivariant_with_pca_and_full_flip_voting():
    X, _ = make_synthetic_shapes(4, 200, families=["bench", "chair"], random_state=0)
    flipper = OctahedralFlipper(**{**TINY, "n_points": 200, "inference_dtype": "float64"},
                                n_votes=24)
    pipe = TwoStageOrienter(PCAOrienter(), flipper).fit(X)
    Q = random_rotations(len(X), 1)
    R0 = pipe.predict(X)
    R1 = pipe.predict(apply_rotation(X, Q))
    # Rotating the input rotates the prediction (PCA is equivariant modulo O and full flip
    # voting makes the flipper equivariant to the remaining cube rotation).
    np.testing.assert_allclose(R1, Q @ R0, atol=1e-6)
    np.testing.assert_allclose(pipe.transform(apply_rotation(X, Q)), pipe.transform(X),
                               atol=1e-6)


def test_two_stage_composes_stages_and_canonicalises_supervised_fits(shapes):
    X, _ = shapes
    R = random_rotations(len(X), 4)
    pipe = TwoStageOrienter(QuotientOrienter(**TINY, n_votes=1), OctahedralFlipper(**TINY))
    pipe.fit(apply_rotation(X, R), R)
    R1, flips = pipe.predict_stages(apply_rotation(X, R))
    np.testing.assert_allclose(pipe.predict(apply_rotation(X, R)),
                               R1 @ octahedral_group()[flips])
    assert 0.0 <= pipe.score(apply_rotation(X, R), R) <= 1.0
    assert pipe.orienter_ is not pipe.orienter and pipe.flipper_.n_features_in_ == 6


def test_estimators_work_in_pipeline_and_grid_search(shapes):
    X, _ = shapes
    R = random_rotations(len(X), 0)
    Xr = apply_rotation(X, R)
    pipe = Pipeline([("orient", QuotientOrienter(**TINY, n_votes=1)),
                     ("flip", OctahedralFlipper(**TINY))]).fit(X)
    assert pipe.predict(Xr).shape == (len(X),)
    search = GridSearchCV(QuotientOrienter(**TINY, n_votes=1), {"loss": ["quotient", "l2"]},
                          cv=2).fit(Xr, R)
    assert search.best_params_["loss"] in ("quotient", "l2")
    assert clone(search.best_estimator_).get_params()["n_points"] == 32


@pytest.mark.parametrize("make", [
    lambda: QuotientOrienter(**TINY), lambda: OctahedralFlipper(**TINY), lambda: PCAOrienter(),
    lambda: TwoStageOrienter(PCAOrienter(), OctahedralFlipper(**TINY)),
])
def test_estimators_reject_bad_point_clouds(shapes, make):
    X, _ = shapes
    bad_nan = X.copy()
    bad_nan[0, 0, 0] = np.nan
    for bad, error, match in [
        (X[:, :, :4], ValueError, r"shape \(n_samples, n_points, 3 or 6\)"),
        (X[0], ValueError, r"shape \(n_samples, n_points, 3 or 6\)"),
        (bad_nan, ValueError, "NaN"),
        ("clouds", TypeError, "point clouds"),
    ]:
        with pytest.raises(error, match=match):
            make().fit(bad)
    est = make().fit(X)
    with pytest.raises(ValueError, match="NaN"):
        est.predict(bad_nan)
    with pytest.raises(ValueError, match="channels"):
        est.predict(X[..., :3])


def test_estimators_reject_bad_targets(shapes):
    X, _ = shapes
    with pytest.raises(ValueError, match="use_normals=True needs X with 6 channels"):
        QuotientOrienter(**TINY).fit(X[..., :3])
    with pytest.raises(ValueError, match=r"y must have shape \(24, 3, 3\)"):
        QuotientOrienter(**TINY).fit(X, np.eye(3))
    with pytest.raises(ValueError, match="rotation matrices"):
        QuotientOrienter(**TINY).fit(X, 2 * np.eye(3)[None].repeat(len(X), 0))
    with pytest.raises(ValueError, match="flip indices in 0..23"):
        OctahedralFlipper(**TINY).fit(X, np.full(len(X), 24))
    with pytest.raises(ValueError, match="one flip index per cloud"):
        OctahedralFlipper(**TINY).fit(X, np.zeros(3, dtype=int))
    clf = OctahedralFlipper(**TINY).fit(X)
    with pytest.raises(ValueError, match="alpha"):
        clf.calibrate_conformal(X, alpha=1.5)
    with pytest.raises(ValueError, match="noise_deg"):
        clf.calibrate_conformal(X, noise_deg=-1.0)
    with pytest.raises(ValueError, match="sample_weight"):
        PCAOrienter().fit(X).score(X, np.eye(3)[None].repeat(len(X), 0), np.ones(len(X)))
    with pytest.raises(ValueError, match="backbone"):
        QuotientOrienter(backbone="mlp").fit(X)


def _medoid_by_all_differences(candidates, group):
    targets = np.einsum("jab,gbc->jgac", candidates, group)
    dist = ((candidates[:, None, None] - targets[None]) ** 2).sum(axis=(-1, -2)).min(axis=-1)
    return int(np.argmin(dist.sum(axis=1)))


@pytest.mark.parametrize("n_votes", [3, 7, 40])
def test_octahedral_medoid_in_blocks_matches_all_differences(n_votes, monkeypatch):
    from skpaper.shape import _orienter, random_small_rotations

    rng = np.random.RandomState(n_votes)
    group = octahedral_group()
    for block_entries in (2**20, 24 * n_votes):  # one block; one row per block
        monkeypatch.setattr(_orienter, "_MEDOID_BLOCK_ENTRIES", block_entries)
        for votes in (random_rotations(n_votes, rng),
                      random_small_rotations(n_votes, 20.0, random_state=n_votes)):
            assert octahedral_medoid(votes) == _medoid_by_all_differences(votes, group)
            eye = np.eye(3)[None]
            assert octahedral_medoid(votes, eye) == _medoid_by_all_differences(votes, eye)


def test_octahedral_medoid_of_many_votes_stays_in_bounded_memory():
    import tracemalloc

    votes = random_rotations(1024, np.random.RandomState(0))
    tracemalloc.start()
    try:
        octahedral_medoid(votes)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    # All differences at once would take 1024**2 * 24 * 9 float64 = 1.7 GiB.
    assert peak < 64 * 2**20
