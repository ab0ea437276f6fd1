"""The same zip installed the pre-4.2 way: Preferences > Add-ons > Install, then enable.

Runs in a separate Python process with the bpy wheel, so that the legacy module
`collide_addon` and the extension enabled in this process never share Blender's class
registry.
"""

import json
import os
import sys

from tests.addon_zip import addon_zip
from tests.processes import run_captured

SCRIPT = r"""
import json, sys
import bpy
import addon_utils

result = bpy.ops.preferences.addon_install(filepath=sys.argv[1])
assert result == {"FINISHED"}, result
addon_utils.enable("collide_addon", default_set=True, handle_error=None)
import collide_addon
bpy.ops.wm.read_homefile(use_empty=True)
mesh = bpy.data.meshes.new("cube")
mesh.from_pydata(
    [(x, y, z) for x in (-1, 1) for y in (-1, 1) for z in (-1, 1)],
    [],
    [(0, 1, 3, 2), (4, 6, 7, 5), (0, 4, 5, 1), (2, 3, 7, 6), (0, 2, 6, 4), (1, 5, 7, 3)],
)
for name, x in (("A", 0.0), ("B", 1.0), ("C", 5.0)):
    obj = bpy.data.objects.new(name, mesh)
    obj.location = (x, 0, 0)
    bpy.context.scene.collection.objects.link(obj)
assert bpy.ops.collide.detect() == {"FINISHED"}
clashes = [(c.name_a, c.name_b, round(c.distance, 6)) for c in bpy.context.scene.collide.clashes]
addon_utils.disable("collide_addon", default_set=True)
print("RESULT " + json.dumps({
    "file": collide_addon.__file__,
    "clashes": clashes,
    "unregistered": not hasattr(bpy.types.Scene, "collide"),
}))
if bpy.app.version[:2] == (4, 2):
    # bpy 4.2's C++ static destructors run after Python has finalized and crash once a
    # Python property callback was registered: leave before them, the result is out.
    sys.stdout.flush()
    import os
    os._exit(0)
"""


def test_legacy_addon_install(tmp_path):
    environment = dict(os.environ, BLENDER_USER_RESOURCES=str(tmp_path))
    for variable, folder in (
        ("BLENDER_USER_CONFIG", "config"),
        ("BLENDER_USER_SCRIPTS", "scripts"),
        ("BLENDER_USER_EXTENSIONS", "extensions"),
        ("BLENDER_USER_DATAFILES", "datafiles"),
    ):
        environment[variable] = str(tmp_path / folder)
    # Only the installed copy may be found, not the checkout.
    environment.pop("PYTHONPATH", None)
    completed, output = run_captured(
        [sys.executable, "-c", SCRIPT, str(addon_zip())], environment, tmp_path
    )
    assert completed.returncode == 0, output
    line = next(line for line in completed.stdout.splitlines() if line.startswith("RESULT "))
    result = json.loads(line.removeprefix("RESULT "))
    assert result["file"].startswith(str(tmp_path / "scripts" / "addons" / "collide_addon"))
    assert result["clashes"] == [["A", "B", -1.0]]
    assert result["unregistered"]
