"""Atomic file writes."""

from __future__ import annotations

import os

import pytest

from collide_addon.clash.atomic import write_bytes_atomic, write_text_atomic


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
