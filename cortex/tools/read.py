"""brain_read: one note at a commit, in pages of about 80 KB or one section, with its
frontmatter, tags, aliases, [[links]] and backlinks, and what of its text is not live."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any, NotRequired, cast

from pydantic import Field
from typing_extensions import TypedDict

from cortex.errors import BadInput, NoNote
from cortex.index.snapshot import in_archive
from cortex.notes.note import Note, find_section, sections
from cortex.notes.paths import check_text
from cortex.notes.redact import redact
from cortex.tools.hit_passage import retired_parts
from cortex.tools.linking import links_reply
from cortex.tools.listing import folder_reply
from cortex.tools.paging import cut_part, json_size, jsonable, page_count, part_budget
from cortex.tools.tool import READ, Caller, NotePath, Tool, When
from cortex.tools.toolset import Tools

__all__ = [
    "FRONTMATTER_BYTES",
    "LINKS_BYTES",
    "READ_TEXT_BYTES",
    "ReadReply",
    "ReadRequest",
    "TOOL",
    "read",
    "read_note",
]

# A note's text comes in parts of this many bytes of JSON (the rest of a 100 KB page is
# left for the links, backlinks and frontmatter beside it). A 372 KB hub note was one
# 94,000-token reply.
READ_TEXT_BYTES = 80_000
# What sits beside a page's text, so a page stays under 100 KB of JSON: the links
# and the backlinks listed (5 KB each, about 60 links; the rest are counted) and the
# parsed frontmatter (page 1 only; past 8 KB it is left to the text, which holds it).
LINKS_BYTES = 5_000
FRONTMATTER_BYTES = 8_000

# The README's row for it (`cortex tools` prints the table).
SUMMARY = (
    "one note with blob id, frontmatter, status, tags, aliases, its `[[wikilinks]]` (resolved, or "
    "`missing`) and backlinks; a note over about 80 KB comes in pages (`page`, `next_page`, `more`), "
    "`heading` reads one section; a folder's path (`notes/`) answers with its listing, and a path that "
    'names nothing gets the nearest ("did you mean notes/vitamin-d.md?": by the name with case, accents\' '
    "form, `-`, `_` and `.md` aside, then file name, title or alias, then spelling)"
)


DESCRIPTION = (
    "Read one note (archive/ included): text, blob id, frontmatter, status, tags, aliases, its [[links]] and "
    "the notes linking to it, at the SHA named in the reply. A note over about 80 KB comes in pages (`page`, "
    "`next_page`, `more` say so); `heading` reads one section. A folder's path (notes/) answers with its "
    "listing, as brain_list does; a path that names nothing is refused with the nearest paths. retired (why) "
    "and retired_parts (lines under a banner, struck text, old wording, hidden text) say what of the text is "
    "not live: do not answer from it."
)


@dataclass(frozen=True, kw_only=True)
class ReadRequest:
    path: NotePath
    as_of: When = None
    heading: Annotated[
        str | None,
        Field(
            description="Read only the section under this heading "
            "(to the next heading of the same or a higher "
            "level), e.g. Decisions"
        ),
    ] = None
    page: Annotated[
        int | None,
        Field(
            description="A long note comes in pages of about 80 KB: the "
            "page to read, from 1 (`next_page` of the previous "
            "reply; pass its sha as as_of)"
        ),
    ] = None


class ReadReply(TypedDict):
    """brain_read: one note, or one page or section of it, at `sha`; for a folder's path,
    the folder's listing (the fields of ListReply) instead."""

    sha: str
    path: NotRequired[str]
    blob: NotRequired[str]
    status: NotRequired[str]
    text: NotRequired[str]
    heading: NotRequired[str]
    page: NotRequired[str]  # "2 of 5"
    next_page: NotRequired[int]
    more: NotRequired[str]
    frontmatter: NotRequired[dict[str, Any]]
    frontmatter_omitted: NotRequired[str]
    frontmatter_error: NotRequired[str]
    unreadable: NotRequired[str]
    tags: NotRequired[list[str]]
    aliases: NotRequired[list[str]]
    links: NotRequired[list[dict[str, Any]]]  # target, heading, alias; path (resolved) or missing
    links_left_out: NotRequired[str]
    backlinks: NotRequired[list[dict[str, Any]]]  # path, links
    backlinks_left_out: NotRequired[str]
    # True while the first index build at start-up runs: `links` and `backlinks` are left
    # out (not empty) and `links_note` says to read again
    links_pending: NotRequired[bool]
    backlinks_pending: NotRequired[bool]
    links_note: NotRequired[str]
    retired: NotRequired[str]
    retired_parts: NotRequired[list[dict[str, Any]]]  # lines, state, text, why
    retired_parts_left_out: NotRequired[str]
    archived: NotRequired[bool]
    # a folder's path: its listing
    folder: NotRequired[str]
    entries: NotRequired[list[dict[str, Any]]]
    folders: NotRequired[int]
    files: NotRequired[int]
    next: NotRequired[str]
    note: NotRequired[str]


def read(tools: Tools, request: ReadRequest, caller: Caller) -> ReadReply:
    """One note at the head (or `as_of`): text in pages of about 100 KB, or one section
    with `heading`; with its tags, aliases, outgoing [[links]] and backlinks at that SHA."""
    return read_note(tools, request)[0]


def read_note(tools: Tools, request: ReadRequest, *, links: bool = True) -> tuple[ReadReply, Note | None]:
    """brain_read's reply and the note it read (None for a folder's listing); without `links`
    (the connector's fetch, which shows none) its links are not looked up, nor waited for."""
    path, at, heading, page = request.path, request.as_of, request.heading, request.page
    brain = tools.brain
    if heading is not None:
        check_text(heading, "heading")
    if page is not None and (not isinstance(page, int) or isinstance(page, bool) or page < 1):
        raise BadInput("page must be a whole number from 1")
    if isinstance(path, str) and path.endswith("/") and path.strip("/"):
        return cast(ReadReply, folder_reply(tools, path, as_of=at, asked=path)), None  # a folder's path: its listing
    try:
        sha, blob, note = brain.read(path, at)
    except NoNote:
        folder = path.strip().strip("/") + "/"
        at_sha = brain.resolve_at(at) if at else brain.head()
        if at_sha is None or not any(p.startswith(folder) for p in brain.files(at_sha)):
            raise
        return cast(ReadReply, folder_reply(tools, folder, as_of=at_sha, asked=path)), None
    today = brain.today()
    reply: dict[str, Any] = {"sha": sha, "path": note.path, "blob": blob, "status": note.status}
    text = note.text
    found: tuple[int, int] | None = None
    if heading is not None:
        found = find_section(note.text, note.body_offset, heading)
        if found is None:
            names = [h for _, h, _, _ in sections(note.text, note.body_offset)]
            more = f" and {len(names) - 20} more" if len(names) > 20 else ""
            listed = ", ".join(repr(h) for h in names[:20]) + more
            raise BadInput(f"no heading {heading[:80]!r} in {note.path}; its headings: {listed or 'none'}")
        text = note.text[found[0] : found[1]]
        reply["heading"] = heading
    text = redact(text)  # masked before it is cut into pages, so a cut cannot split a secret
    data = text.encode("utf-8")
    size = part_budget(text, READ_TEXT_BYTES)
    parts = page_count(data, size)
    n = page or 1
    if n > parts:
        raise BadInput(f"page {n} is past the end: this {'section' if heading else 'note'} has {parts} page(s)")
    if n == 1:
        reply.update(retired_parts(note, found if heading is not None else None))
        front = jsonable(note.frontmatter)
        if json_size(front) <= FRONTMATTER_BYTES:
            reply["frontmatter"] = front
        else:
            reply["frontmatter_omitted"] = (
                f"the parsed frontmatter is over {FRONTMATTER_BYTES:,} bytes of JSON; it is at the top of the text"
            )
    reply["text"] = cut_part(data, n - 1, size) if parts > 1 else text
    if parts > 1:
        reply["page"] = f"{n} of {parts}"
        if n < parts:
            reply["next_page"] = n + 1
            reply["more"] = (
                f"{parts - n} more page(s) of about {READ_TEXT_BYTES // 1000} KB "
                f"({len(data):,} bytes in all); call brain_read again with page={n + 1}"
                + (f", heading={heading!r}" if heading is not None else "")
                + f" and as_of={sha} for the same version"
                + ("" if heading is not None else ", or heading=... for one section")
            )
    if note.tags:
        reply["tags"] = list(note.tags)
    if note.aliases:
        reply["aliases"] = list(note.aliases)
    if links:
        reply.update(_links(tools, sha, note))
    retired = note.retired_reason(today)
    if retired:
        reply["retired"] = retired
    if in_archive(note.path):
        reply["archived"] = True
    if note.frontmatter_error:
        reply["frontmatter_error"] = note.frontmatter_error
    if note.unreadable:
        reply["unreadable"] = note.unreadable
    return cast(ReadReply, reply), note  # the fields ReadReply names, each of its type


def _links(tools: Tools, sha: str, note: Note) -> dict[str, Any]:
    """The note's outgoing [[links]] (resolved at `sha`) and the notes linking to it; while
    the first index build runs past `Corpus.first_read_wait`, neither, and the reply says so."""
    corpus = tools.brain.corpus
    if corpus.built_within() is None:
        # Backlinks need every note of the commit. Left out, not an empty list: a client
        # took `backlinks: []` for "nothing links here" (issue 62).
        return {
            "links_pending": True,
            "backlinks_pending": True,
            "links_note": "links and backlinks are still being read: the brain's index is being built at "
            f"start-up; they are left out of this reply, not empty. Read again in a moment "
            f"({len(note.links)} link(s) are in the text)",
        }
    return links_reply(corpus.at(sha), note, LINKS_BYTES)


TOOL = Tool("brain_read", DESCRIPTION, SUMMARY, READ, ReadRequest, ReadReply, read)
