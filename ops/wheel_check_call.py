"""One real MCP call against a `cortex serve` started from the installed wheel (ops/wheel-check.sh)."""

import asyncio
import sys
import time
from pathlib import Path

import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client


async def main(base: str, token_file: str) -> None:
    deadline = time.monotonic() + 30
    while True:
        try:
            httpx2.get(f"{base}/healthz", timeout=1).raise_for_status()
            break
        except httpx2.HTTPError as err:
            if time.monotonic() > deadline:
                raise SystemExit("wheel check: cortex serve did not answer /healthz") from err
            await asyncio.sleep(0.2)
    # The port answers while the server is still being built; the token file comes with it.
    while not Path(token_file).exists():
        if time.monotonic() > deadline:
            raise SystemExit(f"wheel check: cortex serve made no {token_file}")
        await asyncio.sleep(0.2)
    token = Path(token_file).read_text().strip()
    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=30)
    async with Client(streamable_http_client(f"{base}/mcp", http_client=http)) as client:
        result = await client.call_tool("brain_read", {"path": "profile.md"})
        text = "".join(getattr(part, "text", "") for part in result.content)
        if result.is_error or "profile.md" not in text:
            raise SystemExit(f"wheel check: brain_read failed: {text[:200]}")


asyncio.run(main(sys.argv[1], sys.argv[2]))
