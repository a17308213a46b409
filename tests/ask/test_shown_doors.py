"""Verbatim as the editor shows it, and retired text marked wherever it is shown, through a
real server (the stamp attacks' kit: tests/stampkit.py): brain_ask on the
owner's, a guest's and the secret-URL door, brain_verify on both trusted doors (`/mcp` with
the bearer and `/s/<secret>/mcp`), brain_search and brain_corpus on both trusted doors."""

from __future__ import annotations

import pytest
from serverkit import TOKEN, call
from stampkit import ask_both, own, serving, stamped, verify_both

pytestmark = pytest.mark.slow  # every test here takes 0.3 s or more

ANSWER = "The Heron probe launch is set for Monday 9 March."
QUOTE = "The Heron probe launch is set for Monday 9 March"
# A quote as the editor shows it: one note per class of markup it leaves out.
SHOWN = {
    "shown-footnote": "The Heron probe launch is set for Monday[^1] 9 March.\n\n[^1]: Confirmed by the team.\n",
    "shown-emphasis": "The **Heron probe** launch is set for _Monday_ `9 March`.\n",
    "shown-link": 'The [Heron probe](https://example.org/heron "Heron") launch is set for <https://example.org>.\n'
    "The Heron probe launch is set for [Monday 9 March](https://example.org/d).\n",
    "shown-wikilink": "The [[probes/heron|Heron probe]] launch is set for [[Monday 9 March]].\n",
    "shown-html": 'The <b>Heron probe</b> launch is set for <span class="day">Monday</span> <i>9 March</i>.\n',
}
# Controls: (note, quote) a word dropped, a digit changed, a superscript read as a digit,
# struck text left out; each stays "quote not found".
CONTROLS = {
    "control-dropped": (SHOWN["shown-footnote"], "The Heron probe is set for Monday 9 March"),
    "control-digit": (SHOWN["shown-link"], "The Heron probe launch is set for Monday 19 March"),
    "control-sup": (
        "The Heron probe launch budget is 10<sup>6</sup> euros.\n",
        "The Heron probe launch budget is 106 euros",
    ),
    "control-struck": ("The Heron probe launch is ~~not~~ set for Monday 9 March.\n", QUOTE),
}
BANNER = (
    "# Heron\n\n## Launch date\n\n> **RETRACTED** the date slipped\n\n"
    "The Heron probe launch is set for Monday 9 March.\n\n## Launch date\n\n"
    "The crew is ready. The Heron probe launch is set for Friday 13 March.\n"
)
WAS = (
    'The Heron probe launch is set for Friday 13 March (was: "set for Monday 9 March at the south pad") '
    "at the north pad.\n"
)
OLD_NOTE = "---\nsuperseded_by: notes/retired-successor.md\n---\nThe Heron probe launch is set for Monday 9 March.\n"
SUCCESSOR = "# Launch\n\nThe crew flies in on Thursday.\n\n- The Heron probe launch is set for Friday 13 March\n"
MIXED = (
    '# Mixed\n\nThe Heron probe mixed launch moves to ~~Monday~~ Friday (was: "Sunday"). '
    "<!-- the Heron probe mixed budget -->\n"
)


@pytest.fixture(scope="module")
def doors(tmp_path_factory, stub):
    notes = {f"notes/{name}.md": own(body, name) for name, body in SHOWN.items()}
    notes.update({f"notes/{name}.md": own(body, name) for name, (body, _) in CONTROLS.items()})
    notes["notes/retired-banner.md"] = own(BANNER, "retired-banner")
    notes["notes/retired-was.md"] = own(WAS, "retired-was")
    notes["notes/retired-old.md"] = own(OLD_NOTE, "retired-old")
    notes["notes/retired-successor.md"] = own(SUCCESSOR, "retired-successor")
    notes["notes/retired-mixed.md"] = own(MIXED, "retired-mixed")
    with serving(tmp_path_factory.mktemp("shown"), stub, notes) as urls:
        yield urls


@pytest.mark.parametrize("name", sorted(SHOWN))
def test_a_quote_as_the_editor_shows_it_verifies_on_every_door(doors, stub, name):
    stamped(ask_both(doors, stub, name, QUOTE, ANSWER, secret_door=True), "VERIFIED", "quote found", name)
    stamped(verify_both(doors, f"notes/{name}.md", QUOTE, ANSWER, name), "VERIFIED", "quote found", name)


@pytest.mark.parametrize("name", sorted(CONTROLS))
def test_a_quote_that_adds_drops_or_changes_a_word_is_not_found(doors, stub, name):
    _, quote = CONTROLS[name]
    stamped(ask_both(doors, stub, name, quote, ANSWER, secret_door=True), "UNVERIFIED", "quote not found", name)
    stamped(verify_both(doors, f"notes/{name}.md", quote, ANSWER, name), "UNVERIFIED", "quote not found", name)


def trusted(doors) -> list[tuple[str, str | None]]:
    owner, _, secret = doors
    return [(owner, TOKEN), (secret, None)]


def test_a_search_hit_under_a_banner_says_its_passage_is_retired(doors):
    for url, token in trusted(doors):
        r = call(url, "brain_search", token=token, query=own("Heron probe retired-banner Monday", "retired-banner"))
        assert r.error is None, r.error
        hit = next(h for h in r.data["hits"] if h["path"] == "notes/retired-banner.md")
        assert hit["status"] == "current" and "Monday 9 March" in hit["passage"]
        assert hit["passage_state"] == "retired"
        assert hit["passage_marks"] == [
            {"state": "under a banner", "why": 'under a RETRACTED banner at line 5 (under "Launch date")'}
        ]
        r = call(url, "brain_search", token=token, query=own("Heron probe retired-mixed Friday", "retired-mixed"))
        hit = next(h for h in r.data["hits"] if h["path"] == "notes/retired-mixed.md")
        assert hit["passage_state"] == "partly retired"
        assert [m["state"] for m in hit["passage_marks"]] == ["struck", "old wording", "hidden"]
        assert hit["passage_marks"][1]["current"] == own(
            "The Heron probe mixed launch moves to Friday.", "retired-mixed"
        )


def test_brain_read_says_which_parts_of_a_note_or_section_are_retired(doors):
    for url, token in trusted(doors):
        whole = call(url, "brain_read", token=token, path="notes/retired-banner.md").data
        assert [p["lines"] for p in whole["retired_parts"]] == ["5-7"]
        live = call(url, "brain_read", token=token, path="notes/retired-successor.md").data
        assert "retired_parts" not in live and "retired" not in live
        mixed = call(url, "brain_read", token=token, path="notes/retired-mixed.md", heading="Mixed").data
        assert [p["state"] for p in mixed["retired_parts"]] == ["struck", "old wording", "hidden"]


def test_brain_corpus_says_which_parts_of_a_note_are_retired(doors):
    for url, token in trusted(doors):
        r = call(url, "brain_corpus", token=token, paths=["notes/retired-banner.md", "notes/retired-old.md"])
        assert r.error is None, r.error
        banner, old = r.data["notes"]
        assert banner["retired_parts"] == [
            {
                "lines": "5-7",
                "state": "under a banner",
                "why": 'under a RETRACTED banner at line 5 (under "Launch date")',
            }
        ]
        assert "retired" not in banner
        assert old["retired"].startswith("status: superseded")


def test_a_quote_under_a_banner_names_the_sentence_that_replaced_it(doors, stub):
    name = "retired-banner"
    current = own("The Heron probe launch is set for Friday 13 March.", name)
    said = f'the current version is under "Launch date" (line 11): "{current}"'
    asked = ask_both(doors, stub, name, QUOTE, ANSWER, secret_door=True)
    verified = verify_both(doors, f"notes/{name}.md", QUOTE, ANSWER, name)
    for replies in (asked, verified):
        stamped(replies, "SUPERSEDED", said, name)
    for reply in (asked[0], asked[-1], *verified):  # a guest's reply leaves the quotes out
        assert reply["quotes"][0]["old_claim"] == current


def test_a_was_quote_names_the_current_claim_of_its_unit(doors, stub):
    name, old = "retired-was", "set for Monday 9 March at the south pad"
    current = own("The Heron probe launch is set for Friday 13 March at the north pad.", name)
    asked = ask_both(doors, stub, name, old, ANSWER, secret_door=True)
    verified = verify_both(doors, f"notes/{name}.md", old, ANSWER, name)
    for replies in (asked, verified):
        stamped(replies, "SUPERSEDED", f'the current claim is "{current}"', name)
    for reply in (asked[0], asked[-1], *verified):
        assert reply["quotes"][0]["old_claim"] == current


def test_a_superseded_notes_quote_names_the_successors_passage(doors):
    current = own("The Heron probe launch is set for Friday 13 March", "retired-successor")
    replies = verify_both(doors, "notes/retired-old.md", QUOTE, ANSWER, "retired-old")
    stamped(replies, "SUPERSEDED", f'notes/retired-successor.md says, under "Launch" (line 5): "{current}"', "old")
    for reply in replies:
        assert reply["quotes"][0]["old_claim"] == current
        assert reply["quotes"][0]["superseded_by"] == "notes/retired-successor.md"
