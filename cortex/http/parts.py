"""What an assembled server is made of, handed from `server.py` to the doors and the console."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from cortex.brain.brain import Brain
from cortex.brain.watcher import Editor
from cortex.guests.queue import ProposalQueue
from cortex.settings import Settings
from cortex.store.remote import RemoteStore
from cortex.tools.trusted import Tools


@dataclass
class Parts:
    settings: Settings
    brain: Brain
    tools: Tools
    owner_token: str
    url_secret: str
    new_token: bool
    queue: ProposalQueue | None = None  # made from settings.redis_url by make_app; shared by the console
    queue_off: str | None = None  # why the guest door is disabled, when it is
    editor: Editor | None = None  # the working-tree watcher, when the brain has a working tree
    remote: RemoteStore | None = None  # hosted mode's store
    health: Callable[[], dict[str, Any]] | None = None  # the full health report, for the owner
