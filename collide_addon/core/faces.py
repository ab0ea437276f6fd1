"""Triangles of a mesh whose faces have three or four corners, split the way Blender
splits them, computed from arrays Blender hands over in bulk.

Blender's own triangles (`Mesh.loop_triangles`) are read item by item, about half a
second for the 5 million triangles of 1,000 meshes of a few thousand vertices; the
face of each triangle (`Mesh.loop_triangle_polygons`), the vertex of each face corner
(the `.corner_vert` attribute) and the positions are plain arrays, read in
milliseconds, and give the same triangles here. Faces of five or more corners are cut
by Blender's polygon filling, which is not repeated here: such meshes are read the slow
way.
"""

from __future__ import annotations

import numpy as np

from .grid import run_starts


def _cross(first: tuple, second: tuple) -> tuple:
    """Cross products of vectors given as three component columns each: contiguous
    columns gathered per component make the quads' test twice as fast as rows through
    `columns.cross_rows` (0.24-0.25 s against 0.44-0.50 s for `bench_fit.py`'s 1,000
    meshes), with the same float32 operations."""
    return (
        first[1] * second[2] - first[2] * second[1],
        first[2] * second[0] - first[0] * second[2],
        first[0] * second[1] - first[1] * second[0],
    )


def quads_flipped(corners: tuple) -> np.ndarray:
    """Whether each of q quads is split along its second diagonal (corners 1 and 3)
    rather than its first (corners 0 and 2): (q,) bool. corners: the four corners, each
    as its x, y and z columns (q,) float32.

    Blender's test, in float32 like Blender's: the first diagonal is kept where the
    second and fourth corners lie on opposite sides of it, seen from the first corner
    (the normals of the triangles 0-1-2 and 0-3-2 point opposite ways), so that a
    concave quad is cut inside itself.
    """
    origin, second, third, fourth = corners
    to_third = tuple(third[k] - origin[k] for k in range(3))
    across = _cross(tuple(second[k] - origin[k] for k in range(3)), to_third)
    back = _cross(tuple(fourth[k] - origin[k] for k in range(3)), to_third)
    return across[0] * back[0] + across[1] * back[1] + across[2] * back[2] > 0


def splits_faces(triangle_faces: np.ndarray, corner_count: int) -> bool:
    """Whether `split_faces` makes the triangles of a mesh whose triangles' faces are
    `triangle_faces` (t,) int32 and whose faces have `corner_count` corners in all:
    faces of three and four corners only, in ascending order.

    A cheap look at the faces alone, so that a reader can keep the arrays and split them
    when the triangles are first needed."""
    triangle_faces = np.asarray(triangle_faces, dtype=np.int32)
    count = len(triangle_faces)
    if count == 0:
        return corner_count == 0
    if triangle_faces[0] != 0 or (triangle_faces[1:] < triangle_faces[:-1]).any():
        return False
    per_face = np.bincount(triangle_faces)
    return bool(
        per_face.max() <= 2 and per_face.min() >= 1 and corner_count == count + 2 * len(per_face)
    )


def split_faces(
    triangle_faces: np.ndarray, corner_vertices: np.ndarray, positions: np.ndarray
) -> np.ndarray | None:
    """The triangles (t, 3) int32, vertex indices, of a mesh whose faces have three or
    four corners, in Blender's order and winding (`Mesh.loop_triangles`); None where a
    face has more corners or the arrays do not describe such a mesh (`splits_faces`).

    triangle_faces: (t,) int32, the face of each triangle, ascending (a face of n
        corners has n - 2 triangles)
    corner_vertices: (c,) int32, the vertex of each face corner, face after face
    positions: (v, 3) float32, the vertices as Blender stores them (float64 holding
        such values gives the same triangles)

    A triangle face is its own triangle; a quad's triangles are corners 0-1-2 and 0-2-3,
    or 0-1-3 and 1-2-3 where `quads_flipped`.
    """
    triangle_faces = np.asarray(triangle_faces, dtype=np.int32)
    corner_vertices = np.asarray(corner_vertices, dtype=np.int32)
    positions = np.asarray(positions, dtype=np.float32)
    if not splits_faces(triangle_faces, len(corner_vertices)):
        return None
    count = len(triangle_faces)
    if count == 0:
        return np.zeros((0, 3), dtype=np.int32)
    # Each face has two corners more than triangles, so face f starts at corner
    # s = k - r + 2 f, k its triangle of rank r (0 or 1) in the face, and that triangle
    # is corners s, s + 1 + r, s + 2 + r.
    second = np.arange(1, count + 1, dtype=np.int32) + 2 * triangle_faces
    is_second = ~run_starts(triangle_faces)
    corners = np.empty((count, 3), dtype=np.int32)
    corners[:, 0] = second - 1 - is_second
    corners[:, 1] = second
    corners[:, 2] = second + 1
    # A quad's first triangle is the one before a second one.
    quad_first = np.flatnonzero(is_second) - 1
    quad_start = corners[quad_first, 0]
    # Component rows, so that each corner's coordinates are gathered contiguously.
    coordinates = np.ascontiguousarray(positions.T)
    flipped = quad_first[
        quads_flipped(
            [np.take(coordinates, corner_vertices[quad_start + k], axis=1) for k in range(4)]
        )
    ]
    corners[flipped, 2] += 1  # 0-1-2 becomes 0-1-3
    corners[flipped + 1, 0] += 1  # 0-2-3 becomes 1-2-3
    return corner_vertices[corners]
