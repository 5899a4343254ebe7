import numpy as np
import pytest

from skpaper.datasets import load_tkg, make_synthetic_tkg, train_test_split_tkg


def test_make_synthetic_tkg_shape_and_determinism():
    X = make_synthetic_tkg(n_entities=30, n_relations=4, n_timestamps=8, n_facts=500,
                           random_state=0)
    assert X.shape == (500, 4) and X.dtype == np.int64
    np.testing.assert_array_equal(X, make_synthetic_tkg(n_entities=30, n_relations=4,
                                                        n_timestamps=8, n_facts=500,
                                                        random_state=0))
    assert X[:, [0, 2]].max() < 30 and X[:, 1].max() < 4 and X[:, 3].max() < 8
    # One object per (subject, relation, time) cell.
    assert np.unique(X[:, [0, 1, 3]], axis=0).shape[0] == 500


def test_make_synthetic_tkg_follows_its_ground_truth():
    X, info = make_synthetic_tkg(n_entities=40, n_relations=4, n_timestamps=12, n_facts=1500,
                                 era_length=4, event_rate=0.2, noise=0.0, return_info=True,
                                 random_state=1)
    s, r, o, t = X.T
    base = info.base_objects[info.entity_cluster[s], r, t // 4]
    np.testing.assert_array_equal(o[~info.is_event], base[~info.is_event])
    # Events are drawn per (cluster, group, time) cell: 10 * 2 * 12 = 240 cells at rate 0.2
    # put the event share of the facts at 0.2 +- 0.026 (binomial sd); allow about 3.8 sd.
    assert 0.1 < info.is_event.mean() < 0.3
    # Synchronic coupling: relations 0 and 1 of a group give the same event answer.
    events = {}
    for (si, ri, oi, ti), ev in zip(X.tolist(), info.is_event):
        if ev:
            events.setdefault((info.entity_cluster[si], ri // 2, ti), set()).add(oi)
    assert events and all(len(objects) == 1 for objects in events.values())
    # Diachronic drift: the base answer changes between eras for most cells.
    assert np.mean(info.base_objects[:, :, 0] != info.base_objects[:, :, 1]) > 0.8


def test_make_synthetic_tkg_rejects_bad_input():
    with pytest.raises(ValueError, match="exceeds"):
        make_synthetic_tkg(n_entities=2, n_relations=1, n_timestamps=1, n_facts=3)
    with pytest.raises(ValueError, match="event_rate"):
        make_synthetic_tkg(event_rate=1.5)


@pytest.mark.parametrize("by", ["fact", "timestamp"])
def test_train_test_split_tkg(by):
    X = make_synthetic_tkg(n_entities=30, n_relations=4, n_timestamps=10, n_facts=800,
                           random_state=0)
    train, test = train_test_split_tkg(X, test_size=0.3, by=by, random_state=0)
    assert train.shape[0] + test.shape[0] <= 800 and test.shape[0] > 0
    assert set(test[:, 0]) <= set(train[:, 0]) | set(train[:, 2])
    if by == "timestamp":
        assert set(train[:, 3]).isdisjoint(test[:, 3]) and len(set(test[:, 3])) == 3
    else:
        assert train.shape[0] == 560


def test_train_test_split_tkg_rejects_bad_input():
    with pytest.raises(ValueError, match="shape \\(n, 4\\)"):
        train_test_split_tkg(np.zeros((5, 3), dtype=int))
    with pytest.raises(ValueError, match="at least one"):
        train_test_split_tkg(np.zeros((5, 4), dtype=int), by="timestamp")
    with pytest.raises(ValueError, match="test_size"):
        train_test_split_tkg(np.zeros((5, 4), dtype=int), test_size=1.5)


def test_load_tkg_directory_layout(tmp_path):
    (tmp_path / "train.txt").write_text(
        "Japan\tvisit\tChina\t2014-01-02\nChina\thost\tJapan\t2014-01-01\n\n")
    (tmp_path / "valid.txt").write_text("Korea\tvisit\tJapan\t2014-01-03\n")
    data = load_tkg(tmp_path)
    assert list(data.entity_names) == ["China", "Japan", "Korea"]
    assert list(data.relation_names) == ["host", "visit"]
    assert list(data.timestamps) == ["2014-01-01", "2014-01-02", "2014-01-03"]
    assert data.train.tolist() == [[1, 1, 0, 1], [0, 0, 1, 0]]
    assert data.valid.tolist() == [[2, 1, 1, 2]]
    assert data.test.shape == (0, 4)


def test_load_tkg_single_file_numeric_times_and_extra_columns(tmp_path):
    path = tmp_path / "gdelt.txt"
    path.write_text("a\tr\tb\t10\t0\nb\tr\ta\t9\t0\na\tr\tb\t100\t0\n")
    data = load_tkg(path)
    assert list(data.timestamps) == ["9", "10", "100"]
    assert data.data[:, 3].tolist() == [1, 0, 2]


def test_load_tkg_rejects_bad_input(tmp_path):
    with pytest.raises(FileNotFoundError, match="neither a file nor a directory"):
        load_tkg(tmp_path / "missing")
    with pytest.raises(FileNotFoundError, match="No train"):
        load_tkg(tmp_path)
    bad = tmp_path / "bad.txt"
    bad.write_text("a\tr\tb\n")
    with pytest.raises(ValueError, match="line 1: expected at least 4"):
        load_tkg(bad)
