"""Exact signed distance: worked examples, degenerate input, invariants, coal agreement."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from collide_addon.core import ShapeBatch, pair_distance, pair_intersects
from collide_addon.core.constants import KIND_CAPSULE
from collide_addon.core.shapes import frames_from_axes
from collide_dev.coal_oracle import coal_signed_distance
from tests.core.shapes_for_tests import (
    any_shape,
    distance_inside,
    point,
    quaternion,
    rotation_from_quaternion,
    shape_pair,
    solid_shapes,
)

IDENTITY = np.eye(3)


def rotation_z(angle: float) -> np.ndarray:
    c, s = math.cos(angle), math.sin(angle)
    return np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])


def distance_of(first: ShapeBatch, second: ShapeBatch):
    return pair_distance(shape_pair(first, second), [0], [1])


def unit_box(center=(0.0, 0.0, 0.0), rotation=IDENTITY, half=(1.0, 1.0, 1.0)) -> ShapeBatch:
    return ShapeBatch.boxes([center], [rotation], [half])


# --- textbook examples: OBB-sphere, OBB-OBB (SAT), sphere-box, capsule-sphere -----------


def test_obb_sphere_sum_of_squared_outside_parts():
    # Article 1: per axis, how far the centre lies outside the slab; sum of squares vs r^2.
    box = unit_box(rotation=rotation_z(math.pi / 4))
    center = rotation_z(math.pi / 4) @ np.array([2.0, 3.0, 0.5])  # outside by (1, 2, 0)
    sphere = ShapeBatch.spheres([center], [1.0])
    result = distance_of(box, sphere)
    assert result.distance[0] == pytest.approx(math.sqrt(1 + 4) - 1.0, abs=1e-12)
    touching = ShapeBatch.spheres([center], [math.sqrt(5.0)])
    assert distance_of(box, touching).distance[0] == pytest.approx(0.0, abs=1e-12)
    assert pair_intersects(shape_pair(box, touching), [0], [1])[0]


def test_obb_obb_separated_on_a_cross_axis_only():
    # Article 2: two boxes whose face axes all overlap but an edge x edge axis separates.
    first = unit_box(rotation=rotation_z(math.pi / 4))
    tilt = np.array([[1.0, 0.0, 0.0], [0.0, 0.0, -1.0], [0.0, 1.0, 0.0]])  # 90 deg about x
    second = unit_box(
        center=(0.0, 2.0 * math.sqrt(2) + 0.1, 0.0), rotation=tilt @ rotation_z(math.pi / 4)
    )
    result = distance_of(first, second)
    assert result.distance[0] > 0
    assert result.distance[0] == pytest.approx(
        coal_signed_distance(shape_pair(first, second), 0, 1), abs=1e-9
    )


def test_obb_obb_penetration_is_the_smallest_push():
    first = unit_box()
    second = unit_box(center=(1.5, 0.2, 0.0))
    result = distance_of(first, second)
    assert result.distance[0] == pytest.approx(-0.5)
    np.testing.assert_allclose(result.normal[0], [1.0, 0.0, 0.0], atol=1e-12)


def test_sphere_box_clamping_gives_the_gap_vector():
    # Article 3: clamp the centre in the box frame; what was clipped away is the gap.
    rotation = rotation_z(0.3)
    box = unit_box(center=(1.0, 2.0, 3.0), rotation=rotation)
    center = np.array([1.0, 2.0, 3.0]) + rotation @ np.array([3.0, 0.5, -0.25])
    result = distance_of(ShapeBatch.spheres([center], [0.5]), box)
    assert result.distance[0] == pytest.approx(2.0 - 0.5, abs=1e-12)
    np.testing.assert_allclose(result.normal[0], -rotation[:, 0], atol=1e-12)
    inside = distance_of(ShapeBatch.spheres([[1.0, 2.0, 3.0]], [0.5]), box)
    assert inside.distance[0] == pytest.approx(-1.5)


def test_capsule_sphere_point_segment_cases():
    # Article 4: t <= 0, t >= |AB|^2 and the interior case.
    capsule = ShapeBatch.capsules([[0.0, 0.0, 0.0]], [[4.0, 0.0, 0.0]], [0.5])
    spheres = ShapeBatch.spheres(
        [[-3.0, 0.0, 0.0], [7.0, 4.0, 0.0], [2.0, 3.0, 0.0]], [1.0, 1.0, 1.0]
    )
    batch = ShapeBatch.concat([capsule, spheres])
    result = pair_distance(batch, [0, 0, 0], [1, 2, 3])
    np.testing.assert_allclose(result.distance, [1.5, 3.5, 1.5], atol=1e-12)


# --- every pairing, worked by hand ------------------------------------------------------


@pytest.mark.parametrize(
    ("first", "second", "expected"),
    [
        (ShapeBatch.spheres([[0, 0, 0]], [1.0]), ShapeBatch.spheres([[3, 0, 0]], [1.0]), 1.0),
        (ShapeBatch.spheres([[0, 0, 0]], [1.0]), ShapeBatch.spheres([[1, 0, 0]], [1.0]), -1.0),
        (
            ShapeBatch.capsules([[0, 0, 0]], [[0, 0, 2]], [0.5]),
            ShapeBatch.capsules([[1, -1, 1]], [[1, 1, 1]], [0.25]),
            0.25,
        ),
        (
            ShapeBatch.capsules([[0, -1, 0]], [[0, 1, 0]], [0.5]),
            ShapeBatch.capsules([[-1, 0, 0]], [[1, 0, 0]], [0.5]),
            -1.0,
        ),
        (ShapeBatch.capsules([[0, 0, -0.1]], [[0, 0, 0.1]], [0.5]), unit_box((0, 0, 0.3)), -1.3),
        (ShapeBatch.capsules([[3, 0, -5]], [[3, 0, 5]], [0.5]), unit_box(), 1.5),
        (unit_box(), unit_box((3.0, 3.0, 0.0)), math.sqrt(2.0)),
        (unit_box(), unit_box((3.0, 3.0, 3.0)), math.sqrt(3.0)),
    ],
    ids=[
        "sphere-sphere gap",
        "sphere-sphere overlap",
        "capsule-capsule skew",
        "capsule-capsule crossing",
        "capsule in box",
        "capsule beside box",
        "box-box edge-edge",
        "box-box vertex-vertex",
    ],
)
def test_pairings_by_hand(first, second, expected):
    result = distance_of(first, second)
    assert result.distance[0] == pytest.approx(expected, abs=1e-12)
    assert coal_signed_distance(shape_pair(first, second), 0, 1) == pytest.approx(
        expected, abs=1e-6
    )


# --- degenerate input ---------------------------------------------------------------------


def test_zero_length_capsule_is_a_sphere():
    capsule = ShapeBatch.capsules([[1.0, 2.0, 3.0]], [[1.0, 2.0, 3.0]], [0.5])
    sphere = ShapeBatch.spheres([[1.0, 2.0, 3.0]], [0.5])
    others = ShapeBatch.concat(
        [
            unit_box((3.0, 2.0, 3.0), rotation_z(0.4)),
            ShapeBatch.capsules([[0, 0, 0]], [[0, 4, 0]], [0.2]),
        ]
    )
    as_capsule = pair_distance(ShapeBatch.concat([capsule, others]), [0, 0], [1, 2])
    as_sphere = pair_distance(ShapeBatch.concat([sphere, others]), [0, 0], [1, 2])
    np.testing.assert_allclose(as_capsule.distance, as_sphere.distance, atol=1e-12)


def test_flat_and_degenerate_boxes_are_finite_and_exact():
    flat = unit_box(half=(1.0, 1.0, 0.0))
    line = unit_box(center=(0.0, 0.0, 2.0), half=(0.0, 0.0, 1.0))
    dot = unit_box(center=(0.5, 0.5, 0.0), half=(0.0, 0.0, 0.0))
    batch = ShapeBatch.concat([flat, line, dot])
    result = pair_distance(batch, [0, 0, 1], [1, 2, 2])
    assert np.isfinite(result.distance).all() and np.isfinite(result.normal).all()
    np.testing.assert_allclose(result.distance, [1.0, 0.0, math.sqrt(0.5 + 1.0)], atol=1e-12)


def test_coincident_centres_and_parallel_edges_give_finite_normals():
    batch = ShapeBatch.concat(
        [
            ShapeBatch.spheres([[0, 0, 0], [0, 0, 0]], [1.0, 0.5]),
            ShapeBatch.capsules([[0, 0, 0], [0, 0, 0]], [[1, 0, 0], [2, 0, 0]], [0.1, 0.1]),
            unit_box(),
            unit_box(),
        ]
    )
    result = pair_distance(batch, [0, 2, 4, 0], [1, 3, 5, 4])
    assert np.isfinite(result.normal).all()
    np.testing.assert_allclose(np.linalg.norm(result.normal, axis=1), 1.0)
    np.testing.assert_allclose(result.distance, [-1.5, -0.2, -2.0, -2.0], atol=1e-12)


def test_bad_input_is_rejected_naming_the_index():
    with pytest.raises(ValueError, match=r"centers\[1\] is not finite"):
        ShapeBatch.spheres([[0, 0, 0], [np.nan, 0, 0]], [1.0, 1.0])
    with pytest.raises(ValueError, match=r"radii\[0\] is not finite"):
        ShapeBatch.capsules([[0, 0, 0]], [[1, 0, 0]], [np.inf])
    with pytest.raises(ValueError, match=r"rotations\[0\] is not orthonormal"):
        ShapeBatch.boxes([[0, 0, 0]], [2 * np.eye(3)], [[1, 1, 1]])
    with pytest.raises(ValueError, match=r"half_extents\[0\] is negative"):
        ShapeBatch.boxes([[0, 0, 0]], [np.eye(3)], [[1, -1, 1]])
    batch = ShapeBatch.spheres([[0, 0, 0]], [1.0])
    with pytest.raises(ValueError, match=r"j\[0\] is out of range"):
        pair_distance(batch, [0], [3])
    with pytest.raises(ValueError, match="margin must be finite"):
        pair_intersects(batch, [0], [0], margin=np.nan)


def test_empty_pair_list():
    result = pair_distance(ShapeBatch.spheres([[0, 0, 0]], [1.0]), [], [])
    assert result.distance.shape == (0,) and result.normal.shape == (0, 3)


# --- properties -------------------------------------------------------------------------


def both_orders(first: ShapeBatch, second: ShapeBatch):
    batch = shape_pair(first, second)
    return batch, pair_distance(batch, [0, 1], [1, 0])


@settings(max_examples=300, deadline=None)
@given(any_shape, any_shape)
@pytest.mark.slow
def test_symmetric_under_swapping_the_pair(first, second):
    _, result = both_orders(first, second)
    assert result.distance[0] == pytest.approx(result.distance[1], abs=1e-9)
    if result.distance[0] > 1e-9:
        np.testing.assert_allclose(result.normal[0], -result.normal[1], atol=1e-6)


@settings(max_examples=300, deadline=None)
@given(any_shape, any_shape, quaternion, point)
@pytest.mark.slow
def test_invariant_under_rigid_motions(first, second, rotation_quaternion, translation):
    rotation = rotation_from_quaternion(rotation_quaternion)
    batch = shape_pair(first, second)
    moved = ShapeBatch(
        kinds=batch.kinds,
        centers=batch.centers @ rotation.T + np.asarray(translation),
        rotations=np.einsum("ij,njk->nik", rotation, batch.rotations),
        half_extents=batch.half_extents,
        radii=batch.radii,
    )
    before = pair_distance(batch, [0], [1])
    after = pair_distance(moved, [0], [1])
    # 1e-8: segments 5e-7 rad from parallel lose ~1e-9 to cancellation in the closest-
    # point solve (the core promises 1e-6 at coordinates up to 1e3).
    assert after.distance[0] == pytest.approx(before.distance[0], abs=1e-8)


@settings(max_examples=400, deadline=None)
@given(any_shape, any_shape)
def test_witness_points_normal_and_sign(first, second):
    batch, result = both_orders(first, second)
    for row, (i, j) in enumerate(((0, 1), (1, 0))):
        assert distance_inside(batch, i, result.point_i[row : row + 1])[0] <= 1e-9
        assert distance_inside(batch, j, result.point_j[row : row + 1])[0] <= 1e-9
        assert np.linalg.norm(result.normal[row]) == pytest.approx(1.0)
        gap = result.point_j[row] - result.point_i[row]
        if result.distance[row] > 0:
            assert np.linalg.norm(gap) == pytest.approx(result.distance[row], abs=1e-9)
            np.testing.assert_allclose(gap, result.distance[row] * result.normal[row], atol=1e-9)
            # Moving j back along the normal by the distance makes the shapes touch.
        else:
            # The deepest points are -distance apart along the normal.
            assert -gap @ result.normal[row] == pytest.approx(-result.distance[row], abs=1e-9)


def translated(batch: ShapeBatch, shifts: np.ndarray) -> ShapeBatch:
    """The same shapes moved by shifts (n, 3)."""
    return ShapeBatch(
        kinds=batch.kinds,
        centers=batch.centers + shifts,
        rotations=batch.rotations,
        half_extents=batch.half_extents,
        radii=batch.radii,
    )


small_offset = st.tuples(*[st.floats(-1.0, 1.0) for _ in range(3)])


@settings(max_examples=300, deadline=None)
@given(any_shape, any_shape, small_offset)
@pytest.mark.slow
def test_pushing_j_out_by_the_depth_along_the_normal_separates_exactly(first, second, offset):
    # Put the second shape's centre near the first's so that most pairs overlap.
    batch = shape_pair(first, second)
    batch = translated(batch, np.array([[0, 0, 0], batch.centers[0] - batch.centers[1] + offset]))
    result = pair_distance(batch, [0], [1])
    assume(result.distance[0] < -1e-6)
    shift = -result.distance[0] * result.normal[0]
    moved = translated(batch, np.array([[0, 0, 0], shift]))
    # 1e-7, not 1e-9: edges 1e-7 rad from parallel give SAT cross axes whose direction
    # carries rounding of 1e-16 / 1e-7 (the core promises 1e-6).
    assert pair_distance(moved, [0], [1]).distance[0] == pytest.approx(0.0, abs=1e-7)


def pairing_strategy():
    kinds = solid_shapes
    return st.sampled_from([(a, b) for k, a in enumerate(kinds) for b in kinds[k:]]).flatmap(
        lambda pair: st.tuples(pair[0], pair[1])
    )


def push_to_separate(batch: ShapeBatch, i: int, j: int, directions: np.ndarray) -> np.ndarray:
    """How far shape j must move along each unit direction (k, 3) to stop overlapping
    shape i: the support of i along n plus the support of j along -n, from the batch's
    arrays alone (every shape is a box swept by a ball)."""

    def support(k: int) -> np.ndarray:
        radius = np.abs(directions @ batch.rotations[k]) @ batch.half_extents[k]
        return directions @ batch.centers[k], radius + batch.radii[k]

    center_i, reach_i = support(i)
    center_j, reach_j = support(j)
    return center_i + reach_i - (center_j - reach_j)


@settings(max_examples=600, deadline=None)
@given(pairing_strategy())
@pytest.mark.slow
def test_agrees_with_coal_on_every_pairing(shapes):
    first, second = shapes
    batch = shape_pair(first, second)
    result = pair_distance(batch, [0], [1])
    ours = result.distance[0]
    reference = coal_signed_distance(batch, 0, 1)
    assert (ours > 0) == (reference > 0) or abs(ours) < 1e-6
    if min(ours, reference) > 1e-6:
        assert ours == pytest.approx(reference, abs=1e-6)  # GJK is tight for gaps
        return
    # Penetration: our depth is achieved by pushing j along our normal (to 1e-8: a core
    # gap of 1e-9 has a direction good to about 1e-9 rad, which a unit-long segment
    # turns into 1e-9 of push) ...
    depth = -ours
    assert push_to_separate(batch, 0, 1, result.normal[:1])[0] == pytest.approx(depth, abs=1e-8)
    if abs(ours - reference) > 1e-4:
        # ... and where coal's EPA, which approaches the depth from below, stops short of
        # it (seen: a capsule segment lying inside a box), no direction needs less.
        assert -reference < depth
        directions = np.random.default_rng(0).normal(size=(200_000, 3))
        directions /= np.linalg.norm(directions, axis=1, keepdims=True)
        assert push_to_separate(batch, 0, 1, directions).min() >= depth - 1e-8


def test_deeper_than_coal_where_its_epa_stops_short():
    # Found by hypothesis: the segment runs from the box's centre to its edge; the true
    # minimum push is 0.125 (core) + 1 (radius) along y; coal 3.0.3 answers -1.0833.
    # (With the box's frame the identity coal gets it right; this turned frame is the case.)
    box = ShapeBatch.boxes([[0, 0, 0]], [np.diag([-1.0, 1.0, -1.0])], [[1.0, 0.125, 1.0]])
    capsule = ShapeBatch.capsules([[0, 0, 0]], [[0, 0.125, 1.0]], [1.0])
    batch = shape_pair(box, capsule)
    result = pair_distance(batch, [0], [1])
    assert result.distance[0] == pytest.approx(-1.125, abs=1e-12)
    np.testing.assert_allclose(np.abs(result.normal[0]), [0, 1, 0], atol=1e-12)
    assert coal_signed_distance(batch, 0, 1) > -1.1


@settings(max_examples=300, deadline=None)
@given(any_shape, any_shape, st.floats(-1.0, 1.0))
def test_intersects_matches_distance_at_any_margin(first, second, margin):
    batch = shape_pair(first, second)
    distance = pair_distance(batch, [0], [1]).distance[0]
    assume(abs(distance - margin) > 1e-9)
    assert pair_intersects(batch, [0], [1], margin)[0] == (distance <= margin)


def test_touching_counts_at_margin_zero():
    batch = ShapeBatch.concat(
        [unit_box(), unit_box((2.0, 0.0, 0.0)), ShapeBatch.spheres([[0, 0, 2]], [1.0])]
    )
    result = pair_distance(batch, [0, 0], [1, 2])
    np.testing.assert_allclose(result.distance, [0.0, 0.0], atol=1e-15)
    assert pair_intersects(batch, [0, 0], [1, 2]).all()


# --- regressions found by hypothesis: normals of nearly touching segments ----------------


def assert_normal_achieves_depth(batch: ShapeBatch, tolerance: float = 1e-9) -> None:
    result = pair_distance(batch, [0], [1])
    push = push_to_separate(batch, 0, 1, result.normal)[0]
    assert push == pytest.approx(-result.distance[0], abs=tolerance)


def test_segments_meeting_end_to_end_push_along_their_common_perpendicular():
    # A "V": the first segment ends where the second starts (gap 4e-17, rounding).
    first = ShapeBatch.capsules([[0.0, 0.0, 0.0]], [[0.0, -2.76830323, 1.18792711]], [1.0])
    second = ShapeBatch.capsules(
        [[-2.2e-16, -2.76830323, 1.18792711]], [[3.77566634, -1.0, 0.0]], [1.0]
    )
    assert_normal_achieves_depth(shape_pair(first, second))


def test_segment_ending_on_a_long_segment_pushes_along_their_common_perpendicular():
    # Found by the hour's fuzz run: two capsules of radius 1e6 whose segments, a million
    # long, meet where one ends on the other, one unit from the origin. The solve's
    # closest points came 1e-10 apart, were taken as a gap, and its noise gave a normal
    # along which 2.94e6 of push was needed for a depth of 2e6.
    scale = 1e6
    first = ShapeBatch.capsules([[0.0, 0.0, 0.0]], [[0.0, scale, 0.0]], [scale])
    second = ShapeBatch.capsules([[0.0, 3 * scale, 0.9375 * scale]], [[0.0, 1.0, 0.0]], [scale])
    batch = shape_pair(first, second)
    result = pair_distance(batch, [0], [1])
    assert result.distance[0] == pytest.approx(-2 * scale, abs=1e-6)
    np.testing.assert_allclose(np.abs(result.normal[0]), [1.0, 0.0, 0.0], atol=1e-12)
    assert_normal_achieves_depth(batch, tolerance=1e-6)


def test_parallel_segments_a_nanometre_apart():
    # Exactly parallel, 7.07e-10 apart: the gap's direction must be perpendicular to
    # both, not the direction of two rounded points (off by 1e-7 rad, 1.6e-7 of push).
    first = ShapeBatch.capsules([[0.0, 0.0, 1.0]], [[0.0, 1.0, 0.0]], [1.0])
    second = ShapeBatch.capsules([[0.0, 1.0, 1e-9]], [[0.0, 1e-9, 1.0]], [1.0])
    batch = shape_pair(first, second)
    assert pair_distance(batch, [0], [1]).distance[0] == pytest.approx(
        -2.0 + 1e-9 / math.sqrt(2.0), abs=1e-15
    )
    assert_normal_achieves_depth(batch)


def test_nearly_parallel_crossing_segments():
    # 1e-10 rad apart and crossing, turned to a generic orientation so that the cross
    # product of the directions is mostly rounding (its direction off by ~1e-6 rad).
    rotation = rotation_from_quaternion([0.3, -0.5, 0.7, 0.2])
    ends = np.array([[0.0, -1.0, 0.0], [0.0, 1.0, 0.0], [0.0, -1.0, -1e-10], [0.0, 1.0, 1e-10]])
    ends = ends @ rotation.T + [0.25, -0.5, 0.75]
    first = ShapeBatch.capsules(ends[:1], ends[1:2], [1.0])
    second = ShapeBatch.capsules(ends[2:3], ends[3:], [1.0])
    assert_normal_achieves_depth(shape_pair(first, second), tolerance=1e-8)


def test_nearly_antiparallel_segments_sharing_an_end():
    # Found by hypothesis: both segments end at (3, 0, 0), 6.4e-9 rad from antiparallel,
    # so the far ends are 2e-8 to one side of each other's lines. A perpendicular turned
    # to the other side needed 2e-8 more push than the depth.
    axis_a = [0.9863939238321437, -0.1643989873053573, 0.0]
    axis_b = [-0.9863939227727985, 0.16439899366142882, 0.0]
    batch = ShapeBatch(
        kinds=np.array([KIND_CAPSULE, KIND_CAPSULE], np.int8),
        centers=np.array([[1.5, 0.25, 0.0], [1.5000000596046448, 0.25, 0.0]]),
        rotations=frames_from_axes(np.array([axis_a, axis_b])),
        half_extents=np.array([[0.0, 0.0, 1.5206906325745548], [0.0, 0.0, 1.5206905737808956]]),
        radii=np.array([1.0, 1.0]),
    )
    assert pair_distance(batch, [0], [1]).distance[0] == pytest.approx(-2.0, abs=1e-15)
    assert_normal_achieves_depth(batch, tolerance=1e-12)
