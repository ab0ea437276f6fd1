"""Live mode's tint while frames change: drawn by the overlay, written once they stop.

A write that tags an ID inside `frame_change_post` makes `frame_set` evaluate the scene a
second time; these tests count evaluations with a driver rather than timing them.
"""

import sys
import threading

import addon_utils
import bpy
import numpy as np
import pytest

from . import scenes

ORIGINAL_COLOR = (0.25, 0.5, 0.75, 0.625)  # exactly representable in float32


def blender_module(addon, name):
    return sys.modules[f"{addon.__name__}.blender.{name}"]


class EvaluationCounter:
    """A driver on an empty reading the scene and each object's colour (and the location
    of each of `moved`): Blender evaluates it once per `frame_set` (or per update that
    moves one of `moved`), and once more in the second pass a tag of the scene or of
    one of the objects makes."""

    def __init__(self, objects, moved=()) -> None:
        self.count = 0
        bpy.app.driver_namespace["collide_test_count"] = self._count
        probe = bpy.data.objects.new("Probe", None)
        bpy.context.scene.collection.objects.link(probe)
        curve = probe.driver_add("location", 0)
        driver = curve.driver
        driver.type = "SCRIPTED"
        variables = []
        for index, (id_type, datablock, path) in enumerate(
            [("SCENE", bpy.context.scene, "use_gravity")]
            + [("OBJECT", obj, "color[0]") for obj in objects]
            + [("OBJECT", obj, "location[0]") for obj in moved]
        ):
            variable = driver.variables.new()
            variable.name = f"v{index}"
            variable.targets[0].id_type = id_type
            variable.targets[0].id = datablock
            variable.targets[0].data_path = path
            variables.append(variable.name)
        driver.expression = f"collide_test_count(frame) + 0 * ({' + '.join(variables)})"

    def _count(self, frame) -> float:
        self.count += 1
        return 0.0

    def update(self, edit) -> int:
        """Evaluations of the driver over `edit()` and the update after it."""
        before = self.count
        edit()
        bpy.context.view_layer.update()
        return self.count - before

    def frames(self, scene, frames) -> int:
        """Evaluations of the driver over `scene.frame_set(f)` for each of `frames`."""
        before = self.count
        for frame in frames:
            scene.frame_set(frame)
        return self.count - before


def ball_through_wall():
    """A ball passing through a wall over frames 1..13 (clashing at 6, 7, 8) and a still
    cube far away, all of ORIGINAL_COLOR."""
    wall = scenes.add_object("Wall", scenes.mesh("cube"), scale=(0.5, 4.0, 4.0))
    ball = scenes.add_object("Ball", scenes.mesh("sphere"))
    still = scenes.add_object("Still", scenes.mesh("cube"), location=(0, 20, 0))
    for obj in (wall, ball, still):
        obj.color = ORIGINAL_COLOR
    scenes.animate_location(ball, {1: (-6.0, 0, 0), 13: (6.0, 0, 0)})
    return wall, ball, still


def colors(objects) -> list[tuple]:
    return [tuple(obj.color) for obj in objects]


def test_frame_changes_write_no_colour_and_run_one_pass(addon):
    scene = bpy.context.scene
    objects = ball_through_wall()
    counter = EvaluationCounter(objects)
    scene.frame_set(1)
    assert counter.frames(scene, range(2, 14)) == 12, "the driver: once per frame"
    scene.collide.live = True
    # The clash list changes at frames 6 and 9, with a picked row that goes away.
    assert counter.frames(scene, range(2, 8)) == 6
    assert scenes.records() == [("Wall", "Ball")]
    scene.collide.active_clash_index = 0
    assert counter.frames(scene, range(8, 14)) == 6
    assert scene.collide.active_clash_index == -1
    assert colors(objects) == [ORIGINAL_COLOR] * 3
    # An edit still writes the colours at once (depsgraph_update_post is no frame change).
    objects[1].location.x = 0.0
    bpy.context.view_layer.update()
    assert tuple(objects[1].color) == tuple(scene.collide.clash_color)
    assert scenes.overlay_tinted(addon) == set()
    scene.collide.live = False


def test_an_edits_tint_is_written_inside_the_next_evaluation(addon, monkeypatch):
    # In a window an edit's tint waits for the next update's depsgraph_update_pre, or for
    # the edits to stop: written in depsgraph_update_post it made Blender evaluate the
    # scene a second time (at 20,000 objects as long as Blender's own update).
    scene = bpy.context.scene
    handlers = blender_module(addon, "handlers")
    session = blender_module(addon, "session")
    monkeypatch.setattr(handlers, "_edit_tint_waits", lambda: True)
    wall = scenes.add_object("Wall", scenes.mesh("cube"), scale=(0.5, 4.0, 4.0))
    ball = scenes.add_object("Ball", scenes.mesh("sphere"), location=(-6.0, 0, 0))
    still = scenes.add_object("Still", scenes.mesh("cube"), location=(0, 20, 0))
    for obj in (wall, ball, still):
        obj.color = ORIGINAL_COLOR
    scene.collide.live = True
    clash = tuple(scene.collide.clash_color)
    counter = EvaluationCounter((wall, ball, still), moved=(ball, still))

    def move(obj, x):
        return lambda: setattr(obj.location, "x", x)

    # Into the wall: listed at once, one pass, the tint pending (not drawn by the overlay,
    # which is for frame changes).
    assert counter.update(move(ball, 0.0)) == 1
    assert scenes.records() == [("Wall", "Ball")]
    assert colors((wall, ball)) == [ORIGINAL_COLOR] * 2
    assert scenes.overlay_tinted(addon) == set()
    # The next edit's update writes it, in its one pass.
    assert counter.update(move(still, 1.0)) == 1
    assert colors((wall, ball, still)) == [clash, clash, ORIGINAL_COLOR]
    # Out again; the edits stop: settling (the timer in a window) writes the tint.
    assert counter.update(move(ball, -6.0)) == 1
    assert scenes.records() == []
    assert colors((wall, ball)) == [clash] * 2
    assert session.settle(scene)
    assert not session.settle(scene), "nothing left pending"
    assert colors((wall, ball, still)) == [ORIGINAL_COLOR] * 3
    # Detect writes at once, and leaves nothing pending.
    counter.update(move(ball, 0.0))
    assert colors((wall, ball)) == [ORIGINAL_COLOR] * 2
    assert bpy.ops.collide.detect() == {"FINISHED"}
    assert colors((wall, ball)) == [clash] * 2
    assert not session.settle(scene)
    counter.update(move(ball, -6.0))
    assert session.settle(scene)
    assert colors((wall, ball, still)) == [ORIGINAL_COLOR] * 3
    # Not written from another thread (a render's).
    counter.update(move(ball, 0.0))
    writer = threading.Thread(target=handlers.on_depsgraph_update_pre, args=(scene,))
    writer.start()
    writer.join()
    assert colors((wall, ball)) == [ORIGINAL_COLOR] * 2
    # A pending tint goes with live mode.
    scene.collide.live = False
    assert not session.settle(scene)
    assert colors((wall, ball, still)) == [ORIGINAL_COLOR] * 3
    # Background sessions (scripts) get the colours at once, for a second pass.
    monkeypatch.setattr(handlers, "_edit_tint_waits", lambda: False)
    scene.collide.live = True
    assert colors((wall, ball)) == [clash] * 2
    assert counter.update(move(ball, -6.0)) == 2
    assert colors((wall, ball)) == [ORIGINAL_COLOR] * 2
    scene.collide.live = False


def test_the_first_frame_change_gives_an_edit_tint_back(addon):
    # Colours written by an edit would show the clashes of another frame: the first
    # frame change gives them back (one pass with a tag), later ones write nothing.
    scene = bpy.context.scene
    wall, ball, still = ball_through_wall()
    scene.frame_set(7)
    scene.collide.live = True  # checks at once, outside a frame change: written
    assert colors((wall, ball)) == [tuple(scene.collide.clash_color)] * 2
    counter = EvaluationCounter((wall, ball, still))
    scene.frame_set(8)
    assert colors((wall, ball, still)) == [ORIGINAL_COLOR] * 3
    assert scenes.overlay_tinted(addon) == {"Wall", "Ball"}
    assert counter.frames(scene, range(9, 12)) == 3
    scene.collide.live = False
    assert colors((wall, ball, still)) == [ORIGINAL_COLOR] * 3
    assert scenes.overlay_tinted(addon) == set()


def test_stopping_writes_the_colours_of_a_check(addon):
    # After any frame, settling gives every object the colour a check outside a frame
    # change (Detect, an edit) gives it at that frame, exactly.
    scene = bpy.context.scene
    session = blender_module(addon, "session")
    rng = np.random.default_rng(11)
    cube, sphere = scenes.mesh("cube"), scenes.mesh("sphere")
    objects = []
    for index in range(24):
        obj = scenes.add_object(f"Part{index:02d}", cube if index % 2 else sphere)
        obj.color = tuple(rng.uniform(0, 1, 4).astype(np.float32).tolist())
        keys = {frame: tuple(rng.uniform(0, 7, 3)) for frame in (1, 5, 9)}
        scenes.animate_location(obj, keys)
        objects.append(obj)
    originals = colors(objects)
    scene.frame_set(1)
    scene.collide.live = True
    for frame in (2, 3, 6, 9, 4):
        scene.frame_set(frame)
        tinted = scenes.overlay_tinted(addon)
        clashing = {name for pair in scenes.records() for name in pair}
        assert tinted == clashing
        assert colors(objects) == originals, "frame changes leave the colours alone"
        assert session.settle(scene)
        settled = colors(objects)
        assert scenes.overlay_tinted(addon) == set()
        assert not session.settle(scene), "nothing waits any more"
        # What the old design wrote at every frame: a check outside a frame change.
        session.live_check_now(scene)
        assert colors(objects) == settled
        expected = [
            tuple(scene.collide.clash_color) if obj.name in clashing else original
            for obj, original in zip(objects, originals, strict=True)
        ]
        assert settled == expected
    scene.collide.live = False
    assert colors(objects) == originals


def test_playback_end_and_timer_settle(addon):
    scene = bpy.context.scene
    handlers = blender_module(addon, "handlers")
    wall, ball, _still = ball_through_wall()
    scene.collide.live = True
    scene.frame_set(7)
    # Background: no event loop runs timers, and bpy 4.5 would hang at exit on one.
    assert not bpy.app.timers.is_registered(handlers._settle_when_still)
    assert handlers.on_animation_playback_post in bpy.app.handlers.animation_playback_post
    handlers.on_animation_playback_post(scene, bpy.context.evaluated_depsgraph_get())
    assert colors((wall, ball)) == [tuple(scene.collide.clash_color)] * 2
    scene.frame_set(8)
    assert colors((wall, ball)) == [ORIGINAL_COLOR] * 2
    # The timer's callback waits while frames changed lately, then settles and stops.
    waited = handlers._settle_when_still()
    assert 0 < waited <= handlers.SETTLE_SECONDS
    assert colors((wall, ball)) == [ORIGINAL_COLOR] * 2
    handlers._last_change -= handlers.SETTLE_SECONDS
    assert handlers._settle_when_still() is None
    assert colors((wall, ball)) == [tuple(scene.collide.clash_color)] * 2
    scene.collide.live = False


def test_saving_while_frames_change(addon, tmp_path):
    scene = bpy.context.scene
    session = blender_module(addon, "session")
    wall, ball, still = ball_through_wall()
    scene.collide.live = True
    scene.frame_set(7)
    path = tmp_path / "mid_playback.blend"
    bpy.ops.wm.save_as_mainfile(filepath=str(path), copy=True)
    assert colors((wall, ball, still)) == [ORIGINAL_COLOR] * 3
    assert scenes.overlay_tinted(addon) == {"Wall", "Ball"}, "the overlay goes on"
    session.settle(scene)
    assert colors((wall, ball)) == [tuple(scene.collide.clash_color)] * 2
    bpy.ops.wm.save_as_mainfile(filepath=str(path), copy=True)
    assert colors((wall, ball)) == [tuple(scene.collide.clash_color)] * 2
    with bpy.data.libraries.load(str(path)) as (_source, target):
        target.objects = ["Wall", "Ball"]
    assert colors(target.objects) == [ORIGINAL_COLOR] * 2
    scene.collide.live = False
    assert colors((wall, ball, still)) == [ORIGINAL_COLOR] * 3


def test_undo_and_disable_while_frames_change(addon):
    session = blender_module(addon, "session")
    ball_through_wall()
    bpy.context.scene.frame_set(7)
    bpy.ops.ed.undo_push(message="scene")
    bpy.context.scene.collide.live = True  # written at once
    tinted = tuple(bpy.context.scene.collide.clash_color)
    bpy.ops.ed.undo_push(message="live on, tinted")
    bpy.context.scene.frame_set(8)  # given back, the overlay tints
    bpy.ops.ed.undo_push(message="frame 8")
    bpy.ops.ed.undo()  # back to the tinted colours (undo brings other scene and objects)
    scene = bpy.context.scene
    wall, ball = bpy.data.objects["Wall"], bpy.data.objects["Ball"]
    assert colors((wall, ball)) == [tinted] * 2
    assert not session.settle(scene), "undo forgets what waited"
    scene.frame_set(9)
    assert colors((wall, ball)) == [ORIGINAL_COLOR] * 2
    scene.frame_set(7)
    assert scenes.overlay_tinted(addon) == {"Wall", "Ball"}
    module = addon.__name__
    try:
        addon_utils.disable(module, default_set=True)
        assert colors((wall, ball)) == [ORIGINAL_COLOR] * 2
        assert not bpy.app.timers.is_registered(
            blender_module(addon, "handlers")._settle_when_still
        )
    finally:
        addon_utils.enable(module, default_set=True)
    scene.collide.live = False
    bpy.ops.ed.undo()
    assert colors((bpy.data.objects["Wall"], bpy.data.objects["Ball"])) == [ORIGINAL_COLOR] * 2


@pytest.mark.parametrize("settle_by", ["live off", "clear"])
def test_switching_off_while_frames_change_stops_the_overlay(addon, settle_by):
    scene = bpy.context.scene
    wall, ball, _still = ball_through_wall()
    scene.collide.live = True
    scene.frame_set(7)
    assert scenes.overlay_tinted(addon) == {"Wall", "Ball"}
    if settle_by == "live off":
        scene.collide.live = False
    else:
        assert bpy.ops.collide.clear() == {"FINISHED"}
    assert scenes.overlay_tinted(addon) == set()
    assert colors((wall, ball)) == [ORIGINAL_COLOR] * 2
    scene.collide.live = False


def test_checks_hold_numpys_openblas_on_one_thread(addon, monkeypatch):
    """A check's many small numpy calls would each let OpenBLAS start threads of its own,
    which stall the frame when another process holds a core: while live mode's first
    check, a frame change's and an edit's read and decide, every OpenBLAS loaded runs on
    one thread, and gets its own count back after."""
    threads = sys.modules[f"{addon.__name__}.core.threads"]
    session = blender_module(addon, "session")
    controls = threads._openblas_thread_controls()
    assert controls  # Blender's numpy ships OpenBLAS
    for _, set_count in controls:
        set_count(2)
    seen = []
    find_clashes = session.find_clashes

    def spy(*args, **kwargs):
        seen.append([get() for get, _ in controls])
        return find_clashes(*args, **kwargs)

    monkeypatch.setattr(session, "find_clashes", spy)
    scene = bpy.context.scene
    _, ball, _ = ball_through_wall()
    scene.frame_set(1)
    scene.collide.live = True
    scene.frame_set(6)
    ball.location.z = 0.5
    bpy.context.view_layer.update()
    scene.collide.live = False
    assert len(seen) >= 3 and all(counts == [1] * len(controls) for counts in seen)
    assert [get() for get, _ in controls] == [2] * len(controls)
    assert scenes.records() == [("Wall", "Ball")]
