"""Markdown to sanitised HTML for the owner's console.

Notes are untrusted text (guests propose them, hand edits come from anywhere),
so the renderer never passes markup through: raw HTML in a note is read as
CommonMark reads it (the one reading, `cortex.notes.structure.parser`) but rendered as
escaped text, a comment marked as hidden in editors (so a proposal cannot hide text
from the owner's review), and a link or image may only point at http,
https, mailto or a relative address. Nothing else reaches an `href` or `src`,
so there is no script, no event handler and no `javascript:` link to sanitise
after the fact. We render safely rather than clean up afterwards: no separate
sanitiser dependency, and nothing to get wrong in a tag allow-list.

Retired text is shown as retired, as the verifier reads it (`cortex.notes.blocks`): see
`render_note`. The marks it adds are fixed strings, never text of the note.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Protocol
from urllib.parse import quote, unquote

from markdown_it import MarkdownIt
from markdown_it.common.utils import escapeHtml
from markdown_it.renderer import RendererHTML
from markdown_it.rules_inline import StateInline
from markdown_it.token import Token
from markdown_it.utils import EnvType, OptionsDict

from cortex.notes.blocks import Block, blocks_cached
from cortex.notes.note import WIKILINK, split_frontmatter
from cortex.notes.redact import redact
from cortex.notes.structure import Span, parser

__all__ = ["ALLOWED_SCHEMES", "NoteLinks", "link_allowed", "render_markdown", "render_note"]

ALLOWED_SCHEMES = frozenset({"http", "https", "mailto"})
# A URL scheme as browsers read one: a letter, then letters, digits, + . - up to ':'.
_SCHEME = re.compile(r"^([a-z][a-z0-9+.\-]*):")
# Browsers drop these before reading a scheme ("java\tscript:" is javascript:).
_IGNORED = re.compile(r"[\x00-\x20\x7f]")


def link_allowed(url: str) -> bool:
    """True for http, https, mailto and scheme-less (relative) URLs; False for anything else."""
    cleaned = _IGNORED.sub("", url).lower()
    m = _SCHEME.match(cleaned)
    if m is None:
        # No scheme: relative ("notes/x.md", "../a.md", "#h", "?q", "//host/x").
        # A colon before the first '/', '?' or '#' would still be read as a scheme.
        head = re.split(r"[/?#]", cleaned, maxsplit=1)[0]
        return ":" not in head
    return m.group(1) in ALLOWED_SCHEMES


def _escaped_html(renderer: RendererHTML, tokens: Sequence[Token], idx: int, options: OptionsDict, env: EnvType) -> str:
    content = tokens[idx].content
    shown = escapeHtml(content)
    if content.lstrip().startswith("<!--"):
        return f'<span class="md-hidden" title="hidden in editors">{shown}</span>'
    if tokens[idx].type == "html_inline":
        return f'<code class="md-html">{shown}</code>'
    return f"<pre{renderer.renderAttrs(tokens[idx])}>{shown}</pre>"


_LABEL = "cortex_retired"  # a token of the reason a section is retired, shown above it


def _retired_label(
    renderer: RendererHTML, tokens: Sequence[Token], idx: int, options: OptionsDict, env: EnvType
) -> str:
    return f'<p class="md-retired-why">Retired: {escapeHtml(tokens[idx].content)}</p>\n'


class NoteLinks(Protocol):
    """What the renderer asks of the brain to make links to notes clickable (`Pages.note`)."""

    def wikilink(self, target: str) -> str | None:
        """The note `[[target]]` points to from the note shown, or None."""

    def markdown_link(self, href: str) -> str | None:
        """The note a relative Markdown link's address names (decoded, no #fragment), or None."""


_WIKI = "cortex_wikilink"
_NOTE_PAGE = "/console/note/"
_PRIVATE_MARKS = re.compile("[\ue000-\ue003]")


def _wikilink_rule(state: StateInline, silent: bool) -> bool:
    """`[[target#heading|alias]]` and `![[embed]]` as one token (code spans are read first, so none in code)."""
    m = WIKILINK.match(state.src, state.pos)
    if m is None or not m.group(2).strip():
        return False
    if not silent:
        tok = state.push(_WIKI, "", 0)
        tok.meta = {"target": m.group(2).strip(), "heading": (m.group(3) or "")[1:].strip(), "alias": m.group(4)}
        tok.content = m.group(0)
    state.pos = m.end()
    return True


def _wikilink_html(
    renderer: RendererHTML, tokens: Sequence[Token], idx: int, options: OptionsDict, env: EnvType
) -> str:
    """A link to the note a wikilink resolves to, a marked span for one that names no note,
    or the text as written while links cannot be resolved yet. Shown as Obsidian shows it:
    the alias, else the target (and heading)."""
    meta = tokens[idx].meta
    heading = f" > {meta['heading']}" if meta["heading"] else ""
    label = escapeHtml((meta["alias"] or "").strip() or meta["target"] + heading)
    links: NoteLinks | None = env.get("links")
    if links is None:
        return escapeHtml(tokens[idx].content)
    target = links.wikilink(_PRIVATE_MARKS.sub("", meta["target"]))
    if target is None:
        why = escapeHtml(f"no note named {_PRIVATE_MARKS.sub('', meta['target'])}")
        return f'<span class="wikilink missing" title="{why}">{label}</span>'
    return f'<a class="wikilink" href="{escapeHtml(_NOTE_PAGE + quote(target))}">{label}</a>'


def _note_href(href: str, links: NoteLinks) -> str | None:
    """The console page of the note a relative Markdown link names (`notes/x.md`, `../x.md#h`), or None."""
    if not href or href.startswith(("/", "#", "?")) or _SCHEME.match(href.lower()):
        return None
    path = unquote(re.split(r"[?#]", href, maxsplit=1)[0])
    target = links.markdown_link(path) if path else None
    return None if target is None else _NOTE_PAGE + quote(target)


def _parser() -> MarkdownIt:
    md = parser()
    md.validateLink = link_allowed  # type: ignore[method-assign]  # replaces the default deny-list
    md.add_render_rule("html_block", _escaped_html)
    md.add_render_rule("html_inline", _escaped_html)
    md.add_render_rule(_LABEL, _retired_label)
    md.inline.ruler.before("link", _WIKI, _wikilink_rule)
    md.add_render_rule(_WIKI, _wikilink_html)

    def link_open(renderer: RendererHTML, tokens: Sequence[Token], idx: int, options: OptionsDict, env: EnvType) -> str:
        links: NoteLinks | None = env.get("links")
        page = _note_href(str(tokens[idx].attrGet("href") or ""), links) if links is not None else None
        if page is not None:  # a link to another note opens its page here
            tokens[idx].attrSet("href", page)
            tokens[idx].attrJoin("class", "notelink")
            return renderer.renderToken(tokens, idx, options, env)
        # Notes may link anywhere on the web: never pass the console's context along.
        tokens[idx].attrSet("rel", "nofollow noopener noreferrer")
        return renderer.renderToken(tokens, idx, options, env)

    md.add_render_rule("link_open", link_open)
    return md


_MD = _parser()

# Retired and hidden text inside a paragraph, heading or table row is marked by private-use
# chars put into the source at its ends (never across a line or a table cell, so each pair
# sits in one run of inline text), which become spans once rendered. A note's own such chars
# are replaced first. The spans carry no quoted attribute: one that lands inside an
# attribute value (a multi-line link title) stays inert text there.
_OPEN = {"struck": "\ue000", "old": "\ue001", "hidden": "\ue002"}
_CLOSE = "\ue003"
_SPANS = {
    "\ue000": "<span class=md-struck>",
    "\ue001": "<span class=md-old>",
    "\ue002": "<span class=md-hidden>",
    "\ue003": "</span>",
}
_OWN = {ord(c): "\ufffd" for c in _SPANS}
_INLINE_KINDS = frozenset({"paragraph", "list item", "heading", "banner", "table row"})
_BLOCK_TOKENS = frozenset({"paragraph_open", "heading_open", "tr_open", "fence", "code_block", "html_block"})
_UNESCAPED_PIPE = re.compile(r"(?<!\\)\|")


def _runs(text: str, block: Block) -> list[Span]:
    """The runs of inline text of a block a mark may cover without crossing a line or a cell."""
    if block.kind != "table row":
        return list(block.pieces)
    out: list[Span] = []
    for a, b in block.pieces:
        cuts = [a, *(m.start() for m in _UNESCAPED_PIPE.finditer(text, a, b)), b]
        for x, y in zip(cuts, cuts[1:], strict=False):
            # A mark before a cell's pipe would make another cell of the row.
            out.append((x + 1 if text.startswith("|", x) else x, y))
    return out


def _inline_marks(text: str, blocks: tuple[Block, ...]) -> list[tuple[int, str]]:
    """Where to put the marks of struck text, old wording and hidden text (not comments,
    which render as hidden already): (offset in `text`, mark), in order."""
    at: list[tuple[int, int, str]] = []
    for block in blocks:
        if block.kind not in _INLINE_KINDS:
            continue
        marks = block.marks()
        spans = [("struck", s) for s in marks.struck]
        spans += [("hidden", s) for s in marks.hidden if not text.startswith("<!--", s[0])]
        spans += [("old", (c.start, c.end)) for c in block.corrections]
        for kind, (a, b) in spans:
            for x, y in _runs(text, block):
                lo, hi = max(a, x), min(b, y)
                if lo < hi and text[lo:hi].strip():
                    at.append((lo, 1, _OPEN[kind]))
                    at.append((hi, 0, _CLOSE))
    return [(pos, mark) for pos, _, mark in sorted(at)]


def _with_marks(text: str, marks: list[tuple[int, str]]) -> str:
    out, last = [], 0
    for pos, mark in marks:
        out.append(text[last:pos])
        out.append(mark)
        last = pos
    out.append(text[last:])
    return "".join(out)


def _retire_blocks(tokens: list[Token], blocks: tuple[Block, ...], first_line: int) -> list[Token]:
    """The tokens with each block of a retired section dimmed (its reason as its title), the
    reason shown as a line above the first block of each run, and each HTML or code block
    that struck or hidden text covers whole marked so."""
    reason_at: dict[int, str] = {}
    whole_at: dict[int, str] = {}
    for block in blocks:
        first = block.line - first_line
        lines = range(first, first + block.text.count("\n") + 1)
        if block.retired:
            reason_at.update(dict.fromkeys(lines, block.retired))
        if block.kind in ("code", "html"):
            marks = block.marks()
            for kind, spans in (("md-struck", marks.struck), ("md-hidden", marks.hidden)):
                if any(a <= block.start and b >= block.end for a, b in spans):
                    whole_at.update(dict.fromkeys(lines, kind))
    out: list[Token] = []
    shown: str | None = None
    for tok in tokens:
        line = tok.map[0] if tok.map and tok.type in _BLOCK_TOKENS else None
        reason = reason_at.get(line) if line is not None else None
        if reason:
            # A tight list renders no <p>: its item carries the mark.
            target = out[-1] if tok.hidden and out and out[-1].type == "list_item_open" else tok
            target.attrJoin("class", "md-retired")
            target.attrSet("title", f"retired: {reason}")
            if reason != shown and tok.type != "tr_open":
                label = Token(_LABEL, "", 0)
                label.content = reason
                out.append(label)
                shown = reason
        elif line is not None and tok.type in ("paragraph_open", "heading_open"):
            shown = None  # live text between two runs: the next run says why again
        if line is not None and line in whole_at:
            tok.attrJoin("class", whole_at[line])
        out.append(tok)
    return out


def _without_title(tokens: list[Token], blocks: tuple[Block, ...], title: str | None) -> list[Token]:
    """The tokens less a leading level-1 heading that is the title: the page's own heading
    already shows it."""
    if title is None or not blocks or blocks[0].kind != "heading" or blocks[0].heading != title:
        return tokens
    if len(tokens) >= 3 and tokens[0].type == "heading_open" and tokens[0].tag == "h1":
        return tokens[3:]
    return tokens


def _render(text: str, body_offset: int, title: str | None, links: NoteLinks | None = None) -> str:
    """`text` masked; its body from `body_offset`."""
    blocks = blocks_cached(text, body_offset)
    body = text[body_offset:]
    marks = [(pos - body_offset, mark) for pos, mark in _inline_marks(text, blocks)]
    env: dict = {"links": links} if links is not None else {}
    tokens = _MD.parse(_with_marks(body, marks), env)
    tokens = _retire_blocks(_without_title(tokens, blocks, title), blocks, text[:body_offset].count("\n") + 1)
    html: str = _MD.renderer.render(tokens, _MD.options, env)
    return html.translate({ord(c): s for c, s in _SPANS.items()}) if marks else html


def render_markdown(text: str) -> str:
    """Sanitised HTML for a note body, with credential-shaped strings redacted first, and
    its retired and hidden text marked as such (`render_note`)."""
    return _render(redact(text.translate(_OWN)), 0, None)


# What one page renders at most: Markdown's link syntax is what costs (a 400 KB note of
# brackets took 9.7 s, 150,000 links 12 s and 10 MB of HTML); 5,000 brackets take about
# 0.1-0.4 s. Past either bound the page renders the lines before it and says what it left
# out; the whole note is still in its source view.
RENDER_CHARS = 256 * 1024
RENDER_BRACKETS = 5000


def renderable(text: str) -> tuple[str, str | None]:
    """(the part of `text` a page renders, a line saying what it left out or None): whole
    lines up to RENDER_CHARS characters and RENDER_BRACKETS `[`s."""
    cut = len(text) if len(text) <= RENDER_CHARS else RENDER_CHARS
    at = -1
    for _ in range(RENDER_BRACKETS):
        at = text.find("[", at + 1, cut)
        if at < 0:
            break
    else:
        cut = min(cut, at)
    if cut >= len(text):
        return text, None
    line_end = text.rfind("\n", 0, cut)
    shown = text[: line_end + 1] if line_end > 0 else text[:cut]
    left = len(text) - len(shown)
    return shown, (
        f"Rendered the first {len(shown):,} of {len(text):,} characters (a page renders at most "
        f"{RENDER_CHARS // 1024} KB and {RENDER_BRACKETS:,} link brackets); the other {left:,} are in the source below."
    )


def render_note(text: str, title: str | None = None, links: NoteLinks | None = None) -> str:
    """Sanitised HTML for a note's body (`text` is the whole note, frontmatter and all),
    without its leading level-1 heading when that is `title`. Retired text is shown as
    retired: a section under a banner or a retiring heading dimmed, with the reason above it;
    struck text (``~~…~~``, ``<del>``, …) and the old wording of a ``(was: …)`` struck through
    and dimmed; hidden text (``%%…%%``, ``<span hidden>``, …) marked hidden, as comments are.
    With `links`, each ``[[wikilink]]`` and relative Markdown link to a note opens that
    note's page (a wikilink naming no note is marked missing); without, wikilinks stay text."""
    masked = redact(text.translate(_OWN))
    return _render(masked, split_frontmatter(masked)[1], title, links)
