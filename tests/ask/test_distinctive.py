"""Distinctive terms and the offline reader's bar: pure parts, no I/O.

What a question's evidence is (cortex.ask.pack), what kind of answer it asks for, and
that the offline reader quotes one passage that clears the bar or says not_in_brain.
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cortex.ask.pack import (
    DISTINCT_FLOOR,
    DISTINCT_SHARE,
    Pack,
    PackedFile,
    derived_base,
    distinctive,
    rarity,
    variants,
)
from cortex.ask.question import expects, question_terms
from cortex.ask.readers import OfflineReader
from cortex.notes.note import parse_note


def test_question_terms_drop_framing_possessives_and_contractions() -> None:
    assert question_terms("What is the name of Rosa's studio assistant?") == ["rosa", "studio", "assistant"]
    assert question_terms("Why didn't they buy a rail pass?") == ["buy", "rail", "pass"]
    assert question_terms("What is the best time to inspect?") == ["inspect"]
    assert question_terms("How much did I pay for the Škoda?") == ["pay", "škoda"]


def test_variants_fold_plural_and_inflection() -> None:
    assert "hive" in variants("hives") and "hives" in variants("hive")
    assert {"rear", "rearing", "reared"} <= variants("reared")
    assert "battery" in variants("batteries")
    assert "skoda" in variants("škoda")
    assert variants("b2") == {"b2"} and variants("c++") >= {"c++"}
    assert "super" in variants("supers") and "sup" not in variants("supers")


def test_variants_fold_one_derivational_ending_on_a_base_of_four_letters() -> None:
    assert "rented" in variants("rental") and "rental" in variants("rented")
    assert "electric" in variants("electricity")
    assert "insurance" in variants("insures") and "insured" in variants("insurance")
    assert "extracted" in variants("extraction") and "quick" in variants("quickly")
    assert "photography" in variants("photographing")
    # A base shorter than four letters is no base: "supers" is not "sup", "lately" not "lat".
    assert derived_base("supers") == "super" and "sup" not in variants("supers")
    assert derived_base("lately") == "late"
    assert derived_base("bee") == "bee" and derived_base("planning") == "plan"


def test_variants_fold_a_verb_in_y_with_its_noun_in_ight() -> None:
    # "Flying TAP TP1337 … at 07:40" is the note of a flight: the coverage line said "flight: 0 notes".
    assert {"fly", "flying", "flies"} <= variants("flight") and "flight" in variants("flights")
    assert {"flight", "flights"} <= variants("flying") and "flight" in variants("fly")
    # Only two consonants before: "light", "night", "weight" and "freight" keep to themselves.
    for term in ("light", "night", "weight", "freight", "sight"):
        stem = term.removesuffix("ight")
        assert not variants(term) & {stem + "y", stem + "ying", stem + "ies"}


@pytest.mark.slow
@given(st.text("abcdefghijklmnopqrstuvwxyz", min_size=1, max_size=14))
def test_variants_keep_the_term_and_a_base_keeps_four_letters(term: str) -> None:
    assert term in variants(term)
    base = derived_base(term)
    assert term.startswith(base[:-1]) and (base == term or len(base) >= 4)


@given(
    st.dictionaries(st.text("abcdefgh", min_size=2, max_size=6), st.integers(0, 400), max_size=8), st.integers(1, 400)
)
def test_distinctive_is_the_rare_terms_and_rarer_weighs_more(counts: dict[str, int], n: int) -> None:
    counts = {t: min(c, n) for t, c in counts.items()}
    dist = distinctive(counts, n)
    limit = max(DISTINCT_FLOOR, DISTINCT_SHARE * n)
    assert dist == {t for t, c in counts.items() if c <= limit}
    w = rarity(counts, n)
    for a in counts:
        for b in counts:
            if counts[a] < counts[b]:
                assert w[a] > w[b]


def test_a_compound_stands_for_its_parts_only_when_a_note_holds_it() -> None:
    assert set(rarity({"co-working": 1, "co": 7, "working": 3}, 155)) == {"co-working"}
    assert set(rarity({"2026/2027": 0, "2026": 109, "2027": 23}, 155)) == {"2026", "2027"}


def test_expects_reads_the_question_form() -> None:
    assert expects("What time does the market open?") == {"time"}
    assert "date" in expects("When is Rosa's birthday?")
    assert "number" in expects("How many hives does Gideon keep?")
    assert "name" in expects("Who answers the swarm hotline?")
    assert expects("Which editor does Nils use?") is None


def _pack(body: str, weights: dict[str, float]) -> Pack:
    note = parse_note("notes/hives.md", f"---\ntitle: Hives\n---\n{body}")
    holders = {t: frozenset({"notes/hives.md"}) for t in weights}
    return Pack("0" * 40, [PackedFile("t1", note.path, note, note.body)], weights=weights, holders=holders)


BODY = """# Hives

- The north hive was requeened on 12 May with a Buckfast queen.
- Oxalic acid treatment is planned for the broodless period in December.
"""


def test_offline_reader_quotes_one_list_item_that_covers_the_question() -> None:
    r = OfflineReader().read(
        "When is the oxalic acid treatment planned?",
        _pack(BODY, {"oxalic": 3.0, "acid": 3.0, "treatment": 2.0, "planned": 2.0}),
    )
    assert not r.not_in_brain and len(r.citations) == 1
    assert r.citations[0][1] == "- Oxalic acid treatment is planned for the broodless period in December."


def test_offline_reader_says_not_in_brain_below_the_bar_or_without_the_asked_kind() -> None:
    # "salary" is in no note: the passage covers well under the bar (0.65) of the weight.
    r = OfflineReader().read("What is the north hive's salary?", _pack(BODY, {"north": 2.0, "salary": 5.7}))
    assert r.not_in_brain and not r.citations
    # Every word is covered, but "How much" wants a number and the item has none.
    r = OfflineReader().read(
        "How much oxalic acid treatment is planned?",
        _pack(BODY, {"oxalic": 3.0, "acid": 3.0, "treatment": 2.0, "planned": 2.0}),
    )
    assert r.not_in_brain and not r.citations


def test_offline_reader_never_joins_passages() -> None:
    # Half the question in each item: neither clears the bar, and they are not joined.
    r = OfflineReader().read(
        "When was the Buckfast queen given oxalic acid?", _pack(BODY, {"buckfast": 6.0, "oxalic": 3.0, "acid": 3.0})
    )
    assert r.not_in_brain and not r.citations


def test_the_eval_split_is_even_lines_to_choose_on_and_odd_lines_held_out() -> None:
    from cortex.app.evaluate import halves

    qs = [{"id": f"q{i}"} for i in range(1, 6)]
    even, odd = halves(qs)
    assert [q["id"] for q in even] == ["q2", "q4"] and [q["id"] for q in odd] == ["q1", "q3", "q5"]
