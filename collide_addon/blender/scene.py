"""Reading the scene into proxies: which objects take part, their evaluated geometry
(fitted once per geometry change) and their world transforms (read in bulk).

Each proxy is fitted in the object's *stretched* space and placed in the world by the
rest of its matrix (`core/place.py`), so a fit is reused as long as the stretch does not
change: moving, rotating or uniformly scaling never refits. Reading writes nothing to the
objects: the fits made in a read are listed on the `Proxies` (`refitted`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass

import bpy
import numpy as np

from ..clash.evaluate import FrameMeshes
from ..core import ShapeBatch
from ..core.columns import rows_as_bytes
from ..core.faces import split_faces, splits_faces
from ..core.fit import ProxyFit, fit_shapes, stack_fits
from ..core.mesh import PreparedMeshes, TriangleMesh
from ..core.place import (
    fit_looseness,
    mesh_volumes,
    normalised_stretch,
    place_fits,
    polar_decompose,
    rows_to_refit,
    stretch_keys,
)

GEOMETRY_TYPES = frozenset({"MESH", "CURVE", "SURFACE", "FONT", "META"})

# progress(done, total, stage): `done` of `total` objects read ("reading"), geometries
# fitted ("fitting") or, after the reader, candidate pairs decided on meshes ("meshes").
Progress = Callable[[int, int, str], None]


class SceneReadError(ValueError):
    """The scene cannot be read into proxies; the message names the object."""


class UnusableGeometry(ValueError):
    """An object's evaluated geometry cannot be checked; the message says why. The object
    is left out of the check and named (`Proxies.left_out`), the others are checked."""


# Why an object (or instance) whose world matrix holds a NaN or infinity (a driver's
# division by zero, a script) is left out, as `Proxies.left_out` names it.
UNUSABLE_TRANSFORM = "NaN or infinite transform"


@dataclass(frozen=True)
class _Unusable:
    """What `ProxyReader` keeps for geometry it read and could not use."""

    reason: str


@dataclass
class Proxies:
    """The proxies of one scene read, index k the same in every field.

    batch: ShapeBatch of n world-space proxies
    names: n display names ("Object"; "Owner/Source", or "Owner/Source[k]" where an
        instancer places a source more than once, for instances)
    objects: n original objects owning the proxies (the instancer for instances)
    sources: n original objects each proxy's geometry and settings come from: the object
        itself, for an instance the object instanced (the instancer where Geometry
        Nodes made the geometry)
    owner_rows: (n,) int64, the first proxy index with the same owning object
    fits: n ProxyFit in each proxy's stretched object space (their looseness:
        `ProxyReader.looseness`)
    instances: (n,) bool, whether proxy k is an instance (objects[k] is its instancer)
    refitted: (r,) int64 proxies whose fit was (re)made in this read, ascending
    matrices: (n, 4, 4) float64 world matrices of the proxies' geometry (object space to
        world), which place `ProxyReader.triangle_mesh(geometry_keys[k])`
    geometry_keys: n keys of the proxies' evaluated geometry (shared by linked duplicates)
    left_out: {name: reason} of the objects (or instances) taking part whose geometry
        or transform could not be used (a NaN vertex, a NaN location): they have no
        proxy, and the check says so
    """

    batch: ShapeBatch
    names: list[str]
    objects: list
    sources: list
    owner_rows: np.ndarray
    fits: list[ProxyFit]
    instances: np.ndarray
    refitted: np.ndarray
    matrices: np.ndarray
    geometry_keys: list[tuple]
    left_out: dict[str, str]


@dataclass
class _Geometry:
    """Evaluated vertices (v, 3) float64 in object space, their triangles and the mesh's
    volume once measured (`_measure_volumes`).

    The triangles are Blender's, read with the vertices, or the arrays they are split
    from (`split_faces`: the face of each triangle (t,) and the vertex of each face
    corner (c,), int32), split when first needed: fitting proxies needs only the
    vertices, and splitting took a quarter of a second of `bench_fit.py`'s first Detect
    of 1,000 meshes.
    """

    points: np.ndarray
    _triangles: np.ndarray | None = None
    _faces: tuple[np.ndarray, np.ndarray] | None = None
    volume: float | None = None

    @property
    def triangles(self) -> np.ndarray:
        """(t, 3) int32 indices into `points`."""
        if self._triangles is None:
            # The stored float32 vertices, as `split_faces` tests the quads' diagonals.
            self._triangles = split_faces(*self._faces, self.points).reshape(-1, 3)
            self._faces = None
        return self._triangles


def _measure_volumes(geometries: list[_Geometry]) -> None:
    """Measure the volume of each of `geometries` not yet measured, all in one call
    (`mesh_volumes`): a building's thousands of elements measured one by one cost more
    in numpy's calls than in arithmetic."""
    unmeasured = list({id(g): g for g in geometries if g.volume is None}.values())
    volumes = mesh_volumes([g.points for g in unmeasured], [g.triangles for g in unmeasured])
    for geometry, volume in zip(unmeasured, volumes.tolist(), strict=True):
        geometry.volume = volume


@dataclass
class _Entry:
    name: str
    owner: object
    geometry_key: tuple
    settings_object: object
    is_instance: bool


@dataclass
class _Structure:
    """Who takes part, fixed until an edit other than a pure transform."""

    entries: list[_Entry]
    use_instances: bool
    participant_ids: list  # sorted `_identities` of `participants` when built
    owner_names: list[str]  # name_full of each entry's owning object
    rows: np.ndarray  # (n,) row of each entry in _layer_objects (bulk path)
    object_count: int  # len(_layer_objects(depsgraph)) when built
    names: list[str]
    owners: list
    sources: list  # each entry's settings object (`Proxies.sources`)
    # `_identity` of each entry's settings object when built (read now, an object
    # deleted since would raise).
    source_ids: list
    owner_rows: np.ndarray  # (n,) first entry with the same owner
    owner_names_by_address: dict  # {as_pointer(): name_full} of the owners when built
    instances: np.ndarray  # (n,) bool, entry k is an instance
    geometry_keys: list[tuple]
    fits: list[ProxyFit | None]
    fitted: np.ndarray  # (n,) bool, whether fits[k] is set
    # Whether an entry's geometry may change without an edit (see `has_changing_geometry`).
    changing_geometry: bool
    # `_identities` of each object of the view layer, in its order (that of
    # `_layer_objects`), when built (None with instances): `rows` hold only while the
    # layer holds these objects in this order.
    layer_ids: list | None
    # (name, "object" | "data") whose geometry updates may give a participant left out
    # for having no vertices (an empty mesh filled later) or unusable ones its vertices.
    skipped_names: frozenset[tuple[str, str]]
    # {name: reason} of the participants left out for unusable geometry or transforms.
    left_out: dict[str, str]
    # Where the participants left out for their transform are: rows of `_layer_objects`
    # (a read builds again once one of them is usable), or with instances positions in
    # the walk (a read then builds again every time, `_kept_entries_matrices`).
    unplaced: np.ndarray
    # With instances: where in the walk of `depsgraph.object_instances` each entry was
    # found, and the `_placement` of every instance of the walk (`_walked_matrices`);
    # None without.
    walk: tuple[list[int], list] | None = None
    fit_arrays: ShapeBatch | None = None  # the fits in their stretched object spaces
    stretch: np.ndarray | None = None  # (n, 3, 3) normalised stretch of the current fits
    matrices: np.ndarray | None = None  # (n, 4, 4) of the last read
    world: ShapeBatch | None = None  # the fits placed by `matrices`


def participants(scene, view_layer) -> list:
    """Original objects taking part under `scene.collide.scope`, visible and with
    geometry (or instancing some)."""
    settings = scene.collide
    if settings.scope == "SELECTION":
        candidates = view_layer.objects.selected
    elif settings.scope == "COLLECTION":
        if settings.collection is None:
            raise SceneReadError("the scope is Collection but no collection is set")
        candidates = settings.collection.all_objects
    else:
        candidates = view_layer.objects
    return [
        obj
        for obj in candidates
        if (obj.type in GEOMETRY_TYPES or obj.instance_type != "NONE")
        and obj.visible_get(view_layer=view_layer)
    ]


def _makes_instances(obj) -> bool:
    return (
        obj.instance_type != "NONE"
        or any(modifier.type == "NODES" for modifier in obj.modifiers)
        or len(obj.particle_systems) > 0
    )


def read_geometry(evaluated) -> _Geometry | None:
    """Vertices and triangles of an evaluated object; None when it has no vertices.
    Raises UnusableGeometry for NaN or infinite vertex coordinates."""
    # An object in Edit Mode evaluates to a wrapper of its edit mesh whose vertices read
    # as none: `to_mesh` makes them (the object would otherwise drop out of the check).
    if evaluated.type == "MESH" and not evaluated.data.is_editmode:
        mesh, temporary = evaluated.data, False
    else:
        mesh, temporary = evaluated.to_mesh(), True
    try:
        if mesh is None or len(mesh.vertices) == 0:
            return None
        stored = _positions(mesh).reshape(-1, 3)
        points = stored.astype(np.float64)
        if not np.isfinite(points).all():
            raise UnusableGeometry("NaN or infinite vertex coordinates")
        triangles = _triangles(mesh)
        if isinstance(triangles, tuple):
            return _Geometry(points, _faces=triangles)
        return _Geometry(points, triangles.reshape(-1, 3))
    finally:
        if temporary:
            evaluated.to_mesh_clear()


def _positions(mesh) -> np.ndarray:
    """The mesh's vertex coordinates, flat (3 v,) float32.

    Read from the position attribute where Blender has one (3.5 and later): its bulk read
    copies one array, some 50 times faster than `vertices.foreach_get("co")`, which goes
    vertex by vertex (17 ms for 280k vertices in bpy 5.0.1, against 0.3 ms).
    """
    coordinates = np.empty(len(mesh.vertices) * 3, np.float32)
    position = mesh.attributes.get("position")
    if position is not None and position.domain == "POINT" and position.data_type == "FLOAT_VECTOR":
        position.data.foreach_get("vector", coordinates)
    else:
        mesh.vertices.foreach_get("co", coordinates)
    return coordinates


# Meshes of this many triangles or more are split from their faces' corners: splitting
# costs about 70 us a mesh plus 0.034 us a triangle (numpy 1.26), reading Blender's
# triangles about 0.1 us a triangle, so smaller meshes (a building's elements) read
# Blender's.
_SPLIT_FROM_TRIANGLES = 1024


def _triangles(mesh) -> np.ndarray | tuple[np.ndarray, np.ndarray]:
    """Blender's triangulation of the mesh (its loop triangles) as vertex indices, flat
    (3 t,) int32, or the arrays `split_faces` makes them from.

    Where each triangle's face is an array (4.1 and later) and the mesh has faces of
    three and four corners only (`splits_faces`) and `_SPLIT_FROM_TRIANGLES` triangles
    or more, the triangles are to be made from the faces' corners: the face of each
    triangle (t,) and the vertex of each corner (c,) are returned instead, and no
    triangle is read one at a time (about 0.55 s for 1,000 meshes of a few thousand
    vertices in bpy 5.0.1). Otherwise, where the corners' vertices are an attribute
    (3.6 and later), each triangle's corners are read and looked up in it: about a fifth
    faster than `loop_triangles`' own vertices, which Blender looks up one triangle at a
    time.
    """
    if hasattr(mesh, "calc_loop_triangles"):
        mesh.calc_loop_triangles()
    triangles = np.empty(len(mesh.loop_triangles) * 3, np.int32)
    corner_vertices = mesh.attributes.get(".corner_vert")
    if corner_vertices is None:
        mesh.loop_triangles.foreach_get("vertices", triangles)
        return triangles
    vertex_of_corner = np.empty(len(mesh.loops), np.int32)
    corner_vertices.data.foreach_get("value", vertex_of_corner)
    faces_of_triangles = getattr(mesh, "loop_triangle_polygons", None)
    if faces_of_triangles is not None and len(triangles) >= 3 * _SPLIT_FROM_TRIANGLES:
        faces = np.empty(len(triangles) // 3, np.int32)
        faces_of_triangles.foreach_get("value", faces)
        if splits_faces(faces, len(vertex_of_corner)):
            return faces, vertex_of_corner
    mesh.loop_triangles.foreach_get("loops", triangles)
    return vertex_of_corner[triangles]


def _layer_objects(depsgraph):
    """The evaluated objects of the depsgraph's view layer, in the layer's order.

    Bulk reads go through this collection rather than `depsgraph.objects`: it holds the
    same evaluated objects (those that take part are visible, hence evaluated) but is a
    plain list, so `foreach_get` over it is about twice as fast at 10,000 objects.
    """
    return depsgraph.view_layer_eval.objects


def _bulk_matrices(depsgraph, count: int) -> np.ndarray:
    """World matrices of every object of `_layer_objects`: (m, 4, 4) float64.

    count: the number of those objects, which the caller has (Blender counts by
    iterating).
    """
    flat = np.empty(count * 16, np.float32)
    _layer_objects(depsgraph).foreach_get("matrix_world", flat)
    return _row_major(flat)


def _matrices_if_count(depsgraph, count: int) -> np.ndarray | None:
    """World matrices of `_layer_objects`, (count, 4, 4) float64, if there are exactly
    `count` of them; else None.

    Counting the objects walks the whole list (about 1 ms at 10,000 objects), so the
    count is checked by the bulk read itself: Blender fills as many rows as there are
    objects and raises when the buffer is too small, so a NaN sentinel row after the
    expected ones shows more objects (filled) or fewer (an expected row left NaN).
    """
    rows = np.full((count + 1, 16), np.nan, np.float32)
    try:
        _layer_objects(depsgraph).foreach_get("matrix_world", rows.ravel())
    except RuntimeError:
        return None
    if not np.isnan(rows[count]).all() or (count and np.isnan(rows[count - 1]).all()):
        return None
    return _row_major(rows[:count])


def _row_major(columns: np.ndarray) -> np.ndarray:
    """Matrices as Blender stores them, column by column ((m, 16) float32 or flat), as
    (m, 4, 4) float64 rows, laid out in that order (C-contiguous): a transposed view
    would be copied again by every consumer that needs whole rows (comparing matrices
    bit for bit, gathering rows)."""
    return columns.reshape(-1, 4, 4).transpose(0, 2, 1).astype(np.float64, order="C")


class ProxyReader:
    """Reads a scene into `Proxies`, keeping geometry, fits and who-takes-part between
    reads so that a frame where only transforms changed costs one bulk read."""

    def __init__(self) -> None:
        self._geometry: dict[tuple, _Geometry | _Unusable | None] = {}
        # The `_identity` of the object or mesh each name-keyed geometry was read from.
        self._geometry_owners: dict[tuple, object] = {}
        self._fits: dict[tuple, ProxyFit] = {}
        self._meshes: dict[tuple, TriangleMesh | None] = {}
        # Meshes that are copies of one shape (a building's repeated elements) share
        # its preparation.
        self._prepared = PreparedMeshes()
        self._structure: _Structure | None = None
        # Set by `invalidate`, cleared by the next read:
        self._rebuild = True  # find who takes part again
        self._recheck = False  # check whether who takes part changed; rebuild if so
        self._refit_all = True  # no fit of the last read may be kept
        self._stale_keys: set[tuple] = set()  # geometry keys whose fits must be redone
        self._changed_names: set[tuple[str, str]] = set()  # given to `geometry_changed`
        # Counts the times meshes were forgotten or rows built again (`FrameMeshes.version`).
        self._mesh_version = 0

    def invalidate(
        self, geometry_names: set[tuple[str, str]] | frozenset = frozenset(), refit: bool = False
    ) -> None:
        """Find who takes part again at the next read; forget the geometry and fits of
        `geometry_names`, (name, "object") or (name, "data") of the objects, meshes or
        curves whose geometry changed (objects and meshes may share names); with
        `refit`, fit every proxy again (a shape setting changed)."""
        self._rebuild = True
        self._refit_all |= refit
        self._forget(geometry_names)

    def forget_everything(self) -> None:
        """Read every geometry and fit every proxy again at the next read (what changed
        is not known)."""
        self.invalidate(refit=True)
        self._forget({_updated_by(key) for key in (*self._geometry, *self._meshes)})

    def geometry_changed(self, geometry_names: set[tuple[str, str]] | frozenset) -> None:
        """The geometry of `geometry_names` ((name, "object" or "data") as for
        `invalidate`) changed, nothing else: at the next read, only the proxies using it
        are read and fitted again (unless one now needs another geometry key, makes
        instances or has no vertices, which rebuilds). Who takes part is not looked at:
        a geometry change leaves types and visibility as they were, and finding who
        takes part walks every object (a deforming object among 10,000 would pay that
        on every frame)."""
        self._forget(geometry_names)
        self._changed_names |= set(geometry_names)

    def _forget(self, geometry_names) -> None:
        if not geometry_names:
            return  # every edit comes here: a move of one of 20,000 objects walked them all
        self._mesh_version += 1
        for key in [key for key in self._geometry if _updated_by(key) in geometry_names]:
            del self._geometry[key]
            self._stale_keys.add(key)
        for key in [key for key in self._fits if _updated_by(key) in geometry_names]:
            del self._fits[key]
        for key in [key for key in self._meshes if _updated_by(key) in geometry_names]:
            mesh = self._meshes.pop(key)
            if mesh is not None:
                self._prepared.forget(mesh)

    def geometry(self, geometry_key: tuple) -> _Geometry | None:
        """The evaluated geometry of a geometry key of the last read
        (`Proxies.geometry_keys`): vertices (v, 3) float64 in object space and
        triangles (t, 3) int32; None without vertices. A new object whenever that
        geometry was read again."""
        geometry = self._geometry.get(geometry_key)
        return geometry if isinstance(geometry, _Geometry) else None

    def triangle_mesh(self, geometry_key: tuple) -> TriangleMesh | None:
        """The TriangleMesh of a geometry key of the last read (`Proxies.geometry_keys`),
        prepared on first use (a translated copy of a mesh prepared before takes that
        one's preparation) and kept until its geometry changes; None without triangles
        (a curve without bevel, a point cloud)."""
        if geometry_key not in self._meshes:
            geometry = self.geometry(geometry_key)
            has_triangles = geometry is not None and len(geometry.triangles)
            self._meshes[geometry_key] = (
                self._prepared.prepare(geometry.points, geometry.triangles)
                if has_triangles
                else None
            )
        return self._meshes[geometry_key]

    def looseness(self, proxies: Proxies, rows) -> np.ndarray:
        """How much larger the proxies `rows` (r,) of `proxies` (a read of this reader)
        are than the meshes they enclose (`core.place.fit_looseness`): (r,) float64, 0
        where a mesh encloses no volume, NaN where its geometry changed since.

        The meshes' volumes are measured here, those not measured yet all at once, and
        kept with their geometry: the first Detect of many meshes does not wait for
        them, the panel asks for the active object's."""
        rows = np.asarray(rows, dtype=np.int64).reshape(-1)
        # None where the geometry was read again since and is unusable now.
        geometries = [self.geometry(proxies.geometry_keys[row]) for row in rows.tolist()]
        known = np.array([geometry is not None for geometry in geometries], dtype=bool)
        _measure_volumes([geometry for geometry in geometries if geometry is not None])
        _, stretch = polar_decompose(proxies.matrices[rows[known], :3, :3])
        looseness = np.full(len(rows), np.nan)
        looseness[known] = fit_looseness(
            [proxies.fits[row].volume for row in rows[known].tolist()],
            [geometry.volume for geometry in geometries if geometry is not None],
            normalised_stretch(stretch)[0],
        )
        return looseness

    def frame_meshes(self, proxies: Proxies) -> FrameMeshes:
        """The triangles of `proxies` (this reader's last read) for deciding on meshes,
        each prepared when a candidate pair first needs it (`triangle_mesh`)."""
        keys, triangle_mesh = proxies.geometry_keys, self.triangle_mesh
        return FrameMeshes(
            lambda row: triangle_mesh(keys[row]), proxies.matrices, self._mesh_version
        )

    def recheck_participants(self) -> None:
        """At the next read, find who takes part and rebuild only if that changed: for
        selection, visibility and membership changes, which leave names, geometry and
        settings as they were (a click selecting an object in live mode)."""
        self._recheck = True

    @property
    def has_read(self) -> bool:
        """Whether it keeps what a read found (who takes part, geometry, fits)."""
        return self._structure is not None

    @property
    def has_changing_geometry(self) -> bool:
        """Whether a proxy's geometry may change without an edit (modifiers, shape keys,
        curves, instances): only then must frame changes look for geometry updates."""
        structure = self._structure
        return structure is None or structure.changing_geometry

    def read(
        self,
        depsgraph,
        scene,
        only_if_moved: bool = False,
        progress: Progress | None = None,
    ) -> Proxies | None:
        """The scene's proxies; with `only_if_moved`, None when the same proxies are at
        the same places as in the last read. Raises SceneReadError for unusable input
        (NaN/inf, no collection).

        Who takes part, geometry and fits are kept from the last read: `invalidate`
        (object edits, settings) builds them again, `geometry_changed` (geometry edits,
        and geometry a frame change updated) refits only what uses that geometry, and
        `recheck_participants` (selection, visibility, membership) keeps them when the
        same objects take part.
        """
        previous = self._structure
        changed = self._recheck or self._changed_names or self._stale_keys
        if previous is not None and self._changed_names & previous.skipped_names:
            # A participant without vertices got some: it takes part now.
            self._rebuild = True
        if changed and not self._rebuild and previous is not None:
            # Comparing who takes part, and reading the changed geometry, cost a
            # fraction of building every entry again.
            self._rebuild = (
                previous.use_instances
                or (self._recheck and not _same_participants(previous, scene, depsgraph))
                or not self._reread_changed(previous, depsgraph)
            )
        self._recheck = False
        self._changed_names.clear()
        forced = self._refit_all or bool(self._stale_keys)
        matrices = None
        if previous is not None and not self._rebuild:
            matrices = _kept_entries_matrices(previous, depsgraph)
        if matrices is None:
            structure, matrices = self._build(depsgraph, scene, progress)
        else:
            structure = previous
        same_proxies = (
            previous is not None
            and structure.geometry_keys == previous.geometry_keys
            and structure.names == previous.names
        )
        if structure is not previous and same_proxies and not self._refit_all:
            # Keep the fits; refit where the geometry or the stretch changed.
            structure.fits = previous.fits
            structure.fitted = previous.fitted.copy()
            structure.stretch = previous.stretch
            structure.fit_arrays = previous.fit_arrays
            structure.matrices = previous.matrices
            structure.world = previous.world
        elif structure is not previous and previous is not None and not self._refit_all:
            _carry_over(previous, structure)
        if structure is not previous and self._stale_keys and structure.fit_arrays is not None:
            stale = [key in self._stale_keys for key in structure.geometry_keys]
            structure.fitted[np.array(stale, dtype=bool)] = False
        if (
            only_if_moved
            and not forced
            and same_proxies
            and structure.matrices is not None
            and np.array_equal(structure.matrices, matrices)
        ):
            self._structure = structure
            self._rebuild = False
            return None
        refitted = self._place(structure, matrices, progress)
        self._structure = structure
        self._rebuild = self._refit_all = False
        self._stale_keys.clear()
        return Proxies(
            batch=structure.world,
            names=structure.names,
            objects=structure.owners,
            sources=structure.sources,
            owner_rows=structure.owner_rows,
            fits=list(structure.fits),
            instances=structure.instances,
            refitted=refitted,
            matrices=structure.matrices,
            geometry_keys=structure.geometry_keys,
            left_out=structure.left_out,
        )

    def _reread_changed(self, structure: _Structure, depsgraph) -> bool:
        """Read again the geometry of the entries whose geometry or owner changed and
        mark them for refitting; False when one now needs another geometry key, makes
        instances or has no vertices (then who takes part must be built again)."""
        if not (self._stale_keys or self._changed_names):
            return True  # a selection or visibility change: no entry to look at
        changed = [
            row
            for row, (key, owner_name) in enumerate(
                zip(structure.geometry_keys, structure.owner_names, strict=True)
            )
            if key in self._stale_keys or (owner_name, "object") in self._changed_names
        ]
        for row in changed:
            entry = structure.entries[row]
            original = entry.settings_object
            if _makes_instances(original) or _geometry_key(original) != entry.geometry_key:
                return False
            evaluated = original.evaluated_get(depsgraph)
            if not isinstance(self._geometry_of(entry.geometry_key, evaluated), _Geometry):
                return False
        structure.fitted[changed] = False
        return True

    def _geometry_of(self, key: tuple, evaluated) -> _Geometry | _Unusable | None:
        if key[1] in ("mesh", "object"):
            # Keyed by name: another object or mesh may have taken the name since (a
            # rename, which updates no geometry), and what was read and fitted under it
            # is not its own (an object renamed to a modifier object's former name took
            # that object's proxy).
            original = evaluated.original
            owner = _identity(original.data if key[1] == "mesh" else original)
            if self._geometry_owners.setdefault(key, owner) != owner:
                self._forget({_updated_by(key)})
                self._geometry_owners[key] = owner
        if key not in self._geometry:
            try:
                self._geometry[key] = read_geometry(evaluated)
            except UnusableGeometry as error:
                # Kept like geometry, so that only an update of it reads it again.
                self._geometry[key] = _Unusable(str(error))
        return self._geometry[key]

    def known_name(self, address: int) -> str | None:
        """The name the last read knows the object at `address` (as_pointer()) by, as
        owner of a proxy; None for an object it knows none of."""
        structure = self._structure
        return None if structure is None else structure.owner_names_by_address.get(address)

    def _build(self, depsgraph, scene, progress):
        """Who takes part, reading geometry that is not cached: (structure, matrices)."""
        self._mesh_version += 1  # rows may now hold other objects
        layer_objects = _layer_objects(depsgraph)
        object_count = len(layer_objects)
        taking_part = participants(scene, depsgraph.view_layer)
        pointers = {obj.as_pointer() for obj in taking_part}
        use_instances = any(_makes_instances(obj) for obj in taking_part)
        # With instances every change builds again (`read`): no order or skipped names.
        layer_ids, skipped_names, walk = None, frozenset(), None
        if use_instances:
            entries, matrices, left_out, walk, unplaced = self._instance_entries(
                depsgraph, pointers
            )
            rows_array = np.zeros(len(entries), np.int64)
            matrices_array = np.array(matrices, dtype=np.float64).reshape(-1, 4, 4)
        else:
            all_matrices = _bulk_matrices(depsgraph, object_count)
            entries, rows, layer_ids, skipped_names, left_out, unplaced = self._object_entries(
                layer_objects, pointers, _finite_rows(all_matrices), progress
            )
            rows_array = np.array(rows, dtype=np.int64)
            matrices_array = all_matrices[rows_array]
        owner_pointers = [entry.owner.as_pointer() for entry in entries]
        structure = _Structure(
            entries=entries,
            use_instances=use_instances,
            participant_ids=sorted(_identities(taking_part)),
            owner_names=[entry.owner.name_full for entry in entries],
            rows=rows_array,
            object_count=object_count,
            names=unique_names(
                [entry.name for entry in entries], [not entry.is_instance for entry in entries]
            ),
            owners=[entry.owner for entry in entries],
            sources=[entry.settings_object for entry in entries],
            source_ids=[_identity(entry.settings_object) for entry in entries],
            owner_rows=_first_rows(owner_pointers),
            owner_names_by_address=dict(
                zip(owner_pointers, (entry.owner.name_full for entry in entries), strict=True)
            ),
            instances=np.array([entry.is_instance for entry in entries], dtype=bool),
            geometry_keys=[entry.geometry_key for entry in entries],
            fits=[None] * len(entries),
            fitted=np.zeros(len(entries), dtype=bool),
            changing_geometry=any(
                entry.is_instance or entry.geometry_key[1] != "mesh" for entry in entries
            ),
            layer_ids=layer_ids,
            walk=walk,
            skipped_names=skipped_names,
            left_out=left_out,
            unplaced=np.array(unplaced, dtype=np.int64),
        )
        return structure, matrices_array

    def _instance_entries(
        self, depsgraph, pointers: set[int]
    ) -> tuple[list, list, dict, tuple, list]:
        """Entries and world matrices (4, 4) from the depsgraph's instances: every object
        and every instance (collection instances, Geometry Nodes) of the participants;
        {name: reason} of those whose geometry or transform is unusable, left out; the
        walk's positions of the entries and the `_placement` of each of its instances
        (`_Structure.walk`); and the walk's positions of those left out for their
        transform.

        An instance is named "Owner/Source" after its instancer and the object (or, made
        by Geometry Nodes, the mesh) it places; one placed through nested collection
        instances "Owner/Via/Source" after the instancers between (`_placed_through`),
        so that a window's frame is "Building/Window 2/Frame" whatever other windows are
        added or deleted; "Owner/Source[k]" where the instancer places that source more
        than once otherwise (a scatter), k counting those in the depsgraph's order:
        clash ids and statuses follow names, and a count over all of an instancer's
        instances renamed every instance of a linked model after an object deleted from
        it (an approved clash turned resolved and came back new)."""
        entries, matrices, left_out = [], [], {}
        positions, placements, unplaced = [], [], []
        collection_objects: dict[int, list] = {}
        for instance in depsgraph.object_instances:
            placements.append(_placement(instance))
            evaluated = instance.object
            if evaluated.type not in GEOMETRY_TYPES:
                continue
            source = evaluated.original
            owner = instance.parent.original if instance.is_instance else source
            if owner.as_pointer() not in pointers:
                continue
            key, name = _instance_key_and_name(instance, owner, collection_objects)
            matrix = np.array(instance.matrix_world, dtype=np.float64)
            if not np.isfinite(matrix).all():
                left_out[name] = UNUSABLE_TRANSFORM
                unplaced.append(len(placements) - 1)
                continue
            geometry = self._geometry_of(key, evaluated)
            if isinstance(geometry, _Unusable):
                left_out[name] = geometry.reason
            if not isinstance(geometry, _Geometry):
                continue
            entries.append(_Entry(name, owner, key, source, instance.is_instance))
            matrices.append(matrix)
            positions.append(len(placements) - 1)
        repeats = Counter(entry.name for entry in entries if entry.is_instance)
        seen: Counter = Counter()
        for entry in entries:
            if entry.is_instance and repeats[entry.name] > 1:
                seen[entry.name] += 1
                entry.name = f"{entry.name}[{seen[entry.name] - 1}]"
        return entries, matrices, left_out, (positions, placements), unplaced

    def _object_entries(
        self, layer_objects, pointers: set[int], finite: np.ndarray, progress
    ) -> tuple:
        """Entries of the participants among the view layer's objects and their rows in
        it (for the bulk matrix read); the `_identities` of every object's original in the
        layer's order; the `_updated_by` names of the participants left out for having
        no vertices or unusable ones; {name: reason} of the latter and of those left out
        for a transform that is not `finite` ((m,) bool, by row); and those ones' rows."""
        entries, rows, originals, skipped, left_out, unplaced = [], [], [], set(), {}, []
        object_count = len(layer_objects)
        for row, evaluated in enumerate(layer_objects):
            if progress is not None:
                progress(row, object_count, "reading")
            original = evaluated.original
            originals.append(original)
            if original.as_pointer() not in pointers or evaluated.type not in GEOMETRY_TYPES:
                continue
            if not finite[row]:
                left_out[original.name_full] = UNUSABLE_TRANSFORM
                unplaced.append(row)
                continue
            key = _geometry_key(original)
            # Objects without vertices (an empty mesh) or with unusable ones have no proxy.
            geometry = self._geometry_of(key, evaluated)
            if not isinstance(geometry, _Geometry):
                skipped.add(_updated_by(key))
                if geometry is not None:
                    left_out[original.name_full] = geometry.reason
                continue
            entries.append(_Entry(original.name_full, original, key, original, False))
            rows.append(row)
        return entries, rows, _identities(originals), frozenset(skipped), left_out, unplaced

    def _place(self, structure: _Structure, matrices: np.ndarray, progress) -> np.ndarray:
        """Refit where the stretch changed or no fit exists, then move fits to the world;
        returns the rows refitted, (r,) int64.

        Only the rows `_rows_to_place` names are decomposed and placed again: one object
        dragged among 20,000 placed all of them on every update. Each row is computed
        alone, so every other row keeps what placing it again would give."""
        rows = _rows_to_place(structure, matrices)
        every = len(rows) == len(matrices)
        # Every row (all objects moving): views, not copies.
        chosen = slice(None) if every else rows
        orthogonal, stretch = polar_decompose(matrices[chosen, :3, :3])
        placed_stretch, size = normalised_stretch(stretch)
        previous = None if structure.stretch is None else structure.stretch[chosen]
        changed = rows[rows_to_refit(placed_stretch, structure.fitted[chosen], previous)]
        normalised = placed_stretch
        if not every:
            normalised = structure.stretch.copy()
            normalised[rows] = placed_stretch
        if len(changed) or structure.fit_arrays is None:
            self._refit(structure, changed, normalised, progress)
        fits = structure.fit_arrays if every else structure.fit_arrays.take(rows)
        placed = place_fits(fits, orthogonal, size, matrices[chosen, :3, 3])
        structure.world = placed if every else structure.world.with_rows(rows, placed)
        structure.stretch = normalised
        structure.matrices = matrices
        return changed

    def _refit(self, structure, changed, normalised, progress) -> None:
        keys = [
            (
                *structure.entries[k].geometry_key,
                structure.entries[k].settings_object.collide.shape,
                stretch,
            )
            for k, stretch in zip(changed, stretch_keys(normalised[changed]), strict=True)
        ]
        self._fit_missing(structure, changed, keys, normalised, progress)
        for k, key in zip(changed, keys, strict=True):
            structure.fits[k] = self._fits[key]
            structure.fitted[k] = True
        arrays = structure.fit_arrays
        if arrays is None or len(arrays) != len(structure.fits):
            structure.fit_arrays = stack_fits(structure.fits)
        elif len(changed):
            # A few refits (a deforming object): their rows into copies (the last read's
            # proxies share these arrays), not all n fits stacked again.
            refitted = stack_fits([structure.fits[k] for k in changed])
            structure.fit_arrays = arrays.with_rows(changed, refitted)

    def _fit_missing(self, structure, changed, keys, normalised, progress) -> None:
        """Fit the rows of `changed` whose `keys` have no cached fit, each key once; the
        fits of one shape setting are made together (`fit_shapes`, which reports its
        progress group by group), much faster than one by one."""
        missing: dict[tuple, int] = {}
        for k, key in zip(changed, keys, strict=True):
            if key not in self._fits:
                missing.setdefault(key, k)
        by_shape: dict[str, list[tuple]] = {}
        for key in missing:
            by_shape.setdefault(key[-2], []).append(key)
        done = 0
        for shape, shape_keys in by_shape.items():
            point_sets = [
                self._geometry[structure.entries[missing[key]].geometry_key].points
                @ normalised[missing[key]]
                for key in shape_keys
            ]
            fits = fit_shapes(point_sets, shape, progress=_counted_on(progress, done, len(missing)))
            self._fits.update(zip(shape_keys, fits, strict=True))
            done += len(shape_keys)


def _carry_over(previous: _Structure, structure: _Structure) -> None:
    """Give the entries of a `structure` built anew the fits, stretches and placed
    proxies of the entries of `previous` with the same name, geometry key and settings
    object, so that only the others are refitted and placed (the rest as if the entry
    had not moved): hiding one object of 10,000 in live mode refitted and placed all
    10,000 from the fit cache. Nothing is carried where none matches or `previous` was
    never placed."""
    if previous.fit_arrays is None or previous.world is None or previous.stretch is None:
        return

    def keys(of: _Structure):
        # The settings object too: two objects sharing a mesh whose names a script
        # swapped in one update have the same names and geometry, not the same shape
        # setting (a change of that setting refits everything, `_refit_all`).
        return zip(of.names, of.geometry_keys, of.source_ids, strict=True)

    earlier = {key: row for row, key in enumerate(keys(previous))}
    sources = np.array([earlier.get(key, -1) for key in keys(structure)], dtype=np.int64)
    found = sources >= 0
    if not found.any():
        return
    # Rows with no match take row 0's values as placeholders: they are unfitted, so
    # `_place` refits them and places them anew (`_rows_to_place`).
    taken = np.where(found, sources, 0)
    structure.fits = [previous.fits[source] if source >= 0 else None for source in sources.tolist()]
    structure.fitted = found & previous.fitted[taken]
    structure.stretch = previous.stretch[taken]
    structure.fit_arrays = previous.fit_arrays.take(taken)
    structure.matrices = previous.matrices[taken]
    structure.world = previous.world.take(taken)


def _rows_to_place(structure: _Structure, matrices: np.ndarray) -> np.ndarray:
    """The rows (r,) of `structure` to place by `matrices` (n, 4, 4): those whose matrix
    differs bit for bit from the last placement's or that have no fit; every row when
    the structure's proxies were never placed."""
    count = len(matrices)
    if (
        structure.world is None
        or structure.stretch is None
        or structure.fit_arrays is None
        or len(structure.fit_arrays) != count
        or structure.matrices is None
        or len(structure.matrices) != count
    ):
        return np.arange(count)
    moved = rows_as_bytes(matrices) != rows_as_bytes(structure.matrices)
    return np.flatnonzero(moved | ~structure.fitted)


def _counted_on(progress, before: int, total: int):
    """`progress(done, total)` as `fit_shapes` calls it for one shape's fits, reporting
    the fits of all shapes as the "fitting" stage: `before` of `total` were made
    earlier. None stays None."""
    if progress is None:
        return None
    return lambda fitted, _: progress(before + fitted, total, "fitting")


def _same_participants(structure: _Structure, scene, depsgraph) -> bool:
    """Whether the objects taking part are those `structure` was built from, at the
    rows it reads their matrices from: an object moved to another collection, or one
    deleted and another added, leaves the count as it was but moves rows."""
    view_layer = depsgraph.view_layer
    # The original view layer lists its objects in the order of the evaluated one.
    if structure.layer_ids is not None and _identities(view_layer.objects) != structure.layer_ids:
        return False
    return sorted(_identities(participants(scene, view_layer))) == structure.participant_ids


# Blender 4.2 and later number every datablock of a session, a number never given again;
# an object added after another was deleted may take its address (as_pointer()), and rows
# kept for the deleted one would then read the new one's matrix under the deleted one's
# name (and tint through a Python object whose datablock is gone: a crash).
_HAS_SESSION_UID = "session_uid" in bpy.types.ID.bl_rna.properties


def _kept_entries_matrices(structure: _Structure, depsgraph) -> np.ndarray | None:
    """The world matrices (n, 4, 4) of `structure`'s entries now, or None when who takes
    part must be built again: the objects or instances are not where it found them, an
    entry's transform is no longer usable, or one left out for its transform is usable
    again."""
    if structure.use_instances:
        # An instance left out for its transform is no entry, so the walk does not read
        # it: build again to see whether it is usable now.
        if len(structure.unplaced):
            return None
        # Only transforms changed: the instances are where the walk found them.
        matrices = _walked_matrices(depsgraph, structure.walk)
    else:
        every = _matrices_if_count(depsgraph, structure.object_count)
        if every is None or _finite_rows(every[structure.unplaced]).any():
            return None
        matrices = every[structure.rows]
    return matrices if matrices is None or _finite_rows(matrices).all() else None


def _walked_matrices(depsgraph, walk: tuple[list[int], list]) -> np.ndarray | None:
    """The world matrices (n, 4, 4) of the entries found by a walk of the depsgraph's
    instances (`_Structure.walk`), read again at their positions, or None when any
    instance of the walk is placed otherwise now (`_placement`: another object, another
    instancer or path, one more or fewer; then who takes part is built again). Building
    every entry again made each update of a scene with one collection instance 7 to 33
    times slower (1,000 to 10,000 objects)."""
    positions, placements = walk
    matrices = np.empty((len(positions), 4, 4))
    row, count = 0, 0
    for index, instance in enumerate(depsgraph.object_instances):
        # Every instance, not only the entries': an instancer whose instance type is
        # keyed turns an object that was no entry into an instance that is one.
        if index >= len(placements) or _placement(instance) != placements[index]:
            return None
        if row < len(positions) and positions[row] == index:
            matrices[row] = instance.matrix_world
            row += 1
        count = index + 1
    return matrices if count == len(placements) and row == len(positions) else None


def _instance_key_and_name(instance, owner, collection_objects: dict) -> tuple[tuple, str]:
    """The geometry key and the name ("Owner", or "Owner/Via/Source" for an instance,
    see `ProxyReader._instance_entries`) of an instance of `depsgraph.object_instances`
    owned by `owner` (an original object)."""
    evaluated = instance.object
    source = evaluated.original
    if instance.is_instance and source == owner:
        # Geometry made by Geometry Nodes: no object of its own.
        key = (owner.name_full, "instance", evaluated.data.as_pointer())
        source_name = evaluated.data.name_full
    else:
        key = _geometry_key(source)
        source_name = source.name_full
    if not instance.is_instance:
        return key, owner.name_full
    path = _placed_through(owner, source, instance, collection_objects)
    return key, "/".join([owner.name_full, *path, source_name])


def _placement(instance) -> tuple:
    """What tells an instance of `depsgraph.object_instances` from another placement:
    its object's `_identity`, and for an instance its instancer's and its
    `persistent_id` (the path through nested instancers: a window's frame placed through
    Window 1 or Window 3, hidden and shown by keys, is the same object under the same
    instancer)."""
    identity = _identity(instance.object.original)
    if not instance.is_instance:
        return (identity,)
    return (identity, _identity(instance.parent.original), tuple(instance.persistent_id))


def _identity(obj):
    """`_identities` of one object."""
    return obj.session_uid if _HAS_SESSION_UID else (obj.as_pointer(), obj.name_full)


def _identities(objects) -> list:
    """What tells each of `objects` from every other object of the session, across
    updates, in order: its session_uid, or (before 4.2) its address with its full name.
    Listed without a call per object (a check in live mode after a click compares some
    40,000 at 20,000 objects)."""
    if _HAS_SESSION_UID:
        return [obj.session_uid for obj in objects]
    return [(obj.as_pointer(), obj.name_full) for obj in objects]


def _first_rows(keys: list) -> np.ndarray:
    """For each position, the first position holding the same key: (n,) int64."""
    first: dict = {}
    return np.array([first.setdefault(key, row) for row, key in enumerate(keys)], np.int64)


def _updated_by(key: tuple) -> tuple[str, str]:
    """(name, "object" | "data") of the datablock whose geometry updates make a geometry
    key stale: the mesh for a plain mesh's key, else the object."""
    return (key[0], "data" if key[1] == "mesh" else "object")


def unique_names(names: list[str], kept: list[bool] | None = None) -> list[str]:
    """`names` with repeats made unique: the second and later "X" become "X (2)", "X (3)"
    and so on, skipping names already taken; a name marked in `kept` (an object's own,
    unique) is never changed, so that an object named like an instance ("Inst/Src")
    keeps its name, and its clash ids, when such an instance appears. Object names are
    unique per library and `name_full` adds the library, and clash records, selection
    and tint tell proxies apart by name."""
    taken = set(names)
    if len(taken) == len(names):
        return names
    kept = kept or [False] * len(names)
    seen = {name for name, keep in zip(names, kept, strict=True) if keep}
    unique = []
    for name, keep in zip(names, kept, strict=True):
        candidate, number = name, 1
        while not keep and (candidate in seen or (candidate != name and candidate in taken)):
            number += 1
            candidate = f"{name} ({number})"
        seen.add(candidate)
        unique.append(candidate)
    return unique


# What `DepsgraphObjectInstance.persistent_id` holds past its levels.
_NO_LEVEL = 2**31 - 1


def _placed_through(owner, source, instance, collection_objects: dict[int, list]) -> list[str]:
    """The names of the instancers through which the collection instancer `owner` places
    `source` at nested levels (a building instancing a floor whose windows instance a
    window collection: ["Window 2"]); [] for a single level, or where the path cannot be
    followed (Geometry Nodes, particles, vertex instancing), which the caller then
    numbers.

    The `instance`'s `persistent_id` holds an index per level, the innermost first: the
    position of the placed object in the instanced collection's `all_objects` (hidden
    objects counted, in Blender 3.4 to 5.0), so that it names the same instancer when
    others are added or deleted. collection_objects: the `all_objects` lists read so
    far, by collection pointer (reading one builds it anew).
    """
    # One level (most instances) is told by the second index alone: reading all of them
    # took 28 ms more over 20,000 instances, the second 11 ms.
    if instance.persistent_id[1] == _NO_LEVEL:
        return []
    levels = [index for index in instance.persistent_id if index != _NO_LEVEL]
    path = []
    placer = owner
    for index in reversed(levels):
        collection = placer.instance_collection if placer.instance_type == "COLLECTION" else None
        if collection is None:
            return []
        objects = collection_objects.get(collection.as_pointer())
        if objects is None:
            objects = collection_objects[collection.as_pointer()] = list(collection.all_objects)
        if index >= len(objects):
            return []
        placer = objects[index]
        path.append(placer)
    if placer != source:
        return []
    return [obj.name_full for obj in path[:-1]]


# Parent types that deform the child's mesh as a modifier would (Blender's "virtual"
# Armature and Lattice modifiers of Ctrl+P > Armature Deform / Lattice Deform).
_DEFORMING_PARENTS = frozenset({"ARMATURE", "LATTICE"})


def _geometry_key(original) -> tuple:
    """Cache key of an object's evaluated geometry: its mesh's name when the mesh is used
    as it is (objects sharing a mesh share the fit), else the object's name. The first
    item is the name whose geometry updates invalidate the entry. A mesh deformed by its
    parent (an armature or lattice parent, no modifier) is not used as it is: keyed by
    its mesh, its shape was read once, at the first frame, and passed to the undeformed
    objects sharing the mesh."""
    if (
        original.type == "MESH"
        and not original.modifiers
        and original.data.shape_keys is None
        and not (original.parent is not None and original.parent_type in _DEFORMING_PARENTS)
    ):
        return (original.data.name_full, "mesh")
    return (original.name_full, "object")


def _finite_rows(matrices: np.ndarray) -> np.ndarray:
    """Whether each of `matrices` (m, 4, 4) holds no NaN or infinity: (m,) bool."""
    if np.isfinite(matrices).all():  # the common case, without a per-row reduction
        return np.ones(len(matrices), dtype=bool)
    return np.isfinite(matrices.reshape(len(matrices), 16)).all(axis=1)
