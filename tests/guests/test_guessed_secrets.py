"""A guest cannot confirm a guessed credential: masked text is never searched, counted,
ranked, read or quoted for a guest, so a right guess and a wrong one get the same reply
but for the guess itself. The owner still finds and quotes their own text.

Over real HTTP with the MCP SDK's client, a real redis-server and a real Git brain; the
meaning arm is off so that the replies are lexical and the test compares them exactly (the
arm's side is tests/meaning/test_meaning.py). Secrets are built by concatenation so no
credential-shaped literal sits in the repository.
"""

from __future__ import annotations

import json
import re

import pytest
from guestkit import Clock, start_guest_server
from serverkit import call

from cortex.brain.trailers import Actor
from cortex.index.tokenize import tokenize

OWNER = Actor(door="owner", tool="brain_write", client="test")
TAIL = "Q7w8E9r0T1y2U3i4O5p6A7s8D9f0G1h"


def _other(secret: str) -> str:
    """A wrong guess of the same shape: the last character changed."""
    return secret[:-1] + ("3" if secret[-1] != "3" else "4")


# name: (the note's text with {secret} in it, the secret, what the guest guesses of it, the
# guest's question with {guess}). An API key's prefix is masked in any reply, the question's
# echo included, so its guess is the rest of the key, which no shape masks on its own.
SHAPES = {
    "URL token": (
        "The seed order feed is at https://seeds.example/feed?token={secret} and refreshes daily.",
        "tulip" + "4821",
        "tulip" + "4821",
        "Is the seed order feed token {guess}?",
    ),
    "API key": (
        "The greenhouse sensor API key is {secret} for the climate box.",
        "sk-ant-" + "api03-" + TAIL + "2",
        TAIL + "2",
        "Does the greenhouse sensor API key end in {guess}?",
    ),
    "GitHub token": (
        "The allotment site repository deploys with {secret} from the shed laptop.",
        "ghp_" + TAIL + "abcde",
        TAIL + "abcde",
        "Does the allotment site repository deploy with a token ending {guess}?",
    ),
    "secret setting": (
        "The irrigation cloud account:\n\naws_secret_access_key: {secret}\n",
        "wJalrXUtnFEMI" + "K7MDENGbPxRfiCY" + "EXAMPLEKEY",
        "wJalrXUtnFEMI" + "K7MDENGbPxRfiCY" + "EXAMPLEKEY",
        "Is the irrigation aws_secret_access_key {guess}?",
    ),
    "URL password": (
        "The compost log is pushed to https://deploy:{secret}@git.example/compost.git nightly.",
        "hunter2" + "compost9",
        "hunter2" + "compost9",
        "Is the compost log deploy password {guess}?",
    ),
    "bearer header": (
        "The weather station answers when sent Authorization: Bearer {secret} by the hub.",
        "wx7Q9fLm2Kp4" + "Zt8Rv3Nc",
        "wx7Q9fLm2Kp4" + "Zt8Rv3Nc",
        "Does the weather station answer to bearer {guess}?",
    ),
}
NOTES = {
    "notes/public/garden.md": "# Garden\n\nTomatoes grow in the south bed; the shed holds the laptop.\n",
    "notes/public/weather.md": "# Weather\n\nThe hub reads the weather station every hour.\n",
    **{
        f"notes/public/{re.sub('[^a-z]+', '-', name.lower())}.md": f"# {name.title()}\n\n{text.format(secret=secret)}\n"
        for name, (text, secret, _, _) in SHAPES.items()
    },
}


@pytest.fixture
def lexical(tmp_path, brain_path, redis_proc):
    server = start_guest_server(tmp_path, brain_path, redis_proc, Clock(), CORTEX_MEANING="off")
    for path, text in NOTES.items():
        server.brain.write(path, "create", OWNER, content=text)
    yield server
    server.stop()


def _but_guesses(right: dict, wrong: dict, right_guess: str, wrong_guess: str) -> tuple[str, str]:
    """Both replies as JSON, with the guesses left out: whole, and each word of them that
    differs (in any letter case: the coverage line lists the words lowered)."""
    words = zip(tokenize(right_guess), tokenize(wrong_guess), strict=False)
    pairs = [(right_guess, wrong_guess)] + [(a, b) for a, b in words if a != b]
    texts = [json.dumps(right, sort_keys=True), json.dumps(wrong, sort_keys=True)]
    for i, pair in sorted(enumerate(pairs), key=lambda x: -len(x[1][0])):
        texts = [
            re.sub(re.escape(word), f"<guess {i}>", text, flags=re.IGNORECASE)
            for word, text in zip(pair, texts, strict=True)
        ]
    return texts[0], texts[1]


@pytest.mark.slow
@pytest.mark.parametrize("citations", [False, True])
def test_a_right_and_a_wrong_guess_get_the_same_reply(lexical, citations):
    guest = lexical.guest("guesser", ["notes/public/"], daily_asks=1000, citations=citations)
    for name, (_, _, part, question) in SHAPES.items():
        replies = []
        for guess in (part, _other(part)):
            r = call(guest.url, "brain_ask", token=None, question=question.format(guess=guess))
            assert r.error is None, (name, r.error)
            replies.append(r.data)
        right, wrong = _but_guesses(*replies, part, _other(part))
        assert right == wrong, (name, right, wrong)
        assert not re.findall(r"<guess \d+>: [1-9]", right), (name, right)


@pytest.mark.slow
def test_the_owner_still_finds_counts_and_quotes_the_text(lexical):
    _, secret, _, question = SHAPES["URL token"]
    found = call(lexical.owner, "brain_search", query=secret)
    assert [h["path"] for h in found.data["hits"]] == ["notes/public/url-token.md"]
    asked = call(lexical.owner, "brain_ask", question=question.format(guess=secret))
    assert f"{secret}: 1 note" in asked.data["coverage"]
    assert asked.data["stamp"] == "VERIFIED"
    assert asked.data["quotes"][0]["path"] == "notes/public/url-token.md"
    # The guest asking the same is not answered: the token is masked for it. (The question's
    # other words come close to the note, so since issue 41 the miss names it as a lead; a
    # right and a wrong guess still get the same reply, above.)
    guest = lexical.guest("guesser", ["notes/public/"], daily_asks=10)
    told = call(guest.url, "brain_ask", token=None, question=question.format(guess=secret))
    assert f"{secret}: 0 notes" in told.data["coverage"] and told.data["stamp"] in ("NOT IN BRAIN", "UNVERIFIED")
    assert told.data["stamp_reason"].startswith("not found in your notes") or told.data["stamp"] == "NOT IN BRAIN"
