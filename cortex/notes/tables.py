"""A table row's cells under their column headings: which column a quoted value sits in.

Pure functions, no I/O. Each table row is a block of its own (`cortex.notes.blocks`), so a
quote of a row does not show the row's headings; `row_cells` finds them. The heading row
is the first row of its table: the row right above the delimiter row (``|---|:--:|``), with
the body rows on the lines that follow, one a line (as CommonMark's table extension reads
a table, container markers such as ``>`` taken off). A row is split into cells at each
``|`` not escaped as ``\\|``, as the extension splits it (a ``|`` inside a code span too).
"""

from __future__ import annotations

import re
import unicodedata

from cortex.notes.blocks import Block, blocks_cached, normalize
from cortex.notes.note import Note

__all__ = ["Row", "cells", "row_cells"]

# (heading, cell) for each column of a row, both normalised as quotes are (then NFC).
Row = tuple[tuple[str, str], ...]

_DELIMITER = re.compile(r"[ \t>]*\|?[ \t]*:?-+:?[ \t]*(?:\|[ \t]*:?-+:?[ \t]*)*\|?[ \t]*")
_CONTAINER = re.compile(r"^[ \t>]*")
_PIPE = re.compile(r"(?<!\\)\|")


def cells(row: str) -> list[str]:
    """The cells of one table row's line, normalised; the outer pipes are no cells."""
    text = _CONTAINER.sub("", row).strip()
    if text.startswith("|"):
        text = text[1:]
    if text.endswith("|") and not text.endswith("\\|"):
        text = text[:-1]
    return [unicodedata.normalize("NFC", normalize(c.replace("\\|", "|"))[0]) for c in _PIPE.split(text)]


def _line_after(text: str, end: int) -> str:
    start = text.find("\n", end)
    if start < 0:
        return ""
    stop = text.find("\n", start + 1)
    return text[start + 1 : stop if stop >= 0 else len(text)].rstrip("\r")


def _row_text(note: Note, block: Block) -> str:
    return "".join(note.text[a:b] for a, b in block.pieces) if block.pieces else block.text


def row_cells(note: Note, block_start: int | None) -> Row:
    """(heading, cell) for each column of the table row that starts at `block_start`.

    Empty when no table row starts there, when the row is its table's heading row, or
    when its table has no heading row. As the table extension reads a row, one with
    fewer cells than headings has empty cells, and cells past the last heading are not
    shown, so not read.
    """
    if block_start is None:
        return ()
    blocks = blocks_cached(note.text, note.body_offset)
    at = next((i for i, b in enumerate(blocks) if b.start == block_start), None)
    if at is None or blocks[at].kind != "table row":
        return ()
    i = at
    while i > 0 and blocks[i - 1].kind == "table row":
        gap = blocks[i].line - blocks[i - 1].line
        if gap == 2 and _DELIMITER.fullmatch(_line_after(note.text, blocks[i - 1].end)):
            headings = cells(_row_text(note, blocks[i - 1]))
            row = cells(_row_text(note, blocks[at]))
            row += [""] * (len(headings) - len(row))
            return tuple(zip(headings, row))
        if gap != 1:
            break
        i -= 1
    return ()
