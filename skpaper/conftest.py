"""Settings for the docstring examples of skpaper, run by ``pytest --doctest-modules``.

They run on one thread, like the test suite (see ``tests/conftest.py``), and the
families that need an optional dependency are left out when it is missing.
"""

import importlib.util

from skpaper.utils._registry import TORCH_FAMILIES

collect_ignore = []

if importlib.util.find_spec("torch") is None:
    collect_ignore += sorted(TORCH_FAMILIES)
    # The torch seeding helper and the claims that train torch models need it too.
    collect_ignore += ["utils/_seeding.py", "papers"]
else:
    import torch

    # One thread was measured several times faster than two on 2-core machines.
    torch.set_num_threads(1)
