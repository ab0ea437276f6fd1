"""Clash report runs: scan a frame range, run clash tests, write the reports.

Used headless by `blender_scripts/clash_report.py` and by the panel's export. The
geometry and the workflow logic live in the core (`core.clash`) and the report writers
(`report/`); this module only drives Blender: frames, proxies, object metadata and
Workbench thumbnails.
"""

from __future__ import annotations

import functools
import math
import os
import sys
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import bpy

from ..core import CoherentBounds
from ..core.clash import (
    FAIL_ON_CHOICES,
    ClashTest,
    ObjectMetadata,
    carry_over_status,
    clash_records,
    concat_hits,
    count_failing,
    effective_fail_on,
    evaluate_frame,
    object_table,
    prepare_test,
)
from ..report.bcf_report import (
    FIELD_OF_VIEW_DEGREES,
    camera_for_clash,
    object_ifc_guid,
    write_bcf_report,
)
from ..report.csv_report import write_csv_report
from ..report.html_report import write_html_report
from ..report.json_report import build_report, write_json_report
from .scene import ProxyReader, SceneReadError

# Background runs print a progress line at most this often (seconds).
PROGRESS_INTERVAL = 1.0
THUMBNAIL_SIZE = (320, 240)
THUMBNAIL_COLOR_A = (1.0, 0.1, 0.05, 1.0)
THUMBNAIL_COLOR_B = (0.1, 0.35, 1.0, 1.0)


class ClashRunError(Exception):
    """The run cannot start or finish (no objects, a test selecting nothing, a scene
    that cannot be read): a command line run exits with status 2 and this message."""


def _json_scalar_properties(obj) -> dict[str, Any]:
    """Custom properties of `obj` that selectors can compare (str, int, float, bool)."""
    properties = {}
    for key in obj.keys():
        value = obj[key]
        if isinstance(value, str | int | float | bool):
            properties[key] = value
    return properties


def proxy_metadata(name: str, owner) -> ObjectMetadata:
    """Selector and ignore-rule data of one proxy.

    name: the proxy's name (the object's, or "Owner/Source[k]" for an instance)
    owner: the original object owning the proxy (the instancer for an instance)
    instance_source: for an instance, the collection it instances ("collection:NAME") or
    its instancer ("instancer:NAME"); for an object sharing its data with others (linked
    duplicates), that data ("data:NAME"); otherwise None.
    """
    is_instance = name != owner.name
    if is_instance and owner.instance_type == "COLLECTION" and owner.instance_collection:
        source = "collection:" + owner.instance_collection.name
    elif is_instance:
        source = "instancer:" + owner.name
    elif owner.data is not None and owner.data.users > 1:
        source = "data:" + owner.data.name
    else:
        source = None
    return ObjectMetadata(
        name=name,
        type=owner.type,
        collections=tuple(collection.name for collection in owner.users_collection),
        parent=owner.parent.name if owner.parent is not None else None,
        properties=_json_scalar_properties(owner),
        instance_source=source,
    )


def _background_progress(done: int, total: int, frame: int, clashes: int) -> None:
    percent = 100.0 * done / max(total, 1)
    print(
        f"collide: frame {frame} ({done}/{total}, {percent:.0f}%), {clashes} clash rows",
        file=sys.stderr,
        flush=True,
    )


def _check_first_frame(scene, frame: int, prepared_tests: Sequence) -> None:
    """Refuse a run that cannot find anything: no proxies, or a test's set selecting no
    object (a typo in a selector would otherwise pass a CI gate silently). Later frames
    may hide objects without error."""
    if not len(prepared_tests[0].table.names):
        raise ClashRunError(f"frame {frame}: no objects take part (scope {scene.collide.scope!r})")
    for prepared in prepared_tests:
        for label, members in (("A", prepared.in_a), ("B", prepared.in_b)):
            if not members.any():
                raise ClashRunError(
                    f"frame {frame}: set {label} of test {prepared.test.name!r} matches no object"
                )


def scan_frames(
    context,
    scene,
    tests: Sequence[ClashTest],
    frames: tuple[int, int, int],
    progress: Callable[[int, int, int, int], None] | None = None,
    substeps: int = 1,
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Run `tests` on every frame of range(start, end + 1, step) and restore the frame.

    substeps: samples per scanned frame f, at times f + k * step / substeps (k < substeps;
        the last frame only at itself), so that a fast mover cannot pass through a thin
        object between two frames; a clash found at any sample is reported on frame f
    progress: called as (samples done, samples total, frame, hit rows so far)
    returns: (clash dicts of all tests, status "new"; owner object of each clash name)
    Raises ClashRunError when, at the first frame, no proxy takes part or a test's set
    selects nothing.
    """
    start, end, step = frames
    samples = [
        (frame, frame + offset * step / substeps)
        for frame in range(start, end + 1, step)
        for offset in range(substeps if frame + step <= end else 1)
    ]
    reader = ProxyReader()
    hits: dict[str, list] = {test.name: [] for test in tests}
    owners: dict[str, Any] = {}
    names: list[str] | None = None
    prepared_tests: list = []
    broad_phases: list[CoherentBounds] = []
    original_frame, original_subframe = scene.frame_current, scene.frame_subframe
    row_count = 0
    try:
        for done, (frame, time_of_sample) in enumerate(samples):
            whole_frame = math.floor(time_of_sample)
            scene.frame_set(whole_frame, subframe=time_of_sample - whole_frame)
            # Modifiers, shape keys, armatures, Geometry Nodes and visibility may differ
            # on this frame; plain meshes keep their cached geometry and fits.
            reader.invalidate_changing_geometry()
            try:
                proxies = reader.read(context.evaluated_depsgraph_get(), scene)
            except SceneReadError as error:
                raise ClashRunError(f"frame {frame}: {error}") from None
            if proxies.names != names:
                # Who takes part changed (first frame, or visibility animated).
                names = list(proxies.names)
                table = object_table(
                    [
                        proxy_metadata(proxy_name, owner)
                        for proxy_name, owner in zip(names, proxies.objects, strict=True)
                    ]
                )
                prepared_tests = [prepare_test(test, table) for test in tests]
                broad_phases = [CoherentBounds() for _ in tests]
                owners.update(zip(names, proxies.objects, strict=True))
            if done == 0:
                _check_first_frame(scene, frame, prepared_tests)
            for prepared, broad_phase in zip(prepared_tests, broad_phases, strict=True):
                frame_hits = evaluate_frame(prepared, proxies.batch, frame, broad_phase)
                hits[prepared.test.name].append(frame_hits)
                row_count += len(frame_hits)
            if progress is not None:
                progress(done + 1, len(samples), frame, row_count)
    finally:
        scene.frame_set(original_frame, subframe=original_subframe)
    clashes = []
    for test in tests:
        clashes += clash_records(test, concat_hits(hits[test.name]), step)
    return clashes, owners


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
    saved_colors = {obj: tuple(obj.color) for obj in shown}
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
                scene.frame_set(clash["worst_frame"])
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
        for obj, color in saved_colors.items():
            obj.hide_render = False
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


def run_clash_report(
    tests: Sequence[ClashTest],
    *,
    context=None,
    frames: tuple[int, int, int] | None = None,
    baseline: Mapping[str, Any] | None = None,
    fail_on: str | None = None,
    json_path: str | Path | None = None,
    html_path: str | Path | None = None,
    csv_path: str | Path | None = None,
    bcf_path: str | Path | None = None,
    thumbnails: bool = False,
    substeps: int = 1,
) -> tuple[dict[str, Any], int]:
    """Scan frames, run the clash tests, carry statuses over from `baseline`, write the
    requested reports atomically.

    context: bpy.context by default; its scene is scanned
    frames: (start, end, step), default the scene's frame range and step
    baseline: a previous report (json_report.read_json_report)
    fail_on: "new", "any" or "never"; default "new" with a baseline, "any" without
    thumbnails: render a Workbench thumbnail per clash into the HTML and BCF reports
    substeps: samples per scanned frame (see `scan_frames`)
    returns: (report dict, exit status: 1 if clashes that `fail_on` counts exist, else 0)
    Raises ClashRunError for input the run cannot use.
    """
    context = context or bpy.context
    scene = context.scene
    if not tests:
        raise ClashRunError("no clash tests given")
    if frames is None:
        frames = (scene.frame_start, scene.frame_end, scene.frame_step)
    start, end, step = frames
    if step < 1 or end < start:
        raise ClashRunError(f"bad frame range {start}-{end}:{step}")
    if substeps < 1:
        raise ClashRunError(f"substeps must be >= 1, got {substeps}")
    fail_on = effective_fail_on(fail_on, baseline is not None)
    if fail_on not in FAIL_ON_CHOICES:
        raise ClashRunError(f"fail_on must be one of {', '.join(FAIL_ON_CHOICES)}")
    window_manager = context.window_manager
    use_ui_progress = not bpy.app.background and window_manager is not None
    last_print = [0.0]

    def progress(done: int, total: int, frame: int, rows: int) -> None:
        if use_ui_progress:
            window_manager.progress_update(done)
        elif time.monotonic() - last_print[0] >= PROGRESS_INTERVAL or done == total:
            last_print[0] = time.monotonic()
            _background_progress(done, total, frame, rows)

    if use_ui_progress:
        window_manager.progress_begin(0, len(range(start, end + 1, step)) * substeps)
    try:
        clashes, owners = scan_frames(context, scene, tests, (start, end, step), progress, substeps)
    finally:
        if use_ui_progress:
            window_manager.progress_end()
    if baseline is not None:
        clashes = carry_over_status(
            clashes, baseline.get("clashes", []), [test.name for test in tests]
        )
    objects = {}
    for clash in clashes:
        for name in (clash["a"], clash["b"]):
            owner = owners.get(name)
            # An instance shares its owner's properties, not its owner's IfcGuid.
            own_properties = (
                _json_scalar_properties(owner) if owner is not None and owner.name == name else {}
            )
            objects[name] = {"ifc_guid": object_ifc_guid(name, own_properties)}
    report = build_report(
        tests=tests,
        clashes=clashes,
        frames=(start, end, step),
        blender=bpy.app.version_string,
        file=bpy.data.filepath or None,
        objects=objects,
    )
    pictures = render_thumbnails(context, scene, clashes, owners) if thumbnails else {}
    if json_path:
        write_json_report(report, json_path)
    if html_path:
        write_html_report(report, html_path, pictures)
    if csv_path:
        write_csv_report(report, csv_path)
    if bcf_path:
        write_bcf_report(report, bcf_path, pictures)
    return report, 1 if count_failing(report["clashes"], fail_on) else 0
