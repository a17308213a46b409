"""The offline reader's finer evidence: pure parts, no I/O.

It answers only what its passage addresses: every focus term of the question in the
quote or its note's title, aliases or headings (a lower-case question word not through a
name there), and the kind of specific the question asks for in the quote.
"""

from __future__ import annotations

from cortex.ask.focus import proper_only
from cortex.ask.pack import Pack, PackedFile
from cortex.ask.question import expects, focus_terms
from cortex.ask.readers import OfflineReader
from cortex.notes.note import parse_note


def _pack(
    title: str, body: str, weights: dict[str, float], path: str = "notes/home-assistant.md", front: str = ""
) -> Pack:
    note = parse_note(path, f"---\ntitle: {title}\n{front}---\n{body}")
    holders = {t: frozenset({path}) for t in weights}
    return Pack("0" * 40, [PackedFile("t1", note.path, note, note.body)], weights=weights, holders=holders)


def test_proper_only_is_the_lower_case_words_a_title_writes_as_a_name() -> None:
    assert proper_only("What is the name of Rosa's studio assistant?", ["Home Assistant"]) == {"assistant"}
    assert proper_only("What IP address does Home Assistant have?", ["Home Assistant"]) == set()
    assert proper_only("Which print queue replaced MSMQ?", ["Fennick print queue"]) == set()
    # The title's first word is capitalised by sentence case, not because it is a name.
    assert proper_only("Which home server runs it?", ["Home Assistant"]) == set()
    # A word the title also writes in lower case is an ordinary word there.
    assert proper_only("Which assistant?", ["Assistant setup", "Home Assistant and the assistant"]) == set()


BODY = "- Studio kiln: notify Rosa when the kiln's smart plug draws under 50 W after a firing.\n"


def test_a_name_in_the_title_does_not_cover_a_common_noun_of_the_question() -> None:
    weights = {"rosa": 2.0, "studio": 2.9, "assistant": 3.2}
    r = OfflineReader().read("What is the name of Rosa's studio assistant?", _pack("Home Assistant", BODY, weights))
    assert r.not_in_brain and not r.citations
    # The same words in a title that is no name do cover it (the reader needs no new words).
    r = OfflineReader().read(
        "What is the name of Rosa's studio assistant?",
        _pack("Studio assistant", BODY, weights, "notes/studio-assistant.md"),
    )
    assert not r.not_in_brain and r.citations


def test_measure_questions_want_the_specific_that_answers_them() -> None:
    assert expects("How tall is the walnut tree?") == {"amount"}
    # A price wants money: an amount in a currency, not "142,000 km" nor a bare year.
    assert expects("How much does the cello rental cost?") == {"money"}
    assert expects("What fee does the keeper charge?") == {"money"}
    assert expects("Which OR-Tools version was chosen?") == {"number", "identifier"}
    assert expects("What is the phone number of the support line?") == {"number", "identifier"}
    assert expects("What are the opening hours of the tea house?") == {"time"}
    assert expects("Which editor does Nils use?") is None


TREE = "- Their walnut tree shades our south roof; the children are 9 and 6.\n- The walnut tree is 14 m tall.\n"


def test_how_tall_is_not_answered_by_a_bare_count() -> None:
    weights = {"walnut": 3.5, "tree": 3.5}
    r = OfflineReader().read("How tall is the walnut tree?", _pack("Neighbours", TREE, weights, "notes/n.md"))
    assert r.citations and r.citations[0][1] == "- The walnut tree is 14 m tall."
    r = OfflineReader().read(
        "How tall is the walnut tree?", _pack("Neighbours", TREE.splitlines()[0] + "\n", weights, "notes/n.md")
    )
    assert r.not_in_brain and not r.citations


CAT = "# Pim\n\n- Vet: Dr Anouk Brenner at Millbrook Vets. Booster due 2027-03.\n"


def test_a_note_s_aliases_cover_the_question_s_words_and_its_description_does_not() -> None:
    weights = {"cat": 3.8, "vet": 3.0}
    q = "Who is the cat's vet?"
    r = OfflineReader().read(q, _pack("Pim", CAT, weights, "notes/pim.md"))
    assert r.not_in_brain  # "cat" is nowhere around the passage
    r = OfflineReader().read(q, _pack("Pim", CAT, weights, "notes/pim.md", "aliases: [our cat]\n"))
    assert not r.not_in_brain and r.citations[0][1].startswith("- Vet: Dr Anouk Brenner")
    # The reply says whether its quotes, their note's title, aliases and headings mention
    # every focus term; a description is none of those, so it answers nothing.
    r = OfflineReader().read(q, _pack("Pim", CAT, weights, "notes/pim.md", "description: Pim the cat — vet, food.\n"))
    assert r.not_in_brain


def test_a_name_in_a_title_does_not_cover_a_common_noun_and_the_noun_does() -> None:
    weights = {"rosa": 2.0, "studio": 2.9, "assistant": 3.2}
    q = "What is the name of Rosa's studio assistant?"
    assert OfflineReader().read(q, _pack("Smart home", BODY, weights, front="aliases: [Home Assistant]\n")).not_in_brain
    # The same word written as a common noun does cover it.
    assert OfflineReader().read(q, _pack("Smart home", BODY, weights, front="aliases: [the assistant]\n")).citations


# -- a line on the topic that lacks what was asked is no answer -------------------------

COFFEE = "# Coffee\n\nI brew a V60 every morning with beans from the market.\n\nThe grinder is a Comandante C40.\n"
CHESS = "# Chess club\n\nThe club meets on Tuesdays. I played Jonas last week in the league.\n"
WIFI = "# Home network\n\nThe router is a Fritz!Box 7590 in the hallway. The guest network is Linden-Guest.\n"


def _read(question: str, title: str, body: str, path: str = "notes/n.md") -> list[tuple[str, str]]:
    weights = {t: 3.0 for t in focus_terms(question)}
    return OfflineReader().read(question, _pack(title, body, weights, path)).citations


def test_a_line_that_only_shares_the_topic_is_never_quoted() -> None:
    assert _read("What temperature do I brew coffee at?", "Coffee", COFFEE) == []
    assert _read("What was the score of my chess game against Jonas?", "Chess club", CHESS) == []
    assert _read("What is the wifi password?", "Home network", WIFI) == []
    # The line that says what was asked is.
    brewed = COFFEE + "\nI brew at 94 °C, 15 g to 250 ml.\n"
    assert _read("What temperature do I brew coffee at?", "Coffee", brewed) == [
        ("t1", "I brew at 94 °C, 15 g to 250 ml.")
    ]


def test_every_focus_term_must_be_in_the_quote_or_its_note_s_title_aliases_or_headings() -> None:
    trip = "## Flights\n\nFlying TAP TP1337 from Berlin at 07:40, seat 14C.\n"
    q = "When does my flight to Porto depart at the earliest?"
    assert _read(q, "Lisbon trip, May 2026", trip) == []  # "Porto" is nowhere
    q = "When is my flight to Lisbon?"
    assert _read(q, "Lisbon trip, May 2026", trip) == [("t1", "Flying TAP TP1337 from Berlin at 07:40, seat 14C.")]


def test_a_question_for_money_is_not_answered_by_another_amount() -> None:
    car = "# Car\n\nŠkoda Octavia estate 2017, 1.6 TDI, 142,000 km (November 2026).\n"
    assert _read("How much did I pay for the Škoda?", "Car", car) == []
    paid = car + "\nBought the Škoda in 2021 for 9,800 EUR.\n"
    assert _read("How much did I pay for the Škoda?", "Car", paid) == [
        ("t1", "Bought the Škoda in 2021 for 9,800 EUR.")
    ]


def test_two_notes_that_give_different_dates_leave_the_question_unanswered() -> None:
    question = "When is my dentist appointment?"
    weights = {"dentist": 3.0, "appointment": 2.5}
    log = parse_note("log/2026-10-08.md", "---\ntitle: 8 October\n---\n- Booked dentist appointment for 2 November.\n")
    moved = parse_note(
        "health/dentist.md", "---\ntitle: Dentist\n---\n## Next appointment\nMoved to 3 November (was: 2 November).\n"
    )
    agree = parse_note("health/dentist.md", "---\ntitle: Dentist\n---\n## Next appointment\nStill on 2 November.\n")

    def pack(*notes: object) -> Pack:
        files = [PackedFile(f"t{i}", n.path, n, n.body) for i, n in enumerate(notes)]  # type: ignore[attr-defined]
        holders = {t: frozenset(n.path for n in notes) for t in weights}  # type: ignore[attr-defined]
        return Pack("0" * 40, files, weights=weights, holders=holders)

    assert OfflineReader().read(question, pack(log, moved)).not_in_brain
    assert OfflineReader().read(question, pack(log)).citations  # alone, the log is read as before
    assert OfflineReader().read(question, pack(log, agree)).citations
