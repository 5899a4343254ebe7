"""Steady-state adaptation (Jae-Hong Lee, ICML 2025): claims on a corrupted digits stream.

The paper adapts ViT, Swin and ResNet models on ImageNet-C, ImageNet-D109 and
CCC streams. At CPU scale, a small LayerNorm MLP is trained on clean
scikit-learn digits and adapted on a continual stream of seven numpy
corruptions, repeated for several rounds. TENT (entropy on the LayerNorm
affine parameters, SGD with Nesterov momentum) is the base method. Every
figure is an online accuracy: each batch is predicted before the model adapts
on it.

The test images of each seed are split in two: a third builds a held-out
calibration stream, the rest the evaluation stream. SSA's noise floor ``S`` is
measured once on the calibration stream and then held fixed, as the paper
keeps its ``EPS`` fixed. Every arm of a comparison runs on the same seeds
(source model, split, corruption noise), added look by look
(:func:`~skpaper.papers.run_comparison`).

What ``S`` is here, plainly: the authors' code fixes ``S`` (``EPS``, 1e-6 or
1e-12, one constant per architecture); this project calibrates it as
``S = 0.05 * eta**2 * sigma_0**2`` from the first window of the held-out
stream, since the scalar noise proxy has no natural scale on a new model.
Once the window is full, SSA's multiplier is ``sqrt(S) / (eta * sigma_k)``,
so SSA is, by construction, a learning-rate cut of roughly 3-4x after its
first window, modulated by how the gradient noise drifts from its
first-window level. SSA on vs off at the same learning rate (the paper's
comparison) therefore mixes the cut with the mechanism. It is asserted as the
paper states it (ssa-on-beats-off: at every learning rate of the grid), with,
as its control, SSA's own multipliers applied in a random order against SSA
off, which keeps the cut and removes the noise tracking. Two further checks
isolate the mechanism: SSA against the same base method on SSA's own
schedule (the full rate for the first window, then SSA's own mean step on
the same stream) at a constant step, with TENT (ssa-beats-tent) and with ROID
under label shift (label-shift), each with the shuffled multipliers as its
control; the paper's on/off comparison is reported beside each.
"""

import numpy as np
from scipy.stats import spearmanr
from sklearn.frozen import FrozenEstimator

from ..adaptation import NormMLPClassifier, SteadyStateFilter, TestTimeAdapter
from ..datasets import load_digits_split, make_corruption_stream
from ..utils import parallel_map
from ._comparison import ArmRun, EffectOfInterest, all_of, decide_claim, run_comparison
from ._plotting import new_figure, save_figure
from ._registry import ClaimResult, register_claim, register_paper, shared_cache
from ._stats import claim_seeds, seed_summary

SLUG = "ssa-tta"
register_paper(
    SLUG,
    "Bayesian Weight Enhancement with Steady-State Adaptation for Test-time Adaptation in "
    "Dynamic Environments",
    module="skpaper.adaptation", quick_cost_s=250)

#: Looks of ssa-on-beats-off at quick, from the power figures of its calibration setting
#: (``_paper_calibration()``: seed stream key 98, severity 4, learning rates 0.002, 0.006 and
#: 0.02, none of the claim's; 4 seeds each, i.i.d. labels). There, TENT+SSA - TENT with SSA
#: off was +0.0017 (SD 0.0017), +0.0032 (SD 0.0025) and +0.0055 (SD 0.0025): 3, 4 and 4
#: seeds to decide at the effect of interest, 8, 6 and 4 to pass at the calibration mean;
#: the control (SSA's multipliers shuffled - off) +0.0017 (SD 0.0019), +0.0032 (0.0024) and
#: +0.0045 (0.0016): 3, 4 and 3 seeds at the effect of interest, 9, 6 and 3 at its mean.
#: Looks 4, 8, 12: the first past every figure at the effect of interest, the last past
#: every figure at the calibration means.
_PAPER_LOOKS = (4, 8, 12)

_SCALES = {
    # source MLP, stream, SSA window, seeds of the comparisons and of the sweep
    "smoke": dict(hidden=(64,), epochs=30, corruptions=("noise", "contrast", "shift"),
                  rounds=1, batch=32, window=12, lrs=(0.003, 0.03), looks=(2,), looks_roid=(2,),
                  looks_paper=(2,), sweep_seeds=1, batch_sizes=(64, 16)),
    "quick": dict(hidden=(128, 128), epochs=100, corruptions=None, rounds=2, batch=32,
                  window=64, lrs=(0.003, 0.01, 0.03), looks=(4, 8), looks_roid=(8, 16, 24),
                  looks_paper=_PAPER_LOOKS, sweep_seeds=2,
                  batch_sizes=(128, 64, 32, 16)),
    "full": dict(hidden=(256, 256), epochs=200, corruptions=None, rounds=5, batch=32,
                 window=64, lrs=(0.001, 0.003, 0.01, 0.03, 0.1), looks=(8, 16, 32),
                 looks_roid=(16, 32, 48), looks_paper=(8, 16, 24),
                 sweep_seeds=5,
                 batch_sizes=(128, 64, 32, 16, 8)),
}

#: Severity of the mild stream, where SSA on vs off is reported (not asserted).
_MILD = 2
#: Severity of the asserted comparisons and of the learning-rate sweep: the paper's
#: ImageNet-C results are at severity 5.
_HARSH = 5
_EOI = EffectOfInterest(
    0.005, "ours",
    "half a point of online accuracy: the smallest gain by which test-time adaptation "
    "tables rank one method above another (the paper's exact tables were not retrievable)")
#: Learning rate of the comparisons (ours: the rate at which plain TENT beat no
#: adaptation at severity 2 in a one-seed pilot on a split not used by the claims).
_LR = 0.01
#: Gain of the pull towards the source, the paper's default; every TENT baseline
#: of a comparison gets the same.
_KAPPA = 0.01
#: Calibration of ``S`` on the held-out stream: ``S = 0.05 * eta**2 * sigma_0**2``.
_STEADY_SCALE = 0.05
#: The figures reported beside a check (other learning rates, severity 2) use its first
#: seeds only, to bound the runtime (reported, not asserted).
_ASIDE_SEEDS = 4
#: Upper clip of SSA's step multiplier (the adapter's default).
_MAX_STEP = 4.0


@shared_cache(maxsize=16)
def _source(scale, seed):
    """Source model trained on clean digits, and the held-out calibration/evaluation split."""
    cfg = _SCALES[scale]
    data = load_digits_split(test_size=0.4, random_state=seed)
    source = NormMLPClassifier(hidden_layer_sizes=cfg["hidden"], max_epochs=cfg["epochs"],
                               lr=3e-3, batch_size=64, inference_dtype="float32",
                               random_state=seed).fit(data.X_train, data.y_train)
    order = np.random.default_rng(seed).permutation(len(data.X_test))
    n_cal = len(order) // 3
    cal, ev = order[:n_cal], order[n_cal:]
    return (source, (data.X_test[cal], data.y_test[cal]), (data.X_test[ev], data.y_test[ev]))


def _streams(scale, seed, severity, label_order):
    """The held-out calibration stream and the evaluation stream of one seed."""
    cfg = _SCALES[scale]
    source, (X_cal, y_cal), (X_ev, y_ev) = _source(scale, seed)
    cal = make_corruption_stream(X_cal, y_cal, cfg["corruptions"], severity=severity,
                                 rounds=cfg["rounds"], label_order=label_order,
                                 random_state=seed + 1)
    ev = make_corruption_stream(X_ev, y_ev, cfg["corruptions"], severity=severity,
                                rounds=cfg["rounds"], label_order=label_order,
                                random_state=seed + 2)
    return source, cal, ev


def _run(params, source, stream, cfg, seed):
    """One online run: accuracy, per-sample hits, step and noise histories."""
    params = {"batch_size": cfg["batch"], "window": cfg["window"], "max_step": _MAX_STEP,
              "random_state": seed, **params}
    tta = TestTimeAdapter(FrozenEstimator(source), **params).fit(stream.X[:8])
    hits = tta.predict(stream.X, adapt=True) == stream.y
    return (float(np.mean(hits)), hits, np.asarray(tta.step_history_),
            np.asarray(tta.sigma2_history_), tta.filter_.noise_floor)


def _mean_step(steps, lr, window):
    """Mean applied step ``alpha_k * eta`` once the noise window is full."""
    return float(lr * np.mean(steps[window:])) if len(steps) > window else float(lr)


def _calibrate(source, cal_stream, cfg, seed, lr, loss="entropy"):
    """SSA's noise floor S and its mean step, both from the held-out calibration stream."""
    _, _, steps, _, noise_floor = _run(
        {"loss": loss, "lr": lr, "ssa": True, "kappa": _KAPPA,
         "steady_scale": _STEADY_SCALE}, source, cal_stream, cfg, seed)
    if noise_floor is None:
        raise ValueError("the calibration stream is shorter than SSA's window; use a longer "
                         "stream or a smaller window.")
    return float(noise_floor), _mean_step(steps, lr, cfg["window"])


def _rounded(values):
    # Significant digits, not decimals: a noise floor can lie far below 1e-4.
    return [float(f"{float(v):.4g}") for v in values]


def _run_schedule(params, source, stream, cfg, seed, multipliers):
    """An online run whose ``k``-th batch steps at ``params['lr'] * multipliers[k]`` (the
    adapter keeps its momentum and anchor across batches; no noise tracking)."""
    params = {"batch_size": cfg["batch"], "window": cfg["window"], "max_step": _MAX_STEP,
              "random_state": seed, **params}
    tta = TestTimeAdapter(FrozenEstimator(source), **params).fit(stream.X[:8])
    lr, b = params["lr"], cfg["batch"]
    preds = []
    for k, start in enumerate(range(0, len(stream.y), b)):
        tta.lr = lr * float(multipliers[min(k, len(multipliers) - 1)])
        preds.append(tta.predict(stream.X[start:start + b], adapt=True))
    hits = np.concatenate(preds) == stream.y
    return float(np.mean(hits)), hits


def _run_split(params, source, stream, cfg, seed, switch_at, late_lr):
    """An online run at ``params['lr']`` for the first ``switch_at`` batches, then at
    ``late_lr`` (the adapter keeps its state across the two parts)."""
    params = {"batch_size": cfg["batch"], "window": cfg["window"], "max_step": _MAX_STEP,
              "random_state": seed, **params}
    tta = TestTimeAdapter(FrozenEstimator(source), **params).fit(stream.X[:8])
    cut = switch_at * cfg["batch"]
    early = tta.predict(stream.X[:cut], adapt=True)
    tta.lr = late_lr
    late = tta.predict(stream.X[cut:], adapt=True)
    hits = np.concatenate([early, late]) == stream.y
    return float(np.mean(hits)), hits


@shared_cache(maxsize=256)
def _seed_runs(scale, s, severity, label_order, loss, lr, paper_only=False):
    """The arms of one seed: SSA, the base method with SSA off (same rate), on SSA's
    schedule at a constant step and with SSA's steps shuffled; unless ``paper_only``, also
    at SSA's held-out mean step (after the window and from the first batch) and no
    adaptation. Online accuracy and hits of each, and the calibrated figures."""
    cfg = _SCALES[scale]
    source, cal, ev = _streams(scale, s, severity, label_order)
    floor, step = _calibrate(source, cal, cfg, s, lr, loss)
    jobs = {"SSA": {"loss": loss, "lr": lr, "ssa": True, "kappa": _KAPPA,
                    "sigma_lambda2": floor},
            "SSA off": {"loss": loss, "lr": lr, "ssa": False, "kappa": _KAPPA}}
    if not paper_only:
        jobs["SSA's mean step from the first batch"] = {"loss": loss, "lr": step, "ssa": False,
                                                        "kappa": _KAPPA}
        jobs["no adaptation"] = {"loss": "none"}
    results = parallel_map(_run, list(jobs.values()), source=source, stream=ev, cfg=cfg,
                           seed=s)
    out = {name: (r[0], r[1]) for name, r in zip(jobs, results)}
    base = {"loss": loss, "lr": lr, "ssa": False, "kappa": _KAPPA}
    # SSA's own multipliers on this stream after its window: at their mean (the same
    # schedule and total movement, no tracking), and in a random order (the same steps,
    # decoupled from the noise of the batch they are applied to)
    ssa_steps = results[0][2]
    window, late = ssa_steps[:cfg["window"]], np.asarray(ssa_steps[cfg["window"]:], float)
    level = late.mean() if len(late) else 1.0
    out["SSA's schedule, constant step"] = _run_schedule(
        base, source, ev, cfg, s, np.concatenate([window, np.full(len(late), level)]))
    rng = np.random.default_rng([s, 7])
    out["SSA's steps, shuffled"] = _run_schedule(
        base, source, ev, cfg, s, np.concatenate([window, rng.permutation(late)]))
    if not paper_only:
        out["SSA's held-out mean step, constant"] = _run_split(base, source, ev, cfg, s,
                                                               cfg["window"], step)
    return {"acc": {k: v[0] for k, v in out.items()}, "hits": {k: v[1] for k, v in out.items()},
            "noise_floor": floor, "calibrated_mean_step": step,
            "evaluation_mean_step": _mean_step(ssa_steps, lr, cfg["window"]),
            "stream_length": len(ev.y)}


def _ssa_arm(scale, severity, label_order, loss, lr, name, paper_only=False):
    def run(s):
        res = _seed_runs(scale, s, severity, label_order, loss, lr, paper_only)
        return ArmRun(res["acc"][name], parameters=None,
                      train_steps=0 if name == "no adaptation" else
                      -(-res["stream_length"] // _SCALES[scale]["batch"]),
                      train_examples=0 if name == "no adaptation" else res["stream_length"],
                      extra={"adapted": "LayerNorm affine parameters of the same source",
                             "learning_rate": lr, "kappa": _KAPPA})
    return run


_ARM_NAMES = ("SSA", "SSA's schedule, constant step", "SSA's steps, shuffled", "SSA off",
              "SSA's held-out mean step, constant", "SSA's mean step from the first batch",
              "no adaptation")


def _ssa_comparison(scale, seed, label_order, loss, base_name, key):
    """SSA against the same base method on SSA's schedule at a constant step (severity 5,
    same rate); control: SSA's own multipliers in a random order, against the same."""
    cfg = _SCALES[scale]
    arms = {name: _ssa_arm(scale, _HARSH, label_order, loss, _LR, name) for name in _ARM_NAMES}
    cmp = run_comparison(arms, method="SSA", baseline="SSA's schedule, constant step",
                         control_method="SSA's steps, shuffled", seed=seed,
                         looks=cfg["looks_roid" if loss == "roid" else "looks"], key=key,
                         effect_of_interest=_EOI,
                         metric="online accuracy")
    runs = [_seed_runs(scale, s, _HARSH, label_order, loss, _LR) for s in cmp.seeds]
    aside_seeds = cmp.seeds[:_ASIDE_SEEDS]

    def aside(values_a, values_b):
        return decide_claim(values_a, values_b, effect_of_interest=_EOI).decision.to_dict()

    other_lrs = {}
    for lr in cfg["lrs"]:
        if lr == _LR:
            continue
        r = [_seed_runs(scale, s, _HARSH, label_order, loss, lr, True) for s in aside_seeds]
        other_lrs[f"lr={lr:g}"] = {
            "ssa_minus_off": aside([x["acc"]["SSA"] for x in r],
                                   [x["acc"]["SSA off"] for x in r]),
            "ssa_minus_constant_step_schedule": aside(
                [x["acc"]["SSA"] for x in r],
                [x["acc"]["SSA's schedule, constant step"] for x in r])}
    mild = [_seed_runs(scale, s, _MILD, label_order, loss, _LR, True) for s in aside_seeds]
    observed = {
        "base_method": base_name, "learning_rate": _LR, "kappa": _KAPPA, "severity": _HARSH,
        "paper_comparison_ssa_minus_off": aside(cmp.values["SSA"], cmp.values["SSA off"]),
        "constant_step_schedule_minus_off": aside(
            cmp.values["SSA's schedule, constant step"], cmp.values["SSA off"]),
        "ssa_minus_held_out_mean_step_constant": aside(
            cmp.values["SSA"], cmp.values["SSA's held-out mean step, constant"]),
        "ssa_minus_mean_step_from_first_batch": aside(
            cmp.values["SSA"], cmp.values["SSA's mean step from the first batch"]),
        "ssa_minus_no_adaptation": aside(cmp.values["SSA"], cmp.values["no adaptation"]),
        "other_learning_rates": other_lrs,
        f"ssa_minus_off_severity_{_MILD}": aside([x["acc"]["SSA"] for x in mild],
                                                 [x["acc"]["SSA off"] for x in mild]),
        "noise_floor_S": _rounded([r["noise_floor"] for r in runs]),
        "ssa_mean_step_calibration": _rounded([r["calibrated_mean_step"] for r in runs]),
        "ssa_mean_step_evaluation": _rounded([r["evaluation_mean_step"] for r in runs]),
    }
    acc = {f"{base_name} {n}" if n != "no adaptation" else n: cmp.values[n] for n in _ARM_NAMES}
    extra = {"curves": {f"{base_name} {n}" if n != "no adaptation" else n: runs[0]["hits"][n]
                        for n in _ARM_NAMES}}
    return cmp, observed, acc, extra


def _plot_comparison(acc, extra, title, out_dir, name):
    fig, (ax1, ax2) = new_figure(1, 2, figsize=(10, 3.6))
    names = list(acc)
    for j, arm in enumerate(names):
        ax1.scatter(np.full(len(acc[arm]), j), acc[arm], s=10, color="k", zorder=3)
        ax1.bar(j, np.mean(acc[arm]), color="gray" if arm == "no adaptation" else
                ("tab:blue" if arm.split()[-1] == "SSA" else "tab:orange"))
    ax1.set_xticks(range(len(names)), names, rotation=30, ha="right", fontsize=7)
    lo = min(min(v) for v in acc.values())
    hi = max(max(v) for v in acc.values())
    ax1.set_ylim(lo - 0.02, hi + 0.01)
    ax1.set_ylabel("online accuracy (bar: mean; dots: seeds)")
    ax1.set_title(title, fontsize=9)
    for arm, hits in extra["curves"].items():
        width = max(1, len(hits) // 40)
        smooth = np.convolve(hits.astype(float), np.ones(width) / width, mode="valid")
        ax2.plot(smooth, label=arm, lw=1)
    ax2.set_xlabel("test sample (stream order), first seed")
    ax2.set_ylabel("running accuracy")
    ax2.legend(fontsize=6)
    return save_figure(fig, out_dir, name)


_COMPARISON_NOTES = (
    "How S is set: in the authors' code S is a fixed constant (EPS, 1e-6 or 1e-12 for "
    "ImageNet models), a noise floor of the scalar gradient proxy chosen once per "
    "architecture; the multiplier sqrt(S / var) / eta can then be above or below 1. The "
    "proxy has no natural scale on a new model, so here S is fixed per source model from the "
    "held-out calibration stream as 0.05 * eta**2 * sigma_0**2: plainly, SSA is then a 3-4x "
    "step cut after its first window, modulated by how the gradient noise drifts. The paper's "
    "comparison, SSA on vs off at the same rate, is reported beside (paper_comparison_"
    "ssa_minus_off), together with the same base method on SSA's schedule at a constant step "
    "against SSA off, which shows how much of that gain the cut alone gives. What the check "
    "asserts is SSA's mechanism, the covariance-aware (noise-tracking) step, against the "
    "same schedule without it: the full rate for SSA's first window, then a constant step "
    "equal to SSA's own mean step on the same stream (the same total movement). The control "
    "applies SSA's own multipliers of that run in a random order: the same steps, level and "
    "spread, decoupled from the gradient noise of the batch they meet; it would pass if "
    "varying the step helped in itself. Every arm pulls towards the source with the same "
    "kappa=0.01 and adapts the same LayerNorm parameters on the same stream. Also reported: "
    "a constant step at SSA's mean step on the held-out stream, the base method at that step "
    "from the first batch (a handicapped comparator: it never gets the full rate), SSA on vs "
    "off and SSA against the constant step at the other learning rates, and SSA on vs off at "
    "severity 2, where SSA need not help (these on the first 4 seeds). Looks from a power "
    "figure on a calibration setting (seeds key 91, severity 4, learning rate 0.02, 4 seeds): "
    "paired SD of SSA - constant step 0.0025 with TENT (4 seeds needed), 0.0093 with ROID on "
    "class-sorted streams (23 seeds); of the control 0.0006 and 0.014.")


@register_claim(
    SLUG, "ssa-beats-tent",
    "On the harsh (severity 5) continual stream, TENT+SSA's noise-tracking step is more "
    "accurate online than TENT on SSA's own schedule at a constant step (the full rate for "
    "SSA's first window, then SSA's mean step), at the same learning rate.",
    paper_statement="SSA's covariance-aware learning-rate adjustment, which tracks the "
                    "time-varying gradient noise that constant-gain weight averaging "
                    "ignores, 'consistently improves' weight-based TTA methods such as TENT "
                    "in stability and adaptability on ImageNet-C at severity 5 (abstract; "
                    "Sec. 4-5). Exact tables were not retrievable.",
    check=("Sequential paired seeds (source model, split, corruption noise; looks 4, 8 at "
           "quick): lower bound of mean(TENT+SSA - TENT on SSA's schedule at a constant "
           "step, learning rate 0.01 and kappa 0.01) > 0; contradicted when the upper bound "
           "is below 0.005. SSA on vs off (the paper's comparison) is reported beside."),
    control="SSA's steps without its noise tracking: TENT stepping at SSA's own "
            "multipliers in a random order, against the same constant-step TENT",
    effect_of_interest=_EOI,
)
def _claim_ssa_beats_tent(scale, seed, out_dir):
    cfg = _SCALES[scale]
    cmp, observed, acc, extra = _ssa_comparison(scale, seed, "iid", "entropy", "TENT", (1,))
    artifact = _plot_comparison(acc, extra, f"severity {_HARSH}, i.i.d. labels, lr={_LR:g}",
                                out_dir, "ssa_beats_tent")
    return cmp.claim_result(observed={**observed, "accuracy": _summary(acc)},
                            artifacts=[artifact],
                            notes=_COMPARISON_NOTES + f" Window {cfg['window']} batches.")


@register_claim(
    SLUG, "label-shift",
    "Under class-sorted (label-shift) streams at severity 5, ROID+SSA's noise-tracking step "
    "is more accurate online than ROID on SSA's own schedule at a constant step, at the same "
    "learning rate.",
    paper_statement="SSA keeps improving ROID and CMF under label shift (Dirichlet "
                    "streams) through its covariance-aware step; exact tables were not "
                    "retrievable.",
    check=("On class-sorted severity-5 streams, sequential paired seeds (looks 8, 16, 24 at "
           "quick): lower bound of mean(ROID+SSA - ROID on SSA's schedule at a constant "
           "step, learning rate 0.01 and kappa 0.01) > 0; contradicted when the upper bound "
           "is below 0.005. SSA on vs off (the paper's comparison) is reported beside."),
    control="SSA's steps without its noise tracking: ROID stepping at SSA's own "
            "multipliers in a random order, against the same constant-step ROID",
    effect_of_interest=_EOI,
)
def _claim_label_shift(scale, seed, out_dir):
    cmp, observed, acc, extra = _ssa_comparison(scale, seed, "sorted", "roid", "ROID", (2,))
    tent = [_seed_runs(scale, s, _HARSH, "sorted", "entropy", _LR, True)
            for s in cmp.seeds[:_ASIDE_SEEDS]]
    observed["tent_ssa_minus_tent_off"] = decide_claim(
        [r["acc"]["SSA"] for r in tent], [r["acc"]["SSA off"] for r in tent],
        effect_of_interest=_EOI).decision.to_dict()
    artifact = _plot_comparison(acc, extra, f"severity {_HARSH}, class-sorted, lr={_LR:g}",
                                out_dir, "ssa_label_shift")
    return cmp.claim_result(
        observed={**observed, "accuracy": _summary(acc)}, artifacts=[artifact],
        notes=_COMPARISON_NOTES + " Within each corruption the images arrive sorted by "
              "class, so a batch of 32 holds one or two classes. ROID's augmentation is "
              "Gaussian input noise here, and its prior correction rescales probabilities; "
              "S for ROID+SSA is calibrated with the ROID loss on the held-out stream. "
              "TENT+SSA against TENT on the same streams is reported beside.")


def _paper_calibration(seed=0, n_seeds=4, scale="quick", lrs=(0.002, 0.006, 0.02)):
    """Power figures of ssa-on-beats-off on its calibration setting (seed stream key 98,
    severity 4, learning rates not in the claim's grid): per rate, the mean and SD of
    TENT+SSA - TENT off and of its control, and the seeds each needs (:func:`seeds_needed`)
    at the effect of interest and at the observed mean. Not run by the claims; its figures
    set ``_PAPER_LOOKS``."""
    from ._stats import seeds_needed

    out = {}
    for lr in lrs:
        runs = [_seed_runs(scale, s, 4, "iid", "entropy", lr, True)
                for s in claim_seeds(seed, n_seeds, 98)]
        for name, arm in (("check", "SSA"), ("control", "SSA's steps, shuffled")):
            d = np.array([r["acc"][arm] - r["acc"]["SSA off"] for r in runs])
            sd = float(d.std(ddof=1))
            out[f"lr={lr:g} {name}"] = {
                "mean": float(d.mean()), "sd": sd,
                "seeds_needed_at_effect": seeds_needed(sd, _EOI.value),
                "seeds_needed_at_mean": seeds_needed(sd, float(d.mean()))}
    return out


@register_claim(
    SLUG, "ssa-on-beats-off",
    "On the harsh (severity 5) continual stream, TENT+SSA is more accurate online than TENT "
    "with SSA off at the same learning rate, at every learning rate of the grid (the "
    "paper's comparison).",
    paper_statement="SSA 'consistently improves' weight-based TTA methods such as TENT, "
                    "compared at the same hyperparameters with SSA on and off, on "
                    "ImageNet-C at severity 5, and stays stable at larger learning rates "
                    "(abstract; Sec. 4-5). Exact tables were not retrievable.",
    check=("At each learning rate of the grid (0.003, 0.01, 0.03 at quick), sequential "
           "paired seeds (source model, split, corruption noise; looks 4, 8, 12 at quick): "
           "lower bound of mean(TENT+SSA - TENT with SSA off, same rate, kappa 0.01, same "
           "stream) > 0. Reproduced when every rate passes; contradicted when any rate's "
           "upper bound is below the effect of interest 0.005."),
    control="SSA's step cut without its noise tracking: TENT stepping at SSA's own "
            "multipliers of the same run in a random order, against TENT with SSA off",
    effect_of_interest=_EOI,
)
def _claim_ssa_on_beats_off(scale, seed, out_dir):
    cfg = _SCALES[scale]
    names = ("SSA", "SSA off", "SSA's steps, shuffled")
    comparisons = {}
    for lr in cfg["lrs"]:
        # the same seeds (key 1) and runs as ssa-beats-tent and its asides, shared
        arms = {n: _ssa_arm(scale, _HARSH, "iid", "entropy", lr, n, lr != _LR) for n in names}
        comparisons[f"lr={lr:g}"] = run_comparison(
            arms, method="SSA", baseline="SSA off", control_method="SSA's steps, shuffled",
            seed=seed, looks=cfg["looks_paper"], key=(1,), effect_of_interest=_EOI,
            metric="online accuracy")

    def aside(a, b):
        return decide_claim(a, b, effect_of_interest=_EOI).decision.to_dict()

    by_lr = {}
    for label, lr in zip(comparisons, cfg["lrs"]):
        seeds = comparisons[label].seeds[:_ASIDE_SEEDS]
        harsh = [_seed_runs(scale, s, _HARSH, "iid", "entropy", lr, lr != _LR) for s in seeds]
        mild = [_seed_runs(scale, s, _MILD, "iid", "entropy", lr, True) for s in seeds]
        by_lr[label] = {
            "constant_step_schedule_minus_off": aside(
                [r["acc"]["SSA's schedule, constant step"] for r in harsh],
                [r["acc"]["SSA off"] for r in harsh]),
            f"ssa_minus_off_severity_{_MILD}": aside([r["acc"]["SSA"] for r in mild],
                                                     [r["acc"]["SSA off"] for r in mild]),
            "ssa_mean_step_evaluation": _rounded([r["evaluation_mean_step"] for r in harsh]),
            "n_seeds": len(seeds)}
    not_helping = sorted(
        [f"{label}, severity {_HARSH}" for label, c in comparisons.items()
         if c.verdict != "pass"]
        + [f"{label}, severity {_MILD} (first {v['n_seeds']} seeds)"
           for label, v in by_lr.items()
           if v[f"ssa_minus_off_severity_{_MILD}"]["lower_bound"] <= 0])

    fig, ax = new_figure(1, 1, figsize=(6.4, 3.6))
    x = np.arange(len(comparisons))
    for dx, key, label, color in ((-0.2, "check", "TENT+SSA - TENT off", "tab:blue"),
                                  (0.2, "control", "SSA's steps shuffled - TENT off",
                                   "tab:orange")):
        dec = [c.decision if key == "check" else c.control_decision
               for c in comparisons.values()]
        means = np.array([d.mean for d in dec])
        lows = np.array([d.lower for d in dec])
        ax.errorbar(x + dx, means, yerr=[means - lows, np.zeros_like(means)], fmt="o",
                    capsize=3, color=color, label=label + " (mean, one-sided lower bound)")
    ax.axhline(0.0, color="k", lw=0.8)
    ax.axhline(_EOI.value, color="gray", ls="--", lw=0.8, label="effect of interest")
    ax.set_xticks(x, list(comparisons))
    ax.set_ylabel("online accuracy difference")
    ax.set_title(f"severity {_HARSH}, i.i.d. labels: SSA on vs off", fontsize=9)
    ax.legend(fontsize=7)
    artifact = save_figure(fig, out_dir, "ssa_on_vs_off")
    return all_of(
        comparisons, artifacts=[artifact],
        observed={"learning_rates": list(cfg["lrs"]), "severity": _HARSH, "kappa": _KAPPA,
                  "base_method": "TENT", "asides_by_learning_rate": by_lr,
                  "where_ssa_does_not_help": not_helping,
                  "calibration": "seed key 98, severity 4, learning rates 0.002, 0.006, "
                                 "0.02, 4 seeds (_paper_calibration)"},
        notes=("The paper's own comparison, asserted: SSA on vs off, same base method "
               "(TENT), learning rate, kappa=0.01 pull towards the source, stream and seeds, "
               "at every rate of the grid. With S fixed from the held-out stream as "
               "0.05 * eta**2 * sigma_0**2, SSA is a 3-4x step cut after its first window, "
               "so this check mixes the cut with the noise tracking. The control keeps the "
               "cut (SSA's own multipliers of the same run, in a random order) and removes "
               "the tracking: a passing control means the gain over SSA off is what the "
               "step cut gives, so a pass of the check is uninformative about the "
               "mechanism (ssa-beats-tent isolates it). A rate whose gain is real but "
               "smaller than 0.005 is contradicted. Reported beside, on the first "
               f"{_ASIDE_SEEDS} seeds of each rate: TENT on SSA's schedule at a constant "
               f"step - off, and SSA on - off at severity {_MILD}; where_ssa_does_not_help "
               "lists the settings whose check does not pass or whose lower bound is not "
               "above 0. ROID+SSA on vs off under label shift stays reported in "
               "label-shift (paper_comparison_ssa_minus_off), not asserted: no "
               "calibration of its on/off spread was run, and its class-sorted streams "
               "need 8-24 seeds a look."))


def _summary(acc):
    return {name: seed_summary(values) for name, values in acc.items()}


@register_claim(
    SLUG, "lr-robustness",
    "Online accuracy over a 10x learning-rate range on the harsh (severity 5) continual "
    "stream, for TENT, TENT with source averaging and TENT+SSA with S fixed from a held-out "
    "stream.",
    paper_statement="SSA is stable up to about 15x the default learning rate (from a paper "
                    "summary; not verified against the PDF).",
    check="Reported, not asserted: with S fixed, SSA's steady step alpha*eta = sqrt(S)/sigma_k "
          "does not depend on eta, so flatness over learning rates holds by construction.",
    reported=True,
)
def _claim_lr_robustness(scale, seed, out_dir):
    cfg = _SCALES[scale]
    lrs = cfg["lrs"]
    table = {"TENT": [], "TENT+averaging": [], "TENT+SSA": [], "no adaptation": []}
    curves = {}
    for i, s in enumerate(claim_seeds(seed, cfg["sweep_seeds"])):
        source, cal, ev = _streams(scale, s, _HARSH, "iid")
        floor, _ = _calibrate(source, cal, cfg, s, lrs[0])
        jobs = [(name, lr, params) for lr in lrs for name, params in (
            ("TENT", {"lr": lr, "ssa": False, "kappa": 0.0}),
            ("TENT+averaging", {"lr": lr, "ssa": False, "kappa": _KAPPA}),
            ("TENT+SSA", {"lr": lr, "ssa": True, "kappa": _KAPPA, "sigma_lambda2": floor}))]
        jobs.append(("no adaptation", None, {"loss": "none"}))
        results = parallel_map(_run, [p for _, _, p in jobs], source=source, stream=ev,
                               cfg=cfg, seed=s)
        rows = {}
        for (name, lr, _), (a, hits, _, _, _) in zip(jobs, results):
            rows.setdefault(name, []).append(a)
            if i == 0 and lr == lrs[-1]:
                curves[name] = hits
        rows["no adaptation"] = rows["no adaptation"] * len(lrs)
        for name in table:
            table[name].append(rows[name])
    means = {name: np.mean(np.asarray(v), axis=0) for name, v in table.items()}
    fig, (ax1, ax2) = new_figure(1, 2, figsize=(10, 3.6))
    for name, values in means.items():
        ax1.plot(lrs, values, "--" if name == "no adaptation" else "-o", label=name)
    ax1.set_xscale("log")
    ax1.set_xticks(lrs, [f"{lr:g}" for lr in lrs])
    ax1.minorticks_off()
    ax1.set_xlabel("learning rate")
    ax1.set_ylabel("online accuracy")
    ax1.set_title(f"severity {_HARSH}, continual, i.i.d. labels")
    ax1.legend(fontsize=7)
    for name, hits in curves.items():
        width = max(1, len(hits) // 40)
        ax2.plot(np.convolve(hits.astype(float), np.ones(width) / width, mode="valid"),
                 label=name, lw=1)
    ax2.set_xlabel("test sample (stream order)")
    ax2.set_ylabel("running accuracy")
    ax2.set_title(f"lr = {lrs[-1]:g}")
    ax2.legend(fontsize=7)
    artifact = save_figure(fig, out_dir, "ssa_lr_robustness")
    ssa = means["TENT+SSA"]
    return ClaimResult(
        observed={"learning_rates": list(lrs),
                  **{f"accuracy_{k.lower().replace('+', '_').replace(' ', '_')}": _rounded(v)
                     for k, v in means.items()},
                  "ssa_range_over_lrs": float(ssa.max() - ssa.min()),
                  "tent_drop_at_largest_lr": float(means["TENT"].max() - means["TENT"][-1]),
                  "n_seeds": cfg["sweep_seeds"]},
        expected={"paper": "stable up to about 15x the default learning rate (unverified)"},
        passed=None, artifacts=[artifact],
        notes=("S is calibrated at the smallest learning rate on the held-out stream and "
               "then fixed, so TENT+SSA's steady step does not depend on the learning rate: "
               "its flat curve is the mechanism, not evidence of a gain. At severity 5 no "
               "method beats the unadapted source on these 8x8 digits."),
    )


def _noise_ramp(seed, levels, *, ssa=True, n_weights=512, steps=160, window=64):
    """SSA's step on synthetic optimiser steps whose gradient noise rises level by level."""
    rng = np.random.default_rng(seed)
    import torch

    lr = 0.01
    filt = SteadyStateFilter(torch.zeros(n_weights, dtype=torch.float64), lr=lr, ssa=ssa,
                             kappa=0.0, steady_scale=_STEADY_SCALE, window=window,
                             max_step=1e6)
    drift = rng.normal(size=n_weights)
    w = torch.zeros(n_weights, dtype=torch.float64)
    medians = []
    for tau in levels:
        alphas = []
        for _ in range(steps):
            grad = torch.as_tensor(drift + tau * rng.normal(size=n_weights))
            w, alpha, _ = filt(w, w - lr * grad)
            alphas.append(alpha)
        medians.append(float(np.median(alphas[window:])))
    return np.asarray(medians)


def _ramp_check(levels, medians):
    """Log-log slope of the median step against the injected noise, and its rank correlation."""
    slope = float(np.polyfit(np.log(levels), np.log(medians), 1)[0])
    rho = float(spearmanr(levels, medians)[0]) if np.ptp(medians) > 0 else float("nan")
    passed = bool(-1.2 <= slope <= -0.8 and np.isfinite(rho) and rho <= -0.9)
    return slope, rho, passed


@register_claim(
    SLUG, "step-vs-noise",
    "The covariance-aware step shrinks when gradient noise rises: alpha_k falls as the "
    "estimated noise sigma_k^2 rises (alpha ~ 1/sigma).",
    paper_statement="The steady state P_{k+1} = P_k gives alpha_k = sqrt(sigma_lambda^2 / "
                    "(eta^2 sigma_k^2)): high gradient noise gives a smaller step (Sec. 4).",
    check=("Reported, not asserted: alpha ~ 1/sigma is the filter's formula, so this is a "
           "unit test (tests/adaptation/test_ssa_claims.py checks the slope). Recorded: on "
           "synthetic optimiser steps with injected noise std tau in [0.5, 8], the log-log "
           "slope of the median step against tau and their Spearman correlation, the same "
           "with the filter off, and the digits stream's figures."),
    reported=True,
)
def _claim_step_vs_noise(scale, seed, out_dir):
    cfg = _SCALES[scale]
    levels = np.geomspace(0.5, 8.0, 5)
    medians = _noise_ramp(seed, levels, window=cfg["window"])
    slope, rho_ramp, _ = _ramp_check(levels, medians)
    off = _noise_ramp(seed, levels, ssa=False, window=cfg["window"])
    slope_off, rho_off, _ = _ramp_check(levels, off)

    s = claim_seeds(seed, 1)[0]
    source, cal, ev = _streams(scale, s, _HARSH, "iid")
    floor, _ = _calibrate(source, cal, cfg, s, cfg["lrs"][0])
    jobs = ([{"lr": lr, "sigma_lambda2": floor} for lr in cfg["lrs"]]
            + [{"lr": cfg["lrs"][0], "batch_size": bs, "sigma_lambda2": floor}
               for bs in cfg["batch_sizes"]])
    results = parallel_map(_run, jobs, source=source, stream=ev, cfg=cfg, seed=s)
    scatter, rhos, by_batch = {}, [], {}
    for params, (_, _, alpha, sigma2, _) in zip(jobs, results):
        if "batch_size" in params:
            full = np.isfinite(sigma2).any()  # the stream filled SSA's window
            by_batch[params["batch_size"]] = (
                float(np.nanmedian(sigma2)) if full else np.nan,
                float(np.median(alpha[cfg["window"]:])) if full else np.nan)
            continue
        live = np.isfinite(sigma2) & (alpha < _MAX_STEP)
        scatter[params["lr"]] = (sigma2[live], alpha[live])
        if live.sum() > 2:
            rhos.append(float(spearmanr(alpha[live], sigma2[live])[0]))

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
            "filter_off": {"ramp_median_step": _rounded(off), "ramp_loglog_slope": slope_off,
                           "ramp_spearman": rho_off},
        },
        expected={"ramp_loglog_slope": "-1 (alpha = sqrt(S / (eta^2 sigma^2)), within 0.2)",
                  "ramp_spearman": "<= -0.9"},
        passed=None,
        artifacts=[artifact],
        notes=(
            "A mechanism check: the ramp tests that the noise estimate (the variance over a "
            "window of the mean weight change divided by eta) tracks injected noise and that "
            "the step follows 1/sigma. On the digits stream the step is a decreasing "
            "function of the estimated noise by construction, so its rank correlation is "
            "reported, not asserted; so is the batch-size sweep (the median estimated noise "
            "does not rise monotonically as batches shrink, since the scalar proxy averages "
            "signed changes over all adapted weights)."
        ),
    )
