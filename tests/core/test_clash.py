"""Clash workflow logic: tests, selectors, ignore rules, criteria, records, statuses, groups."""

from __future__ import annotations

import hashlib
import itertools
import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from collide_addon.core import CoherentBounds, ShapeBatch, pair_distance
from collide_addon.core.clash import (
    ClashTest,
    ClashTestError,
    FrameHits,
    IgnoreRules,
    ObjectMetadata,
    Selector,
    broad_phase_margin,
    carry_over_status,
    clash_id,
    clash_mask,
    clash_records,
    clash_test_from_dict,
    clash_test_to_dict,
    clash_tests_from_json,
    clash_tests_to_json,
    concat_hits,
    core_corners,
    count_failing,
    duplicate_mask,
    effective_fail_on,
    eligible_pair_mask,
    evaluate_frame,
    group_by_cluster,
    group_by_object,
    group_by_test,
    hits_from_pairs,
    load_tests,
    merge_frame_intervals,
    object_table,
    orient_pairs,
    prepare_test,
    save_tests,
    select_objects,
    selector_from_dict,
    selector_to_dict,
)


def rotation_z(angle: float) -> np.ndarray:
    cosine, sine = np.cos(angle), np.sin(angle)
    return np.array([[cosine, -sine, 0.0], [sine, cosine, 0.0], [0.0, 0.0, 1.0]])


def all_pairs(count: int) -> np.ndarray:
    return np.array(list(itertools.combinations(range(count), 2)), dtype=np.int64).reshape(-1, 2)


# --- Definitions and JSON ----------------------------------------------------------------


FULL_TEST = {
    "name": "pipes vs walls",
    "a": {"collections": ["MEP"], "name": "Pipe*", "types": ["MESH"], "properties": {"x": 1}},
    "b": {"properties": {"discipline": "ARCH", "load_bearing": None}},
    "type": "clearance",
    "tolerance": 0.05,
    "ignore": {
        "same_parent": True,
        "same_collection": False,
        "same_instance_source": True,
        "pairs": [["Pipe.001", "Wall.002"]],
    },
}


def test_clash_test_from_dict_reads_every_field_and_round_trips():
    test = clash_test_from_dict(FULL_TEST)
    assert test.name == "pipes vs walls"
    assert test.set_a == Selector(("MEP",), "Pipe*", ("MESH",), {"x": 1})
    assert test.set_b == Selector(properties={"discipline": "ARCH", "load_bearing": None})
    assert test.test_type == "clearance" and test.tolerance == 0.05
    assert test.ignore == IgnoreRules(True, False, True, (("Pipe.001", "Wall.002"),))
    assert clash_test_to_dict(test) == FULL_TEST
    assert clash_test_from_dict(clash_test_to_dict(test)) == test


def test_clash_test_from_dict_defaults_self_test_no_ignores():
    test = clash_test_from_dict({"name": "all", "a": {}, "type": "hard"})
    assert test.set_b is None and test.tolerance == 0.0 and test.ignore == IgnoreRules()
    assert clash_test_to_dict(test)["b"] is None


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"type": "soft"}, "type must be one of hard, clearance, touching, duplicates"),
        ({"tolerance": -0.1}, "tolerance must be finite and >= 0"),
        ({"tolerance": "0.1"}, "tolerance must be a number"),
        ({"tolerance": True}, "tolerance must be a number"),
        ({"type": "clearance", "tolerance": 0}, "needs a required gap"),
        ({"name": " "}, "name must be a non-empty string"),
        ({"colour": "red"}, "unknown key(s) colour"),
        ({"a": {"nmae": "x"}}, ".a: unknown key(s) nmae"),
        ({"a": {"types": "MESH"}}, ".a.types: expected a list of strings"),
        ({"a": {"name": 3}}, ".a.name: expected a glob string"),
        ({"b": {"properties": {"k": [1]}}}, ".b.properties.k: expected a string"),
        ({"ignore": {"same_parent": 1}}, ".ignore.same_parent: expected true or false"),
        ({"ignore": {"pairs": [["a"]]}}, ".ignore.pairs: expected a list of [name, name]"),
    ],
)
def test_clash_test_from_dict_rejects_invalid_fields_naming_them(change, message):
    data = {"name": "t", "a": {}, "type": "hard", **change}
    with pytest.raises(ClashTestError) as error:
        clash_test_from_dict(data, "tests[3]")
    assert message in str(error.value)
    assert str(error.value).startswith("tests[3]")


def test_clash_test_from_dict_requires_name_a_and_type():
    for missing in ("name", "a", "type"):
        data = {"name": "t", "a": {}, "type": "hard"}
        del data[missing]
        with pytest.raises(ClashTestError, match=f"missing required key '{missing}'"):
            clash_test_from_dict(data)


def test_clash_test_constructor_validates():
    with pytest.raises(ClashTestError, match="tolerance must be finite"):
        ClashTest("t", tolerance=float("nan"))
    with pytest.raises(ClashTestError, match="type must be one of"):
        ClashTest("t", test_type="HARD")


def test_selector_dict_round_trip_omits_empty_criteria():
    assert selector_to_dict(Selector()) == {}
    selector = Selector(collections=("A", "B"), name="*.001", properties={"k": None})
    data = selector_to_dict(selector)
    assert data == {"collections": ["A", "B"], "name": "*.001", "properties": {"k": None}}
    assert selector_from_dict(data) == selector


def test_tests_json_round_trip_and_errors(tmp_path):
    tests = [
        clash_test_from_dict(FULL_TEST),
        ClashTest("self", test_type="touching", tolerance=0.001),
    ]
    text = clash_tests_to_json(tests)
    assert json.loads(text)["format"] == "collide-tests"
    assert clash_tests_from_json(text) == tests
    document = json.loads(text)
    document["tests"][1]["name"] = "pipes vs walls"
    with pytest.raises(ClashTestError, match="two tests are named 'pipes vs walls'"):
        clash_tests_from_json(json.dumps(document))
    with pytest.raises(ClashTestError, match="not valid JSON"):
        clash_tests_from_json("{", source="x.json")
    with pytest.raises(ClashTestError, match="format must be 'collide-tests'"):
        clash_tests_from_json(json.dumps({"format": "other", "version": 1, "tests": []}))
    with pytest.raises(ClashTestError, match="version 2 is not supported"):
        clash_tests_from_json(json.dumps({"format": "collide-tests", "version": 2, "tests": []}))
    with pytest.raises(ClashTestError, match="non-empty list"):
        clash_tests_from_json(json.dumps({"format": "collide-tests", "version": 1, "tests": []}))
    with pytest.raises(ClashTestError, match=r"x.json: tests\[1\] \('b'\): type must be"):
        clash_tests_from_json(
            json.dumps(
                {
                    "format": "collide-tests",
                    "version": 1,
                    "tests": [
                        {"name": "a", "a": {}, "type": "hard"},
                        {"name": "b", "a": {}, "type": "nope"},
                    ],
                }
            ),
            source="x.json",
        )


def test_save_and_load_tests(tmp_path):
    tests = [clash_test_from_dict(FULL_TEST)]
    path = tmp_path / "tests.json"
    save_tests(tests, path)
    assert load_tests(path) == tests
    assert [entry.name for entry in tmp_path.iterdir()] == ["tests.json"]
    with pytest.raises(ClashTestError, match="cannot read tests file"):
        load_tests(tmp_path / "missing.json")


# --- Selectors and ignore rules ----------------------------------------------------------


OBJECTS = [
    ObjectMetadata("Pipe.001", "MESH", ("MEP",), "Rack", {"discipline": "MEP"}, "PipeMesh"),
    ObjectMetadata(
        "Pipe.002", "MESH", ("MEP", "Shared"), "Rack", {"discipline": "MEP"}, "PipeMesh"
    ),
    ObjectMetadata("Wall", "MESH", ("ARCH", "Shared"), None, {"discipline": "ARCH", "fire": 1}),
    ObjectMetadata("Lamp", "LIGHT", ("ARCH",), "Rack", {}),
    ObjectMetadata("pipe_lower", "EMPTY", (), None, {"fire": 0}),
]


@pytest.mark.parametrize(
    ("selector", "expected"),
    [
        (Selector(), [True, True, True, True, True]),
        (Selector(name="Pipe*"), [True, True, False, False, False]),
        (Selector(name="*.00[2-9]"), [False, True, False, False, False]),
        (Selector(types=("MESH", "EMPTY")), [True, True, True, False, True]),
        (Selector(collections=("Shared", "ARCH")), [False, True, True, True, False]),
        (Selector(properties={"discipline": "MEP"}), [True, True, False, False, False]),
        (Selector(properties={"fire": None}), [False, False, True, False, True]),
        (Selector(collections=("ARCH",), types=("MESH",)), [False, False, True, False, False]),
    ],
)
def test_select_objects(selector, expected):
    assert select_objects(selector, OBJECTS).tolist() == expected


def test_object_table_codes_and_membership():
    table = object_table(OBJECTS)
    assert table.names.tolist() == [obj.name for obj in OBJECTS]
    parents = table.parent_codes
    assert parents[0] == parents[1] == parents[3] >= 0 and parents[2] == parents[4] == -1
    sources = table.instance_codes
    assert sources[0] == sources[1] >= 0 and (sources[2:] == -1).all()
    assert table.collection_membership.sum(axis=1).tolist() == [1, 2, 2, 1, 0]
    shared = table.collection_membership[1] & table.collection_membership[2]
    assert shared.sum() == 1
    with pytest.raises(ValueError, match="unique"):
        object_table([ObjectMetadata("x"), ObjectMetadata("x")])


def test_eligible_pair_mask_sets_and_each_ignore_rule():
    table = object_table(OBJECTS)
    pairs = all_pairs(len(OBJECTS))

    def eligible(test):
        mask = eligible_pair_mask(prepare_test(test, table), pairs)
        return {tuple(table.names[pair].tolist()) for pair in pairs[mask]}

    pipes = Selector(name="Pipe*")
    others = Selector(name="[!P]*")
    assert eligible(ClashTest("t", pipes)) == {("Pipe.001", "Pipe.002")}
    assert eligible(ClashTest("t", pipes, others)) == {
        ("Pipe.001", "Wall"),
        ("Pipe.001", "Lamp"),
        ("Pipe.002", "Wall"),
        ("Pipe.002", "Lamp"),
        # Globs are case-sensitive, as Blender's names are.
        ("Pipe.001", "pipe_lower"),
        ("Pipe.002", "pipe_lower"),
    }
    everything = set(itertools.combinations([obj.name for obj in OBJECTS], 2))
    assert eligible(ClashTest("t")) == everything
    same_parent = {("Pipe.001", "Pipe.002"), ("Pipe.001", "Lamp"), ("Pipe.002", "Lamp")}
    assert eligible(ClashTest("t", ignore=IgnoreRules(same_parent=True))) == (
        everything - same_parent
    )
    assert eligible(ClashTest("t", ignore=IgnoreRules(same_instance_source=True))) == (
        everything - {("Pipe.001", "Pipe.002")}
    )
    same_collection = {("Pipe.001", "Pipe.002"), ("Pipe.002", "Wall"), ("Wall", "Lamp")}
    assert eligible(ClashTest("t", ignore=IgnoreRules(same_collection=True))) == (
        everything - same_collection
    )
    # Either order, and pairs naming absent objects are ignored rather than errors.
    explicit = IgnoreRules(pairs=(("Wall", "Pipe.001"), ("Lamp", "Ghost")))
    assert eligible(ClashTest("t", ignore=explicit)) == everything - {("Pipe.001", "Wall")}
    reversed_pairs = all_pairs(len(OBJECTS))[:, ::-1]
    mask = eligible_pair_mask(prepare_test(ClashTest("t", ignore=explicit), table), reversed_pairs)
    assert (~mask).sum() == 1 and table.names[reversed_pairs[~mask][0]].tolist() == [
        "Wall",
        "Pipe.001",
    ]


def test_orient_pairs_puts_set_a_first_and_sorts_self_pairs_by_name():
    table = object_table([ObjectMetadata("b"), ObjectMetadata("a"), ObjectMetadata("c")])
    pairs = np.array([[0, 1], [0, 2], [1, 2]])
    self_test = prepare_test(ClashTest("t"), table)
    assert table.names[orient_pairs(self_test, pairs)].tolist() == [
        ["a", "b"],
        ["b", "c"],
        ["a", "c"],
    ]
    c_against_rest = prepare_test(ClashTest("t", Selector(name="c"), Selector()), table)
    assert table.names[orient_pairs(c_against_rest, pairs[1:])].tolist() == [
        ["c", "b"],
        ["c", "a"],
    ]
    assert orient_pairs(self_test, np.zeros((0, 2), dtype=np.int64)).shape == (0, 2)


# --- Criteria ---------------------------------------------------------------------------


def test_broad_phase_margin_per_type():
    assert broad_phase_margin(ClashTest("t", test_type="hard", tolerance=0.01)) == -0.01
    assert broad_phase_margin(ClashTest("t", test_type="clearance", tolerance=0.2)) == 0.2
    assert broad_phase_margin(ClashTest("t", test_type="touching", tolerance=0.001)) == 0.001
    assert broad_phase_margin(ClashTest("t", test_type="duplicates", tolerance=0.01)) == 0.0


def test_clash_mask_boundaries():
    distance = np.array([-0.2, -0.1, -0.05, 0.0, 0.05, 0.1, 0.2])
    assert clash_mask("hard", 0.1, distance).tolist() == [1, 0, 0, 0, 0, 0, 0]
    assert clash_mask("hard", 0.0, distance).tolist() == [1, 1, 1, 0, 0, 0, 0]
    assert clash_mask("clearance", 0.1, distance).tolist() == [1, 1, 1, 1, 1, 0, 0]
    assert clash_mask("touching", 0.1, distance).tolist() == [0, 1, 1, 1, 1, 1, 0]
    assert clash_mask("touching", 0.0, distance).tolist() == [0, 0, 0, 1, 0, 0, 0]
    with pytest.raises(ValueError, match="not a distance-based"):
        clash_mask("duplicates", 0.0, distance)


def test_hard_and_touching_with_one_tolerance_never_report_the_same_pair():
    distance = np.arange(-300, 301) / 1000
    hard = clash_mask("hard", 0.1, distance)
    touching = clash_mask("touching", 0.1, distance)
    assert not (hard & touching).any()
    assert (hard | touching).tolist() == (distance <= 0.1).tolist()


def test_core_corners():
    batch = ShapeBatch.concat(
        [
            ShapeBatch.boxes([[1.0, 2.0, 3.0]], [rotation_z(0.3)], [[1.0, 2.0, 3.0]]),
            ShapeBatch.spheres([[5.0, 0.0, 0.0]], [2.0]),
            ShapeBatch.capsules([[0.0, 0.0, 0.0]], [[0.0, 4.0, 0.0]], [1.0]),
        ]
    )
    corners = core_corners(batch, np.array([0, 1, 2]))
    assert corners.shape == (3, 8, 3)
    assert np.allclose(corners[0].mean(axis=0), [1.0, 2.0, 3.0])
    assert np.allclose(np.linalg.norm(corners[0] - [1.0, 2.0, 3.0], axis=1), np.sqrt(14.0))
    assert np.allclose(corners[1], [5.0, 0.0, 0.0])
    ends = np.unique(np.round(corners[2], 9), axis=0)
    assert np.allclose(ends, [[0.0, 0.0, 0.0], [0.0, 4.0, 0.0]])


def test_duplicate_mask():
    turned = rotation_z(np.pi / 2)
    boxes = ShapeBatch.boxes(
        [[0, 0, 0], [0, 0, 0], [0.005, 0, 0], [0.5, 0, 0], [0, 0, 0]],
        [np.eye(3), turned, np.eye(3), np.eye(3), rotation_z(np.pi / 4)],
        # The quarter turn with swapped x/y extents is the same box.
        [[1, 2, 3], [2, 1, 3], [1, 2, 3], [1, 2, 3], [1, 2, 3]],
    )
    others = ShapeBatch.concat(
        [
            ShapeBatch.capsules([[0, 0, 0], [0, 0, 1]], [[0, 0, 1], [0, 0, 0]], [0.5, 0.5]),
            ShapeBatch.spheres([[0, 0, 0], [0, 0, 0]], [1.0, 1.02]),
            ShapeBatch.boxes([[0, 0, 0]], [np.eye(3)], [[1, 1, 1]]),
        ]
    )
    batch = ShapeBatch.concat([boxes, others])
    pairs = np.array([[0, 1], [0, 2], [0, 3], [0, 4], [5, 6], [7, 8], [7, 9]])
    assert duplicate_mask(batch, pairs, 0.01).tolist() == [1, 1, 0, 0, 1, 0, 0]
    assert duplicate_mask(batch, pairs, 0.05).tolist() == [1, 1, 0, 0, 1, 1, 0]
    assert duplicate_mask(batch, np.zeros((0, 2), dtype=np.int64), 0.01).shape == (0,)


# --- Frames -------------------------------------------------------------------------------


def spheres_scene(names, centers, radii):
    table = object_table([ObjectMetadata(name) for name in names])
    return table, ShapeBatch.spheres(centers, radii)


def test_hits_from_pairs_orients_and_takes_midpoint_and_bounds():
    table, batch = spheres_scene(["b", "a"], [[0, 0, 0], [1.5, 0, 0]], [1.0, 1.0])
    prepared = prepare_test(ClashTest("t"), table)
    result = pair_distance(batch, [0], [1])
    hits = hits_from_pairs(
        prepared, batch, 7, np.array([[0, 1]]), result.distance, result.point_i, result.point_j
    )
    assert hits.frames.tolist() == [7]
    assert hits.names.tolist() == [["a", "b"]]
    assert hits.kinds.tolist() == [[1, 1]]
    assert np.allclose(hits.distances, [-0.5])
    assert np.allclose(hits.points, [[0.75, 0, 0]])
    assert np.allclose(hits.bounds, [[[-1, -1, -1], [2.5, 1, 1]]])


@pytest.mark.parametrize("test_type", ["hard", "clearance", "touching"])
def test_evaluate_frame_agrees_with_brute_force(test_type):
    generator = np.random.default_rng(4)
    count = 60
    names = [f"S{index:02d}" for index in range(count)]
    table, batch = spheres_scene(
        names, generator.uniform(0, 6, (count, 3)), generator.uniform(0.2, 0.8, count)
    )
    test = ClashTest("t", Selector(name="S0*"), Selector(), test_type, tolerance=0.1)
    prepared = prepare_test(test, table)
    hits = evaluate_frame(prepared, batch, 3)
    pairs = all_pairs(count)
    distance = pair_distance(batch, pairs[:, 0], pairs[:, 1]).distance
    expected_mask = clash_mask(test_type, 0.1, distance) & eligible_pair_mask(prepared, pairs)
    expected = {tuple(sorted(table.names[pair])) for pair in pairs[expected_mask]}
    assert {tuple(sorted(pair)) for pair in hits.names.tolist()} == expected
    assert len(expected) > 0
    assert all(name.startswith("S0") for name in hits.names[:, 0])
    assert (hits.frames == 3).all()


def test_evaluate_frame_with_a_broad_phase_kept_across_frames():
    generator = np.random.default_rng(5)
    count = 200
    names = [f"S{index:03d}" for index in range(count)]
    centers = generator.uniform(0, 12, (count, 3))
    radii = generator.uniform(0.2, 0.8, count)
    test = ClashTest("t", Selector(name="S0*"), Selector(), "clearance", tolerance=0.1)
    coherent = CoherentBounds()
    for frame in range(1, 9):
        table, batch = spheres_scene(names, centers, radii)
        prepared = prepare_test(test, table)
        kept = evaluate_frame(prepared, batch, frame, coherent)
        fresh = evaluate_frame(prepared, batch, frame)
        assert kept.names.tolist() == fresh.names.tolist()
        np.testing.assert_array_equal(kept.distances, fresh.distances)
        centers = centers + generator.normal(0.0, 0.05, centers.shape)
    assert coherent.rebuilds < 8


def test_evaluate_frame_duplicates_and_ignore_rule():
    table = object_table(
        [ObjectMetadata("A", parent="P"), ObjectMetadata("B", parent="P"), ObjectMetadata("C")]
    )
    batch = ShapeBatch.boxes(np.zeros((3, 3)), np.stack([np.eye(3)] * 3), np.ones((3, 3)))
    hits = evaluate_frame(prepare_test(ClashTest("d", test_type="duplicates"), table), batch, 1)
    assert sorted(map(tuple, hits.names.tolist())) == [("A", "B"), ("A", "C"), ("B", "C")]
    ignoring = ClashTest("d", test_type="duplicates", ignore=IgnoreRules(same_parent=True))
    hits = evaluate_frame(prepare_test(ignoring, table), batch, 1)
    assert sorted(map(tuple, hits.names.tolist())) == [("A", "C"), ("B", "C")]
    with pytest.raises(ValueError, match="batch has 2 shapes"):
        evaluate_frame(prepare_test(ignoring, table), batch.take([0, 1]), 1)


def make_hits(rows):
    """rows: (frame, a, b, distance)."""
    count = len(rows)
    return FrameHits(
        frames=np.array([row[0] for row in rows], dtype=np.int64),
        names=np.array([[row[1], row[2]] for row in rows], dtype=object).reshape(-1, 2),
        kinds=np.zeros((count, 2), dtype=np.int8),
        distances=np.array([row[3] for row in rows], dtype=np.float64),
        points=np.array([[row[0], 0.0, 0.0] for row in rows]).reshape(-1, 3),
        bounds=np.zeros((count, 2, 3)),
    )


def test_concat_hits():
    empty = concat_hits([])
    assert len(empty) == 0 and empty.names.shape == (0, 2) and empty.bounds.shape == (0, 2, 3)
    joined = concat_hits([make_hits([(1, "a", "b", -1.0)]), make_hits([(2, "c", "d", 0.0)])])
    assert joined.frames.tolist() == [1, 2]
    assert joined.names.tolist() == [["a", "b"], ["c", "d"]]


def test_merge_frame_intervals_examples():
    assert merge_frame_intervals(np.array([5, 1, 2, 3, 9, 10, 3])) == [[1, 3], [5, 5], [9, 10]]
    assert merge_frame_intervals(np.array([1, 3, 5, 9]), step=2) == [[1, 5], [9, 9]]
    assert merge_frame_intervals(np.array([], dtype=np.int64)) == []
    with pytest.raises(ValueError, match="step"):
        merge_frame_intervals(np.array([1]), step=0)


@given(
    st.lists(st.integers(-50, 50), min_size=1, max_size=40),
    st.integers(1, 4),
)
def test_merge_frame_intervals_covers_exactly_the_scanned_frames(offsets, step):
    frames = np.array(offsets) * step + 1
    intervals = merge_frame_intervals(frames, step)
    covered = {frame for first, last in intervals for frame in range(first, last + 1, step)}
    assert covered == set(frames.tolist())
    for (_, last), (first, _) in itertools.pairwise(intervals):
        assert first - last > step


def test_clash_id_is_stable_symmetric_and_documented():
    assert clash_id("t", "a", "b") == clash_id("t", "b", "a")
    assert clash_id("t", "a", "b") != clash_id("u", "a", "b")
    # Names containing separators cannot collide with other splits.
    assert clash_id("t", "a", "b c") != clash_id("t", "a b", "c")
    key = json.dumps(["t", "Cube", "Cube.001"], ensure_ascii=False, separators=(",", ":"))
    expected = hashlib.sha256(key.encode("utf-8")).hexdigest()[:16]
    assert clash_id("t", "Cube.001", "Cube") == expected
    assert len(expected) == 16


def test_clash_records_merges_intervals_and_picks_worst_frame():
    test = ClashTest("walls")
    hits = make_hits(
        [
            (1, "a", "b", -0.1),
            (2, "a", "b", -0.3),
            (3, "a", "b", -0.2),
            (6, "a", "b", -0.3),
            (2, "c", "d", 0.0),
            (4, "c", "d", -0.05),
            (3, "c", "d", -0.05),
        ]
    )
    records = clash_records(test, hits, step=1)
    assert [(record["a"], record["b"]) for record in records] == [("a", "b"), ("c", "d")]
    first, second = records
    assert first["frames"] == [[1, 3], [6, 6]]
    assert first["worst_frame"] == 2  # tie between 2 and 6: earliest wins
    assert first["distance"] == -0.3 and first["point"] == [2.0, 0.0, 0.0]
    assert first["id"] == clash_id("walls", "a", "b")
    assert first["status"] == "new" and first["type"] == "hard" and first["test"] == "walls"
    assert first["kinds"] == ["box", "box"]
    assert second["frames"] == [[2, 4]] and second["worst_frame"] == 3
    assert clash_records(test, hits, step=2)[1]["frames"] == [[2, 4]]
    assert clash_records(test, concat_hits([])) == []


def test_clash_records_step_joins_scan_frames():
    hits = make_hits([(1, "a", "b", -1.0), (6, "a", "b", -1.0), (16, "a", "b", -1.0)])
    assert clash_records(ClashTest("t"), hits, step=5)[0]["frames"] == [[1, 6], [16, 16]]


# --- Statuses -------------------------------------------------------------------------------


def record(identifier, status="new", test="t"):
    return {"id": identifier, "test": test, "a": "x", "b": "y", "status": status}


def test_carry_over_status_all_transitions():
    current = [
        record("kept-new"),
        record("kept-active"),
        record("rev"),
        record("app"),
        record("back"),
        record("fresh"),
    ]
    previous = [
        record("kept-new", "new"),
        record("kept-active", "active"),
        record("rev", "reviewed"),
        record("app", "approved"),
        record("back", "resolved"),
        record("gone", "reviewed"),
        record("old", "resolved"),
        record("other-test", "active", test="not run"),
    ]
    result = carry_over_status(current, previous)
    statuses = {item["id"]: item["status"] for item in result}
    assert statuses == {
        "kept-new": "active",
        "kept-active": "active",
        "rev": "reviewed",
        "app": "approved",
        "back": "new",
        "fresh": "new",
        "gone": "resolved",
    }
    assert [item["id"] for item in result][:6] == [item["id"] for item in current]
    assert current[0]["status"] == "new"  # inputs are not modified
    with_other = carry_over_status(current, previous, test_names=["t", "not run"])
    assert {item["id"]: item["status"] for item in with_other}["other-test"] == "resolved"
    assert carry_over_status([], previous, test_names=[]) == []


def test_effective_fail_on():
    assert effective_fail_on(None, has_baseline=True) == "new"
    assert effective_fail_on(None, has_baseline=False) == "any"
    assert effective_fail_on("never", has_baseline=True) == "never"
    assert effective_fail_on("new", has_baseline=False) == "new"


def test_count_failing():
    clashes = [
        record("1", "new"),
        record("2", "active"),
        record("3", "reviewed"),
        record("4", "approved"),
        record("5", "resolved"),
        record("6", "new"),
    ]
    assert count_failing(clashes, "new") == 2
    assert count_failing(clashes, "any") == 4
    assert count_failing(clashes, "never") == 0
    with pytest.raises(ValueError, match="fail_on"):
        count_failing(clashes, "all")


# --- Groups ---------------------------------------------------------------------------------


def test_group_by_object_and_test():
    clashes = [
        {"id": "1", "test": "t1", "a": "Wall", "b": "Pipe"},
        {"id": "2", "test": "t2", "a": "Pipe", "b": "Duct"},
        {"id": "3", "test": "t1", "a": "Duct", "b": "Wall"},
    ]
    assert group_by_object(clashes) == {"Duct": ["2", "3"], "Pipe": ["1", "2"], "Wall": ["1", "3"]}
    assert group_by_test(clashes) == {"t1": ["1", "3"], "t2": ["2"]}


def test_group_by_cluster_examples():
    points = [[0, 0, 0], [0.5, 0, 0], [0.9, 0.1, 0], [10, 10, 10], [10.2, 10, 10], [-20, 0, 0]]
    clashes = [{"id": str(index), "point": point} for index, point in enumerate(points)]
    clusters = group_by_cluster(clashes, 0.5)
    assert [cluster["clashes"] for cluster in clusters] == [["0", "1", "2"], ["3", "4"], ["5"]]
    assert np.allclose(clusters[1]["center"], [10.1, 10, 10])
    assert group_by_cluster([], 1.0) == []
    with pytest.raises(ValueError, match="radius"):
        group_by_cluster(clashes, 0.0)


@settings(max_examples=60)
@given(
    st.lists(st.tuples(*[st.floats(-5, 5, allow_nan=False)] * 3), min_size=1, max_size=30),
    st.floats(0.1, 3.0),
)
def test_group_by_cluster_joins_points_closer_than_radius(points, radius):
    clashes = [{"id": str(index), "point": list(point)} for index, point in enumerate(points)]
    clusters = group_by_cluster(clashes, radius)
    cluster_of = {
        identifier: number
        for number, cluster in enumerate(clusters)
        for identifier in cluster["clashes"]
    }
    assert sorted(cluster_of) == sorted(clash["id"] for clash in clashes)
    positions = np.array(points)
    for first, second in itertools.combinations(range(len(points)), 2):
        if np.linalg.norm(positions[first] - positions[second]) < radius:
            assert cluster_of[str(first)] == cluster_of[str(second)]
        if np.linalg.norm(positions[first] - positions[second]) > 2 * np.sqrt(3) * radius * len(
            points
        ):
            assert cluster_of[str(first)] != cluster_of[str(second)]
