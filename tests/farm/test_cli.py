"""The `collide` command without Blender runs: finding Blender, arguments refused before
any work, `collide merge` of chunk reports and its refusals, the console script."""

from __future__ import annotations

import importlib
import io
import json
import runpy
import tomllib
import zipfile
from pathlib import Path

import pytest

from collide_addon.report.json_report import report_to_json
from collide_addon.report.run import run_report
from collide_farm.chunk import FarmError, find_blender
from collide_farm.progress import ChunkProgress
from collide_farm.scan import ScanSettings, chunk_arguments, split_frames
from tests.farm.conftest import collide, error_lines, read
from tests.report.sample_report import SAMPLE_TESTS, read_sample_frame

REPO = Path(__file__).resolve().parents[2]


def test_pyproject_installs_the_collide_script_and_the_farm_extra():
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    assert project["scripts"] == {"collide": "collide_farm.cli:main"}
    module, _, function = project["scripts"]["collide"].partition(":")
    assert callable(getattr(importlib.import_module(module), function))
    assert project["dependencies"] == ["numpy"]
    assert all("==" in requirement for requirement in project["optional-dependencies"]["farm"])


def test_split_frames_covers_the_range_in_chunks():
    assert split_frames((1, 30, 1), 8) == [(1, 8, 1), (9, 16, 1), (17, 24, 1), (25, 30, 1)]
    assert split_frames((1, 10, 2), 2) == [(1, 4, 2), (5, 8, 2), (9, 10, 2)]
    assert split_frames((5, 5, 1), 3) == [(5, 5, 1)]


def test_every_chunk_but_the_last_looks_ahead_with_the_scan_sampling():
    settings = ScanSettings("s.blend", (1, 30, 1), "blender", substeps=4, continuous=True)
    chunks = split_frames(settings.frames, 10)
    arguments = [
        chunk_arguments(settings, frames, Path("p.json"), frames == chunks[-1]) for frames in chunks
    ]
    assert ["--lookahead" in chunk for chunk in arguments] == [True, True, False]
    # The last is marked a chunk: a set matching nothing at its frames is the merge's to
    # decide on (objects demolished before them).
    assert ["--chunk" in chunk for chunk in arguments] == [False, False, True]
    assert all(chunk[-3:] == ["--substeps", "4", "--continuous"] for chunk in arguments)
    plain = ScanSettings("s.blend", (1, 30, 1), "blender")
    assert chunk_arguments(plain, (1, 10, 1), Path("p.json"), False) == [
        "--frames=1-10:1",
        "--json",
        "p.json",
        "--fail-on",
        "never",
        "--lookahead",
    ]


def test_a_chunk_below_frame_zero_reaches_clash_report_as_its_range():
    """ "--frames", "-3-0:1" was read by clash_report.py's parser as an option: every
    chunk of a scan starting below frame 0 failed (exit 2, "expected one argument")."""
    settings = ScanSettings("s.blend", (-3, 6, 1), "blender")
    arguments = chunk_arguments(settings, (-3, 0, 1), Path("p.json"), False)
    assert arguments[0] == "--frames=-3-0:1"
    script = runpy.run_path(str(REPO / "blender_scripts" / "clash_report.py"))
    parsed = script["make_parser"]().parse_args(arguments)
    assert parsed.frames == (-3, 0, 1)


def test_progress_lines_give_rate_and_time_left():
    stream = io.StringIO()
    times = iter([0.0, 10.0, 20.0])
    progress = ChunkProgress(40, 2, stream, clock=lambda: next(times))
    progress.chunk_done(10, "frames 1-10:1")
    progress.chunk_done(30, "frames 11-40:1")
    assert stream.getvalue().splitlines() == [
        "collide: frames 1-10:1 done (1/2 chunks, 10/40 frames), 1.0 frames/s, ETA 0:00:30",
        "collide: frames 11-40:1 done (2/2 chunks, 40/40 frames), 2.0 frames/s, ETA 0:00:00",
    ]


def test_find_blender_order_and_errors(tmp_path, monkeypatch):
    binary = tmp_path / "my-blender"
    binary.write_text("#!/bin/sh\n")
    binary.chmod(0o755)
    other = tmp_path / "other-blender"
    other.write_text("#!/bin/sh\n")
    other.chmod(0o755)
    monkeypatch.setenv("COLLIDE_BLENDER", str(other))
    assert find_blender(str(binary)) == str(binary)
    assert find_blender(None) == str(other)
    monkeypatch.delenv("COLLIDE_BLENDER")
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(FarmError, match="no Blender found: give --blender PATH"):
        find_blender(None)
    with pytest.raises(FarmError, match="--blender nowhere: not an executable file"):
        find_blender("nowhere")


@pytest.mark.parametrize(("status", "expected"), [(0, 0), (1, 1), (2, 2), (3, 2)])
def test_report_passes_blender_exit_codes_and_arguments(tmp_path, status, expected):
    # A stand-in that records its arguments: the real clash_report.py runs in tests/cli.
    blender = tmp_path / "blender"
    blender.write_text(f'#!/bin/sh\necho "$@" > {tmp_path / "arguments"}\nexit {status}\n')
    blender.chmod(0o755)
    (tmp_path / "s.blend").write_bytes(b"")
    arguments = ["report", "s.blend", "--frames", "1-3", "--blender", blender, "--json", "o"]
    result = collide(*arguments, cwd=tmp_path)
    assert result.returncode == expected
    script = REPO / "blender_scripts" / "clash_report.py"
    assert (tmp_path / "arguments").read_text().split() == [
        "-b",
        "--factory-startup",
        "s.blend",
        "--python",
        str(script),
        "--",
        "--frames",
        "1-3",
        "--json",
        "o",
    ]
    if status == 3:
        assert error_lines(result) == ["collide: error: Blender exited 3"]


def test_a_missing_scene_exits_2_before_blender_starts(tmp_path):
    for command in ("report", "scan"):
        result = collide(
            command, tmp_path / "no.blend", "--frames", "1-3", "--blender", "/bin/false"
        )
        assert result.returncode == 2
        assert error_lines(result) == [
            f"collide: error: {tmp_path / 'no.blend'}: no such .blend file"
        ]


def test_no_blender_exits_2_with_one_line(tmp_path):
    environment = {"PATH": str(tmp_path), "PYTHONPATH": str(REPO)}
    (tmp_path / "a.blend").write_bytes(b"")
    result = collide("report", tmp_path / "a.blend", env=environment)
    assert result.returncode == 2
    assert error_lines(result) == [
        "collide: error: no Blender found: give --blender PATH, set COLLIDE_BLENDER or put "
        "blender on PATH"
    ]


@pytest.mark.parametrize(
    ("arguments", "reason"),
    [
        (["--substeps", "65"], "substeps must be <= 64, got 65"),
        (["--frames", "1-1048575"], "frames 1-1048575 go beyond Blender's frame range"),
        (["--json", "x/none/a.json"], "cannot write x/none/a.json: its folder does not exist"),
        (["--workers", "2", "--scheduler", "tcp://h:1"], "argument --scheduler: not allowed"),
        (["--frames", "3-1"], "argument --frames: need START <= END and STEP >= 1"),
        # Read as an option ("expected one argument") where given as two arguments.
        (["--frames", "-1048575-0"], "frames -1048575-0 go beyond Blender's frame range"),
        (["--scheduler", "tcp://127.0.0.1:1"], "--scheduler needs --scratch"),
    ],
)
def test_scan_refuses_bad_arguments_before_any_work(tmp_path, arguments, reason):
    scene = tmp_path / "scene.blend"
    scene.write_bytes(b"")
    base = ["scan", scene, "--frames", "1-10", "--blender", "/bin/false"]
    result = collide(*base, *arguments, cwd=tmp_path)
    assert result.returncode == 2
    assert len(error_lines(result)) == 1 and reason in error_lines(result)[0]


def test_scan_refuses_a_bad_tests_file_before_any_chunk(tmp_path):
    scene = tmp_path / "scene.blend"
    scene.write_bytes(b"")
    tests = tmp_path / "tests.json"
    test = {"name": "fast", "a": {}, "type": "duplicates", "continuous": True}
    tests.write_text(json.dumps({"format": "collide-tests", "version": 1, "tests": [test]}))
    base = ["scan", scene, "--frames", "1-10", "--blender", "/bin/false", "--tests", tests]
    result = collide(*base, cwd=tmp_path)
    assert result.returncode == 2
    assert len(error_lines(result)) == 1
    assert "a duplicates test cannot be continuous" in error_lines(result)[0]


def _write_parts(folder: Path) -> list[Path]:
    paths = []
    for frames in ((1, 2, 1), (3, 4, 1)):
        report = run_report(SAMPLE_TESTS, frames, read_sample_frame, file="/s.blend").report
        path = folder / f"part-{frames[0]}.json"
        path.write_text(report_to_json(report))
        paths.append(path)
    return paths


def test_merge_writes_the_report_of_one_run_and_its_exit_status(tmp_path):
    parts = _write_parts(tmp_path)
    out = tmp_path / "merged.json"
    views = [
        "--html",
        tmp_path / "m.html",
        "--csv",
        tmp_path / "m.csv",
        "--bcf",
        tmp_path / "m.bcf",
    ]
    result = collide("merge", *reversed(parts), "--json", out, *views)
    whole = run_report(
        SAMPLE_TESTS,
        (1, 4, 1),
        read_sample_frame,
        file="/s.blend",
        html_path=tmp_path / "run.html",
        csv_path=tmp_path / "run.csv",
    ).report
    assert result.returncode == 1, result.stderr
    assert report_to_json(read(out)) == report_to_json(whole)
    assert (tmp_path / "m.html").read_bytes() == (tmp_path / "run.html").read_bytes()
    assert (tmp_path / "m.csv").read_bytes() == (tmp_path / "run.csv").read_bytes()
    assert zipfile.is_zipfile(tmp_path / "m.bcf")
    baseline = json.loads(report_to_json(whole))
    for clash in baseline["clashes"]:
        clash["status"] = "approved"
    (tmp_path / "base.json").write_text(json.dumps(baseline))
    again = collide("merge", *parts, "--json", out, "--baseline", tmp_path / "base.json")
    assert again.returncode == 0, again.stderr
    assert {clash["status"] for clash in read(out)["clashes"]} == {"approved"}


def test_merge_prints_the_merged_reports_warnings(tmp_path):
    # A part that reached 4,321 m from the origin: the merged report warns, as one run's.
    parts = _write_parts(tmp_path)
    far = read(parts[1])
    far["reach"] = 4321.0
    parts[1].write_text(report_to_json(far))
    out = tmp_path / "merged.json"
    result = collide("merge", *parts, "--json", out)
    assert result.returncode == 1, result.stderr
    (warning,) = read(out)["warnings"]
    assert "4,321 m from the origin" in warning
    assert f"collide: warning: {warning}" in result.stderr.splitlines()


def test_merge_refuses_parts_that_do_not_fit(tmp_path):
    first, second = _write_parts(tmp_path)
    result = collide("merge", first, first, "--json", tmp_path / "out.json")
    assert result.returncode == 2
    assert error_lines(result) == [f"collide: error: frames of {first} overlap those of {first}"]
    result = collide("merge", second, "--json", second)
    assert result.returncode == 2 and "refusing to overwrite it" in error_lines(result)[0]
    assert not (tmp_path / "out.json").exists()
