"""Are sparse autoencoders useful? A case study in sparse probing (Kantamneni et al., 2025).

The paper probes Gemma-2-9B activations with Gemma Scope SAEs; no such model ships
offline, so the claims run on synthetic "activations" with known ground truth
(:func:`~skpaper.datasets.make_superposition_activations`: sparse sums of unit atoms
in superposition, atom 0 the concept to probe). A TopK SAE is trained on an unlabeled
pool where the concept is rare (5 %), then probes are trained on labeled subsets in the
paper's four regimes. Every candidate is fitted once per (cell, repeat): the paper's
baselines, the SAE probes with the hard-regime ``k`` of the paper and its code
(16 and 128), and an oracle probe on the true concept direction (a label-leaking
feature, the negative control: it has a real edge, so a "no gain" check run on it must
fail). Claim 1 compares the SAE probe (its ``k`` chosen by validation AUC) with the
quiver of baselines per regime; claim 2 is the paper's quiver with and without SAE
probes.
"""

import warnings

import numpy as np
from sklearn.base import clone
from sklearn.exceptions import ConvergenceWarning
from sklearn.frozen import FrozenEstimator
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import FunctionTransformer

from ..datasets import make_superposition_activations
from ..representation import (
    ProbeSearchCV,
    SAEProbeClassifier,
    SparseAutoencoder,
    covariate_shift_split,
    flip_labels,
    imbalance_split,
    paper_baselines,
    regime_grid,
    scarcity_split,
)
from ..utils import parallel_map, spawn_seeds
from ..utils._metrics import binary_roc_auc
from ._comparison import EffectOfInterest, run_comparison
from ._plotting import new_figure, save_figure
from ._registry import register_claim, register_paper, shared_cache
from ._stats import seed_summary

SLUG = "sae-probing"
register_paper(
    SLUG,
    "Are Sparse Autoencoders Useful? A Case Study in Sparse Probing",
    module="skpaper.representation", quick_cost_s=2000)

#: Looks of the quick claims, from the power figures of the quick-size calibration setting
#: (``_calibration(setting="calibration_quick_size")``: seed stream key 98, the quick pool,
#: SAE, labeled set and test size, cells of its own; eight repeats, 189 s wall at load
#: average 1.5-2.3). There, no-consistent-gain's check needed 14 repeats for one look
#: (SAE - quiver -0.0051, SD 0.021) and its oracle control 3 (+0.034, SD 0.007);
#: quiver-no-gain's check 20 (+0.022, SD 0.021: decided at its distance from the margin)
#: and its handicapped-quiver control 3 (+0.050, SD 0.011). For the alpha spending the last
#: look is at least 1.5x the larger one-look need: 21 for no-consistent-gain (looks 8, 16,
#: 24) and 30 for quiver-no-gain (looks 10, 20, 30), where 30 is also the cap, about
#: 10 minutes of quick repeats (18-21 s each) on an idle core. The first calibration
#: setting (``_calibration()``, key 99, a smaller pool and SAE, four repeats) gave SDs 3-5x
#: smaller (quiver-no-gain check SD 0.004) and is kept for comparison only.
#:
#: Why quiver-no-gain can stay undecided at quick scale, from the quick-size calibration
#: setting only (key 98; no claim seed looked at). Where the per-repeat SD of its check
#: comes from (6 repeats, each fitted on two training draws, every candidate also scored on
#: 20,000 fresh samples of the same world): the test split is not the cause (SD 0.021 with
#: the 1,000-sample test, 0.022 with 20,000; test noise SD 0.004); neither is the world
#: (atoms, pool, SAE fit; between-world SD about 0, within-world training-draw SD 0.022).
#: The few-shot scarcity cell is: its per-cell SD is 0.117 (mean +0.085, the SAE probes
#: help at n=6), 0.0196 of the 0.021 once divided by the six cells; the others have 0.003
#: (n=96) to 0.024 (imbalance 0.03). No unit had a test AUC of 0.999 or more (39% had a
#: saturated validation AUC; ties are split evenly). Refitting that cell on six training
#: draws per repeat (about 2.4 s per draw at load 1.3, 4.9 s at load 4) halves the SD
#: (12 repeats: 0.0115 against 0.0219 with one draw, 90% upper limit 0.016) but puts the
#: calibration mean at the margin (+0.0099 against 0.01, +0.0177 with one draw), where no
#: number of repeats decides; even a gap of 0.003 would need 118-229 repeats at the last
#: look's level 0.025 (40-80 min of one core). So no cheaper design decides this claim at
#: quick scale and its looks are unchanged; its control (+0.037, SD 0.020 there) needs
#: 11-13 repeats.
_QUICK_LOOKS = (8, 16, 24)
#: That first design of quiver-no-gain (looks 10, 20, 30 on claim_seeds(seed, 30)) ended
#: undecided at seed 0: +0.0070 [-0.0002, +0.0142], SD 0.0177 over 30 repeats, its control
#: failing decisively at look 10 (lower bound 0.023 above 0.01). Its figures are kept, not
#: rerun.
_QUIVER_FIRST_DESIGN = dict(looks=(10, 20, 30), key=(), mean=0.0070, sd=0.01771,
                            lower=-0.0002, upper=0.0142, n=30, verdict="undecided",
                            control_mean=0.0460, control_lower=0.0233,
                            control_verdict="contradicted")
#: The design that runs at quick scale: one look of 318 repeats on seed stream key 2, which
#: neither the first design nor a calibration drew. The check is an equivalence (its margin
#: is its effect of interest), so no number of repeats forces a verdict; 318 is
#: seeds_needed(sd_upper_limit(0.0177, 30) = 0.0215, 0.01 - 0.0070, alpha=0.05), 80% power
#: to put the upper bound below 0.01 if the mean is the first design's. Its repeats fit the
#: scarcity and imbalance cells only (the check's), spread over the claim's share of the
#: cores. Over both designs each false verdict has probability at most 0.05 + 0.05.
#: At seed 0 it ended undecided too, and no further design can decide it: +0.0092
#: [+0.0073, +0.0110], SD 0.0199 over 318 repeats, the interval around the margin itself.
#: The gain is real (its lower bound is far above 0) and sits at the 0.01 of interest; it
#: comes from the few-shot cell (n=4: +0.064), the other five cells average -0.002. To
#: tell a mean 0.0008 from the margin would take about 4,000 repeats.
_QUICK_QUIVER_LOOKS, _QUICK_QUIVER_KEY = (318,), (2,)

#: Per scale: SAE pool and size, repeats, the cells of each regime, test size, jobs.
_CONFIG = {
    # smoke keeps n >= 128, where validation is one holdout instead of six folds (seconds).
    "smoke": dict(pool=2000, n_latents=128, k=4, epochs=8, batch=64, looks=(2,),
                  quiver_looks=(2,),
                  labeled=1200, scarcity=(128, 256), imbalance=(0.3,), imbalance_n=128,
                  noise_ns=(128,), noise_fracs=(0.3,), shift_ns=(128,), n_test=300,
                  baselines=("logreg", "knn"), n_jobs=1),
    # Sequential repeats (new splits of the same world); each repeat fits every cell.
    # Not a scale: the setting of ``_calibration`` (seed stream key 99, other sizes and cells).
    "calibration": dict(pool=8000, n_latents=384, k=8, epochs=6, batch=256, looks=(),
                        labeled=4000, scarcity=(8, 32, 128), imbalance=(0.1,),
                        imbalance_n=192, noise_ns=(96,), noise_fracs=(0.2,), shift_ns=(128,),
                        n_test=600, baselines=("logreg", "pca", "knn"), n_jobs=1),
    # Not a scale either: the quick sizes (pool, SAE, labeled set, test size, baselines) with
    # cells of its own that no claim uses (other scarcity n, imbalance ratios and n, noise
    # fractions and n, shift n); ``_calibration(setting="calibration_quick_size")``, key 98.
    "calibration_quick_size": dict(pool=12000, n_latents=512, k=8, epochs=6, batch=256,
                                   looks=(), labeled=6000, scarcity=(6, 24, 96, 192),
                                   imbalance=(0.03, 0.12), imbalance_n=320, noise_ns=(96,),
                                   noise_fracs=(0.05, 0.2, 0.35), shift_ns=(96, 320),
                                   n_test=1000, baselines=("logreg", "pca", "knn"), n_jobs=1),
    "quick": dict(pool=12000, n_latents=512, k=8, epochs=6, batch=256, looks=_QUICK_LOOKS,
                  quiver_looks=_QUICK_QUIVER_LOOKS, quiver_key=_QUICK_QUIVER_KEY,
                  labeled=6000,
                  scarcity=(4, 16, 64, 256), imbalance=(0.05, 0.2),
                  imbalance_n=256, noise_ns=(128,), noise_fracs=(0.1, 0.3, 0.4),
                  shift_ns=(64, 256), n_test=1000,
                  baselines=("logreg", "pca", "knn"), n_jobs=1),
    "full": dict(pool=100000, n_latents=2048, k=16, epochs=30, batch=512,
                 looks=(5, 10, 20), quiver_looks=(5, 10, 20),
                 labeled=20000,
                 scarcity=tuple(int(n) for n in regime_grid("scarcity")),
                 imbalance=tuple(float(r) for r in regime_grid("imbalance")),
                 imbalance_n=1024, noise_ns=(16, 128, 512, 1024),
                 noise_fracs=tuple(float(f) for f in regime_grid("noise")[1:]),
                 shift_ns=(64, 256, 1024), n_test=1000,
                 baselines=("logreg", "pca", "knn", "xgboost", "mlp"), n_jobs=-1),
}

#: The SAE probes of the hard regimes: k in {16, 128}, as in the paper and its code.
_SAE_KS = (16, 128)
_REGIMES = ("scarcity", "imbalance", "noise", "shift")
#: Both claims are equivalences ("no gain"): the upper bound of the mean AUC gain per repeat
#: must fall below this margin; a lower bound above it contradicts them.
_NO_GAIN_EOI = EffectOfInterest(
    0.01, "ours", "one point of test AUC: the smallest gain for which a practitioner would add "
    "SAE probes to a probing toolbox (the paper reports no average gain, without a margin)")
#: Validation scores this close count as a tie, split evenly between the tied candidates.
_TIE = 1e-9
_ORACLE = "oracle_concept_direction"
#: The weak baseline of claim 2's control (a quiver handicapped on purpose).
_HANDICAPPED = "knn"


@shared_cache(maxsize=48)
def _world(scale, seed):
    """Dictionary, trained SAE and labeled sets shared by both claims."""
    cfg = _CONFIG[scale]
    s_pool, s_lab, s_in, s_out, s_sae = spawn_seeds(seed, 5)
    pool = make_superposition_activations(cfg["pool"], concept_rate=0.05,
                                          random_state=s_pool)
    sae = SparseAutoencoder(arch="topk", n_latents=cfg["n_latents"], k=cfg["k"],
                            max_epochs=cfg["epochs"], batch_size=cfg["batch"], lr=3e-3,
                            random_state=s_sae)
    sae.fit(pool.X)
    lab = make_superposition_activations(cfg["labeled"], concept_rate=0.5,
                                         atoms=pool.atoms, random_state=s_lab)
    half = max(cfg["shift_ns"]) + cfg["n_test"]
    shift_in = make_superposition_activations(half, concept_rate=0.5, context="in",
                                              atoms=pool.atoms, random_state=s_in)
    shift_out = make_superposition_activations(half, concept_rate=0.5, context="out",
                                               atoms=pool.atoms, random_state=s_out)
    shift = (np.vstack([shift_in.X, shift_out.X]), np.concatenate([shift_in.y, shift_out.y]),
             np.repeat([0, 1], half))
    # Which latent fires on the concept, and how well it alone detects it (its fidelity).
    Z = sae.transform(lab.X)
    fidelity = [binary_roc_auc(lab.y, Z[:, j]) if Z[:, j].any() else 0.5
                for j in range(Z.shape[1])]
    return dict(sae=sae, X=lab.X, y=lab.y, shift=shift, fvu=-sae.score(pool.X),
                latent_fidelity=float(np.max(fidelity)), n_dead=sae.n_dead_latents_,
                concept_atom=pool.atoms[pool.concept])


def _project(X, direction):
    return np.asarray(X, dtype=np.float64) @ direction[:, None]


def _candidates(world, cfg, seed, oracle=True):
    """Every probe of one cell: the baselines, the SAE probes and the oracle control."""
    frozen = FrozenEstimator(world["sae"])
    out = dict(paper_baselines(random_state=seed, include=list(cfg["baselines"])))
    out.update({f"sae_k{k}": SAEProbeClassifier(frozen, k=k, random_state=seed)
                for k in _SAE_KS})
    if not oracle:
        return out
    # Knows the true concept atom: logistic regression on the projection onto it.
    oracle = make_pipeline(
        FunctionTransformer(_project, kw_args={"direction": world["concept_atom"]}),
        LogisticRegression(l1_ratio=0.0, max_iter=1000, random_state=seed))
    out[_ORACLE] = ProbeSearchCV(oracle, {"logisticregression__C": list(np.logspace(5, -5, 10))})
    return out


def _cells(cfg):
    """The cells of the four regimes: (regime, parameter, n_train, flip fraction)."""
    cells = [("scarcity", n, n, 0.0) for n in cfg["scarcity"]]
    cells += [("imbalance", r, cfg["imbalance_n"], 0.0) for r in cfg["imbalance"]]
    cells += [("noise", f, n, f) for f in cfg["noise_fracs"] for n in cfg["noise_ns"]]
    cells += [("shift", "in->out", n, 0.0) for n in cfg["shift_ns"]]
    return cells


def _split(world, cfg, regime, param, n, seed):
    if regime == "shift":
        X, y, domain = world["shift"]
        train, test = covariate_shift_split(y, domain, n_train=n, n_test=300,
                                            random_state=seed)
        return X, y, train, test
    X, y = world["X"], world["y"]
    if regime == "imbalance":
        train, test = imbalance_split(y, param, n_train=n, n_test=cfg["n_test"],
                                      random_state=seed)
    else:
        train, test = scarcity_split(y, n, n_test=cfg["n_test"], random_state=seed)
    return X, y, train, test


def _fit_cell(task, cfg, world, oracle=True):
    """Validation score and test AUC of every candidate on one (cell, repeat).

    Each candidate's fit depends on the cell, the repeat and the world only, so leaving
    the oracle out changes no other candidate's figures.
    """
    (regime, param, n, frac), rep_seed = task
    X, y, train, test = _split(world, cfg, regime, param, n, rep_seed)
    y_train = flip_labels(y[train], frac, random_state=rep_seed) if frac else y[train]
    out = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        for name, est in _candidates(world, cfg, rep_seed, oracle).items():
            fitted = clone(est).fit(X[train], y_train)
            out[name] = (float(fitted.best_score_),
                         float(binary_roc_auc(y[test], fitted.decision_function(X[test]))))
    return out


def _choose(row, names):
    """Test AUC of the candidates with the best validation score, ties split evenly.

    Returns the mean test AUC of the tied best candidates (what a uniformly random tie
    break gives on average) and, per candidate, its share of the choice.
    """
    val = np.array([row[n][0] for n in names])
    val = np.where(np.isfinite(val), val, -np.inf)
    tied = val >= val.max() - _TIE
    share = {n: float(t) / tied.sum() for n, t in zip(names, tied)}
    return float(np.mean([row[n][1] for n, t in zip(names, tied) if t])), share


@shared_cache(maxsize=32)
def _repeat(scale, seed, rep_seed):
    """Fit every candidate on every cell of one repeat: its own world (dictionary, SAE,
    labeled sets) and splits, so the bounds cover SAE training as well as the probes."""
    cfg = _CONFIG[scale]
    world = _world(scale, rep_seed)
    cells = _cells(cfg)
    tasks = [(cell, rep_seed) for cell in cells]
    # The SAE is trained once (per world) and shipped to the workers with the data.
    fits = parallel_map(_fit_cell, tasks, n_jobs=cfg["n_jobs"], cfg=cfg, world=world)
    return _units(cfg, cells, fits, rep_seed)


def _units(cfg, cells, fits, rep_seed):
    """One unit per cell of a repeat: each arm's test AUC, chosen by validation AUC."""
    baselines = list(cfg["baselines"])
    saes = [f"sae_k{k}" for k in _SAE_KS]
    units = []
    for cell, row in zip(cells, fits):
        quiver, _ = _choose(row, baselines)
        sae, _ = _choose(row, saes)
        with_sae, share = _choose(row, baselines + saes)
        # The handicapped quiver of the control: nearest neighbours alone, then with SAE probes.
        knn_with_sae, _ = _choose(row, [_HANDICAPPED] + saes)
        unit = {"regime": cell[0], "param": cell[1], "n": cell[2], "rep": rep_seed,
                "quiver": quiver, "sae": sae, "quiver_with_sae": with_sae,
                "sae_share_in_quiver": sum(share[n] for n in saes),
                "knn_with_sae": knn_with_sae,
                "validation_saturated": bool(max(row[n][0] for n in baselines) >= 1.0 - _TIE),
                **{name: row[name][1] for name in row}}
        if _ORACLE in row:
            unit["quiver_with_oracle"] = _choose(row, baselines + [_ORACLE])[0]
        units.append(unit)
    return units


def _quiver_repeat_job(rep_seed, scale, threads):
    """The scarcity and imbalance cells of one repeat of its own world, without the
    oracle (quiver-no-gain's second design); runs in a worker with the claim's threads."""
    from ._environment import torch_threads

    cfg = _CONFIG[scale]
    cells = [c for c in _cells(cfg) if c[0] in ("scarcity", "imbalance")]
    with torch_threads(threads):
        # Not through the cache: each world serves one repeat, and cached worlds (about
        # 10 MB each) would grow the workers until joblib restarts them.
        world = _world.__wrapped__(scale, rep_seed)
        fits = [_fit_cell((cell, rep_seed), cfg, world, oracle=False) for cell in cells]
    return _units(cfg, cells, fits, rep_seed)


@shared_cache(maxsize=4)
def _quiver_repeats(scale, seeds):
    """Quiver units of every repeat in ``seeds`` (a tuple), the repeats spread over the
    claim's share of the cores (the figures do not depend on how many)."""
    import torch

    from ._environment import available_cores

    n_jobs = min(available_cores(), len(seeds))
    done = parallel_map(_quiver_repeat_job, seeds, n_jobs=n_jobs, scale=scale,
                        threads=torch.get_num_threads())
    return dict(zip(seeds, done))


def _regime_units(units, regime):
    return [u for u in units if u["regime"] == regime]


def _balanced(units, arm):
    """Mean over the regimes of the mean over each regime's cells (regimes weigh alike)."""
    return float(np.mean([np.mean([u[arm] for u in _regime_units(units, r)])
                          for r in _REGIMES]))


def _units_of(comparison, scale, seed):
    return [u for s in comparison.seeds for u in _repeat(scale, seed, s)]


@register_claim(
    SLUG, "no-consistent-gain",
    "Across the four hard regimes (scarcity, imbalance, label noise, covariate shift) SAE "
    "probes bring no gain in test AUC over the best baseline (the quiver of baselines).",
    paper_statement="Section 4: in data scarcity, class imbalance and label noise SAE probes "
                    "give no average gain at any setting; under covariate shift logistic "
                    "regression generalises better than the SAE probe (k in {16, 128}).",
    check="per repeat (new splits of one world), the mean over the four regimes of the mean "
          "over each regime's cells of (test AUC of the SAE probe, k in {16, 128} chosen by "
          "validation AUC, minus that of the quiver of baselines chosen by validation AUC, "
          "ties split evenly); over sequential repeats its upper 95% bound < 0.01 "
          "(equivalence: no gain of the size of interest)",
    control="the oracle probe on the true concept direction (a label-leaking feature) in "
            "the SAE probe's place: it has a real edge, so its lower bound must exceed 0.01",
    effect_of_interest=_NO_GAIN_EOI,
)
def _claim_no_consistent_gain(scale, seed, out_dir):
    cfg = _CONFIG[scale]

    def arm(name):
        return lambda s: _balanced(_repeat(scale, seed, s), name)

    cmp = run_comparison({"sae_probe": arm("sae"), "quiver_of_baselines": arm("quiver"),
                          "oracle_direction": arm(_ORACLE)},
                         method="sae_probe", baseline="quiver_of_baselines",
                         control_method="oracle_direction", seed=seed, looks=cfg["looks"],
                         effect_of_interest=_NO_GAIN_EOI, alternative="less",
                         margin=_NO_GAIN_EOI.value, metric="regime-balanced test AUC")
    units = _units_of(cmp, scale, seed)
    per_regime = {r: {arm: float(np.mean([u[arm] - u["quiver"]
                                          for u in _regime_units(units, r)]))
                      for arm in ("sae", "sae_k16", "sae_k128", _ORACLE)} for r in _REGIMES}
    table = [{k: (round(v, 4) if isinstance(v, float) else v) for k, v in u.items()}
             for u in units]
    artifacts = [_plot_regimes(out_dir, units)]
    return cmp.claim_result(
        observed={"mean_gain_vs_quiver_per_regime": per_regime,
                  "shift_logreg_minus_sae": float(np.mean(
                      [u["logreg"] - u["sae"] for u in _regime_units(units, "shift")])),
                  "cells_where_the_sae_probe_wins": float(np.mean(
                      [u["sae"] > u["quiver"] for u in units])),
                  "units_with_saturated_validation": float(np.mean(
                      [u["validation_saturated"] for u in units])),
                  **{key: float(np.mean([_world(scale, s)[field] for s in cmp.seeds]))
                     for key, field in (("sae_fvu", "fvu"),
                                        ("best_single_latent_auc", "latent_fidelity"),
                                        ("sae_dead_latents", "n_dead"))},
                  "table": table},
        artifacts=artifacts,
        notes=(f"Synthetic activations (64-d, 256 atoms, 4 active), TopK SAE with "
               f"{cfg['n_latents']} latents trained on {cfg['pool']} unlabeled samples; one "
               f"world (atoms, SAE, labeled sets) per repeat, {len(_cells(cfg))} cells per "
               "repeat, every arm on the same splits. The quiver of baselines "
               f"({', '.join(cfg['baselines'])}; the paper's grids and folds) and the SAE "
               "probe each choose their candidate by validation AUC on the training labels "
               "(noisy ones in the noise regime, as a practitioner would); tied validation "
               "scores split the choice evenly. SAE probes (L1) reselect latents inside each "
               "fold. Label noise is on training labels only. The covariate shift swaps the "
               "context atoms (train on the first half, test on the second). Every repeat "
               "trains its own SAE, so the bounds cover SAE training too. Looks from the "
               "power figures of the quick-size calibration setting (seed key 98, cells of "
               "its own; see _calibration). Not the paper's "
               "LLM data."),
    )


def _plot_regimes(out_dir, units):
    fig, axes = new_figure(1, 4, figsize=(15, 3.6))
    series = (("quiver of baselines", "quiver", "k-"), ("SAE probe k=16", "sae_k16", "C1o-"),
              ("SAE probe k=128", "sae_k128", "C2s-"), ("oracle direction", _ORACLE, "C3:"))
    for ax, regime in zip(axes, _REGIMES):
        rows = _regime_units(units, regime)
        keys = sorted({(u["param"], u["n"]) for u in rows}, key=lambda t: (str(t[0]), t[1]))
        x = np.arange(len(keys))
        for label, arm, style in series:
            ax.plot(x, [np.mean([u[arm] for u in rows if (u["param"], u["n"]) == key])
                        for key in keys], style, label=label)
        ax.set_xticks(x, [f"{p}\nn={n}" if regime != "scarcity" else f"n={n}"
                          for p, n in keys], fontsize=6)
        ax.set_title(regime)
        ax.set_ylabel("test AUC")
    axes[0].legend(fontsize=7)
    return save_figure(fig, out_dir, "auc_by_regime")


def _quiver_units(units):
    return [u for u in units if u["regime"] in ("scarcity", "imbalance")]


@register_claim(
    SLUG, "quiver-no-gain",
    "Adding SAE probes to a quiver of baselines (choose the best validation AUC) does not "
    "raise the average test AUC in the scarcity and imbalance regimes.",
    paper_statement="Section 4: in data scarcity and class imbalance the quiver with SAE "
                    "probes has no higher average test AUC than the quiver without them, "
                    "although SAE probes are sometimes chosen.",
    check="per repeat, the mean over the scarcity and imbalance cells of (quiver with SAE "
          "probes - quiver without), the choice by validation AUC with ties split evenly; "
          "over sequential repeats its upper 95% bound < 0.01 (equivalence)",
    control="a quiver handicapped on purpose: nearest neighbours alone, with and without the "
            "SAE probes (the SAE probes have something to add there: its lower bound must "
            "exceed 0.01)",
    effect_of_interest=_NO_GAIN_EOI,
)
def _claim_quiver(scale, seed, out_dir):
    cfg = _CONFIG[scale]
    looks, key = cfg["quiver_looks"], cfg.get("quiver_key", ())

    # Batched: each look's repeats at once (spread over the cores), every arm from them.
    def arm(name):
        return lambda seeds: [float(np.mean([u[name] for u in
                                             _quiver_repeats(scale, tuple(seeds))[s]]))
                              for s in seeds]

    cmp = run_comparison({"quiver_with_sae": arm("quiver_with_sae"), "quiver": arm("quiver"),
                          "knn_with_sae": arm("knn_with_sae"), "knn_alone": arm(_HANDICAPPED)},
                         method="quiver_with_sae", baseline="quiver",
                         control_method="knn_with_sae", control_baseline="knn_alone",
                         seed=seed, looks=looks, key=key, batched=True,
                         effect_of_interest=_NO_GAIN_EOI,
                         alternative="less", margin=_NO_GAIN_EOI.value,
                         metric="mean test AUC over the scarcity and imbalance cells")
    rounds = [tuple(cmp.seeds[a:b]) for a, b in zip((0,) + tuple(looks), looks)
              if b <= len(cmp.seeds)]
    rows = [u for r in rounds for s in r for u in _quiver_repeats(scale, r)[s]]
    labels = sorted({f"n={u['n']}" if u["regime"] == "scarcity" else f"pos={u['param']:g}"
                     for u in rows})
    cell = [f"n={u['n']}" if u["regime"] == "scarcity" else f"pos={u['param']:g}"
            for u in rows]
    with_sae = np.array([np.mean([u["quiver_with_sae"] for u, c in zip(rows, cell) if c == lab])
                         for lab in labels])
    without = np.array([np.mean([u["quiver"] for u, c in zip(rows, cell) if c == lab])
                        for lab in labels])
    fig, ax = new_figure(figsize=(8, 3.6))
    x = np.arange(len(labels))
    ax.bar(x - 0.2, without, 0.4, label="quiver without SAE probes", color="0.5")
    ax.bar(x + 0.2, with_sae, 0.4, label="quiver with SAE probes", color="C1")
    ax.set_xticks(x, labels, fontsize=7, rotation=30)
    ax.set_ylim(max(0.0, min(with_sae.min(), without.min()) - 0.05), 1.0)
    ax.set_ylabel("test AUC")
    ax.legend(fontsize=8)
    artifact = save_figure(fig, out_dir, "quiver_with_without_sae")
    return cmp.claim_result(
        observed={"share_of_choices_going_to_sae_probes": float(np.mean(
                      [u["sae_share_in_quiver"] for u in rows])),
                  "units_with_saturated_validation": float(np.mean(
                      [u["validation_saturated"] for u in rows])),
                  "auc_with_sae": seed_summary([u["quiver_with_sae"] for u in rows]),
                  "auc_without_sae": seed_summary([u["quiver"] for u in rows]),
                  "seed_stream_key": list(key),
                  **({"first_design": dict(_QUIVER_FIRST_DESIGN,
                                           note="recorded from the first design's run at "
                                                "quick scale, seed 0; not rerun")}
                     if key else {}),
                  "cells": [{"cell": lab, "with_sae": round(float(a), 4),
                             "without_sae": round(float(b), 4)}
                            for lab, a, b in zip(labels, with_sae, without)]},
        artifacts=[artifact],
        notes=(f"Baselines: {', '.join(cfg['baselines'])} (the paper's grids and folds); SAE "
               f"arms: probes with k in {_SAE_KS}. Tied validation scores (often 1.000 in "
               "the easy cells) split the choice evenly instead of going to the first-listed "
               "candidate. The boosting and MLP baselines run at full scale only (CPU time). "
               "Each repeat fits the scarcity and imbalance cells of its own world "
               "(dictionary, SAE, labeled sets)." + (_QUIVER_DESIGN_NOTE if key else "")),
    )


_QUIVER_DESIGN_NOTE = (
    " Two designs: the first (looks 10, 20, 30 from the quick-size calibration setting's "
    "power figure) ended undecided at seed 0, +0.0070 [-0.0002, +0.0142] with SD 0.0177 over "
    "30 repeats, its control failing (first_design, recorded, not rerun). This run is the "
    "second: one look of 318 repeats on seed stream key 2, which the first never drew, the "
    "repeats an equivalence check needs for 80% power at the first design's mean and the "
    "90% upper limit of its SD (0.0215). Over both designs each false verdict has "
    "probability at most 0.05 + 0.05.")


#: The seed stream key of each calibration setting.
_CALIBRATION_KEYS = {"calibration": 99, "calibration_quick_size": 98}


def _calibration(seed=0, n_repeats=4, setting="calibration"):
    """Power figures of both claims on a calibration setting (no claim runs it).

    ``_CONFIG["calibration"]`` has its own pool, SAE, labeled-set sizes and cells, and its
    repeats come from seed stream key 99; ``_CONFIG["calibration_quick_size"]`` has the quick
    sizes but cells of its own, key 98. Returns, per claim, the per-repeat figures of the
    check and of its control, and the repeats a one-look t test needs: for the check, to
    put its upper bound below the margin from the calibration mean; for the control, to put
    its lower bound above the effect of interest.
    """
    from ._stats import claim_seeds, seeds_needed

    if setting not in _CALIBRATION_KEYS:
        raise ValueError(f"setting must be one of {sorted(_CALIBRATION_KEYS)}, got {setting!r}.")
    reps = [_repeat(setting, seed, s)
            for s in claim_seeds(seed, n_repeats, _CALIBRATION_KEYS[setting])]

    def quiver_mean(units, arm):
        return float(np.mean([u[arm] for u in _quiver_units(units)]))

    figures = {
        "no-consistent-gain": (
            [_balanced(u, "sae") - _balanced(u, "quiver") for u in reps],
            [_balanced(u, _ORACLE) - _balanced(u, "quiver") for u in reps]),
        "quiver-no-gain": (
            [quiver_mean(u, "quiver_with_sae") - quiver_mean(u, "quiver") for u in reps],
            [quiver_mean(u, "knn_with_sae") - quiver_mean(u, _HANDICAPPED) for u in reps]),
    }
    out = {}
    for name, (method, control) in figures.items():
        method, control = np.asarray(method), np.asarray(control)
        out[name] = {"method": method.round(4).tolist(), "control": control.round(4).tolist(),
                     "method_mean": float(method.mean()), "method_sd": float(method.std(ddof=1)),
                     "control_mean": float(control.mean()),
                     "control_sd": float(control.std(ddof=1)),
                     "seeds_needed_check": seeds_needed(method.std(ddof=1),
                                                        _NO_GAIN_EOI.value - method.mean()),
                     "seeds_needed_control": seeds_needed(control.std(ddof=1),
                                                          control.mean() - _NO_GAIN_EOI.value)}
    return out
