"""A stand-in for Blender's UILayout, to draw panels in tests without a window."""

import bpy

ICONS = bpy.types.UILayout.bl_rna.functions["prop"].parameters["icon"].enum_items.keys()


class RecordingLayout:
    """Stands in for a UILayout, which does not exist without a window: checks that every
    property drawn exists, every operator button is registered with the properties it is
    given and every icon exists, and records what was drawn."""

    def __init__(self, drawn: list[str]):
        self.drawn = drawn

    def row(self, **_):
        return self

    column = box = grid_flow = split = row

    def separator(self, **_):
        pass

    def label(self, text="", icon="NONE", **_):
        assert icon in ICONS, icon
        self.drawn.append(f"label: {text}")

    def prop(self, data, name, icon="NONE", **_):
        assert name in data.bl_rna.properties, name
        assert icon in ICONS, icon
        self.drawn.append(name)

    def prop_search(self, data, name, search_data, search_name, **_):
        assert search_name in search_data.bl_rna.properties, search_name
        self.prop(data, name)

    def template_list(self, list_type, list_id, data, name, active_data, active_name, **_):
        assert hasattr(bpy.types, list_type), list_type
        self.prop(data, name)
        self.prop(active_data, active_name)

    def operator(self, idname, icon="NONE", **_):
        assert icon in ICONS, icon
        category, name = idname.split(".")
        self.drawn.append(idname)
        return OperatorButton(getattr(getattr(bpy.ops, category), name).get_rna_type())


class OperatorButton:
    def __init__(self, operator_type):
        object.__setattr__(self, "properties", operator_type.properties)

    def __setattr__(self, name, value):
        assert name in self.properties, name
