"""Layers: core <- clash <- report <- blender; nothing imports upward, and the lower three
run without Blender."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
BLENDER_MODULES = ("bpy", "mathutils", "bmesh", "gpu")


def imported_after(statement: str) -> list[str]:
    """Names of the modules in sys.modules after `statement` in a fresh interpreter."""
    code = f"import sys\n{statement}\nprint('\\n'.join(sorted(sys.modules)))\n"
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, check=True
    )
    return result.stdout.split()


def test_core_clash_and_report_import_no_blender():
    modules = imported_after(
        "import collide_addon.core, collide_addon.clash, collide_addon.report\n"
        "import collide_addon.clash.tests, collide_addon.clash.evaluate\n"
        "import collide_addon.clash.records, collide_addon.clash.groups\n"
        "import collide_addon.clash.atomic, collide_addon.report.run\n"
        "import collide_addon.report.json_report, collide_addon.report.html_report\n"
        "import collide_addon.report.csv_report, collide_addon.report.bcf_report\n"
        "import collide_addon.report.viewpoint, collide_addon.report.common"
    )
    assert "collide_addon.report.run" in modules
    assert [name for name in modules if name.split(".")[0] in BLENDER_MODULES] == []
    assert not any(name.startswith("collide_addon.blender") for name in modules)


def test_core_imports_nothing_above_it():
    modules = imported_after("import collide_addon.core")
    above = ("collide_addon.clash", "collide_addon.report", "collide_addon.blender")
    assert [name for name in modules if name.startswith(above)] == []


def test_clash_imports_no_report():
    modules = imported_after(
        "import collide_addon.clash.tests, collide_addon.clash.evaluate, "
        "collide_addon.clash.records, collide_addon.clash.groups"
    )
    assert [name for name in modules if name.startswith("collide_addon.report")] == []
