"""An ask's stamp depends on the reader's replies and the packs' order, never on when a
reply arrives (issue 62 item 2).

The sweep reads its packs one after another, in the order retrieval ranked them, and takes
the first reply that is not a miss: a later pack is not read at all. A real reader class
whose replies come after delays set per pack drives the same ask with the slow pack first,
then last; the stamp, its reason, the coverage and the packs read must be the same.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from cortex.ask.asker import Asker
from cortex.ask.pack import Pack
from cortex.ask.question import Question
from cortex.ask.readers import ReaderReply
from cortex.brain.brain import Brain
from cortex.store.git import GitStore

OXALIC = "The mite treatment is oxalic acid in December."
THYMOL = "The mite treatment is thymol in August."
# Each note holding "mite" fills a pack of its own (pack_bytes below): the first four rank
# first (the word three times), then oxalic.md (the answer), then thymol.md (retired text).
FILES = {
    **{
        f"notes/hive-{i:03d}.md": (
            f"# Hive {i}\n\nHive {i} was inspected; the queen was marked."
            + (f" Mite board {i}: mite mite mite." if i < 4 else "")
            + "\n"
        ).encode()
        for i in range(200)
    },
    "notes/oxalic.md": f"# Oxalic\n\n{OXALIC}\n".encode(),
    "notes/thymol.md": f"# Thymol\n\n> **SUPERSEDED** by notes/oxalic.md\n\n{THYMOL}\n".encode(),
}
ANSWERS = {"notes/oxalic.md": OXALIC, "notes/thymol.md": THYMOL}


class Delayed:
    """A reader that answers from the note it knows in the pack (a miss otherwise), each
    reply after the delay set for the pack's first note: the order replies would arrive in,
    were packs read side by side."""

    name = "delayed"

    def __init__(self, delays: dict[str, float]) -> None:
        self.delays = delays
        self.read_packs: list[list[str]] = []
        self._lock = threading.Lock()

    def read(self, question: Question, pack: Pack) -> ReaderReply:
        paths = [f.note.path for f in pack.files]
        time.sleep(self.delays.get(paths[0], 0.0) if paths else 0.0)
        with self._lock:
            self.read_packs.append(paths)
        for f in pack.files:
            if f.note.path in ANSWERS:
                quote = ANSWERS[f.note.path]
                return ReaderReply(reader=self.name, answer=quote, citations=[(f.tag, quote)])
        return ReaderReply(reader=self.name, not_in_brain=True)


@pytest.fixture(scope="module")
def brain(tmp_path_factory: pytest.TempPathFactory) -> Brain:
    path: Path = tmp_path_factory.mktemp("sweep") / "brain.git"
    GitStore.init(path, FILES, bare=True, message="hives")
    return Brain(GitStore(path))


def _ask(brain: Brain, delays: dict[str, float]) -> tuple[dict, list[list[str]]]:
    reader = Delayed(delays)
    reply = Asker(brain, reader, pack_bytes=150, sweep=6).ask("Which mite?", k=1)
    return dict(reply), reader.read_packs


def test_the_stamp_does_not_depend_on_which_pack_reply_arrives_first(brain: Brain) -> None:
    answer_last, read_a = _ask(brain, {"notes/oxalic.md": 0.4})  # the answering pack's reply comes last
    first_slow, read_b = _ask(brain, {"notes/hive-000.md": 0.4, "notes/oxalic.md": 0.2})
    assert answer_last["stamp"] == "VERIFIED", answer_last
    for key in ("stamp", "stamp_reason", "answer", "quotes", "coverage", "notes_read"):
        assert answer_last[key] == first_slow[key], key
    # Read in the packs' order; the sweep stops at the first answer, so the pack holding the
    # retired thymol note, which would stamp SUPERSEDED, is never read, however fast it is.
    assert read_a == read_b and read_a[-1] == ["notes/oxalic.md"], read_a
    assert [p[0] for p in read_a[:4]] == [f"notes/hive-{i:03d}.md" for i in range(4)]
    assert not any("notes/thymol.md" in p for p in read_a)
    assert "in 5 packs" in answer_last["coverage"], answer_last["coverage"]
