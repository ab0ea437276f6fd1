"""One version number: blender_manifest.toml is the source; bl_info and the installed
distribution (whose version hatchling reads from the manifest) must agree with it."""

import ast
import importlib.metadata
import json
import tomllib
from pathlib import Path

import collide_addon

PACKAGE = Path(collide_addon.__file__).resolve().parent


def manifest_version() -> str:
    with (PACKAGE / "blender_manifest.toml").open("rb") as manifest:
        return tomllib.load(manifest)["version"]


def bl_info_literal() -> dict:
    """`bl_info` as Blender reads it: parsed from the source, never run, so a literal."""
    module = ast.parse((PACKAGE / "__init__.py").read_text())
    for statement in module.body:
        if isinstance(statement, ast.Assign) and [
            target.id for target in statement.targets if isinstance(target, ast.Name)
        ] == ["bl_info"]:
            return ast.literal_eval(statement.value)
    raise AssertionError("no bl_info assignment in collide_addon/__init__.py")


def test_bl_info_version_is_the_manifest_version():
    version = bl_info_literal()["version"]
    assert isinstance(version, tuple)
    assert all(isinstance(part, int) for part in version)
    assert ".".join(str(part) for part in version) == manifest_version()


def test_bl_info_at_run_time_is_the_parsed_literal():
    assert collide_addon.bl_info == bl_info_literal()


def test_installed_distribution_has_the_manifest_version():
    assert importlib.metadata.version("collide") == manifest_version()


def test_the_installed_distribution_is_this_checkout():
    """build.py installs the checkout it runs from (editable); one installed from
    another checkout would report that checkout's version."""
    direct_url = importlib.metadata.distribution("collide").read_text("direct_url.json")
    assert direct_url is not None, "collide is not installed from a checkout"
    url = json.loads(direct_url)["url"]
    assert url == (Path(__file__).resolve().parents[1]).as_uri()
