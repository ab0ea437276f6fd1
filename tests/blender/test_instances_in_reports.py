"""Objects a collection instance places (a linked model) in clash tests: selectors see
the objects placed, not the empty placing them, and an instance keeps its name, so its
clashes keep their ids and statuses, when the model changes elsewhere."""

import bpy

from . import scenes


def _linked_structure():
    """A Structure collection (a Slab far away, then a Beam with a load_bearing property)
    excluded from the view layer and placed by the empty StructureLink, as Link or
    Append with Instance Collections leaves a model; a Pipe in MEP 0.5 m into the Beam."""
    scene = bpy.context.scene
    mep, structure = (bpy.data.collections.new(name) for name in ("MEP", "Structure"))
    for collection in (mep, structure):
        scene.collection.children.link(collection)
    scenes.add_object("Slab", scenes.mesh("cube", "Slab"), (0, 0, -5), collection=structure)
    beam = scenes.add_object("Beam", scenes.mesh("cube", "Beam"), (1.5, 0, 0), collection=structure)
    beam["load_bearing"] = True
    scene.view_layers[0].layer_collection.children["Structure"].exclude = True
    link = bpy.data.objects.new("StructureLink", None)
    link.instance_type = "COLLECTION"
    link.instance_collection = structure
    scene.collection.objects.link(link)
    scenes.add_object("Pipe", scenes.mesh("cube", "Pipe"), collection=mep)
    bpy.context.view_layer.update()


def _pairs(addon, set_b: dict) -> list[tuple[str, str]]:
    test = addon.clash.tests.clash_test_from_dict(
        {"name": "pipes", "a": {"collections": ["MEP"]}, "b": set_b, "type": "hard"}
    )
    report = addon.blender.run_clash_report([test], frames=(1, 1, 1)).report
    return sorted((clash["a"], clash["b"]) for clash in report["clashes"])


def test_selectors_take_the_objects_an_instance_places(addon):
    """By the placed object's collections, type, custom properties and name (or the
    instance's own): an empty's were looked at (type EMPTY, no property, the scene's
    collection), and the Beam's clash was dropped or the set refused as matching no
    object."""
    _linked_structure()
    expected = [("Pipe", "StructureLink/Beam")]
    assert _pairs(addon, {}) == expected
    assert _pairs(addon, {"collections": ["Structure"]}) == expected
    assert _pairs(addon, {"types": ["MESH"]}) == expected
    assert _pairs(addon, {"properties": {"load_bearing": True}}) == expected
    assert _pairs(addon, {"name": "Beam*"}) == expected
    assert _pairs(addon, {"name": "StructureLink/*"}) == expected


def test_an_instance_keeps_its_clash_id_when_its_model_loses_another_object(addon):
    """The Slab deleted from the linked model between two runs: the Beam's instance was
    numbered among all of StructureLink's instances ("StructureLink/Beam[1]", then
    "[0]"), so the approved clash came back new and the old one resolved."""
    _linked_structure()
    test = addon.clash.tests.clash_test_from_dict({"name": "hard", "a": {}, "type": "hard"})
    [before] = addon.blender.run_clash_report([test], frames=(1, 1, 1)).report["clashes"]
    baseline = addon.blender.run_clash_report([test], frames=(1, 1, 1)).report
    baseline["clashes"][0]["status"] = "approved"
    bpy.data.objects.remove(bpy.data.objects["Slab"])
    bpy.context.view_layer.update()
    result = addon.blender.run_clash_report([test], frames=(1, 1, 1), baseline=baseline)
    [after] = result.report["clashes"]
    assert (after["id"], after["status"]) == (before["id"], "approved")
    assert after["a"] == "StructureLink/Beam" or after["b"] == "StructureLink/Beam"


def _building_of_windows():
    """A Floor collection placing a Window collection (a Frame) three times through the
    empties Window 1-3, 3 m apart, and a Floor's Slab hidden from the viewport (it is
    still counted among the Floor's objects); the empty Building places the Floor; a
    Pipe in MEP runs through the three frames."""
    scene = bpy.context.scene
    mep, window, floor = (bpy.data.collections.new(name) for name in ("MEP", "Window", "Floor"))
    scene.collection.children.link(mep)
    scenes.add_object("Frame", scenes.mesh("cube", "Frame"), (0, 0, 0), collection=window)
    slab = scenes.add_object("Slab", scenes.mesh("cube", "Slab"), (0, 0, -9), collection=floor)
    slab.hide_viewport = True
    for number in range(1, 4):
        placer = bpy.data.objects.new(f"Window {number}", None)
        placer.instance_type, placer.instance_collection = "COLLECTION", window
        placer.location.x = 3.0 * number
        floor.objects.link(placer)
    building = bpy.data.objects.new("Building", None)
    building.instance_type, building.instance_collection = "COLLECTION", floor
    scene.collection.objects.link(building)
    scenes.add_object("Pipe", scenes.mesh("cube", "Pipe"), (6, 0, 0), (6, 0.2, 0.2), mep)
    bpy.context.view_layer.update()


def test_an_instance_placed_through_nested_instances_is_named_by_the_way_it_is_placed(addon):
    """A frame placed through a window placed by the building was "Building/Frame[k]", k
    counting the building's frames: deleting Window 1 renumbered the frames of Windows 2
    and 3, whose approved clashes came back new beside resolved ones."""
    _building_of_windows()
    test = addon.clash.tests.clash_test_from_dict(
        {"name": "pipes", "a": {"collections": ["MEP"]}, "b": {"name": "Frame"}, "type": "hard"}
    )
    baseline = addon.blender.run_clash_report([test], frames=(1, 1, 1)).report
    assert sorted(clash["b"] for clash in baseline["clashes"]) == [
        f"Building/Window {number}/Frame" for number in (1, 2, 3)
    ]
    for clash in baseline["clashes"]:
        clash["status"] = "approved"
    bpy.data.objects.remove(bpy.data.objects["Window 1"])
    bpy.context.view_layer.update()
    result = addon.blender.run_clash_report([test], frames=(1, 1, 1), baseline=baseline)
    statuses = {clash["b"]: clash["status"] for clash in result.report["clashes"]}
    assert statuses == {
        "Building/Window 1/Frame": "resolved",
        "Building/Window 2/Frame": "approved",
        "Building/Window 3/Frame": "approved",
    }
