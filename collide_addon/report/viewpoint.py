"""Where a camera looks at a clash from: shared by the BCF viewpoints and the rendered
thumbnails, so that both show the clash the same way."""

from __future__ import annotations

import math

import numpy as np

# Vertical field of view; BCF 2.1 allows 45 to 60 degrees.
FIELD_OF_VIEW_DEGREES = 60.0
# The camera looks down at the clash from the front right, like Blender's default view.
VIEW_FROM = np.array([1.0, -1.0, 0.8]) / np.linalg.norm([1.0, -1.0, 0.8])


# The smallest radius a close view frames, so that a touching clash between two specks
# still shows something around its point.
MIN_FOCUS_RADIUS = 1e-3
# A close view frames this much more than the smaller object, which would otherwise
# touch the picture's edges.
FOCUS_MARGIN = 1.25


def reach(point, bounds) -> float:
    """Distance from `point` (3,) to the farthest corner of `bounds` (2, 3) [lo, hi]."""
    point = np.asarray(point, dtype=np.float64)
    lo, hi = np.asarray(bounds, dtype=np.float64)
    return float(np.linalg.norm(np.maximum(np.abs(hi - point), np.abs(lo - point))))


def focus_radius(point, witnesses, object_bounds) -> float:
    """Radius of the sphere around the clash point that a close view of the clash frames:
    the smaller object whole (the one whose bounds have the shorter diagonal) and both
    witness points, so that a pipe through a long wall fills the view rather than
    vanishing in a picture of the whole wall.

    point: (3,); witnesses: (2, 3) the points on a and on b
    object_bounds: (2, 2, 3) [lo, hi] world bounds of a and of b
    returns: the radius with FOCUS_MARGIN, at least MIN_FOCUS_RADIUS
    """
    point = np.asarray(point, dtype=np.float64)
    object_bounds = np.asarray(object_bounds, dtype=np.float64).reshape(2, 2, 3)
    diagonals = np.linalg.norm(object_bounds[:, 1] - object_bounds[:, 0], axis=1)
    smaller = object_bounds[int(np.argmin(diagonals))]
    spread = np.linalg.norm(np.asarray(witnesses, dtype=np.float64) - point, axis=1).max()
    return max(FOCUS_MARGIN * max(reach(point, smaller), float(spread)), MIN_FOCUS_RADIUS)


def camera_for_clash(
    point,
    bounds,
    field_of_view_degrees: float = FIELD_OF_VIEW_DEGREES,
    radius: float | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A perspective camera aimed at `point` from the front right and above, far enough
    that the sphere of `radius` around `point` fills the field of view.

    point: (3,); bounds: (2, 3) [lo, hi] of the two objects
    radius: by default the sphere around the point reaching the farthest corner of
        `bounds` (at least 10 cm, so that a tiny clash is framed): both objects whole
    returns: (position, unit direction, unit up vector), each (3,) float64
    """
    point = np.asarray(point, dtype=np.float64)
    if radius is None:
        radius = max(reach(point, bounds), 0.1)
    distance = radius / math.sin(math.radians(field_of_view_degrees) / 2)
    direction = -VIEW_FROM
    up = np.array([0.0, 0.0, 1.0]) - direction[2] * direction
    return point + VIEW_FROM * distance, direction, up / np.linalg.norm(up)
