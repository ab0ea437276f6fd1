"""Viewport overlay (UI sessions only): proxies as wireframes, a marker at each clash,
and, while frames change, the clashing objects tinted.

During playback and scrubbing live mode writes no `Object.color` (see `session`): the
clashing objects' evaluated triangles are drawn here instead, translucent in the clash
colour and depth-tested, each geometry's GPU batch made once and placed by its object's
matrix.
"""

import bpy
import numpy as np

from ..core import ShapeBatch
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
# Opacity of the tint drawn over clashing objects while frames change.
TINT_ALPHA = 0.6
# The tint's triangles lie on the objects' own: drawn this much nearer in normalised
# depth (of 2), they win the depth test (there is no polygon offset in `gpu`) without
# showing through what is in front.
TINT_DEPTH_OFFSET = 2e-5


class Wireframes:
    """The proxies' wireframe segments kept from update to update: each proxy's
    segments in its own frame are made once per set of shapes (kinds and sizes), and an
    update places again only the segments of the proxies that moved or turned.

    10,000 proxies make some 600,000 segments; making them all from the shapes on every
    update took about 100 ms.
    """

    def __init__(self) -> None:
        self._shapes: tuple | None = None  # kinds, half extents, radii made for
        self._owners = np.zeros(0, np.int64)  # (m,) proxy of each segment
        self._local = np.zeros((0, 2, 3))  # (m, 2, 3) segments in their proxy's frame
        self._placed: tuple | None = None  # centres (n, 3), rotations (n, 3, 3) placed
        self._world = np.zeros((0, 2, 3), np.float32)  # (m, 2, 3) the segments placed

    def segments(self, batch: ShapeBatch) -> np.ndarray:
        """The segments of `batch`'s shapes as `wireframe_segments` makes them, grouped by
        shape: (m, 2, 3) float32."""
        shapes = (batch.kinds, batch.half_extents, batch.radii)
        if self._shapes is None or not all(
            np.array_equal(mine, theirs) for mine, theirs in zip(self._shapes, shapes, strict=True)
        ):
            self._make_local(batch)
            self._shapes = tuple(array.copy() for array in shapes)
            moved = np.ones(len(batch.kinds), dtype=bool)
        else:
            centers, rotations = self._placed
            moved = np.any(centers != batch.centers, axis=1) | np.any(
                rotations != batch.rotations, axis=(1, 2)
            )
        if moved.any():
            rows = np.flatnonzero(moved[self._owners])
            owners = self._owners[rows]
            placed = np.einsum("sij,sej->sei", batch.rotations[owners], self._local[rows])
            self._world[rows] = placed + batch.centers[owners, None, :]
        self._placed = (batch.centers.copy(), batch.rotations.copy())
        return self._world

    def _make_local(self, batch: ShapeBatch) -> None:
        """Segments of every shape in its own frame, and the shape each belongs to.

        `wireframe_segments` gives no owners, so the shapes are made along the x axis,
        each `spacing` from the last (further than any shape reaches): a segment's
        midpoint then names its shape."""
        count = len(batch.kinds)
        reach = float(np.max(np.linalg.norm(batch.half_extents, axis=1) + batch.radii, initial=0))
        spacing = 4.0 * reach + 1.0
        centers = np.zeros((count, 3))
        centers[:, 0] = spacing * np.arange(count)
        rotations = np.tile(np.eye(3), (count, 1, 1))
        lined_up = ShapeBatch(batch.kinds, centers, rotations, batch.half_extents, batch.radii)
        segments = wireframe_segments(lined_up)
        owners = np.rint(segments[:, :, 0].mean(axis=1) / spacing).astype(np.int64)
        order = np.argsort(owners, kind="stable")
        self._owners = owners[order]
        self._local = segments[order] - centers[self._owners, None, :]
        self._world = np.zeros(self._local.shape, np.float32)


_wireframes = Wireframes()


class TintBatches:
    """The overlay's tint: one GPU batch of triangles per geometry, kept while that
    geometry is not read again, and what a session's check draws with them."""

    def __init__(self) -> None:
        self._batches: dict[tuple, tuple] = {}  # geometry key -> (its _Geometry, batch)
        self._drawn_for: tuple | None = None  # (session, generation) of `_drawn`
        self._drawn: list[tuple] = []  # (batch, model Matrix) of each tinted proxy

    def drawn(self, scene_session) -> list[tuple]:
        """(batch, model matrix) of each proxy `session.overlay_tint_rows` names."""
        key = (scene_session, scene_session.generation)
        if self._drawn_for is None or self._drawn_for[0] is not scene_session:
            self._batches.clear()  # another session's reader: its geometry objects
        if self._drawn_for != key:
            from mathutils import Matrix

            proxies, drawn = scene_session.proxies, []
            rows = session.overlay_tint_rows(scene_session)
            matrices = proxies.matrices[rows].tolist() if len(rows) else []
            for row, matrix in zip(rows.tolist(), matrices, strict=True):
                batch = self._batch(scene_session.reader, proxies.geometry_keys[row])
                if batch is not None:
                    drawn.append((batch, Matrix(matrix)))
            self._drawn_for, self._drawn = key, drawn
        return self._drawn

    def _batch(self, reader, geometry_key: tuple):
        geometry = reader.geometry(geometry_key)
        if geometry is None or not len(geometry.triangles):
            return None
        cached = self._batches.get(geometry_key)
        if cached is None or cached[0] is not geometry:
            from gpu_extras.batch import batch_for_shader

            points = {"pos": geometry.points.astype(np.float32)}
            batch = batch_for_shader(_shader, "TRIS", points, indices=geometry.triangles)
            cached = self._batches[geometry_key] = (geometry, batch)
        return cached[1]


_tint_batches = TintBatches()


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
            segments = _wireframes.segments(session.proxies.batch)
            lines = batch_for_shader(_shader, "LINES", {"pos": segments.reshape(-1, 3)})
        if session.clashes is not None and len(session.clashes):
            coordinates = session.clashes.points.astype("float32")
            points = batch_for_shader(_shader, "POINTS", {"pos": coordinates})
        _cached_key, _cached_batches = key, (lines, points)
    return _cached_batches


def _draw_tint(tinted: list[tuple], color: tuple) -> None:
    """Each (batch, model matrix) of `tinted` in `color`, nearer by TINT_DEPTH_OFFSET."""
    import gpu
    from mathutils import Matrix

    nearer = Matrix.Identity(4)
    nearer[2][3] = -TINT_DEPTH_OFFSET  # clip z - offset * w: NDC depth - offset
    with gpu.matrix.push_pop_projection():
        gpu.matrix.load_projection_matrix(nearer @ gpu.matrix.get_projection_matrix())
        _shader.uniform_float("color", color)
        for batch, matrix in tinted:
            with gpu.matrix.push_pop():
                gpu.matrix.multiply_matrix(matrix)
                batch.draw(_shader)


def _draw() -> None:
    import gpu

    context = bpy.context
    scene = context.scene
    if scene is None or not hasattr(scene, "collide"):
        return
    scene_session = session.session_for(scene)
    lines, points = _batches(scene_session, scene.collide.show_proxies)
    tinted = _tint_batches.drawn(scene_session)
    gpu.state.blend_set("ALPHA")
    gpu.state.depth_test_set("LESS_EQUAL")
    _shader.bind()
    if tinted:
        _draw_tint(tinted, (*scene.collide.clash_color[:3], TINT_ALPHA))
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
    global _handle, _shader, _cached_key, _cached_batches, _wireframes, _tint_batches
    if _handle is not None:
        bpy.types.SpaceView3D.draw_handler_remove(_handle, "WINDOW")
    _handle = _shader = _cached_key = None
    _cached_batches = (None, None)
    _wireframes = Wireframes()
    _tint_batches = TintBatches()
