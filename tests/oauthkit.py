"""An OAuth client by hand, over real HTTP against a running server: register, authorize, the
owner's answer on the console's consent page (signed in as the owner, with its CSRF token),
the token endpoint. The SDK clients' own flows are in test_oauth_clients.py; this kit is for
the refusals, where a test needs to send exactly one wrong thing."""

from __future__ import annotations

import asyncio
import base64
import hashlib
import queue
import secrets
import threading
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx
import httpx2
from consolekit import csrf_of, owner
from mcp import Client
from mcp.client.auth import OAuthClientProvider
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.auth import AuthorizationCodeResult, OAuthClientInformationFull, OAuthClientMetadata, OAuthToken
from serverkit import TOKEN, acall

REDIRECT = "http://127.0.0.1:9/callback"
CALLBACK = REDIRECT  # where the SDK clients are sent back; the browser catches it


def pkce() -> tuple[str, str]:
    verifier = secrets.token_urlsafe(48)
    challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).decode().rstrip("=")
    return verifier, challenge


def query(location: str) -> dict[str, str]:
    return {k: v[0] for k, v in parse_qs(urlsplit(location).query).items()}


@dataclass
class Flow:
    base: str  # the server's origin, e.g. http://127.0.0.1:PORT
    client_id: str = ""
    verifier: str = ""
    redirect: str = REDIRECT

    @property
    def http(self) -> httpx.Client:
        return httpx.Client(base_url=self.base, follow_redirects=False, timeout=30)

    def register(self, redirect: str = REDIRECT, name: str = "Test client") -> str:
        r = self.http.post(
            "/register",
            json={"redirect_uris": [redirect], "client_name": name, "token_endpoint_auth_method": "none"},
        )
        assert r.status_code == 201, r.text
        self.client_id, self.redirect = r.json()["client_id"], redirect
        return self.client_id

    def authorize(self, **override: str) -> httpx.Response:
        """GET /authorize with a fresh PKCE pair; `override` replaces or adds parameters."""
        self.verifier, challenge = pkce()
        params = {
            "response_type": "code",
            "client_id": self.client_id,
            "redirect_uri": self.redirect,
            "code_challenge": challenge,
            "code_challenge_method": "S256",
            "state": "st-1",
            "resource": self.base + "/mcp",
        }
        params.update(override)
        return self.http.get("/authorize", params={k: v for k, v in params.items() if v is not None})

    def consent(self, location: str, decision: str = "approve") -> httpx.Response:
        """The owner, signed in, opens the consent page and answers; the POST's reply."""
        console = owner(self.base)
        page = console.get(location)
        assert page.status_code == 200, page.text
        request_id = query(location)["request"]
        return console.post(
            "/console/oauth/consent", data={"csrf": csrf_of(page.text), "request": request_id, "decision": decision}
        )

    def code(self) -> str:
        """Register (if not yet), authorize and approve: the code the client receives."""
        if not self.client_id:
            self.register()
        r = self.authorize()
        assert r.status_code == 302, r.text
        answer = self.consent(r.headers["location"])
        assert answer.status_code == 303, answer.text
        got = query(answer.headers["location"])
        assert got["state"] == "st-1" and got["iss"] == self.base
        return got["code"]

    def exchange(self, code: str, verifier: str | None = None) -> httpx.Response:
        return self.http.post(
            "/token",
            data={
                "grant_type": "authorization_code",
                "code": code,
                "redirect_uri": self.redirect,
                "client_id": self.client_id,
                "code_verifier": verifier or self.verifier,
                "resource": self.base + "/mcp",
            },
        )

    def refresh(self, refresh_token: str) -> httpx.Response:
        return self.http.post(
            "/token",
            data={"grant_type": "refresh_token", "refresh_token": refresh_token, "client_id": self.client_id},
        )

    def tokens(self) -> dict[str, str]:
        r = self.exchange(self.code())
        assert r.status_code == 200, r.text
        return r.json()


class Memory:
    """The SDK's TokenStorage, in memory."""

    def __init__(self):
        self.tokens: OAuthToken | None = None
        self.client: OAuthClientInformationFull | None = None

    async def get_tokens(self):
        return self.tokens

    async def set_tokens(self, tokens):
        self.tokens = tokens

    async def get_client_info(self):
        return self.client

    async def set_client_info(self, client_info):
        self.client = client_info


def approve_in_browser(browser, authorization_url: str) -> str:
    """Open the authorization URL as the owner would: sign in to the console, see the consent
    page, click Approve; the URL the browser was sent back to."""
    context = browser.new_context(ignore_https_errors=True)  # a proxy's own certificate
    page = context.new_page()
    page.set_default_timeout(20_000)
    caught: list[str] = []

    def callback(route):
        caught.append(route.request.url)
        route.fulfill(status=200, body="done")

    page.route("http://127.0.0.1:9/**", callback)
    try:
        page.goto(authorization_url)
        assert "/console/oauth/consent" in page.url  # the sign-in form, on its way to the consent page
        page.fill("#secret", TOKEN)
        with page.expect_navigation():
            page.click("button:has-text('Sign in')")
        assert page.locator("#consent").count() == 1
        assert "127.0.0.1:9" in page.locator("#redirect-host").inner_text()
        assert page.locator("#tools code", has_text="brain_read").count() == 1
        page.click("button:has-text('Approve')")
        page.wait_for_timeout(200)
        for _ in range(100):
            if caught:
                break
            page.wait_for_timeout(100)
        assert caught, "the browser was not sent back to the client"
        return caught[0]
    finally:
        context.close()


def sdk_client_reads(url: str, browser: Any, verify: Any = True) -> dict[str, Any]:
    """The Python SDK's OAuth client from discovery to a brain_read on `url`, the owner
    approving in `browser`: {"read": the reply, "tokens": what it stored}. `verify`: the
    certificate authority to trust (a proxy's own), as httpx takes it."""
    to_browser: queue.Queue[str] = queue.Queue()
    from_browser: queue.Queue[str] = queue.Queue()
    outcome: dict[str, Any] = {}

    async def redirect(authorization_url: str) -> None:
        to_browser.put(authorization_url)

    async def callback() -> AuthorizationCodeResult:
        back = query(await asyncio.to_thread(from_browser.get, True, 60))
        return AuthorizationCodeResult(code=back["code"], state=back.get("state"), iss=back.get("iss"))

    async def run() -> None:
        storage = Memory()
        auth = OAuthClientProvider(
            url,
            OAuthClientMetadata(client_name="Python SDK client", redirect_uris=[CALLBACK]),
            storage,
            redirect_handler=redirect,
            callback_handler=callback,
        )
        http = httpx2.AsyncClient(auth=auth, timeout=60, verify=verify)
        async with http, Client(streamable_http_client(url, http_client=http)) as c:
            outcome["read"] = await acall(c, "brain_read", path="profile.md")
        outcome["tokens"] = storage.tokens

    def worker() -> None:
        try:
            asyncio.run(run())
        except BaseException as exc:  # noqa: BLE001 - handed to the test's thread
            outcome["error"] = exc
            to_browser.put("")

    thread = threading.Thread(target=worker, daemon=True)
    thread.start()
    authorization_url = to_browser.get(timeout=60)
    assert authorization_url, outcome.get("error")
    from_browser.put(approve_in_browser(browser, authorization_url))
    thread.join(timeout=60)
    assert "error" not in outcome, outcome.get("error")
    return outcome
