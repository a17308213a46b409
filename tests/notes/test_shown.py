"""A block read as the editor shows it (cortex.notes.shown, blocks.normalize_shown): what
markup is left out, that nothing else is, and that every char still maps to its byte."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cortex.notes.blocks import blocks_of, normalize_pieces, normalize_shown
from cortex.notes.note import parse_note
from cortex.notes.shown import elisions


def shown(body: str) -> list[str]:
    """Each block of `body` as shown, normalised."""
    note = parse_note("notes/t.md", body)
    return [normalize_shown(note.text, b.pieces, elisions(note.text, b.pieces, b.marks()))[0] for b in blocks_of(note)]


READ_AS_SHOWN = [
    ("footnote", "the night train[^1] to Porto", "the night train to Porto"),
    ("named footnote", "the night train[^note-a] to Porto", "the night train to Porto"),
    ("footnote's own text", "[^1]: Booked in March.", "Booked in March."),
    ("link", "see [the timetable](https://cp.pt/x) now", "see the timetable now"),
    ("link with title", 'see [the timetable](https://cp.pt/x "CP") now', "see the timetable now"),
    ("relative link", "see [the plan](plans/2026.md) now", "see the plan now"),
    ("link wrapping a line", "see [the\ntimetable](https://cp.pt/x) now", "see the timetable now"),
    ("emphasis in a link", "see **[the timetable](u)** now", "see the timetable now"),
    ("autolink", "at <https://cp.pt/x> now", "at https://cp.pt/x now"),
    ("email autolink", "mail <ops@example.org> now", "mail ops@example.org now"),
    ("wikilink", "see [[Porto trip]] now", "see Porto trip now"),
    ("wikilink to a heading", "see [[Porto trip#Trains]] now", "see Porto trip#Trains now"),
    ("aliased wikilink", "see [[Porto trip|the trip page]] now", "see the trip page now"),
    ("aliased in a table", "| a | [[Porto trip\\|the trip]] |\n|---|---|\n| b | c |", "| a | the trip |"),
    ("bold tag", "for <b>the whole</b> team", "for the whole team"),
    ("span with attributes", 'for <span class="x" title="y">the whole</span> team', "for the whole team"),
    ("tag in any case", "for <STRONG>the whole</STRONG> team", "for the whole team"),
    ("a break is a space", "first line<br>second line", "first line second line"),
    ("struck tags go, struck text stays", "I do <del>not</del> agree", "I do not agree"),
    ("hidden text stays", "I do <span hidden>not</span> agree", "I do not agree"),
    ("emphasis and code", "**bold** _it_ `code` ***both***", "bold it code both"),
]


@pytest.mark.parametrize("name", [c[0] for c in READ_AS_SHOWN])
def test_markup_the_editor_renders_is_left_out(name: str) -> None:
    _, body, expected = next(c for c in READ_AS_SHOWN if c[0] == name)
    assert shown(body + "\n")[0] == expected


KEPT = [
    ("superscript", "The budget is 10<sup>6</sup> euros", "The budget is 10<sup>6</sup> euros"),
    ("subscript", "CO<sub>2</sub> levels", "CO<sub>2</sub> levels"),
    ("struck Markdown", "I do ~~not~~ agree", "I do not agree"),
    ("escaped footnote", "the train\\[^1] to", "the train\\[^1] to"),
    ("escaped link", "see \\[text](u) now", "see \\[text](u) now"),
    ("footnote in code", "run `x[^1] y` now", "run x[^1] y now"),
    ("wikilink in code", "run `[[a|b]]` now", "run [[a|b]] now"),
    ("link in code", "run `[a](b)` now", "run [a](b) now"),
    ("embed", "see ![[diagram.png]] now", "see ![[diagram.png]] now"),
    ("image", "see ![a map](map.png) now", "see ![a map](map.png) now"),
    ("reference link", "see [the plan][p] now", "see [the plan][p] now"),
    ("inline footnote", "the train^[a note] to", "the train^[a note] to"),
    ("entity", "Tom &amp; Jerry", "Tom &amp; Jerry"),
    ("unknown element", "a <custom-thing>b</custom-thing> c", "a <custom-thing>b</custom-thing> c"),
    ("q adds marks", "she said <q>go</q> today", "she said <q>go</q> today"),
    ("not a link", "see [text] (u) now", "see [text] (u) now"),
    ("unsafe scheme is no link", "see [text](javascript:x) now", "see [text](javascript:x) now"),
    ("a caret alone", "10^6 and [^ x]", "10^6 and [^ x]"),
]


@pytest.mark.parametrize("name", [c[0] for c in KEPT])
def test_what_is_text_or_no_markup_stays(name: str) -> None:
    _, body, expected = next(c for c in KEPT if c[0] == name)
    assert shown(body + "\n")[0] == expected


def test_a_block_quote_and_a_list_item_are_read_inside_their_markers() -> None:
    assert shown("> quoted [link\n> wrapped](u)[^2] here\n") == ["quoted link wrapped here"]
    assert shown("- an [[a|item]] with a note[^1]\n- another\n") == ["an item with a note", "another"]


def test_without_markup_the_reading_is_the_raw_one() -> None:
    note = parse_note("notes/t.md", "Plain **text** over\ntwo lines.\n\n> and a quote\n")
    for b in blocks_of(note):
        assert elisions(note.text, b.pieces, b.marks()) == ()
        assert normalize_shown(note.text, b.pieces, ()) == normalize_pieces(note.text, b.pieces)


def test_each_char_maps_to_its_byte_in_the_note() -> None:
    note = parse_note("notes/t.md", "# T\n\nWe take the [night train](https://x)[^1] to [[Porto|Oporto]].\n")
    block = blocks_of(note)[1]
    s, offs = normalize_shown(note.text, block.pieces, elisions(note.text, block.pieces, block.marks()))
    assert s == "We take the night train to Oporto."
    assert all(note.text[o] == c for c, o in zip(s, offs, strict=True) if c != " ")
    at = s.index("Oporto")
    assert note.text[offs[at] : offs[at + 5] + 1] == "Oporto"


FRAGMENTS = [
    "word",
    "10",
    " ",
    "\n",
    "[^1]",
    "[^n]",
    "[a](u)",
    "[[t]]",
    "[[t|a]]",
    "<b>",
    "</b>",
    "<br>",
    "<sup>6</sup>",
    "**",
    "_",
    "`",
    "~~",
    "<!-- c -->",
    "\\",
    "[",
    "]",
    "(",
    ")",
    "|",
    "!",
    "> ",
    "- ",
]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(FRAGMENTS), min_size=1, max_size=25))
def test_the_shown_reading_only_leaves_chars_out(parts: list[str]) -> None:
    """No letter or digit is made up or moved: each one read as shown is the char at its
    offset, in order, and the raw reading holds every word the shown one does."""
    note = parse_note("notes/t.md", "".join(parts) + "\n")
    for b in blocks_of(note):
        elided = elisions(note.text, b.pieces, b.marks())
        assert all(x[1] <= y[0] for x, y in zip(elided, elided[1:], strict=False))
        s, offs = normalize_shown(note.text, b.pieces, elided)
        assert len(s) == len(offs)
        assert offs == sorted(offs)
        assert all(note.text[o] == c for c, o in zip(s, offs, strict=True) if c.isalnum())
        raw = iter(c for c in normalize_pieces(note.text, b.pieces)[0] if c.isalnum())
        assert all(c in raw for c in s if c.isalnum())  # a subsequence of the raw reading's
