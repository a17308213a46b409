"""What a [[link]] points to and which paths a mistyped one is offered, without I/O:
`LinkResolver` (path, file name, alias, title, then the name with separators folded) and
`nearest` (did you mean …?), over accented, CJK and NFD names; and `file_into`, which writes
a filed working item under a heading of its note."""

from __future__ import annotations

import unicodedata

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from cortex.notes.links import LinkResolver, name_slug
from cortex.notes.nearest import did_you_mean, nearest
from cortex.notes.note import parse_note
from cortex.notes.working import WorkingError, file_into, item_under

NOTES = {
    "notes/vitamin-d.md": "# Vitamin D\n\nTake 1000 IU.\n",
    "notes/billing-db.md": "---\naliases: [Billing DB]\n---\n# Billing service database decision\n\nPostgres.\n",
    "Café/Crème brûlée.md": "# Crème brûlée\n\nCustard.\n",
    "日本/東京.md": "---\ntitle: 東京の地図\n---\nMaps.\n",
    "a/b/c.md": "# Deep\n",
    "x/b/c.md": "# Other deep\n",
    "a/near.md": "# Near\n",
    "z/near.md": "# Near too\n",
    "top.md": "# Vitamin D\n\nA second note titled the same.\n",
}


def parsed(notes: dict[str, str]) -> dict:
    return {p: parse_note(p, t) for p, t in notes.items()}


@pytest.fixture(scope="module")
def resolver() -> LinkResolver:
    return LinkResolver(parsed(NOTES))


@pytest.mark.parametrize(
    "target, source, want, how",
    [
        ("notes/vitamin-d", "", "notes/vitamin-d.md", "path"),
        ("notes/vitamin-d.md", "", "notes/vitamin-d.md", "path"),
        ("vitamin-d", "", "notes/vitamin-d.md", "file name"),
        ("VITAMIN-D", "", "notes/vitamin-d.md", "file name"),
        ("Billing DB", "", "notes/billing-db.md", "alias"),
        ("billing db", "", "notes/billing-db.md", "alias"),
        ("Billing service database decision", "", "notes/billing-db.md", "title"),
        ("Billing  service database\tdecision", "", "notes/billing-db.md", "title"),
        ("東京の地図", "", "日本/東京.md", "title"),
        ("東京", "", "日本/東京.md", "file name"),
        ("日本/東京", "", "日本/東京.md", "path"),
        ("crème brûlée", "", "Café/Crème brûlée.md", "file name"),
        (unicodedata.normalize("NFD", "Crème brûlée"), "", "Café/Crème brûlée.md", "file name"),
        (unicodedata.normalize("NFD", "Café/Crème brûlée"), "", "Café/Crème brûlée.md", "path"),
        ("creme-brulee", "", None, None),  # accents are letters: never folded away
        ("notes/vitamin_d", "", "notes/vitamin-d.md", "name"),
        ("Billing_service database-decision", "", "notes/billing-db.md", "name"),
        ("Vitamin_D", "", "top.md", "name"),  # vitamin-d.md's name and top.md's title: the shorter path
        ("b/c", "a/near.md", "a/b/c.md", "path"),  # the end of a path, nearest the linking note
        ("b/c", "x/y.md", "x/b/c.md", "path"),
        ("c", "x/y.md", "x/b/c.md", "file name"),
        ("near", "z/q.md", "z/near.md", "file name"),
        ("near", "", "a/near.md", "file name"),  # a tie: the shorter path, then by name
        ("nowhere", "", None, None),
        ("", "", None, None),
        ("C++", "", None, None),
    ],
)
def test_a_link_resolves_by_path_file_name_alias_title_then_name(resolver, target, source, want, how):
    found = resolver.find(target, source)
    assert (found[0] if found else None) == want
    assert (found[1] if found else None) == how


def test_a_file_name_wins_over_a_title_and_the_nearest_title_wins():
    r = LinkResolver(parsed(NOTES))
    # "Vitamin D" is the title of top.md and the name of notes/vitamin-d.md: top.md's own
    # title is said first, since a title is tried before a folded file name.
    assert r.find("Vitamin D", "") == ("top.md", "title")
    only = LinkResolver(parsed({p: t for p, t in NOTES.items() if p != "top.md"}))
    assert only.find("Vitamin D", "") == ("notes/vitamin-d.md", "name")  # H1 equal to the file name: a name
    files = {"vitamin-d.md": "# V\n", "notes/x.md": "# Vitamin D\n"}
    assert LinkResolver(parsed(files)).find("vitamin-d", "notes/y.md") == ("vitamin-d.md", "file name")


def test_paths_alone_resolve_file_names_and_folded_names_but_no_titles():
    r = LinkResolver(list(NOTES))
    assert r.resolve("vitamin-d") == "notes/vitamin-d.md"
    assert r.resolve("Vitamin D") == "notes/vitamin-d.md"
    assert r.resolve("Billing service database decision") is None


NAME = (
    st.lists(st.sampled_from(list("abcxyzéüßçøåñ東京日本語한국") + ["e\u0301", " ", "-", "_"]), min_size=1, max_size=12)
    .map("".join)
    .filter(lambda s: s.strip(" -_") and not s.startswith((" ", "-", "_")) and not s.endswith((" ", "-", "_")))
)


@pytest.mark.slow
@settings(max_examples=200, deadline=None)
@given(st.lists(NAME, min_size=1, max_size=6, unique_by=name_slug))
@example(["Crème", "東京", "e\u0301t\u00e9"])
def test_every_note_is_reached_by_its_path_name_and_title_in_any_form(names):
    notes = {f"f{i}/{n}.md": f"---\ntitle: T{i} {n}\n---\nBody.\n" for i, n in enumerate(names)}
    r = LinkResolver(parsed(notes))
    for i, n in enumerate(names):
        path = f"f{i}/{n}.md"
        for form in ("NFC", "NFD"):
            said = unicodedata.normalize(form, n)
            assert r.find(f"f{i}/{said}") == (path, "path")
            assert r.find(f"F{i}/{said.upper()}.MD") == (path, "path")
            assert r.find(said) == (path, "file name")
            assert r.find(f"T{i} {said}") == (path, "title")
            if " " in n:
                assert r.find(f"f{i}/{said}".replace(" ", "_")) == (path, "name")


# ----- nearest: what a mistyped path is offered --------------------------------

PATHS = {p: (parse_note(p, t).title, *parse_note(p, t).aliases) for p, t in NOTES.items()}


@pytest.mark.parametrize(
    "asked, first",
    [
        ("notes/vitamin_d.md", "notes/vitamin-d.md"),
        ("notes/vitamin-d", "notes/vitamin-d.md"),
        ("notes/Vitamin D.md", "notes/vitamin-d.md"),
        ("NOTES/VITAMIN-D.MD", "notes/vitamin-d.md"),
        ("vitamin-d.md", "notes/vitamin-d.md"),  # its file name, in another folder
        ("notes/vitamn-d.md", "notes/vitamin-d.md"),  # spelling
        ("Billing DB", "notes/billing-db.md"),  # an alias
        ("Billing service database decision", "notes/billing-db.md"),  # a title
        ("東京の地図", "日本/東京.md"),
        ("日本/東京", "日本/東京.md"),
        (unicodedata.normalize("NFD", "Café/Crème brûlée.md"), "Café/Crème brûlée.md"),
        ("café/crème_brûlée", "Café/Crème brûlée.md"),
    ],
)
def test_a_mistyped_path_is_offered_the_note_it_meant_first(asked, first):
    assert nearest(asked, PATHS)[0] == first


def test_vitamin_d_leads_to_its_file_first_then_the_note_of_that_title():
    assert nearest("Vitamin D", PATHS)[:2] == ["notes/vitamin-d.md", "top.md"]


@pytest.mark.parametrize("asked", ["zebra.md", "quantum/physics.md", "", "/", ".md"])
def test_nothing_near_is_offered_nothing(asked):
    assert nearest(asked, PATHS) == []


def test_the_path_asked_is_never_offered_and_at_most_three_are():
    assert "top.md" not in nearest("top.md", PATHS)
    many = {f"notes/vitamin-d{i}.md": () for i in range(10)}
    assert len(nearest("notes/vitamin-d.md", many)) == 3


def test_folders_are_offered_for_a_prefix():
    folders = {"notes/": (), "projects/": (), "日本/": ()}
    assert nearest("note/", folders) == ["notes/"]
    assert nearest("project", folders) == ["projects/"]


def test_did_you_mean_reads_as_a_sentence():
    assert did_you_mean([]) == ""
    assert did_you_mean(["a.md"]) == "; did you mean a.md?"
    assert did_you_mean(["a.md", "b.md", "c.md"]) == "; did you mean a.md, b.md or c.md?"


@pytest.mark.slow
@settings(max_examples=200, deadline=None)
@given(st.lists(NAME, min_size=1, max_size=8, unique_by=name_slug), st.data())
def test_every_path_is_offered_first_for_its_folded_forms(names, data):
    paths = {f"n/{n}.md": () for n in names}
    n = data.draw(st.sampled_from(names))
    said = data.draw(st.sampled_from([n, n.upper(), unicodedata.normalize("NFD", n), n.replace(" ", "_")]))
    ask = f"n/{said}" + data.draw(st.sampled_from(["", ".md"]))
    if ask != f"n/{n}.md":  # the path itself is never offered
        assert nearest(ask, paths)[0] == f"n/{n}.md"


# ----- file_into: a filed item under a heading of its note ----------------------


@pytest.mark.parametrize(
    "text, heading, want",
    [
        ("# N\n\nBody.\n", "To do", "# N\n\nBody.\n\n## To do\n\n- [ ] x\n"),
        ("# N\n\nBody.", "To do", "# N\n\nBody.\n\n## To do\n\n- [ ] x\n"),
        ("", "To do", "## To do\n\n- [ ] x\n"),
        ("# N\n\n## To do\n\n- [ ] a\n\n## Next\n", "To do", "# N\n\n## To do\n\n- [ ] a\n- [ ] x\n\n## Next\n"),
        ("# N\r\n\r\n## to DO\r\n\r\nprose\r\n", "To do", "# N\r\n\r\n## to DO\r\n\r\nprose\r\n\r\n- [ ] x\r\n"),
        ("# N\n\n## To do\n", "To do", "# N\n\n## To do\n\n- [ ] x\n"),
        ("# N\n\n```\ncode", "To do", "# N\n\n```\ncode\n```\n\n## To do\n\n- [ ] x\n"),
        ("# N\n\n<!-- open", "To do", "# N\n\n<!-- open\n-->\n\n## To do\n\n- [ ] x\n"),
        ("# 東京\n\n## 決定\n\n- 古い\n", "決定", "# 東京\n\n## 決定\n\n- 古い\n- [ ] x\n"),
    ],
)
def test_file_into_adds_the_item_at_the_end_of_its_section(text, heading, want):
    assert file_into(text, heading, "- [ ] x") == want


def test_file_into_refuses_a_heading_it_cannot_write_under():
    with pytest.raises(WorkingError, match="heading is empty"):
        file_into("# N\n", "  ##  ", "- x")
    with pytest.raises(WorkingError, match="ends inside a block"):
        file_into("# N\n\n## To do\n\n```\nopen fence", "To do", "- x")


TAIL = st.sampled_from(["", "\n", "text", "- item\n", "```\n", "<!--\n", "> quote\n", "| a |\n|---|\n", "    code\n"])


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(st.lists(TAIL, max_size=6), st.sampled_from(["To do", "Decisions", "Ça été"]), st.booleans())
def test_a_filed_item_is_an_item_of_its_section_and_every_byte_stays(parts, heading, has_heading):
    text = "# Note\n\n" + (f"## {heading}\n\n" if has_heading else "") + "\n".join(parts)
    try:
        new = file_into(text, heading, "- [ ] filed ^x")
    except WorkingError:
        return  # refused, nothing written
    at = new.index("- [ ] filed ^x")
    assert item_under(new, heading, at)  # a list item, under that heading, as CommonMark reads it
    it = iter(new)
    assert all(c in it for c in text)  # every character of the note stays, in order
