"""Merging chunk reports: the merge of runs over consecutive frame ranges equals one run
over all their frames, and parts that do not fit together are refused."""

from __future__ import annotations

import json
import math

import pytest

from collide_addon.clash.evaluate import ObjectMetadata
from collide_addon.clash.tests import ClashTest, Selector
from collide_addon.core import ShapeBatch
from collide_addon.report.json_report import report_to_json
from collide_addon.report.merge import MergeError, check_parts, merge_reports
from collide_addon.report.run import FrameSample, run_report
from tests.report.test_json_report import schema_validator
from tests.report.test_run import PIPE_VS_BEAM, beam_from_frame_5

TESTS = [
    ClashTest("hard", Selector(), None, "hard", 0.0),
    ClashTest("gap", Selector(), None, "clearance", 0.3),
]
NAMES = ["mover", "wall", "post", "swing", "pillar", "far"]
OBJECTS = [
    ObjectMetadata(name, properties={"IfcGuid": "2O2Fr$t4X7Zf8NOew3FLOH"} if name == "far" else {})
    for name in NAMES
]


def moving_spheres(time: float) -> FrameSample:
    """mover runs along x at 1 per frame through wall (x 10) and post (x 20); swing
    swings around pillar until frame 50, touching it twice per period; far never meets
    anything."""
    swing_x = 40.0 + 6.0 * math.sin(time * 0.4) if time < 50 else 60.0
    centers = [[time, 0, 0], [10, 0, 0], [20, 0, 0], [swing_x, 5, 0], [44, 5, 0], [90, 0, 0]]
    return FrameSample(ShapeBatch.spheres(centers, [0.5, 2.0, 1.0, 0.5, 1.0, 0.5]), OBJECTS)


def run(frames, baseline=None):
    return run_report(
        TESTS, frames, moving_spheres, baseline=baseline, blender="3.4.1", file="/s.blend"
    ).report


def chunks(start, end, step, size):
    """Consecutive (start, end, step) ranges of `size` scanned frames over start-end."""
    firsts = range(start, end + 1, step * size)
    return [(first, min(first + step * size - 1, end), step) for first in firsts]


@pytest.mark.parametrize(
    ("frames", "size"),
    [((1, 40, 1), 7), ((1, 40, 1), 1), ((1, 39, 2), 3), ((2, 41, 3), 4), ((1, 40, 1), 40)],
)
def test_merged_chunks_equal_one_run_over_their_frames(frames, size):
    whole = run(frames)
    parts = [run(chunk) for chunk in chunks(*frames, size)]
    # Parts in any order; JSON text, as read back from files.
    parts = [json.loads(report_to_json(part)) for part in reversed(parts)]
    merged = merge_reports(parts)
    assert report_to_json(merged) == report_to_json(whole)


def test_the_scene_has_clashes_across_chunk_borders_and_split_intervals():
    whole = run((1, 40, 1))
    frames = {
        (clash["test"], clash["a"], clash["b"]): clash["frames"] for clash in whole["clashes"]
    }
    assert frames[("hard", "mover", "wall")] == [[8, 12]]  # across the border 7 | 8
    assert len(frames[("hard", "pillar", "swing")]) > 1
    assert len(whole["groups"]["clusters"]) > 1


def test_baseline_statuses_and_objects_of_resolved_clashes():
    whole = run((1, 40, 1))
    baseline = json.loads(report_to_json(whole))
    baseline["clashes"] = [dict(clash, status="reviewed") for clash in baseline["clashes"]]
    # A clash with "far" that is gone now: resolved, and far's IfcGuid (a property)
    # comes from the parts, which ran with the same baseline.
    gone = dict(baseline["clashes"][0], id="0123456789abcdef", a="far", b="mover")
    baseline["clashes"].append(gone)
    expected = run((1, 40, 1), baseline)
    parts = [run(chunk, baseline) for chunk in chunks(1, 40, 1, 9)]
    merged = merge_reports(parts, baseline=baseline)
    assert report_to_json(merged) == report_to_json(expected)
    assert merged["objects"]["far"] == {"ifc_guid": "2O2Fr$t4X7Zf8NOew3FLOH"}
    assert merged["clashes"][-1]["status"] == "resolved"
    # A baseline of another model is warned about, as in one run.
    other = dict(baseline, file="/elsewhere/other.blend")
    merged = merge_reports(parts, baseline=other)
    assert merged["warnings"] == run((1, 40, 1), other)["warnings"]
    assert merged["warnings"][0].startswith("the baseline was made from other.blend")


def test_chunks_keep_the_baseline_clashes_they_could_not_see_as_one_run_does():
    # Frames 1-16 against a baseline of frames 1-40: the clashes of the mover and the post
    # (frames 19-21) keep their statuses, and a part does not pass on the baseline's
    # clashes outside its own frames as found (the parts ran with the baseline too).
    baseline = json.loads(report_to_json(run((1, 40, 1))))
    baseline["clashes"] = [dict(clash, status="reviewed") for clash in baseline["clashes"]]
    expected = run((1, 16, 1), baseline)
    parts = [run(chunk, baseline) for chunk in chunks(1, 16, 1, 5)]
    merged = merge_reports(parts, baseline=baseline)
    assert report_to_json(merged) == report_to_json(expected)
    unchecked = [clash for clash in merged["clashes"] if clash["frames"] == [[19, 21]]]
    assert len(unchecked) == 2 and {clash["status"] for clash in unchecked} == {"reviewed"}
    assert merged["warnings"][-1].startswith(f"{len(unchecked)} clash(es) of the baseline lie")


def fourd_parts(frames, size, tests=PIPE_VS_BEAM, last_looks_ahead=False):
    """Chunk reports of the 4D scene (the beam is built at frame 5), as collide scan makes
    them: every chunk but the last looks ahead."""
    ranges = chunks(*frames, size)
    return [
        json.loads(
            report_to_json(
                run_report(
                    tests,
                    chunk,
                    beam_from_frame_5,
                    lookahead=last_looks_ahead or chunk != ranges[-1],
                ).report
            )
        )
        for chunk in ranges
    ]


@pytest.mark.parametrize("size", [1, 3, 4, 10])
def test_chunks_before_a_set_takes_part_merge_to_one_run(size):
    # A chunk whose frames all come before the beam is built failed the whole scan.
    whole = run_report(PIPE_VS_BEAM, (1, 10, 1), beam_from_frame_5).report
    merged = merge_reports(list(reversed(fourd_parts((1, 10, 1), size))))
    assert report_to_json(merged) == report_to_json(whole)


def test_a_set_matching_nothing_in_every_part_is_refused():
    # As one run over frames 1-4 refuses it (all parts looked ahead: a merge of parts
    # made elsewhere without sub-steps may end on one).
    parts = fourd_parts((1, 4, 1), 2, last_looks_ahead=True)
    with pytest.raises(
        MergeError, match=r"^set B of test 'pipe vs beam' matches no object at any of frames 1-4$"
    ):
        merge_reports(parts)
    # The first set in the tests' order is named, as a run names it.
    tests = [ClashTest("beams", Selector(name="Beam")), *PIPE_VS_BEAM]
    with pytest.raises(MergeError, match=r"^set A of test 'beams' matches no object"):
        merge_reports(fourd_parts((1, 4, 1), 2, tests, last_looks_ahead=True))
    crafted = {**parts[1], "unmatched_sets": [{"test": "pipe vs beam", "set": "C"}]}
    with pytest.raises(MergeError, match=r"^b\.json: field 'unmatched_sets' must be \["):
        merge_reports([parts[0], crafted], ["a.json", "b.json"])


def test_parts_without_clashes_merge_to_an_empty_report():
    parts = [run((50, 62, 1)), run((63, 70, 1))]
    merged = merge_reports(parts)
    assert merged == run((50, 70, 1))
    assert merged["clashes"] == []


def _with(report, **changes):
    return {**report, **changes}


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        ({"tests": []}, "b.json and a.json have different 'tests': cannot merge them"),
        ({"file": "/other.blend"}, "b.json and a.json have different 'file'"),
        ({"blender": "5.0.1"}, "b.json and a.json have different 'blender'"),
        ({"frames": [11, 20, 2]}, "parts have different frame steps [1, 2]"),
        ({"frames": [10, 20, 1]}, "frames of b.json overlap those of a.json"),
        ({"frames": [13, 20, 1]}, "frames 11-12 are in no part (between a.json and b.json)"),
        ({"unit_scale": 0.001}, "parts have different unit scales [0.001, 1.0]"),
    ],
)
def test_parts_that_do_not_fit_together_are_refused(change, reason):
    first = run((1, 10, 1))
    second = _with(run((11, 20, 1)), **change)
    with pytest.raises(MergeError, match=None) as error:
        merge_reports([first, second], ["a.json", "b.json"])
    assert str(error.value).startswith(reason)


def test_no_parts_and_a_range_ending_between_steps():
    with pytest.raises(MergeError, match="no parts to merge"):
        check_parts([], [])
    # 1-10:2 scans 1, 3, 5, 7, 9: the next part starts at 11.
    order, frames = check_parts([run((11, 15, 2)), run((1, 10, 2))], ["b", "a"])
    assert order == [1, 0] and frames == (1, 15, 2)


@pytest.mark.parametrize(
    ("field", "value", "expected"),
    [
        ("frames", [1, 10], "[start, end, step] integers, start <= end, step >= 1"),
        ("frames", [10, 1, 1], "[start, end, step] integers, start <= end, step >= 1"),
        ("frames", [1, 10, 0], "[start, end, step] integers, start <= end, step >= 1"),
        ("tests", {"hard": 1}, "a list"),
        ("file", 3, "a string or null"),
        ("objects", {"a": {"ifc_guid": 1}}, '{name: {"ifc_guid": string}}'),
        ("objects", None, '{name: {"ifc_guid": string}}'),
    ],
)
def test_a_malformed_part_is_refused_naming_the_field(field, value, expected):
    crafted = {**run((11, 20, 1)), field: value}
    with pytest.raises(MergeError) as error:
        merge_reports([run((1, 10, 1)), crafted], ["a.json", "b.json"])
    assert str(error.value) == f"b.json: field {field!r} must be {expected}"
    del crafted[field]
    with pytest.raises(MergeError, match=f"b.json: field {field!r} must be"):
        merge_reports([run((1, 10, 1)), crafted], ["a.json", "b.json"])


# Between frames: bullet flies along x at 10 a frame. With 2 sub-steps it meets mid (x 55)
# only at the sub-step 5.5 and passes pin (x 57.5) only between 5.5 and 6; shuttle swings
# through target at 2 rad a frame, touching it at the sample of frame 11 and otherwise
# only between samples.
FAST_NAMES = ["bullet", "mid", "pin", "shuttle", "target"]
FAST_OBJECTS = [ObjectMetadata(name) for name in FAST_NAMES]
FAST_TESTS = [ClashTest("hard", Selector(), None, "hard", 0.0)]


def fast_spheres(time: float) -> FrameSample:
    centers = [
        [10.0 * time, 0, 0],
        [55, 0, 0],
        [57.5, 0, 0],
        [200 + 10 * math.sin(2.0 * time), 9, 0],
        [200, 9, 0],
    ]
    return FrameSample(ShapeBatch.spheres(centers, [0.5, 1.0, 0.2, 0.3, 0.3]), FAST_OBJECTS)


def fast_run(frames, substeps, continuous, lookahead=False):
    return run_report(
        FAST_TESTS,
        frames,
        fast_spheres,
        substeps=substeps,
        continuous=continuous,
        lookahead=lookahead,
        blender="3.4.1",
        file="/s.blend",
    ).report


def fast_parts(frames, size, substeps, continuous):
    """Chunk reports as collide scan makes them: every chunk but the last looks ahead."""
    ranges = chunks(*frames, size)
    return [
        json.loads(report_to_json(fast_run(chunk, substeps, continuous, chunk != ranges[-1])))
        for chunk in ranges
    ]


def test_the_fast_scene_has_clashes_only_between_frames_across_a_border():
    by_pair = {
        (clash["a"], clash["b"]): clash for clash in fast_run((1, 20, 1), 2, True)["clashes"]
    }
    assert (
        by_pair[("bullet", "mid")]["frames"] == [[5, 5]] and "toi" not in by_pair["bullet", "mid"]
    )
    assert by_pair[("bullet", "pin")]["frames"] == [[5, 5]]
    assert by_pair[("bullet", "pin")]["toi"] == pytest.approx(5.68, abs=1e-3)
    # Sampled at frame 11: a sampled clash, worst there, its contacts between samples
    # among its frames (they were left out: [[11, 11]]).
    shuttle_target = by_pair[("shuttle", "target")]
    assert "toi" not in shuttle_target and shuttle_target["worst_frame"] == 11
    assert shuttle_target["frames"] == [
        [1, 1],
        [3, 4],
        [6, 7],
        [9, 9],
        [11, 12],
        [14, 15],
        [17, 18],
    ]
    shuttle = {(c["a"], c["b"]): c for c in fast_run((1, 10, 1), 1, True)["clashes"]}
    assert "toi" in shuttle[("shuttle", "target")]
    assert len(shuttle[("shuttle", "target")]["frames"]) > 1
    # Without the lookahead, a chunk ending on frame 5 misses both bullet clashes.
    alone = fast_run((1, 5, 1), 2, True)["clashes"]
    assert not {(clash["a"], clash["b"]) for clash in alone} & {
        ("bullet", "mid"),
        ("bullet", "pin"),
    }


@pytest.mark.parametrize(
    ("frames", "substeps", "continuous"),
    [((1, 20, 1), 2, False), ((1, 20, 1), 1, True), ((1, 20, 1), 2, True), ((1, 21, 2), 3, True)],
)
@pytest.mark.parametrize("size", [1, 3, 5, 7])
def test_merged_lookahead_chunks_equal_one_run_with_substeps_and_continuous(
    frames, substeps, continuous, size
):
    whole = fast_run(frames, substeps, continuous)
    parts = fast_parts(frames, size, substeps, continuous)
    merged = merge_reports(list(reversed(parts)))
    assert report_to_json(merged) == report_to_json(whole)
    assert whole.get("substeps", 1) == substeps and "lookahead" not in merged


def test_parts_without_the_lookahead_they_need_are_refused():
    first, second = fast_parts((1, 10, 1), 5, 2, False)
    names = ["a.json", "b.json"]
    alone = fast_run((1, 5, 1), 2, False)
    with pytest.raises(MergeError, match=r"^a\.json lacks the lookahead that sub-steps"):
        merge_reports([alone, second], names)
    missing = r"^b\.json looked ahead past its frames, yet no part follows it: the part after"
    with pytest.raises(MergeError, match=missing):
        merge_reports([first, _with(second, lookahead=True)], names)
    with pytest.raises(MergeError, match=r"^parts have different sub-steps \[2, 3\]"):
        merge_reports([first, _with(second, substeps=3)], names)
    # Without sub-steps or continuous tests a chunk end loses nothing.
    assert merge_reports([run((1, 10, 1)), run((11, 20, 1))]) == run((1, 20, 1))


@pytest.mark.parametrize(
    ("substeps", "continuous", "expected"),
    [
        (1, False, [1, 2, 3]),
        (2, False, [1, 1.5, 2, 2.5, 3, 3.5]),
        (2, True, [1, 1.5, 2, 2.5, 3, 3.5, 4]),
    ],
)
def test_a_lookahead_reads_the_next_frame_only_for_continuous_tests(substeps, continuous, expected):
    times = []

    def counting(time):
        times.append(time)
        return fast_spheres(time)

    run_report(
        FAST_TESTS, (1, 3, 1), counting, substeps=substeps, continuous=continuous, lookahead=True
    )
    assert times == expected


def test_objects_left_out_at_some_frames_are_named_by_one_run_and_by_merged_chunks():
    """An object whose geometry could not be read at some frames (a NaN vertex a
    modifier makes there) has no shape then; the report names it with the reason, a
    warning says its clashes are missing, and merged chunks name what any part did."""

    def with_broken_frames(time: float) -> FrameSample:
        sample = moving_spheres(time)
        broken = {"Ghost": "NaN or infinite vertex coordinates"} if 12 <= time <= 14 else {}
        return sample._replace(left_out=broken)

    def run_broken(frames):
        return run_report(
            TESTS, frames, with_broken_frames, blender="3.4.1", file="/s.blend"
        ).report

    whole = run_broken((1, 40, 1))
    assert whole["left_out"] == {"Ghost": "NaN or infinite vertex coordinates"}
    [warning] = [text for text in whole["warnings"] if "left out" in text]
    assert "(NaN or infinite vertex coordinates)" in warning and warning.endswith(": Ghost")
    assert whole["clashes"] == run((1, 40, 1))["clashes"]
    schema_validator().validate(json.loads(report_to_json(whole)))
    parts = [json.loads(report_to_json(run_broken(chunk))) for chunk in chunks(1, 40, 1, 7)]
    assert ["left_out" in part for part in parts] == [False, True] + [False] * 4  # 8-14
    assert report_to_json(merge_reports(parts)) == report_to_json(whole)
    assert "left_out" not in run((1, 40, 1))
