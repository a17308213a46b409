"""The doors: one Starlette app, several MCP servers, each behind its own check. The
trusted doors' tools are declared in `mcp_tools`; this module routes each request to the
right server after its door's check.

- `/mcp`: owner door, `Authorization: Bearer <owner token>`; 401 otherwise, with the
  RFC 6750 challenge (bare without a bearer, `error="invalid_token"` with a wrong one)
  and a JSON-RPC error that says which header to send.
- `/s/<secret>/mcp`: the same tools for clients that can only hold a URL; a wrong
  secret gets the same bare 404 as any unknown path.
- `/healthz`: liveness, head SHA, note count and the guest door's state; the
  rest (watcher, remote, broken policies) with `?detail=1` and the owner's bearer.
  `?challenge=<hex>` adds `proof`, which only this brain's server can give
  (`settings.identity_proof`): what `cortex stdio` checks before its token crosses.
- OAuth (`http/oauth.py`, unless CORTEX_OAUTH=off): the discovery documents, `/authorize`,
  `/token`, `/register` and `/revoke`, and `/mcp` with an OAuth access token, on the OAuth
  door's own MCP server (its commits name the client's registered name). Its 401 names the
  resource metadata. With OAuth off, the URLs OAuth clients probe are 404s whose body says
  to send the owner token instead.

Every MCP path checks Host and Origin against the allow-list exactly (a `:*`
pattern means a numeric port) before the SDK's own check, which matched
`localhost:*` as a prefix and let `localhost:1.evil.example` through.

Each door is its own MCPServer (with its own tool list), so an untrusted client
never sees a tool it may not call.
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import re
from collections.abc import AsyncIterator, Callable
from typing import Any, Protocol

import anyio
from mcp.server import MCPServer
from mcp.server.request_state import RequestStateSecurity
from mcp.server.streamable_http_manager import DEFAULT_SESSION_IDLE_TIMEOUT
from mcp.server.transport_security import TransportSecuritySettings
from mcp.types import INVALID_REQUEST
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import Route
from starlette.types import ASGIApp, Receive, Scope, Send

from cortex.guests.review import Review
from cortex.http.mcp_tools import follow_notes, trusted_server
from cortex.notes.redact import mask
from cortex.settings import Settings, allowed, identity_proof
from cortex.tools.toolset import Tools

# A challenge is 32 to 128 hex digits: a fresh random nonce, never text to sign.
CHALLENGE = re.compile(r"[0-9a-f]{32,128}")


class GuestDoorSet(Protocol):
    """The guest doors (`http.guest_door.GuestDoors`), as the router uses them."""

    def servers(self) -> list[MCPServer]: ...

    def lookup(self, secret: str) -> ASGIApp | None: ...


class OAuthEntry(Protocol):
    """The OAuth door (`http.oauth.OAuthDoor`), as the router uses it."""

    server: MCPServer  # the owner's tools, recording the OAuth client's registered name
    mcp_app: ASGIApp

    async def serve_route(self, scope: Scope, receive: Receive, send: Send, host: str) -> None: ...

    async def authenticate(self, scope: Scope, host: str) -> bool: ...

    async def serve_mcp(self, scope: Scope, receive: Receive, send: Send) -> None: ...

    def metadata_url(self, host: str) -> str | None: ...


__all__ = [
    "DoorRouter",
    "GuestDoorSet",
    "OAuthEntry",
    "RequestCount",
    "OAUTH_PATHS",
    "OAUTH_PROBES",
    "SEND_TOKEN",
    "bearer_challenge",
    "bearer_ok",
    "build_app",
    "door_app",
    "no_oauth",
    "transport_security",
    "unauthorized",
]


class RequestCount(Protocol):
    """Whom the doors tell of each MCP request (the meaning arm's `Traffic`, which its
    embedding yields to): `begin` at its start, and what it returns at its end or after
    `longest` seconds, whichever is first."""

    longest: float

    def begin(self) -> Callable[[], None]: ...


class DoorRouter:
    """ASGI dispatch of the MCP paths to their servers after each door's check."""

    _SECRET_PATH = re.compile(r"^/(s|g)/([^/]+)(/mcp/?)$")
    _SECRET_SEGMENT = re.compile(r"^/(s|g)/[^/]*")

    def __init__(
        self,
        app: Starlette,
        owner_token: str,
        url_secret: str | None,
        owner_app: ASGIApp,
        url_app: ASGIApp,
        guest_lookup: Callable[[str], ASGIApp | None] | None = None,
        hosts: list[str] | None = None,
        origins: list[str] | None = None,
        oauth: OAuthEntry | None = None,
        traffic: RequestCount | None = None,
    ):
        self.app = app
        self.traffic = traffic  # the meaning arm's: its embedding yields to each MCP request
        self.oauth = oauth  # http.oauth.OAuthDoor, or None with CORTEX_OAUTH=off
        self.hosts = hosts
        self.origins = origins
        self.owner_token = owner_token
        self.url_secret = url_secret
        self.owner_app = owner_app
        self.url_app = url_app
        self.guest_lookup = guest_lookup

    def _rebinding(self, scope: Scope) -> Response | None:
        """421/403 unless Host (and Origin, when sent) match the allow-lists exactly."""
        host, origin = _header(scope, b"host"), _header(scope, b"origin")
        if self.hosts is not None and not allowed(host, self.hosts):
            return PlainTextResponse("Invalid Host header", status_code=421)
        if self.origins is not None and origin and not allowed(origin, self.origins):
            return PlainTextResponse("Invalid Origin header", status_code=403)
        return None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        if self.traffic is None or not scope["path"].startswith(("/mcp", "/s/", "/g/")):
            await self._route(scope, receive, send)
            return
        end = self.traffic.begin()
        asyncio.get_running_loop().call_later(self.traffic.longest, end)  # a long request stops counting
        try:
            await self._route(scope, receive, send)
        finally:
            end()

    async def _route(self, scope: Scope, receive: Receive, send: Send) -> None:
        path = scope["path"]
        if path.startswith(("/s/", "/g/")):
            # The secret is in the path: mask it in the server's own record of the request,
            # which uvicorn's access log (and any outer middleware) reads when the response
            # starts. The door check below uses `path`, taken before the mask.
            masked = self._SECRET_SEGMENT.sub(r"/\1/redacted", path, count=1)
            scope["path"], scope["raw_path"] = masked, masked.encode("utf-8", "replace")
        oauth_path = self.oauth is not None and path in OAUTH_PATHS
        if path in ("/mcp", "/mcp/") or path.startswith(("/s/", "/g/")) or oauth_path:
            refusal = self._rebinding(scope)
            if refusal is not None:
                await refusal(scope, receive, send)
                return
        if oauth_path and self.oauth is not None:
            await self.oauth.serve_route(scope, receive, send, _header(scope, b"host"))
            return
        if path in ("/mcp", "/mcp/"):
            header = _header(scope, b"authorization")
            if bearer_ok(header, self.owner_token):
                await self.owner_app(dict(scope, path="/mcp"), receive, send)
                return
            host = _header(scope, b"host")
            if self.oauth is not None and _bearer(header) and await self.oauth.authenticate(scope, host):
                await self.oauth.serve_mcp(dict(scope, path="/mcp"), receive, send)
                return
            metadata = self.oauth.metadata_url(host) if self.oauth is not None else None
            await unauthorized(header, metadata)(scope, receive, send)
            return
        m = self._SECRET_PATH.match(path)
        if m:
            kind, secret = m.group(1), m.group(2)
            target = None
            if kind == "s" and self.url_secret and hmac.compare_digest(secret.encode(), self.url_secret.encode()):
                target = self.url_app
            elif kind == "g" and self.guest_lookup is not None:
                target = self.guest_lookup(secret)
            if target is not None:
                await target(dict(scope, path="/mcp", raw_path=b"/mcp"), receive, send)
                return
            await Response("Not Found", status_code=404)(scope, receive, send)
            return
        await self.app(scope, receive, send)


def _bearer(header: str) -> str:
    return header[7:].strip() if header[:7].lower() == "bearer " else ""


def bearer_ok(header: str, owner_token: str) -> bool:
    """`Authorization: Bearer <owner token>`, compared in constant time."""
    token = _bearer(header)
    return bool(token) and hmac.compare_digest(token.encode(), owner_token.encode())


SEND_TOKEN = "send Authorization: Bearer <owner token>"


def bearer_challenge(header: str, metadata: str | None = None) -> str:
    """The `WWW-Authenticate` value for a refused bearer (RFC 6750 section 3).

    No bearer at all (no header, or another scheme): the bare challenge, with no error
    code, as section 3.1 asks. A bearer that is neither the owner token nor an OAuth token
    for this door: `invalid_token`. `resource_metadata` (RFC 9728 section 5.1) when OAuth
    answers at this Host: where an OAuth client starts; without it, the MCP spec's discovery
    ends at "abort or use pre-configured values".
    """
    extra = f', resource_metadata="{metadata}"' if metadata else ""
    if not _bearer(header):
        return f'Bearer realm="cortex"{extra}'
    return f'Bearer realm="cortex", error="invalid_token", error_description="not the owner token; {SEND_TOKEN}"{extra}'


def unauthorized(header: str, metadata: str | None = None) -> Response:
    """The owner door's 401: the challenge, and a JSON-RPC error (no id) that MCP clients show."""
    reason = "not the owner token; " if _bearer(header) else ""
    return JSONResponse(
        {
            "jsonrpc": "2.0",
            "id": None,
            "error": {"code": INVALID_REQUEST, "message": f"Unauthorized: {reason}{SEND_TOKEN}"},
        },
        status_code=401,
        headers={"WWW-Authenticate": bearer_challenge(header, metadata)},
    )


# The paths the OAuth door (http/oauth.py) answers, routed to it before the app.
OAUTH_PATHS = frozenset(
    {
        "/.well-known/oauth-authorization-server",
        "/.well-known/oauth-protected-resource",
        "/.well-known/oauth-protected-resource/mcp",
        "/authorize",
        "/token",
        "/register",
        "/revoke",
    }
)

# Where OAuth clients (mcp-remote, the MCP Inspector, the SDKs' auth helpers) look after a
# 401: protected-resource and authorization-server metadata (RFC 9728, RFC 8414, OpenID
# discovery) for /mcp and the root, then dynamic client registration. mcp-remote and the
# Inspector print the body of the /register answer, so each one says what to do instead.
OAUTH_PROBES = ["/register", "/mcp/.well-known/openid-configuration"] + [
    f"/.well-known/{name}{suffix}"
    for name in ("oauth-protected-resource", "oauth-authorization-server", "openid-configuration")
    for suffix in ("", "/mcp")
]


def no_oauth(wrong_bearer: bool) -> Response:
    """A 404 like any unknown path, whose body tells an OAuth client's user what to send instead."""
    wrong = ", and the bearer token sent is not the owner token" if wrong_bearer else ""
    return PlainTextResponse(
        f"Not Found: Cortex does not do OAuth{wrong}. Send the owner token as a header, Authorization: Bearer "
        '<owner token> (mcp-remote: --header "Authorization: Bearer <owner token>"). The token is '
        "CORTEX_TOKEN, or $CORTEX_HOME/owner-token, printed by the first cortex serve.",
        status_code=404,
    )


def _header(scope: Scope, name: bytes) -> str:
    for key, value in scope.get("headers", []):
        if key.lower() == name:
            return str(value.decode("latin-1"))
    return ""


def door_app(
    server: MCPServer, security: TransportSecuritySettings, session_idle_s: float = DEFAULT_SESSION_IDLE_TIMEOUT
) -> Any:
    """The Streamable HTTP app of one door's MCPServer, answering each POST with one JSON body.

    Streamable HTTP lets a server answer a request with `application/json` or with an SSE
    stream, and a client must accept both. No tool here sends anything before its reply, so
    an SSE stream only ever carried that one reply, and it cost. brain_read at 1,000 notes
    (cortex bench --part door, a shared and loaded 2-core machine): the SDK client on the
    2025 handshake path (the one Claude's clients speak) went from 11.6 to 6.3 ms p50, a
    bare HTTP client's call from 4.0 to 2.7 ms of server CPU; on the 2026 path the SDK
    already answered quick calls with JSON, and its server CPU went from 2.9 to 2.3 ms.
    What JSON gives up is SSE's keep-alive ping every 15 s: behind a proxy that cuts a
    response with no first byte (Heroku at 30 s), a brain_ask slower than that fails where
    the stream would have held it; the reader's own timeout is 60 s. `session_idle_s`: how long
    a session may sit idle before the SDK ends it.
    """
    return server.streamable_http_app(
        streamable_http_path="/mcp",
        transport_security=security,
        json_response=True,
        session_idle_timeout=session_idle_s,
    )


def transport_security(settings: Settings) -> TransportSecuritySettings:
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True, allowed_hosts=settings.hosts(), allowed_origins=settings.origins()
    )


def _proof(challenge: str, owner_token: str, settings: Settings) -> dict[str, str]:
    """`proof` for a well-formed `?challenge=`: what `cortex stdio` checks before its token crosses."""
    if not CHALLENGE.fullmatch(challenge):
        return {}
    return {"proof": identity_proof(owner_token, challenge, settings.brain)}


def _behind(health: dict[str, Any]) -> str | None:
    """What public /healthz says while committed files are behind on disk (a read-only
    folder), until mended: how many, never which (?detail=1 names them)."""
    unwritten = (health.get("hand_edits") or {}).get("unwritten") or []
    if not unwritten:
        return None
    n = len(unwritten)
    return (
        f"{n} file{'s' if n != 1 else ''} of acknowledged writes could not be written to the working tree "
        "and are out of date on disk; ?detail=1 names them"
    )


def build_app(
    settings: Settings,
    tools: Tools,
    owner_token: str,
    url_secret: str | None,
    review: Review | None = None,
    guest_doors: GuestDoorSet | None = None,
    extra_routes: list[Route] | None = None,
    health: Callable[[], dict[str, Any]] | None = None,
    on_startup: list[Callable[[], Any]] | None = None,
    oauth: OAuthEntry | None = None,
    request_state: RequestStateSecurity | None = None,
) -> DoorRouter:
    """The whole HTTP app. Build a fresh one per server: each MCP session manager runs once.
    `oauth`: the OAuth door (`http.oauth.make_oauth`) or None; `request_state`: `mcp_tools.request_state`."""
    security = transport_security(settings)
    owner, url = (trusted_server(tools, door, review, state=request_state) for door in ("owner", "owner-url"))
    owner_app, url_app = door_app(owner, security), door_app(url, security)
    servers = [owner, url] + ([oauth.server] if oauth else []) + (list(guest_doors.servers()) if guest_doors else [])

    async def healthz(request: Request) -> JSONResponse:
        """Public: liveness, head, note count, guest door. `?detail=1` with the owner's bearer: everything."""
        detail = request.query_params.get("detail") not in (None, "", "0")
        if detail and not bearer_ok(request.headers.get("authorization", ""), owner_token):
            return JSONResponse(
                {"error": "?detail=1 needs Authorization: Bearer <owner token>"},
                status_code=401,
                headers={"WWW-Authenticate": bearer_challenge(request.headers.get("authorization", ""))},
            )
        head = tools.brain.head()
        body: dict[str, Any] = {"ok": True, "sha": head}
        body.update(_proof(request.query_params.get("challenge", ""), owner_token, settings))
        # Never waits for the index: during a first build it says how far it has got.
        body.update(tools.brain.index_state())
        extra = health() if health else {}
        if detail:  # the watcher's last error and held edits name paths and quote Git: masked
            body.update(mask(extra))
        elif "guest_door" in extra:
            body["guest_door"] = extra["guest_door"]
        behind = _behind(extra)
        if behind:
            body["working_tree"] = behind
        return JSONResponse(body)

    async def oauth_probe(request: Request) -> Response:
        """mcp-remote sends its --header values here too: say so when the bearer is wrong."""
        header = request.headers.get("authorization", "")
        return no_oauth(bool(_bearer(header)) and not bearer_ok(header, owner_token))

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        async with contextlib.AsyncExitStack() as stack:
            for server in servers:
                await stack.enter_async_context(server.session_manager.run())
            for fn in on_startup or []:
                fn()
            changes = await stack.enter_async_context(anyio.create_task_group())
            stack.callback(changes.cancel_scope.cancel)  # unwound first: the follower stops with the app
            changes.start_soon(follow_notes, tools)
            yield

    # With OAuth on, the router serves its paths before these; the rest of the probes
    # (OpenID discovery, the path-suffixed authorization-server form) stay 404s.
    routes = (
        [Route("/healthz", healthz)]
        + [Route(path, oauth_probe, methods=["GET", "POST"]) for path in OAUTH_PROBES]
        + list(extra_routes or [])
    )
    return DoorRouter(
        Starlette(routes=routes, lifespan=lifespan),
        owner_token,
        url_secret,
        owner_app,
        url_app,
        guest_doors.lookup if guest_doors else None,
        hosts=settings.hosts(),
        origins=settings.origins(),
        oauth=oauth,
        traffic=tools.brain.meaning.traffic if tools.brain.meaning is not None else None,
    )
