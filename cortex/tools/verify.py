"""brain_verify: the verifier's stamp on an answer the client's own model wrote from the notes."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

from pydantic import Field

from cortex.ask.replies import VerifyReply
from cortex.tools.ask import check_question
from cortex.tools.tool import READ, Caller, Tool, When
from cortex.tools.toolset import Tools

__all__ = ["TOOL", "VerifyReply", "VerifyRequest", "verify"]

# The README's row for it (`cortex tools` prints the table).
SUMMARY = (
    "the verifier's stamp on an answer the client's own model wrote: `citations` are 1–20 `{path, quote}` "
    "copied from `brain_read`, `brain_search` or `brain_corpus` replies; with `question`, "
    "`addresses_question` as brain_ask's; `as_of` the SHA the replies were read at"
)


DESCRIPTION = (
    "Get the verifier's stamp on an answer you wrote from the notes (brain_read, brain_search or brain_corpus"
    " replies). After answering, call brain_verify with the answer and the verbatim sentences it relied on "
    "(each with its note's path), and tell the user the overall stamp it returns, with its reason when it is "
    "not VERIFIED. Each quote is checked against the note's bytes at the served SHA, or at as_of (pass the "
    "sha of the replies you read to verify against what you read; the reply's sha names the commit checked), "
    "as brain_ask's quotes are. To be VERIFIED, quote whole lines or sentences and answer with them word for "
    "word (one leading frame such as 'Your notes say:' is allowed): VERIFIED means the answer is its quotes' "
    "own words (whole units, in order; case, punctuation, Markdown marks, contractions, a value written another "
    "way and retired parts may differ). CORRECTED: as VERIFIED, the unit carries an in-place correction. BEYOND "
    "QUOTES: the answer puts the quotes in other words; the reason quotes the first difference and "
    "verified_answer gives the units, framed, to present as they are. SUPERSEDED (retired text: do not answer "
    "from it), UNVERIFIED (not found, or a number, date, time or amount the units hold with another value). "
    "With question, addresses_question false (and missing_terms, "
    "repeated in the stamp's reason) warns that the quotes may answer another question; the stamp still "
    "holds for what the answer says. Masked credentials in a quote are fine: notes are compared masked."
)


@dataclass(frozen=True, kw_only=True)
class VerifyRequest:
    answer: Annotated[str, Field(description="Your answer, as you will give it to the user")]
    citations: Annotated[
        list[dict[str, str]],
        Field(
            description="1-20 objects {path, quote}: each quote copied word for word from the note at "
            "path (a brain_read, brain_search or brain_corpus reply), the sentences the answer relies on"
        ),
    ]
    question: Annotated[
        str | None,
        Field(
            description="The question the answer is for: the reply's addresses_question then says whether "
            "the quotes (with their notes' titles, aliases and headings) mention each of its content words, "
            "and missing_terms names those they do not"
        ),
    ] = None
    as_of: When = None


def verify(tools: Tools, request: VerifyRequest, caller: Caller) -> VerifyReply:
    """Stamp an answer the client's own model wrote from the notes."""
    check_question(request.question)
    return tools.asker.verify(request.answer, request.citations, request.question, request.as_of)


TOOL = Tool("brain_verify", DESCRIPTION, SUMMARY, READ, VerifyRequest, VerifyReply, verify)
