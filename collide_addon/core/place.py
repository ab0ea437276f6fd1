"""Placing fits in the world: an object's linear map split into a rigid part and the
stretch its vertices are fitted in, and the fits moved by the rigid part.

An object's 3x3 matrix A is split into an orthogonal part and a symmetric stretch,
A = Q S (`polar_decompose`). The vertices are fitted after the stretch normalised to unit
size (`normalised_stretch`), and the fit is placed in the world by Q, the size and the
translation (`place_fits`). Non-uniform scale and shear (a non-uniformly scaled child of a
rotated parent) are therefore exact, and a fit is reused as long as the normalised stretch
does not change (`rows_to_refit`, `stretch_key`): moving, rotating or uniformly scaling
never refits. `fit_looseness` compares a fit with the mesh it encloses, `mesh_volume`
gives that mesh's volume. Imports numpy and `shapes` only.
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


def stretch_key(normalised) -> tuple[float, ...]:
    """Cache key of one normalised stretch (3, 3): its 9 entries rounded to
    STRETCH_KEY_DECIMALS, row by row. Equal stretches give equal keys."""
    rounded = np.round(np.asanyarray(normalised, dtype=np.float64), STRETCH_KEY_DECIMALS)
    return tuple(rounded.ravel().tolist())


def fit_looseness(fit_volume: float, mesh_volume: float, normalised) -> float:
    """How much larger a fit is than the mesh it encloses: fit volume / mesh volume.

    fit_volume: the fit's volume in stretched space (it was fitted there)
    mesh_volume: the mesh's volume in object space, before the stretch
    normalised: (3, 3) the normalised stretch the fit was made in, which scales the mesh
        volume by |det|
    returns: the ratio; 0.0 where the stretched mesh encloses no volume (an open or flat
        mesh)
    """
    stretched_volume = mesh_volume * abs(float(np.linalg.det(normalised)))
    return fit_volume / stretched_volume if stretched_volume > 0 else 0.0


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


def mesh_volume(vertices, triangles) -> float:
    """Enclosed volume of a triangle mesh (absolute value of the signed volume).

    vertices: (n, 3) float; triangles: (t, 3) int indices. Open meshes give the volume
    of the cone from the first vertex, so the value is only meaningful for closed meshes.
    """
    vertices = np.asanyarray(vertices, dtype=np.float64)
    triangles = np.asanyarray(triangles).reshape(-1, 3)
    if len(triangles) == 0:
        return 0.0
    # Measured from a vertex of the mesh, not the origin: the cones' volumes then stay
    # near the mesh's own, where far from the origin (a georeferenced building) they
    # would be huge and cancel, leaving rounding.
    columns = (vertices - vertices[0]).T
    # Component rows and the determinant written out: a first read of a scene computes
    # the volume of every mesh (millions of triangles), and np.cross and einsum over
    # (t, 3) rows took three times as long.
    a, b, c = (np.take(columns, triangles[:, k], axis=1) for k in range(3))
    determinants = (
        a[0] * (b[1] * c[2] - b[2] * c[1])
        + a[1] * (b[2] * c[0] - b[0] * c[2])
        + a[2] * (b[0] * c[1] - b[1] * c[0])
    )
    return float(abs(determinants.sum()) / 6.0)
