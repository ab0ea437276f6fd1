"""Broad phase: find_pairs equals the brute-force all-pairs answer."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from collide_addon.core import (
    CoherentBounds,
    KeptContacts,
    ShapeBatch,
    distances_within,
    find_contacts,
    find_pairs,
    pair_distance,
)
from collide_addon.core import broad as broad_module
from collide_dev.synthetic import mixed_scene, random_rotations

# Rows of the all-pairs bounding-sphere test in `brute_force_pairs` done at once, so that
# its (rows, n) arrays stay small.
_BRUTE_FORCE_ROWS = 512


def brute_force_pairs(batch: ShapeBatch, margin: float) -> np.ndarray:
    """Every pair (i < j) with pair_distance <= margin, sorted: (k, 2) int64.

    Exact distances are computed only for pairs whose bounding spheres (around each
    centre, radius |half_extents| + radius, which holds the whole shape) come within the
    margin plus an allowance: every other pair is farther apart than the margin. The
    allowance covers rounding and rotations that are orthonormal only to the batch's
    tolerance of 1e-6 (a core may then reach 1.5e-6 of its size past its sphere).
    """
    count = len(batch)
    bounding = np.linalg.norm(batch.half_extents, axis=1) + batch.radii
    allowance = 1e-5 * (1.0 + np.abs(batch.centers).max(initial=0.0) + bounding.max(initial=0.0))
    reach = max(margin, 0.0) + allowance
    first, second = [], []
    for start in range(0, count, _BRUTE_FORCE_ROWS):
        rows = np.arange(start, min(start + _BRUTE_FORCE_ROWS, count))
        gaps = np.linalg.norm(batch.centers[rows, None] - batch.centers[None], axis=2)
        near = gaps <= bounding[rows, None] + bounding[None] + reach
        near &= rows[:, None] < np.arange(count)[None]  # each pair once, i < j
        row, column = np.nonzero(near)
        first.append(rows[row])
        second.append(column)
    i = np.concatenate(first) if first else np.zeros(0, np.int64)
    j = np.concatenate(second) if second else np.zeros(0, np.int64)
    distance = pair_distance(batch, i, j).distance
    keep = distance <= margin
    return np.stack([i[keep], j[keep]], axis=1).astype(np.int64)


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(2, 120), st.sampled_from([-0.3, 0.0, 0.25, 1.0]))
def test_find_pairs_equals_brute_force(seed, count, margin):
    rng = np.random.default_rng(seed)
    batch = mixed_scene(rng, count)
    pairs = find_pairs(batch, margin)
    np.testing.assert_array_equal(pairs, brute_force_pairs(batch, margin))


def test_touching_bounds_and_shapes_count():
    boxes = ShapeBatch.boxes(
        [[0, 0, 0], [2, 0, 0], [4, 0, 0], [7, 0, 0]],
        np.broadcast_to(np.eye(3), (4, 3, 3)),
        np.ones((4, 3)),
    )
    np.testing.assert_array_equal(find_pairs(boxes), [[0, 1], [1, 2]])
    np.testing.assert_array_equal(find_pairs(boxes, margin=1.0), [[0, 1], [1, 2], [2, 3]])


@pytest.mark.slow
def test_slab_among_bolts_finds_every_bolt_on_the_slab():
    rng = np.random.default_rng(7)
    bolts = 5000
    slab = ShapeBatch.boxes([[0, 0, -0.05]], [np.eye(3)], [[50.0, 50.0, 0.05]])
    # Half the bolts stand on the slab (touching or through it), half float above it.
    heights = np.where(
        np.arange(bolts) % 2 == 0, rng.uniform(-0.004, 0.0, bolts), rng.uniform(0.02, 5, bolts)
    )
    starts = np.column_stack([rng.uniform(-49, 49, (bolts, 2)), heights])
    capsules = ShapeBatch.capsules(starts, starts + np.array([0, 0, 0.01]), np.full(bolts, 0.004))
    batch = ShapeBatch.concat([slab, capsules])
    pairs = find_pairs(batch)
    on_slab = pairs[pairs[:, 0] == 0, 1] - 1
    expected = np.flatnonzero(heights - 0.004 <= 0.0)
    np.testing.assert_array_equal(on_slab, expected)
    np.testing.assert_array_equal(pairs, brute_force_pairs(batch, 0.0))


def test_all_objects_in_one_plane_and_one_cell():
    # Degenerate distributions: everything at the same place, everything on a line.
    count = 200
    same = ShapeBatch.spheres(np.zeros((count, 3)), np.full(count, 0.5))
    assert len(find_pairs(same)) == count * (count - 1) // 2
    line = ShapeBatch.boxes(
        np.column_stack([np.arange(count) * 1.5, np.zeros(count), np.zeros(count)]),
        random_rotations(np.random.default_rng(3), count),
        np.full((count, 3), 0.5),
    )
    np.testing.assert_array_equal(find_pairs(line), brute_force_pairs(line, 0.0))


@pytest.mark.parametrize("count", [0, 1])
def test_fewer_than_two_shapes(count):
    batch = ShapeBatch.spheres(np.zeros((count, 3)), np.ones(count))
    assert find_pairs(batch).shape == (0, 2)


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(2, 120), st.sampled_from([-0.3, 0.0, 0.5]))
# Found by hypothesis: one distance a float64 step apart (0.3419137477432632 and
# ...263); the same pair in a larger batch of candidates may take numpy's other loop.
@example(seed=96, count=96, margin=0.5)
def test_find_contacts_is_find_pairs_with_their_distances(seed, count, margin):
    batch = mixed_scene(np.random.default_rng(seed), count)
    pairs, result = find_contacts(batch, margin)
    np.testing.assert_array_equal(pairs, find_pairs(batch, margin))
    expected = pair_distance(batch, pairs[:, 0], pairs[:, 1])
    for field in ("distance", "normal", "point_i", "point_j"):
        np.testing.assert_allclose(
            getattr(result, field), getattr(expected, field), rtol=0, atol=1e-12
        )


def test_distances_within_keeps_the_rows_within_the_margin():
    batch = ShapeBatch.spheres([[0, 0, 0], [2.5, 0, 0], [10, 0, 0], [0, 2.0, 0]], np.ones(4))
    i, j = np.array([0, 0, 0, 1]), np.array([1, 2, 3, 3])
    rows, result = distances_within(batch, i, j, margin=0.5)
    np.testing.assert_array_equal(rows, [0, 2])
    np.testing.assert_allclose(result.distance, [0.5, 0.0])


def _assert_same_contacts(found, expected) -> None:
    """Pairs and every field of their PairResult equal bit for bit."""
    np.testing.assert_array_equal(found[0], expected[0])
    for name in ("distance", "normal", "point_i", "point_j"):
        np.testing.assert_array_equal(getattr(found[1], name), getattr(expected[1], name))


@settings(max_examples=25, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    movers=st.sampled_from([0, 1, 5, 60]),
    margins=st.lists(st.sampled_from([-0.2, 0.0, 0.3]), min_size=4, max_size=4),
)
def test_kept_contacts_give_the_narrow_phases_answers_bit_for_bit(seed, movers, margins):
    """Over successive edits (a few shapes moved, turned, resized or replaced by another
    kind, the margin sometimes changed, once a shape removed), `find_contacts` with a
    `KeptContacts` gives what it gives without, bit for bit, and reuses answers only
    where nothing they depend on changed."""
    rng = np.random.default_rng(seed)
    batch = mixed_scene(rng, 150)
    kept, coherent = KeptContacts(), CoherentBounds()
    for step, margin in enumerate(margins):
        # With a coherent broad phase, as live checks run it: its candidates untested.
        found = find_contacts(batch, margin, coherent, kept=kept)
        _assert_same_contacts(found, find_contacts(batch, margin))
        # The other shapes' rows stay the same bit for bit, as a live update reads them.
        moved = rng.choice(len(batch), size=min(movers, len(batch)), replace=False)
        shapes = batch.take(moved)
        half_extents = shapes.half_extents.copy()
        half_extents[: len(moved) // 2] *= 1.1
        shapes = ShapeBatch(
            shapes.kinds,
            shapes.centers + rng.normal(0.0, 0.3, (len(moved), 3)),
            random_rotations(rng, len(moved)) @ shapes.rotations,
            half_extents,
            shapes.radii,
        )
        batch = batch.with_rows(moved, shapes)
        if step == 1 and movers:
            # Another kind in a shape's row: its pairs are answered afresh.
            other = ShapeBatch.spheres(shapes.centers[:1], [0.5])
            if shapes.kinds[0] == other.kinds[0]:
                other = ShapeBatch.boxes(shapes.centers[:1], np.eye(3)[None], [[0.5] * 3])
            batch = batch.with_rows(moved[:1], other)
        if step == 2:
            batch = batch.take(np.arange(1, len(batch)))  # one shape fewer: all afresh
    _assert_same_contacts(find_contacts(batch, 0.0, coherent, kept=kept), find_contacts(batch, 0.0))


def test_kept_contacts_answer_only_pairs_of_changed_shapes_again(monkeypatch):
    """One shape moved among resting ones: the narrow phase measures the candidate pairs
    it is in, no other."""
    rng = np.random.default_rng(3)
    batch = mixed_scene(rng, 200)
    kept = KeptContacts()
    find_contacts(batch, 0.1, kept=kept)
    measured = []
    real = broad_module.distances_within

    def counted(batch, i, j, margin):
        measured.append(np.stack([i, j], axis=1))
        return real(batch, i, j, margin)

    monkeypatch.setattr(broad_module, "distances_within", counted)
    shape = batch.take([7])
    moved = batch.with_rows(
        [7],
        ShapeBatch(
            shape.kinds, shape.centers + 0.05, shape.rotations, shape.half_extents, shape.radii
        ),
    )
    _assert_same_contacts(find_contacts(moved, 0.1, kept=kept), find_contacts(moved, 0.1))
    kept_call, plain_call = measured  # the kept one measured first
    assert len(plain_call) > 50
    assert len(kept_call) and (kept_call == 7).any(axis=1).all()
    # The same shapes again: nothing measured.
    find_contacts(moved, 0.1, kept=kept)
    assert len(measured[2]) == 0
