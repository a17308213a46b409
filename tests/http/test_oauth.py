"""The OAuth door over real HTTP: discovery, the flow by hand, and each refusal in a test of its
own, each checked to have issued no token (no access token in any reply, none in the records).

The SDK clients' own flows (Python with Chromium, TypeScript) are in test_oauth_clients.py;
two hosted instances sharing tokens through Redis are in test_oauth_hosted.py.
"""

from __future__ import annotations

import socket
import threading
import time

import httpx
import pytest
from consolekit import csrf_of, owner
from oauthkit import Flow, query
from serverkit import TOKEN, call, serve

pytestmark = pytest.mark.slow  # every test here starts a server


@pytest.fixture
def oserver(tmp_path, brain_path):
    with serve(tmp_path, brain_path) as running:
        yield running


def access_tokens(server) -> list[str]:
    return [k for k, _ in server.parts.oauth.provider.records.scan("access:")]


def no_token(server, *replies: httpx.Response) -> None:
    for r in replies:
        assert "access_token" not in r.text and "code=" not in r.headers.get("location", "")
    assert access_tokens(server) == []


def test_discovery_names_this_door_and_the_401_points_at_it(oserver):
    base = oserver.url
    r = httpx.post(f"{base}/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "ping"})
    assert r.status_code == 401
    assert f'resource_metadata="{base}/.well-known/oauth-protected-resource/mcp"' in r.headers["www-authenticate"]
    for path in ("/.well-known/oauth-protected-resource/mcp", "/.well-known/oauth-protected-resource"):
        prm = httpx.get(base + path).json()
        assert prm["resource"] == f"{base}/mcp" and prm["authorization_servers"] == [base]
    meta = httpx.get(f"{base}/.well-known/oauth-authorization-server").json()
    assert meta["issuer"] == base and meta["code_challenge_methods_supported"] == ["S256"]
    assert meta["client_id_metadata_document_supported"] and meta["authorization_response_iss_parameter_supported"]
    # The probes OAuth does not use stay 404s.
    assert httpx.get(f"{base}/.well-known/openid-configuration").status_code == 404


def test_a_flow_by_hand_reads_the_brain_and_its_writes_carry_the_registered_name(oserver):
    flow = Flow(oserver.url)
    flow.register(name="Phone app")
    tokens = flow.tokens()
    assert tokens["expires_in"] == 3600 and tokens["token_type"] == "Bearer"
    url = f"{oserver.url}/mcp"
    assert call(url, "brain_read", token=tokens["access_token"], path="profile.md").error is None
    wrote = call(
        url, "brain_write", token=tokens["access_token"], path="notes/oauth.md", mode="create", content="# Hi\n"
    )
    assert wrote.error is None
    message = oserver.parts.brain.store.commit_info(wrote.data["sha"]).message
    assert "Cortex-Door: owner-oauth" in message and "Cortex-Client: Phone app" in message
    # Stored hashed: neither token appears in the records files (the snapshot and its log).
    assert oserver.parts.oauth.provider.records.flush()
    home = oserver.parts.settings.home
    stored = "".join(p.read_text() for p in (home / "oauth.json", home / "oauth.json.log") if p.exists())
    assert "access:" in stored
    assert tokens["access_token"] not in stored and tokens["refresh_token"] not in stored
    # The owner token and the secret URL keep working beside it.
    assert call(url, "brain_read", path="profile.md").error is None
    assert call(f"{oserver.url}/s/url-secret-for-tests-abcdefghij/mcp", "brain_read", path="profile.md").error is None


def test_an_unregistered_redirect_uri_is_refused_before_any_page(oserver):
    flow = Flow(oserver.url)
    flow.register()
    for uri in ("http://127.0.0.1:9/other", "http://127.0.0.1:9/callback/", "http://127.0.0.1:10/callback"):
        r = flow.authorize(redirect_uri=uri)
        assert r.status_code == 400 and "location" not in r.headers, uri
        assert "not registered" in r.json()["error_description"]
    assert oserver.parts.oauth.provider.records.scan("pending:") == []
    no_token(oserver)


def test_a_code_used_twice_is_refused_and_ends_what_it_gave(oserver):
    flow = Flow(oserver.url)
    code = flow.code()
    first = flow.exchange(code)
    assert first.status_code == 200
    again = flow.exchange(code)
    assert again.status_code == 400 and again.json()["error"] == "invalid_grant"
    assert "access_token" not in again.text
    # The first use's tokens are revoked with it.
    assert (
        httpx.post(
            f"{oserver.url}/mcp", headers={"Authorization": f"Bearer {first.json()['access_token']}"}, json={}
        ).status_code
        == 401
    )
    assert flow.refresh(first.json()["refresh_token"]).status_code == 400


def test_a_pkce_verifier_that_does_not_match_is_refused(oserver):
    flow = Flow(oserver.url)
    code = flow.code()
    r = flow.exchange(code, verifier="x" * 50)
    assert r.status_code == 400 and r.json() == {
        "error": "invalid_grant",
        "error_description": "incorrect code_verifier",
    }
    no_token(oserver, r)
    # And the code is spent: the right verifier afterwards gets nothing either.
    assert flow.exchange(code).status_code == 400
    no_token(oserver)


def test_the_plain_pkce_method_is_refused(oserver):
    flow = Flow(oserver.url)
    flow.register()
    r = flow.authorize(code_challenge_method="plain", code_challenge="a" * 50)
    # Issue 42: an error page, never a redirect to a URI anyone could have registered.
    assert r.status_code == 400 and "location" not in r.headers and "S256" in r.text
    assert oserver.parts.oauth.provider.records.scan("pending:") == []
    no_token(oserver, r)


def test_an_expired_code_is_refused(oserver):
    flow = Flow(oserver.url)
    oserver.parts.oauth.provider.clock = lambda: time.time() - 400  # codes live 300 s
    code = flow.code()
    r = flow.exchange(code)
    assert r.status_code == 400 and r.json()["error_description"] == "authorization code has expired"
    no_token(oserver, r)


def test_a_token_for_another_resource_is_refused(oserver):
    flow = Flow(oserver.url)
    flow.register()
    r = flow.authorize(resource="https://other.example/mcp")
    assert r.status_code == 400 and "location" not in r.headers and "only resource" in r.text
    no_token(oserver, r)
    # A token issued for this door at localhost is not one for 127.0.0.1's resource.
    local = Flow(oserver.url.replace("127.0.0.1", "localhost"))
    tokens = local.tokens()
    bearer = {"Authorization": f"Bearer {tokens['access_token']}"}
    assert httpx.post(f"{oserver.url}/mcp", headers=bearer, json={}).status_code == 401


def test_a_revoked_clients_refresh_is_refused(oserver):
    flow = Flow(oserver.url)
    tokens = flow.tokens()
    console = owner(oserver.url)
    page = console.get("/console/clients")
    assert "Test client" in page.text and "http://127.0.0.1:9/callback" in page.text
    done = console.post("/console/clients/revoke", data={"csrf": csrf_of(page.text), "client_id": flow.client_id})
    assert done.status_code == 200 and "revoked" in done.text
    r = flow.refresh(tokens["refresh_token"])
    assert r.status_code in (400, 401) and "access_token" not in r.text
    bearer = {"Authorization": f"Bearer {tokens['access_token']}"}
    assert httpx.post(f"{oserver.url}/mcp", headers=bearer, json={}).status_code == 401


def test_a_reused_refresh_token_revokes_the_family(oserver):
    flow = Flow(oserver.url)
    tokens = flow.tokens()
    rotated = flow.refresh(tokens["refresh_token"])
    assert rotated.status_code == 200 and rotated.json()["refresh_token"] != tokens["refresh_token"]
    reused = flow.refresh(tokens["refresh_token"])
    assert reused.status_code == 400 and "access_token" not in reused.text
    # The whole family is gone: the rotated pair too.
    assert flow.refresh(rotated.json()["refresh_token"]).status_code == 400
    for access in (tokens["access_token"], rotated.json()["access_token"]):
        r = httpx.post(f"{oserver.url}/mcp", headers={"Authorization": f"Bearer {access}"}, json={})
        assert r.status_code == 401


def refused(server, access: str) -> bool:
    """Whether the owner door turns this access token away (401)."""
    bearer = {"Authorization": f"Bearer {access}"}
    return httpx.post(f"{server.url}/mcp", headers=bearer, json={}).status_code == 401


def test_a_public_client_revokes_its_own_token_and_a_confidential_one_must_authenticate(oserver):
    """RFC 7009 at /revoke (issue 62): a public client sends `token` and `client_id`, no secret (the
    SDK's handler answered "client_secret: Field required" and the token stayed live); another
    client cannot revoke it; a confidential client's revoke without its secret is refused."""
    url = f"{oserver.url}/mcp"
    flow = Flow(oserver.url)
    tokens = flow.tokens()
    other = Flow(oserver.url)
    other.register(name="Other client")
    meta = httpx.get(f"{oserver.url}/.well-known/oauth-authorization-server").json()
    assert "none" in meta["revocation_endpoint_auth_methods_supported"]
    theirs = flow.http.post("/revoke", data={"token": tokens["access_token"], "client_id": other.client_id})
    assert theirs.status_code == 200  # the same answer, and nothing revoked
    assert call(url, "brain_read", token=tokens["access_token"], path="profile.md").error is None
    no_token = flow.http.post("/revoke", data={"client_id": flow.client_id})
    assert no_token.status_code == 400 and no_token.json()["error"] == "invalid_request"
    done = flow.http.post("/revoke", data={"token": tokens["access_token"], "client_id": flow.client_id})
    assert done.status_code == 200 and done.headers["cache-control"] == "no-store", done.text
    assert refused(oserver, tokens["access_token"])
    assert flow.refresh(tokens["refresh_token"]).status_code == 400  # the whole family

    r = flow.http.post(
        "/register",
        json={
            "redirect_uris": [flow.redirect],
            "client_name": "Server app",
            "token_endpoint_auth_method": "client_secret_post",
        },
    )
    assert r.status_code == 201, r.text
    confidential = Flow(oserver.url, client_id=r.json()["client_id"])
    secret = r.json()["client_secret"]
    code = confidential.code()
    exchanged = confidential.http.post(
        "/token",
        data={
            "grant_type": "authorization_code",
            "code": code,
            "redirect_uri": confidential.redirect,
            "client_id": confidential.client_id,
            "client_secret": secret,
            "code_verifier": confidential.verifier,
            "resource": f"{oserver.url}/mcp",
        },
    )
    assert exchanged.status_code == 200, exchanged.text
    access = exchanged.json()["access_token"]
    for wrong in ({}, {"client_secret": "not-the-secret"}):
        r = confidential.http.post("/revoke", data={"token": access, "client_id": confidential.client_id, **wrong})
        assert r.status_code == 401 and r.json()["error"] == "invalid_client", r.text
        assert not refused(oserver, access)
    r = confidential.http.post(
        "/revoke", data={"token": access, "client_id": confidential.client_id, "client_secret": secret}
    )
    assert r.status_code == 200 and refused(oserver, access)


def test_a_consent_form_posted_cross_site_is_refused(oserver):
    flow = Flow(oserver.url)
    flow.register()
    location = flow.authorize().headers["location"]
    request_id = query(location)["request"]
    console = owner(oserver.url)
    page = console.get(location)
    csrf = csrf_of(page.text)
    form = {"request": request_id, "decision": "approve"}
    # Another site's form: its Origin, and it cannot know the CSRF token.
    cross = console.post(
        "/console/oauth/consent", data=dict(form, csrf=csrf), headers={"Origin": "https://evil.example"}
    )
    bare = httpx.post(f"{oserver.url}/console/oauth/consent", data=form)  # no session, no token
    forged = console.post("/console/oauth/consent", data=dict(form, csrf="forged"))
    for r in (cross, bare, forged):
        assert r.status_code == 403 and "location" not in r.headers
    no_token(oserver, cross, bare, forged)
    # The owner's own click still works afterwards.
    ok = console.post("/console/oauth/consent", data=dict(form, csrf=csrf))
    assert ok.status_code == 303 and "code=" in ok.headers["location"]


def test_no_open_redirect_through_the_error_path(oserver):
    flow = Flow(oserver.url)
    flow.register()
    evil = "https://evil.example/steal"
    for params in (
        {"redirect_uri": evil},
        {"redirect_uri": evil, "response_type": "token"},
        {"redirect_uri": evil, "code_challenge": None},
        {"client_id": "no-such-client", "redirect_uri": evil},
    ):
        r = flow.authorize(**params)
        assert r.status_code == 400 and "location" not in r.headers, params
    # The consent page's answer goes only to the registered URI, and the sign-in's `next` only here.
    console = owner(oserver.url)
    location = flow.authorize().headers["location"]
    page = console.get(location)
    assert "form-action 'self' http://127.0.0.1:9" in page.headers["content-security-policy"]
    denied = console.post(
        "/console/oauth/consent",
        data={"csrf": csrf_of(page.text), "request": query(location)["request"], "decision": "deny"},
    )
    assert denied.headers["location"].startswith("http://127.0.0.1:9/callback?")
    assert query(denied.headers["location"])["error"] == "access_denied"
    c = httpx.Client(base_url=oserver.url, follow_redirects=False)
    form = c.get("/console/signin")
    signed = c.post("/console/signin", data={"csrf": csrf_of(form.text), "secret": TOKEN, "next": evil})
    assert signed.headers["location"] == "/console/proposals"
    no_token(oserver, denied)


class CountingListener:
    """A TCP port that counts connections: a refused document must open none."""

    def __init__(self):
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(8)
        self.port = self.sock.getsockname()[1]
        self.connections = 0
        threading.Thread(target=self._run, daemon=True).start()

    def _run(self):
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.connections += 1
            conn.close()


def test_a_metadata_document_on_a_private_address_is_refused(oserver):
    listener = CountingListener()
    flow = Flow(oserver.url)
    for client_id in (
        f"https://127.0.0.1:{listener.port}/client.json",
        f"https://localhost:{listener.port}/client.json",
        "https://10.1.2.3/client.json",
        "https://192.168.1.1/client.json",
        "https://169.254.169.254/latest/meta-data",
        "https://[::1]/client.json",
        "https://100.64.0.1/client.json",
        f"http://127.0.0.1:{listener.port}/client.json",  # and plain http outside tests
    ):
        flow.client_id = client_id
        r = flow.authorize()
        assert r.status_code == 400 and "location" not in r.headers, client_id
    assert listener.connections == 0
    no_token(oserver)


def test_a_metadata_document_from_loopback_under_the_test_setting(oserver, tmp_path):
    """The test-only setting lets a loopback document through; the flow then reads the brain."""
    import json
    from http.server import BaseHTTPRequestHandler, HTTPServer

    doc: dict = {}

    class Doc(BaseHTTPRequestHandler):
        def do_GET(self):
            body = json.dumps(doc).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    http = HTTPServer(("127.0.0.1", 0), Doc)
    threading.Thread(target=http.serve_forever, daemon=True).start()
    client_id = f"http://127.0.0.1:{http.server_port}/client.json"
    doc.update(client_id=client_id, client_name="Doc client", redirect_uris=["http://127.0.0.1:9/callback"])
    try:
        oserver.parts.oauth.provider.fetcher.allow_loopback = True
        flow = Flow(oserver.url, client_id=client_id)
        tokens = flow.tokens()
        assert call(f"{oserver.url}/mcp", "brain_read", token=tokens["access_token"], path="profile.md").error is None
        listed = oserver.parts.oauth.provider.clients()
        assert [(c["name"], c["kind"]) for c in listed] == [("Doc client", "document")]
    finally:
        http.shutdown()


def test_with_a_public_url_another_host_is_refused(tmp_path, brain_path):
    with serve(tmp_path, brain_path, CORTEX_PUBLIC_URL="https://notes.example.org") as running:
        r = httpx.get(f"{running.url}/.well-known/oauth-authorization-server")
        assert r.status_code == 421 and "CORTEX_PUBLIC_URL" in r.text
        ok = httpx.get(f"{running.url}/.well-known/oauth-authorization-server", headers={"Host": "notes.example.org"})
        assert ok.status_code == 200 and ok.json()["issuer"] == "https://notes.example.org"
        r = httpx.post(f"{running.url}/mcp", json={}, headers={"Host": "notes.example.org"})
        assert (
            'resource_metadata="https://notes.example.org/.well-known/oauth-protected-resource/mcp"'
            in r.headers["www-authenticate"]
        )


def test_oauth_off_keeps_the_probes_404(tmp_path, brain_path):
    with serve(tmp_path, brain_path, CORTEX_OAUTH="off") as running:
        assert httpx.get(f"{running.url}/.well-known/oauth-authorization-server").status_code == 404
        assert httpx.post(f"{running.url}/register", json={}).status_code == 404
        assert "resource_metadata" not in httpx.post(f"{running.url}/mcp", json={}).headers["www-authenticate"]
        assert httpx.get(f"{running.url}/console/oauth/consent?request=x").status_code == 404
        page = owner(running.url).get("/console/clients")
        assert page.status_code == 200 and "CORTEX_OAUTH=off" in page.text


def test_the_banner_says_where_oauth_answers(tmp_path, brain_path):
    from serverkit import make_settings

    from cortex.app.server import assemble, banner, oauth_line

    parts = assemble(make_settings(tmp_path, brain_path, env={"CORTEX_MEANING": "off"}))
    assert "OAuth: on for localhost only" in banner(parts) and "CORTEX_PUBLIC_URL" in banner(parts)
    public = make_settings(tmp_path, brain_path, env={"CORTEX_PUBLIC_URL": "https://notes.example.org"})
    assert oauth_line(public) == (
        "OAuth: on for https://notes.example.org/mcp (paste that URL into Claude.ai, ChatGPT or Claude Code)"
    )
    assert oauth_line(make_settings(tmp_path, brain_path, env={"CORTEX_OAUTH": "off"})).startswith("OAuth: off")


def test_open_registration_is_bounded(oserver, monkeypatch):
    """A client that never gets a token is forgotten after a day; past the cap, registration waits."""
    import cortex.http.oauth as oauth

    flow = Flow(oserver.url)
    flow.register()
    records = oserver.parts.oauth.provider.records
    expires = records._data[f"client:{flow.client_id}"][0]
    assert expires is not None and expires - time.time() > oauth.UNUSED_CLIENT_SECONDS - 60
    flow.tokens()
    assert records._data[f"client:{flow.client_id}"][0] is None  # used: kept until revoked
    monkeypatch.setattr(oauth, "MAX_CLIENTS", 2)
    Flow(oserver.url).register()
    r = httpx.post(f"{oserver.url}/register", json={"redirect_uris": ["http://127.0.0.1:9/cb"]})
    assert r.status_code == 400 and "revoke some" in r.json()["error_description"]


def test_a_revoked_clients_listen_stream_is_closed_and_hears_nothing_after(oserver):
    """A `subscriptions/listen` stream opened with an OAuth access token is checked against it
    while open: revoked on the console, the stream ends, and a note changed after that is not
    told to it (it went on hearing every change, issue 54)."""
    import asyncio

    import anyio
    from serverkit import client

    flow = Flow(oserver.url)
    tokens = flow.tokens()
    url = f"{oserver.url}/mcp"
    assert call(url, "brain_write", path="notes/kiln.md", mode="create", content="# Kiln\n").error is None
    store = oserver.parts.brain.store
    time.sleep(2.5)  # the create's own events go out before the stream opens

    def revoke() -> None:
        console = owner(oserver.url)
        page = console.get("/console/clients")
        done = console.post("/console/clients/revoke", data={"csrf": csrf_of(page.text), "client_id": flow.client_id})
        assert done.status_code == 200

    async def go() -> tuple[list, str]:
        heard: list = []
        ended = ""
        async with client(url, tokens["access_token"]) as c:
            try:
                async with c.listen(
                    resources_list_changed=True, resource_subscriptions=["cortex://note/notes/kiln.md"]
                ) as sub:
                    await anyio.to_thread.run_sync(revoke)
                    await anyio.sleep(2.5)  # past the stream's next look at its token
                    await anyio.to_thread.run_sync(
                        lambda: store.commit(lambda v: {"notes/kiln.md": b"# Kiln\n\nsecret plans\n"}, "hand edit")
                    )
                    with anyio.fail_after(10):
                        async for event in sub:
                            heard.append(event)
            except Exception as exc:  # the stream's end, as the SDK raises it
                ended = str(exc)
        return heard, ended

    heard, ended = asyncio.run(go())
    assert heard == [], heard
    assert "ended" in ended, ended  # the SDK's SubscriptionLost: the stream was cut, not left open


def test_an_access_token_is_refused_from_its_expiry_second_and_its_listen_stream_ends_then(oserver, monkeypatch):
    """A token is good until its `expires_at`, not up to a second past it (the SDK's check is
    `expires_at < int(time.time())`), and a listen stream it opened ends at that moment, not at the
    watch's next look (issue 62). The provider's clock is moved; the server and its watch are real."""
    import asyncio

    import anyio
    from serverkit import client

    import cortex.http.oauth as oauth

    shift = [0.0]
    oserver.parts.oauth.provider.clock = lambda: time.time() + shift[0]  # before the door copies it
    flow = Flow(oserver.url)
    tokens = flow.tokens()
    [(_, record)] = oserver.parts.oauth.provider.records.scan("access:")
    expires, access = record["expires_at"], tokens["access_token"]
    assert isinstance(expires, int)

    shift[0] = expires - time.time() - 0.5  # half a second before: still good
    assert not refused(oserver, access)
    shift[0] = expires - time.time()  # its expiry second itself: refused
    assert refused(oserver, access)

    # A stream opened 1.5 s before expiry ends then; the watch's regular look is set far apart
    # (5 s), so a stream cut only at a regular look would run on well past its token.
    monkeypatch.setattr(oauth, "RECHECK_S", 5.0)
    url = f"{oserver.url}/mcp"

    async def go() -> tuple[str, float]:
        ended, opened = "", time.monotonic()
        async with client(url, access) as c:
            try:
                async with c.listen(resources_list_changed=True) as sub:
                    opened = time.monotonic()
                    with anyio.fail_after(8):
                        async for _ in sub:
                            pass
            except Exception as exc:  # the stream's end, as the SDK raises it
                ended = str(exc)
        return ended, time.monotonic() - opened

    shift[0] = expires - time.time() - 1.5
    ended, lasted = asyncio.run(go())
    assert "ended" in ended, ended
    assert 0.8 < lasted < 3.0, lasted
