"""The trusted tool set over one brain (`Tools`): what every owner tool's handler works on,
the brain, the asker, the working state, and what search keeps between calls (the name
map and the filters' verdicts). Each tool is its own module under `cortex/tools/`; this
holds only their shared parts and knows nothing of HTTP or MCP.
"""

from __future__ import annotations

import secrets
import threading
import time
from typing import TYPE_CHECKING, Protocol
from urllib.parse import quote

from cortex.brain.brain import Brain
from cortex.brain.working_state import Working
from cortex.index.name_map import NameMap

if TYPE_CHECKING:
    import numpy as np

    from cortex.ask.asker import Asker

__all__ = ["NOTE_URI", "Asked", "Confirmations", "Tools", "note_uri", "note_url"]


class Confirmations(Protocol):
    """Where brain_write's open confirmations are kept: `Asked` in this process, or
    `guests.queue.RedisConfirmations` in hosted mode, where any instance answers one another asked."""

    def ask(self, write: str, blob: str) -> str: ...

    def answer(self, key: object) -> tuple[str, str] | None: ...


class Tools:
    """The trusted tool set over one brain."""

    def __init__(
        self,
        brain: Brain,
        asker: Asker,
        *,
        public_url: str | None = None,
        confirm_writes: bool = True,
        asked: Confirmations | None = None,
    ):
        self.brain = brain
        self.confirm_writes = confirm_writes  # CORTEX_CONFIRM_WRITES: a destructive write asks the owner first
        self.public_url = public_url  # CORTEX_PUBLIC_URL: where a note's console page is, for search/fetch
        self.working = Working(brain)
        self.asker = asker
        self.names = NameMap()  # names first: exact titles, aliases and file names, by head
        self.masks: dict[tuple, np.ndarray] = {}  # search filters' verdicts for the meaning arm
        self.asked = asked or Asked()  # the confirmations brain_write asked for, each answerable once


class Asked:
    """The owner's confirmations in flight: each names the write and the note's blob it showed,
    is answered once (accepted or declined, never again), and lapses after `TTL_S`. The state a
    client sends back carries only its key, so a declined round re-sent with "accept", a
    replayed accepted one, or one for a note changed since cannot write."""

    TTL_S = 600.0
    MAX = 1_000  # asked and not answered: the oldest lapse first

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._open: dict[str, tuple[str, str, float]] = {}  # key -> (write digest, blob, deadline)

    def ask(self, write: str, blob: str) -> str:
        key = secrets.token_urlsafe(16)
        with self._lock:
            now = time.monotonic()
            self._open = {k: v for k, v in self._open.items() if v[2] > now}
            while len(self._open) >= self.MAX:
                del self._open[next(iter(self._open))]
            self._open[key] = (write, blob, now + self.TTL_S)
        return key

    def answer(self, key: object) -> tuple[str, str] | None:
        """(write digest, blob) of the open confirmation `key`, closing it; None when there is none."""
        with self._lock:
            found = self._open.pop(key, None) if isinstance(key, str) else None
        if found is None or found[2] < time.monotonic():
            return None
        return found[0], found[1]


NOTE_URI = "cortex://note/"  # a note as an MCP resource: cortex://note/<path>[?as_of=<sha>]


def note_uri(path: str, sha: str | None = None) -> str:
    """A note's resource URI (its path percent-encoded, slashes kept), pinned to `sha` when given."""
    return NOTE_URI + quote(path, safe="/") + (f"?as_of={sha}" if sha else "")


def note_url(tools: Tools, path: str) -> str:
    """Where a note can be opened: its console page at CORTEX_PUBLIC_URL, else its cortex:// URI."""
    if tools.public_url:
        return f"{tools.public_url.rstrip('/')}/console/note/{quote(path, safe='/')}"
    return note_uri(path)
