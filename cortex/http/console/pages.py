"""What each console page shows, gathered from the brain, the queue and the guest book.

Plain synchronous functions returning dicts for the templates, with no HTTP in
them (cortex.http.console.routes calls them in a thread). Text that came from notes, guests or
commit messages is redacted here; escaping is the templates' job (autoescape).
"""

from __future__ import annotations

import datetime as dt
import posixpath
from collections.abc import Iterator
from pathlib import PurePosixPath
from typing import Any

from cortex.brain.brain import Brain, CommitInfo
from cortex.errors import BadInput, CortexError, StoreError
from cortex.guests.policy import GuestBook
from cortex.guests.queue import Proposal, ProposalQueue, tomb_key
from cortex.guests.review import LIST_BODY_CHARS, TOMBSTONES, Review
from cortex.http.console.diffs import blob_diff, diff_rows
from cortex.http.console.markdown import render_note, renderable
from cortex.notes.links import LinkResolver
from cortex.notes.paths import check_path, mixed_scripts
from cortex.notes.redact import redact

__all__ = [
    "CARD_CHARS",
    "ConsoleLinks",
    "MAX_DIFF_FILES",
    "MAX_SCAN",
    "PAGE_ROWS",
    "PROPOSAL_PAGE_CHARS",
    "Pages",
    "ago",
    "commit_row",
    "when",
]

PAGE_ROWS = 50  # activity rows per page
MAX_SCAN = 2_000  # commits one activity page may walk looking for matches
MAX_DIFF_FILES = 50  # files shown with their diff on a commit page
# Diff text per proposal card: the list clips as brain_proposals does (five 1 MiB
# proposals made a 6.4 MB page); one proposal's own page stays under ~100 KB.
CARD_CHARS = LIST_BODY_CHARS
PROPOSAL_PAGE_CHARS = 90_000


def ago(seconds: float) -> str:
    """A short age: '45 s', '12 min', '3 h 5 min', '2 d 4 h'."""
    s = max(0, int(seconds))
    if s < 60:
        return f"{s} s"
    if s < 3600:
        return f"{s // 60} min"
    if s < 86_400:
        return f"{s // 3600} h {s % 3600 // 60} min"
    return f"{s // 86_400} d {s % 86_400 // 3600} h"


def when(t: dt.datetime) -> str:
    """A commit time as the commit recorded it (its own zone)."""
    return t.strftime("%Y-%m-%d %H:%M %z")


def commit_row(c: CommitInfo) -> dict[str, Any]:
    """What Activity shows of one commit: door, tool and client from its trailers."""
    t = c.trailers
    return {
        "sha": c.sha,
        "short": c.sha[:12],
        "time": when(c.time),
        "subject": redact(c.subject),
        "door": c.door,
        "tool": t.get("Cortex-Tool", ""),
        "client": t.get("Cortex-Client", ""),
        "author": c.author,
        "hand_made": c.door == "hand-made",
        "files": list(c.files[:5]),
        "more_files": max(0, len(c.files) - 5),
    }


def _value(v: Any) -> str:
    """A frontmatter value as one line of text."""
    if isinstance(v, (list, tuple)):
        return ", ".join(str(x) for x in v)
    if isinstance(v, (dt.date, dt.datetime)):
        return v.isoformat()
    return str(v)


def _crumbs(folder: str) -> list[tuple[str, str]]:
    """(label, folder) links from the top down to `folder` ('a/b/')."""
    out: list[tuple[str, str]] = []
    acc = ""
    for part in [p for p in folder.split("/") if p]:
        acc += part + "/"
        out.append((part, acc))
    return out


class ConsoleLinks:
    """`markdown.NoteLinks` for the note at `source`: wikilinks as `LinkResolver` resolves them,
    and a relative Markdown link from the note's folder, else from the top (as Obsidian reads one)."""

    def __init__(self, resolver: LinkResolver, paths: set[str], source: str):
        self.resolver, self.paths, self.source = resolver, paths, source

    def wikilink(self, target: str) -> str | None:
        return self.resolver.resolve(target, self.source)

    def markdown_link(self, href: str) -> str | None:
        folder = str(PurePosixPath(self.source).parent)
        for base in ([folder] if folder != "." else []) + [""]:
            path = posixpath.normpath(posixpath.join(base, href)) if base else posixpath.normpath(href)
            for name in (path, path + ".md"):
                if name in self.paths:
                    return name
        return None


class Pages:
    """The data behind each page. `review.queue` is None when the guest door is disabled."""

    def __init__(self, brain: Brain, review: Review, book: GuestBook):
        self.brain = brain
        self.review = review
        self.book = book

    @property
    def queue(self) -> ProposalQueue | None:
        return self.review.queue

    def card(self, p: Proposal, head: str | None, now: float, max_chars: int = CARD_CHARS) -> dict[str, Any]:
        """One open proposal for display: who, why, age and a diff against the note at the head, clipped."""
        current, after, cannot = self.review.preview(p, head)
        rows = diff_rows(redact(current) if current is not None else None, redact(after), p.path, max_chars=max_chars)
        return {
            "id": p.id,
            "guest": p.guest,
            "path": p.path,
            "mode": p.mode,
            "why": redact(p.why),
            "state": p.state,
            "created": p.created_iso(),
            "age": ago(now - p.created),
            "exists": current is not None,
            "rows": rows,
            "cannot_apply": cannot,
            "lookalike": mixed_scripts(p.path),
        }

    def queue_or_refuse(self) -> ProposalQueue:
        """The queue, or StoreError saying why there is none (the page shows it)."""
        if self.review.queue is None:
            raise StoreError(
                f"the proposal queue is {self.review.disabled or 'disabled'}; set REDIS_URL or install redis-server"
            )
        return self.review.queue

    def open_cards(self) -> list[dict[str, Any]]:
        """Every open proposal, oldest first, each diffed against the note at the head."""
        q = self.queue_or_refuse()
        items = q.open()
        head = self.brain.head()
        now = q.clock().timestamp()
        return [self.card(p, head, now) for p in items]

    def decided(self, pid: str) -> dict[str, Any] | None:
        """One proposal in any state: its commit, or its reason and tombstone; None if unknown."""
        q = self.queue_or_refuse()
        p = q.get(pid)
        if p is None:
            return None
        info: dict[str, Any] = {
            "id": p.id,
            "guest": p.guest,
            "path": p.path,
            "mode": p.mode,
            "state": p.state,
            "why": redact(p.why),
            "created": p.created_iso(),
            "commit": p.extra.get("commit", ""),
            "reason": p.extra.get("reason", ""),
            "tomb_commit": p.extra.get("tomb_commit", ""),
            "tombstone": f"{TOMBSTONES}{tomb_key(p.path, p.digest)}.json",
            "card": None,
        }
        if p.state in ("pending", "accepting"):
            info["card"] = self.card(p, self.brain.head(), q.clock().timestamp(), PROPOSAL_PAGE_CHARS)
        return info

    def history(self, path: str | None, before: str | None) -> Iterator[CommitInfo]:
        """Every commit (touching `path`), newest first, fetched in batches."""
        cursor = before
        while True:
            commits, more = self.brain.history(path, limit=100, before=cursor)
            yield from commits
            if not more or not commits:
                return
            cursor = commits[-1].sha

    def activity(self, door: str, path: str, before: str) -> dict[str, Any]:
        start = self.brain.commit_info(before).sha if before else None
        rows: list[dict[str, Any]] = []
        scanned, cursor = 0, None
        walk = self.history(path or None, start)
        for c in walk:
            scanned += 1
            row = commit_row(c)
            if not door or row["door"] == door:
                rows.append(row)
            if len(rows) == PAGE_ROWS or scanned >= MAX_SCAN:
                # More only if the walk has anything left: peek one commit.
                cursor = c.sha if next(walk, None) is not None else None
                break
        return {"rows": rows, "next": cursor, "scanned": scanned}

    def commit(self, rev: str) -> dict[str, Any]:
        info = self.brain.commit_info(rev)
        changes = sorted(self.brain.changes(info), key=lambda ch: ch.path)
        files = []
        for ch in changes[:MAX_DIFF_FILES]:
            old = self.brain.blob_bytes(ch.old_blob) if ch.old_blob else None
            new = self.brain.blob_bytes(ch.new_blob) if ch.new_blob else None
            files.append(blob_diff(ch.path, old, new))
        return {
            "c": commit_row(info),
            "message": redact(info.message),
            "parents": list(info.parents),
            "files": files,
            "unshown": [ch.path for ch in changes[MAX_DIFF_FILES:]],
        }

    def unreadable(self, limit: int = 200) -> tuple[list[tuple[str, str]], int]:
        """Notes at the head whose frontmatter or retirement fields could not be read, with
        why (no quote of them is VERIFIED), at most `limit`; and how many there are."""
        snap = self.brain.corpus.built() or self.brain.snapshot()
        rows = sorted((p, n.unreadable) for p, n in snap.notes.items() if n.unreadable)
        return rows[:limit], len(rows)

    def folder(self, folder: str) -> dict[str, Any]:
        head = self.brain.head()
        if head is None:
            return {"folder": folder, "folders": [], "files": [], "sha": None, "crumbs": _crumbs(folder)}
        entries = self.brain.files(head)
        snap = self.brain.corpus.built()
        notes = snap.notes if snap is not None and snap.sha == head else self.brain.snapshot().notes
        today = self.brain.today()
        folders: dict[str, int] = {}
        files = []
        for path in sorted(entries):
            if not path.startswith(folder):
                continue
            rest = path[len(folder) :]
            if "/" in rest:
                name = rest.split("/", 1)[0]
                folders[name] = folders.get(name, 0) + 1
                continue
            note = notes.get(path)
            files.append(
                {
                    "path": path,
                    "name": rest,
                    "title": redact(note.title) if note else "",
                    "retired": note.retired_reason(today) if note else None,
                    "status": note.status if note else "",
                }
            )
        return {
            "folder": folder,
            "folders": sorted(folders.items()),
            "files": files,
            "sha": head,
            "crumbs": _crumbs(folder),
        }

    def note(self, path: str) -> dict[str, Any]:
        sha, blob, note = self.brain.read(path, own_files=True)
        today = self.brain.today()
        markdown = path.endswith(".md")
        superseded = None
        if note.superseded_by:
            try:
                superseded = check_path(note.superseded_by.strip().lstrip("/"), for_write=False)
            except BadInput:
                superseded = None
        history, more = self.brain.history(path, limit=20)
        links, backlinks = self._note_links(sha, note.path) if markdown else (None, [])
        shown, cut = renderable(note.text) if markdown else (note.text, None)
        return {
            "note_path": path,
            "sha": sha,
            "blob": blob,
            "title": redact(note.title) if markdown else path,
            # `title` is the page's <title> and <h1>.
            "markdown": markdown,
            "html": render_note(shown, note.title, links) if markdown else "",
            "render_cut": cut,
            "backlinks": backlinks,
            "links_pending": markdown and links is None and bool(note.links),
            "backlinks_pending": markdown and links is None,
            "source": redact(note.text),
            "note_status": note.status,
            "retired": note.retired_reason(today),
            "superseded_by": note.superseded_by,
            "superseded_link": superseded,
            "frontmatter": [(k, redact(_value(v))) for k, v in note.frontmatter.items()] if markdown else [],
            "frontmatter_error": note.frontmatter_error,
            "unreadable": note.unreadable,
            "warnings": list(note.warnings),
            "history": [commit_row(c) for c in history],
            "more_history": more,
            "crumbs": _crumbs(str(PurePosixPath(path).parent) + "/" if "/" in path else ""),
        }

    def _note_links(self, sha: str, path: str) -> tuple[ConsoleLinks | None, list[tuple[str, int]]]:
        """How the note at `path` links out, and (source, links) of each note linking to it, at
        `sha`; (None, []) while the first index build runs past `Corpus.first_read_wait`
        (then the page says the backlinks are still being read)."""
        if self.brain.corpus.built_within() is None:
            return None, []
        snap = self.brain.corpus.at(sha)
        resolver, back = snap.link_map()
        counts: dict[str, int] = {}
        for source, _ in back.get(path, []):
            if source != path:
                counts[source] = counts.get(source, 0) + 1
        return ConsoleLinks(resolver, set(snap.notes), path), sorted(counts.items())

    def guests(self) -> dict[str, Any]:
        policies, broken = self.book.policies(), self.book.broken()
        meters_off = None
        rows = []
        for policy in policies.values():
            used: dict[str, int | None] = {"asks": None, "proposals": None}
            if self.queue is not None and meters_off is None:
                try:
                    used = {
                        "asks": self.queue.used("asks", policy.name),
                        "proposals": self.queue.used("proposals", policy.name),
                    }
                except CortexError as exc:
                    meters_off = str(exc)
            rows.append({**policy.public(), "used": used})
        if self.queue is None:
            meters_off = f"meters unavailable: the proposal queue is {self.review.disabled or 'disabled'}"
        return {"guests": rows, "broken": broken, "meters_off": meters_off}
