"""brain_ask: retrieve, pack, read, verify, stamp.

The reader may be a model; the stamp never is. Each quote is checked by the
pure verifier against the cited note's bytes at the served SHA, and the reply's
stamp is the weakest of the quotes, with a coverage line saying what was and
was not read.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import threading
from collections import OrderedDict
from typing import Any, Protocol

from .brain import Brain
from .corpus import Snapshot, in_archive
from .pack import Pack, build_pack
from .paths import in_scope
from .readers import Reader
from .tokenize import content_terms, tokenize
from .verify import UNVERIFIED, check_quote, neutralize_answer, overall_stamp

DEFAULT_K = 8


class AnswerCache(Protocol):
    def get(self, key: str) -> dict[str, Any] | None: ...

    def set(self, key: str, value: dict[str, Any]) -> None: ...


class MemoryCache:
    """A small in-process LRU; the Redis-backed cache is used when REDIS_URL is set."""

    def __init__(self, size: int = 256):
        self._items: OrderedDict[str, dict[str, Any]] = OrderedDict()
        self._size = size
        self._lock = threading.Lock()

    def get(self, key: str) -> dict[str, Any] | None:
        with self._lock:
            if key in self._items:
                self._items.move_to_end(key)
                return self._items[key]
            return None

    def set(self, key: str, value: dict[str, Any]) -> None:
        with self._lock:
            self._items[key] = value
            self._items.move_to_end(key)
            while len(self._items) > self._size:
                self._items.popitem(last=False)


def normalise_question(question: str) -> str:
    return " ".join(tokenize(question))


def cache_key(question: str, sha: str, reader: str, k: int, door: str, scope: list[str] | None,
              as_of_day: str) -> str:
    """Everything an answer depends on; a new commit can never meet an old answer."""
    parts = [normalise_question(question), sha, reader, str(k), door,
             json.dumps(sorted(scope) if scope is not None else None), as_of_day]
    return "ask:" + hashlib.sha256("\x1f".join(parts).encode()).hexdigest()


def usable(snap: Snapshot, path: str, day: dt.date, as_of: bool) -> bool:
    """Whether a note may be read to answer: live, and valid on `day` when asked as of a date."""
    note = snap.notes[path]
    if in_archive(path) or note.is_retired(day):
        return False
    return note.valid_on(day) if as_of else True


class Asker:
    """Answers questions over one brain with one reader and one cache."""

    def __init__(self, brain: Brain, reader: Reader, cache: AnswerCache | None = None,
                 pack_bytes: int = 60_000):
        self.brain = brain
        self.reader = reader
        self.cache = cache or MemoryCache()
        self.pack_bytes = pack_bytes

    def ask(self, question: str, k: int = DEFAULT_K, as_of: str | None = None,
            scope: list[str] | None = None, door: str = "owner", show_sources: bool = True) -> dict[str, Any]:
        if as_of:
            when = self.brain.parse_time(as_of)
            snap, day = self.brain.snapshot(as_of), when.astimezone(self.brain.tz).date()
        else:
            snap, day = self.brain.snapshot(), self.brain.today()
        key = cache_key(question, snap.sha, self.reader.name, k, door, scope, day.isoformat())
        cached = self.cache.get(key)
        if cached is not None:
            return dict(cached, cached=True)

        def allow(path: str) -> bool:
            return in_scope(path, scope) and usable(snap, path, day, bool(as_of))

        corpus = self.brain.corpus
        found = corpus.search(snap, question, k, allow)
        ranked = [snap.notes[p] for p, _ in found.hits]
        pack = build_pack(snap.sha, ranked, question, self.pack_bytes)
        reply = self.reader.read(question, pack)
        result = self._stamp(question, snap, day, pack, reply, found.total, allow)
        result["sha"] = snap.sha
        if result["stamp"] != UNVERIFIED:
            self.cache.set(key, result)
        return dict(result, cached=False)

    def _stamp(self, question, snap, day, pack: Pack, reply, total_matching: int, allow) -> dict[str, Any]:
        notes_by_tag = pack.notes_by_tag
        checks = []
        quotes = []
        if reply.error is None:
            for tag, quote in reply.citations:
                note = notes_by_tag.get(tag)
                check = check_quote(quote, note, notes_by_tag, day)
                checks.append(check)
                entry: dict[str, Any] = {"quote": quote, "stamp": check.stamp, "reason": check.reason,
                                         "path": check.path, "heading": check.heading}
                if check.old_claim:
                    entry["old_claim"] = check.old_claim
                if check.superseded_by:
                    entry["superseded_by"] = check.superseded_by
                quotes.append(entry)
        matching = {p for p in self.brain.corpus.matching(snap, content_terms(question)) if allow(p)}
        read = set(pack.paths)
        unread = matching - read
        if reply.error is not None:
            stamp, why = UNVERIFIED, reply.error
        else:
            stamp, why = overall_stamp(checks, reply.not_in_brain, len(unread), reply.answer)
        in_scope_count = sum(1 for p in snap.notes if allow(p))
        by_budget = len(pack.left_for_budget)
        by_retrieval = len(unread) - by_budget
        coverage = (f"searched {in_scope_count} notes of the scope; {len(matching)} share a word with the "
                    f"question; read {len(read)}; left out {len(unread)} "
                    f"({by_retrieval} by retrieval rank, {by_budget} by the pack budget); "
                    f"{'some unread notes share a word with the question' if unread else 'no unread note shares a word with the question'}; "
                    f"sha {snap.sha[:12]}; reader {reply.reader}; ~{reply.tokens_sent} tokens sent")
        return {
            "answer": neutralize_answer(reply.answer),
            "stamp": stamp,
            "stamp_reason": why,
            "quotes": quotes,
            "coverage": coverage,
            "reader": reply.reader,
            "notes_read": len(read),
            "unread_matching": len(unread),
        }
