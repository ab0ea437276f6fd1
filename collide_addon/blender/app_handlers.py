"""Adding and removing the add-on's `bpy.app.handlers` entries, exactly once each."""


def add(entries) -> None:
    """entries: (handler list, function) pairs, e.g. (bpy.app.handlers.save_pre, fn)."""
    for handlers, function in entries:
        if function not in handlers:
            handlers.append(function)


def remove(entries) -> None:
    for handlers, function in entries:
        if function in handlers:
            handlers.remove(function)
