"""Focus Instruction Tuning (Lamb et al., ICML 2025): steering a model to focus on a feature.

The paper fine-tunes 7-8B instruction-tuned LLMs on SMNLI (MNLI pairs whose
genre is spuriously tied to the label), SpuriousSentiment and BBQ. At CPU scale
the same data-generating process runs on synthetic tasks
(:func:`~skpaper.datasets.make_spurious_task`): six "genres" tied to one of
three labels with probability ``rho = 0.9`` in training, and test splits where
the tie holds (iid), vanishes (low), points to another label (flipped), or the
genres are new (unseen, drawn uncorrelated so that chance is exactly 1/3).

Two models are trained inside the claims, from scratch:

- tabular: :class:`~skpaper.language.FocusInstructionTuner` around a
  histogram gradient-boosting classifier, with and without the decoupling
  adaptation, against the same classifier trained on ``y`` (vanilla) and on the
  core columns alone (an oracle that is told which columns are spurious);
- text: :class:`~skpaper.language.FocusInstructionLM`, a 2-layer word-level
  causal transformer fine-tuned with paraphrased natural-language focus
  instructions on an NLI-like task (quantifier monotonicity: "all dogs bark ;
  some dogs bark" is an entailment) with the genre word in front. Its
  empty-instruction answers serve as the vanilla reference: that instruction is
  trained on ``y`` with the genre in place, as plain fine-tuning is.
"""

import functools

import numpy as np

from ._plotting import new_figure, save_figure
from ._registry import ClaimResult, register_claim, register_paper

SLUG = "focus-instruction-tuning"

register_paper(SLUG, "Focus On This, Not That! Steering LLMs with Adaptive Feature Specification",
               module="skpaper.language")

_K = 3
_RHO = 0.9
_N_GENRES = 6
_N_CORE = 4
_SPLITS = ("iid", "low", "flipped", "unseen")
_SEEN = ("iid", "low", "flipped")
_FOCUS_S = ("focus_S", "focus_S_ignore_C")

# Claim thresholds (the issue's; the text variant's are the same criteria at looser margins).
_STEER_MIN = 0.95
_SPREAD_MAX = 0.02
_VANILLA_DROP_MIN = 0.03
_CHANCE_MARGIN = 0.05
_TEXT_STEER_MIN = 0.85
_TEXT_SPREAD_MAX = 0.05
_TEXT_CHANCE_MARGIN = 0.10
_TEXT_CORE_MIN = 0.80

_SCALES = {
    # tab_*: seeds, training/test rows and boosting iterations of the tabular models; text_*:
    # seeds, training texts, test texts per split, LM (layers, width, epochs) and learning
    # rate. "full" adds plain FIT and a separately trained vanilla LM for the text variant,
    # and uses a GPU when present.
    "smoke": dict(tab_seeds=1, tab_train=900, tab_test=300, tab_iter=30, text_seeds=1,
                  text_train=450, text_test=45, text_lm=(1, 32, 4), text_lr=5e-3,
                  text_plain=False),
    "quick": dict(tab_seeds=3, tab_train=6000, tab_test=1500, tab_iter=100, text_seeds=1,
                  text_train=3000, text_test=600, text_lm=(2, 64, 15), text_lr=3e-3,
                  text_plain=False),
    "full": dict(tab_seeds=5, tab_train=12000, tab_test=3000, tab_iter=200, text_seeds=3,
                 text_train=6000, text_test=900, text_lm=(2, 64, 20), text_lr=3e-3,
                 text_plain=True),
}


def _test_splits(n, kind, seed):
    """The four test splits; the unseen genres are uncorrelated with the label (chance = 1/K)."""
    from skpaper.datasets import make_spurious_task

    return {split: make_spurious_task(n, rho=1.0 / _K if split == "unseen" else _RHO,
                                      n_genres=_N_GENRES, split=split, kind=kind,
                                      random_state=seed + i)
            for i, split in enumerate(_SPLITS)}


def _mean_reports(reports):
    """Average a list of ``{split: {type: acc}}`` over seeds."""
    return {split: {t: float(np.mean([r[split][t] for r in reports])) for t in reports[0][split]}
            for split in reports[0]}


def _tabular_run(cfg, seed):
    from sklearn.ensemble import HistGradientBoostingClassifier

    from skpaper.datasets import make_spurious_task
    from skpaper.language import FocusInstructionTuner

    X, y, _ = make_spurious_task(cfg["tab_train"], rho=_RHO, n_genres=_N_GENRES,
                                 random_state=seed)
    tests = _test_splits(cfg["tab_test"], "tabular", seed + 1)
    spurious = list(range(_N_CORE, _N_CORE + _N_GENRES))

    def base():
        return HistGradientBoostingClassifier(max_iter=cfg["tab_iter"], random_state=seed)

    vanilla = base().fit(X, y)
    oracle = base().fit(X[:, :_N_CORE], y)
    out = {"vanilla": {s: {"empty": float(np.mean(vanilla.predict(Xt) == yt))}
                       for s, (Xt, yt, _) in tests.items()},
           "oracle_core_only": {s: {"empty": float(np.mean(oracle.predict(Xt[:, :_N_CORE]) == yt))}
                                for s, (Xt, yt, _) in tests.items()}}
    for name, decouple in (("fit", False), ("fit_decoupled", True)):
        model = FocusInstructionTuner(base(), spurious_columns=spurious,
                                      decouple_excluded=decouple, random_state=seed).fit(X, y)
        out[name] = {s: model.focus_accuracy_report(Xt, yt, ys) for s, (Xt, yt, ys) in tests.items()}
    return out


def _text_run(cfg, seed, device):
    from skpaper.datasets import make_spurious_task
    from skpaper.language import FocusInstructionLM, LanguageModel, WordTokenizer

    layers, width, epochs = cfg["text_lm"]
    texts, y, _ = make_spurious_task(cfg["text_train"], rho=_RHO, n_genres=_N_GENRES, kind="nli",
                                     random_state=seed)
    tests = _test_splits(cfg["text_test"], "nli", seed + 1)

    def lm():
        return LanguageModel(tokenizer=WordTokenizer(), n_layers=layers, d_model=width,
                             n_heads=4, max_len=40, max_epochs=epochs, batch_size=64,
                             lr=cfg["text_lr"], device=device, random_state=seed)

    variants = [("text_fit_decoupled", True)] + ([("text_fit", False)] if cfg["text_plain"] else [])
    out = {}
    for name, decouple in variants:
        model = FocusInstructionLM(lm(), decouple_excluded=decouple, random_state=seed)
        model.fit(texts, y)
        out[name] = {s: model.focus_accuracy_report(Xt, yt, ys) for s, (Xt, yt, ys) in tests.items()}
    if cfg["text_plain"]:
        # A separately fine-tuned vanilla LM: the input alone, no instruction.
        vanilla = FocusInstructionLM(lm(), focus_types=["empty"], default_focus="empty",
                                     random_state=seed).fit(texts, y)
        out["text_vanilla"] = {s: {"empty": vanilla.score(Xt, yt)}
                               for s, (Xt, yt, _) in tests.items()}
    return out


@functools.lru_cache(maxsize=4)
def _experiment(scale, seed):
    """Train every model of the paper's comparison once; shared by the claims.

    Returns the per-seed reports (``{model: [{split: {type: acc}}, ...]}``) and their means.
    """
    from skpaper.utils import spawn_seeds

    cfg = _SCALES[scale]
    # smoke and quick stay on the CPU so that their figures are the same on every machine.
    device = "auto" if scale == "full" else "cpu"
    tab_seeds, text_seeds = spawn_seeds(seed, 2)
    runs = [_tabular_run(cfg, s) for s in spawn_seeds(tab_seeds, cfg["tab_seeds"])]
    runs_text = [_text_run(cfg, s, device) for s in spawn_seeds(text_seeds, cfg["text_seeds"])]
    per_seed = {name: [r[name] for r in group]
                for group in (runs, runs_text) for name in group[0]}
    return {name: _mean_reports(reports) for name, reports in per_seed.items()}, per_seed


def _round(report):
    return {split: {t: round(v, 4) for t, v in row.items()} for split, row in report.items()}


def _plot_types(ax, report, title):
    """Grouped bars: focus accuracy of every type, one bar per split."""
    types = list(report["iid"])
    width = 0.8 / len(_SPLITS)
    x = np.arange(len(types))
    for i, split in enumerate(_SPLITS):
        ax.bar(x + (i - 1.5) * width, [report[split][t] for t in types], width, label=split)
    ax.axhline(1.0 / _K, lw=1, ls="--", color="grey")
    ax.set_xticks(x, [t.replace("_", " ") for t in types], rotation=30, ha="right", fontsize=8)
    ax.set_ylim(0, 1.22)
    ax.set_yticks(np.linspace(0, 1, 6))
    ax.set_title(title, fontsize=9)


def _focus_figure(results, out_dir, name, models):
    fig, axes = new_figure(1, len(models), figsize=(4.6 * len(models), 3.8), sharey=True)
    axes = np.atleast_1d(axes)
    for ax, (key, title) in zip(axes, models):
        _plot_types(ax, results[key], title)
    axes[0].set_ylabel("focus accuracy")
    axes[0].legend(fontsize=7, ncol=4, loc="upper center")
    return save_figure(fig, out_dir, name)


def _steer(report, splits=_SEEN):
    return min(report[s][t] for s in splits for t in _FOCUS_S)


def _spread(report, focus="focus_C_ignore_S"):
    values = [report[s][focus] for s in _SEEN]
    return max(values) - min(values)


def _unseen_focus_s(report):
    return float(np.mean([report["unseen"][t] for t in _FOCUS_S]))


@register_claim(SLUG, "steerability",
                "A focus-tuned model follows focus(S) instructions: on seen spurious values its "
                "focus(S) accuracy is >= 0.95 on the iid, low and flipped splits.")
def _claim_steerability(scale, seed, out_dir):
    results, per_seed = _experiment(scale, seed)
    observed = {
        "min_focus_S_acc_fit": round(_steer(results["fit"]), 4),
        "min_focus_S_acc_fit_decoupled": round(_steer(results["fit_decoupled"]), 4),
        "fit": _round(results["fit"]),
        "n_seeds": len(per_seed["fit"]),
    }
    passed = min(observed["min_focus_S_acc_fit"],
                 observed["min_focus_S_acc_fit_decoupled"]) >= _STEER_MIN
    artifact = _focus_figure(results, out_dir, "focus_accuracy_tabular",
                             [("fit", "FIT"), ("fit_decoupled", "FIT + decoupling")])
    return ClaimResult(
        observed=observed,
        expected={"min_focus_S_acc": f">= {_STEER_MIN} (both focus(S) types, seen splits)",
                  "paper": "FIT about 85-100% on all six types on SMNLI (radar figure)"},
        passed=bool(passed), artifacts=[artifact],
        notes=("Tabular analogue: six genres tied to three labels (rho=0.9), the instruction is "
               "a one-hot code appended to the features, histogram gradient boosting learns "
               "the focus labels. Minimum over the iid/low/flipped splits and both focus(S) "
               "types. The dashed line is chance."),
    )


@register_claim(SLUG, "decoupled-invariance",
                "With the excluded feature decoupled, focus(C)-and-ignore(S) accuracy varies by "
                "<= 0.02 across the iid, low and flipped splits, while the vanilla model drops "
                ">= 0.03 on the flipped split.")
def _claim_invariance(scale, seed, out_dir):
    results, per_seed = _experiment(scale, seed)
    dec = results["fit_decoupled"]
    vanilla = {s: results["vanilla"][s]["empty"] for s in _SPLITS}
    oracle = {s: results["oracle_core_only"][s]["empty"] for s in _SPLITS}
    spread = _spread(dec)
    drop = vanilla["iid"] - vanilla["flipped"]
    observed = {
        "fit_decoupled_focus_C_ignore_S": {s: round(dec[s]["focus_C_ignore_S"], 4) for s in _SPLITS},
        "fit_decoupled_spread": round(spread, 4),
        "vanilla": {s: round(v, 4) for s, v in vanilla.items()},
        "vanilla_drop_iid_to_flipped": round(drop, 4),
        "oracle_core_only": {s: round(v, 4) for s, v in oracle.items()},
        "per_seed_fit_decoupled_spread": [round(_spread(r), 4) for r in per_seed["fit_decoupled"]],
        "per_seed_vanilla_drop": [round(r["iid"]["empty"] - r["flipped"]["empty"], 4)
                                  for r in per_seed["vanilla"]],
        "n_seeds": len(per_seed["vanilla"]),
    }
    passed = spread <= _SPREAD_MAX and drop >= _VANILLA_DROP_MIN

    fig, ax = new_figure(figsize=(5.2, 3.6))
    x = np.arange(len(_SPLITS))
    for label, values, style in (
        ("vanilla", vanilla, "o-"), ("core-only oracle", oracle, "s:"),
        ("FIT, focus(C) ignore(S)", {s: results["fit"][s]["focus_C_ignore_S"] for s in _SPLITS},
         "^--"),
        ("FIT + decoupling, focus(C) ignore(S)",
         {s: dec[s]["focus_C_ignore_S"] for s in _SPLITS}, "D-"),
    ):
        ax.plot(x, [values[s] for s in _SPLITS], style, label=label)
    ax.set_xticks(x, _SPLITS)
    ax.set_ylabel("accuracy on y")
    ax.legend(fontsize=7)
    artifact = save_figure(fig, out_dir, "core_accuracy_by_split")
    return ClaimResult(
        observed=observed,
        expected={"fit_decoupled_spread": f"<= {_SPREAD_MAX}",
                  "vanilla_drop_iid_to_flipped": f">= {_VANILLA_DROP_MIN}",
                  "paper": "FIT nearly identical across iid/high/low/flipped SMNLI splits "
                           "(max std 6.47%)"},
        passed=bool(passed), artifacts=[artifact],
        notes=("Figures are means over seeds (per-seed values listed). Decoupling is an "
               "adaptation, not in the paper: under the types that exclude a feature the "
               "spurious columns are shuffled so the focus label cannot depend on the excluded "
               "feature; an LLM gets that meaning from language instead. The core-only oracle "
               "is told which columns are spurious. The vanilla drop depends on how much the "
               "learner leans on the genre where the core is ambiguous: single gradient-boosting "
               "runs range about 0.027-0.046 at quick scale (an MLP leans more, about 0.05)."),
    )


@register_claim(SLUG, "unseen-spurious-limitation",
                "Plain FIT's flipped-split robustness is reported as measured, and focus(S) on "
                "spurious values never seen in training falls to chance (1/3).")
def _claim_unseen(scale, seed, out_dir):
    results, per_seed = _experiment(scale, seed)
    plain, dec = results["fit"], results["fit_decoupled"]
    vanilla_flipped = results["vanilla"]["flipped"]["empty"]
    observed = {
        "fit_focus_C_ignore_S": {s: round(plain[s]["focus_C_ignore_S"], 4) for s in _SPLITS},
        "vanilla_flipped": round(vanilla_flipped, 4),
        "fit_gain_over_vanilla_on_flipped": round(
            plain["flipped"]["focus_C_ignore_S"] - vanilla_flipped, 4),
        "unseen_focus_S_acc_fit": round(_unseen_focus_s(plain), 4),
        "unseen_focus_S_acc_fit_decoupled": round(_unseen_focus_s(dec), 4),
        "unseen_core_types_acc_fit_decoupled": round(float(np.mean(
            [dec["unseen"][t] for t in ("focus_C", "ignore_S", "focus_C_ignore_S")])), 4),
        "n_seeds": len(per_seed["fit"]),
    }
    chance = 1.0 / _K
    passed = all(abs(observed[k] - chance) <= _CHANCE_MARGIN
                 for k in ("unseen_focus_S_acc_fit", "unseen_focus_S_acc_fit_decoupled"))
    artifact = _focus_figure(results, out_dir, "focus_accuracy_unseen",
                             [("fit", "FIT"), ("fit_decoupled", "FIT + decoupling")])
    return ClaimResult(
        observed=observed,
        expected={"unseen_focus_S_acc": f"within {_CHANCE_MARGIN} of chance {chance:.3f}",
                  "fit_flipped_robustness": "reported, no criterion (the paper's gain needs "
                                            "the LLM's understanding of the instruction)",
                  "paper": "focus(S) accuracy falls sharply on unseen genres while the core "
                           "types stay high"},
        passed=bool(passed), artifacts=[artifact],
        notes=("The unseen genres are drawn uncorrelated with the label, so a model that knows "
               "nothing of their spurious label scores 1/3 in expectation; an unseen genre is "
               "encoded as all zeros, as a one-hot encoder fitted on the training genres does. "
               "Plain FIT keeps using the genre under focus(C) because its label is still "
               "correlated with it in training: no robustness gain without decoupling."),
    )


@register_claim(SLUG, "text-variant",
                "A tiny transformer fine-tuned with natural-language focus instructions on an "
                "NLI-like task shows the same pattern at smaller margins: focus(S) >= 0.85 on "
                "seen genres, decoupled focus(C)-ignore(S) accuracy >= 0.8 with a spread <= "
                "0.05 while the empty-instruction answers drop >= 0.03 on flipped, focus(S) on "
                "unseen genres within 0.1 of chance.")
def _claim_text(scale, seed, out_dir):
    results, per_seed = _experiment(scale, seed)
    dec = results["text_fit_decoupled"]
    empty = {s: dec[s]["empty"] for s in _SPLITS}
    observed = {
        "min_focus_S_acc": round(_steer(dec), 4),
        "focus_C_ignore_S": {s: round(dec[s]["focus_C_ignore_S"], 4) for s in _SPLITS},
        "focus_C_ignore_S_spread": round(_spread(dec), 4),
        "empty_instruction": {s: round(v, 4) for s, v in empty.items()},
        "empty_drop_iid_to_flipped": round(empty["iid"] - empty["flipped"], 4),
        "unseen_focus_S_acc": round(_unseen_focus_s(dec), 4),
        "text_fit_decoupled": _round(dec),
        "n_seeds": len(per_seed["text_fit_decoupled"]),
    }
    models = [("text_fit_decoupled", "text FIT + decoupling")]
    if "text_fit" in results:
        observed["text_fit"] = _round(results["text_fit"])
        observed["text_vanilla"] = {s: round(results["text_vanilla"][s]["empty"], 4)
                                    for s in _SPLITS}
        models.append(("text_fit", "text FIT"))
    passed = (observed["min_focus_S_acc"] >= _TEXT_STEER_MIN
              and observed["focus_C_ignore_S"]["iid"] >= _TEXT_CORE_MIN
              and observed["focus_C_ignore_S_spread"] <= _TEXT_SPREAD_MAX
              and observed["empty_drop_iid_to_flipped"] >= _VANILLA_DROP_MIN
              and abs(observed["unseen_focus_S_acc"] - 1.0 / _K) <= _TEXT_CHANCE_MARGIN)
    artifact = _focus_figure(results, out_dir, "focus_accuracy_text", models)
    return ClaimResult(
        observed=observed,
        expected={"min_focus_S_acc": f">= {_TEXT_STEER_MIN}",
                  "focus_C_ignore_S_iid": f">= {_TEXT_CORE_MIN}",
                  "focus_C_ignore_S_spread": f"<= {_TEXT_SPREAD_MAX}",
                  "empty_drop_iid_to_flipped": f">= {_VANILLA_DROP_MIN}",
                  "unseen_focus_S_acc": f"within {_TEXT_CHANCE_MARGIN} of 1/3"},
        passed=bool(passed), artifacts=[artifact],
        notes=("Trained from scratch on CPU (no pre-trained LLM): a word-level 2-layer causal "
               "transformer, three paraphrases per instruction type, the instruction after "
               "the input, decoupling on. Its empty-instruction answers are the vanilla "
               "reference (that type is trained on y with the genre in place); the full scale "
               "also trains plain FIT and a separate vanilla LM. Unseen genres are unknown "
               "words to the tokenizer. Training such a model from scratch is seed-dependent: "
               "at quick scale four of six seeds tried met every criterion (the others either "
               "learned the core only partly, or kept leaning on the genre under the core "
               "instructions); the full scale averages three seeds on twice the data. Smoke "
               "scale is far too small to learn the task."),
    )
