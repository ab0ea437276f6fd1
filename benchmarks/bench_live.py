"""Cost of live mode in the real Blender (bpy wheel): the whole frame, and the handler.

    .venv/bin/python benchmarks/bench_live.py [--quick] [--only frame,handler,playback]
        [--blend FILE]

--only runs the named groups alone (0: frame, 1: handler, 2 and 3: playback), e.g. to
bisect one of them quickly. --blend FILE adds group 4 (`--only drag` runs it alone).

0. The whole frame as a user feels it: `scene.frame_set()` timed with live mode off and
   then on, in one run, over the same frames, alternating FRAME_ROUNDS times (medians
   over FRAME_SAMPLES frames, with the spread; also the process's CPU time), for 1,000
   and 10,000 keyframed objects that move and turn every frame with about 8% of them
   clashing, the same with every object jumping to a random place every
   frame, and one object deforming among 10,000 still ones. Blender's own evaluation and
   its reaction to what the handler writes (depsgraph tags, copy-on-write) are counted.
   While frames change live mode writes no colours (the overlay tints); writing them
   once the frames stop is timed apart.
   Targets: live adds <= 15% at 10,000 and <= 50% at 1,000 objects; no all-jump frame
   costs more than Blender's own (live adds <= 100% on every frame).
1. One live update (depsgraph_update_post after every object moved and turned: read
   transforms, refit nothing, broad + narrow phase, records, tint) for 1,000 and 10,000
   objects of mixed shapes (boxes, spheres, capsules): moving a little, as animated
   objects do, all jumping to random places (every clash and tint changes), and one
   object dragged among still ones.
2. Playback of 250 frames with 1,000 keyframed objects (frame_change_post per frame).
3. (Not --quick) playback of 60 frames of 10,000 keyframed objects, and of one object
   deforming by a shape key among 10,000 still ones.
4. With --blend FILE (a real scene, e.g. the 20,271-element campus `bench_fit.py --blend
   ... --tiles 29` makes): one mesh object after another, picked at random, dragged by
   about 5 cm, DRAG_UPDATES times, with live mode off, then on with Geometry Proxy and
   then Mesh, each with the edit's tint written at once (as background Blender does)
   and as in a window (in the next update's `depsgraph_update_pre`): the whole update
   (`view_layer.update()`, Blender's own evaluation included) and what live mode adds
   to it, and the handler's median, each with its 10th-90th percentiles.

Handler targets (1-3): <= 5 ms at 1,000 and <= 16.7 ms (one 60 fps frame) at 10,000
objects per update, and a playback whose handler time allows >= 60 fps. Blender's own
evaluation is not counted there.
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
# Objects dragged one after another in the --blend scene.
DRAG_UPDATES = 24
FRAMES = 250
FRAME_SAMPLES = 40
# Live off and on alternate this many times over the FRAME_SAMPLES frames.
FRAME_ROUNDS = 4
# Cube of side (count * SPACING) ** (1/3): about 8% of the objects clash.
SPACING = 75.0
HANDLER_TARGETS = {1_000: 0.005, 10_000: 0.0167}


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


def build_scene(count: int, rng: np.random.Generator, spacing: float = 40.0):
    """`count` objects with shared meshes, spread so that about one in ten clashes
    (spacing: room per object)."""
    meshes = make_meshes()
    scene = bpy.context.scene
    for index in range(count):
        obj = bpy.data.objects.new(f"Object{index:05d}", meshes[index % 3])
        obj.collide.shape = SHAPES[index % 3]
        scene.collection.objects.link(obj)
    side = (count * spacing) ** (1.0 / 3.0)
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


def bench_update(count: int, rng, motion: str) -> dict:
    """Median handler time of one update after objects moved and turned.

    motion "smooth": each object moves by up to 0.1 (objects are about 1 across) and
    turns by up to 0.05 rad, as in an animation; "jump": every object jumps to a random
    place, so the clash list and the tint change completely (the worst case); "drag":
    only the first object moves and turns as in "smooth", as when one is dragged.
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
        movers = 1 if motion == "drag" else count
        for _ in range(UPDATES):
            if motion == "jump":
                locations = rng.uniform(0, side, (count, 3))
                rotations = rng.uniform(0, 6.3, (count, 3))
            else:
                locations[:movers] += rng.uniform(-0.1, 0.1, (movers, 3)) / 3**0.5
                rotations[:movers] += rng.uniform(-0.05, 0.05, (movers, 3))
            # One by one, as a transform edit does: `foreach_set` on locations does not
            # tag the objects' transforms for re-evaluation.
            moved = zip(objects[:movers], locations, rotations, strict=False)
            for obj, location, rotation in moved:
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


def deforming_scene(count: int, rng, frames: int):
    """One object deforming by an animated shape key over frames 1..`frames` among
    `count` still ones."""
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
    return scene


def bench_deforming(count: int, rng, frames: int = 60) -> dict:
    """Handler time per frame when one object deforms (an animated shape key) among
    `count` still ones: only its proxy is read and fitted again."""
    scene = deforming_scene(count, rng, frames)
    scene.frame_set(1)
    scene.collide.live = True
    with HandlerTimer(bpy.app.handlers.frame_change_post, handlers.on_frame_change_post) as timer:
        for frame in range(1, frames + 1):
            scene.frame_set(frame)
    scene.collide.live = False
    return {"median": statistics.median(timer.times), "max": max(timer.times)}


def keyframe(obj, frames: np.ndarray, locations: np.ndarray, rotations: np.ndarray, jump: bool):
    """Give `obj` an action of its own through `frames` (f,): locations and rotations
    (f, 3) each; linear in between, or constant when `jump` (a new place every frame)."""
    action = bpy.data.actions.new(obj.name)
    obj.animation_data_create().action = action
    for path, values in (("location", locations), ("rotation_euler", rotations)):
        for axis in range(3):
            curve = action.fcurve_ensure_for_datablock(obj, path, index=axis)
            points = curve.keyframe_points
            points.add(len(frames))
            points.foreach_set("co", np.column_stack([frames, values[:, axis]]).ravel())
            interpolation = np.full(len(frames), 0 if jump else 1, np.int32)  # CONSTANT, LINEAR
            points.foreach_set("interpolation", interpolation)
            curve.update()


def animated_scene(count: int, rng, jump: bool, frames: int):
    """`count` keyframed objects moving and turning every frame over frames 1..`frames`,
    about 8% of them clashing at any frame. Moving: linear keys at both ends, up to 0.1
    per axis and 0.05 rad per frame (the motion of the smooth updates below); jumping: a
    random place and turn at every frame (constant keys)."""
    scene, side = build_scene(count, rng, SPACING)
    starts = np.array([obj.location for obj in scene.collection.objects])
    for obj, start in zip(scene.collection.objects, starts, strict=True):
        if jump:
            keys = np.arange(1, frames + 1, dtype=np.float64)
            locations = rng.uniform(0, side, (frames, 3))
            rotations = rng.uniform(0, 6.3, (frames, 3))
        else:
            keys = np.array([1.0, frames])
            span = frames - 1
            locations = np.stack([start, start + rng.uniform(-0.1, 0.1, 3) * span])
            turns = rng.uniform(0, 6.3, 3)
            rotations = np.stack([turns, turns + rng.uniform(-0.05, 0.05, 3) * span])
        keyframe(obj, keys, locations, rotations, jump)
    scene.frame_start, scene.frame_end = 1, frames
    return scene


def time_frames(scene, first: int, count: int) -> tuple[np.ndarray, np.ndarray]:
    """Seconds of each `scene.frame_set()` over frames first..first + count - 1, after
    one frame set before the clock: wall-clock (count,) and the process's CPU time, all
    of Blender's threads (count,), which a loaded machine disturbs less."""
    scene.frame_set(first - 1)
    wall, cpu = [], []
    for frame in range(first, first + count):
        start, start_cpu = time.perf_counter(), time.process_time()
        scene.frame_set(frame)
        wall.append(time.perf_counter() - start)
        cpu.append(time.process_time() - start_cpu)
    return np.array(wall), np.array(cpu)


def clashing_share(scene) -> float:
    """Share of the scene's objects owning a clashing proxy in the last live check."""
    live_session = session.session_for(scene)
    owners = live_session.proxies.owner_rows
    clashing = owners[live_session.clashes.pairs.ravel()]
    return len(np.unique(clashing)) / len(np.unique(owners))


def bench_frame(scene, frames: int = FRAME_SAMPLES) -> dict:
    """`frame_set` times with live off, then on, over the same frames, in FRAME_ROUNDS
    alternations (the machine's load drifts); handler times when on; and the seconds of
    writing the waiting tint once the frames stop (`session.settle_all`, what the end of
    a playback runs) with the evaluation those writes cause."""
    times = {"off": [], "on": [], "off_cpu": [], "on_cpu": [], "handler": []}
    count = frames // FRAME_ROUNDS
    for first in range(2, 2 + FRAME_ROUNDS * count, count):
        wall, cpu = time_frames(scene, first, count)
        times["off"].append(wall)
        times["off_cpu"].append(cpu)
        scene.collide.live = True
        frame_handlers = bpy.app.handlers.frame_change_post
        with HandlerTimer(frame_handlers, handlers.on_frame_change_post) as timer:
            wall, cpu = time_frames(scene, first, count)
        times["on"].append(wall)
        times["on_cpu"].append(cpu)
        times["handler"].append(np.array(timer.times))
        share = clashing_share(scene)
        start = time.perf_counter()
        session.settle_all()
        bpy.context.view_layer.update()
        settle = time.perf_counter() - start
        scene.collide.live = False
    result = {name: np.concatenate(values) for name, values in times.items()}
    result["cpu_added"] = np.median(result["on_cpu"]) / np.median(result["off_cpu"]) - 1.0
    return {**result, "share": share, "settle": settle}


def spread(times: np.ndarray) -> str:
    """Median with the 10th-90th percentile spread, in ms."""
    low, median, high = np.percentile(times, [10, 50, 90]) * 1e3
    return f"{median:.1f} ms ({low:.1f}-{high:.1f})"


def frame_rows(label: str, result: dict, target, handler_target) -> list[tuple]:
    """Table rows of one whole-frame case: what live adds to the median frame (target:
    the largest share added; None: every frame against Blender's own median frame,
    at most doubled), then the handler's time (handler_target: seconds, or None)."""
    off, on = np.median(result["off"]), np.median(result["on"])
    added = on / off - 1.0
    measured = (
        f"off {spread(result['off'])}, on {spread(result['on'])}: adds {added:.0%} "
        f"(CPU time: {result['cpu_added']:.0%}; {len(result['on'])} frames, "
        f"{result['share']:.0%} of objects clashing)"
    )
    if target is None:
        worst = result["on"].max() / off - 1.0
        measured += f"; worst frame adds {worst:.0%}"
        rows = [(label, measured, "<= 100% every frame", "yes" if worst <= 1.0 else "NO")]
    else:
        rows = [(label, measured, f"<= {target:.0%}", "yes" if added <= target else "NO")]
    handler = np.median(result["handler"])
    met = "-" if handler_target is None else ("yes" if handler <= handler_target else "NO")
    limit = "-" if handler_target is None else f"<= {handler_target * 1e3:.1f} ms"
    rows.append(("  its frame_change_post handler", spread(result["handler"]), limit, met))
    rows.append(
        ("  writing the tint when frames stop", f"{result['settle'] * 1e3:.1f} ms once", "-", "-")
    )
    return rows


def whole_frame_rows(quick: bool, rng) -> list[tuple]:
    rows = []
    for count in (1_000,) if quick else (1_000, 10_000):
        for jump in (False, True):
            scene = animated_scene(count, rng, jump, FRAME_SAMPLES + 1)
            result = bench_frame(scene)
            target = None if jump else (0.5 if count == 1_000 else 0.15)
            motion = "all jump" if jump else "move and turn"
            label = f"whole frame, {count:,} animated, {motion}"
            rows += frame_rows(label, result, target, HANDLER_TARGETS[count])
    if not quick:
        scene = deforming_scene(10_000, rng, FRAME_SAMPLES + 1)
        result = bench_frame(scene)
        rows += frame_rows("whole frame, 1 deforming among 10,000 still", result, None, None)
    return rows


def selected_groups(argv: list[str]) -> set[str]:
    """The case groups named by `--only a,b` (all without it; "drag" with --blend)."""
    groups = {"frame", "handler", "playback"} | ({"drag"} if "--blend" in argv else set())
    if "--only" not in argv:
        return groups
    chosen = set(argv[argv.index("--only") + 1].split(","))
    if not chosen <= groups:
        raise SystemExit(f"--only takes some of {sorted(groups)}, not {sorted(chosen - groups)}")
    return chosen


def handler_rows(quick: bool, rng) -> list[tuple]:
    rows = []
    for count in (1_000,) if quick else (1_000, 10_000):
        for motion in ("smooth", "jump", "drag"):
            result = bench_update(count, rng, motion)
            target = HANDLER_TARGETS[count]
            label = {"smooth": "smooth", "jump": "all jump", "drag": "one dragged"}[motion]
            rows.append(
                (
                    f"one live update, {count:,} objects, {label}",
                    f"{result['median'] * 1e3:.2f} ms median, {result['max'] * 1e3:.2f} ms max "
                    f"({result['calls']} updates, {result['clashes']} clashes; first check "
                    f"{result['first'] * 1e3:.0f} ms)",
                    f"<= {target * 1e3:.1f} ms",
                    "yes" if result["median"] <= target else "NO",
                )
            )
    return rows


def playback_rows(quick: bool, rng) -> list[tuple]:
    rows = []
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
                "<= 16.7 ms",
                "yes" if statistics.median(playback["times"]) <= HANDLER_TARGETS[10_000] else "NO",
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
    return rows


def drag_rows(quick: bool, rng) -> list[tuple]:
    """Group 4: objects of the --blend file dragged one at a time (see the module)."""
    path = sys.argv[sys.argv.index("--blend") + 1]
    bpy.ops.wm.open_mainfile(filepath=path)
    scene = bpy.context.scene
    objects = [obj for obj in scene.objects if obj.type == "MESH"]

    def drags() -> np.ndarray:
        """Whole update times (DRAG_UPDATES,) of random objects dragged one at a time."""
        updates = []
        for _ in range(DRAG_UPDATES):
            obj = objects[int(rng.integers(len(objects)))]
            obj.location = np.array(obj.location) + rng.normal(0.0, 0.05, 3)
            start = time.perf_counter()
            bpy.context.view_layer.update()
            updates.append(time.perf_counter() - start)
        return np.array(updates)

    alone = drags()
    rows = [(f"one of {len(objects):,} objects dragged, live off", spread(alone), "-", "-")]
    # This background Blender writes an edit's tint at once, in the handler (a second
    # evaluation pass when it changes); a window writes it in the next update.
    at_once = handlers._edit_tint_waits
    for geometry in ("PROXY", "MESH"):
        for window in (False, True):
            handlers._edit_tint_waits = (lambda: True) if window else at_once
            scene.collide.geometry = geometry
            scene.collide.live = True
            depsgraph_handlers = bpy.app.handlers.depsgraph_update_post
            with HandlerTimer(depsgraph_handlers, handlers.on_depsgraph_update_post) as timer:
                updates = drags()
            scene.collide.live = False
            added = np.median(updates) / np.median(alone) - 1.0
            where = "in a window" if window else "tint at once"
            rows.append(
                (
                    f"one of {len(objects):,} dragged, {geometry.title()}, {where}",
                    f"whole update {spread(updates)}, adds {added:.0%}; handler "
                    f"{spread(np.array(timer.times))} ({len(scene.collide.clashes)} clashes)",
                    "-",
                    "-",
                )
            )
    handlers._edit_tint_waits = at_once
    return rows


def main() -> None:
    quick = "--quick" in sys.argv
    groups = selected_groups(sys.argv)
    collide_addon.register()
    rng = np.random.default_rng(7)
    rows = []
    for group, make_rows in (
        ("frame", whole_frame_rows),
        ("handler", handler_rows),
        ("playback", playback_rows),
        ("drag", drag_rows),
    ):
        if group in groups:
            rows += make_rows(quick, rng)
    collide_addon.unregister()
    print(f"bpy {bpy.app.version_string}, numpy {np.__version__}")
    widths = [max(len(row[k]) for row in rows) for k in range(4)]
    header = ("case", "measured", "target", "met")
    widths = [max(width, len(title)) for width, title in zip(widths, header, strict=True)]
    for row in (header, tuple("-" * width for width in widths), *rows):
        print(" | ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)))


if __name__ == "__main__":
    main()
