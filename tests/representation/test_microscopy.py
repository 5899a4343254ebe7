"""Tests of batch correction, curation, block search, metrics and the plate generators."""

import numpy as np
import pytest
import torch
from scipy import stats
from sklearn import config_context
from sklearn.base import BaseEstimator
from sklearn.frozen import FrozenEstimator
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline

from skpaper.datasets import make_plate_embeddings, make_synthetic_cell_plates
from skpaper.representation import (
    BlockSearchProbe,
    PerturbationConsistencyFilter,
    TypicalVariationNormalizer,
    aggregate_embeddings,
    linear_separability,
    relationship_recall,
    replicate_consistency_cvm,
    replicate_consistency_ks,
)


@pytest.fixture(scope="module")
def plates():
    return make_plate_embeddings(n_perturbations=100, random_state=0)


# ------------------------------------------------------------------------ TVN
@pytest.mark.parametrize("params", [{}, {"whiten": False}, {"coral": True}])
def test_tvn_fit_uses_controls_only(plates, params):
    d = plates
    X2 = d.X.copy()
    X2[~d.is_control] = np.random.default_rng(1).normal(size=((~d.is_control).sum(), 32)) * 50
    a = TypicalVariationNormalizer(**params).fit(d.X, batches=d.plate, is_control=d.is_control)
    b = TypicalVariationNormalizer(**params).fit(X2, batches=d.plate, is_control=d.is_control)
    for name in ("mean_", "batch_means_", "batch_scales_"):
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name))
    Z = a.transform(d.X, batches=d.plate)
    np.testing.assert_array_equal(Z, b.transform(d.X, batches=d.plate))


def test_tvn_normalises_each_batch_of_controls(plates):
    d = plates
    tvn = TypicalVariationNormalizer().fit(d.X, batches=d.plate, is_control=d.is_control)
    Z = tvn.transform(d.X, batches=d.plate)
    assert tvn.n_components_ == 32
    for b in np.unique(d.plate):
        ctrl = Z[(d.plate == b) & d.is_control]
        np.testing.assert_allclose(ctrl.mean(0), 0.0, atol=1e-10)
        np.testing.assert_allclose(ctrl.std(0), 1.0, atol=1e-8)
    coral = TypicalVariationNormalizer(coral=True, coral_reg=0.0).fit(
        d.X, batches=d.plate, is_control=d.is_control)
    Zc = coral.transform(d.X, batches=d.plate)
    ctrl = Zc[(d.plate == 0) & d.is_control]
    np.testing.assert_allclose(np.cov(ctrl, rowvar=False), np.eye(32), atol=1e-3)


def test_tvn_raises_replicate_consistency(plates):
    d = plates
    wells = ~d.is_control
    raw = replicate_consistency_ks(d.X[wells], d.perturbation[wells], batches=d.plate[wells])
    Z = TypicalVariationNormalizer().fit(d.X, batches=d.plate, is_control=d.is_control) \
        .transform(d.X, batches=d.plate)
    tvn = replicate_consistency_ks(Z[wells], d.perturbation[wells], batches=d.plate[wells])
    # about 300 across-plate replicate pairs: a KS gain of 0.05 is several standard errors
    assert tvn > raw + 0.05


def test_tvn_new_batch_needs_its_controls(plates):
    d = plates
    seen = d.plate < 5
    tvn = TypicalVariationNormalizer().fit(d.X[seen], batches=d.plate[seen],
                                           is_control=d.is_control[seen])
    new = ~seen
    with pytest.raises(ValueError, match="was not seen in fit; pass is_control"):
        tvn.transform(d.X[new], batches=d.plate[new])
    Z = tvn.transform(d.X[new], batches=d.plate[new], is_control=d.is_control[new])
    np.testing.assert_allclose(Z[d.is_control[new]].mean(0), 0.0, atol=1e-10)


def test_tvn_metadata_routing_in_pipeline(plates):
    d = plates
    with config_context(enable_metadata_routing=True):
        tvn = TypicalVariationNormalizer().set_fit_request(batches=True, is_control=True) \
            .set_transform_request(batches=True, is_control=True)
        pipe = make_pipeline(tvn, LogisticRegression(max_iter=200))
        wells = ~d.is_control
        y = (d.perturbation >= 50).astype(int)
        pipe.fit(d.X, y, batches=d.plate, is_control=d.is_control)
        direct = TypicalVariationNormalizer().fit(d.X, batches=d.plate,
                                                  is_control=d.is_control)
        np.testing.assert_allclose(pipe[0].batch_means_, direct.batch_means_)
        assert pipe.predict(d.X[wells], batches=d.plate[wells]).shape == (wells.sum(),)


def test_tvn_bad_inputs(plates):
    d = plates
    with pytest.raises(ValueError, match="batches must be a 1-D array of length"):
        TypicalVariationNormalizer().fit(d.X, batches=d.plate[:5])
    with pytest.raises(ValueError, match="at least 2 control samples"):
        TypicalVariationNormalizer().fit(d.X, is_control=np.zeros(len(d.X), bool))
    with pytest.raises(ValueError, match="have no control samples"):
        mask = d.is_control & (d.plate != 0)
        TypicalVariationNormalizer().fit(d.X, batches=d.plate, is_control=mask)
    with pytest.raises(ValueError, match="is_control must be boolean"):
        TypicalVariationNormalizer().fit(d.X, is_control=np.full(len(d.X), 2))
    tvn = TypicalVariationNormalizer().fit(d.X, batches=d.plate, is_control=d.is_control)
    with pytest.raises(ValueError, match="batches is required"):
        tvn.transform(d.X)
    with pytest.raises(ValueError, match="n_components"):
        TypicalVariationNormalizer(n_components=0).fit(d.X)


# ------------------------------------------------------------------ curation
def test_consistency_filter_finds_perturbations_with_phenotype():
    d = make_plate_embeddings(n_perturbations=60, batch_effect=0.0, effect_size=8.0,
                              random_state=3)
    wells = ~d.is_control
    filt = PerturbationConsistencyFilter(n_permutations=400, alpha=0.01, random_state=0)
    filt.fit(d.X[wells], d.perturbation[wells])
    truth = d.has_phenotype[filt.perturbations_]
    assert filt.consistent_[~truth].mean() <= 0.1
    assert filt.consistent_[truth].mean() >= 0.6
    mask = filt.sample_mask(d.perturbation)
    assert mask.sum() == 3 * filt.consistent_.sum() and not mask[d.is_control].any()


def test_consistency_filter_pvalues_are_valid_under_the_null():
    rng = np.random.default_rng(0)
    labels = np.repeat(np.arange(200), 3)
    X = rng.normal(size=(600, 8))
    filt = PerturbationConsistencyFilter(n_permutations=200, alpha=0.05, random_state=0)
    filt.fit(X, labels)
    # 200 null perturbations: the count below 0.05 stays under the binomial 0.999 quantile
    assert filt.consistent_.sum() <= stats.binom.ppf(0.999, 200, 0.05)
    assert np.all((filt.pvalues_ > 0) & (filt.pvalues_ <= 1))


def test_consistency_filter_singletons_and_bad_input():
    X = np.random.default_rng(0).normal(size=(5, 3))
    filt = PerturbationConsistencyFilter(n_permutations=20, random_state=0)
    filt.fit(X, [0, 0, 1, 2, 2])
    assert np.isnan(filt.pvalues_[1]) and not filt.consistent_[1]
    with pytest.raises(ValueError, match="1-D array of perturbation labels"):
        filt.sample_mask(np.zeros((2, 2)))
    with pytest.raises(ValueError, match="alpha"):
        PerturbationConsistencyFilter(alpha=0).fit(X, [0, 0, 1, 1, 1])


# --------------------------------------------------------------- block search
class _LayeredEncoder(BaseEstimator):
    """Deterministic encoder: block ``b`` keeps the label signal with weight ``weights[b]``."""

    def __init__(self, weights=(0.2, 1.0, 0.0)):
        self.weights = weights

    def fit(self, X, y=None):
        self.n_features_in_ = X.shape[1]
        return self

    def transform_all_blocks(self, X):
        rng = np.random.default_rng(0)
        noise = rng.normal(size=(len(self.weights),) + X.shape)
        return np.stack([w * X + n for w, n in zip(self.weights, noise)])

    def transform(self, X, block=None):
        return self.transform_all_blocks(X)[(block or len(self.weights)) - 1]


def test_block_search_picks_the_informative_block():
    rng = np.random.default_rng(0)
    y = np.repeat([0, 1, 2], 40)
    X = 3.0 * np.eye(3)[y] + 0.1 * rng.normal(size=(120, 3))
    search = BlockSearchProbe(_LayeredEncoder(), cv=3).fit(X, y)
    assert search.best_block_ == 2
    assert search.block_scores_[1] > 0.9 and search.block_scores_[2] < 0.6
    assert search.trimmed_encoder_ is None
    np.testing.assert_allclose(search.transform(X), _LayeredEncoder().transform(X, block=2))
    assert search.predict(X).shape == (120,) and search.predict_proba(X).shape == (120, 3)
    assert search.score(X, y) > 0.9 and list(search.classes_) == [0, 1, 2]


class _DegradedBlock(torch.nn.Module):
    """Replaces an encoder block by a random rank-2 projection of the stream plus noise."""

    def __init__(self, dim, seed, noise=3.0):
        super().__init__()
        gen = torch.Generator().manual_seed(seed)
        self.register_buffer("proj", torch.randn(dim, 2, generator=gen)
                             @ torch.randn(2, dim, generator=gen) / dim)
        self.noise = noise
        self.generator = torch.Generator().manual_seed(seed + 1)

    def forward(self, x, history=None):
        noise = torch.randn(x.shape, generator=self.generator).to(x.device, x.dtype)
        return x @ self.proj.to(x.dtype) + self.noise * noise


def test_block_search_avoids_degraded_last_blocks_and_trims_there():
    from sklearn.datasets import load_digits

    from skpaper.representation import MicroscopyMAE

    X, y = load_digits(return_X_y=True)
    X, y = X[:300], y[:300]
    mae = MicroscopyMAE(image_shape=(1, 8, 8), patch_size=2, embed_dim=16, depth=4, n_heads=2,
                        decoder_dim=16, decoder_heads=2, layer_scale=None, max_epochs=2,
                        lr=2e-3, batch_size=64, random_state=0, device="cpu").fit(X)
    encoder = mae.module_.encoder
    for j in (2, 3):  # blocks 3 and 4 become noise
        encoder.blocks[j] = _DegradedBlock(encoder.embed_dim, seed=10 + j)
    search = BlockSearchProbe(FrozenEstimator(mae), cv=3).fit(X, y)
    assert search.best_block_ <= 2
    assert max(search.block_scores_[2:]) < 0.3 < search.block_scores_[search.best_block_ - 1]
    trimmed = search.trimmed_encoder_.transform(X)
    direct = mae.transform_all_blocks(X)[search.best_block_ - 1]
    np.testing.assert_allclose(trimmed, direct, atol=1e-8)


def test_block_search_frozen_encoder_is_not_refitted():
    enc = _LayeredEncoder().fit(np.zeros((2, 3)))
    y = np.repeat([0, 1], 20)
    X = np.c_[y, -y, y] * 3.0
    frozen = FrozenEstimator(enc)
    search = BlockSearchProbe(frozen, cv=2).fit(X, y)
    assert search.encoder_ is frozen


def test_block_search_bad_inputs():
    with pytest.raises(ValueError, match="encoder"):
        BlockSearchProbe(LogisticRegression()).fit(np.zeros((10, 2)), np.arange(10) % 2)

    class _BadShape(_LayeredEncoder):
        def transform_all_blocks(self, X):
            return np.zeros((2, 3))

    with pytest.raises(ValueError, match="must return an array of shape"):
        BlockSearchProbe(_BadShape(), cv=2).fit(np.zeros((10, 2)), np.arange(10) % 2)


# -------------------------------------------------------------------- metrics
def test_replicate_consistency_is_near_zero_for_unrelated_replicates():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(400, 16))
    labels = np.repeat(np.arange(100), 4)
    ks = replicate_consistency_ks(X, labels, random_state=0)
    # one-sided KS with 600 replicate pairs: 0.1 is far beyond the null's 0.999 quantile
    assert 0.0 <= ks < 0.1
    centres = rng.normal(size=(100, 16))
    assert replicate_consistency_ks(centres[labels] + 0.5 * X, labels) > 0.9
    assert replicate_consistency_cvm(centres[labels] + 0.5 * X, labels) > \
        replicate_consistency_cvm(X, labels)


def test_replicate_consistency_across_batches_only():
    labels = np.array([0, 0, 1, 1])
    X = np.array([[1.0, 0], [1, 0.1], [0, 1], [0.1, 1]])
    with pytest.raises(ValueError, match="at least one replicate pair"):
        replicate_consistency_ks(X, labels, batches=[0, 0, 1, 1])
    assert replicate_consistency_ks(X, labels, batches=[0, 1, 0, 1]) == 1.0
    with pytest.raises(ValueError, match="perturbations must be a 1-D array"):
        replicate_consistency_ks(X, labels[:3])


def test_relationship_recall_pairs_labels_and_chance():
    rng = np.random.default_rng(0)
    # 20 groups of 3: the 60 related pairs fit in the top 5% of the 1770 pairs
    groups = np.repeat(np.arange(20), 3)
    X = rng.normal(size=(20, 12))[groups] + 0.3 * rng.normal(size=(60, 12))
    by_label = relationship_recall(X, groups)
    rows, cols = np.triu_indices(60, 1)
    same = groups[rows] == groups[cols]
    by_pairs = relationship_recall(X, np.c_[rows[same], cols[same]])
    assert by_label == by_pairs > 0.9
    # random embeddings recall about 2 * top (20 draws of 60 pairs: sd of the mean ~0.012)
    null = [relationship_recall(rng.normal(size=(60, 12)), groups, top=0.1) for _ in range(20)]
    assert abs(np.mean(null) - 0.2) < 0.05
    with pytest.raises(ValueError, match="no pair"):
        relationship_recall(X, np.arange(60))
    with pytest.raises(ValueError, match="relation pairs must index rows"):
        relationship_recall(X, np.array([[0, 60]]))
    with pytest.raises(ValueError, match="top"):
        relationship_recall(X, groups, top=0.6)


def test_linear_separability_and_aggregation():
    rng = np.random.default_rng(0)
    y = np.repeat(np.arange(4), 30)
    X = 2.0 * np.eye(4)[y] + 0.3 * rng.normal(size=(120, 4))
    assert linear_separability(X, y, random_state=0) > 0.95
    assert linear_separability(rng.normal(size=(120, 4)), y, random_state=0) < 0.45
    groups = np.tile(np.arange(3), 40)
    assert linear_separability(X, y, groups=groups, cv=3) > 0.95
    means, labels = aggregate_embeddings(X, y)
    np.testing.assert_allclose(means[2], X[y == 2].mean(0))
    assert labels.tolist() == [0, 1, 2, 3]
    with pytest.raises(ValueError, match="y must be a 1-D array"):
        linear_separability(X, y[:5])
    with pytest.raises(ValueError, match="cv"):
        linear_separability(X, y, cv=1)


# ------------------------------------------------------------------ generators
def test_plate_generators_layout_and_determinism():
    d = make_synthetic_cell_plates(n_perturbations=6, n_plates=3, n_replicates=2,
                                   n_controls=4, n_sites=2, image_size=16, random_state=0)
    assert d.images.shape == ((6 * 2 + 3 * 4) * 2, 5, 16, 16)
    assert d.X.shape == (48, 5 * 16 * 16) and d.images.dtype == np.float32
    assert d.is_control.sum() == 24 and np.all(d.perturbation[d.is_control] == -1)
    for p in range(6):
        assert np.unique(d.plate[d.perturbation == p]).size == 2
    again = make_synthetic_cell_plates(n_perturbations=6, n_plates=3, n_replicates=2,
                                       n_controls=4, n_sites=2, image_size=16, random_state=0)
    np.testing.assert_array_equal(d.images, again.images)
    e = make_plate_embeddings(n_perturbations=10, phenotype_fraction=0.5, random_state=0)
    assert e.has_phenotype.sum() == 5 and np.all(e.pathway[~e.has_phenotype] == -1)
    assert np.all(np.linalg.norm(e.effects[~e.has_phenotype], axis=1) == 0)


def test_plate_generators_bad_input():
    with pytest.raises(ValueError, match="n_replicates=5 must be at most n_plates=4"):
        make_synthetic_cell_plates(n_replicates=5)
    with pytest.raises(ValueError, match="n_replicates=7 must be at most n_plates=6"):
        make_plate_embeddings(n_replicates=7)
    with pytest.raises(ValueError, match="image_size"):
        make_synthetic_cell_plates(image_size=4)


def test_morphology_plates_keep_the_phenotype_through_standardisation():
    # the same wells drawn with and without a phenotype: channel gains and offsets are
    # nuisance, so standardised images still differ where the morphology code does
    kw = dict(n_perturbations=6, n_plates=2, n_replicates=2, n_controls=2, n_sites=1,
              image_size=16, batch_effect=0.0, noise=0.0, phenotype="morphology",
              random_state=0)
    d = make_synthetic_cell_plates(effect_size=4.0, **kw)
    flat = make_synthetic_cell_plates(effect_size=0.0, **kw)
    assert np.all(flat.morphology == 0) and np.any(d.morphology != 0)

    def standardised(images):
        images = images.astype(float)
        mean = images.mean(axis=(-2, -1), keepdims=True)
        return (images - mean) / images.std(axis=(-2, -1), keepdims=True)

    moved = d.has_phenotype[np.maximum(d.perturbation, 0)] & ~d.is_control
    diff = np.abs(standardised(d.images) - standardised(flat.images)).mean(axis=(1, 2, 3))
    assert np.all(diff[moved] > 0.01)
    np.testing.assert_allclose(diff[~moved], 0.0, atol=1e-6)
    with pytest.raises(ValueError, match="phenotype"):
        make_synthetic_cell_plates(phenotype="colour")
