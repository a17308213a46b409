"""docs/PUBLIC_ADDRESS.md's "try it on your machine" steps, run as written: Cortex on loopback
told its public address, Caddy in front with a certificate of its own, then over HTTPS the
health check, OAuth discovery, and the Python SDK's OAuth client signing in (the owner
approving in headless Chromium) and reading a note. Only the ports differ from the page."""

from __future__ import annotations

import os
import re
import shutil
import socket
import subprocess
import time
from pathlib import Path

import httpx
import pytest
from oauthkit import sdk_client_reads
from serverkit import serve

pytestmark = pytest.mark.slow

PAGE = Path(__file__).resolve().parents[2] / "docs" / "PUBLIC_ADDRESS.md"


def caddy() -> str:
    """Caddy, which `ops/system-deps.sh --tests` installs: fails under CI, skips elsewhere."""
    found = shutil.which("caddy")
    if found is None:
        if os.environ.get("CI") == "true":
            pytest.fail("caddy is missing: `make test` installs it (ops/system-deps.sh --tests)")
        pytest.skip("caddy is not installed (apt-get install caddy)")
    return found


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def local_steps() -> tuple[dict[str, str], str]:
    """The section's exported settings and its Caddyfile, as the page writes them."""
    section = PAGE.read_text(encoding="utf-8").split("## Try it on your machine first", 1)[1].split("\n## ", 1)[0]
    shell = section.split("```sh\n", 1)[1].split("```", 1)[0]
    exported = dict(re.findall(r"^export (\w+)=(\S+)", shell, re.M))
    caddyfile = section.split("```caddyfile\n", 1)[1].split("```", 1)[0]
    return exported, caddyfile


def test_the_local_steps_as_written(tmp_path, brain_path, browser) -> None:
    binary = caddy()
    exported, caddyfile = local_steps()
    assert exported == {"CORTEX_PUBLIC_URL": "https://localhost:8443", "CORTEX_TRUSTED_PROXIES": "127.0.0.1"}
    https, http = free_port(), free_port()
    ports = {"8443": str(https), "8080": str(http)}
    env = {k: re.sub(r"8443|8080", lambda m: ports[m.group()], v) for k, v in exported.items()}
    with serve(tmp_path, brain_path, **env) as cortex:
        config = tmp_path / "Caddyfile.local"
        text = re.sub(r"\b(8443|8080)\b", lambda m: ports[m.group()], caddyfile)
        config.write_text(text.replace("127.0.0.1:8765", f"127.0.0.1:{cortex.port}"))
        home = tmp_path / "caddy-home"
        proxy = subprocess.Popen(
            [binary, "run", "--config", str(config), "--adapter", "caddyfile"],
            env={"HOME": str(home), "PATH": os.environ.get("PATH", "")},
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        try:
            root = home / ".local/share/caddy/pki/authorities/local/root.crt"  # where the page says
            base = f"https://localhost:{https}"
            deadline, health = time.monotonic() + 60, None
            while time.monotonic() < deadline and health is None:
                assert proxy.poll() is None, proxy.stderr.read().decode()[-2000:] if proxy.stderr else ""
                try:
                    health = httpx.get(f"{base}/healthz", verify=str(root), timeout=5) if root.exists() else None
                except httpx.HTTPError:
                    time.sleep(0.2)
            assert health is not None and health.status_code == 200 and health.json()["ok"], health
            plain = httpx.get(f"http://localhost:{http}/console?x=1", timeout=5)  # issue 55: the port was lost
            assert plain.status_code in (301, 308) and plain.headers["location"] == f"{base}/console?x=1"
            meta = httpx.get(f"{base}/.well-known/oauth-protected-resource/mcp", verify=str(root), timeout=5).json()
            assert meta["authorization_servers"] == [f"{base}/"] or meta["authorization_servers"] == [base]
            outcome = sdk_client_reads(f"{base}/mcp", browser, verify=str(root))
            assert outcome["read"].error is None and outcome["read"].data["path"] == "profile.md"
            (client_,) = cortex.parts.oauth.provider.clients()
            assert client_["redirect_uris"] == ["http://127.0.0.1:9/callback"]
        finally:
            proxy.terminate()
            proxy.wait(timeout=10)
