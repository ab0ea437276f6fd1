"""Continuous detection on meshes: a part passing through another between two poses is
found at its time of first contact, none is missed against dense sampling, and a part
sliding along another within a hair is left undecided rather than guessed."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from collide_addon.core import ShapeBatch, mesh_contacts, mesh_sweep, prepare_mesh
from collide_addon.core.continuous import pair_slack, speed_bounds, swept_motion
from collide_addon.core.fit import fit_box
from collide_addon.core.mesh_sweep import (
    mesh_first_contacts,
    moved_matrices,
)
from collide_dev.mesh_shapes import box_mesh, cylinder, uv_sphere
from tests.core.shapes_for_tests import quaternion, rotation_from_quaternion


def placed(local_vertices: np.ndarray, matrix: np.ndarray) -> ShapeBatch:
    """The box fitted to the vertices, placed by a rigid `matrix` (4, 4): one proxy."""
    box = fit_box(local_vertices)
    return ShapeBatch.boxes(
        [matrix[:3, :3] @ box.center + matrix[:3, 3]],
        [matrix[:3, :3] @ box.rotation],
        [box.half_extents],
    )


def rigid(rotation=None, translation=(0.0, 0.0, 0.0)) -> np.ndarray:
    matrix = np.eye(4)
    matrix[:3, :3] = np.eye(3) if rotation is None else rotation
    matrix[:3, 3] = translation
    return matrix


def scene(shapes, starts, ends):
    """Meshes (local vertices, triangles) moved from rigid matrices `starts` to `ends`:
    (prepared meshes, start matrices (n, 4, 4), their proxies' SweptMotion)."""
    meshes = [prepare_mesh(vertices, triangles) for vertices, triangles in shapes]
    begin = ShapeBatch.concat([placed(s[0], m) for s, m in zip(shapes, starts, strict=True)])
    end = ShapeBatch.concat([placed(s[0], m) for s, m in zip(shapes, ends, strict=True)])
    return meshes, np.stack(starts), swept_motion(begin, end)


def sampled_distances(meshes, matrices, motion, pair, times) -> np.ndarray:
    """The pair's mesh distance at each of `times` (s,), from scratch."""
    rows = np.repeat(np.asarray(pair)[None], len(times), axis=0).T.reshape(-1)
    posed = moved_matrices(motion, matrices, rows, np.concatenate([times, times]))
    local = np.arange(len(times))
    chosen = [meshes[row] for row in rows.tolist()]
    return mesh_contacts(chosen, posed, np.stack([local, local + len(times)], 1), 1e9).distance


def test_a_cube_passing_through_a_thin_wall_between_the_poses_is_found_where_it_enters():
    """A 2 m cube crossing a 10 cm wall at 6 m a frame: apart at both poses, its proxy
    sweep hands it over, and its faces meet the wall when its centre is at x = -1.05."""
    cube, wall = box_mesh([-1, -1, -1], [1, 1, 1]), box_mesh([-0.05, -3, -3], [0.05, 3, 3])
    meshes, matrices, motion = scene(
        [cube, wall],
        [rigid(translation=(-3, 0, 0)), rigid()],
        [rigid(translation=(3, 0, 0)), rigid()],
    )
    slack = pair_slack(motion, np.array([[0, 1]]))
    for threshold in (0.0, -2 * slack[0], 0.02):
        found = mesh_first_contacts(meshes, matrices, motion, [[0, 1]], threshold)
        entry = (3.0 - 1.05 - threshold) / 6.0  # a gap of the threshold (or its depth)
        assert found.toi[0] == pytest.approx(entry, abs=2 * slack[0] / 6.0)
        assert found.distance[0] <= threshold
        assert not found.undecided[0]
        # The witness points lie on the cube's face and on the wall.
        assert found.point_j[0][0] == pytest.approx(-0.05, abs=1e-5)


def test_a_cube_passing_beside_the_wall_or_turning_in_place_is_found_apart_or_touching():
    cube, wall = box_mesh([-1, -1, -1], [1, 1, 1]), box_mesh([-0.05, -3, -3], [0.05, 3, 3])
    quarter = rotation_from_quaternion(np.array([np.cos(np.pi / 8), 0, 0, np.sin(np.pi / 8)]))
    meshes, matrices, motion = scene(
        [cube, wall, cube],
        [rigid(translation=(-3, 0, 5)), rigid(), rigid(translation=(-1.5, 0, 0))],
        [rigid(translation=(3, 0, 5)), rigid(), rigid(quarter, (-1.5, 0, 0))],
    )
    # The first passes 1 m above the wall. The third turns by 45 degrees about z 1.5 m
    # from the wall: its corner comes to 1.5 - sqrt(2) - 0.05 = 0.036 m of the wall.
    found = mesh_first_contacts(meshes, matrices, motion, [[0, 1]], 0.5)
    assert np.isnan(found.toi[0]) and not found.undecided[0]
    found = mesh_first_contacts(meshes, matrices, motion, [[2, 1]], 0.0)
    assert np.isnan(found.toi[0]) and not found.undecided[0]
    found = mesh_first_contacts(meshes, matrices, motion, [[2, 1]], 0.1)
    # The corner at angle a from the start is sqrt(2) cos(pi/4 - a) from the axis.
    turned = np.pi / 4 - np.arccos((1.5 - 0.05 - 0.1) / np.sqrt(2))
    assert found.toi[0] == pytest.approx(turned / (np.pi / 4), abs=1e-4)
    assert found.distance[0] <= 0.1


def test_a_part_sliding_past_another_is_apart_and_one_sliding_in_it_is_undecided():
    """A cube sliding 6 m along a wall, 1 micrometre from its face or on it: the speed
    bound's steps cover a micrometre each, but along the wall's normal the cube comes no
    closer, so it is found apart. Sliding 0.5 mm into it, within a hard test's 1 mm
    tolerance, there is no normal to go by: the sweep gives up on it and says so."""
    cube, wall = box_mesh([-1, -1, -1], [1, 1, 1]), box_mesh([-0.05, -30, -3], [0.05, 30, 3])
    for gap, undecided in ((1e-6, False), (0.0, False), (-5e-4, True)):
        x = -(1.05 + gap)
        meshes, matrices, motion = scene(
            [cube, wall],
            [rigid(translation=(x, -3, 0)), rigid()],
            [rigid(translation=(x, 3, 0)), rigid()],
        )
        slack = pair_slack(motion, np.array([[0, 1]]))[0]
        found = mesh_first_contacts(meshes, matrices, motion, [[0, 1]], -(1e-3 + slack))
        assert found.undecided[0] == undecided and np.isnan(found.toi[0])
        assert (found.cleared[0] < 0.01) if undecided else (found.cleared[0] == 1.0)


def test_each_pair_is_measured_only_as_far_as_its_own_motion_reaches(monkeypatch):
    """A fast cube crossing a wall and, in the same sweep, a slow one creeping past
    another 1 m away: each sample of the slow pair is measured up to the distance its
    own motion could close (a few centimetres), not up to the fast pair's metres, and
    both pairs come out as swept alone."""
    cube, wall = box_mesh([-1, -1, -1], [1, 1, 1]), box_mesh([-0.05, -3, -3], [0.05, 3, 3])
    meshes, matrices, motion = scene(
        [cube, wall, cube, cube],
        [
            rigid(translation=(-3, 0, 0)),
            rigid(),
            rigid(translation=(0, 10, 0)),
            rigid(translation=(3, 10, 0)),
        ],
        [
            rigid(translation=(3, 0, 0)),
            rigid(),
            rigid(translation=(0.02, 10, 0)),
            rigid(translation=(3, 10, 0)),
        ],
    )
    pairs = np.array([[0, 1], [2, 3]])
    reached = {"slow": [], "fast": []}
    real_contacts = mesh_sweep.mesh_contacts

    def spy(chosen, posed, slots, max_distance, *rest):
        slow = np.array([chosen[first] is meshes[2] for first in slots[:, 0]])
        far = np.broadcast_to(max_distance, (len(slots),))
        reached["slow"].extend(far[slow])
        reached["fast"].extend(far[~slow])
        return real_contacts(chosen, posed, slots, max_distance, *rest)

    monkeypatch.setattr(mesh_sweep, "mesh_contacts", spy)
    together = mesh_first_contacts(meshes, matrices, motion, pairs, 0.0)
    # Threshold 0: the slow pair can close at most its speed bound and slack.
    slow_reach = speed_bounds(motion, pairs[1:])[0] + 2 * pair_slack(motion, pairs[1:])[0]
    assert slow_reach < 0.1
    assert reached["slow"] and max(reached["slow"]) <= slow_reach
    assert max(reached["fast"]) > 1.0
    monkeypatch.undo()
    for row, pair in enumerate(pairs):
        alone = mesh_first_contacts(meshes, matrices, motion, pair[None], 0.0)
        for field in ("toi", "distance", "cleared", "undecided"):
            np.testing.assert_array_equal(getattr(together, field)[row], getattr(alone, field)[0])
    assert together.toi[0] > 0 and np.isnan(together.toi[1])


@settings(max_examples=40, deadline=None)
@given(
    seed=st.integers(0, 2**31),
    threshold=st.sampled_from([0.0, 0.01, 0.2]),
    turned=st.tuples(quaternion, quaternion, quaternion, quaternion),
)
def test_no_contact_is_missed_against_dense_sampling(seed, threshold, turned):
    """Random parts (box, sphere, cylinder) moving and turning past each other: at every
    one of 400 samples before the time found (or over the whole motion, when the pair
    was found apart) the meshes are no closer than the threshold less the slack, and at
    the time found they are within it."""
    rng = np.random.default_rng(seed)
    shapes = [box_mesh([-1, -0.4, -0.3], [1, 0.4, 0.3]), uv_sphere(0.7, 8, 12)]
    shapes.append(cylinder(0.3, 2.0, 10))
    pick = rng.choice(3, 2)
    a, b = shapes[pick[0]], shapes[pick[1]]
    starts = [
        rigid(rotation_from_quaternion(turned[0]), rng.uniform(-3, 3, 3)),
        rigid(rotation_from_quaternion(turned[1]), rng.uniform(-1, 1, 3)),
    ]
    ends = [
        rigid(rotation_from_quaternion(turned[2]), rng.uniform(-3, 3, 3)),
        rigid(rotation_from_quaternion(turned[3]), rng.uniform(-1, 1, 3)),
    ]
    meshes, matrices, motion = scene([a, b], starts, ends)
    pair = np.array([[0, 1]])
    found = mesh_first_contacts(meshes, matrices, motion, pair, threshold)
    slack = pair_slack(motion, pair)[0]
    times = np.linspace(0.0, 1.0, 401)
    distances = sampled_distances(meshes, matrices, motion, pair[0], times)
    before = times < found.cleared[0]
    assert (distances[before] > threshold - slack - 1e-12).all()
    assert found.undecided[0] == (np.isnan(found.toi[0]) and found.cleared[0] < 1.0)
    if np.isfinite(found.toi[0]):
        assert found.distance[0] <= threshold and found.cleared[0] <= found.toi[0]
        at_toi = sampled_distances(meshes, matrices, motion, pair[0], found.toi[:1])
        assert at_toi[0] == pytest.approx(found.distance[0], abs=1e-12)


def test_moved_matrices_place_the_mesh_with_its_proxy():
    """At both ends of the motion the meshes sit where their proxies say: at t = 1 the
    start matrix moved is the end matrix (rigid motions, no stretch)."""
    rng = np.random.default_rng(7)
    shape = box_mesh([-1, -0.5, -0.2], [1, 0.5, 0.2])
    start = rigid(rotation_from_quaternion(rng.normal(size=4)), rng.uniform(-5, 5, 3))
    end = rigid(rotation_from_quaternion(rng.normal(size=4)), rng.uniform(-5, 5, 3))
    _, matrices, motion = scene([shape], [start], [end])
    at = moved_matrices(motion, matrices, np.array([0, 0]), np.array([0.0, 1.0]))
    assert at[0] == pytest.approx(start, abs=1e-12)
    assert at[1] == pytest.approx(end, abs=1e-9)


def test_bad_input_is_refused():
    cube = box_mesh([-1, -1, -1], [1, 1, 1])
    meshes, matrices, motion = scene([cube, cube], [rigid(), rigid()], [rigid(), rigid()])
    with pytest.raises(ValueError, match="2 meshes, 1 matrices and 2 shapes"):
        mesh_first_contacts(meshes, matrices[:1], motion, [[0, 1]], 0.0)
