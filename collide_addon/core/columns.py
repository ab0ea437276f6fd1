"""Operations on arrays with one row per item: row-wise products that give a row the same
bits whatever rows share the call, and field-wise operations on dataclasses whose fields
are such arrays."""

from __future__ import annotations

import dataclasses
import functools

import numpy as np


def concatenate_fields(cls, parts, build=None):
    """An instance of dataclass `cls` whose every field is the concatenation of that
    field over `parts` (a non-empty list of `cls` instances), in order; made by
    `build(**fields)` when given, else by `cls(**fields)`."""
    return (build or cls)(
        **{
            field.name: np.concatenate([getattr(part, field.name) for part in parts])
            for field in dataclasses.fields(cls)
        }
    )


def take_fields(instance, rows):
    """A copy of dataclass `instance` whose every field (an array with one row per item)
    holds only `rows` ((k,) indices or a mask), in that order."""
    return dataclasses.replace(
        instance,
        **{
            field.name: getattr(instance, field.name)[rows]
            for field in dataclasses.fields(instance)
        },
    )


def first_distinct(values: np.ndarray, repeated: np.ndarray) -> np.ndarray:
    """Each row's entries of `values` (k, d, ...) that are not `repeated` (k, d) bool (an
    entry equal to an earlier one of its row, by whatever measure; the first never is),
    in their order: (k, w, ...), w the most any row keeps, each row padded with its first
    entry."""
    order = np.argsort(repeated, axis=1, kind="stable")
    width = int((~repeated).sum(axis=1).max(initial=0))
    index = order[:, :width].reshape(order.shape[0], width, *(1,) * (values.ndim - 2))
    kept = np.take_along_axis(values, index, axis=1)
    padding = np.take_along_axis(repeated, order[:, :width], axis=1)
    padding = padding.reshape(*padding.shape, *(1,) * (values.ndim - 2))
    return np.where(padding, values[:, :1], kept)


def rows_as_bytes(values: np.ndarray) -> np.ndarray:
    """Each row of `values` (n, ...) as one opaque value (n,): rows compared bit for bit
    (NaN equal to the same NaN, -0.0 unequal to 0.0) in one comparison each, about a
    tenth of comparing their floats and reducing over the row."""
    rows = np.ascontiguousarray(values).reshape(len(values), int(np.prod(values.shape[1:])))
    return rows.view(np.dtype((np.void, rows.shape[1] * rows.itemsize))).ravel()


def pair_order(pairs: np.ndarray) -> np.ndarray:
    """The order (k,) that sorts pairs (k, 2) lexicographically, by first item then
    second (stable)."""
    return np.lexsort((pairs[:, 1], pairs[:, 0]))


def either_flagged(flags: np.ndarray, pairs: np.ndarray) -> np.ndarray:
    """Whether either item of each pair (k, 2) is flagged in `flags` (n,): (k,) bool, by
    columns (numpy's `any` over a 2-long axis is several times slower)."""
    return flags[pairs[:, 0]] | flags[pairs[:, 1]]


def cubed(values: np.ndarray) -> np.ndarray:
    """`values ** 3`, as two products: numpy sends powers other than 2 (and sin, cos,
    log, exp) to its vectorised or libm routines, which in some builds give one of two
    roundings for the same input from call to call (Debian's Blender 3.4 with its numpy
    1.24: a capsule's volume, an axis's sign by a sum of cubes); products are rounded
    the same way everywhere."""
    return values * values * values


def dot_rows(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Dot products along the last axis of (..., 3) arrays, broadcast, written out: each
    row's three products summed in order whatever rows share the call, faster than a sum
    over a 3-long axis or einsum's set-up on small groups."""
    return a[..., 0] * b[..., 0] + a[..., 1] * b[..., 1] + a[..., 2] * b[..., 2]


def cross_rows(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Cross products along the last axis of (..., 3) arrays, broadcast, written out:
    np.cross's generic axis handling dominates for the small groups of pairs a live
    update has."""
    return np.stack(
        (
            a[..., 1] * b[..., 2] - a[..., 2] * b[..., 1],
            a[..., 2] * b[..., 0] - a[..., 0] * b[..., 2],
            a[..., 0] * b[..., 1] - a[..., 1] * b[..., 0],
        ),
        axis=-1,
    )


def reduce_short_axis(ufunc, values: np.ndarray, axis: int = -1) -> np.ndarray:
    """`ufunc.reduce(values, axis)` over a short axis (coordinates, a triangle's corners:
    up to 4 entries; a tree leaf's triangles for minimum and maximum), by combining its
    slices in order.

    numpy reduces such an axis row by row, four (maximum) to seven (logical and) times
    slower than combining whole slices, and for up to 4 entries it sums them in the same
    order, so the values are the same bit for bit (NaN propagating as there); a minimum
    or maximum is the same in any order.
    """
    axis %= values.ndim
    # The axis brought to the front by a transpose, np.moveaxis's view without its
    # Python (a few microseconds, on calls of a few rows each in a live update).
    order = (axis, *(other for other in range(values.ndim) if other != axis))
    return functools.reduce(ufunc, values.transpose(order))


def take_rows(values: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """`values[rows]` for an integer index (k,) or a boolean mask (n,) `rows` of the first
    axis of `values` (n, ...), a contiguous array.

    numpy's indexing takes rows of two or more axes element by element: np.take and
    np.compress copy whole rows, four to six times faster for rows of 3 or 9 floats
    (1.5e5 rows, numpy 1.26 and 2.4), with the same values. A strided view would be
    copied whole first, hence contiguous arrays only."""
    if rows.dtype == bool:
        if len(rows) != len(values):
            raise IndexError(f"take_rows: a mask of {len(rows)} rows for {len(values)}")
        return values.compress(rows, axis=0)
    return values.take(rows, axis=0)


def pick_rows(values: np.ndarray, index: np.ndarray) -> np.ndarray:
    """`values[np.arange(k), index]`: each row's entry `index` (k,) int, 0 <= index < n,
    along the second axis of `values` (k, n, ...).

    Taken from the rows laid end to end, by `take_rows`, four times faster than numpy's
    indexing (5e4 rows of 3 entries, of 3 floats each or one) with the same values."""
    count, width = values.shape[:2]
    if len(index) and (index.min() < 0 or index.max() >= width):
        raise IndexError(f"pick_rows: an index outside 0..{width - 1}")
    flat = np.ascontiguousarray(values).reshape(count * width, *values.shape[2:])
    return take_rows(flat, np.arange(count) * width + index)


def einsum_rows(subscripts: str, *operands) -> np.ndarray:
    """np.einsum(subscripts, *operands), each row computed as it is among any others.

    np.einsum picks the order in which it sums the products from its operands' shapes
    and memory layout: it drops an axis of length 1, and it iterates strided operands (a
    subset taken by fancy indexing) another way than contiguous ones. So a row alone, or
    in a subset, would differ in its last bits from the same row among others, and a
    pair's result must not depend on which pairs share the call (continuous detection
    advances the pairs of many intervals together, and a scan split into chunks must
    give what one run gives). Operands are made contiguous, and row axes (the leading
    `...` and the labels in every operand and in the output) of length 1 are doubled
    before and halved after.
    subscripts: explicit ("...k,...k->...", "ckm,clm->klm"); `...` only at the start
    """
    operands = [np.ascontiguousarray(operand) for operand in operands]
    row_axes, output_rank = _row_axes(subscripts, tuple(operand.ndim for operand in operands))
    cut = None
    for axes, output_axis in row_axes:
        sizes = [operands[index].shape[axis] for index, axis in axes]
        if max(sizes) == 1:
            for index, axis in axes:
                operands[index] = np.repeat(operands[index], 2, axis=axis)
            cut = cut or [slice(None)] * output_rank
            cut[output_axis] = slice(0, 1)
    result = np.einsum(subscripts, *operands)
    return result if cut is None else result[tuple(cut)]


@functools.lru_cache(maxsize=256)
def _row_axes(subscripts: str, ranks: tuple[int, ...]):
    """The row axes of `einsum_rows`: ([(operand index, its axis), ...], output axis)
    for each, and the output's rank."""
    inputs, output = subscripts.split("->")
    specs = inputs.split(",")
    if any(spec.find("...") > 0 for spec in specs) or output.find("...") > 0:
        raise ValueError(f"einsum_rows takes '...' only at the start: {subscripts!r}")
    labels = [spec.removeprefix("...") for spec in specs]
    leading = [rank - len(label) for rank, label in zip(ranks, labels, strict=True)]
    ellipsis_rank = max(leading) if output.startswith("...") else 0
    row_axes = []
    for axis in range(ellipsis_rank):  # right-aligned, as the ellipsis broadcasts
        offsets = [axis - (ellipsis_rank - count) for count in leading]
        axes = [(index, offset) for index, offset in enumerate(offsets) if offset >= 0]
        row_axes.append((axes, axis))
    output_labels = output.removeprefix("...")
    for position, label in enumerate(output_labels):
        if all(label in spec for spec in labels):
            axes = [
                (index, count + spec.index(label))
                for index, (spec, count) in enumerate(zip(labels, leading, strict=True))
            ]
            row_axes.append((axes, ellipsis_rank + position))
    return row_axes, ellipsis_rank + len(output_labels)
