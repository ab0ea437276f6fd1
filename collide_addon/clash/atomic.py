"""Atomic file writes: a reader sees the old file or the new one, never half of one.

Here rather than in `report/` because tests files are written atomically too, and this
package may not import the reports."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path


def write_bytes_atomic(path: str | Path, data: bytes) -> None:
    """Write `data` to `path` through a temporary file in the same folder and os.replace,
    which is atomic on one file system. The temporary file is removed on failure."""
    path = Path(path)
    descriptor, temporary = tempfile.mkstemp(
        prefix=f".{path.name}.", suffix=".tmp", dir=path.parent
    )
    try:
        with os.fdopen(descriptor, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        # mkstemp creates the file 0600; give it the mode a plain open() would.
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(temporary, 0o666 & ~umask)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def write_text_atomic(path: str | Path, text: str) -> None:
    """write_bytes_atomic of `text` encoded as UTF-8 (newlines kept as given)."""
    write_bytes_atomic(path, text.encode("utf-8"))
