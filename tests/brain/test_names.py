"""File names people actually use: accents, CJK, apostrophes, commas, `+`, `&`, parentheses,
spaces, and NFD names as macOS editors store them. One rule for tools, the watcher and guests.
"""

from __future__ import annotations

import os
import unicodedata

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from serverkit import RunningServer, call, make_settings
from vaultkit import git, settings_for, vault_on

from cortex.app.server import assemble, make_app
from cortex.brain.trailers import Actor
from cortex.brain.watcher import Editor
from cortex.errors import BadInput
from cortex.notes.paths import check_path, same_name

ME = Actor(door="owner", tool="brain_write", client="pytest")
NFD = unicodedata.normalize("NFD", "Résumé.md")
NAMES = {
    "Café/Crème brûlée.md": "---\r\naliases: [Burnt cream]\r\n---\r\n# Crème brûlée\r\n\r\nCream, sugar, fire.\r\n",
    "People/O'Brien, Pat.md": "# Pat O'Brien\n\nMet at the bee club.",  # no final newline
    "Ideas/C++ & Rust (notes).md": "\ufeff# C++ & Rust\n\n\tTabs stay tabs.\n",  # BOM and tab
    "日記/二〇二六年.md": "# 日記\n\n今日は晴れ。\n",
    NFD: "# Résumé\n\nStored in NFD, as macOS does.\n",
}


@pytest.mark.parametrize(
    "path",
    list(NAMES)
    + ["a + b.md", "notes/100% sure.md", "x/emoji 🐝.md", "notes/Зеленый.md", "notes/tab name's (v2), final.md"],
)
def test_names_people_use_are_accepted(path):
    assert check_path(path) == path


@pytest.mark.parametrize(
    "path,words",
    [
        ("notes/../x.md", "'..'"),
        ("/x.md", "relative"),
        (".git/x.md", ".git"),
        (".cortex/x.md", ".cortex"),
        ("notes/a\x07.md", "control"),
        ("notes/\u202ecod.md", "bidirectional"),
        ("notes/ x.md", "space"),
        ("notes/x .md", None),
        ("notes/.hidden.md", "dot"),
        ("notes./x.md", "dot"),
        ("a<b.md", "Windows"),
        ("ab:c.md", "Windows"),
        ('a"b.md', "Windows"),
        ("a|b.md", "Windows"),
        ("a?b.md", "Windows"),
        ("a*b.md", "Windows"),
        ("a\\b.md", "separator"),
        ("notes\u2215x.md", "looks like /"),
        ("x\u200b.md", "invisible"),
    ],
)
def test_dangerous_or_unportable_names_are_refused_in_one_line(path, words):
    if words is None:
        assert check_path(path) == path  # a space before the extension is inside the segment: fine
        return
    with pytest.raises(BadInput) as err:
        check_path(path)
    assert words in str(err.value) and "\n" not in str(err.value)


@settings(max_examples=300, deadline=None)
@given(st.text(min_size=1, max_size=30))
def test_the_rule_never_lets_a_traversal_or_control_through(name):
    try:
        path = check_path(f"notes/{name}.md")
    except BadInput:
        return
    segments = path.split("/")
    assert ".." not in segments and "" not in segments and not path.startswith("/")
    assert not any(unicodedata.category(c) == "Cc" for c in path)
    assert all(s == s.strip(" ") and not s.startswith(".") for s in segments)


def test_same_name_is_case_and_normalisation():
    assert same_name(NFD, "Résumé.md") and same_name("résumé.md", "RÉSUMÉ.md")
    assert not same_name("resume.md", "Résumé.md")  # accents are letters, not case


@pytest.fixture
def vault(tmp_path):
    files = {path: text.encode("utf-8") for path, text in NAMES.items()}
    return vault_on(tmp_path, "master", files)


@pytest.mark.slow
def test_every_mode_on_such_names_over_http_keeps_every_other_byte(tmp_path, vault):
    parts = assemble(make_settings(tmp_path, vault))
    before = {p: (vault / p).read_bytes() for p in NAMES}
    with RunningServer(make_app(parts), parts.settings) as running:
        url = running.url + "/mcp"

        def untouched(*changed: str) -> None:
            for p, data in before.items():
                if p not in changed and (vault / p).exists():
                    assert (vault / p).read_bytes() == data, p

        # Read an NFD note by its NFC name: the same note.
        r = call(url, "brain_read", path="Résumé.md")
        assert r.error is None and r.data["path"] == NFD and "Stored in NFD" in r.data["text"]
        # Append to it by the NFC name: the file on disk keeps its NFD name.
        assert call(url, "brain_write", path="Résumé.md", mode="append", content="More.").error is None
        assert os.listdir(vault).count(NFD) == 1 and "Résumé.md" not in [n for n in os.listdir(vault) if n != NFD]
        untouched(NFD)
        # A second file differing only by case or normalisation is refused.
        twin = call(url, "brain_write", path="résumé.md", mode="create", content="x")
        assert twin.error and "only by letter case or Unicode normalisation" in twin.error
        # So is a note in a folder spelt otherwise, at any depth, naming the existing spelling.
        for path, fix in [("people/x.md", "People/x.md"), ("PEOPLE/Nested/x.md", "People/Nested/x.md")]:
            folder = call(url, "brain_write", path=path, mode="create", content="x")
            assert folder.error and "differs from the existing folder People" in folder.error, folder.error
            assert f"Use {fix}" in folder.error and not (vault / path).exists()
        # Edit, move and delete names with accents, apostrophes, +, &, parentheses.
        e = call(url, "brain_write", path="People/O'Brien, Pat.md", mode="edit", find="bee club", content="hive")
        assert e.error is None
        assert (vault / "People/O'Brien, Pat.md").read_bytes() == b"# Pat O'Brien\n\nMet at the hive."
        m = call(url, "brain_write", path="Ideas/C++ & Rust (notes).md", mode="move", to="Ideas/C++ & Rust.md")
        assert m.error is None and (vault / "Ideas/C++ & Rust.md").read_bytes() == before["Ideas/C++ & Rust (notes).md"]
        d = call(url, "brain_write", path="日記/二〇二六年.md", mode="delete", reason="moved elsewhere")
        assert d.error is None and not (vault / "日記/二〇二六年.md").exists()
        untouched(NFD, "People/O'Brien, Pat.md", "Ideas/C++ & Rust (notes).md", "日記/二〇二六年.md")
        assert git(vault, "status", "--porcelain") == ""


def test_append_keeps_crlf_and_a_missing_final_newline_is_not_invented(tmp_path, vault):

    from cortex.app.brain_setup import open_brain

    brain, _ = open_brain(settings_for(tmp_path, vault))
    brain.write("Café/Crème brûlée.md", "append", ME, content="Serve cold.")
    data = (vault / "Café/Crème brûlée.md").read_bytes()
    assert data == (NAMES["Café/Crème brûlée.md"] + "Serve cold.\r\n").encode()
    assert b"\n" not in data.replace(b"\r\n", b"")  # no bare LF crept in
    frontmatter = NAMES["Café/Crème brûlée.md"].split("# ")[0].encode()
    assert data.startswith(frontmatter)


def test_the_watcher_obeys_the_same_rule(tmp_path, vault):

    from cortex.app.brain_setup import open_brain

    brain, _ = open_brain(settings_for(tmp_path, vault))
    editor = Editor(brain, debounce_ms=0)
    (vault / "Ideas/Nouvelle idée, v2 (draft).md").write_text("# New\n")
    (vault / "Ideas/bad\u202ename.md").write_text("# bidi\n")
    editor.check_all()
    files = brain.files(brain.head())
    assert "Ideas/Nouvelle idée, v2 (draft).md" in files
    assert not any("\u202e" in p for p in files)
    held = editor.status()["hand_edits"]["held"]
    assert any("bidirectional" in h for h in held)


@pytest.mark.slow
def test_a_guest_cannot_imitate_an_existing_note_by_case_or_normalisation(tmp_path, vault, redis_proc):
    from guestkit import Clock, start_guest_server

    server = start_guest_server(tmp_path, vault, redis_proc, Clock())
    try:
        g = server.guest("alice", ["People/"])
        r = call(g.url, "brain_propose", token=None, path="People/o'brien, pat.md", mode="create", content="x")
        assert r.error and "only by letter case" in r.error and server.queue.open() == []
        ok = call(g.url, "brain_propose", token=None, path="People/O'Brien, Pat.md", mode="append", content="Hi")
        assert ok.error is None
    finally:
        server.stop()


def test_edit_in_a_crlf_note_matches_and_writes_crlf(tmp_path, vault):

    from cortex.app.brain_setup import open_brain

    brain, _ = open_brain(settings_for(tmp_path, vault))
    brain.write("Café/Crème brûlée.md", "edit", ME, find="# Crème brûlée\n\nCream", content="# Crème brûlée\n\nMilk")
    data = (vault / "Café/Crème brûlée.md").read_bytes()
    assert data == NAMES["Café/Crème brûlée.md"].replace("Cream", "Milk").encode()
    assert b"\n" not in data.replace(b"\r\n", b"")


# -- the rule matches its words ---------------------------------------------------


@pytest.mark.parametrize(
    "path,words",
    [
        ("notes/\u3164.md", "U+3164 (HANGUL FILLER)"),
        ("notes/a\u115fb.md", "U+115F"),
        ("notes/\u2800.md", "U+2800 (BRAILLE PATTERN BLANK)"),
        ("notes/a\u034f.md", "U+034F"),
        ("notes/\u2764\ufe0f.md", "U+FE0F"),
        ("notes/\u00a0x.md", "space"),
        ("notes/x.md\u3000", "space"),
        ("\u2002notes/x.md", "space"),
        ("con.md", "Windows device name"),
        ("notes/nul.md", "Windows device name"),
        ("aux.md", "Windows device name"),
        ("notes/COM1.md", "Windows device name"),
        ("LPT9/x.md", "Windows device name"),
        ("notes/Con.txt.md", "Windows device name"),
    ],
)
def test_invisible_names_space_edges_and_device_names_are_refused(path, words):
    with pytest.raises(BadInput) as refused:
        check_path(path)
    assert words in str(refused.value) and "\n" not in str(refused.value)


@pytest.mark.parametrize("path", ["notes/می\u200cخواهم.md", "notes/consul.md", "notes/com10.md", "notes/x .md"])
def test_joiners_inside_words_and_names_like_devices_are_accepted(path):
    assert check_path(path) == path


@pytest.mark.slow
@settings(max_examples=500, deadline=None)
@given(st.characters(blacklist_categories=("Cs",)), st.sampled_from(["start", "inside", "end"]))
def test_every_code_point_by_its_unicode_category(c, where):
    """A code point that shows nothing is refused anywhere in a name; white space is refused
    at a segment's edges; letters, digits, marks and symbols of every script are accepted."""
    assume(c != "/")  # the separator: "no/te.md" is a note in a folder
    # At a segment's end: the end of a folder's name (a note's name ends in .md).
    path = {"start": f"notes/{c}note.md", "inside": f"notes/no{c}te.md", "end": f"note{c}/x.md"}[where]
    category = unicodedata.category(c)
    shows_nothing = (
        category == "Cf"
        or c in "\u034f\u115f\u1160\u17b4\u17b5\u3164\uffa0\u2800"
        or 0xFE00 <= ord(c) <= 0xFE0F
        or 0x180B <= ord(c) <= 0x180F
        or 0xFFF0 <= ord(c) <= 0xFFF8
        or 0xE0000 <= ord(c) <= 0xE0FFF
        or (c in "\u200c\u200d" and where != "inside")
    )
    refused = (
        shows_nothing
        or category == "Cc"
        or (c.isspace() and where != "inside")
        or c in '<>:"|?*\\'
        or c in "\u2044\u2215\u29f8\uff0f"
        or (c == "." and where != "inside")
    )
    if c in "\u200c\u200d" and where == "inside":
        refused = False  # between two letters: Persian and Indic words need it
    try:
        check_path(path)
        accepted = True
    except BadInput:
        accepted = False
    assert accepted is not refused, (hex(ord(c)), category, where)
