"""Common-check settings for :mod:`skpaper.vision`."""

INIT_PARAMS = {
    "VQTokenizer1D": {"n_tokens": 2, "token_dim": 4, "codebook_size": 8, "encoder": "mlp",
                      "width": 8, "depth": 1, "warmup_steps": 2, "dead_code_reset_every": 3,
                      "max_epochs": 2, "random_state": 0, "device": "cpu"},
    "KeypointMotionTransfer": {"n_keypoints": 3, "width": 4, "interpolation": (0.5,),
                               "feature_extractor": None, "max_epochs": 1, "batch_size": 4,
                               "random_state": 0, "device": "cpu"},
}

EXTRA_INSTANCES = {
    # float32 matmuls depend on batch composition (see inference_dtype): near-tied codes
    # of the unnormalised ViT codebook would flip between a batch and its subsets.
    "VQTokenizer1D": [{"encoder": "vit", "n_heads": 2, "cosine": False,
                       "inference_dtype": "float64"}],
    "KeypointMotionTransfer": [{"interpolation": None, "bidirectional": False,
                                "backbone": "gaussian"}],
}

EXPECTED_FAILED_CHECKS = {}


def _sprite_videos():
    from skpaper.datasets import make_sprite_videos

    return make_sprite_videos(n_videos=4, n_frames=3, size=16, texture="procedural",
                              random_state=0).videos, None


FIT_DATA = {
    "KeypointMotionTransfer": _sprite_videos,
}
