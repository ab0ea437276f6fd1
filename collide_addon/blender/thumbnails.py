"""Workbench thumbnails of clashes: each clash at its worst frame, only its two objects
shown (a red, b blue), seen by the camera its BCF viewpoint uses."""

from __future__ import annotations

import functools
import math
import os
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import bpy

from ..report.viewpoint import FIELD_OF_VIEW_DEGREES, camera_for_clash

THUMBNAIL_SIZE = (320, 240)
THUMBNAIL_COLOR_A = (1.0, 0.1, 0.05, 1.0)
THUMBNAIL_COLOR_B = (0.1, 0.35, 1.0, 1.0)

# Scene settings the thumbnails change, as attribute paths from the scene; restored after.
_THUMBNAIL_SETTINGS = (
    "camera",
    "render.engine",
    "render.resolution_x",
    "render.resolution_y",
    "render.resolution_percentage",
    "render.filepath",
    "render.image_settings.file_format",
    "display.shading.color_type",
    "display.shading.light",
    "display.shading.show_xray",
    "display.shading.xray_alpha",
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
    context, scene, clashes: Sequence[Mapping[str, Any]], owners: Mapping[str, Any]
) -> dict[str, bytes]:
    """A Workbench PNG per clash: at its worst frame, only its two objects shown, a red
    and b blue, seen by the camera its BCF viewpoint uses. Restores every setting,
    colour, visibility and the frame afterwards.

    returns: clash id -> PNG bytes (resolved clashes get none)
    """
    render, shading = scene.render, scene.display.shading
    saved_settings = {path: _get_path(scene, path) for path in _THUMBNAIL_SETTINGS}
    original_frame, original_subframe = scene.frame_current, scene.frame_subframe
    shown = [obj for obj in scene.objects if not obj.hide_render]
    # Every object whose visibility or colour changes, with both as they were: the
    # shown ones, and clashing objects hidden from render when their clash is drawn.
    saved_state = {obj: (obj.hide_render, tuple(obj.color)) for obj in shown}
    camera_data = bpy.data.cameras.new("collide thumbnail camera")
    camera = bpy.data.objects.new("collide thumbnail camera", camera_data)
    scene.collection.objects.link(camera)
    thumbnails: dict[str, bytes] = {}
    try:
        scene.camera = camera
        # BCF's field of view is the vertical one; the same camera frames both.
        camera_data.sensor_fit = "VERTICAL"
        camera_data.angle = math.radians(FIELD_OF_VIEW_DEGREES)
        render.engine = "BLENDER_WORKBENCH"
        render.resolution_x, render.resolution_y = THUMBNAIL_SIZE
        render.resolution_percentage = 100
        render.image_settings.file_format = "PNG"
        shading.color_type = "OBJECT"
        shading.light = "STUDIO"
        # See-through, so that an object buried inside the other still shows.
        shading.show_xray = True
        shading.xray_alpha = 0.6
        for obj in shown:
            obj.hide_render = True
        with tempfile.TemporaryDirectory(prefix="collide-thumbnails-") as folder:
            for clash in clashes:
                if clash["status"] == "resolved":
                    continue
                pair = [owners.get(clash["a"]), owners.get(clash["b"])]
                if None in pair:
                    continue
                _show_clash_frame(scene, clash)
                for obj in pair:
                    saved_state.setdefault(obj, (obj.hide_render, tuple(obj.color)))
                for obj, color in zip(pair, (THUMBNAIL_COLOR_A, THUMBNAIL_COLOR_B), strict=True):
                    obj.hide_render = False
                    obj.color = color
                position, direction, _ = camera_for_clash(clash["point"], clash["bounds"])
                camera.location = position
                camera.rotation_mode = "QUATERNION"
                camera.rotation_quaternion = _look_rotation(direction)
                path = os.path.join(folder, f"{clash['id']}.png")
                render.filepath = path
                bpy.ops.render.render(write_still=True)
                thumbnails[clash["id"]] = Path(path).read_bytes()
                for obj in pair:
                    obj.hide_render = True
    finally:
        for obj, (hidden, color) in saved_state.items():
            obj.hide_render = hidden
            obj.color = color
        for path, value in saved_settings.items():
            _set_path(scene, path, value)
        bpy.data.objects.remove(camera)
        bpy.data.cameras.remove(camera_data)
        scene.frame_set(original_frame, subframe=original_subframe)
    return thumbnails


def _look_rotation(direction):
    """Quaternion turning a Blender camera (looking down -Z, +Y up) to `direction`."""
    from mathutils import Vector

    return Vector(direction.tolist()).to_track_quat("-Z", "Y")
