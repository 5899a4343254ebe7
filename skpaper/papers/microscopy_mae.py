"""ViTally Consistent (Kenyon-Dean et al., ICML 2025): curation, MAE, block search, TVN.

The paper pretrains a 1.9B-parameter MAE on 8 billion crops of Recursion's
Cell Painting screens. No such data or compute is at hand, so the claims are
checked on synthetic plates whose ground truth is known
(:func:`~skpaper.datasets.make_plate_embeddings`,
:func:`~skpaper.datasets.make_synthetic_cell_plates`). Every comparison runs
its arms on the same list of seeds (a new screen and a new MAE initialisation
per seed) and asserts the paper's direction with a one-sided paired bound.
The MAEs trained here are tiny and briefly trained; ``full`` scale is sized
for a GPU. (Block search on a deliberately degraded encoder is a unit test in
``tests/representation/test_microscopy.py``, not a claim.)
"""

from functools import lru_cache

import numpy as np

from ._plotting import new_figure, save_figure
from ._registry import ClaimResult, ControlResult, register_claim, register_paper
from ._stats import claim_seeds, paired_difference, seed_summary

SLUG = "microscopy-mae"

register_paper(SLUG, "ViTally Consistent: Scaling Biological Representation Learning for "
               "Cell Microscopy", module="skpaper.representation")

_TVN = {
    "smoke": dict(n_datasets=2, n_perturbations=40),
    "quick": dict(n_datasets=5, n_perturbations=100),
    "full": dict(n_datasets=20, n_perturbations=300),
}

_PLATES = {
    # generator size, MAE size and budget, probe folds
    "smoke": dict(n_perturbations=12, n_sites=1, image_size=16, dim=16, depth=3, epochs=2,
                  cv=2, n_seeds=2),
    "quick": dict(n_perturbations=30, n_sites=2, image_size=24, dim=32, depth=4, epochs=12,
                  cv=3, n_seeds=5),
    "full": dict(n_perturbations=100, n_sites=4, image_size=32, dim=128, depth=8, epochs=100,
                 cv=5, n_seeds=10),
}


def _seed(seed, offset):
    return (int(seed) * 1009 + offset) % (2**31 - 1)



# ----------------------------------------------------------------------------- claim 1
def _tvn_ks(d, params, rng=None):
    """Replicate consistency of ``d.X`` after TVN (``params=None``: raw features).

    With ``rng``, the normaliser is fitted blind: control flags and plate labels
    are permuted, so it whitens and centres on random wells of random plates.
    """
    from ..representation import TypicalVariationNormalizer, replicate_consistency_ks

    wells = ~d.is_control
    Z = d.X
    if params is not None:
        batches, controls = d.plate, d.is_control
        if rng is not None:
            batches, controls = rng.permutation(batches), rng.permutation(controls)
        Z = TypicalVariationNormalizer(**params).fit(
            d.X, batches=batches, is_control=controls).transform(d.X, batches=batches)
    return replicate_consistency_ks(Z[wells], d.perturbation[wells], batches=d.plate[wells])


@register_claim(
    SLUG, "tvn-replicate-consistency",
    "Typical variation normalisation fitted on controls (PCA whitening of the pooled "
    "controls, then per-plate centring and scaling) raises replicate consistency (KS between "
    "replicate and random-pair cosines) over raw features.",
    paper_statement="TVN (PCA whitening on negative controls, per-batch centring and "
                    "scaling) is the post-processing behind the paper's replicate-"
                    "consistency figures (KS 0.63 for MAE-G/8 + TVN on RxRx3).",
    check=("Over synthetic screens (paired: every method on the same screen), lower one-sided "
           "95% t bound of mean(KS(TVN) - KS(raw)) > 0."),
    control="controls and plates blind: the same normaliser fitted with permuted control "
            "flags and plate labels, same check",
)
def _claim_tvn(scale, seed, out_dir):
    from ..datasets import make_plate_embeddings

    cfg = _TVN[scale]
    methods = {"raw": None, "centre+scale": dict(whiten=False), "TVN": dict(),
               "TVN+CORAL": dict(coral=True)}
    ks = {name: [] for name in [*methods, "TVN, controls and plates blind"]}
    for s in claim_seeds(seed, cfg["n_datasets"]):
        d = make_plate_embeddings(n_perturbations=cfg["n_perturbations"], random_state=s)
        for name, params in methods.items():
            ks[name].append(_tvn_ks(d, params))
        ks["TVN, controls and plates blind"].append(
            _tvn_ks(d, {}, np.random.default_rng(s)))
    gain = paired_difference(ks["TVN"], ks["raw"])
    blind = paired_difference(ks["TVN, controls and plates blind"], ks["raw"])

    fig, ax = new_figure(figsize=(6, 3.4))
    names = list(ks)
    ax.bar(range(len(names)), [np.mean(ks[n]) for n in names],
           color=["gray", "tab:blue", "tab:green", "tab:olive", "tab:red"])
    for j, n in enumerate(names):
        ax.scatter(np.full(len(ks[n]), j), ks[n], color="k", s=8, zorder=3)
    ax.set_xticks(range(len(names)), [n.replace(", ", ",\n") for n in names], fontsize=7)
    ax.set_ylabel("replicate consistency (KS)")
    ax.set_title("batch correction on synthetic plates (6 plates, 40 controls each)")
    artifact = save_figure(fig, out_dir, "tvn_replicate_consistency")
    return ClaimResult(
        observed={"ks": {n: seed_summary(v) for n, v in ks.items()},
                  "tvn_minus_raw": gain.to_dict(),
                  "tvn_minus_blind_tvn": paired_difference(
                      ks["TVN"], ks["TVN, controls and plates blind"]).to_dict()},
        expected={"tvn_minus_raw_lower_bound": "> 0",
                  "paper": "MAE-G/8 + TVN KS 0.63 on RxRx3 (real data; not comparable)"},
        passed=gain.passed,
        control=ControlResult(observed={"blind_minus_raw": blind.to_dict()},
                              passed=blind.passed),
        arms={n: {"parameters": "no trained parameters", "train_steps": 0,
                  "train_examples": "the same screen"} for n in ks},
        artifacts=[artifact],
        notes=("Feature-level synthetic plates: perturbation effects plus shared nuisance "
               "directions, per-plate offsets, scalings and small rotations. The blind "
               "control tells the use of controls and plates apart from whitening as such. "
               "With 40 controls per plate, CORAL's per-plate covariance is estimated from "
               "few samples."),
    )


# ----------------------------------------------------------------------------- claims 2, 3
@lru_cache(maxsize=16)
def _plates(scale, seed):
    from ..datasets import make_synthetic_cell_plates

    cfg = _PLATES[scale]
    return make_synthetic_cell_plates(n_perturbations=cfg["n_perturbations"],
                                      n_sites=cfg["n_sites"], image_size=cfg["image_size"],
                                      random_state=_seed(seed, 21))


def _mae(scale, seed, image_shape, epochs=None):
    from ..representation import MicroscopyMAE

    cfg = _PLATES[scale]
    return MicroscopyMAE(image_shape=image_shape, patch_size=4, embed_dim=cfg["dim"],
                         depth=cfg["depth"], n_heads=2, decoder_dim=32, decoder_heads=2,
                         layer_scale=None, max_epochs=epochs or cfg["epochs"], lr=2e-3,
                         batch_size=64, random_state=_seed(seed, 22),
                         inference_dtype="float32")


@lru_cache(maxsize=16)
def _uncurated_mae(scale, seed):
    """The MAE pretrained on every image of the seed's screen (shared by two claims)."""
    d = _plates(scale, seed)
    return _mae(scale, seed, d.image_shape).fit(d.X)


def _probe_task(d):
    """Images of perturbations with a phenotype, labelled by pathway (the proxy task)."""
    rows = ~d.is_control & d.has_phenotype[np.maximum(d.perturbation, 0)]
    return rows, d.pathway[d.perturbation[rows]]


def _selected_vs_last(blocks, labels, cv, seed):
    """Held-out balanced accuracy of the searched block and of the last block.

    Outer stratified folds; in each, the block is chosen by cross-validated
    probing on the training part only (the paper's search), then a probe on
    that block and one on the last block are fitted on the training part and
    scored on the held-out part, so that choosing the best of several blocks
    gives no built-in advantage over the last.
    """
    from sklearn.linear_model import LogisticRegression
    from sklearn.metrics import balanced_accuracy_score
    from sklearn.model_selection import StratifiedKFold
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    from ..representation import linear_separability

    outer = StratifiedKFold(n_splits=cv, shuffle=True, random_state=seed)
    chosen, last, picks = [], [], []
    for train, test in outer.split(blocks[0], labels):
        inner = [linear_separability(f[train], labels[train], cv=cv, random_state=seed)
                 for f in blocks]
        best = int(np.argmax(inner))
        picks.append(best + 1)
        for b, out in ((best, chosen), (len(blocks) - 1, last)):
            probe = make_pipeline(StandardScaler(), LogisticRegression(max_iter=2000))
            probe.fit(blocks[b][train], labels[train])
            out.append(balanced_accuracy_score(labels[test], probe.predict(blocks[b][test])))
    return float(np.mean(chosen)), float(np.mean(last)), picks


def _block_scores(mae, d, rows, labels, cv, seed, permute=False):
    feats = mae.transform_all_blocks(d.X[rows])
    if permute:
        labels = np.random.default_rng(seed).permutation(labels)
    return _selected_vs_last(feats, labels, cv, seed)


@register_claim(
    SLUG, "intermediate-block-beats-last",
    "The encoder block chosen by linear probing of an MAE trained on cell images beats the "
    "last block on held-out data.",
    paper_statement="The best block is often intermediate: 38 of 48 for MAE-G/8 (RxRx1 "
                    "balanced accuracy 0.51 at block 38 against 0.47 at the last block), 20 "
                    "of 24 for MAE-L/8; CA-MAE-S peaks at its last block (Sec. 3.3).",
    check=("Over paired seeds (a new screen and MAE each), lower one-sided 95% t bound of "
           "mean(held-out pathway balanced accuracy of the block chosen by inner-fold probing "
           "- that of the last block) > 0 (nested cross-validation)."),
    control="pathway labels permuted: the same search and comparison on shuffled labels",
)
def _claim_block_curve(scale, seed, out_dir):
    from sklearn.decomposition import PCA

    from ..representation import linear_separability

    cfg = _PLATES[scale]
    chosen, last, picks, chosen_c, last_c, curves, pixel = [], [], [], [], [], [], []
    for s in claim_seeds(seed, cfg["n_seeds"]):
        d = _plates(scale, s)
        rows, labels = _probe_task(d)
        mae = _uncurated_mae(scale, s)
        a, b, p = _block_scores(mae, d, rows, labels, cfg["cv"], s)
        chosen.append(a), last.append(b), picks.append(p)
        a, b, _ = _block_scores(mae, d, rows, labels, cfg["cv"], s, permute=True)
        chosen_c.append(a), last_c.append(b)
        feats = mae.transform_all_blocks(d.X[rows])
        curves.append([linear_separability(f, labels, cv=cfg["cv"], random_state=0)
                       for f in feats])
        pcs = PCA(min(32, rows.sum() - 1), random_state=0).fit_transform(d.X[rows])
        pixel.append(linear_separability(pcs, labels, cv=cfg["cv"], random_state=0))
    gain = paired_difference(chosen, last)
    ctrl = paired_difference(chosen_c, last_c)
    n_pathways = np.unique(labels).size
    curve = np.mean(curves, axis=0)

    fig, ax = new_figure(figsize=(5.5, 3.4))
    blocks = np.arange(1, len(curve) + 1)
    for c in curves:
        ax.plot(blocks, c, "-", color="tab:blue", alpha=0.25, lw=1)
    ax.plot(blocks, curve, "o-", color="tab:blue", label="MAE block (mean over seeds)")
    ax.axhline(np.mean(pixel), color="tab:orange", ls="--", label="pixel PCA")
    ax.axhline(1.0 / n_pathways, color="gray", ls=":", label="chance")
    ax.set_xlabel("encoder block")
    ax.set_ylabel("pathway balanced accuracy")
    ax.set_title("per-block linear probe, synthetic cell plates")
    ax.legend(fontsize=8)
    artifact = save_figure(fig, out_dir, "per_block_probe_curve")
    return ClaimResult(
        observed={"chosen_minus_last": gain.to_dict(),
                  "chosen_block_score": seed_summary(chosen),
                  "last_block_score": seed_summary(last), "chosen_blocks": picks,
                  "mean_block_curve": np.round(curve, 4).tolist(),
                  "pixel_pca_score": seed_summary(pixel), "chance": 1.0 / n_pathways,
                  "depth": len(curve)},
        expected={"chosen_minus_last_lower_bound": "> 0",
                  "paper_best_blocks": {"MAE-G/8": "38/48", "MAE-L/8": "20/24",
                                        "CA-MAE-S": "12/12"}},
        passed=gain.passed,
        control=ControlResult(observed={"chosen_minus_last": ctrl.to_dict()},
                              passed=ctrl.passed),
        arms={"chosen block": {"parameters": "the same MAE", "train_steps": "the same",
                               "train_examples": "the same folds"},
              "last block": {"parameters": "the same MAE", "train_steps": "the same",
                             "train_examples": "the same folds"}},
        artifacts=[artifact],
        notes=(f"A {cfg['depth']}-block, width-{cfg['dim']} MAE trained for {cfg['epochs']} "
               "epochs on a few hundred synthetic images: far from the paper's regime, and "
               "its features may trail a pixel-PCA baseline at this budget. When the inner "
               "search picks the last block the difference of that fold is zero."),
    )


def _curation_masks(scale, seed, d):
    """The consistency-curated image mask and a random mask of the same size."""
    from sklearn.decomposition import PCA

    from ..representation import PerturbationConsistencyFilter, TypicalVariationNormalizer

    # prior model: pixel PCA, batch-corrected on controls (stands in for the earlier MAE)
    prior = PCA(min(32, len(d.X) - 1), random_state=0).fit_transform(d.X)
    prior = TypicalVariationNormalizer(n_components=16).fit(
        prior, batches=d.plate, is_control=d.is_control).transform(prior, batches=d.plate)
    wells = ~d.is_control
    filt = PerturbationConsistencyFilter(n_permutations=500, alpha=0.05,
                                         random_state=_seed(seed, 31))
    filt.fit(prior[wells], d.perturbation[wells])
    rng = np.random.default_rng(_seed(seed, 32))
    # paper: keep 30% of negative controls
    keep_controls = d.is_control & (rng.random(len(d.X)) < 0.3)
    kept = filt.perturbations_[filt.consistent_].astype(int)
    others = rng.choice(filt.perturbations_.astype(int), size=kept.size, replace=False)
    curated = np.isin(d.perturbation, kept) & wells | keep_controls
    random = np.isin(d.perturbation, others) & wells | keep_controls
    truth = d.has_phenotype[filt.perturbations_.astype(int)]
    return curated, random, filt.consistent_, truth


@register_claim(
    SLUG, "curation-improves-probe",
    "Pretraining on a curated set (perturbations with consistent replicates only) beats "
    "the uncurated set at equal training budget.",
    paper_statement="Phenoprints-16M, curated from RPI-93M by a replicate-consistency filter, "
                    "matches or beats it with 5x fewer images (KS 0.52 -> 0.59, Sec. 3.1).",
    check=("Over paired seeds (a new screen each), lower one-sided 95% t bound of "
           "mean(held-out pathway balanced accuracy of the searched block, curated MAE - "
           "uncurated MAE) > 0; both MAEs get the same number of optimiser steps."),
    control="curation by chance: an MAE trained on randomly chosen perturbations, as many "
            "images as the curated set, same steps and check",
)
def _claim_curation(scale, seed, out_dir):
    cfg = _PLATES[scale]
    score = {"uncurated": [], "curated": [], "random subset": []}
    sizes, precision, recall = [], [], []
    for s in claim_seeds(seed, cfg["n_seeds"]):
        d = _plates(scale, s)
        rows, labels = _probe_task(d)
        curated, random, kept, truth = _curation_masks(scale, s, d)
        # equal budget: the same number of optimiser steps for every set
        steps_full = cfg["epochs"] * int(np.ceil(len(d.X) / 64))
        epochs = max(1, int(round(steps_full / np.ceil(curated.sum() / 64))))
        models = {"uncurated": _uncurated_mae(scale, s),
                  "curated": _mae(scale, s, d.image_shape, epochs=epochs).fit(d.X[curated]),
                  "random subset": _mae(scale, s, d.image_shape,
                                        epochs=epochs).fit(d.X[random])}
        for name, mae in models.items():
            score[name].append(_block_scores(mae, d, rows, labels, cfg["cv"], s)[0])
        sizes.append(int(curated.sum()))
        precision.append(float(truth[kept].mean()) if kept.any() else float("nan"))
        recall.append(float(kept[truth].mean()) if truth.any() else float("nan"))
    gain = paired_difference(score["curated"], score["uncurated"])
    ctrl = paired_difference(score["random subset"], score["uncurated"])

    fig, ax = new_figure(figsize=(5.5, 3.4))
    names = list(score)
    for j, n in enumerate(names):
        ax.bar(j, np.mean(score[n]), color=["gray", "tab:blue", "tab:red"][j])
        ax.scatter(np.full(len(score[n]), j), score[n], color="k", s=8, zorder=3)
    for vals in zip(*score.values()):
        ax.plot(range(len(names)), vals, color="k", lw=0.5, alpha=0.4)
    ax.set_xticks(range(len(names)), names)
    ax.set_ylabel("held-out pathway balanced accuracy")
    ax.set_title("curation at equal optimiser steps (lines: paired seeds)")
    artifact = save_figure(fig, out_dir, "curation_probe")
    n_images = len(_plates(scale, claim_seeds(seed, 1)[0]).X)
    return ClaimResult(
        observed={"curated_minus_uncurated": gain.to_dict(),
                  "score": {n: seed_summary(v) for n, v in score.items()},
                  "curated_images": sizes, "uncurated_images": n_images,
                  "filter_precision": precision, "filter_recall": recall},
        expected={"curated_minus_uncurated_lower_bound": "> 0",
                  "paper": "Phenoprints-16M (curated) matches or beats RPI-93M; KS 0.52 -> 0.59"},
        passed=gain.passed,
        control=ControlResult(observed={"random_minus_uncurated": ctrl.to_dict()},
                              passed=ctrl.passed),
        arms={"uncurated": {"parameters": "same MAE architecture",
                            "train_steps": cfg["epochs"] * int(np.ceil(n_images / 64)),
                            "train_examples": n_images},
              "curated": {"parameters": "same MAE architecture",
                          "train_steps": "equal to uncurated (more epochs)",
                          "train_examples": sizes},
              "random subset": {"parameters": "same MAE architecture",
                                "train_steps": "equal to uncurated (more epochs)",
                                "train_examples": sizes}},
        artifacts=[artifact],
        notes=("The filter runs on a pixel-PCA + TVN prior (the paper uses an earlier MAE "
               "or a weakly supervised model). Every MAE gets the same number of optimiser "
               "steps (up to rounding of epochs); all are scored by the same nested block "
               "search. Small models and data."),
    )
