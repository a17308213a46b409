"""The brain_ask verifier (cortex.ask.quotes, stamps, neutralize): stamp table, generic quotes, answer fencing."""

from __future__ import annotations

import datetime as dt
import random
import re

import pytest
from hypothesis import HealthCheck, assume, example, given, settings
from hypothesis import strategies as st

from cortex.ask.asker import out_of_bounds
from cortex.ask.neutralize import ANSWER_LINE_PREFIX, SERVER_LINE_PREFIX, neutralize_answer
from cortex.ask.quotes import check_quote, generic_reason
from cortex.ask.stamps import CORRECTED, NOT_IN_BRAIN, SUPERSEDED, UNVERIFIED, VERIFIED, QuoteCheck, overall_stamp
from cortex.notes.blocks import blocks_of, normalize
from cortex.notes.note import Note, parse_note

TODAY = dt.date(2026, 3, 1)


def make(body: str, path: str = "notes/t.md", front: str = "title: T\n") -> Note:
    return parse_note(path, f"---\n{front}---\n{body}")


def check(quote: str, note: Note | None, *others: Note, today: dt.date = TODAY) -> QuoteCheck:
    pack = {f"t{i}": n for i, n in enumerate((note, *others)) if n is not None}
    return check_quote(quote, note, pack, today)


# --- VERIFIED and the normalisation ----------------------------------------------------

PERF = make(
    "# Perf\n\nThe p99 latency of the search endpoint must stay below the budget, which is\n"
    "> 5 ms under load, and the replica count must be\n>= 3 in every region.\n\n"
    "## Next\n\nAnother paragraph.\n"
)


def test_a_line_starting_with_gt_is_a_block_quote_as_commonmark_reads_it() -> None:
    # CommonMark: a ">" line interrupts a paragraph and starts a block quote, and the
    # editor shows it as one. A quote across the two spans blocks.
    c = check("the budget, which is > 5 ms under load", PERF)
    assert c.stamp == UNVERIFIED
    c = check("the budget, which is\n> 5 ms under load", PERF)
    assert c.stamp == UNVERIFIED and "spans blocks" in c.reason
    # Inside the block quote, its markers are off: "5 ms under load" is its text.
    c = check("5 ms under load, and the replica count must be", PERF)
    assert c.stamp == VERIFIED, c.reason
    c = check("> 5 ms under load, and the replica count", PERF)
    assert c.stamp == VERIFIED, c.reason
    # Dropping the ">" does not make the paragraph's sentence run on into the quote.
    c = check("the budget, which is 5 ms under load", PERF)
    assert c.stamp == UNVERIFIED


UNITS = make(
    "## Numbers\n\nThe cluster handles 10⁶ requests per day from the ﬁle service.\n\n"
    "Serve ½ cup of rice with ＡＢＣ１ sauce and CO₂ bubbles.\n"
)


@pytest.mark.parametrize(
    "quote",
    [
        "The cluster handles 106 requests per day",  # superscript 6 is not a 6
        "The cluster handles 10^6 requests per day",
        "requests per day from the file service",  # ligature fi is not f+i
        "Serve 1/2 cup of rice with",  # vulgar fraction is not 1/2
        "Serve 12 cup of rice with",
        "rice with ABC1 sauce and",  # fullwidth forms are not ASCII
        "sauce and CO2 bubbles",  # subscript 2 is not a 2
        "the cluster handles 10⁶ requests per day",  # case is exact
    ],
)
def test_superscripts_fullwidth_ligatures_fractions_are_not_folded(quote: str) -> None:
    c = check(quote, UNITS)
    assert c.stamp == UNVERIFIED
    assert c.reason.startswith("quote not found in notes/t.md")


def test_exact_unicode_forms_verify() -> None:
    assert check("The cluster handles 10⁶ requests per day", UNITS).stamp == VERIFIED
    assert check("Serve ½ cup of rice with ＡＢＣ１ sauce", UNITS).stamp == VERIFIED


FOLDING = make(
    "## Style\n\nShe said “don’t wait” — the deadline is **firm**, and the _owner_ is\n"
    "`alice` after ~~March~~ April.\n\n"
    "- first item with some words\n- second item with more words\n\n"
    "> A quoted line that is long enough\n> to wrap onto another line.\n"
)


@pytest.mark.parametrize(
    "quote",
    [
        'She said "don\'t wait" - the deadline is firm',  # ASCII quotes and dash
        "She said “don’t wait” — the deadline is **firm**",  # verbatim
        "the deadline is firm, and the owner is alice after",  # emphasis dropped
        "the deadline is *firm*, and the owner is alice",  # different emphasis
        "the owner is\n`alice`   after",  # wrapping and spaces
        "- first item with some words",  # list markers kept in the quote
        "first item with some words",
        "long enough to wrap onto another line",  # blockquote markers dropped
        "> A quoted line that is long enough",
        "She said “don't wait” – the deadline",  # mixed typographic forms
    ],
)
def test_typographic_quotes_dashes_whitespace_emphasis_and_markers_are_folded(quote: str) -> None:
    c = check(quote, FOLDING)
    assert c.stamp == VERIFIED, c.reason
    assert c.heading == "Style"


def test_struck_text_and_quotes_across_items_are_not_verified() -> None:
    # A struck value beside the value that replaced it (issue 53): the quote verifies, the
    # struck value is retired text; a quote that holds only the struck value is retired.
    c = check("the owner is alice after March April.", FOLDING)
    assert c.stamp == CORRECTED and c.retired_text == "March", c  # the unit carries its correction
    c = check("the owner is alice after March", FOLDING)
    assert c.stamp == SUPERSEDED and "struck-through" in c.reason
    for quote in ("first item with some words second item", "- first item with some words\n- second item"):
        c = check(quote, FOLDING)
        assert c.stamp == UNVERIFIED and "spans blocks" in c.reason


def test_verified_check_carries_block_and_match() -> None:
    c = check("first item with some words", FOLDING)
    assert c.path == "notes/t.md"
    assert c.block_start is not None and c.block_end is not None
    assert FOLDING.text[c.match_start : c.match_end] == "first item with some words"
    assert c.old_claim is None and c.superseded_by is None and c.note_retired is None


# --- UNVERIFIED: generic, empty, missing, other file, spans ----------------------------


def _log(i: int) -> Note:
    return make(
        f"## 09:00 · work\nStandup at 2026-03-01 10:30 as usual, nothing new. Ticket {i} closed.\n",
        path=f"log/2026-02-{i:02d}.md",
    )


@pytest.mark.parametrize(
    "quote,why",
    [
        ("1,240", "only a date, number or time"),
        ("March 3, 2026", "only a date, number or time"),
        ("Mon 2 Mar 2026 at 10:30 UTC", "too short"),  # "at" is the only word
        ("at 10 am on a b c", "letters/digits"),  # three words, 8 letters/digits
    ],
)
def test_a_short_quote_not_in_the_note_says_why_it_could_not_identify_a_passage(quote: str, why: str) -> None:
    c = check(quote, _log(3))
    assert c.stamp == UNVERIFIED
    assert why in c.reason


@pytest.mark.parametrize("quote", ["2026-03-01", "2026-03-01 10:30", "10:30", "Ticket 3 closed", "as usual"])
def test_a_short_quote_that_occurs_once_in_its_note_is_quotable(quote: str) -> None:
    c = check(quote, _log(3))  # issue 63: "too short" only for a fragment of several places
    assert c.stamp == VERIFIED, c.reason


def test_a_short_fragment_of_several_places_is_too_short_and_a_short_whole_unit_is_not() -> None:
    twice = make("# Bills\n\n| Water | £38 | 15th |\n|---|---|---|\n\nWater is £38 this month.\n")
    c = check("£38", twice)
    assert c.stamp == UNVERIFIED and "it occurs 2 times" in c.reason
    row = make("# Bills\n\n| Bill | £ | Due |\n|---|---|---|\n| Water | £38 | 15th |\n")
    assert check("| Water | £38 | 15th |", row).stamp == VERIFIED
    assert check("Anniversary: 23rd of June", make("# Dates\n\n- Anniversary: 23rd of June\n")).stamp == VERIFIED


def test_stock_phrase_found_in_many_notes_is_generic() -> None:
    notes = [_log(i) for i in range(1, 5)]
    c = check("as usual, nothing new", *notes)
    assert c.stamp == UNVERIFIED
    assert "too generic: it occurs in 4 notes of the pack" in c.reason


def test_phrase_in_two_notes_still_verifies_for_the_cited_one() -> None:
    a, b = _log(1), _log(2)
    c = check("Standup at 2026-03-01 10:30 as usual", a, b)
    assert c.stamp == VERIFIED, c.reason


def test_empty_quote_is_unverified() -> None:
    for q in ("", "   \n ", "``", "~~ ~~"):
        c = check(q, PERF)
        assert c.stamp == UNVERIFIED
        assert "empty" in c.reason
    c = check("** ** -- ...", PERF)
    assert c.stamp == UNVERIFIED and "no words" in c.reason


def test_quote_not_found_names_the_path() -> None:
    c = check("this sentence is not in the note at all", PERF)
    assert c.stamp == UNVERIFIED
    assert c.reason == "quote not found in notes/t.md"


def test_quote_with_an_ellipsis_gets_a_hint() -> None:
    c = check("The p99 latency … must stay below", PERF)
    assert c.stamp == UNVERIFIED and "no ellipsis" in c.reason


def test_cited_tag_not_in_pack() -> None:
    c = check_quote("The p99 latency of the search endpoint", None, {"a": PERF}, TODAY)
    assert c.stamp == UNVERIFIED
    assert c.reason == "cites a file not in the pack"


def test_quote_from_a_different_file_is_not_verified_for_the_cited_one() -> None:
    cited = make("## A\n\nThe garden shed has a larch roof.\n", path="projects/shed.md")
    other = make("## B\n\nFed once a day at room temperature with rye.\n", path="notes/sourdough.md")
    c = check("Fed once a day at room temperature", cited, other)
    assert c.stamp == UNVERIFIED
    assert c.reason == ("quote occurs in notes/sourdough.md, not in the cited file projects/shed.md")
    assert c.path == "projects/shed.md"


def test_quote_spanning_two_blocks_is_unverified() -> None:
    n = make("## A\n\nThe first paragraph ends here.\n\nThe second paragraph starts here.\n")
    c = check("first paragraph ends here. The second paragraph", n)
    assert c.stamp == UNVERIFIED
    assert c.reason.startswith("quote spans blocks in notes/t.md")
    # Across a heading, too.
    c = check("paragraph ends here. B heading text", make("x\n\nparagraph ends here.\n## B heading text\n"))
    assert "spans blocks" in c.reason


# --- SUPERSEDED: banners and retired headings --------------------------------------------

PLAN = make(
    """# Plan

Intro paragraph that is still live today.

## Old approach

> **SUPERSEDED** by the new approach below.

We deploy every Friday at noon from the laptop.

Rollbacks are done by hand over SSH sessions.

### Old approach details

Backups ran nightly onto the spare USB disk.

## New approach

We deploy on every merge from the CI runner.

## SUPERSEDED: the 2025 budget

The 2025 budget was 1,800 EUR for the whole shed.

## Budget

The budget for this year is 2,400 EUR in total.
""",
    path="projects/plan.md",
)


@pytest.mark.parametrize(
    "quote",
    [
        "We deploy every Friday at noon",  # first paragraph under the banner
        "Rollbacks are done by hand over SSH",  # a later paragraph of the section
        "Backups ran nightly onto the spare USB disk",  # under a lower-level sub-heading
        "SUPERSEDED by the new approach below",  # the banner itself
        "The 2025 budget was 1,800 EUR",  # under a heading marked SUPERSEDED
        "SUPERSEDED: the 2025 budget",  # that heading itself
    ],
)
def test_banner_and_retired_heading_retire_their_whole_section(quote: str) -> None:
    c = check(quote, PLAN)
    assert c.stamp == SUPERSEDED, c.reason
    assert "do not answer from it" in c.reason


def test_banner_reason_names_banner_and_line() -> None:
    c = check("Rollbacks are done by hand over SSH", PLAN)
    line = PLAN.text.splitlines().index("> **SUPERSEDED** by the new approach below.") + 1
    assert f"SUPERSEDED banner at line {line}" in c.reason


@pytest.mark.parametrize(
    "quote",
    [
        "Intro paragraph that is still live",
        "We deploy on every merge from the CI runner",  # after the next same-level heading
        "The budget for this year is 2,400 EUR",
    ],
)
def test_text_outside_retired_sections_is_live(quote: str) -> None:
    assert check(quote, PLAN).stamp == VERIFIED


def test_banner_before_any_heading_retires_the_whole_note() -> None:
    n = make(
        "> **RETRACTED** — the measurements were wrong.\n\nThe pump draws 40 watts at idle.\n\n"
        "# Pump\n\n## Numbers\n\nPeak draw is 300 watts at start.\n"
    )
    for q in ("The pump draws 40 watts at idle", "Peak draw is 300 watts at start"):
        c = check(q, n)
        assert c.stamp == SUPERSEDED and "before any heading" in c.reason


# --- in-place corrections ------------------------------------------------------------------

SHED = make(
    "## Decisions\n\n- 2026-01-05 — Larch cladding instead of pine: it lasts longer.\n"
    '- 2026-01-12 — Roof pitch of 15 degrees (was: "10 degrees, as drawn in the first plan"), '
    "so snow slides off.\n",
    path="projects/shed.md",
)


def test_quote_inside_was_is_superseded_and_shows_the_current_claim() -> None:
    c = check("10 degrees, as drawn in the first plan", SHED)
    assert c.stamp == SUPERSEDED
    # The claim its unit (the list item) makes now, the old wording out.
    assert c.old_claim == "2026-01-12 — Roof pitch of 15 degrees, so snow slides off."
    assert 'the current claim is "2026-01-12 — Roof pitch of 15 degrees, so snow slides off."' in c.reason
    assert "do not answer from the old wording" in c.reason


def test_quote_straddling_the_old_wording_is_superseded() -> None:
    c = check('as drawn in the first plan"), so snow slides off', SHED)
    assert c.stamp == SUPERSEDED


def test_rest_of_a_corrected_item_is_corrected_with_old_claim() -> None:
    for quote in (
        "Roof pitch of 15 degrees",
        "Roof pitch of 15 degrees (was: “10 degrees, as drawn in the first plan”), so snow",
        "so snow slides off",
    ):
        c = check(quote, SHED)
        assert c.stamp == CORRECTED, (quote, c.reason)
        assert c.old_claim == "10 degrees, as drawn in the first plan"
        assert "the quoted list item carries an in-place correction" in c.reason
    # Each list item is a block of its own (CommonMark): a quote across two spans blocks.
    c = check("Larch cladding instead of pine: it lasts longer. 2026-01-12 — Roof pitch", SHED)
    assert c.stamp == UNVERIFIED and "spans blocks" in c.reason


def test_a_sibling_item_of_a_corrected_one_is_verified() -> None:
    # The marker corrects its own item, not the whole list.
    c = check("Larch cladding instead of pine", SHED)
    assert c.stamp == VERIFIED, c.reason
    assert c.old_claim is None


def test_corrected_shows_the_nearest_of_several_corrections() -> None:
    n = make('Price is 40 EUR per board (was: "14 EUR"). Delivery on Friday morning (was: "Monday").\n')
    assert check("Delivery on Friday morning", n).old_claim == "Monday"
    assert check("Price is 40 EUR per board", n).old_claim == "14 EUR"


# --- the unit a correction marker corrects -------------------------------------------------
# A `(was: "…")` corrects its own list item (continuation lines included), table row, or
# sentence of a paragraph; a quote of a neighbour is VERIFIED, a quote reaching into the
# corrected unit is CORRECTED.

EOLS = pytest.mark.parametrize("eol", ["\n", "\r\n"])


def lines(eol: str, *rows: str) -> str:
    return eol.join(rows) + eol


@EOLS
def test_marker_on_the_quoted_item_or_a_sibling(eol: str) -> None:
    n = make(
        lines(
            eol,
            "## Studio",
            "",
            "- The kiln is a Skutt KM-1027 bought second hand.",
            '- Open studio on Saturdays 10:00-16:00 (was: "Thursdays and Saturdays").',
            "- Clay comes from the Westerwald supplier.",
        )
    )
    assert check("The kiln is a Skutt KM-1027", n).stamp == VERIFIED
    assert check("Clay comes from the Westerwald supplier", n).stamp == VERIFIED
    c = check("Open studio on Saturdays 10:00-16:00", n)
    assert (c.stamp, c.old_claim) == (CORRECTED, "Thursdays and Saturdays")
    # A quote spanning two items spans blocks, whichever of them is corrected.
    for quote in (
        f"bought second hand.{eol}- Open studio on Saturdays",
        "bought second hand. Open studio on Saturdays",
        '10:00-16:00 (was: "Thursdays and Saturdays"). Clay comes from the Westerwald',
    ):
        c = check(quote, n)
        assert c.stamp == UNVERIFIED and "spans blocks" in c.reason, quote


@EOLS
def test_marker_in_a_continuation_line_corrects_its_item(eol: str) -> None:
    for cont in ('  since April (was: "May") this year.', 'since April (was: "May") this year.'):
        n = make(
            lines(
                eol,
                "- Glaze firing at cone 6 in the big kiln.",
                "- Open studio on Saturdays only,",
                cont,
                "- Bisque at cone 04.",
            )
        )
        c = check("Open studio on Saturdays only", n)
        assert (c.stamp, c.old_claim) == (CORRECTED, "May"), cont
        assert check("Glaze firing at cone 6 in the big kiln", n).stamp == VERIFIED
        assert check("- Bisque at cone 04.", n).stamp == VERIFIED


@EOLS
def test_nested_items_are_units_of_their_own(eol: str) -> None:
    n = make(
        lines(
            eol,
            "- Suppliers for the studio",
            '  - Clay from the Westerwald supplier (was: "Limoges") since 2025',
            "  - Glazes from the Amaco catalogue",
            "- Firing schedule is weekly on Mondays",
        )
    )
    assert check("Suppliers for the studio", n).stamp == VERIFIED  # the parent
    assert check("Glazes from the Amaco catalogue", n).stamp == VERIFIED  # a sibling child
    assert check("Firing schedule is weekly on Mondays", n).stamp == VERIFIED
    assert check("Clay from the Westerwald supplier", n).stamp == CORRECTED
    assert (
        check("Suppliers for the studio Clay from the Westerwald", n).stamp == UNVERIFIED
    )  # parent + child: two blocks

    # A marker on the parent corrects the parent's own lines, not its children.
    n = make(lines(eol, '- Suppliers for the studio (was: "shop")', "  - Glazes from the Amaco catalogue"))
    assert check("Suppliers for the studio", n).stamp == CORRECTED
    assert check("Glazes from the Amaco catalogue", n).stamp == VERIFIED


@EOLS
def test_ordered_and_blockquoted_items(eol: str) -> None:
    n = make(
        lines(
            eol,
            "1. Mix the glaze for ten minutes",
            '2. Sieve it twice at 80 mesh (was: "60 mesh")',
            "3) Let it rest overnight",
        )
    )
    assert check("Mix the glaze for ten minutes", n).stamp == VERIFIED
    assert check("Let it rest overnight", n).stamp == VERIFIED
    assert check("Sieve it twice at 80 mesh", n).stamp == CORRECTED
    n = make(lines(eol, "> - Mix the glaze for ten minutes", '> - Sieve it twice at 80 mesh (was: "60 mesh")'))
    assert check("Mix the glaze for ten minutes", n).stamp == VERIFIED
    assert check("Sieve it twice at 80 mesh", n).stamp == CORRECTED


@EOLS
def test_table_rows(eol: str) -> None:
    n = make(
        lines(
            eol,
            "| item name | unit price |",
            "|---|---:|",
            '| clay per bag | 24 EUR (was: "21 EUR") |',
            "| glaze per litre | 18 EUR |",
        )
    )
    assert check("glaze per litre | 18 EUR", n).stamp == VERIFIED
    assert check("| item name | unit price |", n).stamp == VERIFIED
    c = check("clay per bag | 24 EUR", n)
    assert (c.stamp, c.old_claim) == (CORRECTED, "21 EUR")
    # Without the outer pipes too.
    n = make(
        lines(eol, "item | price", "--- | ---", 'clay per bag | 24 EUR (was: "21 EUR")', "glaze per litre | 18 EUR")
    )
    assert check("glaze per litre | 18 EUR", n).stamp == VERIFIED
    assert check("clay per bag | 24 EUR", n).stamp == CORRECTED


@EOLS
def test_in_a_paragraph_the_sentence_is_the_unit(eol: str) -> None:
    n = make(
        lines(
            eol,
            'The committee set the beginner course fee at 95 EUR (was: "90 EUR"). Six evenings',
            "from 2027-03-02, e.g. on Tuesdays. The venue is the village hall.",
        )
    )
    assert check("Six evenings from 2027-03-02, e.g. on Tuesdays", n).stamp == VERIFIED
    assert check("The venue is the village hall", n).stamp == VERIFIED
    assert check("the beginner course fee at 95 EUR", n).stamp == CORRECTED
    assert check("at 95 EUR (was: “90 EUR”). Six evenings", n).stamp == CORRECTED  # spans two sentences
    # A lower-case word after a full stop does not start a new claim ("e.g. the").
    n = make(lines(eol, 'Fire to cone 6, approx. the same as 1222 C (was: "1240 C") in the manual.'))
    assert check("Fire to cone 6, approx", n).stamp == CORRECTED
    # A marker after the full stop belongs to the sentence before it.
    n = make(lines(eol, 'The meeting moves to Thursday. (was: "Tuesday") Bring the minutes of May.'))
    assert check("The meeting moves to Thursday", n).stamp == CORRECTED
    assert check("Bring the minutes of May", n).stamp == VERIFIED
    # A full stop inside the old wording ends nothing.
    n = make(lines(eol, 'The studio opens at 10:00 (was: "9:00. On Mondays, 8:00") daily. Tea is free for all.'))
    assert check("The studio opens at 10:00", n).stamp == CORRECTED
    assert check("daily. Tea is free for all", n).stamp == CORRECTED
    assert check("Tea is free for all", n).stamp == VERIFIED


def test_a_heading_with_a_marker_corrects_only_itself() -> None:
    n = make('## Kiln: Skutt KM-1027 (was: "L&L e23")\n\nBought second hand in 2024 from a school.\n')
    assert check("Kiln: Skutt KM-1027", n).stamp == CORRECTED
    assert check("Bought second hand in 2024 from a school", n).stamp == VERIFIED


_ITEM_WORDS = st.lists(
    st.sampled_from("kiln glaze clay cone firing studio shelf bisque slip wheel".split()), min_size=3, max_size=6
)


_KILN = (["kiln", "kiln", "kiln"], "")


@pytest.mark.slow
@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.tuples(
            _ITEM_WORDS,
            st.sampled_from(["", "on its line", "on a continuation line"]),
            st.integers(0, 2),
            st.sampled_from(["- ", "* ", "+ ", "1. "]),
        ),
        min_size=1,
        max_size=7,
    ),
    st.sampled_from(["\n", "\r\n"]),
    st.tuples(st.integers(0, 6), st.integers(0, 6)),
)
# Drawn on a fresh clone when children were indented two columns a level: items 5 and 6 sat
# at column 4 under item 4's `1. ` at column 2 (its content at 5), so they were neither its
# children nor list items, but lazy continuations of its paragraph: the quote was one block.
@example(
    [(*_KILN, 0, "1. "), (*_KILN, 1, "- "), (*_KILN, 1, "- "), (*_KILN, 1, "- "), (*_KILN, 1, "1. ")]
    + [(*_KILN, 2, "- "), (*_KILN, 2, "1. ")],
    "\n",
    (5, 6),
)
def test_a_quote_is_corrected_iff_it_reaches_a_corrected_item(items, eol, quoted) -> None:
    """Random lists (nesting, bullets, line endings, a marker on random items, on the
    item's line or a continuation line): a quote of items i..j is CORRECTED exactly when
    one of them carries a marker."""
    text, spans, marked = "## List" + eol + eol, [], []
    # The content column of the last item at each open depth. A child is indented to its
    # parent's content (the marker's width and its space: `1. ` is 3 columns, `- ` is 2);
    # less, and CommonMark reads its line as a lazy continuation of the parent's paragraph.
    content: list[int] = []
    for k, (words, marker, depth, bullet) in enumerate(items):
        # A level deeper at most: an item indented further than that is indented code.
        depth = min(depth, len(content))
        indent = content[depth - 1] if depth else 0
        del content[depth:]
        content.append(indent + len(bullet))
        claim = f"item{k} " + " ".join(words)
        start = len(text) + content[depth]
        spans.append((start, start + len(claim)))
        text += " " * indent + bullet + claim
        if marker:
            text += eol + " " * content[depth] if marker == "on a continuation line" else " "
            text += f'(was: "old{k} value") {words[0]}'
        text += eol
        marked.append(bool(marker))
    i, j = sorted(min(q, len(items) - 1) for q in quoted)
    c = check(text[spans[i][0] : spans[j][1]], parse_note("notes/t.md", text))
    # One item is one block; a quote across items spans blocks.
    expected = (CORRECTED if marked[i] else VERIFIED) if i == j else UNVERIFIED
    assert c.stamp == expected, (text, i, j, c.reason)


@pytest.mark.slow
@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(_ITEM_WORDS, st.booleans()), min_size=1, max_size=6), st.booleans(), st.data())
def test_a_quote_is_corrected_iff_it_reaches_a_corrected_row(rows, pipes, data) -> None:
    """Random tables, with or without outer pipes: the unit is the row."""
    edge = "| " if pipes else ""
    text, spans = f"{edge}thing | value{edge[::-1]}\n{edge}--- | ---{edge[::-1]}\n", []
    for k, (words, corrected) in enumerate(rows):
        claim = f"row{k} {' '.join(words)} | {k + 10} units"
        spans.append((len(text) + len(edge), len(text) + len(edge) + len(claim)))
        text += edge + claim + (f' (was: "{k + 20} units")' if corrected else "") + edge[::-1] + "\n"
    i = data.draw(st.integers(0, len(rows) - 1))
    j = data.draw(st.integers(i, len(rows) - 1))
    c = check(text[spans[i][0] : spans[j][1]], parse_note("notes/t.md", text))
    expected = (CORRECTED if rows[i][1] else VERIFIED) if i == j else UNVERIFIED  # a row is a block
    assert c.stamp == expected, (text, i, j, c.reason)


@pytest.mark.slow
@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.tuples(_ITEM_WORDS, st.booleans(), st.sampled_from([" ", "\n", "\r\n"])), min_size=1, max_size=6),
    st.data(),
)
def test_a_quote_is_corrected_iff_it_reaches_a_corrected_sentence(sentences, data) -> None:
    """Random paragraphs, hard-wrapped at random: the unit is the sentence."""
    text, spans, marked = "", [], []
    for k, (words, corrected, gap) in enumerate(sentences):
        claim = f"Item{k} " + " ".join(words)
        spans.append((len(text), len(text) + len(claim)))
        text += claim + (f' (was: "old{k}. Value")' if corrected else "") + "." + gap
        marked.append(corrected)
    i = data.draw(st.integers(0, len(sentences) - 1))
    j = data.draw(st.integers(i, len(sentences) - 1))
    c = check(text[spans[i][0] : spans[j][1]], parse_note("notes/t.md", text))
    assert c.stamp == (CORRECTED if any(marked[i : j + 1]) else VERIFIED), (text, i, j, c.reason)


# --- frontmatter retirement ------------------------------------------------------------------

ROUTER_BODY = "# Router\n\nThe router admin page is at 192.168.1.1 with WPA3 enabled.\n"


@pytest.mark.parametrize("status", ["superseded", "retracted"])
def test_status_retires_the_whole_note_and_shows_superseded_by(status: str) -> None:
    n = make(ROUTER_BODY, front=f"status: {status}\nsuperseded_by: notes/router-2026.md\n")
    c = check("The router admin page is at 192.168.1.1", n)
    assert c.stamp == SUPERSEDED
    assert c.superseded_by == "notes/router-2026.md"
    assert c.note_retired and status in c.note_retired
    assert "notes/router-2026.md" in c.reason and "do not answer from it" in c.reason


def test_past_valid_until_retires_the_note() -> None:
    n = make(ROUTER_BODY, front="valid_until: 2026-02-28\n")
    c = check("The router admin page is at 192.168.1.1", n)
    assert c.stamp == SUPERSEDED
    assert "valid_until 2026-02-28 has passed" in c.reason


@pytest.mark.parametrize("until", ["2026-03-01", "2026-12-31"])
def test_future_or_today_valid_until_is_live(until: str) -> None:
    n = make(ROUTER_BODY, front=f"valid_until: {until}\n")
    assert check("The router admin page is at 192.168.1.1", n).stamp == VERIFIED


def test_draft_and_current_are_live() -> None:
    for status in ("current", "draft"):
        n = make(ROUTER_BODY, front=f"status: {status}\n")
        assert check("The router admin page is at 192.168.1.1", n).stamp == VERIFIED


def test_retired_note_quote_not_found_is_unverified_but_says_retired() -> None:
    n = make(ROUTER_BODY, front="status: retracted\n")
    c = check("a sentence that the router note does not hold", n)
    assert c.stamp == UNVERIFIED and c.note_retired == "status: retracted"


@pytest.mark.parametrize(
    "front", ["superseded_by: notes/router-2026.md\n", "status: current\nsuperseded_by: notes/router-2026.md\n"]
)
def test_a_named_successor_alone_retires_the_note(front: str) -> None:
    c = check("The router admin page is at 192.168.1.1", make(ROUTER_BODY, front=front))
    assert c.stamp == SUPERSEDED and c.superseded_by == "notes/router-2026.md"
    assert "the current version is in notes/router-2026.md" in c.reason


@pytest.mark.parametrize(
    "front", ["status: retracted\nstatus: current\n", "valid_until: 2020-01-01\nvalid_until: 2030-01-01\n"]
)
def test_a_key_given_twice_is_unverified_and_named(front: str) -> None:
    c = check("The router admin page is at 192.168.1.1", make(ROUTER_BODY, front=front))
    assert c.stamp == UNVERIFIED
    assert "is given twice" in c.reason and "its status is unknown" in c.reason


# --- HTML that strikes or hides, and every shape of (was: …) --------------------------------

BOILER = "The boiler in the cellar is serviced every 18 months"
HTML_STAMPS = {
    "del": (f"Now: <del>{BOILER}.</del> Every 12 months.\n", SUPERSEDED, "(<del>…</del> is retired text)"),
    "s": (f"<s>{BOILER}.</s>\n", SUPERSEDED, "(<s>…</s> is retired text)"),
    "strike": (f"Plan: <STRIKE>{BOILER}</STRIKE>.\n", SUPERSEDED, "(<STRIKE>…</strike> is retired text)"),
    "del block": (f"<del>\n{BOILER}.\n</del>\n", SUPERSEDED, "struck-through text"),
    "del across paragraphs": (f"<del>\n\n{BOILER}.\n\n</del>\n\nNow 12.\n", SUPERSEDED, "struck-through"),
    "div hidden": (f"<div hidden>\n{BOILER}.\n</div>\n", UNVERIFIED, "the HTML element <div hidden>…</div>"),
    "span hidden": (f"Now <span hidden>{BOILER}</span>.\n", UNVERIFIED, "<span hidden>…</span>"),
    "display none": (f'<span style="display: none">{BOILER}</span>\n', UNVERIFIED, "hidden in the note"),
    "script": (f"<script>\n{BOILER}\n</script>\n", UNVERIFIED, "the HTML element <script>…</script>"),
    "style": (f"<style>\n{BOILER}\n</style>\n", UNVERIFIED, "<style>…</style>"),
    "template": (f"<template>{BOILER}</template>\n", UNVERIFIED, "<template>…</template>"),
}


@pytest.mark.parametrize("name", sorted(HTML_STAMPS))
def test_text_html_strikes_is_superseded_and_text_it_hides_unverified(name: str) -> None:
    body, stamp, reason = HTML_STAMPS[name]
    c = check(BOILER, make(body))
    assert c.stamp == stamp and reason in c.reason, c.reason


@pytest.mark.parametrize(
    "body",
    [f"Now <b>{BOILER}</b>.\n", f'<span class="x">{BOILER}</span>\n', f"<div>\n\n{BOILER}.\n\n</div>\n"],
)
def test_html_that_only_formats_stays_verified(body: str) -> None:
    assert check(BOILER, make(body)).stamp == VERIFIED


WAS_BODIES = [
    "The boiler is serviced every 12 months (was: every 18 months).\n",
    "The boiler is serviced every 12 months (was: `every 18 months`).\n",
    "The boiler is serviced every 12 months (WAS: every 18 months).\n",
    "The boiler is serviced every 12 months [was: every 18 months].\n",
    "The boiler is serviced every 12 months （was：every 18 months）.\n",
    "The boiler is serviced every 12 months (Was “every 18 months”).\n",
    "The boiler is serviced every 12 months (was: «every 18 months»).\n",
    "The boiler is serviced every 12 months (was: 「every 18 months」).\n",
    "The boiler is serviced every 12 months (was: every 18 months, as the installer first said).\n",
]


@pytest.mark.parametrize("body", WAS_BODIES)
def test_every_shape_of_was_corrects_its_claim_and_retires_the_old_wording(body: str) -> None:
    n = make(body)
    current = check("The boiler is serviced every 12 months", n)
    assert current.stamp == CORRECTED and current.old_claim and "every 18 months" in current.old_claim
    whole = check(body.strip().rstrip("."), n)
    stamp, why = overall_stamp([whole], False, 0, "The boiler is serviced every 18 months.")
    assert (whole.stamp, stamp) == (CORRECTED, UNVERIFIED)
    assert "only as the retired value" in why


def test_a_quote_of_the_unquoted_old_wording_is_superseded() -> None:
    n = make("The boiler is serviced every 12 months (was: serviced by the landlord every 18 months).\n")
    c = check("serviced by the landlord every 18 months", n)
    assert c.stamp == SUPERSEDED and "in-place correction" in c.reason
    assert c.old_claim == "The boiler is serviced every 12 months."


@pytest.mark.parametrize(
    "body",
    ["It was raining when the boiler was serviced.\n", "Grandpa (was born in 1980) serviced the boiler.\n"],
)
def test_was_in_prose_stays_verified(body: str) -> None:
    assert check(body.strip().rstrip("."), make(body)).stamp == VERIFIED


# --- several occurrences -----------------------------------------------------------------------


def test_quote_occurring_twice_with_the_same_stamp_is_fine() -> None:
    n = make("## A\n\nWater the tomatoes every evening.\n\n## B\n\nWater the tomatoes every evening.\n")
    assert check("Water the tomatoes every evening", n).stamp == VERIFIED


def test_quote_occurring_in_live_and_retired_text_gets_the_weakest() -> None:
    n = make(
        "## Old\n\n> **SUPERSEDED**\n\nWater the tomatoes every evening.\n\n"
        "## New\n\nWater the tomatoes every evening, and mulch.\n"
    )
    c = check("Water the tomatoes every evening", n)
    assert c.stamp == SUPERSEDED
    assert "occurs 2 times" in c.reason and "weakest" in c.reason


# --- overall stamp ---------------------------------------------------------------------------


def _qc(stamp: str) -> QuoteCheck:
    return QuoteCheck(stamp=stamp, reason=f"r-{stamp}", path="p.md")


@pytest.mark.parametrize(
    "stamps,expected",
    [
        ([VERIFIED], VERIFIED),
        ([VERIFIED, VERIFIED], VERIFIED),
        ([VERIFIED, CORRECTED], CORRECTED),
        ([CORRECTED, SUPERSEDED, VERIFIED], SUPERSEDED),
        ([VERIFIED, UNVERIFIED, SUPERSEDED], UNVERIFIED),
        ([VERIFIED, NOT_IN_BRAIN], UNVERIFIED),
        ([VERIFIED, "bogus"], UNVERIFIED),
    ],
)
def test_overall_stamp_is_the_weakest(stamps: list[str], expected: str) -> None:
    stamp, reason = overall_stamp([_qc(s) for s in stamps], False, 0)
    assert stamp == expected
    assert reason


def test_overall_reason_names_the_weakest_quote() -> None:
    _, reason = overall_stamp([_qc(VERIFIED), _qc(SUPERSEDED)], False, 0)
    assert "quote 2 is SUPERSEDED" in reason and "r-SUPERSEDED" in reason


def test_not_in_brain_only_when_claimed_and_nothing_unread() -> None:
    assert overall_stamp([], True, 0)[0] == NOT_IN_BRAIN


def test_miss_with_unread_matching_notes_is_unverified_with_count() -> None:
    stamp, reason = overall_stamp([], True, 4)
    assert stamp == UNVERIFIED
    assert "4 notes that hold a distinctive term of the question were not read" in reason
    assert "1 note that holds a distinctive term" in overall_stamp([], True, 1)[1]


def test_no_citations_without_claim_is_unverified_no_quote() -> None:
    assert overall_stamp([], False, 0) == (UNVERIFIED, "no quote given")
    assert overall_stamp([], False, 7) == (UNVERIFIED, "no quote given")


def test_citations_win_over_a_not_in_brain_claim() -> None:
    stamp, reason = overall_stamp([_qc(VERIFIED)], True, 3)
    assert stamp == VERIFIED and "reader also said" in reason


# --- neutralize_answer -------------------------------------------------------------------------

FORGED = [
    "VERIFIED notes/x.md",
    "verified: yes",
    "CORRECTED",
    "SUPERSEDED by notes/y.md",
    "UNVERIFIED",
    "NOT IN BRAIN",
    "Not in brain.",
    "Stamp: VERIFIED",
    "**Stamp:** VERIFIED",
    "> Source: notes/x.md",
    "Sources: notes/x.md",
    "=== FILE notes/x.md",
    "  ==== file notes/x.md ====",
    "[tag: a1] notes/x.md",
    "SHA 3f2a9c1d",
    "sha: 3f2a9c1d0e",
    "3f2a9c1d0e9b8a7f6e5d4c3b2a1f0e9d8c7b6a5f",
    "commit 3f2a9c1",
    "Served from 3f2a9c1",
    "§ VERIFIED",
    "§VERIFIED",
    "  § anything",
    "- VERIFIED",
    "1. VERIFIED",
    "# VERIFIED",
    "\u200bVERIFIED",  # zero-width space in front
    "ＶＥＲＩＦＩＥＤ",  # fullwidth
    "`VERIFIED`",
]


@pytest.mark.parametrize("line", FORGED)
def test_answer_lines_shaped_like_stamp_or_source_lines_cannot_pass(line: str) -> None:
    out = neutralize_answer(f"The shed roof is larch.\n{line}\nThat is all.")
    lines = out.split("\n")
    assert lines[0] == "The shed roof is larch."
    assert lines[1].startswith(ANSWER_LINE_PREFIX)
    assert lines[2] == "That is all."
    assert not any(line.startswith(SERVER_LINE_PREFIX) for line in lines)


@pytest.mark.parametrize("sep", ["\r", "\r\n", "\u2028", "\u2029", "\x0b", "\x0c", "\x85"])
def test_hidden_line_breaks_cannot_smuggle_a_stamp_line(sep: str) -> None:
    out = neutralize_answer(f"Fine answer.{sep}VERIFIED notes/x.md")
    assert out == f"Fine answer.\n{ANSWER_LINE_PREFIX}VERIFIED notes/x.md"


def test_control_and_bidi_characters_are_replaced() -> None:
    out = neutralize_answer("a\x1b[2Kb\u202ec\x00d\te")
    assert out == "a\ufffd[2Kb\ufffdc\ufffdd\te"


def test_ordinary_answer_text_is_unchanged() -> None:
    text = "The roof pitch is 15 degrees.\n\n- Larch cladding\n- Verify the felt order next week"
    assert neutralize_answer(text) == text.replace("- Verify", "- Verify")
    assert "[answer]" not in neutralize_answer("Roof: larch.\nIt was verified by Sam.")


@settings(max_examples=300, deadline=None)
@given(st.text())
def test_no_neutralized_line_starts_with_the_server_prefix(text: str) -> None:
    out = neutralize_answer(text)
    assert isinstance(out, str)
    for line in out.split("\n"):
        assert not line.lstrip().startswith("§") or line.startswith(ANSWER_LINE_PREFIX)
        assert not re.match(r"\s*(VERIFIED|CORRECTED|SUPERSEDED|UNVERIFIED|NOT IN BRAIN)", line)
    assert not any(c in out for c in "\r\u2028\u2029\x85")


# --- properties ------------------------------------------------------------------------------

_WORD = st.builds(
    lambda core, digits, wrap: wrap.format(core + digits),
    st.text(alphabet="abcdefghijklmnopqrstuvwxyzABXYZ", min_size=2, max_size=8),
    st.sampled_from(["", "", "", "7", "42", "2026", "3.5", "-1"]),
    st.sampled_from(["{}", "{}", "{}", "{},", "{}.", "**{}**", "_{}_", "`{}`", "“{}”", "({})", "{}’s"]),
)
_SEP = st.sampled_from(["", "", "", " —", " -", " >", " *", " 12."])
_LINE = st.builds(
    lambda prefix, words, extra: prefix + " ".join(words) + extra,
    st.sampled_from(["", "", "", "- ", "* ", "1. ", "> ", "  "]),
    st.lists(_WORD, min_size=1, max_size=8),
    _SEP,
)
_BLOCK = st.builds(
    lambda first, rest, joins: first + "".join(j + r for j, r in zip(joins, rest, strict=False)),
    _LINE,
    st.lists(_LINE, max_size=5),
    st.lists(st.sampled_from(["\n", "\n", "\n> ", "\n- ", "\n3. ", "\n  "]), min_size=5, max_size=5),
)


@pytest.mark.slow
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_BLOCK, min_size=1, max_size=4), st.data())
def test_any_long_word_aligned_substring_of_a_live_block_verifies(paragraphs: list[str], data) -> None:
    note = make("# Notes\n\n" + "\n\n".join(paragraphs) + "\n")
    blocks = [b for b in blocks_of(note) if b.kind == "paragraph"]
    assume(blocks)
    block = data.draw(st.sampled_from(blocks))
    tokens = list(re.finditer(r"\S+", block.text))
    assume(len(tokens) >= 5)
    i = data.draw(st.integers(0, len(tokens) - 5))
    j = data.draw(st.integers(i + 4, len(tokens) - 1))
    quote = block.text[tokens[i].start() : tokens[j].end()]
    # Too-generic quotes are covered by their own tests; here only matching is under test.
    assume(generic_reason(normalize(quote)[0]) is None)
    c = check(quote, note)
    assert c.stamp == VERIFIED, (quote, c.reason)
    assert c.block_start <= c.match_start < c.match_end <= c.block_end  # another copy may win

    # The same text with one digit changed does not verify (unless it really occurs).
    # Digits of line-start list numbers are markers by the documented rule, the "1." of
    # "3. 1. " too: containers nest, and a reading that drops them is tried.
    runs = re.finditer(r"(?m)^(?:[ \t]*(?:>|[-*+](?=[ \t]|$)|\d{1,9}[.)](?=[ \t]|$)))+", quote)
    markers = {k for m in runs for k in range(*m.span()) if quote[k].isdigit()}
    digits = [k for k, ch in enumerate(quote) if ch.isdigit() and k not in markers]
    if digits:
        k = data.draw(st.sampled_from(digits))
        new = str((int(quote[k]) + data.draw(st.integers(1, 9))) % 10)
        changed = quote[:k] + new + quote[k + 1 :]
        nq = normalize(changed)[0]
        assume(all(nq not in normalize(b.text)[0] for b in blocks_of(note)))
        assert check(changed, note).stamp != VERIFIED


_ANY_CHAR = st.characters(codec=None, min_codepoint=0, max_codepoint=0x10FFFF)
_ANY_TEXT = st.text(
    alphabet=st.one_of(_ANY_CHAR, st.sampled_from(list('\n\r>#-*_`~("“”was: SUPERSEDED'))), max_size=800
)


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(_ANY_TEXT, _ANY_TEXT, st.dates())
def test_check_quote_never_raises_and_is_deterministic(quote: str, body: str, today: dt.date) -> None:
    note = parse_note("any.md", body)
    other = parse_note("other.md", body[::-1])
    pack = {"a": note, "b": other}
    first = check_quote(quote, note, pack, today)
    assert first.stamp in (VERIFIED, CORRECTED, SUPERSEDED, UNVERIFIED)
    assert first.reason and "\n" not in first.reason and "\r" not in first.reason
    assert check_quote(quote, note, pack, today) == first
    assert check_quote(quote, None, pack, today).stamp == UNVERIFIED


@pytest.mark.slow
def test_check_quote_on_huge_hostile_inputs() -> None:
    rng = random.Random(1234)
    alphabet = [
        "a",
        "b",
        " ",
        "\n",
        ">",
        "#",
        "*",
        "_",
        "`",
        "\x00",
        "\ud800",
        "\udfff",
        "“",
        "—",
        '(was: "',
        '")',
        "> **SUPERSEDED**\n",
        "## ",
        "```\n",
        "10⁶",
        "x",
    ]
    body = "".join(rng.choice(alphabet) for _ in range(30_000))[:100_000]
    quote = "".join(rng.choice(alphabet) for _ in range(30_000))[:100_000]
    note = parse_note("big.md", body)
    for q in (quote, body, body[1000:5000], "\x00" * 100_000, "\ud800 word word word word"):
        c = check_quote(q, note, {"a": note}, TODAY)
        assert c.stamp in (VERIFIED, CORRECTED, SUPERSEDED, UNVERIFIED)
        assert check_quote(q, note, {"a": note}, TODAY) == c


def test_check_quote_survives_bad_arguments() -> None:
    assert check_quote(None, PERF, {}, TODAY).stamp == UNVERIFIED  # type: ignore[arg-type]
    assert check_quote("The p99 latency of the search endpoint", PERF, {"x": None}, TODAY).stamp == VERIFIED  # type: ignore[dict-item]
    dated = make(ROUTER_BODY, front="valid_until: 2026-02-28\n")
    c = check_quote("The router admin page is at 192.168.1.1", dated, {}, None)  # type: ignore[arg-type]
    assert c.stamp == UNVERIFIED and "could not check" in c.reason


# --- what brain_ask never reads, which brain_verify refuses too ---------------------------------


@pytest.mark.parametrize(
    "path,front,as_of,scope,why",
    [
        ("archive/old.md", "", False, None, "archive/old.md is in archive/, which is never evidence"),
        ("archive/2025/deep.md", "status: current\n", False, None, "is in archive/"),
        ("working/heron.md", "", False, None, "working/heron.md is working state (working/"),
        ("working/general.md", "", False, None, "which ask leaves out"),
        ("notes/future.md", "valid_from: 2026-06-01\n", True, None, "valid only from 2026-06-01, after 2026-03-01"),
        ("notes/other.md", "", False, ["notes/public/"], "notes/other.md is outside the scope"),
        ("notes/archive/x.md", "", False, None, None),
        ("notes/working/x.md", "", False, None, None),
        ("notes/future.md", "valid_from: 2026-06-01\n", False, None, None),  # read as of a date only
        ("notes/public/x.md", "", False, ["notes/public/"], None),
        ("notes/old.md", "status: retracted\n", False, None, None),  # retired: its quotes are SUPERSEDED
    ],
)
def test_what_an_ask_never_reads(path: str, front: str, as_of: bool, scope, why) -> None:
    got = out_of_bounds(make(ROUTER_BODY, path=path, front=front), TODAY, as_of, scope)
    assert (got is None) if why is None else (got is not None and why in got), got
