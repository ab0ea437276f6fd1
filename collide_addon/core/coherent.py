"""Broad phase across updates: the overlapping pairs of boxes that move a little from one
call to the next, without building the whole grid each time.

A rebuild grows every box by a slack into a *fat* box and finds every overlapping pair
of fat boxes with `overlapping_bounds`. A box still inside its fat box at a later call
can only overlap boxes whose fat boxes overlap its own, so those pairs remain the
candidates. A box that left its fat box gets a new one and counts as *moved*; moved
boxes are looked up in a grid of the unmoved fat boxes kept from the rebuild (one level,
cells as large as the largest *ordinary* box, so every ordinary box covers at most 8
cells), and matched with each other and with the few boxes too large for that grid by
`overlapping_bounds` on those alone. Once an eighth of the boxes have moved, or the
look-ups would cost more than a rebuild, the call rebuilds; while most boxes jump at
once, no fat boxes are kept at all. Every candidate is then tested against the exact
boxes, so the result is always `overlapping_bounds(lo, hi)`; only the work differs.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from .grid import (
    MAX_CELLS_PER_AXIS,
    GridLevel,
    expand_runs,
    keep_overlapping_once,
    overlapping_among,
    overlapping_bounds,
    run_finder,
)

# Each box grows by this fraction of its largest extent (at least of the median box's):
# objects that move less than that between calls keep their candidates.
SLACK = 0.25
# A rebuild once this fraction of the boxes have moved since the last one.
REBUILD_FRACTION = 1 / 8
# Boxes larger than this many median boxes stay out of the grid (its cells would grow
# with them) and are matched with moved boxes by `overlapping_bounds` on those alone.
LARGE_BOX_RATIO = 2.0
# A rebuild instead of look-ups testing more than this many pairs per box.
TESTS_PER_BOX = 4


@dataclass
class _Fat:
    """The state left by the last rebuild and the boxes moved since.

    lo, hi: (n, 3) fat boxes; slack: (n,) growth of each box
    pairs: (c, 2) overlapping pairs of the rebuild's fat boxes, i < j
    grid: one level over the rebuild's ordinary fat boxes (its `low`/`high` cells are
        kept current for moved boxes); owners: (e,) box of each stored cell entry, sorted
        by cell key; find_runs: cell keys -> (first entry, count)
    large: (l,) boxes outside the grid
    moved: (n,) bool, fat box replaced since the rebuild
    candidates: (k, 2) pairs i < j that may overlap while every box is in its fat box
    """

    lo: np.ndarray
    hi: np.ndarray
    slack: np.ndarray
    pairs: np.ndarray
    grid: GridLevel
    owners: np.ndarray
    find_runs: Callable
    large: np.ndarray
    moved: np.ndarray
    candidates: np.ndarray


class CoherentBounds:
    """Overlapping pairs of axis-aligned boxes over successive calls (see the module)."""

    def __init__(self) -> None:
        self._fat: _Fat | None = None
        # The boxes of the last call made without fat boxes (see `overlapping`).
        self._last: tuple[np.ndarray, np.ndarray] | None = None
        self.rebuilds = 0  # how many calls built fat boxes (for tests and benchmarks)

    def overlapping(self, lo: np.ndarray, hi: np.ndarray, exact: bool = True) -> np.ndarray:
        """All pairs of closed boxes that overlap, as `overlapping_bounds(lo, hi)`.

        lo, hi: (n, 3) float64 bounds of the same n boxes as the last call (a call with
            another n starts afresh)
        exact: False leaves out the test of the candidates against the boxes: the pairs
            then hold every overlapping pair and maybe others (the fat boxes' pairs), for
            a caller that tests only some of them (`KeptContacts`)
        returns: (k, 2) int64 pairs with i < j, no pair twice, in no particular order

        Fat boxes cost more to build than one `overlapping_bounds`, so they are built
        only when the boxes moved little since the last call; while most boxes jump
        (or on a first call) this is `overlapping_bounds` itself.
        """
        lo = np.asarray(lo, dtype=np.float64)
        hi = np.asarray(hi, dtype=np.float64)
        if len(lo) < 2:
            self._fat = self._last = None
            return np.zeros((0, 2), dtype=np.int64)
        fat, last = self._fat, self._last
        if fat is not None and len(fat.lo) == len(lo):
            outcome = _update(fat, lo, hi)
            if outcome == _KEPT:
                return overlapping_among(lo, hi, fat.candidates) if exact else fat.candidates
            calm = outcome == _REBUILD
        else:
            calm = last is not None and len(last[0]) == len(lo) and _calm(last, lo, hi)
        if calm:
            fat = self._fat = _rebuild(lo, hi)
            self._last = None
            self.rebuilds += 1
            return overlapping_among(lo, hi, fat.candidates) if exact else fat.candidates
        self._fat, self._last = None, (lo.copy(), hi.copy())
        return overlapping_bounds(lo, hi)


# What `_update` did with the fat boxes.
_KEPT = "kept"  # they hold the candidates for the new boxes
_REBUILD = "rebuild"  # too many moved since the rebuild, or look-ups too costly
_SCATTERED = "scattered"  # too many boxes jumped at once for fat boxes to pay off


def _slack(lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """Growth of each box (n,): a fraction of its largest extent or the median box's."""
    extents = (hi - lo).max(axis=1)
    return SLACK * np.maximum(extents, np.median(extents))


def _calm(last: tuple[np.ndarray, np.ndarray], lo: np.ndarray, hi: np.ndarray) -> bool:
    """Whether at most REBUILD_FRACTION of the boxes left their last call's boxes grown
    by the slack: then fat boxes built now would likely be kept."""
    slack = _slack(lo, hi)[:, None]
    inside = _inside(lo, hi, last[0] - slack, last[1] + slack)
    return len(lo) - int(inside.sum()) <= REBUILD_FRACTION * len(lo)


def _rebuild(lo: np.ndarray, hi: np.ndarray) -> _Fat:
    extents = (hi - lo).max(axis=1)
    typical = float(np.median(extents))
    slack = _slack(lo, hi)
    fat_lo, fat_hi = lo - slack[:, None], hi + slack[:, None]
    fat_extents = extents + 2.0 * slack
    ordinary = fat_extents <= LARGE_BOX_RATIO * (typical + 2.0 * SLACK * typical)
    ordinary_rows = np.flatnonzero(ordinary)
    # Cells as large as the largest ordinary box, so that it covers at most 2 per axis.
    size = float(fat_extents[ordinary_rows].max()) if len(ordinary_rows) else 1.0
    origin = fat_lo.min(axis=0)
    # As in overlapping_bounds: cell indices must fit 20 bits per axis.
    span = float((fat_hi.max(axis=0) - origin).max())
    size = max(size, span / (MAX_CELLS_PER_AXIS - 2), np.finfo(float).tiny)
    grid = GridLevel(np.ascontiguousarray(fat_lo.T), np.ascontiguousarray(fat_hi.T), origin, size)
    keys, owners, _ = grid.covered(ordinary_rows)
    order = np.argsort(keys, kind="stable")
    pairs = overlapping_bounds(fat_lo, fat_hi)
    return _Fat(
        lo=fat_lo,
        hi=fat_hi,
        slack=slack,
        pairs=pairs,
        grid=grid,
        owners=owners[order],
        find_runs=run_finder(keys[order], grid.cell_count()),
        large=np.flatnonzero(~ordinary),
        moved=np.zeros(len(lo), dtype=bool),
        candidates=pairs,
    )


def _update(fat: _Fat, lo: np.ndarray, hi: np.ndarray) -> str:
    """Give the boxes that left their fat box a new one and find the candidates again;
    returns _KEPT, or _REBUILD / _SCATTERED when the fat boxes should go."""
    escaped = np.flatnonzero(~_inside(lo, hi, fat.lo, fat.hi))
    if not len(escaped):
        return _KEPT
    if len(escaped) > REBUILD_FRACTION * len(lo):
        return _SCATTERED
    moved = fat.moved.copy()
    moved[escaped] = True
    moved_rows = np.flatnonzero(moved)
    if len(moved_rows) > REBUILD_FRACTION * len(lo):
        return _REBUILD
    fat.lo[escaped] = lo[escaped] - fat.slack[escaped, None]
    fat.hi[escaped] = hi[escaped] + fat.slack[escaped, None]
    fat.moved = moved
    grid = fat.grid
    grid.low[:, escaped] = _cells(grid, fat.lo[escaped])
    grid.high[:, escaped] = _cells(grid, fat.hi[escaped])
    against_ordinary = _moved_against_unmoved_ordinary(fat, moved_rows)
    if against_ordinary is None:
        return _REBUILD
    kept = fat.pairs[~(moved[fat.pairs[:, 0]] | moved[fat.pairs[:, 1]])]
    # Moved boxes among themselves and with the large boxes, sizes mixed as they come.
    rows = np.union1d(moved_rows, fat.large)
    among = rows[overlapping_bounds(fat.lo[rows], fat.hi[rows])]
    among = among[moved[among[:, 0]] | moved[among[:, 1]]]
    fat.candidates = np.concatenate([kept, against_ordinary, among])
    return _KEPT


def _moved_against_unmoved_ordinary(fat: _Fat, moved_rows: np.ndarray) -> np.ndarray | None:
    """Pairs (i < j) of a moved box and an unmoved box of the grid whose fat boxes
    overlap; None when finding them would cost more than a rebuild."""
    grid = fat.grid
    low, high = grid.low[:, moved_rows], grid.high[:, moved_rows]
    # Every grid cell each moved box covers (a moved large box covers many).
    low, high = np.maximum(low, 0), np.minimum(high, grid.counts[:, None] - 1)
    sides = np.maximum(high - low + 1, 0)  # (3, m) cells per axis inside the grid
    cell_counts = sides.prod(axis=0)
    if int(cell_counts.sum()) > TESTS_PER_BOX * len(fat.lo):
        return None
    box, index = expand_runs(np.zeros(len(moved_rows), np.int64), cell_counts)
    offsets = np.empty((3, len(box)), np.int64)
    offsets[2] = index % sides[2, box]
    index //= sides[2, box]
    offsets[1] = index % sides[1, box]
    offsets[0] = index // sides[1, box]
    cells = low[:, box] + offsets
    queriers = moved_rows[box]
    first, length = fat.find_runs(grid.keys(cells))
    if int(length.sum()) > TESTS_PER_BOX * len(fat.lo):
        return None
    entry, position = expand_runs(first, length)
    found = keep_overlapping_once(
        queriers[entry],
        fat.owners[position],
        cells[:, entry] - grid.low[:, queriers[entry]],
        grid,
        np.ascontiguousarray(fat.lo.T),
        np.ascontiguousarray(fat.hi.T),
    )
    # Pairs of two moved boxes are found among the moved.
    return found[~(fat.moved[found[:, 0]] & fat.moved[found[:, 1]])]


def _cells(grid: GridLevel, points: np.ndarray) -> np.ndarray:
    """Grid cells (3, m) of points (m, 3); far outside the grid clipped to just outside,
    where no box is stored."""
    cells = np.floor((points.T - grid.origin[:, None]) / grid.size)
    return np.clip(cells, -1, grid.counts[:, None]).astype(np.int64)


def _inside(lo, hi, outer_lo, outer_hi) -> np.ndarray:
    """Whether each box (lo, hi) lies inside (outer_lo, outer_hi): (n,) bool."""
    inside = np.ones(len(lo), dtype=bool)
    for axis in range(3):
        inside &= lo[:, axis] >= outer_lo[:, axis]
        inside &= hi[:, axis] <= outer_hi[:, axis]
    return inside
