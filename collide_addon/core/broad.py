"""Broad phase: a hierarchical uniform grid over axis-aligned bounds, vectorised.

Each object goes to the level whose cell size is the smallest power-of-two multiple
of a base size that its bounds span in at most 2 cells per axis; it is stored in
those (at most 8) cells. An object then queries its own level and every coarser
one, where it also spans at most 2 cells per axis (the grids share one origin, so
coarser cell walls are a subset of finer ones). A pair is reported only from the
cell holding the minimum corner of the two boxes' intersection, which both boxes
cover, so no pair is found twice and no sort-unique pass is needed.

Expected cost O(n + k) for n objects and k overlapping pairs, also when sizes span
orders of magnitude (a floor slab among bolts lives on a coarse level and is met
by each bolt's few look-ups there).
"""

from __future__ import annotations

import numpy as np

from .narrow import pair_intersects
from .shapes import ShapeBatch

# Cells per axis must fit 20 bits so that three of them pack into one int64 key.
_MAX_CELLS_PER_AXIS = 1 << 20
# Queriers are expanded in groups so the candidate arrays stay bounded in memory.
_QUERY_GROUP = 1 << 16

_CORNER_OFFSETS = np.array(
    [[x, y, z] for x in (0, 1) for y in (0, 1) for z in (0, 1)], dtype=np.int64
)


def _cell_sizes(lo: np.ndarray, hi: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Level of each box and the base cell size.

    lo, hi: (n, 3) bounds; returns (levels (n,) int64, base size float)
    """
    extents = (hi - lo).max(axis=1)
    span = float((hi.max(axis=0) - lo.min(axis=0)).max())
    positive = extents[extents > 0]
    base = float(positive.min()) if len(positive) else 1.0
    base = max(base, span / (_MAX_CELLS_PER_AXIS - 2), np.finfo(float).tiny)
    with np.errstate(divide="ignore"):
        levels = np.ceil(np.log2(np.maximum(extents, base) / base)).astype(np.int64)
    return np.maximum(levels, 0), base


def _cells(points: np.ndarray, origin: np.ndarray, size: float) -> np.ndarray:
    return np.floor((points - origin) / size).astype(np.int64)


def _keys(cells: np.ndarray, counts: np.ndarray) -> np.ndarray:
    return (cells[..., 0] * counts[1] + cells[..., 1]) * counts[2] + cells[..., 2]


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
    origin = lo.min(axis=0)
    # A box whose bounds straddle 3 cells through rounding moves one level up.
    for _ in range(2):
        size = base * np.exp2(levels)
        spans = _cells(hi, origin, size[:, None]) - _cells(lo, origin, size[:, None])
        levels = levels + (spans > 1).any(axis=1)
    found = []
    for level in np.unique(levels):
        size = base * 2.0**level
        counts = _cells(hi.max(axis=0), origin, size) + 2
        stored = np.flatnonzero(levels == level)
        stored_keys, stored_objects = _store(lo[stored], hi[stored], stored, origin, size, counts)
        first, second, cell_keys = _pairs_sharing_cells(stored_keys, stored_objects)
        found.append(_keep_overlapping_once(first, second, cell_keys, lo, hi, origin, size, counts))
        finer = np.flatnonzero(levels < level)
        for start in range(0, len(finer), _QUERY_GROUP):
            group = finer[start : start + _QUERY_GROUP]
            first, second, cell_keys = _look_up(
                group, lo, hi, origin, size, counts, stored_keys, stored_objects
            )
            found.append(
                _keep_overlapping_once(first, second, cell_keys, lo, hi, origin, size, counts)
            )
    pairs = np.concatenate(found)
    return np.sort(pairs, axis=1)


def _store(lo, hi, objects, origin, size, counts):
    """Sorted (keys, objects) of every cell each box covers on one level."""
    keys, owners = _covered_cells(lo, hi, objects, origin, size, counts)
    order = np.argsort(keys, kind="stable")
    return keys[order], owners[order]


def _covered_cells(lo, hi, objects, origin, size, counts):
    """(keys, owners): one entry per cell (at most 8) that each box covers on a level."""
    low_cells = _cells(lo, origin, size)
    high_cells = _cells(hi, origin, size)
    cells = low_cells[:, None, :] + _CORNER_OFFSETS[None, :, :]
    covered = (cells <= high_cells[:, None, :]).all(axis=2)
    keys = _keys(cells, counts)[covered]
    owners = np.broadcast_to(objects[:, None], covered.shape)[covered]
    return keys, owners


def _expand_runs(starts: np.ndarray, lengths: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For runs [start, start + length): (run index, position) of every element."""
    total = int(lengths.sum())
    run = np.repeat(np.arange(len(starts)), lengths)
    position = np.repeat(starts - (np.cumsum(lengths) - lengths), lengths) + np.arange(total)
    return run, position


def _pairs_sharing_cells(keys, objects):
    """Every pair of entries with the same key: (first, second, key), each (k,)."""
    count = len(keys)
    boundaries = np.flatnonzero(keys[1:] != keys[:-1]) + 1
    run_ends = np.append(boundaries, count)
    run_ends_per_entry = np.repeat(run_ends, np.diff(np.append(0, run_ends)))
    later = run_ends_per_entry - np.arange(count) - 1
    entry, partner = _expand_runs(np.arange(count) + 1, later)
    return objects[entry], objects[partner], keys[entry]


def _look_up(group, lo, hi, origin, size, counts, stored_keys, stored_objects):
    """Pairs (querier, stored) met in the cells of `group` on one level, with the cell key."""
    query_keys, queriers = _covered_cells(lo[group], hi[group], group, origin, size, counts)
    first = np.searchsorted(stored_keys, query_keys, side="left")
    last = np.searchsorted(stored_keys, query_keys, side="right")
    entry, position = _expand_runs(first, last - first)
    return queriers[entry], stored_objects[position], query_keys[entry]


def _keep_overlapping_once(first, second, cell_keys, lo, hi, origin, size, counts):
    """Pairs whose boxes overlap, each kept only in the cell of its intersection's min corner."""
    overlap = (lo[first] <= hi[second]).all(axis=1) & (lo[second] <= hi[first]).all(axis=1)
    first, second, cell_keys = first[overlap], second[overlap], cell_keys[overlap]
    corner = _keys(_cells(np.maximum(lo[first], lo[second]), origin, size), counts)
    own = corner == cell_keys
    return np.stack([first[own], second[own]], axis=1)


def find_pairs(batch: ShapeBatch, margin: float = 0.0) -> np.ndarray:
    """Every pair of shapes whose signed distance is <= margin, and no other.

    batch: n shapes; margin: float (negative: only pairs penetrating deeper than -margin)
    returns: (k, 2) int64, i < j, sorted lexicographically
    """
    margin = float(margin)
    if not np.isfinite(margin):
        raise ValueError(f"margin must be finite, got {margin}")
    lo, hi = batch.aabbs()
    # Bounds grown by half the margin each meet whenever the shapes are within it.
    growth = 0.5 * max(margin, 0.0)
    candidates = overlapping_bounds(lo - growth, hi + growth)
    hits = pair_intersects(batch, candidates[:, 0], candidates[:, 1], margin)
    pairs = candidates[hits]
    order = np.lexsort((pairs[:, 1], pairs[:, 0]))
    return pairs[order]
