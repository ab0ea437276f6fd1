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


FITS_SCRIPT = r"""
import json, sys
import bpy, addon_utils
import numpy as np

zip_path = sys.argv[sys.argv.index("--") + 1]
assert bpy.ops.preferences.addon_install(filepath=zip_path) == {"FINISHED"}
addon_utils.enable("collide_addon", default_set=True, handle_error=None)
from collide_addon.core.fit import fit_shapes

rng = np.random.default_rng(7)
point_sets = []
for _ in range(400):
    # Rounded, stretched shapes of 10-80 points, turned and moved, as Blender stores them.
    directions = rng.normal(size=(int(rng.integers(10, 80)), 3))
    directions /= np.linalg.norm(directions, axis=1, keepdims=True)
    points = np.sign(directions) * np.abs(directions) ** 0.5 * rng.uniform(0.2, 3.0, 3)
    turn = np.linalg.qr(rng.normal(size=(3, 3)))[0]
    moved = points @ turn.T + rng.uniform(-50.0, 50.0, 3)
    point_sets.append(moved.astype(np.float32).astype(np.float64))

def fitted(shape):
    return [
        (fit.kind, fit.center.tobytes(), fit.rotation.tobytes(), fit.half_extents.tobytes(),
         fit.radius, fit.volume)
        for fit in fit_shapes(point_sets, shape)
    ]

differing = {}
for shape in ("AUTO", "CAPSULE", "SPHERE"):
    first = fitted(shape)
    counts = []
    for _ in range(3):
        # Other allocations between the calls, as a session makes them.
        junk = [np.empty(int(size)) for size in rng.integers(1, 500, 20)]
        counts.append(sum(a != b for a, b in zip(first, fitted(shape))))
    differing[shape] = counts
addon_utils.disable("collide_addon", default_set=True)
print("RESULT " + json.dumps({"differing": differing}))
"""


def test_fits_are_the_same_bits_from_call_to_call(tmp_path):
    """In Debian's Blender 3.4 (its numpy 1.24.2) numpy's sin, cos, log and powers other
    than 2 give one of two roundings for the same input from call to call; the fits use
    products and Python's math there instead, so fitting the same point sets again gives
    the same bits (before, capsule fits differed in the last bit, 0-511 of 800 per call,
    and could keep another local minimum)."""
    completed, output = run_captured(
        [
            blender_binary(),
            "-b",
            "--factory-startup",
            "--python-exit-code",
            "1",
            "--python-expr",
            FITS_SCRIPT,
            "--",
            str(addon_zip()),
        ],
        blender_environment(tmp_path),
        tmp_path,
    )
    assert completed.returncode == 0, output
    result = read_result(completed.stdout)
    assert result is not None, output
    assert result["differing"] == {"AUTO": [0, 0, 0], "CAPSULE": [0, 0, 0], "SPHERE": [0, 0, 0]}
