"""A brain_read with an OAuth access token against the same call with the owner token, in one
run on one server (`python -m bench.oauth_bench [notes] [calls]`).

`cortex serve` runs in its own process (`door_bench.DoorServer`); this process signs in once
over real HTTP (registration, /authorize, the owner's consent through the console, /token),
then drives two sessions of the SDK's client, one per token, in alternating blocks so both see
the same machine load. The goal: the OAuth call's median at most 1.1x the owner token's. What
OAuth adds on the server is one bearer check: the token's record and its family's (a dict
lookup each in the state-folder file; two Redis GETs in hosted mode).
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import re
import secrets
import statistics
import sys
import tempfile
import time
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

from bench.door_bench import DoorServer
from bench.synthetic import make_brain

__all__ = ["BLOCK", "bench_oauth", "sign_in"]

BLOCK = 10  # calls a token before the other's turn
CALLBACK = "http://127.0.0.1:9/callback"


def sign_in(base: str, owner_token: str) -> str:
    """An OAuth access token, by the flow a client and its owner go through."""
    import httpx2

    http = httpx2.Client(base_url=base, follow_redirects=False, timeout=30)
    client_id = http.post(
        "/register", json={"redirect_uris": [CALLBACK], "client_name": "bench", "token_endpoint_auth_method": "none"}
    ).json()["client_id"]
    verifier = secrets.token_urlsafe(48)
    challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).decode().rstrip("=")
    params = {"response_type": "code", "client_id": client_id, "redirect_uri": CALLBACK, "code_challenge": challenge}
    consent = http.get("/authorize", params=dict(params, code_challenge_method="S256")).headers["location"]
    csrf = re.compile(r'name="csrf" value="([^"]+)"')
    form = http.get("/console/signin")
    http.post("/console/signin", data={"csrf": csrf.search(form.text).group(1), "secret": owner_token})
    page = http.get(consent)
    request_id = parse_qs(urlsplit(consent).query)["request"][0]
    answer = http.post(
        "/console/oauth/consent",
        data={"csrf": csrf.search(page.text).group(1), "request": request_id, "decision": "approve"},
    )
    code = parse_qs(urlsplit(answer.headers["location"]).query)["code"][0]
    got = http.post(
        "/token",
        data={
            "grant_type": "authorization_code",
            "code": code,
            "redirect_uri": CALLBACK,
            "client_id": client_id,
            "code_verifier": verifier,
        },
    )
    return got.json()["access_token"]


async def _timed(url: str, tokens: dict[str, str], calls: int) -> dict[str, list[float]]:
    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    times: dict[str, list[float]] = {name: [] for name in tokens}
    async with (
        Client(
            streamable_http_client(
                url, http_client=httpx2.AsyncClient(headers={"Authorization": f"Bearer {tokens['owner']}"})
            )
        ) as owner,
        Client(
            streamable_http_client(
                url, http_client=httpx2.AsyncClient(headers={"Authorization": f"Bearer {tokens['oauth']}"})
            )
        ) as oauth,
    ):
        sessions = {"owner": owner, "oauth": oauth}
        for c in sessions.values():  # warm both
            await c.call_tool("brain_read", {"path": "profile.md"})
        for block in range(calls // BLOCK):
            order = ("owner", "oauth") if block % 2 == 0 else ("oauth", "owner")
            for name in order:
                for _ in range(BLOCK):
                    t = time.perf_counter()
                    result = await sessions[name].call_tool("brain_read", {"path": "profile.md"})
                    times[name].append(time.perf_counter() - t)
                    assert not result.is_error
    return times


def bench_oauth(root: Path, n: int = 200, calls: int = 100) -> dict:
    owner_token = "b" * 32
    brain = make_brain(root, n)
    server = DoorServer(root, brain, owner_token)
    try:
        base = f"http://127.0.0.1:{server.port}"
        tokens = {"owner": owner_token, "oauth": sign_in(base, owner_token)}
        times = asyncio.run(_timed(f"{base}/mcp", tokens, calls))
    finally:
        server.stop()
    owner, oauth = statistics.median(times["owner"]), statistics.median(times["oauth"])
    return {
        "notes": n,
        "calls_each": len(times["owner"]),
        "owner_p50_ms": owner * 1000,
        "oauth_p50_ms": oauth * 1000,
        "ratio": oauth / owner,
        "goal": "<= 1.1",
    }


if __name__ == "__main__":
    notes = int(sys.argv[1]) if len(sys.argv) > 1 else 200
    count = int(sys.argv[2]) if len(sys.argv) > 2 else 100
    with tempfile.TemporaryDirectory() as tmp:
        for key, value in bench_oauth(Path(tmp), notes, count).items():
            print(f"{key}: {value:.3f}" if isinstance(value, float) else f"{key}: {value}")
