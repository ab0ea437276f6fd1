"""Thumbnails of a finished report's clashes, for a report made without them: `collide
scan --thumbnails` merges its chunks first, then renders the merged clashes here.

    blender -b scene.blend --python blender_scripts/clash_thumbnails.py -- \\
        REPORT.json FOLDER

Writes FOLDER/<clash id>.png for every open clash of REPORT.json, rendered as
`clash_report.py --thumbnails` renders them (`collide_addon.blender.report_run.
report_thumbnails`): the scene must be the one the report was made of.

Exit status: 0 written; 2 bad arguments, an unreadable report, a missing folder or a
scene that cannot be read (the reason on one stderr line).

Works from a checkout and with the add-on installed, as clash_report.py (beside this
script, which lends its add-on import, settings and error handling).
"""

from __future__ import annotations

import importlib
import importlib.util
from pathlib import Path

PROGRAM = "clash_thumbnails"


def _clash_report():
    """blender_scripts/clash_report.py, loaded from beside this script."""
    path = Path(__file__).resolve().with_name("clash_report.py")
    spec = importlib.util.spec_from_file_location("clash_report", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


clash_report = _clash_report()


def make_parser():
    parser = clash_report.OneLineParser(
        prog="blender -b FILE.blend --python blender_scripts/clash_thumbnails.py --",
        description="Render a PNG thumbnail per open clash of a JSON report.",
    )
    parser.add_argument("report", type=clash_report.file_path, metavar="REPORT.json")
    parser.add_argument("folder", type=clash_report.file_path, metavar="FOLDER")
    return parser


def main(argv: list[str]) -> int:
    arguments = make_parser().parse_args(clash_report.script_arguments(argv))
    try:
        addon = clash_report.import_addon()
    except ImportError as error:
        return clash_report.fail(str(error), PROGRAM)
    json_report = importlib.import_module(addon.__name__ + ".report.json_report")
    report_run = importlib.import_module(addon.__name__ + ".blender.report_run")
    folder = Path(arguments.folder)
    if not folder.is_dir():
        return clash_report.fail(f"{folder}: no such folder", PROGRAM)
    try:
        report = json_report.read_json_report(arguments.report)
        with clash_report.addon_settings(addon):
            pictures = report_run.report_thumbnails(report["clashes"])
    except (json_report.ReportError, report_run.ClashRunError) as error:
        return clash_report.fail(str(error), PROGRAM)
    for clash_id, png in pictures.items():
        (folder / f"{clash_id}.png").write_bytes(png)
    return 0


if __name__ == "__main__":
    clash_report.run(main, PROGRAM)
