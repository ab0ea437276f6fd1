"""Cost of the live check's Geometry setting in the real Blender (bpy wheel): the handler
time of one update deciding on the proxies and on the meshes, and the whole frame, in one
run.

    PYTHONPATH=$PWD .venv/bin/python benchmarks/bench_live_mesh.py [--frames-only]

The scenes of `bench_live.py` (a cube, a 16x8 UV sphere and a 16-sided cylinder shared
by every object, about one object in ten clashing): for each size, the same
UPDATES updates (every object moves by up to 0.1 and turns by up to 0.05 rad, as in an
animation; then only one object moving, as when one is dragged) are timed with
Geometry Proxy and then Mesh, from the same start, and the median handler times
printed with their ratio. The first check (reading and fitting
everything, and with Mesh preparing each distinct mesh) is printed apart.

Then the whole frame as a user feels it, as `bench_live.py` times it: `scene.frame_set()`
over the frames of 200 and 1,000 keyframed objects that move and turn every frame,
with live mode off and on (alternated, `bench_live.bench_frame`), once with Geometry Proxy
and once with Mesh: the median frame, what live mode adds to Blender's own frame, and
the handler's median. `--frames-only` runs this part alone.
"""

import statistics
import sys
import time

import bpy
import numpy as np

from benchmarks.bench_live import (
    FRAME_SAMPLES,
    UPDATES,
    HandlerTimer,
    animated_scene,
    bench_frame,
    build_scene,
    spread,
)
from collide_addon.blender import handlers, session

COUNTS = (200, 1_000)


def time_updates(scene, geometry: str, start: np.ndarray, seed: int, movers: int) -> dict:
    """Handler times of UPDATES small moves of the first `movers` objects from the
    locations `start` ((n, 3))."""
    rng = np.random.default_rng(seed)
    objects = list(scene.collection.objects)
    locations, rotations = start.copy(), np.zeros_like(start)
    for obj, location in zip(objects, locations, strict=True):
        obj.location, obj.rotation_euler = location, (0.0, 0.0, 0.0)
    bpy.context.view_layer.update()
    scene.collide.geometry = geometry
    began = time.perf_counter()
    scene.collide.live = True
    first = time.perf_counter() - began
    with HandlerTimer(
        bpy.app.handlers.depsgraph_update_post, handlers.on_depsgraph_update_post
    ) as timer:
        for _ in range(UPDATES):
            locations[:movers] += rng.uniform(-0.1, 0.1, (movers, 3)) / 3**0.5
            rotations[:movers] += rng.uniform(-0.05, 0.05, (movers, 3))
            moved = zip(objects[:movers], locations, rotations, strict=False)
            for obj, location, rotation in moved:
                obj.location = location
                obj.rotation_euler = rotation
            bpy.context.view_layer.update()
    clashes = session.session_for(scene).clashes
    result = {
        "first": first,
        "median": statistics.median(timer.times),
        "clashes": len(clashes),
        "on_mesh": int(clashes.on_mesh.sum()),
    }
    scene.collide.live = False
    return result


def print_whole_frames() -> None:
    """`frame_set` with live mode off and on, Geometry Proxy then Mesh, per scene size."""
    print(f"whole frame ({FRAME_SAMPLES} frames each, medians with 10th-90th percentiles)")
    print("objects | geometry | live off | live on | adds | handler")
    for count in COUNTS:
        scene = animated_scene(count, np.random.default_rng(count), False, FRAME_SAMPLES + 1)
        for geometry in ("PROXY", "MESH"):
            scene.collide.geometry = geometry
            result = bench_frame(scene)
            added = np.median(result["on"]) / np.median(result["off"]) - 1.0
            print(
                f"{count} | {geometry.title()} | {spread(result['off'])} | "
                f"{spread(result['on'])} | {added:.0%} | {spread(result['handler'])}"
            )


def main() -> None:
    import collide_addon

    collide_addon.register()
    print(f"bpy {bpy.app.version_string}, numpy {np.__version__}, {UPDATES} updates")
    if "--frames-only" in sys.argv:
        print_whole_frames()
        collide_addon.unregister()
        return
    print("objects | moving | geometry | first check | update | clashes (on mesh) | Mesh / Proxy")
    for count in COUNTS:
        scene, _ = build_scene(count, np.random.default_rng(count))
        start = np.array([tuple(obj.location) for obj in scene.collection.objects])
        for movers in (count, 1):
            results = {
                g: time_updates(scene, g, start, seed=count, movers=movers)
                for g in ("PROXY", "MESH")
            }
            for geometry, result in results.items():
                ratio = result["median"] / results["PROXY"]["median"]
                print(
                    f"{count} | {'all' if movers == count else movers} | {geometry.title()} | "
                    f"{result['first'] * 1e3:.0f} ms | {result['median'] * 1e3:.1f} ms | "
                    f"{result['clashes']} ({result['on_mesh']}) | {ratio:.2f}x"
                )
    print_whole_frames()
    collide_addon.unregister()


if __name__ == "__main__":
    main()
