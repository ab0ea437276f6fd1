"""Blender tests in-process with the bpy wheel: the built zip is installed as an
extension into a temporary user configuration and enabled once for the session.

The user directories are set through the environment before `bpy` is first imported
(Blender reads them at start-up), so nothing touches the real user configuration.
`COLLIDE_ADDON_ZIP` names another zip to test; by default build.py's zip is built
afresh, so that a stale zip is never tested.
"""

import os
import sys
import tempfile
from pathlib import Path

import pytest

from tests.addon_zip import addon_zip

USER_DIR = Path(tempfile.mkdtemp(prefix="collide-blender-user-"))
for variable, folder in (
    ("BLENDER_USER_RESOURCES", ""),
    ("BLENDER_USER_CONFIG", "config"),
    ("BLENDER_USER_SCRIPTS", "scripts"),
    ("BLENDER_USER_EXTENSIONS", "extensions"),
    ("BLENDER_USER_DATAFILES", "datafiles"),
):
    os.environ[variable] = str(USER_DIR / folder)

import bpy  # noqa: E402 - after the environment above

REPOSITORY = "user_default"
EXTENSION_MODULE = f"bl_ext.{REPOSITORY}.collide_addon"


def reset_scene() -> None:
    bpy.ops.wm.read_homefile(use_empty=True)


@pytest.fixture(scope="session")
def addon_module() -> str:
    """The enabled add-on's module name (bl_ext.user_default.collide_addon)."""
    import addon_utils

    path = addon_zip()
    result = bpy.ops.extensions.package_install_files(
        filepath=str(path), repo=REPOSITORY, enable_on_install=True
    )
    assert result == {"FINISHED"}
    assert EXTENSION_MODULE in bpy.context.preferences.addons, "extension not enabled"
    assert addon_utils.check(EXTENSION_MODULE)[1], "extension module not loaded"
    yield EXTENSION_MODULE
    addon_utils.disable(EXTENSION_MODULE, default_set=True)


@pytest.fixture
def addon(addon_module):
    """The add-on's package, with a fresh empty file around each test."""
    reset_scene()
    yield sys.modules[addon_module]
    if bpy.context.scene.collide.live:
        bpy.context.scene.collide.live = False
    reset_scene()
