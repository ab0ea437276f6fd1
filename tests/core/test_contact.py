"""The contact rule (collide_addon/core/contact.py): penetration, touching and gaps."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from collide_addon.core import ShapeBatch, find_contacts, pair_distance
from collide_addon.core.constants import CUBE_CORNER_SIGNS
from collide_addon.core.contact import (
    CONTACT_RELATIVE,
    clash_mask,
    contact_epsilon,
    contact_margin,
    coordinate_bound,
    largest_contact_epsilon,
    largest_coordinate,
    penetrating,
    resolved_distance,
    touching,
    within,
)


def test_epsilon_is_a_micrometre_near_the_origin_and_grows_with_the_coordinates():
    points = np.array([[0.0, 0.0, 0.0], [0.5, -0.9, 0.2], [3.0, 0.0, -40.0], [0, 2e5, 0]])
    assert contact_epsilon(points) == pytest.approx([1e-6, 1e-6, 4e-5, 0.2])
    assert contact_epsilon(np.zeros((0, 3))).shape == (0,)


def test_rules_at_their_boundaries():
    epsilon = 1e-6
    tolerance = 0.01
    distance = np.array([-0.02, -(tolerance + epsilon), -0.005, 0.0, 1e-7, tolerance + epsilon, 1])
    assert penetrating(distance, tolerance, epsilon).tolist() == [1, 0, 0, 0, 0, 0, 0]
    assert touching(distance, tolerance, epsilon).tolist() == [0, 1, 1, 1, 1, 1, 0]
    assert within(distance, tolerance, epsilon).tolist() == [1, 1, 1, 1, 1, 1, 0]
    # With no tolerance, rounding on either side of zero is contact, not penetration.
    noise = np.array([-9e-7, -1e-9, 0.0, 1e-9, 9e-7])
    assert not penetrating(noise, 0.0, epsilon).any()
    assert touching(noise, 0.0, epsilon).all()
    assert within(noise, 0.0, epsilon).all()


def test_per_pair_epsilons_apply_row_by_row():
    distance = np.array([-5e-6, -5e-6])
    epsilon = contact_epsilon(np.array([[0.0, 0, 0], [100.0, 0, 0]]))
    assert penetrating(distance, 0.0, epsilon).tolist() == [True, False]


def _turn_float32(angles_degrees) -> np.ndarray:
    """A rotation composed in float32 from turns about z, x and z, as Blender's matrices
    are: (3, 3) float32, orthonormal only to about 1e-7."""
    matrix = np.eye(3, dtype=np.float32)
    for axis, angle in zip((2, 0, 2), np.radians(angles_degrees), strict=True):
        cosine, sine = np.float32(np.cos(angle)), np.float32(np.sin(angle))
        turn = np.eye(3, dtype=np.float32)
        first, second = [k for k in range(3) if k != axis]
        turn[first, first], turn[first, second] = cosine, -sine
        turn[second, first], turn[second, second] = sine, cosine
        matrix = matrix @ turn
    return matrix


@settings(max_examples=60, deadline=None)
@given(
    angles=st.tuples(*[st.integers(0, 71).map(lambda step: 5.0 * step)] * 3),
    offset=st.tuples(*[st.floats(-3e3, 3e3)] * 3),
    size=st.floats(0.05, 5.0),
)
def test_boxes_stacked_under_float32_matrices_touch_and_do_not_penetrate(angles, offset, size):
    """Two boxes stacked face to face in a float32 frame, far from the origin: the
    rounding puts their distance a little either side of zero, always within epsilon."""
    rotation = _turn_float32(angles)
    centre = np.array(offset, np.float32)
    up = rotation[:, 2]
    centres = np.stack([centre, centre + np.float32(2 * size) * up]).astype(np.float32)
    batch = ShapeBatch.boxes(
        centres.astype(np.float64),
        np.stack([rotation, rotation]).astype(np.float64),
        np.full((2, 3), size),
    )
    result = pair_distance(batch, np.array([0]), np.array([1]))
    point = 0.5 * (result.point_i + result.point_j)
    epsilon = contact_epsilon(point)
    assert touching(result.distance, 0.0, epsilon)[0], (result.distance, epsilon)
    assert not penetrating(result.distance, 0.0, epsilon)[0]
    # The broad phase margin from largest_contact_epsilon keeps the pair.
    pairs, _ = find_contacts(batch, margin=largest_contact_epsilon(batch))
    assert pairs.tolist() == [[0, 1]]


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), far=st.sampled_from([1.0, 1e3, 5e5]))
def test_largest_coordinate_is_the_farthest_point_of_any_shape(seed, far):
    rng = np.random.default_rng(seed)
    count = 6
    centers = rng.uniform(-far, far, (count, 3))
    rotations = np.linalg.qr(rng.normal(size=(count, 3, 3)))[0]
    sizes = rng.uniform(0.1, 5.0, (count, 3))
    radii = rng.uniform(0.1, 5.0, count)
    boxes = ShapeBatch.boxes(centers, rotations, sizes)
    corners = centers[:, None] + (CUBE_CORNER_SIGNS * sizes[:, None]) @ np.swapaxes(
        boxes.rotations, 1, 2
    )
    assert largest_coordinate(boxes) == pytest.approx(np.abs(corners).max(), rel=1e-12)
    spheres = ShapeBatch.spheres(centers, radii)
    assert largest_coordinate(spheres) == pytest.approx(
        (np.abs(centers) + radii[:, None]).max(), rel=1e-12
    )
    starts, ends = centers - sizes, centers + sizes
    capsules = ShapeBatch.capsules(starts, ends, radii)
    assert largest_coordinate(capsules) == pytest.approx(
        (np.maximum(np.abs(starts), np.abs(ends)) + radii[:, None]).max(), rel=1e-12
    )
    # The bound without turns is never below it.
    for batch in (boxes, spheres, capsules):
        assert coordinate_bound(batch) >= largest_coordinate(batch)
    none = ShapeBatch.spheres(np.zeros((0, 3)), np.zeros(0))
    assert largest_coordinate(none) == coordinate_bound(none) == 0.0


def test_largest_epsilon_bounds_every_contact_of_the_batch():
    rng = np.random.default_rng(7)
    count = 300
    batch = ShapeBatch.spheres(rng.uniform(-500, 500, (count, 3)), rng.uniform(1, 60, count))
    pairs, result = find_contacts(batch, margin=0.0)
    assert len(pairs) > 10
    points = np.concatenate([result.point_i, result.point_j])
    assert contact_epsilon(points).max() <= largest_contact_epsilon(batch)
    assert largest_contact_epsilon(ShapeBatch.spheres(np.zeros((0, 3)), np.zeros(0))) == (
        CONTACT_RELATIVE
    )


def test_largest_epsilon_stays_while_the_outermost_shape_moves_a_little():
    """Live checks keep the contacts of unchanged pairs only under the same margin: it
    followed the outermost coordinate bit for bit, so dragging that object re-decided
    every pair of the scene at each update."""
    rng = np.random.default_rng(3)
    centers = rng.uniform(-30, 30, (50, 3))
    outermost = int(np.abs(centers).max(axis=1).argmax())
    first = largest_contact_epsilon(ShapeBatch.spheres(centers, np.ones(50)))
    epsilons = []
    for step in range(1, 200):
        moved = centers.copy()
        moved[outermost] *= 1.0 + 1e-4 * step  # outwards, 0.3 mm a step at 30 m
        epsilons.append(largest_contact_epsilon(ShapeBatch.spheres(moved, np.ones(50))))
    assert epsilons[0] == first
    # It changes only where the bound crosses a step (one of 16 per power of two), and
    # never more than 1/8 above the exact one.
    assert len(set(epsilons)) <= 3
    for bound in [*rng.uniform(0.0, 1e7, 1000).tolist(), 0.5, 1.0, 2.0, 1.03125, 1e7]:
        batch = ShapeBatch.spheres(np.array([[bound, 0.0, 0.0]]), np.zeros(1))
        exact = CONTACT_RELATIVE * max(1.0, bound)
        assert exact <= largest_contact_epsilon(batch) <= exact * 1.125


def test_contact_margin_keeps_every_pair_the_rule_can_count():
    batch = ShapeBatch.spheres(np.array([[0.0, 0, 0], [40.0, 0, 0]]), np.array([1.0, 1.0]))
    epsilon = largest_contact_epsilon(batch)
    assert contact_margin("hard", 0.01, batch) == -0.01
    assert contact_margin("touching", 0.01, batch) == 0.01 + epsilon
    assert contact_margin("clearance", 0.2, batch) == 0.2 + epsilon
    with pytest.raises(ValueError, match="not a distance-based"):
        contact_margin("duplicates", 0.0, batch)


@pytest.mark.parametrize("rule", ["hard", "touching", "clearance"])
@pytest.mark.parametrize("tolerance", [0.0, 0.01])
def test_a_pair_pushed_to_the_resolved_distance_no_longer_clashes(rule, tolerance):
    epsilon = contact_epsilon([[3.0, -2.0, 100.0]])
    distance = resolved_distance(rule, tolerance, epsilon)
    assert not clash_mask(rule, tolerance, distance, epsilon)[0]
    assert distance[0] >= 0


def test_resolved_distance_refuses_other_rules():
    with pytest.raises(ValueError, match="resolved_distance"):
        resolved_distance("volume", 0.0, 1e-6)
