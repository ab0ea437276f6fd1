"""Operators: check now, clear, select and resolve a clash; edit, import and export the scene's
clash tests and export a clash report."""

import os
import sys

import bpy
from bpy.props import BoolProperty, EnumProperty, IntProperty, StringProperty
from bpy_extras.io_utils import ExportHelper, ImportHelper

from ..clash.tests import ClashTestError, load_tests, save_tests
from . import clash_test_props, report_run, session
from .resolve import resolve

# What each stage of a check does, as the background progress lines name it.
_STAGE_LABELS = {
    "reading": "reading proxies",
    "fitting": "fitting proxies",
    "meshes": "deciding pairs on meshes",
}


def _progress_reporter(context):
    """A progress callback: the cursor counter in the UI, a stderr line in background."""
    window_manager = context.window_manager
    background = bpy.app.background
    state = {"started": False, "last": None, "printed": None}

    def progress(done: int, total: int, stage: str) -> None:
        if total < 50:
            return
        percent = 100 * done // total
        if not state["started"]:
            state["started"] = True
            if not background:
                window_manager.progress_begin(0, 100)
        if (stage, percent) == state["last"]:
            return
        state["last"] = (stage, percent)
        if background:
            # Each tenth of a stage once, as the count passes it (fits are reported a
            # group at a time, which seldom lands on a round percentage).
            if (stage, percent // 10) != state["printed"]:
                state["printed"] = (stage, percent // 10)
                label = _STAGE_LABELS[stage]
                print(f"collide: {label} {percent // 10 * 10}%", file=sys.stderr)
        else:
            window_manager.progress_update(percent)

    def end() -> None:
        if state["started"] and not background:
            window_manager.progress_end()

    return progress, end


class COLLIDE_OT_detect(bpy.types.Operator):
    """Check the objects in scope for clashes now"""

    bl_idname = "collide.detect"
    bl_label = "Detect Clashes"
    bl_options = {"REGISTER", "UNDO"}

    @classmethod
    def poll(cls, context):
        settings = context.scene.collide
        if settings.scope == "COLLECTION" and settings.collection is None:
            cls.poll_message_set("Choose a collection to check")
            return False
        return True

    def execute(self, context):
        scene = context.scene
        progress, end = _progress_reporter(context)
        try:
            clashes = session.check(
                scene, context.evaluated_depsgraph_get(), progress=progress, look_again=True
            )
        except ValueError as error:  # SceneReadError, or input the core rejects
            self.report({"ERROR"}, session.check_failed(scene, error))
            return {"CANCELLED"}
        finally:
            end()
        proxies = session.session_for(scene).proxies
        decided = "meshes" if scene.collide.geometry == "MESH" else "proxies"
        left_out = session.left_out_note(scene)
        self.report(
            {"WARNING"} if len(clashes) or left_out else {"INFO"},
            f"{len(clashes)} clash(es) among {len(proxies.names)} objects, decided on their "
            f"{decided}" + (f". {left_out}" if left_out else ""),
        )
        return {"FINISHED"}


class COLLIDE_OT_clear(bpy.types.Operator):
    """Remove the results and restore every colour and viewport setting changed"""

    bl_idname = "collide.clear"
    bl_label = "Clear"
    bl_options = {"REGISTER", "UNDO"}

    def execute(self, context):
        if context.scene.collide.live:
            context.scene.collide.live = False
        session.clear(context.scene)
        return {"FINISHED"}


class COLLIDE_OT_select_clash(bpy.types.Operator):
    """Select both objects of a clash and frame them"""

    bl_idname = "collide.select_clash"
    bl_label = "Select Clash"
    bl_options = {"REGISTER", "UNDO"}

    index: bpy.props.IntProperty(name="Index", min=0)

    def execute(self, context):
        if not session.select_clash(context, self.index):
            self.report({"WARNING"}, f"No clash {self.index} with objects in this view layer")
            return {"CANCELLED"}
        return {"FINISHED"}


class COLLIDE_OT_resolve(bpy.types.Operator):
    """Move the active object of the picked clash (or of the selected objects' clashes)
    out by the shortest translation that separates the pair, then check again"""

    bl_idname = "collide.resolve"
    bl_label = "Resolve"
    bl_options = {"REGISTER", "UNDO"}

    use_selection: BoolProperty(
        name="Selected Objects",
        description="Resolve every clash of the selected objects, not only the picked row",
    )
    move_both: BoolProperty(
        name="Move Both", description="Move each object of a pair half the way apart"
    )
    use_mesh: BoolProperty(
        name="Exact Meshes",
        description="Move until the meshes are apart (checked on their triangles), not "
        "only the proxies; a mesh inside another gets no move",
    )

    @classmethod
    def description(cls, context, properties):
        # The panel's "Both" button is this operator too: it showed the active object's
        # move as its tooltip.
        if properties.move_both:
            return (
                "Move both objects of the picked clash (or of the selected objects' "
                "clashes) half the shortest separating translation each, then check again"
            )
        return " ".join(cls.__doc__.split())

    @classmethod
    def poll(cls, context):
        settings = context.scene.collide
        if 0 <= settings.active_clash_index < len(settings.clashes):
            return True
        if len(settings.clashes) and len(context.view_layer.objects.selected):
            return True
        cls.poll_message_set("Pick a clash in the list, or select objects that clash")
        return False

    def execute(self, context):
        try:
            outcome = resolve(context, self.use_selection, self.move_both, self.use_mesh)
        except ValueError as error:  # SceneReadError, or input the core rejects
            self.report({"ERROR"}, str(error))
            return {"CANCELLED"}
        for warning in outcome.warnings:
            self.report({"WARNING"}, warning)
        if not outcome.moved:
            if not outcome.warnings:
                self.report({"INFO"}, "Nothing to move: the pairs are apart")
            return {"CANCELLED"}
        self.report({"INFO"}, f"Moved {', '.join(outcome.moved)}")
        return {"FINISHED"}


def _active_clash_test(context):
    """The clash test selected in the panel, or None."""
    settings = context.scene.collide
    index = settings.active_clash_test_index
    return settings.clash_tests[index] if 0 <= index < len(settings.clash_tests) else None


def _poll_active_clash_test(cls, context) -> bool:
    if _active_clash_test(context) is None:
        cls.poll_message_set("Select a clash test in the list")
        return False
    return True


def _poll_has_clash_tests(cls, context, message: str) -> bool:
    if not len(context.scene.collide.clash_tests):
        cls.poll_message_set(message)
        return False
    return True


def _unique_test_name(settings, wanted: str) -> str:
    """`wanted`, or `wanted` with the first free number appended ("Clash Test 2")."""
    taken = {test.name for test in settings.clash_tests}
    name, number = wanted, 1
    while name in taken:
        number += 1
        name = f"{wanted} {number}"
    return name


class COLLIDE_OT_clash_test_add(bpy.types.Operator):
    """Add a hard clash test of every object against every other"""

    bl_idname = "collide.clash_test_add"
    bl_label = "Add Clash Test"
    bl_options = {"REGISTER", "UNDO"}

    def execute(self, context):
        settings = context.scene.collide
        test = settings.clash_tests.add()
        test.name = _unique_test_name(settings, "Clash Test")
        settings.active_clash_test_index = len(settings.clash_tests) - 1
        return {"FINISHED"}


class COLLIDE_OT_clash_test_remove(bpy.types.Operator):
    """Remove the selected clash test"""

    bl_idname = "collide.clash_test_remove"
    bl_label = "Remove Clash Test"
    bl_options = {"REGISTER", "UNDO"}

    poll = classmethod(_poll_active_clash_test)

    def execute(self, context):
        settings = context.scene.collide
        settings.clash_tests.remove(settings.active_clash_test_index)
        settings.active_clash_test_index = min(
            settings.active_clash_test_index, len(settings.clash_tests) - 1
        )
        return {"FINISHED"}


class COLLIDE_OT_clash_test_move(bpy.types.Operator):
    """Move the selected clash test up or down the list (the order of the report)"""

    bl_idname = "collide.clash_test_move"
    bl_label = "Move Clash Test"
    bl_options = {"REGISTER", "UNDO"}

    direction: EnumProperty(items=(("UP", "Up", ""), ("DOWN", "Down", "")), default="UP")

    poll = classmethod(_poll_active_clash_test)

    def execute(self, context):
        settings = context.scene.collide
        index = settings.active_clash_test_index
        target = index - 1 if self.direction == "UP" else index + 1
        if not 0 <= target < len(settings.clash_tests):
            return {"CANCELLED"}
        settings.clash_tests.move(index, target)
        settings.active_clash_test_index = target
        return {"FINISHED"}


# The lists inside a clash test the panel edits row by row: target -> (selector or None
# for the test itself, collection property).
_TEST_LISTS = {
    "SET_A_COLLECTIONS": ("set_a", "collections"),
    "SET_A_PROPERTIES": ("set_a", "custom_properties"),
    "SET_B_COLLECTIONS": ("set_b", "collections"),
    "SET_B_PROPERTIES": ("set_b", "custom_properties"),
    "IGNORE_PAIRS": (None, "ignore_pairs"),
}
_TEST_LIST_ITEMS = tuple((target, target.replace("_", " ").title(), "") for target in _TEST_LISTS)


def _test_list(test, target: str):
    owner_name, list_name = _TEST_LISTS[target]
    owner = test if owner_name is None else getattr(test, owner_name)
    return getattr(owner, list_name)


class COLLIDE_OT_clash_test_item_add(bpy.types.Operator):
    """Add a row: a collection, a custom property or an ignored pair"""

    bl_idname = "collide.clash_test_item_add"
    bl_label = "Add"
    bl_options = {"REGISTER", "UNDO"}

    target: EnumProperty(items=_TEST_LIST_ITEMS)

    poll = classmethod(_poll_active_clash_test)

    def execute(self, context):
        _test_list(_active_clash_test(context), self.target).add()
        return {"FINISHED"}


class COLLIDE_OT_clash_test_item_remove(bpy.types.Operator):
    """Remove this row"""

    bl_idname = "collide.clash_test_item_remove"
    bl_label = "Remove"
    bl_options = {"REGISTER", "UNDO"}

    target: EnumProperty(items=_TEST_LIST_ITEMS)
    index: IntProperty(min=0)

    poll = classmethod(_poll_active_clash_test)

    def execute(self, context):
        rows = _test_list(_active_clash_test(context), self.target)
        if self.index >= len(rows):
            return {"CANCELLED"}
        rows.remove(self.index)
        return {"FINISHED"}


class COLLIDE_OT_clash_tests_import(bpy.types.Operator, ImportHelper):
    """Read clash tests from a tests file (JSON) into the scene"""

    bl_idname = "collide.clash_tests_import"
    bl_label = "Import Clash Tests"
    bl_options = {"REGISTER", "UNDO"}

    filename_ext = ".json"
    filter_glob: StringProperty(default="*.json", options={"HIDDEN"})
    mode: EnumProperty(
        name="Mode",
        items=(
            ("REPLACE", "Replace", "Replace the scene's clash tests with the file's"),
            ("APPEND", "Append", "Add the file's clash tests after the scene's"),
        ),
        default="REPLACE",
    )

    def execute(self, context):
        settings = context.scene.collide
        try:
            tests = load_tests(self.filepath)
        except ClashTestError as error:
            self.report({"ERROR"}, str(error))
            return {"CANCELLED"}
        kept = len(settings.clash_tests) if self.mode == "APPEND" else 0
        duplicate_names = sorted(
            {test.name for test in settings.clash_tests[:kept]} & {test.name for test in tests}
        )
        if duplicate_names:
            self.report(
                {"ERROR"}, f"The scene already has clash test(s) named {', '.join(duplicate_names)}"
            )
            return {"CANCELLED"}
        # New tests go after the old ones, which go only once every new one is written:
        # a test the scene cannot hold leaves the scene as it was.
        old_count = len(settings.clash_tests)
        try:
            for test in tests:
                clash_test_props.clash_test_to_props(test, settings.clash_tests.add())
        except ClashTestError as error:
            while len(settings.clash_tests) > old_count:
                settings.clash_tests.remove(len(settings.clash_tests) - 1)
            self.report({"ERROR"}, str(error))
            return {"CANCELLED"}
        for index in reversed(range(kept, old_count)):
            settings.clash_tests.remove(index)
        settings.active_clash_test_index = kept
        self.report({"INFO"}, f"Imported {len(tests)} clash test(s)")
        return {"FINISHED"}


class COLLIDE_OT_clash_tests_export(bpy.types.Operator, ExportHelper):
    """Write the scene's clash tests to a tests file (JSON), for --tests or another scene"""

    bl_idname = "collide.clash_tests_export"
    bl_label = "Export Clash Tests"

    filename_ext = ".json"
    filter_glob: StringProperty(default="*.json", options={"HIDDEN"})

    @classmethod
    def poll(cls, context):
        return _poll_has_clash_tests(cls, context, "The scene has no clash tests")

    def execute(self, context):
        try:
            save_tests(clash_test_props.scene_clash_tests(context.scene), self.filepath)
        except (ClashTestError, OSError) as error:
            self.report({"ERROR"}, str(error))
            return {"CANCELLED"}
        self.report({"INFO"}, f"Wrote {self.filepath}")
        return {"FINISHED"}


REPORT_FORMATS = ("json", "html", "csv", "bcf")
# The export's frame range settings, named as the scene's.
FRAME_RANGE = ("frame_start", "frame_end", "frame_step")


def is_plain_file_name(name: str) -> bool:
    """Whether `name` names a file in a folder rather than leaving it (a separator, an
    absolute path, "." or "..") or hiding it (empty or blank: ".json")."""
    separators = {os.sep, os.altsep or os.sep, "/", "\\"}
    return (
        bool(name.strip())
        and name not in (".", "..")
        and not any(separator in name for separator in separators)
        and "\x00" not in name
    )


class COLLIDE_OT_export_report(bpy.types.Operator):
    """Run the scene's clash tests over a frame range and write the clash reports"""

    bl_idname = "collide.export_report"
    bl_label = "Export Clash Report"

    directory: StringProperty(name="Folder", subtype="DIR_PATH")
    filter_folder: BoolProperty(default=True, options={"HIDDEN"})
    report_name: StringProperty(
        name="File Name",
        default="clash_report",
        description="The reports are written as NAME.json, NAME.html, NAME.csv, NAME.bcf",
    )
    # Not remembered between runs: unset, they are the scene's frame range.
    frame_start: IntProperty(name="Start", options={"SKIP_SAVE"})
    frame_end: IntProperty(name="End", options={"SKIP_SAVE"})
    frame_step: IntProperty(name="Step", min=1, default=1, options={"SKIP_SAVE"})
    substeps: IntProperty(
        name="Substeps",
        min=1,
        default=1,
        description="Samples per frame, so fast movers cannot pass through thin objects",
    )
    write_json: BoolProperty(name="JSON", default=True)
    write_html: BoolProperty(name="HTML", default=True)
    write_csv: BoolProperty(name="CSV", default=False)
    write_bcf: BoolProperty(name="BCF", default=False)
    thumbnails: BoolProperty(
        name="Thumbnails", description="Render a picture of each clash into the HTML and BCF"
    )

    @classmethod
    def poll(cls, context):
        return _poll_has_clash_tests(cls, context, "Add a clash test to the scene first")

    def _frames(self, scene) -> tuple[int, int, int]:
        return tuple(
            getattr(self, name) if self.properties.is_property_set(name) else getattr(scene, name)
            for name in FRAME_RANGE
        )

    def invoke(self, context, event):
        for name, value in zip(FRAME_RANGE, self._frames(context.scene), strict=True):
            setattr(self, name, value)
        if not self.directory and bpy.data.filepath:
            self.directory = os.path.dirname(bpy.data.filepath)
        context.window_manager.fileselect_add(self)
        return {"RUNNING_MODAL"}

    def execute(self, context):
        folder = bpy.path.abspath(self.directory) if self.directory else ""
        if not os.path.isdir(folder):
            self.report({"ERROR"}, f"Choose an existing folder for the reports, not {folder!r}")
            return {"CANCELLED"}
        if not is_plain_file_name(self.report_name):
            self.report(
                {"ERROR"},
                "The report name must be a file name inside the chosen folder (not empty, "
                f"no folder separators, '.' or '..'), not {self.report_name!r}",
            )
            return {"CANCELLED"}
        paths = {
            f"{extension}_path": os.path.join(folder, f"{self.report_name}.{extension}")
            for extension in REPORT_FORMATS
            if getattr(self, f"write_{extension}")
        }
        if not paths:
            self.report({"ERROR"}, "Choose at least one report format")
            return {"CANCELLED"}
        try:
            tests = clash_test_props.scene_clash_tests(context.scene)
            report = report_run.run_clash_report(
                tests,
                context=context,
                frames=self._frames(context.scene),
                thumbnails=self.thumbnails,
                substeps=self.substeps,
                **paths,
            ).report
        except (ClashTestError, report_run.ClashRunError, OSError) as error:
            self.report({"ERROR"}, str(error))
            return {"CANCELLED"}
        open_clashes = report["summary"]["open"]
        self.report(
            {"WARNING"} if open_clashes else {"INFO"},
            f"{open_clashes} open clash(es) in {len(tests)} test(s); wrote "
            + ", ".join(os.path.basename(path) for path in paths.values()),
        )
        return {"FINISHED"}


classes = (
    COLLIDE_OT_detect,
    COLLIDE_OT_clear,
    COLLIDE_OT_select_clash,
    COLLIDE_OT_resolve,
    COLLIDE_OT_clash_test_add,
    COLLIDE_OT_clash_test_remove,
    COLLIDE_OT_clash_test_move,
    COLLIDE_OT_clash_test_item_add,
    COLLIDE_OT_clash_test_item_remove,
    COLLIDE_OT_clash_tests_import,
    COLLIDE_OT_clash_tests_export,
    COLLIDE_OT_export_report,
)

register, unregister = bpy.utils.register_classes_factory(classes)
