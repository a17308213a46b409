"""Claims, not only specifics, attacked through a real server: an answer that keeps its
quote's words and every specific, yet says the opposite, is never VERIFIED.

One case a class (polarity, comparison, ordinal, range, quantifier, roles, table column,
sign): a note, the quotes a reader copies from it, an answer that contradicts them and
one that says the same in other words. Each answer is stamped four ways: by brain_ask
with the real `anthropic` SDK as the reader against a local stub that answers what the
test scripts, on the owner's bearer door (`/mcp`) and on the secret-URL door
(`/s/<secret>/mcp`), and by brain_verify on both doors.
"""

from __future__ import annotations

import pytest
from serverkit import TOKEN, URL_SECRET, RunningServer, call, make_settings

from cortex.app.brain_setup import init_brain
from cortex.app.server import assemble, make_app
from cortex.brain.trailers import Actor

pytestmark = pytest.mark.slow  # every test here takes 0.3 s or more

ME = Actor("owner", "brain_write", "pytest")

# class: (note, quotes, contradicting answer, the reason's words, faithful answer)
CASES = {
    "polarity": (
        "## Travel insurance\n\nThe Alpina policy does not cover skiing or snowboarding.\n",
        ["The Alpina policy does not cover skiing or snowboarding"],
        "The Alpina policy covers skiing.",
        "the answer says 'covers'; the quote says 'does not cover'",
        "Skiing or snowboarding isn't covered by the Alpina policy.",
    ),
    "comparison": (
        "## Flights\n\nChecked bags over 23 kg pay a €60 surcharge.\n",
        ["Checked bags over 23 kg pay a €60 surcharge"],
        "Checked bags under 23 kg pay a €60 surcharge.",
        "the answer says 'under 23 kg'; the quote says 'over 23 kg'",
        "Checked bags heavier than 23 kg pay a €60 surcharge.",
    ),
    "ordinal": (
        "## Book club\n\nThe book club meets on the third Thursday of every month.\n",
        ["The book club meets on the third Thursday of every month"],
        "The book club meets on the first Thursday of every month.",
        "the answer says 'first Thursday'; the quote says 'third Thursday'",
        "The book club meets on the third Thursday of each month.",
    ),
    "range": (
        "## App\n\nThe Tidewater app supports iOS 16 to 17.\n",
        ["The Tidewater app supports iOS 16 to 17"],
        "The Tidewater app supports iOS 16 and later.",
        "the answer says '16 and later'; the quote says '16 to 17'",
        "The Tidewater app supports iOS 16 through 17.",
    ),
    "quantifier": (
        "## Bike shop\n\nAll members get 10% off at the Quay bike shop.\n",
        ["All members get 10% off at the Quay bike shop"],
        "Some members get 10% off at the Quay bike shop.",
        "the answer says 'Some members'; the quote says 'All members'",
        "Every member gets 10% off at the Quay bike shop.",
    ),
    "roles": (
        "## Chores\n\n- Ana walks the dog and Ben feeds the cat.\n- Rosa waters the plants.\n",
        ["Ana walks the dog and Ben feeds the cat", "Rosa waters the plants"],
        "Ben walks the dog and Ana feeds the cat.",
        "the answer says 'Ben walks the dog'; the quote says 'Ana walks the dog'",
        "Ana walks the dog; Ben feeds the cat.",
    ),
    "column": (
        "## Kiosk prices\n\n| item | old price | new price |\n|---|---|---|\n| filter coffee at the kiosk | €3 | €4 |\n",
        ["| filter coffee at the kiosk | €3 | €4 |"],
        "Filter coffee at the kiosk costs €3.",
        "the answer says '€3'; the quote holds it only in the table's 'old price' column, a retired value",
        "Filter coffee at the kiosk: old price €3, new price €4.",
    ),
    "sign": (
        "## Hives\n\nKeep the hive wraps on until nights stay above −5 °C.\n",
        ["Keep the hive wraps on until nights stay above −5 °C"],
        "Keep the hive wraps on until nights stay above 5 °C.",
        "the quote says 'above -5 °C'",
        "Keep the hive wraps on until nights stay above minus 5 °C.",
    ),
}


@pytest.fixture(scope="module")
def doors(tmp_path_factory, stub):
    """(bearer door URL, secret-URL door URL) of one server whose reader is the stub."""
    tmp = tmp_path_factory.mktemp("claims")
    path = tmp / "brain.git"
    init_brain(path, bare=True)
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("ANTHROPIC_BASE_URL", stub.url)  # the SDK reads it from the environment
        parts = assemble(make_settings(tmp, path, env={"ANTHROPIC_API_KEY": "sk-test-stub", "CORTEX_MEANING": "off"}))
        for name, (note, *_) in CASES.items():
            parts.brain.write(f"notes/{name}.md", "create", ME, content=note)
        with RunningServer(make_app(parts), parts.settings) as running:
            yield f"{running.url}/mcp", f"{running.url}/s/{URL_SECRET}/mcp"


def stamped(doors, stub, name: str, answer: str, which: str) -> list[dict]:
    """`answer` stamped by brain_ask (the stub citing the case's quotes) and by brain_verify,
    on both trusted doors. `which` keeps the two answers of a case apart in the answer cache."""
    _, quotes, *_ = CASES[name]
    path = f"notes/{name}.md"
    stub.script = (answer, path, quotes)
    replies = []
    for url, token in ((doors[0], TOKEN), (doors[1], None)):
        # The quote as the question: retrieval finds the note, and the attack is on the stamp.
        asked = call(url, "brain_ask", token=token, question=f"{quotes[0]}? ({which}, {token is None})")
        assert asked.error is None, asked.error
        checked = call(
            url, "brain_verify", token=token, answer=answer, citations=[{"path": path, "quote": q} for q in quotes]
        )
        assert checked.error is None, checked.error
        replies += [asked.data, checked.data]
    return replies


@pytest.mark.parametrize("name", sorted(CASES))
def test_an_answer_that_contradicts_its_quote_is_never_verified(doors, stub, name):
    _, _, answer, reason, _ = CASES[name]
    for reply in stamped(doors, stub, name, answer, "contradiction"):
        assert reply["stamp"] == "UNVERIFIED", (name, reply["stamp"], reply["stamp_reason"])
        assert reason in reply["stamp_reason"], (name, reply["stamp_reason"])


@pytest.mark.parametrize("name", sorted(CASES))
def test_an_answer_that_says_the_same_in_other_words_stays_verified(doors, stub, name):
    *_, faithful = CASES[name]
    for reply in stamped(doors, stub, name, faithful, "faithful"):
        assert reply["stamp"] == "VERIFIED", (name, reply["stamp"], reply["stamp_reason"])
