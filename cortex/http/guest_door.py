"""The guest door `/g/<secret>/mcp`: two tools, brain_ask and brain_propose, per policy.

One MCPServer serves every guest. The DoorRouter asks `lookup(secret)` on each
HTTP request; the app returned carries that guest's policy in the request
scope, so every tool call is judged by the URL it arrived on (a revoked guest
is shut out on its next request, mid-session or not). A guest holds at most a few sessions
and event streams open (`guest_limits`): beyond, a request is refused with 429.

The two tools are `cortex.tools.guest_ask` and `cortex.tools.guest_propose`. Nothing outside
the guest's scope may reach a reply: the ask corpus is cut to the scope, and without
`citations` the reply keeps only stamps, the answer and counts, with anything path-shaped
masked (`guest_ask.guest_reply`).
"""

from __future__ import annotations

import contextlib
from typing import Any

from mcp.server import MCPServer
from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.streamable_http_manager import DEFAULT_SESSION_IDLE_TIMEOUT, HANDSHAKE_PROTOCOL_VERSIONS
from mcp.server.transport_security import TransportSecuritySettings
from starlette.responses import PlainTextResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from cortex import __version__
from cortex.errors import QueueUnavailable
from cortex.guests.policy import GuestBook, GuestPolicy
from cortex.guests.queue import ProposalQueue
from cortex.guests.review import Review
from cortex.http.guest_limits import GuestLimits
from cortex.http.server_parts import ServerParts
from cortex.tools.guest_desk import GuestDesk
from cortex.tools.table import GUEST_TOOLS
from cortex.tools.tool import Caller, Tool
from cortex.tools.toolset import Tools

__all__ = ["GUEST_INSTRUCTIONS", "GUEST_SESSION_IDLE_S", "GuestDoors", "STATE_KEY", "guest_parts"]

GUEST_INSTRUCTIONS = (
    "A guest door to someone's brain of notes. brain_ask answers questions from the part of the "
    "brain the owner shared with you, and stamps how well each answer is checked. brain_propose "
    "suggests a note; nothing you send reaches the brain until the owner accepts it."
)
STATE_KEY = "cortex_guest"
# How long a guest's session may sit idle before the SDK ends it (its default, said here so the
# session count in `GuestLimits` ends a session when the SDK does).
GUEST_SESSION_IDLE_S: float = DEFAULT_SESSION_IDLE_TIMEOUT


def _opens_session(scope: Scope) -> bool:
    """Whether a POST without a session ID is on the 2025 protocols' path, where it opens a
    session: the SDK's own rule (no protocol header, or one of the handshake versions); on the
    newer protocol a request is sessionless."""
    version = next((v.decode("latin-1") for k, v in scope.get("headers", []) if k == b"mcp-protocol-version"), None)
    return version is None or version in HANDSHAKE_PROTOCOL_VERSIONS


class GuestDoors:
    """The guest MCPServer, the policy lookup by secret, and the door's health."""

    def __init__(
        self,
        tools: Tools,
        book: GuestBook,
        queue: ProposalQueue | None,
        disabled: str | None,
        security: TransportSecuritySettings,
    ):
        self.tools = tools
        self.book = book
        self.queue = queue
        self.disabled = disabled if queue is None else None
        self.mcp = self._server()
        from cortex.http.doors import door_app

        self.asgi = door_app(self.mcp, security, session_idle_s=GUEST_SESSION_IDLE_S)
        self.limits = GuestLimits(GUEST_SESSION_IDLE_S, _opens_session)
        # The reason may name a socket path or a folder: the owner's /healthz?detail=1 says it.
        self._off = PlainTextResponse("guest door disabled", status_code=503)

    def servers(self) -> list[MCPServer]:
        return [self.mcp]

    def lookup(self, secret: str) -> ASGIApp | None:
        """The ASGI app for this secret's guest, or None (a bare 404)."""
        if self.disabled:
            return self._off  # the same answer for every secret: it tells nothing about them
        policy = self.book.find(secret)
        if policy is None:
            return None
        inner, limits = self.asgi, self.limits

        async def app(scope: Scope, receive: Receive, send: Send) -> None:
            state = dict(scope.get("state") or {})
            state[STATE_KEY] = policy
            await limits.serve(policy.secret_sha256, inner, dict(scope, state=state), receive, send)

        return app

    def health(self) -> dict[str, Any]:
        """`guest_door` for anyone (no path in it); `guest_door_reason` for the owner's detail."""
        if self.disabled:
            return {
                "guest_door": "disabled",
                "guest_door_reason": self.disabled,
                "broken_guest_policies": self.book.broken(),
            }
        door = "degraded: queue unavailable" if self.queue is not None and not self.queue.ping() else "ok"
        return {"guest_door": door, "broken_guest_policies": self.book.broken()}

    # -- the tools --------------------------------------------------------

    def _policy(self, ctx: Context) -> GuestPolicy:
        try:
            policy = ctx.request_context.request.scope.get("state", {}).get(STATE_KEY)  # type: ignore[union-attr]
        except Exception:
            policy = None
        if not isinstance(policy, GuestPolicy):
            raise ToolError("this door has no guest")
        # Re-read at call time: a policy revoked or changed since the lookup wins.
        current = self.book.get(policy.name)
        if current is None or current.secret_sha256 != policy.secret_sha256:
            raise ToolError("this guest's door is closed")
        return current

    def _server(self) -> MCPServer:
        from cortex.http.mcp_tools import OneLineMCPServer, register

        # No subscriptions/listen: a guest has no resources to hear of (it acknowledged streams
        # that never fired, unmetered: 1,024 opened).
        mcp = OneLineMCPServer(
            name="cortex-guest",
            version=__version__,
            instructions=GUEST_INSTRUCTIONS,
            log_level="WARNING",
            subscriptions=False,
        )

        def caller_of(ctx: Context, tool: Tool[Any, Any]) -> Caller:
            policy = self._policy(ctx)
            return Caller(door=f"guest:{policy.name}", guest=policy)

        register(mcp, GUEST_TOOLS, GuestDesk(self.tools, self.queue, self.disabled), caller_of)
        return mcp


def guest_parts(parts: ServerParts) -> dict[str, Any]:
    """build_app's guest and review arguments for an assembled server."""
    from cortex.http.doors import transport_security

    queue = getattr(parts, "queue", None)
    if queue is None and parts.settings.redis_url:
        queue = parts.queue = ProposalQueue(parts.settings.redis_url, clock=parts.brain.now)
    disabled = getattr(parts, "queue_off", None) or (None if queue else "disabled: no Redis configured")
    book = GuestBook(parts.brain)
    review = Review(parts.brain, queue, disabled)
    doors = GuestDoors(parts.tools, book, queue, disabled, transport_security(parts.settings))

    def load_tombstones() -> None:
        if queue is None:
            return
        # Admission reloads them when Redis answers (the marker key is missing).
        with contextlib.suppress(QueueUnavailable):
            queue.reload_tombstones()

    return {"review": review, "guest_doors": doors, "health": doors.health, "on_startup": [load_tombstones]}
