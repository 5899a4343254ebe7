"""TeDS against our TNTComplEx at equal rank on the synthetic temporal KG.

Run: ``python benchmarks/bench_kg.py [--quick] [--repeat N] [--json out.json]``. Both
models use the same tkbc-style trainer, data, rank, epochs and batch size. Cases:

- training throughput (facts per second, reciprocal facts included) with the test MRR
  of the fitted model as a figure, on a random split and on a held-out-timestamp split;
- filtered evaluation throughput (queries per second, head and tail).

No third-party temporal KGC package is installable offline (PyKEEN is static-only), so
the peer is our own TNTComplEx, whose scoring function follows the tkbc code.
"""

import torch
from _harness import Case, main_cli

from skpaper.datasets import make_synthetic_tkg, train_test_split_tkg
from skpaper.kg import TeDSLinkPredictor, TNTComplExLinkPredictor


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
    return cases


if __name__ == "__main__":
    main_cli(make_cases, description=__doc__.splitlines()[0])
