"""The note parser: frontmatter, status and retirement, without I/O."""

from __future__ import annotations

import datetime as dt

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

from cortex.notes.note import fast_frontmatter, parse_note

TODAY = dt.date(2026, 11, 30)


def test_status_superseded_by_and_validity():
    n = parse_note("notes/a.md", "---\ntitle: A\nstatus: superseded\nsuperseded_by: notes/b.md\n---\nbody\n")
    assert n.retired_reason(TODAY) == "status: superseded (superseded by notes/b.md)"
    n = parse_note("notes/a.md", "---\nvalid_until: 2026-01-01\n---\nbody\n")
    assert "has passed" in n.retired_reason(TODAY)
    n = parse_note("notes/a.md", "---\nvalid_until: 2027-01-01\nvalid_from: 2026-12-01\n---\nbody\n")
    assert n.retired_reason(TODAY) is None and not n.valid_on(TODAY)


def test_title_falls_back_to_first_heading_then_file_name():
    assert parse_note("notes/x.md", "# Big Title\n\ntext").title == "Big Title"
    assert parse_note("notes/my-note.md", "text").title == "my note"


def test_bad_frontmatter_never_raises_and_says_why():
    n = parse_note("a.md", "---\n: : bad\n  - [\n---\nbody")
    assert n.frontmatter == {} and "not valid YAML" in n.frontmatter_error
    bomb = "---\na: &a [" + ",".join(["*a"] * 10) + "]\n" + "b: " + "x" * 20_000 + "\n---\nbody"
    n = parse_note("a.md", bomb)
    assert "not parsed" in n.frontmatter_error and n.body == "body"
    n = parse_note("a.md", "---\n- a list\n---\nbody")
    assert n.frontmatter_error == "frontmatter is not a mapping"


def test_a_workflow_status_leaves_the_note_live_and_readable():
    # Issue 53: the owner's own workflow words are no retirement and no unreadable frontmatter.
    today = dt.date(2026, 12, 6)
    for word in ("active", "done", "evergreen", "in progress", "obsolete-ish"):
        n = parse_note("a.md", f"---\nstatus: {word}\n---\n")
        assert n.status == word and not n.unreadable and not n.is_retired(today), word
    for word in ("superseded", "retracted", "deprecated", "archived", "obsolete", "Archived"):
        assert parse_note("a.md", f"---\nstatus: {word}\n---\n").is_retired(today), word


def test_the_owner_adds_retiring_statuses(monkeypatch):
    monkeypatch.setenv("CORTEX_RETIRED_STATUSES", "shelved, abandoned")
    assert parse_note("a.md", "---\nstatus: shelved\n---\n").is_retired(dt.date(2026, 12, 6))
    assert not parse_note("a.md", "---\nstatus: active\n---\n").is_retired(dt.date(2026, 12, 6))


words = st.sampled_from(
    [
        "alpha",
        "Beta",
        "yes",
        "no",
        "on",
        "null",
        "2026-01-05",
        "12",
        "007",
        "x",
        "a: b",
        "c++",
        "#tag",
        "true",
        "Some Title",
        "v1.2",
        "'quoted'",
        "1.5",
        "~",
    ]
)


@given(
    st.dictionaries(
        st.sampled_from(["title", "status", "tags", "valid_until", "decays", "n"]),
        st.one_of(words, st.lists(words, max_size=4)),
        max_size=5,
    )
)
def test_fast_frontmatter_agrees_with_yaml_when_it_answers(data):
    lines = []
    for k, v in data.items():
        lines.append(f"{k}: [{', '.join(v)}]" if isinstance(v, list) else f"{k}: {v}")
    raw = "\n".join(lines) + "\n"
    fast = fast_frontmatter(raw)
    if fast is None:
        return
    try:
        expected = yaml.safe_load(raw) or {}
    except yaml.YAMLError as err:
        raise AssertionError(f"fast path accepted invalid YAML: {raw!r}") from err
    assert fast == expected


# --- a successor named alone; a key given twice -------------------------------------


@pytest.mark.parametrize(
    "front,status,reason",
    [
        ("superseded_by: notes/b.md\n", "superseded", "status: superseded (superseded by notes/b.md)"),
        ("title: A\nsuperseded_by: 'notes/b.md'\n", "superseded", "status: superseded (superseded by notes/b.md)"),
        ("superseded_by: notes/b.md\nstatus:\n", "superseded", "status: superseded (superseded by notes/b.md)"),
        (
            "status: current\nsuperseded_by: notes/b.md\n",
            "current",
            "superseded by notes/b.md (superseded_by), though its status says current",
        ),
        (
            "status: draft\nsuperseded_by: notes/b.md\n",
            "draft",
            "superseded by notes/b.md (superseded_by), though its status says draft",
        ),
        ("status: retracted\nsuperseded_by: notes/b.md\n", "retracted", "status: retracted (superseded by notes/b.md)"),
    ],
)
def test_a_note_that_names_its_successor_is_retired(front: str, status: str, reason: str) -> None:
    n = parse_note("notes/a.md", f"---\n{front}---\nbody\n")
    assert (n.status, n.retired_reason(TODAY), n.unreadable) == (status, reason, None)


@pytest.mark.parametrize("front", ["superseded_by: ''\n", "superseded_by:\n", "title: A\n"])
def test_no_successor_retires_nothing(front: str) -> None:
    n = parse_note("notes/a.md", f"---\n{front}---\nbody\n")
    assert (n.status, n.retired_reason(TODAY)) == ("current", None)


@pytest.mark.parametrize(
    "front,why",
    [
        ("status: retracted\nstatus: current\n", "line 3: the key 'status' is given twice (first on line 2)"),
        ("status: current\ntitle: A\nstatus: retracted\n", "line 4: the key 'status' is given twice (first on line 2)"),
        ("valid_until: 2020-01-01\nvalid_until: 2030-01-01\n", "line 3: the key 'valid_until' is given twice"),
        ("superseded_by: notes/b.md\nsuperseded_by: notes/c.md\n", "the key 'superseded_by' is given twice"),
        ('status: retracted\n"status": current\n', "the key 'status' is given twice"),
        ("title: A\ntitle: B\n", "line 3: the key 'title' is given twice"),
        ("tags: [a]\nmeta:\n  owner: x\n  owner: y\n", "line 5: the key 'owner' is given twice (first on line 4)"),
        ("x: {k: 1, k: 2}\n", "the key 'k' is given twice"),
        ("1: a\n01: b\n", "the key '1' is given twice"),
    ],
)
def test_a_key_given_twice_leaves_the_status_unknown(front: str, why: str) -> None:
    n = parse_note("notes/a.md", f"---\n{front}---\nbody\n")
    assert n.unreadable is not None and why in n.unreadable, n.unreadable
    assert n.unreadable.startswith("frontmatter could not be read (") and n.unreadable.endswith("its status is unknown")
    assert n.frontmatter == {}


def test_a_merge_key_may_set_a_key_again() -> None:
    n = parse_note("notes/a.md", "---\nbase: &b {status: draft}\nmeta:\n  <<: *b\n  status: current\n---\nbody\n")
    assert n.unreadable is None and n.frontmatter["meta"] == {"status": "current"}
