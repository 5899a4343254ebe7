"""Focus Instruction Tuning (Lamb et al., ICML 2025): steering a model to focus on a feature.

The paper fine-tunes 7-8B instruction-tuned LLMs on SMNLI (MNLI pairs whose
genre is spuriously tied to the label), SpuriousSentiment and BBQ. At CPU scale
the same data-generating process runs on synthetic tasks
(:func:`~skpaper.datasets.make_spurious_task`): six "genres" tied to one of
three labels with probability ``rho = 0.9`` in training, and test splits where
the tie holds (iid), vanishes (low), points to another label (flipped), or
where the genres are new and the tie is flipped (unseen_flipped). Every genre
carries a register (one of three, shared by the genres tied to one label,
seen or unseen), so a model can generalise the spurious label to genres it
never met.

Models trained inside the claims, from scratch, on the same data and seeds:

- tabular: :class:`~skpaper.language.FocusInstructionTuner` around a
  histogram gradient-boosting classifier (plain FIT, the paper's method; and
  FIT with the decoupling adaptation, ours), the same classifier trained on
  ``y`` (vanilla), on the core columns alone (an oracle told which columns
  are spurious), and on the focus labels with the instruction hidden (the
  paper's SFT(y_focus) baseline, the negative control of the steering claims);
- text: :class:`~skpaper.language.FocusInstructionLM`, a word-level causal
  transformer fine-tuned with paraphrased natural-language focus instructions
  on an NLI-like task (quantifier monotonicity: "all dogs bark ; some dogs
  bark" is an entailment) with the genre words in front, plain and decoupled.
  Their empty-instruction answers are the vanilla reference: that instruction
  is trained on ``y`` with the genre in place, as plain fine-tuning is.
"""

import functools

import numpy as np

from ._plotting import new_figure, save_figure
from ._registry import ClaimResult, ControlResult, register_claim, register_paper
from ._stats import claim_seeds, mean_interval, paired_difference, seed_summary

SLUG = "focus-instruction-tuning"

register_paper(SLUG, "Focus On This, Not That! Steering LLMs with Adaptive Feature Specification",
               module="skpaper.language")

_K = 3
_RHO = 0.9
_N_GENRES = 6
_N_CORE = 4
_N_SPURIOUS = _N_GENRES + _K  # genre one-hot and register one-hot
_SPLITS = ("iid", "low", "flipped", "unseen_flipped")
_SEEN = ("iid", "low", "flipped")
_FOCUS_S = ("focus_S", "focus_S_ignore_C")
_TYPES = ("empty", "focus_C", "ignore_S", "focus_C_ignore_S", "focus_S", "focus_S_ignore_C")

#: The paper's radar figure: FIT scores about 85-100% on all six focus types on SMNLI.
_PAPER_FOCUS_MIN = 0.85
#: Ours: the largest mean spread of decoupled FIT's focus(C)-ignore(S) accuracy across the
#: iid, low and flipped splits counted as invariant (the paper: "nearly identical").
_SPREAD_MAX = 0.02

_SCALES = {
    # tab_*: paired seeds, training/test rows and boosting iterations of the tabular models;
    # text_*: paired seeds, training texts, test texts per split, LM (layers, width, epochs)
    # and learning rate. "full" uses a GPU when present.
    "smoke": dict(tab_seeds=2, tab_train=600, tab_test=300, tab_iter=20, text_seeds=2,
                  text_train=240, text_test=30, text_lm=(1, 32, 2), text_lr=5e-3),
    "quick": dict(tab_seeds=5, tab_train=3000, tab_test=1000, tab_iter=60, text_seeds=3,
                  text_train=1200, text_test=120, text_lm=(2, 48, 8), text_lr=3e-3),
    "full": dict(tab_seeds=10, tab_train=12000, tab_test=3000, tab_iter=200, text_seeds=5,
                 text_train=6000, text_test=900, text_lm=(2, 64, 20), text_lr=3e-3),
}


def _test_splits(n, kind, seed):
    """The four test splits, each drawn from its own seed."""
    from skpaper.datasets import make_spurious_task

    return {split: make_spurious_task(n, rho=_RHO, n_genres=_N_GENRES, split=split, kind=kind,
                                      genre_register=True, random_state=seed + i)
            for i, split in enumerate(_SPLITS)}


def _report(model, X, y, y_s):
    """Focus accuracy of every type, plus how often the core-instruction answer is ``y_S``."""
    out = model.focus_accuracy_report(X, y, y_s)
    out["core_answer_is_spurious"] = float(np.mean(
        model.predict(X, focus="focus_C_ignore_S") == y_s))
    return out


def _hidden_instruction(base):
    """The base learner with the instruction code dropped: SFT on the focus labels."""
    from sklearn.compose import ColumnTransformer
    from sklearn.pipeline import make_pipeline

    keep = ColumnTransformer([("features", "passthrough", list(range(_N_CORE + _N_SPURIOUS)))],
                             remainder="drop")
    return make_pipeline(keep, base)


def _tabular_run(cfg, seed):
    from sklearn.ensemble import HistGradientBoostingClassifier

    from skpaper.datasets import make_spurious_task
    from skpaper.language import FocusInstructionTuner

    X, y, _ = make_spurious_task(cfg["tab_train"], rho=_RHO, n_genres=_N_GENRES,
                                 genre_register=True, random_state=seed)
    tests = _test_splits(cfg["tab_test"], "tabular", seed + 1)
    spurious = list(range(_N_CORE, _N_CORE + _N_SPURIOUS))

    def base():
        return HistGradientBoostingClassifier(max_iter=cfg["tab_iter"], random_state=seed)

    vanilla = base().fit(X, y)
    oracle = base().fit(X[:, :_N_CORE], y)
    out = {"vanilla": {s: {"empty": float(np.mean(vanilla.predict(Xt) == yt))}
                       for s, (Xt, yt, _) in tests.items()},
           "oracle_core_only": {s: {"empty": float(np.mean(oracle.predict(Xt[:, :_N_CORE]) == yt))}
                                for s, (Xt, yt, _) in tests.items()}}
    for name, decouple, learner in (("fit", False, base()), ("fit_decoupled", True, base()),
                                    ("sft_hidden_instruction", False,
                                     _hidden_instruction(base()))):
        model = FocusInstructionTuner(learner, spurious_columns=spurious,
                                      decouple_excluded=decouple, random_state=seed).fit(X, y)
        out[name] = {s: _report(model, Xt, yt, ys) for s, (Xt, yt, ys) in tests.items()}
    return out


def _text_run(cfg, seed, device):
    from skpaper.datasets import make_spurious_task
    from skpaper.language import FocusInstructionLM, LanguageModel, WordTokenizer

    layers, width, epochs = cfg["text_lm"]
    texts, y, _ = make_spurious_task(cfg["text_train"], rho=_RHO, n_genres=_N_GENRES, kind="nli",
                                     genre_register=True, random_state=seed)
    tests = _test_splits(cfg["text_test"], "nli", seed + 1)

    def lm():
        return LanguageModel(tokenizer=WordTokenizer(), n_layers=layers, d_model=width,
                             n_heads=4, max_len=40, max_epochs=epochs, batch_size=64,
                             lr=cfg["text_lr"], device=device, random_state=seed)

    out = {}
    for name, decouple in (("text_fit", False), ("text_fit_decoupled", True)):
        # The spurious value is the genre and its register, the first two words.
        model = FocusInstructionLM(lm(), decouple_excluded=decouple,
                                   spurious_pattern=r"^(\S+ \S+) :", random_state=seed)
        model.fit(texts, y)
        out[name] = {s: _report(model, Xt, yt, ys) for s, (Xt, yt, ys) in tests.items()}
    return out


@functools.lru_cache(maxsize=4)
def _experiment(scale, seed):
    """Train every model of the paper's comparison once; shared by the claims.

    Returns the per-seed mean reports (``{model: {split: {type: acc}}}``) and the per-seed
    reports (``{model: [report, ...]}``), every model on the same paired seeds.
    """
    cfg = _SCALES[scale]
    # smoke and quick stay on the CPU so that their figures are the same on every machine.
    device = "auto" if scale == "full" else "cpu"
    runs = [_tabular_run(cfg, s) for s in claim_seeds(seed, cfg["tab_seeds"], 1)]
    runs_text = [_text_run(cfg, s, device) for s in claim_seeds(seed, cfg["text_seeds"], 2)]
    per_seed = {name: [r[name] for r in group]
                for group in (runs, runs_text) for name in group[0]}
    return {name: _mean_reports(reports) for name, reports in per_seed.items()}, per_seed


def _mean_reports(reports):
    """Average a list of ``{split: {type: acc}}`` over seeds."""
    return {split: {t: float(np.mean([r[split][t] for r in reports])) for t in reports[0][split]}
            for split in reports[0]}


def _round(report):
    return {split: {t: round(v, 4) for t, v in row.items()} for split, row in report.items()}


def _plot_types(ax, report, title):
    """Grouped bars: focus accuracy of every type, one bar per split."""
    types = list(_TYPES)
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


def _min_focus(report, split="flipped"):
    return min(report[split][t] for t in _TYPES)


def _spread(report, focus="focus_C_ignore_S"):
    values = [report[s][focus] for s in _SEEN]
    return max(values) - min(values)


def _tab_arms(cfg, names):
    return {name: {"learner": f"HistGradientBoostingClassifier(max_iter={cfg['tab_iter']})",
                   "train_examples": cfg["tab_train"], "paired_seeds": cfg["tab_seeds"]}
            for name in names}


def _min_focus_claim(per_seed, model, split):
    return mean_interval([_min_focus(r, split) for r in per_seed[model]],
                         alternative="greater", margin=_PAPER_FOCUS_MIN)


@register_claim(SLUG, "steerability",
                "A focus-tuned model follows every focus instruction on the flipped split: its "
                "focus accuracy is high on all six types, including focus(S).",
                paper_statement="Figure 3 (SMNLI radar): FIT reaches about 85-100% focus "
                                "accuracy on all six focus types, on the iid, high, low and "
                                "flipped splits; the SFT(y_focus) baseline scores about 20-60% "
                                "on the focus(S) types.",
                check="lower 95% bound, over the paired seeds, of plain FIT's minimum focus "
                      "accuracy over the six types on the flipped split > 0.85",
                control="SFT(y_focus): the same learner on the same focus labels with the "
                        "instruction hidden")
def _claim_steerability(scale, seed, out_dir):
    cfg = _SCALES[scale]
    results, per_seed = _experiment(scale, seed)
    bound = _min_focus_claim(per_seed, "fit", "flipped")
    control = _min_focus_claim(per_seed, "sft_hidden_instruction", "flipped")
    artifact = _focus_figure(results, out_dir, "focus_accuracy_tabular",
                             [("fit", "FIT"), ("sft_hidden_instruction",
                                               "SFT(y_focus), instruction hidden")])
    return ClaimResult(
        observed={"min_focus_acc_flipped_fit": bound.to_dict(),
                  "fit": _round(results["fit"]),
                  "fit_decoupled_min_focus_acc_flipped": round(
                      _min_focus(results["fit_decoupled"]), 4)},
        expected={"min_focus_acc_flipped_lower_bound": f"> {_PAPER_FOCUS_MIN}"},
        passed=bound.passed,
        control=ControlResult(observed={"min_focus_acc_flipped": control.to_dict(),
                                        "sft_hidden_instruction": _round(
                                            results["sft_hidden_instruction"])},
                              passed=control.passed),
        arms=_tab_arms(cfg, ("fit", "sft_hidden_instruction")), artifacts=[artifact],
        notes=("Tabular analogue: six genres (one-hot) and their register (one-hot) tied to "
               "three labels (rho=0.9); the instruction is a one-hot code appended to the "
               "features, and histogram gradient boosting learns the focus labels. The core "
               "is strong, so the task types stay high on the flipped split even though plain "
               "FIT keeps some reliance on the genre (see robustness)."),
    )


def _gain_vs_vanilla(per_seed, model, focus="focus_C_ignore_S", split="flipped"):
    return paired_difference([r[split][focus] for r in per_seed[model]],
                             [r[split]["empty"] for r in per_seed["vanilla"]],
                             alternative="greater")


@register_claim(SLUG, "robustness",
                "Plain FIT asked to focus on the core and ignore the genre is more accurate "
                "than vanilla fine-tuning on the flipped split.",
                paper_statement="Abstract and Figure 3: FIT improves robustness by amplifying "
                                "core signals and down-weighting spurious cues; its focus(C) "
                                "accuracy is nearly identical across the iid, high, low and "
                                "flipped SMNLI splits (max std 6.47%), where vanilla SFT drops.",
                check="lower 95% bound of the paired mean (FIT focus(C)-ignore(S) accuracy - "
                      "vanilla accuracy) on the flipped split, over the paired seeds, > 0",
                control="FIT's own empty-instruction answers in place of the focus(C)-ignore(S) "
                        "answers")
def _claim_robustness(scale, seed, out_dir):
    cfg = _SCALES[scale]
    results, per_seed = _experiment(scale, seed)
    gain = _gain_vs_vanilla(per_seed, "fit")
    control = _gain_vs_vanilla(per_seed, "fit", focus="empty")
    vanilla = {s: results["vanilla"][s]["empty"] for s in _SPLITS}
    oracle = {s: results["oracle_core_only"][s]["empty"] for s in _SPLITS}
    fig, ax = new_figure(figsize=(5.2, 3.6))
    x = np.arange(len(_SPLITS))
    for label, values, style in (
        ("vanilla", vanilla, "o-"), ("core-only oracle", oracle, "s:"),
        ("FIT, focus(C) ignore(S)", {s: results["fit"][s]["focus_C_ignore_S"] for s in _SPLITS},
         "^--"),
        ("FIT + decoupling (ours), focus(C) ignore(S)",
         {s: results["fit_decoupled"][s]["focus_C_ignore_S"] for s in _SPLITS}, "D-"),
    ):
        ax.plot(x, [values[s] for s in _SPLITS], style, label=label)
    ax.set_xticks(x, _SPLITS, fontsize=8)
    ax.set_ylabel("accuracy on y")
    ax.legend(fontsize=7)
    artifact = save_figure(fig, out_dir, "core_accuracy_by_split")
    return ClaimResult(
        observed={"gain_vs_vanilla_flipped": gain.to_dict(),
                  "fit_focus_C_ignore_S": {s: round(results["fit"][s]["focus_C_ignore_S"], 4)
                                           for s in _SPLITS},
                  "vanilla": {s: round(v, 4) for s, v in vanilla.items()},
                  "oracle_core_only": {s: round(v, 4) for s, v in oracle.items()}},
        expected={"gain_lower_bound": "> 0"},
        passed=gain.passed,
        control=ControlResult(observed={"gain_vs_vanilla_flipped": control.to_dict()},
                              passed=control.passed),
        arms=_tab_arms(cfg, ("fit", "vanilla")), artifacts=[artifact],
        notes=("The instruction is a one-hot code with no meaning of its own; under the "
               "focus(C) types the label is still correlated with the genre in training, so "
               "the Bayes-optimal answer to those instructions uses the genre. The paper's "
               "gain rests on an instruction-tuned LLM's understanding of 'ignore the genre', "
               "which a model trained from scratch does not have."),
    )


@register_claim(SLUG, "decoupled-invariance",
                "Ours (not in the paper): FIT with the excluded feature decoupled keeps its "
                "focus(C)-ignore(S) accuracy across the iid, low and flipped splits and beats "
                "vanilla fine-tuning on the flipped split.",
                paper_statement="The invariance the paper reports for FIT (Figure 3: nearly "
                                "identical focus accuracy across SMNLI splits); the decoupling "
                                "that produces it here is our adaptation.",
                check="lower 95% bound of the paired mean (decoupled FIT focus(C)-ignore(S) "
                      "accuracy - vanilla accuracy) on the flipped split > 0, and upper 95% "
                      "bound of the mean spread of that accuracy across iid/low/flipped < 0.02 "
                      "(ours)",
                control="the decoupled model's own empty-instruction answers (the one type "
                        "that is not decoupled)")
def _claim_invariance(scale, seed, out_dir):
    cfg = _SCALES[scale]
    results, per_seed = _experiment(scale, seed)

    def check(focus):
        gain = _gain_vs_vanilla(per_seed, "fit_decoupled", focus=focus)
        spread = mean_interval([_spread(r, focus) for r in per_seed["fit_decoupled"]],
                               alternative="less", margin=_SPREAD_MAX)
        return gain, spread, gain.passed and spread.passed

    gain, spread, passed = check("focus_C_ignore_S")
    c_gain, c_spread, c_passed = check("empty")
    dec = results["fit_decoupled"]
    return ClaimResult(
        observed={"gain_vs_vanilla_flipped": gain.to_dict(), "spread": spread.to_dict(),
                  "fit_decoupled_focus_C_ignore_S": {s: round(dec[s]["focus_C_ignore_S"], 4)
                                                     for s in _SPLITS},
                  "vanilla": {s: round(results["vanilla"][s]["empty"], 4) for s in _SPLITS}},
        expected={"gain_lower_bound": "> 0", "spread_upper_bound": f"< {_SPREAD_MAX}"},
        passed=bool(passed),
        control=ControlResult(observed={"gain_vs_vanilla_flipped": c_gain.to_dict(),
                                        "spread": c_spread.to_dict()},
                              passed=bool(c_passed)),
        arms=_tab_arms(cfg, ("fit_decoupled", "vanilla")),
        notes=("Decoupling is an adaptation, not in the paper: under the types that exclude a "
               "feature the spurious columns are shuffled between examples, so the focus label "
               "cannot depend on the excluded feature; an LLM gets that from language instead. "
               "The figure of the robustness claim shows it beside plain FIT."),
    )


def _steering_effect(per_seed, model, split="unseen_flipped"):
    """Paired bound of P(answer = y_S | focus(S)) - P(answer = y_S | focus(C) ignore(S))."""
    rows = per_seed[model]
    return paired_difference([np.mean([r[split][t] for t in _FOCUS_S]) for r in rows],
                             [r[split]["core_answer_is_spurious"] for r in rows],
                             alternative="greater")


@register_claim(SLUG, "unseen-feature-generalisation",
                "On genres never seen in training (with a real, flipped spurious "
                "correlation), the focus instruction still steers plain FIT: asked to focus on "
                "the genre it answers the genre's label, asked to focus on the core it does not.",
                paper_statement="Abstract: FIT generalises under distribution shift and to "
                                "previously unseen focus features (SMNLI D^s with unseen "
                                "genres; BBQ unseen bias categories).",
                check="lower 95% bound of the paired mean, over the paired seeds, of "
                      "(focus(S) accuracy against y_S - share of focus(C)-ignore(S) answers "
                      "equal to y_S) on the unseen-genre flipped split > 0",
                control="SFT(y_focus): the same learner on the same focus labels with the "
                        "instruction hidden")
def _claim_unseen(scale, seed, out_dir):
    cfg = _SCALES[scale]
    results, per_seed = _experiment(scale, seed)
    effect = _steering_effect(per_seed, "fit")
    control = _steering_effect(per_seed, "sft_hidden_instruction")
    artifact = _focus_figure(results, out_dir, "focus_accuracy_unseen",
                             [("fit", "FIT"), ("fit_decoupled", "FIT + decoupling (ours)")])
    return ClaimResult(
        observed={"steering_effect_unseen_flipped": effect.to_dict(),
                  "fit_unseen_flipped": _round({"u": results["fit"]["unseen_flipped"]})["u"],
                  "fit_min_focus_acc_unseen_flipped": round(
                      _min_focus(results["fit"], "unseen_flipped"), 4),
                  "fit_decoupled_unseen_flipped": _round(
                      {"u": results["fit_decoupled"]["unseen_flipped"]})["u"],
                  "vanilla_unseen_flipped": round(
                      results["vanilla"]["unseen_flipped"]["empty"], 4),
                  "text_fit_steering_effect_unseen_flipped": _steering_effect(
                      per_seed, "text_fit").to_dict(),
                  "text_fit_decoupled_steering_effect_unseen_flipped": _steering_effect(
                      per_seed, "text_fit_decoupled").to_dict()},
        expected={"steering_effect_lower_bound": "> 0"},
        passed=effect.passed,
        control=ControlResult(observed={"steering_effect_unseen_flipped": control.to_dict()},
                              passed=control.passed),
        arms=_tab_arms(cfg, ("fit", "sft_hidden_instruction")), artifacts=[artifact],
        notes=("Unseen genres are new genre values (all zeros in the genre one-hot, unknown "
               "words to the text tokenizer) that keep the register of their spurious label, "
               "so their label can be read off the register; their correlation with y is "
               "flipped (rho=0.9 towards (y_S + 1) mod 3), so answering y_S and answering y "
               "disagree. The hidden-instruction control answers every instruction alike, so "
               "its effect is 0 by construction. The text models' effects are reported, not "
               "asserted."),
    )


@register_claim(SLUG, "text-variant",
                "Ours (decoupling is not in the paper): a tiny transformer fine-tuned with "
                "natural-language focus instructions and decoupling follows focus(S) on seen "
                "genres and, asked to ignore the genre, beats its own genre-reliant "
                "empty-instruction answers on the flipped split.",
                paper_statement="Figure 3: FIT focus accuracy about 85-100% on all types and "
                                "splits, with natural-language focus instructions and held-out "
                                "paraphrases.",
                check="over the paired text seeds: lower 95% bound of the paired mean "
                      "(focus(C)-ignore(S) accuracy - empty-instruction accuracy) on the "
                      "flipped split > 0, and lower 95% bound of the minimum focus(S) accuracy "
                      "over the seen splits > 0.85",
                control="plain text FIT (decoupling off) in the decoupled model's place")
def _claim_text(scale, seed, out_dir):
    cfg = _SCALES[scale]
    results, per_seed = _experiment(scale, seed)

    def check(model):
        rows = per_seed[model]
        gain = paired_difference([r["flipped"]["focus_C_ignore_S"] for r in rows],
                                 [r["flipped"]["empty"] for r in rows], alternative="greater")
        steer = mean_interval([min(r[s][t] for s in _SEEN for t in _FOCUS_S) for r in rows],
                              alternative="greater", margin=_PAPER_FOCUS_MIN)
        return gain, steer, gain.passed and steer.passed

    gain, steer, passed = check("text_fit_decoupled")
    c_gain, c_steer, c_passed = check("text_fit")
    artifact = _focus_figure(results, out_dir, "focus_accuracy_text",
                             [("text_fit_decoupled", "text FIT + decoupling (ours)"),
                              ("text_fit", "text FIT")])
    layers, width, epochs = cfg["text_lm"]
    arm = {"lm": f"{layers} layers, width {width}", "train_epochs": epochs,
           "train_examples": cfg["text_train"], "paired_seeds": cfg["text_seeds"]}
    return ClaimResult(
        observed={"gain_over_empty_flipped": gain.to_dict(), "min_focus_S_seen": steer.to_dict(),
                  "focus_C_ignore_S_spread": seed_summary(
                      [_spread(r) for r in per_seed["text_fit_decoupled"]]),
                  "text_fit_decoupled": _round(results["text_fit_decoupled"])},
        expected={"gain_lower_bound": "> 0", "min_focus_S_lower_bound": f"> {_PAPER_FOCUS_MIN}"},
        passed=bool(passed),
        control=ControlResult(observed={"gain_over_empty_flipped": c_gain.to_dict(),
                                        "min_focus_S_seen": c_steer.to_dict(),
                                        "text_fit": _round(results["text_fit"])},
                              passed=bool(c_passed)),
        arms={"text_fit_decoupled": arm, "text_fit": arm}, artifacts=[artifact],
        notes=("Trained from scratch on CPU (no pre-trained LLM): a word-level causal "
               "transformer, three paraphrases per instruction type, the instruction after "
               "the input. The empty-instruction answers are the vanilla reference (that type "
               "is trained on y with the genre in place). Training such a model from scratch "
               "is seed-dependent, hence the bound over seeds. Smoke scale is far too small to "
               "learn the task, and quick scale (1200 texts, 8 epochs, width 48, cut to fit a "
               "few CPU minutes) is too small as well: there the model mostly answers every "
               "instruction alike, leaning on the genre. The full scale trains 6000 texts for "
               "20 epochs at width 64 over five seeds."),
    )
