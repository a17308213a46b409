"""What a client is told when it comes to the owner door without the owner token, with
CORTEX_OAUTH=off (with OAuth on, the same challenge also names the resource metadata:
tests/http/test_oauth.py).

The MCP authorization spec is optional and OAuth-based; Cortex takes a static bearer
token instead. So a refusal follows RFC 6750 section 3 (the bare `Bearer` challenge when
no bearer was sent, `error="invalid_token"` when a wrong one was) with no
`resource_metadata`, and the URLs OAuth clients probe next (RFC 9728 / RFC 8414 / OpenID
discovery, then `/register`) are 404s whose body says to send the owner token. mcp-remote
and the MCP Inspector print the `/register` body; the SDK clients print the 401's body.
"""

from __future__ import annotations

import re

import httpx
import pytest
from mcp.shared.exceptions import MCPError
from reliakit import post_initialize
from serverkit import TOKEN, URL_SECRET, call, serve

from cortex.http.doors import OAUTH_PROBES

pytestmark = pytest.mark.slow  # every test here takes 0.3 s or more


@pytest.fixture
def server(tmp_path, brain_path):
    with serve(tmp_path, brain_path, CORTEX_OAUTH="off") as running:
        yield running


SEND = "send Authorization: Bearer <owner token>"
BARE = 'Bearer realm="cortex"'
# RFC 6750 section 3: error_description is %x20-21 / %x23-5B / %x5D-7E (no quote, no backslash).
DESCRIPTION = re.compile(r'error_description="([\x20\x21\x23-\x5b\x5d-\x7e]*)"')


def test_no_bearer_gets_the_bare_challenge_and_a_body_naming_the_header(server):
    mcp = f"{server.url}/mcp"
    for headers in ({}, {"Authorization": f"Basic {TOKEN}"}, {"Authorization": "Bearer"}):
        r = post_initialize(mcp, headers)
        assert r.status_code == 401, headers
        assert r.headers["www-authenticate"] == BARE, headers
        assert r.json() == {"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": f"Unauthorized: {SEND}"}}
    # The GET that opens the server's stream is refused the same way.
    r = httpx.get(mcp, headers={"Accept": "text/event-stream"})
    assert r.status_code == 401 and r.headers["www-authenticate"] == BARE and SEND in r.text


def test_a_wrong_bearer_gets_invalid_token(server):
    for wrong in ("wrong", URL_SECRET):
        r = post_initialize(f"{server.url}/mcp", {"Authorization": f"Bearer {wrong}"})
        assert r.status_code == 401
        challenge = r.headers["www-authenticate"]
        assert challenge.startswith(BARE + ', error="invalid_token", ')
        m = DESCRIPTION.search(challenge)
        assert m and SEND in m.group(1), challenge
        assert "resource_metadata" not in challenge
        assert r.json()["error"]["message"] == f"Unauthorized: not the owner token; {SEND}"
        assert wrong not in r.text


def test_the_python_sdk_client_shows_the_message(server):
    for token, said in ((None, f"Unauthorized: {SEND}"), ("wrong", f"Unauthorized: not the owner token; {SEND}")):
        with pytest.raises(BaseException) as caught:
            call(f"{server.url}/mcp", "brain_read", token=token, path="profile.md")
        exc = caught.value
        while isinstance(exc, BaseExceptionGroup) and len(exc.exceptions) == 1:
            exc = exc.exceptions[0]
        assert isinstance(exc, MCPError) and str(exc) == said


def test_oauth_probes_are_404s_that_say_to_send_the_token(server):
    """Every URL mcp-remote 0.15 and the Inspector 2.12 were seen to probe, and no metadata anywhere."""
    seen = {
        "/.well-known/oauth-protected-resource/mcp",
        "/.well-known/oauth-protected-resource",
        "/.well-known/oauth-authorization-server/mcp",
        "/.well-known/oauth-authorization-server",
        "/.well-known/openid-configuration/mcp",
        "/.well-known/openid-configuration",
        "/mcp/.well-known/openid-configuration",
        "/register",
    }
    assert seen <= set(OAUTH_PROBES)
    for path in OAUTH_PROBES:
        for method in ("GET", "POST"):
            r = httpx.request(method, f"{server.url}{path}", json={} if method == "POST" else None)
            assert r.status_code == 404, (method, path)
            assert r.headers["content-type"].startswith("text/plain")
            assert r.text.startswith("Not Found: Cortex does not do OAuth. ")
            assert '--header "Authorization: Bearer <owner token>"' in r.text
    # mcp-remote sends its --header values to /register too: a wrong bearer is named.
    r = httpx.post(f"{server.url}/register", json={}, headers={"Authorization": "Bearer wrong"})
    assert r.status_code == 404 and "the bearer token sent is not the owner token" in r.text
    r = httpx.post(f"{server.url}/register", json={}, headers={"Authorization": f"Bearer {TOKEN}"})
    assert r.status_code == 404 and "not the owner token" not in r.text


def test_the_url_door_stays_a_bare_404(server):
    """Nothing about OAuth or tokens near `/s/`: a wrong secret must look like any unknown path."""
    for path in (
        "/s/not-the-secret/mcp",
        "/.well-known/oauth-protected-resource/s/not-the-secret/mcp",
        f"/.well-known/oauth-protected-resource/s/{URL_SECRET}/mcp",
        "/no-such-path",
    ):
        r = post_initialize(f"{server.url}{path}", {})
        assert (r.status_code, r.text) == (404, "Not Found"), path
        assert "www-authenticate" not in r.headers
    assert post_initialize(f"{server.url}/mcp", {"Authorization": f"Bearer {TOKEN}"}).status_code == 200


def test_healthz_detail_uses_the_same_challenge(server):
    r = httpx.get(f"{server.url}/healthz?detail=1")
    assert r.status_code == 401 and r.headers["www-authenticate"] == BARE
    r = httpx.get(f"{server.url}/healthz?detail=1", headers={"Authorization": "Bearer nope"})
    assert r.status_code == 401 and 'error="invalid_token"' in r.headers["www-authenticate"]
