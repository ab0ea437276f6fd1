"""Broad phase: every pair of shapes within a margin, and no other.

Bounds grown by half the margin each go through the box grid (`grid.py`), or through a
`CoherentBounds` (`coherent.py`) that keeps the grid's work between calls on shapes
moving a little; the narrow phase (`narrow.py`) keeps the pairs within the margin, or a
`KeptContacts` gives again what it found for pairs of shapes that did not change.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .coherent import CoherentBounds
from .columns import concatenate_fields, either_flagged, pair_order, rows_as_bytes
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
    candidates = _candidates(*_grown_bounds(batch, check_margin(margin)), coherent)
    return _sorted(candidates[pair_intersects(batch, candidates[:, 0], candidates[:, 1], margin)])


def find_contacts(
    batch: ShapeBatch,
    margin: float = 0.0,
    coherent: CoherentBounds | None = None,
    candidates: np.ndarray | None = None,
    kept: KeptContacts | None = None,
) -> tuple[np.ndarray, PairResult]:
    """find_pairs and the pair_distance of each pair found, computed once.

    coherent: for successive calls on the same n shapes moving a little (live updates),
        a `CoherentBounds` that keeps the broad phase's work from call to call; the
        result is the same with or without it
    candidates: (c, 2) pairs i < j, no pair twice, holding every pair whose bounds,
        grown by half the margin each, overlap (e.g. `continuous.swept_candidates` of a
        motion ending in `batch`): the broad phase only tests their bounds (the result is
        the same; `coherent` is then not used)
    kept: for successive calls where most shapes do not change (live edits), a
        `KeptContacts` that gives again the narrow phase's answer for candidate pairs
        of unchanged shapes; the result is the same bit for bit with or without it
    returns: (pairs (k, 2) as find_pairs, PairResult of those pairs in that order)
    """
    margin = check_margin(margin)
    lo, hi = _grown_bounds(batch, margin)
    if kept is not None:
        # Candidates maybe beyond the bounds: KeptContacts tests those it measures.
        if candidates is None:
            candidates = _candidates(lo, hi, coherent, exact=False)
        return kept.contacts(batch, candidates, margin, (lo, hi))
    if candidates is None:
        candidates = _candidates(lo, hi, coherent)
    else:
        candidates = overlapping_among(lo, hi, candidates)
    rows, result = distances_within(batch, candidates[:, 0], candidates[:, 1], margin)
    return _in_order(candidates[rows], result)


def _in_order(pairs: np.ndarray, result: PairResult) -> tuple[np.ndarray, PairResult]:
    """Pairs (k, 2) sorted lexicographically, with their results."""
    order = pair_order(pairs)
    return pairs[order], result.take(order)


@dataclass
class KeptContacts:
    """What one `find_contacts` call found, kept for the next call on as many shapes: a
    pair of shapes that are both the same bit for bit (kind, centre, rotation, half
    extents, radius), under the same margin, has the same bounds, so it is a candidate
    again exactly when it was, and gets the same answer from the narrow phase, which
    computes each pair alone. So only the candidates with a changed shape go to the
    narrow phase; the pairs found last time between unchanged shapes are found again
    as they were. For live edits: dragging one object of a 20,000-element building
    changes the few pairs it is in, not the tens of thousands of resting ones.

    shapes: (n, 17) each shape's parameters as the last call saw them (`_shape_rows`)
    margin: the last call's
    pairs: (k, 2), result: `PairResult`: what the last call returned
    changed: (n,) bool, the shapes whose pairs the last call sent to the narrow phase
        (all of them on a first call, under a new margin or for another count)
    """

    shapes: np.ndarray | None = None
    margin: float = 0.0
    changed: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=bool))
    pairs: np.ndarray = field(default_factory=lambda: np.zeros((0, 2), dtype=np.int64))
    result: PairResult | None = None

    def contacts(self, batch: ShapeBatch, candidates: np.ndarray, margin: float, bounds):
        """`find_contacts`' answer from candidate pairs (c, 2), i < j, of `batch`, which
        hold every pair whose `bounds` (lo, hi (n, 3), grown by half the margin) overlap:
        the pairs kept from the last call where both shapes are unchanged, and the
        narrow phase's answers for the candidates with a changed shape whose bounds
        overlap (all of them on a first call, under a new margin or for another count);
        kept for the next call."""
        shapes = _shape_rows(batch)
        if self.result is None or self.shapes.shape != shapes.shape or self.margin != margin:
            changed = np.ones(len(shapes), dtype=bool)
        else:
            changed = rows_as_bytes(self.shapes) != rows_as_bytes(shapes)
        fresh = candidates if changed.all() else candidates[either_flagged(changed, candidates)]
        fresh = overlapping_among(*bounds, fresh)
        rows, result = distances_within(batch, fresh[:, 0], fresh[:, 1], margin)
        pairs = fresh[rows]
        if not changed.all():
            kept = np.flatnonzero(~either_flagged(changed, self.pairs))
            pairs = np.concatenate([self.pairs[kept], pairs])
            result = concatenate_fields(PairResult, [self.result.take(kept), result])
        pairs, result = _in_order(pairs, result)
        self.shapes, self.margin, self.pairs, self.result = shapes, margin, pairs, result
        self.changed = changed
        return pairs, result


def _shape_rows(batch: ShapeBatch) -> np.ndarray:
    """Each shape's parameters in one row (n, 17): kind, centre, rotation, half extents
    and radius."""
    return np.concatenate(
        [
            batch.kinds[:, None].astype(np.float64),
            batch.centers,
            batch.rotations.reshape(-1, 9),
            batch.half_extents,
            batch.radii[:, None],
        ],
        axis=1,
    )


def _grown_bounds(batch: ShapeBatch, margin: float) -> tuple[np.ndarray, np.ndarray]:
    """The shapes' bounds (n, 3) each, grown by half the margin (not shrunk by one below
    0): two shapes within the margin have bounds that overlap."""
    lo, hi = batch.aabbs()
    growth = 0.5 * max(margin, 0.0)
    return lo - growth, hi + growth


def _candidates(
    lo: np.ndarray, hi: np.ndarray, coherent: CoherentBounds | None = None, exact: bool = True
) -> np.ndarray:
    """Pairs of bounds lo, hi (n, 3) that overlap: (c, 2), i < j; with `exact` False
    maybe others too (see `CoherentBounds.overlapping`)."""
    if coherent is not None:
        return coherent.overlapping(lo, hi, exact)
    return overlapping_bounds(lo, hi)


def _sorted(pairs: np.ndarray) -> np.ndarray:
    return pairs[pair_order(pairs)]
