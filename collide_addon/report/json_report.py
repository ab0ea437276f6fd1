"""The JSON clash report: the source of truth that the HTML, CSV and BCF reports view.

Document (schema: `schema/collide-report-1.schema.json`):

    {"format": "collide-report", "version": 1,
     "blender": "5.0.1" or null,          Blender version that ran the scan
     "file": "/path/scene.blend" or null, the scanned file
     "frames": [start, end, step],        the scanned range, inclusive
     "substeps": N,                       samples per frame, only when above 1
     "lookahead": true,                   only in a chunk of a longer scan, which also
                                          sampled the motion to the frame after its
                                          last (report.run.scan_frames; report.merge)
     "tests": [test, ...],                clash tests in their tests-file form
     "objects": {name: {"ifc_guid": str}}, per clashing object (see bcf_report)
     "clashes": [clash, ...],             see collide_addon.clash.records.ClashRecord
     "open_meshes": [name, ...],          objects with open meshes among mesh tests'
                                          candidates: nothing was looked for inside them
     "left_out": {name: reason},          only when some: objects taking part whose
                                          geometry could not be used (a NaN vertex), not
                                          checked
     "unswept": [[test, a, b], ...],      only when some: moving pairs of continuous
                                          tests on meshes left to the samples on some
                                          frames (their sweep on meshes undecided), no
                                          clash of that test (`unswept_warning`)
     "unit_scale": float,                 metres in one scene unit (Blender's Unit
                                          Scale), only when not 1: every length of the
                                          report (distances, points, bounds, reach,
                                          fixes, tolerances) is in scene units
     "reach": float,                      the largest |coordinate| of the objects
                                          scanned: contacts are decided to 1e-6 of it
                                          (the contact epsilon; `reach_warning`)
     "warnings": [str, ...],              what the run could not check, one sentence each
     "summary": {...},                    see `summarize`
     "groups": {...}}                     open clashes grouped, see `group_open_clashes`

The report carries no time stamp so that two runs over the same scene give the same
bytes, which keeps reports diffable and baselines reviewable.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from ..clash.atomic import write_text_atomic
from ..clash.evaluate import RELATIONS
from ..clash.groups import group_by_cluster, group_by_object, group_by_test
from ..clash.json_input import JsonInputError, read_json_file
from ..clash.records import STATUSES
from ..clash.tests import TEST_TYPES, ClashTest, clash_test_to_dict
from .common import far_resolution, listed, names_by_reason

# Clash points closer than this (scene units, metres by default) share a cluster.
DEFAULT_CLUSTER_RADIUS = 1.0
REPORT_FORMAT = "collide-report"
REPORT_VERSION = 1
SCHEMA_PATH = Path(__file__).resolve().parent / "schema" / "collide-report-1.schema.json"


class ReportError(ValueError):
    """A report file cannot be used; the message names the file and the reason."""


def summarize(clashes: Sequence[Mapping[str, Any]], tests: Sequence[ClashTest]) -> dict[str, Any]:
    """Counts over the clashes:

    open: clashes not resolved; resolved: the others
    by_status: {status: count} for every status, zeros included
    by_test: {test name: open clashes}, every test included
    worst: {"id", "distance"} of the open clash with the smallest distance, or None
    """
    open_clashes = [record for record in clashes if record["status"] != "resolved"]
    by_status = dict.fromkeys(STATUSES, 0)
    for record in clashes:
        by_status[record["status"]] += 1
    by_test = {test.name: 0 for test in tests}
    for record in open_clashes:
        by_test[record["test"]] = by_test.get(record["test"], 0) + 1
    worst = min(open_clashes, key=lambda record: (record["distance"], record["id"]), default=None)
    return {
        "open": len(open_clashes),
        "resolved": len(clashes) - len(open_clashes),
        "by_status": by_status,
        "by_test": by_test,
        "worst": None if worst is None else {"id": worst["id"], "distance": worst["distance"]},
    }


def group_open_clashes(
    clashes: Sequence[Mapping[str, Any]], cluster_radius: float = DEFAULT_CLUSTER_RADIUS
) -> dict[str, Any]:
    """The open (not resolved) clashes grouped three ways, by their ids:

    by_object: {object name: [id, ...]}, by_test: {test name: [id, ...]},
    clusters: [{"center": [x, y, z], "clashes": [id, ...]}, ...] of clash points closer
    than `cluster_radius` (see collide_addon.clash.groups.group_by_cluster), largest first
    """
    open_clashes = [record for record in clashes if record["status"] != "resolved"]
    return {
        "cluster_radius": cluster_radius,
        "by_object": group_by_object(open_clashes),
        "by_test": group_by_test(open_clashes),
        "clusters": group_by_cluster(open_clashes, cluster_radius),
    }


def _encodable(text: str | None) -> str | None:
    """`text` with any lone surrogate (how Python keeps the bytes of a file name that is
    not UTF-8) as U+FFFD: a report holding one could not be written as UTF-8."""
    if text is None:
        return None
    try:  # the bytes Python could not decode back as bytes, then each as one U+FFFD
        raw = text.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:  # other lone surrogates
        raw = text.encode("utf-8", "surrogatepass")
    return raw.decode("utf-8", "replace")


def build_report(
    *,
    tests: Sequence[ClashTest],
    clashes: Sequence[Mapping[str, Any]],
    frames: tuple[int, int, int],
    blender: str | None = None,
    file: str | None = None,
    objects: Mapping[str, Mapping[str, Any]] | None = None,
    cluster_radius: float = DEFAULT_CLUSTER_RADIUS,
    open_meshes: Sequence[str] = (),
    left_out: Mapping[str, str] | None = None,
    unswept: Sequence[Sequence[str]] = (),
    reach: float = 0.0,
    substeps: int = 1,
    lookahead: bool = False,
    unit_scale: float = 1.0,
) -> dict[str, Any]:
    """The report document for a finished run (see the module docstring).

    frames: (start, end, step) of the scan
    objects: per-object data of the clashing objects, e.g. {"Wall": {"ifc_guid": ...}}
    cluster_radius: for the spatial clusters of `groups`
    file: the scanned file's path; bytes of it that are not UTF-8 become U+FFFD
    open_meshes: names of the objects with open or non-manifold meshes among the mesh
        tests' candidate pairs (the report warns about them, `open_mesh_warning`)
    left_out: {name: reason} of the objects taking part whose geometry could not be used
        (the report warns about them, `left_out_warning`)
    unswept: [test, a, b] of the pairs of continuous tests on meshes that moved between
        two samples while their proxies were within the rule and whose sweep on meshes
        could not decide (`core.mesh_sweep`), so that the motion was not swept for them;
        those of a clash in `clashes` of that test are dropped (the report warns about
        the others, `unswept_warning`)
    reach: the largest |coordinate| of the objects scanned (`reach_warning`)
    substeps, lookahead: how the frames were sampled (report.run.run_report); written
        only when not the default (1, False)
    unit_scale: metres in one scene unit (Blender's Unit Scale); written only when not 1
    """
    start, end, step = (int(value) for value in frames)
    reported = {(record["test"], record["a"], record["b"]) for record in clashes}
    unswept = sorted({tuple(entry) for entry in unswept} - reported)
    sampling = {"substeps": int(substeps)} if substeps != 1 else {}
    if lookahead:
        sampling["lookahead"] = True
    return {
        "format": REPORT_FORMAT,
        "version": REPORT_VERSION,
        "blender": blender,
        "file": _encodable(file),
        "frames": [start, end, step],
        **sampling,
        "tests": [clash_test_to_dict(test) for test in tests],
        "objects": {name: dict(data) for name, data in sorted((objects or {}).items())},
        "clashes": [dict(record) for record in clashes],
        "open_meshes": sorted(open_meshes),
        **({"left_out": dict(sorted(left_out.items()))} if left_out else {}),
        **({"unswept": [list(entry) for entry in unswept]} if unswept else {}),
        **({"unit_scale": float(unit_scale)} if unit_scale != 1.0 else {}),
        "reach": float(reach),
        "warnings": left_out_warning(left_out or {})
        + open_mesh_warning(open_meshes)
        + unswept_warning(unswept)
        + reach_warning(reach, unit_scale),
        "summary": summarize(clashes, tests),
        "groups": group_open_clashes(clashes, cluster_radius),
    }


# Objects named in a warning, at most; the rest are counted.
_WARNING_NAMES = 20


def open_mesh_warning(names: Sequence[str]) -> list[str]:
    """The report's warnings for objects with open or non-manifold meshes in mesh tests:
    nothing inside them can be found by containment. [] or [one sentence]."""
    if not names:
        return []
    return [
        f"{len(names)} object(s) in mesh tests have open or non-manifold meshes, so whether "
        f"another object lies wholly inside them was not tested (only their surfaces): "
        f"{listed(sorted(names), _WARNING_NAMES)}"
    ]


def unswept_warning(unswept: Sequence[Sequence[str]]) -> list[str]:
    """The report's warning for moving pairs of continuous tests on meshes that were
    not swept between some samples (`unswept`: [test, a, b] each) and are no clash of
    their test: a pass between those samples may be missed. [] or [one sentence]."""
    if not unswept:
        return []
    pairs = [f"{a} / {b} ({test})" for test, a, b in unswept]
    return [
        f"{len(pairs)} moving pair(s) of continuous tests on meshes were not swept between "
        "some samples: their proxies were within the test's distance at a sample and the "
        "sweep on their triangles could not decide (a part sliding along another within a "
        "hair of the distance, or an object without triangles), so the triangles decided "
        "at the samples alone; a pass between those samples may be missed, and more "
        f"--substeps sample the motion more finely: {listed(pairs, _WARNING_NAMES)}"
    ]


def left_out_warning(left_out: Mapping[str, str]) -> list[str]:
    """The report's warnings for objects left out of the check, one sentence per reason
    (`left_out`: {name: reason}): their clashes, if any, are not in the report."""
    return [
        f"{len(names)} object(s) were left out of the check, their geometry unusable "
        f"({reason}): their clashes are not in this report: {listed(names, _WARNING_NAMES)}"
        for reason, names in names_by_reason(dict(sorted(left_out.items()))).items()
    ]


def reach_warning(reach: float, unit_scale: float = 1.0) -> list[str]:
    """The report's warning for objects far from the origin, whose contacts Blender's
    single-precision coordinates decide only to the contact epsilon there (1e-6 of the
    coordinate, `common.far_resolution`): [] below `common.FAR_REACH` metres, or [one
    sentence]. reach: in scene units of `unit_scale` metres."""
    decided = far_resolution(reach, unit_scale)
    if decided is None:
        return []
    return [
        f"Objects lie up to {reach * unit_scale:,.0f} m from the origin, where Blender's "
        f"single-precision "
        f"coordinates decide contacts only to {decided} (the contact epsilon, a millionth "
        f"of the coordinate): penetrations and gaps smaller than that count as touching. "
        f"Move the model near the origin (an IFC import's false origin) to decide contacts "
        f"to the micrometre."
    ]


def report_to_json(report: Mapping[str, Any]) -> str:
    """The report's file text: indented UTF-8 JSON, keys in document order."""
    return json.dumps(report, indent=2, ensure_ascii=False, allow_nan=False) + "\n"


def write_json_report(report: Mapping[str, Any], path: str | Path) -> None:
    """Write the report atomically."""
    write_text_atomic(path, report_to_json(report))


def _is_integer(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(value: Any) -> bool:
    # json.loads accepts NaN and Infinity, which the report writer refuses to write.
    if not (_is_integer(value) or isinstance(value, float)):
        return False
    try:
        return math.isfinite(value)
    except OverflowError:  # an int too large for a float
        return False


def _is_list_of(value: Any, length: int | None, item: Callable[[Any], bool]) -> bool:
    return (
        isinstance(value, list)
        and (length is None or len(value) == length)
        and all(item(entry) for entry in value)
    )


def _is_vector3(value: Any) -> bool:
    return _is_list_of(value, 3, _is_number)


def _is_interval(value: Any) -> bool:
    return _is_list_of(value, 2, _is_integer)


def _is_fix(value: Any) -> bool:
    """A clash's "fix" (`clash.fixes`): a move of a named object, or none with a reason."""
    if not isinstance(value, dict):
        return False
    if set(value) == {"none"}:
        return isinstance(value["none"], str)
    return (
        set(value) == {"object", "translation"}
        and isinstance(value["object"], str)
        and _is_vector3(value["translation"])
    )


_CLASH_ID = re.compile(r"[0-9a-f]{16}")
_SHAPE_KINDS = ("box", "sphere", "capsule")
# Every field of a clash (ClashRecord, the schema's "$defs/clash") and what it must hold:
# a baseline's clashes are copied into the new report (resolved ones whole), so a field
# the schema would reject, or markup where a number belongs, must stop at reading.
CLASH_FIELDS: dict[str, tuple[str, Callable[[Any], bool]]] = {
    "id": ("16 hex digits", lambda value: isinstance(value, str) and _CLASH_ID.fullmatch(value)),
    "test": ("a string", lambda value: isinstance(value, str)),
    "type": (f"one of {', '.join(TEST_TYPES)}", lambda value: value in TEST_TYPES),
    "a": ("a string", lambda value: isinstance(value, str)),
    "b": ("a string", lambda value: isinstance(value, str)),
    "kinds": (
        f"two of {', '.join(_SHAPE_KINDS)}",
        lambda value: _is_list_of(value, 2, lambda kind: kind in _SHAPE_KINDS),
    ),
    "distance": ("a finite number", _is_number),
    "point": ("[x, y, z] numbers", _is_vector3),
    "bounds": ("two [x, y, z] of numbers", lambda value: _is_list_of(value, 2, _is_vector3)),
    "frames": (
        "a non-empty list of [first, last] integers",
        lambda value: bool(value) and _is_list_of(value, None, _is_interval),
    ),
    "worst_frame": ("an integer", _is_integer),
    "status": (f"one of {', '.join(STATUSES)}", lambda value: value in STATUSES),
}
# Fields reports have had since mesh mode: a baseline written before may lack them;
# "toi" only clashes found between samples have (continuous detection).
OPTIONAL_CLASH_FIELDS: dict[str, tuple[str, Callable[[Any], bool]]] = {
    "witnesses": (
        "two [x, y, z] of numbers",
        lambda value: _is_list_of(value, 2, _is_vector3),
    ),
    "geometry": ("mesh or proxy", lambda value: value in ("mesh", "proxy")),
    "relation": (f"one of {', '.join(RELATIONS)}", lambda value: value in RELATIONS),
    "fix": (
        '{"object": name, "translation": [x, y, z]} or {"none": reason}',
        _is_fix,
    ),
    "toi": ("a finite number", _is_number),
}


def clash_error(record: Any) -> str | None:
    """Why `record` is not a clash of a version 1 report (a missing, mistyped or unknown
    field, named), or None if it is one."""
    if not isinstance(record, dict):
        return "is not an object"
    for field, (expected, is_valid) in (CLASH_FIELDS | OPTIONAL_CLASH_FIELDS).items():
        if field not in record:
            if field in OPTIONAL_CLASH_FIELDS:
                continue
            return f"lacks field {field!r}"
        if not is_valid(record[field]):
            return f"field {field!r} must be {expected}, got {record[field]!r:.80}"
    unknown = sorted(set(record) - set(CLASH_FIELDS) - set(OPTIONAL_CLASH_FIELDS))
    if unknown:
        return f"has unknown field {unknown[0]!r}"
    # What a run writes, and what statuses and merges rely on (a reversed interval was
    # carried into the next report as it was).
    if any(first > last for first, last in record["frames"]):
        frames = record["frames"]
        return f"field 'frames' must hold [first, last] with first <= last, got {frames!r:.80}"
    if not any(first <= record["worst_frame"] <= last for first, last in record["frames"]):
        return f"field 'worst_frame' {record['worst_frame']} lies outside its frames"
    return None


def read_json_report(path: str | Path) -> dict[str, Any]:
    """A report written by `write_json_report` (e.g. a baseline). Checks what a re-run
    relies on: format, version, and every field of every clash (see `clash_error`), so
    that clashes carried into a new report keep it valid and safe to render.
    Raises ReportError naming the file and, for a clash, its index and field otherwise."""
    path = Path(path)
    try:
        report = read_json_file(path)
    except OSError as error:
        raise ReportError(f"{path}: cannot read report: {error}") from None
    except JsonInputError as error:
        raise ReportError(f"{path}: {error}") from None
    if not isinstance(report, dict) or report.get("format") != REPORT_FORMAT:
        raise ReportError(f"{path}: not a collide report (format is not {REPORT_FORMAT!r})")
    if report.get("version") != REPORT_VERSION:
        raise ReportError(
            f"{path}: report version {report.get('version')!r} is not supported "
            f"(this reads version {REPORT_VERSION})"
        )
    clashes = report.get("clashes")
    if not isinstance(clashes, list):
        raise ReportError(f"{path}: 'clashes' must be a list")
    first_index_of_id: dict[str, int] = {}
    for index, record in enumerate(clashes):
        error = clash_error(record)
        if error is not None:
            raise ReportError(f"{path}: clashes[{index}] {error}")
        # Statuses carry over by id, and a BCF topic's guid is the id: a repeated id
        # would give two records of one clash in the next report and an invalid BCF.
        first = first_index_of_id.setdefault(record["id"], index)
        if first != index:
            raise ReportError(
                f"{path}: clashes[{index}] repeats the id {record['id']!r} of clashes[{first}]"
            )
    return report
