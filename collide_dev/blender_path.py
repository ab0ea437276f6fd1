"""Starting Debian's Blender from a Python that a pyenv shim chose (standard library only:
build.py imports this before anything is installed)."""

from __future__ import annotations

import os


def drop_pyenv_shim_paths() -> None:
    """Undo what a pyenv shim adds to PATH for the interpreter running this process.

    The shim puts $PYENV_ROOT/versions/<v>/bin first on PATH; Debian's Blender finds its
    Python home through PATH, so started from here it would load pyenv's Python, which
    has no numpy, instead of the system one with python3-numpy.
    """
    root = os.environ.get("PYENV_ROOT")
    if not root:
        return
    versions = os.path.join(root, "versions") + os.sep
    entries = os.environ.get("PATH", "").split(os.pathsep)
    os.environ["PATH"] = os.pathsep.join(e for e in entries if not e.startswith(versions))
