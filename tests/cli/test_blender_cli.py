"""The add-on in the real `blender` binary (Debian's Blender 3.4, legacy add-on path)."""

from tests.addon_zip import addon_zip
from tests.processes import run_captured

from .helpers import blender_binary, blender_environment, read_result

SCRIPT = r"""
import json, sys
import bpy, addon_utils

zip_path = sys.argv[sys.argv.index("--") + 1]
assert bpy.ops.preferences.addon_install(filepath=zip_path) == {"FINISHED"}
addon_utils.enable("collide_addon", default_set=True, handle_error=None)
import collide_addon

bpy.ops.wm.read_homefile(use_empty=True)
scene = bpy.context.scene
cube = bpy.data.meshes.new("cube")
cube.from_pydata(
    [(x, y, z) for x in (-1, 1) for y in (-1, 1) for z in (-1, 1)],
    [],
    [(0, 1, 3, 2), (4, 6, 7, 5), (0, 4, 5, 1), (2, 3, 7, 6), (0, 2, 6, 4), (1, 5, 7, 3)],
)
bpy.ops.mesh.primitive_uv_sphere_add(radius=1.0, location=(6.0, 0.0, 0.0))
ball = bpy.context.active_object
ball.name = "Ball"
ball.keyframe_insert("location", frame=1)
ball.location = (0.0, 0.0, 0.0)
ball.keyframe_insert("location", frame=11)
for name, x in (("Wall", 0.0), ("Far", 0.0)):
    obj = bpy.data.objects.new(name, cube)
    obj.location = (x, 20.0 if name == "Far" else 0.0, 0.0)
    scene.collection.objects.link(obj)
    obj.color = (0.25, 0.5, 0.75, 1.0)

scene.frame_set(1)
assert bpy.ops.collide.detect() == {"FINISHED"}
at_start = [(c.name_a, c.name_b) for c in scene.collide.clashes]
scene.collide.live = True
frames = {}
for frame in range(1, 12):
    scene.frame_set(frame)
    frames[frame] = len(scene.collide.clashes)
wall = bpy.data.objects["Wall"]
waiting = tuple(wall.color)  # frame changes leave the colours until the frames stop
# what the end of a playback or the timer runs in a UI session
collide_addon.blender.session.settle_all()
tinted = tuple(wall.color)
scene.collide.live = False
restored = tuple(wall.color)
addon_utils.disable("collide_addon", default_set=True)
print("RESULT " + json.dumps({
    "version": bpy.app.version_string,
    "file": collide_addon.__file__,
    "at_start": at_start,
    "frames": frames,
    "waiting": waiting,
    "tinted": tinted,
    "restored": restored,
    "unregistered": not hasattr(bpy.types.Scene, "collide"),
}))
"""


def test_blender_binary_installs_and_detects(tmp_path):
    blender = blender_binary()
    zip_path = addon_zip()
    environment = blender_environment(tmp_path)
    completed, output = run_captured(
        [
            blender,
            "-b",
            "--factory-startup",
            "--python-exit-code",
            "1",
            "--python-expr",
            SCRIPT,
            "--",
            str(zip_path),
        ],
        environment,
        tmp_path,
    )
    assert completed.returncode == 0, output
    result = read_result(completed.stdout)
    assert result is not None, output
    assert result["version"].startswith("3.4")
    assert result["file"].startswith(str(tmp_path / "scripts" / "addons" / "collide_addon"))
    assert result["at_start"] == []
    # The ball (radius 1) reaches the cube (half-size 1) when x <= 2: Bezier easing
    # puts that between frames 7 and 9; from then on the pair is reported every frame.
    counts = [result["frames"][str(frame)] for frame in range(1, 12)]
    first = counts.index(1)
    assert 6 <= first <= 9 and set(counts[:first]) == {0} and set(counts[first:]) == {1}
    assert result["waiting"] == [0.25, 0.5, 0.75, 1.0]
    assert result["tinted"] != [0.25, 0.5, 0.75, 1.0]
    assert result["restored"] == [0.25, 0.5, 0.75, 1.0]
    assert result["unregistered"]
