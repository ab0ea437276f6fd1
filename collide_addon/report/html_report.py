"""HTML view of a clash report: one self-contained file, nothing fetched from a network.

Sections: a summary (file, frames, counts by status and by test), a timeline (for runs
over more than one frame: an SVG chart, one row per clash, bars over the frames where it
exists, a dot at its worst frame), a table sortable by any column (a few lines of inline
JavaScript), with an embedded PNG thumbnail per clash when given, and the groups:
objects by open clashes and spatial clusters of clash points.

A report may come partly from a baseline file someone else wrote, so nothing from it is
spliced in raw: every text is escaped with html.escape, every number is checked to be
one and formatted (`_integer`, `_decimal`; anything else raises TypeError). The
Content-Security-Policy loads nothing and runs only the one script and style sheet here,
by their sha256 hashes, so markup that slipped through still could not run.
"""

from __future__ import annotations

import base64
import hashlib
import html
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..clash.atomic import write_text_atomic
from ..clash.records import STATUSES
from .common import (
    NAME_BREAKS,
    PNG_SIGNATURE,
    checked_on,
    fix_text,
    format_intervals,
    one_line,
    pair_label,
    unit_label,
)

# The timeline stays readable and the file small for large runs: it shows the worst
# clashes (report order) up to this many rows and says how many it left out.
TIMELINE_MAX_ROWS = 200
# The timeline's row labels, right-aligned in this many pixels, are the two names cut
# to this many characters in all (each keeping its start and end): two IFC GlobalIds
# whole (47 characters) ran past the chart's left edge.
TIMELINE_LABEL_WIDTH = 260
TIMELINE_LABEL_CHARACTERS = 32
STATUS_COLORS = {
    "new": "#d62728",
    "active": "#ff7f0e",
    "reviewed": "#1f77b4",
    "approved": "#2ca02c",
    "resolved": "#7f7f7f",
}
# The class of a status cell; a status not listed is a KeyError, never a class name.
STATUS_CLASSES = {status: f"status status-{status}" for status in STATUS_COLORS}

_STYLE = """
body { font: 14px/1.4 system-ui, sans-serif; margin: 2em; color: #222; }
table { border-collapse: collapse; margin: 1em 0; }
th, td { border: 1px solid #ccc; padding: 3px 8px; text-align: left; vertical-align: middle; }
td.breaks-anywhere { overflow-wrap: anywhere; }
th.sortable { cursor: pointer; background: #f0f0f0; user-select: none; }
th.sortable::after { content: " \\2195"; color: #999; }
td.number { text-align: right; font-variant-numeric: tabular-nums; }
.status { font-weight: bold; }
{status_rules}
svg text { font: 11px system-ui, sans-serif; }
img.thumbnail { width: 160px; height: auto; display: block; }
img.thumbnail:hover { transform: scale(2); transform-origin: left center; position: relative;
  z-index: 1; box-shadow: 0 2px 12px rgba(0, 0, 0, 0.5); }
p.warning { color: #8a5a00; }
""".replace(
    # Colours by class, not style="" attributes: the policy allows the hashed style
    # sheet, and a hash cannot allow attributes.
    "{status_rules}",
    "\n".join(f".status-{status} {{ color: {color}; }}" for status, color in STATUS_COLORS.items()),
)

# Sorts the clash table by the clicked column: numbers by data-value, text otherwise;
# a second click reverses. It touches no names, so it needs no escaping of its own.
_SCRIPT = """
document.querySelectorAll("table.sortable").forEach(function (table) {
  table.querySelectorAll("th.sortable").forEach(function (header) {
    header.addEventListener("click", function () {
      var column = header.cellIndex;
      var body = table.tBodies[0];
      var rows = Array.prototype.slice.call(body.rows);
      var numeric = header.dataset.type === "number";
      var ascending = header.dataset.order !== "ascending";
      rows.sort(function (first, second) {
        var a = first.cells[column].dataset.value || first.cells[column].textContent;
        var b = second.cells[column].dataset.value || second.cells[column].textContent;
        var order = numeric ? parseFloat(a) - parseFloat(b) : a.localeCompare(b);
        return ascending ? order : -order;
      });
      table.querySelectorAll("th.sortable").forEach(function (other) {
        delete other.dataset.order;
      });
      header.dataset.order = ascending ? "ascending" : "descending";
      rows.forEach(function (row) { body.appendChild(row); });
    });
  });
});
"""


def _source_hash(source: str) -> str:
    """The CSP source expression that allows exactly this inline script or style text."""
    digest = hashlib.sha256(source.encode("utf-8")).digest()
    return "'sha256-" + base64.b64encode(digest).decode("ascii") + "'"


CONTENT_SECURITY_POLICY = (
    f"default-src 'none'; img-src data:; style-src {_source_hash(_STYLE)}; "
    f"script-src {_source_hash(_SCRIPT)}"
)


def _escape(value: Any) -> str:
    """`value` as HTML text, its control and bidi characters shown as escapes
    (`common.one_line`): names differing by a tab, a line break or a right-to-left
    override ("\\u202eexe.live" showed as "evil.exe") read apart, as they are."""
    return html.escape(one_line(str(value)), quote=True)


def _integer(value: Any) -> int:
    """`value` if it is an integer (not a bool); TypeError otherwise."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"expected an integer in the report, got {value!r:.80}")
    return value


def _decimal(value: Any, digits: int | None) -> str:
    """A number as text with `digits` decimals, or all of them (repr) for None;
    TypeError for anything else."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"expected a number in the report, got {value!r:.80}")
    return repr(float(value)) if digits is None else f"{value:.{digits}f}"


def _summary_html(report: Mapping[str, Any]) -> str:
    summary = report["summary"]
    start, end, step = (_integer(value) for value in report["frames"])
    facts = [
        ("File", report.get("file") or "(unsaved)"),
        ("Blender", report.get("blender") or "(unknown)"),
        ("Frames", f"{start}-{end}" + (f", every {step}" if step != 1 else "")),
        ("Open clashes", _integer(summary["open"])),
        ("Resolved", _integer(summary["resolved"])),
    ]
    rows = "".join(
        f"<tr><th>{_escape(label)}</th><td>{_escape(value)}</td></tr>" for label, value in facts
    )
    status_cells = "".join(
        f'<td class="{STATUS_CLASSES[status]}">{_escape(status)}: '
        f"{_integer(summary['by_status'].get(status, 0))}</td>"
        for status in STATUSES
    )
    tests = {test["name"]: test for test in report["tests"]}
    test_rows = "".join(
        f"<tr><td>{_escape(name)}</td>"
        f"<td>{_escape(tests.get(name, {}).get('type', ''))}</td>"
        f"<td>{_escape(tests.get(name, {}).get('geometry', ''))}</td>"
        f'<td class="number">{_integer(count)}</td></tr>'
        for name, count in summary["by_test"].items()
    )
    warnings = "".join(
        f'<p class="warning">{_escape(warning)}</p>' for warning in report.get("warnings", [])
    )
    return (
        f'<section id="summary"><h2>Summary</h2><table>{rows}</table>'
        f"<table><tr>{status_cells}</tr></table>"
        "<table><thead><tr><th>Test</th><th>Type</th><th>Geometry</th><th>Open clashes</th>"
        f"</tr></thead><tbody>{test_rows}</tbody></table>{warnings}</section>"
    )


def _groups_html(report: Mapping[str, Any]) -> str:
    """Objects by number of open clashes, and the spatial clusters of clash points."""
    groups = report.get("groups")
    if not groups:
        return ""
    object_rows = "".join(
        f'<tr><td>{_escape(name)}</td><td class="number">{len(ids)}</td></tr>'
        for name, ids in sorted(groups["by_object"].items(), key=lambda item: -len(item[1]))
    )
    cluster_rows = "".join(
        f'<tr><td class="number">{number}</td>'
        f"<td>{_escape(', '.join(_decimal(value, 3) for value in cluster['center']))}</td>"
        f'<td class="number">{len(cluster["clashes"])}</td>'
        f"<td>{_escape(' '.join(cluster['clashes']))}</td></tr>"
        for number, cluster in enumerate(groups["clusters"], start=1)
    )
    return (
        '<section id="groups"><h2>Groups</h2>'
        "<table><thead><tr><th>Object</th><th>Open clashes</th></tr></thead>"
        f"<tbody>{object_rows}</tbody></table>"
        f"<p>Clusters of clash points closer than {_decimal(groups['cluster_radius'], None)}"
        f" {_escape(unit_label(report.get('unit_scale', 1.0)))}:</p>"
        "<table><thead><tr><th>Cluster</th><th>Centre</th><th>Clashes</th>"
        f"<th>Ids</th></tr></thead><tbody>{cluster_rows}</tbody></table></section>"
    )


def _worst_mark(clash: Mapping[str, Any], x_of, middle: float, color: str) -> str:
    """A row's mark and the end of its group: a dot at the worst frame, or, for a clash
    found between samples, a diamond at its time of first contact (toi)."""
    if "toi" not in clash:
        return (
            f'<circle cx="{_decimal(x_of(_integer(clash["worst_frame"])), 1)}" '
            f'cy="{_decimal(middle, 1)}" r="3" fill="{color}"/></g>'
        )
    x, y = x_of(float(clash["toi"])), middle
    corners = " ".join(
        f"{_decimal(x + dx, 1)},{_decimal(y + dy, 1)}"
        for dx, dy in ((0, -4), (4, 0), (0, 4), (-4, 0))
    )
    return (
        f'<polygon class="toi" points="{corners}" fill="{color}" stroke="#000">'
        f"<title>first contact at frame {_decimal(clash['toi'], 4)}</title></polygon></g>"
    )


def frame_ticks(start: int, end: int, most: int = 10) -> list[int]:
    """The timeline's labelled frames from `start` to `end`: the multiples of a round step
    (1, 2 or 5 times a power of ten) giving at most `most` + 1 of them, evenly spaced
    (rounding a tenth of the range gave 1, 3, 5, 7, 9, 11, 12, 14 for frames 1-20), and
    `start` first where it is no multiple and more than half a step from the first."""
    span = max(end - start, 1)
    power = 1
    while True:
        step = next((power * factor for factor in (1, 2, 5) if span / (power * factor) <= most), 0)
        if step:
            break
        power *= 10
    first = -(-start // step) * step
    ticks = list(range(first, end + 1, step))
    if start not in ticks and (not ticks or ticks[0] - start > step / 2):
        ticks.insert(0, start)
    return ticks


def timeline_svg(report: Mapping[str, Any], width: int = 900, row_height: int = 14) -> str:
    """SVG chart of clashes over the scanned frames: a row per clash (at most
    TIMELINE_MAX_ROWS), a bar per frame interval, a dot at the worst frame (a diamond at
    the time of first contact for a clash found between samples), coloured by status;
    hovering shows the pair (SVG <title>)."""
    clashes = report["clashes"][:TIMELINE_MAX_ROWS]
    start, end, _ = (_integer(value) for value in report["frames"])
    width, row_height = _integer(width), _integer(row_height)
    label_width, margin = TIMELINE_LABEL_WIDTH, 10
    plot_width = width - label_width - 2 * margin
    # Frame f covers [f - 0.5, f + 0.5], so bars of the first and last frames fit.
    frame_count = max(end - start + 1, 1)

    def x_of(frame: float) -> float:
        return label_width + margin + (frame - start + 0.5) / frame_count * plot_width

    height = (len(clashes) + 2) * row_height + 2 * margin
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" role="img" aria-label="clashes over frames">'
    ]
    axis_y = margin + row_height
    for frame in frame_ticks(start, end):
        x = _decimal(x_of(frame), 1)
        parts.append(
            f'<line x1="{x}" y1="{axis_y}" x2="{x}" y2="{height - margin}" '
            f'stroke="#eee"/><text x="{x}" y="{axis_y - 3}" text-anchor="middle">'
            f"{frame}</text>"
        )
    for row, clash in enumerate(clashes):
        top = axis_y + row * row_height + 2
        color = STATUS_COLORS[clash["status"]]
        label = f"{clash['a']} / {clash['b']}"
        title = f"<title>{_escape(label)} ({_escape(clash['test'])})</title>"
        shown = pair_label(clash["a"], clash["b"], " / ", len, TIMELINE_LABEL_CHARACTERS)
        parts.append(
            f'<g><text x="{label_width}" y="{top + row_height - 5}" text-anchor="end">'
            f"{_escape(shown)}</text>{title}"
        )
        for first, last in clash["frames"]:
            # A one-frame interval still gets a visible bar one frame wide.
            left, right = x_of(_integer(first) - 0.5), x_of(_integer(last) + 0.5)
            bar_width = max(right - left, 2)
            parts.append(
                f'<rect x="{_decimal(left, 1)}" y="{top}" width="{_decimal(bar_width, 1)}" '
                f'height="{row_height - 4}" fill="{color}" opacity="0.6"/>'
            )
        parts.append(_worst_mark(clash, x_of, top + (row_height - 4) / 2, color))
    parts.append("</svg>")
    left_out = len(report["clashes"]) - len(clashes)
    note = f"<p>{left_out} more clashes are in the table below.</p>" if left_out > 0 else ""
    return "".join(parts) + note


def _timeline_html(report: Mapping[str, Any]) -> str:
    """The timeline section; none for a report of one frame (a static model), where
    every row would be the same full-width bar."""
    start, end, _ = (_integer(value) for value in report["frames"])
    if start == end:
        return ""
    return f'<section id="timeline"><h2>Timeline</h2>{timeline_svg(report)}</section>'


def _thumbnail_html(clash_id: str, png: bytes | None, label: str) -> str:
    if png is None:
        return ""
    if not png.startswith(PNG_SIGNATURE):
        raise ValueError(f"thumbnail for clash {clash_id} is not a PNG")
    data = base64.b64encode(png).decode("ascii")
    return f'<img class="thumbnail" alt="{_escape(label)}" src="data:image/png;base64,{data}">'


def _worst_frame_cell(clash: Mapping[str, Any]) -> str:
    """The worst frame; for a clash found between samples, its time of first contact."""
    worst_frame = _integer(clash["worst_frame"])
    if "toi" not in clash:
        return f'<td class="number" data-value="{worst_frame}">{worst_frame}</td>'
    toi = _decimal(clash["toi"], None)
    return (
        f'<td class="number" data-value="{toi}">{worst_frame} '
        f'<span class="toi">(first contact {_decimal(clash["toi"], 4)})</span></td>'
    )


# An object's name in the clash table longer than _LONGEST_RUN characters may break after
# these characters, where it must to fit a laptop's window, and one with a run longer
# than that between them and spaces (an IFC GlobalId: 22) anywhere; a shorter name stays
# whole ("Column.B", not "Column." above "B").
_NAME_BREAKS = re.compile(f"([{re.escape(NAME_BREAKS)}])")
_NAME_RUNS = re.compile(f"[^\\s{re.escape(NAME_BREAKS)}]+")
_LONGEST_RUN = 16


def _name_cell(name: str) -> str:
    """The clash table's cell of an object's name: a long one breakable after its
    punctuation (`<wbr>`, added to the escaped text: no escape holds those characters),
    anywhere for a long run of letters and digits."""
    if len(name) <= _LONGEST_RUN:
        return f"<td>{_escape(name)}</td>"
    breakable = _NAME_BREAKS.sub(r"\1<wbr>", _escape(name))
    longest = max((len(run) for run in _NAME_RUNS.findall(name)), default=0)
    if longest > _LONGEST_RUN:
        return f'<td class="breaks-anywhere">{breakable}</td>'
    return f"<td>{breakable}</td>"


def _table_html(report: Mapping[str, Any], thumbnails: Mapping[str, bytes]) -> str:
    headers = [
        ("Thumbnail", None),
        ("Status", "text"),
        ("Test", "text"),
        ("Type", "text"),
        ("A", "text"),
        ("B", "text"),
        ("Checked on", "text"),
        (f"Distance ({unit_label(report.get('unit_scale', 1.0))})", "number"),
        ("Worst frame", "number"),
        ("Frames", "number"),
        ("Point", None),
        ("Id", "text"),
    ]
    # Reports run with --suggest-fixes show each clash's suggested move.
    with_fixes = any("fix" in clash for clash in report["clashes"])
    if with_fixes:
        headers.append(("Fix", None))
    head = "".join(
        f'<th class="sortable" data-type="{_escape(kind)}">{_escape(title)}</th>'
        if kind
        else f"<th>{_escape(title)}</th>"
        for title, kind in headers
    )
    rows = []
    for clash in report["clashes"]:
        label = f"{clash['a']} / {clash['b']}"
        point = ", ".join(_decimal(value, 3) for value in clash["point"])
        intervals = [[_integer(first), _integer(last)] for first, last in clash["frames"]]
        cells = [
            f"<td>{_thumbnail_html(clash['id'], thumbnails.get(clash['id']), label)}</td>",
            f'<td class="{STATUS_CLASSES[clash["status"]]}">{_escape(clash["status"])}</td>',
            f"<td>{_escape(clash['test'])}</td>",
            f"<td>{_escape(clash['type'])}</td>",
            _name_cell(clash["a"]),
            _name_cell(clash["b"]),
            f"<td>{_escape(checked_on(clash))}</td>",
            # The full precision to sort by, four decimals to read.
            f'<td class="number" data-value="{_decimal(clash["distance"], None)}">'
            f"{_decimal(clash['distance'], 4)}</td>",
            _worst_frame_cell(clash),
            f'<td data-value="{intervals[0][0]}">{_escape(format_intervals(intervals))}</td>',
            f"<td>{_escape(point)}</td>",
            f"<td><code>{_escape(clash['id'])}</code></td>",
        ]
        if with_fixes:
            cells.append(f"<td>{_escape(fix_text(clash))}</td>")
        rows.append(f'<tr id="clash-{_escape(clash["id"])}">{"".join(cells)}</tr>')
    return (
        f'<section id="clashes"><h2>Clashes</h2><table class="sortable"><thead><tr>{head}'
        f"</tr></thead><tbody>{''.join(rows)}</tbody></table></section>"
    )


def html_text(report: Mapping[str, Any], thumbnails: Mapping[str, bytes] | None = None) -> str:
    """The HTML file text of a report.

    thumbnails: clash id -> PNG bytes, embedded as data: URLs; clashes without one get
    an empty cell. Raises ValueError if given bytes are not a PNG.
    """
    title = "Clash report" + (f": {Path(report['file']).name}" if report.get("file") else "")
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{_escape(CONTENT_SECURITY_POLICY)}">'
        f"<title>{_escape(title)}</title><style>{_STYLE}</style></head><body>"
        f"<h1>{_escape(title)}</h1>"
        f"{_summary_html(report)}"
        f"{_timeline_html(report)}"
        f"{_table_html(report, thumbnails or {})}"
        f"{_groups_html(report)}"
        f"<script>{_SCRIPT}</script></body></html>\n"
    )


def write_html_report(
    report: Mapping[str, Any], path: str | Path, thumbnails: Mapping[str, bytes] | None = None
) -> None:
    """Write `html_text(report, thumbnails)` to `path` atomically."""
    write_text_atomic(path, html_text(report, thumbnails))
