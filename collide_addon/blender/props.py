"""Settings, clash tests and results stored in the .blend file: `scene.collide` and
`object.collide`."""

import bpy
from bpy.props import (
    BoolProperty,
    CollectionProperty,
    EnumProperty,
    FloatProperty,
    FloatVectorProperty,
    IntProperty,
    PointerProperty,
    StringProperty,
)

from ..clash.tests import DEFAULT_GEOMETRY, GEOMETRY_DESCRIPTIONS, TEST_TYPE_DESCRIPTIONS
from ..core.constants import KIND_NAMES
from . import draw, session

SCOPE_ITEMS = (
    ("SELECTION", "Selection", "Check the selected objects against each other"),
    ("COLLECTION", "Collection", "Check the objects of one collection (and its children)"),
    ("VISIBLE", "Visible", "Check every visible object of the view layer"),
)
CHECK_ITEMS = (
    (
        "PENETRATION",
        "Penetration",
        "Objects that pass into each other deeper than the tolerance; objects resting on "
        "or touching each other are not clashes",
    ),
    (
        "CONTACT",
        "Contact",
        "Penetrating objects and objects touching or closer than the tolerance",
    ),
)
# With the icons the clash rows show for what decided them (`ui.ICON_ON_PROXY`,
# `ui.ICON_ON_MESH`), so that the buttons are the rows' legend.
LIVE_GEOMETRY_ITEMS = (
    ("PROXY", "Proxy", "Fast: decide on the fitted boxes, spheres and capsules", "MESH_CUBE", 0),
    (
        "MESH",
        "Mesh",
        "Exact: the proxies find the candidate pairs and the evaluated triangles decide "
        "them; objects without triangles are decided on their proxies",
        "MESH_DATA",
        1,
    ),
)
SHAPE_ITEMS = (
    ("AUTO", "Auto", "The smallest of box, sphere and capsule"),
    ("BOX", "Box", "Tight oriented box"),
    ("SPHERE", "Sphere", "Near-minimal enclosing sphere"),
    ("CAPSULE", "Capsule", "Capsule along the principal axis"),
)
TEST_TYPE_ITEMS = tuple(
    (test_type, test_type.capitalize(), description)
    for test_type, description in TEST_TYPE_DESCRIPTIONS.items()
)
# Proxy first, as the panel's own Geometry buttons; each keeps the number it was saved
# with (its place in GEOMETRY_DESCRIPTIONS), so files saved before read the same.
GEOMETRY_ITEMS = tuple(
    sorted(
        (
            (geometry, geometry.capitalize(), description, number)
            for number, (geometry, description) in enumerate(GEOMETRY_DESCRIPTIONS.items())
        ),
        key=lambda item: item[0] != "proxy",
    )
)
SET_B_ITEMS = (
    ("SAME_AS_A", "Same as A", "Check set A against itself"),
    ("SELECTOR", "Own Selection", "Check set A against the objects set B selects"),
)
PROPERTY_VALUE_ITEMS = (
    ("ANY", "Any Value", "The object only needs to have the property"),
    ("STRING", "Text", "The property equals a text"),
    ("INT", "Integer", "The property equals an integer"),
    ("FLOAT", "Number", "The property equals a number"),
    ("BOOL", "Boolean", "The property equals true or false"),
)
# Read from Blender itself: the type names differ between versions (GPENCIL in 3.4,
# GREASEPENCIL in 5.0), and a selector compares them with Object.type. A .blend stores
# the chosen types as bits; the bit of a type is Blender's own number for it (0 to 30,
# fixed for file compatibility), so a file keeps its types in a Blender that lists
# types in another order.
OBJECT_TYPE_ITEMS = tuple(
    (item.identifier, item.name, item.description, 1 << item.value)
    for item in bpy.types.Object.bl_rna.properties["type"].enum_items
)
# The fitted kinds in the core's order, as Blender enum identifiers ("BOX", ...).
KIND_ITEMS = (
    ("NONE", "None", "Not fitted yet"),
    *tuple((name.upper(), name.title(), "") for name in KIND_NAMES),
)


# Updates act on the scene that owns the settings (`self.id_data`), never on
# `context.scene`: a script may set another scene's settings.


def _settings_changed(self, context):
    session.settings_changed(self.id_data)


def _scope_changed(self, context):
    session.settings_changed(self.id_data, who_takes_part=True)


def _shape_changed(self, context):
    """An object's proxy shape: every scene holding the object fits it again."""
    for scene in self.id_data.users_scene:
        session.settings_changed(scene, refit=True)


def _live_changed(self, context):
    session.live_changed(self.id_data)


def _active_clash_changed(self, context):
    # Picking a row selects and frames in the context's scene and view: not for a row
    # another scene's list (a script setting that scene's index).
    if self.id_data == context.scene:
        session.select_clash(context, self.active_clash_index)


def _redraw(self, context):
    draw.redraw_views(context)


class CollideClash(bpy.types.PropertyGroup):
    """One clashing pair of proxies, under the scene's Check and Tolerance."""

    name_a: StringProperty(name="A", description="First object (or instance)")
    name_b: StringProperty(name="B", description="Second object (or instance)")
    object_a: PointerProperty(name="Object A", type=bpy.types.Object)
    object_b: PointerProperty(name="Object B", type=bpy.types.Object)
    kind_a: StringProperty(name="Proxy A")
    kind_b: StringProperty(name="Proxy B")
    distance: FloatProperty(
        name="Distance",
        description="Signed distance between the objects (negative: penetration depth), "
        "measured on what decided the clash: the meshes or the proxies",
        subtype="DISTANCE",
        unit="LENGTH",
    )
    point: FloatVectorProperty(
        name="Point", description="Where the objects meet", size=3, subtype="XYZ", unit="LENGTH"
    )
    on_mesh: BoolProperty(
        name="On Mesh",
        description="Decided on both objects' triangles (else on their proxies)",
    )


class CollideCollectionName(bpy.types.PropertyGroup):
    """A collection a selector takes, by its name (the built-in `name`) rather than by
    pointer: tests imported from JSON keep collections this file does not have (yet)."""


class CollideCustomProperty(bpy.types.PropertyGroup):
    """A custom property (the built-in `name`) a selector requires, with or without a
    value."""

    value_kind: EnumProperty(name="Value", items=PROPERTY_VALUE_ITEMS, default="ANY")
    string_value: StringProperty(name="Text")
    int_value: IntProperty(name="Integer")
    # Six decimals shown: at Blender's two, an imported U-value of 0.2357142857 read 0.24.
    float_value: FloatProperty(name="Number", precision=6)
    # The number as a tests file gave it: a scene keeps `float_value` in 32 bits, which
    # turned an imported 0.2357142857 (an IFC U-value) into 0.23571429, matching no
    # object's 64-bit value; used while `float_value` still holds its 32-bit rounding.
    float_text: StringProperty(options={"HIDDEN"})
    bool_value: BoolProperty(name="Boolean")


class CollideSelector(bpy.types.PropertyGroup):
    """Which objects a set of a clash test takes; every criterion given must hold (see
    clash.tests.Selector). An empty selector takes every object."""

    collections: CollectionProperty(type=CollideCollectionName)
    name_glob: StringProperty(
        name="Name",
        description="Object names matching this glob, case-sensitive (e.g. Pipe.*); "
        "empty: any name",
    )
    object_types: EnumProperty(
        name="Types",
        items=OBJECT_TYPE_ITEMS,
        options={"ENUM_FLAG"},
        description="Object types taken; none chosen: any type",
    )
    custom_properties: CollectionProperty(type=CollideCustomProperty)


class CollideIgnorePair(bpy.types.PropertyGroup):
    """Two objects a clash test never reports together, in either order."""

    name_a: StringProperty(name="A")
    name_b: StringProperty(name="B")


class CollideClashTest(bpy.types.PropertyGroup):
    """One clash test, the scene-side form of clash.tests.ClashTest (converted by
    `clash_test_props`); the built-in `name` is the test's name, unique, as clash ids derive
    from it."""

    test_type: EnumProperty(name="Type", items=TEST_TYPE_ITEMS, default="hard")
    tolerance: FloatProperty(
        name="Tolerance",
        description="Hard: allowed penetration; clearance: required gap; touching: "
        "contact band; duplicates: allowed difference",
        default=0.0,
        min=0.0,
        subtype="DISTANCE",
        unit="LENGTH",
    )
    geometry: EnumProperty(name="Geometry", items=GEOMETRY_ITEMS, default=DEFAULT_GEOMETRY)
    continuous: BoolProperty(
        name="Continuous",
        description="Also test the motion between sampled frames (on the proxies): a clash "
        "that starts and ends between them is reported with its time of first contact "
        "(not for duplicates)",
        default=False,
    )
    set_a: PointerProperty(type=CollideSelector)
    set_b_mode: EnumProperty(name="Set B", items=SET_B_ITEMS, default="SAME_AS_A")
    set_b: PointerProperty(type=CollideSelector)
    ignore_same_parent: BoolProperty(
        name="Same Parent", description="Skip pairs of objects with the same parent"
    )
    ignore_same_collection: BoolProperty(
        name="Same Collection", description="Skip pairs of objects sharing a collection"
    )
    ignore_same_instance_source: BoolProperty(
        name="Same Instance Source",
        description="Skip pairs of instances of the same source (collection, instancer or "
        "shared mesh)",
    )
    ignore_pairs: CollectionProperty(type=CollideIgnorePair)


class CollideSceneSettings(bpy.types.PropertyGroup):
    scope: EnumProperty(
        name="Scope",
        items=SCOPE_ITEMS,
        default="VISIBLE",
        description="Which objects take part",
        update=_scope_changed,
    )
    collection: PointerProperty(
        name="Collection",
        type=bpy.types.Collection,
        description="The collection checked when the scope is Collection",
        update=_scope_changed,
    )
    check: EnumProperty(
        name="Check",
        items=CHECK_ITEMS,
        default="PENETRATION",
        description="What counts as a clash",
        update=_settings_changed,
    )
    tolerance: FloatProperty(
        name="Tolerance",
        description="Penetration: overlaps up to this deep are allowed. Contact: objects "
        "this close count as touching. Contact within float rounding always counts as "
        "touching, never as penetration",
        default=0.0,
        min=0.0,
        subtype="DISTANCE",
        unit="LENGTH",
        update=_settings_changed,
    )
    geometry: EnumProperty(
        name="Geometry",
        items=LIVE_GEOMETRY_ITEMS,
        default="PROXY",
        description="What decides a clash",
        update=_settings_changed,
    )
    live: BoolProperty(
        name="Live",
        description="Check again whenever something moves (playback, scrubbing, edits)",
        default=False,
        update=_live_changed,
    )
    clash_color: FloatVectorProperty(
        name="Clash Colour",
        description="Object colour given to clashing objects",
        size=4,
        subtype="COLOR",
        min=0.0,
        max=1.0,
        default=(1.0, 0.1, 0.05, 1.0),
        update=_settings_changed,
    )
    show_proxies: BoolProperty(
        name="Show Proxies",
        description="Draw the proxy shapes as wireframes in the viewport",
        default=False,
        update=_redraw,
    )
    clashes: CollectionProperty(type=CollideClash)
    active_clash_index: IntProperty(
        name="Active Clash", default=-1, update=_active_clash_changed, options={"SKIP_SAVE"}
    )
    last_error: StringProperty(
        name="Last Error",
        description="Why the last Detect failed, or live mode switched off; cleared by the "
        "next check that goes through, or Clear",
    )
    clash_tests: CollectionProperty(type=CollideClashTest)
    active_clash_test_index: IntProperty(name="Active Clash Test", default=0)


class CollideObjectSettings(bpy.types.PropertyGroup):
    shape: EnumProperty(
        name="Proxy",
        items=SHAPE_ITEMS,
        default="AUTO",
        description="Shape standing in for this object in collision checks",
        update=_shape_changed,
    )
    fitted_kind: EnumProperty(
        name="Fitted", items=KIND_ITEMS, default="NONE", description="The shape last fitted"
    )
    # Set while collide shows the clash colour in `Object.color`; `original_color` then
    # holds the object's own colour (kept on the object, so undo restores both together).
    tinted: BoolProperty(name="Tinted", default=False, options={"HIDDEN"})
    original_color: FloatVectorProperty(
        name="Original Colour", size=4, subtype="COLOR", default=(1.0, 1.0, 1.0, 1.0)
    )


classes = (
    CollideClash,
    CollideCollectionName,
    CollideCustomProperty,
    CollideSelector,
    CollideIgnorePair,
    CollideClashTest,
    CollideSceneSettings,
    CollideObjectSettings,
)


_register_classes, _unregister_classes = bpy.utils.register_classes_factory(classes)


def register():
    _register_classes()
    bpy.types.Scene.collide = PointerProperty(type=CollideSceneSettings)
    bpy.types.Object.collide = PointerProperty(type=CollideObjectSettings)


def unregister():
    del bpy.types.Object.collide
    del bpy.types.Scene.collide
    _unregister_classes()
