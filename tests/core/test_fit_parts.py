"""The parts `fit_shapes` runs over whole groups of point sets: each part gives every set
what it gives the set alone, and the measures and bounds they take hold."""

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from collide_addon.core import fit as fit_module
from collide_addon.core.fit import fit_auto, fit_box, fit_capsule, fit_sphere, principal_axes
from tests.core.shapes_for_tests import assert_proper_rotation, outside_distance, random_rotation
from tests.core.test_fit import (
    CORNERS,
    TOLERANCE,
    assert_fitted_together_as_alone,
    brute_force_ball_radius,
    coordinates,
    point_clouds,
    random_mesh_like_cloud,
    seeds,
)

cloud_lists = st.lists(point_clouds, min_size=1, max_size=6)


@given(
    values=arrays(
        np.float64, st.tuples(st.integers(1, 5), st.integers(1, 40)), elements=st.integers(0, 6)
    ),
    data=st.data(),
)
@settings(max_examples=80, deadline=None)
def test_smallest_takes_the_smallest_values_of_each_row_in_order(values, data):
    count = data.draw(st.integers(1, values.shape[1]))
    chosen = fit_module._smallest(values, count)
    for row, picks in zip(values, chosen, strict=True):
        assert len(set(picks.tolist())) == count
        np.testing.assert_array_equal(row[picks], np.sort(row)[:count])
        order = np.lexsort((picks, row[picks]))
        np.testing.assert_array_equal(order, np.arange(count))
    # Each row is chosen on its own: the same row alone gives the same indices.
    for index in range(len(values)):
        np.testing.assert_array_equal(
            fit_module._smallest(values[index : index + 1], count)[0], chosen[index]
        )


@given(
    corners=arrays(
        np.float64, st.tuples(st.integers(1, 4), st.just(26), st.just(3)), elements=coordinates
    ),
    scale=st.floats(1e-3, 1e3),
    offset=arrays(np.float64, 3, elements=coordinates),
)
@settings(max_examples=60, deadline=None)
def test_unit_corners_do_not_depend_on_size_and_place(corners, scale, offset):
    unit = fit_module._unit_corners(corners)
    np.testing.assert_array_equal(unit[:, 0], 0.0)
    extents = np.ptp(unit, axis=1).max(axis=1)
    single = np.ptp(corners, axis=1).max(axis=1) == 0.0
    np.testing.assert_allclose(extents[~single], 1.0, rtol=1e-12)
    np.testing.assert_array_equal(extents[single], 0.0)
    # Where the set is not tiny beside the offset, moving and scaling it changes nothing
    # beyond rounding.
    moved = fit_module._unit_corners(corners * scale + offset)
    measurable = np.ptp(corners, axis=1).max(axis=1) >= 1.0
    np.testing.assert_allclose(moved[measurable], unit[measurable], atol=1e-9)


@given(seed=seeds)
@settings(max_examples=40, deadline=None)
def test_principal_axes_turn_with_the_points(seed):
    # An eigenvector's sign is arbitrary: the axes are signed by the points' third
    # moments, so that the orientations the box search samples around them are the
    # same in every pose (a cloud's box came out 5% larger in a quarter of its poses).
    rng = np.random.default_rng(seed)
    points = rng.normal(size=(int(rng.integers(8, 200)), 3)) * [1.0, 2.5, 6.25]
    rotation = random_rotation(rng)
    moved = points @ rotation.T + rng.uniform(-50.0, 50.0, 3)
    axes = principal_axes(points)
    assert_proper_rotation(axes)
    np.testing.assert_allclose(principal_axes(moved), rotation @ axes, atol=1e-6)


def test_face_frames_lie_flush_with_a_turned_box():
    rng = np.random.default_rng(12)
    rotation = random_rotation(rng)
    box = (CORNERS * [0.5, 1.0, 3.0]) @ rotation.T + [10.0, -4.0, 2.0]
    principal = principal_axes(box)
    corners = fit_module._unit_corners(fit_module._extreme_corners(box[None], principal[None]))
    distinct, _, hull_counts = fit_module._distinct_corners(corners)
    frames = fit_module._best_face_frames(distinct, hull_counts, principal[None])
    assert frames.shape == (1, fit_module._REFINED_STARTS, 3, 3)
    for frame in frames[0]:
        assert_proper_rotation(frame)
        # Every frame of a box face is the box's own frame, up to the order and signs
        # of the axes.
        np.testing.assert_allclose(np.abs(frame.T @ rotation).max(axis=1), 1.0, atol=1e-9)


@given(points=point_clouds)
@settings(max_examples=60, deadline=None)
def test_face_frames_are_rotations_or_the_fallback(points):
    principal = principal_axes(points)
    corners = fit_module._unit_corners(fit_module._extreme_corners(points[None], principal[None]))
    distinct, _, hull_counts = fit_module._distinct_corners(corners)
    frames = fit_module._best_face_frames(distinct, hull_counts, principal[None])[0]
    for frame in frames:
        assert_proper_rotation(frame)
    if np.ptp(points, axis=0).max() == 0.0:
        np.testing.assert_array_equal(frames, np.broadcast_to(principal, frames.shape))


@given(
    points=arrays(np.float64, st.tuples(st.integers(2, 8), st.just(3)), elements=coordinates),
    seed=seeds,
)
@settings(max_examples=60, deadline=None)
def test_sphere_bound_is_below_the_minimal_ball(points, seed):
    if np.ptp(points, axis=0).max() < 1e-3:
        return  # (nearly) one point: brute force has no well-posed ball to try
    frame = random_rotation(np.random.default_rng(seed))
    bound = fit_module._sphere_volume_bounds(points[None], frame[None])[0]
    radius = min(brute_force_ball_radius(points), fit_sphere(points).radius)
    assert bound <= 4.0 / 3.0 * np.pi * radius**3 * (1.0 + 1e-9)


@given(
    points=arrays(np.float64, st.tuples(st.integers(2, 9), st.just(3)), elements=coordinates),
    dimensions=st.sampled_from([2, 3]),
    data=st.data(),
)
@settings(max_examples=80, deadline=None)
def test_minimal_ball_is_found_from_any_start(points, dimensions, data):
    """The capsule's tilts start each circle search from the points the previous circle
    was through: from any start points the search ends at the minimal ball, through
    points on it."""
    points = points[:, :dimensions]
    if np.ptp(points, axis=0).max() < 1e-3:
        return  # (nearly) one point: brute force has no well-posed ball to try
    starts = data.draw(
        arrays(np.int64, dimensions + 1, elements=st.integers(0, len(points) - 1)), label="starts"
    )
    flat = np.column_stack((points, np.zeros((len(points), 3 - dimensions))))
    expected = brute_force_ball_radius(flat)
    for start in (None, starts[None]):
        centres, through = fit_module._minimal_ball_centres(points[None], start)
        distances = np.linalg.norm(points - centres[0], axis=1)
        radius = distances.max()
        assert radius == pytest.approx(expected, rel=1e-6, abs=1e-9)
        np.testing.assert_allclose(distances[through[0]], radius, rtol=1e-6, atol=1e-9)


def test_minimal_ball_is_through_points_on_it_where_a_point_is_its_centre():
    """The search starts from the first point, here the centre of the minimal circle: a
    "ball" through that point twice ties with it, and is not what the ball is through."""
    points = np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 0.0], [-1.0, 0.0]])
    centres, through = fit_module._minimal_ball_centres(points[None])
    np.testing.assert_allclose(centres[0], [0.0, 0.0], atol=1e-12)
    np.testing.assert_allclose(np.linalg.norm(points[through[0]], axis=1), 1.0, rtol=1e-12)


@given(points=point_clouds, seed=seeds, data=st.data())
@settings(max_examples=80, deadline=None)
def test_capsule_bound_is_below_the_capsule_around_more_points(points, seed, data):
    """Auto fits skip the capsule along an axis where this bound, measured on some of the
    points, is no smaller than the box: it must hold for capsules around all of them."""
    rng = np.random.default_rng(seed)
    axis = rng.normal(size=3)
    axis /= np.linalg.norm(axis)
    chosen = data.draw(st.lists(st.integers(0, len(points) - 1), min_size=1), label="chosen")
    candidates = points[sorted(set(chosen))]
    volumes, bounds, _ = fit_module._capsule_volumes(candidates[None], axis[None])
    group = fit_module._Group.of([points], [points])
    around_all = fit_module._capsules_along(group, axis[None])[0]
    scale = max(1.0, float(np.abs(points).max())) ** 3
    assert bounds[0] <= volumes[0] * (1.0 + 1e-9) + 1e-12 * scale
    assert bounds[0] <= around_all.volume * (1.0 + 1e-9) + 1e-12 * scale


def test_capsule_bound_is_reached_by_points_on_a_capsule():
    """Points on a capsule's surface, its poles among them: the capsule around them is
    the capsule itself, and the bound is its volume (so no larger bound would hold)."""
    radius, half_length = 0.5, 2.0
    angles = np.linspace(0.0, 2.0 * np.pi, 64, endpoint=False)
    rims = [
        np.column_stack((radius * np.cos(angles), radius * np.sin(angles), np.full(64, z)))
        for z in (-half_length, half_length)
    ]
    poles = [[0.0, 0.0, -half_length - radius], [0.0, 0.0, half_length + radius]]
    points = np.vstack((*rims, poles)) @ random_rotation(np.random.default_rng(3)).T
    axis = np.linalg.svd(points - points.mean(axis=0))[2][0]
    volumes, bounds, _ = fit_module._capsule_volumes(points[None], axis[None])
    exact = np.pi * radius**2 * 2.0 * half_length + 4.0 / 3.0 * np.pi * radius**3
    assert bounds[0] == pytest.approx(exact, rel=1e-6)
    assert bounds[0] <= volumes[0] * (1.0 + 1e-9)


@given(clouds=cloud_lists)
@settings(max_examples=40, deadline=None)
def test_principal_frames_of_a_group_are_each_alone(clouds):
    together = fit_module._principal_frames(clouds)
    for cloud, frame in zip(clouds, together, strict=True):
        np.testing.assert_array_equal(frame, fit_module._principal_frames([cloud])[0])
        assert_proper_rotation(frame)


@given(clouds=cloud_lists, seed=seeds)
@settings(max_examples=40, deadline=None)
def test_boxes_and_capsules_measured_together_enclose_each_set_as_alone(clouds, seed):
    rng = np.random.default_rng(seed)
    rotations = np.stack([random_rotation(rng) for _ in clouds])
    circle_centers = rng.normal(size=(len(clouds), 2))
    boxes = fit_module._boxes_around(clouds, rotations)
    capsules = fit_module._capsules_around_circles(clouds, rotations, circle_centers)
    for index, cloud in enumerate(clouds):
        scale = max(1.0, float(np.abs(cloud).max()))
        for fit in (boxes[index], capsules[index]):
            assert outside_distance(fit, cloud).max() <= TOLERANCE * scale
        alone_box = fit_module._boxes_around([cloud], rotations[index : index + 1])[0]
        alone_capsule = fit_module._capsules_around_circles(
            [cloud], rotations[index : index + 1], circle_centers[index : index + 1]
        )[0]
        assert boxes[index].volume == alone_box.volume
        assert capsules[index].volume == alone_capsule.volume


@pytest.mark.parametrize("shape", ["AUTO", "BOX", "SPHERE", "CAPSULE"])
@given(clouds=st.lists(point_clouds, min_size=2, max_size=8))
# A near-copy (5e-7 off at coordinates of 2), which takes the first set's axis.
@example(
    clouds=[
        np.array([[0.0, 0.0, 2.0], [0.0, 0.0, 0.0]]),
        np.array([[5e-7, 0.0, 2.0], [0.0, 0.0, 0.0]]),
    ]
)
@settings(max_examples=15, deadline=None)
@pytest.mark.slow
def test_fitting_any_sets_together_gives_each_fit_alone(shape, clouds):
    assert_fitted_together_as_alone(clouds, shape, same_rotation=True)


@given(seed=seeds, count=st.integers(4, 120))
@settings(max_examples=40, deadline=None)
@pytest.mark.slow
def test_auto_is_the_smallest_of_the_box_sphere_and_capsule(seed, count):
    """The sphere's width bound and the capsule kept unrefined where it is twice the box
    never change which shape wins."""
    cloud = random_mesh_like_cloud(np.random.default_rng(seed), count)
    box = fit_box(cloud)
    candidates = [box, fit_sphere(cloud), fit_capsule(cloud, box)]
    assert fit_auto(cloud).volume == min(fit.volume for fit in candidates)


def test_distinct_corners_keep_each_point_once_in_order_padded_by_the_first():
    """A box's 26 extreme corners are its 8 corners (each extreme along several
    directions); a rounder set has more. Each set keeps its own, in their first order,
    padded by its first corner, and counts them and those from the first 14 directions."""
    rng = np.random.default_rng(5)
    box = CORNERS * [0.5, 1.0, 3.0]
    blob = rng.normal(size=(300, 3))
    sets = np.stack([np.vstack([box, np.repeat(box[:1], 292, axis=0)]), blob])
    principal = np.stack([principal_axes(points) for points in sets])
    corners = fit_module._extreme_corners(sets, principal)
    distinct, counts, hull_counts = fit_module._distinct_corners(corners)
    for k in range(2):
        rows, first = np.unique(corners[k], axis=0, return_index=True)
        count = len(rows)
        assert counts[k] == count
        np.testing.assert_array_equal(distinct[k, :count], corners[k, np.sort(first)])
        np.testing.assert_array_equal(
            distinct[k, count:], np.broadcast_to(corners[k, 0], (distinct.shape[1] - count, 3))
        )
        assert hull_counts[k] == len(np.unique(corners[k, : fit_module._HULL_FRAME_POINTS], axis=0))
    assert len(np.unique(distinct[0], axis=0)) == 8 and hull_counts[0] == 8
