"""Merging chunk reports: JSON reports of consecutive frame ranges of one scene, made by
separate runs (a farm's chunks), into the one report a single run over all their frames
gives.

    parts (frame order any) -> checked to fit together            `check_parts`
    parts' clashes -> one record per clash over all frames        `merge_clashes`
    + baseline statuses, objects, summary, groups -> the report   `merge_reports`
      (groups with the default cluster radius, as a run's)

A part is an ordinary report (`json_report.read_json_report`). Its unresolved clashes on
its own frames are what its run found; its resolved ones, and those carried over from a
baseline unchecked (none of their frames among the part's), came from a baseline and are
left to the merge's own baseline. A scan with sub-steps or continuous tests looks between
its frames, so each part but the last must have been run with lookahead
(`report.run.scan_frames`): it also sampled its last frame's sub-steps and the motion to
the next part's first frame, which only it can see. A part run as a chunk (with
lookahead, or the scan's last with `--chunk`) lists the sets that selected no object at
its frames ("unmatched_sets") rather than failing, as their objects may take part in other
parts; the merge refuses a set that every part lists, as one run over all the frames would.

Numpy and the standard library only: the farm (collide_farm) and any other scheduler
call this outside Blender.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ..clash.records import (
    ClashRecord,
    carry_over_status,
    frames_meet_scan,
    merge_frame_intervals,
)
from ..clash.tests import clash_test_from_dict
from .bcf_report import object_ifc_guid
from .json_report import build_report
from .run import (
    UnmatchedSet,
    last_scanned_frame,
    other_model_warning,
    unchecked_warnings,
    unmatched_set_message,
)


class MergeError(ValueError):
    """The parts do not fit together; the message names the parts and the reason."""


def _is_frame_range(value: Any) -> bool:
    return (
        isinstance(value, list)
        and len(value) == 3
        and all(isinstance(item, int) and not isinstance(item, bool) for item in value)
        and value[0] <= value[1]
        and value[2] >= 1
    )


def _is_unmatched_sets(value: Any) -> bool:
    return isinstance(value, list) and all(
        isinstance(entry, dict)
        and set(entry) == {"test", "set"}
        and isinstance(entry["test"], str)
        and entry["set"] in ("A", "B")
        for entry in value
    )


def _is_objects(value: Any) -> bool:
    return isinstance(value, dict) and all(
        isinstance(name, str) and isinstance(entry, dict) and isinstance(entry.get("ifc_guid"), str)
        for name, entry in value.items()
    )


# What a merge reads of a part beyond its clashes (json_report.read_json_report checks
# those), and what it must hold.
PART_FIELDS = {
    "frames": ("[start, end, step] integers, start <= end, step >= 1", _is_frame_range),
    "tests": ("a list", lambda value: isinstance(value, list)),
    "file": ("a string or null", lambda value: value is None or isinstance(value, str)),
    "blender": ("a string or null", lambda value: value is None or isinstance(value, str)),
    "objects": ('{name: {"ifc_guid": string}}', _is_objects),
    "substeps": (
        "an integer >= 2 when present",
        lambda value: isinstance(value, int) and not isinstance(value, bool) and value >= 2,
    ),
    "lookahead": ("true when present", lambda value: value is True),
    "unmatched_sets": ('[{"test": string, "set": "A" or "B"}, ...]', _is_unmatched_sets),
}
# Fields a part may lack: a part without them was sampled once a frame, without lookahead,
# and each test's sets selected objects at its frames.
OPTIONAL_PART_FIELDS = ("substeps", "lookahead", "unmatched_sets")


def _check_fields(parts: Sequence[Mapping[str, Any]], names: Sequence[str]) -> None:
    for part, name in zip(parts, names, strict=True):
        for field, (expected, is_valid) in PART_FIELDS.items():
            if field not in part and field in OPTIONAL_PART_FIELDS:
                continue
            if field not in part or not is_valid(part[field]):
                raise MergeError(f"{name}: field {field!r} must be {expected}")


def _check_same(parts: Sequence[Mapping[str, Any]], names: Sequence[str], key: str) -> None:
    for part, name in zip(parts[1:], names[1:], strict=True):
        if part[key] != parts[0][key]:
            raise MergeError(f"{name} and {names[0]} have different {key!r}: cannot merge them")


def check_parts(
    parts: Sequence[Mapping[str, Any]], names: Sequence[str]
) -> tuple[list[int], tuple[int, int, int]]:
    """Check that the parts are chunks of one scan: the fields a merge reads are well
    formed (PART_FIELDS); same tests, file, Blender version, frame step, sub-steps and
    unit scale; frame ranges that follow each other without overlap or gap; with sub-steps or
    continuous tests, a lookahead in every part but the last (`_check_lookahead`).

    names: one label per part for messages (e.g. its path)
    returns: (part indices in frame order, (start, end, step) of the union)
    Raises MergeError naming the parts and the reason.
    """
    if not parts:
        raise MergeError("no parts to merge")
    _check_fields(parts, names)
    for key in ("tests", "file", "blender"):
        _check_same(parts, names, key)
    for what, values in (
        ("frame steps", {part["frames"][2] for part in parts}),
        ("sub-steps", {part.get("substeps", 1) for part in parts}),
        ("unit scales", {part.get("unit_scale", 1.0) for part in parts}),
    ):
        if len(values) > 1:
            raise MergeError(f"parts have different {what} {sorted(values)}: cannot merge them")
    step = parts[0]["frames"][2]
    order = sorted(range(len(parts)), key=lambda index: parts[index]["frames"][0])
    for before, after in itertools.pairwise(order):
        expected = last_scanned_frame(parts[before]["frames"]) + step
        start = parts[after]["frames"][0]
        if start < expected:
            raise MergeError(f"frames of {names[after]} overlap those of {names[before]}")
        if start > expected:
            raise MergeError(
                f"frames {expected}-{start - 1} are in no part (between {names[before]} "
                f"and {names[after]})"
            )
    _check_lookahead([parts[index] for index in order], [names[index] for index in order])
    return order, (parts[order[0]]["frames"][0], parts[order[-1]]["frames"][1], step)


def samples_between_frames(part: Mapping[str, Any]) -> bool:
    """Whether the scan of `part` looks between its frames (sub-steps, or a continuous
    test), so that a chunk's end cuts what one run would see (`report.run.scan_frames`)."""
    return part.get("substeps", 1) > 1 or any(
        clash_test_from_dict(test).continuous for test in part["tests"]
    )


def _check_lookahead(ordered: Sequence[Mapping[str, Any]], names: Sequence[str]) -> None:
    """With sub-steps or continuous tests, every part but the last must have looked ahead
    to the next part's first frame (its last frame's sub-steps and the motion to the
    next part are nowhere else), and the last must not have (it would have looked past
    the merged frames). Parts in frame order."""
    if not samples_between_frames(ordered[0]):
        return
    for part, name in zip(ordered[:-1], names[:-1], strict=True):
        if not part.get("lookahead"):
            raise MergeError(
                f"{name} lacks the lookahead that sub-steps and continuous tests need to "
                "reach the next part: run it with clash_report.py --lookahead"
            )
    if ordered[-1].get("lookahead"):
        raise MergeError(
            f"{names[-1]} looked ahead past its frames, yet no part follows it: the part "
            "after it is missing, or, if it is the scan's last, run it without --lookahead"
        )


def _interval_frames(intervals: np.ndarray, step: int) -> tuple[np.ndarray, np.ndarray]:
    """Every scanned frame of each interval.

    intervals: (k, 2) int [first, last], frames `step` apart inside each
    returns: frames (m,) int64; owner (m,) int64, the interval each frame comes from
    """
    counts = (intervals[:, 1] - intervals[:, 0]) // step + 1
    owner = np.repeat(np.arange(len(intervals)), counts)
    position = np.arange(len(owner)) - np.repeat(np.cumsum(counts) - counts, counts)
    return intervals[owner, 0] + position * step, owner


def _worst_key(clash: Mapping[str, Any]) -> tuple[float, float]:
    """What picks a clash's worst record: smallest distance, then earliest frame; for a
    clash found between samples, the earliest first contact (frame, then toi)."""
    if "toi" in clash:
        return (clash["worst_frame"], clash["toi"])
    return (clash["distance"], clash["worst_frame"])


def merge_clashes(
    parts: Sequence[Mapping[str, Any]], test_names: Sequence[str], step: int
) -> list[ClashRecord]:
    """One record per clash id found in any part (status "new"), as one run over all the
    parts' frames makes it (`clash.records.clash_records`): a clash found at a sample in
    any part is a sampled clash, its worst frame a sampled one, while its records found
    only between samples (with "toi") in other parts give their frames; frame intervals
    joined where they meet across parts (frames `step` apart); distance, point, bounds
    and kinds of the worst frame (smallest distance, the earliest on a tie; between
    samples only: the earliest first contact); sorted per test (in `test_names` order)
    by distance then id."""
    found = [
        clash
        for part in parts
        for clash in part["clashes"]
        if clash["status"] != "resolved" and frames_meet_scan(clash["frames"], part["frames"])
    ]
    if not found:
        return []
    sampled = {clash["id"] for clash in found if "toi" not in clash}
    worst: dict[str, Mapping[str, Any]] = {}
    for clash in found:
        if "toi" in clash and clash["id"] in sampled:
            continue
        best = worst.get(clash["id"])
        if best is None or _worst_key(clash) < _worst_key(best):
            worst[clash["id"]] = clash
    ids = list(worst)
    index_of_id = {clash_id: index for index, clash_id in enumerate(ids)}
    intervals = np.array([interval for clash in found for interval in clash["frames"]])
    interval_clash = np.array(
        [index_of_id[clash["id"]] for clash in found for _ in clash["frames"]], dtype=np.int64
    )
    frames, owner = _interval_frames(intervals.reshape(-1, 2).astype(np.int64), step)
    joined, joined_clash = merge_frame_intervals(frames, step, interval_clash[owner])
    intervals_of_clash: list[list[list[int]]] = [[] for _ in ids]
    for clash_index, interval in zip(joined_clash.tolist(), joined.tolist(), strict=True):
        intervals_of_clash[clash_index].append(interval)
    test_order = {name: index for index, name in enumerate(test_names)}
    records: list[ClashRecord] = [
        {**worst[clash_id], "frames": intervals_of_clash[index], "status": "new"}
        for index, clash_id in enumerate(ids)
    ]
    records.sort(key=lambda record: (test_order[record["test"]], record["distance"], record["id"]))
    return records


def _objects(
    parts: Sequence[Mapping[str, Any]], clashes: Sequence[Mapping[str, Any]]
) -> dict[str, dict[str, Any]]:
    """The report's "objects" for the clashes' objects: a part's entry (later frames win,
    as in a run) or, for an object no part lists, the guid derived from its name."""
    known: dict[str, dict[str, Any]] = {}
    for part in parts:
        known.update(part["objects"])
    names = {name for clash in clashes for name in (clash["a"], clash["b"])}
    return {name: known.get(name) or {"ifc_guid": object_ifc_guid(name, {})} for name in names}


def check_sets_matched(parts: Sequence[Mapping[str, Any]], frames: tuple[int, int, int]) -> None:
    """Refuse parts in all of which a test's set selected no object ("unmatched_sets", only
    parts run as chunks have it): one run over all their `frames` would have refused it. A
    set that selected nothing in some parts only is fine (objects that take part at
    later frames, as in 4D construction sequencing). Raises MergeError naming the test,
    the set and the frames."""
    listed = [
        [UnmatchedSet(entry["test"], entry["set"]) for entry in part.get("unmatched_sets", [])]
        for part in parts
    ]
    # In the first part's order, which is the tests' order: the set one run names.
    in_every_part = [entry for entry in listed[0] if all(entry in other for other in listed[1:])]
    if in_every_part:
        raise MergeError(unmatched_set_message(in_every_part[0], frames))


def merge_reports(
    parts: Sequence[Mapping[str, Any]],
    names: Sequence[str] | None = None,
    baseline: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The report of one run over the frames of all `parts` (see the module docstring).

    parts: chunk reports (json_report.read_json_report), any order
    names: a label per part for messages; default "part 1", "part 2", ...
    baseline: a previous report whose statuses carry over (as `--baseline` in a run).
      An object of a clash resolved since the baseline gets its guid from the parts'
      "objects" when a part lists it: parts run with the same baseline list them all.
    Raises MergeError when the parts do not fit together (see `check_parts`), or when
    a test's set selected nothing in every one of them (`check_sets_matched`).
    """
    names = list(names) if names is not None else [f"part {i + 1}" for i in range(len(parts))]
    order, frames = check_parts(parts, names)
    ordered = [parts[index] for index in order]
    check_sets_matched(ordered, frames)
    first = ordered[0]
    tests = [clash_test_from_dict(test) for test in first["tests"]]
    test_names = [test.name for test in tests]
    clashes = merge_clashes(ordered, test_names, frames[2])
    if baseline is not None:
        clashes = carry_over_status(clashes, baseline.get("clashes", []), test_names, frames)
    report = build_report(
        tests=tests,
        clashes=clashes,
        frames=frames,
        blender=first["blender"],
        file=first["file"],
        objects=_objects(ordered, clashes),
        open_meshes=sorted({name for part in parts for name in part.get("open_meshes", [])}),
        left_out={
            name: reason for part in ordered for name, reason in part.get("left_out", {}).items()
        },
        unswept=[entry for part in ordered for entry in part.get("unswept", [])],
        reach=max(part.get("reach", 0.0) for part in parts),
        substeps=first.get("substeps", 1),
        unit_scale=first.get("unit_scale", 1.0),
    )
    report["warnings"] += other_model_warning(baseline, first["file"])
    report["warnings"] += unchecked_warnings(clashes, frames, test_names)
    return report
