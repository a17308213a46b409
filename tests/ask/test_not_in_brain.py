"""NOT IN BRAIN means absent, and VERIFIED means the notes say what was asked: a new user
with no model key, a dozen fresh notes, through a real server.

The server is real (uvicorn, HTTP, the MCP SDK's own client), with no ANTHROPIC_API_KEY, so
the offline reader answers; the meaning arm runs the real model (meaningkit), or is off to
show the fallback to words. The notes are written through brain_write, as a person would.
"""

from __future__ import annotations

import time
from pathlib import Path

import httpx
import pytest
from serverkit import call, serve

from cortex.app.server import warm_up
from cortex.meaning.embedder import ModelFiles

pytestmark = pytest.mark.slow  # a server, a dozen writes and the model

NOTES = {
    "notes/health.md": "---\ntitle: Health\n---\n# Health\n\n- I am allergic to penicillin (rash, 2019).\n"
    "- GP: Dr Mira Holt, Lindenstrasse 4.\n",
    "notes/lisbon-trip.md": "---\ntitle: Lisbon trip, May 2026\n---\nFlying TAP TP1337 from Berlin at 07:40, "
    "seat 14C.\n\nThe room at Casa Azul is booked for four nights.\n",
    "notes/coffee.md": "---\ntitle: Coffee\n---\n# Coffee\n\nI brew a V60 every morning with beans from the market.\n"
    "\nThe grinder is a Comandante C40.\n",
    "notes/chess.md": "---\ntitle: Chess club\n---\n# Chess club\n\nThe club meets on Tuesdays at the library. "
    "I played Jonas last week in the league.\n",
    "notes/wifi.md": "---\ntitle: Home network\n---\n# Home network\n\nThe router is a Fritz!Box 7590 in the "
    "hallway. The guest network is called Linden-Guest.\n",
    "notes/car.md": "---\ntitle: Car\n---\n# Car\n\nWe drive a 2018 Skoda Octavia estate. Next service due in "
    "March 2027.\n",
    "notes/plants.md": "---\ntitle: Plants\n---\n# Plants\n\nThe monstera needs water once a week; the cactus "
    "once a month.\n",
    "notes/running.md": "---\ntitle: Running\n---\n# Running\n\nParkrun PB 23:41 at Tempelhof. Training for "
    "the Berlin half in April.\n",
    "notes/books.md": "---\ntitle: Reading list\n---\n# Reading list\n\n- Piranesi by Susanna Clarke (finished)\n"
    "- The Dispossessed by Ursula K. Le Guin\n",
    "notes/dentist.md": "---\ntitle: Dentist\n---\n# Dentist\n\nDr Kaya at Zahnarzt Mitte; check-up every six "
    "months, next on 2026-09-14.\n",
    "notes/bike.md": "---\ntitle: Bike\n---\n# Bike\n\nSurly Long Haul Trucker, tyres at 4.5 bar front and 5 bar "
    "rear.\n",
    "notes/work.md": "---\ntitle: Work\n---\n# Work\n\nI work at Fennick GmbH as a backend engineer, mostly "
    "Python and Postgres.\n",
}
ASKED = {  # the new user's two questions, and the note each must lead to
    "Am I allergic to any antibiotic?": "notes/health.md",
    "When does my flight to Lisbon leave?": "notes/lisbon-trip.md",
}
TOPIC_ONLY = [  # a note shares the topic; none says what was asked
    "What temperature do I brew coffee at?",
    "What was the score of my chess game against Jonas?",
    "What is the wifi password?",
]
ABSENT = ["What is my cat's name?", "What is my salary?", "What is the capital of Australia?"]


def _ask(url: str, question: str) -> dict:
    reply = call(url, "brain_ask", question=question)
    assert reply.error is None, reply.error
    return reply.data


def _written(running) -> str:
    url = f"{running.url}/mcp"
    for path, text in NOTES.items():
        assert call(url, "brain_write", path=path, mode="create", content=text).error is None
    return url


def test_the_new_user_s_questions_are_answered_or_lead_to_their_note_and_absent_ones_are_not_in_brain(
    tmp_path: Path, brain_path: Path, model: ModelFiles
) -> None:
    with serve(tmp_path, brain_path, CORTEX_MEANING="on") as running:
        warm_up(running.parts)  # what `cortex serve` does once the port is open
        url = _written(running)
        deadline, health = time.time() + 120, {}
        while time.time() < deadline and not (
            health.get("meaning") == "ready" and "on (" in call(url, "brain_search", query="health").data["meaning"]
        ):
            health = httpx.get(f"{running.url}/healthz", timeout=5).json()
            time.sleep(0.2)
        assert health.get("meaning") == "ready", health
        for question, note in ASKED.items():
            r = _ask(url, question)
            assert r["stamp"] in ("VERIFIED", "UNVERIFIED"), (question, r["stamp_reason"])
            if r["stamp"] == "UNVERIFIED":
                assert r["stamp_reason"].startswith("not found in your notes: "), r["stamp_reason"]
                assert note in [lead["path"] for lead in r["leads"]] and note in r["stamp_reason"], r
            else:
                assert r["quotes"][0]["path"] == note
        lisbon = _ask(url, "When does my flight to Lisbon leave?")
        assert "flight: 1 note" in lisbon["coverage"]  # "Flying …" is a note of the flight
        for question in TOPIC_ONLY:
            r = _ask(url, question)
            assert r["stamp"] not in ("VERIFIED", "CORRECTED"), (question, r)
        for question in ABSENT:
            # Issue 41: NOT IN BRAIN only where nothing comes close; a miss near a passage
            # (house-rules.md for "the capital of Australia") names it as a lead instead.
            r = _ask(url, question)
            assert r["stamp"] in ("NOT IN BRAIN", "UNVERIFIED"), (question, r["stamp_reason"])
            if r["stamp"] == "NOT IN BRAIN":
                assert "leads" not in r and "words only" not in r["stamp_reason"]
            else:
                assert r["stamp_reason"].startswith("not found in your notes: ") and r["leads"]
        assert _ask(url, "Who is my GP?")["stamp"] == "VERIFIED"  # the line that says it still answers
        running.parts.brain.meaning.stop()


def test_without_the_meaning_arm_a_miss_is_judged_by_words_only_and_says_so(tmp_path: Path, brain_path: Path) -> None:
    with serve(tmp_path, brain_path, CORTEX_MEANING="off") as running:
        url = _written(running)
        lisbon = _ask(url, "When does my flight to Lisbon leave?")
        assert lisbon["stamp"] == "UNVERIFIED" and lisbon["leads"][0]["path"] == "notes/lisbon-trip.md", lisbon
        assert "cosine" not in lisbon["leads"][0]
        assert "judged by words only (the meaning arm is off (CORTEX_MEANING=off))" in lisbon["stamp_reason"]
        absent = _ask(url, "What is my cat's name?")
        assert absent["stamp"] == "NOT IN BRAIN" and "judged by words only" in absent["stamp_reason"], absent
