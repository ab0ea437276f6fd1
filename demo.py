"""The demo behind `python3 build.py demo`.

By default, the clash report through the real `blender` binary:
1. builds the bundled demo scene (blender_scripts/make_demo_scene.py: an animated
   assembly with known clashes, a near miss and a fast mover) and saves it as
   demo_out/demo.blend;
2. runs blender_scripts/clash_report.py on it over frames 1-60 with two clash tests
   (hard, and 10 cm clearance) and 4 sub-steps per frame, writing JSON, HTML, CSV and
   BCF reports to demo_out/, with a thumbnail of each clash in the HTML and the BCF;
3. prints the clashes and the report paths.

With --core: the collision core alone on a seeded scene of mixed shapes.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

from collide_addon.core import KIND_NAMES, find_pairs, pair_distance
from collide_dev.synthetic import mixed_scene

ROOT = Path(__file__).resolve().parent
DEMO_TESTS = {
    "format": "collide-tests",
    "version": 1,
    "tests": [
        {"name": "hard clashes", "a": {}, "type": "hard", "tolerance": 0.001},
        {"name": "clearance 10 cm", "a": {}, "type": "clearance", "tolerance": 0.1},
    ],
}


def shown(path: Path) -> str:
    """A path relative to the repository when inside it."""
    return str(path.relative_to(ROOT)) if path.is_relative_to(ROOT) else str(path)


def blender_report(output: Path) -> int:
    blender = shutil.which("blender")
    if blender is None:
        print(
            "demo: no `blender` on PATH (build.py installs Debian's when run as root)",
            file=sys.stderr,
        )
        return 2
    output.mkdir(parents=True, exist_ok=True)
    scene = output / "demo.blend"
    tests = output / "tests.json"
    tests.write_text(json.dumps(DEMO_TESTS, indent=2) + "\n")
    subprocess.run(
        [
            blender,
            "-b",
            "--factory-startup",
            "--python",
            ROOT / "blender_scripts" / "make_demo_scene.py",
            "--",
            scene,
        ],
        check=True,
        stdout=subprocess.DEVNULL,
    )
    reports = {kind: output / f"report.{kind}" for kind in ("json", "html", "csv", "bcf")}
    command = [blender, "-b", scene, "--python", ROOT / "blender_scripts" / "clash_report.py", "--"]
    command += ["--tests", tests, "--frames", "1-60", "--substeps", "4", "--thumbnails"]
    for kind, path in reports.items():
        command += [f"--{kind}", path]
    run = subprocess.run(command, stdout=subprocess.DEVNULL)
    if run.returncode not in (0, 1):  # 1 = clashes found, which is the point here
        print(f"demo: the clash report failed (exit {run.returncode})", file=sys.stderr)
        return run.returncode
    report = json.loads(reports["json"].read_text())
    print(f"\ncollide demo: {shown(scene)}, frames 1-60, 4 sub-steps per frame")
    print(f"{report['summary']['open']} clashes:")
    for clash in report["clashes"]:
        spans = ", ".join(f"{a}-{b}" if a != b else f"{a}" for a, b in clash["frames"])
        print(
            f"  {clash['test']:<16} {clash['a']:>18} x {clash['b']:<18} "
            f"{'/'.join(clash['kinds']):<12} distance {clash['distance']:+.3f} m  "
            f"frames {spans}  worst {clash['worst_frame']}"
        )
    print("\nreports:")
    for path in reports.values():
        print(f"  {shown(path)}")
    return 0


def core_demo(count: int, seed: int, margin: float) -> int:

    batch = mixed_scene(np.random.default_rng(seed), count)
    start = time.perf_counter()
    pairs = find_pairs(batch, margin=margin)
    result = pair_distance(batch, pairs[:, 0], pairs[:, 1])
    elapsed = time.perf_counter() - start

    print(f"collide core demo: {len(batch):,} shapes (seed {seed}), margin {margin}")
    print(
        f"found {len(pairs):,} pairs in {elapsed * 1e3:.1f} ms (broad + narrow phase + distances)"
    )
    kinds = np.sort(batch.kinds[pairs], axis=1)
    print("\nby pairing:")
    for first in range(3):
        for second in range(first, 3):
            count = int(((kinds[:, 0] == first) & (kinds[:, 1] == second)).sum())
            print(f"  {KIND_NAMES[first]:>7}-{KIND_NAMES[second]:<7} {count:6,}")
    touching = int((np.abs(result.distance) <= 1e-9).sum())
    print(f"\npenetrating: {int((result.distance < -1e-9).sum()):,}, touching: {touching:,}")
    print("\ndeepest penetrations:")
    for row in np.argsort(result.distance)[:5]:
        i, j = pairs[row]
        print(
            f"  #{i:<5} {KIND_NAMES[batch.kinds[i]]:<7} x #{j:<5} {KIND_NAMES[batch.kinds[j]]:<7} "
            f"depth {-result.distance[row]:.4f}  push #{j} along "
            f"{np.array2string(result.normal[row], precision=3)}  at "
            f"{np.array2string(0.5 * (result.point_i[row] + result.point_j[row]), precision=3)}"
        )
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--core", action="store_true", help="the collision core alone, no Blender")
    parser.add_argument("--count", type=int, default=3000, help="--core: number of shapes")
    parser.add_argument("--seed", type=int, default=2026, help="--core: random seed")
    parser.add_argument(
        "--margin", type=float, default=0.0, help="--core: report pairs closer than this"
    )
    parser.add_argument("--output", type=Path, default=ROOT / "demo_out", help="report folder")
    args = parser.parse_args(argv)
    if args.core:
        if args.count < 2:
            parser.error("--count must be at least 2")
        return core_demo(args.count, args.seed, args.margin)
    return blender_report(args.output.resolve())


if __name__ == "__main__":
    raise SystemExit(main())
