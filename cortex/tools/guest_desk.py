"""What the guest door's tools work on (`GuestDesk`): the tool set, and the proposal queue
that counts a guest's asks and holds its proposals (None when the door is disabled)."""

from __future__ import annotations

from dataclasses import dataclass

from cortex.errors import BadInput, QueueUnavailable
from cortex.guests.policy import GuestPolicy
from cortex.guests.queue import ProposalQueue
from cortex.tools.tool import Caller
from cortex.tools.toolset import Tools

__all__ = ["GuestDesk"]


@dataclass(frozen=True)
class GuestDesk:
    tools: Tools
    proposals: ProposalQueue | None
    disabled: str | None

    def queue(self) -> ProposalQueue:
        """The proposal queue; QueueUnavailable, saying why, when the door has none."""
        if self.proposals is None:
            raise QueueUnavailable(f"queue unavailable: the guest door is {self.disabled}")
        return self.proposals

    @staticmethod
    def policy(caller: Caller) -> GuestPolicy:
        """The calling guest's policy (the door sets it on every guest call)."""
        if caller.guest is None:
            raise BadInput("this door has no guest")
        return caller.guest
