"""BCF 2.1 export of a clash report (BIM Collaboration Format, buildingSMART).

The .bcf file is a zip:

    bcf.version                      <Version VersionId="2.1">
    <topic guid>/markup.bcf          one topic per clash: title, status, description
    <topic guid>/viewpoint.bcfv      a perspective camera on the clash point; the two
                                     objects as selected components, a red, b blue
    <topic guid>/snapshot.png        when a PNG is given for the clash

Guids are stable: a topic's guid is uuid5(COLLIDE_NAMESPACE, "topic:" + clash id) and
its viewpoint's uuid5(COLLIDE_NAMESPACE, "viewpoint:" + clash id), so re-exporting a
re-run updates the same topics in a BCF server or viewer.

Component IfcGuid (`object_ifc_guid`): the object's custom property "IfcGuid", else
"GlobalId" (as some IFC importers set it), when it is a valid 22-character IFC guid;
else the object's name when it is one (a model converted with one object per element,
named by its GlobalId); otherwise one derived from the name: uuid5(COLLIDE_NAMESPACE,
name) written in IFC's base-64 form (`compress_guid`), so the same name always gives the
same IfcGuid.
"""

from __future__ import annotations

import io
import re
import uuid
import xml.etree.ElementTree as ElementTree
import zipfile
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

from ..clash.atomic import write_bytes_atomic
from .common import PNG_SIGNATURE, checked_on, fix_text, format_intervals, unit_label
from .viewpoint import FIELD_OF_VIEW_DEGREES, camera_for_clash

# Fixed namespace for every uuid5 this module derives; changing it changes every guid.
COLLIDE_NAMESPACE = uuid.UUID("6c1f4a1e-2b8e-5d0c-9a57-3e0c0b1d2f4a")
IFC_BASE64 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz_$"
IFC_GUID_PATTERN = re.compile(r"[0-3][0-9A-Za-z_$]{21}")
IFC_GUID_PROPERTIES = ("IfcGuid", "GlobalId")
COLOR_A = "FF0000"
COLOR_B = "0000FF"
# Characters XML 1.0 cannot carry at all; object names could hold them.
_NOT_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def compress_guid(value: uuid.UUID) -> str:
    """The 22-character IFC form of a 128-bit guid: the number in base 64 with IFC's
    alphabet (0-9, A-Z, a-z, _, $), most significant digit first; the first digit is
    0-3 because 22 digits hold 132 bits."""
    number = value.int
    digits = []
    for _ in range(22):
        number, digit = divmod(number, 64)
        digits.append(IFC_BASE64[digit])
    return "".join(reversed(digits))


def object_ifc_guid(name: str, properties: Mapping[str, Any] | None = None) -> str:
    """The IfcGuid of an object for BCF components: its "IfcGuid" or "GlobalId" custom
    property when that is a valid IFC guid, else its name when that is one, else
    compress_guid(uuid5(namespace, name))."""
    for value in (*((properties or {}).get(key) for key in IFC_GUID_PROPERTIES), name):
        if isinstance(value, str) and IFC_GUID_PATTERN.fullmatch(value):
            return value
    return compress_guid(uuid.uuid5(COLLIDE_NAMESPACE, name))


def topic_guid(clash_id: str) -> str:
    """Stable BCF topic guid of a clash."""
    return str(uuid.uuid5(COLLIDE_NAMESPACE, "topic:" + clash_id))


def viewpoint_guid(clash_id: str) -> str:
    """Stable BCF viewpoint guid of a clash."""
    return str(uuid.uuid5(COLLIDE_NAMESPACE, "viewpoint:" + clash_id))


# A parser turns a literal carriage return into a line feed (XML end-of-line handling),
# so a name holding one would no longer match its object; only the reference &#13;
# survives. ElementTree writes text as it is, so `_text` marks each CR with NUL (which
# `_NOT_XML` has already removed from the input) and `_xml_bytes` writes the reference.
_CR_MARK = "\x00"


def _text(value: Any) -> str:
    return _NOT_XML.sub("\ufffd", str(value)).replace("\r", _CR_MARK)


def _sub(parent: ElementTree.Element, tag: str, text: Any = None, **attributes: str):
    element = ElementTree.SubElement(
        parent, tag, {key: _text(value) for key, value in attributes.items()}
    )
    if text is not None:
        element.text = _text(text)
    return element


def _xml_bytes(root: ElementTree.Element) -> bytes:
    ElementTree.indent(root)
    data = ElementTree.tostring(root, encoding="UTF-8", xml_declaration=True)
    return data.replace(_CR_MARK.encode(), b"&#13;")


def _vector(parent: ElementTree.Element, tag: str, values: np.ndarray) -> None:
    element = _sub(parent, tag)
    for axis, value in zip("XYZ", values.tolist(), strict=True):
        _sub(element, axis, repr(float(value)))


def _describe(clash: Mapping[str, Any], unit_scale: float = 1.0) -> str:
    distance, unit = clash["distance"], unit_label(unit_scale)
    depth = (
        f"penetration {-distance:.4g} {unit}" if distance < 0 else f"distance {distance:.4g} {unit}"
    )
    frames = format_intervals(clash["frames"], ", ")
    between = (
        f" Found between sampled frames: first contact at frame {float(clash['toi']):.4f}."
        if "toi" in clash
        else ""
    )
    fix = f" Suggested fix: {fix_text(clash)}." if "fix" in clash else ""
    return (
        f"{clash['type']} clash of test {clash['test']!r}: {clash['a']!r} and "
        f"{clash['b']!r}, checked on {checked_on(clash)}; {depth} at frame "
        f"{clash['worst_frame']}; frames {frames}.{between}{fix}"
    )


def markup_xml(
    clash: Mapping[str, Any],
    created: datetime,
    file: str | None,
    has_snapshot: bool,
    unit_scale: float = 1.0,
) -> bytes:
    """markup.bcf of one clash's topic (valid against BCF 2.1 markup.xsd); its lengths
    in scene units of `unit_scale` metres, named."""
    root = ElementTree.Element("Markup")
    if file:
        header = _sub(root, "Header")
        _sub(_sub(header, "File", isExternal="true"), "Filename", Path(file).name)
    topic = _sub(
        root,
        "Topic",
        Guid=topic_guid(clash["id"]),
        TopicType="Clash",
        TopicStatus=clash["status"].capitalize(),
    )
    _sub(topic, "Title", f"{clash['test']}: {clash['a']} / {clash['b']}")
    _sub(topic, "Labels", clash["test"])
    _sub(topic, "Labels", clash["type"])
    _sub(topic, "CreationDate", created.isoformat())
    _sub(topic, "CreationAuthor", "collide")
    _sub(topic, "Description", _describe(clash, unit_scale))
    viewpoints = _sub(root, "Viewpoints", Guid=viewpoint_guid(clash["id"]))
    _sub(viewpoints, "Viewpoint", "viewpoint.bcfv")
    if has_snapshot:
        _sub(viewpoints, "Snapshot", "snapshot.png")
    return _xml_bytes(root)


def viewpoint_xml(
    clash: Mapping[str, Any], guid_a: str, guid_b: str, unit_scale: float = 1.0
) -> bytes:
    """viewpoint.bcfv of one clash (valid against BCF 2.1 visinfo.xsd): both objects
    selected, a coloured red and b blue, a perspective camera on the clash point. BCF
    places cameras in metres: the report's scene units are scaled by `unit_scale`."""
    root = ElementTree.Element("VisualizationInfo", Guid=viewpoint_guid(clash["id"]))
    components = _sub(root, "Components")

    def component(parent: ElementTree.Element, name: str, ifc_guid: str) -> None:
        element = _sub(parent, "Component", IfcGuid=ifc_guid)
        _sub(element, "OriginatingSystem", "Blender")
        _sub(element, "AuthoringToolId", name)

    selection = _sub(components, "Selection")
    component(selection, clash["a"], guid_a)
    component(selection, clash["b"], guid_b)
    _sub(components, "Visibility", DefaultVisibility="true")
    coloring = _sub(components, "Coloring")
    component(_sub(coloring, "Color", Color=COLOR_A), clash["a"], guid_a)
    component(_sub(coloring, "Color", Color=COLOR_B), clash["b"], guid_b)
    position, direction, up = camera_for_clash(clash["point"], clash["bounds"])
    camera = _sub(root, "PerspectiveCamera")
    _vector(camera, "CameraViewPoint", position * unit_scale)
    _vector(camera, "CameraDirection", direction)
    _vector(camera, "CameraUpVector", up)
    _sub(camera, "FieldOfView", repr(FIELD_OF_VIEW_DEGREES))
    return _xml_bytes(root)


def version_xml() -> bytes:
    """bcf.version for BCF 2.1."""
    root = ElementTree.Element("Version", VersionId="2.1")
    _sub(root, "DetailedVersion", "2.1")
    return _xml_bytes(root)


def bcf_bytes(
    report: Mapping[str, Any],
    snapshots: Mapping[str, bytes] | None = None,
    created: datetime | None = None,
) -> bytes:
    """The .bcf zip of a report: one topic per clash (resolved ones too, with their
    status).

    snapshots: clash id -> PNG bytes, optional per clash
    created: topics' CreationDate and the zip entries' time; default now (UTC)
    """
    created = (created or datetime.now(UTC)).replace(microsecond=0)
    snapshots = snapshots or {}
    objects = report.get("objects", {})
    unit_scale = report.get("unit_scale", 1.0)

    def guid_of(name: str) -> str:
        return objects.get(name, {}).get("ifc_guid") or object_ifc_guid(name)

    buffer = io.BytesIO()
    # Zip timestamps cannot go before 1980.
    stamp = max(created, datetime(1980, 1, 1, tzinfo=created.tzinfo)).timetuple()[:6]

    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:

        def add(name: str, data: bytes) -> None:
            archive.writestr(zipfile.ZipInfo(name, date_time=stamp), data, zipfile.ZIP_DEFLATED)

        add("bcf.version", version_xml())
        for clash in report["clashes"]:
            folder = topic_guid(clash["id"])
            snapshot = snapshots.get(clash["id"])
            if snapshot is not None and not snapshot.startswith(PNG_SIGNATURE):
                raise ValueError(f"snapshot for clash {clash['id']} is not a PNG")
            add(
                f"{folder}/markup.bcf",
                markup_xml(clash, created, report.get("file"), snapshot is not None, unit_scale),
            )
            add(
                f"{folder}/viewpoint.bcfv",
                viewpoint_xml(clash, guid_of(clash["a"]), guid_of(clash["b"]), unit_scale),
            )
            if snapshot is not None:
                add(f"{folder}/snapshot.png", snapshot)
    return buffer.getvalue()


def write_bcf_report(
    report: Mapping[str, Any],
    path: str | Path,
    snapshots: Mapping[str, bytes] | None = None,
    created: datetime | None = None,
) -> None:
    """Write `bcf_bytes(report, snapshots, created)` to `path` atomically."""
    write_bytes_atomic(path, bcf_bytes(report, snapshots, created))
