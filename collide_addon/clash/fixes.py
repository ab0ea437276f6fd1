"""Suggested fixes: for each clash, the move of object b that would leave the pair apart
at the clash's worst frame (`--suggest-fixes`, the record's "fix").

    records + a frame reader -> records with "fix"            `add_fixes`

A fix is {"object": b, "translation": [x, y, z]} (world units) or {"none": why}. Proxy
clashes take `core.resolve.separating_translations`, the shortest move of b's proxy out
of a's; mesh clashes search along that direction with `mesh_separating_translations`
until the triangles are apart. Either leaves the pair farther apart than the test's rule
counts (`core.contact.resolved_distance`): apart for hard clashes, beyond the tolerance
for clearance and touching ones. Other test types (duplicates) get no fix.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from ..core import pair_distance
from ..core.contact import contact_epsilon, resolved_distance
from ..core.resolve import FIX_REASONS, mesh_separating_translations, separating_translations
from .records import frames_meet_scan
from .tests import ClashTest

# A frame's proxies as `report.run.FrameSample` gives them: (batch, objects (each with a
# `name`), meshes (`evaluate.FrameMeshes`) or None).
ReadFrame = Callable[[float], tuple]
_DISTANCE_TYPES = ("hard", "clearance", "touching")


def _fix(name: str, translation: np.ndarray) -> dict[str, Any]:
    return {"object": name, "translation": [float(value) for value in translation]}


def _frame_fixes(records, tests, sample) -> list[dict[str, Any]]:
    """The fixes of `records` (all of one worst frame) on that frame's `sample`."""
    batch, objects, meshes = sample.batch, sample.objects, sample.meshes
    rows = {obj.name: row for row, obj in enumerate(objects)}
    fixes: list[dict[str, Any]] = [{"none": ""} for _ in records]
    present = [k for k, record in enumerate(records) if record["a"] in rows and record["b"] in rows]
    for k in set(range(len(records))) - set(present):
        fixes[k] = {"none": "an object of the pair is not in the scene at the worst frame"}
    if not present:
        return fixes
    first = np.array([rows[records[k]["a"]] for k in present])
    second = np.array([rows[records[k]["b"]] for k in present])
    contact = pair_distance(batch, first, second)
    epsilon = contact_epsilon(0.5 * (contact.point_i + contact.point_j))
    clearance = np.array(
        [
            resolved_distance(records[k]["type"], tests[records[k]["test"]].tolerance, e)
            for k, e in zip(present, epsilon.tolist(), strict=True)
        ]
    )
    translations = separating_translations(batch, first, second, clearance)
    on_mesh = [index for index, k in enumerate(present) if records[k].get("geometry") == "mesh"]
    test_names = np.array([records[k]["test"] for k in present])
    mesh_results = _mesh_fixes(meshes, first, second, translations, clearance, test_names, on_mesh)
    for index, k in enumerate(present):
        result = mesh_results.get(index, translations[index])
        if isinstance(result, str):
            fixes[k] = {"none": result}
        elif not result.any():
            fixes[k] = {"none": "apart at the worst frame's whole frame"}
        else:
            fixes[k] = _fix(records[k]["b"], result)
    return fixes


def _mesh_fixes(
    meshes, first, second, translations, clearance, test_names, on_mesh
) -> dict[int, Any]:
    """{index: translation (3,) or why not (str)} of the mesh-decided pairs `on_mesh`.

    first, second: (k,) rows of a and b; translations: (k, 3) the proxies' moves, the
    directions searched along; clearance: (k,) each pair's `resolved_distance`
    test_names: (k,) str, each pair's test. The search takes one clearance per call, so
    each test's pairs are searched apart with their own (the largest of its pairs', which
    differ by their contact epsilon only): a test's fixes do not depend on which other
    tests run, and a hard clash is not pushed a clearance test's gap away.
    """
    if not on_mesh or meshes is None:
        return {}
    results: dict[int, Any] = {}
    used = np.unique(np.concatenate([first[on_mesh], second[on_mesh]]))
    posed = {int(row): meshes.mesh_of(int(row)) for row in used}
    searched = np.array(
        [index for index in on_mesh if posed[first[index]] and posed[second[index]]], dtype=np.int64
    )
    for index in set(on_mesh) - set(searched.tolist()):
        results[index] = "an object has no triangles"
    if not len(searched):
        return results
    order = sorted(posed)
    slot = {row: position for position, row in enumerate(order)}
    pair_slots = np.array([[slot[first[index]], slot[second[index]]] for index in searched])
    for test_name in np.unique(test_names[searched]):
        of_test = test_names[searched] == test_name
        members = searched[of_test]
        found = mesh_separating_translations(
            [posed[row] for row in order],
            meshes.matrices[order],
            pair_slots[of_test],
            translations[members],
            float(clearance[members].max()),
        )
        for position, index in enumerate(members.tolist()):
            results[index] = (
                found.translation[position]
                if found.found[position]
                else FIX_REASONS[found.reason[position]]
            )
    return results


def add_fixes(
    records: Sequence[Mapping[str, Any]],
    tests: Sequence[ClashTest],
    read_frame: ReadFrame,
    frames: Sequence[int] | None = None,
) -> list[dict[str, Any]]:
    """`records` with a "fix" each (see the module docstring), resolved ones as they are.

    read_frame: (sub)frame time -> a sample (its batch, objects and meshes), read once
        per worst frame
    frames: (start, end, step) of the scan; a record none of whose frames the scan
        reported (a baseline's clash carried over unchecked, `records.frames_meet_scan`)
        is left as it is too: its worst frame is one the run did not look at. None: every
        record is this scan's
    """
    by_name = {test.name: test for test in tests}
    fixed = [dict(record) for record in records]
    pending: dict[int, list[int]] = {}
    for k, record in enumerate(fixed):
        if record["status"] == "resolved":
            continue
        if frames is not None and not frames_meet_scan(record["frames"], frames):
            continue
        if record["type"] not in _DISTANCE_TYPES or record["test"] not in by_name:
            record["fix"] = {"none": f"{record['type']} clashes are not moved apart"}
            continue
        pending.setdefault(int(record["worst_frame"]), []).append(k)
    for frame, indices in sorted(pending.items()):
        frame_records = [fixed[k] for k in indices]
        for k, fix in zip(
            indices, _frame_fixes(frame_records, by_name, read_frame(frame)), strict=True
        ):
            fixed[k]["fix"] = fix
    return fixed
