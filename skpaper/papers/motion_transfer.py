"""Large-displacement motion transfer with anytime interpolation (Wang & Li, ICML 2025).

The paper evaluates on VoxCeleb, TaiChiHD, TED-talks and MGif with external
keypoint detectors and a re-identification network; none of these is
available offline and only the abstract of the paper is public. The claims
therefore run on articulated sprite videos
(:func:`skpaper.datasets.make_sprite_videos`), whose ground-truth keypoints
make AKD exact up to the error of the external detector: a supervised
landmark network trained in-process on separate sprite identities
(:func:`skpaper.vision.train_landmark_detector`). AED uses colour-histogram
embeddings. Frame pairs of held-out videos are binned by displacement
(:func:`skpaper.datasets.make_sprite_pairs`: large means a translation above
40% of the width or a turn above 90 degrees).

Only the abstract of the paper is public: the anytime-interpolation model is
**reconstructed** from it (see :class:`skpaper.vision.KeypointMotionTransfer`),
and every claim says so in its JSON.

Per paired seed (each seed draws its own training videos, held-out pairs and
weights, shared by every arm) the claims train, with the same backbone (TPS
dense motion, soft-argmax keypoints, occlusion-aware generator), the same
optimizer steps and the same frame pairs per step (both directions, ``S -> D``
and ``D -> S``, for every model):

- the anytime-interpolation model (interpolation constraints on the selected
  interpolant, ``"downstream"`` selector over three candidates);
- independent direct-transfer models (FOMM/TPSMM objective; one at ``quick``,
  three at ``smoke`` and ``full``, whose best-of-3 per pair is reported).

Both claims judge the anytime output against the **same model's direct path**:
the same weights, hence the same parameters, steps, pairs, losses and training
compute, so that the comparison isolates the interpolation at inference. An
independent direct model costs about a third of the anytime model's training
and is reported, not judged. The controls remove the mechanism inside the same
model: the large-displacement control keeps the whole anytime pipeline (three
passes, the selector, the second transfer) but offers only the endpoint
candidates ``t in {0, 1}``; the small-displacement control asks the model to
move the source to itself. Looks and the small-displacement tolerance come from
a calibration setting that no claim runs (see ``_calibrate``).

Models are trained once per process, scale and seed and shared by the claims
(at ``quick``, in two worker processes of one torch thread each). ``smoke`` and
``quick`` train tiny models (32x32 frames at ``quick``) far below the paper's
budgets, so their verdicts speak for small models only; ``full`` (64x64
frames, ten keypoints, 100 epochs, and a further baseline given five times the
steps) is sized for a GPU.
"""

import time

import numpy as np

from ._comparison import EffectOfInterest, run_comparison
from ._plotting import new_figure, save_figure
from ._registry import register_claim, register_paper, shared_cache
from ._stats import paired_difference

SLUG = "motion-transfer"

register_paper(SLUG, "Large Displacement Motion Transfer with Unsupervised Anytime Interpolation",
               module="skpaper.vision", quick_cost_s=1190)

_CONFIG = {
    # size: frame side; videos/frames: training set; test_videos, pairs: held-out pairs;
    # epochs x (videos / batch) optimizer steps per model; detector: landmark network;
    # n_direct: independent direct models per seed (reported; with three, the best-of-3
    # ensemble is reported too); looks: sequential paired seeds (quick: from the power
    # figures of the "calibration" setting below, see _calibrate and _CALIBRATION_FIGURES).
    "smoke": dict(size=16, videos=8, frames=6, test_videos=4, pairs=24, keypoints=5, width=4,
                  batch=8, epochs=2, features=None, detector_videos=40, detector_steps=20,
                  n_direct=3, n_jobs=1, looks=(2,)),
    # quick: 96 held-out videos and 1,600 pairs (800 large) per seed, four times the earlier
    # 24 / 400: on the calibration setting about two thirds of the per-seed variance of the judged
    # large-pair difference was evaluation noise, which held-out pairs (inference only, about
    # 9 s per 400 pairs on one core) buy down; training noise is not. One look of 10 seeds:
    # calibration SD 0.077 px at this evaluation size (10 seeds), one-sided 90% upper limit
    # 0.113, seeds_needed(0.113, gap 0.1 = |effect of interest|, alpha 0.05) = 10; two looks
    # (5, 10) would need 13 at their last level 0.025 (see _CALIBRATION_FIGURES).
    "quick": dict(size=32, videos=48, frames=12, test_videos=96, pairs=1600, keypoints=5,
                  width=8, batch=8, epochs=30, features="random", detector_videos=300,
                  detector_steps=250, n_direct=1, n_jobs=2, looks=(10,)),
    "full": dict(size=64, videos=512, frames=16, test_videos=64, pairs=1000, keypoints=10,
                 width=32, batch=32, epochs=100, features="autoencoder", detector_videos=2000,
                 detector_steps=4000, compute_factor=5, n_direct=3, n_jobs=1, looks=(5, 10)),
    # Calibration only (no claim runs it): a different configuration (40 training videos,
    # 24 epochs) on its own seed key, for the power figures that set the quick looks and
    # the small-displacement tolerance. Its held-out size matches quick's (96 videos,
    # 1,600 pairs per seed).
    "calibration": dict(size=32, videos=40, frames=12, test_videos=96, pairs=1600,
                        keypoints=5, width=8, batch=8, epochs=24, features="random",
                        detector_videos=300, detector_steps=250, n_direct=1, n_jobs=2,
                        looks=(10,)),
}

#: Power figures of the calibration setting (base seed 7, seed key 9041, 40 training
#: videos, 24 epochs; no claim runs it): 10 paired seeds, each trained once and evaluated
#: on four independent held-out sets of 24 videos and 400 pairs (the earlier size), pooled
#: to the 96 videos and 1,600 pairs that quick now draws at once. ``sd`` is over seeds of
#: the pooled figure, ``sd_one_set`` the root mean over the four sets of the SD over seeds
#: at the earlier size, ``eval_sd_one_set`` the within-seed SD between sets (evaluation
#: noise), ``ucl90`` the one-sided 90% upper confidence limit sd*sqrt(9/chi2.ppf(0.10, 9)).
#: Seconds: training 407 s for the 10 seeds in two workers and about 9 s per 400 pairs of
#: evaluation on one core (load 1.3-1.6; 20-27 s at load 3.7-4.1).
_CALIBRATION_FIGURES = {
    "large:anytime-anytime_endpoints": dict(
        n=10, mean=0.0118, sd=0.0768, sd_one_set=0.108, eval_sd_one_set=0.087, ucl90=0.1128),
    "small:anytime-anytime_endpoints": dict(n=10, mean=-0.0084, sd=0.0195, ucl90=0.0287),
    "small:anytime-anytime_model_direct": dict(n=10, mean=0.1191, sd=0.0765, ucl90=0.1124),
    "small:anytime_to_source-anytime_model_direct": dict(n=10, mean=0.7027, sd=0.1733),
    "small:no_transfer-anytime_model_direct": dict(n=10, mean=0.4684, sd=0.2084),
}

_TIMES = (0.25, 0.5, 0.75)
_LR = 2e-3
#: Candidate times of the mechanism-removed control: the endpoints only. The anytime
#: model runs its whole pipeline (candidates, downstream selector, second transfer to the
#: driving frame) but no candidate holds an intermediate pose: t = 0 regenerates the
#: source, t = 1 is the direct output, refined by the second pass.
_ENDPOINTS = (0.0, 1.0)
#: The anytime model's own direct path: the same weights, hence the same parameters,
#: steps, pairs, losses and training compute; only the inference differs (one transfer
#: S -> D instead of the interpolant chain). The baseline of the small-displacement claim;
#: reported by the large-displacement claim, which judges the endpoint-only pipeline.
#: Independent direct models (other weights, a third of the anytime model's training
#: compute) are reported, not judged.
_MATCHED = "anytime_model_direct"
_LARGE_EOI = EffectOfInterest(
    -0.1, "ours", "a tenth of a pixel of AKD at 32x32 frames over the same pipeline without "
    "intermediate poses: the smallest motion gain worth the interpolation")
#: "No harm" on small displacements, in pixels of AKD against the same model's direct path:
#: a quarter of the AKD gain of direct transfer over copying the source, measured on the
#: earlier 4-seed calibration (copying the source: +0.59 px there, a quarter 0.148, rounded
#: to 0.15). Kept as fixed before the 10-seed re-run, which gives +0.47 px (a quarter 0.12;
#: see _CALIBRATION_FIGURES).
_SMALL_TOLERANCE = 0.15
_SMALL_EOI = EffectOfInterest(
    _SMALL_TOLERANCE, "ours", "no harm: the anytime output may be at most this many pixels "
    "of AKD worse than the same model's direct path, about a quarter of what direct transfer "
    "gains over copying the source on the calibration setting (a loss beyond that is harm a "
    "user would see)")
_LOOKS_NOTE = ("Looks from the calibration setting ('calibration' in _CONFIG: 40 training "
               "videos, 24 epochs, base seed 7 with seed key 9041; no claim runs it), 10 "
               "seeds each evaluated on 1,600 held-out pairs of 96 videos (four sets of 400 "
               "pairs of 24 videos, pooled). Large pairs, anytime - endpoint pipeline: mean "
               "+0.012 px, SD 0.077 (0.108 with a single set of 400 pairs, of which 0.087 "
               "is evaluation noise), one-sided 90% upper limit 0.113, so 10 seeds decide at "
               "the 0.1 px gap in one look (two looks 5 and 10 would need 13). Small pairs: "
               "anytime - direct path +0.119 (SD 0.077, upper limit 0.112), 6 seeds at the "
               "0.15 px tolerance; anytime - endpoint pipeline -0.008 (SD 0.020); the "
               "source-to-itself control +0.70 (SD 0.17). The tolerance, a quarter of "
               "copying the source's +0.59 px on the earlier 4-seed calibration, is kept; the "
               "10-seed re-run gives +0.47 px for copying the source.")
_RECONSTRUCTED = ("Reconstructed from the abstract: the paper's text, equations and tables are "
                  "not public; interpolation form, selector, losses and weights are ours "
                  "(see KeypointMotionTransfer's Notes).")


@shared_cache(maxsize=32)
def _data(scale, seed):
    from skpaper.datasets import make_sprite_pairs, make_sprite_videos

    cfg = _CONFIG[scale]
    seeds = np.random.RandomState(seed).randint(2**31 - 1, size=4)
    train = make_sprite_videos(cfg["videos"], cfg["frames"], cfg["size"], random_state=seeds[0])
    test = make_sprite_videos(cfg["test_videos"], cfg["frames"], cfg["size"],
                              random_state=seeds[1])
    pairs = make_sprite_pairs(test, cfg["pairs"], random_state=seeds[2])
    return train, test, pairs, int(seeds[3])


def _train_detector(scale, seed):
    """The external landmark detector, trained on sprite identities unseen elsewhere."""
    from skpaper.datasets import make_sprite_videos
    from skpaper.vision import train_landmark_detector

    cfg = _CONFIG[scale]
    size = cfg["size"]
    extra = make_sprite_videos(cfg["detector_videos"], 3, size, random_state=seed + 7919)
    return train_landmark_detector(
        extra.videos.reshape(-1, size, size, 3), extra.keypoints.reshape(-1, 5, 2),
        extra.visibility.reshape(-1, 5), n_steps=cfg["detector_steps"], width=8, lr=5e-3,
        random_state=seed, device="auto")


def _model_params(scale, seed, name):
    """Estimator parameters of arm ``name``.

    The arms are ``anytime``, ``direct<k>`` and ``direct_matched_compute``.

    Every arm trains on both directions of each frame pair, so that all see the
    same pairs per step; direct models differ only in their initial weights.
    """
    cfg = _CONFIG[scale]
    params = dict(n_keypoints=cfg["keypoints"], backbone="tps", width=cfg["width"],
                  feature_extractor=cfg["features"], batch_size=cfg["batch"], lr=_LR,
                  max_epochs=cfg["epochs"], random_state=_data(scale, seed)[3], device="auto",
                  interpolation=None, bidirectional=True)
    if name == "anytime":
        params.update(interpolation=_TIMES, selector="downstream")
    elif name == "direct_matched_compute":
        # A baseline given about the anytime model's compute instead of its step count.
        params.update(max_epochs=cfg["epochs"] * cfg["compute_factor"])
    else:
        params["random_state"] += int(name[len("direct"):])
    return params


def _train_job(job, scale, threads):
    """Train one model (or the detector); jobs run in two workers at ``quick`` scale
    (fewer when the run's share of the cores is smaller, see ``available_cores``).

    ``job`` is ``(seed, name)``. A worker process trains with the claim's thread
    count (``threads``), as the claim's own process would.
    """
    from ._environment import torch_threads

    seed, name = job
    start = time.perf_counter()
    with torch_threads(threads):
        if name == "detector":
            fitted = _train_detector(scale, seed)
        else:
            from skpaper.vision import KeypointMotionTransfer

            train = _data(scale, seed)[0]
            fitted = KeypointMotionTransfer(**_model_params(scale, seed, name)).fit(
                train.videos)
    return job, fitted, time.perf_counter() - start


@shared_cache(maxsize=4)
def _detector(scale, seed):
    """The external landmark detector of a run (one per base seed)."""
    return _train_detector(scale, seed)


@shared_cache(maxsize=16)
def _trained(scale, seed, seeds):
    """Every model of the claim seeds ``seeds`` (a tuple: one look's new seeds).

    Returns ``{claim_seed: {arm: model}}`` and ``{claim_seed: {arm: seconds}}``.
    """
    import torch

    from skpaper.utils import parallel_map

    from ._environment import available_cores

    cfg = _CONFIG[scale]
    names = ["anytime"] + [f"direct{k}" for k in range(cfg["n_direct"])]
    if cfg.get("compute_factor"):
        names.insert(0, "direct_matched_compute")
    # Longest jobs first, so that two workers finish together.
    jobs = [(s, n) for n in names for s in seeds]
    # At most the cores this run may use: under ``skpaper reproduce --jobs 2`` on two
    # cores the models train one after another, beside the other paper's worker.
    n_jobs = min(cfg["n_jobs"], available_cores())
    done = parallel_map(_train_job, jobs, n_jobs=n_jobs, scale=scale,
                        threads=torch.get_num_threads())
    models = {s: {} for s in seeds}
    seconds = {s: {} for s in seeds}
    for (s, name), fitted, sec in done:
        models[s][name] = fitted
        seconds[s][name] = sec
    return models, seconds


def _per_pair(outputs, detector, kp_true, vis_true, target):
    """Per-pair AKD (NaN when nothing is visible), L1, missed keypoints and AED."""
    from skpaper.vision import color_histogram_embedding

    kp, proba = detector.predict(outputs)
    dist = np.linalg.norm(kp - kp_true, axis=-1)
    counted = vis_true.sum(axis=1)
    akd = np.where(counted > 0, np.where(vis_true, dist, 0.0).sum(axis=1)
                   / np.maximum(counted, 1), np.nan)
    l1 = np.abs(outputs - target).mean(axis=(1, 2, 3))
    missed = (vis_true & (proba < 0.5)).sum(axis=1)
    emb_out, emb_true = color_histogram_embedding(outputs), color_histogram_embedding(target)
    aed = np.linalg.norm(emb_out - emb_true, axis=1)
    return {"akd": akd, "l1": l1, "missed": missed, "visible": counted, "aed": aed}


def _own_keypoint_error(model, outputs, driving):
    """The downstream selector's score: the model's own keypoints of output vs driving."""
    return np.linalg.norm(model.detect_keypoints(outputs) - model.detect_keypoints(driving),
                          axis=-1).mean(axis=-1)


def _evaluate_seed(scale, seed, claim_seed, detector, models):
    """Metrics per arm and pair on one seed's held-out pairs."""
    _, test, pairs, _ = _data(scale, claim_seed)
    source = test.videos[pairs.video, pairs.source]
    driving = test.videos[pairs.video, pairs.driving]
    kp_true = test.keypoints[pairs.video, pairs.driving]
    vis_true = test.visibility[pairs.video, pairs.driving]
    anytime = models["anytime"].anytime_transfer(source, driving)
    n_direct = _CONFIG[scale]["n_direct"]
    direct = [models[f"direct{k}"].transform(source, driving, path="direct")
              for k in range(n_direct)]
    outputs = {
        "direct": direct[0],
        "anytime": anytime.output,
        "anytime_model_direct": anytime.direct,
        "anytime_endpoints": _endpoint_transfer(models["anytime"], source, driving),
        "no_transfer": source,
    }
    pick = np.zeros(len(source), int)
    if n_direct > 1:
        scores = np.stack([_own_keypoint_error(models[f"direct{k}"], out, driving)
                           for k, out in enumerate(direct)], axis=1)
        pick = scores.argmin(axis=1)
        outputs[f"direct_best_of_{n_direct}"] = np.stack(direct, axis=1)[
            np.arange(len(pick)), pick]
    if "direct_matched_compute" in models:
        outputs["direct_matched_compute"] = models["direct_matched_compute"].transform(
            source, driving, path="direct")
    # Transfer removed inside the anytime model: asked to move the source to itself.
    outputs["anytime_to_source"] = models["anytime"].anytime_transfer(source, source).output
    metrics = {name: _per_pair(out, detector, kp_true, vis_true, driving)
               for name, out in outputs.items()}
    floor = _per_pair(driving, detector, kp_true, vis_true, driving)
    return dict(pairs=pairs, metrics=metrics, floor=floor, t=anytime.t, source=source,
                driving=driving, anytime=anytime, outputs=outputs,
                best_of_3_pick=np.bincount(pick, minlength=n_direct).tolist())


def _endpoint_transfer(model, source, driving):
    """The anytime pipeline of ``model`` with the candidate times :data:`_ENDPOINTS`.

    The interpolation is removed and everything else kept: the same weights,
    the downstream selector and the second transfer to the driving frame.
    """
    import copy

    ablated = copy.copy(model)  # shares the trained module; only the times change
    ablated.interpolation_ = np.asarray(_ENDPOINTS, dtype=np.float64)
    return ablated.anytime_transfer(source, driving).output


@shared_cache(maxsize=16)
def _evaluation(scale, seed, seeds):
    """Per claim seed of ``seeds`` (a tuple): metrics per arm and pair (shared by the claims)."""
    detector = _detector(scale, seed)
    models, seconds = _trained(scale, seed, seeds)
    out = {}
    for k, s in enumerate(models):
        ev = _evaluate_seed(scale, seed, s, detector, models[s])
        if k:  # images are kept for the first seed only (the example grid); metrics for all
            ev = {key: value for key, value in ev.items() if key not in _IMAGES}
        out[s] = {**ev, "seconds": seconds[s], "models": models[s]}
    return out


#: Entries of an evaluation that hold images (1,600 pairs per arm at quick).
_IMAGES = ("source", "driving", "anytime", "outputs")


def _evaluations(scale, seed, comparison):
    """The evaluations of every seed the comparison used, look by look."""
    evs, done = {}, 0
    for look in comparison.looks:
        chunk = tuple(comparison.seeds[done:look])
        if not chunk:
            break
        evs.update(_evaluation(scale, seed, chunk))
        done = look
    return evs


def _bin_mean(ev, name, bin_name, metric="akd"):
    return float(np.nanmean(ev["metrics"][name][metric][_mask(ev, bin_name)]))


def _comparison(scale, seed, names, figure, **kwargs):
    """Arms ``names`` with per-seed figures ``figure(ev, name)``, on sequential paired seeds;
    every look's new seeds are trained together (two workers at quick)."""
    def arm(name):
        def run(seeds):
            evs = _evaluation(scale, seed, tuple(seeds))
            return [figure(evs[s], name) for s in seeds]
        return run

    return run_comparison({name: arm(name) for name in names}, seed=seed,
                          looks=_CONFIG[scale]["looks"], batched=True, **kwargs)


def _bin_summary(ev, mask):
    out = {}
    for name, m in {**ev["metrics"], "real_driving": ev["floor"]}.items():
        out[name] = {
            "akd": float(np.nanmean(m["akd"][mask])) if mask.any() else float("nan"),
            "l1": float(m["l1"][mask].mean()) if mask.any() else float("nan"),
            "mkr": float(m["missed"][mask].sum() / max(1, m["visible"][mask].sum())),
            "aed": float(m["aed"][mask].mean()) if mask.any() else float("nan"),
        }
    return out


def _t_distribution(t, mask):
    return {f"t={tt:g}": int(np.sum(np.isclose(t[mask], tt))) for tt in _TIMES}


_LABELS = {"direct": "direct\n(baseline)", "direct_best_of_3": "direct,\nbest of 3",
           "direct_matched_compute": "direct,\nsame compute",
           "anytime_model_direct": "anytime model,\ndirect path",
           "anytime_endpoints": "anytime model,\nt in {0, 1}",
           "anytime": "anytime\ninterpolation"}
_COLOURS = {"direct": "#888888", "direct_best_of_3": "#666666",
            "direct_matched_compute": "#bbbbbb", "anytime_model_direct": "#9ecae1",
            "anytime_endpoints": "#c6dbef", "anytime": "#3182bd"}
_BASELINES = ("direct", "anytime_model_direct", "direct_best_of_3",
              "direct_matched_compute", "anytime_endpoints")


def _bar_plot(ax, summary, metric, title):
    names = [n for n in _LABELS if n in summary]
    ax.bar(range(len(names)), [summary[n][metric] for n in names],
           color=[_COLOURS[n] for n in names])
    ax.axhline(summary["real_driving"][metric], color="k", ls="--", lw=1,
               label="detector on real frames" if metric == "akd" else None)
    ax.set_xticks(range(len(names)), [_LABELS[n] for n in names], fontsize=7)
    ax.set_title(title, fontsize=9)
    if metric == "akd":
        ax.set_ylabel("AKD (pixels)")
        ax.legend(fontsize=7)


def _mask(ev, bin_name):
    large = np.asarray(ev["pairs"].large, bool)
    return large if bin_name == "large" else ~large


def _per_seed_means(evs, bin_name, metric="akd"):
    """``{arm: [mean over the bin's pairs, one per seed]}``."""
    out = {}
    for ev in evs.values():
        mask = _mask(ev, bin_name)
        for name, m in ev["metrics"].items():
            out.setdefault(name, []).append(float(np.nanmean(m[metric][mask])))
    return out


def _mean_summary(evs, bin_name):
    """Bin summary averaged over seeds (for plots and the JSON)."""
    per_seed = [_bin_summary(ev, _mask(ev, bin_name)) for ev in evs.values()]
    return {name: {metric: float(np.mean([p[name][metric] for p in per_seed]))
                   for metric in per_seed[0][name]} for name in per_seed[0]}


def _observed(evs, bin_name):
    summary = _mean_summary(evs, bin_name)
    observed = {"n_seeds": len(evs),
                f"n_pairs_{bin_name}_per_seed": [int(_mask(ev, bin_name).sum())
                                                 for ev in evs.values()]}
    for name in summary:
        for metric, value in summary[name].items():
            observed[f"{bin_name}_{metric}_{name}"] = round(value, 4)
    t_counts = {}
    for ev in evs.values():
        for key, count in _t_distribution(ev["t"], _mask(ev, bin_name)).items():
            t_counts[key] = t_counts.get(key, 0) + count
    observed[f"{bin_name}_selected_t"] = t_counts
    if len(next(iter(evs.values()))["best_of_3_pick"]) > 1:
        observed["best_of_3_picks_per_seed"] = [ev["best_of_3_pick"] for ev in evs.values()]
    return observed, summary


#: Base seed and seed key of the calibration setting (no claim uses either).
_CALIBRATION_SEED, _CALIBRATION_KEY = 7, 9041


def _calibrate(n_seeds=10):
    """Power figures of the ``"calibration"`` setting (run by hand, not by a claim).

    Returns, per paired AKD difference (pixels) the claims judge or report,
    the per-seed values, their standard deviation, its one-sided 90% upper
    limit (:func:`~skpaper.papers._stats.sd_upper_limit`) and
    :func:`~skpaper.papers._stats.seeds_needed` at that limit, the judged claim's gap
    and the level of the last quick look.
    The quick looks were set from this on seeds ``claim_seeds(7, 10, 9041)``
    of a configuration no claim runs (40 videos, 24 epochs; the figures are in
    :data:`_CALIBRATION_FIGURES`).
    """
    from ._stats import claim_seeds, sd_upper_limit, seeds_needed, spending_schedule

    seeds = tuple(claim_seeds(_CALIBRATION_SEED, n_seeds, _CALIBRATION_KEY))
    evs = _evaluation("calibration", _CALIBRATION_SEED, seeds)
    level = spending_schedule(_CONFIG["quick"]["looks"])[-1]
    # (bin, arm, baseline, gap for seeds_needed): every paired difference the claims use
    rows = [("large", "anytime", "anytime_endpoints", abs(_LARGE_EOI.value)),
            ("large", "anytime", _MATCHED, abs(_LARGE_EOI.value)),
            ("large", "anytime_endpoints", _MATCHED, None),
            ("large", "direct", _MATCHED, None),
            ("small", "anytime", "anytime_endpoints", abs(_LARGE_EOI.value)),
            ("small", "anytime", _MATCHED, _SMALL_TOLERANCE),
            ("small", "anytime_to_source", _MATCHED, None),
            ("small", "no_transfer", _MATCHED, None),
            ("small", "direct", _MATCHED, None)]
    out = {}
    for bin_name, name, base, gap in rows:
        values = [_bin_mean(ev, name, bin_name) - _bin_mean(ev, base, bin_name)
                  for ev in evs.values()]
        sd = float(np.std(values, ddof=1))
        ucl = sd_upper_limit(sd, len(values))
        out[f"{bin_name}:{name}-{base}"] = dict(
            values=values, mean=float(np.mean(values)), sd=sd, ucl90=ucl,
            seeds_needed=None if gap is None else seeds_needed(ucl, gap, alpha=level))
    out["seconds"] = {s: ev["seconds"] for s, ev in evs.items()}
    return out


def _arms(scale, evs):
    ev = next(iter(evs.values()))
    cfg = _CONFIG[scale]
    out = {}
    for name, model in ev["models"].items():
        out[name] = {"parameters": int(sum(p.numel() for p in model.module_.parameters())),
                     "train_steps": int(model.n_steps_),
                     "train_pairs_per_step": int(model.batch_size) * (
                         2 if model.bidirectional else 1),
                     "train_videos": cfg["videos"], "frames_per_video": cfg["frames"],
                     "train_seconds_per_seed": [round(e["seconds"][name], 1)
                                                for e in evs.values()]}
    return out


def _budget_note(scale, evs):
    cfg = _CONFIG[scale]
    sec = {name: np.mean([e["seconds"][name] for e in evs.values()])
           for name in next(iter(evs.values()))["seconds"]}
    n_direct = cfg["n_direct"]
    direct = sum(sec[f"direct{k}"] for k in range(n_direct))
    note = (f"{len(evs)} paired seeds; per seed {cfg['videos']} training videos of "
            f"{cfg['frames']} frames at {cfg['size']}x{cfg['size']}, {cfg['keypoints']} "
            f"keypoints, width {cfg['width']}, {cfg['epochs']} epochs for every model (same "
            f"steps and pairs, both directions). Training time per seed: anytime "
            f"{sec['anytime']:.0f} s, the {n_direct} direct model"
            f"{'s together' if n_direct > 1 else ''} {direct:.0f} s.")
    if "direct_matched_compute" in sec:
        note += (f" 'direct_matched_compute' is a baseline trained {cfg['compute_factor']}x "
                 f"longer ({sec['direct_matched_compute']:.0f} s).")
    return note + (" The external detector's error on the real driving frames is the dashed "
                   "line ('real_driving' entries). MKR and AED (colour histograms) are reported "
                   "but not judged; two generation passes blur, which AED and L1 see. "
                   + _RECONSTRUCTED)


def _gains(akd, bin_name):
    """Paired AKD changes (anytime - baseline) over seeds, against each baseline present."""
    return {f"{bin_name}_akd_change_vs_{b}": paired_difference(akd["anytime"], akd[b],
                                                                alternative="less")
            for b in _BASELINES if b in akd}


def _change(ev, name, bin_name):
    """AKD of ``name`` minus that of the same model's direct path, mean over a bin's pairs."""
    return _bin_mean(ev, name, bin_name) - _bin_mean(ev, _MATCHED, bin_name)


# ----------------------------------------------------------------------------------- claim 1
@register_claim(
    SLUG, "large-displacement-gain",
    "On large-displacement pairs, transfer through the selected anytime interpolant lowers "
    "the keypoint distance (AKD) compared with the same model and pipeline without "
    "intermediate poses (same weights, parameters, steps, pairs and training compute; the "
    "same selector and second transfer, with the endpoint candidates t in {0, 1}).",
    paper_statement="Abstract (only the abstract is public; the method is reconstructed from "
                    "it): anytime interpolation with a selector makes the interpolated-to-"
                    "driving transfer easier than source-to-driving and gives 'significant "
                    "improvements in motion-related metrics' (AKD/MKR) over state-of-the-art "
                    "unsupervised methods.",
    check="per seed, on large-displacement pairs (translation > 40% of the width or a turn "
          "> 90 degrees), the mean AKD change anytime output - the same model's anytime "
          "pipeline with the endpoint candidates t in {0, 1} only (t = 0 regenerates the "
          "source, t = 1 is the direct output; both chained to the driving frame by the same "
          "selector); over sequential paired seeds its upper 95% bound < 0. The changes "
          "against the same model's direct path and against an independent direct model are "
          "reported",
    control="large displacement removed: the same difference on the small-displacement "
            "pairs, where there is no large move to split; it must not reach the effect of "
            "interest (lower bound > -0.1 px)",
    effect_of_interest=_LARGE_EOI)
def _claim_large(scale, seed, out_dir):
    def figure(ev, bin_name):
        return _bin_mean(ev, "anytime", bin_name) - _bin_mean(ev, "anytime_endpoints", bin_name)

    cmp = _comparison(scale, seed, ("large", "small"), figure,
                      method="large", baseline=None, control_method="small",
                      effect_of_interest=_LARGE_EOI, alternative="less",
                      metric="AKD change vs the endpoint-only pipeline (pixels)")
    evs = _evaluations(scale, seed, cmp)
    observed, summary = _observed(evs, "large")
    akd = _per_seed_means(evs, "large")
    observed.update({k: v.to_dict() for k, v in _gains(akd, "large").items()})
    l1 = _per_seed_means(evs, "large", "l1")
    observed["large_l1_change_vs_anytime_model_direct"] = paired_difference(
        l1["anytime"], l1[_MATCHED], alternative="less").to_dict()
    observed["large_akd_endpoints_change_vs_anytime_model_direct"] = paired_difference(
        akd["anytime_endpoints"], akd[_MATCHED], alternative="less").to_dict()
    small = _per_seed_means(evs, "small")
    observed.update({k: v.to_dict() for k, v in _gains(small, "small").items()})
    observed["method"] = "reconstructed from the abstract"

    fig, axes = new_figure(1, 2, figsize=(8.5, 3.2))
    _bar_plot(axes[0], summary, "akd", "large displacement: AKD (mean over seeds)")
    _bar_plot(axes[1], summary, "l1", "large displacement: L1")
    axes[1].set_ylabel("L1")
    bars = save_figure(fig, out_dir, "large_displacement_metrics")
    first = next(iter(evs.values()))
    grid = _transfer_grid(first, _mask(first, "large"), out_dir)
    result = cmp.claim_result(
        observed=observed, artifacts=[bars, grid],
        notes=(_budget_note(scale, evs) + " " + _LOOKS_NOTE + " The judged baseline is the "
               "anytime model itself with the intermediate poses removed: matched in "
               "parameters, steps, pairs, losses and training compute by construction, and "
               "in inference up to one candidate fewer (two instead of three, each chained "
               "to the driving frame by the same selector). The change against the same "
               "model's direct path (one transfer, no second pass) is reported: a gain there "
               "that the endpoint pipeline shares comes from the second pass, not from the "
               "interpolation. L1 is reported, "
               "not judged (the paper claims motion metrics). The paper's tables are not "
               "public; only the direction of its claim is checked."))
    result.arms = {**_arms(scale, evs), "comparison": result.arms}
    return result


# ----------------------------------------------------------------------------------- claim 2
@register_claim(
    SLUG, "small-displacement-no-harm",
    "On small-displacement pairs, anytime interpolation does not hurt: its AKD is at most a "
    "small tolerance above that of the same model's direct path.",
    paper_statement="Not stated in the abstract (only the abstract is public; the method is "
                    "reconstructed from it): the method targets large displacements, so on "
                    "small ones it should at least not harm the motion metrics.",
    check="per seed, on small-displacement pairs, the mean AKD change anytime output - the "
          "same model's direct path (pixels); over sequential paired seeds its upper 95% bound "
          "< the tolerance (ours, from the calibration setting)",
    control="transfer removed inside the anytime model: asked to move the source to itself "
            "(driving = source); its AKD change must exceed the tolerance (lower bound > "
            "tolerance)",
    effect_of_interest=_SMALL_EOI)
def _claim_small(scale, seed, out_dir):
    cmp = _comparison(scale, seed, ("anytime", "anytime_to_source"),
                      lambda ev, name: _change(ev, name, "small"),
                      method="anytime", baseline=None, control_method="anytime_to_source",
                      effect_of_interest=_SMALL_EOI, alternative="less",
                      margin=_SMALL_TOLERANCE,
                      metric="AKD change vs the same model's direct path (pixels)")
    evs = _evaluations(scale, seed, cmp)
    observed, summary = _observed(evs, "small")
    akd = _per_seed_means(evs, "small")
    observed.update({k: v.to_dict() for k, v in _gains(akd, "small").items()})
    observed.update({"small_akd_source_copied_vs_anytime_model_direct": paired_difference(
                         akd["no_transfer"], akd[_MATCHED], alternative="greater").to_dict(),
                     "method": "reconstructed from the abstract"})

    fig, axes = new_figure(1, 2, figsize=(8.5, 3.2))
    _bar_plot(axes[0], summary, "akd", "small displacement: AKD (mean over seeds)")
    _bar_plot(axes[1], summary, "l1", "small displacement: L1")
    axes[1].set_ylabel("L1")
    bars = save_figure(fig, out_dir, "small_displacement_metrics")
    result = cmp.claim_result(observed=observed, artifacts=[bars],
                              notes=_budget_note(scale, evs) + " " + _LOOKS_NOTE)
    result.arms = {**_arms(scale, evs), "comparison": result.arms}
    return result


def _transfer_grid(ev, mask, out_dir, n_rows=4):
    """Source, driving, interpolants, anytime output and direct output for large pairs."""
    candidates = np.flatnonzero(mask)
    # One pair per video, so that the rows show different sprites.
    _, first = np.unique(ev["pairs"].video[candidates], return_index=True)
    idx = candidates[np.sort(first)][:n_rows]
    any_t = ev["anytime"]
    cols = ["source", "driving", *[f"I(t={t:g})" for t in any_t.interpolation],
            "anytime", "direct"]
    fig, axes = new_figure(max(1, len(idx)), len(cols), figsize=(1.3 * len(cols),
                                                                  1.35 * max(1, len(idx))),
                           squeeze=False)
    for r, i in enumerate(idx):
        row = [ev["source"][i], ev["driving"][i], *any_t.candidates[i], any_t.output[i],
               ev["outputs"]["direct"][i]]
        best = 2 + int(np.argmin(any_t.scores[i]))
        for c, image in enumerate(row):
            ax = axes[r, c]
            ax.imshow(np.clip(image, 0, 1), interpolation="nearest")
            ax.set_xticks([])
            ax.set_yticks([])
            if c == best:
                for spine in ax.spines.values():
                    spine.set_edgecolor("red")
                    spine.set_linewidth(2)
            if r == 0:
                ax.set_title(cols[c], fontsize=7)
    return save_figure(fig, out_dir, "anytime_transfer_examples")
