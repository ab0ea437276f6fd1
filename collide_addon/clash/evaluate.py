"""Evaluating clash tests: object metadata -> ObjectTable, a test over the table ->
PreparedTest, a PreparedTest and the shapes of one frame -> FrameHits.

    [ObjectMetadata] -> ObjectTable                       once per run (or when the
                                                          objects taking part change)
    ClashTest + ObjectTable -> PreparedTest               selectors and ignore rules
    PreparedTest + ShapeBatch (+ FrameMeshes) at a frame -> FrameHits   `evaluate_frame`

Tests with geometry "proxy" decide on the proxies' exact distances. Tests with geometry
"mesh" take the proxies' candidate pairs (a proxy encloses its mesh, so every pair whose
meshes meet has proxies that meet) and decide each on the triangles
(`core.mesh.mesh_contacts`); a pair where an object has no triangles is decided on its
proxies and says so.
"""

from __future__ import annotations

import dataclasses
import fnmatch
import re
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..core import (
    CoherentBounds,
    PairResult,
    ShapeBatch,
    find_contacts,
    pair_distance,
    pair_intersects,
)
from ..core.columns import concatenate_fields, either_flagged, rows_as_bytes, take_fields
from ..core.constants import CUBE_CORNER_SIGNS
from ..core.contact import clash_mask, contact_epsilon, contact_margin, within
from ..core.continuous import (
    SweptCandidates,
    SweptMotion,
    join_motions,
    motion_contacts,
    pair_slack,
    shapes_at,
    swept_candidates,
    swept_motion,
    swept_pairs,
)
from ..core.mesh import PosedMeshes, TriangleMesh, mesh_contacts
from ..core.mesh_sweep import mesh_first_contacts
from .tests import ClashTest, Selector


@dataclass(frozen=True)
class ObjectMetadata:
    """What selectors and ignore rules look at, for one object; plain data, no Blender.

    type: Blender's object type ("MESH", "EMPTY", ...)
    collections: names of the collections the object is linked to
    parent: parent object's name, None without parent
    properties: custom properties (name -> value)
    instance_source: what the object is an instance of, e.g. the instanced collection or
        the mesh data shared by linked duplicates; None if not an instance (the Blender
        glue, `blender/report_run.py`, defines the values)
    is_instance: the object is an instance made by another object (its instancer):
        `type`, `properties` and `collections` are those of the object it places (the
        collections besides the instancer's), and say nothing of the instance's own
        identity (a report gives it no IfcGuid taken from them)
    placed_name: for an instance of an object, that object's name: a selector's name
        pattern matches it as it matches `name` ("Beam*" takes "StructureLink/Beam")
    """

    name: str
    type: str = "MESH"
    collections: tuple[str, ...] = ()
    parent: str | None = None
    properties: Mapping[str, Any] = field(default_factory=dict)
    instance_source: str | None = None
    is_instance: bool = False
    placed_name: str | None = None


def select_objects(selector: Selector, objects: Sequence[ObjectMetadata]) -> np.ndarray:
    """Which objects the selector takes.

    returns: (n,) bool
    """
    # String matching has no bulk numpy form; this loop runs once per run and test, not
    # per frame or per pair.
    name_pattern = re.compile(fnmatch.translate(selector.name)) if selector.name else None
    wanted_collections = set(selector.collections)
    wanted_types = set(selector.types)

    def takes(obj: ObjectMetadata) -> bool:
        if name_pattern is not None and not (
            name_pattern.match(obj.name)
            or (obj.placed_name is not None and name_pattern.match(obj.placed_name))
        ):
            return False
        if wanted_types and obj.type not in wanted_types:
            return False
        if wanted_collections and wanted_collections.isdisjoint(obj.collections):
            return False
        for key, value in selector.properties.items():
            if key not in obj.properties:
                return False
            if value is not None and obj.properties[key] != value:
                return False
        return True

    return np.fromiter((takes(obj) for obj in objects), dtype=bool, count=len(objects))


def _codes(values: Sequence[str | None]) -> np.ndarray:
    """Integer code per value, equal codes for equal values, -1 for None. (n,) int64"""
    known = sorted({value for value in values if value is not None})
    index = {value: code for code, value in enumerate(known)}
    return np.fromiter(
        (-1 if value is None else index[value] for value in values),
        dtype=np.int64,
        count=len(values),
    )


@dataclass(frozen=True)
class ObjectTable:
    """Per-object metadata as arrays, in proxy order (row k = shape k of the batch).

    objects: the metadata, n entries
    names: (n,) object array of names
    parent_codes: (n,) int64, equal for the same parent, -1 without parent
    instance_codes: (n,) int64, equal for the same instance source, -1 if none
    collection_membership: (n, c) bool, [k, m] when object k is in collection m
    """

    objects: tuple[ObjectMetadata, ...]
    names: np.ndarray
    parent_codes: np.ndarray
    instance_codes: np.ndarray
    collection_membership: np.ndarray


def object_table(objects: Sequence[ObjectMetadata]) -> ObjectTable:
    """ObjectTable for `objects`; names must be unique (as Blender's are)."""
    objects = tuple(objects)
    names = [obj.name for obj in objects]
    if len(set(names)) != len(names):
        repeated = sorted(name for name, count in Counter(names).items() if count > 1)
        raise ValueError(f"object names must be unique, repeated: {repeated[:5]}")
    collection_names = sorted({name for obj in objects for name in obj.collections})
    column = {name: index for index, name in enumerate(collection_names)}
    membership = np.zeros((len(objects), len(collection_names)), dtype=bool)
    rows = [row for row, obj in enumerate(objects) for _ in obj.collections]
    columns = [column[name] for obj in objects for name in obj.collections]
    membership[rows, columns] = True
    return ObjectTable(
        objects=objects,
        names=np.array(names, dtype=object),
        parent_codes=_codes([obj.parent for obj in objects]),
        instance_codes=_codes([obj.instance_source for obj in objects]),
        collection_membership=membership,
    )


@dataclass(frozen=True)
class PreparedTest:
    """A clash test evaluated over an ObjectTable: what does not change between frames.

    in_a, in_b: (n,) bool set membership (in_b is in_a for a self test)
    ignored_pair_keys: (p,) int64 sorted keys i * n + j (i < j) of explicitly ignored pairs
    """

    test: ClashTest
    table: ObjectTable
    in_a: np.ndarray
    in_b: np.ndarray
    ignored_pair_keys: np.ndarray

    @property
    def involved(self) -> np.ndarray:
        """(m,) int64 sorted indices of the objects in set A or set B."""
        return np.flatnonzero(self.in_a | self.in_b)


def prepare_test(test: ClashTest, table: ObjectTable) -> PreparedTest:
    """Evaluate the selectors and the explicit ignore list of `test` over `table`."""
    in_a = select_objects(test.set_a, table.objects)
    in_b = in_a if test.set_b is None else select_objects(test.set_b, table.objects)
    index = {name: row for row, name in enumerate(table.names)}
    # Pairs naming objects absent from this scene are meaningless here, not errors: a
    # tests file is shared between scenes.
    known = [
        (index[first], index[second])
        for first, second in test.ignore.pairs
        if first in index and second in index
    ]
    ignored = np.array(known, dtype=np.int64).reshape(-1, 2)
    ignored.sort(axis=1)
    keys = np.unique(ignored[:, 0] * len(table.names) + ignored[:, 1])
    return PreparedTest(test=test, table=table, in_a=in_a, in_b=in_b, ignored_pair_keys=keys)


def eligible_pair_mask(prepared: PreparedTest, pairs: np.ndarray) -> np.ndarray:
    """Which candidate pairs the test looks at: one object from each set (both from set A
    for a self test), and not skipped by an ignore rule.

    pairs: (k, 2) int64 object indices
    returns: (k,) bool
    """
    pairs = np.asarray(pairs, dtype=np.int64).reshape(-1, 2)
    first, second = pairs[:, 0], pairs[:, 1]
    in_a, in_b = prepared.in_a, prepared.in_b
    mask = (in_a[first] & in_b[second]) | (in_b[first] & in_a[second])
    rules = prepared.test.ignore
    table = prepared.table
    if rules.same_parent:
        parents = table.parent_codes
        mask &= ~((parents[first] >= 0) & (parents[first] == parents[second]))
    if rules.same_instance_source:
        sources = table.instance_codes
        mask &= ~((sources[first] >= 0) & (sources[first] == sources[second]))
    if rules.same_collection:
        membership = table.collection_membership
        mask &= ~(membership[first] & membership[second]).any(axis=1)
    if len(prepared.ignored_pair_keys):
        keys = np.minimum(first, second) * len(table.names) + np.maximum(first, second)
        mask &= ~np.isin(keys, prepared.ignored_pair_keys)
    return mask


def orient_pairs(prepared: PreparedTest, pairs: np.ndarray) -> np.ndarray:
    """Order each pair as (a, b) with a in set A and b in set B; when both orders fit
    (self tests, overlapping sets), a is the object whose name sorts first.

    pairs: (k, 2) int64 eligible pairs
    returns: (k, 2) int64
    """
    pairs = np.asarray(pairs, dtype=np.int64).reshape(-1, 2)
    first, second = pairs[:, 0], pairs[:, 1]
    forward = prepared.in_a[first] & prepared.in_b[second]
    backward = prepared.in_a[second] & prepared.in_b[first]
    names = prepared.table.names
    first_sorts_later = names[first] > names[second] if len(pairs) else np.zeros(0, dtype=bool)
    swap = ~forward | (backward & first_sorts_later)
    return np.where(swap[:, None], pairs[:, ::-1], pairs)


# --- Criteria ---------------------------------------------------------------------------


def decides_on_meshes(test: ClashTest) -> bool:
    """Whether the test decides its pairs on triangles (duplicates compare proxies)."""
    return test.geometry == "mesh" and test.test_type != "duplicates"


def broad_phase_margin(test: ClashTest, batch: ShapeBatch) -> float:
    """Margin for `find_contacts` that keeps every pair the test can report: the contact
    rule's margin for hard, touching and clearance tests (`core.contact.contact_margin`),
    and the touching margin for duplicates (see `duplicate_mask`). A mesh test keeps
    every pair whose proxies meet, since meshes inside them may penetrate while their
    proxies only touch."""
    if test.test_type == "duplicates":
        # Two duplicates are at most their corners' Hausdorff distance apart, and
        # `duplicate_mask` allows that up to tolerance + epsilon: flat copies (a plane, a
        # floor covering) a float32 step or a tolerance apart do not overlap, and a
        # margin of 0 lost them before `duplicate_mask` saw them.
        return contact_margin("touching", test.tolerance, batch)
    return candidate_margin(test.test_type, test.tolerance, decides_on_meshes(test), batch)


def candidate_margin(rule: str, tolerance: float, on_mesh: bool, batch: ShapeBatch) -> float:
    """Margin for `find_contacts` that keeps every pair a `core.contact` rule ("hard",
    "touching" or "clearance") with `tolerance` can report, deciding on the proxies or,
    with `on_mesh`, on the triangles (see `broad_phase_margin`)."""
    if on_mesh and rule == "hard":
        return contact_margin("touching", 0.0, batch)
    return contact_margin(rule, tolerance, batch)


def core_corners(batch: ShapeBatch, indices: np.ndarray) -> np.ndarray:
    """The 8 corners of each shape's core box (a sphere's centre 8 times, a capsule's two
    segment ends 4 times each).

    indices: (k,) int64
    returns: (k, 8, 3)
    """
    indices = np.asarray(indices, dtype=np.int64)
    local = CUBE_CORNER_SIGNS[None, :, :] * batch.half_extents[indices][:, None, :]
    world = np.einsum("kij,kcj->kci", batch.rotations[indices], local)
    return world + batch.centers[indices][:, None, :]


def duplicate_mask(batch: ShapeBatch, pairs: np.ndarray, tolerance: float) -> np.ndarray:
    """Which pairs are the same geometry at the same place: same kind, radii within
    `tolerance`, and every core corner of each shape within `tolerance` of a core corner
    of the other (Hausdorff distance of the corner sets), each plus the pair's contact
    epsilon (`duplicate_epsilon`) as clearance counts a gap (`core.contact.within`).

    The corner sets make the test blind to how a box's axes are numbered or signed (a
    box turned about an axis along which its extents are equal, or fitted again with
    its axes permuted or flipped, is the same box) and to a capsule's end order. The
    epsilon makes it blind to float32 rounding: a copy placed through a parent or with
    its transform applied lands a few float32 steps off its original, which tolerance 0
    alone would miss.

    pairs: (k, 2) int64
    tolerance: >= 0
    returns: (k,) bool
    """
    pairs = np.asarray(pairs, dtype=np.int64).reshape(-1, 2)
    first, second = pairs[:, 0], pairs[:, 1]
    corners_first = core_corners(batch, first)
    corners_second = core_corners(batch, second)
    gaps = np.linalg.norm(corners_first[:, :, None, :] - corners_second[:, None, :, :], axis=3)
    hausdorff = np.maximum(gaps.min(axis=2).max(axis=1), gaps.min(axis=1).max(axis=1))
    epsilon = duplicate_epsilon(
        corners_first, corners_second, batch.radii[first], batch.radii[second]
    )
    return (
        (batch.kinds[first] == batch.kinds[second])
        & within(np.abs(batch.radii[first] - batch.radii[second]), tolerance, epsilon)
        & within(hausdorff, tolerance, epsilon)
    )


def duplicate_epsilon(
    corners_first: np.ndarray,
    corners_second: np.ndarray,
    radii_first: np.ndarray,
    radii_second: np.ndarray,
) -> np.ndarray:
    """The contact epsilon (`core.contact.contact_epsilon`) at the largest coordinate
    either shape of each pair reaches: its core corners plus its radius.

    Not the epsilon at each corner: a proxy's corners and radius come from its centre,
    its turned extents and a fit over all its vertices, so each carries the rounding of
    the shape's largest coordinates (a 100 m beam starting at the origin has its near
    corners off by float32 steps of 100 m, not of 0).

    corners_first, corners_second: (k, 8, 3) from `core_corners`
    radii_first, radii_second: (k,)
    returns: (k,) float64
    """
    reach_first = np.abs(corners_first).max(axis=1) + radii_first[:, None]
    reach_second = np.abs(corners_second).max(axis=1) + radii_second[:, None]
    return contact_epsilon(np.maximum(reach_first, reach_second))


# --- Hits over frames -------------------------------------------------------------------

# How the two objects of a hit relate, as the report names it (`RELATIONS[code]`):
# proxies penetrate, touch or are apart; meshes cross, touch, are apart, or one lies
# wholly inside the other without crossing.
RELATIONS = ("apart", "touching", "penetrating", "crossing", "a_inside_b", "b_inside_a")
APART, TOUCHING, PENETRATING, CROSSING, A_INSIDE_B, B_INSIDE_A = range(len(RELATIONS))
# core.mesh relation codes -> RELATIONS codes, for pairs in (i, j) order.
_MESH_RELATION = np.array([APART, TOUCHING, CROSSING, A_INSIDE_B, B_INSIDE_A], dtype=np.int8)


@dataclass(frozen=True)
class FrameMeshes:
    """The triangle meshes of one frame's objects, for tests with geometry "mesh".

    mesh_of: row k of the object table -> the object's TriangleMesh in its own space, or
        None when it has no triangles; called only for objects in candidate pairs, so a
        reader may prepare meshes lazily and keep them while the geometry stays
    matrices: (n, 4, 4) float64 world matrices placing each object's mesh
    version: the same number for two frames' meshes only while no object's mesh changed
        in between (`KeptMeshContacts`); None when the reader does not tell
    """

    mesh_of: Callable[[int], TriangleMesh | None]
    matrices: np.ndarray
    version: int | None = None


@dataclass(frozen=True)
class FrameHits:
    """Clashing pairs of one test, m rows, one per (frame, pair); rows of several frames
    may be concatenated (`concat_hits`).

    frames: (m,) int64
    names: (m, 2) object array of object names, oriented (a, b) as by `orient_pairs`
    kinds: (m, 2) int8 proxy kinds of a and b
    distances: (m,) float64 signed distance, < 0 is penetration
    points: (m, 3) clash points
    witnesses: (m, 2, 3) the closest (or, penetrating, the deepest) points on a and on b
    bounds: (m, 2, 3) [lo, hi] world bounds of both shapes together
    on_mesh: (m,) bool, decided on the triangles (else on the proxies)
    relations: (m,) int8 index into RELATIONS
    tois: (m,) float64 fractional frame of first contact for a hit found between two
        samples (continuous detection, see `evaluate_intervals`), NaN for a hit at a sample
    open_mesh_names: (o,) object array, not rows: names of the objects in this test's
        mesh candidate pairs whose meshes are open or non-manifold, so that containment
        was not tested for them (repeats allowed)
    unswept_names: (u, 2) object array, not rows: the pairs of a continuous test on
        meshes that moved between two samples while their proxies were within the rule
        at one of them and whose sweep on meshes could not decide, so that the motion in
        between was not swept for them (oriented as `names`; repeats allowed; see
        `evaluate_intervals`)
    """

    frames: np.ndarray
    names: np.ndarray
    kinds: np.ndarray
    distances: np.ndarray
    points: np.ndarray
    witnesses: np.ndarray
    bounds: np.ndarray
    on_mesh: np.ndarray
    relations: np.ndarray
    tois: np.ndarray
    open_mesh_names: np.ndarray
    unswept_names: np.ndarray

    def __len__(self) -> int:
        return len(self.frames)


@dataclass(frozen=True)
class PairContacts:
    """Candidate pairs with their decided contact, k rows, pairs in (i, j) order.

    pairs: (k, 2) int64 object indices; distances: (k,); points_i, points_j: (k, 3)
    on_mesh: (k,) bool; relations: (k,) int8 RELATIONS codes for (i, j)
    """

    pairs: np.ndarray
    distances: np.ndarray
    points_i: np.ndarray
    points_j: np.ndarray
    on_mesh: np.ndarray
    relations: np.ndarray

    def take(self, rows: np.ndarray) -> PairContacts:
        return take_fields(self, rows)


def proxy_relations(distances: np.ndarray, epsilon: np.ndarray) -> np.ndarray:
    """RELATIONS codes of proxy pairs from their signed distances: (k,) int8."""
    distances = np.asarray(distances, dtype=np.float64)
    relations = np.full(len(distances), APART, dtype=np.int8)
    relations[np.abs(distances) <= epsilon] = TOUCHING
    relations[distances < -epsilon] = PENETRATING
    return relations


def proxy_pair_contacts(pairs: np.ndarray, result: PairResult) -> PairContacts:
    """The contacts `find_contacts` found between proxies, as decided on the proxies.

    pairs: (k, 2) int64 object indices; result: the k pairs' contacts
    """
    epsilon = contact_epsilon(0.5 * (result.point_i + result.point_j))
    return PairContacts(
        pairs=pairs,
        distances=result.distance,
        points_i=result.point_i,
        points_j=result.point_j,
        on_mesh=np.zeros(len(pairs), dtype=bool),
        relations=proxy_relations(result.distance, epsilon),
    )


def hits_from_pairs(
    prepared: PreparedTest,
    batch: ShapeBatch,
    frame: int,
    contacts: PairContacts,
    open_mesh_names: np.ndarray | None = None,
    unswept_names: np.ndarray | None = None,
) -> FrameHits:
    """FrameHits for pairs that clash at `frame` (the test's criterion already applied).

    batch: in `prepared.table` order; contacts: the clashing pairs
    The clash point is the midpoint of the two witness points: on the contact for
    touching shapes, between the deepest points for penetrating ones.
    """
    pairs = np.asarray(contacts.pairs, dtype=np.int64).reshape(-1, 2)
    oriented = orient_pairs(prepared, pairs)
    swapped = oriented[:, 0] != pairs[:, 0]
    lo, hi = batch.take(pairs.reshape(-1)).aabbs()
    lo, hi = lo.reshape(-1, 2, 3), hi.reshape(-1, 2, 3)
    bounds = np.stack([lo.min(axis=1), hi.max(axis=1)], axis=1)
    witnesses = np.stack([contacts.points_i, contacts.points_j], axis=1).astype(np.float64)
    witnesses[swapped] = witnesses[swapped][:, ::-1]
    relations = contacts.relations.astype(np.int8)
    inside = np.array([A_INSIDE_B, B_INSIDE_A], dtype=np.int8)
    flips = swapped & np.isin(relations, inside)
    relations[flips] = A_INSIDE_B + B_INSIDE_A - relations[flips]
    return FrameHits(
        frames=np.full(len(pairs), frame, dtype=np.int64),
        names=prepared.table.names[oriented].reshape(-1, 2),
        kinds=batch.kinds[oriented].reshape(-1, 2),
        distances=np.asarray(contacts.distances, dtype=np.float64).reshape(-1),
        points=witnesses.mean(axis=1).reshape(-1, 3),
        witnesses=witnesses.reshape(-1, 2, 3),
        bounds=bounds.reshape(-1, 2, 3),
        on_mesh=np.asarray(contacts.on_mesh, dtype=bool).reshape(-1),
        relations=relations.reshape(-1),
        tois=np.full(len(pairs), np.nan),
        open_mesh_names=(np.zeros(0, dtype=object) if open_mesh_names is None else open_mesh_names),
        unswept_names=(np.zeros((0, 2), dtype=object) if unswept_names is None else unswept_names),
    )


# Pose codes of a MeshPairCache fit in 31 bits, two of them in one int64 pair key.
_POSE_CODE_LIMIT = 1 << 31
# A MeshPairCache's arrays of one row per kept pair.
_CONTACT_FIELDS = ("keys", "reach", "distance", "point_i", "point_j", "relation")


@dataclass
class MeshPairCache:
    """The mesh contacts of one call's pairs, kept for the next call
    (`mesh_pair_contacts`): a pair whose two meshes are the same prepared `TriangleMesh`
    objects under bit-identical world matrices, computed with a max_distance at least the
    one asked for now, gets its contact again without a triangle test (a distance
    between the two max_distances comes out finite where a fresh test may give +inf;
    both are beyond the asked max_distance). For live checks, where most objects keep
    their places while one is edited; a move, an edit or a refit misses. (The broad
    phase's margin, the max_distance of live checks, follows the scene's extent, so it
    changes a little with every move.)

    With `scan`, for a report's scan: the contacts of every call since the last
    `next_sample` and of the sample before are kept, not only the last call's, so that
    the tests of one sample share their pairs (run widest margin first) and the objects
    that kept their mesh and matrix from one sample to the next keep their pairs' contacts
    (a building scanned over the frames of a crane's animation).

    poses: (id(mesh), matrix bytes) -> pose code, for the last call's meshes (with
        `scan`, for the poses used in this sample and the one before)
    meshes: the last call's meshes, kept alive so that no other mesh takes their ids
        (with `scan`, `kept` keeps them, by pose)
    keys: (k,) int64 sorted pair keys (first pose code << 31 | second pose code)
    reach: (k,) the max_distance each pair's contact was computed with
    distance: (k,); point_i, point_j: (k, 3); relation: (k,) int8 `core.mesh` codes
    used: with `scan`, the poses used since the last `next_sample`
    posed: without `scan`, the large meshes the last call posed, for the next call
        (`core.mesh.PosedMeshes`: a terrain under an object dragged in live mode)
    """

    poses: dict = field(default_factory=dict)
    meshes: list = field(default_factory=list)
    next_code: int = 0
    keys: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    reach: np.ndarray = field(default_factory=lambda: np.zeros(0))
    distance: np.ndarray = field(default_factory=lambda: np.zeros(0))
    point_i: np.ndarray = field(default_factory=lambda: np.zeros((0, 3)))
    point_j: np.ndarray = field(default_factory=lambda: np.zeros((0, 3)))
    relation: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int8))
    scan: bool = False
    kept: dict = field(default_factory=dict)
    used: set = field(default_factory=set)
    posed: PosedMeshes = field(default_factory=PosedMeshes)

    def pose_codes(self, meshes: Sequence[TriangleMesh], matrices: np.ndarray) -> np.ndarray:
        """One code per (mesh, matrix), the same as in the last call for the same mesh
        object under the same matrix bits; forgets the poses not seen now (with `scan`,
        at `next_sample`): (u,) int64."""
        if self.next_code + len(meshes) >= _POSE_CODE_LIMIT:
            self.poses, self.kept = {}, {}
            self._keep(slice(0, 0))
            self.next_code = 0
        poses, codes = (self.poses if self.scan else {}), []
        for mesh, matrix in zip(meshes, matrices, strict=True):
            token = (id(mesh), matrix.tobytes())
            code = self.poses.get(token)
            if code is None:
                code, self.next_code = self.next_code, self.next_code + 1
            poses[token] = code
            codes.append(code)
            if self.scan:
                self.kept[token] = mesh
                self.used.add(token)
        if not self.scan:
            self.poses, self.meshes = poses, list(meshes)
        return np.array(codes, dtype=np.int64)

    def store(self, keys, reach, distance, point_i, point_j, relation) -> None:
        """Keep these contacts of pairs `keys` (k,) for the next call: instead of the
        last call's, or with `scan` beside the others kept (replacing those of the same
        pairs)."""
        fields = dict(
            zip(_CONTACT_FIELDS, (keys, reach, distance, point_i, point_j, relation), strict=True)
        )
        if self.scan and len(self.keys):
            older = ~np.isin(self.keys, keys)
            fields = {
                name: np.concatenate([getattr(self, name)[older], values])
                for name, values in fields.items()
            }
        order = np.argsort(fields["keys"], kind="stable")
        for name, values in fields.items():
            setattr(self, name, values[order])

    def next_sample(self) -> None:
        """With `scan`, after a sample's calls: forget the poses not used since the last
        `next_sample` (an object moved or its mesh changed) and their pairs' contacts."""
        gone = [token for token in self.poses if token not in self.used]
        codes = np.array([self.poses.pop(token) for token in gone], dtype=np.int64)
        for token in gone:
            self.kept.pop(token, None)
        self.used = set()
        if len(codes) and len(self.keys):
            # Keys hold two codes of 31 bits each.
            stale = np.isin(self.keys >> 31, codes) | np.isin(
                self.keys & (_POSE_CODE_LIMIT - 1), codes
            )
            self._keep(~stale)

    def _keep(self, rows) -> None:
        """Keep the contacts of `rows` (a mask or a slice of the kept pairs) only."""
        for name in _CONTACT_FIELDS:
            setattr(self, name, getattr(self, name)[rows])


def _cached_mesh_contacts(
    mesh_list: list,
    matrices: np.ndarray,
    pairs: np.ndarray,
    max_distance: float,
    cache: MeshPairCache | None,
    progress=None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """`core.mesh.mesh_contacts` of `pairs` ((m, 2) into mesh_list), the pairs found in
    `cache` (a MeshPairCache, or None) taken from it: (distance (m,), point_i (m, 3),
    point_j (m, 3), relation (m,)). `progress` as `mesh_contacts` takes it, over the
    pairs it decides."""
    if cache is None:
        result = mesh_contacts(mesh_list, matrices, pairs, max_distance, progress)
        return result.distance, result.point_i, result.point_j, result.relation
    codes = cache.pose_codes(mesh_list, matrices)[pairs]
    keys = (codes[:, 0] << 31) | codes[:, 1]
    distance, relation = np.zeros(len(keys)), np.zeros(len(keys), dtype=np.int8)
    point_i, point_j = np.zeros((len(keys), 3)), np.zeros((len(keys), 3))
    hit = np.zeros(len(keys), dtype=bool)
    reach = np.full(len(keys), max_distance)
    if len(cache.keys):
        found = np.searchsorted(cache.keys, keys).clip(max=len(cache.keys) - 1)
        hit = (cache.keys[found] == keys) & (cache.reach[found] >= max_distance)
        rows = found[hit]
        reach[hit] = cache.reach[rows]
        distance[hit], relation[hit] = cache.distance[rows], cache.relation[rows]
        point_i[hit], point_j[hit] = cache.point_i[rows], cache.point_j[rows]
    miss = np.flatnonzero(~hit)
    if len(miss):
        # A report's scan poses each sample's meshes once (its tests share the pairs);
        # live checks keep large meshes posed from one check to the next.
        posed = None if cache.scan else cache.posed
        result = mesh_contacts(mesh_list, matrices, pairs[miss], max_distance, progress, posed)
        if posed is not None:
            posed.forget_unused()
        distance[miss], relation[miss] = result.distance, result.relation
        point_i[miss], point_j[miss] = result.point_i, result.point_j
    cache.store(keys, reach, distance, point_i, point_j, relation)
    return distance, point_i, point_j, relation


def mesh_pair_contacts(
    contacts: PairContacts,
    meshes: FrameMeshes,
    max_distance: float,
    cache: MeshPairCache | None = None,
    progress=None,
) -> tuple[PairContacts, np.ndarray]:
    """Decide proxy candidate pairs on their triangles where both objects have some.

    contacts: the candidates with their proxy contacts (kept for pairs without meshes)
    max_distance: beyond it a pair's mesh distance may come out as +inf
    cache: keeps the pairs' mesh contacts for the next call, which takes those of pairs
        whose meshes and matrices did not change from it (see MeshPairCache)
    progress: when given, progress(done, total) over the pairs decided on meshes (not
        taken from the cache), as `core.mesh.mesh_contacts` calls it
    returns: (the contacts, decided on meshes where possible; (o,) int64 the objects of
              the candidates whose meshes are open or non-manifold)
    """
    rows = np.unique(contacts.pairs)
    by_row = {int(row): meshes.mesh_of(int(row)) for row in rows}
    with_mesh = np.array([by_row[int(row)] is not None for row in rows], dtype=bool)
    rows = rows[with_mesh]
    if not len(rows):
        return contacts, np.zeros(0, dtype=np.int64)
    local = np.searchsorted(rows, contacts.pairs)
    decided = np.isin(contacts.pairs, rows).all(axis=1)
    mesh_list = [by_row[int(row)] for row in rows]
    distance, point_i, point_j, relation = _cached_mesh_contacts(
        mesh_list, meshes.matrices[rows], local[decided], max(max_distance, 0.0), cache, progress
    )
    distances = contacts.distances.copy()
    points_i, points_j = contacts.points_i.copy(), contacts.points_j.copy()
    relations = contacts.relations.copy()
    distances[decided] = distance
    points_i[decided], points_j[decided] = point_i, point_j
    relations[decided] = _MESH_RELATION[relation]
    open_rows = rows[[not mesh.closed for mesh in mesh_list]]
    return (
        PairContacts(contacts.pairs, distances, points_i, points_j, decided, relations),
        open_rows,
    )


@dataclass
class KeptMeshContacts:
    """The pairs one live check decided on meshes, kept for the next check of the same
    objects: a candidate pair whose two objects kept their proxy, their world matrix (bit
    for bit) and their mesh (the same `FrameMeshes.version`), under the same margin, keeps
    its contact without `mesh_pair_contacts`, which decides only the pairs with a changed
    object. Its answer depends on nothing else, so the contacts are the ones it would
    give; and the Python it runs per object of its pairs (their meshes, the pair cache's
    poses) stays with the few moved objects instead of the 20,000 elements of a building.

    contacts: the last check's decided contacts, pairs sorted; margin, version, matrices
        (n, 4, 4): the last check's
    """

    contacts: PairContacts | None = None
    margin: float = 0.0
    version: int | None = None
    matrices: np.ndarray = field(default_factory=lambda: np.zeros((0, 4, 4)))

    def decide(
        self,
        contacts: PairContacts,
        meshes: FrameMeshes,
        margin: float,
        moved: np.ndarray,
        cache: MeshPairCache | None = None,
        progress=None,
    ) -> PairContacts:
        """`mesh_pair_contacts(contacts, meshes, margin, cache, progress)`'s contacts, the
        pairs of unchanged objects taken from the last check.

        contacts: the proxies' candidates, pairs sorted (as `find_contacts` gives them)
        moved: (n,) bool, the objects whose proxy changed since the last check
        """
        count = len(meshes.matrices)
        fresh = np.ones(len(contacts.pairs), dtype=bool)
        found = np.zeros(len(contacts.pairs), dtype=np.int64)
        if (
            self.contacts is not None
            and len(self.contacts.pairs)
            and meshes.version is not None
            and (len(self.matrices), self.margin, self.version) == (count, margin, meshes.version)
            and len(moved) == count
        ):
            changed = moved | (rows_as_bytes(self.matrices) != rows_as_bytes(meshes.matrices))
            keys = _pair_keys(contacts.pairs, count)
            kept_keys = _pair_keys(self.contacts.pairs, count)
            found = np.searchsorted(kept_keys, keys).clip(max=len(kept_keys) - 1)
            # A pair of unchanged objects was a candidate last time too; one that was not
            # (no such pair is expected) is decided afresh.
            fresh = either_flagged(changed, contacts.pairs) | (kept_keys[found] != keys)
        decided, _ = mesh_pair_contacts(
            contacts.take(np.flatnonzero(fresh)), meshes, margin, cache, progress
        )
        kept = np.flatnonzero(~fresh)
        if len(kept):
            rows = np.zeros(len(fresh), dtype=np.int64)
            rows[fresh] = np.arange(len(decided.pairs))
            rows[kept] = len(decided.pairs) + np.arange(len(kept))
            joined = [decided, self.contacts.take(found[kept])]
            decided = concatenate_fields(PairContacts, joined).take(rows)
        self.contacts, self.margin = decided, margin
        self.version, self.matrices = meshes.version, meshes.matrices
        return decided


def _pair_keys(pairs: np.ndarray, count: int) -> np.ndarray:
    """One int64 per pair (k, 2) of `count` objects, i * count + j: sorted pairs give
    sorted keys."""
    return pairs[:, 0] * count + pairs[:, 1]


@dataclass(frozen=True)
class SampleContacts:
    """A test's candidate pairs at one sample as its proxies decide them: every eligible
    pair of the test's objects whose proxies are within `margin`
    (`broad_phase_margin`), with their contacts (pairs in the object table's rows)."""

    contacts: PairContacts
    margin: float


def vanished_pairs(batch: ShapeBatch, pairs: np.ndarray) -> np.ndarray:
    """Which pairs (k, 2) of `batch` hold a shape of no size at all (every half-extent
    and the radius 0: an object scaled to zero on every axis, which Blender does not
    draw, as Geometry Nodes instances are hidden, or a mesh of one vertex): (k,) bool.
    Such a point takes part in no clash, on proxies as on meshes (no triangles there)."""
    point = _points(batch)
    return point[pairs[:, 0]] | point[pairs[:, 1]]


def _points(batch: ShapeBatch) -> np.ndarray:
    """Which shapes of `batch` have no size at all (see `vanished_pairs`): (n,) bool."""
    return (batch.half_extents == 0.0).all(axis=1) & (batch.radii == 0.0)


def sample_contacts(
    prepared: PreparedTest,
    batch: ShapeBatch,
    coherent: CoherentBounds | None = None,
    arriving: IntervalCandidates | None = None,
) -> SampleContacts:
    """The test's candidate pairs in `batch` (row k = object k of `prepared.table`), with
    their proxy contacts: the broad and narrow phases of `evaluate_frame`.

    coherent: kept by the caller for this test from sample to sample, so that the broad
        phase builds on the last sample's work (same result without it)
    arriving: `interval_candidates` of this test over the interval that ends in `batch`:
        its pairs hold every pair the broad phase would find, so only their bounds are
        tested (same result; `coherent` is then not used)
    """
    if len(batch) != len(prepared.table.names):
        raise ValueError(
            f"batch has {len(batch)} shapes but the object table {len(prepared.table.names)}"
        )
    involved = prepared.involved
    involved_batch = batch.take(involved)
    margin = broad_phase_margin(prepared.test, involved_batch)
    candidates = None if arriving is None else arriving.swept.pairs
    pairs, result = find_contacts(involved_batch, margin, coherent, candidates)
    keep = eligible_pair_mask(prepared, involved[pairs]) & ~vanished_pairs(involved_batch, pairs)
    return SampleContacts(
        proxy_pair_contacts(involved[pairs], result).take(np.flatnonzero(keep)), margin
    )


def evaluate_frame(
    prepared: PreparedTest,
    batch: ShapeBatch,
    frame: int,
    coherent: CoherentBounds | None = None,
    meshes: FrameMeshes | None = None,
    sampled: SampleContacts | None = None,
    progress=None,
    mesh_cache: MeshPairCache | None = None,
) -> FrameHits:
    """The clashes of one test in one frame.

    batch: the shapes at `frame`, row k = object k of `prepared.table`
    coherent: as for `sample_contacts`
    meshes: the objects' triangles, for a test with geometry "mesh"; without them such a
        test decides on the proxies
    sampled: `sample_contacts` of this test and batch, when the caller has them already
    progress: progress(done, total) over the candidate pairs decided on meshes
        (`mesh_pair_contacts`), for a mesh test
    mesh_cache: for a mesh test, mesh contacts decided before (`MeshPairCache`: by the
        sample's other tests, or at the sample before): a pair it holds, of the same
        meshes under the same matrices with a margin at least this test's, is not
        decided again
    Only objects in set A or B enter the broad phase; candidate pairs then go through the
    ignore rules, the narrow phase (proxies, then triangles for a mesh test) and the test
    type's criterion.
    """
    if sampled is None:
        sampled = sample_contacts(prepared, batch, coherent)
    test = prepared.test
    contacts = sampled.contacts
    open_names = None
    if test.test_type == "duplicates":
        clashing = duplicate_mask(batch, contacts.pairs, test.tolerance)
    else:
        if meshes is not None and decides_on_meshes(test):
            contacts, open_rows = mesh_pair_contacts(
                contacts, meshes, sampled.margin, mesh_cache, progress
            )
            open_names = prepared.table.names[open_rows]
        epsilon = contact_epsilon(0.5 * (contacts.points_i + contacts.points_j))
        clashing = clash_mask(test.test_type, test.tolerance, contacts.distances, epsilon)
    return hits_from_pairs(
        prepared, batch, frame, contacts.take(np.flatnonzero(clashing)), open_names
    )


# Accuracy of a time of first contact, in frames: finer than the 1e-3 frames reports
# promise, at a few more narrow-phase passes over the pairs found only.
TOI_ACCURACY_FRAMES = 1e-4


def sweep_margin(test: ClashTest, start: ShapeBatch, end: ShapeBatch) -> float:
    """Margin for `core.continuous.swept_pairs` that keeps every pair the test's rule can
    count at some time of the motion from `start` to `end` (as `contact_margin`, for the
    epsilon of either pose)."""
    return max(contact_margin(test.test_type, test.tolerance, batch) for batch in (start, end))


def sweep_thresholds(test: ClashTest, slack: np.ndarray) -> np.ndarray:
    """The distance at which each pair's first contact counts under the test's rule:
    tolerance + slack (touching, clearance), -(tolerance + slack) (hard), with slack the
    pair's contact epsilon (`core.continuous.pair_slack`). (k,)"""
    if test.test_type == "hard":
        return -(test.tolerance + slack)
    return test.tolerance + slack


@dataclass(frozen=True)
class IntervalCandidates:
    """A continuous test's motion over an interval and its candidate pairs there.

    motion: `core.continuous.swept_motion` of the test's objects (row k = object
        `involved[k]`) from the earlier sample to the later one
    margin: the test's `sweep_margin` over the interval
    swept: the pairs whose swept bounds come within the larger of that margin and the
        test's broad-phase margin at the later sample (`core.continuous.SweptCandidates`):
        what the interval's `swept_pairs` and the later sample's broad phase look among
    """

    motion: SweptMotion
    margin: float
    swept: SweptCandidates


def interval_candidates(
    prepared: PreparedTest, start: ShapeBatch, end: ShapeBatch
) -> IntervalCandidates:
    """`IntervalCandidates` of a continuous test from the sample `start` to the sample
    `end` (row k = object k of the test's table in both); one grid over the swept bounds
    serves the interval and the later sample's broad phase (`sample_contacts`)."""
    test = prepared.test
    start, end = start.take(prepared.involved), end.take(prepared.involved)
    motion = swept_motion(start, end)
    margin = sweep_margin(test, start, end)
    grown = max(margin, broad_phase_margin(test, end))
    return IntervalCandidates(motion, margin, swept_candidates(motion, grown, end))


@dataclass(frozen=True)
class IntervalMeshes:
    """The triangles of a continuous mesh test's objects over an interval, to sweep the
    moving pairs its proxies leave to the samples (`with_interval_meshes`).

    meshes: {row of the test's table: TriangleMesh} of those pairs' objects that have
        triangles, taken when the later sample is read (a reader may prepare other
        meshes by the time the interval is evaluated)
    start, end: (n, 4, 4) world matrices of the table's objects at the two samples
    """

    meshes: dict[int, TriangleMesh]
    start: np.ndarray
    end: np.ndarray


@dataclass(frozen=True)
class Interval:
    """The motion between two consecutive samples of the same objects.

    start, end: the shapes at the two samples, row k = object k of the test's table;
        each proxy moves between them as `core.continuous` interpolates (its start shape)
    frame: the frame its hits are reported on (the earlier sample's)
    times: (earlier, later) sample times in frames
    start_contacts, end_contacts: the test's `sample_contacts` at the two samples where
        the caller has them (they spare the narrow phase there), else None
    candidates: the test's `interval_candidates` of these samples where the caller has
        them (made for the later sample's broad phase), else None (made when needed)
    pairs: the interval's `_IntervalPairs` where made already (`with_interval_meshes`)
    meshes: for a test on meshes, the triangles that sweep the pairs the proxies leave
        to the samples (`with_interval_meshes`); None: those pairs are named unswept
    """

    start: ShapeBatch
    end: ShapeBatch
    frame: int
    times: tuple[float, float]
    start_contacts: SampleContacts | None = None
    end_contacts: SampleContacts | None = None
    candidates: IntervalCandidates | None = None
    pairs: _IntervalPairs | None = None
    meshes: IntervalMeshes | None = None


@dataclass(frozen=True)
class _IntervalPairs:
    """What an interval's continuous test advances: the motion of the test's objects
    (row k = object `involved[k]`), and its eligible pairs (k, 2) that are apart at both
    samples and may come within the rule in between, with their thresholds and slacks
    (k,); and for a test on meshes, the moving pairs (u, 2) left to the samples because
    their proxies are within the rule at one of them."""

    motion: SweptMotion
    pairs: np.ndarray
    threshold: np.ndarray
    slack: np.ndarray
    unswept: np.ndarray


def _interval_pairs(prepared: PreparedTest, interval: Interval) -> _IntervalPairs:
    candidates = interval.candidates or interval_candidates(prepared, interval.start, interval.end)
    motion = candidates.motion
    pairs = swept_pairs(motion, candidates.margin, candidates.swept)
    shapes = prepared.involved[pairs]
    # A shape of no size at both samples (scaled to nothing) is swept as a moving point,
    # which clashes with what it passes: it takes part in no clash at either sample.
    vanished = _points(interval.start) & _points(interval.end)
    pairs = pairs[eligible_pair_mask(prepared, shapes) & ~vanished[shapes].any(axis=1)]
    slack = pair_slack(motion, pairs)
    threshold = sweep_thresholds(prepared.test, slack)
    # A pair within the rule at either sample is a sampled clash there (or, for a mesh
    # test, left to the triangles there): only pairs apart at both samples can clash only
    # in between.
    apart = _beyond(prepared, interval.start, interval.start_contacts, pairs, threshold)
    apart &= _beyond(prepared, interval.end, interval.end_contacts, pairs, threshold)
    # On meshes such a pair may be apart at both samples (a crate inside a hollow room,
    # within the room's proxy) and pass through a wall in between: swept on its meshes
    # where it has some (`_mesh_sweeps`).
    on_meshes = prepared.test.geometry == "mesh"
    unswept = pairs[~apart] if on_meshes else np.zeros((0, 2), dtype=np.int64)
    pairs, threshold, slack = pairs[apart], threshold[apart], slack[apart]
    return _IntervalPairs(motion, pairs, threshold, slack, unswept)


def _beyond(
    prepared: PreparedTest,
    batch: ShapeBatch,
    sampled: SampleContacts | None,
    pairs: np.ndarray,
    threshold: np.ndarray,
) -> np.ndarray:
    """Whether each pair ((k, 2) rows of `prepared.involved`) is farther apart than its
    threshold ((k,)) in `batch` (a sample, row k = object k of the table): (k,) bool.

    The sample's own contacts (`sampled`, None where not at hand) hold every candidate
    pair within their margin, with its distance: a pair not among them is beyond any
    threshold up to that margin (all of a hard test's). The narrow phase decides the
    others, with the same distances.

    For a touching test, a pair deeper inside than the threshold is beyond it too: it
    does not touch there, and a pass into the band from a sample apart is to be swept (a
    ball through a 1 m wall, deep inside it at the later sample, was left to that sample,
    which found no touch).
    """
    touching = prepared.test.test_type == "touching"

    def outside(distance, threshold):
        return (np.abs(distance) if touching else distance) > threshold

    shapes = prepared.involved[pairs]
    beyond = np.ones(len(pairs), dtype=bool)
    unknown = np.arange(len(pairs))
    if sampled is not None:
        stride = len(batch)
        keys = shapes[:, 0] * stride + shapes[:, 1]
        known = sampled.contacts.pairs[:, 0] * stride + sampled.contacts.pairs[:, 1]
        found = np.zeros(len(pairs), dtype=bool)
        if len(known):
            order = np.argsort(known)
            at = order[np.searchsorted(known, keys, sorter=order).clip(max=len(known) - 1)]
            found = known[at] == keys
            beyond[found] = outside(sampled.contacts.distances[at[found]], threshold[found])
        unknown = np.flatnonzero(~found & (threshold > sampled.margin))
    if len(unknown):
        first, second = shapes[unknown, 0], shapes[unknown, 1]
        near = np.flatnonzero(pair_intersects(batch, first, second, threshold[unknown].max()))
        result = pair_distance(batch, first[near], second[near])
        beyond[unknown[near]] = outside(result.distance, threshold[unknown[near]])
    return beyond


def evaluate_intervals(prepared: PreparedTest, intervals: Sequence[Interval]) -> list[FrameHits]:
    """The clashes of a continuous test that start between consecutive samples, for each
    of `intervals` (a non-empty sequence).

    returns: per interval, one hit per eligible pair that is apart at both samples and
        comes within the rule's distance in between, at its time of first contact
        (`tois`, fractional frame); decided on the proxies, and for a test on meshes the
        pairs whose proxies are within the rule at a sample on their meshes where the
        interval has them (`with_interval_meshes`, `_mesh_sweeps`)

    The intervals' pairs advance together (`core.continuous.join_motions`): advancing
    takes tens of narrow-phase passes per interval, most over a few pairs, whose cost is
    numpy's per-call overhead, so a pass for several intervals costs little more than
    one for a single interval.
    """
    parts = [interval.pairs or _interval_pairs(prepared, interval) for interval in intervals]
    offsets = np.cumsum([0] + [len(part.motion.start) for part in parts])[:-1]
    motion = join_motions(part.motion for part in parts)
    swept = _mesh_sweeps(prepared, intervals, parts, motion, offsets)
    contacts = motion_contacts(
        motion,
        np.concatenate([part.pairs + offset for part, offset in zip(parts, offsets, strict=True)]),
        np.concatenate([part.threshold for part in parts]),
        np.concatenate(
            [
                np.full(
                    len(part.pairs), TOI_ACCURACY_FRAMES / (interval.times[1] - interval.times[0])
                )
                for interval, part in zip(intervals, parts, strict=True)
            ]
        ),
    )
    hits = []
    first_row = 0
    for interval, part, offset, on_meshes in zip(intervals, parts, offsets, swept, strict=True):
        rows = first_row + np.arange(len(part.pairs))
        first_row += len(part.pairs)
        hits.append(
            _interval_hits(prepared, interval, motion, offset, part, contacts, rows, on_meshes)
        )
    return hits


@dataclass(frozen=True)
class _MeshSweep:
    """The pairs of one interval that its proxies left to the samples, swept on their
    meshes: those that come within the rule in between (rows of the test's objects,
    (h, 2)), their first contacts (`PairContacts`, pairs in table rows) and times (h,)
    in [0, 1]; and those left unswept (u, 2)."""

    pairs: np.ndarray
    contacts: PairContacts
    toi: np.ndarray
    unswept: np.ndarray


def with_interval_meshes(
    prepared: PreparedTest,
    interval: Interval,
    start_matrices: np.ndarray,
    end: FrameMeshes,
    clashing: Sequence[FrameHits] = (),
) -> Interval:
    """`interval` of a continuous test on meshes with its `_IntervalPairs` made and the
    triangles of the objects of the pairs its proxies leave to the samples taken from
    `end`, the later sample's meshes, now (`IntervalMeshes`); `start_matrices` (n, 4, 4)
    are the earlier sample's `FrameMeshes.matrices`. The pairs among `clashing`, the
    test's hits at either sample where known, are that sample's clashes: left to it, not
    swept."""
    part = _interval_pairs(prepared, interval)
    if clashing and len(part.unswept):
        known = {tuple(sorted(names)) for hits in clashing for names in hits.names.tolist()}
        names = prepared.table.names[prepared.involved[part.unswept]].tolist()
        kept = np.array([tuple(sorted(pair)) not in known for pair in names], dtype=bool)
        part = dataclasses.replace(part, unswept=part.unswept[kept])
    rows = np.unique(prepared.involved[part.unswept]).tolist()
    meshes = {row: mesh for row in rows if (mesh := end.mesh_of(row)) is not None}
    return dataclasses.replace(
        interval, pairs=part, meshes=IntervalMeshes(meshes, start_matrices, end.matrices)
    )


def _mesh_sweeps(prepared, intervals, parts, motion, offsets) -> list[_MeshSweep]:
    """Each interval's `_MeshSweep`: the pairs its proxies leave to the samples where
    both objects have triangles (`Interval.meshes`), within the rule at neither sample
    (each sample reports its own), swept on their meshes as their proxies move
    (`core.mesh_sweep`), all intervals' pairs together. A pair the sweep leaves undecided
    (sliding along another within a hair of the rule), one within the rule at neither
    sample but deep inside the other (a touching test), or without triangles stays
    unswept."""
    test = prepared.test
    touching = test.test_type == "touching"
    empty = np.zeros((0, 2), dtype=np.int64)
    # The meshes and the two samples' matrices of the joined motion's rows swept.
    meshes, starts, ends = (
        {},
        np.zeros((len(motion.start), 4, 4)),
        np.zeros((len(motion.start), 4, 4)),
    )
    chosen, joined = [], []
    for interval, part, offset in zip(intervals, parts, offsets, strict=True):
        table_pairs = prepared.involved[part.unswept]
        sweepable = np.zeros(len(part.unswept), dtype=bool)
        if interval.meshes is not None and len(part.unswept):
            known = interval.meshes.meshes
            sweepable = np.array([a in known and b in known for a, b in table_pairs.tolist()])
        chosen.append(np.flatnonzero(sweepable))
        joined.append(part.unswept[sweepable] + offset)
        for row in np.unique(part.unswept[sweepable]).tolist():
            table_row = int(prepared.involved[row])
            meshes[offset + row] = interval.meshes.meshes[table_row]
            starts[offset + row] = interval.meshes.start[table_row]
            ends[offset + row] = interval.meshes.end[table_row]
    pairs = np.concatenate(joined) if joined else empty
    if not len(pairs):
        return [_MeshSweep(empty, _no_contacts(), np.zeros(0), part.unswept) for part in parts]
    threshold = sweep_thresholds(test, pair_slack(motion, pairs))
    mesh_list = [meshes.get(row) for row in range(len(motion.start))]
    # Within the rule at the later sample: that sample's clash, reported there.
    used, local = np.unique(pairs, return_inverse=True)
    at_end = mesh_contacts(
        [mesh_list[row] for row in used.tolist()],
        ends[used],
        local.reshape(-1, 2),
        np.maximum(threshold, 0.0),
    ).distance
    ends_within = (np.abs(at_end) if touching else at_end) <= threshold
    accuracy = min(TOI_ACCURACY_FRAMES / (b - a) for a, b in (i.times for i in intervals))
    swept = np.flatnonzero(~ends_within)
    found = mesh_first_contacts(
        mesh_list, starts, motion, pairs[swept], threshold[swept], time_accuracy=accuracy
    )
    # toi 0: within the rule at the earlier sample, which reports it (but deep inside the
    # other under a touching test, which no sweep from there follows).
    deep = touching & (found.distance < -threshold[swept])
    hit = found.toi > 0
    left = np.zeros(len(pairs), dtype=bool)
    left[swept] = found.undecided | ((found.toi == 0) & deep)
    relations = np.full(len(swept), APART, dtype=np.int8)
    relations[hit] = _MESH_RELATION[found.relation[hit]]
    results, first = [], 0
    for part, offset, rows in zip(parts, offsets, chosen, strict=True):
        mine = np.flatnonzero((swept >= first) & (swept < first + len(rows)))
        mine = mine[hit[mine]]
        own = pairs[swept[mine]] - offset
        contacts = PairContacts(
            pairs=prepared.involved[own],
            distances=found.distance[mine],
            points_i=found.point_i[mine],
            points_j=found.point_j[mine],
            on_mesh=np.ones(len(mine), dtype=bool),
            relations=relations[mine],
        )
        unswept = np.delete(part.unswept, rows[~left[first : first + len(rows)]], axis=0)
        results.append(_MeshSweep(own, contacts, found.toi[mine], unswept))
        first += len(rows)
    return results


def _no_contacts() -> PairContacts:
    return PairContacts(
        pairs=np.zeros((0, 2), dtype=np.int64),
        distances=np.zeros(0),
        points_i=np.zeros((0, 3)),
        points_j=np.zeros((0, 3)),
        on_mesh=np.zeros(0, dtype=bool),
        relations=np.zeros(0, dtype=np.int8),
    )


def _interval_hits(
    prepared, interval, motion, offset, part, contacts, rows, on_meshes: _MeshSweep
) -> FrameHits:
    """FrameHits of one interval from the first contacts (`contacts`, rows `rows`) of its
    pairs (`part`), whose shapes are rows `offset` on of the joined `motion`, and the
    hits its mesh sweep found (`on_meshes`)."""
    # toi 0: within the rule at the earlier sample, which reports it as it is.
    found = np.flatnonzero(contacts.toi[rows] > 0)
    rows = rows[found]
    pairs = np.concatenate([part.pairs[found], on_meshes.pairs])
    toi = np.concatenate([contacts.toi[rows], on_meshes.toi])
    distances = contacts.distance[rows]
    decided = concatenate_fields(
        PairContacts,
        [
            PairContacts(
                pairs=prepared.involved[part.pairs[found]],
                distances=distances,
                points_i=contacts.point_i[rows],
                points_j=contacts.point_j[rows],
                on_mesh=np.zeros(len(rows), dtype=bool),
                # the sweep's own epsilon: a first contact within it of the rule is a touch
                relations=proxy_relations(distances, part.slack[found]),
            ),
            on_meshes.contacts,
        ],
    )
    unswept = orient_pairs(prepared, prepared.involved[on_meshes.unswept])
    hits = hits_from_pairs(
        prepared,
        interval.start,
        interval.frame,
        decided,
        unswept_names=prepared.table.names[unswept].reshape(-1, 2),
    )
    shapes = (pairs + offset).T.reshape(-1)
    lo, hi = shapes_at(motion, shapes, np.concatenate([toi, toi])).aabbs()
    lo, hi = lo.reshape(2, -1, 3), hi.reshape(2, -1, 3)
    bounds = np.stack([lo.min(axis=0), hi.max(axis=0)], axis=1)
    duration = interval.times[1] - interval.times[0]
    return dataclasses.replace(hits, bounds=bounds, tois=interval.times[0] + toi * duration)


def concat_hits(hits: Iterable[FrameHits]) -> FrameHits:
    """All rows of `hits` in order, as one FrameHits."""
    hits = list(hits)
    if not hits:
        return FrameHits(
            frames=np.zeros(0, dtype=np.int64),
            names=np.zeros((0, 2), dtype=object),
            kinds=np.zeros((0, 2), dtype=np.int8),
            distances=np.zeros(0),
            points=np.zeros((0, 3)),
            witnesses=np.zeros((0, 2, 3)),
            bounds=np.zeros((0, 2, 3)),
            on_mesh=np.zeros(0, dtype=bool),
            relations=np.zeros(0, dtype=np.int8),
            tois=np.zeros(0),
            open_mesh_names=np.zeros(0, dtype=object),
            unswept_names=np.zeros((0, 2), dtype=object),
        )
    return concatenate_fields(FrameHits, hits)
