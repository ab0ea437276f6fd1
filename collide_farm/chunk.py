"""One `blender -b` run of clash_report.py: finding Blender and the script, building the
command, and running a chunk on a worker (the task `scan` submits to Dask); and the
thumbnail pass over a merged report (clash_thumbnails.py)."""

from __future__ import annotations

import ctypes
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import collide_addon
from collide_addon.report.json_report import write_json_report

# Where the scripts are: beside collide_addon in a checkout (and an editable install),
# and in site-packages beside it in a wheel install (pyproject.toml's force-include).
SCRIPTS = Path(collide_addon.__file__).resolve().parents[1] / "blender_scripts"
CLASH_REPORT = SCRIPTS / "clash_report.py"
CLASH_THUMBNAILS = SCRIPTS / "clash_thumbnails.py"
BLENDER_VARIABLE = "COLLIDE_BLENDER"
# prctl(PR_SET_PDEATHSIG): Linux's request to be sent a signal when the parent dies. libc
# is opened here, not in the forked child, where another thread may hold the loader lock.
_PR_SET_PDEATHSIG = 1
_LIBC = ctypes.CDLL(None, use_errno=True) if sys.platform == "linux" else None

# Blender processes this process started and that still run; killed on Ctrl-C, as a
# thread running one cannot be stopped otherwise.
_running: set[subprocess.Popen] = set()
_running_lock = threading.Lock()


class FarmError(Exception):
    """The farm cannot start or finish; the `collide` command exits 2 with this message."""


class ChunkError(Exception):
    """A chunk's Blender run failed (crashed, timed out or exited with an error)."""


def find_blender(option: str | None) -> str:
    """The Blender binary: `option` (--blender), else $COLLIDE_BLENDER, else `blender` on
    PATH, as an absolute path. Raises FarmError when none is found."""
    for source, value in (
        ("--blender", option),
        (BLENDER_VARIABLE, os.environ.get(BLENDER_VARIABLE)),
    ):
        if value:
            found = shutil.which(value)
            if found is None:
                raise FarmError(f"{source} {value}: not an executable file")
            return str(Path(found).resolve())
    found = shutil.which("blender")
    if found is None:
        raise FarmError(
            f"no Blender found: give --blender PATH, set {BLENDER_VARIABLE} or put blender on PATH"
        )
    return found


def report_command(
    blender: str, scene: str, arguments: list[str], script: Path = CLASH_REPORT
) -> list[str]:
    """The command of one run of `script` (clash_report.py) over `scene` with its
    `arguments`."""
    if not script.is_file():
        raise FarmError(f"{script} is missing: reinstall collide")
    return [blender, "-b", "--factory-startup", scene, "--python", str(script), "--", *arguments]


def _die_with_parent() -> None:
    # A Blender whose worker was killed must not run on unseen and hold a core.
    if _LIBC is not None:
        _LIBC.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)


def _last_error_line(stderr: str) -> str:
    lines = [line for line in stderr.splitlines() if line.strip()]
    errors = [line for line in lines if "error" in line.lower()]
    return (errors or lines or ["no output"])[-1].strip()


def run_blender(command: list[str], timeout: float | None = None) -> None:
    """Run a Blender command to its end. Raises ChunkError when Blender crashes, runs past
    `timeout` seconds or exits with a status other than 0."""
    process = subprocess.Popen(
        command,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=_die_with_parent,
    )
    with _running_lock:
        _running.add(process)
    try:
        _, stderr = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        process.communicate()
        raise ChunkError(f"Blender ran past the {timeout:g} s timeout") from None
    finally:
        with _running_lock:
            _running.discard(process)
    if process.returncode < 0:
        raise ChunkError(f"Blender crashed ({signal.Signals(-process.returncode).name})")
    if process.returncode != 0:
        raise ChunkError(f"Blender exited {process.returncode}: {_last_error_line(stderr)}")


def run_chunk(command: list[str], part: str, timeout: float | None = None) -> str:
    """Run one chunk's Blender command, which writes the JSON report `part`; its text.

    Raises ChunkError as `run_blender` (the command is given --fail-on never), or when
    no report was written."""
    run_blender(command, timeout)
    try:
        return Path(part).read_text(encoding="utf-8")
    except OSError as error:
        raise ChunkError(f"no report written: {error}") from None


def kill_running_chunks() -> None:
    """Kill the Blender runs this process started (in-process workers of a local cluster)."""
    with _running_lock:
        processes = list(_running)
    for process in processes:
        process.kill()


def render_report_thumbnails(
    blender: str, scene: str, report: Mapping[str, Any], timeout: float | None = None
) -> dict[str, bytes]:
    """The thumbnails of `report`'s open clashes, rendered by clash_thumbnails.py in one
    `blender -b` run over `scene` on this machine; clash id -> PNG bytes.
    Raises FarmError when that run fails."""
    with tempfile.TemporaryDirectory(prefix="collide-thumbnails-") as folder:
        report_path, pictures = Path(folder) / "report.json", Path(folder) / "pictures"
        write_json_report(report, report_path)
        pictures.mkdir()
        command = report_command(
            blender, scene, [str(report_path), str(pictures)], CLASH_THUMBNAILS
        )
        try:
            run_blender(command, timeout)
        except ChunkError as error:
            raise FarmError(f"thumbnails: {error}") from None
        return {path.stem: path.read_bytes() for path in sorted(pictures.glob("*.png"))}
