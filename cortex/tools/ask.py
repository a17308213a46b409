"""brain_ask: a reader answers from the notes with verbatim quotes, and the verifier stamps
the answer (`cortex.ask.asker`); on a 2026 session the first round may ask the client's
own model to read instead."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, overload

from pydantic import Field

from cortex.ask.asker import DEFAULT_K, SampleNeeded
from cortex.ask.readers import ClientTurn
from cortex.ask.replies import AskReply
from cortex.errors import BadInput
from cortex.notes.paths import check_text
from cortex.tools.tool import MAX_K, READ, Caller, Tool, When, check_k
from cortex.tools.toolset import Tools

__all__ = ["AskReply", "AskRequest", "MAX_ASK_K", "MAX_QUESTION_CHARS", "TOOL", "answer", "ask", "check_question"]

# A question is a sentence or a paragraph; past this it is a document, which would be
# tokenized and scored against every note and sent in every pack.
MAX_QUESTION_CHARS = 2_000
# Notes one ask may read: 20 packed notes already fill the default 60 KB pack.
MAX_ASK_K = 20

# The README's row for it (`cortex tools` prints the table).
SUMMARY = (
    "a checked answer: quotes with stamps, the overall stamp (the weakest), a coverage line, `reader` "
    "naming who read, and `addresses_question` (with `missing_terms` when false): whether the quotes "
    "mention every content word of the question"
)


DESCRIPTION = (
    "Ask a question: a reader answers with verbatim quotes, and a deterministic verifier checks each quote "
    "against the note's bytes at the served SHA and stamps the answer; the reader never decides the stamp. To "
    "be VERIFIED, quote whole lines or sentences and answer with them word for word (one leading frame such as"
    " 'Your notes say:' is allowed). VERIFIED means the answer is its quotes' own words: whole units of the "
    "notes (a sentence, a line, a list item, a table row, a heading) in their own order, with only case, "
    "punctuation, Markdown marks, contractions, a value written another way and retired parts left out "
    "differing; it does not say they answer the question. CORRECTED: as VERIFIED, but a quoted passage carries"
    " an in-place correction; the answer rests on the current claim and old_claim shows the old one. BEYOND "
    "QUOTES: the quotes are live, but the answer puts them in other words; the reason quotes the first "
    "difference, and verified_answer gives the units themselves, framed, which you can present as they are: "
    "not 'your notes say this'. SUPERSEDED: a quote sits in retired text; do not answer from it (superseded_by"
    " names the current note when known, and old_claim the live sentence that replaced it when the note or its"
    " successor holds one). UNVERIFIED: something could not be checked (a quote not found, a number, amount, "
    "date or time the units hold with another value, a failed reader, or a miss while notes holding a "
    "distinctive term of the question were left unread); do not repeat it as fact. It also stands for 'not "
    "found in your notes' when no reader answered but a passage comes close to the question by its words or by"
    " meaning: leads names the closest passages (path and headings), which do not answer it but may hold it in"
    " other words; read them before saying the notes lack it. NOT IN BRAIN: the reader found nothing, every "
    "note of the scope holding a distinctive term of the question was read, and no passage comes close by "
    "words or meaning; it means the notes do not say, not that the thing is false. The coverage line lists "
    "those terms with their note counts and what was read. A stamp checks the answer against its quotes, not "
    "that they answer the question: addresses_question is false, with missing_terms (also in the stamp's "
    "reason), when some content word of the question is in no quote, nor in its note's title, aliases or "
    "headings; check those quotes are about what was asked. `as_of`: a commit SHA (full, or its first 7+ "
    "digits) answers from the notes at that commit, their retirement judged as of today; an ISO time answers "
    "from the brain and the claims valid then."
)


@dataclass(frozen=True, kw_only=True)
class AskRequest:
    question: Annotated[str, Field(description="A question in plain words")]
    k: Annotated[int | None, Field(description=f"Notes the reader may read, 1-{MAX_K}")] = None
    as_of: When = None


def ask(tools: Tools, request: AskRequest, caller: Caller) -> AskReply | SampleNeeded:
    """brain_ask on a trusted door: the stamped answer, or a first round asking the client's model."""
    return answer(tools, request, door=caller.door, turn=caller.turn)


@overload
def answer(
    tools: Tools, request: AskRequest, *, scope: list[str] | None = None, door: str = "owner", turn: None = None
) -> AskReply: ...


@overload
def answer(
    tools: Tools, request: AskRequest, *, scope: list[str] | None = None, door: str = "owner", turn: ClientTurn
) -> AskReply | SampleNeeded: ...


def answer(
    tools: Tools,
    request: AskRequest,
    *,
    scope: list[str] | None = None,
    door: str = "owner",
    turn: ClientTurn | None = None,
) -> AskReply | SampleNeeded:
    """The ask, from `scope` only when given (a guest's folders). `turn`: the client's session on a
    trusted door, whose model may read; without one the reply is always the stamped answer (only
    a client's model is asked between rounds)."""
    question = request.question
    check_text(question, "question")
    if not question.strip():
        raise BadInput("question is empty")
    check_question(question)
    k = check_k(request.k, DEFAULT_K, MAX_ASK_K)
    return tools.asker.ask(question, k, request.as_of, scope=scope, door=door, turn=turn)


def check_question(question: str | None) -> None:
    """BadInput when a question is longer than a question is."""
    if question is not None and len(question) > MAX_QUESTION_CHARS:
        raise BadInput(f"question is longer than {MAX_QUESTION_CHARS} characters")


TOOL = Tool("brain_ask", DESCRIPTION, SUMMARY, READ, AskRequest, AskReply, ask, asks_client=True)
