"""A full read of a brain in worker processes (build_pool.py) gives exactly what one
process reads: the same notes, texts and search results, the index array for array.

Real Git repositories in temp folders and real `cortex.index.build_pool.work` workers.
The brain looks like a person's: a repository on `master`, accented, NFD, CJK and
apostrophe file names, CRLF, invalid UTF-8, a broken frontmatter, a 400 KB hub,
and files that are not notes.
"""

from __future__ import annotations

import logging
import random
import unicodedata

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from vaultkit import QUERIES as SAVED_QUERIES
from vaultkit import hub_note, settings_for, vault_on

from cortex.app.brain_setup import open_brain
from cortex.brain.brain import Brain
from cortex.errors import BadInput
from cortex.index import build_pool
from cortex.index.build_pool import build_workers, read_notes
from cortex.index.builder import IndexBuilder
from cortex.index.note_text import read_lazily
from cortex.notes.note import decode
from cortex.notes.paths import is_note_path
from cortex.store.git import GitStore

QUERIES = [*SAVED_QUERIES, "café", "東京", "don't", "rust libraries", "naïve résumé", "the"]


def messy_files(extra: int = 60) -> dict[str, bytes]:
    rnd = random.Random(5)
    words = "bees hive garden plan café naïve résumé rust libraries meeting budget tokyo don't".split()
    files = {
        "Café/Crème brûlée.md": "# Crème brûlée\n\nLe café du matin, naïve résumé.\n".encode(),
        unicodedata.normalize("NFD", "Journal/Réunion d'équipe.md"): "Réunion: budget, café.\r\n- item\r\n".encode(),
        "日記/東京.md": "# 東京\n\n東京都に行った。rust libraries\n".encode(),
        "People/O'Brien.md": b"---\ntitle: Sean O'Brien\naliases: [Sean]\n---\nDon't forget the bees.\n",
        "notes/bad bytes.md": b"# Bad\n\nhalf a character \xe2\x82 then bees\n",
        "notes/broken frontmatter.md": b"---\ntitle: [unclosed\n---\nbody about the hive\n",
        "lists/Rust libraries.md": hub_note("Rust", 400_000),
        "INDEX.md": b"# Index\n",
        ".cortex/state.md": b"machine file\n",
        "image.png": b"\x89PNG not a note",
    }
    for i in range(extra):
        body = " ".join(rnd.choice(words) for _ in range(rnd.randint(0, 80)))
        files[f"notes/n{i:03d}.md"] = f"# Note {i}\n\n{body}\n".encode()
    return files


@pytest.fixture(scope="module")
def messy(tmp_path_factory) -> GitStore:
    root = tmp_path_factory.mktemp("messy")
    return GitStore(vault_on(root, "master", messy_files()))


def _items(store: GitStore) -> list[tuple[str, str]]:
    return [(p, b) for p, b in store.entries(store.head()).items() if is_note_path(p)]


def assert_same_read(a, b) -> None:
    (notes_a, builder_a), (notes_b, builder_b) = a, b
    assert list(notes_a) == list(notes_b)
    assert notes_a == notes_b
    ia, ib = builder_a.finish(), builder_b.finish()
    sa, sb = ia.compacted().segment, ib.compacted().segment
    assert sa.terms == sb.terms
    for name in ("fptr", "fterm", "iptr", "idoc", "itf"):
        x, y = getattr(sa, name), getattr(sb, name)
        assert x.dtype == y.dtype and np.array_equal(x, y), name
    assert ia.compacted().ids == ib.compacted().ids
    for q in QUERIES:
        assert ia.search(q, 10) == ib.search(q, 10), q


@pytest.mark.slow
@pytest.mark.parametrize("workers,chunk", [(2, 1), (2, 7), (3, 5), (4, 500)])
def test_workers_read_what_one_process_reads(messy, workers, chunk):
    items = _items(messy)
    done: list[int] = []
    assert_same_read(read_notes(messy, items, 1), read_notes(messy, items, workers, done.append, chunk=chunk))
    assert done[-1] == len(items) and done == sorted(done)  # progress goes up to every note


@pytest.mark.slow
def test_notes_from_workers_read_their_text_from_git(messy):
    items = _items(messy)
    notes, _ = read_notes(messy, items, 2, chunk=4)
    read_lazily(messy, notes, dict(items))
    for path, blob in items:
        assert notes[path].text == decode(messy.blob_bytes(blob))
    assert "\ufffd" in notes["notes/bad bytes.md"].text  # replaced, as one process does
    assert notes["notes/broken frontmatter.md"].frontmatter_error


def test_a_worker_that_cannot_start_means_reading_here_and_a_log_line(messy, monkeypatch, caplog):
    """Whatever breaks the workers (here: no Python to run them), the notes are read all the same."""
    items = _items(messy)
    expected = read_notes(messy, items, 1)
    monkeypatch.setattr(build_pool.sys, "executable", "/bin/false")
    with caplog.at_level(logging.WARNING, logger="cortex"):
        got = read_notes(messy, items, 2, chunk=3)
    assert_same_read(expected, got)
    assert any("worker processes failed" in r.getMessage() for r in caplog.records)


@pytest.mark.slow
def test_a_brain_built_with_workers_answers_as_one_built_without(messy):
    one, many = Brain(GitStore(messy.path)), Brain(GitStore(messy.path), workers=3)
    sa, sb = one.snapshot(), many.snapshot()
    assert sa.notes == sb.notes and sa.blobs == sb.blobs and sa.changed == sb.changed
    for q in QUERIES:
        assert one.corpus.search(sa, q, 10) == many.corpus.search(sb, q, 10), q
    path = "日記/東京.md"
    assert many.read(path)[2].text == one.read(path)[2].text == "# 東京\n\n東京都に行った。rust libraries\n"


def test_how_many_workers():
    assert build_workers(10) == 1  # a small brain is read in the server's process
    assert build_workers(10, 3) == 3  # CORTEX_BUILD_WORKERS decides
    assert 1 <= build_workers(50_000) <= build_pool.BUILD_WORKERS_MAX


def test_cortex_build_workers_setting(tmp_path):
    brain = vault_on(tmp_path, "master", {"a.md": b"# A\n"})
    assert open_brain(settings_for(tmp_path, brain, CORTEX_BUILD_WORKERS="2"))[0].corpus.workers == 2
    for bad in ("0", "-1", "two", "1.5"):
        with pytest.raises(BadInput, match="CORTEX_BUILD_WORKERS"):
            settings_for(tmp_path, brain, CORTEX_BUILD_WORKERS=bad)


# ----- the merge itself, without processes: exhaustive over random documents ----

WORDS = st.sampled_from("a b c bees hive café 東京 don't x1 the of rust".split())
DOC = st.fixed_dictionaries(
    {"title": st.lists(WORDS, max_size=4).map(" ".join), "body": st.lists(WORDS, max_size=30).map(" ".join)}
)


@pytest.mark.slow
@settings(max_examples=150, deadline=None)
@given(docs=st.lists(DOC, max_size=25), cuts=st.lists(st.integers(0, 25), max_size=5))
def test_shards_added_in_order_are_the_documents_added_one_by_one(docs, cuts):
    whole = IndexBuilder()
    for i, fields in enumerate(docs):
        whole.add(f"d{i}", fields, [fields["title"]])
    merged = IndexBuilder()
    bounds = sorted({0, len(docs), *(c for c in cuts if c <= len(docs))})
    for lo, hi in zip(bounds, bounds[1:], strict=False):
        part = IndexBuilder()
        for i in range(lo, hi):
            part.add(f"d{i}", docs[i], [docs[i]["title"]])
        merged.add_shard(part.shard())
    assert_same_read(({}, whole), ({}, merged))


def test_a_shard_holding_a_document_already_added_is_refused():
    a, b = IndexBuilder(), IndexBuilder()
    a.add("x", {"body": "bees"})
    b.add("x", {"body": "hive"})
    with pytest.raises(ValueError, match="twice"):
        a.add_shard(b.shard())
    assert a.finish().search("hive", 5).hits == []  # nothing of the refused shard went in
