"""The focus-instruction-tuning claims' control: instruction codes shuffled in training only."""

import numpy as np
from sklearn.base import clone
from sklearn.tree import DecisionTreeClassifier

from skpaper.papers import focus_instruction_tuning as paper


def test_shuffled_instruction_permutes_the_codes_in_training_only():
    rng = np.random.default_rng(0)

    def table(n):
        Z = np.hstack([rng.normal(size=(n, 3)), np.eye(2)[rng.integers(2, size=n)]])
        return Z, Z[:, -1].astype(int)  # the label is the instruction code itself

    Z, y = table(200)
    Z_new, y_new = table(400)
    plain = DecisionTreeClassifier(random_state=0).fit(Z, y)
    shuffled = paper._ShuffledInstruction(DecisionTreeClassifier(random_state=0), n_code=2,
                                          random_state=0).fit(Z, y)
    assert plain.score(Z_new, y_new) == 1.0
    # with the codes shuffled in training the link between code and label is gone
    assert shuffled.score(Z_new, y_new) < 0.65
    assert set(shuffled.classes_) == {0, 1} and shuffled.predict_proba(Z).shape == (200, 2)
    # fit leaves the caller's array alone and the wrapper clones
    assert np.array_equal(Z[:, -1].astype(int), y)
    assert clone(shuffled).get_params()["n_code"] == 2


def test_reported_claims_are_our_adaptations():
    from skpaper.papers._registry import get_claims

    claims = {c.claim_id: c for c in get_claims(paper.SLUG)}
    assert claims["decoupled-invariance"].reported and claims["text-variant"].reported
    for claim_id in ("steerability", "robustness", "unseen-feature-generalisation"):
        assert claims[claim_id].effect_of_interest is not None
    assert claims["steerability"].effect_of_interest.source == "paper"


def test_text_robustness_calibration_is_a_separate_setting():
    from skpaper.papers._stats import claim_seeds

    quick, calibration = paper._SCALES["quick"], paper._SCALES["rob_calibration"]
    # a different configuration and a different seed stream from the claim's
    assert (calibration["rob_train"], calibration["rob_lm"]) != (quick["rob_train"],
                                                                quick["rob_lm"])
    claim = set(claim_seeds(0, max(quick["rob_looks"]), *quick["rob_key"]))
    assert not set(claim_seeds(0, 8, 98)) & claim
    # the second design draws worlds the first design (key 3) never drew
    assert quick["rob_key"] != (3,)
    assert not set(claim_seeds(0, max(paper._ROBUST_LOOKS), 3)) & claim
    assert paper._ROBUST_EOI.source == "ours" and paper._ROBUST_EOI.value > 0


def test_text_robustness_run_reports_every_split_for_both_models():
    cfg = dict(paper._SCALES["smoke"], rob_train=90, rob_test=12, rob_lm=(1, 16, 1))
    out = paper._text_robust_run(cfg, 5, "cpu")
    assert set(out) == set(paper._SPLITS)
    for row in out.values():
        assert set(row) == {"fit_focus_C_ignore_S", "fit_empty", "fit_focus_S_on_y_S", "vanilla"}
        # 12 test texts: every accuracy is a multiple of 1/12 in [0, 1]
        assert all(0.0 <= v <= 1.0 and abs(v * 12 - round(v * 12)) < 1e-9 for v in row.values())


def _report_by_recomputation(model, X, y, y_s):
    out = model.focus_accuracy_report(X, y, y_s)
    out["core_answer_is_spurious"] = float(np.mean(
        model.predict(X, focus="focus_C_ignore_S") == y_s))
    return out


def test_report_equals_its_recomputation_tabular(global_random_seed):
    from skpaper.datasets import make_spurious_task
    from skpaper.language import FocusInstructionTuner

    X, y, _ = make_spurious_task(300, rho=paper._RHO, n_genres=paper._N_GENRES,
                                 genre_register=True, random_state=global_random_seed)
    spurious = list(range(paper._N_CORE, paper._N_CORE + paper._N_SPURIOUS))
    model = FocusInstructionTuner(DecisionTreeClassifier(random_state=0),
                                  spurious_columns=spurious,
                                  random_state=global_random_seed).fit(X, y)
    for Xt, yt, ys in paper._test_splits(80, "tabular", global_random_seed + 1).values():
        assert paper._report(model, Xt, yt, ys) == _report_by_recomputation(model, Xt, yt, ys)


def test_report_equals_its_recomputation_text():
    from skpaper.datasets import make_spurious_task
    from skpaper.language import FocusInstructionLM, LanguageModel, WordTokenizer

    texts, y, _ = make_spurious_task(90, rho=paper._RHO, n_genres=paper._N_GENRES, kind="nli",
                                     genre_register=True, random_state=3)
    lm = LanguageModel(tokenizer=WordTokenizer(), n_layers=1, d_model=16, n_heads=2,
                       max_len=40, max_epochs=1, device="cpu", random_state=3)
    model = FocusInstructionLM(lm, spurious_pattern=r"^(\S+ \S+) :", random_state=3).fit(texts, y)
    for Xt, yt, ys in paper._test_splits(12, "nli", 4).values():
        assert paper._report(model, Xt, yt, ys) == _report_by_recomputation(model, Xt, yt, ys)


def test_text_robustness_second_design_is_sized_by_its_control():
    from skpaper.papers._stats import sd_upper_limit, seeds_needed

    first, looks = paper._ROBUST_FIRST_DESIGN, paper._SCALES["quick"]["rob_looks"]
    assert first["verdict"] != "undecided" and first["control_verdict"] == "undecided"
    gap = paper._ROBUST_EOI.value - first["control_mean"]
    assert looks[-1] == seeds_needed(sd_upper_limit(first["control_sd"], first["n"]), gap,
                                     alpha=0.05 / len(looks))
