"""Working state: what the owner is in the middle of, kept as Markdown in `working/`.

One file a project, `working/<project>.md` (items with no project: `working/general.md`),
with one list line an item:

    - [ ] question: Which cone does the new clay body need? · opened 2026-12-01 ^w3ab7
    - [x] focus: Fire the glaze tests · opened 2026-11-20 · filed 2026-12-02 → notes/glaze.md ^wq1e0
    - [-] decision: Buy a second kiln · opened 2026-11-18 · dropped 2026-12-02: no room ^w9zz2

The box says the state (`[ ]` open, `[x]` filed, or done when ticked by hand with no
target, `[-]` dropped); then the kind, the text, and fields after ` · `: the day it was
opened, and when it was filed (and into which note), dropped (and why) or last touched.
The `^id` at the end is an Obsidian block id: Obsidian links to it and shows it quietly,
and Cortex finds the item by it, so it never changes. A line written by hand with none
gets an id from its project and text, written onto the line the first time Cortex
changes that item. No two lines share an id: a second line of the same text derives
another, and a line repeating an earlier line's `^id` (a copy) is addressed as
`<id>~2`, its `^id` left as written. A hand-written line needs no kind (a `?` at its end makes it a
question, else a focus) and no date (its age then comes from Git), and may be any task
line Obsidian shows as one (`1. [ ]`, `-\t[ ]`, `> - [ ]`): a change rewrites what
follows its list marker.

Everything here is pure: text in, text out. An item is never removed from its file;
filing and dropping rewrite its line in place.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import hashlib
import re
from collections.abc import Callable

from cortex.errors import BadInput
from cortex.notes.note import find_section, split_frontmatter
from cortex.notes.structure import line_spans, parser

__all__ = [
    "AGED_DAYS",
    "FILED_UNDER",
    "FOLDER",
    "GENERAL",
    "KINDS",
    "MAX_HEADING_CHARS",
    "MAX_TEXT_CHARS",
    "SEP",
    "STATES",
    "Item",
    "WorkingError",
    "add",
    "change",
    "check_heading",
    "check_item_text",
    "check_project",
    "derived_id",
    "filed_line",
    "file_into",
    "in_working",
    "is_aged",
    "item_under",
    "new_file",
    "parse_items",
    "project_of",
    "project_path",
    "render",
]

FOLDER = "working/"
GENERAL = "general"  # the file of items with no project
KINDS = ("focus", "decision", "question", "handoff", "todo")
# The heading `file` writes an item under in its target note, unless it is given one.
FILED_UNDER = {
    "focus": "Focus",
    "decision": "Decisions",
    "question": "Questions",
    "handoff": "Handoffs",
    "todo": "To do",
}
MAX_HEADING_CHARS = 200
AGED_DAYS = 14  # an open item whose line no commit changed for longer reads as aged
MAX_TEXT_CHARS = 500
STATES = ("open", "filed", "done", "dropped")

_PROJECT = re.compile(r"^[^\W_][\w.-]{0,63}$")
# A task line: its lead (indentation, block-quote markers, the list markers of the items it
# opens, the last followed by 1-4 spaces or a tab, as CommonMark reads it), the box, the body.
_MARKER = r"(?:[-*+]|[0-9]{1,9}[.)])"
_LINE = re.compile(
    rf"^(?P<lead>(?:[ \t]|>|{_MARKER}(?=[ \t]))*?{_MARKER}(?: {{1,4}}|\t))"
    r"\[(?P<box>[ xX-])\][ \t](?P<body>.*?)(?: \^(?P<id>[A-Za-z0-9-]+))?\s*$"
)
_KIND = re.compile(r"^(?P<kind>[a-z]+): (?P<text>.*)$")
_DATED = re.compile(r"opened (?P<opened>\d{4}-\d{2}-\d{2})|touched (?P<touched>\d{4}-\d{2}-\d{2})")
# The closing field is the line's last: a reason or a note path runs to its end.
_CLOSING = re.compile(
    r"filed (?P<filed>\d{4}-\d{2}-\d{2}) → (?P<into>.+)|dropped (?P<dropped>\d{4}-\d{2}-\d{2}):(?: (?P<reason>.*))?"
)
SEP = " · "


class WorkingError(BadInput):
    """A working-state request that cannot be applied, in one line (a tool's one-line refusal,
    not a traceback: `brain_handoff(project="../../etc/passwd")` said only "Error executing tool")."""


@dataclasses.dataclass(frozen=True)
class Item:
    id: str  # its address: the line's ^id, one derived from its text, or a repeated ^id's `<id>~n`
    kind: str
    text: str
    project: str
    state: str  # open, filed, done (ticked by hand), dropped
    line: int  # its line in the file, from 0, as CommonMark cuts lines
    opened: dt.date | None = None
    touched: dt.date | None = None
    closed: dt.date | None = None
    into: str | None = None  # filed: the note it went into
    reason: str | None = None  # dropped: why
    written_id: bool = True  # False: the id is derived, not yet on the line
    git_line: int = 0  # its line as Git's blame counts lines (at \n only)

    @property
    def open(self) -> bool:
        return self.state == "open"

    @property
    def block(self) -> str:
        """The ^id its line carries (or will): its id without a repeat's `~n`."""
        return self.id.partition("~")[0]


def check_project(project: str | None) -> str:
    """A project key as files name it (lower case), or WorkingError."""
    if project is None or not project.strip():
        return GENERAL
    key = project.strip().lower()
    if not _PROJECT.match(key):
        raise WorkingError(
            "project must be 1-64 letters, digits, '.', '_' or '-', starting with a letter or digit, "
            f"not {project[:70]!r}"
        )
    return key


def in_working(path: str) -> bool:
    """Whether `path` is working state (intentions, not facts): search and ask leave it out."""
    return path.startswith(FOLDER)


def project_path(project: str | None) -> str:
    return f"{FOLDER}{check_project(project)}.md"


def project_of(path: str) -> str | None:
    """The project a working file holds, or None for a path that is not one."""
    if not path.startswith(FOLDER) or not path.endswith(".md") or "/" in path[len(FOLDER) :]:
        return None
    return path[len(FOLDER) : -3].lower()


def derived_id(project: str, text: str, occurrence: int = 1) -> str:
    """The id of a hand-written line that carries none: stable while its text is. A second
    line of the same text (or one whose id another line already carries) takes the next
    `occurrence`, so two lines never share an id."""
    said = " ".join(text.split()) + (f"\n{occurrence}" if occurrence > 1 else "")
    return "h" + hashlib.sha256(f"{project}\n{said}".encode()).hexdigest()[:5]


def _list_lines(text: str, spans: list[tuple[int, int]]) -> list[int]:
    """The first line of each list item of `text`'s body, counted in `spans` (the text's
    lines as CommonMark cuts them), as CommonMark reads it (so a line in frontmatter, a
    code fence or an HTML comment is no item)."""
    _, offset = split_frontmatter(text)
    first = sum(1 for start, _ in spans if start < offset)
    found = {first + t.map[0] for t in parser().parse(text[offset:]) if t.type == "list_item_open" and t.map}
    return sorted(n for n in found if n < len(spans))


def parse_items(text: str, project: str) -> list[Item]:
    """Every item of a working file, in file order.

    Lines are cut where CommonMark cuts them (``\\n``, ``\\r\\n``, a lone ``\\r``) and only
    there, for markdown-it's line numbers, this and `change` alike: Python's splitlines also
    cuts at U+2028, NEL or a form feed, which would shift every item below one."""
    spans = line_spans(text)
    items, heads = [], []
    for n in _list_lines(text, spans):
        start, end = spans[n]
        m = _LINE.match(text[start:end])
        if m is None:
            continue
        head, fields = _fields(m.group("body").split(SEP))
        k = _KIND.match(head)
        if k and k.group("kind") in KINDS:
            kind, said = k.group("kind"), k.group("text").strip()
        else:
            kind, said = ("question" if head.endswith("?") else "focus"), head
        box = m.group("box").lower()
        state = "open" if box == " " else "dropped" if box == "-" else "filed" if fields.get("into") else "done"
        heads.append(head)
        items.append(
            Item(
                id=m.group("id") or "",  # given by _ids below
                kind=kind,
                text=said,
                project=project,
                state=state,
                line=n,
                git_line=text.count("\n", 0, start),
                opened=_day(fields.get("opened")),
                touched=_day(fields.get("touched")),
                closed=_day(fields.get("filed") or fields.get("dropped")),
                into=fields.get("into"),
                reason=fields.get("reason"),
                written_id=m.group("id") is not None,
            )
        )
    return [
        dataclasses.replace(item, id=item_id) for item, item_id in zip(items, _ids(project, items, heads), strict=True)
    ]


def _ids(project: str, items: list[Item], heads: list[str]) -> list[str]:
    """The id of each item, in file order, every one its own: the line's ^id (Cortex never
    changes it; a later line repeating it is addressed as `<id>~2`, `~3`, …), else one
    derived from its head (kind and text) that no other line's id is."""
    written = {i.id for i in items if i.written_id}
    seen: dict[str, int] = {}
    out = []
    for item, head in zip(items, heads, strict=True):
        if item.written_id:
            seen[item.id] = seen.get(item.id, 0) + 1
            out.append(item.id if seen[item.id] == 1 else f"{item.id}~{seen[item.id]}")
            continue
        k = 1
        while (item_id := derived_id(project, head, k)) in written or item_id in seen:
            k += 1
        seen[item_id] = 1
        out.append(item_id)
    return out


def _fields(parts: list[str]) -> tuple[str, dict[str, str]]:
    """An item's head (kind and text) and its fields, from its body cut at ` · `.

    The fields are the shortest tail of parts that reads as fields: dated ones, then at most
    one closing field (filed or dropped) that runs to the end, so a drop's reason holding
    `· opened 1999-01-01` stays its reason and never becomes the item's date. A part that
    reads as no field before them is the owner's text."""
    valid = [False] * len(parts) + [True]
    for k in range(len(parts) - 1, 0, -1):
        part = parts[k].strip()
        valid[k] = bool(_CLOSING.fullmatch(part)) or (bool(_DATED.fullmatch(part)) and valid[k + 1])
    first = next(k for k in range(1, len(parts) + 1) if valid[k])
    fields: dict[str, str] = {}
    for k in range(first, len(parts)):
        dated = _DATED.fullmatch(parts[k].strip())
        found = dated or _CLOSING.fullmatch(SEP.join(parts[k:]).strip())
        fields.update({name: v for name, v in found.groupdict().items() if v is not None})  # type: ignore[union-attr]
        if not dated:
            break
    return SEP.join(parts[:first]).strip(), fields


def _day(value: str | None) -> dt.date | None:
    if value is None:
        return None
    try:
        return dt.date.fromisoformat(value)
    except ValueError:
        return None


def render(item: Item) -> str:
    """The item's line."""
    return "- " + _task(item)


def _task(item: Item) -> str:
    """The item's line after its list marker: the box, the fields, the id."""
    box = {"open": " ", "dropped": "-"}.get(item.state, "x")
    fields = [f"{item.kind}: {item.text}"]
    if item.opened:
        fields.append(f"opened {item.opened.isoformat()}")
    if item.touched:
        fields.append(f"touched {item.touched.isoformat()}")
    if item.state == "filed" and item.closed and item.into:
        fields.append(f"filed {item.closed.isoformat()} → {item.into}")
    if item.state == "dropped" and item.closed:
        fields.append(f"dropped {item.closed.isoformat()}: {item.reason or ''}".rstrip())
    return f"[{box}] {SEP.join(fields)} ^{item.block}"


def check_item_text(kind: str, text: str) -> tuple[str, str]:
    if kind not in KINDS:
        raise WorkingError(f"kind must be one of {', '.join(KINDS)}, not {str(kind)[:40]!r}")
    said = " ".join(str(text).split())
    if not said:
        raise WorkingError("text is empty")
    if len(said) > MAX_TEXT_CHARS:
        raise WorkingError(f"text is longer than {MAX_TEXT_CHARS} characters")
    if re.search(r"\^[A-Za-z0-9-]+$", said):
        raise WorkingError("text must not end in a block id (^…): Cortex gives each item its own")
    if SEP.strip() in said:
        raise WorkingError(f"text must not hold {SEP.strip()!r}: it separates an item's fields")
    return kind, said


def new_file(project: str) -> str:
    return (
        f"# Working: {project}\n\n"
        "What is open in this project, one item a line: a box, the kind, the text, its dates, "
        "an id. Tick or edit a line in any editor; Cortex reads it back.\n\n"
    )


def add(text: str | None, project: str, kind: str, said: str, day: dt.date, item_id: str) -> str:
    """`text` (None: no file yet) with a new open item at its end, where CommonMark reads
    it as an item, every byte before it kept; WorkingError when nothing Cortex may add
    before it makes it one (no such file is known: the check is there so that no add is
    acknowledged and then hidden).

    A file can end inside a block that would take the new line in: an open `<details>`
    (a blank line ends it), an unclosed code fence, HTML comment or `<pre>` (only its
    closing line ends it). Such a block runs to the file's end anyway, so closing it
    there changes nothing it holds; the item goes after."""
    kind, said = check_item_text(kind, said)
    base = new_file(project) if text is None else text
    eol = "\r\n" if "\r\n" in base else "\n"
    if base and not base.endswith(("\n", "\r")):
        base += eol
    line = render(Item(item_id, kind, said, project, "open", 0, opened=day))
    before = [i.id for i in parse_items(base, project)]
    closer = _closer(base)
    for between in ("", eol, *([closer + eol] if closer else [])):
        new = base + between + line + eol
        if [i.id for i in parse_items(new, project)] == [*before, item_id]:
            return new
    raise WorkingError(
        f"{project_path(project)} ends inside a block that would hide a new item; end that block by hand, then add"
    )


# The raw HTML blocks that only a line holding their end tag or marker closes (CommonMark's
# kinds 1 to 5; the others end at a blank line).
_HTML_ENDS = [
    (re.compile(r"<(script|pre|style|textarea)(?=[\s>]|$)", re.IGNORECASE), None),
    (re.compile(r"<!--"), "-->"),
    (re.compile(r"<\?"), "?>"),
    (re.compile(r"<!\[CDATA\["), "]]>"),
    (re.compile(r"<![A-Za-z]"), ">"),
]


def _closer(text: str) -> str | None:
    """The line that closes the code fence or raw HTML block `text` ends inside, if any."""
    _, offset = split_frontmatter(text)
    blocks = [t for t in parser().parse(text[offset:]) if t.level == 0]
    last = blocks[-1] if blocks else None
    if last is not None and last.type == "fence":
        return last.markup
    if last is not None and last.type == "html_block":
        for start, end in _HTML_ENDS:
            m = start.match(last.content.lstrip(" "))
            if m:
                return end or f"</{m.group(1).lower()}>"
    return None


def change(text: str, item_id: str, project: str, edit: Callable[[Item], Item]) -> tuple[str, Item]:
    """`text` with item `item_id`'s line rewritten for `edit(item)` after its lead (a
    `1.`, a tab or a `> ` stays as the owner wrote it): the rest of the file byte for
    byte, the id kept (written onto a hand-written line that had none)."""
    items = [i for i in parse_items(text, project) if i.id == item_id]
    if not items:
        raise WorkingError(f"no item {item_id} in {project_path(project)}")
    old = items[0]
    new = edit(old)
    start, end = line_spans(text)[old.line]
    lead = _LINE.match(text[start:end]).group("lead")  # type: ignore[union-attr]
    return text[:start] + lead + _task(new) + text[end:], new


def is_aged(item: Item, changed: dt.date | None, today: dt.date) -> bool:
    """Open, and no commit changed its line for more than AGED_DAYS (`changed`: that day)."""
    days = [d for d in (changed, item.touched, item.opened) if d is not None]
    return item.open and bool(days) and (today - max(days)).days > AGED_DAYS


def filed_line(item: Item, source: str, day: dt.date) -> str:
    """The line `file` writes into the target note: a todo stays a task to tick there."""
    box = "[ ] " if item.kind == "todo" else ""
    return f"- {box}{item.text} (filed from {source} on {day.isoformat()})"


def check_heading(heading: str) -> str:
    """A heading `file` may write under: one line of text, without its `#`s."""
    said = " ".join(str(heading).split()).lstrip("#").strip()
    if not said:
        raise WorkingError("heading is empty")
    if len(said) > MAX_HEADING_CHARS:
        raise WorkingError(f"heading is longer than {MAX_HEADING_CHARS} characters")
    return said


def file_into(text: str, heading: str, line: str) -> str:
    """`text` (a note) with `line` as a list item at the end of its section `heading`, or,
    when it has no such heading, under a new `## heading` at its end; every other byte kept
    (the note's own line ending used). WorkingError when nothing Cortex may add makes the
    line an item of that section (the note ends inside a block that would take it in,
    and that block cannot be closed before it)."""
    heading = check_heading(heading)
    eol = "\r\n" if "\r\n" in text else "\n"
    _, offset = split_frontmatter(text)
    found = find_section(text, offset, heading)
    tries: list[tuple[str, int]] = []
    if found is not None:
        start, end = found
        spans = [(a, b) for a, b in line_spans(text) if start <= a < end and text[a:b].strip()]
        at = spans[-1][1] if spans else end  # the end of the section's last line of text
        gap = eol if _ITEM_START.match(text[spans[-1][0] : at]) and len(spans) > 1 else eol + eol
        tries.append((text[:at] + gap + line + text[at:], at + len(gap)))
    else:
        base = text if not text or text.endswith(("\n", "\r")) else text + eol
        lead = eol if base.strip() else ""
        closer = _closer(base)
        for between in ("", *([closer + eol] if closer else [])):
            new = base + between + lead + f"## {heading}" + eol + eol
            tries.append((new + line + eol, len(new)))
    for new, at in tries:
        if item_under(new, heading, at):
            return new
    raise WorkingError(
        f"the note ends inside a block (a code fence, an HTML block or a comment) that would hide the item "
        f"under {heading!r}; end that block by hand, then file"
    )


_ITEM_START = re.compile(rf"^(?:[ \t]|>)*{_MARKER}(?:[ \t]|$)")


def item_under(text: str, heading: str, at: int) -> bool:
    """Whether a list item of `text` starts at offset `at`, inside the section `heading`."""
    _, offset = split_frontmatter(text)
    found = find_section(text, offset, heading)
    if found is None or not found[0] <= at < found[1]:
        return False
    spans = line_spans(text)
    n = next((i for i, (a, _) in enumerate(spans) if a == at), None)
    return n is not None and n in _list_lines(text, spans)
