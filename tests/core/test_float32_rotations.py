"""Boxes placed by float32 matrices, as Blender makes them, against coal.

Blender multiplies an object's matrix through its parents in float32, so parts meant to
be aligned come out with edges 1e-8 to 1e-7 rad from parallel and rotations orthonormal
only to about 1e-7, often far from the origin. The box-box SAT must neither lose nor
invent overlaps there, and its depths and gaps must stay exact to the coordinates'
rounding.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from collide_addon.core import KIND_BOX, ShapeBatch, pair_distance, pair_intersects
from collide_addon.core.constants import PARALLEL_CROSS_NORM
from collide_dev.coal_oracle import coal_signed_distance
from tests.core import shapes_for_tests


def turn(axis, degrees: float) -> np.ndarray:
    """(3, 3) float32 rotation by `degrees` about `axis` ((3,), non-zero), as Blender stores
    an object's rotation."""
    return shapes_for_tests.turn(axis, degrees).astype(np.float32)


def chain(*turns: np.ndarray) -> np.ndarray:
    """The product of float32 matrices, parent first, rounded to float32 at each step."""
    product = np.eye(3, dtype=np.float32)
    for matrix in turns:
        product = (product @ matrix).astype(np.float32)
    return product


def reader_rotations(matrices: np.ndarray) -> np.ndarray:
    """(n, 3, 3) float64 rotations of float32 matrices (n, 3, 3) of orthogonal columns, as
    the Blender reader takes them: each column divided by its length, in float64."""
    matrices = matrices.astype(np.float64)
    return matrices / np.linalg.norm(matrices, axis=1, keepdims=True)


def tolerance(batch: ShapeBatch) -> float:
    """How far two exact answers may differ: the rounding of coordinates of this magnitude
    (seen: 3e-13 times it), coal's own GJK/EPA tolerances, and the depth a skipped
    nearly-parallel cross axis may add (PARALLEL_CROSS_NORM times a half-extent)."""
    magnitude = float(np.abs(batch.centers).max())
    return 1e-9 + 1e-12 * magnitude + PARALLEL_CROSS_NORM * float(batch.half_extents.max())


def exact_separation(batch: ShapeBatch) -> float:
    """Boxes 0 and 1's separation over all 15 SAT axes, each built as a cross product in
    long double (none skipped unless exactly zero): minus the exact depth where <= 0."""
    axes_a = batch.rotations[0].T.astype(np.longdouble)
    axes_b = batch.rotations[1].T.astype(np.longdouble)
    crosses = np.cross(axes_a[:, None, :], axes_b[None, :, :]).reshape(9, 3)
    candidates = np.concatenate([axes_a, axes_b, crosses])
    lengths = np.sqrt((candidates * candidates).sum(axis=1))
    candidates = candidates[lengths > 0] / lengths[lengths > 0, None]
    offset = batch.centers[1].astype(np.longdouble) - batch.centers[0].astype(np.longdouble)
    radius_a = np.abs(candidates @ axes_a.T) @ batch.half_extents[0].astype(np.longdouble)
    radius_b = np.abs(candidates @ axes_b.T) @ batch.half_extents[1].astype(np.longdouble)
    return float((np.abs(candidates @ offset) - radius_a - radius_b).max())


def assert_agrees_with_coal(batch: ShapeBatch) -> None:
    """pair_distance and pair_intersects on boxes 0 and 1 agree with coal on the sign and
    on gaps (GJK is tight for gaps); depths agree with the exact 15-axis SAT, as coal's
    EPA misses them on nearly aligned boxes (seen: 1.414 and 2.0 for two unit cubes 1e-8
    rad from aligned, overlapping by 1.5; exactly aligned, coal gives 1.5). Where the
    exact SAT shows an overlap, coal's gap is its GJK's miss: two unit cubes 1 apart along
    x, one turned 180 degrees about x under a float32 chain, came out 1e-12 apart by coal
    and 1 deep by the SAT (an overlap every one of the 15 axes shows)."""
    ours = pair_distance(batch, [0], [1]).distance[0]
    hit = pair_intersects(batch, [0], [1])[0]
    reference = coal_signed_distance(batch, 0, 1)
    exact = exact_separation(batch)
    allowed = tolerance(batch)
    if exact < -allowed:
        reference = exact
    if abs(reference) > allowed:
        assert hit == (reference < 0), (ours, reference)
        assert (ours < 0) == (reference < 0), (ours, reference)
    if reference > 0:
        assert ours == pytest.approx(reference, abs=allowed)
    else:
        assert ours == pytest.approx(exact, abs=allowed), (ours, reference)


def test_aligned_parts_overlapping_by_22_cm_are_reported():
    # Two parts under a three-level parent chain, both turned 90 degrees about the
    # parent's z, one in a single turn and one in two (25 + 65): their edges end up
    # about 3e-8 rad from parallel. Part b sits 0.22 m into part a along a's x axis,
    # 18 km from the origin. The cross axes of the nearly parallel edges came out with
    # separations of the boxes' size and the pair at distance 0, not a clash.
    parent = chain(turn((2, 3, -1), 90), turn((2, -1, 1), -155), turn((0, 2, 1), 15))
    matrices = np.stack(
        [
            chain(parent, turn((0, 0, 1), 90)),
            chain(parent, turn((0, 0, 1), 25), turn((0, 0, 1), 65)),
        ]
    )
    rotations = reader_rotations(matrices)
    half_extents = np.array([[0.8, 0.45, 1.2], [0.6, 0.3, 0.9]])
    center_a = np.array([18250.5, -7320.25, 1204.75])
    # b's reach along a's x axis, then b pushed 0.22 m into a along it (a little off
    # centre sideways, within a's faces).
    axis_x, axis_y, axis_z = rotations[0].T
    reach = half_extents[0, 0] + np.abs(axis_x @ rotations[1]) @ half_extents[1]
    center_b = center_a + (reach - 0.22) * axis_x + 0.1 * axis_y - 0.15 * axis_z
    batch = ShapeBatch.boxes([center_a, center_b], rotations, half_extents)
    assert pair_intersects(batch, [0], [1])[0]
    result = pair_distance(batch, [0], [1])
    assert result.distance[0] == pytest.approx(-0.22, abs=1e-6)
    assert_agrees_with_coal(batch)


def test_batches_store_float32_rotations_orthonormal_to_float64_rounding():
    # Both ways in: ShapeBatch.boxes and the plain constructor (which the Blender reader
    # uses for its placed fits).
    parent = chain(turn((3, -1, 2), 65), turn((1, 1, 0), 45), turn((0, 2, 1), 15))
    rotations = reader_rotations(np.stack([parent, chain(parent, turn((1, 0, 0), 90))]))
    assert np.abs(np.einsum("nki,nkj->nij", rotations, rotations) - np.eye(3)).max() > 1e-9
    made = ShapeBatch.boxes(np.zeros((2, 3)), rotations, np.ones((2, 3)))
    direct = ShapeBatch(
        kinds=np.full(2, KIND_BOX, dtype=np.int8),
        centers=np.zeros((2, 3)),
        rotations=rotations,
        half_extents=np.ones((2, 3)),
        radii=np.zeros(2),
    )
    # Batches made of their rows (taken, joined, replaced) keep them without a new pass.
    taken = made.take([1, 0])
    joined = ShapeBatch.concat([made, direct])
    replaced = made.with_rows([0], direct.take([1]))
    np.testing.assert_array_equal(taken.rotations, made.rotations[[1, 0]])
    np.testing.assert_array_equal(joined.rotations[2:], direct.rotations)
    np.testing.assert_array_equal(replaced.rotations[0], direct.rotations[1])
    for batch in (made, direct):
        stored = batch.rotations
        assert stored.dtype == np.float64
        assert np.abs(np.einsum("nki,nkj->nij", stored, stored) - np.eye(3)).max() < 1e-15
        assert np.abs(stored - rotations).max() < 1e-6
        np.testing.assert_array_equal(
            np.sign(np.linalg.det(stored)), np.sign(np.linalg.det(rotations))
        )


# Turns as a CAD user makes them: multiples of 5 or 45 degrees about an axis with small
# integer components (a world axis, a diagonal) or any axis.
degrees = st.one_of(
    st.integers(-71, 71).map(lambda k: 5.0 * k), st.integers(-7, 7).map(lambda k: 45.0 * k)
)
integer_axis = st.tuples(*[st.integers(-3, 3)] * 3).filter(any)
any_axis = st.tuples(*[st.floats(-1.0, 1.0)] * 3).filter(lambda v: sum(c * c for c in v) > 0.01)
axis = st.one_of(integer_axis, any_axis)
parent_turns = st.lists(st.tuples(axis, degrees), min_size=2, max_size=4)
# 90-degree turns of a box's own axes (permutations and sign flips with det +1): exact in
# float32, so the parts stay aligned up to their parents' rounding.
axis_turn = st.tuples(st.permutations(range(3)), st.tuples(*[st.sampled_from([-1, 1])] * 3))
far_coordinate = st.tuples(st.sampled_from([-1.0, 1.0]), st.floats(3.0, 5.0)).map(
    lambda sign_power: sign_power[0] * 10.0 ** sign_power[1]
)
half_extent = st.floats(0.05, 3.0)
# b's centre in a's frame, as a fraction of how far apart the boxes can be and still
# touch along each of a's axes: overlapping, touching and near pairs.
reach_fraction = st.floats(-1.1, 1.1)


@settings(max_examples=300, deadline=None)
@given(
    parent_turns,
    axis,
    degrees,
    degrees,
    st.tuples(axis, degrees),
    axis_turn,
    st.tuples(*[far_coordinate] * 3),
    st.tuples(*[half_extent] * 6),
    st.tuples(*[reach_fraction] * 3),
)
def test_aligned_parts_under_float32_parent_chains_agree_with_coal(
    turns, common_axis, first, second, detour, box_axes, center, extents, fractions
):
    # Part a turns about `common_axis` by first + second in one go; part b in two steps
    # after a detour that cancels out (a turn and its inverse), then turns its box axes
    # by multiples of 90 degrees: the same orientation up to float32 rounding.
    parent = chain(*(turn(*step) for step in turns))
    part_a = chain(parent, turn(common_axis, first + second))
    detour_axis, detour_degrees = detour
    permutation, signs = box_axes
    quarter_turns = (np.eye(3)[list(permutation)] * np.array(signs)).astype(np.float32)
    if np.linalg.det(quarter_turns) < 0:
        quarter_turns[:, 0] *= -1.0
    part_b = chain(
        parent,
        turn(detour_axis, detour_degrees),
        turn(detour_axis, -detour_degrees),
        turn(common_axis, first),
        turn(common_axis, second),
        quarter_turns,
    )
    rotations = reader_rotations(np.stack([part_a, part_b]))
    half_extents = np.array(extents).reshape(2, 3)
    reach = half_extents[0] + np.abs(rotations[0].T @ rotations[1]) @ half_extents[1]
    center_a = np.array(center)
    center_b = center_a + rotations[0] @ (np.array(fractions) * reach)
    assert_agrees_with_coal(ShapeBatch.boxes([center_a, center_b], rotations, half_extents))
