"""Proxy fitting: boxes, spheres and capsules that enclose a vertex array.

Everything here is numpy only. A fit is made once per geometry in the object's own
(stretched) space; `place.py` splits an object's linear map into the rigid part and the
stretch the points are fitted in, and places the fits in the world.

Each fit uses the layout of `ShapeBatch`: a centre, a rotation whose columns are the
shape's axes (a capsule's axis is column 2), half-extents (a capsule's are
(0, 0, half_length), a sphere's are zero) and a radius (a box's is zero); `stack_fits`
stacks fits into one `ShapeBatch`.

Fitting is fast for many meshes at once: `fit_shapes` takes a list of vertex arrays, and
the searches run on each one's candidate points (extreme along 256 fixed directions)
side by side over groups of meshes, so numpy's cost per call is shared, and the groups
on several threads; every final extent and radius is measured over all points, so every
fit encloses every vertex.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from itertools import combinations

import numpy as np

from .columns import (
    cross_rows,
    cubed,
    dot_rows,
    first_distinct,
    pick_rows,
    reduce_short_axis,
    take_rows,
)
from .constants import COPY_TOLERANCE, CUBE_CORNER_SIGNS, KIND_BOX, KIND_CAPSULE, KIND_SPHERE
from .grid import ranks_in_runs
from .shapes import ShapeBatch, frames_from_axes
from .threads import map_in_threads, worker_count

# Fixed directions that select the candidate hull points a search works on: the
# points extreme along any of them include every vertex that bounds a box or sphere
# found by the search, up to the angular spacing of the set.
_SEARCH_DIRECTION_COUNT = 256
# The orientation search halves its step from 45 degrees this many times (last step
# about 0.005 degrees; 6 more levels changed box volumes by at most 0.03% on mesh-like
# clouds, and cost 5% of the fitting time).
_ROTATION_SEARCH_LEVELS = 14
# The box search repeats a step at most this many times: on nearly round shapes it can
# otherwise creep around the round axis for thousands of steps, each shrinking the box
# by rounding-sized amounts.
_STEP_REPEATS = 16
# In the box search, a box thinner than this fraction of its largest extent counts as
# this thin, so that flat shapes are compared by area.
_FLAT_EXTENT_RATIO = 1e-6
# Extreme points along the 26 directions of a cube's faces, corners and edges (in that
# order) in the principal frame steer the sampled orientations; triangles through the
# points extreme along the first _HULL_FRAME_POINTS (faces and corners) give candidate
# box faces.
_HULL_FRAME_POINTS = 14
_CUBE_DIRECTIONS = np.array(
    sorted(
        (
            (x, y, z)
            for x in (-1, 0, 1)
            for y in (-1, 0, 1)
            for z in (-1, 0, 1)
            if (x, y, z) != (0, 0, 0)
        ),
        key=lambda direction: {1: 0, 3: 1, 2: 2}[sum(map(abs, direction))],
    ),
    dtype=np.float64,
)
_FACE_TRIANGLES = np.array(list(combinations(range(_HULL_FRAME_POINTS), 3)), dtype=np.int64)
# Orientations sampled evenly (a fixed pseudo-random set, so fits are reproducible):
# the best few around the extreme points start the local search, which then need not
# cross from one basin to another.
_SAMPLED_STARTS = 4
# The starts are picked for this many point sets at a time.
_STARTS_CHUNK = 16


def _sampled_rotations(count: int) -> np.ndarray:
    """(count, 3, 3) rotations from uniformly distributed unit quaternions."""
    w, x, y, z = np.random.default_rng(20261123).normal(size=(4, count))
    norm = np.sqrt(w * w + x * x + y * y + z * z)
    w, x, y, z = w / norm, x / norm, y / norm, z / norm
    return np.stack(
        (
            np.stack((1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)), axis=1),
            np.stack((2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)), axis=1),
            np.stack((2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)), axis=1),
        ),
        axis=1,
    )


# 2,048 of them: 4,096 cost about a fifth of all the fitting time of small meshes, and
# with 2,048 fit volumes came out within -13% and +1.7% of theirs (local minima either
# way); 1,024 left one capsule in 2,000 small meshes 15% larger.
_SAMPLED_ROTATIONS = _sampled_rotations(2048)
# Their axes as columns (3, 3 x 2048), rotation k's axes at 3k..3k+2, laid out once;
# float32 halves the cost of measuring them, and they only pick the starts (each start
# is then searched and measured in float64).
_SAMPLED_AXES = np.ascontiguousarray(
    np.swapaxes(_SAMPLED_ROTATIONS, -1, -2).reshape(-1, 3).T, dtype=np.float32
)
# The same columns axis by axis (axis j of rotation k at j S + k), so that each axis's
# extents are one contiguous block: the volumes are then products of whole blocks.
_SAMPLED_AXES_BY_AXIS = np.ascontiguousarray(
    _SAMPLED_AXES.reshape(3, -1, 3).transpose(0, 2, 1).reshape(3, -1)
)
# The search runs its first levels from every start, the rest from the best few.
_COARSE_LEVELS = 6
_REFINED_STARTS = 3
# The minimal ball search adds one point per round (its radius grows each round, and
# 3 to 4 rounds on average on meshes); rounding can only make it stop early, and the
# radius is measured over all points at the end, so a cap costs tightness at most.
_BALL_ROUNDS = 100
# The capsule's axis is refined by tilting it by these angles (radians, coarse to fine,
# at most _CAPSULE_TILT_STEPS tilts each), keeping tilts that shrink the capsule: the
# starting axes (principal, box's longest) differ between poses of the same points by
# up to 20% of volume, the refined axis by a few percent.
_CAPSULE_TILTS = (0.08, 0.02, 0.005)
_CAPSULE_TILT_STEPS = 4
# In `fit_auto`, the capsule's axis is not refined when its capsule is at least this
# many times the box's volume (see `_fit_autos`).
_CAPSULE_REFINEMENT_GAIN = 1.6
# Directions of a cube's faces, corners and edges (one of each opposite pair): the
# widths along them bound the volume of any sphere around the points.
_WIDTH_DIRECTIONS = np.array(
    [direction for direction in _CUBE_DIRECTIONS if direction[direction != 0][0] > 0]
)
_WIDTH_DIRECTIONS /= np.linalg.norm(_WIDTH_DIRECTIONS, axis=1, keepdims=True)
# Fits are made many at a time (a first Detect fits every mesh of the scene): the
# searches run side by side over groups of at least this many point sets, so numpy's
# cost per call is shared; the box search then holds about 9 starts x 6 turns x 3 x 512
# floats per point set.
_GROUP_SIZE = 32
# Groups of small point sets hold more of them, up to this many candidate points in all
# (the padded count times the sets), so that thousands of small meshes (a building's
# elements) share numpy's cost per call as much as a few large ones do.
_GROUP_POINTS = _GROUP_SIZE * 2 * _SEARCH_DIRECTION_COUNT
# Each set is compared with this many sets before it in `_copy_sources`' order.
_COPY_LOOKBACK = 8


@dataclass(frozen=True)
class ProxyFit:
    """One fitted proxy shape, in the space of the points it was fitted to.

    kind: KIND_BOX, KIND_SPHERE or KIND_CAPSULE
    center: (3,) float64
    rotation: (3, 3) float64, proper rotation, columns are the shape's axes
    half_extents: (3,) float64 (capsule: (0, 0, half_length); sphere: zeros)
    radius: float (box: 0)
    volume: float, the shape's volume
    """

    kind: int
    center: np.ndarray
    rotation: np.ndarray
    half_extents: np.ndarray
    radius: float
    volume: float


def _sum_coordinates(values: np.ndarray) -> np.ndarray:
    """Sums over the last axis, of 2 or 3 coordinates: (...,) (`reduce_short_axis`)."""
    return reduce_short_axis(np.add, values)


def _validated_points(points) -> np.ndarray:
    points = np.asanyarray(points, dtype=np.float64)
    if points.ndim != 2 or points.shape[1] != 3 or len(points) == 0:
        raise ValueError(f"points must be a non-empty (n, 3) array, got shape {points.shape}")
    if not np.isfinite(points).all():
        raise ValueError("points contain NaN or infinite values")
    return points


def _fibonacci_directions(count: int) -> np.ndarray:
    """(count, 3) unit vectors spread evenly over the sphere."""
    index = np.arange(count) + 0.5
    z = 1.0 - 2.0 * index / count
    ring = np.sqrt(1.0 - z * z)
    angle = np.pi * (1.0 + 5.0**0.5) * index
    # By Python's math, not numpy's: see `columns.cubed` (these pick the candidates).
    cosine = np.array([math.cos(value) for value in angle])
    sine = np.array([math.sin(value) for value in angle])
    return np.column_stack((ring * cosine, ring * sine, z))


_SEARCH_DIRECTIONS_32 = _fibonacci_directions(_SEARCH_DIRECTION_COUNT).astype(np.float32)
# `_candidate_points` projects on this many of them at a time.
_CANDIDATE_BLOCK = 32


def _candidate_points(points: np.ndarray) -> np.ndarray:
    """The points extreme along a fixed set of directions: (m, 3), m <= 512.

    A subset of the convex hull's vertices, enough to steer the searches; final extents
    and radii are always measured over all points.
    """
    if len(points) <= 2 * _SEARCH_DIRECTION_COUNT:
        return points
    # float32 halves the cost: it only picks which points steer the searches (a near tie
    # may pick its neighbour), every fit is measured over all points in float64.
    centered = np.ascontiguousarray((points - points.mean(axis=0)).astype(np.float32).T)
    chosen = np.zeros(len(points), dtype=bool)
    # (directions, n) projections, each direction's contiguous so the reductions run
    # along rows (numpy reduces across rows several times slower), a block of directions
    # at a time so that they stay in cache while reduced: 1.6 times faster than all at
    # once on 500-5,000 points.
    for first in range(0, _SEARCH_DIRECTION_COUNT, _CANDIDATE_BLOCK):
        projections = _SEARCH_DIRECTIONS_32[first : first + _CANDIDATE_BLOCK] @ centered
        chosen[projections.argmax(axis=1)] = True
        chosen[projections.argmin(axis=1)] = True
    return points[chosen]


def principal_axes(points) -> np.ndarray:
    """(3, 3) proper rotation whose columns are the principal axes, largest variance first."""
    return _principal_frames([_validated_points(points)])[0]


def _principal_frames(point_sets: list[np.ndarray]) -> np.ndarray:
    """`principal_axes` of each of `point_sets` (n_i, 3): (g, 3, 3). Each set's sums run
    over its own rows only, so a set's axes do not depend on the others."""
    points, owners, starts, counts = _stacked(point_sets)
    means = np.add.reduceat(points, starts, axis=0) / counts[:, None]
    centred = points - means[owners]
    products = (centred[:, :, None] * centred[:, None, :]).reshape(-1, 9)
    scatter = np.add.reduceat(products, starts, axis=0).reshape(-1, 3, 3)
    _, vectors = np.linalg.eigh(scatter)
    axes = vectors[:, :, ::-1].copy()
    # An eigenvector's sign is arbitrary, and the searches' sampled orientations turn
    # this frame: each of the first two axes points where the set's third moment along
    # it is positive, so that the same points give the same frame in any pose.
    skew = np.add.reduceat(cubed(np.einsum("nk,nkj->nj", centred, axes[owners])), starts, axis=0)
    axes[:, :, :2] *= np.where(skew[:, :2] < 0.0, -1.0, 1.0)[:, None, :]
    axes[np.linalg.det(axes) < 0, :, 2] *= -1.0
    return axes


def _axis_rotations(angle: float) -> np.ndarray:
    """(6, 3, 3) rotations by +-angle about the x, y and z axes."""
    rotations = np.zeros((6, 3, 3))
    for index, (axis, sign) in enumerate((a, s) for a in range(3) for s in (1.0, -1.0)):
        first, second = (axis + 1) % 3, (axis + 2) % 3
        cosine, sine = math.cos(angle), sign * math.sin(angle)
        rotations[index, axis, axis] = 1.0
        rotations[index, first, first] = cosine
        rotations[index, second, second] = cosine
        rotations[index, first, second] = -sine
        rotations[index, second, first] = sine
    return rotations


_SEARCH_STEPS = [_axis_rotations(np.pi / 4 / 2**level) for level in range(_ROTATION_SEARCH_LEVELS)]
# `_extents_along` lays the projections of sets of at most this many points out point
# by point: the box searches took 0.5 of the time that way on sets of 10-86 points and
# 0.8-0.97 on 114 (padded candidates), while on 153-482 its scattered writes made them
# 1.1-1.8 times slower.
_POINT_ROW_EXTENTS = 120


def _extents_along(points: np.ndarray, axes: np.ndarray) -> np.ndarray:
    """The extent of each point set (..., m, 3) along each of its axes (..., k, 3), one
    per row: (..., k); leading axes broadcast."""
    if points.shape[-2] > _POINT_ROW_EXTENTS:
        # (..., k, m): each axis's projections contiguous, for fast reductions.
        projections = axes @ np.swapaxes(points, -1, -2)
        return projections.max(axis=-1) - projections.min(axis=-1)
    # (m, ..., k): point j's projections on every set's axes in one contiguous row, so
    # that the extremes are taken over m whole rows (numpy reduces each axis's short row
    # of m on its own). The product writes each set's (m, k) block straight into that
    # layout, its sums the same as the (k, m) product's.
    leading = np.broadcast_shapes(points.shape[:-2], axes.shape[:-2])
    projections = np.empty(
        (points.shape[-2], *leading, axes.shape[-2]), dtype=np.result_type(points, axes)
    )
    np.matmul(points, np.swapaxes(axes, -1, -2), out=np.moveaxis(projections, 0, -2))
    return projections.max(axis=0) - projections.min(axis=0)


def _floored_volumes(extents: np.ndarray) -> np.ndarray:
    """Volumes (...,) of boxes of `extents` (..., 3), each floored at a millionth of the
    box's largest, so that flat point sets are compared by area (and not all tied at
    volume 0)."""
    # Over the 3-long axis by whole slices (`reduce_short_axis`): the same values, in the
    # same order, several times faster than numpy's reductions over a short axis.
    floor = _FLAT_EXTENT_RATIO * reduce_short_axis(np.maximum, extents)[..., None]
    return reduce_short_axis(np.multiply, np.maximum(extents, floor))


# Turn k of `_axis_rotations` keeps the box's axis k // 2 and moves the other two.
_KEPT_AXES = np.arange(6) // 2
_MOVED_AXES = np.stack(((_KEPT_AXES + 1) % 3, (_KEPT_AXES + 2) % 3), axis=1)  # (6, 2)


def _refine_rotations(
    points: np.ndarray, rotations: np.ndarray, steps: list[np.ndarray]
) -> tuple[np.ndarray, np.ndarray]:
    """Local searches over orientations from each of `rotations` (s, 3, 3), side by side:
    turn about the current box axes by each step in turn, repeating a step while it
    makes the box smaller (at most `_STEP_REPEATS` times). Returns the rotations
    (s, 3, 3) and box volumes (s,) found.

    points: (s, m, 3), the points of each search; steps: (6, 3, 3) turns per level
    """
    rotations = rotations.copy()
    extents = _extents_along(points, np.swapaxes(rotations, 1, 2))  # (s, 3)
    volumes = _floored_volumes(extents)
    turns_of_axes = np.arange(6)[:, None]
    for turns in steps:
        # The six turns side by side (3, 18), so that all trials are one matrix product:
        # numpy multiplies stacked 3 x 3 matrices one BLAS call each, 6 a calls.
        turn_columns = np.concatenate(turns, axis=1)
        active = np.arange(len(rotations))
        for _ in range(_STEP_REPEATS):
            if not len(active):
                break
            trials = np.swapaxes(
                (rotations[active].reshape(-1, 3) @ turn_columns).reshape(-1, 3, 6, 3), 1, 2
            )  # (a, 6, 3, 3)
            # A turn keeps one axis, whose extent is known: only the two it moves are
            # measured, 12 axes instead of 18.
            moved = np.swapaxes(trials, 2, 3)[:, turns_of_axes, _MOVED_AXES]  # (a, 6, 2, 3)
            trial_extents = np.empty((len(active), 6, 3))
            trial_extents[:, turns_of_axes, _MOVED_AXES] = _extents_along(
                points[active], moved.reshape(len(active), 12, 3)
            ).reshape(-1, 6, 2)
            trial_extents[:, np.arange(6), _KEPT_AXES] = extents[active][:, _KEPT_AXES]
            trial_volumes = _floored_volumes(trial_extents)  # (a, 6)
            best = trial_volumes.argmin(axis=1)
            best_volumes = pick_rows(trial_volumes, best)
            better = best_volumes < volumes[active] * (1.0 - 1e-12)
            active, best = active[better], best[better]
            rotations[active] = trials[better, best]
            extents[active] = trial_extents[better, best]
            volumes[active] = best_volumes[better]
    return rotations, volumes


def _first_of_each(owners: np.ndarray, volumes: np.ndarray, count: int) -> np.ndarray:
    """Rows (r,) of the `count` smallest `volumes` (s,) of each owner in `owners` (s,)
    (ascending), ties to the earlier row; grouped by owner, ascending."""
    order = np.lexsort((volumes, owners))
    return order[ranks_in_runs(owners[order]) < count]


def _box_from_rotation(points: np.ndarray, rotation: np.ndarray) -> ProxyFit:
    # Re-orthonormalise so the search's accumulated products leave no drift.
    u, _, vt = np.linalg.svd(rotation)
    rotation = u @ vt
    if np.linalg.det(rotation) < 0:
        rotation[:, 2] = -rotation[:, 2]
    projections = points @ rotation
    low, high = projections.min(axis=0), projections.max(axis=0)
    half_extents = (high - low) / 2.0
    center = rotation @ ((high + low) / 2.0)
    return ProxyFit(
        kind=KIND_BOX,
        center=center,
        rotation=rotation,
        half_extents=half_extents,
        radius=0.0,
        volume=float(8.0 * np.prod(half_extents)),
    )


def _extreme_corners(padded: np.ndarray, principal: np.ndarray) -> np.ndarray:
    """The points of each set (g, m, 3) extreme along the 26 `_CUBE_DIRECTIONS` of its
    principal frame (g, 3, 3): (g, 26, 3), in `_CUBE_DIRECTIONS`' order (a point extreme
    along several directions repeats).

    Measured from each set's first point, so that the choice does not depend on where
    the set lies; ties go to the earlier point, so padding never changes the choice.
    """
    directions = principal @ _CUBE_DIRECTIONS.T  # (g, 3, 26)
    extreme = np.argmax((padded - padded[:, :1]) @ directions, axis=1)  # (g, 26)
    return np.take_along_axis(padded, extreme[:, :, None], axis=1)


def _smallest(values: np.ndarray, count: int) -> np.ndarray:
    """Indices (g, count) of the `count` smallest of each row of `values` (g, n),
    ascending (equal values by index). Each row is chosen on its own, so a row's choice
    does not depend on the other rows."""
    # The count-th smallest of the minima of a row's blocks (16 count blocks or more) is
    # at least the row's count-th smallest: a row with just `count` values up to it has
    # them as its smallest, found 2.5 times faster than by partitioning the whole row
    # (of S sampled volumes: 15 rows in 16). Only the other rows are partitioned, the
    # same as among all rows (a row's partition does not depend on the rows beside it).
    width = values.shape[1]
    block = max(1, width // (16 * count))
    minima = np.minimum.reduceat(values, np.arange(0, width, block), axis=1)
    below = values <= np.partition(minima, count - 1, axis=1)[:, count - 1 : count]
    few = below.sum(axis=1) == count
    chosen = np.empty((len(values), count), dtype=np.int64)
    chosen[few] = np.nonzero(below[few])[1].reshape(-1, count)
    chosen[~few] = np.argpartition(values[~few], count - 1, axis=1)[:, :count]
    order = np.lexsort((chosen, np.take_along_axis(values, chosen, axis=1)), axis=1)
    return np.take_along_axis(chosen, order, axis=1)


def _distinct_corners(corners: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each set's distinct `corners` (g, 26, 3), in their order (a point extreme along
    several directions is kept where it first comes), padded by repeating the set's first
    corner: (g, u, 3), u the most any set has; how many each set has (g,); and how many
    of each set's come from the first `_HULL_FRAME_POINTS` directions (g,) (they come
    first).

    A building element of 8 vertices repeats them among its 26 corners: its starts are
    then picked from 8 points, not 26, and each hull face is measured once.
    """
    # Coordinate by coordinate: numpy reduces a 3-long last axis row by row, several
    # times slower.
    x, y, z = np.moveaxis(corners, 2, 0)
    same = (  # (g, 26, 26)
        (x[:, :, None] == x[:, None])
        & (y[:, :, None] == y[:, None])
        & (z[:, :, None] == z[:, None])
    )
    distinct = ~np.tril(same, -1).any(axis=2)  # equal to no earlier corner
    return (
        first_distinct(corners, ~distinct),
        distinct.sum(axis=1),
        distinct[:, :_HULL_FRAME_POINTS].sum(axis=1),
    )


def _best_face_frames(
    corners: np.ndarray, hull_counts: np.ndarray, fallback: np.ndarray
) -> np.ndarray:
    """The best `_REFINED_STARTS` box orientations of each set of `corners` (g, c, 3)
    (as `_distinct_corners` makes them) with one face on a face of the convex hull of its
    first `hull_counts` (g,) corners and an edge along a side of that face, smallest
    box around the corners first: (g, r, 3, 3) rotations; `fallback` (g, 3, 3) where a
    set has fewer.

    The smallest box around a convex polyhedron often has a face flush with a hull
    face (otherwise two faces touch hull edges); these frames find such boxes for shapes
    with few extreme vertices (boxes, wedges) and give starts for the local search. The
    hull's faces are the triangles through three corners with all corners on one side:
    about 2 c of the c (c - 1) (c - 2) / 6 triangles, so only those are measured.
    """
    hull_points = int(hull_counts.max())
    triangles = _FACE_TRIANGLES[_FACE_TRIANGLES.max(axis=1) < hull_points]
    firsts = corners[:, :hull_points]
    # np.take: the same rows as indexing, three times faster here.
    a, b, c = (np.take(firsts, triangles[:, k], axis=1) for k in range(3))  # (g, t, 3)
    # Products, sums and norms over the 3 coordinates written out (`cross_rows`,
    # `dot_rows`): np.cross's and np.linalg.norm's sums, in the same order, without
    # their set-up or numpy's row-by-row reduction over a 3-long axis.
    normals = cross_rows(b - a, c - a)
    lengths = np.sqrt(dot_rows(normals, normals))
    usable = (lengths > 1e-9) & (triangles.max(axis=1) < hull_counts[:, None])  # (g, t)
    normals /= np.where(usable, lengths, 1.0)[:, :, None]
    # (g, h, t), h = hull_points: each corner's heights above all triangles in one row,
    # so that the sides are tested across whole rows (over each triangle's h heights,
    # numpy's reduction runs row by row, several times slower).
    heights = firsts @ np.swapaxes(normals, 1, 2) - dot_rows(normals, a)[:, None, :]
    # Only a set's own first corners decide (the others' rows hold later ones).
    own_corners = np.arange(hull_points)[:, None] < hull_counts[:, None, None]
    heights = np.where(own_corners, heights, 0.0)
    faces = usable & ((heights <= 1e-9).all(axis=1) | (heights >= -1e-9).all(axis=1))
    sets, face = np.nonzero(faces)  # (f,) each
    a, b, c, normals = a[sets, face], b[sets, face], c[sets, face], normals[sets, face]
    edges = np.stack((b - a, c - b, a - c), axis=1)  # (f, 3, 3), one row per side
    edges /= np.sqrt(dot_rows(edges, edges))[:, :, None]
    crosses = cross_rows(normals[:, None], edges)
    # Each frame's axes are a side, the normal's cross with it and the normal (shared by
    # the face's three frames, so measured once), measured in float32: they only pick
    # the starts, which are searched and measured in float64.
    axes = np.concatenate((normals[:, None], edges, crosses), axis=1)  # (f, 7, 3)
    extents = _extents_along(corners[sets].astype(np.float32), axes.astype(np.float32))  # (f, 7)
    extents = np.stack(
        (extents[:, 1:4], extents[:, 4:], np.broadcast_to(extents[:, :1], (len(sets), 3))),
        axis=2,
    )  # (f, 3, 3): per side, the frame's three extents
    volumes = _floored_volumes(extents).ravel()  # (3 f,), face-major
    owners = np.repeat(sets, 3)
    best = _first_of_each(owners, volumes, _REFINED_STARTS)
    face_rows, side = np.divmod(best, 3)
    rank = ranks_in_runs(owners[best])
    frames = np.array(np.broadcast_to(fallback[:, None], (len(corners), _REFINED_STARTS, 3, 3)))
    frames[owners[best], rank] = np.stack(
        (edges[face_rows, side], crosses[face_rows, side], normals[face_rows]), axis=2
    )
    return frames


def _own_hulls(
    centers: np.ndarray, rotations: np.ndarray, half_extents: np.ndarray, points: np.ndarray
) -> np.ndarray:
    """Whether all 8 corners of each box (centres (g, 3), rotations (g, 3, 3),
    half-extents (g, 3)) are among its points (g, m, 3), up to rounding: (g,) bool.

    Then the points' convex hull is the box itself, so no enclosing box, sphere or
    capsule is smaller: the search can stop (walls, slabs, beams, cubes).
    """
    corners = centers[:, None] + (CUBE_CORNER_SIGNS * half_extents[:, None]) @ np.swapaxes(
        rotations, 1, 2
    )  # (g, 8, 3)
    scale = np.maximum(np.abs(points).max(axis=(1, 2)), half_extents.max(axis=1))
    scale = np.maximum(scale, 1e-300)
    gaps = np.sqrt(_sum_coordinates((corners[:, :, None] - points[:, None]) ** 2)).min(axis=2)
    return (gaps <= 1e-9 * scale[:, None]).all(axis=1)


def _is_own_hull(box: ProxyFit, points: np.ndarray) -> bool:
    """`_own_hulls` of one box and its points (m, 3)."""
    return bool(
        _own_hulls(box.center[None], box.rotation[None], box.half_extents[None], points[None])[0]
    )


def _boxes_along(points: np.ndarray, rotations: np.ndarray) -> tuple[np.ndarray, ...]:
    """The boxes along each of `rotations` (g, 3, 3) around its points (g, m, 3), as
    `_box_from_rotation` makes them: centres (g, 3), rotations (g, 3, 3), half-extents
    (g, 3)."""
    u, _, vt = np.linalg.svd(rotations)
    rotations = u @ vt
    rotations[np.linalg.det(rotations) < 0, :, 2] *= -1.0
    projections = points @ rotations
    low, high = projections.min(axis=1), projections.max(axis=1)
    centers = (rotations @ ((high + low) / 2.0)[:, :, None])[:, :, 0]
    return centers, rotations, (high - low) / 2.0


def _unit_corners(corners: np.ndarray) -> np.ndarray:
    """Each set of `corners` (g, c, 3) moved to put its first at the origin and scaled
    to a largest extent of 1 (of 0 if it is one point): (g, c, 3). Orientations are
    picked on these, so that float32 measures them at any size and place."""
    centred = corners - corners[:, :1]
    scale = np.ptp(centred, axis=1).max(axis=1)
    return centred / np.where(scale > 0.0, scale, 1.0)[:, None, None]


def _sampled_volumes(corners: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """Volumes (g, S) float32 of the boxes along each of `_SAMPLED_ROTATIONS` (S of
    them) around the first `counts` (g,) of each set of `corners` (g, c, 3), as
    `_unit_corners` makes them."""
    # Only each set's own corners, not its padding (a quarter of the rows on small
    # meshes): all sets' in one product (an entry's sums do not depend on the rows
    # beside it), then each set's block reduced across its whole rows.
    own = np.arange(corners.shape[1]) < counts[:, None]
    projections = corners[own].astype(np.float32) @ _SAMPLED_AXES_BY_AXIS  # (sum counts, 3S)
    extents = np.empty((len(corners), projections.shape[1]), dtype=np.float32)
    start = 0
    for row, end in enumerate(np.cumsum(counts).tolist()):
        block = projections[start:end]
        np.subtract(block.max(axis=0), block.min(axis=0), out=extents[row])
        start = end
    return _floored_volumes(np.moveaxis(extents.reshape(len(corners), 3, -1), 1, -1))


def _box_starts(group: _Group, indices: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Starting orientations (s, 3, 3) of the box searches of the point sets `indices`
    (k,) of `group`, and the index in `group` each start is for (s,): each set's own
    axes, its principal axes, the best sampled orientations and the best frames flush
    with a face through extreme points of its candidates."""
    principal = np.stack([group.principal[index] for index in indices])
    starts = []
    # A few sets at a time, so that their projections (26 x 3S floats each) stay small.
    for first in range(0, len(indices), _STARTS_CHUNK):
        chunk = principal[first : first + _STARTS_CHUNK]
        corners, counts, hull_counts = _distinct_corners(
            _unit_corners(
                _extreme_corners(group.padded[indices[first : first + _STARTS_CHUNK]], chunk)
            )
        )
        # The sampled orientations turn the principal frame: measured on the corners in
        # that frame, so the rotations need not be turned first. The best few, ties to
        # the earlier orientation.
        volumes = _sampled_volumes(corners @ chunk, counts)
        best = _smallest(volumes, _SAMPLED_STARTS)
        starts.append(
            np.concatenate(
                (
                    np.broadcast_to(np.eye(3), (len(chunk), 1, 3, 3)),
                    chunk[:, None],
                    chunk[:, None] @ _SAMPLED_ROTATIONS[best],
                    _best_face_frames(corners, hull_counts, chunk),
                ),
                axis=1,
            )
        )
    starts = np.concatenate(starts)  # (k, 2 + _SAMPLED_STARTS + _REFINED_STARTS, 3, 3)
    return starts.reshape(-1, 3, 3), np.repeat(indices, starts.shape[1])


def _own_hull_boxes(group: _Group) -> list[ProxyFit | None]:
    """For each point set of `group`, the box along its own or principal axes that is
    its points' own hull, or None."""
    boxes: list[ProxyFit | None] = [None] * len(group.points)
    undecided = np.arange(len(group.points))
    identities = np.broadcast_to(np.eye(3), (len(undecided), 3, 3))
    for frames in (identities, np.stack(group.principal)):
        # A box that is its points' own hull is its candidates' own hull too (its
        # corners are candidates, and no candidate lies outside): that cheaper test
        # first, over all sets at once.
        padded = group.padded[undecided]
        own = _own_hulls(*_boxes_along(padded, frames[undecided]), padded)
        for index in undecided[own]:
            box = _box_from_rotation(group.points[index], frames[index])
            if _is_own_hull(box, group.candidates[index]):
                boxes[index] = box
        undecided = np.array([index for index in undecided if boxes[index] is None], dtype=int)
    return boxes


def _fit_boxes(group: _Group) -> list[ProxyFit]:
    """`fit_box` of each point set of `group`: boxes that are the points' own hull along
    their own or principal axes directly, the others by searches run side by side."""
    boxes = _own_hull_boxes(group)
    searched = np.array([index for index, box in enumerate(boxes) if box is None], dtype=int)
    if len(searched):
        starts, owners = _box_starts(group, searched)
        # Coarse steps from every start, then the fine steps from the best few only.
        coarse, coarse_volumes = _refine_rotations(
            group.padded[owners], starts, _SEARCH_STEPS[:_COARSE_LEVELS]
        )
        kept = _first_of_each(owners, coarse_volumes, _REFINED_STARTS)
        refined, refined_volumes = _refine_rotations(
            group.padded[owners[kept]], coarse[kept], _SEARCH_STEPS[_COARSE_LEVELS:]
        )
        best = _first_of_each(owners[kept], refined_volumes, 1)
        found = _boxes_around([group.points[i] for i in owners[kept][best]], refined[best])
        for index, box in zip(owners[kept][best], found, strict=True):
            boxes[index] = box
    return boxes


def _stacked(point_sets: list[np.ndarray]) -> tuple[np.ndarray, ...]:
    """The point sets (n_i, 3) one after another, so that each is measured without
    padding: the points (N, 3), the set each is in (N,), where each set starts (g,) and
    how many points each has (g,)."""
    counts = np.array([len(points) for points in point_sets])
    starts = np.concatenate(([0], np.cumsum(counts)[:-1]))
    owners = np.repeat(np.arange(len(point_sets)), counts)
    return np.concatenate(point_sets), owners, starts, counts


def _turned(points: np.ndarray, rotations: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """Each of `points` (N, 3) in the frame of its set's rotation (g, 3, 3), the sets
    one after another with `counts` (g,) points each: (N, 3), row n = points[n] @
    rotations[set of n].

    Column by column from each rotation entry repeated over its set's rows: three times
    faster than gathering an (N, 3, 3) array of rotations, with the same sums."""
    local = np.empty_like(points)
    for axis in range(3):
        local[:, axis] = (
            points[:, 0] * np.repeat(rotations[:, 0, axis], counts)
            + points[:, 1] * np.repeat(rotations[:, 1, axis], counts)
            + points[:, 2] * np.repeat(rotations[:, 2, axis], counts)
        )
    return local


def _boxes_around(point_sets: list[np.ndarray], rotations: np.ndarray) -> list[ProxyFit]:
    """The boxes along each of `rotations` (g, 3, 3), re-orthonormalised, around its
    point set (n_i, 3), as `_box_from_rotation` makes them."""
    u, _, vt = np.linalg.svd(rotations)
    rotations = u @ vt
    rotations[np.linalg.det(rotations) < 0, :, 2] *= -1.0
    points, _, starts, counts = _stacked(point_sets)
    local = _turned(points, rotations, counts)
    low = np.minimum.reduceat(local, starts, axis=0)
    high = np.maximum.reduceat(local, starts, axis=0)
    centers = (rotations @ ((high + low) / 2.0)[:, :, None])[:, :, 0]
    half_extents = (high - low) / 2.0
    volumes = 8.0 * np.prod(half_extents, axis=1)
    return [
        ProxyFit(KIND_BOX, center, rotation, half, 0.0, float(volume))
        for center, rotation, half, volume in zip(
            centers, rotations, half_extents, volumes, strict=True
        )
    ]


def _ball_subsets(dimensions: int) -> list[np.ndarray]:
    """The subsets of 2 to d + 1 of d + 2 slots, by size: [(c, size) int, ...]."""
    return [
        np.array(list(combinations(range(dimensions + 2), size)))
        for size in range(2, dimensions + 2)
    ]


_BALL_SUBSETS = {dimensions: _ball_subsets(dimensions) for dimensions in (2, 3)}
# The same subsets in one array, each padded to d + 1 by repeating its first slot.
_PADDED_BALL_SUBSETS = {
    dimensions: np.concatenate(
        [
            np.column_stack((subset, np.repeat(subset[:, :1], dimensions + 1 - subset.shape[1], 1)))
            for subset in subsets
        ]
    )
    for dimensions, subsets in _BALL_SUBSETS.items()
}


def _triangle_circumcentres(first, second, third) -> tuple[np.ndarray, np.ndarray]:
    """Centres (..., d) in the plane of each triangle, equidistant from its corners, and
    whether the triangle is not flat (...,) bool; corners (..., d), d = 2 or 3."""
    a, b = second - first, third - first
    aa, bb, ab = (_sum_coordinates(u * v) for u, v in ((a, a), (b, b), (a, b)))
    determinant = aa * bb - ab * ab
    usable = determinant > 1e-12 * aa * bb
    safe = np.where(usable, determinant, 1.0)
    along_a = 0.5 * bb * (aa - ab) / safe
    along_b = 0.5 * aa * (bb - ab) / safe
    return first + along_a[..., None] * a + along_b[..., None] * b, usable


def _tetrahedron_circumcentres(first, second, third, fourth) -> tuple[np.ndarray, np.ndarray]:
    """Centres (..., 3) equidistant from each tetrahedron's corners and whether it is not
    flat (...,) bool; corners (..., 3)."""
    a, b, c = second - first, third - first, fourth - first
    b_cross_c = np.cross(b, c)
    volume6 = _sum_coordinates(a * b_cross_c)
    squares = [_sum_coordinates(u * u) for u in (a, b, c)]
    scale = np.sqrt(squares[0] * squares[1] * squares[2])
    usable = np.abs(volume6) > 1e-9 * scale
    numerator = (
        squares[0][..., None] * b_cross_c
        + squares[1][..., None] * np.cross(c, a)
        + squares[2][..., None] * np.cross(a, b)
    )
    return first + numerator / (2.0 * np.where(usable, volume6, 1.0))[..., None], usable


def _smallest_balls_of_few(points: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The smallest ball around each set of d + 2 points, by trying every subset of
    2 to d + 1 of them: the ball centred in the subset's affine hull and equidistant
    from its points, grown to reach all d + 2 (the minimal ball is one of these).

    points: (k, d + 2, d), d = 2 or 3
    returns: centres (k, d) and the subset each ball is through, (k, d + 1) indices into
        the d + 2 points (smaller subsets padded by repeating their first index)
    """
    dimensions = points.shape[2]
    pairs, triples, *quadruples = _BALL_SUBSETS[dimensions]
    # np.take: the same rows as indexing, faster.
    first, second = (np.take(points, pairs[:, k], axis=1) for k in range(2))
    centres = [(first + second) / 2.0]
    # Two equal points are no ball through two points: their "ball" is centred on them
    # with the radius of the farthest point, so it can tie with the minimal ball where
    # they lie at its centre and then be kept as what that ball is through.
    usable = [reduce_short_axis(np.logical_or, first != second)]
    for subsets, circumcentres in zip(
        (triples, *quadruples),
        (_triangle_circumcentres, _tetrahedron_circumcentres)[: 1 + len(quadruples)],
        strict=True,
    ):
        centre, ok = circumcentres(
            *(np.take(points, subsets[:, k], axis=1) for k in range(subsets.shape[1]))
        )
        centres.append(centre)
        usable.append(ok)
    centres = np.concatenate(centres, axis=1)  # (k, s, d)
    # (d + 2, d, k, s): each point's offsets from all centres, coordinate by coordinate,
    # so that the squares are summed and the farthest taken over whole blocks (the same
    # sums, in the same order, as over a last axis of coordinates).
    offsets = points.transpose(1, 2, 0)[:, :, :, None] - centres.transpose(2, 0, 1)
    offsets *= offsets
    reach = reduce_short_axis(  # (k, s)
        np.maximum, reduce_short_axis(np.add, offsets, axis=1), axis=0
    )
    reach[~np.concatenate(usable, axis=1)] = np.inf
    best = reach.argmin(axis=1)
    return pick_rows(centres, best), _PADDED_BALL_SUBSETS[dimensions][best]


def _minimal_ball_centres(
    candidates: np.ndarray, starts: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Centres (k, d) of the minimal balls around each of k point sets (k, m, d), and the
    d + 1 points (k, d + 1) indices each ball is through (repeated where fewer).

    Keeps the d + 1 points a ball is through; each round adds the farthest point and
    takes the smallest ball of those d + 2 (`_smallest_balls_of_few`), until no point
    is farther than the radius (the exact minimal ball, up to rounding). It starts from
    each set's first point, or from the ball through `starts` (k, d + 1) indices: the
    points a nearby ball was through (the same points seen along a slightly tilted
    axis), which then needs a round or two instead of several.
    """
    count, _, dimensions = candidates.shape
    # Contiguous, so that each round takes its sets' rows whole (`take_rows`).
    candidates = np.ascontiguousarray(candidates)
    active = np.arange(count)
    if starts is None:
        through = np.zeros((count, dimensions + 1), dtype=np.int64)
        centres = candidates[:, 0].copy()
        radius_squared = np.zeros(count)
    else:
        # The ball through the start points alone: theirs among d + 2 with one repeated.
        centres, through, radius_squared = _smallest_ball_of(
            candidates, active, np.concatenate((starts, starts[:, :1]), axis=1)
        )
    for _ in range(_BALL_ROUNDS):
        distances = _sum_coordinates((take_rows(candidates, active) - centres[active, None]) ** 2)
        farthest = distances.argmax(axis=1)
        outside = pick_rows(distances, farthest) > radius_squared[active] * (1.0 + 1e-12)
        active, farthest = active[outside], farthest[outside]
        if not len(active):
            break
        centres[active], through[active], radius_squared[active] = _smallest_ball_of(
            candidates, active, np.concatenate((through[active], farthest[:, None]), axis=1)
        )
    return centres, through


def _smallest_ball_of(
    candidates: np.ndarray, sets: np.ndarray, few: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The smallest ball (`_smallest_balls_of_few`) around the candidates `few` (k, d + 2)
    indices of each of the point sets `sets` (k,) of `candidates` (s, m, d), contiguous:
    its centre (k, d), the d + 1 indices it is through (k, d + 1) and its squared radius
    (k,)."""
    _, width, dimensions = candidates.shape
    # Points taken from the sets' rows laid end to end (`take_rows`, faster than indexing).
    flat = candidates.reshape(-1, dimensions)
    rows = sets[:, None] * width
    centres, subset = _smallest_balls_of_few(
        take_rows(flat, (rows + few).ravel()).reshape(*few.shape, dimensions)
    )
    through = few[np.arange(len(sets))[:, None], subset]
    ball = take_rows(flat, (rows + through).ravel()).reshape(*through.shape, dimensions)
    radius_squared = _sum_coordinates((ball - centres[:, None]) ** 2)
    return centres, through, radius_squared.max(axis=1)


def _fit_spheres(group: _Group) -> list[ProxyFit]:
    """`fit_sphere` of each point set of `group`: the minimal ball of its candidates,
    grown to enclose all its points."""
    return _spheres_around(group.points, _minimal_ball_centres(group.padded)[0])


def _spheres_around(point_sets: list[np.ndarray], centers: np.ndarray) -> list[ProxyFit]:
    """The smallest sphere around each of `point_sets` (n_i, 3) centred at its
    `centers` (g, 3)."""
    points, _, starts, counts = _stacked(point_sets)
    distances_squared = _sum_coordinates((points - np.repeat(centers, counts, axis=0)) ** 2)
    radii = np.sqrt(np.maximum.reduceat(distances_squared, starts))
    return [
        ProxyFit(
            kind=KIND_SPHERE,
            center=center,
            rotation=np.eye(3),
            half_extents=np.zeros(3),
            radius=float(radius),
            volume=float(4.0 / 3.0 * np.pi * cubed(radius)),
        )
        for center, radius in zip(centers, radii, strict=True)
    ]


def _capsules_along(group: _Group, axes: np.ndarray) -> list[ProxyFit]:
    """For each point set of `group`, the capsule along its direction of `axes` (g, 3):
    the radius of the minimal circle around the candidates seen along the axis (grown
    to enclose all points), then the shortest segment for that radius."""
    helpers = np.eye(3)[np.argmin(np.abs(axes), axis=1)]
    first = np.cross(axes, helpers)
    first /= np.linalg.norm(first, axis=1, keepdims=True)
    rotations = np.stack((first, np.cross(axes, first), axes), axis=2)
    circle_centers, _ = _minimal_ball_centres((group.padded @ rotations)[:, :, :2])
    return _capsules_around_circles(group.points, rotations, circle_centers)


def _capsules_around_circles(
    point_sets: list[np.ndarray], rotations: np.ndarray, circle_centers: np.ndarray
) -> list[ProxyFit]:
    """The capsule around each of `point_sets` (n_i, 3) along column 2 of its rotation
    (g, 3, 3), its axis through its circle centre (g, 2) (in the rotation's first two
    axes): the smallest radius there, then the shortest segment."""
    points, _, starts, counts = _stacked(point_sets)
    local = _turned(points, rotations, counts)
    # Per-set values spread over the sets' rows by np.repeat, faster than by indexing.
    radial_squared = _sum_coordinates(
        (local[:, :2] - np.repeat(circle_centers, counts, axis=0)) ** 2
    )
    radii = np.sqrt(np.maximum.reduceat(radial_squared, starts))
    reach = np.sqrt(np.maximum(np.repeat(radii, counts) ** 2 - radial_squared, 0.0))
    top = np.maximum.reduceat(local[:, 2] - reach, starts)
    bottom = np.minimum.reduceat(local[:, 2] + reach, starts)
    # Where every point fits in one ball of this radius, any centre in [top, bottom] works.
    ball = bottom > top
    middle = (top + bottom) / 2.0
    top, bottom = np.where(ball, middle, top), np.where(ball, middle, bottom)
    half_lengths = (top - bottom) / 2.0
    local_centers = np.column_stack((circle_centers, (top + bottom) / 2.0))
    centers = (rotations @ local_centers[:, :, None])[:, :, 0]
    # The exact radius of this segment, so rounding in `reach` cannot leave a point out.
    along = local[:, 2] - np.clip(local[:, 2], np.repeat(bottom, counts), np.repeat(top, counts))
    radii = np.sqrt(np.maximum.reduceat(radial_squared + along**2, starts))
    volumes = np.pi * radii**2 * 2.0 * half_lengths + 4.0 / 3.0 * np.pi * cubed(radii)
    return [
        ProxyFit(
            kind=KIND_CAPSULE,
            center=center,
            rotation=rotation,
            half_extents=np.array([0.0, 0.0, half_length]),
            radius=float(radius),
            volume=float(volume),
        )
        for center, rotation, half_length, radius, volume in zip(
            centers, rotations, half_lengths, radii, volumes, strict=True
        )
    ]


def _fit_capsules(
    group: _Group,
    boxes: list[ProxyFit],
    hopeless: np.ndarray | None = None,
    beaten: np.ndarray | None = None,
) -> list[ProxyFit | None]:
    """`fit_capsule` of each point set of `group`, given its box (`boxes`, one each).

    The principal and the box's long axis are compared by their capsules around the
    candidates, the better one refined; of it and the refined axis (where they differ),
    the smaller capsule around all points is kept. Capsules whose volume before the
    refinement is at least `hopeless` (g,) are not refined. Where `beaten` (g,) is given,
    a capsule along the better axis that the bound of `_capsule_volumes` shows to be no
    smaller than it is not measured over all points, and a set left with no capsule is None.
    """
    count = len(group.points)
    principal = np.stack([axes[:, 0] for axes in group.principal])
    long = np.stack([box.rotation[:, int(np.argmax(box.half_extents))] for box in boxes])
    pairs = np.stack((principal, long), axis=1)  # (g, 2, 3)
    volumes, bounds, through = _capsule_volumes(
        np.repeat(group.padded, 2, axis=0), pairs.reshape(-1, 3)
    )
    volumes, bounds = volumes.reshape(count, 2), bounds.reshape(count, 2)
    through = through.reshape(count, 2, -1)
    better = volumes.argmin(axis=1)  # ties to the principal axis
    start_axes = pairs[np.arange(count), better]
    start_volumes = volumes[np.arange(count), better]
    refined_axes = start_axes.copy()
    tried = slice(None) if hopeless is None else start_volumes < hopeless
    refined_axes[tried] = _refined_capsule_axes(
        group.padded[tried],
        start_axes[tried],
        start_volumes[tried],
        through[np.arange(count), better][tried],
    )
    fits: list[ProxyFit | None] = [None] * count
    measured = np.arange(count)
    if beaten is not None:
        # The bound is measured from rounded values: a margin keeps it below the fit.
        start_bounds = bounds[np.arange(count), better] * (1.0 - 1e-9)
        measured = np.flatnonzero(start_bounds < beaten)
    if len(measured):
        part = group if len(measured) == count else group.subset(measured.tolist())
        starting = _capsules_along(part, start_axes[measured])
        for index, fit in zip(measured.tolist(), starting, strict=True):
            fits[index] = fit
    moved = np.flatnonzero((refined_axes != start_axes).any(axis=1)).tolist()
    if moved:
        refined = _capsules_along(group.subset(moved), refined_axes[moved])
        for index, fit in zip(moved, refined, strict=True):
            fits[index] = fit if fits[index] is None else min(fits[index], fit, key=_volume)
    return fits


def _volume(fit: ProxyFit) -> float:
    return fit.volume


def _capsule_volumes(
    candidates: np.ndarray, axes: np.ndarray, starts: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Volumes (k,) of the capsules along each of `axes` (k, 3) around its `candidates`
    (k, m, 3), as `_capsules_along` makes them (minimal circle, shortest segment); lower
    bounds (k,) on the volume of any capsule along the axis around any points that
    include the candidates; and the candidates (k, 3) indices each circle is through.
    `starts` (k, 3) as `_minimal_ball_centres` takes them.

    The bound: such a capsule's radius R is at least the candidates' circle's r, and its
    segment at least their extent h along the axis less 2 R, so its volume is at least
    pi R^2 max(h - 2 R, 0) + 4/3 pi R^3, which grows with R: at least its value at r.
    """
    local = candidates @ frames_from_axes(axes)  # (k, m, 3)
    circle_centers, through = _minimal_ball_centres(local[:, :, :2], starts)
    radial_squared = _sum_coordinates((local[:, :, :2] - circle_centers[:, None]) ** 2)
    radius_squared = radial_squared.max(axis=1)
    reach = np.sqrt(np.maximum(radius_squared[:, None] - radial_squared, 0.0))
    top = np.max(local[:, :, 2] - reach, axis=1)
    bottom = np.min(local[:, :, 2] + reach, axis=1)
    length = np.maximum(top - bottom, 0.0)
    radius = np.sqrt(radius_squared)
    sphere = 4.0 / 3.0 * np.pi * cubed(radius)
    height = np.ptp(local[:, :, 2], axis=1)
    bounds = np.pi * radius_squared * np.maximum(height - 2.0 * radius, 0.0) + sphere
    return np.pi * radius_squared * length + sphere, bounds, through


def _refined_capsule_axes(
    candidates: np.ndarray, axes: np.ndarray, volumes: np.ndarray, through: np.ndarray
) -> np.ndarray:
    """Unit axes (g, 3) near `axes` (g, 3) whose capsules around `candidates` (g, m, 3)
    are smaller than `volumes` (g,), theirs: tilts towards the four directions
    perpendicular to each axis, coarse to fine, all four and all point sets measured
    together. through: (g, 3) the candidates each axis's circle is through, where each
    tilt's circle search starts (a small tilt seldom changes them)."""
    axes = axes.copy()
    best = volumes.copy()
    through = through.copy()
    for angle in _CAPSULE_TILTS:
        active = np.arange(len(axes))
        for _ in range(_CAPSULE_TILT_STEPS):
            if not len(active):
                break
            frames = frames_from_axes(axes[active])
            sides = np.stack(
                (frames[:, :, 0], -frames[:, :, 0], frames[:, :, 1], -frames[:, :, 1]), 1
            )
            # By Python's math, not numpy's: see `columns.cubed`.
            tilts = axes[active][:, None] * math.cos(angle) + sides * math.sin(angle)  # (a, 4, 3)
            tilts /= np.linalg.norm(tilts, axis=2, keepdims=True)
            volumes, _, tilted_through = _capsule_volumes(
                np.repeat(candidates[active], 4, axis=0),
                tilts.reshape(-1, 3),
                np.repeat(through[active], 4, axis=0),
            )
            volumes, tilted_through = volumes.reshape(-1, 4), tilted_through.reshape(-1, 4, 3)
            k = volumes.argmin(axis=1)
            smallest = pick_rows(volumes, k)
            better = smallest < best[active]
            active, k = active[better], k[better]
            best[active] = smallest[better]
            axes[active] = tilts[better, k]
            through[active] = tilted_through[better, k]
    return axes


def _sphere_volume_bounds(points: np.ndarray, rotations: np.ndarray) -> np.ndarray:
    """Lower bounds (g,) on the volume of any sphere enclosing each set of points
    (g, m, 3): it is at least as wide as they are along each axis and diagonal of a
    frame (g, 3, 3)."""
    widths = np.ptp(points @ (rotations @ _WIDTH_DIRECTIONS.T), axis=1)  # (g, 13)
    return 4.0 / 3.0 * np.pi * cubed(widths.max(axis=1) / 2.0)


def _keep_smaller(fits: list[ProxyFit], indices: list[int], found: list[ProxyFit | None]) -> None:
    """Replace fits[indices[k]] by found[k] where that is strictly smaller (None: not)."""
    for index, fit in zip(indices, found, strict=True):
        if fit is not None and fit.volume < fits[index].volume:
            fits[index] = fit


def _fit_autos(group: _Group) -> list[ProxyFit]:
    """`fit_auto` of each point set of `group`: its box, or the sphere or capsule where
    smaller. Sets whose box is their points' own hull keep it; a sphere is only fitted
    where `_sphere_volume_bounds` does not show that it cannot be smaller."""
    boxes = _fit_boxes(group)
    rotations = np.stack([box.rotation for box in boxes])
    own = _own_hulls(
        np.stack([box.center for box in boxes]),
        rotations,
        np.stack([box.half_extents for box in boxes]),
        group.padded,
    )
    # The sphere's bound is measured from rounded widths: a margin keeps it below the fit.
    box_volumes = np.array([box.volume for box in boxes])
    sphere_bounds = _sphere_volume_bounds(group.padded, rotations) * (1.0 - 1e-9)
    fits = list(boxes)
    # Ties go to the box, then the sphere: only a strictly smaller shape replaces a fit.
    searched = np.flatnonzero(~own & (sphere_bounds < box_volumes)).tolist()
    if searched:
        _keep_smaller(fits, searched, _fit_spheres(group.subset(searched)))
    searched = np.flatnonzero(~own).tolist()
    if searched:
        # A capsule this much larger than the box before its axis is refined stays
        # larger after it: the refinement shrank capsules by at most 1.53 times on
        # 1,600 mesh-like clouds, and 1.31 times on bench_fit's 3,000 point sets.
        hopeless = _CAPSULE_REFINEMENT_GAIN * box_volumes[searched]
        beaten = np.array([fits[index].volume for index in searched])
        found = _fit_capsules(
            group.subset(searched), [boxes[i] for i in searched], hopeless, beaten
        )
        _keep_smaller(fits, searched, found)
    return fits


@dataclass(frozen=True)
class _Group:
    """Point sets fitted side by side.

    points: g arrays (n_i, 3) float64
    candidates: g arrays (m_i, 3), their `_candidate_points`
    principal: g arrays (3, 3), the candidates' `principal_axes`
    padded: (g, m, 3), the candidates, each padded to the largest count by repeating its
        first point (which changes no extent and no ball)
    """

    points: list[np.ndarray]
    candidates: list[np.ndarray]
    principal: list[np.ndarray]
    padded: np.ndarray

    @classmethod
    def of(cls, point_sets: list[np.ndarray], candidates: list[np.ndarray]) -> _Group:
        return cls(point_sets, candidates, list(_principal_frames(candidates)), _padded(candidates))

    def subset(self, indices: list[int]) -> _Group:
        candidates = [self.candidates[index] for index in indices]
        return _Group(
            [self.points[index] for index in indices],
            candidates,
            [self.principal[index] for index in indices],
            _padded(candidates),
        )


def _padded(candidate_sets: list[np.ndarray]) -> np.ndarray:
    """(g, m, 3): each set (m_i, 3) padded to the largest m by repeating its first point."""
    padded = np.empty((len(candidate_sets), max(len(c) for c in candidate_sets), 3))
    for row, candidates in enumerate(candidate_sets):
        padded[row, : len(candidates)] = candidates
        padded[row, len(candidates) :] = candidates[0]
    return padded


_GROUP_FITTERS = {
    "AUTO": _fit_autos,
    "BOX": _fit_boxes,
    "SPHERE": _fit_spheres,
    "CAPSULE": lambda group: _fit_capsules(group, _fit_boxes(group)),
}


def fit_shapes(point_sets, shape: str, progress=None) -> list[ProxyFit]:
    """Fit `shape` ('AUTO', 'BOX', 'SPHERE' or 'CAPSULE') to each of `point_sets`, a
    list of (n_i, 3) arrays: one fit each, as `fit_shape` makes it.

    The searches run side by side over groups of point sets, so that numpy's cost per
    call is shared: fitting many meshes at once is much faster than one by one. Groups
    are fitted on several threads (`threads.worker_count`); a set's fit does not depend
    on which group or thread fitted it. Sets that are copies of another up to a
    translation (`_copy_sources`: a building's repeated windows, columns and beams in
    world coordinates) take its search's orientation, axis or centre, moved along and
    measured over their own points. `progress(done, total)`, when given, is called in
    the calling thread with the number of sets fitted so far, before the first group,
    after each and after the copies.
    """
    try:
        fitter = _GROUP_FITTERS[shape]
    except KeyError:
        raise ValueError(f"unknown proxy shape {shape!r}") from None
    point_sets = [_validated_points(points) for points in point_sets]
    fits: list[ProxyFit | None] = [None] * len(point_sets)
    sources = _copy_sources(point_sets)
    searched = np.flatnonzero(sources == np.arange(len(point_sets)))
    found = _searched_fits([point_sets[index] for index in searched], fitter, progress, len(fits))
    for index, fit in zip(searched, found, strict=True):
        fits[index] = fit
    copies = np.flatnonzero(sources != np.arange(len(point_sets)))
    if len(copies):
        moved = _moved_fits(
            [fits[index] for index in sources[copies]],
            np.stack([point_sets[index][0] for index in sources[copies]]),
            [point_sets[index] for index in copies],
        )
        for index, fit in zip(copies, moved, strict=True):
            fits[index] = fit
        if progress is not None:
            progress(len(fits), len(fits))
    return fits


def _searched_fits(point_sets: list[np.ndarray], fitter, progress, total: int) -> list[ProxyFit]:
    """The fits of `point_sets` by `fitter`, its groups on threads; `progress(done,
    total)` as `fit_shapes` reports it, counting these sets."""
    fits: list[ProxyFit | None] = [None] * len(point_sets)
    if not point_sets:
        return fits
    # On 2 cores, 2 threads fit bench_fit's point sets 1.5-1.9 times faster than one.
    workers = worker_count(len(point_sets))
    # A few chunks of sets per thread: a task per set would cost more than a small set's
    # candidates.
    chunks = [part for part in np.array_split(np.arange(len(point_sets)), 4 * workers) if len(part)]
    candidate_sets = [
        candidates
        for chunk in map_in_threads(
            lambda chunk: [_candidate_points(point_sets[index]) for index in chunk],
            chunks,
            workers,
        )
        for candidates in chunk
    ]
    groups = _groups(candidate_sets)

    def fit_group(members: np.ndarray) -> list[ProxyFit]:
        return fitter(
            _Group.of(
                [point_sets[index] for index in members],
                [candidate_sets[index] for index in members],
            )
        )

    done = 0
    if progress is not None:
        progress(done, total)
    for members, found in zip(
        groups, map_in_threads(fit_group, groups, worker_count(len(groups))), strict=True
    ):
        for index, fit in zip(members, found, strict=True):
            fits[index] = fit
        done += len(members)
        if progress is not None:
            progress(done, total)
    return fits


def translated_copies(first: np.ndarray, second: np.ndarray) -> np.ndarray:
    """Whether point sets `first` and `second` (..., c, 3) each, broadcast, are one shape
    moved by a translation: each point's offset from the set's first point is the same
    in both to within `COPY_TOLERANCE` times the smaller of the two sets' largest
    |coordinate|: (...,) bool, False where a coordinate is NaN."""
    gaps = np.abs((first - first[..., :1, :]) - (second - second[..., :1, :])).max(axis=(-2, -1))
    largest = np.minimum(np.abs(first).max(axis=(-2, -1)), np.abs(second).max(axis=(-2, -1)))
    return gaps <= COPY_TOLERANCE * largest


def _copy_sources(point_sets: list[np.ndarray]) -> np.ndarray:
    """For each point set (n_i, 3), the set whose search it takes: (g,) indices, its own
    where it is searched, else an earlier set's.

    Sets of one count are copies by `translated_copies` (the same element placed
    elsewhere, its vertices rounded to float32 where it lies). The sets are sorted by a
    weighted sum of their offsets, which copies share to within rounding, and each is
    compared with the `_COPY_LOOKBACK` sets before it (a near
    copy may sort between two copies); sets joined by such comparisons are one shape,
    and those of them that are copies of its earliest set take that set's search.
    """
    sources = np.arange(len(point_sets))
    by_count: dict[int, list[int]] = {}
    for index, points in enumerate(point_sets):
        by_count.setdefault(len(points), []).append(index)
    for members in by_count.values():
        if len(members) < 2:
            continue
        stacked = np.stack([point_sets[index] for index in members])  # (k, c, 3)
        offsets = stacked - stacked[:, :1]
        # A weighted sum of the offsets: copies' sums differ by rounding only, while
        # the same shape turned or mirrored (whose offsets' magnitudes are those of
        # the copies) sums to another value, and so does not fall between them.
        weights = np.linspace(1.0, 2.0, offsets[0].size)
        order = np.argsort(offsets.reshape(len(offsets), -1) @ weights, kind="stable")
        stacked = stacked[order]
        earlier, later = [], []
        for lag in range(1, min(_COPY_LOOKBACK, len(order) - 1) + 1):
            close = np.flatnonzero(translated_copies(stacked[lag:], stacked[:-lag]))
            earlier.append(close)
            later.append(close + lag)
        roots = _joined(len(order), np.concatenate(earlier), np.concatenate(later))
        earliest = np.full(len(order), len(order))
        np.minimum.at(earliest, roots, order)
        earliest = np.argsort(order)[earliest[roots]]  # as a sorted position
        same = translated_copies(stacked, stacked[earliest])
        own = np.arange(len(order))
        sources[np.array(members)[order]] = np.array(members)[order[np.where(same, earliest, own)]]
    return sources


def _joined(count: int, first: np.ndarray, second: np.ndarray) -> np.ndarray:
    """For each of `count` items, one item of its part when items first[k] and
    second[k] ((l,) each) are joined: (count,) indices, equal for items of one part."""
    parent = list(range(count))

    def root(item: int) -> int:
        while parent[item] != item:
            parent[item] = parent[parent[item]]
            item = parent[item]
        return item

    for a, b in zip(first.tolist(), second.tolist(), strict=True):
        parent[root(b)] = root(a)
    return np.array([root(item) for item in range(count)], dtype=np.int64)


def _moved_fits(
    fits: list[ProxyFit], firsts: np.ndarray, point_sets: list[np.ndarray]
) -> list[ProxyFit]:
    """Each of `fits` (of sets whose first points are `firsts` (k, 3)) moved onto its
    copy in `point_sets` (n_i, 3) by the offset of the copy's first point, and measured
    over the copy's own points: the box along the same axes, the sphere around the moved
    centre, the capsule on the moved axis line. Every point of the copy is enclosed."""
    offsets = np.stack([points[0] for points in point_sets]) - firsts
    moved: list[ProxyFit | None] = [None] * len(fits)
    kinds = np.array([fit.kind for fit in fits])
    for kind in (KIND_BOX, KIND_SPHERE, KIND_CAPSULE):
        rows = np.flatnonzero(kinds == kind)
        if not len(rows):
            continue
        copies = [point_sets[row] for row in rows]
        rotations = np.stack([fits[row].rotation for row in rows])
        centers = np.stack([fits[row].center for row in rows]) + offsets[rows]
        if kind == KIND_BOX:
            found = _boxes_around(copies, rotations)
        elif kind == KIND_SPHERE:
            found = _spheres_around(copies, centers)
        else:
            # The axis line's place across it: the centre in the capsule's first two axes.
            circle_centers = np.einsum("gk,gkj->gj", centers, rotations)[:, :2]
            found = _capsules_around_circles(copies, rotations, circle_centers)
        for row, fit in zip(rows, found, strict=True):
            moved[row] = fit
    return moved


def _groups(candidate_sets: list[np.ndarray]) -> list[np.ndarray]:
    """The point sets, by index, in the groups they are fitted in: sets of similar
    candidate counts side by side, so that little padding is searched."""
    counts = np.array([len(candidates) for candidates in candidate_sets], dtype=np.int64)
    order = np.argsort(counts, kind="stable")
    groups = []
    start = 0
    while start < len(order):
        members = order[start : start + _group_size(counts[order[start : start + _GROUP_POINTS]])]
        groups.append(members)
        start += len(members)
    return groups


def _group_size(counts: np.ndarray) -> int:
    """How many of the next point sets, by their ascending candidate counts (c,), make
    a group: at least `_GROUP_SIZE`, more while the padded group holds at most
    `_GROUP_POINTS` candidate points."""
    within = np.arange(1, len(counts) + 1) * counts <= _GROUP_POINTS
    return max(_GROUP_SIZE, int(within.sum()))


def fit_shape(points, shape: str) -> ProxyFit:
    """Fit `shape` ('AUTO', 'BOX', 'SPHERE' or 'CAPSULE') to points (n, 3)."""
    return fit_shapes([points], shape)[0]


def fit_box(points) -> ProxyFit:
    """A tight oriented box around `points` (n, 3).

    Starts from the points' own axes, the principal axes, the best of 2048 evenly
    sampled orientations and the best frames flush with a face through extreme points,
    refines them by a local orientation search and keeps the smallest. Extents are
    measured over all points, so the box always encloses them.
    """
    return fit_shape(points, "BOX")


def fit_sphere(points) -> ProxyFit:
    """A near-minimal sphere enclosing `points` (n, 3): the minimal ball around the
    points extreme along fixed directions, grown to enclose every point."""
    return fit_shape(points, "SPHERE")


def fit_capsule(points, box: ProxyFit | None = None) -> ProxyFit:
    """A capsule around `points` (n, 3) along a refined principal axis.

    The principal axis of a sampled rod is tilted by the sampling noise, so the long
    axis of the tight box (`box`, a `fit_box` result for the same points, fitted here
    when not given) is tried too; the smaller capsule's axis is then refined by tilts
    (`_CAPSULE_TILTS`) and the smallest capsule kept.
    """
    points = _validated_points(points)
    group = _Group.of([points], [_candidate_points(points)])
    return _fit_capsules(group, _fit_boxes(group) if box is None else [box])[0]


def fit_auto(points) -> ProxyFit:
    """The smallest-volume of the box, sphere and capsule fits of `points` (n, 3).

    Ties go to the box, then the sphere (the cheaper shapes to test).
    """
    return fit_shape(points, "AUTO")


def stack_fits(fits: list[ProxyFit]) -> ShapeBatch:
    """The fits stacked into one batch, shape k = fits[k] (in the fits' own space)."""
    if not fits:
        return ShapeBatch.empty()
    return ShapeBatch(
        kinds=np.array([fit.kind for fit in fits], dtype=np.int8),
        centers=np.stack([fit.center for fit in fits]),
        rotations=np.stack([fit.rotation for fit in fits]),
        half_extents=np.stack([fit.half_extents for fit in fits]),
        radii=np.array([fit.radius for fit in fits], dtype=np.float64),
    )
