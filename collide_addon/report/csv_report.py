"""CSV view of a clash report: one row per clash, a header row first.

Columns: id, status, test, type, a, b, kind_a, kind_b, distance, worst_frame, frames,
point_x, point_y, point_z. `frames` lists the intervals as "1-12;30-31;40" (a lone
frame as itself). Text cells that a spreadsheet would run as a formula (starting with
=, +, -, @, tab or carriage return) get a leading apostrophe, the usual guard against
CSV injection; numeric columns are written as numbers.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..clash.atomic import write_text_atomic
from .common import format_intervals

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
)
_FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def safe_cell(text: str) -> str:
    """`text` with an apostrophe in front if a spreadsheet would read it as a formula."""
    return "'" + text if text.startswith(_FORMULA_STARTS) else text


def csv_text(report: Mapping[str, Any]) -> str:
    """The CSV file text of a report (RFC 4180 quoting, \\r\\n line ends)."""
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    writer.writerow(COLUMNS)
    for clash in report["clashes"]:
        x, y, z = clash["point"]
        writer.writerow(
            [
                clash["id"],
                clash["status"],
                safe_cell(clash["test"]),
                clash["type"],
                safe_cell(clash["a"]),
                safe_cell(clash["b"]),
                *clash["kinds"],
                repr(float(clash["distance"])),
                clash["worst_frame"],
                format_intervals(clash["frames"]),
                repr(float(x)),
                repr(float(y)),
                repr(float(z)),
            ]
        )
    return buffer.getvalue()


def write_csv_report(report: Mapping[str, Any], path: str | Path) -> None:
    """Write `csv_text(report)` to `path` atomically."""
    write_text_atomic(path, csv_text(report))
