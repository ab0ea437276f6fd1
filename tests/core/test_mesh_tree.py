"""What `core.mesh` prepares once per mesh to go faster. Its triangle trees: walking them
finds what trying every triangle pair and every triangle finds, so `mesh_contacts` gives
the same answer, bit for bit, whatever the leaf size (a tree of one leaf, as for every
mesh of a few triangles, is the brute-force product). Its connected parts: one ray
decides whether a part apart from the other surface lies inside it."""

from __future__ import annotations

import dataclasses
from itertools import combinations
from unittest import mock

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from collide_addon.core import (
    APART,
    I_INSIDE_J,
    PosedMeshes,
    PreparedMeshes,
    mesh_contacts,
    prepare_mesh,
)
from collide_addon.core import mesh as mesh_module
from collide_addon.core.columns import dot_rows
from collide_addon.core.fit import translated_copies
from collide_dev.mesh_shapes import box_mesh, heightfield, torus, uv_sphere
from tests.core.shapes_for_tests import turn

ONE_LEAF = 1 << 30


def random_shape(rng: np.random.Generator):
    """A closed mesh of random resolution with jittered vertices, or an open soup of
    random triangles: (vertices (v, 3), triangles (t, 3))."""
    kind = rng.integers(0, 4)
    if kind == 0:
        vertices, triangles = uv_sphere(
            rng.uniform(0.3, 1.5), rng.integers(3, 14), rng.integers(3, 18)
        )
    elif kind == 1:
        vertices, triangles = torus(
            1.0, rng.uniform(0.1, 0.5), rng.integers(3, 20), rng.integers(3, 10)
        )
    elif kind == 2:
        vertices, triangles = box_mesh(-rng.uniform(0.1, 1.0, 3), rng.uniform(0.1, 1.0, 3))
    else:
        count = rng.integers(1, 60)
        centres = rng.uniform(-1.0, 1.0, (count, 1, 3))
        vertices = (centres + rng.normal(scale=0.3, size=(count, 3, 3))).reshape(-1, 3)
        triangles = np.arange(3 * count).reshape(-1, 3)
    vertices = vertices + rng.normal(scale=0.02, size=vertices.shape)
    return vertices, triangles


def random_matrix(rng: np.random.Generator) -> np.ndarray:
    matrix = np.eye(4)
    rotation = np.linalg.qr(rng.normal(size=(3, 3)))[0]
    matrix[:3, :3] = rotation @ np.diag(rng.uniform(0.5, 1.5, 3))
    matrix[:3, 3] = rng.uniform(-1.5, 1.5, 3)
    return matrix


def assert_same_contacts(first, second):
    np.testing.assert_array_equal(first.relation, second.relation)
    np.testing.assert_array_equal(first.open_pair, second.open_pair)
    np.testing.assert_array_equal(first.distance, second.distance)
    np.testing.assert_array_equal(first.point_i, second.point_i)
    np.testing.assert_array_equal(first.point_j, second.point_j)


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2**32 - 1), st.sampled_from([2, 3, 8]))
def test_trees_give_what_every_triangle_pair_gives(seed, leaf_size):
    rng = np.random.default_rng(seed)
    shapes = [random_shape(rng) for _ in range(rng.integers(2, 5))]
    matrices = np.array([random_matrix(rng) for _ in shapes])
    pairs = np.array([(i, j) for i in range(len(shapes)) for j in range(len(shapes)) if i != j])
    max_distance = float(rng.choice([0.0, 0.05, 0.5, 10.0]))
    brute = mesh_contacts(
        [prepare_mesh(*shape, leaf_size=ONE_LEAF) for shape in shapes],
        matrices,
        pairs,
        max_distance,
    )
    # Every other mesh with leaves of 2: leaves of different sizes share one call.
    trees = mesh_contacts(
        [
            prepare_mesh(*shape, leaf_size=2 if k % 2 else leaf_size)
            for k, shape in enumerate(shapes)
        ],
        matrices,
        pairs,
        max_distance,
    )
    assert_same_contacts(trees, brute)


def test_tree_order_is_a_permutation_split_into_halves_by_depth():
    vertices, triangles = torus(1.0, 0.3, 24, 12)
    mesh = prepare_mesh(vertices, triangles, leaf_size=4)
    assert sorted(mesh.tree_order) == list(range(len(triangles)))
    # 576 triangles, at most 4 per leaf: 2**8 leaves of 2 or 3 triangles.
    assert mesh.tree_depth == 8
    assert prepare_mesh(vertices, triangles, leaf_size=ONE_LEAF).tree_depth == 0
    with pytest.raises(ValueError, match="leaf_size"):
        prepare_mesh(vertices, triangles, leaf_size=1)


def test_parts_are_welded_connected_pieces():
    first_vertices, first_triangles = box_mesh([0.0] * 3, [1.0] * 3)
    ring_vertices, ring_triangles = torus(1.0, 0.2, 12, 6)
    mesh = prepare_mesh(
        np.concatenate([first_vertices, ring_vertices + 5.0, first_vertices + 10.0]),
        np.concatenate([first_triangles, ring_triangles + 8, first_triangles + 80]),
    )
    parts = mesh.vertex_parts
    assert len(np.unique(parts)) == 3
    assert len(np.unique(parts[:8])) == len(np.unique(parts[8:80])) == 1
    assert len(np.unique(parts[80:])) == 1


def test_a_part_inside_counts_and_a_part_in_the_hole_does_not():
    ring = prepare_mesh(*torus(1.0, 0.4, 48, 24))
    in_tube = box_mesh([0.95, -0.05, -0.05], [1.05, 0.05, 0.05])
    in_hole = box_mesh([-0.1] * 3, [0.1] * 3)
    both = prepare_mesh(
        np.concatenate([in_hole[0], in_tube[0]]), np.concatenate([in_hole[1], in_tube[1] + 8])
    )
    identity = np.tile(np.eye(4), (2, 1, 1))
    alone = mesh_contacts([prepare_mesh(*in_tube), ring], identity, [[0, 1]], 0.05)
    together = mesh_contacts([both, ring], identity, [[0, 1]], 0.05)
    assert alone.relation[0] == together.relation[0] == I_INSIDE_J
    assert together.distance[0] == alone.distance[0] < -0.3
    np.testing.assert_array_equal(together.point_i, alone.point_i)
    np.testing.assert_array_equal(together.point_j, alone.point_j)
    hole = mesh_contacts([prepare_mesh(*in_hole), ring], identity, [[0, 1]], 0.05)
    assert hole.relation[0] == APART


def keep_every_point(world, points, target):
    return np.ones(len(points), dtype=bool)


def sheared_matrix(rng: np.random.Generator) -> np.ndarray:
    """`random_matrix` with a shear, or now and then flattened to a plane (singular)."""
    matrix = random_matrix(rng)
    matrix[:3, :3] = matrix[:3, :3] @ (np.eye(3) + np.triu(rng.uniform(-0.5, 0.5, (3, 3)), 1))
    if rng.random() < 0.15:
        matrix[:3, rng.integers(0, 3)] = 0.0
    return matrix


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2**32 - 1))
def test_leaving_out_points_beyond_the_local_box_changes_no_answer(seed):
    """The inside stage leaves out the points outside the other mesh's posed local box;
    measuring them anyway gives the same contacts, bit for bit (turned, stretched,
    sheared and flattened meshes, far from the origin too)."""
    rng = np.random.default_rng(seed)
    shapes = [random_shape(rng) for _ in range(rng.integers(2, 5))]
    matrices = np.array([sheared_matrix(rng) for _ in shapes])
    matrices[:, :3, 3] += rng.choice([0.0, 1e4])
    meshes = [prepare_mesh(*shape) for shape in shapes]
    pairs = np.array([(i, j) for i in range(len(shapes)) for j in range(len(shapes)) if i != j])
    max_distance = float(rng.choice([0.0, 0.05, 0.5]))
    filtered = mesh_contacts(meshes, matrices, pairs, max_distance)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(mesh_module, "_in_local_bounds", keep_every_point)
        every_point = mesh_contacts(meshes, matrices, pairs, max_distance)
    assert_same_contacts(filtered, every_point)


def test_points_beyond_a_turned_boxs_faces_are_left_out_and_those_inside_kept():
    """A cube turned 45 degrees about z: its world bounds hold points its own box does
    not (by the corners), which the filter leaves out; points inside it, on its faces and
    any point of a flattened mesh (no inside to be in) are kept."""
    vertices, triangles = box_mesh(-np.ones(3), np.ones(3))
    turned = np.eye(4)
    turned[:2, :2] = [[np.sqrt(0.5), -np.sqrt(0.5)], [np.sqrt(0.5), np.sqrt(0.5)]]
    turned[:3, 3] = (100.0, 0.0, 0.0)
    flat = np.diag([1.0, 1.0, 0.0, 1.0])
    world = mesh_module._pose(
        [prepare_mesh(vertices, triangles)] * 2, np.array([turned, flat]), np.arange(2)
    )
    corner_of_the_world_box = (100.0 + 1.3, 1.3, 0.0)
    inside = (100.0 + 0.9, 0.0, 0.5)
    on_a_face = (100.0 + np.sqrt(0.5), np.sqrt(0.5), 0.0)
    points = np.array([corner_of_the_world_box, inside, on_a_face, corner_of_the_world_box])
    kept = mesh_module._in_local_bounds(world, points, np.array([0, 0, 0, 1]))
    np.testing.assert_array_equal(kept, [False, True, True, True])


def test_boxes_and_coarse_spheres_are_convex_and_rings_open_shells_and_l_shapes_are_not():
    box = box_mesh((-1.0, -2.0, -0.5), (1.0, 2.0, 0.5))
    far_box = (box[0] + 1e3).astype(np.float32).astype(np.float64), box[1]
    open_box = box[0], box[1][2:]
    # An L-shaped prism: two boxes side by side, welded where they meet.
    low = box_mesh((0.0, 0.0, 0.0), (2.0, 1.0, 1.0))
    high = box_mesh((0.0, 1.0, 0.0), (1.0, 2.0, 1.0))
    l_shape = np.vstack([low[0], high[0]]), np.vstack([low[1], high[1] + len(low[0])])
    flat = np.array([[0.0, 0, 0], [1, 0, 0], [0, 1, 0]]), np.array([[0, 1, 2], [0, 2, 1]])
    sphere = uv_sphere(0.5, 4, 8)
    # Its last vertex is the bottom pole, whose fan comes last: pushed in past its ring
    # (at z = -0.4904), only the last planes tested find the dent.
    finer = uv_sphere(0.5, 16, 32)
    dented_pole = finer[0].copy()
    dented_pole[-1, 2] = -0.485
    # A corner pushed in along the diagonal: a dent, unless it is as small as rounding.
    corner = np.argmax(box[0].sum(axis=1))
    dented, rounded = box[0].copy(), box[0].copy()
    dented[corner] -= 1e-4
    rounded[corner] -= 4e-7
    convex = {
        "box": box,
        "box 1 km out, float32": far_box,
        "box dented by 1e-4": (dented, box[1]),
        "box dented by 4e-7": (rounded, box[1]),
        "sphere": sphere,
        "sphere, float32": (sphere[0].astype(np.float32).astype(np.float64), sphere[1]),
        "ring": torus(1.0, 0.3, 6, 4),
        "fine sphere": uv_sphere(0.5, 8, 16),  # 224 triangles
        "finer sphere": finer,  # 960 triangles, Blender's default UV sphere's
        "finer sphere, its pole dented": (dented_pole, finer[1]),
        # 3,008 triangles: more than are tested.
        "finest sphere": uv_sphere(0.5, 32, 48),
        "open box": open_box,
        "two boxes": l_shape,
        "flat": flat,
    }
    assert {name: prepare_mesh(*shape).convex for name, shape in convex.items()} == {
        "box": True,
        "box 1 km out, float32": True,
        "box dented by 1e-4": False,
        "box dented by 4e-7": True,
        "sphere": True,
        "sphere, float32": True,
        "ring": False,
        "fine sphere": True,
        "finer sphere": True,
        "finer sphere, its pole dented": False,
        "finest sphere": False,
        "open box": False,
        "two boxes": False,
        "flat": False,
    }


def as_not_convex(mesh):
    return dataclasses.replace(mesh, convex=False)


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2**32 - 1))
def test_depths_in_convex_meshes_from_their_face_planes_are_those_the_rays_find(seed):
    """A point in a convex mesh is as deep as its least height below the faces' planes,
    which `mesh_contacts` measures without rays: the same relations and distances as
    the rays and depth searches of any mesh give (turned, sheared, mirrored and
    flattened meshes, far from the origin too)."""
    rng = np.random.default_rng(seed)
    convex = [
        box_mesh(-rng.uniform(0.1, 1.0, 3), rng.uniform(0.1, 1.0, 3)),
        # Up to 224 triangles, as Blender's default UV sphere.
        uv_sphere(rng.uniform(0.3, 1.5), rng.integers(3, 9), rng.integers(3, 17)),
    ]
    shapes = convex + [random_shape(rng) for _ in range(rng.integers(1, 4))]
    matrices = np.array([sheared_matrix(rng) for _ in shapes])
    matrices[rng.random(len(shapes)) < 0.3, :3, 0] *= -1.0
    matrices[:, :3, 3] += rng.choice([0.0, 1e4])
    meshes = [prepare_mesh(*shape) for shape in shapes]
    assert meshes[0].convex and meshes[1].convex
    pairs = np.array([(i, j) for i in range(len(shapes)) for j in range(len(shapes)) if i != j])
    planes = mesh_contacts(meshes, matrices, pairs, 0.05)
    rays = mesh_contacts([as_not_convex(mesh) for mesh in meshes], matrices, pairs, 0.05)
    np.testing.assert_array_equal(planes.relation, rays.relation)
    scale = max(1.0, float(np.abs(matrices[:, :3, 3]).max()))
    # Two convex meshes that penetrate are as deep as a move that separates them (the
    # least, for polyhedra of few directions), which no point inside exceeds: not
    # measured by points.
    convex_shapes = np.array([mesh.convex for mesh in meshes])
    by_points = ~convex_shapes[pairs].all(axis=1) | (planes.distance >= 0)
    np.testing.assert_allclose(
        planes.distance[by_points], rays.distance[by_points], rtol=1e-9, atol=1e-12 * scale
    )
    assert np.all(planes.distance[~by_points] <= rays.distance[~by_points] + 1e-9 * scale)


def convex_contacts(meshes, matrices, pairs, every: bool):
    """`mesh_contacts` at 0.05 and the number of points whose depths in convex meshes it
    measured; with `every`, `_offer_convex_depths` given no bounds (every point)."""
    offer, measure = mesh_module._offer_convex_depths, mesh_module._convex_depths
    measured = []

    def counted(world, points, target, planes):
        measured.append(len(points))
        return measure(world, points, target, planes)

    def unbounded(world, deepest, pair, points, target, upper, epsilon):
        offer(world, deepest, pair, points, target, np.full(len(points), np.inf), epsilon)

    with (
        mock.patch.object(mesh_module, "_convex_depths", counted),
        mock.patch.object(mesh_module, "_offer_convex_depths", unbounded if every else offer),
    ):
        contacts = mesh_contacts(meshes, matrices, pairs, 0.05)
    return contacts, sum(measured)


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 2**32 - 1))
def test_points_whose_room_cannot_beat_the_depth_found_change_nothing(seed):
    """`_offer_convex_depths` measures a convex pair's points deepest bound first and
    leaves out those whose bound (the room to the mesh's bounds) falls below the depth
    found: the same contacts bit for bit as measuring every point (deep crossings of
    turned and sheared spheres and boxes)."""
    rng = np.random.default_rng(seed)
    convex = [
        uv_sphere(rng.uniform(0.3, 1.5), rng.integers(3, 9), rng.integers(3, 17)),
        box_mesh(-rng.uniform(0.1, 1.0, 3), rng.uniform(0.1, 1.0, 3)),
    ]
    meshes = [prepare_mesh(*convex[k % 2]) for k in range(8)]
    matrices = np.array([sheared_matrix(rng) for _ in meshes])
    matrices[:, :3, 3] = rng.normal(scale=0.5, size=(len(meshes), 3))
    pairs = np.array([(i, j) for i in range(len(meshes)) for j in range(i + 1, len(meshes))])
    every, _ = convex_contacts(meshes, matrices, pairs, every=True)
    # Only draws where some pair crosses measure depths (a few draw every mesh apart).
    assume((every.distance < 0).any())
    pruned, _ = convex_contacts(meshes, matrices, pairs, every=False)
    for field in ("distance", "point_i", "point_j", "relation"):
        np.testing.assert_array_equal(getattr(pruned, field), getattr(every, field))


def test_a_spheres_points_near_its_partners_bounds_are_not_measured():
    """Two 224-triangle spheres of radius 1, 1.2 apart: of the points of each inside the
    other, those near the other's bounds cannot be as deep as the deepest, and are left
    out; the same depth."""
    sphere = prepare_mesh(*uv_sphere(1.0, 8, 16))
    assert sphere.convex
    matrices = np.tile(np.eye(4), (2, 1, 1))
    matrices[1, 0, 3] = 1.2
    pairs = np.array([[0, 1]])
    pruned, pruned_points = convex_contacts([sphere, sphere], matrices, pairs, every=False)
    every, every_points = convex_contacts([sphere, sphere], matrices, pairs, every=True)
    assert pruned.distance[0] == every.distance[0] < -0.7
    assert pruned_points < 0.5 * every_points


@pytest.mark.parametrize("mirrored", [False, True])
def test_a_box_inside_a_turned_box_is_as_deep_as_its_nearest_face(mirrored):
    outer, inner = (
        box_mesh(-2.0 * np.ones(3), 2.0 * np.ones(3)),
        box_mesh(-0.1 * np.ones(3), 0.1 * np.ones(3)),
    )
    turn = np.eye(4)
    turn[:2, :2] = [[np.cos(0.5), -np.sin(0.5)], [np.sin(0.5), np.cos(0.5)]]
    turn[:3, 0] *= -1.0 if mirrored else 1.0
    turn[:3, 3] = (300.0, -20.0, 5.0)
    placed = turn @ np.array([[1, 0, 0, 1.5], [0, 1, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1.0]])
    meshes = [prepare_mesh(*inner), prepare_mesh(*outer)]
    assert meshes[0].convex and meshes[1].convex
    found = mesh_contacts(meshes, np.array([placed, turn]), [[0, 1]], 0.0)
    assert found.relation[0] == I_INSIDE_J
    assert found.distance[0] == pytest.approx(-0.6, abs=1e-9)
    # The inner box's face nearest the outer's, and its foot on that face.
    point, foot = (
        np.linalg.solve(turn, np.append(at, 1.0))[:3]
        for at in found.point_i[0:1].tolist() + found.point_j[0:1].tolist()
    )
    assert point[0] == pytest.approx(1.4, abs=1e-9)
    assert foot[0] == pytest.approx(2.0, abs=1e-9)
    np.testing.assert_allclose(point[1:], foot[1:], atol=1e-9)


def test_points_on_one_ray_line_share_its_crossings_and_each_counts_those_beyond_it():
    """A hollow cube (a cavity inside a solid one) and the solid cube, both as wide in
    x, y and z, so that the rays run along x: points on one line, outside, in the wall,
    in the cavity, on the outer face and beyond, each get their own parity and nearest
    crossing; the same points in the solid cube are on lines of their own."""
    outer_vertices, outer_triangles = box_mesh([-2.0] * 3, [2.0] * 3)
    cavity_vertices, cavity_triangles = box_mesh([-1.0] * 3, [1.0] * 3)
    hollow = prepare_mesh(
        np.concatenate([outer_vertices, cavity_vertices]),
        np.concatenate([outer_triangles, cavity_triangles[:, ::-1] + 8]),
    )
    solid = prepare_mesh(outer_vertices, outer_triangles)
    world = mesh_module._pose([hollow, solid], np.array([np.eye(4)] * 2), np.arange(2))
    along = np.array([-3.0, -1.5, 0.0, 1.5, 2.0, 3.0])
    points = np.column_stack([along, np.full(6, 0.3), np.full(6, -0.2)])
    points = np.concatenate([points, points, [[0.5, 1.5, 0.0]]])
    target = np.array([0] * 6 + [1] * 6 + [0])
    inside, nearest = mesh_module._parity_inside(world, points, target)
    hollow_inside = [False, True, False, True, False, False]
    solid_inside = [False, True, True, True, False, False]
    np.testing.assert_array_equal(inside, [*hollow_inside, *solid_inside, True])
    hollow_nearest = [1.0, 0.5, 1.0, 0.5, 0.0, 1.0]
    solid_nearest = [1.0, 0.5, 2.0, 0.5, 0.0, 1.0]
    # Grown by the rounding slack of a turned ray (1e-12 of the largest coordinate).
    np.testing.assert_allclose(nearest, [*hollow_nearest, *solid_nearest, 1.5], rtol=0, atol=1e-11)


def test_rays_run_through_a_turned_walls_thickness():
    """A hollow wall turned by 37 degrees about the vertical, stored in float32 world
    coordinates (a building turned on its site): its rays run along its thickness, not
    along a world axis whose line meets its long faces' wide world bounds, and find the
    same insides as the unturned wall: in its material, in its cavity, outside."""
    outer_vertices, outer_triangles = box_mesh([0.0, 0.0, 0.0], [4.0, 0.4, 2.7])
    cavity_vertices, cavity_triangles = box_mesh([0.5, 0.1, 0.1], [3.5, 0.3, 2.6])
    vertices = np.concatenate([outer_vertices, cavity_vertices])
    triangles = np.concatenate([outer_triangles, cavity_triangles[:, ::-1] + 8])
    turned = turn([0, 0, 1], 37.0)
    offset = np.array([120.0, -40.0, 3.0])
    stored = (vertices @ turned.T + offset).astype(np.float32).astype(np.float64)
    wall = prepare_mesh(stored, triangles)
    # A turned cube is no thinner along its own axes than along the ones it is stored
    # in: its rays stay on a stored axis.
    cube = prepare_mesh(box_mesh([0.0] * 3, [1.0] * 3)[0] @ turned.T + offset, outer_triangles)
    world = mesh_module._pose([wall, cube], np.array([np.eye(4)] * 2), np.arange(2))
    assert abs(wall.ray_grid.frame[2] @ turned[:, 1]) == pytest.approx(1.0, abs=1e-6)
    np.testing.assert_array_equal(np.abs(cube.ray_grid.frame), np.eye(3)[[0, 1, 2]])
    # In the wall's own coordinates: material, cavity, outside on either side and beyond
    # its end, on lines across the thickness and along the length.
    local = np.array(
        [[0.2, 0.2, 1.0], [2.0, 0.05, 1.0], [2.0, 0.2, 1.0], [2.0, 0.35, 2.0],
         [2.0, -0.3, 1.0], [2.0, 0.7, 1.0], [4.5, 0.2, 1.0], [3.7, 0.2, 0.05]]
    )  # fmt: skip
    expected = [True, True, False, True, False, False, False, True]
    inside, nearest = mesh_module._parity_inside(world, local @ turned.T + offset, np.zeros(8, int))
    np.testing.assert_array_equal(inside, expected)
    # The nearest crossing along the thickness: 0.05 m to a face from the material
    # between the outer face and the cavity.
    assert nearest[1] == pytest.approx(0.05, abs=1e-5)


def winding_numbers(points: np.ndarray, corners: np.ndarray) -> np.ndarray:
    """The generalised winding number (k,) of a closed mesh's triangles (t, 3, 3) around
    points (k, 3): the triangles' solid angles seen from each point over 4 pi (Van
    Oosterom and Strackee), 1 inside an outward mesh and 0 outside. An oracle that
    casts no ray."""
    a, b, c = (corners[None, :, k] - points[:, None] for k in range(3))
    la, lb, lc = (np.linalg.norm(v, axis=2) for v in (a, b, c))
    numerator = np.einsum("kti,kti->kt", a, np.cross(b, c))
    denominator = (
        la * lb * lc
        + np.einsum("kti,kti->kt", a, b) * lc
        + np.einsum("kti,kti->kt", b, c) * la
        + np.einsum("kti,kti->kt", c, a) * lb
    )
    return (2.0 * np.arctan2(numerator, denominator)).sum(axis=1) / (4.0 * np.pi)


def hollow_box(rng: np.random.Generator):
    """A closed box with a box-shaped cavity: two shells, the inner one turned inwards."""
    outer_vertices, triangles = box_mesh([-1.0] * 3, [1.0] * 3)
    cavity_vertices, _ = box_mesh(-rng.uniform(0.2, 0.8, 3), rng.uniform(0.2, 0.8, 3))
    return (
        np.concatenate([outer_vertices, cavity_vertices]),
        np.concatenate([triangles, triangles[:, ::-1] + 8]),
    )


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2**32 - 1))
def test_ray_parity_in_posed_meshes_is_what_the_winding_number_says(seed):
    """Rays cast in each mesh's own frame through its `RayGrid`, the points taken there
    by the inverse of its matrix, find a point inside exactly where the generalised
    winding number of the posed mesh is 1 (spheres, tori, boxes, hollow and thin boxes,
    turned, stretched, sheared, mirrored, far from the origin too; points within a
    millionth of the size of the surface are left out). A singular matrix leaves nothing
    inside."""
    rng = np.random.default_rng(seed)
    kind = rng.integers(0, 4)
    if kind == 0:
        shape = uv_sphere(rng.uniform(0.3, 1.5), rng.integers(3, 14), rng.integers(3, 18))
    elif kind == 1:
        shape = torus(1.0, rng.uniform(0.1, 0.5), rng.integers(3, 20), rng.integers(3, 10))
    elif kind == 2:
        shape = hollow_box(rng)
    else:
        # A wall: rays along its thickness, through its own face frame when turned.
        shape = box_mesh([0.0] * 3, [rng.uniform(2.0, 6.0), rng.uniform(0.05, 0.4), 2.5])
    mesh = prepare_mesh(*shape)
    matrix = sheared_matrix(rng)
    if rng.random() < 0.3:
        matrix[:3, 0] *= -1.0
    matrix[:3, 3] += rng.choice([0.0, 1e4])
    world = mesh_module._pose([mesh], matrix[None], np.arange(1))
    corners = world.corners
    lo, hi = corners.min(axis=(0, 1)), corners.max(axis=(0, 1))
    points = rng.uniform(lo - 0.1 * (hi - lo), hi + 0.1 * (hi - lo), (300, 3))
    # Points on shared lines as well: a column above each of a few points.
    points[:40, :2] = np.repeat(points[40:50, :2], 4, axis=0)
    inside, nearest = mesh_module._parity_inside(world, points, np.zeros(len(points), dtype=int))
    closest = np.array(
        [
            mesh_module.closest_on_triangles(np.repeat(point[None], len(corners), 0), corners)
            for point in points
        ]
    )
    distance = np.linalg.norm(closest - points[:, None], axis=2).min(axis=1)
    if not np.isfinite(world.to_local).all():
        assert not inside.any()
        return
    clear = distance > 1e-6 * max(1.0, float(np.abs(hi - lo).max()))
    winding = np.abs(winding_numbers(points[clear], corners))
    np.testing.assert_array_equal(inside[clear], winding > 0.5)
    # The nearest crossing along the ray is on the surface: no nearer than its distance.
    assert (nearest[inside] >= distance[inside] * (1 - 1e-9)).all()


def test_a_mesh_of_long_thin_triangles_gets_a_coarser_grid_and_the_same_insides():
    """A slab whose faces are fanned from one corner (long thin triangles lying over
    most of the grid) keeps its grid to `_GRID_ENTRIES_PER_TRIANGLE` entries per triangle,
    and its rays find what the winding number finds."""
    count = 60
    angles = np.linspace(0.0, 0.5 * np.pi, count)
    rim = np.column_stack([4.0 * np.cos(angles), 4.0 * np.sin(angles)])
    outline = np.concatenate([[[0.0, 0.0]], rim])
    vertices = np.concatenate(
        [np.column_stack([outline, np.zeros(len(outline))]),
         np.column_stack([outline, np.full(len(outline), 0.2)])]
    )  # fmt: skip
    ring = len(outline)
    fan = np.array([[0, k + 1, k] for k in range(1, ring - 1)])
    sides = np.array(
        [[k, (k + 1) % ring, (k + 1) % ring + ring] for k in range(ring)]
        + [[k, (k + 1) % ring + ring, k + ring] for k in range(ring)]
    )
    triangles = np.concatenate([fan, fan[:, ::-1] + ring, sides])
    mesh = prepare_mesh(vertices, triangles)
    assert mesh.closed
    grid = mesh.ray_grid
    assert len(grid.cell_triangles) <= mesh_module._GRID_ENTRIES_PER_TRIANGLE * len(triangles)
    world = mesh_module._pose([mesh], np.eye(4)[None], np.arange(1))
    rng = np.random.default_rng(5)
    points = rng.uniform([-0.5, -0.5, -0.1], [4.5, 4.5, 0.3], (400, 3))
    inside, _ = mesh_module._parity_inside(world, points, np.zeros(len(points), dtype=int))
    winding = np.abs(winding_numbers(points, world.corners))
    clear = np.abs(winding - np.round(winding)) < 1e-6
    np.testing.assert_array_equal(inside[clear], winding[clear] > 0.5)


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2**32 - 1))
def test_triangles_apart_along_a_face_normal_are_farther_apart_than_the_margin(seed):
    """Triangle pairs that `_apart_along_faces` leaves out (apart along either mesh's posed
    face normal) are farther apart than the margin (`_triangle_distance`), for meshes
    turned about the vertical and stored in float32 world coordinates (a building
    turned on its site) or posed by turned, stretched and sheared matrices."""
    rng = np.random.default_rng(seed)
    shapes = [random_shape(rng) for _ in range(2)]
    if rng.random() < 0.5:
        turned = turn([0, 0, 1], rng.uniform(0.0, 90.0))
        offset = rng.uniform(-1.0, 1.0, 3) * rng.choice([1.0, 1e3])
        shapes = [
            ((vertices @ turned.T + offset).astype(np.float32).astype(np.float64), triangles)
            for vertices, triangles in shapes
        ]
        matrices = np.tile(np.eye(4), (2, 1, 1))
    else:
        matrices = np.array([sheared_matrix(rng) for _ in shapes])
    meshes = [prepare_mesh(*shape) for shape in shapes]
    world = mesh_module._pose(meshes, matrices, np.arange(2))
    first, second = np.meshgrid(
        np.arange(world.triangle_count[0]),
        world.triangle_start[1] + np.arange(world.triangle_count[1]),
        indexing="ij",
    )
    first, second = first.reshape(-1), second.reshape(-1)
    grow = float(rng.choice([0.0, 0.01, 0.1]))
    pair = np.zeros(len(first), dtype=np.int64)
    apart = mesh_module._apart_along_faces(
        world, np.array([[0, 1]]), pair, first, second, grow + world.slack
    )
    distance, _, _ = mesh_module._triangle_distance(
        world.corners[first[apart]], world.corners[second[apart]]
    )
    assert (distance > grow).all()
    # A few rows, fewer than either mesh's triangles, measured alone decide as among all.
    few = rng.choice(len(first), size=min(len(first), 5), replace=False)
    np.testing.assert_array_equal(
        mesh_module._apart_along_faces(
            world, np.array([[0, 1]]), pair[few], first[few], second[few], grow + world.slack
        ),
        apart[few],
    )


@pytest.mark.parametrize("gap", [0.05, 0.0])
def test_a_turned_walls_triangles_are_apart_from_a_block_in_front_of_it(gap):
    """A 10 m wall turned by 30 degrees and stored in float32 world coordinates, and a
    half-metre block `gap` in front of its face: the world bounds of the wall's long
    triangles meet the block's, but along the wall's face normal the wall reaches 0.3 m
    and the block starts at 0.3 m + gap. 5 cm away every pair is apart; touching, the
    wall's front face and the block's back face are not."""
    turned = turn([0, 0, 1], 30.0)
    _, triangles = box_mesh([0.0] * 3, [1.0] * 3)
    wall_vertices, _ = box_mesh([0.0, 0.0, 0.0], [10.0, 0.3, 3.0])
    block_vertices, _ = box_mesh([5.0, 0.3 + gap, 1.0], [5.5, 0.8 + gap, 1.5])
    meshes = [
        prepare_mesh((vertices @ turned.T).astype(np.float32), triangles)
        for vertices in (wall_vertices, block_vertices)
    ]
    world = mesh_module._pose(meshes, np.tile(np.eye(4), (2, 1, 1)), np.arange(2))
    assert world.turned_normal[0]
    first, second = (
        grid.reshape(-1) for grid in np.meshgrid(np.arange(12), 12 + np.arange(12), indexing="ij")
    )
    lo, hi = world.lo, world.hi
    assert mesh_module._boxes_overlap(lo[first], hi[first], lo[second], hi[second], 0.01).sum() > 12
    pair = np.zeros(len(first), dtype=np.int64)
    apart = mesh_module._apart_along_faces(
        world, np.array([[0, 1]]), pair, first, second, 0.01 + world.slack
    )
    if gap:
        assert apart.all()
    else:
        distance, _, _ = mesh_module._triangle_distance(world.corners[first], world.corners[second])
        assert not apart[distance <= 1e-6].any() and (~apart).any()


def test_translated_copies_share_their_shapes_preparation():
    """Copies of an element moved anywhere (rounded to float32, as Blender stores them)
    take the first one's triangles, tree, edges, parts and closedness, with their own
    vertices and bounds, and decide contacts as if prepared on their own; a turned copy,
    one with a vertex moved by five times the tolerance and one with other triangles are
    prepared anew."""
    vertices, triangles = torus(1.0, 0.3, 12, 8)
    far = np.array([1000.0, -1000.0, 30.0])
    vertices = (vertices + far).astype(np.float32).astype(np.float64)
    prepared = PreparedMeshes()
    source = prepared.prepare(vertices, triangles)
    offset = np.array([234.5, 12.75, 20.0])
    moved = (vertices + offset).astype(np.float32).astype(np.float64)
    copy = prepared.prepare(moved, triangles)
    alone = prepare_mesh(moved, triangles)
    assert copy.tree_order is source.tree_order and copy.smooth_edges is source.smooth_edges
    np.testing.assert_array_equal(copy.vertices, moved)
    np.testing.assert_array_equal(copy.bounds, alone.bounds)
    # The source's face frame, with the copy's own bounds along it.
    along = moved @ source.face_frame
    assert copy.face_frame is source.face_frame
    np.testing.assert_array_equal(copy.face_bounds, [along.min(axis=0), along.max(axis=0)])
    for field in ("triangles", "smooth_edges", "vertex_parts"):
        np.testing.assert_array_equal(getattr(copy, field), getattr(alone, field))
    assert (copy.closed, copy.convex, copy.tree_depth) == (
        alone.closed,
        alone.convex,
        alone.tree_depth,
    )
    # Contacts with a box crossing the copy's tube, and one inside it.
    boxes = [
        prepare_mesh(*box_mesh(offset + lo, offset + hi))
        for lo, hi in np.array(
            [[[0.9, -0.05, -0.05], [1.5, 0.05, 0.05]], [[0.95, -0.05, -0.05], [1.05, 0.05, 0.05]]]
        )
    ]
    pairs = [[0, 2], [0, 3]]
    shared = mesh_contacts([copy, alone, *boxes], np.tile(np.eye(4), (4, 1, 1)), pairs, 0.1)
    own = mesh_contacts([alone, copy, *boxes], np.tile(np.eye(4), (4, 1, 1)), pairs, 0.1)
    np.testing.assert_array_equal(shared.relation, own.relation)
    np.testing.assert_allclose(shared.distance, own.distance, rtol=0, atol=1e-9)
    # Not copies: prepared anew, with their own tree.
    turned = vertices @ np.array([[0.0, -1.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 1.0]])
    bumped = vertices.copy()
    bumped[5] += 5e-3  # five times the tolerance at 1 km
    for other_vertices, other_triangles in (
        (turned, triangles),
        (bumped, triangles),
        (vertices, triangles[::-1]),
    ):
        other = prepared.prepare(other_vertices, other_triangles)
        assert other.tree_order is not source.tree_order
    with pytest.raises(ValueError):
        prepared.prepare(np.full_like(vertices, np.nan), triangles)
    # A convex copy is tested on its own vertices, and stays convex.
    block = box_mesh([999.0, -1001.0, 29.0], [1000.5, -1000.2, 31.0])
    first = prepared.prepare(*block)
    block_copy = prepared.prepare(
        (block[0] + offset).astype(np.float32).astype(np.float64), block[1]
    )
    assert first.convex and block_copy.convex and block_copy.tree_order is first.tree_order
    # A forgotten mesh (its geometry changed) is no longer offered to copies.
    prepared.forget(first)
    prepared.forget(block_copy)  # a copy's mesh: nothing to forget
    again = prepared.prepare(
        (block[0] + 2 * offset).astype(np.float32).astype(np.float64), block[1]
    )
    assert again.tree_order is not first.tree_order
    assert prepared.prepare(moved, triangles).tree_order is source.tree_order


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2**32 - 1))
def test_a_copy_by_the_copy_rule_is_never_turned_away_by_its_extents(seed):
    """`_moved_mesh` first compares the two meshes' extents, then the vertices one by
    one: whatever `fit.translated_copies` calls a copy (moved anywhere up to 1e5 away,
    rounded to float32, nudged by up to the copy tolerance) is made a moved mesh, and
    what it does not call a copy is not."""
    rng = np.random.default_rng(seed)
    vertices, triangles = random_shape(rng)
    vertices = vertices + rng.uniform(-1.0, 1.0, 3) * rng.choice([1.0, 1e3, 1e5])
    source = prepare_mesh(vertices.astype(np.float32).astype(np.float64), triangles)
    moved = source.vertices + rng.uniform(-1.0, 1.0, 3) * rng.choice([0.0, 1.0, 1e3, 1e5])
    largest = np.abs(source.vertices).max()
    moved += rng.uniform(-1.0, 1.0, moved.shape) * rng.choice([0.0, 0.4, 0.9, 3.0]) * 1e-6 * largest
    moved = moved.astype(np.float32).astype(np.float64)
    copy = mesh_module._moved_mesh(source, moved)
    assert (copy is not None) == bool(translated_copies(source.vertices, moved))


def test_prepared_meshes_keep_the_latest_shapes_of_one_list_of_triangles():
    """A deforming mesh's poses share one list of triangles: only the latest eight
    shapes are kept for copies, and the ones dropped are forgotten."""
    vertices, triangles = box_mesh([0.0] * 3, [1.0] * 3)
    prepared = PreparedMeshes()
    poses = [vertices * [1.0, 1.0, 1.0 + k] for k in range(9)]
    meshes = [prepared.prepare(pose, triangles) for pose in poses]
    shift = np.array([5.0, 0.0, 0.0])
    assert prepared.prepare(poses[0] + shift, triangles).tree_order is not meshes[0].tree_order
    assert prepared.prepare(poses[8] + shift, triangles).tree_order is meshes[8].tree_order
    prepared.forget(meshes[0])  # dropped already: nothing to forget


@settings(max_examples=80, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.integers(0, 3),
            st.sampled_from([0.0, -0.0, 0.5, 1.5, np.nan]),
            st.sampled_from([0.0, 2.0, np.inf, np.nan]),
        ),
        max_size=40,
    )
)
def test_distinct_rows_group_as_numpy_unique(rows):
    """The rays group points by line (target, two coordinates) with `_distinct_rows`:
    the groups and first rows numpy's unique over rows gives, a NaN equal to nothing."""
    table = np.array(rows, dtype=np.float64).reshape(-1, 3)
    first, group = mesh_module._distinct_rows(
        table[:, 0].astype(np.int64), table[:, 1], table[:, 2]
    )
    _, expected_first, expected_group = np.unique(
        table, axis=0, return_index=True, return_inverse=True
    )
    np.testing.assert_array_equal(first, expected_first)
    np.testing.assert_array_equal(group, expected_group.reshape(-1))


@settings(max_examples=80, deadline=None)
@given(
    st.lists(
        st.tuples(st.integers(0, 5), st.sampled_from([0.0, -1.0, 2.5, np.inf, np.nan])),
        max_size=40,
    ),
    st.sampled_from([np.inf, 1.0, np.nan]),
)
def test_run_minima_lower_as_numpy_minimum_at(entries, initial):
    """The tree walks lower each pair's or box's bound by the minimum of its sorted
    entries (`_lower_to_run_minima`): what np.minimum.at gives, NaN included."""
    keys = np.array(sorted(key for key, _ in entries), dtype=np.int64)
    candidates = np.array([value for _, value in entries], dtype=np.float64)
    values = np.full(7, initial)
    expected = values.copy()
    with np.errstate(invalid="ignore"):  # numpy's minimum.at warns of NaN
        np.minimum.at(expected, keys, candidates)
    mesh_module._lower_to_run_minima(values, keys, candidates)
    np.testing.assert_array_equal(values, expected)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(0, 5), max_size=30))
def test_meshes_of_as_numpy_unique(targets):
    """The rays and depths find the meshes their points are in with `_meshes_of`: the
    meshes and places numpy's unique gives."""
    world = mesh_module._pose(
        [prepare_mesh(*box_mesh([0.0] * 3, [1.0] * 3))] * 6,
        np.broadcast_to(np.eye(4), (6, 4, 4)).copy(),
        np.arange(6),
    )
    target = np.array(targets, dtype=np.int64)
    meshes, place = mesh_module._meshes_of(world, target)
    expected, expected_place = np.unique(target, return_inverse=True)
    np.testing.assert_array_equal(meshes, expected)
    np.testing.assert_array_equal(place, expected_place.reshape(-1))


def _length_of_normals(triangles: np.ndarray) -> np.ndarray:
    """Twice the area of each triangle (k, 3, 3)."""
    return np.linalg.norm(
        np.cross(triangles[:, 1] - triangles[:, 0], triangles[:, 2] - triangles[:, 0]), axis=1
    )


def random_triangle_pairs(rng: np.random.Generator, count: int) -> tuple[np.ndarray, np.ndarray]:
    """Triangle pairs (count, 3, 3) each: random ones, slivers (a corner near the
    opposite edge, down to float rounding), halves of one face split along a diagonal,
    and pairs far from the origin."""
    first = rng.normal(size=(count, 3, 3))
    second = first + rng.normal(size=(count, 3, 3)) * rng.choice([0.1, 1.0, 3.0], (count, 1, 1))
    sliver = rng.random(count) < 0.3
    along = rng.uniform(0.0, 1.0, int(sliver.sum()))[:, None]
    thickness = rng.choice([0.0, 1e-15, 1e-9, 1e-4], (int(sliver.sum()), 1))
    first[sliver, 2] = (
        first[sliver, 0] + along * (first[sliver, 1] - first[sliver, 0])
    ) + thickness * rng.normal(size=(int(sliver.sum()), 3))
    split = rng.random(count) < 0.3
    corners = rng.normal(size=(int(split.sum()), 4, 3)) * [10.0, 10.0, 0.0]
    first[split] = corners[:, [0, 1, 2]]
    second[split] = corners[:, [0, 2, 3]] + rng.normal(size=(int(split.sum()), 1, 3)) * 0.01
    far = rng.random(count) < 0.3
    offset = rng.uniform(-1e3, 1e3, (int(far.sum()), 1, 3))
    first[far] += offset
    second[far] += offset
    return first, second


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2**32 - 1))
def test_the_gap_beyond_an_edge_is_a_lower_bound_of_the_distance(seed):
    """`_beyond_edges` never exceeds the triangles' distance by more than the
    coordinates' rounding, slivers included: not the distance of their nearest corners
    and edges (`_triangle_distance`, which points on both realise), and not 0 where two
    triangles of some area cross (a sliver's plane is rounding: the plane tests may
    call a sliver 4 cm away crossing)."""
    rng = np.random.default_rng(seed)
    first, second = random_triangle_pairs(rng, 400)
    distance, _, _ = mesh_module._triangle_distance(first, second)
    areas = [_length_of_normals(triangles) for triangles in (first, second)]
    normals = [mesh_module._unit_normals(triangles) for triangles in (first, second)]
    magnitude = np.abs(np.concatenate((first, second), axis=1)).max(axis=(1, 2))
    crossing = mesh_module._plane_tests(
        first, second, *normals, mesh_module._epsilon(magnitude)
    ).crossing
    distance[crossing & (areas[0] > 1e-6) & (areas[1] > 1e-6)] = 0.0
    rounding = 1e-12 * np.maximum(1.0, np.abs(np.concatenate((first, second), axis=1)).max((1, 2)))
    for bound in (
        mesh_module._beyond_edges(first, second),
        mesh_module._beyond_edges(second, first),
    ):
        assert not (bound > distance + rounding).any()


def test_a_small_triangle_over_the_far_half_of_a_split_face_is_beyond_its_diagonal():
    """A 10 m square face split along its diagonal, and a small triangle 2 cm above the
    middle of the second half: the first half's bounds are the whole square, but along
    the diagonal's normal the small triangle lies 2.8 m beyond it."""
    face = np.array([[0.0, 0.0, 0.0], [10.0, 0.0, 0.0], [10.0, 10.0, 0.0], [0.0, 10.0, 0.0]])
    half = face[[0, 1, 2]]
    small = np.array([[2.0, 6.0, 0.02], [3.0, 6.0, 0.02], [2.0, 7.0, 0.02]])
    beyond = mesh_module._beyond_edges(half[None], small[None])[0]
    distance, _, _ = mesh_module._triangle_distance(half[None], small[None])
    assert beyond == pytest.approx((6.0 - 3.0) / np.sqrt(2.0))
    assert beyond <= distance[0]
    assert np.isnan(mesh_module._beyond_edges(np.zeros((1, 3, 3)), small[None])[0])


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(0, 60))
def test_first_least_of_each_group_is_the_first_after_a_lexsort(seed, count):
    """Ties (few distinct values) go to the earliest, as after a stable sort."""
    rng = np.random.default_rng(seed)
    groups = np.sort(rng.integers(0, 8, count))
    values = rng.integers(0, 3, count).astype(float)
    order = np.lexsort((values, groups))
    lead = np.ones(count, dtype=bool)
    lead[1:] = groups[order[1:]] != groups[order[:-1]]
    np.testing.assert_array_equal(mesh_module._first_least(groups, values), order[lead])


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2**32 - 1), st.floats(0.0, 0.5))
def test_near_boxes_are_those_within_grow_on_every_axis_with_their_distance(seed, grow):
    rng = np.random.default_rng(seed)
    lo_a, lo_b = rng.uniform(-2.0, 2.0, (2, 200, 3))
    hi_a, hi_b = lo_a + rng.uniform(0.0, 1.0, (200, 3)), lo_b + rng.uniform(0.0, 1.0, (200, 3))
    # Some boxes exactly `grow` apart along an axis, and some meeting at a face.
    hi_a[:20, 0] = lo_b[:20, 0] - grow
    hi_a[20:40, 1] = lo_b[20:40, 1]
    keep, gap = mesh_module._near_boxes(lo_a, hi_a, lo_b, hi_b, grow)
    near = [
        k
        for k in range(200)
        if all(max(lo_a[k, x] - hi_b[k, x], lo_b[k, x] - hi_a[k, x]) <= grow for x in range(3))
    ]
    np.testing.assert_array_equal(keep, near)
    apart = np.maximum(np.maximum(lo_a - hi_b, lo_b - hi_a), 0.0)[keep]
    np.testing.assert_allclose(gap, np.linalg.norm(apart, axis=1), rtol=1e-15, atol=0)
    assert (gap <= np.sqrt(3) * grow + 1e-12).all()


@settings(max_examples=80, deadline=None)
@given(
    st.integers(0, 2**32 - 1),
    st.integers(1, 12),
    st.integers(1, 40),
    st.sampled_from([0, 64]),
)
def test_distinct_directions_keep_one_of_each_parallel_bundle_in_order(
    seed, pairs, count, table_rows
):
    """`_distinct_per_pair` of directions drawn from a few axes (either way, some off by
    1e-9 rad, some by about the tolerance, so that A is parallel to B and B to C but not A
    to C, others by 1e-3): no two kept rows of a pair are parallel, every row is parallel
    to a kept row no later than itself, the kept rows keep their order, and a pair's row
    is padded with its first direction; with every two rows measured at once and round
    by round (`table_rows`)."""
    rng = np.random.default_rng(seed)
    axes = rng.normal(size=(pairs, 5, 3))
    axes /= np.linalg.norm(axes, axis=2, keepdims=True)
    pick = rng.integers(0, 5, (pairs, count))
    directions = np.take_along_axis(axes, pick[:, :, None], axis=1)
    directions *= rng.choice([-1.0, 1.0], (pairs, count, 1))
    directions += rng.choice([0.0, 1e-9, 3e-8, 1e-3], (pairs, count, 1)) * rng.normal(
        size=(pairs, count, 3)
    )
    directions /= np.linalg.norm(directions, axis=2, keepdims=True)
    with mock.patch.object(mesh_module, "_PARALLEL_TABLE_ROWS", table_rows):
        distinct = mesh_module._distinct_per_pair(directions)

    def parallel(first, second):
        # Written out as the function sums them: near the tolerance, a product summed in
        # another order may fall on the other side.
        return np.abs(dot_rows(first, second)) > 1.0 - 1e-15

    for pair in range(pairs):
        kept = [0]
        for row in range(1, count):
            if not parallel(directions[pair, row : row + 1], directions[pair, kept]).any():
                kept.append(row)
        assert len(kept) <= distinct.shape[1]
        np.testing.assert_array_equal(distinct[pair, : len(kept)], directions[pair, kept])
        np.testing.assert_array_equal(
            distinct[pair, len(kept) :],
            np.broadcast_to(directions[pair, 0], (distinct.shape[1] - len(kept), 3)),
        )


def random_shapes(rng: np.random.Generator, low: int = 2, high: int = 6, far: bool = False):
    """`low` to `high` - 1 random prepared shapes, some with a few vertices in no triangle
    (within the shapes' reach, or with `far` sometimes 30 times as far), leaves of 2 or
    8 triangles."""
    shapes = []
    for _ in range(rng.integers(low, high)):
        vertices, triangles = random_shape(rng)
        if rng.random() < (0.5 if far else 0.3):
            loose = rng.uniform(-1.5, 1.5, (rng.integers(1, 4), 3))
            vertices = np.vstack([vertices, loose * (rng.choice([1.0, 30.0]) if far else 1.0)])
        shapes.append(prepare_mesh(vertices, triangles, leaf_size=int(rng.choice([2, 8]))))
    return shapes


@pytest.mark.parametrize("shortcut", ["_LISTED_WHOLE", "_WALKED_EXTENTS", "_SCREENED_WORK"])
@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1))
def test_large_meshes_shortcuts_give_what_every_point_gives(shortcut, seed):
    """What a large mesh takes through its tree, or screened, gives the contacts of every
    point listed, bit for bit, with vertices in no triangle and turned, stretched and
    mirrored meshes: its points inside the other mesh's bounds (`_LISTED_WHOLE`: a
    terrain under 244 objects took 10 GB and 44 s listing all of its points for each; 1 M
    triangles ran out of memory), and its extents along a crossing pair's directions,
    which bound its depth (`_WALKED_EXTENTS`: 240 cubes pushed into a terrain took 12-22 s
    projecting its 90,000 vertices for each; `_SCREENED_WORK`: 9 s for 10,000). Each
    threshold at 0 here, so every mesh takes that shortcut."""
    rng = np.random.default_rng(seed)
    shapes = random_shapes(rng)
    matrices = np.stack([random_matrix(rng) for _ in shapes])
    pairs = np.array(list(combinations(range(len(shapes)), 2)), dtype=np.int64)
    max_distance = float(rng.choice([0.0, 0.1]))
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(mesh_module, shortcut, 1 << 40)
        every = mesh_contacts(shapes, matrices, pairs, max_distance)
        patch.setattr(mesh_module, shortcut, 0)
        through_trees = mesh_contacts(shapes, matrices, pairs, max_distance)
    assert_same_contacts(through_trees, every)


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2**32 - 1))
def test_walked_extents_are_the_vertices_extents(seed):
    """`_walked_extents` gives each mesh's least and largest vertex projections along
    its directions bit for bit as projecting every vertex does, near the tilted bound's
    rows too (`near`: the listed vertices within its band), with vertices in no triangle
    near the mesh or far from it (the band once left a far one out)."""
    rng = np.random.default_rng(seed)
    shapes = random_shapes(rng, 1, 4, far=True)
    matrices = np.stack([random_matrix(rng) for _ in shapes])
    world = mesh_module._pose(shapes, matrices, np.arange(len(shapes)))
    meshes = rng.integers(0, len(shapes), 7)
    directions = rng.normal(size=(7, int(rng.integers(1, 30)), 3))
    directions /= np.linalg.norm(directions, axis=2, keepdims=True)
    every = mesh_module._extents(world, meshes, directions, np.zeros(len(shapes), bool), None)
    walked = mesh_module._walked_extents(world, meshes, directions)
    for listed, found in zip(every, walked, strict=True):
        np.testing.assert_array_equal(found, listed)
    # Directions within a chord of 0.1 of their rows, as the tilted bound's are.
    rows = directions[:, 0]
    directions = rows[:, None] + rng.uniform(-0.02, 0.02, directions.shape)
    directions /= np.linalg.norm(directions, axis=2, keepdims=True)
    near = (rows, 0.1)
    banded = mesh_module._extents(world, meshes, directions, np.zeros(len(shapes), bool), near)
    np.testing.assert_array_equal(
        mesh_module._extents(world, meshes, directions, np.ones(len(shapes), bool), near), banded
    )


def assert_screened_extents_are_listed(world, meshes, directions):
    """`_screened_extents`' rows equal the listed extents where it screened them, and
    `_extents` with every mesh screened (the tied rows listed) everywhere."""
    count = len(world.vertex_count)
    every = mesh_module._extents(world, meshes, directions, np.zeros(count, bool), None)
    *screened, tied = mesh_module._screened_extents(world, meshes, directions)
    for listed, found in zip(every, screened, strict=True):
        np.testing.assert_array_equal(found[~tied], listed[~tied])
    through = mesh_module._extents(
        world, meshes, directions, np.zeros(count, bool), None, np.ones(count, bool)
    )
    for listed, found in zip(every, through, strict=True):
        np.testing.assert_array_equal(found, listed)
    return tied


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2**32 - 1), st.sampled_from([1.0, 1e3, 1e6]))
def test_screened_extents_are_the_vertices_extents(seed, far):
    """`_screened_extents` (float32 projections screen the vertices that float64 then
    measures) gives each mesh's least and largest vertex projections bit for bit as
    projecting every vertex does: on random shapes, and on a terrain of equal peaks and
    flat rows, equal or apart by less than float32 resolves, or flat (many vertices within
    its error of an extreme: the float32 extreme is often not float64's), along
    directions at and near its vertical, the meshes placed
    up to 1e6 from the origin (where float32 rounds projections by about 0.06)."""
    rng = np.random.default_rng(seed)
    across = np.linspace(-50.0, 50.0, 41)
    x, y = np.meshgrid(across, across, indexing="ij")
    heights = np.round(2.0 * np.sin(x / 7.0) * np.cos(y / 9.0), int(rng.integers(1, 4)))
    # Peaks equal, or apart by less than float32 resolves (2.4e-7 at a height of 2).
    heights += rng.choice([0.0, 1e-7, 1e-6]) * rng.random(heights.shape)
    heights *= rng.random() < 0.7  # or a flat grid
    terrain = prepare_mesh(*heightfield(across, lambda x, y: heights))
    shapes = [terrain, *random_shapes(rng, 1, 3, far=True)]
    matrices = np.stack([random_matrix(rng) for _ in shapes])
    matrices[0, :3, :3] = np.eye(3) if rng.random() < 0.5 else matrices[0, :3, :3]
    matrices[:, :3, 3] += rng.uniform(-far, far, 3)
    world = mesh_module._pose(shapes, matrices, np.arange(len(shapes)))
    meshes = rng.integers(0, len(shapes), 9)
    meshes[:3] = 0
    directions = rng.normal(size=(9, int(rng.integers(1, 30)), 3))
    # The terrain's world vertical (its flat grid's normal, along which every vertex
    # projects the same but for rounding), and directions near it.
    vertical = np.linalg.inv(matrices[0, :3, :3]).T @ (0.0, 0.0, 1.0)
    directions[:, 0] = vertical / np.linalg.norm(vertical)
    directions[:, 1:4] += 1e3 * directions[:, :1]
    directions /= np.linalg.norm(directions, axis=2, keepdims=True)
    assert_screened_extents_are_listed(world, meshes, directions)


def test_a_far_vertex_in_no_triangle_is_kept_in_the_tilts_band():
    """The tilted bound's band of vertices near the extremes along a row grows with the
    mesh's diameter: that of all its vertices, a far one in no triangle too, which can be
    the extreme along a tilt (the band once took the triangles' diameter and left it
    out; a differential fuzz of the tree walk found it)."""
    vertices, triangles = box_mesh([-1.0] * 3, [1.0] * 3)
    mesh = prepare_mesh(np.vstack([vertices, [[0.5, 30.0, 0.0]]]), triangles)
    world = mesh_module._pose([mesh], np.eye(4)[None], np.arange(1))
    row = np.array([[1.0, 0.0, 0.0]])
    tilt = np.array([[[np.cos(0.05), np.sin(0.05), 0.0]]])
    listed = np.zeros(1, dtype=bool)
    every = mesh_module._extents(world, np.zeros(1, dtype=np.int64), tilt, listed, None)
    banded = mesh_module._extents(world, np.zeros(1, dtype=np.int64), tilt, listed, (row, 0.1))
    assert every[1][0, 0] == pytest.approx(0.5 * np.cos(0.05) + 30.0 * np.sin(0.05))
    np.testing.assert_array_equal(banded, every)


def test_cubes_on_a_large_terrain_are_found_inside_it_as_with_whole_lists():
    """A terrain of 20 k triangles (over `_LISTED_WHOLE` points) closed into a slab, and
    cubes sunk into it and resting on it: culled points, the same contacts."""
    top, sheet = heightfield(np.linspace(-10, 10, 70), lambda x, y: 0.3 * np.sin(x) * np.cos(y))
    vertices, triangles = box_mesh([-10.0, -10.0, -2.0], [10.0, 10.0, 0.0])
    terrain = prepare_mesh(
        np.vstack([vertices, top]), np.vstack([triangles, sheet + len(vertices)])
    )
    cube = prepare_mesh(*box_mesh([-0.5] * 3, [0.5] * 3))
    rng = np.random.default_rng(5)
    matrices = np.tile(np.eye(4), (31, 1, 1))
    matrices[1:, :2, 3] = rng.uniform(-9, 9, (30, 2))
    matrices[1:, 2, 3] = rng.uniform(-1.0, 1.0, 30)
    pairs = np.column_stack([np.zeros(30, dtype=np.int64), np.arange(1, 31)])
    culled = mesh_contacts([terrain] + [cube] * 30, matrices, pairs, 0.0)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(mesh_module, "_LISTED_WHOLE", 1 << 40)
        whole = mesh_contacts([terrain] + [cube] * 30, matrices, pairs, 0.0)
    assert_same_contacts(culled, whole)
    assert (culled.distance < 0).sum() >= 10


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2**32 - 1))
def test_meshes_kept_posed_give_the_contacts_of_meshes_posed_afresh(seed):
    """`PosedMeshes` keeps large meshes posed between calls (a terrain under an object
    dragged in live mode) once a call meets one where the call before did, and joins
    them to the others: worlds and contacts bit for bit those of posing all together,
    wherever the large meshes come among the others, with leaves of other widths and
    vertices in no triangle, call after call while the small ones move (written into the
    arrays the call before joined); a large mesh moved is posed with the others again."""
    rng = np.random.default_rng(seed)
    shapes = random_shapes(rng)
    large = [bool(rng.random() < 0.5) for _ in shapes]
    matrices = np.stack([random_matrix(rng) for _ in shapes])
    pairs = np.array(list(combinations(range(len(shapes)), 2)), dtype=np.int64)
    kept = PosedMeshes()
    with pytest.MonkeyPatch.context() as patch:
        # Random shapes are small: "large" is the size of the ones drawn large.
        sizes = [len(shape.triangles) for shape, drawn in zip(shapes, large, strict=True) if drawn]
        patch.setattr(mesh_module, "_KEPT_POSED_TRIANGLES", min(sizes, default=1 << 40))
        used = np.arange(len(shapes))
        for _ in range(2):  # met, then kept
            assert_same_world(
                kept.pose(shapes, matrices, used), mesh_module._pose(shapes, matrices, used)
            )
            kept.forget_unused()
        for step in range(4):
            moved = rng.random(len(shapes)) < 0.5
            if step == 3:
                moved[:] = True  # the large ones too
            matrices[moved, :3, 3] += rng.uniform(-0.2, 0.2, (int(moved.sum()), 3))
            # The joined world, written into the last call's arrays where its runs are
            # of the same sizes, and a call's contacts with it.
            assert_same_world(
                kept.pose(shapes, matrices, used), mesh_module._pose(shapes, matrices, used)
            )
            fresh = mesh_contacts(shapes, matrices, pairs, 0.1)
            assert_same_contacts(mesh_contacts(shapes, matrices, pairs, 0.1, posed=kept), fresh)
            kept.forget_unused()
            # Kept: the large ones where the call before met them.
            large_now = [
                len(shape.triangles) >= mesh_module._KEPT_POSED_TRIANGLES for shape in shapes
            ]
            assert len(kept) == int((np.array(large_now) & ~moved).sum())


def assert_same_world(first, second) -> None:
    for field in dataclasses.fields(first):
        # A world's trees as built, whether from its own meshes or joined.
        name = "tree" if field.name == "forest" else field.name
        one, other = getattr(first, name), getattr(second, name)
        if dataclasses.is_dataclass(one):
            assert_same_world(one, other)
        elif isinstance(one, np.ndarray):
            assert one.dtype == other.dtype, field.name
            np.testing.assert_array_equal(one, other, err_msg=field.name)
        elif isinstance(one, tuple):
            assert len(one) == len(other) and all(a is b for a, b in zip(one, other, strict=True))
        else:
            assert one == other, field.name


def test_a_terrain_is_posed_once_while_a_cube_is_dragged_on_it(monkeypatch):
    """A 20 k triangle terrain under a cube dragged across it: posed at the first two
    calls only, the cube's contacts those of a fresh call at every step; a call without
    the terrain lets it go."""
    terrain = prepare_mesh(
        *heightfield(np.linspace(-10, 10, 70), lambda x, y: 0.3 * np.sin(x) * np.cos(y))
    )
    cube = prepare_mesh(*box_mesh([-0.5] * 3, [0.5] * 3))
    posings = []
    posed_together = mesh_module._posed_together

    def counting(meshes, matrices, used):
        posings.extend(len(meshes[k].triangles) for k in used)
        return posed_together(meshes, matrices, used)

    monkeypatch.setattr(mesh_module, "_posed_together", counting)
    joins = []
    joined_worlds = mesh_module._joined_worlds
    monkeypatch.setattr(
        mesh_module, "_joined_worlds", lambda *args: joins.append(joined_worlds(*args)) or joins[-1]
    )
    kept = PosedMeshes()
    matrices = np.stack([np.eye(4), np.eye(4)])
    relations = set()
    for step in range(8):
        matrices[0, :3, 3] = (-6.0 + 1.5 * step, 0.5 * step - 2.0, (0.0, 1.2, 0.1)[step % 3])
        fresh = mesh_contacts([cube, terrain], matrices, [[0, 1]], 0.0)
        posings.clear()
        contacts = mesh_contacts([cube, terrain], matrices, [[0, 1]], 0.0, posed=kept)
        kept.forget_unused()
        assert_same_contacts(contacts, fresh)
        # Met at the first call, posed apart and kept at the second, taken since.
        assert posings == ([12, len(terrain.triangles)] if step < 2 else [12])
        relations.add(int(contacts.relation[0]))
        # From the third call on, the cube's rows are written into the arrays the call
        # before joined: the terrain's are not copied again.
        if step >= 2:
            assert joins[-1].vertices is joins[-2].vertices
    assert len(relations) > 1  # the cube crossed the terrain and left it at some steps
    mesh_contacts([cube, cube], np.stack([np.eye(4)] * 2), [[0, 1]], 0.0, posed=kept)
    kept.forget_unused()
    assert len(kept) == 0


@settings(max_examples=20, deadline=None)
@given(st.integers(0, 2**32 - 1), st.sampled_from([1e40, 1e-42]))
def test_screened_extents_beyond_float32s_range(seed, scale):
    """A mesh scaled beyond float32's range (1e40, valid float64 coordinates) is screened
    whole, and one scaled below its normal range (1e-42, where float32 rounds by 2^-150
    whatever the magnitude; a helper's differential fuzz found the extreme dropped
    there) within that rounding: their extents are still every vertex's."""
    rng = np.random.default_rng(seed)
    vertices, triangles = uv_sphere(1.0, 12, 16)
    vertices = vertices + rng.normal(scale=0.05, size=vertices.shape)
    shapes = [prepare_mesh(vertices, triangles), *random_shapes(rng, 1, 2)]
    matrices = np.stack([np.eye(4), random_matrix(rng)])
    matrices[:, :3, :] *= scale
    world = mesh_module._pose(shapes, matrices, np.arange(len(shapes)))
    meshes = np.array([0, 1, 0])
    directions = rng.normal(size=(3, 7, 3))
    directions /= np.linalg.norm(directions, axis=2, keepdims=True)
    assert_screened_extents_are_listed(world, meshes, directions)


def test_a_flat_floor_is_listed_not_screened():
    """Along a flat floor's normal every vertex lies within float32's error of the
    extreme: screening would keep them all and cost more than listing, so those rows
    are left to the list (240 cubes sunk into a floor of 10,000 vertices: 1.1 s screened,
    0.5 s listed), with the same extents; a floor met along tilted directions only is
    screened."""
    floor = prepare_mesh(*heightfield(np.linspace(-50.0, 50.0, 101), lambda x, y: 0.0))
    # The floor twice: screening decides mesh by mesh.
    world = mesh_module._pose([floor, floor], np.stack([np.eye(4)] * 2), np.arange(2))
    directions = np.array([[[0.0, 0.0, 1.0], [1.0, 0.0, 0.0]], [[0.6, 0.0, 0.8], [0.0, 0.8, 0.6]]])
    tied = assert_screened_extents_are_listed(world, np.arange(2), directions)
    assert tied.tolist() == [True, False]


def test_a_flat_floor_is_neither_walked_nor_screened(monkeypatch):
    """A flat floor's tree prunes nothing along its normal (every node reaches the
    extreme): 240 cubes sunk into one of 160,000 vertices took 23.7 s walked, 1.6 s
    listed. Flat by its face frame's box, turned or not, its extents are listed whatever
    its size; a floor with hills is walked, and the overlaps are those of listing."""
    cube = prepare_mesh(*box_mesh([-0.5] * 3, [0.5] * 3))
    matrices = np.stack([np.eye(4)] * 2)
    matrices[0, :3, :3] = turn([1.0, 2.0, 0.5], 17.0)
    matrices[1, :3, 3] = (1.0, 1.0, 0.2)
    rng = np.random.default_rng(4)
    directions = rng.normal(size=(1, 12, 3))
    directions[0, 0] = matrices[0, :3, 2]  # the floor's normal
    directions /= np.linalg.norm(directions, axis=2, keepdims=True)
    walked = []
    walk = mesh_module._walked_extents
    monkeypatch.setattr(
        mesh_module,
        "_walked_extents",
        lambda world, meshes, directions: (
            walked.extend(meshes.tolist()) or walk(world, meshes, directions)
        ),
    )
    for hills, walks in ((0.0, False), (0.3, True)):
        floor = prepare_mesh(
            *heightfield(
                np.linspace(-5.0, 5.0, 31), lambda x, y, hills=hills: hills * np.sin(x) * np.cos(y)
            )
        )
        world = mesh_module._pose([floor, cube], matrices, np.arange(2))
        walked.clear()
        monkeypatch.setattr(mesh_module, "_WALKED_EXTENTS", 0)
        found = mesh_module._projected_overlap(world, np.array([[0, 1]]), directions)
        monkeypatch.setattr(mesh_module, "_WALKED_EXTENTS", 1 << 40)
        monkeypatch.setattr(mesh_module, "_SCREENED_WORK", 1 << 40)
        listed = mesh_module._projected_overlap(world, np.array([[0, 1]]), directions)
        monkeypatch.setattr(mesh_module, "_SCREENED_WORK", 8192)
        for one, other in zip(found, listed, strict=True):
            np.testing.assert_array_equal(one, other)
        assert (0 in walked) == walks
