"""Shared by the farm tests: a scene built by Debian's `blender` 3.4, the `collide`
command run as a subprocess, Blender stand-ins that crash or stall one chunk, and a real
`dask scheduler` with `dask worker` processes on 127.0.0.1."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.cli.helpers import blender_binary

DASK = Path(sys.executable).parent / "dask"

# A scene script's start: `box` and `animate` (linear keys of x) in an empty scene, saved
# to the path after `--` by the script's end.
SCENE_HELPERS = """
import sys
import bpy

out = sys.argv[sys.argv.index("--") + 1]
bpy.ops.wm.read_homefile(use_empty=True)
scene = bpy.context.scene
FACES = [(0, 1, 3, 2), (4, 6, 7, 5), (0, 4, 5, 1), (2, 3, 7, 6), (0, 2, 6, 4), (1, 5, 7, 3)]


def box(name, location, half):
    hx, hy, hz = half
    vertices = [(x * hx, y * hy, z * hz) for x in (-1, 1) for y in (-1, 1) for z in (-1, 1)]
    mesh = bpy.data.meshes.new(name)
    mesh.from_pydata(vertices, [], FACES)
    obj = bpy.data.objects.new(name, mesh)
    obj.location = location
    scene.collection.objects.link(obj)
    return obj


def animate(obj, keys):
    for frame, x in keys:
        obj.location.x = x
        obj.keyframe_insert("location", frame=frame)
    for curve in obj.animation_data.action.fcurves:
        for point in curve.keyframe_points:
            point.interpolation = "LINEAR"
"""

# Frames 1-30, chunks of 10 (1-10, 11-20, 21-30): Runner slides x -15 -> 15 (1 a frame)
# through Left (frames 5-7, inside a chunk), Middle (9-11, across 10 | 11), Right (18-24,
# across 20 | 21) and Plate (10-22, over both borders); Shuttle swings through Post three
# times (three intervals in three chunks); Plate lies on Middle and Right (frames 1-30).
SCENE = (
    SCENE_HELPERS
    + """
scene.frame_start, scene.frame_end = 1, 30
animate(box("Runner", (0, 0, 0), (0.5, 0.5, 0.5)), [(1, -15), (31, 15)])
box("Left", (-10, 0, 0), (0.7, 1, 1))
box("Middle", (-6, 0, 0), (1, 1, 1))
box("Right", (5, 0, 0), (3, 1, 1))
box("Plate", (0, 1, 0), (6, 0.6, 0.1))
animate(box("Shuttle", (0, 20, 0), (0.5, 0.5, 0.5)), [(1, -5), (10, 5), (20, -5), (30, 5)])
box("Post", (0, 20, 0), (0.5, 0.4, 0.4))
bpy.ops.wm.save_as_mainfile(filepath=out)
"""
)

# Frames 1-10, chunks of 5 (1-5 | 6-10): Bullet flies along x at 10 a frame (x 40 at
# frame 5, 50 at frame 6). It meets Mid (x 45) only around frame 5.5, a sub-step of
# frame 5 with --substeps 2, and passes Pin (a thin plate at x 47.5) only between frame
# 5.5 and 6 (first contact at 5.69), which --continuous finds: both only across the border
# between the chunks.
FAST_SCENE = (
    SCENE_HELPERS
    + """
scene.frame_start, scene.frame_end = 1, 10
animate(box("Bullet", (0, 0, 0), (0.5, 0.5, 0.5)), [(1, 0), (11, 100)])
box("Mid", (45, 0, 0), (1, 1, 1))
box("Pin", (47.5, 0, 0), (0.1, 1, 1))
bpy.ops.wm.save_as_mainfile(filepath=out)
"""
)


def build_scene(folder: Path, script_text: str) -> Path:
    """The .blend that `script_text` (SCENE_HELPERS + its body) saves, built by Blender."""
    script = folder / "build.py"
    script.write_text(script_text)
    blend = folder / "scene.blend"
    result = subprocess.run(
        [blender_binary(), "-b", "--factory-startup", "--python", script, "--", blend],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert blend.is_file(), result.stdout + result.stderr
    return blend


@pytest.fixture(scope="session")
def scene(tmp_path_factory) -> Path:
    return build_scene(tmp_path_factory.mktemp("farm_scene"), SCENE)


@pytest.fixture(scope="session")
def fast_scene(tmp_path_factory) -> Path:
    return build_scene(tmp_path_factory.mktemp("fast_scene"), FAST_SCENE)


def collide_command(*arguments) -> list[str]:
    """The `collide` command of this checkout (pyproject.toml's script runs the same main)."""
    return [sys.executable, "-m", "collide_farm", *map(str, arguments)]


def collide(*arguments, timeout: float = 120, **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run(
        collide_command(*arguments), capture_output=True, text=True, timeout=timeout, **kwargs
    )


def read(path: Path) -> dict:
    return json.loads(Path(path).read_text(encoding="utf-8"))


def error_lines(result: subprocess.CompletedProcess) -> list[str]:
    return [line for line in result.stderr.splitlines() if line.startswith("collide: error")]


def stand_in(folder: Path, body: str) -> Path:
    """A Blender stand-in for --blender: Python that runs `body` (with `frames`, the
    chunk's --frames value, `marks`, a folder for marker files, and `os`, `signal`,
    `time`), then becomes the real Blender with the same arguments."""
    marks = folder / "marks"
    marks.mkdir(exist_ok=True)
    path = folder / "blender-stand-in"
    path.write_text(
        f"#!{sys.executable}\n"
        "import os, signal, sys, time\n"
        "from pathlib import Path\n"
        f"marks = Path({str(marks)!r})\n"
        "arguments = sys.argv[1:]\n"
        "frames = next((a.split('=', 1)[1] for a in arguments if a.startswith('--frames=')), '')\n"
        + body
        + f"\nos.execv({blender_binary()!r}, [{blender_binary()!r}, *arguments])\n"
    )
    path.chmod(0o755)
    return path


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _start(command: list[str], log: Path) -> subprocess.Popen:
    # Own process group: the cleanup kills the process and whatever it started.
    with log.open("w") as output:
        return subprocess.Popen(
            command, stdout=output, stderr=subprocess.STDOUT, start_new_session=True
        )


def _stop(process: subprocess.Popen) -> None:
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    process.wait(timeout=10)


class DaskCluster:
    """A `dask scheduler` and `dask worker` processes (one thread each, no nanny) on
    127.0.0.1 at free ports."""

    def __init__(self, folder: Path, workers: int) -> None:
        port = free_port()
        self.address = f"tcp://127.0.0.1:{port}"
        self.processes: list[subprocess.Popen] = []
        scheduler = [DASK, "scheduler", "--host", "127.0.0.1", "--port", str(port)]
        self.processes.append(
            _start([*map(str, scheduler), "--dashboard-address", ":0"], folder / "scheduler.log")
        )
        self.workers = []
        for index in range(workers):
            worker = [str(DASK), "worker", self.address, "--nthreads", "1", "--no-nanny"]
            worker += ["--no-dashboard", "--name", f"worker-{index}"]
            self.workers.append(_start(worker, folder / f"worker-{index}.log"))
        self.processes += self.workers
        self._wait_for_workers(workers)

    def _wait_for_workers(self, count: int) -> None:
        from distributed import Client

        with Client(self.address, timeout="30s") as client:
            client.wait_for_workers(count, timeout=60)

    def close(self) -> None:
        for process in self.processes:
            _stop(process)


@pytest.fixture
def dask_cluster(tmp_path):
    cluster = DaskCluster(tmp_path, workers=2)
    try:
        yield cluster
    finally:
        cluster.close()


def wait_for(predicate, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, "timed out waiting"
        time.sleep(0.1)
