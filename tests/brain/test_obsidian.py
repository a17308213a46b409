"""Obsidian habits in a real brain: aliases and body #tags in
search, links and backlinks in brain_read, hub notes found by their title, the best
passage, and pages that fit. Real Git repositories built from vaults a person would
recognise (tests/vaultkit.py); the parsers themselves are in test_obsidian_parse.py."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from vaultkit import HUB_QUERIES, hub_vault

from cortex.brain.brain import Brain
from cortex.brain.trailers import Actor
from cortex.store.git import GitStore
from cortex.tools.corpus import CORPUS_REPLY_BYTES
from cortex.tools.read import ReadRequest, read
from cortex.tools.search import SearchRequest, search_notes
from cortex.tools.tool import Caller
from cortex.tools.toolset import Tools

ME = Actor("owner", "brain_write", "pytest")

# ----- a vault, searched and read ----------------------------------------------

VAULT = {
    "Café/Crème brûlée.md": "---\naliases: [Burnt cream]\n---\n# Crème brûlée\n\nCustard under caramel.\n".encode(),
    "notes/study.md": b"# Study habits\n\nSpaced repetition works. #learning #habits\n\n## Links\n\n- [[Reading]]\n",
    "notes/Reading.md": b"# Reading\n\n## Links\n\n- [[study]] and [[Study#Links|habits]]\n\n"
    b"## Notes\n\nRead slowly; the spaced repetition of chapters helps.\n\n`[[study]]` is code\n",
    "notes/links-first.md": b"# Links first\n\n## Links\n\n- [[Postgres tuning]] and [[Postgres vacuum]]\n\n"
    b"## Body\n\nWe tuned postgres vacuum thresholds to 0.05 on the orders table.\n",
}


def make_brain(tmp_path: Path, files: dict[str, bytes], warm: bool = True) -> Brain:
    store = GitStore.init(tmp_path / "vault.git", files, bare=True, message="import the vault")
    brain = Brain(store, clock=lambda: dt.datetime(2026, 11, 30, 12, tzinfo=dt.UTC))
    if warm:
        brain.snapshot()  # as `cortex serve` does in the background at start
    return brain


@pytest.fixture
def vault(tmp_path: Path) -> Tools:
    return Tools(make_brain(tmp_path, VAULT), asker=None)  # type: ignore[arg-type]


def test_an_alias_finds_its_note(vault: Tools):
    assert search_notes(vault, SearchRequest(query="Burnt cream"))["hits"][0]["path"] == "Café/Crème brûlée.md"
    assert search_notes(vault, SearchRequest(query="burnt cream"))["hits"][0]["aliases"] == ["Burnt cream"]


def test_body_tags_are_searched_shown_and_read(vault: Tools):
    for q in ("#learning", "learning"):
        hit = search_notes(vault, SearchRequest(query=q))["hits"][0]
        assert hit["path"] == "notes/study.md" and "learning" in hit["tags"]
    assert read(vault, ReadRequest(path="notes/study.md"), Caller(door="owner"))["tags"] == ["learning", "habits"]


def test_read_lists_links_and_backlinks_at_the_served_sha(vault: Tools):
    r = read(vault, ReadRequest(path="notes/Reading.md"), Caller(door="owner"))
    assert r["links"] == [
        {"target": "study", "path": "notes/study.md"},
        {"target": "Study", "heading": "Links", "alias": "habits", "path": "notes/study.md"},
    ]
    assert r["backlinks"] == [{"path": "notes/study.md", "links": 1}]
    s = read(vault, ReadRequest(path="notes/study.md"), Caller(door="owner"))
    assert s["backlinks"] == [{"path": "notes/Reading.md", "links": 2}]  # the one in code does not count
    dangling = read(vault, ReadRequest(path="notes/links-first.md"), Caller(door="owner"))["links"]
    assert dangling[0] == {"target": "Postgres tuning", "missing": True}


def test_best_passage_is_the_match_not_the_links(vault: Tools):
    hit = search_notes(vault, SearchRequest(query="postgres vacuum thresholds"))["hits"][0]
    assert hit["path"] == "notes/links-first.md"
    assert hit["heading"] == "Body" and "0.05" in hit["passage"]


@pytest.mark.slow
def test_hub_notes_are_found_by_their_title(tmp_path: Path):
    tools = Tools(make_brain(tmp_path, hub_vault()), asker=None)  # type: ignore[arg-type]
    for query, want in HUB_QUERIES.items():
        hits = [h["path"] for h in search_notes(tools, SearchRequest(query=query))["hits"]]
        assert hits[0] == want, (query, hits)
    # BM25 on body text is kept: words only in a small note's body still find it.
    assert (
        search_notes(tools, SearchRequest(query="serde tokio ownership"))["hits"][0]["path"] == "notes/learning-rust.md"
    )
    # The passage of a hub is the item that matches (each list item is a block), not the top of its list.
    text = hub_vault()["lists/Rust libraries.md"].decode()
    name = text.splitlines()[2000].split("]")[0][3:]  # a library far down the list
    hit = search_notes(tools, SearchRequest(query=f"{name} crate"))["hits"][0]
    assert hit["path"] == "lists/Rust libraries.md" and hit["passage"].startswith(f"- [{name}]")


@pytest.mark.slow
def test_every_read_page_fits_beside_many_links_and_a_big_frontmatter(tmp_path: Path):
    """Links, backlinks and frontmatter are bounded too: no page passes 100 KB of JSON."""
    front = "---\n" + "".join(f'key{i}: "{"x" * 60}"\n' for i in range(200)) + "---\n"
    body = "# Big\n\n" + "".join(f'- [[Target number {i}|shown {i}]] "quoted"\t\n' for i in range(3_000))
    files = {"notes/Big.md": (front + body).encode()}
    files.update({f"notes/fan-{i:03d}.md": f"Links to [[Big]] from {i}.\n".encode() for i in range(400)})
    tools = Tools(make_brain(tmp_path, files), asker=None)  # type: ignore[arg-type]
    first = read(tools, ReadRequest(path="notes/Big.md"), Caller(door="owner"))
    pages = [first] + [
        read(tools, ReadRequest(path="notes/Big.md", page=p), Caller(door="owner"))
        for p in range(2, int(first["page"].split()[-1]) + 1)
    ]
    for page in pages:
        assert len(json.dumps(page, ensure_ascii=False).encode()) <= CORPUS_REPLY_BYTES
    assert "".join(p["text"] for p in pages) == front + body
    assert "frontmatter_omitted" in first and "links_left_out" in first and "backlinks_left_out" in first
    listed = len(first["links"])
    assert first["links_left_out"].startswith(f"{3_000 - listed} more")
    assert first["backlinks_left_out"].startswith(f"{400 - len(first['backlinks'])} more")
    small = read(tools, ReadRequest(path="notes/fan-001.md"), Caller(door="owner"))
    assert "page" not in small and small["links"] == [{"target": "Big", "path": "notes/Big.md"}]


def test_a_read_at_start_up_waits_briefly_for_the_index_then_says_backlinks_are_pending(tmp_path: Path):
    """No build runs (warm=False), so the bounded wait runs out: the lists are left out, not
    empty, and the reply says they are still being read (issue 62)."""
    tools = Tools(make_brain(tmp_path, VAULT, warm=False), asker=None)  # type: ignore[arg-type]
    tools.brain.corpus.first_read_wait = 0.05
    cold = read(tools, ReadRequest(path="notes/study.md"), Caller(door="owner"))
    assert "links" not in cold and "backlinks" not in cold
    assert cold["links_pending"] is True and cold["backlinks_pending"] is True
    assert "still being read" in cold["links_note"] and "not empty" in cold["links_note"]
    assert "1 link(s)" in cold["links_note"]
    tools.brain.snapshot()
    warm = read(tools, ReadRequest(path="notes/study.md"), Caller(door="owner"))
    assert warm["backlinks"] == [{"path": "notes/Reading.md", "links": 2}] and "backlinks_pending" not in warm


def test_a_read_waits_for_a_build_under_way_and_gets_its_backlinks(tmp_path: Path):
    tools = Tools(make_brain(tmp_path, VAULT, warm=False), asker=None)  # type: ignore[arg-type]
    tools.brain.corpus.warm()  # as `cortex serve` starts it, beside the first read
    got = read(tools, ReadRequest(path="notes/study.md"), Caller(door="owner"))
    assert got["backlinks"] == [{"path": "notes/Reading.md", "links": 2}] and "links_note" not in got


@pytest.mark.slow
@settings(max_examples=25, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.sampled_from(["notes/study.md", "notes/Reading.md", "notes/links-first.md"]),
            st.lists(st.sampled_from(["study", "Reading", "Links first", "nowhere", "Study#Links"]), max_size=4),
        ),
        min_size=1,
        max_size=6,
    )
)
def test_the_link_map_carried_across_edits_equals_a_fresh_one(tmp_path_factory, edits):
    brain = make_brain(tmp_path_factory.mktemp("v"), VAULT)
    for i, (path, targets) in enumerate(edits):
        brain.snapshot().link_map()  # built, so the next commit carries it forward
        title = brain.snapshot().notes[path].title  # kept: a new title could move any link
        body = f"# {title}\n\nEdit {i}: " + " ".join(f"[[{t}]]" for t in targets) + "\n"
        brain.write(path, "replace", ME, content=body)
    snap = brain.snapshot()
    assert snap._links is not None  # carried forward, not rebuilt
    carried = snap.link_map()
    snap._links = None
    fresh = snap.link_map()
    assert carried[1] == fresh[1]


def test_a_new_title_moves_the_links_that_name_it(tmp_path: Path):
    """A link by title follows the title: the map is not carried past a commit that changes one."""
    files = dict(VAULT, **{"notes/pointer.md": b"See [[Billing service database decision]].\n"})
    brain = make_brain(tmp_path, files)
    tools = Tools(brain, asker=None)  # type: ignore[arg-type]
    assert read(tools, ReadRequest(path="notes/pointer.md"), Caller(door="owner"))["links"][0]["missing"] is True
    brain.write("notes/study.md", "replace", ME, content="# Billing service database decision\n\nPostgres.\n")
    link = read(tools, ReadRequest(path="notes/pointer.md"), Caller(door="owner"))["links"][0]
    assert link["path"] == "notes/study.md" and link["resolved_by"] == "title"
    assert {"path": "notes/pointer.md", "links": 1} in read(
        tools, ReadRequest(path="notes/study.md"), Caller(door="owner")
    )["backlinks"]
