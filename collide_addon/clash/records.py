"""Clash records: one record per object pair a test finds over a scan, their statuses
across runs, and which of them fail a CI run.

    FrameHits of all frames -> ClashRecord list             `clash_records`
    records + previous report's records -> statuses          `carry_over_status`
    a record's frames + a scan's frames -> could it see it    `frames_meet_scan`
    records + fail_on -> how many fail                       `count_failing`
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, NotRequired, TypedDict

import numpy as np

from ..core import KIND_NAMES
from .evaluate import RELATIONS, FrameHits
from .tests import ClashTest

STATUSES = ("new", "active", "reviewed", "approved", "resolved")
# Statuses a person sets; a re-run keeps them while the clash still exists.
USER_STATUSES = ("reviewed", "approved")
FAIL_ON_CHOICES = ("new", "any", "never")


class ClashRecord(TypedDict):
    """One clash: an object pair a test found over a scan. The JSON report stores these
    under "clashes" (`collide_addon/report/schema/collide-report-1.schema.json`).

    id           stable id, see `clash_id`
    test, type   the clash test's name and type
    a, b         object names; `a` is in the test's set A (self tests: a < b)
    kinds        [kind of a, kind of b]: "box", "sphere" or "capsule"
    distance     signed distance at the worst frame (< 0: penetration depth)
    point        [x, y, z] clash point at the worst frame
    witnesses    [[x, y, z], [x, y, z]] at the worst frame, the points on a and on b
                 whose midpoint is `point`: closest points, or the deepest point and
                 its partner on the other surface (on meshes at most the depth apart,
                 or both one point where the surfaces cross)
    geometry     "mesh" when the triangles decided the clash, "proxy" when the proxies did
    relation     how a and b relate at the worst frame, one of evaluate.RELATIONS
    bounds       [[x, y, z], [x, y, z]] bounds of both shapes at the worst frame
    frames       [[first, last], ...] frames where the clash exists, merged intervals
    worst_frame  frame of the smallest distance (the earliest one on a tie)
    toi          only for a clash found between samples and at none (continuous
                 detection): the fractional frame of its first contact; `worst_frame`,
                 `point`, `witnesses`, `distance` and `bounds` are then those of the
                 earliest first contact, `frames` the frames whose intervals had one
    status       one of STATUSES: "new", "active", "reviewed", "approved", "resolved"
    fix          with --suggest-fixes: {"object": b, "translation": [x, y, z]}, the move
                 of b that leaves the pair apart at the worst frame, or {"none": why}
                 (`fixes.add_fixes`)
    """

    id: str
    test: str
    type: str
    a: str
    b: str
    kinds: list[str]
    distance: float
    point: list[float]
    witnesses: list[list[float]]
    geometry: str
    relation: str
    bounds: list[list[float]]
    frames: list[list[int]]
    worst_frame: int
    toi: NotRequired[float]
    status: str
    fix: NotRequired[dict[str, Any]]


def merge_frame_intervals(
    frames: np.ndarray, step: int = 1, groups: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Sorted, merged [first, last] intervals of the frames of each group; frames `step`
    apart are consecutive scan frames and join one interval.

    frames: (m,) int, any order, repeats allowed
    groups: (m,) int, the group of each frame (e.g. its object pair); None: one group 0
    returns: intervals (k, 2) int64 [first, last], ordered by group, then frame;
             interval_groups (k,) int64, the group of each interval
    """
    if step < 1:
        raise ValueError(f"step must be >= 1, got {step}")
    frames = np.asarray(frames, dtype=np.int64).reshape(-1)
    groups = (
        np.zeros(len(frames), dtype=np.int64)
        if groups is None
        else np.asarray(groups, dtype=np.int64).reshape(-1)
    )
    if not len(frames):
        return np.zeros((0, 2), dtype=np.int64), np.zeros(0, dtype=np.int64)
    # Sort by (group, frame) and break where the group changes or frames are more than
    # one step apart; repeated frames are 0 apart and stay in their interval.
    order = np.lexsort((frames, groups))
    group_sorted, frame_sorted = groups[order], frames[order]
    new_group = np.diff(group_sorted, prepend=group_sorted[0] - 1) != 0
    gap = np.diff(frame_sorted, prepend=frame_sorted[0]) > step
    starts = np.flatnonzero(new_group | gap)
    ends = np.append(starts[1:] - 1, len(frames) - 1)
    intervals = np.stack([frame_sorted[starts], frame_sorted[ends]], axis=1)
    return intervals, group_sorted[starts]


def clash_id(test_name: str, name_a: str, name_b: str) -> str:
    """Stable clash id: the same test and object pair give the same id in every run,
    whatever the pair's order or frame.

    The id is the first 16 hex digits of the SHA-256 of the UTF-8 JSON array
    [test_name, smaller name, larger name] written with json.dumps(ensure_ascii=False,
    separators=(",", ":")); JSON quoting keeps it unambiguous for any names.
    """
    first, second = sorted((name_a, name_b))
    key = json.dumps([test_name, first, second], ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(key.encode("utf-8")).hexdigest()[:16]


def _pair_groups(hits: FrameHits) -> np.ndarray:
    """(m,) int64, equal for the rows of one (a, b) pair."""
    _, a_codes = np.unique(hits.names[:, 0], return_inverse=True)
    _, b_codes = np.unique(hits.names[:, 1], return_inverse=True)
    _, group = np.unique(a_codes * (b_codes.max() + 1) + b_codes, return_inverse=True)
    return group.reshape(-1)


def _sampled_first(hits: FrameHits, group: np.ndarray) -> np.ndarray:
    """Which rows of `hits` (pairs numbered `group`, `_pair_groups`) may be a pair's
    worst: all but the rows found between samples (finite toi) of pairs that also clash
    at a sample: such a clash is reported as a sampled one. (k,) bool."""
    sampled = np.zeros(group.max() + 1, dtype=bool)
    sampled[group[np.isnan(hits.tois)]] = True
    return np.isnan(hits.tois) | ~sampled[group]


def clash_records(test: ClashTest, hits: FrameHits, step: int = 1) -> list[ClashRecord]:
    """One ClashRecord per object pair in `hits`, status "new".

    hits: the test's FrameHits over all scanned frames
    step: the frame step of the scan, so that frames `step` apart form one interval
    returns: records sorted by distance (worst first), then id
    """
    if not len(hits):
        return []
    group = _pair_groups(hits)
    # Worst row of each pair: smallest distance, then earliest frame; a pair found only
    # between samples: its earliest first contact (its distances all sit on the rule's
    # threshold). A pair found at a sample is a sampled clash, its worst a sampled row;
    # the frames it was found on between samples are still among its frames (a bullet
    # through a slab between frames 1 and 2 that rests in it from frame 15: [[1, 1],
    # [15, 20]], where [[15, 20]] left the first event out).
    between = np.isfinite(hits.tois)
    candidates = np.flatnonzero(_sampled_first(hits, group))
    order = candidates[
        np.lexsort(
            (
                hits.tois[candidates],
                hits.frames[candidates],
                np.where(between, 0.0, hits.distances)[candidates],
                group[candidates],
            )
        )
    ]
    first_of_group = np.flatnonzero(np.diff(group[order], prepend=-1) != 0)
    worst_rows = order[first_of_group]
    intervals, interval_groups = merge_frame_intervals(hits.frames, step, group)
    intervals_of_group: list[list[list[int]]] = [[] for _ in worst_rows]
    for pair, interval in zip(interval_groups.tolist(), intervals.tolist(), strict=True):
        intervals_of_group[pair].append(interval)
    records: list[ClashRecord] = []
    for pair, row in enumerate(worst_rows.tolist()):
        name_a, name_b = hits.names[row]
        records.append(
            {
                "id": clash_id(test.name, name_a, name_b),
                "test": test.name,
                "type": test.test_type,
                "a": name_a,
                "b": name_b,
                "kinds": [KIND_NAMES[kind] for kind in hits.kinds[row].tolist()],
                "distance": float(hits.distances[row]),
                "point": hits.points[row].tolist(),
                "witnesses": hits.witnesses[row].tolist(),
                "geometry": "mesh" if hits.on_mesh[row] else "proxy",
                "relation": RELATIONS[hits.relations[row]],
                "bounds": hits.bounds[row].tolist(),
                "frames": intervals_of_group[pair],
                "worst_frame": int(hits.frames[row]),
                **({"toi": float(hits.tois[row])} if between[row] else {}),
                "status": "new",
            }
        )
    records.sort(key=lambda record: (record["distance"], record["id"]))
    return records


# --- Statuses across runs ----------------------------------------------------------------


def frames_meet_scan(intervals: Sequence[Sequence[int]], frames: Sequence[int]) -> bool:
    """Whether a clash's frame intervals hold a frame that a scan of `frames` reports:
    start + k * step for k >= 0, up to end. A clash found by that scan always does; a
    baseline clash that does not lies where the scan could not have seen it.

    intervals: [[first, last], ...] inclusive, as a record's "frames"
    frames: (start, end, step) of the scan, step >= 1
    """
    start, end, step = frames
    last = start + (end - start) // step * step
    for first, final in intervals:
        low, high = max(first, start), min(final, last)
        # The first scanned frame at or after `low` (ceiling division of the offset).
        if low <= high and start - (start - low) // step * step <= high:
            return True
    return False


def carry_over_status(
    clashes: Sequence[ClashRecord],
    previous_clashes: Sequence[Mapping[str, Any]],
    test_names: Iterable[str] | None = None,
    frames: Sequence[int] | None = None,
) -> list[ClashRecord]:
    """Statuses of this run's clashes given the previous report's clashes (matched by id):

    - found now, was reviewed/approved: keeps that status (a person set it);
    - found now, was new/active: "active";
    - found now, absent before or resolved before (it came back): "new";
    - found before (not resolved) but not now: carried into the result as "resolved",
      unless its test is not among `test_names` (a test that did not run: a run of one
      discipline's tests, a test renamed or removed) or none of its frames is among the
      `frames` this run scanned (`frames_meet_scan`): the run could not have seen it,
      so it is carried over as it was, a new one as "active" (known before this run, as
      one found again would be), the others with their status (an approval is never
      lost for not being looked at). Clashes resolved in the previous report are
      dropped.

    test_names: tests of this run; None takes the tests of `clashes`
    frames: (start, end, step) this run scanned; None: every previous clash was in reach
    returns: new records, this run's first (in their order), then the previous ones
    """
    previous_by_id = {record["id"]: record for record in previous_clashes}
    tests_run = {record["test"] for record in clashes} if test_names is None else set(test_names)
    result = []
    for record in clashes:
        before = previous_by_id.get(record["id"])
        status = "new"
        if before is not None and before["status"] in USER_STATUSES:
            status = before["status"]
        elif before is not None and before["status"] != "resolved":
            status = "active"
        result.append({**record, "status": status})
    found_now = {record["id"] for record in clashes}
    for record in previous_clashes:
        if record["id"] in found_now or record["status"] == "resolved":
            continue
        checked = record["test"] in tests_run
        if checked and (frames is None or frames_meet_scan(record["frames"], frames)):
            result.append({**record, "status": "resolved"})
        else:
            unchecked = "active" if record["status"] == "new" else record["status"]
            result.append({**record, "status": unchecked})
    return result


def _check_fail_on(fail_on: str) -> None:
    if fail_on not in FAIL_ON_CHOICES:
        raise ValueError(f"fail_on must be one of {', '.join(FAIL_ON_CHOICES)}, got {fail_on!r}")


def effective_fail_on(fail_on: str | None, has_baseline: bool) -> str:
    """`fail_on` if given, else the default: "new" against a baseline (only what changed
    fails a CI run), "any" without one (nothing to compare with). Raises ValueError for
    a `fail_on` not in FAIL_ON_CHOICES."""
    if fail_on is None:
        return "new" if has_baseline else "any"
    _check_fail_on(fail_on)
    return fail_on


def count_failing(clashes: Sequence[Mapping[str, Any]], fail_on: str) -> int:
    """How many clashes make a CI run fail under `fail_on`:

    "new": status new; "any": every unresolved clash except approved ones (a person
    accepted those); "never": none.
    """
    _check_fail_on(fail_on)
    if fail_on == "new":
        return sum(record["status"] == "new" for record in clashes)
    if fail_on == "any":
        return sum(record["status"] not in ("resolved", "approved") for record in clashes)
    return 0
