"""Placing fits in the world: the polar split of an object's matrix, the normalised
stretch the fits are made and cached in, when a fit must be made again, and the fits
moved into the world."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from collide_addon.core import KIND_BOX, ShapeBatch
from collide_addon.core import place as place_module
from collide_addon.core.fit import fit_box, fit_capsule, fit_sphere, stack_fits
from collide_addon.core.place import (
    STRETCH_TOLERANCE,
    fit_looseness,
    mesh_volumes,
    normalised_stretch,
    place_fits,
    polar_decompose,
    rows_to_refit,
    stretch_keys,
)
from tests.core.shapes_for_tests import assert_proper_rotation, outside_distance, random_rotation

CORNERS = np.array([[x, y, z] for x in (-1, 1) for y in (-1, 1) for z in (-1, 1)], float)
# The 12 triangles of the cube CORNERS spans, outward.
_CUBE_FACES = np.array(
    [[0, 1, 3, 2], [4, 6, 7, 5], [0, 4, 5, 1], [2, 3, 7, 6], [0, 2, 6, 4], [1, 5, 7, 3]]
)
CUBE_TRIANGLES = np.vstack((_CUBE_FACES[:, [0, 1, 2]], _CUBE_FACES[:, [0, 2, 3]]))
seeds = st.integers(0, 2**32 - 1)


def random_stretch(rng: np.random.Generator) -> np.ndarray:
    """A symmetric positive definite (3, 3) stretch with axes in a random frame."""
    frame = random_rotation(rng)
    return frame @ np.diag(rng.uniform(0.2, 3.0, 3)) @ frame.T


@given(seed=seeds, sheared=st.booleans(), mirrored=st.booleans())
@settings(max_examples=60, deadline=None)
@pytest.mark.slow
def test_polar_decomposition_places_fits_exactly(seed, sheared, mirrored):
    """Fitting in stretched space then moving rigidly encloses the transformed points."""
    rng = np.random.default_rng(seed)
    linear = random_rotation(rng) @ np.diag(rng.uniform(0.2, 3.0, 3))
    if sheared:
        linear = random_rotation(rng) @ np.diag(rng.uniform(0.2, 3.0, 3)) @ linear
    if mirrored:
        linear[:, 1] = -linear[:, 1]
    orthogonal, stretch = polar_decompose(linear[None])
    np.testing.assert_allclose(orthogonal[0] @ stretch[0], linear, atol=1e-12)
    np.testing.assert_allclose(stretch[0], stretch[0].T, atol=1e-12)
    np.testing.assert_allclose(orthogonal[0].T @ orthogonal[0], np.eye(3), atol=1e-12)
    points = rng.uniform(-1, 1, (40, 3))
    translation = rng.uniform(-10, 10, 3)
    world = points @ linear.T + translation
    scale = 1.7
    for fitter in (fit_box, fit_sphere, fit_capsule):
        fit = fitter(points @ (stretch[0] / scale).T)
        placed = place_fits(stack_fits([fit]), orthogonal, np.array([scale]), translation[None])
        assert_proper_rotation(placed.rotations[0])
        world_fit = type(fit)(
            kind=fit.kind,
            center=placed.centers[0],
            rotation=placed.rotations[0],
            half_extents=placed.half_extents[0],
            radius=placed.radii[0],
            volume=fit.volume * scale**3,
        )
        assert outside_distance(world_fit, world).max() <= 1e-9 * 30


@given(seed=seeds, scale=st.floats(0.01, 100.0))
@settings(max_examples=60, deadline=None)
def test_moving_rotating_and_uniform_scaling_keep_the_fits(seed, scale):
    """The same stretch under another rotation, translation and uniform scale has the
    same normalised stretch and cache key, so nothing is refitted."""
    rng = np.random.default_rng(seed)
    stretch = random_stretch(rng)
    before = random_rotation(rng) @ stretch
    after = random_rotation(rng) @ (scale * stretch)
    normalised, size = normalised_stretch(polar_decompose(np.stack([before, after]))[1])
    np.testing.assert_allclose(size[1], scale * size[0], rtol=1e-9)
    assert len(rows_to_refit(normalised[1:], np.ones(1, bool), normalised[:1])) == 0
    np.testing.assert_allclose(normalised[1], normalised[0], atol=1e-9)


@given(seed=seeds)
@settings(max_examples=40, deadline=None)
def test_normalised_stretch_has_unit_size(seed):
    rng = np.random.default_rng(seed)
    stretch = np.stack([random_stretch(rng) for _ in range(5)])
    normalised, size = normalised_stretch(stretch)
    assert normalised.shape == (5, 3, 3) and size.shape == (5,)
    np.testing.assert_allclose(size[:, None, None] * normalised, stretch, atol=1e-12)
    np.testing.assert_allclose((normalised**2).sum(axis=(1, 2)), 3.0, rtol=1e-12)


def test_normalised_stretch_of_a_uniform_scale_and_of_a_collapsed_object():
    stretch = np.stack([2.5 * np.eye(3), np.zeros((3, 3)), np.diag([2.0, 0.0, 0.0])])
    normalised, size = normalised_stretch(stretch)
    np.testing.assert_allclose(size, [2.5, 0.0, 2.0 / 3**0.5])
    np.testing.assert_allclose(normalised[0], np.eye(3), atol=1e-15)
    np.testing.assert_array_equal(normalised[1], np.eye(3))  # any stretch will do
    np.testing.assert_allclose(normalised[2], np.diag([3**0.5, 0.0, 0.0]))
    np.testing.assert_array_equal(stretch[1], np.zeros((3, 3)))  # the input is kept


def test_rows_to_refit_are_the_unfitted_and_the_restretched():
    rng = np.random.default_rng(5)
    previous = normalised_stretch(np.stack([random_stretch(rng) for _ in range(5)]))[0]
    fitted = np.array([True, False, True, True, True])
    now = previous.copy()
    now[2, 0, 1] += 2.0 * STRETCH_TOLERANCE  # changed: refit
    now[3, 1, 1] -= 0.5 * STRETCH_TOLERANCE  # float32 noise: keep
    rows = rows_to_refit(now, fitted, previous)
    assert rows.dtype == np.int64
    np.testing.assert_array_equal(rows, [1, 2])
    np.testing.assert_array_equal(rows_to_refit(now, fitted), [1])  # no fits placed yet
    np.testing.assert_array_equal(rows_to_refit(previous, np.ones(5, bool), previous), [])
    np.testing.assert_array_equal(fitted, [True, False, True, True, True])  # input kept
    assert rows_to_refit(np.zeros((0, 3, 3)), np.zeros(0, bool), np.zeros((0, 3, 3))).shape == (0,)


def test_stretch_keys_name_each_stretch():
    rng = np.random.default_rng(8)
    normalised = normalised_stretch(np.stack([random_stretch(rng) for _ in range(3)]))[0]
    keys = stretch_keys(normalised)
    assert len(keys) == 3
    assert all(len(key) == 9 and all(isinstance(entry, float) for entry in key) for key in keys)
    assert keys == stretch_keys(normalised.copy())
    # A stretch's key does not depend on the others rounded with it.
    assert stretch_keys(normalised[1:2]) == [keys[1]]
    assert {keys[0]: 1}[stretch_keys(normalised[:1].copy())[0]] == 1
    assert keys[0] != keys[1]
    np.testing.assert_allclose(keys[0], normalised[0].ravel(), atol=5e-7)
    assert stretch_keys(np.eye(3)[None]) == [(1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0)]
    assert stretch_keys(np.zeros((0, 3, 3))) == []


def test_fit_looseness_is_fit_volume_over_the_stretched_mesh_volume():
    cube = CORNERS * [1.0, 2.0, 0.5]
    (volume,) = mesh_volumes([cube], [CUBE_TRIANGLES])
    stretch = np.diag([2.0, 1.0, 0.5])
    stretched_box = fit_box(cube @ stretch)
    assert stretched_box.volume == pytest.approx(8.0)  # det = 1: the same volume
    sphere = fit_sphere(cube)
    fits = [fit_box(cube).volume, stretched_box.volume, sphere.volume, sphere.volume, 1.0]
    meshes = [volume, volume, volume, 0.0, volume]  # the fourth an open mesh
    stretches = [np.eye(3), stretch, 0.5 * np.eye(3), np.eye(3), np.diag([1.0, 1.0, 0.0])]
    looseness = fit_looseness(fits, meshes, np.stack(stretches))
    np.testing.assert_allclose(looseness[:3], [1.0, 1.0, sphere.volume / (volume * 0.125)])
    assert looseness[3] == 0.0 and looseness[4] == 0.0  # open, flat
    assert fit_looseness([], [], np.zeros((0, 3, 3))).shape == (0,)


def test_place_fits_gives_a_batch_in_the_fits_order():
    rng = np.random.default_rng(3)
    fits = [fit_box(rng.normal(size=(30, 3))), fit_sphere(rng.normal(size=(30, 3)))]
    orthogonal = np.stack([random_rotation(rng), np.diag([1.0, -1.0, 1.0])])  # one mirror
    translation = rng.uniform(-5, 5, (2, 3))
    placed = place_fits(stack_fits(fits), orthogonal, np.array([2.0, 0.5]), translation)
    assert isinstance(placed, ShapeBatch)
    np.testing.assert_array_equal(placed.kinds, [KIND_BOX, fits[1].kind])
    np.testing.assert_allclose(placed.half_extents[0], 2.0 * fits[0].half_extents)
    np.testing.assert_allclose(placed.radii[1], 0.5 * fits[1].radius)
    np.testing.assert_allclose(
        placed.centers,
        [orthogonal[k] @ ([2.0, 0.5][k] * fits[k].center) for k in (0, 1)] + translation,
    )
    for rotation in placed.rotations:
        assert_proper_rotation(rotation)
    empty = place_fits(stack_fits([]), np.zeros((0, 3, 3)), np.zeros(0), np.zeros((0, 3)))
    assert len(empty) == 0 and empty.rotations.shape == (0, 3, 3)


def test_mesh_volumes_of_cubes():
    vertices = CORNERS * [1.0, 2.0, 0.5]
    empty = np.zeros((0, 3), np.int64)
    volumes = mesh_volumes(
        [vertices, vertices, vertices * 2.0], [CUBE_TRIANGLES, empty, CUBE_TRIANGLES]
    )
    np.testing.assert_allclose(volumes, [8.0, 0.0, 64.0])
    assert mesh_volumes([], []).shape == (0,)


@given(seed=seeds)
@settings(max_examples=40, deadline=None)
def test_mesh_volume_of_a_box_is_its_sides_product_wherever_it_lies(seed):
    """Turned, moved and mirrored (inward faces), with Blender's int32 indices; among
    other meshes, measured in one run, in runs of their own or alone."""
    rng = np.random.default_rng(seed)
    boxes, sides = [], rng.uniform(0.01, 10.0, (3, 3))
    for side in sides:
        placed = (CORNERS * side / 2.0) @ random_rotation(rng).T + rng.uniform(-1e3, 1e3, 3)
        boxes.append(placed * [-1.0, 1.0, 1.0] if rng.random() < 0.5 else placed)
    triangles = [CUBE_TRIANGLES.astype(np.int32)] * 3
    # All three in one run, one box per run of 20 triangles, each box alone (as large
    # meshes are measured).
    run, alone = place_module._VOLUME_RUN_TRIANGLES, place_module._VOLUME_ALONE_TRIANGLES
    for run_triangles, alone_triangles in ((run, alone), (20, alone), (run, 12)):
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(place_module, "_VOLUME_RUN_TRIANGLES", run_triangles)
            patch.setattr(place_module, "_VOLUME_ALONE_TRIANGLES", alone_triangles)
            volumes = mesh_volumes(boxes, triangles)
        np.testing.assert_allclose(volumes, np.prod(sides, axis=1), rtol=1e-9)
