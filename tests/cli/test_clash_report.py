"""blender_scripts/clash_report.py through the real `blender` binary (Debian's 3.4).

The scenes are built by scripts run in that same binary: files saved by the bpy 5.0
wheel may not open in Blender 3.4.
"""

from __future__ import annotations

import csv
import io
import json
import os
import re
import shutil
import subprocess
import xml.etree.ElementTree as ElementTree
import zipfile
from pathlib import Path

import jsonschema
import pytest

from tests.data import bcf_2_1_schemas

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "blender_scripts" / "clash_report.py"
SCHEMA = REPO / "collide_addon" / "report" / "schema" / "collide-report-1.schema.json"
BLENDER = shutil.which("blender") or "blender"
EVIL = "<script>alert(1)</script>"
PLATE_GUID = "2O2Fr$t4X7Zf8NOew3FLOH"

BOX_HELPERS = """
import sys
import bpy

out = sys.argv[sys.argv.index("--") + 1]
bpy.ops.wm.read_homefile(use_empty=True)
scene = bpy.context.scene
FACES = [(0, 1, 3, 2), (4, 6, 7, 5), (0, 4, 5, 1), (2, 3, 7, 6), (0, 2, 6, 4), (1, 5, 7, 3)]


def box(name, location, half, parent=None):
    hx, hy, hz = half
    vertices = [(x * hx, y * hy, z * hz) for x in (-1, 1) for y in (-1, 1) for z in (-1, 1)]
    mesh = bpy.data.meshes.new(name)
    mesh.from_pydata(vertices, [], FACES)
    obj = bpy.data.objects.new(name, mesh)
    obj.location = location
    obj.parent = parent
    scene.collection.objects.link(obj)
    return obj


def slide(obj, start_frame, end_frame, dx):
    obj.keyframe_insert("location", frame=start_frame)
    obj.location.x += dx
    obj.keyframe_insert("location", frame=end_frame)
    for curve in obj.animation_data.action.fcurves:
        for point in curve.keyframe_points:
            point.interpolation = "LINEAR"
"""

# Known clashes over frames 1-11 (boxes are their own exact proxies):
# - Mover (half 0.5) slides x -5 -> 5 through Static (half 1): |x| < 1.5 at frames 5-7,
#   deepest at frame 6 (x = 0), depth 1.5.
# - Near sits 0.05 from Static: a clearance clash, never a hard one.
# - Bolt.A and Bolt.B, siblings under Bracket, overlap by 0.2 on every frame.
# - EVIL and Plate overlap by 0.2 on every frame; Plate carries an IfcGuid and a
#   "discipline" property.
# - Tile.A and Tile.B, linked duplicates (one mesh), overlap by 0.5 on every frame.
# - Bullet (half 0.1) flies x 40 -> 60, 2 m a frame, through Pane (half 0.05 in x) at
#   x = 45: it is inside only around frame 3.5, between two frames.
SMALL_SCENE = (
    BOX_HELPERS
    + f"""
scene.frame_start, scene.frame_end = 1, 11
box("Static", (0, 0, 0), (1, 1, 1))
box("Near", (0, 2.05, 0), (1, 1, 1))
slide(box("Mover", (-5, 0, 0), (0.5, 0.5, 0.5)), 1, 11, 10.0)
bracket = bpy.data.objects.new("Bracket", None)
scene.collection.objects.link(bracket)
box("Bolt.A", (10, 0, 0), (0.3, 0.3, 0.3), bracket)
box("Bolt.B", (10.4, 0, 0), (0.3, 0.3, 0.3), bracket)
box({EVIL!r}, (20, 0, 0), (0.5, 0.5, 0.5))
plate = box("Plate", (20.8, 0, 0), (0.5, 0.5, 0.5))
plate["IfcGuid"] = {PLATE_GUID!r}
plate["discipline"] = "ARCH"
tile = box("Tile.A", (30, 0, 0), (0.5, 0.5, 0.5))
twin = bpy.data.objects.new("Tile.B", tile.data)
twin.location = (30.5, 0, 0)
scene.collection.objects.link(twin)
slide(box("Bullet", (40, 0, 0), (0.1, 0.1, 0.1)), 1, 11, 20.0)
box("Pane", (45, 0, 0), (0.05, 1, 1))
bpy.ops.wm.save_as_mainfile(filepath=out)
"""
)

# 5,000 boxes on a 20 x 20 grid of 0.6 m boxes 1 m apart; every 100th slides 1 m along
# x over frames 1-50, into its neighbour from frame 21 on (the 0.4 m gap closes after 19.6 frames).
BIG_SCENE = (
    BOX_HELPERS
    + """
scene.frame_start, scene.frame_end = 1, 50
for index in range(5000):
    obj = box(f"Box.{index:05d}", (index % 20, (index // 20) % 20, index // 400),
              (0.3, 0.3, 0.3))
    if index % 100 == 0:
        slide(obj, 1, 50, 1.0)
bpy.ops.wm.save_as_mainfile(filepath=out)
"""
)

TESTS_FILE = {
    "format": "collide-tests",
    "version": 1,
    "tests": [
        {"name": "hard", "a": {}, "type": "hard", "ignore": {"same_parent": True}},
        {"name": "gap", "a": {"name": "Static"}, "b": {}, "type": "clearance", "tolerance": 0.1},
        {"name": "arch", "a": {"properties": {"discipline": "ARCH"}}, "b": {}, "type": "hard"},
        {"name": "tiles", "a": {"name": "Tile.*"}, "type": "hard"},
        {
            "name": "tiles apart from twins",
            "a": {"name": "Tile.*"},
            "type": "hard",
            "ignore": {"same_instance_source": True},
        },
    ],
}


# SMALL_SCENE saved again with three tests stored on the scene (two of TESTS_FILE's and
# one selecting by object type), written by the add-on's own conversion (its settings
# registered from this checkout).
STORED_TESTS = [
    TESTS_FILE["tests"][1],
    TESTS_FILE["tests"][3],
    {"name": "bolts", "a": {"name": "Bolt.*", "types": ["MESH"]}, "type": "hard"},
]
REGISTER_SETTINGS = f"""
sys.path.insert(0, {str(REPO)!r})
from tests.data import bcf_2_1_schemas
from collide_addon.blender import clash_test_props, props
from collide_addon.clash.tests import clash_test_from_dict

props.register()
"""
SMALL_SCENE_WITH_STORED_TESTS = (
    SMALL_SCENE
    + REGISTER_SETTINGS
    + f"""
for data in {STORED_TESTS!r}:
    test_props = scene.collide.clash_tests.add()
    clash_test_props.clash_test_to_props(clash_test_from_dict(data), test_props)
bpy.ops.wm.save_as_mainfile(filepath=out)
"""
)
# A clearance test without a gap, as the panel lets one set it up.
SMALL_SCENE_WITH_INVALID_STORED_TEST = (
    SMALL_SCENE
    + REGISTER_SETTINGS
    + """
test = scene.collide.clash_tests.add()
test.name, test.test_type = "gap", "clearance"
bpy.ops.wm.save_as_mainfile(filepath=out)
"""
)


def blender(*arguments: str, timeout: float = 300) -> subprocess.CompletedProcess:
    return subprocess.run(
        [BLENDER, "-b", "--factory-startup", *arguments],
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def build_scene(folder: Path, source: str, name: str) -> Path:
    script = folder / f"build_{name}.py"
    script.write_text(source)
    blend = folder / f"{name}.blend"
    result = blender("--python", str(script), "--", str(blend))
    assert blend.is_file(), result.stdout + result.stderr
    return blend


def clash_report(blend: Path, *arguments: str, timeout: float = 300):
    return blender(str(blend), "--python", str(SCRIPT), "--", *arguments, timeout=timeout)


def error_lines(result: subprocess.CompletedProcess) -> list[str]:
    return [line for line in result.stderr.splitlines() if line.startswith("clash_report:")]


@pytest.fixture(scope="module")
def small_scene(tmp_path_factory) -> Path:
    return build_scene(tmp_path_factory.mktemp("small"), SMALL_SCENE, "small")


@pytest.fixture(scope="module")
def tests_file(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("tests") / "tests.json"
    path.write_text(json.dumps(TESTS_FILE))
    return path


def pairs_of(report: dict) -> dict[tuple[str, str, str], dict]:
    return {(clash["test"], clash["a"], clash["b"]): clash for clash in report["clashes"]}


def test_help_lists_every_option(small_scene):
    result = clash_report(small_scene, "--help")
    assert result.returncode == 0, result.stderr
    for option in (
        "--tests",
        "--frames",
        "--json",
        "--html",
        "--csv",
        "--bcf",
        "--baseline",
        "--fail-on",
        "--thumbnails",
        "--suggest-fixes",
    ):
        assert option in result.stdout


@pytest.mark.parametrize(
    ("arguments", "reason"),
    [
        (["--frames", "9-3"], "need START <= END"),
        (["--frames", "1-5:0"], "need START <= END and STEP >= 1"),
        (["--frames", "one"], "expected START-END[:STEP]"),
        (["--fail-on", "sometimes"], "invalid choice"),
        (["--substeps", "0"], "expected an integer >= 1"),
        (["--bogus"], "unrecognized arguments"),
        (["--tests", "/nonexistent/tests.json"], "cannot read tests file"),
        (["--baseline", "/nonexistent/report.json"], "cannot read report"),
        (["--json", "/nonexistent/folder/r.json"], "folder does not exist"),
        # An empty path used to mean "not given": the report was silently not written.
        (["--json", ""], "argument --json: expected a file path, got an empty one"),
        (["--html", " "], "argument --html: expected a file path"),
        (["--tests", ""], "argument --tests: expected a file path"),
        (["--baseline", ""], "argument --baseline: expected a file path"),
        # Blender clamped these frames silently, and a 20-digit frame was an internal
        # error; a billion substeps or ten million frames ran out of memory.
        (["--frames", "1-1048575"], "beyond Blender's frame range -1048574 to 1048574"),
        (["--frames=-1048575--1"], "beyond Blender's frame range"),
        # Given as two arguments, a range below frame 0 read as an option ("expected one
        # argument"): it is the range now.
        (["--frames", "-1048575--1"], "beyond Blender's frame range"),
        (["--frames", "12345678901234567890"], "beyond Blender's frame range"),
        (["--substeps", "1000000000"], "substeps must be <= 64"),
        (["--frames", "1-1000000", "--substeps", "2"], "over the limit of 1000000"),
        (["--tests", "/dev/zero"], "larger than 64 MiB"),
        (["--baseline", "/dev/zero"], "larger than 64 MiB"),
    ],
)
def test_bad_arguments_exit_2_with_one_line(small_scene, arguments, reason):
    result = clash_report(small_scene, *arguments)
    assert result.returncode == 2, result.stderr
    lines = error_lines(result)
    assert len(lines) == 1 and reason in lines[0], result.stderr


def test_invalid_tests_file_and_unmatched_selector_exit_2(small_scene, tmp_path):
    invalid = tmp_path / "invalid.json"
    invalid.write_text(json.dumps({**TESTS_FILE, "tests": [{"name": "x", "a": {}, "type": "?"}]}))
    result = clash_report(small_scene, "--tests", str(invalid))
    assert result.returncode == 2 and "type must be one of" in error_lines(result)[0]
    unmatched = tmp_path / "unmatched.json"
    unmatched.write_text(
        json.dumps(
            {**TESTS_FILE, "tests": [{"name": "pipes", "a": {"name": "Pipe*"}, "type": "hard"}]}
        )
    )
    result = clash_report(small_scene, "--tests", str(unmatched))
    assert result.returncode == 2
    assert "set A of test 'pipes' matches no object" in error_lines(result)[0]
    # An object type Blender does not know is named, not reported as a set matching
    # nothing ("mesh" for "MESH").
    typo = tmp_path / "typo.json"
    typo.write_text(
        json.dumps(
            {**TESTS_FILE, "tests": [{"name": "t", "a": {"types": ["mesh"]}, "type": "hard"}]}
        )
    )
    result = clash_report(small_scene, "--tests", str(typo))
    assert result.returncode == 2
    assert (
        f"{typo}: clash test 't', set A: object type(s) mesh unknown to this Blender (it knows "
        "MESH, CURVE" in error_lines(result)[0]
    )
    baseline = tmp_path / "not_a_report.json"
    baseline.write_text(json.dumps({"format": "something else"}))
    result = clash_report(small_scene, "--baseline", str(baseline))
    assert result.returncode == 2 and "not a collide report" in error_lines(result)[0]


def test_hostile_tests_files_exit_2_with_one_line(small_scene, tmp_path):
    # A 400-digit tolerance and deeply nested JSON were tracebacks ("internal error").
    huge = tmp_path / "huge.json"
    tolerance = "9" * 400
    huge.write_text(
        json.dumps(
            {**TESTS_FILE, "tests": [{"name": "x", "a": {}, "type": "hard", "tolerance": 0}]}
        ).replace('"tolerance": 0', f'"tolerance": {tolerance}')
    )
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 100_000 + "]" * 100_000)
    for path, reason in ((huge, "tolerance must be finite"), (deep, "nested too deeply")):
        result = clash_report(small_scene, "--tests", str(path))
        assert result.returncode == 2, result.stderr
        lines = error_lines(result)
        assert len(lines) == 1 and reason in lines[0], result.stderr
        assert "Traceback" not in result.stderr


def test_a_scene_whose_file_name_is_not_utf8(small_scene, tmp_path):
    # The report's "file" could not be written as UTF-8: an internal error, no report.
    blend = tmp_path / os.fsdecode(b"sc\xe8ne\xff.blend")
    shutil.copy(small_scene, blend)
    out = tmp_path / "r.json"
    html = tmp_path / "r.html"
    arguments = ["--frames", "1-2", "--json", str(out), "--html", str(html)]
    result = subprocess.run(
        [BLENDER, "-b", "--factory-startup", blend, "--python", SCRIPT, "--", *arguments],
        capture_output=True,
        text=True,
        errors="replace",  # Blender prints the file name as it is
        timeout=300,
    )
    assert result.returncode in (0, 1), result.stderr
    report = json.loads(out.read_text(encoding="utf-8"))
    assert report["file"].endswith("sc\ufffdne\ufffd.blend")
    jsonschema.validate(report, json.loads(SCHEMA.read_text()))


def test_known_clashes_over_frames_and_all_reports(small_scene, tmp_path):
    outputs = {kind: tmp_path / f"report.{kind}" for kind in ("json", "html", "csv", "bcf")}
    arguments = [item for kind, path in outputs.items() for item in (f"--{kind}", str(path))]
    result = clash_report(small_scene, *arguments)
    assert result.returncode == 1, result.stderr  # clashes, no baseline: --fail-on any
    assert "collide: frame 11 (11/11, 100%)" in result.stderr
    report = json.loads(outputs["json"].read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator(json.loads(SCHEMA.read_text())).validate(report)
    assert report["frames"] == [1, 11, 1] and report["blender"].startswith("3.4")
    assert report["file"] == str(small_scene)
    pairs = pairs_of(report)
    test = "all proxies, hard"
    assert set(pairs) == {
        (test, "Mover", "Static"),
        (test, "Bolt.A", "Bolt.B"),
        (test, EVIL, "Plate"),
        (test, "Tile.A", "Tile.B"),
    }
    mover = pairs[test, "Mover", "Static"]
    # Decided on the meshes (the default): Mover enters Static at frame 5, lies wholly
    # inside it at 6 and leaves at 7; two boxes are as deep as the least move that takes
    # them apart (coal's EPA), deepest at frame 6: 1.5 along any axis. (Before, the depth
    # of its deepest point, 0.5 at all three frames, made 5 the worst.)
    assert mover["frames"] == [[5, 7]] and mover["worst_frame"] == 6
    assert mover["distance"] == pytest.approx(-1.5, abs=1e-5)
    assert mover["geometry"] == "mesh" and mover["relation"] == "a_inside_b"
    assert mover["kinds"] == ["box", "box"]
    bolts = pairs[test, "Bolt.A", "Bolt.B"]
    assert bolts["frames"] == [[1, 11]] and bolts["worst_frame"] == 1
    assert bolts["distance"] == pytest.approx(-0.2, abs=1e-5)
    assert report["objects"]["Plate"]["ifc_guid"] == PLATE_GUID
    assert all(clash["status"] == "new" for clash in report["clashes"])

    html = outputs["html"].read_text(encoding="utf-8")
    assert EVIL not in html and "&lt;script&gt;alert(1)&lt;/script&gt;" in html

    rows = list(csv.DictReader(io.StringIO(outputs["csv"].read_text(encoding="utf-8"))))
    assert {(row["a"], row["b"]) for row in rows} == {
        ("Mover", "Static"),
        ("Bolt.A", "Bolt.B"),
        (EVIL, "Plate"),
        ("Tile.A", "Tile.B"),
    }

    schemas = bcf_2_1_schemas()
    with zipfile.ZipFile(outputs["bcf"]) as archive:
        names = archive.namelist()
        schemas["version"].validate(io.BytesIO(archive.read("bcf.version")))
        markups = [name for name in names if name.endswith("/markup.bcf")]
        viewpoints = [name for name in names if name.endswith("/viewpoint.bcfv")]
        assert len(markups) == len(viewpoints) == 4
        guids = set()
        for name in markups:
            schemas["markup"].validate(io.BytesIO(archive.read(name)))
        for name in viewpoints:
            data = archive.read(name)
            schemas["visinfo"].validate(io.BytesIO(data))
            guids |= {
                item.get("IfcGuid") for item in ElementTree.fromstring(data).iter("Component")
            }
        assert PLATE_GUID in guids


def test_geometry_proxy_measures_the_proxies(small_scene, tmp_path):
    out = tmp_path / "proxy.json"
    result = clash_report(small_scene, "--geometry", "proxy", "--json", str(out))
    assert result.returncode == 1, result.stderr
    mover = pairs_of(json.loads(out.read_text(encoding="utf-8")))[
        "all proxies, hard", "Mover", "Static"
    ]
    # The boxes' minimum translation: deepest at frame 6, where Mover sits centred in
    # Static and the depth (1.5) is the same along all three axes, so the push axis, and
    # with it the clash point, is any one of them.
    assert mover["frames"] == [[5, 7]] and mover["worst_frame"] == 6
    assert mover["distance"] == pytest.approx(-1.5, abs=1e-5)
    assert sorted(map(abs, mover["point"])) == pytest.approx([0, 0, 0.25], abs=1e-5)
    assert mover["geometry"] == "proxy" and mover["relation"] == "penetrating"


def test_tests_file_selectors_ignore_rules_and_clearance(small_scene, tests_file, tmp_path):
    out = tmp_path / "r.json"
    result = clash_report(small_scene, "--tests", str(tests_file), "--json", str(out))
    assert result.returncode == 1, result.stderr
    pairs = pairs_of(json.loads(out.read_text(encoding="utf-8")))
    assert set(pairs) == {
        ("hard", "Mover", "Static"),
        ("hard", EVIL, "Plate"),
        ("hard", "Tile.A", "Tile.B"),
        ("gap", "Static", "Near"),
        ("gap", "Static", "Mover"),
        ("arch", "Plate", EVIL),
        ("tiles", "Tile.A", "Tile.B"),
    }
    near = pairs["gap", "Static", "Near"]
    assert near["distance"] == pytest.approx(0.05, abs=1e-5) and near["frames"] == [[1, 11]]
    assert pairs["gap", "Static", "Mover"]["frames"] == [[5, 7]]


def test_without_tests_file_the_scene_tests_run(tmp_path):
    blend = build_scene(tmp_path, SMALL_SCENE_WITH_STORED_TESTS, "stored")
    out = tmp_path / "r.json"
    result = clash_report(blend, "--json", str(out))
    assert result.returncode == 1, result.stderr
    report = json.loads(out.read_text(encoding="utf-8"))
    assert [test["name"] for test in report["tests"]] == ["gap", "tiles", "bolts"]
    assert set(pairs_of(report)) == {
        ("gap", "Static", "Near"),
        ("gap", "Static", "Mover"),
        ("tiles", "Tile.A", "Tile.B"),
        ("bolts", "Bolt.A", "Bolt.B"),
    }


def test_invalid_scene_tests_exit_2_with_the_core_message(tmp_path):
    blend = build_scene(tmp_path, SMALL_SCENE_WITH_INVALID_STORED_TEST, "invalid")
    result = clash_report(blend, "--json", str(tmp_path / "r.json"))
    assert result.returncode == 2, result.stderr
    assert "a clearance test needs a required gap" in error_lines(result)[0]
    assert not (tmp_path / "r.json").exists()


def test_frame_step_and_subrange(small_scene, tmp_path):
    out = tmp_path / "r.json"
    result = clash_report(small_scene, "--frames", "2-10:2", "--json", str(out))
    assert result.returncode == 1, result.stderr
    report = json.loads(out.read_text(encoding="utf-8"))
    assert report["frames"] == [2, 10, 2]
    mover = pairs_of(report)["all proxies, hard", "Mover", "Static"]
    assert mover["frames"] == [[6, 6]] and mover["worst_frame"] == 6
    assert pairs_of(report)["all proxies, hard", "Bolt.A", "Bolt.B"]["frames"] == [[2, 10]]


def test_substeps_catch_a_fast_mover_between_frames(small_scene, tmp_path):
    out = tmp_path / "r.json"
    test = "all proxies, hard"
    assert clash_report(small_scene, "--json", str(out)).returncode == 1
    assert (test, "Bullet", "Pane") not in pairs_of(json.loads(out.read_text(encoding="utf-8")))
    result = clash_report(small_scene, "--substeps", "4", "--json", str(out))
    assert result.returncode == 1, result.stderr
    assert "(41/41, 100%)" in result.stderr  # 10 frames x 4 samples, the last frame once
    pairs = pairs_of(json.loads(out.read_text(encoding="utf-8")))
    bullet = pairs[test, "Bullet", "Pane"]
    assert bullet["frames"] == [[3, 3]] and bullet["worst_frame"] == 3
    # On the meshes: centred in the pane at frame 3.5, the bullet (0.2 wide) must move
    # 0.15 along x to leave the pane (0.1 thick): two boxes' exact depth (coal's EPA).
    assert bullet["distance"] == pytest.approx(-0.15, abs=1e-5)
    assert 44.9 - 1e-5 <= bullet["point"][0] <= 45.1 + 1e-5  # within the bullet
    # Mover overlaps Static for x in (-1.5, 1.5), i.e. from frame 4.5 to 7.5; deepest
    # at frame 6, wholly inside.
    mover = pairs[test, "Mover", "Static"]
    assert mover["frames"] == [[4, 7]] and mover["worst_frame"] == 6


def test_continuous_finds_the_fast_mover_with_its_time_of_first_contact(small_scene, tmp_path):
    """Bullet (half 0.1) at x = 40 + 2 (f - 1) first touches Pane (x >= -0.05 + 45) when
    x = 44.85: frame 3.425. A plain scan misses it (see the substeps test)."""
    out, table = tmp_path / "r.json", tmp_path / "r.csv"
    result = clash_report(small_scene, "--continuous", "--json", str(out), "--csv", str(table))
    assert result.returncode == 1, result.stderr
    report = json.loads(out.read_text(encoding="utf-8"))
    jsonschema.validate(report, json.loads(SCHEMA.read_text(encoding="utf-8")))
    assert all(test["continuous"] for test in report["tests"])
    bullet = pairs_of(report)["all proxies, hard", "Bullet", "Pane"]
    assert abs(bullet["toi"] - 3.425) <= 1e-3
    assert bullet["frames"] == [[3, 3]] and bullet["worst_frame"] == 3
    assert bullet["geometry"] == "proxy"
    assert bullet["point"][0] == pytest.approx(44.95, abs=1e-3)
    # Clashes seen at sampled frames keep their fields: no toi.
    assert [clash["b"] for clash in report["clashes"] if "toi" in clash] == ["Pane"]
    mover = pairs_of(report)["all proxies, hard", "Mover", "Static"]
    assert "toi" not in mover and mover["frames"] == [[5, 7]]
    rows = {row["b"]: row for row in csv.DictReader(io.StringIO(table.read_text("utf-8")))}
    assert float(rows["Pane"]["toi"]) == bullet["toi"]


ROOM_SCENE = BOX_HELPERS + (
    "outer = [(x, y, z) for x in (-1, 1) for y in (-1, 1) for z in (-1, 1)]\n"
    "inner = [(0.8 * x, 0.8 * y, 0.8 * z) for x, y, z in outer]\n"
    "inward = [tuple(8 + corner for corner in reversed(face)) for face in FACES]\n"
    'room = bpy.data.meshes.new("Room")\n'
    "room.from_pydata(outer + inner, [], FACES + inward)\n"
    'scene.collection.objects.link(bpy.data.objects.new("Room", room))\n'
    'crate = box("Crate", (0, 0, 0), (0.1, 0.1, 0.1))\n'
    "slide(crate, 1, 2, 3.0)\n"
    "scene.frame_start, scene.frame_end = 1, 3\n"
    "bpy.ops.wm.save_as_mainfile(filepath=out)\n"
)


def test_continuous_on_meshes_finds_a_crate_leaving_a_hollow_room_through_its_wall(tmp_path):
    """A crate of side 0.2 in the cavity of a hollow room (walls 0.2 thick) at frame 1 is
    3 m away at frame 2: its proxy lies within the room's at frame 1, so the proxies'
    sweep leaves the pair to the meshes, which are apart at both frames. Their sweep
    finds the pass through the wall, on frame 1 when the crate's face reaches the
    wall's inner face (x = 0.7, frame 1.2333); a plain scan misses it."""
    blend = build_scene(tmp_path, ROOM_SCENE, "room")
    out = tmp_path / "r.json"
    result = clash_report(blend, "--geometry", "mesh", "--continuous", "--json", str(out))
    assert result.returncode == 1, result.stderr
    report = json.loads(out.read_text(encoding="utf-8"))
    jsonschema.validate(report, json.loads(SCHEMA.read_text(encoding="utf-8")))
    [clash] = report["clashes"]
    assert {clash["a"], clash["b"]} == {"Crate", "Room"} and clash["frames"] == [[1, 1]]
    assert clash["geometry"] == "mesh" and abs(clash["toi"] - (1.0 + 0.7 / 3.0)) <= 1e-3
    assert "unswept" not in report
    plain = clash_report(blend, "--geometry", "mesh", "--json", str(out))
    assert plain.returncode == 0, plain.stderr
    assert json.loads(out.read_text(encoding="utf-8"))["clashes"] == []


def test_baseline_status_carry_over_and_fail_on(small_scene, tmp_path):
    first = tmp_path / "first.json"
    assert clash_report(small_scene, "--json", str(first)).returncode == 1
    report = json.loads(first.read_text(encoding="utf-8"))
    test = "all proxies, hard"
    for clash in report["clashes"]:
        if clash["a"] == "Bolt.A":
            clash["status"] = "approved"
        if clash["a"] == EVIL:
            clash["status"] = "reviewed"
    first.write_text(json.dumps(report))

    # Frames 1-3 do not reach Mover's clash with Static (frames 5-7): not checked, it is
    # carried over, active (it was new in the baseline), not resolved.
    second = tmp_path / "second.json"
    result = clash_report(
        small_scene, "--frames", "1-3", "--baseline", str(first), "--json", str(second)
    )
    assert result.returncode == 0, result.stderr  # default --fail-on new: nothing new
    statuses = {
        (clash["a"], clash["b"]): clash["status"]
        for clash in json.loads(second.read_text(encoding="utf-8"))["clashes"]
    }
    assert statuses == {
        ("Bolt.A", "Bolt.B"): "approved",
        (EVIL, "Plate"): "reviewed",
        ("Tile.A", "Tile.B"): "active",
        ("Mover", "Static"): "active",
    }
    assert "1 clash(es) of the baseline lie outside the scanned frames 1-3" in result.stderr
    # --fail-on any counts the reviewed and the two active clashes (approved ones never).
    result = clash_report(
        small_scene, "--frames", "1-3", "--baseline", str(first), "--fail-on", "any"
    )
    assert result.returncode == 1
    assert "3 clashes counted by --fail-on any" in result.stderr

    # A clash resolved in the baseline and found again returns as new and fails the run.
    report = json.loads(second.read_text(encoding="utf-8"))
    for clash in report["clashes"]:
        if clash["a"] == "Mover":
            clash["status"] = "resolved"
    second.write_text(json.dumps(report))
    third = tmp_path / "third.json"
    result = clash_report(small_scene, "--baseline", str(second), "--json", str(third))
    assert result.returncode == 1
    third_report = json.loads(third.read_text(encoding="utf-8"))
    assert pairs_of(third_report)[test, "Mover", "Static"]["status"] == "new"
    assert pairs_of(third_report)[test, "Bolt.A", "Bolt.B"]["status"] == "approved"
    assert third_report["summary"]["by_status"]["new"] == 1

    result = clash_report(small_scene, "--fail-on", "never")
    assert result.returncode == 0


def test_thumbnails_in_html_and_bcf(small_scene, tmp_path):
    html, bcf = tmp_path / "r.html", tmp_path / "r.bcf"
    result = clash_report(small_scene, "--thumbnails", "--html", str(html), "--bcf", str(bcf))
    assert result.returncode == 1, result.stderr
    # The pictures' progress, and none of Blender's three lines a render (its file and
    # time), which buried the run's own in a CI log: 1,850 lines for 617 clashes.
    assert "collide: thumbnails (4/4, 100%)" in result.stderr
    assert "Saved:" not in result.stdout and "Time:" not in result.stdout
    assert html.read_text(encoding="utf-8").count('src="data:image/png;base64,') == 4
    with zipfile.ZipFile(bcf) as archive:
        snapshots = [name for name in archive.namelist() if name.endswith("/snapshot.png")]
        assert len(snapshots) == 4
        assert all(archive.read(name).startswith(b"\x89PNG\r\n\x1a\n") for name in snapshots)


def test_five_thousand_objects_over_fifty_frames(tmp_path):
    # (How long such a run takes is benchmarks/bench_farm.py's: one worker's scan.)
    blend = build_scene(tmp_path, BIG_SCENE, "big")
    out = tmp_path / "big.json"
    # On the proxies: at frame 50 each sliding box lies exactly on its neighbour, which
    # mesh mode reads as touching (a copy in place: README, "Known limit of mesh mode").
    result = clash_report(blend, "--json", str(out), "--geometry", "proxy", timeout=300)
    assert result.returncode == 1, result.stderr
    report = json.loads(out.read_text(encoding="utf-8"))
    # Each of the 50 sliding boxes overlaps its +x neighbour from frame 21 on.
    assert len(report["clashes"]) == 50
    assert {tuple(map(tuple, clash["frames"])) for clash in report["clashes"]} == {((21, 50),)}


def test_runs_with_the_add_on_installed_instead_of_a_checkout(small_scene, tmp_path):
    scripts = tmp_path / "user_scripts"
    shutil.copytree(
        REPO / "collide_addon",
        scripts / "addons" / "collide_addon",
        ignore=shutil.ignore_patterns("__pycache__"),
    )
    lone_script = tmp_path / "lone" / "clash_report.py"
    lone_script.parent.mkdir()
    shutil.copy(SCRIPT, lone_script)
    out = tmp_path / "r.json"
    command = [BLENDER, "-b", "--factory-startup", str(small_scene), "--python", str(lone_script)]
    environment = {**os.environ, "BLENDER_USER_SCRIPTS": str(scripts)}
    result = subprocess.run(
        [*command[:3], "--addons", "collide_addon", *command[3:], "--", "--json", str(out)],
        capture_output=True,
        text=True,
        timeout=300,
        env=environment,
    )
    assert result.returncode == 1, result.stderr
    assert len(json.loads(out.read_text(encoding="utf-8"))["clashes"]) == 4
    assert "collide: using" not in result.stderr
    # Enabled, and the checkout's script: the enabled add-on was imported at start-up
    # under the same name, so it runs, and the run says so.
    enabled = [*command[:3], "--addons", "collide_addon", str(small_scene)]
    result = subprocess.run(
        [*enabled, "--python", str(SCRIPT), "--", "--json", str(out)],
        capture_output=True,
        text=True,
        timeout=300,
        env=environment,
    )
    assert result.returncode == 1, result.stderr
    installed = (scripts / "addons" / "collide_addon").resolve()
    assert f"collide: using the enabled add-on in {installed}, not" in result.stderr
    # Neither a checkout nor an enabled add-on: exit 2 with the reason.
    result = subprocess.run(
        [*command, "--", "--json", str(out)], capture_output=True, text=True, timeout=300
    )
    assert result.returncode == 2
    assert "neither beside this script nor an enabled add-on" in error_lines(result)[0]


def test_scene_without_objects_exits_2(tmp_path):
    empty = build_scene(
        tmp_path, BOX_HELPERS + "bpy.ops.wm.save_as_mainfile(filepath=out)\n", "empty"
    )
    result = clash_report(empty, "--json", str(tmp_path / "r.json"))
    assert result.returncode == 2
    assert "no objects take part" in error_lines(result)[0]
    assert not (tmp_path / "r.json").exists()


def test_outputs_never_overwrite_an_input_or_each_other(small_scene, tests_file, tmp_path):
    scene = tmp_path / "scene.blend"
    shutil.copyfile(small_scene, scene)
    tests_copy = tmp_path / "tests.json"
    shutil.copyfile(tests_file, tests_copy)
    baseline = tmp_path / "baseline.json"
    assert clash_report(scene, "--json", str(baseline)).returncode == 1
    originals = {path: path.read_bytes() for path in (scene, tests_copy, baseline)}
    report = tmp_path / "report.json"
    for arguments, reason in [
        (["--csv", str(scene)], f"--csv {scene} is the same file as the scene being read"),
        (["--json", str(report), "--html", str(report)], "--json .* same file as --html"),
        (
            ["--tests", str(tests_copy), "--json", str(tmp_path / "." / "tests.json")],
            "--json .* same file as --tests",
        ),
        (["--baseline", str(baseline), "--bcf", str(baseline)], "--bcf .* same file as --baseline"),
    ]:
        result = clash_report(scene, *arguments)
        assert result.returncode == 2, result.stderr
        lines = error_lines(result)
        assert len(lines) == 1 and re.search(reason, lines[0]), result.stderr
        assert "refusing to overwrite it" in lines[0]
        assert "collide: " not in result.stderr  # refused before any work
    assert {path: path.read_bytes() for path in originals} == originals
    assert not report.exists()


def test_a_crafted_baseline_exits_2_naming_the_field(small_scene, tmp_path):
    baseline = tmp_path / "baseline.json"
    assert clash_report(small_scene, "--json", str(baseline)).returncode == 1
    report = json.loads(baseline.read_text(encoding="utf-8"))
    report["clashes"][-1]["worst_frame"] = '<img src=x onerror="alert(1)">'
    baseline.write_text(json.dumps(report), encoding="utf-8")
    html = tmp_path / "report.html"
    result = clash_report(small_scene, "--baseline", str(baseline), "--html", str(html))
    assert result.returncode == 2, result.stderr
    lines = error_lines(result)
    index = len(report["clashes"]) - 1
    assert len(lines) == 1, result.stderr
    assert f"clashes[{index}] field 'worst_frame' must be an integer" in lines[0]
    assert not html.exists()


def test_objects_with_a_nan_vertex_or_transform_are_left_out_and_named_and_the_others_reported(
    tmp_path,
):
    """A NaN vertex or a NaN transform in one object stopped the whole run with exit 2: a
    CI gate saw no clash of the model until it was fixed. The run goes on without them
    and the report names them (JSON and HTML)."""
    source = BOX_HELPERS + (
        'box("Wall", (0, 0, 0), (1, 1, 1))\n'
        'box("Pipe", (1.5, 0, 0), (1, 1, 1))\n'
        'broken = box("Broken", (-1.5, 0, 0), (1, 1, 1))\n'
        'broken.data.vertices[0].co.x = float("nan")\n'
        'box("Lost", (0, 1.5, 0), (1, 1, 1)).location.z = float("nan")\n'
        "bpy.ops.wm.save_as_mainfile(filepath=out)\n"
    )
    blend = build_scene(tmp_path, source, "nan")
    paths = {kind: tmp_path / f"r.{kind}" for kind in ("json", "html")}
    result = clash_report(
        blend, "--frames", "1", "--json", str(paths["json"]), "--html", str(paths["html"])
    )
    assert result.returncode == 1, result.stderr
    report = json.loads(paths["json"].read_text(encoding="utf-8"))
    assert [(clash["a"], clash["b"]) for clash in report["clashes"]] == [("Pipe", "Wall")]
    assert report["left_out"] == {
        "Broken": "NaN or infinite vertex coordinates",
        "Lost": "NaN or infinite transform",
    }
    assert "left out of the check" in paths["html"].read_text(encoding="utf-8")
