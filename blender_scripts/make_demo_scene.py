"""Build collide's demo scene and save it as a .blend.

    blender -b --factory-startup --python blender_scripts/make_demo_scene.py -- OUT.blend

An animated assembly over frames 1-60 with known clashes:
- Pipe.Through.Wall: a pipe passing through a wall (a hard clash on every frame);
- Beam.NearMiss: a beam 5 cm above a duct (no hard clash; a 10 cm clearance clash);
- Arm.Swing: an arm that swings into Column.B on frames 29-31;
- Probe.Fast: a small sphere crossing the thin Panel.Thin between frames 30 and 31,
  so fast that no sampled frame shows it inside (found only with --substeps);
- Floor, Column.A and Column.B standing on it (touching).
Run it in the Blender that will read the file: a .blend saved by a newer Blender may
not open in an older one.
"""

from __future__ import annotations

import math
import sys

import bpy


def box(name, location, size, rotation=(0.0, 0.0, 0.0)):
    bpy.ops.mesh.primitive_cube_add(size=1.0, location=location, rotation=rotation)
    obj = bpy.context.active_object
    obj.name = name
    obj.scale = size
    return obj


def cylinder(name, location, radius, depth, rotation=(0.0, 0.0, 0.0)):
    bpy.ops.mesh.primitive_cylinder_add(
        radius=radius, depth=depth, location=location, rotation=rotation, vertices=24
    )
    obj = bpy.context.active_object
    obj.name = name
    return obj


def sphere(name, location, radius):
    bpy.ops.mesh.primitive_uv_sphere_add(radius=radius, location=location)
    obj = bpy.context.active_object
    obj.name = name
    return obj


def keyframes(obj, path, frames_and_values, linear=True):
    for frame, value in frames_and_values:
        setattr(obj, path, value)
        obj.keyframe_insert(path, frame=frame)
    if linear:
        for curve in obj.animation_data.action.fcurves:
            for point in curve.keyframe_points:
                point.interpolation = "LINEAR"


def build() -> None:
    bpy.ops.wm.read_homefile(use_empty=True)
    scene = bpy.context.scene
    scene.frame_start, scene.frame_end = 1, 60

    box("Floor", (0.0, 0.0, -0.1), (12.0, 12.0, 0.2))
    box("Column.A", (-3.0, -3.0, 1.5), (0.4, 0.4, 3.0))
    box("Column.B", (3.0, 0.0, 1.5), (0.4, 0.4, 3.0))
    box("Wall", (0.0, 3.0, 1.5), (6.0, 0.3, 3.0))
    cylinder("Pipe.Through.Wall", (0.0, 3.0, 2.0), 0.1, 2.0, rotation=(math.pi / 2, 0.0, 0.0))
    box("Duct", (-2.0, -1.0, 2.0), (3.0, 0.4, 0.4))
    # The beam's underside sits 5 cm above the duct's top (2.2 m).
    box("Beam.NearMiss", (-2.0, -1.0, 2.25 + 0.05), (3.0, 0.3, 0.1))

    arm = box("Arm.Swing", (1.0, 0.0, 1.0), (2.0, 0.2, 0.2))
    keyframes(
        arm, "location", [(1, (0.0, -2.0, 1.0)), (30, (1.9, 0.0, 1.0)), (60, (0.0, -2.0, 1.0))]
    )

    box("Panel.Thin", (4.5, -4.0, 1.0), (1.0, 0.02, 1.0))
    probe = sphere("Probe.Fast", (4.5, -3.0, 1.0), 0.05)
    # 1.6 m per frame: at frame 30 the probe is 0.8 m in front of the panel, at 31 0.8 m behind.
    keyframes(probe, "location", [(1, (4.5, 43.2, 1.0)), (60, (4.5, -51.2, 1.0))])


def main() -> None:
    arguments = sys.argv[sys.argv.index("--") + 1 :] if "--" in sys.argv else []
    if len(arguments) != 1:
        print(
            "make_demo_scene: usage: ... --python make_demo_scene.py -- OUT.blend", file=sys.stderr
        )
        sys.exit(2)
    build()
    bpy.ops.wm.save_as_mainfile(filepath=arguments[0])


if __name__ == "__main__":
    main()
