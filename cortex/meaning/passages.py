"""What the meaning arm embeds of a note: passages that follow its sections.

A passage is the note's title, the heading path of a section and as many of that
section's consecutive blocks as fit in the model's word-piece budget; a block longer
than the budget alone is cut between words. Link targets are left out of the text
(`[words](https://…)` embeds as "words", `[[path|label]]` as "label"), so URLs do not
spend the budget or pull a passage towards other notes with the same host.

Pure: the model's tokenizer comes in as two functions (`lengths`, `cut`), so the
grouping is tested without it.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from cortex.notes.blocks import blocks_of
from cortex.notes.note import Note

__all__ = ["Passage", "note_passages", "plain", "sections"]

_MD_LINK = re.compile(r"!?\[([^\]]*)\]\([^)\s]*(?:\s+\"[^\"]*\")?\)")
_WIKI = re.compile(r"!?\[\[([^\]|#]*)(?:#[^\]|]*)?(?:\|([^\]]*))?\]\]")
_BARE_URL = re.compile(r"<?\b(?:https?|ftp)://[^\s>)]+>?")
_SKIP = ("heading", "html", "banner")


@dataclass(frozen=True)
class Passage:
    """One embedded passage: its text, and the blocks (indexes into `blocks_of`) it holds."""

    text: str
    heading: str
    first_block: int
    last_block: int


def plain(text: str) -> str:
    """`text` with link targets left out: the words people read, not the addresses."""
    text = _MD_LINK.sub(lambda m: m.group(1), text)
    text = _WIKI.sub(lambda m: m.group(2) or m.group(1).rsplit("/", 1)[-1], text)
    return _BARE_URL.sub("", text)


def sections(note: Note) -> list[tuple[str, list[tuple[int, str]]]]:
    """(heading path, [(block index, plain text)]) per run of blocks under one heading."""
    out: list[tuple[str, list[tuple[int, str]]]] = []
    last: tuple[str, ...] | None = None
    for i, block in enumerate(blocks_of(note)):
        if block.kind in _SKIP:
            continue
        text = plain(block.text).strip()
        if not text:
            continue
        if block.heading_path != last or not out:
            out.append((" > ".join(block.heading_path), []))
            last = block.heading_path
        out[-1][1].append((i, text))
    return out


def note_passages(
    note: Note,
    budget: int,
    lengths: Callable[[list[str]], list[int]],
    cut: Callable[[str, int], list[str]],
) -> list[Passage]:
    """The note's passages, each at most `budget` word-pieces counted by `lengths`.

    A note with no prose (a title alone) is one passage of its title, so it can still
    be found by what its name means.
    """
    title = note.title.strip()
    found = sections(note)
    if not found:
        return [Passage(title or note.path, "", -1, -1)]
    out: list[Passage] = []
    for heading, items in found:
        prefix = "\n".join(x for x in (title, heading if heading != title else "") if x)
        room = max(16, budget - (lengths([prefix])[0] if prefix else 0) - 1)
        sizes = lengths([t for _, t in items])
        group: list[tuple[int, str]] = []
        used = 0

        def flush() -> None:
            if group:
                body = "\n".join(t for _, t in group)
                out.append(Passage(f"{prefix}\n{body}" if prefix else body, heading, group[0][0], group[-1][0]))

        for (index, text), size in zip(items, sizes):
            if size > room:
                flush()
                group, used = [], 0
                for piece in cut(text, room):
                    out.append(Passage(f"{prefix}\n{piece}" if prefix else piece, heading, index, index))
                continue
            if group and used + size + 1 > room:
                flush()
                group, used = [], 0
            group.append((index, text))
            used += size + 1
        flush()
    return out
