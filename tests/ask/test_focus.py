"""Whether an answer's quotes are about its question (cortex.ask.focus): pure, no I/O."""

from __future__ import annotations

import datetime as dt

from hypothesis import given, settings
from hypothesis import strategies as st

from cortex.ask.focus import addressing, unmentioned
from cortex.ask.question import asked_words, expects, focus_terms
from cortex.ask.quotes import check_quote
from cortex.ask.stamps import UNVERIFIED, VERIFIED, QuoteCheck
from cortex.notes.note import parse_note

TODAY = dt.date(2026, 3, 1)
TRIP = parse_note(
    "notes/trip.md",
    "---\ntitle: Lisbon trip, May 2026\n---\n## Flights\n\nFlying TAP TP1337 from Berlin at 07:40, seat 14C.\n",
)
PORTO = parse_note("notes/porto.md", "# Porto weekend\n\n## Flights\n\nFlying TAP TP1200 from Berlin at 07:40.\n")


def found(note, quote: str) -> QuoteCheck:
    check = check_quote(quote, note, {note.path: note}, TODAY)
    assert check.stamp == VERIFIED, check.reason
    return check


def test_focus_terms_are_content_words_less_question_words_and_the_owner() -> None:
    assert focus_terms("When does my flight to Lisbon leave?") == ["flight", "lisbon", "leave"]
    assert focus_terms("What is the name of Nils's accountant?", {"nils"}) == ["accountant"]
    assert focus_terms("What is it?") == []


def test_the_title_and_headings_around_a_quote_mention_terms() -> None:
    flight = found(TRIP, "Flying TAP TP1337 from Berlin at 07:40")
    q = "When does my flight to Lisbon leave?"
    # "flights" (the heading) is a form of "flight"; "Lisbon" is in the title; "leave" is nowhere.
    assert addressing(q, focus_terms(q), [flight]) == (
        {"addresses_question": False, "missing_terms": ["leave"]},
        'but no quote, nor its note\'s title, aliases or headings, mentions "leave" of the question: '
        "the quotes may answer another question",
    )
    q = "Which flight goes to Lisbon?"
    assert addressing(q, focus_terms(q), [flight]) == ({"addresses_question": True}, "")


def test_a_quote_about_another_trip_is_flagged_though_it_verifies() -> None:
    q = "Which flight goes to Lisbon?"
    flags, clause = addressing(q, focus_terms(q), [found(PORTO, "Flying TAP TP1200 from Berlin at 07:40")])
    assert flags == {"addresses_question": False, "missing_terms": ["lisbon"]}
    assert '"lisbon"' in clause


def test_a_quote_not_found_mentions_nothing_and_no_quote_gives_no_flag() -> None:
    q = "Which flight goes to Lisbon?"
    invented = QuoteCheck(UNVERIFIED, "quote not found", "notes/trip.md", quote="The Lisbon flight")
    assert addressing(q, focus_terms(q), [invented])[0] == {
        "addresses_question": False,
        "missing_terms": ["flight", "lisbon"],
    }
    assert addressing(q, focus_terms(q), []) == ({}, "")


def test_a_lower_case_word_is_not_mentioned_by_a_name_in_a_title() -> None:
    q = "Who is Rosa's studio assistant?"
    assert unmentioned(q, focus_terms(q), [("Rosa hired Mila at the studio", ("Home Assistant",))]) == ["assistant"]
    assert unmentioned(q, focus_terms(q), [("Rosa hired Mila at the studio", ("Studio assistant",))]) == []


def test_struck_words_of_a_heading_mention_nothing() -> None:
    q = "Which flight goes to Lisbon?"
    assert unmentioned(q, ["flight", "lisbon"], [("one flight", ("~~Lisbon~~ Porto",))]) == ["lisbon"]


def test_many_missing_terms_are_counted_in_the_clause() -> None:
    q = "alpha bravo charlie delta echo foxtrot golf"
    flags, clause = addressing(q, focus_terms(q), [found(TRIP, "Flying TAP TP1337 from Berlin at 07:40")])
    assert len(flags["missing_terms"]) == 7
    assert clause.startswith('but no quote, nor its note\'s title, aliases or headings, mentions "alpha", "bravo"')
    assert '"echo" (and 2 more) of the question' in clause


@settings(max_examples=200)
@given(st.text(max_size=80), st.lists(st.tuples(st.text(max_size=60), st.lists(st.text(max_size=30))), max_size=3))
def test_unmentioned_is_a_subset_of_the_terms_in_order(question: str, found: list) -> None:
    terms = focus_terms(question)
    missing = unmentioned(question, terms, found)
    assert missing == [t for t in terms if t in missing]
    assert unmentioned(question, terms, [*found, (question, ())]) == []


# -- what a question asks for ---------------------------------------------------------


def test_a_word_naming_what_is_asked_is_mentioned_by_a_specific_of_that_kind() -> None:
    jar = [("- 340 g jar, heather honey: 12 EUR.", ["Honey prices"])]
    q = "What does a jar of heather honey cost?"
    assert unmentioned(q, focus_terms(q), jar) == []
    # The word names the answer only while the quote holds one: a price wants money.
    assert unmentioned(q, focus_terms(q), [("- 340 g jar, heather honey.", ["Honey prices"])]) == ["cost"]
    assert unmentioned(q, focus_terms(q), [("- 340 g jar of heather honey, 2019.", [])]) == ["cost"]
    q = "How large is the deposit for fixed-price work?"
    assert unmentioned(q, focus_terms(q), [("- 25% deposit for fixed-price work.", [])]) == []


def test_a_thing_asked_about_is_no_word_naming_the_answer() -> None:
    # "salary" wants money but is what the question is about: a budget line is no salary.
    q = "What is my salary?"
    assert unmentioned(q, focus_terms(q), [("Budget so far: 1,240 EUR of the planned 1,800 EUR.", [])]) == ["salary"]


def test_a_unit_word_is_mentioned_by_an_amount_in_that_unit_and_a_number_word_by_its_digits() -> None:
    q = "How many kilometres was the bike tour?"
    assert unmentioned(q, focus_terms(q), [("286 km total.", ["Bike tour"])]) == []
    assert unmentioned(q, focus_terms(q), [("286 miles total.", ["Bike tour"])]) == ["kilometres"]
    q = "How many kWh did the panels produce in the first four months?"
    assert unmentioned(q, focus_terms(q), [("First 4 months produced 2,140 kWh.", ["Solar panels"])]) == []


def test_a_compound_is_mentioned_only_whole() -> None:
    q = "Which version of django-htmx is used?"
    assert unmentioned(q, focus_terms(q), [("Django 5.0 with HTMX.", [])]) == ["django-htmx"]
    assert unmentioned(q, focus_terms(q), [("Partial templates (django-htmx 1.17).", [])]) == []


def test_the_question_form_says_what_kind_of_specific_answers() -> None:
    assert expects("Who is my GP?") == {"name"}
    assert expects("Where can I find the club's minutes online?") == {"url"}
    assert expects("What is the URL of the slides?") == {"url"}
    assert expects("What temperature do I brew coffee at?") == {"amount"}
    assert expects("What percentage of every invoice is set aside?") == {"amount"}
    assert expects("Which static site generator is used for the website?") is None
    assert asked_words("How much does the cello rental cost?") >= {"cost"}
    assert asked_words("Which OR-Tools version was chosen?") == {"version"}  # not "or-tools"
    assert asked_words("What is my salary?") == set()
