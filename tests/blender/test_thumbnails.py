"""Thumbnails restore what they change, also on objects hidden from render."""

from __future__ import annotations

import importlib

import bpy
import pytest

from tests.blender.scenes import add_object, mesh


@pytest.mark.blender
def test_thumbnails_restore_clashing_objects_hidden_from_render(addon):
    # An object hidden from render kept the red or blue it was given for its clash's
    # picture, and was left visible in renders; both are now restored.
    thumbnails = importlib.import_module(addon.__name__ + ".blender.thumbnails")
    scene = bpy.context.scene
    shown = add_object("Shown", mesh("cube"))
    hidden = add_object("Hidden", mesh("cube"), location=(1, 0, 0))
    shown.color = (0.2, 0.3, 0.4, 1.0)
    hidden.color = (0.5, 0.6, 0.7, 1.0)
    hidden.hide_render = True
    clash = {
        "id": "0123456789abcdef",
        "status": "new",
        "a": "Shown",
        "b": "Hidden",
        "worst_frame": 1,
        "point": [0.5, 0.0, 0.0],
        "bounds": [[-1.0, -1.0, -1.0], [2.0, 1.0, 1.0]],
    }
    pictures = thumbnails.render_thumbnails(
        bpy.context, scene, [clash], {"Shown": shown, "Hidden": hidden}
    )
    assert set(pictures) == {clash["id"]}
    assert hidden.hide_render and not shown.hide_render
    assert tuple(hidden.color) == pytest.approx((0.5, 0.6, 0.7, 1.0))
    assert tuple(shown.color) == pytest.approx((0.2, 0.3, 0.4, 1.0))
