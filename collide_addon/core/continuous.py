"""Continuous detection: the first time in a sample interval at which two moving shapes
come within a threshold, by conservative advancement vectorised over pairs.

Motion. Between a start and an end pose (t = 0 and t = 1) each shape's centre moves
linearly and its rotation turns by the shortest arc about a fixed world axis through
its centre (quaternion slerp, q and -q taken as the same rotation):

    c(t) = c0 + t (c1 - c0)        R(t) = Rot(w, t theta) R0,  Rot(w, theta) = R1 R0^T,
                                                                0 <= theta <= pi

The shape itself is the start shape (kind, half-extents, radius): a shape that deforms
between samples is swept with its start shape.

Bound. Every point of a shape lies within r = |half_extents| + radius of its centre.
Seen from a frame moving with a's centre, a only turns (its points move at most
theta_a r_a over the interval) and b's points move at most |(c1 - c0)_b - (c1 - c0)_a|
+ theta_b r_b. The signed distance changes by at most the largest displacement of the
points of either shape, so over [t, t + s]

    |d(t + s) - d(t)| <= s * L,   L = |relative translation| + theta_a r_a + theta_b r_b

and advancing t by (d(t) - threshold) / L never passes the first time d <= threshold.

Normals. L bounds the motion of any point in any direction. Along the narrow phase's
normal n, the separation sep_n (a lower bound of d, equal to it for a pair apart) falls
only at the rate the motion closes along n, which is far less than L for a pair
sliding or grazing: a step is the longer of the two (`_along_normals`).

Windows. A pair sliding along at a small gap g advances by g / L a step, and a numpy
pass over the few such pairs costs its fixed overhead, not its rows. So a pair not
decided after a few steps goes on by windows: each pass samples its next window at a
few dozen times and clears a span between two samples [t, t + h] when a bound from
either end covers it (d(t) - L h, sep_n(t) less its forward fall over h, sep_n(t + h)
less its backward fall, each >= threshold - slack) or when
d(t) + d(t + h) - L h >= 2 (threshold - slack): the two speed bounds meet above
threshold - slack. A pair goes on
from its first span not cleared, looking at that span alone, and a pair whose window
is cleared up to a sample within the threshold is bracketed as by a step. Both ways
give the same guarantees.

Accuracy. A step is (d - threshold + slack) / L, so every step is at least slack / L long
and advancement ends after finitely many steps; slack is the contact epsilon of the
pair's reach (`core.contact`), so no time with d <= threshold - slack is passed. When a
step lands at d <= threshold, the bracket [previous step, this step] is bisected on the
sign of d - threshold to a width of `time_accuracy`. The reported toi then has:
threshold - slack <= d(toi) <= threshold (the last step or span before it is cleared of
anything closer), d > threshold - slack on [0, toi), and d > threshold at
toi - time_accuracy; so a contact entered (not grazed within slack) at t* has
t* in (toi - time_accuracy, toi].
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .columns import einsum_rows, pair_order
from .contact import CONTACT_RELATIVE
from .grid import overlapping_among, overlapping_bounds
from .narrow import pair_distance
from .shapes import ShapeBatch

# Advancement steps before a pair is given up on: each step is at least slack / L long,
# so only a pair sliding within a hair of the threshold for the whole interval gets here;
# it is then reported at the time reached (a false alarm at worst, never a miss).
MAX_ADVANCE_STEPS = 10_000
# Passes a pair goes on step by step before it goes on by windows of samples: most
# pairs are decided within a few steps; one sliding near the threshold would take
# hundreds, each a narrow-phase pass whose cost is its fixed overhead, not its rows.
_STEPS_BEFORE_WINDOWS = 16
# Samples per window, and how much a window grows after one wholly cleared.
_WINDOW_SAMPLES = 32
_WINDOW_GROWTH = 8.0
# Relative growth of `swept_candidates`' bounds beyond the margin (of the largest
# coordinate), far above the rounding between two computations of one pose's bounds.
_CANDIDATE_SLACK = 1e-9


@dataclass(frozen=True)
class SweptMotion:
    """The interpolated motion of n shapes between two poses.

    start: the n shapes at t = 0 (their shape is used throughout)
    translations: (n, 3) c1 - c0
    axes: (n, 3) unit world rotation axes (any unit vector where angles is 0)
    angles: (n,) shortest-arc rotation angles in [0, pi]
    reach: (n,) farthest point of each shape from its centre
    """

    start: ShapeBatch
    translations: np.ndarray
    axes: np.ndarray
    angles: np.ndarray
    reach: np.ndarray


def join_motions(motions) -> SweptMotion:
    """The motions of several sets of shapes as one (e.g. of the intervals between
    several pairs of samples): shape k of motions[1] is row len(motions[0]) + k, and so
    on. Pairs of all of them then advance together in `motion_contacts`, each numpy pass
    paying its fixed cost once for all. motions: a non-empty sequence."""
    motions = list(motions)
    return SweptMotion(
        start=ShapeBatch.concat(motion.start for motion in motions),
        translations=np.concatenate([motion.translations for motion in motions]),
        axes=np.concatenate([motion.axes for motion in motions]),
        angles=np.concatenate([motion.angles for motion in motions]),
        reach=np.concatenate([motion.reach for motion in motions]),
    )


def _quaternions(rotations: np.ndarray) -> np.ndarray:
    """Unit quaternions (w, x, y, z) of rotation matrices, w >= 0 (Shepperd's method:
    each from the largest of the trace and the diagonal, so no division by a small value).

    rotations: (n, 3, 3) orthonormal, right-handed
    returns: (n, 4)
    """
    m = rotations
    trace = np.trace(m, axis1=1, axis2=2)
    candidates = np.stack([trace, m[:, 0, 0], m[:, 1, 1], m[:, 2, 2]], axis=1)
    choice = np.argmax(candidates, axis=1)
    quaternions = np.empty((len(m), 4))
    w_rows = choice == 0
    s = np.sqrt(1.0 + trace[w_rows]) * 2.0
    mw = m[w_rows]
    quaternions[w_rows] = np.stack(
        [
            0.25 * s,
            (mw[:, 2, 1] - mw[:, 1, 2]) / s,
            (mw[:, 0, 2] - mw[:, 2, 0]) / s,
            (mw[:, 1, 0] - mw[:, 0, 1]) / s,
        ],
        axis=1,
    )
    for axis in range(3):
        rows = choice == axis + 1
        first, second = (axis + 1) % 3, (axis + 2) % 3
        mr = m[rows]
        s = np.sqrt(1.0 + 2.0 * mr[:, axis, axis] - np.trace(mr, axis1=1, axis2=2)) * 2.0
        q = np.empty((len(mr), 4))
        q[:, 0] = (mr[:, second, first] - mr[:, first, second]) / s
        q[:, 1 + axis] = 0.25 * s
        q[:, 1 + first] = (mr[:, first, axis] + mr[:, axis, first]) / s
        q[:, 1 + second] = (mr[:, second, axis] + mr[:, axis, second]) / s
        quaternions[rows] = q
    # q and -q are one rotation; w >= 0 picks the shortest arc (angle <= pi).
    return quaternions * np.where(quaternions[:, :1] < 0.0, -1.0, 1.0)


def axis_rotations(axes: np.ndarray, angles: np.ndarray) -> np.ndarray:
    """Rodrigues: rotation matrices by `angles` about unit `axes`.

    axes: (n, 3) unit; angles: (n,)
    returns: (n, 3, 3)
    """
    cos, sin = np.cos(angles)[:, None, None], np.sin(angles)[:, None, None]
    x, y, z = axes[:, 0], axes[:, 1], axes[:, 2]
    zero = np.zeros_like(x)
    cross = np.stack(
        [np.stack([zero, -z, y], 1), np.stack([z, zero, -x], 1), np.stack([-y, x, zero], 1)],
        axis=1,
    )
    outer = axes[:, :, None] * axes[:, None, :]
    return cos * np.eye(3) + sin * cross + (1.0 - cos) * outer


def swept_motion(start: ShapeBatch, end: ShapeBatch) -> SweptMotion:
    """The motion of each shape from `start` to `end` (same n shapes, row k = shape k)."""
    if len(start) != len(end):
        raise ValueError(f"start has {len(start)} shapes, end {len(end)}")
    relative = einsum_rows("nij,nkj->nik", end.rotations, start.rotations)
    quaternions = _quaternions(relative)
    vector_norm = np.linalg.norm(quaternions[:, 1:], axis=1)
    angles = 2.0 * np.arctan2(vector_norm, quaternions[:, 0])
    # R1 R0^T of equal matrices is the identity only to rounding: a shape that does not
    # turn must not get a rounding-sized angle (its pairs would then be swept too).
    angles[(end.rotations == start.rotations).all(axis=(1, 2))] = 0.0
    axes = np.divide(
        quaternions[:, 1:],
        vector_norm[:, None],
        out=np.tile([0.0, 0.0, 1.0], (len(start), 1)),
        where=vector_norm[:, None] > 0,
    )
    reach = np.linalg.norm(start.half_extents, axis=1) + start.radii
    return SweptMotion(start, end.centers - start.centers, axes, angles, reach)


def shapes_at(motion: SweptMotion, indices: np.ndarray, times: np.ndarray) -> ShapeBatch:
    """Shapes `indices` ((k,) int) at `times` ((k,) in [0, 1]) of their motion: k shapes."""
    start = motion.start
    rotations = einsum_rows(
        "nij,njk->nik",
        axis_rotations(motion.axes[indices], times * motion.angles[indices]),
        start.rotations[indices],
    )
    # Rows of a checked batch, turned by exact rotations: orthonormal already, and within
    # the bounds that `ShapeBatch` checks (a centre between two checked centres), so the
    # batch's pass over its input (a fifth of a continuous scan's time) is skipped.
    return ShapeBatch._of_batch_rows(
        kinds=start.kinds[indices],
        centers=start.centers[indices] + times[:, None] * motion.translations[indices],
        rotations=rotations,
        half_extents=start.half_extents[indices],
        radii=start.radii[indices],
    )


def swept_bounds(motion: SweptMotion) -> tuple[np.ndarray, np.ndarray]:
    """Axis-aligned bounds of each shape over its whole motion: (lo, hi), each (n, 3).

    Two bounds, both conservative, intersected: (1) the box around both end poses' bounds
    grown by theta r / 2: a point at p(0) + v turning about the moving centre stays within
    2 t (1 - t) theta r <= theta r / 2 of the straight chord (1 - t) p(0) + t p(1), which
    lies in that box; (2) the centre's path grown by r.
    """
    start = motion.start
    lo0, hi0 = start.aabbs()
    centers1 = start.centers + motion.translations
    everyone = np.arange(len(start))
    lo1, hi1 = shapes_at(motion, everyone, np.ones(len(start))).aabbs()
    growth = (0.5 * motion.angles * motion.reach)[:, None]
    lo = np.minimum(lo0, lo1) - growth
    hi = np.maximum(hi0, hi1) + growth
    reach = motion.reach[:, None]
    lo = np.maximum(lo, np.minimum(start.centers, centers1) - reach)
    hi = np.minimum(hi, np.maximum(start.centers, centers1) + reach)
    return lo, hi


@dataclass(frozen=True)
class SweptCandidates:
    """The pairs of shapes whose swept bounds come within a margin over a motion.

    lo, hi: (n, 3) `swept_bounds` of the motion's n shapes
    margin: float >= 0; pairs: (c, 2) int64, i < j, in no particular order: every pair
        whose bounds, each grown by half the margin and a rounding slack, overlap
    The bounds hold each shape's bounds at both end poses, so the pairs hold every pair
    whose bounds at either end, grown by half of at most `margin` each, overlap: a
    sample's broad phase (`broad.find_contacts`' `candidates`) and the interval's
    `swept_pairs` share one grid.
    """

    lo: np.ndarray
    hi: np.ndarray
    margin: float
    pairs: np.ndarray


def swept_candidates(
    motion: SweptMotion, margin: float, end: ShapeBatch | None = None
) -> SweptCandidates:
    """`SweptCandidates` of the motion within `margin` (negative counts as 0). `end`, the
    shapes sampled at the motion's end where they are known, have their bounds held too:
    a shape that grew or changed since the start (scaled up from nothing, as 4D
    sequencing builds elements) is larger there than the motion's start shape moved, and
    the pairs of that sample's own bounds must all be candidates."""
    lo, hi = swept_bounds(motion)
    if end is not None:
        end_lo, end_hi = end.aabbs()
        lo, hi = np.minimum(lo, end_lo), np.maximum(hi, end_hi)
    margin = max(float(margin), 0.0)
    # The end poses' bounds come from the interpolation at t = 1 here and from the sample
    # there, which may differ in the last bits: a slack far above that keeps every pair
    # whose sample bounds touch (candidates only; each use tests its own bounds again).
    scale = max(1.0, float(np.abs(lo).max(initial=0.0)), float(np.abs(hi).max(initial=0.0)))
    growth = 0.5 * margin + _CANDIDATE_SLACK * scale
    return SweptCandidates(lo, hi, margin, overlapping_bounds(lo - growth, hi + growth))


def swept_pairs(
    motion: SweptMotion, margin: float, candidates: SweptCandidates | None = None
) -> np.ndarray:
    """Every pair that moves relative to each other and can come within `margin` (may be
    negative) during the motion, and fewer others: (k, 2) int64, i < j, sorted.

    Pairs without relative motion keep the distance of the samples and are left out.
    Two conservative filters for the others: the swept bounds (`swept_bounds`, grown by
    half the margin each) overlap, found by the broad phase's grid or among `candidates`
    (`swept_candidates` of this motion within at least `margin`); and the balls of
    radius `reach` about the two centres, whose relative centre moves on a segment, come
    within `margin` (the closest point of that segment to the origin, in closed form).
    """
    growth = 0.5 * max(float(margin), 0.0)
    if candidates is None:
        lo, hi = swept_bounds(motion)
        pairs = overlapping_bounds(lo - growth, hi + growth)
    else:
        if candidates.margin < 2.0 * growth:
            raise ValueError(
                f"candidates within {candidates.margin} cannot hold the pairs within {margin}"
            )
        pairs = overlapping_among(candidates.lo - growth, candidates.hi + growth, candidates.pairs)
    first, second = pairs[:, 0], pairs[:, 1]
    start = motion.start.centers
    offset = start[second] - start[first]
    velocity = motion.translations[second] - motion.translations[first]
    speed_squared = (velocity * velocity).sum(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        closest = np.clip(-(offset * velocity).sum(axis=1) / speed_squared, 0.0, 1.0)
    closest = np.where(speed_squared > 0.0, closest, 0.0)
    nearest = np.linalg.norm(offset + closest[:, None] * velocity, axis=1)
    near = nearest - motion.reach[first] - motion.reach[second] <= margin
    # Pairs that do not move relative to each other (both still, or moving as one,
    # turning or not) keep their distance: the samples decide them.
    near &= speed_bounds(motion, pairs) > 0.0
    near[near] = ~moving_as_one(motion, pairs[near])
    pairs = pairs[near]
    return pairs[pair_order(pairs)]


def moving_as_one(motion: SweptMotion, pairs: np.ndarray) -> np.ndarray:
    """Whether each pair (k, 2) of `motion` ends where it started relative to each
    other, to within its slack (`pair_slack`): (k,) bool.

    Such a pair, parts of one assembly turning on a turntable, an arm or a door, keeps
    its distance through a rigid motion; interpolating each centre on a straight chord
    and each turn about its own centre brought turning parts closer mid-way (by the
    chord's sag: touching parts turning 2 degrees a frame met 0.15 mm deep between the
    frames, 1 cm apart turning 20 degrees met 5 mm deep). The bound: shape b's points,
    seen from shape a's frame, move by at most the change of b's centre there plus the
    change of the relative rotation (its Frobenius norm, at least its spectral one)
    times b's reach.
    """
    first, second = pairs[:, 0], pairs[:, 1]
    start, ends = motion.start, np.ones(len(pairs))

    def relative_pose(a, b):
        # b's centre and axes in a's frame: R_a^T (c_b - c_a), R_a^T R_b.
        offset = einsum_rows("kji,kj->ki", a.rotations, b.centers - a.centers)
        return offset, einsum_rows("kji,kjl->kil", a.rotations, b.rotations)

    offset0, axes0 = relative_pose(start.take(first), start.take(second))
    offset1, axes1 = relative_pose(shapes_at(motion, first, ends), shapes_at(motion, second, ends))
    moved = np.linalg.norm(offset1 - offset0, axis=1)
    turned_by = np.sqrt(((axes1 - axes0) ** 2).sum(axis=(1, 2)))
    return moved + turned_by * motion.reach[second] <= pair_slack(motion, pairs)


def pair_slack(motion: SweptMotion, pairs: np.ndarray) -> np.ndarray:
    """At least the contact epsilon at any point either shape of a pair reaches: (k,).
    A point of a shape stays within its reach of the centre, which moves on a segment."""
    start = motion.start
    centers1 = start.centers + motion.translations
    largest = np.maximum(np.abs(start.centers), np.abs(centers1)).max(axis=1, initial=0.0)
    reach = largest + motion.reach
    return CONTACT_RELATIVE * np.maximum(1.0, np.maximum(reach[pairs[:, 0]], reach[pairs[:, 1]]))


@dataclass(frozen=True)
class FirstContacts:
    """The first contact of m pairs over a motion.

    toi: (m,) time of first contact in [0, 1], NaN where the pair stays apart
    distance: (m,) signed distance at toi, at most the pair's slack inside the threshold
        but at toi 0 (NaN where apart)
    normal, point_i, point_j: (m, 3) the narrow phase's normal (from i towards j) and
        witness points at toi (NaN where apart)
    """

    toi: np.ndarray
    distance: np.ndarray
    normal: np.ndarray
    point_i: np.ndarray
    point_j: np.ndarray


def _poses(motion: SweptMotion, pairs: np.ndarray, times: np.ndarray) -> ShapeBatch:
    """The k pairs' shapes at their times: rows 0..k-1 the first, k..2k-1 the second."""
    return shapes_at(motion, pairs.T.reshape(-1), np.concatenate([times, times]))


def _distances(motion: SweptMotion, pairs: np.ndarray, times: np.ndarray):
    count = len(pairs)
    return pair_distance(
        _poses(motion, pairs, times), np.arange(count), np.arange(count, 2 * count)
    )


def _support(batch: ShapeBatch, rows: np.ndarray, directions: np.ndarray) -> np.ndarray:
    """max over each shape of x . direction: (k,) for rows (k,), directions (k, 3) unit."""
    along_axes = np.abs(einsum_rows("kij,ki->kj", batch.rotations[rows], directions))
    extent = (along_axes * batch.half_extents[rows]).sum(axis=1) + batch.radii[rows]
    return (batch.centers[rows] * directions).sum(axis=1) + extent


def _along_normals(motion, pairs, poses, normals):
    """Each pair's separation along its narrow-phase normal n and how fast it can fall.

    For any unit n, sd >= sep_n = min over b of b . n - max over a of a . n, with equality
    for the narrow phase's normal of a pair apart. sep_n falls forward in time at most
    at the rate (dc_a - dc_b) . n + theta_a r_a |n x w_a| + theta_b r_b |n x w_b| (a
    point's velocity is dc + theta w x (p - c), |p - c| <= r), and backward at most at
    -(dc_a - dc_b) . n + the same turning terms: both bounds are tight for sliding and
    grazing pairs, where the speed bound L is not.
    poses: the k pairs' ((k, 2)) shapes as `_poses` lays them out
    returns: (sep_n (k,), forward rate (k,), backward rate (k,)) per unit of motion time
    """
    count = len(pairs)
    first, second = np.arange(count), np.arange(count, 2 * count)
    separation = -_support(poses, second, -normals) - _support(poses, first, normals)
    return separation, *normal_rates(motion, pairs, normals)


def normal_rates(motion: SweptMotion, pairs: np.ndarray, normals: np.ndarray):
    """How fast the separation of each pair (k, 2) along a fixed unit normal (k, 3), from
    its first shape towards its second, can fall forward in time and backward, per unit
    of motion time (see `_along_normals`): (forward (k,), backward (k,)). It holds for
    any points that stay within each shape's reach of its centre (a mesh its proxy
    encloses)."""
    a, b = pairs[:, 0], pairs[:, 1]
    turning = motion.angles * motion.reach
    closing = ((motion.translations[a] - motion.translations[b]) * normals).sum(axis=1)
    added = turning[a] * np.linalg.norm(np.cross(normals, motion.axes[a]), axis=1)
    added += turning[b] * np.linalg.norm(np.cross(normals, motion.axes[b]), axis=1)
    return closing + added, added - closing


def _directional_steps(separation, forward, threshold, slack) -> np.ndarray:
    """Steps that keep each pair's separation along its normal (`_along_normals`:
    separation and forward rate (k,)) above threshold - slack: it stays so for
    (sep_n - threshold + slack) / rate, and for ever if the rate is <= 0.
    returns: (k,) >= 0, inf where n never closes
    """
    room = np.maximum(separation - threshold + slack, 0.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(forward > 0.0, room / forward, np.where(room > 0.0, np.inf, 0.0))


def speed_bounds(motion: SweptMotion, pairs: np.ndarray) -> np.ndarray:
    """L of each pair (k, 2) of `motion` (see the module docstring): no point of either
    shape moves relative to the other by more than L over the whole motion. (k,)"""
    first, second = pairs[:, 0], pairs[:, 1]
    relative = np.linalg.norm(motion.translations[second] - motion.translations[first], axis=1)
    turning = motion.angles * motion.reach
    return relative + turning[first] + turning[second]


def _advance(motion, pairs, threshold, slack):
    """Conservative advancement of all pairs at once: each pair goes on step by step for
    `_STEPS_BEFORE_WINDOWS` passes, then by windows of samples (see the module
    docstring). A pair's course depends on its own motion alone, not on which other
    pairs share its passes (a scan split into chunks finds what one run finds).

    returns: (lo (m,): a time before which d > threshold - slack, hi (m,): the time at
              which d <= threshold was seen, NaN where the pair stays apart over [0, 1]);
              d > threshold - slack on [lo, hi) too
    """
    count = len(pairs)
    bound = speed_bounds(motion, pairs)
    lo = np.zeros(count)
    now = np.zeros(count)
    hi = np.full(count, np.nan)
    stepping = np.arange(count)  # pairs going on step by step
    windowed = np.zeros(0, dtype=np.int64)  # pairs going on by windows
    window = np.zeros(0)  # their windows' lengths
    fractions = np.arange(_WINDOW_SAMPLES + 1) / _WINDOW_SAMPLES
    for passes in range(MAX_ADVANCE_STEPS):
        if not len(stepping) and not len(windowed):
            return lo, hi
        # One narrow-phase pass for both: the stepping pairs at their times, then every
        # windowed pair at its window's samples.
        window_times = np.minimum(now[windowed, None] + window[:, None] * fractions, 1.0)
        rows = np.concatenate([stepping, np.repeat(windowed, _WINDOW_SAMPLES + 1)])
        times = np.concatenate([now[stepping], window_times.reshape(-1)])
        poses = _poses(motion, pairs[rows], times)
        result = pair_distance(poses, np.arange(len(rows)), np.arange(len(rows), 2 * len(rows)))
        along = _along_normals(motion, pairs[rows], poses, result.normal)
        split = len(stepping)
        stepping = _step(
            threshold,
            slack,
            bound,
            stepping,
            now,
            lo,
            hi,
            result.distance[:split],
            *(values[:split] for values in along[:2]),
        )
        windowed, window = _window_step(
            threshold,
            slack,
            bound,
            windowed,
            window,
            window_times,
            now,
            lo,
            hi,
            *(values[split:].reshape(window_times.shape) for values in (result.distance, *along)),
        )
        if passes + 1 == _STEPS_BEFORE_WINDOWS:
            windowed = np.concatenate([windowed, stepping])
            window = np.concatenate([window, 1.0 - now[stepping]])
            stepping = stepping[:0]
    # Pairs still advancing are reported where they got to (see MAX_ADVANCE_STEPS).
    going = np.concatenate([stepping, windowed])
    hi[going] = now[going]
    return lo, hi


def _step(threshold, slack, bound, active, now, lo, hi, distance, separation, forward):
    """One advancement step of pairs `active` ((a,)), with their distances at `now`
    and their separations along the normals with its forward rate (`_along_normals`)
    ((a,) each); fills lo, hi and now (m,) and returns the pairs still going."""
    gap = distance - threshold[active]
    hit = gap <= 0.0
    hi[active[hit]] = now[active[hit]]
    with np.errstate(divide="ignore"):
        step = np.maximum(
            (gap + slack[active]) / bound[active],
            _directional_steps(separation, forward, threshold[active], slack[active]),
        )
    lo[active] = now[active]
    going = ~hit & (now[active] + step <= 1.0)
    active = active[going]
    now[active] += step[going]
    return active


def _window_step(
    threshold, slack, bound, active, window, times, now, lo, hi, distance, separation, *rates
):
    """One pass of pairs `active` ((a,)) going on by windows: `window` (a,) their
    lengths, `times` (a, K + 1) the samples of each window [now, now + window], and
    there (a, K + 1) each: the distances, the separations along the normals and their
    forward and backward rates (`_along_normals`); fills lo, hi and now (m,) and
    returns the pairs still going with their next windows.

    d > threshold - slack holds all over a span [t_k, t_k+1] of length h when a
    one-sided bound from either end covers it: d(t_k) - L h, or sep_n(t_k) - forward
    rate h, or sep_n(t_k+1) - backward rate h is >= threshold - slack; or when the two
    speed bounds meet above it, d(t_k) + d(t_k+1) - L h >= 2 (threshold - slack). A
    span ending at a sample within the threshold is covered up to it by the bounds from
    t_k. A pair whose spans are cleared up to a hit is done (lo = t_k, hi = t_k+1); one
    with a span not cleared goes on from its start, looking at that span alone; one
    whose whole window is cleared goes on with a window `_WINDOW_GROWTH` times longer.
    A pair sliding at a gap g from the threshold so goes on by at least 2 K g / L a
    pass, where advancement goes g / L a step.
    """
    if not len(active):
        return active, window
    gap = distance - threshold[active, None]
    floor = (threshold[active] - slack[active])[:, None]
    span = (window / _WINDOW_SAMPLES)[:, None]
    forward, backward = (np.maximum(rate, 0.0) * span for rate in rates)
    speed_room = gap + slack[active, None] - bound[active, None] * span
    step_room = np.maximum(speed_room, separation - floor - forward)
    both_room = np.maximum(
        np.maximum(gap[:, :-1] + slack[active, None] + speed_room[:, 1:], step_room[:, :-1]),
        separation[:, 1:] - floor - backward[:, 1:],
    )
    lo_at, hi_at, resume, zoom = _window_outcome(gap, step_room, both_room)
    rows = np.arange(len(active))
    decided = hi_at >= 0
    lo[active] = times[rows, np.where(decided, lo_at, resume)]
    hi[active[decided]] = times[rows[decided], hi_at[decided]]
    now[active] = times[rows, resume]
    window = np.where(zoom, window / _WINDOW_SAMPLES, window * _WINDOW_GROWTH)
    window = np.minimum(window, 1.0 - now[active])
    going = ~decided & (zoom | (now[active] < 1.0))
    return active[going], window[going]


def _window_outcome(gap, step_room, both_room):
    """What one pass of `_window_step` tells each of a pairs.

    gap: (a, K + 1) d - threshold at the samples
    step_room: (a, K + 1) >= 0 where a one-sided bound from that sample covers the span
        after it (up to its end)
    both_room: (a, K) >= 0 where the span is cleared
    returns: lo_at, hi_at (a,): sample indices of a decided pair's bracket (hi_at -1
             where undecided; both 0 for a pair within the threshold at the start);
             resume (a,): the sample an undecided pair goes on from; zoom (a,): it goes on
             within the one span after it (else past a window wholly cleared)
    """
    samples = gap.shape[1]
    hit = gap <= 0.0
    first_hit = np.where(hit.any(axis=1), np.argmax(hit, axis=1), samples)
    # the spans before the hit's span, or all of them without a hit, must be cleared
    blocked = (both_room < 0.0) & (np.arange(samples - 1) < first_hit[:, None] - 1)
    first_blocked = np.where(blocked.any(axis=1), np.argmax(blocked, axis=1), samples - 1)
    hit_span = np.maximum(first_hit - 1, 0)
    rows = np.arange(len(gap))
    reaches_hit = (first_hit < samples) & (first_blocked >= hit_span)
    covered = reaches_hit & ((first_hit == 0) | (step_room[rows, hit_span] >= 0.0))
    lo_at = np.where(covered, hit_span, -1)
    hi_at = np.where(covered, first_hit, -1)
    resume = np.where(reaches_hit, hit_span, first_blocked)
    zoom = ~covered & ((first_hit < samples) | (first_blocked < samples - 1))
    return lo_at, hi_at, resume, zoom


def _bisect(motion, pairs, threshold, lo, hi, time_accuracy):
    """Shrink brackets [lo, hi] with d(lo) > threshold, d(hi) <= threshold to width
    <= time_accuracy ((m,)), keeping that sign pattern: the new hi, (m,)."""
    lo, hi = lo.copy(), hi.copy()
    open_rows = np.flatnonzero(hi - lo > time_accuracy)
    while len(open_rows):
        middle = 0.5 * (lo[open_rows] + hi[open_rows])
        gap = _distances(motion, pairs[open_rows], middle).distance - threshold[open_rows]
        inside = gap <= 0.0
        hi[open_rows[inside]] = middle[inside]
        lo[open_rows[~inside]] = middle[~inside]
        open_rows = open_rows[hi[open_rows] - lo[open_rows] > time_accuracy[open_rows]]
    return hi


def first_contacts(
    start: ShapeBatch, end: ShapeBatch, pairs, threshold, time_accuracy=1e-4
) -> FirstContacts:
    """The first time each pair's signed distance is <= threshold as its shapes move from
    `start` to `end` (see the module docstring for the motion, the bound and accuracy).

    start, end: the same n shapes at t = 0 and t = 1
    pairs: (m, 2) int indices
    threshold: (m,) or scalar, e.g. tolerance + contact epsilon (`core.contact`)
    time_accuracy: > 0, (m,) or scalar, width in t of the final bracket
    returns: FirstContacts of the m pairs; a pair within threshold at t = 0 has toi 0
    """
    return motion_contacts(swept_motion(start, end), pairs, threshold, time_accuracy)


def motion_contacts(motion: SweptMotion, pairs, threshold, time_accuracy=1e-4) -> FirstContacts:
    """`first_contacts` of pairs of `motion`'s shapes (`swept_motion`, or several joined
    by `join_motions`, each pair within one of them)."""
    pairs = np.asarray(pairs, dtype=np.int64).reshape(-1, 2)
    threshold = np.broadcast_to(np.asarray(threshold, dtype=np.float64), (len(pairs),))
    time_accuracy = np.broadcast_to(np.asarray(time_accuracy, dtype=np.float64), (len(pairs),))
    if not (time_accuracy > 0).all():
        raise ValueError(f"time_accuracy must be > 0, got {time_accuracy.min()}")
    slack = pair_slack(motion, pairs)
    lo, hi = _advance(motion, pairs, threshold, slack)
    found = np.flatnonzero(np.isfinite(hi))
    hi_found = _bisect(
        motion, pairs[found], threshold[found], lo[found], hi[found], time_accuracy[found]
    )
    count = len(pairs)
    toi = np.full(count, np.nan)
    toi[found] = hi_found
    distance = np.full(count, np.nan)
    normal, point_i, point_j = (np.full((count, 3), np.nan) for _ in range(3))
    if len(found):
        result = _distances(motion, pairs[found], hi_found)
        distance[found] = result.distance
        normal[found], point_i[found], point_j[found] = (
            result.normal,
            result.point_i,
            result.point_j,
        )
    return FirstContacts(toi, distance, normal, point_i, point_j)
