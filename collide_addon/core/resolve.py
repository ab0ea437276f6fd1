"""Translations that push clashing pairs apart: proxies in closed form, meshes by search.

    moves = separating_translations(batch, i, j, clearance)        # (m, 3), moves shape j
    fixes = mesh_separating_translations(meshes, matrices, pairs, directions, clearance)

Proxies: the minimum translation distance (MTD) of a pair is the shortest move of one
shape that leaves the two apart. For convex shapes it is the penetration depth along its
direction, which is what `narrow.pair_distance` returns for an overlapping pair (its
distance is minus the depth, its normal the direction, from i towards j), so the MTD is
read off the narrow phase rather than computed a second way:

box-box            the SAT axis of least overlap over the 15 axes (`box_pairs`): exact,
                   except that cross axes of edges within PARALLEL_CROSS_NORM (1e-7) of
                   parallel are skipped, which can only lengthen the move, by at most
                   1e-7 times the larger half-extent (see `box_pairs.separations`)
sphere-sphere      along the centre line: exact (concentric spheres: +z)
sphere-box         nearest face of the box for a centre inside it, else the clamped
                   point's direction: exact
capsule-*          the cores' closest points (segment-segment, segment-point) or the SAT
                   of box - segment on its 6 face normals (segment-box), then the radii
                   added along the same direction (sd(A + ball, B + ball) = sd(A, B) -
                   ra - rb): exact, with the same near-parallel bound as box-box for
                   segment-box

After moving j by the translation the shapes lie on either side of a plane perpendicular
to it, `clearance` apart, so the move separates whatever the rounding of the depth.

Meshes: a triangle mesh pair has no closed-form MTD (the meshes need not be convex).
`mesh_separating_translations` searches along one direction per pair (the proxies' MTD
direction, typically): it starts from the mesh penetration depth, doubles the length
until `mesh_contacts` says the pair is apart, then bisects between the last length that
was not and the first that was. Every length returned was checked apart by
`mesh_contacts` (or lies past the length where the meshes' projections on the direction
are apart); it is the shortest along that direction only to the bisection's
tolerance and only where the pair stays apart beyond it (true for convex meshes; a
non-convex one may be apart at a length and touch again further on). A mesh wholly inside
a closed other (I_INSIDE_J / J_INSIDE_I) gets no translation: leaving it would pass
through the outer mesh's wall, which is not a push-out. Imports `mesh`, `narrow`, `shapes`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .mesh import APART, I_INSIDE_J, J_INSIDE_I, mesh_contacts, posed_vertices
from .narrow import pair_distance
from .shapes import ShapeBatch

# Why a mesh pair got the translation it got (`MeshFixes.reason`).
FIX_MOVED = 0  # moved by a translation checked apart
FIX_ALREADY_APART = 1  # apart by the clearance already: translation 0
FIX_CONTAINED = 2  # one mesh inside the other: no translation
FIX_TOO_FAR = 3  # the separating length along the direction exceeds max_length
FIX_NO_DIRECTION = 4  # the direction given was zero or not finite
FIX_REASONS = (
    "moved",
    "already apart",
    "one mesh is inside the other: a translation would pass through its wall",
    "no translation within the length allowed separates the meshes",
    "no direction to move along",
)

# Bisection steps after the doubling found a separating length: the length is then
# within 2**-12 (0.02 %) of the shortest along the direction checked at this tolerance.
BISECTION_STEPS = 12
# Lengths tried below this fraction of the pair's size are rounded up to it: a mesh
# depth of 0 (touching, or crossing only at the contact epsilon) must still move.
_SMALLEST_STEP = 1e-6


def separating_translations(batch: ShapeBatch, i, j, clearance=0.0) -> np.ndarray:
    """The shortest translation of shape j[k] that leaves it `clearance` (>= 0) apart
    from shape i[k]; zero for pairs that are that far apart already.

    batch: n shapes; i, j: (m,) int indices into batch; clearance: scalar or (m,)
    returns: (m, 3) float64 translations of the j shapes (moving i[k] by minus row k
    separates the pair equally well). Exactness per kind pairing: module docstring.
    """
    clearance = np.asarray(clearance, dtype=np.float64)
    if not (clearance >= 0).all():
        raise ValueError(f"clearance must be >= 0, got {clearance.min()}")
    result = pair_distance(batch, i, j)
    length = np.maximum(clearance - result.distance, 0.0)
    return length[:, None] * result.normal


@dataclass(frozen=True)
class MeshFixes:
    """Translations found for m mesh pairs.

    translation: (m, 3) float64, the move of mesh j (zeros where none was found)
    reason: (m,) int8, FIX_MOVED, FIX_ALREADY_APART, FIX_CONTAINED, FIX_TOO_FAR or
        FIX_NO_DIRECTION (text: FIX_REASONS[reason])
    """

    translation: np.ndarray
    reason: np.ndarray

    @property
    def found(self) -> np.ndarray:
        """(m,) bool: the pair is apart after its translation."""
        return (self.reason == FIX_MOVED) | (self.reason == FIX_ALREADY_APART)


def _apart(contacts, clearance: float) -> np.ndarray:
    return (contacts.relation == APART) & (contacts.distance >= clearance)


def _projected_extents(meshes, matrices, pairs, directions):
    """How far mesh j must move along each direction for the two meshes' projections on
    it to be apart, and the pairs' sizes (the largest extent of mesh i's bounds, at least
    1): ((m,), (m,)). Beyond that length a plane perpendicular to the direction separates
    the meshes, so it bounds the search.

    pairs: (m, 2); directions: (m, 3) unit
    """
    highest_i, _, size = _along(meshes, matrices, pairs[:, 0], directions)
    _, lowest_j, _ = _along(meshes, matrices, pairs[:, 1], directions)
    return np.maximum(highest_i - lowest_j, 0.0), np.maximum(size, 1.0)


def _along(meshes, matrices, which, directions):
    """The highest and lowest projections on directions (m, 3) of the vertices of each
    mesh `which` (m,) posed by its matrix, and the largest extent of its bounds: three
    (m,) arrays (0 for a mesh without vertices)."""
    world, counts = posed_vertices(meshes, matrices, which)
    owner = np.repeat(np.arange(len(which)), counts)
    along = np.einsum("vk,vk->v", world, directions[owner])
    highest = np.zeros(len(which))
    lowest = np.zeros(len(which))
    size = np.zeros(len(which))
    has = counts > 0
    if has.any():
        starts = (np.cumsum(counts) - counts)[has]
        highest[has] = np.maximum.reduceat(along, starts)
        lowest[has] = np.minimum.reduceat(along, starts)
        extent = np.maximum.reduceat(world, starts, axis=0) - np.minimum.reduceat(
            world, starts, axis=0
        )
        size[has] = extent.max(axis=1)
    return highest, lowest, size


def _contacts_moved(meshes, matrices, pairs, moves, clearance: float):
    """`mesh_contacts` of the pairs (k, 2) with mesh j moved by moves (k, 3): each pair
    gets its own copy of mesh j's pose, as one mesh may be moved differently per pair."""
    count = len(meshes)
    moved = matrices[pairs[:, 1]].copy()
    moved[:, :3, 3] += moves
    posed = list(meshes) + [meshes[k] for k in pairs[:, 1]]
    own_pairs = np.stack([pairs[:, 0], count + np.arange(len(pairs))], axis=1)
    return mesh_contacts(posed, np.concatenate([matrices, moved]), own_pairs, clearance)


def mesh_separating_translations(
    meshes, matrices, pairs, directions, clearance: float, max_length: float = np.inf
) -> MeshFixes:
    """A translation of mesh j along each pair's direction that leaves the pair apart
    (relation APART, distance >= clearance), checked by `mesh_contacts`.

    meshes: n `TriangleMesh`; matrices: (n, 4, 4) affine world matrices
    pairs: (m, 2) int indices (i, j) into meshes; directions: (m, 3), the way to push j
    (normalised here); clearance: >= 0; max_length: the longest move allowed
    returns: `MeshFixes` (the search: module docstring)
    """
    matrices = np.asarray(matrices, dtype=np.float64).reshape(-1, 4, 4)
    pairs = np.asarray(pairs, dtype=np.int64).reshape(-1, 2)
    directions = np.asarray(directions, dtype=np.float64).reshape(-1, 3)
    if len(directions) != len(pairs):
        raise ValueError(f"{len(pairs)} pairs but {len(directions)} directions")
    clearance = float(clearance)
    if not clearance >= 0:
        raise ValueError(f"clearance must be >= 0, got {clearance}")
    m = len(pairs)
    translation = np.zeros((m, 3))
    reason = np.full(m, FIX_MOVED, dtype=np.int8)
    if m == 0:
        return MeshFixes(translation, reason)
    start = mesh_contacts(meshes, matrices, pairs, clearance)
    reason[_apart(start, clearance)] = FIX_ALREADY_APART
    reason[(start.relation == I_INSIDE_J) | (start.relation == J_INSIDE_I)] = FIX_CONTAINED
    lengths = np.linalg.norm(directions, axis=1)
    usable = np.isfinite(lengths) & (lengths > 0)
    reason[(reason == FIX_MOVED) & ~usable] = FIX_NO_DIRECTION
    open_rows = np.flatnonzero(reason == FIX_MOVED)
    if len(open_rows) == 0:
        return MeshFixes(translation, reason)
    units = directions[open_rows] / lengths[open_rows, None]
    bound, size = _projected_extents(meshes, matrices, pairs[open_rows], units)
    # Past `bound` the projections are apart: by 2 clearance and a step more, a margin
    # no rounding of mesh_contacts turns into contact.
    bound += 2.0 * clearance + _SMALLEST_STEP * size
    too_far = bound > max_length
    reason[open_rows[too_far]] = FIX_TOO_FAR
    keep = ~too_far
    open_rows, units, bound, size = open_rows[keep], units[keep], bound[keep], size[keep]
    depth = np.nan_to_num(-start.distance[open_rows], posinf=0.0)
    found = _search(meshes, matrices, pairs[open_rows], units, clearance, depth, bound, size)
    translation[open_rows] = found[:, None] * units
    return MeshFixes(translation, reason)


def _search(meshes, matrices, pairs, units, clearance, depth, bound, size) -> np.ndarray:
    """Lengths (k,) along units (k, 3) that leave each pair apart: doubling from the
    depth up to `bound` (apart by construction), then BISECTION_STEPS of bisection."""
    low = np.zeros(len(pairs))
    high = np.minimum(np.maximum(depth, _SMALLEST_STEP * size) + clearance, bound)
    settled = np.zeros(len(pairs), dtype=bool)
    # Doubling: each round tests the pairs not yet apart, all in one mesh_contacts call.
    while not settled.all():
        rows = np.flatnonzero(~settled)
        apart = _apart(
            _contacts_moved(
                meshes, matrices, pairs[rows], high[rows, None] * units[rows], clearance
            ),
            clearance,
        )
        # At the bound the projections are apart: trusted even if rounding says touching.
        apart |= high[rows] >= bound[rows]
        settled[rows[apart]] = True
        not_yet = rows[~apart]
        low[not_yet] = high[not_yet]
        high[not_yet] = np.minimum(2.0 * high[not_yet], bound[not_yet])
    for _ in range(BISECTION_STEPS):
        middle = 0.5 * (low + high)
        apart = _apart(
            _contacts_moved(meshes, matrices, pairs, middle[:, None] * units, clearance), clearance
        )
        high = np.where(apart, middle, high)
        low = np.where(apart, low, middle)
    return high


def along_free_axes(translations, axes, free) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Separating translations restricted to the free axes of locked transforms.

    translations: (m, 3) world translations that separate (`separating_translations`:
    length = depth + clearance along the separating direction n)
    axes: (m, 3, 3), column k the world move of one unit of location axis k (the linear
    part of the parent's world matrix times the parent inverse)
    free: (m, 3) bool, which location axes may move
    returns: (moves (m, 3) in the world, the same as location changes (m, 3), exactly 0
    on locked axes, possible (m,) bool). A move is the translation projected on the span
    of the free axes and lengthened until its component along n is the translation's
    length: past the touching position along n, so the pair is apart (its projections on
    n are). Not the shortest move within the span, a separating one. Impossible where the
    span is (nearly) perpendicular to n: moves 0.
    """
    translations = np.asarray(translations, dtype=np.float64).reshape(-1, 3)
    free = np.asarray(free, dtype=bool)
    spanning = np.asarray(axes, dtype=np.float64) * free[:, None, :]
    # The least-squares location change and its world move, the projection of t on the
    # span (A pinv(A) t). pinv's rows of locked (zero) columns are zero up to the SVD's
    # rounding: the mask makes them exactly zero.
    local = np.einsum("mlk,mk->ml", np.linalg.pinv(spanning), translations) * free
    projected = np.einsum("mkl,ml->mk", spanning, local)
    squared = np.einsum("mk,mk->m", translations, translations)
    along = np.einsum("mk,mk->m", projected, translations)  # |projected|^2
    # Below this share of the translation the free axes would need a move many times its
    # length (1000 times at 1e-6): taken as no way out along them.
    possible = (squared == 0) | (along > 1e-6 * squared)
    scale = np.divide(squared, along, out=np.zeros_like(squared), where=possible & (along > 0))
    return scale[:, None] * projected, scale[:, None] * local, possible
