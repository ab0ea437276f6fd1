"""Scale-out speed: one scene scanned by `collide scan` with 1 and with 2 workers.

    .venv-core/bin/python benchmarks/bench_farm.py [--objects 2000] [--frames 400]
        [--chunk 100] [--repeat 2]

The scene (built by `blender -b`, Debian's 3.4): a 40 x 50 grid of boxes (2,000 by
default), every tenth sliding one unit over the frames, so clashes start and end inside
the scan. Each scan runs the same chunks (--chunk frames each) on a local cluster; the
scans' reports must be equal. The 1- and 2-worker scans alternate --repeat times and
the fastest of each counts, so that other jobs on the machine disturb them alike.
Printed: the load average before, seconds and CPU seconds (the Blender runs') per scan,
the speed-up of 2 workers over 1 (target >= 1.7 on a 2-core machine with nothing else
running) and the time of the merge alone (report.merge over the 2-worker scan's chunk
reports).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from collide_addon.report.json_report import read_json_report
from collide_addon.report.merge import merge_reports
from collide_farm.chunk import find_blender

SCENE = """
import sys
import bpy

out, count, frames = sys.argv[sys.argv.index("--") + 1 :]
count, frames = int(count), int(frames)
bpy.ops.wm.read_homefile(use_empty=True)
scene = bpy.context.scene
scene.frame_start, scene.frame_end = 1, frames
FACES = [(0, 1, 3, 2), (4, 6, 7, 5), (0, 4, 5, 1), (2, 3, 7, 6), (0, 2, 6, 4), (1, 5, 7, 3)]
vertices = [(x * 0.3, y * 0.3, z * 0.3) for x in (-1, 1) for y in (-1, 1) for z in (-1, 1)]
for index in range(count):
    mesh = bpy.data.meshes.new(f"Box.{index:05d}")
    mesh.from_pydata(vertices, [], FACES)
    obj = bpy.data.objects.new(mesh.name, mesh)
    obj.location = (index % 40, (index // 40) % 50, index // 2000)
    scene.collection.objects.link(obj)
    if index % 10 == 0:
        obj.keyframe_insert("location", frame=1)
        obj.location.x += 1.0
        obj.keyframe_insert("location", frame=frames)
        for curve in obj.animation_data.action.fcurves:
            for point in curve.keyframe_points:
                point.interpolation = "LINEAR"
bpy.ops.wm.save_as_mainfile(filepath=out)
"""


def build_scene(folder: Path, objects: int, frames: int) -> Path:
    script = folder / "build.py"
    script.write_text(SCENE)
    blend = folder / "farm_bench.blend"
    command = [find_blender(None), "-b", "--factory-startup", "--python", str(script), "--"]
    subprocess.run(
        [*command, str(blend), str(objects), str(frames)], check=True, capture_output=True
    )
    return blend


def children_cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def scan(blend: Path, frames: int, chunk: int, workers: int, folder: Path) -> tuple[float, float]:
    """(seconds, CPU seconds of it and its Blender runs) of one `collide scan` with
    `workers` local workers; its chunk reports stay in folder/scratch-<workers>."""
    out = folder / f"scan-{workers}.json"
    command = [sys.executable, "-m", "collide_farm", "scan", str(blend), "--frames"]
    command += [f"1-{frames}", "--chunk", str(chunk), "--workers", str(workers)]
    command += ["--scratch", str(folder / f"scratch-{workers}"), "--json", str(out)]
    cpu = children_cpu_seconds()
    started = time.perf_counter()
    result = subprocess.run(command, capture_output=True, text=True)
    elapsed = time.perf_counter() - started
    if result.returncode not in (0, 1):
        sys.exit(f"scan failed: {result.stderr}")
    return elapsed, children_cpu_seconds() - cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--objects", type=int, default=2000)
    parser.add_argument("--frames", type=int, default=400)
    parser.add_argument("--chunk", type=int, default=100)
    parser.add_argument("--repeat", type=int, default=2)
    arguments = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-farm-") as name:
        folder = Path(name)
        started = time.perf_counter()
        blend = build_scene(folder, arguments.objects, arguments.frames)
        print(
            f"scene: {arguments.objects} objects, {arguments.frames} frames, built in "
            f"{time.perf_counter() - started:.1f} s; chunks of {arguments.chunk} frames"
        )
        print("load average before: {:.1f} {:.1f} {:.1f}".format(*os.getloadavg()))
        seconds: dict[int, float] = {}
        for _ in range(arguments.repeat):
            for workers in (1, 2):
                elapsed, cpu = scan(blend, arguments.frames, arguments.chunk, workers, folder)
                seconds[workers] = min(seconds.get(workers, elapsed), elapsed)
                print(
                    f"{workers} worker(s): {elapsed:.1f} s, {cpu:.1f} CPU s "
                    f"({arguments.frames / elapsed:.1f} frames/s)"
                )
        one, two = (json.loads((folder / f"scan-{n}.json").read_text()) for n in (1, 2))
        assert one == two, "the 1- and 2-worker scans differ"
        parts = sorted((folder / "scratch-2").glob("part-*.json"))
        reports = [read_json_report(path) for path in parts]
        started = time.perf_counter()
        merged = merge_reports(reports, [str(path) for path in parts])
        merge_seconds = time.perf_counter() - started
        assert merged == two
        print(
            f"fastest: 1 worker {seconds[1]:.1f} s, 2 workers {seconds[2]:.1f} s; "
            f"speed-up with 2 workers: {seconds[1] / seconds[2]:.2f}x (target >= 1.7)"
        )
        print(
            f"merge of {len(parts)} chunk reports, {len(merged['clashes'])} clashes: "
            f"{merge_seconds * 1000:.1f} ms"
        )


if __name__ == "__main__":
    main()
