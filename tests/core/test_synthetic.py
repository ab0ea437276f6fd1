"""The seeded scenes of the demo, the tests and the benchmarks."""

import numpy as np

from collide_addon.core import KIND_BOX, KIND_CAPSULE, KIND_SPHERE
from collide_dev.synthetic import mixed_scene, random_rotations


def test_random_rotations_are_proper_rotations():
    rotations = random_rotations(np.random.default_rng(0), 500)
    identity = np.broadcast_to(np.eye(3), (500, 3, 3))
    np.testing.assert_allclose(
        np.einsum("nki,nkj->nij", rotations, rotations), identity, atol=1e-12
    )
    np.testing.assert_allclose(np.linalg.det(rotations), 1.0)


def test_mixed_scene_follows_the_benchmark_recipe():
    count = 3001
    batch = mixed_scene(np.random.default_rng(1), count)
    side = (8.0 * count) ** (1.0 / 3.0)
    kinds = np.bincount(batch.kinds, minlength=3)
    assert kinds[KIND_BOX] == kinds[KIND_SPHERE] == count // 3
    assert kinds[KIND_CAPSULE] == count - 2 * (count // 3)
    boxes = batch.kinds == KIND_BOX
    assert (batch.half_extents[boxes] >= 0.2).all() and (batch.half_extents[boxes] <= 1.0).all()
    spheres = batch.kinds == KIND_SPHERE
    assert (batch.radii[spheres] >= 0.2).all() and (batch.radii[spheres] <= 1.0).all()
    capsules = batch.kinds == KIND_CAPSULE
    lengths = 2.0 * batch.half_extents[capsules, 2]
    assert (lengths >= 0).all() and (lengths <= 2.0 + 1e-12).all()
    assert (batch.radii[capsules] >= 0.1).all() and (batch.radii[capsules] <= 0.5).all()
    starts, _ = batch.capsule_segments()
    inside = np.where(capsules[:, None], starts, batch.centers)
    assert (inside >= 0).all() and (inside <= side).all()
    # Seeded: the same scene every time.
    again = mixed_scene(np.random.default_rng(1), count)
    np.testing.assert_array_equal(again.centers, batch.centers)
