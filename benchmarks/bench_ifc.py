#!/usr/bin/env python3
"""collide against IfcClash 0.9.0 on real IFC models: the same elements, pairs and times.

    .venv-core/bin/python benchmarks/bench_ifc.py [--models NAME ...] [--keep DIR]
        [--record-fixture]

For each model in benchmarks/models/ (*.ifc.gz; --models picks some by a part of the
file name):
1. benchmarks/ifc_to_mesh.py triangulates the elements IfcClash clashes into an .npz
   (world coordinates, welded vertices, one entry per element with triangles), in the
   venv .venv-ifc that this script creates or reuses (ifcopenshell and ifcclash 0.9.0);
2. benchmarks/mesh_to_blend.py builds a .blend from it in `blender -b` (one mesh object
   per element named by GlobalId, a collection per IFC class, identity matrices);
3. benchmarks/run_ifcclash.py runs IfcClash on the IFC file, all elements against all, in
   three clash sets (MODES below), timing each set and its clash call alone;
4. collide's blender_scripts/clash_report.py runs the equivalent clash tests on the .blend
   (COLLIDE_ARGUMENTS), timed as a whole; a `blender -b` that only opens the .blend is
   timed too, so that the clash report's own share can be told apart;
5. both tools' pairs are compared per mode as unordered GlobalId pairs;
6. an untimed second collide run writes the clashes as BCF, and each component's IfcGuid
   is looked up in the IFC file, as a BCF reader holding the model would.

Printed per model and mode: pairs found by each tool, pairs both find, precision (share
of collide's pairs IfcClash finds too), recall (share of IfcClash's pairs collide finds)
and recall of IfcClash's deep pairs (its intersection-mode depth > DEEP_PAIR_DEPTH).
--keep DIR keeps each model's .npz, .blend, both results and a disagreements.tsv (every
pair only one tool finds, with both tools' numbers and the elements' classes and names).
--record-fixture writes the FZK-Haus .npz and IfcClash's pairs into tests/data/ifc/.
The IFC work runs in .venv-ifc, the Blender work in `blender`; this script needs only
the standard library and collide_dev (on the path in .venv-core).
"""

from __future__ import annotations

import argparse
import csv
import gzip
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import venv
from pathlib import Path

from collide_dev.blender_path import drop_pyenv_shim_paths

ROOT = Path(__file__).resolve().parent.parent
BENCHMARKS = ROOT / "benchmarks"
MODELS = BENCHMARKS / "models"
FIXTURE = ROOT / "tests" / "data" / "ifc"
FIXTURE_MODEL = "AC20-FZK-Haus"
IFC_VENV = ROOT / ".venv-ifc"
# ifcclash 0.9.0 imports ifcopenshell (its geometry tree does the clashing) and
# typing_extensions; ifcopenshell needs the rest.
IFC_REQUIREMENTS = (
    "ifcopenshell==0.9.0",
    "ifcclash==0.9.0",
    "isodate==0.7.2",
    "lark==1.3.1",
    "numpy==2.4.6",
    "pyparsing==3.3.3",
    "python-dateutil==4.0.0",
    "shapely==2.2.0",
    "typing_extensions==4.16.0",
    "tzdata==2026.6",
)

INTERSECTION_TOLERANCE = 0.002
CLEARANCE = 0.05
# IfcClash pairs whose intersection-mode depth exceeds this must all be found.
DEEP_PAIR_DEPTH = 0.002
# name: (IfcClash clash set keys, collide clash test keys). check_all is IfcClash's own
# default (True) in intersection mode; in clearance mode its default is False, True here
# so that its distance is the least one rather than the first found under the clearance
# (the pairs are the same either way). Collision without touching is surfaces crossing.
MODES = {
    "intersection": (
        {"mode": "intersection", "tolerance": INTERSECTION_TOLERANCE, "check_all": True},
        {"type": "hard", "tolerance": INTERSECTION_TOLERANCE},
    ),
    "collision": (
        {"mode": "collision", "allow_touching": False},
        {"type": "hard", "tolerance": 0.0},
    ),
    "clearance": (
        {"mode": "clearance", "clearance": CLEARANCE, "check_all": True},
        {"type": "clearance", "tolerance": CLEARANCE},
    ),
}
# Arguments of every collide run after --tests and --json; the geometry mode goes here.
COLLIDE_ARGUMENTS = ("--frames", "1-1", "--fail-on", "never", "--geometry", "mesh")


# Header schema names ifcopenshell 0.9.0 cannot read -> the schema read instead. Allplan's
# export names the pre-release "IFC2X_FINAL" for data that IFC2X3 reads; both tools get
# the same rewritten file.
SCHEMA_ALIASES = {"IFC2X_FINAL": "IFC2X3"}


def log(message: str) -> None:
    print(f"[bench_ifc] {message}", file=sys.stderr, flush=True)


def run(command: list, what: str) -> float:
    """Run a command, fail loudly on a non-zero status; its wall time in seconds."""
    start = time.perf_counter()
    result = subprocess.run([str(part) for part in command], cwd=ROOT, capture_output=True)
    seconds = time.perf_counter() - start
    if result.returncode:
        sys.stderr.write(result.stdout.decode(errors="replace")[-4000:])
        sys.stderr.write(result.stderr.decode(errors="replace")[-4000:])
        raise SystemExit(f"bench_ifc: {what} failed with status {result.returncode}")
    return seconds


def venv_python(path: Path) -> Path:
    return path / "bin" / "python"


def ensure_ifc_venv() -> Path:
    """.venv-ifc with IFC_REQUIREMENTS installed; reinstalled when the pins change."""
    stamp = IFC_VENV / "bench-ifc-requirements.txt"
    wanted = "\n".join(IFC_REQUIREMENTS) + "\n"
    if stamp.is_file() and stamp.read_text() == wanted:
        return venv_python(IFC_VENV)
    log(f"creating {IFC_VENV.name} with {', '.join(IFC_REQUIREMENTS[:2])}")
    venv.create(IFC_VENV, with_pip=True, clear=True)
    result = subprocess.run(
        [venv_python(IFC_VENV), "-m", "pip", "install", "-q", *IFC_REQUIREMENTS],
        capture_output=True,
        text=True,
    )
    if result.returncode:
        sys.stderr.write(result.stderr[-3000:])
        raise SystemExit(
            f"bench_ifc: cannot install {' '.join(IFC_REQUIREMENTS[:2])} for Python "
            f"{sys.version_info.major}.{sys.version_info.minor}: ifcopenshell ships binary "
            "wheels only, for some Python versions and platforms; run this script with a "
            "Python that has one (see `pip index versions ifcopenshell`)."
        )
    stamp.write_text(wanted)
    return venv_python(IFC_VENV)


def find_blender() -> str:
    blender = shutil.which("blender") or "/usr/bin/blender"
    if not Path(blender).is_file():
        raise SystemExit("bench_ifc: no `blender` binary (python3 build.py setup installs it)")
    return blender


def unordered(first: str, second: str) -> tuple[str, str]:
    return (first, second) if first <= second else (second, first)


def ifcclash_pairs(result: dict, mode: str) -> dict[tuple[str, str], dict]:
    """IfcClash's clashes of one set by unordered pair; the deepest when a pair repeats."""
    pairs: dict[tuple[str, str], dict] = {}
    for clash in result["sets"][mode]["clashes"]:
        if clash["a"] == clash["b"]:
            continue
        key = unordered(clash["a"], clash["b"])
        if key not in pairs or clash["distance"] > pairs[key]["distance"]:
            pairs[key] = clash
    return pairs


def collide_pairs(report: dict, mode: str) -> dict[tuple[str, str], float]:
    """collide's signed distance (negative: penetration depth) by unordered pair."""
    pairs: dict[tuple[str, str], float] = {}
    for clash in report["clashes"]:
        if clash["test"] == mode:
            key = unordered(clash["a"], clash["b"])
            pairs[key] = min(clash["distance"], pairs.get(key, float("inf")))
    return pairs


def share(part: int, whole: int) -> str:
    return f"{part / whole:.2f}" if whole else "-"


def compare(ifcclash: dict, report: dict) -> dict[str, dict]:
    """Per mode: the pair sets and the counts of the table."""
    depths = {
        key: clash["distance"] for key, clash in ifcclash_pairs(ifcclash, "intersection").items()
    }
    rows = {}
    for mode in MODES:
        theirs = ifcclash_pairs(ifcclash, mode)
        ours = collide_pairs(report, mode)
        both = theirs.keys() & ours.keys()
        deep = {key for key in theirs if depths.get(key, 0.0) > DEEP_PAIR_DEPTH}
        rows[mode] = {
            "ifcclash": theirs,
            "collide": ours,
            "counts": {
                "collide": len(ours),
                "ifcclash": len(theirs),
                "both": len(both),
                "precision": share(len(both), len(ours)),
                "recall": share(len(both), len(theirs)),
                "deep": len(deep),
                "deep recall": share(len(deep & ours.keys()), len(deep)),
            },
        }
    return rows


def print_table(model: str, rows: dict[str, dict], times: dict[str, float], ifcclash: dict) -> None:
    columns = ("collide", "ifcclash", "both", "precision", "recall", "deep", "deep recall")
    print(f"\n{model}: {times['elements']} elements")
    print("| mode | " + " | ".join(columns) + " |")
    print("|---" * (len(columns) + 1) + "|")
    for mode, row in rows.items():
        print(f"| {mode} | " + " | ".join(str(row["counts"][name]) for name in columns) + " |")
    sets = ifcclash["sets"]
    per_set = "; ".join(
        f"{mode} set {sets[mode]['set_seconds']:.2f} s, "
        f"clash call {sets[mode]['clash_seconds']:.3f} s"
        for mode in MODES
    )
    print(
        f"IfcClash: process {times['ifcclash']:.2f} s, "
        f"Clasher.clash() {ifcclash['total_seconds']:.2f} s; {per_set}"
    )
    print(
        f"collide: blender -b clash_report.py {times['collide']:.2f} s (all three tests); "
        f"blender -b opening the .blend only {times['blender_load']:.2f} s; "
        f"difference {times['collide'] - times['blender_load']:.2f} s"
    )
    print(
        f"BCF: {times['bcf_found']} of the {times['bcf_components']} components' IfcGuids "
        "are elements of the IFC file"
    )
    print(
        f"conversion (not in either tool's time): ifc_to_mesh {times['ifc_to_mesh']:.2f} s, "
        f"mesh_to_blend {times['mesh_to_blend']:.2f} s"
    )


def bcf_components_found(bcf: Path, ifc: Path, python: Path) -> tuple[int, int]:
    """(the distinct component IfcGuids of a BCF's viewpoints, how many of them are
    elements of the IFC file), looked up by ifcopenshell in the IFC venv."""
    code = (
        "import re, sys, zipfile, ifcopenshell\n"
        "model = ifcopenshell.open(sys.argv[2])\n"
        "with zipfile.ZipFile(sys.argv[1]) as bcf:\n"
        "    guids = {guid for name in bcf.namelist() if name.endswith('.bcfv')\n"
        '             for guid in re.findall(r\'IfcGuid="([^"]+)"\', bcf.read(name).decode())}\n'
        "def known(guid):\n"
        "    try:\n"
        "        return model.by_guid(guid) is not None\n"
        "    except RuntimeError:\n"
        "        return False\n"
        "print(len(guids), sum(map(known, guids)))\n"
    )
    output = subprocess.run(
        [str(python), "-c", code, str(bcf), str(ifc)], capture_output=True, text=True, check=True
    ).stdout
    components, found = map(int, output.split())
    return components, found


def element_table(npz_path: Path, python: Path) -> dict[str, tuple[str, str]]:
    """GlobalId -> (IFC class, Name), read from the .npz in the IFC venv (it has numpy)."""
    code = (
        "import json, sys, numpy as np\n"
        "d = np.load(sys.argv[1])\n"
        "print(json.dumps({str(n): [str(c), str(l)] for n, c, l in "
        "zip(d['names'], d['classes'], d['labels'])}))\n"
    )
    output = subprocess.run(
        [str(python), "-c", code, str(npz_path)], capture_output=True, text=True, check=True
    ).stdout
    return {name: tuple(value) for name, value in json.loads(output).items()}


def write_disagreements(path: Path, rows: dict[str, dict], elements: dict) -> None:
    """Every pair only one tool finds, one line each, sorted by mode, side and depth."""
    with path.open("w", newline="", encoding="utf-8") as out:
        writer = csv.writer(out, delimiter="\t")
        writer.writerow(
            [
                "mode",
                "found by",
                "a",
                "b",
                "a class",
                "b class",
                "collide distance",
                "ifcclash type",
                "ifcclash distance",
                "a name",
                "b name",
            ]
        )
        for mode, row in rows.items():
            theirs, ours = row["ifcclash"], row["collide"]
            only = [("collide only", key) for key in ours.keys() - theirs.keys()]
            only += [("ifcclash only", key) for key in theirs.keys() - ours.keys()]
            for side, key in sorted(
                only, key=lambda item: (item[0], ours.get(item[1], 0.0), item[1])
            ):
                a_class, a_name = elements.get(key[0], ("?", ""))
                b_class, b_name = elements.get(key[1], ("?", ""))
                clash = theirs.get(key)
                writer.writerow(
                    [
                        mode,
                        side,
                        key[0],
                        key[1],
                        a_class,
                        b_class,
                        f"{ours[key]:.4f}" if key in ours else "",
                        clash["type"] if clash else "",
                        f"{clash['distance']:.4f}" if clash else "",
                        a_name,
                        b_name,
                    ]
                )


def collide_tests() -> dict:
    tests = [{"name": mode, "a": {}, **collide_keys} for mode, (_, collide_keys) in MODES.items()]
    return {"format": "collide-tests", "version": 1, "tests": tests}


def ifcclash_sets() -> list[dict]:
    return [{"name": mode, **ifcclash_keys} for mode, (ifcclash_keys, _) in MODES.items()]


def unpack(source: Path, target: Path) -> None:
    """Gunzip an IFC file, renaming a schema in SCHEMA_ALIASES in its header."""
    with gzip.open(source, "rb") as packed:
        data = packed.read()
    header_end = data.find(b"ENDSEC;")
    header = data[:header_end]
    for alias, schema in SCHEMA_ALIASES.items():
        if f"'{alias}'".encode() in header:
            log(f"{source.name}: header schema {alias} read as {schema}")
            header = header.replace(f"'{alias}'".encode(), f"'{schema}'".encode())
    target.write_bytes(header + data[header_end:])


def bench_model(source: Path, work: Path, python: Path, blender: str) -> tuple[dict, dict, dict]:
    """Convert, run both tools and compare; (rows, times, IfcClash's result)."""
    ifc, npz, blend = (
        work / source.name.removesuffix(".gz"),
        work / "model.npz",
        work / "model.blend",
    )
    unpack(source, ifc)
    times = {"ifc_to_mesh": run([python, BENCHMARKS / "ifc_to_mesh.py", ifc, npz], "ifc_to_mesh")}
    times["mesh_to_blend"] = run(
        [
            blender,
            "-b",
            "--factory-startup",
            "--python",
            BENCHMARKS / "mesh_to_blend.py",
            "--",
            npz,
            blend,
        ],
        "mesh_to_blend",
    )
    if not blend.is_file():
        # Blender exits 0 when a script fails before it can set the status (an import).
        raise SystemExit(f"bench_ifc: mesh_to_blend wrote no {blend}")
    (work / "ifcclash-sets.json").write_text(json.dumps(ifcclash_sets(), indent=1))
    (work / "collide-tests.json").write_text(json.dumps(collide_tests(), indent=1))
    ifcclash_out, collide_out = work / "ifcclash.json", work / "collide.json"
    times["ifcclash"] = run(
        [python, BENCHMARKS / "run_ifcclash.py", ifc, work / "ifcclash-sets.json", ifcclash_out],
        "IfcClash",
    )

    def clash_report(*outputs) -> list:
        """collide's clash report run on the .blend with the model's tests, writing the
        reports `outputs` (options and paths)."""
        script = ROOT / "blender_scripts" / "clash_report.py"
        tests = work / "collide-tests.json"
        # --factory-startup: the checkout's add-on, even where one is enabled in the
        # user's preferences (it would be imported first, under the same name).
        return [
            blender,
            "-b",
            "--factory-startup",
            blend,
            "--python",
            script,
            "--",
            "--tests",
            tests,
            *outputs,
        ]

    times["collide"] = run(clash_report("--json", collide_out, *COLLIDE_ARGUMENTS), "collide")
    times["blender_load"] = run(
        [blender, "-b", "--factory-startup", blend, "--python-expr", "pass"], "blender"
    )
    bcf = work / "collide.bcf"
    run(clash_report("--bcf", bcf, *COLLIDE_ARGUMENTS), "collide's BCF")
    times["bcf_components"], times["bcf_found"] = bcf_components_found(bcf, ifc, python)
    ifcclash = json.loads(ifcclash_out.read_text())
    rows = compare(ifcclash, json.loads(collide_out.read_text()))
    elements = element_table(npz, python)
    times["elements"] = len(elements)
    write_disagreements(work / "disagreements.tsv", rows, elements)
    return rows, times, ifcclash


def record_fixture(work: Path, ifcclash: dict) -> None:
    """tests/data/ifc/: the converted model and IfcClash's pairs for every mode."""
    FIXTURE.mkdir(parents=True, exist_ok=True)
    stem = FIXTURE_MODEL.lower()
    shutil.copyfile(work / "model.npz", FIXTURE / f"{stem}.npz")
    recorded = {
        "source": f"benchmarks/models/{FIXTURE_MODEL}.ifc.gz",
        "tool": "ifcclash 0.9.0 with ifcopenshell 0.9.0",
        "sets": {
            mode: {
                "settings": ifcclash_keys,
                "clashes": [
                    {key: clash[key] for key in ("a", "b", "type", "distance", "p1", "p2")}
                    for _, clash in sorted(ifcclash_pairs(ifcclash, mode).items())
                ],
            }
            for mode, (ifcclash_keys, _) in MODES.items()
        },
    }
    (FIXTURE / f"{stem}-ifcclash.json").write_text(json.dumps(recorded, indent=1) + "\n")
    log(f"wrote {FIXTURE.relative_to(ROOT)}/{stem}.npz and {stem}-ifcclash.json")


def parse_arguments(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--models", nargs="+", metavar="NAME", help="models whose file name contains NAME"
    )
    parser.add_argument(
        "--keep", type=Path, metavar="DIR", help="keep every model's files in DIR/<model>/"
    )
    parser.add_argument(
        "--record-fixture",
        action="store_true",
        help=f"write {FIXTURE_MODEL}'s .npz and IfcClash pairs into tests/data/ifc/",
    )
    return parser.parse_args(argv)


def main(argv: list[str]) -> int:
    arguments = parse_arguments(argv)
    sources = sorted(MODELS.glob("*.ifc.gz"))
    if arguments.models:
        sources = [path for path in sources if any(name in path.name for name in arguments.models)]
    if arguments.record_fixture and not any(
        path.name.startswith(FIXTURE_MODEL) for path in sources
    ):
        raise SystemExit(f"bench_ifc: --record-fixture needs {FIXTURE_MODEL} among the models")
    if not sources:
        raise SystemExit(
            f"bench_ifc: no model in {MODELS.relative_to(ROOT)} matches {arguments.models}"
        )
    drop_pyenv_shim_paths()
    python, blender = ensure_ifc_venv(), find_blender()
    print(f"collide arguments: {' '.join(COLLIDE_ARGUMENTS)}; measured on {os.cpu_count()} cores")
    with tempfile.TemporaryDirectory(prefix="bench_ifc-") as scratch:
        for source in sources:
            model = source.name.removesuffix(".ifc.gz")
            work = (arguments.keep or Path(scratch)) / model
            work.mkdir(parents=True, exist_ok=True)
            log(f"{model}: converting, then IfcClash, then collide")
            rows, times, ifcclash = bench_model(source, work, python, blender)
            print_table(model, rows, times, ifcclash)
            if arguments.record_fixture and model == FIXTURE_MODEL:
                record_fixture(work, ifcclash)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
