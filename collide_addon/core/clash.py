"""Clash tests and clash records: the workflow between pairs of shapes and reports.

Pure functions over numpy arrays and plain per-object metadata; nothing here reads
Blender, so every step can be tested alone. One run goes

    [ObjectMetadata] -> ObjectTable                       once per run
    ClashTest + ObjectTable -> PreparedTest               selectors and ignore rules
    PreparedTest + ShapeBatch at a frame -> FrameHits     `evaluate_frame`
    FrameHits of all frames -> clash dicts                `clash_records`
    clash dicts + previous report -> statuses             `carry_over_status`

A clash dict is what the JSON report stores under "clashes" (see
`collide_addon/report/schema/collide-report-1.schema.json`):

    id           stable id, see `clash_id`
    test, type   the clash test's name and type
    a, b         object names; `a` is in the test's set A (self tests: a < b)
    kinds        [kind of a, kind of b]: "box", "sphere" or "capsule"
    distance     signed distance at the worst frame (< 0: penetration depth)
    point        [x, y, z] clash point at the worst frame
    bounds       [[x, y, z], [x, y, z]] bounds of both shapes at the worst frame
    frames       [[first, last], ...] frames where the clash exists, merged intervals
    worst_frame  frame of the smallest distance (the earliest one on a tie)
    status       "new", "active", "reviewed", "approved" or "resolved"
"""

from __future__ import annotations

import fnmatch
import hashlib
import json
import math
import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from .broad import find_contacts
from .coherent import CoherentBounds
from .columns import concatenate_fields
from .constants import KIND_NAMES
from .shapes import ShapeBatch

TEST_TYPES = ("hard", "clearance", "touching", "duplicates")
STATUSES = ("new", "active", "reviewed", "approved", "resolved")
# Statuses a person sets; a re-run keeps them while the clash still exists.
USER_STATUSES = ("reviewed", "approved")
FAIL_ON_CHOICES = ("new", "any", "never")

TESTS_FORMAT = "collide-tests"
TESTS_VERSION = 1

_SELECTOR_KEYS = {"collections", "name", "types", "properties"}
_IGNORE_KEYS = {"same_parent", "same_collection", "same_instance_source", "pairs"}
_TEST_KEYS = {"name", "a", "b", "type", "tolerance", "ignore"}


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
    tolerance: metres, finite, >= 0
    """

    name: str
    set_a: Selector = field(default_factory=Selector)
    set_b: Selector | None = None
    test_type: str = "hard"
    tolerance: float = 0.0
    ignore: IgnoreRules = field(default_factory=IgnoreRules)

    def __post_init__(self) -> None:
        _validate_fields(self.name, self.test_type, self.tolerance, f"clash test {self.name!r}")


def _validate_fields(name: Any, test_type: Any, tolerance: Any, where: str) -> None:
    if not isinstance(name, str) or not name.strip():
        raise ClashTestError(f"{where}: name must be a non-empty string")
    if test_type not in TEST_TYPES:
        raise ClashTestError(
            f"{where}: type must be one of {', '.join(TEST_TYPES)}, got {test_type!r}"
        )
    if isinstance(tolerance, bool) or not isinstance(tolerance, int | float):
        raise ClashTestError(f"{where}: tolerance must be a number, got {tolerance!r}")
    if not math.isfinite(tolerance) or tolerance < 0:
        raise ClashTestError(f"{where}: tolerance must be finite and >= 0, got {tolerance!r}")
    if test_type == "clearance" and tolerance <= 0:
        raise ClashTestError(f"{where}: a clearance test needs a required gap (tolerance) > 0")


# --- JSON form -------------------------------------------------------------------------


def _string_list(value: Any, where: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise ClashTestError(f"{where}: expected a list of strings, got {value!r}")
    return tuple(value)


def _check_keys(data: Any, allowed: set[str], where: str) -> None:
    if not isinstance(data, dict):
        raise ClashTestError(f"{where}: expected an object, got {type(data).__name__}")
    unknown = sorted(set(data) - allowed)
    if unknown:
        raise ClashTestError(
            f"{where}: unknown key(s) {', '.join(unknown)}; allowed: {', '.join(sorted(allowed))}"
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
                f"{where}.properties.{key}: expected a string, number, boolean or null, "
                f"got {value!r}"
            )
    return Selector(
        collections=_string_list(data.get("collections", []), f"{where}.collections"),
        name=name,
        types=_string_list(data.get("types", []), f"{where}.types"),
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
     "tolerance": number (optional, 0), "ignore": {"same_parent": bool,
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
    return ClashTest(
        name=data["name"],
        set_a=selector_from_dict(data["a"], f"{where}.a"),
        set_b=None if set_b is None else selector_from_dict(set_b, f"{where}.b"),
        test_type=data["type"],
        tolerance=float(tolerance),
        ignore=IgnoreRules(**flags, pairs=tuple((first, second) for first, second in pairs)),
    )


def clash_test_to_dict(test: ClashTest) -> dict[str, Any]:
    """JSON form of a clash test (the inverse of `clash_test_from_dict`)."""
    return {
        "name": test.name,
        "a": selector_to_dict(test.set_a),
        "b": None if test.set_b is None else selector_to_dict(test.set_b),
        "type": test.test_type,
        "tolerance": test.tolerance,
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

    Test names must be unique (a clash id is derived from its test's name). Raises
    ClashTestError, prefixed with `source`, on invalid JSON or an invalid test.
    """
    try:
        data = json.loads(text)
    except json.JSONDecodeError as error:
        raise ClashTestError(f"{source}: not valid JSON: {error}") from None
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
    seen: set[str] = set()
    for test in tests:
        if test.name in seen:
            raise ClashTestError(
                f"{source}: two tests are named {test.name!r}; names must be unique"
            )
        seen.add(test.name)
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
    """Clash tests from a tests file; ClashTestError (naming the file) if unreadable/invalid."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise ClashTestError(f"{path}: cannot read tests file: {error}") from None
    return clash_tests_from_json(text, source=str(path))


def save_tests(tests: Sequence[ClashTest], path: str | Path) -> None:
    """Write a tests file atomically (a reader never sees half a file)."""
    # Imported here so that importing the core never pulls in the report package.
    from ..report.atomic import write_text_atomic

    write_text_atomic(path, clash_tests_to_json(tests))


# --- Objects and selectors -----------------------------------------------------------


@dataclass(frozen=True)
class ObjectMetadata:
    """What selectors and ignore rules look at, for one object; plain data, no Blender.

    type: Blender's object type ("MESH", "EMPTY", ...)
    collections: names of the collections the object is linked to
    parent: parent object's name, None without parent
    properties: custom properties (name -> value)
    instance_source: what the object is an instance of, e.g. the instanced collection or
        the mesh data shared by linked duplicates; None if not an instance (the Blender
        glue, `blender/report_run.py`, defines the values)
    """

    name: str
    type: str = "MESH"
    collections: tuple[str, ...] = ()
    parent: str | None = None
    properties: Mapping[str, Any] = field(default_factory=dict)
    instance_source: str | None = None


def select_objects(selector: Selector, objects: Sequence[ObjectMetadata]) -> np.ndarray:
    """Which objects the selector takes.

    returns: (n,) bool
    """
    # String matching has no bulk numpy form; this loop runs once per run and test, not
    # per frame or per pair.
    name_pattern = re.compile(fnmatch.translate(selector.name)) if selector.name else None
    wanted_collections = set(selector.collections)
    wanted_types = set(selector.types)

    def takes(obj: ObjectMetadata) -> bool:
        if name_pattern is not None and not name_pattern.match(obj.name):
            return False
        if wanted_types and obj.type not in wanted_types:
            return False
        if wanted_collections and wanted_collections.isdisjoint(obj.collections):
            return False
        for key, value in selector.properties.items():
            if key not in obj.properties:
                return False
            if value is not None and obj.properties[key] != value:
                return False
        return True

    return np.fromiter((takes(obj) for obj in objects), dtype=bool, count=len(objects))


def _codes(values: Sequence[str | None]) -> np.ndarray:
    """Integer code per value, equal codes for equal values, -1 for None. (n,) int64"""
    known = sorted({value for value in values if value is not None})
    index = {value: code for code, value in enumerate(known)}
    return np.fromiter(
        (-1 if value is None else index[value] for value in values),
        dtype=np.int64,
        count=len(values),
    )


@dataclass(frozen=True)
class ObjectTable:
    """Per-object metadata as arrays, in proxy order (row k = shape k of the batch).

    objects: the metadata, n entries
    names: (n,) object array of names
    parent_codes: (n,) int64, equal for the same parent, -1 without parent
    instance_codes: (n,) int64, equal for the same instance source, -1 if none
    collection_membership: (n, c) bool, [k, m] when object k is in collection m
    """

    objects: tuple[ObjectMetadata, ...]
    names: np.ndarray
    parent_codes: np.ndarray
    instance_codes: np.ndarray
    collection_membership: np.ndarray


def object_table(objects: Sequence[ObjectMetadata]) -> ObjectTable:
    """ObjectTable for `objects`; names must be unique (as Blender's are)."""
    objects = tuple(objects)
    names = [obj.name for obj in objects]
    if len(set(names)) != len(names):
        repeated = sorted(name for name, count in Counter(names).items() if count > 1)
        raise ValueError(f"object names must be unique, repeated: {repeated[:5]}")
    collection_names = sorted({name for obj in objects for name in obj.collections})
    column = {name: index for index, name in enumerate(collection_names)}
    membership = np.zeros((len(objects), len(collection_names)), dtype=bool)
    rows = [row for row, obj in enumerate(objects) for _ in obj.collections]
    columns = [column[name] for obj in objects for name in obj.collections]
    membership[rows, columns] = True
    return ObjectTable(
        objects=objects,
        names=np.array(names, dtype=object),
        parent_codes=_codes([obj.parent for obj in objects]),
        instance_codes=_codes([obj.instance_source for obj in objects]),
        collection_membership=membership,
    )


@dataclass(frozen=True)
class PreparedTest:
    """A clash test evaluated over an ObjectTable: what does not change between frames.

    in_a, in_b: (n,) bool set membership (in_b is in_a for a self test)
    ignored_pair_keys: (p,) int64 sorted keys i * n + j (i < j) of explicitly ignored pairs
    """

    test: ClashTest
    table: ObjectTable
    in_a: np.ndarray
    in_b: np.ndarray
    ignored_pair_keys: np.ndarray

    @property
    def involved(self) -> np.ndarray:
        """(m,) int64 sorted indices of the objects in set A or set B."""
        return np.flatnonzero(self.in_a | self.in_b)


def prepare_test(test: ClashTest, table: ObjectTable) -> PreparedTest:
    """Evaluate the selectors and the explicit ignore list of `test` over `table`."""
    in_a = select_objects(test.set_a, table.objects)
    in_b = in_a if test.set_b is None else select_objects(test.set_b, table.objects)
    index = {name: row for row, name in enumerate(table.names)}
    # Pairs naming objects absent from this scene are meaningless here, not errors: a
    # tests file is shared between scenes.
    known = [
        (index[first], index[second])
        for first, second in test.ignore.pairs
        if first in index and second in index
    ]
    ignored = np.array(known, dtype=np.int64).reshape(-1, 2)
    ignored.sort(axis=1)
    keys = np.unique(ignored[:, 0] * len(table.names) + ignored[:, 1])
    return PreparedTest(test=test, table=table, in_a=in_a, in_b=in_b, ignored_pair_keys=keys)


def eligible_pair_mask(prepared: PreparedTest, pairs: np.ndarray) -> np.ndarray:
    """Which candidate pairs the test looks at: one object from each set (both from set A
    for a self test), and not skipped by an ignore rule.

    pairs: (k, 2) int64 object indices
    returns: (k,) bool
    """
    pairs = np.asarray(pairs, dtype=np.int64).reshape(-1, 2)
    first, second = pairs[:, 0], pairs[:, 1]
    in_a, in_b = prepared.in_a, prepared.in_b
    mask = (in_a[first] & in_b[second]) | (in_b[first] & in_a[second])
    rules = prepared.test.ignore
    table = prepared.table
    if rules.same_parent:
        parents = table.parent_codes
        mask &= ~((parents[first] >= 0) & (parents[first] == parents[second]))
    if rules.same_instance_source:
        sources = table.instance_codes
        mask &= ~((sources[first] >= 0) & (sources[first] == sources[second]))
    if rules.same_collection:
        membership = table.collection_membership
        mask &= ~(membership[first] & membership[second]).any(axis=1)
    if len(prepared.ignored_pair_keys):
        keys = np.minimum(first, second) * len(table.names) + np.maximum(first, second)
        mask &= ~np.isin(keys, prepared.ignored_pair_keys)
    return mask


def orient_pairs(prepared: PreparedTest, pairs: np.ndarray) -> np.ndarray:
    """Order each pair as (a, b) with a in set A and b in set B; when both orders fit
    (self tests, overlapping sets), a is the object whose name sorts first.

    pairs: (k, 2) int64 eligible pairs
    returns: (k, 2) int64
    """
    pairs = np.asarray(pairs, dtype=np.int64).reshape(-1, 2)
    first, second = pairs[:, 0], pairs[:, 1]
    forward = prepared.in_a[first] & prepared.in_b[second]
    backward = prepared.in_a[second] & prepared.in_b[first]
    names = prepared.table.names
    first_sorts_later = names[first] > names[second] if len(pairs) else np.zeros(0, dtype=bool)
    swap = ~forward | (backward & first_sorts_later)
    return np.where(swap[:, None], pairs[:, ::-1], pairs)


# --- Criteria ---------------------------------------------------------------------------


def broad_phase_margin(test: ClashTest) -> float:
    """Margin for `find_pairs` (which keeps pairs with distance <= margin) that keeps every
    pair the test type can report: clearance and touching reach `tolerance` beyond
    contact, hard clashes start `tolerance` inside it, duplicates overlap."""
    if test.test_type in ("clearance", "touching"):
        return test.tolerance
    if test.test_type == "hard":
        return -test.tolerance
    return 0.0


def clash_mask(test_type: str, tolerance: float, distance: np.ndarray) -> np.ndarray:
    """Which pairs clash under a distance-based test type (hard, clearance, touching).

    distance: (k,) signed distance, < 0 is penetration
    returns: (k,) bool
    """
    distance = np.asarray(distance, dtype=np.float64)
    if test_type == "hard":
        return distance < -tolerance
    if test_type == "clearance":
        return distance < tolerance
    if test_type == "touching":
        return np.abs(distance) <= tolerance
    raise ValueError(f"clash_mask: {test_type!r} is not a distance-based test type")


_UNIT_CORNERS = np.array([[x, y, z] for x in (-1.0, 1.0) for y in (-1.0, 1.0) for z in (-1.0, 1.0)])


def core_corners(batch: ShapeBatch, indices: np.ndarray) -> np.ndarray:
    """The 8 corners of each shape's core box (a sphere's centre 8 times, a capsule's two
    segment ends 4 times each).

    indices: (k,) int64
    returns: (k, 8, 3)
    """
    indices = np.asarray(indices, dtype=np.int64)
    local = _UNIT_CORNERS[None, :, :] * batch.half_extents[indices][:, None, :]
    world = np.einsum("kij,kcj->kci", batch.rotations[indices], local)
    return world + batch.centers[indices][:, None, :]


def duplicate_mask(batch: ShapeBatch, pairs: np.ndarray, tolerance: float) -> np.ndarray:
    """Which pairs are the same geometry at the same place: same kind, radii within
    `tolerance`, and every core corner of each shape within `tolerance` of a core corner
    of the other (Hausdorff distance of the corner sets). The corner sets make the test
    blind to how a box's axes are numbered or signed and to a capsule's end order.

    pairs: (k, 2) int64
    returns: (k,) bool
    """
    pairs = np.asarray(pairs, dtype=np.int64).reshape(-1, 2)
    first, second = pairs[:, 0], pairs[:, 1]
    corners_first = core_corners(batch, first)
    corners_second = core_corners(batch, second)
    gaps = np.linalg.norm(corners_first[:, :, None, :] - corners_second[:, None, :, :], axis=3)
    hausdorff = np.maximum(gaps.min(axis=2).max(axis=1), gaps.min(axis=1).max(axis=1))
    return (
        (batch.kinds[first] == batch.kinds[second])
        & (np.abs(batch.radii[first] - batch.radii[second]) <= tolerance)
        & (hausdorff <= tolerance)
    )


# --- Hits over frames -------------------------------------------------------------------


@dataclass(frozen=True)
class FrameHits:
    """Clashing pairs of one test, m rows, one per (frame, pair); rows of several frames
    may be concatenated (`concat_hits`).

    frames: (m,) int64
    names: (m, 2) object array of object names, oriented (a, b) as by `orient_pairs`
    kinds: (m, 2) int8 proxy kinds of a and b
    distances: (m,) float64 signed distance, < 0 is penetration
    points: (m, 3) clash points
    bounds: (m, 2, 3) [lo, hi] world bounds of both shapes together
    """

    frames: np.ndarray
    names: np.ndarray
    kinds: np.ndarray
    distances: np.ndarray
    points: np.ndarray
    bounds: np.ndarray

    def __len__(self) -> int:
        return len(self.frames)


def hits_from_pairs(
    prepared: PreparedTest,
    batch: ShapeBatch,
    frame: int,
    pairs: np.ndarray,
    distances: np.ndarray,
    points_i: np.ndarray,
    points_j: np.ndarray,
) -> FrameHits:
    """FrameHits for pairs that clash at `frame` (the test's criterion already applied).

    pairs: (m, 2) int64 shape indices in `batch`, which is in `prepared.table` order
    distances: (m,); points_i, points_j: (m, 3) closest (or deepest) points on each shape
    The clash point is the midpoint of the two points: on the contact for touching
    shapes, inside both for penetrating ones.
    """
    pairs = np.asarray(pairs, dtype=np.int64).reshape(-1, 2)
    oriented = orient_pairs(prepared, pairs)
    lo, hi = batch.take(pairs.reshape(-1)).aabbs()
    lo, hi = lo.reshape(-1, 2, 3), hi.reshape(-1, 2, 3)
    bounds = np.stack([lo.min(axis=1), hi.max(axis=1)], axis=1)
    midpoints = 0.5 * (np.asarray(points_i, dtype=np.float64) + np.asarray(points_j))
    return FrameHits(
        frames=np.full(len(pairs), frame, dtype=np.int64),
        names=prepared.table.names[oriented].reshape(-1, 2),
        kinds=batch.kinds[oriented].reshape(-1, 2),
        distances=np.asarray(distances, dtype=np.float64).reshape(-1),
        points=midpoints.reshape(-1, 3),
        bounds=bounds.reshape(-1, 2, 3),
    )


def evaluate_frame(
    prepared: PreparedTest,
    batch: ShapeBatch,
    frame: int,
    coherent: CoherentBounds | None = None,
) -> FrameHits:
    """The clashes of one test in one frame.

    batch: the shapes at `frame`, row k = object k of `prepared.table`
    coherent: kept by the caller for this test from frame to frame, so that the broad
        phase builds on the last frame's work (same result without it)
    Only objects in set A or B enter the broad phase; candidate pairs then go through the
    ignore rules, the narrow phase and the test type's criterion.
    """
    if len(batch) != len(prepared.table.names):
        raise ValueError(
            f"batch has {len(batch)} shapes but the object table {len(prepared.table.names)}"
        )
    test = prepared.test
    involved = prepared.involved
    pairs, result = find_contacts(batch.take(involved), broad_phase_margin(test), coherent)
    candidates = involved[pairs]
    keep = eligible_pair_mask(prepared, candidates)
    if test.test_type == "duplicates":
        keep &= duplicate_mask(batch, candidates, test.tolerance)
    else:
        keep &= clash_mask(test.test_type, test.tolerance, result.distance)
    return hits_from_pairs(
        prepared,
        batch,
        frame,
        candidates[keep],
        result.distance[keep],
        result.point_i[keep],
        result.point_j[keep],
    )


def concat_hits(hits: Iterable[FrameHits]) -> FrameHits:
    """All rows of `hits` in order, as one FrameHits."""
    hits = list(hits)
    if not hits:
        return FrameHits(
            frames=np.zeros(0, dtype=np.int64),
            names=np.zeros((0, 2), dtype=object),
            kinds=np.zeros((0, 2), dtype=np.int8),
            distances=np.zeros(0),
            points=np.zeros((0, 3)),
            bounds=np.zeros((0, 2, 3)),
        )
    return concatenate_fields(FrameHits, hits)


def merge_frame_intervals(frames: np.ndarray, step: int = 1) -> list[list[int]]:
    """Sorted, merged [first, last] intervals of the frames given; frames `step` apart
    are consecutive scan frames and join one interval.

    frames: (m,) int, any order, repeats allowed
    returns: [[first, last], ...] ascending
    """
    if step < 1:
        raise ValueError(f"step must be >= 1, got {step}")
    frames = np.unique(np.asarray(frames, dtype=np.int64))
    if not len(frames):
        return []
    starts = np.flatnonzero(np.diff(frames, prepend=frames[0] - step - 1) > step)
    ends = np.append(starts[1:] - 1, len(frames) - 1)
    return np.stack([frames[starts], frames[ends]], axis=1).tolist()


def clash_id(test_name: str, name_a: str, name_b: str) -> str:
    """Stable clash id: the same test and object pair give the same id in every run,
    whatever the pair's order or frame.

    The id is the first 16 hex digits of the SHA-256 of the UTF-8 JSON array
    [test_name, smaller name, larger name] written with json.dumps(ensure_ascii=False,
    separators=(",", ":")); JSON quoting keeps it unambiguous for any names.
    """
    first, second = sorted((name_a, name_b))
    key = json.dumps([test_name, first, second], ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(key.encode("utf-8")).hexdigest()[:16]


def clash_records(test: ClashTest, hits: FrameHits, step: int = 1) -> list[dict[str, Any]]:
    """One clash dict per object pair in `hits` (see the module docstring), status "new".

    hits: the test's FrameHits over all scanned frames
    step: the frame step of the scan, so that frames `step` apart form one interval
    returns: clash dicts sorted by distance (worst first), then id
    """
    if not len(hits):
        return []
    _, a_codes = np.unique(hits.names[:, 0], return_inverse=True)
    _, b_codes = np.unique(hits.names[:, 1], return_inverse=True)
    _, group = np.unique(a_codes * (b_codes.max() + 1) + b_codes, return_inverse=True)
    group = group.reshape(-1)
    # Worst row of each pair: smallest distance, then earliest frame.
    order = np.lexsort((hits.frames, hits.distances, group))
    first_of_group = np.flatnonzero(np.diff(group[order], prepend=-1) != 0)
    worst_rows = order[first_of_group]
    # Frame intervals of all pairs at once: sort by (pair, frame) and break where the
    # pair changes or frames are more than one step apart.
    by_frame = np.lexsort((hits.frames, group))
    pair_sorted, frame_sorted = group[by_frame], hits.frames[by_frame]
    new_pair = np.diff(pair_sorted, prepend=-1) != 0
    gap = np.diff(frame_sorted, prepend=frame_sorted[0]) > step
    starts = np.flatnonzero(new_pair | gap)
    ends = np.append(starts[1:] - 1, len(by_frame) - 1)
    intervals_of_group: list[list[list[int]]] = [[] for _ in worst_rows]
    for pair, first, last in zip(
        pair_sorted[starts].tolist(),
        frame_sorted[starts].tolist(),
        frame_sorted[ends].tolist(),
        strict=True,
    ):
        intervals_of_group[pair].append([first, last])
    records = []
    for pair, row in enumerate(worst_rows.tolist()):
        name_a, name_b = hits.names[row]
        records.append(
            {
                "id": clash_id(test.name, name_a, name_b),
                "test": test.name,
                "type": test.test_type,
                "a": name_a,
                "b": name_b,
                "kinds": [KIND_NAMES[kind] for kind in hits.kinds[row].tolist()],
                "distance": float(hits.distances[row]),
                "point": hits.points[row].tolist(),
                "bounds": hits.bounds[row].tolist(),
                "frames": intervals_of_group[pair],
                "worst_frame": int(hits.frames[row]),
                "status": "new",
            }
        )
    records.sort(key=lambda record: (record["distance"], record["id"]))
    return records


# --- Statuses across runs ----------------------------------------------------------------


def carry_over_status(
    clashes: Sequence[Mapping[str, Any]],
    previous_clashes: Sequence[Mapping[str, Any]],
    test_names: Iterable[str] | None = None,
) -> list[dict[str, Any]]:
    """Statuses of this run's clashes given the previous report's clashes (matched by id):

    - found now, was reviewed/approved: keeps that status (a person set it);
    - found now, was new/active: "active";
    - found now, absent before or resolved before (it came back): "new";
    - found before (not resolved) but not now: carried into the result as "resolved",
      unless its test is not among `test_names` (a test that did not run resolves
      nothing). Clashes resolved in the previous report are dropped.

    test_names: tests of this run; None takes the tests of `clashes`
    returns: new clash dicts, this run's first (in their order), then the resolved ones
    """
    previous_by_id = {record["id"]: record for record in previous_clashes}
    tests_run = {record["test"] for record in clashes} if test_names is None else set(test_names)
    result = []
    for record in clashes:
        before = previous_by_id.get(record["id"])
        status = "new"
        if before is not None and before["status"] in USER_STATUSES:
            status = before["status"]
        elif before is not None and before["status"] != "resolved":
            status = "active"
        result.append({**record, "status": status})
    found_now = {record["id"] for record in clashes}
    for record in previous_clashes:
        if (
            record["id"] not in found_now
            and record["status"] != "resolved"
            and record["test"] in tests_run
        ):
            result.append({**record, "status": "resolved"})
    return result


def effective_fail_on(fail_on: str | None, has_baseline: bool) -> str:
    """`fail_on` if given, else the default: "new" against a baseline (only what changed
    fails a CI run), "any" without one (nothing to compare with)."""
    if fail_on is not None:
        return fail_on
    return "new" if has_baseline else "any"


def count_failing(clashes: Sequence[Mapping[str, Any]], fail_on: str) -> int:
    """How many clashes make a CI run fail under `fail_on`:

    "new": status new; "any": every unresolved clash except approved ones (a person
    accepted those); "never": none.
    """
    if fail_on not in FAIL_ON_CHOICES:
        raise ValueError(f"fail_on must be one of {', '.join(FAIL_ON_CHOICES)}, got {fail_on!r}")
    if fail_on == "new":
        return sum(record["status"] == "new" for record in clashes)
    if fail_on == "any":
        return sum(record["status"] not in ("resolved", "approved") for record in clashes)
    return 0


# --- Grouping ----------------------------------------------------------------------------


def group_by_object(clashes: Sequence[Mapping[str, Any]]) -> dict[str, list[str]]:
    """Object name -> ids of the clashes it is in (as a or b), names sorted."""
    groups: dict[str, list[str]] = {}
    for record in clashes:
        for name in (record["a"], record["b"]):
            groups.setdefault(name, []).append(record["id"])
    return dict(sorted(groups.items()))


def group_by_test(clashes: Sequence[Mapping[str, Any]]) -> dict[str, list[str]]:
    """Test name -> ids of its clashes, in the order given."""
    groups: dict[str, list[str]] = {}
    for record in clashes:
        groups.setdefault(record["test"], []).append(record["id"])
    return groups


# The 13 neighbour cell offsets of a 3x3x3 block that come after (0, 0, 0) in
# lexicographic order: each adjacent cell pair is linked once.
_HALF_NEIGHBOURS = np.array(
    [
        offset
        for offset in ((x, y, z) for x in (-1, 0, 1) for y in (-1, 0, 1) for z in (-1, 0, 1))
        if offset > (0, 0, 0)
    ],
    dtype=np.int64,
)


def group_by_cluster(clashes: Sequence[Mapping[str, Any]], radius: float) -> list[dict[str, Any]]:
    """Spatial clusters of clash points. Points are binned into cubes of side `radius`;
    clashes in the same or touching cubes (faces, edges or corners), transitively, form
    a cluster. So any two clashes closer than `radius` share a cluster; clashes up to
    2 * sqrt(3) * radius apart may too.

    returns: [{"center": [x, y, z] mean point, "clashes": [id, ...]}, ...], largest
             cluster first, then by first id
    """
    if not radius > 0 or not math.isfinite(radius):
        raise ValueError(f"radius must be finite and > 0, got {radius!r}")
    if not clashes:
        return []
    points = np.array([record["point"] for record in clashes], dtype=np.float64).reshape(-1, 3)
    cells = np.floor(points / radius).astype(np.int64)
    unique_cells, cell_of_point = np.unique(cells, axis=0, return_inverse=True)
    cell_of_point = cell_of_point.reshape(-1)
    # One int64 key per cell (row-major over the padded cell range) for searchsorted.
    origin = unique_cells.min(axis=0) - 1
    dims = unique_cells.max(axis=0) - origin + 2
    if float(np.prod(dims.astype(np.float64))) >= 2.0**62:
        raise ValueError("clash points too far apart for this radius; use a larger radius")

    def cell_key(coords: np.ndarray) -> np.ndarray:
        shifted = coords - origin
        return (shifted[..., 0] * dims[1] + shifted[..., 1]) * dims[2] + shifted[..., 2]

    keys = cell_key(unique_cells)  # ascending: np.unique sorts rows lexicographically
    neighbour_keys = cell_key(unique_cells[:, None, :] + _HALF_NEIGHBOURS[None, :, :])
    found = np.searchsorted(keys, neighbour_keys).clip(max=len(keys) - 1)
    linked = keys[found] == neighbour_keys
    edge_from = np.broadcast_to(np.arange(len(keys))[:, None], linked.shape)[linked]
    edge_to = found[linked]
    # Connected components by min-label propagation with pointer jumping.
    labels = np.arange(len(keys))
    while True:
        updated = labels.copy()
        np.minimum.at(updated, edge_from, labels[edge_to])
        np.minimum.at(updated, edge_to, labels[edge_from])
        updated = updated[updated]
        if np.array_equal(updated, labels):
            break
        labels = updated
    cluster_of_point = labels[cell_of_point]
    by_cluster = np.argsort(cluster_of_point, kind="stable")
    boundaries = np.flatnonzero(np.diff(cluster_of_point[by_cluster])) + 1
    ids = [record["id"] for record in clashes]
    clusters = [
        {
            "center": points[members].mean(axis=0).tolist(),
            "clashes": [ids[member] for member in members.tolist()],
        }
        for members in np.split(by_cluster, boundaries)
    ]
    clusters.sort(key=lambda cluster: (-len(cluster["clashes"]), cluster["clashes"][0]))
    return clusters
