"""A Markdown link's url, written (`links.url_path`) and read (`note.destination`,
`note.markdown_links`), without I/O: what a move writes reads back as exactly the file's name,
here and in CommonMark (markdown-it's own reading is the oracle); `%20` is a space only where
CommonMark and a browser say so; and which names a [[wikilink]] cannot hold (issue 62)."""

from __future__ import annotations

import time
import unicodedata
import urllib.parse

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from markdown_it import MarkdownIt

from cortex.notes.links import url_path, url_to, wikilink_unsafe
from cortex.notes.note import destination, markdown_links, percent_decoded

AWKWARD = [
    "a#b (c).md",
    "x%20y.md",
    "x%2520y.md",
    "[draft] plan.md",
    "100% done.md",
    "a|b.md",
    "angle<b>.md",
    "caret^1.md",
    "ümlaut café.md",
    unicodedata.normalize("NFD", "ümlaut café.md"),
    "日本語 メモ.md",
    "日本語\u3000メモ.md",
    "sub dir/with space.md",
    "paren).md",
    "(paren.md",
    "a&amp;b.md",
    "back\\slash.md",
    "quote\"d' `tick`.md",
    "a:b.md",
    "what?.md",
    "{braces} ~tilde~ *star* _under_ $ @ ! + , ; =.md",
    "tab\tand\u00a0nbsp.md",
]
COMMONMARK = MarkdownIt("commonmark")


def read_back(line: str, source: str = "n.md") -> list[tuple[str, str | None]]:
    return [(link.target, link.heading) for link in markdown_links(line, source)]


def commonmark_path(line: str) -> tuple[str, str | None]:
    """The file and heading CommonMark's link in `line` names: its href (markdown-it's), cut at
    the first `#`, percent-decoded, as a browser opens it."""
    links = [t for t in COMMONMARK.parseInline(line)[0].children or [] if t.type == "link_open"]
    assert len(links) == 1, line
    href = str(links[0].attrs["href"])
    path, _, heading = href.partition("#")
    return urllib.parse.unquote(path), (urllib.parse.unquote(heading) if "#" in href else None)


@pytest.mark.parametrize("name", AWKWARD)
@pytest.mark.parametrize("spaces", [False, True])
def test_a_written_url_reads_back_as_the_exact_name_here_and_in_commonmark(name: str, spaces: bool) -> None:
    url = url_path(name, spaces=spaces)
    for line in (
        f"[t]({'<' + url + '>' if spaces else url})",
        f'[t]({"<" + url + "#Next Steps>" if spaces else url + "#Next%20Steps"} "A title")',
        f"| a | [t]({'<' + url + '>' if spaces else url}) |",
    ):
        assert read_back(line) == [("/" + name, "Next Steps" if "#" in line else None)], line
        if not line.startswith("|"):
            assert commonmark_path(line) == (name, "Next Steps" if "#" in line else None), line
    assert not set(url) & set("#|()<>[]\\&"), url  # nothing a url, a table or Obsidian reads as syntax


@settings(max_examples=400, deadline=None)
@given(st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="/\x00"), min_size=1, max_size=12))
@example("%41")
@example("a\\#b")
def test_any_name_reads_back_exactly(stem: str) -> None:
    name = f"folder/{stem}.md"
    for spaces in (False, True):
        url = url_path(name, spaces=spaces)
        line = f"[t](<{url}>)" if spaces else f"[t]({url})"
        assert read_back(line) == [("/" + name, None)]
        assert commonmark_path(line) == (name, None)


def test_a_url_says_a_space_as_it_did() -> None:
    assert url_to("sub dir/a b.md", "n.md", "old%20one.md") == "sub%20dir/a%20b.md"
    assert url_to("sub dir/a b.md", "n.md", "old one.md") == "sub dir/a b.md"  # was <old one.md>
    assert url_to("a#b (c).md", "deep/n.md", "/x.md") == "/a%23b%20%28c%29.md"
    assert url_to("x%20y.md", "deep/n.md", "../x.md") == "../x%2520y.md"


@pytest.mark.parametrize(
    "line, want",
    [
        ("[t](x%20y.md)", [("/x y.md", None)]),
        ("[t](x%2520y.md)", [("/x%20y.md", None)]),  # a literal %20 in the name
        ("[t](<x y.md>)", [("/x y.md", None)]),
        ("[t](a%23b.md)", [("/a#b.md", None)]),
        ("[t](a.md#b%23c)", [("/a.md", "b#c")]),
        ("[t](a#b.md)", []),  # note "a", heading "b.md": no .md path, no note's link
        ("[t](<a#b.md>)", []),
        ("[t](a(b).md)", [("/a(b).md", None)]),  # CommonMark's balanced parentheses
        ("[t](a\\(b.md)", [("/a(b.md", None)]),  # a backslash escape
        ("[t](a\\b.md)", [("/a\\b.md", None)]),  # a backslash that escapes nothing
        ("[t](a&amp;b.md)", [("/a&b.md", None)]),  # an entity
        ("[t](a)b.md)", []),
        ("[t](100%.md)", [("/100%.md", None)]),  # a % before no hex digits
        ("[t](%FF.md)", [("/%FF.md", None)]),  # not UTF-8: as written
        ("[t](%C3%BC.md)", [("/ü.md", None)]),
        ("[t](a+b.md)", [("/a+b.md", None)]),  # + is no space in a path
        ("[t](a.md 'one') [u](b.md (two)) [v](c.md \"three\")", [("/a.md", None), ("/b.md", None), ("/c.md", None)]),
        ("[\\[draft\\] plan](%5Bdraft%5D%20plan.md)", [("/[draft] plan.md", None)]),
        ("![img](a.md) \\[t](a.md)", []),
        ("[t](https://x.org/a.md) [t](a:b.md) [t](a%3Ab.md)", [("/a:b.md", None)]),
        ("[t](<a b.md#Next Steps>)", [("/a b.md", "Next Steps")]),
        ("[t](a b.md)", []),  # a plain url ends at a space
    ],
)
def test_a_url_reads_as_commonmark_and_a_browser_read_it(line: str, want: list[tuple[str, str | None]]) -> None:
    assert read_back(line) == want
    for link in markdown_links(line, "n.md"):
        assert line[link.start : link.end] == link.url  # the span a move replaces: the url's path


def test_a_url_with_a_fragment_is_cut_at_its_first_hash_before_decoding() -> None:
    assert destination("a%23b.md#c#d") == (8, "a#b.md", "c#d")
    assert destination("a.md") == (4, "a.md", None)
    assert destination("a&#35;b.md") == (10, "a#b.md", None)  # an entity's '#' is the path's
    assert percent_decoded("%E3%80") == "%E3%80"  # cut UTF-8: as written


def test_a_long_run_of_backslashes_is_read_in_linear_time() -> None:
    start = time.perf_counter()
    for body in ("[t](" + "\\!" * 20_000, "[" + "\\[" * 20_000 + "](x", "[t](<" + "\\<" * 20_000):
        assert markdown_links(body, "n.md") == ()
    assert time.perf_counter() - start < 2


@pytest.mark.parametrize(
    "name, said",
    [
        ("a#b (c)", "'#'"),
        ("[draft] plan", "'[' and ']'"),
        ("caret^1", "'^'"),
        ("a|b", "'|'"),
        ("50%% off", "'%%'"),
        ("x%20y", None),
        ("100% done", None),
        ("paren)", None),
        ("日本語 メモ", None),
        ("sub dir/with space", None),
    ],
)
def test_a_wikilink_cannot_hold_link_syntax(name: str, said: str | None) -> None:
    assert wikilink_unsafe(name) == said
