"""Pieces the report writers share: two names fitted into a label."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from collide_addon.report.common import (
    fix_lines,
    listed,
    names_by_reason,
    one_line,
    pair_label,
    shortened_in_middle,
    warning_lines,
    wrapped_lines,
)

SEPARATOR = " / "
NAMES = st.text(alphabet="abcXYZ_.0 ", min_size=1, max_size=60)


@settings(max_examples=300, deadline=None)
@given(name_a=NAMES, name_b=NAMES, room=st.integers(12, 80))
def test_pair_labels_keep_both_names_in_their_room(name_a, name_b, room):
    # Measured in characters here; the panel measures pixels with Blender's font.
    text = pair_label(name_a, name_b, SEPARATOR, len, room)
    whole = name_a + SEPARATOR + name_b
    if len(whole) <= room:
        assert text == whole
        return
    assert len(text) <= room
    first, second = text.split(SEPARATOR)
    names_room = room - len(SEPARATOR)
    for shown, name, other in ((first, name_a, name_b), (second, name_b, name_a)):
        # Each name whole, or its start and end around an ellipsis.
        head, _, tail = shown.partition("\u2026")
        assert shown == name or (name.startswith(head) and name.endswith(tail))
        if len(name) <= names_room / 2:
            assert shown == name  # a short name leaves the rest to a long one
        if len(other) <= names_room / 2:
            assert len(shown) == min(len(name), names_room - len(other))
        else:
            assert len(shown) >= min(len(name), names_room // 2)


def test_pair_labels_of_unknown_room_are_whole():
    assert pair_label("A" * 40, "B" * 40, SEPARATOR, len, None) == "A" * 40 + " / " + "B" * 40


def test_shortened_names_keep_their_start_first():
    assert shortened_in_middle("Cabinet.Left.001", len, 9) == "Cabi\u2026.001"
    assert shortened_in_middle("Cabinet.Left.001", len, 8) == "Cabi\u2026001"
    assert shortened_in_middle("short", len, 9) == "short"
    assert shortened_in_middle("long name", len, 1) == "\u2026"


def test_warning_lines_are_one_line_each():
    report = {"warnings": ["Far out.", "Open mesh in\nA"]}
    assert warning_lines(report) == [
        "collide: warning: Far out.",
        "collide: warning: Open mesh in\\nA",
    ]
    assert warning_lines({}) == []


def test_printed_lines_escape_what_would_drive_the_terminal():
    """An object named with escape sequences cleared the screen and printed a green "ALL
    CLEAR" through --suggest-fixes' lines; a right-to-left override reversed the rest of
    the line."""
    name = "\x1b[2J\x1b[32mALL CLEAR\x1b[0m \u202eexe.live"
    clash = {"id": "0123456789abcdef", "a": name, "b": "Wall", "fix": {"none": "why"}}
    [line] = fix_lines([clash])
    assert line.isprintable() and "\\x1b[2J\\x1b[32mALL CLEAR" in line and "\\u202e" in line
    [warning] = warning_lines({"warnings": [f"open mesh: {name}\ttab"]})
    assert warning.isprintable() and warning.endswith("\\u202eexe.live\\ttab")
    assert one_line("Wall \u00e9 \u6728 \U0001f600") == "Wall \u00e9 \u6728 \U0001f600"


@settings(max_examples=300, deadline=None)
@given(
    text=st.text(alphabet="abcXYZ_.0'", min_size=0, max_size=40).flatmap(
        lambda first: st.lists(st.text(alphabet="abc:'", min_size=1, max_size=30), max_size=8).map(
            lambda words: " ".join([first, *words]).strip()
        )
    ),
    room=st.integers(1, 30),
)
def test_wrapped_lines_fit_their_room_and_keep_every_word(text, room):
    lines = wrapped_lines(text, len, room)
    assert all(len(line) <= room or len(line) == 1 for line in lines)
    # The words in order: lines joined by spaces, or a long word's pieces joined.
    assert "".join(lines).replace(" ", "") == text.replace(" ", "")
    if len(text) <= room:
        assert lines == [text]


def test_wrapped_lines_break_at_spaces_first():
    text = "SceneReadError: 'C' has NaN or infinite vertex coordinates"
    assert wrapped_lines(text, len, 26) == [
        "SceneReadError: 'C' has",
        "NaN or infinite vertex",
        "coordinates",
    ]
    assert wrapped_lines(text, len, None) == [text]


def test_wrapped_lines_break_names_after_punctuation_and_keep_units_with_numbers():
    # A name broken anywhere read "Beam_Steel_IPE300_Lev" / "el04_0150"; "2 mm" split
    # over two lines read "2" / "mm".
    assert wrapped_lines("Beam_Steel_IPE300_Level04_0150", len, 21) == [
        "Beam_Steel_IPE300_",
        "Level04_0150",
    ]
    assert wrapped_lines("abcdefghijklmnopqrstuvwxyz", len, 10) == [
        "abcdefghij",
        "klmnopqrst",
        "uvwxyz",
    ]
    assert wrapped_lines("Far out: contacts to 2\u00a0mm", len, 22) == [
        "Far out: contacts to",
        "2\u00a0mm",
    ]


def test_listed_names_the_first_and_counts_the_rest():
    assert listed([], 3) == ""
    assert listed(["a", "b"], 3) == "a, b"
    assert listed(["a", "b", "c"], 3) == "a, b, c"
    assert listed(["'a'", "'b'", "'c'", "'d'", "'e'"], 3) == "'a', 'b', 'c' and 2 more"


def test_names_by_reason_groups_left_out_objects_in_their_order():
    left_out = {"C": "NaN", "A": "empty", "B": "NaN"}
    assert names_by_reason(left_out) == {"NaN": ["C", "B"], "empty": ["A"]}
    assert list(names_by_reason(left_out)) == ["NaN", "empty"]
    assert names_by_reason({}) == {}
