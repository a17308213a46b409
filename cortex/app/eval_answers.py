"""The public eval's gold answers (eval/answers.jsonl): whether a reply's quotes hold them,
and the ideal reader that quotes them.

A gold answer is a list of groups of verbatim strings, each of which occurs in a gold note:
one group a fact, the strings of a group its spellings ("2 strips per brood box", "two strips
per brood box"), two groups for a question in two parts. A reply holds its answer when every
group has a string in one of the reply's VERIFIED or CORRECTED quotes (case and runs of
whitespace aside), under every heading `under` names when it names any (the inspection
records say "frames of brood: 3" in many sections). So the eval can count what a stamp alone
cannot: a certified answer that holds the fact asked for ("right"), and one that holds none
of it ("wrong VERIFIED": a line on the topic that lacks what was asked; half of a two-part
answer is neither).

`IdealReader` stands for a perfect model over the same packs: it quotes, verbatim, the line of
a packed gold note that holds each group's fact, or says not_in_brain. How often it finds one
measures the pack; how often its quote is VERIFIED measures the verifier on right answers.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from cortex.ask.pack import Pack
from cortex.ask.question import Question
from cortex.ask.readers import ReaderReply
from cortex.notes.blocks import blocks_of
from cortex.notes.note import Note

__all__ = ["CERTIFIED", "IdealReader", "certified_quotes", "fact_lines", "held_groups", "holds", "load_answers", "norm"]

CERTIFIED = ("VERIFIED", "CORRECTED")


def load_answers(path: Path) -> dict[str, dict[str, Any]]:
    """Question id -> its gold answer entry ({id, answer, under?}); empty when the file is missing."""
    if not path.exists():
        return {}
    entries = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    return {e["id"]: e for e in entries}


def norm(text: str) -> str:
    """`text` for containment: case folded, every run of whitespace one space."""
    return re.sub(r"\s+", " ", text).strip().casefold()


def _under(entry: Mapping[str, Any], path: Sequence[str]) -> bool:
    """Whether a heading path holds every heading the entry's `under` names."""
    return all(any(norm(h) == norm(p) for p in path) for h in entry.get("under", ()))


def held_groups(entry: Mapping[str, Any], found: Sequence[tuple[str, Sequence[str]]]) -> int:
    """How many groups of the entry's answer the quotes `found` ((quote, a heading path it
    sits under) each) hold."""
    texts = [norm(q) for q, path in found if _under(entry, path)]
    return sum(any(norm(s) in t for s in group for t in texts) for group in entry["answer"])


def holds(entry: Mapping[str, Any], found: Sequence[tuple[str, Sequence[str]]]) -> bool:
    """Whether the quotes `found` hold every group of the entry's answer."""
    return held_groups(entry, found) == len(entry["answer"])


def certified_quotes(reply: Mapping[str, Any], notes: Mapping[str, Note]) -> list[tuple[str, tuple[str, ...]]]:
    """(quote, heading path) of each VERIFIED or CORRECTED quote of a brain_ask reply, once
    for every block of its note that holds it (a line repeated under several headings, as
    in a log of inspections, is judged under each); `notes`: the snapshot's notes by path."""
    out = []
    for q in reply.get("quotes", ()):
        if q.get("stamp") not in CERTIFIED:
            continue
        note = notes.get(q.get("path") or "")
        target = norm(q["quote"])
        paths = [b.heading_path for b in blocks_of(note) if target in norm(b.text)] if note is not None else []
        out += [(q["quote"], p) for p in paths or [(q["heading"],) if q.get("heading") else ()]]
    return out


def fact_lines(entry: Mapping[str, Any], gold: Sequence[str], pack: Pack) -> list[tuple[str, str]] | None:
    """(tag, verbatim line) of a packed gold note for each group of the answer, or None when
    the pack holds no such line for some group. Live text first; a fact wrapped over two
    lines of a paragraph is quoted as those two lines."""
    out = []
    for group in entry["answer"]:
        want = [norm(s) for s in group]
        best = None
        for f in pack.files:
            if f.path not in gold:
                continue
            for block in blocks_of(f.note):
                if not _under(entry, block.heading_path):
                    continue
                lines = [line for line in block.text.splitlines() if line.strip() and line.strip() in f.text]
                spans = [line.strip() for line in lines] + [
                    f"{a.strip()}\n{b.strip()}" for a, b in zip(lines, lines[1:], strict=False)
                ]
                for span in spans:
                    if any(w in norm(span) for w in want):
                        key = (block.retired is None, -len(span))
                        if best is None or key > best[0]:
                            best = (key, f.tag, span)
                        break
        if best is None:
            return None
        out.append((best[1], best[2]))
    return out


class IdealReader:
    """A stub reader for the eval: quotes the gold line from the pack it is given.

    `gold`: question text -> (its gold note paths, its answer entry). Reads the packs a model
    reader is given (the top k and the sweep of further packs), not every matching note.
    `found` collects the questions whose packs held a gold line.
    """

    name = "ideal-eval-stub"
    reads_all = False

    def __init__(self, gold: Mapping[str, tuple[Sequence[str], Mapping[str, Any]]]):
        self.gold = gold
        self.found: set[str] = set()

    def read(self, question: str | Question, pack: Pack) -> ReaderReply:
        question = question if isinstance(question, str) else question.text
        reply = ReaderReply(reader=self.name)
        paths, entry = self.gold.get(question, ((), None))
        lines = fact_lines(entry, paths, pack) if entry is not None else None
        if not lines:
            reply.not_in_brain = True
            reply.answer = "The notes read do not answer this."
            return reply
        self.found.add(question)
        reply.citations = list(dict.fromkeys(lines))
        reply.answer = "From the notes:\n" + "\n".join(q for _, q in reply.citations)
        return reply
