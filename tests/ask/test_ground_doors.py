"""VERIFIED means the notes say what the answer says, through a real server on both
trusted doors (`/mcp` with the owner token, `/s/<secret>/mcp`): names in a note's title
and headings ground an answer, a reply says whether its quotes are about the question,
and `as_of` takes the SHA a client read at.

A real HTTP server under uvicorn, the MCP SDK's own client, and the real `anthropic` SDK
as brain_ask's reader against a local stub of the Messages API that answers what a test
scripts.
"""

from __future__ import annotations

from contextlib import closing
from pathlib import Path

import pytest
from conftest import TOKEN, URL_SECRET, call, serve

from cortex.app.evaluate import StubMessagesServer, unpack

pytestmark = pytest.mark.slow  # every test here takes 0.3 s or more

TRIP = (
    "---\ntitle: Lisbon trip, May 2026\n---\n"
    "## Flights\n\nFlying TAP TP1337 from Berlin at 07:40, seat 14C.\n\n"
    "## Hotel\n\nThe room at Casa Azul is booked for four nights.\n"
)
FLIGHT = "Flying TAP TP1337 from Berlin at 07:40"
LISBON = "Your flight to Lisbon leaves at 07:40."


class Scripted(StubMessagesServer):
    """The Messages API stub: answers `answer`, citing each (path, quote) of `cites`."""

    def __init__(self):
        self.answer, self.cites = "", [("notes/trip.md", FLIGHT)]
        super().__init__(self.reply)

    def reply(self, body: dict) -> tuple[int, dict]:
        tags = {p: tag for p, _, tag, _ in unpack(body["messages"][0]["content"])[0]}
        citations = [{"tag": tags[p], "quote": q} for p, q in self.cites if p in tags]
        return self.tool_reply({"answer": self.answer, "citations": citations, "not_in_brain": not citations})


@pytest.fixture(scope="module")
def stub():
    with closing(Scripted()) as s:
        yield s


@pytest.fixture
def running(tmp_path: Path, brain_path: Path, stub, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_BASE_URL", stub.url)
    with serve(tmp_path, brain_path, ANTHROPIC_API_KEY="sk-test-stub") as server:
        owner = f"{server.url}/mcp"
        assert call(owner, "brain_write", path="notes/trip.md", mode="create", content=TRIP).error is None
        server.doors = [(owner, TOKEN), (f"{server.url}/s/{URL_SECRET}/mcp", None)]
        yield server


def on_both(running, tool: str, **args) -> list[dict]:
    """The tool's reply on each trusted door (the same server, the same brain)."""
    replies = []
    for url, token in running.doors:
        r = call(url, tool, token=token, **args)
        assert r.error is None, (url, r.error)
        replies.append(r.data)
    return replies


# -- names in the title and the heading path ------------------------------------------


def test_a_name_in_the_cited_notes_title_grounds_an_ask(running, stub):
    stub.answer, stub.cites = LISBON, [("notes/trip.md", FLIGHT)]
    for reply in on_both(running, "brain_ask", question="When does my flight to Lisbon leave?"):
        assert reply["stamp"] == "VERIFIED", reply["stamp_reason"]
    stub.answer = "Your flight to Porto leaves at 07:40."  # a name the note has nowhere
    for reply in on_both(running, "brain_ask", question="When does my flight to Porto leave?"):
        assert reply["stamp"] == "UNVERIFIED"
        assert reply["stamp_reason"].startswith("the answer says Porto; no quote contains it")


def test_a_name_in_the_cited_notes_title_grounds_a_verify(running):
    cites = [{"path": "notes/trip.md", "quote": FLIGHT}]
    for reply in on_both(running, "brain_verify", answer=LISBON, citations=cites):
        assert reply["stamp"] == "VERIFIED", reply["stamp_reason"]
    # A date stays in the quote: the title's "May 2026" grounds no date of the answer.
    for reply in on_both(running, "brain_verify", answer="You fly to Lisbon on 3 May 2026.", citations=cites):
        assert reply["stamp"] == "UNVERIFIED"
        assert reply["stamp_reason"].startswith("the answer says 3 May 2026; no quote contains it")
