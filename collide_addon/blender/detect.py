"""Scene -> proxies -> pairs -> clash records on the scene -> tint.

Each scene has a `Session` in memory (not saved): its proxy reader with the caches, and
the proxies and clashes of the last check, which the viewport overlay draws.
"""

from __future__ import annotations

import sys
import traceback
from dataclasses import dataclass, field

import bpy
import numpy as np

from ..core import KIND_NAMES, find_contacts
from . import tint
from .scene import Progress, Proxies, ProxyReader


@dataclass
class Clashes:
    """Pairs of proxies closer than the tolerance.

    pairs: (k, 2) int64 proxy indices, i < j
    distances: (k,) signed distance (< 0: minus the penetration depth)
    points: (k, 3) midpoint of the two witness points
    """

    pairs: np.ndarray
    distances: np.ndarray
    points: np.ndarray

    def __len__(self) -> int:
        return len(self.pairs)


@dataclass
class Session:
    reader: ProxyReader = field(default_factory=ProxyReader)
    proxies: Proxies | None = None
    clashes: Clashes | None = None
    # Counts the checks, so that the overlay knows when to rebuild what it draws.
    generation: int = 0
    # (name_a, name_b, kind_a, kind_b) of the records last written
    record_rows: list[tuple] = field(default_factory=list)


_sessions: dict[int, Session] = {}


def session_for(scene) -> Session:
    return _sessions.setdefault(scene.as_pointer(), Session())


def sessions() -> list[Session]:
    return list(_sessions.values())


def forget_sessions() -> None:
    _sessions.clear()


def find_clashes(proxies: Proxies, tolerance: float) -> Clashes:
    """Every pair of proxies whose signed distance is <= tolerance."""
    pairs, result = find_contacts(proxies.batch, margin=tolerance)
    return Clashes(pairs, result.distance, 0.5 * (result.point_i + result.point_j))


def clashing_objects(proxies: Proxies, clashes: Clashes) -> list:
    """The original objects owning a proxy that clashes, each once."""
    owners = {}
    for index in np.unique(clashes.pairs):
        obj = proxies.objects[index]
        owners[obj.as_pointer()] = obj
    return list(owners.values())


def _write_record(record, proxies: Proxies, pair, row: tuple) -> None:
    record.name_a, record.name_b, record.kind_a, record.kind_b = row
    record.object_a, record.object_b = proxies.objects[pair[0]], proxies.objects[pair[1]]


def store_records(scene, proxies: Proxies, clashes: Clashes) -> None:
    """Write the clashes to `scene.collide.clashes`.

    A pair (with the same proxy kinds) listed already keeps its row, so the row the user
    picked stays put and a frame where few pairs change writes few rows; rows of pairs
    gone take new pairs, then rows are added or removed at the end. Distances and points
    are written in bulk.
    """
    records = scene.collide.clashes
    session = session_for(scene)
    kinds = proxies.batch.kinds
    rows = [
        (proxies.names[i], proxies.names[j], KIND_NAMES[kinds[i]], KIND_NAMES[kinds[j]])
        for i, j in clashes.pairs
    ]
    wanted = {row: index for index, row in enumerate(rows)}
    listed = session.record_rows
    if len(listed) != len(records) or len(wanted) != len(rows):
        # Rows not written by us (or names not unique): write them all again.
        listed = [None] * len(records)
    # The clash shown by each row (None: the row is free).
    slots = [wanted.pop(row, None) for row in listed]
    fresh = iter(wanted.values())
    for slot, index in enumerate(slots):
        if index is None:
            index = next(fresh, None)
            if index is None:
                break
            slots[slot] = index
            _write_record(records[slot], proxies, clashes.pairs[index], rows[index])
    for index in fresh:
        slots.append(index)
        _write_record(records.add(), proxies, clashes.pairs[index], rows[index])
    for slot in reversed(range(len(slots))):
        if slots[slot] is None:
            records.remove(slot)
            del slots[slot]
    session.record_rows = [rows[index] for index in slots]
    if scene.collide.active_clash_index >= len(records):
        scene.collide.active_clash_index = -1
    if len(records):
        order = np.array(slots, dtype=np.int64)
        records.foreach_set("distance", clashes.distances[order].astype(np.float32))
        records.foreach_set("point", clashes.points[order].astype(np.float32).ravel())


def check(
    scene, depsgraph, only_if_moved: bool = False, progress: Progress | None = None
) -> Clashes | None:
    """Read, detect, store and tint; None when `only_if_moved` and nothing moved.

    Raises SceneReadError (or ValueError from the core) on unusable input.
    """
    session = session_for(scene)
    proxies = session.reader.read(depsgraph, scene, only_if_moved=only_if_moved, progress=progress)
    if proxies is None:
        return None
    clashes = find_clashes(proxies, scene.collide.tolerance)
    session.proxies, session.clashes = proxies, clashes
    session.generation += 1
    store_records(scene, proxies, clashes)
    tint.apply(clashing_objects(proxies, clashes), scene.collide.clash_color)
    return clashes


def clear(scene) -> None:
    """Restore colours and viewport modes, drop the results of `scene`."""
    tint.restore_all()
    session = session_for(scene)
    session.proxies = session.clashes = None
    session.generation += 1
    session.record_rows = []
    scene.collide.clashes.clear()
    scene.collide.active_clash_index = -1


def switch_live_off(scene, error: Exception) -> None:
    """Report a live-mode failure once and turn live mode off (which untints)."""
    message = f"{type(error).__name__}: {error}"
    print(f"collide: live mode switched off: {message}", file=sys.stderr)
    traceback.print_exception(error, file=sys.stderr)
    scene.collide.last_error = message
    scene.collide.live = False


def settings_changed(scene, refit: bool = False) -> None:
    """A scope, tolerance or colour setting (or, with `refit`, an object's proxy shape)
    changed: check again when live."""
    session_for(scene).reader.invalidate(refit=refit)
    if scene.collide.live:
        live_check_now(scene)
    elif tint.tinted_objects():
        tint.apply(tint.tinted_objects(), scene.collide.clash_color)


def live_changed(scene) -> None:
    if scene.collide.live:
        scene.collide.last_error = ""
        live_check_now(scene)
    else:
        tint.restore_all()


def live_check_now(scene) -> None:
    """A check from a property update (UI, not a handler); errors switch live off."""
    try:
        check(scene, bpy.context.evaluated_depsgraph_get())
    except Exception as error:  # noqa: BLE001 - reported, then live mode stops
        switch_live_off(scene, error)
