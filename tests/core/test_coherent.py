"""The broad phase across updates: always exactly overlapping_bounds, cheaper when little
moves."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from collide_addon.core import CoherentBounds, find_contacts, find_pairs
from collide_addon.core.grid import overlapping_bounds
from collide_dev.synthetic import mixed_scene, random_rotations
from tests.core.test_grid import brute_force_bounds


def as_set(pairs: np.ndarray) -> set[tuple[int, int]]:
    assert (pairs[:, 0] < pairs[:, 1]).all()
    found = set(map(tuple, pairs.tolist()))
    assert len(found) == len(pairs), "a pair was found twice"
    return found


def random_boxes(rng, count: int, side: float):
    """Boxes about 1 across in a cube of `side`, some flat or points, a few wide."""
    sizes = rng.uniform(0.0, 1.5, (count, 3)) * (rng.random((count, 1)) > 0.1)
    sizes[rng.random(count) < 0.05] *= 20.0  # slabs and beams among the parts
    lo = rng.uniform(0.0, side, (count, 3))
    return lo, lo + sizes


@settings(max_examples=40, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    count=st.integers(0, 150),
    step=st.sampled_from([0.0, 0.02, 0.2, 1.0, 10.0]),
    movers=st.floats(0.0, 1.0),
)
def test_equals_overlapping_bounds_over_moves(seed, count, step, movers):
    rng = np.random.default_rng(seed)
    side = max(2.0, (count * 4.0) ** (1 / 3))
    lo, hi = random_boxes(rng, count, side)
    coherent = CoherentBounds()
    for _ in range(8):
        expected = brute_force_bounds(lo, hi)
        assert as_set(coherent.overlapping(lo, hi)) == expected
        # Untested, the pairs hold every overlap (the same boxes again: nothing moved).
        assert as_set(coherent.overlapping(lo, hi, exact=False)) >= expected
        moving = rng.random(count) < movers
        offsets = rng.normal(0.0, step, (count, 3)) * moving[:, None]
        lo, hi = lo + offsets, hi + offsets


def test_fat_boxes_are_built_once_boxes_stay_and_dropped_while_they_jump():
    rng = np.random.default_rng(1)
    coherent = CoherentBounds()
    scenes = {count: random_boxes(rng, count, 6.0) for count in (20, 50, 80)}
    # A first call, or one with another count, is overlapping_bounds; the same 80 boxes
    # again build fat boxes.
    for count in (50, 80, 80, 20):
        lo, hi = scenes[count]
        assert as_set(coherent.overlapping(lo, hi)) == brute_force_bounds(lo, hi)
    assert coherent.rebuilds == 1
    lo, hi = scenes[20]
    assert as_set(coherent.overlapping(lo, hi)) == brute_force_bounds(lo, hi)
    assert coherent.rebuilds == 2
    # Every box jumps: the fat boxes go and none are built while the jumping goes on.
    for _ in range(4):
        lo, hi = random_boxes(rng, 20, 6.0)
        assert as_set(coherent.overlapping(lo, hi)) == brute_force_bounds(lo, hi)
    assert coherent.rebuilds == 2


@pytest.mark.slow
def test_small_moves_reuse_the_fat_boxes():
    # 10,000 boxes, each update moves every box by up to 2% of its size: most updates
    # find no box outside its fat box, the rest move only a few boxes.
    rng = np.random.default_rng(2)
    count = 10_000
    lo, hi = random_boxes(rng, count, (count * 4.0) ** (1 / 3))
    coherent = CoherentBounds()
    for _ in range(30):
        pairs = coherent.overlapping(lo, hi)
        offsets = rng.uniform(-0.02, 0.02, (count, 3))
        lo, hi = lo + offsets, hi + offsets
    assert as_set(pairs) == as_set(overlapping_bounds(lo - offsets, hi - offsets))
    assert coherent.rebuilds <= 3


def test_moved_boxes_are_matched_without_a_rebuild():
    # A few ordinary boxes jump across the scene (a large one moving would rather
    # rebuild): they are looked up in the kept grid, not rebuilt.
    rng = np.random.default_rng(3)
    count = 2_000
    side = (count * 40.0) ** (1 / 3)
    lo, hi = random_boxes(rng, count, side)
    ordinary = np.flatnonzero((hi - lo).max(axis=1) <= 1.5)
    coherent = CoherentBounds()
    coherent.overlapping(lo, hi)
    for _ in range(10):
        jumpers = rng.choice(ordinary, size=10, replace=False)
        offsets = np.zeros((count, 3))
        offsets[jumpers] = rng.uniform(-side / 2, side / 2, (10, 3))
        lo, hi = lo + offsets, hi + offsets
        assert as_set(coherent.overlapping(lo, hi)) == as_set(overlapping_bounds(lo, hi))
    assert coherent.rebuilds == 1


@settings(max_examples=20, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), margin=st.sampled_from([-0.2, 0.0, 0.3]))
@pytest.mark.slow
def test_find_contacts_and_find_pairs_are_the_same_with_a_coherent_broad_phase(seed, margin):
    rng = np.random.default_rng(seed)
    batch = mixed_scene(rng, 300)
    coherent, kept_for_pairs = CoherentBounds(), CoherentBounds()
    for _ in range(4):
        pairs, result = find_contacts(batch, margin)
        coherent_pairs, coherent_result = find_contacts(batch, margin, coherent)
        np.testing.assert_array_equal(coherent_pairs, pairs)
        np.testing.assert_array_equal(find_pairs(batch, margin, kept_for_pairs), pairs)
        np.testing.assert_array_equal(coherent_result.distance, result.distance)
        turned = random_rotations(rng, len(batch)) @ batch.rotations
        moved = batch.centers + rng.normal(0.0, 0.05, batch.centers.shape)
        batch = type(batch)(batch.kinds, moved, turned, batch.half_extents, batch.radii)
