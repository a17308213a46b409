"""The SDKs' own OAuth clients, from discovery to a brain_read, the owner approving on the
console's consent page in headless Chromium:

- the Python SDK's `mcp.client.auth.OAuthClientProvider` (dynamic registration, PKCE S256, the
  resource indicator, `iss` checked) over real HTTP;
- the TypeScript SDK's client auth (the version tests/tsclient pins), run by node.

The client runs in a thread (Python) or a process (node); the test's own thread drives the
browser, which is where the SDK's "open this URL" goes and where the redirect back is caught.
"""

from __future__ import annotations

import asyncio
import json
import queue
import subprocess
import threading

import httpx2
import pytest
from conftest import TOKEN, TS, acall, serve, ts_node
from mcp import Client
from mcp.client.auth import OAuthClientProvider
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.auth import AuthorizationCodeResult, OAuthClientInformationFull, OAuthClientMetadata, OAuthToken
from oauthkit import query

pytestmark = pytest.mark.slow

CALLBACK = "http://127.0.0.1:9/callback"


@pytest.fixture
def oserver(tmp_path, brain_path):
    with serve(tmp_path, brain_path) as running:
        yield running


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
    context = browser.new_context()
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


def test_the_python_sdk_oauth_client_reads_the_brain(oserver, browser):
    to_browser: queue.Queue[str] = queue.Queue()
    from_browser: queue.Queue[str] = queue.Queue()
    outcome: dict = {}

    async def redirect(url: str) -> None:
        to_browser.put(url)

    async def callback() -> AuthorizationCodeResult:
        back = query(await asyncio.to_thread(from_browser.get, True, 60))
        return AuthorizationCodeResult(code=back["code"], state=back.get("state"), iss=back.get("iss"))

    async def run() -> None:
        storage = Memory()
        auth = OAuthClientProvider(
            f"{oserver.url}/mcp",
            OAuthClientMetadata(client_name="Python SDK client", redirect_uris=[CALLBACK]),
            storage,
            redirect_handler=redirect,
            callback_handler=callback,
        )
        http = httpx2.AsyncClient(auth=auth, timeout=60)
        async with http, Client(streamable_http_client(f"{oserver.url}/mcp", http_client=http)) as c:
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
    url = to_browser.get(timeout=60)
    assert url, outcome.get("error")
    from_browser.put(approve_in_browser(browser, url))
    thread.join(timeout=60)
    assert "error" not in outcome, outcome.get("error")
    assert outcome["read"].error is None and outcome["read"].data["path"] == "profile.md"
    assert outcome["tokens"].refresh_token and outcome["tokens"].expires_in == 3600
    listed = oserver.parts.oauth.provider.clients()
    assert [c["name"] for c in listed] == ["Python SDK client"] and listed[0]["last_used"]


def test_the_typescript_sdk_oauth_client_reads_the_brain(oserver, browser):
    node = ts_node()
    proc = subprocess.Popen(
        [node, str(TS / "oauth.mjs"), f"{oserver.url}/mcp", CALLBACK],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        line = proc.stdout.readline()
        assert line.startswith("AUTHORIZE "), line + proc.stderr.read()
        back = approve_in_browser(browser, line.split(" ", 1)[1].strip())
        proc.stdin.write(back + "\n")
        proc.stdin.flush()
        out, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
    assert proc.returncode == 0, err
    result = json.loads(out.strip().splitlines()[-1])
    assert not result["result"].get("isError"), result
    assert result["result"]["structuredContent"]["path"] == "profile.md"
    assert [c["name"] for c in oserver.parts.oauth.provider.clients()] == ["cortex-ts-test"]
