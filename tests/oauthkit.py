"""An OAuth client by hand, over real HTTP against a running server: register, authorize, the
owner's answer on the console's consent page (signed in as the owner, with its CSRF token),
the token endpoint. The SDK clients' own flows are in test_oauth_clients.py; this kit is for
the refusals, where a test needs to send exactly one wrong thing."""

from __future__ import annotations

import base64
import hashlib
import secrets
from dataclasses import dataclass
from urllib.parse import parse_qs, urlsplit

import httpx
from consolekit import csrf_of, owner

REDIRECT = "http://127.0.0.1:9/callback"


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
