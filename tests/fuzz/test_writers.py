"""Fuzzing the report writers with hostile names: the JSON reads back equal and valid,
the HTML carries no markup from a name, every CSV text cell is guarded, the BCF is valid
against the BCF 2.1 XSDs and gives the names back."""

from __future__ import annotations

import copy
import csv
import html.parser
import io
import json
import xml.etree.ElementTree as ElementTree
import zipfile

import jsonschema
from hypothesis import given
from hypothesis import strategies as st

from collide_addon.report.bcf_report import bcf_bytes, topic_guid
from collide_addon.report.csv_report import csv_text
from collide_addon.report.html_report import html_text
from collide_addon.report.json_report import SCHEMA_PATH, report_to_json
from tests.data import bcf_2_1_schemas
from tests.fuzz.budget import count, for_budget, fuzz_settings
from tests.report.sample_report import make_report

SCHEMA = json.loads(SCHEMA_PATH.read_text())
SAMPLE = make_report()
BCF_SCHEMAS = bcf_2_1_schemas()
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
names = st.one_of(
    st.text(min_size=1),
    st.text(alphabet="<>&\"'=+-@\t\r\n\x00\x0b\x7f/[]{} ", min_size=1),
    st.sampled_from(["<script>alert(1)</script>", "=HYPERLINK(1)", "a\rb", "\u2028"]),
)
XML_ILLEGAL = {chr(code) for code in range(32)} - {"\t", "\n", "\r"}


def hostile_report(a: str, b: str, test: str, file: str) -> dict:
    report = copy.deepcopy(SAMPLE)
    clash = report["clashes"][0]
    clash.update(a=a, b=b, test=test)
    report["file"] = file
    return report


def xml_text(name: str) -> str:
    """What an XML parser gives back for `name` after the BCF writer's replacements."""
    return "".join(
        "\ufffd" if char in XML_ILLEGAL or 0xD800 <= ord(char) < 0xE000 else char for char in name
    )


class TagCollector(html.parser.HTMLParser):
    """The start tags of a page, but for the line-break opportunities (`<wbr>`, without
    attributes) the writer puts after the punctuation of a long name's escaped text."""

    def __init__(self):
        super().__init__()
        self.tags = []

    def handle_starttag(self, tag, attrs):
        if tag == "wbr":
            assert attrs == []
            return
        self.tags.append(tag)


@for_budget
@fuzz_settings
@given(names, names, names, names)
def test_writers_keep_hostile_names_inert(a, b, test, file):
    count("report writers")
    report = hostile_report(a, b, test, file)
    reference = hostile_report("x", "y", "t", "f")
    # JSON: schema-valid and read back equal. (Blender names are valid UTF-8, so the
    # names have no lone surrogates; a file name's are replaced by build_report.)
    text = report_to_json(report)
    text.encode("utf-8")
    jsonschema.validate(json.loads(text), SCHEMA)
    assert json.loads(text)["clashes"][0]["a"] == a
    # HTML: the same tags as with harmless names.
    tags, reference_tags = TagCollector(), TagCollector()
    tags.feed(html_text(report))
    reference_tags.feed(html_text(reference))
    assert tags.tags == reference_tags.tags
    # CSV: every text cell that could start a formula is guarded.
    rows = list(csv.reader(io.StringIO(csv_text(report))))
    for row in rows[1:]:
        for cell in row:
            try:
                float(cell)
            except ValueError:
                assert not cell.startswith(FORMULA_STARTS), cell
    # BCF: valid, and the names come back as written.
    with zipfile.ZipFile(io.BytesIO(bcf_bytes(report))) as archive:
        folder = topic_guid(report["clashes"][0]["id"])
        markup = archive.read(f"{folder}/markup.bcf")
        viewpoint = archive.read(f"{folder}/viewpoint.bcfv")
    BCF_SCHEMAS["markup"].validate(io.BytesIO(markup))
    BCF_SCHEMAS["visinfo"].validate(io.BytesIO(viewpoint))
    tools = [element.text for element in ElementTree.fromstring(viewpoint).iter("AuthoringToolId")]
    assert tools[:2] == [xml_text(a), xml_text(b)]
    labels = ElementTree.fromstring(markup).find("Topic").findall("Labels")
    assert labels[0].text == xml_text(test)
