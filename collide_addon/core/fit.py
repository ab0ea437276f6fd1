"""Proxy fitting: boxes, spheres and capsules that enclose a vertex array.

Everything here is numpy only. A fit is made once per geometry in the object's own
(stretched) space; `place.py` splits an object's linear map into the rigid part and the
stretch the points are fitted in, and places the fits in the world.

Each fit uses the layout of `ShapeBatch`: a centre, a rotation whose columns are the
shape's axes (a capsule's axis is column 2), half-extents (a capsule's are
(0, 0, half_length), a sphere's are zero) and a radius (a box's is zero); `stack_fits`
stacks fits into one `ShapeBatch`.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import combinations

import numpy as np

from .constants import CUBE_CORNER_SIGNS, KIND_BOX, KIND_CAPSULE, KIND_SPHERE
from .shapes import ShapeBatch, frames_from_axes

# Fixed directions that select the candidate hull points a search works on: the
# points extreme along any of them include every vertex that bounds a box or sphere
# found by the search, up to the angular spacing of the set.
_SEARCH_DIRECTION_COUNT = 256
# The orientation search halves its step from 45 degrees this many times (last step
# about 0.00004 degrees).
_ROTATION_SEARCH_LEVELS = 20
# In the box search, a box thinner than this fraction of its largest extent counts as
# this thin, so that flat shapes are compared by area.
_FLAT_EXTENT_RATIO = 1e-6
# Extreme points (along the 26 directions of a cube's faces, edges and corners in the
# principal frame) whose triangles give candidate box faces.
_HULL_FRAME_POINTS = 14
_CUBE_DIRECTIONS = np.array(
    [
        (x, y, z)
        for x in (-1, 0, 1)
        for y in (-1, 0, 1)
        for z in (-1, 0, 1)
        if (x, y, z) != (0, 0, 0)
    ],
    dtype=np.float64,
)
# Orientations sampled evenly (a fixed pseudo-random set, so fits are reproducible):
# the best few around the extreme points start the local search, which then need not
# cross from one basin to another.
_SAMPLED_STARTS = 4


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


_SAMPLED_ROTATIONS = _sampled_rotations(4096)
# The search runs its first levels from every start, the rest from the best few.
_COARSE_LEVELS = 6
_REFINED_STARTS = 3
# The minimal ball search adds one point per round (its radius grows each round, and
# about ten rounds suffice on meshes); rounding can only make it stop early, and the
# radius is measured over all points at the end, so a cap costs tightness at most.
_BALL_ROUNDS = 100
# The capsule's axis is refined by tilting it by these angles (radians, coarse to fine,
# at most _CAPSULE_TILT_STEPS tilts each), keeping tilts that shrink the capsule: the
# starting axes (principal, box's longest) differ between poses of the same points by
# up to 20% of volume, the refined axis by a few percent.
_CAPSULE_TILTS = (0.08, 0.02, 0.005)
_CAPSULE_TILT_STEPS = 4


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
    return np.column_stack((ring * np.cos(angle), ring * np.sin(angle), z))


_SEARCH_DIRECTIONS = _fibonacci_directions(_SEARCH_DIRECTION_COUNT)


def _candidate_points(points: np.ndarray) -> np.ndarray:
    """The points extreme along a fixed set of directions: (m, 3), m <= 512.

    A subset of the convex hull's vertices, enough to steer the searches; final extents
    and radii are always measured over all points.
    """
    if len(points) <= 2 * _SEARCH_DIRECTION_COUNT:
        return points
    centered = points - points.mean(axis=0)
    # (directions, n): each direction's projections contiguous, so the reductions run
    # along rows (numpy reduces across rows several times slower).
    projections = _SEARCH_DIRECTIONS @ centered.T
    extreme = np.concatenate((projections.argmax(axis=1), projections.argmin(axis=1)))
    return points[np.unique(extreme)]


def principal_axes(points) -> np.ndarray:
    """(3, 3) proper rotation whose columns are the principal axes, largest variance first."""
    points = _validated_points(points)
    centered = points - points.mean(axis=0)
    _, vectors = np.linalg.eigh(centered.T @ centered)
    axes = vectors[:, ::-1].copy()
    if np.linalg.det(axes) < 0:
        axes[:, 2] = -axes[:, 2]
    return axes


def _axis_rotations(angle: float) -> np.ndarray:
    """(6, 3, 3) rotations by +-angle about the x, y and z axes."""
    rotations = np.zeros((6, 3, 3))
    for index, (axis, sign) in enumerate((a, s) for a in range(3) for s in (1.0, -1.0)):
        first, second = (axis + 1) % 3, (axis + 2) % 3
        cosine, sine = np.cos(angle), sign * np.sin(angle)
        rotations[index, axis, axis] = 1.0
        rotations[index, first, first] = cosine
        rotations[index, second, second] = cosine
        rotations[index, first, second] = -sine
        rotations[index, second, first] = sine
    return rotations


_SEARCH_STEPS = [_axis_rotations(np.pi / 4 / 2**level) for level in range(_ROTATION_SEARCH_LEVELS)]


def _box_volumes(points: np.ndarray, rotations: np.ndarray) -> np.ndarray:
    """Volume of the box along each rotation's axes enclosing `points`: (k,).

    points: (m, 3); rotations: (k, 3, 3)
    Extents are floored at a millionth of the largest one, so that flat point sets are
    compared by area (and not all tied at volume 0).
    """
    # (k, 3, m): each axis's projections contiguous, for fast reductions.
    projections = rotations.transpose(0, 2, 1) @ points.T
    extents = projections.max(axis=2) - projections.min(axis=2)
    floor = _FLAT_EXTENT_RATIO * extents.max(axis=1, keepdims=True)
    return np.prod(np.maximum(extents, floor), axis=1)


def _refine_rotations(
    points: np.ndarray, rotations: np.ndarray, steps: list[np.ndarray]
) -> tuple[np.ndarray, np.ndarray]:
    """Local searches over orientations from each of `rotations` (s, 3, 3), side by side:
    turn about the current box axes by each step in turn, repeating a step while it
    makes the box smaller. Returns the rotations (s, 3, 3) and box volumes (s,) found.

    points: (m, 3); steps: (6, 3, 3) turns per level, coarse to fine
    """
    rotations = rotations.copy()
    volumes = _box_volumes(points, rotations)
    for turns in steps:
        active = np.arange(len(rotations))
        while len(active):
            trials = rotations[active][:, None] @ turns  # (a, 6, 3, 3)
            trial_volumes = _box_volumes(points, trials.reshape(-1, 3, 3)).reshape(len(active), -1)
            best = trial_volumes.argmin(axis=1)
            best_volumes = trial_volumes[np.arange(len(active)), best]
            better = best_volumes < volumes[active] * (1.0 - 1e-12)
            active, best = active[better], best[better]
            rotations[active] = trials[better, best]
            volumes[active] = best_volumes[better]
    return rotations, volumes


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


def _extreme_points(points: np.ndarray, principal: np.ndarray) -> np.ndarray:
    """The points extreme along 26 directions of the principal frame: (<= 26, 3)."""
    centered = points - points.mean(axis=0)
    return points[np.unique(np.argmax(centered @ principal @ _CUBE_DIRECTIONS.T, axis=0))]


def _hull_face_frames(corners: np.ndarray) -> np.ndarray:
    """Box orientations with one face on the plane through three extreme points and an
    edge along a side of that triangle: (k, 3, 3) rotations.

    The smallest box around a convex polyhedron often has a face flush with a hull
    face (otherwise two faces touch hull edges); these frames find such boxes for shapes
    with few extreme vertices (boxes, wedges) and give starts for the local search.
    """
    corners = corners[:_HULL_FRAME_POINTS]
    if len(corners) < 3:
        return np.zeros((0, 3, 3))
    triples = np.array(list(combinations(range(len(corners)), 3)))
    a, b, c = (corners[triples[:, k]] for k in range(3))
    normals = np.cross(b - a, c - a)
    lengths = np.linalg.norm(normals, axis=1)
    scale = np.ptp(corners, axis=0).max()
    usable = lengths > 1e-9 * scale * scale
    normals = normals[usable] / lengths[usable, None]
    frames = []
    for edge in (b - a, c - b, a - c):
        edge = edge[usable]
        edge = edge / np.maximum(np.linalg.norm(edge, axis=1, keepdims=True), 1e-300)
        frames.append(np.stack((edge, np.cross(normals, edge), normals), axis=2))
    return np.concatenate(frames)


def _is_own_hull(box: ProxyFit, points: np.ndarray) -> bool:
    """Whether all 8 corners of `box` are among `points` (m, 3), up to rounding.

    Then the points' convex hull is the box itself, so no enclosing box, sphere or
    capsule is smaller: the search can stop (walls, slabs, beams, cubes).
    """
    corners = box.center + (CUBE_CORNER_SIGNS * box.half_extents) @ box.rotation.T
    scale = max(float(np.abs(points).max()), float(box.half_extents.max()), 1e-300)
    gaps = np.sqrt(((corners[:, None, :] - points[None, :, :]) ** 2).sum(axis=2)).min(axis=1)
    return bool((gaps <= 1e-9 * scale).all())


def fit_box(points) -> ProxyFit:
    """A tight oriented box around `points` (n, 3).

    Starts from the points' own axes, the principal axes, the best of 4096 evenly
    sampled orientations and the best frames flush with a face through extreme points,
    refines them by a local orientation search and keeps the smallest. Extents are
    measured over all points, so the box always encloses them.
    """
    points = _validated_points(points)
    return _fit_box(points, _candidate_points(points))


def _fit_box(points: np.ndarray, candidates: np.ndarray) -> ProxyFit:
    """`fit_box` of points (n, 3) whose `_candidate_points` are `candidates` (m, 3)."""
    principal = principal_axes(candidates)
    for frame in (np.eye(3), principal):
        box = _box_from_rotation(points, frame)
        if _is_own_hull(box, candidates):
            return box
    corners = _extreme_points(candidates, principal)
    sampled = principal @ _SAMPLED_ROTATIONS
    best_sampled = np.argsort(_box_volumes(corners, sampled))[:_SAMPLED_STARTS]
    starts = [np.eye(3), principal, *sampled[best_sampled]]
    face_frames = _hull_face_frames(corners)
    if len(face_frames):
        best_faces = np.argsort(_box_volumes(corners, face_frames))[:_REFINED_STARTS]
        starts += list(face_frames[best_faces])
    # Coarse steps from every start, then the fine steps from the best few only.
    coarse, coarse_volumes = _refine_rotations(
        candidates, np.stack(starts), _SEARCH_STEPS[:_COARSE_LEVELS]
    )
    best_coarse = np.argsort(coarse_volumes, kind="stable")[:_REFINED_STARTS]
    refined, refined_volumes = _refine_rotations(
        candidates, coarse[best_coarse], _SEARCH_STEPS[_COARSE_LEVELS:]
    )
    return _box_from_rotation(points, refined[int(refined_volumes.argmin())])


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
    aa, bb, ab = (np.sum(u * v, axis=-1) for u, v in ((a, a), (b, b), (a, b)))
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
    volume6 = np.sum(a * b_cross_c, axis=-1)
    scale = np.sqrt(np.sum(a * a, axis=-1) * np.sum(b * b, axis=-1) * np.sum(c * c, axis=-1))
    usable = np.abs(volume6) > 1e-9 * scale
    numerator = (
        np.sum(a * a, axis=-1)[..., None] * b_cross_c
        + np.sum(b * b, axis=-1)[..., None] * np.cross(c, a)
        + np.sum(c * c, axis=-1)[..., None] * np.cross(a, b)
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
    midpoints = (points[:, pairs[:, 0]] + points[:, pairs[:, 1]]) / 2.0
    centres = [midpoints]
    usable = [np.ones(midpoints.shape[:2], dtype=bool)]
    for subsets, circumcentres in zip(
        (triples, *quadruples),
        (_triangle_circumcentres, _tetrahedron_circumcentres)[: 1 + len(quadruples)],
        strict=True,
    ):
        centre, ok = circumcentres(*(points[:, subsets[:, k]] for k in range(subsets.shape[1])))
        centres.append(centre)
        usable.append(ok)
    centres = np.concatenate(centres, axis=1)  # (k, s, d)
    reach = np.sum((points[:, None] - centres[:, :, None]) ** 2, axis=3).max(axis=2)  # (k, s)
    reach[~np.concatenate(usable, axis=1)] = np.inf
    best = reach.argmin(axis=1)
    return centres[np.arange(len(points)), best], _PADDED_BALL_SUBSETS[dimensions][best]


def _minimal_ball_centres(candidates: np.ndarray) -> np.ndarray:
    """Centres (k, d) of the minimal balls around each of k point sets (k, m, d).

    Keeps the d + 1 points a ball is through; each round adds the farthest point and
    takes the smallest ball of those d + 2 (`_smallest_balls_of_few`), until no point
    is farther than the radius (the exact minimal ball, up to rounding).
    """
    count, _, dimensions = candidates.shape
    rows = np.arange(count)
    centres = candidates[:, 0].copy()
    through = np.repeat(candidates[:, :1], dimensions + 1, axis=1)  # (k, d + 1, d)
    radius_squared = np.zeros(count)
    active = rows
    for _ in range(_BALL_ROUNDS):
        distances = np.sum((candidates[active] - centres[active, None]) ** 2, axis=2)
        farthest = distances.argmax(axis=1)
        outside = distances[np.arange(len(active)), farthest] > radius_squared[active] * (
            1.0 + 1e-12
        )
        active, farthest = active[outside], farthest[outside]
        if not len(active):
            break
        few = np.concatenate((through[active], candidates[active, farthest][:, None]), axis=1)
        centres[active], subset = _smallest_balls_of_few(few)
        through[active] = few[np.arange(len(active))[:, None], subset]
        radius_squared[active] = np.sum((through[active] - centres[active, None]) ** 2, axis=2).max(
            axis=1
        )
    return centres


def _enclosing_ball(points: np.ndarray, candidates: np.ndarray) -> tuple[np.ndarray, float]:
    """The minimal ball around `candidates` (m, d), grown to enclose `points` (n, d):
    returns centre (d,) and radius."""
    center = _minimal_ball_centres(candidates[None])[0]
    return center, float(np.sqrt(np.max(np.sum((points - center) ** 2, axis=1))))


def fit_sphere(points) -> ProxyFit:
    """A near-minimal sphere enclosing `points` (n, 3)."""
    points = _validated_points(points)
    return _fit_sphere(points, _candidate_points(points))


def _fit_sphere(points: np.ndarray, candidates: np.ndarray) -> ProxyFit:
    """`fit_sphere` of points (n, 3) whose `_candidate_points` are `candidates` (m, 3)."""
    center, radius = _enclosing_ball(points, candidates)
    return ProxyFit(
        kind=KIND_SPHERE,
        center=center,
        rotation=np.eye(3),
        half_extents=np.zeros(3),
        radius=radius,
        volume=float(4.0 / 3.0 * np.pi * radius**3),
    )


def _capsule_along(points: np.ndarray, candidates: np.ndarray, axis: np.ndarray) -> ProxyFit:
    """The capsule along direction `axis` (3,) whose radius is that of the minimal circle
    around the candidates seen along the axis (grown to enclose all points), then the
    shortest segment for that radius."""
    helper = np.eye(3)[int(np.argmin(np.abs(axis)))]
    first = np.cross(axis, helper)
    first /= np.linalg.norm(first)
    rotation = np.column_stack((first, np.cross(axis, first), axis))
    local = points @ rotation
    circle_center, radius = _enclosing_ball(local[:, :2], (candidates @ rotation)[:, :2])
    radial_squared = np.sum((local[:, :2] - circle_center) ** 2, axis=1)
    reach = np.sqrt(np.maximum(radius**2 - radial_squared, 0.0))
    top = np.max(local[:, 2] - reach)
    bottom = np.min(local[:, 2] + reach)
    if bottom > top:
        # Every point fits in one ball of this radius: any centre in [top, bottom] works.
        top = bottom = (top + bottom) / 2.0
    half_length = (top - bottom) / 2.0
    center = rotation @ np.array([circle_center[0], circle_center[1], (top + bottom) / 2.0])
    # The exact radius of this segment, so rounding in `reach` cannot leave a point out.
    nearest_on_segment = np.column_stack(
        (np.broadcast_to(circle_center, (len(local), 2)), np.clip(local[:, 2], bottom, top))
    )
    offsets = local - nearest_on_segment
    radius = float(np.sqrt(np.max(np.sum(offsets**2, axis=1))))
    return ProxyFit(
        kind=KIND_CAPSULE,
        center=center,
        rotation=rotation,
        half_extents=np.array([0.0, 0.0, half_length]),
        radius=radius,
        volume=float(np.pi * radius**2 * 2.0 * half_length + 4.0 / 3.0 * np.pi * radius**3),
    )


def fit_capsule(points, box: ProxyFit | None = None) -> ProxyFit:
    """A capsule around `points` (n, 3) along a refined principal axis.

    The principal axis of a sampled rod is tilted by the sampling noise, so the long
    axis of the tight box (`box`, a `fit_box` result for the same points, fitted here
    when not given) is tried too; the smaller capsule's axis is then refined by tilts
    (`_CAPSULE_TILTS`) and the smallest capsule kept.
    """
    points = _validated_points(points)
    candidates = _candidate_points(points)
    box = _fit_box(points, candidates) if box is None else box
    return _fit_capsule(points, candidates, box)


def _fit_capsule(points: np.ndarray, candidates: np.ndarray, box: ProxyFit) -> ProxyFit:
    """`fit_capsule` of points (n, 3) whose `_candidate_points` are `candidates` (m, 3)."""
    axes = [principal_axes(candidates)[:, 0], box.rotation[:, int(np.argmax(box.half_extents))]]
    best = min((_capsule_along(points, candidates, axis) for axis in axes), key=_volume)
    refined_axis = _refined_capsule_axis(candidates, best.rotation[:, 2])
    return min((best, _capsule_along(points, candidates, refined_axis)), key=_volume)


def _volume(fit: ProxyFit) -> float:
    return fit.volume


def _capsule_volumes(candidates: np.ndarray, axes: np.ndarray) -> np.ndarray:
    """Volumes (k,) of the capsules along each of `axes` (k, 3) around `candidates`
    (m, 3), as `_capsule_along` makes them (minimal circle, shortest segment)."""
    local = candidates @ frames_from_axes(axes)  # (k, m, 3)
    circle_centers = _minimal_ball_centres(local[:, :, :2])
    radial_squared = np.sum((local[:, :, :2] - circle_centers[:, None]) ** 2, axis=2)
    radius_squared = radial_squared.max(axis=1)
    reach = np.sqrt(np.maximum(radius_squared[:, None] - radial_squared, 0.0))
    top = np.max(local[:, :, 2] - reach, axis=1)
    bottom = np.min(local[:, :, 2] + reach, axis=1)
    length = np.maximum(top - bottom, 0.0)
    radius = np.sqrt(radius_squared)
    return np.pi * radius_squared * length + 4.0 / 3.0 * np.pi * radius**3


def _refined_capsule_axis(candidates: np.ndarray, axis: np.ndarray) -> np.ndarray:
    """A unit axis (3,) near `axis` whose capsule around `candidates` (m, 3) is smaller:
    tilts towards the four directions perpendicular to the axis, coarse to fine, the
    four measured together."""
    best = _capsule_volumes(candidates, axis[None])[0]
    for angle in _CAPSULE_TILTS:
        for _ in range(_CAPSULE_TILT_STEPS):
            frame = frames_from_axes(axis[None])[0]
            sides = np.stack((frame[:, 0], -frame[:, 0], frame[:, 1], -frame[:, 1]))
            tilts = axis * np.cos(angle) + sides * np.sin(angle)
            tilts /= np.linalg.norm(tilts, axis=1, keepdims=True)
            volumes = _capsule_volumes(candidates, tilts)
            k = int(np.argmin(volumes))
            if volumes[k] >= best:
                break
            best, axis = volumes[k], tilts[k]
    return axis


def fit_auto(points) -> ProxyFit:
    """The smallest-volume of the box, sphere and capsule fits of `points` (n, 3).

    Ties go to the box, then the sphere (the cheaper shapes to test).
    """
    points = _validated_points(points)
    candidates = _candidate_points(points)
    box = _fit_box(points, candidates)
    if _is_own_hull(box, candidates):
        return box
    fits = [box, _fit_sphere(points, candidates), _fit_capsule(points, candidates, box)]
    return min(fits, key=_volume)


FITTERS = {
    "AUTO": fit_auto,
    "BOX": fit_box,
    "SPHERE": fit_sphere,
    "CAPSULE": fit_capsule,
}


def fit_shape(points, shape: str) -> ProxyFit:
    """Fit `shape` ('AUTO', 'BOX', 'SPHERE' or 'CAPSULE') to points (n, 3)."""
    try:
        fitter = FITTERS[shape]
    except KeyError:
        raise ValueError(f"unknown proxy shape {shape!r}") from None
    return fitter(points)


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
