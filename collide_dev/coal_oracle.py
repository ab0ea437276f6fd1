"""coal (the C++ FCL successor) as the reference for signed distances."""

from __future__ import annotations

import coal
import numpy as np

from collide_addon.core import KIND_BOX, KIND_SPHERE, ShapeBatch
from collide_addon.core.contact import contact_epsilon
from collide_addon.core.mesh import APART, CROSSING, I_INSIDE_J, J_INSIDE_I, TOUCHING


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


def coal_mesh(vertices, triangles, matrix) -> coal.CollisionObject:
    """A coal BVHModelOBBRSS of a mesh posed by an affine (4, 4) matrix: the vertices
    (v, 3) are moved into the world here, since coal's transforms are rigid."""
    world = np.asarray(vertices, dtype=np.float64) @ matrix[:3, :3].T + matrix[:3, 3]
    model = coal.BVHModelOBBRSS()
    model.beginModel(len(triangles), len(world))
    model.addVertices(world)
    model.addTriangles(np.asarray(triangles, dtype=np.int64))
    model.endModel()
    return coal.CollisionObject(model, coal.Transform3s())


def coal_mesh_distance(first: coal.CollisionObject, second: coal.CollisionObject):
    """coal's minimum distance of two mesh objects and its witness points:
    (distance, (3,) point on first, (3,) point on second)."""
    request = coal.DistanceRequest()
    result = coal.DistanceResult()
    coal.distance(first, second, request, result)
    return (
        float(result.min_distance),
        np.array(result.getNearestPoint1()),
        np.array(result.getNearestPoint2()),
    )


def same_distance(ours: float, theirs: float, reach: float) -> bool:
    """Whether a distance of collide's is coal's: to 1e-9 of coal's, or to 1e-7 of the
    coordinates (up to `reach`), float32 rounding of Blender's data."""
    return abs(ours - theirs) <= max(1e-9 * abs(theirs), 1e-7 * max(1.0, reach))


def coal_gap_disagreement(
    relation: int, distance: float, first: tuple, second: tuple, matrices, max_distance, reach
):
    """Why `mesh_contacts`' `relation` and `distance` (called with `max_distance`) of two
    meshes (vertices, triangles) posed by `matrices` (2, 4, 4) that do not cross disagree
    with coal's distance, None where they agree: coal's distance (to 1e-9 of it or 1e-7
    of the coordinates, `reach` their largest), apart or touching, unless coal's is
    beyond max_distance and the contact epsilon at coal's closest points, where +inf is
    allowed too."""
    objects = coal_mesh(*first, matrices[0]), coal_mesh(*second, matrices[1])
    theirs, point_first, point_second = coal_mesh_distance(*objects)
    close = same_distance(distance, theirs, reach)
    epsilon = float(contact_epsilon([(point_first + point_second) / 2.0])[0])
    beyond = theirs > max(max_distance, epsilon) - 1e-9 * max(1.0, reach)
    if relation in (APART, TOUCHING) and (close or (beyond and distance == np.inf)):
        return None
    return f"relation {relation}, distance {distance:.9g}, coal's distance {theirs:.9g}"


# EPA's iterations at most (coal's default is 64).
_EPA_ITERATIONS = 1000


def coal_convex_distance(first_vertices, second_vertices) -> float:
    """coal's signed distance of the convex hulls of two vertex sets (k, 3) in world
    coordinates (GJK, and EPA when they overlap): minus the penetration depth, the
    shortest translation that separates them."""
    hulls = []
    for vertices in (first_vertices, second_vertices):
        points = coal.StdVec_Vec3s()
        for point in np.asarray(vertices, dtype=np.float64):
            points.append(point)
        hull = coal.Convex.convexHull(points, False, "")
        hulls.append(coal.CollisionObject(hull, coal.Transform3s()))
    request = coal.DistanceRequest()
    # EPA's default 64 iterations stop short on a 32-sided column pair: 0.19861 to 0.19900
    # against the separating axis theorem's 0.19904 (AC11's columns pasted 0.8 m along
    # themselves); it comes from below, so stopping early gives too little.
    request.epa_max_iterations = _EPA_ITERATIONS
    result = coal.DistanceResult()
    coal.distance(*hulls, request, result)
    return float(result.min_distance)


def coal_mesh_collide(first: coal.CollisionObject, second: coal.CollisionObject) -> bool:
    """Whether coal finds any pair of intersecting triangles of two mesh objects."""
    result = coal.CollisionResult()
    coal.collide(first, second, coal.CollisionRequest(), result)
    return bool(result.isCollision())


def coal_mesh_disagreement(
    relation: int,
    distance: float,
    first: tuple,
    second: tuple,
    matrices,
    reach: float,
    epsilon: float,
):
    """Why `mesh_contacts`' `relation` and `distance` of two meshes (vertices, triangles)
    posed by `matrices` (2, 4, 4) disagree with coal's BVH meshes, None where they agree:
    crossing where coal collides (or finds the surfaces within `epsilon`, the contact
    epsilon at coordinates up to `reach`, which count as meeting), containment or apart
    or touching where it does not, apart or touching at coal's distance (to 1e-9 of it
    or 1e-7 of the coordinates). For pairs farther than three epsilons from contact."""
    objects = coal_mesh(*first, matrices[0]), coal_mesh(*second, matrices[1])
    collides = coal_mesh_collide(*objects)
    if relation == CROSSING:
        agrees = collides or coal_mesh_distance(*objects)[0] <= epsilon
    elif relation in (I_INSIDE_J, J_INSIDE_I):
        agrees = not collides
    else:
        agrees = relation in (APART, TOUCHING) and not collides
        if agrees and np.isfinite(distance):
            agrees = same_distance(distance, coal_mesh_distance(*objects)[0], reach)
    if agrees:
        return None
    return f"relation {relation}, distance {distance:.6g}, coal collides {collides}"
