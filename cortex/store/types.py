"""The store's plain data: what a write changes, what a commit says, what a write returned.

No Git library here: the layers above (the index, the brain, the doors' replies) take
these types without reaching the Git store itself.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field

__all__ = ["Change", "Changes", "CommitInfo", "Draft", "Identity", "WriteResult"]

Changes = dict[str, bytes | None]  # path -> new bytes, or None to delete
Identity = tuple[str, str]  # (name, email) of a commit's author


@dataclass(frozen=True)
class Change:
    path: str
    old_blob: str | None
    new_blob: str | None


@dataclass(frozen=True)
class CommitInfo:
    sha: str
    time: dt.datetime
    message: str
    author: str
    parents: tuple[str, ...]
    files: tuple[str, ...] = field(default=())
    committer: str = ""  # "Cortex" on every commit Cortex makes, hand edits included

    @property
    def subject(self) -> str:
        return self.message.splitlines()[0] if self.message else ""

    @property
    def trailers(self) -> dict[str, str]:
        out = {}
        for line in self.message.splitlines():
            if line.startswith("Cortex-") and ":" in line:
                key, _, value = line.partition(":")
                out[key.strip()] = value.strip()
        return out

    @property
    def door(self) -> str:
        """Which door made it: its Cortex-Door trailer; `cortex` for Cortex's own commits without
        one (the first commit of a brain, a replay); `hand-made` for everything else."""
        trailers = self.trailers
        if "Cortex-Door" in trailers:
            return trailers["Cortex-Door"]
        return "cortex" if self.author == "Cortex" else "hand-made"


@dataclass(frozen=True)
class WriteResult:
    sha: str
    parent: str | None
    old_blobs: dict[str, str | None]
    new_blobs: dict[str, str | None]
    retries: int
    push: str | None = None  # hosted mode: "pushed" or "pending" (kept locally, retried)
    push_note: str | None = None  # why a push is pending; never holds a credential


@dataclass(frozen=True)
class Draft:
    """A commit object built on a head but not yet on the branch."""

    sha: str
    parent: str | None
    old_blobs: dict[str, str | None]
    new_blobs: dict[str, str | None]

    def result(self, retries: int, push: str | None = None, push_note: str | None = None) -> WriteResult:
        return WriteResult(self.sha, self.parent, self.old_blobs, self.new_blobs, retries, push, push_note)
