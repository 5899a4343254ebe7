"""Tests for Focus Instruction Tuning: focus labels, the spurious-genre generator, the tabular
meta-estimator and the tiny-LM text variant."""

import pickle
import re

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import binom
from sklearn.base import BaseEstimator, ClassifierMixin, clone
from sklearn.exceptions import NotFittedError
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from skpaper.datasets import make_spurious_task
from skpaper.datasets._language import _QUANTIFIER_RELATION, _SENTIMENT_WORDS, _UNSEEN_GENRES
from skpaper.language import (
    DEFAULT_FOCUS_TEMPLATES,
    FOCUS_TYPES,
    FocusInstructionLM,
    FocusInstructionTuner,
    LanguageModel,
    WordTokenizer,
    focus_labels,
)

SPURIOUS = list(range(4, 10))
Y_TYPES = ("empty", "focus_C", "ignore_S", "focus_C_ignore_S")
S_TYPES = ("focus_S", "focus_S_ignore_C")
NLI_LABELS = ("entailment", "neutral", "contradiction")


def _binomial_band(n, p, alpha=1e-6):
    """Bounds on a sample proportion that a correct generator leaves with probability 1 - alpha."""
    lo, hi = binom.ppf(alpha / 2, n, p), binom.ppf(1 - alpha / 2, n, p)
    return lo / n, hi / n


class _Recorder(ClassifierMixin, BaseEstimator):
    """Stores the table it is fitted on; predicts the first class."""

    def fit(self, X, y):
        self.X_, self.y_ = np.asarray(X), np.asarray(y)
        self.classes_ = np.unique(y)
        return self

    def predict(self, X):
        return np.full(len(X), self.classes_[0])


class _RecordingLM(BaseEstimator):
    """Stands in for a LanguageModel: stores the prompts, scores every label alike."""

    def __init__(self, random_state=None):
        self.random_state = random_state

    def fit(self, X, y):
        self.prompts_, self.responses_ = list(X), list(y)
        self.tokenizer_ = WordTokenizer().fit(self.prompts_ + self.responses_)
        return self

    def score_samples(self, X, y):
        return np.array([-float(len(r)) for r in y])


@pytest.fixture(scope="module")
def tabular():
    X, y, y_s = make_spurious_task(1200, rho=0.9, random_state=0)
    tests = {s: make_spurious_task(600, rho=1 / 3 if s == "unseen" else 0.9, split=s,
                                   random_state=i + 1)
             for i, s in enumerate(("iid", "low", "flipped", "unseen"))}
    return X, y, y_s, tests


@pytest.fixture(scope="module")
def fitted_pair(tabular):
    X, y, _, _ = tabular
    plain = FocusInstructionTuner(spurious_columns=SPURIOUS, random_state=0).fit(X, y)
    dec = FocusInstructionTuner(spurious_columns=SPURIOUS, decouple_excluded=True,
                                random_state=0).fit(X, y)
    return plain, dec


def _tiny_lm(**kw):
    params = dict(tokenizer=WordTokenizer(), n_layers=2, d_model=64, n_heads=2, max_len=40,
                  max_epochs=8, lr=3e-3, device="cpu")
    return LanguageModel(**{**params, **kw})


@pytest.fixture(scope="module")
def sentiment_fit():
    # Following the genre is what this size learns on every seed tried (six of six);
    # the core instructions need the claim's longer training.
    texts, y, _ = make_spurious_task(1000, kind="sentiment", random_state=0)
    model = FocusInstructionLM(_tiny_lm(), focus_types=["empty", "focus_S"],
                               default_focus="focus_S", decouple_excluded=True, random_state=0)
    return model.fit(texts, y)


# ---------------------------------------------------------------------------- focus labels
@pytest.mark.parametrize("focus", FOCUS_TYPES)
def test_focus_labels_follow_the_type(focus):
    y, y_s = np.array([0, 1, 2, 1]), np.array([2, 2, 0, 1])
    expected = y_s if focus in S_TYPES else y
    np.testing.assert_array_equal(focus_labels(y, y_s, focus), expected)


def test_focus_labels_per_sample_types():
    y, y_s = np.array(["a", "b", "c"]), np.array(["c", "c", "c"])
    out = focus_labels(y, y_s, ["focus_S", "ignore_S", "focus_S_ignore_C"])
    assert out.tolist() == ["c", "b", "c"]


@given(st.lists(st.tuples(st.integers(0, 4), st.integers(0, 4), st.sampled_from(FOCUS_TYPES)),
                min_size=1, max_size=30))
@settings(max_examples=40)
def test_focus_labels_property_each_entry_is_y_or_spurious(rows):
    y, y_s, types = (np.array(c) for c in zip(*rows))
    out = focus_labels(y, y_s, types)
    for label, task, spur, focus in zip(out, y, y_s, types):
        assert label == (spur if focus in S_TYPES else task)


def test_focus_labels_bad_input():
    with pytest.raises(ValueError, match="focus must be one of"):
        focus_labels([0], [1], "focus_on_everything")
    with pytest.raises(ValueError, match="unknown types"):
        focus_labels([0, 1], [1, 1], ["focus_S", "nope"])
    with pytest.raises(ValueError, match="same length"):
        focus_labels([0, 1], [1], "focus_S")
    with pytest.raises(ValueError, match="one type per sample"):
        focus_labels([0, 1], [1, 1], ["focus_S"])


# ------------------------------------------------------------------------------- generator
@pytest.mark.parametrize("split, rho, shift", [("iid", 0.9, 0), ("low", 0.9, 0),
                                               ("flipped", 0.9, 1), ("unseen", 0.8, 0)])
def test_make_spurious_task_correlation_per_split(split, rho, shift):
    n = 4000
    X, y, y_s = make_spurious_task(n, rho=rho, split=split, random_state=3)
    p = 1 / 3 if split == "low" else rho
    lo, hi = _binomial_band(n, p)
    assert lo <= np.mean(y == (y_s + shift) % 3) <= hi
    genre_cols = X[:, 4:]
    if split == "unseen":
        assert not genre_cols.any()
    else:
        # The genre-to-label rule is the same in every split: y_S = genre mod K.
        np.testing.assert_array_equal(genre_cols.argmax(1) % 3, y_s)
        assert np.all(genre_cols.sum(1) == 1)


def test_make_spurious_task_core_means_do_not_depend_on_seed():
    means = []
    for seed in (0, 1):
        X, y, _ = make_spurious_task(6000, noise=0.1, random_state=seed)
        means.append(np.stack([X[y == k, :4].mean(0) for k in range(3)]))
    np.testing.assert_allclose(means[0], means[1], atol=0.02)
    np.testing.assert_allclose(means[0], 2.0 * np.eye(3, 4), atol=0.02)


@given(rho=st.floats(0, 1), n_genres=st.integers(1, 8), seed=st.integers(0, 1000),
       split=st.sampled_from(["iid", "low", "flipped", "unseen"]))
@settings(max_examples=30, deadline=None)
def test_make_spurious_task_property_shapes_and_labels(rho, n_genres, seed, split):
    X, y, y_s = make_spurious_task(30, rho=rho, n_genres=n_genres, split=split,
                                   random_state=seed)
    assert X.shape == (30, 4 + n_genres)
    assert set(np.unique(y)) <= {0, 1, 2} and set(np.unique(y_s)) <= {0, 1, 2}
    texts, yt, yst = make_spurious_task(30, rho=rho, n_genres=n_genres, split=split,
                                        kind="nli", random_state=seed)
    assert len(texts) == 30 and set(yt) <= set(NLI_LABELS) and set(yst) <= set(NLI_LABELS)


def test_make_spurious_task_nli_texts_encode_the_label():
    texts, y, y_s = make_spurious_task(300, kind="nli", noise=0.0, random_state=0)
    for text, label in zip(texts, y):
        genre, pair = text.split(" : ")
        premise, hypothesis = pair.split(" ; ")
        q1, *rest1 = premise.split()
        q2, *rest2 = hypothesis.split()
        assert rest1 == rest2
        assert NLI_LABELS[_QUANTIFIER_RELATION[(q1, q2)]] == label


def test_make_spurious_task_sentiment_and_unseen_genres():
    texts, y, _ = make_spurious_task(200, kind="sentiment", noise=0.0, split="unseen",
                                     random_state=0)
    labels = ("negative", "neutral", "positive")
    for text, label in zip(texts, y):
        assert text.split()[0] in _UNSEEN_GENRES
        assert text.split()[-1] in _SENTIMENT_WORDS[labels.index(label)]


@pytest.mark.parametrize("kind", ["tabular", "nli"])
def test_make_spurious_task_register_is_shared_by_seen_and_unseen_genres(kind):
    from skpaper.datasets._language import _GENRE_REGISTERS

    n = 3000
    for split in ("flipped", "unseen_flipped"):
        X, y, y_s = make_spurious_task(n, split=split, kind=kind, genre_register=True,
                                       random_state=1)
        lo, hi = _binomial_band(n, 0.9)
        # unseen_flipped keeps a real correlation, pointing away from y_S
        assert lo <= np.mean(y == _shift_label(y_s, kind)) <= hi
        if kind == "tabular":
            assert X.shape == (n, 4 + 6 + 3)
            np.testing.assert_array_equal(X[:, -3:].argmax(1), y_s)
            assert X[:, 4:10].any() == (split == "flipped")
        else:
            registers = [text.split()[1] for text in X]
            labels = sorted(set(y_s))
            for register, label in zip(registers, y_s):
                assert register == _GENRE_REGISTERS[NLI_LABELS.index(label)]
            assert len(labels) == 3
            assert all(text.split()[0] in _UNSEEN_GENRES for text in X) == (split != "flipped")


def _shift_label(y_s, kind):
    if kind == "tabular":
        return (y_s + 1) % 3
    return np.array([NLI_LABELS[(NLI_LABELS.index(v) + 1) % 3] for v in y_s])


@pytest.mark.parametrize("kwargs, match", [
    ({"split": "shifted"}, "split must be one of"),
    ({"kind": "image"}, "kind must be one of"),
    ({"rho": 1.5}, "rho must be a float in"),
    ({"kind": "nli", "n_classes": 4}, "n_classes must be 3"),
    ({"kind": "nli", "n_genres": 9}, "n_genres must be <= 8"),
    ({"n_core": 2}, "n_core must be an int >= 3"),
    ({"noise": -1.0}, "noise must be a float >= 0"),
    ({"kind": "sentiment", "noise": 2.0}, "noise must be a probability"),
    ({"n_samples": 0}, "n_samples must be an int >= 1"),
])
def test_make_spurious_task_bad_input(kwargs, match):
    with pytest.raises(ValueError, match=match):
        make_spurious_task(**{"n_samples": 10, **kwargs})
    with pytest.raises(TypeError, match="genre_register must be a bool"):
        make_spurious_task(10, genre_register="yes")


# --------------------------------------------------------------------- tabular estimator
@pytest.mark.parametrize("decouple", [False, True])
def test_tuner_builds_focus_labels_exactly_per_type(tabular, decouple):
    X, y, y_s, _ = tabular
    est = FocusInstructionTuner(_Recorder(), spurious_columns=SPURIOUS, decouple_excluded=decouple,
                                n_copies=2, random_state=0).fit(X, y)
    Z, target = est.estimator_.X_, est.classes_[est.estimator_.y_]
    rows = np.tile(np.arange(len(y)), 2)
    assert Z.shape == (2 * len(y), 4 + 6 + 6)
    np.testing.assert_array_equal(Z[:, :4], X[rows][:, :4])  # the core is never moved
    types = np.asarray(FOCUS_TYPES)[Z[:, 10:].argmax(1)]
    spurious_label_of = Z[:, 4:10].argmax(1) % 3  # the S that the row now carries
    for focus in FOCUS_TYPES:
        members = types == focus
        assert members.any()
        expected = spurious_label_of[members] if focus in S_TYPES else y[rows][members]
        np.testing.assert_array_equal(target[members], expected)
        carried, original = Z[members, 4:10], X[rows][members][:, 4:]
        if decouple and focus != "empty":
            # A permutation of the group's own spurious rows, no longer aligned with them.
            np.testing.assert_array_equal(np.sort(carried.argmax(1)), np.sort(original.argmax(1)))
            assert np.mean(carried.argmax(1) == original.argmax(1)) < 0.5
        else:
            np.testing.assert_array_equal(carried, original)
    if not decouple:
        np.testing.assert_array_equal(spurious_label_of, y_s[rows])


def test_tuner_type_probs_and_subset(tabular):
    X, y, _, _ = tabular
    est = FocusInstructionTuner(_Recorder(), spurious_columns=SPURIOUS,
                                focus_types=["focus_S", "focus_C"], default_focus="focus_C",
                                type_probs={"focus_C": 3, "focus_S": 1}, random_state=0).fit(X, y)
    assert est.focus_types_ == ("focus_C", "focus_S")
    np.testing.assert_allclose(est.type_probs_, [0.75, 0.25])
    share = est.estimator_.X_[:, 10].mean()
    lo, hi = _binomial_band(len(y), 0.75)
    assert lo <= share <= hi


def test_tuner_learns_the_majority_mapping(tabular, fitted_pair):
    X, y, y_s, _ = tabular
    plain, _ = fitted_pair
    mapped = plain._spurious_targets(X)
    np.testing.assert_array_equal(mapped, y_s)
    callable_fit = FocusInstructionTuner(
        _Recorder(), spurious_columns=SPURIOUS, spurious_label=lambda Xs: Xs.argmax(1) % 3,
        random_state=0).fit(X, y)
    majority_fit = FocusInstructionTuner(_Recorder(), spurious_columns=SPURIOUS,
                                         random_state=0).fit(X, y)
    np.testing.assert_array_equal(callable_fit.estimator_.y_, majority_fit.estimator_.y_)


def test_tuner_predict_without_focus_equals_default(tabular, fitted_pair):
    _, _, _, tests = tabular
    X_new = tests["flipped"][0]
    plain, _ = fitted_pair
    np.testing.assert_array_equal(plain.predict(X_new), plain.predict(X_new, "focus_C_ignore_S"))
    other = clone(plain).set_params(default_focus="focus_S").fit(*_train(tabular))
    np.testing.assert_array_equal(other.predict(X_new), other.predict(X_new, focus="focus_S"))
    np.testing.assert_allclose(other.predict_proba(X_new),
                               other.predict_proba(X_new, focus="focus_S"))
    assert other.score(X_new, tests["flipped"][2]) == other.score(X_new, tests["flipped"][2],
                                                                    focus="focus_S")


def _train(tabular):
    X, y, _, _ = tabular
    return X, y


def test_tuner_steers_and_decoupling_is_invariant(tabular, fitted_pair):
    _, _, _, tests = tabular
    plain, dec = fitted_pair
    reports = {name: {s: m.focus_accuracy_report(*tests[s]) for s in tests}
               for name, m in (("plain", plain), ("dec", dec))}
    for name in reports:
        assert set(reports[name]["iid"]) == set(FOCUS_TYPES)
        for split in ("iid", "low", "flipped"):
            for focus in S_TYPES:
                # On 1,200 rows plain FIT still reads part of focus(S) from the core, which
                # is correlated with y_S in training; decoupling removes that.
                assert reports[name][split][focus] >= (0.95 if name == "dec" else 0.85)
        for focus in S_TYPES:
            # Unseen genres: their spurious label is unknown, chance is 1/3 (600 rows).
            assert abs(reports[name]["unseen"][focus] - 1 / 3) <= 0.08
    core = [reports["dec"][s]["focus_C_ignore_S"] for s in ("iid", "low", "flipped")]
    assert max(core) - min(core) <= 0.04
    assert min(core) >= 0.93
    # Plain FIT follows the genre where it points the wrong way.
    assert reports["plain"]["flipped"]["focus_C_ignore_S"] < reports["dec"]["flipped"][
        "focus_C_ignore_S"]


def test_tuner_predict_proba_rows_and_classes(tabular, fitted_pair):
    _, _, _, tests = tabular
    plain, _ = fitted_pair
    proba = plain.predict_proba(tests["iid"][0], focus="focus_S")
    assert proba.shape == (600, 3)
    np.testing.assert_allclose(proba.sum(1), 1.0)
    np.testing.assert_array_equal(plain.classes_[proba.argmax(1)],
                                  plain.predict(tests["iid"][0], focus="focus_S"))


def test_tuner_report_needs_spurious_labels_for_unseen_values(tabular, fitted_pair):
    _, _, _, tests = tabular
    plain, _ = fitted_pair
    X_u, y_u, ys_u = tests["unseen"]
    with pytest.raises(ValueError, match="never seen in fit"):
        plain.focus_accuracy_report(X_u, y_u)
    assert set(plain.focus_accuracy_report(X_u, y_u, ys_u)) == set(FOCUS_TYPES)


def test_tuner_in_pipeline_grid_search_and_pickle(tabular):
    X, y, _, tests = tabular
    pipe = make_pipeline(StandardScaler(), FocusInstructionTuner(
        spurious_columns=SPURIOUS, random_state=0))
    search = GridSearchCV(pipe, {"focusinstructiontuner__decouple_excluded": [False, True]},
                          cv=2).fit(X[:600], y[:600])
    assert search.best_score_ > 0.8
    model = search.best_estimator_
    restored = pickle.loads(pickle.dumps(model))
    for focus in FOCUS_TYPES:
        np.testing.assert_array_equal(restored.predict(tests["low"][0], focus=focus),
                                      model.predict(tests["low"][0], focus=focus))


def test_tuner_accepts_column_names(tabular):
    X, y, _, tests = tabular
    names = [f"c{i}" for i in range(4)] + [f"genre{i}" for i in range(6)]
    frame = pd.DataFrame(X, columns=names)
    by_name = FocusInstructionTuner(_Recorder(), spurious_columns=names[4:],
                                    core_columns=names[:2], random_state=0).fit(frame, y)
    np.testing.assert_array_equal(by_name.core_columns_, [0, 1])
    mask = np.zeros(10, bool)
    mask[4:] = True
    by_mask = FocusInstructionTuner(_Recorder(), spurious_columns=mask, random_state=0).fit(X, y)
    np.testing.assert_array_equal(by_mask.spurious_columns_, SPURIOUS)


@pytest.mark.parametrize("params, match", [
    ({"spurious_columns": None}, "spurious_columns must name at least one"),
    ({"spurious_columns": [4, 5], "core_columns": [0, 5]}, "must not overlap"),
    ({"spurious_columns": [10]}, "must index the 10 columns"),
    ({"spurious_columns": [4, 4]}, "must not repeat"),
    ({"spurious_columns": ["genre"]}, "X has no feature names"),
    ({"spurious_columns": SPURIOUS, "type_probs": [1, 2]}, "one probability per focus type"),
    ({"spurious_columns": SPURIOUS, "type_probs": [1, -1, 1, 1, 1, 1]}, "non-negative"),
    ({"spurious_columns": SPURIOUS, "type_probs": {"focus_X": 1}}, "not in focus_types"),
    ({"spurious_columns": SPURIOUS, "focus_types": ["focus_C", "look_around"]},
     "unknown types"),
    ({"spurious_columns": SPURIOUS, "focus_types": []}, "at least one type"),
    ({"spurious_columns": SPURIOUS, "focus_types": ["focus_S"]}, "default_focus="),
    ({"spurious_columns": SPURIOUS, "spurious_label": lambda Xs: Xs[:3, 0]},
     "one label per sample"),
    ({"spurious_columns": SPURIOUS, "default_focus": "focus_everything"}, "default_focus"),
])
def test_tuner_bad_input_in_fit(tabular, params, match):
    X, y, _, _ = tabular
    with pytest.raises((ValueError, TypeError), match=match):
        FocusInstructionTuner(_Recorder(), **params).fit(X, y)


def test_tuner_bad_input_in_predict_and_report(tabular, fitted_pair):
    _, _, _, tests = tabular
    X_new, y_new, ys_new = tests["iid"]
    with pytest.raises(NotFittedError):
        FocusInstructionTuner(spurious_columns=SPURIOUS).predict(X_new)
    plain, _ = fitted_pair
    with pytest.raises(ValueError, match="focus must be one of"):
        plain.predict(X_new, focus="focus_on_everything")
    subset = FocusInstructionTuner(_Recorder(), spurious_columns=SPURIOUS,
                                   focus_types=["focus_C_ignore_S"]).fit(*_train(tabular))
    with pytest.raises(ValueError, match="not trained with it"):
        subset.predict(X_new, focus="focus_S")
    with pytest.raises(ValueError, match="X has 9 features"):
        plain.predict(X_new[:, :9])
    with pytest.raises(ValueError, match="one label per sample"):
        plain.focus_accuracy_report(X_new, y_new[:5])
    with pytest.raises(ValueError, match="outside classes_"):
        plain.focus_accuracy_report(X_new, y_new, ys_new + 7)


# ------------------------------------------------------------------------- text variant
def test_word_tokenizer_round_trip_and_unknown_words():
    tok = WordTokenizer().fit(["fiction : all dogs bark", "slate : no cats sing"])
    ids = tok.encode("fiction : all dogs bark")
    assert tok.decode(ids) == "fiction : all dogs bark"
    assert tok.encode("oup : all dogs bark")[0] == tok.unk_id
    with pytest.raises(TypeError, match="text must be a str"):
        tok.encode(3)


@pytest.mark.parametrize("decouple", [False, True])
def test_lm_builds_focus_prompts_exactly_per_type(decouple):
    texts, y, y_s = make_spurious_task(300, kind="nli", random_state=0)
    est = FocusInstructionLM(_RecordingLM(), decouple_excluded=decouple, random_state=0)
    est.fit(texts, y)
    lm = est.lm_
    assert lm.random_state is not None  # seeded from the estimator's random_state
    genre_label = dict(zip([t.split()[0] for t in texts], y_s))
    seen = set()
    for prompt, response, i in zip(lm.prompts_, lm.responses_, range(len(texts))):
        body, instruction = re.match(r"^(.*? ; \S+ \S+ \S+) \. (.*)answer :$", prompt).groups()
        focus = next(t for t in FOCUS_TYPES
                     if instruction.strip() in est.templates_[t])
        seen.add(focus)
        carried_genre = body.split()[0]
        assert body.split(" : ", 1)[1] == texts[i].split(" : ", 1)[1]  # the core text stays
        if focus in S_TYPES:
            assert response == genre_label[carried_genre]
        else:
            assert response == y[i]
        if not decouple or focus == "empty":
            assert body == texts[i]
    assert seen == set(FOCUS_TYPES)


def test_lm_templates_fill_feature_names():
    texts, y, _ = make_spurious_task(60, kind="nli", random_state=0)
    est = FocusInstructionLM(_RecordingLM(), core_feature="relation", spurious_feature="source",
                             templates={**DEFAULT_FOCUS_TEMPLATES, "focus_S": ["only {S} now"]},
                             random_state=0).fit(texts, y)
    assert est.templates_["focus_S"] == ("only source now",)
    assert all("relation" in t for t in est.templates_["focus_C"])
    prompts = est.make_prompts(texts[:4], "focus_C")
    options = est.templates_["focus_C"]
    assert prompts == [f"{x} . {options[i % 3]} answer :" for i, x in enumerate(texts[:4])]


def test_lm_follows_the_genre_on_demand(sentiment_fit):
    texts, y, _ = make_spurious_task(300, kind="sentiment", split="flipped", random_state=5)
    report = sentiment_fit.focus_accuracy_report(texts, y)
    assert set(report) == {"empty", "focus_S"}
    # On the flipped split the genre's label is not the task label (for 90% of rows).
    assert report["focus_S"] >= 0.9
    texts_u, y_u, ys_u = make_spurious_task(300, kind="sentiment", split="unseen", rho=1 / 3,
                                            random_state=6)
    unseen = sentiment_fit.focus_accuracy_report(texts_u, y_u, ys_u)["focus_S"]
    assert abs(unseen - 1 / 3) <= 0.12  # an unknown genre word carries no spurious label
    proba = sentiment_fit.predict_proba(texts, focus="empty")
    np.testing.assert_allclose(proba.sum(1), 1.0)
    np.testing.assert_array_equal(sentiment_fit.classes_[proba.argmax(1)],
                                  sentiment_fit.predict(texts, focus="empty"))


def test_lm_predict_without_focus_equals_default_and_pickles(sentiment_fit):
    texts, _, _ = make_spurious_task(40, kind="sentiment", random_state=7)
    np.testing.assert_array_equal(sentiment_fit.predict(texts),
                                  sentiment_fit.predict(texts, focus="focus_S"))
    restored = pickle.loads(pickle.dumps(sentiment_fit))
    np.testing.assert_allclose(restored.predict_proba(texts, focus="empty"),
                               sentiment_fit.predict_proba(texts, focus="empty"))


def test_lm_grid_search_over_instruction_settings():
    texts, y, _ = make_spurious_task(120, kind="sentiment", random_state=0)
    search = GridSearchCV(FocusInstructionLM(_tiny_lm(max_epochs=1, d_model=16), random_state=0),
                          {"decouple_excluded": [False, True]}, cv=2).fit(texts, y)
    assert np.isfinite(search.best_score_)


_ONLY_C = {"focus_types": ["focus_C"], "default_focus": "focus_C"}


@pytest.mark.parametrize("params, X, y, match", [
    ({}, "all dogs bark", None, "X must be a list of str"),
    ({}, [], [], "at least one text"),
    ({}, ["fiction : a"], ["x", "y"], "one label per text"),
    ({"spurious_pattern": r"genre=(\w+)"}, ["fiction : a"], ["x"], "does not match"),
    ({"spurious_pattern": r"^\S+"}, ["fiction : a"], ["x"], "capturing group"),
    ({"spurious_pattern": r"(("}, ["fiction : a"], ["x"], "regular expression"),
    ({"templates": {"focus_C": ["look at {X}"]}, **_ONLY_C}, ["fiction : a"], ["x"],
     "placeholders"),
    ({"templates": {"focus_Z": ["x"]}}, ["fiction : a"], ["x"], "unknown types"),
    ({"templates": {"focus_C": []}, **_ONLY_C}, ["fiction : a"], ["x"], "non-empty list"),
    ({"templates": {"focus_S": ["x"]}, **_ONLY_C}, ["fiction : a"], ["x"], "non-empty list"),
    ({"prompt_format": "{input} answer"}, ["fiction : a"], ["x"], "must contain"),
    ({"spurious_label": lambda X: ["a"]}, ["fiction : a", "slate : b"], ["x", "y"],
     "one label per sample"),
])
def test_lm_bad_input_in_fit(params, X, y, match):
    with pytest.raises((ValueError, TypeError), match=match):
        FocusInstructionLM(_RecordingLM(), **params).fit(X, y)


def test_lm_bad_input_in_predict_and_report(sentiment_fit):
    with pytest.raises(NotFittedError):
        FocusInstructionLM().predict(["fiction : the plot is dull"])
    with pytest.raises(ValueError, match="not trained with it"):
        sentiment_fit.predict(["fiction : the plot is dull"], focus="ignore_S")
    with pytest.raises(TypeError, match="X must be a list of str"):
        sentiment_fit.predict("fiction : the plot is dull")
    texts, y, y_s = make_spurious_task(10, kind="sentiment", split="unseen", random_state=0)
    with pytest.raises(ValueError, match="never seen in fit"):
        sentiment_fit.focus_accuracy_report(texts, y)
    assert set(sentiment_fit.focus_accuracy_report(texts, y, y_s)) == {"empty", "focus_S"}


# ------------------------------------------------------------------------------- claims
def test_claims_smoke_report_every_type_per_split():
    from skpaper.papers._stats import claim_seeds
    from skpaper.papers.focus_instruction_tuning import (
        _mean_reports,
        _tab_per_seed,
        _text_experiment,
    )

    per_seed = {**_tab_per_seed("smoke", claim_seeds(0, 2, 1)), **_text_experiment("smoke", 0)}
    results = {name: _mean_reports(reports) for name, reports in per_seed.items()}
    assert all(len(runs) == 2 for runs in per_seed.values())
    splits = {"iid", "low", "flipped", "unseen_flipped"}
    for name in ("fit", "fit_decoupled", "sft_hidden_instruction", "fit_shuffled_instruction",
                 "text_fit", "text_fit_decoupled"):
        assert set(results[name]) == splits
        for split in splits:
            row = results[name][split]
            assert set(row) == set(FOCUS_TYPES) | {"core_answer_is_spurious"}
            assert all(0.0 <= v <= 1.0 for v in row.values())
    assert set(results["vanilla"]) == splits
    # With the instruction hidden, every instruction gets the same answers.
    for run in per_seed["sft_hidden_instruction"]:
        for split in splits:
            assert run[split]["focus_S"] == run[split]["core_answer_is_spurious"]


# --- sample_weight --------------------------------------------------------------------------

def _weighted_and_repeated(base, low=0, high=3, seed=0):
    """FIT with integer weights and FIT on the rows repeated that many times."""
    X, y, _ = make_spurious_task(200, rho=0.9, random_state=seed)
    w = np.random.default_rng(seed).integers(low, high + 1, size=len(y))
    focus_types = ("focus_C_ignore_S",)
    kw = dict(base_estimator=base, spurious_columns=SPURIOUS, focus_types=list(focus_types),
              default_focus=focus_types[0], random_state=0)
    weighted = FocusInstructionTuner(**kw).fit(X, y, sample_weight=w)
    repeated = FocusInstructionTuner(**kw).fit(np.repeat(X, w, axis=0), np.repeat(y, w))
    X_test, _, _ = make_spurious_task(300, split="flipped", random_state=seed + 1)
    return weighted, repeated, X_test


@pytest.mark.parametrize("base", [
    pytest.param("logreg", id="logistic-regression"),
    pytest.param("hgb", id="hist-gradient-boosting"),
])
def test_fit_sample_weight_equals_repeated_rows(base):
    from sklearn.ensemble import HistGradientBoostingClassifier
    from sklearn.linear_model import LogisticRegression

    # One focus type (no random type draw), and a boosting model whose leaf size counts no
    # rows: an integer weight is then exactly the row repeated.
    # For the boosting, weights 1 and 2 only: a dropped row (weight 0) moves its bin edges,
    # and 2 * g is g + g exactly in floating point where 3 * g need not be g + g + g (a
    # rounding difference that can flip a tied split over 100 trees). 200 rows have fewer
    # distinct values than its 255 bins.
    if base == "logreg":
        weighted, repeated, X_test = _weighted_and_repeated(LogisticRegression(max_iter=2000))
    else:
        est = HistGradientBoostingClassifier(min_samples_leaf=1, early_stopping=False)
        weighted, repeated, X_test = _weighted_and_repeated(est, low=1, high=2)
    np.testing.assert_allclose(weighted.predict_proba(X_test), repeated.predict_proba(X_test),
                               atol=1e-8)
    unweighted = FocusInstructionTuner(base_estimator=clone(weighted.base_estimator),
                                       spurious_columns=SPURIOUS,
                                       focus_types=["focus_C_ignore_S"],
                                       random_state=0).fit(*make_spurious_task(
                                           200, rho=0.9, random_state=0)[:2])
    # The weights matter: the unweighted fit is another model.
    assert np.abs(unweighted.predict_proba(X_test)
                  - weighted.predict_proba(X_test)).max() > 1e-3


def test_fit_sample_weight_reaches_base_estimator_on_every_copy():
    seen = {}

    class Recorder(ClassifierMixin, BaseEstimator):
        def fit(self, X, y, sample_weight=None):
            seen["weights"] = sample_weight
            self.classes_ = np.unique(y)
            return self

        def predict(self, X):
            return np.zeros(len(X), dtype=int)

    X, y, _ = make_spurious_task(50, random_state=0)
    w = np.arange(50, dtype=float)
    FocusInstructionTuner(Recorder(), spurious_columns=SPURIOUS, n_copies=3,
                          random_state=0).fit(X, y, sample_weight=w)
    np.testing.assert_array_equal(seen["weights"], np.tile(w, 3))


def test_fit_sample_weight_weights_the_majority_mapping():
    from sklearn.linear_model import LogisticRegression

    # Rows 0 and 1 share one spurious value with labels 0 and 1 (a tie: the first class).
    # Weighting row 1 five times makes 1 that value's spurious label.
    X = np.array([[0.0, 1.0], [0.0, 1.0], [1.0, 0.0], [1.0, 0.0]])
    y = np.array([0, 1, 1, 0])
    kw = dict(base_estimator=LogisticRegression(), spurious_columns=[1], core_columns=[0],
              random_state=0)
    plain = FocusInstructionTuner(**kw).fit(X, y)
    heavy = FocusInstructionTuner(**kw).fit(X, y, sample_weight=[1.0, 5.0, 1.0, 5.0])
    key = X[:1, [1]].tobytes()
    assert plain.spurious_mapping_[key] == 0
    assert heavy.spurious_mapping_[key] == 1


def test_fit_sample_weight_bad_input():
    from sklearn.neighbors import KNeighborsClassifier

    X, y, _ = make_spurious_task(60, random_state=0)
    with pytest.raises(TypeError, match="sample_weight"):
        FocusInstructionTuner(KNeighborsClassifier(), spurious_columns=SPURIOUS).fit(
            X, y, sample_weight=np.ones(60))
    with pytest.raises(ValueError, match="sample_weight|negative"):
        FocusInstructionTuner(spurious_columns=SPURIOUS).fit(X, y, sample_weight=-np.ones(60))
    with pytest.raises(ValueError):
        FocusInstructionTuner(spurious_columns=SPURIOUS).fit(X, y, sample_weight=np.ones(5))
