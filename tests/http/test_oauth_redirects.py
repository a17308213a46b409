"""The OAuth door sends nothing to a URI it has not proven, and shows only a redirect's host
(issue 42, the low findings).

- an /authorize request the SDK would answer by redirecting an error (no PKCE challenge, a
  `plain` one, `response_type=token`, another resource) gets a 400 page instead: anyone can
  register a redirect URI, so an error sent there made the owner's domain an open redirector;
- a redirect URI with user info (`https://claude.ai@evil.example/cb`) or a character no host
  name has (`;`, `,`, `'`, `*`, which the consent page's CSP copied) is refused at registration;
- a metadata document's address is judged with the IPv4 address inside an IPv6 one (6to4,
  Teredo), and site-local `fec0::/10` and `192.0.0.0/24` are not public.
"""

from __future__ import annotations

import httpx
import pytest
from oauthkit import Flow
from serverkit import serve

from cortex.http.client_documents import public_address

REDIRECT = "http://127.0.0.1:9/callback"


@pytest.mark.slow
def test_authorize_errors_are_a_page_never_a_redirect(tmp_path, brain_path) -> None:
    with serve(tmp_path, brain_path) as running:
        flow = Flow(running.url)
        flow.register()
        for override, words in [
            ({"response_type": "token"}, "response_type must be code"),
            ({"code_challenge": None}, "S256 code_challenge is required"),
            ({"code_challenge_method": "plain"}, "S256 code_challenge is required"),
            ({"resource": "https://other.example/mcp"}, "only resource"),
        ]:
            r = flow.authorize(**override)
            assert r.status_code == 400 and "location" not in r.headers and words in r.text, (override, r.text)
        assert flow.authorize().status_code == 302  # a sound request still goes to the consent page
        posted = httpx.post(
            f"{running.url}/authorize",
            data={"response_type": "token", "client_id": flow.client_id, "redirect_uri": REDIRECT},
            follow_redirects=False,
        )
        assert posted.status_code == 400 and "location" not in posted.headers


@pytest.mark.slow
@pytest.mark.parametrize(
    "uri",
    [
        "https://claude.ai@evil.example/cb",
        "https://user:pw@example.org/cb",
        "https://a;b.example/cb",
        "https://a,b.example/cb",
        "https://o'brien.example/cb",
        "https://*.example/cb",
    ],
)
def test_a_redirect_uri_with_user_info_or_no_host_name_is_refused(tmp_path, brain_path, uri) -> None:
    with serve(tmp_path, brain_path) as running:
        r = httpx.post(
            f"{running.url}/register",
            json={"redirect_uris": [uri], "client_name": "x", "token_endpoint_auth_method": "none"},
        )
        assert r.status_code == 400 and r.json()["error"] == "invalid_redirect_uri", r.text
        assert running.parts.oauth.provider.clients() == []


def test_addresses_inside_addresses_and_the_missing_ranges_are_not_public() -> None:
    for address in ("2002:7f00:1::1", "2002:c0a8:0101::1", "fec0::1", "192.0.0.8", "::ffff:10.0.0.1"):
        assert not public_address(address), address
    for address in ("2002:0808:0808::1", "8.8.8.8", "2001:4860:4860::8888", "::ffff:8.8.8.8"):
        assert public_address(address), address
