"""The add-on zip the Blender tests install, built once per test session."""

from __future__ import annotations

import functools
import importlib.util
import os
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


@functools.cache
def addon_zip() -> Path:
    """`COLLIDE_ADDON_ZIP` when set, else build.py's zip built afresh (once per session),
    so that a stale zip is never tested."""
    if os.environ.get("COLLIDE_ADDON_ZIP"):
        return Path(os.environ["COLLIDE_ADDON_ZIP"])
    # build.py is a script beside the tests, not an installed module: load it by path.
    spec = importlib.util.spec_from_file_location("collide_build", ROOT / "build.py")
    build = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(build)
    return build.build_zip()
