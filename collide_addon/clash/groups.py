"""Grouping clash records: by object, by test, and into spatial clusters of clash points."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np


def group_by_object(clashes: Sequence[Mapping[str, Any]]) -> dict[str, list[str]]:
    """Object name -> ids of the clashes it is in (as a or b), names sorted."""
    groups: dict[str, list[str]] = {}
    for record in clashes:
        for name in (record["a"], record["b"]):
            groups.setdefault(name, []).append(record["id"])
    return dict(sorted(groups.items()))


def group_by_test(clashes: Sequence[Mapping[str, Any]]) -> dict[str, list[str]]:
    """Test name -> ids of its clashes, in the order given."""
    groups: dict[str, list[str]] = {}
    for record in clashes:
        groups.setdefault(record["test"], []).append(record["id"])
    return groups


# The 13 neighbour cell offsets of a 3x3x3 block that come after (0, 0, 0) in
# lexicographic order: each adjacent cell pair is linked once.
_HALF_NEIGHBOURS = np.array(
    [
        offset
        for offset in ((x, y, z) for x in (-1, 0, 1) for y in (-1, 0, 1) for z in (-1, 0, 1))
        if offset > (0, 0, 0)
    ],
    dtype=np.float64,
)


def group_by_cluster(clashes: Sequence[Mapping[str, Any]], radius: float) -> list[dict[str, Any]]:
    """Spatial clusters of clash points. Points are binned into cubes of side `radius`;
    clashes in the same or touching cubes (faces, edges or corners), transitively, form
    a cluster. So any two clashes closer than `radius` share a cluster; clashes up to
    2 * sqrt(3) * radius apart may too.

    returns: [{"center": [x, y, z] mean point, "clashes": [id, ...]}, ...], largest
             cluster first, then by first id
    """
    if not radius > 0 or not math.isfinite(radius):
        raise ValueError(f"radius must be finite and > 0, got {radius!r}")
    if not clashes:
        return []
    points = np.array([record["point"] for record in clashes], dtype=np.float64).reshape(-1, 3)
    if not np.isfinite(points).all():
        raise ValueError("clash points must be finite")
    # Cells stay float64: as int64 they would wrap for points far apart relative to the
    # radius. Beyond 2**53 cells from the origin a cell's neighbour may round to the cell
    # itself (inf beyond float64's range), a self-link: such clashes only merge more.
    with np.errstate(over="ignore"):
        cells = np.floor(points / radius)
    unique_cells, cell_of_point = np.unique(cells, axis=0, return_inverse=True)
    cell_of_point = cell_of_point.reshape(-1)
    count = len(unique_cells)
    # Each cell and its 13 forward neighbours numbered together by np.unique: a
    # neighbour that is an occupied cell gets that cell's number (< count after mapping).
    neighbours = (unique_cells[:, None, :] + _HALF_NEIGHBOURS[None, :, :]).reshape(-1, 3)
    _, numbers = np.unique(np.concatenate([unique_cells, neighbours]), axis=0, return_inverse=True)
    numbers = numbers.reshape(-1)
    cell_of_number = np.full(numbers.max() + 1, -1, dtype=np.int64)
    cell_of_number[numbers[:count]] = np.arange(count)
    found = cell_of_number[numbers[count:]].reshape(count, len(_HALF_NEIGHBOURS))
    linked = found >= 0
    edge_from = np.broadcast_to(np.arange(count)[:, None], linked.shape)[linked]
    edge_to = found[linked]
    # Connected components by min-label propagation with pointer jumping.
    labels = np.arange(count)
    while True:
        updated = labels.copy()
        np.minimum.at(updated, edge_from, labels[edge_to])
        np.minimum.at(updated, edge_to, labels[edge_from])
        updated = updated[updated]
        if np.array_equal(updated, labels):
            break
        labels = updated
    cluster_of_point = labels[cell_of_point]
    by_cluster = np.argsort(cluster_of_point, kind="stable")
    boundaries = np.flatnonzero(np.diff(cluster_of_point[by_cluster])) + 1
    ids = [record["id"] for record in clashes]
    clusters = [
        {
            "center": points[members].mean(axis=0).tolist(),
            "clashes": [ids[member] for member in members.tolist()],
        }
        for members in np.split(by_cluster, boundaries)
    ]
    clusters.sort(key=lambda cluster: (-len(cluster["clashes"]), cluster["clashes"][0]))
    return clusters
