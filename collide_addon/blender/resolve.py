"""Resolve: move the objects of clashes apart by the translation the core finds.

The pair's proxies come from a fresh check of the scene (`session.check`); the move is
`core.resolve.separating_translations` (or, with exact meshes, the checked search of
`mesh_separating_translations` along the proxies' direction), in world space. It is
turned into a change of each moved object's location through its parent's world matrix
and parent inverse, within the location axes that are not locked
(`core.resolve.along_free_axes`). An object whose location is animated is moved only
when auto-keying is on, and keyed at the current frame; otherwise it is left alone with a
warning, as the next frame change would undo the move. Of a parent and its child (or any
descendant) only the child moves, the parent carrying it along; an object linked from a
library is left alone with a warning (Blender neither edits nor saves its location).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..core import pair_distance
from ..core.contact import contact_epsilon, resolved_distance
from ..core.resolve import (
    FIX_REASONS,
    along_free_axes,
    mesh_separating_translations,
    separating_translations,
)
from . import session


@dataclass
class Outcome:
    """What a resolve did: the names of the objects moved and a message per pair left
    as it was (with why)."""

    moved: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


def target_pairs(context, use_selection: bool) -> list[tuple[str, str]]:
    """The (name_a, name_b) of the clash rows to resolve: the picked row, or (with
    `use_selection`, or no row picked) every row with a selected object."""
    settings = context.scene.collide
    records = settings.clashes
    index = settings.active_clash_index
    if not use_selection and 0 <= index < len(records):
        return [(records[index].name_a, records[index].name_b)]
    # The view layer's selection: a timer's or a handler's context has no `selected_objects`.
    selected = set(context.view_layer.objects.selected)
    return [
        (record.name_a, record.name_b)
        for record in records
        if record.object_a in selected or record.object_b in selected
    ]


def _location_animated(obj) -> bool:
    """Whether an F-curve of the object's action, or of an action in one of its NLA
    strips (an action pushed down), drives its location."""
    animation = obj.animation_data
    if animation is None:
        return False
    actions = [(animation.action, getattr(animation, "action_slot", None))]
    actions += [
        (strip.action, getattr(strip, "action_slot", None))
        for track in animation.nla_tracks
        if not track.mute
        for strip in track.strips
        if not strip.mute
    ]
    return any(
        curve.data_path == "location"
        for action, slot in actions
        if action is not None
        for curve in _fcurves(action, slot)
    )


def _fcurves(action, slot):
    """An action's F-curves for the object's slot of it."""
    if hasattr(action, "fcurves") and len(getattr(action, "fcurves", ())):
        return action.fcurves
    if slot is None:
        return ()
    # Blender 4.4+ keeps the curves in the channel bag of the object's action slot.
    from bpy_extras import anim_utils

    channelbag = anim_utils.action_get_channelbag_for_slot(action, slot)
    return channelbag.fcurves if channelbag is not None else ()


def _is_ancestor(older, younger) -> bool:
    """Whether `older` is `younger`'s parent, or its parent's, and so on."""
    parent = younger.parent
    while parent is not None:
        if parent == older:
            return True
        parent = parent.parent
    return False


def location_axes(obj, depsgraph) -> np.ndarray:
    """The world move of one unit of each location axis of `obj`: (3, 3), column k for
    axis k. An object parent's world matrix times the parent inverse; for other parent
    types (bones, vertices) the same read off the object's own matrices."""
    parent = obj.parent
    if parent is None:
        return np.eye(3)
    if obj.parent_type == "OBJECT":
        parent_world = parent.evaluated_get(depsgraph).matrix_world
        matrix = parent_world @ obj.matrix_parent_inverse
    else:
        world = obj.evaluated_get(depsgraph).matrix_world
        matrix = world @ obj.matrix_basis.inverted_safe()
    return np.array(matrix, dtype=np.float64)[:3, :3]


@dataclass
class _Move:
    obj: object
    world: np.ndarray  # (3,) the move wanted


def _plan(moves: list[_Move], scene, depsgraph) -> tuple[list, str | None]:
    """The location change of each move, or why the pair must stay as it is."""
    auto_key = scene.tool_settings.use_keyframe_insert_auto
    for move in moves:
        if move.obj.library is not None:
            # Blender neither edits nor saves a linked object's location.
            return [], f"{move.obj.name} is linked from {move.obj.library.name}"
        if _location_animated(move.obj) and not auto_key:
            return [], (
                f"{move.obj.name}'s location is animated: turn on auto-keying to key the "
                "move at this frame"
            )
    axes = np.stack([location_axes(move.obj, depsgraph) for move in moves])
    free = np.array([[not locked for locked in move.obj.lock_location] for move in moves])
    _, local, possible = along_free_axes(np.stack([move.world for move in moves]), axes, free)
    for move, ok in zip(moves, possible.tolist(), strict=True):
        if not ok:
            return [], f"{move.obj.name}'s free location axes cannot move it out"
    return [(move.obj, change) for move, change in zip(moves, local, strict=True)], None


def _apply(changes, scene) -> None:
    for obj, change in changes:
        obj.location = tuple(np.array(obj.location, dtype=np.float64) + change)
        if _location_animated(obj):
            obj.keyframe_insert("location", frame=scene.frame_current)


def _clearance(scene, points: np.ndarray) -> float:
    """The distance the scene's Check no longer counts as a clash, at the contact points
    (k, 3): the largest over them."""
    settings = scene.collide
    rule = session.CHECK_RULES[settings.check]
    return float(np.max(resolved_distance(rule, settings.tolerance, contact_epsilon(points))))


def _world_translation(session_state, fixed: int, moving: int, clearance: float, use_mesh: bool):
    """The world move (3,) of proxy `moving` away from proxy `fixed`, or a reason (str)."""
    proxies = session_state.proxies
    translation = separating_translations(proxies.batch, [fixed], [moving], clearance)[0]
    if not use_mesh:
        return translation
    reader = session_state.reader
    meshes = [reader.triangle_mesh(proxies.geometry_keys[row]) for row in (fixed, moving)]
    if any(mesh is None for mesh in meshes):
        return "an object has no triangles to check exactly"
    fixes = mesh_separating_translations(
        meshes, proxies.matrices[[fixed, moving]], [[0, 1]], translation[None], clearance
    )
    if not fixes.found[0]:
        return FIX_REASONS[fixes.reason[0]]
    return fixes.translation[0]


def _resolve_pair(context, names, move_both: bool, use_mesh: bool, outcome: Outcome) -> None:
    scene = context.scene
    state = session.session_for(scene)
    proxies = state.proxies
    rows = {name: row for row, name in enumerate(proxies.names)}
    if names[0] not in rows or names[1] not in rows:
        outcome.warnings.append(f"{names[0]} / {names[1]}: no longer checked")
        return
    first, second = rows[names[0]], rows[names[1]]
    label = f"{names[0]} / {names[1]}"
    if not ((state.clashes.pairs == sorted((first, second))).all(axis=1)).any():
        return  # apart already (an earlier move of the same run separated it)
    # The active object moves; with both moving, each takes half. A parent carries its
    # child along: of a parent (or an ancestor) and its child, only the child moves, all
    # the way (moving the parent left the pair as deep as it was).
    active = context.view_layer.objects.active
    fixed, moving = (second, first) if proxies.objects[first] == active else (first, second)
    if _is_ancestor(proxies.objects[moving], proxies.objects[fixed]):
        fixed, moving, move_both = moving, fixed, False
    elif _is_ancestor(proxies.objects[fixed], proxies.objects[moving]):
        move_both = False
    if proxies.instances[[fixed, moving] if move_both else [moving]].any():
        outcome.warnings.append(f"{label}: instances move with their instancer; not moved")
        return
    result = pair_distance(proxies.batch, [fixed], [moving])
    contact = 0.5 * (result.point_i + result.point_j)
    translation = _world_translation(
        state, fixed, moving, _clearance(scene, contact), use_mesh=use_mesh
    )
    if isinstance(translation, str):
        outcome.warnings.append(f"{label}: {translation}")
        return
    if move_both:
        moves = [
            _Move(proxies.objects[moving], 0.5 * translation),
            _Move(proxies.objects[fixed], -0.5 * translation),
        ]
    else:
        moves = [_Move(proxies.objects[moving], translation)]
    changes, why_not = _plan(moves, scene, context.evaluated_depsgraph_get())
    if why_not is not None:
        outcome.warnings.append(f"{label}: {why_not}; not moved")
        return
    _apply(changes, scene)
    outcome.moved.extend(obj.name for obj, _ in changes)
    context.view_layer.update()
    session.check(scene, context.evaluated_depsgraph_get())


def resolve(context, use_selection: bool, move_both: bool, use_mesh: bool) -> Outcome:
    """Move the objects of the chosen clashes apart (see the module docstring), one pair
    after another, checking again after each move so that the next pair sees it.

    Raises SceneReadError (or ValueError from the core) on unusable input, as a check does.
    """
    scene = context.scene
    session.check(scene, context.evaluated_depsgraph_get(), look_again=True)
    outcome = Outcome()
    for names in target_pairs(context, use_selection):
        _resolve_pair(context, names, move_both, use_mesh, outcome)
    return outcome
