"""Which reader answers an ask (CORTEX_READER): the server's model, the client's own model
(MCP sampling) or the offline reader, and why any reader before it was passed over."""

from __future__ import annotations

from cortex.ask.readers import ClientTurn, Reader
from cortex.errors import BadInput

__all__ = ["READER_POLICIES", "ReaderOrder", "joined"]

READER_POLICIES = ("auto", "server", "client", "offline")


def joined(passed: str, more: str) -> str:
    """Two reasons a reader was passed over, as one."""
    return "; ".join(x for x in (passed, more) if x)


class ReaderOrder:
    """Which reader answers an ask (CORTEX_READER): `auto` takes the server's model when a
    key is set, else the client's own model when its session can sample, else the offline
    reader; `server`, `client` and `offline` put that one first, and a reader that cannot
    read hands over to the next of auto's order. `pick` says why it skipped any."""

    def __init__(self, policy: str, server: Reader | None, offline: Reader):
        if policy not in READER_POLICIES:
            raise BadInput(f"CORTEX_READER must be one of {', '.join(READER_POLICIES)}, not {policy!r}")
        self.policy, self.server, self.offline = policy, server, offline

    def pick(self, turn: ClientTurn | None) -> tuple[Reader | None, str]:
        """(the server-side reader to use, or None for the client's model; why any reader
        before it was passed over). Auto passing over a server model with no key is no news."""
        kinds = ("server", "client", "offline")
        order = kinds if self.policy == "auto" else (self.policy, *(k for k in kinds if k != self.policy))
        passed: list[str] = []
        for kind in order:
            if kind == "server":
                if self.server is not None:
                    return self.server, "; ".join(passed)
                if self.policy != "auto":
                    passed.append("no server model (ANTHROPIC_API_KEY is not set)")
            elif kind == "client":
                why = turn.unable() if turn is not None else "this door asks no client's model"
                if not why:
                    return None, "; ".join(passed)
                if turn is not None or self.policy == "client":
                    passed.append(f"the client's model: {why}")
            else:
                break
        return self.offline, "; ".join(passed)
