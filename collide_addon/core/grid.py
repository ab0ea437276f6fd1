"""The box grid: every overlapping pair of axis-aligned boxes, by a hierarchical uniform
grid, vectorised. Imports numpy and `constants` only; the broad phase (`broad.py`) and
the broad phase across updates (`coherent.py`) build on it.

Each box goes to the level whose cell size is the smallest power-of-two multiple
of a base size that its bounds span in at most 2 cells per axis; it is stored in
those (at most 8) cells. A box then queries its own level and every coarser
one, where it also spans at most 2 cells per axis (the grids share one origin, so
coarser cell walls are a subset of finer ones). A pair is reported only from the
cell holding the minimum corner of the two boxes' intersection, which both boxes
cover, so no pair is found twice and no sort-unique pass is needed.

Expected cost O(n + k) for n boxes and k overlapping pairs, also when sizes span
orders of magnitude (a floor slab among bolts lives on a coarse level and is met
by each bolt's few look-ups there).

`GridLevel`, `run_finder`, `expand_runs`, `keep_overlapping_once` and `bounds_overlap`
are the pieces of one level's look-up, public for `coherent.py`, which keeps a level
between calls.
"""

from __future__ import annotations

import math

import numpy as np

from .constants import CUBE_CORNER_SIGNS

# Cell size grows by this factor from one level to the next (an integer, so that the
# walls of a coarser level are walls of every finer one).
LEVEL_RATIO = 2
# Levels holding fewer boxes than this (or than 1% of them) merge into the next one up.
_SPARSE_LEVEL = 32
# A level's cells are looked up in a dense table (one slot per cell of its bounding grid)
# when there are at most this many cells per stored entry, else by binary search.
_DENSE_TABLE_RATIO = 16
# Cells per axis must fit 20 bits so that three of them pack into one int64 key.
MAX_CELLS_PER_AXIS = 1 << 20
# Queriers are expanded in groups so the candidate arrays stay bounded in memory.
_QUERY_GROUP = 1 << 16

# The 8 cells a box may cover, as offsets (0 or 1 per axis) from its lowest cell.
_CORNER_OFFSETS = ((CUBE_CORNER_SIGNS + 1.0) / 2.0).astype(np.int64)


def _cell_sizes(lo: np.ndarray, hi: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Level of each box and the base cell size.

    lo, hi: (n, 3) bounds; returns (levels (n,) int64, base size float)
    """
    extents = (hi - lo).max(axis=1)
    span = float((hi.max(axis=0) - lo.min(axis=0)).max())
    positive = extents[extents > 0]
    base = float(positive.min()) if len(positive) else 1.0
    base = max(base, span / (MAX_CELLS_PER_AXIS - 2), np.finfo(float).tiny)
    with np.errstate(divide="ignore"):
        levels = np.ceil(np.log(np.maximum(extents, base) / base) / np.log(LEVEL_RATIO) - 1e-9)
        levels = levels.astype(np.int64)
    return np.maximum(levels, 0), base


def _cells(points: np.ndarray, origin: np.ndarray, size) -> np.ndarray:
    return np.floor((points - origin) / size).astype(np.int64)


class GridLevel:
    """One grid level: every box's lowest and highest cell there, per axis, and the
    cell-key space.

    lo_columns, hi_columns: (3, n) float64 bounds, one row per axis
    origin: (3,) float64 corner of cell (0, 0, 0); size: float, the cell size
    low, high: (3, n) int64 cells of each box's lower and upper corner
    counts: (3,) int64 cells per axis (with room for one more), which keys pack
    """

    def __init__(self, lo_columns, hi_columns, origin, size):
        self.origin, self.size = origin, size
        self.low = np.floor((lo_columns - origin[:, None]) / size).astype(np.int64)  # (3, n)
        self.high = np.floor((hi_columns - origin[:, None]) / size).astype(np.int64)
        self.counts = self.high.max(axis=1) + 2  # cells per axis, with room for +1

    def covered(self, objects: np.ndarray):
        """(keys, owners, corners): one entry per cell (at most 8) each box covers.

        corners: (3, k) offset (0 or 1 per axis) of the cell from the box's lowest cell.
        """
        low = self.low[:, objects]
        spans = self.high[:, objects] - low  # 0 or 1 per axis
        owners, corners = [], []
        for corner in _CORNER_OFFSETS:
            inside = np.flatnonzero(
                (spans[0] >= corner[0]) & (spans[1] >= corner[1]) & (spans[2] >= corner[2])
            )
            owners.append(objects[inside])
            corners.append(np.broadcast_to(corner[:, None], (3, len(inside))))
        owners = np.concatenate(owners)
        corners = np.concatenate(corners, axis=1)
        return self.keys(self.low[:, owners] + corners), owners, corners

    def cell_count(self) -> int:
        return int(np.prod(self.counts.astype(np.float64)))

    def keys(self, cells: np.ndarray) -> np.ndarray:
        return (cells[0] * self.counts[1] + cells[1]) * self.counts[2] + cells[2]


def _merge_sparse_levels(levels: np.ndarray, fewest: int) -> np.ndarray:
    """Levels (n,) with every level of fewer than `fewest` boxes moved one level up,
    finest first (the coarsest stays). A box may live on any level at or above its own
    (it still spans at most 2 cells per axis there); a level costs every finer box a
    look-up, so a handful of tiny boxes should not have one of their own.
    """
    counts = np.bincount(levels)
    moves = np.arange(len(counts))
    for level in range(len(counts) - 1):
        if 0 < counts[level] < fewest:
            counts[level + 1] += counts[level]
            counts[level] = 0
            moves[moves == level] = level + 1
    return moves[levels]


def overlapping_bounds(lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """All pairs of closed axis-aligned boxes that overlap (touching counts).

    lo, hi: (n, 3) float64 bounds
    returns: (k, 2) int64 pairs with i < j, in no particular order
    """
    lo = np.asarray(lo, dtype=np.float64)
    hi = np.asarray(hi, dtype=np.float64)
    n = len(lo)
    if n < 2:
        return np.zeros((0, 2), dtype=np.int64)
    levels, base = _cell_sizes(lo, hi)
    levels = _merge_sparse_levels(levels, max(_SPARSE_LEVEL, n // 100))
    origin = lo.min(axis=0)
    # A box whose bounds straddle 3 cells through rounding moves one level up, where it
    # is at most half a cell across and so spans at most 2.
    size = base * float(LEVEL_RATIO) ** levels
    spans = _cells(hi, origin, size[:, None]) - _cells(lo, origin, size[:, None])
    levels = levels + (spans > 1).any(axis=1)
    lo_columns = np.ascontiguousarray(lo.T)
    hi_columns = np.ascontiguousarray(hi.T)
    found = []
    for level in np.unique(levels):
        grid = GridLevel(lo_columns, hi_columns, origin, base * float(LEVEL_RATIO) ** level)
        stored = np.flatnonzero(levels == level)
        keys, owners, corners = grid.covered(stored)
        order = np.argsort(keys)
        keys, owners, corners = keys[order], owners[order], corners[:, order]
        first, second = _pairs_sharing_cells(keys)
        find_runs = run_finder(keys, grid.cell_count())
        found.append(
            keep_overlapping_once(
                owners[first], owners[second], corners[:, first], grid, lo_columns, hi_columns
            )
        )
        # Only finer boxes that reach the stored boxes' overall bounds can meet them.
        stored_lo = lo_columns[:, stored].min(axis=1)
        stored_hi = hi_columns[:, stored].max(axis=1)
        finer = np.flatnonzero(
            (levels < level)
            & (lo_columns[0] <= stored_hi[0])
            & (hi_columns[0] >= stored_lo[0])
            & (lo_columns[1] <= stored_hi[1])
            & (hi_columns[1] >= stored_lo[1])
            & (lo_columns[2] <= stored_hi[2])
            & (hi_columns[2] >= stored_lo[2])
        )
        for start in range(0, len(finer), _QUERY_GROUP):
            query_keys, queriers, query_corners = grid.covered(finer[start : start + _QUERY_GROUP])
            begin, length = find_runs(query_keys)
            entry, position = expand_runs(begin, length)
            found.append(
                keep_overlapping_once(
                    queriers[entry],
                    owners[position],
                    query_corners[:, entry],
                    grid,
                    lo_columns,
                    hi_columns,
                )
            )
    return np.concatenate(found)


def run_finder(sorted_keys: np.ndarray, key_space: int):
    """A function: query keys (q,) -> (first position, run length) in `sorted_keys`.

    A dense table indexed by key where the key space is small next to the entries
    (the usual case on coarse levels), binary search otherwise.
    """
    if key_space <= _DENSE_TABLE_RATIO * len(sorted_keys):
        lengths = np.bincount(sorted_keys, minlength=key_space)
        firsts = np.cumsum(lengths) - lengths
        return lambda query: (firsts[query], lengths[query])

    def search(query):
        first = np.searchsorted(sorted_keys, query, side="left")
        return first, np.searchsorted(sorted_keys, query, side="right") - first

    return search


def expand_runs(starts: np.ndarray, lengths: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For runs [start, start + length): (run index, position) of every element."""
    total = int(lengths.sum())
    run = np.repeat(np.arange(len(starts)), lengths)
    position = np.repeat(starts - (np.cumsum(lengths) - lengths), lengths) + np.arange(total)
    return run, position


def run_starts(keys: np.ndarray) -> np.ndarray:
    """Whether each entry (k,) bool of sorted `keys` (k,) is the first of its run of
    equal keys."""
    starts = np.ones(len(keys), dtype=bool)
    starts[1:] = keys[1:] != keys[:-1]
    return starts


def ranks_in_runs(keys: np.ndarray) -> np.ndarray:
    """Each entry's place (k,) int64 in its run of equal `keys` (k,), which are sorted:
    0 for a run's first, 1 for its second, and so on."""
    return np.arange(len(keys)) - np.searchsorted(keys, keys)


def lexicographic_order(columns: tuple[np.ndarray, ...], sizes: tuple[int, ...]) -> np.ndarray:
    """`np.lexsort(columns[::-1])`: the order (k,) of the rows of integer `columns` (k,)
    each, the first the most significant, each column's entries in 0..size - 1 of its
    `sizes`. Where the sizes' product fits in 63 bits, one stable sort of a key made of
    all the columns, several times faster than lexsort's sort per column (2.7e5 rows of
    three columns: 9 ms against 67 ms); equal rows keep their order either way."""
    if math.prod(sizes) < 2**63:
        key = np.zeros(len(columns[0]), dtype=np.int64)
        for column, size in zip(columns, sizes, strict=True):
            key = key * size + column
        return np.argsort(key, kind="stable")
    return np.lexsort(columns[::-1])


def _pairs_sharing_cells(keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Every pair of positions in sorted `keys` holding the same key: (first, second)."""
    count = len(keys)
    boundaries = np.flatnonzero(keys[1:] != keys[:-1]) + 1
    run_ends = np.append(boundaries, count)
    run_ends_per_entry = np.repeat(run_ends, np.diff(np.append(0, run_ends)))
    later = run_ends_per_entry - np.arange(count) - 1
    return expand_runs(np.arange(count) + 1, later)


def keep_overlapping_once(first, second, corners, grid: GridLevel, lo_columns, hi_columns):
    """Pairs met in a cell, kept when the boxes overlap and the cell holds the minimum
    corner of their intersection (both cover it, so exactly one cell keeps a pair);
    returned as (k, 2) rows (smaller index, larger).

    first, second: (k,) box indices; corners: (3, k) the cell's offset from first's
    lowest cell. The intersection's lowest cell is the larger of the two lowest cells.
    """
    keep = np.ones(len(first), dtype=bool)
    for axis in range(3):
        low_first = np.take(grid.low[axis], first)
        low_second = np.take(grid.low[axis], second)
        keep &= np.maximum(low_first, low_second) == low_first + corners[axis]
    first, second = first[keep], second[keep]
    keep = bounds_overlap(lo_columns, hi_columns, first, second)
    first, second = first[keep], second[keep]
    return np.stack([np.minimum(first, second), np.maximum(first, second)], axis=1)


def overlapping_among(lo: np.ndarray, hi: np.ndarray, pairs: np.ndarray) -> np.ndarray:
    """The pairs (k, 2) whose closed boxes (bounds lo, hi (n, 3)) overlap, in their
    order: (j, 2), a subset of `pairs`."""
    return pairs[bounds_overlap(lo.T, hi.T, pairs[:, 0], pairs[:, 1])]


def bounds_overlap(lo_columns, hi_columns, first, second) -> np.ndarray:
    """Whether closed boxes first[k] and second[k] overlap: (k,) bool.

    lo_columns, hi_columns: (3, n) bounds, one row per axis (views of (n, 3) work too)
    """
    keep = np.ones(len(first), dtype=bool)
    for axis in range(3):
        keep &= np.take(lo_columns[axis], first) <= np.take(hi_columns[axis], second)
        keep &= np.take(lo_columns[axis], second) <= np.take(hi_columns[axis], first)
    return keep
