"""The `collide` command: clash reports in `blender -b` processes it starts itself.

    collide report SCENE.blend [clash_report.py's arguments]
    collide scan SCENE.blend --frames A-B[:S] [--chunk N] [--workers N | --scheduler ADDRESS]
                 [--scratch DIR] [--retries N] [--timeout S] [--substeps N] [--continuous]
                 [--thumbnails] [report arguments]
    collide merge PART.json... --json OUT [--html/--csv/--bcf/--baseline/--fail-on]

Every command takes --blender PATH (else $COLLIDE_BLENDER, else `blender` on PATH).
Exit status as clash_report.py's: 0 nothing --fail-on counts; 1 clashes it counts;
2 bad arguments, unreadable input, parts that do not fit together, a chunk that failed
every try, or no Blender (the reason on one stderr line); 130 interrupted (Ctrl-C), with
no report written.
"""

from __future__ import annotations

import argparse
import functools
import subprocess
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from collide_addon.clash.records import count_failing, effective_fail_on
from collide_addon.clash.tests import ClashTestError, load_tests
from collide_addon.report.bcf_report import write_bcf_report
from collide_addon.report.common import fix_lines, one_line, warning_lines
from collide_addon.report.csv_report import write_csv_report
from collide_addon.report.html_report import write_html_report
from collide_addon.report.json_report import ReportError, read_json_report, write_json_report
from collide_addon.report.merge import MergeError, merge_reports
from collide_addon.report.run import (
    ClashRunError,
    check_output_paths,
    check_scan_limits,
    frames_as_one_argument,
    parse_frame_range,
)

from .chunk import FarmError, find_blender, render_report_thumbnails, report_command
from .scan import ScanSettings, run_scan

EXIT_ERROR = 2
EXIT_INTERRUPTED = 130
BLENDER_HELP = "the Blender binary (default: $COLLIDE_BLENDER, else blender on PATH)"
OUTPUT_OPTIONS = ("json", "html", "csv", "bcf")
# Each writer takes (report, path, thumbnails); JSON and CSV have no pictures.
WRITERS: dict[str, Callable[[Mapping[str, Any], str, Mapping[str, bytes]], None]] = {
    "json": lambda report, path, _: write_json_report(report, path),
    "html": write_html_report,
    "csv": lambda report, path, _: write_csv_report(report, path),
    "bcf": write_bcf_report,
}
# What thumbnails make a difference to.
PICTURED_OPTIONS = ("html", "bcf")
RenderThumbnails = Callable[[Mapping[str, Any]], Mapping[str, bytes]]


class OneLineParser(argparse.ArgumentParser):
    """argparse whose errors are one line on stderr and exit status 2."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        # No abbreviations: `collide report` passes options it does not know to Blender.
        super().__init__(*args, allow_abbrev=False, **kwargs)

    def error(self, message: str) -> None:
        self.exit(EXIT_ERROR, f"collide: error: {one_line(message)}\n")


def parse_frames(text: str) -> tuple[int, int, int]:
    """`--frames` as `report.run.parse_frame_range` reads it, for argparse."""
    try:
        return parse_frame_range(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def positive_int(text: str) -> int:
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"expected an integer >= 1, got {text!r}")
    return int(text)


def count(text: str) -> int:
    if not text.isdigit():
        raise argparse.ArgumentTypeError(f"expected an integer >= 0, got {text!r}")
    return int(text)


def seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = 0.0
    if not value > 0:
        raise argparse.ArgumentTypeError(f"expected seconds > 0, got {text!r}")
    return value


def _add_outputs(parser: argparse.ArgumentParser, json_required: bool = False) -> None:
    for option, kind in (("json", "JSON"), ("html", "HTML"), ("csv", "CSV"), ("bcf", "BCF 2.1")):
        required = json_required and option == "json"
        parser.add_argument(
            f"--{option}", metavar="FILE", required=required, help=f"write the {kind} report"
        )
    parser.add_argument(
        "--baseline", metavar="FILE", help="previous JSON report: statuses carry over"
    )
    parser.add_argument(
        "--fail-on",
        choices=("new", "any", "never"),
        help="which clashes make the exit status 1 (default: new with --baseline, any without)",
    )


def _add_scan(commands, parents: list[argparse.ArgumentParser]) -> None:
    scan = commands.add_parser(
        "scan",
        parents=parents,
        help="split a frame range into chunks run on Dask workers; one merged report",
    )
    scan.add_argument("scene", metavar="SCENE.blend")
    scan.add_argument("--frames", type=parse_frames, required=True, metavar="START-END[:STEP]")
    scan.add_argument("--chunk", type=positive_int, metavar="N", help="frames per chunk")
    where = scan.add_mutually_exclusive_group()
    where.add_argument(
        "--workers", type=positive_int, metavar="N", help="local cluster size (default: cores)"
    )
    where.add_argument("--scheduler", metavar="ADDRESS", help="a Dask scheduler, tcp://host:port")
    scan.add_argument(
        "--scratch",
        metavar="DIR",
        help="folder for chunk reports that every worker can write (default: a temporary "
        "folder; required with --scheduler)",
    )
    scan.add_argument(
        "--retries", type=count, default=2, metavar="N", help="tries after a failed one (2)"
    )
    scan.add_argument("--timeout", type=seconds, metavar="S", help="seconds per chunk")
    scan.add_argument("--tests", metavar="FILE", help="clash tests JSON file")
    scan.add_argument(
        "--geometry",
        choices=("mesh", "proxy"),
        help="decide every test on the triangles (mesh) or the proxies (proxy), as for "
        "collide report",
    )
    scan.add_argument(
        "--suggest-fixes",
        action="store_true",
        help='each clash\'s "fix" at its worst frame in the JSON, printed, as for collide report',
    )
    scan.add_argument(
        "--substeps",
        type=positive_int,
        default=1,
        metavar="N",
        help="samples per scanned frame, as for collide report (each chunk also samples its "
        "last frame's)",
    )
    scan.add_argument(
        "--continuous",
        action="store_true",
        help="also test the motion between samples, as for collide report (each chunk also "
        "tests the motion to the next chunk's first frame)",
    )
    scan.add_argument(
        "--thumbnails",
        action="store_true",
        help="a thumbnail per clash in the HTML and BCF reports, rendered after the merge in "
        "one more blender -b run on this machine",
    )
    _add_outputs(scan)


def make_parser() -> argparse.ArgumentParser:
    parser = OneLineParser(
        prog="collide",
        description="Clash reports of Blender scenes, on one core or on a Dask cluster.",
        epilog="Exit status: 0 = nothing --fail-on counts, 1 = clashes it counts, "
        "2 = bad arguments or input, failed chunk, no Blender; 130 = interrupted.",
    )
    parser.add_argument("--blender", metavar="PATH", help=BLENDER_HELP)
    # Each command takes --blender too, after its name; its default leaves the main one.
    blender = OneLineParser(add_help=False)
    blender.add_argument("--blender", metavar="PATH", default=argparse.SUPPRESS, help=BLENDER_HELP)
    commands = parser.add_subparsers(dest="command", required=True, parser_class=OneLineParser)
    report = commands.add_parser(
        "report",
        parents=[blender],
        help="one blender -b run of clash_report.py, same arguments and exit codes",
    )
    report.add_argument("scene", metavar="SCENE.blend")
    _add_scan(commands, [blender])
    merge = commands.add_parser(
        "merge", parents=[blender], help="merge chunk reports into one report"
    )
    merge.add_argument("parts", nargs="+", metavar="PART.json")
    _add_outputs(merge, json_required=True)
    return parser


def fail(message: str) -> int:
    print(f"collide: error: {one_line(message)}", file=sys.stderr)
    return EXIT_ERROR


def _check_outputs(arguments: argparse.Namespace, inputs: Mapping[str, Any]) -> None:
    outputs = {f"--{option}": getattr(arguments, option) for option in OUTPUT_OPTIONS}
    try:
        check_output_paths(outputs, inputs)
    except ClashRunError as error:
        raise FarmError(str(error)) from None


def _read_baseline(arguments: argparse.Namespace) -> dict[str, Any] | None:
    return read_json_report(arguments.baseline) if arguments.baseline else None


def finish(
    parts: Sequence[Mapping[str, Any]],
    names: Sequence[str],
    arguments: argparse.Namespace,
    baseline: Mapping[str, Any] | None,
    render_thumbnails: RenderThumbnails | None = None,
) -> int:
    """Merge the parts, render the thumbnails of the merged report with
    `render_thumbnails` (when given and an HTML or BCF report is asked for), write the
    requested reports, print the summary; the exit status."""
    fail_on = effective_fail_on(arguments.fail_on, baseline is not None)
    report = merge_reports(parts, names, baseline)
    pictured = any(getattr(arguments, option) for option in PICTURED_OPTIONS)
    pictures = render_thumbnails(report) if render_thumbnails and pictured else {}
    written = []
    for option in OUTPUT_OPTIONS:
        path = getattr(arguments, option)
        if path:
            WRITERS[option](report, path, pictures)
            written.append(path)
    summary = report["summary"]
    counts = ", ".join(f"{number} {name}" for name, number in summary["by_status"].items())
    print(f"collide: {summary['open']} open clashes ({counts})", file=sys.stderr)
    for line in warning_lines(report):
        print(line, file=sys.stderr)
    for line in fix_lines(report["clashes"]):
        print(line)
    for path in written:
        print(f"collide: wrote {path}", file=sys.stderr)
    failing = count_failing(report["clashes"], fail_on)
    if failing:
        print(f"collide: {failing} clashes counted by --fail-on {fail_on}", file=sys.stderr)
    return 1 if failing else 0


def _check_scene(scene: str) -> None:
    # Blender opens its default scene in place of a missing file and would scan that.
    if not Path(scene).is_file():
        raise FarmError(f"{scene}: no such .blend file")


def command_report(arguments: argparse.Namespace, extra: list[str]) -> int:
    _check_scene(arguments.scene)
    command = report_command(find_blender(arguments.blender), arguments.scene, extra)
    status = subprocess.run(command).returncode
    # A Blender killed by a signal has a negative status; a command line wants 2.
    return status if status in (0, 1, EXIT_ERROR) else fail(f"Blender exited {status}")


def command_scan(arguments: argparse.Namespace) -> int:
    _check_scene(arguments.scene)
    inputs = {"the scene": arguments.scene, "--tests": arguments.tests}
    inputs["--baseline"] = arguments.baseline
    _check_outputs(arguments, inputs)
    try:
        check_scan_limits(arguments.frames, arguments.substeps)
    except ClashRunError as error:
        raise FarmError(str(error)) from None
    if arguments.tests:
        load_tests(arguments.tests)  # a bad tests file is refused before any chunk runs
    baseline = _read_baseline(arguments)
    settings = ScanSettings(
        scene=arguments.scene,
        frames=arguments.frames,
        blender=find_blender(arguments.blender),
        chunk=arguments.chunk,
        workers=arguments.workers,
        scheduler=arguments.scheduler,
        scratch=arguments.scratch,
        retries=arguments.retries,
        timeout=arguments.timeout,
        tests=arguments.tests,
        baseline=arguments.baseline,
        geometry=arguments.geometry,
        suggest_fixes=arguments.suggest_fixes,
        substeps=arguments.substeps,
        continuous=arguments.continuous,
    )
    parts, names = run_scan(settings)
    render = None
    if arguments.thumbnails:
        render = functools.partial(
            render_report_thumbnails, settings.blender, settings.scene, timeout=settings.timeout
        )
    return finish(parts, names, arguments, baseline, render)


def command_merge(arguments: argparse.Namespace) -> int:
    inputs = {f"part {path}": path for path in arguments.parts}
    inputs["--baseline"] = arguments.baseline
    _check_outputs(arguments, inputs)
    parts = [read_json_report(path) for path in arguments.parts]
    return finish(parts, arguments.parts, arguments, _read_baseline(arguments))


def main(argv: list[str] | None = None) -> int:
    """Run the `collide` command; its exit status."""
    argv = sys.argv[1:] if argv is None else argv
    parser = make_parser()
    arguments, extra = parser.parse_known_args(frames_as_one_argument(argv))
    if extra and arguments.command != "report":
        parser.error(f"unrecognized arguments: {' '.join(extra)}")
    try:
        if arguments.command == "report":
            return command_report(arguments, extra)
        if arguments.command == "scan":
            return command_scan(arguments)
        return command_merge(arguments)
    except (FarmError, MergeError, ReportError, ClashTestError, ValueError) as error:
        return fail(str(error))
    except OSError as error:
        return fail(f"cannot write a report: {error}")
    except KeyboardInterrupt:
        print("collide: interrupted: chunks cancelled, no report written", file=sys.stderr)
        return EXIT_INTERRUPTED


if __name__ == "__main__":
    sys.exit(main())
