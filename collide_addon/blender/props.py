"""Settings and results stored in the .blend file: `scene.collide` and `object.collide`."""

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

from . import detect, draw, operators

SCOPE_ITEMS = (
    ("SELECTION", "Selection", "Check the selected objects against each other"),
    ("COLLECTION", "Collection", "Check the objects of one collection (and its children)"),
    ("VISIBLE", "Visible", "Check every visible object of the view layer"),
)
SHAPE_ITEMS = (
    ("AUTO", "Auto", "The smallest of box, sphere and capsule"),
    ("BOX", "Box", "Tight oriented box"),
    ("SPHERE", "Sphere", "Near-minimal enclosing sphere"),
    ("CAPSULE", "Capsule", "Capsule along the principal axis"),
)
KIND_ITEMS = (
    ("NONE", "None", "Not fitted yet"),
    ("BOX", "Box", ""),
    ("SPHERE", "Sphere", ""),
    ("CAPSULE", "Capsule", ""),
)


def _settings_changed(self, context):
    detect.settings_changed(context.scene)


def _shape_changed(self, context):
    detect.settings_changed(context.scene, refit=True)


def _live_changed(self, context):
    detect.live_changed(context.scene)


def _active_clash_changed(self, context):
    operators.select_clash(context, self.active_clash_index)


def _redraw(self, context):
    draw.redraw_views(context)


class CollideClash(bpy.types.PropertyGroup):
    """One pair of proxies closer than the tolerance."""

    name_a: StringProperty(name="A", description="First object (or instance)")
    name_b: StringProperty(name="B", description="Second object (or instance)")
    object_a: PointerProperty(name="Object A", type=bpy.types.Object)
    object_b: PointerProperty(name="Object B", type=bpy.types.Object)
    kind_a: StringProperty(name="Proxy A")
    kind_b: StringProperty(name="Proxy B")
    distance: FloatProperty(
        name="Distance",
        description="Signed distance between the proxies (negative: penetration depth)",
        subtype="DISTANCE",
        unit="LENGTH",
    )
    point: FloatVectorProperty(
        name="Point", description="Where the proxies meet", size=3, subtype="XYZ", unit="LENGTH"
    )


class CollideSceneSettings(bpy.types.PropertyGroup):
    scope: EnumProperty(
        name="Scope",
        items=SCOPE_ITEMS,
        default="VISIBLE",
        description="Which objects take part",
        update=_settings_changed,
    )
    collection: PointerProperty(
        name="Collection",
        type=bpy.types.Collection,
        description="The collection checked when the scope is Collection",
        update=_settings_changed,
    )
    tolerance: FloatProperty(
        name="Tolerance",
        description="Report pairs closer than this (0: touching or overlapping; "
        "negative: only penetrations deeper than this)",
        default=0.0,
        subtype="DISTANCE",
        unit="LENGTH",
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
    last_error: StringProperty(name="Last Error", description="Why live mode switched off")


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
    looseness: FloatProperty(
        name="Looseness",
        description="Proxy volume divided by the mesh's own volume (0: the mesh encloses "
        "no volume)",
        default=0.0,
        min=0.0,
    )


classes = (CollideClash, CollideSceneSettings, CollideObjectSettings)


def register():
    for cls in classes:
        bpy.utils.register_class(cls)
    bpy.types.Scene.collide = PointerProperty(type=CollideSceneSettings)
    bpy.types.Object.collide = PointerProperty(type=CollideObjectSettings)


def unregister():
    del bpy.types.Object.collide
    del bpy.types.Scene.collide
    for cls in reversed(classes):
        bpy.utils.unregister_class(cls)
