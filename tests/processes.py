"""Blender, or a Python with the bpy wheel, run in a process of its own: for what needs a
fresh interpreter (an install, the exit)."""

from __future__ import annotations

import subprocess
from pathlib import Path


def run_captured(
    command: list, environment: dict, cwd: Path
) -> tuple[subprocess.CompletedProcess, str]:
    """Run `command` with `environment` in the folder `cwd`, its output captured as text,
    for at most 300 s: the finished process and its stdout and stderr together."""
    completed = subprocess.run(
        command, env=environment, cwd=cwd, capture_output=True, text=True, timeout=300
    )
    return completed, completed.stdout + completed.stderr
