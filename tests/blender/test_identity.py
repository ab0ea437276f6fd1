"""Objects are told apart by Blender's full name (library included), never by a name
another object or an instance could also have."""

from __future__ import annotations

import bpy
import pytest

from tests.blender import scenes


def link_library_cube(tmp_path):
    """A linked object "Cube" from lib.blend, linked into the current scene."""
    scenes.add_object("Cube", scenes.mesh("cube"), location=(1.5, 0, 0))
    library = tmp_path / "lib.blend"
    bpy.data.libraries.write(str(library), {bpy.data.objects["Cube"]})
    bpy.ops.wm.read_homefile(use_empty=True)
    with bpy.data.libraries.load(str(library), link=True) as (_, target):
        target.objects = ["Cube"]
    linked = target.objects[0]
    bpy.context.scene.collection.objects.link(linked)
    return linked


@pytest.mark.blender
def test_a_local_and_a_linked_object_of_one_name_are_two_proxies(addon, tmp_path):
    linked = link_library_cube(tmp_path)
    local = scenes.add_object("Cube", scenes.mesh("cube"))
    assert linked.name == local.name == "Cube"
    proxies = scenes.read_proxies(addon)
    assert sorted(proxies.names) == ["Cube", "Cube [lib.blend]"]
    assert bpy.ops.collide.detect() == {"FINISHED"}
    assert [sorted(record) for record in scenes.records()] == [["Cube", "Cube [lib.blend]"]]


@pytest.mark.blender
def test_an_object_named_like_an_instance_key(addon):
    source = scenes.add_object("Src", scenes.mesh("cube"), location=(50, 0, 0))
    collection = bpy.data.collections.new("Parts")
    collection.objects.link(source)
    bpy.context.scene.collection.objects.unlink(source)
    instancer = bpy.data.objects.new("Inst", None)
    instancer.instance_type = "COLLECTION"
    instancer.instance_collection = collection
    bpy.context.scene.collection.objects.link(instancer)
    scenes.add_object("Inst/Src", scenes.mesh("cube"), location=(50.5, 0, 0))
    proxies = scenes.read_proxies(addon)
    # The object keeps its name (it became "Inst/Src (2)" when the instance came first).
    assert sorted(proxies.names) == ["Inst/Src", "Inst/Src (2)"]
    assert proxies.names.index("Inst/Src") == [obj.name for obj in proxies.objects].index(
        "Inst/Src"
    )
    assert bpy.ops.collide.detect() == {"FINISHED"}
    assert len(scenes.records()) == 1


@pytest.mark.blender
def test_unique_names_numbers_repeats_and_skips_names_taken(addon):
    import sys

    unique_names = sys.modules[f"{addon.__name__}.blender.scene"].unique_names
    assert unique_names(["A", "B"]) == ["A", "B"]
    assert unique_names(["A", "A", "A (2)", "A"]) == ["A", "A (3)", "A (2)", "A (4)"]
    # An object's own name is kept: an instance named like it yields.
    assert unique_names(["I/S", "I/S"], [False, True]) == ["I/S (2)", "I/S"]
    assert unique_names(["I/S", "I/S", "I/S (2)"], [False, True, True]) == [
        "I/S (3)",
        "I/S",
        "I/S (2)",
    ]
