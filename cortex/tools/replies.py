"""What each owner tool replies, as types: the fields a client reads, named in the tool's
output schema (tools/list) and checked against each reply before it is sent
(`cortex.http.mcp_tools.run_tool`). brain_ask's and brain_verify's are in
`cortex.ask.replies`, beside the code that makes them.

A field marked NotRequired is sent only when it says something: a cursor when more is
left, a note's retirement when it is retired, a push's state in hosted mode. A list of
rows whose fields depend on the row (a folder or a file, an open or a filed item) is a
list of objects; its fields are described with the tool.
"""

from __future__ import annotations

from typing import Any

from typing_extensions import NotRequired, TypedDict

from cortex.ask.replies import AskReply, VerifyReply
from cortex.brain.note_writes import CaptureReply, WriteReply

__all__ = [
    "AcceptReply",
    "AskReply",
    "CaptureReply",
    "ContextReply",
    "CorpusReply",
    "HandoffReply",
    "HistoryReply",
    "ListReply",
    "ProposalsReply",
    "ReadReply",
    "RejectReply",
    "SearchHit",
    "SearchReply",
    "VerifyReply",
    "WorkingReply",
    "WriteReply",
]


class ListReply(TypedDict):
    """brain_list: one folder's subfolders (`folder`, `files`) and files (`path`, `title`,
    `status`) by name, with a cursor when more are left."""

    sha: str
    folder: str
    entries: list[dict[str, Any]]
    folders: int
    files: int
    next: NotRequired[str]
    more: NotRequired[str]
    note: NotRequired[str]  # brain_read was given a folder's path: this is its listing


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


class HistoryReply(TypedDict):
    """brain_history: commits newest first (`sha`, `time`, `subject`, `message`, `author`,
    `door`, `tool`, `client`, `files`), with a cursor when older ones remain."""

    sha: str | None
    commits: list[dict[str, Any]]
    more: NotRequired[str]


class SearchHit(TypedDict):
    """One note found: its summary, score, and the passage that best matches the query."""

    path: str
    title: str
    status: str
    score: float
    heading: str
    passage: str
    passage_state: str  # live, retired or partly retired
    passage_marks: NotRequired[list[dict[str, Any]]]
    passage_marks_left_out: NotRequired[str]
    closeness: NotRequired[float]
    description: NotRequired[str]
    aliases: NotRequired[list[str]]
    tags: NotRequired[list[str]]
    superseded_by: NotRequired[str]
    valid_until: NotRequired[str]
    unreadable: NotRequired[str]
    retired: NotRequired[str]
    archived: NotRequired[bool]


class SearchReply(TypedDict):
    """brain_search: the hits, best first, and what was left out."""

    sha: str
    query: str
    total: int
    hits: list[SearchHit]
    meaning: NotRequired[str]
    prefix_note: NotRequired[str]
    left_out: NotRequired[str]
    more: NotRequired[str]


class CorpusReply(TypedDict):
    """brain_corpus: notes whole (`path`, `status`, `blob`, `text`; `part` for a note cut in
    parts), about 100 KB a reply, with a cursor."""

    sha: str
    notes: list[dict[str, Any]]
    total_notes: int
    next: NotRequired[str]
    more: NotRequired[str]


class ContextReply(TypedDict):
    """brain_context: the boot call, every body fenced with `nonce`."""

    sha: str | None
    notice: str
    nonce: str
    verify: str
    profile: NotRequired[str]  # when the brain has a profile.md
    recent_log: list[str]
    router: list[str]
    open_items: list[str]
    recent_log_left_out: NotRequired[str]
    router_left_out: NotRequired[str]
    open_items_left_out: NotRequired[str]


class HandoffReply(TypedDict):
    """brain_handoff: resume one project, every body fenced with `nonce`."""

    sha: str | None
    project: str
    notice: str
    nonce: str
    page: str | None  # None, with page_missing, when the project has no page
    open_items: list[str]
    recent_log: list[str]
    linked_notes: list[str]
    page_missing: NotRequired[str]
    left_out: NotRequired[str]


class WorkingReply(TypedDict):
    """brain_working: a change's commit and the item (`id`, `project`, `state`), or a list's
    `items` (`id`, `kind`, `text`, `project`, `state`, `opened`, `last_change`, `aged`, ...)."""

    sha: str | None
    parent: NotRequired[str | None]
    path: NotRequired[str]
    blob: NotRequired[str | None]
    blobs: NotRequired[dict[str, str | None]]
    id: NotRequired[str]
    project: NotRequired[str]
    state: NotRequired[str]
    filed_into: NotRequired[str]
    heading: NotRequired[str]
    items: NotRequired[list[dict[str, Any]]]
    open: NotRequired[int]
    aged: NotRequired[int]
    closed_not_listed: NotRequired[int]
    push: NotRequired[str]
    push_note: NotRequired[str]
    note: NotRequired[str]


class ProposalsReply(TypedDict):
    """brain_proposals: guests' proposals oldest first (`id`, `state`, `guest`, `path`,
    `mode`, `created`, `digest`, `exists`, `why`, `body`, `diff`), bodies fenced with `nonce`."""

    sha: str | None
    notice: str
    nonce: str
    count: int
    cap: int
    proposals: list[dict[str, Any]]


class AcceptReply(TypedDict):
    """brain_accept: the one commit holding the note change and its receipt."""

    id: str
    state: str
    sha: NotRequired[str]
    parent: NotRequired[str | None]
    path: NotRequired[str]
    mode: NotRequired[str]
    guest: NotRequired[str]
    receipt: NotRequired[str]
    note: NotRequired[str]
    push: NotRequired[str]
    push_note: NotRequired[str]


class RejectReply(TypedDict):
    """brain_reject: the tombstone committed for the proposal."""

    id: str
    state: str
    path: NotRequired[str]
    guest: NotRequired[str]
    reason: NotRequired[str]
    tombstone_sha: NotRequired[str]
    note: NotRequired[str]
    push: NotRequired[str]
    push_note: NotRequired[str]
