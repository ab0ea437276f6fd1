"""Continuous detection against a sampled scan as a user runs them: the whole
`blender -b scene.blend --python blender_scripts/clash_report.py` run, with Blender's
start, the scene's load, every frame change and the report written.

    .venv-core/bin/python benchmarks/bench_continuous_blender.py [--count 5000]
        [--frames 50] [--repeat 2] [--keep DIR]

Builds (once per --keep DIR, else in a temporary folder) a .blend of --count objects
sharing Blender's cube, 16x8 UV sphere and 16-sided cylinder (box, sphere and capsule
proxies), spread so that about one in ten touches another, each keyed LINEAR from frame
1 to --frames: moving up to 1 unit a frame and turning up to 0.3 rad a frame about its
Euler axes. Runs Debian's `blender` (the add-on from this checkout, the scene's default
test: hard; --geometry proxy, the default here, or mesh, a report's default) over the
frames without and with --continuous: one
unmeasured run of each, then --repeat of each, alternated; prints the fastest of each
(wall and CPU of the Blender process), their ratio beside issue 13's target
(continuous <= 2x), and what each found.

`bench_continuous.py` times the same two scans inside one Python process, without
Blender; this one adds what both pay alike in Blender (evaluating each frame, reading
the objects), as the user meets it.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

from bench_continuous import compare_alternated

ROOT = Path(__file__).resolve().parents[1]
REPORT_SCRIPT = ROOT / "blender_scripts" / "clash_report.py"

BUILD_SCENE = """
import math
import sys

import bpy
import numpy as np

out, count, frames = sys.argv[sys.argv.index("--") + 1 :]
count, frames = int(count), int(frames)
bpy.ops.wm.read_homefile(use_empty=True)
bpy.context.preferences.edit.keyframe_new_interpolation_type = "LINEAR"
meshes = []
for add in (
    lambda: bpy.ops.mesh.primitive_cube_add(size=1.0),
    lambda: bpy.ops.mesh.primitive_uv_sphere_add(radius=0.5, segments=16, ring_count=8),
    lambda: bpy.ops.mesh.primitive_cylinder_add(radius=0.25, depth=1.5, vertices=16),
):
    add()
    obj = bpy.context.active_object
    meshes.append(obj.data)
    bpy.data.objects.remove(obj)
scene = bpy.context.scene
scene.frame_start, scene.frame_end = 1, frames
rng = np.random.default_rng(13)
side = (count * 40.0) ** (1.0 / 3.0)
starts = rng.uniform(0, side, (count, 3))
velocities = rng.normal(size=(count, 3))
velocities *= (rng.uniform(0, 1.0, count) / np.linalg.norm(velocities, axis=1))[:, None]
turns = rng.uniform(-0.3, 0.3, (count, 3)) / math.sqrt(3.0)
for index in range(count):
    obj = bpy.data.objects.new(f"Object{index:05d}", meshes[index % 3])
    scene.collection.objects.link(obj)
    obj.location, obj.rotation_euler = starts[index], (0.0, 0.0, 0.0)
    obj.keyframe_insert("location", frame=1)
    obj.keyframe_insert("rotation_euler", frame=1)
    obj.location = starts[index] + (frames - 1) * velocities[index]
    obj.rotation_euler = (frames - 1) * turns[index]
    obj.keyframe_insert("location", frame=frames)
    obj.keyframe_insert("rotation_euler", frame=frames)
bpy.ops.wm.save_as_mainfile(filepath=out)
"""


def blender_environment(folder: Path) -> dict[str, str]:
    """Blender's user scripts and config kept in `folder`, without our PYTHONPATH."""
    environment = dict(os.environ, BLENDER_USER_SCRIPTS=str(folder / "scripts"))
    environment["BLENDER_USER_CONFIG"] = str(folder / "config")
    environment.pop("PYTHONPATH", None)
    return environment


def build_scene(blender: str, folder: Path, count: int, frames: int) -> Path:
    blend = folder / f"moving_{count}_{frames}.blend"
    if not blend.is_file():
        script = folder / "build_scene.py"
        script.write_text(BUILD_SCENE)
        command = [blender, "-b", "--factory-startup", "--python", str(script), "--"]
        subprocess.run(
            [*command, str(blend), str(count), str(frames)],
            check=True,
            capture_output=True,
            env=blender_environment(folder),
        )
    return blend


def timed_report(blender, blend: Path, folder: Path, frames: int, geometry: str, continuous: bool):
    """(wall s, CPU s, clashes, clashes found only between frames) of one whole run."""
    out = folder / f"report_{'continuous' if continuous else 'sampled'}.json"
    command = [blender, "-b", "--factory-startup", str(blend), "--python", str(REPORT_SCRIPT)]
    command += ["--", "--frames", f"1-{frames}", "--json", str(out), "--fail-on", "never"]
    command += ["--geometry", geometry]
    command += ["--continuous"] if continuous else []
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(command, check=True, capture_output=True, env=blender_environment(folder))
    elapsed = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    clashes = json.loads(out.read_text())["clashes"]
    return elapsed, cpu, len(clashes), sum("toi" in clash for clash in clashes)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--count", type=int, default=5000)
    parser.add_argument("--frames", type=int, default=50)
    parser.add_argument("--repeat", type=int, default=2, help="measured runs of each (2)")
    parser.add_argument("--keep", type=Path, help="folder for the scene, kept between runs")
    parser.add_argument(
        "--geometry",
        choices=("proxy", "mesh"),
        default="proxy",
        help="what decides the sampled clashes: proxy (as bench_continuous.py) or mesh "
        "(a report's default); the sweep between frames is on the proxies either way",
    )
    arguments = parser.parse_args(argv)
    blender = shutil.which("blender")
    if blender is None:
        parser.error("Debian's blender is needed (python3 build.py setup installs it)")
    with tempfile.TemporaryDirectory() as temporary:
        folder = arguments.keep or Path(temporary)
        folder.mkdir(parents=True, exist_ok=True)
        began = time.perf_counter()
        blend = build_scene(blender, folder, arguments.count, arguments.frames)
        print(f"scene: {blend} ({time.perf_counter() - began:.1f} s to build or find)")
        compare_alternated(
            lambda continuous: timed_report(
                blender, blend, folder, arguments.frames, arguments.geometry, continuous
            ),
            arguments.repeat,
            f"{arguments.count} objects moving and turning, frames 1-{arguments.frames}, one "
            f"hard test, geometry {arguments.geometry}, whole blender -b runs",
        )


if __name__ == "__main__":
    main()
