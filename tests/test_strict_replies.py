"""Small refusals and strict replies (issue 21): an edit's `find` counts overlapping
occurrences, no write grows a note past the content cap, and every reply is strict JSON."""

from __future__ import annotations

import json

import pytest
from conftest import call

from cortex.brain import Actor, Brain
from cortex.errors import BadInput, Conflict
from cortex.gitstore import GitStore
from cortex.paths import MAX_CONTENT_BYTES

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
