"""LAuReL (Menghani, Kumar & Kumar, ICML 2025): claims on parameter cost and quality.

The paper trains ResNet-50 on ImageNet and 1B-4B language models on TPUs. At
CPU scale we check what transfers: the exact parameter overheads (and the
paper's parameter ratio against one extra ResNet-50 block, counted
analytically), and whether RW+LR lowers the test loss of the plain residual
network at the same training budget: the cross-entropy on digits, and the MSE of
a regression to a deep residual teacher on which the student is depth-bound (one
extra block helps; a small residual CNN is reported). The plain
network trained on other initialisation seeds is the placebo (the control);
one extra block is trained alongside at full scale. Every arm runs on the same
data and epochs, the arms of one seed are paired, seeds are added look by look
(:func:`~skpaper.papers.run_comparison`), and the seeds of one arm train as
one batched model (:func:`~skpaper.nn.train_seeds`, the recipe of
:class:`~skpaper.nn.LaurelMLPClassifier`).
"""

import numpy as np

from ._comparison import ArmRun, EffectOfInterest, decide_claim, run_comparison
from ._plotting import new_figure, save_figure
from ._registry import ClaimResult, register_claim, register_paper, shared_cache
from ._stats import claim_seeds, seed_summary

SLUG = "laurel"

register_paper(SLUG, "LAuReL: Learned Augmented Residual Layer", module="skpaper.nn",
               quick_cost_s=140)

#: Arms of every quality comparison; "placebo" is the plain network trained on
#: other initialisation seeds (the negative control).
_ARMS = ("standard", "rw+lr", "placebo")
_EOI = EffectOfInterest(
    -0.01, "ours",
    "a test cross-entropy 0.01 nats lower (about a tenth of the plain network's on digits): "
    "the smallest gain worth LAuReL's extra parameters; the paper's gains are in ImageNet "
    "top-1 (+0.25 points) and C4 loss, not transferable units")

_QUALITY = {
    # looks, epochs, learning rate, blocks, width, rank, training rows kept (None: all),
    # extra arms
    "smoke": dict(looks=(2,), epochs=3, lr=1e-3, n_blocks=4, width=32, rank=8, n_train=400,
                  extra=(), cap=None),
    # 30 epochs: on a calibration setting (digits split 12345, seed key 99, four plain and
    # four RW+LR seeds) the training loss of both is below 0.01 from epoch 30 on for 7 of 8
    # runs, while at 10-20 epochs several runs still sit at 0.05-0.3.
    # lr 1e-3: on the same calibration setting (8 seeds per arm, 30 epochs) lr 3e-3 left
    # runs stuck at test CE 0.2-0.33 (paired SD 0.08), lr 1e-3 fewer.
    # Collapse cap and looks 16, 32, 48, 64: on a second calibration setting
    # (_digits_calibration: split 12345, seed key 99, 6 blocks of width 48, 24 seeds per
    # arm, 30 epochs, lr 1e-3) 3 of 72 runs ended slow or collapsed (test CE 0.164, 0.198
    # and 0.521; the other 69 lie in 0.070-0.133). Each seed's CE therefore enters the
    # comparison capped at 0.15 nats (about the 96th percentile there), declared before
    # the claim ran: with the cap the paired SD is 0.025 (RW+LR - plain) and 0.030
    # (placebo), for which one look at level 0.025 needs 53 and 73 seeds (seeds_needed,
    # 80% power); uncapped 0.089 and 0.037 (685 and 118 seeds). The last of these four
    # looks spends 0.0125, not 0.025, where the same SDs need 62 and 88 seeds: the plan
    # covers the check but leaves the placebo short (a slip found after the claim ran;
    # the looks are kept). The seeds go on past the check's verdict until the placebo is
    # decided (run_comparison), so it fails or passes decisively within these looks.
    "quick": dict(looks=(16, 32, 48, 64), epochs=30, lr=1e-3, n_blocks=8, width=64, rank=8,
                  n_train=None, extra=(), cap=0.15),
    "full": dict(looks=(16, 32, 48, 64), epochs=30, lr=1e-3, n_blocks=8, width=64, rank=8,
                 n_train=None, extra=("+1 block", "rw", "rw+lr+pa"), cap=0.15),
}

#: The deep-teacher regression task of depth-task-gain (see _make_teacher_task): input
#: dimension, teacher depth and width, rows (a fifth held out), epochs, student blocks and
#: width, looks.
_TEACHER = {
    "smoke": dict(looks=(2,), d=8, depth=4, teacher_width=16, n_samples=1000, epochs=2,
                  n_blocks=1, width=16),
    # Chosen on a calibration setting (_TEACHER_CALIBRATION: 12 inputs, teacher depth 10,
    # seed key 99, 6 seeds; no claim's configuration): with 16,000 training rows and 5
    # epochs (1,250 AdamW steps) test MSE / Var(y) is 0.148 for one plain block, 0.133 for
    # two and four, 0.134-0.136 for three and five, so depth pays up to two blocks and the
    # one-block student is capacity-bound: "+1 block" lowers its log test MSE by 0.10 (SD
    # 0.036) there. Looks from the calibration's paired SD (see _TEACHER_CALIBRATION).
    "quick": dict(looks=(4, 8, 16), d=16, depth=12, teacher_width=32, n_samples=20000,
                  epochs=5, n_blocks=1, width=32),
    "full": dict(looks=(8, 16, 32), d=16, depth=12, teacher_width=32, n_samples=50000,
                 epochs=10, n_blocks=1, width=32),
}
_TEACHER_CALIBRATION = dict(looks=(2,), d=12, depth=10, teacher_width=32, n_samples=20000,
                            epochs=5, n_blocks=1, width=32)
#: Relative test-MSE gain of interest (log scale).
_TEACHER_EOI = EffectOfInterest(
    -0.02, "ours",
    "a test MSE 2% lower (log ratio -0.02): the relative gain of RW+LR over the 24-layer "
    "baseline in the paper's C4 ablation (test loss 3.0159 -> 2.9531, -2.1%), carried over "
    "as a relative loss reduction; a tenth of what one extra block buys on the calibration "
    "setting")

_CONV = {
    "smoke": dict(n_seeds=2, epochs=2, n_blocks=2, width=8, rank=2, n_train=300),
    "quick": dict(n_seeds=2, epochs=8, n_blocks=4, width=16, rank=4, n_train=None),
    "full": dict(n_seeds=5, epochs=40, n_blocks=8, width=32, rank=8, n_train=None),
}


def _make_teacher_task(n_samples, d, depth, teacher_width, seed):
    """Regression on a deep residual tanh teacher: ``y = v . h_depth(x)``, standardised.

    ``h_0 = x W_in``; ``h_{k+1} = h_k + tanh(1.5 h_k W_k)`` with Gaussian ``W`` scaled by
    ``1/sqrt(fan_in)``; ``x ~ N(0, I_d)``. A student with fewer or narrower blocks than the
    teacher is capacity-bound, so depth and the residual path's capacity matter.
    """
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n_samples, d))
    h = X @ rng.normal(size=(d, teacher_width)) / np.sqrt(d)
    for _ in range(depth):
        h = h + np.tanh(1.5 * h @ rng.normal(size=(teacher_width, teacher_width))
                        / np.sqrt(teacher_width))
    y = h @ rng.normal(size=teacher_width) / np.sqrt(teacher_width)
    return X.astype(np.float32), ((y - y.mean()) / y.std()).astype(np.float32)


def _resnet50_counts():
    """Parameters of torchvision's ResNet-50 layout, its block output widths, one stage-3 block."""

    def bottleneck(c_in, mid, c_out, project):
        # three conv kernels without bias, each followed by BatchNorm (2 per channel)
        n = c_in * mid + 9 * mid * mid + mid * c_out + 2 * (2 * mid + c_out)
        return n + (c_in * c_out + 2 * c_out if project else 0)

    total, widths, c_in = 3 * 64 * 49 + 2 * 64, [], 64
    for mid, c_out, n_blocks in ((64, 256, 3), (128, 512, 4), (256, 1024, 6), (512, 2048, 3)):
        for b in range(n_blocks):
            total += bottleneck(c_in if b == 0 else c_out, mid, c_out, b == 0)
            widths.append(c_out)
        c_in = c_out
    total += 2048 * 1000 + 1000
    return total, widths, bottleneck(1024, 256, 1024, False)


def _n_params(module):
    return sum(p.numel() for p in module.parameters())


@register_claim(SLUG, "parameter-overhead",
                "LAuReL adds exactly 2 (RW), 2rD (LR) and 2rD+k (PA) parameters per block, far "
                "fewer than one extra block: on ResNet-50, RW+LR (r=16) matches +1 layer with "
                "2.6x fewer added parameters.",
                paper_statement="RW adds 2 parameters per block, LR 2rD, PA 2rD+k; on "
                                "ResNet-50 RW+LR (r=16) adds 1.68% against 4.37% for one "
                                "extra layer, 2.6x fewer (Sec. 3, Table 1).",
                check="Reported, not asserted: the counts are arithmetic (checked exactly in "
                      "the unit tests); the ResNet-50 percentages are counted analytically.",
                reported=True)
def _claim_parameter_overhead(scale, seed, out_dir):
    from ..nn import laurel_param_count, make_laurel_convnet, make_laurel_mlp

    width, n_blocks, rank, k_prev = 64, 8, 8, 3
    closed_form = {"rw": 2, "lr": 2 * rank * width, "pa": 2 * rank * width + k_prev,
                   "rw+lr": 2 + 2 * rank * width, "rw+lr+pa": 2 + 2 * rank * width + k_prev}
    base = _n_params(make_laurel_mlp(64, 10, width, n_blocks, "standard"))
    plus_one = _n_params(make_laurel_mlp(64, 10, width, n_blocks + 1, "standard")) - base
    measured, exact = {}, True
    for variant, per_block in closed_form.items():
        net = make_laurel_mlp(64, 10, width, n_blocks, variant, rank=rank, k_prev=k_prev)
        measured[variant] = (_n_params(net) - base) // n_blocks
        exact &= (_n_params(net) - base == n_blocks * per_block
                  == n_blocks * laurel_param_count(width, variant, rank, k_prev))
    conv_base = _n_params(make_laurel_convnet((1, 8, 8), 10, 16, 4, "standard"))
    conv_rwlr = _n_params(make_laurel_convnet((1, 8, 8), 10, 16, 4, "rw+lr", rank=4))
    exact &= conv_rwlr - conv_base == 4 * (2 + 2 * 4 * 16)

    total, widths, extra_block = _resnet50_counts()
    resnet_rwlr = sum(laurel_param_count(d, "rw+lr", rank=16) for d in widths)
    resnet_ratio = extra_block / resnet_rwlr
    mlp_ratio = plus_one / (n_blocks * closed_form["rw+lr"])

    fig, (ax1, ax2) = new_figure(1, 2, figsize=(9, 3.4))
    labels = ["rw", "lr", "pa", "rw+lr", "rw+lr+pa", "+1 block"]
    values = [100 * n_blocks * measured[v] / base for v in labels[:-1]] + [100 * plus_one / base]
    ax1.bar(labels, values, color=["tab:blue"] * 5 + ["tab:gray"])
    ax1.set_yscale("log")
    ax1.set_ylabel("added parameters (% of network)")
    ax1.set_title(f"residual MLP, D={width}, {n_blocks} blocks, r={rank}")
    ax1.tick_params(axis="x", rotation=30)
    ax2.bar(["RW+LR\ncounted", "RW+LR\npaper", "+1 block\ncounted", "+1 layer\npaper"],
            [100 * resnet_rwlr / total, 1.68, 100 * extra_block / total, 4.37],
            color=["tab:blue", "lightsteelblue", "tab:gray", "lightgray"])
    ax2.set_ylabel("added parameters (% of ResNet-50)")
    ax2.set_title("ResNet-50, RW+LR with r=16")
    artifact = save_figure(fig, out_dir, "laurel_parameter_overhead")
    return ClaimResult(
        observed={
            "per_block_rw": measured["rw"], "per_block_lr": measured["lr"],
            "per_block_pa": measured["pa"], "per_block_rw_lr": measured["rw+lr"],
            "per_block_rw_lr_pa": measured["rw+lr+pa"], "counts_match_formulas": exact,
            "mlp_plus_one_block": plus_one, "mlp_ratio_plus_one_over_rw_lr": mlp_ratio,
            "resnet50_params": total, "resnet50_plus_one_block_pct": 100 * extra_block / total,
            "resnet50_rw_lr_pct": 100 * resnet_rwlr / total,
            "resnet50_ratio_plus_one_over_rw_lr": resnet_ratio,
        },
        expected={
            "per_block_rw": 2, "per_block_lr": 2 * rank * width,
            "per_block_pa": 2 * rank * width + k_prev,
            "resnet50_plus_one_block_pct": 4.37, "resnet50_rw_lr_pct": 1.68,
            "resnet50_ratio_plus_one_over_rw_lr": 2.6,
            "criterion": "counts equal the formulas exactly and RW+LR adds fewer "
                         "parameters than one extra block",
        },
        passed=None,
        artifacts=[artifact],
        notes=(
            "Counts are exact at every scale. The ResNet-50 figures are counted analytically "
            "(torchvision layout, 25,557,032 parameters): one stage-3 bottleneck block is "
            "+4.37%, as in the paper, but RW+LR with r=16 on the outputs of all 16 blocks "
            "adds 2rD+2 per block = 1.89%, not the paper's 1.68%, so the ratio is 2.31x "
            "rather than 2.6x; the paper does not say which blocks or widths it counted."
        ),
    )


def _train_arm(factory, data, seeds, epochs, kind="classify", lr=3e-3):
    """Test scores of one architecture over several seeds, trained as one batched
    model (:func:`~skpaper.nn.train_seeds`, the recipe of
    :class:`~skpaper.nn.LaurelMLPClassifier`: AdamW, lr 3e-3 unless given, weight decay
    1e-4 on matrices, batches of 64).

    Returns the per-seed test cross-entropy and accuracy (``kind="classify"``), or the
    per-seed log test MSE and test MSE (``kind="regress"``, squared-error training).
    """
    import torch

    from ..nn import predict_seeds, train_seeds

    X_train, y_train, X_test, y_test = data
    regress = kind == "regress"
    loss = torch.nn.functional.mse_loss if regress else torch.nn.functional.cross_entropy
    nets = train_seeds(factory, X_train, y_train[:, None] if regress else y_train, loss,
                       list(seeds), epochs=epochs, batch_size=64, lr=lr, optimizer="adamw",
                       weight_decay=lambda name, p: 1e-4 if p.ndim >= 2 else 0.0)
    out = torch.as_tensor(predict_seeds(nets, X_test), dtype=torch.float64)
    if regress:
        mse = ((out[..., 0] - torch.as_tensor(y_test, dtype=torch.float64)) ** 2).mean(1)
        return [float(np.log(m)) for m in mse], [float(m) for m in mse]
    target = torch.as_tensor(y_test, dtype=torch.long)
    ce = [float(torch.nn.functional.cross_entropy(lg, target)) for lg in out]
    acc = [float((lg.argmax(1) == target).double().mean()) for lg in out]
    return ce, acc


def _batched_arm(task, scale, variant, make_module, data, epochs, kind, lr, cap=None):
    """``arm(seeds) -> [ArmRun]`` for run_comparison(batched=True); the placebo trains the
    plain network on other initialisation seeds. With ``cap``, each seed's figure enters
    the comparison as ``min(figure, cap)`` (collapsed runs)."""
    n_params = _n_params(make_module(variant))
    steps = epochs * -(-len(data[0]) // 64)

    def run(seeds):
        train = [claim_seeds(s, 1, 1)[0] for s in seeds] if variant == "placebo" else seeds
        values, second = _cached_fits(task, scale, variant, tuple(train))
        # the second figure (accuracy or MSE) of each seed, read back by _quality without
        # training the seeds of all looks again as one batch
        _SECOND.update({(task, scale, variant, s): x for s, x in zip(seeds, second)})
        return [ArmRun(v if cap is None else min(v, cap), parameters=n_params,
                       train_steps=steps, train_examples=len(data[0]),
                       extra={}) for v in values]

    _FACTORIES[task, scale, variant] = (lambda: make_module(variant), data, epochs, kind, lr)
    return run


_FACTORIES = {}
_SECOND = {}


@shared_cache(maxsize=64)
def _cached_fits(task, scale, variant, seeds):
    factory, data, epochs, kind, lr = _FACTORIES[task, scale, variant]
    return _train_arm(factory, data, seeds, epochs, kind, lr)


def _quality(task, scale, seed, variants, make_module, data, epochs, looks, title, out_dir,
             name, notes, kind="classify", eoi=_EOI, lr=3e-3, cap=None):
    """Sequential paired seeds: RW+LR against the plain network, the placebo as control."""
    arms = {v: _batched_arm(task, scale, v, make_module, data, epochs, kind, lr, cap)
            for v in variants}
    metric = "log test MSE" if kind == "regress" else "test cross-entropy (nats)"
    cmp = run_comparison(arms, method="rw+lr", baseline="standard", control_method="placebo",
                         seed=seed, looks=looks, effect_of_interest=eoi, alternative="less",
                         batched=True, metric=metric)
    values = cmp.values
    second = {v: [_SECOND[task, scale, v, s] for s in cmp.seeds] for v in variants}
    asides = {v: decide_claim(values[v], values["standard"], effect_of_interest=eoi,
                              alternative="less").decision.to_dict()
              for v in variants if v not in ("standard", "rw+lr")}
    base = _n_params(make_module("standard"))

    artifact = _ce_plot(values, {v: _n_params(make_module(v)) - base for v in variants},
                        title, out_dir, name, metric)
    key = "test_mse" if kind == "regress" else "accuracy"
    capped = {} if cap is None else {"collapse_cap": cap, "runs_at_cap": {
        _key(v): int(np.sum(np.asarray(values[v]) >= cap)) for v in variants}}
    return cmp.claim_result(
        observed={**capped, key: {_key(v): seed_summary(a) for v, a in second.items()},
                  ("log_mse_minus_standard" if kind == "regress" else "ce_minus_standard"):
                      {_key(v): d for v, d in asides.items()},
                  "added_params": {_key(v): _n_params(make_module(v)) - base
                                   for v in variants}},
        artifacts=[artifact], notes=notes)


def _ce_plot(ce, added, title, out_dir, name, metric="test cross-entropy"):
    """Test cross-entropy (or another test loss) of every variant against the parameters it
    adds."""
    fig, ax = new_figure(figsize=(5, 3.4))
    for variant, values in ce.items():
        x = max(added[variant], 1)
        ax.errorbar(x, np.mean(values), yerr=np.std(values), fmt="o", capsize=3,
                    color="tab:blue" if variant.startswith("rw") else "tab:gray")
        ax.annotate(variant, (x, np.mean(values)), textcoords="offset points",
                    xytext=(5, 5), fontsize=8)
    ax.set_xscale("log")
    ax.set_xlabel("parameters added to the plain network (standard plotted at 1)")
    ax.set_ylabel(f"{metric} (mean, std over seeds)")
    ax.set_title(title, fontsize=9)
    return save_figure(fig, out_dir, name)


def _key(variant):
    return {"+1 block": "plus_one_block", "1 block": "one_block"}.get(
        variant, variant.replace("+", "_"))


_GAIN_CHECK = ("Sequential paired init seeds (seeds trained as one batched model): upper "
               "bound of mean(CE(RW+LR) - CE(standard)) < 0, each seed's test CE capped at "
               "0.15 nats at quick and full (collapsed runs, cap from a calibration split); "
               "contradicted when the lower bound is above -0.01 nats.")
_PLACEBO = "LAuReL off: the plain network retrained on other initialisation seeds, same check"


@register_claim(SLUG, "digits-gain",
                "On load_digits, a residual MLP whose skips are RW+LR reaches a lower test "
                "cross-entropy than the plain residual network at the same training budget.",
                paper_statement="RW+LR r=16 lifts ResNet-50 top-1 from 74.95 to 75.20, as "
                                "much as +1 layer, with 2.6x fewer added parameters (Table 1).",
                check=_GAIN_CHECK, control=_PLACEBO, effect_of_interest=_EOI)
def _claim_digits(scale, seed, out_dir):
    from ..datasets import load_digits_split
    from ..nn import make_laurel_mlp

    cfg = _QUALITY[scale]
    d = load_digits_split(test_size=0.5, random_state=seed)
    data = (d.X_train[: cfg["n_train"]], d.y_train[: cfg["n_train"]], d.X_test, d.y_test)

    def make_module(variant):
        extra = int(variant == "+1 block")
        plain = variant in ("+1 block", "placebo")
        return make_laurel_mlp(64, 10, cfg["width"], cfg["n_blocks"] + extra,
                               "standard" if plain else variant, rank=cfg["rank"])

    return _quality(
        ("digits", seed), scale, seed, _ARMS + cfg["extra"], make_module, data, cfg["epochs"],
        cfg["looks"], f"digits, {cfg['n_blocks']} blocks of width {cfg['width']}, "
                      f"{cfg['epochs']} epochs, lr {cfg['lr']:g}", out_dir, "laurel_digits",
        "Digits split 50/50 (one split; seeds vary the initialisation and batch order); "
        "every variant gets the same epochs, batch size and AdamW settings. At lr 3e-3 "
        "(the estimators' default) some runs of every arm stopped in a poor optimum (test "
        "CE 0.2-0.36 against about 0.11), which a paired t bound cannot absorb; lr 1e-3, "
        "30 epochs, the looks and the collapse cap were chosen on calibration splits (see "
        "_QUALITY): each seed's test CE enters the check and the control as min(CE, "
        f"{cfg['cap']}) nats (runs_at_cap counts the runs it clips; the figure is a "
        "winsorised mean, so one collapsed run cannot decide the bound)."
        + (" Smoke trains 3 epochs on 400 rows: not meaningful."
           if scale == "smoke" else ""), lr=cfg["lr"], cap=cfg["cap"])


@register_claim(SLUG, "depth-task-gain",
                "On regression to a deep residual teacher, where the student is bound by "
                "depth (one extra block lowers its test MSE), a residual MLP with RW+LR "
                "skips reaches a lower test MSE than the plain residual network at the same "
                "training budget.",
                paper_statement="LAuReL improves quality at a small parameter cost; on C4 "
                                "RW+LR (2.9531) beats the 24-layer baseline (3.0159) and a "
                                "network 4 layers deeper (2.9963) (Sec. 4, ablation table).",
                check="Sequential paired init seeds (seeds trained as one batched model): "
                      "upper bound of mean(log test MSE(RW+LR) - log test MSE(standard)) < "
                      "0; contradicted when the lower bound is above -0.02.",
                control=_PLACEBO, effect_of_interest=_TEACHER_EOI)
def _claim_teacher(scale, seed, out_dir):
    cfg = _TEACHER[scale]
    return _teacher_quality(cfg, scale, seed, out_dir)


def _teacher_quality(cfg, scale, seed, out_dir, key=()):
    from ..nn import make_laurel_mlp

    X, y = _make_teacher_task(cfg["n_samples"], cfg["d"], cfg["depth"], cfg["teacher_width"],
                              claim_seeds(seed, 1, 3, *key)[0])
    n_train = cfg["n_samples"] * 4 // 5
    data = (X[:n_train], y[:n_train], X[n_train:], y[n_train:])

    def make_module(variant):
        blocks = cfg["n_blocks"] + int(variant == "+1 block")
        plain = variant in ("+1 block", "placebo")
        return make_laurel_mlp(cfg["d"], 1, cfg["width"], blocks,
                               "standard" if plain else variant, rank=8)

    return _quality(
        ("teacher", seed, key), scale, seed, _ARMS + ("+1 block",), make_module, data,
        cfg["epochs"], cfg["looks"],
        f"deep teacher (depth {cfg['depth']}), {cfg['n_blocks']} student block(s) of width "
        f"{cfg['width']}, {cfg['epochs']} epochs", out_dir, "laurel_teacher",
        f"Replaces the two-spiral task, which was noisy at quick and solved by both arms at "
        f"convergence. One teacher per run ({cfg['d']} inputs, {cfg['depth']} residual tanh "
        f"layers of width {cfg['teacher_width']}, y standardised), {n_train} training rows, "
        f"{cfg['n_samples'] - n_train} test rows; seeds vary the initialisation and batch "
        "order. log_mse_minus_standard.plus_one_block is the depth reference: it says "
        "whether this student is depth-bound at this budget, i.e. whether the bed can show "
        "a gain of the size of one extra block (the paper's comparison)."
        + (" Smoke: 800 rows, 2 epochs, not meaningful." if scale == "smoke" else ""),
        kind="regress", eoi=_TEACHER_EOI)


def _teacher_calibration(n_seeds=6):
    """Log test MSE per arm on the calibration setting (teacher and seeds from key 99).

    Run once to choose the quick configuration and looks; it shares no configuration with
    the claim (12 inputs and teacher depth 10 against 16 and 12). Measured (6 seeds, load
    average 13 on 2 cores, ~45 s per arm): test MSE plain 1 block 0.142-0.160, RW+LR 1
    block +0.037 log (paired SD 0.025), RW +0.003 (SD 0.005), +1 block -0.085 (SD 0.037);
    with 2 student blocks +1 block is -0.005, with 4 blocks +0.005 (not depth-bound).
    """
    import torch

    from ..nn import make_laurel_mlp

    cfg = _TEACHER_CALIBRATION
    X, y = _make_teacher_task(cfg["n_samples"], cfg["d"], cfg["depth"],
                              cfg["teacher_width"], claim_seeds(0, 1, 99)[0])
    n_train = cfg["n_samples"] * 4 // 5
    data = (X[:n_train], y[:n_train], X[n_train:], y[n_train:])
    seeds = claim_seeds(0, n_seeds, 99, 1)
    arms = {"standard": (cfg["n_blocks"], "standard"), "rw+lr": (cfg["n_blocks"], "rw+lr"),
            "rw": (cfg["n_blocks"], "rw"), "+1 block": (cfg["n_blocks"] + 1, "standard")}
    with torch.random.fork_rng():
        return {arm: _train_arm(lambda b=blocks, v=variant: make_laurel_mlp(
                    cfg["d"], 1, cfg["width"], b, v, rank=8), data, seeds, cfg["epochs"],
                    "regress")[0]
                for arm, (blocks, variant) in arms.items()}


def _digits_calibration(n_seeds=16, width=48, n_blocks=6, epochs=30, lr=1e-3):
    """Test cross-entropy per seed on the digits calibration setting.

    Split 12345, seeds from key 99, 6 blocks of width 48 (the claim: split = the claim's
    seed, its own seed key, 8 blocks of width 64); run once to choose the claim's looks (see
    _QUALITY). Returns the per-seed CE of "standard", "rw+lr" and "placebo" (plain network
    on other seeds), uncapped.
    """
    import torch

    from ..datasets import load_digits_split
    from ..nn import make_laurel_mlp

    d = load_digits_split(test_size=0.5, random_state=12345)
    data = (d.X_train, d.y_train, d.X_test, d.y_test)
    seeds = claim_seeds(0, n_seeds, 99)
    other = claim_seeds(0, n_seeds, 99, 1)
    with torch.random.fork_rng():
        return {arm: _train_arm(lambda v=variant: make_laurel_mlp(
                    64, 10, width, n_blocks, v, rank=8), data, s, epochs, lr=lr)[0]
                for arm, variant, s in (("standard", "standard", seeds),
                                        ("rw+lr", "rw+lr", seeds),
                                        ("placebo", "standard", other))}


@register_claim(SLUG, "convnet-gain",
                "A small residual CNN with RW+LR skips (low-rank maps over channels, applied "
                "to the projected shortcut when downsampling) against the plain residual CNN "
                "and one extra block on digits images at the same budget.",
                paper_statement="RW+LR r=16 lifts ResNet-50 top-1 from 74.95 to 75.20 on "
                                "ImageNet, as much as +1 layer (Table 1).",
                check="Reported, not asserted: two seeds at quick scale are too few for a "
                      "bound; the paired gains are recorded.",
                reported=True)
def _claim_convnet(scale, seed, out_dir):
    from ..datasets import load_digits_split
    from ..nn import LaurelConvNetClassifier, make_laurel_convnet
    from ..utils import parallel_map

    cfg = _CONV[scale]
    d = load_digits_split(test_size=0.5, random_state=seed)
    data = (d.X_train[: cfg["n_train"]], d.y_train[: cfg["n_train"]], d.X_test, d.y_test)
    device = "auto" if scale == "full" else "cpu"
    variants = ("standard", "rw+lr", "+1 block")

    def make_estimator(variant, s):
        extra = int(variant == "+1 block")
        return LaurelConvNetClassifier(
            n_blocks=cfg["n_blocks"] + extra, width=cfg["width"], rank=cfg["rank"],
            variant="standard" if extra else variant, max_epochs=cfg["epochs"],
            batch_size=64, lr=3e-3, random_state=s, device=device)

    def make_module(variant, extra):
        return make_laurel_convnet((1, 8, 8), 10, cfg["width"], cfg["n_blocks"] + extra,
                                   "standard" if extra else variant, rank=cfg["rank"])

    seeds = claim_seeds(seed, cfg["n_seeds"])
    jobs = [(v, s) for v in variants for s in seeds]
    results = parallel_map(_fit_and_score, jobs, make_estimator=make_estimator, data=data)
    ce = {v: [r["ce"] for (vv, _), r in zip(jobs, results) if vv == v] for v in variants}
    accuracy = {v: [r["accuracy"] for (vv, _), r in zip(jobs, results) if vv == v]
                for v in variants}
    base = _n_params(make_module("standard", 0))
    added = {v: _n_params(make_module(v, int(v == "+1 block"))) - base for v in variants}

    artifact = _ce_plot(ce, added, f"digits 8x8 CNN, {cfg['n_blocks']} blocks of "
                                   f"{cfg['width']} channels, {cfg['epochs']} epochs",
                        out_dir, "laurel_convnet")
    return ClaimResult(
        observed={"ce": {_key(v): seed_summary(c) for v, c in ce.items()},
                  "accuracy": {_key(v): seed_summary(a) for v, a in accuracy.items()},
                  "ce_minus_standard": {_key(v): decide_claim(
                      ce[v], ce["standard"], effect_of_interest=_EOI,
                      alternative="less").decision.to_dict()
                      for v in variants if v != "standard"},
                  "added_params": {_key(v): a for v, a in added.items()}, "seeds": seeds},
        expected={"reported": "paired CE differences against the plain CNN, no verdict"},
        passed=None, artifacts=[artifact],
        arms={v: {"parameters": base + added[v], "train_steps": cfg["epochs"],
                  "train_examples": len(data[0])} for v in variants},
        notes="The paper's vision result is ResNet-50 on ImageNet; this is the CPU-sized "
              "analogue on 8x8 digits (the only bundled image set of useful size); the extra "
              "block of '+1 block' is a plain one after the downsampling block." + (
                  " Smoke: 300 rows, 2 epochs, not meaningful." if scale == "smoke" else ""),
    )


def _fit_and_score(job, make_estimator, data):
    """Train one (variant, seed) job; return its test cross-entropy and accuracy."""
    from sklearn.metrics import log_loss

    variant, seed = job
    X_train, y_train, X_test, y_test = data
    est = make_estimator(variant, seed).fit(X_train, y_train)
    proba = est.predict_proba(X_test)
    return {"ce": float(log_loss(y_test, proba, labels=est.classes_)),
            "accuracy": float(np.mean(est.classes_[proba.argmax(axis=1)] == y_test))}
