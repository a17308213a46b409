"""Two hosted instances on one remote and one Redis: a token one issued is accepted by the
other, and a revoke on one is honoured by the other within a second (real Redis, real HTTP)."""

from __future__ import annotations

import time

import httpx
import pytest
from oauthkit import Flow
from serverkit import RunningServer, call, make_settings

from cortex.app.brain_setup import init_brain
from cortex.app.server import assemble, make_app

pytestmark = pytest.mark.slow


def hosted(tmp_path, name: str, remote, redis_url: str) -> RunningServer:
    settings = make_settings(
        tmp_path / name,
        tmp_path / name / "unused",
        env={
            "CORTEX_REMOTE": str(remote),
            "REDIS_URL": redis_url,
            "CORTEX_MEANING": "off",
            "CORTEX_FETCH_INTERVAL": "30",
        },
    )
    parts = assemble(settings)
    running = RunningServer(make_app(parts), parts.settings).__enter__()
    running.parts = parts
    return running


def test_two_hosted_instances_share_tokens_and_a_revoke(tmp_path, redis_proc):
    remote = tmp_path / "remote.git"
    init_brain(remote, bare=True)
    one, two = (hosted(tmp_path, n, remote, redis_proc.url) for n in ("one", "two"))
    try:
        # The same issuer for both, as behind one public URL: reach both as localhost:<one's port>.
        flow = Flow(one.url)
        tokens = flow.tokens()
        assert not (tmp_path / "one" / "home" / "oauth.json").exists()  # in Redis, not the state folder
        access = tokens["access_token"]
        # Instance two accepts a token instance one issued (its own Host: the resource differs, so
        # present it at one's origin through two's socket).
        host = one.url.split("://", 1)[1]
        ping = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
        headers = {"Authorization": f"Bearer {access}", "Host": host, "Accept": "application/json, text/event-stream"}
        init = {
            "jsonrpc": "2.0",
            "id": 0,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "t", "version": "1"},
            },
        }
        r = httpx.post(f"{two.url}/mcp", json=init, headers=headers)
        assert r.status_code == 200, r.text
        assert call(f"{one.url}/mcp", "brain_read", token=access, path="profile.md").error is None
        # Revoke at one's /revoke as RFC 7009 says a public client does; two refuses within a second.
        done = httpx.post(f"{one.url}/revoke", data={"token": tokens["refresh_token"], "client_id": flow.client_id})
        assert done.status_code == 200
        deadline, status = time.monotonic() + 1.0, 200
        while time.monotonic() < deadline:
            status = httpx.post(f"{two.url}/mcp", json=ping, headers=headers).status_code
            if status == 401:
                break
            time.sleep(0.05)
        assert status == 401
        assert flow.refresh(tokens["refresh_token"]).status_code == 400
    finally:
        for s in (one, two):
            s.__exit__(None, None, None)
            s.parts.remote.stop()
