"""The exceptions that cross layers. Every message is one line and safe to show a client.

A door turns any CortexError into a one-line tool error (or an HTTP status on the
console); anything else is a bug and is logged.
"""

from __future__ import annotations

__all__ = [
    "AlreadyApplied",
    "BadInput",
    "Conflict",
    "CortexError",
    "Declined",
    "NoNote",
    "NotReady",
    "PathCollision",
    "QueueUnavailable",
    "StoreError",
]


class CortexError(Exception):
    """A refusal or an outage a client may be told about; changes nothing."""


class BadInput(CortexError, ValueError):
    """A refused input: a path, content, argument or cursor the rules do not allow."""


class NoNote(BadInput):
    """A path that names no file at the commit read (a folder, or a typo: the message offers the nearest)."""


class StoreError(CortexError):
    """The Git store cannot do it (no commits yet, storage full, branch kept moving, ...)."""


class Conflict(StoreError):
    """The change no longer applies to the current head (changed, exists, moved)."""


class PathCollision(Conflict):
    """The change would put a folder where a note is, or a note where a folder is."""


class Declined(CortexError):
    """The owner, asked before a write that loses text, did not confirm it: nothing changed."""


class NotReady(CortexError):
    """The search index is still being built and a bounded wait for it ran out."""


class QueueUnavailable(CortexError):
    """Redis did not answer: the guest door fails clearly, the trusted doors carry on."""


class AlreadyApplied(Exception):
    """A write's request_id is already in history: the earlier commit stands (not an error)."""

    def __init__(self, sha: str):
        super().__init__(sha)
        self.sha = sha
