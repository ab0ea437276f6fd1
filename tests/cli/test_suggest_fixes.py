"""`--suggest-fixes` through `blender_scripts/clash_report.py` in Debian's Blender 3.4: the
fixes printed, applied to the scene by another Blender run, leave each pair apart."""

from __future__ import annotations

import json
import re

import jsonschema
import pytest

from tests.cli.helpers import read_result
from tests.cli.test_clash_report import SCHEMA, SMALL_SCENE, blender, build_scene, clash_report

# Applies each fix (given as JSON after `--`) alone at its frame and prints, per fix, the
# gap between the two objects' world bounds afterwards: exact for these unrotated boxes,
# > 0 when apart. b's location is in world units: the scene's parents are at the origin.
APPLY_FIXES = """
import json
import sys

import bpy
from mathutils import Vector

fixes = json.loads(sys.argv[sys.argv.index("--") + 1])
scene = bpy.context.scene


def bounds(obj):
    corners = [obj.matrix_world @ vertex.co for vertex in obj.data.vertices]
    low = [min(corner[k] for corner in corners) for k in range(3)]
    return low, [max(corner[k] for corner in corners) for k in range(3)]


gaps = []
for fix in fixes:
    scene.frame_set(fix["frame"])
    a, b = bpy.data.objects[fix["a"]], bpy.data.objects[fix["b"]]
    before = b.location.copy()
    b.location = before + Vector(fix["translation"])
    bpy.context.view_layer.update()
    (lo_a, hi_a), (lo_b, hi_b) = bounds(a), bounds(b)
    gaps.append(max(max(lo_b[k] - hi_a[k], lo_a[k] - hi_b[k]) for k in range(3)))
    b.location = before
print("RESULT " + json.dumps(gaps))
"""


@pytest.fixture(scope="module")
def small_scene(tmp_path_factory):
    """test_clash_report's scene: its comment lists the clashes."""
    return build_scene(tmp_path_factory.mktemp("small"), SMALL_SCENE, "small")


FIX_LINE = re.compile(r"^fix ([0-9a-f]{16}) (.+) / (.+): move (.+) by \((.+)\)$")


@pytest.mark.parametrize("geometry", ["proxy", "mesh"])
def test_printed_fixes_separate_their_pairs(small_scene, tmp_path, geometry):
    out = tmp_path / "report.json"
    result = clash_report(
        small_scene, "--suggest-fixes", "--geometry", geometry, "--json", str(out)
    )
    assert result.returncode == 1, result.stderr
    report = json.loads(out.read_text())
    jsonschema.Draft202012Validator(json.loads(SCHEMA.read_text())).validate(report)
    by_id = {clash["id"]: clash for clash in report["clashes"]}
    assert all("fix" in clash for clash in by_id.values())
    printed = {}
    for line in result.stdout.splitlines():
        match = FIX_LINE.match(line)
        if match:
            clash_id, a, b, moved, numbers = match.groups()
            assert (a, b, moved) == (by_id[clash_id]["a"], by_id[clash_id]["b"], b)
            printed[clash_id] = [float(value) for value in numbers.split(", ")]
    moved = {key for key, clash in by_id.items() if "object" in clash["fix"]}
    assert set(printed) == moved
    # On the meshes Mover lies wholly inside Static at its worst frame: no translation
    # is offered (it would pass through Static's wall); every other clash gets one.
    contained = {key for key, clash in by_id.items() if clash["relation"].endswith("_inside_b")}
    if geometry == "mesh":
        assert [by_id[key]["a"] for key in contained] == ["Mover"]
        assert "inside" in by_id[next(iter(contained))]["fix"]["none"]
    assert moved == set(by_id) - contained
    fixes = [
        {
            "frame": by_id[clash_id]["worst_frame"],
            "a": by_id[clash_id]["a"],
            "b": by_id[clash_id]["b"],
            "translation": translation,
        }
        for clash_id, translation in sorted(printed.items())
    ]
    script = tmp_path / "apply_fixes.py"
    script.write_text(APPLY_FIXES)
    applied = blender(str(small_scene), "--python", str(script), "--", json.dumps(fixes))
    gaps = read_result(applied.stdout)
    assert gaps is not None, applied.stderr
    assert len(gaps) == len(fixes) >= 3
    assert min(gaps) > 0, list(zip(fixes, gaps, strict=True))
