"""What the meaning arm embeds of a note: passages that follow its sections.

A passage is the note's title, the heading path of a section and as many of that
section's consecutive blocks as fit in the model's word-piece budget; a block longer
than the budget alone is cut between words. Link targets are left out of the text
(`[words](https://…)` embeds as "words", `[[path|label]]` as "label"), so URLs do not
spend the budget or pull a passage towards other notes with the same host.

A note gives at most `MAX_PASSAGES` passages, its first ones: the passages are made
lazily, so the rest of a long note is never counted or cut, let alone embedded. That
rest is still found by its words (BM25 reads the whole note), and a reply that used
meaning says how many notes were embedded only in part.

Pure: the model's tokenizer comes in as two functions (`lengths`, `cut`), so the
grouping is tested without it.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from cortex.notes.blocks import blocks_of
from cortex.notes.note import Note
from cortex.notes.shown import plain

__all__ = ["MAX_PASSAGES", "Passage", "first_passages", "note_passages", "plain", "sections"]

# A note's passages embedded at most. Measured on one core: 256 full passages (some 250 KB of
# prose) 6.3 s; a 626 KB note of 24,000 tiny sections took 38.6 s whole, 2.1 s capped at 256.
MAX_PASSAGES = 256
_SIZED = 64  # blocks sized by the tokenizer at once: a section of 100,000 list items is not one call

_SKIP = ("heading", "html", "banner")


@dataclass(frozen=True)
class Passage:
    """One embedded passage: its text, and the blocks (indexes into `blocks_of`) it holds."""

    text: str
    heading: str
    first_block: int
    last_block: int


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
) -> Iterator[Passage]:
    """The note's passages in order, each at most `budget` word-pieces counted by `lengths`,
    made one at a time (`first_passages` stops early).

    A note with no prose (a title alone) is one passage of its title, so it can still
    be found by what its name means.
    """
    title = note.title.strip()
    found = sections(note)
    if not found:
        yield Passage(title or note.path, "", -1, -1)
        return
    for heading, items in found:
        prefix = "\n".join(x for x in (title, heading if heading != title else "") if x)
        room = max(16, budget - (lengths([prefix])[0] if prefix else 0) - 1)

        # Called only in this iteration; the defaults bind this section's prefix and heading.
        def passage(texts: list[str], first: int, last: int, prefix: str = prefix, heading: str = heading) -> Passage:
            body = "\n".join(texts)
            return Passage(f"{prefix}\n{body}" if prefix else body, heading, first, last)

        group: list[tuple[int, str]] = []
        used = 0
        for (index, text), size in _sized(items, lengths):
            if size > room:
                if group:
                    yield passage([t for _, t in group], group[0][0], group[-1][0])
                group, used = [], 0
                for piece in cut(text, room):
                    yield passage([piece], index, index)
                continue
            if group and used + size + 1 > room:
                yield passage([t for _, t in group], group[0][0], group[-1][0])
                group, used = [], 0
            group.append((index, text))
            used += size + 1
        if group:
            yield passage([t for _, t in group], group[0][0], group[-1][0])


def first_passages(
    note: Note,
    budget: int,
    lengths: Callable[[list[str]], list[int]],
    cut: Callable[[str, int], list[str]],
    limit: int = MAX_PASSAGES,
) -> tuple[list[Passage], bool]:
    """(the note's first `limit` passages, whether that is all of them)."""
    found = list(itertools.islice(note_passages(note, budget, lengths, cut), limit + 1))
    return found[:limit], len(found) <= limit


def _sized(
    items: list[tuple[int, str]], lengths: Callable[[list[str]], list[int]]
) -> Iterator[tuple[tuple[int, str], int]]:
    """Each (block index, text) with its word-piece count, counted `_SIZED` at a time."""
    for at in range(0, len(items), _SIZED):
        chunk = items[at : at + _SIZED]
        yield from zip(chunk, lengths([t for _, t in chunk]), strict=False)
