"""Measure the real geometry of the pairs only one tool found in a bench_ifc.py run.

    PYTHONPATH=$PWD .venv-core/bin/python benchmarks/explain_disagreements.py KEEP/MODEL [--limit N]

KEEP/MODEL is a model's folder from `bench_ifc.py --keep KEEP` (model.npz,
disagreements.tsv, collide.json). For each disagreement (at most N per mode and side,
the deepest collide ones first as the file lists them) it measures the two elements'
triangles with coal (BVHModelOBBRSS): the exact least distance between the triangle sets,
whether any triangles cross, whether each mesh is closed (every edge in two triangles),
and the deepest surface sample of either mesh inside the other (ray parity by a
majority of three rays, then its distance to the other's surface), and the span of the
points where the triangles meet along x, y and z (0 along an axis: they meet in one
plane, as a stair's side resting on a wall's face). It prints one line per pair and a
count per verdict, and writes explained.tsv beside the input.

Verdicts: "apart" (least distance > 1 mm), "touching" (within 1 mm, no surface sample
deeper than the intersection tolerance inside the other), "penetrating" (a surface
sample of one mesh, a vertex, an edge point or a centroid, deeper than that inside the
other). "triangles cross" is coal's triangle test, which also holds for faces that
merely touch. In clearance mode the verdict is "within clearance" or "beyond clearance"
(least distance < 0.05 m, IfcClash's strict comparison).
"""

from __future__ import annotations

import argparse
import csv
import json
import sys
from pathlib import Path

import coal
import numpy as np

TOUCH = 1e-3
DEEP = 0.002
CLEARANCE = 0.05
# Directions no building face or edge is parallel to; a point is inside when at least two
# of the three rays cross the surface an odd number of times, so that a ray through an
# edge (counted twice) or along internal faces cannot decide alone.
RAYS = np.array([[0.4389, 0.7127, 0.5471], [-0.6123, 0.2718, 0.7425], [0.1587, -0.8349, 0.5270]])
RAYS /= np.linalg.norm(RAYS, axis=1, keepdims=True)


class Mesh:
    """One element's triangles: vertices (v, 3), triangles (t, 3), and its coal BVH."""

    def __init__(self, vertices: np.ndarray, triangles: np.ndarray) -> None:
        self.vertices = vertices
        self.triangles = triangles
        self.bvh = coal.BVHModelOBBRSS()
        self.bvh.beginModel(len(triangles), len(vertices))
        self.bvh.addVertices(vertices)
        self.bvh.addTriangles(triangles.astype(np.int64))
        self.bvh.endModel()
        edges = np.sort(triangles[:, [0, 1, 1, 2, 2, 0]].reshape(-1, 2), axis=1)
        _, counts = np.unique(edges, axis=0, return_counts=True)
        self.closed = bool(np.all(counts == 2))

    def object(self) -> coal.CollisionObject:
        return coal.CollisionObject(self.bvh, coal.Transform3s())

    def inside(self, points: np.ndarray) -> np.ndarray:
        """(p,) bool: whether points (p, 3) lie inside this mesh, by ray parity."""
        within = np.all(
            (points >= self.vertices.min(axis=0)) & (points <= self.vertices.max(axis=0)), axis=1
        )
        votes = np.zeros(len(points), dtype=int)
        if within.any():
            votes[within] = sum(self.odd_crossings(points[within], ray) for ray in RAYS)
        return votes >= 2

    def odd_crossings(self, points: np.ndarray, ray: np.ndarray) -> np.ndarray:
        """(p,) bool: the ray from each point (p, 3) crosses the triangles an odd number of
        times (Moller-Trumbore on every triangle at once)."""
        corners = self.vertices[self.triangles]  # (t, 3, 3)
        edge1, edge2 = corners[:, 1] - corners[:, 0], corners[:, 2] - corners[:, 0]
        pvec = np.cross(ray, edge2)  # (t, 3)
        det = np.einsum("ij,ij->i", edge1, pvec)
        usable = np.abs(det) > 1e-12
        inv = np.where(usable, 1.0 / np.where(usable, det, 1.0), 0.0)
        tvec = points[:, None, :] - corners[None, :, 0]  # (p, t, 3)
        u = np.einsum("ptj,tj->pt", tvec, pvec) * inv
        qvec = np.cross(tvec, edge1[None])
        v = np.einsum("j,ptj->pt", ray, qvec) * inv
        along = np.einsum("ptj,tj->pt", qvec, edge2) * inv
        hits = usable & (u >= 0) & (v >= 0) & (u + v <= 1) & (along > 0)
        return hits.sum(axis=1) % 2 == 1


def least_distance(first: Mesh, second: Mesh) -> float:
    request, result = coal.DistanceRequest(), coal.DistanceResult()
    coal.distance(first.object(), second.object(), request, result)
    return float(result.min_distance)


def triangles_cross(first: Mesh, second: Mesh) -> bool:
    request, result = coal.CollisionRequest(), coal.CollisionResult()
    coal.collide(first.object(), second.object(), request, result)
    return bool(result.isCollision())


def contact_span(first: Mesh, second: Mesh) -> np.ndarray:
    """Extent along x, y and z (3,) of the points where coal finds the two meshes'
    triangles meeting (every contact), or NaNs when they do not meet: a span of 0 along
    an axis means that they meet in one plane, a face resting on a face."""
    request, result = coal.CollisionRequest(), coal.CollisionResult()
    request.num_max_contacts = 100_000
    request.enable_contact = True
    coal.collide(first.object(), second.object(), request, result)
    points = np.array([contact.pos for contact in result.getContacts()]).reshape(-1, 3)
    return np.ptp(points, axis=0) if len(points) else np.full(3, np.nan)


def surface_samples(mesh: Mesh, limit: int = 3000) -> np.ndarray:
    """(p, 3) points on the mesh: vertices, points at a quarter, half and three quarters
    of every edge, and triangle centroids; evenly thinned to at most `limit`."""
    corners = mesh.vertices[mesh.triangles]  # (t, 3, 3)
    ends = np.roll(corners, -1, axis=1)
    edge_points = [corners + fraction * (ends - corners) for fraction in (0.25, 0.5, 0.75)]
    points = np.concatenate(
        [mesh.vertices, *(p.reshape(-1, 3) for p in edge_points), corners.mean(axis=1)]
    )
    return points[:: max(1, len(points) // limit)]


def deepest_inside(mesh: Mesh, other: Mesh, limit: int = 200) -> float:
    """Largest distance to `other`'s surface of `mesh`'s surface samples inside `other`
    (0 when none is, or when `other` is open and has no inside)."""
    if not other.closed:
        return 0.0
    points = surface_samples(mesh)
    inside = np.concatenate(
        [
            points[start : start + 500][other.inside(points[start : start + 500])]
            for start in range(0, len(points), 500)
        ]
    )
    depth = 0.0
    for point in inside[:: max(1, len(inside) // limit)]:
        ball = coal.CollisionObject(coal.Sphere(1e-9), coal.Transform3s(np.eye(3), point))
        request, result = coal.DistanceRequest(), coal.DistanceResult()
        coal.distance(ball, other.object(), request, result)
        depth = max(depth, float(result.min_distance))
    return depth


def verdict(mode: str, distance: float, depth: float) -> str:
    if mode == "clearance":
        return "within clearance" if distance < CLEARANCE else "beyond clearance"
    if distance > TOUCH:
        return "apart"
    if depth > DEEP:
        return "penetrating"
    return "touching"


def load_meshes(npz: Path) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    with np.load(npz) as data:
        vertex_offsets, triangle_offsets = data["vertex_offsets"], data["triangle_offsets"]
        return {
            str(name): (
                data["vertices"][vertex_offsets[k] : vertex_offsets[k + 1]],
                data["triangles"][triangle_offsets[k] : triangle_offsets[k + 1]],
            )
            for k, name in enumerate(data["names"])
        }


def proxy_kinds(report: Path) -> dict[tuple[str, str], str]:
    kinds = {}
    for clash in json.loads(report.read_text())["clashes"]:
        key = tuple(sorted((clash["a"], clash["b"])))
        kinds[key] = "/".join(clash["kinds"])
    return kinds


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("folder", type=Path)
    parser.add_argument("--limit", type=int, default=1000, help="pairs per mode and side")
    arguments = parser.parse_args(argv)
    arrays = load_meshes(arguments.folder / "model.npz")
    kinds = proxy_kinds(arguments.folder / "collide.json")
    meshes: dict[str, Mesh] = {}
    with (arguments.folder / "disagreements.tsv").open(encoding="utf-8") as table:
        rows = list(csv.DictReader(table, delimiter="\t"))
    taken: dict[tuple[str, str], int] = {}
    out_rows, counts = [], {}
    for row in rows:
        group = (row["mode"], row["found by"])
        taken[group] = taken.get(group, 0) + 1
        if taken[group] > arguments.limit:
            continue
        for name in (row["a"], row["b"]):
            if name not in meshes:
                meshes[name] = Mesh(*arrays[name])
        first, second = meshes[row["a"]], meshes[row["b"]]
        distance = least_distance(first, second)
        crossing = triangles_cross(first, second)
        depth = max(deepest_inside(first, second), deepest_inside(second, first))
        span = contact_span(first, second)
        found = verdict(row["mode"], distance, depth)
        key = tuple(sorted((row["a"], row["b"])))
        extra = {
            "exact distance": f"{distance:.4f}",
            "triangles cross": crossing,
            "deepest vertex": f"{depth:.4f}",
            "contact span": "/".join(f"{extent:.3f}" for extent in span),
            "closed": f"{first.closed}/{second.closed}",
            "proxies": kinds.get(key, ""),
            "verdict": found,
        }
        out_rows.append({**row, **extra})
        counts[(*group, found)] = counts.get((*group, found), 0) + 1
        print(
            f"{row['mode']:12} {row['found by']:13} {row['a class']:>20} {row['b class']:<20} "
            f"collide {row['collide distance']:>8} ifcclash {row['ifcclash type']:>10} "
            f"{row['ifcclash distance']:>7} | exact {distance:.4f} cross {crossing!s:5} "
            f"deepest {depth:.4f} span {extra['contact span']:17} closed {extra['closed']:11} "
            f"{extra['proxies']:9} {found} "
            f"| {row['a name']} / {row['b name']}"
        )
    for (mode, side, found), count in sorted(counts.items()):
        print(f"{mode} {side}: {count} {found}")
    if out_rows:
        with (arguments.folder / "explained.tsv").open("w", newline="", encoding="utf-8") as out:
            writer = csv.DictWriter(out, fieldnames=list(out_rows[0]), delimiter="\t")
            writer.writeheader()
            writer.writerows(out_rows)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
