"""The camera on a clash, shared by BCF viewpoints and thumbnails."""

from __future__ import annotations

import numpy as np
import pytest

from collide_addon.report.viewpoint import camera_for_clash


def test_camera_for_clash_frames_the_bounds():
    point = np.array([1.0, 2.0, 3.0])
    bounds = np.array([[0.0, 0.0, 0.0], [4.0, 4.0, 4.0]])
    position, direction, up = camera_for_clash(point, bounds, 60.0)
    assert np.isclose(np.linalg.norm(direction), 1) and np.isclose(np.linalg.norm(up), 1)
    assert np.isclose(direction @ up, 0)
    to_point = point - position
    assert np.allclose(to_point / np.linalg.norm(to_point), direction)
    assert up[2] > 0
    corners = np.array([[x, y, z] for x in (0, 4) for y in (0, 4) for z in (0, 4)], dtype=float)
    rays = corners - position
    angles = np.degrees(np.arccos(rays @ direction / np.linalg.norm(rays, axis=1)))
    assert (angles <= 30.0 + 1e-9).all()
    tiny_position, _, _ = camera_for_clash(point, [point, point], 60.0)
    assert np.linalg.norm(tiny_position - point) == pytest.approx(0.2)
