"""Synthetic brains built from a fixed seed: short notes in realistic folders, or long chat transcripts.

Every bench that needs a brain of a given size makes it here, so the figures of different
benches are on the same notes.
"""

from __future__ import annotations

import itertools
import random
from pathlib import Path

__all__ = ["FOLDERS", "SPEAKERS", "conversation_notes", "make_brain", "synthetic_notes", "vocabulary"]

FOLDERS = ["notes", "notes", "notes", "projects", "log", "archive", "notes/reading", "notes/work"]


def vocabulary(rng: random.Random, size: int = 20_000) -> list[str]:
    letters = "abcdefghijklmnopqrstuvwxyz"
    words = set()
    while len(words) < size:
        words.add("".join(rng.choice(letters) for _ in range(rng.randint(3, 10))))
    return sorted(words)


def synthetic_notes(n: int, seed: int = 7, words_per_note: int = 300) -> dict[str, bytes]:
    """`n` notes of about `words_per_note` words with a Zipf-like vocabulary, in realistic folders."""
    rng = random.Random(seed)
    vocab = vocabulary(rng)
    weights = [1 / (i + 1) for i in range(len(vocab))]
    files: dict[str, bytes] = {}
    for i in range(n):
        folder = FOLDERS[i % len(FOLDERS)]
        path = f"log/2026-{1 + i % 12:02d}-{1 + i % 28:02d}-{i}.md" if folder == "log" else f"{folder}/note-{i:05d}.md"
        words = rng.choices(vocab, weights=weights, k=words_per_note)
        paras = [" ".join(words[j : j + 60]) for j in range(0, len(words), 60)]
        body = f"# Note {i}\n\n" + "\n\n".join(f"## Part {k}\n\n{p}" if k % 2 else p for k, p in enumerate(paras))
        fm = f"---\ntitle: Note {i} {words[0]}\ntags: [{words[1]}, {words[2]}]\ndescription: about {words[3]}\n---\n"
        files[path] = (fm + body + "\n").encode()
    return files


SPEAKERS = ("**User:**", "**Assistant:**")


def conversation_notes(n: int, seed: int = 11) -> dict[str, bytes]:
    """`n` long notes like saved chat transcripts: 5-20 KB each of alternating turns.

    A wider vocabulary than `synthetic_notes` (60,000 words, Zipf-like, plus numbers),
    because long text keeps meeting new words: the index's vocabulary grows with it.
    """
    rng = random.Random(seed)
    vocab = vocabulary(rng, 60_000)
    cum = list(itertools.accumulate(1 / (i + 1) for i in range(len(vocab))))
    files: dict[str, bytes] = {}
    for i in range(n):
        size = rng.randint(5_000, 20_000)
        words = rng.choices(vocab, cum_weights=cum, k=size * 2 // 15)  # ~7.5 bytes a word
        turns, pos, k = [], 0, 0
        while pos < len(words):
            step = rng.randint(20, 160)
            line = " ".join(words[pos : pos + step])
            if rng.random() < 0.1:
                line += f" {rng.randint(1, 99_999)}"
            turns.append(f"{SPEAKERS[k % 2]} {line}")
            pos, k = pos + step, k + 1
        month = 1 + i % 12
        title = " ".join(words[:4])
        head = f"---\ntitle: {title}\ndate: 2025-{month:02d}-{1 + i % 28:02d}\ntags: [chat, {words[5]}]\n---\n"
        files[f"conversations/2025-{month:02d}/chat-{i:05d}.md"] = (
            head + f"# {title}\n\n" + "\n\n".join(turns) + "\n"
        ).encode()
    return files


def make_brain(root: Path, n: int, long: bool = False, worktree: bool = False) -> Path:
    """A bare brain of `n` synthetic notes (or long transcripts) with a profile and INDEX.md, under `root`
    (`worktree`: a repository with its files checked out, as a person's own brain is)."""
    from cortex.brain.contents_page import render_contents_page
    from cortex.notes.note import parse_note
    from cortex.store.git import GitStore

    path = root / f"brain-{n}{'-long' if long else ''}{'' if worktree else '.git'}"
    files = conversation_notes(n) if long else synthetic_notes(n)
    files["profile.md"] = b"---\ntitle: Profile\n---\nA synthetic owner.\n"
    files["INDEX.md"] = render_contents_page({p: parse_note(p, d.decode()) for p, d in files.items()})
    GitStore.init(path, files, bare=not worktree, message="bench: synthetic brain")
    return path
