"""The HTML report: escaping, sections, thumbnails, the timeline."""

from __future__ import annotations

import base64
import copy
import hashlib
import itertools
import re
import xml.etree.ElementTree as ElementTree
from html.parser import HTMLParser

import pytest

from collide_addon.report.html_report import (
    TIMELINE_LABEL_CHARACTERS,
    TIMELINE_MAX_ROWS,
    frame_ticks,
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


def test_names_that_differ_by_control_or_bidi_characters_read_apart(report):
    """ "=1+1", "=1+1\\t" and "=1+1\\r" all showed as =1+1, and a right-to-left override
    before "exe.live" showed "evil.exe"."""
    named = copy.deepcopy(report)
    first, second = named["clashes"][:2]
    first["a"], first["b"] = "Wall\t", "Wall\r\n"
    second["a"] = "\u202eexe.live"
    text = html_text(named)
    row = re.search(r'<tr id="clash-{}">.*?</tr>'.format(first["id"]), text).group(0)
    assert "<td>Wall\\t</td>" in row and "<td>Wall\\r\\n</td>" in row
    assert "\\u202eexe.live" in text and "\u202e" not in text


def test_names_break_at_their_punctuation_and_long_runs_anywhere(report):
    # Breaking every name anywhere to fit a laptop's window split "Pipe.Through.Wall" as
    # "Pipe.Throug h.Wall"; a GlobalId has nowhere else to break.
    named = copy.deepcopy(report)
    first = named["clashes"][0]
    first["a"], first["b"] = "Pipe.Through.Wall", "2RGlQk4xH47RHK93zcTzUL"
    second = named["clashes"][1]
    second["a"] = "Column.B"
    text = html_text(named)
    row = re.search(r'<tr id="clash-{}">.*?</tr>'.format(first["id"]), text).group(0)
    assert "<td>Pipe.<wbr>Through.<wbr>Wall</td>" in row
    # A name of 16 characters or fewer stays whole.
    assert "<td>Column.B</td>" in text
    assert '<td class="breaks-anywhere">2RGlQk4xH47RHK93zcTzUL</td>' in row
    # The clash id, 16 characters, stays whole.
    assert f"<td><code>{first['id']}</code></td>" in row
    # Break opportunities only, in the escaped text: a name reads as it did ("<script>
    # alert(1)<" is a run of 17).
    assert (
        '<td class="breaks-anywhere">&lt;script&gt;alert(1)&lt;/<wbr>script&gt;</td>'
        in html_text(report)
    )


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


def test_timeline_labels_keep_both_long_names_and_one_frame_has_none(report):
    # Two IFC GlobalIds whole ran past the chart's left edge; each is cut in its middle.
    first, second = "2RGlQk4xH47RHK93czTzUL", "38a9vdh9bF5Qg28GWyHhlr"
    clash = dict(report["clashes"][0], a=first, b=second)
    svg = timeline_svg(dict(report, clashes=[clash]))
    namespace = "{http://www.w3.org/2000/svg}"
    labels = [
        text.text
        for text in ElementTree.fromstring(svg).iter(f"{namespace}text")
        if text.text and " / " in text.text
    ]
    assert len(labels) == 1 and len(labels[0]) <= TIMELINE_LABEL_CHARACTERS
    shown_a, shown_b = labels[0].split(" / ")
    assert shown_a[:4] == first[:4] and shown_a[-4:] == first[-4:]
    assert shown_b[:4] == second[:4] and shown_b[-4:] == second[-4:]
    # A report of one frame (a static model): every row would be one full-width bar.
    assert 'id="timeline"' in html_text(report)
    one_frame = dict(report, frames=[3, 3, 1])
    assert 'id="timeline"' not in html_text(one_frame)


class _Elements(HTMLParser):
    """Every start tag's attributes, and the text of every script and style element."""

    def __init__(self) -> None:
        super().__init__()
        self.attributes: list[tuple[str, str, str | None]] = []
        self.inline: dict[str, list[str]] = {"script": [], "style": []}
        self._open: str | None = None

    def handle_starttag(self, tag, attrs):
        self.attributes += [(tag, name, value) for name, value in attrs]
        self._open = tag if tag in self.inline else None
        if self._open:
            self.inline[tag].append("")

    def handle_endtag(self, tag):
        self._open = None

    def handle_data(self, data):
        if self._open:
            self.inline[self._open][-1] += data


def csp_hash(text: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode()).digest()).decode() + "'"


def test_csp_allows_only_the_hashed_script_and_style(report):
    elements = _Elements()
    elements.feed(html_text(report, thumbnails={report["clashes"][0]["id"]: PNG}))
    policies = [value for tag, name, value in elements.attributes if name == "content"]
    assert len(policies) == 1
    directives = dict(
        directive.strip().split(" ", 1) for directive in policies[0].split(";") if directive
    )
    [script], [style] = elements.inline["script"], elements.inline["style"]
    assert directives == {
        "default-src": "'none'",
        "img-src": "data:",
        "style-src": csp_hash(style),
        "script-src": csp_hash(script),
    }
    assert "unsafe" not in policies[0]
    # A hash allows elements, never attributes: no style="" or on...="" anywhere.
    names = {name for _, name, _ in elements.attributes}
    assert "style" not in names and not any(name.startswith("on") for name in names)


# A baseline's resolved clashes are copied whole into the report, after this run's: past
# the timeline's rows, only the table shows them. These are fields a crafted baseline set.
HOSTILE_FIELDS = [
    ("worst_frame", '2"><img src=x onerror=alert(1)>'),
    ("frames", [['"><script>alert(1)</script>', 3]]),
    ("frames", [[1, "<script>alert(1)</script>"]]),
    ("distance", '0" onmouseover="alert(1)'),
    ("point", [0, 0, "<img src=x onerror=alert(1)>"]),
    ("worst_frame", True),
]


@pytest.mark.parametrize(("field", "value"), HOSTILE_FIELDS)
def test_html_refuses_a_number_field_that_is_not_a_number(report, field, value):
    hostile = dict(report["clashes"][0], **{field: value}, status="resolved")
    past_timeline = dict(report, clashes=report["clashes"] * TIMELINE_MAX_ROWS + [hostile])
    with pytest.raises(TypeError, match=r"expected an? (integer|number) in the report"):
        html_text(past_timeline)
    with pytest.raises(TypeError):
        html_text(dict(report, clashes=[hostile]))


def test_timeline_ticks_are_round_frames_evenly_spaced():
    # A tenth of the range rounded gave 1, 3, 5, 7, 9, 11, 12, 14, 16, 18, 20.
    assert frame_ticks(1, 20) == [2, 4, 6, 8, 10, 12, 14, 16, 18, 20]
    assert frame_ticks(1, 250) == [1, 50, 100, 150, 200, 250]
    assert frame_ticks(-3, 6) == list(range(-3, 7))
    assert frame_ticks(7, 7) == [7]
    for start, end in ((1, 20), (0, 1000), (-40, 3), (10, 1048574)):
        ticks = frame_ticks(start, end)
        steps = {later - earlier for earlier, later in itertools.pairwise(ticks[1:])}
        assert len(steps) <= 1 and len(ticks) <= 12 and start <= ticks[0] and ticks[-1] <= end
