"""Fusion at any coverage of meaning is never below words alone for the notes meaning has not
reached: `ranking.keep_word_ranks` as a pure function (every order, every set), and brain_search
on the public eval brain with the real model and half its notes embedded.

In CI (CI=true) a missing model fails the real-model test; elsewhere it skips.
"""

from __future__ import annotations

import json
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from cortex.app.evaluate import load
from cortex.ask.asker import Asker
from cortex.ask.readers import OfflineReader
from cortex.index.ranking import keep_word_ranks
from cortex.meaning.closeness import Meaning
from cortex.meaning.embedder import ModelFiles
from cortex.tools.search import SearchRequest, search_notes
from cortex.tools.toolset import Tools

EVAL = Path(__file__).resolve().parent.parent.parent / "eval"
NAMES = [f"n{i}" for i in range(12)]


@st.composite
def _orders(draw: st.DrawFn) -> tuple[list[str], list[str], set[str]]:
    fused = draw(st.permutations(NAMES))[: draw(st.integers(0, len(NAMES)))]
    words = draw(st.permutations(NAMES))[: draw(st.integers(0, len(NAMES)))]
    return fused, words, set(draw(st.sets(st.sampled_from(NAMES))))


@settings(max_examples=400, derandomize=True)
@given(_orders())
def test_no_unembedded_note_falls_below_its_words_alone_place(case: tuple[list[str], list[str], set[str]]) -> None:
    fused, words, unembedded = case
    out = keep_word_ranks(fused, words, unembedded)
    due = [p for p in words if p in unembedded]
    assert len(out) == len(set(out)) and set(out) == set(fused) | set(due)
    for p in due:
        assert out.index(p) <= words.index(p), (p, out, words)
    # every other note keeps its fused order
    assert [p for p in out if p in fused and p not in due] == [p for p in fused if p not in due]
    if not due:
        assert out == fused


def test_half_embedded_search_never_ranks_an_unembedded_note_below_words_alone(model: ModelFiles) -> None:
    brain, questions = load(EVAL / "brain", EVAL / "questions.jsonl")
    reworded = [json.loads(line) for line in (EVAL / "reworded.jsonl").read_text().splitlines() if line.strip()]
    tools = Tools(brain, Asker(brain, OfflineReader()))
    asked = [q["question"] for q in questions[::3] + reworded[::4]]
    words = {q: [h["path"] for h in search_notes(tools, SearchRequest(query=q, k=10))["hits"]] for q in asked}

    from meaningkit import CACHE

    whole = Meaning(None, CACHE, None, "eval")
    assert whole.prepare(), whole.reason
    snap = brain.snapshot()
    whole.catch_up(snap)
    paths = sorted(snap.notes)
    half = {snap.blobs[p] for p in paths[::2]}
    unembedded = {p for p in paths if snap.blobs[p] not in half}
    brain.meaning = whole.part(half)
    moved = 0
    for q in asked:
        reply = search_notes(tools, SearchRequest(query=q, k=10))
        assert "lexical for the rest" in reply["meaning"], reply["meaning"]
        fused = [h["path"] for h in reply["hits"]]
        for place, p in enumerate(words[q]):
            if p in unembedded:
                assert p in fused and fused.index(p) <= place, (q, p, words[q], fused)
        moved += fused != words[q]
    assert moved, "meaning changed no ranking: the half it covers took no part"
