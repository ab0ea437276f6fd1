"""collide: collision and clash detection for Blender.

The package imports nothing from Blender at import time, so that
`collide_addon.core` and `collide_addon.report` work in plain Python; the Blender
glue is imported by `register()`.
"""

bl_info = {
    "name": "collide",
    "author": "collide developers",
    "version": (0, 1, 0),
    "blender": (3, 4, 0),
    "location": "View3D > Sidebar > Collide",
    "description": "Collision and clash detection with box, sphere and capsule proxies",
    "category": "3D View",
}


def register():
    from . import blender

    blender.register()


def unregister():
    from . import blender

    blender.unregister()
