"""Files on disk, said once for every layer: the atomic write, reading a note file
safely, and the wording of a failed disk operation.

Every file Cortex replaces (a note in the working tree, the saved index, the meaning
model, the console's sign-out epoch) goes through `replacing`: a temp file in the same
folder, fsync, `os.replace`, fsync of the folder, and the temp file removed on any
error, so a reader or a crash sees the old file or the new one, never half of one.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path

__all__ = [
    "private_folder",
    "prune_empty_folders",
    "read_file",
    "remove_orphans",
    "replacing",
    "storage_error_text",
    "write_atomic",
]


def _temp_for(path: Path) -> Path:
    # Dot-named, so the hand-edit watcher and editors pass it by; the pid lets a later
    # writer tell a killed writer's leftover (`remove_orphans`), the thread id keeps two
    # threads of one process apart.
    return path.parent / f".{path.name}.{os.getpid()}.{threading.get_ident()}.tmp"


@contextmanager
def replacing(path: Path, mode: int | None = None) -> Iterator[Path]:
    """A temp path beside `path` for the caller to fill; on a clean exit it becomes `path`
    whole (fsync, rename, fsync of the folder), on any error it is removed.

    `mode`: the new file's permission bits; by default the old file's, else 0o644.
    """
    if mode is None:
        try:
            mode = path.stat().st_mode & 0o777
        except OSError:
            mode = 0o644
    tmp = _temp_for(path)
    try:
        yield tmp
        os.chmod(tmp, mode)
        fd = os.open(tmp, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    dir_fd = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(dir_fd)
    finally:
        os.close(dir_fd)


def write_atomic(path: Path, data: bytes | Iterable[bytes], mode: int | None = None) -> None:
    """`data` (bytes, or parts written one after the other) at `path`, whole or not at all.
    The folder must exist; `mode` as in `replacing`."""
    parts = [data] if isinstance(data, (bytes, bytearray, memoryview)) else data
    with replacing(path, mode) as tmp:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "wb") as f:
            for part in parts:
                f.write(part)


def remove_orphans(path: Path) -> None:
    """Remove the temp files of `path` whose writing process is gone (killed mid-write)."""
    prefix = f".{path.name}."
    for tmp in path.parent.glob(f".{path.name}.*.tmp"):
        pid = tmp.name[len(prefix) : -len(".tmp")].split(".", 1)[0]
        if pid.isdigit() and int(pid) != os.getpid() and not _alive(int(pid)):
            tmp.unlink(missing_ok=True)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def private_folder(path: Path) -> Path:
    """`path` made a folder, each missing folder on the way made 0700 (Python's own
    `mkdir(parents=True)` makes the missing parents as the umask has them: a state folder
    first made by its index or Redis folder came out 0755)."""
    missing = []
    at = path
    while not at.exists():
        missing.append(at)
        if at.parent == at:
            break
        at = at.parent
    for folder in reversed(missing):
        folder.mkdir(mode=0o700, exist_ok=True)
    return path


def read_file(path: Path) -> bytes | None:
    """A regular file's bytes, or None when it is missing, a symlink or unreadable."""
    try:
        if path.is_symlink() or not path.is_file():
            return None
        return path.read_bytes()
    except OSError:
        return None


def prune_empty_folders(folder: Path, root: Path) -> None:
    """Remove `folder` and its parents while they are empty, never `root`: Git keeps no empty folders,
    and one left behind would block a later note of the same name."""
    while folder != root and root in folder.parents:
        try:
            folder.rmdir()
        except OSError:
            return
        folder = folder.parent


def storage_error_text(cause: str, outcome: str) -> str:
    """The one wording of a failed disk or Git operation: its cause (never a file path) and
    what became of the operation ("nothing was committed")."""
    return f"storage error: {cause}; {outcome}. Retry once the cause is fixed"
