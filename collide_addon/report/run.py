"""A clash report run, without Blender: scan frames, run the clash tests, carry statuses
over from a baseline, build the report and write it.

The caller passes what touches the scene as functions, so the whole run can be tested
with arrays:

    read_frame(time) -> FrameSample                      the shapes (and, for mesh tests,
                                                         the triangles) at a (sub)frame
                                                         time, row k = object k
    render_thumbnails([ClashRecord]) -> {id: PNG bytes}  optional pictures per clash
    progress(done, total, frame, rows)                   optional, after each sample
    mesh_progress(done, total, frame, test)              optional, as a mesh test decides
                                                         its candidate pairs (`MeshProgress`)

`blender/report_run.py` builds these from a Blender scene.
"""

from __future__ import annotations

import dataclasses
import itertools
import os
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np

from ..clash.atomic import check_writable
from ..clash.evaluate import (
    FrameHits,
    FrameMeshes,
    Interval,
    IntervalCandidates,
    MeshPairCache,
    ObjectMetadata,
    PreparedTest,
    SampleContacts,
    concat_hits,
    decides_on_meshes,
    evaluate_frame,
    evaluate_intervals,
    interval_candidates,
    object_table,
    prepare_test,
    sample_contacts,
    with_interval_meshes,
)
from ..clash.fixes import add_fixes
from ..clash.records import (
    ClashRecord,
    carry_over_status,
    clash_records,
    count_failing,
    effective_fail_on,
    frames_meet_scan,
)
from ..clash.tests import ClashTest
from ..core import CoherentBounds, ShapeBatch
from ..core.contact import largest_coordinate
from .bcf_report import object_ifc_guid, write_bcf_report
from .common import listed
from .csv_report import write_csv_report
from .html_report import write_html_report
from .json_report import build_report, write_json_report


class FrameSample(NamedTuple):
    """What `read_frame` gives for one (sub)frame.

    batch: the n proxies; objects: their metadata, row k = proxy k
    meshes: the objects' triangles for tests with geometry "mesh"; None when no test
        needs them (those tests then decide on the proxies)
    left_out: {name: reason} of the objects taking part that have no shape in `batch`
        because their geometry could not be used (a NaN vertex); the report names them
    """

    batch: ShapeBatch
    objects: Sequence[ObjectMetadata]
    meshes: FrameMeshes | None = None
    left_out: Mapping[str, str] | None = None


ReadFrame = Callable[[float], FrameSample]
Progress = Callable[[int, int, int, int], None]
# mesh_progress(done, total, frame, test): `done` of a mesh test's `total` candidate
# pairs at one sample of `frame` decided on their triangles (a long stage on a large
# model, between two samples' progress).
MeshProgress = Callable[[int, int, int, str], None]
RenderThumbnails = Callable[[Sequence[ClashRecord]], Mapping[str, bytes]]


class ClashRunError(Exception):
    """The run cannot start or finish (no objects, a test selecting nothing, a scene
    that cannot be read): a command line run exits with status 2 and this message.
    `read_frame` raises it for a frame it cannot read; the run adds the frame number."""


@dataclass(frozen=True)
class ReportResult:
    """What a run gives back.

    report: the report document (see json_report)
    failing: how many clashes `fail_on` counts (see clash.records.count_failing)
    fail_on: the rule applied, "new", "any" or "never" (the default made explicit)
    """

    report: dict[str, Any]
    failing: int
    fail_on: str

    @property
    def exit_status(self) -> int:
        """1 if clashes that `fail_on` counts exist, else 0."""
        return 1 if self.failing else 0


# Blender's frame range (MINAFRAME and MAXFRAME in its source): it clamps frames beyond
# it without a word, so a report past it would name frames it never scanned.
MAX_FRAME = 1_048_574
# Samples per frame: 64 splits a frame's motion into steps of 1/64, finer than any
# thin-object miss a scene at 24+ fps shows; beyond that the cost only grows.
MAX_SUBSTEPS = 64
# Samples per run: at the 5-50 ms a sample costs in Blender, 1,000,000 samples are
# hours to days of scanning; more is a typo (an extra zero), refused before any work.
MAX_SAMPLES = 1_000_000


def sample_times(frames: tuple[int, int, int], substeps: int = 1) -> Iterator[tuple[int, float]]:
    """The samples of a scan, generated one at a time (memory does not grow with the
    range): (frame, time) for every frame f of range(start, end + 1, step), at times
    f + k * step / substeps (k < substeps; the last frame only at itself), so that a
    fast mover cannot pass through a thin object between two frames."""
    start, end, step = frames
    return (
        (frame, frame + offset * step / substeps)
        for frame in range(start, end + 1, step)
        for offset in range(substeps if frame + step <= end else 1)
    )


def sample_count(frames: tuple[int, int, int], substeps: int = 1) -> int:
    """How many samples `sample_times(frames, substeps)` gives."""
    start, end, step = frames
    return ((end - start) // step) * substeps + 1


def last_scanned_frame(frames: Sequence[int]) -> int:
    """The last frame a scan of [start, end, step] reads (end itself when on the step)."""
    start, end, step = frames
    return start + (end - start) // step * step


def sampled_range(frames: tuple[int, int, int], lookahead: bool = False) -> tuple[int, int, int]:
    """The (start, end, step) whose `sample_times` a scan of `frames` reads: `frames`, or
    with `lookahead` up to the frame one step after the last (see `scan_frames`)."""
    start, _, step = frames
    if not lookahead:
        return frames
    return start, last_scanned_frame(frames) + step, step


def parse_frame_range(text: str) -> tuple[int, int, int]:
    """Frame range from "1-250", "1-250:5" or "12": (start, end, step), the form of
    `--frames` wherever a command takes it. Raises ValueError saying what is wrong."""
    match = re.fullmatch(r"\s*(-?\d+)(?:\s*-\s*(-?\d+))?(?::(\d+))?\s*", text)
    if not match:
        raise ValueError(f"expected START-END[:STEP], got {text!r}")
    start = int(match.group(1))
    end = int(match.group(2)) if match.group(2) is not None else start
    step = int(match.group(3)) if match.group(3) is not None else 1
    if end < start or step < 1:
        raise ValueError(f"need START <= END and STEP >= 1, got {text!r}")
    return start, end, step


def frames_as_one_argument(arguments: Sequence[str]) -> list[str]:
    """`arguments` (a command line) with each `--frames RANGE` whose RANGE starts below
    frame 0 ("-3-6") written as one argument, `--frames=-3-6`: argparse takes a value
    starting with "-" for an option and stops with "expected one argument"."""
    joined: list[str] = []
    index = 0
    while index < len(arguments):
        value = arguments[index + 1] if index + 1 < len(arguments) else ""
        if arguments[index] == "--frames" and value.startswith("-") and _is_frame_range(value):
            joined.append(f"--frames={value}")
            index += 2
        else:
            joined.append(arguments[index])
            index += 1
    return joined


def _is_frame_range(text: str) -> bool:
    try:
        parse_frame_range(text)
    except ValueError:
        return False
    return True


def check_scan_limits(frames: tuple[int, int, int], substeps: int) -> None:
    """Raise ClashRunError, naming the limit, for a frame range or substeps outside
    [-MAX_FRAME, MAX_FRAME], 1..MAX_SUBSTEPS and at most MAX_SAMPLES samples."""
    start, end, step = frames
    if step < 1 or end < start:
        raise ClashRunError(f"bad frame range {start}-{end}:{step}")
    if start < -MAX_FRAME or end > MAX_FRAME:
        raise ClashRunError(
            f"frames {start}-{end} go beyond Blender's frame range "
            f"-{MAX_FRAME} to {MAX_FRAME} (Blender would clamp them)"
        )
    if substeps < 1:
        raise ClashRunError(f"substeps must be >= 1, got {substeps}")
    if substeps > MAX_SUBSTEPS:
        raise ClashRunError(f"substeps must be <= {MAX_SUBSTEPS}, got {substeps}")
    count = sample_count(frames, substeps)
    if count > MAX_SAMPLES:
        raise ClashRunError(
            f"{count} samples (frames {start}-{end}:{step} x {substeps} substeps) is over "
            f"the limit of {MAX_SAMPLES}: scan a shorter range or a larger step"
        )


def scanned_frames_text(frames: Sequence[int]) -> str:
    """The frames of a scan of (start, end, step) for a message: "frame 3" for one
    frame, else "frames 1-10" or "frames 1-10:2"."""
    start, end, step = frames
    if last_scanned_frame(frames) == start:
        return f"frame {start}"
    return f"frames {start}-{end}" + (f":{step}" if step != 1 else "")


def _at_scanned_frames(frames: Sequence[int]) -> str:
    """ "at frame 3", or "at any of frames 1-10": where a scan found nothing."""
    text = scanned_frames_text(frames)
    return f"at {text}" if text.startswith("frame ") else f"at any of {text}"


class UnmatchedSet(NamedTuple):
    """A test's set that selected no object at any reported frame of a scan: a typo in a
    selector, or, in a chunk of a longer scan, objects that take part only at other
    chunks' frames (4D construction sequencing: a beam shown from frame 5 on).

    test: the test's name; set: "A" or "B" (never "B" of a self test, which is A)
    """

    test: str
    set: str


def _matched_sets(prepared_tests: Sequence[PreparedTest]) -> np.ndarray:
    """(t, 2) bool: whether set A and set B of each test select an object."""
    return np.array(
        [[prepared.in_a.any(), prepared.in_b.any()] for prepared in prepared_tests], dtype=bool
    ).reshape(-1, 2)


def unmatched_set_message(unmatched: UnmatchedSet, frames: Sequence[int]) -> str:
    """Why a run (or a merge of chunks) over `frames` that found `unmatched` is refused."""
    return (
        f"set {unmatched.set} of test {unmatched.test!r} matches no object "
        f"{_at_scanned_frames(frames)}"
    )


def _unmatched_sets(tests: Sequence[ClashTest], matched: np.ndarray) -> list[UnmatchedSet]:
    """The sets of `tests` that selected nothing over a scan, in test order.

    matched: (t, 2) bool, `_matched_sets` or-ed over the scan's reported samples
    """
    return [
        UnmatchedSet(test.name, label)
        for test, test_matched in zip(tests, matched, strict=True)
        for label, found in zip("AB", test_matched.tolist(), strict=True)
        if not found and (label == "A" or test.set_b is not None)
    ]


def _check_sets_matched(
    unmatched: Sequence[UnmatchedSet], took_part: bool, frames: Sequence[int], scope: str
) -> None:
    """Refuse a scan that could find nothing: no object took part at any reported frame,
    or a test's set selected nothing at every one (a typo in a selector would otherwise
    pass a CI gate silently). At some frames only is fine: objects appear and vanish
    (animated visibility, 4D construction sequencing).
    Raises ClashRunError naming the frames, and the test and set."""
    if not took_part:
        where = f" (scope {scope!r})" if scope else ""
        raise ClashRunError(f"no objects take part {_at_scanned_frames(frames)}{where}")
    if unmatched:
        raise ClashRunError(unmatched_set_message(unmatched[0], frames))


# Intervals of continuous tests advanced together (`evaluate_intervals`): a pass over
# many intervals' pairs costs about what one interval's does. Fewer when the samples
# hold more than SHAPES_AT_ONCE shapes in all, which bounds the memory held (a pass
# over 100,000 objects' pairs is long enough on its own).
INTERVALS_AT_ONCE = 16
SHAPES_AT_ONCE = 100_000


def _interval_hits(
    prepared_tests: Sequence[PreparedTest], intervals: Sequence[Sequence[Interval]]
) -> list[FrameHits | None]:
    """Each continuous test's clashes that start within its `intervals` (None for the
    other tests or without intervals)."""
    return [
        concat_hits(evaluate_intervals(prepared, test_intervals))
        if prepared.test.continuous and test_intervals
        else None
        for prepared, test_intervals in zip(prepared_tests, intervals, strict=True)
    ]


def _bridge_hits(
    tests: Sequence[ClashTest],
    names: Sequence[str],
    previous: tuple[int, float, ShapeBatch, Any] | None,
    sample: FrameSample,
    time: float,
) -> tuple[list[PreparedTest], list[FrameHits | None]]:
    """The tests prepared for the objects taking part at both of two consecutive samples
    between which who takes part changed (an element built, hidden or shown: 4D
    sequencing changes it on many frames), and each continuous test's clashes that start
    between the samples among them: a bullet passing a slab between frames 22 and 23 was
    missed because an unrelated beam appears at frame 23.

    names: who took part at the `previous` sample (as `scan_frames` keeps it); None:
        none to test from (the first sample, or no continuous test)
    """
    if previous is None:
        return [], []
    frame, start_time, start, _, matrices, hits = previous
    later = {obj.name: row for row, obj in enumerate(sample.objects)}
    rows = [(row, later[name]) for row, name in enumerate(names) if name in later]
    if not rows:
        return [], []
    before, after = (np.array(side, dtype=np.int64) for side in zip(*rows, strict=True))
    table = object_table([sample.objects[row] for row in after.tolist()])
    prepared_tests = [prepare_test(test, table) for test in tests]
    interval = Interval(start.take(before), sample.batch.take(after), frame, (start_time, time))
    meshes = sample.meshes
    if meshes is not None:
        meshes = FrameMeshes(
            lambda row: sample.meshes.mesh_of(int(after[row])), meshes.matrices[after]
        )
    intervals = [
        [
            _with_meshes(
                prepared,
                interval,
                None if matrices is None else matrices[before],
                meshes,
                [hits[index]],
            )
        ]
        for index, prepared in enumerate(prepared_tests)
    ]
    return prepared_tests, _interval_hits(prepared_tests, intervals)


def _with_meshes(prepared, interval, start_matrices, end_meshes, clashing) -> Interval:
    """`interval` of a continuous test with, for a test on meshes where both samples
    read meshes, the triangles that sweep the pairs its proxies leave to the samples,
    taken now (`with_interval_meshes`: the reader may read other geometry by the time
    the intervals are evaluated); `clashing`: the test's hits at the samples where known
    (None or empty elsewhere)."""
    if not decides_on_meshes(prepared.test) or start_matrices is None or end_meshes is None:
        return interval
    known = [found for found in clashing if found]
    return with_interval_meshes(prepared, interval, start_matrices, end_meshes, known)


def _sample_hits(
    prepared_tests: Sequence[PreparedTest],
    sample: FrameSample,
    frame: int,
    contacts: Sequence[SampleContacts],
    mesh_progress: MeshProgress | None,
    cache: MeshPairCache,
) -> list[FrameHits]:
    """Each test's hits at one sample, from its candidate pairs there (`contacts`).

    Tests of one scene's objects mostly share their candidate pairs (a clearance test's
    hold a hard test's): the tests run widest margin first, and each decides on meshes
    only the pairs that the tests before it, and at the sample before the objects that
    kept their meshes and matrices, did not (`cache`, a `MeshPairCache` with `scan`; a
    contact decided with a wider margin answers every test as its own would)."""
    hits: list[FrameHits | None] = [None] * len(prepared_tests)
    for index in sorted(range(len(prepared_tests)), key=lambda k: -contacts[k].margin):
        prepared = prepared_tests[index]
        hits[index] = evaluate_frame(
            prepared,
            sample.batch,
            frame,
            meshes=sample.meshes,
            sampled=contacts[index],
            progress=None
            if mesh_progress is None
            else partial(_test_progress, mesh_progress, frame, prepared.test.name),
            mesh_cache=cache,
        )
    return hits


def _test_progress(mesh_progress: MeshProgress, frame: int, test: str, done: int, total: int):
    mesh_progress(done, total, frame, test)


class ScanResult(NamedTuple):
    """What `scan_frames` gives back.

    records: the clash records of all tests, status "new"
    metadata: {name: ObjectMetadata} of every object that took part
    open_mesh_names: the objects with open meshes among mesh tests' candidates, see
        json_report.open_mesh_warning
    reach: the largest |coordinate| of the shapes read, `core.contact.largest_coordinate`,
        see json_report.reach_warning
    unmatched_sets: a chunk's sets that selected no object at any of its frames, for
        report.merge to decide on; [] otherwise (the scan refuses them)
    left_out: {name: reason} of the objects left out at any reported sample (see
        `FrameSample`)
    unswept: [test, a, b] of the pairs of continuous tests on meshes that some interval
        left to its samples (`FrameHits.unswept_names`), see json_report.unswept_warning
    """

    records: list[ClashRecord]
    metadata: dict[str, ObjectMetadata]
    open_mesh_names: list[str]
    reach: float
    unmatched_sets: list[UnmatchedSet]
    left_out: dict[str, str]
    unswept: list[list[str]]


def scan_frames(
    tests: Sequence[ClashTest],
    frames: tuple[int, int, int],
    read_frame: ReadFrame,
    progress: Progress | None = None,
    substeps: int = 1,
    scope: str = "",
    lookahead: bool = False,
    mesh_progress: MeshProgress | None = None,
    chunk: bool = False,
) -> ScanResult:
    """Run `tests` on every sample of `sample_times(frames, substeps)`; a clash found at
    any sample of frame f is reported on frame f. Continuous tests also test the motion
    between consecutive samples of the same objects (`evaluate_intervals`); a clash that
    starts between a sample of frame f and the next, apart at both, is reported on frame
    f (one still on at the next sample is that sample's clash, reported there).

    scope: what decides which objects take part, named when none do
    mesh_progress: see `MeshProgress`; called from mesh tests as they decide pairs
    lookahead: the frames are a chunk of a longer scan (report.merge joins the chunks):
        the last frame is sampled with its sub-steps too and the motion from there to the
        next frame (last + step) is tested, as a scan over the longer range does, while
        nothing is reported on that next frame (the next chunk's first; read only for
        continuous tests); implies `chunk`
    chunk: the frames are a chunk of a longer scan, maybe its last (which has no
        lookahead): a set selecting no object at any of the chunk's frames is returned
        (`ScanResult.unmatched_sets`) rather than refused, since its objects may take
        part at other chunks' frames (built later, or demolished before this chunk)
    returns: `ScanResult`
    Raises ClashRunError when no object takes part at any reported frame or a test's set
    selects nothing at every one (`_check_sets_matched`; not in a chunk), or when
    `read_frame` raises it.
    """
    sampled = sampled_range(frames, lookahead)
    total = sample_count(sampled, substeps)
    continuous = any(test.continuous for test in tests)
    if lookahead and not continuous:
        # Only the motion to the next frame needs that frame read; the last frame's
        # sub-steps come before it.
        total -= 1
    kept = _KeptHits(tests)
    metadata: dict[str, ObjectMetadata] = {}
    names: list[str] | None = None
    prepared_tests: list[PreparedTest] = []
    broad_phases: list[CoherentBounds] = []
    # the previous sample: frame, time, shapes, each test's contacts and hits (None
    # unsampled) and its objects' world matrices where mesh tests read meshes
    # (`FrameMeshes.matrices`)
    previous: tuple | None = None
    reach = 0.0
    # Mesh contacts shared by the tests of a sample and kept for the objects that do not
    # move or change to the next.
    mesh_cache = MeshPairCache(scan=True)
    intervals: list[list[Interval]] = []  # per test, waiting for `_interval_hits`
    # Whether any object, and each test's sets, took part at a reported sample; the
    # look-ahead frame is not counted: it is the next chunk's, which sees it itself.
    took_part = False
    matched = np.zeros((len(tests), 2), dtype=bool)
    left_out: dict[str, str] = {}
    for done, (frame, time) in enumerate(itertools.islice(sample_times(sampled, substeps), total)):
        sample = _read_sample(read_frame, frame, time)
        reach = max(reach, largest_coordinate(sample.batch))
        frame_names = [obj.name for obj in sample.objects]
        if frame_names != names:
            # Who takes part changed (first frame, or visibility animated): rows of the
            # previous sample are other objects; the motion of those in both is tested
            # on its own (`_bridge_hits`).
            kept.add(prepared_tests, _interval_hits(prepared_tests, intervals))
            kept.add(*_bridge_hits(tests, names, previous if continuous else None, sample, time))
            names = frame_names
            table = object_table(sample.objects)
            prepared_tests = [prepare_test(test, table) for test in tests]
            broad_phases = [CoherentBounds() for _ in tests]
            intervals = [[] for _ in tests]
            metadata.update(zip(names, sample.objects, strict=True))
            previous = None
        # A continuous test's grid over the swept bounds from the previous sample serves
        # this sample's broad phase too.
        arriving: list[IntervalCandidates | None] = [None] * len(tests)
        if previous is not None and continuous:
            arriving = [
                interval_candidates(prepared, previous[2], sample.batch)
                if prepared.test.continuous
                else None
                for prepared in prepared_tests
            ]
        contacts: list[SampleContacts | None] = [None] * len(tests)
        sampled: list[FrameHits | None] = [None] * len(tests)
        if frame <= frames[1]:
            took_part |= bool(names)
            matched |= _matched_sets(prepared_tests)
            left_out.update(sample.left_out or {})
            contacts = [
                sample_contacts(prepared, sample.batch, broad_phase, candidates)
                for prepared, broad_phase, candidates in zip(
                    prepared_tests, broad_phases, arriving, strict=True
                )
            ]
            sampled = _sample_hits(
                prepared_tests, sample, frame, contacts, mesh_progress, mesh_cache
            )
            kept.add(prepared_tests, sampled)
            mesh_cache.next_sample()
        if previous is not None and continuous:
            _add_intervals(
                intervals, prepared_tests, previous, (time, sample, contacts, arriving, sampled)
            )
            waiting = max(len(test_intervals) for test_intervals in intervals)
            if waiting == INTERVALS_AT_ONCE or waiting * len(sample.batch) >= SHAPES_AT_ONCE:
                kept.add(prepared_tests, _interval_hits(prepared_tests, intervals))
                intervals = [[] for _ in tests]
        matrices = None if sample.meshes is None else sample.meshes.matrices
        previous = (frame, time, sample.batch, contacts, matrices, sampled)
        if progress is not None:
            progress(done + 1, total, frame, kept.rows)
    kept.add(prepared_tests, _interval_hits(prepared_tests, intervals))
    unmatched = _unmatched_sets(tests, matched)
    if not (chunk or lookahead):
        _check_sets_matched(unmatched, took_part, frames, scope)
    records, open_names, unswept = kept.records(tests, frames[2])
    return ScanResult(records, metadata, open_names, reach, unmatched, left_out, unswept)


def _add_intervals(intervals, prepared_tests, previous, later) -> None:
    """Append to each continuous test's `intervals` the motion from the `previous`
    sample (frame, time, shapes, each test's contacts, matrices of its meshes, each
    test's hits) to the `later` one (time, `FrameSample`, contacts, each test's
    `interval_candidates` from the previous sample, hits). A test on meshes takes the
    triangles that sweep the pairs its proxies leave to the samples now
    (`_with_meshes`)."""
    frame, time, batch, contacts, matrices, hits = previous
    later_time, sample, later_contacts, arriving, later_hits = later
    for index, (prepared, test_intervals, start_contacts, end_contacts, candidates) in enumerate(
        zip(prepared_tests, intervals, contacts, later_contacts, arriving, strict=True)
    ):
        if prepared.test.continuous:
            interval = Interval(
                batch,
                sample.batch,
                frame,
                (time, later_time),
                start_contacts,
                end_contacts,
                candidates,
            )
            test_intervals.append(
                _with_meshes(
                    prepared, interval, matrices, sample.meshes, [hits[index], later_hits[index]]
                )
            )


def _read_sample(read_frame: ReadFrame, frame: int, time: float) -> FrameSample:
    try:
        return read_frame(time)
    except ClashRunError as error:
        raise ClashRunError(f"frame {frame}: {error}") from None


class _KeptHits:
    """The hits of a scan's tests, kept as they are found."""

    def __init__(self, tests: Sequence[ClashTest]):
        self.hits: dict[str, list[FrameHits]] = {test.name: [] for test in tests}
        self.rows = 0

    def add(self, prepared_tests: Sequence[PreparedTest], found: Sequence[FrameHits | None]):
        """Keep `found`, one FrameHits (or None) per prepared test."""
        for prepared, frame_hits in zip(prepared_tests, found, strict=True):
            # Frames without clashes or open meshes keep nothing: memory would otherwise
            # grow with the range.
            if frame_hits is not None and (
                len(frame_hits) or len(frame_hits.open_mesh_names) or len(frame_hits.unswept_names)
            ):
                self.hits[prepared.test.name].append(frame_hits)
                self.rows += len(frame_hits)

    def records(
        self, tests: Sequence[ClashTest], step: int
    ) -> tuple[list[ClashRecord], list[str], list[list[str]]]:
        """The records of all tests, the names of the objects with open meshes, and the
        [test, a, b] of the pairs some interval left unswept (json_report's `unswept`)."""
        records: list[ClashRecord] = []
        open_names: set[str] = set()
        unswept: set[tuple[str, str, str]] = set()
        for test in tests:
            test_hits = concat_hits(self.hits[test.name])
            records += clash_records(test, test_hits, step)
            open_names.update(test_hits.open_mesh_names.tolist())
            unswept.update((test.name, a, b) for a, b in test_hits.unswept_names.tolist())
        return records, sorted(open_names), [list(entry) for entry in sorted(unswept)]


def other_model_warning(baseline: Mapping[str, Any] | None, file: str | None) -> list[str]:
    """The report's warning when `baseline` was made from a file of another name than
    `file`, the one scanned: a baseline of another model marks all its clashes resolved
    (a renamed or moved model is fine, and said so). [] or [one sentence]."""
    before = (baseline or {}).get("file")
    if not before or not file:
        return []
    # Either system's separators: a baseline may come from a Windows machine.
    before_name, name = (re.split(r"[\\/]", path)[-1] for path in (before, file))
    if before_name == name:
        return []
    return [
        f"the baseline was made from {before_name}, this run scans {name}: if that is "
        "another model, its clashes come out resolved here (a renamed model is fine)"
    ]


def unchecked_warnings(
    clashes: Sequence[Mapping[str, Any]], frames: Sequence[int], test_names: Sequence[str]
) -> list[str]:
    """The report's warnings for the open clashes of a baseline that a run of the tests
    `test_names` over `frames` (start, end, step) did not check, carried over with their
    statuses (`clash.records.carry_over_status`): those of tests that did not run, and
    those the scan could not have seen (`clash.records.frames_meet_scan`). A sentence
    for each kind there is."""
    ran = set(test_names)
    kept = [record for record in clashes if record["status"] != "resolved"]
    untested = [record for record in kept if record["test"] not in ran]
    unscanned = sum(
        record["test"] in ran and not frames_meet_scan(record["frames"], frames) for record in kept
    )
    warnings = []
    if untested:
        names = [repr(name) for name in dict.fromkeys(record["test"] for record in untested)]
        warnings.append(
            f"{len(untested)} clash(es) of the baseline belong to tests this run did not run "
            f"({listed(names, 3)}), so they were not checked: they keep the baseline's "
            "statuses, new ones as active (a renamed test finds its clashes anew)"
        )
    if unscanned:
        warnings.append(
            f"{unscanned} clash(es) of the baseline lie outside the scanned "
            f"{scanned_frames_text(frames)}, so they were not checked: they keep the "
            "baseline's statuses, new ones as active"
        )
    return warnings


def object_entries(
    clashes: Sequence[Mapping[str, Any]], metadata: Mapping[str, ObjectMetadata]
) -> dict[str, dict[str, str]]:
    """The report's "objects": {name: {"ifc_guid": ...}} for every object in a clash.
    An instance has its instancer's properties, not its IfcGuid: its guid derives from
    its name, as does that of an object no longer in the scene (a resolved clash's)."""
    objects = {}
    for clash in clashes:
        for name in (clash["a"], clash["b"]):
            if name in objects:  # an object in many clashes: its guid once
                continue
            known = metadata.get(name)
            own_properties = known.properties if known is not None and not known.is_instance else {}
            objects[name] = {"ifc_guid": object_ifc_guid(name, own_properties)}
    return objects


def _same_file(first: str | Path, second: str | Path) -> bool:
    """Whether two paths name one file: equal once links and ".." are resolved, or, where
    both exist, the same file by device and inode (hard links, bind mounts)."""
    if Path(first).resolve() == Path(second).resolve():
        return True
    try:
        return os.path.samefile(first, second)
    except OSError:
        return False


def check_output_paths(
    outputs: Mapping[str, str | Path | None], inputs: Mapping[str, str | Path | None]
) -> None:
    """Refuse outputs that cannot be written or would destroy data, before any work: an
    output whose folder does not exist or takes no new file, or that is a folder
    (`clash.atomic.check_writable`); two outputs that are one file (the second write
    loses the first) or an output that is an input (the scene, the tests file, the
    baseline). Empty or None paths are not written and are skipped.

    outputs, inputs: {what it is, e.g. "--json" or "the scene": path}
    Raises ClashRunError naming the path (and the other one).
    """
    written = [(name, path) for name, path in outputs.items() if path]
    read = [(name, path) for name, path in inputs.items() if path]
    for _, path in written:
        if not Path(path).resolve().parent.is_dir():
            raise ClashRunError(f"cannot write {path}: its folder does not exist")
        try:
            check_writable(path)
        except OSError as error:
            raise ClashRunError(f"cannot write {path}: {error.strerror}") from None
    for index, (name, path) in enumerate(written):
        for other_name, other in written[index + 1 :] + read:
            if _same_file(path, other):
                raise ClashRunError(
                    f"{name} {path} is the same file as {other_name} {other}: "
                    "refusing to overwrite it"
                )


def run_report(
    tests: Sequence[ClashTest],
    frames: tuple[int, int, int],
    read_frame: ReadFrame,
    *,
    baseline: Mapping[str, Any] | None = None,
    fail_on: str | None = None,
    json_path: str | Path | None = None,
    html_path: str | Path | None = None,
    csv_path: str | Path | None = None,
    bcf_path: str | Path | None = None,
    render_thumbnails: RenderThumbnails | None = None,
    substeps: int = 1,
    suggest_fixes: bool = False,
    continuous: bool = False,
    lookahead: bool = False,
    chunk: bool = False,
    progress: Progress | None = None,
    mesh_progress: MeshProgress | None = None,
    blender: str | None = None,
    file: str | None = None,
    scope: str = "",
    unit_scale: float = 1.0,
) -> ReportResult:
    """Scan frames, run the clash tests, carry statuses over from `baseline`, write the
    requested reports atomically.

    frames: (start, end, step), inclusive
    read_frame, progress, mesh_progress: see the module docstring and `scan_frames`
    baseline: a previous report (json_report.read_json_report)
    fail_on: "new", "any" or "never"; default "new" with a baseline, "any" without
    render_thumbnails: pictures for the HTML and BCF reports, called once after the scan
    substeps: samples per scanned frame (see `sample_times`); the range and substeps
        must pass `check_scan_limits`
    suggest_fixes: give each clash not resolved a "fix" (`clash.fixes.add_fixes`), read
        at its worst frame after the scan
    continuous: make every test but duplicates continuous (see `scan_frames`), as if
        its definition said so; the report's tests say it
    lookahead: the frames are a chunk of a longer scan, not its last (see
        `scan_frames`); the report says so, and so does its "substeps", for report.merge
    chunk: the frames are a chunk of a longer scan, maybe its last (lookahead implies
        it): the report lists the sets that selected no object at its frames
        ("unmatched_sets") instead of refusing them
    blender, file: the Blender version and the scanned file, stored in the report
    scope: see `scan_frames`
    unit_scale: metres in one scene unit (Blender's Unit Scale), stored in the report when
        not 1 (its lengths are in scene units)
    Raises ClashRunError for input the run cannot use, before reading any frame when
    the arguments alone are wrong (see also `check_output_paths`: outputs must be
    distinct files and not `file`).
    """
    if not tests:
        raise ClashRunError("no clash tests given")
    check_scan_limits(sampled_range(frames, lookahead), substeps)
    if continuous:
        tests = [
            test if test.test_type == "duplicates" else dataclasses.replace(test, continuous=True)
            for test in tests
        ]
    outputs = {"the JSON report": json_path, "the HTML report": html_path}
    outputs.update({"the CSV report": csv_path, "the BCF report": bcf_path})
    check_output_paths(outputs, {"the scanned file": file})
    try:
        fail_on = effective_fail_on(fail_on, baseline is not None)
    except ValueError as error:
        raise ClashRunError(str(error)) from None
    scan = scan_frames(
        tests, frames, read_frame, progress, substeps, scope, lookahead, mesh_progress, chunk
    )
    clashes = scan.records
    test_names = [test.name for test in tests]
    if baseline is not None:
        clashes = carry_over_status(clashes, baseline.get("clashes", []), test_names, frames)
    if suggest_fixes:
        clashes = add_fixes(clashes, tests, read_frame, frames)
    report = build_report(
        tests=tests,
        clashes=clashes,
        frames=frames,
        blender=blender,
        file=file,
        objects=object_entries(clashes, scan.metadata),
        open_meshes=scan.open_mesh_names,
        left_out=scan.left_out,
        unswept=scan.unswept,
        reach=scan.reach,
        substeps=substeps,
        lookahead=lookahead,
        unit_scale=unit_scale,
    )
    report["warnings"] += other_model_warning(baseline, file)
    report["warnings"] += unchecked_warnings(clashes, frames, test_names)
    # Only a chunk has them (the scan refuses them otherwise): for report.merge.
    report |= (
        {"unmatched_sets": [entry._asdict() for entry in scan.unmatched_sets]}
        if scan.unmatched_sets
        else {}
    )
    # Only the HTML and BCF reports hold pictures: a run writing neither renders none.
    pictures = (
        render_thumbnails(clashes)
        if render_thumbnails is not None and (html_path or bcf_path)
        else {}
    )
    if json_path:
        write_json_report(report, json_path)
    if html_path:
        write_html_report(report, html_path, pictures)
    if csv_path:
        write_csv_report(report, csv_path)
    if bcf_path:
        write_bcf_report(report, bcf_path, pictures)
    return ReportResult(report, count_failing(report["clashes"], fail_on), fail_on)
