"""Where the current version of a retired quote is: the live sentence that replaced it.

Pure functions, no I/O, never raise on a note. A SUPERSEDED stamp says not to answer from
a quote; it helps more when it also says what to answer from. Two places hold the current
version, as the house rules write it:

- the same note, for a quote under a banner or a retiring heading: the section that
  replaces it is a live section whose heading has the same words once retiring words,
  version words ("old", "new", "current", …), numbers and stop words are left out
  ("## SUPERSEDED: the 2025 plan" → "## The 2026 plan"; "## Launch (old)" → "## Launch"),
  the first after the quote, else the last before it (`in_note`);
- the successor note a retired note's `superseded_by` names (`in_successor`).

In either, the sentence named is the live one (not struck, not old wording, not hidden,
not retired) that shares the most content words with the quote (`cortex.index.tokenize`
less its stop words), the first of equals; none is named when no sentence shares one, so a
reply never points at a sentence about something else. The sentence is masked
(`cortex.notes.redact`) and cut at 300 characters. (`(was: …)` needs no search: the claim
it corrects is its unit, `cortex.notes.blocks.Correction.claim`.)
"""

from __future__ import annotations

import re
from typing import NamedTuple

from cortex.index.tokenize import STOPWORDS, tokenize
from cortex.notes.blocks import RETIRING_WORDS, Block, blocks_of, claim_text
from cortex.notes.note import Note
from cortex.notes.redact import redact
from cortex.notes.structure import merged

__all__ = ["Replacement", "VERSION_WORDS", "heading_words", "in_note", "in_successor"]

# Words that tell versions of one section apart rather than say what it is about.
VERSION_WORDS = frozenset(
    "old new current previous earlier later latest updated update revised original final draft "
    "outdated obsolete replaced superseded retracted deprecated correction v".split()
)
_RETIRING = frozenset(w.casefold() for w in RETIRING_WORDS)
_TEXT_KINDS = frozenset({"paragraph", "list item", "table row"})
_MAX_SENTENCE = 300  # chars of a sentence shown in a reply
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[^a-z])")


class Replacement(NamedTuple):
    """The live sentence that replaces a retired quote (empty when none shares a word with
    it) and the heading it sits under; `line` is the line of its block."""

    sentence: str
    heading: str
    line: int


def heading_words(heading: str) -> frozenset[str]:
    """What a heading is about: its words less retiring, version and stop words and numbers."""
    words = set(tokenize(heading)) - STOPWORDS - VERSION_WORDS - _RETIRING
    return frozenset(w for w in words if any(c.isalpha() for c in w))


def _content(text: str) -> set[str]:
    return set(tokenize(text)) - STOPWORDS


def _live_sentences(note: Note, block: Block) -> list[str]:
    """The sentences of a live block (a list item or a row is one), without struck text,
    old wording and hidden text, on one line."""
    struck, hidden = block.struck_and_hidden()
    gone = merged([*struck, *hidden, *((c.marker_start, c.marker_end) for c in block.corrections)])
    plain = claim_text(note.text, block.start, block.end, gone)
    if not plain:
        return []
    return [s for s in _SENTENCE_END.split(plain) if s] if block.kind == "paragraph" else [plain]


def _live(block: Block) -> bool:
    return block.kind in _TEXT_KINDS and not block.retired


def _best(note: Note, blocks: list[Block], quote: str) -> Replacement | None:
    """The live sentence of `blocks` sharing the most content words with `quote`, or None."""
    want = _content(quote)
    best: tuple[int, Replacement] | None = None
    for block in filter(_live, blocks):
        for sentence in _live_sentences(note, block):
            score = len(want & _content(sentence))
            if score and (best is None or score > best[0]):
                shown = redact(sentence if len(sentence) <= _MAX_SENTENCE else sentence[: _MAX_SENTENCE - 1] + "…")
                best = (score, Replacement(shown, block.heading, block.line))
    return best[1] if best else None


def _sections(blocks: list[Block]) -> list[tuple[int, int]]:
    """(index of the heading, index past the section's end) of each section of `blocks`."""
    heads = [(i, b.level) for i, b in enumerate(blocks) if b.kind == "heading"]
    return [
        (i, next((j for j, lv in heads[k + 1 :] if lv <= level), len(blocks))) for k, (i, level) in enumerate(heads)
    ]


def in_note(note: Note, block: Block, quote: str) -> Replacement | None:
    """The live sentence that replaces `quote` of retired `block` in its own note, from the
    live section with the same heading words as a section holding the block (the innermost
    first), or None. A section found with no sentence sharing a word with the quote is
    named by its heading alone."""
    blocks = blocks_of(note)
    here = next((i for i, b in enumerate(blocks) if b.start == block.start), None)
    if here is None:
        return None  # before any heading the whole note is retired: no section replaces it
    sections = _sections(blocks)
    holding = [s for s in sections if s[0] <= here < s[1]]
    for own in reversed(holding):  # innermost first
        words = heading_words(blocks[own[0]].heading)
        if not words:
            continue
        found = [
            s
            for s in sections
            if not s[0] <= here < s[1] and not blocks[s[0]].retired and heading_words(blocks[s[0]].heading) == words
        ]
        found = [s for s in found if any(map(_live, blocks[s[0] + 1 : s[1]]))]  # a section retired inside is none
        after = [s for s in found if s[0] > own[0]]
        for start, end in after[:1] or found[-1:]:
            head = blocks[start]
            return _best(note, blocks[start + 1 : end], quote) or Replacement("", head.heading, head.line)
    return None


def in_successor(successor: Note, quote: str) -> Replacement | None:
    """The live sentence of the successor note that shares the most words with `quote`."""
    return _best(successor, blocks_of(successor), quote)
