"""Reports of a scene modelled in other units than metres (Blender's Unit Scale): lengths
stay in scene units, as the panel and tests files give them, and the reports say which;
BCF cameras, which BCF places in metres, are scaled; the far-from-origin warning counts
metres. Before, a millimetre scene's 50 mm penetration read "penetration 50 m", its
cameras were 1000 times too far out, and a model 20 m out was warned of as 20 km out."""

from __future__ import annotations

import io
import xml.etree.ElementTree as ElementTree
import zipfile

import numpy as np
import pytest

from collide_addon.report.bcf_report import bcf_bytes
from collide_addon.report.common import far_resolution, unit_label
from collide_addon.report.html_report import html_text
from collide_addon.report.json_report import build_report, reach_warning
from collide_addon.report.merge import merge_reports
from collide_addon.report.run import run_report
from tests.report.sample_report import CREATED, SAMPLE_TESTS, make_report, read_sample_frame
from tests.report.test_json_report import schema_validator


@pytest.mark.parametrize(
    ("scale", "label"),
    [(1.0, "m"), (0.001, "mm"), (0.01, "cm"), (0.3048, "ft"), (0.5, "\u00d7 0.5 m")],
)
def test_unit_label_names_the_usual_units(scale, label):
    assert unit_label(scale) == label


def test_far_from_the_origin_is_measured_in_metres():
    """20,250 mm (20 m) is near; 2,000,000 mm (2 km) is far, decided to 2 mm."""
    assert far_resolution(20_250.0, 0.001) is None
    assert reach_warning(20_250.0, 0.001) == []
    assert far_resolution(2_000_000.0, 0.001) == "2 mm"
    (warning,) = reach_warning(2_000_000.0, 0.001)
    assert "up to 2,000 m from the origin" in warning and "to 2 mm" in warning
    # Metre scenes as before.
    assert far_resolution(2_000.0) == "2 mm"


def _millimetre_report() -> dict:
    """The sample run's report, as if its scene were modelled in millimetres."""
    report = make_report()
    return build_report(
        tests=[],
        clashes=report["clashes"],
        frames=tuple(report["frames"]),
        reach=report["reach"],
        unit_scale=0.001,
    ) | {"tests": report["tests"]}


def test_the_json_report_names_its_unit_only_when_not_metres():
    report = make_report()
    assert "unit_scale" not in report
    millimetres = _millimetre_report()
    assert millimetres["unit_scale"] == 0.001
    schema_validator().validate(millimetres)


def test_html_and_bcf_say_the_scene_unit_and_bcf_cameras_are_in_metres():
    metres, millimetres = make_report(), _millimetre_report()
    assert "Distance (m)" in html_text(metres)
    html = html_text(millimetres)
    assert "Distance (mm)" in html and "Distance (m)" not in html

    def first_topic(report):
        with zipfile.ZipFile(io.BytesIO(bcf_bytes(report, created=CREATED))) as archive:
            names = sorted(archive.namelist())
            markup = next(name for name in names if name.endswith("markup.bcf"))
            viewpoint = markup.replace("markup.bcf", "viewpoint.bcfv")
            description = ElementTree.fromstring(archive.read(markup)).find("Topic/Description")
            camera = ElementTree.fromstring(archive.read(viewpoint)).find(
                "PerspectiveCamera/CameraViewPoint"
            )
            return description.text, np.array([float(camera.find(axis).text) for axis in "XYZ"])

    text_m, camera_m = first_topic(metres)
    text_mm, camera_mm = first_topic(millimetres)
    assert " m at frame" in text_m and " mm at frame" in text_mm
    np.testing.assert_allclose(camera_mm, camera_m * 0.001, rtol=1e-12)


def test_chunks_of_a_millimetre_scene_merge_to_its_one_run():
    def run(frames):
        return run_report(
            SAMPLE_TESTS, frames, read_sample_frame, blender="5.0.1", unit_scale=0.001
        ).report

    merged = merge_reports([run((1, 2, 1)), run((3, 4, 1))])
    assert merged["unit_scale"] == 0.001
    assert merged == run((1, 4, 1))
