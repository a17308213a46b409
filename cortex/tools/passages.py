"""Which passage of a note a search hit shows: the block holding the query's rarest words
outside links, cut to start at its best line, masked, and capped.

A hit's passage is what a client reads first, so it should be where the note says the
thing searched for, not a list of links that merely name it.
"""

from __future__ import annotations

import re

from cortex.index.tokenize import tokenize
from cortex.notes.blocks import Block, blocks_of
from cortex.notes.note import Note
from cortex.notes.redact import redact

__all__ = ["LINKISH", "MASK_WINDOW", "PASSAGE_CHARS", "best_passage", "passage_score", "shown_passage"]

PASSAGE_CHARS = 400
MASK_WINDOW = 4_000  # characters past a passage's cut that are masked with it


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


def best_passage(note: Note, weights: dict[str, float], closest: int | None = None) -> tuple[str, str]:
    """The passage that matches the query best, with its heading, capped for a search hit.

    Blocks are scored by the rarity (idf) of the query terms they hold outside links,
    then inside links, then earliest; a long block (a list of a thousand lines) is cut
    to start at its best line, so the passage shows the match and not the block's top.
    A note that holds none of the query's words, found by meaning, shows block `closest`
    (the first block of its closest passage).
    """
    best = None
    best_score: tuple[float, float] = (-1.0, -1.0)
    # Every term outside links is the most a block can score, and the earliest block
    # wins ties: the first block to score it is the answer (a common word: the first).
    most = (sum(weights.values()), 0.0) if weights else (0.0, 0.0)
    for block in blocks_of(note):
        text = block.text.strip()
        if not text or block.kind == "heading":
            continue
        score = passage_score(text, weights) if weights else (0.0, 0.0)
        if score > best_score:
            best, best_score = block, score
            if score >= most:
                break
    if best_score <= (0.0, 0.0) and closest is not None and 0 <= closest < len(blocks := blocks_of(note)):
        best = blocks[closest]
    if best is None:
        return "", ""
    return shown_passage(best, best_score, weights)


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
