"""The viewport overlay (collide_addon/blender/draw.py) drawn for real.

Background Blender (`blender -b`, the bpy wheel) has no GPU, so the overlay's draw
handler is never even registered there. Here Debian's Blender 3.4 runs as a UI session
under a virtual X server (`xvfb-run`, Mesa's llvmpipe software OpenGL). Once its window
exists, a timer installs the add-on zip, builds a scene with a known clash, runs
`collide.detect` and renders the module's own draw callback (`draw._draw`, the function
the handler runs) into a 256x256 GPUOffScreen with known view and projection matrices.
The pixels are saved as .npy files; the tests here project the clash points and the
cubes' edges with the same matrices and look for the marker and wireframe colours there.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
from pathlib import Path

import numpy as np
import pytest

from tests.addon_zip import addon_zip

from .helpers import blender_binary, blender_environment, read_result

TIMEOUT = 120  # seconds for the whole Blender session (it takes about 5)

# Runs inside Blender: sys.argv after "--" holds the add-on zip and the output folder.
SCRIPT = r'''
import json
import os
import sys
import time
import traceback

import addon_utils
import bpy
import gpu
import numpy as np
from mathutils import Matrix, Vector

zip_path, out_dir = sys.argv[sys.argv.index("--") + 1 :][:2]
SIZE = 256
CLASH_COLOR = (1.0, 0.5, 0.0, 1.0)  # not the default, far from the proxy colour
FACES = [(0, 1, 3, 2), (4, 6, 7, 5), (0, 4, 5, 1), (2, 3, 7, 6), (0, 2, 6, 4), (1, 5, 7, 3)]
result = {"background": bpy.app.background, "version": bpy.app.version_string}

assert bpy.ops.preferences.addon_install(filepath=zip_path) == {"FINISHED"}
addon_utils.enable("collide_addon", default_set=True, handle_error=None)
import collide_addon  # noqa: E402
from collide_addon.blender import draw, session  # noqa: E402

result["file"] = collide_addon.__file__
result["handle_registered"] = draw._handle is not None


def look_at(eye, target):
    eye, target = Vector(eye), Vector(target)
    rotation = (target - eye).to_track_quat("-Z", "Y").to_matrix().to_4x4()
    return (Matrix.Translation(eye) @ rotation).inverted()


def perspective(fov_y, near, far):
    focal = 1.0 / np.tan(fov_y / 2.0)
    return Matrix(
        (
            (focal, 0.0, 0.0, 0.0),
            (0.0, focal, 0.0, 0.0),
            (0.0, 0.0, (far + near) / (near - far), 2.0 * far * near / (near - far)),
            (0.0, 0.0, -1.0, 0.0),
        )
    )


VIEW = look_at((8.0, -8.0, 7.0), (1.5, 2.5, 0.0))
PROJECTION = perspective(np.radians(40.0), 0.1, 100.0)


def render(name):
    """draw._draw() into an offscreen buffer; saves (SIZE, SIZE, 4) uint8, row 0 at the
    bottom, as out_dir/name.npy."""
    offscreen = gpu.types.GPUOffScreen(SIZE, SIZE)
    try:
        with offscreen.bind():
            framebuffer = gpu.state.active_framebuffer_get()
            framebuffer.clear(color=(0.0, 0.0, 0.0, 0.0), depth=1.0)
            with gpu.matrix.push_pop(), gpu.matrix.push_pop_projection():
                gpu.matrix.load_matrix(VIEW)
                gpu.matrix.load_projection_matrix(PROJECTION)
                draw._draw()
            pixels = framebuffer.read_color(0, 0, SIZE, SIZE, 4, 0, "UBYTE")
    finally:
        offscreen.free()
    pixels.dimensions = SIZE * SIZE * 4
    image = np.array(pixels.to_list(), dtype=np.uint8).reshape(SIZE, SIZE, 4)
    np.save(os.path.join(out_dir, name + ".npy"), image)


def corners(scene):
    """World-space corners of each cube, in the mesh's vertex order."""
    bpy.context.view_layer.update()
    return {
        obj.name: [list(obj.matrix_world @ vertex.co) for vertex in obj.data.vertices]
        for obj in scene.objects
    }


def build_scene(scene):
    """A and B (turned 30 degrees) overlap; Far touches nothing. Cubes are their own
    exact box proxies."""
    for obj in list(bpy.data.objects):
        bpy.data.objects.remove(obj)
    mesh = bpy.data.meshes.new("cube")
    mesh.from_pydata([(x, y, z) for x in (-1, 1) for y in (-1, 1) for z in (-1, 1)], [], FACES)
    for name, location, angle in (
        ("A", (0.0, 0.0, 0.0), 0.0),
        ("B", (1.8, 0.3, 0.2), np.radians(30.0)),
        ("Far", (0.0, 6.0, 0.0), 0.0),
    ):
        obj = bpy.data.objects.new(name, mesh)
        obj.location = location
        obj.rotation_euler = (0.0, 0.0, angle)
        scene.collection.objects.link(obj)


def check():
    scene = bpy.context.scene
    result["renderer"] = gpu.platform.renderer_get()
    result["size"] = SIZE
    result["view"] = [list(row) for row in VIEW]
    result["projection"] = [list(row) for row in PROJECTION]
    result["proxy_color"] = list(draw.PROXY_COLOR)
    result["marker_size"] = draw.MARKER_SIZE
    build_scene(scene)
    scene.collide.scope = "VISIBLE"
    scene.collide.clash_color = CLASH_COLOR
    result["clash_color"] = list(scene.collide.clash_color)

    assert bpy.ops.collide.detect() == {"FINISHED"}
    result["clash_pairs"] = [[c.name_a, c.name_b] for c in scene.collide.clashes]
    result["clash_points"] = session.session_for(scene).clashes.points.tolist()
    result["corners"] = corners(scene)
    scene.collide.show_proxies = True
    render("proxies_on")
    scene.collide.show_proxies = False
    render("proxies_off")
    # Hidden proxies are not even turned into segments (some 600,000 at 10,000 objects).
    result["lines_built_while_hidden"] = draw._cached_batches[0] is not None

    # B moved away: no clash left, and the proxies drawn must follow (batches rebuilt).
    bpy.data.objects["B"].location.x = 4.5
    assert bpy.ops.collide.detect() == {"FINISHED"}
    result["moved_clash_count"] = len(scene.collide.clashes)
    result["moved_corners"] = corners(scene)
    scene.collide.show_proxies = True
    render("moved")

    # In live mode B turns and comes back into A: only its segments are placed again
    # (A's and Far's are kept from the last draw), and all must be where the cubes are.
    scene.collide.live = True
    bpy.data.objects["B"].location.x = 1.8
    bpy.data.objects["B"].rotation_euler.z = np.radians(60.0)
    bpy.context.view_layer.update()
    result["turned_clash_pairs"] = [[c.name_a, c.name_b] for c in scene.collide.clashes]
    result["turned_clash_points"] = session.session_for(scene).clashes.points.tolist()
    result["turned_corners"] = corners(scene)
    render("turned")

    # A frame change (Far keyframed to move a little) leaves the tint waiting: the overlay
    # draws A and B in the clash colour and no colour is written until it settles.
    scene.collide.show_proxies = False
    far = bpy.data.objects["Far"]
    for frame, y in ((1, 6.0), (2, 6.5)):
        far.location.y = y
        far.keyframe_insert("location", frame=frame)
    scene.frame_set(1)
    scene.frame_set(2)
    result["waiting_colors"] = [list(bpy.data.objects[name].color) for name in ("A", "B")]
    result["waiting_far"] = list(far.matrix_world.translation)
    render("tint_waiting")
    session.settle(scene)
    result["settled_colors"] = [list(bpy.data.objects[name].color) for name in ("A", "B")]
    render("tint_settled")
    scene.collide.live = False

    assert bpy.ops.collide.detect() == {"FINISHED"}
    assert bpy.ops.collide.clear() == {"FINISHED"}
    render("cleared")

    addon_utils.disable("collide_addon", default_set=True)
    result["handle_after_disable"] = repr(draw._handle)
    result["scene_property_removed"] = not hasattr(bpy.types.Scene, "collide")
    # The callback must not fail on a scene without the add-on's settings.
    render("disabled")


started = time.monotonic()


def run():
    if not bpy.context.window_manager.windows and time.monotonic() - started < 30.0:
        return 0.1  # no window yet: try again
    try:
        result["windows"] = len(bpy.context.window_manager.windows)
        check()
    except Exception:
        result["error"] = traceback.format_exc()
    print("RESULT " + json.dumps(result), flush=True)
    bpy.ops.wm.quit_blender()
    return None


# A UI session keeps running after --python: the checks run from the event loop, in a
# timer, once the window (and its OpenGL context) exists, and then quit Blender.
bpy.app.timers.register(run, first_interval=0.2)
'''


@pytest.fixture(scope="module")
def overlay(tmp_path_factory):
    """Runs the UI session once; returns its RESULT dict and the rendered images."""
    xvfb_run = shutil.which("xvfb-run")
    assert xvfb_run, (
        "xvfb-run is required to run Blender with a GPU context "
        "(Debian package xvfb; python3 build.py setup installs it as root)"
    )
    blender = blender_binary()
    zip_path = addon_zip()
    directory = tmp_path_factory.mktemp("overlay")
    script = directory / "overlay_check.py"
    script.write_text(SCRIPT)
    images = directory / "images"
    images.mkdir()
    xvfb_errors = directory / "xvfb-errors.log"
    environment = blender_environment(directory)
    # Blender saves quit.blend in its temporary folder, xvfb-run its auth file in $TMPDIR.
    environment["TMPDIR"] = str(directory)
    command = [
        xvfb_run,
        "-a",
        "-e",
        str(xvfb_errors),
        "-s",
        "-screen 0 1280x1024x24",
        blender,
        "--factory-startup",
        "--python-exit-code",
        "1",
        "--python",
        str(script),
        "--",
        str(zip_path),
        str(images),
    ]
    # A session of its own, so that a timeout kills Xvfb and Blender too, not only xvfb-run.
    process = subprocess.Popen(
        command,
        env=environment,
        cwd=directory,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        stdout, stderr = process.communicate(timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        stdout, stderr = process.communicate()
        pytest.fail(
            f"the Blender UI session did not quit within {TIMEOUT} s:\n{stdout}{stderr}"
            + _read(xvfb_errors)
        )
    output = stdout + stderr + _read(xvfb_errors)
    assert process.returncode == 0, f"xvfb-run blender exited {process.returncode}:\n{output}"
    result = read_result(stdout)
    assert result is not None, f"no RESULT line from the UI session:\n{output}"
    assert "error" not in result, f"the checks inside Blender failed:\n{result['error']}"
    loaded = {path.stem: np.load(path) for path in images.glob("*.npy")}
    return result, loaded


def _read(path: Path) -> str:
    return path.read_text() if path.exists() else ""


def project(points, result) -> np.ndarray:
    """Window coordinates (x right, y up, in pixels) of world points: (n, 3) -> (n, 2).
    Pixel (column i, row j) covers [i, i + 1) x [j, j + 1)."""
    points = np.asarray(points, dtype=np.float64).reshape(-1, 3)
    matrix = np.array(result["projection"]) @ np.array(result["view"])
    clip = np.c_[points, np.ones(len(points))] @ matrix.T
    ndc = clip[:, :2] / clip[:, 3:4]
    return (ndc + 1.0) / 2.0 * result["size"]


def cube_edges(corners) -> np.ndarray:
    """The 12 edges of a cube given its 8 corners ordered by (x, y, z) signs: (12, 2, 3)."""
    corners = np.asarray(corners, dtype=np.float64)
    pairs = [(a, b) for a in range(8) for b in range(a + 1, 8) if bin(a ^ b).count("1") == 1]
    return corners[np.array(pairs)]


def all_edges(corners_by_name) -> np.ndarray:
    return np.concatenate([cube_edges(corners) for corners in corners_by_name.values()])


def colour_mask(image, color) -> np.ndarray:
    """Pixels drawn in `color` (RGBA 0-1): the overlay blends with ALPHA over the buffer
    cleared to transparent black, so a pixel holds (rgb * a, a), or more alpha where
    lines cross; its colour, divided by its alpha, is within 16/255 of rgb."""
    alpha = image[..., 3].astype(np.float64)
    unblended = image[..., :3] * (255.0 / np.maximum(alpha, 1.0))[..., None]
    difference = np.abs(unblended - np.array(color[:3]) * 255.0).max(axis=-1)
    return (difference <= 16.0) & (alpha > 0)


def pixel_centres(mask) -> np.ndarray:
    """(n, 2) window coordinates of the centres of the pixels set in `mask` (row 0 at
    the bottom, as glReadPixels returns them)."""
    rows, columns = np.nonzero(mask)
    return np.c_[columns, rows] + 0.5


def distance_to_segments(points, starts, ends) -> np.ndarray:
    """Distance of each 2D point to the nearest segment: (n, 2), (m, 2), (m, 2) -> (n,)."""
    direction = ends - starts
    length2 = np.maximum((direction**2).sum(axis=1), 1e-12)
    offset = points[:, None, :] - starts[None]
    t = np.clip((offset * direction[None]).sum(axis=2) / length2[None], 0.0, 1.0)
    nearest = starts[None] + t[..., None] * direction[None]
    return np.sqrt(((points[:, None, :] - nearest) ** 2).sum(axis=2)).min(axis=1)


def nearest_distance(points, others) -> np.ndarray:
    """Distance of each 2D point to the nearest of `others`: (n, 2), (m, 2) -> (n,)."""
    return np.sqrt(((points[:, None, :] - others[None]) ** 2).sum(axis=2)).min(axis=1)


def marker_radius(result) -> float:
    # A square point of MARKER_SIZE pixels reaches half its diagonal from its centre.
    return result["marker_size"] / 2.0 * np.sqrt(2.0) + 1.0


def check_markers(image, result, name):
    """Every clash point has a marker of the clash colour; no clash colour elsewhere."""
    clash_pixels = pixel_centres(colour_mask(image, result["clash_color"]))
    targets = project(result["clash_points"], result)
    radius = marker_radius(result)
    full_marker = result["marker_size"] ** 2
    for point, target in zip(result["clash_points"], targets, strict=True):
        near = np.hypot(*(clash_pixels - target).T) <= radius
        assert near.sum() >= 0.5 * full_marker, (
            f"{name}: clash point {point} projects to pixel {target.round(1)}, but only "
            f"{near.sum()} clash-coloured pixels lie within {radius:.1f} px of it "
            f"(a {result['marker_size']:.0f} px marker has {full_marker:.0f}); "
            f"{len(clash_pixels)} clash-coloured pixels in all"
            + (f", centred at {clash_pixels.mean(axis=0).round(1)}" if len(clash_pixels) else "")
        )
    if len(clash_pixels):
        stray = clash_pixels[nearest_distance(clash_pixels, targets) > radius]
        assert not len(stray), (
            f"{name}: {len(stray)} clash-coloured pixels away from every clash point "
            f"(projected at {targets.round(1).tolist()}), e.g. at {stray[:5].tolist()}"
        )


def check_wireframe(image, result, corners_by_name, clash_points, name):
    """Proxy-coloured pixels along the cubes' projected edges, and only there (samples
    under the markers of `clash_points`, drawn over the lines, are not looked at)."""
    edges = all_edges(corners_by_name)
    starts, ends = project(edges[:, 0], result), project(edges[:, 1], result)
    proxy_pixels = pixel_centres(colour_mask(image, result["proxy_color"]))
    assert len(proxy_pixels), f"{name}: no proxy-coloured pixel at all with show_proxies on"
    # Points along every edge, away from the clash markers drawn over the lines.
    t = np.linspace(0.05, 0.95, 19)[None, :, None]
    samples = (edges[:, None, 0] * (1.0 - t) + edges[:, None, 1] * t).reshape(-1, 3)
    sample_pixels = project(samples, result)
    if len(clash_points):
        markers = project(clash_points, result)
        away = nearest_distance(sample_pixels, markers) > marker_radius(result) + 1.0
        sample_pixels = sample_pixels[away]
    hit = nearest_distance(sample_pixels, proxy_pixels) <= 1.5
    assert hit.mean() >= 0.95, (
        f"{name}: only {hit.sum()} of {len(hit)} points along the projected proxy edges "
        f"have a proxy-coloured pixel within 1.5 px; missed e.g. "
        f"{sample_pixels[~hit][:5].round(1).tolist()}"
    )
    off_edge = distance_to_segments(proxy_pixels, starts, ends) > 1.5
    assert off_edge.mean() <= 0.01, (
        f"{name}: {off_edge.sum()} of {len(proxy_pixels)} proxy-coloured pixels lie more "
        f"than 1.5 px from every projected proxy edge, e.g. at "
        f"{proxy_pixels[off_edge][:5].tolist()}"
    )


def test_draw_handler_registered_in_a_ui_session(overlay):
    result, _ = overlay
    assert result["version"].startswith("3.4"), result["version"]
    assert result["background"] is False, "Blender ran in background mode"
    assert result["windows"] >= 1, "the UI session has no window"
    assert result["handle_registered"], "draw.register() added no draw handler in a UI session"


def test_scene_in_view_and_clash_known(overlay):
    result, _ = overlay
    assert result["clash_pairs"] == [["A", "B"]], result["clash_pairs"]
    assert len(result["clash_points"]) == 1, result["clash_points"]
    for key in ("corners", "moved_corners", "turned_corners"):
        pixels = project(np.concatenate(list(result[key].values())), result)
        inside = (pixels >= 4) & (pixels <= result["size"] - 4)
        assert inside.all(), f"test set-up: {key} project outside the image: {pixels.tolist()}"


def test_clash_markers_at_the_clash_points(overlay):
    result, images = overlay
    check_markers(images["proxies_on"], result, "proxies_on")
    check_markers(images["proxies_off"], result, "proxies_off")


def test_proxies_drawn_along_their_edges_when_shown(overlay):
    result, images = overlay
    check_wireframe(
        images["proxies_on"], result, result["corners"], result["clash_points"], "proxies_on"
    )


def test_hidden_proxies_build_no_lines(overlay):
    result, _ = overlay
    assert result["lines_built_while_hidden"] is False


def test_no_proxies_drawn_when_hidden(overlay):
    result, images = overlay
    proxy_pixels = colour_mask(images["proxies_off"], result["proxy_color"]).sum()
    assert proxy_pixels == 0, f"{proxy_pixels} proxy-coloured pixels with show_proxies off"


def test_only_the_overlay_colours_drawn(overlay):
    result, images = overlay
    for name in ("proxies_on", "proxies_off", "moved", "turned"):
        image = images[name]
        known = colour_mask(image, result["clash_color"]) | colour_mask(
            image, result["proxy_color"]
        )
        other = (image[..., 3] > 0) & ~known
        assert not other.any(), (
            f"{name}: {other.sum()} pixels drawn in neither the clash nor the proxy colour, "
            f"e.g. {image[other][:5].tolist()}"
        )


def test_moved_scene_redrawn_without_markers(overlay):
    result, images = overlay
    assert result["moved_clash_count"] == 0
    clash_pixels = colour_mask(images["moved"], result["clash_color"]).sum()
    assert clash_pixels == 0, f"{clash_pixels} clash-coloured pixels after the clash went away"
    # Where B is now, not where it was: the batches were rebuilt after the new check.
    check_wireframe(images["moved"], result, result["moved_corners"], [], "moved")


def test_live_turn_redraws_the_proxies_where_they_are(overlay):
    result, images = overlay
    assert result["turned_clash_pairs"] == [["A", "B"]], result["turned_clash_pairs"]
    check_markers(
        images["turned"], {**result, "clash_points": result["turned_clash_points"]}, "turned"
    )
    check_wireframe(
        images["turned"],
        result,
        result["turned_corners"],
        result["turned_clash_points"],
        "turned",
    )


def test_waiting_tint_drawn_over_the_clashing_objects(overlay):
    result, images = overlay
    assert result["waiting_colors"] == [[1.0, 1.0, 1.0, 1.0]] * 2, "no colour written"
    assert result["settled_colors"] == [result["clash_color"]] * 2
    # Inside A (away from the clash point, near x = 0.9) and at Far's centre.
    inside_a, far = project([[-0.7, 0.0, 0.0], result["waiting_far"]], result).astype(int)
    waiting, settled = images["tint_waiting"], images["tint_settled"]
    tinted = colour_mask(waiting, result["clash_color"])
    assert tinted[inside_a[1], inside_a[0]], (
        f"A not tinted at {inside_a}: {waiting[inside_a[1], inside_a[0]]}"
    )
    assert waiting[far[1], far[0], 3] == 0, "Far clashes with nothing"
    assert settled[inside_a[1], inside_a[0], 3] == 0, (
        "the overlay stops once the colours are written"
    )
    other = (waiting[..., 3] > 0) & ~tinted
    assert not other.any(), f"{other.sum()} pixels in another colour"


def test_nothing_drawn_after_clear(overlay):
    result, images = overlay
    clash_pixels = colour_mask(images["cleared"], result["clash_color"]).sum()
    assert clash_pixels == 0, f"{clash_pixels} clash-coloured pixels after collide.clear"
    drawn = (images["cleared"][..., 3] > 0).sum()
    assert drawn == 0, f"{drawn} pixels drawn after collide.clear (no proxies, no clashes)"


def test_unregister_removes_the_draw_handler(overlay):
    result, images = overlay
    assert result["handle_after_disable"] == "None", (
        f"draw handler still registered after disabling the add-on: "
        f"{result['handle_after_disable']}"
    )
    assert result["scene_property_removed"]
    drawn = (images["disabled"][..., 3] > 0).sum()
    assert drawn == 0, f"{drawn} pixels drawn by the callback after the add-on was disabled"
