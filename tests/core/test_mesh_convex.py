"""Pairs of two convex meshes decided from their points and extents, without their
triangles (`mesh._convex_contacts`): the same distances and relations as the triangles
give, and witnesses on both surfaces no farther apart than the depth."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from collide_addon.core import CROSSING, I_INSIDE_J, MeshContacts, mesh_contacts, prepare_mesh
from collide_addon.core import mesh as mesh_module
from collide_addon.core.contact import contact_epsilon
from collide_dev.coal_oracle import coal_convex_distance
from collide_dev.mesh_shapes import box_mesh, cylinder, prism, uv_sphere
from tests.core.shapes_for_tests import turn
from tests.core.test_mesh import affine, random_pose, spy, walked_pairs
from tests.core.test_mesh_fzk import surface_gaps

# The live benchmark's shapes, a wedge and a cube: convex, each with face planes.
SHAPES = (
    box_mesh([-0.5, -0.5, -0.5], [0.5, 0.5, 0.5]),
    uv_sphere(0.6, 8, 16),
    cylinder(0.4, 1.2, 16),
    prism([[0.0, 0.0], [1.0, 0.0], [0.2, 0.7]], -0.3, 0.3),
)
MESHES = [prepare_mesh(*shape) for shape in SHAPES]


def by_triangles(monkeypatch) -> None:
    """`mesh_contacts` deciding every pair from its triangles."""

    def nothing_decided(world, boxes, slots, *rest):
        empty = np.zeros(0)
        none = MeshContacts(
            empty, np.zeros((0, 3)), np.zeros((0, 3)), np.zeros(0, np.int8), empty > 0
        )
        return np.zeros(len(slots), dtype=bool), none

    monkeypatch.setattr(mesh_module, "_convex_contacts", nothing_decided)


def scene(seed: int, count: int = 24):
    """`count` of the shapes, turned, stretched and moved at random within a small room,
    so that many pairs cross, some touch nothing and a few hold another."""
    rng = np.random.default_rng(seed)
    kinds = rng.integers(0, len(MESHES), count)
    matrices = np.stack([random_pose(rng) for _ in range(count)])
    matrices[:, :3, 3] *= 0.8
    pairs = np.array([(i, j) for i in range(count) for j in range(i + 1, count)])
    return [MESHES[kind] for kind in kinds], kinds, matrices, pairs


def assert_witnesses_on_surfaces_within_depth(meshes, matrices, pairs, result, rows):
    penetrating = rows[result.distance[rows] < 0]
    middle = (result.point_i + result.point_j)[penetrating] / 2
    epsilon = contact_epsilon(middle)
    gaps = np.linalg.norm(result.point_j - result.point_i, axis=1)[penetrating]
    assert (gaps <= -result.distance[penetrating] + epsilon).all()
    for side, points in ((0, result.point_i), (1, result.point_j)):
        for row, bound in zip(penetrating, epsilon, strict=True):
            mesh, matrix = meshes[pairs[row, side]], matrices[pairs[row, side]]
            posed = prepare_mesh(mesh.vertices @ matrix[:3, :3].T + matrix[:3, 3], mesh.triangles)
            assert surface_gaps(posed, points[row][None])[0] <= bound


@pytest.mark.parametrize("seed", range(6))
def test_convex_pairs_decide_as_their_triangles_do(monkeypatch, seed):
    """Random scenes of cubes, UV spheres, cylinders and wedges: every pair's distance
    and relation are those its triangles give, to the bit; the pairs decided without
    triangles are most of them, and their witnesses lie on both surfaces."""
    meshes, _, matrices, pairs = scene(seed)
    decided = []
    spy(monkeypatch, "_convex_contacts", lambda args, found: decided.append(found[1].relation))
    fast = mesh_contacts(meshes, matrices, pairs, 0.05)
    decided = np.concatenate(decided)
    by_triangles(monkeypatch)
    slow = mesh_contacts(meshes, matrices, pairs, 0.05)
    np.testing.assert_array_equal(fast.distance, slow.distance)
    np.testing.assert_array_equal(fast.relation, slow.relation)
    np.testing.assert_array_equal(fast.open_pair, slow.open_pair)
    crossing = np.flatnonzero(fast.relation == CROSSING)
    assert len(crossing) >= 15
    assert (decided == CROSSING).sum() >= 0.8 * len(crossing)
    assert_witnesses_on_surfaces_within_depth(meshes, matrices, pairs, fast, np.arange(len(pairs)))


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(0, 3), st.integers(0, 3))
def test_a_convex_pairs_depth_is_coals_epa_and_its_witnesses_lie_on_both(seed, first, second):
    """Two of the shapes pushed into each other: the depth is coal's EPA (the separating
    axis theorem's, except two spheres, searched and a few percent deeper at most), the
    witnesses on both surfaces, and the same as from the triangles."""
    rng = np.random.default_rng(seed)
    matrices = np.stack([random_pose(rng), random_pose(rng)])
    matrices[:, :3, 3] *= 0.3
    meshes = [MESHES[first], MESHES[second]]
    result = mesh_contacts(meshes, matrices, [[0, 1]], 0.05)
    posed = [
        SHAPES[kind][0] @ matrix[:3, :3].T + matrix[:3, 3]
        for kind, matrix in zip((first, second), matrices, strict=True)
    ]
    depth = -coal_convex_distance(*posed)
    if depth <= 1e-4 or result.relation[0] != CROSSING:
        return
    spheres = first == second == 1
    assert -result.distance[0] >= depth * (1 - 1e-6) - 1e-9
    assert -result.distance[0] <= depth * (1.05 if spheres else 1 + 1e-6) + 1e-9
    assert_witnesses_on_surfaces_within_depth(
        meshes, matrices, np.array([[0, 1]]), result, np.array([0])
    )


def test_two_cubes_crossing_edge_to_edge_meet_where_the_edges_cross(monkeypatch):
    """Two cubes turned onto an edge, one across the other and sunk 0.1 into it: no
    corner and no face centre of either lies inside the other, so only the separating
    axis theorem shows they cross. The witnesses are where the two edges cross, on
    each, 0.1 apart; the triangles are never walked."""
    cube = prepare_mesh(*box_mesh([-1.0, -1.0, -1.0], [1.0, 1.0, 1.0]))
    lower = affine(turn([1, 0, 0], 45.0))
    upper = affine(turn([0, 1, 0], 45.0), (0.2, -0.3, 2 * np.sqrt(2) - 0.1))
    walked = walked_pairs(monkeypatch)
    result = mesh_contacts([cube, cube], [lower, upper], [[0, 1]], 0.05)
    assert walked == []
    assert result.relation[0] == CROSSING
    assert result.distance[0] == pytest.approx(-0.1, abs=1e-12)
    # The lower cube's top edge runs along x at y = 0, z = sqrt 2; the upper's bottom
    # edge along y at x = 0.2.
    np.testing.assert_allclose(result.point_i[0], [0.2, 0.0, np.sqrt(2)], atol=1e-12)
    np.testing.assert_allclose(result.point_j[0], [0.2, 0.0, np.sqrt(2) - 0.1], atol=1e-12)


def test_an_edge_pressed_into_a_face_meets_it_between_where_it_enters_and_leaves():
    """A long bar turned onto an edge and sunk 0.1 into a cube's top face, right across
    it: its corners lie outside, and so do the cube's. The witnesses lie midway along
    the part of the edge over the face, on the face and on the edge."""
    cube = prepare_mesh(*box_mesh([-1.0, -1.0, -1.0], [1.0, 1.0, 1.0]))
    bar = prepare_mesh(*box_mesh([-0.3, -3.0, -0.3], [0.3, 3.0, 0.3]))
    edge_down = affine(turn([0, 1, 0], 45.0), (0.0, 0.5, 1.0 + 0.3 * np.sqrt(2) - 0.1))
    result = mesh_contacts([cube, bar], [np.eye(4), edge_down], [[0, 1]], 0.05)
    assert result.relation[0] == CROSSING
    assert result.distance[0] == pytest.approx(-0.1, abs=1e-12)
    np.testing.assert_allclose(result.point_i[0], [0.0, 0.0, 1.0], atol=1e-12)
    np.testing.assert_allclose(result.point_j[0], [0.0, 0.0, 0.9], atol=1e-12)


def test_a_cube_inside_a_sphere_is_left_to_the_triangles_and_held(monkeypatch):
    """A small cube wholly inside a UV sphere: its corners lie inside, but its bounds
    within the sphere's, so it may be held; the triangles decide (containment)."""
    cube = prepare_mesh(*box_mesh([-0.1, -0.1, -0.1], [0.1, 0.1, 0.1]))
    sphere = MESHES[1]
    walked = walked_pairs(monkeypatch)
    result = mesh_contacts([cube, sphere], [np.eye(4)] * 2, [[0, 1]], 0.05)
    assert walked == [1]
    assert result.relation[0] == I_INSIDE_J


def test_a_point_is_inside_an_outline_only_within_its_corners():
    """Two supports' outlines (a square, and three corners in a line, as on an edge cut
    in two): a point counts as inside the square within the rounding of it, and never
    inside the line, not even on it beyond its ends."""
    run = np.array([0, 0, 0, 0, 1, 1, 1])
    corners = np.array(
        [[0.0, 0.0], [1.0, 0.0], [1.0, 1.0], [0.0, 1.0], [0.0, 0.0], [1.0, 0.0], [2.0, 0.0]]
    )
    outline = mesh_module._outline(run, corners, 2)
    points = np.array([[0.5, 0.5], [1.0 + 1e-12, 0.5], [1.1, 0.5], [3.0, 0.0], [1.5, 0.0]])
    owners = np.array([0, 0, 0, 1, 1])
    rows, found = mesh_module._inside_outlines(
        owners, points, *outline, np.ones(2, dtype=bool), 1e-9
    )
    np.testing.assert_array_equal(rows, [0, 0])
    np.testing.assert_array_equal(found, points[:2])


@pytest.mark.parametrize("seed", range(4))
def test_axes_left_out_change_no_depth_and_are_most_of_them(monkeypatch, seed):
    """The separating axis theorem's face normals and edge crosses that a few of each
    mesh's vertices show cannot be the least are left out (`_axes_pruned_overlap`):
    every pair's distance, relation and witnesses are those of measuring all of them,
    bit for bit, and most of a UV sphere's axes with cubes and cylinders go unmeasured."""
    meshes, _, matrices, pairs = scene(seed)
    widths = []
    spy(monkeypatch, "_projected_overlap", lambda args, _: widths.append(args[2][..., 0].size))
    pruned = mesh_contacts(meshes, matrices, pairs, 0.05)
    pruned_width = sum(widths)
    widths.clear()
    monkeypatch.setattr(
        mesh_module,
        "_axes_pruned_overlap",
        lambda world, slots, along, axes, floor: mesh_module._projected_overlap(
            world, slots, np.concatenate([along, axes], axis=1), floor=floor
        ),
    )
    every = mesh_contacts(meshes, matrices, pairs, 0.05)
    for field in ("distance", "point_i", "point_j", "relation"):
        np.testing.assert_array_equal(getattr(pruned, field), getattr(every, field))
    assert pruned_width < 0.5 * sum(widths)


def test_a_meshs_core_is_its_extremes_along_26_directions():
    """`TriangleMesh.core`: a UV sphere's vertices extreme along the axes, their sums by
    two and by three (26 or fewer, each once); all of a cube's eight."""
    sphere = MESHES[1]
    core = sphere.core
    assert len(core) <= 26 and len(np.unique(core)) == len(core)
    steps = np.array([-1.0, 0.0, 1.0])
    directions = np.stack(np.meshgrid(steps, steps, steps), axis=-1).reshape(-1, 3)
    along = directions @ sphere.vertices.T
    assert np.allclose(along[:, core].max(axis=1), along.max(axis=1))
    np.testing.assert_array_equal(MESHES[0].core, np.arange(8))


def test_pairs_measured_in_small_chunks_decide_as_in_one(monkeypatch):
    """The axes' lower bounds and the projections are measured in chunks of pairs
    (`_CHUNK_ROWS` points times axes): chunks of a pair or two give the same contacts,
    bit for bit, as one chunk."""
    meshes, _, matrices, pairs = scene(11, count=30)
    whole = mesh_contacts(meshes, matrices, pairs, 0.05)
    monkeypatch.setattr(mesh_module, "_CHUNK_ROWS", 256)
    chunked = mesh_contacts(meshes, matrices, pairs, 0.05)
    for field in ("distance", "point_i", "point_j", "relation"):
        np.testing.assert_array_equal(getattr(chunked, field), getattr(whole, field))


def test_a_call_whose_pairs_need_no_triangles_builds_no_trees(monkeypatch):
    """The posed meshes' trees are built on first use (`_World.tree`): not at all for a
    call of convex pairs with a point inside, once for one with a pair held inside."""
    built = []
    spy(monkeypatch, "_forest", lambda args, _: built.append(len(args[0])))
    cube = MESHES[0]
    sunk = affine(turn([1, 1, 0], 30.0), (0.7, 0.2, 0.1))
    result = mesh_contacts([cube, cube], [np.eye(4), sunk], [[0, 1]], 0.05)
    assert result.relation[0] == CROSSING and built == []
    small = prepare_mesh(*box_mesh([-0.1] * 3, [0.1] * 3))
    result = mesh_contacts([small, MESHES[1]], [np.eye(4)] * 2, [[0, 1]], 0.05)
    assert result.relation[0] == I_INSIDE_J and built == [2]
