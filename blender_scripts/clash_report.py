"""Headless clash report over a frame range.

    blender -b scene.blend --python blender_scripts/clash_report.py -- \\
        [--tests tests.json] [--frames 1-250[:step]] [--json out.json] [--html out.html] \\
        [--csv out.csv] [--bcf out.bcf] [--baseline previous.json] \\
        [--fail-on new|any|never] [--substeps N] [--continuous] [--geometry mesh|proxy] \\
        [--thumbnails] [--suggest-fixes] [--lookahead] [--chunk]

Without --tests the clash tests stored on the scene run (set up in the panel's Clash
Tests); a scene without any runs one hard test of every proxy against every other.

Exit status: 0 nothing that --fail-on counts; 1 clashes that it counts; 2 bad arguments,
an unreadable file, or no objects matched (the reason on one stderr line). Outputs that
are one file, or that are the scene, the tests file or the baseline, are refused (2)
before any work, and so are frames beyond Blender's range (+-1,048,574), more than 64
substeps or more than 1,000,000 samples (collide_addon.report.run's limits).

`bpy` is imported where it is used, so `make_parser` can be imported (and fuzzed)
without Blender.

Works from a checkout (the repository root goes on sys.path) and with the add-on
installed as a legacy add-on or as an extension.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import importlib
import re
import sys
import traceback
from collections.abc import Callable
from pathlib import Path

EXIT_ERROR = 2
OUTPUT_OPTIONS = ("json", "html", "csv", "bcf")
CHECKOUT_ROOT = Path(__file__).resolve().parents[1]


def import_addon():
    """The collide_addon package: the checkout's when run from one, else the installed
    add-on (legacy "collide_addon" or extension "bl_ext.<repo>.collide_addon")."""
    if (CHECKOUT_ROOT / "collide_addon" / "__init__.py").is_file():
        if str(CHECKOUT_ROOT) not in sys.path:
            sys.path.insert(0, str(CHECKOUT_ROOT))
        addon = importlib.import_module("collide_addon")
        # An add-on enabled in the user's preferences was imported at start-up, under
        # the same name: it runs, not this checkout's, and the run says so.
        imported = Path(addon.__file__).resolve().parent
        if CHECKOUT_ROOT not in imported.parents:
            print(
                f"collide: using the enabled add-on in {imported}, not "
                f"{CHECKOUT_ROOT / 'collide_addon'} (run Blender with --factory-startup for "
                "the checkout's)",
                file=sys.stderr,
            )
        return addon
    import addon_utils

    for module in addon_utils.modules():
        name = module.__name__
        is_collide = name == "collide_addon" or name.endswith(".collide_addon")
        if is_collide and addon_utils.check(name)[1]:  # check() -> (default, loaded)
            return importlib.import_module(name)
    raise ImportError("collide_addon is neither beside this script nor an enabled add-on")


# Characters that end a line (str.splitlines) or drive the terminal (escape sequences,
# bidi controls): an argument, path or name holding one is written escaped instead. The
# add-on's report.common.one_line, here for errors met before the add-on is imported.
UNPRINTABLE = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff]")


def one_line(text: str) -> str:
    """`text` with line breaks and terminal controls written as Python escapes (\\n,
    \\x1b, \\u202e, ...): one line that prints as it reads."""
    return UNPRINTABLE.sub(lambda match: repr(match.group())[1:-1], text)


class OneLineParser(argparse.ArgumentParser):
    """argparse whose errors are one line on stderr and exit status 2."""

    def error(self, message: str) -> None:
        self.exit(EXIT_ERROR, f"clash_report: error: {one_line(message)}\n")


def parse_frames(text: str) -> tuple[int, int, int]:
    """`--frames` as the add-on's `report.run.parse_frame_range` reads it, for argparse."""
    report_run = importlib.import_module(import_addon().__name__ + ".report.run")
    try:
        return report_run.parse_frame_range(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def file_path(text: str) -> str:
    """A non-empty path: an empty one would otherwise mean "not given" and be skipped."""
    if not text.strip():
        raise argparse.ArgumentTypeError("expected a file path, got an empty one")
    return text


def positive_int(text: str) -> int:
    """An integer >= 1."""
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"expected an integer >= 1, got {text!r}")
    return int(text)


def make_parser() -> argparse.ArgumentParser:
    parser = OneLineParser(
        prog="blender -b FILE.blend --python blender_scripts/clash_report.py --",
        description="Run clash tests over a frame range and write clash reports.",
        epilog="Exit status: 0 = nothing --fail-on counts, 1 = clashes it counts, "
        "2 = bad arguments, unreadable file or no objects matched.",
    )
    parser.add_argument(
        "--tests",
        type=file_path,
        metavar="FILE",
        help="clash tests JSON file (default: the clash tests stored on the scene, "
        "set up in the panel; without any, one hard clash test of every proxy against "
        "every other, tolerance 0)",
    )
    parser.add_argument(
        "--frames",
        type=parse_frames,
        metavar="START-END[:STEP]",
        help="frames to scan, inclusive (default: the scene's frame range and step)",
    )
    parser.add_argument(
        "--substeps",
        type=positive_int,
        default=1,
        metavar="N",
        help="samples per scanned frame, so fast movers cannot pass through thin objects "
        "between frames (default 1)",
    )
    parser.add_argument(
        "--continuous",
        action="store_true",
        help="also test the motion between consecutive samples (every test but "
        "duplicates, on the proxies): a clash that starts and ends between them is "
        "reported with its time of first contact (toi)",
    )
    parser.add_argument(
        "--lookahead",
        action="store_true",
        help="the frames are a chunk of a longer scan (collide scan, collide merge): also "
        "sample the last frame's substeps and the motion to the frame one step after it, "
        "reporting nothing on that frame, so that the merged chunks equal one run; "
        "implies --chunk",
    )
    parser.add_argument(
        "--chunk",
        action="store_true",
        help="the frames are a chunk of a longer scan, maybe its last: a test's set that "
        "matches no object at them is listed in the JSON (unmatched_sets) for collide "
        "merge to decide on, not refused (its objects may exist at other chunks' frames)",
    )
    for option, kind in (("json", "JSON"), ("html", "HTML"), ("csv", "CSV"), ("bcf", "BCF 2.1")):
        parser.add_argument(
            f"--{option}", type=file_path, metavar="FILE", help=f"write the {kind} report"
        )
    parser.add_argument(
        "--baseline",
        type=file_path,
        metavar="FILE",
        help="previous JSON report: statuses carry over (new/active/resolved; reviewed "
        "and approved are kept)",
    )
    parser.add_argument(
        "--fail-on",
        choices=("new", "any", "never"),
        help="which clashes make the exit status 1 (default: new with --baseline, "
        "any without; approved clashes never count)",
    )
    parser.add_argument(
        "--geometry",
        choices=("mesh", "proxy"),
        help="decide every test's clashes on the evaluated triangles (mesh) or on the "
        "proxies (proxy), whatever the tests say (default: each test's own setting, "
        "mesh unless set otherwise)",
    )
    parser.add_argument(
        "--thumbnails",
        action="store_true",
        help="render a Workbench thumbnail per clash into the HTML and BCF reports",
    )
    parser.add_argument(
        "--suggest-fixes",
        action="store_true",
        help="for each clash, the move of object b that leaves the pair apart at its worst "
        'frame: printed, and written into the JSON as "fix" (CSV and HTML show it)',
    )
    return parser


def script_arguments(argv: list[str]) -> list[str]:
    """The arguments after Blender's `--` separator."""
    return argv[argv.index("--") + 1 :] if "--" in argv else []


def fail(message: str, program: str = "clash_report") -> int:
    print(f"{program}: error: {one_line(message)}", file=sys.stderr)
    return EXIT_ERROR


def main(argv: list[str]) -> int:
    import bpy

    try:
        addon = import_addon()
    except ImportError as error:
        return fail(str(error))
    report_run = importlib.import_module(addon.__name__ + ".report.run")
    arguments = make_parser().parse_args(report_run.frames_as_one_argument(script_arguments(argv)))
    outputs = {f"--{option}": getattr(arguments, option) for option in OUTPUT_OPTIONS}
    inputs = {"the scene being read": bpy.data.filepath, "--tests": arguments.tests}
    inputs["--baseline"] = arguments.baseline
    try:
        report_run.check_output_paths(outputs, inputs)
        if arguments.frames is not None:
            report_run.check_scan_limits(
                report_run.sampled_range(arguments.frames, arguments.lookahead),
                arguments.substeps,
            )
    except report_run.ClashRunError as error:
        return fail(str(error))
    with addon_settings(addon):
        return run_report(addon, arguments)


@contextlib.contextmanager
def addon_settings(addon):
    """The add-on's settings (scene.collide, object.collide) registered while inside:
    reading proxies and the scene's clash tests needs only them. An enabled add-on has
    them already; a checkout run registers just those, and unregisters them after."""
    import bpy

    props = importlib.import_module(addon.__name__ + ".blender.props")
    registered_here = not hasattr(bpy.types.Scene, "collide")
    if registered_here:
        props.register()
    try:
        yield
    finally:
        if registered_here:
            props.unregister()


def run_report(addon, arguments: argparse.Namespace) -> int:
    """Run the clash tests and write the reports; the exit status."""
    import bpy

    clash_tests = importlib.import_module(addon.__name__ + ".clash.tests")
    json_report = importlib.import_module(addon.__name__ + ".report.json_report")
    report_run = importlib.import_module(addon.__name__ + ".blender.report_run")
    clash_test_props = importlib.import_module(addon.__name__ + ".blender.clash_test_props")
    try:
        if arguments.tests:
            tests = clash_tests.load_tests(arguments.tests)
            clash_test_props.check_object_types(tests, arguments.tests)
        else:
            tests = clash_test_props.scene_clash_tests(bpy.context.scene) or [
                clash_tests.ClashTest("all proxies, hard")
            ]
        baseline = json_report.read_json_report(arguments.baseline) if arguments.baseline else None
    except (clash_tests.ClashTestError, json_report.ReportError) as error:
        return fail(str(error))
    if arguments.geometry:
        tests = [dataclasses.replace(test, geometry=arguments.geometry) for test in tests]
    try:
        result = report_run.run_clash_report(
            tests,
            frames=arguments.frames,
            baseline=baseline,
            fail_on=arguments.fail_on,
            json_path=arguments.json,
            html_path=arguments.html,
            csv_path=arguments.csv,
            bcf_path=arguments.bcf,
            thumbnails=arguments.thumbnails,
            substeps=arguments.substeps,
            suggest_fixes=arguments.suggest_fixes,
            continuous=arguments.continuous,
            lookahead=arguments.lookahead,
            chunk=arguments.chunk,
        )
    except report_run.ClashRunError as error:
        return fail(str(error))
    except OSError as error:
        return fail(f"cannot write a report: {error}")
    summary = result.report["summary"]
    counts = ", ".join(f"{count} {name}" for name, count in summary["by_status"].items())
    written = [path for option in OUTPUT_OPTIONS if (path := getattr(arguments, option))]
    print(f"collide: {summary['open']} open clashes ({counts})", file=sys.stderr)
    common = importlib.import_module(addon.__name__ + ".report.common")
    for line in common.warning_lines(result.report):
        print(line, file=sys.stderr)
    if arguments.suggest_fixes:
        print_fixes(addon, result.report["clashes"])
    for path in written:
        print(f"collide: wrote {path}", file=sys.stderr)
    if result.failing:
        print(
            f"clash_report: {result.failing} clashes counted by --fail-on {result.fail_on}",
            file=sys.stderr,
        )
    return result.exit_status


def print_fixes(addon, clashes) -> None:
    """One line per clash with a fix, on stdout: "fix <id> <a> / <b>: move <b> by (...)"."""
    for line in importlib.import_module(addon.__name__ + ".report.common").fix_lines(clashes):
        print(line)


def run(entry: Callable[[list[str]], int] = main, program: str = "clash_report") -> None:
    """Exit Blender with the status of `entry` (`main`, or another script's) on sys.argv.
    Blender exits 0 after a script that raised, so an unexpected error is turned into
    status 2 here rather than passing a CI gate."""
    try:
        status = entry(sys.argv)
    except SystemExit:
        raise
    except BaseException as error:  # noqa: BLE001 - any error must fail the run with status 2
        traceback.print_exc()
        status = fail(f"internal error: {type(error).__name__}: {error}", program)
    sys.exit(status)


if __name__ == "__main__":
    run()
