"""Where the OAuth door keeps its records: clients, pending consents, codes and tokens (by
hash), token families. One small JSON record a key, each with a lifetime.

- `FileRecords`: 0600 files in the state folder, never in the brain: `oauth.json`, every
  record as of the last compaction, and `oauth.json.log`, one JSON line a change since. Held
  in memory; a change is appended to the log by a writer thread, off the event loop, and the
  two are compacted into a new `oauth.json` once the log outgrows it (rewriting a 40 MB file
  on every change took 480 ms a request). A restart replays the log; a crash loses at most
  the changes of the moment. One server a state folder, as for the owner token.
- `guests.queue.RedisRecords`: the same records in Redis, for hosted mode, so every instance
  accepts the same tokens and a revoke on one is seen by the others at their next request.

`claim` marks a record used and returns what it held before: a second claim sees `used`.
"""

from __future__ import annotations

import json
import logging
import os
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol

from cortex import state_folder
from cortex.files import write_atomic

__all__ = ["COMPACT_BYTES", "FileRecords", "Records"]

log = logging.getLogger(__name__)
COMPACT_BYTES = 256 * 1024  # the log is folded into the snapshot past this, or twice the snapshot


class Records(Protocol):
    def get(self, key: str) -> dict[str, Any] | None: ...

    def get_many(self, keys: list[str]) -> list[dict[str, Any] | None]: ...

    def put(self, key: str, value: dict[str, Any], ttl: int | None = None) -> None: ...

    def delete(self, *keys: str) -> None: ...

    def claim(self, key: str) -> dict[str, Any] | None: ...

    def scan(self, kind: str) -> list[tuple[str, dict[str, Any]]]: ...


class FileRecords:
    """Records in memory, kept in `path` ({key: [expires_at or null, value]}) and a log beside
    it of one `[key, expires_at or null, value or null]` line a change (null value: deleted)."""

    def __init__(self, path: Path, clock: Callable[[], float] = time.time):
        self.path = path
        self.log_path = path.with_name(path.name + ".log")
        self.clock = clock
        self._lock = threading.Lock()
        self._data: dict[str, list[Any]] = {}
        self._queue: list[bytes] = []
        self._wake = threading.Condition(self._lock)
        self._closed = False
        self._writing = False  # a batch is being written, under no lock
        self._written = 0  # bytes in the log
        self._size_hint = path.stat().st_size if path.exists() else 0  # the log is compacted past twice this
        if path.exists():
            try:
                loaded = json.loads(path.read_text())
            except (OSError, ValueError) as exc:
                raise OSError(f"{path} cannot be read ({exc}); move it aside to start with no OAuth clients") from exc
            if isinstance(loaded, dict):
                self._data = {k: v for k, v in loaded.items() if isinstance(v, list) and len(v) == 2}
        self._replay()
        self._writer = threading.Thread(target=self._write_loop, name="cortex-oauth-records", daemon=True)
        self._writer.start()

    def _replay(self) -> None:
        """Apply the log's lines in order; a torn last line (a crash mid-append) is left out."""
        try:
            raw = self.log_path.read_bytes()
        except FileNotFoundError:
            return
        self._written = len(raw)
        for line in raw.splitlines():
            try:
                key, expires, value = json.loads(line)
            except (ValueError, TypeError):
                continue
            if value is None:
                self._data.pop(key, None)
            else:
                self._data[key] = [expires, value]

    def _live(self, key: str) -> dict[str, Any] | None:
        entry = self._data.get(key)
        if entry is None:
            return None
        if entry[0] is not None and entry[0] <= self.clock():
            return None
        found: dict[str, Any] = entry[1]
        return found

    def _changed(self, key: str) -> None:
        """Queue `key`'s record as it is now (gone when absent) for the writer. Holds the lock."""
        entry = self._data.get(key)
        line = [key, entry[0], entry[1]] if entry is not None else [key, None, None]
        self._queue.append(json.dumps(line, sort_keys=True).encode() + b"\n")
        self._wake.notify_all()

    def _write_loop(self) -> None:
        while True:
            with self._lock:
                while not self._queue and not self._closed:
                    self._wake.wait()
                lines, self._queue = self._queue, []
                if not lines and self._closed:
                    return
                compact = self._written + sum(map(len, lines)) > max(COMPACT_BYTES, 2 * self._size_hint)
                snapshot = self._snapshot() if compact else None
                self._writing = True
            failed = False
            try:
                self._write(lines, snapshot)
            except OSError as exc:  # kept in memory; said, and tried again in a second
                log.warning("oauth records could not be written to %s: %s", self.path, exc)
                failed = True
            with self._lock:
                if failed:
                    self._queue[:0] = lines
                self._writing = False
                self._wake.notify_all()
            if failed:
                time.sleep(1.0)

    def _snapshot(self) -> bytes:
        now = self.clock()
        self._data = {k: v for k, v in self._data.items() if v[0] is None or v[0] > now}
        return json.dumps(self._data, sort_keys=True).encode()

    def _write(self, lines: list[bytes], snapshot: bytes | None) -> None:
        state_folder.make(self.path.parent)
        if snapshot is not None:
            write_atomic(self.path, snapshot, mode=0o600)  # every change so far, this batch's included
            write_atomic(self.log_path, b"", mode=0o600)
            self._size_hint, self._written = len(snapshot), 0
            return
        fd = os.open(self.log_path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        try:
            os.write(fd, b"".join(lines))
            os.fsync(fd)
        finally:
            os.close(fd)
        self._written += sum(map(len, lines))

    def flush(self, timeout: float = 5.0) -> bool:
        """Wait until every change so far is on disk (a clean shutdown; tests); whether it is."""
        with self._lock:
            return self._wake.wait_for(lambda: not self._queue and not self._writing, timeout)

    def close(self) -> None:
        """Write what is queued and stop the writer."""
        with self._lock:
            self._closed = True
            self._wake.notify()
        self._writer.join(5.0)

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
            self._changed(key)

    def delete(self, *keys: str) -> None:
        with self._lock:
            for k in keys:
                if self._data.pop(k, None) is not None:
                    self._changed(k)

    def claim(self, key: str) -> dict[str, Any] | None:
        with self._lock:
            found = self._live(key)
            if found is None or found.get("used"):
                return dict(found) if found is not None else None
            self._data[key] = [self._data[key][0], dict(found, used=True)]
            self._changed(key)
            return dict(found)

    def scan(self, kind: str) -> list[tuple[str, dict[str, Any]]]:
        with self._lock:
            return [(k, dict(v)) for k in sorted(self._data) if k.startswith(kind) and (v := self._live(k)) is not None]
