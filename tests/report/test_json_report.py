"""The JSON report: schema validation, summary, groups, reading back."""

from __future__ import annotations

import json
import re

import jsonschema
import pytest

from collide_addon.clash.records import carry_over_status
from collide_addon.clash.tests import ClashTest
from collide_addon.report.json_report import (
    CLASH_FIELDS,
    OPTIONAL_CLASH_FIELDS,
    SCHEMA_PATH,
    ReportError,
    group_open_clashes,
    reach_warning,
    read_json_report,
    report_to_json,
    summarize,
    write_json_report,
)
from collide_addon.report.run import run_report
from tests.report.sample_report import (
    EVIL,
    FORMULA,
    QUOTED,
    SAMPLE_TESTS,
    make_report,
    read_sample_frame,
)


def test_sample_report_has_expected_clashes(report):
    pairs = {(clash["test"], clash["a"], clash["b"]): clash for clash in report["clashes"]}
    assert set(pairs) == {("hard", EVIL, QUOTED), ("touch", FORMULA, QUOTED)}
    moving = pairs["hard", EVIL, QUOTED]
    assert moving["frames"] == [[1, 3]] and moving["worst_frame"] == 2
    assert moving["distance"] == pytest.approx(-1.8)


# --- JSON -----------------------------------------------------------------------------------


def schema_validator():
    schema = json.loads(SCHEMA_PATH.read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


def test_json_report_validates_against_schema(report, tmp_path):
    validator = schema_validator()
    validator.validate(report)
    path = tmp_path / "report.json"
    write_json_report(report, path)
    assert read_json_report(path) == report
    validator.validate(json.loads(path.read_text(encoding="utf-8")))
    assert EVIL in path.read_text(encoding="utf-8")  # UTF-8 text, not \u escapes


def test_a_chunk_report_with_substeps_and_lookahead_validates():
    chunk = run_report(
        SAMPLE_TESTS, (1, 3, 1), read_sample_frame, substeps=2, continuous=True, lookahead=True
    ).report
    assert chunk["frames"] == [1, 3, 1]
    assert (chunk["substeps"], chunk["lookahead"]) == (2, True)
    schema_validator().validate(chunk)
    assert "substeps" not in run_report(SAMPLE_TESTS, (1, 3, 1), read_sample_frame).report


@pytest.mark.parametrize(
    "damage",
    [
        lambda r: r.update(substeps=1),
        lambda r: r.update(lookahead=False),
        lambda r: r["clashes"][0].update(status="bogus"),
        lambda r: r["clashes"][0].update(frames=[]),
        lambda r: r["clashes"][0].pop("worst_frame"),
        lambda r: r.update(version=2),
        lambda r: r["tests"][0].update(type="soft"),
        lambda r: r["summary"]["by_status"].pop("new"),
        lambda r: r["objects"][EVIL].update(ifc_guid="short"),
    ],
)
def test_schema_rejects_damaged_reports(report, damage):
    damage(report)
    assert not schema_validator().is_valid(report)


def test_summarize_counts(report):
    clashes = carry_over_status(report["clashes"][:1], report["clashes"][1:], ["hard", "touch"])
    tests = [ClashTest("hard"), ClashTest("touch"), ClashTest("idle")]
    summary = summarize(clashes, tests)
    assert summary["open"] == 1 and summary["resolved"] == 1
    assert summary["by_status"] == {
        "new": 1,
        "active": 0,
        "reviewed": 0,
        "approved": 0,
        "resolved": 1,
    }
    assert summary["by_test"] == {"hard": 1, "touch": 0, "idle": 0}
    assert summary["worst"] == {"id": clashes[0]["id"], "distance": clashes[0]["distance"]}
    assert summarize([], tests)["worst"] is None


def test_groups_of_open_clashes(report):
    groups = report["groups"]
    ids = {(clash["a"], clash["b"]): clash["id"] for clash in report["clashes"]}
    hard, touch = ids[EVIL, QUOTED], ids[FORMULA, QUOTED]
    assert groups["by_object"] == {EVIL: [hard], FORMULA: [touch], QUOTED: [hard, touch]}
    assert groups["by_test"] == {"hard": [hard], "touch": [touch]}
    # The two clash points, (0, 0, -0.1) and (0, 1, 0), are about 1 apart: one cluster at
    # radius 1, two at a radius well below their distance.
    assert [sorted(cluster["clashes"]) for cluster in groups["clusters"]] == [sorted([hard, touch])]
    apart = group_open_clashes(report["clashes"], cluster_radius=0.1)["clusters"]
    assert sorted(len(cluster["clashes"]) for cluster in apart) == [1, 1]
    resolved = [dict(clash, status="resolved") for clash in report["clashes"]]
    assert group_open_clashes(resolved)["by_object"] == {}


def test_build_report_fields(report):
    assert report["format"] == "collide-report" and report["version"] == 1
    assert report["frames"] == [1, 4, 1]
    assert [test["name"] for test in report["tests"]] == ["hard", "touch"]
    assert report["summary"]["open"] == len(report["clashes"]) == 2
    assert report_to_json(report) == report_to_json(make_report())  # reproducible


def test_read_json_report_errors(tmp_path, report):
    path = tmp_path / "r.json"
    with pytest.raises(ReportError, match="cannot read report"):
        read_json_report(path)
    path.write_text("{nope")
    with pytest.raises(ReportError, match="not valid JSON"):
        read_json_report(path)
    for change, message in [
        ({"format": "x"}, "not a collide report"),
        ({"version": 9}, "version 9 is not supported"),
        ({"clashes": {}}, "'clashes' must be a list"),
        ({"clashes": ["clash"]}, r"clashes\[0\] is not an object"),
    ]:
        path.write_text(json.dumps({**report, **change}))
        with pytest.raises(ReportError, match=message):
            read_json_report(path)


CLASH_DAMAGE = [
    # (field, bad value, what the message says it must be)
    ("id", "1", "16 hex digits"),
    ("id", "<b>0123456789abc</b>", "16 hex digits"),
    ("test", 3, "a string"),
    ("type", "soft", "one of hard, clearance"),
    ("a", None, "a string"),
    ("b", ["x"], "a string"),
    ("kinds", ["box"], "two of box"),
    ("kinds", ["box", "cone"], "two of box"),
    ("distance", "-0.5", "a finite number"),
    ("distance", True, "a finite number"),
    ("point", [0, 0], r"\[x, y, z\] numbers"),
    ("point", [0, 0, "<svg onload=alert(1)>"], r"\[x, y, z\] numbers"),
    ("bounds", [[0, 0, 0]], "two"),
    ("frames", [], "non-empty list"),
    ("frames", [["<script>alert(1)</script>", 2]], "non-empty list"),
    ("frames", [[1.5, 2]], "non-empty list"),
    ("worst_frame", '<img src=x onerror="alert(1)">', "an integer"),
    ("worst_frame", 2.0, "an integer"),
    ("worst_frame", False, "an integer"),
    ("status", "fixed", "one of new, active"),
    ("witnesses", [[0, 0, 0]], "two"),
    ("witnesses", [[0, 0, 0], [0, 0, "<b>"]], "two"),
    ("geometry", "triangles", "mesh or proxy"),
    ("relation", "<i>", "one of apart, touching"),
    ("fix", {"object": "<b>", "translation": [0, 0]}, "or {.none.: reason}"),
    ("fix", {"none": 3}, "or {.none.: reason}"),
    ("fix", {"object": "B", "translation": [0, 0, 1], "extra": 1}, "or {.none.: reason}"),
]


@pytest.mark.parametrize(("field", "value", "expected"), CLASH_DAMAGE)
def test_read_json_report_rejects_a_mistyped_clash_field(tmp_path, report, field, value, expected):
    report["clashes"][1][field] = value
    path = tmp_path / "baseline.json"
    path.write_text(json.dumps(report))
    with pytest.raises(ReportError) as caught:
        read_json_report(path)
    message = str(caught.value)
    assert "\n" not in message
    assert message.startswith(f"{path}: clashes[1] field {field!r} must be ")
    assert re.search(expected, message)


def test_read_json_report_rejects_frames_no_run_writes(tmp_path, report):
    """A reversed interval, or a worst frame outside a clash's frames, was carried into
    the next report as it was (found by a helper's hunt)."""
    path = tmp_path / "baseline.json"
    clash = report["clashes"][1]
    first, last = clash["frames"][0]
    for frames, worst, message in (
        (
            [[last + 1, first]],
            first,
            r"field 'frames' must hold \[first, last\] with first <= last",
        ),
        (clash["frames"], last + 5, f"field 'worst_frame' {last + 5} lies outside its frames"),
    ):
        path.write_text(
            json.dumps({**report, "clashes": [{**clash, "frames": frames, "worst_frame": worst}]})
        )
        with pytest.raises(ReportError, match=rf"^{re.escape(str(path))}: clashes\[0\] {message}"):
            read_json_report(path)


@pytest.mark.parametrize("field", list(CLASH_FIELDS))
def test_read_json_report_rejects_a_missing_clash_field(tmp_path, report, field):
    del report["clashes"][0][field]
    path = tmp_path / "baseline.json"
    path.write_text(json.dumps(report))
    with pytest.raises(ReportError, match=rf"clashes\[0\] lacks field '{field}'$"):
        read_json_report(path)


def test_read_json_report_rejects_unknown_fields_and_non_finite_numbers(tmp_path, report):
    path = tmp_path / "baseline.json"
    report["clashes"][0]["onclick"] = "alert(1)"
    path.write_text(json.dumps(report))
    with pytest.raises(ReportError, match=r"clashes\[0\] has unknown field 'onclick'$"):
        read_json_report(path)
    del report["clashes"][0]["onclick"]
    text = json.dumps(report).replace('"distance": -1.8', '"distance": NaN', 1)
    assert "NaN" in text
    path.write_text(text)
    with pytest.raises(ReportError, match="field 'distance' must be a finite number, got nan"):
        read_json_report(path)


def test_read_json_report_rejects_a_clash_id_given_twice(tmp_path, report):
    # Carried over, both copies would come back as resolved: one clash twice in the
    # next report, and two BCF topics with one guid.
    report["clashes"].append({**report["clashes"][0], "status": "approved"})
    path = tmp_path / "baseline.json"
    path.write_text(json.dumps(report))
    clash_id = report["clashes"][0]["id"]
    last = len(report["clashes"]) - 1
    with pytest.raises(
        ReportError, match=rf"clashes\[{last}\] repeats the id '{clash_id}' of clashes\[0\]$"
    ):
        read_json_report(path)


def test_read_json_report_accepts_a_baseline_from_before_mesh_mode(tmp_path, report):
    for clash in report["clashes"]:
        for field in OPTIONAL_CLASH_FIELDS:
            clash.pop(field, None)  # "fix" is only there with --suggest-fixes
    del report["warnings"], report["open_meshes"], report["reach"]
    path = tmp_path / "baseline.json"
    path.write_text(json.dumps(report))
    assert read_json_report(path)["clashes"] == report["clashes"]


def test_a_model_far_from_the_origin_is_warned_of_with_its_contact_epsilon():
    assert reach_warning(999.9) == [] and reach_warning(0.0) == []
    (warning,) = reach_warning(2_500_000.0)
    assert "2,500,000 m from the origin" in warning and "only to 2.5 m " in warning
    (warning,) = reach_warning(4_321.0)
    assert "4,321 m" in warning and "only to 4.32 mm " in warning


def test_clash_fields_are_the_schema_clash_fields():
    schema = json.loads(SCHEMA_PATH.read_text())["$defs"]["clash"]
    assert list(CLASH_FIELDS) == schema["required"]
    assert set(schema["properties"]) == set(CLASH_FIELDS) | set(OPTIONAL_CLASH_FIELDS)
    assert schema["additionalProperties"] is False


def test_read_json_report_gives_one_line_errors_for_hostile_files(tmp_path, report):
    # A 400-digit distance overflowed the number check, deep nesting overflowed the
    # parser's recursion and /dev/zero was read forever: each is now a one-line error.
    path = tmp_path / "baseline.json"
    text = json.dumps(report).replace('"distance": -1.8', '"distance": ' + "9" * 400, 1)
    assert "9" * 400 in text
    path.write_text(text)
    cases = [(path, "field 'distance' must be a finite number")]
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 200_000 + "]" * 200_000)
    cases.append((deep, "nested too deeply"))
    digits = tmp_path / "digits.json"
    digits.write_text('{"format": ' + "1" * 5000 + "}")
    cases.append((digits, "not a collide report"))
    cases.append(("/dev/zero", "larger than 64 MiB"))
    for source, expected in cases:
        with pytest.raises(ReportError, match=expected) as caught:
            read_json_report(source)
        assert "\n" not in str(caught.value)
