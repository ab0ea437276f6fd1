"""Exact contact of triangle meshes: distance, crossing, containment and penetration depth.

    mesh = prepare_mesh(vertices, triangles)          # once per distinct geometry
    contacts = mesh_contacts(meshes, matrices, pairs, max_distance)

A `TriangleMesh` holds one mesh in its own frame; `mesh_contacts` poses mesh k by the
affine matrix k (scale and shear allowed: the vertices are transformed, nothing assumes a
rigid move) and decides each pair (i, j) on the world triangles. Imports numpy and the
core's `columns`, `constants`, `contact`, `fit`, `grid` and `threads` only.

Semantics, for each pair, with the contact epsilon `eps` of `contact.contact_epsilon`
(1e-6 * max(1, |coordinate|), so float32 rounding of Blender data never makes or hides a
contact):

- Distance: the exact minimum distance between the two triangle sets, over the
  vertex-triangle and edge-edge cases of every triangle pair, with the witness points of
  the minimum; 0 when the surfaces meet. Where the surfaces come within `eps` of each
  other (touching), it may instead be the distance of a triangle pair found within `eps`,
  with its witnesses: at most `eps`, not always the least, since every rule of
  `contact` compares distances with `eps` added and decides alike below it. Pairs
  farther apart than `max_distance` may come out as +inf (triangle pairs are culled by
  their bounds grown by it).
- Crossing: two triangles cross when each pokes through the other's plane by more than
  `eps` on both sides and their cuts of the common line overlap by more than `eps`,
  with the `eps` of the point of their bounds nearest the origin (no more than at any
  contact between them).
  Coplanar faces (all vertices within `eps` of the other plane) and faces abutting at an
  edge or a vertex never cross: they touch.
- Penetration depth: for two convex meshes (`_convex_shapes`), the bound below: where
  both keep their face normals and edge directions (`TriangleMesh.few_directions`: up to
  128 each) and these give at most `_PAIR_DIRECTIONS` directions (boxes, prisms, wedges,
  cylinders, a 16 x 8 UV sphere with either), along their face normals and edge
  crosses, which the separating axis theorem makes their exact depth (coal's EPA);
  otherwise (two UV spheres) a move known to separate them, never less than their
  depth and a few percent more at worst; for others, the larger of
  (a) over crossing triangle pairs (ta, tb): min(reach(ta, tb), reach(tb, ta), slide),
      where reach(t, u) = min(max signed distance, -min signed distance) of t's vertices
      to u's plane, i.e. how far t pokes through u's plane on its shallower side: the
      shorter of the two moves along u's normal that would take t off that plane; and
      slide the shorter move along the two planes' common line that takes the cuts of
      it apart, counted only where both cuts end on edges where the surface ends or
      turns by 60 degrees or more (not `TriangleMesh.smooth_edges`: a flat face or a
      curved one's facets go on crossing beyond a triangle's own cut);
  (b) over vertices and face centres of either closed mesh strictly inside the other
      closed mesh (inside by ray parity and farther than `eps` from its surface): their
      distance to that surface. Face centres find overlaps whose surfaces meet only along
      edges (two boxes of one height overlapping end to end: every vertex lies on the
      other's surface, but each end face lies inside the other).
  and never more than a translation known to separate the two meshes
  (`_separating_bound`): the smallest overlap of the two meshes' extents along the axes
  of both meshes' frames (the columns of their matrices) and of both meshes' face
  frames (`TriangleMesh.face_frame`, posed), and each set's cross products; extents of
  their boxes, and for a pair that would penetrate of their vertices
  (`_projected_overlap`), along those and, where a mesh is a polyhedron of few
  directions but not a box (`TriangleMesh.few_directions`: a mitred wall, a wedge, a
  prism), both meshes' face normals and their edges' cross products; where a mesh has
  many (a curved one: a UV sphere, a concave mesh of more than 8), the least of those
  directions then tilted towards the meshes' face axes while the overlap shrinks
  (`_tilted_overlap`). A depth is the least move
  that separates, so an estimate above a move that does is too deep: faces overlapping
  by a millimetre along an edge give (a) the height of the face and this bound the
  millimetre; in a building turned on its site and stored in world coordinates, a
  wall ending on another's face crosses it by rounding along long edges, (a) gives tens
  of micrometres and the bound along the other's face normal the rounding. For box
  meshes, and convex meshes of few directions, the depth is then at most their exact
  penetration depth (the separating axis theorem); (b) is never more than the true one.
  (c) Where faces of two closed meshes lie on each other (every corner within `eps` of
  the other's plane) facing the same way and sharing an area (`_faces_on_faces`, with
  the meshes' `TriangleMesh.outward` posed), the volumes behind that area overlap: a
  copy pasted in place has no crossing and no point strictly inside, and a copy moved
  along its faces only its end faces' centres. The depth is then the bound itself, for
  two convex meshes (their exact penetration depth where both are polyhedra of few
  directions), and for others only where (a) and (b) find none (a concave mesh's bound
  may span its concavity).
  A depth of at most `eps` is no penetration: the pair touches, and its distance is
  within `eps` of 0, as above (0 where triangles cut through each other by more than
  `eps`). Near-coplanar triangles are never taken
  to meet from their planes alone, whose rounding could join faces a gap apart.
- Relation (module constants): APART, TOUCHING (surfaces within `eps`, nothing crossing
  deeper than `eps`), CROSSING (some triangles cross, or the surfaces meet and a point of
  (b) lies inside, or faces of (c) are shared: the volumes overlap through the
  surfaces), I_INSIDE_J / J_INSIDE_I
  (the surfaces are apart and a point of the closed mesh i (j) lies strictly inside the
  closed mesh j (i): that mesh or one of its components is wholly inside the other, a
  penetration of the depth (b) although no triangles cross).
- Open meshes: a mesh that is not closed (`TriangleMesh.closed`: watertight, its faces
  turned either way) has no inside: nothing is found inside it (no containment in it, no
  depth (b) into it), while its own points are tested against a closed partner.
  `open_pair` flags pairs with an open mesh so that a report can warn that a part hidden
  inside an open shell is not found.
- Witness points: of the minimum distance when the pair does not penetrate; of the
  deepest penetration otherwise: the deepest vertex of the shallower triangle for (a), or
  the deepest point of (b), and its closest point on the other triangle or surface; for
  (c), those of (a) or (b) where they found a depth, else where the surfaces meet. A
  penetration's witnesses are never farther apart than its depth (plus `eps`): where
  those of (a) would be (the shallower triangle's deepest corner lies beyond the other
  triangle's face, or the bound capped the depth), both are the point where the deepest
  crossing's two triangles meet, on both surfaces, so the clash point lies where the
  meshes cross. Two convex meshes decided without their triangles (below) take those of
  (b), or where their faces meet along the depth's direction.

Cost: each `TriangleMesh` carries a bounding volume tree over its triangles, built once
by `prepare_mesh` (median splits, at most `_LEAF_SIZE` triangles per leaf; once per
shape for translated copies, `PreparedMeshes`); a call poses the meshes of all pairs
once, refits the trees' node boxes to the posed triangles (linear in the triangles, like
the posing), sets aside as apart the pairs whose posed boxes lie farther apart than
`max_distance` along one of the two meshes' face axes (`_face_axes_overlap`; where they
overlap by at most half the least contact epsilon, nothing is looked for inside), and
walks both trees of all pairs together, one level at a time over arrays
of node pairs, keeping node pairs whose boxes come within `max_distance` and within an
upper bound of the pair's distance (two vertices' distance); triangle pairs are also
left out where they lie apart along either mesh's posed face normal, where it is turned
off the world's axes and world bounds are loose (`_apart_along_faces`). Plane tests run
on the surviving triangle pairs; the exact distance only on pairs whose triangles do not
meet, and there only on candidates that planes and bounds cannot rule out against the
exact distance of the pair's candidate with the least lower bound: first on a few of
each pair's candidates (`_CONTACT_PROBES`, least lower bound first), and on the others
only where those leave the surfaces more than `eps` apart, in rounds by lower bound, each
round on the candidates whose lower bound is below the distance found so far (a tie is
not measured, so a distance is exact but for the rounding of a bound, a few units in the
last place of the coordinates). The inside test casts
a ray from each vertex and face centre inside the other mesh's world bounds and its
posed local and face boxes, in that mesh's own frame (the point taken there by the
inverse of its matrix), along the local axis in which it is thinnest, or along its face
frame's thinnest axis where it is much thinner there (a wall of a building turned on its
site and stored in world coordinates), and counts crossings (ray parity, exact on shared
edges and vertices by a consistent tie rule). Each closed mesh carries a grid across its
rays, built once (`RayGrid`, the first time a ray is cast into it): a line looks up its
cell and tests the triangles listed there whose bounds hold it, and points on one line
share them (a wall's corners above each other); where the two surfaces are apart, one
ray per connected part of the mesh (`TriangleMesh.vertex_parts`) decides for the whole
part, which cannot cross the other surface; a point in a convex mesh of a few hundred
faces (`TriangleMesh.convex`: boxes, wedges, prisms, a UV sphere) needs neither ray nor
search, its depth being its least height below the mesh's face planes, and a pair's
points are measured there deepest room first until the rest cannot be deeper; a point's
depth search (a box within `eps` of it, then boxes of growing radius down the same tree:
most points found inside lie on the other's surface) is bounded by its ray's first
crossing and skipped
when that bound cannot beat the depth already found, and it stops as soon as a triangle
within that depth turns up. What stays: touching elements whose faces lie on each other
have many triangle pairs with a lower bound of 0, and each gets the plane tests.

Two convex meshes of a few hundred faces each (cubes, UV spheres, cylinders: what live
mode mostly meets) need neither trees nor rays where their points' plane depths and
their extents decide (`_convex_contacts`): crossing where a point of one lies inside the
other, or the separating axis theorem finds them overlapping along every axis, while
each pokes out of the other's bounds; apart where their extents leave a gap along some
direction. The distance and relation are those the triangles would give, bit for bit
(the same stages give them); the witnesses are those of the deepest point inside, or
where the two faces the depth is measured between overlap (`_support_witnesses`).
Touching, containment and what else they cannot show is left to the triangles.
"""

from __future__ import annotations

import dataclasses
import functools
import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from .columns import (
    concatenate_fields,
    cross_rows,
    cubed,
    dot_rows,
    first_distinct,
    pick_rows,
    reduce_short_axis,
    take_rows,
)
from .constants import COPY_TOLERANCE
from .contact import CONTACT_RELATIVE, contact_epsilon
from .fit import translated_copies
from .grid import expand_runs, lexicographic_order, ranks_in_runs, run_starts
from .threads import map_in_threads, worker_count

APART = 0
TOUCHING = 1
CROSSING = 2
I_INSIDE_J = 3
J_INSIDE_I = 4

# Triangles per leaf of a mesh's tree: a leaf pair expands into at most 64 triangle
# pairs (each leaf's triangles tested against the other leaf's box first); leaves of 3 to
# 16 triangles took the same time on the FZK-Haus fixture.
_LEAF_SIZE = 8
# Triangle pairs evaluated at once: each holds about 5 kB of temporaries (the 9 edge pairs
# and 6 vertex-triangle cases), so a chunk stays under about 200 MB.
_CHUNK_ROWS = 1 << 15
# Triangles with |cross| at most this times their longest edge squared have zero area.
_ZERO_AREA = 1e-12
# Edges closer to parallel than this (sin^2 of their angle) have no interior closest pair
# that the vertex-triangle cases miss.
_PARALLEL_SIN2 = 1e-14
# Relative rounding of a lower bound of a triangle pair's distance (a few hundred float64
# steps of the coordinates).
_ROUNDING = 1e-12
# The inside stage measures the points of each pair deepest bound first, this many in the
# first round and eight times as many in each next one; the depth found so far drops the
# points whose bound cannot beat it. 8 rather than 64: the same answers, 10% less time on
# crossing pairs of turned primitives (whose deepest few points settle the depth), the
# same on the FZK-Haus.
_FIRST_DEPTH_BATCH = 8
# The exact distance is first computed for this many of each pair's candidates, least
# lower bound first; a pair they put within the contact epsilon is touching, and its
# other candidates are not measured. Touching building elements (faces on faces) have
# hundreds of candidates with a lower bound of 0, more than half of them within the
# epsilon (AC11, FZK-Haus, Allplan: median 81%, 73%, 56% of each touching pair's).
_CONTACT_PROBES = 4
# The other candidates of the pairs left apart are then measured in rounds, each up to
# this many times the ranks of the one before, dropping between rounds those whose lower
# bound is not below the distance found (FZK-Haus and Allplan: 7-10% less time than one
# round).
_ROUND_GROWTH = 8
# A surface goes on across an edge where its two triangles' normals turn by less than
# 60 degrees (|cosine| above this): one flat face, or the facets of a curved one (a pipe
# of six or more facets). Only sharper edges, like a box's, end a face.
_SMOOTH_COSINE = 0.5
# Two triangles whose normals are within about `_FACE_DIRECTION_STEP` radians of each
# other lie in one flat face: the edge between them (a quad's diagonal) is not an edge of
# the face (cos(1e-4) = 1 - 5e-9).
_FLAT_COSINE = 1.0 - 5e-9
# Pairs are decided on several threads when each thread's pairs hold at least this many
# triangles (both meshes' counted for each pair): with fewer, the Python between numpy's
# calls (held under the GIL) outweighs the work in them and threads do not pay (a
# 1,000-object live update's 68 pairs of 12-224 triangles were no faster on two).
_TRIANGLES_PER_WORKER = 32_768
# Meshes of up to this many triangles are tested for convexity when prepared; larger ones
# count as not convex. Two convex meshes take a move that separates them as their depth
# (`_slot_contacts`): with a limit of 256, Blender's default UV sphere (960 triangles)
# pushed into a cube came out as little as 0.69 of its depth (27 of 73 pairs over 1%
# shallower than coal's EPA).
_CONVEX_TEST_TRIANGLES = 2048
# A point's depth in a convex mesh of up to this many triangles is its least height below
# the faces' planes (`_convex_depths`), in larger ones it is searched as in any mesh. The
# planes cost a row per face, and beyond a few hundred faces the rays and depth searches
# cost less. With each face's normal made once, Blender's 224-triangle UV sphere measured
# by its planes makes bench_live_mesh's frames faster (handler 13.4 ms against 16.0-16.4
# ms at 200 objects, 34.6-38.0 ms against 39.7-42.7 ms at 1,000); when a face's normal was
# made per point, 64 was the better limit.
_PLANE_DEPTH_TRIANGLES = 256
# `_is_convex` measures the vertices against this many planes at a time, and stops at the
# first that has vertices on both sides (most concave meshes: in the first).
_CONVEX_TEST_PLANES = 256
# A vertex within this fraction of the largest |coordinate| outside a triangle's plane
# still leaves the mesh convex: float32 rounding puts a flat face's fourth corner off
# the plane of its first three (1.004e-7 on Blender's 16 x 8 UV sphere of radius 0.5).
# Half the contact epsilon, so that a depth measured from the planes is off by less
# than what counts as a touch.
_CONVEX_ROUNDING = 0.5 * CONTACT_RELATIVE
# A mesh's face normal whose largest component is below this is turned off the world's
# axes (by more than about 0.08 degrees): triangle pairs are also tested for separation
# along it, where world bounds are loose. Along a world axis they are as tight as that.
_TURNED_NORMAL = 1.0 - 1e-6
# Candidate triangle pairs are tested along the face normals only in groups of at least
# this many: on fewer (a live update's) the plane tests cost less than the test's calls.
_FACE_TEST_ROWS = 16_384
# A pair whose meshes' boxes overlap by at most this along a face axis is never deeper:
# half the least contact epsilon (at coordinates within 1), so that no point's rounded
# depth comes up to its epsilon.
_SHALLOW = 0.5 * CONTACT_RELATIVE
# A mesh with at most this many distinct face normals and as many edge directions keeps
# them (`TriangleMesh.few_directions`): with every face normal of two convex meshes and
# every cross product of their edges, a crossing pair's separating bound is their exact
# penetration depth (the separating axis theorem), and up to 2 x 8 + 8 x 8 more
# directions per pair stay cheap. A mitred wall has 4 of each, a wedge 5 and 6.
_FEW_DIRECTIONS = 8
# ... and a convex mesh (at most `_CONVEX_TEST_TRIANGLES` triangles, so about a thousand
# vertices to project) with up to this many of each: a prism of up to 254 sides, Blender's
# default cylinder (17 and 17), an arched end wall (10 and 13), a 16 x 8 UV sphere (64 and
# 76). With the tilted search alone (`_tilted_overlap`), which stops in a local least, a
# 9-sided prism pushed into a box came out 42% deeper than the separating axis theorem's
# depth, AC11's arched walls up to 18%, and 16-sided cylinders pushed into cubes as
# little as 0.3 of it.
_CONVEX_FEW_DIRECTIONS = 128
# A pair is measured along the separating axis theorem's directions (both meshes' face
# normals, the crosses of their edges) where they number at most this many: any two
# meshes of up to 32 of each, Blender's 16 x 8 UV sphere (64 and 76) with a cube (295) or
# a 16-sided cylinder (757), not with another (5,904: its bound is searched by tilting
# instead). Where they are more, the pair is measured as one with a curved mesh.
_PAIR_DIRECTIONS = 2 * 32 + 32 * 32
# `PreparedMeshes` keeps this many shapes for one list of triangles.
_SHAPES_PER_TRIANGLES = 8
# `PosedMeshes` keeps meshes of at least this many triangles posed between calls
# (smaller ones cost less to pose again than to join to the others).
_KEPT_POSED_TRIANGLES = 4096
# ... and at most this many triangles in all (about 600 MB).
_KEPT_POSED_LIMIT = 1 << 21
# `mesh_contacts` decides its pairs in shares of at most about this many, so that a call
# over a building's tens of thousands of pairs reports its progress as it goes.
_PAIRS_PER_SHARE = 2048


@dataclass(frozen=True, eq=False)
class TriangleMesh:
    """One mesh in its own local frame, prepared once and reused for every frame and pose
    while its geometry does not change (a rigid move only changes the matrix passed with
    it).

    vertices: (v, 3) float64, local coordinates
    triangles: (t, 3) int64 indices into vertices, zero-area triangles removed
    closed: watertight: after welding coincident vertices every edge is shared by exactly
        two triangles, in either orientation (a face flipped by a modelling slip keeps
        the inside, which ray parity decides)
    bounds: (2, 3) float64, the low and high corners of the vertices' local box (+inf and
        -inf without vertices)
    smooth_edges: (t, 3) bool, the surface goes on across edge k (corner k to corner
        k + 1) of each triangle: into a neighbour turned by less than 60 degrees (the same
        flat face, or the next facet of a curved one), or into more than one neighbour
    tree_order: (t,) int64, the triangles in the order of the mesh's bounding volume tree:
        a balanced binary tree whose node j at depth d (0 <= j < 2**d) holds
        tree_order[j * t >> d : (j + 1) * t >> d], split at the median of its triangles'
        centres along their widest axis
    tree_depth: the depth of the tree's leaves (0: one leaf holds every triangle)
    vertex_parts: (v,) int64, the connected part of each vertex (after welding): the
        least welded vertex index in it
    convex: closed, with a volume, and no vertex outside the plane of any triangle (to
        within `_CONVEX_ROUNDING`): a box, a wedge, a prism, a UV sphere; tested on
        meshes of up to `_CONVEX_TEST_TRIANGLES` triangles only, larger ones are not
        convex here
    face_frame: (3, 3) float64, orthonormal axes (columns) in local coordinates along
        the mesh's own faces (`_face_frame`): a wall's, slab's or beam's box axes however
        it is turned in the coordinates it is stored in
    face_bounds: (2, 3) float64, the low and high corners of the vertices' box along
        `face_frame` (coordinates in that frame)
    few_directions: (k, 3) float64 unit rows, local: the distinct directions of the
        mesh's face normals, then of its edges (one sign each; `_distinct_directions`),
        where it has at most `_FEW_DIRECTIONS` of each (a box, a wedge, a mitred wall, a
        stair), or a convex one at most `_CONVEX_FEW_DIRECTIONS` (a prism, a cylinder, a
        16 x 8 UV sphere); empty otherwise (a curved mesh). With their count of face normals,
        `normal_count`. `_separating_bound` measures crossing pairs' overlaps along them.
    outward: +1 where the triangles' right-handed normals (`_unit_normals`) point out of
        a closed mesh's volume, -1 where they point in (a mesh turned inside out), 0 for
        an open mesh, one whose faces disagree (a flipped face), or where that is not
        known (`_outward_sign`)

    A closed mesh's `ray_grid` is built the first time a ray is cast into it.
    """

    vertices: np.ndarray
    triangles: np.ndarray
    closed: bool
    bounds: np.ndarray
    smooth_edges: np.ndarray
    tree_order: np.ndarray
    tree_depth: int
    vertex_parts: np.ndarray
    convex: bool
    face_frame: np.ndarray
    face_bounds: np.ndarray
    few_directions: np.ndarray
    normal_count: int
    outward: int

    @functools.cached_property
    def core(self) -> np.ndarray:
        """Local indices (c,) ascending of the vertices extreme along 26 directions (the
        axes, their sums by two and by three, either way), or of all of at most 26: a
        few whose extents along any direction lie within the mesh's and come near them
        (`_axes_pruned_overlap`)."""
        if len(self.vertices) <= 26:
            return np.arange(len(self.vertices))
        steps = np.array([-1.0, 0.0, 1.0])
        directions = np.stack(np.meshgrid(steps, steps, steps), axis=-1).reshape(-1, 3)
        directions = directions[np.abs(directions).sum(axis=1) > 0]
        return np.unique(np.argmax(directions @ self.vertices.T, axis=1))

    @functools.cached_property
    def ray_grid(self) -> RayGrid | None:
        """The `RayGrid` where the rays for ray parity look up the triangles they may
        cross; None for an open mesh, which has no inside. Built on first use: most
        meshes of a building are never a ray's target."""
        if not self.closed:
            return None
        return _ray_grid(
            self.vertices, self.triangles, self.face_frame, self.bounds, self.face_bounds
        )


def prepare_mesh(vertices, triangles, leaf_size: int = _LEAF_SIZE) -> TriangleMesh:
    """A `TriangleMesh` of vertices (v, 3) and triangles (t, 3) indices into them, its
    tree's leaves holding at most `leaf_size` (>= 2) triangles each.

    Raises ValueError on bad shapes, indices out of range or non-finite coordinates.
    """
    vertices = np.array(vertices, dtype=np.float64)
    triangles = np.asarray(triangles)
    if vertices.ndim != 2 or vertices.shape[1] != 3:
        raise ValueError(f"prepare_mesh: vertices must be (v, 3), got {vertices.shape}")
    if triangles.ndim != 2 or triangles.shape[1] != 3:
        raise ValueError(f"prepare_mesh: triangles must be (t, 3), got {triangles.shape}")
    if triangles.size and not np.issubdtype(triangles.dtype, np.integer):
        raise ValueError("prepare_mesh: triangle indices must be integers")
    triangles = triangles.astype(np.int64)
    if not np.isfinite(vertices).all():
        raise ValueError("prepare_mesh: vertices hold NaN or infinite coordinates")
    if triangles.size and (triangles.min() < 0 or triangles.max() >= len(vertices)):
        raise ValueError("prepare_mesh: triangle indices out of range")
    corners = vertices[triangles]
    edges = corners[:, [1, 2, 0]] - corners
    longest = dot_rows(edges, edges).max(axis=1, initial=0.0)
    normals = cross_rows(edges[:, 0], -edges[:, 2])
    areas = _length(normals)
    kept = areas > _ZERO_AREA * longest
    triangles, corners, normals, areas = triangles[kept], corners[kept], normals[kept], areas[kept]
    vertices.setflags(write=False)
    triangles.setflags(write=False)
    bounds = np.array([vertices.min(axis=0, initial=np.inf), vertices.max(axis=0, initial=-np.inf)])
    bounds.setflags(write=False)
    tree_order, tree_depth = _build_tree(corners.mean(axis=1), leaf_size)
    tree_order.setflags(write=False)
    # Coincident vertices share one index.
    _, welded = _distinct_rows(*vertices.T)
    vertex_parts = _vertex_parts(welded, triangles)
    vertex_parts.setflags(write=False)
    unit = normals / np.maximum(areas, np.finfo(float).tiny)[:, None]
    welded_triangles = welded[triangles]
    smooth_edges, inside_faces = _edges_going_on(
        unit, welded_triangles, len(vertices), (_SMOOTH_COSINE, _FLAT_COSINE)
    )
    smooth_edges.setflags(write=False)
    closed = _is_closed(welded_triangles, len(vertices))
    face_frame, face_normals = _face_frame(corners, unit, areas)
    face_bounds = _bounds_along(vertices, face_frame)
    convex = closed and _is_convex(vertices, triangles)
    few_directions, normal_count = _few_directions(
        face_normals,
        edges[kept][~inside_faces],
        _CONVEX_FEW_DIRECTIONS if convex else _FEW_DIRECTIONS,
    )
    return TriangleMesh(
        vertices,
        triangles,
        closed,
        bounds,
        smooth_edges,
        tree_order,
        tree_depth,
        vertex_parts,
        convex,
        face_frame,
        face_bounds,
        few_directions,
        normal_count,
        _outward_sign(vertices, triangles, vertex_parts)
        if closed and _is_oriented(welded_triangles, len(vertices))
        else 0,
    )


# Above this many connected parts a closed mesh's orientation is not sought (the parts'
# boxes are compared two by two): a grating of thousands of bars.
_ORIENTED_PARTS = 1024


def _outward_sign(vertices: np.ndarray, triangles: np.ndarray, parts: np.ndarray) -> int:
    """`TriangleMesh.outward` of a closed mesh of vertices (v, 3), triangles (t, 3) and
    connected parts `parts` (v,) (`TriangleMesh.vertex_parts`): the sign of every part's
    signed volume where they all share one, and no part lies within another's box. A
    cavity's shell (a part inside another) must face the other way than its solid's to
    be outward, and ray parity, which decides what is inside, ignores orientation: such
    a mesh, or one whose parts disagree, gets 0."""
    owner = parts[triangles[:, 0]]
    labels, part = np.unique(owner, return_inverse=True)
    if len(labels) > _ORIENTED_PARTS:
        return 0
    corners = vertices[triangles] - (vertices.min(axis=0) + vertices.max(axis=0)) / 2.0
    # Six times each triangle's signed volume over the mesh's middle.
    volumes = dot_rows(corners[:, 0], cross_rows(corners[:, 1], corners[:, 2]))
    signed = np.bincount(part, volumes, minlength=len(labels))
    # A part whose volume is rounding against its triangles' own (a flat closed shell).
    solid = np.abs(signed) > 1e-9 * np.bincount(part, np.abs(volumes), minlength=len(labels))
    sign = np.sign(signed)
    if not solid.all() or not (sign == sign[0]).all():
        return 0
    if len(labels) > 1:
        order = np.argsort(part, kind="stable")
        starts = np.searchsorted(part[order], np.arange(len(labels)))
        lo = np.minimum.reduceat(corners.min(axis=1)[order], starts)
        hi = np.maximum.reduceat(corners.max(axis=1)[order], starts)
        within = (lo[:, None] >= lo[None]).all(axis=2) & (hi[:, None] <= hi[None]).all(axis=2)
        np.fill_diagonal(within, False)
        if within.any():
            return 0
    return int(sign[0])


# Face normals within about this angle (radians) of each other count as one direction
# when `_face_frame` sums their areas; a second axis is taken among the directions within
# this cosine of perpendicular to the first.
_FACE_DIRECTION_STEP = 1e-4
# Steps in a unit component either way.
_FACE_DIRECTION_STEPS = round(1 / _FACE_DIRECTION_STEP)


def _face_frame(
    corners: np.ndarray, unit: np.ndarray, areas: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Orthonormal axes (3, 3), columns, of a mesh's triangle corners (t, 3, 3) with unit
    normals `unit` (t, 3) and areas `areas` (t,) (twice theirs; any common factor): first
    the normal of the direction its faces cover most area in (opposite faces count
    together), then the same among the directions perpendicular to it (or, where none is,
    the longest edge of the first direction's largest triangle), then their cross
    product. The identity without triangles. With them, the distinct directions (k, 3)
    of the normals (`_direction_keys`), each its largest triangle's.

    For a box-like element (a wall, slab, beam or column, with or without openings) these
    are its box axes wherever it is turned: its bounds along them are as tight as its
    own, where bounds along the axes it is stored in (a building turned on its site) are
    not. `_separating_bound` measures overlaps along them."""
    if not len(corners):
        return np.eye(3), np.zeros((0, 3))
    unit, keys = _direction_keys(unit)
    _, direction = np.unique(keys, return_inverse=True)
    direction = direction.reshape(-1)
    covered = np.bincount(direction, weights=areas)
    # Each direction's normal is its largest triangle's (exact, not the rounded key).
    order = np.lexsort((areas, direction))
    last = np.searchsorted(direction[order], np.arange(len(covered)), side="right") - 1
    representative = unit[order[last]]
    first = representative[covered.argmax()]
    across = np.abs(representative @ first) < _FACE_DIRECTION_STEP
    if across.any():
        second = representative[np.flatnonzero(across)[covered[across].argmax()]]
    else:
        largest_triangle = corners[order[last[covered.argmax()]]]
        edges = largest_triangle[[1, 2, 0]] - largest_triangle
        second = edges[np.linalg.norm(edges, axis=1).argmax()]
    second = second - (second @ first) * first
    second /= np.linalg.norm(second)
    frame = np.column_stack((first, second, np.cross(first, second)))
    frame.setflags(write=False)
    return frame, representative


def _direction_keys(unit: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Unit vectors (n, 3) with one sign per direction (the largest component positive),
    and each one's key (n,) int64: rows within about `_FACE_DIRECTION_STEP` of each other
    share one, ordered as their rounded components are lexicographically."""
    largest = np.abs(unit).argmax(axis=1)
    unit = unit * np.sign(pick_rows(unit, largest))[:, None]
    steps = np.round(unit / _FACE_DIRECTION_STEP).astype(np.int64) + _FACE_DIRECTION_STEPS
    base = 2 * _FACE_DIRECTION_STEPS + 1
    return unit, (steps[:, 0] * base + steps[:, 1]) * base + steps[:, 2]


def _distinct_directions(vectors: np.ndarray) -> np.ndarray:
    """The distinct directions (k, 3) of non-zero `vectors` (n, 3), unit, one sign each
    (`_direction_keys`), each the first of its vectors."""
    lengths = _length(vectors)
    vectors = vectors[lengths > 0.0] / lengths[lengths > 0.0, None]
    unit, keys = _direction_keys(vectors)
    _, first = np.unique(keys, return_index=True)
    return unit[first]


def _few_directions(normals: np.ndarray, edges: np.ndarray, limit: int) -> tuple[np.ndarray, int]:
    """`TriangleMesh.few_directions` and `normal_count` of a mesh's distinct face normals
    (k, 3) (as `_face_frame` gives them) and the vectors (e, 3) of its edges that are not
    inside a flat face, where it has at most `limit` of each."""
    none = np.zeros((0, 3))
    none.setflags(write=False)
    if len(normals) > limit:  # a curved mesh: its edges need not be looked at
        return none, 0
    sides = _distinct_directions(edges)
    if len(sides) > limit:
        return none, 0
    directions = np.concatenate([normals, sides])
    directions.setflags(write=False)
    return directions, len(normals)


def _bounds_along(vertices: np.ndarray, frame: np.ndarray) -> np.ndarray:
    """(2, 3): the low and high corners of vertices (v, 3) in `frame`'s coordinates (+inf
    and -inf without vertices)."""
    along = vertices @ frame
    bounds = np.array([along.min(axis=0, initial=np.inf), along.max(axis=0, initial=-np.inf)])
    bounds.setflags(write=False)
    return bounds


def _moved_mesh(
    source: TriangleMesh, vertices: np.ndarray, bounds: np.ndarray | None = None
) -> TriangleMesh | None:
    """The `TriangleMesh` of vertices (v, 3) float64 with `source`'s triangles, made from
    `source` without preparing again: its triangles, tree, edges, parts and closedness,
    with these vertices, their bounds (`bounds` (2, 3) when given) and their own convex
    test where the source is convex; None unless the vertices are the source's moved by a
    translation (`fit.translated_copies`, the rule fits share)."""
    if vertices.shape != source.vertices.shape or not len(vertices):
        return None
    if bounds is None:
        bounds = np.array([vertices.min(axis=0), vertices.max(axis=0)])
    # A copy's offsets from its first vertex are the source's to within COPY_TOLERANCE
    # times the smaller largest |coordinate|, so its extents to within twice that (three
    # times leaves room for rounding): most meshes that are not copies stop here, without
    # the comparison vertex by vertex (a building turned on its site repeats its elements'
    # triangles in every wing, turned).
    largest = min(float(np.abs(bounds).max()), float(np.abs(source.bounds).max()))
    extents_apart = np.abs((bounds[1] - bounds[0]) - (source.bounds[1] - source.bounds[0]))
    if extents_apart.max() > 3.0 * COPY_TOLERANCE * largest:
        return None
    if not translated_copies(source.vertices, vertices):
        return None
    vertices = vertices.copy()
    vertices.setflags(write=False)
    bounds = bounds.copy()
    bounds.setflags(write=False)
    face_bounds = _bounds_along(vertices, source.face_frame)
    return dataclasses.replace(
        source,
        vertices=vertices,
        bounds=bounds,
        convex=source.convex and _is_convex(vertices, source.triangles),
        face_bounds=face_bounds,
    )


class PreparedMeshes:
    """`prepare_mesh` for the meshes a reader meets one by one, each shape prepared once:
    a mesh with the triangles of one prepared before and that one's vertices moved by a
    translation (`fit.translated_copies`: a building's repeated windows, doors and
    beams, each its own mesh in world coordinates) takes its triangles, tree, edges,
    parts and closedness (`_moved_mesh`). The meshes prepared are kept as shapes for
    copies until `forget`; at most `_SHAPES_PER_TRIANGLES` of them for one list of
    triangles, the latest."""

    def __init__(self) -> None:
        self._shapes: dict[tuple, list[tuple[np.ndarray, TriangleMesh]]] = {}
        self._key_of: dict[int, tuple] = {}  # id of a kept mesh -> its key in _shapes

    def prepare(self, vertices, triangles) -> TriangleMesh:
        """`prepare_mesh(vertices, triangles)`, or a copy's mesh made from a kept one's;
        raises ValueError as `prepare_mesh` does."""
        vertices = np.asarray(vertices, dtype=np.float64)
        triangles = np.asarray(triangles)
        key = (len(vertices), triangles.shape, triangles.dtype.str, hash(triangles.tobytes()))
        shapes = self._shapes.get(key, [])
        bounds = (
            np.array([vertices.min(axis=0), vertices.max(axis=0)])
            if shapes and vertices.ndim == 2 and len(vertices)
            else None
        )
        # Latest first: copies of one element mostly follow each other.
        for raw, source in reversed(shapes):
            if np.array_equal(raw, triangles):
                moved = _moved_mesh(source, vertices, bounds)
                if moved is not None:
                    return moved
        mesh = prepare_mesh(vertices, triangles)
        # A copy: the caller's array may change after this call.
        shapes.append((np.array(triangles), mesh))
        for _, dropped in shapes[:-_SHAPES_PER_TRIANGLES]:
            del self._key_of[id(dropped)]
        self._shapes[key] = shapes[-_SHAPES_PER_TRIANGLES:]
        self._key_of[id(mesh)] = key
        return mesh

    def forget(self, mesh: TriangleMesh) -> None:
        """No longer offer `mesh`, made by `prepare`, to copies (its geometry changed or
        went); a copy's mesh, or one not kept, is ignored."""
        key = self._key_of.pop(id(mesh), None)
        if key is None:
            return
        shapes = [entry for entry in self._shapes[key] if entry[1] is not mesh]
        if shapes:
            self._shapes[key] = shapes
        else:
            del self._shapes[key]


def _is_convex(vertices: np.ndarray, triangles: np.ndarray) -> bool:
    """Whether a closed mesh (vertices (v, 3), triangles (t, 3)) of at most
    `_CONVEX_TEST_TRIANGLES` triangles encloses a volume and has every vertex on one
    side of every triangle's plane (to within rounding), whichever way the triangle
    turns: a face flipped by a modelling slip leaves a box convex."""
    if len(triangles) > _CONVEX_TEST_TRIANGLES:
        return False
    corners = vertices[triangles]
    normals = cross_rows(corners[:, 1] - corners[:, 0], corners[:, 2] - corners[:, 0])
    normals /= _length(normals)[:, None]
    rounding = _CONVEX_ROUNDING * max(1.0, float(np.abs(vertices).max()))
    flat = True
    for start in range(0, len(triangles), _CONVEX_TEST_PLANES):
        rows = slice(start, start + _CONVEX_TEST_PLANES)
        heights = normals[rows] @ vertices.T - dot_rows(normals[rows], corners[rows, 0])[:, None]
        # An outward normal puts every vertex below its plane, an inward one above; a flat
        # mesh has every vertex on every plane, and no volume.
        below, above = (heights <= rounding).all(axis=1), (heights >= -rounding).all(axis=1)
        if not (below | above).all():
            return False
        flat &= bool((below & above).all())
    return not flat


def _vertex_parts(welded: np.ndarray, triangles: np.ndarray) -> np.ndarray:
    """`TriangleMesh.vertex_parts` (v,) of vertices welded to the indices `welded` (v,)
    and triangles (t, 3): each welded vertex takes the least label of its triangles'
    vertices until none changes, labels jumping to their own labels on the way (a few
    rounds for a long strip)."""
    label = np.arange(len(welded), dtype=np.int64)
    corners = welded[triangles].reshape(-1)
    while True:
        least = label[corners].reshape(-1, 3).min(axis=1)
        joined = label.copy()
        np.minimum.at(joined, corners, np.repeat(least, 3))
        joined = joined[joined]
        if (joined == label).all():
            return label[welded]
        label = joined


def _node_bounds(count: int, depth: int) -> np.ndarray:
    """Where the 2**depth nodes at `depth` of a tree over `count` triangles start and end
    in its order: (2**depth + 1,) int64."""
    return (np.arange((1 << depth) + 1, dtype=np.int64) * count) >> depth


def _build_tree(centres: np.ndarray, leaf_size: int) -> tuple[np.ndarray, int]:
    """The tree order (t,) and leaf depth of triangles with centres (t, 3): level by
    level, each node's triangles sorted along the widest axis of their centres, so that
    the node's two halves are split at the median."""
    if leaf_size < 2:
        raise ValueError(f"prepare_mesh: leaf_size must be >= 2, got {leaf_size}")
    count = len(centres)
    depth = 0
    while count > leaf_size << depth:
        depth += 1
    order = np.arange(count, dtype=np.int64)
    # Leaves hold more than leaf_size / 2 >= 1 triangles, so no node is empty.
    for level in range(depth):
        starts = _node_bounds(count, level)[:-1]
        node = np.repeat(np.arange(len(starts)), np.diff(np.append(starts, count)))
        placed = centres[order]
        widths = np.maximum.reduceat(placed, starts) - np.minimum.reduceat(placed, starts)
        axis = np.argmax(widths, axis=1)
        order = order[np.lexsort((placed[np.arange(count), axis[node]], node))]
    return order, depth


def _edges_going_on(
    normal: np.ndarray, welded: np.ndarray, count: int, cosines: tuple[float, ...]
) -> list[np.ndarray]:
    """For each of `cosines`, where the surface of triangles with unit normals (t, 3) and
    welded vertex indices (t, 3) below `count` goes on across their edges (t, 3) bool
    (edge k from corner k to k + 1): into a neighbour whose normal's |cosine| with the
    triangle's is above it, or into more than one neighbour. With `_SMOOTH_COSINE`,
    `TriangleMesh.smooth_edges`; with `_FLAT_COSINE`, the edges inside flat faces (a
    quad's diagonal)."""
    following = welded[:, [1, 2, 0]]
    keys = (np.minimum(welded, following) * count + np.maximum(welded, following)).reshape(-1)
    order = np.argsort(keys, kind="stable")
    sorted_keys = keys[order]
    shared = np.flatnonzero(sorted_keys[1:] == sorted_keys[:-1])
    # an edge of three or more triangles: a face may go on across it
    crowded = np.zeros(len(keys), dtype=bool)
    run_start = shared[:-1][shared[1:] - 1 == shared[:-1]]
    for step in range(3):
        crowded[run_start + step] = True
    first, second = order[shared] // 3, order[shared + 1] // 3
    # |cosine|: a fold back onto itself is taken to go on too
    turn = np.abs(dot_rows(normal[first], normal[second]))
    masks = []
    for cosine in cosines:
        going_on = np.zeros(len(keys), dtype=bool)
        going_on[order[shared][turn > cosine]] = True
        going_on[order[shared + 1][turn > cosine]] = True
        going_on[order[crowded]] = True
        masks.append(going_on.reshape(-1, 3))
    return masks


def _is_closed(welded: np.ndarray, count: int) -> bool:
    """Whether every edge of the triangles (t, 3), given by welded vertex indices below
    `count` (coincident vertices share one), has exactly two triangles, in either
    orientation: ray parity needs no more (a face flipped by a modelling slip keeps the
    mesh's inside; `_is_oriented` tells whether the faces agree)."""
    if len(welded) == 0:
        return False
    following = welded[:, [1, 2, 0]]
    if (following == welded).any():
        return False
    keys = np.sort((np.minimum(welded, following) * count + np.maximum(welded, following)).ravel())
    # Sorted, each key must open a run of exactly two.
    return bool(
        len(keys) % 2 == 0
        and (keys[0::2] == keys[1::2]).all()
        and (keys[2::2] != keys[1:-1:2]).all()
    )


def _is_oriented(welded: np.ndarray, count: int) -> bool:
    """Whether the triangles (t, 3) of a closed mesh, given by welded vertex indices below
    `count`, are consistently oriented: each edge used once in each direction."""
    following = welded[:, [1, 2, 0]]
    keys_sorted = np.sort((welded * count + following).reshape(-1))
    if (keys_sorted[1:] == keys_sorted[:-1]).any():
        return False
    # The directed edges are distinct: each has its reverse exactly when the reversed
    # edges are the same set.
    return bool(np.array_equal(np.sort((following * count + welded).reshape(-1)), keys_sorted))


@dataclass(frozen=True)
class MeshContacts:
    """The contact of m mesh pairs.

    distance: (m,) signed: >= 0 the exact minimum distance between the two triangle sets
        (+inf where it exceeds max_distance), < 0 is minus the penetration depth
    point_i, point_j: (m, 3) world witness points on mesh i and mesh j (closest points,
        or for a penetration the deepest point and its partner on the other surface, at
        most the depth apart, or one point where the two cross); their midpoint is the
        clash point
    relation: (m,) int8, APART, TOUCHING, CROSSING, I_INSIDE_J or J_INSIDE_I
    open_pair: (m,) bool, one of the two meshes is not closed: nothing was looked for
        inside it (points of either inside a closed other are)
    """

    distance: np.ndarray
    point_i: np.ndarray
    point_j: np.ndarray
    relation: np.ndarray
    open_pair: np.ndarray


def _length(vectors: np.ndarray) -> np.ndarray:
    return np.sqrt(dot_rows(vectors, vectors))


def _epsilon(magnitude: np.ndarray) -> np.ndarray:
    """contact_epsilon from the largest |coordinate| involved: (k,)."""
    return CONTACT_RELATIVE * np.maximum(1.0, magnitude)


def _least_magnitude(lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """The least largest |coordinate| of a point in boxes lo, hi (k, 3): (k,). The contact
    epsilon of any point in a box is at least `_epsilon` of it."""
    return reduce_short_axis(np.maximum, np.maximum(np.maximum(lo, -hi), 0.0))


def _closest_on_segments(points, starts, ends):
    """Closest points of segments start-end to points, all (..., 3)."""
    direction = ends - starts
    length2 = dot_rows(direction, direction)
    safe = np.where(length2 > 0, length2, 1.0)
    t = np.clip(dot_rows(points - starts, direction) / safe, 0.0, 1.0)
    return starts + t[..., None] * direction


def closest_on_triangles(points: np.ndarray, triangles: np.ndarray) -> np.ndarray:
    """Closest point of each triangle to each point.

    points: (..., 3); triangles: (..., 3, 3) corners, broadcast against points
    returns: (..., 3). A flat (zero-area) triangle is its three edges.
    """
    a, b, c = triangles[..., 0, :], triangles[..., 1, :], triangles[..., 2, :]
    normal = cross_rows(b - a, c - a)
    normal2 = dot_rows(normal, normal)
    safe = np.where(normal2 > 0, normal2, 1.0)
    offset = points - a
    projected = points - (dot_rows(offset, normal) / safe)[..., None] * normal
    # The three edges a-b, b-c, c-a along a last but one axis, each in one set of numpy
    # calls (each edge's numbers are the same as alone): a live update's groups are small.
    starts, ends = triangles, np.roll(triangles, -1, axis=-2)
    # Barycentric signs by the sub-triangle normals: all >= 0 inside.
    inside = np.broadcast_to(normal2 > 0, projected.shape[:-1]).copy()
    signs = dot_rows(
        cross_rows(ends - starts, projected[..., None, :] - starts), normal[..., None, :]
    )
    for edge in range(3):
        inside &= signs[..., edge] >= 0
    best = projected
    best2 = np.where(inside, dot_rows(points - projected, points - projected), np.inf)
    candidates = _closest_on_segments(points[..., None, :], starts, ends)
    gaps2 = dot_rows(points[..., None, :] - candidates, points[..., None, :] - candidates)
    for edge in range(3):
        closer = gaps2[..., edge] < best2
        best = np.where(closer[..., None], candidates[..., edge, :], best)
        best2 = np.where(closer, gaps2[..., edge], best2)
    return best


def _vertex_triangle(first: np.ndarray, second: np.ndarray):
    """Closest pair among the 6 vertex-triangle cases of triangle pairs (m, 3, 3):
    returns (distance (m,), point on first (m, 3), point on second (m, 3))."""
    # Both ways in one call: its ~170 numpy calls once (each row is computed alone, so
    # the points are the same as two calls give).
    closest = closest_on_triangles(
        np.concatenate([first, second]), np.concatenate([second, first])[:, None]
    )
    on_second, on_first = closest[: len(first)], closest[len(first) :]  # (m, 3, 3) each
    from_first = np.concatenate([first, on_first], axis=1)  # (m, 6, 3)
    from_second = np.concatenate([on_second, second], axis=1)
    gap = _length(from_first - from_second)
    best = np.argmin(gap, axis=1)
    return pick_rows(gap, best), pick_rows(from_first, best), pick_rows(from_second, best)


def _edge_edge(first: np.ndarray, second: np.ndarray):
    """Closest pair among the 9 edge-edge cases of triangle pairs (m, 3, 3), counting only
    closest points interior to both edges (the others are vertex-triangle cases):
    returns (distance (m,), +inf where none, point on first (m, 3), on second (m, 3))."""
    p1 = np.repeat(first, 3, axis=1)  # edge k of first against edge l of second
    d1 = np.repeat(np.roll(first, -1, axis=1) - first, 3, axis=1)
    p2 = np.tile(second, (1, 3, 1))
    d2 = np.tile(np.roll(second, -1, axis=1) - second, (1, 3, 1))
    r = p1 - p2
    a, e, b = dot_rows(d1, d1), dot_rows(d2, d2), dot_rows(d1, d2)
    c, f = dot_rows(d1, r), dot_rows(d2, r)
    denominator = a * e - b * b
    skew = denominator > _PARALLEL_SIN2 * a * e
    safe = np.where(skew, denominator, 1.0)
    s = (b * f - c * e) / safe
    t = (a * f - b * c) / safe
    valid = skew & (s >= 0) & (s <= 1) & (t >= 0) & (t <= 1)
    x = p1 + s[..., None] * d1
    y = p2 + t[..., None] * d2
    gap = np.where(valid, _length(x - y), np.inf)
    best = np.argmin(gap, axis=1)
    return pick_rows(gap, best), pick_rows(x, best), pick_rows(y, best)


def _unit_normals(triangles: np.ndarray) -> np.ndarray:
    """Unit normals (m, 3) of triangles (m, 3, 3), right-handed over their corners'
    order; zero for flat triangles."""
    normal = cross_rows(triangles[:, 1] - triangles[:, 0], triangles[:, 2] - triangles[:, 0])
    length = _length(normal)
    return normal / np.where(length > 0, length, 1.0)[:, None]


def _plane_distances(triangles: np.ndarray, planes_of: np.ndarray, normal: np.ndarray):
    """Signed distances (m, 3) of the corners of `triangles` to the planes of `planes_of`
    (both (m, 3, 3)), whose unit normals are `normal` (m, 3) (`_unit_normals`)."""
    return dot_rows(triangles - planes_of[:, None, 0], normal[:, None])


def _reach(signed: np.ndarray) -> np.ndarray:
    """How far a triangle pokes through a plane on its shallower side: (m,) from signed
    corner distances (m, 3); <= 0 when it does not cross the plane."""
    return np.minimum(reduce_short_axis(np.maximum, signed), -reduce_short_axis(np.minimum, signed))


def _edge_crossings(triangles: np.ndarray, signed: np.ndarray, direction: np.ndarray):
    """Where the edges of triangles (m, 3, 3) cross a plane, given their corners' signed
    distances to it (m, 3) (crossing it: some > 0, some < 0): each edge's crossing (edge
    k from corner k to k + 1) as a point (points (m, 3, 3)), a fraction of the edge
    (fraction (m, 3)) and a parameter along `direction` (m, 3) (along (m, 3)), and the
    edges of the cut's ends, its least and largest parameter (lo_index, hi_index (m,)).
    `_cut` picks the ends; `_plane_tests` picks only those it uses."""
    ends = np.roll(triangles, -1, axis=1)
    signed_ends = signed[:, [1, 2, 0]]
    crosses = (signed * signed_ends <= 0) & (signed != signed_ends)
    fraction = signed / np.where(crosses, signed - signed_ends, 1.0)
    points = triangles + fraction[..., None] * (ends - triangles)
    along = dot_rows(points, direction[:, None])
    lo_index = np.argmin(np.where(crosses, along, np.inf), axis=1)
    hi_index = np.argmax(np.where(crosses, along, -np.inf), axis=1)
    return points, fraction, along, lo_index, hi_index


def _cut(triangles: np.ndarray, signed: np.ndarray, direction: np.ndarray):
    """Where triangles (m, 3, 3) cut a plane, given their corners' signed distances to it
    (m, 3) (crossing it: some > 0, some < 0): the cut's ends as parameters along
    `direction` (m, 3) (lo, hi (m,)), as points (m, 3) each, and the edges they lie on
    (lo_edge, hi_edge (m,): k for the edge from corner k to k + 1, -1 at a corner)."""
    points, fraction, along, lo_index, hi_index = _edge_crossings(triangles, signed, direction)
    inner = (fraction > 0) & (fraction < 1)
    return (
        pick_rows(along, lo_index),
        pick_rows(along, hi_index),
        pick_rows(points, lo_index),
        pick_rows(points, hi_index),
        np.where(pick_rows(inner, lo_index), lo_index, -1),
        np.where(pick_rows(inner, hi_index), hi_index, -1),
    )


def _ends_a_face(edge: np.ndarray, smooth_edges: np.ndarray) -> np.ndarray:
    """Whether cut ends on triangles' edges `edge` (m,) (-1 at a corner) end the face:
    on an edge where the surface ends or turns sharply (not `smooth_edges` (m, 3))."""
    on_edge = edge >= 0
    return on_edge & ~pick_rows(smooth_edges, np.where(on_edge, edge, 0))


def _slide(first, second, normal_first, normal_second, signed_first, signed_second, smooth):
    """The shortest move along the common line of crossing triangle pairs (m, 3, 3) that
    takes their faces' cuts of it apart: (slide (m,), from_first (m, 3), to_second (m, 3)),
    the move's ends on first's and on second's cut. A move counts only where both cuts
    end at edges that end their faces (false in `TriangleMesh.smooth_edges` smooth_first,
    smooth_second (m, 3), `smooth` is the pair of them); elsewhere a neighbour goes on
    with the cut: +inf. normal_first, normal_second: (m, 3) their unit normals;
    signed_first: (m, 3) first's corners to second's plane and signed_second the other
    way round."""
    smooth_first, smooth_second = smooth
    direction = cross_rows(normal_first, normal_second)
    direction /= np.maximum(_length(direction), np.finfo(float).tiny)[:, None]
    # Both cuts in one call (each row is computed alone).
    cuts = _cut(
        np.concatenate([first, second]),
        np.concatenate([signed_first, signed_second]),
        np.concatenate([direction, direction]),
    )
    count = len(first)
    lo_first, hi_first, low_end_first, high_end_first, lo_edge_first, hi_edge_first = (
        column[:count] for column in cuts
    )
    lo_second, hi_second, low_end_second, high_end_second, lo_edge_second, hi_edge_second = (
        column[count:] for column in cuts
    )
    # first moved forward until its cut starts where second's ends, or back until its
    # cut ends where second's starts
    forward = np.where(
        _ends_a_face(lo_edge_first, smooth_first) & _ends_a_face(hi_edge_second, smooth_second),
        hi_second - lo_first,
        np.inf,
    )
    back = np.where(
        _ends_a_face(hi_edge_first, smooth_first) & _ends_a_face(lo_edge_second, smooth_second),
        hi_first - lo_second,
        np.inf,
    )
    take_forward = (forward <= back)[:, None]
    return (
        np.minimum(forward, back),
        np.where(take_forward, low_end_first, high_end_first),
        np.where(take_forward, high_end_second, low_end_second),
    )


def _crossing_depth(
    first, second, normal_first, normal_second, signed_first, signed_second, smooth
):
    """Depth (a) of crossing triangle pairs (m, 3, 3) and its witnesses: (depth (m,),
    deep_first (m, 3), deep_second (m, 3)). The depth is the shortest of three moves known
    to take the two apart: first off second's plane, second off first's (each along that
    plane's normal, on the shallower side; the witnesses are the shallower triangle's
    deepest corner and its closest point on the other), or one along their common line
    until their faces' cuts no longer overlap (`_slide`; the witnesses are the cuts'
    ends). The last matters for large faces crossing in a sliver: a stair's side passing
    a slab's opening edge by half a millimetre pokes 0.1 m through the slab's plane,
    but beside the slab. It counts only where both faces end at sharp edges: the facets
    of two crossing pipes are narrow, but their neighbours go on crossing.
    normal_first, normal_second: (m, 3) their unit normals; signed_first: (m, 3) first's
    corners to second's plane and signed_second the other way round; smooth: their
    `TriangleMesh.smooth_edges` (m, 3) each, as a pair."""
    reach_first, reach_second = _reach(signed_first), _reach(signed_second)
    # The shallower side's deepest corner: the one whose signed distance is -reach or +reach.
    corner_first = np.argmin(np.abs(np.abs(signed_first) - reach_first[:, None]), axis=1)
    corner_second = np.argmin(np.abs(np.abs(signed_second) - reach_second[:, None]), axis=1)
    deep_first = pick_rows(first, corner_first)
    deep_second = pick_rows(second, corner_second)
    first_shallower = (reach_first <= reach_second)[:, None]
    # Both ways in one call, as `_vertex_triangle` does (each row is computed alone).
    partner = closest_on_triangles(
        np.concatenate([deep_first, deep_second]), np.concatenate([second, first])
    )
    partner_second, partner_first = partner[: len(first)], partner[len(first) :]
    reach = np.minimum(reach_first, reach_second)
    slide, slide_first, slide_second = _slide(
        first, second, normal_first, normal_second, signed_first, signed_second, smooth
    )
    by_slide = (slide < reach)[:, None]
    return (
        np.minimum(reach, slide),
        np.where(by_slide, slide_first, np.where(first_shallower, deep_first, partner_first)),
        np.where(by_slide, slide_second, np.where(first_shallower, partner_second, deep_second)),
    )


@dataclass(frozen=True)
class _PlaneTests:
    """What the triangles' planes tell of m triangle pairs (first, second).

    meet: (m,) the two cross each other's planes by more than eps and their cuts overlap,
    so their distance is 0; meeting_point: (m, 3) a point of both there (0 elsewhere)
    crossing: (m,) they meet and cross (the cuts overlap by more than eps)
    lower: (m,) a lower bound of their distance (their separation along either normal)
    signed_first, signed_second: (m, 3) each one's corners to the other's plane
    on_planes: (m,) each lies in the other's plane: every corner within eps of it
    """

    meet: np.ndarray
    meeting_point: np.ndarray
    crossing: np.ndarray
    lower: np.ndarray
    signed_first: np.ndarray
    signed_second: np.ndarray
    on_planes: np.ndarray


def _plane_tests(first, second, normal_first, normal_second, epsilon) -> _PlaneTests:
    """`_PlaneTests` of triangle pairs first, second (m, 3, 3) with unit normals
    normal_first, normal_second (m, 3) (`_unit_normals`) and contact epsilons `epsilon`
    (m,); the meeting point is only set where they meet.

    The epsilon of a pair must be no larger than the contact epsilon anywhere in the two
    triangles (`_least_magnitude` of their bounds), as the pair's contact is weighed
    where it is: with the epsilon of their farthest corner, a 20 m beam sunk 5
    micrometres into another where they cross near the origin (epsilon 1e-6 there, 1e-5
    at the corners) pierced neither plane, and came out touching."""
    signed_first = _plane_distances(first, second, normal_second)
    signed_second = _plane_distances(second, first, normal_first)
    above_first = reduce_short_axis(np.maximum, signed_first)
    below_first = -reduce_short_axis(np.minimum, signed_first)
    above_second = reduce_short_axis(np.maximum, signed_second)
    below_second = -reduce_short_axis(np.minimum, signed_second)
    # `_reach` of each.
    reach_first = np.minimum(above_first, below_first)
    reach_second = np.minimum(above_second, below_second)
    # Only triangles that both pierce the other's plane can meet: their cuts of the
    # common line are found for those alone (gathered by `take_rows`: about a third of a
    # live update's 12,000 candidates pierce).
    pierce = np.flatnonzero((reach_first > epsilon) & (reach_second > epsilon))
    direction = cross_rows(take_rows(normal_first, pierce), take_rows(normal_second, pierce))
    direction /= np.maximum(_length(direction), np.finfo(float).tiny)[:, None]
    # The cuts' ends as `_cut` picks them, only those used here.
    points, _, along, low, high = _edge_crossings(
        take_rows(first, pierce), take_rows(signed_first, pierce), direction
    )
    lo_first, hi_first = pick_rows(along, low), pick_rows(along, high)
    start_first, end_first = pick_rows(points, low), pick_rows(points, high)
    _, _, along, low, high = _edge_crossings(
        take_rows(second, pierce), take_rows(signed_second, pierce), direction
    )
    lo_second, hi_second = pick_rows(along, low), pick_rows(along, high)
    lo, hi = np.maximum(lo_first, lo_second), np.minimum(hi_first, hi_second)
    span = hi_first - lo_first
    middle = np.clip(((lo + hi) / 2 - lo_first) / np.where(span > 0, span, 1.0), 0, 1)
    meet = np.zeros(len(first), dtype=bool)
    meet[pierce] = hi >= lo
    crossing = np.zeros(len(first), dtype=bool)
    crossing[pierce] = hi - lo > epsilon[pierce]
    meeting_point = np.zeros((len(first), 3))
    meeting_point[pierce] = start_first + middle[:, None] * (end_first - start_first)
    return _PlaneTests(
        meet,
        meeting_point,
        crossing,
        np.maximum(np.maximum(-reach_first, -reach_second), 0.0),
        signed_first,
        signed_second,
        np.maximum(np.maximum(above_first, below_first), np.maximum(above_second, below_second))
        <= epsilon,
    )


def _faces_on_faces(tests: _PlaneTests, first, second, normal_first, normal_second, sides, epsilon):
    """How wide an area triangle pairs first, second (m, 3, 3) share where they lie on
    each other's planes (every corner within `epsilon` (m,) of the other's) facing the
    same way: (m,), the least width of their overlap, -inf where they share none. Where
    both meshes are closed, the volumes behind such faces overlap.

    tests: their `_PlaneTests`; normal_first, normal_second: (m, 3) their unit normals;
    sides: two (m,) arrays, their meshes' `_World.outward` (0 where not known): both
    volumes lie behind the shared area where the product of the two and the normals'
    cosine is positive (faces abutting back to back have their volumes on either side:
    they touch). The area is shared where the triangles overlap by more than `epsilon`
    across each of their six edges (in the plane, the least width of two triangles'
    overlap is across one of them): faces meeting along an edge share none."""
    rows = np.flatnonzero(tests.on_planes)
    facing = sides[0][rows] * sides[1][rows] * dot_rows(normal_first[rows], normal_second[rows])
    rows = rows[facing > 0.0]
    a, b = first[rows], second[rows]
    width = np.full(len(rows), np.inf)
    for triangles, normal in ((a, normal_first[rows]), (b, normal_second[rows])):
        for corner in range(3):
            across = cross_rows(triangles[:, (corner + 1) % 3] - triangles[:, corner], normal)
            across /= np.maximum(_length(across), np.finfo(float).tiny)[:, None]
            along_a, along_b = dot_rows(a, across[:, None]), dot_rows(b, across[:, None])
            overlap = np.minimum(
                reduce_short_axis(np.maximum, along_a), reduce_short_axis(np.maximum, along_b)
            ) - np.maximum(
                reduce_short_axis(np.minimum, along_a), reduce_short_axis(np.minimum, along_b)
            )
            width = np.minimum(width, overlap)
    shared = np.full(len(first), -np.inf)
    shared[rows] = np.where(width > epsilon[rows], width, -np.inf)
    return shared


# Rounds of projections from one triangle onto the other and back in `_shared_point`.
_SHARED_POINT_ROUNDS = 4


def _shared_point(first: np.ndarray, second: np.ndarray) -> np.ndarray:
    """A point (k, 3) of each pair of coplanar triangles first, second (k, 3, 3) that
    share an area: from first's centroid, the closest point on second, then on first,
    and so on (alternating projections between two convex sets approach their common
    part); it ends on first, a few rounds bring it within rounding of second."""
    point = reduce_short_axis(np.add, first, 1) / 3.0
    if not len(point):
        # Eight projections' numpy calls on no rows: most calls share no faces.
        return point
    for _ in range(_SHARED_POINT_ROUNDS):
        point = closest_on_triangles(closest_on_triangles(point, second), first)
    return point


def _beyond_edges(first: np.ndarray, second: np.ndarray) -> np.ndarray:
    """How far each of triangles `second` (m, 3, 3) lies beyond an edge of its partner
    in `first` (m, 3, 3), along the edge's outward normal in the partner's plane: the
    largest over the partner's three edges of the gap between the two triangles along
    that direction (m,); negative where no edge has `second` wholly beyond it, NaN where
    the partner has no area.

    The gap along any unit direction bounds the triangles' distance from below. Both
    triangles are projected, not only the edge's start: for a sliver the computed
    normal, and so the direction, is rounding, and the bound must hold all the same."""
    normal = cross_rows(first[:, 1] - first[:, 0], first[:, 2] - first[:, 0])
    gap = np.full(len(first), np.nan)
    for corner in range(3):
        start = first[:, corner][:, None]
        # Outward for corners in the order that makes `normal`: edge x normal.
        outward = cross_rows(first[:, (corner + 1) % 3] - start[:, 0], normal)[:, None]
        beyond = reduce_short_axis(np.minimum, dot_rows(second - start, outward)) - (
            reduce_short_axis(np.maximum, dot_rows(first - start, outward))
        )
        with np.errstate(divide="ignore", invalid="ignore"):
            gap = np.fmax(gap, beyond / _length(outward[:, 0]))
    return gap


def _triangle_distance(first: np.ndarray, second: np.ndarray):
    """Distance of triangle pairs first, second (m, 3, 3) that do not cross, over the
    vertex-triangle and edge-edge cases: (distance (m,), point on first (m, 3), point
    on second (m, 3))."""
    vertex_gap, vertex_first, vertex_second = _vertex_triangle(first, second)
    edge_gap, edge_first, edge_second = _edge_edge(first, second)
    edge_closer = (edge_gap < vertex_gap)[:, None]
    return (
        np.minimum(vertex_gap, edge_gap),
        np.where(edge_closer, edge_first, vertex_first),
        np.where(edge_closer, edge_second, vertex_second),
    )


@dataclass(frozen=True)
class _World:
    """The meshes of the pairs posed in the world, concatenated; u posed meshes.

    vertices: (V, 3); vertex_start: (u,) first row of each mesh's vertices
    corners: (T, 3, 3) triangle corners; triangle_start, triangle_count: (u,) each mesh's
    rows of them; unit_normal: (T, 3) their `_unit_normals`; centroid: (T, 3) their
    centroids; lo, hi: (T, 3) triangle bounds; mesh_lo, mesh_hi: (u, 3) mesh bounds
    (+inf, -inf for a mesh without triangles); closed: (u,) bool; owner: (T,) the mesh
    of each triangle; smooth_edges: (T, 3) bool, `TriangleMesh.smooth_edges`
    vertex_part, triangle_part: (V,), (T,) the connected part of each vertex and triangle,
        numbered across all meshes
    forest: the meshes' trees with their node boxes in the world (`_Forest`), or what
        `_forest` builds them from: `tree` builds them the first time they are needed
        (two convex meshes decided from their points and extents need none)
    to_local: (u, 3, 4) each mesh's world-to-local affine map (NaN where its matrix is
        singular); local_lo, local_hi: (u, 3) its local bounds (`TriangleMesh.bounds`)
    convex: (u,) bool, `TriangleMesh.convex` and posed by an invertible matrix (an affine
        map keeps a mesh convex)
    face_frame: (u, 3, 3), face_lo, face_hi: (u, 3) each mesh's `TriangleMesh.face_frame`
        and `face_bounds`, local
    meshes: the u posed `TriangleMesh`es; linear: (u, 3, 3) their matrices' linear parts
    face_axes: (u, 3, 3) rows, each mesh's face frame posed and made unit (0 where its
        matrix flattens an axis); the first row is its face normal (the normal of the
        faces it covers most area with); normal_lo, normal_hi: (T,) each triangle's
        extent along its mesh's face normal; turned_normal: (u,) bool, the face normal
        is turned off every world axis (by more than about 0.08 degrees,
        `_TURNED_NORMAL`)
    outward: (u,) float, `TriangleMesh.outward` posed: flipped where the matrix mirrors,
        0 where it is singular
    reach: the largest |coordinate| of the corners; slack: the rounding of a bound's
        distance, `_ROUNDING` times max(1, reach)
    """

    vertices: np.ndarray
    vertex_start: np.ndarray
    vertex_count: np.ndarray
    corners: np.ndarray
    triangle_start: np.ndarray
    triangle_count: np.ndarray
    unit_normal: np.ndarray
    centroid: np.ndarray
    lo: np.ndarray
    hi: np.ndarray
    mesh_lo: np.ndarray
    mesh_hi: np.ndarray
    closed: np.ndarray
    owner: np.ndarray
    smooth_edges: np.ndarray
    vertex_part: np.ndarray
    triangle_part: np.ndarray
    forest: _Forest | tuple
    to_local: np.ndarray
    local_lo: np.ndarray
    local_hi: np.ndarray
    convex: np.ndarray
    face_frame: np.ndarray
    face_lo: np.ndarray
    face_hi: np.ndarray
    meshes: tuple
    linear: np.ndarray
    face_axes: np.ndarray
    normal_lo: np.ndarray
    normal_hi: np.ndarray
    turned_normal: np.ndarray
    outward: np.ndarray
    reach: float
    slack: float

    @functools.cached_property
    def tree(self) -> _Forest:
        """The meshes' trees (`forest`), built on first use: a live update of 1,000 cubes,
        UV spheres and cylinders refitted them in 0.6 ms of its 10, and used them for 2
        of its 1,451 pairs at most."""
        return self.forest if isinstance(self.forest, _Forest) else _forest(*self.forest)

    def sizes(self) -> tuple[int, ...]:
        """Its vertex, triangle, mesh, tree node and leaf counts and leaves' width:
        worlds of the same sizes join (`_joined_worlds`) into arrays of the same shapes."""
        leaves = self.tree.leaf_triangles
        return (
            len(self.vertices),
            len(self.corners),
            len(self.meshes),
            len(self.tree.lo),
            *leaves.shape,
        )


@dataclass(frozen=True)
class _Rays:
    """The `RayGrid`s of k posed meshes, concatenated.

    frame: (k, 3, 3) each grid's `RayGrid.frame`, local; scale: (k,) the world length of
        a unit step along its rays (the last row posed by the mesh's matrix)
    edges: (T, 3, 4), canonical: (T, 3), planes: (T, 6): the meshes' triangles, each in
        its mesh's ray frame, as `RayGrid` keeps them; across: (T, 2, 2) their
        `RayGrid.across`
    origin, cell: (k, 2) float64, shape: (k, 2) int64, as in `RayGrid`
    cell_base: (k,) each grid's first row of `cell_start`
    cell_start: (C + 1,), cell_triangles: (E,): the triangles (rows of `edges`) listed
        in cell c (of all grids) are cell_triangles[cell_start[c]:cell_start[c + 1]]
    """

    frame: np.ndarray
    scale: np.ndarray
    edges: np.ndarray
    canonical: np.ndarray
    planes: np.ndarray
    across: np.ndarray
    origin: np.ndarray
    cell: np.ndarray
    shape: np.ndarray
    cell_base: np.ndarray
    cell_start: np.ndarray
    cell_triangles: np.ndarray


def _rays(meshes: Sequence[TriangleMesh], linear: np.ndarray) -> _Rays:
    """The `_Rays` of k closed meshes posed by matrices of linear parts `linear`
    (k, 3, 3)."""
    grids = [mesh.ray_grid for mesh in meshes]
    triangle_count = np.array([len(grid.across) for grid in grids], dtype=np.int64)
    cells = np.array([len(grid.cell_start) - 1 for grid in grids], dtype=np.int64)
    entries = np.array([len(grid.cell_triangles) for grid in grids], dtype=np.int64)
    cell_start = np.concatenate(
        [grid.cell_start[:-1] + start for grid, start in zip(grids, _starts(entries), strict=True)]
        + [[int(entries.sum())]]
    )
    cell_triangles = np.concatenate(
        [
            grid.cell_triangles + start
            for grid, start in zip(grids, _starts(triangle_count), strict=True)
        ]
        + [np.zeros(0, dtype=np.int64)]
    )
    frame = np.array([grid.frame for grid in grids]).reshape(-1, 3, 3)
    return _Rays(
        frame,
        _length((linear @ frame[:, 2, :, None])[:, :, 0]),
        np.concatenate([grid.edges for grid in grids] + [np.zeros((0, 3, 4))]),
        np.concatenate([grid.canonical for grid in grids] + [np.zeros((0, 3), dtype=bool)]),
        np.concatenate([grid.planes for grid in grids] + [np.zeros((0, 6))]),
        np.concatenate([grid.across for grid in grids] + [np.zeros((0, 2, 2))]),
        np.array([grid.origin for grid in grids]).reshape(-1, 2),
        np.array([grid.cell for grid in grids]).reshape(-1, 2),
        np.array([grid.shape for grid in grids], dtype=np.int64).reshape(-1, 2),
        _starts(cells),
        cell_start.astype(np.int64),
        cell_triangles,
    )


@dataclass(frozen=True)
class _Forest:
    """The trees of u posed meshes, N nodes in all, each mesh's nodes in heap order (the
    children of its node h are its nodes 2h + 1 and 2h + 2).

    triangles: (T,) world triangle rows in tree order, mesh after mesh
    root: (u,) each mesh's root node
    lo, hi: (N, 3) node bounds in the world (+inf, -inf for a mesh without triangles)
    first, count: (N,) each node's run of `triangles`
    corner: (N, 3) the first corner of each node's first triangle in tree order, a point
        of the node's triangles (NaN for a node without triangles)
    child: (N,) a node's first child (the second follows it), -1 for a leaf
    leaf: (N,) a leaf's row in the three arrays below, -1 for an inner node
    leaf_triangles: (L, w) each leaf's world triangles in tree order, -1 past its count
        (w, the most any leaf holds)
    leaf_lo, leaf_hi: (L, 3, w) their bounds, axis by axis (each axis's w bounds
        contiguous), +inf and -inf past the leaf's count, so that they meet no box
    """

    triangles: np.ndarray
    root: np.ndarray
    lo: np.ndarray
    hi: np.ndarray
    first: np.ndarray
    count: np.ndarray
    corner: np.ndarray
    child: np.ndarray
    leaf: np.ndarray
    leaf_triangles: np.ndarray
    leaf_lo: np.ndarray
    leaf_hi: np.ndarray


def _forest(posed: Sequence[TriangleMesh], triangle_start, corners, lo, hi) -> _Forest:
    """The trees of meshes `posed` (u) whose triangles start at rows `triangle_start` (u,)
    of the world triangles `corners` (T, 3, 3) and their bounds lo, hi (T, 3): the trees
    come with the meshes; only their node bounds are refitted here, leaves from their
    triangles and every other node from its two children, one level at a time."""
    depth = np.array([mesh.tree_depth for mesh in posed], dtype=np.int64)
    triangles = np.concatenate(
        [mesh.tree_order + start for mesh, start in zip(posed, triangle_start, strict=True)]
        + [np.zeros(0, dtype=np.int64)]
    )
    node_count = (np.int64(2) << depth) - 1
    root = _starts(node_count)
    mesh, heap = expand_runs(np.zeros(len(posed), dtype=np.int64), node_count)
    level = np.frexp(heap + 1.0)[1].astype(np.int64) - 1
    slot = heap + 1 - (np.int64(1) << level)
    size = np.array([len(item.tree_order) for item in posed], dtype=np.int64)[mesh]
    start = (slot * size) >> level
    first = triangle_start[mesh] + start
    count = (((slot + 1) * size) >> level) - start
    height = depth[mesh] - level
    child = np.where(height > 0, 2 * np.arange(len(mesh)) - root[mesh] + 1, -1)
    # Once per node, not once per node pair that the walks meet it in.
    corner = np.full((len(mesh), 3), np.nan)
    filled = np.flatnonzero(count > 0)
    corner[filled] = take_rows(corners, triangles[first[filled]])[:, 0]
    # Each leaf's triangles and bounds in a row of their own: a leaf is met against a box
    # by one gather of its row, not one per triangle.
    leaves = np.flatnonzero(height == 0)
    leaf = np.full(len(mesh), -1, dtype=np.int64)
    leaf[leaves] = np.arange(len(leaves))
    row, position = expand_runs(first[leaves], count[leaves])
    column = position - first[leaves][row]
    width = int(count[leaves].max(initial=0))
    leaf_triangles = np.full((len(leaves), width), -1, dtype=np.int64)
    leaf_triangles[row, column] = triangles[position]
    # Past a leaf's count, the row after the last: bounds that meet no box.
    padded = np.where(leaf_triangles >= 0, leaf_triangles, len(lo))
    leaf_lo = np.take(np.concatenate([lo, np.full((1, 3), np.inf)]), padded, axis=0)
    leaf_hi = np.take(np.concatenate([hi, np.full((1, 3), -np.inf)]), padded, axis=0)
    node_lo = np.full((len(mesh), 3), np.inf)
    node_hi = np.full((len(mesh), 3), -np.inf)
    if width:
        node_lo[leaves] = reduce_short_axis(np.minimum, leaf_lo, 1)
        node_hi[leaves] = reduce_short_axis(np.maximum, leaf_hi, 1)
    leaf_lo = np.ascontiguousarray(leaf_lo.transpose(0, 2, 1))
    leaf_hi = np.ascontiguousarray(leaf_hi.transpose(0, 2, 1))
    for up in range(1, int(depth.max(initial=0)) + 1):
        nodes = np.flatnonzero(height == up)
        left, right = child[nodes], child[nodes] + 1
        node_lo[nodes] = np.minimum(node_lo[left], node_lo[right])
        node_hi[nodes] = np.maximum(node_hi[left], node_hi[right])
    return _Forest(
        triangles,
        root,
        node_lo,
        node_hi,
        first,
        count,
        corner,
        child,
        leaf,
        leaf_triangles,
        leaf_lo,
        leaf_hi,
    )


def _starts(counts: np.ndarray) -> np.ndarray:
    return np.cumsum(counts) - counts


def posed_vertices(
    meshes: Sequence[TriangleMesh], matrices: np.ndarray, which: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """The vertices of meshes `which` (u,) posed by their matrices (n, 4, 4), one mesh
    after the other: world coordinates (V, 3) and each mesh's vertex count (u,) int64."""
    posed = [meshes[k] for k in which]
    vertex_count = np.array([len(mesh.vertices) for mesh in posed], dtype=np.int64)
    local = np.concatenate([mesh.vertices for mesh in posed] + [np.zeros((0, 3))])
    owner = np.repeat(np.arange(len(which)), vertex_count)
    # Each vertex's columns of its matrix (V, 3, 4), by one gather of whole rows.
    columns = take_rows(np.ascontiguousarray(matrices[which, :3]), owner)
    vertices = columns[:, :, 3].copy()
    for axis in range(3):
        vertices += local[:, axis, None] * columns[:, :, axis]
    return vertices, vertex_count


def _pose(
    meshes: Sequence[TriangleMesh],
    matrices: np.ndarray,
    used: np.ndarray,
    kept: PosedMeshes | None = None,
) -> _World:
    """Meshes `used` (u,) posed by their matrices (n, 4, 4) as one `_World`; with `kept`,
    its large meshes taken from it where posed there before."""
    if kept is None:
        return _posed_together(meshes, matrices, used)
    return kept.pose(meshes, matrices, used)


def _posed_together(
    meshes: Sequence[TriangleMesh], matrices: np.ndarray, used: np.ndarray
) -> _World:
    """Meshes `used` (u,) posed by their matrices (n, 4, 4) as one `_World`, all in one
    set of numpy calls."""
    posed = [meshes[k] for k in used]
    vertices, vertex_count = posed_vertices(meshes, matrices, used)
    triangle_count = np.array([len(mesh.triangles) for mesh in posed], dtype=np.int64)
    vertex_start, triangle_start = _starts(vertex_count), _starts(triangle_count)
    triangles = np.concatenate(
        [mesh.triangles + start for mesh, start in zip(posed, vertex_start, strict=True)]
        + [np.zeros((0, 3), dtype=np.int64)]
    )
    corners = np.take(vertices, triangles, axis=0)
    lo, hi = reduce_short_axis(np.minimum, corners, 1), reduce_short_axis(np.maximum, corners, 1)
    reach = max(float(np.abs(lo).max(initial=0.0)), float(np.abs(hi).max(initial=0.0)))
    vertex_part = np.concatenate(
        [mesh.vertex_parts + start for mesh, start in zip(posed, vertex_start, strict=True)]
        + [np.zeros(0, dtype=np.int64)]
    )
    mesh_lo = np.full((len(used), 3), np.inf)
    mesh_hi = np.full((len(used), 3), -np.inf)
    has = triangle_count > 0
    if len(corners):
        mesh_lo[has] = np.minimum.reduceat(lo, triangle_start[has], axis=0)
        mesh_hi[has] = np.maximum.reduceat(hi, triangle_start[has], axis=0)
    closed = np.array([mesh.closed for mesh in posed], dtype=bool)
    bounds = np.array([mesh.bounds for mesh in posed]).reshape(-1, 2, 3)
    face_bounds = np.array([mesh.face_bounds for mesh in posed]).reshape(-1, 2, 3)
    face_frame = np.array([mesh.face_frame for mesh in posed]).reshape(-1, 3, 3)
    to_local = _inverse_affine(matrices[used])
    face_axes = _unit_rows((matrices[used, :3, :3] @ face_frame).transpose(0, 2, 1))
    owner = np.repeat(np.arange(len(used)), triangle_count)
    along_normal = dot_rows(corners, face_axes[owner, None, 0])
    return _World(
        vertices,
        vertex_start,
        vertex_count,
        corners,
        triangle_start,
        triangle_count,
        _unit_normals(corners),
        reduce_short_axis(np.add, corners, 1) / 3,
        lo,
        hi,
        mesh_lo,
        mesh_hi,
        closed,
        owner,
        np.concatenate([mesh.smooth_edges for mesh in posed] + [np.zeros((0, 3), dtype=bool)]),
        vertex_part,
        vertex_part[triangles[:, 0]],
        (posed, triangle_start, corners, lo, hi),
        to_local,
        bounds[:, 0],
        bounds[:, 1],
        # A singular matrix flattens a mesh: no inside left to measure depths in.
        np.array([mesh.convex for mesh in posed], dtype=bool)
        & np.isfinite(to_local).all(axis=(1, 2)),
        face_frame,
        face_bounds[:, 0],
        face_bounds[:, 1],
        tuple(posed),
        matrices[used, :3, :3],
        face_axes,
        reduce_short_axis(np.minimum, along_normal),
        reduce_short_axis(np.maximum, along_normal),
        np.abs(face_axes[:, 0]).max(axis=1) < _TURNED_NORMAL,
        np.array([mesh.outward for mesh in posed], dtype=np.float64)
        * np.sign(np.nan_to_num(np.linalg.det(matrices[used, :3, :3]))),
        reach,
        _ROUNDING * max(1.0, reach),
    )


def _joined_worlds(
    worlds: Sequence[_World], into: _World | None = None, fresh: Sequence[bool] | None = None
) -> _World:
    """One `_World` of the meshes of `worlds` (each posed on its own), one world's after
    the other's: the arrays, bit for bit, that posing all those meshes together gives.
    Each row is measured on its own mesh only; joining moves row numbers, pads the leaves'
    rows to the widest, and takes the largest `reach`.

    into, fresh: a world joined before from worlds of the same row counts (and leaf
    width), the same world objects where `fresh` (one per world) is False: only the
    worlds `fresh` are written, into its arrays, which the returned world shares (the
    one joined before is then stale)."""
    if len(worlds) == 1:
        return worlds[0]

    def joined(name: str, bases=None) -> np.ndarray:
        return _joined_rows(
            [getattr(world, name) for world in worlds],
            bases,
            into=None if into is None else getattr(into, name),
            fresh=fresh,
        )

    vertex_base = _starts(np.array([len(world.vertices) for world in worlds]))
    triangle_base = _starts(np.array([len(world.corners) for world in worlds]))
    mesh_base = _starts(np.array([len(world.meshes) for world in worlds]))
    reach = max(world.reach for world in worlds)
    fields = {
        name: joined(name)
        for name in (field.name for field in dataclasses.fields(_World))
        if name not in ("forest", "meshes", "reach", "slack")
    }
    fields.update(
        vertex_start=joined("vertex_start", vertex_base),
        triangle_start=joined("triangle_start", triangle_base),
        owner=joined("owner", mesh_base),
        vertex_part=joined("vertex_part", vertex_base),
        triangle_part=joined("triangle_part", vertex_base),
        forest=_joined_forests(
            [world.tree for world in worlds],
            triangle_base,
            None if into is None else into.tree,
            fresh,
        ),
        meshes=sum((world.meshes for world in worlds), ()),
        reach=reach,
        slack=_ROUNDING * max(1.0, reach),
    )
    return _World(**fields)


def _joined_rows(
    parts: Sequence[np.ndarray],
    bases=None,
    none: bool = False,
    into: np.ndarray | None = None,
    fresh: Sequence[bool] | None = None,
) -> np.ndarray:
    """`parts` one after the other; with `bases` (w,), each part's row numbers moved by
    its base, and with `none`, -1 (no row) kept as it is. With `into` (the parts joined
    before, of the same lengths), only the parts `fresh` are written, into it."""
    if bases is None:
        bases = np.zeros(len(parts), dtype=np.int64)

    def moved(part: np.ndarray, base) -> np.ndarray:
        if not base:
            return part
        return np.where(part >= 0, part + base, -1) if none else part + base

    if into is None:
        return np.concatenate([moved(part, base) for part, base in zip(parts, bases, strict=True)])
    start = 0
    for part, base, write in zip(parts, bases, fresh, strict=True):
        if write:
            into[start : start + len(part)] = moved(part, base)
        start += len(part)
    return into


def _joined_forests(
    forests: Sequence[_Forest],
    triangle_base: np.ndarray,
    into: _Forest | None = None,
    fresh: Sequence[bool] | None = None,
) -> _Forest:
    """`_Forest`s of worlds joined by `_joined_worlds`, whose triangles start at rows
    `triangle_base` (w,) of the joined world, as one (`into`, `fresh`: as
    `_joined_worlds` takes them)."""
    node_base = _starts(np.array([len(forest.lo) for forest in forests]))
    leaf_base = _starts(np.array([len(forest.leaf_triangles) for forest in forests]))
    width = max(forest.leaf_triangles.shape[1] for forest in forests)
    writes = [True] * len(forests) if fresh is None else fresh

    def joined(name: str, bases=None, none: bool = False, parts=None) -> np.ndarray:
        return _joined_rows(
            [getattr(forest, name) for forest in forests] if parts is None else parts,
            bases,
            none,
            None if into is None else getattr(into, name),
            fresh,
        )

    def widened(name: str, fill, bases=None) -> np.ndarray:
        """Leaf rows (L, ..., w') padded to `width` entries with `fill`, joined (those
        written only)."""
        parts = []
        for forest, write in zip(forests, writes, strict=True):
            values = getattr(forest, name)
            if write and values.shape[-1] < width:
                padded = np.full((*values.shape[:-1], width), fill, dtype=values.dtype)
                padded[..., : values.shape[-1]] = values
                values = padded
            parts.append(values)
        return joined(name, bases, True, parts)

    return _Forest(
        triangles=joined("triangles", triangle_base),
        root=joined("root", node_base),
        lo=joined("lo"),
        hi=joined("hi"),
        first=joined("first", triangle_base),
        count=joined("count"),
        corner=joined("corner"),
        child=joined("child", node_base, none=True),
        leaf=joined("leaf", leaf_base, none=True),
        leaf_triangles=widened("leaf_triangles", -1, triangle_base),
        leaf_lo=widened("leaf_lo", np.inf),
        leaf_hi=widened("leaf_hi", -np.inf),
    )


class PosedMeshes:
    """Large meshes posed in the world, kept from one `mesh_contacts` call to the next
    while their matrices stay the same bit for bit: a terrain or a slab under objects
    dragged in live mode is posed once, not again for every update that decides a pair
    on it (posing is the call's cost on a large mesh: a cube's one pair on a terrain of
    320,000 triangles took 240 ms a call, 210 ms of it posing the terrain). A kept mesh
    is joined to the call's others as posed afresh (`_joined_worlds`), so contacts are
    the same bit for bit.

    Meshes of at least `_KEPT_POSED_TRIANGLES` triangles are kept, by mesh object and
    matrix bits, once a call meets one at the pose the call before met it at (meshes
    that move at every call are posed with the others: posing each apart and joining
    them made 100 moving meshes of 4,600 triangles 1.15-1.3 times slower), up to
    `_KEPT_POSED_LIMIT` triangles in all (a posed mesh holds about 0.3 kB a triangle);
    `forget_unused` drops those no call used since it was last called. The last call's
    joined world is held too (as much again), and the next call of the same layout writes
    only its other meshes into it; a world `pose` returned is stale after the next call."""

    def __init__(self) -> None:
        # (id(mesh), matrix bytes) -> (mesh, its posed world); the mesh is held so
        # that no other takes its id.
        self._kept: dict[tuple[int, bytes], tuple[TriangleMesh, _World]] = {}
        # The poses of large meshes met since `forget_unused`, and before it.
        self._met: set[tuple[int, bytes]] = set()
        self._met_before: set[tuple[int, bytes]] = set()
        # The last call's joined world: the row counts of its parts, its kept parts
        # (None for the others), and the world, whose arrays the next call may write.
        self._joined: tuple[list[tuple], list[_World | None], _World] | None = None

    def __len__(self) -> int:
        return len(self._kept)

    def pose(self, meshes: Sequence[TriangleMesh], matrices: np.ndarray, used) -> _World:
        """`_pose` of meshes `used` (u,) by their matrices (n, 4, 4): each large mesh met
        at its pose before taken from here, or posed on its own and kept; the others
        posed together, run by run."""
        tokens = [
            (id(meshes[k]), matrices[k].tobytes())
            if len(meshes[k].triangles) >= _KEPT_POSED_TRIANGLES
            else None
            for k in used
        ]
        self._met.update(token for token in tokens if token is not None)
        kept = np.array(
            [token in self._kept or token in self._met_before for token in tokens], dtype=bool
        )
        if not kept.any():
            return _posed_together(meshes, matrices, used)
        # A run ends before and after each kept mesh.
        ends = np.flatnonzero(kept[1:] | kept[:-1]) + 1
        worlds, fresh = [], []
        for run, first in zip(np.split(used, ends), np.concatenate(([0], ends)), strict=True):
            if kept[first]:
                worlds.append(self._posed(meshes, matrices, run, tokens[first]))
            else:
                worlds.append(_posed_together(meshes, matrices, run))
            fresh.append(not kept[first])
        # Where the call before joined the same kept worlds, in the same places among
        # runs of the same sizes (a cube dragged on a terrain), only the other runs are
        # written into its joined arrays: copying a large mesh's into new ones at every
        # call was half of a drag step's time on 180,000 triangles.
        layout = [world.sizes() for world in worlds]
        last = self._joined
        if (
            last is not None
            and last[0] == layout
            and all(a is b or new for a, b, new in zip(last[1], worlds, fresh, strict=True))
        ):
            joined = _joined_worlds(worlds, last[2], fresh)
        else:
            joined = _joined_worlds(worlds)
        held = [None if new else world for world, new in zip(worlds, fresh, strict=True)]
        self._joined = (layout, held, joined)
        return joined

    def _posed(self, meshes: Sequence[TriangleMesh], matrices: np.ndarray, run, token) -> _World:
        """The world of the one mesh `run` (1,) at `token`, kept or posed and kept."""
        entry = self._kept.get(token)
        if entry is not None:  # the mesh it holds has that id, none other
            return entry[1]
        mesh = meshes[run[0]]
        world = _posed_together(meshes, matrices, run)
        if self._triangles() + len(mesh.triangles) <= _KEPT_POSED_LIMIT:
            self._kept[token] = (mesh, world)
        return world

    def _triangles(self) -> int:
        return sum(len(world.corners) for _, world in self._kept.values())

    def forget_unused(self) -> None:
        """Drop the posed meshes no `pose` met since the last call of this."""
        self._kept = {token: entry for token, entry in self._kept.items() if token in self._met}
        if self._joined is not None:
            # A joined world that holds a kept mesh dropped now is dropped with it: it
            # could not be reused (that mesh is posed anew when met again), and would
            # keep both in memory.
            held = {id(world) for _, world in self._kept.values()}
            if any(w is not None and id(w) not in held for w in self._joined[1]):
                self._joined = None
        self._met_before, self._met = self._met, set()


# A mesh's rays run along its own face frame only where it is at most this fraction as
# thin along that frame's thinnest axis as along its local axes: a wall of a building
# turned on its site and stored in world coordinates (0.3 m thick, its bounds along the
# stored axes metres wide). A turned cube or a UV sphere keeps its local axes.
_RAY_FRAME_THINNER = 0.5
# A ray grid has about this many cells per triangle (cells about square across the rays):
# a line looks up one cell, and the triangles listed there whose bounds hold it are
# tested. 2 rather than 0.5 (with at most 64 entries per triangle rather than 16): the
# same answers, rays in a third less time on the campus's long walls with windows (their
# first 8,000 pairs: 3.3 s against 5.5 s), a seventh less on AC11.
_GRID_CELLS_PER_TRIANGLE = 2
# At most this many cell entries per triangle: long thin triangles (a slab's faces fanned
# around its openings) lie over many cells, and such a mesh gets a coarser grid.
_GRID_ENTRIES_PER_TRIANGLE = 64


@dataclass(frozen=True, eq=False)
class RayGrid:
    """Where a closed mesh's rays for ray parity look up the triangles they may cross, in
    the mesh's local frame: built once per mesh (`TriangleMesh.ray_grid`), so that a
    rigid move only turns the query points into this frame.

    frame: (3, 3) float64 rows, orthonormal, local; the rays run along the last
        (`_ray_frame`): the local axis along which the mesh is thinnest, or its face
        frame's where it is much thinner there
    edges: (t, 3, 4) float64, each triangle's edges (corners 0-1, 1-2, 2-0) across the
        rays, in `frame`'s coordinates: the x and y of the lexicographically smaller
        end, then the other end's less those; canonical: (t, 3) bool, whether that end
        is the edge's start (`_line_crossings`)
    planes: (t, 6) float64, each triangle's first corner (x, y, z) and the normal of
        its corners' order (x, y, z), in `frame`'s coordinates
    origin, cell: (2,) float64, the grid's low corner across the rays (the first two
        coordinates) and its cells' sizes; shape: (2,) int64, its cells along each
    across: (t, 2, 2) float64, each triangle's low and high corner across the rays,
        grown by rounding slack (`_ROUNDING`): a line through the triangle passes
        between them
    cell_start: (c + 1,) int64, c = shape[0] * shape[1]; cell_triangles: (e,) int64:
        cell_triangles[cell_start[k]:cell_start[k + 1]] are the triangles, ascending,
        whose bounds `across` meet cell k (numbered along the first coordinate first). A
        point's cell is clip(floor((point - origin) / cell), 0, shape - 1), the same
        arithmetic as the triangles' bounds took, so a triangle over the point is always
        listed there.
    """

    frame: np.ndarray
    edges: np.ndarray
    canonical: np.ndarray
    planes: np.ndarray
    across: np.ndarray
    origin: np.ndarray
    cell: np.ndarray
    shape: np.ndarray
    cell_start: np.ndarray
    cell_triangles: np.ndarray


def _ray_grid(vertices, triangles, face_frame, bounds, face_bounds) -> RayGrid:
    """The `RayGrid` of a mesh's local vertices (v, 3) and triangles (t, 3), with its
    `TriangleMesh` face_frame (3, 3), bounds and face_bounds (2, 3)."""
    frame = _ray_frame(face_frame, bounds, face_bounds)
    turned = vertices @ frame.T
    slack = _ROUNDING * max(1.0, float(np.abs(turned).max(initial=0.0)))
    # Each vertex turned once: the triangles sharing it share its rounding, and each
    # crossing of a closed mesh counts once.
    corners = turned[triangles]
    lo, hi = corners[:, :, :2].min(axis=1) - slack, corners[:, :, :2].max(axis=1) + slack
    origin = lo.min(axis=0) if len(lo) else np.zeros(2)
    extent = hi.max(axis=0) - origin if len(hi) else np.zeros(2)
    wanted = max(1, int(len(triangles) * _GRID_CELLS_PER_TRIANGLE))
    while True:
        shape = _grid_shape(extent, wanted)
        cell = np.where(extent > 0, extent / shape, 1.0)
        first = _grid_index(lo, origin, cell, shape)
        span = _grid_index(hi, origin, cell, shape) - first + 1
        counts = span.prod(axis=1)
        if wanted == 1 or counts.sum() <= _GRID_ENTRIES_PER_TRIANGLE * len(triangles):
            break
        wanted //= 4
    triangle, offset = expand_runs(np.zeros(len(triangles), dtype=np.int64), counts)
    column = first[triangle, 0] + offset % span[triangle, 0]
    row = first[triangle, 1] + offset // span[triangle, 0]
    cell_of = row * shape[0] + column
    cell_triangles = triangle[np.argsort(cell_of, kind="stable")]
    cell_start = np.concatenate([[0], np.cumsum(np.bincount(cell_of, minlength=int(shape.prod())))])
    across = np.stack([lo, hi], axis=1)
    edges, canonical, planes = _ray_edges(corners)
    arrays = (frame, edges, canonical, planes, across, origin, cell, shape)
    for array in (*arrays, cell_start, cell_triangles):
        array.setflags(write=False)
    return RayGrid(*arrays, cell_start, cell_triangles)


def _ray_edges(corners: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """`RayGrid.edges`, `canonical` and `planes` of triangles `corners` (t, 3, 3) in
    a ray frame: what `_line_crossings` measures a line against, once per triangle
    rather than once per line that meets its bounds."""
    edges = np.empty((len(corners), 3, 4))
    canonical = np.empty((len(corners), 3), dtype=bool)
    for edge, (start, end) in enumerate(((0, 1), (1, 2), (2, 0))):
        u, v = corners[:, start], corners[:, end]
        canonical[:, edge] = (u[:, 0] < v[:, 0]) | ((u[:, 0] == v[:, 0]) & (u[:, 1] < v[:, 1]))
        low = np.where(canonical[:, edge, None], u, v)
        high = np.where(canonical[:, edge, None], v, u)
        edges[:, edge, :2] = low[:, :2]
        edges[:, edge, 2:] = high[:, :2] - low[:, :2]
    a = corners[:, 0]
    planes = np.concatenate([a, cross_rows(corners[:, 1] - a, corners[:, 2] - a)], axis=1)
    return edges, canonical, planes


def _grid_shape(extent: np.ndarray, wanted: int) -> np.ndarray:
    """Cells (2,) int64 along each side of a grid of `extent` (2,) with about `wanted`
    cells in all, about square; one cell across a side of no extent."""
    if (extent > 0).all():
        side = np.sqrt(extent.prod() / wanted)
        return np.clip(np.round(extent / side), 1, wanted).astype(np.int64)
    return np.where(extent > 0, wanted, 1).astype(np.int64)


def _grid_index(points: np.ndarray, origin, cell, shape) -> np.ndarray:
    """The cell (k, 2) int64 of points across the rays (k, 2, not NaN) in grids of low
    corners `origin`, cell sizes `cell` and cells `shape` ((2,) or (k, 2) each); points
    beyond the grid get its nearest cell. Monotone in each coordinate."""
    index = np.floor((points - origin) / cell)
    return np.maximum(np.minimum(index, shape - 1), 0).astype(np.int64)


def _ray_frame(face_frame: np.ndarray, bounds: np.ndarray, face_bounds: np.ndarray) -> np.ndarray:
    """A mesh's ray frame (3, 3), rows, orthonormal, local: its local axes, or the axes of
    its `face_frame` (3, 3 columns, orthonormal) where the mesh is thinner along those,
    by `_RAY_FRAME_THINNER`, than along its local axes; its vertices reach from `bounds`
    (2, 3) along the local axes and from `face_bounds` (2, 3) along the face frame's.
    Turned cyclically so that the last row is the axis the mesh is least spread along
    (ties to the earlier axis)."""
    frame, widths = np.eye(3), bounds[1] - bounds[0]
    face_widths = face_bounds[1] - face_bounds[0]
    if face_widths.min() < _RAY_FRAME_THINNER * widths.min():
        frame, widths = face_frame.T, face_widths
    return frame[(int(np.argmin(widths)) + np.arange(1, 4)) % 3]


def _unit_rows(vectors: np.ndarray) -> np.ndarray:
    """Vectors (..., 3) scaled to length 1 (0 where they are 0)."""
    return vectors / np.maximum(_length(vectors), np.finfo(float).tiny)[..., None]


def _inverse_affine(matrices: np.ndarray) -> np.ndarray:
    """The inverse of each affine map (u, 4, 4) as its top three rows (u, 3, 4); NaN
    for a singular one (a mesh flattened by a zero scale)."""
    frames = matrices[:, :3, :3]
    scale = np.abs(frames).max(axis=(1, 2), initial=0.0)
    regular = np.abs(np.linalg.det(frames)) > 1e-12 * cubed(scale)
    inverse = np.full((len(matrices), 3, 4), np.nan)
    if regular.any():
        inverse_frames = np.linalg.inv(frames[regular])
        inverse[regular, :, :3] = inverse_frames
        inverse[regular, :, 3] = -(inverse_frames @ matrices[regular, :3, 3, None])[:, :, 0]
    return inverse


def _in_local_bounds(world: _World, points: np.ndarray, target: np.ndarray) -> np.ndarray:
    """Whether each point (k, 3) lies in the local box and the face box of its world mesh
    `target` (k,) posed, or within a millionth of the box's size of them: (k,) bool. A
    point inside a mesh lies in its vertices' boxes, which hug a turned mesh far more
    closely than its world bounds; the margin keeps rounding from ever leaving one out
    (True where the mesh's matrix is singular)."""
    local = _to_local(world, points, target)
    inside = _within(local, take_rows(world.local_lo, target), take_rows(world.local_hi, target))
    # And in the box along its own faces, which hugs a mesh turned in the coordinates it
    # is stored in (a building turned on its site, in world coordinates).
    frames = take_rows(world.face_frame, target)
    along = np.stack([dot_rows(local, frames[:, :, axis]) for axis in range(3)], axis=1)
    return inside & _within(
        along, take_rows(world.face_lo, target), take_rows(world.face_hi, target)
    )


def _to_local(world: _World, points: np.ndarray, target: np.ndarray) -> np.ndarray:
    """World points (k, 3) in the local coordinates of their world meshes `target` (k,):
    (k, 3), NaN where the mesh's matrix is singular."""
    to_local = take_rows(world.to_local, target)
    local = to_local[:, :, 3].copy()
    for axis in range(3):
        local += points[:, axis, None] * to_local[:, :, axis]
    return local


def _within(points: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """Whether each point (k, 3) lies in its box lo, hi (k, 3), or within a millionth of
    the box's size (or of the point's largest |coordinate|) of it: (k,) bool; True where
    the point is NaN."""
    margin = 1e-6 * np.maximum(
        reduce_short_axis(np.maximum, hi - lo), reduce_short_axis(np.maximum, np.abs(points))
    )
    outside = (points < lo - margin[:, None]) | (points > hi + margin[:, None])
    return ~reduce_short_axis(np.logical_or, outside)


def _boxes_overlap(lo_a, hi_a, lo_b, hi_b, grow) -> np.ndarray:
    """Whether boxes a and b (k, 3) overlap once a is grown by `grow` (scalar): (k,)."""
    return reduce_short_axis(np.logical_and, (lo_a - grow <= hi_b) & (lo_b <= hi_a + grow))


def _chunks(counts: np.ndarray, limit: int):
    """Slices of consecutive items whose counts (k,) sum to at most `limit` (or one
    item when it alone exceeds it)."""
    ends = np.cumsum(counts)
    start = 0
    while start < len(counts):
        base = ends[start - 1] if start else 0
        stop = max(int(np.searchsorted(ends, base + limit, side="right")), start + 1)
        yield slice(start, stop)
        start = stop


def _axis_gaps(lo_a, hi_a, lo_b, hi_b) -> np.ndarray:
    """How far apart boxes a and b (k, 3 bounds each) lie along each axis: (k, 3),
    negative where they overlap along it."""
    return np.maximum(lo_a - hi_b, lo_b - hi_a)


def _gap(lo_a, hi_a, lo_b, hi_b) -> np.ndarray:
    """The distance between boxes a and b (k, 3 bounds each): (k,), 0 where they meet."""
    return _length(np.maximum(_axis_gaps(lo_a, hi_a, lo_b, hi_b), 0.0))


def _near_boxes(lo_a, hi_a, lo_b, hi_b, grow) -> tuple[np.ndarray, np.ndarray]:
    """The boxes a and b (k, 3 bounds each) no farther apart than `grow` (scalar or (k,))
    along any axis, and their distance: (rows (p,), distance (p,), 0 where they meet)."""
    apart = _axis_gaps(lo_a, hi_a, lo_b, hi_b)
    keep = np.flatnonzero(reduce_short_axis(np.logical_and, apart <= np.reshape(grow, (-1, 1))))
    return keep, _length(np.maximum(take_rows(apart, keep), 0.0))


def _lower_to_run_minima(values: np.ndarray, keys: np.ndarray, candidates: np.ndarray) -> None:
    """values[k] = min(values[k], candidates[keys == k]) for each key, in place: values
    (n,), keys (k,) sorted, candidates (k,). As `np.minimum.at` gives it, a few times
    faster (a minimum per run of equal keys, then one per key)."""
    if not len(keys):
        return
    starts = np.flatnonzero(run_starts(keys))
    least = np.minimum.reduceat(candidates, starts)
    at = keys[starts]
    values[at] = np.minimum(values[at], least)


def _pair_nodes(tree: _Forest, a: np.ndarray, b: np.ndarray):
    """The node pairs one level down from node pairs a, b (k,) of which at least one is
    not a leaf: each inner node replaced by its two children, a leaf kept as it is
    (row (p,) into a and b, node of a (p,), node of b (p,))."""
    split_a, split_b = tree.child[a] >= 0, tree.child[b] >= 0
    per_b = np.where(split_b, 2, 1)
    row, position = expand_runs(np.zeros(len(a), dtype=np.int64), np.where(split_a, 2, 1) * per_b)
    which_a, which_b = position // per_b[row], position % per_b[row]
    return (
        row,
        np.where(split_a[row], tree.child[a[row]] + which_a, a[row]),
        np.where(split_b[row], tree.child[b[row]] + which_b, b[row]),
    )


def _candidates(world: _World, slots: np.ndarray, grow: np.ndarray):
    """Candidate triangle pairs of the pairs of world meshes `slots` (m, 2): those whose
    bounds come within their pair's `grow` (m,) of each other (per axis) and within an
    upper bound of the pair's distance: (pair (k,), triangle of i (k,), triangle of j
    (k,), the distance of their bounds (k,)), sorted.

    The two meshes' trees are walked together, one level at a time for the node pairs of
    every mesh pair at once. A node pair whose bounds are farther apart than `grow`, or
    than the distance of two vertices met in the pair's nodes so far, holds no candidate
    that can matter: crossing and meeting triangles have bounds that meet, and the
    closest ones bounds no farther apart than any two vertices."""
    tree = world.tree
    slack = world.slack
    upper = np.full(len(slots), np.inf)
    pair = np.arange(len(slots))
    a, b = tree.root[slots[:, 0]], tree.root[slots[:, 1]]
    leaves = [(np.zeros(0, dtype=np.int64),) * 3]
    while len(pair):
        lo_a, hi_a = take_rows(tree.lo, a), take_rows(tree.hi, a)
        lo_b, hi_b = take_rows(tree.lo, b), take_rows(tree.hi, b)
        keep, gap = _near_boxes(lo_a, hi_a, lo_b, hi_b, grow[pair])
        pair, a, b = pair[keep], a[keep], b[keep]
        # `pair` stays sorted: filtered, and each node pair's children follow it in turn.
        _lower_to_run_minima(
            upper, pair, _length(take_rows(tree.corner, a) - take_rows(tree.corner, b))
        )
        keep = gap <= upper[pair] + slack
        pair, a, b = pair[keep], a[keep], b[keep]
        done = (tree.child[a] < 0) & (tree.child[b] < 0)
        leaves.append((pair[done], a[done], b[done]))
        row, a, b = _pair_nodes(tree, a[~done], b[~done])
        pair = pair[~done][row]
    pair, a, b = (np.concatenate(column) for column in zip(*leaves, strict=True))
    found = [(np.zeros(0, dtype=np.int64),) * 3 + (np.zeros(0),)]
    # Leaf pairs are expanded a group at a time so that the triangle rows stay bounded.
    for part in _chunks(tree.count[a] * tree.count[b], _CHUNK_ROWS * 32):
        rows, first, second = _leaf_triangles(world, grow, pair[part], a[part], b[part])
        lo_a, hi_a = take_rows(world.lo, first), take_rows(world.hi, first)
        lo_b, hi_b = take_rows(world.lo, second), take_rows(world.hi, second)
        keep, gap = _near_boxes(lo_a, hi_a, lo_b, hi_b, grow[rows])
        rows, first, second = rows[keep], first[keep], second[keep]
        keep = gap <= upper[rows] + slack
        rows, first, second, gap = rows[keep], first[keep], second[keep], gap[keep]
        if len(rows) >= _FACE_TEST_ROWS:
            keep = ~_apart_along_faces(world, slots, rows, first, second, grow[rows] + slack)
            rows, first, second, gap = rows[keep], first[keep], second[keep], gap[keep]
        found.append((rows, first, second, gap))
    pair, first, second, gap = (np.concatenate(column) for column in zip(*found, strict=True))
    # The order of a plain product, so that ties between equal distances are decided
    # the same way whatever the trees.
    triangles = len(world.corners)
    order = lexicographic_order((pair, first, second), (len(slots), triangles, triangles))
    return pair[order], first[order], second[order], gap[order]


def _apart_along_faces(world: _World, slots: np.ndarray, pair, first, second, grow):
    """Whether triangles `first` and `second` (k,) of the pairs `pair` (k,) of world meshes
    `slots` (m, 2) are farther apart than `grow` (scalar or (k,)) along either mesh's face
    normal (`_World.face_axes`): (k,) bool.

    Such triangles neither meet nor cross, nor come within `grow`, whatever their world
    bounds say. In a building turned on its site and stored in world coordinates, a
    wall's long triangles have world bounds as wide as the wall is long; along the
    wall's own normal they are as thin as the wall (on 20,000 turned elements, 7 in 10
    of the triangle pairs whose world bounds met). A normal along a world axis is left
    out: the world bounds are as tight along it."""
    apart = np.zeros(len(first), dtype=bool)
    grow = np.broadcast_to(grow, (len(first),))
    for side, mine, other in ((0, first, second), (1, second, first)):
        rows = np.flatnonzero(world.turned_normal[slots[pair, side]])
        lo, hi = _partner_extents(
            world, slots[:, side], slots[:, 1 - side], pair[rows], other[rows]
        )
        apart[rows] |= (world.normal_lo[mine[rows]] - hi > grow[rows]) | (
            lo - world.normal_hi[mine[rows]] > grow[rows]
        )
    return apart


def _partner_extents(
    world: _World, normal_of: np.ndarray, triangles_of: np.ndarray, pair, triangle
):
    """The extents (lo, hi (k,)) of triangles `triangle` (k,) of the world meshes
    `triangles_of[pair]` along the face normals of the world meshes `normal_of[pair]`
    (`normal_of`, `triangles_of` (m,), `pair` (k,)).

    A pair with at least as many rows as its mesh `triangles_of` has triangles gets them
    from its triangles' extents, each computed once (in a sweep of turned spheres, for
    about 9 rows each); the others' rows are computed alone. Each extent is the same
    dot products and least and largest either way."""
    count = world.triangle_count[triangles_of]
    rows_of = np.bincount(pair, minlength=len(normal_of))
    whole = (rows_of > 0) & (rows_of >= count)
    listed = np.flatnonzero(whole)
    source_pair, source = expand_runs(world.triangle_start[triangles_of[listed]], count[listed])
    shift = np.zeros(len(normal_of), dtype=np.int64)
    shift[listed] = _starts(count[listed]) - world.triangle_start[triangles_of[listed]]
    at = shift[pair] + triangle
    alone = np.flatnonzero(~whole[pair])
    at[alone] = len(source) + np.arange(len(alone))
    mesh = normal_of[np.concatenate([listed[source_pair], pair[alone]])]
    corners = take_rows(world.corners, np.concatenate([source, triangle[alone]]))
    along = dot_rows(corners, take_rows(world.face_axes, mesh)[:, None, 0])
    lo, hi = reduce_short_axis(np.minimum, along), reduce_short_axis(np.maximum, along)
    return lo[at], hi[at]


def _near_box(tree: _Forest, leaf: np.ndarray, lo: np.ndarray, hi: np.ndarray):
    """The triangles of leaves `leaf` (k,) whose bounds (`_Forest.leaf_lo`, `leaf_hi`) meet
    boxes lo, hi (k, 3): (row (p,) into leaf, triangle (p,)), sorted by row, then in tree
    order."""
    rows = tree.leaf[leaf]
    near = take_rows(tree.leaf_lo, rows) <= hi[:, :, None]
    near &= lo[:, :, None] <= take_rows(tree.leaf_hi, rows)
    row, column = np.nonzero(reduce_short_axis(np.logical_and, near, 1))
    return row, tree.leaf_triangles[rows[row], column]


def _leaf_triangles(world: _World, grow: np.ndarray, pair, a, b):
    """The triangle pairs of leaf pairs a, b (k,) of mesh pairs `pair` (k,), each
    triangle's bounds meeting the other leaf's bounds grown by the mesh pair's `grow`
    (one per mesh pair): (pair (p,), triangle of a (p,), of b (p,))."""
    tree = world.tree
    # The leaf's box grown, not its triangles' bounds: a (k, 3) sum per leaf pair.
    margin = grow[pair][:, None]
    lo_a, hi_a = take_rows(tree.lo, a) - margin, take_rows(tree.hi, a) + margin
    lo_b, hi_b = take_rows(tree.lo, b) - margin, take_rows(tree.hi, b) + margin
    row_a, triangle_a = _near_box(tree, a, lo_b, hi_b)
    row_b, triangle_b = _near_box(tree, b, lo_a, hi_a)
    count_b = np.bincount(row_b, minlength=len(pair))
    entry, position = expand_runs(_starts(count_b)[row_a], count_b[row_a])
    return pair[row_a[entry]], triangle_a[entry], triangle_b[position]


class _Best:
    """Per pair, the smallest value seen so far and its two witness points."""

    def __init__(self, count: int, initial: float):
        self.value = np.full(count, initial)
        self.first = np.full((count, 3), np.nan)
        self.second = np.full((count, 3), np.nan)

    def offer(self, pair, value, first, second) -> tuple[np.ndarray, np.ndarray]:
        """Rows (k,) of pairs with their values and witnesses (k, 3). Returns the pairs
        whose best this replaced (r,) and the rows (r,) that replaced it, so that a
        caller can keep more of the row beside it."""
        order = np.lexsort((value, pair))
        pair = pair[order]
        lead = run_starts(pair)
        rows = order[lead]
        pair = pair[lead]
        better = value[rows] < self.value[pair]
        pair, rows = pair[better], rows[better]
        self.value[pair] = value[rows]
        self.first[pair] = take_rows(first, rows)
        self.second[pair] = take_rows(second, rows)
        return pair, rows

    def halves(self) -> tuple[_Best, _Best]:
        """The first and second halves of its pairs, each a `_Best` (a copy)."""
        count = len(self.value) // 2
        first, second = _Best(count, 0.0), _Best(count, 0.0)
        for part, rows in ((first, slice(None, count)), (second, slice(count, None))):
            part.value, part.first, part.second = (
                self.value[rows].copy(),
                self.first[rows].copy(),
                self.second[rows].copy(),
            )
        return first, second


def _upper_bounds(world: _World, count: int, pair, first, second) -> np.ndarray:
    """An upper bound of each pair's distance (count,): its candidates' nearest
    centroids (+inf for a pair without candidates); `pair` (k,) sorted, as
    `_candidates` gives it."""
    upper = np.full(count, np.inf)
    _lower_to_run_minima(
        upper, pair, _length(take_rows(world.centroid, first) - take_rows(world.centroid, second))
    )
    return upper


def _first_least(groups: np.ndarray, values: np.ndarray) -> np.ndarray:
    """For each run of equal entries of sorted `groups` (k,), the position of its first
    entry with the run's least of `values` (k,), runs in order: as the first of each
    group after `np.lexsort((values, groups))`, without the sort."""
    if not len(groups):
        return np.zeros(0, dtype=np.int64)
    starts = np.flatnonzero(run_starts(groups))
    least = np.fmin.reduceat(values, starts)
    at_least = np.flatnonzero(values == np.repeat(least, np.diff(np.append(starts, len(groups)))))
    return at_least[run_starts(groups[at_least])]


def _seed_distances(world: _World, count: int, pair, first, second, lower, rows):
    """Each pair's distance bound (count,): the exact distance of its candidate among
    `rows` (k,) with the least lower bound `lower` (the first in order among equals),
    mostly the nearest one (+inf for a pair without one), so that the candidates (pair,
    first, second) whose lower bound exceeds it can be left out; and that candidate
    (count,) (-1 where none)."""
    seeds = rows[_first_least(pair[rows], lower[rows])]
    # One seed a pair: the least distance offered is the seed's.
    measured = _Best(count, np.inf)
    _offer_distances(world, measured, pair, first, second, seeds)
    seed = np.full(count, -1)
    seed[pair[seeds]] = seeds
    return measured.value, seed


def _triangle_stage(world: _World, slots: np.ndarray, grow: np.ndarray):
    """Minimum distance and deepest crossing of each pair of world meshes `slots` (m, 2),
    measured up to its `grow` (m,):
    (`_Best` of the distance, `_Best` of minus the depth (a), a point (m, 3) where the
    two triangles of that deepest crossing meet (NaN where none crosses), and a point
    (m, 3) of the widest area the pair's meshes share with faces facing the same way,
    NaN where they share none, `_faces_on_faces`).

    A first bound of each pair's distance, the exact distance of its candidate whose
    bounds are nearest, leaves out the candidates whose bounds are farther apart. Then
    the plane tests of the others: pairs where some triangles meet are at distance 0 and
    need nothing more. The exact distance is then computed only for the other pairs'
    candidates that the planes and bounds do not put beyond the exact distance of the
    candidate with the least of those lower bounds: first for each pair's
    `_CONTACT_PROBES` candidates of least lower bound, then, while the pair's surfaces
    are more than the contact epsilon apart, in rounds for those whose lower bound is
    below the distance found so far."""
    nearest, deepest = _Best(len(slots), np.inf), _Best(len(slots), 0.0)
    deepest_meeting = np.full((len(slots), 3), np.nan)
    pair, first, second, lower = _candidates(world, slots, grow)
    none = np.zeros(0, dtype=np.int64)
    shared = [(none, none, none, np.zeros(0))]
    outward = world.outward[world.owner]
    # The bounds are rounded differently from the distances: a triangle pair touching at
    # distance 0 may get a lower bound of 1e-16, and it must stay a candidate.
    slack = world.slack
    # A pair whose candidates' bounds all lie within the slack keeps them all, whatever
    # its bound (>= 0, as `grow` is): its seed is not measured (most of a live update's).
    seeded = np.zeros(len(slots), dtype=bool)
    seeded[pair[~(lower <= slack)]] = True
    bound, _ = _seed_distances(
        world, len(slots), pair, first, second, lower, np.flatnonzero(seeded[pair])
    )
    keep = lower <= np.minimum(bound[pair], grow[pair]) + slack
    pair, first, second, lower = pair[keep], first[keep], second[keep], lower[keep]
    upper = _upper_bounds(world, len(slots), pair, first, second)
    for part in _chunks(np.ones(len(pair), dtype=np.int64), _CHUNK_ROWS * 4):
        a, b = take_rows(world.corners, first[part]), take_rows(world.corners, second[part])
        normal_a = take_rows(world.unit_normal, first[part])
        normal_b = take_rows(world.unit_normal, second[part])
        rows = pair[part]
        lo = np.minimum(take_rows(world.lo, first[part]), take_rows(world.lo, second[part]))
        hi = np.maximum(take_rows(world.hi, first[part]), take_rows(world.hi, second[part]))
        epsilon = _epsilon(_least_magnitude(lo, hi))
        tests = _plane_tests(a, b, normal_a, normal_b, epsilon)
        lower[part] = np.maximum(lower[part], tests.lower)
        width = _faces_on_faces(
            tests, a, b, normal_a, normal_b, (outward[first[part]], outward[second[part]]), epsilon
        )
        on = np.flatnonzero(width > -np.inf)
        shared.append((rows[on], first[part][on], second[part][on], width[on]))
        zero = np.zeros(int(tests.meet.sum()))
        meeting_point = take_rows(tests.meeting_point, tests.meet)
        nearest.offer(rows[tests.meet], zero, meeting_point, meeting_point)
        cross = np.flatnonzero(tests.crossing)
        measured, depth, deep_a, deep_b = _deepest_crossings(
            world, rows[cross], cross, (a, b, normal_a, normal_b), tests, first[part], second[part]
        )
        replaced, chosen = deepest.offer(rows[cross][measured], -depth, deep_a, deep_b)
        deepest_meeting[replaced] = take_rows(tests.meeting_point, cross[measured[chosen]])
    # A candidate tied with the nearest centroids (faces of copies facing each other) may
    # have a lower bound a few units in the last place above them: with the slack, the
    # nearest candidate stays.
    unmet = np.flatnonzero((nearest.value[pair] > 0) & (lower <= upper[pair] + slack))
    bound, seed = _seed_distances(world, len(slots), pair, first, second, lower, unmet)
    # Behind a candidate at distance 0 none comes closer, nor first among equals.
    rest = unmet[
        (lower[unmet] <= np.minimum(bound[pair[unmet]], grow[pair[unmet]]) + slack)
        & ((bound[pair[unmet]] > 0) | (unmet <= seed[pair[unmet]]))
    ]
    # Each pair's first candidates by lower bound, then the others of the pairs whose
    # surfaces these leave apart: where they touch, every distance within the contact
    # epsilon decides alike, and most candidates of touching elements lie within it.
    rest = rest[np.lexsort((lower[rest], pair[rest]))]
    rank = ranks_in_runs(pair[rest])
    _offer_beyond_edges(world, nearest, pair, first, second, rest[rank < _CONTACT_PROBES], grow)
    rest, rank = rest[rank >= _CONTACT_PROBES], rank[rank >= _CONTACT_PROBES]
    limit = _CONTACT_PROBES
    while len(rest):
        touching = nearest.value <= contact_epsilon(np.nan_to_num(nearest.first))
        # A candidate whose lower bound is not below the distance found cannot beat it,
        # but for the rounding of its bound (a few units in the last place of the
        # coordinates): faces facing each other across a gap have many such candidates,
        # each tied.
        keep = ~touching[pair[rest]] & (lower[rest] < nearest.value[pair[rest]])
        rest, rank = rest[keep], rank[keep]
        limit *= _ROUND_GROWTH
        now = rank < limit
        _offer_beyond_edges(world, nearest, pair, first, second, rest[now], grow)
        rest, rank = rest[~now], rank[~now]
    # Each pair's widest shared area: a point in it is the clash's point where nothing
    # else gives one (a copy pasted in place), not a corner where the surfaces meet.
    shared_pair, shared_first, shared_second, width = (
        np.concatenate(column) for column in zip(*shared, strict=True)
    )
    widest = np.lexsort((-width, shared_pair))
    widest = widest[run_starts(shared_pair[widest])]
    shared_point = np.full((len(slots), 3), np.nan)
    shared_point[shared_pair[widest]] = _shared_point(
        take_rows(world.corners, shared_first[widest]),
        take_rows(world.corners, shared_second[widest]),
    )
    return nearest, deepest, deepest_meeting, shared_point


def _deepest_crossings(world: _World, pair, cross, corners_and_normals, tests, first, second):
    """`_crossing_depth` of the crossing triangle pairs `cross` (k,) (rows of the plane
    tests `tests` of triangles first, second, with their corners and unit normals
    (a, b, normal_a, normal_b)) of mesh pairs `pair` (k,), sorted, measured only where
    they may be their pair's deepest: (measured (j,) ascending positions in `cross`,
    depth (j,), deep_first (j, 3), deep_second (j, 3)).

    A crossing's depth is at most its reach (`_reach`, the shallower of the two pokes
    through the other's plane, from the plane tests' signed distances): each pair's
    crossing of greatest reach is measured first, and then only the crossings whose
    reach is not below that depth (of a sphere pair's thousand crossings, a few).
    Those left out are strictly shallower than a measured one, so the pair's deepest,
    the first of equals in order, is the same."""

    def measure(rows):
        return _crossing_depth(
            *(
                take_rows(values, cross[rows])
                for values in (*corners_and_normals, tests.signed_first, tests.signed_second)
            ),
            (
                take_rows(world.smooth_edges, first[cross[rows]]),
                take_rows(world.smooth_edges, second[cross[rows]]),
            ),
        )

    reach = np.minimum(
        _reach(take_rows(tests.signed_first, cross)), _reach(take_rows(tests.signed_second, cross))
    )
    probe = _first_least(pair, -reach)
    probed = measure(probe)
    floor = np.full(int(pair.max(initial=-1)) + 1, -np.inf)
    floor[pair[probe]] = probed[0]
    # Not `reach >= floor`: a NaN depth or reach leaves nothing out.
    wanted = ~(reach < floor[pair])
    wanted[probe] = False
    others = np.flatnonzero(wanted)
    if not len(others):
        return (probe, *probed)
    measured = np.concatenate([probe, others])
    order = np.argsort(measured, kind="stable")
    return (
        measured[order],
        *(
            np.concatenate([done, more])[order]
            for done, more in zip(probed, measure(others), strict=True)
        ),
    )


def _offer_beyond_edges(world: _World, nearest: _Best, pair, first, second, rows, grow):
    """`_offer_distances` of the candidates `rows` (k,) that `_beyond_edges` does not put
    beyond both their pair's `grow` (one per pair) and the distance found so far.

    A face split in two gives each of its triangles the whole face's bounds: the other
    mesh's triangles near the face's other half pass every test before, though they lie
    beyond an edge of this one (on the FZK-Haus, 26 k of the 27 k exact distances
    measured, most of them over a metre, most of those between railings and the rafters
    above them, which `_face_axes_overlap` now sets aside). Tested here, on the
    candidates about to be measured only: most candidates of touching pairs never are."""
    first_corners = take_rows(world.corners, first[rows])
    second_corners = take_rows(world.corners, second[rows])
    # Both ways in one call (each row is computed alone).
    both = _beyond_edges(
        np.concatenate([first_corners, second_corners]),
        np.concatenate([second_corners, first_corners]),
    )
    beyond = np.fmax(both[: len(rows)], both[len(rows) :])
    near = ~(beyond > np.minimum(nearest.value[pair[rows]], grow[pair[rows]]) + world.slack)
    _offer_distances(world, nearest, pair, first, second, rows[near])


def _offer_distances(world: _World, nearest: _Best, pair, first, second, rows) -> None:
    """Offer `nearest` the exact distances of the candidates `rows` (k,) of (pair,
    first, second), with their witnesses."""
    for part in _chunks(np.ones(len(rows), dtype=np.int64), _CHUNK_ROWS):
        chosen = rows[part]
        distance, point_a, point_b = _triangle_distance(
            take_rows(world.corners, first[chosen]), take_rows(world.corners, second[chosen])
        )
        nearest.offer(pair[chosen], distance, point_a, point_b)


def _line_crossings(points: np.ndarray, rays: _Rays, triangle: np.ndarray):
    """Whether the vertical line through each point (k, 3) (its x and y) crosses its
    triangle (k,) of `rays`, and the z of the triangle's plane there where it does:
    (hit (k,) bool, level (h,) of the h hits).

    A ray through an edge or a vertex in the xy projection is decided as if the point
    were moved by an infinitesimal (-delta, 1) (delta << 1): an edge is evaluated from
    its lexicographically smaller end, so the triangles on either side of a shared edge
    get exactly opposite answers and each crossing of a closed mesh counts once.
    """
    edges = take_rows(rays.edges, triangle)
    canonical = take_rows(rays.canonical, triangle)
    same_side = []
    for edge in range(3):
        low_x, low_y, run_x, run_y = (edges[:, edge, column] for column in range(4))
        value = run_x * (points[:, 1] - low_y) - run_y * (points[:, 0] - low_x)
        same_side.append((value >= 0) == canonical[:, edge])
    covered = (same_side[0] == same_side[1]) & (same_side[1] == same_side[2])
    rows = np.flatnonzero(covered)
    planes = take_rows(rays.planes, triangle[rows])
    # A triangle seen edge-on along the line (normal's z 0) is crossed by none.
    upright = planes[:, 5] != 0
    hit, planes = rows[upright], take_rows(planes, upright)
    level = (
        planes[:, 2]
        - (
            planes[:, 3] * (points[hit, 0] - planes[:, 0])
            + planes[:, 4] * (points[hit, 1] - planes[:, 1])
        )
        / planes[:, 5]
    )
    crossed = np.zeros(len(points), dtype=bool)
    crossed[hit] = True
    return crossed, level


def _point_candidates(world: _World, lo, hi, target, centres=None) -> tuple[np.ndarray, np.ndarray]:
    """Triangles of world meshes `target` (k,) whose bounds meet boxes lo, hi (k, 3):
    (box (p,), triangle (p,)) in no particular order, by walking each box down its
    mesh's tree one level at a time for all boxes at once.

    With `centres` (k, 3), points in their boxes, only the triangles that may be
    nearest to the centre among those found (and those tied with it) are sure to be
    kept: a node lying wholly in the box holds triangles found, so its first corner
    bounds that distance, and nodes whose bounds lie beyond it are left."""
    tree = world.tree
    box, node = np.arange(len(lo)), tree.root[target]
    bound = np.full(len(lo), np.inf)
    slack = world.slack
    found_boxes, found_nodes = [np.zeros(0, dtype=np.int64)], [np.zeros(0, dtype=np.int64)]
    while len(box):
        box_lo, box_hi = take_rows(lo, box), take_rows(hi, box)
        node_lo, node_hi = take_rows(tree.lo, node), take_rows(tree.hi, node)
        keep = np.flatnonzero(_boxes_overlap(box_lo, box_hi, node_lo, node_hi, 0.0))
        box, node = box[keep], node[keep]
        if centres is not None:
            box_lo, box_hi = take_rows(box_lo, keep), take_rows(box_hi, keep)
            node_lo, node_hi = take_rows(node_lo, keep), take_rows(node_hi, keep)
            within = np.flatnonzero(
                reduce_short_axis(np.logical_and, (node_lo >= box_lo) & (node_hi <= box_hi))
            )
            corner = take_rows(tree.corner, node[within])
            centre = take_rows(centres, box)
            # `box` stays sorted, as `pair` in `_candidates`.
            _lower_to_run_minima(bound, box[within], _length(corner - take_rows(centre, within)))
            keep = _gap(node_lo, node_hi, centre, centre) <= bound[box] + slack
            box, node = box[keep], node[keep]
        leaf = tree.child[node] < 0
        found_boxes.append(box[leaf])
        found_nodes.append(node[leaf])
        box = np.repeat(box[~leaf], 2)
        node = np.repeat(tree.child[node[~leaf]], 2) + np.tile([0, 1], int((~leaf).sum()))
    box, node = np.concatenate(found_boxes), np.concatenate(found_nodes)
    row, triangle = _near_box(tree, node, take_rows(lo, box), take_rows(hi, box))
    return box[row], triangle


def _nearest_on_meshes(
    world: _World, points, target, upper, enough, close
) -> tuple[_Best, np.ndarray]:
    """Closest point of world meshes `target` (k,) to points (k, 3), each known to be
    at most `upper` (k,) away: (`_Best` per point (distance, the point, the closest
    point), exact (k,) bool). A point for which a triangle within `enough` (k,) turns up
    is left there: its distance is then at most `enough` but maybe not exact.

    Searched first within `close` (k,) of each point, then within a radius growing from
    the meshes' typical triangle size, so that a deep point does not meet every triangle
    within its (loose) upper bound: a triangle at most r away has bounds within r of the
    point, so a point whose nearest found triangle is within the radius searched is
    done. Most points found inside by their rays lie on the surface (a window frame's
    corners on its opening's reveals, along which the wall's rays run): the few
    triangles within `close` of them settle them."""
    nearest = _Best(len(points), np.inf)
    meshes, _ = _meshes_of(world, target)
    _, triangles = expand_runs(world.triangle_start[meshes], world.triangle_count[meshes])
    sizes = reduce_short_axis(
        np.maximum, take_rows(world.hi, triangles) - take_rows(world.lo, triangles)
    )
    typical = float(np.median(sizes)) if len(sizes) else 0.0
    radius = np.minimum(upper, close)
    todo = np.arange(len(points))
    exact = np.zeros(len(points), dtype=bool)
    slack = world.slack
    while len(todo):
        centres = take_rows(points, todo)
        point, triangle = _point_candidates(
            world,
            centres - radius[todo, None],
            centres + radius[todo, None],
            target[todo],
            centres,
        )
        # A corner of a triangle found bounds the distance to the nearest one found; the
        # triangles whose bounds lie beyond it cannot be that one, nor tie with it.
        seen_from = take_rows(centres, point)
        bound = np.full(len(todo), np.inf)
        corner = take_rows(world.corners, triangle)[:, 0]
        np.minimum.at(bound, point, _length(corner - seen_from))
        lower = _gap(
            take_rows(world.lo, triangle), take_rows(world.hi, triangle), seen_from, seen_from
        )
        keep = np.flatnonzero(lower <= bound[point] + slack)
        # The order of the triangles, so that ties are decided the same way whatever
        # the tree.
        keep = keep[
            lexicographic_order((point[keep], triangle[keep]), (len(todo), len(world.corners)))
        ]
        point, triangle = point[keep], triangle[keep]
        for part in _chunks(np.ones(len(point), dtype=np.int64), _CHUNK_ROWS * 4):
            seen_from = take_rows(centres, point[part])
            closest = closest_on_triangles(seen_from, take_rows(world.corners, triangle[part]))
            nearest.offer(todo[point[part]], _length(seen_from - closest), seen_from, closest)
        exact[todo] = (nearest.value[todo] <= radius[todo]) | (radius[todo] >= upper[todo])
        # Past `close`, as from the typical radius: the first round leaves none for `enough`.
        todo = todo[
            ~exact[todo] & ((nearest.value[todo] > enough[todo]) | (radius[todo] <= close[todo]))
        ]
        radius[todo] = np.minimum(np.maximum(4.0 * radius[todo], typical), upper[todo])
    return nearest, exact


def _meshes_of(world: _World, target: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The world meshes named in `target` (k,), ascending (g,), and each entry's place
    among them (k,): `np.unique(target, return_inverse=True)` by marking the meshes
    instead of sorting the entries."""
    named = np.zeros(len(world.meshes), dtype=bool)
    named[target] = True
    return np.flatnonzero(named), (np.cumsum(named) - 1)[target]


def _distinct_rows(*columns: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The rows made of `columns` (k,) each, grouped where equal: the index of each
    group's first row (g,), groups in the rows' lexicographic order, and each row's group
    (k,); as `np.unique(..., axis=0, return_index=True, return_inverse=True)` gives them,
    about three times faster (a NaN is equal to nothing, as there)."""
    order = np.lexsort(columns[::-1])
    same = np.zeros(len(order), dtype=bool)  # the row equals the one before it
    same[1:] = True
    for column in columns:
        ordered = column[order]
        same[1:] &= ordered[1:] == ordered[:-1]
    starts = ~same
    group = np.empty(len(order), dtype=np.int64)
    group[order] = np.cumsum(starts) - 1
    return order[starts], group


def _parity_inside(world: _World, points, target) -> tuple[np.ndarray, np.ndarray]:
    """Ray parity of points (k, 3) in closed world meshes `target` (k,): (inside (k,)
    bool, distance to the nearest crossing of the line through the point, either way
    (k,), an upper bound of its distance to the surface). Nothing is inside a mesh
    flattened by a singular matrix.

    The points are taken into each target's local frame and turned into its ray frame
    (`RayGrid`), where the ray is the z axis: through a wall's thickness however the wall
    is turned, and a rigid move only turns the points. Parity and crossings are kept by
    an affine map; the distance along the line is scaled back to the world's. Points on
    one line (one target, the same two other coordinates: a wall's corners above each
    other) share the line's cell of the grid and its crossings, and each counts those
    beyond it along the ray."""
    if not len(points):
        # Its grid and rays are some thirty numpy calls on no rows (a live update's
        # pairs mostly have no point to test).
        return np.zeros(0, dtype=bool), np.zeros(0)
    meshes, slot = _meshes_of(world, target)
    rays = _rays([world.meshes[k] for k in meshes], world.linear[meshes])
    turned = (take_rows(rays.frame, slot) @ _to_local(world, points, target)[:, :, None])[:, :, 0]
    first, line_of = _distinct_rows(slot, turned[:, 0], turned[:, 1])
    line_slot = slot[first]
    across = np.ascontiguousarray(take_rows(turned, first)[:, :2])
    # NaN where the target's matrix is singular: such a line meets nothing.
    finite = ~np.isnan(across).any(axis=1)
    origin, shape = take_rows(rays.origin, line_slot), take_rows(rays.shape, line_slot)
    index = _grid_index(
        np.where(finite[:, None], across, origin), origin, take_rows(rays.cell, line_slot), shape
    )
    cell = rays.cell_base[line_slot] + index[:, 1] * shape[:, 0] + index[:, 0]
    begin = rays.cell_start[cell]
    listed = np.where(finite, rays.cell_start[cell + 1] - begin, 0)
    line, entry = expand_runs(begin, listed)
    triangle = rays.cell_triangles[entry]
    bounds = take_rows(rays.across, triangle)
    at = take_rows(across, line)
    over = reduce_short_axis(np.logical_and, (at >= bounds[:, 0]) & (at <= bounds[:, 1]))
    line, triangle = line[over], triangle[over]
    hit, crossing_level = _line_crossings(take_rows(turned, first[line]), rays, triangle)
    # The crossings and the points, by line and by level along it, a crossing before a
    # point at its level: the crossings before a point on its line are below it or at it.
    crossing_line = line[hit]
    merged_line = np.concatenate([crossing_line, line_of])
    merged_level = np.concatenate([crossing_level, turned[:, 2]])
    is_point = np.arange(len(merged_line)) >= len(crossing_line)
    order = np.lexsort((is_point, merged_level, merged_line))
    merged_line, merged_level, is_point = merged_line[order], merged_level[order], is_point[order]
    per_line = np.bincount(crossing_line, minlength=len(first))
    below = np.cumsum(~is_point) - (np.cumsum(per_line) - per_line)[merged_line]
    point = order[is_point] - len(crossing_line)
    inside = np.zeros(len(points), dtype=bool)
    inside[point] = (per_line[merged_line[is_point]] - below[is_point]) % 2 == 1
    # The nearest crossing on either side: the last crossing before each point and the
    # first after it, where on the same line.
    position = np.arange(len(order))
    preceding = np.maximum.accumulate(np.where(is_point, -1, position))
    following = np.minimum.accumulate(np.where(is_point, len(order), position)[::-1])[::-1]
    preceding, following = preceding[is_point], following[is_point]
    level_of = np.append(merged_level, np.inf)
    line_at = np.append(merged_line, -1)
    here, z = merged_line[is_point], merged_level[is_point]
    under = np.where(
        (preceding >= 0) & (line_at[preceding] == here), z - level_of[preceding], np.inf
    )
    over = np.where(line_at[following] == here, level_of[following] - z, np.inf)
    nearest = np.full(len(points), np.inf)
    # Grown by the slack: the turn's rounding must not make the bound too small.
    slack = world.slack
    reach = np.minimum(under, over)
    crossed = np.isfinite(reach)
    nearest[point[crossed]] = reach[crossed] * rays.scale[slot[point[crossed]]] + slack
    return inside, nearest


def _inward_planes(world: _World, meshes: np.ndarray) -> tuple[np.ndarray, ...]:
    """The face planes of convex world meshes `meshes` (g,) ascending, as `_convex_depths`
    takes them: (meshes, each one's first face (g,), a corner of each face (f, 3), its
    unit normal turned inwards (f, 3)), the meshes' faces one after the other. Each
    mesh's planes are the same numbers whichever meshes share the call."""
    owner, triangle = expand_runs(world.triangle_start[meshes], world.triangle_count[meshes])
    anchors = np.ascontiguousarray(take_rows(world.corners, triangle)[:, 0])
    # Inwards: towards the mesh's vertex centroid, strictly inside a convex mesh with a
    # volume (a mirroring matrix turns the triangles' winding over).
    normals = take_rows(world.unit_normal, triangle)
    inwards = take_rows(_vertex_centres(world, meshes), owner) - anchors
    normals *= np.where(dot_rows(normals, inwards) < 0, -1.0, 1.0)[:, None]
    first_face = np.concatenate(([0], np.cumsum(world.triangle_count[meshes])[:-1]))
    return meshes, first_face, anchors, normals


def _convex_depths(world: _World, points, target, planes) -> tuple[np.ndarray, np.ndarray]:
    """How deep points (k, 3) lie in convex world meshes `target` (k,): the least height
    of each point below its mesh's face planes, the distance to the surface where the
    point is inside and <= 0 where it is not (k,), and the point's foot on the nearest
    plane, its closest point on the surface when inside (k, 3). Ties go to the mesh's
    earlier triangle. planes: the `_inward_planes` of meshes among which are the targets
    (each face's plane once, not once per point measured against it)."""
    meshes, first_face, anchors, normals = planes
    # Row r measures point `point[r]` against face `face[r]` (a row of `normals`): each
    # point's rows in a run, its faces in order.
    point, face = expand_runs(
        first_face[np.searchsorted(meshes, target)], world.triangle_count[target]
    )
    heights = dot_rows(
        take_rows(normals, face), take_rows(points, point) - take_rows(anchors, face)
    )
    # Each point's least height, at its first nearest face.
    nearest = _first_least(point, heights)
    depth = np.full(len(points), np.inf)
    depth[point[nearest]] = heights[nearest]
    foot_face = np.zeros(len(points), dtype=np.int64)
    foot_face[point[nearest]] = face[nearest]
    return depth, points - depth[:, None] * take_rows(normals, foot_face)


def _offer_convex_depths(
    world: _World, deepest: _Best, pair, points, target, upper, epsilon
) -> None:
    """Offer `deepest` the depths (`_convex_depths`) of points (k, 3) of pairs `pair` (k,)
    strictly inside convex world meshes `target` (k,) (deeper than their contact
    `epsilon` (k,)), given upper bounds (k,) of those depths.

    Only a pair's deepest point is kept, the first of equals, so the points are measured
    deepest bound first, a few of each pair, then only those whose bound does not fall
    below the depth found for their pair: every point as deep as the deepest is still
    measured, and they are offered in their order. A point in a 224-triangle sphere
    costs 224 rows, and the bounds (the room to the mesh's bounds) leave most of a
    shallow cap's points out."""
    depth = np.zeros(len(points))
    foot = np.zeros((len(points), 3))
    measured = np.zeros(len(points), dtype=bool)
    found = np.zeros(len(deepest.value))
    todo = np.lexsort((-upper, pair))
    # The planes of every round's targets at once.
    planes = _inward_planes(world, _meshes_of(world, target)[0])
    batch = _FIRST_DEPTH_BATCH
    while len(todo):
        rank = ranks_in_runs(pair[todo])
        now, todo = todo[rank < batch], todo[rank >= batch]
        depth[now], foot[now] = _convex_depths(world, take_rows(points, now), target[now], planes)
        measured[now] = True
        strictly = now[depth[now] > epsilon[now]]
        np.maximum.at(found, pair[strictly], depth[strictly])
        todo = todo[upper[todo] >= found[pair[todo]]]
        batch *= 8
    strictly = np.flatnonzero(measured)
    strictly = strictly[depth[strictly] > epsilon[strictly]]
    deepest.offer(
        pair[strictly], -depth[strictly], take_rows(points, strictly), take_rows(foot, strictly)
    )


def _outside_parts(world: _World, pair, points, target, part, apart) -> np.ndarray:
    """Which points (k, 3) of pairs `pair` (k,) lie in a connected part `part` (k,) of
    their mesh found outside world meshes `target` (k,): (k,) bool. Only for pairs whose
    surfaces are `apart` (m,): a part that does not meet the other surface lies wholly
    on one side of it, so the ray parity of its first point decides for all of it."""
    among = np.flatnonzero(apart[pair])
    if not len(among):
        return np.zeros(len(pair), dtype=bool)
    key = pair[among] * len(world.vertex_part) + part[among]
    _, first, group = np.unique(key, return_index=True, return_inverse=True)
    inside, _ = _parity_inside(world, take_rows(points, among[first]), target[among[first]])
    outside = np.zeros(len(pair), dtype=bool)
    outside[among] = ~inside[group]
    return outside


# An inner mesh with more vertices and triangles than this has its points listed for a
# pair only where its triangles meet the outer mesh's bounds (found through its tree):
# listing a terrain's every point for each object on it took memory and time as pairs
# times triangles (10 GB and 44 s for 244 cubes on 180 k triangles; a 1 M triangle
# terrain ran out of memory). Smaller meshes are listed whole, without the tree's walk.
_LISTED_WHOLE = 4096


def _inner_points(world: _World, inner: np.ndarray, outer: np.ndarray) -> tuple[np.ndarray, ...]:
    """The vertices and faces of world meshes `inner` (m,) that may lie strictly inside
    the bounds of `outer` (m,): (vertex_pair (a,), vertex (a,), face_pair (b,), face (b,)),
    rows into `world`'s vertices and triangles, sorted by pair, then row.

    All of an inner mesh's, or for one of more than `_LISTED_WHOLE` points those of its
    triangles whose bounds meet the outer mesh's bounds and its vertices in no triangle:
    a point strictly inside those bounds lies in the bounds of each triangle it belongs
    to, so the lists keep every such point, in the order of the whole lists."""
    sizes = world.vertex_count[inner] + world.triangle_count[inner]
    whole = np.flatnonzero(sizes <= _LISTED_WHOLE)
    vertex_pair, vertex = expand_runs(
        world.vertex_start[inner[whole]], world.vertex_count[inner[whole]]
    )
    face_pair, face = expand_runs(
        world.triangle_start[inner[whole]], world.triangle_count[inner[whole]]
    )
    culled = np.flatnonzero(sizes > _LISTED_WHOLE)
    if not len(culled):
        return whole[vertex_pair], vertex, whole[face_pair], face
    box, near = _point_candidates(
        world,
        take_rows(world.mesh_lo, outer[culled]),
        take_rows(world.mesh_hi, outer[culled]),
        inner[culled],
    )
    # The corners' vertices, mesh by mesh (a few large meshes): `_World` keeps no
    # triangle's vertex rows, each mesh its own.
    owner = world.owner[near]
    corner_pairs, corners = [whole[vertex_pair]], [vertex]
    for mesh in np.unique(owner).tolist():
        mine = owner == mesh
        local = near[mine] - world.triangle_start[mesh]
        corners.append((world.meshes[mesh].triangles[local] + world.vertex_start[mesh]).ravel())
        corner_pairs.append(np.repeat(culled[box[mine]], 3))
    loose_pair, loose = _loose_vertices(world, inner, culled)
    vertex_pair = np.concatenate([*corner_pairs, loose_pair])
    vertex = np.concatenate([*corners, loose])
    face_pair = np.concatenate([whole[face_pair], culled[box]])
    face = np.concatenate([face, near])
    return (
        *_sorted_unique(vertex_pair, vertex, len(world.vertices)),
        *_sorted_unique(face_pair, face, len(world.centroid)),
    )


def _loose_vertices(world: _World, inner: np.ndarray, pairs: np.ndarray) -> tuple[np.ndarray, ...]:
    """The vertices in no triangle of the inner meshes of `pairs` (k,) (rows into
    `inner`): (pair (l,), vertex (l,)), rows into `world`'s vertices."""
    found_pairs, found = [np.zeros(0, dtype=np.int64)], [np.zeros(0, dtype=np.int64)]
    meshes, of_pair = np.unique(inner[pairs], return_inverse=True)
    for index, mesh in enumerate(meshes.tolist()):
        used = np.zeros(int(world.vertex_count[mesh]), dtype=bool)
        used[world.meshes[mesh].triangles.reshape(-1)] = True
        loose = np.flatnonzero(~used) + world.vertex_start[mesh]
        if len(loose):
            owners = pairs[of_pair.reshape(-1) == index]
            found_pairs.append(np.repeat(owners, len(loose)))
            found.append(np.tile(loose, len(owners)))
    return np.concatenate(found_pairs), np.concatenate(found)


def _sorted_unique(pair: np.ndarray, row: np.ndarray, rows: int) -> tuple[np.ndarray, np.ndarray]:
    """(pair, row) entries sorted by pair, then row, each once."""
    key = np.unique(pair * rows + row)
    return key // rows, key % rows


def _by_planes(world: _World) -> np.ndarray:
    """Which world meshes a point's depth in is its least height below their face
    planes (u,) bool: the convex ones of at most `_PLANE_DEPTH_TRIANGLES` triangles."""
    return world.convex & (world.triangle_count <= _PLANE_DEPTH_TRIANGLES)


def _inside_stage(world: _World, inner: np.ndarray, outer: np.ndarray, known, apart) -> _Best:
    """Depth (b) of the pairs of world meshes (inner, outer) (m,) each, the outer ones
    closed: minus the largest distance of an inner vertex or face centre strictly inside
    the outer mesh to its surface (0 where none), with that point and its closest point
    on the outer surface; where it would not exceed `known` (m,), a depth found already,
    it may be left at 0. apart: (m,) bool, the pair's surfaces are more than eps apart.

    Inside by the parity of a ray (`_parity_inside`); the ray's first crossing bounds the
    distance of an inside vertex to the surface from above, so vertices are measured in
    rounds, deepest bound first, and those whose bound cannot beat the depth found so
    far are dropped."""
    deepest = _Best(len(inner), 0.0)
    # Face centres besides vertices: two boxes of one height overlapping end to end meet
    # only along edges, every vertex of each on the other's surface, while the end face of
    # each lies inside the other.
    vertex_pair, vertex, face_pair, face = _inner_points(world, inner, outer)
    pair = np.concatenate([vertex_pair, face_pair])
    centres = take_rows(world.centroid, face)
    points = np.concatenate([take_rows(world.vertices, vertex), centres])
    part = np.concatenate([world.vertex_part[vertex], world.triangle_part[face]])
    target = outer[pair]
    # A point inside a mesh is no farther from its surface than from the faces of its
    # bounds: one within eps of them is not strictly inside (faces on the other's faces).
    room = reduce_short_axis(
        np.minimum,
        np.minimum(
            points - take_rows(world.mesh_lo, target), take_rows(world.mesh_hi, target) - points
        ),
    )
    epsilon = contact_epsilon(points)
    keep = np.flatnonzero(room > epsilon)
    keep = keep[_in_local_bounds(world, take_rows(points, keep), target[keep])]
    # In a convex mesh a point's depth is its least height below the faces' planes: no
    # ray and no search (in one of a few hundred faces at most).
    by_planes = _by_planes(world)
    convex = keep[by_planes[target[keep]]]
    _offer_convex_depths(
        world,
        deepest,
        pair[convex],
        take_rows(points, convex),
        target[convex],
        room[convex],
        epsilon[convex],
    )
    keep = keep[~by_planes[target[keep]]]
    points = take_rows(points, keep)
    pair, target, epsilon, part = pair[keep], target[keep], epsilon[keep], part[keep]
    keep = np.flatnonzero(~_outside_parts(world, pair, points, target, part, apart))
    pair, points, target, epsilon = pair[keep], take_rows(points, keep), target[keep], epsilon[keep]
    inside, upper = _parity_inside(world, points, target)
    # A point whose line meets the surface within eps of it is no deeper than that: not
    # strictly inside, whatever its parity (a point on the other's face gets either).
    inside &= upper > epsilon
    order = np.lexsort((-upper[inside], pair[inside]))
    todo = np.flatnonzero(inside)[order]
    batch = _FIRST_DEPTH_BATCH
    while len(todo):
        rank = ranks_in_runs(pair[todo])
        now, todo = todo[rank < batch], todo[rank >= batch]
        # A point whose distance cannot beat the depth found already needs no exact one.
        best = np.maximum(known, -deepest.value)
        nearest, exact = _nearest_on_meshes(
            world, take_rows(points, now), target[now], upper[now], best[pair[now]], epsilon[now]
        )
        strictly = exact & (nearest.value > epsilon[now])
        deepest.offer(
            pair[now][strictly],
            -nearest.value[strictly],
            take_rows(nearest.first, strictly),
            take_rows(nearest.second, strictly),
        )
        best = np.maximum(known, -deepest.value)
        todo = todo[upper[todo] > best[pair[todo]]]
        batch *= 8
    return deepest


def _check_input(meshes, matrices, pairs, max_distance):
    matrices = np.asarray(matrices, dtype=np.float64).reshape(-1, 4, 4)
    pairs = np.asarray(pairs, dtype=np.int64).reshape(-1, 2)
    if len(matrices) != len(meshes):
        raise ValueError(f"mesh_contacts: {len(meshes)} meshes but {len(matrices)} matrices")
    if pairs.size and (pairs.min() < 0 or pairs.max() >= len(meshes)):
        raise ValueError("mesh_contacts: pair indices out of range")
    if not np.isfinite(matrices).all():
        raise ValueError("mesh_contacts: matrices hold NaN or infinite values")
    max_distance = np.asarray(max_distance, dtype=np.float64)
    if max_distance.ndim and max_distance.shape != (len(pairs),):
        raise ValueError(
            f"mesh_contacts: max_distance must be a scalar or one per pair ({len(pairs)},),"
            f" got shape {max_distance.shape}"
        )
    if not (max_distance >= 0).all():
        raise ValueError(f"mesh_contacts: max_distance must be >= 0, got {max_distance}")
    return matrices, pairs, np.broadcast_to(max_distance, (len(pairs),))


def mesh_contacts(
    meshes: Sequence[TriangleMesh],
    matrices,
    pairs,
    max_distance,
    progress=None,
    posed: PosedMeshes | None = None,
) -> MeshContacts:
    """Contact of pairs of posed meshes (see the module docstring for the rules).

    meshes: n `TriangleMesh` (the same object may appear under several indices)
    matrices: (n, 4, 4) float64 affine world matrices, meshes[k] posed by matrices[k]
    pairs: (m, 2) int64 indices into meshes
    max_distance: >= 0, scalar or (m,) one per pair; pairs farther apart come out at
        +inf with NaN witnesses
    progress: when given, called as progress(done, m) in the calling thread with the
        number of pairs decided: 0 first, then after each share of them
    posed: when given, large meshes posed by an earlier call under the same matrices
        are taken from it, and this call's kept there (`PosedMeshes`)
    returns: `MeshContacts` of the m pairs
    """
    matrices, pairs, max_distance = _check_input(meshes, matrices, pairs, max_distance)
    used, slots = np.unique(pairs, return_inverse=True)
    slots = slots.reshape(-1, 2)
    world = _pose(meshes, matrices, used, posed)
    contact = float(_epsilon(np.array([world.reach]))[0])
    boxes = _posed_boxes(matrices, used, world)
    overlap = _face_axes_overlap(world, boxes, slots)
    # Pairs whose boxes lie apart by more than max_distance along a face axis are apart
    # whatever their triangles (a railing below a sloped rafter, within its world box).
    boxes_apart = overlap < -(max_distance + contact + world.slack)
    apart, decided = np.flatnonzero(boxes_apart), np.flatnonzero(~boxes_apart)
    # A share holds whole pairs: one pair on a large mesh (a cube dragged on a terrain)
    # is decided on the calling thread, not sent to a pool with a share left empty (22
    # against 28 ms a drag step on 180 k triangles in Blender).
    workers = worker_count(
        min(len(decided), int(world.triangle_count[slots[decided]].sum()) // _TRIANGLES_PER_WORKER)
    )
    # Interleaved shares, a multiple of the threads, so that each thread gets some of the
    # costly pairs wherever they lie; every stage works pair by pair, so a share's results
    # do not depend on the others.
    count = -(-max(1, -(-len(decided) // _PAIRS_PER_SHARE)) // workers) * workers
    shares = [decided[share::count] for share in range(count)]
    if progress is not None:
        progress(0, len(slots))
    found = [_apart_contacts(world, slots[apart])] if len(apart) else []
    done = len(apart)
    for rows, contacts in zip(
        shares,
        map_in_threads(
            lambda rows: _slot_contacts(
                world, boxes, slots[rows], overlap[rows], max_distance[rows], contact
            ),
            shares,
            workers,
        ),
        strict=True,
    ):
        found.append(contacts)
        done += len(rows)
        if progress is not None:
            progress(done, len(slots))
    if len(found) == 1:  # one share of all pairs, in order
        return found[0]
    return _in_order(found, [apart, *shares])


def _in_order(parts: list[MeshContacts], rows: list[np.ndarray]) -> MeshContacts:
    """One `MeshContacts` of the pairs `parts` hold, the pairs `rows` (k,) each of them
    (between them every row once; an empty one may have no part), in the rows' order."""
    order = np.argsort(np.concatenate(rows), kind="stable")
    return concatenate_fields(
        MeshContacts,
        parts,
        build=lambda **fields: MeshContacts(
            **{name: column[order] for name, column in fields.items()}
        ),
    )


def _face_axes_overlap(world: _World, boxes: np.ndarray, slots: np.ndarray) -> np.ndarray:
    """The least overlap of the two meshes of each pair of world meshes `slots` (m, 2)
    along one of their posed face axes (`_World.face_axes`), each mesh held by its
    `_posed_boxes` `boxes`: (m,), negative for a gap, NaN for a pair with a mesh without
    triangles (`_box_overlap`).

    A pair farther apart than max_distance is apart whatever its triangles, and its
    trees need no walk: a railing below a sloped rafter lies within the rafter's world
    box, and their triangles' world bounds meet, but not the rafter's face box (FZK-Haus:
    18 such pairs held 80 k of the 204 k candidate triangle pairs of its near pairs). A
    pair that overlaps by less than `_SHALLOW` is never deeper than that (moving one mesh
    by the overlap separates the boxes), so no point of one lies strictly inside the other:
    walls and slabs meeting face to face (AC11: 1,054 of its 1,463 near pairs)."""
    directions = np.concatenate(
        [take_rows(world.face_axes, slots[:, 0]), take_rows(world.face_axes, slots[:, 1])],
        axis=1,
    )
    return _box_overlap(boxes, slots, directions)


def _apart_contacts(world: _World, slots: np.ndarray) -> MeshContacts:
    """`MeshContacts` of pairs of world meshes `slots` (m, 2) that lie farther apart than
    the call's max_distance."""
    count = len(slots)
    return MeshContacts(
        np.full(count, np.inf),
        np.full((count, 3), np.nan),
        np.full((count, 3), np.nan),
        np.full(count, APART, dtype=np.int8),
        ~world.closed[slots].all(axis=1),
    )


def _slot_contacts(world, boxes, slots, overlap, max_distance, contact) -> MeshContacts:
    """`mesh_contacts` of the pairs of world meshes `slots` (m, 2), with the meshes'
    `_posed_boxes` `boxes`, the pairs' `_face_axes_overlap` (m,), their max_distance (m,)
    and the call's contact epsilon `contact` (of all its meshes, not only these): those
    of two convex meshes that `_convex_contacts` decides from their points and extents,
    the others from their triangles (`_triangle_contacts`)."""
    quick, found = _convex_contacts(world, boxes, slots, overlap, max_distance, contact)
    rest = np.flatnonzero(~quick)
    if not len(rest):
        return found
    rest_found = _triangle_contacts(
        world, boxes, slots[rest], overlap[rest], max_distance[rest], contact
    )
    if len(rest) == len(slots):
        return rest_found
    return _in_order([found, rest_found], [np.flatnonzero(quick), rest])


def _convex_contacts(world, boxes, slots, overlap, max_distance, contact):
    """The pairs among world meshes `slots` (m, 2) (with `_slot_contacts`' arguments)
    whose contact needs none of their triangles: (decided (m,) bool, their
    `MeshContacts`, in order).

    Both meshes convex and closed, with face planes to measure points by (at most
    `_PLANE_DEPTH_TRIANGLES` triangles), and each with a vertex outside the other's
    bounds, so that neither holds the other. Such a pair penetrates, its surfaces
    crossing, where (1) a point of one lies deeper than the call's contact epsilon in
    the other (its depth (b)), or (2) the separating axis theorem decides it (both
    polyhedra of few directions, `_axes_overlap`) and their overlap exceeds the contact
    epsilon along every axis. Its depth is then the separating bound, as the triangles
    give it (`_depth_bound`: a convex pair's depth, no less than (b)); its witnesses
    those of (b), the deepest point inside and its foot on the other surface, or for (2)
    alone `_support_witnesses`. A pair lies apart where its meshes' vertices leave a
    gap of more than max_distance and the contact epsilon (`_depth_bound`'s gaps). Left to the
    triangles: pairs that touch or nearly so, that one may hold inside the other, and
    curved pairs crossing with no point inside. On the live updates of 1,000 convex
    objects, the triangles and the rays took two thirds of a call."""
    decided = np.zeros(len(slots), dtype=bool)
    by_planes = _by_planes(world) & world.closed
    rows = np.flatnonzero(by_planes[slots].all(axis=1) & (overlap > _SHALLOW))
    if not len(rows):
        return decided, _apart_contacts(world, slots[:0])
    first, second = slots[rows, 0], slots[rows, 1]
    # Both ways in one call (each pair is measured alone); no ray is cast.
    both_ways = np.concatenate([first, second]), np.concatenate([second, first])
    both = _inside_stage(
        world, *both_ways, np.zeros(2 * len(rows)), np.ones(2 * len(rows), dtype=bool)
    )
    i_in_j, j_in_i = both.halves()
    inside = -np.minimum(i_in_j.value, j_in_i.value)
    apart_ways = _pokes_out(world, both_ways[0], both_ways[1]).reshape(2, -1).all(axis=0)
    bound, along, gap = _depth_bound(
        world,
        boxes,
        slots[rows],
        np.full(len(rows), np.inf),
        inside,
        np.full(len(rows), contact),
        gaps=True,
    )
    by_points = inside > contact
    crossing = np.flatnonzero(
        apart_ways & (bound > contact) & (by_points | np.isfinite(along[:, 0]))
    )
    point_i, point_j = i_in_j.first[crossing], i_in_j.second[crossing]
    by_j = j_in_i.value[crossing] < i_in_j.value[crossing]
    point_i[by_j], point_j[by_j] = j_in_i.second[crossing][by_j], j_in_i.first[crossing][by_j]
    # (2) alone: where the faces (edges, vertices) its depth is measured between
    # overlap; a pair whose supports show none is left to the triangles.
    axes = np.flatnonzero(~by_points[crossing])
    point_i[axes], point_j[axes] = _support_witnesses(
        world, slots[rows[crossing[axes]]], along[crossing[axes]], contact
    )
    witnessed = np.isfinite(point_i[:, 0])
    crossing, point_i, point_j = crossing[witnessed], point_i[witnessed], point_j[witnessed]
    apart = np.flatnonzero(gap > max_distance[rows] + contact)
    apart = np.setdiff1d(apart, crossing)
    decided[rows[crossing]] = True
    decided[rows[apart]] = True
    found = _in_order(
        [
            MeshContacts(
                -bound[crossing],
                point_i,
                point_j,
                np.full(len(crossing), CROSSING, dtype=np.int8),
                np.zeros(len(crossing), dtype=bool),
            ),
            _apart_contacts(world, slots[rows[apart]]),
        ],
        [rows[crossing], rows[apart]],
    )
    return decided, found


# A support of more corners than this (a cylinder's cap seen end on: 16; a face of a
# finer mesh) leaves its pair's witnesses to the triangles: each corner of one support
# is tested against each of the other's.
_SUPPORT_CORNERS = 32
# Crossings within this fraction of an outline's edge past its ends count as on it.
_OUTLINE_ROUNDING = 1e-9


def _support_witnesses(world: _World, slots: np.ndarray, along: np.ndarray, tolerance: float):
    """Witness points of pairs of convex world meshes `slots` (m, 2) penetrating by their
    least overlap along `along` (m, 3) unit rows, as the separating axis theorem finds
    it: (point_i (m, 3), point_j (m, 3)), NaN for a pair where none is found.

    Along that direction the far side of one mesh meets the near side of the other, and
    each mesh's support there (its vertices within `tolerance` of its extreme) is a
    face, an edge or a vertex. Seen along the direction of their least overlap, the two
    supports of two convex polyhedra overlap (the points that the move separating them
    joins lie there). The witnesses are a point of that overlap on each support: the
    mean of each support's corners inside the other's outline and of the outlines'
    edges' crossings, all in the overlap (convex), so on both surfaces and the depth
    apart. An outline is its support's corners in order around their centre, a point is
    inside it when inside a triangle of the centre and two corners next to each other:
    never outside the support, where a corner inside the face (a fan's hub) leaves a
    dent. None where a support has more than `_SUPPORT_CORNERS` corners, or where none
    is found (a vertex on a vertex, an edge along an edge: left to the triangles)."""
    count = len(slots)
    # Both meshes' vertices, mesh i's then mesh j's, as `_projected_overlap` lays them
    # out, and their extents along `along`.
    run, points = _vertices_of(world, slots.T.reshape(-1))
    ahead = dot_rows(points, take_rows(np.concatenate([along, along]), run))
    starts = _starts(world.vertex_count[slots.T.reshape(-1)])
    low, high = np.minimum.reduceat(ahead, starts), np.maximum.reduceat(ahead, starts)
    # Mesh i's far side meets mesh j's near side along `along`, or the other way round:
    # turned so that it is the first.
    turned = (high[:count] - low[count:]) > (high[count:] - low[:count])
    sign = np.where(turned, -1.0, 1.0)
    along = along * sign[:, None]
    ahead *= np.concatenate([sign, sign])[run]
    top = np.where(turned, -low[:count], high[:count])  # mesh i's far side
    bottom = np.where(turned, -high[count:], low[count:])  # mesh j's near side
    extreme = np.concatenate([top, bottom])[run]
    side_i = run < count
    support = np.flatnonzero(
        np.where(side_i, ahead >= extreme - tolerance, ahead <= extreme + tolerance)
    )
    # Coordinates across the direction.
    helper = np.eye(3)[np.argmin(np.abs(along), axis=1)]
    across_u = _unit_rows(cross_rows(along, helper))
    across_v = cross_rows(along, across_u)
    outlines = []
    for kept in (support[side_i[support]], support[~side_i[support]]):
        run_of, corners_of = run[kept] % count, take_rows(points, kept)
        flat = np.stack(
            [
                dot_rows(corners_of, take_rows(across_u, run_of)),
                dot_rows(corners_of, take_rows(across_v, run_of)),
            ],
            axis=1,
        )
        outlines.append(_outline(run_of, flat, count))
    (
        (run_a, corner_a, next_a, centre_a, corners_a),
        (run_b, corner_b, next_b, centre_b, corners_b),
    ) = outlines
    found = [np.zeros((0, 2))]
    found_run = [np.zeros(0, dtype=np.int64)]
    usable = (corners_a <= _SUPPORT_CORNERS) & (corners_b <= _SUPPORT_CORNERS)
    for inner_run, inner, outer in (
        (run_a, corner_a, (run_b, corner_b, next_b, centre_b, corners_b)),
        (run_b, corner_b, (run_a, corner_a, next_a, centre_a, corners_a)),
    ):
        rows, points = _inside_outlines(inner_run, inner, *outer, usable, tolerance)
        found.append(points)
        found_run.append(rows)
    rows, points = _outline_crossings(
        run_a, corner_a, next_a, run_b, corner_b, next_b, corners_b, usable
    )
    found.append(points)
    found_run.append(rows)
    found_run = np.concatenate(found_run)
    found = np.concatenate(found)
    counts = np.bincount(found_run, minlength=count)
    middle = (
        np.stack(
            [np.bincount(found_run, found[:, axis], minlength=count) for axis in range(2)], axis=1
        )
        / np.maximum(counts, 1)[:, None]
    )
    point_i = middle[:, :1] * across_u + middle[:, 1:] * across_v + top[:, None] * along
    point_j = point_i + (bottom - top)[:, None] * along
    point_i[counts == 0] = np.nan
    point_j[counts == 0] = np.nan
    return point_i, point_j


def _outline(run: np.ndarray, flat: np.ndarray, count: int):
    """The outlines of `count` supports from their corners `flat` (p, 2) in runs `run`
    (p,) ascending: (run (p,), corner (p, 2), the next corner around (p, 2), each run's
    centre (count, 2), its number of corners (count,)), corners in order of their angle
    about the centre."""
    corners = np.bincount(run, minlength=count)
    centre = (
        np.stack([np.bincount(run, flat[:, axis], minlength=count) for axis in range(2)], axis=1)
        / np.maximum(corners, 1)[:, None]
    )
    offset = flat - take_rows(centre, run)
    order = np.lexsort((np.arctan2(offset[:, 1], offset[:, 0]), run))
    run, flat = run[order], take_rows(flat, order)
    # Each run's last corner is followed by its first.
    following = np.arange(1, len(run) + 1)
    firsts = np.flatnonzero(run_starts(run))
    following[np.append(firsts[1:], len(run))[: len(firsts)] - 1] = firsts
    return run, flat, take_rows(flat, following), centre, corners


def _cross_2d(first: np.ndarray, second: np.ndarray) -> np.ndarray:
    """The cross products (k,) of plane vectors (k, 2)."""
    return first[:, 0] * second[:, 1] - first[:, 1] * second[:, 0]


def _inside_outlines(
    run, points, outline_run, corner, following, centre, corners, usable, rounding
):
    """The points (p, 2) of runs `run` (p,) inside the outline of their run (`_outline`'s
    `outline_run`, `corner`, `following`, `centre`, `corners`) of at least three
    corners, or within `rounding` of it, for runs `usable` (count,) bool: (their runs
    (k,), the points (k, 2))."""
    keep = usable[run] & (corners[run] >= 3)
    run, points = run[keep], points[keep]
    # Each point against each triangle of its outline's fan.
    point, wedge = expand_runs(_starts(corners)[run], corners[run])
    at = points[point]
    hub = centre[outline_run[wedge]]
    first, second = corner[wedge], following[wedge]
    # A wedge of no width (corners in a line with the centre) holds no point: within
    # `rounding` of its three edges lies all of their line.
    span = second - first
    inside = _cross_2d(first - hub, second - hub) > rounding * np.sqrt((span * span).sum(axis=1))
    for start, end in ((hub, first), (first, second), (second, hub)):
        edge = end - start
        inside &= _cross_2d(edge, at - start) >= -rounding * np.sqrt((edge * edge).sum(axis=1))
    hit = np.unique(point[inside])
    return run[hit], points[hit]


def _outline_crossings(run_a, corner_a, next_a, run_b, corner_b, next_b, corners_b, usable):
    """Where the edges of two sets of outlines (`_outline`'s) cross, run by run, for runs
    `usable` (count,) bool: (their runs (k,), the crossings (k, 2))."""
    keep = np.flatnonzero(usable[run_a])
    edge_a, edge_b = expand_runs(_starts(corners_b)[run_a[keep]], corners_b[run_a[keep]])
    edge_a = keep[edge_a]
    start_a, start_b = corner_a[edge_a], corner_b[edge_b]
    along_a, along_b = next_a[edge_a] - start_a, next_b[edge_b] - start_b
    between = start_b - start_a
    denominator = _cross_2d(along_a, along_b)
    # Parallel edges, and a support of one corner's edge of no length, cross nowhere.
    scale = np.sqrt((along_a * along_a).sum(axis=1) * (along_b * along_b).sum(axis=1))
    skew = np.abs(denominator) > 1e-12 * scale
    safe = np.where(skew, denominator, 1.0)
    on_a = _cross_2d(between, along_b) / safe
    on_b = _cross_2d(between, along_a) / safe
    low, high = -_OUTLINE_ROUNDING, 1.0 + _OUTLINE_ROUNDING
    met = skew & (on_a >= low) & (on_a <= high) & (on_b >= low) & (on_b <= high)
    return run_a[edge_a[met]], start_a[met] + on_a[met, None] * along_a[met]


def _pokes_out(world: _World, inner: np.ndarray, outer: np.ndarray) -> np.ndarray:
    """Whether a vertex of each world mesh `inner` (m,) lies outside the bounds of the
    world mesh `outer` (m,) (`_in_local_bounds`), and so outside it: (m,) bool."""
    run, points = _vertices_of(world, inner)
    out = ~_in_local_bounds(world, points, outer[run])
    return np.bincount(run[out], minlength=len(inner)) > 0


def _triangle_contacts(world, boxes, slots, overlap, max_distance, contact) -> MeshContacts:
    """`_slot_contacts` from the pairs' triangles (see the module docstring)."""
    grow = max_distance + contact
    nearest, crossing, crossing_point, shared_point = _triangle_stage(world, slots, grow)
    faces_shared = np.isfinite(shared_point[:, 0])
    closed = world.closed[slots]
    i_in_j = _Best(len(slots), 0.0)
    j_in_i = _Best(len(slots), 0.0)
    # A pair that cannot be deeper than half the least contact epsilon has no point
    # strictly inside.
    shallow = overlap <= _SHALLOW
    for best, inner, outer in ((i_in_j, 0, 1), (j_in_i, 1, 0)):
        # Only a closed mesh has an inside; what lies in it may be open (a window's
        # shell in a wall).
        tested = np.flatnonzero(closed[:, outer] & ~shallow)
        found = _inside_stage(
            world,
            slots[tested, inner],
            slots[tested, outer],
            -crossing.value[tested],
            nearest.value[tested] > contact,
        )
        best.value[tested], best.first[tested], best.second[tested] = (
            found.value,
            found.first if inner == 0 else found.second,
            found.second if inner == 0 else found.first,
        )
    inside = -np.minimum(i_in_j.value, j_in_i.value)
    # The pairs' contact epsilon, at their nearest points.
    epsilon = contact_epsilon(np.nan_to_num(nearest.first))
    # Depth (c): where faces of the two lie on each other facing the same way (a copy
    # pasted in place, or moved along its faces), the volumes behind them overlap, maybe
    # with no triangle crossing and no point strictly inside: the bound is the depth.
    # Where one mesh is not convex, only if (a) and (b) found none: its bound may span a
    # concavity (a box sunk a millimetre into an L-shaped element's arm, flush with its
    # top, has (b) a millimetre and a bound as wide as the box).
    penetrating = np.maximum(-crossing.value, inside) > epsilon
    faces_shared &= world.convex[slots].all(axis=1) | ~penetrating
    # Two convex meshes that penetrate: their depth is the bound, where (a) and (b) only
    # approach it from below (two beams overlapping 2 m end to end, one turned 1e-3 rad
    # about its axis so that no faces are shared, came out 0.1 m deep against 0.3 m; a
    # box inside a box 0.4 against 0.6; UV spheres pushed into cubes down to 0.18 of
    # their depth). For polyhedra of few directions it is the least overlap along their
    # face normals and edge crosses, which the separating axis theorem makes the least
    # move that separates; with a curved mesh, a move that separates found by tilting
    # (`_tilted_overlap`), at most a few percent more. Convex as shapes: a matrix
    # flattening one (a slab scaled to no thickness) keeps it convex, though it leaves no
    # inside for (b).
    convex_pair = np.zeros(len(slots), dtype=bool)
    convex_pair[penetrating] = _convex_shapes(world, slots[penetrating]).all(axis=1)
    bound_is_depth = faces_shared | convex_pair
    crossing_depth = np.where(bound_is_depth, np.inf, -crossing.value)
    bound, _ = _depth_bound(world, boxes, slots, crossing_depth, inside, epsilon)
    shared_point[~faces_shared] = np.nan
    return _combine(
        nearest,
        crossing,
        crossing_point,
        i_in_j,
        j_in_i,
        shared_point,
        np.where(bound_is_depth, bound, np.inf),
        bound,
        epsilon,
        max_distance,
        ~closed.all(axis=1),
    )


def _depth_bound(world, boxes, slots, crossing_depth, inside, epsilon, gaps=False):
    """The separating bound (m,) of pairs of world meshes `slots` (m, 2) that caps their
    depth, given their `_posed_boxes` `boxes`, the depth (a) each would report (m,)
    (+inf where the bound is its depth), its depth (b) `inside` (m,) and its contact
    epsilon (m,): +inf where nothing crosses and nothing lies inside. And for the pairs
    that the separating axis theorem decides (`_axes_overlap`), the direction (m, 3) of
    their bound where their vertices' extents gave it (NaN elsewhere).

    gaps: also measure every pair with a bound along the axes and the line between the
    meshes' vertex centres, and return the largest gap (m,) between their vertices'
    extents found along those (<= 0 where none, NaN for pairs without a bound): no
    distance between the meshes is less. The bound is the same."""
    # The bound caps a depth: the pairs where nothing crosses and nothing lies inside have
    # none to cap (their depth is 0 whatever the bound).
    bound = np.full(len(slots), np.inf)
    capped = np.flatnonzero(np.maximum(crossing_depth, inside) > 0)
    bound[capped], directions = _separating_bound(world, boxes, slots[capped])
    # Where a penetration would be reported from crossing triangles, the meshes' own
    # extents along the same directions (their vertices, not their boxes) may show that a
    # smaller move separates. Not where points inside give the depth: no move that
    # separates is shorter than theirs.
    deep = np.flatnonzero(
        (np.minimum(crossing_depth, bound) > np.maximum(inside, epsilon)) & (bound > inside)
    )
    measured_rows = capped if gaps else deep
    measured, least, complete = _axes_overlap(
        world,
        slots[measured_rows],
        take_rows(directions, np.searchsorted(capped, measured_rows)),
        floor=-np.inf if gaps else 0.0,
    )
    at_deep = np.searchsorted(measured_rows, deep)
    bound[deep] = np.minimum(bound[deep], np.maximum(measured[at_deep], 0.0))
    decided = deep[complete[at_deep]]
    along = np.full((len(slots), 3), np.nan)
    along[decided] = least[np.searchsorted(measured_rows, decided)]
    # A pair with a mesh of many directions (a curved one) tilts its least direction, and
    # the line between the two meshes' vertex centres: the search stops in a local
    # least, and two convex meshes pushed into each other are often separated nearly
    # along that line (from the least direction alone, 37 of the 1,330 penetrating pairs
    # of UV spheres, cylinders and cubes of 40 live updates came out over 1% deeper than
    # coal's EPA, from both 10, at most 9%). Two apart often lie apart along it.
    curved = deep[~complete[at_deep] & (bound[deep] > np.maximum(inside[deep], epsilon[deep]))]
    lined = measured_rows if gaps else curved
    from_line = np.zeros(0)
    if len(lined):
        least_lined = least[np.searchsorted(measured_rows, lined)]
        centres = _vertex_centres(world, slots[lined].ravel()).reshape(-1, 2, 3)
        line = centres[:, 1] - centres[:, 0]
        # Concentric meshes have no line between them: the least direction again.
        line = np.where((_length(line) > 0.0)[:, None], _unit_rows(line), least_lined)
        from_line, _ = _projected_overlap(
            world, slots[lined], line[:, None], floor=-np.inf if gaps else 0.0
        )
    if len(curved):
        at_curved = np.searchsorted(lined, curved)
        # Both searches in one call (each pair's rows are searched alone).
        tilted = _tilted_overlap(
            world,
            np.concatenate([slots[curved], slots[curved]]),
            np.concatenate([bound[curved], np.maximum(from_line[at_curved], 0.0)]),
            np.concatenate([least_lined[at_curved], line[at_curved]]),
        ).reshape(2, -1)
        bound[curved] = np.minimum(tilted[0], tilted[1])
    if not gaps:
        return bound, along
    gap = np.full(len(slots), np.nan)
    gap[capped] = -np.minimum(measured, from_line)
    return bound, along, gap


def _axes_overlap(world: _World, slots: np.ndarray, directions: np.ndarray, floor=0.0):
    """The least overlap (k,) of the vertices' extents of the two world meshes of each
    pair `slots` (k, 2) along its `directions` (k, d, 3) (`_separating_bound`'s), and for
    a pair decided by the separating axis theorem (`_by_separating_axes`) along its face
    normals and edge crosses too, no less than `floor` (-inf: a gap is negative); the
    direction (k, 3) it is along; and which pairs the theorem decides (k,) bool (for
    two convex meshes their overlap is then their exact depth, or a gap that separates
    them)."""
    # A pair with a mesh that is a polyhedron of few directions but not a box (a mitred
    # wall, a wedge) is measured along its faces' normals and edges' crosses too: a box's
    # are its face frame's, already among the directions.
    normals, edges = _direction_counts(world, slots)
    complete = _by_separating_axes(normals, edges)
    polyhedral = _not_boxes(world, slots).any(axis=1) & complete
    # A pair with a convex mesh of more than `_FEW_DIRECTIONS` (a cylinder) has up to
    # `_PAIR_DIRECTIONS`: none is dropped as parallel to another, which would cost more
    # (k d d products), and those that cannot be the least are left out
    # (`_axes_pruned_overlap`). A call lays its pairs' rows out as wide as its meshes need
    # on either side (`_face_and_edge_axes`), so such pairs are measured in groups by
    # their sides' edge counts rounded up to powers of two: a sphere's 76 edges with a
    # cube's 3 make 228 crosses, not the 76 x 9 of a sphere with a cylinder (one group
    # for all: the live calls' projections took 11 ms instead of 3).
    wide = np.maximum(normals, edges).max(axis=1) > _FEW_DIRECTIONS
    size_class = np.frexp(np.maximum(edges - 1, 0).astype(np.float64))[1]
    # The overlaps do not depend on which mesh comes first: a pair is measured with its
    # mesh of fewer edges first, so that a sphere with a cube and a cube with a sphere
    # make one group (6.8 groups a live update instead of 4, 0.4 ms each).
    turned = size_class[:, 0] > size_class[:, 1]
    size_class = np.sort(size_class, axis=1)
    group = np.where(polyhedral & wide, size_class[:, 0] * 16 + size_class[:, 1], -1)
    overlap = np.full(len(slots), np.inf)
    least = np.zeros((len(slots), 3))
    for rows, with_faces in (
        (np.flatnonzero(~polyhedral), False),
        (np.flatnonzero(polyhedral & ~wide), True),
    ):
        if not len(rows):
            continue
        along = directions[rows]
        if with_faces:
            along = np.concatenate(
                [along, _face_and_edge_axes(world, slots[rows], along[:, 0])], axis=1
            )
        overlap[rows], least[rows] = _projected_overlap(
            world, slots[rows], _distinct_per_pair(along), floor=floor
        )
    for key in np.unique(group[group >= 0]):
        rows = np.flatnonzero(group == key)
        ordered = np.where(turned[rows, None], slots[rows, ::-1], slots[rows])
        along = directions[rows]
        overlap[rows], least[rows] = _axes_pruned_overlap(
            world, ordered, along, _face_and_edge_axes(world, ordered, along[:, 0]), floor
        )
    return overlap, least, complete


def _axes_pruned_overlap(world: _World, slots: np.ndarray, along, axes, floor):
    """`_projected_overlap` of pairs of world meshes `slots` (k, 2) along their
    directions `along` (k, d, 3) and `axes` (k, a, 3) (`_face_and_edge_axes`': face
    normals and edge axes), the same numbers, though the axes along which the two
    cannot overlap less than along `along` are left out.

    The extents of a few vertices of each mesh (`TriangleMesh.core`) lie within the
    mesh's own, so their overlap along an axis is no more than the meshes': an axis
    along which it exceeds the least overlap along `along` is not the least. A 16 x 8
    UV sphere's pairs with cubes and cylinders have 295 and 757 axes (each projecting
    every vertex of both); of the live updates' axes 1 in 10 is measured, on top of
    projecting the cores' 26 points or fewer."""
    first, least_first = _projected_overlap(world, slots, along, floor=floor)
    # The extents of a few of each mesh's vertices (`TriangleMesh.core`) lie within its
    # own: first meshes, then second ones, as `_projected_overlap` lays them out.
    distinct, at = np.unique(slots.T.reshape(-1), return_inverse=True)
    cores = [world.meshes[mesh].core for mesh in distinct.tolist()]
    counts = np.array([len(core) for core in cores], dtype=np.int64)
    vertex = np.concatenate(cores) + np.repeat(world.vertex_start[distinct], counts)
    count = len(slots)
    lower = np.empty(axes.shape[:2])
    # Pairs in chunks of about `_CHUNK_ROWS` points times 16 axes: each point's axes are
    # gathered (1,000 pairs of a sphere and a cylinder would hold 0.9 GB at once).
    per_pair = counts[at].reshape(2, -1).sum(axis=0) * axes.shape[1]
    for part in _chunks(per_pair, 16 * _CHUNK_ROWS):
        rows = np.arange(count)[part]
        rows = np.concatenate([rows, rows + count])
        run, position = expand_runs(_starts(counts)[at[rows]], counts[at[rows]])
        low, high = _point_extents(
            run,
            take_rows(world.vertices, vertex[position]),
            counts[at[rows]],
            np.concatenate([axes[part], axes[part]]),
            None,
        )
        lower[part] = _widths(low, high)
    measured = lower <= first[:, None] + world.slack
    counts = measured.sum(axis=1)
    # Each row's axes measured, in order, then its least direction so far again: at
    # least two a row (one direction alone is projected another way, `_projections`).
    width = max(2, int(counts.max(initial=0)))
    order = np.argsort(~measured, axis=1, kind="stable")[:, :width]
    chosen = np.take_along_axis(axes, order[..., None], axis=1)
    filler = np.arange(width)[None, :] >= counts[:, None]
    chosen = np.where(filler[..., None], least_first[:, None], chosen)
    second, least_second = _projected_overlap(world, slots, chosen, floor=floor)
    better = second < first
    return np.where(better, second, first), np.where(better[:, None], least_second, least_first)


def _posed_boxes(matrices, used, world: _World) -> np.ndarray:
    """(u, 16, 3): each world mesh's local box corners, then its face box corners
    (`TriangleMesh.bounds`, `face_bounds`), posed by its matrix (of `matrices`, rows
    `used`): two boxes that hold the posed mesh. NaN for a mesh without triangles, whose
    bounds are infinite."""
    signs = np.array([(x, y, z) for x in (0, 1) for y in (0, 1) for z in (0, 1)])
    local_corners = np.where(signs, world.local_hi[:, None], world.local_lo[:, None])
    with np.errstate(invalid="ignore"):
        face_corners = np.where(signs, world.face_hi[:, None], world.face_lo[:, None]) @ (
            world.face_frame.transpose(0, 2, 1)
        )
        return (
            np.concatenate([local_corners, face_corners], axis=1) @ world.linear.transpose(0, 2, 1)
            + matrices[used, None, :3, 3]
        )


def _box_overlap(boxes: np.ndarray, slots: np.ndarray, directions: np.ndarray) -> np.ndarray:
    """The least overlap (m,) of the two meshes of each pair of world meshes `slots`
    (m, 2) along its `directions` (m, d, 3) unit vectors, each mesh's extent along one
    where both its `_posed_boxes` `boxes` reach: negative for a gap, NaN for a pair with
    a mesh without triangles. Moving one mesh by a positive overlap along its direction
    separates the two; a zero row is no direction (`_usable`)."""
    with np.errstate(invalid="ignore"):
        lo_a, hi_a = _box_extents(take_rows(boxes, slots[:, 0]), directions)
        lo_b, hi_b = _box_extents(take_rows(boxes, slots[:, 1]), directions)
        widths = np.minimum(hi_a - lo_b, hi_b - lo_a)
        return np.where(_usable(directions), widths, np.inf).min(axis=1)


def _separating_bound(world: _World, boxes: np.ndarray, slots: np.ndarray):
    """For each pair, a translation length that separates its two posed meshes (an upper
    bound of the penetration depth): the smallest overlap of the meshes' extents along
    30 directions, the box-box SAT's 15 axes twice: the axes of both meshes' frames (the
    columns of their matrices) and their cross products, and both meshes' face frames
    (`TriangleMesh.face_frame`, posed) and their cross products. Any direction gives a
    valid bound: moving one mesh by the overlap of their extents along it separates
    them. A mesh's extent along a direction is where both its posed local box and its
    posed face box reach (`_posed_boxes`).

    Frames only, so that a rigid motion of both meshes leaves it as it is. The face
    frames bound meshes stored in world coordinates (an identity matrix) along their own
    faces: a wall ending on another's face in a building turned on its site overlaps it
    by rounding along the other's face normal, where the world axes give a bound as large
    as the wall's turned box.

    slots: (m, 2) world meshes; returns the bound (m,) >= 0, +inf for a pair with a mesh
    without triangles, and the directions (m, 30, 3) unit vectors
    """
    first, second = slots[:, 0], slots[:, 1]
    directions = []
    for axes in (_unit_rows(world.linear.transpose(0, 2, 1)), world.face_axes):
        crosses = cross_rows(axes[first][:, :, None], axes[second][:, None, :]).reshape(-1, 9, 3)
        lengths = _length(crosses)[..., None]
        # Near-parallel axes give no direction of their own.
        crosses = np.where(
            lengths > 1e-9, crosses / np.maximum(lengths, 1e-300), axes[first][:, :1]
        )
        directions += [axes[first], axes[second], crosses]
    directions = np.concatenate(directions, axis=1)  # (m, 30, 3)
    overlap = _box_overlap(boxes, slots, directions)
    empty = (world.triangle_count[first] == 0) | (world.triangle_count[second] == 0)
    bound = np.where(empty, np.inf, np.maximum(np.nan_to_num(overlap, nan=np.inf), 0.0))
    return bound, directions


def _usable(directions: np.ndarray) -> np.ndarray:
    """Which of `directions` (..., 3), unit rows or zero, are directions: (...,) bool. A
    mesh flattened by a zero scale has a zero column in its matrix, and so a zero frame
    axis; along it every extent is 0, an "overlap" of 0 that separated nothing (a slab
    scaled flat through a wall was touching it)."""
    return _length(directions) > 0.5


def _per_mesh(world: _World, meshes: np.ndarray, value, dtype=bool) -> np.ndarray:
    """`value(mesh)` of each of the world meshes `meshes` (any shape), asked once per
    distinct `TriangleMesh`: same shape, `dtype`. A live update's world meshes are copies
    of a few (1,000 objects of 3 meshes): `_not_boxes`' products once per mesh, not per
    object."""
    distinct, at = np.unique(meshes, return_inverse=True)
    objects = [world.meshes[index] for index in distinct]
    by_object = {}
    for mesh in objects:
        if id(mesh) not in by_object:
            by_object[id(mesh)] = value(mesh)
    values = np.array([by_object[id(mesh)] for mesh in objects], dtype=dtype)
    return values[at].reshape(np.shape(meshes))


def _not_boxes(world: _World, meshes: np.ndarray) -> np.ndarray:
    """Whether each of the world meshes `meshes` (any shape) keeps `few_directions` of
    which some lie off its face frame's axes (a mitred wall, a wedge, a rafter cut
    plumb at its ends): same shape, bool. A box's face normals and edges are its face
    frame's axes, already among `_separating_bound`'s directions."""
    return _per_mesh(
        world,
        meshes,
        lambda mesh: (
            np.abs(mesh.few_directions @ mesh.face_frame).max(axis=1) < 1.0 - 1e-12
        ).any(),
    )


def _vertices_of(world: _World, meshes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The vertices of the world meshes `meshes` (k,), one mesh's after the other: (the
    row of `meshes` of each (p,), the points (p, 3))."""
    run, vertex = expand_runs(world.vertex_start[meshes], world.vertex_count[meshes])
    return run, take_rows(world.vertices, vertex)


def _vertex_centres(world: _World, meshes: np.ndarray) -> np.ndarray:
    """The mean (k, 3) of the vertices of each of the world meshes `meshes` (k,), each
    with some: a point that moves with its mesh."""
    counts = world.vertex_count[meshes]
    return np.add.reduceat(_vertices_of(world, meshes)[1], _starts(counts)) / counts[:, None]


def _by_separating_axes(normals: np.ndarray, edges: np.ndarray) -> np.ndarray:
    """Whether pairs whose two meshes keep `normals` face normals and `edges` edge
    directions ((k, 2) each, `_direction_counts`) are measured along the separating axis
    theorem's directions, both meshes' face normals and the crosses of their edges: each
    mesh keeps them, and they number at most `_PAIR_DIRECTIONS` (k,) bool. For two convex
    meshes their least overlap along those is the depth."""
    return (normals.sum(axis=1) + edges.prod(axis=1) <= _PAIR_DIRECTIONS) & (
        (normals + edges > 0).all(axis=1)
    )


def _direction_counts(world: _World, meshes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """How many face normals and edge directions each of the world meshes `meshes` (any
    shape) keeps (`TriangleMesh.few_directions`): two int64 arrays of its shape."""
    normals = _per_mesh(world, meshes, lambda mesh: mesh.normal_count, np.int64)
    directions = _per_mesh(world, meshes, lambda mesh: len(mesh.few_directions), np.int64)
    return normals, directions - normals


def _convex_shapes(world: _World, meshes: np.ndarray) -> np.ndarray:
    """Whether each of the world meshes `meshes` (any shape) is convex as a shape
    (`TriangleMesh.convex`, whatever its matrix: one flattening it keeps it convex):
    same shape, bool. For two that keep `few_directions` (boxes, wedges, prisms) the
    separating axis theorem's directions give the exact penetration depth
    (`_face_and_edge_axes`)."""
    return _per_mesh(world, meshes, lambda mesh: mesh.convex)


def _face_and_edge_axes(world: _World, slots: np.ndarray, fallback: np.ndarray) -> np.ndarray:
    """The separating axis theorem's directions of each pair of world meshes `slots`
    (k, 2), posed: both meshes' face normals and the cross products of their edges, from
    their `TriangleMesh.few_directions`: (k, N1 + N2 + E1 E2, 3) unit rows (N1, E1 the
    most face normals and edge directions any of the pairs' first meshes keeps, N2, E2 of
    their second ones), `fallback` (k, 3) unit rows where a mesh keeps fewer, a matrix
    flattens one or two edges are parallel.

    For two convex meshes the least overlap of their vertices along these is their
    penetration depth: the 30 frame axes of `_separating_bound` miss a mitred wall's end
    face, where a wall's corner overlapping its neighbour's by 0.10 m came out 0.32 m
    deep."""
    meshes, at = np.unique(slots, return_inverse=True)
    normal_counts, edge_counts = _direction_counts(world, meshes)
    normals = np.full((len(meshes), normal_counts.max(initial=0), 3), np.nan)
    edges = np.full((len(meshes), edge_counts.max(initial=0), 3), np.nan)
    for row, mesh in enumerate(world.meshes[index] for index in meshes):
        count = mesh.normal_count
        normals[row, :count] = mesh.few_directions[:count]
        edges[row, : len(mesh.few_directions) - count] = mesh.few_directions[count:]
    # Normals are posed by the cofactor matrix (det L times L^-T, defined where L is
    # singular too), edges by the linear part L itself.
    linear = world.linear[meshes]
    columns = linear.transpose(0, 2, 1)
    cofactor = np.stack(
        [cross_rows(columns[:, (k + 1) % 3], columns[:, (k + 2) % 3]) for k in range(3)], axis=2
    )
    normals = (cofactor[:, None] @ normals[..., None])[..., 0]
    edges = (linear[:, None] @ edges[..., None])[..., 0]
    # Each side only as wide as its own meshes need.
    sides = []
    for side in at.reshape(-1, 2).T:
        normal_side = int(normal_counts[side].max(initial=0))
        edge_side = int(edge_counts[side].max(initial=0))
        sides.append((normals[side, :normal_side], edges[side, :edge_side]))
    (normals_first, edges_first), (normals_second, edges_second) = sides
    crosses = cross_rows(edges_first[:, :, None], edges_second[:, None, :]).reshape(
        len(slots), -1, 3
    )
    # Edges within about 1e-9 rad of parallel give no direction of their own (as in
    # `_separating_bound`); NaN rows are directions a mesh does not have (comparisons
    # with NaN are false).
    with np.errstate(invalid="ignore"):
        parallel_below = 1e-9 * (
            _length(edges_first)[:, :, None] * _length(edges_second)[:, None, :]
        )
        axes = np.concatenate([normals_first, normals_second, crosses], axis=1)
        lengths = _length(axes)
        floor = np.concatenate(
            [
                np.full(
                    (len(slots), normals_first.shape[1] + normals_second.shape[1]),
                    np.finfo(float).tiny,
                ),
                parallel_below.reshape(len(slots), -1),
            ],
            axis=1,
        )
        usable = lengths > floor
    unit = axes / np.where(usable, lengths, 1.0)[..., None]
    return np.where(usable[..., None], unit, fallback[:, None])


def _distinct_per_pair(directions: np.ndarray) -> np.ndarray:
    """Each pair's distinct `directions` (k, d, 3) unit rows, in their order: (k, w, 3),
    w the most any pair keeps, each pair's padded with its first direction. A row is kept
    where it is parallel (either way, to within about 4e-8 rad) to no row kept before it.

    The frame axes and the face normals of a building's elements mostly coincide, and
    every direction costs a projection of both meshes' vertices. Each round keeps every
    pair's first row not yet parallel to a kept one and marks the pair's rows parallel
    to it. Up to `_PARALLEL_TABLE_ROWS` rows, every two rows of a pair are measured at
    once (k d d products; a live update's curved pairs keep nearly all of their 30), so
    that the rounds only pick rows; beyond, each round measures its rows against the
    pair's (k d w products: 110 rows of which 5 to 8 distinct on the FZK-Haus's mitred
    elements). Either way the same products, bit for bit."""
    if directions.shape[1] <= _PARALLEL_TABLE_ROWS:
        return first_distinct(directions, ~_kept_by_table(directions))
    pairs = np.arange(len(directions))
    kept = np.zeros(directions.shape[:2], dtype=bool)
    covered = np.zeros(directions.shape[:2], dtype=bool)
    while len(pairs):
        lead = np.argmin(covered[pairs], axis=1)  # the first row not covered
        kept[pairs, lead] = True
        leading = directions[pairs, lead][:, None]
        covered[pairs] |= np.abs(dot_rows(leading, directions[pairs])) > 1.0 - 1e-15
        covered[pairs, lead] = True
        pairs = pairs[~covered[pairs].all(axis=1)]
    return first_distinct(directions, ~kept)


def _kept_by_table(directions: np.ndarray) -> np.ndarray:
    """Which of each pair's `directions` (k, d, 3) `_distinct_per_pair` keeps: (k, d) bool,
    from the table of every two rows of a pair.

    Its rounds keep a pair's first row not yet covered and cover the rows parallel to
    it, so a row is kept exactly when no row kept before it is parallel to it (a kept
    row covers no row before it: that row, not covered, would have been kept first).
    That is decided for many rows at once: a row with no parallel row before it is kept,
    one with a kept parallel row before it is not, and one whose parallel rows before it
    are all decided and none kept is; the first undecided row is decided in each
    round. A live update's curved pairs keep nearly all of their 30 rows in one round,
    not 30."""
    parallel = np.abs(dot_rows(directions[:, :, None], directions[:, None, :])) > 1.0 - 1e-15
    # [pair, row, other]: `other` comes before `row` and is parallel to it.
    before = parallel & np.tri(directions.shape[1], k=-1, dtype=bool)
    kept = ~before.any(axis=2)
    decided = kept.copy()
    while not decided.all():
        covered = (before & kept[:, None, :]).any(axis=2)
        pending = (before & ~decided[:, None, :]).any(axis=2)
        kept |= ~decided & ~covered & ~pending
        decided |= covered | ~pending
    return kept


# `_distinct_per_pair` measures every two directions of a pair at once up to this many.
_PARALLEL_TABLE_ROWS = 64


def _projected_overlap(
    world: _World, slots: np.ndarray, directions: np.ndarray, near=None, ways=None, floor=0.0
):
    """For each pair of world meshes `slots` (k, 2), the smallest overlap of the two
    meshes' vertices' extents along its `directions` (k, d, 3) unit vectors: (k,) >= 0,
    a translation that separates them (+inf where a mesh has no vertices), and the
    direction it is along (k, 3) (the first where a mesh has no vertices).

    near: optional (k, 3) unit rows and a chord c, every direction of a pair within c
    of its row, and optionally the world meshes' `_vertex_diameters` (u,) (NaN where not
    needed, else they are computed): only the vertices that can be extreme along them
    are projected, those within c times the mesh's diameter of its extremes along the
    row (for any unit u within c of the row v, u.p - u.q differs from v.p - v.q by at
    most c |p - q|).
    ways: optional `_extent_ways(world)`, for a caller measuring the same world in rounds.
    floor: the least overlap returned; -inf for the gap of pairs apart (negative).

    Exact where boxes are not: a rafter resting on a gable wall's sloped top overlaps it
    by rounding along the rafter's face normal, where the wall's box reaches up to the
    gable's corner. Measured in chunks of pairs, so that the vertices' projections
    (vertices times directions) stay small."""
    overlap = np.full(len(slots), np.inf)
    along_least = directions[:, 0].copy()
    # A mesh without vertices has no extent: nothing to separate.
    measured = np.flatnonzero((world.vertex_count[slots] > 0).all(axis=1))
    # Large meshes' extents come from their trees (`_walked_extents`), those of meshes
    # of many vertices or met by many of the pairs from screened projections
    # (`_screened_extents`): both count as few vertices in the chunks.
    # A flat mesh (a floor: its vertices' box along its face frame as thin as float32
    # resolves) ties every vertex along its normal: its tree prunes nothing there and
    # screening keeps every vertex, so its vertices are listed (a 160,000 vertex floor
    # under 240 sunk cubes: 23.7 s walked, 1.6 s listed).
    walked, flat = _extent_ways(world) if ways is None else ways
    meetings = np.bincount(slots[measured].ravel(), minlength=len(world.vertex_count))
    screened = ~walked & ~flat & (world.vertex_count * meetings > _SCREENED_WORK)
    counts = np.where(
        (walked | screened)[slots[measured]], 1, world.vertex_count[slots[measured]]
    ).sum(axis=1)
    for part in _chunks(counts, _CHUNK_ROWS):
        rows = measured[part]
        chosen = directions[rows]
        # Both meshes of each pair in one call, first meshes then second ones (each row is
        # measured alone): `_extents`' numpy calls once on the small calls of a live update.
        band = None if near is None else (np.concatenate([near[0][rows]] * 2), *near[1:])
        low, high = _extents(
            world,
            slots[rows].T.reshape(-1),
            np.concatenate([chosen, chosen]),
            walked,
            band,
            screened,
        )
        overlap[rows], along_least[rows] = _least_overlap(low, high, chosen, floor)
    return overlap, along_least


def _least_overlap(low: np.ndarray, high: np.ndarray, chosen: np.ndarray, floor=0.0):
    """`_projected_overlap`'s result for c pairs from the extents low, high (2c, d) of
    their first meshes then their second ones along their directions `chosen` (c, d, 3):
    (overlap (c,), direction (c, 3)), the overlap no less than `floor`."""
    widths = np.where(_usable(chosen), _widths(low, high), np.inf)
    least = widths.argmin(axis=1)
    return np.maximum(pick_rows(widths, least), floor), pick_rows(chosen, least)


def _widths(low: np.ndarray, high: np.ndarray) -> np.ndarray:
    """How far the two meshes of c pairs overlap along each direction (c, d), from the
    extents low, high (2c, d) of their first meshes then their second ones (as
    `_projected_overlap` lays them out): negative for a gap."""
    count = len(low) // 2
    return np.minimum(high[:count] - low[count:], high[count:] - low[:count])


def _extent_ways(world: _World) -> tuple[np.ndarray, np.ndarray]:
    """Which world meshes' extents `_projected_overlap` finds through their trees, and
    which are flat (both (u,) bool): see there."""
    thickness = world.face_hi - world.face_lo
    flat = reduce_short_axis(np.minimum, thickness) <= 2.0**-20 * reduce_short_axis(
        np.maximum, thickness
    )
    return (world.vertex_count > _WALKED_EXTENTS) & ~flat, flat


def _vertex_diameters(world: _World, meshes: np.ndarray) -> np.ndarray:
    """The diameter (k,) of the vertices of each of world meshes `meshes` (k,), every one
    with vertices: the diagonal of their box. All its vertices: `mesh_lo` and `mesh_hi`
    bound its triangles, and a far vertex in no triangle may be the one extreme along a
    tilt."""
    _, points = _vertices_of(world, meshes)
    starts = _starts(world.vertex_count[meshes])
    return _length(np.maximum.reduceat(points, starts) - np.minimum.reduceat(points, starts))


def _extents(
    world: _World, meshes: np.ndarray, directions: np.ndarray, walked, near, screened=None
):
    """The least and largest projections (k, d) each of the vertices of world meshes
    `meshes` (k,) along its `directions` (k, d, 3): (low, high). Those of meshes `walked`
    ((u,) bool) are found through their trees (`_walked_extents`), those of meshes
    `screened` ((u,) bool, optional) through `_screened_extents`, the others' by
    projecting every vertex, or with `near` (as `_projected_overlap` takes it) those
    within its band. The same numbers whichever way (each vertex's projection is
    `_projections`')."""
    low = np.full(directions.shape[:2], np.inf)
    high = np.full(directions.shape[:2], -np.inf)
    tree = walked[meshes]
    if tree.any():
        rows = np.flatnonzero(tree)
        low[rows], high[rows] = _walked_extents(world, meshes[rows], directions[rows])
    if screened is not None:
        screen = screened[meshes] & ~tree
        if screen.any():
            rows = np.flatnonzero(screen)
            low[rows], high[rows], tied = _screened_extents(world, meshes[rows], directions[rows])
            screen[rows[tied]] = False  # listed after all
            tree = tree | screen
    listed = np.flatnonzero(~tree)
    # Meshes screening left to the list come in whole rows; the list's arrays (a point
    # per vertex and row) are kept to about `_CHUNK_ROWS` points at a time.
    for part in _chunks(world.vertex_count[meshes[listed]], _CHUNK_ROWS):
        rows = listed[part]
        band = None if near is None else (near[0][rows], *near[1:])
        low[rows], high[rows] = _listed_extents(world, meshes[rows], directions[rows], band)
    return low, high


def _listed_extents(world: _World, meshes: np.ndarray, directions: np.ndarray, near):
    """`_extents` of meshes `meshes` (k,) along their `directions` (k, d, 3) by
    projecting every vertex, or with `near` those within its band."""
    pair, points = _vertices_of(world, meshes)
    if near is not None:
        row, chord, *known = near
        diameter = known[0][meshes] if known else _vertex_diameters(world, meshes)
        near = (row, chord * diameter + world.slack)
    return _point_extents(pair, points, world.vertex_count[meshes], directions, near)


def _point_extents(pair, points, counts, directions, near):
    """The least and largest projections (k, d) each of points (p, 3) in runs of `counts`
    (k,) (`pair` (p,) the run of each) along the run's `directions` (k, d, 3): (low,
    high). near: optional rows (k, 3) and bands (k,): only the points within its band of
    the run's extremes along its row are projected (`_listed_extents`)."""
    starts = _starts(counts)
    if near is not None:
        row, band = near
        ahead = dot_rows(points, take_rows(row, pair))
        # The extremes along the row are kept: no mesh is left without a point.
        keep = (ahead >= (np.maximum.reduceat(ahead, starts) - band)[pair]) | (
            ahead <= (np.minimum.reduceat(ahead, starts) + band)[pair]
        )
        pair, points = pair[keep], take_rows(points, keep)
        starts = _starts(np.bincount(pair, minlength=len(counts)))
    along = _projections(directions, pair, points)
    return np.minimum.reduceat(along, starts), np.maximum.reduceat(along, starts)


def _projections(directions: np.ndarray, rows: np.ndarray, points: np.ndarray) -> np.ndarray:
    """Each of `points` (p, 3) projected on the directions (d, 3) of its row `rows` (p,)
    of `directions` (k, d, 3): (p, d). Every way to a mesh's extents projects its
    points through this one product, so that they give the same numbers bit for bit."""
    return (take_rows(directions, rows) @ points[:, :, None])[:, :, 0]


# A mesh (not walked) whose vertices times the pairs it is in exceed this is measured
# along the pairs' directions by `_screened_extents`, not vertex by vertex: 240 cubes
# pushed into a terrain took 6.7 s projecting its 10,000 vertices for each cube along
# the tilted bound's 60 directions (a wide terrain keeps all its vertices within the
# tilts' band), 0.64 s screened; at 441 vertices 0.37-0.46 s against 0.26-0.29 s. A mesh
# in one pair gains from about 4,000 vertices (1.28 s against 1.13 s for 100 pairs of
# round meshes of 4,514), and loses nothing from 266.
_SCREENED_WORK = 8192
# `_screened_extents` measures this many projections at a time (float32: 16 MB).
_SCREENED_BLOCK = 1 << 22
# A mesh with a direction along which more than this fraction of its vertices lie
# within float32's error of an extreme is listed instead of screened: 240 cubes sunk
# into a flat floor of 10,000 vertices took 1.1 s screened (every vertex a candidate
# along the floor's normal), 0.45-0.5 s listed; 40,000 vertices 1.95 s, 0.71-0.74 s.
_SCREEN_TIES = 0.25


def _screened_extents(world: _World, meshes: np.ndarray, directions: np.ndarray):
    """The least and largest projections of the vertices of world meshes `meshes` (k,)
    along each one's `directions` (k, d, 3): (low (k, d), high (k, d)), the numbers that
    projecting every vertex as `_extents` does gives.

    Each distinct mesh's vertices, moved to their box's centre, are projected on all its
    rows' directions at once in float32 (one matrix product, where projecting vertex by
    vertex makes a small product per vertex); only the vertices within float32's error
    of a least or largest of these can be extreme, and those are projected again as
    `_projections` does. float32's error is bounded from above: each product and sum of
    the three rounds by at most 2^-24 of its magnitude, the vertices' and directions'
    conversions too, at most 6 roundings of sum |u_i| |p_i - c_i| for each projection (or
    of 2^-150 each, below float32's normal range), and float64's on the vertices
    themselves; twice the bound, with room, is screened.

    Where a direction has many vertices within that error of its extreme (a flat floor
    along its normal: every vertex ties), screening gains nothing over listing, only
    costs: that mesh's rows are left to `_extents`' list, and `tied` (k,) bool says which."""
    low = np.empty(directions.shape[:2])
    high = np.empty(directions.shape[:2])
    tied = np.zeros(len(meshes), dtype=bool)
    for mesh in np.unique(meshes):
        rows = np.flatnonzero(meshes == mesh)
        start, size = world.vertex_start[mesh], world.vertex_count[mesh]
        screened = _screened_vertices(world.vertices[start : start + size], directions[rows])
        if screened is None:
            tied[rows] = True
            continue
        row, vertex = screened
        along = _projections(directions[rows], row, take_rows(world.vertices, vertex + start))
        starts = _starts(np.bincount(row, minlength=len(rows)))
        low[rows] = np.minimum.reduceat(along, starts)
        high[rows] = np.maximum.reduceat(along, starts)
    return low, high, tied


def _screened_vertices(vertices: np.ndarray, directions: np.ndarray):
    """The vertices (n, 3) of one mesh that may be extreme along any of the directions
    (r, d, 3) of each row, as `_screened_extents` screens them: rows (s,) ascending and
    vertex indices (s,), each row with one at least; None where a direction has more
    than `_SCREEN_TIES` of the vertices."""
    count, size = directions.shape[1], len(vertices)
    moved = vertices - (vertices.max(axis=0) + vertices.min(axis=0)) / 2.0
    reach = np.abs(moved).max()
    if not reach < 2.0**100:  # beyond float32's range (never in a scene): all of them
        return np.repeat(np.arange(len(directions)), size), np.tile(
            np.arange(size), len(directions)
        )
    # Per direction, how far float32 may put a projection from its float64 value; below
    # float32's normal range each rounding is off by up to 2^-150 instead (a mesh a
    # fraction of 1e-38 across), covered by 2^-140.
    error = (
        np.abs(directions).sum(axis=2) * (2.0**-19 * reach + 2.0**-46 * np.abs(vertices).max())
        + 2.0**-140
    )
    moved = np.ascontiguousarray(moved.T, dtype=np.float32)  # (3, n)
    rows, indices = [], []
    block = max(1, _SCREENED_BLOCK // (count * size))
    for first in range(0, len(directions), block):
        part = directions[first : first + block]
        along = part.reshape(-1, 3).astype(np.float32) @ moved  # (b d, n)
        slack = error[first : first + block].reshape(-1, 1).astype(np.float32)
        extreme = (along >= along.max(axis=1, keepdims=True) - slack) | (
            along <= along.min(axis=1, keepdims=True) + slack
        )
        # A whole count first: counting each direction's (a sum along rows) cost a quarter
        # of the 240 cubes' call on a 20 k triangle terrain, where no direction ties.
        if np.count_nonzero(extreme) > _SCREEN_TIES * size * len(part):
            if (extreme.sum(axis=1) > _SCREEN_TIES * size).any():
                return None
        row, vertex = np.nonzero(extreme.reshape(len(part), count, size).any(axis=1))
        rows.append(row + first)
        indices.append(vertex)
    return np.concatenate(rows), np.concatenate(indices)


def _lower_and_raise(low: np.ndarray, high: np.ndarray, query: np.ndarray, values) -> None:
    """Lower `low` and raise `high` (k, d) of rows `query` (p,) to values (p, d)."""
    if not len(query):
        return
    order = np.argsort(query, kind="stable")
    query, values = query[order], take_rows(values, order)
    starts = np.flatnonzero(run_starts(query))
    met = query[starts]
    low[met] = np.minimum(low[met], np.minimum.reduceat(values, starts))
    high[met] = np.maximum(high[met], np.maximum.reduceat(values, starts))


# Meshes of more vertices than this are measured along a pair's directions through their
# trees (`_walked_extents`), not screened (`_screened_extents`): 240 cubes pushed into a
# terrain took 0.6-1.4 s screened against 1.7-7.8 s walked from 10,000 to 90,000
# vertices, 0.94 s against 0.57 s at 250,000 (`bench_large_mesh.py`'s terrain of equal
# hills and one of random ones). Walking a round mesh costs more: nearly every node may
# hold an extreme along one of a pair's directions.
_WALKED_EXTENTS = 131_072


def _walked_extents(world: _World, meshes: np.ndarray, directions: np.ndarray):
    """The least and largest projections of the vertices of world meshes `meshes` (k,)
    along each one's `directions` (k, d, 3): (low (k, d), high (k, d)), the numbers that
    projecting every vertex as `_extents` does gives.

    Each mesh's tree is walked one level at a time for all meshes at once. The vertices
    in no triangle are projected first; every node met offers its first corner
    (`_Forest.corner`), each leaf its triangles' corners, and a node is walked down only
    where its box may reach beyond the extents found so far along some direction (by
    more than the rounding of a box's bound, `_World.slack`). A point's projection is
    the product `_extents` takes, so the extremes are the same numbers."""
    tree = world.tree
    low = np.full(directions.shape[:2], np.inf)
    high = np.full(directions.shape[:2], -np.inf)

    def offer(query: np.ndarray, points: np.ndarray) -> None:
        _lower_and_raise(low, high, query, _projections(directions, query, points))

    loose_query, loose = _loose_vertices(world, meshes, np.arange(len(meshes)))
    offer(loose_query, take_rows(world.vertices, loose))
    query, node = np.arange(len(meshes)), tree.root[meshes]
    while len(query):
        filled = np.flatnonzero(tree.count[node] > 0)  # a node without triangles has no corner
        query, node = query[filled], node[filled]
        offer(query, take_rows(tree.corner, node))
        along = take_rows(directions, query)  # (a, d, 3)
        at_lo = along * take_rows(tree.lo, node)[:, None]
        at_hi = along * take_rows(tree.hi, node)[:, None]
        up = reduce_short_axis(np.add, np.maximum(at_lo, at_hi)) + world.slack  # (a, d)
        down = reduce_short_axis(np.add, np.minimum(at_lo, at_hi)) - world.slack
        onward = np.flatnonzero(((up > high[query]) | (down < low[query])).any(axis=1))
        query, node = query[onward], node[onward]
        leaf = tree.child[node] < 0
        triangles = tree.leaf_triangles[tree.leaf[node[leaf]]]  # (l, w), -1 past a count
        row, column = np.nonzero(triangles >= 0)
        corners = take_rows(world.corners, triangles[row, column]).reshape(-1, 3)
        offer(np.repeat(query[leaf][row], 3), corners)
        inner = ~leaf
        query = np.repeat(query[inner], 2)
        node = (tree.child[node[inner]][:, None] + np.arange(2)).reshape(-1)
    return low, high


# A bound of a pair with a mesh of many directions (a curved one) is refined by tilting its
# direction by each of these angles (radians) at once, moving to the best tilt while one
# lowers it, at most _BOUND_TILT_STEPS times.
_BOUND_TILTS = np.array([0.1, 0.03, 0.01, 0.003, 0.001])
_BOUND_TILT_STEPS = 12
# The widest tilt moves a direction by this chord, 2 sin(angle / 2) (`_projected_overlap`'s
# `near`), with room for rounding.
_TILT_CHORD = 2.0 * math.sin(_BOUND_TILTS.max() / 2.0) * (1.0 + 1e-9)
# Their cosines and sines by Python's math, not numpy's (see `columns.cubed`).
_BOUND_TILT_COSINES = np.array([math.cos(angle) for angle in _BOUND_TILTS])
_BOUND_TILT_SINES = np.array([math.sin(angle) for angle in _BOUND_TILTS])
# A face axis within about this angle (radians) of the direction gives no side to tilt to.
_TILT_SIDE = 1e-6


def _tilted_overlap(world: _World, slots: np.ndarray, overlap: np.ndarray, along: np.ndarray):
    """`_projected_overlap` of the pairs of world meshes `slots` (k, 2) lowered from
    `overlap` (k,), measured along `along` (k, 3) unit rows, by tilting the direction
    towards both meshes' face axes, either way, by each of `_BOUND_TILTS` at once, and
    moving to the best tilt while one lowers it (at most `_BOUND_TILT_STEPS` moves): (k,).

    Along any direction the overlap of the vertices' extents separates the two, so every
    tilt keeps a bound. For two convex meshes the least over all directions is their
    penetration depth: a curved element's facets have too many normals for the
    separating axis theorem's directions (`TriangleMesh.few_directions`), and the frames'
    directions alone left the depths of turned UV spheres and cylinders pushed into each
    other up to 4 times coal's EPA. The face axes move with the meshes and do not depend
    on which comes first, so the search is the same under a rigid motion and for the
    pair either way round."""
    overlap, along = overlap.copy(), along.copy()
    axes = np.concatenate([world.face_axes[slots[:, 0]], world.face_axes[slots[:, 1]]], axis=1)
    axes = np.concatenate([axes, -axes], axis=1)  # (k, 12, 3)
    cosines = _BOUND_TILT_COSINES[None, :, None, None]
    sines = _BOUND_TILT_SINES[None, :, None, None]
    active = np.arange(len(slots))
    # What does not change from round to round, once: each mesh's way to its extents, its
    # vertices' diameter (the same numbers, each mesh's alone) and, where `_projected_overlap`
    # would list them in one chunk, the pairs' vertices (gathering them again took a
    # quarter of a live update's rounds, about 8 a call).
    ways = _extent_ways(world)
    diameters = np.full(len(world.vertex_count), np.nan)
    meshes = np.unique(slots)
    # Not of a walked mesh (a terrain's 10^5 or more vertices): it is never listed.
    meshes = meshes[(world.vertex_count[meshes] > 0) & ~ways[0][meshes]]
    diameters[meshes] = _vertex_diameters(world, meshes)
    listing = _tilt_listing(world, slots, ways, diameters)
    for _ in range(_BOUND_TILT_STEPS):
        if not len(active):
            break
        ahead, turns = along[active], axes[active]
        direction = ahead[:, None]
        sides = turns - dot_rows(turns, direction)[..., None] * direction
        length = _length(sides)
        # An axis along the direction gives no side to tilt to.
        sides = np.where(
            (length > _TILT_SIDE)[..., None], sides / np.maximum(length, _TILT_SIDE)[..., None], 0.0
        )
        tilts = (cosines * direction[:, None] + sines * sides[:, None]).reshape(len(active), -1, 3)
        tilts /= _length(tilts)[..., None]
        if listing is None:
            tilted, best = _projected_overlap(
                world, slots[active], tilts, (ahead, _TILT_CHORD, diameters), ways
            )
        else:
            tilted, best = _listed_tilt_overlap(listing, active, tilts, ahead)
        better = tilted < overlap[active]
        active = active[better]
        overlap[active], along[active] = tilted[better], best[better]
    return overlap


def _tilt_listing(world: _World, slots: np.ndarray, ways, diameters):
    """The vertices that `_projected_overlap` lists for the pairs of world meshes `slots`
    (k, 2) in `_tilted_overlap`'s rounds, gathered once for all of them where it lists
    every mesh's in one chunk (pairs of small meshes, as a live update's): (the mesh row
    (p,) of each point, r for pair r's first mesh and k + r for its second; the points
    (p, 3), each mesh row's in the mesh's order; each mesh row's vertex count (2k,) and
    band (2k,), as `_listed_extents` makes it); None where it would not (a mesh without
    vertices, or walked or screened, or more vertices than a chunk). A round's pairs are
    some of these, so a round lists in one chunk too. ways: `_extent_ways`; diameters:
    (u,) `_vertex_diameters` of the meshes in `slots`."""
    walked, flat = ways
    meshes = slots.T.reshape(-1)
    counts = world.vertex_count[meshes]
    # A round's pairs are some of these: they meet each mesh no more often.
    meetings = np.bincount(meshes, minlength=len(world.vertex_count))
    screened = ~walked & ~flat & (world.vertex_count * meetings > _SCREENED_WORK)
    if (counts == 0).any() or (walked | screened)[meshes].any() or counts.sum() > _CHUNK_ROWS:
        return None
    mesh_row, points = _vertices_of(world, meshes)
    band = _TILT_CHORD * diameters[meshes] + world.slack
    return mesh_row, points, counts, band


def _listed_tilt_overlap(listing, active: np.ndarray, tilts: np.ndarray, ahead: np.ndarray):
    """`_projected_overlap` of the pairs `active` (a,) ascending of a `_tilt_listing`
    along their `tilts` (a, d, 3) near their rows `ahead` (a, 3): the same points in the
    same order, projected by the same products, without gathering them again."""
    mesh_row, points, counts, band = listing
    # The active pairs' first meshes, then their second ones, as `_projected_overlap`
    # orders them.
    chosen = np.zeros(len(counts), dtype=bool)
    chosen[active] = True
    chosen[active + len(counts) // 2] = True
    rows = chosen[mesh_row]
    low, high = _point_extents(
        (np.cumsum(chosen) - 1)[mesh_row[rows]],
        take_rows(points, rows),
        counts[chosen],
        np.concatenate([tilts, tilts]),
        (np.concatenate([ahead, ahead]), band[chosen]),
    )
    return _least_overlap(low, high, tilts)


def _box_extents(corners: np.ndarray, directions: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Where a mesh reaches along each direction, from two boxes that hold it.

    corners: (m, 16, 3), the corners of each mesh's two boxes (8 each); directions:
        (m, d, 3) unit vectors
    returns: low, high (m, d), the tighter of the two boxes' extents
    """
    # (16, m, d): each corner's slice whole, as `reduce_short_axis` combines them.
    along = np.moveaxis(directions @ corners.transpose(0, 2, 1), 2, 0).copy()
    low = np.maximum(
        reduce_short_axis(np.minimum, along[:8], 0), reduce_short_axis(np.minimum, along[8:], 0)
    )
    high = np.minimum(
        reduce_short_axis(np.maximum, along[:8], 0), reduce_short_axis(np.maximum, along[8:], 0)
    )
    return low, high


def _combine(
    nearest,
    crossing,
    crossing_point,
    i_in_j,
    j_in_i,
    shared_point,
    bound_depth,
    bound,
    epsilon,
    max_distance,
    open_pair,
) -> MeshContacts:
    """The pairs' `MeshContacts` from the per-pair stages (each a `_Best` whose value is
    the distance, or minus a depth; witness points on mesh i first), the point where the
    triangles of each pair's deepest crossing meet (m, 3) (NaN where none crosses), a
    point of the faces each pair shares facing the same way (m, 3) (depth (c), the bound; NaN where
    it shares none or (c) does not apply), the depth of pairs whose bound is their
    depth (m,) (depth (c), two convex meshes penetrating; +inf for the others), the
    separating bound (m,) that caps the depth and the pairs' contact epsilon (m,)."""
    faces_shared = np.isfinite(shared_point[:, 0])
    estimate = -np.minimum(np.minimum(crossing.value, i_in_j.value), j_in_i.value)
    depth = np.minimum(np.where(np.isfinite(bound_depth), np.inf, estimate), bound)
    relation = np.full(len(depth), APART, dtype=np.int8)
    # A crossing that a move of at most eps separates is a touch.
    crossing_value = np.where(depth > epsilon, crossing.value, 0.0)
    relation[nearest.value <= epsilon] = TOUCHING
    # Inside without the surfaces meeting is containment; with them meeting (along edges,
    # or crossing) the volumes overlap through the surfaces.
    apart = nearest.value > epsilon
    relation[(j_in_i.value < 0) & apart] = J_INSIDE_I
    relation[(i_in_j.value < 0) & apart] = I_INSIDE_J
    relation[
        (crossing_value < 0)
        | (((i_in_j.value < 0) | (j_in_i.value < 0)) & ~apart)
        | (faces_shared & (depth > epsilon))
    ] = CROSSING
    depth[depth <= epsilon] = 0.0
    distance = np.where(depth > 0, -depth, nearest.value)
    far = (depth <= 0) & (nearest.value > np.maximum(max_distance, epsilon))
    distance[far] = np.inf
    point_i, point_j = nearest.first.copy(), nearest.second.copy()
    point_i[far] = np.nan
    point_j[far] = np.nan
    # A depth (c) keeps the witnesses of the deepest (a) or (b) where there is one, and
    # a point of the faces shared otherwise.
    estimated = (depth > 0) & (estimate > 0)
    for stage in (j_in_i, i_in_j, crossing):
        deepest = estimated & (stage.value == -estimate)
        point_i[deepest], point_j[deepest] = stage.first[deepest], stage.second[deepest]
    # A crossing's witnesses farther apart than the depth do not show where the meshes
    # overlap: the shallower triangle's deepest corner may lie beyond the other's face,
    # up to a face's length away, and a depth capped by a shorter separating move keeps
    # the deeper estimate's witnesses (on the Allplan model, witnesses 7.4 m apart for a
    # depth of 0.3 mm). Both are then the point where that crossing's triangles meet,
    # on both surfaces, so that the clash point lies where the two cross.
    by_crossing = estimated & (crossing.value == -estimate)
    gap = _length(point_j - point_i)
    met = by_crossing & (gap > depth + epsilon) & np.isfinite(crossing_point[:, 0])
    point_i[met], point_j[met] = crossing_point[met], crossing_point[met]
    alone = (depth > 0) & faces_shared & ~(estimate > 0)
    point_i[alone], point_j[alone] = shared_point[alone], shared_point[alone]
    return MeshContacts(distance, point_i, point_j, relation, open_pair)
