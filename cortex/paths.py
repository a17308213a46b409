"""The rules for what a client may name and send: note paths and note content.

Pure functions; each refusal raises BadInput with a one-line reason that the
tool layer returns as an MCP tool error. Nothing is changed on a refusal.
"""

from __future__ import annotations

import re
from typing import Callable, Mapping

from .errors import BadInput

# 1 MiB: generous for a note, small enough that one call cannot bloat the repo.
MAX_CONTENT_BYTES = 1_048_576
MAX_PATH_CHARS = 200

# ASCII on purpose: Unicode file names invite confusables (Cyrillic "а" vs "a")
# and normalisation tricks (NFC vs NFD), and differ across file systems.
_SEGMENT = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_ .-]*$")
GENERATED = frozenset({"INDEX.md"})


def check_text(value: str, what: str = "content") -> str:
    """Refuse NUL bytes and lone surrogates (text that is not valid UTF-8)."""
    if not isinstance(value, str):
        raise BadInput(f"{what} must be a string")
    if "\x00" in value:
        raise BadInput(f"{what} contains a NUL byte")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise BadInput(f"{what} is not valid UTF-8 (it contains a lone surrogate)") from None
    return value


def check_content(content: str) -> bytes:
    """The bytes to store for `content`, or BadInput."""
    check_text(content)
    data = content.encode("utf-8")
    if len(data) > MAX_CONTENT_BYTES:
        raise BadInput(f"content is {len(data)} bytes; the limit is {MAX_CONTENT_BYTES}")
    return data


def check_path(path: str, *, for_write: bool = True) -> str:
    """A canonical note path, or BadInput.

    Reads accept any existing file except under `.git/`; writes accept only
    `.md` files of safe segments outside `.cortex/`, and never `INDEX.md`.
    """
    check_text(path, "path")
    if not path or not path.strip():
        raise BadInput("path is empty")
    if len(path) > MAX_PATH_CHARS:
        raise BadInput(f"path is longer than {MAX_PATH_CHARS} characters")
    if path.startswith("/") or path.startswith("\\") or re.match(r"^[A-Za-z]:", path):
        raise BadInput("path must be relative to the brain (no leading / or drive)")
    if "\\" in path:
        raise BadInput("path must use / as the separator")
    segments = path.split("/")
    if any(s in ("", ".", "..") for s in segments):
        raise BadInput("path has an empty, '.' or '..' segment")
    if segments[0] == ".git":
        raise BadInput("paths under .git/ are not notes")
    if any(ord(c) < 32 or ord(c) == 127 for c in path):
        raise BadInput("path contains a control character")
    if not for_write:
        return path
    if segments[0] == ".cortex":
        raise BadInput(".cortex/ holds machine files and is not writable by tools")
    if path in GENERATED:
        raise BadInput(f"{path} is generated on every write and cannot be written")
    for seg in segments:
        if not _SEGMENT.match(seg) or seg.endswith(" ") or seg.endswith("."):
            raise BadInput(
                f"path segment {seg!r} is not allowed: use letters, digits, '_', '-', '.', "
                "spaces inside, ASCII only")
    if not path.endswith(".md"):
        raise BadInput("notes are Markdown: the path must end in .md")
    return path


def in_scope(path: str, scopes: list[str] | None) -> bool:
    """A scope is an exact path or a folder prefix ending with '/'; None means everything."""
    if scopes is None:
        return True
    return any(path == s or (s.endswith("/") and path.startswith(s)) for s in scopes)


def collision(changes: Mapping[str, bytes | None], is_file: Callable[[str], bool],
              file_under: Callable[[str], str | None]) -> str | None:
    """Why `changes` would turn a note into a folder or a folder into a note, or None.

    Git lets one commit replace the file `notes/v.md` with a folder of that name
    (and the reverse), so a write naming only `notes/v.md/c.md` would delete a
    note nobody named. Every such change is refused, even when the same change
    also deletes the other side: a write deletes only what it names, and a
    working tree cannot hold both while the switch happens.
    `is_file(p)`: the base tree has a file at p; `file_under(p)`: a file inside
    the base tree's folder p, or None when p is not a folder.
    """
    added = sorted(p for p, data in changes.items() if data is not None)
    adding = set(added)
    for path in added:
        parts = path.split("/")
        for i in range(1, len(parts)):
            prefix = "/".join(parts[:i])
            if prefix in adding or is_file(prefix):
                return (f"refused: {path} would turn the note {prefix} into a folder and delete it; "
                        "nothing was committed. Choose another path")
        inside = file_under(path)
        if inside is not None:
            return (f"refused: {path} is a folder holding {inside}; a note there would delete "
                    "the folder's notes; nothing was committed. Choose another path")
    return None
