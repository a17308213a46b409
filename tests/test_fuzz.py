"""Fuzzing the pure parts with hypothesis: the note parser, the tokenizer
and the verifier never raise, stay bounded, and stamp deterministically, also
across processes with different hash seeds.

The earlier property tests (test_notes, test_tokenize, test_verify) fuzz with
random text; these add *structured* hostile input: YAML with anchors and aliases,
Markdown with retirement banners, in-place corrections and status frontmatter,
and quotes cut from the note itself (the stamps a run gave are in docs/RELIABILITY.md).
"""

from __future__ import annotations

import datetime as dt
import json
import os
import random
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from reliakit import write_section

from cortex.ask.quotes import check_quote
from cortex.ask.stamps import (
    CORRECTED,
    NOT_IN_BRAIN,
    STRENGTH,
    SUPERSEDED,
    UNVERIFIED,
    VERIFIED,
    QuoteCheck,
    overall_stamp,
)
from cortex.index.tokenize import tokenize
from cortex.notes.note import MAX_FRONTMATTER_BYTES, parse_note
from cortex.tools.paging import jsonable

ROOT = Path(__file__).resolve().parent.parent
TODAY = dt.date(2026, 3, 1)
EXAMPLES = {"parser": 400, "tokenizer": 300, "verifier": 300, "overall": 300}
# What the properties measured as they ran: the examples that held, by property; the stamps
# the verifier gave; the slowest alias bomb; the tokenizer's worst cases; the cross-process
# digest. `_fuzz_figures` writes them to docs/RELIABILITY.md (`make figures`), nothing else.
HELD: Counter[str] = Counter()
STAMPS_GIVEN: Counter[str] = Counter()
SLOWEST_BOMB_S: list[float] = [0.0]
FIGURES: dict[str, str] = {}

# -- YAML frontmatter with anchors and aliases ----------------------------------------

_KEY = st.sampled_from(
    [
        "title",
        "status",
        "tags",
        "valid_until",
        "valid_from",
        "superseded_by",
        "description",
        "decays",
        "a",
        "b",
        "<<",
        "? x",
        "1",
        "null",
        "~",
    ]
)
_SCALAR = st.sampled_from(
    [
        "x",
        "yes",
        "no",
        "null",
        "~",
        "2026-02-30",
        "2026-01-01",
        "12",
        "0x1F",
        "1e400",
        ".nan",
        "'q'",
        '"\\u0000"',
        "!!binary aGk=",
        "!!python/object:os.system x",
        "&a 1",
        "*a",
        "*nope",
        "[",
        "{",
        "|",
        ">-",
        "superseded",
        "RETRACTED",
        "current",
        '"\\ud800"',
        "@at",
        "`tick`",
        "%TAG",
        "---",
        "...",
        "!!timestamp nope",
        "!!float abc",
        "!!int 0xZZ",
        "!!set {a, b}",
        "2026-13-01 10:00:00",
    ]
)


def _yaml_value(depth: int) -> st.SearchStrategy[str]:
    if depth == 0:
        return _SCALAR
    inner = _yaml_value(depth - 1)
    return st.one_of(
        _SCALAR,
        st.lists(inner, max_size=4).map(lambda xs: "[" + ", ".join(xs) + "]"),
        st.lists(st.tuples(_KEY, inner), max_size=3).map(lambda kv: "{" + ", ".join(f"{k}: {v}" for k, v in kv) + "}"),
        st.tuples(st.sampled_from(["a", "b", "c"]), inner).map(lambda t: f"&{t[0]} {t[1]}"),
        st.sampled_from(["a", "b", "c"]).map(lambda n: f"[*{n}, *{n}, *{n}, *{n}, *{n}, *{n}, *{n}, *{n}]"),
    )


_FRONTMATTER = st.lists(st.tuples(_KEY, _yaml_value(3)), max_size=8).map(
    lambda kv: "\n".join(f"{k}: {v}" for k, v in kv)
)
_BODY = st.lists(
    st.sampled_from(list("ab #>*_-`~\n\t:|") + ["SUPERSEDED", '(was: "', '")', "é", "\u200b", "\n---\n"]), max_size=80
).map("".join)


@pytest.mark.slow
@settings(max_examples=EXAMPLES["parser"], deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_FRONTMATTER, _BODY, st.sampled_from(["---\n", "---\r\n", "--- \n"]))
def test_parse_note_never_raises_stays_bounded_and_is_deterministic(front, body, fence):
    text = f"{fence}{front}\n---\n{body}"
    note = parse_note("notes/fuzz.md", text)
    assert parse_note("notes/fuzz.md", text) == note
    assert note.text[note.body_offset :] == note.body
    assert note.status and len(note.status) <= 40 and "\n" not in note.status
    assert all(isinstance(k, str) for k in note.frontmatter)
    # What a reply would carry: the frontmatter as JSON, bounded whatever the aliases.
    encoded = json.dumps(jsonable(note.frontmatter), default=str)
    assert len(encoded) < 50 * MAX_FRONTMATTER_BYTES, len(encoded)
    assert "\n" not in (note.frontmatter_error or "")
    HELD["parser"] += 1


@settings(max_examples=100, deadline=None)
@given(st.integers(2, 12), st.integers(2, 9))
def test_alias_bombs_of_any_shape_are_refused_quickly(levels, fanout):
    lines = ["a0: &a0 [" + ", ".join(['"lol"'] * fanout) + "]"]
    for i in range(1, levels):
        lines.append(f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * fanout) + "]")
    started = time.perf_counter()
    note = parse_note("notes/bomb.md", "---\n" + "\n".join(lines) + "\n---\nbody\n")
    took = time.perf_counter() - started
    encoded = json.dumps(jsonable(note.frontmatter), default=str)
    # Refused before expanding: what is kept stays small whatever the bomb's size
    # (the time a bomb costs is measured in the bench, not bounded here).
    assert len(encoded) < 200_000
    expanded = sum(fanout**i for i in range(1, levels + 1))
    if expanded > 10_000:
        assert note.frontmatter == {} and "was not parsed" in note.frontmatter_error
    assert len(encoded) < 200_000
    HELD["alias bombs"] += 1
    SLOWEST_BOMB_S[0] = max(SLOWEST_BOMB_S[0], took)


# -- the tokenizer ---------------------------------------------------------------------

_MD_PIECES = st.sampled_from(
    [
        "# ",
        "## ",
        "- ",
        "* ",
        "1. ",
        "> ",
        "```\n",
        "`",
        "**",
        "_",
        "~~",
        "[",
        "](",
        ")",
        "<",
        ">",
        "\n",
        " ",
        "https://example.org/a?b=c&d=e#f",
        "owner@example.org",
        "C++",
        "C#",
        ".NET",
        "node.js",
        "v1.2.3",
        "10⁶",
        "½",
        "ﬁ",
        "café",
        "cafe\u0301",
        "İstanbul",
        "ß",
        "東京都",
        "한국어",
        "ไทย",
        "مرحبا",
        "😀👍🏽",
        "\u200b",
        "\u202e",
        "\ufeff",
        "e\u0301\u0301\u0301",
        "x" * 300,
        "2026-03-01",
        "10:30",
        "1,240",
        "a_b-c",
        "---",
        "|a|b|",
    ]
)


@settings(max_examples=EXAMPLES["tokenizer"], deadline=None)
@given(st.lists(_MD_PIECES, max_size=80))
def test_tokenize_markdown_soup_never_raises_and_is_deterministic(pieces):
    text = "".join(pieces)
    terms = tokenize(text)
    assert terms == tokenize(text)
    assert all(isinstance(t, str) and t and not t.isspace() for t in terms)
    HELD["tokenizer"] += 1


def test_tokenize_stays_fast_on_pathological_input():
    """Measured on the development machine: well under a second each for 200 KB inputs."""
    rng = random.Random(8)
    cases = {
        "one 200 KB word": "a" * 200_000,
        "200 KB of marks": "e" + "\u0301" * 200_000,
        "200 KB of punctuation": "".join(rng.choice("*_`[]()<>#!.-") for _ in range(200_000)),
        "8,000 URLs": " ".join("https://x.example/p?q=1" for _ in range(8_000)),
    }
    times = {}
    for name, text in cases.items():
        started = time.perf_counter()
        tokenize(text)
        times[name] = time.perf_counter() - started
        assert times[name] < 5.0, (name, times[name])
    FIGURES["tokenizer worst case"] = ", ".join(f"{k}: {v * 1000:.0f} ms" for k, v in times.items())


# -- the verifier -------------------------------------------------------------------------

_WORDS = [
    "tomatoes",
    "grow",
    "in",
    "the",
    "south",
    "bed",
    "router",
    "admin",
    "page",
    "moved",
    "to",
    "port",
    "8080",
    "2026",
    "budget",
    "was",
    "approved",
    "by",
    "Maria",
    "on",
    "Monday",
    "café",
    "10⁶",
    "“quoted”",
]
_SENTENCE = st.lists(st.sampled_from(_WORDS), min_size=3, max_size=14).map(" ".join)
_BLOCK = st.one_of(
    _SENTENCE,
    _SENTENCE.map(lambda s: "- " + s),
    _SENTENCE.map(lambda s: "> " + s),
    st.tuples(_SENTENCE, _SENTENCE).map(lambda t: f'{t[0]} (was: "{t[1]}")'),
    st.sampled_from(
        [
            "> **SUPERSEDED** by the new plan",
            "> **RETRACTED**",
            "## SUPERSEDED: the old plan",
            "## Plan",
            "### Detail",
            "```\ncode block\n```",
            "---",
            "| a | b |\n|---|---|\n| 1 | 2 |",
        ]
    ),
)
_FRONT = st.sampled_from(
    [
        "",
        "---\nstatus: superseded\nsuperseded_by: notes/new.md\n---\n",
        "---\nstatus: retracted\n---\n",
        "---\nvalid_until: 2026-01-01\n---\n",
        "---\nvalid_until: 2027-01-01\n---\n",
        "---\nstatus: draft\n---\n",
        "---\na: &a [*a]\n---\n",
    ]
)
_NOTE = st.tuples(_FRONT, st.lists(_BLOCK, min_size=1, max_size=8)).map(lambda t: t[0] + "\n\n".join(t[1]) + "\n")


@pytest.mark.slow
@settings(max_examples=EXAMPLES["verifier"], deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_NOTE, st.data())
def test_check_quote_on_structured_notes_never_raises_and_is_deterministic(text, data):
    note = parse_note("notes/fuzz.md", text)
    other = parse_note("notes/other.md", text[::-1])
    pack = {"t1": note, "t2": other}
    start = data.draw(st.integers(0, max(0, len(text) - 1)))
    end = data.draw(st.integers(start, len(text)))
    quote = data.draw(st.one_of(st.just(text[start:end]), _SENTENCE, st.text(max_size=40)))
    first = check_quote(quote, note, pack, TODAY)
    assert first.stamp in (VERIFIED, CORRECTED, SUPERSEDED, UNVERIFIED)
    assert first.reason and "\n" not in first.reason
    assert check_quote(quote, note, pack, TODAY) == first
    # The same quote against a note that is not in the pack can never verify.
    assert check_quote(quote, None, pack, TODAY).stamp == UNVERIFIED
    if note.is_retired(TODAY):
        assert first.stamp in (SUPERSEDED, UNVERIFIED)
    HELD["verifier"] += 1
    STAMPS_GIVEN[first.stamp] += 1


_CHECK = st.builds(
    lambda s: QuoteCheck(s, f"because {s}", "notes/x.md"),
    st.sampled_from([VERIFIED, CORRECTED, SUPERSEDED, UNVERIFIED, NOT_IN_BRAIN, "BOGUS"]),
)


@pytest.mark.slow
@settings(max_examples=EXAMPLES["overall"], deadline=None)
@given(st.lists(_CHECK, max_size=6), st.booleans(), st.one_of(st.integers(-3, 50), st.none()), st.randoms())
def test_overall_stamp_is_the_weakest_and_order_free(checks, claimed, unread, rnd):
    stamp, reason = overall_stamp(checks, claimed, unread)  # type: ignore[arg-type]
    assert (stamp, reason) == overall_stamp(list(checks), claimed, unread)  # type: ignore[arg-type]
    assert "\n" not in reason
    shuffled = list(checks)
    rnd.shuffle(shuffled)
    assert overall_stamp(shuffled, claimed, unread)[0] == stamp  # type: ignore[arg-type]
    if checks:
        known = [c.stamp if c.stamp in (VERIFIED, CORRECTED, SUPERSEDED) else UNVERIFIED for c in checks]
        assert stamp == min(known, key=lambda s: STRENGTH[s])
    else:
        assert stamp == (NOT_IN_BRAIN if claimed and unread == 0 else UNVERIFIED)
    HELD["overall"] += 1


# -- determinism across processes -----------------------------------------------------------

_DIGEST_SCRIPT = r"""
import datetime as dt, hashlib, json, random, sys
sys.path.insert(0, sys.argv[1])
from cortex.notes.note import parse_note
from cortex.index.tokenize import tokenize
from cortex.ask.quotes import check_quote
from cortex.ask.stamps import overall_stamp
rng = random.Random(20260301)
words = %r
blocks = ['> **SUPERSEDED** by x', '## SUPERSEDED: old', '## Plan', '- item', '> quoted']
out = []
for n in range(400):
    paras = []
    for _ in range(rng.randint(1, 6)):
        s = ' '.join(rng.choice(words) for _ in range(rng.randint(3, 12)))
        paras.append(rng.choice([s, '- ' + s, s + ' (was: "' + s[::-1] + '")', rng.choice(blocks)]))
    front = rng.choice(['', '---\nstatus: superseded\n---\n', '---\nvalid_until: 2026-01-01\ntags: [a, b]\n---\n'])
    text = front + '\n\n'.join(paras) + '\n'
    note = parse_note('n.md', text)
    i = rng.randrange(len(text)); j = rng.randrange(i, len(text) + 1)
    c = check_quote(text[i:j], note, {'t': note}, dt.date(2026, 3, 1))
    out.append([c.stamp, c.reason, tokenize(text), note.status, sorted(note.frontmatter)])
    out.append(list(overall_stamp([c, c], False, 0)))
print(hashlib.sha256(json.dumps(out, ensure_ascii=False).encode()).hexdigest())
""" % (_WORDS,)  # noqa: UP031 - the template is Python source full of braces: % needs no escaping


@pytest.mark.slow
def test_stamps_and_terms_are_identical_across_hash_seeds():
    """Sets and dicts iterate in hash order; a stamp or a term list must never depend on it."""
    digests = {}
    for seed in ("0", "1", "4242"):
        env = dict(os.environ, PYTHONHASHSEED=seed)
        r = subprocess.run(
            [sys.executable, "-c", _DIGEST_SCRIPT, str(ROOT)],
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
            check=True,
        )
        digests[seed] = r.stdout.strip()
    assert len(set(digests.values())) == 1, digests
    FIGURES["cross-process"] = (
        f"400 notes, quotes and stamps hashed under PYTHONHASHSEED 0, 1, 4242: identical ({digests['0'][:12]})"
    )


@pytest.fixture(scope="module", autouse=True)
def _fuzz_figures(request):
    """Once this module's tests are done: the figures they measured, as the fuzz section of
    docs/RELIABILITY.md (only with CORTEX_FIGURES=1, see `reliakit.write_section`). Nothing is
    written when one of them failed, and a property that did not run gets no row."""
    failed_before = request.session.testsfailed
    yield
    if request.session.testsfailed > failed_before:
        return
    stamps = ", ".join(f"{s} {STAMPS_GIVEN[s]}" for s in (VERIFIED, CORRECTED, SUPERSEDED, UNVERIFIED))
    rows = [
        (
            "note parser: structured YAML (anchors, aliases, tags, dates) + Markdown bodies",
            HELD["parser"],
            "no exception; deterministic; body offset exact; frontmatter JSON bounded",
        ),
        (
            "note parser: alias bombs, 2-12 levels x fan-out 2-9",
            HELD["alias bombs"],
            f"refused past 10,000 values; the slowest took {SLOWEST_BOMB_S[0] * 1000:.0f} ms",
        ),
        (
            "tokenizer: Markdown soup (URLs, CJK, RTL, combining marks, emoji)",
            HELD["tokenizer"],
            "no exception; deterministic; no empty term",
        ),
        (
            "verifier: check_quote on notes with banners, (was: …), status and validity frontmatter",
            HELD["verifier"],
            f"no exception; deterministic; retired notes never VERIFIED; stamps given: {stamps}",
        ),
        ("verifier: overall_stamp", HELD["overall"], "the weakest stamp; independent of order"),
    ]
    table = [f"| {target} | {n} examples | {result} |" for target, n, result in rows if n]
    if "tokenizer worst case" in FIGURES:
        table.append(f"| tokenizer: 200 KB pathological inputs | 4 inputs | {FIGURES['tokenizer worst case']} |")
    if "cross-process" in FIGURES:
        table.append(f"| across processes | 3 hash seeds | {FIGURES['cross-process']} |")
    if not table:
        return
    write_section(
        "fuzz",
        "Fuzzing: parser, tokenizer, verifier",
        """
Hypothesis properties in `tests/test_fuzz.py`, on top of the random-text properties in
`tests/notes/test_notes.py`, `tests/index/test_tokenize.py` and `tests/ask/test_verify.py`.
Examples are those that ran and held; a result is what the test asserted of each.

| target | examples | result |
|---|---|---|
"""
        + "\n".join(table)
        + "\n",
    )
