"""Small refusals and strict replies: an edit's `find` counts overlapping
occurrences, no write grows a note past the content cap, every reply is strict JSON, and a
move never changes where another link points."""

from __future__ import annotations

import json

import pytest
from serverkit import call

from cortex.brain.brain import Brain
from cortex.brain.trailers import Actor
from cortex.errors import BadInput, Conflict
from cortex.notes.paths import MAX_CONTENT_BYTES
from cortex.store.git import GitStore

ME = Actor("owner", "brain_write", "pytest")


@pytest.fixture
def brain(brain_path) -> Brain:
    return Brain(GitStore(brain_path))


def test_edit_counts_overlapping_occurrences_of_find(brain):
    brain.write("notes/ab.md", "create", ME, content="ab ab ab\n")
    head = brain.store.head()
    with pytest.raises(Conflict, match="find occurs 2 times in notes/ab.md; it must occur exactly once"):
        brain.write("notes/ab.md", "edit", ME, find="ab ab", content="x")
    assert brain.store.head() == head  # nothing written
    brain.write("notes/ab.md", "edit", ME, find="ab ab ab", content="cd")
    assert brain.read("notes/ab.md")[2].text == "cd\n"


@pytest.mark.parametrize("mode", ["append", "edit"])
def test_no_write_grows_a_note_past_the_content_cap(brain, mode):
    big = "x" * (MAX_CONTENT_BYTES - 10)
    brain.write("notes/big.md", "create", ME, content=big)
    head = brain.store.head()
    args = {"content": "y" * 100} if mode == "append" else {"find": "xxxx", "content": "y" * 100}
    if mode == "edit":
        brain.write("notes/big.md", "replace", ME, content="xxxx" + "z" * (MAX_CONTENT_BYTES - 20))
        head = brain.store.head()
    with pytest.raises(BadInput, match=f"after this {mode}; the limit is {MAX_CONTENT_BYTES:,}; nothing was written"):
        brain.write("notes/big.md", mode, ME, **args)
    assert brain.store.head() == head


@pytest.mark.slow
def test_a_nan_in_frontmatter_is_a_string_in_strict_json(server):
    url = f"{server.url}/mcp"
    body = "---\ntitle: Odd numbers\nratio: .nan\nceiling: .inf\nfloor: -.inf\n---\nA note with odd numbers.\n"
    assert call(url, "brain_write", path="notes/odd.md", mode="create", content=body).error is None
    r = call(url, "brain_read", path="notes/odd.md")
    assert r.error is None, r.error

    def refuse(token):
        raise ValueError(f"not strict JSON: {token}")

    data = json.loads(r.text, parse_constant=refuse)  # Python's parser would take NaN otherwise
    assert data["frontmatter"] == {"title": "Odd numbers", "ratio": "nan", "ceiling": "inf", "floor": "-inf"}


# -- a move never changes where another link points -------------------------------------


def test_a_move_that_would_capture_another_notes_link_rewrites_it_to_its_old_target(brain):
    brain.write("private/Budget.md", "create", ME, content="# Budget\n\nThe private budget.\n")
    brain.write("notes/foo.md", "create", ME, content="# Foo\n\nSee [[Home]].\n")
    brain.write("notes/Home.md", "create", ME, content="# Home\n")
    brain.write("notes/reader.md", "create", ME, content="Budget: [[Budget]], foo: [[foo]].\n")
    r = brain.write("notes/foo.md", "move", ME, to="notes/Budget.md")
    assert r["links_rewritten"] == ["notes/reader.md"]
    text = brain.read("notes/reader.md")[2].text
    assert text == "Budget: [[private/Budget]], foo: [[notes/Budget]].\n"  # the bare name is now shared
    # Both links point where they meant: the private budget, and the moved note.
    snap = brain.snapshot()
    from cortex.notes.links import LinkResolver

    resolver = LinkResolver(snap.notes)
    assert [resolver.resolve(lk.target, "notes/reader.md") for lk in snap.notes["notes/reader.md"].links] == [
        "private/Budget.md",
        "notes/Budget.md",
    ]


def test_the_moved_notes_own_links_keep_their_targets_in_its_new_folder(brain):
    brain.write("a/Note.md", "create", ME, content="# A note\n")
    brain.write("b/Note.md", "create", ME, content="# B note\n")
    brain.write("a/x.md", "create", ME, content="Nearest: [[Note]].\n")
    r = brain.write("a/x.md", "move", ME, to="b/x.md")
    assert r["links_rewritten"] == ["b/x.md"]
    assert brain.read("b/x.md")[2].text == "Nearest: [[a/Note]].\n"


def test_accepting_an_append_that_would_pass_the_cap_is_refused(brain, redis_proc):
    from cortex.guests.queue import ProposalQueue
    from cortex.guests.review import Review

    brain.write("notes/big.md", "create", ME, content="x" * (MAX_CONTENT_BYTES - 10))
    queue = ProposalQueue(redis_proc.url, prefix="cap:")
    try:
        proposal, _ = queue.admit("guest", "notes/big.md", "append", "y" * 100, "", 1000)
        head = brain.store.head()
        with pytest.raises(BadInput, match=r"after this accept \(append\); the limit is"):
            Review(brain, queue).accept(Actor(door="owner", tool="brain_accept"), proposal.id)
        assert brain.store.head() == head
    finally:
        queue.close()
