"""The point-cloud estimators on the shared training loop: batches, events, validation."""

import numpy as np
import pytest

from skpaper.datasets import make_synthetic_shapes
from skpaper.nn import Callback, ValidationSplit
from skpaper.shape import (
    OctahedralFlipper,
    QuotientOrienter,
    apply_rotation,
    octahedral_group,
    random_rotations,
)

TINY = dict(n_points=32, embed_dim=8, max_epochs=2, batch_size=4, device="cpu",
            random_state=0)


class _Recorder(Callback):
    def on_train_begin(self, estimator):
        self.events = []

    def on_batch_begin(self, estimator, batch):
        clouds, target, rows = batch
        self.events.append(("batch", len(clouds), tuple(clouds.shape[1:]), rows.tolist()))

    def on_grad_computed(self, estimator, named_parameters):
        self.events.append(("grad", len(named_parameters)))


@pytest.fixture(scope="module")
def clouds():
    X, _ = make_synthetic_shapes(1, 48, random_state=0)
    assert len(X) == 6  # one shape per family
    return X


def _labelled(est, X):
    if isinstance(est, OctahedralFlipper):
        y = (5 * np.arange(len(X))) % 24
        return apply_rotation(X, octahedral_group()[y]), y
    R = random_rotations(len(X), random_state=1)
    return apply_rotation(X, R), R


@pytest.mark.parametrize("cls", [QuotientOrienter, OctahedralFlipper])
@pytest.mark.parametrize("supervised", [False, True])
def test_batches_carry_point_subsets_and_rows_and_fire_events(cls, supervised, clouds):
    X, y = _labelled(cls(), clouds) if supervised else (clouds, None)
    est = cls(callbacks=[_Recorder()], **TINY).fit(X, y)
    events = est.callbacks_[0].events
    batches = [e for e in events if e[0] == "batch"]
    assert len(batches) == 2 * 2  # ceil(6 / 4) batches per epoch, two epochs
    assert all(shape == (32, 6) for _, _, shape, _ in batches)
    for epoch in (batches[:2], batches[2:]):
        assert sorted(r for b in epoch for r in b[3]) == list(range(6))
    assert sum(e[0] == "grad" for e in events) == 4
    assert est.callbacks is not None and not hasattr(est.callbacks[0], "events")


@pytest.mark.parametrize("cls, extra", [(QuotientOrienter, {}),
                                        (OctahedralFlipper, {}),
                                        (OctahedralFlipper, {"forward_correction": True})])
@pytest.mark.parametrize("supervised", [False, True])
def test_validation_split_records_a_reproducible_valid_loss(cls, extra, supervised, clouds):
    X, y = _labelled(cls(), clouds) if supervised else (clouds, None)
    params = dict(TINY, callbacks=[ValidationSplit(1 / 3), _Recorder()], **extra)
    first = cls(**params).fit(X, y)
    second = cls(**params).fit(X, y)
    losses = [r["valid_loss"] for r in first.history_]
    assert np.all(np.isfinite(losses))
    assert losses == [r["valid_loss"] for r in second.history_]
    # Training batches hold the four training clouds only, by their rows in X.
    rows = sorted({r for e in first.callbacks_[1].events if e[0] == "batch" for r in e[3]})
    train_rows, _ = first.callbacks_[0].split(first, len(X))
    assert rows == train_rows.tolist()
