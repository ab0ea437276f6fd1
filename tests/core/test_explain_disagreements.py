"""benchmarks/explain_disagreements.py, the README's reading of the pairs only one tool
finds: its measures on two boxes whose answers are known."""

import importlib.util
from pathlib import Path

import numpy as np
import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "explain_disagreements.py"
_spec = importlib.util.spec_from_file_location("explain_disagreements", SCRIPT)
explain = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(explain)

# A unit cube's corners (x, y, z bits of the index) and its 12 outward triangles.
CUBE = np.array([[(k >> 0) & 1, (k >> 1) & 1, (k >> 2) & 1] for k in range(8)], dtype=float)
CUBE_TRIANGLES = np.array(
    [
        [0, 2, 1], [1, 2, 3], [4, 5, 6], [5, 7, 6],  # z = 0, z = 1
        [0, 1, 4], [1, 5, 4], [2, 6, 3], [3, 6, 7],  # y = 0, y = 1
        [0, 4, 2], [2, 4, 6], [1, 3, 5], [3, 7, 5],  # x = 0, x = 1
    ]
)  # fmt: skip


def cube(offset) -> "explain.Mesh":
    return explain.Mesh(CUBE + np.asarray(offset, dtype=float), CUBE_TRIANGLES)


def test_a_box_resting_on_a_box_touches_in_one_plane():
    below, above = cube([0, 0, 0]), cube([0.5, 0.0, 1.0])
    span = explain.contact_span(below, above)
    assert span[2] == pytest.approx(0.0, abs=1e-12)
    assert span[0] == pytest.approx(0.5) and span[1] == pytest.approx(1.0)
    distance = explain.least_distance(below, above)
    depth = max(explain.deepest_inside(below, above), explain.deepest_inside(above, below))
    assert explain.verdict("intersection", distance, depth) == "touching"


def test_a_box_sunk_into_a_box_penetrates_as_deep_as_it_is_sunk():
    below, sunk = cube([0, 0, 0]), cube([0.25, 0.25, 0.8])
    assert np.isnan(explain.contact_span(below, cube([0, 0, 1.5]))).all()
    assert explain.contact_span(below, sunk)[2] == pytest.approx(0.2)
    depth = max(explain.deepest_inside(below, sunk), explain.deepest_inside(sunk, below))
    assert depth == pytest.approx(0.2)
    assert explain.verdict("intersection", 0.0, depth) == "penetrating"
