"""What brain_ask and brain_verify reply, as types: the fields a client reads, named in
the tools' output schema (tools/list) and checked against each reply before it is sent.

A field marked NotRequired is sent only when it says something (a correction's old claim,
the leads of a miss, the reader that was passed over).
"""

from __future__ import annotations

from typing_extensions import NotRequired, TypedDict

from cortex.ask.stamps import Stamp

__all__ = ["AskReply", "LeadEntry", "QuoteEntry", "VerifyReply"]


class QuoteEntry(TypedDict):
    """One quote of an answer, its stamp and why, and where it was found."""

    quote: str
    stamp: Stamp
    reason: str
    path: str
    heading: str
    old_claim: NotRequired[str]  # CORRECTED: the old wording; SUPERSEDED: the claim now current
    superseded_by: NotRequired[str]  # the note that replaces a retired one, when it says so


class LeadEntry(TypedDict):
    """A passage that comes close to a question no reader answered: read it before saying
    the notes lack the answer."""

    path: str
    heading: str
    words: float  # the share of the question's words it holds
    cosine: NotRequired[float]  # how close it is by meaning, when the meaning arm has it


class VerifyReply(TypedDict):
    """brain_verify: the verifier's stamp on an answer the client's own model wrote."""

    answer: str
    stamp: Stamp
    stamp_reason: str
    quotes: list[QuoteEntry]
    coverage: str
    reader: str
    sha: str  # the commit the quotes were checked at
    addresses_question: NotRequired[bool]  # with a question: whether the quotes mention its focus terms
    missing_terms: NotRequired[list[str]]  # the focus terms no quote mentions


class AskReply(VerifyReply):
    """brain_ask: a reader's answer, stamped by the verifier, and what was searched and read."""

    notes_read: int
    unread_matching: int  # notes holding a distinctive term of the question left unread
    cached: bool
    leads: NotRequired[list[LeadEntry]]
    reader_note: NotRequired[str]  # why a reader before the one that read was passed over
