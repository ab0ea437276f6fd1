"""The collision core: numpy and the standard library only, no Blender.

from collide_addon.core import ShapeBatch, pair_distance, pair_intersects, find_pairs
"""

from .broad import find_pairs
from .constants import KIND_BOX, KIND_CAPSULE, KIND_NAMES, KIND_SPHERE
from .narrow import PairResult, pair_distance, pair_intersects
from .shapes import ShapeBatch

__all__ = [
    "KIND_BOX",
    "KIND_CAPSULE",
    "KIND_NAMES",
    "KIND_SPHERE",
    "PairResult",
    "ShapeBatch",
    "find_pairs",
    "pair_distance",
    "pair_intersects",
]
