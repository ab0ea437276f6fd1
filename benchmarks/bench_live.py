"""Cost of live mode in the real Blender (bpy wheel), handler time only.

    .venv/bin/python benchmarks/bench_live.py [--quick]

1. One live update (depsgraph_update_post after every object moved and turned: read
   transforms, refit nothing, broad + narrow phase, records, tint) for 1,000 and 10,000
   objects of mixed shapes (boxes, spheres, capsules): moving a little, as animated
   objects do, and all jumping to random places (every clash and tint changes).
2. Playback of 250 frames with 1,000 keyframed objects (frame_change_post per frame).
3. (Not --quick) playback of 60 frames of 10,000 keyframed objects, and of one object
   deforming by a shape key among 10,000 still ones.

Targets: <= 5 ms at 1,000 and <= 25 ms at 10,000 objects per update, and a
playback whose handler time allows >= 60 fps. Blender's own evaluation is not counted.
"""

import statistics
import sys
import time

import bpy
import numpy as np

import collide_addon
from collide_addon.blender import handlers, session

SHAPES = ("BOX", "SPHERE", "CAPSULE")
UPDATES = 20
FRAMES = 250


def make_meshes():
    """A cube, a UV sphere and a cylinder, shared by all objects."""
    bpy.ops.wm.read_homefile(use_empty=True)
    meshes = []
    for kind in ("cube", "sphere", "cylinder"):
        if kind == "cube":
            bpy.ops.mesh.primitive_cube_add(size=1.0)
        elif kind == "sphere":
            bpy.ops.mesh.primitive_uv_sphere_add(radius=0.5, segments=16, ring_count=8)
        else:
            bpy.ops.mesh.primitive_cylinder_add(radius=0.25, depth=1.5, vertices=16)
        obj = bpy.context.active_object
        meshes.append(obj.data)
        bpy.data.objects.remove(obj)
    return meshes


def build_scene(count: int, rng: np.random.Generator):
    """`count` objects with shared meshes, spread so that about one in ten clashes."""
    meshes = make_meshes()
    scene = bpy.context.scene
    for index in range(count):
        obj = bpy.data.objects.new(f"Object{index:05d}", meshes[index % 3])
        obj.collide.shape = SHAPES[index % 3]
        scene.collection.objects.link(obj)
    side = (count * 40.0) ** (1.0 / 3.0)
    scene.collection.objects.foreach_set("location", rng.uniform(0, side, count * 3))
    bpy.context.view_layer.update()
    return scene, side


class HandlerTimer:
    """Replaces one of the add-on's handlers by a wrapper that times each call."""

    def __init__(self, handler_list, function):
        self.handler_list, self.function, self.times = handler_list, function, []

        def timed(*args):
            start = time.perf_counter()
            function(*args)
            self.times.append(time.perf_counter() - start)

        self.timed = timed

    def __enter__(self):
        self.handler_list[self.handler_list.index(self.function)] = self.timed
        return self

    def __exit__(self, *exc):
        self.handler_list[self.handler_list.index(self.timed)] = self.function


def bench_update(count: int, rng, jump: bool) -> dict:
    """Median handler time of one update after every object moved and turned.

    jump False: each object moves by up to 0.1 (objects are about 1 across) and turns
    by up to 0.05 rad, as in an animation; jump True: every object jumps to a random
    place, so the clash list and the tint change completely (the worst case).
    """
    scene, side = build_scene(count, rng)
    objects = list(scene.collection.objects)
    locations = np.array([obj.location for obj in objects])
    rotations = np.zeros((count, 3))
    start = time.perf_counter()
    scene.collide.live = True  # the first check: reads and fits everything
    first = time.perf_counter() - start
    live_session = session.session_for(scene)
    generation = live_session.generation
    depsgraph_handlers = bpy.app.handlers.depsgraph_update_post
    with HandlerTimer(depsgraph_handlers, handlers.on_depsgraph_update_post) as timer:
        for _ in range(UPDATES):
            if jump:
                locations = rng.uniform(0, side, (count, 3))
                rotations = rng.uniform(0, 6.3, (count, 3))
            else:
                locations = locations + rng.uniform(-0.1, 0.1, (count, 3)) / 3**0.5
                rotations = rotations + rng.uniform(-0.05, 0.05, (count, 3))
            # One by one, as a transform edit does: `foreach_set` on locations does not
            # tag the objects' transforms for re-evaluation.
            for obj, location, rotation in zip(objects, locations, rotations, strict=True):
                obj.location = location
                obj.rotation_euler = rotation
            bpy.context.view_layer.update()
    assert live_session.generation - generation == UPDATES, "every update must run a check"
    clashes = len(live_session.clashes)
    scene.collide.live = False
    return {
        "first": first,
        "median": statistics.median(timer.times),
        "max": max(timer.times),
        "calls": len(timer.times),
        "clashes": clashes,
    }


def bench_playback(count: int, rng, frames: int = FRAMES) -> dict:
    """Handler time per frame of a keyframed playback (frame_change_post)."""
    scene, side = build_scene(count, rng)
    starts = rng.uniform(0, side, (count, 3))
    ends = rng.uniform(0, side, (count, 3))
    for obj, start, end in zip(scene.collection.objects, starts, ends, strict=True):
        obj.location = start
        obj.keyframe_insert("location", frame=1)
        obj.location = end
        obj.keyframe_insert("location", frame=frames)
    scene.frame_set(1)
    scene.collide.live = True
    clash_counts = []
    with HandlerTimer(bpy.app.handlers.frame_change_post, handlers.on_frame_change_post) as timer:
        start = time.perf_counter()
        for frame in range(1, frames + 1):
            scene.frame_set(frame)
            clash_counts.append(len(scene.collide.clashes))
        wall = time.perf_counter() - start
    scene.collide.live = False
    return {
        "times": timer.times,
        "mean": statistics.mean(timer.times),
        "max": max(timer.times),
        "calls": len(timer.times),
        "wall": wall,
        "clashes": statistics.mean(clash_counts),
    }


def bench_deforming(count: int, rng, frames: int = 60) -> dict:
    """Handler time per frame when one object deforms (an animated shape key) among
    `count` still ones: only its proxy is read and fitted again."""
    scene, side = build_scene(count, rng)
    mesh = scene.collection.objects[0].data.copy()  # the cube, for this object alone
    blob = bpy.data.objects.new("Deforming", mesh)
    scene.collection.objects.link(blob)
    blob.location = (side / 2, side / 2, side / 2)
    blob.shape_key_add(name="Basis")
    grow = blob.shape_key_add(name="Grow")
    for point in grow.data:
        point.co = point.co * 3.0
    for frame, value in ((1, 0.0), (frames, 1.0)):
        grow.value = value
        grow.keyframe_insert("value", frame=frame)
    scene.frame_set(1)
    scene.collide.live = True
    with HandlerTimer(bpy.app.handlers.frame_change_post, handlers.on_frame_change_post) as timer:
        for frame in range(1, frames + 1):
            scene.frame_set(frame)
    scene.collide.live = False
    return {"median": statistics.median(timer.times), "max": max(timer.times)}


def main() -> None:
    quick = "--quick" in sys.argv
    collide_addon.register()
    rng = np.random.default_rng(7)
    rows = []
    for count in (1_000,) if quick else (1_000, 10_000):
        for jump in (False, True):
            result = bench_update(count, rng, jump)
            target = 0.005 if count == 1_000 else 0.025
            motion = "all jump" if jump else "smooth"
            rows.append(
                (
                    f"one live update, {count:,} objects, {motion}",
                    f"{result['median'] * 1e3:.2f} ms median, {result['max'] * 1e3:.2f} ms max "
                    f"({result['calls']} updates, {result['clashes']} clashes; first check "
                    f"{result['first'] * 1e3:.0f} ms)",
                    f"<= {target * 1e3:.0f} ms",
                    "yes" if result["median"] <= target else "NO",
                )
            )
    playback = bench_playback(1_000, rng)
    fps = 1.0 / playback["mean"]
    rows.append(
        (
            f"playback {FRAMES} frames, 1,000 objects",
            f"{playback['mean'] * 1e3:.2f} ms mean handler, {playback['max'] * 1e3:.2f} ms max "
            f"= {fps:.0f} fps of handler time ({playback['calls']} calls, "
            f"{playback['clashes']:.0f} clashes/frame; frame_set loop {playback['wall']:.1f} s)",
            ">= 60 fps",
            "yes" if fps >= 60 else "NO",
        )
    )
    if not quick:
        # Frame changes of animated objects, the other kind of live update: no edit flags
        # to read, so cheaper than the transform edits above.
        playback = bench_playback(10_000, rng, frames=60)
        rows.append(
            (
                "playback 60 frames, 10,000 objects (per frame)",
                f"{statistics.median(playback['times']) * 1e3:.2f} ms median handler, "
                f"{playback['max'] * 1e3:.2f} ms max ({playback['calls']} calls, "
                f"{playback['clashes']:.0f} clashes/frame)",
                "<= 25 ms",
                "yes" if statistics.median(playback["times"]) <= 0.025 else "NO",
            )
        )
        deforming = bench_deforming(10_000, rng)
        rows.append(
            (
                "playback 60 frames, 1 deforming among 10,000",
                f"{deforming['median'] * 1e3:.2f} ms median handler, "
                f"{deforming['max'] * 1e3:.2f} ms max (the deforming proxy refitted per frame)",
                "-",
                "-",
            )
        )
    collide_addon.unregister()
    print(f"bpy {bpy.app.version_string}, numpy {np.__version__}")
    widths = [max(len(row[k]) for row in rows) for k in range(4)]
    header = ("case", "measured", "target", "met")
    widths = [max(width, len(title)) for width, title in zip(widths, header, strict=True)]
    for row in (header, tuple("-" * width for width in widths), *rows):
        print(" | ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)))


if __name__ == "__main__":
    main()
