"""Graph-of-Nets container, generator and the dual-encoder classifiers."""

import pickle

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.model_selection import GridSearchCV, cross_val_score

from skpaper.datasets import make_synthetic_gon
from skpaper.graph import (
    GraphOfNets,
    GraphOfNetsClassifier,
    InnerGINClassifier,
    OuterGCNClassifier,
)
from skpaper.nn import Callback, ValidationSplit

SMALL = dict(hidden_dim=8, max_epochs=5, device="cpu", random_state=0)


@pytest.fixture(scope="module")
def gon_data():
    outer, inner, y = make_synthetic_gon(n_nodes=60, random_state=0)
    return GraphOfNets(outer, inner), outer, inner, y


def test_container_symmetrises_and_batches(gon_data):
    gon, outer, inner, _ = gon_data
    assert gon.n_nodes == 60
    # Both directions of every undirected edge, no self-loops.
    edges = set(map(tuple, gon.outer_edges.T))
    assert all((b, a) in edges for a, b in edges) and all(a != b for a, b in edges)
    assert gon.inner_x.shape[0] == sum(adj.shape[0] for adj, _ in inner)
    assert np.array_equal(np.bincount(gon.inner_graph_index), [adj.shape[0] for adj, _ in inner])
    # Inner edges stay inside their own block.
    src, dst = gon.inner_edges
    assert np.array_equal(gon.inner_graph_index[src], gon.inner_graph_index[dst])
    # Degree one-hot features when none are given.
    np.testing.assert_array_equal(gon.inner_x.sum(axis=1), 1.0)


def test_from_networkx_matches_arrays():
    nx = pytest.importorskip("networkx")
    outer = nx.path_graph(3)
    inner = [nx.cycle_graph(4), nx.star_graph(3), nx.complete_graph(3)]
    gon = GraphOfNets.from_networkx(outer, inner)
    direct = GraphOfNets(nx.to_numpy_array(outer),
                         [(nx.to_numpy_array(g), None) for g in inner])
    np.testing.assert_array_equal(gon.inner_x, direct.inner_x)
    assert (gon.outer_adj != direct.outer_adj).nnz == 0


@pytest.mark.parametrize(
    "args, match",
    [
        ((np.ones((2, 3)), []), "outer_adj must be square"),
        ((np.zeros((2, 2)), [(np.zeros((2, 2)), None)]), "one graph per outer node"),
        ((np.zeros((1, 1)), [np.zeros((2, 2))]), "must be an \\(adjacency, features\\) pair"),
        ((np.zeros((1, 1)), [(np.zeros((2, 2)), np.ones((3, 1)))]), "features must have shape"),
        ((np.zeros((2, 2)), [(np.zeros((2, 2)), None), (np.zeros((2, 2)), np.ones((2, 1)))]),
         "same kind and width"),
    ],
)
def test_container_rejects_bad_input(args, match):
    with pytest.raises(ValueError, match=match):
        GraphOfNets(*args)


def test_generator_validates_parameters():
    with pytest.raises(ValueError, match="'n_classes' parameter"):
        make_synthetic_gon(n_nodes=10, n_classes=7)
    with pytest.raises(ValueError, match="inner_size must be"):
        make_synthetic_gon(n_nodes=10, inner_size=(2, 3))


def test_generator_is_homophilous_and_seeded():
    outer, _, y = make_synthetic_gon(n_nodes=200, random_state=1)
    rows, cols = outer.nonzero()
    assert np.mean(y[rows] == y[cols]) > 0.45  # 4 classes: chance would be 0.25
    again = make_synthetic_gon(n_nodes=200, random_state=1)
    assert np.array_equal(again[2], y) and (again[0] != outer).nnz == 0


def test_classifiers_fit_predict_and_bad_ids(gon_data):
    gon, _, _, y = gon_data
    ids = np.arange(60).reshape(-1, 1)
    for cls in (GraphOfNetsClassifier, OuterGCNClassifier, InnerGINClassifier):
        clf = cls(gon=gon, **SMALL).fit(ids[:40], y[:40])
        proba = clf.predict_proba(ids[40:])
        np.testing.assert_allclose(proba.sum(axis=1), 1.0, atol=1e-6)
        assert set(clf.predict(ids[40:])) <= set(clf.classes_)
    with pytest.raises(ValueError, match="node ids must be in"):
        clf.predict(np.array([[60]]))
    with pytest.raises(ValueError, match="integer node ids"):
        clf.predict(np.array([[0.5]]))
    with pytest.raises(ValueError, match=r"\(n_samples, 1\) array"):
        clf.predict(np.zeros((3, 2), dtype=int))
    with pytest.raises(ValueError, match="needs gon=GraphOfNets"):
        GraphOfNetsClassifier().fit(ids, y)
    with pytest.raises(ValueError, match="'gon' parameter"):
        GraphOfNetsClassifier(gon="graph").fit(ids, y)
    with pytest.raises(ValueError, match="'constraint' parameter"):
        GraphOfNetsClassifier(gon=gon, constraint="magnet").fit(ids, y)


def test_labels_of_other_nodes_never_reach_training(gon_data):
    gon, _, _, y = gon_data
    ids = np.arange(60).reshape(-1, 1)
    train = np.arange(30)
    clf = GraphOfNetsClassifier(gon=gon, knn=3, knn_every=2, **SMALL).fit(ids[train], y[train])
    # The label-derived pairs of the constraint net only involve training ids.
    clf._init_torch_state()
    clf._pair_rng = np.random.default_rng(0)
    positive, negative = clf._label_pairs()
    assert np.isin(positive, train).all() and np.isin(negative, train).all()
    # Changing the labels of the nodes outside the training ids changes nothing.
    y_other = y.copy()
    y_other[30:] = (y_other[30:] + 1) % 4
    refit = GraphOfNetsClassifier(gon=gon, knn=3, knn_every=2, **SMALL).fit(ids[train],
                                                                            y_other[train])
    np.testing.assert_array_equal(refit.predict_proba(ids), clf.predict_proba(ids))


def test_outer_permutation_equivariance(gon_data):
    gon, outer, inner, y = gon_data
    perm = np.random.default_rng(0).permutation(60)
    P = sp.csr_matrix((np.ones(60), (np.arange(60), perm)), shape=(60, 60))
    permuted = GraphOfNets(P @ outer @ P.T, [inner[p] for p in perm])
    ids = np.arange(60).reshape(-1, 1)
    inverse = np.argsort(perm)
    # knn=0 and no constraint: the model is a pure function of the graph.
    kw = dict(constraint="none", knn=0, inference_dtype="float64", **SMALL)
    a = GraphOfNetsClassifier(gon=gon, **kw).fit(ids, y)
    b = GraphOfNetsClassifier(gon=permuted, **kw).fit(inverse[ids], y)
    np.testing.assert_allclose(b.predict_proba(inverse[ids]), a.predict_proba(ids), atol=1e-5)


def test_constraint_loss_is_recorded_and_positions_exposed(gon_data):
    gon, _, _, y = gon_data
    ids = np.arange(60).reshape(-1, 1)
    clf = GraphOfNetsClassifier(gon=gon, position_dim=3, **SMALL).fit(ids, y)
    assert all(r["constraint_loss"] > 0 for r in clf.history_)
    assert clf.positions().shape == (60, 3)
    none = GraphOfNetsClassifier(gon=gon, constraint="none", **SMALL).fit(ids, y)
    assert all(r["constraint_loss"] == 0 for r in none.history_)
    ident = GraphOfNetsClassifier(gon=gon, position_proj="identity", **SMALL).fit(ids, y)
    assert ident.positions().shape == (60, 8)  # positions are v itself


def test_dual_encoder_learns_the_synthetic_task():
    outer, inner, y = make_synthetic_gon(n_nodes=200, random_state=3)
    gon = GraphOfNets(outer, inner)
    ids = np.arange(200).reshape(-1, 1)
    clf = GraphOfNetsClassifier(gon=gon, hidden_dim=16, max_epochs=60, random_state=0,
                                device="cpu").fit(ids[:100], y[:100])
    assert clf.score(ids[100:], y[100:]) > 0.6  # chance is 0.25


def test_pickle_cross_validation_and_grid_search(gon_data):
    gon, _, _, y = gon_data
    ids = np.arange(60).reshape(-1, 1)
    clf = GraphOfNetsClassifier(gon=gon, **SMALL).fit(ids, y)
    restored = pickle.loads(pickle.dumps(clf))
    np.testing.assert_allclose(restored.predict_proba(ids), clf.predict_proba(ids), atol=1e-6)
    assert cross_val_score(OuterGCNClassifier(gon=gon, **SMALL), ids, y, cv=3).shape == (3,)
    search = GridSearchCV(GraphOfNetsClassifier(gon=gon, **SMALL),
                          {"constraint": ["none", "spring"]}, cv=2).fit(ids, y)
    assert search.best_params_["constraint"] in ("none", "spring")


class _Steps(Callback):
    def on_train_begin(self, estimator):
        self.steps = []

    def on_batch_end(self, estimator, step):
        self.steps.append(step)


def test_one_full_graph_step_per_epoch_records_both_losses(gon_data):
    gon, _, _, y = gon_data
    ids = np.arange(40).reshape(-1, 1)
    clf = GraphOfNetsClassifier(gon=gon, callbacks=[_Steps()], **SMALL).fit(ids, y[:40])
    steps = clf.callbacks_[0].steps
    assert len(steps) == len(clf.history_) == SMALL["max_epochs"]
    for step, record in zip(steps, clf.history_):
        assert record["train_loss"] == step["train_loss"]
        assert record["train_loss"] == pytest.approx(record["nll"] + record["constraint_loss"])


def test_validation_split_is_refused(gon_data):
    gon, _, _, y = gon_data
    ids = np.arange(40).reshape(-1, 1)
    with pytest.raises(ValueError, match="does not support ValidationSplit"):
        OuterGCNClassifier(gon=gon, callbacks=[ValidationSplit(0.25)], **SMALL).fit(ids, y[:40])
