"""Duplicates tests: copies are the same within the contact epsilon, as contacts are.

Copies in a Blender scene are placed by float32 matrices: a copy reached through a
parent chain lands a few float32 steps off its original, and a box fitted again may
number and sign its axes differently. Neither is a different shape or place.
"""

from __future__ import annotations

import numpy as np
import pytest

from collide_addon.clash.evaluate import (
    ObjectMetadata,
    broad_phase_margin,
    duplicate_mask,
    evaluate_frame,
    object_table,
    prepare_test,
)
from collide_addon.clash.tests import ClashTest
from collide_addon.core import ShapeBatch
from collide_addon.core.contact import contact_epsilon, largest_contact_epsilon

# Half extents of a beam's box in its own space (metres).
BEAM_HALF_EXTENTS = np.array([2.0, 0.15, 0.3])
# Near the origin and 1 km out, where the contact epsilon is a thousand times larger.
ORIGINS = [(3.3, 1.7, 0.9), (1000.3, 250.7, 12.9)]


def transform32(location, angles) -> np.ndarray:
    """A float32 4x4 object matrix, rotations about x, y then z (Blender's XYZ Euler)
    and a location, computed in float32 as Blender's matrices are. (4, 4) float32"""
    matrix = np.eye(4, dtype=np.float32)
    for axis, angle in enumerate(angles):
        # Blender stores the angle in float32 and takes cosf of it: float32(pi / 2) is
        # past a quarter turn, so its cosine is -4.4e-8, not 0.
        angle = np.float32(angle)
        cosine, sine = np.cos(angle), np.sin(angle)
        turn = np.eye(4, dtype=np.float32)
        first, second = [other for other in range(3) if other != axis]
        turn[first, first], turn[first, second] = cosine, -sine
        turn[second, first], turn[second, second] = sine, cosine
        matrix = turn @ matrix
    matrix[:3, 3] = np.asarray(location, dtype=np.float32)
    return matrix


def placed_through_parents(world: np.ndarray, parents) -> np.ndarray:
    """The world matrix Blender gives an object parented, keeping its world transform
    (Ctrl+P, or setting matrix_world), to the chain `parents` (outermost first): the
    local matrix solved against the parents' world matrix, then the world matrix
    recomposed from the chain, every product in float32. (4, 4) float32"""
    parent_world = np.eye(4, dtype=np.float32)
    for parent in parents:
        parent_world = parent_world @ parent
    local = np.linalg.inv(parent_world).astype(np.float32) @ world
    recomposed = np.eye(4, dtype=np.float32)
    for parent in parents:
        recomposed = recomposed @ parent
    return recomposed @ local


def box_of(matrix: np.ndarray, half_extents=BEAM_HALF_EXTENTS) -> ShapeBatch:
    """The box proxy of a box mesh placed by `matrix` (4, 4): its scale goes into the
    half extents, its rotation (orthonormal to float32 rounding) into the axes."""
    matrix = np.asarray(matrix, dtype=np.float64)
    scale = np.linalg.norm(matrix[:3, :3], axis=0)
    return ShapeBatch.boxes(
        [matrix[:3, 3]], [matrix[:3, :3] / scale], [np.asarray(half_extents) * scale]
    )


def pair_is_duplicate(first: ShapeBatch, second: ShapeBatch, tolerance: float) -> bool:
    batch = ShapeBatch.concat([first, second])
    return bool(duplicate_mask(batch, np.array([[0, 1]]), tolerance)[0])


def corner_hausdorff(first: ShapeBatch, second: ShapeBatch) -> float:
    """Hausdorff distance of two boxes' corner sets, to show copies are not bit-equal."""
    signs = np.array([[x, y, z] for x in (-1, 1) for y in (-1, 1) for z in (-1, 1)])

    def corners(box):
        return box.centers[0] + (signs * box.half_extents[0]) @ box.rotations[0].T

    gaps = np.linalg.norm(corners(first)[:, None] - corners(second)[None], axis=2)
    return float(max(gaps.min(axis=1).max(), gaps.min(axis=0).max()))


def beam_epsilon(location) -> float:
    """The contact epsilon at the farthest reach of a beam at `location` (axes along the
    world's): what duplicates of it are decided to."""
    reach = np.abs(np.asarray(location, dtype=np.float64)) + BEAM_HALF_EXTENTS
    return float(contact_epsilon(reach[None])[0])


@pytest.mark.parametrize("origin", ORIGINS)
def test_copy_placed_through_float32_parents_is_a_duplicate_at_tolerance_0(origin):
    world = transform32(origin, (0.0, 0.0, 0.4))
    parents = [
        transform32((0.37, 0.11, 0.0), (0.0, 0.0, 0.3)),
        transform32((-1.25, 4.5, 2.0), (0.7, 0.0, 0.0)),
        transform32((0.01, -0.3, 0.2), (0.0, 1.1, 2.9)),
    ]
    original = box_of(world)
    copy = box_of(placed_through_parents(world, parents))
    # The copy is off by rounding only: not bit-equal (tolerance 0 alone missed it),
    # but well within the contact epsilon.
    assert 0.0 < corner_hausdorff(original, copy) < beam_epsilon(origin)
    assert pair_is_duplicate(original, copy, 0.0)

    # And so in a frame's evaluation, broad phase included.
    table = object_table([ObjectMetadata("Beam"), ObjectMetadata("BeamCopyParented")])
    test = ClashTest("dup", test_type="duplicates", tolerance=0.0)
    hits = evaluate_frame(prepare_test(test, table), ShapeBatch.concat([original, copy]), 1)
    assert hits.names.tolist() == [["Beam", "BeamCopyParented"]]


@pytest.mark.parametrize("origin", ORIGINS)
def test_copy_moved_by_ten_epsilons_needs_a_tolerance(origin):
    """A real move is not rounding: 10 epsilons apart is no duplicate at tolerance 0,
    and a tolerance adds to the epsilon as for clearance (`d <= t + epsilon`)."""
    epsilon = beam_epsilon(origin)
    move = 10.0 * epsilon
    original = box_of(transform32(origin, (0.0, 0.0, 0.0)))
    moved = ShapeBatch.boxes(
        original.centers + np.array([0.0, move, 0.0]), original.rotations, original.half_extents
    )
    assert not pair_is_duplicate(original, moved, 0.0)
    assert not pair_is_duplicate(original, moved, move - 2.0 * epsilon)
    assert pair_is_duplicate(original, moved, move - 0.5 * epsilon)
    assert pair_is_duplicate(original, moved, 1.5 * move)


def test_box_turned_about_an_axis_of_equal_extents_is_a_duplicate():
    """A square column turned a quarter about its long axis is the same shape in the same
    place, whether the fit keeps the turned axes or numbers and signs them otherwise;
    a column of unequal sides turned so is not."""
    location = (3.3, 1.7, 0.9)
    square = np.array([0.2, 0.2, 1.5])
    original = box_of(transform32(location, (0.0, 0.0, 0.0)), square)
    turned_matrix = transform32(location, (0.0, 0.0, np.pi / 2))
    turned = box_of(turned_matrix, square)
    # The same turned box fitted with its axes permuted and one flipped: (z, -x, y).
    axes = turned.rotations[0]
    refitted = ShapeBatch.boxes(
        turned.centers,
        [np.stack([axes[:, 2], -axes[:, 0], axes[:, 1]], axis=1)],
        [square[[2, 0, 1]]],
    )
    for copy in (turned, refitted):
        assert 0.0 < corner_hausdorff(original, copy)  # float32's cos(pi/2) is not 0
        assert pair_is_duplicate(original, copy, 0.0)

    oblong = np.array([0.2, 0.3, 1.5])
    original = box_of(transform32(location, (0.0, 0.0, 0.0)), oblong)
    turned = box_of(turned_matrix, oblong)
    # Corners 0.1 apart along both sides: 0.14 from the nearest turned corner.
    assert not pair_is_duplicate(original, turned, 0.0)
    assert not pair_is_duplicate(original, turned, 0.1)
    assert pair_is_duplicate(original, turned, 0.15)


def test_capsules_and_spheres_off_by_rounding_are_duplicates_at_tolerance_0():
    start = np.array([5.0, -2.0, 1.0])
    end = np.array([5.0, 3.0, 1.0])
    # A capsule's ends either way round, one copy's coordinates rounded to float32.
    rounded_start, rounded_end = (
        point.astype(np.float32).astype(np.float64) for point in (start + 1e-7, end)
    )
    capsules = ShapeBatch.capsules([start, rounded_end], [end, rounded_start], [0.1, 0.1])
    spheres = ShapeBatch.spheres([start, start, start], [0.5, 0.5 + 3e-7, 0.5 + 6e-5])
    batch = ShapeBatch.concat([capsules, spheres])
    pairs = np.array([[0, 1], [2, 3], [2, 4]])
    assert duplicate_mask(batch, pairs, 0.0).tolist() == [True, True, False]
    assert duplicate_mask(batch, pairs, 6e-5).tolist() == [True, True, True]


def test_flat_copies_a_hair_or_a_tolerance_apart_reach_the_criterion():
    """Flat proxies (a plane, a floor covering) of copies off by rounding along their
    normal do not overlap: the broad phase must keep them for the duplicates criterion,
    as far as tolerance + epsilon."""
    table = object_table([ObjectMetadata("Floor"), ObjectMetadata("FloorCopy")])
    half_extents = [[2.0, 3.0, 0.0]] * 2
    for offset, tolerance in ((2e-7, 0.0), (0.005, 0.01)):
        batch = ShapeBatch.boxes(
            [[1.0, 1.0, 0.5], [1.0, 1.0, 0.5 + offset]], [np.eye(3)] * 2, half_extents
        )
        test = ClashTest("dup", test_type="duplicates", tolerance=tolerance)
        hits = evaluate_frame(prepare_test(test, table), batch, 1)
        assert hits.names.tolist() == [["Floor", "FloorCopy"]]
        assert broad_phase_margin(test, batch) == tolerance + largest_contact_epsilon(batch)
