"""Clash report runs in Blender: the frame reader and the thumbnails for `report.run`.

Used headless by `blender_scripts/clash_report.py` and by the panel's export. The run
itself (frame loop, records, statuses, reports) is `report.run.run_report`, which has
no Blender in it; this module only gives it the Blender steps: set a frame, read the
proxies and their object metadata, render thumbnails, report progress.
"""

from __future__ import annotations

import math
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import bpy
import numpy as np

from ..clash.evaluate import ObjectMetadata, decides_on_meshes
from ..clash.tests import ClashTest
from ..report.run import ClashRunError, FrameSample, ReportResult, run_report
from .handlers import geometry_updates
from .scene import ProxyReader, SceneReadError
from .thumbnails import render_thumbnails

# Background runs print a progress line at most this often (seconds).
PROGRESS_INTERVAL = 1.0


def _json_scalar_properties(obj) -> dict[str, Any]:
    """Custom properties of `obj` that selectors can compare (str, int, float, bool)."""
    properties = {}
    for key in obj.keys():
        value = obj[key]
        if isinstance(value, str | int | float | bool):
            properties[key] = value
    return properties


def object_collections() -> dict[str, tuple[str, ...]]:
    """The names of the collections each object is in, by the object's full name, in the
    order of `Object.users_collection` (the file's collections, then each scene's own).

    Read in one pass over the collections: `users_collection` lists every collection's
    objects each time it is asked, so asking it for every object of a scene is quadratic
    (15 s for 2,000 of 20,000 objects in 30 collections, where this pass takes 0.04 s).
    """
    found: dict[str, list[str]] = {}
    for collection in [*bpy.data.collections, *(scene.collection for scene in bpy.data.scenes)]:
        for obj in collection.objects:
            found.setdefault(obj.name_full, []).append(collection.name)
    return {name: tuple(names) for name, names in found.items()}


def proxy_metadata(
    name: str, owner, collections: Mapping[str, tuple[str, ...]], source=None
) -> ObjectMetadata:
    """Selector and ignore-rule data of one proxy.

    name: the proxy's name (the object's full name, with its library as Blender shows it,
        e.g. "Cube [lib.blend]"; for an instance "Owner/Source", or "Owner/Source[k]"
        where the instancer places that source more than once)
    owner: the original object owning the proxy (the instancer for an instance)
    collections: `object_collections()`
    source: the object the proxy's geometry comes from (`Proxies.sources`); for an
        instance of a collection's object, that object: its type, custom properties and
        collections (besides the instancer's) are the instance's, so that a selector
        taking a linked model's collection, or its beams by a property, takes the beams
        its instances place (the instancer is an empty)
    instance_source: for an instance, the collection it instances ("collection:NAME") or
    its instancer ("instancer:NAME"); for an object sharing its data with others (linked
    duplicates), that data ("data:NAME"); otherwise None.
    """
    is_instance = name != owner.name_full
    own = source if is_instance and source is not None else owner
    if is_instance and owner.instance_type == "COLLECTION" and owner.instance_collection:
        instance_source = "collection:" + owner.instance_collection.name
    elif is_instance:
        instance_source = "instancer:" + owner.name
    elif owner.data is not None and owner.data.users > 1:
        instance_source = "data:" + owner.data.name
    else:
        instance_source = None
    in_collections = collections.get(owner.name_full, ())
    if own is not owner:
        in_collections += tuple(
            name for name in collections.get(own.name_full, ()) if name not in in_collections
        )
    return ObjectMetadata(
        name=name,
        type=own.type,
        collections=in_collections,
        parent=owner.parent.name if owner.parent is not None else None,
        properties=_json_scalar_properties(own),
        instance_source=instance_source,
        is_instance=is_instance,
        placed_name=own.name_full if own is not owner else None,
    )


class _RunProgress:
    """A report run's progress: in a window the window's progress bar; in background a
    line on stderr at most once a PROGRESS_INTERVAL, and at the end of a stage."""

    def __init__(self, context):
        self.window_manager = context.window_manager
        self.in_window = not bpy.app.background and self.window_manager is not None
        self.last_print = 0.0
        self.bar_started = False

    def bar(self, done: int, total: int, restart: bool = False) -> None:
        """Show `done` of `total` on the window's progress bar, begun on the first call
        and again with `restart` (a new stage)."""
        if restart or not self.bar_started:
            self.window_manager.progress_begin(0, max(total, 1))
            self.bar_started = True
        self.window_manager.progress_update(done)

    def line(self, before: str, done: int, total: int, after: str = "", last=False) -> None:
        """Print "collide: BEFORE (DONE/TOTAL, P%)AFTER", unless a line was printed less
        than PROGRESS_INTERVAL ago and this is not the `last` of its stage."""
        if last or time.monotonic() - self.last_print >= PROGRESS_INTERVAL:
            self.last_print = time.monotonic()
            percent = 100.0 * done / max(total, 1)
            print(
                f"collide: {before} ({done}/{total}, {percent:.0f}%){after}",
                file=sys.stderr,
                flush=True,
            )

    def pictures(self, done: int, total: int) -> None:
        """progress(done, total) for `render_thumbnails`: a bar of its own, ended with
        the last picture; lines spaced from the pictures' start."""
        if self.in_window:
            self.bar(done, total, restart=done == 0)
            if done == total:
                self.end()
        elif done == 0 and total:
            self.last_print = time.monotonic()
        else:
            self.line("thumbnails", done, total, last=done == total)

    def end(self) -> None:
        if self.bar_started:
            self.window_manager.progress_end()
            self.bar_started = False


class _SceneFrames:
    """`read_frame` for report.run over a Blender scene: sets the (sub)frame, reads the
    proxies (and with `meshes` their triangles, prepared when a mesh test first needs
    them and kept while the geometry stays), and keeps each proxy's owner object for the
    thumbnails."""

    def __init__(self, context, scene, meshes: bool) -> None:
        self.context = context
        self.scene = scene
        self.meshes = meshes
        self.reader = ProxyReader()
        # Geometry the frame changes updated, gathered by `watch` (frame_change_post).
        self.updated_geometry: set[tuple[str, str]] = set()
        self.owners: dict[str, Any] = {}
        self._names: list[str] | None = None
        self._objects: list[ObjectMetadata] = []

    def __call__(self, time_of_sample: float) -> FrameSample:
        whole_frame = math.floor(time_of_sample)
        self.scene.frame_set(whole_frame, subframe=time_of_sample - whole_frame)
        # Who takes part is found again (visibility may be animated), and only the
        # geometry this frame change updated is read again: what modifiers, shape keys,
        # armatures or Geometry Nodes animate, and what a frame_change_pre handler
        # swapped or edited (stop motion), as `watch` saw the depsgraph say.
        self.reader.recheck_participants()
        self.reader.geometry_changed(self.updated_geometry)
        self.updated_geometry = set()
        try:
            proxies = self.reader.read(self.context.evaluated_depsgraph_get(), self.scene)
        except SceneReadError as error:
            raise ClashRunError(str(error)) from None
        if proxies.names != self._names:
            # Metadata is read again only when who takes part changes.
            self._names = list(proxies.names)
            collections = object_collections()
            self._objects = [
                proxy_metadata(name, owner, collections, source)
                for name, owner, source in zip(
                    self._names, proxies.objects, proxies.sources, strict=True
                )
            ]
            self.owners.update(zip(self._names, proxies.objects, strict=True))
        meshes = self.reader.frame_meshes(proxies) if self.meshes else None
        return FrameSample(proxies.batch, self._objects, meshes, proxies.left_out)

    def watch(self, scene, depsgraph=None) -> None:
        """frame_change_post handler for the run: note the geometry each frame change
        updated, read by the next `__call__`."""
        if depsgraph is not None and scene == self.scene:
            self.updated_geometry |= geometry_updates(depsgraph)


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
    suggest_fixes: bool = False,
    continuous: bool = False,
    lookahead: bool = False,
    chunk: bool = False,
) -> ReportResult:
    """`report.run.run_report` over the context's scene; the scene's frame is restored.

    context: bpy.context by default; its scene is scanned
    frames: (start, end, step), default the scene's frame range and step
    baseline, fail_on, json/html/csv/bcf paths, substeps, suggest_fixes, continuous,
      lookahead, chunk: as for run_report
    thumbnails: render a Workbench thumbnail per clash into the HTML and BCF reports
    returns: the ReportResult (report, failing count, fail_on, exit_status)
    Raises ClashRunError for input the run cannot use.
    """
    context = context or bpy.context
    scene = context.scene
    if frames is None:
        frames = (scene.frame_start, scene.frame_end, scene.frame_step)
    reporter = _RunProgress(context)

    def progress(done: int, total: int, frame: int, rows: int) -> None:
        if reporter.in_window:
            reporter.bar(done, total)
        else:
            # Pairs by frame, not clashes: a pair clashing at 50 frames counts 50.
            reporter.line(f"frame {frame}", done, total, f", {rows} clash-frames", done == total)

    def mesh_progress(done: int, total: int, frame: int, test: str) -> None:
        # In background only, and at most once an interval: a sample's mesh stage is
        # reported only where it is long (a large model), not on every sample.
        if not reporter.in_window:
            stage = f"frame {frame}, test {test!r}: deciding pairs on meshes"
            reporter.line(stage, done, total)

    original_frame, original_subframe = scene.frame_current, scene.frame_subframe
    read_frame = _SceneFrames(context, scene, any(decides_on_meshes(test) for test in tests))

    def pictures(clashes: Sequence[Mapping[str, Any]]) -> dict[str, bytes]:
        # Rendered from the frame the user was on, as if the scan had not moved it.
        scene.frame_set(original_frame, subframe=original_subframe)
        return render_thumbnails(context, scene, clashes, read_frame.owners, reporter.pictures)

    bpy.app.handlers.frame_change_post.append(read_frame.watch)
    try:
        return run_report(
            tests,
            frames,
            read_frame,
            baseline=baseline,
            fail_on=fail_on,
            json_path=json_path,
            html_path=html_path,
            csv_path=csv_path,
            bcf_path=bcf_path,
            render_thumbnails=pictures if thumbnails else None,
            substeps=substeps,
            suggest_fixes=suggest_fixes,
            continuous=continuous,
            lookahead=lookahead,
            chunk=chunk,
            progress=progress,
            mesh_progress=mesh_progress,
            blender=bpy.app.version_string,
            file=bpy.data.filepath or None,
            scope=scene.collide.scope,
            # Blender keeps it in float32 (0.001 reads 0.0010000000474974513): the
            # shortest decimal that float32 rounds to it, as Blender's field shows it.
            unit_scale=float(str(np.float32(scene.unit_settings.scale_length))),
        )
    finally:
        bpy.app.handlers.frame_change_post.remove(read_frame.watch)
        reporter.end()
        scene.frame_set(original_frame, subframe=original_subframe)


def report_thumbnails(clashes: Sequence[Mapping[str, Any]], context=None) -> dict[str, bytes]:
    """The thumbnails of a finished report's clashes (one merged from chunks run without
    them), as the run over the report's frames renders them: each open clash at its worst
    frame or toi, from the scene's own frame. The objects owning the clashes' proxies are
    found by reading the proxies at the clashes' frames, earliest first, until every one
    is known (the run knew them from its scan).

    clashes: report records (clash.records.ClashRecord)
    returns: clash id -> PNG bytes (resolved clashes get none)
    Raises ClashRunError when the scene cannot be read at a clash's frame.
    """
    context = context or bpy.context
    scene = context.scene
    original_frame, original_subframe = scene.frame_current, scene.frame_subframe
    read_frame = _SceneFrames(context, scene, meshes=False)
    open_clashes = [clash for clash in clashes if clash["status"] != "resolved"]
    wanted = {name for clash in open_clashes for name in (clash["a"], clash["b"])}
    try:
        for time in sorted({clash.get("toi", clash["worst_frame"]) for clash in open_clashes}):
            if wanted <= read_frame.owners.keys():
                break
            read_frame(time)
    finally:
        scene.frame_set(original_frame, subframe=original_subframe)
    reporter = _RunProgress(context)
    try:
        return render_thumbnails(context, scene, clashes, read_frame.owners, reporter.pictures)
    finally:
        reporter.end()
