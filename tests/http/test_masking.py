"""Credential-shaped text never leaves the server: every shape, through every tool and console page,
on the owner's and the guest's door, wherever the text is cut (corpus parts, the profile cut, passages).

The secrets are built by concatenation so no credential-shaped literal sits in the repository.
"""

from __future__ import annotations

import asyncio
import json
import re

import pytest
from consolekit import owner
from hypothesis import given, settings
from hypothesis import strategies as st
from serverkit import acall, client

from cortex.brain.trailers import Actor
from cortex.notes.redact import PATTERNS, mask, might_hold_secret, redact

OWNER = Actor(door="owner", tool="brain_write", client="test")
A = "Q7w8E9r0T1y2U3i4O5p6A7s8D9f0G1h2"  # 32 letters and digits

SHAPES = {
    "anthropic": "sk-ant-api03-" + A,
    "github": "ghp_" + A[: 36 - 4] + "abcd",
    "aws access": "AKIA" + "ABCDEFGHIJ234567",
    "aws session": "ASIA" + "QWERTYUIOP765432",
    "aws secret": "aws_secret_access_key = " + "wJalrXUtnFEMI/K7MDENG/bPxRfiCY" + "EXAMPLEKEY",
    "basic auth": "Authorization: Basic " + "dXNlcjpwYXNzd29yZC1sb25n",
    "stripe": "sk_" + "live_" + A[:24],
    "stripe restricted": "rk_" + "live_" + A[:24],
    "slack webhook": "https://hooks.slack.com/" + "services/T0000AAAA/B0000BBBB/" + A[:24],
    "huggingface": "hf_" + A,
    "npm": "npm_" + A[:30] + "zz",
    "sendgrid": "SG." + A[:22] + "." + A[:32] + "xyz",
    "azure": "AccountKey=" + A + "+/==",
    "pgp": "-----BEGIN PGP PRIVATE KEY BLOCK-----\n" + A + "\n-----END PGP PRIVATE KEY BLOCK-----",
}


def secret_parts(secret: str) -> list[str]:
    """The distinctive runs of a secret: any one of them in a reply is a leak, cut or not."""
    core = re.sub(r"^(Authorization: Basic |aws_secret_access_key = |AccountKey=)", "", secret)
    core = core.replace("-----BEGIN PGP PRIVATE KEY BLOCK-----\n", "")
    return [core[i : i + 12] for i in range(0, max(1, len(core) - 12), 6)]


@pytest.mark.parametrize("name", sorted(SHAPES))
def test_each_shape_is_masked_alone_and_inside_text(name):
    secret = SHAPES[name]
    # Alone, in a sentence, in brackets, and glued to a variable name by '_' (as GITHUB_TOKEN_ghp_…).
    for text in (secret, f"token: {secret} end", f"({secret})", f"GITHUB_TOKEN_{secret}"):
        out = redact(text)
        assert "[REDACTED" in out and not any(part in out for part in secret_parts(secret)), (name, out)


def test_prose_is_left_alone():
    prose = "A basic understanding of bearer bonds; the task at hand is skiing. SG. is a city code."
    assert redact(prose) == prose


# Pieces a credential is made of (each shape, its prefixes and odd casings) and of prose,
# including characters whose case folding meets ASCII (a Kelvin sign, a dotted capital I).
OTHER_SHAPES = [
    "eyJ" + A[:10] + ".eyJ" + A[:10] + "." + A[:10],  # JWT
    "Bearer " + A,
    "github_pat_" + A,
    "xoxb-" + A[:12],
    "AIza" + A,
    "glpat-" + A[:24],
    "aws_session_token: " + A,
    "SharedAccessKey=" + A,
    "x?api_key=" + A[:8],
    "a&Password=" + A[:8],
    "?sig=" + A[:8],
    "https://user:" + A[:8] + "@host.example",
    "sk-proj-" + A,
    # ignore-case patterns meet letters whose lower() is not ASCII: long s, dotted I, dotless i
    "aws_\u017fecret_access_key = " + A,
    "Author\u0130zation: Basic " + A,
    "?s\u0131g=" + A[:8],
]
PIECES = [
    s for secret in [*SHAPES.values(), *OTHER_SHAPES] for s in (secret, secret[:6], secret.upper(), secret.lower())
] + [
    "Bearer ",
    "bEaReR ",
    "?token=",
    "&Sig=",
    "https://",
    "user:pw@",
    "authorization: basic ",
    "eyJ",
    ".eyJ",
    "\u212a",
    "\u0130",
    "\u017f",
    "\u0131",
    "\u2026",
    " ",
    "_",
    "\n",
]


NO_BACKSLASH = st.text(alphabet=st.characters(blacklist_characters="\\"), max_size=12)


def redact_every_pass(text: str) -> str:
    """Every pattern over every string: what redact did before its cheap first test (on text
    with no backslash, where there is no JSON escape to read through)."""
    for label, pattern in PATTERNS:
        text = pattern.sub(f"[REDACTED {label}]", text)
    return text


@pytest.mark.parametrize("piece", PIECES)
def test_the_cheap_first_test_passes_every_shape_on(piece):
    for text in (piece, f"see {piece} here", f"GITHUB_TOKEN_{piece}"):
        assert redact(text) == redact_every_pass(text)
        assert might_hold_secret(text) or redact_every_pass(text) == text


@pytest.mark.slow
@settings(max_examples=400, deadline=None)
@given(st.lists(st.one_of(st.sampled_from(PIECES), NO_BACKSLASH), max_size=12))
def test_the_cheap_first_test_never_skips_a_secret(pieces):
    text = "".join(pieces)
    assert redact(text) == redact_every_pass(text)
    assert might_hold_secret(text) or redact_every_pass(text) == text


def serialized(text: str, ascii_only: bool = False) -> str:
    """`text` as a JSON document holds it, the way the boot prompt embeds brain_context's reply."""
    return json.dumps({"recent_log": [text]}, ensure_ascii=ascii_only, indent=1)


def hidden(text: str) -> set[str]:
    """The runs of letters and digits (6 or more) that masking `text` takes out of it."""
    shown = redact(text)
    return {run for run in re.findall(r"[A-Za-z0-9]{6,}", text) if run not in shown}


def assert_masked_as_its_string(text: str, ascii_only: bool = False) -> None:
    """Masking `text` serialized hides all that masking `text` hides, and leaves valid JSON. (It
    may hide a little more: a URL credential read as written runs on past a `\\n`.)"""
    masked = redact(serialized(text, ascii_only))
    (shown,) = json.loads(masked)["recent_log"]
    assert not {run for run in hidden(text) if run in shown}, (text, shown)


def test_serialized_text_is_masked_as_its_strings_are():
    """The boot prompt showed a log entry's `aws_secret_access_key = "…"` (its quote escaped)
    and a key at a line's start (glued to the `n` of `\\n`) whole."""
    for secret in [*SHAPES.values(), *OTHER_SHAPES]:
        for text in (
            f'key = "{secret}"',
            f"first line\n{secret}\nlast",
            f"\t{secret}\t",
            f"a\\{secret}",
            f"é\n{secret}",
        ):
            assert hidden(text), text
            assert_masked_as_its_string(text)
            assert_masked_as_its_string(text, ascii_only=True)
    text = 'aws_secret_access_key = "' + SHAPES["aws secret"].split()[-1] + '"'
    assert json.loads(redact(serialized(text))) == {"recent_log": [redact(text)]}  # no more than that here


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(st.sampled_from(PIECES), st.text(max_size=12)), max_size=12))
def test_a_serialized_text_is_masked_as_its_string(pieces):
    text = "".join(pieces)
    assert_masked_as_its_string(text)
    assert might_hold_secret(serialized(text)) or not might_hold_secret(text)  # the cheap test stays sound


def test_keys_are_masked_as_well_as_values():
    key = SHAPES["github"]
    assert mask({key: "x", "ok": [key]}) == {"[REDACTED API key]": "x", "ok": ["[REDACTED API key]"]}


def leaks(text: str) -> list[str]:
    return [name for name, secret in SHAPES.items() if any(part in text for part in secret_parts(secret))]


@pytest.mark.slow
def test_every_tool_and_page_on_both_doors_masks_every_shape(gserver):
    brain = gserver.brain
    body = "\n\n".join(f"{name}: {secret} and MY_SECRET_{secret}" for name, secret in SHAPES.items())
    fm_key = SHAPES["github"]
    brain.write(
        "notes/public/keys.md",
        "create",
        OWNER,
        content=(
            f"---\ntitle: Keys\n{fm_key}: frontmatter key\nstatus: superseded\n"
            f"superseded_by: notes/public/{SHAPES['huggingface']}.md\n---\n# Keys\n\n{body}\n"
        ),
    )
    brain.write(f"notes/public/{SHAPES['huggingface']}.md", "create", OWNER, content="# The new keys\n")
    # A passage cut at 400 characters, a profile cut at 6,000 bytes, a corpus part boundary:
    # each lands inside a secret.
    stripe = SHAPES["stripe"]
    brain.write(
        "notes/public/passage.md",
        "create",
        OWNER,
        content="# Passage\n\nwidget " + "w" * 385 + " " + stripe + " widget tail\n",
    )
    brain.write("profile.md", "replace", OWNER, content="# Profile\n\n" + "p" * (6_000 - 20) + " " + stripe + "\n")
    brain.write(
        "notes/public/big.md",
        "create",
        OWNER,
        content="# Big\n\n" + "b" * (98_000 - 20) + " " + stripe + "\n" + "c" * 60_000 + "\n",
    )
    guest = gserver.guest("masker", ["notes/public/"], daily_asks=100, daily_proposals=100)

    async def owner_calls() -> list[str]:
        out = []
        async with client(gserver.owner) as c:
            for path in ["notes/public/keys.md", "notes/public/passage.md", "profile.md", "notes/public/big.md"]:
                out.append((await acall(c, "brain_read", path=path)).text)
            for query in ["keys live", "widget", "stripe huggingface"]:
                out.append((await acall(c, "brain_search", query=query)).text)
            out.append((await acall(c, "brain_context")).text)
            out.append((await acall(c, "brain_history")).text)
            out.append((await acall(c, "brain_ask", question="What are the keys?")).text)
            after = None
            for _ in range(20):
                page = await acall(c, "brain_corpus", **({"after": after} if after else {}))
                out.append(page.text)
                after = page.data.get("next")
                if not after:
                    break
            out.append((await acall(c, "brain_proposals")).text)
        async with client(guest.url, token=None) as c:
            out.append((await acall(c, "brain_ask", question="What are the keys?")).text)
            out.append(
                (
                    await acall(
                        c, "brain_propose", path="notes/public/new.md", mode="create", content="# New\n\n" + body
                    )
                ).text
            )
        async with client(gserver.owner) as c:
            out.append((await acall(c, "brain_proposals")).text)
        return out

    replies = asyncio.run(owner_calls())
    for i, text in enumerate(replies):
        assert not leaks(text), (i, leaks(text), text[:300])
    assert any("REDACTED" in t for t in replies)

    console = owner(gserver.url)
    head = brain.store.head()
    pages = [
        "/console/notes",
        "/console/notes?dir=notes/public",
        "/console/note/notes/public/keys.md",
        "/console/note/profile.md",
        "/console/note/notes/public/big.md",
        "/console/activity",
        f"/console/commit/{head}",
        "/console/proposals",
        "/console/guests",
    ]
    pages += [f"/console/proposals/{p.id}" for p in gserver.queue.open()]
    for page in pages:
        r = console.get(page)
        assert r.status_code == 200, page
        assert not leaks(r.text), (page, leaks(r.text))
