"""Wireframes: every segment end lies on the shape it draws."""

import numpy as np

from collide_addon.core.fit import fit_box, fit_capsule, fit_sphere, stack_fits
from collide_addon.core.wireframe import wireframe_segments
from tests.core.shapes_for_tests import outside_distance


def test_wireframe_segments_lie_on_the_shapes():
    rng = np.random.default_rng(4)
    fits = [
        fit_box(rng.normal(size=(40, 3)) * [2, 1, 0.5]),
        fit_sphere(rng.normal(size=(40, 3))),
        fit_capsule(rng.normal(size=(40, 3)) * [0.2, 0.2, 3]),
    ]
    for fit in fits:
        segments = wireframe_segments(stack_fits([fit]), circle_segments=16)
        assert segments.shape[1:] == (2, 3) and len(segments) > 0
        ends = segments.reshape(-1, 3)
        np.testing.assert_allclose(outside_distance(fit, ends), 0.0, atol=1e-9)
    assert len(wireframe_segments(stack_fits([fits[0]]))) == 12
    assert wireframe_segments(stack_fits([])).shape == (0, 2, 3)
