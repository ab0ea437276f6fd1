"""Suite-wide settings.

- Hypothesis: CI runs a fixed, derandomized search so that a green run stays green;
  local runs explore fresh examples (and keep failures in .hypothesis/).
- A skipped test is a missing test: any skip fails the run.
- Markers (registered in pyproject.toml, `--strict-markers`): everything under
  tests/blender and tests/cli is `blender`; core tests of about a second or more carry
  `@pytest.mark.slow`. `pytest -m "not slow and not blender"` is the quick inner loop.
- bpy 4.2 ends the process without interpreter finalization (see `pytest_unconfigure`).
"""

import importlib.util
import os
import sys
from pathlib import Path

import pytest

# pytest's own `-m` expression parser (no public API offers it), to tell whether `-m`
# deselects the blender tests before tests/blender is collected.
from _pytest.mark.expression import Expression
from hypothesis import settings

settings.register_profile("ci", derandomize=True, print_blob=True)
if os.environ.get("CI"):
    settings.load_profile("ci")

TESTS = Path(__file__).resolve().parent
BLENDER_FOLDERS = (TESTS / "blender", TESTS / "cli")
SESSION = pytest.StashKey[pytest.Session]()


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config, items):
    """Marks before `-m` deselects (this hook runs ahead of pytest's own)."""
    for item in items:
        if any(item.path.is_relative_to(folder) for folder in BLENDER_FOLDERS):
            item.add_marker(pytest.mark.blender)


def pytest_ignore_collect(collection_path, config):
    """Collecting tests/blender imports bpy: where bpy is missing (.venv-core) and `-m`
    deselects the blender tests anyway, that folder is not collected at all."""
    if collection_path != TESTS / "blender" or importlib.util.find_spec("bpy") is not None:
        return None
    markexpr = config.getoption("markexpr")
    if markexpr and not Expression.compile(markexpr).evaluate(
        lambda name, **kwargs: name == "blender"
    ):
        return True
    return None


def pytest_sessionstart(session):
    session.config.stash[SESSION] = session


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session, exitstatus):
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    skipped = len(reporter.stats.get("skipped", [])) if reporter else 0
    if skipped and exitstatus == pytest.ExitCode.OK:
        reporter.write_line(f"{skipped} test(s) skipped: a skipped test is a missing test")
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


@pytest.hookimpl(trylast=True)
def pytest_unconfigure(config):
    """Under bpy 4.2, leave with the session's exit status before the interpreter
    finalizes: that wheel's C++ static destructors run after Python has finalized and
    crash (SIGSEGV) once a Python property with an update or get callback was registered,
    as the add-on's are. Every result is reported by then."""
    bpy = sys.modules.get("bpy")
    if bpy is None or tuple(bpy.app.version[:2]) != (4, 2):
        return
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(int(config.stash[SESSION].exitstatus))
