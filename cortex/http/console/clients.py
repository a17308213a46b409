"""The console's OAuth pages: the consent page an authorization request opens, and the list of
OAuth clients with their revoke buttons.

- `GET /console/oauth/consent?request=<id>`: the signed-in owner sees the client's name (a
  registered client's own claim, or a metadata document's, whose host is shown), the host its
  answer goes back to, and the owner door's tools it would be able to call; Approve or Deny.
  Not signed in: the sign-in form, which comes back here. The request was checked by the
  SDK's `/authorize` (client known, redirect URI registered exactly) before this page is shown.
- `POST /console/oauth/consent`: the console's CSRF token and same-origin check (a cross-site
  post is refused and grants nothing), then the redirect to the client with a code or
  `access_denied`, and `iss`. The page's CSP allows the form to go on to that one origin only.
- `GET /console/clients` and `POST /console/clients/revoke`: every client with its redirect
  URIs, first and last use; revoking ends all of its tokens at once.
- `POST /console/clients/revoke-unused`: every client unused for a chosen number of days
  (0: every one), in one action: after a flood of junk registrations, one click.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Awaitable, Callable
from typing import Any, Protocol
from urllib.parse import urlsplit

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import Route

from cortex.http.console.auth import Session

__all__ = ["ClientPages", "client_routes", "form_action"]


def form_action(redirect_uri: str) -> str:
    """The CSP source for the one place the consent form may go on to: the redirect URI's origin
    (`https://claude.ai`), or a native app's scheme (`cursor:`)."""
    parts = urlsplit(redirect_uri)
    if parts.scheme in ("http", "https"):
        return f"{parts.scheme}://{parts.netloc}"
    return f"{parts.scheme}:"


def _when(t: float | None) -> str:
    if not t:
        return "never"
    return dt.datetime.fromtimestamp(t, dt.UTC).strftime("%Y-%m-%d %H:%M UTC")


UNUSED_CHOICES = (0, 1, 7, 30, 90)  # days a client went unused: what "Revoke unused" offers


Handler = Callable[[Request, Session | None, dict[str, str]], Awaitable[Response]]


class ConsolePages(Protocol):
    """The console (`routes.Console`) as these pages use it; named here, not imported, since the
    console imports this module (and the OAuth door, typed Any here, imports the console's)."""

    def render(
        self, request: Request, session: Session | None, template: str, status: int = 200, **context: Any
    ) -> Response: ...

    def _signin_page(
        self, request: Request, status: int = 200, error: str | None = None, next_page: str | None = None
    ) -> Response: ...

    def page(self, handler: Handler, auth: bool = True) -> Callable[[Request], Awaitable[Response]]: ...


class ClientPages:
    def __init__(self, console: ConsolePages, oauth: Any):  # oauth: http.oauth.OAuthDoor
        self.console = console
        self.oauth = oauth

    def _message(self, request: Request, session: Session | None, status: int, message: str) -> Response:
        return self.console.render(request, session, "message.html", status=status, title="Error", message=message)

    async def consent(self, request: Request, session: Session | None, form: dict[str, str]) -> Response:
        request_id = request.query_params.get("request", "")
        pending = await run_in_threadpool(self.oauth.provider.pending, request_id)
        if pending is None:
            return self._message(
                request, session, 400, "This sign-in request has expired or was answered; start again from the client."
            )
        if session is None:
            return self.console._signin_page(request, next_page=f"/console/oauth/consent?request={request_id}")
        client = await run_in_threadpool(self.oauth.provider.records.get, f"client:{pending.client_id}")
        document = (client or {}).get("kind") == "document"
        response = self.console.render(
            request,
            session,
            "consent.html",
            title="Allow a client?",
            name=pending.client_name,
            document_host=urlsplit(pending.client_id).hostname if document else None,
            redirect_host=urlsplit(pending.redirect_uri).netloc or pending.redirect_uri.split(":", 1)[0] + ":",
            tools=await self.oauth.tool_names(),
            request_id=request_id,
        )
        response.form_action = form_action(pending.redirect_uri)  # type: ignore[attr-defined]
        return response

    async def answer(self, request: Request, session: Session | None, form: dict[str, str]) -> Response:
        decision = form.get("decision")
        if decision not in ("approve", "deny"):
            return self._message(request, session, 400, "Approve or Deny, nothing else.")
        target = await run_in_threadpool(self.oauth.provider.answer, form.get("request", ""), decision == "approve")
        if target is None:
            return self._message(
                request, session, 400, "This sign-in request has expired or was answered; start again from the client."
            )
        return RedirectResponse(target, status_code=303)

    async def clients(
        self, request: Request, session: Session | None, form: dict[str, str], notice: str | None = None
    ) -> Response:
        found = await run_in_threadpool(self.oauth.provider.clients)
        rows = [dict(c, first=_when(c["first_used"]), last=_when(c["last_used"])) for c in found]
        return self.console.render(
            request, session, "clients.html", title="Clients", clients=rows, notice=notice, unused=UNUSED_CHOICES
        )

    async def revoke(self, request: Request, session: Session | None, form: dict[str, str]) -> Response:
        client_id = form.get("client_id", "")
        listed = {c["client_id"]: c for c in await run_in_threadpool(self.oauth.provider.clients)}
        if client_id not in listed:
            return self._message(request, session, 404, "No such client (already revoked?).")
        ended = await run_in_threadpool(self.oauth.provider.revoke_client, client_id)
        name = listed[client_id]["name"]
        return await self.clients(
            request, session, form, notice=f"{name} revoked: {ended} sign-in(s) ended; it must ask again."
        )

    async def revoke_unused(self, request: Request, session: Session | None, form: dict[str, str]) -> Response:
        days = int(form["days"]) if form.get("days", "").isdigit() else -1
        if days not in UNUSED_CHOICES:
            return self._message(request, session, 400, f"Choose one of {', '.join(map(str, UNUSED_CHOICES))} days.")
        ended = await run_in_threadpool(self.oauth.provider.revoke_unused, days)
        since = "ever" if days == 0 else f"for {days} day{'s' if days != 1 else ''}"
        return await self.clients(request, session, form, notice=f"{ended} client(s) not used {since} revoked.")


def _with_form_action(endpoint: Callable[[Request], Awaitable[Response]]) -> Callable[[Request], Awaitable[Response]]:
    """The consent page's CSP lets its form go on to the client's redirect origin (Chromium checks
    `form-action` on the redirect that follows a post), and nowhere else."""

    async def wrapped(request: Request) -> Response:
        response = await endpoint(request)
        extra = getattr(response, "form_action", None)
        if extra:
            csp = response.headers["Content-Security-Policy"]
            response.headers["Content-Security-Policy"] = csp.replace(
                "form-action 'self'", f"form-action 'self' {extra}"
            )
        return response

    return wrapped


def client_routes(console: ConsolePages, oauth: Any) -> list[Route]:
    """The OAuth pages; with CORTEX_OAUTH=off, a Clients page that says so."""
    if oauth is None:

        async def off(request: Request, session: Session | None, form: dict[str, str]) -> Response:
            return console.render(
                request,
                session,
                "message.html",
                title="Clients",
                message="OAuth is off (CORTEX_OAUTH=off): no clients.",
            )

        return [Route("/console/clients", console.page(off), methods=["GET"])]
    pages = ClientPages(console, oauth)
    return [
        Route("/console/oauth/consent", _with_form_action(console.page(pages.consent, auth=False)), methods=["GET"]),
        Route("/console/oauth/consent", console.page(pages.answer), methods=["POST"]),
        Route("/console/clients", console.page(pages.clients), methods=["GET"]),
        Route("/console/clients/revoke", console.page(pages.revoke), methods=["POST"]),
        Route(
            "/console/clients/revoke-unused",
            console.page(pages.revoke_unused),
            methods=["POST"],
        ),
    ]
