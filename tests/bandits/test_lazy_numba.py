"""Importing skpaper.bandits does not import numba; the kernels load on first use."""

import subprocess
import sys


def _run(code):
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True).stdout.split()


def test_import_bandits_does_not_import_numba():
    code = ("import sys; import skpaper.bandits; "
            "from skpaper.bandits import CrossLearningExp3, FirstPriceAuction; "
            "print('numba' in sys.modules, 'skpaper.bandits._kernels' in sys.modules)")
    assert _run(code) == ["False", "False"]


def test_kernels_load_when_a_policy_first_runs():
    code = ("import sys; from skpaper.bandits import CrossLearningExp3, FirstPriceAuction; "
            "env = FirstPriceAuction(n_values=3, n_bids=2, random_state=0).generate(8); "
            "before = 'numba' in sys.modules; "
            "policy = CrossLearningExp3(n_actions=2, horizon=8, random_state=0); "
            "policy.fit(None, environment=env); "
            "print(before, 'numba' in sys.modules)")
    assert _run(code) == ["False", "True"]
