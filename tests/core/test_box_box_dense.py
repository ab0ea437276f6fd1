"""Box-box pairs as a broad phase hands them over: centres in a 3 m cube, half-extents
0.2-1.0 m, random rotations, about a third penetrating. Separated pairs are settled by
certified candidates (the features on the SAT axis, the vertex-to-box pairs) and the
rest by SAT; every kind of answer is checked against coal and a brute-force SAT, and
both ways round."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from collide_addon.core import ShapeBatch, pair_distance
from collide_dev.coal_oracle import coal_signed_distance
from collide_dev.synthetic import random_rotations
from tests.core.shapes_for_tests import distance_inside, random_rotation

BOXES = 40


def dense_boxes(seed: int) -> tuple[ShapeBatch, np.ndarray, np.ndarray]:
    """BOXES boxes of the dense distribution and all their pairs i < j: (batch, i, j)."""
    rng = np.random.default_rng(seed)
    batch = ShapeBatch.boxes(
        rng.uniform(0.0, 3.0, (BOXES, 3)),
        random_rotations(rng, BOXES),
        rng.uniform(0.2, 1.0, (BOXES, 3)),
    )
    i, j = np.triu_indices(BOXES, 1)
    return batch, i, j


def brute_force_separation(batch: ShapeBatch, i: int, j: int) -> float:
    """Largest separation of boxes i and j over their 15 SAT axes, each built with
    np.cross (parallel edges' axes left out): minus the depth where <= 0."""
    axes_i, axes_j = batch.rotations[i].T, batch.rotations[j].T
    crosses = np.cross(axes_i[:, None, :], axes_j[None, :, :]).reshape(9, 3)
    candidates = np.concatenate([axes_i, axes_j, crosses])
    lengths = np.linalg.norm(candidates, axis=1)
    candidates = candidates[lengths > 1e-6] / lengths[lengths > 1e-6, None]
    offset = batch.centers[j] - batch.centers[i]
    radius_i = np.abs(candidates @ axes_i.T) @ batch.half_extents[i]
    radius_j = np.abs(candidates @ axes_j.T) @ batch.half_extents[j]
    return float((np.abs(candidates @ offset) - radius_i - radius_j).max())


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 2**32 - 1))
def test_dense_pairs_agree_with_coal_and_brute_force_sat(seed):
    batch, i, j = dense_boxes(seed)
    result = pair_distance(batch, i, j)
    for row, (first, second) in enumerate(zip(i.tolist(), j.tolist(), strict=True)):
        ours = result.distance[row]
        reference = coal_signed_distance(batch, first, second)
        assert (ours > 0) == (reference > 0) or abs(ours) < 1e-6, (first, second)
        if ours > 1e-6:
            assert ours == pytest.approx(reference, abs=1e-9)  # GJK is tight for gaps
        else:
            assert ours == pytest.approx(brute_force_separation(batch, first, second), abs=1e-9)
    # Witness points lie on their boxes; gaps are their distance along the normal.
    for box, points in ((i, result.point_i), (j, result.point_j)):
        outside = [distance_inside(batch, k, points[row : row + 1])[0] for row, k in enumerate(box)]
        assert max(outside) <= 1e-9
    gaps = result.point_j - result.point_i
    separated = result.distance > 0
    np.testing.assert_allclose(
        gaps[separated], result.distance[separated, None] * result.normal[separated], atol=1e-9
    )
    deepest = -np.einsum("mk,mk->m", gaps[~separated], result.normal[~separated])
    np.testing.assert_allclose(deepest, -result.distance[~separated], atol=1e-9)


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 2**32 - 1))
def test_dense_pairs_are_the_same_both_ways_round(seed):
    batch, i, j = dense_boxes(seed)
    forward = pair_distance(batch, i, j)
    backward = pair_distance(batch, j, i)
    np.testing.assert_allclose(forward.distance, backward.distance, atol=1e-12)
    np.testing.assert_allclose(forward.normal, -backward.normal, atol=1e-9)
    # 1e-6: a pair settled by alternating projections is certified on its gap (to 1e-12
    # of it), which leaves its points that much freedom along flat directions.
    np.testing.assert_allclose(forward.point_i, backward.point_j, atol=1e-6)
    np.testing.assert_allclose(forward.point_j, backward.point_i, atol=1e-6)


def test_deepest_point_on_a_face_is_its_centre_either_way_round():
    # The SAT axis is the big box's top face normal, whichever box comes first. As box a
    # the face's centre was its deepest point; as box b, a vertex of that face picked by
    # the rounding noise of R^T axis (entries of 1e-17 off its own axis).
    rng = np.random.default_rng(5)
    big = random_rotation(rng)
    tilt = random_rotation(rng)
    top = big @ np.array([0.0, 0.0, 0.5])
    reach = np.abs(big[:, 2] @ tilt) @ np.full(3, 0.3)  # the small box's along the normal
    small_center = big @ np.array([0.05, -0.04, 0.5 + reach - 0.1])
    batch = ShapeBatch.boxes(
        [[0.0, 0.0, 0.0], small_center], [big, tilt], [[2.0, 2.0, 0.5], [0.3, 0.3, 0.3]]
    )
    result = pair_distance(batch, [0, 1], [1, 0])
    np.testing.assert_allclose(result.distance, -0.1, atol=1e-12)
    np.testing.assert_allclose(result.normal[0], big[:, 2], atol=1e-12)
    np.testing.assert_allclose(result.point_i[0], top, atol=1e-12)
    np.testing.assert_allclose(result.point_j[1], top, atol=1e-12)
    np.testing.assert_allclose(result.point_j[0], result.point_i[1], atol=1e-12)
