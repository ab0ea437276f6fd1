"""Build a .blend from an ifc_to_mesh.py .npz: one mesh object per element.

    blender -b --factory-startup --python benchmarks/mesh_to_blend.py -- IN.npz OUT.blend

Each object is named by its element's GlobalId, keeps the identity matrix (the vertices
are in world space already), carries the element's class and Name as custom properties
`ifc_class` and `ifc_name`, and is linked to one collection per IFC class. The scene's
frame range is the single frame 1, since the model does not move. Written for Debian's
Blender 3.4 (its Python has numpy through python3-numpy); also runs in later versions.
"""

from __future__ import annotations

import os
import sys
import traceback

import bpy
import numpy as np


def script_arguments(argv: list[str]) -> list[str]:
    """The arguments after Blender's `--` separator."""
    return argv[argv.index("--") + 1 :] if "--" in argv else []


def element_mesh(name: str, vertices: np.ndarray, triangles: np.ndarray):
    """A bpy mesh from vertices (v, 3) and triangles (t, 3) of local vertex indices."""
    mesh = bpy.data.meshes.new(name)
    mesh.vertices.add(len(vertices))
    mesh.vertices.foreach_set("co", vertices.astype(np.float32).ravel())
    mesh.loops.add(3 * len(triangles))
    mesh.loops.foreach_set("vertex_index", triangles.astype(np.int32).ravel())
    mesh.polygons.add(len(triangles))
    mesh.polygons.foreach_set("loop_start", np.arange(0, 3 * len(triangles), 3, dtype=np.int32))
    mesh.polygons.foreach_set("loop_total", np.full(len(triangles), 3, dtype=np.int32))
    mesh.update()
    return mesh


def build_scene(arrays) -> int:
    """Objects and collections into the current (empty) scene; the number of objects."""
    scene = bpy.context.scene
    scene.frame_start = scene.frame_end = 1
    collections = {}
    vertex_offsets = arrays["vertex_offsets"]
    triangle_offsets = arrays["triangle_offsets"]
    for index, name in enumerate(arrays["names"]):
        ifc_class = str(arrays["classes"][index])
        if ifc_class not in collections:
            collections[ifc_class] = bpy.data.collections.new(ifc_class)
            scene.collection.children.link(collections[ifc_class])
        vertices = arrays["vertices"][vertex_offsets[index] : vertex_offsets[index + 1]]
        triangles = arrays["triangles"][triangle_offsets[index] : triangle_offsets[index + 1]]
        obj = bpy.data.objects.new(str(name), element_mesh(str(name), vertices, triangles))
        obj["ifc_class"] = ifc_class
        obj["ifc_name"] = str(arrays["labels"][index])
        collections[ifc_class].objects.link(obj)
    return len(arrays["names"])


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print("usage: mesh_to_blend.py -- IN.npz OUT.blend", file=sys.stderr)
        return 2
    source, target = argv[0], os.path.abspath(argv[1])
    for obj in list(bpy.data.objects):
        bpy.data.objects.remove(obj)
    with np.load(source) as arrays:
        count = build_scene(arrays)
    bpy.ops.wm.save_as_mainfile(filepath=target, check_existing=False, compress=True)
    print(f"mesh_to_blend: {count} objects written to {target}", file=sys.stderr)
    return 0


def run() -> None:
    """Exit Blender with main()'s status: Blender exits 0 after a script that raised."""
    try:
        status = main(script_arguments(sys.argv))
    except Exception:  # noqa: BLE001 - any error must fail the run
        traceback.print_exc()
        status = 1
    sys.exit(status)


if __name__ == "__main__":
    run()
