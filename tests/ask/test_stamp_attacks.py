"""Stamps that fail closed: each way a note can show text as retired, struck or
hidden that Cortex once read otherwise, attacked through a real server.

A real HTTP server with its doors, the MCP SDK's own client, the real `anthropic` SDK
as the reader against a local stub of the Messages API that quotes exactly what a test
scripts, and a real Redis for the guest door. Each case asserts the exact stamp and the
words of its reason, on the owner's door and on a guest's; the later cases also on the
secret-URL door, and through brain_verify on both trusted doors (`/mcp` with the
bearer and `/s/<secret>/mcp`), which must stamp a quote as brain_ask would.
"""

from __future__ import annotations

import datetime as dt

import pytest
from consolekit import owner as console_owner
from serverkit import TOKEN, call
from stampkit import ask_both, own, serving, stamped, verify_both

pytestmark = pytest.mark.slow  # every test here takes 0.3 s or more


# Each note is what a person wrote; the quote is what a reader would copy from it.
CLAIM = "The launch of the Heron probe is set for Monday 9 March."
# Nothing answers, and a note of the brain shares a sixth of the question's words: a miss that
# names it as a lead, not NOT IN BRAIN (issue 41).
MISSED = ("UNVERIFIED", "not found in your notes: ")
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
    "bom": (f"\ufeff---\nstatus: retracted\n---\n{CLAIM}\n", *MISSED),
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
    "unknown-status": (f"---\nstatus: [retracted, current]\n---\n{CLAIM}\n", "UNVERIFIED", "is not a word"),
    "struck-claim": (f"~~{CLAIM}~~ The launch is now set for Friday 13 March.\n", "SUPERSEDED", "struck-through text"),
    "html-comment": (f"Visible notes.\n\n<!-- {CLAIM} -->\n", "UNVERIFIED", "hidden in the note"),
    "inline-comment": (f"Visible. <!-- {CLAIM} --> More visible text.\n", "UNVERIFIED", "hidden in the note"),
    "obsidian-comment": (f"Visible notes.\n\n%%\n{CLAIM}\n%%\n", "UNVERIFIED", "hidden in the note"),
    "two-items": ("- The launch of the Heron probe\n- is set for Monday 9 March.\n", "UNVERIFIED", "spans blocks"),
}
QUOTES = {
    "two-items": "The launch of the Heron probe is set for Monday 9 March",
}
# Grounding: the quote verifies, but the answer states something it does not carry.
GROUNDING = {
    "unit": (
        "The Heron probe's test track is 12 km long.\n",
        "The Heron probe's test track is 12 km long",
        "The track is 12 miles long.",
        "your notes say this in other words",  # other units: no conflict, and not the quote's words
    ),
    "number-word": (
        "The Heron probe carries 4 cameras on its mast.\n",
        "The Heron probe carries 4 cameras on its mast",
        "It carries six cameras.",
        "the answer says six; the quote says 4",
    ),
    "retired-value": (
        'The Heron probe review cycle is 3 months (was: "6 months") from now on.\n',
        'The Heron probe review cycle is 3 months (was: "6 months")',
        "The review cycle is 6 months.",
        "the answer says '6'; the quote holds it only as the retired value",
    ),
}


# HTML that strikes or hides: (note, stamp on brain_ask and brain_verify, words of the reason).
HTML_CASES = {
    "html-del": (f"Now: <del>{CLAIM}</del> It moved to Friday 13 March.\n", "SUPERSEDED", "(<del>…</del> is retired"),
    "html-s": (f"<s>{CLAIM}</s> It moved to Friday 13 March.\n", "SUPERSEDED", "(<s>…</s> is retired"),
    "html-strike": (f"Old: <STRIKE>{CLAIM}</STRIKE>\n", "SUPERSEDED", "(<STRIKE>…</strike> is retired"),
    "html-del-block": (f"<del>\n{CLAIM}\n</del>\n\nIt moved.\n", "SUPERSEDED", "struck-through text"),
    "html-del-around": (
        f"<del>\n\n## Launch\n\n{CLAIM}\n\n</del>\n\nThe launch is now set for Friday 13 March.\n",
        "SUPERSEDED",
        "(<del>…</del> is retired",
    ),
    "html-del-unclosed": (f"The plans.\n\n<del>\n\n{CLAIM}\n", "SUPERSEDED", "struck-through text"),
    "html-div-hidden": (f"<div hidden>\n{CLAIM}\n</div>\n", "UNVERIFIED", "the HTML element <div hidden>…</div>"),
    "html-span-hidden": (f"Visible. <span hidden>{CLAIM}</span> More.\n", "UNVERIFIED", "<span hidden>…</span>"),
    "html-display-none": (
        f'Visible. <span style="display: none">{CLAIM}</span>\n',
        "UNVERIFIED",
        '<span style="display: none">…</span>',
    ),
    "html-script": (f"<script>\n// {CLAIM}\n</script>\n", "UNVERIFIED", "the HTML element <script>…</script>"),
    "html-style": (f"<style>\n/* {CLAIM} */\n</style>\n", "UNVERIFIED", "<style>…</style>"),
    "html-template": (f"<template>{CLAIM}</template>\n", "UNVERIFIED", "<template>…</template>"),
    # Controls: HTML that only formats or groups.
    "html-bold": (f"Visible:\n<b>{CLAIM}</b>\n", "VERIFIED", "quote found"),  # its own line: a unit
    "html-span": (f'<span class="note">{CLAIM}</span>\n', "VERIFIED", "quote found"),
    "html-div": (f"<div>\n\n{CLAIM}\n\n</div>\n", "VERIFIED", "quote found"),
}
# (was: …) in its shapes: the claim moved to Friday; the answer gives the old Monday.
MOVED = "The launch of the Heron probe is set for Friday 13 March {}."
WAS_CASES = {
    "was-unquoted": "(was: Monday 9 March)",
    "was-backticks": "(was: `Monday 9 March`)",
    "was-upper": "(WAS: Monday 9 March)",
    "was-brackets": "[was: Monday 9 March]",
    "was-full-width": "（was：Monday 9 March）",
    "was-guillemets": "(was: «Monday 9 March»)",
    "was-corner": "(was: 「Monday 9 March」)",
    "was-low-high": "(was: „Monday 9 March“)",
    "was-long": "(was: set for Monday 9 March, as the first plan of the Heron team had it)",
    "was-nested": "(was: Monday 9 March (a holiday))",
    "was-quoted": '(Was "Monday 9 March")',  # already read; kept as a control
}
# Frontmatter: (note, stamp on brain_ask, words; stamp on brain_verify, words).
FRONT_CASES = {
    "succalone": (
        f"---\nsuperseded_by: notes/launch-2.md\n---\n{CLAIM}\n",
        MISSED,
        ("SUPERSEDED", "the current version is in notes/launch-2.md"),
    ),
    "succquoted": (
        f"---\ntitle: Launch\nsuperseded_by: 'notes/launch-2.md'\n---\n{CLAIM}\n",
        MISSED,
        ("SUPERSEDED", "status: superseded (superseded by notes/launch-2.md)"),
    ),
    "succcurrent": (
        f"---\nstatus: current\nsuperseded_by: notes/launch-2.md\n---\n{CLAIM}\n",
        MISSED,
        ("SUPERSEDED", "though its status says current"),
    ),
    "succdraft": (
        f"---\nstatus: draft\nsuperseded_by: notes/launch-2.md\n---\n{CLAIM}\n",
        MISSED,
        ("SUPERSEDED", "the current version is in notes/launch-2.md"),
    ),
    **{
        name: (f"---\n{front}---\n{CLAIM}\n", ("UNVERIFIED", why), ("UNVERIFIED", why))
        for name, front, why in [
            ("twice-status", "status: retracted\nstatus: current\n", "the key 'status' is given twice"),
            ("twice-status-apart", "status: current\ntitle: L\nstatus: retracted\n", "(line 4: the key 'status'"),
            ("twice-quoted-key", 'status: retracted\n"status": current\n', "the key 'status' is given twice"),
            ("twice-until", "valid_until: 2020-01-01\nvalid_until: 2030-01-01\n", "the key 'valid_until' is given"),
            ("twice-successor", "superseded_by: notes/a.md\nsuperseded_by: notes/b.md\n", "'superseded_by' is given"),
            ("twice-title", "title: Launch\ntitle: Old launch\n", "the key 'title' is given twice"),
            ("twice-nested", "meta:\n  state: old\n  state: new\n", "the key 'state' is given twice"),
        ]
    },
    # Controls: a merge key may set a key again; an empty successor names none.
    "merge-key": (
        f"---\nbase: &b {{state: old}}\nmeta:\n  <<: *b\n  state: new\n---\n{CLAIM}\n",
        ("VERIFIED", "quote found"),
        ("VERIFIED", "quote found"),
    ),
    "succempty": (
        f"---\nsuperseded_by: ''\n---\n{CLAIM}\n",
        ("VERIFIED", "quote found"),
        ("VERIFIED", "quote found"),
    ),
}
# Notes brain_ask never reads: brain_verify must refuse their quotes too. (path, note,
# stamp, words); the notes/ ones are controls.
PLACED = {
    "archive": ("archive/launch.md", f"{CLAIM}\n", "UNVERIFIED", "is in archive/, which is never evidence"),
    "archive-deep": ("archive/2025/q1/launch.md", f"# Launch\n\n{CLAIM}\n", "UNVERIFIED", "is in archive/"),
    "archive-current": (
        "archive/launch-current.md",
        f"---\nstatus: current\n---\n{CLAIM}\n",
        "UNVERIFIED",
        "is in archive/",
    ),
    "archive-retracted": (
        "archive/launch-retracted.md",
        f"---\nstatus: retracted\n---\n{CLAIM}\n",
        "UNVERIFIED",
        "is in archive/",
    ),
    "working": (
        "working/heron.md",
        f"# Working: heron\n\n- [ ] focus: {CLAIM} · opened 2026-01-05 ^wab12\n",
        "UNVERIFIED",
        "is working state (working/",
    ),
    "working-filed": (
        "working/heron-done.md",
        f"- [x] decision: {CLAIM} · opened 2026-01-05 · filed 2026-01-09 → notes/x.md ^wab13\n",
        "UNVERIFIED",
        "which ask leaves out",
    ),
    "working-general": ("working/general.md", f"- {CLAIM}\n", "UNVERIFIED", "working state"),
    "in-notes-archive": ("notes/archive/launch.md", f"{CLAIM}\n", "VERIFIED", "quote found"),
    "in-notes-working": ("notes/working/launch.md", f"{CLAIM}\n", "VERIFIED", "quote found"),
    "archive-named": ("notes/archived-launch.md", f"{CLAIM}\n", "VERIFIED", "quote found"),
}


@pytest.fixture(scope="module")
def doors(tmp_path_factory, stub):
    """The doors of `serving`, the notes of every case written once for the module: the
    tests only read them."""
    moved = {name: (MOVED.format(marker) + "\n",) for name, marker in WAS_CASES.items()}
    notes = {}
    for name, (body, *_) in [*CASES.items(), *GROUNDING.items(), *HTML_CASES.items(), *moved.items()]:
        notes[f"notes/{name}.md"] = own(body, name)
    notes["notes/struck-word.md"] = own("I do ~~not~~ recommend the Heron probe's old launch window.\n", "struck-word")
    for name, (body, *_) in FRONT_CASES.items():
        notes[f"notes/{name}.md"] = own(body, name)
    for name, (path, body, *_) in PLACED.items():
        notes[path] = own(body, name)
    notes["notes/future.md"] = own(f"---\nvalid_from: 2999-01-01\n---\n{CLAIM}\n", "future")
    with serving(tmp_path_factory.mktemp("attacks"), stub, notes) as urls:
        yield urls


@pytest.mark.parametrize("name", sorted(CASES))
def test_text_the_editor_shows_as_retired_or_hidden_is_never_verified(doors, stub, name):
    _, stamp, reason = CASES[name]
    quote = QUOTES.get(name, CLAIM.rstrip("."))
    for reply in ask_both(doors, stub, name, quote, ANSWER):
        assert reply["stamp"] == stamp, (name, reply["stamp"], reply["stamp_reason"])
        assert reason in reply["stamp_reason"], (name, reply["stamp_reason"])


@pytest.mark.parametrize("name", sorted(GROUNDING))
def test_every_specific_of_the_answer_is_live_text_of_a_quote(doors, stub, name):
    _, quote, answer, reason = GROUNDING[name]
    for reply in ask_both(doors, stub, name, quote, answer):
        assert reply["stamp"] in ("UNVERIFIED", "BEYOND QUOTES"), (name, reply)  # never VERIFIED
        assert reason in reply["stamp_reason"], (name, reply["stamp_reason"])


def test_the_controls_stay_verified(doors, stub):
    said = "The Heron probe's test track is 12 km long"
    for reply in verify_both(doors, "notes/unit.md", said, f"Your notes say: {said}.", "unit"):
        assert reply["stamp"] == "VERIFIED", (reply["answer"], reply["stamp_reason"])
    for reply in verify_both(doors, "notes/unit.md", said, "Yes. It is 12 km long.", "unit"):  # asks are cached
        assert (reply["stamp"], reply["rule"]) == ("BEYOND QUOTES", "other-words"), reply["stamp_reason"]
        assert reply["verified_answer"].startswith(f"Your notes say: {own(said, 'unit')}")


def test_a_struck_word_beside_live_text_is_corrected_and_saying_it_is_not_verified(doors, stub):
    """Issue 63: "I do ~~not~~ recommend" says "I do recommend"; an answer saying "not" says
    what the unit does not, and is not VERIFIED; one saying the current words is CORRECTED."""
    quote = "I do not recommend the Heron probe's old launch window"
    for reply in ask_both(doors, stub, "struck-word", quote, f"{quote}."):
        assert (
            reply["stamp"] == "BEYOND QUOTES" and "the answer has 'not' before 'recommend'" in reply["stamp_reason"]
        ), reply
    live = "I do recommend the Heron probe's old launch window."
    for reply in verify_both(doors, "notes/struck-word.md", quote, live, "struck-word"):  # asks are cached
        assert reply["stamp"] == "CORRECTED", reply["stamp_reason"]


def test_a_move_rewrites_the_real_link_after_a_code_example_not_the_example(doors):
    owner = doors[0]
    body = "See this example:\n\n````md\n```\n[[Target]]\n````\n\nThe real link: [[Target]].\n"
    assert call(owner, "brain_write", path="notes/Target.md", mode="create", content="# Target\n").error is None
    assert call(owner, "brain_write", path="notes/linker.md", mode="create", content=body).error is None
    r = call(owner, "brain_write", path="notes/Target.md", mode="move", to="notes/Renamed.md")
    assert r.error is None, r.error
    assert r.data["links_rewritten"] == ["notes/linker.md"]
    text = call(owner, "brain_read", path="notes/linker.md").data["text"]
    assert text == body.replace("The real link: [[Target]]", "The real link: [[Renamed]]")


def test_a_note_whose_retirement_cannot_be_read_is_flagged_where_it_shows(doors):

    owner_url = doors[0]
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


ANSWER = "The launch of the Heron probe is set for Monday 9 March."


@pytest.mark.parametrize("name", sorted(HTML_CASES))
def test_text_html_strikes_or_hides_is_never_verified(doors, stub, name):
    _, stamp, reason = HTML_CASES[name]
    quote = CLAIM.rstrip(".")
    stamped(ask_both(doors, stub, name, quote, ANSWER, secret_door=True), stamp, reason, name)
    stamped(verify_both(doors, f"notes/{name}.md", quote, ANSWER, name), stamp, reason, name)


@pytest.mark.parametrize("name", sorted(WAS_CASES))
def test_every_shape_of_was_retires_the_old_wording(doors, stub, name):
    sentence = MOVED.format(WAS_CASES[name]).rstrip(".")
    current = "The launch of the Heron probe is set for Friday 13 March"
    # The answer resting on the old value: the quote holds it only as retired text.
    for replies in (
        ask_both(doors, stub, name, sentence, ANSWER, secret_door=True),
        verify_both(doors, f"notes/{name}.md", sentence, ANSWER, name),
    ):
        stamped(replies, "UNVERIFIED", "only as the retired value (the quote is CORRECTED)", name)
    # The answer resting on the current claim: CORRECTED, the reply showing the old one.
    for replies in (
        ask_both(
            doors, stub, name, current, "The launch of the Heron probe is set for Friday 13 March.", secret_door=True
        ),
        verify_both(
            doors, f"notes/{name}.md", current, "The launch of the Heron probe is set for Friday 13 March.", name
        ),
    ):
        stamped(replies, "CORRECTED", "carries an in-place correction", name)
        for trusted in (replies[0], replies[-1]):  # a guest's reply leaves the quotes out
            assert "Monday 9 March" in trusted["quotes"][0]["old_claim"], trusted


def test_a_quote_inside_unquoted_old_wording_is_superseded(doors, stub):
    name, old = "was-long", "set for Monday 9 March, as the first plan of the Heron team had it"
    stamped(ask_both(doors, stub, name, old, ANSWER, secret_door=True), "SUPERSEDED", "old wording", name)
    stamped(verify_both(doors, f"notes/{name}.md", old, ANSWER, name), "SUPERSEDED", "old wording", name)


@pytest.mark.parametrize("name", sorted(FRONT_CASES))
def test_frontmatter_a_person_reads_as_retired_or_unclear_is_never_verified(doors, stub, name):
    _, (ask_stamp, ask_reason), (verify_stamp, verify_reason) = FRONT_CASES[name]
    quote = CLAIM.rstrip(".")
    stamped(ask_both(doors, stub, name, quote, ANSWER, secret_door=True), ask_stamp, ask_reason, name)
    stamped(verify_both(doors, f"notes/{name}.md", quote, ANSWER, name), verify_stamp, verify_reason, name)


@pytest.mark.parametrize("name", sorted(PLACED))
def test_brain_verify_refuses_what_brain_ask_never_reads(doors, name):
    path, _, stamp, reason = PLACED[name]
    stamped(verify_both(doors, path, CLAIM.rstrip("."), ANSWER, name), stamp, reason, name)
    if stamp != "VERIFIED":
        # With the question, and beside a live quote: still refused, named.
        owner, _, secret = doors
        for url, token in ((owner, TOKEN), (secret, None)):
            live = {"path": "notes/archive/launch.md", "quote": own(CLAIM.rstrip("."), "in-notes-archive")}
            r = call(
                url,
                "brain_verify",
                token=token,
                answer=ANSWER,
                citations=[live, {"path": path, "quote": own(CLAIM.rstrip("."), name)}],
                question="When is the Heron probe launched?",
            ).data
            assert r["stamp"] == "UNVERIFIED" and "quote 2 is UNVERIFIED" in r["stamp_reason"], r["quotes"][0]["reason"]
            assert [q["stamp"] for q in r["quotes"]] == ["VERIFIED", "UNVERIFIED"]


def test_brain_verify_as_of_a_day_before_a_note_holds_refuses_it(doors):
    now = dt.datetime.now(dt.UTC).isoformat()
    replies = verify_both(doors, "notes/future.md", CLAIM.rstrip("."), ANSWER, "future", as_of=now)
    stamped(replies, "UNVERIFIED", "is valid only from 2999-01-01", "future")
    # Without as_of, brain_ask reads the note (its validity is checked as of a date only).
    stamped(
        verify_both(doors, "notes/future.md", CLAIM.rstrip("."), ANSWER, "future"), "VERIFIED", "quote found", "future"
    )
