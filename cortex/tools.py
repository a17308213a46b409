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

from .ask import DEFAULT_K, Asker
from .blocks import blocks_of
from .brain import Actor, Brain, check_request_id
from .corpus import Snapshot, in_archive, is_live
from .errors import BadInput
from .fences import DATA_NOTICE, fence, new_nonce
from .notes import Note
from .paths import check_text, in_scope
from .redact import redact
from .tokenize import tokenize

MAX_K = 50
MAX_HISTORY = 100
CORPUS_REPLY_BYTES = 100_000
CONTEXT_REPLY_BYTES = 50_000
PROFILE_BYTES = 6_000
LOG_DAYS = 7
PASSAGE_CHARS = 400
# A question is a sentence or a paragraph; past this it is a document, which would be
# tokenized and scored against every note and sent in every pack.
MAX_QUESTION_CHARS = 2_000
# Notes one ask may read: 20 packed notes already fill the default 60 KB pack.
MAX_ASK_K = 20
# brain_context: room for its own fields (sha, notice, nonce, left-out lines), and
# the share of the rest the recent logs may take before the router.
CONTEXT_FIELDS_BYTES = 4_000
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
        self.asker = asker

    # -- read and write ---------------------------------------------------

    def read(self, path: str, at: str | None = None) -> dict[str, Any]:
        sha, blob, note = self.brain.read(path, at)
        today = self.brain.today()
        reply = {
            "sha": sha, "path": note.path, "blob": blob, "status": note.status,
            "frontmatter": _jsonable(note.frontmatter), "text": note.text,
        }
        retired = note.retired_reason(today)
        if retired:
            reply["retired"] = retired
        if in_archive(note.path):
            reply["archived"] = True
        if note.frontmatter_error:
            reply["frontmatter_error"] = note.frontmatter_error
        return reply

    def write(self, actor: Actor, path: str, mode: str, content: str | None = None,
              find: str | None = None, to: str | None = None,
              expected_blob: str | None = None, reason: str | None = None,
              request_id: str | None = None) -> dict[str, Any]:
        actor = replace(actor, request=check_request_id(request_id))
        return self.brain.write(path, mode, actor, content=content, find=find, to=to,
                                expected_blob=expected_blob, reason=reason)

    def capture(self, actor: Actor, text: str, tags: list[str] | None = None,
                request_id: str | None = None) -> dict[str, Any]:
        actor = replace(actor, request=check_request_id(request_id))
        return self.brain.capture(text, actor, tags)

    def history(self, path: str | None = None, limit: int | None = None,
                before: str | None = None) -> dict[str, Any]:
        limit = _check_k(limit, 20, MAX_HISTORY)
        if path is not None:
            check_text(path, "path")
        if before is not None:
            before = self.brain.resolve_at(before)
        head = self.brain.head()
        commits, more = self.brain.history(path, limit, before)
        reply: dict[str, Any] = {
            "sha": head,
            "commits": [{
                "sha": c.sha, "time": c.time.isoformat(), "subject": c.subject,
                "message": c.message.strip(), "author": c.author,
                "door": c.door,
                "tool": c.trailers.get("Cortex-Tool"), "client": c.trailers.get("Cortex-Client"),
                "files": list(c.files),
            } for c in commits],
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

    def search(self, query: str, k: int | None = 10, prefix: str | None = None,
               include_retired: bool = False, as_of: str | None = None,
               scope: list[str] | None = None) -> dict[str, Any]:
        check_text(query, "query")
        if prefix is not None:
            check_text(prefix, "prefix")
        k = _check_k(k, 10)
        snap, day = self._snapshot_and_day(as_of)
        terms = set(tokenize(query))
        found = self.brain.corpus.search(snap, query, k, self._allow(snap, day, prefix, scope,
                                                                        include_retired))
        reply: dict[str, Any] = {"sha": snap.sha, "query": query, "total": found.total}
        if not include_retired:
            in_reach = self.brain.corpus.search(snap, query, 1, self._allow(snap, day, prefix, scope, True))
            left = in_reach.total - found.total
            if left:
                reply["left_out"] = (f"{left} matching note(s) in archive/ or retired were left out; "
                                     "pass include_retired=true to see them")
        hits = []
        for path, score in found.hits:
            note = snap.notes[path]
            hit = note.summary()
            hit["score"] = round(score, 4)
            heading, passage = best_passage(note, terms)
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
            reply["more"] = (f"{found.total - len(hits)} more matching note(s); "
                             f"raise k (max {MAX_K}) or narrow with prefix")
        return reply

    def _allow(self, snap: Snapshot, day: dt.date, prefix: str | None, scope: list[str] | None,
               include_retired: bool):
        notes = snap.notes

        def allow(path: str) -> bool:
            if prefix and not path.startswith(prefix):
                return False
            if not in_scope(path, scope):
                return False
            if include_retired:
                return True
            return is_live(notes[path], day)

        return allow

    def corpus(self, paths: list[str] | None = None, query: str | None = None,
               k: int | None = None, after: str | None = None) -> dict[str, Any]:
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

    def ask(self, question: str, k: int | None = None, as_of: str | None = None,
            scope: list[str] | None = None, door: str = "owner") -> dict[str, Any]:
        check_text(question, "question")
        if not question.strip():
            raise BadInput("question is empty")
        if len(question) > MAX_QUESTION_CHARS:
            raise BadInput(f"question is longer than {MAX_QUESTION_CHARS} characters")
        return self.asker.ask(question, _check_k(k, DEFAULT_K, MAX_ASK_K), as_of, scope, door)

    def context(self, project: str | None = None) -> dict[str, Any]:
        snap = self.brain.snapshot()
        return boot_context(snap, self.brain.today(), project, new_nonce())


def best_passage(note: Note, terms: set[str]) -> tuple[str, str]:
    """The block sharing the most query terms, with its heading, capped for a search hit."""
    best = None
    best_score = -1
    for block in blocks_of(note):
        text = block.text.strip()
        if not text or text.startswith("#"):
            continue
        score = len(terms.intersection(tokenize(text)))
        if score > best_score:
            best, best_score = block, score
    if best is None:
        return "", ""
    text = redact(" ".join(best.text.split()))  # masked before the cut, so the cut cannot split a secret
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
        item: dict[str, Any] = {"path": note.path, "status": note.status, "blob": snap.blobs[note.path],
                                "text": piece}
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
        reply["more"] = (f"{len(order) - i} note(s) not yet returned (reply capped at {cap} bytes); "
                         f"call again with after={i}:{part}")
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


def boot_context(snap: Snapshot, today: dt.date, project: str | None, nonce: str) -> dict[str, Any]:
    """The boot call: profile, a router of live notes, and recent log entries, under 50 KB."""
    budget = CONTEXT_REPLY_BYTES - CONTEXT_FIELDS_BYTES
    reply: dict[str, Any] = {"sha": snap.sha, "notice": DATA_NOTICE, "nonce": nonce}
    profile = snap.notes.get("profile.md")
    if profile:
        text = redact(profile.text)  # masked before the cut
        if len(text.encode("utf-8")) > PROFILE_BYTES:
            text = text.encode("utf-8")[:PROFILE_BYTES].decode("utf-8", "ignore")
            text += f"\n[profile cut at {PROFILE_BYTES} bytes; brain_read profile.md for all]"
        reply["profile"] = fence("profile.md", text, nonce)
        budget -= len(reply["profile"].encode("utf-8"))
    # Recent logs first so they are never crowded out by the router.
    logs = []
    since = today - dt.timedelta(days=LOG_DAYS - 1)
    for path in sorted((p for p in snap.notes if p.startswith("log/")), reverse=True):
        try:
            day = dt.date.fromisoformat(path[4:14])
        except ValueError:
            continue
        if day < since or day > today:
            continue
        for heading, body in log_entries(snap.notes[path].body):
            if project and project.lower() not in heading.lower():
                continue
            logs.append((path, heading, body))
    log_items, log_left = [], 0
    log_budget = int(budget * LOG_SHARE)
    for path, heading, body in logs:
        text = fence(f"{path} {heading}", f"{heading}\n{body}", nonce)
        if len(text.encode("utf-8")) > log_budget:
            log_left += 1
            continue
        log_budget -= len(text.encode("utf-8"))
        budget -= len(text.encode("utf-8"))
        log_items.append(text)
    reply["recent_log"] = log_items
    if log_left:
        reply["recent_log_left_out"] = f"{log_left} entr(ies) over the budget; brain_read the log/ files"
    rows = []
    live = [p for p in snap.notes if p != "profile.md" and snap.live(p, today)
            and not p.startswith("log/")]
    if project:
        live = [p for p in live if project in p or project in snap.notes[p].tags]
    live.sort(key=lambda p: (snap.changed.get(p, snap.time), p), reverse=True)
    shown = 0
    for path in live:
        note = snap.notes[path]
        row = " · ".join(x for x in [path, note.description or note.title, ", ".join(note.tags),
                                     snap.changed.get(path, snap.time).date().isoformat()] if x)
        size = len(row.encode("utf-8")) + 4
        if size > budget:
            break
        budget -= size
        rows.append(row)
        shown += 1
    reply["router"] = rows
    if shown < len(live):
        reply["router_left_out"] = (f"{len(live) - shown} more live note(s) not listed (reply kept under "
                                    f"{CONTEXT_REPLY_BYTES} bytes); reach them with brain_search or "
                                    "brain_corpus(query=...)")
    return reply


def log_entries(body: str) -> list[tuple[str, str]]:
    """The `## HH:MM · tags` entries of a day log, newest first."""
    entries: list[tuple[str, list[str]]] = []
    for line in body.splitlines():
        if line.startswith("## "):
            entries.append((line[3:].strip(), []))
        elif entries:
            entries[-1][1].append(line)
    return [(h, "\n".join(lines).strip()) for h, lines in reversed(entries)]
