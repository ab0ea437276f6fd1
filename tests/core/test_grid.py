"""The box grid: overlapping_bounds equals the brute-force all-pairs answer; the sorting
helpers (run_starts, ranks_in_runs, lexicographic_order) against their definitions."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from collide_addon.core.grid import (
    lexicographic_order,
    overlapping_among,
    overlapping_bounds,
    ranks_in_runs,
    run_starts,
)


def brute_force_bounds(lo: np.ndarray, hi: np.ndarray) -> set[tuple[int, int]]:
    i, j = np.triu_indices(len(lo), k=1)
    overlap = ((lo[i] <= hi[j]) & (lo[j] <= hi[i])).all(axis=1)
    return set(zip(i[overlap].tolist(), j[overlap].tolist(), strict=True))


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(0, 80))
def test_overlapping_bounds_of_wildly_different_sizes(seed, count):
    rng = np.random.default_rng(seed)
    centers = rng.uniform(-50, 50, (count, 3))
    half = 10.0 ** rng.uniform(-3, 2, (count, 3))
    half[rng.random(count) < 0.1] = 0.0  # points
    lo, hi = centers - half, centers + half
    found = overlapping_bounds(lo, hi)
    assert len(found) == len({tuple(p) for p in found.tolist()}), "a pair was reported twice"
    assert (found[:, 0] < found[:, 1]).all()
    assert {tuple(p) for p in found.tolist()} == brute_force_bounds(lo, hi)


def test_overlapping_among_keeps_the_given_pairs_whose_boxes_overlap_in_order():
    """Touching counts; pairs keep their order and orientation (j, i as given)."""
    lo = np.array([[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [1.5, 0.0, 0.0], [0.2, 0.2, 0.2]])
    hi = lo + 1.0
    hi[0, 0] = 1.0  # box 0 ends where box 1 starts
    pairs = np.array([[3, 0], [0, 2], [0, 1], [2, 1], [1, 3]])
    np.testing.assert_array_equal(
        overlapping_among(lo, hi, pairs), [[3, 0], [0, 1], [2, 1], [1, 3]]
    )
    assert overlapping_among(lo, hi, np.zeros((0, 2), np.int64)).shape == (0, 2)


@given(st.lists(st.integers(0, 5), max_size=40))
@settings(max_examples=60, deadline=None)
def test_ranks_in_runs_count_from_each_runs_start(values):
    keys = np.sort(np.array(values, dtype=np.int64))
    expected = [sum(1 for earlier in keys[:k] if earlier == key) for k, key in enumerate(keys)]
    np.testing.assert_array_equal(ranks_in_runs(keys), expected)


@given(st.lists(st.integers(0, 5), max_size=40))
@settings(max_examples=60, deadline=None)
def test_run_starts_mark_each_runs_first_entry(values):
    keys = np.sort(np.array(values, dtype=np.int64))
    np.testing.assert_array_equal(run_starts(keys), ranks_in_runs(keys) == 0)
    assert run_starts(keys).sum() == len(set(values))


@given(
    st.lists(st.integers(1, 2**21), min_size=1, max_size=4),
    st.integers(0, 200),
    st.integers(0, 2**32 - 1),
)
@settings(max_examples=60, deadline=None)
def test_lexicographic_order_is_lexsorts_equal_rows_in_their_order(sizes, count, seed):
    """One combined key where the sizes' product fits in 63 bits, lexsort beyond (four
    columns of up to 2**21 entries); repeated rows keep their order."""
    rng = np.random.default_rng(seed)
    # Few distinct entries (repeated rows), spread over each column's whole range.
    columns = tuple(rng.integers(0, min(size, 4), count) * (size // 4 or 1) for size in sizes)
    np.testing.assert_array_equal(
        lexicographic_order(columns, tuple(sizes)), np.lexsort(columns[::-1])
    )
