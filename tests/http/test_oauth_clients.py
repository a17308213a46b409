"""The SDKs' own OAuth clients, from discovery to a brain_read, the owner approving on the
console's consent page in headless Chromium:

- the Python SDK's `mcp.client.auth.OAuthClientProvider` (dynamic registration, PKCE S256, the
  resource indicator, `iss` checked) over real HTTP;
- the TypeScript SDK's client auth (the version tests/tsclient pins), run by node.

The client runs in a thread (Python) or a process (node); the test's own thread drives the
browser, which is where the SDK's "open this URL" goes and where the redirect back is caught.
"""

from __future__ import annotations

import json
import subprocess

import pytest
from oauthkit import CALLBACK, approve_in_browser, sdk_client_reads
from serverkit import TS, serve, ts_node

pytestmark = pytest.mark.slow


@pytest.fixture
def oserver(tmp_path, brain_path):
    with serve(tmp_path, brain_path) as running:
        yield running


def test_the_python_sdk_oauth_client_reads_the_brain(oserver, browser):
    outcome = sdk_client_reads(f"{oserver.url}/mcp", browser)
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
