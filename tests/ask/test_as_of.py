"""`as_of` on search, ask and verify: a commit SHA pins the notes' bytes and an ISO time
also dates the claims (`Brain.day_of`), in process over a real Git repository."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

from cortex.ask.asker import Asker
from cortex.ask.readers import OfflineReader
from cortex.brain.brain import Brain
from cortex.brain.trailers import Actor
from cortex.errors import BadInput
from cortex.store.git import GitStore

ME = Actor("owner", "brain_write", "pytest")
OFFER = (
    "---\ntitle: Roof offer\nvalid_until: 2026-03-10\n---\nThe roofer offered to fix the north slope for 2,400 EUR.\n"
)
QUOTE = "The roofer offered to fix the north slope for 2,400 EUR."


@pytest.fixture
def world(brain_path: Path):
    """(brain, asker, the SHA the offer was written at, a setter for the clock)."""
    now = [dt.datetime(2026, 3, 1, 9, tzinfo=dt.UTC)]
    brain = Brain(GitStore(brain_path), clock=lambda: now[0])
    sha = brain.write("notes/roof.md", "create", ME, content=OFFER)["sha"]

    def at(day: int) -> None:
        now[0] = dt.datetime(2026, 3, day, 9, tzinfo=dt.UTC)

    return brain, Asker(brain, OfflineReader()), sha, at


def test_day_of_judges_a_sha_on_today_and_a_time_on_its_own_day(world):
    brain, _, sha, at = world
    at(20)
    assert brain.day_of(None) == (dt.date(2026, 3, 20), False)
    assert brain.day_of(sha) == brain.day_of(sha[:7].upper()) == (dt.date(2026, 3, 20), False)
    assert brain.day_of("2026-03-05") == (dt.date(2026, 3, 5), True)
    assert brain.day_of("2026-03-05T23:30:00-02:00") == (dt.date(2026, 3, 6), True)
    with pytest.raises(BadInput, match="not an ISO-8601 time"):
        brain.day_of("last tuesday")


def test_a_claim_expired_since_the_sha_is_not_current_at_that_sha(world):
    brain, asker, sha, at = world
    cites = [{"path": "notes/roof.md", "quote": QUOTE}]
    answer = "The roofer offered to fix the north slope for 2,400 EUR."
    assert asker.verify(answer, cites, as_of=sha)["stamp"] == "VERIFIED"
    at(20)  # the offer ran out on the 10th: verifying at the SHA a client read does not revive it
    reply = asker.verify(answer, cites, as_of=sha)
    assert (reply["stamp"], reply["sha"]) == ("SUPERSEDED", sha)
    # An ISO time dates the claims: as of the 5th the offer held.
    assert asker.verify(answer, cites, as_of="2026-03-05")["stamp"] == "VERIFIED"


def test_ask_at_a_sha_reads_that_commit(world):
    brain, asker, sha, _ = world
    brain.write("notes/roof.md", "replace", ME, content=OFFER.replace("2,400", "2,900"))
    reply = asker.ask("How much did the roofer offer for the north slope?", as_of=sha[:9])
    assert reply["sha"] == sha
    assert reply["stamp"] == "VERIFIED", reply["stamp_reason"]
    assert "2,400 EUR" in reply["quotes"][0]["quote"]
    with pytest.raises(BadInput, match="unknown commit 0badc0ffee"):
        asker.ask("How much did the roofer offer?", as_of="0badc0ffee")
