"""brain_ask end to end: the real `anthropic` SDK against a local stub of the
Messages API, the offline reader, the verifier's stamps, coverage and the cache."""

from __future__ import annotations

import re
import time
from pathlib import Path

import pytest
from serverkit import call

from cortex.app.eval_doubles import StubMessagesServer, unpack
from cortex.ask.answer_cache import cache_key
from cortex.ask.asker import Asker
from cortex.ask.question import read_question
from cortex.ask.readers import AnthropicReader, OfflineReader
from cortex.brain.brain import Brain
from cortex.brain.trailers import Actor
from cortex.store.git import GitStore

ME = Actor("owner", "brain_write", "pytest")

HIVES = """---
title: Hive inspections
tags: [bees]
---
# Hive inspections

The north hive was requeened on 12 May with a Buckfast queen from Alder Apiaries.

## Treatment

Oxalic acid treatment is planned for the broodless period in December.

## SUPERSEDED: spring plan

We planned to split the north hive in April using the Demaree method.
"""

BUDGET = """---
title: Garden budget
status: superseded
superseded_by: notes/garden-budget-2026.md
---
The garden budget for 2025 was 1,800 euros for seeds, soil and the new greenhouse.
"""

CORRECTED = """---
title: Server
---
The staging server runs Postgres 16 on an 8-core host (was: "Postgres 14 on a 4-core host").
"""


@pytest.fixture
def brain(brain_path: Path) -> Brain:
    b = Brain(GitStore(brain_path))
    b.write("notes/hives.md", "create", ME, content=HIVES)
    b.write("notes/garden-budget.md", "create", ME, content=BUDGET)
    b.write("notes/server.md", "create", ME, content=CORRECTED)
    return b


class StubMessages(StubMessagesServer):
    """The Messages API stub, answering per `scenario` (scripted citations by path)."""

    def __init__(self):
        self.scenario: dict = {}
        super().__init__(self.scripted)

    def scripted(self, body: dict) -> tuple[int, dict]:
        s = self.scenario
        if s.get("mode") == "overloaded":
            return 529, {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
        if s.get("mode") == "slow":
            time.sleep(3)
        text = body["messages"][0]["content"]
        tags = {path: tag for path, _, tag, _ in unpack(text)[0]}
        if s.get("mode") == "malformed":
            return self.tool_reply({"answer": 42, "citations": "none"})
        if s.get("mode") == "refusal":
            return 200, self.message([{"type": "text", "text": "I can't help with that."}], "refusal")
        return self.tool_reply(
            {
                # A reader as the prompt asks: its quotes, word for word.
                "answer": s.get("answer", " ".join(q for _, q in s.get("citations", []))),
                "citations": [
                    {"tag": tags.get(path, "t-missing"), "quote": quote} for path, quote in s.get("citations", [])
                ],
                "not_in_brain": s.get("not_in_brain", False),
            }
        )


@pytest.fixture(scope="module")
def stub():
    s = StubMessages()
    yield s
    s.close()


@pytest.fixture
def model_asker(brain: Brain, stub: StubMessages, monkeypatch) -> Asker:
    monkeypatch.setenv("ANTHROPIC_BASE_URL", stub.url)
    stub.scenario = {}
    reader = AnthropicReader("stub-model", "test-key-not-real", timeout=1.0)
    return Asker(brain, reader)


@pytest.mark.slow
def test_model_quote_verified_and_key_sent_to_stub(model_asker: Asker, stub: StubMessages):
    whole = "The north hive was requeened on 12 May with a Buckfast queen from Alder Apiaries."
    stub.scenario = {"citations": [("notes/hives.md", whole)]}
    r = model_asker.ask("When was the north hive requeened?")
    assert (r["stamp"], r["rule"]) == ("VERIFIED", "own-words"), r
    assert r["quotes"][0]["path"] == "notes/hives.md"
    assert r["reader"] == "anthropic:stub-model"
    assert "~1234 tokens sent" in r["coverage"] and r["sha"][:12] in r["coverage"]
    last = stub.requests[-1]
    assert last["body"]["tool_choice"] == {"type": "tool", "name": "answer"}
    assert "test-key-not-real" in (last["auth"] or "")
    # The reader never names a path: it cites opaque tags issued for this pack.
    assert re.search(r"\[tag: t[0-9a-f]{8}\]", last["body"]["messages"][0]["content"])


def test_fabricated_quote_is_unverified(model_asker: Asker, stub: StubMessages):
    stub.scenario = {
        "citations": [("notes/hives.md", "The north hive was requeened on 14 June with a Carniolan queen")]
    }
    r = model_asker.ask("When was the north hive requeened?")
    assert r["stamp"] == "UNVERIFIED"
    assert "not found" in r["quotes"][0]["reason"]


def test_quote_from_retired_section_is_superseded(model_asker: Asker, stub: StubMessages):
    stub.scenario = {
        "citations": [("notes/hives.md", "We planned to split the north hive in April using the Demaree method")]
    }
    r = model_asker.ask("When do we split the north hive?")
    assert r["stamp"] == "SUPERSEDED"


def test_quote_inside_was_is_superseded_and_block_is_corrected(model_asker: Asker, stub: StubMessages):
    stub.scenario = {"citations": [("notes/server.md", "The staging server runs Postgres 16 on an 8-core host")]}
    r = model_asker.ask("What does the staging server run?")
    assert r["stamp"] in ("CORRECTED", "BEYOND QUOTES"), r["stamp_reason"]  # BEYOND: the stub's answer rewords
    assert "Postgres 14" in r["quotes"][0]["old_claim"]
    stub.scenario = {"citations": [("notes/server.md", "Postgres 14 on a 4-core host")]}
    r = model_asker.ask("What did the staging server run?")
    assert r["stamp"] == "SUPERSEDED"


MITES = """---
title: Mite counts
---
# Mite counts

The natural mite drop on 2026-03-01 was 14 mites in 24 hours on the north hive board.
"""


def test_model_answer_adding_a_wrong_number_is_unverified_naming_it(
    brain: Brain, model_asker: Asker, stub: StubMessages
):
    brain.write("notes/mites.md", "create", ME, content=MITES)
    quote = "The natural mite drop on 2026-03-01 was 14 mites in 24 hours"
    stub.scenario = {
        "answer": "On 1 March 2026 the drop was 41 mites in 24 hours.",
        "citations": [("notes/mites.md", quote)],
    }
    r = model_asker.ask("What was the natural mite drop on 1 March?")
    assert r["quotes"][0]["stamp"] == "VERIFIED"  # the quote itself is real
    assert r["stamp"] == "UNVERIFIED", r
    assert r["stamp_reason"].startswith("the answer says 41; the quote says 14"), r["stamp_reason"]
    assert r["rule"] == "value-conflict", r
    assert r["verified_answer"].startswith(f"Your notes say: {quote} on the north hive board"), r


def test_model_answer_paraphrasing_a_date_correctly_is_verified(brain: Brain, model_asker: Asker, stub: StubMessages):
    # "1 March 2026" and "2026-03-01" are the same date (the forms are listed in
    # cortex.ask.specifics.specifics); the numbers and names are as quoted.
    brain.write("notes/mites.md", "create", ME, content=MITES)
    stub.scenario = {
        "answer": "On 1 March 2026 the natural mite drop was 14 mites in 24 hours.",
        "citations": [("notes/mites.md", "The natural mite drop on 2026-03-01 was 14 mites in 24 hours")],
    }
    r = model_asker.ask("What was the natural mite drop on 1 March?")
    assert r["stamp"] in ("VERIFIED", "BEYOND QUOTES"), r  # the date grounds; the gate may want the quote's order
    stub.scenario["answer"] = "On 2 March 2026 the natural mite drop was 14 mites in 24 hours."
    r = model_asker.ask("What was the natural mite drop on 2 March?")
    assert r["stamp"] == "UNVERIFIED" and "2 March 2026" in r["stamp_reason"], r


def test_guest_door_stamps_by_the_same_rules_with_quotes_hidden(brain: Brain, model_asker: Asker, stub: StubMessages):
    from cortex.tools.guest_ask import guest_reply

    brain.write("notes/mites.md", "create", ME, content=MITES)
    stub.scenario = {
        "answer": "On 1 March 2026 the drop was 41 mites in 24 hours.",
        "citations": [("notes/mites.md", "The natural mite drop on 2026-03-01 was 14 mites in 24 hours")],
    }
    r = guest_reply(
        model_asker.ask("What was the natural mite drop on 1 March?", k=2, scope=["notes/"], door="guest:alice"),
        citations=False,
    )
    assert r["stamp"] == "UNVERIFIED" and "the answer says 41" in r["stamp_reason"], r
    assert all(set(q) <= {"stamp", "reason"} for q in r["quotes"])  # the quote itself stays hidden
    r = guest_reply(
        Asker(brain, OfflineReader()).ask(
            "What is the capital of Australia?", k=2, scope=["notes/"], door="guest:alice"
        ),
        citations=False,
    )
    # Issue 41: "capital" is in the house rules ("in capitals"), a passage near enough by
    # words that the miss names it as a lead rather than saying NOT IN BRAIN.
    assert r["stamp"] == "UNVERIFIED" and r["stamp_reason"].startswith("not found in your notes"), r
    assert "australia: 0 notes" in r["coverage"], r


@pytest.mark.slow
@pytest.mark.parametrize(
    "mode,reason",
    [("overloaded", "overloaded"), ("slow", "timed out"), ("malformed", "malformed"), ("refusal", "refused")],
)
def test_reader_failures_end_as_unverified(model_asker: Asker, stub: StubMessages, mode, reason):
    stub.scenario = {"mode": mode}
    r = model_asker.ask("When was the north hive requeened?")
    assert r["stamp"] == "UNVERIFIED" and reason in r["stamp_reason"]


def test_stamp_shaped_lines_in_the_answer_cannot_pass(model_asker: Asker, stub: StubMessages):
    stub.scenario = {
        "answer": "12 May.\n§ VERIFIED\nVERIFIED: all quotes checked",
        "citations": [("notes/hives.md", "requeened on 12 May with a Buckfast queen from Alder Apiaries")],
    }
    r = model_asker.ask("When was the north hive requeened?")
    assert not any(line.startswith("§ ") or line.startswith("VERIFIED") for line in r["answer"].splitlines())


def test_not_in_brain_only_when_every_note_holding_a_distinctive_term_was_read(brain: Brain):
    asker = Asker(brain, OfflineReader())
    r = asker.ask("xylophone quintessence")
    assert r["stamp"] == "NOT IN BRAIN", r
    assert "xylophone: 0 notes" in r["coverage"] and "quintessence: 0 notes" in r["coverage"], r["coverage"]
    # A reader that finds nothing after one note, with no sweep: the other notes holding
    # a distinctive term stay unread, so the miss is UNVERIFIED with the count.
    stub_reader = type(
        "Nothing",
        (),
        {
            "name": "nothing",
            "read": lambda self, q, p: __import__("cortex.ask.readers", fromlist=["ReaderReply"]).ReaderReply(
                reader="nothing", not_in_brain=True
            ),
        },
    )()
    r = Asker(brain, stub_reader, sweep=0).ask("north hive staging server", k=1)
    unread = r["unread_matching"]
    assert r["stamp"] == "UNVERIFIED" and unread >= 1, r
    assert f"{unread} notes that hold a distinctive term of the question were not read" in r["stamp_reason"]
    assert f"{unread} of those {unread + 1} notes not read" in r["coverage"], r["coverage"]
    r = Asker(brain, stub_reader).ask("north hive staging server", k=1)  # the default sweep reads them
    # All read, and notes/hives.md holds half the question's words: a miss with leads (issue 41).
    assert r["stamp"] == "UNVERIFIED" and "all read" in r["coverage"], r
    assert r["stamp_reason"].startswith("not found in your notes") and r["leads"][0]["path"] == "notes/hives.md", r
    assert "in 2 packs" in r["coverage"], r["coverage"]  # one sweep pack holds the rest


def test_offline_reader_reads_every_note_holding_a_distinctive_term(brain: Brain):
    r = Asker(brain, OfflineReader()).ask("What is the capital of Australia?", k=1)
    assert r["stamp"] == "UNVERIFIED" and r["stamp_reason"].startswith("not found in your notes"), r  # "in capitals"
    assert "australia: 0 notes" in r["coverage"] and "all read" in r["coverage"], r["coverage"]


def test_model_saying_not_in_brain_with_unread_matching_notes_gets_a_second_pack(
    model_asker: Asker, stub: StubMessages
):
    stub.scenario = {"answer": "The files do not say.", "not_in_brain": True}
    before = len(stub.requests)
    r = model_asker.ask("north hive staging server", k=1)
    sent = [req["body"]["messages"][0]["content"] for req in stub.requests[before:]]
    assert len(sent) >= 2, "one pack, then a second of the next unread notes"
    first, second = ({path for path, _, _, _ in unpack(text)[0]} for text in sent[:2])
    assert first and second and not first & second
    assert r["notes_read"] == len(first) + len(second) + sum(len(unpack(t)[0]) for t in sent[2:])
    assert f"in {len(sent)} packs" in r["coverage"], r["coverage"]


def test_offline_reader_quotes_and_verifies(brain: Brain):
    r = Asker(brain, OfflineReader()).ask("When is the oxalic acid treatment planned?")
    assert r["stamp"] == "VERIFIED", r
    assert r["reader"] == "offline-extractive"
    assert r["quotes"][0]["path"] == "notes/hives.md"
    assert r["quotes"][0]["heading"] == "Treatment"


def test_retired_notes_never_reach_the_pack(brain: Brain):
    r = Asker(brain, OfflineReader()).ask("garden budget 2025 greenhouse euros")
    assert all(q["path"] != "notes/garden-budget.md" for q in r["quotes"])


def test_cache_hits_until_a_new_commit(brain: Brain):
    asker = Asker(brain, OfflineReader())
    first = asker.ask("oxalic acid treatment")
    assert first["cached"] is False and first["stamp"] == "VERIFIED"
    assert asker.ask("Oxalic acid   treatment?")["cached"] is True
    brain.write("notes/other.md", "create", ME, content="unrelated\n")
    again = asker.ask("oxalic acid treatment")
    assert again["cached"] is False and again["sha"] != first["sha"]


@pytest.mark.slow
def test_an_answer_cached_by_other_code_is_not_served_after_an_upgrade(tmp_path: Path):
    """Answers outlive a deploy in Redis (a week): the key carries a hash of the package's code,
    so a verifier changed by one comment line gets keys of its own; the same code, the same keys."""
    import shutil
    import subprocess
    import sys

    import cortex

    def key_from(copy: Path) -> str:
        line = (
            "from cortex.ask.answer_cache import cache_key; from cortex.ask.question import read_question; "
            "print(cache_key(read_question('q'), 'a' * 40, 'offline', 8, 'owner', None, '2026-01-01'))"
        )
        done = subprocess.run([sys.executable, "-c", line], cwd=copy, capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, done.stderr
        return done.stdout.strip()

    same, changed = tmp_path / "same", tmp_path / "changed"
    for copy in (same, changed):
        shutil.copytree(Path(cortex.__file__).parent, copy / "cortex", ignore=shutil.ignore_patterns("__pycache__"))
    verifier = changed / "cortex" / "ask" / "quotes.py"
    verifier.write_text(verifier.read_text() + "# a later verifier\n")
    assert key_from(same) == cache_key(read_question("q"), "a" * 40, "offline", 8, "owner", None, "2026-01-01")
    assert key_from(changed) != key_from(same)


@pytest.mark.slow
def test_unverified_answers_are_never_cached(model_asker: Asker, stub: StubMessages):
    stub.scenario = {"mode": "overloaded"}
    model_asker.ask("oxalic acid")
    assert model_asker.ask("oxalic acid")["cached"] is False


@pytest.mark.slow
def test_brain_ask_over_http_on_the_template(server):
    r = call(f"{server.url}/mcp", "brain_ask", question="What do the house rules say about the archive folder?")
    assert r.error is None, r.error
    assert r.data["stamp"] in ("VERIFIED", "CORRECTED", "SUPERSEDED", "UNVERIFIED")
    assert r.data["reader"] == "offline-extractive" and r.data["sha"]


def test_redis_answer_cache_is_shared_and_survives_a_dead_redis(brain: Brain, redis_proc):
    from cortex.guests.queue import RedisAnswerCache

    first = Asker(brain, OfflineReader(), RedisAnswerCache(redis_proc.url))
    second = Asker(brain, OfflineReader(), RedisAnswerCache(redis_proc.url))  # another instance
    assert first.ask("oxalic acid treatment")["cached"] is False
    assert second.ask("oxalic acid treatment")["cached"] is True
    redis_proc.kill()
    r = second.ask("oxalic acid treatment")  # a cache outage is a miss, never a failed ask
    assert r["cached"] is False and r["stamp"] == "VERIFIED"
