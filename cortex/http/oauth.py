"""OAuth 2.1 for the owner door: Cortex is its own authorization server and resource server.

The protocol is the MCP SDK's (`mcp.server.auth`): its authorize, token and register handlers,
its metadata routes and its bearer backend; /revoke is Cortex's (`_revocation`: the SDK's
refused a public client). This module supplies what the SDK
leaves to a server: the provider (`CortexProvider`: storage, the owner's consent, token
lifetimes and rotation) and where the door's URLs are (`OAuthDoor`).

- Discovery: `/.well-known/oauth-protected-resource` and `…/mcp` (RFC 9728),
  `/.well-known/oauth-authorization-server` (RFC 8414, with `client_id_metadata_document_
  supported` and `authorization_response_iss_parameter_supported`), and the owner door's 401
  names the resource metadata.
- Registration: `/register` (RFC 7591) or a Client ID Metadata Document (`client_documents`).
- Consent: `/authorize` checks the client and its redirect URI exactly (the SDK), then sends
  the browser to the console's consent page, where the signed-in owner approves or denies.
  Nothing is granted without that click; the answer carries `iss` (RFC 9207).
- Tokens: opaque, 256 random bits, kept only as SHA-256 digests. Access tokens live an hour;
  refresh tokens rotate on each use, and a refresh token used twice revokes its whole family
  (every token descended from the same consent), as does a code used twice. Every token is
  bound to the owner door's resource, `<issuer>/mcp`.
- Where: `CORTEX_PUBLIC_URL` is the issuer and the resource's origin, and a request whose Host
  is not its host is refused. Without it, OAuth answers on loopback Host names only
  (127.0.0.1, localhost, ::1 with the port the request came to), each its own issuer.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import logging
import re
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qs, urlsplit

import anyio
from mcp.server.auth.handlers.metadata import MetadataHandler, ProtectedResourceMetadataHandler
from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser, BearerAuthBackend
from mcp.server.auth.middleware.client_auth import AuthenticationError, ClientAuthenticator
from mcp.server.auth.provider import (
    AccessToken,
    AuthorizationCode,
    AuthorizationParams,
    IdentityAssertionParams,
    ProviderTokenVerifier,
    RefreshToken,
    TokenError,
    construct_redirect_uri,
)
from mcp.server.auth.routes import build_metadata, cors_middleware, create_auth_routes
from mcp.server.auth.settings import ClientRegistrationOptions, RevocationOptions
from mcp.server.transport_security import DEFAULT_MAX_REQUEST_BODY_SIZE, RequestBodyLimitMiddleware
from mcp.shared.auth import OAuthClientInformationFull, OAuthMetadata, OAuthToken, ProtectedResourceMetadata
from mcp.shared.inbound import MCP_PROTOCOL_VERSION_HEADER
from pydantic import AnyHttpUrl, AnyUrl, ValidationError
from starlette.applications import Starlette
from starlette.middleware.cors import CORSMiddleware
from starlette.requests import HTTPConnection, Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import Route, request_response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from cortex.ask.neutralize import client_text
from cortex.errors import CortexError
from cortex.guests.review import Review
from cortex.http.client_documents import DocumentRefused, Fetcher, is_document_url
from cortex.http.console.auth import Throttle
from cortex.http.doors import door_app, transport_security
from cortex.http.mcp_tools import trusted_server
from cortex.http.oauth_records import FileRecords, Records
from cortex.http.server_parts import ServerParts

__all__ = [
    "ACCESS_SECONDS",
    "CODE_SECONDS",
    "CONSENT_PATH",
    "CortexProvider",
    "OAuthDoor",
    "REFRESH_SECONDS",
    "SCOPE",
    "digest",
    "make_oauth",
    "oauth_client_name",
    "oauth_who",
]

log = logging.getLogger(__name__)

ACCESS_SECONDS = 3600
REFRESH_SECONDS = 30 * 86_400  # a refresh token unused for 30 days ends its family
CODE_SECONDS = 300
PENDING_SECONDS = 600  # the owner has ten minutes to answer the consent page
DOCUMENT_SECONDS = 3600  # a client's metadata document is fetched again after an hour
TOUCH_SECONDS = 60  # a client's "last use" is written at most once a minute
SCOPE = "brain"  # the one scope: the owner door's tools
# Registration is open, so what it costs is bounded: a client that never gets a token is
# forgotten after a day, and no more than MAX_CLIENTS are kept at once.
UNUSED_CLIENT_SECONDS = 86_400
MAX_CLIENTS = 500
# One registration's size and its fields' (10 registrations of 3.9 MB made a 40 MB file that
# every change rewrote); registrations per address an hour; consents waiting, per client and
# in all (the oldest goes first).
MAX_REGISTRATION_BYTES = 8 * 1024
MAX_FIELD_CHARS = 2000
MAX_REDIRECT_URIS = 10
REGISTRATIONS_PER_HOUR = 10
MAX_PENDING_PER_CLIENT = 10
MAX_PENDING = 200
CONSENT_PATH = "/console/oauth/consent"
MAX_BASES = 8  # loopback issuers (Host spellings and ports) kept at once without a public URL


def _oversized(info: dict[str, Any], uris: int) -> str | None:
    """Why a registration is too big to keep (one line), or None."""
    size = len(json.dumps(info))
    if size > MAX_REGISTRATION_BYTES:
        return f"a registration is at most {MAX_REGISTRATION_BYTES // 1024} KB; this one is {size:,} bytes"
    if uris > MAX_REDIRECT_URIS:
        return f"at most {MAX_REDIRECT_URIS} redirect URIs; this registration names {uris}"
    for name, value in info.items():
        values = value if isinstance(value, list) else [value]
        if any(isinstance(v, str) and len(v) > MAX_FIELD_CHARS for v in values):
            return f"the field {name} is longer than {MAX_FIELD_CHARS} characters"
    return None


def digest(secret: str) -> str:
    """What is stored of a code or a token: its SHA-256 (256 random bits need no salt)."""
    return hashlib.sha256(secret.encode("utf-8", "replace")).hexdigest()


# A redirect URI's authority: a host name, an IPv4 or a bracketed IPv6 address, and a port.
# Nothing else: the consent page shows the host, and its CSP names the origin.
_LABEL = r"[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?"
_HOST_PORT = re.compile(rf"(?:{_LABEL}(?:\.{_LABEL})*|\[[0-9A-Fa-f:.]+\])(?::[0-9]{{1,5}})?")


def _redirect_ok(uri: str) -> bool:
    """https anywhere, http on a loopback host only (RFC 8252), a native app's own scheme; never
    a scheme a browser would run or read (javascript:, data:, file:, blob:, vbscript:)."""
    parts = urlsplit(uri)
    scheme = parts.scheme.lower()
    if scheme in ("javascript", "data", "file", "blob", "vbscript", "about", "") or parts.fragment:
        return False
    if parts.netloc and not _HOST_PORT.fullmatch(parts.netloc):
        return False  # user info ("claude.ai@evil.example") or a character no host name has
    if scheme == "http":
        return parts.hostname in ("127.0.0.1", "localhost", "::1")
    return True


@dataclass
class Pending:
    """An authorization request waiting on the owner's answer."""

    id: str
    client_id: str
    client_name: str
    redirect_uri: str
    state: str | None
    issuer: str


@dataclass
class CortexProvider:
    """The SDK's OAuthAuthorizationServerProvider, on Cortex's records."""

    records: Records
    fetcher: Fetcher = field(default_factory=Fetcher)
    clock: Callable[[], float] = time.time  # tests move it to expire codes
    resource: str = ""  # `<issuer>/mcp`: OAuthDoor makes one provider an issuer
    _touched: dict[str, float] = field(default_factory=dict)  # shared by the issuers' copies

    # -- clients ----------------------------------------------------------

    async def get_client(self, client_id: str) -> OAuthClientInformationFull | None:
        record = self.records.get(f"client:{client_id}")
        if record is not None and (
            record.get("kind") != "document" or record.get("fetched", 0) > self.clock() - DOCUMENT_SECONDS
        ):
            return OAuthClientInformationFull.model_validate(record["info"])
        if not is_document_url(client_id):
            return None
        try:
            doc = await anyio.to_thread.run_sync(self.fetcher.fetch, client_id)
            info = self._document_client(client_id, doc)
        except (DocumentRefused, ValidationError) as exc:
            log.warning("oauth: client_id document refused: %s", str(exc).splitlines()[0])
            return None
        kept = record or {"registered": self.clock(), "first_used": None, "last_used": None}
        self.records.put(
            f"client:{client_id}",
            dict(kept, info=info.model_dump(mode="json"), kind="document", fetched=self.clock()),
            ttl=None if kept.get("first_used") else UNUSED_CLIENT_SECONDS,
        )
        return info

    @staticmethod
    def _document_client(client_id: str, doc: dict[str, Any]) -> OAuthClientInformationFull:
        uris = [str(u) for u in doc["redirect_uris"]]
        if not all(isinstance(u, str) and _redirect_ok(u) for u in uris):
            raise DocumentRefused("the client_id document names a redirect URI Cortex does not send codes to")
        scope = " ".join(sorted(set(str(doc.get("scope") or "").split()) | {SCOPE}))
        return OAuthClientInformationFull(
            client_id=client_id,
            client_name=str(doc.get("client_name") or urlsplit(client_id).hostname),
            redirect_uris=[AnyUrl(u) for u in uris],
            grant_types=["authorization_code", "refresh_token"],
            response_types=["code"],
            token_endpoint_auth_method="none",  # a document cannot hold a secret
            scope=scope,
        )

    async def register_client(self, client_info: OAuthClientInformationFull) -> None:
        from mcp.server.auth.provider import RegistrationError

        uris = [str(u) for u in client_info.redirect_uris or []]
        bad = [u for u in uris if not _redirect_ok(u)]
        if bad:
            raise RegistrationError(
                "invalid_redirect_uri",
                f"redirect URI {bad[0][:200]!r} refused: use https, or http on 127.0.0.1/localhost",
            )
        if client_info.scope is not None and SCOPE not in client_info.scope.split():
            client_info.scope = f"{client_info.scope} {SCOPE}"
        too_big = _oversized(client_info.model_dump(mode="json"), len(uris))
        if too_big:
            raise RegistrationError("invalid_client_metadata", too_big)
        if len(self.records.scan("client:")) >= MAX_CLIENTS:
            raise RegistrationError(
                "invalid_client_metadata", f"{MAX_CLIENTS} clients are registered; revoke some on the console first"
            )
        self.records.put(
            f"client:{client_info.client_id}",
            {
                "info": client_info.model_dump(mode="json"),
                "kind": "registered",
                "registered": self.clock(),
                "first_used": None,
                "last_used": None,
            },
            ttl=UNUSED_CLIENT_SECONDS,  # until its first token (`_touch` keeps it for good)
        )

    def clients(self) -> list[dict[str, Any]]:
        """Every client, for the console: name, redirect URIs, kind, first and last use."""
        found = []
        for key, record in self.records.scan("client:"):
            info = record.get("info", {})
            found.append(
                {
                    "client_id": key[len("client:") :],
                    "name": info.get("client_name") or "(no name)",
                    "redirect_uris": info.get("redirect_uris") or [],
                    "kind": record.get("kind", "registered"),
                    "registered": record.get("registered"),
                    "first_used": record.get("first_used"),
                    "last_used": record.get("last_used"),
                }
            )
        return sorted(found, key=lambda c: -(c["last_used"] or c["registered"] or 0))

    def revoke_client(self, client_id: str) -> int:
        """End every token of one client and forget it; the number of families ended."""
        families = [k for k, rec in self.records.scan("family:") if rec.get("client_id") == client_id]
        self.records.delete(f"client:{client_id}", *families)
        self._touched.pop(client_id, None)
        log.info("oauth: client revoked (%d token families ended)", len(families))
        return len(families)

    def revoke_unused(self, days: int) -> int:
        """Revoke every client not used for `days` days (never used: registered that long
        ago); the number revoked. One action for the owner after a flood of registrations."""
        cutoff = self.clock() - days * 86_400
        stale = [c["client_id"] for c in self.clients() if (c["last_used"] or c["registered"] or 0) <= cutoff]
        for client_id in stale:
            self.revoke_client(client_id)
        return len(stale)

    def _touch(self, client_id: str, first: bool = False) -> None:
        now = self.clock()
        if not first and self._touched.get(client_id, 0) > now - TOUCH_SECONDS:
            return
        self._touched[client_id] = now
        record = self.records.get(f"client:{client_id}")
        if record is not None:
            record["last_used"] = now
            record["first_used"] = record.get("first_used") or now
            self.records.put(f"client:{client_id}", record)

    # -- consent ----------------------------------------------------------

    def issuer_for(self, resource: str) -> str:
        return resource[: -len("/mcp")] if resource.endswith("/mcp") else resource

    async def authorize(self, client: OAuthClientInformationFull, params: AuthorizationParams) -> str:
        """Called by the SDK once the client and its redirect URI are checked: hold the request and
        send the browser to the console's consent page. `params.resource` was set to this door's
        resource by `OAuthDoor` when the client named none; any other resource is refused here."""
        expected = self.resource
        issuer = self.issuer_for(expected)
        if params.resource is not None and params.resource.rstrip("/") != expected:
            return construct_redirect_uri(
                str(params.redirect_uri),
                error="invalid_target",
                error_description="this server's only resource is " + expected,
                state=params.state,
                iss=issuer,
            )
        self._make_room(client.client_id)
        pending = secrets.token_urlsafe(24)
        self.records.put(
            f"pending:{pending}",
            {
                "client_id": client.client_id,
                "params": params.model_dump(mode="json"),
                "resource": expected,
                "issuer": issuer,
                "created": self.clock(),
            },
            ttl=PENDING_SECONDS,
        )
        return f"{CONSENT_PATH}?request={pending}"

    def _make_room(self, client_id: str) -> None:
        """Forget the oldest consent requests waiting past MAX_PENDING_PER_CLIENT for
        `client_id` or MAX_PENDING in all, so a new one fits."""
        waiting = sorted(self.records.scan("pending:"), key=lambda kv: kv[1].get("created", 0))
        mine = [k for k, v in waiting if v.get("client_id") == client_id]
        gone = mine[: max(0, len(mine) - MAX_PENDING_PER_CLIENT + 1)]
        rest = [k for k, _ in waiting if k not in gone]
        gone += rest[: max(0, len(rest) - MAX_PENDING + 1)]
        if gone:
            self.records.delete(*gone)

    def pending(self, request_id: str) -> Pending | None:
        record = self.records.get(f"pending:{request_id}") if request_id else None
        if record is None:
            return None
        client = self.records.get(f"client:{record['client_id']}")
        if client is None:
            return None
        params = record["params"]
        name = client["info"].get("client_name") or "(a client with no name)"
        return Pending(request_id, record["client_id"], name, params["redirect_uri"], params["state"], record["issuer"])

    def answer(self, request_id: str, approve: bool) -> str | None:
        """The owner's answer: the redirect to the client, with a code or access_denied (and iss);
        None when the request is gone (answered already, expired, or its client revoked)."""
        record = self.records.claim(f"pending:{request_id}") if request_id else None
        if record is None or record.get("used"):
            return None
        self.records.delete(f"pending:{request_id}")
        if self.records.get(f"client:{record['client_id']}") is None:
            return None
        params = AuthorizationParams.model_validate(record["params"])
        if not approve:
            log.info("oauth: consent denied")
            return construct_redirect_uri(
                str(params.redirect_uri), error="access_denied", state=params.state, iss=record["issuer"]
            )
        code = secrets.token_urlsafe(32)
        self.records.put(
            f"code:{digest(code)}",
            {
                "client_id": record["client_id"],
                "scopes": params.scopes or [SCOPE],
                "expires_at": self.clock() + CODE_SECONDS,
                "code_challenge": params.code_challenge,
                "redirect_uri": str(params.redirect_uri),
                "redirect_uri_provided_explicitly": params.redirect_uri_provided_explicitly,
                "resource": record["resource"],
            },
            ttl=CODE_SECONDS + 600,  # the used mark outlives the code, so a second use is seen
        )
        log.info("oauth: consent approved")
        return construct_redirect_uri(str(params.redirect_uri), code=code, state=params.state, iss=record["issuer"])

    # -- codes and tokens -------------------------------------------------

    def _end_family(self, family: str | None, why: str) -> None:
        if family:
            self.records.delete(f"family:{family}")
            log.warning("oauth: token family revoked: %s", why)

    async def load_authorization_code(
        self, client: OAuthClientInformationFull, authorization_code: str
    ) -> AuthorizationCode | None:
        key = f"code:{digest(authorization_code)}"
        peek = self.records.get(key)
        if peek is None or peek["client_id"] != client.client_id:
            return None
        record = self.records.claim(key)  # used once, whatever the SDK finds next (PKCE, expiry)
        if record is None:
            return None
        if record.get("used"):
            self._end_family(record.get("family"), "an authorization code was used twice")
            return None
        fields = {k: record[k] for k in AuthorizationCode.model_fields if k in record}
        return AuthorizationCode(code=authorization_code, **fields)

    def _issue(self, client_id: str, scopes: list[str], resource: str, family: str) -> OAuthToken:
        access, refresh, now = secrets.token_urlsafe(32), secrets.token_urlsafe(32), self.clock()
        base = {"client_id": client_id, "scopes": scopes, "resource": resource, "family": family}
        self.records.put(f"family:{family}", {"client_id": client_id, "since": now}, ttl=REFRESH_SECONDS)
        self.records.put(
            f"access:{digest(access)}", dict(base, expires_at=int(now) + ACCESS_SECONDS), ttl=ACCESS_SECONDS
        )
        self.records.put(
            f"refresh:{digest(refresh)}", dict(base, expires_at=int(now) + REFRESH_SECONDS), ttl=REFRESH_SECONDS
        )
        return OAuthToken(
            access_token=access,
            token_type="Bearer",
            expires_in=ACCESS_SECONDS,
            refresh_token=refresh,
            scope=" ".join(scopes),
        )

    async def exchange_authorization_code(
        self, client: OAuthClientInformationFull, authorization_code: AuthorizationCode
    ) -> OAuthToken:
        family = secrets.token_urlsafe(16)
        key = f"code:{digest(authorization_code.code)}"
        used = self.records.get(key) or {}
        self.records.put(key, dict(used, used=True, family=family), ttl=CODE_SECONDS + 600)
        self._touch(client.client_id, first=True)
        resource = authorization_code.resource or self.resource
        return self._issue(client.client_id, authorization_code.scopes, resource, family)

    async def load_refresh_token(self, client: OAuthClientInformationFull, refresh_token: str) -> RefreshToken | None:
        record = self.records.get(f"refresh:{digest(refresh_token)}")
        if record is None:
            return None
        if record.get("used"):
            self._end_family(record.get("family"), "a refresh token was used twice")
            return None
        if record["client_id"] != client.client_id or self.records.get(f"family:{record['family']}") is None:
            return None
        fields = {k: record[k] for k in RefreshToken.model_fields if k in record}
        return RefreshToken(token=refresh_token, **fields)

    async def exchange_refresh_token(
        self, client: OAuthClientInformationFull, refresh_token: RefreshToken, scopes: list[str]
    ) -> OAuthToken:
        record = self.records.claim(f"refresh:{digest(refresh_token.token)}")
        if record is None or record.get("used"):
            self._end_family((record or {}).get("family"), "a refresh token was used twice")
            raise TokenError("invalid_grant", "refresh token already used; sign in again")
        if self.records.get(f"family:{record['family']}") is None:
            raise TokenError("invalid_grant", "refresh token revoked; sign in again")
        self._touch(client.client_id)
        return self._issue(client.client_id, scopes, record["resource"], record["family"])

    async def load_access_token(self, token: str) -> AccessToken | None:
        """The access token's grant, or None: unknown, revoked, or expired. Expired from its
        `expires_at` second on (the SDK's bearer check compares it with `int(time.time())` by `<`,
        which let a token through for up to a second past it)."""
        record = self.records.get(f"access:{digest(token)}")
        if record is None or self.clock() >= record["expires_at"]:
            return None
        family, client = self.records.get_many([f"family:{record['family']}", f"client:{record['client_id']}"])
        if family is None or client is None:
            return None
        self._touch(record["client_id"])
        name = client["info"].get("client_name") or record["client_id"]
        return AccessToken(
            token=token,
            client_id=record["client_id"],
            scopes=record["scopes"],
            expires_at=record["expires_at"],
            resource=record["resource"],
            claims={"client_name": name},
        )

    async def revoke_token(self, token: AccessToken | RefreshToken) -> None:
        """The SDK provider's revoke (Cortex's /revoke calls `revoke_for`): either token of a
        pair ends the pair, and every token of its family."""
        self.revoke_for(token.client_id, token.token)

    def revoke_for(self, client_id: str, token: str) -> None:
        """/revoke's work: `token`, an access or a refresh token issued to `client_id`, ends its
        family (expired or not). Another client's token, or an unknown one, changes nothing; the
        answer is the same either way (RFC 7009 2.2), so it tells nothing about the token."""
        for record in self.records.get_many([f"access:{digest(token)}", f"refresh:{digest(token)}"]):
            if record is not None and record.get("client_id") == client_id:
                self._end_family(record.get("family"), "revoked at /revoke")

    async def exchange_identity_assertion(
        self, client: OAuthClientInformationFull, params: IdentityAssertionParams
    ) -> OAuthToken:
        """The enterprise ID-JAG grant (SEP-990): refused, as the SDK's default is. Every token
        Cortex issues rests on the owner's click on the consent page."""
        raise TokenError(
            error="unsupported_grant_type",
            error_description="The JWT bearer grant is not supported by this authorization server",
        )


def oauth_client_name(scope: dict[str, Any]) -> str | None:
    """The registered name of the OAuth client a request was made with, for commit trailers."""
    user = scope.get("user")
    if isinstance(user, AuthenticatedUser):
        return str((user.access_token.claims or {}).get("client_name") or user.access_token.client_id)
    return None


def oauth_who(ctx: Any) -> str:
    """The Cortex-Client trailer of a write through the OAuth door: the client's registered name."""
    try:
        name = oauth_client_name(ctx.request_context.request.scope)
    except Exception:  # noqa: BLE001 - no HTTP request behind the call
        name = None
    return client_text(name) if name else "unknown"


RECHECK_S = 1.0  # how often a running request's access token is looked at again (a listen stream)


class OAuthDoor:
    """The OAuth routes and the owner door's token check, for one issuer (CORTEX_PUBLIC_URL) or,
    without one, for each loopback Host the server is reached at."""

    def __init__(
        self,
        provider: CortexProvider,
        public_url: str | None,
        server: Any,
        mcp_app: Any,
    ):
        self.provider = provider
        self.public_url = public_url.rstrip("/") if public_url else None
        self.server = server  # the owner's tools, recording the OAuth client's registered name
        self.mcp_app = mcp_app
        self._apps: dict[str, tuple[Any, BearerAuthBackend]] = {}
        # Anonymous registrations per client address (the socket's, or a trusted proxy's
        # X-Forwarded-For as uvicorn reads it): 487 junk ones filled the client cap in 8.9 s.
        self.registrations = Throttle(max_failures=REGISTRATIONS_PER_HOUR, window=3600.0)

    async def tool_names(self) -> list[str]:
        """What a client the owner approves can call: the owner door's tools."""
        return [tool.name for tool in await self.server.list_tools()]

    def issuer(self, host: str) -> str | None:
        """The issuer a request with this Host is served as; None when it is refused."""
        if self.public_url is not None:
            return self.public_url if host.lower() == urlsplit(self.public_url).netloc.lower() else None
        try:
            parts = urlsplit(f"http://{host}")
            name, port = parts.hostname, parts.port
        except ValueError:
            return None
        if name not in ("127.0.0.1", "localhost", "::1") or port is None:
            return None
        return f"http://{'[::1]' if name == '::1' else name}:{port}"

    def refused(self, host: str) -> Response:
        if self.public_url is not None:
            why = f"this Host is not CORTEX_PUBLIC_URL's ({urlsplit(self.public_url).netloc})"
        else:
            why = "without CORTEX_PUBLIC_URL, OAuth answers at 127.0.0.1, localhost or [::1] only"
        return PlainTextResponse(f"Misdirected Request: {why}", status_code=421)

    def _parts(self, issuer: str) -> tuple[Any, BearerAuthBackend]:
        found = self._apps.get(issuer)
        if found is not None:
            return found
        if len(self._apps) >= MAX_BASES:
            self._apps.pop(next(iter(self._apps)))
        url = AnyHttpUrl(issuer)
        resource = AnyHttpUrl(issuer + "/mcp")
        registration = ClientRegistrationOptions(enabled=True, default_scopes=[SCOPE])
        revocation = RevocationOptions(enabled=True)
        provider = dataclasses.replace(self.provider, resource=issuer + "/mcp")
        routes = create_auth_routes(provider, url, None, registration, revocation)
        # The SDK's metadata, plus what its builder leaves out: Client ID Metadata Documents
        # and `iss` in the authorization response, both of which Cortex does.
        # Issuer URLs compare as strings (RFC 8414, RFC 9207), so each document names the issuer
        # exactly as `iss` does, with no trailing slash (the models keep an empty path empty).
        built = build_metadata(url, None, registration, revocation).model_dump(mode="json", exclude_none=True)
        metadata = OAuthMetadata.model_validate(
            dict(
                built,
                issuer=issuer,
                scopes_supported=[SCOPE],
                # public clients (no secret, PKCE only) are what most MCP clients register as
                token_endpoint_auth_methods_supported=["client_secret_post", "client_secret_basic", "none"],
                revocation_endpoint_auth_methods_supported=["client_secret_post", "client_secret_basic", "none"],
                client_id_metadata_document_supported=True,
                authorization_response_iss_parameter_supported=True,
            )
        )
        assert getattr(routes[0], "path", "") == "/.well-known/oauth-authorization-server"  # the SDK's order
        routes[0] = Route(
            "/.well-known/oauth-authorization-server",
            endpoint=cors_middleware(MetadataHandler(metadata).handle, ["GET", "OPTIONS"]),
            methods=["GET", "OPTIONS"],
        )
        prm = ProtectedResourceMetadataHandler(
            ProtectedResourceMetadata.model_validate(
                {
                    "resource": issuer + "/mcp",
                    "authorization_servers": [issuer],
                    "scopes_supported": [SCOPE],
                    "resource_name": "Cortex",
                }
            )
        )
        revoke = [i for i, r in enumerate(routes) if getattr(r, "path", "") == "/revoke"]
        assert len(revoke) == 1  # the SDK's, replaced: see `_revocation`
        routes[revoke[0]] = Route("/revoke", endpoint=_revocation(provider), methods=["POST", "OPTIONS"])
        for path in ("/.well-known/oauth-protected-resource/mcp", "/.well-known/oauth-protected-resource"):
            routes.append(
                Route(path, endpoint=cors_middleware(prm.handle, ["GET", "OPTIONS"]), methods=["GET", "OPTIONS"])
            )
        backend = BearerAuthBackend(ProviderTokenVerifier(provider), resource_server_url=resource)
        self._apps[issuer] = (Starlette(routes=routes), backend)
        return self._apps[issuer]

    def metadata_url(self, host: str) -> str | None:
        issuer = self.issuer(host)
        return f"{issuer}/.well-known/oauth-protected-resource/mcp" if issuer else None

    async def serve_route(self, scope: Scope, receive: Receive, send: Send, host: str) -> None:
        issuer = self.issuer(host)
        if issuer is None:
            await self.refused(host)(scope, receive, send)
            return
        app, _ = self._parts(issuer)
        if scope.get("path") == "/authorize":
            receive, refusal = await _unproven_request(scope, receive, issuer + "/mcp")
            if refusal is not None:
                await refusal(scope, receive, send)
                return
        if scope.get("path") == "/register" and scope.get("method") == "POST":
            addr = (scope.get("client") or ("unknown", 0))[0]
            wait = self.registrations.retry_after(addr)
            if wait is not None:
                await _too_many(wait)(scope, receive, send)
                return
            self.registrations.fail(addr)  # counts each registration, kept or refused
        # A records store that is away (Redis) raises inside the SDK's handler: Starlette
        # answers 500, and no token was issued.
        await app(scope, receive, send)

    async def serve_mcp(self, scope: Scope, receive: Receive, send: Send) -> None:
        """The owner's tools for a request `authenticate` let in, for as long as its access token
        stays good: looked at again every `RECHECK_S` while the request runs, and at its expiry
        itself, a revoked client, a revoked family or an expired token ends it (a
        `subscriptions/listen` stream stays open for hours, and went on telling a revoked client
        which notes changed; a look once a second let it run up to a second past its expiry)."""
        access = getattr(scope.get("user"), "access_token", None)
        token, expires = getattr(access, "token", None), getattr(access, "expires_at", None)
        if not isinstance(token, str):
            await self.mcp_app(scope, receive, send)
            return
        async with anyio.create_task_group() as group:

            async def watch() -> None:
                while True:
                    left = RECHECK_S if expires is None else expires - self.provider.clock()
                    await anyio.sleep(min(RECHECK_S, max(left, 0.0)))
                    if await self.provider.load_access_token(token) is None:  # revoked or expired
                        log.info("oauth: a request's token lapsed while it ran; it is ended")
                        group.cancel_scope.cancel()
                        return

            group.start_soon(watch)
            await self.mcp_app(scope, receive, send)
            group.cancel_scope.cancel()

    async def authenticate(self, scope: Scope, host: str) -> bool:
        """Whether the request's bearer is an OAuth access token issued for this door's resource
        at this Host; sets the request's user (the SDK binds MCP sessions to it)."""
        issuer = self.issuer(host)
        if issuer is None:
            return False
        _, backend = self._parts(issuer)
        try:
            found = await backend.authenticate(HTTPConnection(scope))
        except CortexError:
            return False
        if not found:
            return False
        scope["auth"], scope["user"] = found
        return True


async def _unproven_request(scope: Scope, receive: Receive, resource: str) -> tuple[Receive, Response | None]:
    """A 400 page for an /authorize request the SDK would answer by redirecting its error to the
    client's redirect URI: anyone can register one, so an error sent there makes the owner's
    domain an open redirector (RFC 9700 4.11.2). A code flow with an S256 challenge for this
    resource goes on to the SDK; the consent page is where the owner decides. A POST's body is
    read here and handed on."""
    body = b""
    if scope.get("method") == "POST":
        more = True
        while more and len(body) <= 64 * 1024:
            message = await receive()
            body += message.get("body", b"")
            more = message.get("more_body", False)
    query = body.decode("latin-1") if body else scope.get("query_string", b"").decode("latin-1")
    params = {k: v[-1] for k, v in parse_qs(query).items()}
    why = None
    if params.get("response_type") != "code":
        why = "response_type must be code"
    elif not params.get("code_challenge") or params.get("code_challenge_method", "S256") != "S256":
        why = "a PKCE S256 code_challenge is required"
    elif params.get("resource") and params["resource"].rstrip("/") != resource:
        why = f"this server's only resource is {resource}"
    sent = False

    async def replay() -> Message:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    if why is None:
        return (replay if body else receive), None
    page = PlainTextResponse(f"Bad Request: {why}; nothing was sent to the client's redirect URI", status_code=400)
    return receive, page


def _revocation(provider: CortexProvider) -> ASGIApp:
    """POST /revoke (RFC 7009) in place of the SDK's, whose request model requires a
    `client_secret` field (mcp 2.3): a public client (token_endpoint_auth_method "none", as the
    MCP clients Cortex was tested with register) sending `token` and `client_id` as the RFC says
    got "client_secret: Field required", and its token stayed live. A client authenticates as at
    /token, by the SDK's own ClientAuthenticator, so a confidential client still needs its secret.
    Wrapped as the SDK wraps its own: CORS outermost, then its body limit."""
    authenticator = ClientAuthenticator(provider)

    async def revoke(request: Request) -> Response:
        try:
            client = await authenticator.authenticate_request(request)
        except AuthenticationError as exc:
            return JSONResponse({"error": "invalid_client", "error_description": exc.message}, status_code=401)
        token = (await request.form()).get("token")
        if not isinstance(token, str) or not token:
            return JSONResponse(
                {"error": "invalid_request", "error_description": "token: send the token to revoke"}, status_code=400
            )
        provider.revoke_for(client.client_id, token)
        return Response(status_code=200, headers={"Cache-Control": "no-store", "Pragma": "no-cache"})

    return CORSMiddleware(
        RequestBodyLimitMiddleware(request_response(revoke), DEFAULT_MAX_REQUEST_BODY_SIZE),
        allow_origins="*",
        allow_methods=["POST", "OPTIONS"],
        allow_headers=[MCP_PROTOCOL_VERSION_HEADER],
    )


def _too_many(wait: int) -> Response:
    """429 for a registration past REGISTRATIONS_PER_HOUR from one address (RFC 6585)."""
    return JSONResponse(
        {
            "error": "invalid_client_metadata",
            "error_description": f"at most {REGISTRATIONS_PER_HOUR} registrations an hour from one address; "
            f"try again in {wait} s",
        },
        status_code=429,
        headers={"Retry-After": str(wait)},
    )


def make_oauth(parts: ServerParts, review: Review | None) -> OAuthDoor | None:
    """The OAuth door of an assembled server, or None with CORTEX_OAUTH=off. Its records are in
    Redis in hosted mode with REDIS_URL (shared by every instance), else in the state folder."""
    s = parts.settings
    if s.oauth == "off":
        return None
    records: Records
    if s.remote and s.redis_url:
        from cortex.guests.queue import RedisRecords

        records = RedisRecords(s.redis_url)
    else:
        records = FileRecords(s.home / "oauth.json")
    server = trusted_server(parts.tools, "owner-oauth", review, who=oauth_who, state=parts.request_state)
    return OAuthDoor(CortexProvider(records), s.public_url, server, door_app(server, transport_security(s)))
