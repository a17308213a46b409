"""The eval's gold answers (cortex.app.eval_answers): whether a reply holds the fact asked
for, and the ideal reader that quotes it from a pack. Pure, no I/O."""

from __future__ import annotations

from cortex.app.eval_answers import IdealReader, certified_quotes, fact_lines, held_groups, holds
from cortex.ask.pack import Pack, PackedFile
from cortex.notes.note import parse_note

RECORDS = parse_note(
    "notes/records.md",
    "# Inspections\n\n## 2026-08-30\n\n### Marigold\n\n- Frames of brood: 2.\n\n### Sorrel\n\n- Frames of brood: 3.\n\n"
    "## 2026-09-06\n\n### Marigold\n\n- Frames of brood: 3.\n",
)
PRICES = parse_note(
    "notes/prices.md",
    "# Honey prices\n\n## 2025\n\n> **SUPERSEDED** by the list below\n\n- Heather honey: 10 EUR.\n\n## Now\n\n"
    "- Heather honey: 12 EUR a jar, summer honey\n  8.50 EUR a jar.\n",
)


def test_a_reply_holds_its_answer_when_every_group_is_in_a_certified_quote_under_the_named_headings() -> None:
    entry = {"answer": [["frames of brood: 3"]], "under": ["2026-09-06", "Marigold"]}
    assert holds(entry, [("- Frames of brood: 3.", ("Inspections", "2026-09-06", "Marigold"))])
    assert not holds(entry, [("- Frames of brood: 3.", ("Inspections", "2026-08-30", "Sorrel"))])
    two = {"answer": [["12 EUR"], ["8.50 eur", "eight euros fifty"]]}
    assert held_groups(two, [("Heather honey: 12 EUR a jar", ())]) == 1  # half an answer: neither right nor wrong
    assert holds(two, [("Heather honey: 12 EUR a jar, summer honey\n  8.50 EUR", ())])


def test_a_quote_repeated_under_several_headings_is_judged_under_each() -> None:
    reply = {"quotes": [{"quote": "- Frames of brood: 3.", "stamp": "VERIFIED", "path": RECORDS.path, "heading": "x"}]}
    found = certified_quotes(reply, {RECORDS.path: RECORDS})
    assert [p[-2:] for _, p in found] == [("2026-08-30", "Sorrel"), ("2026-09-06", "Marigold")]
    unverified = {"quotes": [dict(reply["quotes"][0], stamp="UNVERIFIED")]}
    assert certified_quotes(unverified, {RECORDS.path: RECORDS}) == []


def test_the_ideal_reader_quotes_the_live_gold_line_of_the_pack_or_says_not_in_brain() -> None:
    pack = Pack("0" * 40, [PackedFile("t1", PRICES.path, PRICES, PRICES.body)])
    entry = {"answer": [["heather honey: 1"]]}
    assert fact_lines(entry, [PRICES.path], pack) == [("t1", "- Heather honey: 12 EUR a jar, summer honey")]
    wrapped = {"answer": [["summer honey 8.50 EUR"]]}  # across a line break of one list item
    assert fact_lines(wrapped, [PRICES.path], pack) == [
        ("t1", "- Heather honey: 12 EUR a jar, summer honey\n8.50 EUR a jar.")
    ]
    question = "What does a jar of heather honey cost?"
    reader = IdealReader({question: ([PRICES.path], entry)})
    reply = reader.read(question, pack)
    assert reply.citations == [("t1", "- Heather honey: 12 EUR a jar, summer honey")] and question in reader.found
    assert reader.read(question, Pack("0" * 40, [])).not_in_brain  # the pack holds no gold note
    assert IdealReader({}).read("Anything else?", pack).not_in_brain
