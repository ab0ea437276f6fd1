"""concatenate_fields: one dataclass from many, field by field."""

from dataclasses import dataclass

import numpy as np

from collide_addon.core.columns import concatenate_fields


@dataclass
class Rows:
    ids: np.ndarray
    points: np.ndarray


def test_fields_are_concatenated_in_order():
    first = Rows(np.array([1, 2]), np.zeros((2, 3)))
    second = Rows(np.array([3]), np.ones((1, 3)))
    joined = concatenate_fields(Rows, [first, second])
    np.testing.assert_array_equal(joined.ids, [1, 2, 3])
    np.testing.assert_array_equal(joined.points, [[0, 0, 0], [0, 0, 0], [1, 1, 1]])
