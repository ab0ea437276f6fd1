"""Triangulate the elements of an IFC file into one compressed .npz, in world space.

    .venv-ifc/bin/python benchmarks/ifc_to_mesh.py MODEL.ifc OUT.npz

Runs in the benchmark's own venv (ifcopenshell 0.9.0; see bench_ifc.py). The elements
are the ones IfcClash 0.9.0 takes for a clash set without a selector: every IfcElement
except IfcFeatureElement (openings, projections, surface features); IfcSpace is a
spatial element, not an IfcElement, so it is out too. Each one is triangulated with
IfcClash's own geometry settings (ifcopenshell.geom.settings() defaults, which weld
vertices) plus world coordinates, so both tools see the same triangles. Elements the
iterator yields no triangles for are left out; elements that share a GlobalId are
joined into one entry.

OUT.npz holds (n elements, V vertices, T triangles in all):
    names: (n,) str, GlobalId
    classes: (n,) str, IFC class
    labels: (n,) str, the element's Name ("" when unset)
    vertices: (V, 3) float64, world coordinates in metres
    vertex_offsets: (n + 1,) int64, element k owns vertices[vertex_offsets[k]:vertex_offsets[k + 1]]
    triangles: (T, 3) int32, vertex indices local to their element
    triangle_offsets: (n + 1,) int64, likewise for triangles
"""

from __future__ import annotations

import multiprocessing
import sys
import time

import ifcopenshell
import ifcopenshell.geom
import numpy as np


def clash_elements(model: ifcopenshell.file) -> set:
    """The elements IfcClash 0.9.0 clashes when a source has no selector (the same set
    arithmetic as Clasher.add_collision_objects)."""
    elements = set(model.by_type("IfcElement"))
    return elements - set(model.by_type("IfcFeatureElement"))


def add_shape(meshes: dict, element, vertices: np.ndarray, triangles: np.ndarray) -> None:
    """Add an element's vertices (v, 3) and triangles (t, 3) to `meshes` (GlobalId ->
    (element, vertices, triangles)). Elements that share a GlobalId (some exports repeat
    one, e.g. for copies of a stair) become one mesh: IfcClash names a clash by GlobalIds,
    so its pairs are pairs of these unions."""
    name = element.GlobalId
    if name in meshes:
        print(f"ifc_to_mesh: {name} ({element.is_a()}) repeated: meshes joined", file=sys.stderr)
        first, known_vertices, known_triangles = meshes[name]
        triangles = np.concatenate([known_triangles, triangles + len(known_vertices)])
        meshes[name] = (first, np.concatenate([known_vertices, vertices]), triangles)
    else:
        meshes[name] = (element, vertices, triangles)


def triangulate(model: ifcopenshell.file) -> dict[str, np.ndarray]:
    """The arrays OUT.npz holds (see the module docstring), elements in GlobalId order."""
    settings = ifcopenshell.geom.settings()
    settings.set("use-world-coords", True)
    elements = clash_elements(model)
    iterator = ifcopenshell.geom.iterator(
        settings, model, multiprocessing.cpu_count(), include=list(elements)
    )
    meshes: dict[str, tuple] = {}
    if iterator.initialize():
        while True:
            shape = iterator.get()
            vertices = np.asarray(shape.geometry.verts, dtype=np.float64).reshape(-1, 3)
            triangles = np.asarray(shape.geometry.faces, dtype=np.int32).reshape(-1, 3)
            if len(triangles):
                add_shape(meshes, model.by_id(shape.id), vertices, triangles)
            if not iterator.next():
                break
    names = sorted(meshes)
    vertex_counts = [len(meshes[name][1]) for name in names]
    triangle_counts = [len(meshes[name][2]) for name in names]
    return {
        "names": np.array(names, dtype=str),
        "classes": np.array([meshes[name][0].is_a() for name in names], dtype=str),
        "labels": np.array([meshes[name][0].Name or "" for name in names], dtype=str),
        "vertices": np.concatenate([meshes[name][1] for name in names]),
        "vertex_offsets": np.concatenate([[0], np.cumsum(vertex_counts)]).astype(np.int64),
        "triangles": np.concatenate([meshes[name][2] for name in names]),
        "triangle_offsets": np.concatenate([[0], np.cumsum(triangle_counts)]).astype(np.int64),
    }


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print("usage: ifc_to_mesh.py MODEL.ifc OUT.npz", file=sys.stderr)
        return 2
    source, target = argv
    start = time.perf_counter()
    model = ifcopenshell.open(source)
    arrays = triangulate(model)
    np.savez_compressed(target, **arrays)
    print(
        f"ifc_to_mesh: {len(arrays['names'])} elements of {len(clash_elements(model))}, "
        f"{len(arrays['vertices'])} vertices, {len(arrays['triangles'])} triangles "
        f"in {time.perf_counter() - start:.1f} s",
        file=sys.stderr,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
