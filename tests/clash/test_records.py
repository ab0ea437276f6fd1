"""Clash records: frame intervals, ids, records from hits, statuses across runs, CI failure."""

from __future__ import annotations

import hashlib
import itertools
import json

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from collide_addon.clash.evaluate import concat_hits
from collide_addon.clash.records import (
    carry_over_status,
    clash_id,
    clash_records,
    count_failing,
    effective_fail_on,
    frames_meet_scan,
    merge_frame_intervals,
)
from collide_addon.clash.tests import ClashTest
from tests.clash.helpers import make_hits


def intervals_of(frames, step=1):
    intervals, groups = merge_frame_intervals(frames, step)
    assert intervals.shape == (len(groups), 2) and (groups == 0).all()
    return intervals.tolist()


def test_merge_frame_intervals_examples():
    assert intervals_of(np.array([5, 1, 2, 3, 9, 10, 3])) == [[1, 3], [5, 5], [9, 10]]
    assert intervals_of(np.array([1, 3, 5, 9]), step=2) == [[1, 5], [9, 9]]
    assert intervals_of(np.array([], dtype=np.int64)) == []
    with pytest.raises(ValueError, match="step"):
        merge_frame_intervals(np.array([1]), step=0)


def test_merge_frame_intervals_per_group():
    frames = np.array([4, 1, 2, 2, 3, 9, 1, 5])
    groups = np.array([1, 0, 0, 1, 1, 0, 1, 1])
    intervals, interval_groups = merge_frame_intervals(frames, 1, groups)
    assert intervals.tolist() == [[1, 2], [9, 9], [1, 5]]
    assert interval_groups.tolist() == [0, 0, 1]
    with pytest.raises(ValueError, match="step"):
        clash_records(ClashTest("t"), make_hits([(1, "a", "b", -1.0)]), step=0)


@given(
    st.lists(st.integers(-50, 50), min_size=1, max_size=40),
    st.integers(1, 4),
)
def test_merge_frame_intervals_covers_exactly_the_scanned_frames(offsets, step):
    frames = np.array(offsets) * step + 1
    intervals = intervals_of(frames, step)
    covered = {frame for first, last in intervals for frame in range(first, last + 1, step)}
    assert covered == set(frames.tolist())
    for (_, last), (first, _) in itertools.pairwise(intervals):
        assert first - last > step


@given(
    st.lists(st.tuples(st.integers(0, 3), st.integers(-20, 20)), min_size=1, max_size=40),
    st.integers(1, 3),
)
def test_clash_records_frames_are_the_merged_intervals_of_each_pair(rows, step):
    names = ("a", "b", "c", "d")
    hits = make_hits([(frame * step, "x", names[pair], -1.0) for pair, frame in rows])
    records = {record["b"]: record for record in clash_records(ClashTest("t"), hits, step)}
    assert set(records) == {names[pair] for pair, _ in rows}
    for name, record in records.items():
        frames = np.array([frame * step for pair, frame in rows if names[pair] == name])
        assert record["frames"] == intervals_of(frames, step)


def test_clash_id_is_stable_symmetric_and_documented():
    assert clash_id("t", "a", "b") == clash_id("t", "b", "a")
    assert clash_id("t", "a", "b") != clash_id("u", "a", "b")
    # Names containing separators cannot collide with other splits.
    assert clash_id("t", "a", "b c") != clash_id("t", "a b", "c")
    key = json.dumps(["t", "Cube", "Cube.001"], ensure_ascii=False, separators=(",", ":"))
    expected = hashlib.sha256(key.encode("utf-8")).hexdigest()[:16]
    assert clash_id("t", "Cube.001", "Cube") == expected
    assert len(expected) == 16


def test_clash_records_merges_intervals_and_picks_worst_frame():
    test = ClashTest("walls")
    hits = make_hits(
        [
            (1, "a", "b", -0.1),
            (2, "a", "b", -0.3),
            (3, "a", "b", -0.2),
            (6, "a", "b", -0.3),
            (2, "c", "d", 0.0),
            (4, "c", "d", -0.05),
            (3, "c", "d", -0.05),
        ]
    )
    records = clash_records(test, hits, step=1)
    assert [(record["a"], record["b"]) for record in records] == [("a", "b"), ("c", "d")]
    first, second = records
    assert first["frames"] == [[1, 3], [6, 6]]
    assert first["worst_frame"] == 2  # tie between 2 and 6: earliest wins
    assert first["distance"] == -0.3 and first["point"] == [2.0, 0.0, 0.0]
    assert first["id"] == clash_id("walls", "a", "b")
    assert first["status"] == "new" and first["type"] == "hard" and first["test"] == "walls"
    assert first["kinds"] == ["box", "box"]
    assert second["frames"] == [[2, 4]] and second["worst_frame"] == 3
    assert clash_records(test, hits, step=2)[1]["frames"] == [[2, 4]]
    assert clash_records(test, concat_hits([])) == []


def test_clash_records_step_joins_scan_frames():
    hits = make_hits([(1, "a", "b", -1.0), (6, "a", "b", -1.0), (16, "a", "b", -1.0)])
    assert clash_records(ClashTest("t"), hits, step=5)[0]["frames"] == [[1, 6], [16, 16]]


# --- Statuses -------------------------------------------------------------------------------


def record(identifier, status="new", test="t"):
    return {"id": identifier, "test": test, "a": "x", "b": "y", "status": status}


def test_carry_over_status_all_transitions():
    current = [
        record("kept-new"),
        record("kept-active"),
        record("rev"),
        record("app"),
        record("back"),
        record("fresh"),
    ]
    previous = [
        record("kept-new", "new"),
        record("kept-active", "active"),
        record("rev", "reviewed"),
        record("app", "approved"),
        record("back", "resolved"),
        record("gone", "reviewed"),
        record("old", "resolved"),
        record("other-test", "active", test="not run"),
        record("other-approved", "approved", test="not run"),
        record("other-new", "new", test="not run"),
    ]
    result = carry_over_status(current, previous)
    statuses = {item["id"]: item["status"] for item in result}
    assert statuses == {
        "kept-new": "active",
        "kept-active": "active",
        "rev": "reviewed",
        "app": "approved",
        "back": "new",
        "fresh": "new",
        "gone": "resolved",
        # A test that did not run checked nothing: its clashes were dropped, approvals
        # lost, and came back new in the next full run.
        "other-test": "active",
        "other-approved": "approved",
        "other-new": "active",
    }
    assert [item["id"] for item in result][:6] == [item["id"] for item in current]
    assert current[0]["status"] == "new"  # inputs are not modified
    with_other = carry_over_status(current, previous, test_names=["t", "not run"])
    assert {item["id"]: item["status"] for item in with_other}["other-test"] == "resolved"
    untested = carry_over_status([], previous, test_names=[])
    assert {item["id"]: item["status"] for item in untested} == {
        "kept-new": "active",
        "kept-active": "active",
        "rev": "reviewed",
        "app": "approved",
        "gone": "reviewed",
        "other-test": "active",
        "other-approved": "approved",
        "other-new": "active",
    }


@given(
    st.integers(-20, 20),
    st.integers(0, 30),
    st.integers(1, 7),
    st.lists(st.tuples(st.integers(-30, 50), st.integers(0, 6)), min_size=1, max_size=4),
)
def test_frames_meet_scan_is_an_intersection_with_the_scanned_frames(start, length, step, spans):
    intervals = [[first, first + extra] for first, extra in spans]
    scanned = set(range(start, start + length + 1, step))
    recorded = {frame for first, last in intervals for frame in range(first, last + 1)}
    assert frames_meet_scan(intervals, (start, start + length, step)) == bool(scanned & recorded)


def test_frames_meet_scan_examples():
    assert not frames_meet_scan([[4, 6]], (1, 1, 1))  # a one-frame run before the clash
    assert frames_meet_scan([[4, 6]], (1, 10, 5))  # 1, 6
    assert not frames_meet_scan([[2, 4]], (1, 10, 5))  # between 1 and 6
    assert frames_meet_scan([[20, 20], [2, 4]], (1, 10, 3))  # 1, 4, 7, 10
    assert frames_meet_scan([[11, 12]], (1, 12, 5))  # 1, 6, 11
    assert not frames_meet_scan([[12, 14]], (1, 14, 5))  # the end, 14, is no scanned frame


def with_frames(item, frames):
    return {**item, "frames": frames}


def test_carry_over_status_keeps_clashes_the_scan_could_not_see():
    # A baseline from frames 1-10; this run scans frame 1 only. "early" (frames 1-2) is
    # gone at frame 1: resolved. "later" (4-6) and "late-rev" (8) lie outside: carried
    # over as they were, the new one as active (known before this run), and counted by
    # a gate on any open clash.
    previous = [
        with_frames(record("early", "active"), [[1, 2]]),
        with_frames(record("later", "new"), [[4, 6]]),
        with_frames(record("late-rev", "reviewed"), [[8, 8]]),
        with_frames(record("old", "resolved"), [[3, 3]]),
    ]
    result = carry_over_status([], previous, ["t"], (1, 1, 1))
    assert result == [
        dict(previous[0], status="resolved"),
        dict(previous[1], status="active"),
        previous[2],
    ]
    assert count_failing(result, "new") == 0 and count_failing(result, "any") == 2
    # A run over frames 1-10 step 5 (1 and 6) could see "later" but not "late-rev".
    statuses = {
        item["id"]: item["status"] for item in carry_over_status([], previous, ["t"], (1, 10, 5))
    }
    assert statuses == {"early": "resolved", "later": "resolved", "late-rev": "reviewed"}
    # Found by this run, it is this run's clash, whatever frames the baseline gave it.
    found = carry_over_status([with_frames(record("later"), [[1, 1]])], previous, ["t"], (1, 1, 1))
    assert {item["id"]: item["status"] for item in found}["later"] == "active"
    # Without frames every baseline clash was in reach (the rule before frames were known).
    assert {item["status"] for item in carry_over_status([], previous[:3], ["t"])} == {"resolved"}


def test_effective_fail_on():
    assert effective_fail_on(None, has_baseline=True) == "new"
    assert effective_fail_on(None, has_baseline=False) == "any"
    assert effective_fail_on("never", has_baseline=True) == "never"
    assert effective_fail_on("new", has_baseline=False) == "new"


def test_count_failing():
    clashes = [
        record("1", "new"),
        record("2", "active"),
        record("3", "reviewed"),
        record("4", "approved"),
        record("5", "resolved"),
        record("6", "new"),
    ]
    assert count_failing(clashes, "new") == 2
    assert count_failing(clashes, "any") == 4
    assert count_failing(clashes, "never") == 0
    with pytest.raises(ValueError, match="fail_on"):
        count_failing(clashes, "all")
