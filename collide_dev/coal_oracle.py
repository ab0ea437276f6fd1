"""coal (the C++ FCL successor) as the reference for signed distances."""

from __future__ import annotations

import coal

from collide_addon.core import KIND_BOX, KIND_SPHERE, ShapeBatch


def coal_object(batch: ShapeBatch, index: int) -> coal.CollisionObject:
    kind = batch.kinds[index]
    if kind == KIND_BOX:
        geometry = coal.Box(*(2.0 * batch.half_extents[index]))
    elif kind == KIND_SPHERE:
        geometry = coal.Sphere(float(batch.radii[index]))
    else:
        # coal's capsule runs along its local z axis, like ours (third rotation column).
        geometry = coal.Capsule(
            float(batch.radii[index]), float(2.0 * batch.half_extents[index, 2])
        )
    transform = coal.Transform3s(batch.rotations[index], batch.centers[index])
    return coal.CollisionObject(geometry, transform)


def coal_signed_distance(batch: ShapeBatch, i: int, j: int) -> float:
    request = coal.DistanceRequest()
    request.gjk_tolerance = 1e-12
    request.epa_tolerance = 1e-10
    result = coal.DistanceResult()
    coal.distance(coal_object(batch, i), coal_object(batch, j), request, result)
    return float(result.min_distance)
