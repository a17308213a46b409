"""A table row's cells under their headings (cortex.notes.tables): what a quote of one row
brings along, so a value is read with its column."""

from __future__ import annotations

import pytest

from cortex.notes.blocks import blocks_of
from cortex.notes.note import parse_note
from cortex.notes.tables import cells, row_cells

PRICES = """---
title: Prices
---
# Kiosk

Before the table.

| item | old price | new price |
|:--|---|--:|
| filter coffee | €3 | €4 |
| green tea \\| hot | | €2.50 |

| a | b |
|---|---|
| 1 | 2 |
"""


def rows(text: str) -> list[tuple]:
    note = parse_note("notes/p.md", text)
    return [row_cells(note, b.start) for b in blocks_of(note)]


def test_a_body_row_pairs_each_cell_with_its_heading() -> None:
    assert rows(PRICES) == [
        (),  # the heading "Kiosk"
        (),  # the paragraph
        (),  # the heading row itself
        (("item", "filter coffee"), ("old price", "€3"), ("new price", "€4")),
        (("item", "green tea | hot"), ("old price", ""), ("new price", "€2.50")),
        (),  # the second table's heading row
        (("a", "1"), ("b", "2")),
    ]


def test_a_table_in_a_block_quote_or_without_outer_pipes_has_headings_too() -> None:
    quoted = "> | item | was |\n> |---|---|\n> | kiln fee | £8 |\n"
    assert rows(quoted)[-1] == (("item", "kiln fee"), ("was", "£8"))
    bare = "item | was\n--- | ---\nkiln fee | £8\n"
    assert rows(bare)[-1] == (("item", "kiln fee"), ("was", "£8"))


def test_a_short_row_is_padded_and_cells_past_the_headings_are_not_read() -> None:
    text = "| a | b |\n|---|---|\n| 1 |\n| 1 | 2 | 3 |\n"
    assert rows(text)[1:] == [(("a", "1"), ("b", "")), (("a", "1"), ("b", "2"))]


def test_no_row_no_cells() -> None:
    note = parse_note("notes/p.md", PRICES)
    assert row_cells(note, None) == ()
    assert row_cells(note, 10**6) == ()
    assert rows("Just a paragraph | with a pipe.\n") == [()]


@pytest.mark.parametrize(
    ("row", "expected"),
    [
        ("| a | b |", ["a", "b"]),
        ("a | b", ["a", "b"]),
        ("| a \\| b | c |", ["a | b", "c"]),
        ("|  **bold**  | `code` |", ["bold", "code"]),
        ("> | quoted | row |", ["quoted", "row"]),
        ("| | |", ["", ""]),
    ],
)
def test_cells_are_split_at_unescaped_pipes_and_normalised_as_quotes_are(row, expected) -> None:
    assert cells(row) == expected
