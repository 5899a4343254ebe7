"""KeypointMotionTransfer: fitting, the anytime pipeline, and bad input."""

import pickle

import numpy as np
import pytest
import torch
from sklearn.base import clone
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import FunctionTransformer

from skpaper.datasets import make_sprite_videos
from skpaper.nn import Callback
from skpaper.vision import KeypointMotionTransfer
from skpaper.vision._motion_training import _decay_milestones

SMALL = dict(n_keypoints=5, width=4, max_epochs=2, batch_size=4, lr=2e-3,
             feature_extractor=None, random_state=0, device="cpu")


@pytest.fixture(scope="module")
def videos():
    return make_sprite_videos(n_videos=6, n_frames=4, size=16, texture="procedural",
                              random_state=0).videos


@pytest.fixture(scope="module")
def model(videos):
    return KeypointMotionTransfer(**SMALL).fit(videos)


def test_motion_transfer_output_shapes(model, videos):
    assert model.predict(videos[:2]).shape == videos[:2].shape
    assert model.transform(videos[:2, 0], videos[:2]).shape == videos[:2].shape
    assert model.transform(videos[0, 0], videos[:3, 1]).shape == videos[:3, 1].shape
    assert model.transform(videos[:2]).shape == videos[:2].shape
    assert model.detect_keypoints(videos[:2]).shape == (2, 4, 5, 2)
    assert model.interpolate(videos[0, 0], videos[0, 1]).shape == videos[0, 0].shape
    assert model.interpolate(videos[:2, 0], videos[:2, 1], [0.1, 0.9]).shape == (2, 2, 16, 16, 3)
    assert np.all((model.predict(videos[:1]) >= 0) & (model.predict(videos[:1]) <= 1))
    assert np.all(np.abs(model.detect_keypoints(videos[0])) <= 1)


def test_motion_transfer_interpolation_endpoints_are_the_one_step_transfers(model, videos):
    source, driving = videos[:3, 0], videos[:3, -1]
    ends = model.interpolate(source, driving, [0.0, 1.0])
    np.testing.assert_allclose(ends[:, 1], model.transform(source, driving, path="direct"),
                               atol=1e-6)
    np.testing.assert_allclose(ends[:, 0], model.transform(source, source, path="direct"),
                               atol=1e-6)


def test_anytime_transfer_goes_through_the_selected_interpolant(model, videos):
    source, driving = videos[:4, 0], videos[:4, -1]
    res = model.anytime_transfer(source, driving)
    assert res.candidates.shape == (4, 3, 16, 16, 3)
    np.testing.assert_array_equal(res.interpolation, [0.25, 0.5, 0.75])
    best = res.scores.argmin(axis=1)
    np.testing.assert_allclose(res.t, res.interpolation[best])
    selected = res.candidates[np.arange(4), best]
    np.testing.assert_allclose(res.output, model.transform(selected, driving, path="direct"),
                               atol=1e-5)
    np.testing.assert_allclose(res.output, model.transform(source, driving), atol=1e-6)
    np.testing.assert_allclose(res.direct, model.transform(source, driving, path="direct"),
                               atol=1e-6)
    np.testing.assert_allclose(res.candidates[:, 1], model.interpolate(source, driving, 0.5),
                               atol=1e-6)


@pytest.mark.parametrize("params", [
    dict(selector="consistency"),
    dict(selector="learned", constraint="all", backbone="gaussian"),
    dict(bidirectional=False, feature_extractor="autoencoder"),
    dict(interpolation=None, bidirectional=False),
])
def test_motion_transfer_training_variants(videos, params):
    est = KeypointMotionTransfer(**{**SMALL, "max_epochs": 1, **params}).fit(videos)
    record = est.history_[-1]
    assert np.isfinite(record["train_loss"])
    if params.get("interpolation", ()) is None:
        assert "chain" not in record
        assert est.interpolation_.size == 0
        assert model_output_is_direct(est, videos)
    else:
        assert {"chain", "keypoint"} <= set(record)
        assert ("symmetry" in record) == est.bidirectional
        assert ("selector" in record) == (est.selector == "learned")
        res = est.anytime_transfer(videos[:2, 0], videos[:2, 1])
        assert set(np.round(res.t, 6)) <= set(np.round(est.interpolation_, 6))


def model_output_is_direct(est, videos):
    return np.allclose(est.predict(videos[:1]), est.predict(videos[:1], path="direct"))


def test_motion_transfer_pickles_with_its_feature_extractor(videos):
    est = KeypointMotionTransfer(**{**SMALL, "max_epochs": 1,
                                    "feature_extractor": "random"}).fit(videos)
    assert est.features_ is not None
    back = pickle.loads(pickle.dumps(est))
    np.testing.assert_allclose(back.predict(videos[:2]), est.predict(videos[:2]), atol=1e-6)
    assert all(not p.requires_grad for p in back.features_.parameters())


def test_motion_transfer_is_deterministic_given_random_state(videos):
    a = KeypointMotionTransfer(**{**SMALL, "max_epochs": 1}).fit(videos)
    b = clone(a).fit(videos)
    np.testing.assert_allclose(a.predict(videos[:2]), b.predict(videos[:2]), atol=1e-6)
    c = clone(a).set_params(random_state=1).fit(videos)
    assert not np.allclose(a.predict(videos[:2]), c.predict(videos[:2]))


def test_motion_transfer_grayscale_videos(videos):
    grey = videos.mean(axis=-1)
    est = KeypointMotionTransfer(**{**SMALL, "max_epochs": 1}).fit(grey)
    assert est.image_shape_ == (16, 16, 1)
    assert est.predict(grey[:1]).shape == (1, 4, 16, 16, 1)


def test_motion_transfer_in_pipeline_and_grid_search(videos):
    pipe = make_pipeline(FunctionTransformer(lambda v: np.clip(v, 0, 1)),
                         KeypointMotionTransfer(**{**SMALL, "max_epochs": 1}))
    assert np.isfinite(pipe.fit(videos).score(videos))
    search = GridSearchCV(KeypointMotionTransfer(**{**SMALL, "max_epochs": 1}),
                          {"n_keypoints": [3, 5]}, cv=2).fit(videos)
    assert search.best_params_["n_keypoints"] in (3, 5)
    assert search.best_score_ <= 0


def test_motion_transfer_score_is_negative_l1(model, videos):
    assert model.score(videos) == pytest.approx(-np.abs(model.predict(videos) - videos).mean())


@pytest.mark.parametrize("params, match", [
    (dict(backbone="tps", n_keypoints=2), "n_keypoints >= 3"),
    (dict(interpolation=(0.0, 0.5)), "open interval"),
    (dict(interpolation=(1.2,)), "open interval"),
    (dict(interpolation=()), "at least one"),
    (dict(loss_weights={"nonsense": 1.0}), "loss_weights keys"),
    (dict(loss_weights={"chain": -1.0}), "non-negative"),
])
def test_motion_transfer_bad_parameters(videos, params, match):
    with pytest.raises(ValueError, match=match):
        KeypointMotionTransfer(**{**SMALL, **params}).fit(videos)


def test_motion_transfer_bad_interpolation_type(videos):
    with pytest.raises(TypeError, match="interpolation"):
        KeypointMotionTransfer(**{**SMALL, "interpolation": ("a", "b")}).fit(videos)


@pytest.mark.parametrize("X, match", [
    (np.zeros((2, 16, 16)), "array of videos"),
    (np.zeros((2, 1, 16, 16, 3)), "at least 2 frames"),
    (np.zeros((2, 3, 4, 4, 3)), "at least 8x8"),
    (np.full((2, 3, 16, 16, 3), np.nan), "NaN"),
    ("not videos", "array of videos"),
])
def test_motion_transfer_fit_bad_input(X, match):
    with pytest.raises(ValueError, match=match):
        KeypointMotionTransfer(**SMALL).fit(X)


def test_motion_transfer_inference_bad_input(model, videos):
    with pytest.raises(ValueError, match="fitted on frames of shape"):
        model.predict(np.zeros((1, 3, 8, 8, 3)))
    with pytest.raises(ValueError, match="driving_frames"):
        model.transform(videos[:2, 0], np.zeros((2, 16, 16)))
    with pytest.raises(ValueError, match="must match"):
        model.transform(videos[:2, 0], videos[:3])
    with pytest.raises(ValueError, match="as many images"):
        model.anytime_transfer(videos[:2, 0], videos[:3, 0])
    with pytest.raises(ValueError, match=r"t must lie in \[0, 1\]"):
        model.interpolate(videos[0, 0], videos[0, 1], 1.5)
    with pytest.raises(TypeError, match="t must be a float"):
        model.interpolate(videos[0, 0], videos[0, 1], "half")
    with pytest.raises(ValueError, match="path must be"):
        model.predict(videos[:1], path="sideways")
    with pytest.raises(ValueError, match="frames must end in"):
        model.detect_keypoints(np.zeros((16, 16)))


def test_motion_transfer_anytime_path_needs_interpolation(videos):
    est = KeypointMotionTransfer(**{**SMALL, "max_epochs": 1, "interpolation": None}).fit(videos)
    with pytest.raises(ValueError, match="interpolation=None"):
        est.anytime_transfer(videos[:1, 0], videos[:1, 1])
    with pytest.raises(ValueError, match="interpolation=None"):
        est.predict(videos[:1], path="anytime")


def test_motion_transfer_not_fitted_raises(videos):
    from sklearn.exceptions import NotFittedError

    est = KeypointMotionTransfer(**SMALL)
    for call in (lambda: est.predict(videos), lambda: est.transform(videos[:, 0], videos),
                 lambda: est.interpolate(videos[0, 0], videos[0, 1]),
                 lambda: est.anytime_transfer(videos[:1, 0], videos[:1, 1]),
                 lambda: est.detect_keypoints(videos[0])):
        with pytest.raises(NotFittedError):
            call()


def test_motion_decay_milestones_reproduce_the_step_decay():
    # The rule: epoch e (from 0) runs at lr * 0.1**(number of m in (0.7, 0.9) with
    # e >= m * max_epochs); a MultiStepLR on the milestones, stepped once per epoch,
    # must give that learning rate in every epoch. The products are rounded up, not to
    # the nearest integer: 0.7 * 3 is 2.0999999999999996, so epoch 2 is not decayed.
    lr = 2e-4
    for max_epochs in range(1, 301):
        optimizer = torch.optim.SGD([torch.zeros(1, requires_grad=True)], lr=lr)
        scheduler = torch.optim.lr_scheduler.MultiStepLR(
            optimizer, milestones=_decay_milestones(max_epochs), gamma=0.1)
        for epoch in range(max_epochs):
            decay = sum(epoch >= m * max_epochs for m in (0.7, 0.9))
            assert optimizer.param_groups[0]["lr"] == pytest.approx(lr * 0.1**decay,
                                                                    rel=1e-12), (max_epochs,
                                                                                 epoch)
            optimizer.step()
            scheduler.step()
    assert _decay_milestones(10) == [7, 9]
    assert _decay_milestones(3) == [3, 3]


class _EpochLR(Callback):
    """Callback recording the learning rate of each epoch's first batch."""

    def on_train_begin(self, est):
        self.lrs = []

    def on_batch_begin(self, est, batch):
        if len(self.lrs) < len(est.history_) + 1:
            self.lrs.append(est.optimizer_.param_groups[0]["lr"])


def test_motion_transfer_learning_rate_drops_at_70_and_90_percent(videos):
    recorder = _EpochLR()
    est = KeypointMotionTransfer(**{**SMALL, "max_epochs": 10, "interpolation": None,
                                    "callbacks": [recorder]}).fit(videos)
    lrs = est.callbacks_[0].lrs
    expected = [2e-3] * 7 + [2e-4, 2e-4, 2e-5]
    np.testing.assert_allclose(lrs, expected, rtol=1e-12)
    assert recorder.__dict__.get("lrs") is None  # the user's callback is not changed
    assert est.optimizer_.param_groups[0]["lr"] == pytest.approx(2e-5)
