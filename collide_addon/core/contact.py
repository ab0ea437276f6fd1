"""When a signed distance means penetration, contact or a gap: one rule for every caller.

Shapes placed by Blender's float32 matrices carry rounding of about 6e-8 of their
coordinates, and parts that touch in the model come out 1e-9 to 1e-6 apart, on either
side of zero. A distance within the contact epsilon of zero is therefore contact, not
penetration and not a gap. The epsilon grows with the distance of the contact from the
origin, as float32 rounding does:

    epsilon = CONTACT_RELATIVE * max(1, largest |coordinate| of the contact point)

that is 1 micrometre near the origin (in scene units, metres by default) and 16 float32
steps of the coordinate further out. With it, for a signed distance `d` (< 0:
penetration depth) and a tolerance `t` >= 0:

    penetrating (hard):   d < -(t + epsilon)      deeper than the tolerance
    touching:             |d| <= t + epsilon      within the tolerance of contact
    within (clearance):   d <= t + epsilon        closer than the gap, inclusive

The live check, Detect and the clash tests of report runs all decide with these, through
`clash_mask` and `contact_margin` by the rule's name: "hard", "touching" or "clearance".
"""

from __future__ import annotations

import math

import numpy as np

from .columns import reduce_short_axis
from .shapes import ShapeBatch

# 16 float32 steps (2**-23 each) relative to the coordinate: rounded matrices of a
# few levels of parents stay well inside it, a real overlap of a micrometre does not.
CONTACT_RELATIVE = 1e-6


def contact_epsilon(points) -> np.ndarray:
    """The contact epsilon at each contact point.

    points: (k, 3) contact points in world space
    returns: (k,) float64, CONTACT_RELATIVE * max(1, max |coordinate|)
    """
    points = np.asarray(points, dtype=np.float64).reshape(-1, 3)
    return CONTACT_RELATIVE * np.maximum(1.0, reduce_short_axis(np.maximum, np.abs(points)))


def largest_contact_epsilon(batch: ShapeBatch) -> float:
    """At least the epsilon of any contact between shapes of `batch`: the margin a broad
    phase adds so that it keeps every pair the rules below may count. A contact point
    lies in a shape, so no coordinate of it exceeds `coordinate_bound`.

    The bound is rounded up to one of `_MARGIN_STEPS` steps per power of two (at most
    1/8 more), so that the margin stays the same while the outermost object moves a
    little: the contacts live checks keep for unchanged pairs hold only under the same
    margin, and dragging that object re-decided every pair of the scene at each update
    (65 mesh pairs and 63 ms against 1 pair and 18 ms for another object). Only which
    pairs are candidates depends on it; the rules use each contact's own epsilon."""
    mantissa, exponent = math.frexp(max(1.0, coordinate_bound(batch)))
    return CONTACT_RELATIVE * math.ldexp(
        math.ceil(mantissa * _MARGIN_STEPS) / _MARGIN_STEPS, exponent
    )


_MARGIN_STEPS = 16


def coordinate_bound(batch: ShapeBatch) -> float:
    """At least `largest_coordinate` of `batch` (0 for no shapes), without turning any
    shape's extents: the largest |centre coordinate| plus the largest half-extent sum
    and radius (a few maxima over the rows)."""
    if len(batch) == 0:
        return 0.0
    half_sums = reduce_short_axis(np.add, batch.half_extents)
    return float(np.abs(batch.centers).max() + (half_sums + batch.radii).max())


def largest_coordinate(batch: ShapeBatch) -> float:
    """The largest |coordinate| of any point of the shapes of `batch` (0 for none): the
    reach of their world bounds, whose contact epsilon bounds every contact's."""
    if len(batch) == 0:
        return 0.0
    # Each shape's half-width along a world axis: its core's extents turned, plus radius.
    half_widths = np.abs(batch.rotations) @ batch.half_extents[:, :, None]
    reach = np.abs(batch.centers) + half_widths[:, :, 0] + batch.radii[:, None]
    return float(reach.max())


def penetrating(distance, tolerance: float, epsilon) -> np.ndarray:
    """Pairs that penetrate deeper than `tolerance` (>= 0) beyond rounding: (k,) bool.

    distance: (k,) signed distances; epsilon: (k,) or a scalar, see `contact_epsilon`
    """
    return np.asarray(distance, dtype=np.float64) < -(tolerance + np.asarray(epsilon))


def touching(distance, tolerance: float, epsilon) -> np.ndarray:
    """Pairs whose surfaces are within `tolerance` (>= 0) of contact, on either side:
    (k,) bool."""
    return np.abs(np.asarray(distance, dtype=np.float64)) <= tolerance + np.asarray(epsilon)


def within(distance, gap: float, epsilon) -> np.ndarray:
    """Pairs closer than `gap` (>= 0), the boundary included, penetrating pairs too:
    (k,) bool."""
    return np.asarray(distance, dtype=np.float64) <= gap + np.asarray(epsilon)


def clash_mask(rule: str, tolerance: float, distance, epsilon) -> np.ndarray:
    """Which pairs clash under `rule`: "hard" (`penetrating`), "touching" (`touching`)
    or "clearance" (`within`), with `tolerance` >= 0.

    distance: (k,) signed distance, < 0 is penetration
    epsilon: (k,) or scalar contact epsilon (`contact_epsilon` of the contact points)
    returns: (k,) bool
    """
    if rule == "hard":
        return penetrating(distance, tolerance, epsilon)
    if rule == "clearance":
        return within(distance, tolerance, epsilon)
    if rule == "touching":
        return touching(distance, tolerance, epsilon)
    raise ValueError(f"clash_mask: {rule!r} is not a distance-based test type")


def contact_margin(rule: str, tolerance: float, batch: ShapeBatch) -> float:
    """Margin for `find_contacts` (which keeps pairs with distance <= margin) that keeps
    every pair `clash_mask(rule, tolerance, ...)` can count among the shapes of `batch`:
    hard clashes start `tolerance` inside contact, touching and clearance reach
    `tolerance` and the contact epsilon beyond it."""
    if rule == "hard":
        return -tolerance
    if rule in ("clearance", "touching"):
        return tolerance + largest_contact_epsilon(batch)
    raise ValueError(f"contact_margin: {rule!r} is not a distance-based test type")


def resolved_distance(rule: str, tolerance: float, epsilon) -> np.ndarray:
    """The distance a pushed-apart pair is given so that `clash_mask(rule, tolerance,
    ...)` no longer counts it: 0 for "hard" and `tolerance` for "touching" and
    "clearance", plus twice the contact epsilon so that rounding keeps it out.

    epsilon: (k,) or scalar contact epsilon; returns: (k,) or scalar float64
    """
    if rule == "hard":
        return 2.0 * np.asarray(epsilon, dtype=np.float64)
    if rule in ("clearance", "touching"):
        return tolerance + 2.0 * np.asarray(epsilon, dtype=np.float64)
    raise ValueError(f"resolved_distance: {rule!r} is not a distance-based test type")
