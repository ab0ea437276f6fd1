"""Exact signed distance between pairs of shapes, vectorised over pairs.

Every shape is a core (point, segment or oriented box) swept by a ball of radius r
(see `shapes.py`). For convex A, B: sd(A + ball(ra), B + ball(rb)) = sd(A, B) - ra - rb,
both outside (distance) and inside (penetration depth = minimum over directions of
the support function of A - B, which grows by ra + rb). The same direction is the
normal of both. So each kind pairing reduces to a core pairing:

point-point, point-segment, segment-segment   closed forms (Ericson, RTCD 5.1)
point-box                                     clamp in the box frame; inside: nearest face
segment-box                                   distance: minimum of a convex piecewise
                                              quadratic in the segment parameter;
                                              overlap: SAT on the 6 face normals of
                                              box - segment (3 faces, 3 edge crosses)
box-box                                       overlap: SAT on 15 axes (exact depth);
                                              separated: candidate closest points
                                              (alternating projections, the features
                                              on the SAT axis, vertex-to-box pairs),
                                              each kept only with a certificate of
                                              optimality; else exact closest features

Conventions: pairs (i, j); the normal points from i towards j (the direction to
push j out); `point_i` lies on shape i, `point_j` on shape j. For separated shapes
point_j - point_i = distance * normal; for overlapping ones they are the deepest
points of each shape along the normal.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import box_pairs
from .columns import cross_rows, dot_rows, einsum_rows, pick_rows, take_rows
from .constants import (
    CUBE_CORNER_SIGNS,
    KIND_BOX,
    KIND_CAPSULE,
    KIND_SPHERE,
    PAIR_CHUNK,
    PARALLEL_CROSS_NORM,
    TOUCH_TOLERANCE,
    TRUSTED_CROSS_NORM,
)
from .shapes import ShapeBatch, core_segments

# Which core each kind has; pairs are evaluated with the simpler core first.
CORE_POINT, CORE_SEGMENT, CORE_BOX = 0, 1, 2
_CORE_OF_KIND = np.array([CORE_BOX, CORE_POINT, CORE_SEGMENT], dtype=np.int8)
assert _CORE_OF_KIND[KIND_BOX] == CORE_BOX
assert _CORE_OF_KIND[KIND_SPHERE] == CORE_POINT
assert _CORE_OF_KIND[KIND_CAPSULE] == CORE_SEGMENT


# Box-box pairs run in chunks of this many: their path makes more numpy calls a chunk
# than the other pairings, and on dense pairs 8192 (or 6144) measured 10% faster than
# PAIR_CHUNK (4096); their temporaries outgrow the core's cache either way.
_BOX_BOX_CHUNK = 8192

# The 12 edges of a box with half-extents e: start = _EDGE_STARTS * e, direction =
# _EDGE_DIRECTIONS * e. Edge along axis k starts at -1 on k, at each of the four
# sign combinations on the other two axes.
_EDGE_STARTS = np.array(
    [
        [
            -1.0 if axis == k else (first if k == min(set(range(3)) - {axis}) else second)
            for k in range(3)
        ]
        for axis in range(3)
        for first in (-1.0, 1.0)
        for second in (-1.0, 1.0)
    ]
)
_EDGE_DIRECTIONS = np.repeat(2.0 * np.eye(3), 4, axis=0)


@dataclass(frozen=True)
class PairResult:
    """Signed distance of m pairs.

    distance: (m,) > 0 gap, < 0 minus the penetration depth, 0 touching
    normal: (m, 3) unit, from shape i towards shape j
    point_i, point_j: (m, 3) witness points on shape i and shape j
    """

    distance: np.ndarray
    normal: np.ndarray
    point_i: np.ndarray
    point_j: np.ndarray

    def take(self, rows) -> PairResult:
        """The results of the pairs at `rows` ((k,) int), in that order."""
        rows = np.asarray(rows)
        return PairResult(
            self.distance[rows],
            take_rows(self.normal, rows),
            take_rows(self.point_i, rows),
            take_rows(self.point_j, rows),
        )


def _norm(vectors: np.ndarray) -> np.ndarray:
    """Lengths of vectors along the last axis: (...)."""
    return np.sqrt(dot_rows(vectors, vectors))


def _to_local(rotations: np.ndarray, vectors: np.ndarray) -> np.ndarray:
    """R^T v for rotations (m, 3, 3) and vectors (m, 3) or (m, p, 3)."""
    # Written out: numpy's einsum and matmul are several times slower on 3x3 stacks.
    rows = rotations if vectors.ndim == 2 else rotations[:, None]
    return (
        rows[..., 0, :] * vectors[..., 0:1]
        + rows[..., 1, :] * vectors[..., 1:2]
        + rows[..., 2, :] * vectors[..., 2:3]
    )


def _to_world(rotations: np.ndarray, vectors: np.ndarray) -> np.ndarray:
    """R v for rotations (m, 3, 3) and vectors (m, 3)."""
    return (
        rotations[:, :, 0] * vectors[:, 0:1]
        + rotations[:, :, 1] * vectors[:, 1:2]
        + rotations[:, :, 2] * vectors[:, 2:3]
    )


def _safe_divide(numerator: np.ndarray, denominator: np.ndarray) -> np.ndarray:
    return np.divide(
        numerator,
        denominator,
        out=np.zeros(np.broadcast(numerator, denominator).shape),
        where=denominator > 0,
    )


def _unit_or_fallback(vectors: np.ndarray, fallback: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(unit vectors, lengths); rows of zero length take `fallback` (m, 3), unit."""
    lengths = _norm(vectors)
    units = np.where(lengths[:, None] > 0, _safe_divide(vectors, lengths[:, None]), fallback)
    return units, lengths


def _perpendicular(vectors: np.ndarray) -> np.ndarray:
    """A unit vector perpendicular to each row of (m, 3) (any, for zero rows: +x)."""
    helper = np.eye(3)[np.argmin(np.abs(vectors), axis=1)]
    perpendicular = cross_rows(vectors, helper)
    units, _ = _unit_or_fallback(perpendicular, np.array([[1.0, 0.0, 0.0]]))
    return units


def _support_box(centers, rotations, half_extents, directions) -> np.ndarray:
    """Point of each box furthest along `directions` (face/edge centre on ties).

    centers, directions: (m, 3); rotations: (m, 3, 3); half_extents: (m, 3)
    """
    local_sign = np.sign(_to_local(rotations, directions))
    return centers + _to_world(rotations, local_sign * half_extents)


# --- core pairings: each returns (core_distance, normal, x_core, y_core) ------------------------
# core_distance >= 0: y_core - x_core = core_distance * normal;
# core_distance < 0: x_core, y_core are the deepest core points along the normal.


def _touching(gaps: np.ndarray, x_core: np.ndarray, y_core: np.ndarray) -> np.ndarray:
    """Gaps too small to carry a direction: rounding noise on points that touch."""
    scale = 1.0 + np.maximum(np.abs(x_core).max(axis=-1), np.abs(y_core).max(axis=-1))
    return gaps <= TOUCH_TOLERANCE * scale


def _points_result(x_core, y_core, fallback_normal, magnitude_x=None, magnitude_y=None):
    """Core result of two closest points; touching points take the fallback normal.
    magnitude_x, magnitude_y: (m, 3) the coordinates the points were computed from, whose
    size their rounding follows (the points themselves where not given)."""
    normal, distance = _unit_or_fallback(y_core - x_core, fallback_normal)
    touching = _touching(
        distance,
        x_core if magnitude_x is None else magnitude_x,
        y_core if magnitude_y is None else magnitude_y,
    )
    normal = np.where(touching[:, None], fallback_normal, normal)
    return distance, normal, x_core, y_core


def _closest_segment_segment(p1, q1, p2, q2):
    """Closest points of segments p1-q1 and p2-q2 (Ericson, RTCD 5.1.9).

    returns: (point on the first (m, 3), point on the second (m, 3), their parameters
    s, t (m,) in [0, 1]). Degenerate segments are points; parallel segments give one
    of the closest pairs.
    """
    d1, d2, r = q1 - p1, q2 - p2, p1 - p2
    a, e, f = dot_rows(d1, d1), dot_rows(d2, d2), dot_rows(d2, r)
    c, b = dot_rows(d1, r), dot_rows(d1, d2)
    denominator = a * e - b * b
    # Nearly parallel: any s works as a start; t and then s are re-clamped below.
    skew = denominator > 1e-14 * a * e
    s = np.where(
        skew, np.clip(_safe_divide(b * f - c * e, np.where(skew, denominator, 0)), 0, 1), 0
    )
    t = _safe_divide(b * s + f, e)
    t_clamped = np.clip(t, 0, 1)
    s = np.where(t == t_clamped, s, np.clip(_safe_divide(b * t_clamped - c, a), 0, 1))
    # A point-like second segment: t = 0 and s from the first segment alone.
    s = np.where(e > 0, s, np.clip(_safe_divide(-c, a), 0, 1))
    # For (nearly) parallel segments that solve starts from an arbitrary s and can miss
    # the closest pair by up to the angle times the length; the closest pair of parallel
    # segments includes an end point of one of them, so those four candidates (each end
    # against the other segment) are tried too and the closest candidate wins.
    s_candidates = np.stack(
        [
            s,
            np.zeros_like(s),
            np.ones_like(s),
            np.clip(_safe_divide(-c, a), 0, 1),
            np.clip(_safe_divide(b - c, a), 0, 1),
        ],
        axis=1,
    )
    t_candidates = np.stack(
        [
            t_clamped,
            np.clip(_safe_divide(f, e), 0, 1),
            np.clip(_safe_divide(b + f, e), 0, 1),
            np.zeros_like(s),
            np.ones_like(s),
        ],
        axis=1,
    )
    x = p1[:, None, :] + s_candidates[..., None] * d1[:, None, :]
    y = p2[:, None, :] + t_candidates[..., None] * d2[:, None, :]
    best = np.argmin(dot_rows(y - x, y - x), axis=1)
    return (
        pick_rows(x, best),
        pick_rows(y, best),
        pick_rows(s_candidates, best),
        pick_rows(t_candidates, best),
    )


def _touching_segments_normal(sa0, sa1, sb0, sb1) -> np.ndarray:
    """Normal for touching segments: their common perpendicular where the cross product
    is trusted, else a perpendicular of the first (or, for a point, the second) turned
    to the side that needs the shorter push. Nearly parallel segments that touch at an
    end lie on one side of each other's line, up to their angle times their length; the
    other side would add that much to the depth."""
    d1, d2 = sa1 - sa0, sb1 - sb0
    cross = cross_rows(d1, d2)
    fallback = _perpendicular(np.where(dot_rows(d1, d1)[:, None] > 0, d1, d2))
    a0, a1 = dot_rows(sa0, fallback), dot_rows(sa1, fallback)
    b0, b1 = dot_rows(sb0, fallback), dot_rows(sb1, fallback)
    push_forward = np.maximum(a0, a1) - np.minimum(b0, b1)
    push_backward = np.maximum(b0, b1) - np.minimum(a0, a1)
    fallback *= np.where(push_backward < push_forward, -1.0, 1.0)[:, None]
    scale = _norm(d1) * _norm(d2)
    units, lengths = _unit_or_fallback(cross, fallback)
    return np.where((lengths > TRUSTED_CROSS_NORM * scale)[:, None], units, fallback)


def _point_point(pa, pb):
    return _points_result(pa, pb, np.broadcast_to([0.0, 0.0, 1.0], pa.shape))


def _segment_segment(sa0, sa1, sb0, sb1):
    first, second = sa1 - sa0, sb1 - sb0
    x_core, y_core, s, t = _closest_segment_segment(sa0, sa1, sb0, sb1)
    # The solve rounds relative to the segments' ends, not to the closest points: two
    # segments a million long meeting near the origin get points 1e-10 apart.
    magnitude_a = np.maximum(np.abs(sa0), np.abs(sa1))
    magnitude_b = np.maximum(np.abs(sb0), np.abs(sb1))
    distance, normal, x_core, y_core = _points_result(
        x_core, y_core, _touching_segments_normal(sa0, sa1, sb0, sb1), magnitude_a, magnitude_b
    )
    # The difference of two nearly touching points carries the solve's rounding in its
    # direction, which a long segment turns into a wrong depth. Where a closest point is
    # inside its segment the gap is perpendicular to that segment: for two non-parallel
    # segments that is their common perpendicular (the cross product, to full precision);
    # otherwise the rounding's component along the segment is removed.
    cross = cross_rows(first, second)
    lengths = _norm(cross)
    scale = _norm(first) * _norm(second)
    skew = lengths > TRUSTED_CROSS_NORM * scale
    inside_first = (s > 0) & (s < 1)
    inside_second = (t > 0) & (t < 1)
    both = np.flatnonzero(inside_first & inside_second & skew)
    if len(both):
        perpendicular = cross[both] / lengths[both, None]
        offset = dot_rows(sb0[both] - sa0[both], perpendicular)
        perpendicular *= np.where(offset < 0, -1.0, 1.0)[:, None]
        distance[both] = np.abs(offset)
        normal[both] = perpendicular
        y_core[both] = x_core[both] + distance[both, None] * perpendicular
    one = np.flatnonzero((inside_first | inside_second) & ~(inside_first & inside_second & skew))
    one = one[~_touching(distance[one], magnitude_a[one], magnitude_b[one])]
    if len(one):
        along = np.where(inside_first[one, None], first[one], second[one])
        along /= _norm(along)[:, None]
        gap = y_core[one] - x_core[one]
        gap -= dot_rows(gap, along)[:, None] * along
        gap_lengths = _norm(gap)
        usable = gap_lengths > 0
        normal[one[usable]] = gap[usable] / gap_lengths[usable, None]
    return distance, normal, x_core, y_core


def _point_box(points, centers, rotations, half_extents):
    local = _to_local(rotations, points - centers)
    clamped = np.clip(local, -half_extents, half_extents)
    outside = local - clamped
    gap = _norm(outside)
    # Inside: the nearest face; the normal pushes the box (shape j) off the point.
    face_gaps = half_extents - np.abs(local)
    face = np.argmin(face_gaps, axis=1)
    rows = np.arange(len(points))
    face_sign = np.where(local[rows, face] < 0, -1.0, 1.0)
    inside_normal_local = np.zeros_like(local)
    inside_normal_local[rows, face] = -face_sign
    depth = face_gaps[rows, face]
    face_point_local = local.copy()
    face_point_local[rows, face] = face_sign * half_extents[rows, face]
    separated = ~_touching(gap, local, clamped)
    normal_local = np.where(
        separated[:, None], _safe_divide(-outside, gap[:, None]), inside_normal_local
    )
    box_point_local = np.where(separated[:, None], clamped, face_point_local)
    return (
        np.where(separated, gap, -depth),
        _to_world(rotations, normal_local),
        points,
        centers + _to_world(rotations, box_point_local),
    )


def _segment_box_local(starts, directions, half_extents):
    """Closest points of segments to origin-centred axis-aligned boxes (box frame).

    starts, directions, half_extents: (..., 3); segment = starts + t directions, t in [0, 1]
    returns: (segment points, box points), each (..., 3)

    f(t) = |excess(t)|^2, excess = q - clamp(q), q = starts + t directions, is convex
    and C1 with a piecewise linear derivative whose kinks are where a coordinate
    crosses a face plane. Evaluating f' at t = 0, 1 and every kink brackets its zero
    between two neighbouring candidates, where f' is linear: one exact interpolation.
    """
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        kinks = np.concatenate(
            [(half_extents - starts) / directions, (-half_extents - starts) / directions], axis=-1
        )
    kinks = np.where(np.isfinite(kinks), np.clip(kinks, 0.0, 1.0), 0.0)
    shape = kinks.shape[:-1]
    candidates = np.concatenate([kinks, np.zeros((*shape, 1)), np.ones((*shape, 1))], axis=-1)
    q = starts[..., None, :] + candidates[..., :, None] * directions[..., None, :]
    extents = half_extents[..., None, :]
    slope = dot_rows(q - np.clip(q, -extents, extents), directions[..., None, :])
    rising = slope > 0
    low_index = np.argmax(np.where(rising, -np.inf, candidates), axis=-1)[..., None]
    high_index = np.argmin(np.where(rising, candidates, np.inf), axis=-1)[..., None]
    t_low = np.take_along_axis(candidates, low_index, -1)[..., 0]
    t_high = np.take_along_axis(candidates, high_index, -1)[..., 0]
    slope_low = np.take_along_axis(slope, low_index, -1)[..., 0]
    slope_high = np.take_along_axis(slope, high_index, -1)[..., 0]
    any_falling = (~rising).any(axis=-1)
    any_rising = rising.any(axis=-1)
    step = np.divide(
        -slope_low * (t_high - t_low),
        slope_high - slope_low,
        out=np.zeros(shape),
        where=any_falling & any_rising,
    )
    t = np.where(any_falling, np.where(any_rising, np.clip(t_low + step, t_low, t_high), 1.0), 0.0)
    segment_points = starts + t[..., None] * directions
    return segment_points, np.clip(segment_points, -half_extents, half_extents)


def _sat_depth(axes, axis_valid, radii_a, radii_b, center_offsets):
    """Best separating axis among candidates, all in one frame.

    axes: (m, p, 3) unit (invalid ones ignored); axis_valid: (m, p) bool
    radii_a, radii_b: (m, p) projected half-widths; center_offsets: (m, 3) = c_b - c_a
    returns: (separation (m,), oriented axis (m, 3)); separation > 0 is a gap along
    the axis, <= 0 is minus the overlap, the smallest push over the candidates.
    """
    projected = dot_rows(axes, center_offsets[:, None, :])
    separation = np.where(axis_valid, np.abs(projected) - radii_a - radii_b, -np.inf)
    best = np.argmax(separation, axis=1)
    sign = np.where(pick_rows(projected, best) < 0, -1.0, 1.0)
    return pick_rows(separation, best), pick_rows(axes, best) * sign[:, None]


def _segment_box(sa0, sa1, centers, rotations, half_extents):
    starts = _to_local(rotations, sa0 - centers)
    directions = _to_local(rotations, sa1 - sa0)
    segment_local, box_local = _segment_box_local(starts, directions, half_extents)
    gap_vector = box_local - segment_local
    gap = _norm(gap_vector)
    result_normal = _to_world(rotations, _safe_divide(gap_vector, gap[:, None]))
    x_core = centers + _to_world(rotations, segment_local)
    y_core = centers + _to_world(rotations, box_local)
    overlapping = _touching(gap, segment_local, box_local)
    if overlapping.any():
        # Face normals of (box - segment): the box axes and axis x segment direction.
        rows = np.flatnonzero(overlapping)
        m = len(rows)
        unit_direction, length = _unit_or_fallback(directions[rows], np.zeros((m, 3)))
        crosses = cross_rows(np.eye(3)[None, :, :], unit_direction[:, None, :])
        cross_lengths = _norm(crosses)
        axes = np.concatenate(
            [
                np.broadcast_to(np.eye(3), (m, 3, 3)),
                _safe_divide(crosses, cross_lengths[..., None]),
            ],
            axis=1,
        )
        valid = np.concatenate(
            [np.ones((m, 3), dtype=bool), cross_lengths > PARALLEL_CROSS_NORM], axis=1
        )
        # Segment (shape a) half-width on an axis: |axis . direction| / 2, centre at its midpoint.
        radii_segment = 0.5 * length[:, None] * np.abs(dot_rows(axes, unit_direction[:, None, :]))
        radii_box = dot_rows(np.abs(axes), half_extents[rows][:, None, :])
        midpoints = starts[rows] + 0.5 * directions[rows]
        separation, axis_local = _sat_depth(axes, valid, radii_segment, radii_box, -midpoints)
        normal = _to_world(rotations[rows], axis_local)
        result_normal[rows] = normal
        # Touching without overlap keeps its closest points; overlap takes the deepest ones.
        deep = separation <= 0
        rows, normal = rows[deep], normal[deep]
        ends_world = np.stack([sa0[rows], sa1[rows]], axis=1)
        deepest_end = np.argmax(dot_rows(ends_world, normal[:, None, :]), axis=1)
        gap[rows] = separation[deep]
        x_core[rows] = pick_rows(ends_world, deepest_end)
        y_core[rows] = _support_box(centers[rows], rotations[rows], half_extents[rows], -normal)
    return gap, result_normal, x_core, y_core


def _box_box_closest(ca, ra, ea, cb, rb, eb):
    """Exact closest points of separated boxes: (distance, x on a, y on b).

    A closest pair always has a point on an edge of a, or a vertex of b over a face
    of a (then sliding along parallel features reaches an edge or a vertex), so
    min(12 edges of a vs box b, 8 vertices of b vs box a) is exact.
    """
    m = len(ca)
    # Edges of a, in b's frame.
    relative = einsum_rows("mji,mjk->mik", rb, ra)  # a's axes in b's frame (columns)
    offset_ab = _to_local(rb, ca - cb)
    edge_starts = offset_ab[:, None, :] + einsum_rows(
        "mkl,mel->mek", relative, _EDGE_STARTS * ea[:, None, :]
    )
    edge_dirs = einsum_rows("mkl,mel->mek", relative, _EDGE_DIRECTIONS * ea[:, None, :])
    edge_points, box_points = _segment_box_local(
        edge_starts, edge_dirs, np.broadcast_to(eb[:, None, :], (m, 12, 3))
    )
    edge_gaps = _norm(box_points - edge_points)
    best_edge = np.argmin(edge_gaps, axis=1)
    edge_gap = pick_rows(edge_gaps, best_edge)
    edge_x = cb + _to_world(rb, pick_rows(edge_points, best_edge))
    edge_y = cb + _to_world(rb, pick_rows(box_points, best_edge))
    # Vertices of b, in a's frame.
    offset_ba = _to_local(ra, cb - ca)
    vertices = offset_ba[:, None, :] + einsum_rows(
        "mkl,mvl->mvk", np.transpose(relative, (0, 2, 1)), CUBE_CORNER_SIGNS * eb[:, None, :]
    )
    clamped = np.clip(vertices, -ea[:, None, :], ea[:, None, :])
    vertex_gaps = _norm(vertices - clamped)
    best_vertex = np.argmin(vertex_gaps, axis=1)
    vertex_gap = pick_rows(vertex_gaps, best_vertex)
    vertex_x = ca + _to_world(ra, pick_rows(clamped, best_vertex))
    vertex_y = ca + _to_world(ra, pick_rows(vertices, best_vertex))
    use_edge = edge_gap <= vertex_gap
    distance = np.where(use_edge, edge_gap, vertex_gap)
    x = np.where(use_edge[:, None], edge_x, vertex_x)
    y = np.where(use_edge[:, None], edge_y, vertex_y)
    return distance, x, y


def _box_box(centers_a, axes_a, half_a, centers_b, axes_b, half_b):
    """Box-box core result from component-major input ((3, m) vectors, (3, 3, m) axes).

    Pairs far apart for their size are settled by one certified round of alternating
    projections; the rest by SAT and certified closest features (`_box_box_by_sat`).
    Everything runs in a's frame; results turn to world coordinates once at the end.
    """
    relative, offset = box_pairs.relative_frame(axes_a, centers_a, axes_b, centers_b)
    pairs = (relative, offset, half_a, half_b)
    distance, x_local, y_local, certified = box_pairs.closest_by_projections(*pairs, steps=1)
    certified &= ~_touching_columns(
        distance,
        centers_a + box_pairs.apply(axes_a, x_local),
        centers_a + box_pairs.apply(axes_a, y_local),
    )
    # A subset copies 18 numbers a pair: worth it only when most pairs are settled.
    rows = np.flatnonzero(~certified)
    subset = _columns(rows, *pairs) if len(rows) < len(distance) // 2 else pairs
    if subset is pairs:
        rows = np.arange(len(distance))
    axis = np.zeros_like(x_local)
    exhaustive = _box_box_by_sat(
        rows, subset, (centers_a, axes_a), (distance, x_local, y_local, certified, axis)
    )
    x_core = centers_a + box_pairs.apply(axes_a, x_local)
    y_core = centers_a + box_pairs.apply(axes_a, y_local)
    directed = np.flatnonzero(certified & ~_touching_columns(distance, x_core, y_core))
    axis[:, directed] = (y_local[:, directed] - x_local[:, directed]) / distance[directed]
    normal = box_pairs.apply(axes_a, axis).T
    x_core, y_core = x_core.T, y_core.T
    if len(exhaustive):
        exact, x_exact, y_exact = _box_box_closest(
            centers_a[:, exhaustive].T,
            axes_a[:, :, exhaustive].transpose(2, 0, 1),
            half_a[:, exhaustive].T,
            centers_b[:, exhaustive].T,
            axes_b[:, :, exhaustive].transpose(2, 0, 1),
            half_b[:, exhaustive].T,
        )
        distance[exhaustive], x_core[exhaustive], y_core[exhaustive] = exact, x_exact, y_exact
        directed = ~_touching(exact, x_exact, y_exact)
        normal[exhaustive[directed]] = (y_exact - x_exact)[directed] / exact[directed, None]
    return distance, normal, x_core, y_core


def _touching_columns(gaps, x_core, y_core) -> np.ndarray:
    """`_touching` of component-major points x_core, y_core (3, m)."""
    x_size, y_size = np.abs(x_core), np.abs(y_core)
    largest = np.maximum(np.maximum(x_size[0], x_size[1]), np.maximum(x_size[2], y_size[0]))
    largest = np.maximum(largest, np.maximum(y_size[1], y_size[2]))
    return gaps <= TOUCH_TOLERANCE * (1.0 + largest)


def _box_box_by_sat(rows, pairs, frame_a, results):
    """SAT and certified closest features for the box-box pairs at `rows` that are not
    certified yet.

    rows: (k,) indices into the m pairs; pairs: (relative (3, 3, k), offset, half_a,
    half_b (3, k)) of those rows (`box_pairs.relative_frame`); frame_a: (centers_a
    (3, m), axes_a (3, 3, m)); results = (distance (m,), x_local, y_local (3, m) in a's
    frame, certified (m,) bool, axis (3, m)) updated in place: overlapping and touching
    pairs get their SAT depth, deepest points and axis, separated ones certified closest
    points. returns: the separated rows left uncertified (ties, rounding), for the exact
    closest-feature search.

    SAT on 15 axes first: it gives overlapping pairs their exact depth and axis. Separated
    pairs try certified candidates, cheapest first: the features on the SAT axis (a face
    over a vertex, or two crossing edges), then the 16 vertex-to-box pairs.
    """
    relative, offset, half_a, half_b = pairs
    distance, x_local, y_local, certified, axis_out = results
    best, separation, axis = box_pairs.best_axis(
        relative, offset, box_pairs.separations(relative, offset, half_a, half_b)
    )
    open_rows = ~certified[rows]
    axis_out[:, rows] = axis
    # Overlapping or touching: the SAT axis is the normal, the supports the deepest points.
    deep = np.flatnonzero(open_rows & (separation <= 0))
    distance[rows[deep]] = separation[deep]
    x_local[:, rows[deep]] = np.sign(axis[:, deep]) * half_a[:, deep]
    y_local[:, rows[deep]] = box_pairs.support_b(
        *_columns(deep, relative, offset, half_b), best[deep], axis[:, deep]
    )
    separated = np.flatnonzero(open_rows & (separation > 0))
    local = _columns(separated, *pairs)
    found = _keep_certified(
        rows[separated],
        local,
        box_pairs.closest_on_sat_features(*local, best[separated], axis[:, separated]),
        results,
    )
    separated = separated[~found]
    local = _columns(separated, *pairs)
    found = _keep_certified(rows[separated], local, box_pairs.closest_vertex_pairs(*local), results)
    # Skipped near-parallel cross axes may show a tiny gap as contact (see
    # box_pairs.separations): such pairs keep a certified gap of alternating projections.
    slack = 2.0 * PARALLEL_CROSS_NORM * np.maximum(half_a.max(axis=0), half_b.max(axis=0))
    near = deep[separation[deep] > -slack[deep]]
    if len(near):
        _near_contact_gaps(rows[near], _columns(near, *pairs), frame_a, results)
    return rows[separated[~found]]


def _columns(rows, *arrays):
    """The component-major arrays ((..., m): (3, 3, m), (3, m), (m,)) at `rows` ((k,) int)."""
    return tuple(np.take(array, rows, axis=-1) for array in arrays)


def _keep_certified(rows, pairs, candidates, results) -> np.ndarray:
    """Write the certified ones of candidate closest points at `rows` into `results`.

    rows: (k,) indices into the m pairs; pairs: (relative, offset, half_a, half_b) of
    those rows; candidates: (x on a, y on b), each (3, k) in a's frame; results:
    (distance (m,), x_local, y_local (3, m), certified (m,), ...) updated in place.
    returns: (k,) bool, which candidates were certified
    """
    x_found, y_found = candidates
    gap, found = box_pairs.gap_certificates(*pairs, x_found, y_found)
    _write_found(rows, found, gap, x_found, y_found, results)
    return found


def _write_found(rows, found, gap, x, y, results) -> None:
    """Write the gaps (k,) and closest points x, y (3, k) of the `found` ((k,) bool) of
    `rows` into `results` (see `_keep_certified`) and mark them certified."""
    distance, x_local, y_local, certified = results[:4]
    kept = rows[found]
    distance[kept] = gap[found]
    x_local[:, kept] = x[:, found]
    y_local[:, kept] = y[:, found]
    certified[kept] = True


def _near_contact_gaps(rows, pairs, frame_a, results):
    """Alternating projections on pairs that SAT calls (nearly) touching: a certified gap
    too large to be rounding on touching boxes replaces the SAT result.

    rows: (k,) indices into the m pairs; pairs: (relative, offset, half_a, half_b) of
    those rows; frame_a: (centers_a (3, m), axes_a (3, 3, m)); results: (distance (m,),
    x_local, y_local (3, m), certified (m,), ...) updated in place.
    """
    gap, x, y, found = box_pairs.closest_by_projections(*pairs)
    again = np.flatnonzero(~found & (gap > 0))
    if len(again):
        more = box_pairs.closest_by_projections(
            *_columns(again, *pairs), start=y[:, again], steps=box_pairs.MORE_PROJECTION_STEPS
        )
        gap[again], x[:, again], y[:, again], found[again] = more
    centers, axes = _columns(rows, *frame_a)
    found &= ~_touching_columns(
        gap, centers + box_pairs.apply(axes, x), centers + box_pairs.apply(axes, y)
    )
    _write_found(rows, found, gap, x, y, results)


@dataclass(frozen=True)
class _Columns:
    """Component-major copies of a batch's arrays, made once per call: gathering pair
    rows from them gives contiguous (3, m) and (3, 3, m) arrays for the box maths."""

    # (15, n): rows 0-2 the centres, 3-11 the axes ([component, axis] flattened), 12-14
    # the half-extents, so that one gather per side fetches all of a pair's box.
    packed: np.ndarray

    @classmethod
    def of(cls, batch: ShapeBatch) -> _Columns:
        return cls(
            np.concatenate(
                [
                    batch.centers.T,
                    batch.rotations.transpose(1, 2, 0).reshape(9, -1),
                    batch.half_extents.T,
                ]
            )
        )

    @property
    def centers(self) -> np.ndarray:
        """(3, n)"""
        return self.packed[0:3]

    def take(self, index: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """centers (3, m), axes (3, 3, m), half_extents (3, m) of the shapes at index (m,)."""
        rows = np.take(self.packed, index, axis=1)
        return rows[0:3], rows[3:12].reshape(3, 3, -1), rows[12:15]


def _core_pairing(core_a: int, core_b: int, batch: ShapeBatch, columns: _Columns, a, b):
    """Core distance for pairs whose cores are (core_a, core_b), core_a <= core_b."""
    if core_a == CORE_BOX:
        return _box_box(*columns.take(a), *columns.take(b))
    centers_a, centers_b = take_rows(batch.centers, a), take_rows(batch.centers, b)
    if core_a == CORE_POINT and core_b == CORE_POINT:
        return _point_point(centers_a, centers_b)
    frames_b, half_b = take_rows(batch.rotations, b), take_rows(batch.half_extents, b)
    if core_b == CORE_BOX and core_a == CORE_POINT:
        return _point_box(centers_a, centers_b, frames_b, half_b)
    frames_a, half_a = take_rows(batch.rotations, a), take_rows(batch.half_extents, a)
    segment_a = core_segments(centers_a, frames_a, half_a)
    if core_b == CORE_SEGMENT:
        return _segment_segment(*segment_a, *core_segments(centers_b, frames_b, half_b))
    return _segment_box(*segment_a, centers_b, frames_b, half_b)


def _check_pairs(batch: ShapeBatch, i, j) -> tuple[np.ndarray, np.ndarray]:
    i = np.asarray(i)
    j = np.asarray(j)
    if i.shape != j.shape or i.ndim != 1:
        raise ValueError(
            f"i and j must be (m,) arrays of equal length, got {i.shape} and {j.shape}"
        )
    if i.size and not (np.issubdtype(i.dtype, np.integer) and np.issubdtype(j.dtype, np.integer)):
        raise ValueError("i and j must be integer index arrays")
    i = i.astype(np.int64, copy=False)
    j = j.astype(np.int64, copy=False)
    n = len(batch)
    for name, index in (("i", i), ("j", j)):
        bad = (index < 0) | (index >= n)
        if bad.any():
            raise ValueError(
                f"{name}[{int(np.flatnonzero(bad)[0])}] is out of range for {n} shapes"
            )
    return i, j


def _pair_distance(batch: ShapeBatch, columns: _Columns, i, j) -> PairResult:
    """pair_distance on checked indices. Pairs are grouped by core pairing and each
    group is processed in chunks of PAIR_CHUNK (box-box: _BOX_BOX_CHUNK): full chunks of
    one pairing keep the temporaries in cache and the per-call overhead low."""
    m = len(i)
    if m == 0:
        return PairResult(np.zeros(0), np.zeros((0, 3)), np.zeros((0, 3)), np.zeros((0, 3)))
    core_i = _CORE_OF_KIND[np.take(batch.kinds, i)]
    core_j = _CORE_OF_KIND[np.take(batch.kinds, j)]
    swapped = core_i > core_j
    a = np.where(swapped, j, i)
    b = np.where(swapped, i, j)
    pairing = np.minimum(core_i, core_j) * 3 + np.maximum(core_i, core_j)
    # A point is a segment of length zero (its `core_segments` are one point twice): point
    # and segment pairs join the segment pairs, one closest-point and near-contact
    # normal path and one group fewer to process.
    pairing[pairing == CORE_POINT * 3 + CORE_SEGMENT] = CORE_SEGMENT * 3 + CORE_SEGMENT
    # Rows sorted by pairing (no sort when there is one), so that each chunk is a slice.
    order = None if (pairing == pairing[0]).all() else np.argsort(pairing, kind="stable")
    if order is not None:
        a, b, pairing = a[order], b[order], pairing[order]
    core_distance = np.empty(m)
    normal = np.empty((m, 3))
    x_core = np.empty((m, 3))
    y_core = np.empty((m, 3))
    group_starts = np.flatnonzero(np.diff(pairing, prepend=-1))
    for group_start, group_end in zip(group_starts, [*group_starts[1:], m], strict=True):
        code = int(pairing[group_start])
        chunk = _BOX_BOX_CHUNK if code == CORE_BOX * 3 + CORE_BOX else PAIR_CHUNK
        for start in range(group_start, group_end, chunk):
            rows = slice(start, min(start + chunk, group_end))
            result = _core_pairing(*divmod(code, 3), batch, columns, a[rows], b[rows])
            core_distance[rows], normal[rows], x_core[rows], y_core[rows] = result
    if order is not None:
        unsorted = np.empty_like(order)
        unsorted[order] = np.arange(m)
        core_distance, normal = core_distance[unsorted], normal[unsorted]
        x_core, y_core = x_core[unsorted], y_core[unsorted]
    # Back to (i, j) order: swapping the roles flips the normal and the witnesses.
    if swapped.any():
        normal[swapped] *= -1.0
        x_core[swapped], y_core[swapped] = y_core[swapped], x_core[swapped]
    if not batch.radii.any():
        # No shape has a radius (boxes, points): the radii would add zeros.
        return PairResult(distance=core_distance, normal=normal, point_i=x_core, point_j=y_core)
    radius_i = np.take(batch.radii, i)
    radius_j = np.take(batch.radii, j)
    # In place: at a million pairs, fresh output arrays cost more in page faults than maths.
    core_distance -= radius_i
    core_distance -= radius_j
    x_core += radius_i[:, None] * normal
    y_core -= radius_j[:, None] * normal
    return PairResult(distance=core_distance, normal=normal, point_i=x_core, point_j=y_core)


def pair_distance(batch: ShapeBatch, i, j) -> PairResult:
    """Exact signed distance, normal and witness points of the pairs (i[k], j[k]).

    batch: n shapes; i, j: (m,) int indices into batch
    returns: PairResult with (m,) distance and (m, 3) normal, point_i, point_j
    """
    i, j = _check_pairs(batch, i, j)
    return _pair_distance(batch, _Columns.of(batch), i, j)


def pair_intersects(batch: ShapeBatch, i, j, margin: float = 0.0) -> np.ndarray:
    """Whether each pair's signed distance is <= margin, deciding cheaply where it can.

    batch: n shapes; i, j: (m,) int indices; margin: float (may be negative: then
    only pairs penetrating deeper than -margin count)
    returns: (m,) bool

    Bounding spheres reject far pairs; box-box pairs are decided by SAT alone except
    those separated by less than the margin; the rest use the exact distance.
    """
    i, j = _check_pairs(batch, i, j)
    margin = check_margin(margin)
    columns = _Columns.of(batch)
    undecided, box_rows, separation = _screen(batch, columns, i, j, margin)
    hits = np.zeros(len(i), dtype=bool)
    # SAT is exact for overlap and a lower bound of a gap.
    hits[box_rows] = (separation <= 0) & (separation <= margin)
    exact_rows = np.concatenate([undecided, box_rows[(separation > 0) & (separation <= margin)]])
    if len(exact_rows):
        result = _pair_distance(batch, columns, i[exact_rows], j[exact_rows])
        hits[exact_rows] = result.distance <= margin
    return hits


def distances_within(batch: ShapeBatch, i, j, margin: float = 0.0):
    """The pairs whose signed distance is <= margin, with their distances.

    batch: n shapes; i, j: (m,) int indices; margin: float
    returns: (rows (k,) int64 into i/j, PairResult of those k pairs)

    Like pair_intersects followed by pair_distance on the hits, without computing the
    hits twice: pairs the cheap tests reject get no exact distance.
    """
    i, j = _check_pairs(batch, i, j)
    margin = check_margin(margin)
    columns = _Columns.of(batch)
    undecided, box_rows, separation = _screen(batch, columns, i, j, margin)
    rows = np.sort(np.concatenate([undecided, box_rows[separation <= margin]]))
    result = _pair_distance(batch, columns, i[rows], j[rows])
    keep = np.flatnonzero(result.distance <= margin)
    return rows[keep], result.take(keep)


def check_margin(margin) -> float:
    """margin as a float; ValueError unless finite."""
    margin = float(margin)
    if not np.isfinite(margin):
        raise ValueError(f"margin must be finite, got {margin}")
    return margin


def _screen(batch: ShapeBatch, columns: _Columns, i, j, margin: float):
    """Cheap tests that can rule pairs out: bounding spheres for all, SAT for boxes.

    returns: (rows that passed and need an exact test (u,), box-box rows that passed
    the spheres (b,), their SAT separation (b,): a lower bound of the gap, and minus
    the exact depth where <= 0)
    """
    bounding_radii = _norm(batch.half_extents) + batch.radii
    gap = np.take(columns.centers, j, axis=1) - np.take(columns.centers, i, axis=1)
    center_distance = np.sqrt((gap * gap).sum(axis=0))
    near = center_distance - np.take(bounding_radii, i) - np.take(bounding_radii, j) <= margin
    both_boxes = (np.take(batch.kinds, i) == KIND_BOX) & (np.take(batch.kinds, j) == KIND_BOX)
    box_rows = np.flatnonzero(near & both_boxes)
    separation = np.empty(len(box_rows))
    for start in range(0, len(box_rows), PAIR_CHUNK):
        rows = box_rows[start : start + PAIR_CHUNK]
        centers_a, axes_a, half_a = columns.take(i[rows])
        centers_b, axes_b, half_b = columns.take(j[rows])
        relative, offset = box_pairs.relative_frame(axes_a, centers_a, axes_b, centers_b)
        separation[start : start + PAIR_CHUNK] = box_pairs.separations(
            relative, offset, half_a, half_b
        ).max(axis=0)
    return np.flatnonzero(near & ~both_boxes), box_rows, separation
