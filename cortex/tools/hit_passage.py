"""Which passage of a note a search hit shows: the block holding the query's rarest words
outside links, cut to start at its best line, masked, and capped.

A hit's passage is what a client reads first, so it should be where the note says the
thing searched for, not a list of links that merely name it.
"""

from __future__ import annotations

import re
from typing import Any

from cortex.index.tokenize import tokenize
from cortex.notes.blocks import Block, blocks_of
from cortex.notes.note import Note
from cortex.notes.redact import redact
from cortex.notes.structure import merged

__all__ = [
    "LINKISH",
    "MARK_CHARS",
    "MASK_WINDOW",
    "MAX_MARKS",
    "PASSAGE_CHARS",
    "best_passage",
    "passage_score",
    "passage_state",
    "retired_parts",
    "shown_passage",
]

PASSAGE_CHARS = 400
MASK_WINDOW = 4_000  # characters past a passage's cut that are masked with it
MAX_MARKS = 5  # parts of one passage named as retired or hidden; the rest are counted
MARK_CHARS = 120  # of the text of each


# Links to other notes ([[target|alias]], [text](other.md)): their words name another
# note, so a passage that only lists them (a "## Links" section) is not where this
# note says the thing. An external link's text stays ([tokio](https://…) in a list
# of libraries is the match); only its URL goes.
LINKISH = re.compile(
    r"!?\[\[[^\]\n]*\]\]|!?\[[^\]\n]*\]\((?![a-z]+:)[^)\n]*\)"
    r"|(?<=\])\([a-z]+:[^)\n]*\)|https?://\S+"
)


def passage_score(text: str, weights: dict[str, float]) -> tuple[float, float]:
    """(idf of the query terms in the text outside links, idf of those inside links)."""
    folded = text.casefold()
    if folded.isascii() and not any(t in folded for t in weights):
        return (0.0, 0.0)  # ASCII terms are substrings of the folded text: none here, no need to tokenize
    # Line by line (no term or link spans a line break), stopping once every query term is
    # found outside links: then no term can count as linked, so the score is final. An 80 KB
    # block of common words was tokenized whole for every hit.
    want, plain, seen = set(weights), set(), set()
    for line in text.split("\n"):
        if LINKISH.search(line):
            plain.update(tokenize(LINKISH.sub(" ", line)))
            seen.update(tokenize(line))
        else:
            plain.update(tokenize(line))
        if want <= plain:
            break
    linked = seen - plain
    return (sum(w for t, w in weights.items() if t in plain), sum(w for t, w in weights.items() if t in linked))


def best_passage(
    note: Note, weights: dict[str, float], closest: int | None = None, text: str | None = None
) -> tuple[str, str, Block | None]:
    """The passage that matches the query best, with its heading, capped for a search hit,
    and the block it is from (None for a note with no passage).

    Blocks are scored by the rarity (idf) of the query terms they hold outside links,
    then inside links, then earliest; a long block (a list of a thousand lines) is cut
    to start at its best line, so the passage shows the match and not the block's top.
    A note that holds none of the query's words, found by meaning, shows block `closest`
    (the first block of its closest passage). `text`: the note's, when the caller holds it.
    """
    best = None
    best_score: tuple[float, float] = (-1.0, -1.0)
    # Every term outside links is the most a block can score, and the earliest block
    # wins ties: the first block to score it is the answer (a common word: the first).
    most = (sum(weights.values()), 0.0) if weights else (0.0, 0.0)
    blocks = blocks_of(note, text)
    for block in blocks:
        shown = block.text.strip()
        if not shown or block.kind == "heading":
            continue
        score = passage_score(shown, weights) if weights else (0.0, 0.0)
        if score > best_score:
            best, best_score = block, score
            if score >= most:
                break
    if best_score <= (0.0, 0.0) and closest is not None and 0 <= closest < len(blocks):
        best = blocks[closest]
    if best is None:
        return "", "", None
    return (*shown_passage(best, best_score, weights), best)


def shown_passage(best: Block, best_score: tuple[float, float], weights: dict[str, float]) -> tuple[str, str]:
    """(heading, text) of block `best` as a hit shows it: from its best line when it is long,
    masked, and cut at PASSAGE_CHARS."""
    raw = best.text
    if len(raw) > PASSAGE_CHARS and best_score > (0.0, 0.0):
        # The earliest best line; a line holding every term is the best, so the scan stops
        # there (a hub note's list of 8,000 lines was tokenized whole for every hit).
        lines = raw.splitlines()
        most = (sum(weights.values()), 0.0)
        top, top_score = 0, (-1.0, -1.0)
        for i, line in enumerate(lines):
            score = passage_score(line, weights)
            if score > top_score:
                top, top_score = i, score
                if score >= most:
                    break
        if top:
            raw = "… " + "\n".join(lines[top:])
    # Masked before the cut, so the cut cannot split a secret: a window that holds any
    # credential shape (a PEM key is under 4,000 characters), not the whole 80 KB block.
    text = redact(" ".join(raw[: PASSAGE_CHARS + MASK_WINDOW].split()))
    if len(text) > PASSAGE_CHARS:
        text = text[:PASSAGE_CHARS].rsplit(" ", 1)[0] + f" … [passage cut at {PASSAGE_CHARS} chars; brain_read for all]"
    return best.heading, text


def _cut(text: str) -> str:
    """A part's text for a reply: masked, on one line, capped."""
    shown = redact(" ".join(text.split()))
    return shown if len(shown) <= MARK_CHARS else shown[: MARK_CHARS - 1].rstrip() + "…"


def _live_left(text: str, pieces: tuple[tuple[int, int], ...], out: list[tuple[int, int]]) -> bool:
    """Whether a letter or digit of `pieces` lies outside every span of `out` (sorted, disjoint)."""
    for a, b in pieces:
        at = a
        for x, y in out:
            if y <= at or x >= b:
                continue
            if any(c.isalnum() for c in text[at:x]):
                return True
            at = max(at, y)
        if any(c.isalnum() for c in text[at:b]):
            return True
    return False


def _parts(text: str, block: Block) -> tuple[list[dict[str, str]], list[tuple[int, int]]]:
    """What of `block` is not live text, each part with its words or why (the retired
    section, struck text, old wording with the claim as it stands now, hidden text), and the
    spans of the block that are out of its live text (`text`: its note's)."""
    parts: list[dict[str, str]] = []
    if block.retired:
        state = "under a banner" if block.retired.startswith("under a") else "under a retiring heading"
        parts.append({"state": state, "why": block.retired})
    struck, hidden = block.struck_and_hidden()
    out: list[tuple[int, int]] = []
    for a, b in struck:
        lo, hi = max(a, block.start), min(b, block.end)
        if lo < hi:
            parts.append({"state": "struck", "text": _cut(text[lo:hi])})
            out.append((lo, hi))
    for c in block.corrections:
        parts.append({"state": "old wording", "text": _cut(c.old), "current": _cut(c.claim or c.current)})
        out.append((c.marker_start, c.marker_end))
    for a, b in hidden:
        lo, hi = max(a, block.start), min(b, block.end)
        if lo < hi:
            parts.append({"state": "hidden", "text": _cut(text[lo:hi])})
            out.append((lo, hi))
    return parts, merged(out)


def _capped(parts: list[dict[str, str]], key: str, where: str) -> dict[str, Any]:
    reply: dict[str, Any] = {key: parts[:MAX_MARKS]}
    if len(parts) > MAX_MARKS:
        reply[f"{key}_left_out"] = f"{len(parts) - MAX_MARKS} more part(s) {where}; brain_read shows them"
    return reply


def passage_state(note: Note, block: Block | None, retired_note: str | None, text: str | None = None) -> dict[str, Any]:
    """What of a hit's passage (`block`) is live text: `passage_state` is "live", "retired"
    (all of it: the note is retired, the block sits under a banner or a retiring heading, or
    nothing live is left once struck, old and hidden text are out) or "partly retired", and
    `passage_marks` names each part that is not live (`_parts`). A client that reads only the
    passage then knows not to answer from its retired words; the note's own retirement is
    the hit's `retired`. `text`: the note's, when the caller holds it."""
    if block is None:
        return {"passage_state": "retired" if retired_note else "live"}
    text = note.text if text is None else text
    parts, out = _parts(text, block)
    if retired_note or block.retired:
        state = "retired"
    elif not parts:
        return {"passage_state": "live"}
    else:
        state = "partly retired" if _live_left(text, block.pieces, out) else "retired"
    return {"passage_state": state, **(_capped(parts, "passage_marks", "of the passage") if parts else {})}


def retired_parts(note: Note, within: tuple[int, int] | None = None) -> dict[str, Any]:
    """What of a note (or of its text `within` [start, end), a section) is not live text, for
    a reply that shows its text (brain_corpus, brain_read): `retired_parts`, each with the
    lines it covers (a run of blocks under one banner is one part); {} when all is live."""
    parts: list[dict[str, str]] = []
    section: dict[str, str] | None = None
    text = note.text  # read once: a saved note's text comes from Git on each read
    for block in blocks_of(note, text):
        if within is not None and not (within[0] <= block.start < within[1]):
            continue
        found, _ = _parts(text, block)
        last = block.line + block.text.count("\n")
        for part in found:
            if "why" in part and section is not None and section["why"] == part["why"]:
                section["lines"] = f"{section['lines'].split('-')[0]}-{last}"
                continue
            entry = {"lines": f"{block.line}-{last}" if last > block.line else str(block.line), **part}
            parts.append(entry)
            if "why" in part:
                section = entry
        if not block.retired:
            section = None
    return _capped(parts, "retired_parts", "of the note") if parts else {}
