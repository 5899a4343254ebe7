"""Common-check settings for :mod:`skpaper.vision`."""

INIT_PARAMS = {
    "VQTokenizer1D": {"n_tokens": 2, "token_dim": 4, "codebook_size": 8, "encoder": "mlp",
                      "width": 8, "depth": 1, "warmup_steps": 2, "dead_code_reset_every": 3,
                      "max_epochs": 2, "random_state": 0, "device": "cpu"},
}

EXTRA_INSTANCES = {
    "VQTokenizer1D": [{"encoder": "vit", "n_heads": 2, "cosine": False}],
}

EXPECTED_FAILED_CHECKS = {}
