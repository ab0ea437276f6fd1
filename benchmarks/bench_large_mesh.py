"""A large mesh among small objects, decided on meshes (core only): what keeping the
large mesh posed between live checks, and screening or walking its vertices for its
extents, save.

    PYTHONPATH=$PWD .venv-core/bin/python benchmarks/bench_large_mesh.py [--sizes 100,300]

The large mesh is a terrain: a heightfield of n x n quads (2 n^2 triangles) 100 m wide
with 2 m hills, and the small objects unit cubes.

1. A cube dragged across the terrain, half sunk into it, one live check a step (one
   `mesh_contacts` call of one pair): posed afresh each call, as before `PosedMeshes`,
   against kept posed by a `PosedMeshes` that the calls share (median of the steps after
   the first, which poses the terrain either way).
2. 240 cubes scattered on the terrain, most pushed into it, one call (a first Detect on
   meshes, or a step of dragging the terrain itself in live mode): the terrain's extents
   along each crossing pair's directions by projecting every vertex for each pair (as
   before `_screened_extents` and `_walked_extents`), by screening them in float32
   (`_screened_extents`, the default up to 131,072 vertices) and by the walk of its tree
   (`_walked_extents`, the default beyond). The default's time is starred.

The ways of each comparison run in this process and must give the same contacts bit for
bit (checked: the run stops with an error otherwise). The terrain's hills are all alike,
its peaks equally high: the walk's worst case (many nodes may hold an extreme).
"""

from __future__ import annotations

import argparse
import dataclasses
import statistics
import time

import numpy as np

from collide_addon.core import PosedMeshes, mesh_contacts, prepare_mesh
from collide_addon.core import mesh as mesh_module
from collide_dev.mesh_shapes import box_mesh, heightfield

DRAG_STEPS = 8
SUNK_CUBES = 240
# The ways to a mesh's extents along a crossing pair's directions, by the thresholds
# that choose them: every vertex projected (as before `_screened_extents` and
# `_walked_extents`), screened, walked.
NEVER = 1 << 40
EXTENTS = {
    "every vertex": {"_SCREENED_WORK": NEVER, "_WALKED_EXTENTS": NEVER},
    "screened": {"_WALKED_EXTENTS": NEVER},
    "walked": {"_WALKED_EXTENTS": 0},
}


def terrain(quads: int):
    """Vertices and triangles of a 100 m heightfield of quads x quads quads."""
    return heightfield(np.linspace(-50.0, 50.0, quads + 1), height)


def height(x, y):
    return 2.0 * np.sin(x / 7.0) * np.cos(y / 9.0)


def same(first, second) -> bool:
    return all(
        np.array_equal(getattr(first, field.name), getattr(second, field.name), equal_nan=True)
        for field in dataclasses.fields(first)
    )


def timed(call):
    started = time.perf_counter()
    result = call()
    return time.perf_counter() - started, result


def bench_drag(ground, cube) -> tuple[float, float]:
    """Median seconds of a drag step's call, posed afresh and kept posed."""
    kept = PosedMeshes()
    matrices = np.stack([np.eye(4), np.eye(4)])
    fresh_times, kept_times = [], []
    for step in range(DRAG_STEPS):
        x, y = -20.0 + 5.0 * step, 3.0 + 2.0 * step
        matrices[1, :3, 3] = (x, y, height(x, y))
        calls = [
            (fresh_times, lambda: mesh_contacts([ground, cube], matrices, [[0, 1]], 0.0)),
            (
                kept_times,
                lambda: mesh_contacts([ground, cube], matrices, [[0, 1]], 0.0, None, kept),
            ),
        ]
        results = []
        for times, call in calls if step % 2 else calls[::-1]:
            seconds, result = timed(call)
            times.append(seconds)
            results.append(result)
        kept.forget_unused()
        if not same(*results):
            raise SystemExit("kept posed: contacts differ from posed afresh")
    return statistics.median(fresh_times[1:]), statistics.median(kept_times[1:])


def bench_sunk(ground, cube) -> tuple[dict[str, float], int]:
    """Seconds of one call on 240 cubes, the terrain's extents found each way of
    `EXTENTS`; and how many pairs cross."""
    rng = np.random.default_rng(7)
    matrices = np.tile(np.eye(4), (SUNK_CUBES + 1, 1, 1))
    xy = rng.uniform(-45.0, 45.0, (SUNK_CUBES, 2))
    matrices[1:, 0, 3], matrices[1:, 1, 3] = xy[:, 0], xy[:, 1]
    matrices[1:, 2, 3] = height(xy[:, 0], xy[:, 1]) + rng.uniform(-0.3, 0.6, SUNK_CUBES)
    for row in range(1, SUNK_CUBES + 1, 2):  # every other cube turned
        matrices[row, :3, :3] = np.linalg.qr(rng.normal(size=(3, 3)))[0]
    pairs = np.column_stack([np.zeros(SUNK_CUBES, dtype=np.int64), np.arange(1, SUNK_CUBES + 1)])
    meshes = [ground] + [cube] * SUNK_CUBES
    seconds, results = {}, {}
    for way, thresholds in EXTENTS.items():
        saved = {name: getattr(mesh_module, name) for name in thresholds}
        for name, value in thresholds.items():
            setattr(mesh_module, name, value)
        try:
            seconds[way], results[way] = timed(lambda: mesh_contacts(meshes, matrices, pairs, 0.1))
        finally:
            for name, value in saved.items():
                setattr(mesh_module, name, value)
    first, *others = results.values()
    if not all(same(first, other) for other in others):
        raise SystemExit("the terrain's extents: contacts differ between the ways")
    return seconds, int((first.distance < 0).sum())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="100,200,300", help="quads along the terrain's side")
    sizes = [int(size) for size in parser.parse_args().sizes.split(",")]
    cube = prepare_mesh(*box_mesh([-0.5] * 3, [0.5] * 3))
    print(
        "terrain triangles | drag step: afresh, kept, ratio"
        " | 240 cubes: every vertex, screened, walked (the default's in *)"
    )
    for quads in sizes:
        vertices, triangles = terrain(quads)
        ground = prepare_mesh(vertices, triangles)
        afresh, kept = bench_drag(ground, cube)
        seconds, crossing = bench_sunk(ground, cube)
        default = (
            "walked"
            if len(vertices) > mesh_module._WALKED_EXTENTS
            else "screened"
            if len(vertices) * SUNK_CUBES > mesh_module._SCREENED_WORK
            else "every vertex"
        )
        sunk = " ".join(
            f"{value:6.2f} s{'*' if way == default else ' '}" for way, value in seconds.items()
        )
        print(
            f"{len(triangles):>17,} | {afresh * 1e3:7.1f} ms {kept * 1e3:7.1f} ms"
            f" {afresh / kept:5.1f}x | {sunk} ({crossing} crossing)"
        )


if __name__ == "__main__":
    main()
