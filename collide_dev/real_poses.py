"""Poses as Blender makes them and a containment oracle, for fuzzing mesh mode on real
elements (tests/core/test_mesh_fzk.py, benchmarks/fuzz_ifc.py)."""

from __future__ import annotations

import numpy as np


def turn(axis, degrees: float) -> np.ndarray:
    """(3, 3) rotation by `degrees` about `axis` (3,)."""
    x, y, z = np.asarray(axis, dtype=np.float64) / np.linalg.norm(axis)
    cross = np.array([[0.0, -z, y], [z, 0.0, -x], [-y, x, 0.0]])
    angle = np.radians(degrees)
    return np.eye(3) + np.sin(angle) * cross + (1.0 - np.cos(angle)) * cross @ cross


def blender_pose(rng: np.random.Generator, far: float) -> np.ndarray:
    """A world matrix (4, 4) as a chain of three parents multiplies it in float32: turns by
    multiples of 5 or 45 degrees about a world axis, offsets up to `far`."""
    matrix = np.eye(4, dtype=np.float32)
    for _ in range(3):
        local = np.eye(4)
        degrees = rng.choice([5.0, 45.0]) * rng.integers(-8, 9)
        local[:3, :3] = turn(np.eye(3)[rng.integers(3)], degrees)
        local[:3, 3] = rng.uniform(-far, far, 3)
        matrix = matrix @ local.astype(np.float32)
    return matrix.astype(np.float64)


def nudge(rng: np.random.Generator, pivot: np.ndarray, angle: float, move: float) -> np.ndarray:
    """A small rigid move (4, 4): a turn by `angle` radians times a normal draw about a
    random world axis through `pivot` (3,), then a move of `move` times a normal draw
    along each axis."""
    matrix = np.eye(4)
    matrix[:3, :3] = turn(np.eye(3)[rng.integers(3)], np.degrees(rng.normal() * angle))
    matrix[:3, 3] = pivot - matrix[:3, :3] @ pivot + rng.normal(size=3) * move
    return matrix


def posed(vertices: np.ndarray, matrix: np.ndarray) -> np.ndarray:
    """Vertices (v, 3) moved by an affine matrix (4, 4)."""
    return vertices @ matrix[:3, :3].T + matrix[:3, 3]


def winding_numbers(points: np.ndarray, corners: np.ndarray) -> np.ndarray:
    """Generalised winding numbers (p,) of points (p, 3) about triangles (t, 3, 3): the
    solid angles the triangles span seen from each point, over 4 pi (1 inside a closed
    surface, 0 outside). Points are taken 64 at a time."""
    numbers = np.zeros(len(points))
    for start in range(0, len(points), 64):
        here = points[start : start + 64, None]
        a, b, c = (corners[None, :, k] - here for k in range(3))
        la, lb, lc = (np.linalg.norm(v, axis=2) for v in (a, b, c))
        triple = np.sum(a * np.cross(b, c), axis=2)
        below = (
            la * lb * lc
            + np.sum(a * b, axis=2) * lc
            + np.sum(b * c, axis=2) * la
            + np.sum(c * a, axis=2) * lb
        )
        numbers[start : start + 64] = 2.0 * np.arctan2(triple, below).sum(axis=1) / (4.0 * np.pi)
    return numbers
