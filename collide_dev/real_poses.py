"""Poses as Blender makes them and a containment oracle, for fuzzing mesh mode on real
elements (tests/core/test_mesh_fzk.py, benchmarks/fuzz_ifc.py). A mesh is (vertices (v, 3),
triangles (t, 3)), as `prepare_mesh` takes it."""

from __future__ import annotations

import numpy as np

from collide_addon.core.contact import contact_epsilon
from collide_addon.core.mesh import APART, I_INSIDE_J, J_INSIDE_I


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


def nudged_pair(
    rng: np.random.Generator, vertices: np.ndarray, far: float, angle: float, move: float
) -> np.ndarray:
    """World matrices (2, 4, 4) of a pair of elements as Blender would hold them: the
    first by a float32 parent chain (`blender_pose`), the second by the same chain
    after a `nudge` about one of the first's `vertices` (v, 3), multiplied in float32."""
    world = blender_pose(rng, far)
    moved = nudge(rng, vertices[rng.integers(len(vertices))], angle, move)
    return np.array([world, (world.astype(np.float32) @ moved.astype(np.float32)).astype(float)])


# Gaps between an element and its copy (`copy_beside`): touching, within rounding, within
# the contact epsilon, and clearly apart.
COPY_GAPS = (0.0, 1e-7, 1e-5, 1e-3, 0.05, 0.3, 0.8)


def copy_beside(rng: np.random.Generator, vertices: np.ndarray) -> np.ndarray:
    """World matrices (2, 4, 4) of an element of `vertices` (v, 3) and a copy of it beside
    it along a world axis, across one of `COPY_GAPS`, both moved along that axis by a
    multiple of a step (0.9, 2.7, 13.1 or 101.3), as an array of copies places them; the
    offsets rounded to float32 half of the time, as Blender stores locations. Facing
    faces of copies have triangles exactly opposite each other: ties that rounding
    decides."""
    axis = rng.integers(3)
    base = float(rng.choice([0.0, 0.9, 2.7, 13.1, 101.3])) * rng.integers(0, 9)
    matrices = np.array([np.eye(4), np.eye(4)])
    matrices[0, axis, 3] = base
    matrices[1, axis, 3] = base + np.ptp(vertices[:, axis]) + float(rng.choice(COPY_GAPS))
    if rng.random() < 0.5:
        matrices[:, :3, 3] = matrices[:, :3, 3].astype(np.float32)
    return matrices


def contact_reach(first: np.ndarray, second: np.ndarray, matrices: np.ndarray) -> tuple:
    """The largest |coordinate| of two elements' vertices (v, 3) each posed by its matrix
    of `matrices` (2, 4, 4), and the contact epsilon there: (reach, epsilon)."""
    reach = float(
        np.abs(np.concatenate([posed(first, matrices[0]), posed(second, matrices[1])])).max()
    )
    return reach, float(contact_epsilon([[reach, 0.0, 0.0]])[0])


def shrunk_inside(rng: np.random.Generator, outer: np.ndarray, inner: np.ndarray) -> np.ndarray:
    """A matrix (4, 4) that turns the element of vertices `inner` (v, 3) at random,
    shrinks it to 5-120% of the least width of the element of vertices `outer`, and puts
    it near that one's middle."""
    size = np.ptp(outer, axis=0)
    scale = rng.uniform(0.05, 1.2) * size.min() / max(np.ptp(inner, axis=0).max(), 1e-9)
    rotation = np.linalg.qr(rng.normal(size=(3, 3)))[0]
    matrix = np.eye(4)
    matrix[:3, :3] = rotation * np.sign(np.linalg.det(rotation)) * scale
    middle = outer.mean(axis=0) + rng.normal(size=3) * size * 0.2
    matrix[:3, 3] = middle - matrix[:3, :3] @ inner.mean(axis=0)
    return matrix


def containment_disagreement(relation: int, outer: tuple, inner: tuple, matrix: np.ndarray):
    """Why `relation` (`mesh_contacts`' APART, I_INSIDE_J or J_INSIDE_I, of the pair
    (outer, inner)) disagrees with the winding numbers of each element's vertices about
    the other's surface, the `outer` mesh in place and the `inner` mesh posed by `matrix`
    (4, 4); None where it agrees. The surfaces do not meet, so each connected part lies
    wholly inside or outside: contained means a vertex inside, apart none."""
    inner_world = posed(inner[0], matrix)
    inner_in = np.abs(winding_numbers(inner_world, outer[0][outer[1]])) > 0.5
    outer_in = np.abs(winding_numbers(outer[0], inner_world[inner[1]])) > 0.5
    agrees = (
        (relation == J_INSIDE_I and inner_in.any())
        or (relation == I_INSIDE_J and outer_in.any())
        or (relation == APART and not (inner_in.any() or outer_in.any()))
    )
    if agrees:
        return None
    return (
        f"relation {relation}, winding inside: {int(inner_in.sum())} inner,"
        f" {int(outer_in.sum())} outer vertices"
    )


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
