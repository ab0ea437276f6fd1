"""Closed, outward-oriented triangle meshes for tests and benchmarks: boxes, UV spheres,
cylinders, prisms and tori, and open heightfields, as (vertices (v, 3) float64,
triangles (t, 3) int64)."""

from __future__ import annotations

import numpy as np

# The 6 faces of a box as corner quads, counter-clockwise seen from outside; corner
# index = 4 x + 2 y + z with 0 at the low and 1 at the high end of each axis.
_BOX_QUADS = ((0, 1, 3, 2), (4, 6, 7, 5), (0, 4, 5, 1), (2, 3, 7, 6), (0, 2, 6, 4), (1, 5, 7, 3))


def box_mesh(lo, hi) -> tuple[np.ndarray, np.ndarray]:
    """Axis-aligned box from corner lo (3,) to hi (3,): 8 vertices, 12 triangles."""
    lo, hi = np.asarray(lo, dtype=np.float64), np.asarray(hi, dtype=np.float64)
    vertices = np.array(
        [[x, y, z] for x in (lo[0], hi[0]) for y in (lo[1], hi[1]) for z in (lo[2], hi[2])]
    )
    triangles = [(a, b, c) for a, b, c, _ in _BOX_QUADS] + [(a, c, d) for a, _, c, d in _BOX_QUADS]
    return vertices, np.array(triangles, dtype=np.int64)


def _grid_triangles(
    rings: int, segments: int, wrap_rings: bool, wrap_segments: bool = True
) -> np.ndarray:
    """Two triangles per quad of a (rings, segments) vertex grid wrapping around in
    segments (unless not `wrap_segments`) and in rings when `wrap_rings`,
    counter-clockwise seen from outside."""
    ring_count = rings if wrap_rings else rings - 1
    segment_count = segments if wrap_segments else segments - 1
    r, s = np.meshgrid(np.arange(ring_count), np.arange(segment_count), indexing="ij")
    r, s = r.ravel(), s.ravel()
    a = r * segments + s
    b = ((r + 1) % rings) * segments + s
    c = ((r + 1) % rings) * segments + (s + 1) % segments
    d = r * segments + (s + 1) % segments
    return np.concatenate([np.stack([a, b, c], 1), np.stack([a, c, d], 1)])


def heightfield(across, height) -> tuple[np.ndarray, np.ndarray]:
    """An open square sheet (a terrain, a floor): a vertex at each (x, y) of `across`
    (c,) in both, x first, at z = height(x, y) (of (c, c) arrays); two triangles a quad,
    facing +z."""
    x, y = np.meshgrid(across, across, indexing="ij")
    vertices = np.column_stack(
        [x.ravel(), y.ravel(), np.broadcast_to(height(x, y), x.shape).ravel()]
    )
    triangles = _grid_triangles(len(across), len(across), wrap_rings=False, wrap_segments=False)
    return vertices, triangles.astype(np.int64)


def uv_sphere(radius: float, rings: int, segments: int) -> tuple[np.ndarray, np.ndarray]:
    """Sphere of `radius` about the origin: `rings` - 1 latitude circles of `segments`
    vertices plus the two poles; 2 segments (rings - 1) triangles."""
    polar = np.linspace(0.0, np.pi, rings + 1)[1:-1]
    azimuth = np.linspace(0.0, 2 * np.pi, segments, endpoint=False)
    p, a = np.meshgrid(polar, azimuth, indexing="ij")
    ring_vertices = radius * np.stack(
        [np.sin(p) * np.cos(a), np.sin(p) * np.sin(a), np.cos(p)], axis=-1
    ).reshape(-1, 3)
    count = len(ring_vertices)
    vertices = np.concatenate([ring_vertices, [[0, 0, radius], [0, 0, -radius]]])
    s = np.arange(segments)
    top = np.stack([np.full(segments, count), s, (s + 1) % segments], axis=1)
    last = (rings - 2) * segments
    bottom = np.stack([np.full(segments, count + 1), last + (s + 1) % segments, last + s], 1)
    body = _grid_triangles(rings - 1, segments, wrap_rings=False)
    return vertices, np.concatenate([top, body, bottom]).astype(np.int64)


def cylinder(radius: float, length: float, segments: int) -> tuple[np.ndarray, np.ndarray]:
    """Capped cylinder of `radius` along the z axis from 0 to `length`, its circles of
    `segments` vertices starting on the x axis; 4 segments triangles."""
    azimuth = np.linspace(0.0, 2 * np.pi, segments, endpoint=False)
    circle = radius * np.stack([np.cos(azimuth), np.sin(azimuth)], axis=1)
    return prism(circle, 0.0, length, centre=(0.0, 0.0))


def prism(footprint, bottom: float, top: float, centre=None) -> tuple[np.ndarray, np.ndarray]:
    """Upright prism over a convex polygon `footprint` (n, 2), counter-clockwise seen from
    above, from z = `bottom` to `top`: its top ring, its bottom ring, then the caps'
    centres (`centre` (2,), the footprint's mean if not given); 4 n triangles."""
    footprint = np.asarray(footprint, dtype=np.float64)
    segments = len(footprint)
    middle = footprint.mean(axis=0) if centre is None else np.asarray(centre, dtype=np.float64)
    rings = [np.column_stack([footprint, np.full(segments, z)]) for z in (top, bottom)]
    vertices = np.concatenate([*rings, [[*middle, top], [*middle, bottom]]])
    s = np.arange(segments)
    top_fan = np.stack([np.full(segments, 2 * segments), s, (s + 1) % segments], axis=1)
    bottom_fan = np.stack(
        [np.full(segments, 2 * segments + 1), segments + (s + 1) % segments, segments + s], 1
    )
    side = _grid_triangles(2, segments, wrap_rings=False)
    return vertices, np.concatenate([top_fan, side, bottom_fan]).astype(np.int64)


def torus(major: float, minor: float, rings: int, segments: int):
    """Torus about the z axis: tube radius `minor` around a circle of radius `major`,
    `rings` tube circles of `segments` vertices; 2 rings segments triangles."""
    around = np.linspace(0.0, 2 * np.pi, rings, endpoint=False)
    tube = np.linspace(0.0, 2 * np.pi, segments, endpoint=False)
    u, v = np.meshgrid(around, tube, indexing="ij")
    distance = major + minor * np.cos(v)
    vertices = np.stack(
        [distance * np.cos(u), distance * np.sin(u), minor * np.sin(v)], axis=-1
    ).reshape(-1, 3)
    return vertices, _grid_triangles(rings, segments, wrap_rings=True).astype(np.int64)
