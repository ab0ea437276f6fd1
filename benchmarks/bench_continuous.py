"""Continuous detection against a sampled scan: the report run without Blender.

5,000 objects (collide_dev.synthetic.mixed_scene, seeded) over 50 frames; a fraction of
them (--moving, default all) moves, each at its own speed (up to --speed scene units a
frame) and turning about its own axis (up to --turn radians a frame).
`report.run.run_report` scans the frames in one process, with one hard proxy test,
two ways: a sampled scan (substeps 1) and a continuous one (the same samples, plus
every interval between them swept); one of each unmeasured, then --repeat of each,
alternated. Prints the fastest of each, their ratio beside the target (continuous
<= 2x the sampled scan), and what each found.

    PYTHONPATH=. .venv-core/bin/python benchmarks/bench_continuous.py [--count 5000]
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np

from collide_addon.clash.evaluate import ObjectMetadata
from collide_addon.clash.tests import ClashTest
from collide_addon.core import ShapeBatch
from collide_addon.report.run import FrameSample, run_report
from collide_dev.synthetic import mixed_scene

TARGET_RATIO = 2.0


def rotations_about(axes: np.ndarray, angles: np.ndarray) -> np.ndarray:
    """Rodrigues' formula: (n, 3) unit axes, (n,) angles -> (n, 3, 3)."""
    cos, sin = np.cos(angles)[:, None, None], np.sin(angles)[:, None, None]
    x, y, z = axes.T
    zero = np.zeros_like(x)
    cross = np.stack(
        [np.stack([zero, -z, y], 1), np.stack([z, zero, -x], 1), np.stack([-y, x, zero], 1)], 1
    )
    return cos * np.eye(3) + sin * cross + (1 - cos) * axes[:, :, None] * axes[:, None, :]


def moving_scene(count: int, speed: float, turn: float, seed: int = 13, moving: float = 1.0):
    """`read_frame(time)` for `count` shapes, the first `moving` fraction of them moving
    linearly and turning steadily, the others still."""
    rng = np.random.default_rng(seed)
    scene = mixed_scene(rng, count)
    velocities = rng.normal(size=(count, 3))
    velocities *= (rng.uniform(0, speed, count) / np.linalg.norm(velocities, axis=1))[:, None]
    axes = rng.normal(size=(count, 3))
    axes /= np.linalg.norm(axes, axis=1, keepdims=True)
    rates = rng.uniform(0, turn, count)
    still = rng.permutation(count)[round(moving * count) :]
    velocities[still], rates[still] = 0.0, 0.0
    objects = [ObjectMetadata(f"object.{index:05d}") for index in range(count)]

    def read_frame(frame_time: float) -> FrameSample:
        elapsed = frame_time - 1.0
        batch = ShapeBatch(
            kinds=scene.kinds,
            centers=scene.centers + elapsed * velocities,
            rotations=rotations_about(axes, elapsed * rates) @ scene.rotations,
            half_extents=scene.half_extents,
            radii=scene.radii,
        )
        return FrameSample(batch, objects)

    return read_frame


def timed_run(read_frame, frames, continuous: bool):
    tests = [ClashTest("hard", geometry="proxy")]
    start, start_cpu = time.perf_counter(), time.process_time()
    report = run_report(tests, frames, read_frame, continuous=continuous).report
    elapsed, cpu = time.perf_counter() - start, time.process_time() - start_cpu
    between = sum("toi" in clash for clash in report["clashes"])
    return elapsed, cpu, len(report["clashes"]), between


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--count", type=int, default=5000)
    parser.add_argument("--frames", type=int, default=50)
    parser.add_argument("--speed", type=float, default=1.0, help="max units per frame")
    parser.add_argument("--turn", type=float, default=0.3, help="max radians per frame")
    parser.add_argument(
        "--moving", type=float, default=1.0, help="fraction of the objects that move (1)"
    )
    parser.add_argument("--repeat", type=int, default=3, help="measured runs of each (3)")
    arguments = parser.parse_args(argv)
    read_frame = moving_scene(
        arguments.count, arguments.speed, arguments.turn, moving=arguments.moving
    )
    frames = (1, arguments.frames, 1)
    compare_alternated(
        lambda continuous: timed_run(read_frame, frames, continuous),
        arguments.repeat,
        f"{arguments.count} objects ({arguments.moving:.0%} moving, up to {arguments.speed:g} "
        f"units and {arguments.turn:g} rad a frame), {arguments.frames} frames, one hard "
        "proxy test",
    )


def compare_alternated(measure, repeat: int, heading: str) -> None:
    """Time a sampled and a continuous scan, `measure(continuous)` -> (wall s, CPU s,
    clashes, clashes found only between frames), and print each kind at its fastest and
    their ratio beside the target under `heading`.

    The first scan in a process pays for warming up (allocations, caches), and this VM's
    speed drifts between runs: a scan of each kind first, unmeasured, then `repeat` of
    each, the two kinds alternated, each taken at its fastest (as timeit does).
    """
    runs = {False: [], True: []}
    for continuous in [False, True] * (repeat + 1):
        runs[continuous].append(measure(continuous))
    sampled_s, sampled_cpu, sampled_clashes, _ = min(runs[False][1:])
    continuous_s, continuous_cpu, continuous_clashes, between = min(runs[True][1:])
    ratio = continuous_s / sampled_s
    print(f"{heading}; fastest of {repeat} alternated runs after one of each")
    print(
        f"sampled scan (substeps 1): {sampled_s:.2f} s ({sampled_cpu:.2f} s CPU), "
        f"{sampled_clashes} clashes; all runs " + ", ".join(f"{run[0]:.2f}" for run in runs[False])
    )
    print(
        f"continuous scan:           {continuous_s:.2f} s ({continuous_cpu:.2f} s CPU), "
        f"{continuous_clashes} clashes ({between} found only between frames); all runs "
        + ", ".join(f"{run[0]:.2f}" for run in runs[True])
    )
    verdict = "met" if ratio <= TARGET_RATIO else "NOT met"
    print(
        f"ratio continuous / sampled: {ratio:.2f}x, CPU {continuous_cpu / sampled_cpu:.2f}x "
        f"(target <= {TARGET_RATIO:g}x: {verdict}; load average {os.getloadavg()[0]:.1f})"
    )


if __name__ == "__main__":
    main()
