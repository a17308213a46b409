"""Links between notes: `[[Name]]` resolved to a note's path the way Obsidian does
(`LinkResolver`), and a renamed note's links rewritten in the notes that point to it.

Finding a note's links is part of parsing it (`cortex.notes.note.wikilinks`); what they
point to depends on every other note's path, so it is worked out here. Pure, no I/O.
"""

from __future__ import annotations

from collections.abc import Iterable

from cortex.notes.note import WikiLink, link_key

__all__ = ["LinkResolver", "link_text", "rewrite_links"]


def _stem(path: str) -> str:
    name = path.rsplit("/", 1)[-1]
    return name[:-3] if name.lower().endswith(".md") else name


def _folder(path: str) -> str:
    return path.rsplit("/", 1)[0] if "/" in path else ""


class LinkResolver:
    """Resolves `[[Name]]` to a note path the way Obsidian does.

    A target without `/` names a file stem, case-insensitively and in either
    Unicode form; when several notes share it, the one nearest the linking note
    wins (most leading folders in common, then the shortest path, then by name).
    A target with `/` is a path from the vault root (or from the linking note's
    folder), `.md` optional.
    """

    def __init__(self, paths: Iterable[str]) -> None:
        self.paths = sorted(paths)
        self._by_stem: dict[str, list[str]] = {}
        self._by_path: dict[str, str] = {}
        for p in self.paths:
            self._by_stem.setdefault(link_key(_stem(p)), []).append(p)
            self._by_path[link_key(p[:-3] if p.lower().endswith(".md") else p)] = p

    def resolve(self, target: str, source: str = "") -> str | None:
        """The note `target` points to from the note at `source`, or None (a dangling link)."""
        name = target.strip()
        if name.lower().endswith(".md"):
            name = name[:-3]
        if not name:
            return None
        if "/" in name:
            key = link_key(name.lstrip("/"))
            hit = self._by_path.get(key)
            if hit is None and _folder(source):
                hit = self._by_path.get(link_key(_folder(source) + "/" + name))
            return hit
        found = self._by_stem.get(link_key(name))
        if not found:
            return None
        if len(found) == 1:
            return found[0]
        home = _folder(source).split("/") if _folder(source) else []

        def nearness(p: str) -> tuple[int, int, str]:
            parts = _folder(p).split("/") if _folder(p) else []
            common = 0
            for a, b in zip(home, parts):
                if a != b:
                    break
                common += 1
            return (-common, len(parts), p)

        return min(found, key=nearness)

    def unique_stem(self, path: str) -> bool:
        """Whether `[[stem]]` alone names `path` from anywhere (no other note shares the stem)."""
        return len(self._by_stem.get(link_key(_stem(path)), [])) == 1


def link_text(new_path: str, old_target: str, resolver: LinkResolver) -> str:
    """What a link to a note now at `new_path` should say, keeping the old link's style.

    A bare name stays a bare name when it still names one note only; otherwise (or
    when the old link was a path) the link becomes the path from the root. `.md`
    is kept only if the old link had it.
    """
    keep_md = old_target.strip().lower().endswith(".md")
    if "/" not in old_target and resolver.unique_stem(new_path):
        name = _stem(new_path)
    else:
        name = new_path[:-3] if new_path.lower().endswith(".md") else new_path
    return name + ".md" if keep_md else name


def rewrite_links(text: str, body_offset: int, links: Iterable[WikiLink], replacement: dict[int, str]) -> str:
    """`text` with the target of each link whose start is in `replacement` replaced.

    Only the target text changes: the `#heading`, the `|alias`, the brackets, and
    every other byte (line endings, BOM, tabs, a missing final newline) stay.
    """
    out: list[str] = []
    pos = 0
    for link in sorted(links, key=lambda lk: lk.start):
        new = replacement.get(link.start)
        if new is None:
            continue
        start, end = body_offset + link.start, body_offset + link.end
        out.append(text[pos:start])
        out.append(new)
        pos = end
    out.append(text[pos:])
    return "".join(out)
