"""The pack: the notes a reader model sees, whole and in rank order, under a budget.

Each file block opens with `=== FILE <path> [tag: <tag>] ===`. Tags are opaque,
issued per pack from the SHA and the position, and resolved by the server: the
reader cites a tag, never a path. A note too large for the budget goes in by its
best-matching sections, each labelled as a part; no note is cut mid-section.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field

from .notes import Note, headings_of
from .tokenize import tokenize


@dataclass(frozen=True)
class PackedFile:
    tag: str
    path: str
    note: Note
    text: str
    parts: str | None = None  # e.g. "2 of 9 sections"; None when the note is whole


@dataclass
class Pack:
    sha: str
    files: list[PackedFile]
    left_for_budget: list[str] = field(default_factory=list)

    @property
    def notes_by_tag(self) -> dict[str, Note]:
        return {f.tag: f.note for f in self.files}

    @property
    def paths(self) -> list[str]:
        return [f.path for f in self.files]

    def render(self) -> str:
        out = []
        for f in self.files:
            label = f" (part: {f.parts})" if f.parts else ""
            out.append(f"=== FILE {f.path}{label} [tag: {f.tag}] ===\n{f.text.rstrip()}\n")
        return "\n".join(out)


def make_tag(sha: str, position: int) -> str:
    """An opaque tag for the file at `position` in a pack served from `sha`."""
    return "t" + hashlib.sha256(f"{sha}:{position}".encode()).hexdigest()[:8]


def sections(note: Note) -> list[str]:
    """The note's text cut at its headings: frontmatter-free preamble, then one piece per heading."""
    lines = note.body.splitlines(keepends=True)
    heads = {h for _, h in headings_of(note.body)}
    pieces: list[list[str]] = [[]]
    in_fence = False
    for line in lines:
        stripped = line.lstrip()
        if stripped.startswith("```") or stripped.startswith("~~~"):
            in_fence = not in_fence
        if not in_fence and line.startswith("#") and line.lstrip("#").strip().rstrip("#").strip() in heads:
            pieces.append([])
        pieces[-1].append(line)
    return ["".join(p) for p in pieces if "".join(p).strip()]


def build_pack(sha: str, notes: list[Note], question: str, budget: int) -> Pack:
    """Pack `notes` (best first) whole while they fit, else by their best sections."""
    terms = set(tokenize(question))
    pack = Pack(sha=sha, files=[])
    used = 0
    for note in notes:
        tag = make_tag(sha, len(pack.files))
        header = 40 + len(note.path)
        whole = len(note.body.encode("utf-8")) + header
        if used + whole <= budget:
            pack.files.append(PackedFile(tag, note.path, note, note.body))
            used += whole
            continue
        secs = sections(note)
        ranked = sorted(range(len(secs)), key=lambda i: (-len(terms.intersection(tokenize(secs[i]))), i))
        chosen: list[int] = []
        room = budget - used - header
        for i in ranked:
            if not terms.intersection(tokenize(secs[i])):
                break
            size = len(secs[i].encode("utf-8"))
            if size <= room:
                chosen.append(i)
                room -= size
        if not chosen:
            pack.left_for_budget.append(note.path)
            continue
        chosen.sort()
        text = "\n".join(secs[i].rstrip() for i in chosen)
        part = f"{len(chosen)} of {len(secs)} sections" if len(chosen) < len(secs) else None
        pack.files.append(PackedFile(tag, note.path, note, text, part))
        used += len(text.encode("utf-8")) + header
    return pack
