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
# Iterations of the Badoiu-Clarkson move towards the farthest point.
_SPHERE_ITERATIONS = 200
# The capsule's axis is refined by tilting it by these angles (radians, coarse to fine,
# at most _CAPSULE_TILT_STEPS tilts each), keeping tilts that shrink the capsule: the
# starting axes (principal, box's longest) differ between poses of the same points by
# up to 20% of volume, the refined axis by a few percent. The search measures circles
# with fewer iterations; the final capsule uses the full count.
_CAPSULE_TILTS = (0.08, 0.02, 0.005)
_CAPSULE_TILT_STEPS = 4
_CAPSULE_SEARCH_ITERATIONS = 30


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
    projections = centered @ _SEARCH_DIRECTIONS.T
    extreme = np.concatenate((projections.argmax(axis=0), projections.argmin(axis=0)))
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
    projections = np.einsum("mi,kij->kmj", points, rotations)
    extents = projections.max(axis=1) - projections.min(axis=1)
    floor = _FLAT_EXTENT_RATIO * extents.max(axis=1, keepdims=True)
    return np.prod(np.maximum(extents, floor), axis=1)


def _refine_rotation(
    points: np.ndarray, rotation: np.ndarray, steps: list[np.ndarray]
) -> tuple[np.ndarray, float]:
    """Local search over orientations from `rotation`: turn about the current box axes
    by each step in turn, repeating a step while it makes the box smaller."""
    volume = _box_volumes(points, rotation[None])[0]
    for turns in steps:
        while True:
            trials = rotation @ turns
            volumes = _box_volumes(points, trials)
            best = int(volumes.argmin())
            if not volumes[best] < volume * (1.0 - 1e-12):
                break
            rotation, volume = trials[best], volumes[best]
    return rotation, volume


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
    candidates = _candidate_points(points)
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
    coarse = [
        _refine_rotation(candidates, start, _SEARCH_STEPS[:_COARSE_LEVELS]) for start in starts
    ]
    coarse.sort(key=lambda result: result[1])
    refined = [
        _refine_rotation(candidates, rotation, _SEARCH_STEPS[_COARSE_LEVELS:])
        for rotation, _ in coarse[:_REFINED_STARTS]
    ]
    best_rotation = min(refined, key=lambda result: result[1])[0]
    return _box_from_rotation(points, best_rotation)


def _enclosing_ball(
    points: np.ndarray, candidates: np.ndarray, iterations: int = _SPHERE_ITERATIONS
) -> tuple[np.ndarray, float]:
    """Near-minimal ball around points (n, d): returns centre (d,) and radius.

    Ritter's ball, then `iterations` Badoiu-Clarkson steps towards the farthest candidate
    point; the better centre is kept and the radius measured over all points.
    """
    first = candidates[0]
    second = candidates[np.argmax(np.sum((candidates - first) ** 2, axis=1))]
    third = candidates[np.argmax(np.sum((candidates - second) ** 2, axis=1))]
    center, radius = (second + third) / 2.0, np.linalg.norm(third - second) / 2.0
    for point in candidates:
        distance = np.linalg.norm(point - center)
        if distance > radius:
            radius = (radius + distance) / 2.0
            center = center + (distance - radius) / distance * (point - center)
    ritter = center
    for iteration in range(1, iterations + 1):
        farthest = candidates[np.argmax(np.sum((candidates - center) ** 2, axis=1))]
        center = center + (farthest - center) / (iteration + 1)
    options = np.stack((ritter, center))
    radii = np.sqrt(np.max(np.sum((points[None] - options[:, None]) ** 2, axis=2), axis=1))
    best = int(radii.argmin())
    return options[best], float(radii[best])


def fit_sphere(points) -> ProxyFit:
    """A near-minimal sphere enclosing `points` (n, 3)."""
    points = _validated_points(points)
    center, radius = _enclosing_ball(points, _candidate_points(points))
    return ProxyFit(
        kind=KIND_SPHERE,
        center=center,
        rotation=np.eye(3),
        half_extents=np.zeros(3),
        radius=radius,
        volume=float(4.0 / 3.0 * np.pi * radius**3),
    )


def _capsule_along(
    points: np.ndarray,
    candidates: np.ndarray,
    axis: np.ndarray,
    iterations: int = _SPHERE_ITERATIONS,
) -> ProxyFit:
    """The capsule along direction `axis` (3,) with the smallest radius that encloses
    the points, then the shortest segment for that radius (the circle from
    `_enclosing_ball` with `iterations`)."""
    helper = np.eye(3)[int(np.argmin(np.abs(axis)))]
    first = np.cross(axis, helper)
    first /= np.linalg.norm(first)
    rotation = np.column_stack((first, np.cross(axis, first), axis))
    local = points @ rotation
    circle_center, radius = _enclosing_ball(
        local[:, :2], (candidates @ rotation)[:, :2], iterations
    )
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
    box = fit_box(points) if box is None else box
    axes = [principal_axes(candidates)[:, 0], box.rotation[:, int(np.argmax(box.half_extents))]]
    best = min((_capsule_along(points, candidates, axis) for axis in axes), key=_volume)
    refined_axis = _refined_capsule_axis(candidates, best.rotation[:, 2])
    return min((best, _capsule_along(points, candidates, refined_axis)), key=_volume)


def _volume(fit: ProxyFit) -> float:
    return fit.volume


def _refined_capsule_axis(candidates: np.ndarray, axis: np.ndarray) -> np.ndarray:
    """A unit axis (3,) near `axis` whose capsule around `candidates` (m, 3) is smaller:
    tilts towards the four directions perpendicular to the axis, coarse to fine."""

    def volume(direction):
        return _capsule_along(candidates, candidates, direction, _CAPSULE_SEARCH_ITERATIONS).volume

    best = volume(axis)
    for angle in _CAPSULE_TILTS:
        for _ in range(_CAPSULE_TILT_STEPS):
            frame = frames_from_axes(axis[None])[0]
            tilts = [
                axis * np.cos(angle) + sign * frame[:, k] * np.sin(angle)
                for k in (0, 1)
                for sign in (1.0, -1.0)
            ]
            volumes = [volume(tilt) for tilt in tilts]
            k = int(np.argmin(volumes))
            if volumes[k] >= best:
                break
            best, axis = volumes[k], tilts[k] / np.linalg.norm(tilts[k])
    return axis


def fit_auto(points) -> ProxyFit:
    """The smallest-volume of the box, sphere and capsule fits of `points` (n, 3).

    Ties go to the box, then the sphere (the cheaper shapes to test).
    """
    points = _validated_points(points)
    box = fit_box(points)
    if _is_own_hull(box, _candidate_points(points)):
        return box
    fits = [box, fit_sphere(points), fit_capsule(points, box)]
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
