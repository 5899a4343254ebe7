"""Common-check settings for :mod:`skpaper.kg`.

The link predictors take integer (subject, relation, object, time) quadruples, not
feature matrices, so they set ``two_d_array=False`` and are checked on
``FIT_DATA`` by ``tests/test_common.py::test_structured_input_contract``.
"""

_SMALL = {"rank": 4, "max_epochs": 2, "batch_size": 64, "device": "cpu", "random_state": 0}

INIT_PARAMS = {
    "ComplExLinkPredictor": dict(_SMALL),
    "TNTComplExLinkPredictor": dict(_SMALL),
    "TeASTLinkPredictor": dict(_SMALL),
    "TeDSLinkPredictor": dict(_SMALL),
}
EXTRA_INSTANCES = {
    "TeDSLinkPredictor": [{"time_angle": "learned", "composition": "product",
                           "reciprocal": False, "optimizer": "adam"}],
}
EXPECTED_FAILED_CHECKS = {}


def _quadruples():
    from skpaper.datasets import make_synthetic_tkg

    return make_synthetic_tkg(n_entities=20, n_relations=3, n_timestamps=6, n_facts=150,
                              n_clusters=4, era_length=2, random_state=0), None


FIT_DATA = {name: _quadruples for name in INIT_PARAMS}
