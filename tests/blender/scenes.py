"""Building small test scenes with the real bpy API."""

import sys

import bmesh
import bpy
import numpy as np


def mesh(kind: str, name: str | None = None) -> bpy.types.Mesh:
    """A cube of size 2, a UV sphere or a cylinder (radius 1, depth 4) centred at 0."""
    data = bpy.data.meshes.new(name or kind)
    builder = bmesh.new()
    if kind == "cube":
        bmesh.ops.create_cube(builder, size=2.0)
    elif kind == "sphere":
        bmesh.ops.create_uvsphere(builder, u_segments=32, v_segments=16, radius=1.0)
    elif kind == "cylinder":
        bmesh.ops.create_cone(
            builder, cap_ends=True, segments=32, radius1=1.0, radius2=1.0, depth=4.0
        )
    else:
        raise ValueError(kind)
    builder.to_mesh(data)
    builder.free()
    return data


def add_object(name, data, location=(0, 0, 0), scale=(1, 1, 1), collection=None):
    obj = bpy.data.objects.new(name, data)
    (collection or bpy.context.scene.collection).objects.link(obj)
    obj.location = location
    obj.scale = scale
    return obj


def animate_location(obj, keys: dict[int, tuple]) -> None:
    """Keyframe `obj.location` at each frame of `keys` (linear interpolation)."""
    for frame, location in keys.items():
        obj.location = location
        obj.keyframe_insert("location", frame=frame)
    action = obj.animation_data.action
    for curve in _fcurves(action, obj):
        for point in curve.keyframe_points:
            point.interpolation = "LINEAR"


def grow_by_shape_key(obj, factor: float, last_frame: int) -> None:
    """A shape key scaling `obj`'s mesh by `factor`, keyed from 0 at frame 1 to 1 at
    `last_frame`: a deforming object."""
    obj.shape_key_add(name="Basis")
    grow = obj.shape_key_add(name="Grow")
    for point in grow.data:
        point.co = point.co * factor
    for frame, value in ((1, 0.0), (last_frame, 1.0)):
        grow.value = value
        grow.keyframe_insert("value", frame=frame)


def _fcurves(action, obj):
    """An action's F-curves; Blender 5.0 keeps them in layered channel bags."""
    if hasattr(action, "fcurves") and len(getattr(action, "fcurves", ())):
        return list(action.fcurves)
    from bpy_extras import anim_utils

    slot = obj.animation_data.action_slot
    return list(anim_utils.action_get_channelbag_for_slot(action, slot).fcurves)


def world_vertices(obj) -> np.ndarray:
    """The evaluated vertices of `obj` in world space: (n, 3) float64."""
    depsgraph = bpy.context.evaluated_depsgraph_get()
    evaluated = obj.evaluated_get(depsgraph)
    data = evaluated.data
    coordinates = np.empty(len(data.vertices) * 3, np.float32)
    data.vertices.foreach_get("co", coordinates)
    matrix = np.array(evaluated.matrix_world, dtype=np.float64)
    return coordinates.reshape(-1, 3) @ matrix[:3, :3].T + matrix[:3, 3]


def geometry_nodes_instances(name: str, count: int, spacing: float, size: float):
    """A mesh object whose Geometry Nodes put `count` cubes of `size` on a line along x,
    `spacing` apart (instances, not realised)."""
    group = bpy.data.node_groups.new(f"{name}Nodes", "GeometryNodeTree")
    group.interface.new_socket(name="Geometry", in_out="OUTPUT", socket_type="NodeSocketGeometry")
    output = group.nodes.new("NodeGroupOutput")
    line = group.nodes.new("GeometryNodeMeshLine")
    line.inputs["Count"].default_value = count
    line.inputs["Offset"].default_value = (spacing, 0.0, 0.0)
    cube = group.nodes.new("GeometryNodeMeshCube")
    cube.inputs["Size"].default_value = (size, size, size)
    on_points = group.nodes.new("GeometryNodeInstanceOnPoints")
    group.links.new(line.outputs["Mesh"], on_points.inputs["Points"])
    group.links.new(cube.outputs["Mesh"], on_points.inputs["Instance"])
    group.links.new(on_points.outputs["Instances"], output.inputs["Geometry"])
    host = add_object(name, bpy.data.meshes.new(f"{name}Mesh"))
    modifier = host.modifiers.new("Instances", "NODES")
    modifier.node_group = group
    return host


def records(scene=None):
    """The clash list as sorted (name_a, name_b) tuples."""
    scene = scene or bpy.context.scene
    return sorted((record.name_a, record.name_b) for record in scene.collide.clashes)


def read_proxies(addon):
    """The proxies of the current scene, read with fresh caches by the add-on module
    `addon` (installed under its own package name)."""
    reader = sys.modules[f"{addon.__name__}.blender.scene"].ProxyReader()
    return reader.read(bpy.context.evaluated_depsgraph_get(), bpy.context.scene)


def overlay_tinted(addon, scene=None) -> set[str]:
    """Names of the objects the viewport overlay tints now (while frames change)."""
    session = sys.modules[f"{addon.__name__}.blender.session"]
    live_session = session.session_for(scene or bpy.context.scene)
    rows = session.overlay_tint_rows(live_session)
    return {live_session.proxies.objects[row].name for row in rows.tolist()}


def session_module(addon):
    """The add-on's `blender.session` module (installed under its own package name)."""
    return sys.modules[f"{addon.__name__}.blender.session"]


def count_builds(addon, monkeypatch) -> list:
    """A list that gains an item each time a `ProxyReader` finds who takes part and
    builds its entries again (`_build`)."""
    reader_class = sys.modules[f"{addon.__name__}.blender.scene"].ProxyReader
    builds: list = []
    build = reader_class._build
    monkeypatch.setattr(
        reader_class, "_build", lambda self, *args: builds.append(1) or build(self, *args)
    )
    return builds
