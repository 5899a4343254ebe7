"""The process state a claim runs in, set before and restored after every claim.

A claim's figures must depend on (claim, scale, seed, versions, threads)
only, not on what ran before it in the same process. :func:`claim_environment`
therefore fixes, for the duration of one claim:

- thread counts: torch intra-op threads, and BLAS/OpenMP pools through
  :mod:`threadpoolctl` (torch's inter-op pool can only be sized before its
  first parallel use; it is recorded, and set when still possible);
- torch's default dtype (``float32``) and its deterministic-algorithm flags
  (off, cuDNN benchmarking off);
- the global random generators of :mod:`random`, :mod:`numpy` and torch,
  seeded from the claim's key and seed (claims draw from their own
  generators; the seeding only makes a stray global draw reproducible);
- the working directory.

Everything is restored afterwards, also when the claim raises.
"""

import contextlib
import importlib.util
import os
import platform
import random
import zlib

import numpy as np

#: Threads a claim runs with unless ``skpaper reproduce --threads`` says otherwise.
#: One thread is both the fastest setting for the small models here on two
#: cores and the one the tests use.
DEFAULT_THREADS = 1


def _torch():
    if importlib.util.find_spec("torch") is None:
        return None
    import torch

    return torch


def global_seed(claim_key, seed):
    """The seed of the global generators for one claim: a function of key and seed only."""
    return (zlib.crc32(claim_key.encode()) ^ (int(seed) * 2654435761)) % (2**31 - 1)


@contextlib.contextmanager
def claim_environment(claim_key, seed, threads=DEFAULT_THREADS):
    """Run the body with the documented process state; restore the previous one after.

    Parameters
    ----------
    claim_key : str
        ``"<paper>/<claim_id>"``; with ``seed`` it seeds the global generators.
    seed : int
    threads : int, default=DEFAULT_THREADS

    Yields
    ------
    environment : dict
        What the claim runs with (versions, thread counts, device), for its JSON.
    """
    # threadpoolctl limits only the native pools already loaded: load scipy's BLAS and
    # scikit-learn's OpenMP runtime first, so that a claim importing them later does not
    # run them at their default thread count.
    import scipy.linalg  # noqa: F401  (scipy's own BLAS)
    import sklearn.cluster  # noqa: F401  (links the OpenMP runtime)
    from threadpoolctl import threadpool_limits

    torch = _torch()
    cwd = os.getcwd()
    py_state = random.getstate()
    np_state = np.random.get_state()
    value = global_seed(claim_key, seed)
    saved_torch = None
    if torch is not None:
        saved_torch = {
            "threads": torch.get_num_threads(),
            "dtype": torch.get_default_dtype(),
            "deterministic": torch.are_deterministic_algorithms_enabled(),
            "deterministic_warn_only": torch.is_deterministic_algorithms_warn_only_enabled(),
            "cudnn_benchmark": torch.backends.cudnn.benchmark,
            "cudnn_deterministic": torch.backends.cudnn.deterministic,
            "rng": torch.random.get_rng_state(),
            "cuda_rng": (torch.cuda.get_rng_state_all() if torch.cuda.is_available()
                         else None),
        }
    try:
        with threadpool_limits(limits=int(threads)):
            random.seed(value)
            np.random.seed(value)
            if torch is not None:
                torch.set_num_threads(int(threads))
                with contextlib.suppress(RuntimeError):
                    torch.set_num_interop_threads(int(threads))
                torch.set_default_dtype(torch.float32)
                torch.use_deterministic_algorithms(False)
                torch.backends.cudnn.benchmark = False
                torch.backends.cudnn.deterministic = False
                torch.manual_seed(value)
            yield describe_environment(threads)
    finally:
        os.chdir(cwd)
        random.setstate(py_state)
        np.random.set_state(np_state)
        if torch is not None:
            torch.set_num_threads(saved_torch["threads"])
            torch.set_default_dtype(saved_torch["dtype"])
            torch.use_deterministic_algorithms(
                saved_torch["deterministic"], warn_only=saved_torch["deterministic_warn_only"])
            torch.backends.cudnn.benchmark = saved_torch["cudnn_benchmark"]
            torch.backends.cudnn.deterministic = saved_torch["cudnn_deterministic"]
            torch.random.set_rng_state(saved_torch["rng"])
            if saved_torch["cuda_rng"] is not None:
                torch.cuda.set_rng_state_all(saved_torch["cuda_rng"])


#: Environment variable through which ``skpaper reproduce --jobs N`` tells each of its
#: worker processes how many cores are its share (the machine's cores over N).
CORES_VARIABLE = "SKPAPER_REPRODUCE_CORES"


def available_cores():
    """Cores a claim may spread its own worker processes over.

    Inside a ``skpaper reproduce --jobs N`` worker this is the worker's share of the
    machine (``CORES_VARIABLE``, at least 1); elsewhere the cores this process may run
    on. Claims that train in their own workers cap their worker count with it, so that
    N papers side by side do not start more processes than there are cores.
    """
    value = os.environ.get(CORES_VARIABLE)
    if value is not None:
        try:
            return max(1, int(value))
        except ValueError:
            pass
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


@contextlib.contextmanager
def torch_threads(threads):
    """Run the body with ``threads`` torch intra-op threads; restore the count after.

    For claim code that trains in worker processes, which do not inherit the
    parent's setting.
    """
    import torch

    saved = torch.get_num_threads()
    torch.set_num_threads(int(threads))
    try:
        yield
    finally:
        torch.set_num_threads(saved)


def describe_environment(threads=DEFAULT_THREADS):
    """Versions, thread counts, device and CPU kernels of this process, for a claim's JSON.

    ``machine``, ``blas_kernels`` (each BLAS library with the CPU architecture it chose
    its kernels for) and ``torch_cpu_capability`` (torch's vector level: AVX2, AVX512,
    ...) say which kernels ran: they round differently, and the long trainings of the
    deep claims amplify that rounding, so figures repeat bit for bit only where these
    match.
    """
    import scipy
    import sklearn
    from threadpoolctl import threadpool_info

    from .. import __version__

    pools = threadpool_info()
    env = {"skpaper": __version__, "python": platform.python_version(),
           "numpy": np.__version__, "scipy": scipy.__version__,
           "scikit-learn": sklearn.__version__, "requested_threads": int(threads),
           "blas_threads": sorted({int(p["num_threads"]) for p in pools
                                   if p.get("user_api") == "blas"}),
           "openmp_threads": sorted({int(p["num_threads"]) for p in pools
                                     if p.get("user_api") == "openmp"}),
           "machine": platform.machine(),
           "blas_kernels": sorted({f"{p['internal_api']} {p['architecture']}" for p in pools
                                   if p.get("architecture")}),
           "torch": None, "device": "cpu"}
    torch = _torch()
    if torch is not None:
        capability = getattr(torch.backends.cpu, "get_cpu_capability", None)
        env.update(torch=torch.__version__, torch_threads=torch.get_num_threads(),
                   torch_interop_threads=torch.get_num_interop_threads(),
                   torch_cpu_capability=capability() if capability is not None else None)
        if torch.cuda.is_available():
            env["device"] = f"cuda ({torch.cuda.get_device_name(0)})"
    return env
