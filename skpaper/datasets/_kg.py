"""Data generators for `skpaper.kg` (numpy only; no torch import)."""

import os
from numbers import Integral, Real

import numpy as np
from sklearn.utils import Bunch, check_random_state

from ..utils._sklearn import Interval, StrOptions, validate_params

__all__ = ["load_tkg", "make_synthetic_tkg", "train_test_split_tkg"]


@validate_params(
    {
        "n_entities": [Interval(Integral, 2, None, closed="left")],
        "n_relations": [Interval(Integral, 1, None, closed="left")],
        "n_timestamps": [Interval(Integral, 1, None, closed="left")],
        "n_facts": [Interval(Integral, 1, None, closed="left")],
        "n_clusters": [Interval(Integral, 1, None, closed="left")],
        "relations_per_group": [Interval(Integral, 1, None, closed="left")],
        "era_length": [Interval(Integral, 1, None, closed="left")],
        "event_rate": [Interval(Real, 0, 1, closed="both")],
        "noise": [Interval(Real, 0, 1, closed="both")],
        "return_info": ["boolean"],
        "random_state": ["random_state"],
    },
    prefer_skip_nested_validation=True,
)
def make_synthetic_tkg(n_entities=200, n_relations=10, n_timestamps=40, n_facts=15000, *,
                       n_clusters=10, relations_per_group=2, era_length=10, event_rate=0.1,
                       noise=0.05, return_info=False, random_state=None):
    """Synthetic temporal knowledge graph with diachronic and synchronic structure.

    Entities fall into ``n_clusters`` clusters and relations into groups of
    ``relations_per_group``. The object of (s, r, ?, t) is

    - *diachronic*: a base object drawn per (cluster of s, r, era), where the era
      is ``t // era_length``; it changes from era to era, so the answer drifts
      slowly with time;
    - *synchronic*: with probability ``event_rate`` per (cluster, relation group,
      t), an event object replaces the base object of every relation of the
      group at that timestamp only, so facts of related relations at the same
      time agree: (s, r₁, o, t) implies (s, r₂, o, t);
    - with probability ``noise``, a uniformly random entity.

    Facts are ``n_facts`` distinct (s, r, t) cells drawn uniformly, each with its
    one object, so a static model must spread each (s, r) over several objects
    while a time-aware one can single out the right one.

    Parameters
    ----------
    n_entities : int, default=200
        Number of entities.
    n_relations : int, default=10
        Number of relations.
    n_timestamps : int, default=40
        Timestamp ids 0..n_timestamps-1, in chronological order.
    n_facts : int, default=15000
        At most ``n_entities * n_relations * n_timestamps``.
    n_clusters : int, default=10
        Entities of a cluster share their answers (a low-rank structure).
    relations_per_group : int, default=2
        Relations per group sharing their synchronic events.
    era_length : int, default=10
        Timestamps per era of the diachronic drift.
    event_rate : float, default=0.1
        Probability of a synchronic event per cluster, relation group and timestamp.
    noise : float, default=0.05
        Probability that the object of a fact is a uniformly random entity.
    return_info : bool, default=False
        Also return a Bunch describing the ground truth.
    random_state : int, RandomState instance or None, default=None
        Seed of the random draws; an int makes the output reproducible.

    Returns
    -------
    X : ndarray of shape (n_facts, 4), dtype=int64
        Quadruples (subject, relation, object, time).
    info : Bunch
        Only when ``return_info``: ``entity_cluster``, ``relation_group``,
        ``base_objects`` (clusters x relations x eras), ``is_event`` and
        ``is_noise`` (per fact).

    Examples
    --------
    >>> from skpaper.datasets import make_synthetic_tkg
    >>> X = make_synthetic_tkg(n_entities=50, n_facts=1000, random_state=0)
    >>> X.shape, int(X[:, 3].max()) < 40
    ((1000, 4), True)
    """
    n_cells = n_entities * n_relations * n_timestamps
    if n_facts > n_cells:
        raise ValueError(f"n_facts={n_facts} exceeds the {n_cells} distinct (subject, "
                         "relation, time) cells.")
    rng = check_random_state(random_state)
    entity_cluster = rng.permutation(np.arange(n_entities) % n_clusters)
    relation_group = np.arange(n_relations) // relations_per_group
    n_groups = int(relation_group.max()) + 1
    n_eras = -(-n_timestamps // era_length)
    base_objects = rng.randint(n_entities, size=(n_clusters, n_relations, n_eras))
    event_on = rng.random_sample((n_clusters, n_groups, n_timestamps)) < event_rate
    event_objects = rng.randint(n_entities, size=(n_clusters, n_groups, n_timestamps))

    cells = rng.choice(n_cells, size=n_facts, replace=False)
    s, rest = np.divmod(cells, n_relations * n_timestamps)
    r, t = np.divmod(rest, n_timestamps)
    c, g = entity_cluster[s], relation_group[r]
    is_event = event_on[c, g, t]
    o = np.where(is_event, event_objects[c, g, t], base_objects[c, r, t // era_length])
    is_noise = rng.random_sample(n_facts) < noise
    o = np.where(is_noise, rng.randint(n_entities, size=n_facts), o)
    X = np.column_stack([s, r, o, t]).astype(np.int64)
    if not return_info:
        return X
    return X, Bunch(entity_cluster=entity_cluster, relation_group=relation_group,
                    base_objects=base_objects, is_event=is_event, is_noise=is_noise)


@validate_params(
    {
        "X": ["array-like"],
        "test_size": [Interval(Real, 0, 1, closed="neither")],
        "by": [StrOptions({"fact", "timestamp"})],
        "random_state": ["random_state"],
    },
    prefer_skip_nested_validation=True,
)
def train_test_split_tkg(X, *, test_size=0.2, by="fact", random_state=None):
    """Split quadruples at random, or hold out every fact of some timestamps.

    Parameters
    ----------
    X : array-like of shape (n_facts, 4)
        Integer quadruples (subject, relation, object, time).
    test_size : float, default=0.2
        Fraction of the facts (``by="fact"``) or of the distinct timestamps
        (``by="timestamp"``) that go to the test split.
    by : {"fact", "timestamp"}, default="fact"
        ``"timestamp"`` removes all facts of the chosen timestamps from training,
        which tests whether a model can say anything about unseen times.
    random_state : int, RandomState instance or None, default=None
        Seed of the split.

    Returns
    -------
    X_train, X_test : ndarray of shape (n, 4)
        The split is transductive: test facts whose entities or relation never
        occur in ``X_train`` are dropped.

    Examples
    --------
    >>> from skpaper.datasets import make_synthetic_tkg, train_test_split_tkg
    >>> X = make_synthetic_tkg(n_entities=50, n_facts=2000, random_state=0)
    >>> train, test = train_test_split_tkg(X, by="timestamp", random_state=0)
    >>> set(train[:, 3]).isdisjoint(test[:, 3])
    True
    """
    X = np.asarray(X)
    if X.ndim != 2 or X.shape[1] != 4 or not np.issubdtype(X.dtype, np.integer):
        raise ValueError(f"X must be an integer array of shape (n, 4), got shape {X.shape} "
                         f"and dtype {X.dtype}.")
    rng = check_random_state(random_state)
    if by == "fact":
        n_test = int(round(test_size * X.shape[0]))
        is_test = np.zeros(X.shape[0], dtype=bool)
        is_test[rng.choice(X.shape[0], size=n_test, replace=False)] = True
    else:
        times = np.unique(X[:, 3])
        n_test = int(round(test_size * times.shape[0]))
        if n_test < 1 or n_test >= times.shape[0]:
            raise ValueError(f"test_size={test_size} holds out {n_test} of {times.shape[0]} "
                             "timestamps; it must hold out at least one and keep one.")
        is_test = np.isin(X[:, 3], rng.choice(times, size=n_test, replace=False))
    train, test = X[~is_test], X[is_test]
    entities = np.zeros(int(X[:, [0, 2]].max()) + 1, dtype=bool)
    entities[train[:, 0]] = entities[train[:, 2]] = True
    seen = entities[test[:, 0]] & entities[test[:, 2]] & np.isin(test[:, 1], train[:, 1])
    return train, test[seen]


def _read_split(path):
    rows = []
    with open(path, encoding="utf-8") as handle:
        for number, line in enumerate(handle, 1):
            line = line.rstrip("\n\r")
            if not line.strip():
                continue
            fields = line.split("\t")
            if len(fields) < 4:
                raise ValueError(f"{path}, line {number}: expected at least 4 tab-separated "
                                 f"fields (head, relation, tail, time), got {len(fields)}.")
            rows.append(tuple(field.strip() for field in fields[:4]))
    return rows


def _time_order(values):
    try:
        return sorted(values, key=float)
    except ValueError:
        return sorted(values)  # ISO dates sort chronologically as strings


def load_tkg(path):
    """Read a temporal KG in the ICEWS/GDELT tab-separated layout.

    Each line is ``head<TAB>relation<TAB>tail<TAB>time`` (further fields, as in
    some GDELT releases, are ignored). Entities and relations get ids in sorted
    order of their names over all splits; timestamps get chronological ranks
    (numeric order when every time is a number, else string order, which is
    chronological for ISO dates such as ``2014-01-01``).

    Parameters
    ----------
    path : str or path-like
        A directory with ``train``, ``valid`` and ``test`` files (with or without
        a ``.txt`` suffix; ``valid`` and ``test`` are optional), or one file.

    Returns
    -------
    data : Bunch
        ``train``, ``valid``, ``test`` (integer arrays of shape (n, 4); empty when
        the file is missing) for a directory, or ``data`` for a single file, plus
        ``entity_names``, ``relation_names`` and ``timestamps`` (the original
        strings, indexed by id).

    Examples
    --------
    >>> import os, tempfile
    >>> from skpaper.datasets import load_tkg
    >>> folder = tempfile.mkdtemp()
    >>> with open(os.path.join(folder, "train.txt"), "w") as f:
    ...     _ = f.write("Japan\\tvisit\\tChina\\t2014-01-02\\n"
    ...                 "China\\thost\\tJapan\\t2014-01-01\\n")
    >>> data = load_tkg(folder)
    >>> data.train.tolist(), list(data.timestamps)
    ([[1, 1, 0, 1], [0, 0, 1, 0]], ['2014-01-01', '2014-01-02'])
    """
    path = os.fspath(path)
    if os.path.isdir(path):
        splits = {}
        for name in ("train", "valid", "test"):
            for candidate in (name + ".txt", name):
                full = os.path.join(path, candidate)
                if os.path.isfile(full):
                    splits[name] = _read_split(full)
                    break
        if "train" not in splits:
            raise FileNotFoundError(f"No train or train.txt file in the directory {path!r}.")
    elif os.path.isfile(path):
        splits = {"data": _read_split(path)}
    else:
        raise FileNotFoundError(f"path={path!r} is neither a file nor a directory.")
    every = [row for rows in splits.values() for row in rows]
    entity_names = sorted({row[0] for row in every} | {row[2] for row in every})
    relation_names = sorted({row[1] for row in every})
    timestamps = _time_order({row[3] for row in every})
    ids = [{name: i for i, name in enumerate(names)}
           for names in (entity_names, relation_names, entity_names, timestamps)]
    out = Bunch(entity_names=np.array(entity_names, dtype=object),
                relation_names=np.array(relation_names, dtype=object),
                timestamps=np.array(timestamps, dtype=object))
    names = ("data",) if "data" in splits else ("train", "valid", "test")
    for name in names:
        rows = splits.get(name, [])
        out[name] = np.array([[ids[k][row[k]] for k in range(4)] for row in rows],
                             dtype=np.int64).reshape(-1, 4)
    return out
