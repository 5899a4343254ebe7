"""Claims of "TeDS: Joint Learning of Diachronic and Synchronic Perspectives in Quaternion
Space for Temporal Knowledge Graph Completion" (ICML 2025).

No public temporal KG ships in an installable package, so every claim runs on
:func:`~skpaper.datasets.make_synthetic_tkg`, whose answers drift with a slow era
(diachronic structure) and agree across related relations at the same timestamp
(synchronic structure). The TeDS composition is reconstructed (see
:class:`~skpaper.kg.TeDSLinkPredictor`); the paper's benchmark numbers are not
reproduced here.

Fairness: at equal ``rank`` a TeDS embedding holds 4·rank reals and a ComplEx-family
one 2·rank, so TeDS would get about twice the parameters. Every comparison is
therefore made at **equal parameter count**: TNTComplEx at the scale's rank is the
reference, and each other model's rank is the one whose parameter count is closest
to it. TeDS at the reference's rank (about 1.8x the parameters) is reported beside.
All arms train with the same recipe, epochs, batch size and data, on paired seeds
(each seed draws its own graph, split and initialisations).
"""

from functools import lru_cache

import numpy as np

from ._plotting import new_figure, save_figure
from ._registry import ClaimResult, ControlResult, register_claim, register_paper
from ._stats import claim_seeds, paired_difference

SLUG = "teds"

register_paper(SLUG, "TeDS: Joint Learning of Diachronic and Synchronic Perspectives in "
               "Quaternion Space for Temporal Knowledge Graph Completion", module="skpaper.kg")

# Data, model size and seeds per scale; "full" is sized for a GPU.
_SCALES = {
    "smoke": {"data": dict(n_entities=40, n_relations=4, n_timestamps=16, n_facts=1500,
                           n_clusters=4, era_length=4),
              "model": dict(rank=8, max_epochs=5, batch_size=500), "n_seeds": 3},
    "quick": {"data": dict(n_entities=120, n_relations=8, n_timestamps=40, n_facts=6000,
                           n_clusters=8, era_length=10),
              "model": dict(rank=24, max_epochs=20, batch_size=1000), "n_seeds": 4},
    "full": {"data": dict(n_entities=500, n_relations=20, n_timestamps=100, n_facts=60_000,
                          n_clusters=25, era_length=25),
             "model": dict(rank=64, max_epochs=40, batch_size=2000), "n_seeds": 6},
}
_PRIOR = ("TNTComplEx", "TeAST")
_REFERENCE = "TNTComplEx"
# arm name -> (model class key, extra parameters, matched to the reference's size?)
_ARMS = {
    "ComplEx": ("ComplEx", {}, True),
    "TNTComplEx": ("TNTComplEx", {}, False),
    "TeAST": ("TeAST", {}, True),
    "TeDS": ("TeDS", {}, True),
    "TeDS synchronic only": ("TeDS", {"composition": "synchronic"}, True),
    "TeDS equal rank": ("TeDS", {}, False),
}
_FACT_ARMS = tuple(_ARMS)
_TIMESTAMP_ARMS = ("TNTComplEx", "TeDS", "TeDS synchronic only", "TeDS equal rank")
_STATEMENT_NOTE = (" The paper's six benchmarks are not available offline; the synthetic "
                   "graph and the TeDS composition are reconstructions.")


def _module_class(name):
    from ..kg import _models

    return {"ComplEx": _models.ComplExModule, "TNTComplEx": _models.TNTComplExModule,
            "TeAST": _models.TeASTModule, "TeDS": _models.TeDSModule}[name]


def _n_parameters(name, rank, scale, **extra):
    data = _SCALES[scale]["data"]
    # reciprocal training doubles the relation rows
    module = _module_class(name)(data["n_entities"], 2 * data["n_relations"],
                                 data["n_timestamps"], rank, 1e-2, **extra)
    return sum(p.numel() for p in module.parameters())


def _arm_config(arm, scale):
    """Model key, constructor overrides and parameter count of one arm."""
    name, extra, matched = _ARMS[arm]
    rank = _SCALES[scale]["model"]["rank"]
    if matched:
        target = _n_parameters(_REFERENCE, rank, scale)
        rank = min(range(1, 4 * rank + 1),
                   key=lambda r: abs(_n_parameters(name, r, scale, **extra) - target))
    return name, {**extra, "rank": rank}, _n_parameters(name, rank, scale, **extra)


def _estimator(name, scale, seed, **overrides):
    from .. import kg

    classes = {"ComplEx": kg.ComplExLinkPredictor, "TNTComplEx": kg.TNTComplExLinkPredictor,
               "TeAST": kg.TeASTLinkPredictor, "TeDS": kg.TeDSLinkPredictor}
    device = "auto" if scale == "full" else "cpu"
    params = {**_SCALES[scale]["model"], "n_timestamps": _SCALES[scale]["data"]["n_timestamps"],
              "device": device, "random_state": seed, **overrides}
    return classes[name](**params)


def _split(scale, seed, by):
    from ..datasets import make_synthetic_tkg, train_test_split_tkg

    data_seed, split_seed = claim_seeds(seed, 2)
    X = make_synthetic_tkg(**_SCALES[scale]["data"], random_state=data_seed)
    return train_test_split_tkg(X, test_size=0.2, by=by, random_state=split_seed)


def _shuffle_time(test, n_timestamps, seed):
    """The test facts with each timestamp replaced by a uniformly drawn one."""
    shuffled = np.array(test, copy=True)
    shuffled[:, 3] = np.random.default_rng(seed).integers(0, n_timestamps, len(test))
    return shuffled


@lru_cache(maxsize=4)
def _run(scale, seed, by):
    """Per arm: test MRR per seed, MRR with shuffled test timestamps, parameters, rank."""
    arms = _FACT_ARMS if by == "fact" else _TIMESTAMP_ARMS
    configs = {arm: _arm_config(arm, scale) for arm in arms}
    out = {arm: {"mrr": [], "mrr_shuffled_time": [], "parameters": configs[arm][2],
                 "rank": configs[arm][1]["rank"]} for arm in arms}
    n_timestamps = _SCALES[scale]["data"]["n_timestamps"]
    for run_seed in claim_seeds(seed, _SCALES[scale]["n_seeds"], 1 if by == "fact" else 2):
        train, test = _split(scale, run_seed, by)
        shuffled = _shuffle_time(test, n_timestamps, run_seed)
        for arm in arms:
            name, overrides, _ = configs[arm]
            est = _estimator(name, scale, run_seed, **overrides).fit(train)
            out[arm]["mrr"].append(est.evaluate(test)["mrr"])
            if by == "fact":
                out[arm]["mrr_shuffled_time"].append(est.evaluate(shuffled)["mrr"])
    return out


def _arms_record(res, scale):
    cfg = _SCALES[scale]["model"]
    n_train = int(round(0.8 * _SCALES[scale]["data"]["n_facts"]))
    return {arm: {"parameters": r["parameters"], "rank": r["rank"],
                  "train_epochs": cfg["max_epochs"], "batch_size": cfg["batch_size"],
                  "train_examples": n_train} for arm, r in res.items()}


def _bar_plot(results, title, out_dir, name):
    fig, ax = new_figure(figsize=(6.5, 3.2))
    labels = list(results)
    means = [np.mean(results[k]) for k in labels]
    ax.bar(range(len(labels)), means, color="#9ecae1")
    for i, key in enumerate(labels):
        ax.plot([i] * len(results[key]), results[key], "o", color="#08519c", ms=4)
    ax.set_xticks(range(len(labels)), [k.replace(" ", "\n", 1) for k in labels], fontsize=7)
    ax.set_ylabel("time-aware filtered MRR (test)")
    ax.set_title(title)
    return save_figure(fig, out_dir, name)


@register_claim(SLUG, "time-aware-beats-static",
                "On a temporal KG with era drift and synchronic coupling, each time-aware model "
                "(TNTComplEx, TeAST, TeDS) beats static ComplEx of the same parameter count.",
                paper_statement="Time-aware TKGC models outperform static KG embeddings on "
                                "temporal benchmarks (the premise of the paper's comparison "
                                "tables, where static models trail)." + _STATEMENT_NOTE,
                check="for each of TNTComplEx, TeAST and TeDS at equal parameters: the lower "
                      "95% bound of the paired MRR gain over ComplEx (random 80/20 split, "
                      "paired seeds) is > 0",
                control="the same models evaluated with the test timestamps replaced by "
                        "random ones (time information removed)")
def _claim_time_aware(scale, seed, out_dir):
    res = _run(scale, seed, "fact")
    models = ("TNTComplEx", "TeAST", "TeDS")
    gains = {m: paired_difference(res[m]["mrr"], res["ComplEx"]["mrr"]) for m in models}
    control = {m: paired_difference(res[m]["mrr_shuffled_time"],
                                    res["ComplEx"]["mrr_shuffled_time"]) for m in models}
    artifact = _bar_plot({**{m: res[m]["mrr"] for m in ("ComplEx", *models)},
                          **{f"{m} random t": res[m]["mrr_shuffled_time"] for m in models}},
                         "random split, equal parameters", out_dir, "time_aware_vs_static")
    return ClaimResult(
        observed={**{f"gain_over_static_{m}": g.to_dict() for m, g in gains.items()},
                  "mrr_per_seed": {arm: r["mrr"] for arm, r in res.items()}},
        expected={"gain_lower_bound": "> 0 for every time-aware model"},
        passed=all(g.passed for g in gains.values()),
        control=ControlResult(
            observed={f"gain_over_static_{m}": c.to_dict() for m, c in control.items()},
            passed=all(c.passed for c in control.values())),
        arms=_arms_record({a: res[a] for a in ("ComplEx", *models)}, scale),
        artifacts=[artifact],
        notes="Each seed draws its own graph, split and initialisations. The former 0.1 MRR "
              "margin came from a planning prototype, not the paper, and is no longer used.")


@register_claim(SLUG, "diachronic-unseen-timestamps",
                "With every fact of 20% of the timestamps held out, TeDS (whose diachronic "
                "quaternion is a function of time) beats TNTComplEx (free timestamp "
                "embeddings) at equal parameter count.",
                paper_statement="The diachronic perspective maps time points in order to "
                                "angles whose trigonometric functions form a rotation "
                                "quaternion (abstract), so the representation of a time "
                                "point follows from its position in time." + _STATEMENT_NOTE,
                check="lower 95% bound of the paired MRR gain of TeDS over TNTComplEx (equal "
                      "parameters) on the held-out-timestamp split > 0",
                control="TeDS with its diachronic part removed (composition='synchronic')")
def _claim_unseen(scale, seed, out_dir):
    res = _run(scale, seed, "timestamp")
    gain = paired_difference(res["TeDS"]["mrr"], res["TNTComplEx"]["mrr"])
    control = paired_difference(res["TeDS synchronic only"]["mrr"], res["TNTComplEx"]["mrr"])
    equal_rank = paired_difference(res["TeDS equal rank"]["mrr"], res["TNTComplEx"]["mrr"])
    artifact = _bar_plot({a: r["mrr"] for a, r in res.items()}, "held-out timestamps",
                         out_dir, "unseen_timestamps")
    return ClaimResult(
        observed={"gain_equal_parameters": gain.to_dict(),
                  "gain_equal_rank": equal_rank.to_dict(),
                  "mrr_per_seed": {arm: r["mrr"] for arm, r in res.items()}},
        expected={"gain_equal_parameters_lower_bound": "> 0"},
        passed=gain.passed,
        control=ControlResult(observed={"gain_synchronic_only": control.to_dict()},
                              passed=control.passed),
        arms=_arms_record(res, scale), artifacts=[artifact],
        notes="Both models use the same recipe, including the temporal smoothness penalty, "
              "which pulls unseen timestamp embeddings towards their neighbours and so lets "
              "TNTComplEx interpolate. gain_equal_rank (TeDS with about 1.8x the parameters) "
              "is reported, not judged.")


@register_claim(SLUG, "teds-beats-best-prior",
                "On a random split, TeDS beats the best prior time-aware model (TNTComplEx or "
                "TeAST, whichever scores higher) at equal parameter count.",
                paper_statement="TeDS significantly outperforms the state of the art on six "
                                "benchmarks (abstract); TeAST is the strongest prior model "
                                "of the same lineage." + _STATEMENT_NOTE,
                check="lower 95% bound of the paired MRR gain of TeDS over the prior model "
                      "with the higher mean (TNTComplEx or TeAST, equal parameters) > 0",
                control="TeDS with its diachronic part removed (composition='synchronic')")
def _claim_beats_prior(scale, seed, out_dir):
    res = _run(scale, seed, "fact")
    best = max(_PRIOR, key=lambda m: np.mean(res[m]["mrr"]))
    gain = paired_difference(res["TeDS"]["mrr"], res[best]["mrr"])
    control = paired_difference(res["TeDS synchronic only"]["mrr"], res[best]["mrr"])
    equal_rank = paired_difference(res["TeDS equal rank"]["mrr"], res[best]["mrr"])
    shown = ("TNTComplEx", "TeAST", "TeDS", "TeDS synchronic only", "TeDS equal rank")
    artifact = _bar_plot({a: res[a]["mrr"] for a in shown}, "random split", out_dir,
                         "teds_vs_prior")
    return ClaimResult(
        observed={"best_prior": best, "gain_equal_parameters": gain.to_dict(),
                  "gain_equal_rank": equal_rank.to_dict(),
                  "mrr_per_seed": {arm: res[arm]["mrr"] for arm in shown}},
        expected={"gain_equal_parameters_lower_bound": "> 0"},
        passed=gain.passed,
        control=ControlResult(observed={"gain_synchronic_only": control.to_dict()},
                              passed=control.passed),
        arms=_arms_record({a: res[a] for a in shown}, scale), artifacts=[artifact],
        notes="Same fits as time-aware-beats-static. Choosing the stronger prior model on "
              "the test MRR makes the check harder for TeDS, not easier. gain_equal_rank is "
              "reported, not judged.")
