"""`cortex eval`'s conversation-shaped set and its coverage lines.

The chats set (eval/chats/, see its README): saved chat sessions between one person and an
assistant, each question answered by one line of one session and searched within its
haystack's folder, as long-term-memory chat benchmarks ask. It is there because the public
eval brain's notes are short topic notes, and a drift of the words-alone ranking on long
transcripts would not show on them.

Coverage lines: recall@5 with meaning covering a share of the notes (every note at an index
the share selects, by path), as a first embed leaves it part way, against words alone; the
fusion must never be below words alone at any coverage.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from cortex.brain.brain import Brain
    from cortex.tools.toolset import Tools

__all__ = ["COVERAGES", "chats_brain", "coverage_line", "covering"]

COVERAGES = (0.0, 0.25, 0.5, 0.75, 1.0)


def chats_brain(root: Path, make: Callable[[dict[str, bytes], str], Brain]) -> tuple[Brain, list[dict[str, Any]]]:
    """The chats brain (each haystack a folder holding its sessions) and its questions, each
    with its gold session and its haystack as the search's `prefix`."""
    haystacks: dict[str, list[str]] = json.loads((root / "haystacks.json").read_text())
    files: dict[str, bytes] = {}
    home: dict[str, str] = {}  # evidence session -> the one haystack that holds it
    for name, sessions in haystacks.items():
        for session in sessions:
            files[f"{name}/{Path(session).name}"] = (root / "sessions" / session).read_bytes()
            if session.startswith("evidence/"):
                home[session] = name
    questions = []
    for line in (root / "questions.jsonl").read_text().splitlines():
        if line.strip():
            q = json.loads(line)
            where = home[q["evidence"]]
            gold = f"{where}/{Path(q['evidence']).name}"
            questions.append({**q, "gold": [gold], "prefix": f"{where}/"})
    return make(files, "chats"), questions


def covering(brain: Brain, share: float) -> set[str]:
    """The blobs of the notes a first embed at `share` would have reached: a fixed, even
    spread by path (every note whose index falls in the share), so runs compare."""
    snap = brain.snapshot()
    paths = sorted(snap.notes)
    step = 4
    keep = round(share * step)
    return {snap.blobs[p] for i, p in enumerate(paths) if i % step < keep}


def coverage_line(
    label: str, brain: Brain, tools: Tools, qs: list[dict[str, Any]], recall: Callable[[Tools, list], float]
) -> str:
    """`label`: recall@5 by words alone, then at each of COVERAGES of meaning."""
    whole = brain.meaning
    assert whole is not None
    cells = []
    try:
        brain.meaning = None
        alone = recall(tools, qs)
        for share in COVERAGES:
            brain.meaning = whole if share == 1.0 else whole.part(covering(brain, share))
            cells.append(f"{share:.0%} {recall(tools, qs):.3f}")
    finally:
        brain.meaning = whole
    return f"  {label:<10} words alone {alone:.3f} | " + "  ".join(cells)
