"""A SUPERSEDED quote names the live sentence that replaced it (cortex.ask.replacement, and
through cortex.ask.quotes.check_quote): the next section with the same heading words, the
current claim of a (was: …), the successor note's matching passage; and nothing when none
shares a word with the quote."""

from __future__ import annotations

import datetime as dt

import pytest

from cortex.ask.quotes import check_quote
from cortex.ask.replacement import heading_words, in_note, in_successor
from cortex.ask.stamps import SUPERSEDED
from cortex.notes.blocks import blocks_of
from cortex.notes.note import Note, parse_note

TODAY = dt.date(2026, 3, 1)
OLD = "The Heron launch is set for Monday 9 March"


def make(body: str, path: str = "notes/t.md", front: str = "title: T\n") -> Note:
    return parse_note(path, f"---\n{front}---\n{body}")


def check(quote: str, note: Note, *others: Note, successor: Note | None = None):
    return check_quote(quote, note, {f"t{i}": n for i, n in enumerate((note, *others))}, TODAY, successor)


@pytest.mark.parametrize(
    "heading,words",
    [
        ("Launch date", {"launch", "date"}),
        ("SUPERSEDED: the 2025 plan", {"plan"}),
        ("The 2026 plan", {"plan"}),
        ("Launch (old)", {"launch"}),
        ("New launch date", {"launch", "date"}),
        ("2026", set()),
    ],
)
def test_heading_words_leave_out_what_tells_versions_apart(heading: str, words: set[str]) -> None:
    assert heading_words(heading) == words


SECTIONS = {
    "banner, same heading": (
        f"## Launch date\n\n> **SUPERSEDED** see below\n\n{OLD}.\n\n## Launch date\n\n"
        "The crew is ready. The Heron launch is set for Friday 13 March.\n",
        "Launch date",
        "The Heron launch is set for Friday 13 March.",
    ),
    "retiring heading, year apart": (
        f"## SUPERSEDED: the 2025 plan\n\n- {OLD}\n\n## The 2026 plan\n\n- The Heron launch is set for Friday 13 March\n",
        "The 2026 plan",
        "The Heron launch is set for Friday 13 March",
    ),
    "replacement before": (
        f"## Launch\n\nThe Heron launch is set for Friday 13 March.\n\n## Launch (old)\n\n> **DEPRECATED**\n\n{OLD}.\n",
        "Launch",
        "The Heron launch is set for Friday 13 March.",
    ),
    "in a subsection": (
        f"## Plan\n\n> **RETRACTED** slipped\n\n### Dates\n\n{OLD}.\n\n## Plan\n\n### Dates\n\n"
        "The Heron launch is set for Friday 13 March.\n",
        "Dates",
        "The Heron launch is set for Friday 13 March.",
    ),
    "struck and old wording left out": (
        f"## Launch date\n\n> **SUPERSEDED**\n\n{OLD}.\n\n## Launch date\n\n"
        'The Heron launch is set for ~~Thursday~~ Friday 13 March (was: "Monday 9 March").\n',
        "Launch date",
        "The Heron launch is set for Friday 13 March.",
    ),
}


@pytest.mark.parametrize("name", sorted(SECTIONS))
def test_a_quote_under_a_banner_names_the_sentence_of_the_replacing_section(name: str) -> None:
    body, heading, sentence = SECTIONS[name]
    note = make(body)
    c = check(OLD, note)
    assert c.stamp == SUPERSEDED, c.reason
    assert c.old_claim == sentence, c.reason
    assert f'the current version is under "{heading}" (line ' in c.reason and f': "{sentence}"' in c.reason


def test_a_replacing_section_with_no_shared_word_is_named_without_a_sentence() -> None:
    note = make(f"## Launch date\n\n> **SUPERSEDED**\n\n{OLD}.\n\n## Launch date\n\nTo be decided by the crew.\n")
    c = check(OLD, note)
    assert c.stamp == SUPERSEDED and c.old_claim is None
    assert c.reason.endswith('the current version is under "Launch date" (line 10)')


@pytest.mark.parametrize(
    "body",
    [
        f"> **SUPERSEDED** all of it\n\n{OLD}.\n",  # before any heading: nothing replaces it
        f"## Launch date\n\n> **SUPERSEDED**\n\n{OLD}.\n\n## Budget\n\nThe Heron launch costs 3 million.\n",
        f"## Launch date\n\n> **SUPERSEDED**\n\n{OLD}.\n\n## Launch date\n\n> **RETRACTED** too\n\nFriday.\n",
    ],
)
def test_no_replacing_section_names_nothing(body: str) -> None:
    note = make(body)
    c = check(OLD, note)
    assert c.stamp == SUPERSEDED and c.old_claim is None
    assert "the current version is" not in c.reason
    block = next(b for b in blocks_of(note) if OLD in b.text)
    assert in_note(note, block, OLD) is None


def test_a_was_quote_names_the_current_claim_of_its_unit() -> None:
    note = make('The Heron launch is set for Friday 13 March (was: "Monday 9 March") at the north pad. Next.\n')
    c = check(
        "set for Monday 9 March at the pad",
        make('The Heron launch moved (was: "set for Monday 9 March at the pad").\n'),
    )
    assert c.stamp == SUPERSEDED and c.old_claim == "The Heron launch moved."
    c = check('set for Friday 13 March (was: "Monday 9 March', note)  # reaches into the old wording
    assert c.stamp == SUPERSEDED
    assert c.old_claim == "The Heron launch is set for Friday 13 March at the north pad."
    assert 'the current claim is "The Heron launch is set for Friday 13 March at the north pad."' in c.reason


SUCCESSOR = make(
    "# Launch 2\n\nThe Heron crew flies in on Thursday.\n\n## Date\n\n- The Heron launch is set for Friday 13 March\n",
    path="notes/launch-2.md",
)


@pytest.mark.parametrize("named", ["notes/launch-2.md", "notes/launch-2", "/notes/launch-2.md"])
def test_a_superseded_notes_quote_names_the_successors_matching_passage(named: str) -> None:
    old = make(f"{OLD}.\n", path="notes/launch.md", front=f"superseded_by: {named}\n")
    for c in (check(OLD, old, SUCCESSOR), check(OLD, old, successor=SUCCESSOR)):
        assert c.stamp == SUPERSEDED and c.old_claim == "The Heron launch is set for Friday 13 March"
        assert (
            'notes/launch-2.md says, under "Date" (line 10): "The Heron launch is set for Friday 13 March"' in c.reason
        )


def test_a_successor_not_at_hand_retired_or_unrelated_names_no_sentence() -> None:
    old = make(f"{OLD}.\n", path="notes/launch.md", front="superseded_by: notes/launch-2.md\n")
    c = check(OLD, old)
    assert c.stamp == SUPERSEDED and c.old_claim is None and "the current version is in notes/launch-2.md" in c.reason
    retired = make("- The Heron launch is set for Friday\n", path="notes/launch-2.md", front="status: retracted\n")
    assert check(OLD, old, successor=retired).old_claim is None
    unrelated = make("Bring a sandwich and water.\n", path="notes/launch-2.md")
    assert check(OLD, old, successor=unrelated).old_claim is None
    assert in_successor(unrelated, OLD) is None


def test_the_named_sentence_is_masked() -> None:
    key = "sk-ant-api03-" + "Q7w8E9r0" * 5
    successor = make(f"The Heron launch key is {key} for Friday.\n", path="notes/launch-2.md")
    old = make(
        "The Heron launch key is old for Monday.\n", path="notes/launch.md", front="superseded_by: notes/launch-2.md\n"
    )
    c = check("The Heron launch key is old for Monday", old, successor=successor)
    assert c.old_claim and key not in c.old_claim and key not in c.reason and "[REDACTED" in c.old_claim
