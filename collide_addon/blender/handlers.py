"""Live mode: check again whenever something moved.

`frame_change_post` covers playback, scrubbing and `scene.frame_set()` (which do not fire
`depsgraph_update_post`); `depsgraph_update_post` covers edits such as transform drags.
Both are registered with the add-on and check only when a scene is live; with live mode
off they only tell a scene's kept reader what changed, once that scene was checked (for
the next Detect), and return at once otherwise. They
read the depsgraph they receive, never raise into Blender (an error is reported once
and live mode switches itself off), ignore calls made while one is running, and skip
repeats of a frame (`frame_change_post` runs once per view layer).

A frame change leaves the tint waiting (`session.settle`): it is written once the frames
stop, by `animation_playback_post` at the end of a playback (Blender 4.2 to 5.0 have it,
3.4 not) and by a timer SETTLE_SECONDS after the last frame change (scrubbing, scripts,
and playback in Blenders without that handler). Background sessions run no timers: a script calls
`session.settle_all()` itself.

In a window an edit's tint is pending: written by `depsgraph_update_pre` of the next edit,
inside Blender's evaluation of it, or by the same timer once the edits stop. Written in
`depsgraph_update_post` it made Blender evaluate the scene a second time (at 20,000
objects about as long as Blender's own update). Background sessions write it at once.
"""

import sys
import threading
import time
from dataclasses import dataclass, field
from itertools import islice

import bpy
import numpy as np
from bpy.app.handlers import persistent

from . import app_handlers, session

_running = False
# (scene pointer, frame, subframe) last checked by frame_change_post
_last_frame: tuple | None = None
# Quiet time after the last frame change before the waiting tint is written: longer
# than a frame of slow playback or scrubbing, short enough to feel immediate.
SETTLE_SECONDS = 0.3
# time.monotonic() of the last frame change or edit that left a tint waiting or pending
_last_change = 0.0
# An edit with at most this many depsgraph updates has their flags read one by one.
_FEW_UPDATES = 64


def _update_flags(updates, count: int, name: str) -> np.ndarray:
    """One boolean attribute of the depsgraph's `count` updates, read in bulk."""
    values = np.zeros(count, dtype=bool)
    updates.foreach_get(name, values)
    return values


@dataclass
class _Changes:
    """What a depsgraph's updates mean for the proxies.

    objects: an object changed other than by moving or its geometry (renamed,
        reparented, its settings): who takes part and their names are found again
    membership: the scene (selection, visibility) or, for the Collection scope, a
        collection changed: who takes part may differ, and is compared
    geometry: (name, "object" or "data") of the objects, meshes and curves whose
        geometry changed
    """

    objects: bool = False
    membership: bool = False
    geometry: set[tuple[str, str]] = field(default_factory=set)


def _changes(depsgraph, scope: str, edits: bool, known_name=None) -> _Changes:
    """The `_Changes` in `depsgraph`'s updates. With `edits` False (frame changes) only
    geometry updates count: the scene is tagged on every frame. Only the updates that
    are geometry updates or not transform updates are looked at one by one.

    Each pass over the updates (counting them, a bulk read of a flag, iterating) walks
    every datablock of the view layer in Blender: 3 ms at 20,000 objects for one update.
    An edit's few updates are taken in one pass, which stops after `_FEW_UPDATES` + 1,
    and their flags read one by one; the many updates of a frame change (or of an edit
    that moves many objects) are counted and get their flags read in bulk.

    known_name: address -> the name the reader knows an object by (None where it knows
    none), so that an edit's transform update of an object renamed in the same update
    (a script) is looked at too: its transform flag hid the rename."""
    updates = depsgraph.updates
    changes = _Changes()
    first = list(islice(updates, _FEW_UPDATES + 1)) if edits else None
    if first is not None and len(first) <= _FEW_UPDATES:
        looked_at = [
            update
            for update in first
            if update.is_updated_geometry
            or not update.is_updated_transform
            or _renamed(update.id, known_name)
        ]
    else:
        count = len(updates)
        geometry_flags = _update_flags(updates, count, "is_updated_geometry")
        if edits:
            moved = _update_flags(updates, count, "is_updated_transform")
            geometry_flags |= ~moved
        looked_at = session.items_at(updates, np.flatnonzero(geometry_flags).tolist())
    for update in looked_at:
        datablock = update.id
        if isinstance(datablock, bpy.types.Scene):
            # An edit of the scene (hiding, selecting; tagged with geometry or not) may
            # change who takes part; frame changes tag it on every frame.
            changes.membership |= edits
        elif isinstance(datablock, bpy.types.Collection):
            # Membership; other changes (even writing locations in bulk) tag it too,
            # and for the other scopes a change of the object count triggers a rebuild.
            changes.membership |= edits and scope == "COLLECTION"
        elif update.is_updated_geometry:
            kind = "object" if isinstance(datablock, bpy.types.Object) else "data"
            changes.geometry.add((datablock.original.name_full, kind))
        elif update.is_updated_shading:
            continue  # a colour (the tint, say) or material: the proxies stay
        elif isinstance(datablock, bpy.types.Object):
            changes.objects = True
    return changes


def _renamed(datablock, known_name) -> bool:
    """Whether `datablock` is an object the reader knows by another name."""
    if known_name is None or not isinstance(datablock, bpy.types.Object):
        return False
    original = datablock.original
    known = known_name(original.as_pointer())
    return known is not None and known != original.name_full


def _hidden_flags(depsgraph) -> np.ndarray:
    """`hide_viewport` of every object of the view layer and of every collection, read
    in bulk: the visibility keyframes can animate (animation writes them back to the
    originals of the active depsgraph)."""
    objects = depsgraph.view_layer.objects
    collections = bpy.data.collections
    flags = np.zeros(len(objects) + len(collections), dtype=bool)
    objects.foreach_get("hide_viewport", flags[: len(objects)])
    collections.foreach_get("hide_viewport", flags[len(objects) :])
    return flags


def _visibility_changed(live_session, depsgraph) -> bool:
    """Whether the hidden flags differ from the last frame's (about 1 ms at 10,000
    objects, where finding who takes part again costs ten times that)."""
    flags = _hidden_flags(depsgraph)
    changed = live_session.hidden_flags is not None and not np.array_equal(
        flags, live_session.hidden_flags
    )
    live_session.hidden_flags = flags
    return changed


def _note_changes(live_session, scene, depsgraph, edits: bool, live: bool = True) -> None:
    """Tell the session's reader what the depsgraph's updates changed: who takes part,
    which geometry (`_changes`). Visibility animated by keyframes is compared frame to
    frame only when `live`: a Detect finds who takes part again anyway."""
    reader = live_session.reader
    if live and not edits and _visibility_changed(live_session, depsgraph):
        # Frame changes tag the scene on every frame, so membership updates tell
        # nothing there: visibility animated by keyframes is found by its flags.
        reader.recheck_participants()
    # A frame change that updated a mesh datablock (a handler swapping an object's mesh
    # or writing its vertices, as stop-motion and mesh-sequence add-ons do) changed
    # geometry of objects that animate none otherwise; one call tells, where ordinary
    # animation updates no mesh.
    if edits or reader.has_changing_geometry or depsgraph.id_type_updated("MESH"):
        changes = _changes(depsgraph, scene.collide.scope, edits, reader.known_name)
        if changes.objects:
            reader.invalidate(changes.geometry)
        else:
            reader.geometry_changed(changes.geometry)
            if changes.membership:
                reader.recheck_participants()


def _live_update(scene, depsgraph, edits: bool) -> None:
    if depsgraph is None or depsgraph.mode != "VIEWPORT":
        # Renders read their own depsgraph; changing data while rendering can crash.
        return
    if not scene.collide.live:
        # The reader of a scene checked before keeps what it read for the next Detect:
        # it must hear of the edits and frame changes since, as in live mode, or that
        # Detect would decide on geometry and rows as they were.
        kept = session.existing_session(scene)
        if kept is not None and kept.reader.has_read:
            try:
                _note_changes(kept, scene, depsgraph, edits, live=False)
            except Exception as error:  # noqa: BLE001 - never raise into Blender
                kept.reader.forget_everything()
                print(f"collide: changes not followed: {error}", file=sys.stderr)
        return
    try:
        live_session = session.session_for(scene)
        _note_changes(live_session, scene, depsgraph, edits)
        tint_later = edits and _edit_tint_waits()
        session.check(
            scene, depsgraph, only_if_moved=True, frame_change=not edits, tint_later=tint_later
        )
        if tint_later or not edits:
            _settle_later()
    except Exception as error:  # noqa: BLE001 - never raise into Blender
        session.switch_live_off(scene, error)


@persistent
def on_depsgraph_update_post(scene, depsgraph=None) -> None:
    global _running, _last_frame
    if _running:
        return
    _running = True
    try:
        _last_frame = None
        _live_update(scene, depsgraph, edits=True)
    finally:
        _running = False


def _edit_tint_waits() -> bool:
    """Whether an edit's tint is written later (`session.write_pending_tints`): in a
    window, where the next edit's `depsgraph_update_pre` or a timer writes it; not in
    background sessions, which run no timers and whose scripts read colours at once."""
    return not bpy.app.background


@persistent
def on_depsgraph_update_pre(*args) -> None:
    """Write the edits' pending tints, which Blender then evaluates with this update;
    not from a render's thread (changing data there while the viewport draws can crash
    Blender: the render writes no colour, the next edit or the timer does)."""
    if threading.current_thread() is not threading.main_thread():
        return
    try:
        session.write_pending_tints()
    except Exception as error:  # noqa: BLE001 - never raise into Blender
        print(f"collide: the tint could not be written: {error}", file=sys.stderr)


@persistent
def on_frame_change_post(scene, depsgraph=None) -> None:
    global _running, _last_frame
    if _running:
        return
    key = (scene.as_pointer(), scene.frame_current, scene.frame_subframe)
    if key == _last_frame:
        return
    _running = True
    try:
        _last_frame = key
        _live_update(scene, depsgraph, edits=False)
    finally:
        _running = False


def _playing() -> bool:
    window_manager = bpy.context.window_manager
    windows = window_manager.windows if window_manager is not None else ()
    return any(window.screen.is_animation_playing for window in windows)


def _settle_when_still() -> float | None:
    """Timer: settle the waiting and pending tints once no frame changed and nothing was
    edited for SETTLE_SECONDS and no playback runs; else the seconds to wait again."""
    remaining = _last_change + SETTLE_SECONDS - time.monotonic()
    if remaining > 0:
        return remaining
    if _playing():
        return SETTLE_SECONDS
    try:
        session.settle_all()
    except Exception as error:  # noqa: BLE001 - never raise into Blender
        print(f"collide: the tint could not be written: {error}", file=sys.stderr)
    return None


def _settle_later() -> None:
    global _last_change
    _last_change = time.monotonic()
    # Background sessions have no event loop to run the timer, and bpy 4.5 hangs at exit
    # with a timer left registered (even one a file load dropped).
    if bpy.app.background:
        return
    if not bpy.app.timers.is_registered(_settle_when_still):
        bpy.app.timers.register(_settle_when_still, first_interval=SETTLE_SECONDS)


@persistent
def on_animation_playback_post(*args) -> None:
    """Playback stopped: the waiting tints are written now."""
    try:
        session.settle_all()
    except Exception as error:  # noqa: BLE001 - never raise into Blender
        print(f"collide: the tint could not be written: {error}", file=sys.stderr)


@persistent
def on_data_replaced(*args) -> None:
    """A new file, or undo or redo: the scenes, objects and geometry may all be other
    than the sessions remember, so the sessions go and the next check reads afresh."""
    global _last_frame
    _last_frame = None
    session.forget_sessions()


_HANDLERS = (
    (bpy.app.handlers.depsgraph_update_pre, on_depsgraph_update_pre),
    (bpy.app.handlers.depsgraph_update_post, on_depsgraph_update_post),
    (bpy.app.handlers.frame_change_post, on_frame_change_post),
    # In Blender 4.2 to 5.0, not 3.4: there the timer settles after playback too.
    *(
        ((bpy.app.handlers.animation_playback_post, on_animation_playback_post),)
        if hasattr(bpy.app.handlers, "animation_playback_post")
        else ()
    ),
    *app_handlers.after_data_replaced(on_data_replaced),
)


def register():
    app_handlers.add(_HANDLERS)


def unregister():
    # The tint gives colours back in its own unregister, which runs first.
    app_handlers.remove(_HANDLERS)
    if bpy.app.timers.is_registered(_settle_when_still):
        bpy.app.timers.unregister(_settle_when_still)
    session.forget_sessions()


def geometry_updates(depsgraph) -> set[tuple[str, str]]:
    """(name, "object" or "data") of the objects, meshes and curves whose geometry the
    depsgraph's last evaluation updated: on a frame change, those a handler swapped or
    edited as well as those animated."""
    return _changes(depsgraph, "", edits=False).geometry
