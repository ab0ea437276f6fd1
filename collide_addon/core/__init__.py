"""The collision core: numpy and the standard library only, no Blender.

    from collide_addon.core import ShapeBatch, pair_distance, pair_intersects, find_pairs

`find_contacts(batch, margin)` is find_pairs plus the pair_distance of each pair found,
computed once; `distances_within` does the same for a given list of pairs. For
successive calls on shapes that move a little (live updates), pass a `CoherentBounds`
to `find_contacts` so that the broad phase builds on the previous call's work.
"""

from .broad import find_contacts, find_pairs
from .coherent import CoherentBounds
from .constants import KIND_BOX, KIND_CAPSULE, KIND_NAMES, KIND_SPHERE
from .narrow import PairResult, distances_within, pair_distance, pair_intersects
from .shapes import ShapeBatch

__all__ = [
    "KIND_BOX",
    "KIND_CAPSULE",
    "KIND_NAMES",
    "KIND_SPHERE",
    "CoherentBounds",
    "PairResult",
    "ShapeBatch",
    "distances_within",
    "find_contacts",
    "find_pairs",
    "pair_distance",
    "pair_intersects",
]
