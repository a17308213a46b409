"""The rules for what a client may name and send: note paths and note content.

Pure functions; each refusal raises BadInput with a one-line reason that the
tool layer returns as an MCP tool error. Nothing is changed on a refusal.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Mapping

from cortex.errors import BadInput

__all__ = [
    "GENERATED",
    "MAX_CONTENT_BYTES",
    "MAX_PATH_CHARS",
    "check_content",
    "check_path",
    "check_text",
    "collision",
    "equivalent",
    "in_scope",
    "invisible",
    "is_note_path",
    "same_name",
]

# 1 MiB: generous for a note, small enough that one call cannot bloat the repo.
MAX_CONTENT_BYTES = 1_048_576
MAX_PATH_CHARS = 200

GENERATED = frozenset({"INDEX.md"})


def is_note_path(path: str) -> bool:
    """Notes are Markdown files outside the machine folder; INDEX.md is generated."""
    return path.endswith(".md") and path != "INDEX.md" and not path.startswith(".cortex/")


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


# Characters Windows forbids in a file name: a brain must check out on every common
# file system, and `\\` would also be a second separator.
_WINDOWS_FORBIDDEN = set('<>:"|?*\\')
# Bidirectional-text controls: they make a name display as something else
# (`evil\u202egnp.md` shows as `evilmd.png`).
_BIDI = set("\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")
# Characters that draw as a folder separator, and invisible ones: `notes\u2215x.md` shows as
# `notes/x.md` but is one file at the top; `x\u200b.md` shows as `x.md`. (Zero-width
# joiners stay allowed: Persian and Indic names need them.)
_LOOKALIKE_SLASH = set("\u2044\u2215\u29f8\uff0f")
_INVISIBLE = set("\u200b\u2060\ufeff")
# Windows' reserved device names: `con.md` or `NUL.txt` cannot be made on Windows at all.
_DEVICES = frozenset(
    ["CON", "PRN", "AUX", "NUL"] + [f"{p}{n}" for p in ("COM", "LPT") for n in "0123456789\u00b9\u00b2\u00b3"]
)
# Code points that draw nothing but are not format characters (Unicode's
# Other_Default_Ignorable_Code_Point, and the Braille blank, which draws as a space).
_BLANK_LETTERS = set("\u034f\u115f\u1160\u17b4\u17b5\u3164\uffa0\u2800")
_JOINERS = "\u200c\u200d"  # ZWNJ and ZWJ: Persian and Indic words need them, between letters


def invisible(seg: str) -> str | None:
    """The first code point of `seg` that shows nothing where it stands, or None.

    Unicode's default-ignorable code points (every format character, the variation
    selectors, the Hangul fillers, the tag characters and the rest of
    Other_Default_Ignorable_Code_Point) and the Braille blank; a ZWNJ or ZWJ only counts
    outside a word (Persian and Indic names write it between two letters).
    """
    for i, c in enumerate(seg):
        o = ord(c)
        if c in _JOINERS:
            if 0 < i < len(seg) - 1 and seg[i - 1].isalpha() and seg[i + 1].isalpha():
                continue
            return c
        if (
            unicodedata.category(c) == "Cf"
            or c in _BLANK_LETTERS
            or 0xFE00 <= o <= 0xFE0F
            or 0x180B <= o <= 0x180F
            or 0xFFF0 <= o <= 0xFFF8
            or 0xE0000 <= o <= 0xE0FFF
        ):
            return c
    return None


def tool_readable(path: str) -> str:
    """`path` for a tool's read, or BadInput: `.cortex/` holds Cortex's own files (guest policies
    with their secret hashes, receipts, tombstones), which no tool reads; the owner's console
    shows a tombstone or a receipt it links to."""
    if path.split("/", 1)[0] == ".cortex":
        raise BadInput(".cortex/ holds Cortex's own files (guest policies, receipts), which no tool reads")
    return path


def check_path(path: str, *, for_write: bool = True) -> str:
    """A note path as given, or BadInput saying in one line what is wrong with it.

    Any name Git and the common file systems accept is a note's name: accents, CJK,
    apostrophes, commas, `+`, `&`, parentheses, spaces inside. Refused, because they
    are dangerous or do not travel: `..` and absolute paths, `.git/` (and `.cortex/` for
    writes; `tool_readable` for reads), control characters, bidi controls, and
    for writes a segment with any white space or a dot at its start or end, any code point
    that shows nothing (`invisible`), a Windows device name (`con.md`, `COM1.txt`, any
    case), and the characters Windows forbids (`<>:"|?*\\`). Reads accept any existing file
    except under `.git/`; writes only `.md` files, never INDEX.md. One rule
    for tools, the watcher, guests and the console.
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
    if any(unicodedata.category(c) == "Cc" for c in path):
        raise BadInput("path contains a control character")
    if any(c in _BIDI for c in path):
        raise BadInput("path contains a bidirectional-text control, which would make it display as another name")
    if any(c in _LOOKALIKE_SLASH for c in path):
        raise BadInput("path contains a character that looks like / but is not a separator; use /")
    if any(c in _INVISIBLE for c in path):
        raise BadInput("path contains an invisible character (zero-width space, word joiner or BOM)")
    if not for_write:
        return path
    if segments[0] == ".cortex":
        raise BadInput(".cortex/ holds machine files and is not writable by tools")
    if path in GENERATED:
        raise BadInput(f"{path} is generated on every write and cannot be written")
    for seg in segments:
        if seg != seg.strip() or seg.startswith(".") or seg.endswith("."):
            raise BadInput(
                f"path segment {seg!r} starts or ends with a space or a dot, which Windows and macOS tools drop or hide"
            )
        hidden = invisible(seg)
        if hidden is not None:
            raise BadInput(
                f"path segment {seg!r} contains U+{ord(hidden):04X} ({unicodedata.name(hidden, 'unnamed')}), "
                "which shows nothing: the name would look like another one"
            )
        if seg.split(".", 1)[0].rstrip().upper() in _DEVICES:
            raise BadInput(f"path segment {seg!r} is a Windows device name, which Windows cannot make into a file")
        bad = sorted(set(seg) & _WINDOWS_FORBIDDEN)
        if bad:
            raise BadInput(f"path segment {seg!r} contains {' '.join(bad)}, which Windows does not allow in names")
        if len(seg.encode("utf-8")) > 255:
            raise BadInput(f"path segment {seg[:40]!r}… is longer than 255 bytes, the limit of most file systems")
    if not path.endswith(".md"):
        raise BadInput("notes are Markdown: the path must end in .md")
    return path


# Alphabets whose letters pass for one another (Latin a, Cyrillic а, Greek α): a word that
# mixes them is a lookalike. A word of one alphabet beside a word of another is not.
_LOOKALIKE_SCRIPTS = frozenset({"LATIN", "CYRILLIC", "GREEK", "ARMENIAN", "CHEROKEE", "COPTIC"})
_WORDS = re.compile(r"[^\W\d_]+")


def mixed_scripts(path: str) -> str | None:
    """One line naming the first word of `path` that mixes alphabets ("pаssword" is Latin with
    a Cyrillic а), or None. Shown beside a guest's proposal: the path may pass for another."""
    for word in _WORDS.findall(unicodedata.normalize("NFC", path)):
        letters: dict[str, list[str]] = {}
        for ch in word:
            script = unicodedata.name(ch, "").split(" ")[0]
            if script in _LOOKALIKE_SCRIPTS:
                letters.setdefault(script, []).append(ch)
        if len(letters) > 1:
            base, *others = sorted(letters, key=lambda k: -len(letters[k]))
            odd = "; ".join(f"{s.title()} {' '.join(dict.fromkeys(letters[s]))}" for s in others)
            return f"the name {word!r} is {base.title()} with letters of another alphabet ({odd}): a lookalike"
    return None


def same_name(a: str, b: str) -> bool:
    """Whether two names are one name on some file system: equal up to Unicode
    normalisation (macOS stores NFD) or letter case (Windows, macOS)."""
    return unicodedata.normalize("NFC", a).casefold() == unicodedata.normalize("NFC", b).casefold()


def equivalent(a: str, b: str) -> bool:
    """Whether two names are canonically equivalent (NFC == NFC): the same text, stored differently."""
    return unicodedata.normalize("NFC", a) == unicodedata.normalize("NFC", b)


def in_scope(path: str, scopes: list[str] | None) -> bool:
    """A scope is an exact path or a folder prefix ending with '/'; None means everything."""
    if scopes is None:
        return True
    return any(path == s or (s.endswith("/") and path.startswith(s)) for s in scopes)


def collision(
    changes: Mapping[str, bytes | None],
    is_file: Callable[[str], bool],
    file_under: Callable[[str], str | None],
    twin: Callable[[str], str | None] = lambda path: None,
) -> str | None:
    """Why `changes` would turn a note into a folder or a folder into a note, or None.

    Git lets one commit replace the file `notes/v.md` with a folder of that name
    (and the reverse), so a write naming only `notes/v.md/c.md` would delete a
    note nobody named. Every such change is refused, even when the same change
    also deletes the other side: a write deletes only what it names, and a
    working tree cannot hold both while the switch happens.
    `is_file(p)`: the base tree has a file at p; `file_under(p)`: a file inside
    the base tree's folder p, or None when p is not a folder; `twin(p)`: the existing
    spelling of as much of p as exists when a name on it (a folder on the way, or the note)
    differs only by letter case or Unicode normalisation (on macOS and Windows the two would
    be one folder or file, so both must never be created).
    """
    added = sorted(p for p, data in changes.items() if data is not None)
    adding = set(added)
    for path in added:
        parts = path.split("/")
        for i in range(1, len(parts)):
            prefix = "/".join(parts[:i])
            if prefix in adding or is_file(prefix):
                return (
                    f"refused: {path} would turn the note {prefix} into a folder and delete it; "
                    "nothing was committed. Choose another path"
                )
        inside = file_under(path)
        if inside is not None:
            return (
                f"refused: {path} is a folder holding {inside}; a note there would delete "
                "the folder's notes; nothing was committed. Choose another path"
            )
        other = twin(path)
        if other is not None and other.count("/") < path.count("/"):
            # A folder on the way: both spellings would be one folder on macOS and Windows.
            mine = "/".join(path.split("/")[: other.count("/") + 1])
            return (
                f"refused: the folder {mine} of {path} differs from the existing folder {other} only by "
                f"letter case or Unicode normalisation, and would be the same folder on macOS and Windows; "
                f"nothing was committed. Use {other}{path[len(mine) :]}"
            )
        elif other is not None and changes.get(other, b"") is not None:
            return (
                f"refused: {path} differs from the existing {other} only by letter case or Unicode "
                f"normalisation, and would be the same file on macOS and Windows; nothing was committed. "
                f"Use {other}"
            )
    return None
