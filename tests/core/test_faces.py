"""Triangles of faces of three and four corners, split as Blender splits them (Blender
itself is compared in tests/blender/test_live_mesh.py)."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from collide_addon.core.faces import quads_flipped, split_faces, splits_faces

DART = np.array([[0, 0, 0], [2, 0, 0], [0.5, 0.5, 0], [0, 2, 0]], dtype=np.float32)


def columns(quads: np.ndarray) -> list:
    """(q, 4, 3) quads as the four corners' x, y, z columns."""
    return [tuple(quads[:, corner].T) for corner in range(4)]


def mesh_arrays(faces: list[tuple]) -> tuple[np.ndarray, np.ndarray]:
    """Blender's face-of-each-triangle and vertex-of-each-corner arrays of `faces`."""
    triangle_faces = np.repeat(np.arange(len(faces)), [len(face) - 2 for face in faces])
    corner_vertices = np.concatenate([np.array(face) for face in faces])
    return triangle_faces.astype(np.int32), corner_vertices.astype(np.int32)


def test_triangles_and_convex_quads_keep_their_corner_order():
    positions = np.array(
        [[0, 0, 0], [1, 0, 0], [1, 1, 0], [0, 1, 0], [2, 0, 0], [3, 0, 0], [2, 1, 0]],
        dtype=np.float32,
    )
    faces = [(4, 5, 6), (0, 1, 2, 3), (1, 2, 3, 0), (6, 4, 5)]
    triangles = split_faces(*mesh_arrays(faces), positions)
    expected = [(4, 5, 6), (0, 1, 2), (0, 2, 3), (1, 2, 3), (1, 3, 0), (6, 4, 5)]
    np.testing.assert_array_equal(triangles, expected)
    assert triangles.dtype == np.int32


def test_a_concave_quad_is_cut_along_its_inner_diagonal():
    # The dart's reflex corner is vertex 2: the diagonal through it is the inner one.
    faces = [tuple(np.roll(np.arange(4), turn)) for turn in range(4)]
    triangles = split_faces(*mesh_arrays(faces), DART).reshape(4, 2, 3)
    for quad in triangles:
        shared = set(quad[0]) & set(quad[1])
        assert 2 in shared and 0 in shared
    orders = np.array(faces)
    assert quads_flipped(columns(DART[orders])).tolist() == [False, True, False, True]


@given(
    corners=st.lists(
        st.tuples(st.floats(-10, 10), st.floats(-10, 10)), min_size=4, max_size=4, unique=True
    )
)
@settings(max_examples=200, deadline=None)
def test_a_simple_planar_quad_is_cut_inside_itself(corners):
    """The two triangles of a simple (not self-crossing) planar quad have the quad's
    area: the diagonal runs inside it, whether it is convex or concave."""
    quad = np.array([(x, y, 0.0) for x, y in corners], dtype=np.float32)
    edges = [(quad[k], quad[(k + 1) % 4]) for k in range(4)]

    def cross2(a, b):
        return float(a[0]) * float(b[1]) - float(a[1]) * float(b[0])

    def crossing(first, second):
        (p, q), (r, s) = first, second
        return (
            cross2(q - p, r - p) * cross2(q - p, s - p) < 0
            and cross2(s - r, p - r) * cross2(s - r, q - r) < 0
        )

    if crossing(edges[0], edges[2]) or crossing(edges[1], edges[3]):
        return  # self-crossing: no inside to cut in
    x, y = quad[:, 0].astype(float), quad[:, 1].astype(float)
    area = abs(np.dot(x, np.roll(y, -1)) - np.dot(y, np.roll(x, -1))) / 2
    # Nearly flat quads (a corner on a diagonal) leave the side to rounding.
    if area < 1e-3 * max(1.0, float(np.abs(quad).max())) ** 2:
        return
    triangles = split_faces(*mesh_arrays([(0, 1, 2, 3)]), quad)
    corners3 = quad[triangles].astype(float)
    halves = np.cross(corners3[:, 1] - corners3[:, 0], corners3[:, 2] - corners3[:, 0])[:, 2] / 2
    assert abs(halves).sum() == pytest.approx(area, rel=1e-4)


def test_faces_of_five_corners_and_broken_arrays_are_left_to_blender():
    positions = np.zeros((6, 3), dtype=np.float32)
    pentagon = mesh_arrays([(0, 1, 2, 3, 4)])
    assert split_faces(*pentagon, positions) is None
    assert not splits_faces(pentagon[0], len(pentagon[1]))
    triangle_faces, corner_vertices = mesh_arrays([(0, 1, 2), (2, 3, 4, 5)])
    assert splits_faces(triangle_faces, len(corner_vertices))
    for faces, corners in (
        (triangle_faces[::-1], corner_vertices),
        (triangle_faces, corner_vertices[:-1]),
        (triangle_faces + 1, corner_vertices),
    ):
        assert not splits_faces(faces, len(corners))
        assert split_faces(faces, corners, positions) is None
    assert splits_faces(np.zeros(0, np.int32), 0)
    assert not splits_faces(np.zeros(0, np.int32), 3)
    empty = split_faces(np.zeros(0, np.int32), np.zeros(0, np.int32), positions)
    assert empty.shape == (0, 3)


def test_float64_positions_holding_float32_values_split_alike():
    """The add-on keeps the vertices as float64 and splits from them later."""
    rough = np.random.default_rng(3).normal(size=(400, 4, 3)).astype(np.float32)
    faces = [tuple(range(4 * k, 4 * k + 4)) for k in range(400)]
    stored = split_faces(*mesh_arrays(faces), rough.reshape(-1, 3))
    widened = split_faces(*mesh_arrays(faces), rough.reshape(-1, 3).astype(np.float64))
    np.testing.assert_array_equal(stored, widened)
