"""Atomic file writes."""

from __future__ import annotations

import os
import stat

import pytest

from collide_addon.clash.atomic import check_writable, write_bytes_atomic, write_text_atomic


def test_atomic_write_replaces_and_cleans_up_on_failure(tmp_path):
    path = tmp_path / "out.txt"
    write_text_atomic(path, "first \u00e9")
    assert path.read_text(encoding="utf-8") == "first \u00e9"
    write_bytes_atomic(path, b"second")
    assert path.read_bytes() == b"second"
    with pytest.raises(TypeError):
        write_bytes_atomic(path, "not bytes")
    assert path.read_bytes() == b"second"
    assert [entry.name for entry in tmp_path.iterdir()] == ["out.txt"]
    umask = os.umask(0)
    os.umask(umask)
    assert path.stat().st_mode & 0o777 == 0o666 & ~umask  # as open() would create it


def test_atomic_write_through_a_symlink_replaces_its_target(tmp_path):
    folder, elsewhere = tmp_path / "links", tmp_path / "targets"
    folder.mkdir()
    elsewhere.mkdir()
    target = elsewhere / "report.json"
    target.write_text("old")
    link = folder / "report.json"
    link.symlink_to(target)
    write_text_atomic(link, "new")
    assert link.is_symlink() and link.readlink() == target
    assert target.read_text() == "new"
    # The temporary file went next to the target, and nothing is left behind.
    assert [entry.name for entry in folder.iterdir()] == ["report.json"]
    assert [entry.name for entry in elsewhere.iterdir()] == ["report.json"]
    dangling = folder / "dangling.json"
    dangling.symlink_to(elsewhere / "created.json")
    write_text_atomic(dangling, "made")
    assert dangling.is_symlink() and (elsewhere / "created.json").read_text() == "made"


def test_atomic_write_to_a_fifo_writes_into_it(tmp_path):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    # A reader opened first (non-blocking) lets the writer's open() return at once.
    reader = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
    try:
        write_bytes_atomic(fifo, b"through the pipe")
        assert stat.S_ISFIFO(fifo.lstat().st_mode)
        assert os.read(reader, 100) == b"through the pipe"
    finally:
        os.close(reader)
    assert [entry.name for entry in tmp_path.iterdir()] == ["pipe"]


def test_a_failed_write_names_the_file_asked_for_not_its_temporary(tmp_path):
    """A report asked for in a folder that does not exist: the error named the temporary
    file it tried beside it (".r.json.u67u496w.tmp"), which the user never named."""
    wanted = tmp_path / "missing" / "r.json"
    with pytest.raises(FileNotFoundError) as raised:
        write_text_atomic(wanted, "{}")
    assert raised.value.filename == str(wanted)
    assert ".tmp" not in str(raised.value)


def test_check_writable_fails_where_the_write_would(tmp_path):
    folder = tmp_path / "folder"
    folder.mkdir()
    with pytest.raises(IsADirectoryError, match="it is a folder"):
        check_writable(folder)
    # /proc takes no new file, even from root (who passes every permission check).
    with pytest.raises(OSError) as raised:
        check_writable("/proc/report.json")
    assert raised.value.filename == "/proc/report.json"
    with pytest.raises(FileNotFoundError):
        check_writable(tmp_path / "none" / "r.json")
    existing = tmp_path / "r.json"
    existing.write_text("kept")
    for path in (tmp_path / "new.json", existing, "/dev/null"):
        check_writable(path)
    # The check leaves nothing behind.
    assert sorted(entry.name for entry in tmp_path.iterdir()) == ["folder", "r.json"]
    assert existing.read_text() == "kept"
