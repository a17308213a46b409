"""BEYOND QUOTES: an answer must be its quotes' words up to the safe edits (`cortex.ask.entail`),
the stamp `overall_stamp` gives, no I/O."""

from __future__ import annotations

import datetime as dt

from hypothesis import given
from hypothesis import strategies as st

from cortex.ask.quotes import check_quote
from cortex.ask.stamps import BEYOND_QUOTES, STRENGTH, SUPERSEDED, VERIFIED, overall_stamp
from cortex.notes.note import parse_note

# Issue 53: an answer no contradiction or missing specific refuses may still be BEYOND QUOTES,
# where the gate (cortex.ask.entail) wants the quote's own words; these tests are about the former.
PASSES = (VERIFIED, BEYOND_QUOTES)

DAY = dt.date(2026, 11, 30)


def stamp(body: str, quote: str, answer: str, question: str = "") -> tuple[str, str]:
    note = parse_note("notes/n.md", body)
    return overall_stamp([check_quote(quote, note, {"n": note}, DAY)], False, 0, answer, question=question)


def test_a_changed_word_is_named_with_the_quotes_word():
    body = "# Bread\n\nKeep the sourdough starter in the fridge between bakes.\n"
    quote = "Keep the sourdough starter in the fridge between bakes"
    s, why = stamp(body, quote, "Keep the sourdough starter in the freezer between bakes.")
    assert s == BEYOND_QUOTES
    assert why.startswith("the quote says 'fridge', the answer 'freezer' (rule word-changed; the quote is VERIFIED)"), (
        why
    )
    assert stamp(body, quote, quote)[0] == VERIFIED


def test_a_name_of_the_title_and_a_rows_headings_pass():
    body = "---\ntitle: Pip the cat\n---\n## Tablets\n\nGive one after breakfast.\n"
    assert stamp(body, "Give one after breakfast", "Give one to Pip after breakfast.")[0] in PASSES
    # A word of the headings is no name: "the tablets" are not in the quote.
    assert stamp(body, "Give one after breakfast", "Give the tablets after breakfast.")[0] == BEYOND_QUOTES
    table = "| item | old price | new price |\n|---|---|---|\n| filter coffee at the kiosk | €3 | €4 |\n"
    row = "| filter coffee at the kiosk | €3 | €4 |"
    assert stamp(table, row, "The new price of filter coffee at the kiosk is €4.")[0] in PASSES


def test_beyond_quotes_sits_between_corrected_and_superseded():
    assert STRENGTH[VERIFIED] > STRENGTH["CORRECTED"] > STRENGTH[BEYOND_QUOTES] > STRENGTH[SUPERSEDED]


# The property of issue 41: an answer made from a live quote by putting in one content word
# of the same part of speech from the same note, one the quote lacks, is never VERIFIED;
# the quote itself always is.
NOTES = {
    "# Garden\n\nThe gardener prunes the apple tree in March. The neighbour waters the roses "
    "in July. Slugs eat the young lettuce.\n": {
        "noun": ["gardener", "apple", "tree", "neighbour", "roses", "slugs", "lettuce"],
        "verb": ["prunes", "waters", "eat"],
        "adjective": ["young"],
    },
    "# Kitchen\n\nKeep the sourdough starter in the fridge. Store the flour in the cupboard. "
    "The old oven runs hot.\n": {
        "noun": ["sourdough", "starter", "fridge", "flour", "cupboard", "oven"],
        "verb": ["keep", "store", "runs"],
        "adjective": ["old", "hot"],
    },
    "# Bikes\n\nRosa rides the red bike to work. Ben cleans the chain on Sundays. The spare tube sits in the shed.\n": {
        "noun": ["bike", "work", "chain", "tube", "shed"],
        "verb": ["rides", "cleans", "sits"],
        "adjective": ["red", "spare"],
    },
}


@st.composite
def swapped(draw):
    body = draw(st.sampled_from(sorted(NOTES)))
    sentences = [s.strip() for s in body.split("\n\n", 1)[1].strip().split(".") if s.strip()]
    quote = draw(st.sampled_from(sentences))
    words = quote.split()
    pos = draw(st.sampled_from(sorted(NOTES[body])))
    mine = [i for i, w in enumerate(words) if w.casefold() in NOTES[body][pos]]
    others = [w for w in NOTES[body][pos] if w not in quote.casefold().split()]
    if not mine or not others:
        return body, quote, None
    i, new = draw(st.sampled_from(mine)), draw(st.sampled_from(others))
    return body, quote, " ".join([*words[:i], new, *words[i + 1 :]]) + "."


@given(swapped())
def test_one_content_word_from_elsewhere_in_the_note_is_never_verified(case):
    body, quote, answer = case
    assert stamp(body, quote, quote + ".")[0] == VERIFIED
    if answer is not None:
        assert stamp(body, quote, answer)[0] != VERIFIED, (quote, answer)
