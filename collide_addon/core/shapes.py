"""ShapeBatch: n boxes, spheres and capsules as flat float64 arrays.

Every shape is stored the same way, as a *core* swept by a ball:

- box: core = the box, radius 0;
- sphere: core = its centre (a box with zero half-extents), radius r;
- capsule: core = its segment (a box with half-extents (0, 0, h) whose third axis is
  the segment direction), radius r.

So shape = core (+) ball(radius), with core an oriented box that may be flat or
degenerate. The narrow phase works on the cores and subtracts the radii, which is
exact for convex shapes (see `narrow.py`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .columns import concatenate_fields, einsum_rows, take_rows
from .constants import KIND_BOX, KIND_CAPSULE, KIND_SPHERE, ORTHONORMAL_TOLERANCE


def _as_array(name: str, values, shape_tail: tuple[int, ...]) -> np.ndarray:
    array = np.asarray(values, dtype=np.float64)
    if array.ndim != 1 + len(shape_tail) or array.shape[1:] != shape_tail:
        expected = "(n" + "".join(f", {size}" for size in shape_tail) + ")"
        raise ValueError(f"{name} must have shape {expected}, got {array.shape}")
    return array


def _rows(array: np.ndarray) -> np.ndarray:
    """(n, ...) -> (n, k): one row per shape, also for n = 0."""
    return array.reshape(array.shape[0], int(np.prod(array.shape[1:])))


def _reject_non_finite(name: str, array: np.ndarray) -> None:
    bad = ~np.isfinite(_rows(array)).all(axis=1)
    if bad.any():
        index = int(np.flatnonzero(bad)[0])
        raise ValueError(f"{name}[{index}] is not finite: {array[index].tolist()}")


def _reject_negative(name: str, array: np.ndarray) -> None:
    bad = (_rows(array) < 0).any(axis=1)
    if bad.any():
        index = int(np.flatnonzero(bad)[0])
        raise ValueError(f"{name}[{index}] is negative: {array[index].tolist()}")


# Largest |coordinate| a shape may reach (centre plus its extent and radius). Anything
# Blender holds is float32, below 3.4e38, so no real scene comes near it; the narrow
# phase squares and multiplies such lengths (up to three at a time), and 1e100 keeps
# those products finite in float64 instead of giving inf, NaN or int overflow deeper down.
MAX_COORDINATE = 1e100


def _reject_overflowing(batch: ShapeBatch) -> None:
    """Raise ValueError, naming the first shape, when a shape's bounds reach beyond
    +-MAX_COORDINATE or are not finite (a finite size whose derived extent overflowed)."""
    with np.errstate(over="ignore", invalid="ignore"):  # inf and NaN are what is refused
        lo, hi = batch.aabbs()
    reach = np.maximum(np.abs(lo), np.abs(hi))
    # Every coordinate at once first: a batch is checked on every live update, and the
    # row by row maximum costs ten times more (0.3 ms at 10,000 shapes).
    if (reach <= MAX_COORDINATE).all():
        return
    bad = ~(reach.max(axis=1, initial=0.0) <= MAX_COORDINATE)
    if bad.any():
        index = int(np.flatnonzero(bad)[0])
        raise ValueError(
            f"shape {index} reaches beyond +-{MAX_COORDINATE:g} (center "
            f"{batch.centers[index].tolist()}, half_extents {batch.half_extents[index].tolist()}, "
            f"radius {float(batch.radii[index])!r}): its derived sizes would overflow"
        )


def _reject_far(name: str, array: np.ndarray) -> None:
    bad = ~(np.abs(_rows(array)) <= MAX_COORDINATE).all(axis=1)
    if bad.any():
        index = int(np.flatnonzero(bad)[0])
        raise ValueError(f"{name}[{index}] is beyond +-{MAX_COORDINATE:g}: {array[index].tolist()}")


def _check_lengths(**arrays: np.ndarray) -> None:
    lengths = {name: len(array) for name, array in arrays.items()}
    if len(set(lengths.values())) > 1:
        raise ValueError(f"arrays differ in length: {lengths}")


def frames_from_axes(axes: np.ndarray) -> np.ndarray:
    """Right-handed orthonormal frames whose third column is each given axis.

    axes: (n, 3) unit vectors, or zero vectors (taken as +z)
    returns: (n, 3, 3) rotations, column 2 = axis
    """
    axes = np.where(np.linalg.norm(axes, axis=1, keepdims=True) > 0, axes, [0.0, 0.0, 1.0])
    # Cross with the world axis least aligned with `axes`, so the result never vanishes.
    helper = np.eye(3)[np.argmin(np.abs(axes), axis=1)]
    first = np.cross(helper, axes)
    first /= np.linalg.norm(first, axis=1, keepdims=True)
    second = np.cross(axes, first)
    return np.stack([first, second, axes], axis=2)


def core_segments(centers, rotations, half_extents) -> tuple[np.ndarray, np.ndarray]:
    """End points of capsule cores: along each third axis, half its length each way.

    centers: (n, 3); rotations: (n, 3, 3); half_extents: (n, 3), of which column 2 is used
    returns: (starts, ends), each (n, 3) float64
    """
    offset = rotations[:, :, 2] * half_extents[:, 2:3]
    return centers - offset, centers + offset


def orthonormalised(rotations) -> np.ndarray:
    """Nearly orthonormal matrices made orthonormal to float64 rounding (Gram-Schmidt).

    rotations: (n, 3, 3), columns are axes, orthonormal to about 1e-6 (Blender's float32
        matrices are to about 1e-7)
    returns: (n, 3, 3) float64, orthonormal to about 1e-15, with the input's handedness;
        each column moves by about as much as the input is off orthonormal.

    The box-box SAT needs this: its axis for two nearly parallel edges is their cross
    product, of length s, and its closed form uses b_l x b_j = +-b_m (b's axes
    orthonormal), so an input off orthonormal by d puts an error of d / s times the
    boxes' size on that axis' separation; with float32 rotations, d = 1e-7 and s as
    small as 4e-8, that is more than the size itself. Moving the axes by d instead moves
    a box by d times its size, which the float32 input carries anyway.
    """
    # Component-major columns[k, i] = component i of column k, each (n,): sums over the
    # short axes become additions of whole rows.
    columns = np.ascontiguousarray(np.asarray(rotations, dtype=np.float64).transpose(2, 1, 0))
    first = columns[0] / np.sqrt((columns[0] * columns[0]).sum(axis=0))
    second = columns[1] - (first * columns[1]).sum(axis=0) * first
    second /= np.sqrt((second * second).sum(axis=0))
    third = np.cross(first, second, axis=0)
    third *= np.where((third * columns[2]).sum(axis=0) < 0.0, -1.0, 1.0)
    return np.stack([first, second, third]).transpose(2, 1, 0)


@dataclass(frozen=True)
class ShapeBatch:
    """n convex shapes; index k refers to row k of every array.

    kinds: (n,) int8, KIND_BOX / KIND_SPHERE / KIND_CAPSULE
    centers: (n, 3) centre of the core
    rotations: (n, 3, 3) orthonormal; column k is the core's k-th axis in world space.
        Stored re-orthonormalised in float64 (`orthonormalised`), whichever way the batch
        is made: Blender's float32 matrices are orthonormal only to about 1e-7.
    half_extents: (n, 3) of the core box (sphere: 0; capsule: (0, 0, half length))
    radii: (n,) radius of the ball swept over the core (box: 0)
    """

    kinds: np.ndarray
    centers: np.ndarray
    rotations: np.ndarray
    half_extents: np.ndarray
    radii: np.ndarray

    def __post_init__(self) -> None:
        object.__setattr__(self, "rotations", orthonormalised(self.rotations))
        _reject_overflowing(self)

    @classmethod
    def _of_batch_rows(cls, **fields) -> ShapeBatch:
        """A batch of rows of batches (taken, joined or replaced): their rotations are
        orthonormal already, so `__post_init__`'s pass over them is skipped (it would
        run once per test and frame on the report runs' `take`)."""
        batch = object.__new__(cls)
        for name, value in fields.items():
            object.__setattr__(batch, name, value)
        return batch

    @classmethod
    def boxes(cls, centers, rotations, half_extents) -> ShapeBatch:
        """Oriented boxes: world = rotations @ local + centers.

        centers: (n, 3); rotations: (n, 3, 3) orthonormal, columns are the box axes;
        half_extents: (n, 3) >= 0 (zero gives a flat or degenerate box)
        """
        centers = _as_array("centers", centers, (3,))
        rotations = _as_array("rotations", rotations, (3, 3))
        half_extents = _as_array("half_extents", half_extents, (3,))
        _check_lengths(centers=centers, rotations=rotations, half_extents=half_extents)
        for name, array in (
            ("centers", centers),
            ("rotations", rotations),
            ("half_extents", half_extents),
        ):
            _reject_non_finite(name, array)
        _reject_negative("half_extents", half_extents)
        deviation = np.abs(einsum_rows("nki,nkj->nij", rotations, rotations) - np.eye(3))
        bad = _rows(deviation).max(axis=1, initial=0.0) > ORTHONORMAL_TOLERANCE
        if bad.any():
            index = int(np.flatnonzero(bad)[0])
            raise ValueError(
                f"rotations[{index}] is not orthonormal (scale or shear belongs in "
                f"half_extents): {rotations[index].tolist()}"
            )
        count = len(centers)
        return cls(
            kinds=np.full(count, KIND_BOX, dtype=np.int8),
            centers=centers,
            rotations=rotations,
            half_extents=half_extents,
            radii=np.zeros(count),
        )

    @classmethod
    def spheres(cls, centers, radii) -> ShapeBatch:
        """Spheres. centers: (n, 3); radii: (n,) >= 0."""
        centers = _as_array("centers", centers, (3,))
        radii = _as_array("radii", radii, ())
        _check_lengths(centers=centers, radii=radii)
        _reject_non_finite("centers", centers)
        _reject_non_finite("radii", radii)
        _reject_negative("radii", radii)
        count = len(centers)
        return cls(
            kinds=np.full(count, KIND_SPHERE, dtype=np.int8),
            centers=centers,
            rotations=np.broadcast_to(np.eye(3), (count, 3, 3)).copy(),
            half_extents=np.zeros((count, 3)),
            radii=radii,
        )

    @classmethod
    def capsules(cls, starts, ends, radii) -> ShapeBatch:
        """Capsules: all points within radii of the segment starts-ends.

        starts, ends: (n, 3); radii: (n,) >= 0. A zero-length capsule is a sphere.
        """
        starts = _as_array("starts", starts, (3,))
        ends = _as_array("ends", ends, (3,))
        radii = _as_array("radii", radii, ())
        _check_lengths(starts=starts, ends=ends, radii=radii)
        for name, array in (("starts", starts), ("ends", ends), ("radii", radii)):
            _reject_non_finite(name, array)
        _reject_negative("radii", radii)
        for name, array in (("starts", starts), ("ends", ends)):
            # Refused before `ends - starts`, which would overflow.
            _reject_far(name, array)
        direction = ends - starts
        length = np.linalg.norm(direction, axis=1)
        axes = np.divide(
            direction, length[:, None], out=np.zeros_like(direction), where=length[:, None] > 0
        )
        half_extents = np.zeros((len(starts), 3))
        half_extents[:, 2] = 0.5 * length
        return cls(
            kinds=np.full(len(starts), KIND_CAPSULE, dtype=np.int8),
            centers=0.5 * (starts + ends),
            rotations=frames_from_axes(axes),
            half_extents=half_extents,
            radii=radii,
        )

    @classmethod
    def concat(cls, batches) -> ShapeBatch:
        """One batch holding `batches` in order: indices follow the concatenation."""
        batches = list(batches)
        if not batches:
            return cls.empty()
        return concatenate_fields(cls, batches, build=cls._of_batch_rows)

    @classmethod
    def empty(cls) -> ShapeBatch:
        return cls(
            kinds=np.zeros(0, dtype=np.int8),
            centers=np.zeros((0, 3)),
            rotations=np.zeros((0, 3, 3)),
            half_extents=np.zeros((0, 3)),
            radii=np.zeros(0),
        )

    def __len__(self) -> int:
        return len(self.kinds)

    def take(self, indices) -> ShapeBatch:
        """The shapes at `indices` ((m,) int), in that order."""
        indices = np.asarray(indices, dtype=np.int64)
        return ShapeBatch._of_batch_rows(
            kinds=self.kinds[indices],
            centers=take_rows(self.centers, indices),
            rotations=take_rows(self.rotations, indices),
            half_extents=take_rows(self.half_extents, indices),
            radii=self.radii[indices],
        )

    def with_rows(self, rows, shapes: ShapeBatch) -> ShapeBatch:
        """A copy with the shapes at `rows` ((m,) int) replaced by `shapes` (m shapes, in
        that order); this batch is left as it is."""
        fields = {}
        for name in ("kinds", "centers", "rotations", "half_extents", "radii"):
            fields[name] = getattr(self, name).copy()
            fields[name][rows] = getattr(shapes, name)
        return ShapeBatch._of_batch_rows(**fields)

    def aabbs(self) -> tuple[np.ndarray, np.ndarray]:
        """Axis-aligned bounds: (lo, hi), each (n, 3), read-only.

        Made once per batch: the overflow check on construction and the broad phase
        both need them (a live update at 10,000 shapes would make them twice).
        """
        bounds = self.__dict__.get("_bounds")
        if bounds is None:
            half = einsum_rows("nij,nj->ni", np.abs(self.rotations), self.half_extents)
            half += self.radii[:, None]
            bounds = (self.centers - half, self.centers + half)
            for array in bounds:
                array.flags.writeable = False
            object.__setattr__(self, "_bounds", bounds)
        return bounds

    def capsule_segments(self) -> tuple[np.ndarray, np.ndarray]:
        """Core segments as (starts, ends), each (n, 3), along each shape's third axis."""
        return core_segments(self.centers, self.rotations, self.half_extents)
