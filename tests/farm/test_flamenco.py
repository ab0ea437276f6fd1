"""The Flamenco job type's compile function under Node, with a stand-in for Flamenco's
`author` API: chunk tasks of clash_report.py and a final `collide merge` task."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
JOB_TYPE = HERE.parents[1] / "collide_farm" / "flamenco" / "collide_scan.js"
SETTINGS = {
    "frames": "1-25",
    "chunk_size": 10,
    "scratch": "/farm/scratch",
    "clash_report_script": "/farm/collide/blender_scripts/clash_report.py",
    "report_json": "/farm/out/report.json",
    "blendfile": "/farm/shot.blend",
}


def compile_job(**changes) -> dict:
    node = shutil.which("node")
    assert node, "Node.js is required for the Flamenco job type test"
    settings = json.dumps({**SETTINGS, **changes})
    result = subprocess.run(
        [node, HERE / "flamenco_stand_in.js", JOB_TYPE, settings],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    return json.loads(result.stdout)


def test_chunk_tasks_and_a_merge_task_after_them():
    job = compile_job(tests_file="/farm/tests.json", baseline="/farm/base.json")
    tasks = job["tasks"]
    assert [task["name"] for task in tasks] == [
        "collide-1-10",
        "collide-11-20",
        "collide-21-25",
        "collide-merge",
    ]
    assert tasks[0]["commands"] == [
        {
            "name": "blender-render",
            "parameters": {
                "exe": "{blender}",
                "exeArgs": "{blenderArgs}",
                "argsBefore": ["--factory-startup"],
                "blendfile": "/farm/shot.blend",
                "args": [
                    "--python",
                    "/farm/collide/blender_scripts/clash_report.py",
                    "--",
                    "--frames=1-10",
                    "--json",
                    "/farm/scratch/part-1-10.json",
                    "--fail-on",
                    "never",
                    "--lookahead",
                    "--tests",
                    "/farm/tests.json",
                    "--baseline",
                    "/farm/base.json",
                ],
            },
        }
    ]
    merge = tasks[-1]
    # Only the last chunk does not look ahead to the next one; it is marked a chunk, so
    # that a set matching nothing at its frames is the merge's to decide on.
    marks = [
        [
            arg
            for arg in task["commands"][0]["parameters"]["args"]
            if arg in ("--lookahead", "--chunk")
        ]
        for task in tasks[:-1]
    ]
    assert marks == [["--lookahead"], ["--lookahead"], ["--chunk"]]
    assert merge["type"] == "misc"
    assert merge["dependencies"] == ["collide-1-10", "collide-11-20", "collide-21-25"]
    assert merge["commands"] == [
        {
            "name": "exec",
            "parameters": {
                "exe": "collide",
                "args": [
                    "merge",
                    "/farm/scratch/part-1-10.json",
                    "/farm/scratch/part-11-20.json",
                    "/farm/scratch/part-21-25.json",
                    "--json",
                    "/farm/out/report.json",
                    "--fail-on",
                    "never",
                    "--baseline",
                    "/farm/base.json",
                ],
            },
        }
    ]
    assert {"frames", "chunk_size", "scratch", "blendfile"} <= set(job["settingKeys"])


def test_one_frame_and_one_chunk():
    tasks = compile_job(frames="7", chunk_size=50)["tasks"]
    assert [task["name"] for task in tasks] == ["collide-7-7", "collide-merge"]
    arguments = tasks[0]["commands"][0]["parameters"]["args"]
    assert "--lookahead" not in arguments and "--chunk" in arguments


def test_chunks_below_frame_zero_pass_their_range_as_one_argument():
    """ "--frames", "-3-0" made clash_report.py's parser read -3-0 as an option (exit 2)."""
    tasks = compile_job(frames="-3-6", chunk_size=4)["tasks"]
    frames = [
        next(a for a in task["commands"][0]["parameters"]["args"] if a.startswith("--frames"))
        for task in tasks[:-1]
    ]
    assert frames == ["--frames=-3-0", "--frames=1-4", "--frames=5-6"]


@pytest.mark.parametrize(
    ("frames", "chunk_size", "error"),
    [
        ("1-10,20-30", 10, 'frames must be START-END or one frame, got "1-10,20-30"'),
        ("9-3", 10, 'frames must have START <= END, got "9-3"'),
        ("1-10", 0, "chunk_size must be >= 1, got 0"),
    ],
)
def test_frames_the_merge_cannot_join_are_refused(frames, chunk_size, error):
    assert compile_job(frames=frames, chunk_size=chunk_size) == {"error": error}
