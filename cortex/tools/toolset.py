"""The trusted tool set over one brain (`Tools`): what every owner tool's handler works on,
the brain, the asker, the working state, and what search keeps between calls (the name
map and the filters' verdicts). Each tool is its own module under `cortex/tools/`; this
holds only their shared parts and knows nothing of HTTP or MCP.
"""

from __future__ import annotations

from typing import TYPE_CHECKING
from urllib.parse import quote

from cortex.brain.brain import Brain
from cortex.brain.working_state import Working
from cortex.index.name_map import NameMap

if TYPE_CHECKING:
    import numpy as np

    from cortex.ask.asker import Asker

__all__ = ["NOTE_URI", "Tools", "note_uri", "note_url"]


class Tools:
    """The trusted tool set over one brain."""

    def __init__(self, brain: Brain, asker: Asker, *, public_url: str | None = None, confirm_writes: bool = True):
        self.brain = brain
        self.confirm_writes = confirm_writes  # CORTEX_CONFIRM_WRITES: a destructive write asks the owner first
        self.public_url = public_url  # CORTEX_PUBLIC_URL: where a note's console page is, for search/fetch
        self.working = Working(brain)
        self.asker = asker
        self.names = NameMap()  # names first: exact titles, aliases and file names, by head
        self.masks: dict[tuple, np.ndarray] = {}  # search filters' verdicts for the meaning arm


NOTE_URI = "cortex://note/"  # a note as an MCP resource: cortex://note/<path>[?as_of=<sha>]


def note_uri(path: str, sha: str | None = None) -> str:
    """A note's resource URI (its path percent-encoded, slashes kept), pinned to `sha` when given."""
    return NOTE_URI + quote(path, safe="/") + (f"?as_of={sha}" if sha else "")


def note_url(tools: Tools, path: str) -> str:
    """Where a note can be opened: its console page at CORTEX_PUBLIC_URL, else its cortex:// URI."""
    if tools.public_url:
        return f"{tools.public_url.rstrip('/')}/console/note/{quote(path, safe='/')}"
    return note_uri(path)
