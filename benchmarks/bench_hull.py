"""Would a HULL proxy (the convex hull of the evaluated mesh) pay for live use? Issue 13
asks for one only if hull-hull distance vectorised in numpy beats mesh mode; this
measures both on the same pairs (numpy only, no Blender).

    PYTHONPATH=. .venv-core/bin/python benchmarks/bench_hull.py [--count 1000]

The scene of `bench_live_mesh.py` rebuilt in numpy: `--count` objects, each a cube, a
16x8 UV sphere or a 16-sided cylinder (the meshes Blender's primitives make, all convex,
so each mesh is its own hull), turned at random and spread so that about one in ten
touches another. Candidate pairs are those whose world bounds overlap (what the proxies'
broad phase hands the exact stage). For those pairs it times, each at its fastest of
--repeat runs:

* mesh mode's exact stage, `core.mesh.mesh_contacts` (meshes prepared once, as live
  mode keeps them): distance or penetration depth, witnesses, containment;
* a hull-hull distance in numpy, `hull_distances` below: GJK over the hulls' vertices
  vectorised over the pairs (distance of pairs apart, 0 for pairs that meet; no depth);
* the proxies' own exact distance (`core.pair_distance` on fitted boxes) for scale.

and checks that the two mesh-level answers agree (a hull-hull distance of a convex pair
is its mesh distance). `hull_distances` is a measuring prototype, not part of the add-on.
"""

from __future__ import annotations

import argparse
import itertools
import time

import numpy as np

from collide_addon.core import pair_distance
from collide_addon.core.fit import fit_box, stack_fits
from collide_addon.core.grid import overlapping_bounds
from collide_addon.core.mesh import mesh_contacts, prepare_mesh

# GJK stops when the support point gets the distance no nearer than this (relative).
_GJK_TOLERANCE = 1e-12
_ROUNDING = 1e-15
_GJK_ITERATIONS = 64
# Sub-simplices of a 4-point simplex, by size: each closest point is looked for in all.
_SUBSETS = [
    np.array(list(itertools.combinations(range(4), size)), dtype=np.int64) for size in (1, 2, 3)
]


def cube() -> tuple[np.ndarray, np.ndarray]:
    corners = np.array(list(itertools.product((-0.5, 0.5), repeat=3)))
    quads = [(0, 1, 3, 2), (4, 6, 7, 5), (0, 4, 5, 1), (2, 3, 7, 6), (0, 2, 6, 4), (1, 5, 7, 3)]
    return corners, np.array([t for q in quads for t in ((q[0], q[1], q[2]), (q[0], q[2], q[3]))])


def uv_sphere(segments: int = 16, rings: int = 8, radius: float = 0.5):
    polar = np.pi * np.arange(1, rings) / rings
    azimuth = 2 * np.pi * np.arange(segments) / segments
    ring_points = np.stack(
        [
            np.outer(np.sin(polar), np.cos(azimuth)),
            np.outer(np.sin(polar), np.sin(azimuth)),
            np.repeat(np.cos(polar)[:, None], segments, axis=1),
        ],
        axis=2,
    ).reshape(-1, 3)
    vertices = radius * np.vstack([[0, 0, 1], ring_points, [0, 0, -1]])
    bottom = len(vertices) - 1
    triangles = []
    for segment in range(segments):
        following = (segment + 1) % segments
        triangles.append((0, 1 + segment, 1 + following))
        for ring in range(rings - 2):
            a, b = 1 + ring * segments + segment, 1 + ring * segments + following
            triangles += [(a, a + segments, b + segments), (a, b + segments, b)]
        last = 1 + (rings - 2) * segments
        triangles.append((last + segment, bottom, last + following))
    return vertices, np.array(triangles)


def cylinder(sides: int = 16, radius: float = 0.25, depth: float = 1.5):
    angles = 2 * np.pi * np.arange(sides) / sides
    circle = radius * np.stack([np.cos(angles), np.sin(angles)], axis=1)
    vertices = np.vstack(
        [np.column_stack([circle, np.full(sides, z)]) for z in (-depth / 2, depth / 2)]
    )
    triangles = []
    for side in range(sides):
        following = (side + 1) % sides
        triangles += [(side, following, sides + following), (side, sides + following, sides + side)]
    for fan in range(1, sides - 1):
        triangles += [(0, fan + 1, fan), (sides, sides + fan, sides + fan + 1)]
    return vertices, np.array(triangles)


def random_rotations(rng: np.random.Generator, count: int) -> np.ndarray:
    quaternions = rng.normal(size=(count, 4))
    w, x, y, z = (quaternions / np.linalg.norm(quaternions, axis=1, keepdims=True)).T
    return np.stack(
        [
            np.stack([1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)], 1),
            np.stack([2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)], 1),
            np.stack([2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)], 1),
        ],
        axis=1,
    )


def _supports(points: np.ndarray, directions: np.ndarray) -> np.ndarray:
    """The point of each padded set (k, v, 3) farthest along its direction (k, 3)."""
    farthest = np.einsum("kvj,kj->kv", points, directions).argmax(axis=1)
    return points[np.arange(len(points)), farthest]


def _closest_in_simplices(simplex: np.ndarray, used: np.ndarray):
    """The point of each simplex (k, 4, 3), vertices `used` (k, 4), nearest the origin:
    the nearest of the affine projections of the origin on its faces that fall inside
    them (the nearest point lies inside the face it is on). returns (point (k, 3), the
    face's vertices (k, 4) bool, inside (k,) bool: the origin is in a full tetrahedron)."""
    count = len(simplex)
    best = np.full(count, np.inf)
    point = np.zeros((count, 3))
    face = np.zeros((count, 4), dtype=bool)
    for subsets in _SUBSETS:
        corners = simplex[:, subsets]  # (k, s, m, 3)
        origin_side = corners[:, :, 0]
        edges = corners[:, :, 1:] - origin_side[:, :, None]  # (k, s, m - 1, 3)
        gram = np.einsum("ksaj,ksbj->ksab", edges, edges)
        right = -np.einsum("ksaj,ksj->ksa", edges, origin_side)
        size = subsets.shape[1]
        if size == 1:
            weights = np.zeros((*corners.shape[:2], 0))
            solvable = np.ones(corners.shape[:2], dtype=bool)
        else:
            determinant = np.linalg.det(gram)
            scale = np.prod(np.einsum("ksaa->ksa", gram), axis=2)
            solvable = np.abs(determinant) > 1e-12 * np.maximum(scale, 1e-300)
            gram[~solvable] = np.eye(size - 1)
            weights = np.linalg.solve(gram, right[..., None])[..., 0]
        inside = solvable & (weights >= 0).all(axis=2) & (weights.sum(axis=2) <= 1)
        inside &= used[:, subsets].all(axis=2)
        candidate = origin_side + np.einsum("ksa,ksaj->ksj", weights, edges)
        norm = np.where(inside, np.einsum("ksj,ksj->ks", candidate, candidate), np.inf)
        nearest = norm.argmin(axis=1)
        rows = np.arange(count)
        better = norm[rows, nearest] < best
        best[better] = norm[rows, nearest][better]
        point[better] = candidate[rows, nearest][better]
        members = np.zeros((count, 4), dtype=bool)
        members[rows[:, None], subsets[nearest]] = True
        face[better] = members[better]
    # The full tetrahedron: the origin inside it when its barycentrics are all >= 0.
    edges = simplex[:, 1:] - simplex[:, :1]
    determinant = np.linalg.det(edges)
    solvable = used.all(axis=1) & (np.abs(determinant) > 1e-18)
    safe = np.where(solvable[:, None, None], edges, np.eye(3))
    weights = np.linalg.solve(np.swapaxes(safe, 1, 2), -simplex[:, 0][..., None])[..., 0]
    inside = solvable & (weights >= 0).all(axis=1) & (weights.sum(axis=1) <= 1)
    return point, face, inside


def hull_distances(first: np.ndarray, second: np.ndarray) -> np.ndarray:
    """GJK distance between the convex hulls of point sets, vectorised over k pairs.

    first, second: (k, v, 3) and (k, w, 3) world points (pad a short set by repeating
    one of its points)
    returns: (k,) distance, 0 where the hulls meet
    """
    count = len(first)
    distance = np.zeros(count)
    direction = first[:, 0] - second[:, 0]
    simplex = np.zeros((count, 4, 3))
    used = np.zeros((count, 4), dtype=bool)
    active = np.arange(count)
    for _ in range(_GJK_ITERATIONS):
        if not len(active):
            break
        v = direction[active]
        support = _supports(first[active], -v) - _supports(second[active], v)
        squared = (v * v).sum(axis=1)
        # relative to the distance, and to the coordinates for pairs nearly touching
        allowed = _GJK_TOLERANCE * squared + _ROUNDING * (support * support).sum(axis=1)
        done = squared - (v * support).sum(axis=1) <= allowed
        distance[active[done]] = np.sqrt(squared[done])
        keep = ~done & (squared > 0)
        active, support = active[keep], support[keep]
        free = (~used[active]).argmax(axis=1)
        simplex[active, free] = support
        used[active, free] = True
        point, face, inside = _closest_in_simplices(simplex[active], used[active])
        direction[active], used[active] = point, face
        distance[active[inside]] = 0.0
        active = active[~inside & ((point * point).sum(axis=1) > 0)]
    distance[active] = np.linalg.norm(direction[active], axis=1)
    return distance


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--count", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=3)
    arguments = parser.parse_args(argv)
    rng = np.random.default_rng(13)
    kinds = [cube(), uv_sphere(), cylinder()]
    meshes = [prepare_mesh(vertices, triangles) for vertices, triangles in kinds]
    count = arguments.count
    side = (count * 40.0) ** (1 / 3)
    rotations = random_rotations(rng, count)
    locations = rng.uniform(0, side, (count, 3))
    matrices = np.tile(np.eye(4), (count, 1, 1))
    matrices[:, :3, :3], matrices[:, :3, 3] = rotations, locations
    object_meshes = [meshes[index % 3] for index in range(count)]
    world = [kinds[index % 3][0] @ rotations[index].T + locations[index] for index in range(count)]
    lows = np.array([points.min(axis=0) for points in world])
    highs = np.array([points.max(axis=0) for points in world])
    pairs = overlapping_bounds(lows, highs)
    most = max(len(points) for points in world)
    padded = np.array([np.vstack([p, np.repeat(p[:1], most - len(p), axis=0)]) for p in world])
    proxies = stack_fits([fit_box(points) for points in world])

    def fastest(run):
        times, result = [], None
        for _ in range(arguments.repeat):
            start = time.perf_counter()
            result = run()
            times.append(time.perf_counter() - start)
        return min(times), result

    mesh_time, contacts = fastest(lambda: mesh_contacts(object_meshes, matrices, pairs, 1.0))
    hull_time, hull = fastest(lambda: hull_distances(padded[pairs[:, 0]], padded[pairs[:, 1]]))
    proxy_time, _ = fastest(lambda: pair_distance(proxies, pairs[:, 0], pairs[:, 1]))
    mesh_meet = contacts.distance <= 1e-9
    hull_meet = hull <= 1e-9
    apart = ~mesh_meet & np.isfinite(contacts.distance)  # within max_distance 1
    print(
        f"{count} objects (cube, 16x8 UV sphere, 16-sided cylinder), {len(pairs)} candidate pairs"
    )
    print(f"mesh mode, mesh_contacts:   {1e3 * mesh_time:8.1f} ms  ({mesh_meet.sum()} pairs meet)")
    print(f"hull-hull GJK in numpy:     {1e3 * hull_time:8.1f} ms  ({hull_meet.sum()} pairs meet)")
    print(f"proxy boxes, pair_distance: {1e3 * proxy_time:8.1f} ms")
    print(
        f"verdicts differ on {(mesh_meet != hull_meet).sum()} pairs; distances of pairs apart "
        f"differ by at most {np.abs(hull[apart] - contacts.distance[apart]).max(initial=0):.1e}"
    )
    print(f"hull / mesh time: {hull_time / mesh_time:.2f}x")


if __name__ == "__main__":
    main()
