"""Box-box SAT and closest points, component-major for speed.

Arrays here are (3, m) vectors and (3, 3, m) matrices: every arithmetic step is then
a pass over long contiguous rows, several times faster in numpy than the same maths
on (m, 3, 3) stacks (whose small inner dimensions defeat einsum and matmul).
Everything is in box a's frame: a is axis-aligned at the origin.
"""

from __future__ import annotations

import numpy as np

from .columns import einsum_rows
from .constants import CUBE_CORNER_SIGNS, PARALLEL_CROSS_NORM

# Rows/columns k+1 and k+2 (cyclic) of a 3-index, for the edge x edge axes.
_NEXT = np.array([1, 2, 0])
_AFTER_NEXT = np.array([2, 0, 1])

# Weights 16..1 of up to 16 rows: the largest weight among the rows reaching an extreme
# is the first of them.
_FIRST_ROW_WINS = np.arange(16, 0, -1, dtype=np.uint8)[:, None]

# Candidate closest points whose gap (an upper bound) is within this, relative to
# 1 + gap, of a lower bound are exact to it: certified, they skip the exhaustive search.
BOUND_GAP_TOLERANCE = 1e-12
# Alternating projections for the pairs SAT calls (nearly) touching, which may hide a
# tiny gap: most settle within a few steps; the slow ones get more.
PROJECTION_STEPS = 4
MORE_PROJECTION_STEPS = 16


def relative_frame(axes_a, centers_a, axes_b, centers_b):
    """Box b in box a's frame.

    axes_*: (3, 3, m), [component, axis, pair]; centers_*: (3, m)
    returns: relative (3, 3, m) with relative[k, l] = a_k . b_l, offset (3, m) = b's centre
    """
    # einsum on the pair axis last: it sums the three products in the same order as the
    # written-out sum, several times faster than broadcasting (3, 1, m) by (1, 3, m).
    relative = einsum_rows("ckm,clm->klm", axes_a, axes_b)
    return relative, apply_transposed(axes_a, centers_b - centers_a)


def apply(matrix: np.ndarray, vectors: np.ndarray) -> np.ndarray:
    """matrix @ vector per pair: (3, 3, m), (3, m) -> (3, m)."""
    return einsum_rows("klm,lm->km", matrix, vectors)


def apply_transposed(matrix: np.ndarray, vectors: np.ndarray) -> np.ndarray:
    """matrix^T @ vector per pair: (3, 3, m), (3, m) -> (3, m)."""
    return einsum_rows("klm,km->lm", matrix, vectors)


def separations(relative, offset, half_a, half_b):
    """Separation along each of the 15 SAT axes, RTCD 4.4.1 in closed form.

    relative (3, 3, m), offset (3, m), half_a, half_b (3, m)
    returns: (15, m): > 0 a gap along that axis, <= 0 minus the overlap; -inf for the
    cross axes of parallel edges. Rows: a's faces (3), b's faces (3), a_k x b_l (9).
    Cross-axis lengths come from the other two entries of column l (b_l is a unit
    vector), which stays accurate for near-parallel edges where sqrt(1 - R_kl^2) would not.
    """
    m = relative.shape[-1]
    absolute = np.abs(relative)
    # Written into one output with in-place steps: at a few thousand pairs a chunk, fresh
    # temporaries for every step cost as much as the arithmetic.
    rows = np.empty((15, m))
    face_a = rows[0:3]
    np.abs(offset, out=face_a)
    face_a -= half_a
    face_a -= apply(absolute, half_b)
    face_b = rows[3:6]
    np.abs(apply_transposed(relative, offset), out=face_b)
    face_b -= apply_transposed(absolute, half_a)
    face_b -= half_b
    cross = rows[6:].reshape(3, 3, m)
    half_b_next, half_b_after = half_b[_NEXT], half_b[_AFTER_NEXT]
    radius = np.empty((3, m))
    scratch = np.empty((3, m))
    lengths = np.empty((3, m))
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
    # One row k of a's axes at a time, in (3, m) buffers: rows k+1 and k+2 are contiguous
    # slices, and the buffers stay in the core's cache where (3, 3, m) temporaries would not.
    for k in range(3):
        k_next, k_after = _NEXT[k], _AFTER_NEXT[k]
        row = cross[k]
        np.multiply(relative[k_next], offset[k_after], out=row)
        np.multiply(relative[k_after], offset[k_next], out=scratch)
        row -= scratch
        np.abs(row, out=row)
        # a's radius on a_k x b_l: half_a[k+1] |R[k+2, l]| + half_a[k+2] |R[k+1, l]|.
        np.multiply(absolute[k_after], half_a[k_next], out=radius)
        np.multiply(absolute[k_next], half_a[k_after], out=scratch)
        radius += scratch
        row -= radius
        # b's radius on a_k x b_l: half_b[l+1] |R[k, l+2]| + half_b[l+2] |R[k, l+1]|.
        np.take(absolute[k], _AFTER_NEXT, axis=0, out=radius)
        radius *= half_b_next
        np.take(absolute[k], _NEXT, axis=0, out=scratch)
        scratch *= half_b_after
        radius += scratch
        row -= radius
        np.multiply(relative[k_next], relative[k_next], out=lengths)
        np.multiply(relative[k_after], relative[k_after], out=scratch)
        lengths += scratch
        np.sqrt(lengths, out=lengths)
        valid = lengths > PARALLEL_CROSS_NORM
        np.divide(row, lengths, out=row, where=valid)
        row[~valid] = -np.inf
    return rows


def best_axis(relative, offset, separation_rows):
    """The separating (or least-overlapping) axis: (index (m,) into the 15 rows,
    separation (m,), unit axis (3, m)).

    The axis is in a's frame and points from a to b. Its zero components are exact
    zeros (a's face axes, and a_k x b_l along a_k), so signs of it pick feature centres.
    """
    separation = separation_rows.max(axis=0)
    best = _first_row_reaching(separation_rows, separation)
    m = len(separation)
    axis = np.zeros((3, m))
    faces_of_a = np.flatnonzero(best < 3)
    axis[best[faces_of_a], faces_of_a] = 1.0
    faces_of_b = np.flatnonzero((best >= 3) & (best < 6))
    axis[:, faces_of_b] = relative[:, best[faces_of_b] - 3, faces_of_b]
    crossed = np.flatnonzero(best >= 6)
    face_k, column_l = np.divmod(best[crossed] - 6, 3)
    column = relative[:, column_l, crossed]  # (3, c): b_l in a's frame
    # a_k x b_l: zero along a_k, (-b_l[k+2], b_l[k+1]) on the next two components.
    inner = np.arange(len(crossed))
    after_next = column[_AFTER_NEXT[face_k], inner]
    following = column[_NEXT[face_k], inner]
    length = np.sqrt(after_next * after_next + following * following)
    axis[_NEXT[face_k], crossed] = -after_next / length
    axis[_AFTER_NEXT[face_k], crossed] = following / length
    towards_b = axis[0] * offset[0] + axis[1] * offset[1] + axis[2] * offset[2]
    axis *= np.where(towards_b < 0, -1.0, 1.0)
    return best, separation, axis


def _first_row_reaching(rows, extreme):
    """Index of the first of up to 16 rows (k, m) equal to extreme (m,), as np.argmax or
    np.argmin along axis 0 picks it: those run strided, several times slower than these
    passes over whole rows. returns: (m,) intp"""
    reaching = (rows == extreme).view(np.uint8)
    reaching *= _FIRST_ROW_WINS[-len(rows) :]
    return len(rows) - reaching.max(axis=0).astype(np.intp)


def support_b(relative, offset, half_b, best, axis):
    """Point of box b furthest against the SAT `axis` ((3, m), a's frame; best (m,) its
    row): a vertex, or the centre of b's edge along b_l for a_k x b_l and of b's face for
    b's own face axis, whose other entries of R^T axis are rounding noise that would pick
    an arbitrary vertex of that edge or face."""
    signs = -np.sign(apply_transposed(relative, axis))
    crossed = np.flatnonzero(best >= 6)
    signs[(best[crossed] - 6) % 3, crossed] = 0.0
    faces_of_b = np.flatnonzero((best >= 3) & (best < 6))
    along = signs[best[faces_of_b] - 3, faces_of_b]
    signs[:, faces_of_b] = 0.0
    signs[best[faces_of_b] - 3, faces_of_b] = along
    return offset + apply(relative, signs * half_b)


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
    gap, certified = gap_certificates(relative, offset, half_a, half_b, x, y)
    return gap, x, y, certified


def gap_certificates(relative, offset, half_a, half_b, x, y):
    """Gaps of candidate closest pairs and whether each is optimal.

    x on a, y on b: (3, m) in a's frame. The separation of the boxes' projections on
    n = (y - x) / |y - x| is a lower bound of the gap; where it meets |y - x| the pair
    is optimal (by duality) and the gap exact.
    returns: gap (m,), certified (m,) bool (never for gap 0)
    """
    gap_vector = y - x
    gap = np.sqrt(_sum_of_rows(gap_vector * gap_vector))
    with np.errstate(divide="ignore", invalid="ignore"):
        normal = np.where(gap > 0, gap_vector / gap, 0.0)
    lower = (
        _sum_of_rows(normal * offset)
        - _sum_of_rows(np.abs(apply_transposed(relative, normal)) * half_b)
        - _sum_of_rows(np.abs(normal) * half_a)
    )
    certified = (gap > 0) & (gap - lower <= BOUND_GAP_TOLERANCE * (1.0 + gap))
    return gap, certified


def _sum_of_rows(vectors: np.ndarray) -> np.ndarray:
    """The sum of the 3 rows of (3, ...) arrays, in the order sum(axis=0) adds them."""
    return vectors[0] + vectors[1] + vectors[2]


def closest_on_sat_features(relative, offset, half_a, half_b, best, axis):
    """Closest points of the features of separated boxes that touch the planes
    perpendicular to their best SAT axis: x on a, y on b (3, m), a's frame.

    best (m,), axis (3, m) from `best_axis`. A face axis of a: b's supporting vertex and
    its nearest point on a; a face axis of b: the same the other way round; an edge
    cross axis: the closest points of the two supporting edges' lines, clamped to the
    edges. Where the closest pair of the boxes lies on these features (a vertex over a
    face, or two edges crossing), this is it: `gap_certificates` tells which.
    """
    # Supporting vertex (or edge/face centre, on exact zeros of the axis) of a along the
    # axis, and of b against it.
    x = np.sign(axis) * half_a
    y = support_b(relative, offset, half_b, best, axis)
    crossed = np.flatnonzero(best >= 6)
    face_k, column_l = np.divmod(best[crossed] - 6, 3)
    faces_of_a = np.flatnonzero(best < 3)
    x[:, faces_of_a] = np.clip(y[:, faces_of_a], -half_a[:, faces_of_a], half_a[:, faces_of_a])
    faces_of_b = np.flatnonzero((best >= 3) & (best < 6))
    if len(faces_of_b):
        frame = relative[:, :, faces_of_b]
        origin = offset[:, faces_of_b]
        local = np.clip(
            apply_transposed(frame, x[:, faces_of_b] - origin),
            -half_b[:, faces_of_b],
            half_b[:, faces_of_b],
        )
        y[:, faces_of_b] = origin + apply(frame, local)
    if len(crossed):
        # Lines x + s a_k and y + t b_l: minimise |w + s a_k - t b_l|^2, w = x - y.
        inner = np.arange(len(crossed))
        edge_b = relative[:, column_l, crossed]  # (3, c)
        w = x[:, crossed] - y[:, crossed]
        cosine = relative[face_k, column_l, crossed]
        along_b = _sum_of_rows(w * edge_b)
        # 1 - cosine^2 from the other two components of b_l, accurate for near-parallel
        # edges (the SAT kept only cross axes longer than PARALLEL_CROSS_NORM).
        sine_squared = edge_b[_NEXT[face_k], inner] ** 2 + edge_b[_AFTER_NEXT[face_k], inner] ** 2
        s = (cosine * along_b - w[face_k, inner]) / sine_squared
        t = along_b + s * cosine
        s = np.clip(s, -half_a[face_k, crossed], half_a[face_k, crossed])
        t = np.clip(t, -half_b[column_l, crossed], half_b[column_l, crossed])
        x[face_k, crossed] += s
        y[:, crossed] += t * edge_b
    return x, y


def closest_vertex_pairs(relative, offset, half_a, half_b):
    """The closest of the 16 pairs (vertex of one box, its nearest point on the other):
    x on a, y on b (3, m), a's frame.

    Exact where the boxes' closest pair has a vertex at one end, which is every
    separated pair whose closest pair is not on SAT features (a face over a vertex, or
    two edges crossing): both ends then lie inside edges or are vertices, and two
    edges' inside points closest to each other lie on their common perpendicular.
    """
    # b's vertices in a's frame and their nearest points on a.
    vertices_b = _corners(offset, (relative * half_b[None]).transpose(1, 0, 2))
    on_a = np.clip(vertices_b, -half_a, half_a)
    gaps_b = _squared_lengths(vertices_b - on_a)
    # a's vertices in b's frame and their nearest points on b.
    local_a = _corners(-apply_transposed(relative, offset), relative * half_a[:, None])
    on_b = np.clip(local_a, -half_b, half_b)
    gaps_a = _squared_lengths(local_a - on_b)
    pairs = np.arange(offset.shape[1])
    # The closest of b's vertices (rows 0-7) and a's (rows 8-15); b's on ties.
    gaps = np.concatenate([gaps_b, gaps_a])
    vertex = _first_row_reaching(gaps, gaps.min(axis=0))
    use_b = vertex < 8
    vertex_b = np.where(use_b, vertex, 0)
    vertex_a = np.where(use_b, 0, vertex - 8)
    x_a = CUBE_CORNER_SIGNS[vertex_a].T * half_a
    y_a = offset + apply(relative, on_b[vertex_a, :, pairs].T)
    x = np.where(use_b, on_a[vertex_b, :, pairs].T, x_a)
    y = np.where(use_b, vertices_b[vertex_b, :, pairs].T, y_a)
    return x, y


def _corners(center, edges):
    """The 8 corners center +- edges[0] +- edges[1] +- edges[2], in CUBE_CORNER_SIGNS
    order: center (3, m), edges (3, 3, m) -> (8, 3, m)."""
    corners = np.empty((2, 2, 2, *center.shape))
    corners[...] = center
    corners[0] -= edges[0]
    corners[1] += edges[0]
    corners[:, 0] -= edges[1]
    corners[:, 1] += edges[1]
    corners[:, :, 0] -= edges[2]
    corners[:, :, 1] += edges[2]
    return corners.reshape(8, *center.shape)


def _squared_lengths(vectors):
    """|v|^2 of (..., 3, m) vectors: (..., m)."""
    squares = vectors * vectors
    return squares[..., 0, :] + squares[..., 1, :] + squares[..., 2, :]
