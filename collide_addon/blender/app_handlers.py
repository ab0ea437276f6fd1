"""Adding and removing the add-on's `bpy.app.handlers` entries, exactly once each."""

import bpy


def after_data_replaced(function) -> tuple:
    """Entries running `function` whenever Blender's data is replaced wholesale: a file
    loaded, undo or redo (objects and scenes may all be other ones afterwards)."""
    handlers = bpy.app.handlers
    return tuple(
        (event, function) for event in (handlers.load_post, handlers.undo_post, handlers.redo_post)
    )


def add(entries) -> None:
    """entries: (handler list, function) pairs, e.g. (bpy.app.handlers.save_pre, fn)."""
    for handlers, function in entries:
        if function not in handlers:
            handlers.append(function)


def remove(entries) -> None:
    for handlers, function in entries:
        if function in handlers:
            handlers.remove(function)
