"""How near the notes of a scope come to a question, by its words and by meaning: the test
NOT IN BRAIN must pass, and the leads a miss names.

A person reads NOT IN BRAIN as "I have no note on this", so it must mean absent. A miss is
NOT IN BRAIN only when no passage of the scope comes close: not by words (`coverage`: the
share of the question's rarity weight that a passage covers, with its note's title, aliases,
description, path and headings around it, in any word form) and not by meaning (the meaning
arm's cosine). `WORDS_NEAR` and `MEANING_NEAR` are the bars; when a passage reaches either
and no reader answered from it, the miss is UNVERIFIED and the reply names the closest
passages (`Lead`), so the person can read them.

Both bars were chosen on the even lines of the public eval (eval/questions.jsonl) and are
reported on the odd lines: see docs/DESIGN.md, "Stamps".

A passage is a block of prose of a note (`passages`): a paragraph, list item or table row,
a table row read beside its table's header. The offline reader quotes from the same
passages and ranks those that answer by the same coverage.

Pure functions, no I/O.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from cortex.ask.focus import proper_only
from cortex.ask.pack import PackedFile, variants
from cortex.ask.question import Question, as_question
from cortex.index.tokenize import tokenize
from cortex.notes.blocks import Block, blocks_of
from cortex.notes.note import Note

__all__ = [
    "LEADS",
    "MEANING_NEAR",
    "WORDS_NEAR",
    "Lead",
    "by_words",
    "coverage",
    "identity",
    "leads_line",
    "passages",
]

# Chosen on the even half of the public eval, reworded questions included (issue 41: a false
# NOT IN BRAIN is worse than a missed answer): the pair that leaves no answerable question NOT
# IN BRAIN, nor does either bar one step higher, with the most absent questions NOT IN BRAIN
# (DESIGN.md). A question put in other words than its note's sat at cosine 0.23 and up.
WORDS_NEAR = 0.10
MEANING_NEAR = 0.20
LEADS = 3  # closest passages a miss names


@dataclass(frozen=True)
class Lead:
    """A passage that comes close to a question: where it is and how close."""

    path: str
    heading: str  # its heading path, joined with " > "; "" before any heading
    words: float = 0.0  # the share of the question's rarity weight it covers (`coverage`)
    cosine: float | None = None  # its note's closest passage to the question, when the meaning arm scored it

    def near(self) -> bool:
        """Whether it is close enough that a miss may not be NOT IN BRAIN."""
        return self.words >= WORDS_NEAR or (self.cosine is not None and self.cosine >= MEANING_NEAR)

    def said(self) -> str:
        where = f"{self.path} ({self.heading})" if self.heading else self.path
        how = [f"{self.words:.0%} of the question's words"] if self.words else []
        how += [f"cosine {self.cosine:.2f}"] if self.cosine is not None else []
        return f"{where}, {' and '.join(how)}" if how else where


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
    question: str | Question,
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
    around = _around(as_question(question), note, block, beside)
    return sum(w for t, w in weights.items() if forms[t] & (own | around)) / total


def _around(question: Question, note: Note, block: Block, beside: str) -> set[str]:
    """The words a passage is read with: its note's names and path, its headings, `beside`."""
    names = identity(note)
    around = set(tokenize(" ".join((note.path, *names, *block.heading_path, beside))))
    return around - proper_only(question, [*names, *block.heading_path])


def by_words(
    question: str | Question,
    weights: Mapping[str, float],
    holders: Mapping[str, Iterable[str]],
    notes: Mapping[str, Note],
    bar: float = WORDS_NEAR,
    top: int | None = None,
    also: Iterable[str] = (),
) -> list[Lead]:
    """Each note's closest passage by the question's words (`coverage`), closest first
    (ties by path), for the notes of `notes` that hold a term of the question (`holders`:
    term -> paths) and could reach `bar` (a note that holds too little of the weight, in its
    indexed words and its description, is not read).

    With `top`, notes are read from the most they could cover down, and reading stops once
    `top` leads cover more than any note left could, or once `top` leads reach `bar` (then
    the miss is near, and those are the leads named, not always the very closest); the
    notes of `also` are always read. On a 1,000-note vault, where common words put most
    notes in reach, reading them all took 280 ms a miss (docs/BENCHMARKS.md)."""
    total = sum(weights.values())
    if total <= 0:
        return []
    question = as_question(question)
    forms = {t: variants(t) for t in weights}
    held: dict[str, set[str]] = {}
    for t in weights:
        for p in holders.get(t, ()):
            if p in notes:
                held.setdefault(p, set()).add(t)
    bounds = {}
    for path in held:
        described = set(tokenize(notes[path].description or ""))
        bound = sum(w for t, w in weights.items() if t in held[path] or forms[t] & described)
        if bound >= bar * total:
            bounds[path] = bound / total
    pending = set(also) & bounds.keys()
    out: list[Lead] = []
    for path in sorted(bounds, key=lambda p: (-bounds[p], p)):
        if top is not None and not pending and len(out) >= top:
            kth = sorted(lead.words for lead in out)[-top]
            if kth > bounds[path] or kth >= bar > 0:
                break  # no note left covers more, or `top` notes already come close
        pending.discard(path)
        note = notes[path]
        best: tuple[float, Block | None] = (0.0, None)
        arounds: dict[tuple[tuple[str, ...], str], set[str]] = {}  # one a heading path: blocks share them
        for b, text, beside in passages(PackedFile("", path, note, note.body)):
            own = set(tokenize(text))
            if not any(forms[t] & own for t in weights):
                continue
            key = (b.heading_path, beside)
            if key not in arounds:
                arounds[key] = _around(question, note, b, beside)
            share = sum(w for t, w in weights.items() if forms[t] & (own | arounds[key])) / total
            if share > best[0]:
                best = (share, b)
        if best[1] is not None:
            out.append(Lead(path, " > ".join(best[1].heading_path), words=best[0]))
    return sorted(out, key=lambda lead: (-lead.words, lead.path))


def leads_line(leads: Iterable[Lead]) -> str:
    """The closest passages, for a stamp's reason: "a.md (Heading), 67% of …; b.md, cosine 0.74"."""
    return "; ".join(lead.said() for lead in leads)
