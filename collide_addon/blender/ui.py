"""The sidebar panel (View3D > Sidebar > Collide), its clash list and the clash tests
sub-panel."""

from fnmatch import fnmatchcase

import bpy

from ..core.contact import contact_epsilon, coordinate_bound, largest_coordinate
from ..report.common import FAR_REACH, far_resolution, pair_label, wrapped_lines
from . import session

# Live mode's budget for a check: one frame at 60 fps (seconds). Checks on meshes slower
# than this are pointed out in the panel.
FRAME_SECONDS = 1.0 / 60.0


def _length(context, value: float) -> str:
    """`value` in the scene's length unit, with its sign: "-12.5 cm"."""
    unit_settings = context.scene.unit_settings
    text = bpy.utils.units.to_string(
        unit_settings.system, "LENGTH", abs(value) * unit_settings.scale_length, precision=3
    )
    return f"-{text}" if value < 0 else text


# The icon of a clash row: what decided it, the triangles or the proxies (the icons of
# the Geometry setting's buttons too).
ICON_ON_MESH = "MESH_DATA"
ICON_ON_PROXY = "MESH_CUBE"


# Blender's widget text size in points at a UI scale of 1, and a UI unit in pixels.
_TEXT_POINTS = 11
_UNIT_PIXELS = 20
# What a clash row's text does not get of the sidebar's width, in UI units: the panel's
# and the list's margins and the row's icon (measured in Blender 3.4 under Xvfb at the
# default width: a label of 137 pixels fits in a sidebar of 229).
_ROW_MARGIN_UNITS = 4.4
# The clash list's rows, and what its scroll bar takes besides when there are more
# clashes than that (the same measure: with the FZK-Haus's 147 clashes, rows of two
# GlobalIds fitted without it were cut again by Blender, "06JZ...$8d x 2IxU......", and
# still at 0.45 units; at 0.6 they read whole).
_CLASH_LIST_ROWS = 4
_SCROLL_BAR_UNITS = 0.8
# What a panel label's text does not get of the sidebar's width, in UI units: the
# panel's margins and the label's icon.
_LABEL_MARGIN_UNITS = 4.4
# Between the two names of a clash row.
_NAME_SEPARATOR = " \u00d7 "


class COLLIDE_UL_clashes(bpy.types.UIList):
    """One row per clash: an icon for what decided it and the two objects' names, each
    shortened alone to fit the row (`report.common.pair_label`). The default sidebar is
    about 25 characters wide, so the depth, the proxy kinds and the full names are in
    the details below the list, for the picked row."""

    def draw_item(self, context, layout, data, item, icon, active_data, active_propname, index):
        margin = _ROW_MARGIN_UNITS
        if len(data.clashes) > _CLASH_LIST_ROWS:
            margin += _SCROLL_BAR_UNITS
        room = _text_room(context, margin)
        layout.label(
            text=pair_label(item.name_a, item.name_b, _NAME_SEPARATOR, _text_width, room),
            icon=ICON_ON_MESH if item.on_mesh else ICON_ON_PROXY,
        )

    def filter_items(self, context, data, propname):
        """The list's filter and sort by the two objects' names: the rows' own `name` is
        empty, so Blender's hid every row for any text typed and sorted nothing. A filter
        without wildcards matches within either name, case-insensitive, as Blender's."""
        items = getattr(data, propname)
        flags = []
        if self.filter_name:
            pattern = self.filter_name.lower()
            if not any(character in pattern for character in "*?["):
                pattern = f"*{pattern}*"
            flags = [
                self.bitflag_filter_item
                if fnmatchcase(item.name_a.lower(), pattern)
                or fnmatchcase(item.name_b.lower(), pattern)
                else 0
                for item in items
            ]
        order = []
        if self.use_filter_sort_alpha:
            order = bpy.types.UI_UL_list.sort_items_helper(
                [
                    (index, (item.name_a.lower(), item.name_b.lower()))
                    for index, item in enumerate(items)
                ],
                key=lambda entry: entry[1],
            )
        return flags, order


def _text_room(context, margin_units: float) -> float | None:
    """The pixels a label's text gets of the region's width, `margin_units` UI units
    left for margins and icons, with Blender's text size set for `_text_width` to
    measure in; None without a window (no width to fit)."""
    scale = context.preferences.system.ui_scale
    if scale <= 0 or context.region is None:
        return None
    _set_text_size(scale)
    return context.region.width - margin_units * _UNIT_PIXELS * scale


def _wrapped_label(layout, context, text: str, icon: str) -> None:
    """`text` as labels of whole words that fit the sidebar's width (Blender cuts one
    long label off with "..."), the icon on the first; whole without a window."""
    column = layout.column(align=True)
    room = _text_room(context, _LABEL_MARGIN_UNITS)
    for number, line in enumerate(wrapped_lines(text, _text_width, room)):
        column.label(text=line, icon=icon if number == 0 else "BLANK1")


def _set_text_size(scale: float) -> None:
    import blf

    blf.size(0, _TEXT_POINTS * scale)


def _text_width(text: str) -> float:
    import blf

    return blf.dimensions(0, text)[0]


def mesh_cost_note(scene) -> str | None:
    """What the panel says when the last check on meshes took longer than a frame at
    60 fps: "Mesh check: 290 ms", and in live mode that it cannot keep up (a check of
    2.5 s a frame froze playback under a neutral "Mesh check: 2477 ms"); None otherwise."""
    seconds = session.session_for(scene).mesh_seconds
    if scene.collide.geometry != "MESH" or seconds <= FRAME_SECONDS:
        return None
    milliseconds = f"{seconds * 1e3:.0f}\u00a0ms"
    if scene.collide.live:
        return (
            f"Mesh check {milliseconds}, over a frame ({FRAME_SECONDS * 1e3:.0f}\u00a0ms): "
            "live mode lags; Proxy is faster"
        )
    return f"Mesh check: {milliseconds}"


def far_origin_note(scene) -> str | None:
    """What the panel says when the last check's proxies reach `FAR_REACH` or more from
    the origin, where contacts are decided only to the contact epsilon (a millionth of
    the coordinate, as the reports warn): "Far out: contacts to 2 mm"; None otherwise."""
    live = session.session_for(scene)
    if live.far_note is not None and live.far_note[0] == live.generation:
        return live.far_note[1]
    note = None
    # A bound first: a scene near the origin costs a few maxima, not a turn of every
    # proxy (0.3 ms at 10,000).
    reach = FAR_REACH / scene.unit_settings.scale_length  # in scene units
    if live.proxies is not None and coordinate_bound(live.proxies.batch) >= reach:
        resolution = far_resolution(
            largest_coordinate(live.proxies.batch), scene.unit_settings.scale_length
        )
        # A no-break space: "2 / mm" was split over two lines.
        note = (
            None
            if resolution is None
            else f"Far out: contacts to {resolution.replace(' ', chr(0xA0))}"
        )
    live.far_note = (live.generation, note)
    return note


def _clash_count_text(scene) -> str:
    """ "Clashes: 3", "No clashes" after a check that found none, "Not checked" before
    the first check and after Clear ("Clashes: 0" said all three)."""
    count = len(scene.collide.clashes)
    if count:
        return f"Clashes: {count}"
    checked = session.existing_session(scene)
    return "No clashes" if checked is not None and checked.clashes is not None else "Not checked"


def _draw_clash_details(layout, context, record) -> None:
    """The picked clash in full: names, depth or gap, what decided it, proxy kinds;
    Resolve buttons."""
    box = layout.box()
    column = box.column(align=True)
    # Whole, over lines where long: the list's rows shorten them, and Blender cut
    # "Beam_Steel_IPE300_Level04_0150" and "..._0151" to the same "Beam_Steel_IPE300_Le...".
    _wrapped_label(column, context, record.name_a, "OBJECT_DATA")
    _wrapped_label(column, context, record.name_b, "OBJECT_DATA")
    if abs(record.distance) <= contact_epsilon([tuple(record.point)])[0]:
        column.label(text="Touching")
    else:
        what = "Depth" if record.distance < 0 else "Gap"
        column.label(text=f"{what} {_length(context, abs(record.distance))}")
    if record.on_mesh:
        column.label(text="Decided on the meshes", icon=ICON_ON_MESH)
    else:
        column.label(text="Decided on the proxies", icon=ICON_ON_PROXY)
    column.label(text=f"Proxies: {record.kind_a} / {record.kind_b}")
    row = box.row(align=True)
    row.operator("collide.resolve", text="Resolve", icon="CON_TRANSLIKE")
    row.operator("collide.resolve", text="Both", icon="ARROW_LEFTRIGHT").move_both = True


def _draw_check_notes(layout, context) -> None:
    """What the last check could not do, under the buttons: the error that stopped it,
    the objects it left out, how finely contacts far out were decided."""
    scene = context.scene
    if scene.collide.last_error:
        _wrapped_label(layout, context, scene.collide.last_error, "ERROR")
    for note, icon in (
        (session.left_out_note(scene), "ERROR"),
        (far_origin_note(scene), "INFO"),
    ):
        if note is not None:
            _wrapped_label(layout, context, note, icon)


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
        layout.row().prop(settings, "check", expand=True)
        # Expanded: "Geometry" with a drop-down is cut short at the default width.
        layout.row().prop(settings, "geometry", expand=True)
        note = mesh_cost_note(context.scene)
        if note is not None:
            _wrapped_label(layout, context, note, "ERROR" if settings.live else "SORTTIME")
        layout.prop(settings, "tolerance")
        row = layout.row(align=True)
        row.prop(settings, "live", toggle=True, icon="PLAY" if not settings.live else "PAUSE")
        row.prop(settings, "show_proxies", text="Proxies", toggle=True, icon="SHADING_WIRE")
        layout.prop(settings, "clash_color", text="Colour")
        row = layout.row(align=True)
        row.operator("collide.detect", text="Detect", icon="VIEWZOOM")
        row.operator("collide.clear", icon="X")
        _draw_check_notes(layout, context)
        layout.label(text=_clash_count_text(context.scene))
        layout.template_list(
            "COLLIDE_UL_clashes",
            "",
            settings,
            "clashes",
            settings,
            "active_clash_index",
            rows=_CLASH_LIST_ROWS,
        )
        if 0 <= settings.active_clash_index < len(settings.clashes):
            _draw_clash_details(layout, context, settings.clashes[settings.active_clash_index])
        obj = context.active_object
        if obj is not None and hasattr(obj, "collide"):
            box = layout.box()
            _wrapped_label(box, context, obj.name, "OBJECT_DATA")
            box.prop(obj.collide, "shape")
            fitted = obj.collide.fitted_kind
            if fitted != "NONE":
                looseness = session.looseness_of(context.scene, obj)
                if looseness is None:
                    box.label(text=fitted.title())
                elif looseness > 0:
                    box.label(text=f"{fitted.title()}, {looseness:.2f}\u00d7 volume")
                else:
                    box.label(text=f"{fitted.title()}, open mesh")


class COLLIDE_UL_clash_tests(bpy.types.UIList):
    """One row per clash test: its name (editable), the whole row: beside its type,
    "Clash Test", "Clash Test 2" and "Clash Test 3" all read "Clash T..." at the
    sidebar's default width. The type is in the test's settings below."""

    def draw_item(self, context, layout, data, item, icon, active_data, active_propname, index):
        layout.prop(item, "name", text="", emboss=False)


def _item_remove_button(layout, target: str, index: int) -> None:
    button = layout.operator("collide.clash_test_item_remove", text="", icon="X")
    button.target, button.index = target, index


def _missing_note(layout, context, name: str, found, missing: str) -> None:
    """Under a name field Blender draws red when `found` (a collection of datablocks)
    has no such name: `missing` says why in words ("No collection 'Walls' in this file:
    ..."), since the red alone said nothing (a tests file from another model, a renamed
    collection)."""
    if name and name not in found:
        _wrapped_label(layout, context, missing.format(name=repr(name)), "ERROR")


def _draw_selector(layout, context, selector, target_prefix: str) -> None:
    """The criteria of one set; target_prefix "SET_A" or "SET_B" names its row lists."""
    layout.prop(selector, "name_glob")
    layout.label(text="Object Types (none: any)")
    # Two columns: in three, most types read "Surf...", "Greas...", "Armat..." at the
    # sidebar's default width.
    layout.grid_flow(columns=2, align=True).prop(selector, "object_types")
    for index, item in enumerate(selector.collections):
        row = layout.row(align=True)
        row.prop_search(item, "name", bpy.data, "collections", text="")
        _item_remove_button(row, f"{target_prefix}_COLLECTIONS", index)
        _missing_note(
            layout,
            context,
            item.name,
            bpy.data.collections,
            "No collection {name} in this file: it selects nothing",
        )
    layout.operator(
        "collide.clash_test_item_add", text="Add Collection", icon="OUTLINER_COLLECTION"
    ).target = f"{target_prefix}_COLLECTIONS"
    # A property over two rows, a pair of names too: on one, each read "load_b..." or
    # "P..." at the sidebar's default width.
    for index, item in enumerate(selector.custom_properties):
        column = layout.column(align=True)
        row = column.row(align=True)
        row.prop(item, "name", text="")
        _item_remove_button(row, f"{target_prefix}_PROPERTIES", index)
        row = column.row(align=True)
        row.prop(item, "value_kind", text="")
        if item.value_kind != "ANY":
            row.prop(item, f"{item.value_kind.lower()}_value", text="")
    layout.operator(
        "collide.clash_test_item_add", text="Add Custom Property", icon="PROPERTIES"
    ).target = f"{target_prefix}_PROPERTIES"


def _draw_clash_test(layout, context, test) -> None:
    scene = context.scene
    layout.prop(test, "name")
    layout.prop(test, "test_type")
    layout.prop(test, "tolerance")
    # As buttons, as the panel's own: "Geometry" as a label ran out of room ("Geo...").
    layout.row().prop(test, "geometry", expand=True)
    layout.prop(test, "continuous")
    box = layout.box()
    box.label(text="Set A")
    _draw_selector(box, context, test.set_a, "SET_A")
    box = layout.box()
    box.prop(test, "set_b_mode")
    if test.set_b_mode == "SELECTOR":
        _draw_selector(box, context, test.set_b, "SET_B")
    box = layout.box()
    box.label(text="Ignore Pairs")
    box.prop(test, "ignore_same_parent")
    box.prop(test, "ignore_same_collection")
    box.prop(test, "ignore_same_instance_source")
    for index, pair in enumerate(test.ignore_pairs):
        column = box.column(align=True)
        row = column.row(align=True)
        row.prop_search(pair, "name_a", scene, "objects", text="")
        _item_remove_button(row, "IGNORE_PAIRS", index)
        column.prop_search(pair, "name_b", scene, "objects", text="")
        for name in (pair.name_a, pair.name_b):
            _missing_note(
                column,
                context,
                name,
                scene.objects,
                "No object {name} in this scene: the pair ignores nothing",
            )
    box.operator("collide.clash_test_item_add", text="Add Pair", icon="ADD").target = "IGNORE_PAIRS"


class COLLIDE_PT_clash_tests(bpy.types.Panel):
    bl_label = "Clash Tests"
    bl_idname = "COLLIDE_PT_clash_tests"
    bl_parent_id = "COLLIDE_PT_main"
    bl_space_type = "VIEW_3D"
    bl_region_type = "UI"
    bl_category = "Collide"
    bl_options = {"DEFAULT_CLOSED"}

    def draw(self, context):
        layout = self.layout
        scene = context.scene
        settings = scene.collide
        row = layout.row()
        row.template_list(
            "COLLIDE_UL_clash_tests",
            "",
            settings,
            "clash_tests",
            settings,
            "active_clash_test_index",
            rows=3,
        )
        column = row.column(align=True)
        column.operator("collide.clash_test_add", text="", icon="ADD")
        column.operator("collide.clash_test_remove", text="", icon="REMOVE")
        column.separator()
        column.operator("collide.clash_test_move", text="", icon="TRIA_UP").direction = "UP"
        column.operator("collide.clash_test_move", text="", icon="TRIA_DOWN").direction = "DOWN"
        row = layout.row(align=True)
        row.operator("collide.clash_tests_import", text="Import", icon="IMPORT")
        row.operator("collide.clash_tests_export", text="Export", icon="EXPORT")
        layout.operator("collide.export_report", icon="FILE_TICK")
        index = settings.active_clash_test_index
        if 0 <= index < len(settings.clash_tests):
            _draw_clash_test(layout, context, settings.clash_tests[index])


classes = (COLLIDE_UL_clashes, COLLIDE_PT_main, COLLIDE_UL_clash_tests, COLLIDE_PT_clash_tests)

register, unregister = bpy.utils.register_classes_factory(classes)
