"""The passages of a note and how much of a question each covers by its words.

A passage is a block of prose of a note (`passages`): a paragraph, list item or table row,
a table row read beside its table's header. `coverage` is the share of the question's
rarity weight a passage covers with its note's title, aliases, description, path and
headings around it, in any word form: the offline reader ranks the passages that answer by
it.

Pure functions, no I/O.
"""

from __future__ import annotations

from collections.abc import Mapping

from cortex.ask.focus import proper_only
from cortex.ask.pack import PackedFile
from cortex.index.tokenize import tokenize
from cortex.notes.blocks import Block, blocks_of
from cortex.notes.note import Note

__all__ = ["coverage", "identity", "passages"]


def identity(note: Note) -> list[str]:
    """What a note says it is about: its title, aliases and frontmatter description.

    A passage is read with these around it ("Pim the cat" covers "cat" for every line of
    that note; "snapjar — Nils's small open-source Python library for content-addressed
    snapshot files" covers "library" and "snapshot").
    """
    return [note.title, *note.aliases, *([note.description] if note.description else [])]


def passages(f: PackedFile) -> list[tuple[Block, str, str]]:
    """The passages of a packed file: its blocks of prose, one per paragraph, list item
    and table row (CommonMark's blocks: a list's items are blocks of their own), each
    with the text it is read beside: a table row is read with its table's header row.

    A list holds separate facts: taking it whole would let one item answer half a
    question and another item the other half.
    """
    out = []
    header, prev = "", None
    for block in blocks_of(f.note):
        if block.kind == "table row" and not (
            prev is not None and prev.kind == "table row" and _next_rows(prev, block)
        ):
            header = block.text  # the first row of a table
        prev = block
        if block.kind in ("heading", "code", "html") or (f.parts and block.text.strip() not in f.text):
            continue
        out.append((block, block.text, header if block.kind == "table row" and block.text != header else ""))
    return out


def _next_rows(a: Block, b: Block) -> bool:
    """Whether row `b` follows row `a` in one table (the delimiter row may sit between)."""
    return b.line - a.line <= 2


def coverage(
    question: str,
    weights: Mapping[str, float],
    forms: Mapping[str, frozenset[str]],
    note: Note,
    block: Block,
    text: str,
    beside: str = "",
) -> float:
    """The share of the question's rarity weight (`weights`, each term's word forms in
    `forms`) that a passage covers: its `text`, and around it its note's title, aliases,
    description, path and headings and the text it is read `beside`, less the question's
    lower-case words those write only as a name (`proper_only`). 0 when the text itself
    holds none of the terms: a passage is never close by its note's name alone."""
    total = sum(weights.values())
    own = set(tokenize(text))
    if total <= 0 or not any(forms[t] & own for t in weights):
        return 0.0
    return sum(w for t, w in weights.items() if forms[t] & (own | _around(question, note, block, beside))) / total


def _around(question: str, note: Note, block: Block, beside: str) -> set[str]:
    """The words a passage is read with: its note's names and path, its headings, `beside`."""
    names = identity(note)
    around = set(tokenize(" ".join((note.path, *names, *block.heading_path, beside))))
    return around - proper_only(question, [*names, *block.heading_path])
