"""Continuous detection: analytic times of first contact, no miss against dense
sampling, symmetry and invariance under rigid motions."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from collide_addon.core import KIND_BOX, KIND_CAPSULE, KIND_SPHERE, ShapeBatch, pair_distance
from collide_addon.core.broad import find_contacts
from collide_addon.core.continuous import (
    first_contacts,
    join_motions,
    motion_contacts,
    moving_as_one,
    shapes_at,
    swept_bounds,
    swept_candidates,
    swept_motion,
    swept_pairs,
)
from collide_addon.core.grid import overlapping_bounds
from tests.core.shapes_for_tests import point, quaternion, rotation_from_quaternion

ACCURACY = 1e-4
EPSILON = 1e-6
# How far below the threshold a pair may be at its toi: the bracket's start (one
# ACCURACY earlier) is above it and the shapes here move less than 20 units a frame
# (translation up to 8 * sqrt(3), turn times reach).
DISTANCE_DRIFT = ACCURACY * 20


def rotation_z(angle: float) -> np.ndarray:
    cos, sin = np.cos(angle), np.sin(angle)
    return np.array([[cos, -sin, 0.0], [sin, cos, 0.0], [0.0, 0.0, 1.0]])


def moving(first_start, first_end, second_start, second_end):
    return ShapeBatch.concat([first_start, second_start]), ShapeBatch.concat(
        [first_end, second_end]
    )


def tunnelling_ball():
    """A 5 cm ball crossing a 1 cm slab at 10 m per frame; first contact when the ball's
    centre is at x = -(0.005 + 0.025)."""
    slab = ShapeBatch.boxes([[0.0, 0.0, 0.0]], [np.eye(3)], [[0.005, 1.0, 1.0]])
    start = ShapeBatch.spheres([[-5.0, 0.0, 0.0]], [0.025])
    end = ShapeBatch.spheres([[5.0, 0.0, 0.0]], [0.025])
    return moving(start, end, slab, slab), (5.0 - 0.03) / 10.0


def sweeping_bar():
    """A 3 m bar (10 cm square) turning 90 degrees about z in one frame; a post of
    radius 5 cm stands 1 m from the axis at 45 degrees. The bar's side meets it when the
    post's centre is 0.1 from the bar's axis: sin(pi/4 - angle) = 0.1."""
    half = [[1.5, 0.05, 0.05]]
    start = ShapeBatch.boxes([[0.0, 0.0, 0.0]], [rotation_z(0.0)], half)
    end = ShapeBatch.boxes([[0.0, 0.0, 0.0]], [rotation_z(np.pi / 2)], half)
    foot = np.sqrt(0.5)
    post = ShapeBatch.capsules([[foot, foot, -0.5]], [[foot, foot, 0.5]], [0.05])
    return moving(start, end, post, post), (np.pi / 4 - np.arcsin(0.1)) / (np.pi / 2)


def test_tunnelling_ball_is_found_at_its_analytic_time():
    (start, end), expected = tunnelling_ball()
    # Neither end pose is in contact: a sampled scan misses it.
    assert (pair_distance(start, [0], [1]).distance > 1.0).all()
    assert (pair_distance(end, [0], [1]).distance > 1.0).all()
    result = first_contacts(start, end, [[0, 1]], EPSILON, ACCURACY)
    # The threshold is met EPSILON before touching: 1e-7 of a frame earlier.
    assert abs(result.toi[0] - expected) <= 1e-3 / 10
    assert result.toi[0] - ACCURACY <= expected <= result.toi[0] + ACCURACY
    assert result.distance[0] <= EPSILON
    np.testing.assert_allclose(result.normal[0], [1.0, 0.0, 0.0], atol=1e-9)
    np.testing.assert_allclose(result.point_j[0][0], -0.005, atol=1e-5)
    np.testing.assert_array_equal(swept_pairs(swept_motion(start, end), EPSILON), [[0, 1]])


def test_tunnelling_at_any_time_is_found_together_and_alone():
    # 97 balls, each through its own slab (3 m apart on a grid), crossing at times spread
    # over the frame: each contact lasts 0.006 frames and most fall between any fixed
    # samples.
    count = 97
    starts = -np.linspace(0.5, 9.5, count) - 0.03
    expected = (-0.03 - starts) / 10.0
    grid = np.arange(count)
    offsets = np.column_stack([np.zeros(count), 3.0 * (grid % 10), 3.0 * (grid // 10)])
    slabs = ShapeBatch.boxes(
        offsets, np.tile(np.eye(3), (count, 1, 1)), [[0.005, 1.0, 1.0]] * count
    )
    balls = [
        ShapeBatch.spheres(offsets + np.outer(x, [1.0, 0.0, 0.0]), np.full(count, 0.025))
        for x in (starts, starts + 10.0)
    ]
    start, end = (ShapeBatch.concat([ball, slabs]) for ball in balls)
    pairs = np.column_stack([np.arange(count), count + np.arange(count)])
    together = first_contacts(start, end, pairs, EPSILON, ACCURACY)
    np.testing.assert_allclose(together.toi, expected, atol=ACCURACY)
    # At 10 m a frame, 1e-4 frames is a millimetre: the contact is still taken where it
    # starts, within the slack (3e-5 at 30 m from the origin) of the threshold.
    assert (together.distance <= EPSILON).all() and (together.distance >= EPSILON - 5e-5).all()
    for index in range(0, count, 8):
        alone = first_contacts(start, end, pairs[index : index + 1], EPSILON, ACCURACY)
        assert abs(alone.toi[0] - expected[index]) <= ACCURACY


def test_a_fast_contact_is_taken_where_it_starts():
    # At 100 m a frame the accuracy's 1e-4 frames are a centimetre of travel, but the
    # contact is taken within the slack (5e-5 at 50 m from the origin) of where it starts:
    # the step or span before it is cleared.
    slab = ShapeBatch.boxes([[0.0, 0.0, 0.0]], [np.eye(3)], [[0.005, 1.0, 1.0]])
    for offset in np.linspace(0.0, 1.0, 7):
        balls = [ShapeBatch.spheres([[x + offset, 0.0, 0.0]], [0.025]) for x in (-50.0, 50.0)]
        start, end = moving(balls[0], balls[1], slab, slab)
        result = first_contacts(start, end, [[0, 1]], EPSILON, ACCURACY)
        assert abs(result.toi[0] - (50.0 - offset - 0.03) / 100.0) <= ACCURACY
        assert EPSILON - 6e-5 <= result.distance[0] <= EPSILON


def test_sweeping_bar_is_found_at_its_analytic_time():
    (start, end), expected = sweeping_bar()
    assert (pair_distance(start, [0], [1]).distance > 0.1).all()
    assert (pair_distance(end, [0], [1]).distance > 0.1).all()
    result = first_contacts(start, end, [[0, 1], [1, 0]], 0.0, ACCURACY)
    np.testing.assert_allclose(result.toi, expected, atol=ACCURACY)
    assert (result.distance <= 0.0).all()
    # The post is hit on the side the bar turns towards: normal from bar to post
    # is the bar's +y axis at that angle, and the post's normal is its opposite.
    angle = expected * np.pi / 2
    np.testing.assert_allclose(result.normal[0], [-np.sin(angle), np.cos(angle), 0], atol=1e-4)
    np.testing.assert_allclose(result.normal[1], -result.normal[0], atol=1e-9)
    np.testing.assert_array_equal(swept_pairs(swept_motion(start, end), 0.0), [[0, 1]])


def test_near_miss_is_not_reported():
    """The ball passes 2.5 cm beside a 5 cm sphere; the bar stops short of a post."""
    sphere = ShapeBatch.spheres([[0.0, 0.0, 0.0]], [0.05])
    start = ShapeBatch.spheres([[0.1, -5.0, 0.0]], [0.025])
    end = ShapeBatch.spheres([[0.1, 5.0, 0.0]], [0.025])
    result = first_contacts(*moving(start, end, sphere, sphere), [[0, 1]], 0.02)
    assert np.isnan(result.toi).all() and np.isnan(result.normal).all()
    # With a clearance of 3 cm the same pass is found, at its analytic time: the gap
    # sqrt(0.1^2 + y^2) - 0.075 reaches 0.03 at y = -sqrt(0.105^2 - 0.1^2).
    result = first_contacts(*moving(start, end, sphere, sphere), [[0, 1]], 0.03)
    expected = (5.0 - np.sqrt(0.105**2 - 0.1**2)) / 10.0
    assert abs(result.toi[0] - expected) <= ACCURACY
    (bar_start, bar_end), _ = sweeping_bar()
    far_post = ShapeBatch.spheres([[1.2, 1.2, 0.0]], [0.05])
    start = ShapeBatch.concat([bar_start.take([0]), far_post])
    end = ShapeBatch.concat([bar_end.take([0]), far_post])
    assert np.isnan(first_contacts(start, end, [[0, 1]], 0.0).toi).all()


def test_pairs_in_contact_at_the_start_have_toi_zero_and_static_pairs_never_touch():
    ball = ShapeBatch.spheres([[0.0, 0.0, 0.0]], [1.0])
    touching_start = ShapeBatch.spheres([[2.0, 0.0, 0.0]], [1.0])
    away = ShapeBatch.spheres([[4.0, 0.0, 0.0]], [1.0])
    start, end = moving(ball, ball, touching_start, away)
    result = first_contacts(start, end, [[0, 1]], EPSILON)
    assert result.toi[0] == 0.0
    apart = ShapeBatch.concat([ball, away])
    assert np.isnan(first_contacts(apart, apart, [[0, 1]], EPSILON).toi).all()
    # Pairs without relative motion are the samples' to decide: not swept.
    assert len(swept_pairs(swept_motion(apart, apart), 10.0)) == 0


def _boxes_on_a_turning_parent(turn, pivot, gap, nudge=0.0):
    """Two unit cubes a `gap` apart along x (the second nudged by `nudge` along x at
    the end), the pair turned by `turn` (3, 3) about `pivot` between the two samples."""
    centers = np.array([[0.0, 0.0, 0.0], [1.0 + gap, 0.0, 0.0]])
    half = [[0.5, 0.5, 0.5]] * 2
    start = ShapeBatch.boxes(centers, [np.eye(3)] * 2, half)
    moved = (centers - pivot) @ turn.T + pivot
    moved[1] += turn[:, 0] * nudge
    end = ShapeBatch.boxes(moved, [turn] * 2, half)
    return swept_motion(start, end)


@settings(max_examples=60, deadline=None)
@given(quaternion, point, st.sampled_from([0.0, 1e-7, 0.01]))
def test_parts_turning_as_one_keep_their_distance(turn_quaternion, pivot, gap):
    """Touching (or 1 cm apart) parts of one assembly turned about any pivot: the
    samples decide, nothing in between. Each centre on a straight chord and each turn
    about its own centre brought them closer mid-way: touching cubes turning 2 degrees
    met 0.15 mm deep between the frames."""
    turn = rotation_from_quaternion(turn_quaternion)
    motion = _boxes_on_a_turning_parent(turn, np.asarray(pivot), gap)
    assert moving_as_one(motion, np.array([[0, 1]])).tolist() == [True]
    assert len(swept_pairs(motion, 0.0)) == 0
    # Nudged apart by a millimetre at the end as well, they moved relative to each other.
    nudged = _boxes_on_a_turning_parent(turn, np.asarray(pivot), gap, nudge=1e-3)
    assert moving_as_one(nudged, np.array([[0, 1]])).tolist() == [False]


def test_end_pose_is_the_end_batch_and_rotations_take_the_shortest_arc():
    """A quarter turn about -z written as 3/4 of a turn about +z still turns by pi/2;
    at t = 1 the shape is the end shape."""
    half = [[1.0, 0.2, 0.1]]
    start = ShapeBatch.boxes([[0.0, 0.0, 0.0]], [np.eye(3)], half)
    end = ShapeBatch.boxes([[1.0, 2.0, 3.0]], [rotation_z(1.5 * np.pi)], half)
    motion = swept_motion(start, end)
    np.testing.assert_allclose(motion.angles, [np.pi / 2])
    np.testing.assert_allclose(motion.axes, [[0.0, 0.0, -1.0]], atol=1e-12)
    at_end = shapes_at(motion, np.array([0]), np.array([1.0]))
    np.testing.assert_allclose(at_end.rotations, end.rotations, atol=1e-12)
    np.testing.assert_allclose(at_end.centers, end.centers, atol=1e-12)
    halfway = shapes_at(motion, np.array([0]), np.array([0.5]))
    np.testing.assert_allclose(halfway.rotations[0], rotation_z(-np.pi / 4), atol=1e-12)


# --- Properties -------------------------------------------------------------------------

size = st.floats(0.02, 1.0)


@st.composite
def moving_shape(draw):
    """(start, end) of one shape: a random kind and size, two random poses."""
    kind = draw(st.sampled_from([KIND_BOX, KIND_SPHERE, KIND_CAPSULE]))
    if kind == KIND_BOX:
        half_extents, radius = [draw(size), draw(size), draw(size)], 0.0
    elif kind == KIND_SPHERE:
        half_extents, radius = [0.0, 0.0, 0.0], draw(size)
    else:
        half_extents, radius = [0.0, 0.0, draw(size)], draw(size)
    quaternions = [np.array(draw(quaternion)) for _ in range(2)]
    # Half a turn has two shortest arcs (about w and -w) that the oracle and the core
    # may choose differently: keep clear of it.
    cosine = quaternions[0] @ quaternions[1] / np.prod(np.linalg.norm(quaternions, axis=1))
    assume(abs(cosine) > 0.05)
    poses = [
        ShapeBatch(
            kinds=np.array([kind], dtype=np.int8),
            centers=np.array([draw(point)]),
            rotations=rotation_from_quaternion(q)[None],
            half_extents=np.array([half_extents]),
            radii=np.array([radius]),
        )
        for q in quaternions
    ]
    return poses[0], poses[1], quaternions[0], quaternions[1]


def slerp(first: np.ndarray, second: np.ndarray, times: np.ndarray) -> np.ndarray:
    """Quaternion slerp along the shortest arc, written independently of the core:
    (4,), (4,), (k,) -> (k, 4)."""
    first, second = first / np.linalg.norm(first), second / np.linalg.norm(second)
    if first @ second < 0:
        second = -second
    angle = np.arccos(np.clip(first @ second, -1.0, 1.0))
    if angle < 1e-9:
        return np.tile(first, (len(times), 1))
    weights_first = np.sin((1 - times) * angle) / np.sin(angle)
    weights_second = np.sin(times * angle) / np.sin(angle)
    return weights_first[:, None] * first + weights_second[:, None] * second


def sampled_distances(first, second, times: np.ndarray) -> np.ndarray:
    """The pair's distance at each time of the interpolated motion, by the oracle slerp."""
    poses = []
    for start, end, q_start, q_end in (first, second):
        count = len(times)
        poses.append(
            ShapeBatch(
                kinds=np.repeat(start.kinds, count),
                centers=start.centers + times[:, None] * (end.centers - start.centers),
                rotations=rotation_from_quaternion(slerp(q_start, q_end, times)),
                half_extents=np.repeat(start.half_extents, count, axis=0),
                radii=np.repeat(start.radii, count),
            )
        )
    batch = ShapeBatch.concat(poses)
    count = len(times)
    return pair_distance(batch, np.arange(count), np.arange(count, 2 * count)).distance


def pair_of(first, second):
    return moving(first[0], first[1], second[0], second[1])


@settings(max_examples=80, deadline=None)
# Forty copies of a pair in one pass each get what one gets (see also
# test_joined_motions_give_each_pair_what_it_gets_alone).
@given(moving_shape(), moving_shape(), st.floats(0.0, 0.3), st.sampled_from([1, 40]))
def test_no_miss_against_dense_sampling(first, second, threshold, copies):
    start, end = pair_of(first, second)
    result = first_contacts(start, end, [[0, 1]] * copies, threshold, ACCURACY)
    np.testing.assert_array_equal(result.toi, result.toi[0])
    times = np.linspace(0.0, 1.0, 2000)
    distances = sampled_distances(first, second, times)
    # Contact deeper than the pair's slack (the contact epsilon, < 1e-5 here) is never
    # passed over.
    inside = np.flatnonzero(distances <= threshold - 1e-5)
    if len(inside):
        assert result.toi[0] <= times[inside[0]] + 1e-3
    if np.isfinite(result.toi[0]):
        assert result.distance[0] <= threshold
        # The oracle's pose at toi agrees it is within the threshold.
        assert sampled_distances(first, second, result.toi[:1])[0] <= threshold + 1e-9
        # And it was not in contact a bracket earlier.
        if result.toi[0] > 0:
            earlier = max(result.toi[0] - ACCURACY, 0.0)
            assert sampled_distances(first, second, np.array([earlier]))[0] > threshold - 1e-9
            # A pair that comes into contact after the start moves: swept pairs keep it.
            assert len(swept_pairs(swept_motion(start, end), threshold)) == 1
    else:
        assert not len(inside)


@settings(max_examples=60, deadline=None)
@given(moving_shape(), moving_shape())
def test_swept_bounds_contain_every_pose(first, second):
    start, end = pair_of(first, second)
    motion = swept_motion(start, end)
    lo, hi = swept_bounds(motion)
    times = np.linspace(0.0, 1.0, 101)
    for index in range(2):
        poses = shapes_at(motion, np.full(len(times), index), times)
        pose_lo, pose_hi = poses.aabbs()
        assert (pose_lo >= lo[index] - 1e-12).all()
        assert (pose_hi <= hi[index] + 1e-12).all()


@settings(max_examples=60, deadline=None)
@given(moving_shape(), moving_shape(), st.floats(0.0, 0.3))
def test_symmetric_in_the_pair(first, second, threshold):
    start, end = pair_of(first, second)
    result = first_contacts(start, end, [[0, 1], [1, 0]], threshold, ACCURACY)
    assert np.isnan(result.toi[0]) == np.isnan(result.toi[1])
    if np.isfinite(result.toi[0]):
        assert abs(result.toi[0] - result.toi[1]) <= 2 * ACCURACY
    if result.toi[0] > 0:
        # Not the witnesses or normals: at a face or edge contact they are not unique.
        # Both orders end within one bracket of the threshold.
        assert (result.distance <= threshold).all()
        assert (result.distance >= threshold - DISTANCE_DRIFT).all()


def moved_rigidly(batch: ShapeBatch, rotation: np.ndarray, translation: np.ndarray):
    return ShapeBatch(
        kinds=batch.kinds,
        centers=batch.centers @ rotation.T + translation,
        rotations=np.einsum("ij,njk->nik", rotation, batch.rotations),
        half_extents=batch.half_extents,
        radii=batch.radii,
    )


@settings(max_examples=60, deadline=None)
@given(moving_shape(), moving_shape(), st.floats(0.0, 0.3), quaternion, point)
def test_invariant_under_rigid_motions(first, second, threshold, turn, shift):
    start, end = pair_of(first, second)
    rotation, translation = rotation_from_quaternion(np.array(turn)), np.array(shift)
    result = first_contacts(start, end, [[0, 1]], threshold, ACCURACY)
    moved = first_contacts(
        moved_rigidly(start, rotation, translation),
        moved_rigidly(end, rotation, translation),
        [[0, 1]],
        threshold,
        ACCURACY,
    )
    assert np.isnan(result.toi[0]) == np.isnan(moved.toi[0])
    if np.isfinite(result.toi[0]):
        assert abs(result.toi[0] - moved.toi[0]) <= 2 * ACCURACY
    if result.toi[0] > 0:
        assert threshold - DISTANCE_DRIFT <= moved.distance[0] <= threshold


def crowd_motion(count: int = 60, seed: int = 3):
    """`count` boxes, spheres and capsules close together, each moving and turning fast."""
    rng = np.random.default_rng(seed)

    def poses(centers, angles):
        return ShapeBatch(
            kinds=np.resize([KIND_BOX, KIND_SPHERE, KIND_CAPSULE], count).astype(np.int8),
            centers=centers,
            rotations=np.array([rotation_z(angle) for angle in angles]),
            half_extents=np.resize([[0.3, 0.2, 0.1], [0.0, 0.0, 0.0], [0.0, 0.0, 0.4]], (count, 3)),
            radii=np.resize([0.0, 0.25, 0.1], count),
        )

    centers = rng.uniform(0.0, 4.0, (count, 3))
    angles = rng.uniform(0.0, 3.0, count)
    start = poses(centers, angles)
    end = poses(centers + rng.uniform(-1.0, 1.0, (count, 3)), angles + rng.uniform(-1, 1, count))
    return swept_motion(start, end)


@settings(max_examples=40, deadline=None)
@given(moving_shape(), moving_shape(), st.floats(0.0, 0.3))
def test_joined_motions_give_each_pair_what_it_gets_alone(first, second, threshold):
    # A scan advances the pairs of many intervals in the same passes (join_motions); a
    # pair's course must not depend on the others there, or a scan split into chunks
    # would give other times than one run.
    crowd = crowd_motion()
    crowd_pairs = swept_pairs(crowd, threshold)
    assert len(crowd_pairs) > 50  # many pairs in the first passes, a few in the last
    start, end = pair_of(first, second)
    alone = first_contacts(start, end, [[0, 1]], threshold, ACCURACY)
    crowd_alone = motion_contacts(crowd, crowd_pairs, threshold, ACCURACY)
    offset = len(crowd.start)
    joined = motion_contacts(
        join_motions([crowd, swept_motion(start, end)]),
        np.concatenate([crowd_pairs, [[offset, offset + 1]]]),
        threshold,
        ACCURACY,
    )
    for field in ("toi", "distance", "normal", "point_i", "point_j"):
        together = getattr(joined, field)
        np.testing.assert_array_equal(together[-1:], getattr(alone, field))
        np.testing.assert_array_equal(together[:-1], getattr(crowd_alone, field))


def grown_pairs(batch: ShapeBatch, margin: float) -> set[tuple[int, int]]:
    lo, hi = batch.aabbs()
    return {tuple(pair) for pair in overlapping_bounds(lo - margin / 2, hi + margin / 2).tolist()}


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 2**32 - 1), st.floats(0.0, 0.5), st.floats(-0.2, 0.5))
def test_swept_candidates_hold_the_pairs_of_both_ends_and_of_the_sweep(seed, margin, smaller):
    """One grid over the swept bounds serves the interval (`swept_pairs` among the
    candidates is `swept_pairs` itself, for any margin up to theirs) and the samples at
    both ends (every pair whose end bounds, grown by the margin, overlap), far from the
    origin too."""
    motion = crowd_motion(seed=seed % 1000)
    if seed % 2:
        motion = swept_motion(
            moved_rigidly(motion.start, np.eye(3), np.full(3, 1e4)),
            moved_rigidly(
                shapes_at(motion, np.arange(60), np.ones(60)), np.eye(3), np.full(3, 1e4)
            ),
        )
    candidates = swept_candidates(motion, margin)
    found = {tuple(pair) for pair in candidates.pairs.tolist()}
    end = shapes_at(motion, np.arange(len(motion.start)), np.ones(len(motion.start)))
    assert grown_pairs(motion.start, margin) <= found
    assert grown_pairs(end, margin) <= found
    within = min(smaller, margin)
    np.testing.assert_array_equal(
        swept_pairs(motion, within, candidates), swept_pairs(motion, within)
    )
    # A sample's broad phase among them finds what its own grid finds, bit for bit.
    alone_pairs, alone = find_contacts(end, margin)
    among_pairs, among = find_contacts(end, margin, candidates=candidates.pairs)
    np.testing.assert_array_equal(among_pairs, alone_pairs)
    np.testing.assert_array_equal(among.distance, alone.distance)
    np.testing.assert_array_equal(among.point_i, alone.point_i)


def test_swept_pairs_refuse_candidates_of_a_smaller_margin():
    motion = crowd_motion()
    with pytest.raises(ValueError, match="cannot hold"):
        swept_pairs(motion, 0.2, swept_candidates(motion, 0.1))


def test_swept_candidates_keep_a_pair_whose_sample_bounds_touch_exactly():
    """Two unit boxes rising to z = 0.1 and falling to z = 2.1 end with their bounds
    touching at z = 1.1, while the end poses interpolated at t = 1 land a few float steps
    short (-6.85 + (0.1 + 6.85) is not 0.1): the sample's broad phase finds the pair, so
    the candidates must hold it."""

    def boxes(first_z: float, second_z: float) -> ShapeBatch:
        return ShapeBatch(
            kinds=np.full(2, KIND_BOX, dtype=np.int8),
            centers=np.array([[0.0, 0.0, first_z], [0.0, 0.0, second_z]]),
            rotations=np.stack([np.eye(3)] * 2),
            half_extents=np.ones((2, 3)),
            radii=np.zeros(2),
        )

    end = boxes(0.1, 2.1)
    motion = swept_motion(boxes(-6.85, 6.29), end)
    lo, hi = swept_bounds(motion)
    assert hi[0, 2] < lo[1, 2]  # the interpolated ends no longer touch
    pairs, _ = find_contacts(end, 0.0)
    np.testing.assert_array_equal(pairs, [[0, 1]])
    np.testing.assert_array_equal(swept_candidates(motion, 0.0).pairs, [[0, 1]])
