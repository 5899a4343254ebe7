import pickle

import numpy as np
import pytest
import torch

from skpaper.datasets import make_synthetic_tkg
from skpaper.kg import TeDSLinkPredictor, TNTComplExLinkPredictor

pytestmark = pytest.mark.gpu


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
@pytest.mark.parametrize("cls", [TeDSLinkPredictor, TNTComplExLinkPredictor])
def test_cuda_fit_matches_cpu_quality_and_pickles(cls):
    X = make_synthetic_tkg(n_entities=30, n_relations=4, n_timestamps=8, n_facts=600,
                           n_clusters=3, era_length=4, noise=0.0, random_state=1)
    params = dict(rank=8, max_epochs=30, batch_size=200, random_state=0)
    gpu = cls(**params, device="auto").fit(X)
    cpu = cls(**params, device="cpu").fit(X)
    assert gpu.device_ == "cuda"
    # Same seeds, different kernels: the two fits agree in quality, not bit for bit.
    assert abs(gpu.score(X) - cpu.score(X)) < 0.05
    clone = pickle.loads(pickle.dumps(gpu))
    np.testing.assert_allclose(clone.score_samples(X), gpu.score_samples(X), rtol=1e-5)
