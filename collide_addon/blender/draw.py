"""Viewport overlay (UI sessions only): proxies as wireframes, a marker at each clash."""

import bpy

from ..core.wireframe import wireframe_segments
from . import session

_handle = None
# What the GPU batches below were built for: (the session, its generation, whether
# proxies are shown); rebuilt on change. The session itself, not its id(): a forgotten
# session's address can be reused.
_cached_key: tuple | None = None
_cached_batches: tuple = (None, None)
_shader = None

PROXY_COLOR = (0.2, 0.8, 1.0, 0.8)
MARKER_SIZE = 10.0


def _uniform_color_shader():
    import gpu

    try:
        return gpu.shader.from_builtin("UNIFORM_COLOR")
    except ValueError:
        # Blender before 3.5 names it by dimension.
        return gpu.shader.from_builtin("3D_UNIFORM_COLOR")


def _batches(session, show_proxies: bool):
    """GPU batches for the session's proxies (lines, only when shown: 10,000 proxies
    make some 600,000 segments) and clash points (points)."""
    global _cached_key, _cached_batches
    from gpu_extras.batch import batch_for_shader

    key = (session, session.generation, show_proxies)
    if _cached_key is None or _cached_key[0] is not session or _cached_key[1:] != key[1:]:
        lines = points = None
        if show_proxies and session.proxies is not None and len(session.proxies.names):
            segments = wireframe_segments(session.proxies.batch).astype("float32")
            lines = batch_for_shader(_shader, "LINES", {"pos": segments.reshape(-1, 3)})
        if session.clashes is not None and len(session.clashes):
            coordinates = session.clashes.points.astype("float32")
            points = batch_for_shader(_shader, "POINTS", {"pos": coordinates})
        _cached_key, _cached_batches = key, (lines, points)
    return _cached_batches


def _draw() -> None:
    import gpu

    context = bpy.context
    scene = context.scene
    if scene is None or not hasattr(scene, "collide"):
        return
    scene_session = session.session_for(scene)
    lines, points = _batches(scene_session, scene.collide.show_proxies)
    gpu.state.blend_set("ALPHA")
    gpu.state.depth_test_set("LESS_EQUAL")
    _shader.bind()
    if lines is not None:
        _shader.uniform_float("color", PROXY_COLOR)
        lines.draw(_shader)
    if points is not None:
        gpu.state.depth_test_set("NONE")
        gpu.state.point_size_set(MARKER_SIZE)
        _shader.uniform_float("color", tuple(scene.collide.clash_color))
        points.draw(_shader)
    gpu.state.depth_test_set("NONE")
    gpu.state.blend_set("NONE")


def redraw_views(context) -> None:
    screen = getattr(context, "screen", None)
    if screen is None:
        return
    for area in screen.areas:
        if area.type == "VIEW_3D":
            area.tag_redraw()


def register():
    global _handle, _shader
    if bpy.app.background:
        return
    _shader = _uniform_color_shader()
    _handle = bpy.types.SpaceView3D.draw_handler_add(_draw, (), "WINDOW", "POST_VIEW")


def unregister():
    global _handle, _shader, _cached_key, _cached_batches
    if _handle is not None:
        bpy.types.SpaceView3D.draw_handler_remove(_handle, "WINDOW")
    _handle = _shader = _cached_key = None
    _cached_batches = (None, None)
