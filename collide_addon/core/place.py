"""Placing fits in the world: an object's linear map split into a rigid part and the
stretch its vertices are fitted in, and the fits moved by the rigid part.

An object's 3x3 matrix A is split into an orthogonal part and a symmetric stretch,
A = Q S (`polar_decompose`). The vertices are fitted after the stretch normalised to unit
size (`normalised_stretch`), and the fit is placed in the world by Q, the size and the
translation (`place_fits`). Non-uniform scale and shear (a non-uniformly scaled child of a
rotated parent) are therefore exact, and a fit is reused as long as the normalised stretch
does not change (`rows_to_refit`, `stretch_keys`): moving, rotating or uniformly scaling
never refits. `fit_looseness` compares fits with the meshes they enclose, `mesh_volumes`
gives those meshes' volumes. Imports numpy and `shapes` only.
"""

from __future__ import annotations

import numpy as np

from .shapes import ShapeBatch

# Columns of an object's matrix this close to orthogonal (|cos| of the angle between
# them) are rotation times scale: Blender's float32 matrices carry shear noise of about
# 1e-7, and the rotation this gives stays within the core's orthonormality tolerance.
_ORTHOGONAL_COSINE = 5e-7
# A normalised stretch that changed by more than this in any entry (relative to the
# object's size, as the stretch is normalised) is refitted.
STRETCH_TOLERANCE = 1e-6
# Fits are cached by their normalised stretch rounded to this many decimals, so that
# float32 noise in the matrices does not make a new key.
STRETCH_KEY_DECIMALS = 6


def polar_decompose(linear) -> tuple[np.ndarray, np.ndarray]:
    """Split linear maps into an orthogonal and a symmetric stretch part: A = Q S.

    linear: (n, 3, 3) float, the upper-left 3x3 of object-to-world matrices
    returns: orthogonal (n, 3, 3) (det -1 for mirrored objects) and stretch (n, 3, 3),
        symmetric positive semi-definite. Matrices whose columns are orthogonal (rotation
        times scale, the common case; to float32 precision) take a fast path; sheared
        or singular ones an SVD.
    """
    linear = np.asanyarray(linear, dtype=np.float64)
    # Component-major, columns[k, i] = component i of column k, each (n,): sums over the
    # short axes become additions of whole rows (numpy reduces short rows slowly).
    columns = np.ascontiguousarray(linear.transpose(2, 1, 0))
    squares = (columns * columns).sum(axis=1)  # (3, n) squared column lengths
    dots = (columns[[0, 0, 1]] * columns[[1, 2, 2]]).sum(axis=1)  # (3, n) column pairs
    orthogonal_columns = (squares > 0.0).all(axis=0) & (
        dots * dots <= _ORTHOGONAL_COSINE**2 * (squares[[0, 0, 1]] * squares[[1, 2, 2]])
    ).all(axis=0)
    scales = np.sqrt(squares)
    orthogonal = (columns / np.where(scales > 0.0, scales, 1.0)[:, None, :]).transpose(2, 1, 0)
    stretch = np.zeros_like(linear)
    diagonal = np.arange(3)
    stretch[:, diagonal, diagonal] = scales.T
    sheared = np.flatnonzero(~orthogonal_columns)
    if len(sheared):
        u, sigma, vt = np.linalg.svd(linear[sheared])
        orthogonal[sheared] = u @ vt
        stretch[sheared] = np.einsum("nki,nk,nkj->nij", vt, sigma, vt)
    return orthogonal, stretch


def normalised_stretch(stretch) -> tuple[np.ndarray, np.ndarray]:
    """Stretches scaled to unit size: stretch = size * normalised.

    stretch: (n, 3, 3) float64, as from `polar_decompose`
    returns: normalised (n, 3, 3) float64 with root-mean-square column length 1 (the
        identity for a collapsed, all-zero stretch: any stretch will do there) and
        size (n,) float64 >= 0, the root-mean-square column length of each stretch
    """
    stretch = np.asanyarray(stretch, dtype=np.float64)
    flat = stretch.reshape(-1, 9)
    size = np.sqrt(np.einsum("ni,ni->n", flat, flat) / 3.0)
    normalised = stretch / np.where(size > 0.0, size, 1.0)[:, None, None]
    normalised[size == 0.0] = np.eye(3)
    return normalised, size


def rows_to_refit(
    normalised: np.ndarray, fitted: np.ndarray, previous: np.ndarray | None = None
) -> np.ndarray:
    """The rows whose fit must be made again: those without a fit, and those whose
    normalised stretch moved by more than STRETCH_TOLERANCE in any entry.

    normalised: (n, 3, 3) float64 normalised stretch now (`normalised_stretch`)
    fitted: (n,) bool, whether row k has a fit
    previous: (n, 3, 3) float64 normalised stretch the fits were made for, or None (no
        fits placed yet: only the rows without a fit)
    returns: (r,) int64 rows, ascending
    """
    refit = ~np.asarray(fitted, dtype=bool)
    if previous is not None:
        # Written as any(> tolerance) over flat rows: numpy's max over short axes is slow.
        difference = np.abs(normalised - previous).reshape(-1, 9)
        refit |= (difference > STRETCH_TOLERANCE).any(axis=1)
    return np.flatnonzero(refit)


def stretch_keys(normalised) -> list[tuple[float, ...]]:
    """Cache keys of normalised stretches (k, 3, 3): each one's 9 entries rounded to
    STRETCH_KEY_DECIMALS, row by row. Equal stretches give equal keys. All rounded at
    once: one by one cost 0.17 s of a live update after hiding one of 10,000 objects."""
    rounded = np.round(np.asanyarray(normalised, dtype=np.float64), STRETCH_KEY_DECIMALS)
    return [tuple(row) for row in rounded.reshape(-1, 9).tolist()]


def fit_looseness(fit_volumes, mesh_volumes, normalised) -> np.ndarray:
    """How much larger each fit is than the mesh it encloses: fit volume / mesh volume.

    fit_volumes: (k,) the fits' volumes in stretched space (they were fitted there)
    mesh_volumes: (k,) the meshes' volumes in object space, before the stretch
    normalised: (k, 3, 3) the normalised stretch each fit was made in, which scales its
        mesh's volume by |det|
    returns: (k,) the ratios; 0.0 where the stretched mesh encloses no volume (an open
        or flat mesh)
    """
    fit_volumes = np.asanyarray(fit_volumes, dtype=np.float64)
    stretched = np.asanyarray(mesh_volumes, dtype=np.float64) * np.abs(
        np.linalg.det(np.asanyarray(normalised, dtype=np.float64).reshape(-1, 3, 3))
    )
    ratios = np.zeros(len(fit_volumes))
    np.divide(fit_volumes, stretched, out=ratios, where=stretched > 0)
    return ratios


def place_fits(
    fits: ShapeBatch, orthogonal: np.ndarray, scale: np.ndarray, translation: np.ndarray
) -> ShapeBatch:
    """Move fits made in stretched object space into the world: x -> Q (scale x) + t.

    fits: n fits (`stack_fits`); orthogonal: (n, 3, 3) with det +-1; scale: (n,) >= 0;
    translation: (n, 3)
    returns: the fits in world space, shape k = fit k. A mirror (det -1) flips the
        rotation's column 0, which leaves every box, sphere and capsule the same set of
        points.
    """
    # Component-major (3, 3, n) products, as in polar_decompose: q[i, k] = Q_ik.
    q = np.ascontiguousarray(np.asanyarray(orthogonal, dtype=np.float64).transpose(1, 2, 0))
    local = np.ascontiguousarray(fits.rotations.transpose(1, 2, 0))
    rotations = (q[:, :, None, :] * local[None, :, :, :]).sum(axis=1)  # (3, 3, n)
    determinants = (
        q[0, 0] * (q[1, 1] * q[2, 2] - q[1, 2] * q[2, 1])
        - q[0, 1] * (q[1, 0] * q[2, 2] - q[1, 2] * q[2, 0])
        + q[0, 2] * (q[1, 0] * q[2, 1] - q[1, 1] * q[2, 0])
    )
    mirrored = np.flatnonzero(determinants < 0)
    rotations[:, 0, mirrored] *= -1.0
    centers = (q * fits.centers.T[None, :, :]).sum(axis=1) * scale + translation.T
    return ShapeBatch(
        kinds=fits.kinds,
        centers=centers.T,
        rotations=rotations.transpose(2, 0, 1),
        half_extents=fits.half_extents * scale[:, None],
        radii=fits.radii * scale,
    )


# Meshes under this many triangles are measured many at a time, in runs of about
# `_VOLUME_RUN_TRIANGLES`: 20,000 small meshes (1.4 M triangles) measured one call each
# took 0.34-0.44 s, nearly all numpy's cost per call, and 0.15-0.18 s in runs. Larger
# meshes are measured one by one: joining bench_fit.py's 1,000 meshes (5.4 M triangles)
# into runs took 0.55 s, against 0.13-0.19 s one by one. Runs of 16k triangles keep the
# temporaries small (0.21 s for runs of 128k).
_VOLUME_ALONE_TRIANGLES = 2048
_VOLUME_RUN_TRIANGLES = 1 << 14


def mesh_volumes(vertex_sets, triangle_sets) -> np.ndarray:
    """Enclosed volume of each triangle mesh (absolute value of the signed volume): (g,).

    vertex_sets: g arrays (v_i, 3) float; triangle_sets: g arrays (t_i, 3) int indices
    into their vertices. Open meshes give the volume of the cone from their first vertex,
    so the value is only meaningful for closed meshes; a mesh without triangles gives 0.
    """
    vertex_sets = [np.asanyarray(vertices, dtype=np.float64) for vertices in vertex_sets]
    triangle_sets = [np.asanyarray(triangles).reshape(-1, 3) for triangles in triangle_sets]
    counts = np.array([len(triangles) for triangles in triangle_sets], dtype=np.int64)
    volumes = np.zeros(len(vertex_sets))
    small = (counts > 0) & (counts < _VOLUME_ALONE_TRIANGLES)
    runs = np.where(small, np.cumsum(np.where(small, counts, 0)) // _VOLUME_RUN_TRIANGLES, -1)
    for run in np.unique(runs[small]):
        members = np.flatnonzero(runs == run)
        volumes[members] = _signed_volumes(
            [vertex_sets[k] for k in members], [triangle_sets[k] for k in members]
        )
    for k in np.flatnonzero(counts >= _VOLUME_ALONE_TRIANGLES):
        volumes[k] = _signed_volumes([vertex_sets[k]], [triangle_sets[k]])[0]
    return np.abs(volumes)


def _signed_volumes(vertex_sets: list[np.ndarray], triangle_sets: list[np.ndarray]) -> np.ndarray:
    """Signed volumes (g,) of meshes with at least one triangle each, as `mesh_volumes`
    measures them, in one pass over all their triangles."""
    # Measured from a vertex of each mesh, not the origin: the cones' volumes then stay
    # near the mesh's own, where far from the origin (a georeferenced building) they
    # would be huge and cancel, leaving rounding.
    if len(vertex_sets) == 1:
        columns = (vertex_sets[0] - vertex_sets[0][0]).T
        triangles = triangle_sets[0]
    else:
        vertex_counts = np.array([len(vertices) for vertices in vertex_sets])
        firsts = np.array([vertices[0] for vertices in vertex_sets])
        columns = (np.concatenate(vertex_sets) - np.repeat(firsts, vertex_counts, axis=0)).T
        triangle_counts = np.array([len(triangles) for triangles in triangle_sets])
        offsets = np.repeat(np.cumsum(vertex_counts) - vertex_counts, triangle_counts)
        triangles = np.concatenate(triangle_sets).astype(np.int64) + offsets[:, None]
    # Component rows and the determinant written out: np.cross and einsum over (t, 3)
    # rows took three times as long.
    a, b, c = (np.take(columns, triangles[:, k], axis=1) for k in range(3))
    determinants = (
        a[0] * (b[1] * c[2] - b[2] * c[1])
        + a[1] * (b[2] * c[0] - b[0] * c[2])
        + a[2] * (b[0] * c[1] - b[1] * c[0])
    )
    if len(vertex_sets) == 1:
        return np.array([determinants.sum() / 6.0])
    owners = np.repeat(np.arange(len(vertex_sets)), triangle_counts)
    return np.bincount(owners, weights=determinants, minlength=len(vertex_sets)) / 6.0
