"""Viewport geometry: line segments that draw a batch of shapes as wireframes.

Imports numpy, `constants` and `shapes` only; the Blender overlay (`blender/draw.py`)
uploads the segments as they come.
"""

from __future__ import annotations

import numpy as np

from .constants import CUBE_CORNER_SIGNS, KIND_BOX, KIND_CAPSULE, KIND_SPHERE
from .shapes import ShapeBatch

# The 12 edges of a box, as pairs of rows of CUBE_CORNER_SIGNS differing on one axis.
_BOX_EDGES = np.array(
    [
        (first, second)
        for first in range(8)
        for second in range(first + 1, 8)
        if np.sum(CUBE_CORNER_SIGNS[first] != CUBE_CORNER_SIGNS[second]) == 1
    ]
)


_PLANES = ((0, 1), (1, 2), (0, 2))


def wireframe_segments(batch: ShapeBatch, circle_segments: int = 24) -> np.ndarray:
    """Line segments that draw each shape as a wireframe: (m, 2, 3) float64.

    Boxes: their 12 edges. Spheres: three great circles. Capsules: the circles at both
    ends of the segment, half great circles over each end in two planes, and four side
    lines. `circle_segments` (even, so that half circles end on the rims) sets how many
    segments make a circle.
    """
    angles = np.linspace(0.0, 2.0 * np.pi, circle_segments + 1)
    circle = np.stack((np.cos(angles), np.sin(angles)), axis=1)  # (s + 1, 2)
    pieces = [
        *_box_edges(batch, np.flatnonzero(batch.kinds == KIND_BOX)),
        *_sphere_circles(batch, np.flatnonzero(batch.kinds == KIND_SPHERE), circle),
        *_capsule_lines(batch, np.flatnonzero(batch.kinds == KIND_CAPSULE), circle),
    ]
    if not pieces:
        return np.zeros((0, 2, 3))
    return np.concatenate(pieces)


def _box_edges(batch: ShapeBatch, boxes: np.ndarray) -> list[np.ndarray]:
    """The 12 edges of each box in `boxes` (b,): [(12 b, 2, 3)], or [] for none."""
    if not len(boxes):
        return []
    local = CUBE_CORNER_SIGNS[None] * batch.half_extents[boxes, None, :]  # (b, 8, 3)
    corners = np.einsum("bij,bkj->bki", batch.rotations[boxes], local)
    corners += batch.centers[boxes, None, :]
    return [corners[:, _BOX_EDGES].reshape(-1, 2, 3)]


def _rings(batch, indices, plane_axes, radii, centers, circle) -> np.ndarray:
    """Circles of `radii` (k,) around `centers` (k, 3) in the planes spanned by the
    rotation columns `plane_axes` of shapes `indices` (k,): (k s, 2, 3) segments."""
    first = batch.rotations[indices][:, :, plane_axes[0]]
    second = batch.rotations[indices][:, :, plane_axes[1]]
    points = (
        circle[None, :, 0:1] * first[:, None] + circle[None, :, 1:2] * second[:, None]
    ) * radii[:, None, None] + centers[:, None]
    return np.stack((points[:, :-1], points[:, 1:]), axis=2).reshape(-1, 2, 3)


def _sphere_circles(batch: ShapeBatch, spheres: np.ndarray, circle) -> list[np.ndarray]:
    """Three great circles per sphere in `spheres` (k,)."""
    if not len(spheres):
        return []
    radii, centers = batch.radii[spheres], batch.centers[spheres]
    return [_rings(batch, spheres, plane, radii, centers, circle) for plane in _PLANES]


def _capsule_lines(batch: ShapeBatch, capsules: np.ndarray, circle) -> list[np.ndarray]:
    """End circles, outer half great circles and four side lines per capsule."""
    if not len(capsules):
        return []
    pieces = []
    segments_per_circle = len(circle) - 1
    radii = batch.radii[capsules]
    axis = batch.rotations[capsules, :, 2]
    starts, ends = batch.take(capsules).capsule_segments()
    for sign, end in ((-1.0, starts), (1.0, ends)):
        pieces.append(_rings(batch, capsules, (0, 1), radii, end, circle))
        for plane in ((0, 2), (1, 2)):
            # Half of a great circle through the pole, on the outer side of each end.
            ring = _rings(batch, capsules, plane, radii, end, circle).reshape(
                len(capsules), segments_per_circle, 2, 3
            )
            outward = np.einsum("ckei,ci->cke", ring - end[:, None, None], axis)
            keep = np.all(sign * outward >= -1e-12 * radii[:, None, None], axis=2)
            pieces.append(ring[keep])
    for column in (0, 1):
        side = batch.rotations[capsules, :, column] * radii[:, None]
        for sign in (-1.0, 1.0):
            pieces.append(np.stack((starts + sign * side, ends + sign * side), axis=1))
    return pieces
