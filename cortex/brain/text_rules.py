"""The rules a write follows on a note's text: a change keeps the note's own line ending
and every byte nobody asked to change, an edit's `find` must occur exactly once, and no
write grows a note past the content cap.

Shared by the brain's writes and the owner's acceptance of a guest's proposal.
"""

from __future__ import annotations

from cortex.errors import BadInput, Conflict
from cortex.notes.paths import MAX_CONTENT_BYTES

__all__ = ["append_text", "as_eol", "edit_text", "line_ending", "occurrences", "strict_text", "within_cap"]


def occurrences(text: str, find: str) -> int:
    """How many times `find` occurs in `text`, overlapping ones counted ("ab ab" in "ab ab ab": 2)."""
    count, at = 0, text.find(find)
    while at >= 0:
        count += 1
        at = text.find(find, at + 1)
    return count


def within_cap(data: bytes, path: str, mode: str) -> bytes:
    """`data`, or BadInput when a note grown by `mode` would pass the content cap."""
    if len(data) > MAX_CONTENT_BYTES:
        raise BadInput(
            f"{path} would be {len(data):,} bytes after this {mode}; "
            f"the limit is {MAX_CONTENT_BYTES:,}; nothing was written"
        )
    return data


def line_ending(text: str) -> str:
    """The file's own line ending: CRLF when its first line break is one, else LF."""
    at = text.find("\n")
    return "\r\n" if at > 0 and text[at - 1] == "\r" else "\n"


def as_eol(text: str, eol: str) -> str:
    """`text` with every line break written as `eol`."""
    text = text.replace("\r\n", "\n")
    return text if eol == "\n" else text.replace("\n", eol)


def append_text(existing: str, addition: str) -> str:
    """`addition` after `existing`, on a line of its own, ending with a line break,
    in the file's own line ending (a CRLF note stays CRLF)."""
    eol = line_ending(existing)
    addition = as_eol(addition, eol)
    if existing and not existing.endswith("\n"):
        existing += eol
    if not addition.endswith(eol):
        addition += eol
    return existing + addition


def edit_text(existing: str, find: str, content: str, path: str) -> str:
    """`existing` with the one occurrence of `find` replaced by `content`; Conflict unless
    `find` occurs exactly once."""
    # A client writes "\n"; in a CRLF note the same lines end in "\r\n". Match
    # and write in the note's own line ending, so no bare LF creeps in.
    eol = line_ending(existing)
    old, new = (find, content) if eol == "\n" else (as_eol(find, eol), as_eol(content, eol))
    count = occurrences(existing, old)
    if count != 1:
        raise Conflict(f"find occurs {count} times in {path}; it must occur exactly once")
    at = existing.index(old)
    # A splice by position: `$` and `\` in content are literal.
    return existing[:at] + new + existing[at + len(old) :]


def strict_text(data: bytes | None, path: str) -> str:
    """A note's text for a change that keeps the rest of its bytes; BadInput when it is not
    UTF-8 (decoding with replacement would rewrite bytes nobody asked to change)."""
    try:
        return (data or b"").decode("utf-8")
    except UnicodeDecodeError:
        raise BadInput(
            f"{path} is not valid UTF-8: appending or editing would change bytes you did not "
            "touch; replace it whole, or edit it by hand"
        ) from None
