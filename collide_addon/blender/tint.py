"""Tinting clashing objects with `Object.color`, and giving everything back.

A tinted object keeps its own colour in its settings (`obj.collide.original_color`,
flagged by `obj.collide.tinted`), so the original travels with the object: undo and redo
restore the flag together with the colour, a duplicated object keeps its original, and
an autosaved file still knows it. Each scene tints its own objects: which scenes hold the
tint of an object is kept in memory by address, so that renaming a scene or an object
changes nothing, a scene deleted since holds nothing, and after undo, redo or loading
(when addresses change) it is found again from the scenes: a tinted object is held by
the scenes that hold it and list clashes. A check or a clear in one scene never untints
another scene's clashes; an object in two scenes keeps its tint while either holds it.
A colour the user gives a tinted object is kept when the tint goes (the object no longer
shows the colour the tint wrote). The viewport colour mode of each 3D view (screen data,
which undo leaves alone) is kept in memory. Everything is restored exactly on clear and
live off (the scene's own), on unregister and before saving (`save_pre`), after which the
tint is applied again (`save_post`, or `save_post_fail` when the save failed), so a saved
file never holds a tint. Only colours that change are
written: each write of `obj.color` tags the object's shading for a depsgraph update
(needed to show the colour). The flag and the original are written as ID properties
(`obj.collide["tinted"]`), which run no RNA update and tag nothing; they cost a fifth of
RNA writes.
"""

import bpy
from bpy.app.handlers import persistent

from . import app_handlers

# as_pointer() of each tinted object -> the object: an index of the objects whose
# `collide.tinted` is set, rebuilt from the objects themselves after undo, redo and load.
_tinted: dict[int, object] = {}
# as_pointer() of each tinted object -> as_pointer() of the scenes whose clashes tint it
_holders: dict[int, set[int]] = {}
# as_pointer() of each tinted object -> the colour the tint wrote, to tell a colour the
# user gave it since
_written: dict[int, tuple] = {}
# as_pointer() of a View3DShading -> its colour type before the tint. The shading is found
# again by its address rather than kept: a Python reference to a screen's data outlives
# the area it belongs to (closed, or the file unloaded), and one still held when Blender
# exits is reported as memory not freed.
_view_color_types: dict[int, str] = {}
# Scene as_pointer() -> the colour of its last `apply`
_applied_colors: dict[int, tuple] = {}
# Counts the changes to the tint, for `state`
_change_count = 0
# What save_pre took off, to put back in save_post: (objects, their tinted colours)
_suspended: tuple[list, list] | None = None


def _shadings():
    for screen in bpy.data.screens:
        for area in screen.areas:
            for space in area.spaces:
                if space.type == "VIEW_3D":
                    yield space.shading


def tinted_objects(scene=None) -> list:
    """Original objects tinted now (by `scene`'s clashes, when given)."""
    if scene is None:
        return list(_tinted.values())
    key = scene.as_pointer()
    return [obj for pointer, obj in _tinted.items() if key in _holders.get(pointer, ())]


def apply(objects, color, scene) -> None:
    """Tint exactly `objects` (original objects) with `color` (RGBA) for `scene`; untint
    the other objects it tinted, unless another scene holds them too.

    Objects tinted by the previous call with the same colour are not touched again.
    Looks at every object's flag (about 10 ms at 10,000 objects); `change` does not.
    """
    color = tuple(color)
    _resync()  # objects copied or brought back tinted since are untinted here too
    wanted = {}
    for obj in objects:
        try:
            wanted[obj.as_pointer()] = obj
        except ReferenceError:  # removed since the list was made (a script's delete)
            continue
    released = [obj for pointer, obj in _tinted.items() if pointer not in wanted]
    _release(released, scene)
    recolor = color != _applied_colors.get(scene.as_pointer())
    _applied_colors[scene.as_pointer()] = color
    # Every wanted object is held by this scene, those another scene tinted first too
    # (left out, another scene's Clear untinted them while this one still listed them).
    for pointer in wanted:
        _holders.setdefault(pointer, set()).add(scene.as_pointer())
    _tint([obj for pointer, obj in wanted.items() if recolor or pointer not in _tinted], scene)


def change(tinted, untinted, scene) -> None:
    """Tint `tinted` and release `untinted` (original objects) for `scene`, with the
    colour of its last `apply`, leaving every other object as it is: for checks where
    few change."""
    _release(untinted, scene)
    _tint(tinted, scene)


def release(scene) -> None:
    """Give back the colours `scene`'s clashes took (objects no other scene holds)."""
    _resync()
    _release(list(_tinted.values()), scene)
    _applied_colors.pop(scene.as_pointer(), None)


def state() -> int:
    """A value that changes whenever the tint changes (of any scene)."""
    return _change_count


def restore_all() -> None:
    """Give back every colour and viewport colour mode changed by `apply`."""
    _resync()
    _untint(list(_tinted))  # which gives the views back once nothing is tinted
    _holders.clear()
    _written.clear()
    _applied_colors.clear()


def forget() -> None:
    """Drop the state in memory without writing (the file it belonged to is gone)."""
    global _suspended, _change_count
    _tinted.clear()
    _holders.clear()
    _written.clear()
    _view_color_types.clear()
    _applied_colors.clear()
    _suspended = None
    _change_count += 1


def _release(objects, scene) -> None:
    """`scene` no longer tints `objects`; untint those no other scene holds (a scene
    deleted since holds nothing)."""
    scenes = {other.as_pointer() for other in bpy.data.scenes}
    untinted = []
    for obj in objects:
        try:
            pointer = obj.as_pointer()
        except ReferenceError:  # removed since
            continue
        holders = _holders.get(pointer)
        if holders is not None:
            holders.discard(scene.as_pointer())
            holders &= scenes
        if not holders:
            _holders.pop(pointer, None)
            untinted.append(pointer)
    _untint(untinted)


def _tint(objects, scene) -> None:
    global _change_count
    # A scene whose colour is not known here (its `apply` came before undo) tints in its
    # Clash Colour.
    color = _applied_colors.setdefault(scene.as_pointer(), tuple(scene.collide.clash_color))
    for obj in objects:
        pointer = obj.as_pointer()
        _holders.setdefault(pointer, set()).add(scene.as_pointer())
        if pointer not in _tinted:  # the index matches the flags (see `_resync`)
            settings = obj.collide
            if not settings.tinted:
                settings["original_color"] = obj.color[:]
                settings["tinted"] = True
            _tinted[pointer] = obj
        if tuple(obj.color) != color:
            obj.color = color
        _written[pointer] = tuple(obj.color)
    if _tinted and not _view_color_types:
        _show_object_colors()
    _change_count += 1


def _untint(pointers) -> None:
    """Give the objects at `pointers` (as_pointer() values in `_tinted`) their colour back,
    unless the user gave one a colour of their own since the tint wrote it."""
    global _change_count
    for pointer in pointers:
        obj = _tinted.pop(pointer, None)
        written = _written.pop(pointer, None)
        if obj is None:
            continue
        try:
            settings = obj.collide
            if not settings.tinted:
                continue
            original = tuple(settings.original_color)
            shown = tuple(obj.color)
            if shown != original and (written is None or shown == written):
                obj.color = original
            settings["tinted"] = False
        except ReferenceError:  # removed since
            pass
    if not _tinted:
        _restore_views()
    _change_count += 1


def _resync() -> None:
    """Rebuild the index of tinted objects from the objects' own flags: after undo,
    redo or loading a file, objects (and their addresses) are those of that state. The
    holders of objects no longer tinted go."""
    global _change_count
    _tinted.clear()
    for obj in bpy.data.objects:
        settings = getattr(obj, "collide", None)
        if settings is not None and settings.tinted:
            _tinted[obj.as_pointer()] = obj
    for kept in (_holders, _written):
        for pointer in [pointer for pointer in kept if pointer not in _tinted]:
            del kept[pointer]
    _change_count += 1


def _find_holders() -> None:
    """After undo, redo or loading, when addresses may all have changed: a tinted object
    is held by the scenes that link it and list clashes (the next check or clear of each
    corrects this: a check releases the objects it does not tint)."""
    _holders.clear()
    _written.clear()
    _applied_colors.clear()
    for scene in bpy.data.scenes:
        if not len(scene.collide.clashes):
            continue
        for obj in scene.objects:
            if obj.as_pointer() in _tinted:
                _holders.setdefault(obj.as_pointer(), set()).add(scene.as_pointer())


def _show_object_colors() -> None:
    for shading in _shadings():
        if shading.type != "SOLID" or shading.color_type == "OBJECT":
            continue
        _view_color_types.setdefault(shading.as_pointer(), shading.color_type)
        shading.color_type = "OBJECT"


def _restore_views() -> None:
    """Give the views that `_show_object_colors` switched their colour type back; a view
    closed since is gone."""
    for shading in _shadings():
        original = _view_color_types.get(shading.as_pointer())
        if original is not None and shading.color_type != original:
            shading.color_type = original
    _view_color_types.clear()


@persistent
def on_save_pre(*args) -> None:
    """Untint for the file; `_holders` stays, for the tint to come back after."""
    global _suspended
    _resync()
    if not _tinted:
        return
    objects = tinted_objects()
    colors = [tuple(obj.color) for obj in objects]
    _suspended = (objects, colors)
    _untint(list(_tinted))


@persistent
def on_save_post(*args) -> None:
    """The file is written (or failed to be: `save_post_fail`): the tint comes back."""
    global _suspended, _change_count
    if _suspended is None:
        return
    objects, colors = _suspended
    _suspended = None
    for obj, color in zip(objects, colors, strict=True):
        obj.collide.original_color = obj.color
        obj.collide.tinted = True
        _tinted[obj.as_pointer()] = obj
        obj.color = color
        _written[obj.as_pointer()] = tuple(obj.color)
    if _tinted:
        _show_object_colors()
    _change_count += 1


@persistent
def on_load_pre(*args) -> None:
    forget()


@persistent
def on_data_replaced(*args) -> None:
    """A file was loaded, or undo or redo brought back objects (colours and flags) as
    they were then."""
    _resync()
    _find_holders()
    if not _tinted:
        _restore_views()


_HANDLERS = (
    (bpy.app.handlers.save_pre, on_save_pre),
    (bpy.app.handlers.save_post, on_save_post),
    # Blender 4.2 and later; before, a failed save leaves the tint off until the next check.
    *(
        ((bpy.app.handlers.save_post_fail, on_save_post),)
        if hasattr(bpy.app.handlers, "save_post_fail")
        else ()
    ),
    (bpy.app.handlers.load_pre, on_load_pre),
    *app_handlers.after_data_replaced(on_data_replaced),
)


def register():
    app_handlers.add(_HANDLERS)


def unregister():
    app_handlers.remove(_HANDLERS)
    restore_all()
    forget()
