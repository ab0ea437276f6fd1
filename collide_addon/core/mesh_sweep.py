"""Continuous detection on triangle meshes: the first time between two poses at which
two moving meshes come within a threshold, by conservative advancement on their exact
mesh distance (`mesh.mesh_contacts`), vectorised over pairs.

Motion. Each mesh moves with its proxy (`continuous.SweptMotion`): its points turn
about the proxy's centre by the proxy's rotation and move with the centre,

    x(t) = c(t) + Rot(w, t theta) (x(0) - c(0))

so a mesh placed at t = 0 by its world matrix M0 is placed at t by A(t) M0, A(t) that
rigid motion. A mesh that deforms or is stretched differently between the two samples
is swept with the shape it is given.

Bound. The proxy encloses its mesh, so every point of the mesh lies within the proxy's
reach r of its centre, and `continuous`' bound holds for the meshes: over [t, t + s]
their distance changes by at most s L, L = |relative translation| + theta_a r_a +
theta_b r_b. So from a time t at which d(t) is above the threshold, d stays above
threshold - slack for (d(t) - threshold + slack) / L (the advancement step), and
between two times a and b at which d is known it stays above (d(a) + d(b) - L (b - a))
/ 2. The distance is the exact minimum distance between the triangle sets while they
are apart, so the bound holds there; once they penetrate, `mesh_contacts` gives minus a
depth, whose rate of change the bound is taken to hold for too.

Normals. L counts every turn at the proxy's full reach and every move in every
direction. Along the unit normal n from the witness point on the first mesh to the one
on the second (the meshes apart), their vertex sets' separation (the least of the
second's projections on n less the greatest of the first's) is a lower bound of their
distance while positive, and falls at most at the rate the motion closes along n
(`continuous.normal_rates`): a pair sliding past another or turning beside it clears
far longer than the advancement step that way, and the longer of the two is taken.

Windows. A pair that comes close to the threshold without crossing it (a corner turning
past a wall) would advance by ever shorter steps. Each pass measures a window of times
in one `mesh_contacts` call (`_FIRST_WINDOW`, doubled each pass up to `_WINDOW_SAMPLES`):
the step, then times spread geometrically up to a span that grows while windows come
out cleared and shrinks to where one stops. Any sample within the threshold bounds the
first contact, and the windows then close in on it; a hit whose stretch from the sample
before is cleared is the first contact.

Cost. Each pass is one `mesh_contacts` call over the windows of the pairs still
advancing, each sample measured exactly only as far as its pair's bound could close over
its window's longest stretch (farther, that reach is a lower bound, all a step needs), so
that a slow pair's triangles are not walked as far as the fastest pair's. A pair that
slides along another within a hair of the threshold clears little per pass: one with no
contact seen that clears less than a quarter of its share of `MESH_ADVANCE_STEPS` passes
in a pass, or is still advancing after them, is returned undecided (the caller names it
rather than guess). A pair whose passes run out after a contact was seen keeps that
contact (the first lies between its `cleared` time and it).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from .columns import dot_rows, einsum_rows, take_fields
from .continuous import SweptMotion, axis_rotations, normal_rates, pair_slack, speed_bounds
from .mesh import TriangleMesh, mesh_contacts

# Passes (one `mesh_contacts` call each) before the pairs still advancing are given up
# on: a fast part passing through another takes a few (each step covers the distance
# the meshes are apart), a part sliding along another within a hair of the threshold
# would take thousands.
MESH_ADVANCE_STEPS = 24


@dataclass(frozen=True)
class MeshFirstContacts:
    """The first contact of m mesh pairs over a motion.

    toi: (m,) time in [0, 1] at which the pair was first seen within the threshold, NaN
        where it stays beyond it over [0, 1] or is undecided
    distance: (m,) the pair's signed mesh distance at toi (NaN where no toi)
    point_i, point_j: (m, 3) the meshes' witness points at toi (NaN where no toi)
    relation: (m,) int8 the pair's mesh relation at toi (`mesh.APART` ...; -1 where no toi)
    cleared: (m,) the time up to which the pair is known to stay beyond its threshold
        less the slack: toi (to within the time accuracy) where the windows closed in on
        the first contact, less where they ran out first (a contact at toi, the first
        in [cleared, toi]); 1 where the pair stays beyond the threshold
    undecided: (m,) bool, advancement gave up on the pair after `MESH_ADVANCE_STEPS`
        windows without seeing it within the threshold: it may or may not come within it
    """

    toi: np.ndarray
    distance: np.ndarray
    point_i: np.ndarray
    point_j: np.ndarray
    relation: np.ndarray
    cleared: np.ndarray
    undecided: np.ndarray


def moved_matrices(
    motion: SweptMotion, matrices: np.ndarray, rows: np.ndarray, times: np.ndarray
) -> np.ndarray:
    """World matrices (k, 4, 4) of the meshes of shapes `rows` (k,) of `motion` at
    `times` (k,): each placed at t = 0 by its row of `matrices` ((n, 4, 4), row k = shape
    k), then moved as its proxy moves."""
    start = motion.start.centers[rows]
    turns = axis_rotations(motion.axes[rows], times * motion.angles[rows])
    centers = start + times[:, None] * motion.translations[rows]
    rigid = np.zeros((len(rows), 4, 4))
    rigid[:, :3, :3] = turns
    rigid[:, :3, 3] = centers - einsum_rows("kij,kj->ki", turns, start)
    rigid[:, 3, 3] = 1.0
    return einsum_rows("kij,kjl->kil", rigid, matrices[rows])


def _posed_sides(motion, matrices, pairs, times):
    """Each pair's (k, 2) two meshes placed at its time (k,): their rows of `motion`, the
    first sides then the second ((2k,)), and their world matrices there (2k, 4, 4)."""
    sides = np.concatenate([pairs[:, 0], pairs[:, 1]])
    return sides, moved_matrices(motion, matrices, sides, np.concatenate([times, times]))


def _mesh_distances(meshes, matrices, motion, pairs, times, reach):
    """`mesh_contacts` of each pair (k, 2) of `motion`'s rows with its meshes moved to
    its time (k,), measured exactly up to its `reach` (k,): a pair farther apart comes
    out at its reach, a lower bound of its distance (not +inf, which would let the next
    step from it run to the end of the motion), with no witness points."""
    count = len(pairs)
    sides, posed = _posed_sides(motion, matrices, pairs, times)
    local = np.arange(count)
    reach = np.maximum(reach, 0.0)
    found = mesh_contacts(
        [meshes[row] for row in sides.tolist()],
        posed,
        np.stack([local, local + count], axis=1),
        reach,
    )
    return dataclasses.replace(
        found, distance=np.where(np.isfinite(found.distance), found.distance, reach)
    )


def mesh_first_contacts(
    meshes: Sequence[TriangleMesh],
    matrices,
    motion: SweptMotion,
    pairs,
    threshold,
    time_accuracy: float = 1e-4,
    max_steps: int = MESH_ADVANCE_STEPS,
) -> MeshFirstContacts:
    """The first time each pair's meshes come within its threshold as they move.

    meshes: n `TriangleMesh`, row k = shape k of `motion` (the same mesh may repeat)
    matrices: (n, 4, 4) the meshes' world matrices at t = 0
    motion: the n shapes' `SweptMotion` (their proxies, which enclose the meshes)
    pairs: (m, 2) int64 rows of motion
    threshold: (m,) or scalar signed distance at which a pair counts (minus a depth for
        penetration)
    time_accuracy: > 0, how far after the first contact toi may be
    max_steps: passes before a pair not seen within its threshold is undecided
    returns: `MeshFirstContacts`; a pair within its threshold at t = 0 has toi 0. A toi
        has d(toi) <= threshold, and d > threshold - slack on [0, cleared) (slack:
        `continuous.pair_slack`), cleared >= toi - time_accuracy unless the windows ran
        out first

    Each pair advances by windows of times measured in one call (see the module
    docstring): the first is its advancement step from the time t it is known to be
    cleared to, the longer of (d(t) - threshold + slack) / L and the normal's, the
    others spread up to a span that grows while windows come out cleared. A stretch
    between two samples is cleared when the speed bound from either end keeps d above
    threshold - slack; a sample within the threshold bounds the first contact, and the
    windows then close in on it.
    """
    matrices = np.asarray(matrices, dtype=np.float64).reshape(-1, 4, 4)
    pairs = np.asarray(pairs, dtype=np.int64).reshape(-1, 2)
    threshold = np.broadcast_to(np.asarray(threshold, dtype=np.float64), (len(pairs),))
    if len(matrices) != len(meshes) or len(meshes) != len(motion.start):
        raise ValueError(
            f"{len(meshes)} meshes, {len(matrices)} matrices and {len(motion.start)} shapes"
        )
    if not time_accuracy > 0:
        raise ValueError(f"time_accuracy must be > 0, got {time_accuracy}")
    count = len(pairs)
    slack = pair_slack(motion, pairs)
    bound = speed_bounds(motion, pairs)
    # Farther apart than the pair can close over the whole motion: beyond its threshold
    # throughout, whatever the exact distance.
    reach = threshold + bound + slack
    contacts = _Contacts(count)
    at_start = _mesh_distances(meshes, matrices, motion, pairs, np.zeros(count), reach)
    within = np.flatnonzero(at_start.distance <= threshold)
    contacts.offer(within, np.zeros(len(within)), at_start, within)
    cleared, cleared_distance = np.zeros(count), at_start.distance.copy()
    cleared_normal = _witness_normals(at_start)
    span = np.ones(count)
    active = np.setdiff1d(np.flatnonzero(bound > 0.0), within)
    given_up = [np.zeros(0, dtype=np.int64)]
    for attempt in range(max_steps):
        if not len(active):
            break
        # Most pairs are decided by a first window of a few samples; those left need
        # finer ones.
        width = min(_FIRST_WINDOW << attempt, _WINDOW_SAMPLES)
        powers = np.arange(1, width) / (width - 1)
        lo, distance = cleared[active], cleared_distance[active]
        margin = threshold[active] - slack[active]
        speed = bound[active]
        end = np.minimum(np.minimum(contacts.toi[active], 1.0), lo + span[active])
        step = np.maximum(
            (distance - margin) / speed,
            _directional_steps(
                meshes, matrices, motion, pairs[active], lo, cleared_normal[active], margin
            ),
        )
        times = np.empty((len(active), width))
        times[:, 0] = np.minimum(lo + step, end)
        # The others spread geometrically from the step to the window's end: stretches
        # about as long as the step near the pair's cleared time, where the bound clears
        # stretches of about twice the step, and longer beyond.
        reached = np.maximum(times[:, 0] - lo, 1e-300)
        ratio = np.maximum((end - lo) / reached, 1.0)
        times[:, 1:] = lo[:, None] + reached[:, None] * ratio[:, None] ** powers
        times[:, 1:] = np.minimum(times[:, 1:], end[:, None])
        # Samples at the window's end repeat where the step reaches it (a pair far
        # apart): each distinct one is measured once.
        distinct = np.ones(times.shape, dtype=bool)
        distinct[:, 1:] = times[:, 1:] > times[:, :-1]
        measured = np.flatnonzero(distinct.ravel())
        # A sample farther apart than the bound covers over the window's longest
        # stretch clears the stretches on either side of it whatever its distance: each
        # pair is measured up to that reach of its own (on bench_continuous_blender's
        # scene, 1.7 times faster than all up to the largest).
        longest = np.diff(np.column_stack([lo, times]), axis=1).max(axis=1)
        found = _mesh_distances(
            meshes,
            matrices,
            motion,
            np.repeat(pairs[active], width, axis=0)[measured],
            times.ravel()[measured],
            np.repeat(margin + speed * longest + 2.0 * slack[active], width)[measured],
        )
        # Each sample's row of `found`: a repeat takes the last distinct one before it.
        source = np.maximum.accumulate(np.where(distinct.ravel(), np.arange(times.size), 0))
        found = take_fields(found, np.searchsorted(measured, source))
        samples = found.distance.reshape(times.shape)
        before = np.column_stack([lo, times[:, :-1]])
        before_distance = np.column_stack([distance, samples[:, :-1]])
        gap = times - before
        # Either end's bound keeps d above threshold - slack over the stretch.
        clear = (before_distance - speed[:, None] * gap >= margin[:, None]) | (
            before_distance + samples - speed[:, None] * gap >= 2.0 * margin[:, None]
        )
        # The first sample is the advancement step (or short of it): cleared by the
        # bound, whatever rounding says of it.
        clear[:, 0] = True
        hit = samples <= threshold[active][:, None]
        stop = ~clear | hit
        # The samples up to the first stop are cleared to, and a hit there brackets.
        first = np.where(stop.any(axis=1), stop.argmax(axis=1), width)
        rows = np.arange(len(active))
        last = np.maximum(first - 1, 0)
        moved = first > 0
        cleared[active[moved]] = times[rows[moved], last[moved]]
        cleared_distance[active[moved]] = samples[rows[moved], last[moved]]
        cleared_normal[active[moved]] = _witness_normals(found)[rows[moved] * width + last[moved]]
        # Any sample within the threshold is a contact: the earliest bounds the first.
        seen = hit.any(axis=1)
        slots = rows[seen] * width + hit[seen].argmax(axis=1)
        contacts.offer(active[seen], times.ravel()[slots], found, slots)
        bracketed = (first < width) & hit[rows, np.minimum(first, width - 1)]
        # A window cleared to its end grows; one stopped early shrinks to the stop.
        whole = first == width
        stopped = times[rows, np.minimum(first, width - 1)]
        span[active] = np.where(whole, 4.0 * span[active], np.maximum(stopped - lo, 0.0))
        # A hit whose stretch is cleared is the first contact: d > threshold - slack
        # everywhere before it.
        entered = np.zeros(len(active), dtype=bool)
        entered[bracketed] = clear[rows[bracketed], first[bracketed]]
        cleared[active[entered]] = times[rows[entered], first[entered]]
        done = (
            entered
            | (cleared[active] >= 1.0)
            | (contacts.toi[active] - cleared[active] <= time_accuracy)
        )
        # A pair with no contact seen that cleared this little in a whole window could
        # not finish in the passes left (one sliding along another within a hair):
        # given up on now, rather than after every pass.
        stalled = (
            (width == _WINDOW_SAMPLES)
            & ~np.isfinite(contacts.toi[active])
            & (cleared[active] - lo < 1.0 / (4.0 * max_steps))
        )
        given_up.append(active[stalled & ~done])
        active = active[~done & ~stalled]
    # Pairs still advancing with a contact seen keep it (they come within the threshold
    # there, maybe a little earlier); the others are undecided.
    undecided = np.zeros(count, dtype=bool)
    undecided[active[~np.isfinite(contacts.toi[active])]] = True
    undecided[np.concatenate(given_up)] = True
    return MeshFirstContacts(
        contacts.toi_or_nan(),
        contacts.distance,
        contacts.point_i,
        contacts.point_j,
        contacts.relation,
        np.minimum(cleared, 1.0),
        undecided,
    )


def _witness_normals(found) -> np.ndarray:
    """Unit normals (k, 3) from each pair's witness point on its first mesh to the one on
    its second, where `found` (`mesh_contacts`' result) has them apart; NaN elsewhere."""
    offsets = found.point_j - found.point_i
    lengths = np.sqrt(dot_rows(offsets, offsets))
    apart = (found.distance > 0.0) & (lengths > 0.0)
    normals = np.full(offsets.shape, np.nan)
    normals[apart] = offsets[apart] / lengths[apart, None]
    return normals


def _directional_steps(meshes, matrices, motion, pairs, times, normals, margin) -> np.ndarray:
    """For each pair (k, 2) at its time (k,), how long the two meshes stay apart along
    its unit normal (k, 3, NaN where none) by more than max(margin, 0) (k,): their vertex
    sets' separation along it (every point of the second mesh's hull beyond every point
    of the first's) over the rate at which it can fall (`continuous.normal_rates`), a
    lower bound of their distance. Far longer than the speed bound's step for a pair
    sliding past another or turning beside it. 0 where it gives nothing. (k,)"""
    steps = np.zeros(len(pairs))
    usable = np.flatnonzero(np.isfinite(normals).all(axis=1))
    if not len(usable):
        return steps
    pairs, times, normals = pairs[usable], times[usable], normals[usable]
    count = len(pairs)
    sides, posed = _posed_sides(motion, matrices, pairs, times)
    # The first mesh's support along n, the second's along -n (minus its least along n).
    directions = np.concatenate([normals, -normals])
    local = einsum_rows("kji,kj->ki", posed[:, :3, :3], directions)
    vertex_sets = [meshes[row].vertices for row in sides.tolist()]
    counts = np.array([len(vertices) for vertices in vertex_sets])
    owner = np.repeat(np.arange(len(sides)), counts)
    values = dot_rows(np.concatenate(vertex_sets), local[owner])
    starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
    support = np.maximum.reduceat(values, starts) + dot_rows(posed[:, :3, 3], directions)
    separation = -support[count:] - support[:count]
    room = separation - np.maximum(margin[usable], 0.0)
    forward, _ = normal_rates(motion, pairs, normals)
    with np.errstate(divide="ignore", invalid="ignore"):
        steps[usable] = np.where(room > 0.0, np.where(forward > 0.0, room / forward, np.inf), 0.0)
    return steps


# Times measured in one window of `mesh_first_contacts`.
_WINDOW_SAMPLES = 8
# Times measured in a pair's first window (doubled each pass up to `_WINDOW_SAMPLES`):
# on bench_continuous_blender.py's moving scene (2,000 objects, 20 frames) half the
# pairs of the first pass were decided by it, measured 16 times each before; windows of
# at most 8 then took 2,523 measures in all against 3,067 with 16.
_FIRST_WINDOW = 4


class _Contacts:
    """The earliest contact seen of each of `count` pairs: its time (inf while none)
    and `mesh_contacts` fields there."""

    def __init__(self, count: int) -> None:
        self.toi = np.full(count, np.inf)
        self.distance = np.full(count, np.nan)
        self.point_i = np.full((count, 3), np.nan)
        self.point_j = np.full((count, 3), np.nan)
        self.relation = np.full(count, -1, dtype=np.int8)

    def offer(self, rows, times, found, slots) -> None:
        """Pairs `rows` (k,) within the threshold at `times` (k,), `found`'s rows `slots`
        (k,) their contacts there: kept where earlier."""
        earlier = times < self.toi[rows]
        rows, times, picked = rows[earlier], times[earlier], slots[earlier]
        self.toi[rows] = times
        self.distance[rows] = found.distance[picked]
        self.point_i[rows], self.point_j[rows] = found.point_i[picked], found.point_j[picked]
        self.relation[rows] = found.relation[picked]

    def toi_or_nan(self) -> np.ndarray:
        return np.where(np.isfinite(self.toi), self.toi, np.nan)
