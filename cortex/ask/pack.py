"""The pack: what of the notes a reader model sees, under a budget.

A model reader's first pack is made of passages (`passage_pack`): the best passages of
the scope by the hybrid ranking (a passage's cosine to the question plus the share of the
question's rarity weight it holds, as brain_search fuses them), each further passage of
one note ranked `DIVERSITY` lower, taken best first while they fit. A reader that reads
every matching note (the offline reader), a sweep's further packs, and any pack built
without the meaning arm take whole notes in rank order (`build_pack`).

Each file block opens with `=== FILE <path> [tag: <tag>] ===`. Tags are opaque,
issued per pack from the SHA and the position, and resolved by the server: the
reader cites a tag, never a path. A note too large for the budget goes in by its
best-matching sections, each labelled as a part; no note is cut mid-section.

The pack also carries the question's *distinctive* terms (`distinctive`): the
content words rare enough in the scope to be evidence, each with its rarity weight
and the notes of the scope that hold it. A complete search reads every note that
holds one of them; the offline reader answers only from a passage that covers
enough of their weight.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field

from cortex.index.bm25 import idf
from cortex.index.ranking import COVERAGE
from cortex.index.tokenize import tokenize
from cortex.notes.blocks import Block, blocks_of
from cortex.notes.note import Note
from cortex.notes.structure import headings

__all__ = [
    "DISTINCT_FLOOR",
    "DIVERSITY",
    "DISTINCT_SHARE",
    "Pack",
    "PackedFile",
    "build_pack",
    "derived_base",
    "distinctive",
    "make_tag",
    "passage_pack",
    "rarity",
    "sections",
    "variants",
]

# A term is distinctive when at most this share of the scope's notes holds it (or at
# most DISTINCT_FLOOR notes, so a small brain still has evidence). Measured on the
# public eval (176 notes): at 10%, "hive" (30 notes), "honey" (34), "2026" (109) and
# "vellmoor" (17) are context, while "hotline" (3), "swarm" (11) and "salary" (0) are
# evidence. NOT IN BRAIN needs every note holding a distinctive term read, so the
# share also bounds how many notes that takes.
DISTINCT_SHARE = 0.10
DISTINCT_FLOOR = 5
_CONNECTOR = re.compile(r"[-./@:'_]+")


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
    # The question's distinctive terms: rarity weight, and the scope's notes holding each
    # (None when the pack was built without the scope's statistics).
    weights: dict[str, float] | None = None
    holders: dict[str, frozenset[str]] | None = None
    # Notes packed only in part while a passage left out holds a question term: not read
    # in full, so a miss cannot rest on them (NOT IN BRAIN counts them as unread).
    partial: list[str] = field(default_factory=list)

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
    """The note's text cut at its headings (as CommonMark reads them, so none in code):
    frontmatter-free preamble, then one piece per heading."""
    body = note.body
    cuts = [0] + [h.start for h in headings(body) if h.start > 0]
    pieces = [body[a:b] for a, b in zip(cuts, cuts[1:] + [len(body)], strict=True)]
    return [p for p in pieces if p.strip()]


def build_pack(sha: str, notes: list[Note], words: Collection[str], budget: float, first: int = 0) -> Pack:
    """Pack `notes` (best first) whole while they fit, else by their best sections (those
    holding most of the question's `words`).

    `first`: how many files earlier packs of the same answer held, so tags stay unique.
    """
    terms = set(words)
    pack = Pack(sha=sha, files=[])
    used = 0
    for note in notes:
        tag = make_tag(sha, first + len(pack.files))
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


# A note's second passage ranks this much below its own score, its third twice as much, so
# the pack spans notes before it deepens one: chosen on the eval's even lines (DESIGN.md, "Meaning").
DIVERSITY = 0.1


def _unit(note: Note, blocks: list[Block], a: int, b: int) -> tuple[int, int]:
    """Blocks `a`..`b` of a passage, from its section's heading when the passage opens under one."""
    for h in range(a - 1, -1, -1):
        if blocks[h].kind == "heading":
            if blocks[h].heading_path == blocks[a].heading_path[: len(blocks[h].heading_path)]:
                return h, b
            break
    return a, b


def _held(text: str, weights: Mapping[str, float], forms: Mapping[str, frozenset[str]]) -> float:
    """The share of the question's rarity weight whose terms `text` holds, in any folded form."""
    total = sum(weights.values())
    if not total:
        return 0.0
    words = set(tokenize(text))
    return sum(w for t, w in weights.items() if words & forms[t]) / total


def passage_pack(
    sha: str,
    ranked: list[tuple[Note, list[tuple[float, int, int]]]],
    budget: float,
    weights: Mapping[str, float],
    first: int = 0,
    diversity: float = DIVERSITY,
) -> Pack:
    """The best passages of `ranked` (notes best first, each with its passages' (cosine,
    first block, last block)) that fit `budget`, grouped by note.

    A passage scores its cosine plus `COVERAGE` times the square of the share of the
    question's rarity weight (`weights`) held by it and its note's names, less `diversity`
    for each better passage of its note; passages are taken best first while they fit. A
    note's file holds its passages in the note's order (each from its section's heading),
    labelled as a part unless every passage of the note went in; a note with no passages
    (no vectors yet) is one passage, its body. `first`: as for `build_pack`.
    """
    forms = {t: variants(t) for t in weights}
    cands: list[tuple[float, int, int, tuple[int, int], int]] = []  # (score, note, j, blocks, bytes)
    units: list[list[tuple[int, int]]] = []
    for i, (note, spans) in enumerate(ranked):
        blocks = blocks_of(note)
        names = " ".join([note.title, *note.aliases])
        seen: dict[tuple[int, int], float] = {}
        for cos, a, b in spans:
            if 0 <= a <= b < len(blocks):
                key = _unit(note, blocks, a, b)
                seen[key] = max(seen.get(key, -1.0), cos)
        mine: list[tuple[float, tuple[int, int], int]] = []
        for (a, b), cos in seen.items():
            text = note.text[blocks[a].start : blocks[b].end]
            cover = _held(text + "\n" + names, weights, forms)
            mine.append((cos + COVERAGE * cover * cover, (a, b), len(text.encode("utf-8")) + 1))
        if not mine:  # no vectors for this note: its body, scored by its words
            cover = _held(note.body + "\n" + names, weights, forms)
            mine.append((COVERAGE * cover * cover, (-1, -1), len(note.body.encode("utf-8"))))
        mine.sort(key=lambda x: (-x[0], x[1]))
        units.append([u for _, u, _ in mine])
        cands += [(score - diversity * j, i, j, u, size) for j, (score, u, size) in enumerate(mine)]
    cands.sort(key=lambda c: (-c[0], c[1], c[2]))
    chosen: dict[int, list[tuple[int, int]]] = {}
    used = 0.0
    for _, i, _, u, size in cands:
        header = 0 if i in chosen else 60 + len(ranked[i][0].path)
        if used + size + header <= budget:
            chosen.setdefault(i, []).append(u)
            used += size + header
    pack = Pack(sha=sha, files=[])
    for i in chosen:  # in the order each note's first passage was taken
        note = ranked[i][0]
        mine_all, took = units[i], chosen[i]
        if (-1, -1) in took or len(took) == len(mine_all):
            text, part = note.body, None
        else:
            blocks = blocks_of(note)
            covered: set[int] = set()
            pieces = []
            for a, b in sorted(took):
                fresh = [x for x in range(a, b + 1) if x not in covered]
                if fresh:
                    covered.update(fresh)
                    pieces.append(note.text[blocks[fresh[0]].start : blocks[fresh[-1]].end])
            text, part = "\n\n".join(p.rstrip() for p in pieces), f"{len(took)} of {len(mine_all)} passages"
            left = [u for u in mine_all if u not in took]
            if any(_held(note.text[blocks[a].start : blocks[b].end], weights, forms) for a, b in left):
                pack.partial.append(note.path)
        pack.files.append(PackedFile(make_tag(sha, first + len(pack.files)), note.path, note, text, part))
    pack.left_for_budget = [n.path for i, (n, _) in enumerate(ranked) if i not in chosen]
    return pack


_SUFFIXES = ("ings", "ing", "ies", "ied", "es", "ed", "s")
_ENDINGS = ("", "e", "s", "es", "ed", "ing", "ings")
# Derivational endings (English word formation, not any brain's words): the longest
# one is taken off a term to find its base ("electricity" -> "electric", "rental" ->
# "rent", "extraction" -> "extract"), and the base with any of `_DERIVED` stands for the
# term. A base keeps at least `_BASE_MIN` letters, so "supers" is not "sup".
_DERIVATIONAL = tuple(
    sorted(
        """ational ations ation ions ion ances ance ences ence ments ment ness ities ity ically ical
        ic als al ly ives ive ous ers er est ful ings ing ied ies ed es s e y""".split(),
        key=len,
        reverse=True,
    )
)
_DERIVED = (
    *_ENDINGS,
    *"er ers ion ions ation ations al ally ly ity ic ical ive ment ments ance ence y ies ied ness est".split(),
)
_BASE_MIN = 4


def variants(term: str) -> frozenset[str]:
    """A term and its inflected and derived spellings, for matching only.

    A light English fold used to decide which notes hold a question's term and whether
    a passage covers it: plural, -ed, -ing on a stem of 3+ letters ("reared" ~
    "rearing" ~ "rear"), one derivational ending on a base of 4+ letters
    (`derived_base`: "insures" ~ "insurance", "quickly" ~ "quick"), and a verb of two
    consonants and "y" with its noun in "-ight" ("flight" ~ "flying"). It may match a
    false friend ("mated" ~ "mat", "station" ~ "state"); that makes a search read more
    notes, and the offline reader still asks for every focus term of the question. The
    verifier never folds anything.
    """
    out = set(tokenize(term)) | {term} | _ight(term)  # an accented word also stands for its bare spelling
    if not (term.isalpha() and term.isascii() and len(term) > 3):
        return frozenset(out)
    stem = term
    for suffix in _SUFFIXES:
        if term.endswith(suffix) and len(term) - len(suffix) >= 3 and not term.endswith("ss"):
            stem = term[: -len(suffix)]
            if suffix in ("ies", "ied"):
                stem += "y"
            break
    if stem != term and len(stem) > 3 and stem[-1] == stem[-2] and stem[-1] not in "lsz":
        stem = stem[:-1]  # planned -> plan
    if stem.endswith("e") and len(stem) > 3:
        stem = stem[:-1]  # produce -> produc(e/ed/ing)
    if stem.endswith("y"):
        out.update((stem, stem + "s", stem[:-1] + "ies", stem[:-1] + "ied"))
    else:
        out.update(stem + e for e in _ENDINGS)
        if len(stem) >= 3 and stem[-1] not in "aeiouywx" and stem[-2] in "aeiou":
            out.update(stem + stem[-1] + e for e in ("ed", "ing"))  # plan -> planned
    base = derived_base(term)
    out.update(base + e for e in _DERIVED)
    if base.endswith("y"):
        out.update(base[:-1] + e for e in ("ies", "ied", "ily", "iness"))
    return frozenset(out)


# A verb of two consonants and "y" and its noun in "-ight": fly/flight. English has a few
# ("flying" for "flight" was missed: a Lisbon flight note said "Flying TAP TP1337"); the
# same shape brings false friends (fry/fright, ply/plight, sly/slight, wry/wright), rare in
# notes, and a false friend only makes a search read more notes.
_IGHT_NOUN = re.compile(r"^([b-df-hj-np-tv-z]{2})ights?$")
_Y_VERB = re.compile(r"^([b-df-hj-np-tv-z]{2})(?:y|ys|ies|ied|ying|yer|yers|ier|iers)$")


def _ight(term: str) -> set[str]:
    """The "-ight" noun of a verb of two consonants and "y", or the verb of such a noun."""
    noun, verb = _IGHT_NOUN.match(term), _Y_VERB.match(term)
    if noun:
        stem = noun.group(1)
        return {stem + e for e in ("y", "ies", "ied", "ying", "ier", "iers")}
    if verb:
        return {verb.group(1) + "ight", verb.group(1) + "ights"}
    return set()


def derived_base(term: str) -> str:
    """`term` less its longest derivational ending, when 4+ letters remain ("rental" -> "rent").

    A doubled final consonant left behind is undone ("planning" -> "plan"), as for
    inflections. A term with no such ending is its own base.
    """
    if len(term) > _BASE_MIN:
        for ending in _DERIVATIONAL:
            if term.endswith(ending) and len(term) - len(ending) >= _BASE_MIN:
                base = term[: -len(ending)]
                if len(base) > _BASE_MIN and base[-1] == base[-2] and base[-1] not in "lsz":
                    base = base[:-1]
                return base
    return term


def rarity(counts: Mapping[str, int], n_docs: int) -> dict[str, float]:
    """The question's terms (term -> notes of the scope holding it) weighted by rarity.

    The weight is the BM25 IDF, so a term no note holds weighs most. A compound
    ("co-working", "2026/2027") stands for its parts when a note holds it, and its
    parts stand for it when none does.
    """
    keep = dict(counts)
    for term, n in counts.items():
        parts = [p for p in _CONNECTOR.split(term) if p]
        if len(parts) < 2:
            continue
        if n > 0:
            for p in parts:
                keep.pop(p, None)
        else:
            keep.pop(term, None)
    return {t: idf(n_docs, n) for t in keep for n in (keep[t],)}


def distinctive(counts: Mapping[str, int], n_docs: int) -> set[str]:
    """The terms of `counts` rare enough in the scope to be evidence.

    At most `DISTINCT_SHARE` of the `n_docs` notes (or `DISTINCT_FLOOR`) hold one.
    """
    limit = max(DISTINCT_FLOOR, DISTINCT_SHARE * n_docs)
    return {t for t in rarity(counts, n_docs) if counts[t] <= limit}
