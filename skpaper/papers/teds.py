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
to it. TeDS at the reference's rank (about 1.8x the parameters) is reported on the
held-out-timestamp split. All arms train with the same recipe, epochs, batch size
and data, on paired sequential seeds (each seed draws its own graph, split and
initialisations; :func:`~skpaper.papers.run_comparison`).
"""

import numpy as np

from ._comparison import ArmRun, EffectOfInterest, all_of, decide_claim, run_comparison
from ._plotting import new_figure, save_figure
from ._registry import ClaimResult, register_claim, register_paper, shared_cache
from ._stats import claim_seeds

SLUG = "teds"

register_paper(SLUG, "TeDS: Joint Learning of Diachronic and Synchronic Perspectives in "
               "Quaternion Space for Temporal Knowledge Graph Completion", module="skpaper.kg")

# Data, model size and seeds per scale; "full" is sized for a GPU.
_SCALES = {
    "smoke": {"data": dict(n_entities=40, n_relations=4, n_timestamps=16, n_facts=1500,
                           n_clusters=4, era_length=4),
              "model": dict(rank=8, max_epochs=5, batch_size=500), "looks": (2,)},
    # Looks 4, 8, 16: on the calibration setting (_CALIBRATION, seed key 99, 6 seeds) the
    # paired SD of TeDS - TNTComplEx is 0.010 MRR and of TeDS - TeAST 0.013, which one look
    # at the 0.01 effect of interest decides with 8 and 12 seeds (seeds_needed); the last
    # look leaves room for the error spent at the earlier ones.
    "quick": {"data": dict(n_entities=120, n_relations=8, n_timestamps=40, n_facts=6000,
                           n_clusters=8, era_length=10),
              "model": dict(rank=24, max_epochs=20, batch_size=1000), "looks": (4, 8, 16)},
    "full": {"data": dict(n_entities=500, n_relations=20, n_timestamps=100, n_facts=60_000,
                          n_clusters=25, era_length=25),
             "model": dict(rank=64, max_epochs=40, batch_size=2000), "looks": (8, 16, 32)},
}
_PRIOR = ("TNTComplEx", "TeAST")
#: Calibration setting of the quick looks: a smaller graph (no claim's size), seed key 99.
#: Measured once (6 seeds, quick's recipe at rank 20): MRR TNTComplEx 0.486, TeAST 0.492,
#: TeDS 0.476, TeDS synchronic only 0.470; TeDS - TNTComplEx -0.010 (SD 0.010), TeDS -
#: TeAST -0.017 (SD 0.013). The ranking of the two prior models flips between this setting
#: and quick's, which is why the check bounds TeDS against each of them.
_CALIBRATION = {"data": dict(n_entities=100, n_relations=6, n_timestamps=30, n_facts=5000,
                             n_clusters=6, era_length=8),
                "model": dict(rank=20, max_epochs=20, batch_size=1000), "looks": (2,)}
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
_TIMESTAMP_ARMS = ("TNTComplEx", "TeDS", "TeDS synchronic only", "TeDS equal rank")
#: Seeds of the held-out-timestamp report at each scale (a reported claim, no looks).
_REPORT_SEEDS = {"smoke": 2, "quick": 4, "full": 6}
_EOI = EffectOfInterest(
    0.01, "ours",
    "one point of filtered MRR: the smallest gain between successive temporal KG models "
    "that their comparison tables treat as an improvement (the paper's benchmark values "
    "were not retrievable offline)")
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


@shared_cache(maxsize=512)
def _fit(scale, run_seed, by, arm):
    """Test MRR of one arm on one seed, and its MRR with shuffled test timestamps."""
    train, test = _split(scale, run_seed, by)
    name, overrides, _ = _arm_config(arm, scale)
    est = _estimator(name, scale, run_seed, **overrides).fit(train)
    if by != "fact":
        return est.evaluate(test)["mrr"], None
    shuffled = _shuffle_time(test, _SCALES[scale]["data"]["n_timestamps"], run_seed)
    return est.evaluate(test)["mrr"], est.evaluate(shuffled)["mrr"]


def _fact_arm(scale, arms, pick=None, shuffled=False):
    """One figure per seed on the random split: the arm's MRR, or ``pick`` (min or max)
    over several arms (the harder comparator of a claim)."""
    cfg = _SCALES[scale]
    n_train = int(round(0.8 * cfg["data"]["n_facts"]))

    def run(seed):
        values = [_fit(scale, seed, "fact", a)[int(shuffled)] for a in arms]
        return ArmRun(float(pick(values) if pick else values[0]),
                      parameters=_arm_config(arms[0], scale)[2],
                      train_steps=cfg["model"]["max_epochs"], train_examples=n_train,
                      extra={"train_steps_unit": "epochs", "rank": _arm_config(arms[0],
                                                                              scale)[1]["rank"]})
    return run


def _per_seed(scale, seeds, arm, by="fact"):
    return [_fit(scale, s, by, arm)[0] for s in seeds]


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
                check="sequential paired seeds (looks 4, 8, 16 at quick): lower bound of "
                      "mean(MRR of the weakest of TNTComplEx, TeAST and TeDS on that seed - "
                      "ComplEx's, equal parameters, random 80/20 split) > 0; contradicted "
                      "when the upper bound is below 0.01 MRR",
                control="the same models evaluated with the test timestamps replaced by "
                        "random ones (time information removed)",
                effect_of_interest=_EOI)
def _claim_time_aware(scale, seed, out_dir):
    models = ("TNTComplEx", "TeAST", "TeDS")
    arms = {"weakest time-aware model": _fact_arm(scale, models, min),
            "ComplEx": _fact_arm(scale, ("ComplEx",)),
            "weakest time-aware model, random test timestamps": _fact_arm(scale, models, min,
                                                                          shuffled=True),
            "ComplEx, random test timestamps": _fact_arm(scale, ("ComplEx",), shuffled=True)}
    cmp = run_comparison(arms, method="weakest time-aware model", baseline="ComplEx",
                         control_method="weakest time-aware model, random test timestamps",
                         control_baseline="ComplEx, random test timestamps", seed=seed,
                         looks=_SCALES[scale]["looks"], key=(1,), effect_of_interest=_EOI,
                         metric="time-aware filtered MRR (test)")
    gains = {m: decide_claim(_per_seed(scale, cmp.seeds, m),
                             _per_seed(scale, cmp.seeds, "ComplEx"),
                             effect_of_interest=_EOI).decision.to_dict() for m in models}
    artifact = _bar_plot({**{m: _per_seed(scale, cmp.seeds, m) for m in ("ComplEx", *models)},
                          **{f"{m} random t": [_fit(scale, s, "fact", m)[1] for s in cmp.seeds]
                             for m in models}},
                         "random split, equal parameters", out_dir, "time_aware_vs_static")
    for m in models:
        cmp.arms[m] = dict(_fact_arm(scale, (m,))(cmp.seeds[0]).cost(), seeds=len(cmp.seeds))
    return cmp.claim_result(
        observed={**{f"gain_over_static_{m}": g for m, g in gains.items()}},
        artifacts=[artifact],
        notes="The check takes, seed by seed, the weakest of the three time-aware models, so "
              "a pass bounds every model's gain at once. Each seed draws its own graph, "
              "split and initialisations; ComplEx ignores time, so its MRR with random test "
              "timestamps is its MRR.")


@register_claim(SLUG, "diachronic-unseen-timestamps",
                "With every fact of 20% of the timestamps held out, TeDS (whose diachronic "
                "quaternion is a function of time) beats TNTComplEx (free timestamp "
                "embeddings) at equal parameter count.",
                paper_statement="The diachronic perspective maps time points in order to "
                                "angles whose trigonometric functions form a rotation "
                                "quaternion (abstract), so the representation of a time "
                                "point follows from its position in time." + _STATEMENT_NOTE,
                check="Reported, not asserted: the paper does not state this comparison (it is "
                      "an inference of this project's planning from the diachronic design). "
                      "Recorded: the paired MRR gains of TeDS, of TeDS without its "
                      "diachronic part and of TeDS at equal rank over TNTComplEx on the "
                      "held-out-timestamp split.",
                reported=True)
def _claim_unseen(scale, seed, out_dir):
    seeds = claim_seeds(seed, _REPORT_SEEDS[scale], 2)
    mrr = {arm: _per_seed(scale, seeds, arm, "timestamp") for arm in _TIMESTAMP_ARMS}

    def gain(arm):
        return decide_claim(mrr[arm], mrr["TNTComplEx"], effect_of_interest=_EOI
                            ).decision.to_dict()

    artifact = _bar_plot(mrr, "held-out timestamps", out_dir, "unseen_timestamps")
    return ClaimResult(
        observed={"gain_equal_parameters": gain("TeDS"),
                  "gain_synchronic_only": gain("TeDS synchronic only"),
                  "gain_equal_rank": gain("TeDS equal rank"), "mrr_per_seed": mrr,
                  "seeds": seeds},
        expected={"reported": "paired gains over TNTComplEx, no verdict"},
        passed=None, arms=_arms_record({a: {"parameters": _arm_config(a, scale)[2],
                                            "rank": _arm_config(a, scale)[1]["rank"]}
                                        for a in mrr}, scale),
        artifacts=[artifact],
        notes="Both models use the same recipe, including the temporal smoothness penalty, "
              "which pulls unseen timestamp embeddings towards their neighbours and so lets "
              "TNTComplEx interpolate.")


@register_claim(SLUG, "teds-beats-best-prior",
                "On a random split, TeDS beats each prior time-aware model (TNTComplEx and "
                "TeAST) at equal parameter count, so it beats the best of them.",
                paper_statement="TeDS significantly outperforms the state of the art on six "
                                "benchmarks (abstract); TeAST is the strongest prior model "
                                "of the same lineage." + _STATEMENT_NOTE,
                check="sequential paired seeds (looks 4, 8, 16 at quick), one comparison per "
                      "prior model on the same seeds: lower bound of mean(MRR of TeDS - MRR "
                      "of TNTComplEx) > 0 and likewise against TeAST (equal parameters); "
                      "contradicted when either upper bound is below 0.01 MRR",
                control="TeDS with its diachronic part removed (composition='synchronic'), "
                        "against the same prior model in each comparison",
                effect_of_interest=_EOI)
def _claim_beats_prior(scale, seed, out_dir):
    comparisons = {}
    for prior in _PRIOR:
        arms = {"TeDS": _fact_arm(scale, ("TeDS",)), prior: _fact_arm(scale, (prior,)),
                "TeDS synchronic only": _fact_arm(scale, ("TeDS synchronic only",))}
        comparisons[f"vs {prior}"] = run_comparison(
            arms, method="TeDS", baseline=prior, control_method="TeDS synchronic only",
            seed=seed, looks=_SCALES[scale]["looks"], key=(1,), effect_of_interest=_EOI,
            metric="time-aware filtered MRR (test)")
    seeds = max((c.seeds for c in comparisons.values()), key=len)
    shown = ("TNTComplEx", "TeAST", "TeDS", "TeDS synchronic only")
    artifact = _bar_plot({a: _per_seed(scale, seeds, a) for a in shown}, "random split",
                         out_dir, "teds_vs_prior")
    seedwise_best = [max(v) for v in zip(*(_per_seed(scale, seeds, m) for m in _PRIOR))]
    return all_of(
        comparisons,
        observed={"seeds": seeds,
                  "per_seed": {a: _per_seed(scale, seeds, a) for a in shown},
                  "gain_over_seedwise_better_prior": decide_claim(
                      _per_seed(scale, seeds, "TeDS"), seedwise_best,
                      effect_of_interest=_EOI).decision.to_dict()},
        artifacts=[artifact],
        notes="Same fits as time-aware-beats-static. Each prior model is its own comparison "
              "on the same seeds, and the claim needs both: the better of the two is the "
              "state of the art, whichever it is on this graph (TeAST on the calibration "
              "setting, TNTComplEx at quick). The earlier comparator, the better of the two "
              "seed by seed, is reported beside (gain_over_seedwise_better_prior): a maximum "
              "of two noisy scores sits above either model's mean, which biased that check "
              "against TeDS. Every arm has about 9,200 parameters (TeDS at rank 13, TeAST "
              "21, TNTComplEx 24), 20 epochs (test MRR is flat from 20 to 150 epochs), the "
              "same batch size, optimiser and regularisers. TeDS at equal rank (about 1.8x "
              "the parameters) is not trained on this split.")


def _calibration(n_seeds=6):
    """The calibration figures of the quick looks (seed key 99, a smaller graph)."""
    key = "calibration"
    _SCALES[key] = _CALIBRATION
    try:
        return {arm: [_fit(key, s, "fact", arm)[0] for s in claim_seeds(0, n_seeds, 99)]
                for arm in ("TNTComplEx", "TeAST", "TeDS", "TeDS synchronic only")}
    finally:
        del _SCALES[key]
