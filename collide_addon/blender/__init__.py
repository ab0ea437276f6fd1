"""The Blender side of collide: settings, operators, panel, live mode, tint, overlay,
clash report runs.

Imported by the add-on's `register()` (and by scripts that run inside Blender) only, so
that the core runs without Blender.
"""

from . import draw, handlers, operators, props, tint, ui
from .clash_test_props import scene_clash_tests
from .report_run import ClashRunError, run_clash_report
from .session import looseness_of

__all__ = [
    "ClashRunError",
    "looseness_of",
    "register",
    "run_clash_report",
    "scene_clash_tests",
    "unregister",
]

# Registration order; unregistered in reverse. Properties first (the others use them);
# tint last, so that unregistering restores colours before anything else goes.
_modules = (props, operators, ui, handlers, draw, tint)


def register():
    for module in _modules:
        module.register()


def unregister():
    for module in reversed(_modules):
        module.unregister()
