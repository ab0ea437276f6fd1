"""The BCF 2.1 report: validated against the official XSDs; stable guids; IfcGuids."""

from __future__ import annotations

import io
import re
import uuid
import xml.etree.ElementTree as ElementTree
import zipfile

import numpy as np
import pytest

from collide_addon.report.bcf_report import (
    IFC_BASE64,
    IFC_GUID_PATTERN,
    bcf_bytes,
    compress_guid,
    markup_xml,
    object_ifc_guid,
    topic_guid,
    version_xml,
    viewpoint_guid,
    viewpoint_xml,
    write_bcf_report,
)
from tests.data import bcf_2_1_schemas
from tests.report.sample_report import CREATED, EVIL, FORMULA, PNG, QUOTED

# The official BCF 2.1 XML schemas (markup.xsd, visinfo.xsd, version.xsd).


def expand_guid(ifc_guid: str) -> uuid.UUID:
    """Inverse of `compress_guid`. Raises ValueError for a string that is not one."""
    if not IFC_GUID_PATTERN.fullmatch(ifc_guid):
        raise ValueError(f"not an IFC guid: {ifc_guid!r}")
    number = 0
    for character in ifc_guid:
        number = number * 64 + IFC_BASE64.index(character)
    return uuid.UUID(int=number)


@pytest.fixture(scope="module")
def bcf_schemas():
    return bcf_2_1_schemas()


def test_bcf_validates_against_official_xsds(report, tmp_path, bcf_schemas):
    snapshot_id = report["clashes"][0]["id"]
    path = tmp_path / "r.bcf"
    write_bcf_report(report, path, snapshots={snapshot_id: PNG}, created=CREATED)
    with zipfile.ZipFile(path) as archive:
        names = archive.namelist()
        bcf_schemas["version"].validate(io.BytesIO(archive.read("bcf.version")))
        assert ElementTree.fromstring(archive.read("bcf.version")).get("VersionId") == "2.1"
        folders = {name.split("/")[0] for name in names if "/" in name}
        assert folders == {topic_guid(clash["id"]) for clash in report["clashes"]}
        for clash in report["clashes"]:
            folder = topic_guid(clash["id"])
            markup = archive.read(f"{folder}/markup.bcf")
            viewpoint = archive.read(f"{folder}/viewpoint.bcfv")
            bcf_schemas["markup"].validate(io.BytesIO(markup))
            bcf_schemas["visinfo"].validate(io.BytesIO(viewpoint))
            topic = ElementTree.fromstring(markup).find("Topic")
            assert topic.get("Guid") == folder
            assert topic.findtext("Title") == f"{clash['test']}: {clash['a']} / {clash['b']}"
            assert topic.findtext("CreationDate") == CREATED.isoformat()
            visual = ElementTree.fromstring(viewpoint)
            selected = visual.findall("Components/Selection/Component")
            assert [item.findtext("AuthoringToolId") for item in selected] == [
                clash["a"],
                clash["b"],
            ]
            expected_guids = [report["objects"][clash[key]]["ifc_guid"] for key in "ab"]
            assert [item.get("IfcGuid") for item in selected] == expected_guids
            colours = visual.findall("Components/Coloring/Color")
            assert [colour.get("Color") for colour in colours] == ["FF0000", "0000FF"]
            has_snapshot = f"{folder}/snapshot.png" in names
            assert has_snapshot == (clash["id"] == snapshot_id)
            assert (ElementTree.fromstring(markup).findtext("Viewpoints/Snapshot") is not None) == (
                has_snapshot
            )
        assert archive.read(f"{topic_guid(snapshot_id)}/snapshot.png") == PNG


def test_bcf_uses_ifc_guid_property_and_derived_guids(report):
    quoted_guid = report["objects"][QUOTED]["ifc_guid"]
    assert quoted_guid == "2O2Fr$t4X7Zf8NOew3FLOH"
    assert report["objects"][EVIL]["ifc_guid"] == object_ifc_guid(EVIL)
    # Without an objects map the guids are derived from names.
    bare = dict(report, objects={})
    with zipfile.ZipFile(io.BytesIO(bcf_bytes(bare, created=CREATED))) as archive:
        clash = next(c for c in report["clashes"] if c["b"] == QUOTED and c["test"] == "touch")
        viewpoint = archive.read(f"{topic_guid(clash['id'])}/viewpoint.bcfv")
    guids = [c.get("IfcGuid") for c in ElementTree.fromstring(viewpoint).iter("Component")]
    assert guids[:2] == [object_ifc_guid(FORMULA), object_ifc_guid(QUOTED)]


def test_bcf_rejects_non_png_snapshot(report):
    with pytest.raises(ValueError, match="not a PNG"):
        bcf_bytes(report, snapshots={report["clashes"][0]["id"]: b"JPEG"})


def test_bcf_parts_validate_alone(report, bcf_schemas):
    clash = dict(report["clashes"][0], a="bad\x01name")
    markup = markup_xml(clash, CREATED, None, has_snapshot=False)
    bcf_schemas["markup"].validate(io.BytesIO(markup))
    assert ElementTree.fromstring(markup).find("Header") is None
    viewpoint = viewpoint_xml(clash, object_ifc_guid("x"), object_ifc_guid("y"))
    bcf_schemas["visinfo"].validate(io.BytesIO(viewpoint))
    assert ElementTree.fromstring(viewpoint).get("Guid") == viewpoint_guid(clash["id"])
    bcf_schemas["version"].validate(io.BytesIO(version_xml()))


def test_compress_guid_known_values_and_round_trip():
    assert compress_guid(uuid.UUID(int=0)) == "0" * 22
    assert compress_guid(uuid.UUID(int=2**128 - 1)) == "3" + "$" * 21
    assert compress_guid(uuid.UUID(int=64)) == "0" * 20 + "10"
    for seed in range(20):
        value = uuid.UUID(int=int.from_bytes(np.random.default_rng(seed).bytes(16), "big"))
        assert expand_guid(compress_guid(value)) == value
    with pytest.raises(ValueError, match="not an IFC guid"):
        expand_guid("4" + "0" * 21)


def test_object_ifc_guid_rules():
    assert object_ifc_guid("Wall") == object_ifc_guid("Wall", {})
    assert object_ifc_guid("Wall") != object_ifc_guid("Wall.001")
    assert re.fullmatch(r"[0-3][0-9A-Za-z_$]{21}", object_ifc_guid("Wall"))
    valid = "1hV5$Wx0n8bAJl9TdA4aHc"
    assert object_ifc_guid("Wall", {"GlobalId": valid}) == valid
    assert object_ifc_guid("Wall", {"IfcGuid": valid, "GlobalId": "0" * 22}) == valid
    assert object_ifc_guid("Wall", {"IfcGuid": "too short"}) == object_ifc_guid("Wall")
    # An object named by its element's GlobalId (one object per element, as bench_ifc
    # converts a model) is that element: a name-derived guid matched nothing in the IFC.
    assert object_ifc_guid(valid) == valid
    assert object_ifc_guid(valid, {"GlobalId": "0" * 22}) == "0" * 22
    # Blender's suffix for a second object of that name makes it no guid.
    assert object_ifc_guid(valid + ".001") != valid


@pytest.mark.parametrize(
    "name", ["Pipe\rA", "Pipe\r\nB", "tab\tand\nnew line", "bell\x07\x00\ud800"]
)
def test_bcf_names_with_control_characters_round_trip(report, bcf_schemas, name):
    # A carriage return came back from an XML parser as a line feed, so the component
    # no longer matched its object; characters XML cannot carry become U+FFFD.
    clash = dict(report["clashes"][0], a=name, test=name)
    expected = "".join(
        "\ufffd"
        if (ord(char) < 32 and char not in "\t\n\r") or 0xD800 <= ord(char) < 0xE000
        else char
        for char in name
    )
    markup = markup_xml(clash, CREATED, "scene\r.blend", has_snapshot=False)
    bcf_schemas["markup"].validate(io.BytesIO(markup))
    topic = ElementTree.fromstring(markup).find("Topic")
    assert topic.find("Title").text.startswith(f"{expected}: {expected} / ")
    assert topic.find("Labels").text == expected
    viewpoint = viewpoint_xml(clash, object_ifc_guid("x"), object_ifc_guid("y"))
    bcf_schemas["visinfo"].validate(io.BytesIO(viewpoint))
    tools = ElementTree.fromstring(viewpoint).iter("AuthoringToolId")
    assert next(tools).text == expected
