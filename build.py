#!/usr/bin/env python3
"""Set-up, tests, demo, benchmarks and the add-on build for collide.

    python3 build.py test      create the environments if needed, then run every test
                               (extra arguments go to every pytest run, e.g. -x,
                               -m "not slow and not blender")
    python3 build.py demo      run the main job on the bundled demo and print what it found
    python3 build.py zip       write dist/collide_addon-<version>.zip (legacy add-on + extension)
    python3 build.py bench     benchmarks: the core against coal and python-fcl, live mode in bpy
    python3 build.py bench-ifc collide against IfcClash 0.9.0 on the real IFC models in
                               benchmarks/models/ (extra arguments go to bench_ifc.py,
                               e.g. --models FZK --keep DIR); makes its own .venv-ifc
    python3 build.py lint      ruff format --check and ruff check
    python3 build.py setup     only create/refresh the environments

Four virtual environments: the bpy wheels need numpy < 2 and coal 3 needs numpy >= 2,
and the add-on is tested on the Blender versions users have (5.0 and the 4.2 and 4.5
LTS releases):
    .venv-core   (requirements-core.txt)   core tests with the coal oracle, the farm's
                                           tests (dask), benchmarks
    .venv        (requirements.txt)        Blender tests on bpy 5.0.1, CLI tests, lint
    .venv-bpy45  (requirements-bpy45.txt)  Blender tests on bpy 4.5 LTS
    .venv-bpy42  (requirements-bpy42.txt)  Blender tests on bpy 4.2 LTS
Each also gets this checkout installed editable (`pip install --no-deps -e .`), so
`collide_addon` and `collide_dev` import without PYTHONPATH. A venv is refreshed when
its requirement file, pyproject.toml, the add-on manifest (the version) or the
checkout's path changed.
Works on a bare machine: it creates them from the pinned requirement files and,
when run as root, installs Debian's `blender` (3.4) and `python3-numpy` (that
Blender build has no numpy of its own) with apt-get, for the `blender -b` tests,
`xvfb` with `xauth` (only recommended by xvfb, but `xvfb-run` needs it), which
give the viewport overlay test a display with OpenGL, and `chromium`, in which the HTML
report's tests check its Content-Security-Policy as a browser applies it.
Standard library only, so it runs before anything is installed.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

# Standard library only, like this file; the checkout's root is on sys.path here.
from collide_dev.blender_path import drop_pyenv_shim_paths

ROOT = Path(__file__).resolve().parent
VENV = ROOT / ".venv"
CORE_VENV = ROOT / ".venv-core"
REQUIREMENTS = ROOT / "requirements.txt"
CORE_REQUIREMENTS = ROOT / "requirements-core.txt"
# The bpy environments tests/blender runs in: Blender version -> (venv, requirements).
BPY_VENVS = {
    "5.0": (VENV, REQUIREMENTS),
    "4.5": (ROOT / ".venv-bpy45", ROOT / "requirements-bpy45.txt"),
    "4.2": (ROOT / ".venv-bpy42", ROOT / "requirements-bpy42.txt"),
}
PACKAGE = ROOT / "collide_addon"
MANIFEST = PACKAGE / "blender_manifest.toml"
DIST = ROOT / "dist"
APT_PACKAGES = ("blender", "python3-numpy", "xvfb", "xauth", "chromium")


def log(message: str) -> None:
    print(f"[build] {message}", file=sys.stderr, flush=True)


def run(command: list[str], **kwargs) -> None:
    log("$ " + " ".join(str(part) for part in command))
    subprocess.run([str(part) for part in command], check=True, **kwargs)


def venv_python(venv: Path) -> Path:
    return venv / "bin" / "python"


def find_python311() -> str:
    """The interpreter for the venvs: the bpy wheel exists for CPython 3.11 only."""
    for candidate in (sys.executable, "python3.11", "python3"):
        path = shutil.which(candidate) or candidate
        try:
            version = subprocess.run(
                [path, "-c", "import sys; print('%d.%d' % sys.version_info[:2])"],
                capture_output=True,
                text=True,
                check=True,
            ).stdout.strip()
        except (OSError, subprocess.CalledProcessError):
            continue
        if version == "3.11":
            return path
    sys.exit("build.py: Python 3.11 is required (the bpy 5.0.1 wheel is built for it only)")


def ensure_venv(venv: Path, requirements: Path) -> Path:
    """Create `venv`, install `requirements` and then this checkout (editable, without
    dependencies: the requirement files pin them) into it, unless already done for the
    same requirements, project metadata, version and checkout path."""
    stamp = venv / ".requirements.sha256"
    digest = hashlib.sha256()
    for source in (requirements, ROOT / "pyproject.toml", MANIFEST):
        digest.update(source.read_bytes())
    digest.update(str(ROOT).encode())
    python = venv_python(venv)
    if python.exists() and stamp.exists() and stamp.read_text().strip() == digest.hexdigest():
        return python
    if not python.exists():
        run([find_python311(), "-m", "venv", venv])
    pip = [python, "-m", "pip", "install", "--quiet", "--disable-pip-version-check"]
    run([*pip, "-r", requirements])
    run([*pip, "--no-deps", "--editable", ROOT])
    stamp.write_text(digest.hexdigest() + "\n")
    return python


def ensure_blender() -> None:
    """Install Debian's blender, python3-numpy, xvfb, xauth and chromium when missing and
    we may (root)."""
    missing = [name for name in APT_PACKAGES if not debian_package_installed(name)]
    if not missing:
        return
    if os.geteuid() != 0 or shutil.which("apt-get") is None:
        log(
            f"not root or no apt-get: cannot install {' '.join(missing)}; "
            "the tests needing them will fail"
        )
        return
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    run(["apt-get", "update", "-qq"], env=env)
    run(["apt-get", "install", "-y", "-qq", *missing], env=env, stdout=subprocess.DEVNULL)


def debian_package_installed(name: str) -> bool:
    if shutil.which("dpkg-query") is None:
        return False
    result = subprocess.run(
        ["dpkg-query", "-W", "-f=${Status}", name], capture_output=True, text=True
    )
    return result.returncode == 0 and "install ok installed" in result.stdout


def setup() -> Path:
    """Blender and every venv; returns the bpy 5.0 environment's python."""
    ensure_blender()
    ensure_venv(CORE_VENV, CORE_REQUIREMENTS)
    for venv, requirements in BPY_VENVS.values():
        ensure_venv(venv, requirements)
    return venv_python(VENV)


def cmd_setup(args: list[str]) -> int:
    setup()
    return 0


def pytest(python: Path, paths: list[str], args: list[str]) -> int:
    command = [python, "-m", "pytest", "-rs", *paths, *args]
    log("$ " + " ".join(str(part) for part in command))
    return subprocess.run(command, cwd=ROOT).returncode


# pytest's exit status when the arguments (e.g. `-m "not blender"`) selected no test.
NO_TESTS_SELECTED = 5


def cmd_test(args: list[str]) -> int:
    """Core tests in .venv-core, the Blender tests in each bpy venv, the CLI tests (the
    `blender` binary) once from .venv.

    Extra arguments go to every pytest run (e.g. `-x`, `-k name`, `-m "not slow"`); a run
    they select no test in is not a failure, unless none selects any.
    """
    setup()
    # The Blender tests build the add-on zip they install themselves (always afresh).
    # tests/farm runs the `collide` command with the farm extra's dask, which .venv-core
    # has (requirements-core.txt), and Debian's blender.
    core_paths = ["tests/core", "tests/clash", "tests/report", "tests/farm", "tests/fuzz"]
    core_paths.append("tests/test_layers.py")
    core_paths.append("tests/test_version.py")
    suites = {"core": pytest(venv_python(CORE_VENV), core_paths, args)}
    for version, (venv, _) in BPY_VENVS.items():
        suites[f"Blender {version}"] = pytest(venv_python(venv), ["tests/blender"], args)
    suites["CLI"] = pytest(venv_python(VENV), ["tests/cli"], args)
    outcomes = {0: "passed", NO_TESTS_SELECTED: "none selected"}
    log("; ".join(f"{name}: {outcomes.get(code, 'FAILED')}" for name, code in suites.items()))
    if all(code == NO_TESTS_SELECTED for code in suites.values()):
        return NO_TESTS_SELECTED
    failed = [code for code in suites.values() if code not in (0, NO_TESTS_SELECTED)]
    return failed[0] if failed else 0


def cmd_demo(args: list[str]) -> int:
    ensure_blender()
    python = ensure_venv(VENV, REQUIREMENTS)
    return subprocess.run([python, ROOT / "demo.py", *args], cwd=ROOT).returncode


def cmd_bench(args: list[str]) -> int:
    """benchmarks/bench_core.py in .venv-core (coal, python-fcl), then
    benchmarks/bench_live.py and bench_fit.py in .venv (bpy). Extra arguments go to
    bench_core.py."""
    runs = [
        [ensure_venv(CORE_VENV, CORE_REQUIREMENTS), ROOT / "benchmarks" / "bench_core.py", *args],
        [ensure_venv(VENV, REQUIREMENTS), ROOT / "benchmarks" / "bench_live.py"],
        [ensure_venv(VENV, REQUIREMENTS), ROOT / "benchmarks" / "bench_fit.py"],
    ]
    for command in runs:
        log("$ " + " ".join(str(part) for part in command))
        result = subprocess.run(command, cwd=ROOT)
        if result.returncode:
            return result.returncode
    return 0


def cmd_bench_ifc(args: list[str]) -> int:
    """benchmarks/bench_ifc.py in .venv-core; it creates .venv-ifc (ifcopenshell,
    ifcclash) itself and runs Debian's `blender`."""
    setup()
    command = [venv_python(CORE_VENV), ROOT / "benchmarks" / "bench_ifc.py", *args]
    log("$ " + " ".join(str(part) for part in command))
    return subprocess.run(command, cwd=ROOT).returncode


def cmd_lint(args: list[str]) -> int:
    python = ensure_venv(VENV, REQUIREMENTS)
    paths = [
        "collide_addon",
        "collide_dev",
        "collide_farm",
        "blender_scripts",
        "tests",
        "benchmarks",
        "build.py",
        "demo.py",
    ]
    formatted = subprocess.run([python, "-m", "ruff", "format", "--check", *paths], cwd=ROOT)
    checked = subprocess.run([python, "-m", "ruff", "check", *paths], cwd=ROOT)
    return formatted.returncode or checked.returncode


def addon_version() -> str:
    """The version in blender_manifest.toml, the one source of the version number."""
    for line in MANIFEST.read_text().splitlines():
        key, _, value = line.partition("=")
        if key.strip() == "version":
            return value.strip().strip('"')
    raise SystemExit("build.py: no version in collide_addon/blender_manifest.toml")


def build_zip() -> Path:
    """dist/collide_addon-<version>.zip: the package folder at the zip's root, and nothing
    else (collide_dev and collide_farm are not part of the add-on).

    One zip serves both install paths: Blender 3.4-4.1 reads `bl_info` from
    `collide_addon/__init__.py`; Blender 4.2+ reads `blender_manifest.toml`.
    """
    import zipfile

    DIST.mkdir(exist_ok=True)
    target = DIST / f"collide_addon-{addon_version()}.zip"
    temporary = target.with_suffix(".zip.tmp")
    with zipfile.ZipFile(temporary, "w", zipfile.ZIP_DEFLATED) as archive:
        for path in sorted(PACKAGE.rglob("*")):
            if path.is_file() and "__pycache__" not in path.parts and path.suffix != ".pyc":
                archive.write(path, path.relative_to(ROOT).as_posix())
    os.replace(temporary, target)
    log(f"wrote {target.relative_to(ROOT)}")
    validate_extension(target)
    return target


def validate_extension(archive: Path) -> None:
    """Check the zip as an extension with Blender's own tool from the bpy wheel.

    (`blender --command extension validate` runs the same script.) Its `build` command
    is not used: it puts the files at the zip's root, which a legacy install cannot
    read; a zip whose single folder holds the manifest is a valid extension too.
    """
    tools = sorted(
        VENV.glob("lib/python3*/site-packages/bpy/*/scripts/addons_core/bl_pkg/cli/blender_ext.py")
    )
    if not tools:
        log("no bpy wheel in .venv: extension validation skipped (run `build.py setup`)")
        return
    run([venv_python(VENV), tools[-1], "validate", archive])


def cmd_zip(args: list[str]) -> int:
    # .venv holds Blender's extension tool, so that the zip is always validated here.
    ensure_venv(VENV, REQUIREMENTS)
    build_zip()
    return 0


COMMANDS = {
    "setup": cmd_setup,
    "test": cmd_test,
    "demo": cmd_demo,
    "zip": cmd_zip,
    "bench": cmd_bench,
    "bench-ifc": cmd_bench_ifc,
    "lint": cmd_lint,
}


def main(argv: list[str]) -> int:
    drop_pyenv_shim_paths()
    if not argv or argv[0] not in COMMANDS:
        print(__doc__, file=sys.stderr)
        return 2
    return COMMANDS[argv[0]](argv[1:])


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
