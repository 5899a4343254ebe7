import pickle

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.base import clone
from sklearn.model_selection import GridSearchCV, KFold
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import FunctionTransformer

from skpaper.datasets import make_synthetic_tkg, train_test_split_tkg
from skpaper.kg import (
    ComplExLinkPredictor,
    TeASTLinkPredictor,
    TeDSLinkPredictor,
    TNTComplExLinkPredictor,
    hamilton_product,
    quaternion_norm,
)
from skpaper.nn import Callback, ValidationSplit

ALL = [ComplExLinkPredictor, TNTComplExLinkPredictor, TeASTLinkPredictor, TeDSLinkPredictor]
SMALL = dict(rank=4, max_epochs=3, batch_size=64, device="cpu", random_state=0)


@pytest.fixture(scope="module")
def tiny():
    return make_synthetic_tkg(n_entities=15, n_relations=3, n_timestamps=5, n_facts=120,
                              n_clusters=3, era_length=2, random_state=0)


def _brute_force_metrics(est, X, known):
    """Filtered ranks by loops over every query and candidate, from the module's scores."""
    known = {tuple(row) for row in np.asarray(known).tolist()}
    ranks = []
    for inverse in (False, True):
        with torch.no_grad():
            x = torch.as_tensor(X, dtype=torch.long)
            if inverse and est.reciprocal:
                x = x[:, [2, 1, 0, 3]].clone()
                x[:, 1] += est.n_relations_
                scores = est.module_(x).double().numpy()
            else:
                scores = est.module_(x, inverse=inverse).double().numpy()
        for (s, r, o, t), row in zip(X.tolist(), scores):
            answer = s if inverse else o
            rank = 1
            for e in range(est.n_entities_):
                fact = (e, r, o, t) if inverse else (s, r, e, t)
                if e != answer and fact not in known and row[e] >= row[answer]:
                    rank += 1
            ranks.append(rank)
    ranks = np.array(ranks, dtype=float)
    return {"mrr": np.mean(1 / ranks), "hits@1": np.mean(ranks <= 1),
            "hits@3": np.mean(ranks <= 3), "hits@10": np.mean(ranks <= 10)}


@pytest.mark.parametrize("cls", ALL)
@pytest.mark.parametrize("reciprocal", [True, False])
def test_evaluate_matches_brute_force(tiny, cls, reciprocal):
    train, test = tiny[:90], tiny[90:]
    est = cls(**SMALL, reciprocal=reciprocal, inference_dtype="float64").fit(train)
    extra = tiny[:5]
    got = est.evaluate(test, filter_facts=extra)
    expected = _brute_force_metrics(est, test, np.concatenate([train, test, extra]))
    for key, value in expected.items():
        assert got[key] == pytest.approx(value, abs=1e-12), key
    assert est.score(test) == pytest.approx(est.evaluate(test)["mrr"])


@pytest.mark.parametrize("cls", ALL)
def test_score_samples_and_predict_agree_with_full_scores(tiny, cls):
    est = cls(**SMALL, inference_dtype="float64").fit(tiny)
    with torch.no_grad():
        full = est.module_(torch.as_tensor(tiny)).numpy()
    np.testing.assert_allclose(est.score_samples(tiny), full[np.arange(len(tiny)), tiny[:, 2]],
                               rtol=1e-10, atol=1e-12)
    pred = est.predict(tiny)
    assert pred.dtype == np.int64 and pred.shape == (len(tiny),)
    np.testing.assert_array_equal(pred, full.argmax(axis=1))


@pytest.mark.parametrize("cls", [ComplExLinkPredictor, TeDSLinkPredictor])
def test_adjoint_head_scores_equal_forward_scores(tiny, cls):
    # Without reciprocal relations, head scores of (?, r, o, t) are phi(e, r, o, t).
    est = cls(**SMALL, reciprocal=False, inference_dtype="float64").fit(tiny)
    query = tiny[:4]
    with torch.no_grad():
        heads = est.module_(torch.as_tensor(query), inverse=True).numpy()
    for row, (_, r, o, t) in zip(heads, query.tolist()):
        candidates = np.array([[e, r, o, t] for e in range(est.n_entities_)])
        np.testing.assert_allclose(row, est.score_samples(candidates), rtol=1e-10, atol=1e-12)


def test_teds_learns_the_training_graph(tiny):
    X = make_synthetic_tkg(n_entities=30, n_relations=4, n_timestamps=8, n_facts=600,
                           n_clusters=3, era_length=4, noise=0.0, random_state=1)
    est = TeDSLinkPredictor(rank=8, max_epochs=30, batch_size=200, device="cpu",
                            random_state=0).fit(X)
    # Random scoring gives MRR about H(30)/30 = 0.13; a fitted model ranks its facts high.
    assert est.evaluate(X)["mrr"] > 0.5
    losses = [record["train_loss"] for record in est.history_]
    assert losses[-1] < 0.5 * losses[0]


def test_teds_relation_algebra():
    est = TeDSLinkPredictor(rank=3, max_epochs=1, device="cpu", random_state=0,
                            inference_dtype="float64")
    X = make_synthetic_tkg(n_entities=10, n_relations=2, n_timestamps=6, n_facts=60,
                           random_state=0)
    module = est.fit(X).module_
    r, t = torch.tensor([0, 1, 2]), torch.tensor([0, 3, 5])

    def as_quaternions(parts):
        return torch.stack(parts, dim=-1)  # (batch, rank, 4)

    rel = as_quaternions(module._split(module.relation[r]))
    tau = as_quaternions(module._split(module.time[t]))
    q_t = as_quaternions(module.diachronic(t))
    torch.testing.assert_close(quaternion_norm(q_t), torch.ones(3, 3, dtype=torch.float64))
    expected_w = torch.cos(np.pi * t.double() / 6)
    torch.testing.assert_close(q_t[..., 0], expected_w[:, None].expand(3, 3))
    c1 = torch.cat([rel[..., :2], tau[..., 2:]], dim=-1)
    c2 = torch.cat([tau[..., :2], rel[..., 2:]], dim=-1)
    r_syn = hamilton_product(c1, c2)
    r_dia = hamilton_product(rel, q_t)
    torch.testing.assert_close(quaternion_norm(r_dia), quaternion_norm(rel))
    expected = {"sum": r_syn + r_dia, "product": hamilton_product(r_syn, q_t),
                "synchronic": r_syn, "diachronic": r_dia}
    for composition, value in expected.items():
        module.composition = composition
        torch.testing.assert_close(as_quaternions(module.relation_time(r, t)[0]), value)


def test_teds_diachronic_scores_ignore_synchronic_table(tiny):
    est = TeDSLinkPredictor(**SMALL, composition="diachronic").fit(tiny)
    before = est.score_samples(tiny)
    with torch.no_grad():
        est.module_.time.normal_()
    np.testing.assert_array_equal(est.score_samples(tiny), before)


def test_teds_learned_angles_move(tiny):
    est = TeDSLinkPredictor(**SMALL, time_angle="learned").fit(tiny)
    omega = est.module_.omega.detach().double().numpy()
    assert omega.shape == (4,) and not np.allclose(omega, np.pi)


def test_temporal_smoothness_value():
    est = TNTComplExLinkPredictor(rank=2, max_epochs=1, n_timestamps=3, device="cpu",
                                  random_state=0)
    module = est.fit(np.array([[0, 0, 1, 0], [1, 0, 0, 2]])).module_
    table = module.time.detach().double().numpy()
    diff = table[1:] - table[:-1]
    modulus = np.sqrt(diff[:, :2] ** 2 + diff[:, 2:] ** 2)  # [re | im] blocks
    expected = (modulus ** 3).sum() / 2
    assert float(module.temporal_smoothness().detach()) == pytest.approx(expected, rel=1e-5)


@pytest.mark.parametrize("cls", ALL)
def test_pickle_clone_and_refit_are_deterministic(tiny, cls):
    est = cls(**SMALL).fit(tiny)
    scores = est.score_samples(tiny)
    np.testing.assert_array_equal(pickle.loads(pickle.dumps(est)).score_samples(tiny), scores)
    np.testing.assert_array_equal(clone(est).fit(tiny).score_samples(tiny), scores)
    assert est.n_features_in_ == 4 and est.known_facts_.shape[1] == 4


def test_grid_search_and_pipeline(tiny):
    base = TeDSLinkPredictor(**SMALL, n_entities=15, n_relations=3, n_timestamps=5)
    search = GridSearchCV(base, {"rank": [2, 4]}, cv=KFold(2, shuffle=True, random_state=0))
    search.fit(tiny)
    assert search.best_params_["rank"] in (2, 4)
    assert np.isfinite(search.best_score_)
    pipe = make_pipeline(FunctionTransformer(), clone(base)).fit(tiny)
    assert 0 < pipe.score(tiny) <= 1
    assert pipe.predict(tiny).shape == (len(tiny),)


def test_held_out_timestamps_are_scored_with_declared_sizes(tiny):
    train, test = train_test_split_tkg(tiny, by="timestamp", test_size=0.4, random_state=0)
    est = TeDSLinkPredictor(**SMALL, n_timestamps=5).fit(train)
    assert 0 < est.evaluate(test)["mrr"] <= 1


@pytest.mark.parametrize("cls", ALL)
def test_bad_input_raises(tiny, cls):
    est = cls(**SMALL)
    with pytest.raises(ValueError, match="negative time id"):
        est.fit(np.array([[0, 0, 1, -1], [1, 0, 0, 2]]))
    with pytest.raises(ValueError, match="4 columns"):
        est.fit(tiny[:, :3])
    with pytest.raises(TypeError, match="integer ids"):
        est.fit(tiny + 0.5)
    with pytest.raises((TypeError, ValueError)):
        est.fit(np.array([["a", "r", "b", "t"]]))
    with pytest.raises(ValueError, match="n_entities=3 is too small"):
        cls(**SMALL, n_entities=3).fit(tiny)
    est.fit(tiny)
    bad = tiny[:2].copy()
    bad[0, 2] = 15
    for method in (est.predict, est.score_samples, est.evaluate, est.score):
        with pytest.raises(ValueError, match="object id 15"):
            method(bad)
    bad = tiny[:2].copy()
    bad[1, 3] = 7
    with pytest.raises(ValueError, match="time id 7"):
        est.predict(bad)
    with pytest.raises(ValueError, match="expecting 4 features"):
        est.predict(tiny[:, :3])
    with pytest.raises(ValueError, match="filter_facts holds a negative relation id"):
        est.evaluate(tiny[:2], filter_facts=np.array([[0, -3, 0, 0]]))
    with pytest.raises(ValueError, match="tie_breaking"):
        est.evaluate(tiny[:2], tie_breaking="coin")


def test_integral_floats_are_accepted(tiny):
    a = TeDSLinkPredictor(**SMALL).fit(tiny).score_samples(tiny)
    b = TeDSLinkPredictor(**SMALL).fit(tiny.astype(float)).score_samples(tiny.astype(float))
    np.testing.assert_array_equal(a, b)


def _sparse_ids(X):
    """The same graph with ids spread over int64 (order kept, so rows keep their order)."""
    X = X.astype(np.int64)
    out = X * 1_000_003 + 2**31
    out[:, 3] = X[:, 3] * 10**12 + 5
    return out


@pytest.mark.parametrize("cls", ALL)
def test_sparse_ids_are_mapped_through_a_vocabulary(tiny, cls):
    dense = cls(**SMALL).fit(tiny)
    sparse_X = _sparse_ids(tiny)
    sparse = cls(**SMALL).fit(sparse_X)
    # Tables are sized by distinct ids, not by the largest id (2**31 + ...).
    assert sparse.n_entities_ == dense.n_entities_ == len(np.unique(tiny[:, [0, 2]]))
    assert sparse.module_.entity.shape == dense.module_.entity.shape
    np.testing.assert_array_equal(sparse.entities_, np.unique(sparse_X[:, [0, 2]]))
    np.testing.assert_array_equal(sparse.score_samples(sparse_X), dense.score_samples(tiny))
    np.testing.assert_array_equal(sparse.predict(sparse_X), _sparse_ids(
        np.column_stack([tiny[:, :2], dense.predict(tiny), tiny[:, 3]]))[:, 2])
    assert sparse.evaluate(sparse_X) == dense.evaluate(tiny)


def test_extreme_ids_cost_one_row_each():
    top = np.iinfo(np.int64).max
    X = np.array([[0, 0, top, 0], [top, 1, 0, 2**40], [0, 1, 2**31, 0]], dtype=np.int64)
    est = ComplExLinkPredictor(**SMALL).fit(X)
    assert est.module_.entity.shape[0] == 3 and est.n_timestamps_ == 2
    assert set(est.predict(X)) <= {0, 2**31, top}


def test_unknown_ids_raise_and_unknown_filter_facts_are_ignored(tiny):
    train = tiny[tiny[:, 0] != 3]
    train = train[train[:, 2] != 3]
    est = TNTComplExLinkPredictor(**SMALL).fit(train)
    assert 3 not in est.entities_
    query = train[:2].copy()
    query[1, 0] = 3
    for method in (est.predict, est.score_samples, est.evaluate):
        with pytest.raises(ValueError, match="subject id 3 in column 0, which the fit data lack"):
            method(query)
    # A filter fact with an unseen entity matches no query: the metrics do not change.
    extra = np.array([[3, 0, 3, 0], [train[0, 0], train[0, 1], 3, train[0, 3]]])
    assert est.evaluate(train[:20], filter_facts=extra) == est.evaluate(train[:20])
    declared = TNTComplExLinkPredictor(**SMALL, n_entities=15).fit(train)
    assert declared.predict(query).shape == (2,)


@pytest.mark.parametrize("param", ["n_entities", "n_relations", "n_timestamps"])
def test_declared_sizes_are_bounded(tiny, param):
    with pytest.raises(ValueError, match=param):
        ComplExLinkPredictor(**SMALL, **{param: 2**31}).fit(tiny)


@settings(max_examples=15, deadline=None)
@given(ids=st.lists(st.integers(0, np.iinfo(np.int64).max), min_size=2, max_size=6,
                    unique=True),
       data=st.data())
def test_any_int64_ids_fit_with_tables_sized_by_distinct_ids(ids, data):
    n = data.draw(st.integers(2, 12))
    pick = st.sampled_from(ids)
    X = np.array([[data.draw(pick), 0, data.draw(pick), data.draw(pick)] for _ in range(n)],
                 dtype=np.int64)
    est = ComplExLinkPredictor(rank=2, max_epochs=1, device="cpu", random_state=0).fit(X)
    assert est.module_.entity.shape[0] == len(np.unique(X[:, [0, 2]]))
    assert set(est.predict(X)) <= set(X[:, [0, 2]].ravel())
    assert np.all(np.isfinite(est.score_samples(X)))


class _Steps(Callback):
    def on_train_begin(self, estimator):
        self.steps = []

    def on_batch_end(self, estimator, step):
        self.steps.append(step)


def test_train_loss_is_the_fit_term_without_the_penalties(tiny):
    # The first step starts from the same weights and batch: the recorded cross-entropy
    # cannot depend on the regulariser weights, while the minimised loss does.
    runs = [TNTComplExLinkPredictor(emb_reg=reg, time_reg=reg, callbacks=[_Steps()], **SMALL)
            .fit(tiny) for reg in (0.0, 10.0)]
    first = [est.callbacks_[0].steps[0] for est in runs]
    assert first[0] == first[1]
    n_rows = 2 * len(np.unique(tiny, axis=0))  # reciprocal facts
    assert len(runs[0].callbacks_[0].steps) == SMALL["max_epochs"] * -(-n_rows // 64)
    assert runs[0].history_ != runs[1].history_


def test_validation_split_records_the_held_out_cross_entropy(tiny):
    est = TeDSLinkPredictor(callbacks=[ValidationSplit(0.2)], **SMALL).fit(tiny)
    assert all(np.isfinite(r["valid_loss"]) and r["valid_loss"] > 0 for r in est.history_)


def _small_graph():
    return np.array([[i % 20, 0, (i + 1) % 20, 0] for i in range(40)])


@pytest.mark.parametrize("cls", [ComplExLinkPredictor, TNTComplExLinkPredictor,
                                 TeASTLinkPredictor, TeDSLinkPredictor])
def test_declared_sizes_past_the_memory_limit_are_refused(cls):
    with pytest.raises(ValueError, match=r"embedding tables \(n_entities=10000000.*rank=64\) "
                                         r"would need [\d.]+ GiB.*leave n_entities"):
        cls(n_entities=10**7, device="cpu").fit(_small_graph())


def test_scores_past_the_memory_limit_are_refused(monkeypatch):
    model = ComplExLinkPredictor(rank=4, max_epochs=1, n_entities=5000, device="cpu",
                                 random_state=0).fit(_small_graph())
    monkeypatch.setenv("SKPAPER_MEMORY_LIMIT", "32M")
    with pytest.raises(ValueError, match=r"scores of batch_size=4096 queries over "
                                         r"n_entities=5000"):
        model.evaluate(_small_graph(), batch_size=4096)
    assert 0 < model.evaluate(_small_graph(), batch_size=64)["mrr"] <= 1


def _fitted_complex(n_entities=300, **params):
    X = make_synthetic_tkg(n_entities=n_entities, n_relations=4, n_timestamps=10,
                           n_facts=3000, random_state=0)
    model = ComplExLinkPredictor(rank=8, max_epochs=1, device="cpu", random_state=0, **params)
    return model.fit(X), X


def test_small_graphs_train_on_every_entity_whatever_n_negatives():
    exact, X = _fitted_complex(n_negatives=None)
    default, _ = _fitted_complex()
    capped_above, _ = _fitted_complex(n_negatives=300)
    for other in (default, capped_above):
        np.testing.assert_array_equal(other.score_samples(X[:50]), exact.score_samples(X[:50]))


def test_sampled_cross_entropy_scores_answers_and_draws_only(monkeypatch):
    widths = []
    cross_entropy = torch.nn.functional.cross_entropy

    def recording(logits, target, *args, **kwargs):
        widths.append(logits.shape[1])
        return cross_entropy(logits, target, *args, **kwargs)

    monkeypatch.setattr(torch.nn.functional, "cross_entropy", recording)
    model, X = _fitted_complex(n_negatives=16, batch_size=20)
    n_entities = model.n_entities_
    assert widths and max(widths) <= 20 + 16 < n_entities
    first = model.score_samples(X[:20])
    again, _ = _fitted_complex(n_negatives=16, batch_size=20)
    np.testing.assert_array_equal(again.score_samples(X[:20]), first)


def test_sampled_normaliser_estimates_the_full_one():
    model, X = _fitted_complex(n_negatives=64)
    module = model.module_.train()
    fact = torch.as_tensor(model._validate_quadruples(X[:1], reset=False))
    with torch.no_grad():
        q, _ = module.query(fact[:, 0], fact[:, 1], fact[:, 3])
        # Scores of spread about 1, so that the normaliser is not one entity's score.
        module.entity.mul_(float((1.0 / (q @ module.entity.t()).std()) ** 0.5))
        q, _ = module.query(fact[:, 0], fact[:, 1], fact[:, 3])
        exact = float(torch.nn.functional.cross_entropy(q @ module.entity.t(), fact[:, 2]))
        model._generator = torch.Generator().manual_seed(0)
        sampled = np.array([float(model._entity_cross_entropy(q, fact[:, 2]))
                            for _ in range(400)])
    # For one query exp(cross-entropy) is the normaliser over the answer's weight: the
    # sampled normaliser is unbiased, so the mean of exp agrees with the exact one.
    assert sampled.std() > 0
    np.testing.assert_allclose(np.exp(sampled).mean(), np.exp(exact), rtol=0.05)
