"""The working-state line format against hostile files: pure, no I/O.

Each property builds a file the way an owner's editor or an agent might leave it (odd line
breaks, other list markers, repeated lines, files ending inside an open block) and holds
that every item reads back as an item, and that a change rewrites its own line and no
other byte.
"""

from __future__ import annotations

import dataclasses
import datetime as dt

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cortex.notes.structure import line_spans
from cortex.notes.working import add, change, parse_items

DAY = dt.date(2026, 12, 1)


def line_of(text: str, n: int) -> str:
    start, end = line_spans(text)[n]
    return text[start:end]


def dropped(item):
    return dataclasses.replace(item, state="dropped", closed=DAY, reason="done with")


def touched(item):
    return dataclasses.replace(item, touched=DAY)


def filed(item):
    return dataclasses.replace(item, state="filed", closed=DAY, into="notes/glaze.md")


def changed_only_its_line(before: str, after: str, n: int) -> bool:
    """`after` is `before` with line `n` (as CommonMark cuts lines) replaced, every other byte kept."""
    start, end = line_spans(before)[n]
    new_start, new_end = line_spans(after)[n]
    return new_start == start and after[:start] == before[:start] and after[new_end:] == before[end:]


# -- one split of the text into lines ----------------------------------------------------------

# Characters Python's str.splitlines cuts at and CommonMark does not.
NOT_BREAKS = ["\u2028", "\u2029", "\x85", "\x0c", "\x0b", "\x1c", "\x1d", "\x1e"]


def test_a_paragraph_with_unicode_line_breaks_shifts_no_item_and_no_code_line_is_an_item():
    text = (
        "# Working: kiln\n\nA note\u2028with a line separator, a NEL\x85and a form feed\x0cin it.\n\n"
        "- [ ] focus: first ^wone1\n\n```\n- [ ] focus: an example in code ^wcode\n```\n\n"
        "- [ ] focus: second ^wtwo1\n"
    )
    items = parse_items(text, "kiln")
    assert [i.id for i in items] == ["wone1", "wtwo1"]
    assert all(line_of(text, i.line).endswith(f"^{i.id}") for i in items)
    new, _ = change(text, "wtwo1", "kiln", dropped)
    assert "- [ ] focus: an example in code ^wcode\n" in new  # the code line is untouched
    assert new.endswith("- [-] focus: second · dropped 2026-12-01: done with ^wtwo1\n")
    assert changed_only_its_line(text, new, items[1].line)


def test_a_lone_carriage_return_is_a_line_for_commonmark_and_git_counts_newlines_only():
    text = "# W\rintro\r\n- [ ] focus: a ^waaaa\n- [ ] focus: b ^wbbbb\r"
    items = parse_items(text, "kiln")
    assert [(i.id, i.line, i.git_line) for i in items] == [("waaaa", 2, 1), ("wbbbb", 3, 2)]
    new, _ = change(text, "wbbbb", "kiln", dropped)
    assert new == "# W\rintro\r\n- [ ] focus: a ^waaaa\n- [-] focus: b · dropped 2026-12-01: done with ^wbbbb\r"


PARAGRAPH = st.lists(
    st.text(alphabet=st.sampled_from(list("abc ") + NOT_BREAKS), min_size=1, max_size=12), min_size=1, max_size=3
).map(lambda words: "x" + "".join(words) + "y")
BLOCKS = st.lists(st.one_of(st.just("item"), st.just("code"), PARAGRAPH), max_size=12)
EOLS = st.sampled_from(["\n", "\r\n", "\r"])


@settings(max_examples=200, deadline=None)
@given(BLOCKS, EOLS)
def test_items_among_paragraphs_with_any_line_break_read_back_and_change_alone(blocks, eol):
    """However a paragraph's text breaks, every item is read back at its own line, no line in
    code is one, and dropping an item rewrites its line and no other byte."""
    parts, want = ["# Working: kiln"], []
    for n, block in enumerate(blocks):
        if block == "item":
            parts.append(f"- [ ] focus: item {n} ^w{n:04d}")
            want.append(f"w{n:04d}")
        elif block == "code":
            parts.append(f"```{eol}- [ ] focus: code {n} ^c{n:04d}{eol}```")
        else:
            parts.append(block)
    text = (eol + eol).join(parts) + eol
    items = parse_items(text, "kiln")
    assert [i.id for i in items] == want
    for item in items:
        assert line_of(text, item.line).endswith(f"^{item.id}")
        new, _ = change(text, item.id, "kiln", dropped)
        assert changed_only_its_line(text, new, item.line)
        assert [i.id for i in parse_items(new, "kiln")] == want


# -- every task line Obsidian shows is an item ---------------------------------------------------

TASKS = {
    "1. [ ] in an ordered list": "1. ",
    "2) [x] ticked, ordered with a parenthesis": "2) ",
    "-\t[ ] after a tab": "-\t",
    "> - [ ] in a block quote": "> - ",
    ">> * [ ] in a nested quote": ">> * ",
    "- - [ ] a list in a list": "- - ",
    "   + [ ] indented": "   + ",
}
NOT_TASKS = ["-     [ ] five spaces make it code", "- > [ ] a quote in an item", "[ ] no marker", "-[ ] no space"]


def test_a_task_in_an_ordered_list_after_a_tab_or_in_a_block_quote_is_an_item():
    text = "# Working: kiln\n\n" + "\n\n".join(list(TASKS) + NOT_TASKS) + "\n"
    items = parse_items(text, "kiln")
    assert [line_of(text, i.line) for i in items] == list(TASKS)
    assert items[1].state == "done" and all(i.state == "open" for i in items if i is not items[1])


@pytest.mark.parametrize("eol", ["\n", "\r\n"])
@pytest.mark.parametrize("task", [t for t in TASKS if "[ ]" in t])
def test_a_change_keeps_the_lead_the_owner_wrote_and_rewrites_only_the_box_and_fields(task, eol):
    text = f"# Working: kiln{eol}{eol}intro{eol}{eol}{task}{eol}{eol}after{eol}"
    [item] = [i for i in parse_items(text, "kiln") if line_of(text, i.line) == task]
    new, _ = change(text, item.id, "kiln", dropped)
    assert (
        line_of(new, item.line)
        == f"{TASKS[task]}[-] {item.kind}: {item.text} · dropped 2026-12-01: done with ^{item.id}"
    )
    assert changed_only_its_line(text, new, item.line)
    assert [(i.id, i.state) for i in parse_items(new, "kiln") if i.line == item.line] == [(item.id, "dropped")]


# -- a reason is the owner's text, never the item's fields ------------------------------------

FRAGMENTS = ["no room", " · ", "·", "opened 1999-01-01", "touched 1999-01-02", "dropped 1999-01-03: x", "→", ":"]
FRAGMENTS += ["filed 1999-01-04 → notes/x.md", " ^w1234", "^"]


def test_a_drop_reason_holding_an_opened_field_keeps_the_item_s_date():
    text = "- [ ] focus: fire it · opened 2026-11-20 · touched 2026-11-25 ^wfire\n"
    new, _ = change(text, "wfire", "kiln", lambda i: dataclasses.replace(dropped(i), reason="moot · opened 1999-01-01"))
    [item] = parse_items(new, "kiln")
    assert (item.opened, item.touched, item.reason) == (
        dt.date(2026, 11, 20),
        dt.date(2026, 11, 25),
        "moot · opened 1999-01-01",
    )


@given(st.lists(st.sampled_from(FRAGMENTS), min_size=1, max_size=8).map("".join))
def test_any_reason_reads_back_whole_and_leaves_the_dates_alone(reason):
    why = " ".join(reason.split())
    text = "- [ ] focus: fire it · opened 2026-11-20 · touched 2026-11-25 ^wfire\n"
    new, _ = change(text, "wfire", "kiln", lambda i: dataclasses.replace(dropped(i), reason=why))
    [item] = parse_items(new, "kiln")
    assert (item.id, item.state, item.text) == ("wfire", "dropped", "fire it")
    assert (item.opened, item.touched, item.closed) == (dt.date(2026, 11, 20), dt.date(2026, 11, 25), DAY)
    assert (item.reason or "") == why


# -- every item can be closed, however often its line repeats --------------------------------------


def test_two_identical_hand_written_lines_and_a_repeated_id_are_four_items_each_closable():
    text = "- [ ] same\n- [ ] same\n- [ ] one ^wdup\n- [ ] another ^wdup\n"
    ids = [i.id for i in parse_items(text, "kiln")]
    assert len(set(ids)) == 4 and ids[2:] == ["wdup", "wdup~2"]
    for item_id in reversed(ids):
        text, _ = change(text, item_id, "kiln", dropped)
        assert [i.id for i in parse_items(text, "kiln")] == ids
    assert all(i.state == "dropped" for i in parse_items(text, "kiln"))
    assert text.splitlines()[2:] == [
        "- [-] focus: one · dropped 2026-12-01: done with ^wdup",
        "- [-] focus: another · dropped 2026-12-01: done with ^wdup",  # the owner's ^id, never renamed
    ]


LINES = st.lists(
    st.tuples(st.sampled_from(["same", "same?", "other"]), st.sampled_from([None, "wdup", "wone"])), max_size=10
)


@settings(max_examples=200, deadline=None)
@given(LINES, st.randoms(use_true_random=False))
def test_every_item_can_be_closed_in_any_order_and_no_other_item_s_id_moves(lines, rnd):
    text = "# Working: kiln\n\n" + "".join(f"- [ ] {t}{f' ^{i}' if i else ''}\n" for t, i in lines)
    ids = [i.id for i in parse_items(text, "kiln")]
    assert len(ids) == len(lines) == len(set(ids))
    for item_id in rnd.sample(ids, len(ids)):
        text, _ = change(text, item_id, "kiln", dropped)
        assert [i.id for i in parse_items(text, "kiln")] == ids
    after = parse_items(text, "kiln")
    assert all(i.state == "dropped" for i in after)
    assert [line_of(text, i.line).rsplit("^", 1)[1] for i in after] == [i.partition("~")[0] for i in ids]


# -- an added item is an item, however the file ends --------------------------------------------

ENDINGS = [
    "```\n- [ ] focus: code ^wcod1",
    "~~~ python\ncode",
    "````\n```\nan inner fence",
    "  ```\nindented fence",
    "<details>\n<summary>More</summary>",
    "<!--\nhidden",
    "<!-- closed --> <!--",
    "<pre>\nraw",
    "<script>\nx",
    "<?php\nx",
    "<!DOCTYPE x",
    "<![CDATA[\nx",
    "<div>",
    "<custom-element>",
    "    indented code",
    "para\nlazy continuation",
    "- [ ] focus: item ^wold1\n  continued\nlazy",
    "| a | b |\n|---|---|\n| 1 | 2 |",
    "> quote\n> more",
    "> ```\n> code in a quote",
    "- item\n  ```\n  code in an item",
    "1. [ ] focus: ordered ^wold2",
    "[ref]:",
    "Setext\n===",
    "* * *",
    "%%\nan Obsidian comment",
    "trailing backslash\\",
]


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.sampled_from(ENDINGS), min_size=1, max_size=3),
    st.sampled_from(["\n", "\n\n"]),
    st.sampled_from(["\n", "\r\n"]),
    st.booleans(),
    st.integers(1, 3),
)
def test_after_any_acknowledged_add_the_item_is_listed_and_each_change_reaches_it(
    endings, between, eol, final_eol, adds
):
    text = ("# Working: kiln\n\n" + between.join(endings) + ("\n" if final_eol else "")).replace("\n", eol)
    for n in range(adds):
        before = parse_items(text, "kiln")
        new = add(text, "kiln", "focus", f"added {n}", DAY, f"wnew{n}")  # none of these endings is refused
        assert new.startswith(text)  # every byte the owner wrote, kept
        items = parse_items(new, "kiln")
        assert [i.id for i in items] == [i.id for i in before] + [f"wnew{n}"]
        for edit in (dropped, touched, filed):
            changed, item = change(new, f"wnew{n}", "kiln", edit)
            assert parse_items(changed, "kiln") == items[:-1] + [item]
        text = new
