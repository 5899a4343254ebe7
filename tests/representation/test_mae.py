"""Tests of the MAE losses, module and the MicroscopyMAE estimator."""

import pickle

import numpy as np
import pytest
import torch
from sklearn.base import clone
from sklearn.datasets import load_digits
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import make_pipeline

from skpaper.nn import Callback, LRScheduler
from skpaper.representation import MaskedAutoencoderViT, MicroscopyMAE, fourier_loss, mae_loss


@pytest.mark.parametrize("form", ["grid", "patch"])
def test_fourier_loss_zero_on_identical_inputs_and_positive_otherwise(form):
    gen = torch.Generator().manual_seed(0)
    x = torch.randn(3, 4, 2 * 16, generator=gen)
    assert float(fourier_loss(x, x, 4, form=form)) == 0.0
    assert float(fourier_loss(x, x, 4, torch.ones(3, 4), form=form)) == 0.0
    noisy = x + 0.1 * torch.randn(x.shape, generator=gen)
    assert float(fourier_loss(noisy, x, 4, form=form)) > 0.0


@pytest.mark.parametrize("form", ["grid", "patch"])
def test_fourier_loss_ignores_unmasked_tokens(form):
    gen = torch.Generator().manual_seed(1)
    x = torch.randn(2, 4, 16, generator=gen)
    mask = torch.tensor([[1.0, 0, 0, 1], [0, 1, 0, 0]])
    y = x.clone()
    y[mask == 0] += 5.0
    assert float(fourier_loss(y, x, 4, mask, form=form)) == pytest.approx(0.0, abs=1e-6)
    y[0, 0] += 1.0  # an error on a masked token counts
    assert float(fourier_loss(y, x, 4, mask, form=form)) > 1e-3


def test_fourier_loss_patch_form_ignores_phase_inside_a_patch():
    x = torch.randn(2, 4, 16, generator=torch.Generator().manual_seed(1))
    patches = x.reshape(2, 4, 1, 4, 4)
    shifted = torch.roll(patches, shifts=1, dims=-1).reshape(2, 4, 16)
    assert float(fourier_loss(shifted, x, 4, form="patch")) == pytest.approx(0.0, abs=1e-5)
    assert float(fourier_loss(shifted, x, 4, form="grid")) > 1e-3


def test_fourier_loss_grid_form_is_the_fft_over_the_token_grid():
    gen = torch.Generator().manual_seed(3)
    # 2 x 3 grid of tokens, 2 channels of 2 x 2 pixels per token
    pred, target = torch.randn(2, 6, 8, generator=gen), torch.randn(2, 6, 8, generator=gen)
    grid_pred = pred.reshape(2, 2, 3, 8).permute(0, 3, 1, 2)  # (B, D, gh, gw)
    grid_true = target.reshape(2, 2, 3, 8).permute(0, 3, 1, 2)
    expected = (torch.fft.fft2(grid_pred).abs() - torch.fft.fft2(grid_true).abs()).abs().mean()
    torch.testing.assert_close(fourier_loss(pred, target, 2, grid=(2, 3)), expected)
    # a circular shift of the whole token grid keeps every magnitude
    rolled = torch.roll(pred.reshape(2, 2, 3, 8), shifts=1, dims=2).reshape(2, 6, 8)
    torch.testing.assert_close(fourier_loss(rolled, target, 2, grid=(2, 3)),
                               fourier_loss(pred, target, 2, grid=(2, 3)))
    # square grids need no grid argument
    sq_pred, sq_true = pred[:, :4], target[:, :4]
    torch.testing.assert_close(fourier_loss(sq_pred, sq_true, 2),
                               fourier_loss(sq_pred, sq_true, 2, grid=(2, 2)))
    with pytest.raises(ValueError, match="grid=.*holds 4 tokens"):
        fourier_loss(pred, target, 2, grid=(2, 2))
    with pytest.raises(ValueError, match="form must be one of"):
        fourier_loss(pred, target, 2, form="image")


def test_fourier_loss_grid_form_lays_out_each_channel_of_a_channel_agnostic_model():
    gen = torch.Generator().manual_seed(4)
    # channel-agnostic tokens are channel-major: 3 channels x (2 x 2) patches of 4 pixels
    pred, target = torch.randn(1, 12, 4, generator=gen), torch.randn(1, 12, 4, generator=gen)
    joint = fourier_loss(pred, target, 2, n_modalities=3)
    per_channel = [fourier_loss(pred[:, 4 * c:4 * c + 4], target[:, 4 * c:4 * c + 4], 2)
                   for c in range(3)]
    torch.testing.assert_close(joint, torch.stack(per_channel).mean())


def test_mae_loss_mixes_one_minus_w_and_w():
    gen = torch.Generator().manual_seed(2)
    pred, target = torch.randn(2, 6, 16, generator=gen), torch.randn(2, 6, 16, generator=gen)
    mask = (torch.rand(2, 6, generator=gen) > 0.5).float()
    mask[0, 0] = 1.0
    total, mse, four = mae_loss(pred, target, mask, 4, 0.25, grid=(2, 3))
    expected_mse = (((pred - target) ** 2).mean(-1) * mask).sum() / mask.sum()
    torch.testing.assert_close(mse, expected_mse)
    torch.testing.assert_close(four, fourier_loss(pred, target, 4, mask, grid=(2, 3)))
    torch.testing.assert_close(total, 0.75 * mse + 0.25 * four)
    _, _, four_patch = mae_loss(pred, target, mask, 4, 0.25, fourier_form="patch")
    torch.testing.assert_close(four_patch, fourier_loss(pred, target, 4, mask, form="patch"))
    total0, mse0, four0 = mae_loss(pred, target, mask, 4, 0.0)
    assert float(total0) == float(mse0) and float(four0) == 0.0


@pytest.mark.parametrize("agnostic", [False, True])
def test_mae_module_masks_exactly_and_reconstructs_every_token(agnostic):
    torch.manual_seed(0)
    mae = MaskedAutoencoderViT(3, 4, (3, 2), embed_dim=16, depth=2, n_heads=2,
                               channel_agnostic=agnostic)
    pred, target, mask = mae(torch.randn(5, 3, 12, 8), 0.5,
                             torch.Generator().manual_seed(0))
    n_tokens = 6 * (3 if agnostic else 1)
    assert pred.shape == target.shape == (5, n_tokens, 16 * (1 if agnostic else 3))
    assert torch.all(mask.sum(1) == n_tokens // 2)
    # the target is the per-channel standardised image
    images = torch.randn(2, 3, 12, 8)
    std = mae.prepare(images)
    torch.testing.assert_close(std.mean(dim=(-2, -1)), torch.zeros(2, 3), atol=1e-5, rtol=0)


@pytest.fixture(scope="module")
def digits():
    X, y = load_digits(return_X_y=True)
    return X[:240], y[:240]


@pytest.fixture(scope="module")
def fitted(digits):
    X, _ = digits
    return MicroscopyMAE(image_shape=(1, 8, 8), patch_size=2, embed_dim=16, depth=3,
                         n_heads=2, decoder_dim=8, decoder_heads=2, max_epochs=4, lr=3e-3,
                         layer_scale=None, random_state=0, device="cpu").fit(X)


def test_microscopy_mae_blocks_transform_and_trim_agree(fitted, digits):
    X, _ = digits
    all_blocks = fitted.transform_all_blocks(X)
    assert all_blocks.shape == (3, len(X), 16)
    np.testing.assert_allclose(fitted.transform(X), all_blocks[-1])
    for b in (1, 2):
        np.testing.assert_allclose(fitted.transform(X, block=b), all_blocks[b - 1])
        np.testing.assert_allclose(fitted.trim(b).transform(X), all_blocks[b - 1])
    assert fitted.trim(2).depth == 2 and fitted.depth == 3
    assert fitted.get_feature_names_out().shape == (16,)


def test_microscopy_mae_trains_seeded_and_pickles(fitted, digits):
    X, _ = digits
    losses = [h["train_loss"] for h in fitted.history_]
    assert losses[-1] < losses[0]
    assert fitted.n_iter_ == 4 and fitted.n_tokens_ == 16
    again = clone(fitted).fit(X)
    np.testing.assert_allclose(again.transform(X[:20]), fitted.transform(X[:20]), atol=1e-6)
    loaded = pickle.loads(pickle.dumps(fitted))
    np.testing.assert_allclose(loaded.transform(X[:20]), fitted.transform(X[:20]))
    trimmed = pickle.loads(pickle.dumps(fitted.trim(2)))
    np.testing.assert_allclose(trimmed.transform(X[:20]), fitted.transform(X[:20], block=2))
    assert np.isfinite(fitted.score(X[:40]))


class _StepLR(Callback):
    """Callback recording the learning rate of every optimizer step."""

    def on_train_begin(self, est):
        self.lrs = []

    def on_batch_begin(self, est, batch):
        self.lrs.append(est.optimizer_.param_groups[0]["lr"])


def test_microscopy_mae_one_cycle_schedule_steps_per_batch(digits):
    X, _ = digits
    mae = MicroscopyMAE(image_shape=(1, 8, 8), patch_size=2, embed_dim=8, depth=1, n_heads=2,
                        decoder_dim=8, decoder_heads=2, max_epochs=2, batch_size=48, lr=1e-2,
                        warmup_fraction=0.3, random_state=0, device="cpu",
                        callbacks=[_StepLR()]).fit(X)
    total, warmup = 10, 3  # 240 rows in batches of 48, two epochs; round(0.3 * 10)
    expected = [1e-2 * (s + 1) / warmup if s < warmup
                else 1e-2 * 0.5 * (1 + np.cos(np.pi * (s - warmup) / (total - warmup)))
                for s in range(total)]
    np.testing.assert_allclose(mae.callbacks_[0].lrs, expected, rtol=1e-12)
    # The record keeps the rate reached after each epoch's last step.
    for epoch, record in enumerate(mae.history_, start=1):
        step = 5 * epoch - warmup
        assert record["lr"] == pytest.approx(
            1e-2 * 0.5 * (1 + np.cos(np.pi * step / (total - warmup))), abs=1e-15)
    assert isinstance(mae.callbacks_[-1], LRScheduler) and mae.callbacks_[-1].scheduler_ is None
    assert mae.callbacks_[0] is not mae.callbacks[0] and not hasattr(mae.callbacks[0], "lrs")
    pickle.loads(pickle.dumps(mae))


def test_microscopy_mae_fourier_form_changes_the_training_loss(digits):
    X, _ = digits
    common = dict(image_shape=(1, 8, 8), patch_size=2, embed_dim=8, depth=1, n_heads=2,
                  decoder_dim=8, decoder_heads=2, max_epochs=1, fourier_weight=0.5,
                  random_state=0, device="cpu")
    grid = MicroscopyMAE(**common).fit(X[:64])
    patch = MicroscopyMAE(fourier_form="patch", **common).fit(X[:64])
    assert MicroscopyMAE().fourier_form == "grid"
    # same seed and data: the two forms measure different Fourier distances
    assert grid.history_[0]["fourier_loss"] != pytest.approx(patch.history_[0]["fourier_loss"])


def test_microscopy_mae_pads_rows_to_square_images():
    X = np.random.default_rng(0).normal(size=(20, 10))
    mae = MicroscopyMAE(patch_size=2, embed_dim=8, depth=1, n_heads=2, decoder_dim=8,
                        decoder_heads=2, max_epochs=1, random_state=0, device="cpu").fit(X)
    assert mae.image_shape_ == (1, 4, 4) and mae.padded_shape_ == (1, 4, 4)
    assert mae.transform(X).shape == (20, 8)


def test_microscopy_mae_variants_fit(digits):
    X, _ = digits
    for params in ({"channel_agnostic": True, "residual": "rw+lr", "laurel_rank": 2},
                   {"block_type": "parallel", "residual": "rw", "fourier_weight": 0.0},
                   {"fourier_form": "patch", "fourier_weight": 0.5}):
        mae = MicroscopyMAE(image_shape=(1, 8, 8), patch_size=4, embed_dim=8, depth=2,
                            n_heads=2, decoder_dim=8, decoder_heads=2, max_epochs=1,
                            random_state=0, device="cpu", **params).fit(X[:64])
        assert mae.transform_all_blocks(X[:5]).shape == (2, 5, 8)


def test_microscopy_mae_in_pipeline_and_grid_search(digits):
    X, y = digits
    pipe = make_pipeline(
        MicroscopyMAE(image_shape=(1, 8, 8), patch_size=4, embed_dim=8, n_heads=2,
                      decoder_dim=8, decoder_heads=2, max_epochs=1, random_state=0,
                      device="cpu"),
        LogisticRegression(max_iter=500),
    )
    search = GridSearchCV(pipe, {"microscopymae__depth": [1, 2]}, cv=2).fit(X, y)
    assert search.best_params_["microscopymae__depth"] in (1, 2)
    assert 0.0 <= search.score(X, y) <= 1.0


def test_microscopy_mae_bad_inputs(fitted, digits):
    X, _ = digits
    with pytest.raises(ValueError, match="block must be None or an int in"):
        fitted.transform(X, block=4)
    with pytest.raises(ValueError, match="block must be None or an int in"):
        fitted.transform(X, block=0)
    with pytest.raises(ValueError, match="X has 64 features, but image_shape"):
        MicroscopyMAE(image_shape=(2, 8, 8), max_epochs=1).fit(X)
    with pytest.raises(ValueError, match="embed_dim must be a multiple of 4"):
        MicroscopyMAE(embed_dim=10, n_heads=2, max_epochs=1).fit(X)
    with pytest.raises(ValueError, match="n_heads=3 must divide embed_dim"):
        MicroscopyMAE(embed_dim=16, n_heads=3, max_epochs=1).fit(X)
    with pytest.raises(ValueError, match="image_shape must be None or"):
        MicroscopyMAE(image_shape=(8, 8), max_epochs=1).fit(X)
    with pytest.raises(ValueError, match="mask_ratio"):
        MicroscopyMAE(mask_ratio=1.5).fit(X)
    with pytest.raises(ValueError, match="fourier_form"):
        MicroscopyMAE(fourier_form="image").fit(X)
    with pytest.raises(ValueError, match="X has 10 features"):
        fitted.transform(X[:, :10])


def test_a_patch_larger_than_the_image_is_an_error():
    X = np.random.RandomState(0).normal(size=(40, 4))  # 2x2 images
    with pytest.raises(ValueError, match=r"patch_size=4096 is larger than the 2x2 images.*"
                                         r"patch_size <= 2"):
        MicroscopyMAE(patch_size=4096, device="cpu").fit(X)
    with pytest.raises(ValueError, match=r"patch_size=5 is larger than the 3x4 images"):
        MicroscopyMAE(patch_size=5, image_shape=(1, 3, 4), device="cpu").fit(
            np.zeros((4, 12)))


def test_padded_images_past_the_memory_limit_are_refused(monkeypatch):
    monkeypatch.setenv("SKPAPER_MEMORY_LIMIT", "64K")
    X = np.zeros((64, 64))  # 8x8 images, 64 rows: 48 KiB padded + the tokens of a batch
    with pytest.raises(ValueError, match=r"padded 1x8x8 images of 64 rows.*patch_size=2"):
        MicroscopyMAE(patch_size=2, embed_dim=32, n_heads=2, device="cpu").fit(X)
