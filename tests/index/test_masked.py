"""The guests' view of the index (`cortex.index.masked`): searching it answers, to the bit, as
an index built afresh from the notes masked as replies show them, at every commit; the stored
index the owner searches is left as it was. On a real Git repository.

Secrets are built by concatenation so no credential-shaped literal sits in the repository.
"""

from __future__ import annotations

from pathlib import Path

from cortex.index.builder import IndexBuilder
from cortex.index.corpus import Corpus
from cortex.index.fields import index_names, index_note
from cortex.index.masked import masked_fields
from cortex.index.snapshot import Snapshot
from cortex.index.tokenize import tokenize
from cortex.notes.note import parse_note
from cortex.store.git import GitStore

KEY = "hf_" + "Q7w8E9r0T1y2U3i4O5p6A7s8D9f0G1h2xyz"
NOTES = {
    "notes/feed.md": "# Seed feed\n\nThe seed feed is https://seeds.example/feed?token=tulip4821 daily.\n",
    "notes/sensor.md": f"---\ntitle: Sensor {KEY}\n---\n# Sensor\n\nThe greenhouse sensor key is {KEY} today.\n",
    f"notes/{KEY}.md": "# Named by a key\n\nA note whose file name is a greenhouse token.\n",
    # Needles without a secret: masking changes nothing, and these stay as they are.
    "notes/asia.md": "# Asia\n\nThe seed trip to Asia; the task-list is on the desk-lamp.\n",
    "notes/plain.md": "# Plain\n\nTomatoes and seed potatoes; the token of thanks was a tulip.\n",
}
QUERIES = ["tulip4821", "seed feed token", "greenhouse sensor key", KEY, "redacted api key", "tulip", "asia task"]


def _fresh(snap: Snapshot, masked: bool) -> IndexBuilder:
    builder = IndexBuilder()
    for path, note in snap.notes.items():
        fields = masked_fields(note) if masked else None
        if fields is None:
            index_note(builder, note)
        else:
            builder.add_tokens(path, *fields)
    return builder.finish()


def _check(corpus: Corpus, snap: Snapshot) -> None:
    for masked in (True, False):
        fresh = _fresh(snap, masked)
        for query in QUERIES:
            got = corpus.search(snap, query, 50, masked=masked)
            assert got == fresh.search(query, 50), (masked, query)
            for within in ({"notes/feed.md", "notes/plain.md"}, set(snap.notes)):
                found = corpus.matching(snap, set(tokenize(query)), within, masked=masked)
                assert found == fresh.matching_tokens(tokenize(query), within), (masked, query)


def test_the_masked_index_is_a_fresh_build_of_the_masked_notes_and_the_stored_one_is_untouched(tmp_path: Path):
    store = GitStore.init(tmp_path / "b.git", {p: t.encode() for p, t in NOTES.items()}, bare=True, message="seed")
    corpus = Corpus(store)
    snap = corpus.latest()
    _check(corpus, snap)
    # The guest finds neither the token nor the key, in any field (path and title included);
    # the owner finds both.
    assert corpus.search(snap, "tulip4821", 5, masked=True).hits == []
    assert corpus.search(snap, KEY, 5, masked=True).hits == []
    assert {p for p, _ in corpus.search(snap, KEY, 5).hits} == {"notes/sensor.md", f"notes/{KEY}.md"}
    # A commit: a secret note edited, one added, one removed (the stored index now holds
    # loose notes, which the masked copy must not share).
    store.commit(
        lambda view: {
            "notes/feed.md": b"# Seed feed\n\nThe seed feed is https://seeds.example/feed?token=tulip9999 now.\n",
            "notes/bearer.md": b"# Hub\n\nThe hub sends Authorization: Bearer wx7Q9fLm2Kp4Zt8Rv3Nc to the seed feed.\n",
            "notes/sensor.md": None,
        },
        "edit",
    )
    after = corpus.latest()
    assert after.sha != snap.sha
    _check(corpus, after)
    assert corpus.search(after, "tulip9999 wx7q9flm2kp4zt8rv3nc", 5, masked=True).hits == []
    assert [p for p, _ in corpus.search(after, "tulip9999", 5).hits] == ["notes/feed.md"]


def test_only_a_note_masking_changes_is_masked():
    for text, changes in [
        ("# A\n\nThe task-list and the Asia trip; key=value pairs in prose? no: a key is a key.\n", False),
        ("# A\n\nSee https://x.example/?key=abc123 for it.\n", True),
    ]:
        note = parse_note("notes/a.md", text)
        assert note.might_hold_secret
        assert (masked_fields(note) is not None) is changes
    plain = parse_note("notes/plain.md", "# Plain\n\nTomatoes.\n")
    assert not plain.might_hold_secret and masked_fields(plain) is None
    named = parse_note(f"notes/{KEY}.md", "# Named\n\nNothing secret inside.\n")
    tokens, names = masked_fields(named)
    assert not set(tokenize(KEY)) & {t for field in tokens.values() for t in field}
    assert names == index_names(parse_note("notes/[REDACTED API key].md", "# Named\n\nNothing secret inside.\n"))
