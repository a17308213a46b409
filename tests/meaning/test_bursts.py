"""Writes and the meaning arm: a burst of writes is embedded once, after it, and no reply
waits for an embed. A real brain, the real model, the arm's own thread following the corpus.

In CI (CI=true) a missing model fails these tests; elsewhere they skip.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest
from meaningkit import CACHE

from cortex.brain.brain import Brain
from cortex.brain.trailers import Actor
from cortex.meaning import closeness
from cortex.meaning.closeness import Meaning, settled
from cortex.meaning.embedder import ModelFiles
from cortex.store.git import GitStore

ME = Actor(door="owner", tool="brain_write", client="pytest")
SEED = {
    "profile.md": "# Mara Lind\n\nI live in Vellmoor.\n",
    "notes/car.md": "# Car\n\nOur family runs a green 2019 Volvo V60 estate.\n",
    "notes/sourdough.md": "# Sourdough\n\nFeed the starter at 1:1:1 every morning.\n",
}


def _until(check, seconds: float = 60.0) -> None:
    deadline = time.monotonic() + seconds
    while not check():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)


def _serving(tmp_path: Path) -> tuple[Brain, Meaning]:
    store = GitStore.init(tmp_path / "brain.git", {p: t.encode() for p, t in SEED.items()}, bare=True, message="seed")
    brain = Brain(store)
    meaning = Meaning(None, CACHE, None, "test-brain")
    brain.meaning = meaning
    brain.snapshot()  # the corpus built, as a server's first search has it
    meaning.start(brain.corpus)
    _until(lambda: meaning.state == "ready" or meaning.state == "unavailable")
    assert meaning.state == "ready", meaning.reason
    return brain, meaning


def test_settled_waits_for_a_quiet_head_or_for_the_longest_wait() -> None:
    q, most = closeness.QUIET_S, closeness.MOST_WAIT_S
    assert not settled(100.0, changed_at=100.0, waiting_since=100.0)
    assert not settled(100.0 + q / 2, changed_at=100.0, waiting_since=100.0)
    assert settled(100.0 + q, changed_at=100.0, waiting_since=100.0)
    # a head that keeps moving is embedded once its first change is MOST_WAIT_S old
    assert not settled(100.0 + most - 0.01, changed_at=100.0 + most - 0.02, waiting_since=100.0)
    assert settled(100.0 + most, changed_at=100.0 + most - 0.01, waiting_since=100.0)


def test_a_burst_of_writes_is_embedded_once_after_it(
    tmp_path: Path,
    model: ModelFiles,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A quiet time far above a write's (ms in-process), so the burst is one burst on a loaded machine too.
    monkeypatch.setattr(closeness, "QUIET_S", 3.0)
    brain, meaning = _serving(tmp_path)
    try:
        before = meaning.counts["embedded"]
        # Four new notes, each created and appended to twice: 12 writes, 12 heads.
        for round_ in range(3):
            for i in range(4):
                if round_ == 0:
                    brain.write(f"notes/burst-{i}.md", "create", ME, content=f"# Burst {i}\n\nA line about hive {i}.\n")
                else:
                    brain.write(f"notes/burst-{i}.md", "append", ME, content=f"Then round {round_} of hive {i}.")
                assert meaning.counts["embedded"] == before, "a note was embedded during the burst"
        head = brain.snapshot()
        # /healthz says the newest writes wait for the burst to pause, then that it is done
        _until(lambda: "meaning_waiting" in meaning.status())
        _until(lambda: meaning.ready_for(head))
        assert "meaning_waiting" not in meaning.status()
        # Each note's last version only: one passage each (short notes), embedded once.
        assert meaning.counts["embedded"] - before == 4
        assert all(meaning.store.get(head.blobs[f"notes/burst-{i}.md"]) is not None for i in range(4))
    finally:
        meaning.stop()


def test_a_search_never_waits_for_the_arm_embedding_a_write(
    tmp_path: Path,
    model: ModelFiles,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The arm embeds a write's passages with the query's own model session; a search's
    query is embedded meanwhile, not after. The arm is slowed to 3 s a passage, so an
    embed that made the search wait would still be under way when it returned."""
    monkeypatch.setattr(closeness, "QUIET_S", 0.1)
    brain, meaning = _serving(tmp_path)
    try:
        meaning.pace = 3.0
        before = meaning.counts["embedded"]
        brain.write("notes/bees.md", "create", ME, content="# Bees\n\nThe hives stand by the orchard wall.\n")
        head = brain.snapshot()
        _until(lambda: meaning._target[0] == head.sha)  # the arm has begun on the write's head
        found: dict[str, object] = {}
        searcher = threading.Thread(target=lambda: found.update(c=meaning.closeness(head, "what vehicle do we own")))
        searcher.start()
        searcher.join(timeout=60)
        assert not searcher.is_alive()
        assert meaning.counts["embedded"] == before, "the search waited for the embed"
        assert found["c"] is not None
        _until(lambda: meaning.ready_for(head))
        assert meaning.counts["embedded"] - before == 1
    finally:
        meaning.stop()
