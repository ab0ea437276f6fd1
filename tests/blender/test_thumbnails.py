"""Thumbnails restore what they change, also on objects hidden from render."""

from __future__ import annotations

import importlib
import math
import struct

import bpy
import numpy as np
import pytest
from bpy_extras.object_utils import world_to_camera_view
from mathutils import Vector

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


def png_chunk_types(png: bytes) -> list[bytes]:
    assert png.startswith(b"\x89PNG\r\n\x1a\n")
    position, types = 8, []
    while position < len(png):
        (length,) = struct.unpack(">I", png[position : position + 4])
        types.append(png[position + 4 : position + 8])
        position += 12 + length
    return types


@pytest.mark.blender
def test_thumbnails_carry_no_stamps_and_are_the_same_every_time(addon):
    # Blender wrote the render's date, render time, file path, ... into every PNG, so the
    # same scene gave different thumbnails and reports; the stamps are off while they
    # render, and back on afterwards.
    thumbnails = importlib.import_module(addon.__name__ + ".blender.thumbnails")
    scene = bpy.context.scene
    owners = {"Pipe": None, "Wall": None}
    owners["Pipe"], owners["Wall"], clash = pipe_through_wall()
    stamps = {"use_stamp_date": True, "use_stamp_render_time": True, "use_stamp_note": True}
    for name, value in stamps.items():
        setattr(scene.render, name, value)
    first = thumbnails.render_thumbnails(bpy.context, scene, [clash], owners)[clash["id"]]
    second = thumbnails.render_thumbnails(bpy.context, scene, [clash], owners)[clash["id"]]
    assert b"tEXt" not in png_chunk_types(first) and b"iTXt" not in png_chunk_types(first)
    assert first == second
    assert all(getattr(scene.render, name) == value for name, value in stamps.items())


@pytest.mark.blender
def test_thumbnails_are_flat_opaque_8_bit_pngs_whatever_the_scenes_output(addon, tmp_path):
    # Blender's default dither put noise in every pixel, which PNG cannot compress: a
    # thumbnail took 40-50 KB, a report of 617 clashes 36 MB. A scene's own output
    # settings (16 bits, alpha, a transparent film, no compression, 32 samples) made them
    # larger or slower still. The thumbnails set their own, and give the scene's back.
    thumbnails = importlib.import_module(addon.__name__ + ".blender.thumbnails")
    scene = bpy.context.scene
    pipe, wall, clash = pipe_through_wall()
    output = {
        "render.dither_intensity": 1.5,
        "render.film_transparent": True,
        "render.image_settings.color_mode": "RGBA",
        "render.image_settings.color_depth": "16",
        "render.image_settings.compression": 0,
        "display.render_aa": "32",
    }
    for path, value in output.items():
        thumbnails._set_path(scene, path, value)
    rendered_with = []

    def record(scene, *_):
        rendered_with.append({path: thumbnails._get_path(scene, path) for path in output})

    pictures = pictures_watched(
        thumbnails, bpy.app.handlers.render_pre, record, clash, {"Pipe": pipe, "Wall": wall}
    )
    assert rendered_with == [
        {
            "render.dither_intensity": 0.0,
            "render.film_transparent": False,
            "render.image_settings.color_mode": "RGB",
            "render.image_settings.color_depth": "8",
            "render.image_settings.compression": 90,
            "display.render_aa": "FXAA",
        }
    ]
    assert {path: thumbnails._get_path(scene, path) for path in output} == output
    png = pictures[clash["id"]]
    bit_depth, color_type = png[24], png[25]  # the IHDR chunk's
    assert (bit_depth, color_type) == (8, 2)  # 8 bits, RGB
    pixels = thumbnail_pixels(png, tmp_path)
    # Flat: Workbench's colours are flat or smooth, so most neighbours are the same
    # colour (with the dither, about half were).
    same = (pixels[:, 1:, :3] == pixels[:, :-1, :3]).all(axis=-1)
    assert same.mean() > 0.8


def pipe_through_wall():
    """A 20 m long wall and a 0.2 m pipe through it near one end, and their clash record
    as a mesh test reports it: the pipe's far end and the wall's face as witnesses."""
    wall = add_object("Wall", mesh("cube"), location=(0, 0, 1.5), scale=(10, 0.1, 1.5))
    # The cylinder (radius 1, depth 4) scaled to radius 0.1, 2 m long, turned along y.
    pipe = add_object("Pipe", mesh("cylinder"), location=(8.5, 0, 2.0), scale=(0.1, 0.1, 0.5))
    pipe.rotation_euler = (math.pi / 2, 0, 0)
    bpy.context.view_layer.update()
    clash = {
        "id": "00000000000000aa",
        "status": "new",
        "a": "Pipe",
        "b": "Wall",
        "worst_frame": 1,
        "point": [8.5, 0.55, 1.9],
        "witnesses": [[8.5, 1.0, 1.9], [8.5, 0.1, 1.9]],
        "bounds": [[-10.0, -1.0, 0.0], [10.0, 1.0, 3.0]],
    }
    return pipe, wall, clash


@pytest.mark.blender
def test_thumbnail_camera_frames_the_clash_point_and_the_smaller_object(addon):
    # The camera framed both whole objects, so the pipe through a 20 m wall was a few
    # pixels wide, off the clash point; it now aims at the point and frames the pipe.
    thumbnails = importlib.import_module(addon.__name__ + ".blender.thumbnails")
    scene = bpy.context.scene
    pipe, wall, clash = pipe_through_wall()
    camera_data = bpy.data.cameras.new("camera")
    camera = bpy.data.objects.new("camera", camera_data)
    scene.collection.objects.link(camera)
    thumbnails.setup_camera(scene, camera)
    thumbnails.aim_camera(camera, clash, [pipe, wall], bpy.context.evaluated_depsgraph_get())
    bpy.context.view_layer.update()

    def view(point):
        return np.array(world_to_camera_view(scene, camera, Vector(point)))

    centre = view(clash["point"])
    assert centre[:2] == pytest.approx([0.5, 0.5], abs=1e-4)
    assert camera_data.clip_start < centre[2] < camera_data.clip_end
    for witness in clash["witnesses"]:
        assert np.all(np.abs(view(witness)[:2] - 0.5) <= 0.4)
    # The whole pipe is in the picture and spans a quarter of it or more (framed with the
    # whole wall, 0.05); the whole wall lies within the clipping range.
    corners = np.array([view(pipe.matrix_world @ Vector(c)) for c in pipe.bound_box])
    assert np.all((corners[:, :2] > 0.0) & (corners[:, :2] < 1.0))
    assert np.ptp(corners[:, :2], axis=0).max() > 0.25
    for corner in wall.bound_box:
        depth = view(wall.matrix_world @ Vector(corner))[2]
        assert camera_data.clip_start < depth < camera_data.clip_end


def thumbnail_pixels(png: bytes, folder) -> np.ndarray:
    """The RGBA pixels of a thumbnail, top row first: (height, width, 4) float."""
    path = folder / "thumbnail.png"
    path.write_bytes(png)
    image = bpy.data.images.load(str(path))
    width, height = image.size
    pixels = np.array(image.pixels[:]).reshape(height, width, 4)
    bpy.data.images.remove(image)
    return pixels[::-1]


def red_in_the_middle(pixels: np.ndarray) -> float:
    """The share of the middle half of a thumbnail's pixels (`thumbnail_pixels`), across
    and down, that is red: the pipe (a), seen through the blue wall still more red than
    blue, while the wall and the background are bluer."""
    red = (pixels[..., 0] > pixels[..., 2]) & (pixels[..., 0] > 0.2)
    height, width = red.shape
    return float(red[height // 4 : 3 * height // 4, width // 4 : 3 * width // 4].mean())


def pictures_watched(
    thumbnails, handlers: list, handler, clashes, owners, progress=None
) -> dict[str, bytes]:
    """`render_thumbnails` of a clash (or a list of them) with `handler` in Blender's
    `handlers` list (one of bpy.app.handlers) while it runs."""
    clashes = clashes if isinstance(clashes, list) else [clashes]
    handlers.append(handler)
    try:
        return thumbnails.render_thumbnails(
            bpy.context, bpy.context.scene, clashes, owners, progress
        )
    finally:
        handlers.remove(handler)


@pytest.mark.blender
def test_thumbnail_shows_the_clash_in_the_middle(addon, tmp_path):
    thumbnails = importlib.import_module(addon.__name__ + ".blender.thumbnails")
    pipe, wall, clash = pipe_through_wall()
    pictures = thumbnails.render_thumbnails(
        bpy.context, bpy.context.scene, [clash], {"Pipe": pipe, "Wall": wall}
    )
    pixels = thumbnail_pixels(pictures[clash["id"]], tmp_path)
    # The pipe, 0.2 m thick, covers a few percent of the middle half of the picture (a
    # few pixels when the picture framed the whole 20 m wall).
    assert red_in_the_middle(pixels) > 0.02
    height, width = pixels.shape[:2]
    # The yellow ball marking the clash point, drawn in front of both, in the centre.
    centre = pixels[height // 2 - 3 : height // 2 + 4, width // 2 - 3 : width // 2 + 4]
    red_, green, blue = centre[..., :3].reshape(-1, 3).mean(axis=0)
    assert red_ > blue + 0.15 and green > blue + 0.15
    # The camera and the marker are gone with their data.
    assert set(bpy.data.objects.keys()) == {"Pipe", "Wall"}
    assert set(bpy.data.meshes.keys()) == {pipe.data.name, wall.data.name}


@pytest.mark.blender
def test_thumbnails_show_the_clash_frame_and_leave_the_scene_alone(addon, tmp_path):
    # Every other object was hidden from render and the scene's own frame set for each
    # picture: seconds a picture in a 20,000-element building, and the scene's frame
    # handlers ran each time. The pictures are now taken in a scene of their own, at the
    # clash's frame, while the scene stays on its frame with its objects as they were.
    thumbnails = importlib.import_module(addon.__name__ + ".blender.thumbnails")
    scene = bpy.context.scene
    pipe, wall, clash = pipe_through_wall()
    bystander = add_object("Bystander", mesh("cube"), location=(0, 5, 0))
    # The pipe reaches the wall at frame 10 only: at frame 1 it is 40 m away.
    pipe.keyframe_insert("location", frame=10)
    pipe.location.x -= 40
    pipe.keyframe_insert("location", frame=1)
    scene.frame_set(1)
    clash["worst_frame"] = 10
    frames_seen = []

    def note_frame(changed, *_):
        frames_seen.append((changed.name, changed.frame_current))

    pictures = pictures_watched(
        thumbnails,
        bpy.app.handlers.frame_change_post,
        note_frame,
        clash,
        {"Pipe": pipe, "Wall": wall},
    )
    # The scene once, at its own frame at the end (the render itself sets the stage's
    # frame again).
    assert set(frames_seen[:-1]) == {("collide thumbnails", 10)}
    assert frames_seen[-1] == ("Scene", 1)
    assert scene.frame_current == 1 and pipe.location.x == pytest.approx(8.5 - 40)
    assert not bystander.hide_render and bystander.users_scene == (scene,)
    assert pipe.users_scene == (scene,) and wall.users_scene == (scene,)
    assert list(bpy.data.scenes) == [scene]
    # The pipe where it is at frame 10: in the middle of the picture.
    assert red_in_the_middle(thumbnail_pixels(pictures[clash["id"]], tmp_path)) > 0.02


@pytest.mark.blender
def test_thumbnails_place_objects_by_their_parents(addon, tmp_path):
    # IFC imports parent every element to its storey: the pictures' own scene holds the
    # clashing objects only, and their parents must still place them.
    thumbnails = importlib.import_module(addon.__name__ + ".blender.thumbnails")
    scene = bpy.context.scene
    pipe, wall, clash = pipe_through_wall()
    storey = bpy.data.objects.new("Storey", None)
    scene.collection.objects.link(storey)
    storey.location = (0.0, 0.0, 10.0)
    for obj in (pipe, wall):
        obj.parent = storey
        obj.location.z -= 10.0  # the same place in the world
    bpy.context.view_layer.update()
    assert pipe.matrix_world.translation.z == pytest.approx(2.0)
    pictures = thumbnails.render_thumbnails(
        bpy.context, scene, [clash], {"Pipe": pipe, "Wall": wall}
    )
    assert red_in_the_middle(thumbnail_pixels(pictures[clash["id"]], tmp_path)) > 0.02


@pytest.mark.blender
def test_clashes_that_give_the_same_picture_share_one_render(addon):
    # One pair in several tests (a hard test and a clearance test) gave the same picture
    # twice: the FZK-Haus report's 617 clashes hold 323 pictures.
    thumbnails = importlib.import_module(addon.__name__ + ".blender.thumbnails")
    pipe, wall, clash = pipe_through_wall()
    same = dict(clash, id="00000000000000bb", test="clearance")
    elsewhere = dict(clash, id="00000000000000cc", point=[8.5, 0.0, 1.9])
    renders, calls = [], []
    pictures = pictures_watched(
        thumbnails,
        bpy.app.handlers.render_pre,
        lambda *_: renders.append(1),
        [clash, same, elsewhere],
        {"Pipe": pipe, "Wall": wall},
        progress=lambda done, total: calls.append((done, total)),
    )
    assert len(renders) == 2 and calls == [(0, 2), (1, 2), (2, 2)]
    assert set(pictures) == {clash["id"], same["id"], elsewhere["id"]}
    assert pictures[same["id"]] == pictures[clash["id"]] != pictures[elsewhere["id"]]
    # As rendered alone.
    alone = thumbnails.render_thumbnails(
        bpy.context, bpy.context.scene, [same], {"Pipe": pipe, "Wall": wall}
    )
    assert alone[same["id"]] == pictures[same["id"]]


@pytest.mark.blender
def test_thumbnails_report_their_progress(addon):
    thumbnails = importlib.import_module(addon.__name__ + ".blender.thumbnails")
    pipe, wall, clash = pipe_through_wall()
    resolved = dict(clash, id="00000000000000bb", status="resolved")
    unknown = dict(clash, id="00000000000000cc", b="Gone")
    calls = []
    pictures = thumbnails.render_thumbnails(
        bpy.context,
        bpy.context.scene,
        [resolved, clash, unknown],
        {"Pipe": pipe, "Wall": wall},
        progress=lambda done, total: calls.append((done, total)),
    )
    # Only the clash that gets a picture counts: resolved ones and ones whose object is
    # not known get none.
    assert set(pictures) == {clash["id"]}
    assert calls == [(0, 1), (1, 1)]


@pytest.mark.blender
def test_thumbnails_have_one_grey_background_whatever_the_world(addon, tmp_path):
    # A scene without a world rendered them on black, where the red and blue parts
    # hardly showed; a white world would wash them out.
    thumbnails = importlib.import_module(addon.__name__ + ".blender.thumbnails")
    scene = bpy.context.scene
    pipe, wall, clash = pipe_through_wall()
    worlds = set(bpy.data.worlds)
    corners = []
    for world in (None, bpy.data.worlds.new("White")):
        if world is not None:
            world.color = (1.0, 1.0, 1.0)
        scene.world = world
        pictures = thumbnails.render_thumbnails(
            bpy.context, scene, [clash], {"Pipe": pipe, "Wall": wall}
        )
        corners.append(thumbnail_pixels(pictures[clash["id"]], tmp_path)[0, 0, :3])
    # Blender's default world colour, 0.0509 linear, is 0.251 once shown.
    for corner in corners:
        assert corner == pytest.approx([0.251] * 3, abs=0.01)
    assert set(bpy.data.worlds) == worlds | {bpy.data.worlds["White"]}


@pytest.mark.blender
def test_thumbnails_show_modifiers_as_the_viewport_does(addon):
    # The clash was found on a copy that an Array modifier adds in the viewport only
    # (show_render off); the picture, rendered without it, showed no pipe at the clash.
    thumbnails = importlib.import_module(addon.__name__ + ".blender.thumbnails")
    pipe, wall, clash = pipe_through_wall()
    pipe.location.x -= 3.0
    copies = pipe.modifiers.new("copies", "ARRAY")
    copies.use_relative_offset, copies.use_constant_offset = False, True
    copies.constant_offset_displace = (30.0, 0.0, 0.0)  # 3 m in the world: scale x 0.1
    smooth = pipe.modifiers.new("smooth", "SUBSURF")
    smooth.levels = smooth.render_levels = 1
    owners = {"Pipe": pipe, "Wall": wall}
    rendered_as_shown = thumbnails.render_thumbnails(
        bpy.context, bpy.context.scene, [clash], owners
    )
    copies.show_render, smooth.render_levels = False, 3
    pictures = thumbnails.render_thumbnails(bpy.context, bpy.context.scene, [clash], owners)
    assert pictures == rendered_as_shown
    # The render settings are the user's again.
    assert not copies.show_render and (smooth.levels, smooth.render_levels) == (1, 3)
