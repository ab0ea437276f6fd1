"""Small pieces more than one report writer uses, so that writers do not import each other."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from ..core.contact import CONTACT_RELATIVE

# The first 8 bytes of every PNG file; thumbnails are checked against it before embedding.
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def format_intervals(intervals: list[list[int]], separator: str = ";") -> str:
    """Frame intervals as text, a lone frame as itself: [[1, 12], [40, 40]] -> "1-12;40"."""
    return separator.join(
        str(first) if first == last else f"{first}-{last}" for first, last in intervals
    )


# Past this many metres from the origin the contact epsilon, a millionth of the
# coordinate, reaches a millimetre: a georeferenced model, placed at its site's
# coordinates.
FAR_REACH = 1000.0

# Reports give lengths in the scene's units, as the panel reads them and tests files
# write tolerances: Blender's Unit Scale is the metres in one (0.001 in a scene modelled
# in millimetres). Its usual values are named; others are written as a multiple of a metre.
_UNIT_NAMES = {1.0: "m", 0.001: "mm", 0.01: "cm", 1000.0: "km", 0.0254: "in", 0.3048: "ft"}


def unit_label(unit_scale: float) -> str:
    """The name of a scene unit of `unit_scale` metres: "m", "mm", ..., or "x 0.5 m"."""
    return _UNIT_NAMES.get(float(unit_scale), f"\u00d7 {unit_scale:g} m")


def far_resolution(reach: float, unit_scale: float = 1.0) -> str | None:
    """To what contacts are decided where objects reach `reach` scene units of
    `unit_scale` metres from the origin (the contact epsilon there, a millionth of it),
    when that is `FAR_REACH` metres or more: "2 mm", "2.5 m"; None nearer."""
    reach_metres = reach * unit_scale
    if not reach_metres >= FAR_REACH:
        return None
    epsilon = CONTACT_RELATIVE * reach_metres
    return f"{epsilon * 1000.0:.3g} mm" if epsilon < 1.0 else f"{epsilon:.3g} m"


# Characters that would split a printed line (those str.splitlines() breaks at) or drive
# the terminal (escape sequences that clear the screen or print over a line, bidi
# controls that reverse what follows): an object name can hold any of them.
UNPRINTABLE = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff]")


def listed(names: Sequence[str], most: int) -> str:
    """The first `most` of `names` joined by commas, and how many more there are:
    "'A', 'B', 'C' and 4 more" (the names as given: quote them first where wanted)."""
    more = len(names) - most
    return ", ".join(names[:most]) + (f" and {more} more" if more > 0 else "")


def names_by_reason(left_out: Mapping[str, str]) -> dict[str, list[str]]:
    """{reason: [name, ...]} of objects left out of a check, `left_out` {name: reason},
    the names in its order."""
    by_reason: dict[str, list[str]] = {}
    for name, reason in left_out.items():
        by_reason.setdefault(reason, []).append(name)
    return by_reason


def one_line(text: str) -> str:
    """`text` with line breaks and terminal controls written as Python escapes (\\n,
    \\x1b, \\u202e, ...): one line that prints as it reads."""
    return UNPRINTABLE.sub(lambda match: repr(match.group())[1:-1], text)


def warning_lines(report) -> list[str]:
    """The report's warnings as a run prints them on stderr: "collide: warning: ...", one
    line each."""
    return [f"collide: warning: {one_line(warning)}" for warning in report.get("warnings", [])]


def fix_lines(clashes) -> list[str]:
    """One line per clash with a suggested fix, as the command line prints them:
    "fix <id> <a> / <b>: move <b> by (x, y, z)" or "... : none: <why>"."""
    return [
        f"fix {clash['id']} " + one_line(f"{clash['a']} / {clash['b']}: {fix_text(clash)}")
        for clash in clashes
        if "fix" in clash
    ]


def fix_text(clash) -> str:
    """A clash's suggested fix to read: "move B by (0.5, 0, -0.25)", "none: why", or ""
    without one."""
    fix = clash.get("fix")
    if fix is None:
        return ""
    if "none" in fix:
        return f"none: {fix['none']}"
    # 12 digits: the move's margin past contact is a few micrometres, which fewer digits
    # of a move of metres would round away.
    moves = ", ".join(f"{value:.12g}" for value in fix["translation"])
    return f"move {fix['object']} by ({moves})"


def checked_on(clash) -> str:
    """What decided a clash, to read: "mesh, crossing" or "proxies box / sphere" (a
    report written before mesh mode has no "geometry" and was decided on proxies)."""
    if clash.get("geometry") == "mesh":
        return f"mesh, {clash.get('relation', '').replace('_', ' ')}"
    return "proxies " + " / ".join(clash["kinds"])


def shortened_in_middle(text: str, width_of, room: float) -> str:
    """`text` with its middle cut out for an ellipsis where it is wider than `room`, as
    `width_of(text)` measures, keeping as much of both ends as fits (the start first)."""
    if width_of(text) <= room:
        return text
    kept = 0
    # The most characters kept (split between the two ends) whose text fits.
    low, high = 0, len(text) - 1
    while low <= high:
        middle = (low + high) // 2
        if width_of(_cut_middle(text, middle)) <= room:
            kept, low = middle, middle + 1
        else:
            high = middle - 1
    return _cut_middle(text, kept)


def _cut_middle(text: str, kept: int) -> str:
    head = (kept + 1) // 2
    return text[:head] + "\u2026" + text[len(text) - (kept - head) :]


# Where a long word (an object's name) is best broken over lines, in the panel and in the
# HTML report: after these.
NAME_BREAKS = "._-/:"


def wrapped_lines(text: str, width_of, room: float | None) -> list[str]:
    """`text` broken into lines of words that each fit `room` as `width_of(text)`
    measures (None: unknown, one line), a word wider than the room broken where it
    must: for a message in a narrow sidebar, which Blender would cut off with "...".
    Words are separated by plain spaces: a no-break space keeps a number with its unit
    ("2\u00a0mm")."""
    if room is None or width_of(text) <= room:
        return [text]
    lines: list[str] = []
    line = ""
    for word in filter(None, text.split(" ")):
        candidate = f"{line} {word}" if line else word
        if width_of(candidate) <= room:
            line = candidate
            continue
        if line:
            lines.append(line)
        while len(word) > 1 and width_of(word) > room:
            cut = 1  # at least one character a line, however narrow the room
            while cut < len(word) - 1 and width_of(word[: cut + 1]) <= room:
                cut += 1
            # After punctuation where it leaves the line at least half full: a name
            # reads "Beam_Steel_IPE300_" / "Level04_0150", not "..._Lev" / "el04_0150".
            after = max(word.rfind(mark, 0, cut) for mark in NAME_BREAKS) + 1
            if after > cut // 2:
                cut = after
            lines.append(word[:cut])
            word = word[cut:]
        line = word
    if line:
        lines.append(line)
    return lines


def pair_label(name_a: str, name_b: str, separator: str, width_of, room: float | None) -> str:
    """Two names with `separator` between them, fitted to `room` (None: unknown, the
    names whole) as `width_of(text)` measures.

    A name that fits in half the room stays whole and the other is shortened to the
    rest; two long names are shortened to half each, each keeping its start and end.
    Cutting the whole label instead takes the separator, the end of one name and the
    start of the other with it: "Cabinet.Le...g name 002" for two cabinets."""
    whole = name_a + separator + name_b
    if room is None or width_of(whole) <= room:
        return whole
    names_room = room - width_of(separator)
    width_a, width_b = width_of(name_a), width_of(name_b)
    if width_a <= names_room / 2:
        name_b = shortened_in_middle(name_b, width_of, names_room - width_a)
    elif width_b <= names_room / 2:
        name_a = shortened_in_middle(name_a, width_of, names_room - width_b)
    else:
        name_a = shortened_in_middle(name_a, width_of, names_room / 2)
        name_b = shortened_in_middle(name_b, width_of, names_room / 2)
    return name_a + separator + name_b
