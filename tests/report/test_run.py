"""The report run without Blender: frame loop, statuses, fail_on, writers, callbacks."""

from __future__ import annotations

import csv
import io
import json
import xml.etree.ElementTree as ElementTree
import zipfile

import numpy as np
import pytest

from collide_addon.clash.evaluate import (
    ObjectMetadata,
    concat_hits,
    evaluate_frame,
    object_table,
    prepare_test,
)
from collide_addon.clash.records import clash_records
from collide_addon.clash.tests import ClashTest, Selector
from collide_addon.core import ShapeBatch
from collide_addon.core.contact import largest_coordinate
from collide_addon.report import run as run_module
from collide_addon.report.bcf_report import object_ifc_guid, topic_guid
from collide_addon.report.csv_report import csv_text
from collide_addon.report.html_report import html_text
from collide_addon.report.json_report import build_report, read_json_report, report_to_json
from collide_addon.report.merge import merge_reports
from collide_addon.report.run import (
    ClashRunError,
    FrameSample,
    ReadFrame,
    check_output_paths,
    frames_as_one_argument,
    object_entries,
    other_model_warning,
    parse_frame_range,
    run_report,
    sample_count,
    sample_times,
    scanned_frames_text,
    unchecked_warnings,
)
from collide_dev.synthetic import mixed_scene
from tests.report.sample_report import (
    EVIL,
    NAMES,
    PNG,
    QUOTED,
    QUOTED_IFC_GUID,
    SAMPLE_OBJECTS,
    SAMPLE_TESTS,
    make_report,
    read_sample_frame,
    sample_batch,
)
from tests.report.test_json_report import schema_validator


def test_run_report_is_the_pipeline_by_hand():
    table = object_table(SAMPLE_OBJECTS)
    records = []
    for test in SAMPLE_TESTS:
        prepared = prepare_test(test, table)
        hits = [evaluate_frame(prepared, sample_batch(frame), frame) for frame in (1, 2, 3, 4)]
        records += clash_records(test, concat_hits(hits), step=1)
    clashing = {name for record in records for name in (record["a"], record["b"])}
    by_hand = build_report(
        tests=SAMPLE_TESTS,
        clashes=records,
        frames=(1, 4, 1),
        blender="5.0.1",
        file="/tmp/scene <1>.blend",
        objects={
            name: {"ifc_guid": object_ifc_guid(name, obj.properties)}
            for name, obj in zip(NAMES, SAMPLE_OBJECTS, strict=True)
            if name in clashing
        },
        reach=max(largest_coordinate(sample_batch(frame)) for frame in (1, 2, 3, 4)),
    )
    assert make_report() == by_hand
    assert by_hand["objects"][QUOTED]["ifc_guid"] == QUOTED_IFC_GUID


def test_a_scan_far_from_the_origin_reports_its_reach_and_warns():
    def read_frame(time):
        # Two touching boxes 5 km out on the first frame, moved 1 km further on the next.
        centers = np.array([[5000.0, 0.0, 0.0], [5001.0, 0.0, 0.0]])
        centers[:, 0] += 1000.0 * (time - 1)
        batch = ShapeBatch.boxes(centers, np.repeat(np.eye(3)[None], 2, axis=0), [[0.5] * 3] * 2)
        return FrameSample(batch, [ObjectMetadata("A"), ObjectMetadata("B")])

    report = run_report([ClashTest("touch", test_type="touching")], (1, 2, 1), read_frame).report
    assert report["reach"] == 6001.5
    (warning,) = report["warnings"]
    assert "6,002 m from the origin" in warning and "only to 6 mm " in warning
    near = run_report([ClashTest("touch", test_type="touching")], (1, 1, 1), read_sample_frame)
    assert near.report["reach"] < 1000.0 and near.report["warnings"] == []


def test_sample_times_with_substeps():
    assert list(sample_times((1, 3, 1))) == [(1, 1.0), (2, 2.0), (3, 3.0)]
    assert list(sample_times((1, 5, 2), substeps=2)) == [
        (1, 1.0),
        (1, 2.0),
        (3, 3.0),
        (3, 4.0),
        (5, 5),
    ]


@pytest.mark.parametrize(
    ("frames", "substeps"), [((1, 1, 1), 1), ((1, 5, 2), 2), ((-3, 7, 3), 5), ((0, 10, 10), 64)]
)
def test_sample_count_is_the_number_of_samples(frames, substeps):
    assert sample_count(frames, substeps) == len(list(sample_times(frames, substeps)))


@pytest.mark.parametrize(
    ("frames", "substeps", "expected"),
    [
        ((1, 1_048_575, 1), 1, "beyond Blender's frame range -1048574 to 1048574"),
        ((-1_048_575, 1, 1), 1, "beyond Blender's frame range"),
        ((1, 10**19, 1), 1, "beyond Blender's frame range"),
        ((1, 10, 1), 65, "substeps must be <= 64, got 65"),
        ((1, 2, 1), 1_000_000_000, "substeps must be <= 64"),
        ((-1_000_000, 1_000_000, 1), 1, "2000001 samples .* over the limit of 1000000"),
        ((1, 100_000, 1), 11, "over the limit of 1000000"),
    ],
)
def test_scan_limits_are_refused_before_reading_a_frame(frames, substeps, expected):
    # Blender clamps frames beyond its range silently (the report named frames never
    # scanned), and a billion substeps or ten million frames ran out of memory first.
    def read_frame(time):
        raise AssertionError("no frame may be read")

    with pytest.raises(ClashRunError, match=expected):
        run_report([ClashTest("hard")], frames, read_frame, substeps=substeps)


def test_scan_keeps_no_per_sample_state_for_clash_free_frames():
    # 3,000 clash-free samples leave nothing behind per sample: the samples are
    # generated lazily and empty frame hits are not kept.
    import tracemalloc

    objects = [ObjectMetadata("a"), ObjectMetadata("b")]
    batch = ShapeBatch.spheres([[0.0, 0, 0], [5.0, 0, 0]], [1.0, 1.0])

    def read_frame(time):
        return FrameSample(batch, objects)

    # A first long run, untraced, so that what runs set up once and keep (module
    # imports, numpy's caches of small blocks, which fill over a few thousand samples) is
    # not counted: alone in its file, the test failed on them.
    run_report([ClashTest("hard")], (1, 3_000, 1), read_frame)
    tracemalloc.start()
    run_report([ClashTest("hard")], (1, 200, 1), read_frame)
    small = tracemalloc.get_traced_memory()[1]
    tracemalloc.reset_peak()
    run_report([ClashTest("hard")], (1, 3_000, 1), read_frame)
    large = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert large < small + 64 * 1024


def test_substeps_catch_a_fast_mover_between_frames():
    objects = [ObjectMetadata("bullet"), ObjectMetadata("wall")]

    def read_frame(time):
        # The bullet jumps from x = -2 at frame 1 to x = 2 at frame 2 through a thin wall.
        x = 4.0 * time - 6.0
        batch = ShapeBatch.concat(
            [
                ShapeBatch.spheres([[x, 0.0, 0.0]], [0.2]),
                ShapeBatch.boxes(
                    [[0.0, 0.0, 0.0]], [[[1, 0, 0], [0, 1, 0], [0, 0, 1]]], [[0.05, 1, 1]]
                ),
            ]
        )
        return FrameSample(batch, objects)

    tests = [ClashTest("hard")]
    assert run_report(tests, (1, 2, 1), read_frame).report["clashes"] == []
    clashes = run_report(tests, (1, 2, 1), read_frame, substeps=2).report["clashes"]
    assert [(clash["a"], clash["b"], clash["frames"]) for clash in clashes] == [
        ("bullet", "wall", [[1, 1]])
    ]


def fast_ball_and_slab(objects_moving=("ball",)):
    """A 5 cm ball at 10 m per frame through a 1 cm slab: x = 10 (time - 1) - 5, so it
    first touches the slab (x = -0.03) at frame 1.497; `read_frame` for a run."""
    objects = [ObjectMetadata("ball"), ObjectMetadata("slab")]

    def read_frame(time):
        x = 10.0 * (time - 1.0) - 5.0
        batch = ShapeBatch.concat(
            [
                ShapeBatch.spheres([[x, 0.0, 0.0]], [0.025]),
                ShapeBatch.boxes([[0.0, 0.0, 0.0]], [np.eye(3)], [[0.005, 1.0, 1.0]]),
            ]
        )
        return FrameSample(batch, objects)

    return read_frame


@pytest.mark.parametrize("how", ["flag", "test"])
def test_continuous_finds_what_samples_miss_with_its_time_of_first_contact(how):
    read_frame = fast_ball_and_slab()
    plain = run_report([ClashTest("touch", test_type="touching")], (1, 3, 1), read_frame)
    assert plain.report["clashes"] == []
    if how == "flag":
        result = run_report(
            [ClashTest("touch", test_type="touching")], (1, 3, 1), read_frame, continuous=True
        )
    else:
        tests = [ClashTest("touch", test_type="touching", continuous=True)]
        result = run_report(tests, (1, 3, 1), read_frame)
    assert result.report["tests"][0]["continuous"] is True
    (clash,) = result.report["clashes"]
    assert (clash["a"], clash["b"], clash["frames"], clash["worst_frame"]) == (
        "ball",
        "slab",
        [[1, 1]],
        1,
    )
    assert abs(clash["toi"] - 1.497) <= 1e-3
    assert clash["relation"] == "touching" and clash["geometry"] == "proxy"
    # The contact is on the slab's face, the normal along x.
    assert abs(clash["witnesses"][1][0] + 0.005) <= 1e-4
    assert abs(clash["witnesses"][0][0] + 0.005) <= 1e-4


def crowd_in_motion(count: int = 240):
    """`read_frame` of `count` mixed shapes, each moving and turning fast and steadily:
    many pairs come into contact between samples."""
    rng = np.random.default_rng(11)
    scene = mixed_scene(rng, count)
    velocities = rng.uniform(-0.8, 0.8, (count, 3))
    spins = rng.uniform(-0.3, 0.3, count)
    objects = [ObjectMetadata(f"shape.{index:03d}") for index in range(count)]

    def read_frame(time):
        angles = spins * (time - 1.0)
        cos, sin = np.cos(angles), np.sin(angles)
        turns = np.zeros((count, 3, 3))
        turns[:, 0, 0], turns[:, 0, 1], turns[:, 1, 0], turns[:, 1, 1] = cos, -sin, sin, cos
        turns[:, 2, 2] = 1.0
        batch = ShapeBatch(
            kinds=scene.kinds,
            centers=scene.centers + (time - 1.0) * velocities,
            rotations=turns @ scene.rotations,
            half_extents=scene.half_extents,
            radii=scene.radii,
        )
        return FrameSample(batch, objects)

    return read_frame


@pytest.mark.parametrize(
    ("limit", "at_once"),
    [("INTERVALS_AT_ONCE", 1), ("INTERVALS_AT_ONCE", 3), ("SHAPES_AT_ONCE", 500)],
)
def test_intervals_advanced_together_give_what_each_gives_alone(monkeypatch, limit, at_once):
    # A scan advances the pairs of INTERVALS_AT_ONCE intervals in the same passes; a
    # chunk of a split scan groups other intervals together than one run does, so the
    # grouping must not change a bit of the report.
    read_frame = crowd_in_motion()
    tests = [
        ClashTest("hard", continuous=True),
        ClashTest("near", test_type="clearance", tolerance=0.1),
    ]
    whole = run_report(tests, (1, 12, 1), read_frame, substeps=2, continuous=True).report
    assert sum("toi" in clash for clash in whole["clashes"]) > 20
    monkeypatch.setattr(run_module, limit, at_once)
    grouped = run_report(tests, (1, 12, 1), read_frame, substeps=2, continuous=True).report
    assert json.dumps(grouped) == json.dumps(whole)


def test_continuous_keeps_sampled_clashes_as_they_are():
    """A ball that ends the interval inside the slab is a sampled clash: no toi; one
    that sweeps through between substeps gets one only where no sample sees it."""
    objects = [ObjectMetadata("ball"), ObjectMetadata("slab")]

    def read_frame(time):
        x = -1.0 + (time - 1.0)
        batch = ShapeBatch.concat(
            [
                ShapeBatch.spheres([[x, 0.0, 0.0]], [0.5]),
                ShapeBatch.boxes([[0.0, 0.0, 0.0]], [np.eye(3)], [[0.005, 1.0, 1.0]]),
            ]
        )
        return FrameSample(batch, objects)

    tests = [ClashTest("hard")]
    sampled = run_report(tests, (1, 3, 1), read_frame).report["clashes"]
    continuous = run_report(tests, (1, 3, 1), read_frame, continuous=True).report["clashes"]
    assert [clash["frames"] for clash in sampled] == [[[2, 2]]]
    assert continuous == sampled


def test_continuous_with_substeps_reports_the_sub_interval_time():
    read_frame = fast_ball_and_slab()
    tests = [ClashTest("touch", test_type="touching")]
    (clash,) = run_report(tests, (1, 3, 1), read_frame, substeps=3, continuous=True).report[
        "clashes"
    ]
    assert abs(clash["toi"] - 1.497) <= 1e-3 and clash["worst_frame"] == 1


def test_every_writer_carries_the_time_of_first_contact(tmp_path):
    paths = {kind: tmp_path / f"r.{kind}" for kind in ("json", "html", "csv", "bcf")}
    read_frame = fast_ball_and_slab()
    tests = [ClashTest("touch", test_type="touching", continuous=True), ClashTest("hard")]
    report = run_report(
        tests,
        (1, 3, 1),
        read_frame,
        json_path=paths["json"],
        html_path=paths["html"],
        csv_path=paths["csv"],
        bcf_path=paths["bcf"],
    ).report
    (clash,) = report["clashes"]
    schema_validator().validate(json.loads(paths["json"].read_text(encoding="utf-8")))
    assert read_json_report(paths["json"])["clashes"][0]["toi"] == clash["toi"]
    rows = list(csv.DictReader(io.StringIO(paths["csv"].read_text(encoding="utf-8"))))
    assert float(rows[0]["toi"]) == clash["toi"]
    page = paths["html"].read_text(encoding="utf-8")
    assert f"(first contact {clash['toi']:.4f})" in page
    assert f"<title>first contact at frame {clash['toi']:.4f}</title>" in page
    assert page.count('<polygon class="toi"') == 1
    with zipfile.ZipFile(paths["bcf"]) as archive:
        markup = archive.read(f"{topic_guid(clash['id'])}/markup.bcf")
    description = ElementTree.fromstring(markup).findtext("Topic/Description")
    assert f"first contact at frame {clash['toi']:.4f}" in description


def test_sampled_clashes_have_an_empty_toi_cell_and_no_diamond(tmp_path):
    report = run_report(SAMPLE_TESTS, (1, 4, 1), read_sample_frame).report
    rows = list(csv.DictReader(io.StringIO(csv_text(report))))
    assert rows and all(row["toi"] == "" for row in rows)
    assert '<polygon class="toi"' not in html_text(report)


def test_baseline_statuses_and_fail_on():
    first = run_report(SAMPLE_TESTS, (1, 4, 1), read_sample_frame)
    assert first.fail_on == "any" and first.failing == 2 and first.exit_status == 1
    baseline = dict(first.report)
    baseline["clashes"] = [dict(clash, status="approved") for clash in first.report["clashes"]]
    again = run_report(SAMPLE_TESTS, (1, 4, 1), read_sample_frame, baseline=baseline)
    assert again.fail_on == "new" and again.failing == 0 and again.exit_status == 0
    assert {clash["status"] for clash in again.report["clashes"]} == {"approved"}
    # Only frame 4, against a baseline that saw both clashes there: the moving clash is
    # gone (resolved), the touching one stays approved.
    seen_at_4 = [dict(clash, frames=[[1, 4]]) for clash in baseline["clashes"]]
    later = run_report(
        SAMPLE_TESTS, (4, 4, 1), read_sample_frame, baseline=dict(baseline, clashes=seen_at_4)
    )
    statuses = {clash["test"]: clash["status"] for clash in later.report["clashes"]}
    assert statuses == {"hard": "resolved", "touch": "approved"}
    counted = run_report(SAMPLE_TESTS, (1, 4, 1), read_sample_frame, fail_on="never")
    assert counted.fail_on == "never" and counted.failing == 0


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"tests": []}, "no clash tests given"),
        ({"frames": (4, 1, 1)}, "bad frame range 4-1:1"),
        ({"frames": (1, 4, 0)}, "bad frame range 1-4:0"),
        ({"substeps": 0}, "substeps must be >= 1, got 0"),
        ({"fail_on": "all"}, "fail_on must be one of new, any, never"),
    ],
)
def test_bad_arguments_fail_before_reading_a_frame(arguments, message):
    def read_frame(time):
        raise AssertionError("no frame should be read")

    options = {"tests": SAMPLE_TESTS, "frames": (1, 4, 1), **arguments}
    with pytest.raises(ClashRunError, match=message):
        run_report(options.pop("tests"), options.pop("frames"), read_frame, **options)


def test_empty_scans_and_read_errors():
    empty = ShapeBatch.spheres([[0.0, 0.0, 0.0]], [1.0]).take([])
    with pytest.raises(
        ClashRunError, match=r"^no objects take part at any of frames 3-4 \(scope 'VISIBLE'\)$"
    ):
        run_report(SAMPLE_TESTS, (3, 4, 1), lambda time: FrameSample(empty, []), scope="VISIBLE")
    with pytest.raises(ClashRunError, match=r"^no objects take part at frame 3$"):
        run_report(SAMPLE_TESTS, (3, 4, 2), lambda time: FrameSample(empty, []))
    typo = [ClashTest("pipes", Selector(name="Pipe*"))]
    with pytest.raises(
        ClashRunError, match=r"^set A of test 'pipes' matches no object at any of frames 1-4:3$"
    ):
        run_report(typo, (1, 4, 3), read_sample_frame)

    def unreadable(time):
        if time >= 2:
            raise ClashRunError("object 'Cube' has NaN in its matrix")
        return read_sample_frame(time)

    with pytest.raises(ClashRunError, match=r"^frame 2: object 'Cube' has NaN in its matrix$"):
        run_report(SAMPLE_TESTS, (1, 4, 1), unreadable)


PIPE_VS_BEAM = [ClashTest("pipe vs beam", Selector(name="Pipe"), Selector(name="Beam"))]


def parts_on_a_turntable(time: float) -> FrameSample:
    """Two touching unit cubes on a turntable turning 2 degrees a frame about a pivot
    3 m away: one assembly, never closer than touching."""
    turn = np.radians(2.0) * time
    cos, sin = np.cos(turn), np.sin(turn)
    rotation = np.array([[cos, -sin, 0.0], [sin, cos, 0.0], [0.0, 0.0, 1.0]])
    pivot = np.array([3.0, 4.0, 0.0])
    centers = (np.array([[0.0, 0.0, 0.0], [1.0, 0.0, 0.0]]) - pivot) @ rotation.T + pivot
    batch = ShapeBatch.boxes(centers, [rotation] * 2, [[0.5, 0.5, 0.5]] * 2)
    return FrameSample(batch, [ObjectMetadata("PartA"), ObjectMetadata("PartB")])


def test_parts_turning_as_one_clash_neither_at_nor_between_frames():
    """Each centre interpolated on a straight chord, each turn about its own centre:
    the parts met 0.15 mm deep between every two frames, a hard clash of the continuous
    test over frames 1-9 that no frame shows."""
    for continuous in (False, True):
        tests = [ClashTest("hard", continuous=continuous)]
        assert run_report(tests, (1, 10, 1), parts_on_a_turntable).report["clashes"] == []


def prop_grown_at_frame_5(time: float) -> FrameSample:
    """4D sequencing by scale: a prop kept tiny until frame 5, full size from there,
    inside a column."""
    radius = 1.0 if time >= 5 else 0.01
    batch = ShapeBatch.spheres([[0.0, 0, 0], [1.5, 0, 0]], [radius, 1.0])
    return FrameSample(batch, [ObjectMetadata("Prop"), ObjectMetadata("Column")])


def test_a_continuous_test_finds_what_the_samples_find_when_an_object_grows():
    """The swept bounds held the start shape moved to the end: the prop grown since was
    left out of frame 5's candidates, and --continuous lost the clash the samples find."""
    sampled = run_report([ClashTest("hard")], (1, 10, 1), prop_grown_at_frame_5).report
    swept = run_report(
        [ClashTest("hard", continuous=True)], (1, 10, 1), prop_grown_at_frame_5
    ).report
    assert [clash["frames"] for clash in sampled["clashes"]] == [[[5, 10]]]
    assert swept["clashes"] == sampled["clashes"]


def bullet_through_slab_then_resting_in_it(time: float) -> FrameSample:
    """A bullet passes a thin slab between frames 1 and 2 (x -1 to 1), waits at x 3,
    and lies in the slab from frame 15."""
    x = -1.0 + 2.0 * (time - 1.0) if time <= 2 else 3.0 if time < 15 else 0.0
    batch = ShapeBatch.concat(
        [
            ShapeBatch.spheres([[x, 0.0, 0.0]], [0.1]),
            ShapeBatch.boxes([[0.0, 0.0, 0.0]], [np.eye(3)], [[0.05, 1.0, 1.0]]),
        ]
    )
    return FrameSample(batch, [ObjectMetadata("Bullet"), ObjectMetadata("Slab")])


def test_a_sampled_clash_keeps_the_frames_it_was_found_on_between_samples():
    """The passage between frames 1 and 2 was dropped from the frames of a clash also
    found at samples (15-20): [[15, 20]]."""
    tests = [ClashTest("hard", continuous=True)]
    [clash] = run_report(tests, (1, 20, 1), bullet_through_slab_then_resting_in_it).report[
        "clashes"
    ]
    assert clash["frames"] == [[1, 1], [15, 20]]
    assert "toi" not in clash and clash["worst_frame"] == 15


def bullet_past_a_slab_as_a_beam_appears(time: float) -> FrameSample:
    """A bullet passes a thin slab between frames 3 and 4 (x -1 to 1), while a beam far
    away appears at frame 4 (4D sequencing)."""
    x = -1.0 + 2.0 * (time - 3.0)
    shapes = [
        ShapeBatch.spheres([[x, 0.0, 0.0]], [0.1]),
        ShapeBatch.boxes([[0.0, 0.0, 0.0]], [np.eye(3)], [[0.05, 1.0, 1.0]]),
    ]
    objects = [ObjectMetadata("Bullet"), ObjectMetadata("Slab")]
    if time >= 4:
        shapes.append(ShapeBatch.spheres([[0.0, 50.0, 0.0]], [1.0]))
        objects.append(ObjectMetadata("Beam"))
    return FrameSample(ShapeBatch.concat(shapes), objects)


def test_a_continuous_test_sweeps_the_objects_of_both_samples_when_another_appears():
    """Who takes part changed between frames 3 and 4 (the beam built), so that interval
    was swept for no pair: the bullet passing the slab there was missed."""
    tests = [ClashTest("hard", continuous=True)]
    [clash] = run_report(tests, (1, 6, 1), bullet_past_a_slab_as_a_beam_appears).report["clashes"]
    assert (clash["a"], clash["b"], clash["frames"]) == ("Bullet", "Slab", [[3, 3]])
    assert 3.0 < clash["toi"] < 4.0
    # Chunks that end on frame 3 look ahead to 4 and find it there too.
    chunk = run_report(tests, (1, 3, 1), bullet_past_a_slab_as_a_beam_appears, lookahead=True)
    assert [clash["frames"] for clash in chunk.report["clashes"]] == [[[3, 3]]]


def beam_from_frame_5(time: float) -> FrameSample:
    """4D construction sequencing: the pipe stands from the start; the beam, through it,
    is built at frame 5 (hidden before, as animated visibility hides it)."""
    if time < 5:
        return FrameSample(ShapeBatch.spheres([[0.0, 0, 0]], [1.0]), [ObjectMetadata("Pipe")])
    batch = ShapeBatch.spheres([[0.0, 0, 0], [1.5, 0, 0]], [1.0, 1.0])
    return FrameSample(batch, [ObjectMetadata("Pipe"), ObjectMetadata("Beam")])


def test_a_set_may_match_objects_at_later_frames_only():
    # The test was refused because its set B matched nothing at frame 1.
    report = run_report(PIPE_VS_BEAM, (1, 10, 1), beam_from_frame_5).report
    found = [(clash["a"], clash["b"], clash["frames"]) for clash in report["clashes"]]
    assert found == [("Pipe", "Beam", [[5, 10]])] and "unmatched_sets" not in report
    # Matching nothing at every scanned frame is still refused, naming the frames.
    with pytest.raises(
        ClashRunError,
        match=r"^set B of test 'pipe vs beam' matches no object at any of frames 1-4$",
    ):
        run_report(PIPE_VS_BEAM, (1, 4, 1), beam_from_frame_5)


def test_a_chunk_lists_the_sets_that_match_nothing_at_its_frames_for_the_merge():
    # A chunk's frames may all come before the beam is built: later chunks see it, so the
    # chunk lists the set and the merge decides (report.merge.check_sets_matched).
    tests = [*PIPE_VS_BEAM, ClashTest("beams", Selector(name="Beam"))]
    chunk = run_report(tests, (1, 4, 1), beam_from_frame_5, lookahead=True).report
    assert chunk["clashes"] == [] and chunk["unmatched_sets"] == [
        {"test": "pipe vs beam", "set": "B"},
        {"test": "beams", "set": "A"},  # a self test's B is its A
    ]
    schema_validator().validate(chunk)
    # The look-ahead frame (5, read for continuous tests) is the next chunk's: the beam
    # there does not count for this one.
    swept = run_report(tests, (1, 4, 1), beam_from_frame_5, lookahead=True, continuous=True)
    assert swept.report["unmatched_sets"] == chunk["unmatched_sets"]
    assert (
        "unmatched_sets"
        not in run_report(tests, (3, 6, 1), beam_from_frame_5, lookahead=True).report
    )
    # The scan's last chunk has no look-ahead: marked a chunk, it lists its sets too
    # (the pipe demolished before its frames is the merge's to decide on).
    last = run_report(tests, (1, 4, 1), beam_from_frame_5, chunk=True).report
    assert last["unmatched_sets"] == chunk["unmatched_sets"] and "lookahead" not in last
    # No object at all in a chunk: every set is listed, nothing is refused.
    empty = ShapeBatch.spheres([[0.0, 0.0, 0.0]], [1.0]).take([])
    nothing = run_report(tests, (1, 2, 1), lambda time: FrameSample(empty, []), lookahead=True)
    assert len(nothing.report["unmatched_sets"]) == 3


@pytest.mark.parametrize(
    ("frames", "text"),
    [
        ((3, 3, 1), "frame 3"),
        ((3, 4, 2), "frame 3"),
        ((1, 10, 1), "frames 1-10"),
        ((1, 10, 3), "frames 1-10:3"),
    ],
)
def test_scanned_frames_text(frames, text):
    assert scanned_frames_text(frames) == text


def test_a_baseline_clash_outside_the_scanned_frames_keeps_its_status():
    # A baseline of frames 1-10 holds the beam's clash at frames 5-10, status new. A run
    # of frames 1-4 could not see it: it was marked resolved and the run passed.
    tests = [ClashTest("all")]
    baseline = run_report(tests, (1, 10, 1), beam_from_frame_5).report
    (clash,) = baseline["clashes"]
    read_times = []

    def reading(time):
        read_times.append(time)
        return beam_from_frame_5(time)

    early = run_report(tests, (1, 4, 1), reading, baseline=baseline, suggest_fixes=True)
    # Carried over, no fix looked for; known before this run, so active, not new: a
    # gate on new clashes passes, one on any counts it.
    assert early.report["clashes"] == [dict(clash, status="active")]
    assert early.failing == 0 and early.exit_status == 0
    assert early.report["summary"]["by_status"]["active"] == 1
    counted = run_report(tests, (1, 4, 1), beam_from_frame_5, baseline=baseline, fail_on="any")
    assert counted.failing == 1 and counted.exit_status == 1
    assert early.report["warnings"] == [
        "1 clash(es) of the baseline lie outside the scanned frames 1-4, so they were not "
        "checked: they keep the baseline's statuses, new ones as active"
    ]
    assert max(read_times) < 5  # its worst frame, 5, was not read for a fix either
    schema_validator().validate(early.report)
    approved = dict(baseline, clashes=[dict(clash, status="approved")])
    kept = run_report(tests, (1, 4, 1), beam_from_frame_5, baseline=approved, fail_on="any")
    assert kept.report["clashes"][0]["status"] == "approved" and kept.exit_status == 0
    # A run that scans one of its frames does check it: found again, or gone.
    again = run_report(tests, (1, 5, 1), beam_from_frame_5, baseline=baseline).report
    assert again["clashes"] == [dict(clash, status="active", frames=[[5, 5]])]
    gone = run_report(tests, (1, 5, 1), lambda time: beam_from_frame_5(1), baseline=baseline)
    assert gone.report["clashes"] == [dict(clash, status="resolved")]
    assert gone.report["warnings"] == []


def test_a_run_of_some_tests_keeps_the_other_tests_clashes_and_their_statuses():
    """One discipline's tests run against a shared baseline: the other tests' approved
    clashes were dropped without a word, and came back new in the next full run."""
    tests = [ClashTest("mep"), ClashTest("structure")]
    baseline = run_report(tests, (1, 10, 1), beam_from_frame_5).report
    baseline["clashes"] = [dict(clash, status="approved") for clash in baseline["clashes"]]
    mep = run_report(tests[:1], (1, 10, 1), beam_from_frame_5, baseline=baseline, fail_on="any")
    statuses = {clash["test"]: clash["status"] for clash in mep.report["clashes"]}
    assert statuses == {"mep": "approved", "structure": "approved"} and mep.exit_status == 0
    assert mep.report["warnings"] == [
        "1 clash(es) of the baseline belong to tests this run did not run ('structure'), so "
        "they were not checked: they keep the baseline's statuses, new ones as active (a "
        "renamed test finds its clashes anew)"
    ]
    schema_validator().validate(mep.report)
    # The next full run against that report finds them approved.
    full = run_report(tests, (1, 10, 1), beam_from_frame_5, baseline=mep.report, fail_on="new")
    assert {clash["status"] for clash in full.report["clashes"]} == {"approved"}
    assert full.exit_status == 0


def test_a_baseline_of_another_model_is_warned_about():
    """many.blend's report as the baseline of small.blend: its 3,000 clashes came out
    resolved without a word."""
    tests = [ClashTest("all")]
    baseline = run_report(tests, (1, 10, 1), beam_from_frame_5, file="/ci/a/many.blend").report
    other = run_report(tests, (1, 4, 1), beam_from_frame_5, baseline=baseline, file="small.blend")
    assert other.report["warnings"][0] == (
        "the baseline was made from many.blend, this run scans small.blend: if that is "
        "another model, its clashes come out resolved here (a renamed model is fine)"
    )
    # The same model elsewhere (another checkout, another system) is no other model.
    for file in ("/ci/b/many.blend", "C:\\work\\many.blend"):
        again = run_report(tests, (1, 10, 1), beam_from_frame_5, baseline=baseline, file=file)
        assert again.report["warnings"] == []
    assert other_model_warning(None, "a.blend") == other_model_warning(baseline, None) == []


def test_unchecked_warnings_count_open_clashes_of_tests_not_run_and_outside_the_frames():
    clashes = [
        {"test": "t", "status": "new", "frames": [[5, 10]]},
        {"test": "t", "status": "resolved", "frames": [[7, 7]]},
        {"test": "t", "status": "active", "frames": [[1, 2]]},
    ]
    assert unchecked_warnings(clashes, (1, 4, 1), ["t"]) == [
        "1 clash(es) of the baseline lie outside the scanned frames 1-4, so they were not "
        "checked: they keep the baseline's statuses, new ones as active"
    ]
    assert unchecked_warnings(clashes, (1, 10, 1), ["t"]) == []
    # Counted once, as of a test that did not run, wherever its frames lie.
    others = [{**clash, "test": name} for clash in clashes for name in "uvwx"]
    assert unchecked_warnings(others, (1, 10, 1), ["t"]) == [
        "8 clash(es) of the baseline belong to tests this run did not run ('u', 'v', 'w' and "
        "1 more), so they were not checked: they keep the baseline's statuses, new ones as "
        "active (a renamed test finds its clashes anew)"
    ]


def test_objects_taking_part_may_change_between_frames():
    def read_frame(time):
        batch, objects = read_sample_frame(time)[:2]
        if time == 2:
            return FrameSample(batch.take([0, 1]), objects[:2])
        return FrameSample(batch, objects)

    clashes = run_report(SAMPLE_TESTS, (1, 4, 1), read_frame).report["clashes"]
    frames = {clash["test"]: clash["frames"] for clash in clashes}
    assert frames == {"hard": [[1, 3]], "touch": [[1, 1], [3, 4]]}


def test_object_entries_give_instances_no_ifc_guid_of_their_instancer():
    metadata = {
        "Wall": ObjectMetadata("Wall", properties={"IfcGuid": QUOTED_IFC_GUID}),
        "Rack/Pipe[0]": ObjectMetadata(
            "Rack/Pipe[0]",
            properties={"IfcGuid": QUOTED_IFC_GUID},
            instance_source="instancer:Rack",
            is_instance=True,
        ),
    }
    clashes = [{"a": "Wall", "b": "Rack/Pipe[0]"}, {"a": "Gone", "b": "Wall"}]
    assert object_entries(clashes, metadata) == {
        "Wall": {"ifc_guid": QUOTED_IFC_GUID},
        "Rack/Pipe[0]": {"ifc_guid": object_ifc_guid("Rack/Pipe[0]")},
        "Gone": {"ifc_guid": object_ifc_guid("Gone")},
    }


def test_writes_every_report_with_thumbnails_and_reports_progress(tmp_path):
    calls = []
    rendered = []

    def thumbnails(clashes):
        rendered.append([clash["id"] for clash in clashes])
        return {clashes[0]["id"]: PNG}

    paths = {f"{kind}_path": tmp_path / f"r.{kind}" for kind in ("json", "html", "csv", "bcf")}
    result = run_report(
        SAMPLE_TESTS,
        (1, 4, 1),
        read_sample_frame,
        render_thumbnails=thumbnails,
        progress=lambda *arguments: calls.append(arguments),
        **paths,
    )
    assert read_json_report(paths["json_path"]) == json.loads(json.dumps(result.report))
    assert rendered == [[clash["id"] for clash in result.report["clashes"]]]
    assert paths["html_path"].read_text(encoding="utf-8").count("<img") == 1
    assert paths["csv_path"].is_file() and paths["bcf_path"].is_file()
    assert [call[:3] for call in calls] == [(1, 4, 1), (2, 4, 2), (3, 4, 3), (4, 4, 4)]
    assert [call[3] for call in calls] == sorted(call[3] for call in calls)
    assert EVIL in paths["json_path"].read_text(encoding="utf-8")


def test_thumbnails_are_rendered_only_for_a_report_that_holds_them(tmp_path):
    # A run with --thumbnails writing only JSON or CSV rendered every picture (a minute
    # for a building's 1,400 clashes) and threw them away.
    rendered = []

    def thumbnails(clashes):
        rendered.append(len(clashes))
        return {}

    for paths, pictured in (
        ({"json_path": tmp_path / "r.json", "csv_path": tmp_path / "r.csv"}, False),
        ({"bcf_path": tmp_path / "r.bcf"}, True),
        ({"html_path": tmp_path / "r.html"}, True),
    ):
        rendered.clear()
        run_report(
            SAMPLE_TESTS, (1, 4, 1), read_sample_frame, render_thumbnails=thumbnails, **paths
        )
        assert bool(rendered) == pictured


def test_outputs_that_are_one_file_or_the_scanned_file_are_refused_before_any_work(tmp_path):
    def read_frame(time):
        raise AssertionError("no frame should be read")

    scene = tmp_path / "scene.blend"
    scene.write_bytes(b"BLENDER")
    report = tmp_path / "report.json"
    for options, message in [
        ({"csv_path": scene, "file": str(scene)}, "the CSV report .* the scanned file"),
        ({"json_path": report, "html_path": report}, "the JSON report .* the HTML report"),
        # The same file by another spelling.
        ({"json_path": report, "bcf_path": tmp_path / "sub" / ".." / "report.json"}, "BCF"),
    ]:
        with pytest.raises(ClashRunError, match=f"{message}.*refusing to overwrite it"):
            run_report(SAMPLE_TESTS, (1, 4, 1), read_frame, **options)
    assert scene.read_bytes() == b"BLENDER" and not report.exists()


def test_outputs_that_cannot_be_written_are_refused_before_any_work(tmp_path):
    """A folder given as a report, or a folder that takes no file (read-only, /proc),
    failed after the whole scan, with the reports written before it left on disk."""

    def read_frame(time):
        raise AssertionError("no frame should be read")

    folder = tmp_path / "folder.bcf"
    folder.mkdir()
    report = tmp_path / "r.json"
    for path, reason in [
        (folder, "it is a folder"),
        ("/proc/r.bcf", ""),
        (tmp_path / "none" / "r.bcf", "its folder does not exist"),
    ]:
        with pytest.raises(ClashRunError, match=f"^cannot write {path}: {reason}"):
            run_report(SAMPLE_TESTS, (1, 4, 1), read_frame, json_path=report, bcf_path=path)
    assert sorted(tmp_path.iterdir()) == [folder]


def test_check_output_paths_sees_links_and_skips_unset_paths(tmp_path):
    tests_file = tmp_path / "tests.json"
    tests_file.write_text("{}")
    hard_link = tmp_path / "hard.json"
    hard_link.hardlink_to(tests_file)
    soft_link = tmp_path / "soft.json"
    soft_link.symlink_to(tests_file)
    for output in (tests_file, hard_link, soft_link, str(tests_file)):
        with pytest.raises(ClashRunError, match=r"^--json .* is the same file as the tests file"):
            check_output_paths({"--json": output}, {"the tests file": tests_file})
    check_output_paths(
        {"--json": tmp_path / "a.json", "--html": tmp_path / "a.html", "--csv": None, "--bcf": ""},
        {"the scene": "", "the tests file": tests_file, "the baseline": None},
    )


@pytest.mark.parametrize(
    ("text", "frames"),
    [
        ("1-250", (1, 250, 1)),
        ("1-250:5", (1, 250, 5)),
        ("12", (12, 12, 1)),
        (" -5 - -1 ", (-5, -1, 1)),
    ],
)
def test_parse_frame_range_reads_every_form(text, frames):
    assert parse_frame_range(text) == frames


def test_a_range_below_frame_zero_after_frames_becomes_one_argument():
    # argparse took "-3-6" for an option: "argument --frames: expected one argument".
    assert frames_as_one_argument(["--json", "r.json", "--frames", "-3-6:2", "--csv", "c"]) == [
        "--json",
        "r.json",
        "--frames=-3-6:2",
        "--csv",
        "c",
    ]
    # Anything else is left to the parser: an option after --frames, a range at or above
    # 0, a last --frames, another option's value.
    for arguments in (
        ["--frames", "--json", "r.json"],
        ["--frames", "1-6"],
        ["--frames"],
        ["--json", "-3-6", "--frames=-1"],
    ):
        assert frames_as_one_argument(arguments) == arguments


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("1..5", "expected START-END[:STEP], got '1..5'"),
        ("", "expected START-END[:STEP]"),
        ("5-1", "need START <= END and STEP >= 1, got '5-1'"),
        ("1-5:0", "need START <= END and STEP >= 1"),
    ],
)
def test_parse_frame_range_says_what_is_wrong(text, message):
    with pytest.raises(ValueError) as error:
        parse_frame_range(text)
    assert message in str(error.value)


def cube_row(spacing: float, moving=()) -> ReadFrame:
    """`read_frame` of a row of twelve unit cubes `spacing` apart along x, with their
    meshes; the cubes `moving` (indices) move by 0.25 along y a frame."""
    from collide_addon.clash.evaluate import FrameMeshes
    from collide_addon.core.mesh import prepare_mesh

    corners = np.array([[x, y, z] for x in (-1, 1) for y in (-1, 1) for z in (-1, 1)], float)
    quads = [(0, 1, 3, 2), (4, 6, 7, 5), (0, 4, 5, 1), (2, 3, 7, 6), (0, 2, 6, 4), (1, 5, 7, 3)]
    triangles = [(a, b, c) for a, b, c, _ in quads] + [(a, c, d) for a, _, c, d in quads]
    cube = prepare_mesh(0.5 * corners, triangles)
    centers = np.column_stack([spacing * np.arange(12), np.zeros(12), np.zeros(12)])
    matrices = np.repeat(np.eye(4)[None], 12, axis=0)
    objects = [ObjectMetadata(f"Cube{k:02d}") for k in range(12)]

    def read_frame(time):
        moved = centers.copy()
        moved[list(moving), 1] += 0.25 * time
        posed = matrices.copy()
        posed[:, :3, 3] = moved
        batch = ShapeBatch.boxes(moved, np.repeat(np.eye(3)[None], 12, axis=0), [[0.5] * 3] * 12)
        return FrameSample(batch, objects, FrameMeshes(lambda row: cube, posed))

    return read_frame


def scan_alone_and_together(monkeypatch, tests, frames, read_frame):
    """The records of scans of each of `tests` alone, the records of one scan of them all,
    and how many pairs each `mesh_contacts` call of that scan decided."""
    from collide_addon.clash import evaluate as evaluate_module

    alone = [run_module.scan_frames([test], frames, read_frame)[0] for test in tests]
    decided = []
    mesh_contacts = evaluate_module.mesh_contacts

    def counting(meshes, matrices, pairs, *arguments):
        decided.append(len(pairs))
        return mesh_contacts(meshes, matrices, pairs, *arguments)

    monkeypatch.setattr(evaluate_module, "mesh_contacts", counting)
    together = run_module.scan_frames(tests, frames, read_frame).records
    return alone, together, decided


def test_mesh_tests_of_one_sample_decide_each_pair_once(monkeypatch):
    # Cubes 0.9 apart overlap their neighbours; a clearance of 1.2 also takes the next
    # but one (1.8 apart, a gap of 0.8).
    tests = [
        ClashTest("hard", geometry="mesh"),
        ClashTest("gap", test_type="clearance", tolerance=1.2, geometry="mesh"),
        ClashTest("touch", test_type="touching", geometry="mesh"),
    ]
    alone, together, decided = scan_alone_and_together(monkeypatch, tests, (1, 1, 1), cube_row(0.9))
    # The clearance test's 21 pairs first; the others' 11 are among them.
    assert decided == [21]
    assert [len(records) for records in alone] == [11, 21, 0]
    assert together == [record for records in alone for record in records]


def test_mesh_pairs_of_objects_that_kept_their_places_are_not_decided_again(monkeypatch):
    # Cube 5 of the row moves at every frame: at frames 2 and 3 only its pairs (with 3, 4,
    # 6 and 7 within the clearance) are decided again.
    tests = [
        ClashTest("hard", geometry="mesh"),
        ClashTest("gap", test_type="clearance", tolerance=1.2, geometry="mesh"),
    ]
    alone, together, decided = scan_alone_and_together(
        monkeypatch, tests, (1, 3, 1), cube_row(0.9, [5])
    )
    assert decided == [21, 4, 4]
    assert together == [record for records in alone for record in records]
    assert {tuple(map(tuple, record["frames"])) for record in together} >= {((1, 3),)}


def test_a_mesh_test_reports_its_pairs_progress_at_each_sample(monkeypatch):
    # A row of twelve unit cubes 0.9 apart, each overlapping the next: 11 candidate pairs per
    # sample, decided on their triangles in shares of 3.
    from collide_addon.core import mesh as mesh_module

    monkeypatch.setattr(mesh_module, "_PAIRS_PER_SHARE", 3)
    # All moving: each sample decides every pair again.
    read_frame = cube_row(0.9, moving=range(12))
    calls = []
    records = run_module.scan_frames(
        [ClashTest("t", geometry="mesh")],
        (1, 2, 1),
        read_frame,
        mesh_progress=lambda *call: calls.append(call),
    ).records
    assert len(records) == 11  # one record per pair over both frames
    for frame in (1, 2):
        at = [call for call in calls if call[2] == frame]
        assert at[0] == (0, 11, frame, "t") and at[-1] == (11, 11, frame, "t")
        assert len(at) == 5 and [done for done, *_ in at] == sorted(done for done, *_ in at)


@pytest.mark.parametrize(("size", "expected"), [(0.0, []), (0.1, [("mover", "wall", 1.47)])])
def test_a_continuous_test_sweeps_no_object_of_no_size(size, expected):
    """An object scaled to nothing (Blender does not draw it; the samples let it clash
    with nothing) was swept between samples as a moving point, and its pass through a
    wall reported as a hard clash; with a size it is."""
    objects = [ObjectMetadata("wall"), ObjectMetadata("mover")]

    def read_frame(time):
        x = -5.0 + 10.0 * (time - 1.0)
        wall = ShapeBatch.boxes([[0.0, 0, 0]], [np.eye(3)], [[0.2, 2, 2]])
        mover = ShapeBatch.boxes([[x, 0, 0]], [np.eye(3)], [[size] * 3])
        return FrameSample(ShapeBatch.concat([wall, mover]), objects)

    clashes = run_report([ClashTest("hard")], (1, 3, 1), read_frame, continuous=True).report[
        "clashes"
    ]
    assert [(c["a"], c["b"], round(c["toi"], 2)) for c in clashes] == expected


@pytest.mark.parametrize("half_thickness", [0.005, 0.5])
def test_a_continuous_touching_test_finds_a_pass_into_a_wall_whatever_its_thickness(
    half_thickness,
):
    """A ball passes into a wall between frames 1 and 2 (apart at 1, inside at 2, apart
    at 3). Through a thin slab the touch was found with its toi; into a 1 m wall,
    deep inside it at frame 2 (which is not a touch), nothing was: a pair inside the
    wall at a sample was left to that sample."""
    objects = [ObjectMetadata("ball"), ObjectMetadata("wall")]

    def read_frame(time):
        x = -1.0 + 1.4 * (time - 1.0)
        ball = ShapeBatch.spheres([[x, 0, 0]], [0.3])
        wall = ShapeBatch.boxes([[0.0, 0, 0]], [np.eye(3)], [[half_thickness, 1, 1]])
        return FrameSample(ShapeBatch.concat([ball, wall]), objects)

    test = ClashTest("touch", test_type="touching", tolerance=0.01)
    [clash] = run_report([test], (1, 3, 1), read_frame, continuous=True).report["clashes"]
    # The ball's surface reaches the band 0.01 before the wall's face.
    expected = 1.0 + (1.0 - 0.3 - half_thickness - 0.01) / 1.4
    assert clash["frames"] == [[1, 1]] and clash["toi"] == pytest.approx(expected, abs=1e-6)


def crate_in_a_room(positions) -> ReadFrame:
    """`read_frame` of a hollow room (a closed mesh, walls 0.2 thick about a cavity of
    side 1.6) and a crate of side 0.2 whose centre is at `positions` ((3, 3): at frames
    1, 2 and 3 on, in straight lines between); the proxies are the boxes about them."""
    from collide_addon.clash.evaluate import FrameMeshes
    from collide_addon.core.mesh import prepare_mesh
    from collide_dev.mesh_shapes import box_mesh

    outer, outer_triangles = box_mesh([-1.0] * 3, [1.0] * 3)
    inner, inner_triangles = box_mesh([-0.8] * 3, [0.8] * 3)
    room = prepare_mesh(
        np.vstack([outer, inner]), np.vstack([outer_triangles, inner_triangles[:, ::-1] + 8])
    )
    crate = prepare_mesh(*box_mesh([-0.1] * 3, [0.1] * 3))
    objects = [ObjectMetadata("Room"), ObjectMetadata("Crate")]
    positions = np.asarray(positions, dtype=np.float64)

    def read_frame(time):
        at = np.array([np.interp(time, [1, 2, 3], positions[:, axis]) for axis in range(3)])
        centers = np.array([[0.0, 0.0, 0.0], at])
        batch = ShapeBatch.boxes(centers, [np.eye(3)] * 2, [[1.0] * 3, [0.1] * 3])
        matrices = np.repeat(np.eye(4)[None], 2, axis=0)
        matrices[:, :3, 3] = centers
        return FrameSample(batch, objects, FrameMeshes(lambda row: [room, crate][row], matrices))

    return read_frame


def crate_leaving_a_room(wall_at_frame_2: bool) -> ReadFrame:
    """The crate in the room's cavity at frame 1, beyond its wall at frames 2-4 (x = 3),
    or stuck in the wall at frame 2 (x = 0.9) with `wall_at_frame_2`."""
    beyond = 0.9 if wall_at_frame_2 else 3.0
    return crate_in_a_room([[0.0, 0, 0], [beyond, 0, 0], [3.0, 0, 0]])


def test_a_pair_passing_through_a_wall_between_samples_is_found_on_its_meshes():
    """A crate leaves a hollow room through its wall between frames 1 and 2: in the
    cavity at frame 1 it lies within the room's proxy, so the proxies' sweep leaves that
    interval to the meshes, which find them apart at both samples. Their sweep finds the
    crate's pass through the wall, on frame 1 at the time it enters (its face at the
    wall's inner face, x = 0.7, plus the slack a hard clash needs), as dense substeps
    find it; merged chunks find what one run does. (It was named as a pair left
    unswept.)"""
    tests = [ClashTest("hard", geometry="mesh")]
    report = run_report(tests, (1, 4, 1), crate_leaving_a_room(False), continuous=True).report
    [clash] = report["clashes"]
    assert (clash["a"], clash["b"], clash["frames"]) == ("Crate", "Room", [[1, 1]])
    assert clash["geometry"] == "mesh" and clash["distance"] < 0
    assert clash["toi"] == pytest.approx(1.0 + 0.7 / 3.0, abs=1e-4)
    assert "unswept" not in report
    schema_validator().validate(json.loads(report_to_json(report)))
    dense = run_report(tests, (1, 4, 1), crate_leaving_a_room(False), substeps=32).report
    assert [clash["frames"] for clash in dense["clashes"]] == [[[1, 1]]]
    stuck = run_report(tests, (1, 4, 1), crate_leaving_a_room(True), continuous=True).report
    assert len(stuck["clashes"]) == 1 and "unswept" not in stuck
    parts = [
        json.loads(
            report_to_json(
                run_report(
                    tests, frames, crate_leaving_a_room(False), continuous=True, lookahead=last < 4
                ).report
            )
        )
        for frames, last in (((1, 2, 1), 2), ((3, 4, 1), 4))
    ]
    assert report_to_json(merge_reports(parts)) == report_to_json(report)


def test_a_pass_through_a_wall_is_found_on_meshes_when_another_object_appears():
    """The crate leaves the room through its wall between frames 1 and 2 while a lamp,
    far from both, appears at frame 2 (who takes part changes): the interval of the
    objects at both samples is swept on their meshes too, and the pass is found."""
    leaving = crate_leaving_a_room(False)
    from collide_addon.clash.evaluate import FrameMeshes
    from collide_addon.core.mesh import prepare_mesh
    from collide_dev.mesh_shapes import box_mesh

    lamp = prepare_mesh(*box_mesh([-0.1] * 3, [0.1] * 3))

    def read_frame(time):
        sample = leaving(time)
        if time < 2:
            return sample
        lamp_batch = ShapeBatch.boxes([[0.0, 50.0, 0.0]], [np.eye(3)], [[0.1] * 3])
        matrices = np.concatenate([sample.meshes.matrices, np.eye(4)[None]])
        matrices[2, :3, 3] = [0.0, 50.0, 0.0]
        meshes = sample.meshes

        def mesh_of(row):
            return lamp if row == 2 else meshes.mesh_of(row)

        return FrameSample(
            ShapeBatch.concat([sample.batch, lamp_batch]),
            [*sample.objects, ObjectMetadata("Lamp")],
            FrameMeshes(mesh_of, matrices),
        )

    tests = [ClashTest("hard", geometry="mesh")]
    report = run_report(tests, (1, 4, 1), read_frame, continuous=True).report
    [clash] = report["clashes"]
    assert (clash["a"], clash["b"], clash["frames"]) == ("Crate", "Room", [[1, 1]])
    assert clash["toi"] == pytest.approx(1.0 + 0.7 / 3.0, abs=1e-4)
    assert "unswept" not in report


def test_a_pair_its_mesh_sweep_cannot_decide_is_named_in_a_warning():
    """A crate slides 1.4 m a frame along the room's inner wall, its face on the wall's:
    touching, no hard clash at the samples, and each step of the sweep covers only the
    slack, so it gives up on the pair. The report names it under `unswept` with a
    warning; not for a test on proxies (its samples report the proxies' clash), and
    merged chunks name it as one run does."""
    sliding = crate_in_a_room([[0.7, -0.7, 0], [0.7, 0.7, 0], [0.7, -0.7, 0]])
    tests = [ClashTest("hard", geometry="mesh")]
    report = run_report(tests, (1, 3, 1), sliding, continuous=True).report
    assert report["clashes"] == []
    assert report["unswept"] == [["hard", "Crate", "Room"]]
    [warning] = [text for text in report["warnings"] if "not swept" in text]
    assert warning.startswith("1 moving pair(s) of continuous tests on meshes")
    assert warning.endswith(": Crate / Room (hard)")
    schema_validator().validate(json.loads(report_to_json(report)))
    proxies = [ClashTest("hard", geometry="proxy")]
    on_proxies = run_report(proxies, (1, 3, 1), sliding, continuous=True)
    assert len(on_proxies.report["clashes"]) == 1 and "unswept" not in on_proxies.report
    parts = [
        json.loads(
            report_to_json(
                run_report(tests, frames, sliding, continuous=True, lookahead=last < 3).report
            )
        )
        for frames, last in (((1, 1, 1), 1), ((2, 3, 1), 3))
    ]
    assert report_to_json(merge_reports(parts)) == report_to_json(report)
