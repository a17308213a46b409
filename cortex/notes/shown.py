"""What of a block the editor shows as text: the markup a fair quote may leave out.

Pure functions, no I/O. An editor renders a footnote reference as a superscript number, a
link as its text, a wikilink as its alias or its target and an inline HTML tag not at all,
so a quote copied from the rendered note leaves them out: ``train[^1] to`` is shown as
"train to". `elisions` names that markup in one block, in note offsets, and
`cortex.notes.blocks.normalize_shown` reads the block without it, every char still mapped
to its byte in the note: the match span and the struck, hidden and retired checks of a
quote read this way are the ones of the raw reading.

What is left out (and nothing else):

- a footnote reference ``[^label]`` (and ``[^label]:`` opening a footnote's own text);
- an inline link's syntax: ``[text](url "title")`` reads as ``text``, and an autolink
  ``<https://…>`` as its address (markdown-it decides what is a link);
- a wikilink's brackets: ``[[target]]`` reads as ``target`` (``[[target#heading]]`` as
  ``target#heading``, as written), ``[[target|alias]]`` as ``alias``, as Obsidian shows it;
- an inline HTML tag of an element that formats a run of text (``<b>``, ``<span …>``,
  ``<del>``, …), as nothing, and of one that breaks it (``<br>``, ``<div>``, ``<p>``, …), as a
  space.

Kept as written: ``<sup>`` and ``<sub>`` (a superscript 6 is not a 6: ``10<sup>6</sup>`` never
reads "106"), ``<q>`` and ``<ruby>`` (a browser adds to what they hold), tags of no known
element, images and embeds (``![alt](src)``, ``![[file]]``: not text), reference-style links,
Obsidian's inline footnotes (``^[text]``), HTML entities, and everything in code. Struck and
hidden text stay: leaving them out would drop words the note shows as retired or never
shows at all. Emphasis and code markers are folded by `cortex.notes.blocks.normalize` in
every reading.
"""

from __future__ import annotations

import re

from cortex.notes.structure import Marks, Span, inside, merged, overlaps

__all__ = ["Elision", "elisions", "plain", "visible"]

Elision = tuple[int, int, str]  # [start, end) of the note left out, and what stands in for it

# Elements that format a run of text: their tags leave no trace in what is shown.
_RUN = frozenset(
    "a abbr b bdi bdo big cite code data del dfn em font i ins kbd mark s samp small span strike strong time tt u "
    "var".split()
)
# Elements that break a run of text (a line break, a block): a space, a word boundary.
_BREAK = frozenset(
    "address article aside blockquote br center dd details div dl dt figcaption figure footer h1 h2 h3 h4 h5 h6 "
    "header hr li main nav ol p pre section summary table tbody td tfoot th thead tr ul wbr".split()
)
_MD_LINK = re.compile(r"!?\[([^\]]*)\]\([^)\s]*(?:\s+\"[^\"]*\")?\)")
_WIKI = re.compile(r"!?\[\[([^\]|#]*)(?:#[^\]|]*)?(?:\|([^\]]*))?\]\]")
_BARE_URL = re.compile(r"<?\b(?:https?|ftp)://[^\s>)]+>?")
# What `visible` leaves out besides link targets: comments, tags, embeds, image paths.
_UNSEEN = re.compile(
    r"<!--.*?(?:-->|$)|%%.*?(?:%%|$)|</?[A-Za-z][^<>\n]*>|!\[\[[^\]\n]*\]\]|!\[([^\]\n]*)\]\([^)\n]*\)", re.S
)
_FOOTNOTE = re.compile(r"\[\^[^\[\]\s]+\]")
# Obsidian's wikilink (no line break, no bracket inside); in a table cell the bar is `\|`.
_WIKILINK = re.compile(r"\[\[([^\[\]\n|]*?)(?:(\\?\|)[^\[\]\n]*)?\]\]")


def plain(text: str) -> str:
    """`text` with link targets left out: the words people read, not the addresses."""
    return _BARE_URL.sub("", _linked(text))


def _linked(text: str) -> str:
    """`text` with each link read as its text: a Markdown link's, a wikilink's alias or name."""
    text = _MD_LINK.sub(lambda m: m.group(1), text)
    return _WIKI.sub(lambda m: m.group(2) or m.group(1).rsplit("/", 1)[-1], text)


def visible(text: str) -> str:
    """The words of `text` a reader of the rendered note sees: a link's text and not its
    address (a bare URL shows itself and stays), and no comment (``<!-- -->``, ``%%…%%``),
    HTML tag, embed (``![[file]]``) or image path (an image shows its alt text). A
    question's word found only in what this leaves out is not in the note as its owner
    reads it (a key word inside a link's target)."""
    return _linked(_UNSEEN.sub(lambda m: m.group(1) or " ", text))


def _escaped(text: str, pos: int) -> bool:
    """Whether the char at `pos` is escaped by an odd run of backslashes before it."""
    run = 0
    while pos - run > 0 and text[pos - run - 1] == "\\":
        run += 1
    return run % 2 == 1


def _obsidian(text: str, pieces: tuple[Span, ...], code: list[Span]) -> list[Elision]:
    """Footnote references and wikilink brackets (and a link's target before its alias),
    found line by line outside code: neither spans a line."""
    out: list[Elision] = []
    for k, (a, b) in enumerate(pieces):
        if "[" not in text[a:b]:
            continue
        for m in _FOOTNOTE.finditer(text, a, b):
            s, e = m.span()
            if _escaped(text, s) or inside(code, s):
                continue
            if k == 0 and s == a and text.startswith(":", e):  # a footnote's own text: "[^1]: …"
                e += 1 + len(text[e + 1 : b]) - len(text[e + 1 : b].lstrip(" \t"))
            out.append((s, e, ""))
        for m in _WIKILINK.finditer(text, a, b):
            s, e = m.span()
            if (s > a and text[s - 1] == "!") or _escaped(text, s) or inside(code, s):
                continue  # an embed shows the file, not text
            if m.group(2):  # [[target|alias]]: the alias is what is shown
                out.extend([(s, m.end(2), ""), (e - 2, e, "")])
            else:
                out.extend([(s, s + 2, ""), (e - 2, e, "")])
    return out


def _markup(marks: Marks) -> list[Elision]:
    """Inline links, autolinks and HTML tags, as markdown-it read them."""
    out: list[Elision] = []
    for start, text_end, end in marks.links:
        out.extend([(start, start + 1, ""), (text_end, end, "")])
    for start, end in marks.autolinks:
        out.extend([(start, start + 1, ""), (end - 1, end, "")])
    for start, end, name in marks.tags:
        if name in _RUN:
            out.append((start, end, ""))
        elif name in _BREAK:
            out.append((start, end, " "))
    return out


def elisions(text: str, pieces: tuple[Span, ...], marks: Marks) -> tuple[Elision, ...]:
    """The markup of a block (`pieces` of the note's `text`, `marks` its `Block.marks()`)
    that the editor does not show as text: sorted and disjoint. What markdown-it read as a
    link wins over a wikilink or footnote shape overlapping it (``[[a]](url)`` is a link)."""
    markup = _markup(marks)
    taken = merged([(a, b) for a, b, _ in markup])
    found = markup + [e for e in _obsidian(text, pieces, merged(list(marks.code))) if not overlaps(taken, e[0], e[1])]
    out: list[Elision] = []
    for e in sorted(found):
        if not out or e[0] >= out[-1][1]:
            out.append(e)
    return tuple(out)
