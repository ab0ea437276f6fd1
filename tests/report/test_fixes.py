"""--suggest-fixes without Blender: each clash's "fix" leaves its pair apart at the worst
frame (proxies and meshes), reasons where there is none, and every writer carries it
(BCF in the topic's description)."""

from __future__ import annotations

import csv
import dataclasses
import json
import zipfile
from xml.etree import ElementTree

import jsonschema
import numpy as np

from collide_addon.clash.evaluate import FrameMeshes, ObjectMetadata
from collide_addon.clash.fixes import add_fixes
from collide_addon.clash.tests import ClashTest
from collide_addon.core import APART, ShapeBatch, mesh_contacts, pair_distance, prepare_mesh
from collide_addon.report.bcf_report import topic_guid
from collide_addon.report.json_report import SCHEMA_PATH, read_json_report
from collide_addon.report.run import FrameSample, run_report
from collide_dev.mesh_shapes import box_mesh
from tests.report.sample_report import SAMPLE_TESTS, read_sample_frame

OBJECTS = [ObjectMetadata("block"), ObjectMetadata("crate"), ObjectMetadata("inner")]
CUBE = prepare_mesh(*box_mesh([-1, -1, -1], [1, 1, 1]))
SMALL = prepare_mesh(*box_mesh([-0.2, -0.2, -0.2], [0.2, 0.2, 0.2]))


def centres(time: float) -> np.ndarray:
    """The crate slides along x into the block, deepest at frame 3; the inner box stays
    inside the block."""
    return np.array([[0.0, 0, 0], [1.5 + 0.5 * abs(time - 3.0), 0.3, 0], [0.0, 0.5, 0]])


def read_frame(time: float) -> FrameSample:
    at = centres(time)
    half = [[1.0, 1, 1], [1.0, 1, 1], [0.2, 0.2, 0.2]]
    batch = ShapeBatch.boxes(at, [np.eye(3)] * 3, half)
    matrices = np.repeat(np.eye(4)[None], 3, axis=0)
    matrices[:, :3, 3] = at
    meshes = FrameMeshes(lambda row: [CUBE, CUBE, SMALL][row], matrices)
    return FrameSample(batch, OBJECTS, meshes)


def moved_apart(clash) -> float:
    """The distance of the pair's proxies at the worst frame, b moved by the fix."""
    sample = read_frame(clash["worst_frame"])
    rows = [obj.name for obj in OBJECTS]
    b = rows.index(clash["b"])
    centers = sample.batch.centers.copy()
    centers[b] += clash["fix"]["translation"]
    batch = dataclasses.replace(sample.batch, centers=centers)
    return pair_distance(batch, [rows.index(clash["a"])], [b]).distance[0]


def test_proxy_fixes_leave_each_pair_apart_at_its_worst_frame(tmp_path):
    tests = [ClashTest("hard", geometry="proxy")]
    paths = {kind: tmp_path / f"report.{kind}" for kind in ("json", "csv", "html", "bcf")}
    report = run_report(
        tests,
        (1, 5, 1),
        read_frame,
        suggest_fixes=True,
        json_path=paths["json"],
        csv_path=paths["csv"],
        html_path=paths["html"],
        bcf_path=paths["bcf"],
    ).report
    clashes = {(clash["a"], clash["b"]): clash for clash in report["clashes"]}
    crate = clashes[("block", "crate")]
    assert crate["worst_frame"] == 3
    assert crate["fix"]["object"] == "crate"
    # Overlap 0.5 along x at frame 3 (crate centre at x = 1.5), and twice the contact
    # epsilon (1e-6 near the origin) as the margin that keeps rounding out.
    np.testing.assert_allclose(crate["fix"]["translation"], [0.5, 0, 0], atol=1e-5)
    for clash in report["clashes"]:
        assert moved_apart(clash) > 0
    # Every writer carries the fixes.
    schema = json.loads(SCHEMA_PATH.read_text())
    jsonschema.Draft202012Validator(schema).validate(json.loads(paths["json"].read_text()))
    assert read_json_report(paths["json"])["clashes"] == report["clashes"]
    with paths["csv"].open(newline="") as stream:
        rows = list(csv.DictReader(stream))
    assert {row["fix"] for row in rows if row["b"] == "crate"} == {"move crate by (0.500002, 0, 0)"}
    html = paths["html"].read_text()
    assert "<th>Fix</th>" in html and "move crate by (0.500002, 0, 0)" in html
    with zipfile.ZipFile(paths["bcf"]) as archive:
        markup = archive.read(f"{topic_guid(crate['id'])}/markup.bcf")
    description = ElementTree.fromstring(markup).findtext("Topic/Description")
    assert description.endswith(" Suggested fix: move crate by (0.500002, 0, 0).")


def test_mesh_fixes_are_checked_on_the_triangles_and_containment_has_none():
    tests = [ClashTest("hard", geometry="mesh")]
    report = run_report(tests, (1, 5, 1), read_frame, suggest_fixes=True).report
    clashes = {(clash["a"], clash["b"]): clash for clash in report["clashes"]}
    crate = clashes[("block", "crate")]
    translation = np.array(crate["fix"]["translation"])
    assert translation[0] > 0.5 and np.allclose(translation[1:], 0.0)
    sample = read_frame(crate["worst_frame"])
    matrices = sample.meshes.matrices.copy()
    matrices[1, :3, 3] += translation
    after = mesh_contacts([CUBE, CUBE], matrices[:2], [[0, 1]], 0.0)
    assert after.relation[0] == APART
    inside = clashes[("block", "inner")]
    assert "inside" in inside["fix"]["none"]


def test_resolved_clashes_keep_no_fix_and_other_types_say_why():
    first = run_report(SAMPLE_TESTS, (1, 4, 1), read_sample_frame, suggest_fixes=True).report
    assert all("fix" in clash for clash in first["clashes"])
    records = [dict(clash, status="resolved") for clash in first["clashes"]]
    records.append(dict(first["clashes"][0], type="duplicates", status="new"))
    fixed = add_fixes(records, SAMPLE_TESTS, read_sample_frame)
    assert [clash.get("fix") for clash in fixed[:-1]] == [
        clash.get("fix") for clash in records[:-1]
    ]
    assert fixed[-1]["fix"] == {"none": "duplicates clashes are not moved apart"}


def test_a_tests_mesh_fixes_do_not_depend_on_the_other_tests():
    # The mesh search took one clearance for all the pairs of a frame, the largest: beside
    # a clearance test of 0.5 the hard clash's fix moved the crate 0.5 too far.
    hard = ClashTest("hard", geometry="mesh")
    gap = ClashTest("gap", test_type="clearance", tolerance=0.5, geometry="mesh")

    def crate_fixes(tests):
        report = run_report(tests, (3, 3, 1), read_frame, suggest_fixes=True).report
        return {
            clash["test"]: np.array(clash["fix"]["translation"])
            for clash in report["clashes"]
            if clash["b"] == "crate"
        }

    together = crate_fixes([hard, gap])
    alone = {**crate_fixes([hard]), **crate_fixes([gap])}
    assert together.keys() == alone.keys() == {"hard", "gap"}
    for name in ("hard", "gap"):
        np.testing.assert_array_equal(together[name], alone[name])
    # Overlap 0.5 along x: the hard fix leaves the crate touching no more, the clearance
    # fix 0.5 beyond that (a search step of slack, 0.02 % of the move, each).
    np.testing.assert_allclose(together["hard"], [0.5, 0, 0], atol=1e-3)
    np.testing.assert_allclose(together["gap"], [1.0, 0, 0], atol=1e-3)


def test_clashes_the_scan_could_not_see_keep_their_fix():
    # A baseline's clash carried over unchecked (its frames, 4-5, are not the scan's 1-3):
    # its worst frame is not read, its fix stays the baseline's.
    report = run_report([ClashTest("hard", geometry="proxy")], (1, 5, 1), read_frame).report
    crate = next(clash for clash in report["clashes"] if clash["b"] == "crate")
    carried = dict(crate, frames=[[4, 5]], worst_frame=4, fix={"none": "from the baseline"})
    times = []

    def reading(time):
        times.append(time)
        return read_frame(time)

    fixed = add_fixes([carried, crate], [ClashTest("hard", geometry="proxy")], reading, (1, 3, 1))
    assert fixed[0] == carried and "translation" in fixed[1]["fix"]
    assert times == [crate["worst_frame"]]
