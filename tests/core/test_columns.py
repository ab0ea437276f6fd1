"""concatenate_fields: one dataclass from many, field by field; einsum_rows: each row
the same whichever rows share the call; cross_rows: np.cross's products, broadcast;
dot_rows: each row's products summed in order, alone or among others; reduce_short_axis:
numpy's reductions over a short axis, bit for bit; take_rows and
pick_rows: numpy's indexing of rows and of an entry in each row; rows_as_bytes: rows equal
exactly when bit for bit; either_flagged: a pair with a flagged item; pair_order: pairs
sorted by first item, then second, ties in their order."""

from dataclasses import dataclass

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from collide_addon.core.columns import (
    concatenate_fields,
    cross_rows,
    cubed,
    dot_rows,
    einsum_rows,
    either_flagged,
    first_distinct,
    pair_order,
    pick_rows,
    reduce_short_axis,
    rows_as_bytes,
    take_fields,
    take_rows,
)


@dataclass
class Rows:
    ids: np.ndarray
    points: np.ndarray


def test_fields_are_concatenated_in_order():
    first = Rows(np.array([1, 2]), np.zeros((2, 3)))
    second = Rows(np.array([3]), np.ones((1, 3)))
    joined = concatenate_fields(Rows, [first, second])
    np.testing.assert_array_equal(joined.ids, [1, 2, 3])
    np.testing.assert_array_equal(joined.points, [[0, 0, 0], [0, 0, 0], [1, 1, 1]])


def test_fields_are_taken_row_by_row_by_index_or_mask():
    rows = Rows(np.array([1, 2, 3]), np.arange(9.0).reshape(3, 3))
    taken = take_fields(rows, np.array([2, 0, 2]))
    np.testing.assert_array_equal(taken.ids, [3, 1, 3])
    np.testing.assert_array_equal(taken.points, [[6, 7, 8], [0, 1, 2], [6, 7, 8]])
    masked = take_fields(rows, np.array([False, True, False]))
    np.testing.assert_array_equal(masked.ids, [2])
    assert isinstance(masked, Rows) and masked.points.shape == (1, 3)


# The subscripts the narrow phase and continuous detection use, with operand shapes
# for m rows: the row axis is last (component-major pairs) or first (stacks).
SPECS = {
    "ckm,clm->klm": lambda m: [(3, 3, m), (3, 3, m)],
    "klm,lm->km": lambda m: [(3, 3, m), (3, m)],
    "klm,km->lm": lambda m: [(3, 3, m), (3, m)],
    "mji,mpj->mpi": lambda m: [(m, 3, 3), (m, 12, 3)],
    "nij,njk->nik": lambda m: [(m, 3, 3), (m, 3, 3)],
    "...k,...k->...": lambda m: [(m, 3), (m, 3)],
    "...ck,...k->...c": lambda m: [(m, 12, 3, 3), (m, 12, 3)],
}


@pytest.mark.parametrize("subscripts", SPECS)
def test_einsum_rows_gives_each_row_what_it_gets_among_any_others(subscripts):
    rng = np.random.default_rng(5)
    count = 40
    operands = [rng.normal(size=shape) for shape in SPECS[subscripts](count)]
    row_axes = [0 if subscripts.startswith(("m", "n", ".")) else -1] * len(operands)
    whole = einsum_rows(subscripts, *operands)
    np.testing.assert_allclose(whole, np.einsum(subscripts, *operands), rtol=1e-14)
    output_axis = row_axes[0]
    mismatched = 0
    # Rows alone, in pairs and in larger subsets taken by fancy indexing (strided).
    for size in (1, 2, 3, 7):
        for _ in range(count // size):
            rows = rng.permutation(count)[:size]
            subset = [
                np.take(operand, rows, axis=axis)
                for operand, axis in zip(operands, row_axes, strict=True)
            ]
            part = einsum_rows(subscripts, *subset)
            mismatched += not np.array_equal(part, np.take(whole, rows, axis=output_axis))
    assert mismatched == 0


def test_einsum_rows_wants_the_ellipsis_first():
    with pytest.raises(ValueError, match="only at the start"):
        einsum_rows("k...,k...->...", np.ones((3, 2)), np.ones((3, 2)))


@settings(max_examples=50, deadline=None)
@given(st.integers(0, 2**32 - 1), st.sampled_from([(), (7,), (5, 3)]))
def test_cubed_is_two_products_within_a_rounding_of_the_power(seed, shape):
    values = np.random.default_rng(seed).uniform(-1e3, 1e3, shape)
    result = cubed(values)
    assert result.tobytes() == (values * values * values).tobytes()
    np.testing.assert_allclose(result, values**3, rtol=4e-16, atol=0.0)
    whole = np.arange(-20.0, 21.0)
    np.testing.assert_array_equal(cubed(whole), whole**3)


def test_cross_rows_are_numpys_cross_products_broadcast_and_row_by_row():
    rng = np.random.default_rng(7)
    first, second = rng.normal(size=(2, 5, 4, 3)) * 10.0 ** rng.integers(-8, 8, (2, 5, 4, 1))
    np.testing.assert_allclose(cross_rows(first, second), np.cross(first, second), rtol=1e-12)
    np.testing.assert_array_equal(cross_rows(np.eye(3)[0], np.eye(3)[1]), [0.0, 0.0, 1.0])
    broadcast = cross_rows(first[:, :1], second)
    assert broadcast.shape == (5, 4, 3)
    np.testing.assert_array_equal(broadcast[2, 3], cross_rows(first[2, 0], second[2, 3]))


@settings(max_examples=60, deadline=None)
@given(rows=st.integers(1, 6), seed=st.integers(0, 2**32 - 1))
def test_dot_rows_sums_each_rows_products_in_order_alone_or_among_others(rows, seed):
    rng = np.random.default_rng(seed)
    first, second = rng.normal(size=(2, rows, 3)) * 10.0 ** rng.integers(-8, 8, (2, rows, 3))
    together = dot_rows(first, second)
    for row in range(rows):
        x, y = first[row].tolist(), second[row].tolist()
        # Python floats: the products summed left to right, as written.
        expected = x[0] * y[0] + x[1] * y[1] + x[2] * y[2]
        assert together[row] == expected
        assert dot_rows(first[row], second[row]) == expected
    broadcast = dot_rows(first[:, None], second[None, :])
    assert broadcast.shape == (rows, rows)
    for row, column in np.ndindex(rows, rows):
        assert broadcast[row, column] == dot_rows(first[row], second[column])


@settings(max_examples=80, deadline=None)
@given(
    shape=st.lists(st.integers(1, 4), min_size=1, max_size=3),
    axis=st.integers(-3, 2),
    seed=st.integers(0, 2**32 - 1),
    with_nan=st.booleans(),
)
@pytest.mark.parametrize("ufunc", [np.add, np.maximum, np.minimum])
def test_reduce_short_axis_is_numpys_reduction_bit_for_bit(ufunc, shape, axis, seed, with_nan):
    assume(-len(shape) <= axis < len(shape))
    rng = np.random.default_rng(seed)
    values = rng.normal(size=shape) * 10.0 ** rng.integers(-8, 8, size=shape)
    if with_nan:
        values.flat[rng.integers(0, values.size)] = np.nan
    np.testing.assert_array_equal(
        reduce_short_axis(ufunc, values, axis), ufunc.reduce(values, axis)
    )


@settings(max_examples=40, deadline=None)
@given(
    length=st.integers(1, 16),
    seed=st.integers(0, 2**32 - 1),
    with_nan=st.booleans(),
)
@pytest.mark.parametrize("ufunc", [np.maximum, np.minimum])
def test_reduce_short_axis_extremes_over_longer_axes_bit_for_bit(ufunc, length, seed, with_nan):
    """A minimum or maximum over up to 16 entries (a tree leaf's triangles), infinities
    and NaN among them."""
    rng = np.random.default_rng(seed)
    values = rng.normal(size=(7, length, 3))
    values[rng.random(values.shape) < 0.2] = np.inf * rng.choice([-1, 1])
    if with_nan:
        values.flat[rng.integers(0, values.size)] = np.nan
    np.testing.assert_array_equal(reduce_short_axis(ufunc, values, 1), ufunc.reduce(values, 1))


@given(flags=st.lists(st.lists(st.booleans(), min_size=1, max_size=4), min_size=1, max_size=20))
def test_reduce_short_axis_all_and_any(flags):
    width = min(len(row) for row in flags)
    table = np.array([row[:width] for row in flags])
    np.testing.assert_array_equal(reduce_short_axis(np.logical_and, table), table.all(axis=-1))
    np.testing.assert_array_equal(reduce_short_axis(np.logical_or, table, 1), table.any(axis=1))


@settings(max_examples=50, deadline=None)
@given(
    st.sampled_from([(3,), (3, 3), (2, 3)]),
    st.integers(0, 40),
    st.integers(0, 60),
    st.integers(0, 2**32 - 1),
)
def test_take_rows_is_numpys_indexing_of_rows(row_shape, count, picked, seed):
    """Integer indices (negative ones too, repeated, none, of two axes) and boolean
    masks give what indexing gives."""
    rng = np.random.default_rng(seed)
    values = rng.normal(size=(count, *row_shape))
    values[rng.random(values.shape) < 0.05] = np.nan
    if count:
        index = rng.integers(-count, count, picked)
        np.testing.assert_array_equal(take_rows(values, index), values[index])
        grid = index[: picked // 2 * 2].reshape(-1, 2)
        np.testing.assert_array_equal(take_rows(values, grid), values[grid])
    empty = np.zeros(0, dtype=np.int64)
    np.testing.assert_array_equal(take_rows(values, empty), values[empty])
    mask = rng.random(count) < 0.5
    np.testing.assert_array_equal(take_rows(values, mask), values[mask])


def test_take_rows_refuses_a_mask_of_another_length():
    with pytest.raises(IndexError, match="a mask of 2 rows for 3"):
        take_rows(np.zeros((3, 3)), np.array([True, False]))
    with pytest.raises(IndexError):
        take_rows(np.zeros((3, 3)), np.array([3]))


@settings(max_examples=50, deadline=None)
@given(
    st.sampled_from([(), (3,), (2, 3)]),
    st.integers(0, 30),
    st.integers(1, 6),
    st.integers(0, 2**32 - 1),
)
def test_pick_rows_is_numpys_indexing_of_an_entry_in_each_row(tail, count, width, seed):
    rng = np.random.default_rng(seed)
    values = rng.normal(size=(count, width, *tail))
    index = rng.integers(0, width, count)
    expected = values[np.arange(count), index]
    np.testing.assert_array_equal(pick_rows(values, index), expected)
    # A strided view too (a slice of a larger array).
    wider = np.concatenate([values, values], axis=1)[:, ::2]
    np.testing.assert_array_equal(pick_rows(wider, index), wider[np.arange(count), index])
    flags = values > 0
    np.testing.assert_array_equal(pick_rows(flags, index), flags[np.arange(count), index])


def test_pick_rows_refuses_an_index_outside_the_rows():
    for index in ([0, 3], [-1, 0]):
        with pytest.raises(IndexError, match=r"outside 0\.\.2"):
            pick_rows(np.zeros((2, 3)), np.array(index))


def test_rows_as_bytes_are_equal_exactly_when_the_rows_are_bit_for_bit():
    rows = np.array([[1.0, 2.0], [1.0, 2.0], [np.nan, 0.0], [np.nan, 0.0], [1.0, -0.0]])
    other = np.array([[1.0, 2.0], [1.0, 2.0 + 1e-15], [np.nan, 0.0], [np.nan, -0.0], [1.0, 0.0]])
    np.testing.assert_array_equal(
        rows_as_bytes(rows) == rows_as_bytes(other), [True, False, True, False, False]
    )
    # Rows of several axes (matrices) and strided views are rows as well.
    matrices = np.arange(2 * 4 * 4, dtype=np.float64).reshape(2, 4, 4)
    moved = matrices.copy()
    moved[1, 2, 3] += 1.0
    np.testing.assert_array_equal(rows_as_bytes(matrices) == rows_as_bytes(moved), [True, False])
    assert rows_as_bytes(np.zeros((0, 4, 4))).shape == (0,)  # no rows, as no objects
    strided = rows[::2]
    np.testing.assert_array_equal(
        rows_as_bytes(strided) == rows_as_bytes(rows[[0, 2, 4]]), [True, True, True]
    )


def test_either_flagged_as_any_over_the_pair():
    rng = np.random.default_rng(4)
    flags = rng.random(20) < 0.3
    pairs = rng.integers(0, 20, (50, 2))
    np.testing.assert_array_equal(either_flagged(flags, pairs), flags[pairs].any(axis=1))


def test_pair_order_sorts_by_first_then_second_keeping_ties_in_order():
    rng = np.random.default_rng(5)
    pairs = rng.integers(0, 6, (60, 2))
    order = pair_order(pairs)
    expected = sorted(range(len(pairs)), key=lambda row: (pairs[row, 0], pairs[row, 1], row))
    np.testing.assert_array_equal(order, expected)


@settings(max_examples=100, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), tail=st.sampled_from([(), (3,)]))
def test_first_distinct_keeps_each_rows_unrepeated_entries_in_order_padded_by_the_first(seed, tail):
    rng = np.random.default_rng(seed)
    count, width = rng.integers(1, 6), rng.integers(1, 8)
    values = rng.integers(0, 4, (count, width, *tail)).astype(float)
    flat = values.reshape(count, width, -1)
    same = (flat[:, :, None] == flat[:, None, :]).all(axis=3)
    repeated = np.tril(same, -1).any(axis=2)
    found = first_distinct(values, repeated)
    kept = [
        [entry for entry, twice in zip(row, again, strict=True) if not twice]
        for row, again in zip(values, repeated, strict=True)
    ]
    assert found.shape[1] == max(len(row) for row in kept)
    for row, expected in zip(found, kept, strict=True):
        np.testing.assert_array_equal(row[: len(expected)], expected)
        np.testing.assert_array_equal(
            row[len(expected) :], np.broadcast_to(expected[0], row[len(expected) :].shape)
        )
