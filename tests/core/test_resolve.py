"""Push-apart translations: proxies (MTD) against coal and a brute-force SAT, symmetry and
rigid-motion invariance; meshes by search, checked with mesh_contacts and coal."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from collide_addon.core import APART, ShapeBatch, pair_distance, prepare_mesh
from collide_addon.core.mesh import mesh_contacts
from collide_addon.core.resolve import (
    FIX_ALREADY_APART,
    FIX_CONTAINED,
    FIX_MOVED,
    FIX_NO_DIRECTION,
    FIX_TOO_FAR,
    along_free_axes,
    mesh_separating_translations,
    separating_translations,
)
from collide_dev.coal_oracle import coal_mesh, coal_mesh_collide, coal_signed_distance
from collide_dev.mesh_shapes import box_mesh
from tests.core.shapes_for_tests import (
    point,
    quaternion,
    random_rotation,
    rotation_from_quaternion,
    shape_pair,
    solid_shapes,
)

solid_shape = st.one_of(*solid_shapes)
small_offset = st.tuples(*[st.floats(-1.0, 1.0) for _ in range(3)])
unit_direction = st.tuples(*[st.floats(-1.0, 1.0) for _ in range(3)]).filter(
    lambda v: sum(c * c for c in v) > 0.01
)


def moved(batch: ShapeBatch, index: int, translation) -> ShapeBatch:
    """`batch` with shape `index` translated by (3,)."""
    centers = batch.centers.copy()
    centers[index] += translation
    return dataclasses.replace(batch, centers=centers)


def overlapping_pair(first: ShapeBatch, second: ShapeBatch, offset) -> ShapeBatch:
    """The two shapes with the second's centre put at the first's plus `offset`."""
    batch = shape_pair(first, second)
    return moved(batch, 1, batch.centers[0] + np.asarray(offset) - batch.centers[1])


def translation_of(batch: ShapeBatch, clearance: float = 0.0) -> np.ndarray:
    return separating_translations(batch, [0], [1], clearance)[0]


def test_box_box_moves_along_the_face_of_least_overlap():
    batch = ShapeBatch.boxes([[0, 0, 0], [1.5, 0.2, 0]], [np.eye(3)] * 2, [[1, 1, 1]] * 2)
    np.testing.assert_allclose(translation_of(batch), [0.5, 0, 0], atol=1e-12)
    np.testing.assert_allclose(translation_of(batch, 0.25), [0.75, 0, 0], atol=1e-12)
    swapped = separating_translations(batch, [1], [0])[0]
    np.testing.assert_allclose(swapped, [-0.5, 0, 0], atol=1e-12)


def test_separated_pairs_need_no_move_unless_closer_than_the_clearance():
    batch = ShapeBatch.spheres([[0, 0, 0], [3, 0, 0]], [1.0, 1.0])
    np.testing.assert_array_equal(translation_of(batch), [0, 0, 0])
    np.testing.assert_allclose(translation_of(batch, 1.5), [0.5, 0, 0], atol=1e-12)


def test_capsules_crossing_move_along_their_common_perpendicular():
    batch = ShapeBatch.capsules([[-1, 0, 0], [0, -1, 0.1]], [[1, 0, 0], [0, 1, 0.1]], [0.2, 0.3])
    # Cores 0.1 apart along z, radii 0.5: 0.4 more along +z.
    np.testing.assert_allclose(translation_of(batch), [0, 0, 0.4], atol=1e-12)


def test_sphere_inside_a_box_leaves_by_the_nearest_face():
    box = ShapeBatch.boxes([[0, 0, 0]], [np.eye(3)], [[2, 1, 3]])
    sphere = ShapeBatch.spheres([[0.5, 0.7, 0]], [0.2])
    np.testing.assert_allclose(translation_of(shape_pair(box, sphere)), [0, 0.5, 0], atol=1e-12)


@settings(max_examples=150, deadline=None)
@given(solid_shape, solid_shape, small_offset)
def test_the_translation_separates_and_nothing_shorter_does(first, second, offset):
    batch = overlapping_pair(first, second, offset)
    depth = -pair_distance(batch, [0], [1]).distance[0]
    assume(depth > 1e-3)
    clearance = 1e-4
    translation = translation_of(batch, clearance)
    assert np.linalg.norm(translation) == pytest.approx(depth + clearance, rel=1e-12)
    # Apart by the clearance after the move (coal's GJK is tight on gaps).
    assert coal_signed_distance(moved(batch, 1, translation), 0, 1) >= clearance - 1e-8
    # Still overlapping 0.1 % short of the depth, along the translation and along every
    # direction tried: the depth is the shortest separating move.
    rng = np.random.default_rng(abs(hash(tuple(offset))) % 2**32)
    directions = rng.normal(size=(8, 3))
    directions = np.concatenate([directions, translation[None]])
    directions /= np.linalg.norm(directions, axis=1, keepdims=True)
    for direction in directions:
        short = moved(batch, 1, 0.999 * depth * direction)
        assert coal_signed_distance(short, 0, 1) < 0


def sat_overlaps(batch: ShapeBatch) -> tuple[np.ndarray, np.ndarray]:
    """Boxes 0 and 1: the unit SAT axes (k, 3) from np.cross (parallel edges left out),
    pointing from box 0 to box 1, and the overlap (k,) of the boxes along each."""
    axes_0, axes_1 = batch.rotations[0].T, batch.rotations[1].T
    crosses = np.cross(axes_0[:, None, :], axes_1[None, :, :]).reshape(9, 3)
    candidates = np.concatenate([axes_0, axes_1, crosses])
    lengths = np.linalg.norm(candidates, axis=1)
    candidates = candidates[lengths > 1e-6] / lengths[lengths > 1e-6, None]
    offset = batch.centers[1] - batch.centers[0]
    candidates *= np.where(candidates @ offset < 0, -1.0, 1.0)[:, None]
    radius_0 = np.abs(candidates @ axes_0.T) @ batch.half_extents[0]
    radius_1 = np.abs(candidates @ axes_1.T) @ batch.half_extents[1]
    return candidates, radius_0 + radius_1 - candidates @ offset


@settings(max_examples=150, deadline=None)
@given(solid_shapes[0], solid_shapes[0], small_offset)
def test_box_box_is_the_least_overlap_of_a_brute_force_sat(first, second, offset):
    batch = overlapping_pair(first, second, offset)
    axes, overlaps = sat_overlaps(batch)
    assume(overlaps.min() > 0)
    translation = translation_of(batch)
    length = np.linalg.norm(translation)
    # No axis separates with a shorter move than the one taken, and the move is along
    # an axis that needs exactly its length. An axis across which the centres do not
    # part (coincident centres) has no "from box 0 to box 1" sign: either way needs the
    # same move there.
    assert length == pytest.approx(overlaps.min(), abs=1e-9)
    along = axes @ (translation / length)
    level = np.abs(axes @ (batch.centers[1] - batch.centers[0])) <= 1e-12 * max(
        1.0, float(np.abs(batch.centers).max())
    )
    aligned = (along > 1 - 1e-9) | (level & (along < -1 + 1e-9))
    assert np.any(aligned & np.isclose(overlaps, length, atol=1e-9))


def test_boxes_sharing_a_centre_are_pushed_apart_along_their_least_overlap():
    # The example hypothesis found: no direction from one centre to the other, so the
    # move may go either way along the thinnest overlap; its length is exact.
    turn = np.array([[0.6, 0.0, 0.8], [0.0, 1.0, 0.0], [-0.8, 0.0, 0.6]])
    batch = ShapeBatch.boxes(
        [[1e-8, 0.0, 0.0], [1e-8, 0.0, 0.0]], [turn, np.eye(3)], [[1.0, 0.5, 0.2], [0.3, 0.4, 2.0]]
    )
    axes, overlaps = sat_overlaps(batch)
    translation = translation_of(batch)
    length = np.linalg.norm(translation)
    assert length == pytest.approx(overlaps.min(), abs=1e-12)
    along = np.abs(axes @ (translation / length))
    assert np.any((along > 1 - 1e-9) & np.isclose(overlaps, length, atol=1e-12))
    assert pair_distance(moved(batch, 1, translation), [0], [1]).distance[0] >= -1e-9


def assert_same_or_tied(expected, actual, batch_after_actual) -> None:
    """`actual` equals `expected`, or, where several directions tie for the least
    overlap, has its length and separates the pair too."""
    assert np.linalg.norm(actual) == pytest.approx(np.linalg.norm(expected), rel=1e-9, abs=1e-12)
    if not np.allclose(actual, expected, atol=1e-9):
        assert pair_distance(batch_after_actual, [0], [1]).distance[0] >= -1e-9


@settings(max_examples=150, deadline=None)
@given(solid_shape, solid_shape, small_offset)
def test_swapping_the_pair_flips_the_translation(first, second, offset):
    batch = overlapping_pair(first, second, offset)
    forward = separating_translations(batch, [0], [1])[0]
    backward = separating_translations(batch, [1], [0])[0]
    # Moving shape 0 by `backward` is moving shape 1 by -backward.
    assert_same_or_tied(forward, -backward, moved(batch, 0, backward))


@settings(max_examples=150, deadline=None)
@given(solid_shape, solid_shape, small_offset, quaternion, point)
def test_rigid_motions_carry_the_translation_along(first, second, offset, rotation, shift):
    batch = overlapping_pair(first, second, offset)
    turn = rotation_from_quaternion(rotation)
    posed = dataclasses.replace(
        batch,
        centers=batch.centers @ turn.T + np.asarray(shift),
        rotations=np.einsum("kl,nlm->nkm", turn, batch.rotations),
    )
    expected = turn @ translation_of(batch)
    actual = translation_of(posed)
    assert_same_or_tied(expected, actual, moved(posed, 1, actual))


def test_vectorised_over_many_pairs():
    rng = np.random.default_rng(7)
    count = 60
    rotations = np.stack([random_rotation(rng) for _ in range(count)])
    batch = ShapeBatch.boxes(
        rng.uniform(0, 2, (count, 3)), rotations, rng.uniform(0.2, 1.0, (count, 3))
    )
    i, j = np.triu_indices(count, 1)
    translations = separating_translations(batch, i, j, 1e-6)
    before = pair_distance(batch, i, j).distance
    shifted = dataclasses.replace(batch.take(j), centers=batch.centers[j] + translations)
    rows = np.arange(len(i))
    after = pair_distance(ShapeBatch.concat([batch.take(i), shifted]), rows, rows + len(i))
    assert (before < 0).sum() > 100
    assert after.distance.min() >= 1e-6 - 1e-12


def test_clearance_must_be_non_negative():
    batch = ShapeBatch.spheres([[0, 0, 0], [1, 0, 0]], [1.0, 1.0])
    with pytest.raises(ValueError, match="clearance"):
        separating_translations(batch, [0], [1], -1.0)


# --- meshes -----------------------------------------------------------------------------


IDENTITY = np.eye(3)


def posed(translation=(0.0, 0.0, 0.0), rotation=IDENTITY) -> np.ndarray:
    matrix = np.eye(4)
    matrix[:3, :3] = rotation
    matrix[:3, 3] = translation
    return matrix


def rotation_z(angle: float) -> np.ndarray:
    c, s = math.cos(angle), math.sin(angle)
    return np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])


def assert_meshes_apart(meshes, matrices, translation, clearance) -> None:
    """Mesh 1 moved by translation is `clearance` apart from mesh 0, by mesh_contacts
    and by coal."""
    after = np.array(matrices)
    after[1, :3, 3] += translation
    contacts = mesh_contacts(meshes, after, [[0, 1]], clearance)
    assert contacts.relation[0] == APART
    assert contacts.distance[0] >= clearance
    first, second = (
        coal_mesh(mesh.vertices, mesh.triangles, matrix)
        for mesh, matrix in zip(meshes, after, strict=True)
    )
    assert not coal_mesh_collide(first, second)


def test_crossing_box_meshes_move_about_their_overlap():
    meshes = [
        prepare_mesh(*box_mesh([0, 0, 0], [2, 2, 2])),
        prepare_mesh(*box_mesh([0, 0, 0], [2, 1, 1])),
    ]
    matrices = [posed(), posed((1.5, 0.5, 0.5))]
    clearance = 1e-3
    fixes = mesh_separating_translations(meshes, matrices, [[0, 1]], [[1.0, 0, 0]], clearance)
    assert fixes.reason[0] == FIX_MOVED and fixes.found[0]
    translation = fixes.translation[0]
    np.testing.assert_allclose(translation[1:], 0.0, atol=1e-12)
    # Overlap 0.5 along x plus the clearance, found to the bisection's tolerance.
    assert translation[0] == pytest.approx(0.5 + clearance, rel=1e-3)
    assert_meshes_apart(meshes, matrices, translation, clearance)
    # Shorter by 1 % still touches.
    contacts = mesh_contacts(
        meshes, [matrices[0], posed((1.5 + 0.99 * translation[0], 0.5, 0.5))], [[0, 1]], clearance
    )
    assert contacts.relation[0] != APART or contacts.distance[0] < clearance


def test_turned_box_meshes_separate_along_a_slanted_direction():
    meshes = [prepare_mesh(*box_mesh([-1, -1, -1], [1, 1, 1]))] * 2
    matrices = [posed(), posed((1.6, 0.4, 0.0), rotation_z(math.pi / 5))]
    direction = np.array([[1.0, 0.3, 0.2]])
    fixes = mesh_separating_translations(meshes, matrices, [[0, 1]], direction, 0.0)
    assert fixes.reason[0] == FIX_MOVED
    translation = fixes.translation[0]
    np.testing.assert_allclose(np.cross(translation, direction[0]), 0.0, atol=1e-12)
    assert translation @ direction[0] > 0
    assert_meshes_apart(meshes, matrices, translation, 0.0)


def test_contained_apart_zero_direction_and_too_far_are_reported():
    big = prepare_mesh(*box_mesh([-2, -2, -2], [2, 2, 2]))
    small = prepare_mesh(*box_mesh([-0.5, -0.5, -0.5], [0.5, 0.5, 0.5]))
    meshes = [big, small, small, small]
    matrices = [posed(), posed(), posed((5.0, 0, 0)), posed((2.2, 0, 0))]
    pairs = [[0, 1], [1, 0], [0, 2], [0, 3], [0, 3]]
    directions = [[1.0, 0, 0], [1.0, 0, 0], [1.0, 0, 0], [0.0, 0, 0], [1.0, 0, 0]]
    fixes = mesh_separating_translations(meshes, matrices, pairs, directions, 0.01, max_length=0.1)
    assert fixes.reason.tolist() == [
        FIX_CONTAINED,
        FIX_CONTAINED,
        FIX_ALREADY_APART,
        FIX_NO_DIRECTION,
        FIX_TOO_FAR,
    ]
    np.testing.assert_array_equal(fixes.translation, 0.0)
    assert fixes.found.tolist() == [False, False, True, False, False]
    # With room to move, the crossing pair moves out by its overlap of 0.3 and more.
    fixes = mesh_separating_translations(meshes, matrices, [[0, 3]], [[1.0, 0, 0]], 0.01)
    assert fixes.reason[0] == FIX_MOVED
    assert fixes.translation[0, 0] == pytest.approx(0.31, rel=1e-3)
    assert_meshes_apart([big, small], [matrices[0], matrices[3]], fixes.translation[0], 0.01)


def test_one_mesh_moved_differently_in_each_of_its_pairs():
    left = prepare_mesh(*box_mesh([-1, -1, -1], [0, 1, 1]))
    right = prepare_mesh(*box_mesh([0, -1, -1], [1, 1, 1]))
    middle = prepare_mesh(*box_mesh([-0.3, -0.3, -0.3], [0.3, 0.3, 0.3]))
    matrices = [posed(), posed(), posed((0.0, 0.0, 0.0))]
    fixes = mesh_separating_translations(
        [left, right, middle], matrices, [[0, 2], [1, 2]], [[1.0, 0, 0], [-1.0, 0, 0]], 0.0
    )
    assert fixes.found.all()
    assert fixes.translation[0, 0] == pytest.approx(0.3, rel=1e-3)
    assert fixes.translation[1, 0] == pytest.approx(-0.3, rel=1e-3)


# --- locked axes ------------------------------------------------------------------------


def test_locked_axes_take_the_projection_lengthened_to_separate():
    batch = ShapeBatch.boxes([[0, 0, 0], [1.5, 0.2, 0]], [IDENTITY] * 2, [[1, 1, 1]] * 2)
    translation = separating_translations(batch, [0], [1], 1e-6)
    # Location axes turned 45 degrees about z (a rotated parent); x locked: only the
    # parent's y axis, (-1, 1, 0) / sqrt(2), may move.
    turn = rotation_z(math.pi / 4)
    moves, local, possible = along_free_axes(translation, turn[None], [[False, True, True]])
    assert possible[0]
    np.testing.assert_allclose(local[0], [0.0, -math.sqrt(2) * 0.500001, 0.0], atol=1e-9)
    np.testing.assert_allclose(moves[0], [0.500001, -0.500001, 0.0], atol=1e-9)
    after = pair_distance(moved(batch, 1, moves[0]), [0], [1]).distance[0]
    assert after >= 1e-6 - 1e-12
    # Only z free: perpendicular to the way out.
    _, _, possible = along_free_axes(translation, IDENTITY[None], [[False, False, True]])
    assert not possible[0]


@settings(max_examples=100, deadline=None)
@given(solid_shape, solid_shape, small_offset, quaternion, st.tuples(*[st.booleans()] * 3))
def test_moves_on_free_axes_separate_and_keep_locked_axes(first, second, offset, turn, free):
    batch = overlapping_pair(first, second, offset)
    translation = separating_translations(batch, [0], [1], 1e-6)
    axes = rotation_from_quaternion(turn) * np.array([1.0, 2.0, 0.5])  # scaled parent
    moves, local, possible = along_free_axes(translation, axes[None], [free])
    np.testing.assert_array_equal(local[0][~np.array(free)], 0.0)
    np.testing.assert_allclose(axes @ local[0], moves[0], atol=1e-12)
    if possible[0]:
        assert pair_distance(moved(batch, 1, moves[0]), [0], [1]).distance[0] >= 1e-6 - 1e-9
    else:
        np.testing.assert_array_equal(moves[0], 0.0)


def test_each_pair_may_have_its_own_clearance():
    batch = ShapeBatch.spheres([[0, 0, 0], [1.5, 0, 0], [0, 1.5, 0]], [1.0, 1.0, 1.0])
    translations = separating_translations(batch, [0, 0], [1, 2], [0.0, 0.25])
    np.testing.assert_allclose(translations, [[0.5, 0, 0], [0, 0.75, 0]], atol=1e-12)
