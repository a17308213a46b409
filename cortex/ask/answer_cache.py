"""brain_ask's answer cache: in memory, or in Redis when one is configured (shared by every
instance, `cortex.guests.queue.RedisAnswerCache`); keyed by everything an answer depends on,
the code it comes from included."""

from __future__ import annotations

import hashlib
import json
import threading
from collections import OrderedDict
from pathlib import Path
from typing import Any, Protocol

from cortex.ask.question import Question

__all__ = ["AnswerCache", "MemoryCache", "answer_code", "cache_key"]


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


_ANSWER_CODE: list[str] = []


def answer_code() -> str:
    """A hash of the code an answer comes from: every module of the cortex package and its
    version. Answers live in Redis for days, across deploys: one stamped by an older verifier
    must not come back after an upgrade, so other code means another key (hashed once, a few ms)."""
    if not _ANSWER_CODE:
        import cortex

        package = Path(cortex.__file__).parent
        h = hashlib.blake2b(cortex.__version__.encode(), digest_size=16)
        for source in sorted(package.rglob("*.py")):
            h.update(source.relative_to(package).as_posix().encode() + b"\0" + source.read_bytes())
        _ANSWER_CODE.append(h.hexdigest())
    return _ANSWER_CODE[0]


def cache_key(
    question: Question, sha: str, reader: str, k: int, door: str, scope: list[str] | None, as_of_day: str
) -> str:
    """Everything an answer depends on: a new commit, or new code, can never meet an old answer."""
    parts = [
        answer_code(),
        question.normalised,
        sha,
        reader,
        str(k),
        door,
        json.dumps(sorted(scope) if scope is not None else None),
        as_of_day,
    ]
    return "ask:" + hashlib.sha256("\x1f".join(parts).encode()).hexdigest()
