"""The paths nearest a mistyped one: what "no note at notes/vitamin_d.md" should offer
("did you mean notes/vitamin-d.md?"), and the folders nearest a prefix that matches none.

Pure, no I/O. A name is compared as links compare names (`links.name_slug`: either Unicode
form, any case, white space, `-`, `_` and `.` alike), so `notes/vitamin_d.md`,
`notes/vitamin-d`, `notes/Vitamin D.md` and `NOTES/VITAMIN-D.MD` all name notes/vitamin-d.md
exactly; then by its file name in any folder, then by a note's title or alias (`Vitamin D`);
then, failing all of those, by spelling (difflib's ratio over the folded names, at least
`CLOSE`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from difflib import SequenceMatcher

from cortex.notes.links import name_slug

__all__ = ["CLOSE", "MAX_SUGGESTED", "did_you_mean", "nearest"]

CLOSE = 0.75  # difflib ratio of the folded names; 0.6 (difflib's default) offered unrelated notes
MAX_SUGGESTED = 3


def _bare(name: str) -> str:
    name = name.strip().strip("/")
    return name[:-3] if name.lower().endswith(".md") else name


def _last(name: str) -> str:
    return name.rsplit("/", 1)[-1]


def nearest(asked: str, candidates: Mapping[str, Iterable[str]], n: int = MAX_SUGGESTED) -> list[str]:
    """Up to `n` of `candidates` (paths, each with its other names: title, aliases) nearest
    to `asked`, best first; [] when none is near. `asked` itself is never offered.

    Ranked by the first that holds: the path names it (folded, `.md` optional); its file
    name alone does (from another folder); a title or alias does; then by spelling, the
    closest first (the order links resolve in). Ties: the shorter path, then by name."""
    want = name_slug(_bare(asked))
    if not want.strip("/"):
        return []
    want_last = _last(want)
    ranked: list[tuple[int, float, int, str]] = []
    fuzzy = SequenceMatcher(autojunk=False)
    fuzzy.set_seq2(want)
    for path, names in candidates.items():
        if path == asked:
            continue
        bare = name_slug(_bare(path))
        others = {name_slug(" ".join(x.split())) for x in names if isinstance(x, str) and x.strip()}
        if bare == want:
            ranked.append((0, 1.0, len(path), path))
        elif _last(bare) == want_last:
            ranked.append((1, 1.0, len(path), path))
        elif want in others:
            ranked.append((2, 1.0, len(path), path))
        else:
            best = 0.0
            for name in (bare, *others, *([_last(bare)] if "/" not in want else [])):
                fuzzy.set_seq1(name)
                if fuzzy.real_quick_ratio() >= CLOSE and fuzzy.quick_ratio() >= CLOSE:
                    best = max(best, fuzzy.ratio())
            if best >= CLOSE:
                ranked.append((3, -best, len(path), path))
    ranked.sort()
    return [path for *_, path in ranked[:n]]


def did_you_mean(paths: list[str]) -> str:
    """`; did you mean a, b or c?` for a refusal's end, or "" when there is nothing to offer."""
    if not paths:
        return ""
    said = paths[0] if len(paths) == 1 else ", ".join(paths[:-1]) + " or " + paths[-1]
    return f"; did you mean {said}?"
