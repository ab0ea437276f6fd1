"""Mesh mode through `blender_scripts/clash_report.py` in Debian's Blender 3.4: clashes
decided on the evaluated triangles, and `--geometry proxy` to decide on the proxies."""

from __future__ import annotations

import json

import jsonschema
import numpy as np
import pytest

from tests.cli.test_clash_report import (
    BOX_HELPERS,
    SCHEMA,
    SCRIPT,
    blender,
    build_scene,
    clash_report,
)

# Each pair is set apart from the others by 10 m along x:
# - Ring, a torus (major radius 1, minor 0.25), and Pin, a 0.2 m cube in its hole: the
#   ring's proxy covers the pin, its triangles never come closer than 0.65 m.
# - Inner, a 0.4 m cube, wholly inside Outer, a 2 m cube: no triangles cross; the inner
#   cube's corners lie 0.8 m inside the outer surface.
# - Crate, a 1 m cube, rests on Floor: faces in contact, no penetration.
# - Chip, a 0.2 m cube, pokes through Sheet, an open plane, by 0.1 m on each side.
# - Beam.X and Beam.Y, 4 m x 0.4 m x 0.4 m, cross at right angles with coplanar faces.
MESH_SCENE = (
    BOX_HELPERS
    + """
scene.frame_start, scene.frame_end = 1, 1
bpy.ops.mesh.primitive_torus_add(major_radius=1.0, minor_radius=0.25, location=(0, 0, 0))
bpy.context.object.name = "Ring"
box("Pin", (0, 0, 0), (0.1, 0.1, 0.1))
box("Outer", (10, 0, 0), (1, 1, 1))
box("Inner", (10, 0, 0), (0.2, 0.2, 0.2))
box("Floor", (20, 0, -0.1), (2, 2, 0.1))
box("Crate", (20, 0, 0.5), (0.5, 0.5, 0.5))
bpy.ops.mesh.primitive_plane_add(size=2.0, location=(30, 0, 0))
bpy.context.object.name = "Sheet"
box("Chip", (30, 0, 0), (0.1, 0.1, 0.1))
box("Beam.X", (40, 0, 0), (2, 0.2, 0.2))
box("Beam.Y", (40, 0, 0), (0.2, 2, 0.2))
bpy.ops.wm.save_as_mainfile(filepath=out)
"""
)

TESTS = {
    "format": "collide-tests",
    "version": 1,
    "tests": [
        {"name": "hard", "a": {}, "type": "hard"},
        {"name": "touch", "a": {}, "type": "touching"},
    ],
}


@pytest.fixture(scope="module")
def mesh_scene(tmp_path_factory):
    folder = tmp_path_factory.mktemp("mesh")
    tests = folder / "tests.json"
    tests.write_text(json.dumps(TESTS))
    return build_scene(folder, MESH_SCENE, "mesh"), tests


def run(mesh_scene, tmp_path, *arguments):
    blend, tests = mesh_scene
    out = tmp_path / "report.json"
    result = clash_report(blend, "--tests", str(tests), "--json", str(out), *arguments)
    assert result.returncode in (0, 1), result.stderr
    report = json.loads(out.read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator(json.loads(SCHEMA.read_text())).validate(report)
    return {
        (clash["test"], *sorted((clash["a"], clash["b"]))): clash for clash in report["clashes"]
    }, report


def test_mesh_mode_decides_on_the_triangles(mesh_scene, tmp_path):
    clashes, report = run(mesh_scene, tmp_path)
    assert [test["geometry"] for test in report["tests"]] == ["mesh", "mesh"]
    hard = {key[1:] for key in clashes if key[0] == "hard"}
    assert hard == {("Inner", "Outer"), ("Chip", "Sheet"), ("Beam.X", "Beam.Y")}
    touching = {key[1:] for key in clashes if key[0] == "touch"}
    assert touching == {("Crate", "Floor")}
    assert all(clash["geometry"] == "mesh" for clash in clashes.values())

    inner = clashes["hard", "Inner", "Outer"]
    assert inner["relation"] == ("a_inside_b" if inner["a"] == "Inner" else "b_inside_a")
    # The least move that takes Inner out of Outer (two convex meshes: their EPA).
    assert inner["distance"] == pytest.approx(-1.2, abs=1e-5)
    # A corner or a face centre of Inner (all lie 0.8 inside Outer's faces).
    on_inner = inner["witnesses"][0 if inner["a"] == "Inner" else 1]
    assert np.abs(np.subtract(on_inner, [10, 0, 0])).max() == pytest.approx(0.2, abs=1e-5)

    beams = clashes["hard", "Beam.X", "Beam.Y"]
    assert beams["relation"] == "crossing" and beams["distance"] <= -0.2 + 1e-5

    chip = clashes["hard", "Chip", "Sheet"]
    assert chip["relation"] == "crossing"
    assert chip["distance"] == pytest.approx(-0.1, abs=1e-5)
    # The plane is open: nothing can be found inside it, and the report says so.
    assert len(report["warnings"]) == 1 and "Sheet" in report["warnings"][0]
    assert "Chip" not in report["warnings"][0]

    crate = clashes["touch", "Crate", "Floor"]
    assert crate["relation"] == "touching" and abs(crate["distance"]) <= 1e-5
    for clash in clashes.values():
        assert np.allclose(np.mean(clash["witnesses"], axis=0), clash["point"])


def test_geometry_proxy_decides_on_the_proxies(mesh_scene, tmp_path):
    clashes, report = run(mesh_scene, tmp_path, "--geometry", "proxy")
    assert [test["geometry"] for test in report["tests"]] == ["proxy", "proxy"]
    hard = {key[1:] for key in clashes if key[0] == "hard"}
    # The ring's proxy covers the pin; a plane's flat proxy still meets the chip.
    assert ("Pin", "Ring") in hard and ("Chip", "Sheet") in hard
    assert all(clash["geometry"] == "proxy" for clash in clashes.values())
    assert report["warnings"] == []


# Stop motion: a frame_change_pre handler gives Puppet a bigger mesh from frame 5 on,
# which then reaches into Wall.
PUPPET_SCENE = (
    BOX_HELPERS
    + """
scene.frame_start, scene.frame_end = 1, 10
puppet = box("Puppet", (0, 0, 0), (0.1, 0.1, 0.1))
box("Wall", (0.6, 0, 0), (0.3, 0.3, 0.3))
box("Big", (50, 0, 0), (0.5, 0.5, 0.5)).data.name = "big"
bpy.ops.wm.save_as_mainfile(filepath=out)
"""
)
SWAP_HANDLER = """
import bpy
small = bpy.data.objects["Puppet"].data
def swap(scene, *args):
    puppet = bpy.data.objects["Puppet"]
    puppet.data = bpy.data.meshes["big"] if scene.frame_current >= 5 else small
bpy.app.handlers.frame_change_pre.append(swap)
"""


@pytest.mark.parametrize("geometry", ["mesh", "proxy"])
def test_a_mesh_swapped_by_a_frame_handler_is_read_again(tmp_path, geometry):
    blend = build_scene(tmp_path, PUPPET_SCENE, "puppet")
    out = tmp_path / "report.json"
    result = blender(
        str(blend), "--python-expr", SWAP_HANDLER, "--python", str(SCRIPT), "--",
        "--frames", "1-10", "--geometry", geometry, "--json", str(out),
    )  # fmt: skip
    assert result.returncode == 1, result.stderr
    clashes = json.loads(out.read_text(encoding="utf-8"))["clashes"]
    assert [(c["a"], c["b"], c["frames"]) for c in clashes] == [("Puppet", "Wall", [[5, 10]])]


# Geometry animated by Blender itself, read again at every frame it changes: Blob's shape
# key grows it into Wall from frame 6 on (value 0 at frame 4, 0.5 at 5, 1 from 6); Rail's
# Array modifier goes from 1 to 5 copies at frame 6 (constant interpolation), reaching
# Post. Their proxies and meshes at frame 1 touch nothing.
ANIMATED_GEOMETRY_SCENE = (
    BOX_HELPERS
    + """
scene.frame_start, scene.frame_end = 1, 10
blob = box("Blob", (0, 0, 0), (0.1, 0.1, 0.1))
box("Wall", (0.6, 0, 0), (0.3, 0.3, 0.3))
blob.shape_key_add(name="Basis")
grow = blob.shape_key_add(name="Grow")
for point in grow.data:
    point.co *= 4
grow.value = 0.0
grow.keyframe_insert("value", frame=4)
grow.value = 1.0
grow.keyframe_insert("value", frame=6)
rail = box("Rail", (10, 0, 0), (0.1, 0.1, 0.1))
box("Post", (10.75, 0, 0), (0.1, 0.1, 0.1))
array = rail.modifiers.new("Array", "ARRAY")
array.count = 1
array.keyframe_insert("count", frame=5)
array.count = 5
array.keyframe_insert("count", frame=6)
for curve in rail.animation_data.action.fcurves:
    for point in curve.keyframe_points:
        point.interpolation = "CONSTANT"
bpy.ops.wm.save_as_mainfile(filepath=out)
"""
)


@pytest.mark.parametrize("geometry", ["mesh", "proxy"])
def test_geometry_animated_by_a_shape_key_or_a_modifier_is_read_again(tmp_path, geometry):
    blend = build_scene(tmp_path, ANIMATED_GEOMETRY_SCENE, "animated")
    out = tmp_path / "report.json"
    result = clash_report(blend, "--frames", "1-10", "--geometry", geometry, "--json", str(out))
    assert result.returncode == 1, result.stderr
    clashes = json.loads(out.read_text(encoding="utf-8"))["clashes"]
    assert sorted((c["a"], c["b"], c["frames"]) for c in clashes) == [
        ("Blob", "Wall", [[6, 10]]),
        ("Post", "Rail", [[6, 10]]),
    ]


# A crate sunk 1 mm into a floor 2 km from the origin, where the contact epsilon is 2 mm.
FAR_SCENE = (
    BOX_HELPERS
    + """
scene.frame_start, scene.frame_end = 1, 1
box("Floor", (2000, 0, -0.1), (2, 2, 0.1))
box("Crate", (2000, 0, 0.499), (0.5, 0.5, 0.5))
bpy.ops.wm.save_as_mainfile(filepath=out)
"""
)


def test_a_scene_far_from_the_origin_is_warned_of_where_its_millimetres_are_contact(
    tmp_path,
):
    blend = build_scene(tmp_path, FAR_SCENE, "far")
    tests = tmp_path / "tests.json"
    tests.write_text(json.dumps(TESTS))
    out = tmp_path / "report.json"
    result = clash_report(blend, "--tests", str(tests), "--json", str(out))
    report = json.loads(out.read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator(json.loads(SCHEMA.read_text())).validate(report)
    assert [(clash["test"], clash["relation"]) for clash in report["clashes"]] == [
        ("touch", "touching")
    ]
    assert report["reach"] == pytest.approx(2002.0, abs=1e-3)
    (warning,) = report["warnings"]
    assert "2,002 m from the origin" in warning and "only to 2 mm " in warning
    assert f"collide: warning: {warning}" in result.stderr.splitlines()
