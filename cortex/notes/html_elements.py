"""HTML in a note that strikes or hides its text, read as a browser reads it.

Pure functions, no I/O. CommonMark passes HTML through, and the owner's editor renders it:
text inside ``<del>``, ``<s>`` or ``<strike>`` (or styled ``text-decoration: line-through``)
is shown struck through, so it is retired text; text inside ``<script>``, ``<style>``,
``<template>``, an element with the ``hidden`` attribute or one styled ``display: none``
or ``visibility: hidden`` is never shown, so it is hidden text. `cortex.notes.structure`
finds the tags (inline HTML tokens, HTML blocks) and feeds them to `Elements`, which
pairs them the way a browser does.

Tags are read by Python's `html.parser` (tag and attribute names in any case, attribute
values with character references decoded, ``<script>`` and ``<style>`` content as raw
text). The pairing is the part of the HTML tree builder that decides where an element
ends: a close tag ends the innermost open element of its name and every element opened
inside it; a close tag with no such element open is ignored; ``<del/>`` opens a ``del``
(HTML ignores the slash on elements that are not void); an element never closed ends
with its container. Other CSS that makes text invisible (a zero font size, a colour, an
opacity) is not recognised.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from html.parser import HTMLParser

__all__ = ["HIDDEN", "RUN_ON", "STRUCK", "Elements", "Tag", "effect", "tags"]

STRUCK = "struck"
HIDDEN = "hidden"

_STRIKING = frozenset({"del", "s", "strike"})
_HIDING = frozenset({"script", "style", "template"})
# Void elements have no content and no close tag.
_VOID = frozenset("area base br col embed hr img input keygen link meta param source track wbr".split())
# One CSS declaration of a `style` attribute (`;` separates them).
_HIDING_CSS = re.compile(
    r"^\s*(?:display\s*:\s*none|visibility\s*:\s*(?:hidden|collapse))\s*(?:!\s*important\s*)?$", re.I
)
_STRIKING_CSS = re.compile(r"^\s*text-decoration(?:-line)?\s*:[^;]*\bline-through\b", re.IGNORECASE)


def effect(name: str, attrs: list[tuple[str, str | None]]) -> str | None:
    """What an element opened by `<name attrs>` does to its content: HIDDEN, STRUCK or None.
    Hiding wins: struck text that is not shown is not shown."""
    css = [d for k, v in attrs if k == "style" and v for d in v.split(";")]
    if name in _HIDING or any(k == "hidden" for k, _ in attrs) or any(_HIDING_CSS.match(d) for d in css):
        return HIDDEN
    if name in _STRIKING or any(_STRIKING_CSS.match(d) for d in css):
        return STRUCK
    return None


@dataclass(frozen=True)
class Tag:
    """A start or end tag at [start, end) of the text it was read from; `name` in lower
    case; `effect` (an opening tag's, see `effect`) None for an end tag."""

    start: int
    end: int
    name: str
    closing: bool
    effect: str | None = None


class _Reader(HTMLParser):
    def __init__(self, text: str):
        super().__init__(convert_charrefs=False)
        self.text = text
        self.line_starts = [0] + [m.end() for m in re.finditer("\n", text)]
        self.found: list[Tag] = []

    def _at(self) -> int:
        line, col = self.getpos()
        return self.line_starts[line - 1] + col

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        start = self._at()
        raw = self.get_starttag_text() or ""
        if tag not in _VOID:
            self.found.append(Tag(start, start + len(raw), tag, False, effect(tag, attrs)))

    handle_startendtag = handle_starttag  # `<del/>` opens a del, as in a browser

    def handle_endtag(self, tag: str) -> None:
        start = self._at()
        end = self.text.find(">", start)
        self.found.append(Tag(start, len(self.text) if end < 0 else end + 1, tag, True))


def tags(text: str) -> list[Tag]:
    """The start and end tags of HTML `text` in order (comments, declarations and the raw
    text of ``<script>`` and ``<style>`` hold none), void elements left out."""
    reader = _Reader(text)
    reader.feed(text)
    reader.close()
    return reader.found


@dataclass
class _Open:
    name: str
    effect: str | None
    start: int
    depth: int


# The HTML tree builder's element classes that decide where an end tag reaches (WHATWG
# HTML, "the stack of open elements"): an end tag of another name cannot reach past a
# special element, and no end tag reaches past a scope boundary.
_SPECIAL = frozenset(
    "address applet article aside basefont bgsound blockquote body button caption center colgroup dd details "
    "dialog dir div dl dt fieldset figcaption figure footer form frame frameset h1 h2 h3 h4 h5 h6 head header "
    "hgroup html iframe li listing main marquee menu nav noembed noframes noscript object ol p plaintext pre "
    "script search section select style summary table tbody td template textarea tfoot th thead title tr ul "
    "xmp".split()
)
_FORMATTING = frozenset("a b big code em font i nobr s small strike strong tt u".split())
_SCOPE = frozenset("applet caption html marquee object table td th template".split())
# Raw text: a browser reads everything up to the element's own end tag as its text.
_RAW = frozenset({"script", "style"})
# Open until their own end tag, whatever Markdown block or container holds them: raw
# text, a template, and the striking formatting elements, which a browser opens again in
# every paragraph after the one that left them open.
RUN_ON = _RAW | {"template", "s", "strike"}


class Elements:
    """The elements open at a point of a note, and the spans that struck or hidden ones
    covered once closed: (effect, start, end), from the start of the opening tag to the end
    of the closing one. `depth` is the Markdown container (block quote, list item) a tag
    sits in: an end tag reaches only elements of its own container, and `end_container`
    ends what was opened inside one, but for the `RUN_ON` elements, which a browser keeps
    open to their own end tag.

    Where this stops short of a browser's tree builder (an implied end tag, ``</div>``
    reaching out of a container), an element stays open longer: more text is read as
    struck or hidden, never less."""

    def __init__(self) -> None:
        self.open: list[_Open] = []
        self.spans: list[tuple[str, int, int]] = []

    def feed(self, tag: Tag, start: int, end: int, depth: int = 0) -> None:
        """Take `tag`, found at [start, end) of the note."""
        if self.open and self.open[-1].name in _RAW and not (tag.closing and tag.name == self.open[-1].name):
            return  # raw text: no tag inside it is one
        if not tag.closing:
            self.open.append(_Open(tag.name, tag.effect, start, depth))
            return
        reaches_special = tag.name in _SPECIAL or tag.name in _FORMATTING
        for k in range(len(self.open) - 1, -1, -1):
            el = self.open[k]
            if el.name == tag.name and el.depth == depth:
                # What it held ends with it, but for `RUN_ON` elements (a browser opens
                # an `s` again after it): only their own end tag ends them.
                above = self.open[k + 1 :]
                self._end([el, *(a for a in above if a.name not in RUN_ON)], end)
                self.open = self.open[:k] + [a for a in above if a.name in RUN_ON]
                return
            if el.depth != depth or el.name in _SCOPE or (el.name in _SPECIAL and not reaches_special):
                return  # an end tag that reaches nothing is ignored

    def end_container(self, depth: int, end: int) -> None:
        """A container at `depth` ends at `end`: so does every element opened in it but
        the `RUN_ON` ones, which stay open (as the container's parent's)."""
        ending = [el.depth >= depth and el.name not in RUN_ON for el in self.open]
        self._end([el for el, e in zip(self.open, ending, strict=True) if e], end)
        self.open = [el for el, e in zip(self.open, ending, strict=True) if not e]
        for el in self.open:
            el.depth = min(el.depth, max(depth - 1, 0))

    def end(self, end: int) -> None:
        """The note (or the text read) ends at `end`: so does every element still open."""
        self._end(self.open, end)
        self.open = []

    def _end(self, elements: list[_Open], end: int) -> None:
        self.spans.extend((el.effect, el.start, end) for el in elements if el.effect is not None)

    def covered(self, kind: str) -> list[tuple[int, int]]:
        """The spans of one effect, sorted."""
        return sorted((a, b) for e, a, b in self.spans if e == kind)
