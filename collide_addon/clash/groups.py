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
    dtype=np.int64,
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
    cells = np.floor(points / radius).astype(np.int64)
    unique_cells, cell_of_point = np.unique(cells, axis=0, return_inverse=True)
    cell_of_point = cell_of_point.reshape(-1)
    # One int64 key per cell (row-major over the padded cell range) for searchsorted.
    origin = unique_cells.min(axis=0) - 1
    dims = unique_cells.max(axis=0) - origin + 2
    if float(np.prod(dims.astype(np.float64))) >= 2.0**62:
        raise ValueError("clash points too far apart for this radius; use a larger radius")

    def cell_key(coords: np.ndarray) -> np.ndarray:
        shifted = coords - origin
        return (shifted[..., 0] * dims[1] + shifted[..., 1]) * dims[2] + shifted[..., 2]

    keys = cell_key(unique_cells)  # ascending: np.unique sorts rows lexicographically
    neighbour_keys = cell_key(unique_cells[:, None, :] + _HALF_NEIGHBOURS[None, :, :])
    found = np.searchsorted(keys, neighbour_keys).clip(max=len(keys) - 1)
    linked = keys[found] == neighbour_keys
    edge_from = np.broadcast_to(np.arange(len(keys))[:, None], linked.shape)[linked]
    edge_to = found[linked]
    # Connected components by min-label propagation with pointer jumping.
    labels = np.arange(len(keys))
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
