"""Resolve (bpy.ops.collide.resolve) in the real Blender: pairs left apart by the add-on's
own check, one undo step, parents, locked axes, animation and auto-keying, exact meshes."""

import math
import sys
from types import SimpleNamespace

import bpy
import numpy as np
import pytest

from . import scenes


def clashing_cubes(b_location=(1.5, 0.2, 0.0)):
    """Cubes A at the origin and B overlapping it by 0.5 along x; B picked and active."""
    a = scenes.add_object("A", scenes.mesh("cube"))
    b = scenes.add_object("B", scenes.mesh("cube"), location=b_location)
    pick_clash(b)
    return a, b


def pick_clash(active):
    """Detect, pick the first clash row and make `active` the active object."""
    assert bpy.ops.collide.detect() == {"FINISHED"}
    assert len(bpy.context.scene.collide.clashes) >= 1
    bpy.context.scene.collide.active_clash_index = 0
    bpy.context.view_layer.objects.active = active


def world_location(obj) -> np.ndarray:
    bpy.context.view_layer.update()
    return np.array(obj.matrix_world.translation, dtype=np.float64)


def assert_no_clash() -> None:
    assert bpy.ops.collide.detect() == {"FINISHED"}
    assert scenes.records() == []


def test_resolve_moves_the_active_object_out_and_the_other_stays(addon):
    a, b = clashing_cubes()
    assert bpy.ops.collide.resolve() == {"FINISHED"}
    # The list was checked again by the operator: empty.
    assert scenes.records() == []
    assert tuple(a.location) == (0.0, 0.0, 0.0)
    # Overlap 0.5 along x, plus the few micrometres that keep rounding out.
    assert b.location.x == pytest.approx(2.0, abs=1e-5)
    assert b.location.x > 2.0
    assert tuple(b.location)[1:] == pytest.approx((0.2, 0.0))
    assert_no_clash()


def test_resolve_is_one_undo_step(addon):
    assert {"REGISTER", "UNDO"} <= bpy.types.COLLIDE_OT_resolve.bl_options
    _, b = clashing_cubes((1.4, 0.2, 0.0))
    bpy.ops.ed.undo_push(message="B at 1.4")
    b.location.x = 1.5
    bpy.ops.ed.undo_push(message="B at 1.5")
    # Called with undo as a button does (bpy.ops' second argument): Python calls without
    # it leave the undo push to their caller.
    assert bpy.ops.collide.resolve("EXEC_DEFAULT", True) == {"FINISHED"}
    assert bpy.data.objects["B"].location.x > 2.0
    # One undo goes back to just before the resolve (had the operator pushed no step,
    # it would go back to 1.4; had it pushed several, it would stay past 1.5).
    bpy.ops.ed.undo()
    assert bpy.data.objects["B"].location.x == pytest.approx(1.5)
    bpy.ops.ed.redo()
    assert bpy.data.objects["B"].location.x > 2.0


def test_move_both_moves_each_half_way(addon):
    a, b = clashing_cubes()
    assert bpy.ops.collide.resolve(move_both=True) == {"FINISHED"}
    assert b.location.x == pytest.approx(1.75, abs=1e-5)
    assert a.location.x == pytest.approx(-0.25, abs=1e-5)
    assert_no_clash()


@pytest.mark.parametrize("keep_parent_inverse", [False, True])
def test_a_child_of_a_rotated_scaled_parent_moves_in_its_parent_space(addon, keep_parent_inverse):
    scenes.add_object("A", scenes.mesh("cube"))
    parent = scenes.add_object("Parent", None, location=(3.0, 1.0, 0.0), scale=(2.0, 2.0, 2.0))
    parent.rotation_euler = (0.0, 0.0, math.radians(90))
    child = scenes.add_object("Child", scenes.mesh("cube"), scale=(0.5, 0.5, 0.5))
    child.parent = parent
    bpy.context.view_layer.update()
    if keep_parent_inverse:
        # As Ctrl+P parents: the parent inverse cancels the parent's matrix of that time;
        # the parent then turns and moves on.
        child.matrix_parent_inverse = parent.matrix_world.inverted()
        parent.rotation_euler = (0.0, 0.0, math.radians(30))
        parent.location = (2.5, 0.5, 0.0)
        # Net parent turn -60 degrees and scale 1: the child undoes them.
        child.scale = (1.0, 1.0, 1.0)
        child.rotation_euler = (0.0, 0.0, math.radians(60))
    # Put the child's centre at world (1.5, 0.2, 0): a unit cube again, overlapping A by 0.5.
    bpy.context.view_layer.update()
    child.matrix_world.translation = (1.5, 0.2, 0.0)
    bpy.context.view_layer.update()
    before = world_location(child)
    np.testing.assert_allclose(before, [1.5, 0.2, 0.0], atol=1e-6)
    # A unit cube aligned with the world axes (turned by quarter turns only).
    linear = np.abs(np.array(child.matrix_world)[:3, :3])
    np.testing.assert_allclose(linear.sum(axis=0), 1.0, atol=1e-6)
    np.testing.assert_allclose(linear.max(axis=0), 1.0, atol=1e-6)
    pick_clash(child)
    assert bpy.ops.collide.resolve() == {"FINISHED"}
    after = world_location(child)
    np.testing.assert_allclose(after - before, [0.5, 0.0, 0.0], atol=1e-5)
    assert_no_clash()


def test_a_locked_axis_is_kept_and_the_free_ones_used(addon):
    scenes.add_object("A", scenes.mesh("cube"))
    parent = scenes.add_object("Parent", None)
    parent.rotation_euler = (0.0, 0.0, math.radians(30))
    b = scenes.add_object("B", scenes.mesh("cube"))
    b.parent = parent
    bpy.context.view_layer.update()
    b.matrix_world.translation = (1.5, 0.2, 0.0)
    bpy.context.view_layer.update()
    b.lock_location = (True, False, False)
    locked_x = b.location.x
    pick_clash(b)
    assert bpy.ops.collide.resolve() == {"FINISHED"}
    assert b.location.x == locked_x
    assert_no_clash()


def test_no_way_out_along_the_free_axes_warns_and_moves_nothing(addon):
    _, b = clashing_cubes()
    b.lock_location = (True, False, False)
    assert bpy.ops.collide.resolve() == {"CANCELLED"}
    assert tuple(b.location) == pytest.approx((1.5, 0.2, 0.0))
    assert len(scenes.records()) == 1


def test_animated_location_moves_only_with_auto_keying(addon):
    scene = bpy.context.scene
    scenes.add_object("A", scenes.mesh("cube"))
    b = scenes.add_object("B", scenes.mesh("cube"))
    scenes.animate_location(b, {1: (5.0, 0.2, 0.0), 11: (0.0, 0.2, 0.0)})
    scene.frame_set(8)  # x = 1.5
    assert b.location.x == pytest.approx(1.5)
    pick_clash(b)
    scene.tool_settings.use_keyframe_insert_auto = False
    assert bpy.ops.collide.resolve() == {"CANCELLED"}
    assert b.location.x == pytest.approx(1.5)
    scene.tool_settings.use_keyframe_insert_auto = True
    assert bpy.ops.collide.resolve() == {"FINISHED"}
    assert b.location.x > 2.0
    # The key holds the move at this frame: leaving it and coming back keeps it.
    scene.frame_set(1)
    scene.frame_set(8)
    assert b.location.x == pytest.approx(2.0, abs=1e-5)
    assert_no_clash()
    scene.frame_set(11)
    assert b.location.x == pytest.approx(0.0)


def test_clashes_of_the_selected_objects(addon):
    a = scenes.add_object("A", scenes.mesh("cube"))
    b = scenes.add_object("B", scenes.mesh("cube"), location=(1.5, 0.8, 0.0))
    c = scenes.add_object("C", scenes.mesh("cube"), location=(0.2, -1.6, 0.0))
    assert bpy.ops.collide.detect() == {"FINISHED"}
    assert len(scenes.records()) == 2
    for obj in (a, b, c):
        obj.select_set(obj == a)
    bpy.context.view_layer.objects.active = a
    assert bpy.ops.collide.resolve(use_selection=True) == {"FINISHED"}
    # A, the active object, moved out of both (B and C stay).
    assert tuple(b.location) == pytest.approx((1.5, 0.8, 0.0))
    assert tuple(c.location) == pytest.approx((0.2, -1.6, 0.0))
    assert tuple(a.location) == pytest.approx((-0.5, 0.4, 0.0), abs=1e-5)
    assert_no_clash()


def test_selected_clashes_are_found_from_a_timers_context(addon):
    # A timer's or a handler's context has a scene and a view layer but no
    # `selected_objects`: the view layer's selection is read.
    a = scenes.add_object("A", scenes.mesh("cube"))
    scenes.add_object("B", scenes.mesh("cube"), location=(1.5, 0.8, 0.0))
    scenes.add_object("C", scenes.mesh("cube"), location=(5.0, 0.0, 0.0))
    scenes.add_object("D", scenes.mesh("cube"), location=(6.5, 0.0, 0.0))
    assert bpy.ops.collide.detect() == {"FINISHED"}
    for obj in bpy.context.scene.objects:
        obj.select_set(obj == a)
    resolve = sys.modules[f"{addon.__name__}.blender.resolve"]
    context = SimpleNamespace(scene=bpy.context.scene, view_layer=bpy.context.view_layer)
    assert resolve.target_pairs(context, use_selection=True) == [("A", "B")]


def test_exact_meshes_move_out_and_a_contained_mesh_is_reported(addon):
    _, b = clashing_cubes()
    assert bpy.ops.collide.resolve(use_mesh=True) == {"FINISHED"}
    # The bisection's tolerance along the proxies' direction: 2**-12 of the move.
    assert b.location.x == pytest.approx(2.0, abs=1e-3)
    assert_no_clash()
    big = scenes.add_object("Big", scenes.mesh("cube"), location=(0, 10, 0), scale=(3, 3, 3))
    small = scenes.add_object("Small", scenes.mesh("cube"), location=(0, 10.5, 0))
    pick_clash(small)
    assert bpy.ops.collide.resolve(use_mesh=True) == {"CANCELLED"}
    assert tuple(small.location) == pytest.approx((0.0, 10.5, 0.0))
    assert big.location.y == 10
    # The proxies alone push it out through the wall.
    assert bpy.ops.collide.resolve() == {"FINISHED"}
    assert_no_clash()


@pytest.mark.parametrize("move_both", [False, True])
def test_a_parent_and_its_child_separate_by_the_childs_move(addon, move_both):
    """The parent active (a click on the row makes the first object active): the
    parent moved and carried its child along, and the pair stayed 1 deep (half as deep
    with both moving) while Resolve said it moved them."""
    parent = scenes.add_object("A", scenes.mesh("cube"))
    child = scenes.add_object("B", scenes.mesh("cube"), location=(1.0, 0.0, 0.0))
    child.parent = parent
    pick_clash(parent)
    assert bpy.ops.collide.resolve(move_both=move_both) == {"FINISHED"}
    assert tuple(parent.location) == (0.0, 0.0, 0.0)
    assert child.location.x == pytest.approx(2.0, abs=1e-5)
    assert_no_clash()


def test_an_object_linked_from_a_library_is_not_moved(addon, tmp_path):
    """Blender neither edits nor saves a linked object's location: the move was
    reported, then lost with the file's next save and load."""
    library_path = tmp_path / "library.blend"
    linked = scenes.add_object("L", scenes.mesh("cube"))
    bpy.data.libraries.write(str(library_path), {linked})
    bpy.data.objects.remove(linked)
    with bpy.data.libraries.load(str(library_path), link=True) as (_source, target):
        target.objects = ["L"]
    [linked] = target.objects
    bpy.context.scene.collection.objects.link(linked)
    scenes.add_object("A", scenes.mesh("cube"), location=(1.0, 0.2, 0.0))
    pick_clash(linked)
    assert bpy.ops.collide.resolve() == {"CANCELLED"}
    assert tuple(linked.location) == (0.0, 0.0, 0.0)
    assert len(scenes.records()) == 1


def test_location_animated_by_an_nla_strip_moves_only_with_auto_keying(addon):
    """The action pushed down to an NLA strip (no active action): B was moved with no
    warning, and the next frame change put it back into the clash."""
    scene = bpy.context.scene
    scenes.add_object("A", scenes.mesh("cube"))
    b = scenes.add_object("B", scenes.mesh("cube"))
    scenes.animate_location(b, {1: (1.0, 0.2, 0.0), 11: (1.0, 0.2, 0.0)})
    animation = b.animation_data
    animation.nla_tracks.new().strips.new("Moves", 1, animation.action)
    animation.action = None
    scene.frame_set(1)
    pick_clash(b)
    scene.tool_settings.use_keyframe_insert_auto = False
    assert bpy.ops.collide.resolve() == {"CANCELLED"}
    assert b.location.x == pytest.approx(1.0)


def test_the_both_button_says_what_it_does(addon):
    """ "Both" under the clash showed Resolve's own tooltip, the active object's move."""
    operators = sys.modules[f"{addon.__name__}.blender.operators"]
    resolve = operators.COLLIDE_OT_resolve
    both = resolve.description(bpy.context, SimpleNamespace(move_both=True))
    alone = resolve.description(bpy.context, SimpleNamespace(move_both=False))
    assert both.startswith("Move both objects") and "half" in both
    assert alone.startswith("Move the active object") and "\n" not in alone
