"""Common-check settings for :mod:`skpaper.language`."""

from skpaper.language import LanguageModel

_TINY = {"n_layers": 1, "d_model": 8, "n_heads": 2, "max_len": 32, "batch_size": 16,
         "device": "cpu", "random_state": 0}

INIT_PARAMS = {
    "LanguageModel": {**_TINY, "max_epochs": 2},
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
}
EXPECTED_FAILED_CHECKS = {}


def _texts():
    from skpaper.datasets import make_markov_text

    return make_markov_text(24, n_symbols=5, length=10, random_state=0), None


def _prompts():
    texts, _ = _texts()
    return [t[:4] for t in texts], None


FIT_DATA = {"LanguageModel": _texts, "ContrastiveDistiller": _prompts}
