"""py-spy's collapsed stacks of the server, read as two tables: where its time went by bucket,
and the functions most often on the stack (`cortex bench --part door` prints them)."""

from __future__ import annotations

__all__ = ["SPY_BUCKETS", "SPY_ROOTS", "spy_report"]

# Where a sample of the server's time goes, first match wins (read from the stack, innermost
# frame last). "tool work" is everything under a Tools method; the rest is the door.
SPY_BUCKETS = [
    ("tool work (cortex/tools/)", ("cortex/tools/",)),
    ("redaction (cortex.notes.redact)", ("cortex/notes/redact.py:",)),
    ("reply JSON text (mcp_tools.run_tool)", ("cortex/http/mcp_tools.py:run_tool",)),
    # The event loop's side of handing a sync tool to a worker thread and back.
    ("SDK: the hop to a worker thread (anyio.to_thread)", ("anyio/to_thread.py:",)),
    ("SDK: tool argument/result validation (pydantic)", ("pydantic/", "pydantic_core/")),
    ("SSE framing (sse_starlette)", ("sse_starlette/",)),
    ("logging", ("logging/",)),
    ("SDK: session, dispatch, transport (mcp)", ("mcp/",)),
    ("HTTP server (uvicorn, h11, starlette)", ("uvicorn/", "h11/", "starlette/")),
    ("anyio streams and worker threads", ("anyio/",)),
    ("asyncio event loop, selectors", ("asyncio/", "selectors.py", "socket.py")),
]
# Frames every sample passes through: left out of the function table.
SPY_ROOTS = (
    "threading.py:",
    "<frozen runpy>",
    "asyncio/base_events.py:",
    "asyncio/runners.py:",
    "asyncio/events.py:",
    "uvicorn/_compat.py:",
    "uvicorn/server.py:",
    "cortex/cli.py:",
    "cortex/app/startup.py:serve",
    "concurrent/futures/thread.py:",
    "anyio/_backends/_asyncio.py:WorkerThread.run",
)


def spy_report(raw: str, top: int = 25) -> str:
    """py-spy's collapsed stacks (GIL holders only) as two tables: where the server's time
    went by bucket (SPY_BUCKETS), and the functions on the stack most often (cumulative)."""
    total = 0
    cumulative: dict[str, int] = {}
    buckets: dict[str, int] = {}
    for line in raw.splitlines():
        stack, _, count = line.rpartition(" ")
        if not stack or not count.isdigit():
            continue
        k = int(count)
        total += k
        frames = [_frame_name(f) for f in stack.split(";")]
        for f in set(frames):
            cumulative[f] = cumulative.get(f, 0) + k
        bucket = _spy_bucket(frames)
        buckets[bucket] = buckets.get(bucket, 0) + k
    if not total:
        return "(no samples)"
    lines = [f"{total} samples of the thread holding the GIL; share by where it was:"]
    for name, k in sorted(buckets.items(), key=lambda kv: -kv[1]):
        lines.append(f"  {100 * k / total:5.1f}%  {name}")
    lines.append("functions by cumulative share (on the stack), common roots left out:")
    shown = [kv for kv in sorted(cumulative.items(), key=lambda kv: -kv[1]) if not kv[0].startswith(SPY_ROOTS)]
    for name, k in shown[:top]:
        lines.append(f"  {100 * k / total:5.1f}%  {name}")
    return "\n".join(lines)


def _spy_bucket(frames: list[str]) -> str:
    """The first bucket any frame of the stack falls in; else the innermost frame's file."""
    for name, markers in SPY_BUCKETS:
        if any(f.startswith(markers) for f in frames):
            return name
    return "other: " + (frames[-1].split(":", 1)[0] if frames else "?")


def _frame_name(frame: str) -> str:
    """`fn (/…/site-packages/mcp/server/session.py:12)` -> `mcp/server/session.py:fn`."""
    name, _, where = frame.partition(" (")
    path = where.rsplit(":", 1)[0]
    for marker in ("site-packages/", "/cortex/", "lib/python3.11/", "lib/python3"):
        if marker in path:
            path = ("cortex/" if marker == "/cortex/" else "") + path.split(marker, 1)[1]
            break
    return f"{path}:{name}" if path else name
