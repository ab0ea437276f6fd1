"""JSON input files (tests files, baseline reports) read within fixed limits, so that a
hostile or broken file gives a one-line error instead of a hang, a MemoryError or a
traceback.

    read_json_file(path)   the parsed document; JsonInputError (a ValueError) otherwise
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

# The largest input file read: a tests file is a few KiB and a report of 100,000 clashes
# about 60 MiB, and a bounded read means /dev/zero or a huge file fails at once.
MAX_INPUT_BYTES = 64 * 1024 * 1024
# Integers longer than this are read as floats: no field takes integers anywhere near
# 10**18 (frames stop at about 1e6), and a float of a 400-digit number is inf, which
# every number check refuses by name, where a 400-digit int overflows those checks.
MAX_INTEGER_DIGITS = 18


class JsonInputError(ValueError):
    """An input file that cannot be read or parsed within the limits; the message is one
    line and does not name the file (the caller does)."""


def _parse_int(text: str) -> int | float:
    digits = len(text.lstrip("-"))
    return int(text) if digits <= MAX_INTEGER_DIGITS else float(text)


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    keys = [key for key, _ in pairs]
    if len(set(keys)) < len(keys):
        twice = next(key for index, key in enumerate(keys) if key in keys[:index])
        # A ValueError, reported as invalid JSON below.
        raise ValueError(f"key {twice!r} given twice in one object")
    return dict(pairs)


def parse_json(text: str) -> Any:
    """The document in `text`. Raises JsonInputError for invalid JSON, a key given twice
    in one object (json.loads keeps the last silently: a tests file's second "tolerance"
    overrode the first unseen), nesting deeper than the parser can follow, or numbers it
    cannot convert."""
    try:
        return json.loads(text, parse_int=_parse_int, object_pairs_hook=_unique_keys)
    except RecursionError:
        raise JsonInputError("not valid JSON: nested too deeply") from None
    except (ValueError, OverflowError) as error:
        message = " ".join(str(error).split())
        raise JsonInputError(f"not valid JSON: {message:.200}") from None


def read_text_bounded(path: str | Path, limit: int = MAX_INPUT_BYTES) -> str:
    """The UTF-8 text of a file of at most `limit` bytes, reading at most limit + 1 bytes
    (so a device or an endless file fails at once), without the byte order mark Windows
    tools write first (PowerShell 5's `Out-File -Encoding utf8`, older Notepad). Raises
    JsonInputError if larger or not UTF-8, OSError if it cannot be read."""
    with open(path, "rb") as stream:
        data = stream.read(limit + 1)
    if len(data) > limit:
        raise JsonInputError(f"larger than {limit // (1024 * 1024)} MiB, the limit for an input")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        raise JsonInputError(f"not UTF-8 text: {error}") from None


def read_json_file(path: str | Path, limit: int = MAX_INPUT_BYTES) -> Any:
    """parse_json(read_text_bounded(path, limit)). Raises JsonInputError or OSError."""
    return parse_json(read_text_bounded(path, limit))
