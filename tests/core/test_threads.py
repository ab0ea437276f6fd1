"""Independent parts of numpy work on several threads: results in order, the same as on
one thread, and no thread pool inside a worker."""

import os
import sys
import threading

import numpy as np
import pytest

from collide_addon.core import mesh as mesh_module
from collide_addon.core import threads
from collide_addon.core.mesh import (
    APART,
    CROSSING,
    J_INSIDE_I,
    TOUCHING,
    mesh_contacts,
    prepare_mesh,
)
from collide_addon.core.threads import map_in_threads, worker_count
from collide_dev.mesh_shapes import box_mesh, uv_sphere
from tests.core.shapes_for_tests import random_rotation


def test_worker_count_is_at_least_one_and_at_most_the_parts_and_the_cap():
    assert worker_count(0) == 1
    assert worker_count(1) == 1
    assert 1 <= worker_count(1_000) <= threads.MAX_WORKERS
    assert worker_count(2) <= 2


def test_collide_threads_lowers_the_count_and_a_bad_value_is_refused(monkeypatch):
    monkeypatch.setenv("COLLIDE_THREADS", "1")
    assert worker_count(1_000) == 1
    # Above the cores and the cap, they still bound it.
    monkeypatch.setenv("COLLIDE_THREADS", " 100 ")
    assert worker_count(1_000) == min(threads.MAX_WORKERS, len(os.sched_getaffinity(0)))
    monkeypatch.setenv("COLLIDE_THREADS", "")
    assert worker_count(1_000) == min(threads.MAX_WORKERS, len(os.sched_getaffinity(0)))
    for bad in ("0", "-2", "two", "1.5"):
        monkeypatch.setenv("COLLIDE_THREADS", bad)
        with pytest.raises(ValueError, match="COLLIDE_THREADS must be a whole number >= 1"):
            worker_count(1_000)


def test_results_come_in_order_from_worker_threads():
    caller = threading.get_ident()
    seen = []

    def square(value: int) -> int:
        seen.append(threading.get_ident())
        return value * value

    assert list(map_in_threads(square, range(50), 2)) == [value * value for value in range(50)]
    assert caller not in seen
    assert list(map_in_threads(square, [3, 4], 1)) == [9, 16]
    assert seen[-2:] == [caller, caller]


def test_a_part_that_splits_its_work_again_runs_it_in_its_own_thread():
    def inner_workers(_) -> int:
        return worker_count(100)

    assert list(map_in_threads(inner_workers, range(4), 2)) == [1, 1, 1, 1]


def test_an_error_in_a_part_reaches_the_caller():
    def fails_on_three(value: int) -> int:
        if value == 3:
            raise ValueError("three")
        return value

    with pytest.raises(ValueError, match="three"):
        list(map_in_threads(fails_on_three, range(20), 2))


def test_mesh_contacts_on_threads_equal_those_on_one(monkeypatch):
    # Enough pairs for several shares: boxes and spheres crossing and apart, turned and
    # placed far from the origin, then a sphere inside a large box and two boxes resting
    # on each other. Every field must be equal bit for bit.
    rng = np.random.default_rng(5)
    box = prepare_mesh(*box_mesh((-0.5, -0.3, -0.15), (0.5, 0.3, 0.15)))
    sphere = prepare_mesh(*uv_sphere(0.5, 8, 12))
    count = 200
    meshes = [(box, sphere)[k] for k in rng.integers(0, 2, count)]
    meshes += [prepare_mesh(*box_mesh((-2.0, -2.0, -2.0), (2.0, 2.0, 2.0))), sphere, box, box]
    matrices = np.tile(np.eye(4), (count + 4, 1, 1))
    for matrix in matrices[:count]:
        matrix[:3, :3] = random_rotation(rng)
    matrices[:count, :3, 3] = rng.uniform(-3.0, 3.0, (count, 3))
    matrices[count + 3, 2, 3] = 0.3  # resting on the box before it
    matrices[:, :3, 3] += 1e3
    first, second = np.triu_indices(count, 1)
    near = np.linalg.norm(matrices[first, :3, 3] - matrices[second, :3, 3], axis=1) < 1.5
    pairs = np.concatenate(
        [
            np.stack([first[near], second[near]], axis=1),
            [[count, count + 1], [count + 2, count + 3]],
        ]
    )
    monkeypatch.setattr(mesh_module, "worker_count", lambda parts: 3)
    shared = mesh_contacts(meshes, matrices, pairs, 0.05)
    monkeypatch.setattr(mesh_module, "worker_count", lambda parts: 1)
    alone = mesh_contacts(meshes, matrices, pairs, 0.05)
    assert {APART, CROSSING} <= set(alone.relation.tolist())
    assert alone.relation[-2:].tolist() == [J_INSIDE_I, TOUCHING]
    for name in ("distance", "point_i", "point_j", "relation", "open_pair"):
        np.testing.assert_array_equal(getattr(shared, name), getattr(alone, name))


def test_openblas_runs_on_one_thread_while_parts_run_on_threads():
    """numpy's matrix products inside parts run on threads would each start OpenBLAS's own
    threads, which contend: while parts run on threads every OpenBLAS loaded runs on one,
    and gets its own count back after, also when a part fails."""
    controls = threads._openblas_thread_controls()
    if sys.platform.startswith("linux") and "openblas" in str(np.show_config(mode="dicts")):
        assert controls  # numpy's wheels on Linux ship OpenBLAS: it must be found
    before = [get() for get, _ in controls]
    seen = list(map_in_threads(lambda _: [get() for get, _ in controls], range(4), 2))
    assert seen == [[1] * len(controls)] * 4
    assert [get() for get, _ in controls] == before

    def fail(_):
        raise RuntimeError("part failed")

    with pytest.raises(RuntimeError):
        list(map_in_threads(fail, range(4), 2))
    assert [get() for get, _ in controls] == before
