import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from skpaper.kg import filter_mask, filtered_ranks, ranking_metrics


def _brute_force_rank(scores, target, known, tie_breaking):
    """Rank of ``target`` among candidates that are not other known answers, by loops."""
    greater = ties = 0
    for e, value in enumerate(scores):
        if e == target or e in known:
            continue
        if value > scores[target]:
            greater += 1
        elif value == scores[target]:
            ties += 1
    if tie_breaking == "optimistic":
        return 1 + greater
    if tie_breaking == "pessimistic":
        return 1 + greater + ties
    return 1 + greater + ties / 2


def _random_graph(rng, n_facts=60, n_entities=7, n_relations=3, n_times=4):
    return np.column_stack([rng.randint(n_entities, size=n_facts),
                            rng.randint(n_relations, size=n_facts),
                            rng.randint(n_entities, size=n_facts),
                            rng.randint(n_times, size=n_facts)])


def test_filter_mask_matches_brute_force(global_random_seed):
    rng = np.random.RandomState(global_random_seed)
    facts = _random_graph(rng)
    queries = _random_graph(rng, n_facts=25)
    mask = filter_mask(queries, facts, 7)
    known = {}
    for s, r, o, t in facts.tolist():
        known.setdefault((s, r, t), set()).add(o)
    for row, (s, r, _, t) in zip(mask, queries.tolist()):
        assert set(np.flatnonzero(row).tolist()) == known.get((s, r, t), set())


def test_filter_mask_is_time_aware():
    facts = np.array([[0, 0, 1, 0], [0, 0, 2, 1], [0, 1, 3, 0]])
    mask = filter_mask(np.array([[0, 0, 9, 0], [0, 0, 9, 1], [0, 0, 9, 2]]), facts, 4)
    assert mask.astype(int).tolist() == [[0, 1, 0, 0], [0, 0, 1, 0], [0, 0, 0, 0]]


@pytest.mark.parametrize("tie_breaking", ["pessimistic", "optimistic", "realistic"])
def test_filtered_ranks_match_brute_force(global_random_seed, tie_breaking):
    rng = np.random.RandomState(global_random_seed)
    facts = _random_graph(rng)
    # Rounded scores create ties on purpose.
    scores = np.round(rng.normal(size=(facts.shape[0], 7)), 1)
    mask = filter_mask(facts, facts, 7)
    ranks = filtered_ranks(scores, facts[:, 2], mask, tie_breaking)
    known = {}
    for s, r, o, t in facts.tolist():
        known.setdefault((s, r, t), set()).add(o)
    expected = [_brute_force_rank(row, o, known[(s, r, t)] - {o}, tie_breaking)
                for row, (s, r, o, t) in zip(scores, facts.tolist())]
    np.testing.assert_array_equal(ranks, expected)


@settings(max_examples=50)
@given(st.lists(st.integers(-3, 3), min_size=2, max_size=9), st.data())
def test_filtered_rank_bounds_and_tie_order(values, data):
    scores = np.array([values], dtype=float)
    target = data.draw(st.integers(0, len(values) - 1))
    mask = np.array([data.draw(st.lists(st.booleans(), min_size=len(values),
                                        max_size=len(values)))])
    low = filtered_ranks(scores, [target], mask, "optimistic")[0]
    mid = filtered_ranks(scores, [target], mask, "realistic")[0]
    high = filtered_ranks(scores, [target], mask, "pessimistic")[0]
    assert 1 <= low <= mid <= high <= len(values) - mask[0].sum() + mask[0, target]
    unfiltered = filtered_ranks(scores, [target], None, "pessimistic")[0]
    assert high <= unfiltered


def test_filtered_ranks_hand_example():
    scores = np.array([[0.1, 0.9, 0.5, 0.7], [0.3, 0.3, 0.3, 0.0]])
    assert filtered_ranks(scores, [2, 0]).tolist() == [3, 3]
    assert filtered_ranks(scores, [2, 0], [[0, 1, 0, 0], [0, 0, 1, 0]]).tolist() == [2, 2]
    assert filtered_ranks(scores, [2, 0], tie_breaking="optimistic").tolist() == [3, 1]


def test_ranking_metrics_values():
    out = ranking_metrics([1, 2, 4, 10, 20])
    assert out["mrr"] == pytest.approx(np.mean([1, 1 / 2, 1 / 4, 1 / 10, 1 / 20]))
    assert (out["hits@1"], out["hits@3"], out["hits@10"]) == (0.2, 0.4, 0.8)


@pytest.mark.parametrize("call, error, match", [
    (lambda: filter_mask(np.zeros((2, 3), int), np.zeros((2, 4), int), 3), ValueError,
     "shape \\(n, 4\\)"),
    (lambda: filter_mask(np.zeros((2, 4)), np.zeros((2, 4), int), 3), TypeError, "integer"),
    (lambda: filter_mask(-np.ones((2, 4), int), np.zeros((2, 4), int), 3), ValueError,
     "non-negative"),
    (lambda: filter_mask(np.zeros((2, 4), int), np.full((2, 4), 5), 3), ValueError,
     "n_entities"),
    (lambda: filter_mask(np.zeros((2, 4), int), np.zeros((2, 4), int), 0), ValueError,
     "n_entities"),
    (lambda: filtered_ranks(np.zeros((2, 3)), [0, 3]), ValueError, "targets must lie"),
    (lambda: filtered_ranks(np.zeros((2, 3)), [0.5, 1.0]), TypeError, "integer"),
    (lambda: filtered_ranks(np.zeros(3), [0]), ValueError, "2-D"),
    (lambda: filtered_ranks(np.zeros((1, 3)), [0], np.zeros((1, 2), bool)), ValueError, "mask"),
    (lambda: filtered_ranks(np.full((1, 3), np.nan), [0]), ValueError, "NaN"),
    (lambda: filtered_ranks(np.zeros((1, 3)), [0], tie_breaking="random"), ValueError,
     "tie_breaking"),
    (lambda: ranking_metrics([]), ValueError, "non-empty"),
    (lambda: ranking_metrics([0, 1]), ValueError, "start at 1"),
])
def test_metrics_reject_bad_input(call, error, match):
    with pytest.raises(error, match=match):
        call()
