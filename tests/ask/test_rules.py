"""The stamp's rules (issue 63): each is one registered entry whose examples are its tests,
and `cortex rules` prints them in the order they are tried."""

from __future__ import annotations

import datetime as dt

import pytest

from cortex.ask.quotes import check_quote
from cortex.ask.stamps import RULES, Rule, decide
from cortex.cli import main
from cortex.notes.note import parse_note

EXAMPLES = [(rule, example) for rule in RULES for example in rule.examples]


@pytest.mark.parametrize("rule,example", EXAMPLES, ids=[f"{r.id}-{i}" for i, (r, _) in enumerate(EXAMPLES)])
def test_each_example_is_decided_by_its_rule(rule: Rule, example: tuple[str, tuple[str, ...], str]):
    text, quotes, answer = example
    note = parse_note("notes/pip.md", text)
    checks = [check_quote(q, note, {note.path: note}, dt.date(2026, 12, 7)) for q in quotes]
    verdict = decide(checks, False, 0, answer)
    assert (verdict.rule, verdict.stamp) == (rule.id, rule.stamp), verdict.reason


def test_rule_ids_are_unique_and_every_answer_rule_has_an_example():
    ids = [r.id for r in RULES]
    assert len(ids) == len(set(ids))
    answered = {"quote-unchecked", "quote-retired", "states-retired", "value-conflict", "own-words"}
    assert answered | {"own-words-corrected", "other-words"} <= {r.id for r in RULES if r.examples}


def test_absence_rules_decide_a_reply_without_citations():
    assert decide([], False, 0).rule == "no-quote"
    assert decide([], True, 0).rule == "absence-proven"
    assert decide([], True, 2).rule == "absence-unread"
    assert decide([], True, 0, near="a passage comes close").rule == "absence-near"
    assert decide([], False, 0, reader_error="the reader timed out").rule == "reader-failed"


def test_a_beyond_quotes_reply_offers_the_units_and_they_verify_as_they_stand():
    note = parse_note("notes/f.md", "# Coffee\n\nFenella hardly ever drinks coffee after lunch. She prefers tea.\n")
    pack = {note.path: note}
    checks = [check_quote("Fenella hardly ever drinks coffee after lunch", note, pack, dt.date(2026, 12, 7))]
    wrong = decide(checks, False, 0, "Fenella drinks coffee after lunch.")
    assert wrong.rule == "other-words" and "'hardly ever'" in wrong.reason, wrong.reason
    assert wrong.verified_answer is not None
    assert decide(checks, False, 0, wrong.verified_answer).rule == "own-words"


def test_cortex_rules_prints_every_rule_in_order(capsys: pytest.CaptureFixture[str]):
    assert main(["rules"]) == 0
    out = capsys.readouterr().out
    at = [out.index(f". {r.id} (") for r in RULES]
    assert at == sorted(at)
