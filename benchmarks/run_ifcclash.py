"""Run IfcClash 0.9.0 on one IFC file, every element against every other, and time it.

    .venv-ifc/bin/python benchmarks/run_ifcclash.py MODEL.ifc SETS.json OUT.json

SETS.json is a list of clash sets as bench_ifc.py writes them: {"name", "mode", and the
mode's own keys (tolerance and check_all, allow_touching, clearance and check_all)}; the
file and the elements (no selector: every IfcElement but IfcFeatureElement) are added
here. IfcClash is driven through its own library API (ifcclash.Clasher), the way its
command line and Bonsai drive it.

OUT.json: {"total_seconds": whole Clasher.clash() over all sets,
           "sets": {name: {"mode", "set_seconds", "clash_seconds", "clashes": [
               {"a", "b", "a_class", "b_class", "type", "distance", "p1", "p2"}, ...]}}}
set_seconds covers a set's own tree (Clasher builds a new tree and triangulates the
elements again for every set) and its clash call; clash_seconds is the clash call alone
(tree.clash_*_many). The IFC file is read once, by the first set.
"""

from __future__ import annotations

import functools
import json
import logging
import sys
import time

import ifcopenshell.geom
from ifcclash.ifcclash import Clasher, ClashSettings

CLASH_CALLS = ("clash_intersection_many", "clash_collision_many", "clash_clearance_many")


def time_clash_calls(seconds: list[float]) -> None:
    """Make every tree clash call append its wall time to `seconds`."""
    for method_name in CLASH_CALLS:
        method = getattr(ifcopenshell.geom.tree, method_name)

        @functools.wraps(method)
        def timed(*args, _method=method, **kwargs):
            start = time.perf_counter()
            try:
                return _method(*args, **kwargs)
            finally:
                seconds.append(time.perf_counter() - start)

        setattr(ifcopenshell.geom.tree, method_name, timed)


def clash_record(clash: dict) -> dict:
    return {
        "a": clash["a_global_id"],
        "b": clash["b_global_id"],
        "a_class": clash["a_ifc_class"],
        "b_class": clash["b_ifc_class"],
        "type": clash["type"],
        "distance": clash["distance"],
        "p1": clash["p1"],
        "p2": clash["p2"],
    }


def main(argv: list[str]) -> int:
    if len(argv) != 3:
        print("usage: run_ifcclash.py MODEL.ifc SETS.json OUT.json", file=sys.stderr)
        return 2
    model, sets_path, out_path = argv
    with open(sets_path, encoding="utf-8") as sets_file:
        sets = json.load(sets_file)
    settings = ClashSettings()
    settings.logger = logging.getLogger("ifcclash")
    clash_seconds: list[float] = []
    time_clash_calls(clash_seconds)
    clasher = Clasher(settings)
    results = {}
    total = 0.0
    for clash_set in sets:
        clasher.clash_sets = [{**clash_set, "a": [{"file": model}]}]
        start = time.perf_counter()
        clasher.clash()
        set_seconds = time.perf_counter() - start
        total += set_seconds
        clashes = clasher.clash_sets[0]["clashes"].values()
        results[clash_set["name"]] = {
            "mode": clash_set["mode"],
            "set_seconds": set_seconds,
            "clash_seconds": clash_seconds[-1],
            "clashes": [clash_record(clash) for clash in clashes],
        }
        print(
            f"ifcclash: {clash_set['name']}: {len(clashes)} clashes in {set_seconds:.2f} s "
            f"(clash call {clash_seconds[-1]:.2f} s)",
            file=sys.stderr,
        )
    with open(out_path, "w", encoding="utf-8") as out_file:
        json.dump({"total_seconds": total, "sets": results}, out_file, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
