"""Operators: check now, clear, select a clash."""

import sys

import bpy

from . import detect


def _progress_reporter(context):
    """A progress callback: the cursor counter in the UI, a stderr line in background."""
    window_manager = context.window_manager
    background = bpy.app.background
    state = {"started": False, "last": -1}

    def progress(done: int, total: int) -> None:
        if total < 50:
            return
        percent = 100 * done // total
        if not state["started"]:
            state["started"] = True
            if not background:
                window_manager.progress_begin(0, 100)
        if percent == state["last"]:
            return
        state["last"] = percent
        if background:
            if percent % 10 == 0:
                print(f"collide: reading proxies {percent}%", file=sys.stderr)
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
            clashes = detect.check(scene, context.evaluated_depsgraph_get(), progress=progress)
        except ValueError as error:  # SceneReadError, or input the core rejects
            self.report({"ERROR"}, str(error))
            return {"CANCELLED"}
        finally:
            end()
        proxies = detect.session_for(scene).proxies
        self.report(
            {"WARNING"} if len(clashes) else {"INFO"},
            f"{len(clashes)} clash(es) among {len(proxies.names)} proxies",
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
        detect.clear(context.scene)
        return {"FINISHED"}


def select_clash(context, index: int) -> bool:
    """Select the two objects of clash `index`, make the first active and frame them in
    the 3D view the context belongs to (if any). False when there is no such clash."""
    records = context.scene.collide.clashes
    if not 0 <= index < len(records):
        return False
    record = records[index]
    objects = [obj for obj in (record.object_a, record.object_b) if obj is not None]
    view_layer = context.view_layer
    in_layer = [obj for obj in objects if view_layer.objects.get(obj.name) == obj]
    if not in_layer:
        return False
    for obj in context.selected_objects:
        obj.select_set(False)
    for obj in in_layer:
        obj.select_set(True)
    view_layer.objects.active = in_layer[0]
    area = context.area
    if area is not None and area.type == "VIEW_3D":
        region = next((region for region in area.regions if region.type == "WINDOW"), None)
        if region is not None:
            with context.temp_override(area=area, region=region):
                bpy.ops.view3d.view_selected()
    return True


class COLLIDE_OT_select_clash(bpy.types.Operator):
    """Select both objects of a clash and frame them"""

    bl_idname = "collide.select_clash"
    bl_label = "Select Clash"
    bl_options = {"REGISTER", "UNDO"}

    index: bpy.props.IntProperty(name="Index", min=0)

    def execute(self, context):
        if not select_clash(context, self.index):
            self.report({"WARNING"}, f"No clash {self.index} with objects in this view layer")
            return {"CANCELLED"}
        return {"FINISHED"}


classes = (COLLIDE_OT_detect, COLLIDE_OT_clear, COLLIDE_OT_select_clash)


def register():
    for cls in classes:
        bpy.utils.register_class(cls)


def unregister():
    for cls in reversed(classes):
        bpy.utils.unregister_class(cls)
