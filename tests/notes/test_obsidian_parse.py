"""Obsidian habits parsed: [[wikilinks]], body #tags, aliases, link
resolution and rewriting. Pure functions, tested exhaustively."""

from __future__ import annotations

import unicodedata

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from cortex.notes.links import LinkResolver, link_text, rewrite_links
from cortex.notes.note import body_tags, find_section, parse_note, wikilinks

# ----- pure: wikilinks -------------------------------------------------------

# Link text a person writes: any character but the ones a wikilink cannot hold.
_name = st.text(
    st.characters(blacklist_characters="[]|#^\n\r`", blacklist_categories=("Cs",)), min_size=1, max_size=20
).filter(lambda t: t.strip())
_free = st.text(st.characters(blacklist_characters="[]`~#", blacklist_categories=("Cs",)), max_size=30)
# Free text within one line: a line break could start an indented code block (after a blank line).
_free_line = st.text(st.characters(blacklist_characters="[]`~#\n\r", blacklist_categories=("Cs",)), max_size=30)


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(_free, _free_line, _name, st.none() | _name, st.none() | _name, _free)
# Drawn by a seed sweep: a tab at the start of the body made the link's line indented code,
# where a link is an example.
@example("\t", "", "0", None, None, "")
def test_a_wikilink_parses_to_its_parts_and_its_target_offsets(before, lead, target, heading, alias, after):
    """Any text before and after, on other lines too. The link's line starts with a letter:
    one starting with a tab or four spaces (at the start, or after a blank line) is
    indented code, where CommonMark, and so Cortex, reads no link."""
    link = f"[[{target}" + (f"#{heading}" if heading else "") + (f"|{alias}" if alias else "") + "]]"
    body = before + "\nSee" + lead + " " + link + " " + after
    found = wikilinks(body)
    assert len(found) == 1
    lk = found[0]
    assert lk.target == target.strip()
    assert body[lk.start : lk.end] == target.strip()
    assert lk.heading == (heading.strip() or None if heading else None)
    assert lk.alias == (alias.strip() or None if alias else None)


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.tuples(_free_line, _name, st.none() | _name), min_size=1, max_size=5),
    _name,
    st.sampled_from(["\n", "\r\n"]),
    st.booleans(),
)
def test_rewrite_changes_only_link_targets(pieces, new, eol, bom):
    """Every byte outside the rewritten targets stays: line endings, BOM, tabs, no final newline.

    Each line starts with a letter: a line starting with a tab or four spaces would be
    indented code, where a link is an example (CommonMark's reading)."""
    text = ("\ufeff" if bom else "") + eol.join(
        f"x{free}\t[[{t}" + (f"|{a}" if a else "") + "]]" for free, t, a in pieces
    )
    links = wikilinks(text)
    assert [lk.target for lk in links] == [t.strip() for _, t, _ in pieces]
    assert rewrite_links(text, 0, links, {}) == text
    out = rewrite_links(text, 0, links, {lk.start: new for lk in links})
    expected = ("\ufeff" if bom else "") + eol.join(
        f"x{free}\t[[" + t[: len(t) - len(t.lstrip())] + new + t[len(t.rstrip()) :] + (f"|{a}" if a else "") + "]]"
        for free, t, a in pieces
    )
    assert out == expected


def test_links_in_code_do_not_count_and_embeds_do():
    body = (
        "See [[Real]] and ![[diagram.png]].\n"
        "Inline `[[Not a link]]` and ``[[Nor this]]``.\n"
        "```\n[[In a fence]]\n#notatag\n```\n"
        "~~~md\n[[Tilde fence]]\n~~~\n"
        "[[#Same note heading]] [[Other#Part|shown]]\n"
    )
    assert [(lk.target, lk.heading, lk.alias, lk.embed) for lk in wikilinks(body)] == [
        ("Real", None, None, False),
        ("diagram.png", None, None, True),
        ("Other", "Part", "shown", False),
    ]


def test_body_tags_skip_code_headings_numbers_and_anchors():
    body = (
        "# Heading #notatag\n\nLearning Rust #learning #rust/async, #Learning again.\n"
        "`#code` and\n```\n#fenced\n```\nhttps://x.org/#anchor issue#12 #2024 #y2024 #déjà-vu\n"
        "## Sub #nope\n- item #todo\n"
    )
    assert body_tags(body) == ("learning", "rust/async", "y2024", "déjà-vu", "todo")


def test_aliases_list_or_string_and_tags_merge():
    a = parse_note("n.md", "---\naliases: Burnt cream\ntags: [food, learning]\n---\nBody #learning #dessert\n")
    assert a.aliases == ("Burnt cream",) and a.tags == ("food", "learning", "dessert")
    b = parse_note("n.md", "---\naliases:\n  - Burnt cream\n  - Crema catalana\n---\n# X\n")
    assert b.aliases == ("Burnt cream", "Crema catalana")
    assert parse_note("n.md", "---\naliases: [1, null, {a: b}]\n---\n").aliases == ("1",)


def test_resolver_names_case_unicode_form_paths_and_nearest():
    nfd = unicodedata.normalize("NFD", "Café/Crème brûlée.md")
    r = LinkResolver([nfd, "People/O'Brien, Pat.md", "a/x/Note.md", "a/Note.md", "b/Note.md", "日本/東京.md"])
    assert r.resolve("crème BRÛLÉE") == nfd  # typed in NFC, stored in NFD, other case
    assert r.resolve("Café/Crème brûlée.md") == nfd
    assert r.resolve("o'brien, pat") == "People/O'Brien, Pat.md"
    assert r.resolve("東京") == "日本/東京.md"
    assert r.resolve("Note", "b/y/z.md") == "b/Note.md"  # nearest folder wins
    assert r.resolve("Note", "a/x/q.md") == "a/x/Note.md"
    assert r.resolve("Note", "c/q.md") == "a/Note.md"  # shortest, then by name
    assert r.resolve("Missing") is None
    after = LinkResolver(["recipes/Burnt cream.md", "a/Note.md", "b/Note.md"])
    assert link_text("recipes/Burnt cream.md", "Crème brûlée", after) == "Burnt cream"
    assert link_text("recipes/Burnt cream.md", "Café/Crème brûlée.md", after) == "recipes/Burnt cream.md"
    assert link_text("b/Note.md", "Note", after) == "b/Note"  # the bare name would be ambiguous


def test_find_section_ends_at_same_or_higher_heading():
    text = "---\nt: 1\n---\n# T\r\n## Steps\r\nmix\r\n### Sub\r\nbake\r\n```\n## not\n```\n## Next\r\nx"
    note = parse_note("n.md", text)
    start, end = find_section(note.text, note.body_offset, "steps")
    assert text[start:end] == "## Steps\r\nmix\r\n### Sub\r\nbake\r\n```\n## not\n```\n"
    assert find_section(note.text, note.body_offset, "## next") is not None
    assert find_section(note.text, note.body_offset, "none") is None


_word = st.text(st.sampled_from("abcdefghijklmnopqrstuvwxyz"), min_size=1, max_size=8)
_piece = st.tuples(st.sampled_from(["plain", "fence", "tilde", "inline", "heading"]), _word)


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(st.lists(_piece, max_size=12), st.sampled_from(["\n", "\r\n"]))
def test_links_and_tags_come_only_from_text_outside_code_and_headings(pieces, eol):
    lines, want_links, want_tags = [], [], []
    for kind, word in pieces:
        if kind == "plain":
            lines.append(f"see [[{word}]] #{word}x")
            want_links.append(word)
            if f"{word}x" not in want_tags:
                want_tags.append(f"{word}x")
        elif kind in ("fence", "tilde"):
            mark = "```" if kind == "fence" else "~~~"
            lines += [mark, f"[[{word}]] #{word}y", mark]
        elif kind == "inline":
            lines.append(f"code `[[{word}]] #{word}z` here")
        else:
            lines.append(f"## [[{word}]] #{word}h")  # a heading's link counts, its tag does not
            want_links.append(word)
    body = eol.join(lines)
    assert [lk.target for lk in wikilinks(body)] == want_links
    assert list(body_tags(body)) == want_tags
