"""Links between notes: `[[Name]]` resolved to a note's path the way Obsidian does, then
by title (`LinkResolver`), and a renamed note's links rewritten in the notes that point to it.

Finding a note's links is part of parsing it (`cortex.notes.note.wikilinks`); what they
point to depends on every other note's path, title and aliases, so it is worked out here. Pure, no I/O.
"""

from __future__ import annotations

import posixpath
import re
import unicodedata
import urllib.parse
from collections.abc import Iterable, Mapping

from cortex.notes.note import Note, WikiLink, derived_title, link_key

__all__ = [
    "HOW",
    "LinkResolver",
    "link_text",
    "name_key",
    "name_slug",
    "own_names",
    "rewrite_links",
    "url_path",
    "url_to",
    "wikilink_unsafe",
]


def _stem(path: str) -> str:
    name = path.rsplit("/", 1)[-1]
    return name[:-3] if name.lower().endswith(".md") else name


def _folder(path: str) -> str:
    return path.rsplit("/", 1)[0] if "/" in path else ""


def _unmd(path: str) -> str:
    return path[:-3] if path.lower().endswith(".md") else path


# What `name_slug` folds: white space, hyphens, underscores and dots, the characters a name
# says a space with ("Vitamin D", vitamin-d.md, vitamin_d.md). Nothing else: "C++" stays
# "c++", so it never names c.md.
_SEPARATORS = re.compile(r"[\s_.\-]+")


def name_key(text: str) -> str:
    """A title or alias as a link names it: `link_key`, runs of white space as one space."""
    return link_key(" ".join(text.split()))


def name_slug(text: str) -> str:
    """A name with its word separators folded: NFC, case folded, runs of white space,
    `-`, `_` and `.` as one `-` (per path segment; the ends trimmed)."""
    return "/".join(_SEPARATORS.sub("-", link_key(seg)).strip("-") for seg in text.split("/"))


def own_names(note: Note) -> tuple[str | None, tuple[str, ...]]:
    """A note's own title (None when it is only its file name's) and its aliases."""
    title = note.title if name_key(note.title) != name_key(derived_title(note.path)) else None
    return title, tuple(a for a in note.aliases if isinstance(a, str) and a.strip())


# How a link was resolved, in the order tried (`LinkResolver.find`).
HOW = ("path", "file name", "alias", "title", "name")


class LinkResolver:
    """Resolves `[[Name]]` to a note path as Obsidian does, then by title as basic-memory does.

    In order, the first that names a note wins:
    1. path: a target with `/` is a path from the vault root, else from the linking
       note's folder, else the end of a path (`[[b/c]]` for `a/b/c.md`); `.md` optional;
    2. file name: a target without `/` names a file stem;
    3. alias: a note's frontmatter `aliases`;
    4. title: a note's frontmatter `title` or first level-1 heading;
    5. name: the same with white space, `-`, `_` and `.` folded (`[[Vitamin D]]` for
       vitamin-d.md, `[[notes/vitamin_d]]` for notes/vitamin-d.md).
    Names compare case-insensitively and in either Unicode form (`link_key`). When several
    notes answer at one step, the one nearest the linking note wins (most leading folders
    in common, then the shortest path, then by name).

    `notes`: the commit's notes by path, or only their paths (then steps 3 and 4 find
    nothing and step 5 reads file names only).
    """

    def __init__(self, notes: Iterable[str] | Mapping[str, Note]) -> None:
        self.paths = sorted(notes)
        self._by_stem: dict[str, list[str]] = {}
        self._by_path: dict[str, str] = {}
        self._by_end: dict[str, list[str]] = {}
        self._by_alias: dict[str, list[str]] = {}
        self._by_title: dict[str, list[str]] = {}
        self._by_slug: dict[str, list[str]] = {}
        parsed = notes if isinstance(notes, Mapping) else {}
        for p in self.paths:
            bare = _unmd(p)
            self._by_stem.setdefault(link_key(_stem(p)), []).append(p)
            self._by_path[link_key(bare)] = p
            parts = bare.split("/")
            for i in range(1, len(parts) - 1):
                self._by_end.setdefault(link_key("/".join(parts[i:])), []).append(p)
            slugs = {name_slug(bare), name_slug(_stem(p))}
            note = parsed.get(p)
            if note is not None:
                title, aliases = own_names(note)
                for alias in aliases:
                    self._by_alias.setdefault(name_key(alias), []).append(p)
                    slugs.add(name_slug(alias))
                if title:
                    self._by_title.setdefault(name_key(title), []).append(p)
                    slugs.add(name_slug(title))
            for slug in slugs - {""}:
                self._by_slug.setdefault(slug, []).append(p)

    def resolve(self, target: str, source: str = "") -> str | None:
        """The note `target` points to from the note at `source`, or None (a dangling link)."""
        found = self.find(target, source)
        return found[0] if found else None

    def find(self, target: str, source: str = "") -> tuple[str, str] | None:
        """(the note `target` points to from `source`, how: one of `HOW`), or None."""
        name = _unmd(target.strip())
        if not name:
            return None
        if "/" in name:
            key = link_key(name.lstrip("/"))
            hit = self._by_path.get(key)
            if hit is None and _folder(source):
                hit = self._by_path.get(link_key(_folder(source) + "/" + name))
            if hit is not None:
                return hit, "path"
            ends = self._by_end.get(key)
            if ends:
                return _nearest(ends, source), "path"
        else:
            stems = self._by_stem.get(link_key(name))
            if stems:
                return _nearest(stems, source), "file name"
        for how, table, key in (
            ("alias", self._by_alias, name_key(name)),
            ("title", self._by_title, name_key(name)),
            ("name", self._by_slug, name_slug(name.lstrip("/"))),
        ):
            found = table.get(key)
            if found:
                return _nearest(found, source), how
        return None

    def unique_stem(self, path: str) -> bool:
        """Whether `[[stem]]` alone names `path` from anywhere (no other note shares the stem)."""
        return len(self._by_stem.get(link_key(_stem(path)), [])) == 1


def _nearest(found: list[str], source: str) -> str:
    """Of several notes one name points to, the nearest to `source`: most leading folders
    in common, then the shortest path, then by name."""
    if len(found) == 1:
        return found[0]
    home = _folder(source).split("/") if _folder(source) else []

    def nearness(p: str) -> tuple[int, int, str]:
        parts = _folder(p).split("/") if _folder(p) else []
        common = 0
        for a, b in zip(home, parts, strict=False):
            if a != b:
                break
            common += 1
        return (-common, len(parts), p)

    return min(found, key=nearness)


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


# What a Markdown link's url writes as `%XX`, so that CommonMark and Obsidian both read back the
# exact name (`markdown_links`): `%` (else `x%20y.md` reads as "x y.md"), `#` and `?` (a url's
# fragment and query), white space, `(` `)` and `<` `>` (they end a url), `\\` and `&` (escapes
# and entities), `:` (`a:b.md` reads as a scheme), and `[ ] ^ | { } " \``, link, table and code
# syntax to Obsidian. Letters of every script stay as they are, readable.
_URL_ESCAPED = frozenset(' "#%&()<>?[\\]^`{|}:')


def url_path(path: str, spaces: bool = False) -> str:
    """`path` as a Markdown link's url: every character that would be misread as `%XX` (its
    UTF-8 bytes), control and space characters of any script too; ASCII spaces as they are
    when `spaces` (the url is written in angle brackets, `<a b.md>`)."""
    return "".join(
        c
        if (c == " " and spaces)
        or (c not in _URL_ESCAPED and not c.isspace() and unicodedata.category(c)[0] not in "CZ")
        else urllib.parse.quote(c, safe="")
        for c in path
    )


# What a [[wikilink]]'s target cannot hold, in Obsidian's reading and `note.WIKILINK`'s: `#` and
# `^` open a heading or a block, `|` an alias, `[` and `]` open or close a link, `%%` a comment.
_NOT_IN_WIKILINK = ("#", "^", "|", "[", "]", "%%")


def wikilink_unsafe(name: str) -> str | None:
    """The characters of `name` that a `[[wikilink]]` to it would read as link syntax, as one
    phrase ("'#' and '['"), or None when a wikilink can name it."""
    found = [f"'{c}'" for c in _NOT_IN_WIKILINK if c in name]
    return " and ".join(found) if found else None


def url_to(new_path: str, source: str, old_url: str) -> str:
    """The url a Markdown link in the note at `source` should now say to reach `new_path`,
    in the old url's style: from the root when it was ("/x.md"), else relative to the
    source's folder; spaces as "%20" unless the old url held them as written (`<a b.md>`),
    and everything else that would be misread escaped (`url_path`)."""
    url = "/" + new_path if old_url.startswith("/") else posixpath.relpath(new_path, _folder(source) or ".")
    return url_path(url, spaces=" " in old_url)


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
