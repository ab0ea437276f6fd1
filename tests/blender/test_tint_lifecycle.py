"""The tint through what users do around it: renaming scenes and objects, deleting a
scene, undo, a colour of their own. Which scenes hold a tint was kept by name: a renamed
or deleted scene, and undo, left objects red for good."""

import bpy
import pytest

from . import scenes

ORIGINAL_COLOR = (0.25, 0.5, 0.75, 0.625)  # exactly representable in float32


def _clashing_pair(collection=None):
    """A and B, 0.5 m into each other, in their own colour."""
    a = scenes.add_object("A", scenes.mesh("cube"), collection=collection)
    b = scenes.add_object("B", scenes.mesh("cube"), location=(1.5, 0, 0), collection=collection)
    a.color = b.color = ORIGINAL_COLOR
    return a, b


def _in(scene):
    return bpy.context.temp_override(scene=scene, view_layer=scene.view_layers[0])


def test_a_renamed_scene_gives_its_tint_back(addon):
    """Renamed after Detect, Clear left A and B red; in live mode the next check failed
    (KeyError on the new name) and switched live mode off, leaving them red."""
    scene = bpy.context.scene
    a, b = _clashing_pair()
    assert bpy.ops.collide.detect() == {"FINISHED"}
    scene.name = "Shot_010"
    assert bpy.ops.collide.clear() == {"FINISHED"}
    assert tuple(a.color) == tuple(b.color) == ORIGINAL_COLOR
    scene.collide.live = True
    scene.name = "Shot_020"
    c = scenes.add_object("C", scenes.mesh("cube"), location=(0, 1.5, 0))
    c.color = ORIGINAL_COLOR
    bpy.context.view_layer.update()
    assert scene.collide.live and not scene.collide.last_error
    assert tuple(c.color) == tuple(scene.collide.clash_color)
    scene.collide.live = False
    assert tuple(a.color) == tuple(b.color) == tuple(c.color) == ORIGINAL_COLOR


def test_a_deleted_scene_holds_no_tint(addon):
    """A and B in S1 and S2, both checked; S2 deleted: S1's Clear left them red, held by
    the scene that was gone."""
    first = bpy.context.scene
    a, b = _clashing_pair()
    second = bpy.data.scenes.new("S2")
    for obj in (a, b):
        second.collection.objects.link(obj)
    assert bpy.ops.collide.detect() == {"FINISHED"}
    with _in(second):
        assert bpy.ops.collide.detect() == {"FINISHED"}
    bpy.data.scenes.remove(second)
    assert bpy.context.scene == first
    assert bpy.ops.collide.clear() == {"FINISHED"}
    assert tuple(a.color) == tuple(b.color) == ORIGINAL_COLOR


def test_undo_of_one_scenes_check_leaves_no_hold_behind(addon):
    """Detect in S1, undone; then Detect and Clear in S2: A and B stayed red, still held
    by S1's undone check."""
    a, b = _clashing_pair()
    second = bpy.data.scenes.new("S2")
    for obj in (a, b):
        second.collection.objects.link(obj)
    bpy.ops.ed.undo_push(message="scenes")
    assert bpy.ops.collide.detect() == {"FINISHED"}
    bpy.ops.ed.undo_push(message="S1 checked")
    bpy.ops.ed.undo()
    second = bpy.data.scenes["S2"]
    with _in(second):
        assert bpy.ops.collide.detect() == {"FINISHED"}
        assert bpy.ops.collide.clear() == {"FINISHED"}
    for name in ("A", "B"):
        assert tuple(bpy.data.objects[name].color) == ORIGINAL_COLOR


def test_the_tint_follows_renamed_objects_and_undone_clears(addon):
    """A renamed while tinted lost its tint when the Clash Colour changed, though its
    clash was still listed; after a Clear undone, a new Clash Colour was not shown."""
    scene = bpy.context.scene
    a, b = _clashing_pair()
    assert bpy.ops.collide.detect() == {"FINISHED"}
    a.name = "Pipe_01"
    scene.collide.clash_color = (0.0, 0.0, 1.0, 1.0)
    assert tuple(a.color) == tuple(b.color) == (0.0, 0.0, 1.0, 1.0)
    bpy.ops.ed.undo_push(message="checked")
    assert bpy.ops.collide.clear() == {"FINISHED"}
    bpy.ops.ed.undo_push(message="cleared")
    bpy.ops.ed.undo()
    scene = bpy.context.scene
    a, b = bpy.data.objects["Pipe_01"], bpy.data.objects["B"]
    assert len(scene.collide.clashes) == 1 and tuple(a.color) == (0.0, 0.0, 1.0, 1.0)
    scene.collide.clash_color = (0.0, 1.0, 0.0, 1.0)
    assert tuple(a.color) == tuple(b.color) == (0.0, 1.0, 0.0, 1.0)
    assert bpy.ops.collide.clear() == {"FINISHED"}
    assert tuple(a.color) == tuple(b.color) == ORIGINAL_COLOR


@pytest.mark.parametrize("give_back", ["clear", "live off"])
def test_a_colour_the_user_gives_a_tinted_object_is_kept(addon, give_back):
    """The user paints A green while it is red: the tint going put the old colour back
    over the user's."""
    scene = bpy.context.scene
    a, b = _clashing_pair()
    if give_back == "clear":
        assert bpy.ops.collide.detect() == {"FINISHED"}
    else:
        scene.collide.live = True
    green = (0.0, 1.0, 0.0, 1.0)
    a.color = green
    if give_back == "clear":
        assert bpy.ops.collide.clear() == {"FINISHED"}
    else:
        scene.collide.live = False
    assert tuple(a.color) == green and not a.collide.tinted
    assert tuple(b.color) == ORIGINAL_COLOR


def test_a_setting_changed_after_a_tinted_object_was_removed(addon):
    """A tinted object removed by a script (bpy.data.objects.remove), then a setting
    changed: its update raised ReferenceError (StructRNA of type Object has been removed)
    from the tint's list of the scene's objects."""
    scene = bpy.context.scene
    a, b = _clashing_pair()
    assert bpy.ops.collide.detect() == {"FINISHED"}
    bpy.data.objects.remove(b)
    scene.collide.clash_color = (0.0, 1.0, 0.0, 1.0)
    assert tuple(a.color) == (0.0, 1.0, 0.0, 1.0)
    assert bpy.ops.collide.clear() == {"FINISHED"}
    assert tuple(a.color) == ORIGINAL_COLOR
