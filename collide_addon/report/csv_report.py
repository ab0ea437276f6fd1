"""CSV view of a clash report: one row per clash, a header row first.

Columns: id, status, test, type, a, b, kind_a, kind_b, distance, worst_frame, frames,
point_x, point_y, point_z, geometry ("mesh" or "proxy": what decided the clash),
relation (see the JSON report), fix (with --suggest-fixes: "move B by (x, y, z)" or
"none: why"; else empty), toi (fractional frame of first contact of a clash found
only between samples, else empty). `frames` lists the intervals as "1-12;30-31;40" (a lone
frame as itself). Every text cell that a spreadsheet would run as a formula (starting
with =, +, -, @, tab or carriage return) gets a leading apostrophe, the OWASP guard
against CSV injection: names, but also ids, statuses and the frames of negative frames
("-5--1"). So does text a spreadsheet would turn into another value: a number other
than a plain whole one (an id "34e6590250178931", which LibreOffice Calc read as
1.79769313486232E+308; an all-digit id past 15 digits, which Excel rounds; a name "0123"),
a date or a time (frames "1-8", which Excel reads as 8 January). Only a number the
writer formats itself stays bare, so "-1.8" stays numeric.
"""

from __future__ import annotations

import csv
import io
import re
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
# Text spreadsheets convert on import: numbers (thousands separators, exponents, percent),
# dates ("1-8", "2026/11/27", "27.11.2026") and times ("1:08", "1:08:30 PM").
_CONVERTED = re.compile(
    r"\s*(?:[+-]?(?:\d[\d,]*\.?\d*|\.\d+)(?:[eE][+-]?\d+)?%?"
    r"|\d+[-/.]\d+(?:[-/.]\d+)?"
    r"|\d+:\d+(?::\d+(?:\.\d+)?)?(?:\s*[AaPp][Mm])?)\s*"
)
# A whole number a spreadsheet gives back as written: no leading zero, at most the 15
# significant digits Excel keeps.
_KEPT_WHOLE = re.compile(r"0|[1-9]\d{0,14}")


def safe_cell(text: str) -> str:
    """`text` with an apostrophe in front if a spreadsheet would read it as a formula, or
    turn it into a number, date or time it would not show as written."""
    converted = _CONVERTED.fullmatch(text) and not _KEPT_WHOLE.fullmatch(text)
    return "'" + text if converted or text.startswith(_FORMULA_STARTS) else text


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
