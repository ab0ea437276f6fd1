"""Clash tests: what a test checks (sets A and B, type, tolerance, ignore rules) and the
tests file that stores them.

Tests file:

    {"format": "collide-tests", "version": 1, "tests": [test, ...]}

with each test in the form `clash_test_from_dict` reads. The panel, a tests file and the
command line all go through `clash_test_from_dict`, so they reject the same mistakes with
the same messages.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .atomic import write_text_atomic
from .json_input import JsonInputError, parse_json, read_text_bounded

# Test type -> what it reports, as the panel describes it; the keys are the type names
# a tests file uses.
TEST_TYPE_DESCRIPTIONS = {
    "hard": "Penetration deeper than the tolerance",
    "clearance": "Closer than the required gap (the tolerance, > 0)",
    "touching": "Within plus or minus the tolerance",
    "duplicates": "Same geometry at the same place, within the tolerance",
}
TEST_TYPES = tuple(TEST_TYPE_DESCRIPTIONS)

# Geometry a test decides clashes on -> what that means, as the panel describes it. Proxies
# always find the candidate pairs (they enclose the mesh, so no mesh clash is missed);
# "mesh" then decides each candidate on the evaluated triangles.
GEOMETRY_DESCRIPTIONS = {
    "mesh": "Exact: decide on the evaluated triangles (slower, no false alarms from proxies)",
    "proxy": "Fast: decide on the fitted boxes, spheres and capsules",
}
GEOMETRIES = tuple(GEOMETRY_DESCRIPTIONS)
DEFAULT_GEOMETRY = "mesh"

TESTS_FORMAT = "collide-tests"
TESTS_VERSION = 1

_SELECTOR_KEYS = {"collections", "name", "types", "properties"}
_IGNORE_KEYS = {"same_parent", "same_collection", "same_instance_source", "pairs"}
_TEST_KEYS = {"name", "a", "b", "type", "tolerance", "geometry", "ignore", "continuous"}


class ClashTestError(ValueError):
    """A clash test definition or tests file is invalid; the message says where and why."""


@dataclass(frozen=True)
class Selector:
    """Which objects a clash test takes. Every given criterion must hold; a list criterion
    holds when any of its entries does. An empty selector takes every object.

    collections: object is in one of these collections (by name)
    name: fnmatch glob on the object name, case-sensitive ("Pipe.*", "*_duct")
    types: object type is one of these ("MESH", "EMPTY", ...)
    properties: custom property name -> required value; None only requires presence
    """

    collections: tuple[str, ...] = ()
    name: str | None = None
    types: tuple[str, ...] = ()
    properties: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class IgnoreRules:
    """Pairs a clash test skips.

    same_parent: siblings, i.e. both objects have the same parent object
    same_collection: the objects share at least one collection
    same_instance_source: both have the same ObjectMetadata.instance_source
    pairs: object-name pairs, either order
    """

    same_parent: bool = False
    same_collection: bool = False
    same_instance_source: bool = False
    pairs: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class ClashTest:
    """One clash test: set A against set B, or set A against itself when set_b is None.

    test_type: "hard"       penetration deeper than `tolerance` (distance < -tolerance)
               "clearance"  closer than the required gap `tolerance` (distance < tolerance,
                            penetrations included), tolerance > 0
               "touching"   within +-tolerance (|distance| <= tolerance)
               "duplicates" same kind and same geometry within `tolerance` (see
                            `duplicate_mask`)
    tolerance: scene units (metres by default), finite, >= 0
    geometry: "mesh" (decide on the evaluated triangles) or "proxy" (on the proxies);
        duplicates compare proxies in either
    continuous: also test the motion between consecutive samples for a first contact
        (`core.continuous`, on the proxies); not for duplicates
    """

    name: str
    set_a: Selector = field(default_factory=Selector)
    set_b: Selector | None = None
    test_type: str = "hard"
    tolerance: float = 0.0
    ignore: IgnoreRules = field(default_factory=IgnoreRules)
    geometry: str = DEFAULT_GEOMETRY
    continuous: bool = False

    def __post_init__(self) -> None:
        where = f"clash test {self.name!r}"
        _validate_fields(self.name, self.test_type, self.tolerance, where)
        _validate_geometry(self.geometry, where)
        _validate_continuous(self.continuous, self.test_type, where)


def _is_finite(number: int | float) -> bool:
    try:
        return math.isfinite(number)
    except OverflowError:  # an int too large for a float
        return False


def _validate_fields(name: Any, test_type: Any, tolerance: Any, where: str) -> None:
    if not isinstance(name, str) or not name.strip():
        raise ClashTestError(f"{where}: name must be a non-empty string")
    if test_type not in TEST_TYPES:
        raise ClashTestError(
            f"{where}: type must be one of {', '.join(TEST_TYPES)}, got {test_type!r}"
        )
    if isinstance(tolerance, bool) or not isinstance(tolerance, int | float):
        raise ClashTestError(f"{where}: tolerance must be a number, got {tolerance!r}")
    if not _is_finite(tolerance) or tolerance < 0:
        raise ClashTestError(f"{where}: tolerance must be finite and >= 0, got {tolerance!r}")
    if test_type == "clearance" and tolerance <= 0:
        raise ClashTestError(f"{where}: a clearance test needs a required gap (tolerance) > 0")


def _validate_continuous(continuous: Any, test_type: str, where: str) -> None:
    if not isinstance(continuous, bool):
        raise ClashTestError(f"{where}: continuous must be true or false, got {continuous!r}")
    if continuous and test_type == "duplicates":
        raise ClashTestError(f"{where}: a duplicates test cannot be continuous (nothing moves)")


def _validate_geometry(geometry: Any, where: str) -> None:
    if geometry not in GEOMETRIES:
        raise ClashTestError(
            f"{where}: geometry must be one of {', '.join(GEOMETRIES)}, got {geometry!r}"
        )


# --- JSON form -------------------------------------------------------------------------


def _string_list(value: Any, where: str) -> tuple[str, ...]:
    """A selector's list criterion: strings, at least one (an empty list, met by no entry,
    took every object, as if the key were left out, which is how to say any)."""
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise ClashTestError(f"{where}: expected a list of strings, got {value!r}")
    if not value:
        raise ClashTestError(f"{where}: an empty list matches nothing; leave the key out for any")
    return tuple(value)


def _key_text(key: str) -> str:
    """A key as an error message shows it: as it is, or quoted with escapes when it holds
    a line break or another unprintable character (the message stays one line)."""
    return key if key.isprintable() else repr(key)


def _check_keys(data: Any, allowed: set[str], where: str) -> None:
    if not isinstance(data, dict):
        raise ClashTestError(f"{where}: expected an object, got {type(data).__name__}")
    unknown = sorted(set(data) - allowed)
    if unknown:
        raise ClashTestError(
            f"{where}: unknown key(s) {', '.join(map(_key_text, unknown))}; "
            f"allowed: {', '.join(sorted(allowed))}"
        )


def selector_from_dict(data: Any, where: str = "selector") -> Selector:
    """Selector from its JSON form {"collections", "name", "types", "properties"}, all
    optional. Raises ClashTestError naming `where` on anything unexpected."""
    _check_keys(data, _SELECTOR_KEYS, where)
    name = data.get("name")
    if name is not None and not isinstance(name, str):
        raise ClashTestError(f"{where}.name: expected a glob string, got {name!r}")
    properties = data.get("properties", {})
    if not isinstance(properties, dict):
        raise ClashTestError(f"{where}.properties: expected an object, got {properties!r}")
    for key, value in properties.items():
        if value is not None and not isinstance(value, str | int | float | bool):
            raise ClashTestError(
                f"{where}.properties.{_key_text(key)}: expected a string, number, boolean or null, "
                f"got {value!r}"
            )
    return Selector(
        collections=_string_list(data["collections"], f"{where}.collections")
        if "collections" in data
        else (),
        name=name,
        types=_string_list(data["types"], f"{where}.types") if "types" in data else (),
        properties=dict(properties),
    )


def selector_to_dict(selector: Selector) -> dict[str, Any]:
    """JSON form of a selector; criteria left empty are omitted."""
    data: dict[str, Any] = {}
    if selector.collections:
        data["collections"] = list(selector.collections)
    if selector.name is not None:
        data["name"] = selector.name
    if selector.types:
        data["types"] = list(selector.types)
    if selector.properties:
        data["properties"] = dict(selector.properties)
    return data


def clash_test_from_dict(data: Any, where: str = "test") -> ClashTest:
    """ClashTest from its JSON form:

    {"name": str, "a": selector, "b": selector | null (optional), "type": str,
     "tolerance": number (optional, 0), "geometry": "mesh" | "proxy" (optional,
     "mesh"), "continuous": bool (optional, false), "ignore": {"same_parent": bool,
     "same_collection": bool, "same_instance_source": bool,
     "pairs": [[name, name], ...]} (optional)}
    """
    _check_keys(data, _TEST_KEYS, where)
    for required in ("name", "a", "type"):
        if required not in data:
            raise ClashTestError(f"{where}: missing required key {required!r}")
    if isinstance(data["name"], str):
        where = f"{where} ({data['name']!r})"
    ignore_data = data.get("ignore", {})
    _check_keys(ignore_data, _IGNORE_KEYS, f"{where}.ignore")
    flags = {}
    for key in ("same_parent", "same_collection", "same_instance_source"):
        value = ignore_data.get(key, False)
        if not isinstance(value, bool):
            raise ClashTestError(f"{where}.ignore.{key}: expected true or false, got {value!r}")
        flags[key] = value
    pairs = ignore_data.get("pairs", [])
    if not isinstance(pairs, list) or not all(
        isinstance(pair, list) and len(pair) == 2 and all(isinstance(n, str) for n in pair)
        for pair in pairs
    ):
        raise ClashTestError(
            f"{where}.ignore.pairs: expected a list of [name, name] pairs, got {pairs!r}"
        )
    set_b = data.get("b")
    tolerance = data.get("tolerance", 0.0)
    _validate_fields(data["name"], data["type"], tolerance, where)
    geometry = data.get("geometry", DEFAULT_GEOMETRY)
    _validate_geometry(geometry, where)
    continuous = data.get("continuous", False)
    _validate_continuous(continuous, data["type"], where)
    return ClashTest(
        name=data["name"],
        set_a=selector_from_dict(data["a"], f"{where}.a"),
        set_b=None if set_b is None else selector_from_dict(set_b, f"{where}.b"),
        test_type=data["type"],
        tolerance=float(tolerance),
        ignore=IgnoreRules(**flags, pairs=tuple((first, second) for first, second in pairs)),
        geometry=geometry,
        continuous=continuous,
    )


def clash_test_to_dict(test: ClashTest) -> dict[str, Any]:
    """JSON form of a clash test (the inverse of `clash_test_from_dict`)."""
    return {
        "name": test.name,
        "a": selector_to_dict(test.set_a),
        "b": None if test.set_b is None else selector_to_dict(test.set_b),
        "type": test.test_type,
        "tolerance": test.tolerance,
        "geometry": test.geometry,
        "continuous": test.continuous,
        "ignore": {
            "same_parent": test.ignore.same_parent,
            "same_collection": test.ignore.same_collection,
            "same_instance_source": test.ignore.same_instance_source,
            "pairs": [list(pair) for pair in test.ignore.pairs],
        },
    }


def clash_tests_from_json(text: str, source: str = "tests") -> list[ClashTest]:
    """Clash tests from a tests file's text:

        {"format": "collide-tests", "version": 1, "tests": [test, ...]}

    Test names must be unique, also when spaces are not counted (a clash id is derived
    from its test's name, and reports show "x" and "x " alike). Raises
    ClashTestError, prefixed with `source`, on invalid JSON or an invalid test.
    """
    try:
        data = parse_json(text)
    except JsonInputError as error:
        raise ClashTestError(f"{source}: {error}") from None
    _check_keys(data, {"format", "version", "tests"}, source)
    if data.get("format") != TESTS_FORMAT:
        raise ClashTestError(
            f"{source}: format must be {TESTS_FORMAT!r}, got {data.get('format')!r}"
        )
    if data.get("version") != TESTS_VERSION:
        raise ClashTestError(
            f"{source}: version {data.get('version')!r} is not supported "
            f"(this reads version {TESTS_VERSION})"
        )
    entries = data.get("tests")
    if not isinstance(entries, list) or not entries:
        raise ClashTestError(f"{source}: 'tests' must be a non-empty list")
    tests = [
        clash_test_from_dict(entry, f"{source}: tests[{index}]")
        for index, entry in enumerate(entries)
    ]
    seen: dict[str, str] = {}
    for test in tests:
        # Names that differ only in spaces read the same in every report and panel.
        shown = " ".join(test.name.split())
        if shown in seen:
            same = f"named {test.name!r}"
            if seen[shown] != test.name:
                same = f"named {seen[shown]!r} and {test.name!r}, which read the same"
            raise ClashTestError(f"{source}: two tests are {same}; names must be unique")
        seen[shown] = test.name
    return tests


def clash_tests_to_json(tests: Sequence[ClashTest]) -> str:
    """The tests file text for `tests` (read back by `clash_tests_from_json`)."""
    document = {
        "format": TESTS_FORMAT,
        "version": TESTS_VERSION,
        "tests": [clash_test_to_dict(test) for test in tests],
    }
    return json.dumps(document, indent=2, ensure_ascii=False) + "\n"


def load_tests(path: str | Path) -> list[ClashTest]:
    """Clash tests from a tests file; ClashTestError (naming the file) if unreadable,
    invalid or larger than json_input.MAX_INPUT_BYTES."""
    path = Path(path)
    try:
        text = read_text_bounded(path)
    except (OSError, JsonInputError) as error:
        raise ClashTestError(f"{path}: cannot read tests file: {error}") from None
    return clash_tests_from_json(text, source=str(path))


def save_tests(tests: Sequence[ClashTest], path: str | Path) -> None:
    """Write a tests file atomically (a reader never sees half a file)."""
    write_text_atomic(path, clash_tests_to_json(tests))
