"""brain_corpus: many notes whole at once, about 100 KB a reply, by paths or by a search."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any, NotRequired, cast

from pydantic import Field
from typing_extensions import TypedDict

from cortex.errors import BadInput
from cortex.notes.note import Note
from cortex.notes.paths import check_text
from cortex.tools.hit_passage import retired_parts
from cortex.tools.paging import corpus_page
from cortex.tools.search import SearchRequest, search_notes
from cortex.tools.tool import MAX_K, READ, Caller, Tool, check_k
from cortex.tools.toolset import Tools

__all__ = ["CORPUS_REPLY_BYTES", "CorpusReply", "CorpusRequest", "TOOL", "corpus"]

CORPUS_REPLY_BYTES = 100_000

# The README's row for it (`cortex tools` prints the table).
SUMMARY = (
    "full text of many notes, about 100 KB per reply, with a cursor; a note larger than the cap comes in numbered parts"
)


DESCRIPTION = (
    "Full text of many notes at once, about 100 KB per reply; `next` is the cursor to pass as `after`. A note"
    " larger than a reply comes in numbered parts. A note's retired (why) and retired_parts (lines under a "
    "banner, struck text, old wording, hidden text) say what of its text is not live: do not answer from it."
)


@dataclass(frozen=True, kw_only=True)
class CorpusRequest:
    paths: Annotated[list[str] | None, Field(description="Notes to return whole (or give query)")] = None
    query: Annotated[str | None, Field(description="Return the top-k notes of this search")] = None
    k: Annotated[int | None, Field(description=f"With query: how many notes, 1-{MAX_K}")] = None
    after: Annotated[str | None, Field(description="The cursor `next` of the previous reply")] = None


class CorpusReply(TypedDict):
    """brain_corpus: notes whole (`path`, `status`, `blob`, `text`; `part` for a note cut in
    parts), about 100 KB a reply, with a cursor."""

    sha: str
    notes: list[dict[str, Any]]
    total_notes: int
    next: NotRequired[str]
    more: NotRequired[str]


def corpus(tools: Tools, request: CorpusRequest, caller: Caller) -> CorpusReply:
    paths, query = request.paths, request.query
    if (paths is None) == (query is None):
        raise BadInput("give either paths or query, not both and not neither")
    snap = tools.brain.snapshot()
    if query is not None:
        found = search_notes(tools, SearchRequest(query=query, k=check_k(request.k, 10)))
        order = [h["path"] for h in found["hits"]]
    else:
        order = []
        for p in paths or []:
            check_text(p, "path")
            if p not in snap.notes:
                raise BadInput(f"no note at {p} in commit {snap.sha[:12]}")
            order.append(p)
    today = tools.brain.today()

    def describe(note: Note) -> dict[str, Any]:
        # The note's text is shown whole: say which of it is not live, as a hit does.
        retired = note.retired_reason(today)
        return {**({"retired": retired} if retired else {}), **retired_parts(note)}

    return cast(CorpusReply, corpus_page(snap, order, request.after, CORPUS_REPLY_BYTES, describe))


TOOL = Tool("brain_corpus", DESCRIPTION, SUMMARY, READ, CorpusRequest, CorpusReply, corpus)
