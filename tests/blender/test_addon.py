"""The add-on in the real Blender (bpy 5.0.1 wheel), installed from the built zip."""

import io
import math
import sys
import xml.etree.ElementTree as ElementTree
import zipfile
from types import SimpleNamespace

import addon_utils
import bpy
import numpy as np
import pytest
from mathutils import Matrix, Vector

from . import scenes
from .layouts import RecordingLayout

ORIGINAL_COLOR = (0.25, 0.5, 0.75, 0.625)  # exactly representable in float32


def blender_module(addon, name):
    return sys.modules[f"{addon.__name__}.blender.{name}"]


def distances_to_proxy(addon, proxies, index: int, points: np.ndarray) -> np.ndarray:
    """Signed distance from each point (m, 3) to proxy `index`: (m,)."""
    core = sys.modules[f"{addon.__name__}.core"]
    probes = core.ShapeBatch.spheres(points, np.zeros(len(points)))
    batch = core.ShapeBatch.concat([proxies.batch, probes])
    first = np.full(len(points), index)
    return core.pair_distance(batch, first, len(proxies.batch) + np.arange(len(points))).distance


def test_installs_as_extension_and_registers(addon):
    assert addon.__name__.startswith("bl_ext.")
    assert hasattr(bpy.types, "COLLIDE_PT_main")
    assert bpy.types.COLLIDE_PT_main.bl_space_type == "VIEW_3D"
    assert bpy.types.COLLIDE_PT_main.bl_category == "Collide"
    assert hasattr(bpy.types, "COLLIDE_UL_clashes")
    for operator in ("detect", "clear", "select_clash"):
        assert hasattr(bpy.ops.collide, operator)
    assert bpy.context.scene.collide.scope == "VISIBLE"
    assert hasattr(bpy.types.Object, "collide")


def test_detect_cube_and_moving_sphere(addon):
    cube = scenes.add_object("Cube", scenes.mesh("cube"))
    sphere = scenes.add_object("Ball", scenes.mesh("sphere"))
    scenes.animate_location(sphere, {1: (5.0, 0, 0), 11: (0.5, 0, 0)})
    scene = bpy.context.scene

    scene.frame_set(1)
    assert bpy.ops.collide.detect() == {"FINISHED"}
    assert scenes.records() == []

    scene.frame_set(11)
    assert bpy.ops.collide.detect() == {"FINISHED"}
    assert scenes.records() == [("Cube", "Ball")]
    record = scene.collide.clashes[0]
    assert (record.kind_a, record.kind_b) == ("box", "sphere")
    # Sphere (radius 1, fitted to a 32x16 UV sphere) at x = 0.5 inside the cube.
    assert record.distance == pytest.approx(-1.5, abs=0.01)
    assert record.object_a == cube and record.object_b == sphere
    assert cube.collide.fitted_kind == "BOX" and sphere.collide.fitted_kind == "SPHERE"
    # The panel's looseness, measured when asked for.
    looseness_of = blender_module(addon, "session").looseness_of
    assert looseness_of(scene, cube) == pytest.approx(1.0, rel=1e-5)
    assert 1.0 < looseness_of(scene, sphere) < 1.1


def test_the_panel_measures_the_active_objects_looseness(addon):
    """Detect leaves the meshes' volumes unmeasured; the panel measures the active
    object's looseness when it shows it. Unknown before a check, for an object not
    taking part and once its geometry changed; 0 for a mesh enclosing no volume."""
    session = blender_module(addon, "session")
    # The function scripts use: `collide_addon.blender.looseness_of`.
    assert sys.modules[f"{addon.__name__}.blender"].looseness_of is session.looseness_of
    scene = bpy.context.scene
    cube = scenes.add_object("Cube", scenes.mesh("cube"))
    sheet_data = bpy.data.meshes.new("Sheet")
    sheet_data.from_pydata([(0, 0, 0), (1, 0, 0), (1, 1, 0.2), (0, 1, 0)], [], [(0, 1, 2, 3)])
    sheet = scenes.add_object("Sheet", sheet_data, location=(5, 0, 0))
    hidden = scenes.add_object("Hidden", scenes.mesh("sphere"), location=(10, 0, 0))
    hidden.hide_set(True)
    assert session.looseness_of(scene, cube) is None
    assert bpy.ops.collide.detect() == {"FINISHED"}
    reader, proxies = session.session_for(scene).reader, session.session_for(scene).proxies
    assert all(reader.geometry(key).volume is None for key in proxies.geometry_keys), (
        "Detect measured volumes"
    )
    assert session.looseness_of(scene, cube) == pytest.approx(1.0, rel=1e-5)
    assert session.looseness_of(scene, sheet) == 0.0
    assert session.looseness_of(scene, hidden) is None

    def panel_labels(active) -> list[str]:
        bpy.context.view_layer.objects.active = active
        drawn: list[str] = []
        bpy.types.COLLIDE_PT_main.draw(SimpleNamespace(layout=RecordingLayout(drawn)), bpy.context)
        return [text for text in drawn if text.startswith("label: ")]

    assert "label: Box, 1.00\u00d7 volume" in panel_labels(cube)
    assert "label: Box, open mesh" in panel_labels(sheet)
    reader.geometry_changed({(cube.data.name_full, "data")})
    assert session.looseness_of(scene, cube) is None
    assert "label: Box" in panel_labels(cube)


def test_clash_rows_fit_the_sidebar(addon):
    ui = blender_module(addon, "ui")
    scene = bpy.context.scene
    settings = scene.collide
    record = settings.clashes.add()
    record.name_a, record.name_b = "Cabinet.Left.Long name 001", "Cabinet.Right.Long name 002"

    def row_label(context) -> str:
        drawn: list[str] = []
        bpy.types.COLLIDE_UL_clashes.draw_item(
            None, context, RecordingLayout(drawn), settings, record, 0, None, "", 0
        )
        assert len(drawn) == 1
        return drawn[0].removeprefix("label: ")

    # No window (this background Blender): no width to fit, the names whole.
    assert row_label(bpy.context) == "Cabinet.Left.Long name 001 \u00d7 Cabinet.Right.Long name 002"
    # The default sidebar of Blender 3.4 under Xvfb: 229 pixels at a UI scale of 1.04.
    scale = 1.0416666
    sidebar = SimpleNamespace(
        preferences=SimpleNamespace(system=SimpleNamespace(ui_scale=scale)),
        region=SimpleNamespace(width=229),
    )
    widths = []
    # As many clashes as the list has rows, then one more: its scroll bar takes room.
    for count, margin in ((4, 4.4), (5, 5.2)):
        while len(settings.clashes) < count:
            settings.clashes.add()
        text = row_label(sidebar)
        first, second = text.split(" \u00d7 ")
        assert first.startswith("Cab") and first.endswith("001")
        assert second.startswith("Cab") and second.endswith("002")
        room = 229 - margin * 20 * scale
        # (Measured at the sidebar's text size, which drawing the row set.)
        whole = ui._text_width(record.name_a + " \u00d7 " + record.name_b)
        assert ui._text_width(text) <= room < whole
        widths.append(ui._text_width(text))
    assert widths[1] < widths[0]
    settings.clashes.clear()


def test_tolerance_reports_near_misses(addon):
    scenes.add_object("A", scenes.mesh("cube"))
    scenes.add_object("B", scenes.mesh("cube"), location=(2.3, 0, 0))
    settings = bpy.context.scene.collide
    settings.check = "CONTACT"
    bpy.ops.collide.detect()
    assert scenes.records() == []
    settings.tolerance = 0.5
    bpy.ops.collide.detect()
    assert scenes.records() == [("A", "B")]
    assert settings.clashes[0].distance == pytest.approx(0.3, abs=1e-5)
    # The same near miss is no penetration, whatever the tolerance.
    settings.check = "PENETRATION"
    bpy.ops.collide.detect()
    assert scenes.records() == []


def test_by_default_objects_resting_on_the_floor_are_no_clash(addon):
    """The default check is penetration: contact, also contact that float32 matrices
    under rotated parents round to either side of zero, is listed only when asked for."""
    settings = bpy.context.scene.collide
    assert settings.check == "PENETRATION" and settings.tolerance == 0.0
    floor = scenes.add_object("Floor", scenes.mesh("cube"), location=(0, 0, -1), scale=(20, 20, 1))
    # Crates on the floor, some under a parent chain turned by 45 and 5 degree steps far
    # from the origin, whose world matrices carry float32 rounding.
    scenes.add_object("Crate", scenes.mesh("cube"), location=(0, 0, 1))
    pivot = scenes.add_object("Pivot", None, location=(12.5, -7.25, 1))
    pivot.rotation_euler = (0.0, 0.0, math.radians(45))
    turned = scenes.add_object("Turned", scenes.mesh("cube"), location=(0, 0, 0))
    turned.parent = pivot
    turned.rotation_euler = (0.0, 0.0, math.radians(-40))
    scenes.add_object("Sunk", scenes.mesh("cube"), location=(6, 6, 0.75))
    bpy.context.view_layer.update()
    proxies = scenes.read_proxies(addon)
    pairs = {("Floor", "Crate"), ("Floor", "Turned")}
    for name in ("Crate", "Turned"):
        index = proxies.names.index(name)
        bottom = proxies.batch.centers[index, 2] - proxies.batch.half_extents[index].max()
        assert abs(bottom) < 1e-5, name

    bpy.ops.collide.detect()
    assert scenes.records() == [("Floor", "Sunk")]
    assert settings.clashes[0].distance == pytest.approx(-0.25, abs=1e-5)
    assert tuple(floor.color) != (1.0, 1.0, 1.0, 1.0)

    settings.check = "CONTACT"
    bpy.ops.collide.detect()
    assert set(scenes.records()) == pairs | {("Floor", "Sunk")}

    # A tolerance in penetration mode is the depth allowed.
    settings.check = "PENETRATION"
    settings.tolerance = 0.3
    bpy.ops.collide.detect()
    assert scenes.records() == []


def test_the_panel_says_to_what_contacts_are_decided_far_from_the_origin(addon, monkeypatch):
    """2 km out the contact epsilon is 2 mm: a crate sunk 1 mm into the floor is no
    clash there, and the panel says so, as the reports warn."""
    ui = sys.modules[f"{addon.__name__}.blender.ui"]
    scene = bpy.context.scene
    floor = scenes.add_object("Floor", scenes.mesh("cube"), location=(2000, 0, -1))
    crate = scenes.add_object("Crate", scenes.mesh("cube"), location=(2000, 0, 0.999))
    assert ui.far_origin_note(scene) is None  # nothing checked yet
    bpy.ops.collide.detect()
    assert scenes.records() == []
    assert ui.far_origin_note(scene) == "Far out: contacts to 2\u00a0mm"
    drawn = []
    bpy.types.COLLIDE_PT_main.draw(SimpleNamespace(layout=RecordingLayout(drawn)), bpy.context)
    assert "label: Far out: contacts to 2\u00a0mm" in drawn
    # Measured once per check, however often the panel redraws.
    measured = []
    monkeypatch.setattr(ui, "largest_coordinate", lambda batch: measured.append(1) or 2000.0)
    for _ in range(3):
        assert ui.far_origin_note(scene) == "Far out: contacts to 2\u00a0mm"
    assert measured == []
    bpy.ops.collide.detect()
    assert ui.far_origin_note(scene) == "Far out: contacts to 2\u00a0mm"
    assert ui.far_origin_note(scene) == "Far out: contacts to 2\u00a0mm"
    assert measured == [1]
    monkeypatch.undo()
    # Near the origin the same crate sinks deeper than the epsilon there, and no note.
    floor.location.x = crate.location.x = 0.0
    bpy.context.view_layer.update()
    bpy.ops.collide.detect()
    assert scenes.records() == [("Floor", "Crate")]
    assert ui.far_origin_note(scene) is None
    # A scene modelled in millimetres (Unit Scale 0.001): 2,000 units out is 2 m out,
    # near; 2,000,000 units is 2 km, decided to 2 mm (the note said 2 mm and 2 m).
    scene.unit_settings.scale_length = 0.001
    floor.location.x = crate.location.x = 2000.0
    bpy.context.view_layer.update()
    bpy.ops.collide.detect()
    assert ui.far_origin_note(scene) is None
    floor.location.x = crate.location.x = 2_000_000.0
    bpy.context.view_layer.update()
    bpy.ops.collide.detect()
    assert ui.far_origin_note(scene) == "Far out: contacts to 2\u00a0mm"


def test_a_scene_modelled_in_millimetres_is_reported_in_millimetres(addon, tmp_path):
    """Unit Scale 0.001: a 50 mm overlap is -50 scene units in the JSON, which says its
    unit; the HTML's column and the BCF's description say mm; the BCF camera, in
    metres by the standard, sits within a metre of the clash, not 1000 times out."""
    scene = bpy.context.scene
    scene.unit_settings.scale_length = 0.001
    scenes.add_object("Wall", scenes.mesh("cube"), scale=(1000, 1000, 1000))
    scenes.add_object("Pipe", scenes.mesh("cube"), location=(1950, 0, 0), scale=(1000,) * 3)
    bpy.context.view_layer.update()
    test = addon.clash.tests.clash_test_from_dict({"name": "hard", "a": {}, "type": "hard"})
    paths = {kind: tmp_path / f"r.{kind}" for kind in ("json", "html", "bcf")}
    result = addon.blender.run_clash_report(
        [test], json_path=paths["json"], html_path=paths["html"], bcf_path=paths["bcf"]
    )
    report = result.report
    assert report["unit_scale"] == 0.001
    [clash] = report["clashes"]
    assert clash["distance"] == pytest.approx(-50.0, abs=1e-3)
    assert "Distance (mm)" in paths["html"].read_text()
    with zipfile.ZipFile(io.BytesIO(paths["bcf"].read_bytes())) as archive:
        [markup] = [name for name in archive.namelist() if name.endswith("markup.bcf")]
        description = ElementTree.fromstring(archive.read(markup)).find("Topic/Description")
        viewpoint = ElementTree.fromstring(
            archive.read(markup.replace("markup.bcf", "viewpoint.bcfv"))
        ).find("PerspectiveCamera/CameraViewPoint")
    assert "penetration 50 mm" in description.text
    camera = np.array([float(viewpoint.find(axis).text) for axis in "XYZ"])
    point_in_metres = np.array(clash["point"]) * 0.001
    assert 0.05 < np.linalg.norm(camera - point_in_metres) < 20.0


def test_an_object_scaled_to_nothing_clashes_neither_on_proxies_nor_on_meshes(addon):
    """A cube scaled (0, 0, 0) at a wall's centre, which Blender does not draw: its proxy
    (a point) clashed 1 m deep in Detect's default Proxy mode and in a report on proxies,
    where the meshes found nothing. Scaled flat on one axis it is a sheet, and clashes."""
    scene = bpy.context.scene
    scenes.add_object("Wall", scenes.mesh("cube"))
    hidden = scenes.add_object("Hidden", scenes.mesh("cube", "H"), scale=(0, 0, 0))
    for geometry in ("PROXY", "MESH"):
        scene.collide.geometry = geometry
        assert bpy.ops.collide.detect() == {"FINISHED"}
        assert scenes.records() == []
    test = addon.clash.tests.clash_test_from_dict(
        {"name": "hard", "a": {}, "type": "hard", "geometry": "proxy"}
    )
    assert addon.blender.run_clash_report([test], frames=(1, 1, 1)).report["clashes"] == []
    hidden.scale = (1.0, 1.0, 0.0)
    bpy.context.view_layer.update()
    for geometry in ("PROXY", "MESH"):
        scene.collide.geometry = geometry
        assert bpy.ops.collide.detect() == {"FINISHED"}
        assert scenes.records() == [("Wall", "Hidden")]


def test_shape_override_and_capsule(addon):
    rod = scenes.add_object("Rod", scenes.mesh("cylinder"))
    rod.collide.shape = "CAPSULE"
    ball = scenes.add_object("Ball", scenes.mesh("sphere"), location=(0, 0, 2.9))
    ball.collide.shape = "BOX"
    bpy.ops.collide.detect()
    record = bpy.context.scene.collide.clashes[0]
    assert (record.name_a, record.kind_a, record.name_b, record.kind_b) == (
        "Rod",
        "capsule",
        "Ball",
        "box",
    )
    assert rod.collide.fitted_kind == "CAPSULE" and ball.collide.fitted_kind == "BOX"
    assert blender_module(addon, "session").looseness_of(bpy.context.scene, rod) > 1.0


def test_parented_scaled_and_sheared_objects_are_enclosed(addon):
    parent = scenes.add_object("Parent", scenes.mesh("cube"), location=(0, 0, 10))
    parent.rotation_euler = (0.3, 0.0, math.radians(45))
    child = scenes.add_object("Scaled", scenes.mesh("cube"), location=(1, 2, 0))
    child.parent = parent
    child.scale = (3.0, 0.5, 1.0)
    stretched_parent = scenes.add_object(
        "Stretched", scenes.mesh("sphere"), location=(20, 0, 0), scale=(3.0, 1.0, 1.0)
    )
    sheared = scenes.add_object("Sheared", scenes.mesh("cube"), location=(0, 0, 0))
    sheared.parent = stretched_parent
    sheared.rotation_euler = (0.0, 0.0, math.radians(30))
    bpy.context.view_layer.update()
    linear = np.array(sheared.matrix_world)[:3, :3]
    gram = linear.T @ linear
    assert abs(gram[0, 1]) > 0.1, "the test needs a sheared world matrix"

    proxies = scenes.read_proxies(addon)
    for obj in (parent, child, stretched_parent, sheared):
        index = proxies.names.index(obj.name)
        distances = distances_to_proxy(addon, proxies, index, scenes.world_vertices(obj))
        assert distances.max() <= 1e-5, obj.name
        # Tight: some vertex lies on the proxy's surface.
        assert distances.max() >= -1e-3 * max(obj.dimensions), obj.name
    # The sheared cube is a prism over a parallelogram with sides (3 cos 30, sin 30)
    # and (-3 sin 30, cos 30): area 3. The smallest rectangle around it lies along the
    # long side (length 2.646, so height 3 / 2.646 = 1.134) and is 2.646 + 1.309 long:
    # 1.495 times the area. The box proxy is that box.
    index = proxies.names.index("Sheared")
    assert proxies.batch.kinds[index] == 0
    box_volume = 8.0 * np.prod(proxies.batch.half_extents[index])
    solid_volume = 8.0 * abs(np.linalg.det(linear))
    long_side = np.hypot(3 * np.cos(np.pi / 6), np.sin(np.pi / 6))
    overhang = abs(-1.5 * 3 * np.cos(np.pi / 6) + 0.5 * np.cos(np.pi / 6)) / long_side
    smallest = (long_side + overhang) * (3.0 / long_side) / 3.0
    assert box_volume / solid_volume == pytest.approx(smallest, rel=1e-4)


def test_geometry_nodes_and_collection_instances(addon):
    scenes.geometry_nodes_instances("Host", count=3, spacing=1.5, size=2.0)
    source_collection = bpy.data.collections.new("Parts")
    scenes.add_object("Part", scenes.mesh("sphere"), collection=source_collection)
    for name, x in (("InstanceA", 10.0), ("InstanceB", 11.5)):
        empty = bpy.data.objects.new(name, None)
        empty.instance_type = "COLLECTION"
        empty.instance_collection = source_collection
        empty.location = (x, 0.0, 0.0)
        bpy.context.scene.collection.objects.link(empty)

    proxies = scenes.read_proxies(addon)
    assert sorted(proxies.names) == [
        "Host/Mesh[0]",
        "Host/Mesh[1]",
        "Host/Mesh[2]",
        "InstanceA/Part",
        "InstanceB/Part",
    ]
    bpy.ops.collide.detect()
    assert scenes.records() == [
        ("Host/Mesh[0]", "Host/Mesh[1]"),
        ("Host/Mesh[1]", "Host/Mesh[2]"),
        ("InstanceA/Part", "InstanceB/Part"),
    ]
    owners = {record.object_a.name for record in bpy.context.scene.collide.clashes}
    assert owners == {"Host", "InstanceA"}
    assert tuple(bpy.data.objects["InstanceB"].color) != (1.0, 1.0, 1.0, 1.0)


def test_scope_and_what_takes_part(addon):
    scene = bpy.context.scene
    a = scenes.add_object("A", scenes.mesh("cube"))
    b = scenes.add_object("B", scenes.mesh("cube"), location=(1, 0, 0))
    hidden = scenes.add_object("Hidden", scenes.mesh("cube"), location=(0.5, 0, 0))
    hidden.hide_set(True)
    scene.collection.objects.link(bpy.data.objects.new("Empty", None))
    light = bpy.data.objects.new("Lamp", bpy.data.lights.new("Lamp", "POINT"))
    scene.collection.objects.link(light)
    scene.collection.objects.link(bpy.data.objects.new("Camera", bpy.data.cameras.new("C")))
    group = bpy.data.collections.new("Group")
    scene.collection.children.link(group)
    c = scenes.add_object("C", scenes.mesh("cube"), location=(0, 1, 0), collection=group)

    assert sorted(scenes.read_proxies(addon).names) == ["A", "B", "C"]
    scene.collide.scope = "COLLECTION"
    with pytest.raises(RuntimeError, match="collection"):
        bpy.ops.collide.detect()
    scene.collide.collection = group
    assert scenes.read_proxies(addon).names == ["C"]
    scene.collide.scope = "SELECTION"
    for obj in (a, b, c):
        obj.select_set(obj is not c)
    assert sorted(scenes.read_proxies(addon).names) == ["A", "B"]
    bpy.ops.collide.detect()
    assert scenes.records() == [("A", "B")]


def test_report_metadata_lists_each_objects_collections_as_blender_does(addon):
    scene = bpy.context.scene
    group, nested, unlinked = (bpy.data.collections.new(name) for name in ("G", "N", "U"))
    scene.collection.children.link(group)
    group.children.link(nested)
    other = bpy.data.scenes.new("Other")
    loose = scenes.add_object("Loose", scenes.mesh("cube"))
    both = scenes.add_object("Both", scenes.mesh("cube"), collection=group)
    nested.objects.link(both)
    scenes.add_object("Deep", scenes.mesh("cube"), collection=nested)
    unlinked.objects.link(loose)
    other.collection.objects.link(both)
    report_run = blender_module(addon, "report_run")
    found = report_run.object_collections()
    expected = {
        obj.name_full: tuple(collection.name for collection in obj.users_collection)
        for obj in bpy.data.objects
    }
    assert found == expected
    assert found["Both"] == ("G", "N", other.collection.name)
    metadata = report_run.proxy_metadata("Loose", loose, found)
    assert metadata.collections == ("U", scene.collection.name)


def test_tint_and_exact_restoration(addon):
    scene = bpy.context.scene
    a = scenes.add_object("A", scenes.mesh("cube"))
    b = scenes.add_object("B", scenes.mesh("cube"), location=(1, 0, 0))
    far = scenes.add_object("Far", scenes.mesh("cube"), location=(9, 0, 0))
    for obj in (a, b, far):
        obj.color = ORIGINAL_COLOR
    shadings = [
        space.shading
        for screen in bpy.data.screens
        for area in screen.areas
        for space in area.spaces
        if space.type == "VIEW_3D"
    ]
    assert shadings, "the start-up file has 3D views"
    before = [(shading.type, shading.color_type) for shading in shadings]
    scene.collide.clash_color = (0.0, 1.0, 0.0, 1.0)

    bpy.ops.collide.detect()
    assert tuple(a.color) == tuple(b.color) == (0.0, 1.0, 0.0, 1.0)
    assert tuple(far.color) == ORIGINAL_COLOR
    assert all(shading.color_type == "OBJECT" for shading in shadings if shading.type == "SOLID")

    scene.collide.clash_color = (0.0, 0.0, 1.0, 1.0)
    assert tuple(a.color) == (0.0, 0.0, 1.0, 1.0)

    b.location = (5, 0, 0)
    bpy.ops.collide.detect()
    assert tuple(a.color) == tuple(b.color) == ORIGINAL_COLOR

    b.location = (1, 0, 0)
    bpy.ops.collide.detect()
    assert bpy.ops.collide.clear() == {"FINISHED"}
    assert tuple(a.color) == tuple(b.color) == ORIGINAL_COLOR
    assert [(shading.type, shading.color_type) for shading in shadings] == before
    assert len(scene.collide.clashes) == 0


def test_undo_never_leaves_a_tint_behind(addon):
    # Undo restores colours as they were at the undo step, tints included; the original
    # colours must come back all the same.
    scene = bpy.context.scene
    a = scenes.add_object("A", scenes.mesh("cube"))
    b = scenes.add_object("B", scenes.mesh("cube"), location=(1.5, 0, 0))
    for obj in (a, b):
        obj.color = ORIGINAL_COLOR
    bpy.ops.ed.undo_push(message="scene")
    scene.collide.live = True
    assert tuple(a.color) != ORIGINAL_COLOR
    bpy.ops.ed.undo_push(message="live on, tinted")
    scene.collide.live = False
    bpy.ops.ed.undo_push(message="live off")
    bpy.ops.ed.undo()  # back to live on, the tint in the colours
    a, b = bpy.data.objects["A"], bpy.data.objects["B"]
    assert bpy.context.scene.collide.live
    bpy.data.objects["B"].location.x = 9.0  # B moves away: A is no longer clashing
    bpy.context.view_layer.update()
    assert scenes.records() == []
    assert tuple(b.color) == ORIGINAL_COLOR
    assert tuple(a.color) == ORIGINAL_COLOR
    bpy.context.scene.collide.live = False
    assert tuple(a.color) == tuple(b.color) == ORIGINAL_COLOR
    bpy.ops.ed.undo()  # back to before live mode
    assert tuple(bpy.data.objects["A"].color) == ORIGINAL_COLOR


def test_a_copy_of_a_tinted_object_gets_its_colour_back(addon):
    scene = bpy.context.scene
    a = scenes.add_object("A", scenes.mesh("cube"))
    scenes.add_object("B", scenes.mesh("cube"), location=(1.5, 0, 0))
    a.color = ORIGINAL_COLOR
    scene.collide.live = True
    assert tuple(a.color) != ORIGINAL_COLOR
    copy = a.copy()  # as Shift+D does: the tinted colour and the original travel along
    copy.location = (0, 20, 0)
    scene.collection.objects.link(copy)
    bpy.context.view_layer.update()
    assert tuple(copy.color) == ORIGINAL_COLOR, "the copy clashes with nothing"
    copy.location = (0, 0.5, 0)
    bpy.context.view_layer.update()
    assert tuple(copy.color) != ORIGINAL_COLOR
    scene.collide.live = False
    assert tuple(a.color) == tuple(copy.color) == ORIGINAL_COLOR


def test_saved_file_holds_no_tint(addon, tmp_path):
    a = scenes.add_object("A", scenes.mesh("cube"))
    b = scenes.add_object("B", scenes.mesh("cube"), location=(1, 0, 0))
    a.color = b.color = ORIGINAL_COLOR
    bpy.ops.collide.detect()
    tinted = tuple(a.color)
    assert tinted != ORIGINAL_COLOR

    path = tmp_path / "saved.blend"
    bpy.ops.wm.save_as_mainfile(filepath=str(path), copy=True)
    assert tuple(a.color) == tinted, "the tint comes back after saving"
    with bpy.data.libraries.load(str(path)) as (_source, target):
        target.objects = ["A"]
    assert tuple(target.objects[0].color) == ORIGINAL_COLOR
    bpy.ops.collide.clear()
    assert tuple(a.color) == ORIGINAL_COLOR


def test_live_mode_over_frame_set(addon):
    scene = bpy.context.scene
    session = blender_module(addon, "session")
    wall = scenes.add_object("Wall", scenes.mesh("cube"), scale=(0.5, 4.0, 4.0))
    ball = scenes.add_object("Ball", scenes.mesh("sphere"))
    still = scenes.add_object("Still", scenes.mesh("cube"), location=(0, 20, 0))
    for obj in (wall, ball, still):
        obj.color = ORIGINAL_COLOR
    # The ball passes through the wall: x from -6 to 6 over frames 1..13.
    scenes.animate_location(ball, {1: (-6.0, 0, 0), 13: (6.0, 0, 0)})
    scene.frame_set(1)
    scene.collide.live = True

    seen = {}
    for frame in range(1, 14):
        scene.frame_set(frame)
        seen[frame] = (scenes.records(), scenes.overlay_tinted(addon))
    # x = frame - 7; ball radius 1 and wall half-width 0.5 meet where |x| <= 1.5.
    clashing = [frame for frame, (pairs, _) in seen.items() if pairs]
    assert clashing == [6, 7, 8]
    assert all(seen[frame] == ([("Wall", "Ball")], {"Wall", "Ball"}) for frame in clashing)
    assert all(seen[frame] == ([], set()) for frame in seen if frame not in clashing)
    # While frames change the overlay tints; the colours wait for the frames to stop.
    assert tuple(wall.color) == tuple(ball.color) == tuple(still.color) == ORIGINAL_COLOR
    scene.frame_set(7)
    session.settle(scene)
    assert tuple(wall.color) == tuple(ball.color) == tuple(scene.collide.clash_color)
    assert tuple(still.color) == ORIGINAL_COLOR
    assert scenes.overlay_tinted(addon) == set()

    # A repeated frame is not checked again.
    scene.frame_set(7)
    generation = session.session_for(scene).generation
    scene.frame_set(7)
    assert session.session_for(scene).generation == generation

    # An edit (not a frame change) is caught by depsgraph_update_post.
    scene.frame_set(1)
    ball.location = (0.0, 0.0, 0.0)
    bpy.context.view_layer.update()
    assert scenes.records() == [("Wall", "Ball")]

    scene.collide.live = False
    assert tuple(wall.color) == tuple(ball.color) == ORIGINAL_COLOR


# An edit's depsgraph updates are read one by one when few, in bulk when many (0: always).
READ_IN_BULK_ABOVE = pytest.mark.parametrize("few_updates", [64, 0])


@READ_IN_BULK_ABOVE
def test_live_mode_follows_who_takes_part(addon, monkeypatch, few_updates):
    monkeypatch.setattr(blender_module(addon, "handlers"), "_FEW_UPDATES", few_updates)
    scene = bpy.context.scene
    cube = scenes.mesh("cube")
    scenes.add_object("A", cube)
    b = scenes.add_object("B", cube, location=(1.5, 0, 0))
    scene.collide.live = True
    assert scenes.records() == [("A", "B")]

    def records_after_update():
        bpy.context.view_layer.update()
        return scenes.records()

    b.hide_set(True)
    assert records_after_update() == []
    b.hide_set(False)
    assert records_after_update() == [("A", "B")]
    b.hide_viewport = True
    assert records_after_update() == []
    b.hide_viewport = False
    assert records_after_update() == [("A", "B")]
    c = scenes.add_object("C", cube, location=(-1.5, 0, 0))
    assert records_after_update() == [("A", "B"), ("A", "C")]
    bpy.data.objects.remove(b)
    assert records_after_update() == [("A", "C")]
    c.name = "Renamed"
    assert records_after_update() == [("A", "Renamed")]

    # Selection and collection membership: who takes part is compared, not rebuilt.
    a = bpy.data.objects["A"]
    scene.collide.scope = "SELECTION"
    for obj in scene.objects:
        obj.select_set(False)
    assert records_after_update() == []
    a.select_set(True)
    c.select_set(True)
    assert records_after_update() == [("A", "Renamed")]
    c.select_set(False)
    assert records_after_update() == []
    group = bpy.data.collections.new("Group")
    scene.collection.children.link(group)
    scene.collide.collection = group
    scene.collide.scope = "COLLECTION"
    assert records_after_update() == []
    group.objects.link(a)
    group.objects.link(c)
    assert records_after_update() == [("A", "Renamed")]
    group.objects.unlink(c)
    assert records_after_update() == []
    scene.collide.live = False


def test_selecting_in_live_mode_keeps_who_takes_part(addon):
    # A click that selects an object changes the scene, not who takes part (scope
    # Visible): the proxies are compared and kept, not built again.
    scene = bpy.context.scene
    reader = blender_module(addon, "session").session_for(scene).reader
    cube = scenes.mesh("cube")
    a = scenes.add_object("A", cube)
    scenes.add_object("B", cube, location=(1.5, 0, 0))
    scene.collide.live = True
    bpy.context.view_layer.update()
    structure = reader._structure
    a.select_set(True)
    bpy.context.view_layer.update()
    assert reader._structure is structure
    assert scenes.records() == [("A", "B")]
    scene.collide.live = False


def test_live_records_and_tints_follow_random_moves(addon):
    # Live updates rewrite only the rows and tints that change; after every move they
    # must equal a fresh read's clashes, and rows of pairs that stay must not move.
    scene = bpy.context.scene
    core = sys.modules[f"{addon.__name__}.core"]
    rng = np.random.default_rng(5)
    cube, sphere = scenes.mesh("cube"), scenes.mesh("sphere")
    objects = [
        scenes.add_object(f"Part{k:02d}", cube if k % 2 else sphere, location=location)
        for k, location in enumerate(rng.uniform(0, 8, (30, 3)))
    ]
    for obj in objects:
        obj.color = ORIGINAL_COLOR
    scene.collide.live = True

    def rows_in_order():
        return [(record.name_a, record.name_b) for record in scene.collide.clashes]

    for _ in range(12):
        before = rows_in_order()
        if before:
            scene.collide.active_clash_index = int(rng.integers(len(before)))
            picked = before[scene.collide.active_clash_index]
        for obj in rng.choice(objects, size=6, replace=False):
            obj.location = rng.uniform(0, 8, 3)
        bpy.context.view_layer.update()
        proxies = scenes.read_proxies(addon)
        pairs = core.find_pairs(proxies.batch)
        expected = {(proxies.names[i], proxies.names[j]) for i, j in pairs}
        listed = rows_in_order()
        assert sorted(listed) == sorted(expected)
        # Pairs that stay keep their order; the picked row follows its pair.
        staying = [pair for pair in before if pair in expected]
        assert [pair for pair in listed if pair in staying] == staying
        if before and picked in expected:
            assert listed[scene.collide.active_clash_index] == picked
        elif before:
            assert scene.collide.active_clash_index == -1
        clashing = {name for pair in expected for name in pair}
        for obj in objects:
            assert (tuple(obj.color) != ORIGINAL_COLOR) == (obj.name in clashing), obj.name
    scene.collide.live = False
    assert all(tuple(obj.color) == ORIGINAL_COLOR for obj in objects)


def test_clash_positions_follow_parent_animation(addon):
    scene = bpy.context.scene
    rig = bpy.data.objects.new("Rig", None)
    scene.collection.objects.link(rig)
    scenes.animate_location(rig, {1: (0.0, 0, 0), 11: (10.0, 0, 0)})
    arm = scenes.add_object("Arm", scenes.mesh("cube"), scale=(2.0, 0.2, 0.2))
    arm.parent = rig
    scenes.add_object("Target", scenes.mesh("cube"), location=(10.0, 0, 0))
    scene.collide.live = True
    scene.frame_set(1)
    assert scenes.records() == []
    scene.frame_set(11)
    assert scenes.records() == [("Arm", "Target")]


def assert_c_left_out_and_the_others_checked(addon, capfd, tmp_path, reason: str) -> dict:
    """Of objects A and B (clashing) and C (unusable for `reason`): Detect on proxies and
    on meshes lists A and B alone and names C as not checked, in its message and the
    panel, leaving it untinted; a report run too. Returns the report."""
    scene = bpy.context.scene
    for geometry in ("PROXY", "MESH"):
        scene.collide.geometry = geometry
        assert bpy.ops.collide.detect() == {"FINISHED"}
        assert scenes.records() == [("A", "B")]
        assert f"Not checked: 'C' ({reason})" in capfd.readouterr().out
        drawn = []
        bpy.types.COLLIDE_PT_main.draw(SimpleNamespace(layout=RecordingLayout(drawn)), bpy.context)
        assert any("Not checked: 'C'" in line for line in drawn)
        assert not scene.collide.last_error and not bpy.data.objects["C"].collide.tinted
    test = addon.clash.tests.clash_test_from_dict({"name": "hard", "a": {}, "type": "hard"})
    report = addon.blender.run_clash_report(
        [test], frames=(1, 2, 1), json_path=tmp_path / "r.json"
    ).report
    assert [(clash["a"], clash["b"]) for clash in report["clashes"]] == [("A", "B")]
    assert report["left_out"] == {"C": reason}
    return report


def test_an_object_with_a_nan_transform_is_left_out_and_named_and_the_others_checked(
    addon, tmp_path, capfd, monkeypatch
):
    """A NaN or infinite transform in one object (a driver's division by zero, a script)
    stopped Detect, switched live mode off and failed every report: no other clash was
    seen until it was fixed. It is left out now, as an object with a NaN vertex is, named
    by Detect, the panel and the reports; live mode goes on, and takes it in again once
    its transform is usable, without building every entry at each update meanwhile."""
    scene = bpy.context.scene
    scenes.add_object("A", scenes.mesh("cube"))
    scenes.add_object("B", scenes.mesh("cube"), location=(1.5, 0, 0))
    broken = scenes.add_object("C", scenes.mesh("cube"), location=(-1.5, 0, 0))
    broken.location.y = math.nan
    assert_c_left_out_and_the_others_checked(addon, capfd, tmp_path, "NaN or infinite transform")
    scene.collide.live = True
    assert scene.collide.live and not scene.collide.last_error
    builds = scenes.count_builds(addon, monkeypatch)
    for x in (0.1, 0.2):  # C stays unusable while another object moves
        bpy.data.objects["B"].location.x = 1.5 + x
        bpy.context.view_layer.update()
    assert builds == [] and scenes.records() == [("A", "B")]
    broken.location.y = 0.0
    bpy.context.view_layer.update()
    assert scenes.records() == [("A", "B"), ("A", "C")]
    broken.scale.z = math.nan  # (Blender clamps an infinite location to float32's largest)
    bpy.context.view_layer.update()
    assert scene.collide.live and not scene.collide.last_error
    assert scenes.records() == [("A", "B")]
    assert not broken.collide.tinted
    scene.collide.live = False


def test_an_instance_with_a_nan_transform_is_left_out_and_taken_in_again(addon):
    """The same for an instance: a collection instance placed by an empty whose
    location is NaN is named and left out, the other instances checked."""
    scene = bpy.context.scene
    parts = bpy.data.collections.new("Parts")
    scenes.add_object("Part", scenes.mesh("cube"), collection=parts)
    placers = []
    for name, x in (("P1", 0.0), ("P2", 1.5), ("P3", -1.5)):
        placer = bpy.data.objects.new(name, None)
        placer.instance_type, placer.instance_collection = "COLLECTION", parts
        placer.location = (x, 0.0, 0.0)
        scene.collection.objects.link(placer)
        placers.append(placer)
    placers[2].location.z = math.nan
    scene.collide.live = True
    assert scenes.records() == [("P1/Part", "P2/Part")]
    assert scenes.read_proxies(addon).left_out == {"P3/Part": "NaN or infinite transform"}
    placers[2].location.z = 0.0
    bpy.context.view_layer.update()
    assert scenes.records() == [("P1/Part", "P2/Part"), ("P1/Part", "P3/Part")]
    placers[1].location.x = math.nan
    bpy.context.view_layer.update()
    assert scene.collide.live and scenes.records() == [("P1/Part", "P3/Part")]
    scene.collide.live = False


def test_a_failed_detect_drops_the_results_it_cannot_vouch_for_and_says_why(addon):
    """A Detect that fails left the last check's rows and tint up (a clash since moved
    apart still listed, its objects red) and no error in the panel; an error that
    switched live mode off stayed in the panel after the cause was fixed and a Detect
    went through."""
    scene = bpy.context.scene
    scenes.add_object("A", scenes.mesh("cube"))
    b = scenes.add_object("B", scenes.mesh("cube"), location=(1.5, 0, 0))
    bpy.ops.collide.detect()
    assert scenes.records() == [("A", "B")]
    b.location.x = 5.0
    scene.collide.tolerance = math.nan  # a script's; the property's minimum lets it through
    with pytest.raises(RuntimeError, match="Tolerance is nan: set it to a length"):
        bpy.ops.collide.detect()
    assert scenes.records() == []
    assert not any(obj.collide.tinted for obj in bpy.data.objects)
    assert "Tolerance is nan" in scene.collide.last_error
    drawn = []
    bpy.types.COLLIDE_PT_main.draw(SimpleNamespace(layout=RecordingLayout(drawn)), bpy.context)
    assert any("Tolerance is nan" in line for line in drawn)
    scene.collide.tolerance = 0.0
    bpy.ops.collide.detect()
    assert scene.collide.last_error == ""
    # An error of live mode's goes with the next check that goes through, or Clear.
    scene.collide.tolerance = math.nan
    scene.collide.live = True
    assert not scene.collide.live and scene.collide.last_error
    bpy.ops.collide.clear()
    assert scene.collide.last_error == ""


def test_an_object_with_a_nan_vertex_is_left_out_and_named_and_the_others_checked(
    addon, tmp_path, capfd
):
    """A NaN vertex in one object (a broken import, a script's division by zero) stopped
    the whole Detect, live mode and every report: no other clash was listed until it was
    fixed. It is left out now, named by Detect, the panel and the reports, and checked
    again once its geometry is fixed."""
    scene = bpy.context.scene
    scenes.add_object("A", scenes.mesh("cube"))
    scenes.add_object("B", scenes.mesh("cube"), location=(1.5, 0, 0))
    broken = scenes.add_object("C", scenes.mesh("cube", "C"), location=(-1.5, 0, 0))
    broken.data.vertices[0].co.x = math.nan
    broken.data.update()
    report = assert_c_left_out_and_the_others_checked(
        addon, capfd, tmp_path, "NaN or infinite vertex coordinates"
    )
    assert any(
        "left out of the check" in warning and "C" in warning for warning in report["warnings"]
    )
    # Fixed, it takes part again: in live mode at the edit, and in the next Detect.
    scene.collide.live = True
    broken.data.vertices[0].co.x = 1.0
    broken.data.update()
    bpy.context.view_layer.update()
    assert scenes.records() == [("A", "B"), ("A", "C")]
    drawn = []
    bpy.types.COLLIDE_PT_main.draw(SimpleNamespace(layout=RecordingLayout(drawn)), bpy.context)
    assert not any("Not checked" in line for line in drawn)
    broken.data.vertices[0].co.x = math.nan
    broken.data.update()
    bpy.context.view_layer.update()
    assert scene.collide.live and scenes.records() == [("A", "B")]
    scene.collide.live = False  # the tint is written when the edits stop
    bpy.ops.collide.detect()
    assert not broken.collide.tinted and tuple(broken.color) == (1.0, 1.0, 1.0, 1.0)


def test_a_tolerance_a_script_set_to_nan_is_named(addon):
    """The property's minimum lets NaN through: Detect failed with the core's "margin must
    be finite", naming nothing the user knows."""
    scenes.add_object("A", scenes.mesh("cube"))
    bpy.context.scene.collide.tolerance = math.nan
    with pytest.raises(RuntimeError, match="Tolerance is nan: set it to a length"):
        bpy.ops.collide.detect()


def test_selecting_a_clash_selects_both_objects(addon):
    a = scenes.add_object("A", scenes.mesh("cube"))
    b = scenes.add_object("B", scenes.mesh("cube"), location=(1, 0, 0))
    other = scenes.add_object("Other", scenes.mesh("cube"), location=(9, 0, 0))
    other.select_set(True)
    bpy.ops.collide.detect()
    bpy.context.scene.collide.active_clash_index = 0
    assert a.select_get() and b.select_get() and not other.select_get()
    assert bpy.context.view_layer.objects.active == a
    assert bpy.ops.collide.select_clash(index=0) == {"FINISHED"}
    assert bpy.ops.collide.select_clash(index=5) == {"CANCELLED"}

    # A timer's or a handler's context has a scene and a view layer but no
    # `selected_objects` (a script picking a row from a timer raised there).
    other.select_set(True)
    timer_context = SimpleNamespace(
        scene=bpy.context.scene, view_layer=bpy.context.view_layer, area=None
    )
    assert blender_module(addon, "session").select_clash(timer_context, 0)
    assert a.select_get() and b.select_get() and not other.select_get()

    # Picking a row of another scene leaves this scene's selection alone.
    second = bpy.data.scenes.new("Second")
    second.collection.objects.link(other)
    second.collide.clashes.add().name_a = "Other"
    for obj, selected in ((a, False), (b, False), (other, True)):
        obj.select_set(selected)
    second.collide.active_clash_index = 0
    assert other.select_get() and not a.select_get() and not b.select_get()
    bpy.data.scenes.remove(second)


def test_unregister_leaves_nothing_behind(addon):
    module = addon.__name__
    a = scenes.add_object("A", scenes.mesh("cube"))
    b = scenes.add_object("B", scenes.mesh("cube"), location=(1, 0, 0))
    a.color = b.color = ORIGINAL_COLOR
    bpy.context.scene.collide.live = True
    assert tuple(a.color) != ORIGINAL_COLOR

    handler_lists = [getattr(bpy.app.handlers, name) for name in dir(bpy.app.handlers)]
    handler_lists = [handlers for handlers in handler_lists if isinstance(handlers, list)]
    try:
        addon_utils.disable(module, default_set=True)
        assert tuple(a.color) == tuple(b.color) == ORIGINAL_COLOR
        for handlers in handler_lists:
            assert not [f for f in handlers if f.__module__.startswith(module)]
        assert not hasattr(bpy.types.Scene, "collide")
        assert not hasattr(bpy.types.Object, "collide")
        for name in ("COLLIDE_PT_main", "COLLIDE_UL_clashes", "CollideSceneSettings"):
            assert not hasattr(bpy.types, name)
        assert not hasattr(bpy.types, "COLLIDE_OT_detect")
    finally:
        addon_utils.enable(module, default_set=True)
    assert hasattr(bpy.types.Scene, "collide")


@READ_IN_BULK_ABOVE
def test_live_refits_after_geometry_and_shape_changes(addon, monkeypatch, few_updates):
    monkeypatch.setattr(blender_module(addon, "handlers"), "_FEW_UPDATES", few_updates)
    scene = bpy.context.scene
    scene.collide.check = "CONTACT"  # the instances below only come to touch
    grower = scenes.add_object("Grower", scenes.mesh("cube"))
    scenes.add_object("Neighbour", scenes.mesh("cube"), location=(3.0, 0, 0))
    host = scenes.geometry_nodes_instances("Host", count=2, spacing=10.0, size=1.0)
    host.location = (0.0, 10.0, 0.0)
    scene.collide.live = True
    assert scenes.records() == []

    # Mesh edit (as in edit mode or by a script): the cube grows to reach its neighbour.
    vertices = np.empty(len(grower.data.vertices) * 3, np.float32)
    grower.data.vertices.foreach_get("co", vertices)
    grower.data.vertices.foreach_set("co", vertices * 2.5)
    grower.data.update()
    bpy.context.view_layer.update()
    assert scenes.records() == [("Grower", "Neighbour")]

    # Geometry Nodes input: the instances come close enough to touch.
    line = host.modifiers["Instances"].node_group.nodes["Mesh Line"]
    line.inputs["Offset"].default_value = (1.0, 0.0, 0.0)
    bpy.context.view_layer.update()
    assert ("Host/Mesh[0]", "Host/Mesh[1]") in scenes.records()

    # A sphere around the grown cube (radius 2.5 * sqrt(3)) reaches further.
    grower.collide.shape = "SPHERE"
    assert grower.collide.fitted_kind == "SPHERE"
    record = next(r for r in scene.collide.clashes if r.name_a == "Grower")
    assert record.kind_a == "sphere"
    assert record.distance == pytest.approx(3.0 - 1.0 - 2.5 * 3**0.5, abs=0.01)


def test_deforming_geometry_is_refitted_per_frame(addon):
    scene = bpy.context.scene
    blob = scenes.add_object("Blob", scenes.mesh("cube"))
    # Grown by 3, the blob passes 0.5 into the post.
    scenes.add_object("Post", scenes.mesh("cube"), location=(3.5, 0, 0))
    scenes.grow_by_shape_key(blob, 3.0, last_frame=11)

    # Live mode: frame_change_post sees the geometry updates.
    scene.frame_set(1)
    scene.collide.live = True
    assert scenes.records() == []
    scene.frame_set(11)
    assert scenes.records() == [("Blob", "Post")]
    scene.collide.live = False

    # A report scan reads again what each frame change updated, in both geometries.
    for geometry in ("proxy", "mesh"):
        test = addon.clash.tests.clash_test_from_dict(
            {"name": "hard", "a": {}, "type": "hard", "geometry": geometry}
        )
        result = addon.blender.run_clash_report([test], frames=(1, 11, 1))
        [clash] = result.report["clashes"]
        assert (clash["a"], clash["b"], clash["worst_frame"]) == ("Blob", "Post", 11)


def test_live_geometry_changes_refit_only_what_changed(addon):
    scene = bpy.context.scene
    reader = blender_module(addon, "session").session_for(scene).reader
    blob = scenes.add_object("Blob", scenes.mesh("cube"))
    # Grown by 3, the blob passes 0.5 into the post.
    scenes.add_object("Post", scenes.mesh("cube"), location=(3.5, 0, 0))
    scenes.grow_by_shape_key(blob, 3.0, last_frame=11)
    scene.frame_set(1)
    scene.collide.live = True
    structure = reader._structure
    scene.frame_set(11)
    # The deformed object is read and fitted again; who takes part is kept.
    assert scenes.records() == [("Blob", "Post")]
    assert reader._structure is structure

    # A modifier gives the post another geometry key: who takes part is built again.
    post = bpy.data.objects["Post"]
    post.modifiers.new("Solidify", "SOLIDIFY")
    bpy.context.view_layer.update()
    assert reader._structure is not structure
    assert scenes.records() == [("Blob", "Post")]

    # An object whose mesh loses every vertex has no proxy any more.
    structure = reader._structure
    wall = scenes.add_object("Wall", scenes.mesh("cube"), location=(0, 3.5, 0))
    bpy.context.view_layer.update()
    assert ("Blob", "Wall") in scenes.records()
    wall.data.clear_geometry()
    wall.data.update()
    bpy.context.view_layer.update()
    assert "Wall" not in reader._structure.names
    assert scenes.records() == [("Blob", "Post")]
    scene.collide.live = False


def _edit_some(objects: list, rng, step: int, reader) -> np.ndarray:
    """Move and turn a few of `objects` (scale one every third step, move a parent at step
    4, edit a mesh at step 6, telling `reader`); returns their indices."""
    moved = rng.choice(len(objects), size=1 + step % 3, replace=False)
    for k in moved.tolist():
        objects[k].location += Vector(rng.normal(scale=0.3, size=3))
        objects[k].rotation_euler.z += float(rng.normal(scale=0.2))
    if step % 3 == 1:
        objects[int(moved[0])].scale = rng.uniform(0.5, 2.0, 3)
    if step == 4:
        # The parent moves: its child's matrix changes with it.
        objects[4].location.x += 0.7
    if step == 6:
        objects[9].data.vertices[0].co.x += 0.4
        objects[9].data.update()
        reader.geometry_changed({(objects[9].data.name, "data")})
    bpy.context.view_layer.update()
    return moved


def test_reads_place_only_moved_proxies_as_placing_all_would(addon, monkeypatch):
    # A read places again only the proxies whose matrix changed (or whose fit was made
    # again); the others keep their placement, which must be what placing them again
    # gives, bit for bit: moves, turns, scales (refits), parents and mesh edits.
    scene = bpy.context.scene
    scene_module = blender_module(addon, "scene")
    place_module = sys.modules[f"{addon.__name__}.core.place"]
    placed_counts = []
    place_fits = scene_module.place_fits

    def counted(fits, *args):
        placed_counts.append(len(fits))
        return place_fits(fits, *args)

    monkeypatch.setattr(scene_module, "place_fits", counted)
    rng = np.random.default_rng(7)
    kinds = ("cube", "sphere", "cylinder")
    objects = [
        scenes.add_object(f"Part{k}", scenes.mesh(kinds[k % 3]), location=rng.uniform(-4, 4, 3))
        for k in range(24)
    ]
    for k, obj in enumerate(objects):
        obj.collide.shape = ("AUTO", "BOX", "SPHERE", "CAPSULE")[k % 4]
        obj.rotation_euler = rng.uniform(0, 6.3, 3)
    objects[5].parent = objects[4]
    objects[4].scale = (1.0, 2.0, 0.5)
    bpy.context.view_layer.update()
    reader = scene_module.ProxyReader()

    def read():
        return reader.read(bpy.context.evaluated_depsgraph_get(), scene)

    read()
    for step in range(8):
        moved = _edit_some(objects, rng, step, reader)
        placed_counts.clear()
        proxies = read()
        assert placed_counts and placed_counts[0] < len(objects)
        # Every row placed again with the reader's fits (a fresh reader's fits may differ
        # in their last bits: fits are kept while the stretch moves by float32 noise).
        matrices = proxies.matrices
        orthogonal, stretch = place_module.polar_decompose(matrices[:, :3, :3])
        normalised, size = place_module.normalised_stretch(stretch)
        # The stretch the fits are kept for (and the refits made in) is today's.
        assert reader._structure.stretch.tobytes() == normalised.tobytes()
        fits = reader._structure.fit_arrays
        expected = place_fits(fits, orthogonal, size, matrices[:, :3, 3])
        for name in ("kinds", "centers", "rotations", "half_extents", "radii"):
            kept = getattr(proxies.batch, name)
            assert kept.tobytes() == getattr(expected, name).tobytes(), (step, name)
        if step % 3 == 1:  # the scaled object was fitted again
            assert proxies.names.index(objects[int(moved[0])].name) in proxies.refitted


def test_a_deforming_object_named_like_a_shared_mesh_refits_alone(addon, monkeypatch):
    # Objects and meshes may share names: the object "Part" deforming must not refit the
    # objects that share the mesh "Part".
    scene = bpy.context.scene
    scene_module = blender_module(addon, "scene")
    shared = scenes.mesh("cube", name="Part")
    for index in range(3):
        scenes.add_object(f"Copy{index}", shared, location=(3.0 * index, 5.0, 0))
    part = scenes.add_object("Part", scenes.mesh("cube", name="Own"))
    scenes.grow_by_shape_key(part, 2.0, last_frame=5)
    scene.frame_set(1)
    scene.collide.live = True
    fitted = []
    fit_shapes = scene_module.fit_shapes
    monkeypatch.setattr(
        scene_module,
        "fit_shapes",
        lambda point_sets, shape, progress: (
            fitted.extend(len(points) for points in point_sets)
            or fit_shapes(point_sets, shape, progress)
        ),
    )
    scene.frame_set(3)
    assert fitted == [len(part.data.vertices)]
    scene.collide.live = False


def test_deforming_frames_do_not_look_for_participants(addon, monkeypatch):
    # Finding who takes part walks every object; a frame where only one object deforms
    # reads that object's geometry again and nothing else.
    scene = bpy.context.scene
    scene_module = blender_module(addon, "scene")
    blob = scenes.add_object("Blob", scenes.mesh("cube"))
    scenes.add_object("Post", scenes.mesh("cube"), location=(3.5, 0, 0))
    scenes.grow_by_shape_key(blob, 3.0, last_frame=11)
    scene.frame_set(1)
    scene.collide.live = True
    looked = []
    participants = scene_module.participants
    monkeypatch.setattr(
        scene_module,
        "participants",
        lambda *args: looked.append(args) or participants(*args),
    )
    for frame in range(2, 12):
        scene.frame_set(frame)
    assert looked == []
    assert scenes.records() == [("Blob", "Post")]
    # Hiding an object on a frame still takes it out.
    bpy.data.objects["Post"].hide_viewport = True
    bpy.data.objects["Post"].keyframe_insert("hide_viewport", frame=5)
    scene.frame_set(5)
    assert looked
    assert scenes.records() == []
    scene.collide.live = False


def test_batch_reads_follow_animated_visibility(addon):
    scene = bpy.context.scene
    scenes.add_object("Still", scenes.mesh("cube"))
    blinker = scenes.add_object("Blinker", scenes.mesh("cube"), location=(5, 0, 0))
    for frame, hidden in ((1, False), (5, True), (9, False)):
        blinker.hide_viewport = hidden
        blinker.keyframe_insert("hide_viewport", frame=frame)
    reader = blender_module(addon, "scene").ProxyReader()
    seen = {}
    for frame in (1, 5, 9):
        scene.frame_set(frame)
        reader.recheck_participants()
        seen[frame] = sorted(reader.read(bpy.context.evaluated_depsgraph_get(), scene).names)
    assert seen == {1: ["Blinker", "Still"], 5: ["Still"], 9: ["Blinker", "Still"]}


def test_items_at_walks_a_collection_once_up_to_the_last_row(addon):
    items_at = blender_module(addon, "session").items_at
    records = bpy.context.scene.collide.clashes
    for index in range(12):
        records.add().name_a = f"Row{index}"
    assert [record.name_a for record in items_at(records, [0, 3, 4, 11])] == [
        "Row0",
        "Row3",
        "Row4",
        "Row11",
    ]
    assert list(items_at(records, [])) == []

    def walked_until_five():
        yield from range(6)
        raise AssertionError("walked past the last row asked for")

    assert list(items_at(walked_until_five(), [2, 5])) == [2, 5]
    records.clear()


def test_listed_pairs_keep_their_rows(addon):
    scene = bpy.context.scene
    cube = scenes.mesh("cube")
    objects = {
        name: scenes.add_object(name, cube, location=location)
        for name, location in (
            ("A", (0, 0, 0)),
            ("B", (1.5, 0, 0)),
            ("C", (0, 10, 0)),
            ("D", (1.0, 10, 0)),
            ("E", (0, 20, 0)),
            ("F", (5.0, 20, 0)),
        )
    }
    bpy.ops.collide.detect()
    assert [(r.name_a, r.name_b) for r in scene.collide.clashes] == [("A", "B"), ("C", "D")]
    scene.collide.active_clash_index = 1
    objects["C"].location.x = -5.0
    objects["F"].location.x = 1.75
    objects["A"].location.x = 0.5
    bpy.ops.collide.detect()
    rows = [(r.name_a, r.name_b, round(r.distance, 5)) for r in scene.collide.clashes]
    # (A, B) stays in row 0 with its new depth; (E, F) takes the row (C, D) left.
    assert rows == [("A", "B", -1.0), ("E", "F", -0.25)]
    objects["A"].location.x = -9.0
    bpy.ops.collide.detect()
    assert [(r.name_a, r.name_b) for r in scene.collide.clashes] == [("E", "F")]
    assert scene.collide.active_clash_index == -1


def test_live_edits_rewrite_only_the_measures_that_change(addon):
    """Live edits write a row's distance and point only where they changed: a value
    planted in an unchanged row stays (no write), while rows move up past removed ones
    and a row whose pair moved gets its new measures."""
    scene = bpy.context.scene
    cube = scenes.mesh("cube")
    objects = {
        name: scenes.add_object(name, cube, location=location)
        for name, location in (("A", (0, 0, 0)), ("B", (1.5, 0, 0)), ("C", (0, 10, 0)))
    }
    objects["D"] = scenes.add_object("D", cube, location=(1.0, 10, 0))
    scene.collide.live = True
    records = scene.collide.clashes
    assert [(r.name_a, r.name_b) for r in records] == [("A", "B"), ("C", "D")]
    records[1]["distance"] = 123.0  # planted: rewritten only if (C, D) is
    objects["A"].location.x = 0.25
    bpy.context.view_layer.update()
    assert [(r.name_a, round(r.distance, 5)) for r in records] == [("A", -0.75), ("C", 123.0)]
    objects["A"].location.x = -9.0  # (A, B) ends: (C, D) moves up, its row unchanged
    bpy.context.view_layer.update()
    assert [(r.name_a, r.distance) for r in records] == [("C", 123.0)]
    objects["C"].location.x = 0.5
    bpy.context.view_layer.update()
    assert [(r.name_a, round(r.distance, 5)) for r in records] == [("C", -1.5)]
    scene.collide.live = False


def test_detect_refuses_a_bad_thread_count_and_fits_on_one_thread(addon, monkeypatch):
    scenes.add_object("A", scenes.mesh("cube"))
    scenes.add_object("B", scenes.mesh("sphere"), location=(1.5, 0, 0))
    monkeypatch.setenv("COLLIDE_THREADS", "many")
    with pytest.raises(RuntimeError, match="COLLIDE_THREADS must be a whole number >= 1"):
        bpy.ops.collide.detect()
    monkeypatch.setenv("COLLIDE_THREADS", "1")
    assert bpy.ops.collide.detect() == {"FINISHED"}
    assert len(bpy.context.scene.collide.clashes) == 1


def test_detect_prints_progress_in_background(addon, capfd):
    # 60 objects, 60 meshes of their own (copies of one sphere: one search, then the
    # copies): both stages, each tenth once and in order, although fits are reported a
    # group of meshes at a time, and the copies after them.
    for index in range(60):
        scenes.add_object(f"Part{index}", scenes.mesh("sphere"), location=(3.0 * index, 0, 0))
    assert bpy.ops.collide.detect() == {"FINISHED"}
    captured = capfd.readouterr()
    assert "0 clash(es) among 60 objects, decided on their proxies" in captured.out + captured.err
    lines = [line for line in captured.err.splitlines() if line.startswith("collide:")]
    assert lines[0] == "collide: reading proxies 0%"
    fitting = [line for line in lines if line.startswith("collide: fitting proxies")]
    assert fitting[0] == "collide: fitting proxies 0%"
    assert fitting[-1] == "collide: fitting proxies 100%"
    assert len(fitting) == len(set(fitting))
    assert lines.index(fitting[0]) > lines.index("collide: reading proxies 0%")


def test_a_report_run_prints_a_long_mesh_stage_in_background(addon, capfd, monkeypatch):
    # With no pause between lines (as if each stage were long): the mesh test's pairs at
    # each frame are reported as they are decided, among the frames' own lines. The parts
    # move, so that frame 2 decides its pairs again (a pair of objects that kept their
    # places keeps its contact from the frame before).
    report_run = sys.modules[f"{addon.__name__}.blender.report_run"]
    monkeypatch.setattr(report_run, "PROGRESS_INTERVAL", 0.0)
    for index in range(6):
        part = scenes.add_object(f"Part{index}", scenes.mesh("sphere"))
        scenes.animate_location(part, {1: (1.5 * index, 0, 0), 2: (1.5 * index, 0.1, 0)})
    test = addon.clash.tests.clash_test_from_dict(
        {"name": "hard", "a": {}, "type": "hard", "geometry": "mesh"}
    )
    result = addon.blender.run_clash_report([test], frames=(1, 2, 1))
    assert len(result.report["clashes"]) == 5
    lines = [line for line in capfd.readouterr().err.splitlines() if line.startswith("collide:")]
    for frame in (1, 2):
        stage = f"collide: frame {frame}, test 'hard': deciding pairs on meshes"
        assert f"{stage} (0/5, 0%)" in lines and f"{stage} (5/5, 100%)" in lines
        [sample] = [
            k for k, line in enumerate(lines) if line.startswith(f"collide: frame {frame} (")
        ]
        assert lines.index(f"{stage} (5/5, 100%)") < sample


def test_detect_on_meshes_prints_the_pairs_progress_in_background(addon, capfd, monkeypatch):
    # 60 spheres in a chain, each overlapping the next: 59 candidate pairs decided on
    # their triangles in shares of 8, each tenth reported once, after the fits.
    monkeypatch.setattr(sys.modules[f"{addon.__name__}.core.mesh"], "_PAIRS_PER_SHARE", 8)
    for index in range(60):
        scenes.add_object(f"Part{index}", scenes.mesh("sphere"), location=(1.5 * index, 0, 0))
    bpy.context.scene.collide.geometry = "MESH"
    assert bpy.ops.collide.detect() == {"FINISHED"}
    assert len(bpy.context.scene.collide.clashes) == 59
    captured = capfd.readouterr()
    assert "59 clash(es) among 60 objects, decided on their meshes" in captured.out + captured.err
    lines = [line for line in captured.err.splitlines() if line.startswith("collide:")]
    meshes = [line for line in lines if line.startswith("collide: deciding pairs on meshes")]
    assert meshes[0] == "collide: deciding pairs on meshes 0%"
    assert meshes[-1] == "collide: deciding pairs on meshes 100%"
    assert 3 <= len(meshes) == len(set(meshes))
    assert lines.index(meshes[0]) > lines.index("collide: fitting proxies 100%")


def test_bulk_matrix_read_detects_a_changed_object_count(addon):
    scene_module = blender_module(addon, "scene")
    for x in (0.0, 2.0, 4.0):
        bpy.ops.mesh.primitive_cube_add(location=(x, 0.0, 0.0))
    depsgraph = bpy.context.evaluated_depsgraph_get()
    count = len(depsgraph.view_layer_eval.objects)
    matrices = scene_module._matrices_if_count(depsgraph, count)
    locations = sorted(np.round(matrices[:, :3, 3], 6).tolist())
    assert locations == [[0.0, 0.0, 0.0], [2.0, 0.0, 0.0], [4.0, 0.0, 0.0]]
    # One object more or fewer than expected, and far more (Blender raises inside).
    assert scene_module._matrices_if_count(depsgraph, count - 1) is None
    assert scene_module._matrices_if_count(depsgraph, count + 1) is None
    assert scene_module._matrices_if_count(depsgraph, 0) is None


def _second_scene(names_and_places) -> bpy.types.Scene:
    """A scene "S2" (not the context's) with cubes at the given places."""
    other = bpy.data.scenes.new("S2")
    for name, location in names_and_places:
        obj = scenes.add_object(name, scenes.mesh("cube"), location=location)
        bpy.context.scene.collection.objects.unlink(obj)
        other.collection.objects.link(obj)
        obj.color = ORIGINAL_COLOR
    return other


def test_settings_act_on_the_scene_that_owns_them(addon):
    other = _second_scene((("C", (0, 0, 0)), ("D", (1, 0, 0))))
    assert bpy.context.scene != other
    other.collide.live = True  # from a script, while another scene is the context's
    assert scenes.records(other) == [("C", "D")]
    assert tuple(other.objects["C"].color) == tuple(other.collide.clash_color)
    other.collide.check = "CONTACT"
    other.collide.tolerance = 0.5
    assert scenes.records(other) == [("C", "D")]
    other.objects["D"].collide.shape = "SPHERE"  # refits in the scene holding D
    assert [(r.kind_a, r.kind_b) for r in other.collide.clashes] == [("box", "sphere")]
    other.collide.live = False
    assert tuple(other.objects["C"].color) == ORIGINAL_COLOR


def test_the_tint_is_per_scene(addon, tmp_path):
    scene = bpy.context.scene
    a = scenes.add_object("A", scenes.mesh("cube"))
    b = scenes.add_object("B", scenes.mesh("cube"), location=(1, 0, 0))
    a.color = b.color = ORIGINAL_COLOR
    other = _second_scene((("C", (0, 0, 0)), ("D", (1, 0, 0))))
    scene.collide.live = True
    tinted = tuple(scene.collide.clash_color)
    assert tuple(a.color) == tinted

    # Detect in another scene keeps this scene's tint, and so does its Clear.
    with bpy.context.temp_override(scene=other, view_layer=other.view_layers[0]):
        assert bpy.ops.collide.detect() == {"FINISHED"}
        assert tuple(a.color) == tuple(b.color) == tinted
        assert tuple(other.objects["C"].color) == tuple(other.collide.clash_color)
        assert bpy.ops.collide.clear() == {"FINISHED"}
    assert tuple(a.color) == tuple(b.color) == tinted
    assert tuple(other.objects["C"].color) == ORIGINAL_COLOR
    assert scenes.records() == [("A", "B")]
    # So does switching live mode on and off there.
    other.collide.live = True
    assert tuple(other.objects["C"].color) == tuple(other.collide.clash_color)
    other.collide.live = False
    assert tuple(a.color) == tuple(b.color) == tinted

    # A failed save gives the tint back as a successful one does.
    with pytest.raises(RuntimeError):
        bpy.ops.wm.save_as_mainfile(filepath=str(tmp_path / "missing" / "x.blend"), copy=True)
    assert tuple(a.color) == tuple(b.color) == tinted
    scene.collide.live = False
    assert tuple(a.color) == tuple(b.color) == ORIGINAL_COLOR


def test_an_object_in_two_scenes_keeps_its_tint_while_either_lists_it(addon):
    """A in S1 and S2: S1 checked (nothing), S2's Detect tints A (A x C), S1's then
    lists A x B; S2's Clear untinted A, though S1 still listed it (S1 was not recorded
    as holding an object another scene had tinted in its colour)."""
    first = bpy.context.scene
    a = scenes.add_object("A", scenes.mesh("cube"))
    b = scenes.add_object("B", scenes.mesh("cube"), location=(3, 0, 0))
    a.color = b.color = ORIGINAL_COLOR
    second = bpy.data.scenes.new("S2")
    for obj in (a, b):
        second.collection.objects.link(obj)
    scenes.add_object("C", scenes.mesh("cube"), location=(0, 0.5, 0), collection=second.collection)
    assert bpy.ops.collide.detect() == {"FINISHED"}  # nothing in S1 yet
    with bpy.context.temp_override(scene=second, view_layer=second.view_layers[0]):
        assert bpy.ops.collide.detect() == {"FINISHED"}
    b.location.x = 0.5
    bpy.context.view_layer.update()
    assert bpy.ops.collide.detect() == {"FINISHED"}
    assert scenes.records() == [("A", "B")]
    with bpy.context.temp_override(scene=second, view_layer=second.view_layers[0]):
        assert bpy.ops.collide.clear() == {"FINISHED"}
    tinted = tuple(first.collide.clash_color)
    assert tuple(a.color) == tuple(b.color) == tinted
    assert bpy.ops.collide.clear() == {"FINISHED"}
    assert tuple(a.color) == tuple(b.color) == ORIGINAL_COLOR


def test_live_mode_follows_animated_visibility(addon):
    scene = bpy.context.scene
    scenes.add_object("Still", scenes.mesh("cube"))
    blinker = scenes.add_object("Blinker", scenes.mesh("cube"), location=(1, 0, 0))
    for frame, hidden in ((1, False), (5, True), (9, False)):
        blinker.hide_viewport = hidden
        blinker.keyframe_insert("hide_viewport", frame=frame)
    scene.frame_set(1)
    scene.collide.live = True
    seen = {}
    for frame in range(1, 11):
        scene.frame_set(frame)
        seen[frame] = scenes.records()
    assert seen == {
        frame: [] if 5 <= frame < 9 else [("Still", "Blinker")] for frame in range(1, 11)
    }


def _sorted_segments(segments: np.ndarray) -> np.ndarray:
    """Segments (m, 2, 3) as rows sorted lexicographically, rounded: (m, 6)."""
    rows = np.round(np.asarray(segments, np.float64).reshape(-1, 6), 4)
    return rows[np.lexsort(rows.T[::-1])]


def test_wireframes_place_again_only_what_moved(addon):
    core = sys.modules[f"{addon.__name__}.core"]
    wireframe = sys.modules[f"{addon.__name__}.core.wireframe"]
    rng = np.random.default_rng(3)

    def rotations(count):
        quaternions = rng.normal(size=(count, 4))
        w, x, y, z = (quaternions / np.linalg.norm(quaternions, axis=1)[:, None]).T
        return np.stack(
            [
                [1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
                [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
                [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)],
            ]
        ).transpose(2, 0, 1)

    def batch(centers, turns):
        boxes = core.ShapeBatch.boxes(centers[:4], turns[:4], rng.uniform(0.1, 1, (4, 3)))
        spheres = core.ShapeBatch.spheres(centers[4:7], np.array([0.5, 1.0, 2.0]))
        axes = turns[7:, :, 2] * np.array([0.5, 1.0, 0.0])[:, None]
        capsules = core.ShapeBatch.capsules(
            centers[7:] - axes, centers[7:] + axes, np.array([0.3, 0.2, 0.4])
        )
        return core.ShapeBatch.concat([boxes, spheres, capsules])

    centers, turns = rng.uniform(-10, 10, (10, 3)), rotations(10)
    shapes = batch(centers, turns)
    wireframes = blender_module(addon, "draw").Wireframes()
    drawn = wireframes.segments(shapes)
    assert drawn.dtype == np.float32
    expected = _sorted_segments(wireframe.wireframe_segments(shapes))
    np.testing.assert_allclose(_sorted_segments(drawn), expected, atol=2e-3)

    # Half of them move and turn; the same shapes elsewhere.
    moved = np.arange(10) % 2 == 0
    centers[moved] += rng.uniform(-3, 3, (5, 3))
    turns[moved] = rotations(5)
    shapes = core.ShapeBatch(shapes.kinds, centers, turns, shapes.half_extents, shapes.radii)
    expected = _sorted_segments(wireframe.wireframe_segments(shapes))
    np.testing.assert_allclose(_sorted_segments(wireframes.segments(shapes)), expected, atol=2e-3)

    # Other sizes (a refit): made again.
    rng = np.random.default_rng(4)
    shapes = batch(centers, turns)
    expected = _sorted_segments(wireframe.wireframe_segments(shapes))
    np.testing.assert_allclose(_sorted_segments(wireframes.segments(shapes)), expected, atol=2e-3)


def test_a_mesh_deformed_by_its_armature_parent_is_read_as_posed(addon):
    """Parented with Armature Deform (parent type ARMATURE, no modifier): its mesh was
    keyed as used as it is, read once at the first pose and never again (no clash when
    the bone had moved it into a wall), and its shape passed to an undeformed twin
    sharing the mesh (a false clash there)."""
    scene = bpy.context.scene
    rig = bpy.data.objects.new("Rig", bpy.data.armatures.new("Rig"))
    scene.collection.objects.link(rig)
    bpy.context.view_layer.objects.active = rig
    bpy.ops.object.mode_set(mode="EDIT")
    bone = rig.data.edit_bones.new("Bone")
    bone.head, bone.tail = (0, 0, 0), (0, 0, 1)
    bpy.ops.object.mode_set(mode="OBJECT")
    bar = scenes.add_object("Bar", scenes.mesh("cube", "Shared"), scale=(0.5, 0.5, 0.5))
    bar.vertex_groups.new(name="Bone").add(list(range(len(bar.data.vertices))), 1.0, "REPLACE")
    bar.parent, bar.parent_type = rig, "ARMATURE"
    scenes.add_object("Wall", scenes.mesh("cube"), location=(4, 0, 0), scale=(0.5, 0.5, 0.5))
    # The twin shares the bar's mesh, undeformed, 2 m from where the bar goes.
    scenes.add_object("Twin", bar.data, location=(4, 3, 0), scale=(0.5, 0.5, 0.5))
    pose = rig.pose.bones["Bone"]
    for frame, x in ((1, 0.0), (11, 4.0)):
        pose.location = (x, 0, 0)
        pose.keyframe_insert("location", frame=frame)
    for geometry in ("PROXY", "MESH"):
        scene.collide.geometry = geometry
        scene.frame_set(1)
        assert bpy.ops.collide.detect() == {"FINISHED"}
        assert scenes.records() == []
        scene.frame_set(11)  # the bar now in the wall
        assert bpy.ops.collide.detect() == {"FINISHED"}
        assert scenes.records() == [("Bar", "Wall")]
        bpy.ops.collide.clear()


@pytest.mark.parametrize("how", ["swap", "write"])
def test_a_mesh_a_frame_handler_changes_is_read_again(addon, how):
    """Stop motion: a frame handler swaps an object's mesh, or writes its vertices, as
    mesh-sequence add-ons do. Frame changes looked for geometry updates only where a
    participant had modifiers or shape keys: live mode and a Detect after scrubbing
    decided on the first frame's mesh."""
    scene = bpy.context.scene
    scenes.add_object("Wall", scenes.mesh("cube"), location=(4, 0, 0))
    poses = [scenes.mesh("cube", f"Pose {frame}") for frame in range(2)]
    poses[1].transform(Matrix.Translation((4.0, 0.0, 0.0)))
    mover = scenes.add_object("Mover", scenes.mesh("cube", "Mover"))

    def play(changed, *_):
        pose = poses[1 if changed.frame_current >= 5 else 0]
        if how == "swap":
            mover.data = pose
        else:
            corners = np.empty(3 * len(pose.vertices), np.float32)
            pose.vertices.foreach_get("co", corners)
            mover.data.vertices.foreach_set("co", corners)
            mover.data.update()

    def pairs():
        return sorted(tuple(sorted(record)) for record in scenes.records())

    bpy.app.handlers.frame_change_pre.append(play)
    try:
        scene.frame_set(1)
        assert bpy.ops.collide.detect() == {"FINISHED"}
        assert scenes.records() == []
        scene.frame_set(5)
        assert bpy.ops.collide.detect() == {"FINISHED"}
        assert pairs() == [("Mover", "Wall")]
        scene.collide.live = True
        for frame, expected in ((1, []), (6, [("Mover", "Wall")]), (2, [])):
            scene.frame_set(frame)
            assert pairs() == expected, frame
        scene.collide.live = False
    finally:
        bpy.app.handlers.frame_change_pre.remove(play)


def test_the_panel_tells_not_checked_from_no_clashes(addon):
    """ "Clashes: 0" was shown before any check, after a check that found none and after
    Clear alike."""

    def count_line():
        drawn = []
        bpy.types.COLLIDE_PT_main.draw(SimpleNamespace(layout=RecordingLayout(drawn)), bpy.context)
        return [line for line in drawn if line in ("label: Not checked", "label: No clashes")]

    scenes.add_object("A", scenes.mesh("cube"))
    assert count_line() == ["label: Not checked"]
    assert bpy.ops.collide.detect() == {"FINISHED"}
    assert count_line() == ["label: No clashes"]
    scenes.add_object("B", scenes.mesh("cube"), location=(1, 0, 0))
    assert bpy.ops.collide.detect() == {"FINISHED"}
    assert count_line() == [] and len(bpy.context.scene.collide.clashes) == 1
    assert bpy.ops.collide.clear() == {"FINISHED"}
    assert count_line() == ["label: Not checked"]
    # A scene read error is said as the user should read it, not as a Python class.
    bpy.context.scene.collide.tolerance = math.nan
    with pytest.raises(RuntimeError):
        bpy.ops.collide.detect()
    assert bpy.context.scene.collide.last_error.startswith("Tolerance is nan")


def test_the_clash_list_filters_and_sorts_by_either_name(addon):
    """The rows' own name is empty: Blender's filter hid every row for any text typed
    (200 clashes, looking for beam 0151) and its sort by name sorted nothing."""
    for index, x in enumerate((0.0, 1.5, 3.0)):
        scenes.add_object(f"Beam_{150 + index:04d}", scenes.mesh("cube"), location=(x, 0, 0))
    scenes.add_object("Column", scenes.mesh("cube"), location=(3.0, 1.5, 0))
    assert bpy.ops.collide.detect() == {"FINISHED"}
    settings = bpy.context.scene.collide
    rows = [(item.name_a, item.name_b) for item in settings.clashes]
    shown = 1 << 30

    def filtered(pattern="", sort=False):
        list_state = SimpleNamespace(
            filter_name=pattern, bitflag_filter_item=shown, use_filter_sort_alpha=sort
        )
        return bpy.types.COLLIDE_UL_clashes.filter_items(
            list_state, bpy.context, settings, "clashes"
        )

    flags, _ = filtered("0151")
    assert sorted(rows[k] for k, flag in enumerate(flags) if flag == shown) == sorted(
        row for row in rows if "Beam_0151" in row
    )
    flags, _ = filtered("COLUMN")  # case-insensitive, as Blender's
    assert [rows[k] for k, flag in enumerate(flags) if flag] == [
        row for row in rows if "Column" in row
    ]
    assert filtered() == ([], [])
    _, order = filtered(sort=True)
    by_position = sorted(range(len(rows)), key=lambda k: order[k])
    assert [rows[k] for k in by_position] == sorted(
        rows, key=lambda row: (row[0].lower(), row[1].lower())
    )
