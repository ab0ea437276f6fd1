"""Workbench thumbnails of clashes: each clash at its worst frame, only its two objects
shown (a red, b blue, see-through), seen from the direction its BCF viewpoint uses but
close up: aimed at the clash point, marked by a yellow ball, the smaller object filling
the picture."""

from __future__ import annotations

import contextlib
import ctypes
import functools
import math
import os
import sys
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import bmesh
import bpy
import numpy as np

from ..report.viewpoint import FIELD_OF_VIEW_DEGREES, camera_for_clash, focus_radius, reach

THUMBNAIL_SIZE = (320, 240)
THUMBNAIL_COLOR_A = (1.0, 0.1, 0.05, 1.0)
THUMBNAIL_COLOR_B = (0.1, 0.35, 1.0, 1.0)
# The ball marking the clash point, and its radius as a share of the framed radius.
MARKER_COLOR = (1.0, 0.85, 0.0, 1.0)
MARKER_SIZE = 0.06
# Blender's default world colour (linear): a mid grey once shown.
BACKGROUND_COLOR = (0.0509, 0.0509, 0.0509)

# Blender writes these into each PNG as text chunks (render date and time, memory, host,
# file path, ...) or burns them into the picture: all off, so that the same scene gives
# the same thumbnails, and reports holding them the same bytes.
_STAMP_SETTINGS = tuple(
    f"render.use_stamp{suffix}"
    for suffix in (
        "",
        "_date",
        "_time",
        "_render_time",
        "_frame",
        "_frame_range",
        "_memory",
        "_hostname",
        "_camera",
        "_lens",
        "_scene",
        "_marker",
        "_filename",
        "_sequencer_strip",
        "_note",
    )
)


def _get_path(owner, path: str):
    return functools.reduce(getattr, path.split("."), owner)


def _set_path(owner, path: str, value) -> None:
    parent, _, name = path.rpartition(".")
    setattr(_get_path(owner, parent) if parent else owner, name, value)


def _show_clash_frame(scene, clash: Mapping[str, Any]) -> None:
    """Set the frame a clash's picture shows: its worst frame, or, for a clash found
    between samples, its time of first contact."""
    if "toi" in clash:
        whole = math.floor(clash["toi"])
        scene.frame_set(whole, subframe=clash["toi"] - whole)
    else:
        scene.frame_set(clash["worst_frame"])


def render_thumbnails(
    context,
    scene,
    clashes: Sequence[Mapping[str, Any]],
    owners: Mapping[str, Any],
    progress=None,
) -> dict[str, bytes]:
    """A Workbench PNG per clash: at its worst frame, only its two objects shown, a red
    and b blue, the camera aimed at the clash point (`aim_camera`).

    Rendered in a scene of their own, holding only the clash's two objects (what they
    depend on, a parent or a modifier's object, is evaluated with them), a camera and a
    marker: `scene` keeps its frame, settings and the visibility of its objects, and its
    frame handlers run once, at the end: Blender writes the values animation gives at a
    picture's frame back to the objects, and the scene is evaluated at its own frame
    again to give them theirs. Hiding every other object of a 20,000-element building
    from render and setting its frame took seconds a picture. The two objects' colours,
    and their render visibility where they were hidden from render, are changed for
    their picture and restored after it.

    progress: when given, called as progress(done, total) with the pictures rendered
        (clashes that would give the same picture share one), 0 first, then after each
    returns: clash id -> PNG bytes (resolved clashes get none)
    """
    frame, subframe = scene.frame_current, scene.frame_subframe
    stage = bpy.data.scenes.new("collide thumbnails")
    layer = stage.view_layers[0]
    # One grey background whatever the scene's world (a scene without one rendered them
    # on black, where the blue and red parts hardly showed).
    stage.world = bpy.data.worlds.new("collide thumbnails")
    stage.world.color = BACKGROUND_COLOR
    # The scene's frame rate, for time-based drivers.
    stage.render.fps, stage.render.fps_base = scene.render.fps, scene.render.fps_base
    camera_data = bpy.data.cameras.new("collide thumbnail camera")
    camera = bpy.data.objects.new("collide thumbnail camera", camera_data)
    stage.collection.objects.link(camera)
    marker = _new_marker(stage)
    thumbnails: dict[str, bytes] = {}
    try:
        setup_camera(stage, camera)
        _set_render_settings(stage)
        # Clashes that would give the same picture (the same pair, frame, point and
        # bounds: one pair in several tests) share one render: on the FZK-Haus report
        # of three tests, 323 pictures for 617 clashes.
        pictures: dict[str, list[Mapping[str, Any]]] = {}
        for clash in clashes:
            if clash["status"] != "resolved" and None not in _owners_of(clash, owners):
                pictures.setdefault(_picture_key(clash), []).append(clash)
        if progress is not None:
            progress(0, len(pictures))
        # The stage is the context's while it renders, so that Blender's operator call
        # updates it rather than `scene` (whose objects it relinks).
        with (
            context.temp_override(scene=stage, view_layer=layer),
            tempfile.TemporaryDirectory(prefix="collide-thumbnails-") as folder,
            _renders_quiet(),
        ):
            for done, same in enumerate(pictures.values(), 1):
                path = os.path.join(folder, f"{same[0]['id']}.png")
                _render_pair(stage, camera, marker, same[0], _owners_of(same[0], owners), path)
                picture = Path(path).read_bytes()
                thumbnails.update((clash["id"], picture) for clash in same)
                if progress is not None:
                    progress(done, len(pictures))
    finally:
        bpy.data.objects.remove(camera)
        bpy.data.cameras.remove(camera_data)
        marker_data = marker.data
        bpy.data.objects.remove(marker)
        bpy.data.meshes.remove(marker_data)
        world = stage.world
        bpy.data.scenes.remove(stage)
        bpy.data.worlds.remove(world)
        scene.frame_set(frame, subframe=subframe)
    return thumbnails


def _owners_of(clash: Mapping[str, Any], owners: Mapping[str, Any]) -> list:
    """The objects of a clash's a and b in `owners` (None for one not there)."""
    return [owners.get(clash["a"]), owners.get(clash["b"])]


def _picture_key(clash: Mapping[str, Any]) -> str:
    """What a clash's picture depends on: its objects, in their order (a red, b blue),
    the time shown, its point, witnesses and bounds (the camera's aim and framing)."""
    shown = clash.get("toi", clash["worst_frame"])
    return repr(
        (clash["a"], clash["b"], shown, clash["point"], clash.get("witnesses"), clash["bounds"])
    )


@contextlib.contextmanager
def _renders_quiet():
    """Blender's own lines for each render on stdout (the picture's file and time, three
    a picture: 1,850 lines for the FZK-Haus's 617 clashes, around the run's own) held
    back in a background run, where they bury what a CI log is read for. A window's
    console keeps them, and so does Windows (no C library to flush them by name)."""
    if not bpy.app.background or sys.platform == "win32":
        yield
        return
    c_library = ctypes.CDLL(None)
    sys.stdout.flush()
    kept = os.dup(1)
    try:
        with open(os.devnull, "wb") as devnull:
            os.dup2(devnull.fileno(), 1)
            try:
                yield
            finally:
                # What Blender's C library still buffers goes where it was written to.
                c_library.fflush(None)
                os.dup2(kept, 1)
    finally:
        os.close(kept)


# A modifier's render setting and the viewport setting it takes for a picture (levels:
# Subdivision Surface and Multiresolution only).
_VIEWPORT_SETTINGS = {"show_render": "show_viewport", "render_levels": "levels"}


@contextlib.contextmanager
def _viewport_modifiers(objects):
    """The modifiers of `objects` with their viewport settings while inside (which are on,
    and the subdivision levels), their render settings restored after: the clashes were
    found on the viewport's evaluation, and a copy an Array modifier adds in the viewport
    only clashed and was missing from its picture. An object of a linked library
    (read-only) is left as it is."""
    changed = []
    try:
        for obj in objects:
            if obj.library is not None:
                continue
            for modifier in obj.modifiers:
                for render, viewport in _VIEWPORT_SETTINGS.items():
                    value = getattr(modifier, render, None)
                    if value is not None and value != getattr(modifier, viewport):
                        setattr(modifier, render, getattr(modifier, viewport))
                        changed.append((modifier, render, value))
        yield
    finally:
        for modifier, setting, value in changed:
            setattr(modifier, setting, value)


def _render_pair(stage, camera, marker, clash: Mapping[str, Any], pair: Sequence, path: str):
    """Render `clash`'s picture to `path` in the thumbnails' scene `stage`, its objects
    `pair` linked to it, coloured and shown for the picture, their modifiers as the
    viewport shows them (`_viewport_modifiers`), all restored after."""
    saved = [(obj, obj.hide_render, tuple(obj.color)) for obj in dict.fromkeys(pair)]
    linked = []
    try:
        for obj, _, _ in saved:
            stage.collection.objects.link(obj)
            linked.append(obj)
            if obj.hide_render:
                obj.hide_render = False
        for obj, color in zip(pair, (THUMBNAIL_COLOR_A, THUMBNAIL_COLOR_B), strict=True):
            obj.color = color
        _show_clash_frame(stage, clash)
        depsgraph = bpy.context.evaluated_depsgraph_get()
        radius = aim_camera(camera, clash, pair, depsgraph)
        marker.location = clash["point"]
        marker.scale = (MARKER_SIZE * radius,) * 3
        stage.render.filepath = path
        with _viewport_modifiers(obj for obj, _, _ in saved):
            bpy.ops.render.render(write_still=True)
    finally:
        for obj in linked:
            stage.collection.objects.unlink(obj)
        for obj, hidden, color in saved:
            if obj.hide_render != hidden:
                obj.hide_render = hidden
            obj.color = color


def _set_render_settings(scene) -> None:
    """Workbench to opaque 8-bit PNG, objects in their colours, no stamps (see
    _STAMP_SETTINGS), no dither, colours as they are (no view transform)."""
    scene.render.engine = "BLENDER_WORKBENCH"
    image = scene.render.image_settings
    image.file_format = "PNG"
    image.color_mode = "RGB"
    image.color_depth = "8"
    image.compression = 90
    # Blender's default dither adds noise to every pixel against banding, which flat
    # Workbench colours do not show, and which PNG cannot compress: the FZK-Haus's 617
    # thumbnails took 38-75 KB each instead of 1.4-12 KB, its HTML report 36.6 MB.
    scene.render.dither_intensity = 0.0
    scene.render.film_transparent = False
    # One pass smoothed by FXAA rather than 8 (Blender's default) or more samples: a
    # thumbnail of the FZK-Haus in 33 ms against 52-59 ms, the same picture to the eye.
    scene.display.render_aa = "FXAA"
    scene.view_settings.view_transform = "Standard"
    for path in _STAMP_SETTINGS:
        _set_path(scene, path, False)
    shading = scene.display.shading
    shading.color_type = "OBJECT"
    shading.light = "STUDIO"
    # See-through, so that an object buried inside the other still shows.
    shading.show_xray = True
    shading.xray_alpha = 0.6


def setup_camera(scene, camera) -> None:
    """Make `camera` the scene's, with the thumbnails' lens and picture size."""
    scene.camera = camera
    # BCF's field of view is the vertical one; the same lens serves both.
    camera.data.sensor_fit = "VERTICAL"
    camera.data.angle = math.radians(FIELD_OF_VIEW_DEGREES)
    scene.render.resolution_x, scene.render.resolution_y = THUMBNAIL_SIZE
    scene.render.resolution_percentage = 100


def object_bounds(obj, depsgraph) -> np.ndarray:
    """World bounds of an object's evaluated geometry: (2, 3) [lo, hi]."""
    evaluated = obj.evaluated_get(depsgraph)
    corners = np.array([tuple(corner) for corner in evaluated.bound_box], dtype=np.float64)
    matrix = np.array(evaluated.matrix_world, dtype=np.float64)
    world = corners @ matrix[:3, :3].T + matrix[:3, 3]
    return np.stack([world.min(axis=0), world.max(axis=0)])


def aim_camera(camera, clash: Mapping[str, Any], pair: Sequence, depsgraph) -> float:
    """Aim `camera` at the clash point, close enough that the clash fills the picture:
    the smaller object whole and both witness points (`report.viewpoint.focus_radius`),
    its clipping range covering both objects whole.

    clash: a clash record ("a", "b", "point", "bounds", optional "witnesses")
    pair: the owners of a and b, placed at the clash's frame
    returns: the radius framed around the clash point
    """
    point = np.asarray(clash["point"], dtype=np.float64)
    witnesses = clash.get("witnesses", [clash["point"], clash["point"]])
    # An instance's bounds are not its owner's: the record's bounds of both stand in.
    bounds = np.array(
        [
            object_bounds(obj, depsgraph) if name == obj.name_full else clash["bounds"]
            for name, obj in zip((clash["a"], clash["b"]), pair, strict=True)
        ]
    )
    radius = focus_radius(point, witnesses, bounds)
    position, direction, _ = camera_for_clash(point, clash["bounds"], radius=radius)
    camera.location = position
    camera.rotation_mode = "QUATERNION"
    camera.rotation_quaternion = _look_rotation(direction)
    distance = float(np.linalg.norm(position - point))
    farthest = max(reach(point, clash["bounds"]), *(reach(point, box) for box in bounds))
    camera.data.clip_start = max(distance - farthest, 1e-3 * distance)
    camera.data.clip_end = distance + farthest
    return radius


def _new_marker(scene):
    """A ball of radius 1 in MARKER_COLOR, linked to `scene`, to mark clash points."""
    builder = bmesh.new()
    bmesh.ops.create_icosphere(builder, subdivisions=2, radius=1.0)
    data = bpy.data.meshes.new("collide thumbnail marker")
    builder.to_mesh(data)
    builder.free()
    marker = bpy.data.objects.new("collide thumbnail marker", data)
    marker.color = MARKER_COLOR
    # Drawn over both objects, so that neither hides or tints it.
    marker.show_in_front = True
    scene.collection.objects.link(marker)
    return marker


def _look_rotation(direction):
    """Quaternion turning a Blender camera (looking down -Z, +Y up) to `direction`."""
    from mathutils import Vector

    return Vector(direction.tolist()).to_track_quat("-Z", "Y")
