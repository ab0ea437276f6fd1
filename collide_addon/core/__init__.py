"""The collision core: numpy and the standard library only, no Blender.

    from collide_addon.core import ShapeBatch, pair_distance, pair_intersects, find_pairs

`find_contacts(batch, margin)` is find_pairs plus the pair_distance of each pair found,
computed once; `distances_within` does the same for a given list of pairs. For
successive calls on shapes that move a little (live updates), pass a `CoherentBounds`
to `find_contacts` so that the broad phase builds on the previous call's work.

One layer per module; each imports only modules listed before it:

- `constants`: tolerances, shape kinds, the cube-corner table; `columns`: dataclass
  concatenation; `threads`: independent parts of numpy work on several threads
- `shapes`: `ShapeBatch`, n boxes, spheres and capsules as arrays
- `box_pairs`, `narrow`: exact signed distance of pairs of shapes
- `grid`: every overlapping pair of axis-aligned boxes; `coherent`: the same across
  calls on boxes that move a little
- `broad`: `find_pairs` and `find_contacts`, the grid followed by the narrow phase
- `contact`: when a signed distance is contact; `continuous`: the first contact of
  moving pairs between two poses (conservative advancement over swept bounds)
- `fit`: proxies fitted to vertices; `place`: fits placed in the world by an object's
  matrix; `wireframe`: line segments that draw shapes
- `synthetic`: random scenes for tests and benchmarks
- `mesh`: `prepare_mesh` and `mesh_contacts`, exact contact of triangle meshes;
  `PreparedMeshes` prepares a translated copy's mesh from its shape's; `PosedMeshes`
  keeps large meshes posed from one call to the next
- `mesh_sweep`: the first contact of meshes moving with their proxies between two
  poses (conservative advancement on `mesh_contacts`)
- `faces`: the triangles of faces of three and four corners, as Blender splits them
- `resolve`: `separating_translations` (the minimum translation that pushes proxies
  apart) and `mesh_separating_translations` (a checked push-apart of meshes)
"""

from .broad import KeptContacts, find_contacts, find_pairs
from .coherent import CoherentBounds
from .constants import KIND_BOX, KIND_CAPSULE, KIND_NAMES, KIND_SPHERE
from .mesh import (
    APART,
    CROSSING,
    I_INSIDE_J,
    J_INSIDE_I,
    TOUCHING,
    MeshContacts,
    PosedMeshes,
    PreparedMeshes,
    TriangleMesh,
    mesh_contacts,
    prepare_mesh,
)
from .narrow import PairResult, distances_within, pair_distance, pair_intersects
from .resolve import MeshFixes, mesh_separating_translations, separating_translations
from .shapes import ShapeBatch

__all__ = [
    "APART",
    "CROSSING",
    "I_INSIDE_J",
    "J_INSIDE_I",
    "KIND_BOX",
    "KIND_CAPSULE",
    "KIND_NAMES",
    "KIND_SPHERE",
    "TOUCHING",
    "CoherentBounds",
    "KeptContacts",
    "MeshContacts",
    "MeshFixes",
    "PairResult",
    "PosedMeshes",
    "PreparedMeshes",
    "ShapeBatch",
    "TriangleMesh",
    "distances_within",
    "find_contacts",
    "find_pairs",
    "mesh_contacts",
    "mesh_separating_translations",
    "pair_distance",
    "pair_intersects",
    "prepare_mesh",
    "separating_translations",
]
