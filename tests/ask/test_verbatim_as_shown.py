"""Verbatim as the editor shows it (cortex.ask.quotes over cortex.notes.shown): a quote may
leave out what the editor does not show as text (footnote markers, emphasis and code
markers, link syntax, inline HTML tags), never add, drop or change a word; the raw text
still verifies, and the retired and hidden checks hold on the note's bytes."""

from __future__ import annotations

import datetime as dt

import pytest

from cortex.ask.quotes import check_quote
from cortex.ask.stamps import CORRECTED, SUPERSEDED, UNVERIFIED, VERIFIED, QuoteCheck
from cortex.notes.note import Note, parse_note

TODAY = dt.date(2026, 3, 1)


def make(body: str, path: str = "notes/t.md") -> Note:
    return parse_note(path, f"---\ntitle: T\n---\n{body}")


def check(quote: str, note: Note, *others: Note) -> QuoteCheck:
    return check_quote(quote, note, {f"t{i}": n for i, n in enumerate((note, *others))}, TODAY)


# (note body, a quote as the editor shows it, the bytes its match must span)
AS_SHOWN = {
    "footnote": ("We take the night train[^1] to Porto on Friday.\n", "the night train to Porto on Friday"),
    "named footnote": ("We take the night train[^trip] to Porto on Friday.\n", "the night train to Porto on Friday"),
    "two footnotes": ("The night train[^1] to Porto[^2] leaves on Friday.\n", "The night train to Porto leaves on"),
    "footnote text": ("See below.\n\n[^1]: Booked by phone in early March.\n", "Booked by phone in early March"),
    "bold": ("We take the **night train** to Porto on Friday.\n", "We take the night train to Porto"),
    "underscore": ("We take the _night train_ to Porto on Friday.\n", "We take the night train to Porto"),
    "code": ("Run `cortex serve` on the second machine tonight.\n", "Run cortex serve on the second machine"),
    "link": ("We book [the night train](https://cp.pt/night) to Porto.\n", "We book the night train to Porto"),
    "link title": ('We book [the night train](https://cp.pt "CP") to Porto.\n', "We book the night train to Porto"),
    "autolink": ("The timetable is at <https://cp.pt/night> for Porto.\n", "The timetable is at https://cp.pt/night"),
    "wikilink": ("We take the train to [[Porto]] on Friday morning.\n", "We take the train to Porto on Friday"),
    "aliased wikilink": ("We stay at [[Hotel Aliados|the hotel]] near the station.\n", "We stay at the hotel near"),
    "inline tag": ("We take <b>the night train</b> to Porto on Friday.\n", "We take the night train to Porto"),
    "span tag": ('We take <span class="hl">the night train</span> to Porto.\n', "We take the night train to Porto"),
    "all at once": (
        "We take **[the night train](https://cp.pt)**[^1] to [[Porto|Oporto]] <i>on Friday</i>.\n",
        "We take the night train to Oporto on Friday.",
    ),
    "in a list item": (
        "- the [[Porto|night train]][^1] leaves at 22:10 on Friday\n",
        "the night train leaves at 22:10",
    ),
    "in a table": (
        "| train | leaves |\n|---|---|\n| [[Porto\\|night train]][^1] | 22:10 on Friday |\n",
        "| night train | 22:10 on Friday |",
    ),
}


@pytest.mark.parametrize("name", sorted(AS_SHOWN))
def test_a_quote_of_the_text_as_the_editor_shows_it_verifies(name: str) -> None:
    body, quote = AS_SHOWN[name]
    c = check(quote, make(body))
    assert c.stamp == VERIFIED, (name, c.reason)


RAW = {
    "footnote": ("We take the night train[^1] to Porto on Friday.\n", "the night train[^1] to Porto on Friday"),
    "link": ("We book [the night train](https://cp.pt/night) to Porto.\n", "[the night train](https://cp.pt/night)"),
    "wikilink": (
        "We stay at [[Hotel Aliados|the hotel]] near the station.\n",
        "We stay at [[Hotel Aliados|the hotel]]",
    ),
    "tag": ("We take <b>the night train</b> to Porto on Friday.\n", "We take <b>the night train</b> to Porto"),
    "bold": ("We take the **night train** to Porto on Friday.\n", "We take the **night train** to Porto"),
}


@pytest.mark.parametrize("name", sorted(RAW))
def test_the_raw_text_with_its_markup_still_verifies(name: str) -> None:
    body, quote = RAW[name]
    assert check(quote, make(body)).stamp == VERIFIED


def test_the_match_spans_the_notes_own_bytes() -> None:
    note = make("We take **[the night train](https://cp.pt)**[^1] to [[Porto|Oporto]] on Friday.\n")
    c = check("the night train to Oporto on Friday", note)
    assert (
        note.text[c.match_start : c.match_end] == "the night train](https://cp.pt)**[^1] to [[Porto|Oporto]] on Friday"
    )
    assert c.quote == "the night train to Oporto on Friday"


CONTROLS = {
    # A word dropped, added or changed is no fair quote, whatever markup is around it.
    "drops a word": ("We take the night train[^1] to Porto on Friday.\n", "We take the train to Porto on Friday"),
    "adds a word": ("We take the night train[^1] to Porto on Friday.\n", "We take the late night train to Porto"),
    "changes a digit": (
        "The night train[^1] leaves at 22:10 on Friday.\n",
        "The night train leaves at 22:40 on Friday",
    ),
    "changes a word": ("We book [the night train](https://cp.pt) to Porto.\n", "We book the day train to Porto"),
    # A superscript 6 is not a 6, as a tag or a character; a footnote's number is not text.
    "superscript tag": ("The budget is 10<sup>6</sup> euros this year.\n", "The budget is 106 euros this year"),
    "superscript tag spaced": ("The budget is 10<sup>6</sup> euros this year.\n", "The budget is 10 6 euros this"),
    "superscript char": ("The budget is 10⁶ euros this year.\n", "The budget is 106 euros this year"),
    "footnote number": ("The budget is 10[^6] euros this year.\n", "The budget is 106 euros this year"),
    # What the editor does not show is no more quotable as shown text.
    "the link's URL": ("We book [the night train](https://cp.pt) to Porto.\n", "We book the night train cp.pt to"),
    "the alias's target": (
        "We stay at [[Hotel Aliados|the hotel]] near the station.\n",
        "We stay at Hotel Aliados near",
    ),
    # Struck text stays retired: leaving it out is no quote of what the note shows.
    "struck word left out": ("I do ~~not~~ recommend the night train to Porto.\n", "I do recommend the night train"),
    "struck tag left out": ("I do <del>not</del> recommend the night train to Porto.\n", "I do recommend the night"),
    "escaped marker": ("We take the night train\\[^1] to Porto on Friday.\n", "the night train to Porto on Friday"),
    "marker in code": ("Type `train[^1] to Porto` in the search box.\n", "Type train to Porto in the search"),
}


@pytest.mark.parametrize("name", sorted(CONTROLS))
def test_a_quote_that_adds_drops_or_changes_a_word_stays_unverified(name: str) -> None:
    body, quote = CONTROLS[name]
    c = check(quote, make(body))
    assert c.stamp == UNVERIFIED and "quote not found" in c.reason, (name, c.stamp, c.reason)


def test_retired_and_hidden_text_read_as_shown_is_still_retired_or_hidden() -> None:
    banner = make("## Trip\n\n> **SUPERSEDED** by the plan below\n\nWe take the night train[^1] to Porto.\n")
    c = check("We take the night train to Porto", banner)
    assert c.stamp == SUPERSEDED and "under a SUPERSEDED banner" in c.reason
    struck = make("Plan: ~~take the [night train](https://cp.pt) to Porto~~ then fly.\n")
    c = check("take the night train to Porto", struck)
    assert c.stamp == SUPERSEDED and "struck-through" in c.reason
    html_struck = make("Plan: <del>take the <b>night train</b> to Porto</del> then fly.\n")
    assert check("take the night train to Porto", html_struck).stamp == SUPERSEDED
    hidden = make("Plan: <span hidden>take the <b>night train</b> to Porto</span> then fly.\n")
    c = check("take the night train to Porto", hidden)
    assert c.stamp == UNVERIFIED and "hidden in the note" in c.reason
    corrected = make('We meet at [the café](https://x.pt) on Friday (was: "the bar").\n')
    c = check("We meet at the café on Friday", corrected)
    assert c.stamp == CORRECTED and c.old_claim == "the bar"
    old = make('We meet at the café on Friday (was: "[the bar](https://y.pt) on Thursday").\n')
    assert check("the bar on Thursday", old).stamp == SUPERSEDED


def test_a_stock_phrase_as_shown_is_generic_in_three_notes() -> None:
    notes = [make(f"Note {i}: the night train[^{i}] to Porto leaves late.\n", f"notes/{i}.md") for i in range(3)]
    c = check("the night train to Porto leaves late", *notes)
    assert c.stamp == UNVERIFIED and "occurs in 3 notes" in c.reason


def test_a_quote_as_shown_across_blocks_spans_blocks() -> None:
    c = check("the night train to Porto leaves", make("- the night train[^1]\n- to Porto leaves late\n"))
    assert c.stamp == UNVERIFIED and "spans blocks" in c.reason
