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

Two models with the same backbone (TPS dense motion, soft-argmax keypoints,
occlusion-aware generator) are trained for the same number of optimizer steps
on the same frame pairs: a direct-transfer baseline (FOMM/TPSMM objective) and
the anytime-interpolation model (bidirectional, interpolation constraints on
the selected interpolant). The anytime model's own direct path is reported as
an ablation (same weights, no interpolation at inference). The models are
trained once per process, scale and seed and shared by the claims (at
``quick``, in two worker processes of one torch thread each; the anytime
model, whose step costs three to four direct steps, is the longest job).
``smoke`` and ``quick`` train tiny models (32x32 frames at ``quick``) far
below the paper's budgets, so their verdicts speak for small models only;
``full`` (64x64 frames, ten keypoints, 100 epochs, and a baseline given five
times the steps to match the anytime model's compute) is sized for a GPU.
"""

import time
from functools import lru_cache

import numpy as np

from ._plotting import new_figure, save_figure
from ._registry import ClaimResult, register_claim, register_paper

SLUG = "motion-transfer"

register_paper(SLUG, "Large Displacement Motion Transfer with Unsupervised Anytime Interpolation",
               module="skpaper.vision")

_CONFIG = {
    # size: frame side; videos/frames: training set; test_videos, pairs: held-out pairs;
    # epochs x (videos / batch) optimizer steps per model; detector: landmark network.
    "smoke": dict(size=16, videos=8, frames=6, test_videos=4, pairs=24, keypoints=5, width=4,
                  batch=8, epochs=2, features=None, detector_videos=40, detector_steps=20,
                  n_jobs=1),
    "quick": dict(size=32, videos=48, frames=12, test_videos=16, pairs=200, keypoints=5,
                  width=8, batch=8, epochs=30, features="random", detector_videos=300,
                  detector_steps=250, n_jobs=2),
    "full": dict(size=64, videos=512, frames=16, test_videos=64, pairs=1000, keypoints=10,
                 width=32, batch=32, epochs=100, features="autoencoder", detector_videos=2000,
                 detector_steps=4000, compute_factor=5, n_jobs=1),
}

_TIMES = (0.25, 0.5, 0.75)
_LR = 2e-3


@lru_cache(maxsize=4)
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
    cfg = _CONFIG[scale]
    params = dict(n_keypoints=cfg["keypoints"], backbone="tps", width=cfg["width"],
                  feature_extractor=cfg["features"], batch_size=cfg["batch"], lr=_LR,
                  max_epochs=cfg["epochs"], random_state=_data(scale, seed)[3], device="auto",
                  interpolation=None, bidirectional=False)
    if name == "anytime":
        params.update(interpolation=_TIMES, bidirectional=True, selector="downstream")
    elif name == "direct_matched_compute":
        # A baseline given about the anytime model's compute instead of its step count.
        params.update(max_epochs=cfg["epochs"] * cfg["compute_factor"])
    return params


def _train_job(job, scale, seed, threads):
    """Train one model (or the detector); jobs run in two workers at ``quick`` scale.

    A worker process trains with the claim's thread count (``threads``), as the
    claim's own process would.
    """
    from ._environment import torch_threads

    start = time.perf_counter()
    with torch_threads(threads):
        if job == "detector":
            fitted = _train_detector(scale, seed)
        else:
            from skpaper.vision import KeypointMotionTransfer

            train = _data(scale, seed)[0]
            fitted = KeypointMotionTransfer(**_model_params(scale, seed, job)).fit(train.videos)
    return job, fitted, time.perf_counter() - start


@lru_cache(maxsize=4)
def _trained(scale, seed):
    """Detector and models, trained once per process, scale and seed."""
    from skpaper.utils import parallel_map

    cfg = _CONFIG[scale]
    jobs = ["anytime", "direct", "detector"]
    if cfg.get("compute_factor"):
        jobs.insert(0, "direct_matched_compute")
    import torch

    done = parallel_map(_train_job, jobs, n_jobs=cfg["n_jobs"], scale=scale, seed=seed,
                        threads=torch.get_num_threads())
    fitted = {job: model for job, model, _ in done}
    seconds = {job: sec for job, _, sec in done if job != "detector"}
    return fitted.pop("detector"), fitted, seconds


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


@lru_cache(maxsize=4)
def _evaluation(scale, seed):
    """Metrics per method and pair on the held-out pairs (cached across claims)."""
    _, test, pairs, _ = _data(scale, seed)
    detector, models, seconds = _trained(scale, seed)
    source = test.videos[pairs.video, pairs.source]
    driving = test.videos[pairs.video, pairs.driving]
    kp_true = test.keypoints[pairs.video, pairs.driving]
    vis_true = test.visibility[pairs.video, pairs.driving]
    anytime = models["anytime"].anytime_transfer(source, driving)
    outputs = {
        "direct": models["direct"].transform(source, driving, path="direct"),
        "anytime": anytime.output,
        "anytime_model_direct": anytime.direct,
    }
    if "direct_matched_compute" in models:
        outputs["direct_matched_compute"] = models["direct_matched_compute"].transform(
            source, driving, path="direct")
    metrics = {name: _per_pair(out, detector, kp_true, vis_true, driving)
               for name, out in outputs.items()}
    floor = _per_pair(driving, detector, kp_true, vis_true, driving)
    return dict(pairs=pairs, metrics=metrics, floor=floor, t=anytime.t, seconds=seconds,
                source=source, driving=driving, anytime=anytime, outputs=outputs)


def _paired(metric_a, metric_b):
    """Mean of ``a - b`` over pairs where both are finite, with a 95% normal interval."""
    from skpaper.utils import normal_ci

    diff = np.asarray(metric_a, float) - np.asarray(metric_b, float)
    diff = diff[np.isfinite(diff)]
    if len(diff) < 2:
        return float("nan"), [float("nan"), float("nan")]
    se = diff.std(ddof=1) / np.sqrt(len(diff))
    return float(diff.mean()), [float(v) for v in normal_ci(diff.mean(), se, 0.05)]


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


_LABELS = {"direct": "direct\n(baseline)", "direct_matched_compute": "direct,\nsame compute",
           "anytime_model_direct": "anytime model,\ndirect path",
           "anytime": "anytime\ninterpolation"}
_COLOURS = {"direct": "#888888", "direct_matched_compute": "#bbbbbb",
            "anytime_model_direct": "#9ecae1", "anytime": "#3182bd"}


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


def _observed(ev, mask, bin_name):
    m = ev["metrics"]
    summary = _bin_summary(ev, mask)
    akd_diff, akd_ci = _paired(m["anytime"]["akd"][mask], m["direct"]["akd"][mask])
    l1_diff, l1_ci = _paired(m["anytime"]["l1"][mask], m["direct"]["l1"][mask])
    abl_diff, abl_ci = _paired(m["anytime"]["akd"][mask], m["anytime_model_direct"]["akd"][mask])
    observed = {f"n_pairs_{bin_name}": int(mask.sum())}
    for name in summary:
        for metric, value in summary[name].items():
            observed[f"{bin_name}_{metric}_{name}"] = round(value, 4)
    observed.update({
        f"{bin_name}_akd_anytime_minus_direct": round(akd_diff, 4),
        f"{bin_name}_akd_anytime_minus_direct_ci95": [round(v, 4) for v in akd_ci],
        f"{bin_name}_l1_anytime_minus_direct": round(l1_diff, 5),
        f"{bin_name}_l1_anytime_minus_direct_ci95": [round(v, 5) for v in l1_ci],
        f"{bin_name}_akd_anytime_minus_same_model_direct": round(abl_diff, 4),
        f"{bin_name}_akd_anytime_minus_same_model_direct_ci95": [round(v, 4) for v in abl_ci],
        f"{bin_name}_selected_t": _t_distribution(ev["t"], mask),
    })
    if "direct_matched_compute" in m:
        diff, ci = _paired(m["anytime"]["akd"][mask], m["direct_matched_compute"]["akd"][mask])
        observed[f"{bin_name}_akd_anytime_minus_direct_matched_compute"] = round(diff, 4)
        observed[f"{bin_name}_akd_anytime_minus_direct_matched_compute_ci95"] = [
            round(v, 4) for v in ci]
    return observed, summary, (akd_diff, akd_ci), (l1_diff, l1_ci)


def _budget_note(scale, ev):
    cfg = _CONFIG[scale]
    sec = ev["seconds"]
    note = (f"{cfg['videos']} training videos of {cfg['frames']} frames at {cfg['size']}x"
            f"{cfg['size']}, {cfg['keypoints']} keypoints, width {cfg['width']}, "
            f"{cfg['epochs']} epochs for both models (same steps and pairs; the anytime step "
            f"costs more: {sec['direct']:.0f} s vs {sec['anytime']:.0f} s of training).")
    if "direct_matched_compute" in sec:
        note += (f" 'direct_matched_compute' is the baseline trained {cfg['compute_factor']}x "
                 f"longer ({sec['direct_matched_compute']:.0f} s).")
    return note + (" The external detector's error on the real driving frames is the dashed "
                   "line ('real_driving' entries). MKR and AED (colour histograms) are reported "
                   "but not judged; two generation passes blur, which AED and L1 see.")


# ----------------------------------------------------------------------------------- claim 1
@register_claim(
    SLUG, "large-displacement-gain",
    "On large-displacement pairs, transfer through the selected anytime interpolant lowers "
    "the keypoint distance (AKD) and the L1 error compared with direct transfer by the same "
    "backbone trained for the same number of steps.",
)
def _claim_large(scale, seed, out_dir):
    ev = _evaluation(scale, seed)
    mask = np.asarray(ev["pairs"].large, bool)
    observed, summary, (akd_diff, akd_ci), (l1_diff, _) = _observed(ev, mask, "large")

    fig, axes = new_figure(1, 2, figsize=(7.5, 3.2))
    _bar_plot(axes[0], summary, "akd", "large displacement: AKD")
    _bar_plot(axes[1], summary, "l1", "large displacement: L1")
    axes[1].set_ylabel("L1")
    bars = save_figure(fig, out_dir, "large_displacement_metrics")
    grid = _transfer_grid(ev, mask, out_dir)
    passed = bool(akd_ci[1] < 0 and l1_diff < 0)
    return ClaimResult(
        observed=observed,
        expected={"large_akd_anytime_minus_direct": "< 0 (95% interval below zero)",
                  "large_l1_anytime_minus_direct": "< 0",
                  "paper": "significant improvements in motion-related metrics (AKD/MKR)"},
        passed=passed,
        artifacts=[bars, grid],
        notes=(_budget_note(scale, ev) + " Passed needs the 95% interval of the paired AKD "
               "difference below zero and a lower mean L1. The paper's tables are not public; "
               "only the direction of its claim is checked."),
    )


# ----------------------------------------------------------------------------------- claim 2
@register_claim(
    SLUG, "small-displacement-no-harm",
    "On small-displacement pairs, anytime interpolation does not hurt: its AKD is not "
    "meaningfully above that of direct transfer.",
)
def _claim_small(scale, seed, out_dir):
    ev = _evaluation(scale, seed)
    mask = ~np.asarray(ev["pairs"].large, bool)
    observed, summary, (akd_diff, akd_ci), _ = _observed(ev, mask, "small")
    tolerance = 0.1 * summary["direct"]["akd"]
    observed["small_akd_tolerance"] = round(tolerance, 4)

    fig, axes = new_figure(1, 2, figsize=(7.5, 3.2))
    _bar_plot(axes[0], summary, "akd", "small displacement: AKD")
    _bar_plot(axes[1], summary, "l1", "small displacement: L1")
    axes[1].set_ylabel("L1")
    bars = save_figure(fig, out_dir, "small_displacement_metrics")
    passed = bool(akd_ci[1] < tolerance)
    return ClaimResult(
        observed=observed,
        expected={"small_akd_anytime_minus_direct_ci95_upper": "< 10% of the direct AKD",
                  "paper": "no explicit small-displacement figure; the method targets large "
                           "displacements"},
        passed=passed,
        artifacts=[bars],
        notes=(_budget_note(scale, ev) + " Passed needs the upper end of the 95% interval of "
               "the paired AKD increase below 10% of the direct AKD."),
    )


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
