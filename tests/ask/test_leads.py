"""How near a scope's passages come to a question (cortex.ask.leads): pure, no I/O.

NOT IN BRAIN must mean absent: a miss is NOT IN BRAIN only when no passage comes close,
by the question's words or by meaning; otherwise the reply names the closest passages.
"""

from __future__ import annotations

from cortex.ask.leads import MEANING_NEAR, WORDS_NEAR, Lead, by_words, coverage, leads_line, passages
from cortex.ask.pack import PackedFile, variants
from cortex.notes.note import parse_note

HEALTH = parse_note(
    "notes/health.md",
    "---\ntitle: Health\n---\n# Health\n\n- I am allergic to penicillin (rash, 2019).\n- Blood type: A+.\n",
)
TRIP = parse_note(
    "notes/lisbon.md", "---\ntitle: Lisbon trip, May 2026\n---\nFlying TAP TP1337 from Berlin at 07:40, seat 14C.\n"
)
NOTES = {n.path: n for n in (HEALTH, TRIP)}


def _cover(question: str, weights: dict[str, float], note, line: str) -> float:
    forms = {t: variants(t) for t in weights}
    block, text, beside = next(p for p in passages(PackedFile("t", note.path, note, note.body)) if line in p[1])
    return coverage(question, weights, forms, note, block, text, beside)


def test_coverage_is_the_share_of_the_rarity_weight_a_passage_and_its_note_s_names_cover() -> None:
    weights = {"flight": 2.0, "lisbon": 3.0, "leave": 1.0}
    q = "When does my flight to Lisbon leave?"
    # "flying" is a form of "flight", "Lisbon" is in the title, "leave" is nowhere.
    assert abs(_cover(q, weights, TRIP, "Flying TAP") - 5 / 6) < 1e-9
    # A passage that holds none of the terms itself is not close by its note's name alone.
    assert _cover(q, {"lisbon": 3.0, "leave": 1.0}, TRIP, "Flying TAP") == 0.0


def test_by_words_gives_each_note_s_closest_passage_and_skips_notes_that_cannot_reach_the_bar() -> None:
    q = "Am I allergic to any antibiotic?"
    weights = {"allergic": 1.0, "antibiotic": 1.0}
    holders = {"allergic": {"notes/health.md"}, "antibiotic": set()}
    leads = by_words(q, weights, holders, NOTES, bar=0.0)
    assert leads == [Lead("notes/health.md", "Health", words=0.5)]
    # Half the weight cannot reach a bar of 0.6: the note is not read at all.
    assert by_words(q, weights, holders, NOTES, bar=0.6) == []
    assert by_words(q, weights, {"allergic": {"notes/elsewhere.md"}}, NOTES, bar=0.0) == []  # outside `notes`


def test_a_lead_is_near_by_words_or_by_meaning_and_says_where_it_is() -> None:
    assert Lead("a.md", "A", words=WORDS_NEAR).near()
    assert Lead("a.md", "A", words=WORDS_NEAR - 0.01, cosine=MEANING_NEAR).near()
    assert not Lead("a.md", "A", words=WORDS_NEAR - 0.01, cosine=MEANING_NEAR - 0.01).near()
    assert not Lead("a.md", "A", words=0.9 * WORDS_NEAR).near()  # words only: the arm is off
    line = leads_line([Lead("notes/health.md", "Health", 0.5, 0.63), Lead("notes/x.md", "", cosine=0.61)])
    assert line == "notes/health.md (Health), 50% of the question's words and cosine 0.63; notes/x.md, cosine 0.61"


def _garden(i: int, words: str) -> tuple[str, object]:
    path = f"notes/garden-{i:02}.md"
    return path, parse_note(path, f"---\ntitle: Plot {i}\n---\n{words}\n")


def test_with_top_reading_stops_once_enough_leads_come_close_or_none_left_could_come_closer() -> None:
    q = "When were the tomato beds mulched?"
    weights = {"tomato": 1.0, "beds": 1.0, "mulched": 1.0}
    # Every note holds every term somewhere, but only some hold them in one passage.
    notes = dict(
        _garden(i, "Tomato beds mulched in May." if i % 5 == 0 else "Tomato seedlings.\n\nBeds dug.\n\nMulched roses.")
        for i in range(20)
    )
    holders = {t: set(notes) for t in weights}
    full = by_words(q, weights, holders, notes, bar=0.5)
    assert [lead.words for lead in full[:4]] == [1.0] * 4 and len(full) == 20
    # Three leads at the bar settle that the miss is near: the rest need not be read.
    cut = by_words(q, weights, holders, notes, bar=0.5, top=3)
    assert len(cut) < len(full) and all(lead.words >= 0.5 for lead in cut[:3])
    # A note named by meaning is always read; with no bar, the top three are the full read's.
    also = by_words(q, weights, holders, notes, bar=0.5, top=3, also=["notes/garden-19.md"])
    assert "notes/garden-19.md" in {lead.path for lead in also}
    assert by_words(q, weights, holders, notes, bar=0.0, top=3)[:3] == by_words(q, weights, holders, notes, bar=0.0)[:3]
