"""The tool functions every door shares (`Tools`): read, write, history, search, corpus,
ask, verify, context, working state. They know nothing of HTTP or MCP.

Each takes plain arguments plus an Actor, calls the Brain, and returns a
JSON-ready dict that names the SHA it read or wrote. Bad input raises BadInput
(or a StoreError), which the door turns into a one-line MCP tool error. How replies
are paged (paging), which passage a hit shows (passages) and the boot reply (boot) are
their own modules.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import replace
from typing import TYPE_CHECKING, Any, Callable, NamedTuple, cast, overload

import numpy as np

from cortex.ask.asker import DEFAULT_K, Asker, SampleNeeded
from cortex.ask.readers import ClientTurn
from cortex.brain.brain import Brain
from cortex.brain.note_writes import WriteMode
from cortex.brain.trailers import Actor, check_request_id
from cortex.brain.working_state import Working
from cortex.errors import BadInput, NoNote
from cortex.index.bm25 import SearchResult, idf
from cortex.index.fields import index_names
from cortex.index.ranking import RELATED, hybrid, name_key, top
from cortex.index.snapshot import Snapshot, in_archive, is_live
from cortex.index.tokenize import tokenize
from cortex.notes.data_envelope import new_nonce
from cortex.notes.note import Note, find_section, sections
from cortex.notes.paths import check_text, in_scope
from cortex.notes.redact import redact
from cortex.notes.working import in_working
from cortex.tools.boot import CONTEXT_REPLY_BYTES, MAX_CONTEXT_BYTES, MIN_CONTEXT_BYTES, boot_context
from cortex.tools.handoff import context_items, handoff
from cortex.tools.linking import Dangling, dangling_reply, links_reply
from cortex.tools.listing import check_folder, folder_listing, prefix_note
from cortex.tools.paging import corpus_page, cut_part, json_size, jsonable, page_count, part_budget
from cortex.tools.passages import best_passage, passage_state, retired_parts
from cortex.tools.replies import (
    AskReply,
    CaptureReply,
    ContextReply,
    CorpusReply,
    HandoffReply,
    HistoryReply,
    ListReply,
    ReadReply,
    SearchReply,
    VerifyReply,
    WorkingReply,
    WriteReply,
)

if TYPE_CHECKING:
    from cortex.meaning.arm import Closeness
    from cortex.meaning.vectors import ScopeMatrix

__all__ = [
    "CORPUS_REPLY_BYTES",
    "FRONTMATTER_BYTES",
    "LINKS_BYTES",
    "MAX_ASK_K",
    "MAX_HISTORY",
    "MAX_K",
    "MAX_QUESTION_CHARS",
    "READ_TEXT_BYTES",
    "Tools",
    "WORKING_SHARE",
    "check_k",
    "names_after",
]

Allow = Callable[[str], bool]  # a search filter: whether a note's path may be a hit


class FilterKey(NamedTuple):
    """What a search filter lets through, as the key its verdicts are kept under (the index's
    masks, the meaning arm's): the same key, the same verdicts."""

    day: dt.date
    prefix: str | None
    scope: tuple[str, ...] | None
    include_working: bool
    include_retired: bool


MAX_K = 50
MAX_HISTORY = 100
CORPUS_REPLY_BYTES = 100_000
# brain_read: a note's text comes in parts of this many bytes of JSON (the rest of a
# 100 KB page is left for the links, backlinks and frontmatter beside it). A 372 KB
# hub note was one 94,000-token reply.
READ_TEXT_BYTES = 80_000
# What sits beside a page's text, so a page stays under 100 KB of JSON: the links
# and the backlinks listed (5 KB each, about 60 links; the rest are counted) and the
# parsed frontmatter (page 1 only; past 8 KB it is left to the text, which holds it).
LINKS_BYTES = 5_000
FRONTMATTER_BYTES = 8_000
# A question is a sentence or a paragraph; past this it is a document, which would be
# tokenized and scored against every note and sent in every pack.
MAX_QUESTION_CHARS = 2_000
# Notes one ask may read: 20 packed notes already fill the default 60 KB pack.
MAX_ASK_K = 20
WORKING_SHARE = 0.2  # of brain_context's budget kept for open working items


def check_k(k: int | None, default: int, cap: int = MAX_K) -> int:
    """A count a client asked for: `default` when not given, at most `cap`; BadInput unless a whole number from 1."""
    if k is None:
        return default
    if not isinstance(k, int) or k < 1:
        raise BadInput("k must be a positive whole number")
    return min(k, cap)


class Tools:
    """The trusted tool set over one brain."""

    def __init__(self, brain: Brain, asker: Asker):
        self.brain = brain
        self.working = Working(brain)
        self.asker = asker
        # Names first: (sha, the snapshot's notes, name key -> notes), moved from one head to the next
        self._names: tuple[str, dict[str, Any], dict[str, frozenset[str]]] | None = None
        self._masks: dict[tuple, np.ndarray] = {}  # search filters' verdicts for the meaning arm

    # -- read and write ---------------------------------------------------

    def read(self, path: str, at: str | None = None, heading: str | None = None, page: int | None = None) -> ReadReply:
        """One note at the head (or `at`): text in pages of about 100 KB, or one section
        with `heading`; with its tags, aliases, outgoing [[links]] and backlinks at that SHA."""
        if heading is not None:
            check_text(heading, "heading")
        if page is not None and (not isinstance(page, int) or isinstance(page, bool) or page < 1):
            raise BadInput("page must be a whole number from 1")
        if isinstance(path, str) and path.endswith("/") and path.strip("/"):
            return cast(ReadReply, self.listing(path, as_of=at, asked=path))  # a folder's path: its listing
        try:
            sha, blob, note = self.brain.read(path, at)
        except NoNote:
            folder = path.strip().strip("/") + "/"
            at_sha = self.brain.resolve_at(at) if at else self.brain.head()
            if at_sha is None or not any(p.startswith(folder) for p in self.brain.files(at_sha)):
                raise
            return cast(ReadReply, self.listing(folder, as_of=at_sha, asked=path))
        today = self.brain.today()
        reply: dict[str, Any] = {"sha": sha, "path": note.path, "blob": blob, "status": note.status}
        text = note.text
        found: tuple[int, int] | None = None
        if heading is not None:
            found = find_section(note.text, note.body_offset, heading)
            if found is None:
                names = [h for _, h, _, _ in sections(note.text, note.body_offset)]
                listed = ", ".join(repr(h) for h in names[:20]) + (
                    f" and {len(names) - 20} more" if len(names) > 20 else ""
                )
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
        reply.update(self._links(sha, note))
        retired = note.retired_reason(today)
        if retired:
            reply["retired"] = retired
        if in_archive(note.path):
            reply["archived"] = True
        if note.frontmatter_error:
            reply["frontmatter_error"] = note.frontmatter_error
        if note.unreadable:
            reply["unreadable"] = note.unreadable
        return cast(ReadReply, reply)  # the fields ReadReply names, each of its type

    def listing(
        self, folder: str | None = None, after: str | None = None, as_of: str | None = None, asked: str | None = None
    ) -> ListReply:
        """brain_list: one folder's subfolders and files at the head (or `as_of`), paged.
        `asked`: the path brain_read was given, when it named a folder."""
        name = check_folder(folder)
        snap = self.brain.snapshot(as_of)
        reply = folder_listing(snap, self.brain.files(snap.sha), name, self.brain.today(), after)
        if asked is not None:
            reply["note"] = (
                f"{asked} is a folder, not a note: here is its listing; brain_read one of its paths, "
                "or brain_list with after= for more"
            )
        return cast(ListReply, reply)

    def _links(self, sha: str, note: Note) -> dict[str, Any]:
        """The note's outgoing [[links]] (resolved at `sha`) and the notes linking to it."""
        if self.brain.corpus.built() is None:
            # A read never waits for the first corpus build (start to first read stays
            # fast); links need every note of the commit, so they wait for the next read.
            return {
                "links": [],
                "backlinks": [],
                "links_note": "the brain is still being indexed at start-up; read again for links "
                f"and backlinks ({len(note.links)} link(s) are in the text)",
            }
        return links_reply(self.brain.corpus.at(sha), note, LINKS_BYTES)

    def write(
        self,
        actor: Actor,
        path: str,
        mode: WriteMode,
        content: str | None = None,
        find: str | None = None,
        to: str | None = None,
        expected_blob: str | None = None,
        reason: str | None = None,
        request_id: str | None = None,
    ) -> WriteReply:
        actor = replace(actor, request=check_request_id(request_id))
        reply = self.brain.write(
            path, mode, actor, content=content, find=find, to=to, expected_blob=expected_blob, reason=reason
        )
        if mode != "delete" and not reply.get("replayed"):
            reply.update(self._dangling(reply["sha"], reply.get("to") or reply["path"]))
        return reply

    def _dangling(self, sha: str, path: str) -> Dangling:
        """The written note's [[links]] that point to no note at the commit it made."""
        corpus = self.brain.corpus
        if corpus.built() is None:  # never wait for the first build: say the links were not checked
            return {"links_note": "links not checked: the brain is still being indexed at start-up"}
        return dangling_reply(corpus.peek(sha), path)

    def capture(
        self, actor: Actor, text: str, tags: list[str] | None = None, request_id: str | None = None
    ) -> CaptureReply:
        actor = replace(actor, request=check_request_id(request_id))
        return self.brain.capture(text, actor, tags)

    def history(self, path: str | None = None, limit: int | None = None, before: str | None = None) -> HistoryReply:
        limit = check_k(limit, 20, MAX_HISTORY)
        if path is not None:
            check_text(path, "path")
        if before is not None:
            before = self.brain.resolve_at(before)
        head = self.brain.head()
        commits, more = self.brain.history(path, limit, before)
        reply: dict[str, Any] = {
            "sha": head,
            "commits": [
                {
                    "sha": c.sha,
                    "time": c.time.isoformat(),
                    "subject": c.subject,
                    "message": c.message.strip(),
                    "author": c.author,
                    "door": c.door,
                    "tool": c.trailers.get("Cortex-Tool"),
                    "client": c.trailers.get("Cortex-Client"),
                    "files": list(c.files),
                }
                for c in commits
            ],
        }
        if more:
            reply["more"] = f"older commits remain; call again with before={commits[-1].sha}"
        return cast(HistoryReply, reply)

    # -- finding ----------------------------------------------------------

    def _snapshot_and_day(self, as_of: str | None) -> tuple[Snapshot, dt.date]:
        """The commit `as_of` names (a SHA, an ISO time, or the head) and the day its claims are judged on."""
        snap = self.brain.snapshot(as_of)
        return snap, self.brain.day_of(as_of)[0]

    def search(
        self,
        query: str,
        k: int | None = 10,
        prefix: str | None = None,
        *,
        include_retired: bool = False,
        as_of: str | None = None,
        scope: list[str] | None = None,
        include_working: bool = False,
    ) -> SearchReply:
        check_text(query, "query")
        include_working = include_working and scope is None  # no guest ever reaches working/
        if prefix is not None:
            check_text(prefix, "prefix")
        k = check_k(k, 10)
        snap, day = self._snapshot_and_day(as_of)
        terms = set(tokenize(query))
        weights = self.brain.corpus.idf(snap, terms)
        # A prefix or a scope: score only the notes under it, at a cost that follows their
        # number rather than the whole brain's posting lists (same results, to the bit).
        within = (
            [p for p in snap.notes if (not prefix or p.startswith(prefix)) and in_scope(p, scope)]
            if (prefix or scope is not None)
            else None
        )
        key = FilterKey(day, prefix, None if scope is None else tuple(scope), include_working, include_retired)
        allow = self._allow(snap, day, prefix, scope, include_retired, include_working)
        wider = (
            None
            if include_retired
            else (self._allow(snap, day, prefix, scope, True, include_working), key._replace(include_retired=True))
        )
        meaning = self.brain.meaning
        # A scope (a guest's) is scored over its own rows only: its timing owes nothing to the rest.
        close = meaning.closeness(snap, query, within, private=scope is not None) if meaning is not None else None
        if close is not None:
            found = self._by_meaning(snap, k, close, weights=weights, allow=allow, wider=wider, within=within, key=key)
        else:
            found = self.brain.corpus.search(snap, query, k, allow, within, key, wider)
        named = self._named(snap, query, allow, within)
        if named:  # an exact title, alias or file name comes first, whatever the scores say
            rest = [(p, sc) for p, sc in found.hits if p not in named]
            top = max((sc for _, sc in found.hits), default=0.0)
            first = ([(p, top) for p in sorted(named)] + rest)[: max(k, len(named))]
            found = replace(found, hits=first, total=max(found.total, len(named)))
        reply: dict[str, Any] = {"sha": snap.sha, "query": query, "total": found.total}
        if prefix and scope is None:  # a guest is never told of folders outside its scope
            nothing = prefix_note(snap, prefix)
            if nothing:
                reply["prefix_note"] = nothing
        if meaning is not None:
            reply["meaning"] = meaning.line(snap, within, close.matrix if close is not None else None)
        left = (found.reach or 0) - found.total
        if left:
            reply["left_out"] = (
                f"{left} matching note(s) in archive/ or retired were left out; pass include_retired=true to see them"
            )
        hits = [self._hit(snap.notes[path], score, weights, close, day) for path, score in found.hits]
        reply["hits"] = hits
        if found.total > len(hits):
            reply["more"] = (
                f"{found.total - len(hits)} more matching note(s); raise k (max {MAX_K}) or narrow with prefix"
            )
        return cast(SearchReply, reply)

    def _hit(
        self, note: Note, score: float, weights: dict[str, float], close: Closeness | None, day: dt.date
    ) -> dict[str, Any]:
        """One search hit: the note's summary, its score, and the passage that best matches the
        query (its closest by meaning, when the arm has it) with what of it is not live."""
        hit = note.summary()
        hit["score"] = round(score, 4)
        near = close.spans_of(note.path) if close is not None else []
        heading, passage, block = best_passage(note, weights, near[0][1] if near else None)
        if near:
            hit["closeness"] = round(near[0][0], 4)
        hit["heading"] = heading
        hit["passage"] = passage
        retired = note.retired_reason(day)
        hit.update(passage_state(note, block, retired))
        if retired:
            hit["retired"] = retired
        if in_archive(note.path):
            hit["archived"] = True
        return hit

    def _by_meaning(
        self,
        snap: Snapshot,
        k: int,
        close: Closeness,
        *,
        weights: dict[str, float],
        allow: Allow,
        wider: tuple[Allow, FilterKey] | None,
        within: list[str] | None,
        key: FilterKey,
    ) -> SearchResult:
        """Hits ordered by `ranking.fused`: the closest passage's cosine, plus the share of
        the query's words the note holds, plus its rare ones. A match is a note holding a
        query term or with a passage at RELATED or closer; `reach` counts those the default
        filters left out. Only `within` (a prefix or scope, when given) was scored."""
        scope = set(within) if within is not None else None
        matrix = close.matrix
        # While a first embed runs, the notes not embedded yet follow the embedded ones: each
        # holding a query term scores as a passage at RELATED would (found by its words only).
        paths = close.paths + matrix.absent
        cos = np.concatenate([close.best, np.full(len(matrix.absent), RELATED, np.float32)])
        found = self.brain.corpus.with_index(snap, lambda index: matrix.term_rows(snap.sha, index, weights, scope))
        if scope is not None:  # a scope's own rarity: how common a word is outside it takes no part
            weights = {t: idf(len(scope), n) for t, (_, n) in found.items() if n}
        scores, cover = hybrid(cos, ((w, *found[t]) for t, w in weights.items()))
        embedded = np.arange(len(cos)) < len(close.paths)
        match = ((cos >= RELATED) & embedded) | (cover > 0)
        ok = self._mask(snap, matrix, paths, allow, key)
        kept = np.flatnonzero(match & ok)
        order = top(scores, k, kept)
        reach = len(kept) if wider is None else int((match & self._mask(snap, matrix, paths, *wider)).sum())
        return SearchResult([(paths[i], float(scores[i])) for i in order], len(kept), reach)

    def _mask(self, snap: Snapshot, matrix: ScopeMatrix, paths: list[str], allow: Allow, key: FilterKey) -> np.ndarray:
        """`allow`'s verdict on each note of `paths` (the matrix's, then those it lacks),
        kept per commit, matrix and filter key (asked once per note, not once per query: a
        live check is a date comparison)."""
        cache_key = (snap.sha, key, matrix.serial)
        found = self._masks.get(cache_key)
        if found is None:
            found = np.fromiter((allow(p) for p in paths), dtype=bool, count=len(paths))
            if len(self._masks) >= 16:
                self._masks.pop(next(iter(self._masks)))
            self._masks[cache_key] = found
        return found

    def names_at(self, snap: Snapshot) -> dict[str, frozenset[str]]:
        """The name map of `snap` (name key -> notes), carried forward from the last one.
        The server builds it once the index is ready (`app.server.warm_up`): built by the
        first search instead, it cost that search ~440 ms at 10,000 notes."""
        known = self._names
        if known is None or known[0] != snap.sha:
            self._names = known = (snap.sha, snap.notes, names_after(known, snap.notes))
        return known[2]

    def _named(self, snap: Snapshot, query: str, allow: Allow, within: list[str] | None) -> set[str]:
        """Notes whose title, alias or file name is the query itself (case and punctuation aside)."""
        key = name_key(query)
        if not key:
            return set()
        found = self.names_at(snap).get(key, frozenset())
        scope = set(within) if within is not None else None
        return {p for p in found if allow(p) and (scope is None or p in scope)}

    def _allow(
        self,
        snap: Snapshot,
        day: dt.date,
        prefix: str | None,
        scope: list[str] | None,
        include_retired: bool,
        include_working: bool = False,
    ) -> Allow:
        """The search filter; the index keeps its verdicts per key (see `search`), so each
        note is asked once per index version and day, not once per query. working/ holds
        intentions, not facts: left out unless asked for."""
        notes = snap.notes

        def allow(path: str) -> bool:
            if prefix and not path.startswith(prefix):
                return False
            if not include_working and in_working(path):
                return False
            if scope is not None and not in_scope(path, scope):
                return False
            if include_retired:
                return True
            return is_live(notes[path], day)

        return allow

    def corpus(
        self, paths: list[str] | None = None, query: str | None = None, k: int | None = None, after: str | None = None
    ) -> CorpusReply:
        if (paths is None) == (query is None):
            raise BadInput("give either paths or query, not both and not neither")
        snap = self.brain.snapshot()
        if query is not None:
            found = self.search(query, k=check_k(k, 10))
            order = [h["path"] for h in found["hits"]]
        else:
            order = []
            for p in paths or []:
                check_text(p, "path")
                if p not in snap.notes:
                    raise BadInput(f"no note at {p} in commit {snap.sha[:12]}")
                order.append(p)
        today = self.brain.today()

        def describe(note: Note) -> dict[str, Any]:
            # The note's text is shown whole: say which of it is not live, as a hit does.
            retired = note.retired_reason(today)
            return {**({"retired": retired} if retired else {}), **retired_parts(note)}

        return cast(CorpusReply, corpus_page(snap, order, after, CORPUS_REPLY_BYTES, describe))

    @overload
    def ask(
        self,
        question: str,
        k: int | None = None,
        as_of: str | None = None,
        *,
        scope: list[str] | None = None,
        door: str = "owner",
        seat: None = None,
    ) -> AskReply: ...

    @overload
    def ask(
        self,
        question: str,
        k: int | None = None,
        as_of: str | None = None,
        *,
        scope: list[str] | None = None,
        door: str = "owner",
        seat: ClientTurn,
    ) -> AskReply | SampleNeeded: ...

    def ask(
        self,
        question: str,
        k: int | None = None,
        as_of: str | None = None,
        *,
        scope: list[str] | None = None,
        door: str = "owner",
        seat: ClientTurn | None = None,
    ) -> AskReply | SampleNeeded:
        """brain_ask. `seat`: the client's session on a trusted door, whose model may read;
        without one the reply is always the stamped answer (only a client's model is asked
        between rounds)."""
        check_text(question, "question")
        if not question.strip():
            raise BadInput("question is empty")
        if len(question) > MAX_QUESTION_CHARS:
            raise BadInput(f"question is longer than {MAX_QUESTION_CHARS} characters")
        return self.asker.ask(question, check_k(k, DEFAULT_K, MAX_ASK_K), as_of, scope=scope, door=door, seat=seat)

    def verify(self, answer: Any, citations: Any, question: str | None = None, as_of: str | None = None) -> VerifyReply:
        """brain_verify: stamp an answer the client's own model wrote from the notes."""
        if question is not None and len(question) > MAX_QUESTION_CHARS:
            raise BadInput(f"question is longer than {MAX_QUESTION_CHARS} characters")
        return self.asker.verify(answer, citations, question, as_of)

    def context(self, project: str | None = None, budget: int | None = None) -> ContextReply:
        if budget is None:
            budget = CONTEXT_REPLY_BYTES
        if not isinstance(budget, int) or isinstance(budget, bool) or budget < MIN_CONTEXT_BYTES:
            raise BadInput(f"budget must be a whole number of bytes from {MIN_CONTEXT_BYTES}")
        snap = self.brain.snapshot()
        cap = min(budget, MAX_CONTEXT_BYTES)
        reply = boot_context(snap, self.brain.today(), project, new_nonce(), cap - int(cap * WORKING_SHARE))
        # Open working items, newest first, in their own share of the budget.
        room = cap - json_size(reply) - 200
        items, left = context_items(self.brain, snap, project, room, reply["nonce"])
        reply["open_items"] = items
        if left:
            reply["open_items_left_out"] = (
                f"{left} open item(s) over the budget; brain_working(action='list') or brain_handoff lists them"
            )
        return cast(ContextReply, reply)

    def working_state(self, actor: Actor, action: str, **args: Any) -> WorkingReply:
        """brain_working: add, list, file, drop or touch an item, one commit a change."""
        return cast(WorkingReply, self.working.act(actor, action, **args))

    def handoff(self, project: str, budget: int | None = None) -> HandoffReply:
        check_text(project, "project")
        return cast(HandoffReply, handoff(self.brain, project, budget))


def _names_of(note: Any) -> set[str]:
    return {name_key(n) for n in index_names(note)} - {""}


def names_after(
    known: tuple[str, dict[str, Any], dict[str, frozenset[str]]] | None, notes: dict[str, Any]
) -> dict[str, frozenset[str]]:
    """Name key -> the notes of `notes` bearing it; from the previous head's map when few
    notes changed (a snapshot keeps the Note object of every note it did not change).
    Rebuilt whole, every search after a write spent 10 ms of 13 here at 1,000 notes."""
    changed: list[str] = []
    if known is not None:
        before = known[1]
        changed = [p for p in before.keys() | notes.keys() if before.get(p) is not notes.get(p)]
    if known is None or len(changed) > len(notes) // 4:
        built: dict[str, set[str]] = {}
        for path, note in notes.items():
            for name in _names_of(note):
                built.setdefault(name, set()).add(path)
        return {k: frozenset(v) for k, v in built.items()}
    names = dict(known[2])  # a new map: a search on the old head may still read the old one
    for path in changed:
        old, new = known[1].get(path), notes.get(path)
        gone = _names_of(old) if old is not None else set()
        came = _names_of(new) if new is not None else set()
        for name in gone - came:
            left = names.get(name, frozenset()) - {path}
            if left:
                names[name] = left
            else:
                names.pop(name, None)
        for name in came - gone:
            names[name] = names.get(name, frozenset()) | {path}
    return names
