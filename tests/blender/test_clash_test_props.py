"""Clash tests stored on the scene: conversion, operators, export report, .blend files."""

import json
import sys
from types import SimpleNamespace

import addon_utils
import bpy
import pytest

from . import scenes
from .layouts import RecordingLayout

LONG_NAME = "a clash test with a long name, longer than an ID name (63 bytes in Blender 3.4) " * 2
TESTS_DOCUMENT = {
    "format": "collide-tests",
    "version": 1,
    "tests": [
        {
            "name": "pipes against ducts",
            "a": {
                "collections": ["Pipes", "Pipes, hot"],
                "name": "Pipe.*",
                "types": ["MESH", "EMPTY"],
                "properties": {
                    "discipline": "MEP",
                    "level": 3,
                    "ratio": 0.1,
                    # An IFC U-value: beyond 32 bits, as the scene stores a number.
                    "ThermalTransmittance": 0.2357142857,
                    "checked": True,
                    "IfcGuid": None,
                },
            },
            "b": {"collections": ["Ducts"]},
            "type": "clearance",
            "tolerance": 0.05,
            "geometry": "proxy",
            "continuous": True,
            "ignore": {
                "same_parent": True,
                "same_collection": False,
                "same_instance_source": True,
                "pairs": [["Pipe.001", "Duct.002"], ["Pipe.003", "Duct.001"]],
            },
        },
        {
            "name": LONG_NAME,
            "a": {},
            "b": None,
            "type": "touching",
            "tolerance": 0.001,
            "geometry": "mesh",
            "continuous": False,
            "ignore": {
                "same_parent": False,
                "same_collection": True,
                "same_instance_source": False,
                "pairs": [],
            },
        },
    ],
}


def module(addon, name):
    return sys.modules[f"{addon.__name__}.{name}"]


def write_tests(tmp_path, document, name="tests.json"):
    path = tmp_path / name
    path.write_text(json.dumps(document), encoding="utf-8")
    return path


def stored_tests(addon):
    return module(addon, "blender.clash_test_props").scene_clash_tests(bpy.context.scene)


def test_json_to_scene_to_clash_tests_to_json_is_exact(addon, tmp_path):
    clash = module(addon, "clash.tests")
    path = write_tests(tmp_path, TESTS_DOCUMENT)
    assert bpy.ops.collide.clash_tests_import(filepath=str(path)) == {"FINISHED"}
    assert len(bpy.context.scene.collide.clash_tests) == 2
    tests = stored_tests(addon)
    assert tests == clash.load_tests(path)
    assert json.loads(clash.clash_tests_to_json(tests)) == TESTS_DOCUMENT

    exported = tmp_path / "exported.json"
    assert bpy.ops.collide.clash_tests_export(filepath=str(exported)) == {"FINISHED"}
    assert json.loads(exported.read_text(encoding="utf-8")) == TESTS_DOCUMENT


def test_a_number_beyond_32_bits_selects_the_objects_it_selects_from_the_file(addon, tmp_path):
    """Imported, 0.2357142857 became the scene's 32-bit 0.23571429: the panel's test
    matched no object (exit 2) where the file's found the wall. A number typed in the
    panel since replaces it."""
    wall = scenes.add_object("Wall", scenes.mesh("cube"))
    wall["ThermalTransmittance"] = 0.2357142857
    scenes.add_object("Pipe", scenes.mesh("cube"), location=(1.5, 0, 0))
    path = tmp_path / "tests.json"
    selector = {"properties": {"ThermalTransmittance": 0.2357142857}}
    document = {"format": "collide-tests", "version": 1, "tests": []}
    document["tests"].append({"name": "walls", "a": selector, "b": {}, "type": "hard"})
    path.write_text(json.dumps(document))
    assert bpy.ops.collide.clash_tests_import(filepath=str(path), mode="REPLACE") == {"FINISHED"}
    tests = addon.blender.scene_clash_tests(bpy.context.scene)
    result = addon.blender.run_clash_report(tests, frames=(1, 1, 1))
    assert [(c["a"], c["b"]) for c in result.report["clashes"]] == [("Wall", "Pipe")]
    item = bpy.context.scene.collide.clash_tests[0].set_a.custom_properties[0]
    item.float_value = 0.5
    [test] = addon.blender.scene_clash_tests(bpy.context.scene)
    assert test.set_a.properties == {"ThermalTransmittance": 0.5}


def test_import_appends_or_replaces_and_leaves_the_scene_alone_on_error(addon, tmp_path):
    path = write_tests(tmp_path, TESTS_DOCUMENT)
    other = write_tests(
        tmp_path,
        {**TESTS_DOCUMENT, "tests": [{"name": "other", "a": {}, "type": "hard"}]},
        "other.json",
    )
    names = lambda: [test.name for test in bpy.context.scene.collide.clash_tests]  # noqa: E731
    bpy.ops.collide.clash_tests_import(filepath=str(path))
    bpy.ops.collide.clash_tests_import(filepath=str(other), mode="APPEND")
    assert names() == ["pipes against ducts", LONG_NAME, "other"]
    with pytest.raises(RuntimeError, match=r"already has clash test.* named other"):
        bpy.ops.collide.clash_tests_import(filepath=str(other), mode="APPEND")
    unknown_type = write_tests(
        tmp_path,
        {**TESTS_DOCUMENT, "tests": [{"name": "x", "a": {"types": ["TEAPOT"]}, "type": "hard"}]},
        "unknown.json",
    )
    with pytest.raises(RuntimeError, match=r"object type.* TEAPOT unknown to this Blender"):
        bpy.ops.collide.clash_tests_import(filepath=str(unknown_type))
    invalid = write_tests(
        tmp_path, {**TESTS_DOCUMENT, "tests": [{"name": "x", "a": {}, "type": "?"}]}, "bad.json"
    )
    with pytest.raises(RuntimeError, match="type must be one of"):
        bpy.ops.collide.clash_tests_import(filepath=str(invalid))
    assert names() == ["pipes against ducts", LONG_NAME, "other"]
    bpy.ops.collide.clash_tests_import(filepath=str(other), mode="REPLACE")
    assert names() == ["other"]


def test_add_remove_move(addon):
    settings = bpy.context.scene.collide
    names = lambda: [test.name for test in settings.clash_tests]  # noqa: E731
    with pytest.raises(RuntimeError, match="Select a clash test"):
        bpy.ops.collide.clash_test_remove()
    for _ in range(3):
        assert bpy.ops.collide.clash_test_add() == {"FINISHED"}
    assert names() == ["Clash Test", "Clash Test 2", "Clash Test 3"]
    assert settings.active_clash_test_index == 2
    assert bpy.ops.collide.clash_test_move(direction="UP") == {"FINISHED"}
    assert names() == ["Clash Test", "Clash Test 3", "Clash Test 2"]
    assert settings.active_clash_test_index == 1
    settings.active_clash_test_index = 0
    assert bpy.ops.collide.clash_test_move(direction="UP") == {"CANCELLED"}
    assert bpy.ops.collide.clash_test_remove() == {"FINISHED"}
    assert names() == ["Clash Test 3", "Clash Test 2"]
    assert settings.active_clash_test_index == 0
    # A new test is a hard test of every object against every other.
    assert [test.name for test in stored_tests(addon)] == names()
    assert all(test.test_type == "hard" and test.set_b is None for test in stored_tests(addon))

    test = settings.clash_tests[0]
    for target in ("SET_A_COLLECTIONS", "SET_B_PROPERTIES", "IGNORE_PAIRS"):
        assert bpy.ops.collide.clash_test_item_add(target=target) == {"FINISHED"}
    assert (len(test.set_a.collections), len(test.set_b.custom_properties)) == (1, 1)
    test.ignore_pairs[0].name_a, test.ignore_pairs[0].name_b = "A", "B"
    assert stored_tests(addon)[0].ignore.pairs == (("A", "B"),)
    assert bpy.ops.collide.clash_test_item_remove(target="IGNORE_PAIRS", index=0) == {"FINISHED"}
    assert bpy.ops.collide.clash_test_item_remove(target="IGNORE_PAIRS", index=0) == {"CANCELLED"}
    assert len(test.ignore_pairs) == 0


def test_invalid_tests_give_the_core_error(addon, tmp_path):
    scenes.add_object("A", scenes.mesh("cube"))
    with pytest.raises(RuntimeError, match="Add a clash test to the scene first"):
        bpy.ops.collide.export_report(directory=str(tmp_path))
    bpy.ops.collide.clash_test_add()
    test = bpy.context.scene.collide.clash_tests[0]
    test.test_type = "clearance"
    with pytest.raises(RuntimeError, match="clearance test needs a required gap"):
        bpy.ops.collide.export_report(directory=str(tmp_path))
    with pytest.raises(RuntimeError, match="clearance test needs a required gap"):
        bpy.ops.collide.clash_tests_export(filepath=str(tmp_path / "tests.json"))
    test.tolerance = 0.1
    bpy.ops.collide.clash_test_add()
    bpy.context.scene.collide.clash_tests[1].name = test.name
    with pytest.raises(RuntimeError, match="two tests are named 'Clash Test'"):
        bpy.ops.collide.export_report(directory=str(tmp_path))
    assert list(tmp_path.iterdir()) == []


def test_export_report_writes_the_reports_of_the_scene_tests(addon, tmp_path):
    scene = bpy.context.scene
    scene.frame_start, scene.frame_end = 1, 3
    scenes.add_object("A", scenes.mesh("cube"))
    scenes.add_object("B", scenes.mesh("cube"), location=(1.5, 0, 0))
    scenes.add_object("Far", scenes.mesh("cube"), location=(10, 0, 0))
    scenes.add_object("Near", scenes.mesh("cube"), location=(0, 2.25, 0))
    path = write_tests(
        tmp_path,
        {
            **TESTS_DOCUMENT,
            "tests": [
                {"name": "hard", "a": {"name": "A"}, "b": {}, "type": "hard"},
                {"name": "gap", "a": {"name": "A"}, "b": {}, "type": "clearance", "tolerance": 0.5},
            ],
        },
    )
    bpy.ops.collide.clash_tests_import(filepath=str(path))
    result = bpy.ops.collide.export_report(
        directory=str(tmp_path), report_name="boxes", write_csv=True, write_bcf=True
    )
    assert result == {"FINISHED"}
    assert {file.name for file in tmp_path.iterdir()} == {
        "tests.json",
        "boxes.json",
        "boxes.html",
        "boxes.csv",
        "boxes.bcf",
    }
    report = json.loads((tmp_path / "boxes.json").read_text(encoding="utf-8"))
    assert report["frames"] == [1, 3, 1]  # the scene's range
    found = {(clash["test"], clash["a"], clash["b"]): clash for clash in report["clashes"]}
    assert set(found) == {("hard", "A", "B"), ("gap", "A", "B"), ("gap", "A", "Near")}
    assert found["hard", "A", "B"]["distance"] == pytest.approx(-0.5, abs=1e-5)
    assert found["hard", "A", "B"]["frames"] == [[1, 3]]
    assert found["gap", "A", "Near"]["distance"] == pytest.approx(0.25, abs=1e-5)

    result = bpy.ops.collide.export_report(
        directory=str(tmp_path), report_name="frame2", frame_start=2, frame_end=2
    )
    assert result == {"FINISHED"}
    report = json.loads((tmp_path / "frame2.json").read_text(encoding="utf-8"))
    assert report["frames"] == [2, 2, 1]
    assert (tmp_path / "frame2.html").is_file() and not (tmp_path / "frame2.csv").exists()

    # The runner behind the button, from Python.
    result = addon.blender.run_clash_report(
        addon.blender.scene_clash_tests(scene), frames=(2, 2, 1)
    )
    assert result.exit_status == 1 and result.report["clashes"] == report["clashes"]


def test_tests_survive_save_and_reload(addon, tmp_path):
    bpy.ops.collide.clash_tests_import(filepath=str(write_tests(tmp_path, TESTS_DOCUMENT)))
    before = stored_tests(addon)
    path = tmp_path / "stored.blend"
    bpy.ops.wm.save_as_mainfile(filepath=str(path))
    bpy.ops.wm.read_homefile(use_empty=True)
    assert stored_tests(addon) == []
    bpy.ops.wm.open_mainfile(filepath=str(path))
    assert stored_tests(addon) == before


def test_unregister_removes_the_clash_test_classes(addon):
    # Property groups are not in bpy.types: ask the classes themselves.
    property_groups = module(addon, "blender.props").classes
    names = (
        "COLLIDE_PT_clash_tests",
        "COLLIDE_UL_clash_tests",
        "COLLIDE_OT_export_report",
        "COLLIDE_OT_clash_tests_import",
    )
    assert all(hasattr(bpy.types, name) for name in names)
    assert all(cls.is_registered for cls in property_groups)
    assert bpy.types.COLLIDE_PT_clash_tests.bl_parent_id == "COLLIDE_PT_main"
    addon_utils.disable(addon.__name__, default_set=True)
    try:
        assert not any(hasattr(bpy.types, name) for name in names)
        assert not any(cls.is_registered for cls in property_groups)
    finally:
        addon_utils.enable(addon.__name__, default_set=True)


def test_panel_draws_every_field_of_the_active_test(addon, tmp_path):
    bpy.ops.collide.clash_tests_import(filepath=str(write_tests(tmp_path, TESTS_DOCUMENT)))
    settings = bpy.context.scene.collide
    drawn: list[str] = []
    layout = RecordingLayout(drawn)
    bpy.types.COLLIDE_PT_clash_tests.draw(SimpleNamespace(layout=layout), bpy.context)
    for test in settings.clash_tests:
        bpy.types.COLLIDE_UL_clash_tests.draw_item(
            None, bpy.context, layout, settings, test, 0, settings, "active_clash_test_index", 0
        )
    for name in (
        "collide.clash_test_add",
        "collide.clash_tests_import",
        "collide.export_report",
        "collide.clash_test_item_remove",
        "name",
        "test_type",
        "tolerance",
        "geometry",
        "continuous",
        "set_b_mode",
        "name_glob",
        "object_types",
        "value_kind",
        "string_value",
        "int_value",
        "float_value",
        "bool_value",
        "ignore_same_instance_source",
        "name_a",
        "name_b",
    ):
        assert name in drawn, name


@pytest.mark.parametrize("name", ["../x", "<absolute>", "sub/x", "..\\x", "", "  ", ".."])
def test_export_report_name_stays_in_the_chosen_folder(addon, tmp_path, name):
    # "../x" and absolute names wrote outside the folder; an empty one wrote hidden
    # ".json" and ".html" files.
    folder = tmp_path / "reports"
    folder.mkdir()
    (folder / "sub").mkdir()
    name = str(tmp_path / "x") if name == "<absolute>" else name
    scenes.add_object("A", scenes.mesh("cube"))
    scenes.add_object("B", scenes.mesh("cube"), location=(1.5, 0, 0))
    bpy.ops.collide.clash_test_add()
    with pytest.raises(RuntimeError, match="must be a file name inside the chosen folder"):
        bpy.ops.collide.export_report(directory=str(folder), report_name=name)
    assert list(tmp_path.rglob("*.*")) == []


def test_the_panel_says_why_a_collection_or_object_a_test_names_is_red(addon, tmp_path):
    """A tests file from another model names collections and objects this file lacks:
    Blender drew those fields red with no word why (stop 37's panel hunt)."""
    bpy.ops.collide.clash_tests_import(filepath=str(write_tests(tmp_path, TESTS_DOCUMENT)))

    def notes() -> list[str]:
        drawn: list[str] = []
        bpy.types.COLLIDE_PT_clash_tests.draw(
            SimpleNamespace(layout=RecordingLayout(drawn)), bpy.context
        )
        return [line for line in drawn if line.startswith("label: No ")]

    assert notes() == [
        "label: No collection 'Pipes' in this file: it selects nothing",
        "label: No collection 'Pipes, hot' in this file: it selects nothing",
        "label: No collection 'Ducts' in this file: it selects nothing",
        "label: No object 'Pipe.001' in this scene: the pair ignores nothing",
        "label: No object 'Duct.002' in this scene: the pair ignores nothing",
        "label: No object 'Pipe.003' in this scene: the pair ignores nothing",
        "label: No object 'Duct.001' in this scene: the pair ignores nothing",
    ]
    bpy.context.scene.collection.children.link(bpy.data.collections.new("Pipes"))
    scenes.add_object("Pipe.001", scenes.mesh("cube"))
    assert not any("'Pipes'" in note or "'Pipe.001'" in note for note in notes())
    assert len(notes()) == 5
