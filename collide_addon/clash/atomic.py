"""Atomic file writes: a reader sees the old file or the new one, never half of one.

Here rather than in `report/` because tests files are written atomically too, and this
package may not import the reports."""

from __future__ import annotations

import errno
import os
import stat
import tempfile
from pathlib import Path


def write_bytes_atomic(path: str | Path, data: bytes) -> None:
    """Write `data` to `path` through a temporary file in the same folder and os.replace,
    which is atomic on one file system. The temporary file is removed on failure.

    A symlink is written through: its target is replaced, next to the target, and the
    link stays. A path that exists and is not a regular file (a fifo, a device such as
    /dev/stdout) is opened and written directly, which is not atomic: replacing it would
    put a regular file where the user named a pipe or device.
    """
    # realpath follows every link (a dangling one too, which then creates its target, as
    # open() would); os.replace on the link itself would swap the link for a file.
    target = Path(os.path.realpath(path))
    try:
        regular = stat.S_ISREG(target.stat().st_mode)
    except FileNotFoundError:
        regular = True
    if not regular:
        with open(target, "wb") as handle:
            handle.write(data)
        return
    descriptor, temporary = _temporary_beside(target, path)
    try:
        with os.fdopen(descriptor, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        # mkstemp creates the file 0600; give it the mode a plain open() would.
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(temporary, 0o666 & ~umask)
        os.replace(temporary, target)
    except BaseException as error:
        Path(temporary).unlink(missing_ok=True)
        if isinstance(error, OSError):
            raise _naming(error, path) from error
        raise


def check_writable(path: str | Path) -> None:
    """Raise the OSError (naming `path`) that `write_bytes_atomic(path, ...)` would meet
    for want of a place to write: `path` is a folder, or its folder takes no new file
    (missing, read-only, not the user's). Tried as the write does it, by creating and
    removing a temporary file beside the target, so that a run checks its outputs before
    long work rather than failing after it."""
    target = Path(os.path.realpath(path))
    if target.is_dir():
        raise IsADirectoryError(errno.EISDIR, "it is a folder", str(path))
    if target.exists() and not target.is_file():
        # A pipe or device is written directly: opening a fifo here would block.
        if not os.access(target, os.W_OK):
            raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), str(path))
        return
    descriptor, temporary = _temporary_beside(target, path)
    os.close(descriptor)
    os.unlink(temporary)


def _temporary_beside(target: Path, path: str | Path) -> tuple[int, str]:
    """A new temporary file in `target`'s folder, for `path` (target: its real path):
    (descriptor, its path). Raises OSError naming `path`."""
    try:
        return tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    except OSError as error:
        raise _naming(error, path) from error


def _naming(error: OSError, path: str | Path) -> OSError:
    """`error` as the same kind of OSError naming `path`, the file the user asked for,
    not the temporary file beside it that failed ("/proc/.r.json.u67u496w.tmp")."""
    return type(error)(error.errno, error.strerror, str(path))


def write_text_atomic(path: str | Path, text: str) -> None:
    """write_bytes_atomic of `text` encoded as UTF-8 (newlines kept as given)."""
    write_bytes_atomic(path, text.encode("utf-8"))
