"""Reports: JSON (schema-validated), HTML, CSV, BCF 2.1 (XSD-validated), atomic writes."""

from __future__ import annotations

import base64
import csv
import io
import json
import os
import re
import subprocess
import sys
import uuid
import xml.etree.ElementTree as ElementTree
import zipfile
from datetime import UTC, datetime
from pathlib import Path

import jsonschema
import numpy as np
import pytest
import xmlschema

from collide_addon.core import ShapeBatch
from collide_addon.core.clash import (
    ClashTest,
    ObjectMetadata,
    Selector,
    carry_over_status,
    clash_records,
    concat_hits,
    evaluate_frame,
    object_table,
    prepare_test,
)
from collide_addon.report.atomic import write_bytes_atomic, write_text_atomic
from collide_addon.report.bcf_report import (
    bcf_bytes,
    camera_for_clash,
    compress_guid,
    expand_guid,
    markup_xml,
    object_ifc_guid,
    topic_guid,
    version_xml,
    viewpoint_guid,
    viewpoint_xml,
    write_bcf_report,
)
from collide_addon.report.csv_report import (
    COLUMNS,
    csv_text,
    format_intervals,
    safe_cell,
    write_csv_report,
)
from collide_addon.report.html_report import (
    TIMELINE_MAX_ROWS,
    html_text,
    timeline_svg,
    write_html_report,
)
from collide_addon.report.json_report import (
    SCHEMA_PATH,
    ReportError,
    build_report,
    group_open_clashes,
    read_json_report,
    report_to_json,
    summarize,
    write_json_report,
)

REPO = Path(__file__).resolve().parents[2]
BCF_SCHEMAS = Path(__file__).resolve().parents[2].parent / "shared" / "bcf-schemas" / "2.1"
EVIL = "<script>alert(1)</script>"
QUOTED = "a&b \"q\" 's'"
FORMULA = "=HYPERLINK(1)"
# A 1x1 PNG.
PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR4nGNgYGD4DwABBAEAwS2OUAAAAABJRU5ErkJggg=="
)
CREATED = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)


def make_report():
    """A real run over three frames: EVIL moves through QUOTED; FORMULA touches QUOTED."""
    names = [EVIL, QUOTED, FORMULA, "far away"]
    table = object_table(
        [
            ObjectMetadata(
                name, properties={"IfcGuid": "2O2Fr$t4X7Zf8NOew3FLOH"} if name == QUOTED else {}
            )
            for name in names
        ]
    )
    tests = [
        ClashTest("hard", Selector(), None, "hard", 0.0),
        ClashTest("touch", Selector(), None, "touching", 0.01),
    ]
    records = []
    for test in tests:
        prepared = prepare_test(test, table)
        hits = []
        for frame in (1, 2, 3, 4):
            batch = ShapeBatch.spheres(
                [[frame - 2.0, 0, 0], [0, 0, 0], [0, 2.0, 0], [50, 0, 0]], [0.8, 1.0, 1.0, 1.0]
            )
            hits.append(evaluate_frame(prepared, batch, frame))
        records += clash_records(test, concat_hits(hits), step=1)
    objects = {
        name: {"ifc_guid": object_ifc_guid(name, obj.properties)}
        for name, obj in zip(names, table.objects, strict=True)
    }
    return build_report(
        tests=tests,
        clashes=records,
        frames=(1, 4, 1),
        blender="5.0.1",
        file="/tmp/scene <1>.blend",
        objects=objects,
    )


@pytest.fixture
def report():
    return make_report()


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


@pytest.mark.parametrize(
    "damage",
    [
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
        ({"clashes": [{"id": "1", "test": "t"}]}, r"clashes\[0\] lacks"),
        ({"clashes": [{"id": "1", "test": "t", "status": "fixed"}]}, "status 'fixed'"),
    ]:
        path.write_text(json.dumps({**report, **change}))
        with pytest.raises(ReportError, match=message):
            read_json_report(path)


# --- Atomic writes -------------------------------------------------------------------------


def test_atomic_write_replaces_and_cleans_up_on_failure(tmp_path):
    path = tmp_path / "out.txt"
    write_text_atomic(path, "first \u00e9")
    assert path.read_text(encoding="utf-8") == "first \u00e9"
    write_bytes_atomic(path, b"second")
    assert path.read_bytes() == b"second"
    with pytest.raises(TypeError):
        write_bytes_atomic(path, "not bytes")
    assert path.read_bytes() == b"second"
    assert [entry.name for entry in tmp_path.iterdir()] == ["out.txt"]
    umask = os.umask(0)
    os.umask(umask)
    assert path.stat().st_mode & 0o777 == 0o666 & ~umask  # as open() would create it


# --- CSV -------------------------------------------------------------------------------------


def test_csv_rows_round_trip(report, tmp_path):
    path = tmp_path / "r.csv"
    write_csv_report(report, path)
    rows = list(csv.reader(io.StringIO(path.read_text(encoding="utf-8"), newline="")))
    assert tuple(rows[0]) == COLUMNS
    assert len(rows) == 1 + len(report["clashes"])
    by_id = {row[0]: dict(zip(COLUMNS, row, strict=True)) for row in rows[1:]}
    for clash in report["clashes"]:
        row = by_id[clash["id"]]
        assert float(row["distance"]) == clash["distance"]
        assert [float(row[f"point_{axis}"]) for axis in "xyz"] == clash["point"]
        assert row["a"] in (clash["a"], "'" + clash["a"])
    touching = next(row for row in by_id.values() if row["test"] == "touch")
    assert touching["a"] == "'" + FORMULA
    assert touching["b"] == QUOTED


def test_csv_text_is_what_is_written(report, tmp_path):
    path = tmp_path / "r.csv"
    write_csv_report(report, path)
    assert path.read_bytes() == csv_text(report).encode("utf-8")


def test_safe_cell_and_format_intervals():
    assert safe_cell("=1+1") == "'=1+1" and safe_cell("-x") == "'-x" and safe_cell("Wall") == "Wall"
    assert format_intervals([[1, 12], [30, 31], [40, 40]]) == "1-12;30-31;40"
    assert format_intervals([]) == ""


# --- HTML ------------------------------------------------------------------------------------


def test_html_escapes_every_name(report, tmp_path):
    path = tmp_path / "r.html"
    write_html_report(report, path, thumbnails={report["clashes"][0]["id"]: PNG})
    text = path.read_text(encoding="utf-8")
    assert EVIL not in text
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in text
    assert "a&amp;b &quot;q&quot; &#x27;s&#x27;" in text
    assert "scene &lt;1&gt;.blend" in text
    # Only the report's own script element, no injected one.
    assert len(re.findall(r"<script\b", text)) == 1
    assert "http://" not in text.replace('xmlns="http://www.w3.org/2000/svg"', "")
    assert "https://" not in text


def test_html_sections_and_thumbnails(report):
    clash_id = report["clashes"][0]["id"]
    text = html_text(report, thumbnails={clash_id: PNG})
    for section in (
        'id="summary"',
        'id="timeline"',
        'id="clashes"',
        'id="groups"',
        "<svg",
        "table class",
    ):
        assert section in text
    assert "data:image/png;base64," + base64.b64encode(PNG).decode() in text
    assert text.count("<img") == 1
    assert text.count('<tr id="clash-') == len(report["clashes"])
    assert html_text(report).count("<img") == 0
    with pytest.raises(ValueError, match="not a PNG"):
        html_text(report, thumbnails={clash_id: b"GIF89a"})


def test_timeline_svg_is_well_formed_and_capped(report):
    svg = timeline_svg(report)
    root = ElementTree.fromstring(svg)
    namespace = "{http://www.w3.org/2000/svg}"
    bars = root.findall(f".//{namespace}rect")
    assert len(bars) == sum(len(clash["frames"]) for clash in report["clashes"])
    titles = [title.text for title in root.iter(f"{namespace}title")]
    assert f"{EVIL} / {QUOTED} (hard)" in titles
    many = dict(report, clashes=report["clashes"] * (TIMELINE_MAX_ROWS + 5))
    svg_many = timeline_svg(many)
    shown = svg_many[: svg_many.index("</svg>") + 6]
    assert len(ElementTree.fromstring(shown).findall(f".//{namespace}circle")) == TIMELINE_MAX_ROWS
    assert f"{len(many['clashes']) - TIMELINE_MAX_ROWS} more clashes" in svg_many


# --- BCF -------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def bcf_schemas():
    return {
        name: xmlschema.XMLSchema(str(BCF_SCHEMAS / f"{name}.xsd"))
        for name in ("markup", "visinfo", "version")
    }


def test_bcf_validates_against_official_xsds(report, tmp_path, bcf_schemas):
    snapshot_id = report["clashes"][0]["id"]
    path = tmp_path / "r.bcf"
    write_bcf_report(report, path, snapshots={snapshot_id: PNG}, created=CREATED)
    with zipfile.ZipFile(path) as archive:
        names = archive.namelist()
        bcf_schemas["version"].validate(io.BytesIO(archive.read("bcf.version")))
        assert ElementTree.fromstring(archive.read("bcf.version")).get("VersionId") == "2.1"
        folders = {name.split("/")[0] for name in names if "/" in name}
        assert folders == {topic_guid(clash["id"]) for clash in report["clashes"]}
        for clash in report["clashes"]:
            folder = topic_guid(clash["id"])
            markup = archive.read(f"{folder}/markup.bcf")
            viewpoint = archive.read(f"{folder}/viewpoint.bcfv")
            bcf_schemas["markup"].validate(io.BytesIO(markup))
            bcf_schemas["visinfo"].validate(io.BytesIO(viewpoint))
            topic = ElementTree.fromstring(markup).find("Topic")
            assert topic.get("Guid") == folder
            assert topic.findtext("Title") == f"{clash['test']}: {clash['a']} / {clash['b']}"
            assert topic.findtext("CreationDate") == CREATED.isoformat()
            visual = ElementTree.fromstring(viewpoint)
            selected = visual.findall("Components/Selection/Component")
            assert [item.findtext("AuthoringToolId") for item in selected] == [
                clash["a"],
                clash["b"],
            ]
            expected_guids = [report["objects"][clash[key]]["ifc_guid"] for key in "ab"]
            assert [item.get("IfcGuid") for item in selected] == expected_guids
            colours = visual.findall("Components/Coloring/Color")
            assert [colour.get("Color") for colour in colours] == ["FF0000", "0000FF"]
            has_snapshot = f"{folder}/snapshot.png" in names
            assert has_snapshot == (clash["id"] == snapshot_id)
            assert (ElementTree.fromstring(markup).findtext("Viewpoints/Snapshot") is not None) == (
                has_snapshot
            )
        assert archive.read(f"{topic_guid(snapshot_id)}/snapshot.png") == PNG


def test_bcf_uses_ifc_guid_property_and_derived_guids(report):
    quoted_guid = report["objects"][QUOTED]["ifc_guid"]
    assert quoted_guid == "2O2Fr$t4X7Zf8NOew3FLOH"
    assert report["objects"][EVIL]["ifc_guid"] == object_ifc_guid(EVIL)
    # Without an objects map the guids are derived from names.
    bare = dict(report, objects={})
    with zipfile.ZipFile(io.BytesIO(bcf_bytes(bare, created=CREATED))) as archive:
        clash = next(c for c in report["clashes"] if c["b"] == QUOTED and c["test"] == "touch")
        viewpoint = archive.read(f"{topic_guid(clash['id'])}/viewpoint.bcfv")
    guids = [c.get("IfcGuid") for c in ElementTree.fromstring(viewpoint).iter("Component")]
    assert guids[:2] == [object_ifc_guid(FORMULA), object_ifc_guid(QUOTED)]


def test_bcf_rejects_non_png_snapshot(report):
    with pytest.raises(ValueError, match="not a PNG"):
        bcf_bytes(report, snapshots={report["clashes"][0]["id"]: b"JPEG"})


def test_bcf_parts_validate_alone(report, bcf_schemas):
    clash = dict(report["clashes"][0], a="bad\x01name")
    markup = markup_xml(clash, CREATED, None, has_snapshot=False)
    bcf_schemas["markup"].validate(io.BytesIO(markup))
    assert ElementTree.fromstring(markup).find("Header") is None
    viewpoint = viewpoint_xml(clash, object_ifc_guid("x"), object_ifc_guid("y"))
    bcf_schemas["visinfo"].validate(io.BytesIO(viewpoint))
    assert ElementTree.fromstring(viewpoint).get("Guid") == viewpoint_guid(clash["id"])
    bcf_schemas["version"].validate(io.BytesIO(version_xml()))


def test_compress_guid_known_values_and_round_trip():
    assert compress_guid(uuid.UUID(int=0)) == "0" * 22
    assert compress_guid(uuid.UUID(int=2**128 - 1)) == "3" + "$" * 21
    assert compress_guid(uuid.UUID(int=64)) == "0" * 20 + "10"
    for seed in range(20):
        value = uuid.UUID(int=int.from_bytes(np.random.default_rng(seed).bytes(16), "big"))
        assert expand_guid(compress_guid(value)) == value
    with pytest.raises(ValueError, match="not an IFC guid"):
        expand_guid("4" + "0" * 21)


def test_object_ifc_guid_rules():
    assert object_ifc_guid("Wall") == object_ifc_guid("Wall", {})
    assert object_ifc_guid("Wall") != object_ifc_guid("Wall.001")
    assert re.fullmatch(r"[0-3][0-9A-Za-z_$]{21}", object_ifc_guid("Wall"))
    valid = "1hV5$Wx0n8bAJl9TdA4aHc"
    assert object_ifc_guid("Wall", {"GlobalId": valid}) == valid
    assert object_ifc_guid("Wall", {"IfcGuid": valid, "GlobalId": "0" * 22}) == valid
    assert object_ifc_guid("Wall", {"IfcGuid": "too short"}) == object_ifc_guid("Wall")


def test_camera_for_clash_frames_the_bounds():
    point = np.array([1.0, 2.0, 3.0])
    bounds = np.array([[0.0, 0.0, 0.0], [4.0, 4.0, 4.0]])
    position, direction, up = camera_for_clash(point, bounds, 60.0)
    assert np.isclose(np.linalg.norm(direction), 1) and np.isclose(np.linalg.norm(up), 1)
    assert np.isclose(direction @ up, 0)
    to_point = point - position
    assert np.allclose(to_point / np.linalg.norm(to_point), direction)
    assert up[2] > 0
    corners = np.array([[x, y, z] for x in (0, 4) for y in (0, 4) for z in (0, 4)], dtype=float)
    rays = corners - position
    angles = np.degrees(np.arccos(rays @ direction / np.linalg.norm(rays, axis=1)))
    assert (angles <= 30.0 + 1e-9).all()
    tiny_position, _, _ = camera_for_clash(point, [point, point], 60.0)
    assert np.linalg.norm(tiny_position - point) == pytest.approx(0.2)


# --- Layering --------------------------------------------------------------------------------


def test_core_and_report_import_no_blender():
    code = (
        "import sys, collide_addon.core.clash, collide_addon.report.json_report, "
        "collide_addon.report.html_report, collide_addon.report.csv_report, "
        "collide_addon.report.bcf_report, collide_addon.report.atomic; "
        "bad = [m for m in ('bpy', 'mathutils') if m in sys.modules]; "
        "sys.exit(str(bad) if bad else 0)"
    )
    result = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
