"""Seeded synthetic scenes for the demo, the tests and the benchmarks."""

from __future__ import annotations

import numpy as np

from collide_addon.core import ShapeBatch


def random_rotations(rng: np.random.Generator, count: int) -> np.ndarray:
    """Uniformly distributed rotations (from normalised Gaussian quaternions): (count, 3, 3)."""
    quaternions = rng.normal(size=(count, 4))
    quaternions /= np.linalg.norm(quaternions, axis=1, keepdims=True)
    w, x, y, z = quaternions.T
    return np.stack(
        [
            np.stack([1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)], -1),
            np.stack([2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)], -1),
            np.stack([2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)], -1),
        ],
        -2,
    )


def mixed_scene(rng: np.random.Generator, count: int, side: float | None = None) -> ShapeBatch:
    """`count` shapes, a third each boxes, spheres, capsules, uniform in a cube [0, side]^3.

    Boxes: half-extents 0.2-1.0, random rotation; spheres: radius 0.2-1.0; capsules:
    length 0-2, radius 0.1-0.5. The default side, (8 count)^(1/3), keeps the density
    (and so the number of contacts per object) the same at every count.
    """
    side = (8.0 * count) ** (1.0 / 3.0) if side is None else side
    box_count = count // 3
    sphere_count = count // 3
    capsule_count = count - box_count - sphere_count
    boxes = ShapeBatch.boxes(
        rng.uniform(0, side, (box_count, 3)),
        random_rotations(rng, box_count),
        rng.uniform(0.2, 1.0, (box_count, 3)),
    )
    spheres = ShapeBatch.spheres(
        rng.uniform(0, side, (sphere_count, 3)), rng.uniform(0.2, 1.0, sphere_count)
    )
    starts = rng.uniform(0, side, (capsule_count, 3))
    directions = rng.normal(size=(capsule_count, 3))
    directions *= (rng.uniform(0, 2, capsule_count) / np.linalg.norm(directions, axis=1))[:, None]
    capsules = ShapeBatch.capsules(
        starts, starts + directions, rng.uniform(0.1, 0.5, capsule_count)
    )
    return ShapeBatch.concat([boxes, spheres, capsules])
