"""The tool functions every door shares. They know nothing of HTTP or MCP.

Each takes plain arguments plus an Actor, calls the Brain, and returns a
JSON-ready dict that names the SHA it read or wrote. Bad input raises BadInput
(or a StoreError), which the door turns into a one-line MCP tool error.
"""

from __future__ import annotations

import datetime as dt
import json
import re
from dataclasses import replace
from typing import Any

import numpy as np

from cortex.ask.asker import DEFAULT_K, Asker, SampleNeeded
from cortex.ask.readers import ClientTurn
from cortex.brain.brain import Brain
from cortex.brain.trailers import Actor, check_request_id
from cortex.brain.working_state import Working, context_items
from cortex.errors import BadInput
from cortex.index.bm25 import SearchResult, idf
from cortex.index.corpus import Snapshot, in_archive, is_live
from cortex.index.ranking import RARE_DF, RELATED, fused, name_key
from cortex.index.reading import index_names
from cortex.index.tokenize import tokenize
from cortex.notes.blocks import blocks_of
from cortex.notes.fences import DATA_NOTICE, fence, new_nonce
from cortex.notes.note import Note, find_section, sections
from cortex.notes.paths import check_text, in_scope
from cortex.notes.redact import redact
from cortex.notes.working import in_working

MAX_K = 50
MAX_HISTORY = 100
CORPUS_REPLY_BYTES = 100_000
# brain_context: the boot call is made every session, so it stays small by default
# (a real 722-note vault's router made it 44 KB); a client may ask for more or less.
CONTEXT_REPLY_BYTES = 16_000
MIN_CONTEXT_BYTES = 4_000
MAX_CONTEXT_BYTES = 100_000
# brain_read: a note's text comes in parts of this many bytes of JSON (the rest of a
# 100 KB page is left for the links, backlinks and frontmatter beside it). A 372 KB
# hub note was one 94,000-token reply.
READ_TEXT_BYTES = 80_000
# What sits beside a page's text, so a page stays under 100 KB of JSON: the links
# and the backlinks listed (5 KB each, about 60 links; the rest are counted) and the
# parsed frontmatter (page 1 only; past 8 KB it is left to the text, which holds it).
LINKS_BYTES = 5_000
FRONTMATTER_BYTES = 8_000
PROFILE_BYTES = 6_000
LOG_DAYS = 7
PASSAGE_CHARS = 400
MASK_WINDOW = 4_000  # characters past a passage's cut that are masked with it
# A question is a sentence or a paragraph; past this it is a document, which would be
# tokenized and scored against every note and sent in every pack.
MAX_QUESTION_CHARS = 2_000
# Said in the server's instructions, in brain_context's reply and in brain_verify's description.
VERIFY_ADVICE = (
    "After answering from the notes yourself, call brain_verify with the answer and the verbatim "
    "sentences it relied on (each with its note's path), and tell the user the overall stamp it returns."
)
# Notes one ask may read: 20 packed notes already fill the default 60 KB pack.
MAX_ASK_K = 20
# brain_context: room for its own fields (sha, notice, nonce, left-out lines), and
# the share of the rest the recent logs may take before the router.
CONTEXT_FIELDS_BYTES = 1_000
WORKING_SHARE = 0.2  # of brain_context's budget kept for open working items
LOG_SHARE = 1 / 3


def _jsonable(value: Any) -> Any:
    if isinstance(value, (dt.date, dt.datetime)):
        return value.isoformat()
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    return str(value)


def _check_k(k: int | None, default: int, cap: int = MAX_K) -> int:
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
        self._names: tuple[str, dict[str, set[str]]] | None = None  # (sha, name key -> notes): names first
        self._masks: dict[tuple, np.ndarray] = {}  # search filters' verdicts for the meaning arm

    # -- read and write ---------------------------------------------------

    def read(
        self, path: str, at: str | None = None, heading: str | None = None, page: int | None = None
    ) -> dict[str, Any]:
        """One note at the head (or `at`): text in pages of about 100 KB, or one section
        with `heading`; with its tags, aliases, outgoing [[links]] and backlinks at that SHA."""
        if heading is not None:
            check_text(heading, "heading")
        if page is not None and (not isinstance(page, int) or isinstance(page, bool) or page < 1):
            raise BadInput("page must be a whole number from 1")
        sha, blob, note = self.brain.read(path, at)
        today = self.brain.today()
        reply: dict[str, Any] = {"sha": sha, "path": note.path, "blob": blob, "status": note.status}
        text = note.text
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
        parts = max(1, -(-len(data) // size))
        n = page or 1
        if n > parts:
            raise BadInput(f"page {n} is past the end: this {'section' if heading else 'note'} has {parts} page(s)")
        if n == 1:
            front = _jsonable(note.frontmatter)
            if json_size(front) <= FRONTMATTER_BYTES:
                reply["frontmatter"] = front
            else:
                reply["frontmatter_omitted"] = (
                    f"the parsed frontmatter is over {FRONTMATTER_BYTES:,} bytes of JSON; it is at the top of the text"
                )
        reply["text"] = _part(data, n - 1, size) if parts > 1 else text
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
        return reply

    def _links(self, sha: str, note: Note) -> dict[str, Any]:
        """The note's outgoing [[links]] (resolved at `sha`) and the notes linking to it."""
        corpus = self.brain.corpus
        if corpus.built() is None:
            # A read never waits for the first corpus build (start to first read stays
            # fast); links need every note of the commit, so they wait for the next read.
            return {
                "links": [],
                "backlinks": [],
                "links_note": "the brain is still being indexed at start-up; read again for links "
                f"and backlinks ({len(note.links)} link(s) are in the text)",
            }
        snap = corpus.at(sha)
        resolver, back = snap.link_map()
        out: dict[str, Any] = {}
        seen: set[tuple[str, str | None]] = set()
        links = []
        for link in note.links:
            key = (link.target, link.heading)
            if key in seen:
                continue
            seen.add(key)
            item = link.summary()
            target = resolver.resolve(link.target, note.path)
            if target is None:
                item["missing"] = True  # a dangling link: no note of that name at this SHA
            else:
                item["path"] = target
            links.append(item)
        out["links"] = _fit(links, LINKS_BYTES)
        if len(out["links"]) < len(links):
            out["links_left_out"] = (
                f"{len(links) - len(out['links'])} more distinct link(s) not listed "
                f"(kept under {LINKS_BYTES:,} bytes); they are in the text"
            )
        sources: dict[str, int] = {}
        for source, _ in back.get(note.path, []):
            if source != note.path:
                sources[source] = sources.get(source, 0) + 1
        backlinks = [{"path": p, "links": c} for p, c in sources.items()]
        out["backlinks"] = _fit(backlinks, LINKS_BYTES)
        if len(out["backlinks"]) < len(backlinks):
            name = note.path.rsplit("/", 1)[-1].removesuffix(".md")
            out["backlinks_left_out"] = (
                f"{len(backlinks) - len(out['backlinks'])} more note(s) link here "
                f"(kept under {LINKS_BYTES:,} bytes); brain_search for {name!r} "
                "finds them"
            )
        return out

    def write(
        self,
        actor: Actor,
        path: str,
        mode: str,
        content: str | None = None,
        find: str | None = None,
        to: str | None = None,
        expected_blob: str | None = None,
        reason: str | None = None,
        request_id: str | None = None,
    ) -> dict[str, Any]:
        actor = replace(actor, request=check_request_id(request_id))
        return self.brain.write(
            path, mode, actor, content=content, find=find, to=to, expected_blob=expected_blob, reason=reason
        )

    def capture(
        self, actor: Actor, text: str, tags: list[str] | None = None, request_id: str | None = None
    ) -> dict[str, Any]:
        actor = replace(actor, request=check_request_id(request_id))
        return self.brain.capture(text, actor, tags)

    def history(self, path: str | None = None, limit: int | None = None, before: str | None = None) -> dict[str, Any]:
        limit = _check_k(limit, 20, MAX_HISTORY)
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
        return reply

    # -- finding ----------------------------------------------------------

    def _snapshot_and_day(self, as_of: str | None) -> tuple[Snapshot, dt.date]:
        if as_of:
            when = self.brain.parse_time(as_of)
            return self.brain.snapshot(as_of), when.astimezone(self.brain.tz).date()
        return self.brain.snapshot(), self.brain.today()

    def search(
        self,
        query: str,
        k: int | None = 10,
        prefix: str | None = None,
        include_retired: bool = False,
        as_of: str | None = None,
        scope: list[str] | None = None,
        include_working: bool = False,
    ) -> dict[str, Any]:
        check_text(query, "query")
        include_working = include_working and scope is None  # no guest ever reaches working/
        if prefix is not None:
            check_text(prefix, "prefix")
        k = _check_k(k, 10)
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
        key = (day, prefix, None if scope is None else tuple(scope), include_working)
        allow = self._allow(snap, day, prefix, scope, include_retired, include_working)
        wider = (
            None if include_retired else (self._allow(snap, day, prefix, scope, True, include_working), (*key, True))
        )
        meaning = self.brain.meaning
        # A scope (a guest's) is scored over its own rows only: its timing owes nothing to the rest.
        close = meaning.closeness(snap, query, within, private=scope is not None) if meaning is not None else None
        if close is not None:
            found = self._by_meaning(
                snap, query, k, close, weights, allow, wider[0] if wider else None, within, (*key, include_retired)
            )
        else:
            found = self.brain.corpus.search(snap, query, k, allow, within, (*key, include_retired), wider)
        named = self._named(snap, query, allow, within)
        if named:  # an exact title, alias or file name comes first, whatever the scores say
            rest = [(p, sc) for p, sc in found.hits if p not in named]
            top = max((sc for _, sc in found.hits), default=0.0)
            hits = ([(p, top) for p in sorted(named)] + rest)[: max(k, len(named))]
            found = replace(found, hits=hits, total=max(found.total, len(named)))
        reply: dict[str, Any] = {"sha": snap.sha, "query": query, "total": found.total}
        if meaning is not None:
            reply["meaning"] = meaning.line(snap, within)
        left = (found.reach or 0) - found.total
        if left:
            reply["left_out"] = (
                f"{left} matching note(s) in archive/ or retired were left out; pass include_retired=true to see them"
            )
        hits = []
        for path, score in found.hits:
            note = snap.notes[path]
            hit = note.summary()
            hit["score"] = round(score, 4)
            near = close.spans_of(path) if close is not None else []
            heading, passage = best_passage(note, weights, near[0][1] if near else None)
            if near:
                hit["closeness"] = round(near[0][0], 4)
            hit["heading"] = heading
            hit["passage"] = passage
            retired = note.retired_reason(day)
            if retired:
                hit["retired"] = retired
            if in_archive(path):
                hit["archived"] = True
            hits.append(hit)
        reply["hits"] = hits
        if found.total > len(hits):
            reply["more"] = (
                f"{found.total - len(hits)} more matching note(s); raise k (max {MAX_K}) or narrow with prefix"
            )
        return reply

    def _by_meaning(self, snap, query, k, close, weights, allow, wider, within, key) -> SearchResult:
        """Hits ordered by `ranking.fused`: the closest passage's cosine, plus the share of
        the query's words the note holds, plus its rare ones. A match is a note holding a
        query term or with a passage at RELATED or closer; `reach` counts those the default
        filters left out. Only `within` (a prefix or scope, when given) was scored."""
        scope = set(within) if within is not None else None
        cos = close.best
        cover = np.zeros(len(cos))
        rare = np.zeros(len(cos))
        matrix = close.matrix

        def holders(index) -> dict[str, tuple[np.ndarray, int]]:
            # Each term's notes as rows of the scope, through a slot -> row table kept with the
            # matrix: a set of 10,000 paths looked up one by one cost ~13 ms a query.
            key = (snap.sha, id(index), len(index))
            table = matrix.tables.get(key)
            if table is None:
                table = matrix.tables[key] = index.slot_table(close.paths)
            out = {}
            for t in weights:
                slots = index.matching_slots((t,), scope)
                rows = table[slots]
                out[t] = (rows[rows >= 0], len(slots))
            return out

        found = self.brain.corpus.with_index(snap, holders)
        if scope is not None:  # a scope's own rarity: how common a word is outside it takes no part
            weights = {t: idf(len(scope), n) for t, (_, n) in found.items() if n}
        total = sum(weights.values()) or 1.0
        for t, w in weights.items():
            rows, n = found[t]
            cover[rows] += w / total
            if n <= RARE_DF:
                rare[rows] += 1
        scores = fused(cos, cover, rare)
        match = (cos >= RELATED) | (cover > 0)
        ok = self._mask(snap, close, allow, key)
        kept = np.flatnonzero(match & ok)
        order = kept[np.lexsort((kept, -scores[kept]))][:k]
        reach = len(kept) if wider is None else int((match & self._mask(snap, close, wider, (*key[:-1], True))).sum())
        return SearchResult([(close.paths[i], float(scores[i])) for i in order], len(kept), reach)

    def _mask(self, snap: Snapshot, close, allow, key) -> np.ndarray:
        """`allow`'s verdict on each note of `close`, kept per commit and filter key
        (asked once per note, not once per query: a live check is a date comparison)."""
        cache_key = (snap.sha, key, len(close.paths))
        found = self._masks.get(cache_key)
        if found is None:
            found = np.fromiter((allow(p) for p in close.paths), dtype=bool, count=len(close.paths))
            if len(self._masks) >= 16:
                self._masks.pop(next(iter(self._masks)))
            self._masks[cache_key] = found
        return found

    def _named(self, snap: Snapshot, query: str, allow, within) -> set[str]:
        """Notes whose title, alias or file name is the query itself (case and punctuation aside)."""
        key = name_key(query)
        if not key:
            return set()
        if self._names is None or self._names[0] != snap.sha:
            names: dict[str, set[str]] = {}
            for path, note in snap.notes.items():
                for name in {name_key(n) for n in index_names(note)} - {""}:
                    names.setdefault(name, set()).add(path)
            self._names = (snap.sha, names)
        found = self._names[1].get(key, set())
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
    ):
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
    ) -> dict[str, Any]:
        if (paths is None) == (query is None):
            raise BadInput("give either paths or query, not both and not neither")
        snap = self.brain.snapshot()
        if query is not None:
            found = self.search(query, k=_check_k(k, 10))
            order = [h["path"] for h in found["hits"]]
        else:
            order = []
            for p in paths or []:
                check_text(p, "path")
                if p not in snap.notes:
                    raise BadInput(f"no note at {p} in commit {snap.sha[:12]}")
                order.append(p)
        return corpus_page(snap, order, after, CORPUS_REPLY_BYTES)

    def ask(
        self,
        question: str,
        k: int | None = None,
        as_of: str | None = None,
        scope: list[str] | None = None,
        door: str = "owner",
        seat: ClientTurn | None = None,
    ) -> dict[str, Any] | SampleNeeded:
        """brain_ask. `seat`: the client's session on a trusted door, whose model may read."""
        check_text(question, "question")
        if not question.strip():
            raise BadInput("question is empty")
        if len(question) > MAX_QUESTION_CHARS:
            raise BadInput(f"question is longer than {MAX_QUESTION_CHARS} characters")
        return self.asker.ask(question, _check_k(k, DEFAULT_K, MAX_ASK_K), as_of, scope, door, seat=seat)

    def verify(
        self, answer: Any, citations: Any, question: str | None = None, as_of: str | None = None
    ) -> dict[str, Any]:
        """brain_verify: stamp an answer the client's own model wrote from the notes."""
        if question is not None and len(question) > MAX_QUESTION_CHARS:
            raise BadInput(f"question is longer than {MAX_QUESTION_CHARS} characters")
        return self.asker.verify(answer, citations, question, as_of)

    def context(self, project: str | None = None, budget: int | None = None) -> dict[str, Any]:
        if budget is None:
            budget = CONTEXT_REPLY_BYTES
        if not isinstance(budget, int) or isinstance(budget, bool) or budget < MIN_CONTEXT_BYTES:
            raise BadInput(f"budget must be a whole number of bytes from {MIN_CONTEXT_BYTES}")
        snap = self.brain.snapshot()
        cap = min(budget, MAX_CONTEXT_BYTES)
        reply = boot_context(snap, self.brain.today(), project, new_nonce(), cap - int(cap * WORKING_SHARE))
        # Open working items, newest first, in their own share of the budget.
        room = cap - json_size(reply) - 200
        items, left = context_items(self.brain, snap, project, room)
        reply["open_items"] = items
        if left:
            reply["open_items_left_out"] = (
                f"{left} open item(s) over the budget; brain_working(action='list') or brain_handoff lists them"
            )
        return reply

    def working_state(self, actor: Actor, action: str, **args: Any) -> dict[str, Any]:
        """brain_working: add, list, file, drop or touch an item, one commit a change."""
        return self.working.act(actor, action, **args)

    def handoff(self, project: str, budget: int | None = None) -> dict[str, Any]:
        check_text(project, "project")
        return self.working.handoff(project, budget)


def _fit(items: list[dict[str, Any]], cap: int) -> list[dict[str, Any]]:
    """The leading `items` whose JSON stays under `cap` bytes."""
    used = 2
    for i, item in enumerate(items):
        used += json_size(item) + 1
        if used > cap:
            return items[:i]
    return items


# Links to other notes ([[target|alias]], [text](other.md)): their words name another
# note, so a passage that only lists them (a "## Links" section) is not where this
# note says the thing. An external link's text stays ([tokio](https://…) in a list
# of libraries is the match); only its URL goes.
_LINKISH = re.compile(
    r"!?\[\[[^\]\n]*\]\]|!?\[[^\]\n]*\]\((?![a-z]+:)[^)\n]*\)"
    r"|(?<=\])\([a-z]+:[^)\n]*\)|https?://\S+"
)


def _passage_score(text: str, weights: dict[str, float]) -> tuple[float, float]:
    """(idf of the query terms in the text outside links, idf of those inside links)."""
    folded = text.casefold()
    if folded.isascii() and not any(t in folded for t in weights):
        return (0.0, 0.0)  # ASCII terms are substrings of the folded text: none here, no need to tokenize
    # Line by line (no term or link spans a line break), stopping once every query term is
    # found outside links: then no term can count as linked, so the score is final. An 80 KB
    # block of common words was tokenized whole for every hit.
    want, plain, seen = set(weights), set(), set()
    for line in text.split("\n"):
        if _LINKISH.search(line):
            plain.update(tokenize(_LINKISH.sub(" ", line)))
            seen.update(tokenize(line))
        else:
            plain.update(tokenize(line))
        if want <= plain:
            break
    linked = seen - plain
    return (sum(w for t, w in weights.items() if t in plain), sum(w for t, w in weights.items() if t in linked))


def best_passage(note: Note, weights: dict[str, float], closest: int | None = None) -> tuple[str, str]:
    """The passage that matches the query best, with its heading, capped for a search hit.

    Blocks are scored by the rarity (idf) of the query terms they hold outside links,
    then inside links, then earliest; a long block (a list of a thousand lines) is cut
    to start at its best line, so the passage shows the match and not the block's top.
    A note that holds none of the query's words, found by meaning, shows block `closest`
    (the first block of its closest passage).
    """
    best = None
    best_score: tuple[float, float] = (-1.0, -1.0)
    # Every term outside links is the most a block can score, and the earliest block
    # wins ties: the first block to score it is the answer (a common word: the first).
    most = (sum(weights.values()), 0.0) if weights else (0.0, 0.0)
    for block in blocks_of(note):
        text = block.text.strip()
        if not text or block.kind == "heading":
            continue
        score = _passage_score(text, weights) if weights else (0.0, 0.0)
        if score > best_score:
            best, best_score = block, score
            if score >= most:
                break
    if best_score <= (0.0, 0.0) and closest is not None and 0 <= closest < len(blocks := blocks_of(note)):
        best = blocks[closest]
    if best is None:
        return "", ""
    return _shown(best, best_score, weights)


def _shown(best, best_score: tuple[float, float], weights: dict[str, float]) -> tuple[str, str]:
    raw = best.text
    if len(raw) > PASSAGE_CHARS and best_score > (0.0, 0.0):
        # The earliest best line; a line holding every term is the best, so the scan stops
        # there (a hub note's list of 8,000 lines was tokenized whole for every hit).
        lines = raw.splitlines()
        most = (sum(weights.values()), 0.0)
        top, top_score = 0, (-1.0, -1.0)
        for i, line in enumerate(lines):
            score = _passage_score(line, weights)
            if score > top_score:
                top, top_score = i, score
                if score >= most:
                    break
        if top:
            raw = "… " + "\n".join(lines[top:])
    # Masked before the cut, so the cut cannot split a secret: a window that holds any
    # credential shape (a PEM key is under 4,000 characters), not the whole 80 KB block.
    text = redact(" ".join(raw[: PASSAGE_CHARS + MASK_WINDOW].split()))
    if len(text) > PASSAGE_CHARS:
        text = text[:PASSAGE_CHARS].rsplit(" ", 1)[0] + f" … [passage cut at {PASSAGE_CHARS} chars; brain_read for all]"
    return best.heading, text


# Room for a corpus reply's own fields (sha, total_notes, next, more): measured under
# 400 bytes; 2,000 leaves room for a long `more` line and the JSON framing.
REPLY_FIELDS_BYTES = 2_000


def json_size(value: Any) -> int:
    """Bytes `value` takes in a JSON reply (UTF-8, escapes included): what a client's context pays."""
    return len(json.dumps(value, ensure_ascii=False).encode("utf-8"))


def part_budget(text: str, cap: int) -> int:
    """Raw UTF-8 bytes per part of `text` so that each part's JSON stays under the page.

    JSON escaping grows text (quotes, backslashes, tabs and newlines take two bytes
    each; measured up to +10% on real notes, more on code), so the raw budget shrinks
    by the note's own growth ratio. It depends only on the text, so a cursor names the
    same part on every call.
    """
    raw = len(text.encode("utf-8")) or 1
    growth = max(1.0, (json_size(text) - 2) / raw)
    return max(1_000, int((cap - REPLY_FIELDS_BYTES) / growth))


def corpus_page(snap: Snapshot, order: list[str], after: str | None, cap: int) -> dict[str, Any]:
    """Full notes in `order`, under `cap` bytes of JSON, resuming at cursor `after`.

    A note larger than the cap comes in numbered parts; the cursor is
    `<index>:<part>` so a resumed call continues exactly where this one stopped.
    """
    start_i, start_part = _cursor(after, snap, order, cap) if after else (0, 0)
    items: list[dict[str, Any]] = []
    used = REPLY_FIELDS_BYTES
    i, part = start_i, start_part
    while i < len(order):
        note = snap.notes[order[i]]
        text = redact(note.text)  # masked before it is cut into parts
        data = text.encode("utf-8")
        budget_part = part_budget(text, cap)
        parts = max(1, -(-len(data) // budget_part))
        piece = _part(data, part, budget_part) if parts > 1 else text
        item: dict[str, Any] = {"path": note.path, "status": note.status, "blob": snap.blobs[note.path], "text": piece}
        if parts > 1:
            item["part"] = f"{part + 1} of {parts}"
        size = json_size(item) + 2
        if items and used + size > cap:
            break
        items.append(item)
        used += size
        if part + 1 < parts:
            part += 1
            break  # the rest of a long note starts the next page
        i, part = i + 1, 0
    reply: dict[str, Any] = {"sha": snap.sha, "notes": items, "total_notes": len(order)}
    if i < len(order):
        reply["next"] = f"{i}:{part}"
        reply["more"] = (
            f"{len(order) - i} note(s) not yet returned (reply capped at {cap} bytes); call again with after={i}:{part}"
        )
    return reply


def _cursor(after: str, snap: Snapshot, order: list[str], cap: int) -> tuple[int, int]:
    """(note index, part) from a cursor `<index>:<part>`; BadInput unless it points inside this listing."""
    bad = BadInput("after must be a cursor returned by an earlier brain_corpus call (<index>:<part>)")
    m = _CURSOR.fullmatch(after) if isinstance(after, str) else None
    if not m:
        raise bad
    i, part = int(m.group(1)), int(m.group(2))
    if i > len(order) or (i == len(order) and part != 0):
        raise BadInput(f"after={after} is past the end: this listing has {len(order)} notes")
    if i < len(order):
        text = redact(snap.notes[order[i]].text)
        if part >= max(1, -(-len(text.encode("utf-8")) // part_budget(text, cap))):
            raise BadInput(f"after={after} names a part that note {i} does not have")
    return i, part


_CURSOR = re.compile(r"([0-9]{1,9}):([0-9]{1,9})")


def _part(data: bytes, n: int, size: int) -> str:
    """The n-th part of `data`, cut on a UTF-8 character boundary."""
    start = n * size
    end = min(len(data), start + size)
    while start > 0 and start < len(data) and (data[start] & 0xC0) == 0x80:
        start -= 1
    while end < len(data) and (data[end] & 0xC0) == 0x80:
        end -= 1
    return data[start:end].decode("utf-8", errors="replace")


def _router_order(snap: Snapshot, paths: list[str]) -> list[str]:
    """Router rows best first: the last real change (not an import), then whether the
    profile or a project links to the note (or it is a project), then backlinks, then path."""
    resolver, back = snap.link_map()
    hubs = ["profile.md"] + [p for p in snap.notes if p.startswith("projects/")]
    linked = {p for p in snap.notes if p.startswith("projects/")}
    for hub in hubs:
        if hub in snap.notes:
            linked.update(t for t in (resolver.resolve(lk.target, hub) for lk in snap.notes[hub].links) if t)
    never = dt.datetime.min.replace(tzinfo=dt.timezone.utc)

    def key(p: str) -> tuple:
        when = snap.real.get(p, never)
        return (
            -when.timestamp() if when is not never else float("inf"),
            p not in linked,
            -len({s for s, _ in back.get(p, [])}),
            p,
        )

    return sorted(paths, key=key)


def boot_context(
    snap: Snapshot, today: dt.date, project: str | None, nonce: str, cap: int = CONTEXT_REPLY_BYTES
) -> dict[str, Any]:
    """The boot call: profile, recent log entries and a router of live notes, under `cap` bytes of JSON."""
    reply: dict[str, Any] = {"sha": snap.sha, "notice": DATA_NOTICE, "nonce": nonce, "verify": VERIFY_ADVICE}
    budget = cap - CONTEXT_FIELDS_BYTES - json_size(reply)
    profile = snap.notes.get("profile.md")
    profile_cap = min(PROFILE_BYTES, budget // 3)
    if profile:
        text = redact(profile.text)  # masked before the cut
        if len(text.encode("utf-8")) > profile_cap:
            text = text.encode("utf-8")[:profile_cap].decode("utf-8", "ignore")
            text += f"\n[profile cut at {profile_cap} bytes; brain_read profile.md for all]"
        reply["profile"] = fence("profile.md", text, nonce)
        budget -= json_size(reply["profile"])
    # Recent logs first so they are never crowded out by the router.
    logs = [
        (path, heading, body)
        for path, heading, body in snap.log_entries(today, LOG_DAYS)
        if not project or project.lower() in heading.lower()
    ]
    log_items, log_left = [], 0
    log_budget = int(budget * LOG_SHARE)
    for path, heading, body in logs:
        text = fence(f"{path} {heading}", f"{heading}\n{body}", nonce)
        size = json_size(text) + 1
        if size > log_budget:
            log_left += 1
            continue
        log_budget -= size
        budget -= size
        log_items.append(text)
    reply["recent_log"] = log_items
    if log_left:
        reply["recent_log_left_out"] = f"{log_left} entr(ies) over the budget; brain_read the log/ files"
    rows = []
    live = [
        p
        for p in snap.notes
        if p != "profile.md" and snap.live(p, today) and not p.startswith("log/") and not in_working(p)
    ]
    if project:
        live = [p for p in live if project in p or project in snap.notes[p].tags]
    live = _router_order(snap, live)
    for path in live:
        note = snap.notes[path]
        when = snap.real.get(path)
        row = " · ".join(
            x
            for x in [
                path,
                note.description or note.title,
                ", ".join(note.tags[:5]),
                when.date().isoformat() if when else "",
            ]
            if x
        )
        size = json_size(row) + 1
        if size > budget:
            break
        budget -= size
        rows.append(row)
    reply["router"] = rows
    if len(rows) < len(live):
        reply["router_left_out"] = (
            f"{len(live) - len(rows)} more live note(s) not listed (reply kept under "
            f"{cap:,} bytes; pass budget= up to {MAX_CONTEXT_BYTES:,} for more); "
            "reach them with brain_search or brain_corpus(query=...)"
        )
    return reply
