"""ShapeBatch construction, concatenation, bounds; the core never imports Blender."""

from __future__ import annotations

import numpy as np
import pytest

from collide_addon.core import KIND_BOX, KIND_CAPSULE, KIND_SPHERE, ShapeBatch
from collide_addon.core.constants import CUBE_CORNER_SIGNS
from collide_addon.core.shapes import frames_from_axes


def test_concat_keeps_order_and_kinds():
    boxes = ShapeBatch.boxes(
        np.zeros((2, 3)), np.broadcast_to(np.eye(3), (2, 3, 3)), np.ones((2, 3))
    )
    spheres = ShapeBatch.spheres([[1, 2, 3]], [0.5])
    capsules = ShapeBatch.capsules([[0, 0, 0]], [[0, 0, 4]], [1.0])
    batch = ShapeBatch.concat([boxes, spheres, capsules])
    assert len(batch) == 4
    np.testing.assert_array_equal(batch.kinds, [KIND_BOX, KIND_BOX, KIND_SPHERE, KIND_CAPSULE])
    np.testing.assert_array_equal(batch.centers[2], [1, 2, 3])
    np.testing.assert_allclose(batch.centers[3], [0, 0, 2])
    np.testing.assert_allclose(batch.half_extents[3], [0, 0, 2])
    np.testing.assert_allclose(batch.rotations[3][:, 2], [0, 0, 1])
    assert len(ShapeBatch.concat([])) == 0


def test_capsule_segments_round_trip():
    starts = np.array([[1.0, 2.0, 3.0], [0.0, 0.0, 0.0]])
    ends = np.array([[-1.0, 5.0, 0.5], [0.0, 0.0, 0.0]])
    batch = ShapeBatch.capsules(starts, ends, [0.1, 0.2])
    got_starts, got_ends = batch.capsule_segments()
    np.testing.assert_allclose(got_starts, starts, atol=1e-12)
    np.testing.assert_allclose(got_ends, ends, atol=1e-12)


def test_frames_are_right_handed_orthonormal():
    axes = np.array([[0, 0, 1.0], [1.0, 0, 0], [0, 0, 0], [0.6, 0.8, 0.0]])
    frames = frames_from_axes(axes)
    np.testing.assert_allclose(
        np.einsum("nki,nkj->nij", frames, frames), np.broadcast_to(np.eye(3), (4, 3, 3)), atol=1e-12
    )
    np.testing.assert_allclose(np.linalg.det(frames), 1.0)
    np.testing.assert_allclose(frames[[0, 1, 3], :, 2], axes[[0, 1, 3]])


def test_aabbs_cover_each_kind():
    rotation = np.array([[0.0, -1.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 1.0]])
    batch = ShapeBatch.concat(
        [
            ShapeBatch.boxes([[0, 0, 0]], [rotation], [[1.0, 2.0, 3.0]]),
            ShapeBatch.spheres([[5, 5, 5]], [1.0]),
            ShapeBatch.capsules([[0, 0, 0]], [[2, 0, 0]], [0.5]),
        ]
    )
    lo, hi = batch.aabbs()
    np.testing.assert_allclose(lo, [[-2, -1, -3], [4, 4, 4], [-0.5, -0.5, -0.5]], atol=1e-12)
    np.testing.assert_allclose(hi, [[2, 1, 3], [6, 6, 6], [2.5, 0.5, 0.5]], atol=1e-12)
    # Made once per batch and shared: a caller cannot change them for the next one.
    assert batch.aabbs()[0] is lo
    with pytest.raises(ValueError, match="read-only"):
        lo += 1.0
    # A batch of some rows has its own.
    np.testing.assert_allclose(batch.take(np.array([2])).aabbs()[1], [[2.5, 0.5, 0.5]], atol=1e-12)


def test_take_selects_rows():
    batch = ShapeBatch.spheres([[0, 0, 0], [1, 1, 1], [2, 2, 2]], [1.0, 2.0, 3.0])
    picked = batch.take([2, 0])
    np.testing.assert_array_equal(picked.radii, [3.0, 1.0])


def test_with_rows_replaces_rows_in_a_copy():
    batch = ShapeBatch.spheres([[0, 0, 0], [1, 1, 1], [2, 2, 2]], [1.0, 2.0, 3.0])
    boxes = ShapeBatch.boxes(
        [[5, 5, 5], [6, 6, 6]], np.broadcast_to(np.eye(3), (2, 3, 3)), np.ones((2, 3))
    )
    replaced = batch.with_rows(np.array([2, 0]), boxes)
    np.testing.assert_array_equal(replaced.kinds, [KIND_BOX, KIND_SPHERE, KIND_BOX])
    np.testing.assert_array_equal(replaced.centers, [[6, 6, 6], [1, 1, 1], [5, 5, 5]])
    np.testing.assert_array_equal(replaced.radii, [0.0, 2.0, 0.0])
    np.testing.assert_array_equal(replaced.half_extents[[0, 2]], np.ones((2, 3)))
    np.testing.assert_array_equal(batch.radii, [1.0, 2.0, 3.0])  # the original is kept
    assert (batch.kinds == KIND_SPHERE).all()


def test_cube_corner_signs_are_the_eight_corners_once():
    assert CUBE_CORNER_SIGNS.shape == (8, 3) and CUBE_CORNER_SIGNS.dtype == np.float64
    assert len({tuple(row) for row in CUBE_CORNER_SIGNS.tolist()}) == 8
    assert set(CUBE_CORNER_SIGNS.ravel().tolist()) == {-1.0, 1.0}
    assert not CUBE_CORNER_SIGNS.flags.writeable


def test_shape_mismatch_is_rejected():
    with pytest.raises(ValueError, match=r"centers must have shape \(n, 3\)"):
        ShapeBatch.spheres([1.0, 2.0, 3.0], [1.0])
    with pytest.raises(ValueError, match="differ in length"):
        ShapeBatch.spheres([[0, 0, 0]], [1.0, 2.0])


@pytest.mark.parametrize(
    "make",
    [
        lambda: ShapeBatch.spheres([[0, 0, 0], [1, 0, 0]], [1e308, 1]),
        lambda: ShapeBatch.boxes([[0, 0, 0]], [np.eye(3)], [[1e308, 1e308, 1e308]]),
        lambda: ShapeBatch.capsules([[-1e308, 0, 0]], [[1e308, 0, 0]], [1]),
        lambda: ShapeBatch.spheres([[1e200, 0, 0]], [1]),
        lambda: ShapeBatch(
            kinds=np.zeros(1, dtype=np.int8),
            centers=np.zeros((1, 3)),
            rotations=np.eye(3)[None],
            half_extents=np.full((1, 3), 1e300),
            radii=np.zeros(1),
        ),
    ],
)
def test_finite_but_overflowing_sizes_are_refused_at_construction(make):
    # Finite huge sizes used to give inf half-extents, NaN distances or an OverflowError
    # deep in find_pairs; they are refused where the batch is made, with the limit named.
    with pytest.raises(ValueError, match=r"beyond \+-1e\+100"):
        make()


def test_sizes_up_to_the_float32_range_are_accepted():
    batch = ShapeBatch.spheres([[3e38, 0, 0], [-3e38, 0, 0]], [3e38, 1.0])
    lo, hi = batch.aabbs()
    assert np.isfinite(lo).all() and np.isfinite(hi).all()
