"""Torch estimators do not depend on the process's default torch dtype.

``torch.set_default_dtype(torch.float64)`` is common in double-precision science
code; every torch estimator must still fit, and give the answers it gives under
the float32 default (up to float noise), in its own dtype.
"""

import numpy as np
import pytest
from sklearn.base import clone

from skpaper.utils import all_estimators
from skpaper.utils._test_params import FIT_DATA, make_instances

torch = pytest.importorskip("torch")

from skpaper.nn import BaseTorchState  # noqa: E402


def _uses_torch(cls):
    if issubclass(cls, BaseTorchState):
        return True
    # Meta-estimators and estimators that hold torch modules without the base class.
    return cls.__name__ in _TORCH_WITHOUT_BASE


_TORCH_WITHOUT_BASE = {"BlockSearchProbe", "FocusInstructionLM", "SAEProbeClassifier",
                       "TwoStageOrienter"}

TORCH_ESTIMATORS = [cls for _, cls in all_estimators() if _uses_torch(cls)]


@pytest.fixture
def default_dtype():
    """Set torch's default dtype for one test and restore it afterwards."""
    before = torch.get_default_dtype()

    def set_to(dtype):
        torch.set_default_dtype(dtype)

    yield set_to
    torch.set_default_dtype(before)


def _fit_data(cls):
    if cls.__name__ in FIT_DATA:
        return FIT_DATA[cls.__name__]()
    rng = np.random.RandomState(0)
    X = rng.normal(size=(24, 4))
    return X, (X[:, 0] > 0).astype(int)


def _outputs(est, X):
    out = {}
    for method in ("predict", "predict_proba", "decision_function", "transform",
                   "score_samples"):
        if hasattr(est, method):
            out[method] = getattr(est, method)(X)
    return out


def _assert_close(left, right, name):
    if isinstance(left, list):
        assert len(left) == len(right)
        for u, v in zip(left, right):
            _assert_close(u, v, name)
        return
    left, right = np.asarray(left), np.asarray(right)
    assert left.shape == right.shape, name
    if left.dtype.kind in "fc":
        assert left.dtype == right.dtype, name
        np.testing.assert_allclose(left, right, rtol=1e-4, atol=1e-4, err_msg=name)
    else:
        np.testing.assert_array_equal(left, right, err_msg=name)


def test_torch_estimators_are_listed():
    names = {cls.__name__ for cls in TORCH_ESTIMATORS}
    assert {"MLPClassifier", "ComplExLinkPredictor", "LanguageModel", "MicroscopyMAE",
            "TwoStageOrienter", "SAEProbeClassifier"} <= names
    assert len(names) >= 28


@pytest.mark.parametrize("cls", TORCH_ESTIMATORS, ids=lambda c: c.__name__)
def test_same_answers_under_float64_default(cls, default_dtype):
    estimator = next(make_instances(cls))
    if "device" in estimator.get_params():
        estimator.set_params(device="cpu")
    X, y = _fit_data(cls)
    default_dtype(torch.float32)
    reference = _outputs(clone(estimator).fit(X, y), X)
    default_dtype(torch.float64)
    fitted = clone(estimator).fit(X, y)
    assert torch.get_default_dtype() == torch.float64
    got = _outputs(fitted, X)
    assert torch.get_default_dtype() == torch.float64
    assert reference and got.keys() == reference.keys()
    for key in reference:
        _assert_close(got[key], reference[key], f"{cls.__name__}.{key}")


def test_own_dtype_block_makes_float32_and_changes_nothing_global(default_dtype):
    from skpaper.nn._base import _own_dtype

    default_dtype(torch.float32)
    expected = torch.randn(3, generator=torch.Generator().manual_seed(0))
    default_dtype(torch.float64)
    with _own_dtype(torch.float32):
        assert torch.get_default_dtype() == torch.float64
        assert torch.nn.Linear(2, 3).weight.dtype == torch.float32
        drawn = torch.randn(3, generator=torch.Generator().manual_seed(0))
        assert torch.equal(drawn, expected)
        assert torch.tensor([0.5]).dtype == torch.float32
        assert torch.full((2,), 1.5).dtype == torch.float32
        assert torch.arange(0.0, 1.0, 0.5).dtype == torch.float32
        # Integers and data with a dtype of their own keep it.
        assert torch.arange(3).dtype == torch.int64
        assert torch.tensor([1, 2]).dtype == torch.int64
        assert torch.as_tensor(np.zeros(2)).dtype == torch.float64
        assert torch.zeros(2, dtype=torch.float64).dtype == torch.float64
    assert torch.zeros(1).dtype == torch.float64
    assert torch._C._len_torch_function_stack() == 0


def test_fit_leaves_the_default_dtype_and_function_modes(default_dtype):
    from skpaper.nn import MLPClassifier

    default_dtype(torch.float64)
    X, y = _fit_data(MLPClassifier)
    clf = MLPClassifier(hidden_layer_sizes=(4,), max_epochs=2, device="cpu",
                        random_state=0).fit(X, y)
    assert torch.get_default_dtype() == torch.float64
    assert torch._C._len_torch_function_stack() == 0
    # Trained in float32, then cast to the inference dtype the estimator asks for.
    assert next(clf.module_.parameters()).dtype == getattr(torch, clf.inference_dtype)
