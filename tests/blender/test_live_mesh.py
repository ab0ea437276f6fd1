"""The panel's Geometry setting: Detect and live mode deciding on the proxies or on the
evaluated triangles (bpy 5.0.1 wheel)."""

import sys
from pathlib import Path

import bmesh
import bpy
import numpy as np
import pytest

from collide_dev.mesh_shapes import box_mesh, torus

from . import scenes


def mesh_from_arrays(name: str, vertices: np.ndarray, triangles: np.ndarray) -> bpy.types.Mesh:
    data = bpy.data.meshes.new(name)
    data.from_pydata(vertices.tolist(), [], triangles.tolist())
    data.update()
    return data


def ring_pin_and_beams() -> None:
    """Ring, a torus (major radius 1, minor 0.25), with Pin, a 0.2 m cube, in its hole:
    the ring's proxy covers the pin, its triangles stay 0.65 m away. 10 m along x, two
    0.4 m thick beams cross at right angles: their meshes penetrate."""
    scenes.add_object("Ring", mesh_from_arrays("Ring", *torus(1.0, 0.25, 48, 16)))
    scenes.add_object("Pin", mesh_from_arrays("Pin", *box_mesh([-0.1] * 3, [0.1] * 3)))
    beam_x = box_mesh([-2.0, -0.2, -0.2], [2.0, 0.2, 0.2])
    beam_y = box_mesh([-0.2, -2.0, -0.2], [0.2, 2.0, 0.2])
    scenes.add_object("Beam.X", mesh_from_arrays("Beam.X", *beam_x), location=(10, 0, 0))
    scenes.add_object("Beam.Y", mesh_from_arrays("Beam.Y", *beam_y), location=(10, 0, 0.1))


def clash_rows(settings) -> dict[tuple[str, str], tuple[float, bool]]:
    return {
        (record.name_a, record.name_b): (record.distance, record.on_mesh)
        for record in settings.clashes
    }


@pytest.mark.parametrize("check", ["PENETRATION", "CONTACT"])
def test_mesh_geometry_drops_proxy_only_clashes(addon, check):
    ring_pin_and_beams()
    settings = bpy.context.scene.collide
    settings.check = check
    assert settings.geometry == "PROXY"  # the default: live speed
    assert bpy.ops.collide.detect() == {"FINISHED"}
    rows = clash_rows(settings)
    assert set(rows) == {("Ring", "Pin"), ("Beam.X", "Beam.Y")}
    assert not any(on_mesh for _, on_mesh in rows.values())

    settings.geometry = "MESH"
    assert bpy.ops.collide.detect() == {"FINISHED"}
    rows = clash_rows(settings)
    assert set(rows) == {("Beam.X", "Beam.Y")}
    distance, on_mesh = rows["Beam.X", "Beam.Y"]
    assert on_mesh and distance < -0.1
    # The clash point, between the meshes' witness points, lies on or in a beam.
    point = np.array(settings.clashes[0].point)
    in_beam_x = np.all(np.abs(point - (10.0, 0.0, 0.0)) <= np.add((2.0, 0.2, 0.2), 1e-6))
    in_beam_y = np.all(np.abs(point - (10.0, 0.0, 0.1)) <= np.add((0.2, 2.0, 0.2), 1e-6))
    assert in_beam_x or in_beam_y


def test_live_mode_follows_the_geometry_setting_and_moves(addon):
    ring_pin_and_beams()
    scene = bpy.context.scene
    settings = scene.collide
    settings.geometry = "MESH"
    settings.live = True
    assert set(clash_rows(settings)) == {("Beam.X", "Beam.Y")}
    # The pin moves onto the ring's tube: now the triangles cross too.
    pin = bpy.data.objects["Pin"]
    pin.location = (1.0, 0.0, 0.2)
    bpy.context.view_layer.update()
    rows = clash_rows(settings)
    assert set(rows) == {("Ring", "Pin"), ("Beam.X", "Beam.Y")}
    assert rows["Ring", "Pin"][1]
    # Back in the hole: gone again; switching to proxies brings it back.
    pin.location = (0.0, 0.0, 0.0)
    bpy.context.view_layer.update()
    assert set(clash_rows(settings)) == {("Beam.X", "Beam.Y")}
    settings.geometry = "PROXY"
    assert set(clash_rows(settings)) == {("Ring", "Pin"), ("Beam.X", "Beam.Y")}


def test_live_mode_on_meshes_follows_an_edit_inside_the_proxy(addon):
    """The ring's inner vertices pulled in through the pin: the ring's hull, and so its
    proxy, stay as they were, yet the pair is decided again on the new triangles (the
    pairs of objects whose proxy and matrix did not change are kept between checks only
    while no mesh changed)."""
    ring_pin_and_beams()
    settings = bpy.context.scene.collide
    settings.geometry = "MESH"
    settings.live = True
    assert set(clash_rows(settings)) == {("Beam.X", "Beam.Y")}
    session = sys.modules[f"{addon.__name__}.blender.session"].session_for(bpy.context.scene)
    before = ring_proxy(session)
    ring = bpy.data.objects["Ring"].data
    coordinates = np.zeros(len(ring.vertices) * 3)
    ring.vertices.foreach_get("co", coordinates)
    coordinates = coordinates.reshape(-1, 3)
    inner = np.hypot(coordinates[:, 0], coordinates[:, 1]) < 0.8
    coordinates[inner, :2] *= 0.05 / 0.75
    ring.vertices.foreach_set("co", coordinates.ravel())
    ring.update()
    bpy.context.view_layer.update()
    np.testing.assert_array_equal(ring_proxy(session), before)
    rows = clash_rows(settings)
    assert set(rows) == {("Ring", "Pin"), ("Beam.X", "Beam.Y")}
    assert rows["Ring", "Pin"][1]


def ring_proxy(session) -> np.ndarray:
    """The Ring's proxy of the last check: centre, rotation, half extents, radius."""
    row = session.proxies.names.index("Ring")
    batch = session.proxies.batch
    return np.concatenate(
        [
            batch.centers[row],
            batch.rotations[row].ravel(),
            batch.half_extents[row],
            [batch.radii[row]],
        ]
    )


FZK_HAUS = Path(__file__).resolve().parent.parent / "data" / "ifc" / "ac20-fzk-haus.npz"


@pytest.mark.parametrize("geometry", ["PROXY", "MESH"])
def test_live_edits_of_a_real_house_equal_fresh_checks(addon, geometry):
    """The FZK-Haus's 82 elements as objects. Live checks keep the answers of the pairs
    whose objects did not change; after every drag of a random element, and after edits
    of an element's mesh, the clash rows must be what a check from nothing gives (the
    rows are float32, as Blender stores them)."""
    data = np.load(FZK_HAUS)
    vertex_offsets, triangle_offsets = data["vertex_offsets"], data["triangle_offsets"]
    objects = []
    for k, name in enumerate(data["names"]):
        vertices = data["vertices"][vertex_offsets[k] : vertex_offsets[k + 1]]
        triangles = data["triangles"][triangle_offsets[k] : triangle_offsets[k + 1]]
        objects.append(
            scenes.add_object(str(name), mesh_from_arrays(str(name), vertices, triangles))
        )
    scene = bpy.context.scene
    settings = scene.collide
    settings.geometry = geometry
    settings.live = True
    session = sys.modules[f"{addon.__name__}.blender.session"]
    rng = np.random.default_rng(11)
    for step in range(12):
        obj = objects[int(rng.integers(len(objects)))]
        if step % 4 == 3:
            coordinates = np.zeros(len(obj.data.vertices) * 3)
            obj.data.vertices.foreach_get("co", coordinates)
            obj.data.vertices.foreach_set("co", coordinates * 1.01)
            obj.data.update()
        else:
            obj.location = np.array(obj.location) + rng.normal(0.0, 0.1, 3)
        bpy.context.view_layer.update()
        live = session.session_for(scene)
        proxies = live.proxies
        meshes = live.reader.frame_meshes(proxies) if geometry == "MESH" else None
        fresh = session.find_clashes(proxies, settings.check, settings.tolerance, None, meshes)
        expected = {
            (proxies.names[i], proxies.names[j]): (
                np.float32(distance),
                tuple(np.float32(point)),
                on_mesh,
            )
            for (i, j), distance, point, on_mesh in zip(
                fresh.pairs.tolist(),
                fresh.distances,
                fresh.points,
                fresh.on_mesh.tolist(),
                strict=True,
            )
        }
        rows = {
            (row.name_a, row.name_b): (
                np.float32(row.distance),
                tuple(np.float32(row.point)),
                row.on_mesh,
            )
            for row in settings.clashes
        }
        assert rows == expected, step
    assert len(rows) > 20
    settings.live = False


def test_objects_without_triangles_are_decided_on_their_proxies(addon):
    # A curve without bevel has vertices (a proxy) but no triangles.
    curve = bpy.data.curves.new("Wire", "CURVE")
    spline = curve.splines.new("POLY")
    spline.points.add(1)
    spline.points[0].co = (-3.0, 0.0, 0.0, 1.0)
    spline.points[1].co = (3.0, 0.0, 0.0, 1.0)
    scenes.add_object("Wire", curve)
    scenes.add_object("Block", scenes.mesh("cube"))
    settings = bpy.context.scene.collide
    settings.geometry = "MESH"
    assert bpy.ops.collide.detect() == {"FINISHED"}
    rows = clash_rows(settings)
    assert set(rows) == {("Wire", "Block")} or set(rows) == {("Block", "Wire")}
    assert not next(iter(rows.values()))[1]


def test_the_panel_says_when_mesh_checks_are_slower_than_a_frame(addon, monkeypatch):
    ui = sys.modules[f"{addon.__name__}.blender.ui"]
    ring_pin_and_beams()
    scene = bpy.context.scene
    settings = scene.collide
    settings.geometry = "MESH"
    assert bpy.ops.collide.detect() == {"FINISHED"}
    seconds = sys.modules[f"{addon.__name__}.blender.session"].session_for(scene).mesh_seconds
    assert seconds > 0
    # Whatever this machine's speed: a budget below and above the measured time.
    monkeypatch.setattr(ui, "FRAME_SECONDS", seconds / 2)
    assert ui.mesh_cost_note(scene) == f"Mesh check: {seconds * 1e3:.0f}\u00a0ms"
    # In live mode it says that live mode lags: a neutral "Mesh check: 2477 ms" was all
    # a window frozen for seconds a frame showed.
    monkeypatch.setattr(ui, "FRAME_SECONDS", 0.0)
    settings.live = True
    live_note = ui.mesh_cost_note(scene)
    assert live_note.startswith("Mesh check ") and live_note.endswith(
        "live mode lags; Proxy is faster"
    )
    settings.live = False
    monkeypatch.setattr(ui, "FRAME_SECONDS", seconds * 2)
    assert ui.mesh_cost_note(scene) is None
    # Deciding on proxies says nothing, however long the last check took.
    monkeypatch.setattr(ui, "FRAME_SECONDS", 0.0)
    settings.geometry = "PROXY"
    assert bpy.ops.collide.detect() == {"FINISHED"}
    assert ui.mesh_cost_note(scene) is None


def test_instances_are_decided_on_their_own_meshes(addon):
    # Geometry Nodes instances (2 m cubes 1.5 m apart) and collection instances (unit
    # spheres 1.5 m apart) overlap on their triangles too, each placed by its instance's
    # matrix.
    scenes.geometry_nodes_instances("Host", count=3, spacing=1.5, size=2.0)
    source_collection = bpy.data.collections.new("Parts")
    scenes.add_object("Part", scenes.mesh("sphere"), collection=source_collection)
    for name, x in (("InstanceA", 10.0), ("InstanceB", 11.5), ("InstanceC", 14.5)):
        empty = bpy.data.objects.new(name, None)
        empty.instance_type = "COLLECTION"
        empty.instance_collection = source_collection
        empty.location = (x, 0.0, 0.0)
        bpy.context.scene.collection.objects.link(empty)
    settings = bpy.context.scene.collide
    settings.geometry = "MESH"
    assert bpy.ops.collide.detect() == {"FINISHED"}
    rows = clash_rows(settings)
    assert set(rows) == {
        ("Host/Mesh[0]", "Host/Mesh[1]"),
        ("Host/Mesh[1]", "Host/Mesh[2]"),
        ("InstanceA/Part", "InstanceB/Part"),
    }
    assert all(on_mesh and distance < 0 for distance, on_mesh in rows.values())


def test_geometry_is_read_as_blender_triangulates_it(addon, monkeypatch):
    """The add-on reads positions and triangles through bulk attribute reads where
    Blender has them; they must equal Blender's own vertex coordinates and loop
    triangles: on a mesh with a concave n-gon, a non-planar quad and a triangle, and on
    an evaluated mesh with a modifier (both small: Blender's triangles are read); on a
    large mesh of triangles and quads, concave ones in every order of their corners and
    rough non-planar ones (made from the faces' corners, `core.faces.split_faces`, when
    first asked for, not by the read); and on the same with a pentagon (Blender's
    triangles again)."""
    vertices = [
        (0, 0, 0), (4, 0, 0), (4, 3, 0), (2, 1, 0), (0, 3, 0),  # concave pentagon
        (5, 0, 0), (6, 0, 1), (6, 1, 0), (5, 1, 1),  # non-planar quad
        (7, 0, 0), (8, 0, 0), (7, 1, 0),  # triangle
    ]  # fmt: skip
    faces = [(0, 1, 2, 3, 4), (5, 6, 7, 8), (9, 10, 11)]
    data = bpy.data.meshes.new("Awkward")
    data.from_pydata(vertices, [], faces)
    plain = scenes.add_object("Awkward", data)
    modified = scenes.add_object("Subdivided", data, location=(0, 5, 0))
    modified.modifiers.new("Subdivision", "SUBSURF").levels = 1
    dart = [(0, 0, 0), (2, 0, 0), (0.5, 0.5, 0), (0, 2, 0)]
    rough = np.random.default_rng(7).normal(size=(600, 4, 3))
    quad_vertices = [*dart, *rough.reshape(-1, 3), (9, 0, 0), (10, 0, 0), (9, 1, 0)]
    quad_faces = [tuple(np.roll(np.arange(4), turn)) for turn in range(4)]
    quad_faces += [tuple(range(4 + 4 * k, 8 + 4 * k)) for k in range(600)]
    quad_faces += [(2404, 2405, 2406)]
    quads_data = bpy.data.meshes.new("Quads")
    quads_data.from_pydata(quad_vertices, [], quad_faces)
    quads = scenes.add_object("Quads", quads_data, location=(0, -5, 0))
    pentagon = [(20, 0, 0), (24, 0, 0), (24, 3, 0), (22, 1, 0), (20, 3, 0)]
    with_pentagon_data = bpy.data.meshes.new("QuadsAndPentagon")
    with_pentagon_data.from_pydata(
        quad_vertices + pentagon, [], [*quad_faces, tuple(range(2407, 2412))]
    )
    with_pentagon = scenes.add_object("QuadsAndPentagon", with_pentagon_data)
    scene_module = sys.modules[f"{addon.__name__}.blender.scene"]
    split_faces = scene_module.split_faces
    split = []  # per call of split_faces in a read: whether it made the triangles

    def recorded_split(*arrays):
        triangles = split_faces(*arrays)
        split.append(triangles is not None)
        return triangles

    monkeypatch.setattr(scene_module, "split_faces", recorded_split)
    read_geometry = scene_module.read_geometry
    depsgraph = bpy.context.evaluated_depsgraph_get()
    for obj, from_corners in (
        (plain, []),
        (modified, []),
        (quads, [True]),
        (with_pentagon, []),
    ):
        evaluated = obj.evaluated_get(depsgraph)
        mesh = evaluated.data
        mesh.calc_loop_triangles()
        coordinates = np.empty(len(mesh.vertices) * 3, np.float32)
        mesh.vertices.foreach_get("co", coordinates)
        triangles = np.empty(len(mesh.loop_triangles) * 3, np.int32)
        mesh.loop_triangles.foreach_get("vertices", triangles)
        split.clear()
        geometry = read_geometry(evaluated)
        assert split == []
        np.testing.assert_array_equal(geometry.points, coordinates.reshape(-1, 3))
        np.testing.assert_array_equal(geometry.triangles, triangles.reshape(-1, 3))
        assert split == from_corners
        assert geometry.triangles is geometry.triangles  # split once
        if obj is quads:
            # Both diagonals of the dart were taken.
            first_diagonal = (
                triangles.reshape(-1, 3)[0:8:2, 2] == triangles.reshape(-1, 3)[1:8:2, 1]
            )
            assert first_diagonal.any() and not first_diagonal.all()
    assert len(read_geometry(plain.evaluated_get(depsgraph)).triangles) == 3 + 2 + 1


def test_copies_of_an_element_share_its_prepared_mesh(addon):
    """As a BIM import brings them: each window its own mesh, its vertices in world
    coordinates. Detect on meshes prepares the first and moves its preparation to the
    others, which clash as if prepared on their own."""
    vertices, triangles = torus(1.0, 0.25, 24, 8)
    places = [(100.0, 50.0, 3.0), (140.5, 50.0, 3.0), (100.0, 87.25, 3.0)]
    for index, place in enumerate(places):
        data = mesh_from_arrays(f"Window{index}", vertices + place, triangles)
        scenes.add_object(f"Window{index}", data)
        pin = mesh_from_arrays(f"Pin{index}", *box_mesh([0.9, -0.05, -0.05], [1.6, 0.05, 0.05]))
        scenes.add_object(f"Pin{index}", pin, location=place)
    bpy.context.scene.collide.geometry = "MESH"
    assert bpy.ops.collide.detect() == {"FINISHED"}
    assert scenes.records() == [(f"Window{k}", f"Pin{k}") for k in range(3)]
    scene_module = sys.modules[f"{addon.__name__}.blender.scene"]
    reader = scene_module.ProxyReader()
    proxies = reader.read(bpy.context.evaluated_depsgraph_get(), bpy.context.scene)
    windows = [
        reader.triangle_mesh(key)
        for key, name in zip(proxies.geometry_keys, proxies.names, strict=True)
        if name.startswith("Window")
    ]
    assert all(window.tree_order is windows[0].tree_order for window in windows)
    assert len({window.vertices[0, 0] for window in windows}) == 2


@pytest.mark.parametrize("mirrored", [False, True])
def test_a_copy_pasted_in_place_is_a_clash_as_deep_as_the_wall_is_thick(addon, mirrored):
    """Shift+D and a cancelled move: a wall and its copy, their faces on each other's
    facing the same way, no triangle crossing and no point strictly inside. On the
    proxies a clash; on the meshes they touched. A mirrored copy (scale -1 across the
    wall) is the same wall with its normals turned by its matrix."""
    wall = scenes.add_object(
        "Wall", mesh_from_arrays("Wall", *box_mesh([-2.0, -0.1, 0.0], [2.0, 0.1, 3.0]))
    )
    copy = wall.copy()
    copy.data = wall.data.copy()
    bpy.context.scene.collection.objects.link(copy)
    if mirrored:
        copy.scale = (1.0, -1.0, 1.0)
    settings = bpy.context.scene.collide
    settings.geometry = "MESH"
    assert bpy.ops.collide.detect() == {"FINISHED"}
    rows = clash_rows(settings)
    assert list(rows) == [("Wall", copy.name)]
    distance, on_mesh = rows["Wall", copy.name]
    assert on_mesh
    assert distance == pytest.approx(-0.2, abs=1e-6)
    # The clash point lies in a face the two share, not at a corner where they meet.
    corners = box_mesh([-2.0, -0.1, 0.0], [2.0, 0.1, 3.0])[0]
    point = np.array(settings.clashes[0].point)
    assert np.linalg.norm(corners - point, axis=1).min() > 0.5
    # A report's hard test decides on the meshes by default.
    test = addon.clash.tests.clash_test_from_dict({"name": "hard", "a": {}, "type": "hard"})
    assert test.geometry == "mesh"
    [clash] = addon.blender.run_clash_report([test]).report["clashes"]
    assert (clash["a"], clash["b"]) == ("Wall", copy.name)
    assert clash["distance"] == pytest.approx(-0.2, abs=1e-6)


def test_a_flipped_face_keeps_what_is_inside_found(addon):
    """A face flipped by a modelling slip (drawn dark in Blender) leaves the box
    watertight: a part inside it is still a clash on the meshes. Before, the box counted
    as open and the part inside it was apart."""
    data = scenes.mesh("cube", "Box")
    builder = bmesh.new()
    builder.from_mesh(data)
    builder.faces.ensure_lookup_table()
    builder.faces[0].normal_flip()
    builder.to_mesh(data)
    builder.free()
    scenes.add_object("Box", data)
    scenes.add_object("Part", scenes.mesh("cube", "Part"), scale=(0.1, 0.1, 0.1))
    settings = bpy.context.scene.collide
    settings.geometry = "MESH"
    assert bpy.ops.collide.detect() == {"FINISHED"}
    rows = clash_rows(settings)
    assert list(rows) == [("Box", "Part")]
    distance, on_mesh = rows["Box", "Part"]
    assert on_mesh
    # The least move that takes the part out (the box is convex, flipped face or not).
    assert distance == pytest.approx(-1.1, abs=1e-6)


def test_dragging_the_outermost_object_decides_only_its_own_pairs(addon, monkeypatch):
    """The live margin followed the scene's outermost coordinate bit for bit: dragging
    the object farthest out changed it at each update, and every pair of the scene was
    decided on its meshes again (65 pairs and 63 ms a drag step in a 1,000-object scene,
    against 1 pair for an object in the middle)."""
    scene = bpy.context.scene
    for index in range(4):
        scenes.add_object(f"A{index}", scenes.mesh("cube"), location=(3.0 * index, 0, 0))
        scenes.add_object(f"B{index}", scenes.mesh("cube"), location=(3.0 * index, 1.5, 0))
    outermost = bpy.data.objects["B3"]
    # The margin steps at 16 per power of two of the coordinate bound (the largest
    # centre coordinate plus the largest half-extent sum: 9 + 3 = 12, on a step): from
    # 12.2 the drag below stays within one step.
    outermost.location.x = 9.2
    evaluate = sys.modules[f"{addon.__name__}.clash.evaluate"]
    decided: list[list[tuple[int, int]]] = []

    def recorded(meshes, matrices, pairs, max_distance, progress=None, posed=None):
        decided.append([tuple(pair) for pair in np.asarray(pairs).tolist()])
        return mesh_contacts(meshes, matrices, pairs, max_distance, progress, posed)

    mesh_contacts = evaluate.mesh_contacts
    monkeypatch.setattr(evaluate, "mesh_contacts", recorded)
    scene.collide.geometry = "MESH"
    scene.collide.live = True
    assert len(scene.collide.clashes) == 4 and sum(map(len, decided)) == 4
    for step in range(1, 6):
        decided.clear()
        outermost.location.x = 9.2 + 0.001 * step  # outwards, 1 mm a step
        bpy.context.view_layer.update()
        assert sum(map(len, decided)) == 1, step  # its own pair, not all four
    assert len(scene.collide.clashes) == 4


def test_live_mode_with_a_collection_instance_reads_only_matrices_while_objects_move(
    addon, monkeypatch
):
    """One collection instance anywhere in the scene made every live update build who
    takes part again from the depsgraph's instances (dragging one of 10,000 objects 477
    ms a step, 14.5 ms without the instance). Moves read the instances' matrices where
    the last walk found them; a change of what is instanced builds again."""
    scene = bpy.context.scene
    library = bpy.data.collections.new("Library")
    library.objects.link(bpy.data.objects.new("Chair", scenes.mesh("cube", "Chair")))
    instancer = bpy.data.objects.new("Room", None)
    instancer.instance_type, instancer.instance_collection = "COLLECTION", library
    scene.collection.objects.link(instancer)
    table = scenes.add_object("Table", scenes.mesh("cube"), location=(5, 0, 0))
    scene.collide.live = True
    assert scenes.records() == []
    builds = scenes.count_builds(addon, monkeypatch)
    table.location.x = 1.5
    bpy.context.view_layer.update()
    # The first update takes in what was added before live mode began: who takes part.
    assert scenes.records() == [("Room/Chair", "Table")]
    builds.clear()
    table.location.x = 1.4
    bpy.context.view_layer.update()
    assert scenes.records() == [("Room/Chair", "Table")] and builds == []
    instancer.location.y = 5.0  # the instance moves with its instancer
    bpy.context.view_layer.update()
    assert scenes.records() == []
    table.location.y = 5.0
    bpy.context.view_layer.update()
    assert scenes.records() == [("Room/Chair", "Table")] and builds == []
    # Another object in the instanced collection: a new instance, found by a build.
    library.objects.link(bpy.data.objects.new("Lamp", scenes.mesh("cube", "Lamp")))
    bpy.context.view_layer.update()
    assert builds and scenes.records() == [
        ("Room/Chair", "Room/Lamp"),
        ("Room/Chair", "Table"),
        ("Room/Lamp", "Table"),
    ]


def test_live_mode_follows_nested_instances_shown_and_hidden_by_keys(addon):
    """T instances collection M of three instancers of Lib = [X]; the first is shown at
    frame 1 only, the third at frame 2 only (keyed). The walk of the depsgraph's
    instances keeps its length and the same object X at each entry's place, but the
    frames shown come through another instancer: live mode named I3's clash after I2
    (reading only the matrices where the last walk found X) until the path was
    compared too."""
    scene = bpy.context.scene
    library = bpy.data.collections.new("Lib")
    library.objects.link(bpy.data.objects.new("X", scenes.mesh("cube", "X")))
    middle = bpy.data.collections.new("M")
    instancers = []
    for index in range(3):
        instancer = bpy.data.objects.new(f"I{index + 1}", None)
        instancer.instance_type, instancer.instance_collection = "COLLECTION", library
        instancer.location.x = 3.0 * index
        middle.objects.link(instancer)
        instancers.append(instancer)
    top = bpy.data.objects.new("T", None)
    top.instance_type, top.instance_collection = "COLLECTION", middle
    scene.collection.objects.link(top)
    scenes.add_object("Wall", scenes.mesh("cube"), location=(6.0, 1.5, 0.0))
    first, third = instancers[0], instancers[2]
    for frame, first_hidden in ((1, False), (2, True)):
        first.hide_viewport, third.hide_viewport = first_hidden, not first_hidden
        first.keyframe_insert("hide_viewport", frame=frame)
        third.keyframe_insert("hide_viewport", frame=frame)
    scene.frame_set(1)
    scene.collide.live = True
    for frame, expected in ((2, [("T/I3/X", "Wall")]), (1, []), (2, [("T/I3/X", "Wall")])):
        scene.frame_set(frame)
        assert scenes.records() == expected, frame
        bpy.ops.collide.detect()
        assert scenes.records() == expected, frame
