"""Fuzz mesh mode with the elements of real buildings against independent oracles.

    PYTHONPATH=$PWD .venv-core/bin/python benchmarks/fuzz_ifc.py --ifc-dir DIR
        [--rounds N] [--seed S]

DIR is the folder `python3 build.py bench-ifc --keep DIR` keeps (DIR/MODEL/model.npz: one
mesh per element, in world coordinates). Each round takes up to 100 pairs of one model's
elements and decides them in one `mesh_contacts` call; every pair is then checked alone
against an oracle that shares no code with collide's:

- coal: a near pair (bounds within 5 cm), the second element nudged (a turn of 0, 1e-3
  or 0.03 rad times a normal draw about one of the first's vertices, a move of 0, 1e-4,
  0.02 or 0.3 m times a normal draw), both posed by three parents multiplied in float32
  (turns by multiples of 5 or 45 degrees, offsets up to 0, 100 or 3,000 m). Outside three
  contact epsilons of contact, collide's crossing must be coal's collision (or coal's
  distance within the epsilon), its apart or touching coal's no-collision at coal's
  distance (to 1e-7 of the coordinates), its containment no collision;
- winding number: a closed element turned and shrunk to 5-120% of another closed
  element's least width, put near the other's middle: containment must match the
  winding number of the inner vertices about the outer surface, apart must have no
  vertex of either inside the other;
- copies: an element and a copy of it beside it along an axis, from touching to 0.8 m
  apart, both moved by steps as an array of copies places them (facing triangles exactly
  opposite: ties that rounding decides), max_distance 0, 0.1 or 1 m: coal's distance, or
  +inf beyond max_distance and the contact epsilon;
- EPA: a near pair of convex closed elements, the second turned by 0.05 rad and moved by
  5 cm (normal draws): a penetration depth must be no more than coal's EPA on the two
  hulls (to EPA's own precision, 2e-5 m) where the separating axis theorem's directions
  decide the pair (`by_separating_axes`), no more than 1% deeper otherwise, with a
  curved element (those deeper than EPA are counted);
- in place: a closed element whose outside is known (`TriangleMesh.outward`) and a copy
  of it pasted in place or moved along a world axis by 0.1% or 30% of its extent, both
  posed by one float32 parent chain: its faces lie on the original's, facing the same
  way. Where the contact epsilon is under 1% of the element's least width along its
  face frame and coal's EPA on the two hulls is more than three epsilons, the pair must
  cross, as deep as EPA for convex elements `by_separating_axes` and at least as deep for
  other convex ones.

Prints, per model and oracle, the pairs checked and each disagreement.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

from collide_addon.core import mesh as mesh_module
from collide_addon.core.mesh import (
    APART,
    CROSSING,
    I_INSIDE_J,
    J_INSIDE_I,
    TriangleMesh,
    mesh_contacts,
    prepare_mesh,
)
from collide_dev.coal_oracle import (
    coal_convex_distance,
    coal_gap_disagreement,
    coal_mesh_disagreement,
)
from collide_dev.real_poses import (
    blender_pose,
    contact_reach,
    containment_disagreement,
    copy_beside,
    nudge,
    nudged_pair,
    posed,
    shrunk_inside,
)

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_core import near_pairs

PAIRS_PER_ROUND = 100
# coal's EPA on these hulls agreed with a brute-force separating axis test to 1.3e-5 m on
# 3,364 pairs of the three buildings' elements.
EPA_PRECISION = 2e-5
# A pair with a curved element (not `by_separating_axes`) may be this many times as deep
# as EPA: its bound's direction is tilted to a local least (`core.mesh._tilted_overlap`).
CURVED_EPA_RATIO = 1.01


def by_separating_axes(first: TriangleMesh, second: TriangleMesh) -> bool:
    """Whether `mesh_contacts` measures the two meshes along both's face normals and the
    crosses of their edges (`core.mesh._by_separating_axes`, as `_slot_contacts` asks)."""
    meshes = (first, second)
    normals = np.array([[mesh.normal_count for mesh in meshes]])
    edges = np.array([[len(mesh.few_directions) for mesh in meshes]]) - normals
    return bool(mesh_module._by_separating_axes(normals, edges)[0])


def decide(meshes, chosen: np.ndarray, matrices, max_distance: float):
    """`mesh_contacts` of the pairs of elements `chosen` (k, 2), posed by `matrices` (2 k
    (4, 4) matrices, each pair's two in turn), in one call."""
    count = len(chosen)
    return mesh_contacts(
        [meshes[index] for index in np.asarray(chosen).ravel()],
        np.array(matrices),
        np.arange(2 * count).reshape(count, 2),
        max_distance,
    )


def check_coal(raw, meshes, pairs, rng) -> tuple[int, list[str]]:
    """One round of the coal oracle: (pairs checked, disagreements)."""
    chosen = pairs[rng.choice(len(pairs), size=min(PAIRS_PER_ROUND, len(pairs)), replace=False)]
    matrices = np.concatenate(
        [
            nudged_pair(
                rng,
                raw[first][0],
                float(rng.choice([0.0, 100.0, 3000.0])),
                float(rng.choice([0.0, 1e-3, 0.03])),
                float(rng.choice([0, 1e-4, 0.02, 0.3])),
            )
            for first, _ in chosen
        ]
    )
    contacts = decide(meshes, chosen, matrices, 0.1)

    def disagreement(first, second, poses, relation, distance, reach, epsilon):
        return coal_mesh_disagreement(
            relation, distance, raw[first], raw[second], poses, reach, epsilon
        )

    return judged(raw, chosen, matrices, contacts, disagreement)


def judged(raw, chosen, matrices, contacts, disagreement) -> tuple[int, list[str]]:
    """The pairs of elements `chosen` (k, 2), posed by `matrices` (2 k), whose `contacts`
    lie farther than three contact epsilons from contact, judged by `disagreement(first,
    second, poses, relation, distance, reach, epsilon)` (None where it agrees): (pairs
    checked, disagreements)."""
    checked, wrong = 0, []
    for row, (first, second) in enumerate(chosen):
        poses = matrices[2 * row : 2 * row + 2]
        reach, epsilon = contact_reach(raw[first][0], raw[second][0], poses)
        distance, relation = contacts.distance[row], contacts.relation[row]
        if abs(distance) <= 3 * epsilon:
            continue
        checked += 1
        why = disagreement(first, second, poses, relation, distance, reach, epsilon)
        if why is not None:
            wrong.append(f"elements {first}, {second}: {why}")
    return checked, wrong


def check_copies(raw, meshes, rng) -> tuple[int, list[str]]:
    """One round of the copies oracle: (pairs checked, disagreements)."""
    chosen = rng.choice(len(meshes), size=PAIRS_PER_ROUND)
    matrices = np.concatenate([copy_beside(rng, raw[element][0]) for element in chosen])
    max_distance = float(rng.choice([0.0, 0.1, 1.0]))
    pairs = np.repeat(chosen, 2).reshape(-1, 2)
    contacts = decide(meshes, pairs, matrices, max_distance)

    def disagreement(element, _, poses, relation, distance, reach, epsilon):
        return coal_gap_disagreement(
            relation, distance, raw[element], raw[element], poses, max_distance, reach
        )

    return judged(raw, pairs, matrices, contacts, disagreement)


def check_winding(raw, meshes, rng) -> tuple[int, list[str]]:
    """One round of the winding-number oracle: (pairs checked, disagreements)."""
    closed = np.array([index for index, mesh in enumerate(meshes) if mesh.closed])
    chosen, matrices = [], []
    for _ in range(PAIRS_PER_ROUND):
        outer, inner = rng.choice(closed, 2, replace=False)
        chosen.append((outer, inner))
        matrices += [np.eye(4), shrunk_inside(rng, raw[outer][0], raw[inner][0])]
    contacts = decide(meshes, np.array(chosen), matrices, 0.0)
    checked, wrong = 0, []
    for row, (outer, inner) in enumerate(chosen):
        relation = contacts.relation[row]
        if relation not in (APART, I_INSIDE_J, J_INSIDE_I):
            continue
        checked += 1
        why = containment_disagreement(relation, raw[outer], raw[inner], matrices[2 * row + 1])
        if why is not None:
            wrong.append(f"elements {outer}, {inner}: {why}")
    return checked, wrong


def check_epa(raw, meshes, pairs, rng) -> tuple[int, int, list[str]]:
    """One round of the EPA oracle: (pairs checked, deeper with a curved element,
    disagreements)."""
    convex = np.array([mesh.convex for mesh in meshes])
    usable = pairs[convex[pairs].all(axis=1)]
    if not len(usable):
        return 0, 0, []
    chosen = usable[rng.choice(len(usable), size=min(PAIRS_PER_ROUND, len(usable)), replace=False)]
    matrices = []
    for first, _ in chosen:
        matrices += [np.eye(4), nudge(rng, raw[first][0].mean(axis=0), 0.05, 0.05)]
    contacts = decide(meshes, chosen, matrices, 0.0)
    checked, curved, wrong = 0, 0, []
    for row, (first, second) in enumerate(chosen):
        depth = -contacts.distance[row]
        if depth <= 0:
            continue
        checked += 1
        exact = -coal_convex_distance(raw[first][0], posed(raw[second][0], matrices[2 * row + 1]))
        if depth <= exact + EPA_PRECISION:
            continue
        if by_separating_axes(meshes[first], meshes[second]):
            wrong.append(f"elements {first}, {second}: depth {depth:.6g}, EPA {exact:.6g}")
        elif depth <= CURVED_EPA_RATIO * exact + EPA_PRECISION:
            curved += 1
        else:
            wrong.append(f"elements {first}, {second} (curved): depth {depth:.6g}, EPA {exact:.6g}")
    return checked, curved, wrong


def check_in_place(raw, meshes, rng) -> tuple[int, list[str]]:
    """One round of the in-place oracle: (pairs checked, disagreements)."""
    oriented = np.flatnonzero([mesh.outward != 0 for mesh in meshes])
    if not len(oriented):
        return 0, []
    chosen = rng.choice(oriented, size=PAIRS_PER_ROUND)
    matrices = []
    for element in chosen:
        pose = blender_pose(rng, float(rng.choice([0.0, 100.0, 3000.0])))
        move = np.eye(4)
        axis = rng.integers(3)
        move[axis, 3] = float(rng.choice([0.0, 1e-3, 0.3])) * np.ptp(raw[element][0][:, axis])
        matrices += [pose, pose @ move]
    contacts = decide(meshes, np.repeat(chosen, 2).reshape(-1, 2), matrices, 0.0)
    checked, wrong = 0, []
    for row, element in enumerate(chosen):
        poses = matrices[2 * row : 2 * row + 2]
        vertices = raw[element][0]
        _, epsilon = contact_reach(vertices, vertices, np.array(poses))
        mesh, depth = meshes[element], -contacts.distance[row]
        # Where the epsilon nears the element's width, so may its facets' (a 0.1 m column
        # 7.5 km out, with 8.7 mm facets and an epsilon of 7.5 mm).
        if 100.0 * epsilon >= np.ptp(mesh.face_bounds, axis=0).min():
            continue
        exact = -coal_convex_distance(posed(vertices, poses[0]), posed(vertices, poses[1]))
        if exact <= 3 * epsilon:
            continue
        checked += 1
        if contacts.relation[row] != CROSSING or depth <= 0:
            wrong.append(f"element {element}: relation {contacts.relation[row]}, EPA {exact:.6g}")
        elif mesh.convex and by_separating_axes(mesh, mesh) and abs(depth - exact) > EPA_PRECISION:
            wrong.append(f"element {element}: depth {depth:.6g}, EPA {exact:.6g}")
        elif mesh.convex and depth < exact - EPA_PRECISION:
            wrong.append(f"element {element}: depth {depth:.6g} below EPA {exact:.6g}")
    return checked, wrong


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--ifc-dir", type=Path, required=True)
    parser.add_argument("--rounds", type=int, default=20, help="rounds per model and oracle")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    models = sorted(args.ifc_dir.glob("*/model.npz"))
    if not models:
        parser.error(f"no */model.npz in {args.ifc_dir} (run bench-ifc --keep DIR first)")
    rng = np.random.default_rng(args.seed)
    failed = False
    for model in models:
        raw, pairs, _ = near_pairs(model)
        meshes = [prepare_mesh(*shape) for shape in raw]
        totals = {"coal": 0, "copies": 0, "winding": 0, "EPA": 0, "in place": 0}
        curved, disagreements = 0, []
        for _ in range(args.rounds):
            checked, wrong = check_coal(raw, meshes, pairs, rng)
            totals["coal"] += checked
            disagreements += [f"coal: {line}" for line in wrong]
            checked, wrong = check_copies(raw, meshes, rng)
            totals["copies"] += checked
            disagreements += [f"copies: {line}" for line in wrong]
            checked, wrong = check_winding(raw, meshes, rng)
            totals["winding"] += checked
            disagreements += [f"winding: {line}" for line in wrong]
            checked, deeper, wrong = check_epa(raw, meshes, pairs, rng)
            totals["EPA"] += checked
            curved += deeper
            disagreements += [f"EPA: {line}" for line in wrong]
            checked, wrong = check_in_place(raw, meshes, rng)
            totals["in place"] += checked
            disagreements += [f"in place: {line}" for line in wrong]
        checked = ", ".join(f"{name} {count}" for name, count in totals.items())
        print(
            f"{model.parent.name}: pairs checked: {checked}; deeper than EPA (within 1%) with a"
            f" curved element: {curved}; disagreements: {len(disagreements)}"
        )
        for line in disagreements:
            print(f"  {line}")
        failed |= bool(disagreements)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
