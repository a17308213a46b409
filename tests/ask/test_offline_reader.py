"""The offline reader's finer evidence: pure parts, no I/O.

A lower-case question word does not count as covered by a name in a note's title,
and measure questions ask for the specific that answers them.
"""

from __future__ import annotations

from cortex.ask.pack import Pack, PackedFile
from cortex.ask.readers import OfflineReader, expects, proper_only
from cortex.notes.note import parse_note


def _pack(
    title: str, body: str, weights: dict[str, float], path: str = "notes/home-assistant.md", front: str = ""
) -> Pack:
    note = parse_note(path, f"---\ntitle: {title}\n{front}---\n{body}")
    holders = {t: frozenset({path}) for t in weights}
    return Pack("0" * 40, [PackedFile("t1", note.path, note, note.body)], weights=weights, holders=holders)


def test_proper_only_is_the_lower_case_words_a_title_writes_as_a_name() -> None:
    assert proper_only("What is the name of Rosa's studio assistant?", ["Home Assistant"]) == {"assistant"}
    assert proper_only("What IP address does Home Assistant have?", ["Home Assistant"]) == set()
    assert proper_only("Which print queue replaced MSMQ?", ["Fennick print queue"]) == set()
    # The title's first word is capitalised by sentence case, not because it is a name.
    assert proper_only("Which home server runs it?", ["Home Assistant"]) == set()
    # A word the title also writes in lower case is an ordinary word there.
    assert proper_only("Which assistant?", ["Assistant setup", "Home Assistant and the assistant"]) == set()


BODY = "- Studio kiln: notify Rosa when the kiln's smart plug draws under 50 W after a firing.\n"


def test_a_name_in_the_title_does_not_cover_a_common_noun_of_the_question() -> None:
    weights = {"rosa": 2.0, "studio": 2.9, "assistant": 3.2}
    r = OfflineReader().read("What is the name of Rosa's studio assistant?", _pack("Home Assistant", BODY, weights))
    assert r.not_in_brain and not r.citations
    # The same words in a title that is no name do cover it (the reader needs no new words).
    r = OfflineReader().read(
        "What is the name of Rosa's studio assistant?",
        _pack("Studio assistant", BODY, weights, "notes/studio-assistant.md"),
    )
    assert not r.not_in_brain and r.citations


def test_measure_questions_want_the_specific_that_answers_them() -> None:
    assert expects("How tall is the walnut tree?") == {"amount"}
    assert expects("How much does the cello rental cost?") >= {"amount"}
    assert expects("What fee does the keeper charge?") == {"amount", "number"}
    assert expects("Which OR-Tools version was chosen?") == {"number", "identifier"}
    assert expects("What is the phone number of the support line?") == {"number", "identifier"}
    assert expects("What are the opening hours of the tea house?") == {"time"}
    assert expects("Which editor does Nils use?") is None


TREE = "- Their walnut tree shades our south roof; the children are 9 and 6.\n- The walnut tree is 14 m tall.\n"


def test_how_tall_is_not_answered_by_a_bare_count() -> None:
    weights = {"walnut": 3.5, "tree": 3.5}
    r = OfflineReader().read("How tall is the walnut tree?", _pack("Neighbours", TREE, weights, "notes/n.md"))
    assert r.citations and r.citations[0][1] == "- The walnut tree is 14 m tall."
    r = OfflineReader().read(
        "How tall is the walnut tree?", _pack("Neighbours", TREE.splitlines()[0] + "\n", weights, "notes/n.md")
    )
    assert r.not_in_brain and not r.citations


CAT = "# Pim\n\n- Vet: Dr Anouk Brenner at Millbrook Vets. Booster due 2027-03.\n"


def test_a_note_s_description_and_aliases_cover_the_question_s_words() -> None:
    weights = {"cat": 3.8, "vet": 3.0}
    q = "Who is the cat's vet?"
    r = OfflineReader().read(q, _pack("Pim", CAT, weights, "notes/pim.md"))
    assert r.not_in_brain  # "cat" is nowhere around the passage
    for front in ("description: Pim the cat — vet, food, habits.\n", "aliases: [our cat]\n"):
        r = OfflineReader().read(q, _pack("Pim", CAT, weights, "notes/pim.md", front))
        assert not r.not_in_brain and r.citations[0][1].startswith("- Vet: Dr Anouk Brenner")


def test_a_name_in_a_description_does_not_cover_a_common_noun() -> None:
    weights = {"rosa": 2.0, "studio": 2.9, "assistant": 3.2}
    front = "description: Notes on Home Assistant.\n"
    q = "What is the name of Rosa's studio assistant?"
    assert OfflineReader().read(q, _pack("Smart home", BODY, weights, front=front)).not_in_brain
    # The same word written as a common noun does cover it.
    front = "description: Who helps in the studio, the assistant's rota.\n"
    assert OfflineReader().read(q, _pack("Smart home", BODY, weights, front=front)).citations
