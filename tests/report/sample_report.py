"""A sample report from a real run: names that HTML, CSV and XML must escape, two tests,
an IfcGuid property, and a read_frame made from arrays."""

from __future__ import annotations

import base64
from datetime import UTC, datetime

from collide_addon.clash.evaluate import ObjectMetadata
from collide_addon.clash.tests import ClashTest, Selector
from collide_addon.core import ShapeBatch
from collide_addon.report.run import FrameSample, run_report

EVIL = "<script>alert(1)</script>"
QUOTED = "a&b \"q\" 's'"
FORMULA = "=HYPERLINK(1)"
NAMES = [EVIL, QUOTED, FORMULA, "far away"]
QUOTED_IFC_GUID = "2O2Fr$t4X7Zf8NOew3FLOH"
# A 1x1 PNG.
PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR4nGNgYGD4DwABBAEAwS2OUAAAAABJRU5ErkJggg=="
)
CREATED = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)
SAMPLE_TESTS = [
    ClashTest("hard", Selector(), None, "hard", 0.0),
    ClashTest("touch", Selector(), None, "touching", 0.01),
]
SAMPLE_OBJECTS = [
    ObjectMetadata(name, properties={"IfcGuid": QUOTED_IFC_GUID} if name == QUOTED else {})
    for name in NAMES
]


def sample_batch(time: float) -> ShapeBatch:
    """EVIL moves along x through QUOTED (at the origin); FORMULA touches QUOTED."""
    return ShapeBatch.spheres(
        [[time - 2.0, 0, 0], [0, 0, 0], [0, 2.0, 0], [50, 0, 0]], [0.8, 1.0, 1.0, 1.0]
    )


def read_sample_frame(time: float) -> FrameSample:
    return FrameSample(sample_batch(time), SAMPLE_OBJECTS)


def make_report():
    """A real run over frames 1-4 through report.run, writing no files."""
    return run_report(
        SAMPLE_TESTS,
        (1, 4, 1),
        read_sample_frame,
        blender="5.0.1",
        file="/tmp/scene <1>.blend",
    ).report
