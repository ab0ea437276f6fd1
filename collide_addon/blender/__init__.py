"""The Blender side of collide: settings, operators, panel, live mode, tint, overlay.

Imported by the add-on's `register()` only, so that the core runs without Blender.
"""

from . import draw, handlers, operators, props, tint, ui

# Registration order; unregistered in reverse. Properties first (the others use them);
# tint last, so that unregistering restores colours before anything else goes.
_modules = (props, operators, ui, handlers, draw, tint)


def register():
    for module in _modules:
        module.register()


def unregister():
    for module in reversed(_modules):
        module.unregister()
