"""Clash test definitions and the tests file: fields, validation, JSON form, load/save."""

from __future__ import annotations

import json

import pytest

from collide_addon.clash.tests import (
    TEST_TYPE_DESCRIPTIONS,
    TEST_TYPES,
    ClashTest,
    ClashTestError,
    IgnoreRules,
    Selector,
    clash_test_from_dict,
    clash_test_to_dict,
    clash_tests_from_json,
    clash_tests_to_json,
    load_tests,
    save_tests,
    selector_from_dict,
    selector_to_dict,
)

FULL_TEST = {
    "name": "pipes vs walls",
    "a": {"collections": ["MEP"], "name": "Pipe*", "types": ["MESH"], "properties": {"x": 1}},
    "b": {"properties": {"discipline": "ARCH", "load_bearing": None}},
    "type": "clearance",
    "tolerance": 0.05,
    "geometry": "proxy",
    "continuous": True,
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
    assert test.geometry == "proxy" and test.continuous
    assert test.ignore == IgnoreRules(True, False, True, (("Pipe.001", "Wall.002"),))
    assert clash_test_to_dict(test) == FULL_TEST
    assert clash_test_from_dict(clash_test_to_dict(test)) == test


def test_clash_test_from_dict_defaults_self_test_no_ignores():
    test = clash_test_from_dict({"name": "all", "a": {}, "type": "hard"})
    assert test.set_b is None and test.tolerance == 0.0 and test.ignore == IgnoreRules()
    assert clash_test_to_dict(test)["b"] is None
    # Reports decide on the triangles unless a test says otherwise.
    assert test.geometry == "mesh" and clash_test_to_dict(test)["geometry"] == "mesh"
    # Samples only unless a test asks for the motion between them.
    assert not test.continuous and clash_test_to_dict(test)["continuous"] is False


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
        # An empty list took every object, as if the key were left out.
        ({"a": {"collections": []}}, ".a.collections: an empty list matches nothing"),
        ({"b": {"types": []}}, ".b.types: an empty list matches nothing"),
        ({"a": {"name": 3}}, ".a.name: expected a glob string"),
        ({"b": {"properties": {"k": [1]}}}, ".b.properties.k: expected a string"),
        ({"ignore": {"same_parent": 1}}, ".ignore.same_parent: expected true or false"),
        ({"ignore": {"pairs": [["a"]]}}, ".ignore.pairs: expected a list of [name, name]"),
        ({"geometry": "triangles"}, "geometry must be one of mesh, proxy, got 'triangles'"),
        ({"geometry": None}, "geometry must be one of mesh, proxy, got None"),
        ({"continuous": "yes"}, "continuous must be true or false, got 'yes'"),
        ({"type": "duplicates", "continuous": True}, "duplicates test cannot be continuous"),
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
    with pytest.raises(ClashTestError, match="geometry must be one of"):
        ClashTest("t", geometry="MESH")


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
    # Names that differ only in spaces read the same in every report: both were allowed.
    for look_alike in ("pipes vs walls ", " pipes  vs walls"):
        document["tests"][1]["name"] = look_alike
        message = f"two tests are named 'pipes vs walls' and {look_alike!r}, which read the same"
        with pytest.raises(ClashTestError, match=message):
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


def test_test_types_are_spelled_once_with_their_descriptions():
    assert TEST_TYPES == ("hard", "clearance", "touching", "duplicates")
    assert tuple(TEST_TYPE_DESCRIPTIONS) == TEST_TYPES
    assert all(description for description in TEST_TYPE_DESCRIPTIONS.values())


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # A 400-digit tolerance overflowed math.isfinite: a traceback in the CLI and panel.
        (
            '{"format": "collide-tests", "version": 1, "tests": [{"name": "t", "a": {}, '
            '"b": {}, "type": "hard", "tolerance": ' + "9" * 400 + "}]}",
            "tolerance must be finite",
        ),
        ("[" * 200_000 + "]" * 200_000, "nested too deeply"),
        ('{"format": "collide-tests", "version": ' + "1" * 5000 + "}", "version inf is not"),
        # json.loads kept the second tolerance silently.
        (
            '{"format": "collide-tests", "version": 1, "tests": [{"name": "t", "a": {}, '
            '"type": "hard", "tolerance": 0.01, "tolerance": 0.5}]}',
            "not valid JSON: key 'tolerance' given twice in one object",
        ),
    ],
)
def test_hostile_tests_files_give_one_line_errors(tmp_path, text, expected):
    path = tmp_path / "tests.json"
    path.write_text(text)
    with pytest.raises(ClashTestError, match=expected) as caught:
        load_tests(path)
    assert "\n" not in str(caught.value)


def test_huge_tolerance_given_in_code_is_refused_by_name():
    with pytest.raises(ClashTestError, match="tolerance must be finite"):
        ClashTest("t", tolerance=10**400)


def test_tests_file_read_is_bounded():
    with pytest.raises(ClashTestError, match="larger than 64 MiB"):
        load_tests("/dev/zero")


def test_unknown_keys_with_line_breaks_stay_on_one_line():
    # Found by tests/fuzz: a key "\n" split the error message over two lines.
    with pytest.raises(ClashTestError, match=r"unknown key\(s\) '\\n'; allowed") as caught:
        clash_tests_from_json('{"\\n": null}')
    assert "\n" not in str(caught.value)
    document = {"format": "collide-tests", "version": 1, "tests": [FULL_TEST]}
    document["tests"][0] = {**FULL_TEST, "a": {"properties": {"x\ry": [1]}}}
    with pytest.raises(ClashTestError, match=r"properties\.'x\\ry': expected") as caught:
        clash_tests_from_json(json.dumps(document))


def test_a_tests_file_with_a_byte_order_mark_is_read(tmp_path):
    """PowerShell 5's `Out-File -Encoding utf8` and older Notepad write a BOM first: the
    file was refused ("Unexpected UTF-8 BOM")."""
    path = tmp_path / "tests.json"
    document = {"format": "collide-tests", "version": 1, "tests": [{"name": "all", "a": {}}]}
    document["tests"][0]["type"] = "hard"
    path.write_bytes(b"\xef\xbb\xbf" + json.dumps(document).encode("utf-8"))
    [test] = load_tests(path)
    assert test.name == "all"
