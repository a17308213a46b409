"""The owner's web console at /console: review proposals, see every change, browse notes, manage guests.

Server-rendered HTML (Jinja2, autoescape on), no JavaScript: every page is
sent with a CSP that forbids scripts, so even a rendering mistake cannot run
code. Every POST carries a per-session CSRF token; the session is a signed,
HttpOnly, SameSite=Strict cookie (see cortex.http.console.auth). The review logic is
cortex.guests.review.Review's, the guest logic cortex.guests.policy's: this module only shows and asks.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path
from typing import Any
from urllib.parse import quote

import jinja2
from markupsafe import Markup
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response
from starlette.routing import Route

from cortex.brain.trailers import Actor
from cortex.errors import BadInput, CortexError
from cortex.guests.policy import GuestBook, add_guest, revoke_guest, unmatched_scopes
from cortex.guests.review import Review
from cortex.http.console.auth import (
    ALL,
    FAILURE_WINDOW_ALL,
    MAX_FAILURES_ALL,
    PRE_SECONDS,
    SESSION_SECONDS,
    Session,
    Sessions,
    Signer,
    Throttle,
    credential_ok,
    token_matches,
)
from cortex.http.console.pages import Pages, commit_row
from cortex.http.console.status import plural, raw_rows, status_report
from cortex.http.server_parts import ServerParts
from cortex.notes.paths import check_path, check_text
from cortex.notes.redact import mask
from cortex.settings import allowed, load_or_make_secret
from cortex.tools.search import SearchRequest, search_notes

__all__ = [
    "COOKIE",
    "CSP",
    "Console",
    "HEADERS",
    "Handler",
    "KNOWN_DOORS",
    "MAX_FORM_BYTES",
    "PRE_COOKIE",
    "Refused",
    "SEARCH_HITS",
    "TEMPLATES",
    "console_routes",
]

log = logging.getLogger(__name__)

COOKIE = "cortex_console"
PRE_COOKIE = "cortex_console_pre"
# The policy, plus form-action/base-uri/frame-ancestors, which default-src does not cover.
CSP = (
    "default-src 'self'; style-src 'self' 'unsafe-inline'; script-src 'none'; "
    "form-action 'self'; base-uri 'none'; frame-ancestors 'none'"
)
HEADERS = {
    "Content-Security-Policy": CSP,
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "no-referrer",
    "X-Content-Type-Options": "nosniff",
    "Cache-Control": "no-store",  # pages hold note text, and one holds a guest's secret
}
MAX_FORM_BYTES = 64 * 1024
KNOWN_DOORS = ("owner", "owner-url", "owner-oauth", "console", "editor", "cli", "cortex", "hand-made")
_SHA = re.compile(r"^[0-9a-f]{4,40}$")
_PID = re.compile(r"^p_[0-9a-f]{1,32}$")
_NEXT = re.compile(r"/console/oauth/consent\?request=[A-Za-z0-9_-]{1,64}")  # where a sign-in may go next
SEARCH_HITS = 20  # hits on the console's search page; it says how many more matched
TEMPLATES = Path(__file__).parent / "templates"

Handler = Callable[[Request, "Session | None", dict[str, str]], Awaitable[Response]]


class Refused(Exception):
    """A request the console answers with a message page and a status code."""

    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status = status
        self.message = message


def _masked(value: Any) -> Any:
    """Every value a page prints, masked (`redact.mask`); Markup was masked before it was rendered."""
    return mask(value) if isinstance(value, str) and not isinstance(value, Markup) else value


class Console:
    """Routes and handlers of the console, built on the assembled server's parts."""

    def __init__(self, parts: ServerParts, review: Review | None = None, book: GuestBook | None = None):
        s = parts.settings
        self.parts = parts
        self.brain = parts.brain
        queue = getattr(parts, "queue", None)
        off = getattr(parts, "queue_off", None) or (None if queue else "disabled: no Redis configured")
        # Its own Review over the shared queue: the same rules the MCP review tools use.
        self.review = review or Review(parts.brain, queue, off)
        self.pages = Pages(parts.brain, self.review, book or GuestBook(parts.brain))
        self.owner_token = parts.owner_token
        self.passcode = s.console_passcode
        key, _ = load_or_make_secret(s.home / "console-key")
        self.sessions = Sessions(
            Signer(key), [parts.owner_token, s.console_passcode or ""], epoch_file=s.home / "console-epoch"
        )
        self.throttle = Throttle()
        self.throttle_all = Throttle(max_failures=MAX_FAILURES_ALL, window=FAILURE_WINDOW_ALL)
        self.hosts = s.hosts()
        # Every value a page prints is masked on its way out (paths, frontmatter keys,
        # superseded_by, titles), not only the fields someone remembered; rendered
        # Markdown (Markup) was masked before rendering.
        self.env = jinja2.Environment(
            loader=jinja2.FileSystemLoader(str(TEMPLATES)),
            autoescape=True,
            undefined=jinja2.StrictUndefined,
            finalize=_masked,
        )
        self.env.filters["short"] = lambda sha: (sha or "")[:12]
        self.env.filters["plural"] = plural  # {{ n|plural('file') }}: '1 file', '2 files'
        # A file path inside a URL path: '/' kept, everything else that needs it percent-encoded.
        self.env.filters["q"] = lambda path: quote(str(path), safe="/")

    # -- plumbing ---------------------------------------------------------

    def routes(self) -> list[Route]:
        get, post = ["GET"], ["POST"]
        return [
            Route("/console", self.page(self.index, auth=False), methods=get),
            Route("/console/", self.page(self.index, auth=False), methods=get),
            Route("/console/signin", self.page(self.signin_form, auth=False), methods=get),
            Route("/console/signin", self.page(self.signin, auth=False), methods=post),
            Route("/console/signout", self.page(self.signout), methods=post),
            Route("/console/proposals", self.page(self.proposals), methods=get),
            Route("/console/status", self.page(self.status), methods=get),
            Route("/console/proposals/{pid}", self.page(self.proposal), methods=get),
            Route("/console/proposals/{pid}/accept", self.page(self.accept), methods=post),
            Route("/console/proposals/{pid}/reject", self.page(self.reject), methods=post),
            Route("/console/activity", self.page(self.activity), methods=get),
            Route("/console/commit/{sha}", self.page(self.commit), methods=get),
            Route("/console/notes", self.page(self.notes), methods=get),
            Route("/console/search", self.page(self.search), methods=get),
            Route("/console/note/{path:path}", self.page(self.note), methods=get),
            Route("/console/working", self.page(self.working), methods=get),
            Route("/console/working/{item}/{action}", self.page(self.working_change), methods=post),
            Route("/console/guests", self.page(self.guests), methods=get),
            Route("/console/guests/add", self.page(self.guest_add), methods=post),
            Route("/console/guests/{name}/revoke", self.page(self.guest_revoke), methods=post),
            Route("/console/{rest:path}", self.page(self.not_found, auth=False), methods=["GET", "POST"]),
        ]

    def _host_ok(self, host: str) -> bool:
        """The Host allow-list the MCP doors use (DNS-rebinding protection), matched exactly."""
        return allowed(host, self.hosts)

    @staticmethod
    def _origin_ok(request: Request) -> bool:
        """A cross-site Origin is refused; absent or 'null' (sent under no-referrer) is left to CSRF."""
        origin = request.headers.get("origin")
        if not origin or origin == "null":
            return True
        return origin == f"{request.url.scheme}://{request.headers.get('host', '')}"

    def page(self, handler: Handler, auth: bool = True) -> Callable[[Request], Awaitable[Response]]:
        """Wrap a handler: Host check, session, CSRF on POST, security headers on every answer."""

        async def endpoint(request: Request) -> Response:
            session = self.sessions.read(request.cookies.get(COOKIE))
            try:
                if not self._host_ok(request.headers.get("host", "")):
                    raise Refused(421, "this host name is not allowed (set CORTEX_ALLOWED_HOSTS)")
                form: dict[str, str] = {}
                if request.method == "POST":
                    if not self._origin_ok(request):
                        raise Refused(403, "refused: the form came from another site")
                    # A declared, small body only: the sign-in form is open to anyone, and a
                    # chunked upload of unbounded size would be read whole by the form parser.
                    length = request.headers.get("content-length", "")
                    if not length.isdigit():
                        raise Refused(411, "a form post needs a Content-Length")
                    if int(length) > MAX_FORM_BYTES:
                        raise Refused(413, "form too large")
                    raw = await request.form()
                    form = {k: v for k, v in raw.items() if isinstance(v, str)}
                    if auth and (session is None or not token_matches(form.get("csrf"), session.csrf)):
                        raise Refused(
                            403, "refused: the form's CSRF token is missing or wrong; reload the page and try again"
                        )
                if auth and session is None:
                    return self._secure(RedirectResponse("/console/signin", status_code=303))
                response = await handler(request, session, form)
            except Refused as exc:
                response = self.render(
                    request,
                    session,
                    "message.html",
                    status=exc.status,
                    title="Refused" if exc.status == 403 else "Error",
                    message=exc.message,
                )
            except Exception:  # a bug: log it, and still answer with the security headers
                log.exception("console: %s %s failed", request.method, request.url.path)
                response = self.render(
                    request,
                    session,
                    "message.html",
                    status=500,
                    title="Error",
                    message="the console hit an internal error; the server log has the details",
                )
            return self._secure(response)

        return endpoint

    @staticmethod
    def _secure(response: Response) -> Response:
        for key, value in HEADERS.items():
            response.headers[key] = value
        return response

    def render(
        self, request: Request, session: Session | None, template: str, status: int = 200, **context: Any
    ) -> HTMLResponse:
        html = self.env.get_template(template).render(
            session=session,
            csrf=session.csrf if session else "",
            path=request.url.path,
            error=context.pop("error", None),
            notice=context.pop("notice", None),
            **context,
        )
        return HTMLResponse(html, status_code=status)

    def _cookie(self, request: Request, response: Response, name: str, value: str, max_age: int) -> None:
        response.set_cookie(
            name,
            value,
            max_age=max_age,
            path="/console",
            httponly=True,
            samesite="strict",
            secure=request.url.scheme == "https",
        )

    # -- signing in -------------------------------------------------------

    async def index(self, request: Request, session: Session | None, form: dict[str, str]) -> Response:
        return RedirectResponse("/console/proposals" if session else "/console/signin", status_code=303)

    async def not_found(self, request: Request, session: Session | None, form: dict[str, str]) -> Response:
        raise Refused(404, "no such page")

    def _signin_page(
        self, request: Request, status: int = 200, error: str | None = None, next_page: str | None = None
    ) -> Response:
        cookie, token = self.sessions.new_pre()
        response = self.render(
            request,
            None,
            "signin.html",
            status=status,
            title="Sign in",
            form_csrf=token,
            error=error,
            passcode=bool(self.passcode),
            next_page=next_page if next_page and _NEXT.fullmatch(next_page) else None,
        )
        self._cookie(request, response, PRE_COOKIE, cookie, PRE_SECONDS)
        return response

    async def signin_form(self, request: Request, session: Session | None, form: dict[str, str]) -> Response:
        if session is not None:
            return RedirectResponse("/console/proposals", status_code=303)
        return self._signin_page(request)

    async def signin(self, request: Request, session: Session | None, form: dict[str, str]) -> Response:
        addr = request.client.host if request.client else "unknown"
        if not token_matches(form.get("csrf"), self.sessions.pre_token(request.cookies.get(PRE_COOKIE))):
            raise Refused(
                403, "refused: the sign-in form's CSRF token is missing or stale; open the sign-in page again"
            )
        secret = form.get("secret", "")
        # The owner token is never locked out; the throttle guards the passcode.
        if not token_matches(secret, self.owner_token):
            wait, whom = self.throttle.retry_after(addr), "this address"
            if wait is None:
                wait, whom = self.throttle_all.retry_after(ALL), "all addresses"
            if wait is not None:
                refusal = self.render(
                    request,
                    None,
                    "message.html",
                    status=429,
                    title="Too many tries",
                    message=f"Too many failed sign-ins from {whom}; the passcode works again in {wait} s. "
                    "The owner token still signs in.",
                )
                refusal.headers["Retry-After"] = str(wait)
                return refusal
            if not credential_ok(secret, self.owner_token, self.passcode):
                self.throttle.fail(addr)
                self.throttle_all.fail(ALL)
                return self._signin_page(
                    request,
                    status=401,
                    error="That is not the owner token or the passcode.",
                    next_page=form.get("next"),
                )
        self.throttle.clear(addr)
        _, cookie = self.sessions.new()
        # Back to the OAuth consent page the owner was signing in for; never anywhere else.
        after = form.get("next", "")
        response = RedirectResponse(after if _NEXT.fullmatch(after) else "/console/proposals", status_code=303)
        self._cookie(request, response, COOKIE, cookie, SESSION_SECONDS)
        response.delete_cookie(PRE_COOKIE, path="/console", httponly=True, samesite="strict")
        return response

    async def signout(self, request: Request, session: Session | None, form: dict[str, str]) -> Response:
        assert session is not None
        self.sessions.revoke(session)
        response = RedirectResponse("/console/signin", status_code=303)
        response.delete_cookie(COOKIE, path="/console", httponly=True, samesite="strict")
        return response

    # -- proposals --------------------------------------------------------

    async def proposals(self, request: Request, session: Session | None, form: dict[str, str]) -> Response:
        try:
            cards, unavailable = await run_in_threadpool(self.pages.open_cards), None
        except CortexError as exc:  # a Redis outage too: say so, never crash
            cards, unavailable = [], str(exc)
        # ?accepted=<id> after an Accept: what was accepted, read from the queue, never from the URL.
        pid, accepted = request.query_params.get("accepted", ""), None
        if _PID.match(pid):
            try:
                accepted = await run_in_threadpool(self.pages.decided, pid)
            except CortexError:
                accepted = None
        return self.render(
            request,
            session,
            "proposals.html",
            title="Proposals",
            cards=cards,
            unavailable=unavailable,
            accepted=accepted if accepted and accepted["state"] == "committed" else None,
        )

    async def proposal(self, request: Request, session: Session | None, form: dict[str, str]) -> Response:
        pid = request.path_params["pid"]
        if not _PID.match(pid):
            raise Refused(404, "no such proposal")
        try:
            info = await run_in_threadpool(self.pages.decided, pid)
        except CortexError as exc:
            raise Refused(503, str(exc)) from None
        if info is None:
            raise Refused(404, f"no proposal {pid} (unknown, or decided more than 30 days ago)")
        return self.render(request, session, "proposal.html", title=f"Proposal {pid}", p=info)

    def _actor(self, tool: str) -> Actor:
        return Actor(door="console", tool=tool, client="web console")

    async def _decide(self, request: Request, session: Session | None, work: Callable[[], Any], after: str) -> Response:
        """Run an accept or reject, then go to `after`; a refusal stays on the proposal's page, saying why."""
        pid = request.path_params["pid"]
        if not _PID.match(pid):
            raise Refused(404, "no such proposal")
        try:
            await run_in_threadpool(work)
        except CortexError as exc:
            # Refused by the review rules (e.g. create on an existing note): nothing changed.
            try:
                info = await run_in_threadpool(self.pages.decided, pid)
            except CortexError:
                info = None
            return self.render(
                request,
                session,
                "proposal.html",
                status=409,
                title=f"Proposal {pid}",
                p=info,
                error=str(exc).splitlines()[0] if str(exc) else "refused",
            )
        return RedirectResponse(after, status_code=303)

    async def accept(self, request: Request, session: Session | None, form: dict[str, str]) -> Response:
        pid = request.path_params["pid"]
        # Back to the queue, which says what was accepted: the next proposal is one step away.
        return await self._decide(
            request,
            session,
            lambda: self.review.accept(self._actor("console_accept"), pid),
            f"/console/proposals?accepted={pid}",
        )

    async def reject(self, request: Request, session: Session | None, form: dict[str, str]) -> Response:
        pid, reason = request.path_params["pid"], form.get("reason", "")
        return await self._decide(
            request,
            session,
            lambda: self.review.reject(self._actor("console_reject"), pid, reason),
            f"/console/proposals/{pid}",  # its page shows the tombstone
        )

    # -- status -----------------------------------------------------------

    async def status(self, request: Request, session: Session | None, form: dict[str, str]) -> Response:
        """What /healthz keeps to the owner, in sentences: the brain, its head, each part, each problem."""
        health = getattr(self.parts, "health", None)
        detail = await run_in_threadpool(health) if health else {}
        index = await run_in_threadpool(self.brain.index_state)
        unreadable, unreadable_total = await run_in_threadpool(self.pages.unreadable)
        guests = len(await run_in_threadpool(self.pages.book.policies))
        head = self.brain.head()
        s = self.parts.settings
        return self.render(
            request,
            session,
            "status.html",
            title="Status",
            where="a clone in the state folder" if s.remote else str(s.brain),
            branch=self.brain.branch,
            head=commit_row(await run_in_threadpool(self.brain.commit_info, head)) if head else None,
            raw=raw_rows(detail),
            unreadable=unreadable,
            unreadable_total=unreadable_total,
            **status_report(detail, index, guests, unreadable_total),
        )

    # -- activity ---------------------------------------------------------

    async def activity(self, request: Request, session: Session | None, form: dict[str, str]) -> Response:
        q = request.query_params
        door, path, before = q.get("door", "").strip(), q.get("path", "").strip(), q.get("before", "").strip()
        error: str | None = None
        try:
            check_text(door, "door")
            check_text(path, "path")
            if before and not _SHA.match(before):
                raise BadInput("before must be a commit SHA")
            data = await run_in_threadpool(self.pages.activity, door, path, before)
        except CortexError as exc:
            data, error = {"rows": [], "next": None, "scanned": 0}, str(exc)
        doors = list(KNOWN_DOORS) + ([door] if door and door not in KNOWN_DOORS else [])
        return self.render(
            request,
            session,
            "activity.html",
            title="Activity",
            door=door,
            filter_path=path,
            doors=doors,
            error=error,
            **data,
        )

    async def commit(self, request: Request, session: Session | None, form: dict[str, str]) -> Response:
        sha = request.path_params["sha"].lower()
        if not _SHA.match(sha):
            raise Refused(404, "not a commit SHA")
        try:
            data = await run_in_threadpool(self.pages.commit, sha)
        except CortexError:
            raise Refused(404, f"no commit {sha} in this brain") from None
        return self.render(request, session, "commit.html", title=f"Commit {sha[:12]}", **data)

    # -- notes ------------------------------------------------------------

    async def notes(self, request: Request, session: Session | None, form: dict[str, str]) -> Response:
        folder = request.query_params.get("dir", "").strip().strip("/")
        if folder:
            try:
                check_path(folder, for_write=False)
            except BadInput as exc:
                raise Refused(404, str(exc)) from None
            folder += "/"
        data = await run_in_threadpool(self.pages.folder, folder)
        if folder and not data["files"] and not data["folders"]:
            raise Refused(404, f"no folder {folder} at the head")
        return self.render(request, session, "notes.html", title=folder or "Notes", **data)

    async def search(self, request: Request, session: Session | None, form: dict[str, str]) -> Response:
        """The tools' own brain_search (Tools.search: the same ranking, meaning and retirement rules)."""
        q = request.query_params
        query, prefix = q.get("q", "").strip(), q.get("prefix", "").strip()
        retired = q.get("retired", "") in ("on", "1", "true")
        found, error = None, None
        if query:
            try:
                check_text(prefix, "prefix")
                found = await run_in_threadpool(
                    lambda: search_notes(
                        self.parts.tools,
                        SearchRequest(query=query, k=SEARCH_HITS, prefix=prefix or None, include_retired=retired),
                    )
                )
            except CortexError as exc:
                error = f"Not searched: {str(exc).splitlines()[0] if str(exc) else 'refused'}"
        return self.render(
            request,
            session,
            "search.html",
            status=400 if error else 200,
            title=f"Search: {query}" if query else "Search",
            query=query,
            prefix=prefix,
            retired=retired,
            found=found,
            said=_said(found or {}),
            error=error,
        )

    async def note(self, request: Request, session: Session | None, form: dict[str, str]) -> Response:
        path = request.path_params["path"]
        try:
            data = await run_in_threadpool(self.pages.note, path)
        except CortexError as exc:
            raise Refused(404, str(exc).splitlines()[0] if str(exc) else "no such note") from None
        return self.render(request, session, "note.html", **data)

    # -- guests -----------------------------------------------------------

    async def working(
        self,
        request: Request,
        session: Session | None,
        form: dict[str, str],
        status: int = 200,
        error: str | None = None,
        notice: str | None = None,
    ) -> Response:
        listed = await run_in_threadpool(self.parts.tools.working.act, self._actor("console_working"), "list")
        projects: dict[str, list[dict[str, Any]]] = {}
        for item in listed["items"]:
            projects.setdefault(item["project"], []).append(item)
        return self.render(
            request,
            session,
            "working.html",
            status=status,
            title="Working",
            error=error,
            notice=notice,
            sha=listed["sha"],
            projects=sorted(projects.items()),
            closed=listed["closed_not_listed"],
        )

    async def working_change(self, request: Request, session: Session | None, form: dict[str, str]) -> Response:
        item, action = request.path_params["item"], request.path_params["action"]
        if action not in ("file", "drop", "touch"):
            raise Refused(404, "no such action")
        args = {"file": {"into": form.get("into", "")}, "drop": {"reason": form.get("reason", "")}}.get(action, {})
        try:
            done = await run_in_threadpool(
                lambda: self.parts.tools.working.act(self._actor("console_working"), action, id=item, **args)
            )
        except CortexError as exc:
            return await self.working(request, session, form, status=400, error=f"Not changed: {exc}")
        return await self.working(
            request, session, form, notice=f"Item {item} is {done['state']} (commit {done['sha'][:12]})."
        )

    async def guests(
        self,
        request: Request,
        session: Session | None,
        form: dict[str, str],
        status: int = 200,
        error: str | None = None,
        notice: str | None = None,
    ) -> Response:
        data = await run_in_threadpool(self.pages.guests)
        return self.render(
            request, session, "guests.html", status=status, title="Guests", error=error, notice=notice, **data
        )

    async def guest_add(self, request: Request, session: Session | None, form: dict[str, str]) -> Response:
        try:
            name = form.get("name", "").strip()
            scopes = [s.strip() for s in re.split(r"[\n,]+", form.get("scopes", "")) if s.strip()]
            limits = {k: _int_field(form, k) for k in ("max_k", "daily_asks", "daily_proposals", "max_pending")}
            policy, secret, sha = await run_in_threadpool(
                lambda: add_guest(self.brain, name, scopes, citations=form.get("citations") == "on", **limits)
            )
        except CortexError as exc:
            return await self.guests(request, session, form, status=400, error=f"Guest not added: {exc}")
        warnings = await run_in_threadpool(unmatched_scopes, self.brain, policy.scopes, sha)
        door = f"/g/{secret}/mcp"
        base = str(request.base_url).rstrip("/")
        return self.render(
            request,
            session,
            "guest_added.html",
            title=f"Guest {policy.name} added",
            g=policy.public(),
            door=door,
            url=base + door,
            sha=sha,
            warnings=warnings,
        )

    async def guest_revoke(self, request: Request, session: Session | None, form: dict[str, str]) -> Response:
        name = request.path_params["name"]
        try:
            sha = await run_in_threadpool(revoke_guest, self.brain, name)
        except CortexError as exc:
            return await self.guests(request, session, form, status=400, error=f"Not revoked: {exc}")
        return await self.guests(
            request, session, form, notice=f"Guest {name} revoked in commit {sha[:12]}; its door is closed."
        )


def _said(found: Mapping[str, Any]) -> list[str]:
    """What a search reply says besides its hits, for a person with this page's form: its
    `left_out` points at the "retired too" box, not at include_retired; `more` is the page's own."""
    said = []
    for key, value in found.items():
        if not isinstance(value, str) or key in ("sha", "query", "more"):
            continue
        if key == "left_out":
            n = int(m.group()) if (m := re.match(r"\d+", value)) else 0
            value = f"{plural(n, 'matching note')} in archive/ or retired {'was' if n == 1 else 'were'} left out; "
            value += "tick “retired too” to see them"
        said.append(value)
    return said


def _int_field(form: dict[str, str], key: str) -> int | None:
    raw = form.get(key, "").strip()
    if not raw:
        return None  # the default
    if not re.fullmatch(r"\d{1,7}", raw):
        raise BadInput(f"{key} must be a whole number")
    return int(raw)


def console_routes(parts: ServerParts) -> list[Route]:
    """The console's routes for build_app's extra_routes (the OAuth pages before the catch-all)."""
    from cortex.http.console.clients import client_routes

    console = Console(parts)
    routes = console.routes()
    return routes[:-1] + client_routes(console, parts.oauth) + routes[-1:]
