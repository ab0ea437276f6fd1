"""Clash tests stored on the scene (`scene.collide.clash_tests`, see `props`) to and from
the core's `ClashTest`.

The scene's tests are turned into their JSON form and read back by the core, so the
panel, a tests file and the command line reject the same mistakes with the same messages.
"""

from __future__ import annotations

import json
from typing import Any

import bpy
import numpy as np

from ..clash.tests import (
    TESTS_FORMAT,
    TESTS_VERSION,
    ClashTest,
    ClashTestError,
    Selector,
    clash_tests_from_json,
)

# Custom property values an IntProperty can hold.
INT_PROPERTY_RANGE = (-(2**31), 2**31 - 1)


def _typed_float(value: float) -> float:
    """The number a user typed into a float property: Blender keeps it as float32, so
    0.05 reads back as 0.05000000074505806; the shortest decimal that gives the same
    float32 is the value meant, and keeps JSON -> scene -> JSON exact."""
    return float(str(np.float32(value)))


def _stored_float(item) -> float:
    """A custom property's number: the one a tests file gave (`float_text`) while the
    scene's 32-bit field still holds its rounding (no one typed another since), else the
    field's, as `_typed_float` reads it."""
    if item.float_text:
        exact = float(item.float_text)
        if np.float32(exact) == np.float32(item.float_value):
            return exact
    return _typed_float(item.float_value)


def _selector_dict(selector_props, where: str) -> dict[str, Any]:
    """JSON form of a `CollideSelector`; criteria left empty are omitted."""
    data: dict[str, Any] = {}
    if len(selector_props.collections):
        data["collections"] = [item.name for item in selector_props.collections]
    if selector_props.name_glob:
        data["name"] = selector_props.name_glob
    if selector_props.object_types:
        # In Blender's order of object types: an ENUM_FLAG property is a set.
        type_items = selector_props.bl_rna.properties["object_types"].enum_items
        data["types"] = [
            item.identifier for item in type_items if item.identifier in selector_props.object_types
        ]
    properties: dict[str, Any] = {}
    for item in selector_props.custom_properties:
        if item.name in properties:
            raise ClashTestError(f"{where}: custom property {item.name!r} is given twice")
        properties[item.name] = {
            "ANY": None,
            "STRING": item.string_value,
            "INT": item.int_value,
            "FLOAT": _stored_float(item),
            "BOOL": item.bool_value,
        }[item.value_kind]
    if properties:
        data["properties"] = properties
    return data


def clash_test_dict(test_props) -> dict[str, Any]:
    """JSON form (`clash.tests.clash_test_from_dict`'s input) of a `CollideClashTest`."""
    where = f"clash test {test_props.name!r}"
    return {
        "name": test_props.name,
        "a": _selector_dict(test_props.set_a, f"{where}, set A"),
        "b": (
            None
            if test_props.set_b_mode == "SAME_AS_A"
            else _selector_dict(test_props.set_b, f"{where}, set B")
        ),
        "type": test_props.test_type,
        "tolerance": _typed_float(test_props.tolerance),
        "geometry": test_props.geometry,
        "continuous": test_props.continuous,
        "ignore": {
            "same_parent": test_props.ignore_same_parent,
            "same_collection": test_props.ignore_same_collection,
            "same_instance_source": test_props.ignore_same_instance_source,
            "pairs": [[pair.name_a, pair.name_b] for pair in test_props.ignore_pairs],
        },
    }


def scene_clash_tests(scene) -> list[ClashTest]:
    """The clash tests stored on `scene`, in panel order; [] when it has none.

    Raises ClashTestError (the core's message, prefixed with the scene) when a test is
    invalid or two share a name.
    """
    stored = scene.collide.clash_tests
    if not len(stored):
        return []
    document = {
        "format": TESTS_FORMAT,
        "version": TESTS_VERSION,
        "tests": [clash_test_dict(test_props) for test_props in stored],
    }
    return clash_tests_from_json(json.dumps(document), source=f"scene {scene.name!r}")


def check_object_types(tests: list[ClashTest], source: str = "") -> None:
    """Refuse selectors naming an object type this Blender does not know ("mesh",
    "MESHY"): their set would match nothing, reported as that alone. Raises
    ClashTestError naming the test, the set, the types and the known ones."""
    known = [item.identifier for item in bpy.types.Object.bl_rna.properties["type"].enum_items]
    known_set = set(known)
    prefix = f"{source}: " if source else ""
    for test in tests:
        for label, selector in (("A", test.set_a), ("B", test.set_b)):
            unknown = sorted(set(selector.types) - known_set) if selector else []
            if unknown:
                raise ClashTestError(
                    f"{prefix}clash test {test.name!r}, set {label}: object type(s) "
                    f"{', '.join(unknown)} unknown to this Blender (it knows {', '.join(known)})"
                )


def _selector_to_props(selector: Selector, selector_props, where: str) -> None:
    selector_props.collections.clear()
    for collection_name in selector.collections:
        selector_props.collections.add().name = collection_name
    selector_props.name_glob = selector.name or ""
    selector_props.object_types = set(selector.types)
    selector_props.custom_properties.clear()
    for key, value in selector.properties.items():
        item = selector_props.custom_properties.add()
        item.name = key
        if value is None:
            item.value_kind = "ANY"
        elif isinstance(value, bool):  # before int: bool is an int subclass
            item.value_kind, item.bool_value = "BOOL", value
        elif isinstance(value, int):
            low, high = INT_PROPERTY_RANGE
            if not low <= value <= high:
                raise ClashTestError(
                    f"{where}: custom property {key!r}: {value} is outside the integers a "
                    f"scene can store ({low} to {high})"
                )
            item.value_kind, item.int_value = "INT", value
        elif isinstance(value, float):
            item.value_kind, item.float_value, item.float_text = "FLOAT", value, repr(value)
        else:
            item.value_kind, item.string_value = "STRING", value


def clash_test_to_props(test: ClashTest, test_props) -> None:
    """Write `test` into a `CollideClashTest`, replacing everything it held.

    Raises ClashTestError for what a scene cannot hold: an object type this Blender does
    not know, an integer property value beyond 32 bits.
    """
    check_object_types([test])
    where = f"clash test {test.name!r}"
    test_props.name = test.name
    test_props.test_type = test.test_type
    test_props.tolerance = test.tolerance
    test_props.geometry = test.geometry
    test_props.continuous = test.continuous
    _selector_to_props(test.set_a, test_props.set_a, f"{where}, set A")
    test_props.set_b_mode = "SAME_AS_A" if test.set_b is None else "SELECTOR"
    _selector_to_props(test.set_b or Selector(), test_props.set_b, f"{where}, set B")
    test_props.ignore_same_parent = test.ignore.same_parent
    test_props.ignore_same_collection = test.ignore.same_collection
    test_props.ignore_same_instance_source = test.ignore.same_instance_source
    test_props.ignore_pairs.clear()
    for name_a, name_b in test.ignore.pairs:
        pair = test_props.ignore_pairs.add()
        pair.name_a, pair.name_b = name_a, name_b
