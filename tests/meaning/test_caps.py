"""What one note may cost the meaning arm: at most `MAX_PASSAGES` passages embedded (the
rest found by its words, and the reply says so), and a worker held to a memory bound.

The model is the real one (meaningkit); the server is real, over HTTP with the MCP SDK's
client, and the workers are real spawned processes.
"""

from __future__ import annotations

import time
from pathlib import Path

import httpx
import pytest
from meaningkit import CACHE
from serverkit import call, serve

from cortex.app.server import warm_up
from cortex.brain.brain import Brain
from cortex.meaning.closeness import Meaning
from cortex.meaning.embedder import ModelFiles
from cortex.meaning.note_passages import MAX_PASSAGES, first_passages
from cortex.notes.note import parse_note
from cortex.store.git import GitStore

NOTES = {
    "notes/car.md": "# Car\n\nOur family runs a green 2019 Volvo V60 estate, bought second hand.\n",
    "notes/honeymoon.md": "# Honeymoon\n\nAfter the wedding we spent ten days in Porto and Lisbon.\n",
    "work/salary.md": "# Salary\n\nMy gross salary is 71,000 EUR a year.\n",
}


def tiny_sections(n: int, last: str = "") -> str:
    """A note of `n` one-line sections (what an import of a spreadsheet can look like)."""
    return "# Big\n\n" + "".join(f"## S{i}\n\nitem {i} ok.\n\n" for i in range(n)) + last


def test_a_note_gives_its_first_passages_only_and_the_rest_is_never_sized() -> None:
    sized: list[str] = []

    def lengths(texts: list[str]) -> list[int]:
        sized.extend(texts)
        return [len(t.split()) for t in texts]

    def cut(text: str, budget: int) -> list[str]:
        words = text.split()
        return [" ".join(words[i : i + budget]) for i in range(0, len(words), budget)]

    found, whole = first_passages(parse_note("big.md", tiny_sections(5_000)), 254, lengths, cut)
    assert len(found) == MAX_PASSAGES and not whole
    assert found[-1].heading == f"Big > S{MAX_PASSAGES - 1}"
    assert len(sized) < 3 * MAX_PASSAGES  # a title and a block a passage, and one chunk ahead
    small, whole = first_passages(parse_note("car.md", NOTES["notes/car.md"]), 254, lengths, cut)
    assert len(small) == 1 and whole


@pytest.mark.slow
def test_a_server_embeds_a_huge_note_in_part_finds_its_tail_by_words_and_says_so(
    tmp_path: Path, model: ModelFiles
) -> None:
    files = {**NOTES, "notes/big.md": tiny_sections(3_000, "## Tail\n\nThe zanzibarite sample sits in drawer 9.\n")}
    brain = tmp_path / "brain.git"
    GitStore.init(brain, {p: t.encode() for p, t in files.items()}, bare=True, message="seed")
    with serve(tmp_path, brain, CORTEX_MEANING="on") as running:
        warm_up(running.parts)
        deadline = time.time() + 120
        health: dict = {}
        while time.time() < deadline and health.get("meaning") != "ready":
            health = httpx.get(f"{running.url}/healthz", timeout=5).json()
            time.sleep(0.1)
        assert health.get("meaning") == "ready", health
        by_meaning = call(f"{running.url}/mcp", "brain_search", query="what vehicle do we own", k=3).data
        assert by_meaning["hits"][0]["path"] == "notes/car.md" and "closeness" in by_meaning["hits"][0]
        assert by_meaning["meaning"].startswith(f"meaning: on ({len(files)} notes, {MAX_PASSAGES + len(NOTES)} ")
        assert (
            f"1 note(s) embedded only in part (at most their first {MAX_PASSAGES} passages)" in (by_meaning["meaning"])
        )
        assert "found by its words only" in by_meaning["meaning"]
        tail = call(f"{running.url}/mcp", "brain_search", query="zanzibarite drawer", k=3).data
        assert tail["hits"][0]["path"] == "notes/big.md" and "zanzibarite" in tail["hits"][0]["passage"]
        asked = call(f"{running.url}/mcp", "brain_ask", question="What vehicle do we own?").data
        assert "closest passage" in asked["coverage"]  # the ask used meaning, and says what it lacked
        assert "1 note(s) embedded only in part" in asked["coverage"]
        running.parts.brain.meaning.stop()


@pytest.mark.slow
def test_a_note_past_a_workers_memory_bound_is_found_by_its_words_and_the_others_embed(
    tmp_path: Path, model: ModelFiles
) -> None:
    files = {**NOTES, "notes/big.md": tiny_sections(40_000, "## Tail\n\nThe zanzibarite sample.\n")}
    for i in range(20):  # more than a commit's few notes: they go to the worker processes
        files[f"filler/note-{i:02}.md"] = f"# Filler {i}\n\nShelf {i} holds the ledgers of year {2000 + i}.\n"
    store = GitStore.init(tmp_path / "brain.git", {p: t.encode() for p, t in files.items()}, bare=True, message="s")
    brain = Brain(store)
    snap = brain.snapshot()
    vectors = tmp_path / "v.cvec"
    # 48 MiB beyond the loaded model: the 1 MiB note's parse needs some 110 MB, the others little.
    meaning = Meaning(None, CACHE, vectors, "b", workers=1, worker_memory=48 << 20)
    assert meaning.prepare(), meaning.reason
    meaning.catch_up(snap)
    assert meaning.state == "ready"
    big = snap.blobs["notes/big.md"]
    assert len(meaning.store.get(big)) == 1 and not meaning.store.whole(big)
    assert all(meaning.store.whole(snap.blobs[p]) for p in files if p != "notes/big.md")
    assert "1 note(s) embedded only in part" in meaning.line(snap)
    again = Meaning(None, CACHE, vectors, "b")  # the saved file remembers which note is in part
    assert again.prepare() and not again.store.whole(big) and again.store.whole(snap.blobs["notes/car.md"])
