"""TeDS against our TNTComplEx at equal rank on the synthetic temporal KG.

Run: ``python benchmarks/bench_kg.py [--quick] [--repeat N] [--json out.json]
[--scaling-only]``. Both
models use the same tkbc-style trainer, data, rank, epochs and batch size. Cases:

- training throughput (facts per second, reciprocal facts included) with the test MRR
  of the fitted model as a figure, on a random split and on a held-out-timestamp split;
- filtered evaluation throughput (queries per second, head and tail);
- ComplEx fit time (one epoch) against the number of facts, entities growing with
  them (one per two facts): the default sampled cross-entropy (``n_negatives=2048``)
  against the exact 1-vs-all over every entity (``n_negatives=None``), with the
  growth exponent of each, the slope of log(time) on log(facts), printed at the end.

No third-party temporal KGC package is installable offline (PyKEEN is static-only), so
the peer is our own TNTComplEx, whose scoring function follows the tkbc code.
"""

import sys

import numpy as np
import torch
from _harness import Case, main_cli

from skpaper.datasets import make_synthetic_tkg, train_test_split_tkg
from skpaper.kg import ComplExLinkPredictor, TeDSLinkPredictor, TNTComplExLinkPredictor

_SCALING = "ComplEx fit, 1 epoch"


def scaling_cases(quick):
    """One case per graph size: ComplEx (sampled) against ComplEx (exact 1-vs-all)."""
    torch.set_num_threads(1)
    cases = []
    for n_facts in ((2000, 4000, 8000, 16000) if quick else (4000, 8000, 16000, 32000)):
        n_entities = n_facts // 2
        X = make_synthetic_tkg(n_entities=n_entities, n_relations=10, n_timestamps=40,
                               n_facts=n_facts, random_state=0)
        params = dict(rank=8, max_epochs=1, device="cpu", random_state=0)

        def fitter(n_negatives, X=X, params=params):
            return lambda: ComplExLinkPredictor(**params, n_negatives=n_negatives).fit(X)

        cases.append(Case(f"{_SCALING}, {n_facts} facts", ours=fitter(2048),
                          peer=fitter(None), peer_name="exact 1-vs-all",
                          items=2 * n_facts,
                          params={"n_facts": n_facts, "n_entities": n_entities, **params}))
    return cases


def growth_exponents(results):
    """Slopes of log(median seconds) on log(facts) for the scaling cases, per side.

    ``"ours"`` and ``"peer"`` fit every size; ``"ours_last"`` and ``"peer_last"`` take
    the two largest (the sampled loss only starts past ``n_negatives`` entities).
    """
    rows = [r for r in results if r["case"].startswith(_SCALING)]
    facts = np.log([r["params"]["n_facts"] for r in rows])
    out = {}
    for side in ("ours", "peer"):
        seconds = np.log([r[f"{side}_median_s"] for r in rows])
        out[side] = float(np.polyfit(facts, seconds, 1)[0])
        out[f"{side}_last"] = float((seconds[-1] - seconds[-2]) / (facts[-1] - facts[-2]))
    return out


def make_cases(quick):
    torch.set_num_threads(1)
    size = (dict(n_entities=100, n_relations=8, n_timestamps=30, n_facts=5000, era_length=10)
            if quick else dict(n_entities=200, n_relations=10, n_timestamps=40,
                               n_facts=15000, era_length=10))
    params = dict(rank=16 if quick else 32, max_epochs=10 if quick else 30, batch_size=1000,
                  device="cpu", random_state=0, n_timestamps=size["n_timestamps"])
    X = make_synthetic_tkg(**size, random_state=0)
    cases = []
    for by in ("fact", "timestamp"):
        train, test = train_test_split_tkg(X, by=by, random_state=0)

        def fitter(cls, train=train, test=test):
            def run():
                model = cls(**params).fit(train)
                return {"test_mrr": model.evaluate(test)["mrr"]}
            return run

        cases.append(Case(f"fit + MRR, split by {by}, rank {params['rank']}",
                          ours=fitter(TeDSLinkPredictor),
                          peer=fitter(TNTComplExLinkPredictor),
                          peer_name="TNTComplEx", items=2 * len(train) * params["max_epochs"],
                          params={**size, **params, "split": by}))

    train, test = train_test_split_tkg(X, random_state=0)
    teds = TeDSLinkPredictor(**params).fit(train)
    tnt = TNTComplExLinkPredictor(**params).fit(train)
    cases.append(Case(f"filtered evaluation, {len(test)} facts",
                      ours=lambda: teds.evaluate(test), peer=lambda: tnt.evaluate(test),
                      peer_name="TNTComplEx", items=2 * len(test),
                      params={"n_test": len(test)}))
    return cases + scaling_cases(quick)


if __name__ == "__main__":
    # ``--scaling-only`` runs just the ComplEx scaling cases.
    scaling_only = "--scaling-only" in sys.argv
    argv = [arg for arg in sys.argv[1:] if arg != "--scaling-only"]
    results = main_cli(scaling_cases if scaling_only else make_cases,
                       description=__doc__.splitlines()[0], argv=argv)
    exponents = growth_exponents(results)
    print(f"ComplEx fit-time growth exponent (time ~ facts^k, entities = facts / 2): "
          f"sampled k = {exponents['ours']:.2f} (largest two sizes "
          f"{exponents['ours_last']:.2f}), exact 1-vs-all k = {exponents['peer']:.2f} "
          f"(largest two sizes {exponents['peer_last']:.2f})")
