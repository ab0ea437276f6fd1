"""Proxy fitting: every point inside, tight on known shapes, invariant under rigid motions."""

from itertools import combinations, pairwise
from threading import get_ident

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from collide_addon.core import ShapeBatch
from collide_addon.core import fit as fit_module
from collide_addon.core.constants import KIND_BOX, KIND_CAPSULE, KIND_SPHERE
from collide_addon.core.fit import (
    fit_auto,
    fit_box,
    fit_capsule,
    fit_shape,
    fit_shapes,
    fit_sphere,
    stack_fits,
)
from tests.core.shapes_for_tests import assert_proper_rotation, outside_distance, random_rotation

CORNERS = np.array([[x, y, z] for x in (-1, 1) for y in (-1, 1) for z in (-1, 1)], float)
TOLERANCE = 1e-9

coordinates = st.floats(-100.0, 100.0, allow_nan=False, allow_infinity=False)
point_clouds = st.integers(1, 60).flatmap(
    lambda count: arrays(np.float64, (count, 3), elements=coordinates)
)
seeds = st.integers(0, 2**32 - 1)


@pytest.mark.parametrize("shape", ["AUTO", "BOX", "SPHERE", "CAPSULE"])
@given(points=point_clouds)
@settings(max_examples=40, deadline=None)
def test_every_point_is_inside(shape, points):
    fit = fit_shape(points, shape)
    scale = max(1.0, float(np.abs(points).max()))
    assert outside_distance(fit, points).max() <= TOLERANCE * scale
    assert_proper_rotation(fit.rotation)
    assert fit.volume >= 0.0


# The sphere is deterministic given the point order. The box search is a heuristic
# (a local search from several starts, not O'Rourke's exact algorithm) and may settle in
# another local minimum; the capsule tries the box's long axis besides the principal
# axis, so it inherits that, amplified on few points.
@pytest.mark.parametrize(
    ("fitter", "tolerance"),
    [(fit_sphere, 1e-6), (fit_box, 0.05), (fit_capsule, 0.15), (fit_auto, 0.15)],
)
@given(
    count=st.integers(8, 200),
    size=st.floats(0.01, 10.0),
    ratios=arrays(np.float64, 2, elements=st.floats(1.5, 4.0)),
    seed=seeds,
)
@example(count=40, size=1.0, ratios=np.array([4.0, 2.0]), seed=1309995).via(
    "the box axes of the two poses gave capsules 19% apart before the axis refinement"
)
@example(count=72, size=1.0, ratios=np.array([2.5, 2.5]), seed=2**32 - 1).via(
    "boxes 5.1% apart: the principal axes' signs differed, so did the sampled starts"
)
@settings(max_examples=30, deadline=None)
@pytest.mark.slow
def test_volume_is_invariant_under_rigid_motion(fitter, tolerance, count, size, ratios, seed):
    """On point clouds of 8 points or more, stretched differently along each axis.
    Symmetric clouds (equal principal variances) have no preferred axis, so a capsule's
    may legitimately differ between poses."""
    rng = np.random.default_rng(seed)
    stretch = size * np.array([1.0, ratios[0], ratios[0] * ratios[1]])
    points = rng.normal(size=(count, 3)) * stretch
    moved = points @ random_rotation(rng).T + rng.uniform(-50, 50, 3)
    original, transformed = fitter(points).volume, fitter(moved).volume
    assert transformed == pytest.approx(original, rel=tolerance)


@given(half_extents=arrays(np.float64, 3, elements=st.floats(0.05, 10.0)), seed=seeds)
@settings(max_examples=60, deadline=None)
def test_box_recovers_a_rotated_box(half_extents, seed):
    rng = np.random.default_rng(seed)
    rotation = random_rotation(rng)
    points = (CORNERS * half_extents) @ rotation.T + rng.uniform(-5, 5, 3)
    fit = fit_box(points)
    assert fit.volume == pytest.approx(8.0 * np.prod(half_extents), rel=1e-4)
    np.testing.assert_allclose(np.sort(fit.half_extents), np.sort(half_extents), rtol=1e-4)


def test_box_beats_the_local_bounding_box_of_a_rotated_slab():
    rng = np.random.default_rng(3)
    slab = rng.uniform(-1, 1, (500, 3)) * [4.0, 1.0, 0.1]
    turn = np.radians(30.0)
    rotation = np.array(
        [[np.cos(turn), -np.sin(turn), 0], [np.sin(turn), np.cos(turn), 0], [0, 0, 1]]
    )
    points = slab @ rotation.T
    local_box = np.prod(points.max(axis=0) - points.min(axis=0))
    assert fit_box(points).volume < 0.5 * local_box
    assert fit_box(points).volume <= np.prod(slab.max(axis=0) - slab.min(axis=0)) * (1 + 1e-9)


def test_sphere_is_near_minimal():
    rng = np.random.default_rng(7)
    directions = rng.normal(size=(3000, 3))
    points = directions / np.linalg.norm(directions, axis=1)[:, None] * 2.5 + [1, 2, 3]
    fit = fit_sphere(points)
    assert 2.5 - 1e-9 <= fit.radius <= 2.5 * 1.01
    np.testing.assert_allclose(fit.center, [1, 2, 3], atol=0.05)


def test_capsule_follows_the_principal_axis_of_a_rod():
    rng = np.random.default_rng(11)
    angle = rng.uniform(0, 2 * np.pi, 4000)
    height = rng.uniform(-5.0, 5.0, 4000)
    rod = np.column_stack((0.5 * np.cos(angle), 0.5 * np.sin(angle), height))
    rotation = random_rotation(rng)
    fit = fit_capsule(rod @ rotation.T)
    assert fit.radius == pytest.approx(0.5, rel=0.01)
    assert abs(fit.rotation[:, 2] @ rotation[:, 2]) == pytest.approx(1.0, abs=1e-3)
    # The radius-0.5 hemispheres let the segment stop short of the rod's ends.
    assert fit.half_extents[2] < 5.0


def test_auto_picks_the_smallest_volume():
    sphere_points = np.random.default_rng(5).normal(size=(2000, 3))
    sphere_points /= np.linalg.norm(sphere_points, axis=1)[:, None]
    assert fit_auto(sphere_points).kind == KIND_SPHERE
    assert fit_auto(CORNERS * [1.0, 2.0, 3.0]).kind == KIND_BOX
    rng = np.random.default_rng(2)
    ends = rng.normal(size=(1000, 3))
    ends /= np.linalg.norm(ends, axis=1)[:, None]
    pill = ends + np.where(ends[:, 2:] > 0, [0, 0, 4.0], [0, 0, -4.0])
    assert fit_auto(pill).kind == KIND_CAPSULE
    fits = [fit_box(pill), fit_sphere(pill), fit_capsule(pill, fit_box(pill))]
    assert fit_auto(pill).volume == min(fit.volume for fit in fits)


def test_degenerate_inputs_are_data():
    single = fit_auto(np.array([[1.0, 2.0, 3.0]]))
    assert single.volume == 0.0
    np.testing.assert_allclose(single.center, [1, 2, 3])
    flat = fit_box(np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0], [1, 1, 0]], float))
    assert flat.volume == 0.0
    assert np.sort(flat.half_extents) == pytest.approx([0.0, 0.5, 0.5])
    assert fit_capsule(np.array([[0, 0, 0], [0, 0, 0.0]])).radius == 0.0


@pytest.mark.parametrize("bad", [np.zeros((0, 3)), np.zeros((3, 2)), [[0.0, np.nan, 0.0]]])
def test_bad_input_is_rejected(bad):
    with pytest.raises(ValueError):
        fit_box(bad)


def test_unknown_shape_is_rejected():
    with pytest.raises(ValueError, match="HULL"):
        fit_shape(CORNERS, "HULL")


def test_stack_fits_of_nothing():
    stacked = stack_fits([])
    assert len(stacked) == 0 and stacked.kinds.dtype == np.int8
    assert stacked.centers.shape == (0, 3) and stacked.rotations.shape == (0, 3, 3)


def test_stack_fits_keeps_the_order_and_the_shapes():
    rng = np.random.default_rng(9)
    clouds = [
        rng.normal(size=(50, 3)) * scale + offset
        for scale, offset in (
            ([3, 1, 1], [0, 0, 0]),
            ([1, 1, 1], [5, 0, 0]),
            ([0.3, 0.3, 4], [0, 5, 0]),
        )
    ]
    fits = [fit_box(clouds[0]), fit_sphere(clouds[1]), fit_capsule(clouds[2]), fit_box(clouds[1])]
    batch = stack_fits(fits)
    assert isinstance(batch, ShapeBatch)
    np.testing.assert_array_equal(batch.kinds, [KIND_BOX, KIND_SPHERE, KIND_CAPSULE, KIND_BOX])
    for index, fit in enumerate(fits):
        np.testing.assert_allclose(batch.centers[index], fit.center, atol=1e-12)
        np.testing.assert_allclose(batch.radii[index], fit.radius, atol=1e-12)
        np.testing.assert_allclose(batch.half_extents[index], fit.half_extents, atol=1e-12)
    # A capsule's axis survives (the frame around it may differ).
    axis = batch.rotations[2][:, 2]
    assert abs(axis @ fits[2].rotation[:, 2]) == pytest.approx(1.0)


def test_a_box_mesh_is_its_own_hull_and_fits_exactly():
    # Object-space vertices of a box (plus points on its faces): the box itself.
    corners = np.array([[x, y, z] for x in (-1, 1) for y in (-2, 2) for z in (0, 0.5)], float)
    points = np.vstack([corners, [[0, 0, 0.5], [1, 0, 0.25]]])
    fit = fit_auto(points)
    assert fit.kind == KIND_BOX
    assert fit.volume == pytest.approx(2 * 4 * 0.5)
    # One corner cut off: no longer its own hull, the search still encloses every point.
    cut = np.vstack([corners[1:], [[-1, -1.9, 0.0], [-0.9, -2, 0.0], [-1, -2, 0.1]]])
    cut_fit = fit_box(cut)
    local = (cut - cut_fit.center) @ cut_fit.rotation
    assert (np.abs(local) <= cut_fit.half_extents + 1e-9).all()


def random_mesh_like_cloud(rng: np.random.Generator, count: int) -> np.ndarray:
    """(count, 3) points of a stretched, roughened round or boxy shape, or a plain
    Gaussian cloud, placed anywhere: what a mesh's vertices look like to the fitter."""
    kind = int(rng.integers(3))
    points = rng.normal(size=(count, 3))
    if kind == 1:  # on a sphere, slightly rough
        points /= np.linalg.norm(points, axis=1, keepdims=True)
        points *= rng.uniform(0.97, 1.0, (count, 1))
    elif kind == 2:  # on a box's faces
        points = rng.uniform(-1, 1, (count, 3))
        face = rng.integers(3, size=count)
        points[np.arange(count), face] = np.sign(points[np.arange(count), face])
    points *= rng.uniform(0.05, 5.0, 3)
    return points @ random_rotation(rng).T + rng.uniform(-100, 100, 3)


@pytest.mark.parametrize("shape", ["AUTO", "BOX", "SPHERE", "CAPSULE"])
@given(
    counts=st.lists(st.integers(513, 5000), min_size=1, max_size=5),
    seed=seeds,
)
@settings(max_examples=15, deadline=None)
@pytest.mark.slow
def test_fits_of_large_clouds_enclose_every_point(shape, counts, seed):
    """Above 512 points the searches run on the points extreme along fixed directions;
    the final extents and radii are measured over all points, so none is left out."""
    rng = np.random.default_rng(seed)
    clouds = [random_mesh_like_cloud(rng, count) for count in counts]
    for cloud, fit in zip(clouds, fit_shapes(clouds, shape), strict=True):
        scale = max(1.0, float(np.abs(cloud).max()))
        assert outside_distance(fit, cloud).max() <= TOLERANCE * scale
        assert_proper_rotation(fit.rotation)


# How much larger a fit from the extreme points may be than the same search run on every
# point. Measured on these clouds (median, worst): box 0.7%, 9.7% (the local search
# settles in another minimum), sphere 0%, 0%, capsule 0.1%, 4.9%, auto 0.1%, 9.7%; on
# other clouds the capsule's search differed by up to 13.5% either way.
EXHAUSTIVE_FACTORS = {"BOX": 1.15, "SPHERE": 1.01, "CAPSULE": 1.2, "AUTO": 1.15}


@pytest.mark.parametrize("shape", sorted(EXHAUSTIVE_FACTORS))
@pytest.mark.slow
def test_fits_from_extreme_points_are_near_the_exhaustive_fits(shape, monkeypatch):
    rng = np.random.default_rng(1)
    clouds = [random_mesh_like_cloud(rng, int(rng.integers(600, 1500))) for _ in range(20)]
    fast = [fit.volume for fit in fit_shapes(clouds, shape)]
    monkeypatch.setattr(fit_module, "_candidate_points", lambda points: points)
    exhaustive = [fit.volume for fit in fit_shapes(clouds, shape)]
    ratios = np.array(fast) / np.array(exhaustive)
    assert ratios.max() <= EXHAUSTIVE_FACTORS[shape]
    assert np.median(ratios) <= 1.01


def brute_force_ball_radius(points: np.ndarray) -> float:
    """The minimal enclosing ball's radius by trying every ball through 2, 3 or 4 of the
    points (its centre equidistant from them, in their affine hull)."""
    best = np.inf
    for size in (2, 3, 4):
        for subset in combinations(range(len(points)), size):
            corners = points[list(subset)]
            edges = corners[1:] - corners[0]
            gram = edges @ edges.T
            if abs(np.linalg.det(gram)) < 1e-12 * max(1.0, np.abs(gram).max()) ** size:
                continue
            center = corners[0] + np.linalg.solve(gram, 0.5 * np.diag(gram)) @ edges
            best = min(best, float(np.linalg.norm(points - center, axis=1).max()))
    return best


@given(points=arrays(np.float64, st.tuples(st.integers(2, 9), st.just(3)), elements=coordinates))
@settings(max_examples=60, deadline=None)
def test_sphere_is_the_minimal_ball(points):
    if np.ptp(points, axis=0).max() < 1e-3:
        return  # (nearly) one point: brute force has no well-posed ball to try
    expected = brute_force_ball_radius(points)
    assert fit_sphere(points).radius == pytest.approx(expected, rel=1e-6, abs=1e-9)


def assert_fitted_together_as_alone(clouds, shape, same_rotation=False):
    """`fit_shapes` of all `clouds` gives each cloud's `fit_shape` (and with
    `same_rotation` its rotation too), except that a copy of an earlier cloud up to a
    translation, to within the copy tolerance, takes that cloud's search (as
    `test_copies_up_to_a_translation_take_their_sources_fit_around_their_own_points`
    checks): a near-copy's fit then differs from its own search by about that
    tolerance, and must still enclose its points."""
    together = fit_shapes(clouds, shape)
    sources = fit_module._copy_sources([np.asarray(cloud, dtype=np.float64) for cloud in clouds])
    for index, (cloud, fit) in enumerate(zip(clouds, together, strict=True)):
        if sources[index] != index:
            scale = max(1.0, float(np.abs(cloud).max()))
            assert outside_distance(fit, cloud).max() <= TOLERANCE * scale
            continue
        alone = fit_shape(cloud, shape)
        assert fit.kind == alone.kind
        assert fit.volume == pytest.approx(alone.volume, rel=1e-9)
        np.testing.assert_allclose(fit.center, alone.center, atol=1e-9 * 100)
        if same_rotation:
            np.testing.assert_allclose(fit.rotation, alone.rotation, atol=1e-9)


@pytest.mark.parametrize("shape", ["AUTO", "BOX", "SPHERE", "CAPSULE"])
def test_fitting_many_at_once_gives_each_fit_alone(shape):
    rng = np.random.default_rng(4)
    clouds = [random_mesh_like_cloud(rng, count) for count in (5, 80, 700, 2000, 40, 3000)]
    assert_fitted_together_as_alone(clouds, shape)


@pytest.mark.parametrize("shape", ["AUTO", "BOX", "SPHERE", "CAPSULE"])
def test_copies_up_to_a_translation_take_their_sources_fit_around_their_own_points(
    shape, monkeypatch
):
    # Three shapes and copies of them far away, stored as Blender stores vertices
    # (float32), as a building's repeated elements come in world coordinates; a copy
    # turned by 90 degrees and one with a vertex moved by 1e-4 are shapes of their own.
    rng = np.random.default_rng(8)
    originals = [random_mesh_like_cloud(rng, count) + 20.0 for count in (8, 60, 900)]
    turned = originals[1][:, [1, 0, 2]] * [-1.0, 1.0, 1.0]
    moved = originals[2].copy()
    moved[5] += 1e-4
    offsets = [(1e3, -250.0, 37.5), (-80.0, 3.0, 0.0), (0.0, 0.0, 412.0)]
    clouds = [
        (cloud + offset).astype(np.float32).astype(np.float64)
        for cloud in originals
        for offset in [(0.0, 0.0, 0.0), *offsets]
    ]
    clouds += [turned.astype(np.float32).astype(np.float64), moved]
    sources = fit_module._copy_sources(clouds)
    assert sources.tolist() == [0] * 4 + [4] * 4 + [8] * 4 + [12, 13]
    searched = []
    searched_fits = fit_module._searched_fits
    monkeypatch.setattr(
        fit_module,
        "_searched_fits",
        lambda sets, *args: searched.append(len(sets)) or searched_fits(sets, *args),
    )
    fits = fit_shapes(clouds, shape)
    assert searched == [5]
    for index, (cloud, fit) in enumerate(zip(clouds, fits, strict=True)):
        source = fits[sources[index]]
        assert fit.kind == source.kind
        np.testing.assert_allclose(fit.rotation, source.rotation, atol=1e-12)
        # The copies' float32 rounding 1 km out moves their points by up to 6e-5.
        assert fit.volume == pytest.approx(source.volume, rel=1e-3)
        # Moved with the copy; a capsule's ends by up to the square root of the rounding
        # (a point near its radius moves the end by sqrt(r dr)).
        np.testing.assert_allclose(
            fit.center - source.center, cloud[0] - clouds[sources[index]][0], atol=1e-2
        )
        assert outside_distance(fit, cloud).max() <= TOLERANCE * np.abs(cloud).max()


@pytest.mark.parametrize("shape", ["AUTO", "BOX", "SPHERE", "CAPSULE"])
@given(
    clouds=st.lists(point_clouds, min_size=1, max_size=4),
    offsets=arrays(np.float64, (3, 3), elements=st.floats(-1e4, 1e4)),
)
@settings(max_examples=25, deadline=None)
def test_every_point_of_every_copy_is_inside_its_fit(shape, clouds, offsets):
    # Copies of each cloud anywhere (rounded to float32 as Blender stores them), beside
    # the clouds themselves: one point, a line, a flat patch or a solid.
    copies = [
        (cloud + offset).astype(np.float32).astype(np.float64)
        for cloud in clouds
        for offset in offsets
    ]
    point_sets = clouds + copies
    for points, fit in zip(point_sets, fit_shapes(point_sets, shape), strict=True):
        scale = max(1.0, float(np.abs(points).max()))
        assert outside_distance(fit, points).max() <= TOLERANCE * scale
        assert_proper_rotation(fit.rotation)


def test_fits_made_on_several_threads_come_back_in_order_with_their_progress():
    # 300 sets of several sizes: about ten groups, fitted on the worker threads. Each
    # fit must land at its own set's index, and progress is reported in the calling
    # thread, from none done to all done.
    rng = np.random.default_rng(11)
    clouds = [random_mesh_like_cloud(rng, int(count)) for count in rng.integers(4, 900, 300)]
    reports = []
    fits = fit_shapes(
        clouds, "BOX", progress=lambda done, total: reports.append((done, total, get_ident()))
    )
    assert reports[0][:2] == (0, 300) and reports[-1][:2] == (300, 300)
    assert len(reports) > 3
    assert all(later[0] > earlier[0] for earlier, later in pairwise(reports))
    assert {thread for *_, thread in reports} == {get_ident()}
    for index in (0, 57, 148, 299):
        alone = fit_shape(clouds[index], "BOX")
        assert fits[index].volume == pytest.approx(alone.volume, rel=1e-9)
        np.testing.assert_allclose(fits[index].center, alone.center, atol=1e-7)
    assert fit_shapes([], "BOX", progress=lambda *_: pytest.fail("nothing to report")) == []


@pytest.mark.parametrize("shape", ["AUTO", "BOX", "CAPSULE"])
def test_fitting_many_small_meshes_at_once_gives_each_fit_alone(shape):
    """Small point sets are fitted hundreds to a group (a building's elements): a box
    (its own hull), a turned box and rough shapes of 4-86 points each, mixed."""
    rng = np.random.default_rng(9)
    clouds = [random_mesh_like_cloud(rng, int(rng.integers(4, 87))) for _ in range(240)]
    clouds += [CORNERS * (1.0, 2.0, 3.0), CORNERS @ random_rotation(rng).T + 5.0]
    assert_fitted_together_as_alone(clouds, shape, same_rotation=True)


def test_fit_shapes_of_nothing_and_unknown_shapes():
    assert fit_shapes([], "AUTO") == []
    with pytest.raises(ValueError, match="HULL"):
        fit_shapes([CORNERS], "HULL")


def test_translated_copies_agree_to_float32_rounding_anywhere():
    """One shape moved 1 km out and rounded to float32 is a copy; turned, mirrored, one
    vertex moved by five times the tolerance or a NaN coordinate is not; sets broadcast."""
    rng = np.random.default_rng(11)
    shape = rng.normal(size=(30, 3)) + 1000.0
    moved = (shape + np.array([250.0, -125.5, 40.0])).astype(np.float32).astype(np.float64)
    turned = shape @ random_rotation(rng)
    mirrored = shape * [-1.0, 1.0, 1.0]
    bumped = moved.copy()
    bumped[7, 1] += 5 * fit_module.COPY_TOLERANCE * np.abs(shape).max()
    broken = moved.copy()
    broken[3, 2] = np.nan
    found = fit_module.translated_copies(shape, np.stack([moved, turned, mirrored, bumped, broken]))
    assert found.tolist() == [True, False, False, False, False]
    assert fit_module.translated_copies(moved, shape)
