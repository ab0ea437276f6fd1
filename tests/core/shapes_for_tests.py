"""Random shapes and rotations for the core tests, and independent references for
containment in shapes and in fits."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import strategies as st

from collide_addon.core import KIND_BOX, KIND_CAPSULE, KIND_SPHERE, ShapeBatch
from collide_dev.real_poses import turn  # noqa: F401  (the tests' rotations by angle)


def rotation_from_quaternion(quaternion) -> np.ndarray:
    """(4,) or (n, 4) quaternion (w, x, y, z), any length > 0 -> (3, 3) or (n, 3, 3)."""
    q = np.asarray(quaternion, dtype=np.float64)
    q = q / np.linalg.norm(q, axis=-1, keepdims=True)
    w, x, y, z = np.moveaxis(q, -1, 0)
    return np.stack(
        [
            np.stack([1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)], -1),
            np.stack([2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)], -1),
            np.stack([2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)], -1),
        ],
        -2,
    )


coordinate = st.floats(-4.0, 4.0, allow_nan=False, allow_infinity=False)
point = st.tuples(coordinate, coordinate, coordinate)
quaternion = st.tuples(*[st.floats(-1, 1) for _ in range(4)]).filter(
    lambda q: sum(c * c for c in q) > 0.01
)


def shape_strategies(smallest: float):
    """(box, sphere, capsule) strategies with sizes >= smallest (0 allows degenerate shapes)."""
    size = st.floats(smallest, 2.0, allow_nan=False, allow_infinity=False)
    box = st.builds(
        lambda c, q, e: ShapeBatch.boxes([c], [rotation_from_quaternion(q)], [e]),
        point,
        quaternion,
        st.tuples(size, size, size),
    )
    sphere = st.builds(lambda c, r: ShapeBatch.spheres([c], [r]), point, size)
    capsule = st.builds(
        lambda a, b, r: ShapeBatch.capsules([a], [b], [r]), point, point, st.floats(smallest, 1.5)
    )
    return box, sphere, capsule


box_shape, sphere_shape, capsule_shape = shape_strategies(0.0)
any_shape = st.one_of(box_shape, sphere_shape, capsule_shape)
# coal's GJK/EPA needs solid shapes: flat boxes and zero radii make it fail
# (it returns -1.8e308), so the agreement tests use shapes of some thickness.
solid_shapes = shape_strategies(0.05)


def shape_pair(first, second) -> ShapeBatch:
    return ShapeBatch.concat([first, second])


def distance_inside(batch: ShapeBatch, index: int, points: np.ndarray) -> np.ndarray:
    """How far each point (m, 3) lies outside shape `index` (<= 0 inside), by direct formulas."""
    center = batch.centers[index]
    radius = batch.radii[index]
    kind = batch.kinds[index]
    if kind == KIND_SPHERE:
        return np.linalg.norm(points - center, axis=1) - radius
    if kind == KIND_BOX:
        local = (points - center) @ batch.rotations[index]
        outside = np.maximum(np.abs(local) - batch.half_extents[index], 0)
        return np.linalg.norm(outside, axis=1)
    assert kind == KIND_CAPSULE
    starts, ends = batch.capsule_segments()
    a, b = starts[index], ends[index]
    ab = b - a
    t = np.clip((points - a) @ ab / max(ab @ ab, 1e-300), 0, 1) if ab @ ab > 0 else 0.0
    closest = a + np.multiply.outer(t, ab) if np.ndim(t) else np.broadcast_to(a, points.shape)
    return np.linalg.norm(points - closest, axis=1) - radius


def random_rotation(rng: np.random.Generator) -> np.ndarray:
    """A uniformly random proper rotation (3, 3)."""
    q, r = np.linalg.qr(rng.normal(size=(3, 3)))
    q = q * np.sign(np.diag(r))
    if np.linalg.det(q) < 0:
        q[:, 0] = -q[:, 0]
    return q


def outside_distance(fit, points: np.ndarray) -> np.ndarray:
    """How far each point (n, 3) lies outside the fitted shape (a `ProxyFit`): (n,),
    <= 0 inside."""
    local = (points - fit.center) @ fit.rotation
    if fit.kind == KIND_BOX:
        return np.max(np.abs(local) - fit.half_extents, axis=1)
    if fit.kind == KIND_SPHERE:
        return np.linalg.norm(local, axis=1) - fit.radius
    half_length = fit.half_extents[2]
    nearest = np.zeros_like(local)
    nearest[:, 2] = np.clip(local[:, 2], -half_length, half_length)
    return np.linalg.norm(local - nearest, axis=1) - fit.radius


def assert_proper_rotation(rotation: np.ndarray) -> None:
    """Orthonormal with determinant +1, to 1e-12."""
    np.testing.assert_allclose(rotation.T @ rotation, np.eye(3), atol=1e-12)
    assert np.linalg.det(rotation) == pytest.approx(1.0, abs=1e-12)
