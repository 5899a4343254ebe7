"""Synthetic data generators (``make_*``) and loaders of data shipped in packages (``load_*``).

Nothing here downloads. Each family keeps its generators in a private module
(``_sketch.py``, ``_independence.py``, ...) whose ``__all__`` is re-exported here.
Generators whose family needs torch return numpy arrays all the same.

The modules load lazily: ``from skpaper.datasets import make_subset_queries``
imports ``_sketch`` alone, so a family pays only for its own generators.
"""

import importlib

#: Which private module defines each public name (checked against the modules'
#: ``__all__`` by the tests).
_NAMES = {
    "_adaptation": ("CORRUPTIONS", "corrupt_images", "load_mnist_subset",
                    "make_corruption_stream"),
    "_bandits": ("make_first_price_auction", "make_sleeping_bandits"),
    "_graph": ("make_random_lcqp", "make_synthetic_gon", "make_wl_indistinguishable_milp_pair"),
    "_independence": ("make_discrete_network", "make_discretized_chain",
                      "make_discretized_gaussian_dag"),
    "_kg": ("load_tkg", "make_synthetic_tkg", "train_test_split_tkg"),
    "_language": ("load_dataset_descriptions", "make_markov_text", "make_spurious_task",
                  "markov_text_log_prob"),
    "_multilabel": ("make_linear_multilabel",),
    "_representation": ("make_plate_embeddings", "make_relu_teacher_tasks",
                        "make_superposition_activations", "make_synthetic_cell_plates",
                        "make_teacher_tasks", "relu_teacher_kernel"),
    "_reward": ("make_synthetic_reviews", "synthetic_review_reward",
                "synthetic_review_sentiment"),
    "_semisupervised": ("make_acp_covariate_shift",),
    "_shape": ("make_synthetic_shapes", "shape_symmetry_group"),
    "_sketch": ("make_participation_queries", "make_subset_queries"),
    "_tabular": ("load_digits_split",),
    "_vision": ("load_tokenizer_images", "make_attribute_digits", "make_inpainting_mask",
                "make_sprite_pairs", "make_sprite_videos"),
}
_MODULE_OF = {name: module for module, names in _NAMES.items() for name in names}

__all__ = sorted(_MODULE_OF)


def _all_modules():
    return [importlib.import_module(f"{__name__}.{module}") for module in _NAMES]


def __getattr__(name):
    module = _MODULE_OF.get(name)
    if module is not None:
        value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    else:
        # A name missing from the table: look in every module before giving up.
        for mod in _all_modules():
            if name in getattr(mod, "__all__", ()):
                value = getattr(mod, name)
                break
        else:
            raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(__all__))
