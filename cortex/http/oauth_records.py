"""Where the OAuth door keeps its records: clients, pending consents, codes and tokens (by
hash), token families. One small JSON record a key, each with a lifetime.

- `FileRecords`: a 0600 JSON file in the state folder (`$CORTEX_HOME/oauth.json`), never in
  the brain; held in memory and written through atomically on every change, so a restart keeps
  every client and token. One server a state folder, as for the owner token.
- `guests.queue.RedisRecords`: the same records in Redis, for hosted mode, so every instance
  accepts the same tokens and a revoke on one is seen by the others at their next request.

`claim` marks a record used and returns what it held before: a second claim sees `used`.
"""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path
from typing import Any, Callable, Protocol

from cortex.files import write_atomic

__all__ = ["FileRecords", "Records"]


class Records(Protocol):
    def get(self, key: str) -> dict[str, Any] | None: ...

    def get_many(self, keys: list[str]) -> list[dict[str, Any] | None]: ...

    def put(self, key: str, value: dict[str, Any], ttl: int | None = None) -> None: ...

    def delete(self, *keys: str) -> None: ...

    def claim(self, key: str) -> dict[str, Any] | None: ...

    def scan(self, kind: str) -> list[tuple[str, dict[str, Any]]]: ...


class FileRecords:
    """Records in one JSON file: {key: [expires_at or null, value]}."""

    def __init__(self, path: Path, clock: Callable[[], float] = time.time):
        self.path = path
        self.clock = clock
        self._lock = threading.Lock()
        self._data: dict[str, list[Any]] = {}
        if path.exists():
            try:
                loaded = json.loads(path.read_text())
            except (OSError, ValueError) as exc:
                raise OSError(f"{path} cannot be read ({exc}); move it aside to start with no OAuth clients") from exc
            if isinstance(loaded, dict):
                self._data = {k: v for k, v in loaded.items() if isinstance(v, list) and len(v) == 2}

    def _live(self, key: str) -> dict[str, Any] | None:
        entry = self._data.get(key)
        if entry is None:
            return None
        if entry[0] is not None and entry[0] <= self.clock():
            return None
        found: dict[str, Any] = entry[1]
        return found

    def _save(self) -> None:
        now = self.clock()
        self._data = {k: v for k, v in self._data.items() if v[0] is None or v[0] > now}
        self.path.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(self.path, json.dumps(self._data, sort_keys=True).encode(), mode=0o600)

    def get(self, key: str) -> dict[str, Any] | None:
        with self._lock:
            found = self._live(key)
            return dict(found) if found is not None else None

    def get_many(self, keys: list[str]) -> list[dict[str, Any] | None]:
        with self._lock:
            return [self._live(k) for k in keys]

    def put(self, key: str, value: dict[str, Any], ttl: int | None = None) -> None:
        with self._lock:
            self._data[key] = [self.clock() + ttl if ttl else None, dict(value)]
            self._save()

    def delete(self, *keys: str) -> None:
        with self._lock:
            gone = [k for k in keys if self._data.pop(k, None) is not None]
            if gone:
                self._save()

    def claim(self, key: str) -> dict[str, Any] | None:
        with self._lock:
            found = self._live(key)
            if found is None or found.get("used"):
                return dict(found) if found is not None else None
            self._data[key] = [self._data[key][0], dict(found, used=True)]
            self._save()
            return dict(found)

    def scan(self, kind: str) -> list[tuple[str, dict[str, Any]]]:
        with self._lock:
            return [(k, dict(v)) for k in sorted(self._data) if k.startswith(kind) and (v := self._live(k)) is not None]
