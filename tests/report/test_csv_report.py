"""The CSV report: rows, formula guard, interval text."""

from __future__ import annotations

import csv
import io

from collide_addon.report.common import format_intervals
from collide_addon.report.csv_report import COLUMNS, csv_text, safe_cell, write_csv_report
from tests.report.sample_report import FORMULA, QUOTED


def test_csv_rows_round_trip(report, tmp_path):
    path = tmp_path / "r.csv"
    write_csv_report(report, path)
    rows = list(csv.reader(io.StringIO(path.read_text(encoding="utf-8"), newline="")))
    assert tuple(rows[0]) == COLUMNS
    assert len(rows) == 1 + len(report["clashes"])
    by_id = {row[0]: dict(zip(COLUMNS, row, strict=True)) for row in rows[1:]}
    for clash in report["clashes"]:
        row = by_id[clash["id"]]
        assert float(row["distance"]) == clash["distance"]
        assert [float(row[f"point_{axis}"]) for axis in "xyz"] == clash["point"]
        assert row["a"] in (clash["a"], "'" + clash["a"])
    touching = next(row for row in by_id.values() if row["test"] == "touch")
    assert touching["a"] == "'" + FORMULA
    assert touching["b"] == QUOTED


def test_csv_text_is_what_is_written(report, tmp_path):
    path = tmp_path / "r.csv"
    write_csv_report(report, path)
    assert path.read_bytes() == csv_text(report).encode("utf-8")


def test_safe_cell_and_format_intervals():
    assert safe_cell("=1+1") == "'=1+1" and safe_cell("-x") == "'-x" and safe_cell("Wall") == "Wall"
    # Text a spreadsheet turns into another value: ids LibreOffice Calc read as
    # 1.79769313486232E+308, an id past Excel's 15 digits, a leading zero, a date.
    for text in ("34e6590250178931", "6690396670157789", "0123", "1-8", "1:08", "1,5", "2.50"):
        assert safe_cell(text) == "'" + text
    for text in ("12", "0", "123456789012345", "1-12;30-31", "Wall 1-8", "e5", "3f2a"):
        assert safe_cell(text) == text
    assert format_intervals([[1, 12], [30, 31], [40, 40]]) == "1-12;30-31;40"
    assert format_intervals([]) == ""


def test_csv_guards_every_text_cell_and_keeps_numbers_numeric(report):
    clash = report["clashes"][0]
    hostile = dict(
        clash,
        id="=cmd|' /C calc'!A0",
        status="+status",
        type="@type",
        kinds=["-box", "\tsphere"],
        frames=[[-5, -1], [3, 3]],
        worst_frame=-3,
        distance=-1.5,
        point=[-1, 0.25, -0.5],
    )
    rows = list(csv.reader(io.StringIO(csv_text(dict(report, clashes=[hostile])), newline="")))
    row = dict(zip(COLUMNS, rows[1], strict=True))
    for column, text in [
        ("id", "=cmd|' /C calc'!A0"),
        ("status", "+status"),
        ("type", "@type"),
        ("kind_a", "-box"),
        ("kind_b", "\tsphere"),
        ("frames", "-5--1;3"),
    ]:
        assert row[column] == "'" + text, column
    # Numbers the writer formats stay plain numbers, negative ones included.
    assert (row["distance"], row["worst_frame"]) == ("-1.5", "-3")
    assert [row[f"point_{axis}"] for axis in "xyz"] == ["-1.0", "0.25", "-0.5"]
    # Text where a number belongs is text, and guarded like any other.
    textual = dict(hostile, worst_frame="=1+1", distance="-2+3")
    rows = list(csv.reader(io.StringIO(csv_text(dict(report, clashes=[textual])), newline="")))
    row = dict(zip(COLUMNS, rows[1], strict=True))
    assert (row["worst_frame"], row["distance"]) == ("'=1+1", "'-2+3")
