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
from serverkit import TOKEN, URL_SECRET, call, serve

from cortex.app.eval_doubles import StubMessagesServer, unpack

pytestmark = pytest.mark.slow  # every test here takes 0.3 s or more

TRIP = (
    "---\ntitle: Lisbon trip, May 2026\n---\n"
    "## Flights\n\nFlying TAP TP1337 from Berlin at 07:40, seat 14C.\n\n"
    "## Hotel\n\nThe room at Casa Azul is booked for four nights.\n"
)
FLIGHT = "Flying TAP TP1337 from Berlin at 07:40"
LISBON = "Your notes say: Flying TAP TP1337 from Berlin at 07:40, seat 14C."  # the quote's own words, framed
WITH_TITLE = "Flying TAP TP1337 from Berlin to Lisbon at 07:40."  # a word of the note's title added


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


def test_a_name_from_the_title_is_other_words_and_the_units_are_offered_on_ask(running, stub):
    """Issue 63: VERIFIED is the notes' own words; a name the answer takes from the title is not."""
    stub.answer, stub.cites = LISBON, [("notes/trip.md", FLIGHT)]
    for reply in on_both(running, "brain_ask", question="When does my flight to Lisbon leave?"):
        assert reply["stamp"] == "VERIFIED", reply["stamp_reason"]
    stub.answer = WITH_TITLE
    for reply in on_both(running, "brain_ask", question="When does my Lisbon flight leave?"):
        assert (reply["stamp"], reply["rule"]) == ("BEYOND QUOTES", "other-words"), reply["stamp_reason"]
        assert "the answer has 'to Lisbon'" in reply["stamp_reason"]
        assert reply["verified_answer"].startswith(f"Your notes say: {FLIGHT}")


def test_a_name_or_date_the_units_lack_is_never_verified_on_verify(running):
    cites = [{"path": "notes/trip.md", "quote": FLIGHT}]
    for reply in on_both(running, "brain_verify", answer=LISBON, citations=cites):
        assert reply["stamp"] == "VERIFIED", reply["stamp_reason"]
    for answer in (WITH_TITLE, "You fly to Lisbon on 3 May 2026.", "Your flight to Porto leaves at 07:40."):
        for reply in on_both(running, "brain_verify", answer=answer, citations=cites):
            assert reply["stamp"] == "BEYOND QUOTES", (answer, reply["stamp_reason"])
    for reply in on_both(running, "brain_verify", answer="Flying TAP TP1337 from Berlin at 09:40.", citations=cites):
        assert (reply["stamp"], reply["rule"]) == ("UNVERIFIED", "value-conflict"), reply["stamp_reason"]
        assert reply["stamp_reason"].startswith("the answer says 09:40; the quote says 07:40")


# -- as_of: the SHA a client read at ------------------------------------------------------

MOVED = "Flying TAP TP1337 from Berlin at 09:15"


@pytest.fixture
def two_versions(running) -> tuple[str, str]:
    """(the SHA the trip note was first written at, the head after its flight moved)."""
    owner = running.doors[0][0]
    old = call(owner, "brain_read", path="notes/trip.md").data["sha"]
    moved = TRIP.replace("07:40", "09:15")
    r = call(owner, "brain_write", path="notes/trip.md", mode="replace", content=moved)
    assert r.error is None, r.error
    return old, r.data["sha"]


def test_verify_at_the_sha_a_client_read_checks_that_commits_bytes(running, two_versions):
    old, head = two_versions
    cites = [{"path": "notes/trip.md", "quote": FLIGHT}]
    for as_of in (old, old[:10], old[:7].upper()):
        for reply in on_both(running, "brain_verify", answer=LISBON, citations=cites, as_of=as_of):
            assert reply["stamp"] == "VERIFIED", (as_of, reply["stamp_reason"])
            assert reply["sha"] == old
            assert f"at sha {old[:12]}" in reply["coverage"]
    # At the head the flight has moved: the old quote is gone, the new one verifies.
    for reply in on_both(running, "brain_verify", answer=LISBON, citations=cites):
        assert reply["stamp"] == "UNVERIFIED" and reply["sha"] == head
        assert "quote not found in notes/trip.md" in reply["stamp_reason"]
    moved = [{"path": "notes/trip.md", "quote": MOVED}]
    for reply in on_both(running, "brain_verify", answer=f"{MOVED}, seat 14C.", citations=moved, as_of=head):
        assert reply["stamp"] == "VERIFIED" and reply["sha"] == head


def test_search_and_ask_take_a_sha(running, stub, two_versions):
    old, head = two_versions
    for reply in on_both(running, "brain_search", query="TP1337", as_of=old[:12]):
        assert reply["sha"] == old
        assert "07:40" in reply["hits"][0]["passage"]
    stub.answer, stub.cites = LISBON, [("notes/trip.md", FLIGHT)]
    for reply in on_both(running, "brain_ask", question="When does my flight to Lisbon leave?", as_of=old):
        assert reply["sha"] == old
        assert reply["stamp"] == "VERIFIED", reply["stamp_reason"]
    for reply in on_both(running, "brain_ask", question="When does my flight to Lisbon leave?"):
        assert reply["sha"] == head and reply["stamp"] == "UNVERIFIED"


def test_an_iso_time_still_works_and_an_unknown_sha_is_a_one_line_error(running, two_versions):
    _, head = two_versions
    cites = [{"path": "notes/trip.md", "quote": MOVED}]
    for reply in on_both(
        running, "brain_verify", answer=f"{MOVED}, seat 14C.", citations=cites, as_of="2999-01-01T00:00:00Z"
    ):
        assert reply["sha"] == head and reply["stamp"] == "VERIFIED"
    calls = [
        ("brain_search", {"query": "TP1337"}),
        ("brain_ask", {"question": "When does my flight leave?"}),
        ("brain_verify", {"answer": f"{MOVED}, seat 14C.", "citations": cites}),
    ]
    for url, token in running.doors:
        for tool, args in calls:
            r = call(url, tool, token=token, as_of="deadbeef0", **args)
            assert r.error is not None and r.error.endswith(": unknown commit deadbeef0"), (tool, r.error)
            assert "\n" not in r.error


# -- does the answer's evidence address the question ---------------------------------------


def test_verify_with_a_question_says_whether_the_quotes_address_it(running):
    cites = [{"path": "notes/trip.md", "quote": FLIGHT}]
    for reply in on_both(
        running, "brain_verify", answer=LISBON, citations=cites, question="Which flight is to Lisbon?"
    ):
        assert reply["addresses_question"] is True and "missing_terms" not in reply
        assert reply["stamp"] == "VERIFIED"
        assert "another question" not in reply["stamp_reason"]
    # The quote verifies, but it is about a flight, not about the hotel the question asks for.
    asked = "Which hotel did I book in Lisbon?"
    for reply in on_both(running, "brain_verify", answer=LISBON, citations=cites, question=asked):
        assert reply["stamp"] == "VERIFIED"
        assert reply["addresses_question"] is False and reply["missing_terms"] == ["hotel", "book"]
        assert reply["stamp_reason"].endswith(
            'but no quote, nor its note\'s title, aliases or headings, mentions "hotel" or "book" '
            "of the question: the quotes may answer another question"
        )
    for reply in on_both(running, "brain_verify", answer=LISBON, citations=cites):
        assert "addresses_question" not in reply and "missing_terms" not in reply


def test_ask_says_whether_its_quotes_address_the_question(running, stub):
    stub.answer, stub.cites = LISBON, [("notes/trip.md", FLIGHT)]
    for reply in on_both(running, "brain_ask", question="Which flight is to Lisbon?"):
        assert (reply["stamp"], reply["addresses_question"]) == ("VERIFIED", True)
    for reply in on_both(running, "brain_ask", question="Which TAP flight is booked from Berlin?"):
        assert reply["stamp"] == "VERIFIED"
        assert reply["addresses_question"] is False and reply["missing_terms"] == ["booked"]
        assert 'mentions "booked" of the question' in reply["stamp_reason"]
    stub.cites = []  # nothing found: no quote, so nothing to flag
    for reply in on_both(running, "brain_ask", question="Which ferry goes to Madeira?"):
        assert reply["stamp"] in ("NOT IN BRAIN", "UNVERIFIED")
        assert "addresses_question" not in reply
