"""The sidebar panel (View3D > Sidebar > Collide) and its clash list."""

import bpy


class COLLIDE_UL_clashes(bpy.types.UIList):
    """One row per clash: both names, distance (negative: depth) and proxy kinds."""

    def draw_item(self, context, layout, data, item, icon, active_data, active_propname, index):
        row = layout.row(align=True)
        row.label(text=item.name_a, icon="OBJECT_DATA")
        row.label(text=item.name_b, icon="OBJECT_DATA")
        label = "depth" if item.distance < 0 else "gap"
        unit_settings = context.scene.unit_settings
        distance = bpy.utils.units.to_string(
            unit_settings.system, "LENGTH", abs(item.distance) * unit_settings.scale_length
        )
        row.label(text=f"{label} {distance}  ({item.kind_a}/{item.kind_b})")


class COLLIDE_PT_main(bpy.types.Panel):
    bl_label = "Collide"
    bl_idname = "COLLIDE_PT_main"
    bl_space_type = "VIEW_3D"
    bl_region_type = "UI"
    bl_category = "Collide"

    def draw(self, context):
        layout = self.layout
        settings = context.scene.collide
        layout.prop(settings, "scope")
        if settings.scope == "COLLECTION":
            layout.prop(settings, "collection")
        layout.prop(settings, "tolerance")
        row = layout.row(align=True)
        row.prop(settings, "live", toggle=True, icon="PLAY" if not settings.live else "PAUSE")
        row.prop(settings, "show_proxies", toggle=True, icon="SHADING_WIRE")
        layout.prop(settings, "clash_color")
        row = layout.row(align=True)
        row.operator("collide.detect", icon="VIEWZOOM")
        row.operator("collide.clear", icon="X")
        if settings.last_error:
            layout.label(text=settings.last_error, icon="ERROR")
        layout.label(text=f"Clashes: {len(settings.clashes)}")
        layout.template_list(
            "COLLIDE_UL_clashes", "", settings, "clashes", settings, "active_clash_index", rows=4
        )
        obj = context.active_object
        if obj is not None and hasattr(obj, "collide"):
            box = layout.box()
            box.label(text=obj.name, icon="OBJECT_DATA")
            box.prop(obj.collide, "shape")
            fitted = obj.collide.fitted_kind
            if fitted != "NONE":
                looseness = obj.collide.looseness
                text = f"{looseness:.2f}x mesh volume" if looseness > 0 else "open mesh"
                box.label(text=f"Fitted: {fitted.title()}, {text}")


classes = (COLLIDE_UL_clashes, COLLIDE_PT_main)


def register():
    for cls in classes:
        bpy.utils.register_class(cls)


def unregister():
    for cls in reversed(classes):
        bpy.utils.unregister_class(cls)
