"""Tinting clashing objects with `Object.color`, and giving everything back.

The original object colours and the viewport colour mode of every 3D view are kept in
memory and restored exactly on clear, on live off, on unregister and before saving
(`save_pre`), after which the tint is applied again (`save_post`), so a saved file never
holds a tint. Only values that change are written: each write of `obj.color` costs a
depsgraph update.
"""

import bpy
from bpy.app.handlers import persistent

from . import app_handlers

# as_pointer() of the object -> (object, its colour before the tint)
_object_colors: dict[int, tuple] = {}
# as_pointer() of a View3DShading -> (shading, its colour type before the tint)
_view_color_types: dict[int, tuple] = {}
# The colour of the last `apply`
_applied_color: tuple | None = None
# Counts the changes to the tint, for `state`
_changes = 0
# What save_pre took off, to put back in save_post: (objects, colour)
_suspended: tuple[list, list] | None = None


def _shadings():
    for screen in bpy.data.screens:
        for area in screen.areas:
            for space in area.spaces:
                if space.type == "VIEW_3D":
                    yield space.shading


def tinted_objects() -> list:
    """Original objects tinted now (those still alive)."""
    alive = []
    for obj, _ in _object_colors.values():
        try:
            obj.name  # noqa: B018 - raises ReferenceError for a removed object
        except ReferenceError:
            continue
        alive.append(obj)
    return alive


def apply(objects, color) -> None:
    """Tint exactly `objects` (original objects) with `color` (RGBA); untint the rest.

    Objects tinted by the previous call with the same colour are not touched again.
    """
    global _applied_color
    color = tuple(color)
    wanted = {obj.as_pointer(): obj for obj in objects}
    for pointer in [pointer for pointer in _object_colors if pointer not in wanted]:
        _restore_object(pointer)
    recolor = color != _applied_color
    _applied_color = color
    _tint([obj for pointer, obj in wanted.items() if recolor or pointer not in _object_colors])


def change(tinted, untinted) -> None:
    """Tint `tinted` and untint `untinted` (original objects) with the colour of the
    last `apply`, leaving every other object as it is: for checks where few change."""
    for obj in untinted:
        pointer = obj.as_pointer()
        if pointer in _object_colors:
            _restore_object(pointer)
    _tint(tinted)


def state() -> tuple:
    """A value that changes whenever the tint changes: (colour, number of changes)."""
    return (_applied_color, _changes)


def _tint(objects) -> None:
    global _changes
    color = _applied_color
    for obj in objects:
        pointer = obj.as_pointer()
        if pointer not in _object_colors:
            _object_colors[pointer] = (obj, tuple(obj.color))
        if tuple(obj.color) != color:
            obj.color = color
    if _object_colors and not _view_color_types:
        _show_object_colors()
    elif not _object_colors:
        _restore_views()
    _changes += 1


def restore_all() -> None:
    """Give back every colour and viewport colour mode changed by `apply`."""
    for pointer in list(_object_colors):
        _restore_object(pointer)
    _restore_views()


def forget() -> None:
    """Drop saved state without writing (the file it belonged to is gone)."""
    global _suspended, _applied_color
    _object_colors.clear()
    _view_color_types.clear()
    _suspended = _applied_color = None


def _restore_object(pointer: int) -> None:
    global _changes
    _changes += 1
    obj, original = _object_colors.pop(pointer)
    try:
        if tuple(obj.color) != original:
            obj.color = original
    except ReferenceError:
        pass


def _show_object_colors() -> None:
    for shading in _shadings():
        if shading.type != "SOLID" or shading.color_type == "OBJECT":
            continue
        _view_color_types.setdefault(shading.as_pointer(), (shading, shading.color_type))
        shading.color_type = "OBJECT"


def _restore_views() -> None:
    for shading, original in _view_color_types.values():
        try:
            if shading.color_type != original:
                shading.color_type = original
        except ReferenceError:
            pass
    _view_color_types.clear()


@persistent
def on_save_pre(*args) -> None:
    global _suspended
    if not _object_colors:
        return
    objects = tinted_objects()
    colors = [tuple(obj.color) for obj in objects]
    _suspended = (objects, colors)
    restore_all()


@persistent
def on_save_post(*args) -> None:
    global _suspended
    if _suspended is None:
        return
    objects, colors = _suspended
    _suspended = None
    for obj, color in zip(objects, colors, strict=True):
        _object_colors[obj.as_pointer()] = (obj, tuple(obj.color))
        obj.color = color
    if _object_colors:
        _show_object_colors()


@persistent
def on_load_pre(*args) -> None:
    forget()


_HANDLERS = (
    (bpy.app.handlers.save_pre, on_save_pre),
    (bpy.app.handlers.save_post, on_save_post),
    (bpy.app.handlers.load_pre, on_load_pre),
)


def register():
    app_handlers.add(_HANDLERS)


def unregister():
    app_handlers.remove(_HANDLERS)
    restore_all()
    forget()
