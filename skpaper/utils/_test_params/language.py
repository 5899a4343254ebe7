"""Common-check settings for :mod:`skpaper.language`."""

import numpy as np

from skpaper.language import LanguageModel, WordTokenizer

_TINY = {"n_layers": 1, "d_model": 8, "n_heads": 2, "max_len": 32, "batch_size": 16,
         "device": "cpu", "random_state": 0}

INIT_PARAMS = {
    "LanguageModel": {**_TINY, "max_epochs": 2},
    "FocusInstructionTuner": {"spurious_columns": [0], "random_state": 0},
    "FocusInstructionLM": {
        "lm": LanguageModel(**{**_TINY, "tokenizer": WordTokenizer()}, max_epochs=2),
        "random_state": 0,
    },
    "ContrastiveDistiller": {
        "teacher": LanguageModel(**{**_TINY, "d_model": 16}, max_epochs=2),
        "student": LanguageModel(**_TINY, max_epochs=1),
        "n_rounds": 2, "max_new_tokens": 4, "batch_size": 16, "device": "cpu",
        "random_state": 0,
    },
}
EXTRA_INSTANCES = {
    "LanguageModel": [{"residual": "rw+lr", "laurel_rank": 2}, {"tokenizer": "bpe"}],
    "ContrastiveDistiller": [{"loss": "gjsd"},
                             {"adaptive_alpha": True, "beta_schedule": "linear"}],
    # Decoupling shuffles the spurious column under the core instructions, which on the
    # checks' data (where that column is informative) costs training accuracy: checked with
    # the empty instruction, which keeps every feature.
    "FocusInstructionTuner": [{"decouple_excluded": True, "n_copies": 2,
                               "default_focus": "empty"},
                              {"focus_types": ["focus_C", "focus_S"], "default_focus": "focus_C",
                               "type_probs": [0.7, 0.3]}],
    "FocusInstructionLM": [{"decouple_excluded": True, "focus_types": ["empty", "focus_S"],
                            "default_focus": "empty"}],
}
EXPECTED_FAILED_CHECKS = {
    "FocusInstructionTuner": {
        "check_sample_weight_equivalence_on_dense_data": (
            "each training row draws its own focus type, so w repeated rows get w draws while "
            "a weight of w gets one (and the check shuffles rows); equivalence holds for a "
            "single focus type, tested in tests/language/test_focus_instruction_tuning.py"),
    },
}


def _texts():
    from skpaper.datasets import make_markov_text

    return make_markov_text(24, n_symbols=5, length=10, random_state=0), None


def _prompts():
    texts, _ = _texts()
    return [t[:4] for t in texts], None


def _spurious_texts():
    from skpaper.datasets import make_spurious_task

    texts, y, _ = make_spurious_task(24, kind="nli", n_genres=3, random_state=0)
    # Integer labels: the shared contract compares predictions as floats.
    return texts, np.unique(y, return_inverse=True)[1]


FIT_DATA = {"LanguageModel": _texts, "ContrastiveDistiller": _prompts,
            "FocusInstructionLM": _spurious_texts}
