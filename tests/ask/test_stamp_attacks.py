"""Stamps that fail closed: each way a note can show text as retired, struck or
hidden that Cortex once read otherwise, attacked through a real server.

A real HTTP server with both doors, the MCP SDK's own client, the real `anthropic` SDK
as the reader against a local stub of the Messages API that quotes exactly what a test
scripts, and a real Redis for the guest door. Each case asserts the exact stamp and the
words of its reason, on the owner's door and on a guest's.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import TOKEN, RunningServer, call, make_settings
from consolekit import owner as console_owner
from guestkit import redis_proc  # noqa: F401  (fixture)
from readerkit import stub  # noqa: F401  (fixture)

from cortex.app.server import assemble, make_app
from cortex.brain.trailers import Actor
from cortex.guests.policy import add_guest
from cortex.guests.queue import ProposalQueue

pytestmark = pytest.mark.slow  # every test here takes 0.3 s or more

ME = Actor("owner", "brain_write", "pytest")


# Each note is what a person wrote; the quote is what a reader would copy from it.
CLAIM = "The launch of the Heron probe is set for Monday 9 March."
CASES = {
    "fence": (
        "## Launch\n\n````markdown\nAn example of a fence line inside a longer fence:\n```\n````\n\n"
        f"> **SUPERSEDED** by notes/launch-2.md\n\n{CLAIM}\n",
        "SUPERSEDED",
        "under a SUPERSEDED banner at line",
    ),
    "setext": (
        f"Old launch plan (DEPRECATED)\n============================\n\n{CLAIM}\n",
        "SUPERSEDED",
        "is marked DEPRECATED",
    ),
    "nested-banner": (
        f"## Launch\n\n- the plan\n  - its dates\n    > **RETRACTED** the date slipped\n\n{CLAIM}\n",
        "SUPERSEDED",
        "under a RETRACTED banner",
    ),
    # A retracted note never reaches the pack: with its byte-order mark read, nothing answers.
    "bom": (f"\ufeff---\nstatus: retracted\n---\n{CLAIM}\n", "NOT IN BRAIN", "the reader found nothing"),
    "yaml-error": (
        f'---\ntitle: "Launch\nstatus: current\n---\n{CLAIM}\n',
        "UNVERIFIED",
        "frontmatter could not be read (line 4:",
    ),
    "bad-date": (
        f"---\nvalid_until: 31/12/2025\n---\n{CLAIM}\n",
        "UNVERIFIED",
        "valid_until '31/12/2025' is not a date",
    ),
    "no-such-day": (f"---\nvalid_until: 2025-02-30\n---\n{CLAIM}\n", "UNVERIFIED", "its status is unknown"),
    "unknown-status": (f"---\nstatus: obsolete\n---\n{CLAIM}\n", "UNVERIFIED", "status 'obsolete' is not one of"),
    "struck-word": (
        "I do ~~not~~ recommend the Heron probe's old launch window.\n",
        "SUPERSEDED",
        "struck-through text",
    ),
    "struck-claim": (f"~~{CLAIM}~~ The launch is now set for Friday 13 March.\n", "SUPERSEDED", "struck-through text"),
    "html-comment": (f"Visible notes.\n\n<!-- {CLAIM} -->\n", "UNVERIFIED", "hidden in the note"),
    "inline-comment": (f"Visible. <!-- {CLAIM} --> More visible text.\n", "UNVERIFIED", "hidden in the note"),
    "obsidian-comment": (f"Visible notes.\n\n%%\n{CLAIM}\n%%\n", "UNVERIFIED", "hidden in the note"),
    "two-items": ("- The launch of the Heron probe\n- is set for Monday 9 March.\n", "UNVERIFIED", "spans blocks"),
}
QUOTES = {
    "struck-word": "I do not recommend the Heron probe's old launch window",
    "two-items": "The launch of the Heron probe is set for Monday 9 March",
}
# Grounding: the quote verifies, but the answer states something it does not carry.
GROUNDING = {
    "unit": (
        "The Heron probe's test track is 12 km long.\n",
        "The Heron probe's test track is 12 km long",
        "The track is 12 miles long.",
        "the answer says 12 miles; no quote contains it",
    ),
    "number-word": (
        "The Heron probe carries 4 cameras on its mast.\n",
        "The Heron probe carries 4 cameras on its mast",
        "It carries six cameras.",
        "the answer says six; no quote contains it",
    ),
    "retired-value": (
        'The Heron probe review cycle is 3 months (was: "6 months") from now on.\n',
        'The Heron probe review cycle is 3 months (was: "6 months")',
        "The review cycle is 6 months.",
        "the answer says 6 months; the quote holds it only as the retired value",
    ),
}


@pytest.fixture
def doors(tmp_path: Path, brain_path: Path, redis_proc, stub, monkeypatch):  # noqa: F811
    """(owner door URL, guest door URL, brain) on one running server with a model reader."""
    monkeypatch.setenv("ANTHROPIC_BASE_URL", stub.url)
    settings = make_settings(
        tmp_path, brain_path, env={"REDIS_URL": redis_proc.url, "ANTHROPIC_API_KEY": "sk-test-stub"}
    )
    parts = assemble(settings)
    parts.queue = ProposalQueue(redis_proc.url)
    brain = parts.brain
    for name, (body, *_) in [*CASES.items(), *GROUNDING.items()]:
        brain.write(f"notes/{name}.md", "create", ME, content=own(body, name))
    _, secret, _ = add_guest(brain, "alice", ["notes/"])
    with RunningServer(make_app(parts), parts.settings) as running:
        yield f"{running.url}/mcp", f"{running.url}/g/{secret}/mcp"
    parts.queue.close()


def own(text: str, name: str) -> str:
    """Each note names its own probe, so no quote is a stock phrase of several notes."""
    return text.replace("Heron probe", f"Heron probe {name}")


def ask_both(doors, stub, name: str, quote: str, answer: str) -> list[dict]:
    stub.script = (answer, f"notes/{name}.md", own(quote, name))
    owner, guest = doors
    replies = []
    for url, token in ((owner, TOKEN), (guest, None)):
        # The quote as the question: retrieval finds the note, and the attack is on the stamp.
        r = call(url, "brain_ask", token=token, question=own(quote, name) + "?")
        assert r.error is None, r.error
        replies.append(r.data)
    return replies


@pytest.mark.parametrize("name", sorted(CASES))
def test_text_the_editor_shows_as_retired_or_hidden_is_never_verified(doors, stub, name):
    _, stamp, reason = CASES[name]
    quote = QUOTES.get(name, CLAIM.rstrip("."))
    for reply in ask_both(doors, stub, name, quote, "The launch is on Monday 9 March."):
        assert reply["stamp"] == stamp, (name, reply["stamp"], reply["stamp_reason"])
        assert reason in reply["stamp_reason"], (name, reply["stamp_reason"])


@pytest.mark.parametrize("name", sorted(GROUNDING))
def test_every_specific_of_the_answer_is_live_text_of_a_quote(doors, stub, name):
    _, quote, answer, reason = GROUNDING[name]
    for reply in ask_both(doors, stub, name, quote, answer):
        assert reply["stamp"] == "UNVERIFIED", (name, reply)
        assert reason in reply["stamp_reason"], (name, reply["stamp_reason"])


def test_the_controls_stay_verified(doors, stub):
    for reply in ask_both(doors, stub, "unit", "The Heron probe's test track is 12 km long", "Yes. It is 12 km long."):
        assert reply["stamp"] == "VERIFIED", reply["stamp_reason"]


def test_a_move_rewrites_the_real_link_after_a_code_example_not_the_example(doors):
    owner, _ = doors
    body = "See this example:\n\n````md\n```\n[[Target]]\n````\n\nThe real link: [[Target]].\n"
    assert call(owner, "brain_write", path="notes/Target.md", mode="create", content="# Target\n").error is None
    assert call(owner, "brain_write", path="notes/linker.md", mode="create", content=body).error is None
    r = call(owner, "brain_write", path="notes/Target.md", mode="move", to="notes/Renamed.md")
    assert r.error is None, r.error
    assert r.data["links_rewritten"] == ["notes/linker.md"]
    text = call(owner, "brain_read", path="notes/linker.md").data["text"]
    assert text == body.replace("The real link: [[Target]]", "The real link: [[Renamed]]")


def test_a_note_whose_retirement_cannot_be_read_is_flagged_where_it_shows(doors):

    owner_url, _ = doors
    read = call(owner_url, "brain_read", path="notes/bad-date.md").data
    assert read["unreadable"] == "valid_until '31/12/2025' is not a date (YYYY-MM-DD); its status is unknown"
    hits = call(owner_url, "brain_search", query="Heron probe bad-date launch").data["hits"]
    flagged = {h["path"]: h.get("unreadable") for h in hits}
    assert flagged["notes/bad-date.md"].startswith("valid_until '31/12/2025'")
    assert flagged.get("notes/setext.md") is None
    page = console_owner(owner_url.removesuffix("/mcp")).get("/console/status").text
    for name in ("yaml-error", "bad-date", "no-such-day", "unknown-status"):
        assert f"notes/{name}.md" in page, name
    assert "notes/setext.md" not in page
