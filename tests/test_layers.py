"""The package's layers, read from the source: core <- clash <- report <- blender, and
collide_farm above report beside blender.

Every import inside `collide_addon` and `collide_farm` is read with `ast` (also those
inside functions and under TYPE_CHECKING): no module imports a higher layer, the farm
imports neither the blender layer nor Blender, and the graph of imports between modules
has no circle.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
PACKAGE = REPO / "collide_addon"
FARM = REPO / "collide_farm"
LAYERS = ("core", "clash", "report", "blender")
BLENDER_MODULES = {"bpy", "bmesh", "mathutils", "gpu", "gpu_extras", "bpy_extras", "addon_utils"}


def _sources() -> list[Path]:
    return [*PACKAGE.rglob("*.py"), *FARM.rglob("*.py")]


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _imports(path: Path) -> set[str]:
    """Absolute names of the modules `path` imports (`from . import x` gives both the
    package and `package.x`, as either may be a module)."""
    module = _module_name(path)
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    names = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            names.add(target)
            names.update(f"{target}.{alias.name}" for alias in node.names)
    return names


def _graph() -> dict[str, set[str]]:
    modules = {_module_name(path): path for path in _sources()}
    return {
        name: {target for target in _imports(path) if target in modules and target != name}
        for name, path in modules.items()
    }


def _layer(module: str) -> int | None:
    parts = module.split(".")
    return LAYERS.index(parts[1]) if len(parts) > 1 and parts[1] in LAYERS else None


def test_no_module_imports_a_higher_layer():
    upward = [
        f"{module} -> {target}"
        for module, targets in _graph().items()
        for target in targets
        if _layer(module) is not None
        and _layer(target) is not None
        and _layer(target) > _layer(module)
    ]
    assert upward == []


def test_the_farm_imports_clash_and_report_but_not_blender():
    graph = _graph()
    farm = {
        module: targets for module, targets in graph.items() if module.startswith("collide_farm")
    }
    assert "collide_addon.report.merge" in farm["collide_farm.cli"]
    assert "collide_farm.cli" in farm["collide_farm.__main__"]
    below = [
        target for targets in farm.values() for target in targets if _layer(target) is not None
    ]
    assert {LAYERS[_layer(target)] for target in below} <= {"clash", "report"}
    assert not any(
        target.startswith("collide_farm")
        for module, targets in graph.items()
        if module.startswith("collide_addon")
        for target in targets
    )
    for path in FARM.rglob("*.py"):
        found = {name.split(".")[0] for name in _imports(path)} & BLENDER_MODULES
        assert found == set(), f"{path.name} imports {found}"


def test_only_the_blender_layer_imports_blender():
    offending = []
    for path in PACKAGE.rglob("*.py"):
        module = _module_name(path)
        if _layer(module) is not None and LAYERS[_layer(module)] != "blender":
            found = {name.split(".")[0] for name in _imports(path)} & BLENDER_MODULES
            offending += [f"{module} imports {name}" for name in sorted(found)]
    assert offending == []


def test_the_imports_between_modules_have_no_circle():
    graph = _graph()
    # Package __init__ files re-export their modules; an edge from a module to its own
    # package's __init__ is the usual relative-import spelling, not a dependency on it.
    for module, targets in graph.items():
        targets.difference_update(
            target for target in list(targets) if module.startswith(target + ".")
        )
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    circles = []

    def visit(module: str, path: list[str]) -> None:
        state[module] = 1
        for target in sorted(graph[module]):
            if state.get(target) == 1:
                circles.append(" -> ".join([*path[path.index(target) :], target]))
            elif target not in state:
                visit(target, [*path, target])
        state[module] = 2

    for module in sorted(graph):
        if module not in state:
            visit(module, [module])
    assert circles == []


def test_the_checks_see_the_imports_they_judge():
    """The graph holds relative imports, inside functions too, so the checks above
    are not vacuous."""
    graph = _graph()
    assert "collide_addon.core.narrow" in graph["collide_addon.core.broad"]
    assert "collide_addon.core" in graph["collide_addon.blender.session"]
    assert "collide_addon.blender" in graph["collide_addon"]  # imported in register()


def test_core_clash_and_report_import_and_run_without_blender():
    """Importing every module of the three lower layers and of the farm in a fresh
    interpreter loads no Blender module and nothing of blender/ (indirect imports
    included)."""
    lower = sorted(
        _module_name(path)
        for path in PACKAGE.rglob("*.py")
        if _layer(_module_name(path)) is not None
        and LAYERS[_layer(_module_name(path))] != "blender"
    )
    lower += sorted(_module_name(path) for path in FARM.glob("[!_]*.py"))
    assert "collide_addon.report.run" in lower and "collide_addon.clash.evaluate" in lower
    assert "collide_farm.scan" in lower and "collide_farm.cli" in lower
    code = "import sys\n" + "".join(f"import {name}\n" for name in lower)
    code += "print('\\n'.join(sorted(sys.modules)))\n"
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, check=True
    )
    loaded = result.stdout.split()
    assert [name for name in loaded if name.split(".")[0] in BLENDER_MODULES] == []
    assert not any(name.startswith("collide_addon.blender") for name in loaded)
