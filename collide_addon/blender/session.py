"""The live check of a scene: proxies -> pairs -> clash rows on the scene -> tint.

This is the panel's Detect and live mode, a fast pipeline of its own beside the clash
workflow of report runs (`collide_addon.clash`): no clash tests, selectors or records,
only every pair of proxies the scene's scope holds, so that it fits in a frame.

Each scene has a `Session` in memory (not saved): its proxy reader with the caches, and
the proxies and clashes of the last check, which the viewport overlay draws.

While frames change (playback, scrubbing, `scene.frame_set`), a check writes no
`Object.color`: any ID tagged in `frame_change_post` makes `frame_set` evaluate the scene
a second time (at 10,000 animated objects that pass cost a third of the frame). The
overlay tints the clashing objects instead (`overlay_tint_rows`), and `settle` writes the
colours once the frames stop (the playback's end, or a timer after the last frame
change; see `handlers`). Detect writes the colours at once. So do checks of edits in
background sessions; in a window an edit's tint is written in `depsgraph_update_pre`
of the next edit (`write_pending_tints`), inside that edit's evaluation, or by `settle`
once the edits stop: written in `depsgraph_update_post` it made Blender evaluate the
scene a second time (at 20,000 objects as long as Blender's own update, whatever
changed).
"""

from __future__ import annotations

import math
import sys
import time
import traceback
from dataclasses import dataclass, field

import bpy
import numpy as np

from ..clash.evaluate import (
    FrameMeshes,
    KeptMeshContacts,
    MeshPairCache,
    candidate_margin,
    mesh_pair_contacts,
    proxy_pair_contacts,
    vanished_pairs,
)
from ..core import KIND_NAMES, CoherentBounds, KeptContacts, find_contacts
from ..core.columns import reduce_short_axis
from ..core.contact import clash_mask, contact_epsilon
from ..core.threads import blas_on_one_thread
from ..report.common import listed, names_by_reason
from . import tint
from .scene import Progress, Proxies, ProxyReader, SceneReadError

# The panel's Check as a rule of `core.contact`: penetration is the hard clash test's
# rule, contact the clearance test's (touching or closer than the tolerance).
CHECK_RULES = {"PENETRATION": "hard", "CONTACT": "clearance"}


@dataclass
class Clashes:
    """The clashing pairs of proxies of one check.

    pairs: (k, 2) int64 proxy indices, i < j
    distances: (k,) signed distance (< 0: minus the penetration depth)
    points: (k, 3) midpoint of the two witness points
    on_mesh: (k,) bool, decided on the two objects' triangles (else on their proxies)
    """

    pairs: np.ndarray
    distances: np.ndarray
    points: np.ndarray
    on_mesh: np.ndarray

    def __len__(self) -> int:
        return len(self.pairs)


@dataclass
class Session:
    """What live checks of one scene keep from check to check, in memory only.

    The reader caches proxies and fits; the broad phase its fat boxes; `proxies` and
    `clashes` are the last check's, drawn by the overlay; the rest lets the next check
    write only the clash rows and tints that change.
    """

    reader: ProxyReader = field(default_factory=ProxyReader)
    # The broad phase's work kept from check to check (proxies move a little per update).
    broad_phase: CoherentBounds = field(default_factory=CoherentBounds)
    # The narrow phase's answers kept from check to check, given again for pairs of
    # proxies that did not change (an edit moves a few objects of thousands).
    kept_contacts: KeptContacts = field(default_factory=KeptContacts)
    proxies: Proxies | None = None
    clashes: Clashes | None = None
    # Counts the checks, so that the overlay knows when to rebuild what it draws.
    generation: int = 0
    # The records last written: the names of the proxies they were written from and one
    # `_pair_keys` key per row, so that a check rewrites only the rows that change.
    record_names: list[str] | None = None
    record_keys: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    # The distance, point and deciding geometry each row was last written with, so that
    # a check rewrites only the measures that change.
    record_measures: tuple[np.ndarray, ...] | None = None
    # The owners the last check tinted (indices into the proxies named `tinted_names`),
    # its colour and `tint.state()` right after, to tell whether anything else changed
    # the tint since.
    tinted_names: list[str] | None = None
    tinted_rows: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    tint_state: tuple | None = None
    # `hide_viewport` of the layer's objects and of the collections at the last frame
    # change, to follow visibility animated by keyframes.
    hidden_flags: np.ndarray | None = None
    # Seconds the last check spent finding its clashes on meshes (0: it used proxies),
    # for the panel to say when deciding on meshes is slower than live mode's frames.
    mesh_seconds: float = 0.0
    # The panel's far-origin note and the `generation` it was measured for: the panel
    # redraws many times per check, and a far scene's reach turns every proxy.
    far_note: tuple[int, str | None] | None = None
    # The last check's mesh contacts, reused for pairs whose objects did not move.
    mesh_cache: MeshPairCache = field(default_factory=MeshPairCache)
    # The last check's pairs decided on meshes, kept for pairs of unchanged objects.
    kept_mesh_contacts: KeptMeshContacts = field(default_factory=KeptMeshContacts)
    # Whether the last check's tint waits for the frames to stop (drawn by the overlay
    # meanwhile) rather than being in the objects' colours.
    tint_waiting: bool = False
    # Whether the last check's tint (an edit's) is to be written before Blender's next
    # evaluation (`write_pending_tints`) or once the edits stop (`settle`): colours
    # written in `depsgraph_update_post` make Blender evaluate the scene a second time.
    tint_pending: bool = False
    # The row of each object's own proxy (by as_pointer()) among `own_rows_of`, the
    # proxies' owners it was listed from, for the panel's looseness.
    own_rows: dict[int, int] = field(default_factory=dict)
    own_rows_of: list | None = None


_sessions: dict[int, Session] = {}


def session_for(scene) -> Session:
    return _sessions.setdefault(scene.as_pointer(), Session())


def existing_session(scene) -> Session | None:
    """`scene`'s session if it has one (it was checked since the file was loaded)."""
    return _sessions.get(scene.as_pointer())


def forget_sessions() -> None:
    _sessions.clear()


def find_clashes(
    proxies: Proxies,
    check: str,
    tolerance: float,
    broad_phase: CoherentBounds | None = None,
    meshes: FrameMeshes | None = None,
    mesh_cache: MeshPairCache | None = None,
    progress=None,
    kept: KeptContacts | None = None,
    kept_mesh: KeptMeshContacts | None = None,
) -> Clashes:
    """The clashing pairs of proxies under the scene's rule (`core.contact`).

    check: "PENETRATION" (overlapping deeper than `tolerance`; resting contact is no
        clash) or "CONTACT" (touching or closer than `tolerance`, penetrations too)
    tolerance: >= 0, in scene units
    broad_phase: keeps the broad phase's work between checks of the same proxies
    meshes: the proxies' triangles: the proxies then only find the candidate pairs, and
        each is decided on the two meshes, as a clash test with geometry "mesh" does
        (pairs where an object has no triangles stay decided on the proxies)
    mesh_cache: keeps the mesh contacts between checks (`MeshPairCache`)
    progress: progress(done, total) over the candidate pairs decided on meshes
    kept: keeps the proxies' contacts between checks (`core.KeptContacts`)
    kept_mesh: with `kept`, keeps the pairs decided on meshes between checks
        (`KeptMeshContacts`)
    """
    rule = CHECK_RULES[check]
    margin = candidate_margin(rule, tolerance, meshes is not None, proxies.batch)
    pairs, result = find_contacts(proxies.batch, margin=margin, coherent=broad_phase, kept=kept)
    contacts = proxy_pair_contacts(pairs, result)
    contacts = contacts.take(np.flatnonzero(~vanished_pairs(proxies.batch, contacts.pairs)))
    if meshes is not None and kept is not None and kept_mesh is not None:
        contacts = kept_mesh.decide(contacts, meshes, margin, kept.changed, mesh_cache, progress)
    elif meshes is not None:
        contacts, _ = mesh_pair_contacts(contacts, meshes, margin, mesh_cache, progress)
    points = 0.5 * (contacts.points_i + contacts.points_j)
    keep = clash_mask(rule, tolerance, contacts.distances, contact_epsilon(points))
    return Clashes(
        contacts.pairs[keep], contacts.distances[keep], points[keep], contacts.on_mesh[keep]
    )


def _clashing_owner_rows(proxies: Proxies, clashes: Clashes) -> np.ndarray:
    """One proxy index per original object owning a clashing proxy, sorted: (m,)."""
    return np.unique(proxies.owner_rows[clashes.pairs.ravel()])


def _pair_keys(proxies: Proxies, pairs: np.ndarray) -> np.ndarray:
    """One int64 per pair naming its two proxies and their kinds: (k,)."""
    kinds = proxies.batch.kinds.astype(np.int64)
    first, second = pairs[:, 0], pairs[:, 1]
    return ((first * len(proxies.names) + second) * 3 + kinds[first]) * 3 + kinds[second]


def _listed_keys(records, proxies: Proxies, session: Session) -> np.ndarray:
    """The `_pair_keys` key of each listed record under `proxies`; -1 where the record
    names no pair of them (or was not written by us)."""
    if session.record_names is proxies.names and len(session.record_keys) == len(records):
        return session.record_keys
    # The proxies were read afresh (or the rows were changed elsewhere): by name.
    index = {name: k for k, name in enumerate(proxies.names)}
    keys = np.full(len(records), -1, np.int64)
    if len(index) != len(proxies.names):
        return keys  # names not unique: write every row again
    kinds = proxies.batch.kinds
    for row, record in enumerate(records):
        first, second = index.get(record.name_a), index.get(record.name_b)
        if (
            first is not None
            and second is not None
            and KIND_NAMES[kinds[first]] == record.kind_a
            and KIND_NAMES[kinds[second]] == record.kind_b
        ):
            pair = np.array([[first, second]], np.int64)
            keys[row] = _pair_keys(proxies, pair)[0]
    return keys


def _write_record(record, proxies: Proxies, pair) -> None:
    """Write one row's names, kinds and objects as ID properties (see `store_records`)."""
    first, second = int(pair[0]), int(pair[1])
    kinds = proxies.batch.kinds
    record["name_a"], record["name_b"] = proxies.names[first], proxies.names[second]
    record["kind_a"] = KIND_NAMES[kinds[first]]
    record["kind_b"] = KIND_NAMES[kinds[second]]
    record["object_a"], record["object_b"] = proxies.objects[first], proxies.objects[second]


def _write_measures(
    records, rows: np.ndarray, distances: np.ndarray, points: np.ndarray, on_mesh: np.ndarray
) -> None:
    """Rows `rows` (k,), ascending, their distance (k,), point (k, 3) and deciding
    geometry (k,) bool, as ID properties row by row: the bulk `foreach_set` tags the
    scene for a depsgraph update, which in a frame change makes `frame_set` run a second
    evaluation pass over the scene and what depends on it."""
    written = zip(
        items_at(records, rows.tolist()),
        distances.tolist(),
        points.tolist(),
        on_mesh.tolist(),
        strict=True,
    )
    for record, distance, point, decided_on_mesh in written:
        record["distance"] = distance
        record["point"] = point
        record["on_mesh"] = decided_on_mesh


def items_at(collection, rows: list[int]):
    """The items of a Blender collection (clash rows, depsgraph updates) at `rows`,
    ascending, in one walk up to the last of them: Blender finds item k by stepping over
    the k items before it (13,000 clash rows: 0.16 ms for the last), so looking items up
    one by one costs the square of their number."""
    wanted = iter(rows)
    row = next(wanted, None)
    if row is None:
        return
    for index, item in enumerate(collection):
        if index == row:
            yield item
            row = next(wanted, None)
            if row is None:
                return


def _changed_measures(measures: tuple, kept: tuple | None, rewritten: np.ndarray) -> np.ndarray:
    """The rows (k,) whose `measures` (distances (r,), points (r, 3), on_mesh (r,)) differ
    from those `kept` from the last write of the same first rows (or all rows when none are
    kept), or that show another pair now (`rewritten`, (r,) bool)."""
    if kept is None:
        return np.arange(len(measures[0]))
    distances, points, on_mesh = measures
    count = len(kept[0])
    differ = rewritten.copy()
    differ[count:] = True
    differ[:count] |= ~(
        (distances[:count] == kept[0])
        & reduce_short_axis(np.logical_and, points[:count] == kept[1])
        & (on_mesh[:count] == kept[2])
    )
    return np.flatnonzero(differ)


def _redraw_panels() -> None:
    """ID property writes send no notifier: redraw the 3D views (and their sidebars)."""
    window_manager = bpy.context.window_manager
    for window in window_manager.windows if window_manager is not None else ():
        for area in window.screen.areas:
            if area.type == "VIEW_3D":
                area.tag_redraw()


def store_records(scene, proxies: Proxies, clashes: Clashes) -> None:
    """Write the clashes to `scene.collide.clashes`.

    Fields are written as ID properties (`record["distance"] = ...`), which run no RNA
    update and cost a fifth of RNA writes: `foreach_set` tags the scene for a depsgraph
    update, and a tag made in `frame_change_post` makes `frame_set` run a second
    evaluation pass. The rows are the scene's data all the same: saved, undone and drawn
    by the panel.

    A pair (with the same proxy kinds) listed already keeps its row, so a check where few
    pairs change writes few rows: rows of pairs gone take new pairs, further new pairs
    are added at the end, and rows left over are removed (the rows below move up; the
    picked row follows its pair). Distances and points are written in bulk.
    """
    records = scene.collide.clashes
    session = session_for(scene)
    keys = _pair_keys(proxies, clashes.pairs)
    listed = _listed_keys(records, proxies, session)
    # The measures written last, row by row, while the rows are as the session left them.
    kept = session.record_measures if listed is session.record_keys else None
    # The clash shown by each listed row; -1: the row is free.
    slots = np.full(len(listed), -1, np.int64)
    if len(keys):
        sorter = np.argsort(keys)
        found = sorter[np.searchsorted(keys, listed, sorter=sorter).clip(max=len(keys) - 1)]
        slots = np.where(keys[found] == listed, found, -1)
    fresh = np.setdiff1d(np.arange(len(keys)), slots).tolist()
    free = np.flatnonzero(slots < 0).tolist()
    reused = free[: len(fresh)]
    for record, index in zip(items_at(records, reused), fresh, strict=False):
        _write_record(record, proxies, clashes.pairs[index])
    slots[reused] = fresh[: len(reused)]
    added = fresh[len(free) :]
    for index in added:
        _write_record(records.add(), proxies, clashes.pairs[index])
    emptied = free[len(fresh) :]
    for row in reversed(emptied):
        records.remove(row)
    order = np.concatenate([slots[slots >= 0], np.array(added, np.int64)])
    session.record_names, session.record_keys = proxies.names, keys[order]
    # Rows that show another pair now, in the rows' order after the removals.
    rewritten = np.zeros(len(order), dtype=bool)
    rewritten[: len(listed) - len(emptied)] = np.delete(
        np.isin(np.arange(len(listed)), reused), emptied
    )
    if kept is not None:
        kept = tuple(np.delete(values, emptied, axis=0) for values in kept)
    # The picked row follows its pair up past removed rows; a row that now shows another
    # pair (or none) is no longer picked.
    # Written as an ID property: an RNA write of a Python property tags the scene (a
    # second evaluation pass in a frame change) and would run the selecting update.
    active = scene.collide.active_clash_index
    if 0 <= active < len(listed):
        if active in emptied or listed[active] != keys[slots[active]]:
            scene.collide["active_clash_index"] = -1
        elif emptied:
            scene.collide["active_clash_index"] = active - int(np.searchsorted(emptied, active))
    measures = (clashes.distances[order], clashes.points[order], clashes.on_mesh[order])
    rows = _changed_measures(measures, kept, rewritten)
    _write_measures(records, rows, *(values[rows] for values in measures))
    session.record_measures = measures
    if len(records) or len(listed):
        _redraw_panels()


def _tint(scene, proxies: Proxies, clashes: Clashes) -> None:
    """Tint the owners of clashing proxies; when the tint is as the last check of the
    same proxies left it, touch only the owners that changed."""
    session = session_for(scene)
    rows = _clashing_owner_rows(proxies, clashes)
    color = tuple(scene.collide.clash_color)
    unchanged = session.tint_state == (color, tint.state())
    if session.tinted_names is proxies.names and unchanged:
        added = np.setdiff1d(rows, session.tinted_rows, assume_unique=True).tolist()
        removed = np.setdiff1d(session.tinted_rows, rows, assume_unique=True).tolist()
        tint.change(
            [proxies.objects[row] for row in added],
            [proxies.objects[row] for row in removed],
            scene,
        )
    else:
        tint.apply([proxies.objects[row] for row in rows.tolist()], color, scene)
    session.tinted_names, session.tinted_rows = proxies.names, rows
    session.tint_state = (color, tint.state())


def _wait_with_tint(scene, session: Session) -> None:
    """A frame change: the overlay tints until the frames stop. Colours `scene`'s tint
    wrote before (an edit, Detect, the last stop) are given back once, on the first
    frame change after them, or they would show clashes of another frame."""
    if not session.tint_waiting:
        if tint.tinted_objects(scene):
            tint.release(scene)
        session.tint_waiting = True


def overlay_tint_rows(session: Session) -> np.ndarray:
    """The proxies the overlay tints, those of objects owning a clashing proxy: (r,)
    int64 rows of `session.proxies`, ascending; empty when the tint is in the objects'
    colours (or there is no check)."""
    if not session.tint_waiting or session.proxies is None or session.clashes is None:
        return np.zeros(0, np.int64)
    owners = _clashing_owner_rows(session.proxies, session.clashes)
    return np.flatnonzero(np.isin(session.proxies.owner_rows, owners))


def settle(scene) -> bool:
    """The frames or the edits stopped: write the tint of `scene`'s last check to the
    objects' colours, as Detect would have (the overlay stops tinting). False when no
    tint was waiting or pending."""
    session = _sessions.get(scene.as_pointer())
    if session is None or not (session.tint_waiting or session.tint_pending):
        return False
    session.tint_waiting = session.tint_pending = False
    session.generation += 1
    _tint_last_check(scene, session)
    _redraw_panels()
    return True


def settle_all() -> None:
    """`settle` every scene whose tint waits or is pending."""
    for scene in bpy.data.scenes:
        settle(scene)


def write_pending_tints() -> None:
    """Write the pending tints of edits' checks (`Session.tint_pending`), for
    `depsgraph_update_pre`: written there, Blender evaluates them with the update it is
    about to run. Tints waiting for the frames to stop are left to `settle`."""
    for scene in bpy.data.scenes:
        session = _sessions.get(scene.as_pointer())
        if session is not None and session.tint_pending:
            session.tint_pending = False
            _tint_last_check(scene, session)


def _tint_last_check(scene, session: Session) -> None:
    """Write the tint of `scene`'s last check to the objects' colours, while live mode
    still shows it."""
    if scene.collide.live and session.proxies is not None and session.clashes is not None:
        _tint(scene, session.proxies, session.clashes)


def store_fit_info(proxies: Proxies) -> None:
    """Show the kinds of the fits made in the read of `proxies` on their objects'
    settings (instances have no settings of their own), writing only values that change,
    as ID properties (no RNA update, a fifth of the cost; a deforming object is refitted
    on every frame). Their looseness is measured when the panel shows it
    (`looseness_of`)."""
    written = False
    for row in proxies.refitted[~proxies.instances[proxies.refitted]].tolist():
        settings = proxies.objects[row].collide
        kind = int(proxies.batch.kinds[row])
        if settings.fitted_kind != KIND_NAMES[kind].upper():
            # The enum's value: its item's place in `props.KIND_ITEMS`, after "NONE".
            settings["fitted_kind"] = kind + 1
            written = True
    if written:
        _redraw_panels()


def looseness_of(scene, obj) -> float | None:
    """How much larger `obj`'s own proxy in `scene`'s last check is than its mesh
    (`ProxyReader.looseness`, 0 for a mesh that encloses no volume); None where that is
    not known: no check yet in this session, `obj` has no proxy of its own there, or its
    geometry changed since."""
    session = _sessions.get(scene.as_pointer())
    if session is None or session.proxies is None:
        return None
    proxies = session.proxies
    # Reads that keep who takes part hand over the same list of owners: the rows are
    # listed again only when it changes, not on every frame of live playback.
    if session.own_rows_of is not proxies.objects:
        session.own_rows = {
            owner.as_pointer(): row
            for row, owner in reversed(list(enumerate(proxies.objects)))
            if not proxies.instances[row]
        }
        session.own_rows_of = proxies.objects
    row = session.own_rows.get(obj.as_pointer())
    if row is None:
        return None
    looseness = float(session.reader.looseness(proxies, [row])[0])
    return None if np.isnan(looseness) else looseness


def check(
    scene,
    depsgraph,
    only_if_moved: bool = False,
    progress: Progress | None = None,
    frame_change: bool = False,
    tint_later: bool = False,
    look_again: bool = False,
) -> Clashes | None:
    """Read, detect, store and tint; None when `only_if_moved` and nothing moved.

    look_again: a user's explicit check (Detect): find who takes part and at which rows
        again, keeping the geometry and fits of what did not change, whatever the
        updates since said (a script may link, unlink and add objects between two
        Detects with no update in between).

    frame_change: called from `frame_change_post`: the tint waits (`settle`), drawn by
        the overlay meanwhile, and the objects' colours are left alone.
    tint_later: called from `depsgraph_update_post` for an edit: the tint is pending,
        written by `write_pending_tints` or `settle`; a tint waiting for the frames to
        stop keeps waiting.

    Raises SceneReadError (or ValueError from the core) on unusable input.
    """
    settings = scene.collide
    # The property's minimum does not stop a script setting NaN, which the core refused
    # naming its own argument ("margin must be finite").
    if not math.isfinite(settings.tolerance):
        raise SceneReadError(f"Tolerance is {settings.tolerance}: set it to a length")
    session = session_for(scene)
    if look_again:
        session.reader.recheck_participants()
    # The check's numpy calls are many and small: numpy's OpenBLAS, left to start threads
    # of its own for them (a batch of 3 x 3 inverses posing the meshes), stalls checks
    # while another process holds a core (live mode on meshes beside a busy process, one
    # Blender alternating both ways: 90th percentile frame 54-57 ms against 25-31 ms at
    # 200 objects, 75-163 ms against 68-69 ms at 1,000). The results are the same.
    with blas_on_one_thread():
        proxies = session.reader.read(
            depsgraph, scene, only_if_moved=only_if_moved, progress=progress
        )
        if proxies is None:
            return None
        meshes = session.reader.frame_meshes(proxies) if settings.geometry == "MESH" else None
        started = time.perf_counter()
        clashes = find_clashes(
            proxies,
            settings.check,
            settings.tolerance,
            session.broad_phase,
            meshes,
            session.mesh_cache,
            None if progress is None else lambda done, total: progress(done, total, "meshes"),
            session.kept_contacts,
            session.kept_mesh_contacts,
        )
        session.mesh_seconds = time.perf_counter() - started if meshes is not None else 0.0
    session.proxies, session.clashes = proxies, clashes
    session.generation += 1
    if settings.last_error:  # what failed before is fixed: this check went through
        settings.last_error = ""
    store_fit_info(proxies)
    store_records(scene, proxies, clashes)
    if frame_change:
        session.tint_pending = False
        _wait_with_tint(scene, session)
    elif tint_later:
        session.tint_pending = not session.tint_waiting
    else:
        session.tint_waiting = session.tint_pending = False
        _tint(scene, proxies, clashes)
    return clashes


def clear(scene) -> None:
    """Restore the colours `scene` tinted (and the viewport modes once nothing is
    tinted), drop the results of `scene`."""
    tint.release(scene)
    session = session_for(scene)
    session.proxies = session.clashes = None
    session.tint_waiting = session.tint_pending = False
    session.generation += 1
    session.record_names = session.tinted_names = session.record_measures = None
    scene.collide.clashes.clear()
    scene.collide.active_clash_index = -1
    if scene.collide.last_error:
        scene.collide.last_error = ""


def check_failed(scene, error: Exception) -> str:
    """A Detect that could not read the scene: the last check's results no longer hold
    (they listed clashes of a scene since changed, its objects still tinted), so they go,
    and the panel shows why until a check goes through. Returns the message."""
    clear(scene)
    message = error_text(error)
    scene.collide.last_error = message
    return message


def error_text(error: Exception) -> str:
    """An error as the panel and the operator's report say it: a `SceneReadError`'s
    message alone (it names the object and what is wrong, for the user), others after
    their class's name (an error of ours the user could send us)."""
    if isinstance(error, SceneReadError):
        return str(error)
    return f"{type(error).__name__}: {error}"


# Objects the panel and Detect name as left out of a check, at most; the rest are counted.
_LEFT_OUT_NAMES = 3


def left_out_note(scene) -> str | None:
    """What the panel and Detect say when the last check left objects out for unusable
    geometry (`Proxies.left_out`): "Not checked: 'C' (NaN or infinite vertex
    coordinates)"; None when it left none out (or there is no check)."""
    proxies = session_for(scene).proxies
    if proxies is None or not proxies.left_out:
        return None
    parts = [
        f"{listed([repr(name) for name in names], _LEFT_OUT_NAMES)} ({reason})"
        for reason, names in names_by_reason(proxies.left_out).items()
    ]
    return "Not checked: " + "; ".join(parts)


def switch_live_off(scene, error: Exception) -> None:
    """Report a live-mode failure once and turn live mode off (which untints)."""
    message = error_text(error)
    print(f"collide: live mode switched off: {message}", file=sys.stderr)
    traceback.print_exception(error, file=sys.stderr)
    scene.collide.last_error = message
    scene.collide.live = False


def settings_changed(scene, who_takes_part: bool = False, refit: bool = False) -> None:
    """A check, tolerance, geometry or colour setting changed (with `who_takes_part`, the
    scope or its collection; with `refit`, an object's proxy shape): check again when
    live. Only the scope and shapes make the reader find who takes part again: a
    tolerance change rebuilt every entry (0.5 s at 10,000 objects in live mode)."""
    if who_takes_part or refit:
        session_for(scene).reader.invalidate(refit=refit)
    if scene.collide.live:
        live_check_now(scene)
    elif tint.tinted_objects(scene):
        tint.apply(tint.tinted_objects(scene), scene.collide.clash_color, scene)


def live_changed(scene) -> None:
    if scene.collide.live:
        scene.collide.last_error = ""
        live_check_now(scene)
    else:
        session = session_for(scene)
        session.tint_pending = False
        if session.tint_waiting:
            session.tint_waiting = False
            session.generation += 1
        tint.release(scene)


def evaluated_depsgraph(scene):
    """The evaluated depsgraph of `scene`: the context's when it is the context's scene,
    else that of its first view layer (a script may set another scene's settings)."""
    context = bpy.context
    if scene == context.scene:
        return context.evaluated_depsgraph_get()
    with context.temp_override(scene=scene, view_layer=scene.view_layers[0]):
        return context.evaluated_depsgraph_get()


def live_check_now(scene) -> None:
    """A check from a property update (UI, not a handler); errors switch live off."""
    try:
        check(scene, evaluated_depsgraph(scene))
    except Exception as error:  # noqa: BLE001 - reported, then live mode stops
        switch_live_off(scene, error)


def select_clash(context, index: int) -> bool:
    """Select the two objects of clash `index`, make the first active and frame them in
    the 3D view the context belongs to (if any). False when there is no such clash."""
    records = context.scene.collide.clashes
    if not 0 <= index < len(records):
        return False
    record = records[index]
    objects = [obj for obj in (record.object_a, record.object_b) if obj is not None]
    view_layer = context.view_layer
    in_layer = [obj for obj in objects if view_layer.objects.get(obj.name) == obj]
    if not in_layer:
        return False
    # The view layer's, not the context's `selected_objects`: a timer's or a handler's
    # context has none.
    for obj in list(view_layer.objects.selected):
        obj.select_set(False)
    for obj in in_layer:
        obj.select_set(True)
    view_layer.objects.active = in_layer[0]
    area = context.area
    if area is not None and area.type == "VIEW_3D":
        region = next((region for region in area.regions if region.type == "WINDOW"), None)
        if region is not None:
            with context.temp_override(area=area, region=region):
                bpy.ops.view3d.view_selected()
    return True
