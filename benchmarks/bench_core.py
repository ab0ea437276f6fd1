"""collide's core against coal and python-fcl, measured in one run.

    python3 build.py bench            (or: .venv-core/bin/python benchmarks/bench_core.py)
    options: --sizes 1000,10000,100000 --repeats 5 --pairs 1000000 --skip-fcl-above 100000
             --mesh-only (section 5 alone) --ifcclash-result PATH --ifc-dir DIR

1. find_pairs vs DynamicAABBTreeCollisionManager (build + collide with the default
   narrow-phase callback, enough max contacts) of coal and python-fcl, on the seeded
   mixed scene (a third each boxes, spheres, capsules; cube of side (8n)^(1/3)).
   The pair sets are compared: python-fcl's exactly (it hands back its Python
   geometries), coal's by count plus coal's own verdict on each of our pairs.
2. pair_intersects / pair_distance throughput on 1,000,000 box-box pairs vs coal
   called per pair from Python (on a sample; per-pair cost is flat).
2b. pair_distance on dense box-box pairs (the near pairs a broad phase hands over):
   centres uniform in a 3 m cube, half-extents 0.2-1.0 m, random rotations, about a
   third penetrating; vs coal's distance per pair from Python; target 1.5 M pairs/s.
3. peak memory of find_pairs at the largest n (tracemalloc of numpy allocations).
4. a moving scene, as live mode sees it: n = 10,000 shapes of the mixed scene, each
   step moves every shape by up to 2% of the typical shape's size along each axis;
   find_pairs with a CoherentBounds kept across steps vs coal's manager `update()` +
   `collide()` (the new transforms are handed to coal before the clock starts). Mean
   per step over 30 steps; the pair sets are compared at every step. Also timed: the
   live path, find_contacts (the pairs and the exact distance of each hit) with its own
   CoherentBounds.
5. mesh_contacts (one call) vs coal's BVHModelOBBRSS distance + collide per pair, on
   pairs of small meshes, of 5k-triangle meshes, and on the FZK-Haus fixture
   (tests/data/ifc/: 82 elements, every pair whose bounds come within 5 cm, as the
   clearance set of benchmarks/bench_ifc.py needs). With --ifcclash-result (the
   ifcclash.json that `benchmarks/bench_ifc.py --models FZK --keep DIR` keeps) it also
   prints IfcClash's clash calls on the same model. With --ifc-dir DIR (bench_ifc.py's
   --keep DIR) it first times the exact stage on each kept model, on the threads and on
   one, beside IfcClash's clash calls there.
Best of `repeats` wall-clock runs each, one core (the machine's BLAS is not used), but
mesh_contacts, which decides large calls on `core.threads`' threads (one per core).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import tracemalloc
from functools import partial
from pathlib import Path

import coal
import fcl
import numpy as np

from collide_addon.core import (
    CROSSING,
    KIND_BOX,
    KIND_SPHERE,
    TOUCHING,
    CoherentBounds,
    ShapeBatch,
    find_contacts,
    find_pairs,
    mesh_contacts,
    pair_distance,
    pair_intersects,
    prepare_mesh,
    threads,
)
from collide_addon.core.contact import contact_epsilon
from collide_dev.coal_oracle import (
    coal_mesh,
    coal_mesh_collide,
    coal_mesh_distance,
    coal_object,
)
from collide_dev.mesh_shapes import box_mesh, torus, uv_sphere
from collide_dev.synthetic import mixed_scene, random_rotations


def best_of(repeats: int, function):
    """(best seconds, last result) of `repeats` calls."""
    best = float("inf")
    result = None
    for _ in range(repeats):
        start = time.perf_counter()
        result = function()
        best = min(best, time.perf_counter() - start)
    return best, result


def coal_objects(batch: ShapeBatch) -> list:
    return [coal_object(batch, index) for index in range(len(batch))]


def fcl_objects(batch: ShapeBatch) -> tuple[list, dict]:
    objects, index_of = [], {}
    for index in range(len(batch)):
        kind = batch.kinds[index]
        if kind == KIND_BOX:
            geometry = fcl.Box(*(2.0 * batch.half_extents[index]))
        elif kind == KIND_SPHERE:
            geometry = fcl.Sphere(float(batch.radii[index]))
        else:
            geometry = fcl.Capsule(
                float(batch.radii[index]), float(2 * batch.half_extents[index, 2])
            )
        index_of[id(geometry)] = index
        objects.append(
            fcl.CollisionObject(
                geometry, fcl.Transform(batch.rotations[index], batch.centers[index])
            )
        )
    return objects, index_of


def coal_collide_all(objects: list) -> int:
    manager = coal.DynamicAABBTreeCollisionManager()
    for obj in objects:
        manager.registerObject(obj)
    manager.setup()
    callback = coal.CollisionCallBackDefault()
    callback.data.request.num_max_contacts = 10 * len(objects)
    manager.collide(callback)
    return callback.data.result.numContacts()


def fcl_collide_all(objects: list):
    manager = fcl.DynamicAABBTreeCollisionManager()
    manager.registerObjects(objects)
    manager.setup()
    data = fcl.CollisionData(request=fcl.CollisionRequest(num_max_contacts=10 * len(objects)))
    manager.collide(data, fcl.defaultCollisionCallback)
    return data.result.contacts


def coal_collides(objects: list, i: int, j: int) -> bool:
    request = coal.CollisionRequest()
    result = coal.CollisionResult()
    return coal.collide(objects[i], objects[j], request, result) > 0


def bench_find_pairs(sizes: list[int], repeats: int, skip_fcl_above: int) -> list[dict]:
    rows = []
    for count in sizes:
        batch = mixed_scene(np.random.default_rng(count), count)
        ours_time, pairs = best_of(repeats, lambda batch=batch: find_pairs(batch))
        objects = coal_objects(batch)
        coal_time, coal_count = best_of(repeats, lambda objects=objects: coal_collide_all(objects))
        ours_set = {tuple(p) for p in pairs.tolist()}
        coal_rejects = sum(not coal_collides(objects, i, j) for i, j in ours_set)
        row = {
            "n": count,
            "pairs": len(pairs),
            "ours_s": ours_time,
            "coal_s": coal_time,
            "coal_pairs": coal_count,
            "coal_rejects_ours": coal_rejects,
        }
        if count <= skip_fcl_above:
            fcl_list, index_of = fcl_objects(batch)
            fcl_time, contacts = best_of(
                repeats, lambda fcl_list=fcl_list: fcl_collide_all(fcl_list)
            )
            fcl_set = {tuple(sorted((index_of[id(c.o1)], index_of[id(c.o2)]))) for c in contacts}
            row.update(
                fcl_s=fcl_time,
                fcl_only=len(fcl_set - ours_set),
                ours_only_vs_fcl=len(ours_set - fcl_set),
            )
        rows.append(row)
        print_progress(f"find_pairs n={count}: done")
    return rows


def box_pairs(count: int) -> tuple[ShapeBatch, np.ndarray, np.ndarray]:
    """`count` box-box pairs from a dense box scene: near and far pairs mixed."""
    rng = np.random.default_rng(1)
    boxes = 20000
    batch = ShapeBatch.boxes(
        rng.uniform(0, 30, (boxes, 3)),
        random_rotations(rng, boxes),
        rng.uniform(0.2, 1.0, (boxes, 3)),
    )
    near = rng.integers(0, boxes, count)
    # Half the pairs are neighbours (box k and its nearest few in a sort by x), half random.
    order = np.argsort(batch.centers[:, 0])
    rank = np.empty(boxes, dtype=np.int64)
    rank[order] = np.arange(boxes)
    neighbour = order[np.clip(rank[near] + rng.integers(1, 4, count), 0, boxes - 1)]
    far = rng.integers(0, boxes, count)
    other = np.where(np.arange(count) % 2 == 0, neighbour, far)
    other = np.where(other == near, (other + 1) % boxes, other)
    return batch, near, other


def bench_pair_throughput(count: int, repeats: int) -> list[dict]:
    batch, i, j = box_pairs(count)
    intersects_time, hits = best_of(repeats, lambda: pair_intersects(batch, i, j))
    distance_time, result = best_of(repeats, lambda: pair_distance(batch, i, j))
    sample = min(count, 20000)
    objects = coal_objects(batch)

    def coal_per_pair_collide():
        request = coal.CollisionRequest()
        for a, b in zip(i[:sample].tolist(), j[:sample].tolist(), strict=True):
            coal.collide(objects[a], objects[b], request, coal.CollisionResult())

    def coal_per_pair_distance():
        request = coal.DistanceRequest()
        for a, b in zip(i[:sample].tolist(), j[:sample].tolist(), strict=True):
            coal.distance(objects[a], objects[b], request, coal.DistanceResult())

    coal_collide_time, _ = best_of(repeats, coal_per_pair_collide)
    coal_distance_time, _ = best_of(repeats, coal_per_pair_distance)
    print_progress("pair throughput: done")
    return [
        {
            "what": "pair_intersects",
            "pairs": count,
            "hits": int(hits.sum()),
            "ours_per_s": count / intersects_time,
            "coal_per_s": sample / coal_collide_time,
        },
        {
            "what": "pair_distance",
            "pairs": count,
            "hits": int((result.distance <= 0).sum()),
            "ours_per_s": count / distance_time,
            "coal_per_s": sample / coal_distance_time,
        },
    ]


# The dense narrow-phase target, in pairs per second.
DENSE_TARGET_PER_S = 1.5e6


def dense_box_pairs(count: int) -> tuple[ShapeBatch, np.ndarray, np.ndarray]:
    """`count` pairs (i != j) of 10,000 boxes whose centres are uniform in a 3 m cube,
    half-extents 0.2-1.0 m, random rotations: about a third of the pairs penetrate."""
    rng = np.random.default_rng(3)
    boxes = 10_000
    batch = ShapeBatch.boxes(
        rng.uniform(0.0, 3.0, (boxes, 3)),
        random_rotations(rng, boxes),
        rng.uniform(0.2, 1.0, (boxes, 3)),
    )
    i = rng.integers(0, boxes, count)
    j = (i + rng.integers(1, boxes, count)) % boxes
    return batch, i, j


def bench_dense_pairs(count: int, repeats: int) -> dict:
    """pair_distance on dense box-box pairs vs coal's distance called per pair."""
    batch, i, j = dense_box_pairs(count)
    distance_time, result = best_of(repeats, lambda: pair_distance(batch, i, j))
    sample = min(count, 20000)
    objects = coal_objects(batch)

    def coal_per_pair_distance():
        request = coal.DistanceRequest()
        for a, b in zip(i[:sample].tolist(), j[:sample].tolist(), strict=True):
            coal.distance(objects[a], objects[b], request, coal.DistanceResult())

    coal_time, _ = best_of(repeats, coal_per_pair_distance)
    print_progress("dense pairs: done")
    return {
        "pairs": count,
        "penetrating": float((result.distance < 0).mean()),
        "ours_per_s": count / distance_time,
        "coal_per_s": sample / coal_time,
    }


def print_dense_pairs(count: int, repeats: int) -> None:
    row = bench_dense_pairs(count, repeats)
    print(
        f"dense box-box pair_distance, {row['pairs']:,} pairs, "
        f"{row['penetrating']:.0%} penetrating (coal: distance per pair from Python)"
    )
    print(
        f"collide {row['ours_per_s']:,.0f} pairs/s (target {DENSE_TARGET_PER_S:,.0f}), "
        f"coal {row['coal_per_s']:,.0f} pairs/s, speed-up "
        f"{row['ours_per_s'] / row['coal_per_s']:.1f}"
    )
    print()


def bench_moving_scene(count: int, steps: int = 30) -> dict:
    """Mean time per step of find_pairs with a CoherentBounds and of coal's
    DynamicAABBTreeCollisionManager update + collide, on a scene that moves a little."""
    rng = np.random.default_rng(11)
    batch = mixed_scene(rng, count)
    objects = coal_objects(batch)
    manager = coal.DynamicAABBTreeCollisionManager()
    for obj in objects:
        manager.registerObject(obj)
    manager.setup()
    coherent = CoherentBounds()
    live_coherent = CoherentBounds()
    ours_total = coal_total = live_total = 0.0
    mismatches = live_differs = 0
    lo, hi = batch.aabbs()
    step = 0.02 * np.median(hi - lo)  # shapes only move: their sizes stay
    for _ in range(steps):
        centers = batch.centers + rng.uniform(-step, step, (count, 3))
        batch = ShapeBatch(batch.kinds, centers, batch.rotations, batch.half_extents, batch.radii)
        start = time.perf_counter()
        pairs = find_pairs(batch, coherent=coherent)
        ours_total += time.perf_counter() - start
        start = time.perf_counter()
        live_pairs, _ = find_contacts(batch, coherent=live_coherent)
        live_total += time.perf_counter() - start
        live_differs += int(not np.array_equal(live_pairs, pairs))
        for index, obj in enumerate(objects):
            obj.setTransform(coal.Transform3s(batch.rotations[index], batch.centers[index]))
            obj.computeAABB()
        start = time.perf_counter()
        manager.update()
        callback = coal.CollisionCallBackDefault()
        callback.data.request.num_max_contacts = 10 * count
        manager.collide(callback)
        coal_total += time.perf_counter() - start
        mismatches += abs(callback.data.result.numContacts() - len(pairs))
    print_progress("moving scene: done")
    return {
        "n": count,
        "steps": steps,
        "pairs": len(pairs),
        "ours_s": ours_total / steps,
        "coal_s": coal_total / steps,
        "live_s": live_total / steps,
        "live_differs": live_differs,
        "rebuilds": coherent.rebuilds,
        "count_mismatches": mismatches,
    }


def peak_memory(count: int) -> float:
    batch = mixed_scene(np.random.default_rng(count), count)
    tracemalloc.start()
    find_pairs(batch)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return peak / 2**20


def mesh_pairs(shapes: list, count: int, seed: int):
    """`count` pairs of the meshes `shapes` ((vertices, triangles) each), each pair's
    second mesh placed so that the pair crosses or lies a few centimetres apart:
    (meshes (2 count,), matrices (2 count, 4, 4), pairs (count, 2))."""
    rng = np.random.default_rng(seed)
    prepared = [prepare_mesh(*shape) for shape in shapes]
    choice = rng.integers(0, len(shapes), 2 * count)
    matrices = np.tile(np.eye(4), (2 * count, 1, 1))
    matrices[:, :3, :3] = random_rotations(rng, 2 * count)
    matrices[0::2, :3, 3] = rng.uniform(0.0, 20.0 * count ** (1 / 3), (count, 3))
    size = np.array([np.ptp(prepared[k].vertices, axis=0).max() for k in choice])
    direction = rng.normal(size=(count, 3))
    direction /= np.linalg.norm(direction, axis=1)[:, None]
    # Centres about one mesh size apart: some pairs cross, others miss by a little.
    reach = 0.45 * (size[0::2] + size[1::2]) * rng.uniform(0.8, 1.2, count)
    matrices[1::2, :3, 3] = matrices[0::2, :3, 3] + direction * reach[:, None]
    pairs = np.arange(2 * count).reshape(count, 2)
    return [prepared[k] for k in choice], [shapes[k] for k in choice], matrices, pairs


def bench_mesh_contacts(label: str, shapes: list, count: int, repeats: int) -> dict:
    meshes, raw, matrices, pairs = mesh_pairs(shapes, count, seed=count)
    ours_time, result = best_of(repeats, lambda: mesh_contacts(meshes, matrices, pairs, 0.05))
    objects = [coal_mesh(*shape, matrix) for shape, matrix in zip(raw, matrices, strict=True)]

    def coal_per_pair():
        return [
            (
                coal_mesh_distance(objects[a], objects[b])[0],
                coal_mesh_collide(objects[a], objects[b]),
            )
            for a, b in pairs.tolist()
        ]

    coal_time, coal_results = best_of(repeats, coal_per_pair)
    coal_distance = np.array([distance for distance, _ in coal_results])
    coal_hit = np.array([hit for _, hit in coal_results])
    meets = np.isin(result.relation, (TOUCHING, CROSSING))
    separated = (result.distance > 1e-5) & np.isfinite(result.distance)
    worst = np.abs(result.distance[separated] - coal_distance[separated]).max(initial=0.0)
    print_progress(f"mesh contacts ({label}): done")
    return {
        "what": label,
        "pairs": count,
        "crossing": int((result.relation == CROSSING).sum()),
        "ours_per_s": count / ours_time,
        "coal_per_s": count / coal_time,
        "verdict_mismatches": int((meets != coal_hit).sum()),
        "worst_distance_error": float(worst),
    }


FZK_FIXTURE = (
    Path(__file__).resolve().parent.parent / "tests" / "data" / "ifc" / "ac20-fzk-haus.npz"
)
# The widest clash set of bench_ifc.py (clearance 5 cm) needs every pair this close.
FZK_CLEARANCE = 0.05


def near_pairs(model: Path = FZK_FIXTURE):
    """The meshes of a model's elements (the FZK-Haus fixture, or an .npz of
    benchmarks/ifc_to_mesh.py) and the pairs whose bounds come within the clearance:
    (raw meshes [(vertices (v, 3), triangles (t, 3))], pairs (m, 2), max_distance)."""
    data = np.load(model)
    vertex_offsets, triangle_offsets = data["vertex_offsets"], data["triangle_offsets"]
    raw = [
        (
            data["vertices"][vertex_offsets[k] : vertex_offsets[k + 1]],
            data["triangles"][triangle_offsets[k] : triangle_offsets[k + 1]],
        )
        for k in range(len(data["names"]))
    ]
    lo = np.array([vertices.min(axis=0) for vertices, _ in raw])
    hi = np.array([vertices.max(axis=0) for vertices, _ in raw])
    grow = FZK_CLEARANCE + float(contact_epsilon(np.r_[lo, hi]).max())
    first, second = np.triu_indices(len(raw), 1)
    near = ((lo[first] - grow <= hi[second]) & (lo[second] <= hi[first] + grow)).all(axis=1)
    return raw, np.stack([first[near], second[near]], axis=1), grow


def bench_fzk(repeats: int, ifcclash_result: Path | None) -> dict:
    """mesh_contacts on the FZK-Haus fixture's near pairs (meshes prepared beforehand, as
    a report run caches them) vs coal per pair, and IfcClash's recorded clash calls."""
    raw, pairs, max_distance = near_pairs()
    meshes = [prepare_mesh(*shape) for shape in raw]
    matrices = np.tile(np.eye(4), (len(meshes), 1, 1))
    ours_time, _ = best_of(repeats, lambda: mesh_contacts(meshes, matrices, pairs, max_distance))
    objects = [coal_mesh(*shape, np.eye(4)) for shape in raw]

    def coal_per_pair():
        for a, b in pairs.tolist():
            coal_mesh_distance(objects[a], objects[b])
            coal_mesh_collide(objects[a], objects[b])

    coal_time, _ = best_of(repeats, coal_per_pair)
    row = {"pairs": len(pairs), "ours_s": ours_time, "coal_s": coal_time}
    if ifcclash_result is not None:
        sets = json.loads(ifcclash_result.read_text())["sets"]
        row["ifcclash_s"] = {name: sets[name]["clash_seconds"] for name in sets}
    print_progress("mesh contacts (FZK-Haus): done")
    return row


def bench_kept_models(directory: Path, repeats: int) -> None:
    """mesh_contacts on each model bench_ifc.py kept in `directory` (DIR/MODEL/model.npz,
    every pair within the clearance, as one call for the three clash sets), on the
    threads `core.threads` allows and on one, beside IfcClash's three clash calls
    (DIR/MODEL/ifcclash.json)."""
    print(f"models kept in {directory}: collide's exact stage against IfcClash's clash calls")
    for model in sorted(directory.glob("*/model.npz")):
        raw, pairs, max_distance = near_pairs(model)
        meshes = [prepare_mesh(*shape) for shape in raw]
        matrices = np.tile(np.eye(4), (len(meshes), 1, 1))
        times = {}
        for workers in (threads.MAX_WORKERS, 1):
            cap, threads.MAX_WORKERS = threads.MAX_WORKERS, workers
            try:
                times[workers], _ = best_of(
                    repeats, partial(mesh_contacts, meshes, matrices, pairs, max_distance)
                )
            finally:
                threads.MAX_WORKERS = cap
        sets = json.loads((model.parent / "ifcclash.json").read_text())["sets"]
        ifcclash = sum(sets[name]["clash_seconds"] for name in sets)
        ours = times[threads.MAX_WORKERS]
        print(
            f"{model.parent.name}: {len(raw)} elements, {len(pairs)} pairs; collide {ours:.2f} s"
            f" ({times[1]:.2f} s on one thread), IfcClash {ifcclash:.3f} s: ratio"
            f" {ours / ifcclash:.1f}"
        )
    print()


def report_mesh_contacts(repeats: int, ifcclash_result: Path | None = None) -> None:
    """Print section 5: mesh_contacts against coal's BVH meshes per pair."""
    small = [
        box_mesh([-0.5, -0.5, -0.5], [0.5, 0.5, 0.5]),
        box_mesh([-1.0, -0.1, -1.5], [1.0, 0.1, 1.5]),
        uv_sphere(0.5, 6, 8),
        torus(0.6, 0.2, 8, 6),
    ]
    large = [uv_sphere(1.0, 40, 60), torus(1.2, 0.3, 60, 40)]
    rows = [
        bench_mesh_contacts("small meshes", small, 2000, repeats),
        bench_mesh_contacts("5k-tri meshes", large, 50, max(1, repeats // 3)),
    ]
    print("mesh_contacts (one call) vs coal BVHModelOBBRSS distance + collide per pair")
    print(
        f"{'':14} {'pairs':>6} {'crossing':>8} {'collide pairs/s':>16} {'coal pairs/s':>13} "
        f"{'speed-up':>9}  agreement"
    )
    for row in rows:
        print(
            f"{row['what']:14} {row['pairs']:>6} {row['crossing']:>8} {row['ours_per_s']:16,.0f} "
            f"{row['coal_per_s']:13,.0f} {row['ours_per_s'] / row['coal_per_s']:9.3f}  "
            f"{row['verdict_mismatches']} meets-vs-collide mismatches, worst distance "
            f"error {row['worst_distance_error']:.1e}"
        )
    fzk = bench_fzk(max(1, repeats // 3), ifcclash_result)
    print(
        f"FZK-Haus fixture, {fzk['pairs']} pairs within {FZK_CLEARANCE} m: collide's exact stage "
        f"{fzk['ours_s']:.2f} s, coal {fzk['coal_s']:.2f} s, speed-up "
        f"{fzk['coal_s'] / fzk['ours_s']:.3f}"
    )
    if "ifcclash_s" in fzk:
        total = sum(fzk["ifcclash_s"].values())
        per_set = ", ".join(
            f"{name} {seconds:.2f} s" for name, seconds in fzk["ifcclash_s"].items()
        )
        print(
            f"IfcClash's clash calls on the same model ({per_set}): {total:.2f} s in all; "
            f"collide's one call covers the three sets: ratio {fzk['ours_s'] / total:.1f}"
        )
    else:
        print(
            "(IfcClash's clash time: pass --ifcclash-result DIR/.../ifcclash.json from bench_ifc)"
        )
    print()


def print_progress(message: str) -> None:
    print(f"[bench] {message}", file=sys.stderr, flush=True)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sizes", default="1000,10000,100000")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--pairs", type=int, default=1_000_000)
    parser.add_argument("--skip-fcl-above", type=int, default=100_000)
    parser.add_argument("--mesh-only", action="store_true", help="run section 5 alone")
    parser.add_argument(
        "--ifcclash-result",
        type=Path,
        help="IfcClash's result on the FZK-Haus (ifcclash.json of bench_ifc.py --keep DIR)",
    )
    parser.add_argument(
        "--ifc-dir",
        type=Path,
        help="also time the exact stage on every model bench_ifc.py --keep DIR kept",
    )
    args = parser.parse_args(argv)
    if args.ifc_dir:
        bench_kept_models(args.ifc_dir, args.repeats)
    if args.mesh_only:
        print(f"coal {coal.__version__}, numpy {np.__version__}; best of {args.repeats}\n")
        report_mesh_contacts(args.repeats, args.ifcclash_result)
        return
    sizes = [int(size) for size in args.sizes.split(",")]

    print(f"coal {coal.__version__}, python-fcl, numpy {np.__version__}; best of {args.repeats}\n")
    rows = bench_find_pairs(sizes, args.repeats, args.skip_fcl_above)
    print("find_pairs vs DynamicAABBTreeCollisionManager (build + collide, narrow phase)")
    print(
        f"{'n':>8} {'pairs':>8} {'collide s':>10} {'coal s':>9} {'ratio':>7} "
        f"{'fcl s':>9} {'ratio':>7}  pair sets"
    )
    for row in rows:
        fcl_part = (
            f"{row['fcl_s']:9.4f} {row['ours_s'] / row['fcl_s']:7.3f}"
            if "fcl_s" in row
            else f"{'-':>9} {'-':>7}"
        )
        agreement = f"coal found {row['coal_pairs']}, rejects {row['coal_rejects_ours']} of ours"
        if "fcl_only" in row:
            agreement += f"; fcl-only {row['fcl_only']}, ours-only {row['ours_only_vs_fcl']}"
        print(
            f"{row['n']:>8} {row['pairs']:>8} {row['ours_s']:10.4f} {row['coal_s']:9.4f} "
            f"{row['ours_s'] / row['coal_s']:7.3f} {fcl_part}  {agreement}"
        )
    print("(ratio = collide time / peer time; <= 1.0 means collide is as fast or faster)\n")

    print(f"box-box pair throughput, {args.pairs:,} pairs (coal: per pair from Python)")
    print(f"{'':16} {'collide pairs/s':>16} {'coal pairs/s':>13} {'speed-up':>9}")
    for row in bench_pair_throughput(args.pairs, args.repeats):
        print(
            f"{row['what']:16} {row['ours_per_s']:16,.0f} {row['coal_per_s']:13,.0f} "
            f"{row['ours_per_s'] / row['coal_per_s']:9.1f}"
        )
    print()
    print_dense_pairs(args.pairs, args.repeats)
    moving = bench_moving_scene(10_000)
    print(
        f"moving scene, n={moving['n']:,}, mean per step over {moving['steps']} steps "
        f"(collide: find_pairs with CoherentBounds; coal: manager update + collide)"
    )
    print(
        f"collide {moving['ours_s'] * 1e3:.2f} ms, coal {moving['coal_s'] * 1e3:.2f} ms, "
        f"ratio {moving['ours_s'] / moving['coal_s']:.3f}; {moving['pairs']} pairs at the last "
        f"step, pair counts differ by {moving['count_mismatches']} over all steps; "
        f"{moving['rebuilds']} rebuilds"
    )
    print(
        f"live path (find_contacts: pairs and exact distances on hits) "
        f"{moving['live_s'] * 1e3:.2f} ms, "
        f"ratio to coal {moving['live_s'] / moving['coal_s']:.3f}; its pairs differ from "
        f"find_pairs' at {moving['live_differs']} steps"
    )
    print()
    report_mesh_contacts(args.repeats, args.ifcclash_result)
    largest = max(sizes)
    print(
        f"peak memory of find_pairs at n={largest:,}: {peak_memory(largest):.0f} MiB (tracemalloc)"
    )


if __name__ == "__main__":
    main()
