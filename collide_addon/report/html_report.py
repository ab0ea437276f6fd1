"""HTML view of a clash report: one self-contained file, nothing fetched from a network.

Sections: a summary (file, frames, counts by status and by test), a timeline (an SVG
chart: one row per clash, bars over the frames where it exists, a dot at its worst
frame), a table sortable by any column (a few lines of inline JavaScript), with an
embedded PNG thumbnail per clash when given, and the groups: objects by open clashes and
spatial clusters of clash points. Every name from the scene or the tests is
escaped with html.escape; a Content-Security-Policy forbids loading anything.
"""

from __future__ import annotations

import base64
import html
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..clash.atomic import write_text_atomic
from ..clash.records import STATUSES
from .common import PNG_SIGNATURE, format_intervals

# The timeline stays readable and the file small for large runs: it shows the worst
# clashes (report order) up to this many rows and says how many it left out.
TIMELINE_MAX_ROWS = 200
STATUS_COLORS = {
    "new": "#d62728",
    "active": "#ff7f0e",
    "reviewed": "#1f77b4",
    "approved": "#2ca02c",
    "resolved": "#7f7f7f",
}

_STYLE = """
body { font: 14px/1.4 system-ui, sans-serif; margin: 2em; color: #222; }
table { border-collapse: collapse; margin: 1em 0; }
th, td { border: 1px solid #ccc; padding: 3px 8px; text-align: left; vertical-align: middle; }
th.sortable { cursor: pointer; background: #f0f0f0; user-select: none; }
th.sortable::after { content: " \\2195"; color: #999; }
td.number { text-align: right; font-variant-numeric: tabular-nums; }
.status { font-weight: bold; }
svg text { font: 11px system-ui, sans-serif; }
img.thumbnail { width: 160px; height: auto; display: block; }
"""

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


def _escape(value: Any) -> str:
    return html.escape(str(value), quote=True)


def _summary_html(report: Mapping[str, Any]) -> str:
    summary = report["summary"]
    start, end, step = report["frames"]
    facts = [
        ("File", report.get("file") or "(unsaved)"),
        ("Blender", report.get("blender") or "(unknown)"),
        ("Frames", f"{start}-{end}" + (f", every {step}" if step != 1 else "")),
        ("Open clashes", summary["open"]),
        ("Resolved", summary["resolved"]),
    ]
    rows = "".join(
        f"<tr><th>{_escape(label)}</th><td>{_escape(value)}</td></tr>" for label, value in facts
    )
    status_cells = "".join(
        f'<td class="status" style="color:{STATUS_COLORS[status]}">{_escape(status)}: '
        f"{summary['by_status'].get(status, 0)}</td>"
        for status in STATUSES
    )
    types = {test["name"]: test["type"] for test in report["tests"]}
    test_rows = "".join(
        f"<tr><td>{_escape(name)}</td><td>{_escape(types.get(name, ''))}</td>"
        f'<td class="number">{count}</td></tr>'
        for name, count in summary["by_test"].items()
    )
    return (
        f'<section id="summary"><h2>Summary</h2><table>{rows}</table>'
        f"<table><tr>{status_cells}</tr></table>"
        "<table><thead><tr><th>Test</th><th>Type</th><th>Open clashes</th></tr></thead>"
        f"<tbody>{test_rows}</tbody></table></section>"
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
        f"<td>{_escape(', '.join(f'{value:.3f}' for value in cluster['center']))}</td>"
        f'<td class="number">{len(cluster["clashes"])}</td>'
        f"<td>{_escape(' '.join(cluster['clashes']))}</td></tr>"
        for number, cluster in enumerate(groups["clusters"], start=1)
    )
    return (
        '<section id="groups"><h2>Groups</h2>'
        "<table><thead><tr><th>Object</th><th>Open clashes</th></tr></thead>"
        f"<tbody>{object_rows}</tbody></table>"
        f"<p>Clusters of clash points closer than {_escape(groups['cluster_radius'])}:</p>"
        "<table><thead><tr><th>Cluster</th><th>Centre</th><th>Clashes</th>"
        f"<th>Ids</th></tr></thead><tbody>{cluster_rows}</tbody></table></section>"
    )


def timeline_svg(report: Mapping[str, Any], width: int = 900, row_height: int = 14) -> str:
    """SVG chart of clashes over the scanned frames: a row per clash (at most
    TIMELINE_MAX_ROWS), a bar per frame interval, a dot at the worst frame, coloured by
    status; hovering shows the pair (SVG <title>)."""
    clashes = report["clashes"][:TIMELINE_MAX_ROWS]
    start, end, _ = report["frames"]
    label_width, margin = 220, 10
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
    tick_count = min(10, frame_count - 1)
    for tick in range(tick_count + 1):
        frame = start + round(tick * (end - start) / max(tick_count, 1))
        x = x_of(frame)
        parts.append(
            f'<line x1="{x:.1f}" y1="{axis_y}" x2="{x:.1f}" y2="{height - margin}" '
            f'stroke="#eee"/><text x="{x:.1f}" y="{axis_y - 3}" text-anchor="middle">'
            f"{frame}</text>"
        )
    for row, clash in enumerate(clashes):
        top = axis_y + row * row_height + 2
        color = STATUS_COLORS[clash["status"]]
        label = f"{clash['a']} / {clash['b']}"
        title = f"<title>{_escape(label)} ({_escape(clash['test'])})</title>"
        shown = label if len(label) <= 34 else label[:33] + "\u2026"
        parts.append(
            f'<g><text x="{label_width}" y="{top + row_height - 5}" text-anchor="end">'
            f"{_escape(shown)}</text>{title}"
        )
        for first, last in clash["frames"]:
            # A one-frame interval still gets a visible bar one frame wide.
            left, right = x_of(first - 0.5), x_of(last + 0.5)
            parts.append(
                f'<rect x="{left:.1f}" y="{top}" width="{max(right - left, 2):.1f}" '
                f'height="{row_height - 4}" fill="{color}" opacity="0.6"/>'
            )
        parts.append(
            f'<circle cx="{x_of(clash["worst_frame"]):.1f}" cy="{top + (row_height - 4) / 2}" '
            f'r="3" fill="{color}"/></g>'
        )
    parts.append("</svg>")
    left_out = len(report["clashes"]) - len(clashes)
    note = f"<p>{left_out} more clashes are in the table below.</p>" if left_out > 0 else ""
    return "".join(parts) + note


def _thumbnail_html(clash_id: str, png: bytes | None, label: str) -> str:
    if png is None:
        return ""
    if not png.startswith(PNG_SIGNATURE):
        raise ValueError(f"thumbnail for clash {clash_id} is not a PNG")
    data = base64.b64encode(png).decode("ascii")
    return f'<img class="thumbnail" alt="{_escape(label)}" src="data:image/png;base64,{data}">'


def _table_html(report: Mapping[str, Any], thumbnails: Mapping[str, bytes]) -> str:
    headers = [
        ("Thumbnail", None),
        ("Status", "text"),
        ("Test", "text"),
        ("Type", "text"),
        ("A", "text"),
        ("B", "text"),
        ("Kinds", "text"),
        ("Distance (m)", "number"),
        ("Worst frame", "number"),
        ("Frames", "number"),
        ("Point", None),
        ("Id", "text"),
    ]
    head = "".join(
        f'<th class="sortable" data-type="{kind}">{_escape(title)}</th>'
        if kind
        else f"<th>{_escape(title)}</th>"
        for title, kind in headers
    )
    rows = []
    for clash in report["clashes"]:
        label = f"{clash['a']} / {clash['b']}"
        point = ", ".join(f"{value:.3f}" for value in clash["point"])
        first_frame = clash["frames"][0][0]
        cells = [
            f"<td>{_thumbnail_html(clash['id'], thumbnails.get(clash['id']), label)}</td>",
            f'<td class="status" style="color:{STATUS_COLORS[clash["status"]]}">'
            f"{_escape(clash['status'])}</td>",
            f"<td>{_escape(clash['test'])}</td>",
            f"<td>{_escape(clash['type'])}</td>",
            f"<td>{_escape(clash['a'])}</td>",
            f"<td>{_escape(clash['b'])}</td>",
            f"<td>{_escape(' / '.join(clash['kinds']))}</td>",
            f'<td class="number" data-value="{clash["distance"]!r}">{clash["distance"]:.4f}</td>',
            f'<td class="number" data-value="{clash["worst_frame"]}">{clash["worst_frame"]}</td>',
            f'<td data-value="{first_frame}">{_escape(format_intervals(clash["frames"]))}</td>',
            f"<td>{_escape(point)}</td>",
            f"<td><code>{_escape(clash['id'])}</code></td>",
        ]
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
    policy = (
        "default-src 'none'; img-src data:; style-src 'unsafe-inline'; script-src 'unsafe-inline'"
    )
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{policy}">'
        f"<title>{_escape(title)}</title><style>{_STYLE}</style></head><body>"
        f"<h1>{_escape(title)}</h1>"
        f"{_summary_html(report)}"
        f'<section id="timeline"><h2>Timeline</h2>{timeline_svg(report)}</section>'
        f"{_table_html(report, thumbnails or {})}"
        f"{_groups_html(report)}"
        f"<script>{_SCRIPT}</script></body></html>\n"
    )


def write_html_report(
    report: Mapping[str, Any], path: str | Path, thumbnails: Mapping[str, bytes] | None = None
) -> None:
    """Write `html_text(report, thumbnails)` to `path` atomically."""
    write_text_atomic(path, html_text(report, thumbnails))
