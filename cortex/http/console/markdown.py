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
"""

from __future__ import annotations

import re

from markdown_it import MarkdownIt
from markdown_it.common.utils import escapeHtml

from cortex.notes.redact import redact
from cortex.notes.structure import parser

__all__ = ["ALLOWED_SCHEMES", "link_allowed", "render_markdown"]

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


def _escaped_html(renderer, tokens, idx, options, env) -> str:
    content = tokens[idx].content
    shown = escapeHtml(content)
    if content.lstrip().startswith("<!--"):
        return f'<span class="md-hidden" title="hidden in editors">{shown}</span>'
    return f'<code class="md-html">{shown}</code>' if tokens[idx].type == "html_inline" else f"<pre>{shown}</pre>"


def _parser() -> MarkdownIt:
    md = parser()
    md.validateLink = link_allowed  # type: ignore[method-assign]  # replaces the default deny-list
    md.add_render_rule("html_block", _escaped_html)
    md.add_render_rule("html_inline", _escaped_html)

    def link_open(renderer, tokens, idx, options, env):
        # Notes may link anywhere on the web: never pass the console's context along.
        tokens[idx].attrSet("rel", "nofollow noopener noreferrer")
        return renderer.renderToken(tokens, idx, options, env)

    md.add_render_rule("link_open", link_open)
    return md


_MD = _parser()


def render_markdown(text: str) -> str:
    """Sanitised HTML for a note body, with credential-shaped strings redacted first."""
    return _MD.render(redact(text))
