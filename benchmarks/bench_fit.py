"""Cost of the first Detect when every object has its own mesh (bpy wheel).

    .venv/bin/python benchmarks/bench_fit.py [--count N] [--small] [--profile]
        [--save FILE] [--compare FILE] [--blend FILE [--tiles N] [--mesh]]

Builds `--count` (default 1,000) objects, each with its own mesh of 500-5,000 vertices:
seeded superellipsoids (boxes with rounded edges, spheres, cylinders, pills and shapes
between) stretched, tapered, bent and roughened, about 2.8 M vertices in all; with
`--small`, the same shapes with 10-86 vertices each, as the elements of a BIM import
(`--count 20000 --small`: a 20,000-element building's first Detect). Runs
`bpy.ops.collide.detect()` once and prints its wall time split into reading geometry,
fitting and the rest; then times the looseness of every proxy (which the panel measures
when it shows one: the meshes' triangles and volumes), and fits the same point sets in
the core alone.

Fit quality: the looseness of each fit (fit volume / mesh volume) is summarised;
`--save FILE` writes the fit volumes (.npy) and `--compare FILE` prints the ratio of
this run's volumes to a saved run's (median and worst), e.g. before and after a change
to `core/fit.py`. `--profile` runs the Detect under cProfile and prints the top entries.

`--blend FILE` times the first Detect of a saved scene instead, e.g. a real building
(the model.blend that `benchmarks/bench_ifc.py --keep DIR` keeps: one object per element,
in world coordinates), and prints only its split. `--tiles N` first lays out N copies of
that scene side by side, copy t turned by 7t degrees about z and stored, as an IFC
import stores elements, as its own meshes in world coordinates: a campus of one building
(AC11's 699 elements times 29: a 20,271-element BIM import). No element of one copy is a
translation of another copy's, so each copy is fitted anew; within a copy, repeated
elements stay repeated, as in the building. `--mesh` sets the panel's *Geometry* to
*Mesh* first: the Detect then also decides the candidate pairs on their triangles, and
that stage's time is printed too.

Target: the first Detect of 1,000 objects <= 2 s (the default scene).
"""

import argparse
import cProfile
import os
import pstats
import sys
import time

import bpy
import numpy as np

import collide_addon
from collide_addon.blender import scene as scene_module
from collide_addon.blender import session
from collide_addon.core import fit as fit_module

TARGET_SECONDS = 2.0


def superellipsoid(rng: np.random.Generator, small: bool) -> tuple[np.ndarray, list]:
    """Vertices (v, 3) and quad/triangle faces of one random closed shape: 500-5,000
    vertices, or 10-86 when `small`."""
    rings = int(rng.integers(3, 9) if small else rng.integers(20, 70))
    segments = int(rng.integers(4, 13) if small else rng.integers(24, 100))
    # Exponents near 0 give flat faces and sharp edges (box-like), 1 round (sphere).
    vertical, horizontal = rng.choice([0.1, 0.3, 0.6, 1.0, 1.0], size=2)
    latitude = np.linspace(-np.pi / 2, np.pi / 2, rings + 1)[1:-1]
    longitude = np.linspace(-np.pi, np.pi, segments, endpoint=False)
    lat, lon = np.meshgrid(latitude, longitude, indexing="ij")

    def power(value, exponent):
        return np.sign(value) * np.abs(value) ** exponent

    x = power(np.cos(lat), vertical) * power(np.cos(lon), horizontal)
    y = power(np.cos(lat), vertical) * power(np.sin(lon), horizontal)
    z = power(np.sin(lat), vertical)
    body = np.column_stack((x.ravel(), y.ravel(), z.ravel()))
    points = np.vstack((body, [[0.0, 0.0, -1.0], [0.0, 0.0, 1.0]]))
    points *= rng.uniform(0.2, 3.0, 3)  # stretch: rods, slabs, blobs
    height = np.ptp(points[:, 2]) or 1.0
    taper = 1.0 + rng.uniform(-0.5, 0.5) * points[:, 2] / height
    points[:, :2] *= taper[:, None]
    points[:, 0] += rng.uniform(-0.3, 0.3) * (points[:, 2] / height) ** 2 * height  # bend
    points += rng.normal(scale=0.01 * np.ptp(points, axis=0).max(), size=points.shape)
    bottom, top = len(body), len(body) + 1
    grid = np.arange(len(body)).reshape(rings - 1, segments)
    faces = []
    for ring in range(rings - 2):
        for k in range(segments):
            following = (k + 1) % segments
            faces.append(
                (grid[ring, k], grid[ring, following], grid[ring + 1, following], grid[ring + 1, k])
            )
    for k in range(segments):
        following = (k + 1) % segments
        faces.append((bottom, grid[0, following], grid[0, k]))
        faces.append((top, grid[-1, k], grid[-1, following]))
    return points, faces


def build_scene(count: int, seed: int, small: bool) -> list[np.ndarray]:
    """`count` objects with their own meshes, spread on a grid with some overlaps;
    returns each mesh's vertices (v, 3)."""
    bpy.ops.wm.read_homefile(use_empty=True)
    rng = np.random.default_rng(seed)
    scene = bpy.context.scene
    side = int(np.ceil(count ** (1.0 / 3.0)))
    clouds = []
    for index in range(count):
        points, faces = superellipsoid(rng, small)
        mesh = bpy.data.meshes.new(f"Mesh{index:05d}")
        mesh.from_pydata(points.tolist(), [], faces)
        obj = bpy.data.objects.new(f"Object{index:05d}", mesh)
        obj.location = np.array(np.unravel_index(index, (side, side, side))) * 6.0
        obj.rotation_euler = rng.uniform(-np.pi, np.pi, 3)
        scene.collection.objects.link(obj)
        # What Blender stores (float32), as the add-on reads it.
        clouds.append(points.astype(np.float32).astype(np.float64))
    bpy.context.view_layer.update()
    return clouds


def tile_scene(tiles: int) -> None:
    """Add `tiles` - 1 copies of every mesh object of the open scene beside it: copy t
    turned by 7t degrees about z and moved 200t m along x, each object with its own mesh
    in world coordinates (identity matrix), in the original's collections."""
    originals = [obj for obj in bpy.context.scene.objects if obj.type == "MESH"]
    for tile in range(1, tiles):
        angle = np.radians(7.0 * tile)
        turn = np.array(
            [[np.cos(angle), -np.sin(angle), 0.0], [np.sin(angle), np.cos(angle), 0.0], [0, 0, 1]]
        )
        for obj in originals:
            mesh = obj.data.copy()
            local = np.empty(3 * len(mesh.vertices))
            mesh.vertices.foreach_get("co", local)
            matrix = np.array(obj.matrix_world)
            world = local.reshape(-1, 3) @ matrix[:3, :3].T + matrix[:3, 3]
            world = world @ turn.T + [200.0 * tile, 0.0, 0.0]
            mesh.vertices.foreach_set("co", world.ravel())
            mesh.update()
            copy = bpy.data.objects.new(f"{obj.name}.{tile:02d}", mesh)
            for collection in obj.users_collection:
                collection.objects.link(copy)
    bpy.context.view_layer.update()


class Timed:
    """Wraps a module function, adding its wall time to `seconds` and its process CPU
    time to `cpu_seconds` (on a shared machine the CPU time varies less)."""

    def __init__(self, module, name: str):
        self.module, self.name = module, name
        self.function = getattr(module, name)
        self.seconds = self.cpu_seconds = 0.0

    def __enter__(self):
        def timed(*args, **kwargs):
            start, cpu_start = time.perf_counter(), time.process_time()
            try:
                return self.function(*args, **kwargs)
            finally:
                self.seconds += time.perf_counter() - start
                self.cpu_seconds += time.process_time() - cpu_start

        setattr(self.module, self.name, timed)
        return self

    def __exit__(self, *exc):
        setattr(self.module, self.name, self.function)


def first_detect(profile: bool) -> dict:
    """Wall time of one Detect, split into reading geometry, fitting and the rest."""
    # Older versions fitted one mesh at a time (`fit_shape`): timed the same way, so
    # this benchmark also measures the code before a change.
    fitter = "fit_shapes" if hasattr(scene_module, "fit_shapes") else "fit_shape"
    with Timed(scene_module, "read_geometry") as read, Timed(scene_module, fitter) as fit:
        profiler = cProfile.Profile() if profile else None
        start, cpu_start = time.perf_counter(), time.process_time()
        if profiler:
            profiler.enable()
        result = bpy.ops.collide.detect()
        if profiler:
            profiler.disable()
        total, cpu = time.perf_counter() - start, time.process_time() - cpu_start
    assert result == {"FINISHED"}, result
    if profiler:
        pstats.Stats(profiler, stream=sys.stdout).sort_stats("cumulative").print_stats(25)
    return {
        "total": total,
        "read": read.seconds,
        "fit": fit.seconds,
        "cpu": cpu,
        "read cpu": read.cpu_seconds,
        "fit cpu": fit.cpu_seconds,
    }


def print_first_detect(times: dict, target: bool) -> None:
    rest = times["total"] - times["read"] - times["fit"]
    met = "met" if times["total"] <= TARGET_SECONDS else "not met"
    against = f" (target <= {TARGET_SECONDS} s: {met})" if target else ""
    print(
        f"first Detect: {times['total']:.2f} s = reading geometry {times['read']:.2f} s"
        f" + fitting {times['fit']:.2f} s + rest {rest:.2f} s{against}"
    )
    print(
        f"  CPU time: {times['cpu']:.2f} s = reading geometry {times['read cpu']:.2f} s"
        f" + fitting {times['fit cpu']:.2f} s + rest"
        f" {times['cpu'] - times['read cpu'] - times['fit cpu']:.2f} s;"
        f" load average {os.getloadavg()[0]:.1f}"
    )


def measured_looseness() -> np.ndarray:
    """The looseness of every proxy of the last Detect, timed: the panel measures the
    meshes' volumes when it shows one (older code measured them all in the Detect)."""
    scene_session = session.session_for(bpy.context.scene)
    proxies = scene_session.proxies
    if not hasattr(scene_session.reader, "looseness"):
        return proxies.looseness
    start = time.perf_counter()
    looseness = scene_session.reader.looseness(proxies, np.arange(len(proxies.names)))
    print(
        f"  then the looseness of all {len(looseness)} proxies (the meshes' triangles and"
        f" volumes, not part of Detect): {time.perf_counter() - start:.2f} s"
    )
    return looseness


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--count", type=int, default=1_000)
    parser.add_argument("--small", action="store_true", help="10-86 vertices per mesh")
    parser.add_argument("--seed", type=int, default=20261123)
    parser.add_argument("--profile", action="store_true")
    parser.add_argument("--save")
    parser.add_argument("--compare")
    parser.add_argument("--blend", help="time the first Detect of this .blend instead")
    parser.add_argument("--tiles", type=int, default=1, help="with --blend: copies side by side")
    parser.add_argument("--mesh", action="store_true", help="with --blend: Geometry set to Mesh")
    args = parser.parse_args()
    if args.tiles < 1 or (args.tiles > 1 and not args.blend):
        parser.error("--tiles takes a count of at least 1, with --blend")
    if args.mesh and not args.blend:
        parser.error("--mesh goes with --blend")
    collide_addon.register()
    if args.blend:
        bpy.ops.wm.open_mainfile(filepath=args.blend)
        if args.tiles > 1:
            start = time.perf_counter()
            tile_scene(args.tiles)
            print(f"{args.tiles} copies laid out in {time.perf_counter() - start:.1f} s")
        objects = [obj for obj in bpy.context.scene.objects if obj.type == "MESH"]
        vertices = sum(len(obj.data.vertices) for obj in objects)
        print(f"{args.blend}: {len(objects)} mesh objects, {vertices:,} vertices")
        if args.mesh:
            bpy.context.scene.collide.geometry = "MESH"
        print_first_detect(first_detect(args.profile), target=False)
        if args.mesh:
            scene = bpy.context.scene
            print(
                f"  of which deciding pairs on meshes"
                f" {session.session_for(scene).mesh_seconds:.2f} s;"
                f" {len(scene.collide.clashes)} clashes"
            )
        return
    start = time.perf_counter()
    clouds = build_scene(args.count, args.seed, args.small)
    built = time.perf_counter() - start
    vertices = sum(len(cloud) for cloud in clouds)
    print(f"{args.count} objects, own meshes, {vertices:,} vertices (built in {built:.1f} s)")
    print_first_detect(first_detect(args.profile), target=not args.small)
    looseness = measured_looseness()
    start, cpu_start = time.perf_counter(), time.process_time()
    if hasattr(fit_module, "fit_shapes"):
        fits = fit_module.fit_shapes(clouds, "AUTO")
    else:
        fits = [fit_module.fit_auto(cloud) for cloud in clouds]
    core, core_cpu = time.perf_counter() - start, time.process_time() - cpu_start
    print(
        f"core alone: AUTO fits of the same {len(clouds)} point sets {core:.2f} s"
        f" (CPU {core_cpu:.2f} s)"
    )
    volumes = np.array([fit.volume for fit in fits])
    kinds = np.bincount([fit.kind for fit in fits], minlength=3)
    print(
        f"looseness (fit / mesh volume): median {np.median(looseness):.3f},"
        f" worst {looseness.max():.3f}; kinds box/sphere/capsule {kinds.tolist()}"
    )
    if args.save:
        np.save(args.save, volumes)
    if args.compare:
        ratio = volumes / np.load(args.compare)
        print(
            f"volume / saved volume: median {np.median(ratio):.4f}, worst {ratio.max():.4f},"
            f" best {ratio.min():.4f}, > 1.02: {int((ratio > 1.02).sum())} of {len(ratio)}"
        )
    collide_addon.unregister()
    print(f"bpy {bpy.app.version_string}, numpy {np.__version__}")


if __name__ == "__main__":
    main()
