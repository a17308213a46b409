"""A search hit's passage carries its own state (cortex.tools.hit_passage.passage_state), and a
whole note shown by brain_corpus says which of its parts are not live (retired_parts)."""

from __future__ import annotations

import pytest

from cortex.notes.blocks import blocks_of
from cortex.notes.note import Note, parse_note
from cortex.tools.hit_passage import MAX_MARKS, best_passage, passage_state, retired_parts

NOTE = (
    "---\ntitle: Heron\n---\n# Heron\n\n## Old plan\n\n> **RETRACTED** the date slipped\n\n"
    "The heron launch is on Monday 9 March.\n\n## Plan\n\n"
    "The heron launch is on Friday 13 March.\n\n"
    "The heron crew flies in on ~~Sunday~~ Thursday.\n\n"
    'The heron review is at noon (was: "at ten").\n\n'
    "The heron budget is set. <!-- the heron budget is secret -->\n\n"
    "~~The heron test is on Tuesday.~~\n\n"
    "## DEPRECATED: the heron hangar\n\nThe heron hangar is in Faro.\n"
)


def block(note: Note, needle: str):
    (found,) = [b for b in blocks_of(note) if needle in b.text]
    return found


@pytest.mark.parametrize(
    "needle,state,parts",
    [
        ("Friday 13 March", "live", []),
        ("Monday 9 March", "retired", [("under a banner", 'under a RETRACTED banner at line 8 (under "Old plan")')]),
        ("**RETRACTED**", "retired", [("under a banner", 'under a RETRACTED banner at line 8 (under "Old plan")')]),
        ("Thursday", "partly retired", [("struck", "~~Sunday~~")]),
        ("at noon", "partly retired", [("old wording", "at ten")]),
        ("budget is set", "partly retired", [("hidden", "<!-- the heron budget is secret -->")]),
        ("test is on Tuesday", "retired", [("struck", "~~The heron test is on Tuesday.~~")]),
        ("hangar is in Faro", "retired", [("under a retiring heading", "section heading")]),
    ],
)
def test_each_passage_says_what_of_it_is_live(needle: str, state: str, parts: list[tuple[str, str]]) -> None:
    note = parse_note("notes/heron.md", NOTE)
    got = passage_state(note, block(note, needle), None)
    assert got["passage_state"] == state
    marks = got.get("passage_marks", [])
    assert [m["state"] for m in marks] == [p[0] for p in parts]
    for mark, (_, words) in zip(marks, parts, strict=True):
        assert words in (mark.get("text") or mark.get("why")), mark


def test_an_old_wording_names_the_claim_as_it_stands() -> None:
    note = parse_note("notes/heron.md", NOTE)
    (mark,) = passage_state(note, block(note, "at noon"), None)["passage_marks"]
    assert mark == {"state": "old wording", "text": "at ten", "current": "The heron review is at noon."}


def test_a_passage_of_a_retired_note_is_retired() -> None:
    note = parse_note("notes/heron.md", NOTE)
    assert passage_state(note, block(note, "Friday 13 March"), "status: retracted") == {"passage_state": "retired"}
    assert passage_state(note, None, "status: retracted") == {"passage_state": "retired"}
    assert passage_state(note, None, None) == {"passage_state": "live"}


def test_the_hit_that_once_said_only_status_current_now_says_retired() -> None:
    """The case that was wrong: a passage under a RETRACTED banner in a current note."""
    note = parse_note("notes/heron.md", NOTE)
    heading, text, found = best_passage(note, {"monday": 3.0, "heron": 0.1})
    assert note.status == "current" and "Monday 9 March" in text and heading == "Old plan"
    assert passage_state(note, found, None)["passage_state"] == "retired"


def test_marks_are_masked_capped_and_counted() -> None:
    body = "Keys: " + " ".join(f"~~old{i}~~ new{i}" for i in range(MAX_MARKS + 3))
    body += " ~~sk-ant-api03-" + "Q7w8E9r0" * 5 + "~~ and " + "~~" + "x" * 500 + "~~\n"
    note = parse_note("notes/k.md", body)
    got = passage_state(note, blocks_of(note)[0], None)
    assert len(got["passage_marks"]) == MAX_MARKS
    assert got["passage_marks_left_out"].startswith("5 more part(s) of the passage")
    note = parse_note("notes/k.md", "A ~~sk-ant-api03-" + "Q7w8E9r0" * 5 + "~~ key and a " + "~~" + "x" * 500 + "~~\n")
    secret, long = passage_state(note, blocks_of(note)[0], None)["passage_marks"]
    assert "sk-ant-" not in secret["text"] and "[REDACTED" in secret["text"]
    assert len(long["text"]) == 120 and long["text"].endswith("…")


def test_a_whole_note_lists_its_parts_by_line() -> None:
    note = parse_note("notes/heron.md", NOTE)
    parts = retired_parts(note)["retired_parts"]
    assert parts[0] == {
        "lines": "8-10",
        "state": "under a banner",
        "why": 'under a RETRACTED banner at line 8 (under "Old plan")',
    }
    assert [(p["lines"], p["state"]) for p in parts[1:4]] == [("16", "struck"), ("18", "old wording"), ("20", "hidden")]
    assert retired_parts(parse_note("notes/live.md", "# Live\n\nAll of it is live.\n")) == {}
    # One section: only its parts.
    plan = NOTE.index("## Plan")
    within = retired_parts(note, (plan, NOTE.index("## DEPRECATED")))["retired_parts"]
    assert [(p["lines"], p["state"]) for p in within] == [
        ("16", "struck"),
        ("18", "old wording"),
        ("20", "hidden"),
        ("22", "struck"),
    ]


@pytest.mark.parametrize(
    "body",
    [
        NOTE,
        "A list of [[links]] and [[more|links]] only.\n\n- [[a]]\n- [[b]]\n",
        "%%\nhidden across\n\nblocks\n%%\n\nlive\n",
        "<del>\n\nstruck from an HTML block\n\n</del>\n\nlive\n",
        "a <s>runs on\n\npast its paragraph\n\n</s> done\n",
        "plain ~~struck~~ and <!-- hidden --> text\n",
    ],
)
def test_the_shortcut_for_struck_and_hidden_text_agrees_with_the_parse(body: str) -> None:
    note = parse_note("notes/t.md", body)
    for b in blocks_of(note):
        marks = b.marks()
        assert b.struck_and_hidden() == (marks.struck, marks.hidden), b.text
