"""Blocks of a note and the matching normalisation (cortex.notes.blocks)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cortex.notes.blocks import Block, blocks_of, normalize, quote_forms
from cortex.notes.note import parse_note

TEMPLATE = Path(__file__).resolve().parent.parent.parent / "brain-template"


def make(body: str, path: str = "notes/t.md", front: str = "title: T\n") -> object:
    return parse_note(path, f"---\n{front}---\n{body}")


def norm(text: str) -> str:
    return normalize(text)[0]


def block_with(note, needle: str) -> Block:
    found = [b for b in blocks_of(note) if needle in b.text]
    assert len(found) == 1, (needle, [b.text for b in blocks_of(note)])
    return found[0]


# --- normalisation: what is folded -------------------------------------------------

FOLDED = [
    ("whitespace runs", "a  \t b", "a b"),
    ("line wrapping", "one\ntwo\r\nthree\rfour", "one two three four"),
    ("nbsp and thin space", "10\u00a0000\u2009EUR", "10 000 EUR"),
    ("leading/trailing", "  \n x \n ", "x"),
    ("single typographic quotes", "‘it’s’ ‚low‛ ‹x›", "'it's' 'low' 'x'"),
    ("double typographic quotes", "“a” „b‟ «c»", '"a" "b" "c"'),
    ("dashes", "a‐b‑c‒d–e—f―g−h", "a-b-c-d-e-f-g-h"),
    ("bold", "**bold** text", "bold text"),
    ("italic star", "an *italic* word", "an italic word"),
    ("italic underscore", "an _italic_ word", "an italic word"),
    ("bold italic", "***both***", "both"),
    ("code span", "run `make test` now", "run make test now"),
    ("strikethrough", "~~old~~ new", "old new"),
    ("heading marker", "## Status", "Status"),
    ("blockquote marker", "> quoted\n> more", "quoted more"),
    ("nested blockquote", "> > deep", "deep"),
    ("bullets", "- one\n* two\n+ three", "one two three"),
    ("ordered list", "1. one\n2) two", "one two"),
    ("indented bullets", "- a\n  - b\n    - c", "a b c"),
    ("quote then bullet", "> - item", "item"),
]


@pytest.mark.parametrize("name,text,expected", FOLDED, ids=[f[0] for f in FOLDED])
def test_normalize_folds(name: str, text: str, expected: str) -> None:
    assert norm(text) == expected


KEPT = [
    ("superscript", "10⁶"),
    ("subscript", "CO₂"),
    ("fullwidth letters and digits", "ＡＢＣ１"),
    ("fullwidth quote", "＂x＂"),
    ("ligature", "ﬁle"),
    ("vulgar fraction", "½ cup"),
    ("ellipsis", "wait…"),
    ("primes", "5′ 3″"),
    ("case", "Exact Case"),
    ("snake_case", "valid_until"),
    ("multiplication", "2 * 3"),
    ("intraword star", "5*3"),
    ("single tilde", "~5 ms"),
    ("hash not heading", "#5 on the list"),
    ("dash not bullet", "-5 °C"),
    ("zero width space", "a\u200bb"),
    ("soft hyphen", "co\u00adop"),
]


@pytest.mark.parametrize("name,text", KEPT, ids=[k[0] for k in KEPT])
def test_normalize_keeps(name: str, text: str) -> None:
    assert norm(text) == text


def test_normalize_does_not_fold_digits_or_letters() -> None:
    assert norm("10⁶") != norm("106")
    assert norm("ﬁle") != norm("file")
    assert norm("ＡＢＣ１") != norm("ABC1")
    assert norm("½") != norm("1/2")
    assert norm("H₂O") != norm("H2O")
    assert norm("Case") != norm("case")


def test_hard_wrapped_gt_line_is_text_not_a_quote_marker() -> None:
    assert norm("latency must stay\n> 5 ms under load") == "latency must stay > 5 ms under load"
    assert norm("keep at least\n>= 3 replicas") == "keep at least >= 3 replicas"
    # After a list item too: a wrapped item is still prose.
    assert norm("- latency must stay\n> 5 ms") == "latency must stay > 5 ms"
    # After a blank line, a heading, or another quote line it is a marker.
    assert norm("intro\n\n> quoted") == "intro quoted"
    assert norm("# Head\n> quoted") == "Head quoted"
    assert norm("> a\n> b") == "a b"


def test_banner_line_is_always_a_blockquote() -> None:
    assert norm("text\n> **SUPERSEDED** by x") == "text SUPERSEDED by x"


def test_wrapped_number_after_paragraph_is_text() -> None:
    assert norm("released in\n2024. Then it broke") == "released in 2024. Then it broke"
    assert norm("- first item\n2. second") == "first item second"
    assert norm("\n3. third") == "third"


def test_quote_forms_cover_a_first_line_inside_a_list_or_quote() -> None:
    forms = quote_forms("alpha beta\n2. gamma delta")
    assert "alpha beta 2. gamma delta" in forms
    assert "alpha beta gamma delta" in forms
    assert quote_forms("one line only") == ["one line only"]


def test_normalize_offsets_point_into_the_input() -> None:
    text = "## Head\n\n> **Bold** “quoted” — text\n- item `code`"
    out, offs = normalize(text)
    assert len(out) == len(offs)
    assert offs == sorted(set(offs))
    for ch, off in zip(out, offs, strict=True):
        src = text[off]
        assert ch == src or (ch == " " and src.isspace()) or (ch, src) in {('"', "“"), ('"', "”"), ("-", "—")}


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=400))
def test_normalize_offsets_property(text: str) -> None:
    out, offs = normalize(text)
    assert len(out) == len(offs)
    assert all(a < b for a, b in zip(offs, offs[1:], strict=False))
    assert all(0 <= o < len(text) for o in offs)
    assert out == out.strip(" ")
    assert "  " not in out
    assert normalize(text) == (out, offs)  # deterministic


# --- blocks --------------------------------------------------------------------------


def test_blocks_split_paragraphs_headings_and_code() -> None:
    n = make("# Title\nIntro line one\nline two\n\n- a\n- b\n\n```\ncode\n\n# not heading\n```\nAfter\n")
    kinds = [(b.kind, b.text) for b in blocks_of(n)]
    assert kinds == [
        ("heading", "# Title"),
        ("paragraph", "Intro line one\nline two"),
        ("list item", "- a"),
        ("list item", "- b"),
        ("code", "```\ncode\n\n# not heading\n```"),
        ("paragraph", "After"),
    ]


def test_block_offsets_are_in_the_full_text_and_skip_frontmatter() -> None:
    n = make("Body para\n\n## H\ntext")
    for b in blocks_of(n):
        assert n.text[b.start : b.end] == b.text
        assert b.start >= n.body_offset
    assert all("title" not in b.text for b in blocks_of(n))
    assert blocks_of(n)[0].line == 4  # after three frontmatter lines


def test_heading_path_and_nearest_heading() -> None:
    n = make("before\n\n# A\n\n## B\n\nin b\n\n### C\n\nin c\n\n## D\n\nin d\n")
    assert block_with(n, "before").heading == ""
    assert block_with(n, "before").heading_path == ()
    assert block_with(n, "in b").heading_path == ("A", "B")
    assert block_with(n, "in c").heading_path == ("A", "B", "C")
    assert block_with(n, "in c").heading == "C"
    assert block_with(n, "in d").heading_path == ("A", "D")


def test_a_line_starting_with_gt_starts_a_block_quote_as_in_commonmark() -> None:
    n = make("## Perf\n\nThe p99 latency must stay below the budget, which is\n> 5 ms under load.\n\nNext para.\n")
    assert block_with(n, "p99").text == "The p99 latency must stay below the budget, which is"
    quoted = block_with(n, "5 ms")
    assert quoted.kind == "paragraph" and quoted.text == "> 5 ms under load."
    assert [n.text[a:b] for a, b in quoted.pieces] == ["5 ms under load."]
    assert len(blocks_of(n)) == 4


def test_blockquote_after_blank_line_is_its_own_block() -> None:
    n = make("Para.\n\n> A real quote\n> on two lines\n")
    assert [b.text for b in blocks_of(n)] == ["Para.", "> A real quote\n> on two lines"]


def test_heading_ends_a_paragraph_without_blank_line() -> None:
    n = make("para\n## H\nmore")
    assert [b.text for b in blocks_of(n)] == ["para", "## H", "more"]


# --- retirement ------------------------------------------------------------------------

SECTIONED = """# Plan

Intro is live.

## Old approach

> **SUPERSEDED** by the new approach below.

First retired paragraph.

Second retired paragraph.

### Detail of the old approach

Retired detail under a lower-level heading.

## New approach

Live again after the same-level heading.

# Appendix

Live appendix.
"""


def test_banner_retires_its_whole_section_not_only_the_next_paragraph() -> None:
    n = make(SECTIONED)
    for needle in ("SUPERSEDED", "First retired", "Second retired", "Retired detail", "### Detail"):
        b = block_with(n, needle)
        assert b.retired and "SUPERSEDED banner at line" in b.retired, needle
    for needle in ("Intro is live", "## Old approach", "## New approach", "Live again", "Live appendix"):
        assert block_with(n, needle).retired is None, needle


def test_banner_reason_names_the_line() -> None:
    n = make(SECTIONED)
    line = n.text.splitlines().index("> **SUPERSEDED** by the new approach below.") + 1
    assert f"line {line}" in block_with(n, "First retired").retired


def test_banner_is_ended_by_a_higher_level_heading() -> None:
    n = make("# A\n\n## B\n\n### C\n\n> **RETRACTED**\n\nretired c\n\n## E\n\nlive e\n")
    assert block_with(n, "retired c").retired
    assert block_with(n, "live e").retired is None


def test_banner_before_any_heading_retires_the_whole_note() -> None:
    n = make("> **DEPRECATED** — see notes/new.md\n\nold intro\n\n# Head\n\nold body\n\n## Sub\n\nold sub\n")
    for b in blocks_of(n):
        assert b.retired and "before any heading" in b.retired, b.text


@pytest.mark.parametrize(
    "banner",
    [
        "> **SUPERSEDED** by the 2026 plan.",
        "> **SUPERSEDED:** by the 2026 plan.",
        "> SUPERSEDED by the 2026 plan.",
        "> _RETRACTED_ the measurement was wrong",
        "> ***CORRECTION*** the price was 40 EUR",
        "> __DEPRECATED__",
        ">> **DEPRECATED** nested",
        ">**SUPERSEDED**",
        "   > **SUPERSEDED** indented three",
        "> **SUPERSEDED**: colon after",
        "> **SUPERSEDED** — dash after",
    ],
)
def test_banner_variants_retire(banner: str) -> None:
    n = make(f"## S\n\n{banner}\n\nbody text\n\n## T\n\nlive\n")
    assert block_with(n, "body text").retired
    assert block_with(n, "live").retired is None


@pytest.mark.parametrize(
    "line",
    [
        "> **Superseded** by the 2026 plan.",
        "> superseded by the 2026 plan.",
        "> SUPERSEDEDNESS is not a word",
        "    > **SUPERSEDED** indented four: code",
        "**SUPERSEDED** without a quote marker",
        "This superseded the old one.",
        "> The plan was SUPERSEDED later",
    ],
)
def test_lookalikes_do_not_retire(line: str) -> None:
    n = make(f"## S\n\n{line}\n\nbody text\n")
    assert all(b.retired is None for b in blocks_of(n))


def test_banner_inside_fenced_code_does_not_retire() -> None:
    n = make("## S\n\n```markdown\n> **SUPERSEDED** example\n## SUPERSEDED: x\n```\n\nbody text\n")
    assert all(b.retired is None for b in blocks_of(n))


def test_banner_right_after_a_paragraph_line_starts_a_new_block() -> None:
    n = make("## S\n\nlive line\n> **SUPERSEDED** from here\nold text\n")
    assert block_with(n, "live line").retired is None
    b = block_with(n, "from here")
    assert b.kind == "banner" and "old text" in b.text and b.retired


@pytest.mark.parametrize(
    "heading",
    ["## SUPERSEDED: the 2025 plan", "## Old plan (DEPRECATED)", "## RETRACTED", "## A CORRECTION to x"],
)
def test_heading_marked_in_capitals_retires_its_section(heading: str) -> None:
    n = make(f"# Top\n\nlive top\n\n{heading}\n\nold para\n\n### Sub\n\nold sub\n\n## Next\n\nlive next\n")
    h = block_with(n, heading)
    assert h.retired and "section heading" in h.retired
    assert block_with(n, "old para").retired
    assert block_with(n, "old sub").retired
    assert block_with(n, "live top").retired is None
    assert block_with(n, "live next").retired is None


def test_lower_case_heading_word_does_not_retire() -> None:
    n = make("## The superseded plan\n\ntext\n\n## Deprecated APIs\n\nmore\n")
    assert all(b.retired is None for b in blocks_of(n))


def test_house_rules_template_stays_live() -> None:
    text = (TEMPLATE / "notes" / "house-rules.md").read_text()
    n = parse_note("notes/house-rules.md", text)
    assert all(b.retired is None for b in blocks_of(n))
    assert all(not b.corrections for b in blocks_of(n))


# --- corrections ------------------------------------------------------------------------


def test_correction_spans_and_current_claim() -> None:
    n = make('## D\n\n- 2026-01-05 — Larch.\n- Roof pitch of 15 degrees (was: "10 degrees"), so snow slides off.\n')
    b = block_with(n, "Roof")
    (c,) = b.corrections
    assert n.text[c.start : c.end] == "10 degrees"
    assert c.old == "10 degrees"
    assert c.current == "Roof pitch of 15 degrees"
    assert n.text[c.marker_start : c.marker_end] == '(was: "10 degrees")'


@pytest.mark.parametrize(
    "marker,old",
    [
        ("(was: “Tuesday”)", "Tuesday"),
        ('(was: "Tuesday")', "Tuesday"),
        ("(was “Tuesday”)", "Tuesday"),
        ("(was: 'Tuesday')", "Tuesday"),
        ("(was: ‘Tuesday’)", "Tuesday"),
        ('( was: "Tues\nday" )', "Tues\nday"),
    ],
)
def test_correction_quote_styles(marker: str, old: str) -> None:
    n = make(f"The meeting moves to Thursday {marker}. Bring notes.\n")
    (c,) = blocks_of(n)[0].corrections
    assert c.old == old
    assert c.current == "The meeting moves to Thursday"


# Every shape a person writes the house rule in: the old wording, as `Correction.old`.
WAS_SHAPES = {
    "unquoted": ("(was: every 18 months)", "every 18 months"),
    "backticks": ("(was: `every 18 months`)", "every 18 months"),
    "double backticks": ("(was: ``every 18 months``)", "every 18 months"),
    "upper case": ("(WAS: every 18 months)", "every 18 months"),
    "capitalised, quoted, no colon": ('(Was "every 18 months")', "every 18 months"),
    "square brackets": ("[was: every 18 months]", "every 18 months"),
    "full-width": ("（was：every 18 months）", "every 18 months"),
    "full-width colon only": ("(was：“every 18 months”)", "every 18 months"),
    "guillemets": ("(was: «every 18 months»)", "every 18 months"),
    "corner brackets": ("(was: 「every 18 months」)", "every 18 months"),
    "low-high quotes": ("(was: „every 18 months“)", "every 18 months"),
    "single typographic": ("(was: ‘every 18 months’)", "every 18 months"),
    "spaces around": ("( was :  every 18 months  )", "every 18 months"),
    "brackets inside": ("(was: every 18 months (or so))", "every 18 months (or so)"),
    "quoted, then more": ('(was: "18 months" until 2025)', '"18 months" until 2025'),
    "long": (f"(was: {'every 18 months, which the old contract set out, ' * 12}in all)", None),
    "wrapped": ("(was: every\n18 months)", "every\n18 months"),
}


@pytest.mark.parametrize("name", sorted(WAS_SHAPES))
def test_a_correction_in_any_shape_is_one(name: str) -> None:
    marker, old = WAS_SHAPES[name]
    n = make(f"The boiler is serviced every 12 months {marker}. The tank holds 200 litres.\n")
    (c,) = blocks_of(n)[0].corrections
    assert c.old == (old if old is not None else marker[6:-1])
    assert c.current == "The boiler is serviced every 12 months"
    assert n.text[c.marker_start : c.marker_end] == marker
    assert n.text[c.unit_start : c.unit_end] == f"The boiler is serviced every 12 months {marker}."


@pytest.mark.parametrize(
    "body",
    [
        "It was raining when the boiler was serviced.\n",
        "Grandpa (was born in 1980) serviced the boiler.\n",  # "was" without a colon is prose
        "The boiler (wasabi: green) is fine.\n",
        "The boiler (it was: fine) is fine.\n",
        "The boiler (Was 'really' good) is fine.\n",  # quoted, but not the whole wording
        "Write `(was: old)` to correct a claim.\n",  # an example in code
        "The boiler (was fine.\n",
    ],
)
def test_was_without_the_marker_is_live_text(body: str) -> None:
    assert blocks_of(make(body))[0].corrections == ()


def test_an_unclosed_correction_runs_to_the_end_of_its_block() -> None:
    n = make("Serviced every 12 months (was: every 18 months. Checked in May.\n\nNext paragraph.\n")
    first, second = blocks_of(n)
    (c,) = first.corrections
    assert c.old == "every 18 months. Checked in May."
    assert n.text[c.marker_start : c.marker_end] == "(was: every 18 months. Checked in May."
    assert second.corrections == ()


def test_many_unclosed_markers_cost_one_pass() -> None:
    n = make("(was: " * 20_000 + "end\n")
    (c,) = blocks_of(n)[0].corrections  # the first runs to the block's end and holds the rest
    assert c.old.endswith("end")


def test_two_corrections_in_one_block() -> None:
    n = make('Price is 40 EUR (was: "14 EUR"). Delivery on Friday (was: "Monday").\n')
    cs = blocks_of(n)[0].corrections
    assert [c.old for c in cs] == ["14 EUR", "Monday"]
    assert [c.current for c in cs] == ["Price is 40 EUR", "Delivery on Friday"]


@pytest.mark.parametrize(
    "body,unit,span",
    [
        ('- a\n- b (was: "c") d\n  e\n- f\n', "list item", '- b (was: "c") d\n  e'),
        ('- a\n  - b (was: "c")\n  lazy\n- f\n', "list item", '  - b (was: "c")\n  lazy'),
        ('- a (was: "c")\n  - b\n', "list item", '- a (was: "c")'),
        ('1. a\n2. b (was: "c")\n3. d\n', "list item", '2. b (was: "c")'),
        ('> - a\n> - b (was: "c")\n', "list item", '> - b (was: "c")'),
        ('| h | i |\n|---|---|\n| 1 | 2 (was: "3") |\n| 4 | 5 |\n', "table row", '| 1 | 2 (was: "3") |'),
        ('h | i\n--|--\n1 | 2 (was: "3")\n4 | 5\n', "table row", '1 | 2 (was: "3")'),
        ('One. Two (was: "2") two.\nThree.\n', "sentence", 'Two (was: "2") two.'),
        ('One. Two. (was: "2") Three.\n', "sentence", 'Two. (was: "2")'),
        ('One e.g. two (was: "2"). Three.\n', "sentence", 'One e.g. two (was: "2").'),
        ('One (was: "a. B") c. Four.\n', "sentence", 'One (was: "a. B") c.'),
        ('Intro line\n- b (was: "c")\n', "list item", '- b (was: "c")'),
        ('> Quote one.\n>\n> Two (was: "c")\n', "sentence", '> Two (was: "c")'),
        ('## Two (was: "c")\n', "heading", '## Two (was: "c")'),
    ],
)
def test_the_claim_a_correction_corrects(body: str, unit: str, span: str) -> None:
    for eol in ("\n", "\r\n"):
        n = make(body.replace("\n", eol))
        ((c,),) = [b.corrections for b in blocks_of(n) if b.corrections]
        assert c.unit == unit
        assert n.text[c.unit_start : c.unit_end] == span.replace("\n", eol)
        assert c.unit_start <= c.marker_start < c.marker_end <= c.unit_end


def test_correction_inside_inline_code_or_fence_is_an_example() -> None:
    n = make('Write `claim (was: "old")` for a fix.\n\n```\nx (was: "y")\n```\n')
    assert all(not b.corrections for b in blocks_of(n))


def test_blocks_cannot_be_changed_by_a_caller() -> None:
    """Every caller gets the same cached blocks: none can change what the next one sees."""
    n = make('A (was: "B") c.\n')
    block = blocks_of(n)[0]
    with pytest.raises(AttributeError):
        block.corrections.clear()  # a tuple
    with pytest.raises(dataclasses.FrozenInstanceError):
        block.retired = "changed"  # type: ignore[misc]
    blocks_of(n).clear()
    assert blocks_of(n)[0].corrections and blocks_of(n)[0].retired is None


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=600))
def test_blocks_of_never_raises_and_tiles_the_body(body: str) -> None:
    n = parse_note("x.md", body)
    blocks = blocks_of(n)
    last = n.body_offset
    for b in blocks:
        assert last <= b.start < b.end <= len(n.text)
        assert n.text[b.start : b.end] == b.text
        assert b.text.strip(" \t\r\n")  # CommonMark's blank: spaces and tabs only
        last = b.end


_MARKDOWNISH = st.lists(
    st.one_of(
        st.sampled_from(
            list("ab. AB\n\r\t>|-*+1)#`:")
            + ['(was: "', '")', "(was: 'x. Y')", "e.g. ", "|---|", "\r\n", "\n- ", "\n  - ", "\n## "]
        ),
        st.characters(),
    ),
    max_size=120,
).map("".join)


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(_MARKDOWNISH)
def test_a_corrections_claim_holds_its_marker_inside_its_block(body: str) -> None:
    n = parse_note("x.md", body)
    for b in blocks_of(n):
        for c in b.corrections:
            assert b.start <= c.unit_start <= c.marker_start < c.marker_end <= c.unit_end <= b.end
            assert c.unit in ("list item", "table row", "sentence", "heading")
