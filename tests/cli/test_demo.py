"""`python3 build.py demo`'s Blender job: the bundled scene and its known clashes."""

from __future__ import annotations

import json
import zipfile

import demo


def test_demo_report_finds_the_known_clashes(tmp_path, capsys):
    assert demo.blender_report(tmp_path) == 0
    report = json.loads((tmp_path / "report.json").read_text())
    hard = {
        (clash["a"], clash["b"]): clash for clash in report["clashes"] if clash["type"] == "hard"
    }
    assert set(hard) == {
        ("Pipe.Through.Wall", "Wall"),
        ("Arm.Swing", "Column.B"),
        ("Panel.Thin", "Probe.Fast"),
    }
    assert hard[("Pipe.Through.Wall", "Wall")]["frames"] == [[1, 60]]
    assert hard[("Arm.Swing", "Column.B")]["worst_frame"] == 30
    # The fast probe is inside the panel only between frames 30 and 31: sub-steps find it.
    assert hard[("Panel.Thin", "Probe.Fast")]["frames"] == [[30, 30]]
    clearance = {
        (clash["a"], clash["b"]): clash["distance"]
        for clash in report["clashes"]
        if clash["type"] == "clearance"
    }
    # The near miss: 5 cm apart, not a hard clash, a 10 cm clearance clash.
    assert abs(clearance[("Beam.NearMiss", "Duct")] - 0.05) < 1e-4
    for suffix in ("html", "csv", "bcf"):
        assert (tmp_path / f"report.{suffix}").stat().st_size > 0
    # Every clash has its picture in the HTML and a snapshot in the BCF.
    html = (tmp_path / "report.html").read_text(encoding="utf-8")
    assert html.count('<img class="thumbnail"') == len(report["clashes"])
    with zipfile.ZipFile(tmp_path / "report.bcf") as bcf:
        snapshots = [name for name in bcf.namelist() if name.endswith(".png")]
    assert len(snapshots) == len(report["clashes"])
    assert "reports:" in capsys.readouterr().out
