"""CSV view of a clash report: one row per clash, a header row first.

Columns: id, status, test, type, a, b, kind_a, kind_b, distance, worst_frame, frames,
point_x, point_y, point_z, geometry ("mesh" or "proxy": what decided the clash),
relation (see the JSON report), fix (with --suggest-fixes: "move B by (x, y, z)" or
"none: why"; else empty), toi (fractional frame of first contact of a clash found
only between samples, else empty). `frames` lists the intervals as "1-12;30-31;40" (a lone
frame as itself). Every text cell that a spreadsheet would run as a formula (starting
with =, +, -, @, tab or carriage return) gets a leading apostrophe, the OWASP guard
against CSV injection: names, but also ids, statuses and the frames of negative frames
("-5--1"). Only a number the writer formats itself stays bare, so "-1.8" stays numeric.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..clash.atomic import write_text_atomic
from .common import fix_text, format_intervals

COLUMNS = (
    "id",
    "status",
    "test",
    "type",
    "a",
    "b",
    "kind_a",
    "kind_b",
    "distance",
    "worst_frame",
    "frames",
    "point_x",
    "point_y",
    "point_z",
    "geometry",
    "relation",
    "fix",
    "toi",
)
_FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def safe_cell(text: str) -> str:
    """`text` with an apostrophe in front if a spreadsheet would read it as a formula."""
    return "'" + text if text.startswith(_FORMULA_STARTS) else text


def _cell(value: Any, as_float: bool = False) -> str:
    """The cell text of `value`: an int or float as a number (a float, with all its
    digits, when `as_float`), anything else as guarded text (see `safe_cell`)."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return repr(float(value)) if as_float else repr(value)
    return safe_cell(str(value))


def csv_text(report: Mapping[str, Any]) -> str:
    """The CSV file text of a report (RFC 4180 quoting, \\r\\n line ends)."""
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    writer.writerow(COLUMNS)
    for clash in report["clashes"]:
        x, y, z = clash["point"]
        text = (clash["id"], clash["status"], clash["test"], clash["type"], clash["a"])
        writer.writerow(
            [
                *(_cell(value) for value in (*text, clash["b"], *clash["kinds"])),
                _cell(clash["distance"], as_float=True),
                _cell(clash["worst_frame"]),
                _cell(format_intervals(clash["frames"])),
                *(_cell(value, as_float=True) for value in (x, y, z)),
                _cell(clash.get("geometry", "proxy")),
                _cell(clash.get("relation", "")),
                _cell(fix_text(clash)),
                _cell(clash["toi"], as_float=True) if "toi" in clash else "",
            ]
        )
    return buffer.getvalue()


def write_csv_report(report: Mapping[str, Any], path: str | Path) -> None:
    """Write `csv_text(report)` to `path` atomically."""
    write_text_atomic(path, csv_text(report))
