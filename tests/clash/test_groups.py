"""Grouping clash records: by object, by test, in spatial clusters."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from collide_addon.clash.groups import group_by_cluster, group_by_object, group_by_test


def test_group_by_object_and_test():
    clashes = [
        {"id": "1", "test": "t1", "a": "Wall", "b": "Pipe"},
        {"id": "2", "test": "t2", "a": "Pipe", "b": "Duct"},
        {"id": "3", "test": "t1", "a": "Duct", "b": "Wall"},
    ]
    assert group_by_object(clashes) == {"Duct": ["2", "3"], "Pipe": ["1", "2"], "Wall": ["1", "3"]}
    assert group_by_test(clashes) == {"t1": ["1", "3"], "t2": ["2"]}


def test_group_by_cluster_examples():
    points = [[0, 0, 0], [0.5, 0, 0], [0.9, 0.1, 0], [10, 10, 10], [10.2, 10, 10], [-20, 0, 0]]
    clashes = [{"id": str(index), "point": point} for index, point in enumerate(points)]
    clusters = group_by_cluster(clashes, 0.5)
    assert [cluster["clashes"] for cluster in clusters] == [["0", "1", "2"], ["3", "4"], ["5"]]
    assert np.allclose(clusters[1]["center"], [10.1, 10, 10])
    assert group_by_cluster([], 1.0) == []
    with pytest.raises(ValueError, match="radius"):
        group_by_cluster(clashes, 0.0)


@settings(max_examples=60)
@given(
    st.lists(st.tuples(*[st.floats(-5, 5, allow_nan=False)] * 3), min_size=1, max_size=30),
    st.floats(0.1, 3.0),
)
def test_group_by_cluster_joins_points_closer_than_radius(points, radius):
    clashes = [{"id": str(index), "point": list(point)} for index, point in enumerate(points)]
    clusters = group_by_cluster(clashes, radius)
    cluster_of = {
        identifier: number
        for number, cluster in enumerate(clusters)
        for identifier in cluster["clashes"]
    }
    assert sorted(cluster_of) == sorted(clash["id"] for clash in clashes)
    positions = np.array(points)
    for first, second in itertools.combinations(range(len(points)), 2):
        if np.linalg.norm(positions[first] - positions[second]) < radius:
            assert cluster_of[str(first)] == cluster_of[str(second)]
        if np.linalg.norm(positions[first] - positions[second]) > 2 * np.sqrt(3) * radius * len(
            points
        ):
            assert cluster_of[str(first)] != cluster_of[str(second)]


def test_group_by_cluster_points_millions_of_radii_apart():
    # Points 2e6 apart per axis at radius 0.001 used to abort the clustering (and the
    # whole report) because one int64 key per cell of their bounding grid did not fit.
    points = [[0, 0, 0], [0.0005, 0, 0], [2e6, 2e6, 2e6], [-2e6, -2e6, -2e6], [1e90, 0, -1e90]]
    clashes = [{"id": str(index), "point": point} for index, point in enumerate(points)]
    clusters = group_by_cluster(clashes, 0.001)
    assert [cluster["clashes"] for cluster in clusters] == [["0", "1"], ["2"], ["3"], ["4"]]


def test_group_by_cluster_links_neighbours_on_every_axis_far_from_the_origin():
    offsets = np.array([[0, 0, 0], [0.9, 0, 0], [0.9, 0.9, 0.9], [5, 0, 0]])
    points = np.array([3e9, -7e9, 5e9]) + offsets
    clashes = [{"id": str(index), "point": list(point)} for index, point in enumerate(points)]
    clusters = group_by_cluster(clashes, 1.0)
    assert [cluster["clashes"] for cluster in clusters] == [["0", "1", "2"], ["3"]]
