"""Shared by the tests that run Debian's `blender` binary with the add-on zip."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path


def blender_binary() -> str:
    """The path of Debian's `blender` (3.4); fails the test when it is missing."""
    blender = shutil.which("blender")
    assert blender, "Debian's blender is required (python3 build.py setup installs it)"
    return blender


def blender_environment(directory: Path) -> dict[str, str]:
    """The environment for a Blender run with its user scripts and config in `directory`
    (so the add-on installs there), without the caller's PYTHONPATH."""
    environment = dict(os.environ, BLENDER_USER_SCRIPTS=str(directory / "scripts"))
    environment["BLENDER_USER_CONFIG"] = str(directory / "config")
    environment.pop("PYTHONPATH", None)
    return environment


def read_result(stdout: str) -> dict | None:
    """The JSON after `RESULT ` on the first line that starts with it; None without one."""
    line = next((line for line in stdout.splitlines() if line.startswith("RESULT ")), None)
    return None if line is None else json.loads(line.removeprefix("RESULT "))
