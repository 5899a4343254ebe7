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
  The robustness claim sets plain text FIT against vanilla SFT: the same
  language model fine-tuned on the same texts and epochs with the empty
  instruction only, trained long enough to learn the core feature.
"""

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, clone

from ._comparison import ArmRun, EffectOfInterest, run_comparison
from ._plotting import new_figure, save_figure
from ._registry import ClaimResult, register_claim, register_paper, shared_cache
from ._stats import claim_seeds, mean_interval, paired_difference, seed_summary

SLUG = "focus-instruction-tuning"

register_paper(SLUG, "Focus On This, Not That! Steering LLMs with Adaptive Feature Specification",
               module="skpaper.language", quick_cost_s=950)

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
_STEER_EOI = EffectOfInterest(
    _PAPER_FOCUS_MIN, "paper", "Figure 3 (SMNLI radar): FIT's focus accuracy is about 85-100% "
    "on all six focus types; a minimum below 0.85 contradicts it")
_ROBUST_EOI = EffectOfInterest(
    0.05, "ours", "five points of accuracy on the flipped split: the smallest robustness gain "
    "worth an instruction that 150 test texts per split resolve (the paper shows vanilla SFT "
    "dropping on the flipped split, without a figure to copy)")
_UNSEEN_EOI = EffectOfInterest(
    0.1, "ours", "asked to focus on the genre, the model answers the genre's label at least "
    "ten points more often than asked to ignore it: steering a user would notice")
#: Ours: the largest mean spread of decoupled FIT's focus(C)-ignore(S) accuracy across the
#: iid, low and flipped splits counted as invariant (the paper: "nearly identical").
_SPREAD_MAX = 0.02

#: Looks of the quick tabular claims, from the power figures of the calibration setting
#: (``_calibration()``: seed stream key 99, 2000 training rows, 800 test rows, 40 boosting
#: iterations). There, one look needs 6 seeds for unseen-feature-generalisation (steering
#: 0.080, SD 0.062), 2 for robustness (-0.041, SD 0.006) and 2-3 for every control;
#: steerability's minimum focus accuracy was 0.857 (SD 0.041), so close to its 0.85
#: margin that it would need 188: no affordable number of seeds has power at that effect,
#: so its looks are capped by the budget. Looks 4, 8, 16: the second past 6, the last the
#: budget's cap.
_QUICK_LOOKS = (4, 8, 16)
#: Looks of the quick text robustness claim, from the power figures of its calibration
#: setting (``_robust_calibration()``: seed stream key 98, 2000 training texts for 24 epochs
#: where the claim trains 2400 for 20; the claim's seeds come from key 3). There, over 3 seeds,
#: FIT focus(C)-ignore(S) - vanilla on the flipped split was -0.54, -0.41, -0.04 (SD 0.26):
#: 6 seeds to tell it from 0 and 5 from the effect of interest; the control (-0.46, -0.27,
#: -0.06) needs 5. Core accuracy on the low split (the genre uninformative, chance 0.33):
#: vanilla 0.77, 0.64, 0.81; FIT focus(C)-ignore(S) 0.44, 0.39, 0.81. Looks 3 and 6.
_ROBUST_LOOKS = (3, 6)
#: That first design (looks 3, 6 on seed stream key 3) decided the check at seed 0,
#: contradicted at 6 (-0.358 [-0.671, -0.045]), and left its control undecided at its last
#: look (-0.129 [-0.510, +0.253], SD 0.364). Its figures are kept, not rerun.
_ROBUST_FIRST_DESIGN = dict(looks=(3, 6), key=(3,), mean=-0.3578, sd=0.2981, lower=-0.6706,
                            upper=-0.0449, n=6, verdict="contradicted", control_mean=-0.1289,
                            control_sd=0.3636, control_lower=-0.5105, control_upper=0.2527,
                            control_verdict="undecided")
#: The design that runs at quick scale: looks 35 and 103 on seed stream key 4, which neither
#: the first design nor the calibration drew. The check was decided; the control, which only
#: has to fail, sizes it: seeds_needed(sd_upper_limit(0.364, 6) = 0.641, 0.05 + 0.129,
#: alpha=0.025) = 103 seeds at the last look's level, the first look at a third of it. Over
#: both designs each false verdict has probability at most 0.05 + 0.05.
_ROBUST_SECOND_LOOKS, _ROBUST_SECOND_KEY = (35, 103), (4,)
_ROBUST_DESIGN_NOTE = (
    " Two designs. The first (looks 3 and 6 on seed stream key 3) decided the check, "
    "contradicted at 6 (-0.358 [-0.671, -0.045]), and left its control undecided (-0.129 "
    "[-0.510, +0.253], SD 0.364; first_design, recorded, not rerun). This run is the second: "
    "looks 35 and 103 on seed stream key 4, which the first never drew, 103 being the seeds "
    "that the control needs to fail at the 90% upper limit of its first-design SD (0.641) and "
    "the last look's level 0.025. Over both designs each false verdict has probability at "
    "most 0.05 + 0.05.")
_ROBUST_LOOKS_NOTE = (
    " The first design's looks 3 and 6 came from the power figures of a calibration "
    "setting (seed key 98, 2000 training texts for 24 epochs; see _robust_calibration): "
    "check 5-6 seeds, control 5. "
    "There the vanilla model learns the core on every seed (low-split accuracy 0.64-0.81 "
    "against chance 0.33) and FIT's focus(C)-ignore(S) answers on one seed of three (0.81; "
    "0.39-0.44 on the others).")
_LOOKS_NOTE = (" Looks from the power figures of a calibration setting (seed key 99, 2000 "
               "training rows, 40 boosting iterations; see _calibration).")

_SCALES = {
    # tab_*: paired seeds, training/test rows and boosting iterations of the tabular models;
    # text_*: paired seeds, training texts, test texts per split, LM (layers, width, epochs)
    # and learning rate. "full" uses a GPU when present.
    # rob_*: the text robustness claim (paired seeds' looks, NLI training texts, test texts
    # per split, LM (layers, width, epochs), batch size and learning rate).
    "smoke": dict(tab_looks=(2,), tab_train=600, tab_test=300, tab_iter=20, text_seeds=2,
                  text_train=240, text_test=30, text_lm=(1, 32, 2), text_lr=5e-3,
                  rob_looks=(2,), rob_train=240, rob_test=30, rob_lm=(1, 32, 2), rob_batch=64,
                  rob_lr=5e-3),
    # Not a scale: the tabular setting of ``_calibration`` (seed stream key 99, other sizes).
    "calibration": dict(tab_looks=(), tab_train=2000, tab_test=800, tab_iter=40),
    "quick": dict(tab_looks=_QUICK_LOOKS, tab_train=3000, tab_test=1000, tab_iter=60, text_seeds=3,
                  text_train=1200, text_test=120, text_lm=(2, 48, 8), text_lr=3e-3,
                  rob_looks=_ROBUST_SECOND_LOOKS, rob_key=_ROBUST_SECOND_KEY, rob_train=2400,
                  rob_test=150, rob_lm=(2, 48, 20), rob_batch=64, rob_lr=3e-3),
    # Not a scale: the text setting of ``_robust_calibration`` (seed key 98, 2000 texts).
    "rob_calibration": dict(rob_looks=(), rob_train=2000, rob_test=150, rob_lm=(2, 48, 24),
                            rob_batch=64, rob_lr=3e-3),
    "full": dict(tab_looks=(8, 16, 32), tab_train=12000, tab_test=3000, tab_iter=200, text_seeds=5,
                 text_train=6000, text_test=900, text_lm=(2, 64, 20), text_lr=3e-3,
                 rob_looks=(8, 16), rob_train=6000, rob_test=600, rob_lm=(2, 64, 30),
                 rob_batch=128, rob_lr=3e-3),
}


def _test_splits(n, kind, seed):
    """The four test splits, each drawn from its own seed."""
    from skpaper.datasets import make_spurious_task

    return {split: make_spurious_task(n, rho=_RHO, n_genres=_N_GENRES, split=split, kind=kind,
                                      genre_register=True, random_state=seed + i)
            for i, split in enumerate(_SPLITS)}


def _report(model, X, y, y_s):
    """Focus accuracy of every type, plus how often the core-instruction answer is ``y_S``.

    The figures of ``model.focus_accuracy_report(X, y, y_s)``, from one prediction per type:
    the focus(C)-ignore(S) answers serve both their accuracy and the share equal to ``y_S``.
    """
    from ..language import focus_labels

    y, y_s = np.asarray(y), np.asarray(y_s)
    answers = {t: model.predict(X, focus=t) for t in model.focus_types_}
    out = {t: float(np.mean(answers[t] == focus_labels(y, y_s, t))) for t in answers}
    core = answers.get("focus_C_ignore_S")
    if core is None:
        core = model.predict(X, focus="focus_C_ignore_S")
    out["core_answer_is_spurious"] = float(np.mean(core == y_s))
    return out


def _hidden_instruction(base):
    """The base learner with the instruction code dropped: SFT on the focus labels."""
    from sklearn.compose import ColumnTransformer
    from sklearn.pipeline import make_pipeline

    keep = ColumnTransformer([("features", "passthrough", list(range(_N_CORE + _N_SPURIOUS)))],
                             remainder="drop")
    return make_pipeline(keep, base)


class _ShuffledInstruction(ClassifierMixin, BaseEstimator):
    """The base learner trained with the instruction codes shuffled between rows.

    FIT's mechanism removed: the learner sees the instructions, but in training they no
    longer say which label (``y`` or ``y_S``) a row carries; at prediction the codes pass
    unchanged. The negative control of the steering claims.
    """

    def __init__(self, base, n_code=len(_TYPES), random_state=None):
        self.base = base
        self.n_code = n_code
        self.random_state = random_state

    def fit(self, Z, y):
        Z = np.array(Z, dtype=float)
        rng = np.random.default_rng(self.random_state)
        Z[:, -self.n_code:] = Z[rng.permutation(Z.shape[0]), -self.n_code:]
        self.estimator_ = clone(self.base).fit(Z, y)
        self.classes_ = self.estimator_.classes_
        return self

    def predict(self, Z):
        return self.estimator_.predict(Z)

    def predict_proba(self, Z):
        return self.estimator_.predict_proba(Z)


def _tabular_run(cfg, seed):
    from sklearn.ensemble import HistGradientBoostingClassifier

    from skpaper.datasets import make_spurious_task
    from skpaper.language import FocusInstructionTuner

    X, y, _ = make_spurious_task(cfg["tab_train"], rho=_RHO, n_genres=_N_GENRES,
                                 genre_register=True, random_state=seed)
    tests = _test_splits(cfg["tab_test"], "tabular", seed + 1)
    # An unseen genre carries no feature met in training: its register goes too (kept, the
    # spurious label could be read off the register and focus(S) would hold by construction).
    Xu, yu, ysu = tests["unseen_flipped"]
    Xu = Xu.copy()
    Xu[:, _N_CORE + _N_GENRES:] = 0.0
    tests["unseen_flipped"] = (Xu, yu, ysu)
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
                                     _hidden_instruction(base())),
                                    ("fit_shuffled_instruction", False,
                                     _ShuffledInstruction(base(), random_state=seed))):
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


def _text_robust_run(cfg, seed, device):
    """Text FIT and vanilla SFT of one paired seed: their accuracy on ``y`` per split.

    One world per seed: the training texts, the test texts and both models' initial
    weights come from ``seed``. Both models fine-tune the same language model on the same
    texts for the same epochs; vanilla SFT is trained on ``y`` with the empty instruction
    only (the paper's plain fine-tuning), FIT on the six instruction types.
    """
    from skpaper.datasets import make_spurious_task
    from skpaper.language import FocusInstructionLM, LanguageModel, WordTokenizer

    layers, width, epochs = cfg["rob_lm"]
    texts, y, _ = make_spurious_task(cfg["rob_train"], rho=_RHO, n_genres=_N_GENRES, kind="nli",
                                     genre_register=True, random_state=seed)
    tests = _test_splits(cfg["rob_test"], "nli", seed + 1)
    lm = LanguageModel(tokenizer=WordTokenizer(), n_layers=layers, d_model=width, n_heads=4,
                       max_len=40, max_epochs=epochs, batch_size=cfg["rob_batch"],
                       lr=cfg["rob_lr"], device=device, random_state=seed)
    fit = FocusInstructionLM(lm, spurious_pattern=r"^(\S+ \S+) :", random_state=seed)
    vanilla = FocusInstructionLM(lm, spurious_pattern=r"^(\S+ \S+) :", focus_types=["empty"],
                                 default_focus="empty", random_state=seed)
    fit.fit(texts, y)
    vanilla.fit(texts, y)
    out = {}
    for split, (Xt, yt, ys) in tests.items():
        out[split] = {
            "fit_focus_C_ignore_S": float(np.mean(fit.predict(Xt, focus="focus_C_ignore_S")
                                                  == yt)),
            "fit_empty": float(np.mean(fit.predict(Xt, focus="empty") == yt)),
            "fit_focus_S_on_y_S": float(np.mean(fit.predict(Xt, focus="focus_S") == ys)),
            "vanilla": float(np.mean(vanilla.predict(Xt, focus="empty") == yt))}
    return out


# Holds every seed of the largest look: run_comparison asks each arm for all of a look's seeds
# in turn, so a smaller cache would retrain the models once per arm.
@shared_cache(maxsize=128)
def _text_robust(scale, seed):
    """Text FIT and vanilla SFT of one paired seed (CPU below the full scale)."""
    return _text_robust_run(_SCALES[scale], seed, "auto" if scale == "full" else "cpu")


@shared_cache(maxsize=64)
def _tabular(scale, seed):
    """Every tabular model of one paired seed (shared by the claims)."""
    return _tabular_run(_SCALES[scale], seed)


@shared_cache(maxsize=4)
def _text_experiment(scale, seed):
    """The text models on their paired seeds: per-seed reports ``{model: [report, ...]}``."""
    cfg = _SCALES[scale]
    # smoke and quick stay on the CPU so that their figures are the same on every machine.
    device = "auto" if scale == "full" else "cpu"
    runs = [_text_run(cfg, s, device) for s in claim_seeds(seed, cfg["text_seeds"], 2)]
    return {name: [r[name] for r in runs] for name in runs[0]}


def _tab_per_seed(scale, seeds):
    runs = [_tabular(scale, s) for s in seeds]
    return {name: [r[name] for r in runs] for name in runs[0]}


def _tab_comparison(scale, seed, arms, **kwargs):
    """Tabular arms on sequential paired seeds (one stream shared by every tabular claim)."""
    cfg = _SCALES[scale]
    cost = dict(train_examples=cfg["tab_train"], train_steps=cfg["tab_iter"],
                extra={"learner": "HistGradientBoostingClassifier"})
    runs = {name: (lambda f: lambda s: ArmRun(f(_tabular(scale, s)), **cost))(func)
            for name, func in arms.items()}
    return run_comparison(runs, seed=seed, looks=cfg["tab_looks"], key=(1,), **kwargs)


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


def _mean_of(comparison, scale):
    per_seed = _tab_per_seed(scale, comparison.seeds)
    return {name: _mean_reports(reports) for name, reports in per_seed.items()}, per_seed


@register_claim(SLUG, "steerability",
                "A focus-tuned model follows every focus instruction on the flipped split: its "
                "focus accuracy is high on all six types, including focus(S).",
                paper_statement="Figure 3 (SMNLI radar): FIT reaches about 85-100% focus "
                                "accuracy on all six focus types, on the iid, high, low and "
                                "flipped splits; the SFT(y_focus) baseline scores about 20-60% "
                                "on the focus(S) types.",
                check="lower 95% bound, over sequential paired seeds, of plain FIT's minimum "
                      "focus accuracy over the six types on the flipped split > 0.85",
                control="FIT trained with the instruction codes shuffled between rows (the "
                        "instructions seen, their link to the focus label removed)",
                effect_of_interest=_STEER_EOI)
def _claim_steerability(scale, seed, out_dir):
    cmp = _tab_comparison(
        scale, seed,
        {"fit": lambda r: _min_focus(r["fit"]),
         "fit_shuffled_instruction": lambda r: _min_focus(r["fit_shuffled_instruction"])},
        method="fit", baseline=None, control_method="fit_shuffled_instruction",
        effect_of_interest=_STEER_EOI, margin=_PAPER_FOCUS_MIN,
        metric="minimum focus accuracy over the six types, flipped split")
    results, _ = _mean_of(cmp, scale)
    artifact = _focus_figure(results, out_dir, "focus_accuracy_tabular",
                             [("fit", "FIT"), ("sft_hidden_instruction",
                                               "SFT(y_focus), instruction hidden"),
                              ("fit_shuffled_instruction", "FIT, instructions shuffled")])
    return cmp.claim_result(
        observed={"fit": _round(results["fit"]),
                  "sft_hidden_instruction": _round(results["sft_hidden_instruction"]),
                  "fit_decoupled_min_focus_acc_flipped": round(
                      _min_focus(results["fit_decoupled"]), 4)},
        artifacts=[artifact],
        notes=("Tabular analogue: six genres (one-hot) and their register (one-hot) tied to "
               "three labels (rho=0.9); the instruction is a one-hot code appended to the "
               "features, and histogram gradient boosting learns the focus labels. The core "
               "is strong, so the task types stay high on the flipped split even though plain "
               "FIT keeps some reliance on the genre (see robustness). The paper's "
               "SFT(y_focus) baseline (instruction hidden) is shown beside it."
               + _LOOKS_NOTE),
    )


@register_claim(SLUG, "robustness",
                "Plain FIT asked to focus on the core and ignore the genre is more accurate "
                "than vanilla fine-tuning on the flipped split (text analogue: a language "
                "model reading natural-language focus instructions).",
                paper_statement="Abstract and Figure 3: FIT improves robustness by amplifying "
                                "core signals and down-weighting spurious cues; its focus(C) "
                                "accuracy is nearly identical across the iid, high, low and "
                                "flipped SMNLI splits (max std 6.47%), where vanilla SFT drops.",
                check="lower 95% bound of the paired mean (text FIT focus(C)-ignore(S) accuracy "
                      "- vanilla SFT accuracy) on the flipped split, over sequential paired "
                      "seeds (one world each), > 0",
                control="FIT's own empty-instruction answers in place of the focus(C)-ignore(S) "
                        "answers (the instruction removed at inference)",
                effect_of_interest=_ROBUST_EOI)
def _claim_robustness(scale, seed, out_dir):
    cfg = _SCALES[scale]
    layers, width, epochs = cfg["rob_lm"]
    cost = dict(train_examples=cfg["rob_train"], train_steps=epochs,
                extra={"learner": f"LanguageModel, {layers} layers, width {width}",
                       "steps": "epochs"})
    arms = {"fit_focus_C_ignore_S": lambda r: r["flipped"]["fit_focus_C_ignore_S"],
            "vanilla": lambda r: r["flipped"]["vanilla"],
            "fit_empty_instruction": lambda r: r["flipped"]["fit_empty"]}
    runs = {name: (lambda f: lambda s: ArmRun(f(_text_robust(scale, s)), **cost))(func)
            for name, func in arms.items()}
    cmp = run_comparison(runs, method="fit_focus_C_ignore_S", baseline="vanilla", seed=seed,
                         looks=cfg["rob_looks"], key=cfg.get("rob_key", (3,)),
                         control_method="fit_empty_instruction",
                         effect_of_interest=_ROBUST_EOI, metric="accuracy on y, flipped split")
    per_seed = [_text_robust(scale, s) for s in cmp.seeds]
    means = {split: {k: round(float(np.mean([r[split][k] for r in per_seed])), 4)
                     for k in per_seed[0][split]} for split in _SPLITS}
    # The tabular analogue (one-hot instruction) beside it, on the tabular claims' seeds.
    tab = _tab_per_seed(scale, claim_seeds(seed, _SCALES[scale]["tab_looks"][0], 1))
    tab_gain = paired_difference([r["flipped"]["focus_C_ignore_S"] for r in tab["fit"]],
                                 [r["flipped"]["empty"] for r in tab["vanilla"]])
    fig, ax = new_figure(figsize=(5.2, 3.6))
    x = np.arange(len(_SPLITS))
    for label, key, style in (("vanilla SFT", "vanilla", "o-"),
                              ("FIT, focus(C) ignore(S)", "fit_focus_C_ignore_S", "^--"),
                              ("FIT, empty instruction", "fit_empty", "s:")):
        ax.plot(x, [means[s][key] for s in _SPLITS], style, label=label)
    ax.axhline(1.0 / _K, lw=1, ls="--", color="grey")
    ax.set_xticks(x, _SPLITS, fontsize=8)
    ax.set_ylabel("accuracy on y (text analogue)")
    ax.legend(fontsize=7)
    artifact = save_figure(fig, out_dir, "core_accuracy_by_split")
    return cmp.claim_result(
        observed={"text_by_split": means,
                  "tabular_one_hot_instruction_gain_flipped": tab_gain.to_dict(),
                  "seed_stream_key": list(cfg.get("rob_key", (3,))),
                  **({"first_design": dict(_ROBUST_FIRST_DESIGN,
                                           note="recorded from the first design's run at "
                                                "quick scale, seed 0; not rerun")}
                     if "rob_key" in cfg else {})},
        artifacts=[artifact],
        notes=("Text analogue, where an instruction can redirect attention between features: "
               "a word-level causal transformer reads 'focus on the meaning and ignore the "
               "genre' (three paraphrases per type) after an NLI-like input whose core "
               "(quantifier monotonicity) must be learned, with the genre and its register in "
               "front (rho=0.9). Vanilla SFT is the same model on the same texts and epochs, "
               "trained on y with the empty instruction. At this budget both learn the core "
               "(accuracy well above chance on the low split, where the genre carries nothing; "
               "see text_by_split and the calibration setting). Without a pre-trained notion "
               "of 'ignore', the instruction gets its meaning from the training data only, "
               "where the label stays correlated with the genre under every core type; a "
               "contradiction here says the FIT objective alone does not buy robustness. "
               "The tabular analogue (one-hot instruction) is reported beside it."
               + _ROBUST_LOOKS_NOTE + (_ROBUST_DESIGN_NOTE if "rob_key" in cfg else "")),
    )


@register_claim(SLUG, "decoupled-invariance",
                "Ours (not in the paper): FIT with the excluded feature decoupled keeps its "
                "focus(C)-ignore(S) accuracy across the iid, low and flipped splits and beats "
                "vanilla fine-tuning on the flipped split.",
                paper_statement="The invariance the paper reports for FIT (Figure 3: nearly "
                                "identical focus accuracy across SMNLI splits); the decoupling "
                                "that produces it here is our adaptation, so this claim is "
                                "reported, not counted as a reproduction of the paper.",
                check="nothing asserted: decoupled FIT's focus(C)-ignore(S) gain over vanilla "
                      "on the flipped split and its spread across iid/low/flipped, with the "
                      "same figures for its empty-instruction answers, over paired seeds",
                reported=True)
def _claim_invariance(scale, seed, out_dir):
    cfg = _SCALES[scale]
    per_seed = _tab_per_seed(scale, claim_seeds(seed, cfg["tab_looks"][0], 1))
    results = {name: _mean_reports(reports) for name, reports in per_seed.items()}

    def figures(focus):
        gain = paired_difference([r["flipped"][focus] for r in per_seed["fit_decoupled"]],
                                 [r["flipped"]["empty"] for r in per_seed["vanilla"]])
        spread = seed_summary([_spread(r, focus) for r in per_seed["fit_decoupled"]])
        return {"gain_vs_vanilla_flipped": gain.to_dict(), "spread_iid_low_flipped": spread}

    dec = results["fit_decoupled"]
    return ClaimResult(
        observed={"focus_C_ignore_S": figures("focus_C_ignore_S"),
                  "empty_instruction": figures("empty"),
                  "fit_decoupled_focus_C_ignore_S": {s: round(dec[s]["focus_C_ignore_S"], 4)
                                                     for s in _SPLITS},
                  "vanilla": {s: round(results["vanilla"][s]["empty"], 4) for s in _SPLITS}},
        expected={"reported": "gain and spread of decoupled FIT; no direction asserted"},
        passed=None,
        notes=("Decoupling is an adaptation, not in the paper: under the types that exclude a "
               "feature the spurious columns are shuffled between examples, so the focus label "
               "cannot depend on the excluded feature; an LLM gets that from language instead. "
               f"{cfg['tab_looks'][0]} paired seeds. The figure of the robustness claim shows "
               "it beside plain FIT."),
    )


def _steering(report, split="unseen_flipped"):
    """P(answer = y_S | focus(S)) - P(answer = y_S | focus(C) ignore(S)) on ``split``."""
    return float(np.mean([report[split][t] for t in _FOCUS_S])
                 - report[split]["core_answer_is_spurious"])


@register_claim(SLUG, "unseen-feature-generalisation",
                "On genres never seen in training (no feature of theirs met in training, a "
                "flipped correlation), the focus instruction still steers plain FIT: asked to "
                "focus on the genre it answers the genre's label, asked to ignore it it does "
                "not.",
                paper_statement="Abstract: FIT generalises under distribution shift and to "
                                "previously unseen focus features (SMNLI D^s with unseen "
                                "genres; BBQ unseen bias categories).",
                check="lower 95% bound of the paired mean, over sequential paired seeds, of "
                      "(focus(S) accuracy against y_S - share of focus(C)-ignore(S) answers "
                      "equal to y_S) on the unseen-genre flipped split > 0",
                control="FIT trained with the instruction codes shuffled between rows (the "
                        "instructions seen, their link to the focus label removed)",
                effect_of_interest=_UNSEEN_EOI)
def _claim_unseen(scale, seed, out_dir):
    cmp = _tab_comparison(
        scale, seed,
        {"fit": lambda r: _steering(r["fit"]),
         "fit_shuffled_instruction": lambda r: _steering(r["fit_shuffled_instruction"])},
        method="fit", baseline=None, control_method="fit_shuffled_instruction",
        effect_of_interest=_UNSEEN_EOI, metric="steering effect on unseen genres")
    results, per_seed = _mean_of(cmp, scale)
    artifact = _focus_figure(results, out_dir, "focus_accuracy_unseen",
                             [("fit", "FIT"), ("fit_decoupled", "FIT + decoupling (ours)")])
    return cmp.claim_result(
        observed={"fit_unseen_flipped": _round({"u": results["fit"]["unseen_flipped"]})["u"],
                  "steering_effect_seen_flipped": float(np.mean(
                      [_steering(r, "flipped") for r in per_seed["fit"]])),
                  "fit_decoupled_unseen_flipped": _round(
                      {"u": results["fit_decoupled"]["unseen_flipped"]})["u"],
                  "vanilla_unseen_flipped": round(
                      results["vanilla"]["unseen_flipped"]["empty"], 4)},
        artifacts=[artifact],
        notes=("Unseen genres are new genre values: all zeros in the genre one-hot and, unlike "
               "the seen genres, no register either (with the register kept, their spurious "
               "label could be read off a feature met in training and the effect would hold "
               "by construction). Their correlation with y is flipped (rho=0.9 towards "
               "(y_S + 1) mod 3), so answering y_S and answering y disagree. The estimator's "
               "docstring expects focus(S) to fall to chance there (the limitation the paper "
               "reports for unseen genres); where it is contradicted, that is the limitation."
               + _LOOKS_NOTE),
    )


@register_claim(SLUG, "text-variant",
                "Ours (decoupling is not in the paper): a tiny transformer fine-tuned with "
                "natural-language focus instructions and decoupling follows focus(S) on seen "
                "genres and, asked to ignore the genre, beats its own genre-reliant "
                "empty-instruction answers on the flipped split.",
                paper_statement="Figure 3: FIT focus accuracy about 85-100% on all types and "
                                "splits, with natural-language focus instructions and held-out "
                                "paraphrases; the decoupling is our adaptation, so the text "
                                "variant is reported, not counted as a reproduction.",
                check="nothing asserted: the text models' focus(C)-ignore(S) gain over their "
                      "empty-instruction answers on the flipped split, their minimum focus(S) "
                      "accuracy on the seen splits and their steering effect on unseen genres, "
                      "decoupled and plain, over paired seeds",
                reported=True)
def _claim_text(scale, seed, out_dir):
    cfg = _SCALES[scale]
    per_seed = _text_experiment(scale, seed)
    results = {name: _mean_reports(reports) for name, reports in per_seed.items()}

    def figures(model):
        rows = per_seed[model]
        gain = paired_difference([r["flipped"]["focus_C_ignore_S"] for r in rows],
                                 [r["flipped"]["empty"] for r in rows], alternative="greater")
        steer = mean_interval([min(r[s][t] for s in _SEEN for t in _FOCUS_S) for r in rows],
                              alternative="greater", margin=_PAPER_FOCUS_MIN)
        return {"gain_over_empty_flipped": gain.to_dict(), "min_focus_S_seen": steer.to_dict(),
                "steering_effect_unseen_flipped": seed_summary([_steering(r) for r in rows])}

    artifact = _focus_figure(results, out_dir, "focus_accuracy_text",
                             [("text_fit_decoupled", "text FIT + decoupling (ours)"),
                              ("text_fit", "text FIT")])
    layers, width, epochs = cfg["text_lm"]
    arm = {"lm": f"{layers} layers, width {width}", "train_epochs": epochs,
           "train_examples": cfg["text_train"], "paired_seeds": cfg["text_seeds"]}
    return ClaimResult(
        observed={"text_fit_decoupled": figures("text_fit_decoupled"),
                  "text_fit": figures("text_fit"),
                  "focus_C_ignore_S_spread": seed_summary(
                      [_spread(r) for r in per_seed["text_fit_decoupled"]]),
                  "text_fit_decoupled_report": _round(results["text_fit_decoupled"]),
                  "text_fit_report": _round(results["text_fit"])},
        expected={"reported": "figures of the text models; no direction asserted"},
        passed=None, arms={"text_fit_decoupled": arm, "text_fit": arm}, artifacts=[artifact],
        notes=("Trained from scratch on CPU (no pre-trained LLM): a word-level causal "
               "transformer, three paraphrases per instruction type, the instruction after "
               "the input. The empty-instruction answers are the vanilla reference (that type "
               "is trained on y with the genre in place). Quick scale (1200 texts, 8 epochs, "
               "width 48) is too small to learn the core: the model mostly answers every "
               "instruction alike, leaning on the genre. The full scale trains 6000 texts for "
               "20 epochs at width 64 over five seeds."),
    )


def _calibration(seed=0, n_seeds=4):
    """Power figures of the three asserting tabular claims on the calibration setting.

    ``_SCALES["calibration"]`` trains on fewer rows with fewer boosting iterations than any
    scale, on seeds from stream key 99 (the claims use key 1). Returns, per claim, the
    per-seed figures of the check and of its control and the seeds a one-look t test
    needs: for the check, to tell its calibration mean from the margin; for the control,
    to tell its calibration mean from the effect of interest.
    """
    from ._stats import seeds_needed

    runs = [_tabular("calibration", s) for s in claim_seeds(seed, n_seeds, 99)]
    figures = {
        "steerability": ([_min_focus(r["fit"]) for r in runs],
                         [_min_focus(r["fit_shuffled_instruction"]) for r in runs],
                         _PAPER_FOCUS_MIN, _STEER_EOI.value),
        "robustness": ([r["fit"]["flipped"]["focus_C_ignore_S"] - r["vanilla"]["flipped"]["empty"]
                        for r in runs],
                       [r["fit"]["flipped"]["empty"] - r["vanilla"]["flipped"]["empty"]
                        for r in runs], 0.0, _ROBUST_EOI.value),
        "unseen-feature-generalisation": ([_steering(r["fit"]) for r in runs],
                                          [_steering(r["fit_shuffled_instruction"])
                                           for r in runs], 0.0, _UNSEEN_EOI.value),
    }
    out = {}
    for name, (method, control, margin, eoi) in figures.items():
        method, control = np.asarray(method), np.asarray(control)
        out[name] = {"method": method.round(4).tolist(), "control": control.round(4).tolist(),
                     "seeds_needed_check": seeds_needed(method.std(ddof=1),
                                                        method.mean() - margin),
                     "seeds_needed_control": seeds_needed(control.std(ddof=1),
                                                          eoi - control.mean())}
    return out


def _robust_calibration(seed=0, n_seeds=3):
    """Power figures of the text robustness claim on its calibration setting.

    ``_SCALES["rob_calibration"]`` trains on 2000 texts for 24 epochs (the quick claim
    on 2400 for 20), on seeds from stream key 98 (the claim uses key 3). Returns the
    per-seed paired differences of the check (FIT focus(C)-ignore(S) - vanilla, flipped
    split) and of the control (FIT's empty-instruction answers - vanilla), the core
    accuracies on the iid and low splits (to show that the models learn the core
    feature), and the seeds a one-look t test needs to tell the check's mean from 0 and
    from the effect of interest, and the control's mean from the effect of interest.
    """
    from ._stats import seeds_needed

    runs = [_text_robust("rob_calibration", s) for s in claim_seeds(seed, n_seeds, 98)]
    check = np.array([r["flipped"]["fit_focus_C_ignore_S"] - r["flipped"]["vanilla"]
                      for r in runs])
    control = np.array([r["flipped"]["fit_empty"] - r["flipped"]["vanilla"] for r in runs])
    eoi = _ROBUST_EOI.value
    return {"check": check.round(4).tolist(), "control": control.round(4).tolist(),
            "core_accuracy": {s: {k: [round(r[s][k], 4) for r in runs]
                                  for k in ("fit_focus_C_ignore_S", "vanilla")}
                              for s in ("iid", "low")},
            "seeds_needed_check_vs_0": seeds_needed(check.std(ddof=1), abs(check.mean())),
            "seeds_needed_check_vs_eoi": seeds_needed(check.std(ddof=1), eoi - check.mean()),
            "seeds_needed_control": seeds_needed(control.std(ddof=1), eoi - control.mean())}
