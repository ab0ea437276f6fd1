"""Broad phase: every pair of shapes within a margin, and no other.

Bounds grown by half the margin each go through the box grid (`grid.py`), or through a
`CoherentBounds` (`coherent.py`) that keeps the grid's work between calls on shapes
moving a little; the narrow phase (`narrow.py`) keeps the pairs within the margin.
"""

from __future__ import annotations

import numpy as np

from .coherent import CoherentBounds
from .grid import overlapping_among, overlapping_bounds
from .narrow import PairResult, check_margin, distances_within, pair_intersects
from .shapes import ShapeBatch


def find_pairs(
    batch: ShapeBatch, margin: float = 0.0, coherent: CoherentBounds | None = None
) -> np.ndarray:
    """Every pair of shapes whose signed distance is <= margin, and no other.

    batch: n shapes; margin: float (negative: only pairs penetrating deeper than -margin)
    coherent: as in find_contacts, for successive calls on shapes moving a little
    returns: (k, 2) int64, i < j, sorted lexicographically
    """
    candidates = _candidates(batch, margin, coherent)
    return _sorted(candidates[pair_intersects(batch, candidates[:, 0], candidates[:, 1], margin)])


def find_contacts(
    batch: ShapeBatch,
    margin: float = 0.0,
    coherent: CoherentBounds | None = None,
    candidates: np.ndarray | None = None,
) -> tuple[np.ndarray, PairResult]:
    """find_pairs and the pair_distance of each pair found, computed once.

    coherent: for successive calls on the same n shapes moving a little (live updates),
        a `CoherentBounds` that keeps the broad phase's work from call to call; the
        result is the same with or without it
    candidates: (c, 2) pairs i < j, no pair twice, holding every pair whose bounds,
        grown by half the margin each, overlap (e.g. `continuous.swept_candidates` of a
        motion ending in `batch`): the broad phase only tests their bounds (the result is
        the same; `coherent` is then not used)
    returns: (pairs (k, 2) as find_pairs, PairResult of those pairs in that order)
    """
    if candidates is None:
        candidates = _candidates(batch, margin, coherent)
    else:
        lo, hi = batch.aabbs()
        growth = 0.5 * max(check_margin(margin), 0.0)
        candidates = overlapping_among(lo - growth, hi + growth, candidates)
    rows, result = distances_within(batch, candidates[:, 0], candidates[:, 1], margin)
    pairs = candidates[rows]
    order = np.lexsort((pairs[:, 1], pairs[:, 0]))
    return pairs[order], result.take(order)


def _candidates(
    batch: ShapeBatch, margin: float, coherent: CoherentBounds | None = None
) -> np.ndarray:
    """Pairs whose bounds, grown by half the margin each, overlap: (c, 2), i < j."""
    lo, hi = batch.aabbs()
    growth = 0.5 * max(check_margin(margin), 0.0)
    if coherent is not None:
        return coherent.overlapping(lo - growth, hi + growth)
    return overlapping_bounds(lo - growth, hi + growth)


def _sorted(pairs: np.ndarray) -> np.ndarray:
    return pairs[np.lexsort((pairs[:, 1], pairs[:, 0]))]
