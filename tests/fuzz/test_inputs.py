"""Fuzzing the inputs: the tests-file parser, the baseline reader and the command line's
argument parser either accept their input or refuse it with one line, never a traceback."""

from __future__ import annotations

import contextlib
import copy
import importlib.util
import io
import json
from pathlib import Path

import jsonschema
import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from collide_addon.clash.records import carry_over_status
from collide_addon.clash.tests import ClashTest, ClashTestError, clash_tests_from_json, load_tests
from collide_addon.report.json_report import (
    SCHEMA_PATH,
    ReportError,
    build_report,
    read_json_report,
    report_to_json,
)
from tests.fuzz.budget import count, for_budget, fuzz_settings
from tests.report.sample_report import make_report

REPO = Path(__file__).resolve().parents[2]
SCHEMA = json.loads(SCHEMA_PATH.read_text())
SAMPLE = make_report()
VALID_TESTS = {
    "format": "collide-tests",
    "version": 1,
    "tests": [
        {
            "name": "pipes",
            "a": {"collections": ["MEP"], "name": "Pipe*", "types": ["MESH"], "properties": {}},
            "b": {},
            "type": "clearance",
            "tolerance": 0.05,
            "ignore": {"same_parent": True, "pairs": [["a", "b"]]},
        }
    ],
}

hostile_text = st.one_of(
    st.text(),
    st.sampled_from(["", "\r", "\x00", "\ud800", "=cmd()", "<script>", "1" * 400, "NaN"]),
)
scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.integers(min_value=10**300, max_value=10**400),
    st.floats(),
    hostile_text,
)
json_values = st.recursive(
    scalars,
    lambda children: st.one_of(
        st.lists(children, max_size=4), st.dictionaries(hostile_text, children, max_size=4)
    ),
    max_leaves=20,
)


def mutate(document, path_choices, value):
    """A deep copy of `document` with the value at one path (a list of keys and
    indices, chosen from `path_choices`) replaced by `value`, or that key deleted when
    `value` is the string "<delete>"."""
    document = copy.deepcopy(document)
    node = document
    for choice in path_choices[:-1]:
        if isinstance(node, dict) and node:
            node = node[sorted(node)[choice % len(node)]]
        elif isinstance(node, list) and node:
            node = node[choice % len(node)]
    if isinstance(node, dict) and node:
        key = sorted(node)[path_choices[-1] % len(node)]
        if value == "<delete>":
            del node[key]
        else:
            node[key] = value
    elif isinstance(node, list) and node:
        node[path_choices[-1] % len(node)] = value
    return document


def dumps(document) -> str:
    return json.dumps(document, allow_nan=True)


mutations = st.tuples(
    st.lists(st.integers(0, 50), min_size=1, max_size=6),
    st.one_of(json_values, st.just("<delete>")),
)
raw_texts = st.one_of(
    st.text(max_size=200),
    st.binary(max_size=200).map(lambda data: data.decode("utf-8", "replace")),
    st.integers(1, 5000).map(lambda depth: "[" * depth + "]" * depth),
)


@for_budget
@fuzz_settings
@given(
    st.one_of(
        json_values.map(dumps), raw_texts, mutations.map(lambda m: dumps(mutate(VALID_TESTS, *m)))
    )
)
def test_tests_file_parser_accepts_or_refuses_in_one_line(text):
    count("tests file parser")
    try:
        tests = clash_tests_from_json(text, source="fuzz")
    except ClashTestError as error:
        assert "\n" not in str(error) and str(error).startswith("fuzz")
        return
    assert tests and all(isinstance(test, ClashTest) for test in tests)


@for_budget
@fuzz_settings
@given(st.one_of(mutations.map(lambda m: dumps(mutate(SAMPLE, *m))), raw_texts))
def test_baseline_reader_gives_a_valid_report_or_one_line(tmp_path_factory, text):
    count("baseline reader")
    path = tmp_path_factory.mktemp("baseline") / "baseline.json"
    path.write_text(text, encoding="utf-8", errors="surrogatepass")
    try:
        baseline = read_json_report(path)
    except ReportError as error:
        assert "\n" not in str(error)
        return
    # Whatever is accepted carries over into a report that is valid and writable.
    clashes = carry_over_status([], baseline["clashes"], None)
    report = build_report(tests=[ClashTest("hard")], clashes=clashes, frames=(1, 1, 1))
    jsonschema.validate(json.loads(report_to_json(report)), SCHEMA)


def load_clash_report_script():
    spec = importlib.util.spec_from_file_location(
        "clash_report_script", REPO / "blender_scripts" / "clash_report.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


SCRIPT = load_clash_report_script()
OPTIONS = ["--tests", "--frames", "--substeps", "--json", "--html", "--csv", "--bcf"]
OPTIONS += ["--baseline", "--fail-on", "--thumbnails", "--help", "--", "-", "--bogus"]
tokens = st.one_of(
    st.sampled_from(OPTIONS),
    st.sampled_from(["1-250", "1-10:2", "12", "-5--1", "9-3", "1-5:0", "0", "64", "65"]),
    st.integers().map(str),
    st.from_regex(r"-?\d{1,25}(-\-?\d{1,25})?(:\d{1,25})?", fullmatch=True),
    hostile_text,
)


@for_budget
@fuzz_settings
@given(st.lists(tokens, max_size=8))
@example(["--", "\r", "--tests"])  # found by this test: the error was two lines
def test_argument_parser_accepts_or_exits_2_in_one_line(arguments):
    count("argument parser")
    stderr = io.StringIO()
    try:
        with contextlib.redirect_stderr(stderr), contextlib.redirect_stdout(io.StringIO()):
            parsed = SCRIPT.make_parser().parse_args(arguments)
    except SystemExit as exit:
        if exit.code == 0:  # --help
            return
        assert exit.code == 2
        lines = stderr.getvalue().splitlines()
        assert len(lines) == 1 and lines[0].startswith("clash_report: error: ")
        return
    if parsed.frames is not None:
        start, end, step = parsed.frames
        assert start <= end and step >= 1
    assert parsed.substeps >= 1


def test_tests_file_and_baseline_reads_stop_at_the_size_limit():
    with pytest.raises(ClashTestError, match="larger than 64 MiB"):
        load_tests("/dev/zero")
    with pytest.raises(ReportError, match="larger than 64 MiB"):
        read_json_report("/dev/zero")
