"""The HTML report: escaping, sections, thumbnails, the timeline."""

from __future__ import annotations

import base64
import re
import xml.etree.ElementTree as ElementTree

import pytest

from collide_addon.report.html_report import (
    TIMELINE_MAX_ROWS,
    html_text,
    timeline_svg,
    write_html_report,
)
from tests.report.sample_report import EVIL, PNG, QUOTED


def test_html_escapes_every_name(report, tmp_path):
    path = tmp_path / "r.html"
    write_html_report(report, path, thumbnails={report["clashes"][0]["id"]: PNG})
    text = path.read_text(encoding="utf-8")
    assert EVIL not in text
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in text
    assert "a&amp;b &quot;q&quot; &#x27;s&#x27;" in text
    assert "scene &lt;1&gt;.blend" in text
    # Only the report's own script element, no injected one.
    assert len(re.findall(r"<script\b", text)) == 1
    assert "http://" not in text.replace('xmlns="http://www.w3.org/2000/svg"', "")
    assert "https://" not in text


def test_html_sections_and_thumbnails(report):
    clash_id = report["clashes"][0]["id"]
    text = html_text(report, thumbnails={clash_id: PNG})
    for section in (
        'id="summary"',
        'id="timeline"',
        'id="clashes"',
        'id="groups"',
        "<svg",
        "table class",
    ):
        assert section in text
    assert "data:image/png;base64," + base64.b64encode(PNG).decode() in text
    assert text.count("<img") == 1
    assert text.count('<tr id="clash-') == len(report["clashes"])
    assert html_text(report).count("<img") == 0
    with pytest.raises(ValueError, match="not a PNG"):
        html_text(report, thumbnails={clash_id: b"GIF89a"})


def test_timeline_svg_is_well_formed_and_capped(report):
    svg = timeline_svg(report)
    root = ElementTree.fromstring(svg)
    namespace = "{http://www.w3.org/2000/svg}"
    bars = root.findall(f".//{namespace}rect")
    assert len(bars) == sum(len(clash["frames"]) for clash in report["clashes"])
    titles = [title.text for title in root.iter(f"{namespace}title")]
    assert f"{EVIL} / {QUOTED} (hard)" in titles
    many = dict(report, clashes=report["clashes"] * (TIMELINE_MAX_ROWS + 5))
    svg_many = timeline_svg(many)
    shown = svg_many[: svg_many.index("</svg>") + 6]
    assert len(ElementTree.fromstring(shown).findall(f".//{namespace}circle")) == TIMELINE_MAX_ROWS
    assert f"{len(many['clashes']) - TIMELINE_MAX_ROWS} more clashes" in svg_many
