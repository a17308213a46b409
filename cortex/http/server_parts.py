"""`ServerParts`: what an assembled server is made of (settings, brain, tools, secrets,
queue, watcher, remote), made by `app/server.py`'s `assemble` and handed to the doors and
the console, which live below the app and so cannot import it."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from cortex.brain.brain import Brain
from cortex.brain.watcher import Editor
from cortex.guests.queue import ProposalQueue
from cortex.settings import Settings
from cortex.tools.toolset import Tools

__all__ = ["ServerParts", "Syncing"]


class Syncing(Protocol):
    """A sync the server runs beside the doors: hosted mode's remote (`store.remote.RemoteStore`),
    named by what the doors use of it, so this layer does not reach down to the store."""

    @property
    def display_url(self) -> str: ...

    def start(self) -> Any: ...

    def stop(self) -> None: ...

    def status(self) -> dict[str, Any]: ...


@dataclass
class ServerParts:
    settings: Settings
    brain: Brain
    tools: Tools
    owner_token: str
    url_secret: str
    new_token: bool
    queue: ProposalQueue | None = None  # made from settings.redis_url by make_app; shared by the console
    queue_off: str | None = None  # why the guest door is disabled, when it is
    editor: Editor | None = None  # the working-tree watcher, when the brain has a working tree
    remote: Syncing | None = None  # hosted mode's store
    health: Callable[[], dict[str, Any]] | None = None  # the full health report, for the owner
    # The OAuth door (http.oauth.OAuthDoor, made from these parts by make_oauth) unless
    # CORTEX_OAUTH=off; the console's consent page uses it.
    oauth: Any = None
    # How the owner's doors seal requestState (mcp_tools.request_state): a key shared through
    # Redis in hosted mode, else None (the SDK's key of this process). Set by make_app.
    request_state: Any = None
