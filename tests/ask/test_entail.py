"""The gate of VERIFIED (`cortex.ask.entail.derive`): an answer is VERIFIED only when the safe
edits of `cortex.ask.edit_rules` account for every difference from its quotes.

Each rule's own examples run here, and a property test edits real quotes of the public claims
eval (a word left out, a word moved, two words swapped) and checks that no such edit passes
unless a safe edit accounts for it. Pure functions, no I/O beyond reading eval/claims.jsonl.
"""

from __future__ import annotations

import json
import os
import random
from pathlib import Path

import pytest

from cortex.ask import edit_rules as R
from cortex.ask.entail import derive, takes_number, tokens, units
from cortex.ask.lexicon import same_form, same_sense, wordnet_dir

EXAMPLES = [(rule.name, *example) for rule in R.RULES.values() for example in rule.examples]


@pytest.mark.parametrize(("rule", "quote", "answer", "question", "verified"), EXAMPLES)
def test_each_rules_examples(rule: str, quote: str, answer: str, question: str, verified: bool) -> None:
    got = derive(answer, [quote], question=question)
    assert bool(got) is verified, (rule, got)
    if not verified and R.RULES[rule].kind == "refuse":
        assert got.rule == rule, got


def test_every_rule_is_named_once_and_each_refusal_names_a_rule() -> None:
    names = [r.name for r in (*R.SAFE, *R.REFUSE)]
    assert len(names) == len(set(names))
    for _, quote, answer, question, verified in EXAMPLES:
        got = derive(answer, [quote], question=question)
        if not got:
            assert got.rule in R.RULES and got.reason


def test_a_refusal_quotes_both_sides() -> None:
    got = derive("Roast the onions for 20 minutes.", ["Roast the peppers for 20 minutes"])
    assert got.reason == "the quote says 'peppers', the answer 'onions'"
    assert derive("You cycle to work on Tuesdays.", ["I usually cycle to work on Tuesdays"]).reason == (
        "the answer leaves out 'usually'"
    )


def test_tokens_open_contractions_and_keep_numbers_whole() -> None:
    assert [t.key for t in tokens("It isn't £4.50, Ana's is.")][:4] == ["it", "is", "not", "§"]
    assert [t.key for t in tokens("Mum's staying till 3 March")][:2] == ["mum", "is"]


def test_units_cut_clauses_but_keep_conditions() -> None:
    assert len(units("The bins go out on Tuesday, and recycling goes out on Friday.")) == 2
    assert len(units("The bins go out on Tuesday unless it is a holiday.")) == 1
    assert len(units("If it rains, the match moves to Sunday.")) == 1


def test_word_forms_keep_tense_apart() -> None:
    assert same_form("dogs", "dog") and same_form("bought", "bought")
    assert not same_form("lived", "lives")


def test_synonyms_come_from_wordnet_and_siblings_do_not() -> None:
    if wordnet_dir() is None:
        # In CI WordNet is part of the install (ops/system-deps.sh): missing, this fails.
        assert os.environ.get("CI") != "true", "WordNet is missing: ops/system-deps.sh installs wordnet-base"
        pytest.skip("WordNet is not installed (ops/system-deps.sh installs it)")
    assert same_sense("shuts", "closes") and same_sense("car", "automobile")
    assert not same_sense("fridge", "freezer") and not same_sense("monday", "tuesday")
    assert not same_sense("open", "closed")


def test_without_wordnet_only_forms_count(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from cortex.ask import lexicon

    monkeypatch.setenv("WORDNET_DIR", str(tmp_path))
    for cached in (lexicon._files, lexicon._synsets, lexicon._irregular_pasts, lexicon._tag_count):
        cached.cache_clear()
    try:
        assert not lexicon.same_sense("car", "automobile")
        assert lexicon.same_sense("cars", "car")
    finally:
        monkeypatch.undo()
        for cached in (lexicon._files, lexicon._synsets, lexicon._irregular_pasts, lexicon._tag_count):
            cached.cache_clear()


# --- the property: an edit no safe edit accounts for is never VERIFIED -------------------------

_CLAIMS = Path(__file__).resolve().parents[2] / "eval" / "claims.jsonl"


def _quotes() -> list[str]:
    cases = [json.loads(line) for line in _CLAIMS.read_text().splitlines() if line.strip()]
    out = []
    for c in cases:
        for q in c["quotes"]:
            words = q.split()
            if len(words) >= 5 and "|" not in q and "`" not in q and q not in out:
                out.append(q)
    return out


def _content(word: str) -> bool:
    w = word.strip(".,;:!?()\"'").casefold()
    return w.isalpha() and w not in R.EMPTY and w not in R.FRAMING and w not in R.PRONOUN


def _edits(quote: str, rng: random.Random) -> list[tuple[str, str]]:
    words = quote.split()
    spots = [i for i, w in enumerate(words) if _content(w)]
    out = []
    if spots:
        i = rng.choice(spots)
        out.append(("left out", " ".join(words[:i] + words[i + 1 :])))
        j = rng.randrange(len(words))
        moved = words[:i] + words[i + 1 :]
        moved.insert(j, words[i])
        if moved != words:
            out.append(("moved", " ".join(moved)))
    if len(spots) >= 2:
        a, b = rng.sample(spots, 2)
        if words[a].casefold() != words[b].casefold():
            swapped = list(words)
            swapped[a], swapped[b] = swapped[b], swapped[a]
            out.append(("swapped", " ".join(swapped)))
    return out


def _accounted(kind: str, quote: str, edited: str) -> bool:
    """A safe edit the table names that can make `edited` of `quote`: the same words in the
    same order once empty words are set aside, or two items around 'and'/'or' swapped."""
    key = lambda s: [t.key for t in tokens(s) if t.key not in R.EMPTY]  # noqa: E731
    if key(quote) == key(edited):
        return True
    removed = [w for w in quote.split() if w not in edited.split()]
    if kind == "left out" and removed and all(w.startswith("(") and w.rstrip(".,;").endswith(")") for w in removed):
        return True  # a whole aside in brackets: rule whole-clause
    words = quote.split()
    for i, word in enumerate(words):  # "on Wednesdays" said "Wednesdays": rule number-form
        if kind == "left out" and word in R.BEFORE_NUMBER and words[:i] + words[i + 1 :] == edited.split():
            return takes_number(tokens(" ".join(words[i : i + 4])), 0)
    return kind == "swapped" and (" and " in quote or " or " in quote)


def test_no_unaccounted_edit_of_a_real_quote_is_verified() -> None:
    rng = random.Random(53)
    checked = 0
    for quote in _quotes():
        for kind, edited in _edits(quote, rng):
            if _accounted(kind, quote, edited):
                continue
            got = derive(edited, [quote])
            assert not got, (kind, quote, edited, got)
            checked += 1
    assert checked > 300


_TENSES = dict(zip("is was are were has have does did".split(), "was is were are had had did does".split()))


def test_no_quote_said_back_in_another_tense_is_verified_whatever_the_question_asks() -> None:
    # Each of a quote's auxiliaries put in the other tense, asked in either tense: the question's
    # words restate nothing in a tense the quote does not state (held-out set D: "Is the boiler
    # under warranty?" let "was under warranty until March 2024" be said "is").
    checked = 0
    for quote in _quotes():
        words = quote.split()
        for i, word in enumerate(words):
            other = _TENSES.get(word.casefold())
            if other is None:
                continue
            edited = " ".join([*words[:i], other, *words[i + 1 :]])
            for question in (f"{quote}?", f"{edited}?"):
                got = derive(edited, [quote], question=question)
                assert not got, (quote, edited, question, got)
                checked += 1
    assert checked > 100


def test_a_quote_said_back_as_it_stands_is_verified() -> None:
    # The offline reader answers "From the notes:" and the quote as the note wraps it.
    cases = [json.loads(line) for line in _CLAIMS.read_text().splitlines() if line.strip()]
    quotes = {q for c in cases for q in c["quotes"]}
    wrapped = "The hourly rate for small\njobs is 95 EUR, minimum one hour."
    # Several sentences, each sharing words with the others: each is said back onto its own.
    paragraph = (
        "The day rate is 640 EUR from 2026-07-01, for a day of 7.5 hours. The hourly rate for small jobs is 95 "
        "EUR, minimum one hour. Existing clients keep their old rate until their current contract ends; "
        "Harbourline's phase 2 is therefore at 580 EUR a day until it finishes. Fixed-price work is estimated "
        "at the day rate plus a risk margin of 20%."
    )
    for quote in [*sorted(quotes), wrapped, paragraph]:
        for answer in (quote, f"From the notes:\n{quote}"):
            got = derive(answer, [quote.replace("\n", " ")])
            assert got, (quote, got)
