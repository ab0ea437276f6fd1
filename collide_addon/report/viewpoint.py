"""Where a camera looks at a clash from: shared by the BCF viewpoints and the rendered
thumbnails, so that both show the clash the same way."""

from __future__ import annotations

import math

import numpy as np

# Vertical field of view; BCF 2.1 allows 45 to 60 degrees.
FIELD_OF_VIEW_DEGREES = 60.0
# The camera looks down at the clash from the front right, like Blender's default view.
VIEW_FROM = np.array([1.0, -1.0, 0.8]) / np.linalg.norm([1.0, -1.0, 0.8])


def camera_for_clash(
    point, bounds, field_of_view_degrees: float = FIELD_OF_VIEW_DEGREES
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A perspective camera aimed at `point` from the front right and above, far enough
    that the sphere around `bounds` fills the field of view.

    point: (3,); bounds: (2, 3) [lo, hi] of the two objects
    returns: (position, unit direction, unit up vector), each (3,) float64
    """
    point = np.asarray(point, dtype=np.float64)
    lo, hi = np.asarray(bounds, dtype=np.float64)
    # The bounds' sphere around the clash point, at least 10 cm so a tiny clash is framed.
    radius = max(float(np.linalg.norm(np.maximum(np.abs(hi - point), np.abs(lo - point)))), 0.1)
    distance = radius / math.sin(math.radians(field_of_view_degrees) / 2)
    direction = -VIEW_FROM
    up = np.array([0.0, 0.0, 1.0]) - direction[2] * direction
    return point + VIEW_FROM * distance, direction, up / np.linalg.norm(up)
