"""One reading of Markdown (cortex.notes.structure): what Cortex sees is what CommonMark sees.

A differential property test: on generated Markdown that mixes fences of both kinds and
lengths, indentation, inline backticks, setext and ATX headings, nested lists, block
quotes, HTML comments and strikethrough, every code range, heading and block that
Cortex derives equals what an independent walk of markdown-it's own tokens gives.
"""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from markdown_it import MarkdownIt

from cortex.notes.blocks import blocks_cached, blocks_of
from cortex.notes.note import code_spans, headings_of, parse_note, sections
from cortex.notes.structure import line_spans, parsed, simple_leaves, structure


def reference() -> MarkdownIt:
    """markdown-it as the spec reads it, parsed in full (inline included), set up apart."""
    md = MarkdownIt("commonmark", {"html": True})
    md.enable(["table", "strikethrough"])
    return md


REF = reference()

_WORD = st.sampled_from(["alpha", "beta", "gamma", "Delta", "SUPERSEDED", "x", "42"])
_LINE = st.one_of(
    st.sampled_from(
        [
            "```",
            "````",
            "~~~",
            "~~~~",
            "  ```",
            "    ```",
            "```python",
            "~~~ md",
            "`inline` text",
            "text with ``double `tick`` code",
            "a ``` b",
            "unclosed ` tick",
            "# Head",
            "## Head ##",
            "###### six",
            "#nospace",
            "    # indented",
            "===",
            "---",
            "- - -",
            "- item",
            "  - nested",
            "    - deeper",
            "      - deepest",
            "1. one",
            "2) two",
            "* star",
            "+ plus",
            "> quote",
            "> > nested quote",
            ">",
            "> ```",
            "  > **SUPERSEDED** banner",
            "- > quoted item",
            "<!-- a comment -->",
            "<!--",
            "-->",
            "text <!-- hidden --> more",
            "<div>",
            "</div>",
            "~~struck~~ text",
            "a ~~b",
            "c~~ d",
            "~~~a~~~ odd tildes",
            "",
            "",
            "",
            "plain words here",
            "\tTabbed line",
            "| a | b |",
            "|---|---|",
            "a | b",
            "%% obsidian comment %%",
        ]
    ),
    st.lists(_WORD, min_size=1, max_size=4).map(" ".join),
)
MARKDOWN = st.tuples(st.lists(_LINE, max_size=25), st.sampled_from(["\n", "\r\n"])).map(
    lambda t: t[1].join(t[0]) + (t[1] if t[0] else "")
)


def _walk(tokens):
    for tok in tokens:
        yield tok
        if tok.children:
            yield from _walk(tok.children)


def _line_of(body: str, offset: int) -> int:
    return sum(1 for a, _ in line_spans(body) if a <= offset) - 1


@pytest.mark.slow
@settings(max_examples=400, deadline=None)
@given(MARKDOWN)
def test_cortex_sees_what_markdown_it_sees(body: str) -> None:
    tokens = REF.parse(body)
    st_ = structure(body)

    # Headings: level, text and line.
    want_heads = [
        (int(t.tag[1]), tokens[i + 1].content.strip(), t.map[0])
        for i, t in enumerate(tokens)
        if t.type == "heading_open"
    ]
    assert [(h.level, h.text, h.first) for h in st_.headings] == want_heads
    assert headings_of(body) == [(lvl, text) for lvl, text, _ in want_heads if text]

    # Code blocks (fenced and indented): their lines.
    want_code = [tuple(t.map) for t in tokens if t.type in ("fence", "code_block")]
    assert [(_line_of(body, a), _line_of(body, b) + 1) for a, b in st_.code_blocks] == want_code

    # Every leaf block, in order, with its lines.
    leaf_types = ("paragraph_open", "heading_open", "fence", "code_block", "html_block", "tr_open")
    want_leaves = [tuple(t.map) for t in tokens if t.type in leaf_types]
    got = [(b.line - 1, b.line - 1 + b.text.count("\n") + 1) for b in blocks_cached(body, 0)]
    assert got == want_leaves

    # Inline code spans: as many, and one-line ones with the same content.
    inline_code = [t.content for t in _walk(tokens) if t.type == "code_inline"]
    block_spans = set(st_.code_blocks)
    spans = [s for s in code_spans(body) if s not in block_spans]
    assert len(spans) == len(inline_code)
    for (a, b), content in zip(spans, inline_code, strict=True):
        raw = body[a:b]
        run = len(raw) - len(raw.lstrip("`"))
        assert raw.startswith("`" * run) and raw.endswith("`" * run)
        if "\n" not in raw and "\r" not in raw:
            inner = raw[run:-run]
            if inner.startswith(" ") and inner.endswith(" ") and inner.strip(" "):
                inner = inner[1:-1]
            assert inner == content

    # Struck text: as many spans as markdown-it's <s>, each between ~~ markers.
    struck = [s for leaf in st_.leaves for s in leaf.marks().struck]
    assert len(struck) == sum(1 for t in _walk(tokens) if t.type == "s_open")
    assert all(body[a:b].startswith("~~") and body[a:b].endswith("~~") for a, b in struck)

    # Inline HTML comments: the same, as written.
    comments = [t.content for t in _walk(tokens) if t.type == "html_inline" and t.content.startswith("<!--")]
    hidden = [s for leaf in st_.leaves if leaf.kind != "html" for s in leaf.marks().hidden]
    assert [body[a:b] for a, b in hidden] == comments

    # Sections start at headings and nest by level.
    assert [start for _, _, start, _ in sections(body, 0)] == [h.start for h in st_.headings]


def test_a_fence_line_inside_a_longer_fence_is_code_not_a_closer() -> None:
    body = "````\n```\n> **SUPERSEDED** in code\n````\n\n> **SUPERSEDED** real banner\n\nOld claim here.\n"
    note = parse_note("n.md", body)
    kinds = [(b.kind, b.retired is not None) for b in blocks_of(note)]
    assert kinds == [("code", False), ("banner", True), ("paragraph", True)]


def test_setext_headings_and_their_retiring_words() -> None:
    body = "Old plan (DEPRECATED)\n=====\n\nUnder it.\n\nNew plan\n========\n\nLive.\n"
    note = parse_note("n.md", body)
    assert note.headings == ("Old plan (DEPRECATED)", "New plan")
    retired = {b.text: b.retired for b in blocks_of(note)}
    assert retired["Under it."] and retired["Live."] is None


def test_a_banner_inside_a_nested_list_item_retires_its_section() -> None:
    body = "## Plan\n\n- item\n  - nested\n    > **SUPERSEDED** by the new plan\n\nOld claim.\n\n## Next\n\nLive.\n"
    blocks = {b.text.strip(): b for b in blocks_of(parse_note("n.md", body))}
    assert blocks["> **SUPERSEDED** by the new plan"].kind == "banner"
    assert blocks["Old claim."].retired and blocks["Live."].retired is None


def test_inline_code_on_a_prose_line_is_no_fence() -> None:
    body = "Run ```make``` first.\n\n## Real heading\n\nText.\n"
    assert headings_of(body) == [(2, "Real heading")]
    assert [body[a:b] for a, b in code_spans(body)] == ["```make```"]


def test_hidden_text_covers_html_and_obsidian_comments() -> None:
    body = (
        "a <!-- one --> b\n\n<!--\ntwo\n-->\n\n%% three\n\nstill hidden %%\n\n`%%` in code, then %% open to the end\n"
    )
    hidden = [body[a:b] for a, b in structure(body).hidden()]
    assert hidden[0] == "<!-- one -->"
    assert hidden[1] == "<!--\ntwo\n-->"
    assert hidden[2] == "%% three\n\nstill hidden %%"
    assert hidden[3].startswith("%% open") and hidden[3].endswith("end\n")
    assert len(hidden) == 4


def test_a_table_cell_with_an_escaped_pipe_stays_in_its_row() -> None:
    # markdown-it hands the cell's `\|` unescaped; the row still starts at its first cell.
    body = "| a | b |\n|---|---|\n| [[Porto\\|the trip]] | `x\\|y` | 22:10 |\n"
    row = structure(body).leaves[1]
    assert [body[a:b] for a, b in row.pieces] == ["| [[Porto\\|the trip]] | `x\\|y` | 22:10 |"]
    assert [body[a:b] for a, b in row.marks().code] == ["`x\\|y`"]


def test_crlf_and_lone_cr_lines_map_to_the_right_offsets() -> None:
    body = "# Title\r\n\r\npara ~~x~~ y\r\n"
    (head, para) = structure(body).leaves
    assert body[head.pieces[0][0] : head.pieces[0][1]] == "Title"
    (struck,) = para.marks().struck
    assert body[struck[0] : struck[1]] == "~~x~~"
    assert re.fullmatch(r"[\r\n]*", body[para.end :])


_SIMPLE = st.builds(
    lambda prefix, rest: prefix + rest,
    st.sampled_from(
        ["", "", "  ", "\t", "# ", "## ", "###### ", "####### ", "#", "#tag ", "**User:** ", "_x_ ", "*", "**"]
        + ["- ", "- ", "* ", "+ ", "- **x** ", "-", "- - ", "* * *", "1. ", "- #tag ", "- # h", "-  "]
    ),
    st.text(st.sampled_from("ab Z#*_\t1.-é"), max_size=12),
)


@pytest.mark.slow
@settings(max_examples=500, deadline=None)
@given(st.lists(_SIMPLE, max_size=12), st.sampled_from(["\n", "\r\n"]))
def test_the_shortcut_for_plain_notes_reads_as_the_parser_does(lines: list[str], eol: str) -> None:
    """Paragraphs, ATX headings and flat bullet lists are read without the parser; where
    the shortcut answers, it answers exactly as markdown-it does."""
    body = eol.join(lines)
    spans = line_spans(body)
    simple = simple_leaves(body, spans)
    if simple is not None:
        assert tuple(simple) == parsed(body, spans).leaves


# cortex.notes.structure reaches into markdown-it's private `ruler.__rules__` to wrap five
# inline rules. These fail on a markdown-it that renames the list, its entries' `name` or
# `fn`, a wrapped rule, or the state the wrappers read, and on a version outside the pin.
WRAPPED = ("backticks", "html_inline", "strikethrough", "link", "autolink")


def test_markdown_it_is_a_version_the_pin_allows() -> None:
    import tomllib
    from importlib.metadata import version
    from pathlib import Path

    from packaging.requirements import Requirement

    project = tomllib.loads((Path(__file__).parents[2] / "pyproject.toml").read_text())
    (pin,) = [Requirement(d) for d in project["project"]["dependencies"] if d.startswith("markdown-it-py")]
    assert any(s.operator == "<" for s in pin.specifier), f"no upper bound in {pin}"
    assert version("markdown-it-py") in pin.specifier, f"markdown-it-py {version('markdown-it-py')} is outside {pin}"


def test_the_private_rule_list_holds_the_wrapped_rules() -> None:
    from cortex.notes import structure as s

    rules = {r.name: r for r in s._MD.inline.ruler.__rules__}
    for name in WRAPPED:
        assert name in rules, f"markdown-it has no inline rule {name!r}"
        assert rules[name].fn.__qualname__.startswith("_recording."), f"{name} is not wrapped"


def test_each_wrapped_rule_records_its_mark() -> None:
    leaf = structure("a `code` b <!-- c --> d ~~e~~ f [g](h) i <http://j.example> k <b>l</b>\n").leaves[0]
    marks = leaf.marks()
    body = "a `code` b <!-- c --> d ~~e~~ f [g](h) i <http://j.example> k <b>l</b>"
    assert [body[a:b] for a, b in marks.code] == ["`code`"]
    assert [body[a:b] for a, b in marks.hidden] == ["<!-- c -->"]
    assert [body[a:b] for a, b in marks.struck] == ["~~e~~"]
    assert [(body[a:t], body[a:b]) for a, t, b in marks.links] == [("[g", "[g](h)")]
    assert [body[a:b] for a, b in marks.autolinks] == ["<http://j.example>"]
    assert [(body[a:b], name) for a, b, name in marks.tags] == [("<b>", "b"), ("</b>", "b")]
