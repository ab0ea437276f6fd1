"""Box-box SAT and closest points, component-major for speed.

Arrays here are (3, m) vectors and (3, 3, m) matrices: every arithmetic step is then
a pass over long contiguous rows, several times faster in numpy than the same maths
on (m, 3, 3) stacks (whose small inner dimensions defeat einsum and matmul).
Everything is in box a's frame: a is axis-aligned at the origin.
"""

from __future__ import annotations

import numpy as np

from .constants import PARALLEL_CROSS_NORM

# Rows/columns k+1 and k+2 (cyclic) of a 3-index, for the edge x edge axes.
_NEXT = np.array([1, 2, 0])
_AFTER_NEXT = np.array([2, 0, 1])

# Separated pairs whose gap (an upper bound) is within this, relative to 1 + gap,
# of a lower bound are exact to it and skip the closest-feature search.
BOUND_GAP_TOLERANCE = 1e-12
# Alternating projections tried before that search: most pairs of separated boxes
# settle on their closest features within a few; the slow ones get more.
PROJECTION_STEPS = 4
MORE_PROJECTION_STEPS = 16


def relative_frame(axes_a, centers_a, axes_b, centers_b):
    """Box b in box a's frame.

    axes_*: (3, 3, m), [component, axis, pair]; centers_*: (3, m)
    returns: relative (3, 3, m) with relative[k, l] = a_k . b_l, offset (3, m) = b's centre
    """
    relative = (
        axes_a[0, :, None, :] * axes_b[0, None, :, :]
        + axes_a[1, :, None, :] * axes_b[1, None, :, :]
        + axes_a[2, :, None, :] * axes_b[2, None, :, :]
    )
    return relative, apply_transposed(axes_a, centers_b - centers_a)


def apply(matrix: np.ndarray, vectors: np.ndarray) -> np.ndarray:
    """matrix @ vector per pair: (3, 3, m), (3, m) -> (3, m)."""
    return matrix[:, 0] * vectors[0] + matrix[:, 1] * vectors[1] + matrix[:, 2] * vectors[2]


def apply_transposed(matrix: np.ndarray, vectors: np.ndarray) -> np.ndarray:
    """matrix^T @ vector per pair: (3, 3, m), (3, m) -> (3, m)."""
    return matrix[0] * vectors[0] + matrix[1] * vectors[1] + matrix[2] * vectors[2]


def separations(relative, offset, half_a, half_b):
    """Separation along each of the 15 SAT axes, RTCD 4.4.1 in closed form.

    relative (3, 3, m), offset (3, m), half_a, half_b (3, m)
    returns: (15, m): > 0 a gap along that axis, <= 0 minus the overlap; -inf for the
    cross axes of parallel edges. Rows: a's faces (3), b's faces (3), a_k x b_l (9).
    Cross-axis lengths come from the other two entries of column l (b_l is a unit
    vector), which stays accurate for near-parallel edges where sqrt(1 - R_kl^2) would not.
    """
    absolute = np.abs(relative)
    face_a = np.abs(offset) - half_a - apply(absolute, half_b)
    face_b = (
        np.abs(apply_transposed(relative, offset)) - apply_transposed(absolute, half_a) - half_b
    )
    radius_a = (
        half_a[_NEXT, None] * absolute[_AFTER_NEXT] + half_a[_AFTER_NEXT, None] * absolute[_NEXT]
    )
    radius_b = (
        half_b[None, _NEXT] * absolute[:, _AFTER_NEXT]
        + half_b[None, _AFTER_NEXT] * absolute[:, _NEXT]
    )
    projected = (
        offset[_AFTER_NEXT, None] * relative[_NEXT] - offset[_NEXT, None] * relative[_AFTER_NEXT]
    )
    lengths = np.hypot(relative[_NEXT], relative[_AFTER_NEXT])
    # Skipping the axis n = a_k x b_l / s, s = |a_k x b_l| <= PARALLEL_CROSS_NORM, is safe.
    # n is perpendicular to a_k, so its separation is that of the boxes' projections on
    # the plane P perpendicular to a_k: a's rectangle and b's hexagon, which is the
    # parallelogram P(b) of b's other two axes b_j, b_j' widened by b_l's projection, a
    # segment of half-length e = half_b[l] * s. P(b)'s edge normals and the rectangle's are
    # kept axes: a_k x b_j and a_k x b_j' (length >= sqrt(1 - s^2), as b_j is perpendicular
    # to b_l) and a's other faces. Dropping the widening changes every support by <= e.
    # Overlapping boxes: either the rectangle and P(b) are disjoint, and the 2-D SAT finds
    # a kept axis with separation > -e, or they overlap and their depth (the smallest over
    # their edge normals, all kept) is at most the depth along n, itself at most that of
    # the hexagon; either way the kept axes give a depth at most e more than n's. Separated
    # boxes: the kept axes are a lower bound of the gap as before, positive unless the gap
    # is under sqrt(2) e (a kept normal lies within 45 degrees of the direction to the
    # nearest point, as consecutive kept normals are at most 90 degrees apart). Projecting
    # along b_l instead gives half_a[k] * s. So skipping can only deepen an overlap or
    # shrink a gap, by at most s times a half-extent; it never hides a contact.
    valid = lengths > PARALLEL_CROSS_NORM
    with np.errstate(divide="ignore", invalid="ignore"):
        cross = np.where(valid, (np.abs(projected) - radius_a - radius_b) / lengths, -np.inf)
    return np.concatenate([face_a, face_b, cross.reshape(9, -1)])


def best_axis(relative, offset, separation_rows):
    """The separating (or least-overlapping) axis: (separation (m,), unit axis (3, m)).

    The axis is in a's frame and points from a to b.
    """
    best = np.argmax(separation_rows, axis=0)
    m = separation_rows.shape[1]
    pairs = np.arange(m)
    separation = separation_rows[best, pairs]
    face_k = np.where(best < 3, best, (best - 6) // 3).clip(0, 2)
    column_l = np.where(best < 6, best - 3, (best - 6) % 3).clip(0, 2)
    column = relative[:, column_l, pairs]  # (3, m): b_l in a's frame
    basis = np.eye(3)[:, face_k]  # (3, m): e_k
    crossed = np.cross(basis, column, axis=0)
    axis = np.where(best < 3, basis, np.where(best < 6, column, crossed))
    axis /= np.sqrt((axis * axis).sum(axis=0))
    axis *= np.where((axis * offset).sum(axis=0) < 0, -1.0, 1.0)
    return separation, axis


def support_b(relative, offset, half_b, direction):
    """Point of box b furthest along `direction` (a's frame, (3, m)), face centre on ties."""
    return offset + apply(relative, np.sign(apply_transposed(relative, direction)) * half_b)


def closest_by_projections(relative, offset, half_a, half_b, start=None, steps=PROJECTION_STEPS):
    """Closest points of boxes by alternating projections, with a certificate.

    Starts from `start` (a point (3, m) in a's frame; default b's centre) and projects
    `steps` times back and forth (each projection is a clamp in a box frame). The gap
    direction n of the final pair gives a lower bound, the separation of the boxes'
    projections on n; where it meets the gap the pair is optimal (by duality) and the
    gap exact. Overlapping boxes end with gap 0, not certified.
    returns: gap (m,), x on a, y on b (3, m) in a's frame, certified (m,) bool
    """
    y = offset if start is None else start
    for _ in range(steps):
        x = np.clip(y, -half_a, half_a)
        local_b = np.clip(apply_transposed(relative, x - offset), -half_b, half_b)
        y = offset + apply(relative, local_b)
    x = np.clip(y, -half_a, half_a)
    gap_vector = y - x
    gap = np.sqrt((gap_vector * gap_vector).sum(axis=0))
    with np.errstate(divide="ignore", invalid="ignore"):
        normal = np.where(gap > 0, gap_vector / gap, 0.0)
    lower = (
        (normal * offset).sum(axis=0)
        - (np.abs(apply_transposed(relative, normal)) * half_b).sum(axis=0)
        - (np.abs(normal) * half_a).sum(axis=0)
    )
    certified = (gap > 0) & (gap - lower <= BOUND_GAP_TOLERANCE * (1.0 + gap))
    return gap, x, y, certified
