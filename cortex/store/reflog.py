"""The branch's reflog read from where the last read ended, not whole.

The watcher reads the branch's moves after every write (the lost-write check,
`brain.undone`). Read whole through libgit2, a reflog of 20,000 moves (a year of a busy
brain: Git never trims it unless `git gc` runs) took 35 ms a read, under the store's
lock. Git appends one line a move and rewrites the file only to trim or delete
entries, so a read seeks to the byte where the last one ended and checks that the line
before it is still the one it read; when it is not (rewritten), it finds that line in
the whole file, and gives no moves when it is gone (as for entries already trimmed).

A line is `<old> SP <new> SP <committer> SP <time> SP <tz> TAB <message> LF` (Git's
refs/files-backend.c). A line still being written (no LF yet) is left for the next read.
Pure but for the one file read.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

__all__ = ["Mark", "Move", "moves_in", "read_after"]

Move = tuple[str, str, str]  # (old SHA, new SHA, message)


@dataclass(frozen=True)
class Mark:
    """Where a read of the reflog ended: bytes read, and the last whole line among them."""

    offset: int
    last: bytes


def moves_in(lines: bytes) -> list[Move]:
    """The moves that whole reflog `lines` record, oldest first; a line of another shape is skipped."""
    out: list[Move] = []
    for line in lines.split(b"\n"):
        head, tab, message = line.partition(b"\t")
        fields = head.split(b" ", 2)
        if not tab or len(fields) < 3:
            continue
        old, new = (f.decode("ascii", "replace") for f in fields[:2])
        out.append((old, new, message.decode("utf-8", "replace")))
    return out


def read_after(path: Path, seen: Mark | None, limit: int = 500) -> tuple[list[Move], Mark]:
    """The moves `path` records after `seen` (the newest `limit`, oldest first), and where this read
    ended. `seen` None, or a last line no longer in the file, gives no moves."""
    try:
        with open(path, "rb") as f:
            size = os.fstat(f.fileno()).st_size
            start = seen.offset - len(seen.last) if seen is not None else -1
            if seen is not None and 0 <= start and seen.offset <= size:
                f.seek(start)
                data = f.read(size - start)
                if data.startswith(seen.last):
                    return _after(data, len(seen.last), start, seen.last, limit)
            f.seek(0)
            data = f.read()
    except OSError:
        return [], Mark(0, b"")
    if seen is None or not seen.last or (at := _line_at(data, seen.last)) < 0:
        return [], _end(data, 0)
    return _after(data, at + len(seen.last), 0, seen.last, limit)


def _after(data: bytes, begin: int, base: int, last: bytes, limit: int) -> tuple[list[Move], Mark]:
    """The moves in the whole lines of `data` (the file from byte `base`) after byte `begin`,
    where whole line `last` ends."""
    end = data.rfind(b"\n") + 1
    if end <= begin:
        return [], Mark(base + begin, last)
    return moves_in(data[begin:end])[-limit:], _end(data[:end], base)


def _end(data: bytes, base: int) -> Mark:
    """The mark after the whole lines of `data` (the file from byte `base`)."""
    end = data.rfind(b"\n") + 1
    return Mark(base + end, data[data.rfind(b"\n", 0, end - 1) + 1 : end] if end else b"")


def _line_at(data: bytes, line: bytes) -> int:
    """Where whole line `line` last starts in `data`, or -1."""
    at = data.rfind(line)
    while at > 0 and data[at - 1] != ord("\n"):
        at = data.rfind(line, 0, at)
    return at
