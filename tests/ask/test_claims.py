"""Claims, not only specifics (cortex.ask.clauses, cortex.ask.claims): an answer that keeps
its quote's words but says the opposite is contradicted, and one that says the same in
other words is not.

Each table below is (quote, answer) and what the verifier says: the kind of contradiction
and the words of its reason, or None for an answer that agrees with its quote. The last
part holds the properties: generated sentences, changed the ways an answer can go wrong,
are always contradicted, and unchanged or lightly reworded never are.
"""

from __future__ import annotations

import datetime as dt

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cortex.ask.claims import MAX_PAIRS, Conflict, contradictions
from cortex.ask.clauses import read, row_clauses
from cortex.ask.quotes import check_quote
from cortex.ask.stamps import BEYOND_QUOTES, CORRECTED, UNVERIFIED, VERIFIED, overall_stamp
from cortex.notes.note import parse_note

# Issue 53: an answer no contradiction or missing specific refuses may still be BEYOND QUOTES,
# where the gate (cortex.ask.entail) wants the quote's own words; these tests are about the former.
PASSES = (VERIFIED, BEYOND_QUOTES)


def says(quote: str, answer: str, row: tuple = ()) -> Conflict | None:
    """The first contradiction of `answer` by `quote`, or None."""
    found = contradictions(answer, [(quote, row)])
    return found[0] if found else None


def check(cases: list[tuple[str, str, str | None, str]]) -> None:
    for quote, answer, kind, words in cases:
        found = says(quote, answer)
        if kind is None:
            assert found is None, (quote, answer, found)
        else:
            assert found is not None, (quote, answer)
            assert found.kind == kind and words in found.reason, (quote, answer, found)


# --- polarity --------------------------------------------------------------------------

NOT_COVERED = "The Alpina policy does not cover skiing or snowboarding."


def test_a_dropped_negation_is_a_contradiction_named_by_both_words() -> None:
    check(
        [
            (
                NOT_COVERED,
                "The Alpina policy covers skiing.",
                "polarity",
                "says 'covers'; the quote says 'does not cover'",
            ),
            (
                "Pip must never be given paracetamol.",
                "Pip can be given paracetamol.",
                "polarity",
                "'must never be given'",
            ),
            ("The landlord does not allow pets.", "Pets are allowed.", "polarity", "'are allowed'"),
            (
                "The 8:10 train doesn't stop at Harwick.",
                "The 8:10 train stops at Harwick.",
                "polarity",
                "'doesn't stop",
            ),
            (
                "Rosa's studio has no wheelchair access.",
                "Rosa's studio has wheelchair access.",
                "polarity",
                "'has no wheelchair'",
            ),
            ("Nothing in the shed is insured.", "Everything in the shed is insured.", "polarity", "'Nothing in"),
            ("Ana can't eat gluten.", "Ana can eat gluten.", "polarity", "can't eat"),
        ]
    )


def test_an_added_negation_is_a_contradiction_too() -> None:
    check([("The Alpina policy covers hiking.", "The Alpina policy does not cover hiking.", "polarity", "'covers'")])


def test_verbs_that_refuse_forbid_or_exclude_negate() -> None:
    check(
        [
            (
                "The school refuses to give out phone numbers.",
                "The school gives out phone numbers.",
                "polarity",
                "refuses",
            ),
            ("The club forbids dogs on the pitch.", "The club allows dogs on the pitch.", "polarity", "forbids"),
            ("The warranty excludes water damage.", "The warranty covers water damage.", "polarity", "excludes"),
            ("The school refuses to give out phone numbers.", "The school won't give out phone numbers.", None, ""),
            ("The warranty excludes water damage.", "Water damage is excluded from the warranty.", None, ""),
        ]
    )


def test_a_negation_said_in_other_words_agrees() -> None:
    check(
        [
            (NOT_COVERED, "Skiing isn't covered by the Alpina policy.", None, ""),
            (NOT_COVERED, "No, skiing is not covered by the policy.", None, ""),  # "No," answers the question
            (NOT_COVERED, "Snowboarding is not covered.", None, ""),
            ("Neither Ana nor Ben has a key to the shed.", "Ben has no key to the shed.", None, ""),
        ]
    )


def test_a_negation_reaches_as_far_as_its_clause() -> None:
    # "but" starts a clause of its own; "and" without a subject shares the negation.
    quote = "The policy does not cover skiing, but it covers hiking and climbing."
    check(
        [
            (quote, "The policy covers hiking.", None, ""),
            (quote, "The policy covers climbing.", None, ""),
            (quote, "The policy covers skiing.", "polarity", "does not cover"),
            ("The policy does not cover skiing and snowboarding.", "The policy covers snowboarding.", "polarity", ""),
            ("Ana and Ben do not walk the dog.", "Ana walks the dog.", "polarity", "do not walk"),
            ("Ana, who doesn't drive, takes the 7:15 bus.", "Ana takes the 7:15 bus.", None, ""),
            ("Ana, who doesn't drive, takes the 7:15 bus.", "Ana drives.", "polarity", "doesn't drive"),
        ]
    )


def test_a_fragment_that_denies_something_denies_just_that() -> None:
    check(
        [
            ("Ana walks the dog, but not on Sundays.", "Ana walks the dog on Sundays.", "polarity", "'not on Sundays'"),
            ("Ana walks the dog, but not on Sundays.", "Ana walks the dog, except on Sundays.", None, ""),
            ("The ferry does not run on Mondays but on Tuesdays.", "The ferry runs on Tuesdays.", None, ""),
            ("The ferry does not run on Mondays but on Tuesdays.", "The ferry runs on Mondays.", "polarity", "'runs'"),
            (
                "The guest wifi works without a password.",
                "The guest wifi works with a password.",
                "polarity",
                "without",
            ),
            (
                "Open on the first Sunday, except in August.",
                "Open on the first Sunday in August.",
                "polarity",
                "except",
            ),
        ]
    )


def test_a_negation_contradicts_only_what_it_bears_on() -> None:
    """A negation is held against a clause that says the word it negates, and not where
    another quote clause negates that word as the answer does (faithful answers of a
    held-out set came back UNVERIFIED through both)."""
    phone = "Physio: Jenny Marsh, 07700 900123 (texts only, no calls)"
    blood = "Blood test: fasting, no food after midnight, water fine"
    tap = "Plumber (Dave, 07700 900123) quoted £140 to replace the tap, not yet booked"
    check(
        [
            (phone, "Jenny Marsh only takes texts, not calls, so message her on 07700 900123.", None, ""),
            (phone, "She takes calls.", "polarity", "no calls"),
            (blood, "Water is fine.", None, ""),
            (blood, "Food is fine after midnight.", "polarity", "no food"),
            (tap, "Dave quoted £140 to replace the tap, but it isn't booked.", None, ""),
            ("Neither Ana nor Ben has a key to the shed.", "Ben has a key to the shed.", "polarity", "Neither"),
        ]
    )


def test_a_condition_said_first_is_cut_as_one_said_last() -> None:
    quote = "The hotel shuttle runs to the airport every 30 minutes, except on Sundays."
    assert [c.text for c in read("Except on Sundays, the shuttle runs.")] == ["Except on Sundays", "the shuttle runs"]
    assert [c.text for c in read("If it rains, the match is off.")] == ["If it rains", "the match is off"]
    check(
        [
            (quote, "Except on Sundays, the hotel shuttle runs to the airport every 30 minutes.", None, ""),
            (quote, "Except on Mondays, the hotel shuttle runs to the airport every 30 minutes.", "condition", ""),
            ("The match is off if it rains.", "If it rains, the match is off.", None, ""),
            ("The match is off if it rains.", "If it rains, the match is not off.", "polarity", ""),
        ]
    )


def test_bounds_and_phrases_with_no_are_not_negations() -> None:
    check(
        [
            ("Guests may stay no more than 3 nights.", "Guests may stay up to 3 nights.", None, ""),
            ("Submit it no later than 5 May.", "Submit it by 5 May at the latest.", None, ""),
            ("Not only Ana but also Ben walks the dog.", "Ben walks the dog.", None, ""),
        ]
    )


# --- comparisons and bounds ----------------------------------------------------------------


def test_a_flipped_comparison_is_a_contradiction() -> None:
    check(
        [
            ("Checked bags over 23 kg pay €60.", "Checked bags under 23 kg pay €60.", "comparison", "'under 23 kg'"),
            ("Children under 12 travel free.", "Children over 12 travel free.", "comparison", "'under 12'"),
            ("Guests may stay at most 3 nights.", "Guests may stay at least 3 nights.", "comparison", "'at most 3'"),
            ("Rent rises by no more than 3% a year.", "Rent rises by more than 3% a year.", "comparison", ""),
            ("Store the cheese below 8 °C.", "Store the cheese above 8 °C.", "comparison", "'below 8 °C'"),
            ("Call Ana after 6pm.", "Call Ana before 6pm.", "comparison", "'after 6pm'"),
            ("Pip gets the tablet after breakfast.", "Pip gets the tablet before breakfast.", "comparison", "after"),
            ("The upload is slower than the download.", "The upload is faster than the download.", "comparison", ""),
            ("The key is above the garage door.", "The key is below the garage door.", "comparison", "above the"),
            ("Ben is older than Ana.", "Ben is younger than Ana.", "comparison", "older than"),
        ]
    )


def test_equivalent_bounds_agree() -> None:
    # "over" = "more than" = "heavier than"; "at most" = "up to" = "no more than".
    check(
        [
            ("Checked bags over 23 kg pay €60.", "Checked bags heavier than 23 kg pay €60.", None, ""),
            ("Checked bags over 23 kg pay €60.", "Checked bags of more than 23 kg pay €60.", None, ""),
            ("Guests may stay at most 3 nights.", "Guests may stay no more than 3 nights.", None, ""),
            ("Guests may stay at most 3 nights.", "Guests can stay up to 3 nights.", None, ""),
            ("Bring at least 2 litres of water.", "Bring 2 litres of water or more.", None, ""),
            ("Children under 12 travel free.", "Children below 12 travel free.", None, ""),
        ]
    )


def test_a_strict_bound_is_not_an_inclusive_one() -> None:
    check([("Children under 12 travel free.", "Children up to 12 travel free.", "comparison", "'under 12'")])


def test_an_answer_may_neither_leave_a_bound_out_nor_add_one() -> None:
    # Issue 41: "open from June" is not "open in June", "by 18:00" not "at 18:00".
    check(
        [
            ("Guests may stay at most 3 nights.", "Guests may stay 3 nights.", "comparison", "'at most 3'"),
            ("The lido is open from June.", "The lido is open in June.", "range", "'from June'"),
            ("Return the car by 18:00 at the latest.", "Return the car at 18:00.", "comparison", "18:00 at the"),
            ("Return the car by 18:00 at the latest.", "Return the car no later than 18:00.", None, ""),
            ("Bring at least 2 litres of water.", "Bring 2 litres of water or more.", None, ""),
            ("The ferry runs from 8 to 18.", "The ferry runs at 8.", None, ""),  # a range's end stands alone
            ("Guests may stay 3 nights.", "Guests may stay at least 3 nights.", "comparison", "'at least 3'"),
        ]
    )


# --- ordinals and recurrences ------------------------------------------------------------------


def test_a_changed_ordinal_is_a_contradiction() -> None:
    third = "The book club meets on the third Thursday of every month."
    check(
        [
            (third, "The book club meets on the first Thursday of every month.", "ordinal", "'first Thursday'"),
            (third, "The book club meets on the last Thursday of every month.", "ordinal", "'third Thursday'"),
            ("Payday is the last working day.", "Payday is the first working day.", "ordinal", "'last working'"),
            ("Our flat is on the 4th floor.", "Our flat is on the second floor.", "ordinal", ""),
            (third, "Book club: the third Thursday of each month.", None, ""),
            ("Payday is the last working day.", "Payday falls on the final working day.", None, ""),
        ]
    )


def test_an_ordinal_the_quotes_never_state_is_a_contradiction_a_discourse_first_is_not() -> None:
    check(
        [
            ("The book club meets on Thursday.", "The book club meets on the second Thursday.", "ordinal", "second"),
            ("The book club meets on Thursday.", "First, the book club meets on Thursday.", None, ""),
            ("The book club meets on Thursday.", "At first the book club met on Thursday.", None, ""),
        ]
    )


def test_a_changed_recurrence_is_a_contradiction() -> None:
    check(
        [
            ("The bins go out every other Tuesday.", "The bins go out every Tuesday.", "recurrence", "'every Tuesday'"),
            ("The choir rehearses weekly.", "The choir rehearses fortnightly.", "recurrence", "'weekly'"),
            ("Water the orchids once a week.", "Water the orchids twice a week.", "recurrence", "once a week"),
            ("Gym fees are billed quarterly.", "Gym fees are billed monthly.", "recurrence", "quarterly"),
            ("The market runs on weekends.", "The market runs on weekdays.", "recurrence", "on weekends"),
            ("Rosa visits every weekend.", "Rosa visits every other weekend.", "recurrence", ""),
        ]
    )


def test_a_recurrence_said_in_other_words_agrees() -> None:
    check(
        [
            ("The bins go out every other Tuesday.", "The bins go out fortnightly on Tuesdays.", None, ""),
            ("The choir rehearses weekly on Wednesdays.", "The choir rehearses every Wednesday.", None, ""),
            ("Bins go out on Thursdays.", "Bins go out every Thursday.", None, ""),
            ("Water the orchids once a week.", "Water the orchids once per week.", None, ""),
            ("The boiler is serviced yearly.", "The boiler is serviced annually.", None, ""),
        ]
    )


# --- ranges ---------------------------------------------------------------------------------


def test_a_closed_range_is_not_an_open_one_nor_the_reverse() -> None:
    check(
        [
            ("The app supports iOS 16 to 17.", "The app supports iOS 16 and later.", "range", "'16 and later'"),
            ("The app supports iOS 16 to 17.", "The app supports iOS 16+.", "range", "'16 to 17'"),
            ("Sow fennel from March through May.", "Sow fennel from March onwards.", "range", "March through May"),
            ("Children aged 4 to 11 pay half.", "Children aged 4 and over pay half.", "range", ""),
            ("Dogs of 10 to 25 kg pay the medium rate.", "Dogs over 10 kg pay the medium rate.", "range", "over 10 kg"),
            ("Android 12 and later runs it; we test on 14.", "Android 12 to 14 runs it.", "range", "'12 and later'"),
        ]
    )


def test_a_range_in_other_words_agrees_and_either_end_may_stand_alone() -> None:
    check(
        [
            ("The app supports iOS 16 to 17.", "The app supports iOS 16–17.", None, ""),
            ("The app supports iOS 16 to 17.", "The app supports iOS 16 through 17.", None, ""),
            ("The app supports iOS 16 to 17.", "The app supports iOS 16 and 17.", None, ""),
            ("The studio is open 9:00–17:00.", "The studio is open from 9:00 to 17:00.", None, ""),
            ("The studio is open 9:00–17:00.", "The studio opens from 9:00.", None, ""),
            ("The studio is open 9:00–17:00.", "The studio is open until 17:00.", None, ""),
            ("The heating runs between 6 and 9.", "The heating runs from 6 to 9.", None, ""),
            ("The app supports iOS 16 and later.", "The app supports iOS 16+.", None, ""),
            ("The app supports iOS 16 and later.", "The app supports iOS 16 or later.", None, ""),
        ]
    )


# --- quantifiers ----------------------------------------------------------------------------


def test_a_changed_quantifier_is_a_contradiction() -> None:
    check(
        [
            ("All members get 10% off.", "Some members get 10% off.", "quantifier", "'All members'"),
            ("Some rooms have a sea view.", "All rooms have a sea view.", "quantifier", "'Some rooms'"),
            ("Most of the hives survived.", "All of the hives survived.", "quantifier", "Most of"),
            ("Only the owner can sign.", "All tenants can sign.", "quantifier", "Only the"),
            ("The bakery is always closed on Mondays.", "The bakery is sometimes closed on Mondays.", "quantifier", ""),
            ("Most days the commute takes 40 minutes.", "Every day the commute takes 40 minutes.", "quantifier", ""),
            ("Only members may use the sauna.", "Everyone may use the sauna.", "quantifier", ""),
        ]
    )


def test_a_quantifier_in_other_words_agrees_and_an_added_one_is_not_checked() -> None:
    check(
        [
            ("All members get 10% off.", "Every member gets 10% off.", None, ""),
            ("Some rooms have a sea view.", "A few rooms have a sea view.", None, ""),
            ("Only the owner can sign the renewal.", "The renewal can only be signed by the owner.", None, ""),
            ("The bakery is always closed on Mondays.", "The bakery is closed every Monday.", None, ""),
            ("Members get 10% off.", "All members get 10% off.", None, ""),  # a limit: see claims' docstring
            ("Tickets are €5 for members.", "Tickets are €5 each for members.", None, ""),  # a price a piece
        ]
    )


# --- who does what -----------------------------------------------------------------------------

CHORES = "Ana walks the dog and Ben feeds the cat."


def test_swapped_roles_are_a_contradiction() -> None:
    check(
        [
            (
                CHORES,
                "Ben walks the dog and Ana feeds the cat.",
                "roles",
                "says 'Ben walks the dog'; the quote says 'Ana walks",
            ),
            (CHORES, "Ana feeds the cat.", "roles", ""),
            ("Coffee costs €4 and tea costs €3.", "Coffee costs €3.", "roles", "'Coffee costs €4'"),
            ("Rosa teaches on Monday; Gideon teaches on Wednesday.", "Gideon teaches on Monday.", "roles", ""),
            ("The Volvo is Ana's and the Fiat is Ben's.", "The Fiat is Ana's.", "roles", ""),
            ("Tom's school starts at 8:30 and Mia's at 8:50.", "Mia's school starts at 8:30.", "roles", ""),
            ("Tom's school starts at 8:30 and Mia's at 8:50.", "Tom's school starts at 8:50.", "roles", ""),
            ("The red key opens the shed and the blue key opens the gate.", "The red key opens the gate.", "roles", ""),
            ("Ana lent Ben €200 in May.", "Ben lent Ana €200 in May.", "roles", "'Ana lent Ben"),
            ("Gideon is Rosa's landlord.", "Rosa is Gideon's landlord.", "roles", ""),
        ]
    )


def test_the_same_pairing_in_other_words_or_order_agrees() -> None:
    check(
        [
            (CHORES, "Ana walks the dog; Ben feeds the cat.", None, ""),
            (CHORES, "Ben feeds the cat and Ana walks the dog.", None, ""),
            (CHORES, "Ana walks the dog.", None, ""),
            ("Ana and Ben walk the dog.", "Ben and Ana walk the dog.", None, ""),
            ("Coffee costs €4 and tea costs €3.", "Tea is €3 and coffee €4.", None, ""),
            (
                "Tom's school starts at 8:30 and Mia's at 8:50.",
                "Mia's school starts at 8:50 and Tom's at 8:30.",
                None,
                "",
            ),
            ("Ana lent Ben €200 in May.", "In May, Ben borrowed €200 from Ana.", None, ""),
            ("Gideon is Rosa's landlord.", "Rosa rents from Gideon, her landlord.", None, ""),
            (
                "The meeting is on 3 May at 10:00. Lunch follows at 12:30.",
                "The meeting is on 3 May, lunch at 12:30.",
                None,
                "",
            ),
        ]
    )


def test_list_items_pair_names_as_a_sentence_does() -> None:
    quotes = [("Ana: bins on Tuesday", ()), ("Ben: recycling on Friday", ())]
    assert contradictions("Ben takes the bins out on Tuesday.", quotes)[0].kind == "roles"
    assert contradictions("Ana does the bins on Tuesday and Ben the recycling on Friday.", quotes) == []


# --- table columns ------------------------------------------------------------------------------

PRICES = (("item", "filter coffee at the kiosk"), ("old price", "€3"), ("new price", "€4"))
TRADES = [
    ("", (("person", "Ana Ruiz (plumber)"), ("phone", "0612"), ("email", "ana@plumb.example"))),
    ("", (("person", "Ben Okafor (electrician)"), ("phone", "0698"), ("email", "ben@volt.example"))),
]


def test_a_row_is_read_as_one_clause_a_column_each_a_value_with_its_heading() -> None:
    old, new = row_clauses(PRICES)
    assert (old.column, old.retired, old.row) == ("old price", True, "filter coffee at the kiosk")
    assert (new.column, new.retired) == ("new price", False)
    assert [v.spec.text for v in old.values] == ["€3"] and {"coffee", "kiosk", "old"} <= old.words


@pytest.mark.parametrize("heading", ["old", "Previous", "former address", "was", "2025 (old)", "prior plan"])
def test_a_heading_that_says_old_retires_its_column(heading) -> None:
    assert row_clauses((("item", "x y z"), (heading, "€3"), ("now", "€4")))[0].retired


@pytest.mark.parametrize("heading", ["price", "older than 5", "new", "current", "2025"])
def test_other_headings_do_not(heading) -> None:
    assert not row_clauses((("item", "x y z"), (heading, "€3"), ("now", "€4")))[0].retired


def test_a_value_from_an_old_column_is_not_live() -> None:
    row = "| filter coffee at the kiosk | €3 | €4 |"
    found = says(row, "Filter coffee at the kiosk costs €3.", PRICES)
    assert found.kind == "column" and found.reason == (
        "the answer says '€3'; the quote holds it only in the table's 'old price' column, a retired value"
    )
    assert says(row, "The new price of filter coffee is €3.", PRICES).kind == "column"


def test_an_old_value_said_as_old_is_fine() -> None:
    row = "| filter coffee at the kiosk | €3 | €4 |"
    for answer in (
        "Filter coffee at the kiosk costs €4.",
        "Filter coffee at the kiosk used to cost €3; it now costs €4.",
        "The old price of filter coffee was €3.",
        "Filter coffee at the kiosk went up from €3 to €4.",
    ):
        assert says(row, answer, PRICES) is None, answer


def test_a_value_belongs_to_its_column_and_its_row() -> None:
    assert contradictions("Ana Ruiz's phone is 0612.", TRADES) == []
    assert contradictions("Ana Ruiz is the plumber and Ben Okafor the electrician.", TRADES) == []
    for answer in ("Ana Ruiz's phone is 0698.", "Ana's email is ben@volt.example.", "Ben Okafor is the plumber."):
        assert contradictions(answer, TRADES)[0].kind == "roles", answer
    market = (("day", "Saturday at the market"), ("opens", "08:00"), ("closes", "13:00"))
    assert says("", "The market opens at 13:00 on Saturday.", market).kind == "roles"
    assert says("", "On Saturday the market opens at 08:00.", market) is None


# --- signs and units ---------------------------------------------------------------------------------


def test_a_dropped_or_added_sign_is_a_contradiction() -> None:
    check(
        [
            (
                "Keep the wraps on until nights stay above −5 °C.",
                "Keep the wraps on until nights stay above 5 °C.",
                "sign",
                "'above -5 °C'",
            ),
            ("The freezer runs at −18 °C.", "The freezer runs at 18 °C.", "sign", ""),
            ("The account is overdrawn at -€140.", "The account is at €140.", "sign", ""),
            ("The offset is set to minus 2 degrees.", "The offset is set to 2 degrees.", "sign", "minus 2 degrees"),
            ("It dropped to 7 degrees below zero.", "It dropped to 7 degrees.", "sign", "below zero"),
            ("The Tokyo client works on UTC+9.", "The Tokyo client works on UTC-9.", "sign", "'+9'"),
            ("The goal difference is −4.", "The goal difference is +4.", "sign", ""),
            ("The cellar swings by ±3 °C.", "The cellar swings by 3 °C.", "sign", "±3 °C"),
            ("The drive takes ~3 hours.", "The drive takes exactly 3 hours.", "sign", "~3 hours"),
        ]
    )


def test_a_sign_in_other_words_agrees_and_about_may_be_added() -> None:
    check(
        [
            (
                "Keep the wraps on until nights stay above −5 °C.",
                "Keep the wraps on until nights stay above minus 5 °C.",
                None,
                "",
            ),
            ("It dropped to 7 degrees below zero.", "It dropped to −7 degrees.", None, ""),
            ("The drive takes ~3 hours.", "The drive takes about 3 hours.", None, ""),
            ("The drive takes 3 hours.", "The drive takes roughly 3 hours.", None, ""),
            ("The Tokyo client works on UTC+9.", "The Tokyo client is on UTC+9.", None, ""),
            ("Pages 10-12 cover it.", "Pages 10 to 12 cover it.", None, ""),  # a range's dash is no minus
        ]
    )


# --- reading ---------------------------------------------------------------------------------------


def test_a_sentence_is_cut_into_clauses_at_its_joints_never_inside_a_bound_or_range() -> None:
    texts = [c.text for c in read("Ana walks the dog and Ben feeds the cat; Rosa, who cooks, sings.")]
    assert texts == ["Ana walks the dog", "Ben feeds the cat", "Rosa", "who cooks", "sings"]
    texts = [c.text for c in read("Dogs between 10 and 25 kg, and no more than 3 of them, stay.")]
    assert "Dogs between 10 and 25 kg" in texts
    # A hard-wrapped line goes on; a list item starts anew.
    assert len(read("The heating runs\nbetween 6 and 9.")) == 1
    assert len(read("- The heating runs\n- between 6 and 9.")) == 2


def test_each_specific_is_read_with_its_bound_and_sign() -> None:
    values = {
        v.spec.text: (v.bound, "".join(sorted(v.signs)), v.said)
        for c in read("Over 20 kg, at most 3 nights, from 9am to 5pm, 16+ and about −5 °C; since 2020, until Friday.")
        for v in c.values
    }
    assert values["20 kg"] == ("gt", "", "Over 20 kg")
    assert values["3"] == ("le", "", "at most 3")
    assert values["9am"][0] == "lo" and values["5pm"][0] == "hi" and values["5pm"][2] == "from 9am to 5pm"
    assert values["16"] == ("ge", "", "16+")
    assert values["5 °C"] == ("", "-~", "about -5 °C")
    assert values["2020"][0] == "from" and values["Friday"][0] == "until"


def test_reading_never_raises() -> None:
    for text in ("", " ", "(((", "no", "No.", "|||", "-", "−", "+", "±±5", 'a (was: "b")', "\n\n", "1st 2nd"):
        read(text)
        contradictions(text, [(text, ())])


@settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.text(max_size=120), st.text(max_size=120))
def test_any_text_is_read_without_raising(answer, quote) -> None:
    contradictions(answer, [(quote, ()), (quote, (("a", answer), ("old", quote)))])


def test_an_answer_too_long_to_check_fails_closed() -> None:
    sentence = "Ana walks the dog and feeds the cat. "
    found = contradictions(sentence * 400, [(sentence * 60, ())])
    assert [c.kind for c in found] == ["unchecked"]
    assert (
        found[0].reason.startswith("the answer is too long to check its claims (")
        and f"{MAX_PAIRS:,}" in found[0].reason
    )


# --- through the stamp -----------------------------------------------------------------------------

DAY = dt.date(2026, 3, 1)


def stamp(body: str, quotes: list[str], answer: str) -> tuple[str, str]:
    note = parse_note("notes/t.md", f"---\ntitle: T\n---\n{body}")
    return overall_stamp([check_quote(q, note, {"t": note}, DAY) for q in quotes], False, 0, answer)


def test_a_contradicted_answer_is_unverified_and_the_reason_names_both_words() -> None:
    s, why = stamp(f"## Insurance\n\n{NOT_COVERED}\n", [NOT_COVERED], "The Alpina policy covers skiing.")
    assert s == UNVERIFIED
    assert why == "the answer says 'covers'; the quote says 'does not cover' (the quote is VERIFIED)"


def test_a_quoted_table_row_brings_its_headings() -> None:
    body = "## Kiosk\n\n| item | old price | new price |\n|---|---|---|\n| filter coffee at the kiosk | €3 | €4 |\n"
    row = "| filter coffee at the kiosk | €3 | €4 |"
    assert stamp(body, [row], "Filter coffee at the kiosk costs €3.")[0] == UNVERIFIED
    assert stamp(body, [row], "Filter coffee at the kiosk costs €4.")[0] in PASSES


def test_an_ungrounded_specific_is_named_before_a_contradiction() -> None:
    s, why = stamp(f"## Insurance\n\n{NOT_COVERED}\n", [NOT_COVERED], "The Alpina policy covers skiing in 2027.")
    assert s == UNVERIFIED and why.startswith("the answer says 2027; no quote contains it")


def test_a_clause_after_after_before_or_once_keeps_its_own_subject() -> None:
    # "… after Legal approved it" is a clause of its own: its subject is not the main verb's agent.
    quote = "The lease was renewed by Hannah after Marek checked the meter readings."
    check(
        [
            (quote, "Marek renewed the lease after Hannah checked the meter readings.", "roles", ""),
            (quote, "Hannah renewed the lease after Marek checked the meter readings.", None, ""),
            (quote, "After Marek checked the meter readings, Hannah renewed the lease.", None, ""),
            # No subject after it: a bound of time, not a clause ("after 20:00", "before lunch").
            ("The gate is locked after 20:00 by the caretaker.", "The caretaker locks the gate after 20:00.", None, ""),
        ]
    )


def test_faithful_rewordings_of_conditions_bounds_and_order_stay_verified() -> None:
    # A fronted condition, "no later than" for "by … at the latest", conjuncts reordered.
    check(
        [
            (
                "I don't need to file a return for the side income if it stays under £1,000 a year.",
                "If the side income stays under £1,000 a year, I don't need to file a return.",
                None,
                "",
            ),
            (
                "Dr Amir visits at home when Dad can't get to the clinic.",
                "When Dad can't get to the clinic, Dr Amir visits at home.",
                None,
                "",
            ),
            (
                "Fees must be paid by the second lesson at the latest.",
                "Pay the fees no later than the second lesson.",
                None,
                "",
            ),
            (
                "Ines takes the first shift and Tomek takes the second.",
                "Tomek takes the second shift and Ines takes the first.",
                None,
                "",
            ),
            # The swap is still one.
            ("Ines takes the first shift and Tomek takes the second.", "Tomek takes the first shift.", "ordinal", ""),
        ]
    )


def test_an_irregular_past_is_a_verb_and_a_listed_gapped_item_keeps_its_value() -> None:
    check(
        [
            (
                "Ms Byrne sold her old piano to Colm for £200.",
                "Colm sold his old piano to Ms Byrne for £200.",
                "roles",
                "",
            ),
            (
                "Ms Byrne sold her old piano to Colm for £200.",
                "Colm bought the old piano from Ms Byrne for £200.",
                None,
                "",
            ),
            (
                "The plain loaf proved for 2 hours, the rye loaf for 3 hours, and the spelt loaf for 90 minutes.",
                "The rye loaf proved for 2 hours.",
                "roles",
                "",
            ),
            (
                "The plain loaf proved for 2 hours, the rye loaf for 3 hours, and the spelt loaf for 90 minutes.",
                "The rye loaf proved for 3 hours.",
                None,
                "",
            ),
        ]
    )


def test_a_row_s_values_said_under_other_columns_are_swapped() -> None:
    # One clause may say every cell of a row: each value is read with the words just before it.
    body = "## Clinic\n\n| Name | Room | Phone |\n|---|---|---|\n| Dr Sato | 118 | 4402 |\n| Dr Berg | 221 | 4410 |\n"
    row = "| Dr Sato | 118 | 4402 |"
    assert stamp(body, [row], "Dr Sato is in room 4402, phone 118.")[0] == UNVERIFIED
    assert stamp(body, [row], "Dr Sato is in room 118, phone 4402.")[0] in PASSES
    # A whole row identifies its passage by every cell, numbers too.
    assert stamp(body, [row], "Dr Sato: room 118, phone 4402.")[0] in PASSES
    # A heading names what its column holds: an identifier from it is grounded.
    bills = "## Bills\n\n| Supplier | Monthly DD | Annual |\n|---|---|---|\n| Bright Energy | £95 | £1,140 |\n"
    assert stamp(bills, ["| Bright Energy | £95 | £1,140 |"], "The Bright Energy monthly DD is £95.")[0] == VERIFIED


def test_a_row_s_headings_may_follow_its_values_and_a_header_row_states_nothing() -> None:
    body = "## Deals\n\n| Lender | Rate | Fee |\n|---|---|---|\n| Leeds BS | 4.1% | £499 |\n| Skipton | 4.6% | £0 |\n"
    header, row = "| Lender | Rate | Fee |", "| Leeds BS | 4.1% | £499 |"
    assert stamp(body, [row], "Leeds BS has a 4.1% rate and a £499 fee.")[0] in PASSES
    assert stamp(body, [row], "Leeds BS has a £499 rate and a 4.1% fee.")[0] == UNVERIFIED
    assert stamp(body, [header, row], "Leeds BS: rate 4.1%, fee £499.")[0] in PASSES
    # An answer that copies the row as a row reads its cells by place.
    vans = (
        "## Depots\n\n| id | depot | vans | quirk |\n|---|---|---|---|\n| 4 | Ashby | 5 | ferry at 06:15 for 2 vans |\n"
    )
    copied = "| 4 | Ashby | 5 | ferry at 06:15 for 2 vans |"
    assert stamp(vans, [copied], f"From the notes:\n{copied}")[0] == VERIFIED
    # A cell's own words beside its value are no heading: "Dad at 08:15" under drop-off.
    run = "## Run\n\n| day | drop-off | pick-up |\n|---|---|---|\n| Friday | Dad at 08:15 | Gran at 15:20 |\n"
    friday = "| Friday | Dad at 08:15 | Gran at 15:20 |"
    assert stamp(run, [friday], "Friday drop-off: Dad at 08:15; pick-up: Gran at 15:20.")[0] == VERIFIED


def test_two_quoted_rows_said_in_one_sentence_keep_each_value_in_its_own_row_and_column() -> None:
    body = "## Clubs\n\n| Child | Club | Day |\n|---|---|---|\n| Zoe | gymnastics | Tuesday |\n| Noah | chess | Thursday |\n"
    quotes = ["| Child | Club | Day |", "| Zoe | gymnastics | Tuesday |", "| Noah | chess | Thursday |"]
    assert stamp(body, quotes, "Zoe does gymnastics on Tuesday and Noah does chess on Thursday.")[0] == VERIFIED
    assert stamp(body, quotes, "Noah does chess on Thursday and Zoe does gymnastics on Tuesday.")[0] == VERIFIED
    for wrong in (
        "Zoe does chess on Tuesday and Noah does gymnastics on Thursday.",
        "Zoe does gymnastics on Thursday and Noah does chess on Tuesday.",
        "Zoe does gymnastics on Tuesday and Noah does chess on Tuesday.",
    ):
        assert stamp(body, quotes, wrong)[0] not in (VERIFIED, CORRECTED), wrong
    # A row's cells in another order than its columns: the column rule still reads each value.
    kit = "## Kitchen\n\n| Appliance | Bought | Make |\n|---|---|---|\n| Fridge | 2021 | Bosch |\n"
    assert stamp(kit, ["| Fridge | 2021 | Bosch |"], "The fridge is a Bosch, bought in 2021.")[0] == VERIFIED
    assert stamp(kit, ["| Fridge | 2021 | Bosch |"], "The fridge is a 2021, bought in Bosch.")[0] != VERIFIED


def test_a_section_given_as_a_template_is_no_fact_unless_the_answer_says_template() -> None:
    body = "## Packing list (template, copy for each trip)\n\n- Passport: in the blue folder\n- Charger: USB-C, 65 W\n"
    quote = "Passport: in the blue folder"
    s, why = stamp(body, [quote], "Your passport is in the blue folder.")
    assert s == UNVERIFIED and "template or example" in why
    assert stamp(body, [quote], "The packing list template has the passport in the blue folder.")[0] in PASSES
    # A quote's own "Example" (a name) does not make the answer about the template.
    lettings = "## Rent (template)\n\nRent: 950 a month to Example Lettings Ltd.\n"
    assert (
        stamp(lettings, ["Rent: 950 a month to Example Lettings Ltd."], "Rent is 950 a month to Example Lettings Ltd.")[
            0
        ]
        == UNVERIFIED
    )
    plain = "## Packing\n\n- Passport: in the blue folder\n"
    assert stamp(plain, [quote], "Your passport is in the blue folder.")[0] in PASSES


# --- properties: generated sentences, changed ---------------------------------------------------------

NAMES = ["Ana", "Ben", "Rosa", "Gideon", "Tom", "Nils", "Priya", "Omar"]
VERBS = [("walks", "walk"), ("feeds", "feed"), ("washes", "wash"), ("paints", "paint"), ("repairs", "repair")]
NOUNS = ["dog", "van", "shed", "fence", "boat", "bike", "kiln", "hives"]
BOUNDS = [("over", "under"), ("more than", "less than"), ("at least", "at most"), ("above", "below")]
# A bound and a way of saying the same: what a light paraphrase may use.
SAME_BOUND = {"over": "more than", "more than": "over", "at least": "no less than", "at most": "no more than",
              "above": "over", "under": "less than", "less than": "under", "below": "under"}  # fmt: skip
ORDINALS = ["first", "second", "third", "fourth", "last"]
DAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"]


def passes(quote: str, answer: str) -> bool:
    """Not contradicted: VERIFIED, or BEYOND QUOTES where the gate wants the quote's own words."""
    note = parse_note("notes/g.md", f"---\ntitle: G\n---\n## Notes\n\n{quote}.\n")
    return overall_stamp([check_quote(quote, note, {"g": note}, DAY)], False, 0, answer)[0] in PASSES


def verified(quote: str, answer: str) -> bool:
    note = parse_note("notes/g.md", f"---\ntitle: G\n---\n## Notes\n\n{quote}.\n")
    return overall_stamp([check_quote(quote, note, {"g": note}, DAY)], False, 0, answer)[0] == VERIFIED


@st.composite
def sentences(draw):
    """(quote, [changed answers], [unchanged or lightly reworded answers]): each change
    negates the sentence, flips its bound, changes its ordinal or swaps its two names."""
    a, b = draw(st.permutations(NAMES))[:2]
    (v1s, v1), (v2s, v2) = draw(st.permutations(VERBS))[:2]
    n1, n2 = draw(st.permutations(NOUNS))[:2]
    k = draw(st.sampled_from(range(len(BOUNDS))))
    bound, flipped = draw(st.permutations(BOUNDS[k]))
    minutes = draw(st.integers(5, 95))
    ordinal, other = draw(st.permutations(ORDINALS))[:2]
    day = draw(st.sampled_from(DAYS))
    negated = draw(st.booleans())
    body = f"the {n1} for {bound} {minutes} minutes on the {ordinal} {day} of the month"
    if negated:
        quote = f"{a} does not {v1} {body}"
        changed = [f"{a} {v1s} {body}"]
        same = [quote, f"{a} doesn't {v1} {body}"]
    else:
        quote = f"{a} {v1s} {body}"
        changed = [f"{a} does not {v1} {body}", f"{a} never {v1s} {body}"]
        same = [
            quote,
            f"{a} {v1s} the {n1} on the {ordinal} {day} of the month for {SAME_BOUND[bound]} {minutes} minutes",
        ]
    head = f"{a} doesn't {v1}" if negated else f"{a} {v1s}"
    changed.append(f"{head} the {n1} for {flipped} {minutes} minutes on the {ordinal} {day} of the month")
    changed.append(f"{head} the {n1} for {bound} {minutes} minutes on the {other} {day} of the month")
    pair = f"{a} {v1s} the {n1} and {b} {v2s} the {n2}"
    pairs = (
        pair,
        [f"{b} {v1s} the {n1} and {a} {v2s} the {n2}", f"{b} {v1s} the {n1}", f"{a} {v2s} the {n2}"],
        [pair, f"{b} {v2s} the {n2} and {a} {v1s} the {n1}", f"{a} {v1s} the {n1}; {b} {v2s} the {n2}"],
    )
    return [(quote, changed, same), pairs]


@pytest.mark.slow
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(sentences())
def test_a_changed_sentence_is_never_verified_and_an_unchanged_one_always_is(cases) -> None:
    for quote, changed, same in cases:
        for answer in changed:
            assert not verified(quote, answer), (quote, answer)
        for answer in same:
            assert passes(quote, answer), (quote, answer)


# --- issue 41's classes, read more widely ----------------------------------------------------


def test_roles_are_told_by_the_words_each_side_has_of_its_own() -> None:
    # A title or a word both sides share ("Dr", "cat") tells no one apart.
    check(
        [
            (
                "Dr Okafor succeeded Dr Lindqvist as head of cardiology.",
                "Dr Okafor was succeeded by Dr Lindqvist as head of cardiology.",
                "roles",
                "was succeeded by",
            ),
            (
                "Our dog Rufus chases the neighbour's dog Bruno.",
                "Our dog Rufus is chased by the neighbour's dog Bruno.",
                "roles",
                "the quote says 'Our dog Rufus chases",
            ),
            (
                "Our dog Rufus chases the neighbour's dog Bruno.",
                "The neighbour's dog Bruno is chased by our dog Rufus.",
                None,
                "",
            ),
        ]
    )


def test_a_clause_read_as_passive_has_found_its_verb() -> None:
    # "shifts" and "rotas" end in -s but are nouns once "are covered by" is the verb.
    check(
        [
            (
                "Lena covers Omar's night shifts in March.",
                "In March, Omar's night shifts are covered by Lena.",
                None,
                "",
            ),
            (
                "Lena covers Omar's night shifts in March.",
                "In March, Lena's night shifts are covered by Omar.",
                "roles",
                "",
            ),
        ]
    )


def test_a_bound_reaches_a_value_across_a_part_of_its_period() -> None:
    check(
        [
            (
                "The lease runs until the end of March 2027.",
                "The lease runs from the end of March 2027.",
                "comparison",
                "says 'from the end of March 2027'; the quote says 'until",
            ),
            ("The lease runs until the end of March 2027.", "The lease runs until the end of March 2027.", None, ""),
            ("Road works last until mid June.", "Road works last from mid June.", "comparison", ""),
        ]
    )


def test_only_with_after_or_upon_is_a_condition_the_answer_keeps() -> None:
    check(
        [
            (
                "Visitors may enter the lab only with an escort.",
                "Visitors may enter the lab.",
                "condition",
                "leaves out the quote's condition 'only with an escort'",
            ),
            (
                "Visitors may enter the lab only with an escort.",
                "Visitors may enter the lab only with an escort.",
                None,
                "",
            ),
            ("Water the cuttings only after the soil dries.", "Water the cuttings.", "condition", "only after"),
            ("The café is open only on weekdays.", "The café is open on weekdays.", None, ""),
        ]
    )


def test_values_given_to_the_other_thing_of_two_are_roles_swapped() -> None:
    quote = "Bake the bread at 220 °C for 35 minutes and the rolls at 200 °C for 15 minutes."
    check(
        [
            (quote, "Bake the bread at 200 °C for 15 minutes.", "roles", "the quote says 'Bake the bread at 220 °C"),
            (quote, "Bake the bread at 220 °C for 35 minutes.", None, ""),
            ("The gym opens at 6:00 and the heated pool at 7:00.", "The pool opens at 7:00.", None, ""),
            ("The gym opens at 6:00 and the heated pool at 7:00.", "The gym opens at 6:00.", None, ""),
            # A gapped clause's thing given the other's: no values, the words alone.
            (
                "The red box holds the winter clothes and the grey one the tent.",
                "The grey box holds the winter clothes.",
                "roles",
                "",
            ),
            (
                "The red box holds the winter clothes and the grey one the tent.",
                "The red box holds the winter clothes.",
                None,
                "",
            ),
        ]
    )


def test_one_end_of_a_span_said_as_a_point_drops_the_span() -> None:
    # A span of dates, times or amounts is not its start or its end alone; a span of bare
    # numbers (versions, counts of a list) may be.
    check(
        [
            ("The library is shut from 2 June to 30 July.", "The library is shut on 2 June.", "range", "2 June"),
            ("The cast stays on for 6 to 8 weeks.", "The cast stays on for 8 weeks.", "range", "8 weeks"),
            ("Prune the roses between January and February.", "Prune the roses in February.", "range", ""),
            ("Visiting is 14:00–16:00 on weekdays.", "Visiting is at 14:00 on weekdays.", "range", "14:00"),
            ("The swifts nest from mid-May into early August.", "The swifts nest in early August.", "range", ""),
            ("The library is shut from 2 June to 30 July.", "The library is shut from 2 June.", None, ""),
            ("The library is shut from 2 June to 30 July.", "The library is shut until 30 July.", None, ""),
            ("The app runs on Android 12 to 14.", "The app runs on Android 12.", None, ""),
        ]
    )


def test_a_negated_bound_is_the_bound_turned_round() -> None:
    quote = "Grandad shouldn't drive more than 50 miles a day."
    check(
        [
            (quote, "Grandad should drive no more than 50 miles a day.", None, ""),
            (quote, "Grandad should drive at most 50 miles a day.", None, ""),
            (quote, "Grandad should drive more than 50 miles a day.", "comparison", "not more than 50 miles"),
            (quote, "Grandad should drive at least 50 miles a day.", "comparison", ""),
        ]
    )


def test_and_older_and_and_younger_are_bounds() -> None:
    check(
        [
            (
                "The junior squad is for players aged 10 to 13.",
                "The junior squad is for players aged 10 and older.",
                "range",
                "",
            ),
            (
                "The senior squad is for players aged 14 and older.",
                "The senior squad is for players aged 14 or older.",
                None,
                "",
            ),
            (
                "The crèche takes children aged 5 and younger.",
                "The crèche takes children aged 5 and older.",
                "comparison",
                "",
            ),
        ]
    )


def test_a_gapped_clause_keeps_its_own_value() -> None:
    # "… and the summer ones at 36,000": the verb is left out, the value is the summer ones'.
    tyres = "Winter tyres were fitted at 30,000 miles and the summer ones at 36,000."
    boiler = "The boiler service is due on 12 March and the chimney sweep on 2 April."
    cage = "The hamster's cage is cleaned on the 2nd of each month, the rabbit's on the 20th."
    check(
        [
            (tyres, "The summer tyres were fitted at 30,000 miles.", "roles", ""),
            (boiler, "The chimney sweep is due on 12 March.", "roles", ""),
            (cage, "The rabbit's cage is cleaned on the 2nd of each month.", "roles", ""),
            (tyres, "The winter tyres were fitted at 30,000 miles.", None, ""),
            (boiler, "The chimney sweep is due on 2 April.", None, ""),
            (cage, "The hamster's cage is cleaned on the 2nd of each month.", None, ""),
            # No echo of its preposition before it: a verb, not a gap ("bakes" is no thing).
            (
                "Covered, the pie bakes for 30 minutes; uncovered, the pie bakes for 10 minutes.",
                "Uncovered, the pie bakes for 10 minutes.",
                None,
                "",
            ),
        ]
    )


def test_a_code_blocks_lead_in_says_what_the_code_does() -> None:
    text = "## Backups\n\nEvery night the server is backed up with:\n\n```sh\nrestic backup /srv --tag nightly\n```\n"
    note = parse_note("notes/b.md", text)
    quote = "restic backup /srv --tag nightly"
    checks = [check_quote(quote, note, {"b": note}, DAY)]
    assert (
        overall_stamp(checks, False, 0, "The server is backed up nightly with `restic backup /srv --tag nightly`.")[0]
        in PASSES
    )
    stamp, why = overall_stamp(checks, False, 0, "The laptop is backed up with `restic backup /srv --tag nightly`.")
    assert stamp != VERIFIED and "laptop" in why
