"""The MCP SDK's own no-op tool, served as Cortex's doors are (Streamable HTTP, JSON replies,
uvicorn): the baseline `cortex bench --part door-tree` divides every call by, in the same run.

`python -m bench.noop_door <port>`
"""

from __future__ import annotations

import sys

__all__ = ["main"]


def main(port: int) -> None:
    import uvicorn
    from mcp.server import MCPServer

    server = MCPServer(name="noop", log_level="WARNING")

    @server.tool()
    def noop() -> str:
        """Does nothing."""
        return "ok"

    app = server.streamable_http_app(streamable_http_path="/mcp", json_response=True)
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning")


if __name__ == "__main__":
    main(int(sys.argv[1]))
