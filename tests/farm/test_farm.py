"""The `collide` command against Debian's `blender` 3.4: scans on a local cluster and on
a real `dask scheduler` with `dask worker` processes equal one run over the same frames,
through a crashed chunk, a killed worker; failures and Ctrl-C exit cleanly."""

from __future__ import annotations

import base64
import json
import os
import re
import signal
import subprocess

import pytest

from collide_addon.report.json_report import report_to_json
from tests.farm.conftest import (
    SCENE_HELPERS,
    build_scene,
    collide,
    collide_command,
    error_lines,
    read,
    stand_in,
    wait_for,
)

pytestmark = [pytest.mark.slow, pytest.mark.blender]


@pytest.fixture(scope="module")
def single_run(scene, tmp_path_factory):
    """One `collide report` over frames 1-30: its result and report."""
    out = tmp_path_factory.mktemp("single") / "one.json"
    result = collide("report", scene, "--frames", "1-30", "--json", out)
    assert result.returncode == 1, result.stderr
    return result, read(out)


def test_the_scene_has_clashes_inside_and_across_chunks(single_run):
    _, report = single_run
    frames = {(clash["a"], clash["b"]): clash["frames"] for clash in report["clashes"]}
    assert frames[("Left", "Runner")] == [[5, 7]]
    assert frames[("Middle", "Runner")] == [[9, 11]]
    assert frames[("Right", "Runner")] == [[18, 24]]
    assert frames[("Plate", "Runner")] == [[10, 22]]
    assert frames[("Middle", "Plate")] == [[1, 30]]
    assert len(frames[("Post", "Shuttle")]) == 3


def test_local_scan_equals_one_run_after_a_chunk_crashed_once(scene, single_run, tmp_path):
    # The chunk over frames 11-20 kills its Blender the first time: it is retried.
    blender = stand_in(
        tmp_path,
        "if frames == '11-20:1' and not (marks / 'crashed').exists():\n"
        "    (marks / 'crashed').touch()\n"
        "    os.kill(os.getpid(), signal.SIGKILL)\n",
    )
    out = tmp_path / "scan.json"
    arguments = ["scan", scene, "--frames", "1-30", "--chunk", "10", "--workers", "2"]
    result = collide(*arguments, "--blender", blender, "--json", out, "--csv", tmp_path / "s.csv")
    assert result.returncode == 1, result.stderr
    assert (tmp_path / "marks" / "crashed").exists()
    assert report_to_json(read(out)) == report_to_json(single_run[1])
    progress = [line for line in result.stderr.splitlines() if " done (" in line]
    assert len(progress) == 3 and "frames/s, ETA " in progress[-1]
    assert "3/3 chunks, 30/30 frames" in progress[-1]


def test_scheduler_scan_equals_one_run_after_a_worker_is_killed(
    scene, single_run, dask_cluster, tmp_path
):
    # The first try of chunk 1-10 notes its worker's pid and stalls, and that worker is
    # killed: the chunk runs again on the other worker.
    blender = stand_in(
        tmp_path,
        "if frames == '1-10:1' and not (marks / 'stalled').exists():\n"
        "    (marks / 'worker').write_text(str(os.getppid()))\n"
        "    (marks / 'stalled').touch()\n"
        "    time.sleep(60)\n",
    )
    out = tmp_path / "scan.json"
    arguments = ["scan", scene, "--frames", "1-30", "--chunk", "10"]
    arguments += ["--scheduler", dask_cluster.address, "--scratch", tmp_path / "scratch"]
    scan = subprocess.Popen(
        collide_command(*arguments, "--blender", blender, "--json", out),
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        wait_for(lambda: (tmp_path / "marks" / "worker").exists())
        worker = int((tmp_path / "marks" / "worker").read_text())
        assert worker in {process.pid for process in dask_cluster.workers}
        os.kill(worker, signal.SIGKILL)
        _, stderr = scan.communicate(timeout=120)
    finally:
        scan.kill()
    assert scan.returncode == 1, stderr
    assert report_to_json(read(out)) == report_to_json(single_run[1])
    assert sorted(path.name for path in (tmp_path / "scratch").iterdir()) == [
        "part-1-10.json",
        "part-11-20.json",
        "part-21-30.json",
    ]


@pytest.mark.parametrize(
    ("misbehaviour", "options", "failed", "reason"),
    [
        (
            "os.kill(os.getpid(), signal.SIGKILL)",
            ["--retries", "1", "--chunk", "15"],
            "16-30:1",
            "failed after 2 tries: ChunkError: Blender crashed (SIGKILL)",
        ),
        (
            "time.sleep(60)",
            # One chunk: a real Blender may not start within the timeout on a busy machine.
            ["--retries", "0", "--timeout", "1.5", "--chunk", "30"],
            "1-30:1",
            "failed after 1 try: ChunkError: Blender ran past the 1.5 s timeout",
        ),
    ],
)
def test_a_chunk_that_fails_every_try_exits_2_naming_its_frames(
    scene, tmp_path, misbehaviour, options, failed, reason
):
    blender = stand_in(
        tmp_path,
        f"if frames == {failed!r}:\n"
        "    (marks / f'try-{os.getpid()}').touch()\n"
        f"    {misbehaviour}\n",
    )
    out = tmp_path / "scan.json"
    arguments = ["scan", scene, "--frames", "1-30", "--workers", "2"]
    result = collide(*arguments, *options, "--blender", blender, "--json", out)
    assert result.returncode == 2, result.stderr
    assert error_lines(result) == [f"collide: error: frames {failed} {reason}"]
    # One line says it: not Dask's "Compute Failed" and traceback per try besides.
    assert "Compute Failed" not in result.stderr and "Traceback" not in result.stderr
    tries = 1 + int(options[1])
    assert len(list((tmp_path / "marks").glob("try-*"))) == tries
    assert not out.exists()


def test_ctrl_c_cancels_the_chunks_and_writes_no_report(scene, tmp_path):
    blender = stand_in(tmp_path, "(marks / f'started-{os.getpid()}').touch()\ntime.sleep(60)\n")
    out = tmp_path / "out"
    out.mkdir()
    arguments = ["scan", scene, "--frames", "1-30", "--chunk", "10", "--workers", "2"]
    scan = subprocess.Popen(
        collide_command(*arguments, "--blender", blender, "--json", out / "scan.json"),
        stderr=subprocess.PIPE,
        text=True,
        # As from a terminal: a test run started in the background by a shell without
        # job control inherits SIGINT ignored, and so would the scan.
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    try:
        wait_for(lambda: len(list((tmp_path / "marks").glob("started-*"))) == 2)
        scan.send_signal(signal.SIGINT)
        _, stderr = scan.communicate(timeout=30)
    finally:
        scan.kill()
    assert scan.returncode == 130, stderr
    assert "collide: interrupted: chunks cancelled, no report written" in stderr
    assert list(out.iterdir()) == []
    # The stalled Blender stand-ins were killed, not left running.
    for mark in (tmp_path / "marks").glob("started-*"):
        pid = int(mark.name.removeprefix("started-"))
        wait_for(lambda pid=pid: not os.path.exists(f"/proc/{pid}") or _is_zombie(pid), 10)


def _is_zombie(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] == "Z"
    except OSError:
        return True


def test_scan_with_fixes_and_proxy_geometry_equals_one_run(scene, tmp_path):
    # Each chunk suggests the fix at its own worst frame; the merge keeps the clash's
    # worst chunk, so the fixes are those of one run.
    options = ["--frames", "1-30", "--geometry", "proxy", "--suggest-fixes"]
    one = collide("report", scene, *options, "--json", tmp_path / "one.json")
    scan = collide(
        "scan", scene, *options, "--chunk", "10", "--workers", "2", "--json", tmp_path / "scan.json"
    )
    assert one.returncode == scan.returncode == 1, scan.stderr
    single, merged = read(tmp_path / "one.json"), read(tmp_path / "scan.json")
    assert report_to_json(merged) == report_to_json(single)
    assert {clash["geometry"] for clash in merged["clashes"]} == {"proxy"}
    assert all("fix" in clash for clash in merged["clashes"])
    fixes = sorted(line for line in scan.stdout.splitlines() if line.startswith("fix "))
    assert fixes == sorted(line for line in one.stdout.splitlines() if line.startswith("fix "))
    assert len(fixes) == len(merged["clashes"])


@pytest.mark.parametrize(
    ("option", "pair", "toi"),
    [
        # Only the motion from frame 5 to 6 passes Pin: the chunk 1-5 looks ahead to 6.
        (["--continuous"], ("Bullet", "Pin"), 5.69),
        # Only the sub-step 5.5 of frame 5, the chunk 1-5's last frame, meets Mid.
        (["--substeps", "2"], ("Bullet", "Mid"), None),
    ],
)
def test_scan_with_clashes_between_frames_at_a_chunk_border_equals_one_run(
    fast_scene, tmp_path, option, pair, toi
):
    options = ["--frames", "1-10", *option]
    one = collide("report", fast_scene, *options, "--json", tmp_path / "one.json")
    scan = collide(
        "scan",
        fast_scene,
        *options,
        "--chunk",
        "5",
        "--workers",
        "2",
        "--json",
        tmp_path / "s.json",
    )
    assert one.returncode == scan.returncode == 1, scan.stderr
    single, merged = read(tmp_path / "one.json"), read(tmp_path / "s.json")
    assert report_to_json(merged) == report_to_json(single)
    clash = {(clash["a"], clash["b"]): clash for clash in merged["clashes"]}[pair]
    assert clash["frames"] == [[5, 5]]
    if toi is None:
        assert "toi" not in clash and merged["substeps"] == 2
    else:
        assert clash["toi"] == pytest.approx(toi, abs=1e-3)


def _thumbnails(html: str) -> dict[str, list[bytes]]:
    """Clash id -> the PNG thumbnails in the HTML report's row of that clash."""
    return {
        clash_id: [base64.b64decode(data) for data in re.findall(THUMBNAIL, row)]
        for clash_id, row in re.findall(r'<tr id="clash-([0-9a-f]{16})">(.*?)</tr>', html, re.S)
    }


THUMBNAIL = r'<img class="thumbnail" alt="[^"]*" src="data:image/png;base64,([^"]+)">'


def test_scan_thumbnails_one_per_clash_as_in_one_run(scene, tmp_path):
    options = ["--frames", "1-30", "--thumbnails"]
    one = collide("report", scene, *options, "--html", tmp_path / "one.html")
    scan = collide(
        "scan", scene, *options, "--chunk", "10", "--workers", "2", "--html", tmp_path / "s.html"
    )
    assert one.returncode == scan.returncode == 1, scan.stderr
    single = _thumbnails((tmp_path / "one.html").read_text(encoding="utf-8"))
    merged = _thumbnails((tmp_path / "s.html").read_text(encoding="utf-8"))
    assert len(merged) == 7 and merged.keys() == single.keys()
    assert all(len(pictures) == 1 for pictures in merged.values())
    assert all(picture.startswith(b"\x89PNG\r\n\x1a\n") for [picture] in merged.values())
    # The same pictures in the same report: the same bytes.
    assert (tmp_path / "s.html").read_bytes() == (tmp_path / "one.html").read_bytes()


# Frames 1-10: Shed stands through Wall until it is demolished (hidden) at frame 5.
DEMOLITION_SCENE = (
    SCENE_HELPERS
    + """
scene.frame_start, scene.frame_end = 1, 10
box("Wall", (0, 0, 0), (2, 0.2, 1))
shed = box("Shed", (0, 0, 0), (1, 1, 1))
for frame, hidden in ((4, False), (5, True)):
    shed.hide_viewport = hidden
    shed.keyframe_insert("hide_viewport", frame=frame)
bpy.ops.wm.save_as_mainfile(filepath=out)
"""
)


def test_scan_of_objects_demolished_before_the_last_chunk_equals_one_run(tmp_path):
    """The last chunk (frames 6-10) ran without --lookahead and so as a whole run: its
    set A, Shed, matched no object and it exited 2 on every try, failing the scan."""
    scene = build_scene(tmp_path, DEMOLITION_SCENE)
    tests = tmp_path / "tests.json"
    tests.write_text(
        json.dumps(
            {
                "format": "collide-tests",
                "version": 1,
                "tests": [
                    {
                        "name": "shed vs wall",
                        "type": "hard",
                        "a": {"name": "Shed"},
                        "b": {"name": "Wall"},
                    }
                ],
            }
        )
    )
    options = ["--frames", "1-10", "--tests", tests]
    one = collide("report", scene, *options, "--json", tmp_path / "one.json")
    scan = collide(
        "scan", scene, *options, "--chunk", "5", "--workers", "2", "--json", tmp_path / "s.json"
    )
    assert one.returncode == scan.returncode == 1, scan.stderr
    single, merged = read(tmp_path / "one.json"), read(tmp_path / "s.json")
    assert [clash["frames"] for clash in single["clashes"]] == [[[1, 4]]]
    assert report_to_json(merged) == report_to_json(single)
